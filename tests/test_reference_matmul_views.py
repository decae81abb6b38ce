"""Lesson 01 references against NumPy's own product, on property-based cases."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from grader import reference as ref

finite = st.floats(-1e3, 1e3, allow_nan=False, width=64)
dims = st.integers(1, 6)


@st.composite
def matrix_pairs(draw, dtype=np.float64):
    n, k, m = draw(dims), draw(dims), draw(dims)
    A = draw(arrays(dtype, (n, k), elements=finite.map(float)))
    B = draw(arrays(dtype, (k, m), elements=finite.map(float)))
    return A, B


LOOPS = [ref.matmul_dot, ref.matmul_rows, ref.matmul_cols, ref.matmul_outer]


@pytest.mark.parametrize("fn", LOOPS, ids=lambda f: f.__name__)
@settings(max_examples=60, deadline=None)
@given(pair=matrix_pairs())
def test_loop_products_equal_np_matmul(fn, pair):
    A, B = pair
    np.testing.assert_allclose(fn(A, B), np.matmul(A, B), rtol=1e-9, atol=1e-6)


@pytest.mark.parametrize("fn", LOOPS, ids=lambda f: f.__name__)
def test_float32_stays_float32(fn):
    A = np.ones((2, 3), np.float32)
    B = np.ones((3, 4), np.float32)
    assert fn(A, B).dtype == np.float32
    assert fn(A.astype(float), B).dtype == np.float64


@st.composite
def batched_pairs(draw):
    batch = draw(st.lists(st.integers(1, 3), min_size=0, max_size=2))
    n, k, m = draw(dims), draw(dims), draw(dims)
    a_batch = [draw(st.sampled_from([b, 1])) for b in batch]
    drop = draw(st.integers(0, len(batch)))  # A may have fewer batch axes: broadcasting
    A = draw(arrays(np.float64, tuple(a_batch[drop:]) + (n, k), elements=finite))
    B = draw(arrays(np.float64, tuple(batch) + (k, m), elements=finite))
    return A, B


@settings(max_examples=80, deadline=None)
@given(pair=batched_pairs())
def test_batched_matmul_equals_np_matmul(pair):
    A, B = pair
    np.testing.assert_allclose(ref.batched_matmul(A, B), np.matmul(A, B), rtol=1e-12)


@settings(max_examples=80, deadline=None)
@given(pair=batched_pairs())
def test_einsum_scores_equals_q_times_k_transposed(pair):
    Q, Kt = pair  # Kt is [..., d, T_k]; its transpose is a key matrix
    K = np.swapaxes(Kt, -1, -2)
    np.testing.assert_allclose(ref.einsum_scores(Q, K), np.matmul(Q, Kt), rtol=1e-9, atol=1e-6)


@st.composite
def convex_pairs(draw):
    n, m, d = draw(dims), draw(dims), draw(dims)
    raw = draw(arrays(np.float64, (n, m), elements=st.floats(0, 10)))
    raw[:, 0] += 1e-3
    W = raw / raw.sum(axis=1, keepdims=True)
    V = draw(arrays(np.float64, (m, d), elements=finite))
    return W, V


@settings(max_examples=60, deadline=None)
@given(pair=convex_pairs())
def test_weighted_average_rows_equals_matmul_and_stays_in_range(pair):
    W, V = pair
    out = ref.weighted_average_rows(W, V)
    np.testing.assert_allclose(out, W @ V, rtol=1e-12, atol=1e-9)
    assert np.all(out <= V.max(axis=0) + 1e-9) and np.all(out >= V.min(axis=0) - 1e-9)


@pytest.mark.parametrize(
    "W, problem",
    [
        ([[0.5, 0.4]], "sums to 0.9"),
        ([[1.2, -0.2]], "is negative"),
        ([[np.nan, 1.0]], "NaN"),
    ],
)
def test_weighted_average_rows_names_the_bad_weights(W, problem):
    with pytest.raises(ValueError, match=problem):
        ref.weighted_average_rows(W, np.ones((2, 3)))


@pytest.mark.parametrize("fn", LOOPS + [ref.batched_matmul], ids=lambda f: f.__name__)
def test_mismatched_shapes_name_both_shapes(fn):
    with pytest.raises(ValueError, match=r"A of shape 2×3.*B of shape 4×2"):
        fn(np.ones((2, 3)), np.ones((4, 2)))


def test_einsum_scores_names_the_feature_mismatch():
    with pytest.raises(ValueError, match=r"Q of shape 2×3 and K of shape 5×4"):
        ref.einsum_scores(np.ones((2, 3)), np.ones((5, 4)))


def test_batch_axes_that_do_not_broadcast_are_named():
    with pytest.raises(ValueError, match="do not broadcast"):
        ref.batched_matmul(np.ones((2, 2, 3)), np.ones((3, 3, 2)))


def test_ragged_lists_are_a_value_error():
    with pytest.raises(ValueError, match="A could not be read as an array"):
        ref.matmul_dot([[1, 2], [3]], [[1], [2]])
