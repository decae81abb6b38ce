"""grader.check on lesson 01: it accepts correct code written any way, rejects shortcuts
found in the bytecode, and explains failures the way a teaching assistant would."""
import numpy as np
import pytest

from grader import CheckFailed, check
from grader import lessons
from grader.learner.validation import matmul_operands
from sources import handed_over
from stated_rules import broken


def failure(name, fn, hidden=False) -> str:
    with pytest.raises(CheckFailed) as info:
        check(name, fn, hidden=hidden)
    return str(info.value)


# ----------------------------------------------------------------- correct, written differently

def dot_with_generator(A, B):
    A, B = np.asarray(A, dtype=float), np.asarray(B, dtype=float)
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[0]:
        raise ValueError(f"shapes {A.shape} and {B.shape} do not fit")
    return np.array([[sum(A[i, p] * B[p, j] for p in range(A.shape[1]))
                      for j in range(B.shape[1])] for i in range(A.shape[0])])


def rows_float32_throughout(A, B):
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]), dtype=np.float32)
    for i in range(A.shape[0]):
        C[i] = (A[i][:, None] * B).sum(axis=0)
    return C


def cols_by_list_of_columns(A, B):
    A, B = matmul_operands(A, B)
    cols = [sum(B[p, j] * A[:, p] for p in range(A.shape[1])) for j in range(B.shape[1])]
    return np.stack(cols, axis=1)


def outer_with_np_outer_then_sum(A, B):
    A, B = matmul_operands(A, B)
    return np.sum([np.outer(A[:, p], B[p]) for p in range(A.shape[1])], axis=0)


def batched_with_at(A, B):
    A, B = np.asarray(A, dtype=float), np.asarray(B, dtype=float)
    if A.ndim < 2 or B.ndim < 2:
        raise ValueError("A and B need at least two axes")
    return A @ B


def einsum_explicit(Q, K):
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    if Q.ndim < 2 or K.ndim < 2 or Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"bad shapes {Q.shape} and {K.shape}")
    return np.einsum("...ik,...jk->...ij", Q, K)


def mixture_with_isclose(W, V):
    W, V = np.asarray(W, dtype=float), np.asarray(V, dtype=float)
    if W.shape[-1] != V.shape[-2]:
        raise ValueError("W and V do not fit")
    if not np.isfinite(W).all() or (W < 0).any() or not np.allclose(W.sum(-1), 1, rtol=0, atol=1e-6):
        raise ValueError("rows of W must be non-negative and sum to 1")
    return np.einsum("...ij,...jd->...id", W, V)


@pytest.mark.parametrize(
    "name, fn",
    [
        ("matmul_dot", dot_with_generator),
        ("matmul_rows", rows_float32_throughout),
        ("matmul_cols", cols_by_list_of_columns),
        ("matmul_outer", outer_with_np_outer_then_sum),
        ("batched_matmul", batched_with_at),
        ("einsum_scores", einsum_explicit),
        ("weighted_average_rows", mixture_with_isclose),
    ],
)
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_correct_alternatives_pass(name, fn, hidden, capsys):
    check(name, fn, hidden=hidden)
    assert "✓" in capsys.readouterr().out


def test_cases_include_float32_lists_and_strided_views(capsys):
    seen = {}

    def spy(A, B):
        seen.setdefault(type(A).__name__, 0)
        if isinstance(A, np.ndarray):
            seen[str(A.dtype)] = True
            seen["strided"] = seen.get("strided") or not A.flags.c_contiguous
        return dot_with_generator(A, B)

    check("matmul_dot", spy)
    assert {"list", "ndarray", "float32", "float64"} <= set(seen) and seen["strided"]


# ----------------------------------------------------------------- forbidden shortcuts

def uses_at(A, B):
    A, B = matmul_operands(A, B)
    return A @ B


from numpy import matmul as mm  # noqa: E402  (an alias the scan must see through)


