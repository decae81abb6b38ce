"""The grading process's own work on one submission has a wall limit of its own
(``--grader-wall``, grader.grading.notebook.watchdog): a step that hangs costs only its notebook,
"could not be graded" with a note that names the limit, whether it loops in Python (the
job is stopped where it is) or inside C code (its worker is killed and replaced, and the
pool goes on); the kernel's run does not count, but is bounded too.

In this process only Python loops are made to hang: a step stuck in C would get the test
process itself killed. Those run in a pool's worker processes."""
from __future__ import annotations

import json
import threading
import time

import pytest

from grader.grading.notebook import job as job_module
from grader.grading.classroom.pool import PoolRunner
from grader.grading.notebook.job import kernel_allowance, run_and_check
from grader.grading.notebook.sandbox import Limits
from grader.grading.notebook.watchdog import WATCH, OverLimit, Watchdog
from job_states import A, lesson, make_job, state_before
from stalls import SpinsInPython, StallsInC

LIMIT = 0.5


def _spin(seconds: float) -> None:
    """Busy in Python for ``seconds`` (where the watchdog can stop it)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def _hangs(state):
    while True:
        pass


def _over_limit(result, limit: float = LIMIT) -> bool:
    note = (f"It could not be graded: the grader's own work on it (reading, repairing, scanning "
            f"and scoring it, its code's run aside) passed its limit of {limit:g} s (--grader-wall).")
    return (result.status == "missing" and result.flags == ["could not be graded"]
            and note in result.notes and len(result.tests) == len(lesson().tests)
            and all(t.points == 0 and t.message == note for t in result.tests))


def _named(fn, name: str):
    return type(fn)(fn.__code__, fn.__globals__, name)


def _with_a_hanging_step(monkeypatch, name: str = "note_integrity") -> None:
    """The job's steps with ``name`` looping forever, and no kernel started."""
    skipped = ("write_files", "run_and_check", "score_results")
    steps = tuple(_named(_hangs, s.__name__) if s.__name__ == name else
                  _named(lambda state: None, s.__name__) if s.__name__ in skipped else s
                  for s in job_module.STEPS)
    monkeypatch.setattr(job_module, "STEPS", steps)


@pytest.mark.parametrize("name", ["read_notebook", "note_integrity", "score_results", "make_inert"])
def test_a_step_looping_in_python_is_stopped_at_the_limit_and_costs_only_its_notebook(monkeypatch, name):
    _with_a_hanging_step(monkeypatch, name)
    result = job_module.run_job(make_job({lesson().filename: lesson().honest()}, grader_wall=LIMIT))
    assert _over_limit(result), (result.status, result.flags, result.notes)
    assert result.error == ""  # the limit, not a bug of the grader
    monkeypatch.undo()
    after = job_module.run_job(make_job({"notes.txt": b"x"}, grader_wall=LIMIT))
    assert (after.status, after.flags) == ("missing", ["missing"])  # the next job is untouched
    _spin(2 * LIMIT)  # and nothing fires on it later


def test_a_notebook_over_the_limit_keeps_the_notes_its_steps_had_made(monkeypatch):
    """Which file was graded is said even when the work passes the limit after choosing
    it: the steps' notes travel with the limit, not through the job."""
    files = {lesson().filename: lesson().release, f"{A}-Copy1.ipynb": lesson().honest()}
    chosen = state_before("list_checks", make_job(files)).choice_notes
    assert chosen, "the control: choosing among two notebooks says which"
    _with_a_hanging_step(monkeypatch, "note_integrity")
    result = job_module.run_job(make_job(files, grader_wall=LIMIT))
    assert _over_limit(result) and all(n in result.notes for n in chosen), result.notes


def test_the_limit_holds_in_a_thread_of_its_own_as_on_a_dask_worker(monkeypatch):
    _with_a_hanging_step(monkeypatch)
    results = []
    thread = threading.Thread(target=lambda: results.append(job_module.run_job(
        make_job({lesson().filename: lesson().honest()}, grader_wall=LIMIT))))
    thread.start()
    thread.join(60)
    assert not thread.is_alive() and _over_limit(results[0])


def test_an_honest_job_within_the_limit_is_not_touched():
    dog = Watchdog()
    dog.begin(("alice",), 1.0)
    _spin(0.3)
    dog.end()
    _spin(1.2)  # past where the limit would have been


