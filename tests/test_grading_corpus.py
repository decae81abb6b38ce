"""The grading pipeline end to end (DESIGN.md, gate 7).

A corpus of sample submissions, built from the real source and release notebooks (see
``grading_corpus.py``), goes through the real command, ``python -m grader grade``, into a
real SQLite gradebook, in two batches:

* batch A, with the default limits: an honest full submission of every lesson (every
  release is graded to 0 by the environment proof), an empty and a partial one, one per
  catalogued misconception of the corpus lesson, a kernel exit, each kind of structural
  damage, edited tests, tampered metadata, unreadable and missing notebooks, forgeries,
  answers that break a rule their notebook states (``attacks_rules``),
  and (in a sandbox) a submission that tries to destroy the class's work followed by an
  honest classmate, and the attacks on the grading process itself
  (``kernel_attack_samples``);
* batch B, with small limits: an infinite loop and a memory bomb (with, where the
  grader makes memory cgroups, files written into the sandbox's tmpfs past ``--memory``),
  and the notebooks whose structure would stall the grading process itself (a million
  empty cells, a notebook nested 200,000 deep: ``attacks_structure.py``), next to an
  honest neighbour.

Every sample has its exact expected points and status for every test, checked in the
JSON results, grades.csv and the gradebook.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from attacks_kernel import link_attack_sample, memory_attack_samples, merged, mutation_attack_sample
from attacks_rules import broken_rule_samples
from attacks_scan import scan_attack_samples
from attacks_structure import structure_samples
from conftest import ROOT
from sources import handed_over
from grader.course import assignments
from grader.learner.wording import MESSAGE_LINES
from grader.grading.notebook.results import STATUSES
from grading_corpus import (
    Lesson,
    Sample,
    attack_samples,
    damage_samples,
    every_lesson_samples,
    forgery_samples,
    infinite_loop_sample,
    kernel_exit_sample,
    memory_cgroups,
    memory_bomb_sample,
    misconception_samples,
    never_answers_sample,
    sandboxed,
    tmpfs_filler_sample,
    write,
)

pytestmark = pytest.mark.slow
LESSON = "01_matmul_views"  # the lesson the full corpus is built from
LESSONS = {name: Lesson(name, ROOT) for name in assignments(ROOT)}


SANDBOXED = sandboxed()
CGROUPS = SANDBOXED and memory_cgroups()  # the sandbox's tmpfs then counts within --memory


def batch_a(paths: dict) -> list[Sample]:
    main = LESSONS[LESSON]
    samples = every_lesson_samples(list(LESSONS.values()), LESSON)
    samples += damage_samples(main) + misconception_samples(main) + [kernel_exit_sample(main)]
    samples += forgery_samples(main, paths["course"]) + broken_rule_samples(LESSONS)
    if SANDBOXED:  # without a sandbox the attack would succeed: that is the point
        samples += attack_samples(main, **paths)
        samples += kernel_attack_samples(paths)
    return samples


def kernel_attack_samples(paths: dict) -> list[Sample]:
    """Attacks on the grading itself (issue 21), one or two to a submission where they
    change different answers: links planted where the grading process used to open files,
    aimed at the course, the gradebook and a classmate graded later, with a restart forced;
    memory hidden from the kernel's own measure, or kept outside the Python heap (a memfd,
    a file in /tmp or /dev/shm, pipe and socket buffers); a change to an input hidden by a
    patched agent; loops and names the shortcut scan could miss; a required call only named, or
    reported by a patched agent; a made-up experiment. Every evasion of the scan, and
    honest code written in the same ways, is also judged in tests/test_shortcut_scan.py."""
    main, masking = LESSONS[LESSON], LESSONS["04_masking"]
    classmate = paths["submitted"] / "zz_after_attack" / LESSON / main.filename
    aims = [paths["course"] / "nbgrader_config.py", paths["gradebook"], classmate,
            paths["course"] / "solutions" / LESSON / main.filename]
    links = link_attack_sample(main, aims)
    links.integrity = ["reaches for the grading side", "makes links (_os.symlink)",
                       "names the sandbox's plumbing"]
    memory = memory_attack_samples(LESSONS["07_long_attention"])
    memory[0].integrity = ["uses tracemalloc"]
    memory[1].integrity = ["changes the course's module grader.learner.agent (_agent.peak_bytes)",
                           "stops or starts processes (_os.fork)"]
    mutation = mutation_attack_sample(masking)
    mutation.integrity = ["changes the course's module grader.learner.agent (_agent._mutated)"]
    scan = {s.student: s for s in scan_attack_samples(LESSONS)}
    return [
        merged("attacker_links", main, links, scan["scan_agent_reports_einsum"]),
        merged("scan_einsum_named_not_called", main, scan["scan_einsum_named_not_called"],
               scan["scan_honest_while_loops_and_a_class"]),
        merged("forge_mutation_hidden", masking, mutation, scan["scan_while_loop"]),
        scan["scan_def_in_try"], scan["scan_getattr_computed"], scan["scan_exec_rebinds_the_answer"],
        scan["scan_mha_library_via_callable"], scan["scan_made_up_ablation_rows"], *memory]


def batch_b() -> list[Sample]:
    main = LESSONS[LESSON]
    neighbour = Sample("neighbour", LESSON, main.files(main.honest()), main.expect())
    bomb = memory_bomb_sample(main)
    if CGROUPS:  # files written past --memory into the sandbox's tmpfs, in the same kernel
        bomb = merged("memory_bomb", main, bomb, tmpfs_filler_sample(main))
    return [infinite_loop_sample(main), bomb, never_answers_sample(main), *structure_samples(main),
            neighbour]


DUMMY = {"submitted": Path("/s"), "gradebook": Path("/g"), "out": Path("/o"), "port": 1,
         "course": Path("/c")}
KEYS = [("a", s.student, s.assignment) for s in batch_a(DUMMY)] + \
       [("b", s.student, s.assignment) for s in batch_b()]


def _hashes(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _course_hashes(course: Path) -> dict[str, str]:
    """What grading never writes: the sources, the release and nbgrader's configuration."""
    return {**_hashes(course / "solutions"), **_hashes(course / "notebooks"),
            "nbgrader_config.py": hashlib.sha256((course / "nbgrader_config.py").read_bytes()).hexdigest()}


