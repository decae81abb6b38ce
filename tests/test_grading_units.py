"""The grading pipeline's parts, one at a time and without kernels: reading submissions,
the sandbox's view of the file system, scoring, feedback pages and progress. (What goes
through the gradebook is in test_grading_gradebook.py.)"""
import io
import json
import os
import re
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT
from grader.grading import nbjson
from grader.grading.feedback import render, visible_source
from grader.grading.job import JobResult
from grader.grading.kernel import CellRun
from grader.grading.report import Progress, submission_record
from grader.grading.sandbox import Limits, Sandbox, private_entries, readonly_paths
from grader.grading.results import CheckVerdict
from grader.grading.scoring import score_test
from grader.grading.submissions import SubmissionsError, read_submissions

A = "01_matmul_views"


# ------------------------------------------------------------------ submissions

def _tree(root: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def test_a_tree_is_read_whole_and_odd_entries_are_skipped(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("instructor only")
    sub = _tree(tmp_path / "submitted", {
        f"alice/{A}/{A}.ipynb": b"{}", f"alice/{A}/data/x.csv": b"1,2",
        f"alice/{A}/timestamp.txt": b"2025-01-01 10:00:00 UTC",
        f"alice/{A}/.ipynb_checkpoints/{A}-checkpoint.ipynb": b"{}",
        f"bob/99_not_ours/{A}.ipynb": b"{}",
    })
    os.symlink(secret, sub / "alice" / A / "link.txt")
    (sub / "carol" / A).mkdir(parents=True)  # an empty submission still counts
    subs, warnings = read_submissions(tmp_path, [A])  # the course folder above submitted/ works too
    assert [(s.student, s.assignment) for s in subs] == [("alice", A), ("carol", A)]
    alice = subs[0]
    assert sorted(alice.files) == [f"{A}.ipynb", "data/x.csv", "timestamp.txt"]
    assert alice.timestamp == "2025-01-01 10:00:00 UTC"
    assert subs[1].files == {}
    assert warnings == ["skipped bob/99_not_ours: not an assignment of this course"]


def test_a_zip_is_read_without_extracting_and_unsafe_names_are_skipped(tmp_path):
    path = tmp_path / "class.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"export/submitted/alice/{A}/{A}.ipynb", "{}")
        z.writestr(f"export/submitted/bob/{A}/{A}.ipynb", "{}")
        z.writestr("../../escape.txt", "x")
        info = zipfile.ZipInfo(f"export/submitted/bob/{A}/link")
        info.external_attr = (0o120777 << 16)
        z.writestr(info, "/etc/passwd")
    subs, warnings = read_submissions(path, [A])
    assert [(s.student, list(s.files)) for s in subs] == [("alice", [f"{A}.ipynb"]), ("bob", [f"{A}.ipynb"])]
    assert any("unsafe path" in w for w in warnings)
    assert not (tmp_path.parent / "escape.txt").exists()


@pytest.mark.parametrize("make, message", [
    (lambda p: p / "nowhere", "does not exist"),
    (lambda p: _tree(p, {"notes.txt": b"hi"}) / "notes.txt", "not a zip file"),
    (lambda p: _tree(p / "empty", {}) if (p / "empty").mkdir() is None else None, "no submissions found"),
    (lambda p: _tree(p / "alice" / A, {f"{A}.ipynb": b"{}"}), "give its student's folder"),
])
def test_unreadable_inputs_raise_with_a_reason(tmp_path, make, message):
    with pytest.raises(SubmissionsError, match=message):
        read_submissions(make(tmp_path), [A])


def test_a_zip_without_course_assignments_is_refused(tmp_path):
    path = tmp_path / "other.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("alice/hw1/hw1.ipynb", "{}")
    with pytest.raises(SubmissionsError, match="no {student}/{assignment}/ folders"):
        read_submissions(path, [A])


def test_one_students_folder_grades_that_student(tmp_path):
    _tree(tmp_path / "submitted", {f"alice/{A}/{A}.ipynb": b"{}", f"bob/{A}/{A}.ipynb": b"{}"})
    subs, _ = read_submissions(tmp_path / "submitted" / "alice", [A])
    assert [(s.student, s.assignment) for s in subs] == [("alice", A)]


@pytest.mark.parametrize("name, ok", [
    ("alice", True), ("j.doe@example.org", True), ("Zoë_2", True),
    (".hidden", False), ("-rf", False), ("a b", False), ("a*", False), ("x+y", False),
    ("tab\there", False), ("a" * 101, False), ("", False), ("new\nline", False),
])
def test_a_student_name_must_be_usable_in_paths_and_nbgrader(name, ok):
    from grader.grading.submissions import name_problem

    assert (name_problem(name) == "") is ok, name_problem(name)


def test_unusable_student_folders_are_skipped_with_a_warning(tmp_path):
    _tree(tmp_path / "submitted", {f"alice/{A}/{A}.ipynb": b"{}", f"a b*/{A}/{A}.ipynb": b"{}"})
    subs, warnings = read_submissions(tmp_path / "submitted", [A])
    assert [s.student for s in subs] == ["alice"]
    assert warnings == ["skipped the student folder 'a b*': not usable as a student id (it holds a "
                        "separator, space, quote, glob or control character)"]


def test_a_submission_reads_at_most_so_many_files_and_says_so(tmp_path, monkeypatch):
    from grader.grading import submissions

    monkeypatch.setattr(submissions, "MAX_FILES", 3)
    _tree(tmp_path / "submitted", {f"alice/{A}/f{i}.txt": b"x" for i in range(6)})
    (sub,), _ = read_submissions(tmp_path / "submitted", [A])
    assert sorted(sub.files) == ["f0.txt", "f1.txt", "f2.txt"]
    assert sub.notes == ["Only the first 3 files were read; 'f3.txt' and any after it were not."]
    assert sub.flags == ["files not read"]


@pytest.mark.parametrize("text, time", [
    (b"2025-03-01 12:00:00.000000 UTC", "2025-03-01 12:00:00.000000 UTC"),
    (b"2025-03-01T12:00:00+01:00\n", "2025-03-01T12:00:00+01:00"),
    (b"2025-03-01 12:00:00 America/New_York", "2025-03-01 12:00:00 America/New_York"),
    (b"", None), (b"yesterday", None), (b"2025-13-01 12:00:00 UTC", None),
    (b"2025-03-01 12:00:00 /etc/passwd", None), (b"2025-03-01 12:00:00 ../../x", None),
    (b"2025-03-01 12:00:00 UTC" + b" " * 300, None), (b"\xff\xfe", None),
])
def test_only_a_time_nbgrader_writes_is_read_from_timestamp_txt(text, time):
    from grader.grading.submissions import read_timestamp

    got, problem = read_timestamp(text)
    assert got == time
    assert bool(problem) == (time is None and bool(text.strip())), problem


def test_selecting_students_and_assignments_names_what_is_not_there(tmp_path):
    from grader.grading.submissions import select

    _tree(tmp_path / "submitted", {f"alice/{A}/{A}.ipynb": b"{}", f"bob/{A}/{A}.ipynb": b"{}"})
    subs, _ = read_submissions(tmp_path / "submitted", [A, "02_x"])
    assert [s.student for s in select(subs, ["bob"], None, [A, "02_x"])] == ["bob"]
    assert len(select(subs, ["alice", "bob"], [A], [A, "02_x"])) == 2
    with pytest.raises(SubmissionsError, match="no submission from carol .*are alice, bob"):
        select(subs, ["carol"], None, [A, "02_x"])
    with pytest.raises(SubmissionsError, match=f"no assignment 99_y in this course .there are {A}, 02_x"):
        select(subs, None, ["99_y"], [A, "02_x"])
    with pytest.raises(SubmissionsError, match="alice submitted none of 02_x"):
        select(subs, ["alice"], ["02_x"], [A, "02_x"])


# ------------------------------------------------------------------ which notebook is graded

@pytest.fixture(scope="module")
def lesson():
    from grading_corpus import Lesson

    return Lesson(A, ROOT)


def _choose(lesson, files):
    from grader.grading.choice import candidates, choose

    files = {k: (json.dumps(v).encode() if isinstance(v, dict) else v) for k, v in files.items()}
    return choose(candidates(files, lesson.filename, [lesson.filename]), files,
                  nbjson.from_dict(lesson.source), nbjson.from_dict(lesson.release), lesson.filename)


def test_the_notebook_with_the_work_is_graded_whatever_its_name(lesson):
    two = lesson.notebook({k: v for k, v in list(lesson.answers.items())[:2]})
    work = lesson.honest()
    choice = _choose(lesson, {lesson.filename: lesson.release, f"{A}-Copy1.ipynb": work, "x.txt": b"x"})
    assert choice.name == f"{A}-Copy1.ipynb" and choice.flags == ["renamed"]
    assert choice.notes == [f"{lesson.filename} has no more answers than the release in it; "
                            f"'{A}-Copy1.ipynb', with 7 answers changed, was graded in its place."]
    # the notebook's own name wins a tie; a second notebook with work is pointed out
    choice = _choose(lesson, {lesson.filename: two, "old/draft.ipynb": two})
    assert choice.name == lesson.filename and choice.flags == ["several copies with work"]
    assert "'old/draft.ipynb' (2 answers changed)" in choice.notes[0]
    choice = _choose(lesson, {"Untitled.ipynb": work})
    assert choice.name == "Untitled.ipynb" and "There was no" in choice.notes[0]


def test_no_notebook_an_untouched_one_or_an_unreadable_one_is_flagged(lesson):
    assert _choose(lesson, {"notes.txt": b"x"}).flags == ["missing"]
    untouched = _choose(lesson, {lesson.filename: lesson.release})
    assert untouched.name == lesson.filename and untouched.flags == ["nothing answered"]
    broken = _choose(lesson, {lesson.filename: b"{not json"})
    assert broken.name == lesson.filename and broken.flags == ["unreadable"]
    rescued = _choose(lesson, {lesson.filename: b"{not json", f"{A} (1).ipynb": lesson.honest()})
    assert rescued.name == f"{A} (1).ipynb" and "could not be read" in rescued.notes[0]


def test_another_notebook_of_the_assignment_is_never_a_candidate():
    from grader.grading.choice import candidates

    files = {"a.ipynb": b"", "b.ipynb": b"", "sub/b.ipynb": b"", "a-Copy1.ipynb": b"", "c.txt": b""}
    assert candidates(files, "a.ipynb", ["a.ipynb", "b.ipynb"]) == ["a.ipynb", "a-Copy1.ipynb"]


# ------------------------------------------------------------------ the autograded folder

def test_secrets_that_nbgrader_could_not_use_or_that_two_students_share_are_replaced():
    from grader.grading.autograded import exchange_secrets
    from grader.grading.submissions import Submission

    good, shared = b"f" * 128, b"0123abcd" * 16
    subs = [Submission("alice", A, {"submission_secret.txt": good}),
            Submission("bob", A, {"submission_secret.txt": shared}),
            Submission("carol", A, {"submission_secret.txt": shared + b"\n"}),
            Submission("dave", A, {"submission_secret.txt": b"\xff\xfe../../x"}),
            Submission("erin", A, {})]
    kept = exchange_secrets(subs)
    assert kept[("alice", A)] == (good, "")
    assert "the same as that of 1 other submission(s)" in kept[("bob", A)][1]
    assert kept[("bob", A)][0] != shared and "carol" not in kept[("bob", A)][1]
    assert "the same as that of 1 other submission(s)" in kept[("carol", A)][1]
    assert "not one nbgrader writes" in kept[("dave", A)][1]
    assert kept[("erin", A)][1] == "" and len(kept[("erin", A)][0]) == 128
    assert len({kept[k][0] for k in kept}) == 5


def test_the_autograded_folder_keeps_every_file_and_nothing_escapes_it(tmp_path):
    from grader.grading.autograded import write_folder

    outside = tmp_path / "outside"
    outside.mkdir()
    folder = tmp_path / "autograded" / "alice" / A
    folder.parent.mkdir(parents=True)
    folder.symlink_to(outside)  # left from elsewhere: replaced, never followed
    files = {"data/x.csv": b"1", "we ird\nname.txt": b"odd", "../up.txt": b"no", "/abs.txt": b"no",
             "draft.ipynb": b"{}", "submission_secret.txt/inner": b"no", f"{A}.ipynb/x": b"no",
             ".grading/forged.json": b"no", "clash": b"file", "clash/inner.txt": b"no",
             "timestamp.txt": b"forged", "submission_secret.txt": b"forged"}
    notes = write_folder(folder, files, {"data/x.csv": b"course"}, "2025-01-01 10:00:00 UTC",
                         b"s" * 128, {f"{A}.ipynb": b"{}"}, {A: "{}"})
    assert not folder.is_symlink() and list(outside.iterdir()) == []
    found = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    assert found == [".grading/01_matmul_views.json", f"{A}.ipynb", "clash", "data/x.csv",
                     "submission_secret.txt", "timestamp.txt", "we ird\nname.txt"]
    assert (folder / "data/x.csv").read_bytes() == b"course"
    assert (folder / "timestamp.txt").read_text() == "2025-01-01 10:00:00 UTC"
    assert (folder / "submission_secret.txt").read_bytes() == b"s" * 128
    assert len(notes) == 1 and "'clash/inner.txt' was not kept" in notes[0]
    assert not (tmp_path / "up.txt").exists() and not (tmp_path / "abs.txt").exists()


# ------------------------------------------------------------------ --out

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


# ------------------------------------------------------------------ sandbox

def test_the_sandbox_sees_the_python_and_the_kit_but_no_course_data(tmp_path, monkeypatch):
    course = tmp_path / "course"
    (course / "solutions").mkdir(parents=True)
    kit = tmp_path / "scratch" / "kit"
    kit.mkdir(parents=True)
    monkeypatch.chdir(course)
    secrets = [course, tmp_path / "submitted", tmp_path / "out", course / "gradebook.db"]
    binds, _ = readonly_paths(kit, secrets)
    for path in binds:
        for secret in [*secrets, ROOT / "grader", ROOT / "solutions"]:
            assert not (str(secret) + "/").startswith(path.rstrip("/") + "/"), (path, secret)
    assert str(kit) in binds
    # The instructor's side of the package (this checkout) is not there at all.
    assert not any(p.startswith(str(ROOT / "grader")) or p.startswith(str(ROOT / "courseware"))
                   for p in binds)
    assert str(ROOT) not in binds and "/" not in binds


def test_files_only_their_owner_may_read_are_hidden(tmp_path):
    (tmp_path / "public.conf").write_text("x")
    (tmp_path / "secret.key").write_text("x")
    (tmp_path / "secret.key").chmod(0o600)
    (tmp_path / "private").mkdir(mode=0o700)
    (tmp_path / "private" / "inner").write_text("x")
    assert sorted(private_entries([str(tmp_path)])) == [str(tmp_path / "private"), str(tmp_path / "secret.key")]


def test_the_sandbox_command_wraps_the_kernel_in_limits_and_bwrap(tmp_path):
    limits = Limits(memory_mb=512, disk_mb=64, processes=32)
    secret = tmp_path / "key"
    secret.write_text("x")
    box = Sandbox("bwrap", ("/usr", "/opt/venv"), (("usr/bin", "/bin"),), (str(secret), str(tmp_path)),
                  userns=False)
    cmd = box.command(["python", "-m", "ipykernel_launcher"], tmp_path, 0, 1 << 30, limits)
    assert str(512 * 2**20) in cmd[:8]
    bwrap = cmd[cmd.index("bwrap"):]
    for flag in ("--unshare-pid", "--unshare-net", "--die-with-parent", "--new-session", "--cap-drop"):
        assert flag in bwrap
    assert "--unshare-user" not in bwrap and "--unshare-all" not in bwrap  # root: a real user switch
    assert bwrap[bwrap.index("--ro-bind") + 1] == "/usr"
    assert ["--perms", "0755", "--dir", "/opt"] == bwrap[bwrap.index("/opt") - 3:bwrap.index("/opt") + 1]
    assert ["--ro-bind", "/dev/null", str(secret)] == bwrap[bwrap.index("/dev/null") - 1:bwrap.index("/dev/null") + 2]
    assert ["--tmpfs", str(tmp_path)] == bwrap[bwrap.index(str(tmp_path)) - 1:bwrap.index(str(tmp_path)) + 1]
    # Nothing of the host is writable: a sized tmpfs for the kernel, its input read-only.
    assert "--bind" not in bwrap
    assert ["--size", str(64 * 2**20), "--tmpfs", "/job"] == bwrap[bwrap.index("/job") - 3:bwrap.index("/job") + 1]
    assert ["--ro-bind", str(tmp_path / "in"), "/job-in"] == \
        bwrap[bwrap.index("/job-in") - 2:bwrap.index("/job-in") + 1]
    start = bwrap[bwrap.index("-c") + 2:]
    assert start[:5] == ["/job", "/job-in", str(1 << 30), "32", "--"]
    assert bwrap[-3:] == ["python", "-m", "ipykernel_launcher"]
    user = Sandbox("bwrap", ("/usr",), userns=True).command(["python"], tmp_path, 0, -1, limits)
    assert "--unshare-all" in user and "ALL" in user
    plain = Sandbox("none", reason="no bwrap").command(["python"], tmp_path, 0, -1, limits)
    assert "bwrap" not in plain and plain[-1] == "python"
    assert str(tmp_path / "box-0") in plain
    assert "NOT isolated (no bwrap)" in Sandbox("none", reason="no bwrap").describe()


# ------------------------------------------------------------------ scoring

def _test_cell(outputs=(), points=2):
    cell = nbjson.new_cell("code", "check('x', x)", "t1", {"nbgrader": {"grade": True, "grade_id": "t1", "points": points}})
    cell.outputs = [nbjson.from_dict(o) for o in outputs]
    return cell


def _incident(status, detail):
    run = CellRun(0, status, detail=detail)
    return run, CheckVerdict("incident", run=run)


@pytest.mark.parametrize("run, verdict, status, points, phrase", [
    (CellRun(0, "ok"), CheckVerdict("passed", "✓ x: all pass"), "passed", 2, "✓ x: all pass"),
    (CellRun(0, "error"), CheckVerdict("failed", "x is not right yet."), "failed", 0,
     "x is not right yet."),
    (CellRun(0, "error"), CheckVerdict("failed", "x raised MemoryError: Unable to allocate"),
     "memory", 0, "Unable"),
    (CellRun(0, "error"), CheckVerdict("error", "This test has no checks."), "error", 0, "no checks"),
    (*_incident("timeout", "stopped after 3 s"), "timeout", 0, "stopped after 3 s"),
    (*_incident("died", "process stopped"), "error", 0, "process stopped"),
    (*_incident("memory", "more than 10 MB"), "memory", 0, "more than 10 MB"),
    (CellRun(0, "wall", detail="reached its time limit"), None, "timeout", 0, "time limit"),
    (None, None, "error", 0, "did not run"),
])
def test_each_way_a_test_can_end_has_its_status(run, verdict, status, points, phrase):
    """Points come from the checker's verdict alone: nothing the test cell printed counts
    (a cell that printed a number used to be nbgrader's partial credit)."""
    cell = _test_cell([{"output_type": "execute_result", "data": {"text/plain": "2"}, "metadata": {},
                        "execution_count": 1}])
    result = score_test(cell, run, verdict, None, "")
    assert (result.status, result.points, result.max) == (status, points, 2.0)
    assert phrase in result.message


def test_a_test_whose_answer_did_not_finish_says_why_first():
    answer = CellRun(3, "timeout", detail="This cell was stopped after 5 s.")
    verdict = CheckVerdict("failed", "There is no `x` in your notebook when this test runs")
    result = score_test(_test_cell(), CellRun(0, "error"), verdict, answer, "x")
    assert result.status == "timeout"
    assert result.message.startswith("Your answer cell `x` did not finish: This cell was stopped")
    assert "There is no `x`" in result.message


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
    from grader.grading.job import JobResult
    from grader.grading.results import TestResult

    with pytest.raises(ValueError, match=re.escape(problem)):
        TestResult.from_dict(data)
    with pytest.raises(ValueError, match=re.escape(problem)):
        JobResult("s", "a", "a.ipynb", "graded", tests=[data])
    good = {**data, "points": 1, "max": 2, "status": "failed"}
    good.pop("point", None)
    typed = JobResult("s", "a", "a.ipynb", "graded", tests=[good]).tests[0]
    assert typed == TestResult.from_dict(typed.to_dict()) and typed.points == 1.0


# ------------------------------------------------------------------ feedback, CSV, progress

HIDDEN_CELL = 'check("f", f)\n### BEGIN HIDDEN TESTS\ncheck("f", f, hidden=True)\n### END HIDDEN TESTS\n'


def _result(tests, cells, status="graded"):
    nb = nbjson.new_notebook(cells)
    return JobResult("alice", A, f"{A}.ipynb", status, tests=tests,
                     manual=[{"id": "essay", "max": 2.0, "answered": True}], autograded=nb,
                     repairs=["The test cell `t1` was missing and has been put back."])


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


def test_a_passing_cell_is_summed_up_by_its_last_tick_line():
    from grader.learner.notebook import summary_line

    printed = (
        "✓ matmul_dot: all 12 cases pass; 3 bad inputs rejected with ValueError.\n"
        "  tried: 1×1, rectangular,\n    large values\n"
        "✓ matmul_dot: all 25 hidden cases pass.\n"
    )
    assert summary_line(printed) == "✓ matmul_dot: all 25 hidden cases pass."
    assert summary_line("done\n") == "done"
    assert summary_line("") == "passed"


def _display(data: dict) -> dict:
    return {"msg_type": "display_data", "content": {"data": data, "metadata": {}},
            "parent_header": {}, "header": {"msg_type": "display_data"}}


def _stream(text: str) -> dict:
    return {"msg_type": "stream", "content": {"name": "stdout", "text": text},
            "parent_header": {}, "header": {"msg_type": "stream"}}


def test_figures_count_apart_from_the_text_cap_and_have_a_cap_of_their_own():
    from grader.grading.kernel import _Outputs

    png = "iVBORw0KGgo" + "A" * 400_000  # a 400 kB figure, as the kernel sends it (base64)
    sink = _Outputs(cap=1000, image_cap=1_000_000)
    sink.add(_display({"image/png": png, "text/plain": "<Figure size 640x480 with 1 Axes>"}))
    sink.add(_stream("x" * 900))
    outputs = sink.finish()
    assert outputs[0]["data"]["image/png"] == png, "the figure is kept whole"
    assert not any("[output cut" in o.get("text", "") for o in outputs)

    sink.add(_stream("y" * 500))  # now the text is over its cap: cut, with a note
    sink.add(_display({"image/png": png}))
    sink.add(_display({"image/png": png}))  # the third figure is over the figures' cap
    outputs = sink.finish()
    texts = "".join(o.get("text", "") for o in outputs if o["output_type"] == "stream")
    assert "[output cut: this cell printed more than 1,000 characters]" in texts
    assert "[figure left out" in texts
    assert sum(1 for o in outputs if o["output_type"] == "display_data") == 2
    assert len(texts.replace("\n", "").split("[")[0]) <= 1000


def test_a_pair_of_results_is_narrowed_to_what_differs():
    import numpy as np

    from grader.learner.compare import FLOAT64
    from grader.learner.messages import note_text, noted_pair

    weights = np.full((2, 2, 3, 3), 1 / 3)
    wrong = weights.copy()
    wrong[1, 0, 2, 1] = 0.9
    output = np.arange(24.0).reshape(2, 3, 4)
    want, got, note = noted_pair((output, weights), (output, wrong), FLOAT64)
    assert "item 1, [1, 0] of the 2×2×3×3 float64 array:" in want and "item 0" not in want
    assert "item 1, [1, 0] of the 2×2×3×3 float64 array:" in got and "0.9" in got
    assert note_text(note) == "item 0: as expected"  # said once, by the message
    assert len(got.splitlines()) < 10
    params = {f"p{i}": np.ones(3) for i in range(6)}
    changed = {**params, "p2": np.zeros(3), "p4": np.zeros(3)}
    want, got, note = noted_pair(params, changed, FLOAT64)
    assert "'p2':" in got and "'p4':" not in got
    assert note_text(note) == "'p0', 'p1', 'p3', 'p5': as expected; also different: 'p4'"
    # values that are not tuples or dicts of one shape are shown whole
    shown = noted_pair(np.ones(2), np.zeros(3), FLOAT64)
    assert shown[1].count("\n") >= 1 and shown[2] == ([], [])


def test_a_check_verdict_has_a_known_status_and_an_incident_its_run():
    with pytest.raises(ValueError, match="'passd' is not one of"):
        CheckVerdict("passd", "✓")
    with pytest.raises(ValueError, match="only an incident, comes with the run"):
        CheckVerdict("incident")
    with pytest.raises(ValueError, match="only an incident, comes with the run"):
        CheckVerdict("failed", "no", run=CellRun(0, "error"))
    assert CheckVerdict("incident", run=CellRun(0, "timeout")).run.status == "timeout"
