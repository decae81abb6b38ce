"""``nbgrader generate_feedback`` makes the course's feedback pages.

``nbgrader_config.py`` sets ``c.GenerateFeedback.exporter_class`` to
:class:`FeedbackExporter`, so the command, formgrader's "Generate Feedback" button and
``grade`` itself all write the page of :func:`grader.grading.classroom.feedback.render`: each
test's name, points, status and the checker's message with its diagnosis, hidden tests
by name and message only, the points and comments given by hand, and the late penalty.
``nbgrader release_feedback`` and the student's ``fetch_feedback`` then carry that page.

What the checker said is not in the autograded notebook's cells alone: ``grade`` leaves
it beside the notebook, in ``.grading/{notebook}.json`` with the notebook's SHA-256, and
the page uses it only for the very notebook it was written with. A notebook graded some
other way (stock ``nbgrader autograde``) gets a page from the gradebook alone, which says
so. The scores always come from the gradebook, through nbgrader's ``GetGrades``.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import warnings
from pathlib import Path

from nbconvert.exporters import Exporter
from traitlets import Bool

from .feedback import Grades, render
from ..notebook.results import TestResult
from ..notebook.nbjson import nbgrader_meta
from ..notebook.repair import kind_of
from ..notebook.status import HAND_GRADED, CellKind

SIDECAR = ".grading"  # in an autograded folder: what grade said about each notebook


def sidecar_path(folder: Path, notebook: str) -> Path:
    return folder / SIDECAR / f"{notebook}.json"


def sidecar(result, notebook_bytes: bytes) -> str:
    """What a :class:`JobResult` said, bound to the autograded notebook it goes with."""
    from ..notebook.job import JobResult

    fields = {f.name: getattr(result, f.name) for f in dataclasses.fields(JobResult) if f.name != "autograded"}
    fields["tests"] = [t.to_dict() for t in result.tests]
    return json.dumps({"sha256": hashlib.sha256(notebook_bytes).hexdigest(), "result": fields},
                      indent=1, ensure_ascii=False) + "\n"


def _recorded(folder: Path, notebook: str):
    """The :class:`JobResult` ``grade`` left for ``folder/notebook.ipynb``, or None when
    there is none or it belongs to another version of the notebook."""
    from ..notebook.job import JobResult

    try:
        saved = json.loads(sidecar_path(folder, notebook).read_text(encoding="utf-8"))
        data = (folder / f"{notebook}.ipynb").read_bytes()
        if saved["sha256"] != hashlib.sha256(data).hexdigest():
            return None
        return JobResult(**saved["result"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _from_gradebook(nb, student, assignment, notebook):
    """A :class:`JobResult` made from the gradebook's scores (``GetGrades`` put them in
    the cells' metadata), for a notebook ``grade`` did not grade."""
    from ..notebook.job import JobResult

    tests, manual = [], []
    for cell in nb.cells:
        meta, kind = nbgrader_meta(cell), kind_of(cell)
        if kind == CellKind.TEST:
            score, top = float(meta.get("score") or 0.0), float(meta.get("points") or 0)
            tests.append(TestResult(meta.get("grade_id", ""), min(max(score, 0.0), top), top,
                                    "passed" if score >= top else "failed",
                                    "(no message: this notebook was not graded by "
                                    "`python -m grader grade`)"))
        elif kind in HAND_GRADED:
            manual.append({"id": meta.get("grade_id", ""), "max": float(meta.get("points") or 0),
                           "answered": True})
    return JobResult(student, assignment, f"{notebook}.ipynb", "graded", tests=tests, manual=manual,
                     notes=["This notebook was not graded by `python -m grader grade`, so only "
                            "its scores are shown, not what each test found."])


def gradebook_grades(gb, nb, student: str, assignment: str, notebook: str) -> Grades:
    """What the open gradebook ``gb`` holds for the notebook ``nb`` of a submission, as
    :func:`grades_of` reads it after ``GetGrades``: each graded or written cell's score
    (None for a written answer nobody has graded yet) and comment, the notebook's total
    less its late penalty, and how late it was."""
    from nbgrader.api import MissingEntry

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            held = gb.find_submission_notebook(notebook, assignment, student)
            penalty = float(held.late_submission_penalty or 0.0)
            grades = Grades({}, float(held.score) - penalty, float(held.max_score), penalty)
            for cell in nb.cells:
                meta = nbgrader_meta(cell)
                grade_id = meta.get("grade_id")
                if not grade_id or not (meta.get("solution") or meta.get("grade") or meta.get("task")):
                    continue
                entry = {"score": None, "comment": None}
                if meta.get("solution") or meta.get("task"):
                    entry["comment"] = gb.find_comment(grade_id, notebook, assignment, student).comment
                if meta.get("grade") or meta.get("task"):
                    grade = gb.find_grade(grade_id, notebook, assignment, student)
                    unmarked = grade.manual_score is None and grade.auto_score is None
                    entry["score"] = None if kind_of(cell) in HAND_GRADED and unmarked else grade.score
                grades.cells[grade_id] = entry
            try:
                sub = gb.find_submission(assignment, student)
                seconds, due = sub.total_seconds_late, sub.duedate
            except MissingEntry:
                seconds, due = 0, None
        finally:
            gb.db.rollback()  # end the read: the next writer may be another connection
    if seconds and due is not None:
        grades.late = _lateness(seconds, due, penalty)
    return grades


