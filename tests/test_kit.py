"""The student kit (DESIGN.md, gate 8): ``python -m grader kit DIR``.

* It holds the learner's side and nothing else: no solutions, no reference, no catalogued
  mistake, no hidden case, no answer key; no line of any of them, whitespace ignored.
* ``grader.reference``, ``grader.grading`` and a lesson's reference and exercises cannot
  be imported in it; of ``grader.lessons`` it has each lesson's ``learner.py`` only.
* Every released notebook runs in it, in a kernel that imports the course from the kit
  alone: with the solutions pasted in, every visible check passes; with a catalogued
  mistake in every answer cell, every test cell says exactly what it says in the
  repository.
"""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from conftest import ROOT
from grader.course import assignments, released_notebook, source_notebook
from grader.kit import MANIFEST, KitError, build_kit
from grader.learner.notebook import execute, graded_results
from grading_corpus import Lesson, meta
from sources import answer_source

LESSONS = assignments(ROOT)
MARKER = re.compile(r"BEGIN SOLUTION|END SOLUTION|BEGIN HIDDEN TESTS|END HIDDEN TESTS")


@pytest.fixture(scope="module")
def kit(tmp_path_factory) -> Path:
    return build_kit(ROOT, tmp_path_factory.mktemp("kit") / "attention-kit")


def site_packages() -> list[str]:
    import site

    return [p for p in site.getsitepackages() if Path(p).is_dir()]


def kit_env(kit: Path) -> dict:
    """The kernel imports the course from the kit alone (``-S``: no ``.pth`` file, such as
    this checkout's editable install, is read)."""
    return {"PYTHONPATH": os.pathsep.join([str(kit), *site_packages()]),
            "NBGRADER_EXECUTION": "autograde"}


def files_of(kit: Path) -> list[str]:
    return sorted(p.relative_to(kit).as_posix() for p in kit.rglob("*") if p.is_file())


# ----------------------------------------------------------------------------- contents

def test_the_kit_holds_the_learners_side_and_nothing_else(kit):
    files = files_of(kit)
    for lesson in LESSONS:
        for name in (f"{lesson}.ipynb", f"{lesson}.checks.json"):
            assert f"notebooks/{lesson}/{name}" in files
    for needed in ("README.md", "Makefile", "constraints.txt", "pyproject.toml", MANIFEST,
                   "grader/__init__.py", "grader/__main__.py", "grader/learner/engine.py",
                   "grader/learner/agent.py", "courseware/worksheet.py", "assets/worksheet_blank.pdf"):
        assert needed in files, needed
    # Of grader/lessons, exactly each lesson folder's learner.py (its own kinds, no answer).
    parts = sorted(f for f in files if f.startswith("grader/lessons"))
    assert parts == sorted(p.relative_to(ROOT).as_posix() for p in ROOT.glob("grader/lessons/*/learner.py"))
    assert parts and all(re.fullmatch(r"grader/lessons/\d\d_[a-z0-9_]+/learner\.py", f) for f in parts), parts
    instructor = [f for f in files if f.startswith(("grader/reference", "grader/grading",
                                                    "solutions", "tests", "benchmarks"))
                  or (f.startswith("grader/lessons") and f not in parts)
                  or f in ("grader/release.py", "grader/kit.py", "grader/cli.py", "grader/course.py")]
    assert not instructor, instructor
    assert not [f for f in files if "worksheet_key" in f], "the answer key is the instructor's"
    assert json.loads((kit / MANIFEST).read_text())["files"].keys() == set(files) - {MANIFEST}


def _source_notebooks() -> dict[str, nbformat.NotebookNode]:
    return {lesson: nbformat.read(source_notebook(lesson, ROOT), as_version=4) for lesson in LESSONS}


