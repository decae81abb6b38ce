"""The trusted checker: every test's verdict, reached outside the learner's kernel.

A submission's test cells are never run. Which checks a test cell makes is read from the
SOURCE notebook's cell with that ``grade_id`` (``grader.course.check_calls``); editing,
deleting or moving a test cell in a submission changes nothing. When the notebook reaches
a test cell, :class:`Checker` judges each of its checks here, with the live reference
(hidden cases included) and the check engine the notebooks use, on a
``grader.grading.notebook.bridge.RemoteSubject``: the learner's kernel only runs the learner's own
functions and classes on the cases sent to it, and sends results back as data. Shortcuts
are read from the submission's source, compiled here and never run.

A visible check must also pass *twins*: new cases like the visible ones
(``grader.lessons.twin_expectations``), so that replaying the outcomes recorded beside the
notebook earns nothing.

The test cell's output in the autograded notebook is the checker's message, so feedback
reads as it does in the notebook, hidden tests included.
"""
from __future__ import annotations

import dataclasses
import time

from ...course import CheckCall, check_calls
from ...learner import notebook as notebook_output
from ...learner.cases import Verdict
from ...learner.engine import judge
from ...learner.prose import wrapped
from ...learner.shortcuts import SourceReader
from . import nbjson
from .bridge import BridgeIncident, RemoteSubject, Session
from .kernel import CellRun, error_output
from .nbjson import cell_text, nbgrader_meta
from .repair import Plan
from .results import CheckVerdict
from .status import CellKind, CheckStatus, RunStatus

TWIN_NOTE = ("(This input is not one of your notebook's cases: grading also tries new cases like "
             "them, so that an answer must be right in general, not only on the cases you saw.)")


def source_tests(source: dict) -> dict[str, list[CheckCall]]:
    """The checks of each graded test cell of the SOURCE notebook, by grade_id."""
    tests = {}
    for cell in source["cells"]:
        meta = nbgrader_meta(cell)
        if cell.get("cell_type") == "code" and meta.get("grade") and not meta.get("solution"):
            text = cell_text(cell)
            tests[meta["grade_id"]] = check_calls(text)
    return tests


def _visible(name: str):
    """A graded part's visible expectations from the live reference: how the engine
    judges the learner's helpers that a composite runs."""
    from ...lessons import expectations

    return expectations(name, False)


def verdicts_for(call: CheckCall):
    """The expectations a check call is judged against: the visible ones and their
    twins, or the hidden ones."""
    from ...lessons import expectations, twin_expectations

    if call.hidden:
        return [(expectations(call.exercise, True), False)]
    twin = twin_expectations(call.exercise)
    return [(expectations(call.exercise, False), False)] + ([(twin, True)] if twin else [])


class Checker:
    """The verdicts of one notebook's test cells (``on_test`` is handed to
    ``grader.grading.notebook.kernel.run_notebook``)."""

    def __init__(self, plan: Plan, tests: dict[str, list[CheckCall]]):
        self.plan, self.tests = plan, tests
        self.reader = SourceReader()
        self.read = 0  # cells read into ``reader`` so far
        self.results: dict[str, CheckVerdict] = {}  # by the test cell's grade_id
        # Verdicts of visible checks since the last code cell that ran: a hidden test cell
        # repeats its visible check right after the visible test cell, and nothing the
        # answer could depend on has changed in between.
        self.fresh: dict[CheckCall, tuple[Verdict, bool]] = {}  # and whether it ran out of memory

    def _read_until(self, index: int) -> None:
        """Read the learner's code cells before ``index`` (what has run when the test
        is reached), never the test cells."""
        for i in range(self.read, index):
            cell = self.plan.nb.cells[i]
            if cell.cell_type == "code" and self.plan.kinds[i] != CellKind.TEST and cell.source.strip():
                self.reader.read(cell.source, f"<cell {cell.id}>")
                self.fresh.clear()
        self.read = max(self.read, index + 1)

    def on_test(self, index: int, kernel, deadline: float) -> CellRun | None:
        if self.plan.kinds[index] != CellKind.TEST:
            return None
        cell = self.plan.nb.cells[index]
        grade_id = self.plan.grade_ids[index]
        calls = self.tests.get(grade_id)
        start = time.monotonic()
        if not calls:
            self.results[grade_id] = CheckVerdict(CheckStatus.ERROR, "This test has no checks.")
            cell.outputs = [error_output("CheckError", "This test has no checks.")]
            return CellRun(index, RunStatus.ERROR, "CheckError", "This test has no checks.")
        self._read_until(index)
        session = Session(kernel, index, deadline)
        passed: list[str] = []
        try:
            verdict, out_of_memory = self._check_all(calls, session, passed)
        except BridgeIncident as incident:
            run = incident.run
            self.results[grade_id] = CheckVerdict(CheckStatus.INCIDENT, run=run)
            cell.outputs = self._printed(passed) + [error_output(run.ename or "Error", run.detail or run.evalue)]
            return run
        run = CellRun(index, RunStatus.OK if verdict.passed else RunStatus.ERROR,
                      seconds=time.monotonic() - start)
        if verdict.passed:
            self.results[grade_id] = CheckVerdict(
                CheckStatus.PASSED, notebook_output.summary_line("\n".join(passed)))
            cell.outputs = self._printed(passed)
        else:
            message = wrapped(verdict.message)  # as the notebook's own check shows it
            run.ename, run.evalue = "CheckFailed", message
            self.results[grade_id] = CheckVerdict(CheckStatus.FAILED, message,
                                                  out_of_memory=out_of_memory)
            lines = message.splitlines() or [""]
            cell.outputs = self._printed(passed) + [nbjson.new_output(
                "error", ename="CheckFailed", evalue=message,
                traceback=[f"✗ {lines[0]}", *lines[1:]])]
        cell.execution_count = None
        return run

    def _check_all(self, calls: list[CheckCall], session: Session, passed: list[str]
                   ) -> tuple[Verdict, bool]:
        """The first failing check's verdict (or one that passes, with every ✓ line in
        ``passed``), and whether the learner's code ran out of memory on its cases."""
        scope = self.reader.scope()
        for call in calls:
            found = self.fresh.get(call)
            if found is None:
                before = session.memory_errors
                verdict = self._check(call, session, scope, self.reader.trees)
                found = verdict, session.memory_errors > before
            if not call.hidden:
                self.fresh[call] = found
            if not found[0].passed:
                return found
            passed.append(found[0].message)
        return Verdict(True, "\n".join(passed)), False

    @staticmethod
    def _check(call: CheckCall, session: Session, scope, trees=()) -> Verdict:
        judged = verdicts_for(call)
        wanted = [c for exp, _ in judged for c in exp.cases + [b.case for b in exp.info.bad_inputs]]
        subject = RemoteSubject(session, call.target, judged[0][0].info, scope, wanted, trees)
        first = None
        for exp, twin in judged:
            runs = subject.runs
            verdict = judge(exp, subject, expectations_of=_visible)
            if not verdict.passed:
                # A twin that failed on its own cases shows one of them: say it is new.
                on_cases = twin and subject.runs > runs
                message = f"{verdict.message}\n\n{TWIN_NOTE}" if on_cases else verdict.message
                return dataclasses.replace(verdict, message=message)
            first = first or verdict
        return first

    @staticmethod
    def _printed(lines: list[str]) -> list:
        if not lines:
            return []
        return [nbjson.new_output("stream", name="stdout", text="\n".join(lines) + "\n")]
