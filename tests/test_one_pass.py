"""One pass, checked (lesson 07's ``learner.py``: the ``OnePass`` driver): lesson 07's ``online_softmax_stats``
gets its blocks as a one-shot stream, ``attention_one_pass`` gets K and V as arrays that
note which rows are read.

First the answers, written as a learner would: two-pass ones (every block kept and read
twice, the argument iterated twice, the blocks copied to a list and read twice, a loop for
the maximum then one for the sums) fail with the read-twice message, in a notebook's check
and at grading, where the answer runs in a kernel and the checker judges it from outside
(through the real kernel-side agent here, and once in a real sandboxed kernel); honest
one-pass answers in several styles pass both ways; ``len()`` and an index get their own
message. Then the engine: the message is chosen by the error's type, never by its text.
Last, each thing the stream and the row ledger notice, fed something that must trip it
and something that must not.
"""
from __future__ import annotations

import ast
import copy
import json
import functools
import itertools
import linecache
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT
from grader import CheckFailed, check
from grader.course import CheckCall
from grader.grading.notebook.bridge import Session
from grader.grading.notebook.trusted import Checker
from grader.grading.notebook.kernel import CellRun
from grader.learner import agent
from grader.learner.plugins import lesson_part
from grader.learner.cases import Case, ErrorInfo, Outcome
from grader.learner.engine import judge
from grader.learner.shortcuts import SourceReader

one_pass = lesson_part("07_long_attention")  # the lesson's learner.py
BlockKept, NotAList, ReadTwice, Stream, TooManyRows, counted, watched = (
    one_pass.BlockKept, one_pass.NotAList, one_pass.ReadTwice, one_pass.Stream,
    one_pass.TooManyRows, one_pass.counted, one_pass.watched)