def _lines_of(nb: nbformat.NotebookNode) -> tuple[dict[str, str], set[str]]:
    """(answers, given) of one source notebook: its lines of 20 characters or more,
    whitespace removed, inside its solutions, hidden tests and model answers (each with
    the line as written), and outside them."""
    answers, given = {}, set()
    for cell in nb.cells:
        inside = cell.cell_type == "markdown" and cell.metadata.get("nbgrader", {}).get("solution")
        for line in cell.source.splitlines():
            if MARKER.search(line):
                inside = "BEGIN" in line
                continue
            squeezed = re.sub(r"\s+", "", line)
            if len(squeezed) < 20:
                continue
            if inside:
                answers.setdefault(squeezed, line.strip())
            else:
                given.add(squeezed)
    return answers, given


def solution_lines(notebooks: dict[str, nbformat.NotebookNode]) -> dict[str, str]:
    """Every line of every lesson's answers (as :func:`_lines_of` finds them), whitespace
    removed -> "lesson: the line". A line that a lesson's own notebook gives its learner
    (its code and prose outside the answers) is no secret of that lesson; it stays one of
    every other lesson that asks for it, since the kit ships every lesson at once: a
    learner on lesson 02 can open lesson 04."""
    secret = {}
    for lesson, nb in notebooks.items():
        answers, given = _lines_of(nb)
        for squeezed, line in answers.items():
            if squeezed not in given:
                secret.setdefault(squeezed, f"{lesson}: {line}")
    return secret


def _text_files(kit: Path):
    for rel in files_of(kit):
        if (kit / rel).suffix not in (".png", ".pdf"):
            yield rel, (kit / rel).read_text(encoding="utf-8")


def lines_found(kit: Path, secret: dict[str, str]) -> list[str]:
    """Where the kit holds a line of ``secret``: in any file, whatever lesson it answers."""
    found = []
    for rel, text in _text_files(kit):
        squeezed = re.sub(r"\s+", "", text)
        found += [f"{rel} holds {where}" for line, where in secret.items() if line in squeezed]
    return found


def test_the_kit_holds_no_line_of_any_lessons_solution(kit):
    secret = solution_lines(_source_notebooks())
    assert len(secret) > 150, "the search found too few lines to mean anything"
    assert {where.split(":")[0] for where in secret.values()} == set(LESSONS)
    leaks = lines_found(kit, secret)
    assert not leaks, "\n".join(leaks[:20])


def test_another_lessons_answer_given_in_a_notebook_is_found(tmp_path):
    """A line of one lesson's solution, given as code in another lesson's notebook (in its
    source and so in its release), is a leak: the search finds it in that notebook."""
    notebooks = _source_notebooks()
    asked, giver = LESSONS[1], LESSONS[3]
    answers, given = _lines_of(notebooks[asked])
    line = next(line for squeezed, line in answers.items() if squeezed not in given
                and not line.startswith("#") and line.isascii())
    demo = nbformat.v4.new_code_cell(f"def demo():\n    {line}\n")
    notebooks[giver].cells.append(demo)
    planted = build_kit(ROOT, tmp_path / "k")
    released = planted / "notebooks" / giver / f"{giver}.ipynb"
    nb = nbformat.read(released, as_version=4)
    nb.cells.append(demo)
    nbformat.write(nb, released)

    secret = solution_lines(notebooks)
    assert _lines_of(notebooks[giver])[1] & {re.sub(r"\s+", "", line)}, "the line is given there"
    found = lines_found(planted, secret)
    assert f"notebooks/{giver}/{giver}.ipynb holds {asked}: {line}" in found, found


# What the README ("The kit") says a recording holds, per exercise; nothing else may be there.
RECORDED = {
    "exercise": {"info", "hidden", "cases", "expected", "mistakes", "stand_ins"},
    "info": {"name", "arg_names", "driver", "compare", "rules", "hint", "bad_inputs", "uses",
             "outputs", "axes", "work"},
    "mistake": {"name", "message", "outcomes", "exact"},
}


