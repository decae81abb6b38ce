"""Lesson 07: the online softmax, one-pass and tiled attention, the KV cache and decoding.

First grader.check: correct code written other ways passes (a log-space running sum, a
values-and-ones trick, key tiles in the outer loop, a preallocated cache, decoding through
lesson 04's masked attention); shortcuts are named; the memory budget catches a function
that holds every score at once, or a copy of K; a learner's wrong answers, written as a
learner would write them (not as the reference's knobs), get their named diagnoses;
decode_step is checked with the learner's own KVCache, found where the answer lives (a
notebook's namespace, or the kernel's at grading); messages hand over no solution line.
Then the references against independent oracles: torch's scaled_dot_product_attention,
torch.logsumexp, lesson 02's softmax and attention, lesson 04's causal masked attention,
on property-based inputs. Last, the notebook's helpers: the tile picture agrees with the
count, the memory and time measurements measure, and the grading budget is smaller.
"""
from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from courseware import long_attention as la
from courseware.long_attention import (decode_inputs, key_value_rows, one_query, score_blocks,
                                       tile_inputs)
from grader import CheckFailed, check
from grader import reference as ref
from grader.learner import agent
from grader.learner.env import peak_bytes
from grader.learner.validation import positive_int
from stated_rules import broken

LESSON = "07_long_attention"
EXERCISES = ["online_softmax_stats", "attention_one_pass", "tiled_attention", "KVCache",
             "decode_step"]


def lesson_ref():
    from grader.lessons import lesson_module

    return lesson_module(LESSON, "reference")


def failure(name, fn, hidden=False) -> str:
    with pytest.raises(CheckFailed) as info:
        check(name, fn, hidden=hidden)
    return str(info.value)


def diagnosis(exercise: str, mistake: str) -> str:
    """The message of the catalogued mistake ``mistake`` of ``exercise``."""
    from grader.lessons import get

    return next(m.message for m in get(exercise).misconceptions if m.name == mistake)


def diagnoses(exercise: str, mistake: str) -> list[str]:
    """The messages of the mistakes called ``mistake`` of ``exercise``: catalogued, or
    edits of the error model (tests/test_rules_dropped.py), whose names say the rule and
    the site but not the edit's details (a term or a factor left out)."""
    from grader.lessons import get
    from grader.lessons.error_model import model_mistakes

    return [m.message for m in [*get(exercise).misconceptions, *model_mistakes(get(exercise))]
            if m.name == mistake]


def sdpa(Q, K, V, causal=False) -> np.ndarray:
    t = [torch.from_numpy(np.ascontiguousarray(a, dtype=np.float64)) for a in (Q, K, V)]
    return F.scaled_dot_product_attention(*t, is_causal=causal).numpy()


# ================================================================= correct, written differently

def stats_in_log_space(scores_blocks):
    """A running log-sum-exp, L = m + log s, combined with np.logaddexp."""
    m, L = -np.inf, -np.inf
    for block in score_blocks(scores_blocks):
        m = max(m, float(block.max()))
        L = np.logaddexp(L, np.logaddexp.reduce(block))
    return m, float(np.exp(L - m))


def one_pass_with_a_column_of_ones(q, K, V, block):
    """The sum rides along as an extra value column: [V, 1] gives numerator and sum at once."""
    q, K, V = one_query(q, K, V)
    block = positive_int(block, "block")
    m, acc = -np.inf, np.zeros(V.shape[1] + 1)
    for start in range(0, len(K), block):
        s = K[start:start + block] @ q / np.sqrt(len(q))
        new = max(m, s.max())
        values = np.hstack([V[start:start + block], np.ones((len(s), 1))])
        acc = acc * np.exp(m - new) + np.exp(s - new) @ values
        m = new
    return acc[:-1] / acc[-1]


def tiled_with_key_tiles_outside(Q, K, V, block_q, block_k, causal=False):
    """Key tiles in the outer loop; every query row keeps its running state throughout."""
    Q, K, V, batch = tile_inputs(Q, K, V, causal)
    block_q, block_k = positive_int(block_q, "block_q"), positive_int(block_k, "block_k")
    T_q, T_k = Q.shape[-2], K.shape[-2]
    m = np.full(batch + (T_q, 1), -np.inf)
    s = np.zeros(batch + (T_q, 1))
    o = np.zeros(batch + (T_q, V.shape[-1]))
    skipped = 0
    for j in range(0, T_k, block_k):
        for i in range(0, T_q, block_q):
            rows, cols = np.arange(i, min(i + block_q, T_q)), np.arange(j, min(j + block_k, T_k))
            if causal and cols[0] > rows[-1]:
                skipped += 1
                continue
            S = np.einsum("...qd,...kd->...qk", Q[..., rows, :], K[..., cols, :])
            S = S / np.sqrt(Q.shape[-1])
            if causal:
                S = np.where(cols[None, :] > rows[:, None], -np.inf, S)
            new = np.maximum(m[..., rows, :], S.max(axis=-1, keepdims=True))
            factor = np.exp(m[..., rows, :] - new)
            p = np.exp(S - new)
            s[..., rows, :] = s[..., rows, :] * factor + p.sum(axis=-1, keepdims=True)
            o[..., rows, :] = o[..., rows, :] * factor + p @ V[..., cols, :]
            m[..., rows, :] = new
    return o / s, skipped


class KVCache:
    """A preallocated cache that doubles its capacity (what inference engines do). This
    module's decode_step variants find it by name, as a notebook's decode_step finds the
    learner's."""

    def __init__(self):
        self._k = self._v = None
        self._n = 0

    def __len__(self):
        return self._n

    def append(self, k, v):
        k, v = key_value_rows(k, v)
        if self._k is None:
            self._k = np.empty((max(4, len(k)), k.shape[1]), dtype=k.dtype)
            self._v = np.empty((max(4, len(v)), v.shape[1]), dtype=v.dtype)
        if k.shape[1] != self._k.shape[1] or v.shape[1] != self._v.shape[1]:
            raise ValueError(f"this cache holds keys of width {self._k.shape[1]} and values of "
                             f"width {self._v.shape[1]}, got {k.shape} and {v.shape}")
        if self._n + len(k) > len(self._k):
            grow = max(2 * len(self._k), self._n + len(k))
            self._k = np.concatenate([self._k[:self._n], np.empty((grow - self._n, k.shape[1]))])
            self._v = np.concatenate([self._v[:self._n], np.empty((grow - self._n, v.shape[1]))])
        self._k[self._n:self._n + len(k)] = k
        self._v[self._n:self._n + len(v)] = v
        self._n += len(k)

    @property
    def keys(self):
        if not self._n:
            raise ValueError("the cache is empty")
        return self._k[:self._n]

    @property
    def values(self):
        if not self._n:
            raise ValueError("the cache is empty")
        return self._v[:self._n]


def decode_through_lesson_04(x_t, cache, W_q, W_k, W_v):
    """Lesson 04's masked attention with the last rows of its causal mask."""
    x, W_q, W_k, W_v = decode_inputs(x_t, cache, W_q, W_k, W_v)
    X = np.atleast_2d(x)
    t = len(cache)
    cache.append(X @ W_k, X @ W_v)
    rows = ref.causal_mask(len(cache))[t:]
    out, _ = ref.masked_attention(X @ W_q, cache.keys, cache.values, rows)
    return out if x.ndim == 2 else out[0]


@pytest.mark.parametrize("name, fn", [
    ("online_softmax_stats", stats_in_log_space),
    ("attention_one_pass", one_pass_with_a_column_of_ones),
    ("tiled_attention", tiled_with_key_tiles_outside),
    ("KVCache", KVCache),
    ("decode_step", decode_through_lesson_04),
])
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_correct_alternatives_pass(name, fn, hidden, capsys):
    check(name, fn, hidden=hidden)
    assert f"✓ {name}" in capsys.readouterr().out


