"""The grader's half of the bridge on its own: whatever a kernel sends back, the verdict
is the checker's, and an answer earns nothing it did not compute.

A fake kernel stands in for the learner's: it answers each request through the real
kernel-side agent (``grader.learner.agent.handle``) over a namespace holding the answer,
and then lets a test rewrite the reply into something hostile: malformed JSON, a
reply of the wrong length, a deeply nested or oversized one, arrays that claim more
data than they hold, or no reply at all.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from grader.course import CheckCall
from grader.grading.notebook.bridge import BridgeIncident, LIMITS
from grader.grading.notebook.trusted import Checker
from grader.grading.notebook.kernel import CellRun
from grader.learner.agent import handle
from grader.learner.shortcuts import SourceReader

HONEST = """
import numpy as np
from grader.learner.validation import matmul_operands

def matmul_dot(A, B):
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]), dtype=np.result_type(A, B))
    for i in range(A.shape[0]):
        for j in range(B.shape[1]):
            C[i, j] = np.sum(A[i, :] * B[:, j])
    return C
"""


def _namespace(source: str) -> dict:
    ns: dict = {}
    exec(compile(source, "<answer>", "exec"), ns)  # the test's own code, not a submission
    return ns


class FakeKernel:
    """Answers requests with the real agent, then hands the reply to ``tamper``."""

    def __init__(self, source: str = HONEST, tamper=None, status: str = "ok"):
        self.ns, self.tamper, self.status = _namespace(source), tamper, status
        self.requests = 0

    def request(self, code: str, index: int, deadline: float, mime: str):
        self.requests += 1
        payload = code[code.index("globals(), ") + len("globals(), "):-1]
        reply = handle(self.ns, eval(payload))  # the payload is a repr'd str built by the grader
        if self.tamper is not None:
            reply = self.tamper(reply)
        run = CellRun(index, self.status)
        if self.status == "error" and reply is None:
            run.ename, run.evalue = "ReplyTooLarge", "the answer sent back more than 10 characters"
        return run, reply


def verdict(kernel: FakeKernel, exercise="matmul_dot", hidden=False, source: str = HONEST):
    reader = SourceReader()
    reader.read(source, "<cell answer>")
    from grader.grading.notebook.bridge import Session

    return Checker._check(CheckCall(exercise, "matmul_dot", hidden), Session(kernel, 0, 1e18),
                          reader.scope(), reader.trees)


def test_the_fake_kernel_can_pass_an_honest_answer():
    """The control: without tampering, the harness passes honest work (so the failures
    below come from the tampering, not from the harness)."""
    for hidden in (False, True):
        kernel = FakeKernel()
        v = verdict(kernel, hidden=hidden)
        assert v.passed, v.message
        assert kernel.requests == 1, "every case of a check goes in one request"


def test_a_wrong_answer_fails_through_the_same_harness():
    wrong = HONEST.replace("np.sum(A[i, :] * B[:, j])", "np.sum(A[i, :]) * np.sum(B[:, j])")
    v = verdict(FakeKernel(wrong), source=wrong)
    assert not v.passed and "matmul_dot is not right yet" in v.message


def _outcomes(reply: str, change) -> str:
    data = json.loads(reply)
    change(data)
    return json.dumps(data)


HOSTILE = {
    "not JSON": lambda r: r[: len(r) // 2],
    "JSON that is not a reply": lambda r: "[1, 2, 3]",
    "an empty reply": lambda r: "",
    "one outcome short": lambda r: _outcomes(r, lambda d: d["outcomes"].pop()),
    "outcomes that are not results": lambda r: _outcomes(
        r, lambda d: d.__setitem__("outcomes", ["passed"] * len(d["outcomes"]))),
    "a reply nested too deep": lambda r: "[" * (LIMITS.max_depth + 5) + "]" * (LIMITS.max_depth + 5),
    "an array that claims more bytes than it holds": lambda r: _outcomes(r, _lying_array),
    "an array far over the size limit": lambda r: _outcomes(r, _huge_array),
    "a claim to be missing nothing with no outcomes": lambda r: json.dumps({"outcomes": []}),
}


def _first_array(tree):
    if isinstance(tree, dict):
        if tree.get("$") == "nd":
            return tree
        for v in tree.values():
            found = _first_array(v)
            if found is not None:
                return found
    if isinstance(tree, list):
        for v in tree:
            found = _first_array(v)
            if found is not None:
                return found
    return None


def _lying_array(data):
    array = _first_array(data["outcomes"][0])
    assert array is not None, "the reply holds no array to tamper with"
    array["shape"] = [1000, 1000]


def _huge_array(data):
    array = _first_array(data["outcomes"][0])
    assert array is not None, "the reply holds no array to tamper with"
    side = int(np.sqrt(LIMITS.max_array_bytes)) + 1000
    array["shape"] = [side, side]


@pytest.mark.parametrize("how", list(HOSTILE))
def test_a_hostile_reply_earns_nothing_and_says_the_answer_sent_something_unreadable(how):
    for hidden in (False, True):
        v = verdict(FakeKernel(tamper=HOSTILE[how]), hidden=hidden)
        assert not v.passed, how
        assert "matmul_dot" in v.message, v.message


def test_a_reply_too_large_for_the_kernel_link_says_so():
    v = verdict(FakeKernel(tamper=lambda r: None, status="error"))
    assert not v.passed and "sent back too much data" in v.message


@pytest.mark.parametrize("status", ["timeout", "stuck", "died", "memory", "wall"])
def test_a_kernel_that_does_not_finish_a_request_is_an_incident(status):
    kernel = FakeKernel(status=status)
    with pytest.raises(BridgeIncident) as caught:
        verdict(kernel)
    assert caught.value.run.status == status


def test_findings_from_the_kernel_can_add_but_never_remove_a_shortcut():
    """The source says np.matmul; a kernel that reports no findings changes nothing."""
    lazy = HONEST.replace("C = np.zeros((A.shape[0], B.shape[1]), dtype=np.result_type(A, B))\n"
                          "    for i in range(A.shape[0]):\n"
                          "        for j in range(B.shape[1]):\n"
                          "            C[i, j] = np.sum(A[i, :] * B[:, j])\n"
                          "    return C", "return np.matmul(A, B)")
    assert "np.matmul" in lazy

    def hide(reply):
        data = json.loads(reply)
        data["findings"], data["used"] = [], []
        return json.dumps(data)

    v = verdict(FakeKernel(lazy, tamper=hide), source=lazy)
    assert not v.passed and "np.matmul" in v.message


def test_a_result_far_too_large_is_refused_before_it_is_encoded():
    """72 MB per call: refused as ResultTooLarge from its size alone (encoding it for
    every case of a hidden check would take minutes)."""
    huge = HONEST.replace("    return C\n", "    return np.ones((3000, 3000))\n")
    for hidden in (False, True):
        v = verdict(FakeKernel(huge), hidden=hidden, source=huge)
        assert not v.passed and "ResultTooLarge" in v.message


CHANGING = """
import numpy as np
from grader.learner.validation import as_array, bool_mask

