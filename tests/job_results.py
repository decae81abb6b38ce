"""A graded notebook's result for the report and the feedback page
(tests/test_grading_report.py, tests/test_grading_feedback.py)."""
from grader.grading.notebook import nbjson
from grader.grading.notebook.job import JobResult

A = "01_matmul_views"


def job_result(tests, cells, status="graded"):
    nb = nbjson.new_notebook(cells)
    return JobResult("alice", A, f"{A}.ipynb", status, tests=tests,
                     manual=[{"id": "essay", "max": 2.0, "answered": True}], autograded=nb,
                     repairs=["The test cell `t1` was missing and has been put back."])