ANSWERS = '''
import functools

import numpy as np
from courseware.long_attention import one_query, score_blocks
from grader.learner.validation import positive_int


def _fold(state, b):
    m, s = state
    new = max(m, float(b.max()))
    return new, s * np.exp(m - new) + float(np.exp(b - new).sum())


# ---------------------------------------------------------------- online_softmax_stats, one pass

def stats_for_loop(scores_blocks):
    m, s = -np.inf, 0.0
    for b in score_blocks(scores_blocks):
        m, s = _fold((m, s), b)
    return m, s


def stats_iter_next(scores_blocks):
    it = iter(score_blocks(scores_blocks))
    state = (-np.inf, 0.0)
    while True:
        try:
            b = next(it)
        except StopIteration:
            break
        state = _fold(state, b)
    return state


def stats_reduce(scores_blocks):
    return functools.reduce(_fold, score_blocks(scores_blocks), (-np.inf, 0.0))


def stats_next_with_default(scores_blocks):
    it = score_blocks(scores_blocks)
    state, b = (-np.inf, 0.0), next(it, None)
    while b is not None:
        state = _fold(state, b)
        b = next(it, None)
    return state


def stats_own_checks(scores_blocks):
    m, s, seen = -np.inf, 0.0, 0
    for i, b in enumerate(scores_blocks):
        b = np.asarray(b, dtype=float)
        if b.ndim != 1 or b.size == 0 or np.isnan(b).any() or np.isposinf(b).any():
            raise ValueError(f"block {i} is not a non-empty row of scores: {b!r}")
        m, s = _fold((m, s), b)
        seen += 1
    if not seen:
        raise ValueError("there is no block")
    return m, s


# ---------------------------------------------------------------- online_softmax_stats, two passes

def stats_keep_then_read_twice(scores_blocks):
    kept = []
    for b in score_blocks(scores_blocks):
        kept.append(b)
    m = max(float(b.max()) for b in kept)
    return m, float(sum(np.exp(b - m).sum() for b in kept))


def stats_iterate_twice(scores_blocks):
    m = max(float(b.max()) for b in score_blocks(scores_blocks))
    return m, float(sum(np.exp(b - m).sum() for b in score_blocks(scores_blocks)))


def stats_given_blocks_twice(scores_blocks):
    blocks = score_blocks(scores_blocks)
    m = -np.inf
    for b in blocks:
        m = max(m, float(b.max()))
    s = 0.0
    for b in blocks:
        s += float(np.exp(b - m).sum())
    return m, s


def stats_list_then_two_passes(scores_blocks):
    blocks = list(score_blocks(scores_blocks))
    m = max(float(b.max()) for b in blocks)
    return m, float(sum(np.exp(b - m).sum() for b in blocks))


def stats_copies_then_two_passes(scores_blocks):
    blocks = [b.copy() for b in score_blocks(scores_blocks)]
    m = max(float(b.max()) for b in blocks)
    return m, float(sum(np.exp(b - m).sum() for b in blocks))


def stats_with_len(scores_blocks):
    if len(scores_blocks) == 0:
        raise ValueError("there is no block")
    return stats_for_loop(scores_blocks)


def stats_with_index(scores_blocks):
    m, s = float(np.max(scores_blocks[0])), 0.0
    return _fold((m, s), np.asarray(scores_blocks[0], dtype=float))


# ---------------------------------------------------------------- attention_one_pass, one pass

def _step(state, x, Vb):
    m, s, o = state
    new = max(m, float(x.max()))
    p = np.exp(x - new)
    return new, s * np.exp(m - new) + p.sum(), o * np.exp(m - new) + p @ Vb


def one_pass_slices(q, K, V, block):
    q, K, V = one_query(q, K, V)
    block = positive_int(block, "block")
    state = (-np.inf, 0.0, np.zeros(V.shape[1]))
    for j in range(0, len(K), block):
        state = _step(state, K[j:j + block] @ q / np.sqrt(len(q)), V[j:j + block])
    return state[2] / state[1]


def one_pass_dot_einsum(q, K, V, block):
    q, K, V = one_query(q, K, V)
    block = positive_int(block, "block")
    m, s, o = -np.inf, 0.0, np.zeros(V.shape[1])
    for j in range(0, K.shape[0], block):
        x = np.dot(K[j:j + block], q) / np.sqrt(q.shape[0])
        new = max(m, x.max())
        p = np.exp(x - new)
        s = s * np.exp(m - new) + np.sum(p)
        o = o * np.exp(m - new) + np.einsum("k,kv->v", p, V[j:j + block])
        m = new
    return o / s


def one_pass_split(q, K, V, block):
    q, K, V = one_query(q, K, V)
    block = positive_int(block, "block")
    pieces = range(block, len(K), block)
    state = (-np.inf, 0.0, np.zeros(V.shape[1]))
    for Kb, Vb in zip(np.split(K, pieces), np.split(V, pieces)):
        state = _step(state, Kb @ q / np.sqrt(len(q)), Vb)
    return state[2] / state[1]


def one_pass_block_read_twice(q, K, V, block):
    q, K, V = one_query(q, K, V)
    block = positive_int(block, "block")
    m, s, o = -np.inf, 0.0, np.zeros(V.shape[1])
    for j in range(0, len(K), block):
        new = max(m, float((K[j:j + block] @ q).max()) / np.sqrt(len(q)))
        p = np.exp(K[j:j + block] @ q / np.sqrt(len(q)) - new)
        s, o, m = s * np.exp(m - new) + p.sum(), o * np.exp(m - new) + p @ V[j:j + block], new
    return o / s


def one_pass_last_block_first(q, K, V, block):
    q, K, V = one_query(q, K, V)
    block = positive_int(block, "block")
    state = (-np.inf, 0.0, np.zeros(V.shape[1]))
    for j in reversed(range(0, len(K), block)):
        state = _step(state, K[j:j + block] @ q / np.sqrt(len(q)), V[j:j + block])
    return state[2] / state[1]


def one_pass_rows_by_index(q, K, V, block):
    q, K, V = one_query(q, K, V)
    block = positive_int(block, "block")
    state = (-np.inf, 0.0, np.zeros(V.shape[1]))
    for j in range(0, len(K), block):
        rows = np.arange(j, min(j + block, len(K)))
        state = _step(state, K[rows] @ q / np.sqrt(len(q)), V[rows])
    return state[2] / state[1]


# ---------------------------------------------------------------- attention_one_pass, two passes

def one_pass_max_loop_then_sum_loop(q, K, V, block):
    q, K, V = one_query(q, K, V)
    block = positive_int(block, "block")
    m = -np.inf
    for j in range(0, len(K), block):
        m = max(m, float((K[j:j + block] @ q).max()) / np.sqrt(len(q)))
    s, o = 0.0, np.zeros(V.shape[1])
    for j in range(0, len(K), block):
        p = np.exp(K[j:j + block] @ q / np.sqrt(len(q)) - m)
        s, o = s + p.sum(), o + p @ V[j:j + block]
    return o / s


def one_pass_block_as_the_number_of_blocks(q, K, V, block):
    q, K, V = one_query(q, K, V)
    block = positive_int(block, "block")
    size = -(-len(K) // block)          # block blocks, of ceil(T_k / block) keys each
    m, s, o = -np.inf, 0.0, np.zeros(V.shape[1])
    for j in range(0, len(K), size):
        x = K[j:j + size] @ q / np.sqrt(len(q))
        m_new = max(m, x.max())
        p = np.exp(x - m_new)
        s, o = s * np.exp(m - m_new) + p.sum(), o * np.exp(m - m_new) + p @ V[j:j + size]
        m = m_new
    return o / s


def one_pass_every_score_then_blocks(q, K, V, block):
    q, K, V = one_query(q, K, V)
    block = positive_int(block, "block")
    m = float(np.max(K @ q)) / np.sqrt(len(q))
    s, o = 0.0, np.zeros(V.shape[1])
    for j in range(0, len(K), block):
        p = np.exp(K[j:j + block] @ q / np.sqrt(len(q)) - m)
        s, o = s + p.sum(), o + p @ V[j:j + block]
    return o / s

'''
SOURCE_FILE = "<cell answers>"


