"""Points, status and message for each test cell of an executed notebook.

A test cell earns its points when it runs without an error (or the fraction it prints as
its last value, nbgrader's partial credit). Its status is one of

* ``passed``: it ran without an error;
* ``failed``: a check rejected the answer (an ``AssertionError``);
* ``error``: another exception, or the kernel died while it ran;
* ``timeout``: it, or the answer it tests, ran past the time limit;
* ``memory``: it, or the answer it tests, ran out of memory;
* ``missing``: there was no readable notebook to grade.

When the answer cell a test depends on was stopped (timeout, memory, a dead kernel), the
test's message says so first: the learner sees the cause, not only a ``NameError``.
"""
from __future__ import annotations

import re

from ..run_notebook import summary_line
from .kernel import CellRun
from .repair import Plan, nbgrader_meta

STATUSES = ("passed", "failed", "error", "timeout", "memory", "missing")
INCIDENT_STATUS = {"timeout": "timeout", "wall": "timeout", "stuck": "timeout", "memory": "memory",
                   "memory-error": "memory", "died": "error", "not-run": "error"}
FAILURES = ("AssertionError", "CheckFailed")
MEMORY_IN_MESSAGE = re.compile(r"raised MemoryError")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def strip_ansi(text: str) -> str:
    return ANSI.sub("", text)


def _partial(cell, max_points: float) -> float:
    """nbgrader's partial credit: a number shown as the cell's last value."""
    for out in cell.get("outputs", []):
        if out.get("output_type") == "execute_result":
            text = out.get("data", {}).get("text/plain", "")
            text = "".join(text) if isinstance(text, list) else str(text)
            try:
                value = float(text.strip())
            except ValueError:
                return max_points
            return min(max(value, 0.0), max_points)
    return max_points


def _printed(cell) -> str:
    text = "".join(o.get("text", "") for o in cell.get("outputs", [])
                   if o.get("output_type") == "stream" and o.get("name") == "stdout")
    return summary_line(strip_ansi(text))


def _error_message(run: CellRun) -> str:
    value = strip_ansi(run.evalue or "").strip()
    if run.ename in FAILURES:
        return value or "a check failed (no message)"
    return f"{run.ename}: {value}" if value else run.ename


def score_test(cell, run: CellRun | None, answer_run: CellRun | None, answer_id: str) -> dict:
    meta = nbgrader_meta(cell)
    top = float(meta.get("points", 0) or 0)
    result = {"id": meta.get("grade_id", cell.get("id", "")), "points": 0.0, "max": top}
    if run is None:
        return {**result, "status": "error", "message": "This test did not run."}
    if run.status == "ok":
        return {**result, "points": _partial(cell, top), "status": "passed", "message": _printed(cell)}
    if run.status in INCIDENT_STATUS:
        status, message = INCIDENT_STATUS[run.status], run.detail
        if run.status == "memory-error":
            message = f"{run.detail}\nMemoryError: {strip_ansi(run.evalue)}".rstrip(": ")
    else:
        message = _error_message(run)
        status = "failed" if run.ename in FAILURES else "error"
        if MEMORY_IN_MESSAGE.search(run.evalue or ""):
            status = "memory"
    if answer_run is not None and answer_run.status in INCIDENT_STATUS:
        status = INCIDENT_STATUS[answer_run.status]
        message = (f"Your answer cell `{answer_id}` did not finish: {answer_run.detail}\n\n"
                   f"So this test could not use it:\n{message}")
    return {**result, "status": status, "message": message}


def score(plan: Plan, runs: list[CellRun | None]) -> tuple[list[dict], list[dict], list[str]]:
    """(tests, manually graded cells, incidents) for an executed plan."""
    index = {gid: i for i, gid in enumerate(plan.grade_ids) if gid}
    tests, manual, incidents = [], [], []
    for i, (cell, kind, run) in enumerate(zip(plan.nb.cells, plan.kinds, runs)):
        if run is not None and run.status in INCIDENT_STATUS:
            incidents.append(f"cell `{cell.id}`: {run.detail}")
        if kind == "test":
            answer = plan.answer_of.get(plan.grade_ids[i], "")
            answer_run = runs[index[answer]] if answer in index else None
            tests.append(score_test(cell, run, answer_run, answer))
        elif kind == "manual":
            meta = nbgrader_meta(cell)
            grade_id = meta.get("grade_id", cell.id)
            answered = cell.source.strip() != plan.given.get(grade_id, "").strip()
            manual.append({"id": grade_id, "max": float(meta.get("points", 0) or 0), "answered": answered})
    return tests, manual, incidents


def missing_tests(plan: Plan, why: str) -> list[dict]:
    """Every test of ``plan`` at 0 with status ``missing``."""
    out = []
    for cell, kind in zip(plan.nb.cells, plan.kinds):
        if kind == "test":
            meta = nbgrader_meta(cell)
            out.append({"id": meta.get("grade_id", cell.id), "points": 0.0,
                        "max": float(meta.get("points", 0) or 0), "status": "missing", "message": why})
    return out


def answers(plan: Plan) -> list[dict]:
    """Each answer cell (code, auto-graded) and whether the student changed it."""
    out = []
    for cell, kind, grade_id in zip(plan.nb.cells, plan.kinds, plan.grade_ids):
        if kind == "answer":
            out.append({"id": grade_id, "answered": cell.source.strip() != plan.given.get(grade_id, "").strip()})
    return out
