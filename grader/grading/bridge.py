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

from ..learner import codec
from ..learner.agent import MIME
from ..learner.cases import Case, ErrorInfo, Outcome
from ..learner.shortcuts import Finding, Rules, SourceScope, scan_source
from .kernel import CellRun

LIMITS = codec.Limits(max_chars=32 * 1024 * 1024, max_depth=48, max_nodes=200_000,
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

    def ask(self, request: str) -> dict | None:
        """Send ``request`` (JSON); the decoded reply, or None if the kernel sent none that
        can be read. Raises :class:`BridgeIncident` if the kernel did not finish."""
        run, reply = self.kernel.request(request_code(request), self.index, self.deadline, MIME)
        if run.status not in ("ok", "error"):
            raise BridgeIncident(run)
        if run.status == "error" and reply is None:
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


def _key(case: Case) -> str:
    """The case as the kernel receives it (JSON), kept on the case: the expectations, and
    so their cases, live as long as the grading process."""
    key = case.__dict__.get("_kernel_json")
    if key is None:
        key = case.__dict__["_kernel_json"] = codec.dumps(case.for_kernel())
    return key


class RemoteSubject:
    """A learner's function or class in their kernel, judged from here (see
    ``grader.learner.engine.Subject``). Shortcuts are read from the submission's source,
    compiled here and never run, together with what the kernel reports of the live
    function, which can only add findings: a kernel that hides them changes nothing, and
    one that reports a required name as used is not heard (the source must call it)."""

    def __init__(self, session: Session, target: str, info, scope: SourceScope,
                 prefetch: list[Case] = ()):
        self.session, self.target, self.scope = session, target, scope
        self.driver, self.name, self.rules = info.driver, info.name, info.rules
        self.prefetch = list(prefetch)  # every case the check will ask for: one request
        self._probe: dict | None = None
        self._outcomes: dict[str, Outcome] = {}
        self._helpers: dict[str, bool | None] = {}  # helper -> passes its own check

    def _ask(self, cases: list[Case], rules: Rules | None = None) -> dict:
        head = json.dumps({"target": self.target, "driver": self.driver,
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
                self._outcomes[_key(case)] = Outcome.from_data(outcome)

    def problem(self) -> str:
        reply = self.probe()
        if "missing" in reply:
            return (f"There is no `{self.target}` in your notebook when this test runs: the cell "
                    f"that defines it did not define it (did it raise an error, or was it renamed?).")
        if self.driver.get("kind") != "value" and reply.get("callable") is False:
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

    def helper_passes(self, name: str) -> bool | None:
        """Judged here, like any check: the learner's ``name`` in their kernel against
        the live reference's visible cases (None: the kernel has no ``name``)."""
        from ..learner.engine import judge
        from ..lessons import expectations

        if name not in self._helpers:
            exp = expectations(name, False)
            wanted = exp.cases + [b.case for b in exp.info.bad_inputs]
            helper = RemoteSubject(self.session, name, exp.info, self.scope, wanted)
            self._helpers[name] = None if "missing" in helper.probe() else \
                judge(exp, helper, stand_ins=False).passed
        return self._helpers[name]

    def run(self, cases: list[Case]) -> list[Outcome]:
        if not cases:
            return []
        self.probe()
        todo = [c for c in cases if _key(c) not in self._outcomes]
        reply = self._ask(todo) if todo else {}
        self._keep(todo, reply)
        if all(_key(c) in self._outcomes for c in cases):
            return [self._outcomes[_key(c)] for c in cases]
        if "too_large" in reply:
            why = ErrorInfo("ReplyTooLarge", f"your answer sent back too much data: {reply['too_large']}")
        elif "missing" in reply:
            why = ErrorInfo("NameError", f"name '{self.target}' is not defined")
        else:
            why = ErrorInfo("BridgeError", "your notebook's Python sent back something that is not "
                            f"a result ({reply.get('unreadable', 'a reply of the wrong length')})")
        return [Outcome(error=why) for _ in cases]