@functools.cache
def namespace() -> dict:
    """The answers, defined as a notebook cell defines them (their lines can be shown)."""
    linecache.cache[SOURCE_FILE] = (len(ANSWERS), None, ANSWERS.splitlines(True), SOURCE_FILE)
    ns: dict = {"__name__": "__main__"}
    exec(compile(ANSWERS, SOURCE_FILE, "exec"), ns)  # the test's own answers
    return ns


STREAM_READ_TWICE = "online_softmax_stats reads the blocks twice."
STREAM_KEPT = "online_softmax_stats keeps the blocks to read them twice."
NOT_A_LIST = ("online_softmax_stats asks its blocks for a length or an index, but they come "
              "as a stream.")
ROWS_READ_TWICE = "attention_one_pass reads keys or values twice: it must read K and V in one pass."
TOO_MANY_ROWS = "attention_one_pass reads more than `block` keys or values in one step."
COPIES_KEPT = "it keeps every block, or a copy of each"

HONEST = [("online_softmax_stats", n) for n in (
    "stats_for_loop", "stats_iter_next", "stats_reduce", "stats_next_with_default",
    "stats_own_checks")] + [("attention_one_pass", n) for n in (
        "one_pass_slices", "one_pass_dot_einsum", "one_pass_split", "one_pass_block_read_twice",
        "one_pass_last_block_first", "one_pass_rows_by_index")]
TWO_PASSES = [
    ("online_softmax_stats", "stats_keep_then_read_twice", STREAM_KEPT),
    ("online_softmax_stats", "stats_iterate_twice", STREAM_READ_TWICE),
    ("online_softmax_stats", "stats_given_blocks_twice", STREAM_READ_TWICE),
    ("online_softmax_stats", "stats_list_then_two_passes", STREAM_KEPT),
    ("online_softmax_stats", "stats_copies_then_two_passes", COPIES_KEPT),
    ("online_softmax_stats", "stats_with_len", NOT_A_LIST),
    ("online_softmax_stats", "stats_with_index", NOT_A_LIST),
    ("attention_one_pass", "one_pass_max_loop_then_sum_loop", ROWS_READ_TWICE),
    ("attention_one_pass", "one_pass_every_score_then_blocks", TOO_MANY_ROWS),
    ("attention_one_pass", "one_pass_block_as_the_number_of_blocks", TOO_MANY_ROWS),
]


def failure(name: str, fn, hidden: bool = False) -> str:
    with pytest.raises(CheckFailed) as info:
        check(name, fn, hidden=hidden)
    return str(info.value)


def assert_well_formed(message: str, expected: str) -> None:
    """The diagnosis first, then the smallest failing input; under 25 lines."""
    assert expected in message, message
    lines = message.splitlines()
    assert len(lines) < 25, message
    if expected != COPIES_KEPT:
        assert lines[0] == expected or lines[0].startswith(expected), message
        assert lines[2].startswith("Diagnosis: "), message
        assert "at line " in message and "of your code" in message, message
    assert message.index("Diagnosis:") < message.index("Smallest input where it goes wrong")


