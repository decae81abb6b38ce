"""What the grade command says and where it writes (grader.grading.classroom.report): the --out
folder, the progress it shows, and the JSON result of a submission."""
import dataclasses
import io
import json
import re

import pytest

from grader.grading.classroom.report import Progress
from grader.grading.classroom.submission_result import Lateness, Marks, SubmissionResult
from job_results import job_result as _result

A = "01_matmul_views"


def test_out_may_not_be_the_course_or_its_folders_and_ignores_itself_in_git(tmp_path):
    from grader.grading.classroom.report import OutError, check_out

    course = tmp_path / "course"
    (course / "solutions").mkdir(parents=True)
    submitted = course / "submitted"
    submitted.mkdir()
    for bad, why in [(course, "holds the course itself"), (tmp_path, "holds the course itself"),
                     (course / "solutions" / "x", "inside the course's solutions/"),
                     (course / "submitted" / "out", "inside the course's submitted/"),
                     (course / "notebooks", "inside the course's notebooks/")]:
        with pytest.raises(OutError, match=re.escape(why)):
            check_out(bad, course, submitted)
    (tmp_path / "in" / "submitted").mkdir(parents=True)
    with pytest.raises(OutError, match="overlap"):
        check_out(tmp_path / "in", course, tmp_path / "in" / "submitted")
    check_out(course / "grading", course, submitted)
    assert (course / "grading" / ".gitignore").read_text().splitlines()[-1] == "*"
    (course / "mine").mkdir()
    (course / "mine" / ".gitignore").write_text("keep\n")
    check_out(course / "mine", course, submitted)
    assert (course / "mine" / ".gitignore").read_text() == "keep\n", "an existing .gitignore stays"


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def submission_record(student, assignment, results, sandbox, timestamp) -> SubmissionResult:
    return SubmissionResult(student, assignment, tuple(results), sandbox, timestamp)


def test_progress_is_a_bar_with_eta_on_a_terminal_and_lines_otherwise():
    record = submission_record("alice", A, [_result([], [])], "bwrap", None)
    plain = io.StringIO()
    p = Progress(2, plain)
    p.finished(record)
    assert plain.getvalue().startswith(f"[1/2] alice/{A}: 0/0 (graded")
    assert plain.getvalue().count("\n") == 1, "a submission without notes takes one line"
    term = _Terminal()
    p = Progress(2, term)
    p.finished(record)
    p.close()
    assert "1/2" in term.getvalue() and "<" in term.getvalue()  # elapsed<remaining
    assert "[1/2]" not in term.getvalue()


def test_results_json_is_plain_json():
    record = submission_record("alice", A, [_result([], [])], "none", "2025-01-01").to_json()
    assert json.loads(json.dumps(record))["sandbox"] == "none"


def test_results_json_keeps_its_keys_and_their_order():
    """The JSON is made from the result in memory; its keys are those it always had, the
    gradebook's only once the submission was recorded, ``look_at`` last."""
    from grader.grading.notebook.results import TestResult

    tests = [TestResult("t1", 1, 2, "failed", "no"), TestResult("t2", 3, 3, "passed", "✓")]
    result = submission_record("alice", A, [_result(tests, [])], "bwrap", None)
    data = result.to_json()
    assert list(data) == ["student", "assignment", "status", "score", "max", "manual_max", "tests",
                          "manual", "repairs", "incidents", "notes", "integrity", "errors", "sandbox",
                          "seconds", "timestamp", "graded_at", "flags", "graded_files", "exchange",
                          "look_at"]
    assert (data["score"], data["max"], data["manual_max"]) == (4, 5, 2)
    assert data["tests"][0] == {"notebook": A, "id": "t1", "points": 1.0, "max": 2.0, "status": "failed",
                                "message": "no"}
    late = Lateness("2025-01-02 00:00:00 UTC", "2025-01-01 00:00:00 UTC", 86400.0, 1.0, "1 a day")
    marked = dataclasses.replace(result, not_kept=(), marks=Marks(None, 1.0, 3.0, 7.0), late=late,
                                 flags=("missing",))
    data = marked.to_json()
    assert list(data)[20:] == ["not_kept", "manual_points", "late_penalty", "total", "total_max", "late",
                               "look_at"]
    assert (data["total"], data["late"]["seconds"]) == (3.0, 86400.0)
    assert marked.look_at() == ["no notebook", "late by 1 day (penalty 1)"]
    assert json.dumps(data["status"]) == '"graded"'


def test_a_failed_submission_says_why_and_nothing_else():
    failed = _result([], [], status="failed")
    failed.error = "Traceback ...\nValueError: a bug of the grader\n"
    result = submission_record("alice", A, [failed], "bwrap", None)
    assert result.status == "failed" and result.look_at() == ["not graded: ValueError: a bug of the grader"]
    assert "manual_points" not in result.to_json()