def _grade(course: Path, *args) -> subprocess.CompletedProcess:
    env = dict(os.environ, ATTENTION_COURSE_ROOT=str(course))
    sandbox = [] if SANDBOXED else ["--sandbox", "none"]  # then the attack is left out
    return subprocess.run([sys.executable, "-m", "grader", "grade", *map(str, args), *sandbox],
                          env=env, capture_output=True, text=True, cwd=course, timeout=900)


class Corpus:
    pass


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Corpus:
    base = tmp_path_factory.mktemp("corpus")
    course = base / "course"
    course.mkdir()
    for name in ("solutions", "notebooks"):
        shutil.copytree(ROOT / name, course / name)
    shutil.copy(ROOT / "nbgrader_config.py", course)
    c = Corpus()
    c.course, c.gradebook = course, course / "gradebook.db"
    c.out = {"a": base / "out-a", "b": base / "out-b"}
    c.submitted = {"a": base / "a" / "submitted", "b": base / "b" / "submitted"}
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.setblocking(False)
    import grader.learner.engine

    checker = Path(grader.learner.engine.__file__)
    paths = {"submitted": c.submitted["a"], "gradebook": c.gradebook, "out": c.out["a"],
             "port": listener.getsockname()[1], "course": course}
    c.samples = {("a", s.student, s.assignment): s for s in batch_a(paths)}
    c.samples.update({("b", s.student, s.assignment): s for s in batch_b()})
    for batch in "ab":
        write([s for k, s in c.samples.items() if k[0] == batch], c.submitted[batch])
    c.before = {b: _hashes(c.submitted[b]) for b in "ab"}
    c.course_before = _course_hashes(course)
    checker_before = checker.read_bytes()
    c.runs = {
        "a": _grade(course, c.submitted["a"], "--out", c.out["a"], "--jobs", 2, "--timeout", 120),
        "b": _grade(course, c.submitted["b"], "--out", c.out["b"], "--jobs", 2,
                    "--timeout", 10, "--memory", 1000),
    }
    c.after = {b: _hashes(c.submitted[b]) for b in "ab"}
    c.course_after = _course_hashes(course)
    c.checker_unchanged = checker.read_bytes() == checker_before
    try:
        listener.accept()
        c.phoned_home = True
    except BlockingIOError:
        c.phoned_home = False
    listener.close()
    return c


def _result(c: Corpus, key) -> dict:
    batch, student, assignment = key
    return json.loads((c.out[batch] / "results" / student / f"{assignment}.json").read_text())


def test_the_command_grades_every_submission_and_exits_0(corpus):
    for batch, run in corpus.runs.items():
        assert run.returncode == 0, f"batch {batch}:\n{run.stdout}\n{run.stderr}"
        assert "Sandbox:" in run.stdout
        n = sum(1 for k in corpus.samples if k[0] == batch)
        assert f"Graded {n} of {n} submission(s)" in run.stdout, run.stdout
        assert len(re.findall(r"^\[\d+/\d+\] ", run.stdout, re.M)) == n, "one line per submission"