def uses_alias(A, B):
    A, B = matmul_operands(A, B)
    return mm(A, B)


def uses_method(A, B):
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]))
    for i in range(A.shape[0]):
        C[i] = A[i].dot(B)
    return C


def _helper(u, v):
    return np.inner(u, v)


def uses_helper(A, B):
    A, B = matmul_operands(A, B)
    return np.array([[_helper(A[i], B[:, j]) for j in range(B.shape[1])] for i in range(A.shape[0])])


def uses_lambda(A, B):
    A, B = matmul_operands(A, B)
    f = lambda x, y: np.einsum("ik,kj->ij", x, y)  # noqa: E731
    return f(A, B)


def mentions_matmul_only_in_text(A, B):
    """Comments and strings are not code: np.matmul, A @ B."""
    A, B = matmul_operands(A, B)
    note = "np.matmul(A, B) would be A @ B"  # noqa: F841
    return dot_with_generator(A, B)


@pytest.mark.parametrize(
    "fn, named",
    [
        (uses_at, "the @ operator"),
        (uses_alias, "matmul (as `mm`)"),
        (uses_method, "np.dot / .dot()"),
        (uses_helper, "np.inner"),
        (uses_lambda, "np.einsum"),
    ],
)
def test_shortcuts_are_found_and_named(fn, named):
    message = failure("matmul_dot", fn)
    assert "asks you to do by hand" in message and named in message
    assert f"of {fn.__name__}" in message or "of _helper" in message or "<lambda>" in message


def test_words_in_strings_and_comments_are_not_shortcuts(capsys):
    check("matmul_dot", mentions_matmul_only_in_text)
    assert "✓" in capsys.readouterr().out


def test_own_helper_named_dot_is_fine(capsys):
    namespace = {"np": np, "matmul_operands": matmul_operands}
    exec(
        "def dot(u, v):\n"
        "    return sum(a * b for a, b in zip(u, v))\n"
        "def matmul_dot(A, B):\n"
        "    A, B = matmul_operands(A, B)\n"
        "    return np.array([[dot(A[i], B[:, j]) for j in range(B.shape[1])]\n"
        "                     for i in range(A.shape[0])])\n",
        namespace,
    )
    check("matmul_dot", namespace["matmul_dot"])
    assert "✓" in capsys.readouterr().out


def batched_with_loop(A, B):
    A, B = np.asarray(A, float), np.asarray(B, float)
    return np.stack([a @ b for a, b in zip(A, B)])


def test_batched_matmul_rejects_a_loop_over_the_batch():
    message = failure("batched_matmul", batched_with_loop)
    assert "a comprehension" in message and "no Python loop" in message


def einsum_free_scores(Q, K):
    return np.asarray(Q) @ np.swapaxes(np.asarray(K), -1, -2)


def test_einsum_scores_requires_einsum():
    message = failure("einsum_scores", einsum_free_scores)
    assert "should use np.einsum" in message or "the @ operator" in message


# ----------------------------------------------------------------- explaining failures

def not_written(A, B):
    A, B = matmul_operands(A, B)
    raise NotImplementedError()


def test_a_stub_is_reported_as_not_implemented():
    message = failure("matmul_dot", not_written)
    assert "not implemented yet" in message and "NotImplementedError" in message


def crashes_on_rectangles(A, B):
    A, B = matmul_operands(A, B)
    m = B.shape[1]
    C = np.zeros((m, m))  # should be n × m
    for i in range(A.shape[0]):
        for j in range(m):
            C[i, j] = np.sum(A[i, :] * B[:, j])
    return C


def test_a_crash_shows_the_input_the_line_and_a_hint():
    message = failure("matmul_dot", crashes_on_rectangles)
    assert "raised IndexError" in message
    assert "C[i, j] = np.sum(A[i, :] * B[:, j])" in message
    assert "A =" in message and "B =" in message
    # Not the swapped bounds: on the products with n < m this answer returns a result. It
    # is an edit of a right program, the one the comment in it says: C made m × m.
    assert "Diagnosis: your answer behaves exactly as if the result C used `m` where it needs `n`" \
        in message, message