# ================================================================= in a notebook's check

@pytest.mark.parametrize("exercise, name", HONEST)
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_honest_one_pass_answers_pass(exercise, name, hidden, capsys):
    check(exercise, namespace()[name], hidden=hidden)
    assert f"✓ {exercise}" in capsys.readouterr().out


@pytest.mark.parametrize("exercise, name, expected", TWO_PASSES)
def test_two_pass_answers_fail_with_the_read_twice_message(exercise, name, expected):
    assert_well_formed(failure(exercise, namespace()[name]), expected)


@pytest.mark.parametrize("exercise, name, expected", [TWO_PASSES[0], TWO_PASSES[1], TWO_PASSES[-2]])
def test_the_hidden_checks_say_so_too(exercise, name, expected):
    assert_well_formed(failure(exercise, namespace()[name], hidden=True), expected)


def test_the_message_names_the_line_and_what_was_read():
    message = failure("attention_one_pass", namespace()["one_pass_max_loop_then_sum_loop"])
    assert "What happened: in K, row 0 was read again after row 1 had been read" in message, message
    assert "`p = np.exp(K[j:j + block] @ q / np.sqrt(len(q)) - m)`" in message, message
    assert message.rstrip().endswith("(K and V handed to your function as arrays that note "
                                     "which rows are read)"), message

    message = failure("online_softmax_stats", namespace()["stats_keep_then_read_twice"])
    assert ("What happened: blocks 0 and 1 of scores_blocks were still held when block 3 was "
            "asked for.") in message, message
    assert "`for b in score_blocks(scores_blocks):`" in message, message
    message = failure("online_softmax_stats", namespace()["stats_with_len"])
    assert "What happened: len(scores_blocks), but scores_blocks is a stream" in message, message
    assert "`if len(scores_blocks) == 0:`" in message, message


def test_a_second_pass_caught_by_the_answer_still_fails():
    """The error is raised again when the call returns: catching it hides nothing."""
    def swallows(scores_blocks):
        m = max(float(b.max()) for b in scores_blocks)
        try:
            for _ in scores_blocks:
                pass
        except Exception:  # noqa: BLE001 (the point of this answer)
            pass
        return m, 1.0

    assert_well_formed(failure("online_softmax_stats", swallows), STREAM_READ_TWICE)


# ================================================================= at grading, outside the kernel

class _Window:
    """A memory window that measures nothing from outside (here the kernel's own measure
    decides; the real one is tested with a sandboxed kernel below)."""

    problem = ""

    def close(self) -> tuple[int, bool]:
        return 0, False


class InProcessKernel:
    """The kernel side of grading, in this process: every request goes through the real
    agent (``grader.learner.agent.handle``) over the answers' namespace."""

    def __init__(self, ns: dict):
        self.ns = ns

    def request(self, code: str, index: int, deadline: float, mime: str):
        payload = ast.literal_eval(code[code.index("globals(), ") + len("globals(), "):-1])
        return CellRun(index, "ok"), agent.handle(self.ns, payload)

    def memory_window(self):
        return _Window()


def graded(kernel, exercise: str, target: str, hidden: bool = False):
    reader = SourceReader()
    reader.read(ANSWERS, "<cell answers>")
    return Checker._check(CheckCall(exercise, target, hidden),
                          Session(kernel, 0, time.monotonic() + 600), reader.scope(), reader.trees)


@pytest.mark.parametrize("exercise, name", HONEST)
def test_at_grading_honest_answers_pass(exercise, name):
    """The visible check and its twins (new cases like it), as the checker grades them."""
    verdict = graded(InProcessKernel(namespace()), exercise, name)
    assert verdict.passed, verdict.message


@pytest.mark.parametrize("exercise, name, expected", TWO_PASSES)
def test_at_grading_two_pass_answers_fail_with_the_read_twice_message(exercise, name, expected):
    verdict = graded(InProcessKernel(namespace()), exercise, name)
    assert not verdict.passed
    assert_well_formed(verdict.message, expected)