def test_the_reference_passes_with_the_reference_cache(capsys):
    for name in EXERCISES:
        check(name, getattr(ref, name))
    assert capsys.readouterr().out.count("✓") == len(EXERCISES)


def test_a_stub_is_not_implemented_for_every_exercise():
    def stub(*args, **kwargs):
        raise NotImplementedError()

    class StubCache:
        def __init__(self):
            raise NotImplementedError()

    for name in ["online_softmax_stats", "attention_one_pass", "tiled_attention", "decode_step"]:
        assert "not implemented yet" in failure(name, stub)
    assert "not implemented yet" in failure("KVCache", StubCache)


# ================================================================= shortcuts and the memory budget

def stats_by_joining(scores_blocks):
    row = np.concatenate(list(score_blocks(scores_blocks)))
    return float(row.max()), float(np.exp(row - row.max()).sum())


def one_pass_from_torch(q, K, V, block):
    q, K, V = one_query(q, K, V)
    t = [torch.from_numpy(np.ascontiguousarray(a)) for a in (q[None], K, V)]
    return F.scaled_dot_product_attention(*t)[0].numpy()


def tiled_with_torch_softmax(Q, K, V, block_q, block_k, causal=False):
    Q, K, V, _ = tile_inputs(Q, K, V, causal)
    S = torch.from_numpy(np.ascontiguousarray(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])))
    return torch.softmax(S, dim=-1).numpy() @ V, 0


@pytest.mark.parametrize("name, fn, named", [
    ("online_softmax_stats", stats_by_joining, "np.concatenate"),
    ("attention_one_pass", one_pass_from_torch, "scaled_dot_product_attention"),
    ("tiled_attention", tiled_with_torch_softmax, "a library softmax"),
])
def test_shortcuts_are_found_and_named(name, fn, named):
    message = failure(name, fn)
    assert "asks you to do by hand" in message and named in message


def one_pass_with_a_copy_of_K(q, K, V, block):
    """Streams correctly, but first copies K: O(T_k) extra memory after all."""
    q, K, V = one_query(q, K, V)
    return one_pass_with_a_column_of_ones(q, np.array(K) * 1.0, V, block)


def one_pass_in_two_passes(q, K, V, block):
    """Every score first (to find the maximum), then a second pass: right, but O(T_k).
    Through np.asarray, which the row ledger does not see (K @ q itself is one read of
    every row, told apart by the ledger: tests/test_one_pass.py)."""
    q, K, V = one_query(q, K, V)
    scores = np.asarray(K) @ q / np.sqrt(len(q))
    m = scores.max()
    o, s = np.zeros(V.shape[1]), 0.0
    for j in range(0, len(K), block):
        p = np.exp(scores[j:j + block] - m)
        s, o = s + p.sum(), o + p @ V[j:j + block]
    return o / s


def tiled_all_at_once(Q, K, V, block_q, block_k, causal=False):
    """Right output and count, but the whole score matrix at once."""
    Q, K, V, _ = tile_inputs(Q, K, V, causal)
    positive_int(block_q, "block_q"), positive_int(block_k, "block_k")
    mask = np.tri(Q.shape[-2], K.shape[-2], dtype=bool) if causal else True
    out, _ = ref.masked_attention(Q, K, V, mask if causal else None)
    skipped = (la.tile_kinds(Q.shape[-2], block_q, block_k) == "skip").sum() if causal else 0
    return out, int(skipped)


@pytest.mark.parametrize("name, fn", [
    ("attention_one_pass", one_pass_with_a_copy_of_K),
    ("attention_one_pass", one_pass_in_two_passes),
    ("tiled_attention", tiled_all_at_once),
])
def test_the_memory_budget_catches_what_holds_every_score_or_a_copy(name, fn):
    message = failure(name, fn)
    assert "with a memory budget" in message, message
    assert re.search(r"got 'more than \d+ KiB', expected 'at most \d+ KiB'", message), message
    assert "Diagnosis:" in message and "extra memory" in message
    # Nothing else was wrong: the values on every other case were right.
    assert message.count("is not right yet") == 1


def test_the_memory_cases_are_sorted_last():
    """Each streamed exercise has a case with a memory budget (online_softmax_stats two: a
    few large blocks, and many small ones), after every case without one."""
    from grader.lessons import expectations

    for name, count in (("online_softmax_stats", 2), ("attention_one_pass", 1), ("tiled_attention", 1)):
        for hidden in (False, True):
            cases = expectations(name, hidden).cases
            assert all(c.build.memory_budget for c in cases[-count:]), name
            assert all(not c.build.memory_budget for c in cases[:-count]), name


def test_peak_bytes_counts_what_a_call_makes_and_not_what_existed():
    big = np.ones(10**6)

    def makes_a_copy(a):
        return float((a * 2).sum())

    def reads_only(a):
        return float(a[:10].sum())

    assert peak_bytes(makes_a_copy, big)[1] >= big.nbytes
    assert peak_bytes(reads_only, big)[1] < 10_000
    assert peak_bytes(lambda: np.zeros(10**5))[1] >= 8 * 10**5  # what the result keeps counts


# ================================================================= a learner's wrong answers

def stats_sum_not_rescaled(scores_blocks):
    m, s = -np.inf, 0.0
    for block in score_blocks(scores_blocks):
        m = max(m, block.max())
        s += np.exp(block - m).sum()
    return m, s


def stats_max_from_zero(scores_blocks):
    m, s = 0.0, 0.0
    for block in score_blocks(scores_blocks):
        new = max(m, block.max())
        s = s * np.exp(m - new) + np.exp(block - new).sum()
        m = new
    return m, s


def _one_pass_learner(q, K, V, block, *, rescale_output=True, divide_each_time=False,
                      start=-np.inf):
    q, K, V = one_query(q, K, V)
    m, s, o = start, 0.0, np.zeros(V.shape[1])
    for j in range(0, len(K), block):
        x = K[j:j + block] @ q / np.sqrt(len(q))
        new = max(m, x.max())
        e = np.exp(x - new)
        s = s * np.exp(m - new) + e.sum()
        o = (o * np.exp(m - new) if rescale_output else o) + e @ V[j:j + block]
        if divide_each_time:
            o = o / s
        m = new
    with np.errstate(invalid="ignore"):
        return o if divide_each_time else o / s


def one_pass_output_not_rescaled(q, K, V, block):
    return _one_pass_learner(q, K, V, block, rescale_output=False)


def one_pass_divided_inside(q, K, V, block):
    return _one_pass_learner(q, K, V, block, divide_each_time=True)


def one_pass_max_from_zero(q, K, V, block):
    return _one_pass_learner(q, K, V, block, start=0.0)


def _tiled_learner(Q, K, V, block_q, block_k, causal, skip):
    Q, K, V, batch = tile_inputs(Q, K, V, causal)
    T = Q.shape[-2]
    out, skipped = np.zeros(batch + (T, V.shape[-1])), 0
    for i in range(0, T, block_q):
        rows = np.arange(i, min(i + block_q, T))
        m = np.full(batch + (len(rows), 1), -np.inf)
        s, o = np.zeros(batch + (len(rows), 1)), np.zeros(batch + (len(rows), V.shape[-1]))
        for j in range(0, K.shape[-2], block_k):
            cols = np.arange(j, min(j + block_k, K.shape[-2]))
            if causal and skip(rows, cols):
                skipped += 1
                continue
            S = Q[..., rows, :] @ np.swapaxes(K[..., cols, :], -1, -2) / np.sqrt(Q.shape[-1])
            if causal:
                S = np.where(cols[None, :] <= rows[:, None], S, -np.inf)
            new = np.maximum(m, S.max(axis=-1, keepdims=True))
            with np.errstate(invalid="ignore"):
                p = np.exp(S - new)
                s = s * np.exp(m - new) + p.sum(axis=-1, keepdims=True)
                o = o * np.exp(m - new) + p @ V[..., cols, :]
            m = new
        with np.errstate(invalid="ignore", divide="ignore"):
            out[..., rows, :] = o / s
    return out, skipped


