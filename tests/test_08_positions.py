"""Lesson 08: sinusoidal positions, RoPE and RoPE's scores.

First grader.check: correct code written other ways passes (the log-space frequencies
of PyTorch's tutorial, complex numbers, 2 × 2 rotation matrices, torch, the rotate-half
convention on permuted features); an answer that breaks a rule the notebook states (a
loop where it says to use none, ``BREAKS``) fails and is told which; a learner's wrong answers,
written as a learner would write them (not as the reference's knobs), get their named
diagnoses, the catalogued ones and those a relation names; an answer that accepts a bad
input fails; rope_scores is judged on its own when the learner's rope is wrong or
missing; messages hand over no solution line. Then the references against independent
computations (plain loops with ``math``, torch's complex numbers) on property-based
inputs, and the properties the notebook shows: lengths kept, scores that depend only on
the offset, halves and pairs the same up to a permutation, attention without positions
permutation-equivariant. Last, the notebook's own solutions pass their checks.
"""
from __future__ import annotations

import json
import math
import re
import types

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT
from courseware.positions import position_sizes, rope_inputs, rope_score_inputs
from grader import CheckFailed, check
from grader import reference as ref
from grader.learner.checks import verdict
from stated_rules import broken

LESSON = "08_positions"
EXERCISES = ["sinusoidal_positions", "rope", "rope_scores"]


def failure(name, fn, hidden=False) -> str:
    with pytest.raises(CheckFailed) as info:
        check(name, fn, hidden=hidden)
    return str(info.value)


def diagnosis(exercise: str, mistake: str) -> str:
    from grader.lessons import get

    return next(m.message for m in get(exercise).misconceptions if m.name == mistake)


