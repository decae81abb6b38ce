"""``grades.csv``, written from the gradebook: the one place scores are kept.

After every ``grade`` run (and on ``python -m grader grades``) the file is written anew
from the gradebook, so it holds what formgrader holds: the points given by hand, a score
changed by a person, the late penalty, and every earlier run's rows (a partial regrade
replaces only the rows it graded). There is a row for every student in the gradebook and
every assignment somebody submitted, "not submitted" included.

Columns: ``student``, ``assignment``, ``status`` (``graded``; ``missing``: no readable
notebook; ``failed``: the grader could not grade it; ``not submitted``), ``submitted_at``
(UTC), ``auto`` (the tests' points), ``manual`` (points given by hand; empty while some
written answer is not graded), ``late_penalty``, ``total`` (auto + manual - late_penalty,
what ``nbgrader export`` calls ``score``), ``max``, ``hand_grading`` (``to do``,
``review``, ``done`` or empty), ``look_at`` (why a person should look: from the result in
memory for a submission this run graded, from an earlier run's results JSON for the others),
``integrity``; then one column per question, ``NN.name``: an exercise's
visible and hidden tests together, or a written answer, for the assignments in the file
only.

No cell reaches a spreadsheet as a formula (OWASP, "CSV Injection"): a text cell that
starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return (or their full-width
forms, or any of them after spaces) gets a single quote in front, and the csv module
quotes every cell that holds a separator, a quote or a line break. A student id such as
``@SUM(1)`` is written ``'@SUM(1)``. The numbers the grader writes itself (points, late
penalty, total, max) are left as numbers, a negative total included: they are made here
from floats, never from a submission's text.
"""
from __future__ import annotations

import csv
import io
import json
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from ..notebook.nbjson import nbgrader_meta
from ..notebook.repair import kind_of
from ..notebook.status import HAND_GRADED, CellKind

COLUMNS = ["student", "assignment", "status", "submitted_at", "auto", "manual", "late_penalty", "total",
           "max", "hand_grading", "look_at", "integrity"]


@dataclass
class Question:
    name: str  # the answer cell's grade_id (or the test's, without one)
    notebook: str  # the notebook's name without .ipynb
    cells: list[str] = field(default_factory=list)  # the graded cells' grade_ids


def questions(notebooks: dict[str, dict]) -> list[Question]:
    """An assignment's questions, from its source notebooks (file name -> JSON): each
    answer cell with the test cells after it, and each written answer."""
    out = []
    for filename, nb in notebooks.items():
        stem, current = Path(filename).stem, None
        for cell in nb["cells"]:
            kind, gid = kind_of(cell), nbgrader_meta(cell).get("grade_id")
            if not gid:
                continue
            if kind == CellKind.ANSWER:
                current = Question(gid, stem)
            elif kind == CellKind.TEST:
                if current is None:
                    current = Question(gid, stem)
                if current not in out:
                    out.append(current)
                current.cells.append(gid)
            elif kind in HAND_GRADED:
                out.append(Question(gid, stem, [gid]))
                current = None
    return out


def _prefixes(names: list[str]) -> dict[str, str]:
    """``01_matmul_views`` -> ``01`` when that number is the assignment's alone."""
    short = {n: n.split("_")[0] for n in names}
    counts = {s: list(short.values()).count(s) for s in short.values()}
    return {n: (s if counts[s] == 1 and s != n else n) for n, s in short.items()}


def submission_numbers(sub) -> dict:
    """An nbgrader ``SubmittedAssignment``'s numbers: ``auto``, ``manual`` (None while a
    written answer is not graded), ``pending``, ``flagged``, ``late_penalty``, ``total``,
    ``max``, ``seconds_late``, and ``scores`` (notebook -> grade_id -> score, None for a
    written answer not graded yet)."""
    auto = manual = 0.0
    pending = written_any = False
    scores = {}
    for nb in sub.notebooks:
        written = {c.name for c in nb.notebook.solution_cells} | {c.name for c in nb.notebook.task_cells}
        mine = scores.setdefault(nb.name, {})
        for grade in nb.grades:
            if grade.name in written:
                written_any = True
                if grade.manual_score is None and grade.auto_score is None:
                    pending = True
                    mine[grade.name] = None
                    continue
                manual += grade.score
            else:
                auto += grade.score
            mine[grade.name] = grade.score
    penalty = float(sub.late_submission_penalty or 0.0)
    return {"auto": auto, "manual": None if pending else (manual if written_any else 0.0),
            "pending": pending, "written": written_any, "flagged": bool(sub.needs_manual_grade),
            "late_penalty": penalty, "total": float(sub.score) - penalty, "max": float(sub.max_score),
            "seconds_late": float(sub.total_seconds_late or 0.0), "scores": scores,
            "timestamp": sub.timestamp, "duedate": sub.duedate}


class Number(str):
    """A cell the grader formatted from a number: a spreadsheet may read it as one."""


def _num(value) -> str:
    return "" if value is None else Number(f"{float(value):g}")


