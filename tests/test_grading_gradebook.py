"""What goes through the nbgrader gradebook, without kernels: results recorded as
``grade`` records them, grades.csv written from the gradebook, nbgrader's late penalty,
and the feedback page made from the autograded folder as ``generate_feedback`` makes it."""
from __future__ import annotations

import csv
import datetime as dt
import io
import json
import shutil
import warnings

import pytest

from conftest import ROOT
from grader.grading.notebook import nbjson
from grader.grading.classroom.feedback import Grades, render
from grader.grading.notebook.job import JobResult

A = "01_matmul_views"
ESSAY = "free_text_readings"


@pytest.fixture(scope="module")
def lesson():
    from grading_corpus import Lesson

    return Lesson(A, ROOT)


def _course(base, config_extra=""):
    course = base / "course"
    for name in ("solutions", "notebooks"):
        shutil.copytree(ROOT / name / A, course / name / A)
    (course / "nbgrader_config.py").write_text((ROOT / "nbgrader_config.py").read_text() + config_extra)
    return course


def _result(lesson, student, passed: int, essay: bool) -> JobResult:
    """A graded notebook whose first ``passed`` tests passed."""
    tests = [{"id": gid, "points": pts if i < passed else 0.0, "max": pts,
              "status": "passed" if i < passed else "failed", "message": f"message of {gid}"}
             for i, (gid, (pts, _)) in enumerate(lesson.tests.items())]
    nb = nbjson.from_dict(lesson.notebook({ESSAY: "My answer."} if essay else {}))
    return JobResult(student, A, f"{A}.ipynb", "graded", tests=tests,
                     manual=[{"id": ESSAY, "max": 2.0, "answered": essay}], autograded=nb,
                     notes=[f"note for {student}"])


class Book:
    pass