@pytest.mark.parametrize("key", KEYS, ids=[f"{b}:{s}:{a}" for b, s, a in KEYS])
def test_sample_gets_its_exact_result(corpus, key):
    sample = corpus.samples[key]
    result = _result(corpus, key)
    assert result["status"] == sample.status
    got = {t["id"]: t for t in result["tests"]}
    assert set(got) == set(sample.tests)
    for test, want in sample.tests.items():
        t = got[test]
        where = f"{sample.student} {test}: {t['status']} {t['points']} {t['message'][:300]!r}"
        assert t["status"] in STATUSES, where
        assert (t["points"], t["status"]) == (want.points, want.status), where
        # The message's lines are wrapped where it is shown: what it says is compared.
        assert " ".join(want.message.lower().split()) in " ".join(t["message"].lower().split()), where
        leaked = handed_over(t["message"], sample.assignment)
        assert not leaked, f"{where}: hands over solution code {leaked}"
        assert len(t["message"].splitlines()) < MESSAGE_LINES, f"{where}: too long"
    assert result["score"] == sample.total
    for field in ("repairs", "incidents", "notes", "integrity"):
        text = "\n".join(result[field])
        for phrase in getattr(sample, field):
            assert phrase in text, f"{field} lack {phrase!r}: {result[field]}"
    if sample.status == "graded":
        assert result["sandbox"] in ("bwrap", "none")
        page = corpus.out[key[0]] / "feedback" / sample.student / sample.assignment / f"{sample.assignment}.html"
        assert f"<b>{sample.total:g} / " in page.read_text()


def test_grades_csv_has_a_row_per_submission_with_every_question(corpus):
    """grades.csv is written from the gradebook, which both batches share: each batch's
    file has the row of every sample graded so far, and a row for each pair that was not
    submitted."""
    import csv

    from grader.grading.classroom.grades import questions

    asked = {name: questions({lesson.filename: lesson.source}) for name, lesson in LESSONS.items()}
    for batch in "ab":  # a's file is written before b is graded; b's holds both
        samples = {(k[1], k[2]): s for k, s in corpus.samples.items() if k[0] <= batch}
        rows = {(r["student"], r["assignment"]): r for r in csv.DictReader((corpus.out[batch] / "grades.csv").open())}
        assert set(samples) <= set(rows)
        for key, row in rows.items():
            if key not in samples:
                assert row["status"] == "not submitted" and row["total"] == "0", key
                continue
            sample, lesson = samples[key], LESSONS[key[1]]
            assert float(row["auto"]) == float(row["total"]) == sample.total, key
            assert float(row["max"]) == lesson.total() + sum(
                float(c["metadata"]["nbgrader"]["points"]) for c in lesson.source["cells"]
                if c["metadata"].get("nbgrader", {}).get("solution") and c["metadata"]["nbgrader"].get("grade"))
            if (batch, *key) in corpus.samples:  # notes come from this --out's results JSON
                for phrase in sample.integrity:
                    assert phrase in row["integrity"], (key, row["integrity"])
            prefix = key[1].split("_")[0]
            for question in asked[key[1]]:
                value = row[f"{prefix}.{question.name}"]
                if question.cells[0] in sample.tests:
                    assert float(value) == sum(sample.tests[c].points for c in question.cells), (key, question)
            others = [c for c in row if c.split(".")[0].isdigit() and not c.startswith(prefix + ".")]
            assert all(row[c] == "" for c in others), "another lesson's questions are empty"


def test_gradebook_holds_every_score(corpus):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{corpus.gradebook}", "attention") as gb:
        for (batch, student, assignment), sample in corpus.samples.items():
            submission = gb.find_submission(assignment, student)
            assert submission.score == sample.total, (student, assignment)
            for test, want in sample.tests.items():
                grade = gb.find_grade(test, assignment, assignment, student)
                assert grade.auto_score == want.points, (student, test)


def test_autograded_notebooks_are_valid_and_keep_every_output(corpus):
    import nbformat

    for (batch, student, assignment), sample in corpus.samples.items():
        path = corpus.course / "autograded" / student / assignment / f"{assignment}.ipynb"
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        if sample.status == "graded":
            tests = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code"]
            assert all(c.outputs for c in tests), student