def tiled_skipping_from_the_diagonal(Q, K, V, block_q, block_k, causal=False):
    return _tiled_learner(Q, K, V, block_q, block_k, causal, lambda rows, cols: cols[0] >= rows[0])


def tiled_masking_only(Q, K, V, block_q, block_k, causal=False):
    return _tiled_learner(Q, K, V, block_q, block_k, causal, lambda rows, cols: False)


def _decode_learner(x_t, cache, W_q, W_k, W_v, *, append_first=True, strict=False):
    x, W_q, W_k, W_v = decode_inputs(x_t, cache, W_q, W_k, W_v)
    X = np.atleast_2d(x)
    t = len(cache)
    if append_first:
        cache.append(X @ W_k, X @ W_v)
    K, V = cache.keys, cache.values
    S = X @ W_q @ K.T / np.sqrt(W_q.shape[1])
    pos = t + np.arange(len(X))[:, None]
    keys = np.arange(len(K))[None, :]
    S = np.where(keys < pos if strict else keys <= pos, S, -np.inf)
    with np.errstate(invalid="ignore"):
        w = np.exp(S - S.max(axis=-1, keepdims=True))
        out = w / w.sum(axis=-1, keepdims=True) @ V
    if not append_first:
        cache.append(X @ W_k, X @ W_v)
    return out if x.ndim == 2 else out[0]


def decode_append_after(x_t, cache, W_q, W_k, W_v):
    return _decode_learner(x_t, cache, W_q, W_k, W_v, append_first=False)


def decode_strictly_before(x_t, cache, W_q, W_k, W_v):
    return _decode_learner(x_t, cache, W_q, W_k, W_v, strict=True)


@pytest.mark.parametrize("name, fn, mistake", [
    ("online_softmax_stats", stats_sum_not_rescaled,
     "another value used in the factor that rescales what is kept so far"),
    ("online_softmax_stats", stats_max_from_zero,
     "initial value changed in the running maximum's starting value"),
    ("attention_one_pass", one_pass_output_not_rescaled,
     "operand left out in the running output's update"),
    ("attention_one_pass", one_pass_divided_inside, "divided inside the loop"),
    ("attention_one_pass", one_pass_max_from_zero, "maximum starts at 0"),
    ("tiled_attention", tiled_skipping_from_the_diagonal, "diagonal tile dropped"),
    ("tiled_attention", tiled_masking_only, "masked, not skipped"),
    ("decode_step", decode_append_after, "appended after attending"),
    ("decode_step", decode_strictly_before, "a token does not see itself"),
])
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_a_learners_wrong_answer_gets_its_named_diagnosis(name, fn, mistake, hidden):
    message = failure(name, fn, hidden)
    assert any(f"Diagnosis: {said}" in message for said in diagnoses(name, mistake)), message


def test_the_issues_catalogue_is_all_there():
    """Each mistake of the lesson's issue has its exercise's diagnosis: catalogued, or
    named by an edit of the error model (tests/test_rules_dropped.py)."""
    from grader.lessons import get

    wanted = {
        "online_softmax_stats": {"sum not rescaled", "maximum starts at 0"},
        "attention_one_pass": {"sum not rescaled", "output not rescaled", "maximum starts at 0",
                               "divided inside the loop"},
        "tiled_attention": {"diagonal tile dropped", "output not rescaled",
                            "divided inside the loop"},
        "decode_step": {"appended after attending", "a token does not see itself"},
    }
    from test_rules_dropped import DROPPED  # named by an edit of the error model instead

    for name, mistakes in wanted.items():
        named = {m.name for m in get(name).misconceptions} | {d[2] for d in DROPPED if d[1] == name}
        assert mistakes <= named, name


def test_no_message_or_hint_holds_a_line_of_the_lessons_solutions():
    """Diagnoses and hints point at the idea and the failing input, never at code from the
    solution (lines of 20 characters or more, whitespace ignored, as the kit test counts)."""
    from grader.lessons import get

    from sources import handed_over, solution_fragments

    assert len(solution_fragments(LESSON)) > 30  # the search has lines to find
    for name in EXERCISES:
        ex = get(name)
        for text in [ex.hint, *(m.message for m in ex.misconceptions)]:
            assert not handed_over(text, LESSON), (name, text)


# ================================================================= the learner's own cache

def test_decode_step_is_checked_with_the_cache_where_the_answer_lives(capsys):
    """The same decode_step passes with a right KVCache beside it and fails with a cache
    that forgets its first position: the check ran the cache of the answer's namespace."""
    body = ("def decode_step(x_t, cache, W_q, W_k, W_v):\n"
            "    return decode_through_lesson_04(x_t, cache, W_q, W_k, W_v)\n")
    good = {"decode_through_lesson_04": decode_through_lesson_04, "KVCache": KVCache}
    exec(body, good)
    check("decode_step", good["decode_step"])
    assert "✓ decode_step" in capsys.readouterr().out

    class Forgetful(KVCache):
        @property
        def keys(self):
            return super().keys[1:] if len(self) > 1 else super().keys

        @property
        def values(self):
            return super().values[1:] if len(self) > 1 else super().values

    bad = {"decode_through_lesson_04": decode_through_lesson_04, "KVCache": Forgetful}
    exec(body, bad)
    message = failure("decode_step", bad["decode_step"])
    assert "cache =\n    <a KVCache of yours, after one append of 1 position" in message, message


def test_decode_step_says_when_the_cache_is_missing_or_unfinished():
    body = ("def decode_step(x_t, cache, W_q, W_k, W_v):\n"
            "    return decode_through_lesson_04(x_t, cache, W_q, W_k, W_v)\n")
    missing = {"decode_through_lesson_04": decode_through_lesson_04}
    exec(compile(body, "<notebook cell>", "exec"), missing)
    assert "there is no KVCache in your notebook" in failure("decode_step", missing["decode_step"])

    unfinished = {"decode_through_lesson_04": decode_through_lesson_04, "np": np}
    stub = "class KVCache:\n    def __init__(self):\n        raise NotImplementedError()\n"
    exec(compile(body + stub, "<notebook cell>", "exec"), unfinished)
    message = failure("decode_step", unfinished["decode_step"])
    assert message.startswith("decode_step calls your KVCache, which is not implemented yet")


def test_a_decode_step_that_never_fills_the_cache_is_told_so():
    def never_appends(x_t, cache, W_q, W_k, W_v):
        x, W_q, W_k, W_v = decode_inputs(x_t, cache, W_q, W_k, W_v)
        X = np.atleast_2d(x)
        t = len(cache)
        K = np.concatenate([cache.keys, X @ W_k]) if t else X @ W_k
        V = np.concatenate([cache.values, X @ W_v]) if t else X @ W_v
        out, _ = ref.masked_attention(X @ W_q, K, V, ref.causal_mask(len(K))[t:])
        return out if x.ndim == 2 else out[0]

    message = failure("decode_step", never_appends)
    assert "['cache.keys']: shape is" in message
    assert "Diagnosis: in cache.keys, along axis -2, your result holds only the first 1 of the " \
           "expected 2 rows: the later ones are missing" in message


