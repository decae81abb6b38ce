"""Points, status and message for each test cell of a graded notebook.

A test cell earns its points when every check it makes passes, as the checker judged it
outside the learner's kernel (``grader.grading.notebook.trusted``). Each test cell's result is a
:class:`grader.grading.notebook.results.TestResult`, whose status is a ``grader.grading.notebook.status.TestStatus``.

When the answer cell a test depends on was stopped (timeout, memory, a dead kernel), the
test's message says so first: the learner sees the cause, not only a ``NameError``.
"""
from __future__ import annotations

import re

from .kernel import CellRun
from .nbjson import nbgrader_meta
from .repair import Plan
from .results import CheckVerdict, TestResult
from .status import CellKind, RunStatus, TestStatus, decide_test_status, stopped

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def strip_ansi(text: str) -> str:
    return ANSI.sub("", text)


def score_test(cell, run: CellRun | None, verdict: CheckVerdict | None,
               answer_run: CellRun | None, answer_id: str) -> TestResult:
    """Points, status and message of one test cell, from the checker's verdict; the
    status is :func:`grader.grading.notebook.status.decide_test_status`'s."""
    meta = nbgrader_meta(cell)
    top = float(meta.get("points", 0) or 0)
    grade_id = meta.get("grade_id", cell.get("id", ""))
    incident = verdict.run if verdict is not None else None
    status = decide_test_status(
        run.status if run is not None else None, verdict.status if verdict is not None else None,
        stopped_as=incident.status if incident is not None else None,
        out_of_memory=verdict is not None and verdict.out_of_memory,
        answer=answer_run.status if answer_run is not None else None)
    if status == TestStatus.PASSED:
        return TestResult(grade_id, top, top, status, verdict.message)
    return TestResult(grade_id, 0.0, top, status, _message(run, verdict, answer_run, answer_id))


def _message(run: CellRun | None, verdict: CheckVerdict | None, answer_run: CellRun | None,
             answer_id: str) -> str:
    """What a test that did not pass says: why its cell or check stopped, or the check's
    message, after what became of the answer cell it tests when that was stopped."""
    if run is None or verdict is None:
        return run.detail if run is not None and run.detail else "This test did not run."
    incident = verdict.run
    if incident is None:
        message = verdict.message
    elif incident.status == RunStatus.MEMORY_ERROR:
        message = f"{incident.detail}\nMemoryError: {strip_ansi(incident.evalue)}".rstrip(": ")
    else:
        message = incident.detail or incident.evalue
    if answer_run is not None and stopped(answer_run.status):
        message = (f"Your answer cell `{answer_id}` did not finish: {answer_run.detail}\n\n"
                   f"So this test could not use it:\n{message}")
    return message


def score(plan: Plan, runs: list[CellRun | None], verdicts: dict[str, CheckVerdict]
          ) -> tuple[list[TestResult], list[dict], list[str]]:
    """(tests, manually graded cells, incidents) for an executed plan and the checker's
    verdicts (by test grade_id)."""
    index = {gid: i for i, gid in enumerate(plan.grade_ids) if gid}
    tests, manual, incidents = [], [], []
    for i, (cell, kind, run) in enumerate(zip(plan.nb.cells, plan.kinds, runs)):
        if run is not None and stopped(run.status):
            incidents.append(f"cell `{cell.id}`: {run.detail}")
        if kind == CellKind.TEST:
            answer = plan.answer_of.get(plan.grade_ids[i], "")
            answer_run = runs[index[answer]] if answer in index else None
            tests.append(score_test(cell, run, verdicts.get(plan.grade_ids[i]), answer_run, answer))
        elif kind == CellKind.MANUAL:
            meta = nbgrader_meta(cell)
            grade_id = meta.get("grade_id", cell.id)
            answered = cell.source.strip() != plan.given.get(grade_id, "").strip()
            manual.append({"id": grade_id, "max": float(meta.get("points", 0) or 0), "answered": answered})
    return tests, manual, incidents


def missing_tests(plan: Plan, why: str) -> list[TestResult]:
    """Every test of ``plan`` at 0 with status ``missing``."""
    out = []
    for cell, kind in zip(plan.nb.cells, plan.kinds):
        if kind == CellKind.TEST:
            meta = nbgrader_meta(cell)
            out.append(TestResult(meta.get("grade_id", cell.id), 0.0,
                                  float(meta.get("points", 0) or 0), TestStatus.MISSING, why))
    return out


def answers(plan: Plan) -> list[dict]:
    """Each answer cell (code, auto-graded) and whether the student changed it."""
    out = []
    for cell, kind, grade_id in zip(plan.nb.cells, plan.kinds, plan.grade_ids):
        if kind == CellKind.ANSWER:
            out.append({"id": grade_id, "answered": cell.source.strip() != plan.given.get(grade_id, "").strip()})
    return out
