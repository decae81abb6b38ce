"""What the grade command says and where it writes (grader.grading.report): the --out
folder, the progress it shows, and the JSON result of a submission."""
import io
import json
import re

import pytest

from grader.grading.report import Progress, submission_record
from job_results import job_result as _result

A = "01_matmul_views"


def test_out_may_not_be_the_course_or_its_folders_and_ignores_itself_in_git(tmp_path):
    from grader.grading.report import OutError, check_out

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
    record = submission_record("alice", A, [_result([], [])], "none", "2025-01-01")
    assert json.loads(json.dumps(record))["sandbox"] == "none"
