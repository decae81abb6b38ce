"""Record results in the course's nbgrader gradebook, so formgrader shows them.

Only the grading process writes here, one submission at a time; student code never sees
the gradebook. Assignments are entered with the preprocessors ``nbgrader
generate_assignment`` uses for it (``notebooks/`` is never touched), and auto scores are
written as nbgrader's autograder writes them: a manual score a grader already gave is
kept, and flagged for review.
"""
from __future__ import annotations

import logging
import warnings
from pathlib import Path

from ...course import ensure_scripts_on_path, nbgrader_config
from ..notebook.nbjson import dumps


class GradebookError(RuntimeError):
    pass


DEFAULT_IGNORE = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback"]


class Recorder:
    """The course's gradebook and autograded folder, as ``nbgrader_config.py`` sets them.
    Constructing one is cheap; nbgrader itself is imported only to write."""

    def __init__(self, root: Path, db_url: str | None = None):
        self.root = root
        self.config = nbgrader_config(root)
        cd = self.config.CourseDirectory
        self.db_url = db_url or cd.get("db_url") or f"sqlite:///{root / 'gradebook.db'}"
        self.course_id = cd.get("course_id") or "default_course"
        self.ignore = list(cd.get("ignore") or DEFAULT_IGNORE)
        self.autograded_root = root / (cd.get("autograded_directory") or "autograded")
        self.gb = None

    def autograded_dir(self, student: str, assignment: str) -> Path:
        return self.autograded_root / student / assignment

    def prepare(self, course: dict) -> None:
        """Enter (or update) each assignment's notebooks and cells in the gradebook, with
        the preprocessors ``nbgrader generate_assignment`` uses to do it."""
        import json

        import nbformat
        from nbgrader.api import Gradebook
        from nbgrader.preprocessors import ClearOutput, ClearSolutions, ComputeChecksums, LockCells, SaveCells

        ensure_scripts_on_path()
        for name, assignment in course.items():
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    with Gradebook(self.db_url, self.course_id) as gb:
                        gb.update_or_create_assignment(name)
                    for filename, (source, _) in assignment.notebooks.items():
                        # reads, not from_dict: a notebook saved by JupyterLab has its
                        # sources as lists of lines, which nbgrader's steps cannot take
                        nb = nbformat.reads(json.dumps(source), as_version=4)
                        resources = {"nbgrader": {"db_url": self.db_url, "assignment": name,
                                                  "notebook": Path(filename).stem}}
                        for step in (LockCells, ClearSolutions, ClearOutput, ComputeChecksums, SaveCells):
                            processor = step(config=self.config)
                            processor.log.setLevel(logging.CRITICAL)
                            nb, resources = processor.preprocess(nb, resources)
            except Exception as exc:  # noqa: BLE001 (nbgrader and SQLAlchemy raise many kinds)
                raise GradebookError(
                    f"could not enter {name} into the gradebook at {self.db_url}: {exc}. If "
                    f"{name} already has grades and its graded cells changed since, nbgrader "
                    "refuses to change them; use a new gradebook (--db) or remove the old "
                    "submissions first") from None

    def open(self) -> None:
        from nbgrader.api import Gradebook

        ensure_scripts_on_path()
        try:
            self.gb = Gradebook(self.db_url, self.course_id)
        except Exception as exc:  # noqa: BLE001 (SQLAlchemy raises many kinds)
            raise GradebookError(f"cannot open the gradebook at {self.db_url}: {exc}") from exc

    def close(self) -> None:
        if self.gb is not None:
            self.gb.close()
            self.gb = None

    def record(self, student: str, assignment: str, results, timestamp: str | None) -> None:
        """Write one submission's results (a list of :class:`JobResult`, one per notebook)."""
        gb = self.gb
        with warnings.catch_warnings():
            # nbgrader's API trips SQLAlchemy's autoflush warnings; they change nothing here.
            warnings.simplefilter("ignore")
            self._record(gb, student, assignment, results, timestamp)

    @staticmethod
    def _record(gb, student, assignment, results, timestamp) -> None:
        from nbgrader.api import MissingEntry

        try:
            gb.update_or_create_student(student)
            extra = {"timestamp": timestamp} if timestamp else {}
            try:
                gb.update_or_create_submission(assignment, student, **extra)
            except Exception:  # noqa: BLE001 (an unreadable timestamp.txt)
                gb.db.rollback()
                gb.update_or_create_submission(assignment, student)
            for res in results:
                notebook = Path(res.notebook).stem
                for test in res.tests:
                    grade = gb.find_grade(test.id, notebook, assignment, student)
                    grade.auto_score = test.points
                    grade.needs_manual_grade = grade.manual_score is not None
                for cell in res.manual:
                    try:
                        grade = gb.find_grade(cell["id"], notebook, assignment, student)
                    except MissingEntry:  # a task cell: nbgrader keeps no grade row for it here
                        continue
                    grade.auto_score = None if cell["answered"] else 0.0
                    grade.needs_manual_grade = bool(cell["answered"]) or grade.manual_score is not None
                    try:
                        comment = gb.find_comment(cell["id"], notebook, assignment, student)
                        comment.auto_comment = None if cell["answered"] else "No response."
                    except MissingEntry:
                        pass
                for cell in res.answers:
                    comment = gb.find_comment(cell["id"], notebook, assignment, student)
                    comment.auto_comment = None if cell["answered"] else "No response."
            gb.db.commit()
        except MissingEntry as exc:
            gb.db.rollback()
            raise GradebookError(f"the gradebook does not match {assignment}: {exc}") from exc
        except Exception as exc:  # noqa: BLE001
            gb.db.rollback()
            raise GradebookError(f"could not record {student}/{assignment}: {exc}") from exc

    def write_autograded(self, student: str, assignment: str, results, files: dict[str, bytes],
                         course_files: dict[str, bytes], timestamp: str | None, secret: bytes) -> list[str]:
        """The autograded folder (:mod:`grader.grading.classroom.autograded`): the submission's files,
        the exchange's, the autograded notebooks (with all outputs, for formgrader) and what
        the checker said of each; return notes on files that could not be kept."""
        from .autograded import write_folder
        from .nbfeedback import sidecar

        notebooks, sidecars = {}, {}
        for res in results:
            if res.autograded is not None:
                # a lone surrogate in some output becomes its JSON escape, never an error
                data = dumps(res.autograded).encode("utf-8", "backslashreplace")
                notebooks[res.notebook] = data
                sidecars[Path(res.notebook).stem] = sidecar(res, data)
        return write_folder(self.autograded_dir(student, assignment), files, course_files, timestamp,
                            secret, notebooks, sidecars)

    def totals(self, student: str, assignment: str) -> dict:
        """The gradebook's numbers for one submission: points given by hand (None while
        some are not given), late penalty, total (less the penalty) and maximum."""
        from .grades import submission_numbers

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                sub = self.gb.find_submission(assignment, student)
                return submission_numbers(sub)
            finally:
                self.gb.db.rollback()  # end the read: the next writer may be another connection