def test_feedback_never_shows_hidden_tests(corpus):
    hidden = []
    for lesson in LESSONS.values():
        for cell in lesson.source["cells"]:
            text = "".join(cell["source"])
            for block in re.findall(r"### BEGIN HIDDEN TESTS(.*?)### END HIDDEN TESTS", text, re.S):
                hidden += [line.strip() for line in block.splitlines() if line.strip()]
    assert hidden
    pages = list(corpus.out["a"].rglob("*.html")) + list(corpus.out["b"].rglob("*.html"))
    assert len(pages) >= len(corpus.samples) - 2
    import html as html_lib

    for page in pages:
        text = html_lib.unescape(page.read_text())
        assert "HIDDEN TESTS" not in text, page
        leaked = [line for line in hidden if line in text]
        assert not leaked, f"{page} shows hidden test source: {leaked[:2]}"


def test_no_submission_changes_another_ones_result(corpus):
    for batch in "ab":
        assert corpus.before[batch] == corpus.after[batch], "a submission file changed"
    assert corpus.checker_unchanged, "grader/learner/engine.py was changed by student code"
    assert corpus.course_before == corpus.course_after, "the course changed while grading"
    assert not corpus.phoned_home
    # The same honest notebook graded next to a memory bomb and a loop, and next to the
    # attacker and the damaged ones, gets the same result, message for message.
    neighbour = _result(corpus, ("b", "neighbour", LESSON))
    honest = _result(corpus, ("a", "honest_full", LESSON))
    strip = lambda r: [(t["id"], t["points"], t["status"], t["message"]) for t in r["tests"]]  # noqa: E731
    assert strip(neighbour) == strip(honest)


def test_a_notebook_over_a_structure_limit_costs_only_itself_and_needs_a_look(corpus):
    """A million empty cells and a notebook nested 200,000 deep are graded as unreadable
    (their tests 0, in grades.csv, with the limit named), listed under "Needs a look", and
    the class is graded: the honest neighbour fully, and the run exits 0."""
    import csv

    run = corpus.runs["b"]
    assert run.returncode == 0, run.stderr
    look = run.stdout[run.stdout.index("Needs a look"):]
    rows = {(r["student"], r["assignment"]): r for r in csv.DictReader((corpus.out["b"] / "grades.csv").open())}
    for sample in structure_samples(LESSONS[LESSON]):
        row = rows[sample.student, LESSON]
        assert f"{sample.student}/{LESSON}: unreadable notebook" in look, look
        assert (row["status"], row["total"], row["look_at"]) == ("missing", "0", "unreadable notebook"), row
        assert sample.notes[-1] in run.stdout  # the console names the limit and the count
    neighbour = _result(corpus, ("b", "neighbour", LESSON))
    assert neighbour["score"] == LESSONS[LESSON].total() == float(rows["neighbour", LESSON]["total"])


def test_the_attack_was_attempted_and_blocked(corpus):
    import nbformat

    if not SANDBOXED:
        why = "bubblewrap cannot run here, so the attack is not run"
        if os.environ.get("CI"):  # .ci/run installs bubblewrap: in CI the sandbox must work
            pytest.fail(why)
        pytest.skip(why + " (apt-get install bubblewrap)")

    path = corpus.course / "autograded" / "attacker" / LESSON / f"{LESSON}.ipynb"
    nb = nbformat.read(path, as_version=4)
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    attempts = json.loads(re.search(r"ATTACK (\{.*\})", text).group(1))
    for what in ("delete submissions", "delete gradebook", "overwrite gradebook", "read a classmate",
                 "write outputs", "patch the checker", "phone home", "read private system files"):
        assert attempts[what] != "done", f"{what} succeeded: {attempts}"
    assert corpus.gradebook.is_file()
    assert _result(corpus, ("a", "zz_after_attack", LESSON))["score"] == LESSONS[LESSON].total()


def test_every_misconception_of_the_lesson_is_in_the_corpus():
    from grader.lessons import load_all

    lesson = LESSONS[LESSON]
    wanted = sum(len(load_all()[ex].misconceptions) for ex in lesson.exercise.values())
    samples = [s for s in misconception_samples(lesson)]
    found = sum(why.count(": ") for why in (s.why for s in samples))
    failing = sum(1 for s in samples for test, want in s.tests.items()
                  if want.status == "failed" and not test.startswith("hidden_"))
    assert wanted > 0 and found == failing == wanted


def test_honest_feedback_keeps_every_figure_and_cuts_no_output(corpus):
    """The text cap does not count figures: each lesson's figures reach its feedback."""
    drawn = 0
    for (batch, student, assignment), sample in corpus.samples.items():
        if student != "honest_full":
            continue
        page = (corpus.out[batch] / "feedback" / student / assignment / f"{assignment}.html").read_text()
        assert "[output cut" not in page and "[figure left out" not in page, assignment
        drawn += page.count('<img alt="figure"') > 0
    assert drawn >= 5, "the lessons' figures are missing from their feedback"