def masked_softmax(scores, mask):
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    scores[~mask] = -np.inf
    top = scores.max(axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(scores - top)
    total = e.sum(axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)
"""


def _masked(kernel: FakeKernel, source: str):
    reader = SourceReader()
    reader.read(source, "<cell answer>")
    from grader.grading.notebook.bridge import Session

    return Checker._check(CheckCall("masked_softmax", "masked_softmax", False),
                          Session(kernel, 0, 1e18), reader.scope(), reader.trees)


def _hide_changes(reply):
    data = json.loads(reply)
    for outcome in data.get("outcomes", []):
        outcome["mutated"] = ""
    return json.dumps(data)


def test_an_input_changed_in_place_is_read_from_the_source_when_the_kernel_hides_it():
    """A patched agent that says nothing was changed (``agent._mutated = lambda *a: ''``)
    still loses the points: the source assigns into the array it was given."""
    told = _masked(FakeKernel(CHANGING), CHANGING)
    assert not told.passed and "changed its input `scores` in place" in told.message
    hidden = _masked(FakeKernel(CHANGING, tamper=_hide_changes), CHANGING)
    assert not hidden.passed and "changed its input `scores` in place" in hidden.message
    honest = CHANGING.replace("scores[~mask] = -np.inf\n", "scores = np.where(mask, scores, -np.inf)\n")
    assert _masked(FakeKernel(honest, tamper=_hide_changes), honest).passed


# ------------------------------------------------------------------ what travels as data

def _checked(source: str) -> tuple:
    """(verdict, out of memory) of matmul_dot's visible check on ``source``."""
    from grader.grading.notebook.bridge import Session

    checker = Checker(None, {})
    checker.reader.read(source, "<cell answer>")
    return checker._check_all([CheckCall("matmul_dot", "matmul_dot")], Session(FakeKernel(source), 0, 1e18), [])


def test_out_of_memory_is_what_the_kernel_reported_never_the_message_words():
    """The kernel's outcome says the answer raised MemoryError (its type, as data): the
    check's verdict carries it. An answer whose ValueError only says the words does not."""
    bomb = HONEST.replace("    A, B = matmul_operands(A, B)\n",
                          "    A, B = matmul_operands(A, B)\n    raise MemoryError('Unable to allocate 8 GiB')\n")
    words = HONEST.replace("    A, B = matmul_operands(A, B)\n",
                           "    A, B = matmul_operands(A, B)\n    raise ValueError('raised MemoryError')\n")
    for source, want in ((bomb, True), (words, False), (HONEST, False)):
        verdict_, out_of_memory = _checked(source)
        assert out_of_memory is want, verdict_.message
    assert not _checked(words)[0].passed and "raised MemoryError" in _checked(words)[0].message


@pytest.mark.parametrize("runs_cases, message, noted", [
    (True, "one line", True),  # the twin failed on its own cases: say they are new
    (False, "two\nlines", False),  # it failed before any case ran: nothing to say of cases
])
def test_the_twin_note_follows_whether_the_twins_cases_ran(monkeypatch, runs_cases, message, noted):
    from grader.grading.notebook import trusted
    from grader.learner.cases import Verdict

    visible, twin = trusted.verdicts_for(CheckCall("matmul_dot", "matmul_dot"))

    def judge(exp, subject, **kw):
        if exp is visible[0]:
            return Verdict(True, "✓ matmul_dot")
        if runs_cases:
            subject.run(exp.cases[:1])
        return Verdict(False, message)

    monkeypatch.setattr(trusted, "judge", judge)
    v = verdict(FakeKernel())
    assert v.message.startswith(message) and (trusted.TWIN_NOTE in v.message) is noted