def test_a_cache_with_keys_as_a_method_is_told_what_it_returned():
    class MethodKeys(KVCache):
        def keys(self):  # noqa: D102 (a method where an attribute is read)
            return KVCache.keys.fget(self)

    message = failure("KVCache", MethodKeys)
    assert "['keys']: returned a method, expected numbers" in message, message
    assert "Your KVCache gave:" in message and "Your function returned" not in message
    assert "read as attributes" in message


def test_a_cache_that_accepts_a_value_per_key_mismatch_is_told_to_reject_it():
    class Trusting(KVCache):
        def append(self, k, v):  # no given line: k and v are never compared
            k, v = np.atleast_2d(k), np.atleast_2d(v)
            self._k = k if self._k is None else np.concatenate([self._k[:self._n], k])
            self._v = v if self._v is None else np.concatenate([self._v[:self._n], v])
            self._n = len(self._k)

    message = failure("KVCache", Trusting)
    assert ("should reject this input with a ValueError, because k holds 2 keys but v holds 3 "
            "values") in message, message


def test_a_cache_whose_len_is_wrong_fails():
    class CountsAppends(KVCache):
        calls = 0

        def append(self, k, v):
            super().append(k, v)
            self.calls += 1

        def __len__(self):
            return self.calls

    message = failure("KVCache", CountsAppends)
    assert "['len']: got" in message, message


def test_a_failing_cache_is_shown_as_the_code_that_made_it():
    class ValuesAreKeys(KVCache):
        @property
        def values(self):
            return self.keys

    message = failure("KVCache", ValuesAreKeys)
    assert "steps = " not in message and "= cache =" not in message, message
    shown = message.split("Smallest input where it goes wrong")[1].splitlines()
    assert shown[1] == "  cache = KVCache()", message
    assert re.fullmatch(r"  cache\.append\(k, v\)    # call 1, one position:", shown[2]), message
    assert re.fullmatch(r"      k = \[.+\], v = \[.+\]", shown[3])  # a small pair on one line


def test_blocks_are_shown_one_array_at_a_time_and_numbers_as_numbers():
    def no_rescaling(scores_blocks):
        m, s = -np.inf, 0.0
        for block in score_blocks(scores_blocks):
            m = max(m, block.max())
            s = s + np.exp(block - m).sum()
        return m, s

    message = failure("online_softmax_stats", no_rescaling)
    listed = re.search(r"scores_blocks \(a Python list of (\d+) arrays?\) =\n((?:    .*\n)+)", message)
    assert listed, message
    items = re.findall(r"    item \d+:\n      \[[^\]]*\]\n      \(shape (\d+), dtype float64\)",
                       listed.group(2))
    assert len(items) == int(listed.group(1)) > 1, message
    assert "(a Python list) =" not in message

    def nan_sum(scores_blocks):
        return max(block.max() for block in score_blocks(scores_blocks)), np.float64("nan")

    message = failure("online_softmax_stats", nan_sum)
    assert "np.float64" not in message and "got NaN where a number was expected" in message, message
    assert "Your function returned:\n    item 1:\n      nan\n" in message, message


class _Kernel:
    """The kernel side of grading, in this process: every request goes through the real
    agent (``grader.learner.agent.handle``) over a namespace, as in a learner's kernel."""

    def __init__(self, namespace: dict):
        self.ns, self.requests = namespace, 0

    def request(self, code: str, index: int, deadline: float, mime: str):
        from grader.grading.notebook.kernel import CellRun

        self.requests += 1
        payload = code[code.index("globals(), ") + len("globals(), "):-1]
        return CellRun(index, "ok"), agent.handle(self.ns, eval(payload))


def _graded(namespace: dict, source: str, exercise: str, target: str, hidden: bool = False):
    from grader.course import CheckCall
    from grader.grading.notebook.bridge import Session
    from grader.grading.notebook.trusted import Checker
    from grader.learner.shortcuts import SourceReader

    reader = SourceReader()
    reader.read(source, "<cell answer>")
    return Checker._check(CheckCall(exercise, target, hidden), Session(_Kernel(namespace), 0, 1e18),
                          reader.scope())


GRADED_SOURCE = '''
import numpy as np
from courseware.long_attention import decode_inputs, key_value_rows


class KVCache:
    def __init__(self):
        self.k, self.v = [], []

    def __len__(self):
        return sum(len(b) for b in self.k)

    def append(self, k, v):
        k, v = key_value_rows(k, v)
        self.k.append(k)
        self.v.append(v)

    @property
    def keys(self):
        return np.concatenate(self.k)

    @property
    def values(self):
        return np.concatenate(self.v)


def decode_step(x_t, cache, W_q, W_k, W_v):
    x, W_q, W_k, W_v = decode_inputs(x_t, cache, W_q, W_k, W_v)
    X = np.atleast_2d(x)
    t = len(cache)
    cache.append(X @ W_k, X @ W_v)
    S = X @ W_q @ cache.keys.T / np.sqrt(W_q.shape[1])
    S = np.where(np.arange(len(cache))[None, :] <= t + np.arange(len(X))[:, None], S, -np.inf)
    W = np.exp(S - S.max(axis=-1, keepdims=True))
    out = W / W.sum(axis=-1, keepdims=True) @ cache.values
    return out if x.ndim == 2 else out[0]
'''


@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_at_grading_the_cache_comes_from_the_kernels_namespace(hidden):
    """Through the trusted checker and the bridge (twins included), decode_step runs with
    the KVCache of the namespace the kernel holds; with a broken one there, it fails."""
    namespace: dict = {}
    exec(compile(GRADED_SOURCE, "<answer>", "exec"), namespace)
    for exercise in ("KVCache", "decode_step"):
        verdict = _graded(namespace, GRADED_SOURCE, exercise, exercise, hidden)
        assert verdict.passed, verdict.message

    broken = GRADED_SOURCE.replace("self.k.append(k)", "self.k.append(k[::-1])")
    namespace = {}
    exec(compile(broken, "<answer>", "exec"), namespace)
    verdict = _graded(namespace, broken, "decode_step", "decode_step", hidden)
    assert not verdict.passed and "a KVCache of yours" in verdict.message


# ================================================================= the recording alone

RECORDED_ONLY = GRADED_SOURCE + '''
import sys
from grader import check
from courseware.long_attention import one_query
from grader.learner.validation import positive_int


def attention_one_pass(q, K, V, block):
    q, K, V = one_query(q, K, V)
    block = positive_int(block, "block")
    m, s, o = -np.inf, 0.0, np.zeros(V.shape[1])
    for j in range(0, len(K), block):
        x = K[j:j + block] @ q / np.sqrt(len(q))
        new = max(m, x.max())
        e = np.exp(x - new)
        s, o, m = s * np.exp(m - new) + e.sum(), o * np.exp(m - new) + e @ V[j:j + block], new
    return o / s


check("KVCache", KVCache)
check("decode_step", decode_step)
check("attention_one_pass", attention_one_pass)
print(sorted(m for m in sys.modules if (m.startswith('grader.lessons.') and m.count('.') >= 3 and not m.endswith('.learner')) or m.startswith('grader.reference')))
'''


def test_lesson_07_checks_run_from_the_recording_alone():
    """A released lesson-07 notebook checks the cache (object driver), decode_step (the
    learner's own cache) and one-pass attention (generated arrays, the memory budget)
    with its recording and the learner's side only."""
    out = subprocess.run([sys.executable, "-c", RECORDED_ONLY], capture_output=True, text=True,
                         cwd="/")
    assert out.returncode == 0, out.stderr
    for name in ("KVCache", "decode_step", "attention_one_pass"):
        assert f"✓ {name}" in out.stdout, out.stdout
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout


