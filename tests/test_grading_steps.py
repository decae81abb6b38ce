"""The grading of one notebook is the list ``grader.grading.notebook.job.STEPS``: ``_run`` walks it
in order, a step that ends the job stops the walk, and every step has its test file,
``tests/test_step_<name>.py``. Each check here is also fed something wrong."""
import ast
import copy
import time
from pathlib import Path

import pytest

from grader.grading.notebook import job as job_module
from grader.grading.notebook.job import JobResult
from job_states import A, lesson, make_job, state_before

TESTS = Path(__file__).resolve().parent

ORDER = ["choose_notebook", "read_notebook", "assemble_plan", "list_checks", "note_integrity",
         "write_files", "run_and_check", "score_results", "make_inert"]


def names(steps) -> list[str]:
    return [step.__name__ for step in steps]


def walked(run) -> list[str]:
    """The steps ``run(job, start)`` calls, in order, when each step of ``job.STEPS`` is
    replaced by a stand-in of the same name that only says it was called (and the graded
    result, which the stand-ins leave nothing to build from, by a placeholder)."""
    called = []

    def stand_in(name):
        def step(state):
            called.append(name)
        step.__name__ = name
        return step

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(job_module, "STEPS", tuple(stand_in(name) for name in names(job_module.STEPS)))
        mp.setattr(job_module, "_graded", lambda state: "graded")
        assert run(make_job({}), time.monotonic()) == "graded"
    return called


def job_written(job, upto: str) -> list[str]:
    """The fields of ``job`` that the steps before ``upto`` changed."""
    before = copy.deepcopy(vars(job))
    state_before(upto, job)
    return sorted(k for k, v in vars(job).items() if v != before[k])


def untested_steps(steps, tests: Path) -> list[str]:
    """The steps without a ``test_step_<name>.py`` in ``tests`` that defines a test."""
    missing = []
    for name in names(steps):
        path = tests / f"test_step_{name}.py"
        tree = ast.parse(path.read_text(encoding="utf-8")) if path.is_file() else ast.Module([], [])
        if not any(isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
                   for node in tree.body):
            missing.append(name)
    return missing


def stray_step_files(steps, tests: Path) -> list[str]:
    """The ``test_step_*.py`` files in ``tests`` that name no step (left from a rename)."""
    declared = {f"test_step_{name}.py" for name in names(steps)}
    return sorted(p.name for p in tests.glob("test_step_*.py") if p.name not in declared)


# ------------------------------------------------------------------ the list and its walk

def test_the_steps_are_declared_in_this_order():
    assert names(job_module.STEPS) == ORDER


def test_run_walks_the_declared_steps_in_order():
    assert walked(job_module._run) == ORDER


def test_a_run_that_does_not_walk_the_list_is_told_apart():
    def backwards(job, start):
        state = job_module.JobState.begin(job, start)
        for step in reversed(job_module.STEPS):
            step(state)
        return job_module._graded(state)

    def inline(job, start):  # its own steps, not the list
        return job_module._graded(job_module.JobState.begin(job, start))

    assert walked(backwards) == ORDER[::-1] != ORDER
    assert walked(inline) == []


def test_a_step_that_finishes_the_job_ends_the_walk_and_the_private_directory_goes(monkeypatch):
    called, removed = [], []
    finished = JobResult("alice", A, f"{A}.ipynb", "missing")

    class Private:
        def remove(self):
            removed.append(True)

    def first(state):
        called.append("first")
        state.private = Private()

    def second(state):
        called.append("second")
        state.finished = finished

    def third(state):
        called.append("third")

    monkeypatch.setattr(job_module, "STEPS", (first, second, third))
    assert job_module.run_job(make_job({})) is finished
    assert called == ["first", "second"] and removed == [True]


def test_a_judging_step_that_raises_fails_the_job_and_the_private_directory_still_goes(monkeypatch):
    """An error where the run is judged, on typed data, is the grader's own: the job fails
    (and ``grade`` says so, exiting 1)."""
    removed = []

    class Private:
        def remove(self):
            removed.append(True)

    def first(state):
        state.private = Private()

    def score_results(state):
        raise ValueError("a bug of the grader")

    monkeypatch.setattr(job_module, "STEPS", (first, score_results))
    result = job_module.run_job(make_job({}))
    assert result.status == "failed" and "ValueError: a bug of the grader" in result.error
    assert removed == [True]