def dot_with_swapped_bounds(A, B):
    A, B = matmul_operands(A, B)
    rows, cols = A.shape[0], B.shape[1]
    C = np.zeros((rows, cols))
    for r in range(cols):
        for c in range(rows):
            C[r, c] = sum(A[r, p] * B[p, c] for p in range(A.shape[1]))
    return C


def rows_with_a_transposed(A, B):
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]))
    for i in range(A.shape[0]):
        for p in range(A.shape[1]):
            C[i] = C[i] + A[p][i] * B[p]
    return C


def cols_with_b_transposed(A, B):
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]))
    for j in range(B.shape[1]):
        for p in range(B.shape[0]):
            C[:, j] = C[:, j] + B[j][p] * A[:, p]
    return C


@pytest.mark.parametrize("name, fn, words", [
    ("matmul_dot", dot_with_swapped_bounds, "your loops run i over the columns of B and j over "
                                            "the rows of A: the two ranges are swapped"),
    # named by the error model (tests/test_rules_dropped.py)
    ("matmul_rows", rows_with_a_transposed, "your answer behaves exactly as if the weighted sum "
                                            "for row i read `[p, i]` where it needs `[i, p]`"),
    ("matmul_cols", cols_with_b_transposed, "your answer behaves exactly as if the weighted sum "
                                            "for column j read `[j, p]` where it needs `[p, j]`"),
], ids=["dot", "rows", "cols"])
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_swapped_bounds_and_indices_are_diagnosed_on_a_product_that_is_not_square(
        name, fn, words, hidden):
    message = failure(name, fn, hidden)
    assert "raised IndexError" in message
    assert "Diagnosis: " + words in message, message
    assert "this input\nmay not be square" not in message  # the generic words give way
    assert not handed_over(message, "01_matmul_views")


def test_the_products_are_not_square_both_ways_among_the_small_cases():
    cases = [c.args for c in lessons.get("matmul_dot").draw(hidden=False)][:4]
    assert any(A.shape[0] > B.shape[1] for A, B in cases)
    assert any(A.shape[0] < B.shape[1] for A, B in cases)


def changes_its_input(A, B):
    A, B = matmul_operands(A, B)
    A *= 1.0
    A[0, 0] = 0.0
    return dot_with_generator(A, B)


def test_changing_an_input_in_place_is_reported():
    message = failure("matmul_dot", changes_its_input)
    assert "changed its input `A` in place" in message


def slightly_off(A, B):
    return dot_with_generator(A, B) * (1 + 1e-3)


def test_a_small_error_is_not_within_tolerance():
    message = failure("matmul_dot", slightly_off)
    assert "entries differ" in message and "largest error" in message


def returns_nothing(A, B):
    A, B = matmul_operands(A, B)
    dot_with_generator(A, B)


def test_a_missing_return_is_named():
    assert "returned None (is a `return` statement missing?)" in failure("matmul_dot", returns_nothing)


def accepts_anything(A, B):
    A, B = np.asarray(A, float), np.asarray(B, float)
    k = min(A.shape[-1], B.shape[0])
    return dot_with_generator(A[:, :k], B[:k])


def test_accepting_mismatched_shapes_fails():
    message = failure("matmul_dot", accepts_anything)
    assert "should reject this input with a ValueError" in message
    assert "A has 3 columns but B has 2 rows" in message


def test_the_failing_input_is_the_smallest():
    def wrong_when_k_is_2(A, B):
        out = dot_with_generator(A, B)
        return out + 1 if np.asarray(A).shape[1] >= 2 else out

    message = failure("matmul_dot", wrong_when_k_is_2)
    assert "shape 1×2" in message  # the 1×2 by 2×1 case, before any bigger one