class ForgingKernel(InProcessKernel):
    """The agent's replies to a budgeted run, with its ``within budget`` field set to
    ``within`` (or dropped, for None) while its words still say "at most"."""

    def __init__(self, ns: dict, within):
        super().__init__(ns)
        self.within = within

    def request(self, code, index, deadline, mime):
        run, reply = super().request(code, index, deadline, mime)
        data = json.loads(reply)
        for outcome in data.get("outcomes", ()):
            if "within budget" in outcome:
                assert "at most" in json.dumps(outcome["value"])
                outcome.pop("within budget")
                if self.within is not None:
                    outcome["within budget"] = self.within
        return run, json.dumps(data)


@pytest.mark.parametrize("within", [False, None, "yes"])
def test_at_grading_the_budget_is_read_from_the_field_never_from_the_words(within):
    """A kernel whose field says over the budget (or says nothing, or not a bool) fails
    the budgeted case, whatever its words say; the same answer passes when it says within."""
    verdict = graded(ForgingKernel(namespace(), within), "online_softmax_stats", "stats_reduce")
    assert not verdict.passed
    assert "more than" in verdict.message, verdict.message
    honest = graded(ForgingKernel(namespace(), True), "online_softmax_stats", "stats_reduce")
    assert honest.passed, honest.message


@pytest.mark.slow
def test_in_a_sandboxed_kernel_two_passes_fail_and_one_pass_passes():
    """A real kernel in bubblewrap, with the memory measured from outside: the blocks and
    the rows are handed over inside it, by the agent, from the cases sent as data."""
    from grader.grading.notebook.job import kernel_env
    from grader.grading.notebook.sandbox import Limits, SandboxUnavailable, detect
    from grader.grading.notebook.kernel import Kernel

    with tempfile.TemporaryDirectory(prefix="grade-") as scratch:
        scratch = Path(scratch)
        scratch.chmod(0o711)
        limits = Limits(timeout=120)
        try:
            box = detect("bwrap", ROOT, [ROOT / "solutions"], scratch, limits)
        except SandboxUnavailable as exc:
            pytest.skip(f"no sandbox here: {exc}")
        job = scratch / "job"
        (job / "in" / "work").mkdir(parents=True)
        job.chmod(0o711)
        kernel = Kernel(job, box, limits, kernel_env(str(ROOT)), 0, ("numpy",))
        kernel.start()
        try:
            run, _ = kernel.request(ANSWERS, 0, time.monotonic() + 120, "none")
            assert run.status == "ok", (run.ename, run.evalue)
            for exercise, name, expected in [
                    ("online_softmax_stats", "stats_keep_then_read_twice", STREAM_KEPT),
                    ("online_softmax_stats", "stats_iterate_twice", STREAM_READ_TWICE),
                    ("online_softmax_stats", "stats_copies_then_two_passes", COPIES_KEPT),
                    ("attention_one_pass", "one_pass_max_loop_then_sum_loop", ROWS_READ_TWICE)]:
                verdict = graded(kernel, exercise, name)
                assert not verdict.passed, name
                assert_well_formed(verdict.message, expected)
            for exercise, name in [("online_softmax_stats", "stats_reduce"),
                                   ("attention_one_pass", "one_pass_split")]:
                verdict = graded(kernel, exercise, name)
                assert verdict.passed, verdict.message
        finally:
            kernel.stop()


# ================================================================= the engine decides by type

def _engine_verdict(exercise: str, error: ErrorInfo) -> str:
    from grader.lessons import expectations

    exp = expectations(exercise)

    class Raising:
        def problem(self):
            return ""

        def scan(self, rules):
            return [], set()

        def helper(self, name, exp):
            return None

        def run(self, cases):
            return [Outcome(error=error) for _ in cases]

    verdict = judge(exp, Raising())
    assert not verdict.passed
    return verdict.message


def test_the_message_is_chosen_by_the_errors_type_never_by_its_text():
    words = "reads the blocks twice: the blocks come once, block 0 was still held"
    by_text = _engine_verdict("online_softmax_stats", ErrorInfo("RuntimeError", words))
    assert by_text.startswith("online_softmax_stats raised RuntimeError"), by_text
    by_type = _engine_verdict("online_softmax_stats", ErrorInfo("ReadTwice", "anything at all"))
    assert by_type.startswith(STREAM_READ_TWICE), by_type
    kept = _engine_verdict("online_softmax_stats", ErrorInfo("BlockKept", ""))
    assert kept.startswith(STREAM_KEPT), kept
    rows = _engine_verdict("attention_one_pass", ErrorInfo("ReadTwice", ""))
    assert rows.startswith(ROWS_READ_TWICE), rows