def _lateness(seconds: float, due, penalty: float) -> str:
    from .late import describe_lateness

    return (f"Submitted {describe_lateness(seconds)} after the due date "
            f"({due:%Y-%m-%d %H:%M} UTC): a late penalty of {penalty:g} "
            f"point{'s' if penalty != 1 else ''}.")


def page_of(result, gb, student: str, assignment: str, notebook: str) -> str:
    """The feedback page of one graded notebook, from its result in memory and what the
    open gradebook ``gb`` holds for it: the page ``nbgrader generate_feedback`` makes of
    the autograded notebook ``grade`` writes beside it."""
    return render(result, student, assignment, gradebook_grades(gb, result.autograded, student,
                                                                assignment, notebook))


def grades_of(nb, resources) -> Grades:
    """What the gradebook holds for the notebook: the scores ``GetGrades`` put in the
    cells' metadata (a written answer nobody has graded yet has none), the comments, the
    notebook's total less its late penalty, and how late it was."""
    from nbgrader.api import Gradebook, MissingEntry

    info = resources["nbgrader"]
    penalty = float(info.get("late_penalty") or 0.0)
    grades = Grades({}, float(info.get("score") or 0.0), float(info.get("max_score") or 0.0), penalty)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with Gradebook(info["db_url"]) as gb:
            for cell in nb.cells:
                meta = nbgrader_meta(cell)
                if "grade_id" not in meta or not ("score" in meta or "comment" in meta):
                    continue
                score = meta.get("score")
                if kind_of(cell) in HAND_GRADED:
                    try:
                        grade = gb.find_grade(meta["grade_id"], info["notebook"], info["assignment"],
                                              info["student"])
                        if grade.manual_score is None and grade.auto_score is None:
                            score = None
                    except MissingEntry:
                        pass
                grades.cells[meta["grade_id"]] = {"score": score, "comment": meta.get("comment")}
            try:
                sub = gb.find_submission(info["assignment"], info["student"])
                seconds, due = sub.total_seconds_late, sub.duedate
            except MissingEntry:
                seconds, due = 0, None
    if seconds and due is not None:
        grades.late = _lateness(seconds, due, penalty)
    return grades


class FeedbackExporter(Exporter):
    """An nbconvert exporter for ``nbgrader generate_feedback``: the course's page."""

    output_mimetype = "text/html"
    hidden_messages = Bool(True, help="Show a hidden test's message (the checker's words), not "
                           "only its name, points and result. ``python -m grader serve`` sets it "
                           "False: feedback on submit must not help map the hidden tests."
                           ).tag(config=True)

    def _file_extension_default(self):
        return ".html"

    def from_notebook_node(self, nb, resources=None, **kw):
        nb, resources = super().from_notebook_node(nb, resources, **kw)
        info = resources["nbgrader"]
        student, assignment, notebook = info["student"], info["assignment"], info["notebook"]
        folder = Path(resources.get("metadata", {}).get("path") or ".")
        result = _recorded(folder, notebook) or _from_gradebook(nb, student, assignment, notebook)
        result.autograded = nb
        return render(result, student, assignment, grades_of(nb, resources),
                      self.hidden_messages), resources


def page(folder: Path, student: str, assignment: str, notebook: str, db_url: str) -> str:
    """The feedback page of ``folder/notebook.ipynb`` (an autograded notebook), made as
    ``nbgrader generate_feedback`` makes it: ``GetGrades``, then :class:`FeedbackExporter`."""
    from nbgrader.preprocessors import GetGrades

    exporter = FeedbackExporter()
    exporter.register_preprocessor(GetGrades, enabled=True)
    resources = {"nbgrader": {"student": student, "assignment": assignment, "notebook": notebook,
                              "db_url": db_url}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        text, _ = exporter.from_filename(str(folder / f"{notebook}.ipynb"), resources=resources)
    return text