def test_not_a_function_is_explained():
    assert "needs your function itself" in failure("matmul_dot", None)


def test_unknown_exercise_names_the_known_ones():
    with pytest.raises(KeyError, match="matmul_dot"):
        check("matmul_dott", dot_with_generator)


def test_notebooks_show_the_message_without_grader_frames():
    lines = CheckFailed("matmul_dot is not right yet.\n\nHint: look.")._render_traceback_()
    assert lines == ["✗ matmul_dot is not right yet.", "", "Hint: look."]


def rejects_valid_weights(W, V):
    W, V = np.asarray(W, dtype=float), np.asarray(V, dtype=float)
    if np.any(np.abs(W.sum(axis=0) - 1) > 1e-6):  # columns, in the learner's own words
        raise ValueError("the weights don't add up")
    return W @ V


def test_a_value_error_on_valid_input_says_the_input_is_valid():
    message = failure("weighted_average_rows", rejects_valid_weights)
    assert "raised ValueError: the weights don't add up" in message
    assert "This input is valid" in message and "too strict" in message
    assert "Diagnosis" not in message  # the catalogued wording differs: no guess


# ----------------------------------------------------------------- the rules the notebook states

def dot_by_broadcasting(A, B):
    """Every entry at once, where the docstring asks for loops over i and j."""
    A, B = matmul_operands(A, B)
    return (A[:, :, None] * B[None, :, :]).sum(axis=1)


def rows_by_broadcasting(A, B):
    A, B = matmul_operands(A, B)
    return (A[:, :, None] * B[None, :, :]).sum(axis=1)


def cols_with_dot(A, B):
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]))
    for j in range(B.shape[1]):
        C[:, j] = A.dot(B[:, j])
    return C


def cols_by_broadcasting(A, B):
    A, B = matmul_operands(A, B)
    return (B[None, :, :] * A[:, :, None]).sum(axis=1)


def outer_with_tensordot(A, B):
    A, B = matmul_operands(A, B)
    return np.tensordot(A, B, axes=1)


def scores_by_broadcasting(Q, K):
    """Right, and no other product, but no einsum either."""
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError("Q and K do not fit")
    return (Q[..., :, None, :] * K[..., None, :, :]).sum(axis=-1)


def einsum_scores_one_item_at_a_time(Q, K):
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError("Q and K do not fit")
    flat_q, flat_k = Q.reshape(-1, *Q.shape[-2:]), np.broadcast_to(K, Q.shape[:-2] + K.shape[-2:])
    out = [np.einsum("qd,kd->qk", q, k) for q, k in zip(flat_q, flat_k.reshape(-1, *K.shape[-2:]))]
    return np.array(out).reshape(Q.shape[:-1] + K.shape[-2:-1])


def outer_by_broadcasting(A, B):
    A, B = matmul_operands(A, B)
    return (A.T[:, :, None] * B[:, None, :]).sum(axis=0)


def mixture_without_a_message(W, V):
    return _mixture(W, V, message="")


def mixture_missing_nan(W, V):
    return _mixture(W, V, nan_safe=False)


NO_PRODUCTS = ("you may **not** use `@`, `np.matmul`, `np.dot`, `np.einsum`, `np.inner`, "
               "`np.tensordot` or `np.vdot`")
OPERANDS = ("`matmul_operands` turns lists into arrays and raises a `ValueError` when the shapes "
            "do not fit")