def test_the_kernels_run_does_not_count_but_is_bounded_too():
    dog = Watchdog()
    dog.begin(("alice",), LIMIT)
    try:
        with dog.paused(30):
            _spin(3 * LIMIT)  # the kernel's own limits bound this
        _spin(LIMIT / 2)  # what was left of the grader's own time
    finally:
        dog.end()
    dog.begin(("bob",), LIMIT)
    try:
        with pytest.raises(OverLimit):
            with dog.paused(LIMIT):
                _spin(30)  # a check stuck while the kernel is up: past the run's allowance
    finally:
        dog.end()


def test_the_job_pauses_the_clock_for_the_kernels_run_and_only_for_what_its_limits_allow(monkeypatch):
    assert kernel_allowance(Limits()) == Limits().wall + (Limits().max_restarts + 2) * Limits().startup

    class Private:
        kernel, first = None, None

    def run_notebook(*args, **kwargs):
        _spin(3 * LIMIT)
        return []

    monkeypatch.setattr(job_module, "run_notebook", run_notebook)
    for limits, over in ((Limits(), False), (Limits(wall=0.2, startup=0.1, max_restarts=0), True)):
        state = state_before("write_files", make_job({lesson().filename: lesson().honest()}, limits=limits))
        state.private = Private()
        WATCH.begin(state.job.key, LIMIT)
        try:
            if over:
                with pytest.raises(OverLimit):
                    run_and_check(state)
            else:
                run_and_check(state)
                assert state.runs == []
        finally:
            WATCH.end()


# ------------------------------------------------------------------ in a pool's workers

def _job(student: str, data=None):
    job = make_job({lesson().filename: data} if data is not None else {"notes.txt": b"x"},
                   grader_wall=1.0)
    job.student = student
    return job


def _batch(runner: PoolRunner, jobs) -> tuple[dict, object, object]:
    """Each job's result by student, the pool the batch started on and the one it ended on."""
    results, started = {}, []
    runner.run(jobs, lambda i, r: results.__setitem__(jobs[i].student, r),
               lambda: started.append(runner.pool))
    return results, started[0], runner.pool


@pytest.fixture(scope="module")
def pool():
    honest = json.dumps(lesson().honest()).encode()
    runner = PoolRunner(2)
    try:
        yield {
            "spins": _batch(runner, [_job("spins", SpinsInPython(honest)), _job("q1")]),
            "stalls": _batch(runner, [_job("stalls", StallsInC(honest)), _job("q2"), _job("q3")]),
            "after": _batch(runner, [_job("q4")]),
        }
    finally:
        runner.close()


@pytest.mark.slow
def test_in_a_worker_a_python_loop_is_stopped_and_the_worker_goes_on(pool):
    results, started, ended = pool["spins"]
    assert _over_limit(results["spins"], 1.0)
    assert (results["q1"].status, results["q1"].flags) == ("missing", ["missing"])
    assert ended is started, "the worker was not killed"


@pytest.mark.slow
def test_in_a_worker_a_step_stuck_in_c_gets_it_replaced_and_costs_only_its_notebook(pool):
    results, started, ended = pool["stalls"]
    assert _over_limit(results["stalls"], 1.0)
    for other in ("q2", "q3"):  # started again at no cost, and graded
        assert (results[other].status, results[other].flags) == ("missing", ["missing"])
    assert ended is not started, "the killed worker's pool is not used again"
    after, next_pool, _ = pool["after"]
    assert next_pool is not started and after["q4"].flags == ["missing"], "a new pool grades the next batch"
    assert results["stalls"].assignment == A


def test_a_proof_over_the_limit_stops_the_run_and_says_why():
    """The environment proof goes through the same limit: a source notebook the grader
    cannot read in time fails the proof, and the reason names the limit."""
    from grader.grading.classroom.session import proof_problem
    from grader.grading.notebook.job import over_limit

    job = make_job({lesson().filename: lesson().source}, proof=True, submitted_as=lesson().filename,
                   grader_wall=LIMIT)
    problem = proof_problem([over_limit(job)])
    assert problem.startswith(f"{A}: grading its source notebook failed: It could not be graded")
    assert "--grader-wall" in problem