def test_only_an_exercise_that_hands_its_input_over_once_says_read_twice():
    """An exercise whose driver is not ``OnePass`` says what any error gets."""
    message = _engine_verdict("tiled_attention", ErrorInfo("ReadTwice", "a learner's own"))
    assert message.startswith("tiled_attention raised ReadTwice: a learner's own"), message


def test_an_exercise_whose_driver_brings_no_words_gets_plain_ones():
    from grader.learner.wording import describe_input

    case = Case(([np.ones(2), np.ones(1)],), note="two blocks", names=("xs",))
    for kind, spec in (("stream", {"stream": 0}), ("rows", {"rows": [0], "block": 1})):
        text = one_pass.message("f", spec, case, ErrorInfo("ReadTwice", "xs was read twice"))
        lines = text.splitlines()
        assert lines[0] == "f reads its input twice.", text
        assert lines[2].startswith("Diagnosis: the check hands the input over"), text
        assert "  What happened: xs was read twice." in lines, text
        assert describe_input(case) in text and lines[-1] == f"  {one_pass.SHOWN[kind]}", text


# ================================================================= the stream on its own

def blocks(n: int = 4) -> list[np.ndarray]:
    return [np.arange(3.0) + i for i in range(n)]


def _while_loop(stream):
    it, seen = iter(stream), 0
    while (b := next(it, None)) is not None:
        seen += len(b)
    return seen


@pytest.mark.parametrize("read", [
    lambda s: sum(len(b) for b in s),
    lambda s: functools.reduce(lambda n, b: n + len(b), s, 0),
    _while_loop,
    lambda s: sum(len(b) for _, b in zip(itertools.count(), s)),
    lambda s: sum(len(b) for b in map(np.asarray, s)),
], ids=["for", "reduce", "while-next", "zip", "map"])
def test_a_stream_read_once_in_any_style_gives_every_block(read):
    with watched([blocks()], {"stream": 0}, ("scores_blocks",)) as args:
        assert read(args[0]) == 12


@pytest.mark.parametrize("again", [
    lambda s: [list(s), list(s)],
    lambda s: [sum(1 for _ in s), next(s)],
    lambda s: [sum(1 for _ in s), iter(s)],
    lambda s: copy.copy(s),
    lambda s: copy.deepcopy(s),
], ids=["two loops", "next after the end", "iter after the end", "copy", "deepcopy"])
def test_reading_a_stream_again_raises_read_twice(again):
    stream = Stream(blocks(1))
    with pytest.raises(ReadTwice):
        again(stream)


@pytest.mark.parametrize("keep", [list, lambda s: [b for b in s]],
                         ids=["list()", "a list of the blocks"])
def test_keeping_the_blocks_raises_block_kept(keep):
    with pytest.raises(BlockKept, match="blocks 0 and 1 of blocks were still held when block 3"):
        keep(Stream(blocks(3), "blocks"))


@pytest.mark.parametrize("hold", ["first", "previous"])
def test_holding_one_earlier_block_is_one_pass(hold):
    """An answer may keep the first block as its starting point, or the one before as a
    comparison: one block held is no list of blocks to read again."""
    stream, first, previous, current = Stream(blocks(5), "blocks"), None, None, None
    for block in stream:
        if hold == "first":
            first = block if first is None else first
        else:  # when block i is asked for, block i - 2 is still held here
            previous, current = current, block
    assert (first if hold == "first" else previous) is not None


def test_a_tee_for_a_second_pass_raises_read_twice():
    """``itertools.tee`` copies an iterator that can be copied: a stream cannot."""
    with pytest.raises(ReadTwice, match="a copy of blocks was asked for"):
        itertools.tee(Stream(blocks(3), "blocks"))


def test_the_block_before_is_let_go_and_one_held_a_moment_longer_is_fine():
    stream, previous = Stream(blocks(5)), None
    for b in stream:       # the loop holds this block, `previous` the one before it
        previous = b
    assert previous is not None
    # a reference cycle that holds a block is not the answer keeping it
    stream = Stream(blocks(4))
    for b in stream:
        cycle: list = [b]
        cycle.append(cycle)