def halves_order(d: int) -> np.ndarray:
    """The permutation that puts feature i + d/2 right after feature i."""
    return np.stack([np.arange(d // 2), np.arange(d // 2) + d // 2], axis=1).ravel()


# ================================================================= independent computations

def table_by_loop(T, d, start=0, first=math.sin, second=math.cos, exponent=lambda i, d: 2 * i / d,
                  halves=False):
    """The sinusoidal table entry by entry, with ``math`` (and the knobs of a learner's
    mistakes: where the positions start, which function comes first, the exponent, and
    the features in two halves)."""
    T, d = position_sizes(T, d)
    table = np.zeros((T, d))
    for t in range(T):
        for i in range(d // 2):
            angle = (t + start) / 10000 ** exponent(i, d)
            a, b = (i, i + d // 2) if halves else (2 * i, 2 * i + 1)
            table[t, a], table[t, b] = first(angle), second(angle)
    return table


def table_like_the_pytorch_tutorial(T, d):
    """PyTorch's tutorial: frequencies as exp(-2i log(10000) / d), in torch."""
    T, d = position_sizes(T, d)
    position = torch.arange(T, dtype=torch.float64).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d, 2, dtype=torch.float64) * (-math.log(10000.0) / d))
    pe = torch.zeros(T, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe.numpy()


def rope_by_complex(x, positions, base=10000.0):
    """Each pair (a, b) as a + ib, multiplied by exp(i · angle), in torch."""
    x, positions, base = rope_inputs(x, positions, base)
    t = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float64))
    d = t.shape[-1]
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angles = torch.outer(torch.from_numpy(positions).double(), theta)
    z = torch.view_as_complex(t.reshape(*t.shape[:-1], d // 2, 2).contiguous())
    turned = torch.view_as_real(z * torch.polar(torch.ones_like(angles), angles))
    return turned.reshape(t.shape).numpy().astype(x.dtype)


def rope_by_rotation_matrices(x, positions, base=10000.0):
    """A 2 × 2 rotation matrix per position and pair, applied with einsum."""
    x, positions, base = rope_inputs(x, positions, base)
    d = x.shape[-1]
    angles = np.multiply.outer(positions, base ** (-np.arange(d // 2) * 2.0 / d))  # [T, d/2]
    c, s = np.cos(angles), np.sin(angles)
    R = np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)               # [T, d/2, 2, 2]
    pairs = x.reshape(*x.shape[:-1], d // 2, 2)
    return np.einsum("tpij,...tpj->...tpi", R, pairs).reshape(x.shape)


def rope_by_halves_in_torch(x, positions, base=10000.0):
    """The rotate-half convention (GPT-NeoX, Hugging Face's Llama): feature i with i + d/2."""
    x = torch.as_tensor(np.asarray(x, dtype=np.float64))
    d = x.shape[-1]
    inv_freq = 1.0 / base ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    emb = torch.outer(torch.as_tensor(np.asarray(positions), dtype=torch.float64), inv_freq)
    emb = torch.cat([emb, emb], dim=-1)
    first, second = x[..., : d // 2], x[..., d // 2:]
    return (x * emb.cos() + torch.cat([-second, first], dim=-1) * emb.sin()).numpy()


def rope_through_the_halves(x, positions, base=10000.0):
    """RoPE by pairs, computed with the rotate-half convention on permuted features."""
    x, positions, base = rope_inputs(x, positions, base)
    order = halves_order(x.shape[-1])
    back = np.argsort(order)
    return rope_by_halves_in_torch(x[..., back], positions, base)[..., order]


def scores_by_einsum(Q, K, positions_q, positions_k, base=10000.0):
    Q, K, positions_q, positions_k, base = rope_score_inputs(Q, K, positions_q, positions_k, base)
    q, k = rope_by_complex(Q, positions_q, base), rope_by_complex(K, positions_k, base)
    return np.einsum("...md,...nd->...mn", q, k) / math.sqrt(Q.shape[-1])


def scores_by_complex_numbers(Q, K, positions_q, positions_k, base=10000.0):
    """Re(Σ z_q · conj(z_k)) of the turned pairs: one complex product per query and key."""
    Q, K, positions_q, positions_k, base = rope_score_inputs(Q, K, positions_q, positions_k, base)
    d = Q.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)
    zq = (Q[..., 0::2] + 1j * Q[..., 1::2]) * np.exp(1j * np.outer(positions_q, theta))
    zk = (K[..., 0::2] + 1j * K[..., 1::2]) * np.exp(1j * np.outer(positions_k, theta))
    return (zq @ np.conj(np.swapaxes(zk, -1, -2))).real / np.sqrt(d)


def scores_of_permuted_halves(Q, K, positions_q, positions_k, base=10000.0):
    """The rotate-half convention's scores, after permuting the features of Q and K."""
    Q, K, positions_q, positions_k, base = rope_score_inputs(Q, K, positions_q, positions_k, base)
    back = np.argsort(halves_order(Q.shape[-1]))
    q = rope_by_halves_in_torch(Q[..., back], positions_q, base)
    k = rope_by_halves_in_torch(K[..., back], positions_k, base)
    return q @ np.swapaxes(k, -1, -2) / np.sqrt(Q.shape[-1])


@pytest.mark.parametrize("name, fn", [
    ("sinusoidal_positions", table_like_the_pytorch_tutorial),
    ("rope", rope_by_complex),
    ("rope", rope_by_rotation_matrices),
    ("rope", rope_through_the_halves),
    ("rope_scores", scores_by_einsum),
    ("rope_scores", scores_by_complex_numbers),
    ("rope_scores", scores_of_permuted_halves),
], ids=lambda v: getattr(v, "__name__", v))
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_correct_alternatives_pass(name, fn, hidden, capsys):
    check(name, fn, hidden=hidden)
    assert capsys.readouterr().out.startswith(f"✓ {name}")


def test_the_reference_passes_and_a_stub_is_not_implemented(capsys):
    def stub(*args, **kwargs):
        raise NotImplementedError()

    for name in EXERCISES:
        check(name, getattr(ref, name))
        assert "not implemented yet" in failure(name, stub)
    assert capsys.readouterr().out.count("✓") == len(EXERCISES)


def test_the_cases_hold_what_the_mistakes_need():
    from grader.lessons import get

    tables = get("sinusoidal_positions").draw(hidden=False)
    assert tables[0].args == (1, 2) and any(T >= 3 and d >= 4 for T, d in (c.args for c in tables))
    assert any(T == 0 for T, _ in (c.args for c in tables))
    turns = [c for c in get("rope").draw(hidden=False) if isinstance(c.args[1], np.ndarray)]
    positions = [np.asarray(c.args[1]) for c in turns]
    assert any(p[0] != 0 for p in positions) and any((p < 0).any() for p in positions)
    assert any(not np.array_equal(p, np.arange(len(p))) for p in positions)
    assert any(np.ndim(c.args[0]) >= 3 for c in turns) and any(c.kwargs.get("base") for c in turns)
    scores = get("rope_scores").draw(hidden=False)
    first = scores[0].args
    assert first[0].shape[-2] != first[1].shape[-2]  # no substitution fits the smallest case
    assert not np.array_equal(first[2], np.zeros(1))  # a query at 0 hides an unturned one


# ================================================================= a learner's wrong answers

def _table(T, d, frequencies=lambda d: 1 / 10000 ** (np.arange(0, d, 2) / d), start=0,
           first=np.sin, second=np.cos):
    T, d = position_sizes(T, d)
    angles = np.arange(start, start + T)[:, None] * frequencies(d)[None, :]
    table = np.empty((T, d))
    table[:, ::2], table[:, 1::2] = first(angles), second(angles)
    return table


def table_from_one(T, d):
    return _table(T, d, start=1)


def table_cos_first(T, d):
    return _table(T, d, first=np.cos, second=np.sin)


def table_without_the_2(T, d):
    return _table(T, d, lambda d: 1 / 10000 ** (np.arange(d // 2) / d))


def table_with_the_2_twice(T, d):
    return _table(T, d, lambda d: 1 / np.power(10000, 2 * np.arange(0, d, 2) / d))


def table_without_the_d(T, d):
    return _table(T, d, lambda d: 10000.0 ** -np.arange(d // 2))


def table_in_two_halves(T, d):
    """tensor2tensor's layout: every sine first, then every cosine."""
    T, d = position_sizes(T, d)
    angles = np.arange(T)[:, None] / 10000 ** (np.arange(0, d, 2)[None, :] / d)
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)


def _turn(x, positions, base=10000.0, *, index=False, sign=1.0, exchanged=False, exponent=2.0):
    """A learner's RoPE by neighbouring pairs, with one of the mistakes switched on."""
    x, positions, base = rope_inputs(x, positions, base)
    d = x.shape[-1]
    at = np.arange(x.shape[-2]) if index else positions
    angles = at[:, None] * base ** (-exponent * np.arange(d // 2) / d)
    c, s = np.cos(angles), sign * np.sin(angles)
    if exchanged:
        c, s = s, c
    out = np.empty_like(x)
    out[..., 0::2] = x[..., 0::2] * c - x[..., 1::2] * s
    out[..., 1::2] = x[..., 0::2] * s + x[..., 1::2] * c
    return out


def rope_clockwise(x, positions, base=10000.0):
    return _turn(x, positions, base, sign=-1.0)


def rope_sin_for_cos(x, positions, base=10000.0):
    return _turn(x, positions, base, exchanged=True)


def rope_by_row_index(x, positions, base=10000.0):
    return _turn(x, positions, base, index=True)


def rope_without_the_2(x, positions, base=10000.0):
    return _turn(x, positions, base, exponent=1.0)


def rope_with_the_2_twice(x, positions, base=10000.0):
    return _turn(x, positions, base, exponent=4.0)


def rope_by_halves(x, positions, base=10000.0):
    x, positions, base = rope_inputs(x, positions, base)
    return rope_by_halves_in_torch(x, positions, base)


def scores_queries_only(Q, K, positions_q, positions_k, base=10000.0):
    Q, K, positions_q, positions_k, base = rope_score_inputs(Q, K, positions_q, positions_k, base)
    q = rope_by_complex(Q, positions_q, base)
    return q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])


def scores_unturned(Q, K, positions_q, positions_k, base=10000.0):
    Q, K, positions_q, positions_k, base = rope_score_inputs(Q, K, positions_q, positions_k, base)
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])


@pytest.mark.parametrize("name, fn, mistake", [
    ("sinusoidal_positions", table_from_one, "positions counted from 1"),
    ("sinusoidal_positions", table_cos_first, "sin and cos swapped"),
    ("sinusoidal_positions", table_without_the_2, "exponent i/d for 2i/d"),
    ("sinusoidal_positions", table_with_the_2_twice, "exponent 4i/d for 2i/d"),
    ("sinusoidal_positions", table_without_the_d, "exponent i for 2i/d"),
    ("rope", rope_by_halves, "halves rotated"),
    ("rope", rope_clockwise, "turned the wrong way"),
    ("rope", rope_sin_for_cos, "sin and cos exchanged"),
    ("rope", rope_by_row_index, "row index for the position"),
    ("rope", rope_without_the_2, "exponent i/d for 2i/d"),
    ("rope", rope_with_the_2_twice, "exponent 4i/d for 2i/d"),
    ("rope_scores", scores_queries_only, "only the queries rotated"),
    ("rope_scores", scores_unturned, "nothing rotated"),
], ids=lambda v: getattr(v, "__name__", v))
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_a_learners_wrong_answer_gets_its_named_diagnosis(name, fn, mistake, hidden):
    message = failure(name, fn, hidden)
    assert f"Diagnosis: {diagnosis(name, mistake)}" in message, message


def test_the_catalogue_holds_the_lessons_mistakes():
    from grader.lessons import get

    wanted = {
        "sinusoidal_positions": {"positions counted from 1", "sin and cos swapped",
                                 "exponent i/d for 2i/d", "exponent 4i/d for 2i/d",
                                 "exponent i for 2i/d"},
        "rope": {"halves rotated", "turned the wrong way", "sin and cos exchanged",
                 "row index for the position", "exponent i/d for 2i/d",
                 "exponent 4i/d for 2i/d", "exponent i for 2i/d"},
        "rope_scores": {"only the queries rotated", "nothing rotated"},
    }
    assert {name: {m.name for m in get(name).misconceptions} for name in wanted} == wanted


# ----------------------------------------------------------------- what the relations name

def scores_unscaled(Q, K, positions_q, positions_k, base=10000.0):
    return scores_by_einsum(Q, K, positions_q, positions_k, base) * math.sqrt(np.shape(Q)[-1])


def scores_with_k_dot_t(Q, K, positions_q, positions_k, base=10000.0):
    Q, K, positions_q, positions_k, base = rope_score_inputs(Q, K, positions_q, positions_k, base)
    k = rope_by_complex(K, positions_k, base)
    return rope_by_complex(Q, positions_q, base) @ k.T / np.sqrt(Q.shape[-1])


def scores_with_the_query_positions_twice(Q, K, positions_q, positions_k, base=10000.0):
    Q, K, positions_q, positions_k, base = rope_score_inputs(Q, K, positions_q, positions_k, base)
    if len(positions_q) == len(positions_k):
        positions_k = positions_q
    return scores_by_einsum(Q, K, positions_q, positions_k, base)


@pytest.mark.parametrize("name, fn, words", [
    # Not catalogued: a relation says what they are.
    ("sinusoidal_positions", table_in_two_halves, "your result holds the expected entries "
                                                  "interleaved"),
    ("rope_scores", scores_unscaled, "times the expected one. Is the division by √d missing?"),
    ("rope_scores", scores_with_k_dot_t, "it assumes a fixed number of axes"),
    ("rope_scores", scores_with_the_query_positions_twice,
     "your code uses positions_q where positions_k belongs"),
], ids=lambda v: getattr(v, "__name__", v))
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_mistakes_left_to_the_relations_are_named(name, fn, words, hidden):
    message = failure(name, fn, hidden)
    assert "Diagnosis:" in message and words in message, message


def rope_ignoring_the_positions(x, positions, base=10000.0):
    return np.array(rope_inputs(x, positions, base)[0])


def test_an_answer_no_diagnosis_fits_gets_the_hint():
    message = failure("rope", rope_ignoring_the_positions)
    assert "Hint: Row t of x turns each of its pairs" in message, message
    assert "one token at position 1" in message


# ----------------------------------------------------------------- bad inputs

def table_with_any_d(T, d):
    """Accepts an odd d (a last feature with a sine and no cosine)."""
    if not isinstance(T, (int, np.integer)) or T < 0 or d <= 0:
        raise ValueError(f"bad sizes T={T!r}, d={d!r}")
    return _table(T, d + d % 2)[:, :d]


def rope_with_any_positions(x, positions, base=10000.0):
    """Rounds positions that are not whole numbers."""
    return rope_by_complex(x, np.round(np.asarray(positions, dtype=float)).astype(int), base)


@pytest.mark.parametrize("name, fn, why", [
    ("sinusoidal_positions", table_with_any_d, "d = 5 is odd: the features come in pairs"),
    ("rope", rope_with_any_positions, "positions holds 0.5, not a whole number"),
], ids=lambda v: getattr(v, "__name__", v))
def test_an_answer_that_accepts_a_bad_input_fails(name, fn, why):
    message = failure(name, fn)
    assert "should reject this input with a ValueError" in message and why in message, message


@pytest.mark.parametrize("call, words", [
    (lambda: ref.sinusoidal_positions(4, 5), "d must be even"),
    (lambda: ref.sinusoidal_positions(4, 0), "d is the number of features and must be positive"),
    (lambda: ref.sinusoidal_positions(4, -2), "got d = -2"),
    (lambda: ref.sinusoidal_positions(-1, 4), "T is the number of positions and cannot be negative"),
    (lambda: ref.sinusoidal_positions(2.5, 4), "T must be a whole number, got 2.5"),
    (lambda: ref.sinusoidal_positions(True, 4), "T must be a whole number, got True"),
    (lambda: ref.rope(np.ones((3, 5)), np.arange(3)), "the last axis of x (d, the features) must "
                                                      "be even and positive"),
    (lambda: ref.rope(np.ones((3, 4)), np.arange(2)), "the input has T = 3 rows, but positions "
                                                      "has 2 entries"),
    (lambda: ref.rope(np.ones((3, 4)), [0, 0.5, 1]), "positions must hold whole numbers"),
    (lambda: ref.rope(np.ones((3, 4)), np.array([True, False, True])), "whole numbers"),
    (lambda: ref.rope(np.ones(4), [0]), "x must have at least 2 axes, got shape 4"),
    (lambda: ref.rope(np.ones((3, 4)), np.zeros((3, 1), dtype=int)), "positions must be 1-D"),
    (lambda: ref.rope(np.ones((3, 4)), np.arange(3), base=0.0), "base must be a positive number"),
    (lambda: ref.rope_scores(np.ones((2, 4)), np.ones((3, 6)), [0, 1], [0, 1, 2]),
     "Q and K must have the same last axis d"),
    (lambda: ref.rope_scores(np.ones((2, 4)), np.ones((3, 4)), [0, 1], [0, 1]),
     "positions_k must hold one position per row"),
    (lambda: ref.rope_scores(np.ones((2, 2, 4)), np.ones((3, 3, 4)), [0, 1], [0, 1, 2]),
     "do not broadcast"),
])
def test_bad_input_is_a_value_error_that_names_the_problem(call, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        call()


def test_an_empty_table_has_its_width():
    assert ref.sinusoidal_positions(0, 6).shape == (0, 6)
    assert ref.sinusoidal_positions(np.int64(3), np.int64(4)).shape == (3, 4)


# ----------------------------------------------------------------- the rules the notebook states

def table_by_two_loops(T, d):
    """Right numbers, entry by entry, where the notebook says to use no Python loop."""
    T, d = position_sizes(T, d)
    table = np.zeros((T, d))
    for t in range(T):
        for i in range(d // 2):
            angle = t / 10000 ** (2 * i / d)
            table[t, 2 * i], table[t, 2 * i + 1] = math.sin(angle), math.cos(angle)
    return table


def table_by_a_comprehension(T, d):
    T, d = position_sizes(T, d)
    rows = [[f(t / 10000 ** (2 * (j // 2) / d)) for j, f in zip(range(d), [math.sin, math.cos] * d)]
            for t in range(T)]
    return np.array(rows, dtype=float).reshape(T, d)


def table_without_an_empty_one(T, d):
    """Refuses T = 0, which the notebook says gives an empty (0, d) table."""
    T, d = position_sizes(T, d)
    if T == 0:
        raise ValueError("T must be at least 1")
    return _table(T, d)


def table_without_the_given_line(T, d):
    """The given line dropped: an odd d gets a last sine without its cosine."""
    angles = np.arange(T)[:, None] / 10000 ** (2 * np.arange((d + 1) // 2) / d)
    table = np.zeros((T, d))
    table[:, 0::2] = np.sin(angles)
    table[:, 1::2] = np.cos(angles[:, :d // 2])
    return table


def rope_pair_by_pair(x, positions, base=10000.0):
    """Right numbers, one pair at a time, where the notebook says no Python loop at all."""
    x, positions, base = rope_inputs(x, positions, base)
    d = x.shape[-1]
    out = np.empty_like(x)
    for i in range(d // 2):
        angle = positions * base ** (-2 * i / d)
        a, b = x[..., 2 * i], x[..., 2 * i + 1]
        out[..., 2 * i] = a * np.cos(angle) - b * np.sin(angle)
        out[..., 2 * i + 1] = a * np.sin(angle) + b * np.cos(angle)
    return out


def rope_row_by_row_with_map(x, positions, base=10000.0):
    x, positions, base = rope_inputs(x, positions, base)
    rows = list(map(lambda t: _turn(x[..., t:t + 1, :], positions[t:t + 1], base),
                    range(x.shape[-2])))
    return np.concatenate(rows, axis=-2)


def rope_with_the_pairs_on_an_axis(x, positions, base=10000.0):
    """The turned pairs stacked on an axis of their own: [..., T, d/2, 2], not x's shape."""
    x, positions, base = rope_inputs(x, positions, base)
    d = x.shape[-1]
    angles = positions[:, None] * base ** (-2 * np.arange(d // 2) / d)
    a, b = x[..., 0::2], x[..., 1::2]
    return np.stack([a * np.cos(angles) - b * np.sin(angles),
                     a * np.sin(angles) + b * np.cos(angles)], axis=-1)


def scores_without_the_given_line(Q, K, positions_q, positions_k, base=10000.0):
    """The given line dropped: positions that are not whole numbers go through."""
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    d = Q.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)
    zq = (Q[..., 0::2] + 1j * Q[..., 1::2]) * np.exp(1j * np.outer(positions_q, theta))
    zk = (K[..., 0::2] + 1j * K[..., 1::2]) * np.exp(1j * np.outer(positions_k, theta))
    return (zq @ np.conj(np.swapaxes(zk, -1, -2))).real / np.sqrt(d)


KEEP_THE_CHECK = ("it checks the input and raises a `ValueError` for one that does not fit. "
                  "Keep it.")
BREAKS = {
    ("sinusoidal_positions", "Use no Python loop"): table_by_two_loops,
    ("sinusoidal_positions", "T = 0 gives an empty `(0, d)` table"): table_without_an_empty_one,
    ("sinusoidal_positions", "an odd or non-positive d, or a negative T, raises a `ValueError`"):
        table_with_any_d,
    ("sinusoidal_positions", KEEP_THE_CHECK): table_without_the_given_line,
    ("rope", "with no Python loop at all"): rope_pair_by_pair,
    ("rope", "Return an array of the shape of `x`"): rope_with_the_pairs_on_an_axis,
    ("rope", KEEP_THE_CHECK): rope_with_any_positions,
    ("rope_scores", "swapping only the last two axes of K so that batch axes line up and "
                    "broadcast"): scores_with_k_dot_t,
    ("rope_scores", KEEP_THE_CHECK): scores_without_the_given_line,
}


@pytest.mark.parametrize("key", BREAKS, ids=lambda key: f"{key[0]}: {key[1][:40]}")
def test_an_answer_that_breaks_a_stated_rule_fails_and_names_it(key):
    assert not broken(key, BREAKS[key])


@pytest.mark.parametrize("fn", [table_by_a_comprehension, rope_row_by_row_with_map],
                         ids=lambda fn: fn.__name__)
def test_any_kind_of_loop_breaks_the_no_loop_rule(fn):
    name = "sinusoidal_positions" if fn is table_by_a_comprehension else "rope"
    message = failure(name, fn)
    assert "asks you to do by hand" in message and "no Python loop" in message, message
    assert "a comprehension" in message or "map, a loop over your function" in message, message


# ----------------------------------------------------------------- rope_scores on its own

STUB_ROPE = "def rope(x, positions, base=10000.0):\n    raise NotImplementedError()\n"
WRONG_ROPE = ("def rope(x, positions, base=10000.0):\n"
              "    return rope_by_halves(x, positions, base)\n")
SCORES = '''
def rope_scores(Q, K, positions_q, positions_k, base=10000.0):
    Q, K, positions_q, positions_k, base = rope_score_inputs(Q, K, positions_q, positions_k, base)
    q = rope(Q, positions_q, base)
    k = rope(K, positions_k, base)
    return q @ np.swapaxes(k, -1, -2) / np.sqrt(Q.shape[-1])
'''


def learner(*sources: str) -> dict:
    ns = {"np": np, "rope_score_inputs": rope_score_inputs, "rope_by_halves": rope_by_halves}
    for source in sources:
        exec(compile(source, "/learner/cell.py", "exec"), ns)  # the test's own code
    return ns


@pytest.mark.parametrize("helper", [STUB_ROPE, WRONG_ROPE], ids=["stub", "halves"])
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_rope_scores_passes_beside_a_rope_that_fails_its_own_check(helper, hidden):
    ns = learner(helper, SCORES)
    v = verdict("rope_scores", ns["rope_scores"], hidden=hidden)
    assert v.passed, v.message
    assert "the reference's results stood in for" in v.message


def test_rope_scores_with_its_own_mistake_still_fails_beside_a_wrong_rope():
    ns = learner(WRONG_ROPE, SCORES.replace("k = rope(K, positions_k, base)", "k = K"))
    v = verdict("rope_scores", ns["rope_scores"])
    assert not v.passed
    assert diagnosis("rope_scores", "only the queries rotated") in v.message, v.message


def test_no_message_or_hint_holds_a_line_of_the_lessons_solutions():
    from grader.lessons import get

    from sources import handed_over, solution_fragments

    assert len(solution_fragments(LESSON)) > 10  # the search has lines to find
    for name in EXERCISES:
        ex = get(name)
        for text in [ex.hint, *(m.message for m in ex.misconceptions)]:
            assert not handed_over(text, LESSON), (name, text)


# ================================================================= the references against oracles

@settings(max_examples=60, deadline=None)
@given(T=st.integers(0, 40), half=st.integers(1, 16))
def test_the_table_equals_a_loop_with_math(T, half):
    np.testing.assert_allclose(ref.sinusoidal_positions(T, 2 * half), table_by_loop(T, 2 * half),
                               rtol=0, atol=1e-12)


def test_the_table_equals_the_pytorch_tutorials_and_starts_0_1_0_1():
    np.testing.assert_allclose(ref.sinusoidal_positions(300, 64),
                               table_like_the_pytorch_tutorial(300, 64), rtol=0, atol=1e-9)
    assert ref.sinusoidal_positions(1, 10).tolist() == [[0.0, 1.0] * 5]
    assert ref.sinusoidal_positions(5, 4).dtype == np.float64


@settings(max_examples=40, deadline=None)
@given(T=st.integers(1, 30), half=st.integers(1, 8), more=st.integers(1, 20))
def test_a_longer_table_begins_with_the_shorter_one(T, half, more):
    np.testing.assert_array_equal(ref.sinusoidal_positions(T + more, 2 * half)[:T],
                                  ref.sinusoidal_positions(T, 2 * half))


@settings(max_examples=30, deadline=None)
@given(m=st.integers(0, 2000), n=st.integers(0, 2000), shift=st.integers(0, 2000))
def test_a_dot_product_of_two_rows_depends_only_on_their_offset(m, n, shift):
    PE = ref.sinusoidal_positions(max(m, n) + shift + 1, 16)
    theta = 10000.0 ** (-np.arange(8) * 2 / 16)
    assert PE[m] @ PE[n] == pytest.approx(PE[m + shift] @ PE[n + shift], abs=1e-9)
    assert PE[m] @ PE[n] == pytest.approx(np.cos((m - n) * theta).sum(), abs=1e-9)


@st.composite
def rope_inputs_(draw):
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    T, half = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    positions = rng.integers(-5000, 5000, size=T)
    base = draw(st.sampled_from([10000.0, 500000.0, 10.0, 2.5]))
    return rng.normal(size=batch + (T, 2 * half)), positions, base


@settings(max_examples=120, deadline=None)
@given(args=rope_inputs_())
def test_rope_equals_torch_complex_multiplication_and_rotation_matrices(args):
    x, positions, base = args
    mine = ref.rope(x, positions, base)
    np.testing.assert_allclose(mine, rope_by_complex(x, positions, base), rtol=0, atol=1e-10)
    np.testing.assert_allclose(mine, rope_by_rotation_matrices(x, positions, base), rtol=0,
                               atol=1e-10)


@settings(max_examples=80, deadline=None)
@given(args=rope_inputs_())
def test_rope_keeps_the_length_of_every_pair_and_every_row(args):
    x, positions, base = args
    turned = ref.rope(x, positions, base)
    pairs = lambda a: np.hypot(a[..., 0::2], a[..., 1::2])  # noqa: E731
    np.testing.assert_allclose(pairs(turned), pairs(x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(turned, axis=-1), np.linalg.norm(x, axis=-1),
                               rtol=1e-12)


@settings(max_examples=60, deadline=None)
@given(args=rope_inputs_())
def test_position_0_changes_nothing_and_minus_p_undoes_p(args):
    x, positions, base = args
    np.testing.assert_array_equal(ref.rope(x, np.zeros(len(positions), dtype=int), base), x)
    back = ref.rope(ref.rope(x, positions, base), -positions, base)
    np.testing.assert_allclose(back, x, rtol=0, atol=1e-10)


@settings(max_examples=80, deadline=None)
@given(args=rope_inputs_())
def test_halves_are_pairs_up_to_a_permutation_of_the_features(args):
    x, positions, base = args
    order = halves_order(x.shape[-1])
    halves = rope_by_halves_in_torch(x, positions, base)
    np.testing.assert_allclose(halves[..., order], ref.rope(x[..., order], positions, base),
                               rtol=0, atol=1e-10)


def test_the_halves_differ_from_the_pairs_without_the_permutation():
    x = np.arange(1.0, 9.0).reshape(1, 8)
    assert not np.allclose(rope_by_halves_in_torch(x, [3]), ref.rope(x, [3]))


def test_rope_keeps_float32_and_the_shape():
    x = np.ones((2, 3, 4), dtype=np.float32)
    assert ref.rope(x, [0, 1, 2]).dtype == np.float32
    assert ref.rope(x, [0, 1, 2]).shape == x.shape
    assert ref.rope_scores(x, x, [0, 1, 2], [0, 1, 2]).dtype == np.float32
    assert ref.rope(x.astype(np.float64), [0, 1, 2]).dtype == np.float64


@st.composite
def score_inputs(draw):
    half = draw(st.integers(1, 6))
    T_q, T_k = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    batch_q, batch_k = draw(st.sampled_from([((), ()), ((2,), (2,)), ((3, 1), (2,)), ((), (2,))]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return (rng.normal(size=batch_q + (T_q, 2 * half)), rng.normal(size=batch_k + (T_k, 2 * half)),
            rng.integers(-3000, 3000, size=T_q), rng.integers(-3000, 3000, size=T_k),
            draw(st.sampled_from([10000.0, 100.0])))


@settings(max_examples=120, deadline=None)
@given(args=score_inputs(), shift=st.integers(-100_000, 100_000))
def test_rope_scores_equal_torch_and_depend_only_on_the_offsets(args, shift):
    Q, K, pq, pk, base = args
    mine = ref.rope_scores(Q, K, pq, pk, base)
    np.testing.assert_allclose(mine, scores_by_einsum(Q, K, pq, pk, base), rtol=0, atol=1e-9)
    np.testing.assert_allclose(ref.rope_scores(Q, K, pq + shift, pk + shift, base), mine,
                               rtol=0, atol=1e-8)
    assert mine.shape == np.broadcast_shapes(Q.shape[:-2], K.shape[:-2]) + (len(pq), len(pk))


@settings(max_examples=60, deadline=None)
@given(m=st.integers(-5000, 5000), n=st.integers(-5000, 5000), half=st.integers(1, 8),
       seed=st.integers(0, 1000))
def test_a_score_is_the_query_against_the_key_turned_back_by_the_offset(m, n, half, seed):
    q, k = np.random.default_rng(seed).normal(size=(2, 1, 2 * half))
    turned = ref.rope_scores(q, k, [m], [n])
    at_the_offset = ref.rope_scores(q, k, [m - n], [0])
    assert turned[0, 0] == pytest.approx(at_the_offset[0, 0], abs=1e-9)


def test_a_matching_key_scores_the_cosine_sum_on_average():
    """The notebook's decay curve: with k = q standard normal, the average score at offset
    Δ is (2/√d) Σ cos(Δ θ_i)."""
    d, n = 16, 20_000
    q = np.random.default_rng(3).normal(size=(n, 1, d))
    theta = 10000.0 ** (-np.arange(0, d, 2) / d)
    for offset in (0, 3, 40, 2000):
        mean = ref.rope_scores(q, q, [offset], [0])[..., 0, 0].mean()
        assert mean == pytest.approx(2 / np.sqrt(d) * np.cos(offset * theta).sum(), abs=0.1)


def test_attention_without_positions_is_permutation_equivariant_and_with_them_is_not():
    rng = np.random.default_rng(0)
    X, W = rng.normal(size=(5, 8)), rng.normal(size=(3, 8, 8)) / np.sqrt(8)
    order = [0, 4, 2, 3, 1]
    attend = lambda X: ref.self_attention(X, *W)[0]  # noqa: E731
    np.testing.assert_allclose(attend(X[order]), attend(X)[order], rtol=0, atol=1e-12)
    PE = ref.sinusoidal_positions(5, 8)
    assert np.abs(attend(X[order] + PE) - attend(X + PE)[order]).max() > 0.1


# ================================================================= the notebook

def solution_namespace() -> dict:
    """The source notebook's setup and solution cells run as a learner's notebook would."""
    nb = json.loads((ROOT / "solutions" / LESSON / f"{LESSON}.ipynb").read_text())
    module = types.ModuleType("learner_08_positions")
    ns = vars(module)
    for cell in nb["cells"]:
        meta = cell["metadata"].get("nbgrader", {})
        if cell["id"] == "setup" or (cell["cell_type"] == "code" and meta.get("solution")):
            text = "\n".join(line for line in cell["source"].splitlines()
                             if not line.startswith("%"))
            exec(compile(text, f"/learner/{cell['id']}.py", "exec"), ns)  # the course's own code
    return ns


@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_the_notebooks_solutions_pass_their_checks(hidden):
    ns = solution_namespace()
    for name in EXERCISES:
        v = verdict(name, ns[name], hidden=hidden)
        assert v.passed, v.message


def test_the_notebook_checks_each_exercise_visibly_and_hidden():
    nb = json.loads((ROOT / "solutions" / LESSON / f"{LESSON}.ipynb").read_text())
    graded = [c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade")
              and c["cell_type"] == "code"]
    sources = [c["source"] for c in graded]
    for name in EXERCISES:
        assert f'check("{name}", {name})' in sources
        assert any(f'check("{name}", {name}, hidden=True)' in s for s in sources)
