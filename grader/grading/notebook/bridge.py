"""The grader's half of the bridge into a learner's sandboxed kernel.

At grading, a check runs in the grading process, never in the learner's kernel: the
engine (``grader.learner.engine``) judges a :class:`RemoteSubject`, whose calls cross into
the kernel as data. A request names a function or class in the learner's namespace, a
driver and the cases (``grader.learner.codec`` trees); the kernel-side agent
(``grader.learner.agent.serve``) runs them there and publishes the outcomes as one
display output of its own MIME type.

Nothing that comes back is trusted: it is JSON, decoded with limits (size, depth, number
of values, bytes per array), never unpickled or evaluated; a reply that is malformed,
missing or of the wrong length counts against the answer, not against the grader. Every
request has the cell's time limit and the notebook's memory limit. A kernel that dies,
loops or runs out of memory during a request raises :class:`BridgeIncident`, which costs
the test that made it, as a crashing test cell would.
"""
from __future__ import annotations

import json

import numpy as np

from ...learner import codec
from ...learner.agent import MIME
from ...learner.drivers import Call, kib
from ...learner.cases import Case, ErrorInfo, Outcome, Work
from ...learner.mutation import source_changes
from ...learner.shortcuts import Finding, Rules, SourceScope, scan_source
from ...learner.work import Measured
from ...learner.work import measured as measured_work
from .cpu import CpuWindow
from .kernel import CellRun
from .status import FINISHED, RunStatus

LIMITS = codec.DecodeLimits(max_chars=32 * 1024 * 1024, max_depth=48, max_nodes=200_000,
                      max_array_bytes=16 * 1024 * 1024, max_ndim=16, max_text=200_000)


class BridgeIncident(Exception):
    """The kernel did not answer: it died, ran out of time or memory, or could not run
    the request at all."""

    def __init__(self, run: CellRun):
        super().__init__(run.status)
        self.run = run


def request_code(payload: str) -> str:
    """The code a request executes in the learner's kernel."""
    return f"__import__('grader.learner.agent', fromlist=['serve']).serve(globals(), {payload!r})"


class Session:
    """Requests to one kernel, for the test cell at ``index``, before ``deadline``."""

    def __init__(self, kernel, index: int, deadline: float):
        self.kernel, self.index, self.deadline = kernel, index, deadline
        # How many times the learner's code raised MemoryError on a case, as the kernel
        # reported it: a failed check with one more than before it ran out of memory.
        self.memory_errors = 0

    def saw(self, errors) -> None:
        """Count the MemoryErrors among ``errors`` (ErrorInfo or None), by their type."""
        self.memory_errors += sum(1 for e in errors if e is not None and e.type == "MemoryError")

    def ask(self, request: str) -> dict | None:
        """Send ``request`` (JSON); the decoded reply, or None if the kernel sent none that
        can be read. Raises :class:`BridgeIncident` if the kernel did not finish."""
        run, reply = self.kernel.request(request_code(request), self.index, self.deadline, MIME)
        if run.status not in FINISHED:
            raise BridgeIncident(run)
        if run.status == RunStatus.ERROR and reply is None:
            if run.ename == "ReplyTooLarge":
                return {"too_large": run.evalue}
            raise BridgeIncident(run)
        if reply is None:
            return None
        try:
            value = codec.loads(reply, LIMITS)
        except codec.DecodeError as exc:
            return {"unreadable": str(exc)}
        return value if isinstance(value, dict) else {"unreadable": "not a reply"}


# The memory a streamed answer may grow by, measured from outside: the kernel-side budget
# (tracemalloc's count of the arrays it allocates) or, at least, this floor. Resident size
# moves by whole pages and by the allocator's arenas, so a few MiB of noise are normal;
# the measured cases are sized so that holding every score costs several times the floor.
OS_FLOOR = 6 * 2**20


def os_budget(budget: int) -> int:
    return max(int(budget), OS_FLOOR)


def measured(case: Case) -> bool:
    """Whether ``case`` is measured from outside at grading (it has a memory budget)."""
    return case.build is not None and case.build.memory_budget is not None


def _key(case: Case) -> str:
    """The case as the kernel receives it (JSON), kept on the case: the expectations, and
    so their cases, live as long as the grading process."""
    key = case.__dict__.get("_kernel_json")
    if key is None:
        key = case.__dict__["_kernel_json"] = codec.dumps(case.for_kernel())
    return key


class _NotTimed(Exception):
    """A timed run that gave no time: the answer raised, or nothing could be read."""

    def __init__(self, found: Measured):
        super().__init__(found.problem or (found.error.type if found.error else ""))
        self.found = found


