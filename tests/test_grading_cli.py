"""``python -m grader grade`` as instructors and services call it: its exit status and
messages when it cannot work, a zip of submissions, and the fallback without bubblewrap."""
import json
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from conftest import ROOT
from grading_corpus import Lesson

A = "01_matmul_views"


@pytest.fixture
def course(tmp_path):
    copy = tmp_path / "course"
    copy.mkdir()
    for name in ("solutions", "notebooks"):
        shutil.copytree(ROOT / name, copy / name)
    shutil.copy(ROOT / "nbgrader_config.py", copy)
    return copy


def grade(course, *args, timeout=600):
    env = dict(os.environ, ATTENTION_COURSE_ROOT=str(course))
    return subprocess.run([sys.executable, "-m", "grader", "grade", *map(str, args)], env=env,
                          capture_output=True, text=True, cwd=course, timeout=timeout)


def test_a_missing_input_is_an_error_that_says_so(course, tmp_path):
    run = grade(course, tmp_path / "nowhere", "--out", tmp_path / "out")
    assert run.returncode == 2
    assert "does not exist" in run.stderr


def test_a_file_that_is_not_a_zip_is_an_error_that_says_so(course, tmp_path):
    (tmp_path / "grades.txt").write_text("not a zip")
    run = grade(course, tmp_path / "grades.txt", "--out", tmp_path / "out")
    assert run.returncode == 2 and "not a zip file" in run.stderr


def test_a_course_without_its_release_is_an_error_that_says_so(course, tmp_path):
    shutil.rmtree(course / "notebooks")
    (tmp_path / "submitted" / "alice" / A).mkdir(parents=True)
    run = grade(course, tmp_path / "submitted", "--out", tmp_path / "out")
    assert run.returncode == 2 and "python -m grader release" in run.stderr


def test_bad_options_are_refused(course, tmp_path):
    run = grade(course, tmp_path, "--out", tmp_path / "out", "--jobs", "0")
    assert run.returncode == 2 and "must be positive" in run.stderr


@pytest.mark.slow
def test_a_zip_graded_without_a_sandbox_says_it_is_not_isolated(course, tmp_path):
    lesson = Lesson(A, ROOT)
    archive = tmp_path / "class.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for name, data in lesson.files(lesson.honest()).items():
            z.writestr(f"submitted/alice/{A}/{name}", data)
        z.writestr(f"submitted/alice/99_elsewhere/x.ipynb", "{}")
    out = tmp_path / "out"
    run = grade(course, archive, "--out", out, "--jobs", 1, "--sandbox", "none")
    assert run.returncode == 0, run.stderr
    assert "Sandbox: NOT isolated (--sandbox none was given)" in run.stdout
    assert "skipped alice/99_elsewhere: not an assignment of this course" in run.stdout
    result = json.loads((out / "results" / "alice" / f"{A}.json").read_text())
    assert result["sandbox"] == "none" and result["score"] == lesson.total() == result["max"]
    assert (course / "autograded" / "alice" / A / f"{A}.ipynb").is_file()
    assert (course / "gradebook.db").is_file()