BREAKS = {
    ("matmul_dot", NO_PRODUCTS): uses_at,
    ("matmul_dot", "with a Python loop (over i and j: one entry at a time)"): dot_by_broadcasting,
    ("matmul_dot", OPERANDS): accepts_anything,
    ("matmul_rows", NO_PRODUCTS): uses_method,
    ("matmul_rows", "with a Python loop (over i and p)"): rows_by_broadcasting,
    ("matmul_rows", OPERANDS): accepts_anything,
    ("matmul_cols", NO_PRODUCTS): cols_with_dot,
    ("matmul_cols", "with a Python loop (over j and p)"): cols_by_broadcasting,
    ("matmul_cols", OPERANDS): accepts_anything,
    ("matmul_outer", NO_PRODUCTS): outer_with_tensordot,
    ("matmul_outer", "with a Python loop (over p)"): outer_by_broadcasting,
    ("matmul_outer", OPERANDS): accepts_anything,
    ("batched_matmul", "with no Python loop"): batched_with_loop,
    ("einsum_scores", "Use np.einsum"): scores_by_broadcasting,
    ("einsum_scores", "with no loop and no other product"): einsum_scores_one_item_at_a_time,
    ("weighted_average_rows", "raise a `ValueError` for them instead of returning a mixture"):
        mixture_missing_nan,
    ("weighted_average_rows", "a `ValueError` with a non-empty message"): mixture_without_a_message,
}


@pytest.mark.parametrize("key", BREAKS, ids=lambda key: f"{key[0]}: {key[1][:40]}")
def test_an_answer_that_breaks_a_stated_rule_fails_and_names_it(key):
    assert not broken(key, BREAKS[key])


# What weighted_average_rows must raise, as the notebook says and the check enforces: a
# ValueError with a non-empty message for a row summing to too little or too much, a negative
# weight in a row summing to 1, a NaN and an infinite weight. The wording is the learner's.

def _mixture(W, V, *, message="invalid weights", negatives=True, nan_safe=True, too_large=True,
             finite=True):
    """weighted_average_rows as a learner writes it, with one of its checks left out."""
    W, V = np.asarray(W, dtype=float), np.asarray(V, dtype=float)
    if W.shape[-1] != V.shape[-2]:
        raise ValueError(f"W has {W.shape[-1]} weights per row but V has {V.shape[-2]} rows")
    if nan_safe and np.isnan(W).any():
        raise ValueError(message)
    summed = np.where(np.isfinite(W), W, 0.0) if not finite else W  # an inf counted as 0
    if finite and np.isinf(W).any():
        raise ValueError(message)
    if negatives and (W < 0).any():
        raise ValueError(message)
    total = summed.sum(axis=-1)
    if np.any(total < 1 - 1e-6) or (too_large and np.any(total > 1 + 1e-6)):
        raise ValueError(message)
    with np.errstate(invalid="ignore"):  # inf * 0, when an infinite weight got through
        return W @ V


@pytest.mark.parametrize("knob, why", [
    ({"message": ""}, "raised ValueError with an empty message"),
    ({"too_large": False}, "because row 0 of W sums to 1.25, not 1"),
    ({"negatives": False}, "because W has a negative weight (-0.5), even though the row sums to 1"),
    ({"nan_safe": False}, "because W contains NaN"),
    ({"finite": False}, "because W contains an infinite weight"),
], ids=["empty message", "sum too large", "negative", "NaN", "infinite"])
def test_weighted_average_rows_must_reject_each_kind_of_bad_weights(knob, why):
    message = failure("weighted_average_rows", lambda W, V: _mixture(W, V, **knob))
    assert "weighted_average_rows should reject this input with a ValueError" in message
    assert why in message


@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_weighted_average_rows_may_word_its_error_as_it_likes(hidden, capsys):
    check("weighted_average_rows", lambda W, V: _mixture(W, V, message="no"), hidden=hidden)
    assert "✓" in capsys.readouterr().out


def test_an_error_of_another_wording_does_not_borrow_a_diagnosis():
    def einsum_with_k_t(Q, K):
        Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
        if Q.shape[-1] != K.shape[-1]:
            raise ValueError("Q and K do not fit")
        return np.einsum("...qd,...dk->...qk", Q, K.T)

    message = failure("einsum_scores", einsum_with_k_t)
    assert "`K.T`" in message and "no batch axes" not in message


# ============================================================================ the reference
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
