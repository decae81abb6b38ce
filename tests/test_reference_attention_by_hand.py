"""Lesson 03 references against independent oracles: integer NumPy products, Python's
integer floor division, float softmax, and the transpose relation between conventions."""
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from grader import reference as ref
from grader.reference.by_hand import STEPS, W_K, W_Q, W_V, X, published_worksheet

small = st.integers(-4, 4)
dims = st.integers(1, 5)


def all_fractions(M) -> bool:
    return isinstance(M, np.ndarray) and M.dtype == object and all(isinstance(v, Fraction) for v in M.flat)


def as_float(M) -> np.ndarray:
    return np.asarray(M, dtype=object).astype(float)


@st.composite
def key_query_pairs(draw):
    d, t_k, t_q = draw(dims), draw(dims), draw(dims)
    K = draw(arrays(np.int64, (d, t_k), elements=small))
    Q = draw(arrays(np.int64, (d, t_q), elements=small))
    return K, Q


@settings(max_examples=60, deadline=None)
@given(pair=key_query_pairs())
def test_key_query_scores_is_k_transposed_times_q(pair):
    K, Q = pair
    S = ref.key_query_scores(K, Q)
    assert all_fractions(S)
    np.testing.assert_array_equal(as_float(S), K.T @ Q)  # integers: exact in float64 too
    i, j = K.shape[1] - 1, Q.shape[1] - 1
    assert S[i, j] == sum(int(a) * int(b) for a, b in zip(K[:, i], Q[:, j]))  # k_i · q_j