class RemoteSubject:
    """A learner's function or class in their kernel, judged from here (see
    ``grader.learner.engine.Subject``). Shortcuts are read from the submission's source,
    compiled here and never run, together with what the kernel reports of the live
    function, which can only add findings: a kernel that hides them changes nothing, and
    one that reports a required name as used is not heard (the source must call it)."""

    def __init__(self, session: Session, target: str, info, scope: SourceScope,
                 prefetch: list[Case] = (), trees: list = ()):
        self.session, self.target, self.scope = session, target, scope
        # the submission's cells as syntax trees, and the parameters the answer's source
        # changes in place (grader.learner.mutation)
        self.trees = list(trees)
        self.changes = source_changes(self.trees, target)
        self.driver, self.name, self.rules = info.driver, info.name, info.rules
        # every case the check will ask for, in one request; a case measured from outside
        # runs on its own (:meth:`_measure`)
        self.prefetch = [c for c in prefetch if not measured(c)]
        self._probe: dict | None = None
        self._outcomes: dict[str, Outcome] = {}
        self._helpers: dict[str, RemoteSubject | None] = {}  # the learner's graded parts it runs
        self.runs = 0  # calls of :meth:`run` with cases: a verdict reached on cases, not before

    def _ask(self, cases: list[Case], rules: Rules | None = None) -> dict:
        head = json.dumps({"target": self.target, "driver": self.driver.to_data(),
                           "rules": rules.to_data() if rules else None})
        request = f'{head[:-1]}, "cases": [{", ".join(_key(c) for c in cases)}]}}'
        return self.session.ask(request) or {"unreadable": "the kernel sent back no reply"}

    def probe(self) -> dict:
        """What the kernel says of the answer (whether it exists, its type, what its live
        code uses) and its outcomes on every case the check will need, in one request."""
        if self._probe is None:
            self._probe = self._ask(self.prefetch, self.rules)
            self._keep(self.prefetch, self._probe)
        return self._probe

    def _keep(self, cases: list[Case], reply: dict) -> None:
        outcomes = reply.get("outcomes")
        if isinstance(outcomes, list) and len(outcomes) == len(cases):
            for case, outcome in zip(cases, outcomes):
                self._outcomes[_key(case)] = self._changed(case, Outcome.from_data(outcome))

    def _changed(self, case: Case, outcome: Outcome) -> Outcome:
        """``outcome``, with the input its source changes in place named when the kernel
        did not name one: the kernel's own comparison can add this finding, not hide it."""
        if outcome.error is not None or outcome.mutated or type(self.driver) is not Call:
            return outcome
        given = dict(zip(case.names, case.args)) | dict(case.kwargs)
        for param in self.changes:
            value = given.get(param)
            if isinstance(value, (np.ndarray, list, dict)) or type(value).__module__.startswith("torch"):
                outcome.mutated = param
                break
        return outcome

    def problem(self) -> str:
        reply = self.probe()
        if "missing" in reply:
            return (f"There is no `{self.target}` in your notebook when this test runs: the cell "
                    f"that defines it did not define it (did it raise an error, or was it renamed?).")
        if self.driver.calls_answer and reply.get("callable") is False:
            return (f"check({self.name!r}, ...) needs your function itself, but got "
                    f"{str(reply.get('type', 'something else'))[:80]}.")
        return ""

    def scan(self, rules: Rules) -> tuple[list[Finding], set[str]]:
        findings, used = scan_source(self.scope, self.target, rules)
        reply = self.probe()
        seen = {(f.what, f.where) for f in findings}
        for item in reply.get("findings") or []:
            if isinstance(item, list) and len(item) == 2 and all(isinstance(x, str) for x in item):
                if tuple(item) not in seen:
                    findings.append(Finding(item[0][:200], item[1][:200]))
                    seen.add(tuple(item))
        return findings, used  # a required name is the source's word only, never the kernel's

    def helper(self, name: str, exp) -> RemoteSubject | None:
        """The learner's ``name`` in the same kernel, to be judged against ``exp`` (None:
        the kernel has no ``name``). The engine judges it; nothing here does."""
        if name not in self._helpers:
            wanted = exp.cases + [b.case for b in exp.info.bad_inputs]
            helper = RemoteSubject(self.session, name, exp.info, self.scope, wanted, self.trees)
            self._helpers[name] = None if "missing" in helper.probe() else helper
        return self._helpers[name]

    def _measure(self, case: Case) -> Outcome:
        """Run a case with a memory budget, measured from outside (see
        :class:`grader.grading.notebook.measure.MemoryWindow`): its inputs are built first, then
        the kernel's peak memory is reset, then the arguments in ``build.late`` (by
        default the first: the query) are sent and the answer runs. Without them the
        answer cannot be worked out ahead of the window. The kernel's own measure can
        only add a finding: the result is within the budget only if both say so."""
        build = case.build
        data = case.for_kernel()
        late = {i: data["args"][i] for i in (build.late if build.late is not None else (0,))}
        staged = {**data, "args": [None if i in late else a for i, a in enumerate(data["args"])]}
        head = {"target": self.target, "driver": self.driver.to_data()}
        first = self.session.ask(json.dumps({**head, "stage": json.loads(codec.dumps(staged))}))
        if not first or first.get("staged") is not True:
            return self._failure(first or {})
        window = self.session.kernel.memory_window()
        reply = self.session.ask(json.dumps({**head, "late": {
            str(i): json.loads(codec.dumps(v)) for i, v in late.items()}})) or {}
        growth, started = window.close()
        outcomes = reply.get("outcomes")
        if not isinstance(outcomes, list) or len(outcomes) != 1:
            return self._failure(reply)
        outcome = self._changed(case, Outcome.from_data(outcomes[0]))
        value = outcome.value
        if outcome.error is not None or not isinstance(value, dict):
            return outcome
        budget = int(build.memory_budget)
        # The kernel's own word (a field, never its words) counts only against it.
        within = outcome.within_budget is True and not window.problem and \
            not started and growth <= os_budget(budget)
        value["extra memory"] = f"{'at most' if within else 'more than'} {kib(budget)}"
        return outcome

    def work(self, work: Work) -> Measured:
        """``work`` measured from outside (:class:`grader.grading.notebook.cpu.CpuWindow`): its case
        is built in the kernel first, then run again and again, as it is and with
        ``work.against``, one request each, and the kernel's processes' CPU time is read
        around each request. The kernel's own word on time is never asked for."""
        head = {"target": self.target, "driver": self.driver.to_data()}
        staged = {**work.case.for_kernel(), "build": None}  # the timed call, as it is
        first = self.session.ask(json.dumps({**head, "stage": json.loads(codec.dumps(staged))}))
        if not first or first.get("staged") is not True:
            return Measured(error=self._failure(first or {}).error)
        try:
            self._timed(head, {})  # once before the clock counts: what a first call sets up
            found = measured_work(lambda kwargs: self._timed(head, kwargs), work)
        except _NotTimed as exc:
            found = exc.found
        finally:
            self.session.ask(json.dumps({**head, "drop": True}))
        self.session.saw([found.error])
        return found

    def _timed(self, head: dict, kwargs: dict) -> float:
        """The CPU seconds of one run of the staged case with ``kwargs``, from outside."""
        window = CpuWindow(self.session.kernel).open()
        reply = self.session.ask(json.dumps({**head, "again": json.loads(codec.dumps(kwargs))}))
        seconds = window.close()
        outcomes = (reply or {}).get("outcomes")
        if not isinstance(outcomes, list) or len(outcomes) != 1:
            raise _NotTimed(Measured(error=self._failure(reply or {}).error))
        outcome = Outcome.from_data(outcomes[0])
        if outcome.error is not None:
            raise _NotTimed(Measured(error=outcome.error))
        if window.problem:
            raise _NotTimed(Measured(problem=window.problem))
        return seconds

    def _failure(self, reply: dict) -> Outcome:
        if "too_large" in reply:
            why = ErrorInfo("ReplyTooLarge", f"your answer sent back too much data: {reply['too_large']}")
        elif "missing" in reply:
            why = ErrorInfo("NameError", f"name '{self.target}' is not defined")
        else:
            why = ErrorInfo("BridgeError", "your notebook's Python sent back something that is not "
                            f"a result ({reply.get('unreadable', 'a reply of the wrong length')})")
        return Outcome(error=why)

    def run(self, cases: list[Case]) -> list[Outcome]:
        if not cases:
            return []
        outcomes = self._run(cases)
        self.runs += 1
        self.session.saw([o.error for o in outcomes])
        return outcomes

    def _run(self, cases: list[Case]) -> list[Outcome]:
        self.probe()
        for case in cases:
            if measured(case) and _key(case) not in self._outcomes:
                self._outcomes[_key(case)] = self._measure(case)
        todo = [c for c in cases if _key(c) not in self._outcomes]
        reply = self._ask(todo) if todo else {}
        self._keep(todo, reply)
        if all(_key(c) in self._outcomes for c in cases):
            return [self._outcomes[_key(c)] for c in cases]
        failure = self._failure(reply)
        return [self._outcomes.get(_key(c), failure) for c in cases]