def beyond_the_readme(recording: dict) -> list[str]:
    """What a recording (a ``checks.json``, parsed) holds that the README does not say it
    holds: another field, hidden cases, or where in a catalogued mistake's code an error
    came from (a line of the instructor's code)."""
    found = []
    for name, exercise in recording["exercises"].items():
        found += [f"{name}: {key}" for key in sorted(set(exercise) - RECORDED["exercise"])]
        found += [f"{name}, info: {key}" for key in sorted(set(exercise["info"]) - RECORDED["info"])]
        if exercise["hidden"]:
            found.append(f"{name}: hidden cases")
        for mistake in exercise["mistakes"]:
            label = f"{name}, mistake {mistake.get('name')!r}"
            found += [f"{label}: {key}" for key in sorted(set(mistake) - RECORDED["mistake"])]
            found += [f"{label} says where its code raised: {outcome['error']['where']}"
                      for outcome in mistake["outcomes"] if outcome is not None
                      if isinstance(outcome, dict) and (outcome.get("error") or {}).get("where")]
    return found


def _recordings(kit: Path) -> dict[str, dict]:
    return {rel: json.loads((kit / rel).read_text(encoding="utf-8"))
            for rel in files_of(kit) if rel.endswith(".checks.json")}


def test_each_recording_holds_what_the_readme_says_and_nothing_else(kit):
    recordings = _recordings(kit)
    assert len(recordings) == len(LESSONS)
    mistakes = [m for r in recordings.values() for e in r["exercises"].values() for m in e["mistakes"]]
    assert len(mistakes) > 100 and all(m["message"] and m["outcomes"] for m in mistakes)
    found = [f"{rel}: {what}" for rel, r in recordings.items() for what in beyond_the_readme(r)]
    assert not found, "\n".join(found[:20])


def test_a_recording_with_more_than_the_readme_says_is_found(kit):
    rel, recording = next(iter(_recordings(kit).items()))
    name, exercise = next((n, e) for n, e in recording["exercises"].items() if e["mistakes"])
    mistake = exercise["mistakes"][0]
    mistake["outcomes"][0] = {"error": {"type": "ValueError", "message": "no", "helper": "",
                                        "where": "line 3 of your code: `return A @ B`"},
                              "mutated": ""}
    mistake["impl"] = "def wrong(A, B): ..."
    exercise["info"]["hidden_seed"] = 12
    exercise["hidden"] = True
    assert beyond_the_readme(recording) == [
        f"{name}, info: hidden_seed", f"{name}: hidden cases",
        f"{name}, mistake {mistake['name']!r}: impl",
        f"{name}, mistake {mistake['name']!r} says where its code raised: line 3 of your code: "
        "`return A @ B`"]


def _definitions(source: str, label: str) -> list[tuple[str, str, int]]:
    """(label, canonical shape, size) of every function and class defined in ``source``."""
    import ast

    from grader.grading.notebook.integrity import canonical
    from grader.learner.shortcuts import python_source

    try:
        tree = ast.parse(python_source(source))
    except SyntaxError:
        return []
    return [(f"{label}: {node.name}", *canonical(node)) for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]