@pytest.mark.parametrize("name", [n for n in ORDER if n not in job_module.JUDGING])
def test_a_step_that_reads_the_submission_and_raises_costs_only_that_notebook(monkeypatch, name):
    """Reading or preparing a submission's bytes that raises is that submission's: it is
    not graded, every test 0 with a note that says what happened, flagged for a person,
    and the job does not fail."""
    removed = []

    class Private:
        def remove(self):
            removed.append(True)

    def first(state):
        state.private = Private()

    def broken(state):
        raise RecursionError("maximum recursion depth exceeded")

    broken.__name__ = name
    monkeypatch.setattr(job_module, "STEPS", (first, broken))
    result = job_module.run_job(make_job({lesson().filename: lesson().honest()}))
    assert result.status == "missing" and result.flags == ["could not be graded"]
    note = f"It could not be graded: {job_module.DOING[name]} it raised RecursionError: maximum recursion"
    assert any(n.startswith(note) for n in result.notes), result.notes
    assert len(result.tests) == len(lesson().tests)
    assert all(t.points == 0 and t.message.startswith(note) for t in result.tests)
    assert "RecursionError" in result.error and removed == [True]
    assert result.autograded is not None  # the release, with nothing of the submission's


def test_a_missing_notebook_ends_the_real_walk_after_assemble_plan(monkeypatch):
    called = []

    def noted(step):
        def wrapper(state):
            called.append(step.__name__)
            step(state)
        return wrapper

    monkeypatch.setattr(job_module, "STEPS", tuple(noted(s) for s in job_module.STEPS))
    result = job_module.run_job(make_job({"notes.txt": b"x"}))
    assert result.status == "missing" and result.flags == ["missing"]
    assert called == ORDER[:ORDER.index("assemble_plan") + 1]
    assert len(result.tests) == len(lesson().tests)


# ------------------------------------------------------------------ a test file per step

def test_every_step_has_its_test_file():
    assert untested_steps(job_module.STEPS, TESTS) == []


def test_a_step_without_a_test_file_or_without_tests_in_it_is_found(tmp_path):
    def no_such_step(state):
        """Reads nothing, writes nothing."""

    assert untested_steps((*job_module.STEPS, no_such_step), TESTS) == ["no_such_step"]
    empty = tmp_path / "test_step_no_such_step.py"
    empty.write_text('"""Nothing tested yet."""\n\ndef helper():\n    pass\n')
    assert untested_steps((no_such_step,), tmp_path) == ["no_such_step"]
    empty.write_text("def test_it():\n    pass\n")
    assert untested_steps((no_such_step,), tmp_path) == []


def test_every_step_test_file_names_a_step():
    assert stray_step_files(job_module.STEPS, TESTS) == []


def test_a_step_test_file_left_from_a_rename_is_found(tmp_path):
    for name in [*ORDER, "read_submission"]:
        (tmp_path / f"test_step_{name}.py").write_text("def test_it():\n    pass\n")
    assert stray_step_files(job_module.STEPS, tmp_path) == ["test_step_read_submission.py"]


def test_the_steps_write_to_their_state_and_never_to_their_job(monkeypatch):
    """Every step before the kernels (``job_states.FIRST_WITH_KERNELS``) leaves the job as
    it was; a step that writes to it is named."""
    files = {lesson().filename: lesson().release, f"{A}-Copy1.ipynb": lesson().honest()}
    assert job_written(make_job(files), "write_files") == []

    def assemble_plan(state):  # as the step once was: the choice's notes put on the job
        state.job.notes = [*state.job.notes, "chosen"]
    assemble_plan.__name__ = "assemble_plan"
    monkeypatch.setattr(job_module, "STEPS", (job_module.choose_notebook, assemble_plan,
                                              job_module.write_files))
    assert job_written(make_job(files), "write_files") == ["notes"]