# ================================================================= the references against oracles

finite = st.floats(-30, 30, allow_nan=False, width=64)


@st.composite
def score_rows(draw):
    sizes = draw(st.lists(st.integers(1, 6), min_size=1, max_size=6))
    shift = draw(st.sampled_from([0.0, 1000.0, -1000.0]))
    blocks = [draw(arrays(np.float64, (n,), elements=finite)) + shift for n in sizes]
    masked = draw(st.lists(st.booleans(), min_size=sum(sizes), max_size=sum(sizes)))
    flat = np.concatenate(blocks)
    if not all(masked):   # some scores masked to -inf, at least one left
        flat = np.where(masked, -np.inf, flat)
    return np.split(flat, np.cumsum(sizes)[:-1])


@settings(max_examples=150, deadline=None)
@given(blocks=score_rows())
def test_online_stats_equal_the_two_pass_values_and_torch_logsumexp(blocks):
    m, s = ref.online_softmax_stats(blocks)
    row = np.concatenate(blocks)
    assert m == row.max()
    np.testing.assert_allclose(s, np.exp(row - row.max()).sum(), rtol=1e-12)
    np.testing.assert_allclose(m + np.log(s), torch.logsumexp(torch.from_numpy(row), 0).item(),
                               rtol=1e-12, atol=1e-12)
    # ...and lesson 02's softmax: exp(x - m) / s is it.
    np.testing.assert_allclose(np.exp(row - m) / s, ref.softmax(row), rtol=1e-12, atol=1e-300)


@st.composite
def one_query_inputs(draw):
    t_k, d_k, d_v = draw(st.integers(1, 12)), draw(st.integers(1, 4)), draw(st.integers(1, 3))
    q = draw(arrays(np.float64, (d_k,), elements=finite))
    K = draw(arrays(np.float64, (t_k, d_k), elements=finite))
    V = draw(arrays(np.float64, (t_k, d_v), elements=finite))
    return q, K, V, draw(st.integers(1, t_k + 2))


