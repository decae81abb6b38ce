"""The feedback page (grader.grading.classroom.feedback): hidden tests by name, points and message
only, and nothing active from the notebook. (The page made from the autograded folder, as
``generate_feedback`` makes it, is in test_grading_gradebook.py.)"""
from grader.grading.notebook import nbjson
from grader.grading.classroom.feedback import render, visible_source
from job_results import job_result as _result

A = "01_matmul_views"


HIDDEN_CELL = 'check("f", f)\n### BEGIN HIDDEN TESTS\ncheck("f", f, hidden=True)\n### END HIDDEN TESTS\n'


def test_feedback_shows_hidden_tests_by_name_points_and_message_only():
    test = nbjson.new_cell("code", HIDDEN_CELL, "t1", {"nbgrader": {"grade": True, "grade_id": "t1", "points": 2}})
    test.outputs = [nbjson.new_output("error", ename="CheckFailed", evalue="f is not right yet.",
                                      traceback=['File "<cell>", line 3, in check("f", f, hidden=True)'])]
    md = nbjson.new_cell("markdown", "Hello <script>alert(1)</script> **world**", "m1")
    code = nbjson.new_cell("code", "show()", "c1")
    code.outputs = [nbjson.new_output("display_data", data={"text/html": "<script>x()</script>",
                                                             "text/plain": "<Figure>", "image/png": "iVBORw0KGgo="})]
    tests = [{"id": "t1", "points": 0.0, "max": 2.0, "status": "failed", "message": "f is not right yet."}]
    page = render(_result(tests, [md, code, test]), "alice", A)
    assert "hidden=True" not in page and "HIDDEN TESTS" not in page
    assert "f is not right yet." in page and "t1" in page and "0 / 2" in page
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "<strong>world</strong>" in page
    assert 'src="data:image/png;base64,iVBORw0KGgo="' in page
    assert "was missing and has been put back" in page
    assert "Written answers (2 points) are graded by hand" in page
    assert visible_source(HIDDEN_CELL) == 'check("f", f)\n# (hidden tests: their result is shown below)\n'
