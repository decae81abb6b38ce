"""Rebuilding a submitted notebook on the assignment's cells (grader.grading.notebook.repair), for
every lesson: no kernel runs here, so these are fast."""
import copy
import json

import nbformat
import pytest

from conftest import ROOT
from grader.course import assignments
from grader.grading.notebook import nbjson
from grader.grading.notebook.repair import assemble, kind_of, read_submission
from grading_corpus import Lesson, meta

LESSONS = [Lesson(name, ROOT) for name in assignments(ROOT)]
ids = [lesson.name for lesson in LESSONS]


def _plan(lesson: Lesson, nb: dict):
    submitted, problem = read_submission(json.dumps(nb).encode())
    assert submitted is not None, problem
    return assemble(nbjson.from_dict(lesson.source), nbjson.from_dict(lesson.release), submitted)


def _by_grade(plan):
    return {gid: cell for cell, gid in zip(plan.nb.cells, plan.grade_ids) if gid}


def _source_cell(lesson, grade_id):
    return next(c for c in lesson.source["cells"] if meta(c).get("grade_id") == grade_id)


def _text(source):
    return "".join(source) if isinstance(source, list) else source


@pytest.mark.parametrize("lesson", LESSONS, ids=ids)
def test_an_honest_notebook_needs_no_repair_and_gets_the_source_tests(lesson):
    plan = _plan(lesson, lesson.honest())
    assert plan.repairs == []
    nbformat.validate(nbformat.from_dict(json.loads(nbjson.dumps(plan.nb))))
    cells = _by_grade(plan)
    for test in lesson.tests:  # hidden tests are back, from the source
        assert cells[test].source == _text(_source_cell(lesson, test)["source"])
    for answer, code in lesson.answers.items():
        assert cells[answer].source == code
    assert [c.id for c in plan.nb.cells] == [c["id"] for c in lesson.release["cells"]]


@pytest.mark.parametrize("lesson", LESSONS, ids=ids)
def test_deleted_moved_and_retyped_cells_are_put_back_in_order(lesson):
    nb = lesson.honest()
    tests = list(lesson.tests)
    nb["cells"] = [c for c in nb["cells"] if meta(c).get("grade_id") != tests[0]]  # deleted
    nb["cells"].reverse()  # moved
    answer = next(iter(lesson.answers))
    for c in nb["cells"]:
        if meta(c).get("grade_id") == answer:
            c["cell_type"] = "markdown"  # retyped
    plan = _plan(lesson, nb)
    assert [c.id for c in plan.nb.cells] == [c["id"] for c in lesson.release["cells"]]
    cells = _by_grade(plan)
    assert cells[answer].cell_type == "code" and cells[answer].source == lesson.answers[answer]
    text = "\n".join(plan.repairs)
    assert f"`{tests[0]}` was missing and has been put back" in text
    assert "not in the assignment's order" in text
    assert f"`{answer}` had been turned into a markdown cell" in text


@pytest.mark.parametrize("lesson", LESSONS, ids=ids)
def test_a_deleted_answer_is_graded_as_the_stub(lesson):
    answer = list(lesson.answers)[-1]
    nb = lesson.honest()
    nb["cells"] = [c for c in nb["cells"] if meta(c).get("grade_id") != answer]
    plan = _plan(lesson, nb)
    stub = next(c for c in lesson.release["cells"] if meta(c).get("grade_id") == answer)
    assert _by_grade(plan)[answer].source == _text(stub["source"])
    assert f"`{answer}` was missing, so it was graded as unanswered" in plan.repairs[0]


def test_duplicated_answers_all_run_and_the_last_counts():
    lesson = LESSONS[0]
    answer = next(iter(lesson.answers))
    nb = lesson.honest()
    i = next(i for i, c in enumerate(nb["cells"]) if meta(c).get("grade_id") == answer)
    first = copy.deepcopy(nb["cells"][i])
    first["source"], first["id"] = "first_try = 1", "copy-a"
    nb["cells"].insert(i, first)
    plan = _plan(lesson, nb)
    at = plan.grade_ids.index(answer)
    assert plan.nb.cells[at - 1].source == "first_try = 1" and plan.kinds[at - 1] == "added"
    assert "nbgrader" not in plan.nb.cells[at - 1].metadata
    assert plan.nb.cells[at].source == lesson.answers[answer]
    assert plan.grade_ids.count(answer) == 1