@settings(max_examples=150, deadline=None)
@given(data=one_query_inputs())
def test_attention_one_pass_equals_torch_and_lesson_02_for_every_block(data):
    q, K, V, block = data
    mine = ref.attention_one_pass(q, K, V, block)
    np.testing.assert_allclose(mine, sdpa(q[None], K, V)[0], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(mine, ref.attend_one_query(q, K, V), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("centre", [1000.0, -1000.0])
def test_attention_one_pass_is_stable_near_plus_and_minus_1000(centre):
    rng = np.random.default_rng(7)
    K, V = centre + rng.normal(size=(9, 1)), rng.normal(size=(9, 2))
    for block in (1, 2, 9):
        out = ref.attention_one_pass(np.ones(1), K, V, block)
        np.testing.assert_allclose(out, sdpa(np.ones((1, 1)), K, V)[0], rtol=1e-9)
        assert np.isfinite(out).all()


@st.composite
def tiled_inputs(draw):
    batch = tuple(draw(st.lists(st.integers(1, 2), max_size=2)))
    T, d_k, d_v = draw(st.integers(1, 10)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    Q, K = (draw(arrays(np.float64, batch + (T, d_k), elements=finite)) for _ in range(2))
    V = draw(arrays(np.float64, batch + (T, d_v), elements=finite))
    return Q, K, V, draw(st.integers(1, T + 1)), draw(st.integers(1, T + 1)), draw(st.booleans())


@settings(max_examples=150, deadline=None)
@given(data=tiled_inputs())
def test_tiled_attention_equals_torch_and_lessons_02_and_04(data):
    Q, K, V, bq, bk, causal = data
    out, skipped = ref.tiled_attention(Q, K, V, bq, bk, causal)
    np.testing.assert_allclose(out, sdpa(Q, K, V, causal), rtol=1e-9, atol=1e-9)
    T = Q.shape[-2]
    if causal:
        earlier, _ = ref.masked_attention(Q, K, V, ref.causal_mask(T))
        assert skipped == lesson_ref().causal_tiles_skipped(T, bq, bk)
        assert skipped == int((la.tile_kinds(T, bq, bk) == "skip").sum())
    else:
        earlier, _ = ref.scaled_dot_product_attention(Q, K, V)
        assert skipped == 0
    np.testing.assert_allclose(out, earlier, rtol=1e-9, atol=1e-9)


def test_tiled_attention_takes_queries_and_keys_of_different_lengths():
    rng = np.random.default_rng(3)
    Q, K, V = rng.normal(size=(5, 2)), rng.normal(size=(8, 2)), rng.normal(size=(8, 3))
    for bq, bk in [(1, 1), (2, 3), (5, 8), (4, 9)]:
        out, skipped = ref.tiled_attention(Q, K, V, bq, bk)
        np.testing.assert_allclose(out, sdpa(Q, K, V), rtol=1e-9)
        assert skipped == 0


@settings(max_examples=60, deadline=None)
@given(T=st.integers(1, 40), bq=st.integers(1, 12), bk=st.integers(1, 12))
def test_skipped_tiles_are_exactly_those_wholly_above_the_diagonal(T, bq, bk):
    mask = ref.causal_mask(T)
    wholly_future = sum(not mask[i:i + bq, j:j + bk].any()
                        for i in range(0, T, bq) for j in range(0, T, bk))
    assert lesson_ref().causal_tiles_skipped(T, bq, bk) == wholly_future
    zeros = np.zeros((T, 1))
    assert ref.tiled_attention(zeros, zeros, zeros, bq, bk, True)[1] == wholly_future


@st.composite
def decoding(draw):
    T = draw(st.integers(1, 9))
    d_model, d_k, d_v = draw(st.integers(1, 4)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    X = draw(arrays(np.float64, (T, d_model), elements=st.floats(-3, 3)))
    W = [draw(arrays(np.float64, (d_model, d), elements=st.floats(-3, 3))) for d in (d_k, d_k, d_v)]
    cuts = sorted(set(draw(st.lists(st.integers(1, T - 1), max_size=4)))) if T > 1 else []
    singles = draw(st.lists(st.booleans(), min_size=len(cuts) + 1, max_size=len(cuts) + 1))
    return X, W, cuts, singles


@settings(max_examples=120, deadline=None)
@given(data=decoding())
def test_decoding_token_by_token_equals_causal_self_attention(data):
    """Cut the sequence into pieces anywhere (a prompt, then blocks or single tokens): the
    outputs, stacked, equal lesson 04's causal self-attention and torch's."""
    X, (W_q, W_k, W_v), cuts, singles = data
    cache = ref.KVCache()
    outs = []
    for piece, single in zip(np.split(X, cuts), singles):
        if single and len(piece) == 1:
            outs.append(ref.decode_step(piece[0], cache, W_q, W_k, W_v)[None])
        else:
            outs.append(ref.decode_step(piece, cache, W_q, W_k, W_v))
    stepwise = np.concatenate(outs)
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    np.testing.assert_allclose(stepwise, sdpa(Q, K, V, causal=True), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(stepwise, ref.masked_attention(Q, K, V, ref.causal_mask(len(X)))[0],
                               rtol=1e-9, atol=1e-9)
    assert len(cache) == len(X)
    np.testing.assert_allclose(cache.keys, K, rtol=1e-12)
    np.testing.assert_allclose(cache.values, V, rtol=1e-12)


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.one_of(st.none(), st.integers(1, 4)), min_size=1, max_size=6),
       d_k=st.integers(1, 3), d_v=st.integers(1, 3))
def test_the_cache_holds_the_appended_rows_in_order(sizes, d_k, d_v):
    rng = np.random.default_rng(len(sizes))
    cache, ks, vs = ref.KVCache(), [], []
    for n in sizes:
        k = rng.normal(size=(d_k,) if n is None else (n, d_k))
        v = rng.normal(size=(d_v,) if n is None else (n, d_v))
        cache.append(k, v)
        ks.append(np.atleast_2d(k))
        vs.append(np.atleast_2d(v))
        assert len(cache) == sum(len(b) for b in ks)
    assert np.array_equal(cache.keys, np.concatenate(ks))
    assert np.array_equal(cache.values, np.concatenate(vs))


def test_float32_stays_float32():
    rng = np.random.default_rng(0)
    Q, K, V = (rng.normal(size=(4, 2)).astype(np.float32) for _ in range(3))
    assert ref.attention_one_pass(Q[0], K, V, 2).dtype == np.float32
    assert ref.tiled_attention(Q, K, V, 2, 3, True)[0].dtype == np.float32
    W = np.eye(2, dtype=np.float32)
    assert ref.decode_step(Q[0], ref.KVCache(), W, W, W).dtype == np.float32


@pytest.mark.parametrize("call, message", [
    (lambda: ref.online_softmax_stats([]), "holds no block"),
    (lambda: ref.online_softmax_stats(np.ones(3)), "got one array of shape 3: put it in a list"),
    (lambda: ref.online_softmax_stats([np.ones((2, 2))]),
     "block 0 of scores_blocks must have 1 axes"),
    (lambda: ref.online_softmax_stats([[1.0], []]), "block 1 of scores_blocks is empty"),
    (lambda: ref.online_softmax_stats([[1.0, np.inf]]), r"holds \+inf"),
    (lambda: ref.online_softmax_stats(3.0), "must be a list of 1-D blocks"),
    (lambda: ref.attention_one_pass(np.ones(3), np.ones((4, 2)), np.ones((4, 1)), 2),
     "q has d_k = 3"),
    (lambda: ref.attention_one_pass(np.ones(2), np.ones((4, 2)), np.ones((3, 1)), 2),
     "K of shape 4×2 and V of shape 3×1"),
    (lambda: ref.attention_one_pass(np.ones(2), np.ones((4, 2)), np.ones((4, 1)), 0),
     "block must be a positive integer"),
    (lambda: ref.attention_one_pass(np.ones(2), np.ones((0, 2)), np.ones((0, 1)), 1),
     "K has no keys"),
    (lambda: ref.tiled_attention(np.ones((3, 2)), np.ones((4, 2)), np.ones((4, 1)), 2, 2, True),
     "T_q = 3 and T_k = 4"),
    (lambda: ref.tiled_attention(np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 1)), 2, 2, "yes"),
     "causal must be True or False"),
    (lambda: ref.tiled_attention(np.ones((2, 3, 2)), np.ones((3, 3, 2)), np.ones((3, 3, 1)), 2, 2),
     "do not broadcast"),
    (lambda: ref.KVCache().append(np.ones((2, 2)), np.ones((3, 1))), "k holds 2 key"),
    (lambda: ref.KVCache().keys, "the cache is empty"),
    (lambda: ref.decode_step(np.ones(3), ref.KVCache(), np.ones((2, 2)), np.ones((2, 2)),
                             np.ones((2, 1))),
     "x_t has d_model = 3 features but W_q"),
    (lambda: ref.decode_step(np.ones(2), None, np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 1))),
     "cache must be a KVCache"),
    (lambda: ref.decode_step(np.ones(2), ref.KVCache(), np.ones((2, 3)), np.ones((2, 2)),
                             np.ones((2, 1))),
     "the same width d_k"),
])
def test_bad_input_names_the_argument_and_what_it_got(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_a_cache_refuses_a_key_of_another_width():
    cache = ref.KVCache()
    cache.append(np.ones(2), np.ones(1))
    with pytest.raises(ValueError, match="d_k = 2 and values of d_v = 1"):
        cache.append(np.ones(3), np.ones(1))


# ================================================================= the notebook's helpers

def test_score_blocks_reads_each_block_once_from_any_iterable():
    seen = []

    def stream():
        for block in ([1.0, 5.0], [2.0]):
            seen.append(block)
            yield block

    assert ref.online_softmax_stats(stream()) == ref.online_softmax_stats([[1.0, 5.0], [2.0]])
    assert len(seen) == 2


def test_the_budget_is_smaller_when_nbgrader_runs_the_notebook(monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    full = la.budget()
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    reduced = la.budget()
    assert reduced is la.REDUCED and full is la.FULL
    assert max(reduced.memory_sizes) < max(full.memory_sizes)
    assert max(reduced.positions) < max(full.positions)


def test_the_memory_sweep_shows_the_wall_and_the_flat_line():
    def all_at_once(Q, K, V, out):
        out[:] = ref.scaled_dot_product_attention(Q, K, V)[0]   # lesson 02: T × T weights

    def streamed(Q, K, V, out):
        for i in range(len(Q)):
            out[i] = ref.attention_one_pass(Q[i], K, V, 16)

    sweep = la.memory_sweep({"all": all_at_once, "streamed": streamed}, (32, 64, 128))
    assert sweep["largest difference"] < 1e-12
    full, flat = sweep["all"], sweep["streamed"]
    assert full[2] > 10 * full[0]            # four times the entries each doubling
    assert max(flat) < 2 * min(flat) + 4096 and max(flat) < full[0]


def test_time_per_token_times_both_ways_and_they_agree():
    def cache_of(X_past, W_q, W_k, W_v):
        cache = ref.KVCache()
        if len(X_past):
            cache.append(X_past @ W_k, X_past @ W_v)
        return cache

    def without_cache(X, W_q, W_k, W_v):
        Q, K, V = X @ W_q, X @ W_k, X @ W_v
        return ref.masked_attention(Q, K, V, ref.causal_mask(len(X)))[0][-1]

    timing = la.time_per_token(ref.decode_step, cache_of, without_cache, (1, 8, 32), 8, repeat=2)
    assert timing["largest difference"] < 1e-12
    assert len(timing["with the cache"]) == len(timing["without a cache"]) == 3
    assert all(t > 0 for t in timing["with the cache"] + timing["without a cache"])


def test_one_blas_thread_sets_and_restores_the_thread_count():
    setters = la._openblas_thread_setters()
    if setters is None:
        pytest.skip("this NumPy's BLAS cannot be reached")
    get, _ = setters
    before = get()
    with la.one_blas_thread():
        assert get() == 1
    assert get() == before


# ================================================================= the rules the notebook states

def stats_keeping_the_blocks(scores_blocks):
    """Every block kept in a list, for a maximum first and a sum after."""
    blocks = list(score_blocks(scores_blocks))
    m = max(float(b.max()) for b in blocks)
    return m, float(sum(np.exp(b - m).sum() for b in blocks))


def stats_counting_the_blocks(scores_blocks):
    """The number of blocks first, to know when the last one comes."""
    n = len(scores_blocks)
    m, s = -np.inf, 0.0
    for i, b in enumerate(score_blocks(scores_blocks)):
        m_new = max(m, float(b.max()))
        s = s * np.exp(m - m_new) + float(np.exp(b - m_new).sum())
        m = m_new
        if i == n - 1:
            break
    return m, s


def stats_keeping_copies(scores_blocks):
    """A copy of each block kept (the blocks themselves are let go), then two passes."""
    kept = [np.array(b) for b in score_blocks(scores_blocks)]
    m = max(float(b.max()) for b in kept)
    return m, float(sum(np.exp(b - m).sum() for b in kept))


def stats_without_the_given_line(scores_blocks):
    """The given line dropped: NaN, empty blocks and no blocks at all go through."""
    m, s = -np.inf, 0.0
    for b in scores_blocks:
        b = np.asarray(b, dtype=float)
        m_new = max(m, float(b.max(initial=-np.inf)))
        s = s * np.exp(m - m_new) + float(np.exp(b - m_new).sum())
        m = m_new
    return m, s


def one_pass_block_as_the_number_of_blocks(q, K, V, block):
    """`block` read as the number of blocks: ceil(T_k / block) keys a step."""
    q, K, V = one_query(q, K, V)
    block = positive_int(block, "block")
    size = -(-len(K) // block)
    m, s, o = -np.inf, 0.0, np.zeros(V.shape[1])
    for j in range(0, len(K), size):
        x = K[j:j + size] @ q / np.sqrt(len(q))
        m_new = max(m, x.max())
        p = np.exp(x - m_new)
        s, o = s * np.exp(m - m_new) + p.sum(), o * np.exp(m - m_new) + p @ V[j:j + size]
        m = m_new
    return o / s


def one_pass_max_then_sums(q, K, V, block):
    """Block by block, but twice: the maximum in a first loop, the sums in a second."""
    q, K, V = one_query(q, K, V)
    block = positive_int(block, "block")
    m = max(float((K[j:j + block] @ q).max()) for j in range(0, len(K), block)) / np.sqrt(len(q))
    s, o = 0.0, np.zeros(V.shape[1])
    for j in range(0, len(K), block):
        p = np.exp(K[j:j + block] @ q / np.sqrt(len(q)) - m)
        s, o = s + p.sum(), o + p @ V[j:j + block]
    return o / s


def one_pass_with_any_block(q, K, V, block):
    """The given block check swapped for a forgiving one: block = 0 becomes 1."""
    q, K, V = one_query(q, K, V)
    return one_pass_with_a_column_of_ones(q, K, V, max(1, int(block)))


def tiled_computing_the_skipped_tiles(Q, K, V, block_q, block_k, causal=False):
    """Every tile computed and masked; the ones above the diagonal counted as skipped."""
    Q, K, V, batch = tile_inputs(Q, K, V, causal)
    block_q, block_k = positive_int(block_q, "block_q"), positive_int(block_k, "block_k")
    T_q, T_k = Q.shape[-2], K.shape[-2]
    out, skipped = np.zeros(batch + (T_q, V.shape[-1])), 0
    for i0 in range(0, T_q, block_q):
        i1 = min(i0 + block_q, T_q)
        m = np.full(batch + (i1 - i0, 1), -np.inf)
        s, o = np.zeros(batch + (i1 - i0, 1)), np.zeros(batch + (i1 - i0, V.shape[-1]))
        for j0 in range(0, T_k, block_k):
            j1 = min(j0 + block_k, T_k)
            S = Q[..., i0:i1, :] @ np.swapaxes(K[..., j0:j1, :], -1, -2) / np.sqrt(Q.shape[-1])
            if causal:
                if j0 > i1 - 1:
                    skipped += 1          # counted as skipped, but computed all the same
                S = np.where(np.arange(j0, j1)[None, :] <= np.arange(i0, i1)[:, None], S, -np.inf)
            new = np.maximum(m, S.max(axis=-1, keepdims=True))
            p = np.exp(S - new)
            s = s * np.exp(m - new) + p.sum(axis=-1, keepdims=True)
            o = o * np.exp(m - new) + p @ V[..., j0:j1, :]
            m = new
        out[..., i0:i1, :] = o / s
    return out, skipped


def tiled_counting_the_computed_tiles(Q, K, V, block_q, block_k, causal=False):
    """Returns how many tiles it computed, where the notebook asks how many it skipped."""
    out, skipped = tiled_with_key_tiles_outside(Q, K, V, block_q, block_k, causal)
    n_q, n_k = -(-np.shape(Q)[-2] // block_q), -(-np.shape(K)[-2] // block_k)
    return out, n_q * n_k - skipped


def tiled_with_any_causal(Q, K, V, block_q, block_k, causal=False):
    """The given line dropped: causal="yes" is taken as True."""
    return tiled_with_key_tiles_outside(Q, K, V, block_q, block_k, bool(causal))


class CacheWithKeysAsAMethod(KVCache):
    def keys(self):  # noqa: D102 (a method where the notebook asks for an attribute)
        return KVCache.keys.fget(self)


class CacheCountingAppends(KVCache):
    """len() counts the calls to append, not the positions."""

    calls = 0

    def append(self, k, v):
        super().append(k, v)
        self.calls += 1

    def __len__(self):
        return self.calls


class CacheTrustingItsInput:
    """The given line dropped: a value per key is never checked."""

    def __init__(self):
        self._k = self._v = None

    def __len__(self):
        return 0 if self._k is None else len(self._k)

    def append(self, k, v):
        k, v = np.atleast_2d(k), np.atleast_2d(v)
        self._k = k if self._k is None else np.concatenate([self._k, k])
        self._v = v if self._v is None else np.concatenate([self._v, v])

    @property
    def keys(self):
        return self._k

    @property
    def values(self):
        return self._v


def decode_never_filling_the_cache(x_t, cache, W_q, W_k, W_v):
    x, W_q, W_k, W_v = decode_inputs(x_t, cache, W_q, W_k, W_v)
    X = np.atleast_2d(x)
    t = len(cache)
    K = np.concatenate([cache.keys, X @ W_k]) if t else X @ W_k
    V = np.concatenate([cache.values, X @ W_v]) if t else X @ W_v
    out, _ = ref.masked_attention(X @ W_q, K, V, ref.causal_mask(len(K))[t:])
    return out if x.ndim == 2 else out[0]


def decode_with_torch_softmax(x_t, cache, W_q, W_k, W_v):
    x, W_q, W_k, W_v = decode_inputs(x_t, cache, W_q, W_k, W_v)
    X = np.atleast_2d(x)
    t = len(cache)
    cache.append(X @ W_k, X @ W_v)
    S = X @ W_q @ cache.keys.T / np.sqrt(W_q.shape[1])
    S = np.where(np.arange(len(cache))[None, :] <= t + np.arange(len(X))[:, None], S, -np.inf)
    out = torch.softmax(torch.from_numpy(S), dim=-1).numpy() @ cache.values
    return out if x.ndim == 2 else out[0]


def decode_flattening_its_input(x_t, cache, W_q, W_k, W_v):
    """The given line dropped: x_t of any number of axes is flattened into rows."""
    W_q, W_k, W_v = (np.asarray(W, dtype=float) for W in (W_q, W_k, W_v))
    X = np.asarray(x_t, dtype=float).reshape(-1, W_q.shape[0])
    out = decode_through_lesson_04(X, cache, W_q, W_k, W_v)
    return out if np.ndim(x_t) > 1 else out[0]


KEEP_THE_CHECKS = "The first lines of each function, which check the input, are given; keep them."
BREAKS = {
    ("online_softmax_stats", "going over the blocks a second time (a second loop, or a list of "
     "the blocks kept to read again) fails with a message that says so"): stats_keeping_the_blocks,
    ("online_softmax_stats", "A stream has no `len()` and no index"): stats_counting_the_blocks,
    ("online_softmax_stats", "keeping only $m$ and $s$"): stats_keeping_copies,
    ("online_softmax_stats", "Joining the blocks back into one row is not accepted either"):
        stats_by_joining,
    ("online_softmax_stats", KEEP_THE_CHECKS): stats_without_the_given_line,
    ("attention_one_pass", "the keys and values are read `block` rows at a time"):
        one_pass_block_as_the_number_of_blocks,
    ("attention_one_pass", "going back to earlier ones is a second pass"): one_pass_max_then_sums,
    ("attention_one_pass", "Between blocks keep only $m$, $s$ and $o$, so the extra memory is "
     "$O(\\text{block} + d_v)$ whatever $T_k$"): one_pass_with_a_copy_of_K,
    ("attention_one_pass", "Library softmax and attention functions are not accepted here."):
        one_pass_from_torch,
    ("attention_one_pass", KEEP_THE_CHECKS): one_pass_with_any_block,
    ("tiled_attention", "a tile counted as skipped must not be computed at all"):
        tiled_computing_the_skipped_tiles,
    ("tiled_attention", "under a memory budget that fits a few tiles and the output, but not all "
     "the scores"): tiled_all_at_once,
    ("tiled_attention", "the number of tiles it skipped (0 when `causal=False`)"):
        tiled_counting_the_computed_tiles,
    ("tiled_attention", "Library softmax and attention functions are not accepted here either."):
        tiled_with_torch_softmax,
    ("tiled_attention", KEEP_THE_CHECKS): tiled_with_any_causal,
    ("KVCache", "`keys` and `values` (read as attributes, `cache.keys`)"): CacheWithKeysAsAMethod,
    ("KVCache", "`len(cache)` is $t$, the number of positions"): CacheCountingAppends,
    ("KVCache", "The given line turns both into blocks of rows and checks that there is one "
     "value per key"): CacheTrustingItsInput,
    ("decode_step", "appends $k$ and $v$ to the cache, **before** attending"): decode_append_after,
    ("decode_step", "it reads `cache.keys` and `cache.values` after the call"):
        decode_never_filling_the_cache,
    ("decode_step", "Library softmax and attention functions are not accepted here either."):
        decode_with_torch_softmax,
    ("decode_step", KEEP_THE_CHECKS): decode_flattening_its_input,
}


@pytest.mark.parametrize("key", BREAKS, ids=lambda key: f"{key[0]}: {key[1][:40]}")
def test_an_answer_that_breaks_a_stated_rule_fails_and_names_it(key):
    assert not broken(key, BREAKS[key])


def one_pass_split_into_block_pieces(q, K, V, block):
    """`block` read as the number of blocks, through np.array_split."""
    q, K, V = one_query(q, K, V)
    m, s, o = -np.inf, 0.0, np.zeros(V.shape[1])
    for Kb, Vb in zip(np.array_split(K, positive_int(block, "block")), np.array_split(V, block)):
        x = Kb @ q / np.sqrt(len(q))
        m_new = max(m, x.max())
        p = np.exp(x - m_new)
        s, o = s * np.exp(m - m_new) + p.sum(), o * np.exp(m - m_new) + p @ Vb
        m = m_new
    return o / s


def test_a_block_larger_than_t_k_shows_block_pieces_in_the_values():
    """Where block > T_k, block pieces of K are empty: that form fails on values alone,
    the rows read aside."""
    from grader.lessons import expectations
    from grader.learner.drivers import Call

    exp = expectations("attention_one_pass", False)
    wide = [c for c in exp.cases if np.ndim(c.args[1]) == 2 and not isinstance(c.args[3], list)
            and isinstance(c.args[1], np.ndarray) and c.args[3] > len(c.args[1])]
    assert wide, "a case with block > T_k"
    outcomes = agent.run(one_pass_split_into_block_pieces, Call(), wide)
    assert all(o.error is not None for o in outcomes)


def test_the_block_as_a_count_is_caught_by_the_rows_read_and_not_by_the_values():
    """On every case its numbers are right: only the rows it reads at once show it. The
    memory case cannot show it either: with 1,048,576 keys and block = 4096 it holds 256
    scores a step, far below what the operating system can tell from noise (6 MiB, or
    786,432 scores a step)."""
    from grader.lessons import expectations
    from grader.learner.difference import difference
    from grader.learner.drivers import Call

    exp = expectations("attention_one_pass", True)
    free = [c for c in exp.cases if not c.build.memory_budget]
    outcomes = agent.run(one_pass_block_as_the_number_of_blocks, Call(), free)
    for case, outcome, expected in zip(free, outcomes, exp.expected):
        assert outcome.error is None and not difference(expected.value, outcome.value, case.tol)
    message = failure("attention_one_pass", one_pass_block_as_the_number_of_blocks, hidden=True)
    assert "What happened: in K, rows 0 to 1 were read in one step: 2 rows, where a step reads " \
           "at most block = 1" in message, message


def test_the_work_rule_is_the_median_of_pairs_measured_again_before_it_is_broken():
    from grader.learner.cases import Case, Work
    from grader.learner.work import measured

    work = Work(Case(()), {"causal": False}, most=0.8, rule="r", found="f", rounds=3, attempts=3)
    times = iter([0.5, 1.0, 0.9, 1.0, 0.5, 1.0])          # one slow pair among three: kept
    assert measured(lambda kwargs: next(times), work).kept(work)
    calls = []

    def always_as_much(kwargs):
        calls.append(kwargs)
        return 1.0
    found = measured(always_as_much, work)
    assert not found.kept(work) and found.ratio == 1.0 and len(calls) == 2 * 3 * 3
    assert calls[:2] == [{}, {"causal": False}]          # the call, then the one it is held to


def test_the_work_message_says_what_was_found_and_the_rule():
    from grader.lessons import get
    from grader.learner.work import Measured, message

    work = get("tiled_attention").work
    text = message("tiled_attention", work, Measured(ratio=1.04))
    assert text.startswith("tiled_attention: your causal run took as much work as the full one "
                           "(1.04 of its CPU time"), text
    assert "the tiles above the diagonal seem to be computed, then counted as skipped" in text
    assert f"with causal=False: its CPU time must be at most {work.most:g} of that" in text
    assert len(text.splitlines()) < 25


def test_the_timed_case_is_causal_with_many_wide_tiles():
    """n = 16 tiles a side, so skipping leaves 136 of 256 tiles; wide keys, so that a tile's
    product outweighs the rest of its work."""
    from grader.lessons import get

    work = get("tiled_attention").work
    Q, K, V, block_q, block_k = work.case.args
    assert work.case.kwargs == {"causal": True} and work.against == {"causal": False}
    n = Q.params["shape"][0] // block_q
    assert n == 16 and block_q == block_k and Q.params["shape"][1] >= 512
    assert lesson_ref().causal_tiles_skipped(n * block_q, block_q, block_k) == n * (n - 1) // 2


def test_the_figures_draw(tmp_path):
    import matplotlib.pyplot as plt

    blocks = [np.array([0.0, 1.0]), np.array([3.0]), np.array([-1.0, 2.0])]
    trace = la.stats_after_each_block(ref.online_softmax_stats, blocks)
    assert trace[-1] == ref.online_softmax_stats(blocks)
    figures = {
        "stats": la.running_stats_figure(blocks, trace, "blocks"),
        "memory": la.memory_figure({"T": [8, 16], "a": [100, 400], "b": [10, 10],
                                    "largest difference": 0.0}),
        "tiles": la.tiles_figure(12, [(4, 4), (3, 5)]),
        "timing": la.timing_figure({"t": [1, 2], "with the cache": [1e-4, 1e-4],
                                    "without a cache": [1e-4, 3e-4], "largest difference": 0.0}),
    }
    for name, fig in figures.items():
        path = tmp_path / f"{name}.png"
        fig.savefig(path)
        assert path.stat().st_size > 5000, name
        plt.close(fig)
    title = figures["tiles"].axes[0].get_title()
    assert title == "4×4 tiles: 6 computed, 3 skipped"