def test_a_kept_block_fails_even_when_the_answer_catches_the_error():
    with pytest.raises(BlockKept):
        with watched([blocks()], {"stream": 0}) as args:
            try:
                list(args[0])
            except ReadTwice:
                pass


@pytest.mark.parametrize("ask, what", [
    (len, r"len\(scores_blocks\)"), (lambda s: s[0], r"scores_blocks\[0\]"),
    (lambda s: s[-1], r"scores_blocks\[-1\]"), (bool, "a truth test"),
    (reversed, "reversed"), (lambda s: 1.0 in s, "x in scores_blocks"),
], ids=["len", "index", "last", "bool", "reversed", "in"])
def test_a_stream_has_no_length_or_index(ask, what):
    with pytest.raises(NotAList, match=what):
        ask(Stream(blocks(), "scores_blocks"))


def test_a_change_to_a_block_reaches_the_case_and_is_told():
    data = blocks(3)
    with watched([data], {"stream": 0}) as args:
        for b in args[0]:
            b -= b.max()
    assert all(b.max() == 0 for b in data)

    def subtracts(scores_blocks):
        m = s = None
        for b in scores_blocks:
            b -= 1.0
        return m, s

    message = failure("online_softmax_stats", subtracts)
    assert "changed its input `scores_blocks` in place" in message, message


def test_blocks_as_lists_are_lists_and_watched():
    kept = []
    with pytest.raises(BlockKept):
        for b in Stream([[1.0], [2.0], [3.0]], "blocks"):
            assert isinstance(b, list)
            kept.append(b)


def test_a_lazy_stream_is_read_block_by_block():
    made = one_pass._normal_blocks(3, [4, 5])
    with watched([made], {"stream": 0}) as args:
        assert [b.shape for b in args[0]] == [(5,)] * 4


def test_the_notebook_can_call_a_function_the_way_the_check_does():
    from courseware.long_attention import stream_of
    from grader import reference as ref

    assert ref.online_softmax_stats(stream_of(blocks())) == ref.online_softmax_stats(blocks())
    with pytest.raises(ReadTwice):
        namespace()["stats_iterate_twice"](stream_of(blocks()))


def test_the_given_line_reads_once_too():
    from courseware.long_attention import score_blocks

    given = score_blocks([[1.0, 2.0], [3.0]])
    assert [b.tolist() for b in given] == [[1.0, 2.0], [3.0]]
    with pytest.raises(ReadTwice, match="all read already"):
        list(given)


# ================================================================= counted rows on their own

def rows(n: int = 6, d: int = 2, window: int = 2, name: str = "K"):
    return counted(np.arange(float(n * d)).reshape(n, d), name, window)


def test_reading_each_block_once_and_the_current_block_again_is_one_pass():
    K, q = rows(), np.ones(2)
    for j in range(0, 6, 2):
        K[j:j + 2] @ q
        K[j:j + 2].sum()
        np.dot(K[j:j + 2], q)
        K[j + 1]                   # a view: nothing read yet
        float(K[j + 1, 0])         # one number, of the current block
    assert K._ledger.clock == 6


@pytest.mark.parametrize("read", [
    lambda K: [K[j:j + 2] @ np.ones(2) for j in range(4, -1, -2)],
    lambda K: [k @ np.ones(2) for k in K],
    lambda K: [Kb.max() for Kb in np.array_split(K, 3)],
    lambda K: [K[np.arange(j, j + 2)].sum() for j in range(0, 6, 2)],
    lambda K: [K.T[:, j:j + 2].sum() for j in range(0, 6, 2)],
    lambda K: [K[j:j + 2].view(np.ndarray).sum() for j in range(0, 6, 2)],
    lambda K: [np.einsum("kd->", K[j:j + 2]) for j in range(0, 6, 2)],
    lambda K: (K.shape, len(K), np.shape(K), np.zeros_like(K[0]), np.result_type(K, 1.0),
               repr(K), [K[j:j + 2] @ np.ones(2) for j in range(0, 6, 2)]),
], ids=["last block first", "row by row", "array_split", "index arrays", "a transposed view",
        "view(np.ndarray)", "einsum", "metadata, then block by block"])
def test_one_pass_in_any_style_is_not_a_second_pass(read):
    read(rows())


