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
    run = grade(course, tmp_path, "--out", tmp_path / "out", "--grader-wall", "0")
    assert run.returncode == 2 and "--grader-wall: must be positive" in run.stderr


def test_the_graders_own_wall_limit_reaches_every_job(monkeypatch, tmp_path):
    """``--grader-wall`` is the limit of each job ``grade`` and ``serve`` make, as the
    sandbox's limits are (what it does: tests/test_grading_watchdog.py)."""
    from grader import cli
    from grader.grading.classroom import batch, serve
    from grader.grading.notebook.watchdog import DEFAULT

    seen = {}
    monkeypatch.setattr(batch, "grade", lambda *a, **kw: seen.setdefault("grade", kw) and 0)
    monkeypatch.setattr(serve, "serve", lambda *a, **kw: seen.setdefault("serve", kw) and 0)
    cli.main(["grade", str(tmp_path), "--out", str(tmp_path / "out"), "--grader-wall", "7.5"])
    cli.main(["serve", "--once", "--out", str(tmp_path / "out")])
    assert seen["grade"]["grader_wall"] == 7.5 and seen["serve"]["grader_wall"] == DEFAULT
    from grader.grading.classroom.session import Assignment, GradingSession

    session = GradingSession.__new__(GradingSession)  # its jobs only: no course read, no sandbox
    session.course, session.grader_wall = {A: Assignment(A, {f"{A}.ipynb": ({}, {})})}, 7.5
    session.figures = "png"
    session.box, session.limits, session.scratch, session.fonts, session.kit = None, None, tmp_path, "", ""
    assert session.job("alice", A, f"{A}.ipynb", {}).grader_wall == 7.5


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


def _submitted(tmp_path, lesson) -> "Path":
    folder = tmp_path / "submitted" / "alice" / A
    folder.mkdir(parents=True)
    for name, data in lesson.files(lesson.honest()).items():
        (folder / name).write_bytes(data)
    return tmp_path / "submitted"


def test_without_bubblewrap_grading_refuses_and_says_what_none_means(course, tmp_path):
    empty = tmp_path / "bin"  # a PATH on which there is no bwrap
    empty.mkdir()
    submitted = _submitted(tmp_path, Lesson(A, ROOT))
    env = dict(os.environ, ATTENTION_COURSE_ROOT=str(course), PATH=str(empty))
    run = subprocess.run([sys.executable, "-m", "grader", "grade", str(submitted), "--out",
                          str(tmp_path / "out")], env=env, capture_output=True, text=True,
                         cwd=course, timeout=300)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "refusing to run submissions without a sandbox" in run.stderr
    assert "bubblewrap (bwrap) is not installed" in run.stderr
    assert "apt-get install bubblewrap" in run.stderr
    assert "--sandbox none" in run.stderr and "reference solutions" in run.stderr
    assert not (tmp_path / "out" / "grades.csv").exists()
    assert not (tmp_path / "out" / "results").exists()


def _break_solution(course):
    """The source notebook's matmul_dot returns zeros: a course that cannot prove itself."""
    path = course / "solutions" / A / f"{A}.ipynb"
    nb = json.loads(path.read_text())
    cell = next(c for c in nb["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id")
                == "matmul_dot")
    text = "".join(cell["source"])
    assert "C[i, j] = np.sum(A[i, :] * B[:, j])" in text
    cell["source"] = text.replace("C[i, j] = np.sum(A[i, :] * B[:, j])", "pass")
    path.write_text(json.dumps(nb))
    return "the source notebook must earn full marks, but its test test_matmul_dot got 0/1"


def _answer_the_release(course):
    """The released notebook holds the answer to matmul_rows: a release that gives it away."""
    lesson = Lesson(A, ROOT)
    path = course / "notebooks" / A / f"{A}.ipynb"
    nb = json.loads(path.read_text())
    cell = next(c for c in nb["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id")
                == "matmul_rows")
    cell["source"] = lesson.answers["matmul_rows"]
    path.write_text(json.dumps(nb))
    return "the released notebook must earn 0, but its test test_matmul_rows got 1/1"


@pytest.mark.slow
@pytest.mark.parametrize("damage", [_break_solution, _answer_the_release])
def test_a_broken_environment_stops_the_batch_and_grades_nobody(course, tmp_path, damage):
    from grading_corpus import sandboxed

    why = damage(course)
    submitted = _submitted(tmp_path, Lesson(A, ROOT))
    out = tmp_path / "out"
    run = grade(course, submitted, "--out", out, "--jobs", 2,
                *([] if sandboxed() else ["--sandbox", "none"]))
    assert run.returncode == 2, run.stdout + run.stderr
    assert "failed its proof, so nobody was graded" in run.stderr
    assert why in run.stderr, run.stderr
    assert not (out / "grades.csv").exists() and not (out / "results").exists()
    assert not (course / "autograded").exists()
    from nbgrader.api import Gradebook

    if (course / "gradebook.db").exists():
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "attention") as gb:
            assert gb.students == [] and all(not a.submissions for a in gb.assignments)


@pytest.mark.parametrize("args, message", [
    (["--student", "carol"], "no submission from carol (the students who submitted are alice)"),
    (["--assignment", "99_nowhere"], "no assignment 99_nowhere in this course"),
    (["--out", "{course}"], "holds the course itself"),
    (["--out", "{course}/solutions/out"], "inside the course's solutions/"),
])
def test_a_selection_or_out_that_cannot_work_is_an_error_that_says_so(course, tmp_path, args, message):
    submitted = _submitted(tmp_path, Lesson(A, ROOT))
    args = [a.replace("{course}", str(course)) for a in args]
    if "--out" not in args:
        args += ["--out", str(tmp_path / "out")]
    run = grade(course, submitted, *args)
    assert run.returncode == 2, run.stdout + run.stderr
    assert message in run.stderr, run.stderr
    assert not (tmp_path / "out" / "results").exists()


def test_late_settings_that_cannot_work_stop_grade_before_anybody_is_graded(course, tmp_path):
    with open(course / "nbgrader_config.py", "a") as config:
        config.write('\nc.LateSubmissionPlugin.penalty_method = "half"\n')
    run = grade(course, _submitted(tmp_path, Lesson(A, ROOT)), "--out", tmp_path / "out")
    assert run.returncode == 2 and "late-submission settings in nbgrader_config.py" in run.stderr
    assert "'half'" in run.stderr


def test_grades_rewrites_grades_csv_from_the_gradebook(course, tmp_path):
    env = dict(os.environ, ATTENTION_COURSE_ROOT=str(course))
    run = subprocess.run([sys.executable, "-m", "grader", "grades", "--out", str(tmp_path / "out")],
                         env=env, capture_output=True, text=True, cwd=course, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "0 row(s)" in run.stdout
    assert (tmp_path / "out" / "grades.csv").read_text().startswith("student,assignment,status,")
    run = subprocess.run([sys.executable, "-m", "grader", "grades", "--out", str(course)],
                         env=env, capture_output=True, text=True, cwd=course, timeout=300)
    assert run.returncode == 2 and "holds the course itself" in run.stderr
