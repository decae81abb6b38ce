"""The one rule for a test cell's status (``grader.grading.notebook.status.decide_test_status``),
fed every combination of its typed inputs."""
import itertools

import pytest

from grader.grading.notebook.status import (CheckStatus, JobStatus, RunStatus, TestStatus,
                                   decide_test_status)

RUNS = [None, *RunStatus]
CHECKS = [None, *CheckStatus]
STOPPED = {RunStatus.TIMEOUT: TestStatus.TIMEOUT, RunStatus.WALL: TestStatus.TIMEOUT,
           RunStatus.STUCK: TestStatus.TIMEOUT, RunStatus.MEMORY: TestStatus.MEMORY,
           RunStatus.MEMORY_ERROR: TestStatus.MEMORY, RunStatus.DIED: TestStatus.ERROR,
           RunStatus.NOT_RUN: TestStatus.ERROR}


def every():
    for cell, check, stopped_as, oom, answer in itertools.product(RUNS, CHECKS, RUNS, (False, True), RUNS):
        yield cell, check, stopped_as, oom, answer, decide_test_status(
            cell, check, stopped_as=stopped_as, out_of_memory=oom, answer=answer)


@pytest.mark.parametrize("cell,check,stopped_as,oom,answer,want", [
    (RunStatus.OK, CheckStatus.PASSED, None, False, None, TestStatus.PASSED),
    # a passed check passes, even after an answer cell that was stopped
    (RunStatus.OK, CheckStatus.PASSED, None, True, RunStatus.TIMEOUT, TestStatus.PASSED),
    (RunStatus.ERROR, CheckStatus.FAILED, None, False, None, TestStatus.FAILED),
    (RunStatus.ERROR, CheckStatus.FAILED, None, False, RunStatus.OK, TestStatus.FAILED),
    (RunStatus.ERROR, CheckStatus.FAILED, None, True, None, TestStatus.MEMORY),
    (RunStatus.ERROR, CheckStatus.ERROR, None, False, None, TestStatus.ERROR),
    (RunStatus.ERROR, CheckStatus.ERROR, None, True, None, TestStatus.MEMORY),
    (RunStatus.TIMEOUT, CheckStatus.INCIDENT, RunStatus.TIMEOUT, False, None, TestStatus.TIMEOUT),
    (RunStatus.DIED, CheckStatus.INCIDENT, RunStatus.DIED, True, None, TestStatus.ERROR),
    (RunStatus.MEMORY, CheckStatus.INCIDENT, RunStatus.MEMORY, False, None, TestStatus.MEMORY),
    (RunStatus.ERROR, CheckStatus.INCIDENT, RunStatus.ERROR, False, None, TestStatus.ERROR),
    # the answer cell it tests was stopped: that decides
    (RunStatus.ERROR, CheckStatus.FAILED, None, False, RunStatus.STUCK, TestStatus.TIMEOUT),
    (RunStatus.ERROR, CheckStatus.FAILED, None, False, RunStatus.MEMORY_ERROR, TestStatus.MEMORY),
    (RunStatus.TIMEOUT, CheckStatus.INCIDENT, RunStatus.TIMEOUT, False, RunStatus.DIED, TestStatus.ERROR),
    # never reached, or no verdict
    (None, None, None, False, None, TestStatus.ERROR),
    (RunStatus.WALL, None, None, False, None, TestStatus.TIMEOUT),
    (RunStatus.NOT_RUN, None, None, False, None, TestStatus.ERROR),
    (RunStatus.OK, None, None, False, None, TestStatus.ERROR),
    (None, CheckStatus.PASSED, None, False, None, TestStatus.ERROR),
])
def test_each_rule(cell, check, stopped_as, oom, answer, want):
    got = decide_test_status(cell, check, stopped_as=stopped_as, out_of_memory=oom, answer=answer)
    assert got is want


def test_every_combination_follows_the_rules():
    seen = set()
    for cell, check, stopped_as, oom, answer, got in every():
        seen.add(got)
        assert isinstance(got, TestStatus)
        assert got is not TestStatus.MISSING  # only a notebook that is not there is missing
        if cell is None or check is None:
            assert got is STOPPED.get(cell, TestStatus.ERROR)
        elif check is CheckStatus.PASSED:
            assert got is TestStatus.PASSED
        elif answer in STOPPED:
            assert got is STOPPED[answer]
        elif check is CheckStatus.INCIDENT:
            assert got is STOPPED.get(stopped_as, TestStatus.ERROR)
        elif oom:
            assert got is TestStatus.MEMORY
        else:
            assert got.value == check.value
    assert seen == set(TestStatus) - {TestStatus.MISSING}


def test_statuses_are_their_strings():
    # So that the results JSON and grades.csv read as they always did.
    import json

    assert json.dumps([TestStatus.PASSED, JobStatus.GRADED, RunStatus.MEMORY_ERROR]) == \
        '["passed", "graded", "memory-error"]'
    assert f"{TestStatus.TIMEOUT}" == "timeout" and TestStatus("memory") is TestStatus.MEMORY
    with pytest.raises(ValueError):
        TestStatus("passd")


def test_a_cell_run_takes_only_a_status_it_knows():
    from grader.grading.notebook.kernel import CellRun

    assert CellRun(0, "memory-error").status is RunStatus.MEMORY_ERROR
    assert CellRun(0, "died").fatal and not CellRun(0, "error").fatal
    with pytest.raises(ValueError):
        CellRun(0, "okay")