@pytest.mark.parametrize("again", [
    lambda K: [K[j:j + 2].sum() for j in (0, 2, 4, 0)],
    lambda K: [max(k.max() for k in K), [k.sum() for k in K]],
    lambda K: [K[[0, 5]].sum(), K[1:3].sum(), K[3:5].sum(), K[0].sum()],
    lambda K: [float(K[0, 0]), K[2:4].sum(), K[4:6].sum(), float(K[0, 1])],
    lambda K: [np.concatenate([K[0:2], K[2:4]]), K[4:6].sum(), K[0].sum()],
], ids=["a block again after moving on", "rows twice", "an index array first",
        "one number again after moving on", "concatenate then back"])
def test_going_back_to_earlier_rows_raises_read_twice(again):
    with pytest.raises(ReadTwice, match=r"in K, rows? 0"):
        again(rows())


@pytest.mark.parametrize("everything", [
    lambda K: K @ np.ones(2),
    lambda K: np.isnan(K).any(),
    lambda K: K.copy(),
    lambda K: K.tolist(),
    lambda K: K.T.dot(np.ones(6)),
    lambda K: K.view(np.ndarray).max(),
    lambda K: K[1:5].sum(),
    lambda K: K[::2].sum(),
    lambda K: [Kb.max() for Kb in np.array_split(K, 2)],
], ids=["a product", "a check of every row", "a copy", "tolist", "a product with K.T",
        "view(np.ndarray)", "four rows of a block of two", "every other row",
        "two blocks of three"])
def test_reading_more_than_a_block_in_one_step_raises_too_many_rows(everything):
    with pytest.raises(TooManyRows, match=r"in K, rows \d+ to \d+ were read in one step: \d+ "
                                          r"rows, where a step reads at most block = 2"):
        everything(rows())


def test_the_window_is_the_block_size():
    K = rows(window=4)
    K[0:2].sum(), K[2:4].sum(), K[0:2].sum()          # within one block of 4
    with pytest.raises(ReadTwice):
        K[4:6].sum(), K[0:2].sum()


def test_a_row_gives_numbers_and_each_is_read():
    K = rows()
    numbers = [x for x in K[0]]
    assert numbers == [0.0, 1.0] and all(type(x) is np.float64 for x in numbers)
    K[2:4].sum(), K[4:6].sum()
    with pytest.raises(ReadTwice, match="row 0 was read again"):
        [x for x in K[0]]


def test_results_are_numpys_own_arrays():
    assert type(rows()[0:2] @ np.ones(2)) is np.ndarray
    assert type(rows()[0:2].sum(axis=0)) is np.ndarray
    assert type(np.exp(rows()[2:4])) is np.ndarray
    assert type(rows()[[1, 2]]) is np.ndarray


def test_arrays_whose_rows_interleave_are_handed_over_as_they_are():
    fortran = np.asfortranarray(np.ones((4, 3)))
    assert counted(fortran, "K", 2) is fortran
    assert counted(np.ones(3), "q", 2).__class__ is np.ndarray


def test_a_second_pass_over_rows_fails_even_when_caught():
    K = np.arange(12.0).reshape(6, 2)
    with pytest.raises(ReadTwice, match="in K"):
        with watched([np.ones(2), K, K.copy(), 2], {"rows": [1, 2], "block": 3},
                     ("q", "K", "V", "block")) as args:
            for j in range(0, 6, 2):
                args[1][j:j + 2].sum()
            try:
                args[1][0:2].sum()
            except ReadTwice:
                pass


def test_too_many_rows_fails_even_when_caught():
    K = np.arange(12.0).reshape(6, 2)
    with pytest.raises(TooManyRows, match="rows 0 to 5 were read in one step"):
        with watched([np.ones(2), K, K.copy(), 2], {"rows": [1, 2], "block": 3},
                     ("q", "K", "V", "block")) as args:
            try:
                args[1].sum()
            except TooManyRows:
                pass


def test_the_ledger_is_made_before_the_call_and_costs_the_answer_nothing():
    from grader.learner.env import peak_bytes

    K = np.ones((1 << 16, 2))
    args, watch = one_pass.hand_over([np.ones(2), K, K.copy(), 4096], {"rows": [1, 2], "block": 3})
    honest = namespace()["one_pass_slices"]
    _, peak = peak_bytes(honest, *args)
    watch.close()
    assert watch.error is None
    assert peak < 200_000, peak      # far less than one ledger (256 KiB)
