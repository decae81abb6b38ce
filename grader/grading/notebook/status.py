"""Every status grading gives, as a ``StrEnum``, and the one function that decides a test's.

A member is its own string (``TestStatus.PASSED == "passed"``), so the results JSON and
``grades.csv`` read exactly as they did; inside the grader a status is compared with
members only, never with a string typed again somewhere.

* :class:`RunStatus`: how a cell (or a bridge request) ended in the kernel;
* :class:`CheckStatus`: what the trusted checker said of a test cell;
* :class:`TestStatus`: a test cell's status in the results, from :func:`decide_test_status`;
* :class:`JobStatus`: a graded notebook's, and a submission's;
* :class:`CellKind`: the role of a notebook cell (``grader.grading.notebook.repair.kind_of``).

:func:`decide_test_status` is the whole rule for a test's status, a pure function of typed inputs
(as DOMjudge's ``determineVerdict`` is); ``tests/test_status.py`` feeds it every combination.
"""
from __future__ import annotations

from enum import StrEnum


class RunStatus(StrEnum):
    OK = "ok"
    ERROR = "error"  # the cell raised
    MEMORY_ERROR = "memory-error"  # the cell raised MemoryError (the kernel lives on)
    TIMEOUT = "timeout"  # past the time limit of one cell, interrupted
    STUCK = "stuck"  # interrupted, it did not answer: the kernel was killed
    DIED = "died"  # the kernel went away on its own
    MEMORY = "memory"  # past the memory limit: the kernel was killed
    WALL = "wall"  # the notebook reached its time limit
    NOT_RUN = "not-run"  # not run: the kernel could not be brought back


# After these the kernel is gone or unusable.
FATAL = frozenset({RunStatus.DIED, RunStatus.MEMORY, RunStatus.STUCK})
# A run that ended as the code meant it to, well or not: the kernel is as the code left it.
FINISHED = frozenset({RunStatus.OK, RunStatus.ERROR})


class CheckStatus(StrEnum):
    PASSED = "passed"  # every check of the cell passed
    FAILED = "failed"  # a check rejected the answer
    ERROR = "error"  # the cell has no checks
    INCIDENT = "incident"  # the kernel was stopped while it ran (the verdict carries the run)


class TestStatus(StrEnum):
    __test__ = False  # not a pytest test class, whatever its name

    PASSED = "passed"  # every check of the cell passed: it earns its points
    FAILED = "failed"  # a check rejected the answer
    ERROR = "error"  # the answer could not be checked (missing, or the kernel died while it ran)
    TIMEOUT = "timeout"  # the cell, or the answer it tests, ran past the time limit
    MEMORY = "memory"  # the cell, or the answer it tests, ran out of memory
    MISSING = "missing"  # there was no readable notebook to grade


class JobStatus(StrEnum):
    GRADED = "graded"
    MISSING = "missing"  # no readable notebook, or one the grader could not grade
    FAILED = "failed"  # the grader itself could not grade it


class CellKind(StrEnum):
    ANSWER = "answer"  # code the learner writes, checked by tests
    TEST = "test"  # a graded test cell
    MANUAL = "manual"  # a written answer, graded by hand
    TASK = "task"  # a locked description, graded by hand
    LOCKED = "locked"
    PLAIN = "plain"
    ADDED = "added"  # a cell the learner added (it runs, it earns nothing)


HAND_GRADED = frozenset({CellKind.MANUAL, CellKind.TASK})
WRITTEN = frozenset({CellKind.ANSWER, CellKind.MANUAL})  # cells a learner writes in

# What a stopped cell means for the test that needed it.
INCIDENT = {RunStatus.TIMEOUT: TestStatus.TIMEOUT, RunStatus.WALL: TestStatus.TIMEOUT,
            RunStatus.STUCK: TestStatus.TIMEOUT, RunStatus.MEMORY: TestStatus.MEMORY,
            RunStatus.MEMORY_ERROR: TestStatus.MEMORY, RunStatus.DIED: TestStatus.ERROR,
            RunStatus.NOT_RUN: TestStatus.ERROR}


def stopped(run: RunStatus | None) -> bool:
    """Whether a cell that ended so was stopped (or raised MemoryError): an incident."""
    return run in INCIDENT


def decide_test_status(cell: RunStatus | None, check: CheckStatus | None, *, stopped_as: RunStatus | None = None,
                out_of_memory: bool = False, answer: RunStatus | None = None) -> TestStatus:
    """The status of one test cell.

    * ``cell``: how the test cell's run ended (None: it was never reached);
    * ``check``: the checker's verdict on it (None: it gave none);
    * ``stopped_as``: for an incident, how the kernel was stopped while checking;
    * ``out_of_memory``: the learner's code raised MemoryError on a case of the check;
    * ``answer``: how the answer cell the test depends on ended (None: there is none).

    A passed check passes, whatever else; a stopped answer cell decides any other status,
    since the test could not use it."""
    if cell is None or check is None:
        return INCIDENT.get(cell, TestStatus.ERROR)
    if check == CheckStatus.PASSED:
        return TestStatus.PASSED
    if check == CheckStatus.INCIDENT:
        status = INCIDENT.get(stopped_as, TestStatus.ERROR)
    elif out_of_memory:
        status = TestStatus.MEMORY
    else:
        status = TestStatus(check.value)
    return INCIDENT.get(answer, status)

