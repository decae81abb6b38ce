"""Reading the submissions (grader.grading.classroom.submissions), before any student code runs:
a folder or a zip of them, with odd entries, names and timestamps, and choosing the
students and assignments to grade."""
import os
import zipfile
from pathlib import Path

import pytest

from grader.grading.classroom.submissions import SubmissionsError, read_submissions

A = "01_matmul_views"


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
    from grader.grading.classroom.submissions import name_problem

    assert (name_problem(name) == "") is ok, name_problem(name)


def test_unusable_student_folders_are_skipped_with_a_warning(tmp_path):
    _tree(tmp_path / "submitted", {f"alice/{A}/{A}.ipynb": b"{}", f"a b*/{A}/{A}.ipynb": b"{}"})
    subs, warnings = read_submissions(tmp_path / "submitted", [A])
    assert [s.student for s in subs] == ["alice"]
    assert warnings == ["skipped the student folder 'a b*': not usable as a student id (it holds a "
                        "separator, space, quote, glob or control character)"]


def test_a_submission_reads_at_most_so_many_files_and_says_so(tmp_path, monkeypatch):
    from grader.grading.classroom import submissions

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
    from grader.grading.classroom.submissions import read_timestamp

    got, problem = read_timestamp(text)
    assert got == time
    assert bool(problem) == (time is None and bool(text.strip())), problem


def test_selecting_students_and_assignments_names_what_is_not_there(tmp_path):
    from grader.grading.classroom.submissions import select

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