def _instructors_definitions() -> dict[str, str]:
    """The shape (names renamed) of every function and class of the references, the
    catalogued mistakes and the solutions, big enough to be more than an idiom."""
    from grader.grading.notebook.integrity import SMALLEST

    found, given = [], set()
    for path in sorted((ROOT / "grader" / "lessons").rglob("*.py")):
        if path.name == "learner.py":  # a lesson's learner side, which the kit ships
            continue
        found += _definitions(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    for lesson in LESSONS:
        nb = nbformat.read(source_notebook(lesson, ROOT), as_version=4)
        for cell in nb.cells:
            if cell.metadata.get("nbgrader", {}).get("solution") and cell.cell_type == "code":
                found += _definitions(re.sub(r"^.*### (BEGIN|END) SOLUTION.*$", "", cell.source,
                                             flags=re.M), f"{lesson} solution")
        # What the released notebook gives (a class's given __init__) is no secret.
        released = json.loads(released_notebook(lesson, ROOT).read_text(encoding="utf-8"))
        for cell in released["cells"]:
            if cell["cell_type"] == "code":
                given |= {shape for _, shape, _ in _definitions(cell["source"], "")}
    return {shape: label for label, shape, size in found if size >= SMALLEST and shape not in given}


def test_the_kit_holds_no_reference_mistake_or_solution_even_renamed(kit):
    """No function or class of the kit (its packages and its notebooks' code) has the
    shape of a reference, a catalogued mistake or a solution with its names changed."""
    secret = _instructors_definitions()
    assert len(secret) > 100
    copies = []
    for rel, text in _text_files(kit):
        sources = [text] if rel.endswith(".py") else []
        if rel.endswith(".ipynb"):
            sources = [c["source"] for c in json.loads(text)["cells"] if c["cell_type"] == "code"]
        for source in sources:
            copies += [f"{label} is {secret[shape]}" for label, shape, _ in _definitions(source, rel)
                       if shape in secret]
    assert not copies, "\n".join(copies[:20])


def test_the_searches_find_what_is_planted(kit, tmp_path):
    """The searches themselves: a solution line, and a reference function renamed, copied
    into a kit, are found."""
    import inspect

    from grader import lessons

    planted = build_kit(ROOT, tmp_path / "k")
    line = next(iter(solution_lines(_source_notebooks()).values())).split(": ", 1)[1]
    core = lessons.lesson_module("01_matmul_views", "reference")._dot  # the reading's core
    copy = inspect.getsource(core).replace("_dot", "helper")
    copy = re.sub(r"\bC\b", "out", copy)
    target = planted / "courseware" / "figures.py"
    target.write_text(target.read_text() + f"\n# {line}\n\n{copy}")
    squeezed = re.sub(r"\s+", "", target.read_text())
    assert any(s in squeezed for s in solution_lines(_source_notebooks()))
    shapes = {shape for _, shape, _ in _definitions(target.read_text(), "x")}
    assert shapes & set(_instructors_definitions())


def test_the_reference_cannot_be_imported_in_the_kit(kit):
    """Nothing of the instructor's side imports in the kit. ``grader.lessons`` is there
    only as the namespace of the lessons' learner parts: no code of its own, no
    expectations, and no lesson's reference or exercises."""
    refused = ("grader.reference", "grader.grading", "grader.release",
               "grader.lessons.04_masking.reference", "grader.lessons.04_masking.exercises",
               "grader.lessons.01_matmul_views.reference")
    code = ("import importlib, grader, grader.learner\n"
            f"for name in {refused!r}:\n"
            "    try:\n"
            "        importlib.import_module(name)\n"
            "        print('IMPORTED', name)\n"
            "    except ImportError:\n"
            "        print('refused', name)\n"
            "import grader.lessons as ns\n"
            "print('namespace', getattr(ns, '__file__', None), hasattr(ns, 'expectations'))\n"
            "part = importlib.import_module('grader.lessons.04_masking.learner')\n"
            "print('part', hasattr(part, 'KeyPaddingMask'))\n"
            "print(grader.__file__)\n")
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True,
                         env={**os.environ, **kit_env(kit)}, cwd=kit)
    assert out.returncode == 0, out.stderr
    assert "IMPORTED" not in out.stdout and out.stdout.count("refused") == len(refused), out.stdout
    assert "namespace None False" in out.stdout and "part True" in out.stdout, out.stdout
    assert out.stdout.strip().splitlines()[-1].startswith(str(kit))


def test_building_a_kit_refuses_to_overwrite_another_folder(tmp_path):
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "thesis.tex").write_text("years of work")
    with pytest.raises(KitError, match="not empty"):
        build_kit(ROOT, tmp_path / "work", force=True)
    with pytest.raises(KitError, match="folder of its own"):
        build_kit(ROOT, ROOT / "notebooks" / "kit")


# ----------------------------------------------------------------------------- the notebooks

def _run(notebook: dict, folder: Path, env: dict | None = None, flags=()) -> list:
    path = folder / "graded.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    try:
        nb = execute(path, timeout=300, env=env, python_flags=flags)
    finally:
        path.unlink()
    return graded_results(nb)


def worksheet_source(answers: dict) -> str:
    """A WORKSHEET cell as a learner types it: one row per line."""
    import numpy as np

    def grid(M):
        M = np.asarray(M, dtype=object)
        return "\n".join(" ".join(str(x) for x in row) for row in M)

    body = ",\n".join(f'    "{step}": """\n{grid(M)}\n"""' for step, M in answers.items())
    return f"WORKSHEET = {{\n{body}\n}}\n"