@pytest.fixture(scope="module")
def book(tmp_path_factory, lesson):
    """A gradebook with alice (all passed, an essay), bob (3 tests, no essay), carol (on
    the roster, nothing submitted), bob late under penalty_method "zero"."""
    from grader.grading.classroom.session import load_course
    from grader.grading.classroom.gradebook import Recorder
    from grader.grading.classroom.late import LatePolicy

    b = Book()
    b.course = _course(tmp_path_factory.mktemp("book"), '\nc.LateSubmissionPlugin.penalty_method = "zero"\n')
    b.recorder = rec = Recorder(b.course)
    b.data = load_course(b.course, rec.ignore)
    rec.prepare(b.data)
    rec.open()
    due = dt.datetime(2025, 3, 1, 12, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rec.gb.update_or_create_assignment(A, duedate=due)
        for s in ("alice", "bob", "carol"):
            rec.gb.update_or_create_student(s)
    b.late = LatePolicy(rec.config)
    b.results = {"alice": _result(lesson, "alice", 99, True), "bob": _result(lesson, "bob", 3, False)}
    times = {"alice": "2025-03-01 11:00:00 UTC", "bob": "2025-03-03 12:00:00 UTC"}
    for student, res in b.results.items():
        rec.record(student, A, [res], times[student])
        b.late.apply(rec.db_url, student, A, [A])
        rec.write_autograded(student, A, [res], {"data.csv": b"1"}, {}, times[student], b"s" * 128)
    yield b
    rec.close()


def _csv(book, results=None) -> dict[str, dict]:
    from grader.grading.classroom.grades import grades_csv
    from grader.grading.classroom.report import course_sources

    text = grades_csv(book.recorder.db_url, "attention", course_sources(book.data), results)
    return {r["student"]: r for r in csv.DictReader(io.StringIO(text))}


def test_grades_csv_has_a_row_per_student_from_the_gradebook(book, lesson):
    rows = _csv(book)
    assert list(rows) == ["alice", "bob", "carol"]
    total = lesson.total()
    alice, bob, carol = rows["alice"], rows["bob"], rows["carol"]
    assert (alice["auto"], alice["manual"], alice["hand_grading"], alice["total"], alice["max"]) == \
        (f"{total:g}", "", "to do", f"{total:g}", f"{total + 2:g}")
    assert alice[f"01.{ESSAY}"] == "", "a written answer nobody graded is not a 0"
    assert (bob["auto"], bob["manual"], bob["late_penalty"], bob["total"]) == ("3", "0", "3", "0")
    assert bob["submitted_at"] == "2025-03-03 12:00:00 UTC" and bob[f"01.{ESSAY}"] == "0"
    assert bob["01.matmul_dot"] == "2" and bob["01.matmul_rows"] == "1" and bob["01.matmul_cols"] == "0"
    assert carol["status"] == "not submitted" and carol["total"] == "0" and carol["01.matmul_dot"] == ""


def test_a_submission_the_grader_could_not_grade_is_not_called_not_submitted(book, tmp_path):
    (tmp_path / "carol").mkdir()
    (tmp_path / "carol" / f"{A}.json").write_text(json.dumps(
        {"status": "failed", "look_at": ["not graded: the worker died twice"]}))
    carol = _csv(book, tmp_path)["carol"]
    assert (carol["status"], carol["look_at"]) == ("failed", "not graded: the worker died twice")


def test_grades_csv_takes_this_runs_results_from_memory_and_only_others_from_json(book, tmp_path):
    """A run's own results are never read back from the JSON it wrote: what its results in
    memory say wins; an earlier run's JSON speaks for the submissions this run left alone."""
    from grader.grading.classroom.grades import grades_csv
    from grader.grading.classroom.report import course_sources
    from grader.grading.notebook.choice import UNTOUCHED
    from grader.grading.classroom.submission_result import SubmissionResult

    for student in ("alice", "bob"):
        (tmp_path / student).mkdir()
        (tmp_path / student / f"{A}.json").write_text(json.dumps(
            {"status": "graded", "look_at": [f"from {student}'s old JSON"], "integrity": ["old"]}))
    fresh = SubmissionResult("alice", A, (book.results["alice"],), "bwrap", None, (UNTOUCHED,))
    text = grades_csv(book.recorder.db_url, "attention", course_sources(book.data), tmp_path,
                      {fresh.key: fresh})
    rows = {r["student"]: r for r in csv.DictReader(io.StringIO(text))}
    assert (rows["alice"]["look_at"], rows["alice"]["integrity"]) == ("nothing answered", "")
    assert (rows["bob"]["look_at"], rows["bob"]["integrity"]) == ("from bob's old JSON", "old")


def test_a_manual_grade_counts_and_a_later_record_of_another_student_keeps_it(book, lesson):
    gb = book.recorder.gb
    grade = gb.find_grade(ESSAY, A, A, "alice")
    grade.manual_score, grade.needs_manual_grade = 1.5, False
    gb.db.commit()
    book.recorder.record("bob", A, [book.results["bob"]], "2025-03-03 12:00:00 UTC")
    rows = _csv(book)
    assert (rows["alice"]["manual"], rows["alice"]["hand_grading"]) == ("1.5", "done")
    assert rows["alice"]["total"] == f"{lesson.total() + 1.5:g}"
    assert rows["bob"]["late_penalty"] == "3", "the penalty stays until the next late step"
    numbers = book.recorder.totals("alice", A)
    assert (numbers["manual"], numbers["total"], numbers["late_penalty"]) == (1.5, lesson.total() + 1.5, 0.0)


def test_the_late_penalty_is_nbgraders_own(book):
    from nbgrader.api import Gradebook

    with Gradebook(book.recorder.db_url, "attention") as gb:
        bob = gb.find_submission(A, "bob")
        assert bob.total_seconds_late == 2 * 86400 and bob.late_submission_penalty == 3
        assert gb.find_submission(A, "alice").late_submission_penalty == 0


@pytest.mark.parametrize("setting, phrase", [
    ('c.LateSubmissionPlugin.penalty_method = "zeros"', "penalty_method"),
    ('c.AssignLatePenalties.plugin_class = "nowhere.Plugin"', "nowhere"),
])
def test_late_settings_that_cannot_work_are_an_error_that_names_them(tmp_path, setting, phrase):
    from grader.course import nbgrader_config
    from grader.grading.classroom.late import LateConfigError, LatePolicy

    course = _course(tmp_path, "\n" + setting + "\n")
    with pytest.raises(LateConfigError, match=phrase) as caught:
        LatePolicy(nbgrader_config(course))
    assert "nbgrader_config.py" in str(caught.value)


def test_grade_makes_the_page_from_the_result_in_memory_as_generate_feedback_makes_it(book):
    """``grade`` reads back nothing it wrote: its page comes from the result in memory and
    the gradebook, and is the very page ``nbgrader generate_feedback`` makes of the
    autograded folder (late penalty, total, each test's message and points)."""
    from grader.grading.classroom.nbfeedback import page, page_of

    for student in ("alice", "bob"):
        folder = book.recorder.autograded_dir(student, A)
        from_disk = page(folder, student, A, A, book.recorder.db_url)
        in_memory = page_of(book.results[student], book.recorder.gb, student, A, A)
        assert in_memory == from_disk, student
    assert "Submitted 2 days after the due date" in in_memory and "<b>0 / 17</b>" in in_memory
    # what the gradebook says wins over the result: a score changed by a person shows
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = book.results["bob"].tests[0].id
        grade = book.recorder.gb.find_grade(first, A, A, "bob")
        grade.manual_score = 0.25
        book.recorder.gb.db.commit()
        try:
            changed = page_of(book.results["bob"], book.recorder.gb, "bob", A, A)
            assert "set by your instructor" in changed and changed != in_memory
        finally:
            grade.manual_score = None
            book.recorder.gb.db.commit()


def test_the_feedback_page_is_made_from_the_autograded_folder_and_the_gradebook(book):
    from grader.grading.classroom.nbfeedback import page

    folder = book.recorder.autograded_dir("bob", A)
    text = page(folder, "bob", A, A, book.recorder.db_url)
    assert "message of test_matmul_cols" in text and "note for bob" in text
    assert "Late penalty" in text and "Submitted 2 days after the due date" in text
    assert "<b>0 / 17</b>" in text
    # the notebook changed since grade wrote it: its recorded messages are not used
    path = folder / f"{A}.ipynb"
    path.write_text(path.read_text() + " ")
    text = page(folder, "bob", A, A, book.recorder.db_url)
    assert "message of test_matmul_cols" not in text
    assert "was not graded by `python -m grader grade`" in text


def test_what_the_gradebook_holds_shows_on_the_page(lesson):
    res = _result(lesson, "alice", 1, True)
    first = res.tests[0].id
    grades = Grades({first: {"score": 0.5, "comment": None}, ESSAY: {"score": None, "comment": "See me."}},
                    score=0.5, max_score=17.0, late_penalty=0.0)
    page = render(res, "alice", A, grades)
    assert "0.5 / 1 (set by your instructor; the tests gave 1)" in page
    assert "not graded yet (2 points)" in page and "See me." in page
    assert "Late penalty" not in page
    grades.cells[ESSAY]["score"], grades.late_penalty, grades.late = 2.0, 2.5, "Submitted 3 h after the due date"
    page = render(res, "alice", A, grades)
    assert "2 / 2 points" in page and "−2.5" in page and "Submitted 3 h after" in page


def test_the_course_config_makes_generate_feedback_use_the_course_page():
    from nbgrader.converters import GenerateFeedback
    from nbgrader.coursedir import CourseDirectory

    from grader.course import nbgrader_config
    from grader.grading.classroom.nbfeedback import FeedbackExporter

    config = nbgrader_config(ROOT)
    assert GenerateFeedback(coursedir=CourseDirectory(config=config), config=config).exporter_class \
        is FeedbackExporter
    assert json.dumps(config.LateSubmissionPlugin.penalty_method) == '"none"'


def test_a_source_notebook_saved_by_jupyterlab_enters_the_gradebook(tmp_path):
    """JupyterLab saves sources as lists of lines (nbformat's layout on disk)."""
    import nbformat

    from grader.grading.classroom.session import load_course
    from grader.grading.classroom.gradebook import Recorder

    course = _course(tmp_path)
    path = course / "solutions" / A / f"{A}.ipynb"
    nbformat.write(nbformat.read(path, as_version=4), path)
    assert isinstance(json.loads(path.read_text())["cells"][0]["source"], list)
    recorder = Recorder(course)
    loaded = load_course(course, recorder.ignore)
    source, _ = loaded[A].notebooks[f"{A}.ipynb"]
    assert all(isinstance(c["source"], str) for c in source["cells"]), "what grading reads is joined"
    recorder.prepare(loaded)