FORMULA = tuple("=+-@\t\r＝＋－＠")  # what a spreadsheet may start a formula with
NUMBER = re.compile(r"-?\d+(\.\d+)?(e[+-]?\d+)?|-?inf|nan")


def neutral(cell) -> str:
    """``cell`` as a CSV cell that no spreadsheet runs as a formula (OWASP's rule: a
    single quote before a leading ``=``, ``+``, ``-``, ``@``, tab or carriage return). Only
    a :class:`Number` the grader made itself may start with ``-``."""
    text = "" if cell is None else str(cell)
    if isinstance(cell, Number) and NUMBER.fullmatch(text):
        return text
    if text.startswith(FORMULA) or text.lstrip(" \n\u00a0\u3000").startswith(FORMULA):
        return "'" + text
    return text


def _hand(numbers: dict) -> str:
    if numbers["pending"]:
        return "to do"
    if numbers["flagged"]:
        return "review"
    return "done" if numbers["written"] else ""


def _said(results: Path | None, fresh: dict, student: str, assignment: str) -> dict:
    """What a run said of a submission beyond its scores (``status``, ``look_at``,
    ``integrity``): this run's result in memory, or an earlier run's results JSON."""
    result = fresh.get((student, assignment))
    if result is not None:
        return {"status": result.status, "look_at": result.look_at(), "integrity": result.integrity}
    if results is None:
        return {}
    try:
        return json.loads((results / student / f"{assignment}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


class _Neutral:
    """A csv writer whose every cell goes through :func:`neutral`."""

    def __init__(self, writer):
        self.writer = writer

    def writerow(self, row) -> None:
        self.writer.writerow([neutral(c) for c in row])


def grades_csv(db_url: str, course_id: str, course: dict[str, dict[str, dict]],
               results: Path | None = None, fresh: dict | None = None) -> str:
    """The text of grades.csv, from the gradebook at ``db_url``; ``course`` maps each
    assignment to its source notebooks (file name -> JSON); what says why a person should
    look at a submission is its result in ``fresh`` (by key, a SubmissionResult of this
    run), else its results JSON in ``results`` (written by an earlier run)."""
    fresh = fresh or {}
    from nbgrader.api import Gradebook, MissingEntry

    from ...course import ensure_scripts_on_path

    ensure_scripts_on_path()  # nbgrader runs `alembic` to open a gradebook
    out = io.StringIO()
    writer = _Neutral(csv.writer(out, lineterminator="\n"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with Gradebook(db_url, course_id) as gb:
            names = sorted(a.name for a in gb.assignments if a.name in course and a.submissions)
            asked = {name: questions(course[name]) for name in names}
            prefix = _prefixes(names)
            columns = [(name, q) for name in names for q in asked[name]]
            writer.writerow([*COLUMNS, *(f"{prefix[name]}.{q.name}" for name, q in columns)])
            for student in sorted(s.id for s in gb.students):
                for name in names:
                    try:
                        sub = gb.find_submission(name, student)
                    except MissingEntry:  # or handed in, but the grader could not grade it
                        record = _said(results, fresh, student, name)
                        top = gb.find_assignment(name).max_score
                        writer.writerow([student, name, record.get("status", "not submitted"), "", "",
                                         "", "", Number("0"), _num(top), "", "; ".join(record.get("look_at", [])),
                                         "", *([""] * len(columns))])
                        continue
                    numbers = submission_numbers(sub)
                    record = _said(results, fresh, student, name)
                    when = numbers["timestamp"]
                    row = [student, name, record.get("status", "graded"),
                           f"{when:%Y-%m-%d %H:%M:%S} UTC" if when else "", _num(numbers["auto"]),
                           _num(numbers["manual"]), _num(numbers["late_penalty"]), _num(numbers["total"]),
                           _num(numbers["max"]), _hand(numbers), "; ".join(record.get("look_at", [])),
                           " | ".join(record.get("integrity", []))]
                    for asg, q in columns:
                        if asg != name:
                            row.append("")
                            continue
                        got = [numbers["scores"].get(q.notebook, {}).get(c) for c in q.cells]
                        row.append("" if any(g is None for g in got) else _num(sum(got)))
                    writer.writerow(row)
    return out.getvalue()


def class_status(db_url: str, course_id: str, assignments: list[str]) -> dict[str, dict[str, list[str]]]:
    """Per assignment: the gradebook's students who have not submitted it, and those
    with a written answer nobody has graded yet."""
    from nbgrader.api import Gradebook, MissingEntry

    from ...course import ensure_scripts_on_path

    ensure_scripts_on_path()
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with Gradebook(db_url, course_id) as gb:
            students = sorted(s.id for s in gb.students)
            for name in assignments:
                absent, by_hand = [], []
                for student in students:
                    try:
                        sub = gb.find_submission(name, student)
                    except MissingEntry:
                        absent.append(student)
                        continue
                    if submission_numbers(sub)["pending"]:
                        by_hand.append(student)
                out[name] = {"not submitted": absent, "to grade by hand": by_hand}
    return out