def mistake_answers(lesson: Lesson) -> dict[str, str]:
    """Every answer cell with one catalogued mistake of the exercise it is checked as."""
    from grader.lessons import get

    answers = {}
    for k, (answer, exercise) in enumerate(lesson.exercise.items()):
        ex = get(exercise)
        if not ex.misconceptions:
            continue
        mistake = ex.misconceptions[k % len(ex.misconceptions)]
        if not ex.driver.calls_answer:
            answers[answer] = worksheet_source(mistake.sample)
        else:
            target = lesson.target[answer]
            answers[answer] = answer_source(mistake.impl, target)
    return answers


@pytest.mark.slow
@pytest.mark.parametrize("name", LESSONS)
def test_the_solutions_pass_every_visible_check_in_the_kit(kit, name):
    lesson = Lesson(name, ROOT)
    results = _run(lesson.honest(), kit / "notebooks" / name, kit_env(kit), ("-S",))
    assert results and any(r.passed for r in results)
    failed = [(r.grade_id, r.message) for r in results if not r.passed and not r.hidden]
    assert not failed, failed
    # A hidden test's cell re-runs nothing in the learner's copy: it says when it runs.
    hidden = [r for r in results if r.hidden]
    assert hidden and all(r.grade_id.startswith("hidden_") for r in hidden)


@pytest.mark.slow
@pytest.mark.parametrize("name", LESSONS)
def test_catalogued_mistakes_get_the_same_messages_in_the_kit_as_in_the_repository(kit, name,
                                                                                   tmp_path):
    lesson = Lesson(name, ROOT)
    answers = mistake_answers(lesson)
    assert answers
    nb = lesson.notebook({**lesson.answers, **answers})
    in_kit = _run(nb, kit / "notebooks" / name, kit_env(kit), ("-S",))
    # A copy of the repository's folder: a notebook written into notebooks/ itself would be
    # seen by the test that compares notebooks/ with a fresh release, running beside this one.
    here = shutil.copytree(ROOT / "notebooks" / name, tmp_path / name)
    in_repo = _run(nb, here, {"NBGRADER_EXECUTION": "autograde"})
    assert [(r.grade_id, r.passed, r.message) for r in in_kit] == \
        [(r.grade_id, r.passed, r.message) for r in in_repo]
    diagnosed = [r for r in in_repo if not r.passed and "Diagnosis:" in r.message]
    assert diagnosed, "no catalogued mistake was diagnosed"


@pytest.mark.slow
def test_the_check_command_in_the_kit_reports_each_question_and_defers_hidden_ones(kit, tmp_path):
    lesson = Lesson(LESSONS[0], ROOT)
    first = next(iter(lesson.answers))
    wrong = {k: v for k, v in lesson.answers.items() if k != first}  # the first left as released
    folder = kit / "notebooks" / lesson.name
    path = folder / "attempt.ipynb"
    path.write_text(json.dumps(lesson.notebook(wrong)), encoding="utf-8")
    try:
        run = subprocess.run([sys.executable, "-S", "-m", "grader", "check", str(path)],
                             env=dict(os.environ, **kit_env(kit)), capture_output=True, text=True,
                             cwd=kit, timeout=600)
    finally:
        path.unlink()
    assert run.returncode == 0, run.stderr
    rows = [line for line in run.stdout.splitlines() if line[:1] in "✓✗·"]
    tests = [c for c in lesson.release["cells"] if meta(c).get("grade") and not meta(c).get("solution")]
    assert len(rows) == len(tests)
    assert rows[0].startswith(f"✗ test_{first}") and "not implemented yet" in rows[0]
    assert any(r.startswith("✓ test_") for r in rows)
    hidden = [r for r in rows if r.startswith("·")]
    assert hidden and all("hidden_" in r and "runs when your work is graded" in r for r in hidden)
    assert not any(r.startswith(("✓ hidden_", "✗ hidden_")) for r in rows), "hidden rows repeat a check"
    assert "Total here:" in run.stdout and "more in hidden tests" in run.stdout
    assert "running cell" in run.stderr
    assert "WARNING" not in run.stderr + run.stdout, run.stderr