def test_edited_tests_and_metadata_come_from_the_source():
    lesson = LESSONS[0]
    test = next(iter(lesson.tests))
    nb = lesson.honest()
    for c in nb["cells"]:
        if meta(c).get("grade_id") == test:
            c["source"] = "print('all good')"
            c["metadata"]["nbgrader"]["points"] = 99
    nb["cells"].append({"cell_type": "code", "id": "mine", "source": "x = 1", "outputs": [],
                        "execution_count": None, "metadata": {"nbgrader": {"grade": True, "grade_id": "mine", "points": 5}}})
    plan = _plan(lesson, nb)
    cell = _by_grade(plan)[test]
    assert cell.source == _text(_source_cell(lesson, test)["source"])
    assert cell.metadata["nbgrader"]["points"] == lesson.tests[test][0]
    assert plan.kinds[-1] == "added" and "nbgrader" not in plan.nb.cells[-1].metadata
    assert "mine" not in plan.grade_ids
    assert any(f"`{test}` were undone" in r for r in plan.repairs)


def test_cells_that_lost_their_metadata_and_ids_are_found_by_their_text():
    lesson = LESSONS[0]
    nb = lesson.honest()
    for n, c in enumerate(nb["cells"]):
        c["metadata"], c["id"] = {}, f"new-{n}"
    plan = _plan(lesson, nb)
    assert plan.repairs == []
    roles = [{"task": "manual"}.get(kind_of(c), kind_of(c)) for c in lesson.release["cells"]]
    assert [k for k in plan.kinds if k != "added"] == roles
    for answer, code in lesson.answers.items():
        assert _by_grade(plan)[answer].source == code


@pytest.mark.parametrize("data, why", [
    (b"{not json", "not valid JSON"),
    (b"[1, 2]", "not a notebook"),
    (b'{"metadata": {}}', "not a notebook"),
    ("\udcff".encode("utf-8", "surrogatepass"), "not valid JSON"),
])
def test_unreadable_files_are_reported(data, why):
    nb, problem = read_submission(data)
    assert nb is None and why in problem


def test_odd_but_readable_cells_are_cleaned_up():
    raw = {"cells": [{"cell_type": "code", "source": ["a = 1\n", "b = 2"], "metadata": "junk"},
                     "not a cell", {"cell_type": "weird", "source": None}]}
    nb, problem = read_submission(json.dumps(raw).encode())
    assert problem == ""
    assert nb["cells"][0]["source"] == "a = 1\nb = 2" and nb["cells"][0]["metadata"] == {}
    assert nb["cells"][1]["cell_type"] == "raw" and len(nb["cells"]) == 2


def test_an_old_format_notebook_is_converted():
    v3 = {"nbformat": 3, "nbformat_minor": 0, "metadata": {},
          "worksheets": [{"cells": [{"cell_type": "code", "input": "x = 41 + 1", "language": "python",
                                     "outputs": [], "metadata": {}}]}]}
    nb, problem = read_submission(json.dumps(v3).encode())
    assert problem == "" and nb["cells"][0]["source"] == "x = 41 + 1"


def _first_free(ids: list[str]) -> list[str]:
    """The ids the cells get, found as a search from 1 for each cell (the oracle)."""
    used, out = set(), []
    for cell_id in ids:
        if not cell_id or cell_id in used:
            base, n = cell_id or "added-cell", 1
            while f"{base}-{n}" in used:
                n += 1
            cell_id = f"{base}-{n}"
        used.add(cell_id)
        out.append(cell_id)
    return out


def test_cells_added_without_an_id_each_get_the_first_free_one():
    """Ids are given in one pass (ten thousand added cells are repaired in linear time),
    and are the first free ones, as a search from 1 finds them: an id a student wrote
    that is taken already gets a suffix, and one of the form the grader gives is skipped."""
    import random

    lesson = LESSONS[0]
    rng = random.Random(3)
    for _ in range(20):
        nb = lesson.honest()
        mine = [{"cell_type": "markdown", "metadata": {}, "source": f"note {n}",
                 "id": rng.choice(["", "", "added-cell-2", "added-cell-3", "x", "x-1", "added-cell"])}
                for n in range(12)]
        nb["cells"] = mine + nb["cells"]
        plan = _plan(lesson, nb)
        asked = [m["id"] for m in mine] + [c.id for c in plan.nb.cells[len(mine):]]  # the release's own
        assert [c.id for c in plan.nb.cells] == _first_free(asked)
        assert len({c.id for c in plan.nb.cells}) == len(plan.nb.cells)
