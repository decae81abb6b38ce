"""What grading says about a test cell (grader.grading.notebook.results): a checker's verdict and
a test's result, typed again when they come back from a worker or a file."""
import re

import pytest

from grader.grading.notebook.kernel import CellRun
from grader.grading.notebook.results import CheckVerdict


@pytest.mark.parametrize("data, problem", [
    ({"id": "t", "points": 1, "max": 2, "status": "passd", "message": ""}, "status 'passd'"),
    ({"id": "t", "point": 1, "max": 2, "status": "passed", "message": ""}, "unknown fields ['point']"),
    ({"id": "t", "points": 3, "max": 2, "status": "passed", "message": ""}, "3 points out of 2"),
    ({"id": "t", "points": float("nan"), "max": 2, "status": "failed", "message": ""},
     "points is nan"),
    ({"id": "t", "points": "2", "max": 2, "status": "passed", "message": ""}, "points is '2'"),
], ids=["misspelt status", "misspelt key", "too many points", "NaN points", "text points"])
def test_a_test_result_with_a_wrong_field_is_an_error_that_names_it(data, problem):
    """A result that comes back from a worker or a file is typed again: a misspelt key or
    status, or points that are not points, never count silently as 0."""
    from grader.grading.notebook.job import JobResult
    from grader.grading.notebook.results import TestResult

    with pytest.raises(ValueError, match=re.escape(problem)):
        TestResult.from_dict(data)
    with pytest.raises(ValueError, match=re.escape(problem)):
        JobResult("s", "a", "a.ipynb", "graded", tests=[data])
    good = {**data, "points": 1, "max": 2, "status": "failed"}
    good.pop("point", None)
    typed = JobResult("s", "a", "a.ipynb", "graded", tests=[good]).tests[0]
    assert typed == TestResult.from_dict(typed.to_dict()) and typed.points == 1.0


def test_a_check_verdict_has_a_known_status_and_an_incident_its_run():
    with pytest.raises(ValueError, match="'passd' is not one of"):
        CheckVerdict("passd", "✓")
    with pytest.raises(ValueError, match="only an incident, comes with the run"):
        CheckVerdict("incident")
    with pytest.raises(ValueError, match="only an incident, comes with the run"):
        CheckVerdict("failed", "no", run=CellRun(0, "error"))
    assert CheckVerdict("incident", run=CellRun(0, "timeout")).run.status == "timeout"