@settings(max_examples=60, deadline=None)
@given(S=arrays(np.int64, st.tuples(dims, dims), elements=st.integers(-50, 50)))
def test_floor_half_matches_integer_floor_division(S):
    H = ref.floor_half(S)
    assert all_fractions(H) and all(v.denominator == 1 for v in H.flat)
    np.testing.assert_array_equal(as_float(H), S // 2)  # Python/NumPy // floors, also below 0


@pytest.mark.parametrize("s, floor", [(-1, -1), (-3, -2), (-2, -1), (1, 0), (3, 1), (0, 0)])
def test_floor_half_goes_down_for_negatives(s, floor):
    assert ref.floor_half([[s]])[0, 0] == floor


def test_floor_half_on_fractions_and_floats():
    H = ref.floor_half([[Fraction(7, 3), Fraction(-5, 2)], [0.5, -0.5]])
    assert H.tolist() == [[1, -2], [0, -1]]


@settings(max_examples=60, deadline=None)
@given(S=arrays(np.int64, st.tuples(dims, dims), elements=st.integers(-6, 8)))
def test_softmax3_columns_is_exact_and_matches_floats(S):
    A = ref.softmax3_columns(S)
    assert all_fractions(A)
    assert all(sum(A[:, j]) == 1 for j in range(A.shape[1]))  # exactly 1
    powers = 3.0 ** S
    np.testing.assert_allclose(as_float(A), powers / powers.sum(axis=0), rtol=1e-12)
    # Ratios inside a column are exact powers of 3.
    if S.shape[0] > 1:
        assert A[0, 0] / A[1, 0] == Fraction(3) ** int(S[0, 0] - S[1, 0])


@st.composite
def problems(draw):
    d_in, T, d_k, d_v = draw(dims), draw(dims), draw(dims), draw(dims)
    X_ = draw(arrays(np.int64, (d_in, T), elements=st.integers(0, 2)))
    Ws = [draw(arrays(np.int64, (d, d_in), elements=st.integers(-1, 1))) for d in (d_k, d_k, d_v)]
    return (X_, *Ws)


def float_attention(X_, W_q, W_k, W_v):
    """The worksheet in plain NumPy floats: an oracle written without Fractions."""
    Q, K, V = W_q @ X_, W_k @ X_, W_v @ X_
    scores = K.T @ Q
    scaled = np.floor_divide(scores, 2)
    powers = 3.0 ** scaled
    A = powers / powers.sum(axis=0, keepdims=True)
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": V @ A}


@settings(max_examples=40, deadline=None)
@given(problem=problems())
def test_attention_by_hand_matches_a_float_oracle(problem):
    steps = ref.attention_by_hand(*problem)
    assert list(steps) == list(STEPS)
    oracle = float_attention(*problem)
    for name in STEPS:
        assert all_fractions(steps[name]), name
        np.testing.assert_allclose(as_float(steps[name]), oracle[name], rtol=1e-12, atol=1e-12)
    assert all(sum(steps["A"][:, j]) == 1 for j in range(steps["A"].shape[1]))


@settings(max_examples=40, deadline=None)
@given(problem=problems())
def test_row_convention_is_the_transpose_of_the_column_convention(problem):
    X_, *Ws = problem
    columns = ref.attention_by_hand(X_, *Ws)
    rows = ref.row_convention_attention(X_.T, *Ws)
    for name in STEPS:
        assert rows[name].shape == columns[name].T.shape
        assert (rows[name] == columns[name].T).all(), name
    assert all(sum(rows["A"][i]) == 1 for i in range(rows["A"].shape[0]))  # rows sum to 1


def test_published_worksheet_is_hand_friendly():
    assert X.shape == (6, 4) and W_Q.shape == W_K.shape == W_V.shape == (3, 6)
    for M in (X, W_Q, W_K, W_V):
        assert M.dtype.kind == "i" and np.abs(M).max() <= 1
    key = published_worksheet().key
    scores = as_float(key["scores"])
    assert (scores < 0).sum() == 1 and scores.min() == -1  # one negative score: floor(-1/2)
    assert scores.max() <= 6 and (scores % 2 == 1).any()   # small, with odd ones
    scaled = as_float(key["scaled"])
    assert -1 <= scaled.min() and scaled.max() <= 3         # powers of 3 from 1/3 to 27
    sums = [sum(Fraction(3) ** int(s) for s in key["scaled"][:, j]) for j in range(4)]
    assert max(sums) <= 32
    for name in STEPS:
        assert max(v.denominator for v in key[name].flat) <= 32


def test_published_worksheet_shows_every_misconception():
    """Each mistake the lesson names changes some number on the published worksheet."""
    key = published_worksheet().key
    scores = key["scores"]
    assert not (scores == scores.T).all()                       # Qᵀ K differs from Kᵀ Q
    halves = [s / 2 for s in scores.flat]
    assert any(round(h) != math.floor(h) for h in halves)       # rounding differs
    assert any(int(h) != math.floor(h) for h in halves)         # truncation differs
    A = key["A"]
    assert not (A == A.T).all()                                 # V Aᵀ differs from V A
    rows = ref.softmax3_columns(key["scaled"].T).T
    assert not (rows == A).all()                                # rows differ from columns


@pytest.mark.parametrize(
    "fn, args, message",
    [
        (ref.key_query_scores, (np.ones((3, 4)), np.ones((2, 4))), r"K of shape 3×4 and Q of shape 2×4"),
        (ref.floor_half, ([[1.0, float("nan")]],), r"S must hold finite numbers, got nan"),
        (ref.softmax3_columns, ([[Fraction(1, 2)]],), r"S must hold whole numbers, got 1/2"),
        (ref.softmax3_columns, ([0, 1],), r"S must have 2 axes, got shape 2"),
        (ref.attention_by_hand, (np.ones((6, 4)), np.ones((3, 5)), np.ones((3, 6)), np.ones((3, 6))),
         r"W_Q has 5 columns \(shape 3×5\) but X has 6 rows \(shape 6×4\)"),
        (ref.attention_by_hand, (np.ones((6, 4)), np.ones((3, 6)), np.ones((2, 6)), np.ones((3, 6))),
         r"W_Q has 3 rows \(shape 3×6\) and W_K has 2"),
        (ref.row_convention_attention, (np.ones((4, 5)), np.ones((3, 6)), np.ones((3, 6)), np.ones((3, 6))),
         r"W_Q has 6 columns \(shape 3×6\) but X_rows has 5 columns \(shape 4×5\)"),
        (ref.key_query_scores, ([[1, 2], [3]], [[1]]), r"K could not be read as an array"),
        (ref.floor_half, ([["3"]],), r"S must hold numbers, got '3'"),
    ],
)
def test_bad_input_raises_a_value_error_naming_the_argument(fn, args, message):
    with pytest.raises(ValueError, match=message):
        fn(*args)


def test_inputs_are_not_changed():
    S = np.array([[3, -1], [2, 5]])
    before = S.copy()
    ref.floor_half(S)
    ref.softmax3_columns(S)
    np.testing.assert_array_equal(S, before)
