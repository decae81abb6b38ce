"""Right but unusual answers to lessons 01 to 04, as data: ``RIGHT``, each a source a learner
types (imports, given lines, the answer and the graded helpers it calls) with what is
unusual about it.

They were written from the student notebooks, the README, ``courseware/`` and
``grader/learner/validation.py`` alone, by a tester who had not read the checks, and each
was verified against the tester's own independent computations, never against a check.
So they measure whether the checks accept right answers nobody anticipated
(``tests/test_fresh_right.py``). Keep them as they were written: an answer a check
rejects is a defect of the check, not of the answer.
"""
from typing import NamedTuple


class Right(NamedTuple):
    id: str          # short unique id
    exercise: str    # the graded name, exactly as in the notebook's check("name", ...) cell
    about: str       # one sentence: what is unusual about it
    source: str      # the whole answer cell(s), imports and given lines included


RIGHT = []

# ============================================================================ lesson 01

RIGHT.append(Right(
    id="f32-01-dot-reduce-opmul",
    exercise="matmul_dot",
    about="Nested loops over i and j, each entry a functools.reduce of operator.add over map(operator.mul, row, column) against B's rows-of-transpose.",
    source=r'''
import functools
import operator

import numpy as np
from grader.learner.validation import matmul_operands, as_array


def matmul_dot(A, B):
    """C[i, j] = row i of A · column j of B, with explicit loops over i and j."""
    A, B = matmul_operands(A, B)
    n, m = A.shape[0], B.shape[1]
    C = np.zeros((n, m), dtype=np.result_type(A, B))
    columns_of_B = B.T            # column j of B is row j of its transpose
    for i in range(n):
        row = A[i]
        for j in range(m):
            C[i, j] = functools.reduce(operator.add, map(operator.mul, row, columns_of_B[j]), 0.0)
    return C
'''))

RIGHT.append(Right(
    id="f32-01-dot-enumerate-rows-cols",
    exercise="matmul_dot",
    about="Loops with enumerate over the rows of A and over the rows of B.T, each entry an elementwise product summed by ndarray.sum, written into a preallocated result.",
    source=r'''
import numpy as np
from grader.learner.validation import matmul_operands, as_array


def matmul_dot(A, B):
    """C[i, j] = row i of A · column j of B, with explicit loops over i and j."""
    A, B = matmul_operands(A, B)
    out = np.empty((A.shape[0], B.shape[1]), dtype=np.result_type(A, B))
    for i, a_row in enumerate(A):
        for j, b_col in enumerate(B.T):
            out[i, j] = (a_row * b_col).sum()
    return out
'''))

RIGHT.append(Right(
    id="f32-01-rows-list-then-array",
    exercise="matmul_rows",
    about="Builds each output row as a running sum with a fresh array per step, collects the rows in a Python list and turns the list into an array (reshape keeps n = 0 right).",
    source=r'''
import numpy as np
from grader.learner.validation import matmul_operands, as_array


def matmul_rows(A, B):
    """Row i of C = sum over p of A[i, p] * (row p of B). Loop over i and p."""
    A, B = matmul_operands(A, B)
    dtype = np.result_type(A, B)
    n, k = A.shape
    m = B.shape[1]
    rows = []
    for i in range(n):
        acc = np.zeros(m, dtype=dtype)
        for p in range(k):
            acc = acc + A[i, p] * B[p]
        rows.append(acc)
    return np.array(rows, dtype=dtype).reshape(n, m)
'''))

RIGHT.append(Right(
    id="f32-01-rows-zip-weights",
    exercise="matmul_rows",
    about="Zips each row of weights with the rows of B (loop over i via enumerate, loop over p via zip) and accumulates in place into a row view of the output.",
    source=r'''
import numpy as np
from grader.learner.validation import matmul_operands, as_array


def matmul_rows(A, B):
    """Row i of C = sum over p of A[i, p] * (row p of B). Loop over i and p."""
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]), dtype=np.result_type(A, B))
    for i, weights in enumerate(A):
        target = C[i]                      # a view: writing into it fills row i of C
        for w, b_row in zip(weights, B):   # p runs along row i of A and down the rows of B
            target += w * b_row
    return C
'''))

RIGHT.append(Right(
    id="f32-01-cols-p-outer-loop-transposed-view",
    exercise="matmul_cols",
    about="Loop order swapped (p outside, j inside) and columns of C written as rows of the transposed view C.T.",
    source=r'''
import numpy as np
from grader.learner.validation import matmul_operands, as_array


def matmul_cols(A, B):
    """Column j of C = sum over p of B[p, j] * (column p of A). Loop over j and p."""
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]), dtype=np.result_type(A, B))
    C_cols = C.T            # row j of C.T is column j of C (a view)
    A_cols = A.T            # row p of A.T is column p of A
    for p in range(A.shape[1]):
        for j in range(B.shape[1]):
            C_cols[j] = C_cols[j] + B[p, j] * A_cols[p]
    return C
'''))

RIGHT.append(Right(
    id="f32-01-cols-helper-column-mix",
    exercise="matmul_cols",
    about="A nested helper mixes the columns of A for one column of weights, looping over p; the outer loop over j stacks the columns along axis 1.",
    source=r'''
import numpy as np
from grader.learner.validation import matmul_operands, as_array


def matmul_cols(A, B):
    """Column j of C = sum over p of B[p, j] * (column p of A). Loop over j and p."""
    A, B = matmul_operands(A, B)
    dtype = np.result_type(A, B)

    def mix_columns(weights):
        column = np.zeros(A.shape[0], dtype=dtype)
        for p in range(len(weights)):
            column = column + weights[p] * A[:, p]
        return column

    C = np.empty((A.shape[0], B.shape[1]), dtype=dtype)
    for j in range(B.shape[1]):
        C[:, j] = mix_columns(B[:, j])
    return C
'''))

RIGHT.append(Right(
    id="f32-01-outer-sum-generator-start",
    exercise="matmul_outer",
    about="Python's built-in sum over a generator of broadcast rank-1 terms A[:, [p]] * B[[p], :], started from a zero matrix of the right dtype.",
    source=r'''
import numpy as np
from grader.learner.validation import matmul_operands, as_array


def matmul_outer(A, B):
    """C = sum over p of the outer product of column p of A and row p of B."""
    A, B = matmul_operands(A, B)
    start = np.zeros((A.shape[0], B.shape[1]), dtype=np.result_type(A, B))
    return sum((A[:, [p]] * B[[p], :] for p in range(A.shape[1])), start)
'''))

RIGHT.append(Right(
    id="f32-01-outer-multiply-outer-loop",
    exercise="matmul_outer",
    about="A for loop over zip(A.T, B) adding np.multiply.outer(column, row) (the ufunc's outer, not np.outer) into an accumulator.",
    source=r'''
import numpy as np
from grader.learner.validation import matmul_operands, as_array


def matmul_outer(A, B):
    """C = sum over p of the outer product of column p of A and row p of B."""
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]), dtype=np.result_type(A, B))
    for column, row in zip(A.T, B):        # column p of A goes with row p of B
        C = C + np.multiply.outer(column, row)
    return C
'''))

RIGHT.append(Right(
    id="f32-01-batched-broadcast-sum",
    exercise="batched_matmul",
    about="No matmul at all: broadcasts A[..., :, :, None] * B[..., None, :, :] and sums away the shared axis k.",
    source=r'''
import numpy as np
from grader.learner.validation import matmul_operands, as_array


def batched_matmul(A, B):
    """[..., n, k] @ [..., k, m] -> [..., n, m] for every batch item, with no Python loop.

    The batch axes broadcast: [n, k] times [b, k, m] gives [b, n, m].
    """
    A = as_array(A, "A", min_ndim=2)
    B = as_array(B, "B", min_ndim=2)
    if A.shape[-1] != B.shape[-2]:
        raise ValueError(f"A has {A.shape[-1]} columns but B has {B.shape[-2]} rows "
                         f"(shapes {A.shape} and {B.shape})")
    terms = A[..., :, :, np.newaxis] * B[..., np.newaxis, :, :]   # [..., n, k, m]
    return terms.sum(axis=-2)
'''))

RIGHT.append(Right(
    id="f32-01-batched-einsum-ellipsis",
    exercise="batched_matmul",
    about="One np.einsum with an ellipsis for the broadcast batch axes instead of @.",
    source=r'''
import numpy as np
from grader.learner.validation import matmul_operands, as_array


def batched_matmul(A, B):
    """[..., n, k] @ [..., k, m] -> [..., n, m] for every batch item, with no Python loop.

    The batch axes broadcast: [n, k] times [b, k, m] gives [b, n, m].
    """
    A = as_array(A, "A", min_ndim=2)
    B = as_array(B, "B", min_ndim=2)
    if A.shape[-1] != B.shape[-2]:
        raise ValueError(f"A has {A.shape[-1]} columns but B has {B.shape[-2]} rows "
                         f"(shapes {A.shape} and {B.shape})")
    return np.einsum("...nk,...km->...nm", A, B)
'''))

RIGHT.append(Right(
    id="f32-01-einsum-sublist-form",
    exercise="einsum_scores",
    about="np.einsum in its sublist (interleaved operand, axis-list) form with Ellipsis, no subscript string.",
    source=r'''
import numpy as np
from grader.learner.validation import matmul_operands, as_array

QUERY, KEY, FEATURE = 0, 1, 2     # axis labels for einsum's sublist form


def einsum_scores(Q, K):
    """Q Kᵀ for every batch item: [..., T_q, d] and [..., T_k, d] -> [..., T_q, T_k].

    Use a single np.einsum call.
    """
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share their last axis, got {Q.shape} and {K.shape}")
    return np.einsum(Q, [Ellipsis, QUERY, FEATURE], K, [Ellipsis, KEY, FEATURE],
                     [Ellipsis, QUERY, KEY])
'''))

RIGHT.append(Right(
    id="f32-01-einsum-keys-first-optimize",
    exercise="einsum_scores",
    about="Passes K before Q with its own letters ('...jc,...ic->...ij') and optimize=True, still one einsum call.",
    source=r'''
import numpy as np
from grader.learner.validation import matmul_operands, as_array


def einsum_scores(Q, K):
    """Q Kᵀ for every batch item: [..., T_q, d] and [..., T_k, d] -> [..., T_q, T_k].

    Use a single np.einsum call.
    """
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share their last axis, got {Q.shape} and {K.shape}")
    return np.einsum("...jc,...ic->...ij", K, Q, optimize=True)
'''))

RIGHT.append(Right(
    id="f32-01-convex-subclass-error-einsum",
    exercise="weighted_average_rows",
    about="Raises a learner-defined subclass of ValueError naming the first bad row, tests the sum with np.isclose(rtol=0, atol=1e-6) after a finiteness test, and mixes with einsum.",
    source=r'''
import numpy as np
from grader.learner.validation import matmul_operands, as_array


class NotConvexError(ValueError):
    """Weights that are not a convex combination."""


def _first_bad(rows_ok):
    where = np.argwhere(~rows_ok)
    return tuple(int(i) for i in where[0])


def weighted_average_rows(W, V):
    """Row i of the result mixes the rows of V with weights W[i] (non-negative, sum 1).

    W: [..., n, m], V: [..., m, d] -> [..., n, d]. Raises ValueError for invalid weights.
    """
    W = as_array(W, "W", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if W.shape[-1] != V.shape[-2]:
        raise ValueError(f"W has {W.shape[-1]} weights per row but V has {V.shape[-2]} rows")
    finite = np.isfinite(W).all(axis=-1)
    if not finite.all():
        raise NotConvexError(f"row {_first_bad(finite)} of W holds a NaN or infinite weight")
    non_negative = (W >= 0).all(axis=-1)
    if not non_negative.all():
        raise NotConvexError(f"row {_first_bad(non_negative)} of W has a negative weight")
    sums_to_one = np.isclose(W.sum(axis=-1), 1.0, rtol=0.0, atol=1e-6)
    if not sums_to_one.all():
        bad = _first_bad(sums_to_one)
        raise NotConvexError(f"row {bad} of W sums to {W.sum(axis=-1)[bad]!r}, not 1")
    return np.einsum("...nm,...md->...nd", W, V)
'''))

RIGHT.append(Right(
    id="f32-01-convex-single-mask-message-list",
    exercise="weighted_average_rows",
    about="Builds one boolean 'row is convex' array whose NaN handling comes from writing the sum test as `<= 1e-6` (False for NaN), collects every reason in a list for the message, then uses @.",
    source=r'''
import numpy as np
from grader.learner.validation import matmul_operands, as_array


def weighted_average_rows(W, V):
    """Row i of the result mixes the rows of V with weights W[i] (non-negative, sum 1).

    W: [..., n, m], V: [..., m, d] -> [..., n, d]. Raises ValueError for invalid weights.
    """
    W = as_array(W, "W", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if W.shape[-1] != V.shape[-2]:
        raise ValueError(f"W has {W.shape[-1]} weights per row but V has {V.shape[-2]} rows")
    with np.errstate(invalid="ignore", over="ignore"):
        totals = W.sum(axis=-1)                      # NaN when a row mixes +inf and -inf
        sum_ok = np.abs(totals - 1) <= 1e-6          # False for NaN sums, as it should be
        sign_ok = ~(W < 0).any(axis=-1)
    finite_ok = np.isfinite(W).all(axis=-1)
    ok = sum_ok & sign_ok & finite_ok
    if not ok.all():
        row = tuple(int(i) for i in np.argwhere(~ok)[0])
        reasons = []
        if not finite_ok[row]:
            reasons.append("it holds NaN or infinity")
        if not sign_ok[row]:
            reasons.append("it has a negative weight")
        if not sum_ok[row]:
            reasons.append(f"its weights add up to {totals[row]} instead of 1")
        raise ValueError(f"W[{', '.join(map(str, row))}] is not a convex weight row: "
                         + "; ".join(reasons))
    return W @ V
'''))

# ============================================================================ lesson 02

_L02_SOFTMAX_LSE = r'''
def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    shifted = x - x.max(axis=axis, keepdims=True)
    log_total = np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
    return np.exp(shifted - log_total)          # log-softmax first, then one exp
'''

_L02_SOFTMAX_PLAIN = r'''
def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
'''

_L02_SCORES_PRESCALE = r'''
def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    d_k = Q.shape[-1]
    return (Q * (1.0 / math.sqrt(d_k))) @ np.swapaxes(K, -1, -2)   # scale the queries first
'''

RIGHT.append(Right(
    id="f32-02-softmax-log-space",
    exercise="softmax",
    about="Computes the log-softmax (x - max - log of the summed exps) and takes one exp at the end instead of dividing by the sum.",
    source=r'''
import numpy as np
from grader.learner.validation import as_array
''' + _L02_SOFTMAX_LSE))

RIGHT.append(Right(
    id="f32-02-softmax-moveaxis-callable-class",
    exercise="softmax",
    about="Moves the chosen axis to the end, normalises there with an instance of a helper class with __call__ (max and sum via [..., None], not keepdims), and moves it back.",
    source=r'''
import numpy as np
from grader.learner.validation import as_array


class LastAxisSoftmax:
    """Softmax along the last axis; the max is removed first so exp never overflows."""

    def __call__(self, v):
        e = np.exp(v - v.max(axis=-1)[..., None])
        return e / e.sum(axis=-1)[..., None]


_last_axis_softmax = LastAxisSoftmax()


def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    moved = np.moveaxis(x, axis, -1)
    return np.moveaxis(_last_axis_softmax(moved), -1, axis)
'''))

RIGHT.append(Right(
    id="f32-02-scores-prescale-queries",
    exercise="attention_scores",
    about="Multiplies Q by 1/sqrt(d_k) (math.sqrt, so float32 stays float32) before the product with swapaxes(K).",
    source=r'''
import math

import numpy as np
from grader.learner.validation import as_array
''' + _L02_SCORES_PRESCALE))

RIGHT.append(Right(
    id="f32-02-scores-quarter-power-einsum",
    exercise="attention_scores",
    about="Splits the scale evenly, multiplying both Q and K by d_k ** -0.25, and contracts with einsum.",
    source=r'''
import numpy as np
from grader.learner.validation import as_array


def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    quarter = Q.shape[-1] ** -0.25          # sqrt(d_k) = (d_k ** 0.25) ** 2, one factor each
    return np.einsum("...qd,...kd->...qk", Q * quarter, K * quarter)
'''))

RIGHT.append(Right(
    id="f32-02-scores-matmul-moveaxis-dtype-sqrt",
    exercise="attention_scores",
    about="np.matmul with np.moveaxis for the transpose, then divides by np.sqrt(d_k, dtype=scores.dtype) so the scale has the scores' own dtype.",
    source=r'''
import numpy as np
from grader.learner.validation import as_array


def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    raw = np.matmul(Q, np.moveaxis(K, -1, -2))
    return raw / np.sqrt(Q.shape[-1], dtype=raw.dtype)
'''))

RIGHT.append(Right(
    id="f32-02-variance-einsum-ddof1",
    exercise="score_variance",
    about="Row-wise dot products with einsum('ij,ij->i') and the unbiased sample variance np.var(..., ddof=1), returned as a Python float.",
    source=r'''
import numpy as np
from grader.learner.validation import as_array


def score_variance(d_k, n_samples, seed):
    """The sample variance of q·k over n_samples pairs of standard normal vectors of length d_k."""
    if not isinstance(d_k, (int, np.integer)) or d_k < 1:
        raise ValueError(f"d_k must be a positive integer, got {d_k!r}")
    if not isinstance(n_samples, (int, np.integer)) or n_samples < 2:
        raise ValueError(f"n_samples must be an integer of at least 2, got {n_samples!r}")
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, d_k))   # one query per row
    k = rng.standard_normal((n_samples, d_k))   # one key per row
    dots = np.einsum("ij,ij->i", q, k)
    return float(np.var(dots, ddof=1))
'''))

RIGHT.append(Right(
    id="f32-02-variance-by-hand-centering",
    exercise="score_variance",
    about="Sums q*k along axis 1, then writes the sample variance out by hand: squared deviations from the mean over n_samples - 1.",
    source=r'''
import numpy as np
from grader.learner.validation import as_array


def score_variance(d_k, n_samples, seed):
    """The sample variance of q·k over n_samples pairs of standard normal vectors of length d_k."""
    if not isinstance(d_k, (int, np.integer)) or d_k < 1:
        raise ValueError(f"d_k must be a positive integer, got {d_k!r}")
    if not isinstance(n_samples, (int, np.integer)) or n_samples < 2:
        raise ValueError(f"n_samples must be an integer of at least 2, got {n_samples!r}")
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, d_k))   # one query per row
    k = rng.standard_normal((n_samples, d_k))   # one key per row
    scores = (q * k).sum(axis=1)
    deviations = scores - scores.mean()
    return float(np.square(deviations).sum() / (n_samples - 1))
'''))

RIGHT.append(Right(
    id="f32-02-sdpa-einsum-on-own-parts",
    exercise="scaled_dot_product_attention",
    about="Uses the learner's log-space softmax and pre-scaled attention_scores, then mixes the values with einsum('...qk,...kv->...qv') instead of @.",
    source=r'''
import math

import numpy as np
from grader.learner.validation import as_array
''' + _L02_SOFTMAX_LSE + _L02_SCORES_PRESCALE + r'''

def scaled_dot_product_attention(Q, K, V):
    """softmax(Q Kᵀ / sqrt(d_k)) V. Returns (output [..., T_q, d_v], weights [..., T_q, T_k])."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V need one row per key: K has {K.shape[-2]} rows, V has "
                         f"{V.shape[-2]} (shapes {K.shape} and {V.shape})")
    weights = softmax(attention_scores(Q, K), axis=-1)
    output = np.einsum("...qk,...kv->...qv", weights, V)
    return output, weights
'''))

RIGHT.append(Right(
    id="f32-02-sdpa-aliases-positive-axis",
    exercise="scaled_dot_product_attention",
    about="Reaches its parts through a local alias and a lambda, names the key axis by its positive index scores.ndim - 1, and builds the result tuple in reverse then flips it.",
    source=r'''
import math

import numpy as np
from grader.learner.validation import as_array
''' + _L02_SOFTMAX_PLAIN + _L02_SCORES_PRESCALE + r'''

def scaled_dot_product_attention(Q, K, V):
    """softmax(Q Kᵀ / sqrt(d_k)) V. Returns (output [..., T_q, d_v], weights [..., T_q, T_k])."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V need one row per key: K has {K.shape[-2]} rows, V has "
                         f"{V.shape[-2]} (shapes {K.shape} and {V.shape})")
    score = attention_scores
    normalise_keys = lambda s: softmax(s, axis=s.ndim - 1)   # the key axis, counted from the front
    w = normalise_keys(score(Q, K))
    pair = [w, np.matmul(w, V)]
    return tuple(reversed(pair))
'''))

RIGHT.append(Right(
    id="f32-02-sdpa-class-staticmethods",
    exercise="scaled_dot_product_attention",
    about="A small class whose staticmethods call the learner's attention_scores and moveaxis softmax; the graded function instantiates it and calls it.",
    source=r'''
import numpy as np
from grader.learner.validation import as_array


def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    moved = np.moveaxis(x, axis, -1)
    e = np.exp(moved - moved.max(axis=-1)[..., None])
    return np.moveaxis(e / e.sum(axis=-1)[..., None], -1, axis)


def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    quarter = Q.shape[-1] ** -0.25
    return np.einsum("...qd,...kd->...qk", Q * quarter, K * quarter)


class _Attention:
    @staticmethod
    def weights(Q, K):
        return softmax(attention_scores(Q, K), axis=-1)

    @staticmethod
    def mix(weights, V):
        return weights @ V

    def __call__(self, Q, K, V):
        w = self.weights(Q, K)
        return self.mix(w, V), w


def scaled_dot_product_attention(Q, K, V):
    """softmax(Q Kᵀ / sqrt(d_k)) V. Returns (output [..., T_q, d_v], weights [..., T_q, T_k])."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V need one row per key: K has {K.shape[-2]} rows, V has "
                         f"{V.shape[-2]} (shapes {K.shape} and {V.shape})")
    return _Attention()(Q, K, V)
'''))

RIGHT.append(Right(
    id="f32-02-one-query-lists-two-pass",
    exercise="attend_one_query",
    about="Scores every key into a Python list with math.sqrt scaling, takes Python's max, turns them into np.exp weights, then a second loop over zip(weights, V) adds the weighted rows.",
    source=r'''
import math

import numpy as np
from grader.learner.validation import as_array


def attend_one_query(q, K, V):
    """The single-query sum for q [d_k] over keys K [T_k, d_k] and values V [T_k, d_v] -> [d_v]."""
    q = as_array(q, "q", ndim=1)
    K = as_array(K, "K", ndim=2)
    V = as_array(V, "V", ndim=2)
    if K.shape[1] != q.shape[0] or V.shape[0] != K.shape[0]:
        raise ValueError(f"q {q.shape}, K {K.shape} and V {V.shape} do not fit: "
                         f"q must be [d_k], K [T_k, d_k] and V [T_k, d_v]")
    root = math.sqrt(q.shape[0])
    scores = [np.sum(q * k_i) / root for k_i in K]
    top = max(scores)
    unnormalised = [np.exp(s - top) for s in scores]
    total = sum(unnormalised)
    out = np.zeros(V.shape[1], dtype=np.result_type(q, K, V))
    for w_i, v_i in zip(unnormalised, V):
        out = out + (w_i / total) * v_i
    return out
'''))

RIGHT.append(Right(
    id="f32-02-one-query-while-log-weights",
    exercise="attend_one_query",
    about="Index-based while loops, scores kept in a preallocated array, weights formed in log space (s - max - log of the summed exps) before a single np.exp per key.",
    source=r'''
import numpy as np
from grader.learner.validation import as_array


def attend_one_query(q, K, V):
    """The single-query sum for q [d_k] over keys K [T_k, d_k] and values V [T_k, d_v] -> [d_v]."""
    q = as_array(q, "q", ndim=1)
    K = as_array(K, "K", ndim=2)
    V = as_array(V, "V", ndim=2)
    if K.shape[1] != q.shape[0] or V.shape[0] != K.shape[0]:
        raise ValueError(f"q {q.shape}, K {K.shape} and V {V.shape} do not fit: "
                         f"q must be [d_k], K [T_k, d_k] and V [T_k, d_v]")
    dtype = np.result_type(q, K, V)
    T_k = K.shape[0]
    s = np.empty(T_k, dtype=dtype)
    i = 0
    while i < T_k:
        s[i] = (q * K[i]).sum() / q.shape[0] ** 0.5
        i += 1
    largest = s.max()
    log_norm = np.log(np.exp(s - largest).sum())
    out = np.zeros(V.shape[1], dtype=dtype)
    i = 0
    while i < T_k:
        out += np.exp(s[i] - largest - log_norm) * V[i]
        i += 1
    return out
'''))

RIGHT.append(Right(
    id="f32-02-self-attention-fused-projection",
    exercise="self_attention",
    about="Concatenates W_q, W_k, W_v into one matrix, projects X once and np.split's the result into Q, K, V before calling the learner's scaled_dot_product_attention (built on its own softmax and scores).",
    source=r'''
import math

import numpy as np
from grader.learner.validation import as_array
''' + _L02_SOFTMAX_PLAIN + _L02_SCORES_PRESCALE + r'''

def scaled_dot_product_attention(Q, K, V):
    """softmax(Q Kᵀ / sqrt(d_k)) V. Returns (output [..., T_q, d_v], weights [..., T_q, T_k])."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V need one row per key: K has {K.shape[-2]} rows, V has "
                         f"{V.shape[-2]} (shapes {K.shape} and {V.shape})")
    weights = softmax(attention_scores(Q, K), axis=-1)
    return weights @ V, weights


def self_attention(X, W_q, W_k, W_v):
    """Q = X W_q, K = X W_k, V = X W_v, then scaled dot-product attention. Returns (output, weights)."""
    X = as_array(X, "X", min_ndim=2)
    W_q = as_array(W_q, "W_q", ndim=2)
    W_k = as_array(W_k, "W_k", ndim=2)
    W_v = as_array(W_v, "W_v", ndim=2)
    if not W_q.shape[0] == W_k.shape[0] == W_v.shape[0] == X.shape[-1]:
        raise ValueError(f"W_q, W_k and W_v need d_model = {X.shape[-1]} rows to project X of shape "
                         f"{X.shape}; got {W_q.shape}, {W_k.shape} and {W_v.shape}")
    if W_q.shape[1] != W_k.shape[1]:
        raise ValueError(f"W_q and W_k must give queries and keys of the same length d_k, "
                         f"got {W_q.shape} and {W_k.shape}")
    d_k = W_q.shape[1]
    W_all = np.concatenate([W_q, W_k, W_v], axis=1)        # [d_model, d_k + d_k + d_v]
    Q, K, V = np.split(X @ W_all, [d_k, 2 * d_k], axis=-1)
    return scaled_dot_product_attention(Q, K, V)
'''))

RIGHT.append(Right(
    id="f32-02-self-attention-einsum-partial",
    exercise="self_attention",
    about="Projects with einsum through a functools.partial, calls the learner's attention (log-space softmax, quarter-power scores) through a module-level alias, and unpacks and repacks the pair.",
    source=r'''
import functools

import numpy as np
from grader.learner.validation import as_array
''' + _L02_SOFTMAX_LSE + r'''

def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    quarter = Q.shape[-1] ** -0.25
    return np.einsum("...qd,...kd->...qk", Q * quarter, K * quarter)


def scaled_dot_product_attention(Q, K, V):
    """softmax(Q Kᵀ / sqrt(d_k)) V. Returns (output [..., T_q, d_v], weights [..., T_q, T_k])."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V need one row per key: K has {K.shape[-2]} rows, V has "
                         f"{V.shape[-2]} (shapes {K.shape} and {V.shape})")
    weights = softmax(attention_scores(Q, K), axis=-1)
    return np.einsum("...qk,...kv->...qv", weights, V), weights


attend = scaled_dot_product_attention
project = functools.partial(np.einsum, "...td,de->...te")


def self_attention(X, W_q, W_k, W_v):
    """Q = X W_q, K = X W_k, V = X W_v, then scaled dot-product attention. Returns (output, weights)."""
    X = as_array(X, "X", min_ndim=2)
    W_q = as_array(W_q, "W_q", ndim=2)
    W_k = as_array(W_k, "W_k", ndim=2)
    W_v = as_array(W_v, "W_v", ndim=2)
    if not W_q.shape[0] == W_k.shape[0] == W_v.shape[0] == X.shape[-1]:
        raise ValueError(f"W_q, W_k and W_v need d_model = {X.shape[-1]} rows to project X of shape "
                         f"{X.shape}; got {W_q.shape}, {W_k.shape} and {W_v.shape}")
    if W_q.shape[1] != W_k.shape[1]:
        raise ValueError(f"W_q and W_k must give queries and keys of the same length d_k, "
                         f"got {W_q.shape} and {W_k.shape}")
    out, weights = attend(project(X, W_q), project(X, W_k), project(X, W_v))
    return out, weights
'''))

# ============================================================================ lesson 03

_L03_HEAD = r'''
import math
from fractions import Fraction

import numpy as np
from grader.learner.validation import as_fractions
'''

_L03_KQ_LOOPS = r'''
def key_query_scores(K, Q):
    """Kᵀ Q for keys and queries stored as columns: entry [i, j] is k_i · q_j.

    K: d_k×T_k and Q: d_k×T_q (ints, Fractions or floats). Returns T_k×T_q Fractions.
    """
    K = as_fractions(K, "K")
    Q = as_fractions(Q, "Q")
    if K.shape[0] != Q.shape[0]:
        raise ValueError(f"K and Q must have the same number of rows d_k, got K of shape "
                         f"{K.shape} and Q of shape {Q.shape}")
    out = np.empty((K.shape[1], Q.shape[1]), dtype=object)
    for i in range(K.shape[1]):
        for j in range(Q.shape[1]):
            out[i, j] = sum((a * b for a, b in zip(K[:, i], Q[:, j])), Fraction(0))
    return out
'''

_L03_KQ_DOT = r'''
def key_query_scores(K, Q):
    """Kᵀ Q for keys and queries stored as columns: entry [i, j] is k_i · q_j.

    K: d_k×T_k and Q: d_k×T_q (ints, Fractions or floats). Returns T_k×T_q Fractions.
    """
    K = as_fractions(K, "K")
    Q = as_fractions(Q, "Q")
    if K.shape[0] != Q.shape[0]:
        raise ValueError(f"K and Q must have the same number of rows d_k, got K of shape "
                         f"{K.shape} and Q of shape {Q.shape}")
    return (Q.T @ K).T          # (Qᵀ K)ᵀ = Kᵀ Q
'''

_L03_FLOOR_MOD = r'''
def floor_half(S):
    """floor(S / 2) entry by entry, exactly: the stand-in for S / √3. floor(-1/2) is -1."""
    S = as_fractions(S, "S")
    return (S - S % 2) / 2      # S % 2 lies in [0, 2), so S - S % 2 is the even number below S
'''

_L03_FLOOR_VECTORIZE = r'''
def floor_half(S):
    """floor(S / 2) entry by entry, exactly: the stand-in for S / √3. floor(-1/2) is -1."""
    S = as_fractions(S, "S")
    halve_down = np.vectorize(lambda s: Fraction(s.numerator // (2 * s.denominator)), otypes=[object])
    return halve_down(S)
'''

_L03_SM3_SHIFT = r'''
def softmax3_columns(S):
    """3 ** S with every column divided by its sum, exactly. Every column sums to 1.

    S holds whole numbers (the scaled scores).
    """
    S = as_fractions(S, "S", whole=True)
    lowest = S.min(axis=0)                       # shift each column so its powers are whole numbers
    powers = np.array([[3 ** int(s - low) for s, low in zip(row, lowest)] for row in S],
                      dtype=object)
    totals = powers.sum(axis=0)
    return np.array([[Fraction(p, t) for p, t in zip(row, totals)] for row in powers],
                    dtype=object).reshape(S.shape)
'''

_L03_SM3_COLUMNS = r'''
def softmax3_columns(S):
    """3 ** S with every column divided by its sum, exactly. Every column sums to 1.

    S holds whole numbers (the scaled scores).
    """
    S = as_fractions(S, "S", whole=True)
    columns = []
    for column in S.T:
        powers = [Fraction(3) ** int(s) for s in column]
        total = sum(powers, Fraction(0))
        columns.append([p / total for p in powers])
    return np.array(columns, dtype=object).T
'''

_L03_ABH_DICT = r'''
def attention_by_hand(X, W_Q, W_K, W_V):
    """Every step of the worksheet, with tokens as the columns of X (d_in×T)."""
    X = as_fractions(X, "X")
    W_Q, W_K, W_V = as_fractions(W_Q, "W_Q"), as_fractions(W_K, "W_K"), as_fractions(W_V, "W_V")
    for name, W in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
        if W.shape[1] != X.shape[0]:
            raise ValueError(f"{name} has {W.shape[1]} columns but X has {X.shape[0]} rows "
                             f"(features): shapes {W.shape} and {X.shape}")
    if W_Q.shape[0] != W_K.shape[0]:
        raise ValueError(f"W_Q and W_K must have the same number of rows, got shapes "
                         f"{W_Q.shape} and {W_K.shape}")
    steps = {name: W @ X for name, W in zip("QKV", (W_Q, W_K, W_V))}
    steps["scores"] = key_query_scores(steps["K"], steps["Q"])
    steps["scaled"] = floor_half(steps["scores"])
    steps["A"] = softmax3_columns(steps["scaled"])
    steps["Z"] = steps["V"].dot(steps["A"])
    return steps
'''

RIGHT.append(Right(
    id="f32-03-kq-generator-sum-fraction-start",
    exercise="key_query_scores",
    about="Nested loops over keys and queries, each entry Python's sum of a generator of products started at Fraction(0), into a preallocated object array.",
    source=_L03_HEAD + _L03_KQ_LOOPS))

RIGHT.append(Right(
    id="f32-03-kq-transpose-of-transpose",
    exercise="key_query_scores",
    about="Computes Qᵀ K on the object arrays and returns its transpose.",
    source=_L03_HEAD + _L03_KQ_DOT))

RIGHT.append(Right(
    id="f32-03-floor-half-modulo",
    exercise="floor_half",
    about="No floor call at all: (S - S % 2) / 2 on the Fraction array, using that Fraction's % 2 lies in [0, 2).",
    source=_L03_HEAD + _L03_FLOOR_MOD))

RIGHT.append(Right(
    id="f32-03-floor-half-vectorize-numerator",
    exercise="floor_half",
    about="np.vectorize with otypes=[object] over a lambda doing integer floor division of the numerator by twice the denominator, wrapped back in Fraction.",
    source=_L03_HEAD + _L03_FLOOR_VECTORIZE))

RIGHT.append(Right(
    id="f32-03-softmax3-shift-by-column-min",
    exercise="softmax3_columns",
    about="Subtracts each column's minimum first (lesson 02's shift rule) so all powers are plain ints, then builds each weight as Fraction(power, column_total).",
    source=_L03_HEAD + _L03_SM3_SHIFT))

RIGHT.append(Right(
    id="f32-03-softmax3-column-lists-transposed",
    exercise="softmax3_columns",
    about="Loops over the columns (rows of S.T), builds each column's weights as a list, and transposes the stacked object array at the end.",
    source=_L03_HEAD + _L03_SM3_COLUMNS))

RIGHT.append(Right(
    id="f32-03-abh-dict-comprehension-dot",
    exercise="attention_by_hand",
    about="Projects Q, K, V in a dict comprehension over zip('QKV', ...), uses the learner's loop-based scores, modulo floor and column-min softmax, and gets Z with ndarray.dot on object arrays.",
    source=_L03_HEAD + _L03_KQ_LOOPS + _L03_FLOOR_MOD + _L03_SM3_SHIFT + _L03_ABH_DICT))

RIGHT.append(Right(
    id="f32-03-abh-pipeline-class-column-reading",
    exercise="attention_by_hand",
    about="Runs the middle steps as a list of (name, function, argument names) through a small pipeline class, and builds Z column by column (the column reading) with np.stack(axis=1).",
    source=_L03_HEAD + _L03_KQ_DOT + _L03_FLOOR_VECTORIZE + _L03_SM3_COLUMNS + r'''

class _Pipeline:
    def __init__(self, steps):
        self.steps = steps

    def run(self, values):
        for name, fn, args in self.steps:
            values[name] = fn(*(values[a] for a in args))
        return values


MIDDLE = _Pipeline([
    ("scores", key_query_scores, ("K", "Q")),
    ("scaled", floor_half, ("scores",)),
    ("A", softmax3_columns, ("scaled",)),
])


def attention_by_hand(X, W_Q, W_K, W_V):
    """Every step of the worksheet, with tokens as the columns of X (d_in×T)."""
    X = as_fractions(X, "X")
    W_Q, W_K, W_V = as_fractions(W_Q, "W_Q"), as_fractions(W_K, "W_K"), as_fractions(W_V, "W_V")
    for name, W in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
        if W.shape[1] != X.shape[0]:
            raise ValueError(f"{name} has {W.shape[1]} columns but X has {X.shape[0]} rows "
                             f"(features): shapes {W.shape} and {X.shape}")
    if W_Q.shape[0] != W_K.shape[0]:
        raise ValueError(f"W_Q and W_K must have the same number of rows, got shapes "
                         f"{W_Q.shape} and {W_K.shape}")
    values = MIDDLE.run({"Q": W_Q @ X, "K": W_K @ X, "V": W_V @ X})
    V, A = values["V"], values["A"]
    values["Z"] = np.stack([V @ A[:, j] for j in range(A.shape[1])], axis=1)
    return values
'''))

RIGHT.append(Right(
    id="f32-03-rows-direct-softmax-via-transpose",
    exercise="row_convention_attention",
    about="Works in the row convention directly (X_rows W_Qᵀ, Q Kᵀ, Z = A V) but gets the row-wise weights by calling the learner's column softmax on scaled.T and transposing back.",
    source=_L03_HEAD + _L03_FLOOR_MOD + _L03_SM3_SHIFT + r'''

def row_convention_attention(X_rows, W_Q, W_K, W_V):
    """The worksheet with tokens as the rows of X_rows (T×d_in); the same 3×d_in weights.

    Returns the same keys as attention_by_hand; A's rows sum to 1 and Z = A V.
    """
    X_rows = as_fractions(X_rows, "X_rows")
    W_Q, W_K, W_V = as_fractions(W_Q, "W_Q"), as_fractions(W_K, "W_K"), as_fractions(W_V, "W_V")
    for name, W in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
        if W.shape[1] != X_rows.shape[1]:
            raise ValueError(f"{name} has {W.shape[1]} columns but X_rows has {X_rows.shape[1]} "
                             f"columns (features): shapes {W.shape} and {X_rows.shape}")
    if W_Q.shape[0] != W_K.shape[0]:
        raise ValueError(f"W_Q and W_K must have the same number of rows, got shapes "
                         f"{W_Q.shape} and {W_K.shape}")
    Q, K, V = (X_rows @ W.T for W in (W_Q, W_K, W_V))
    scores = Q @ K.T
    scaled = floor_half(scores)
    A = softmax3_columns(scaled.T).T          # rows of A are the columns of the column softmax
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": A @ V}
'''))

RIGHT.append(Right(
    id="f32-03-rows-transpose-column-steps",
    exercise="row_convention_attention",
    about="Calls the learner's own attention_by_hand on X_rows.T and returns the transpose of every step.",
    source=_L03_HEAD + _L03_KQ_LOOPS + _L03_FLOOR_MOD + _L03_SM3_SHIFT + _L03_ABH_DICT + r'''

def row_convention_attention(X_rows, W_Q, W_K, W_V):
    """The worksheet with tokens as the rows of X_rows (T×d_in); the same 3×d_in weights.

    Returns the same keys as attention_by_hand; A's rows sum to 1 and Z = A V.
    """
    X_rows = as_fractions(X_rows, "X_rows")
    W_Q, W_K, W_V = as_fractions(W_Q, "W_Q"), as_fractions(W_K, "W_K"), as_fractions(W_V, "W_V")
    for name, W in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
        if W.shape[1] != X_rows.shape[1]:
            raise ValueError(f"{name} has {W.shape[1]} columns but X_rows has {X_rows.shape[1]} "
                             f"columns (features): shapes {W.shape} and {X_rows.shape}")
    if W_Q.shape[0] != W_K.shape[0]:
        raise ValueError(f"W_Q and W_K must have the same number of rows, got shapes "
                         f"{W_Q.shape} and {W_K.shape}")
    by_columns = attention_by_hand(X_rows.T, W_Q, W_K, W_V)
    return {step: np.ascontiguousarray(M.T) for step, M in by_columns.items()}
'''))

# ---------------------------------------------------------------------------- lesson 03 worksheet

_WS_HEAD = r'''
WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below
'''

_WS_PLAIN = {
    "Q": 'WORKSHEET["Q"] = """\n2 1 1 1\n1 1 0 1\n1 0 2 1\n"""\n',
    "K": 'WORKSHEET["K"] = """\n1 2 0 0\n0 1 -1 1\n1 1 1 0\n"""\n',
    "V": 'WORKSHEET["V"] = """\n1 0 2 1\n1 0 1 2\n0 0 1 1\n"""\n',
    "scores": 'WORKSHEET["scores"] = """\n3 1 3 2\n6 3 4 4\n0 -1 2 0\n1 1 0 1\n"""\n',
    "scaled": 'WORKSHEET["scaled"] = """\n1 0 1 1\n3 1 2 2\n0 -1 1 0\n0 0 0 0\n"""\n',
    "A": ('WORKSHEET["A"] = """\n3/32 3/16 3/16 3/14\n27/32 9/16 9/16 9/14\n'
          '1/32 1/16 3/16 1/14\n1/32 3/16 1/16 1/14\n"""\n'),
    "Z": 'WORKSHEET["Z"] = """\n3/16 1/2 5/8 3/7\n3/16 5/8 1/2 3/7\n1/16 1/4 1/4 1/7\n"""\n',
}

_WS_UNUSUAL = {
    "Q": r'''WORKSHEET["Q"] = """
    2  1  1  1     # q1 q2 q3 q4, first entry of each query
    1  1  0  1     # second entries
    1  0  2  1     # third entries
"""
''',
    "K": r'''WORKSHEET["K"] = """
# keys, one column per token

 1   2   0   0

 0   1  -1   1      # W_K row 2 has the -1 (feature 5)

 1   1   1   0
"""
''',
    "V": r'''WORKSHEET["V"] = "1 0 2 1\n1 0 1 2\n0 0 1 1"
''',
    "scores": r'''WORKSHEET["scores"] = """
#  q1  q2  q3  q4
    3   1   3   2    # k1
    6   3   4   4    # k2
    0  -1   2   0    # k3
    1   1   0   1    # k4
"""
''',
    "scaled": r'''WORKSHEET["scaled"] = ("1 0 1 1\n"
                        "3 1 2 2\n"
                        "0 -1 1 0\n"
                        "0 0 0 0\n")
''',
    "A": r'''WORKSHEET["A"] = """
# column sums of 3^scaled: 32/3 -> x3 = 32,  16/3 -> x3 = 16,  16,  14
 3/32    3/16   3/16   3/14
27/32    9/16   9/16   9/14
 1/32    1/16   3/16   1/14
 1/32    3/16   1/16   1/14
"""
''',
    "Z": r'''WORKSHEET["Z"] = """
6/32   8/16  10/16  6/14    # left over each column's denominator, not reduced
6/32  10/16   8/16  6/14
2/32   4/16   4/16  2/14
"""
''',
}

_WS_ABOUT = {
    "Q": "Rows indented and padded to aligned columns, each with a trailing # comment.",
    "K": "Blank lines between the rows, a full-line comment at the top and an inline one, numbers padded with several spaces.",
    "V": "A one-line ordinary string with \\n escapes, no leading or trailing newline.",
    "scores": "Right-aligned rows under a comment header naming the queries, each row ending in a # k_i comment.",
    "scaled": "The rows are given by implicit concatenation of separate string literals inside parentheses.",
    "A": "Fractions right-aligned with a comment line listing the column sums (including the x3 trick).",
    "Z": "Every entry left unreduced over its column's denominator (6/32 for 3/16, 8/16 for 1/2, 6/14 for 3/7).",
}

for _step in ("Q", "K", "V", "scores", "scaled", "A", "Z"):
    _cells = [(_WS_UNUSUAL[s] if s == _step else _WS_PLAIN[s]) for s in ("Q", "K", "V", "scores", "scaled", "A", "Z")]
    RIGHT.append(Right(
        id=f"f32-03-worksheet-{_step.lower()}-typed",
        exercise=f"worksheet_{_step}",
        about=_WS_ABOUT[_step] + " (All seven steps are filled in; the others are plain.)",
        source=_WS_HEAD + "\n".join(_cells),
    ))

# ============================================================================ lesson 04

_L04_HEAD = r'''
import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int
'''

_L04_CAUSAL_TRI = r'''
def causal_mask(T):
    """[T, T] boolean mask: True where key j <= query i."""
    T = positive_int(T, "T")
    return np.tri(T, dtype=bool)
'''

_L04_CAUSAL_CUMSUM = r'''
def causal_mask(T):
    """[T, T] boolean mask: True where key j <= query i."""
    T = positive_int(T, "T")
    # row i of the running sum of the identity down the rows has a 1 in every column j <= i
    return np.cumsum(np.eye(T, dtype=np.int64), axis=0).astype(bool)
'''

_L04_PAD_GREATER_OUTER = r'''
def padding_mask(lengths, T):
    """[B, T] boolean mask: True at the real tokens of each sentence, False at its padding."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return np.greater.outer(lengths, np.arange(T))     # [b, t] = lengths[b] > t
'''

_L04_PAD_TRI_LOOKUP = r'''
def padding_mask(lengths, T):
    """[B, T] boolean mask: True at the real tokens of each sentence, False at its padding."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    # row L of this (T+1)×T table is True exactly at positions 0..L-1: look each length up
    table = np.tri(T + 1, T, k=-1, dtype=bool)
    return table[lengths]
'''

_L04_MSOFTMAX_WHERE_REDUCE = r'''
def masked_softmax(scores, mask):
    """Softmax over the last axis with masked scores set to -inf first.

    mask: boolean, True = may attend, broadcasts to scores. A row with no allowed key
    returns zeros, never NaN.
    """
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    allowed = np.broadcast_to(mask, scores.shape)
    blocked = np.where(allowed, scores, -np.inf)
    top = np.max(blocked, axis=-1, keepdims=True, where=allowed, initial=-np.inf)
    top = np.where(np.isfinite(top), top, 0)        # an empty row: any shift will do
    e = np.exp(blocked - top)                       # exactly 0 where blocked
    total = np.sum(e, axis=-1, keepdims=True, where=allowed)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)
'''

_L04_MSOFTMAX_LOGADDEXP = r'''
def masked_softmax(scores, mask):
    """Softmax over the last axis with masked scores set to -inf first.

    mask: boolean, True = may attend, broadcasts to scores. A row with no allowed key
    returns zeros, never NaN.
    """
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    s = np.where(mask, scores, -np.inf)
    top = s.max(axis=-1, keepdims=True)
    has_key = np.isfinite(top)
    with np.errstate(invalid="ignore"):
        log_norm = top + np.log(np.exp(s - top).sum(axis=-1, keepdims=True))   # log-sum-exp
        weights = np.exp(s - log_norm)
    return np.where(mask & has_key, weights, 0).astype(scores.dtype, copy=False)
'''

RIGHT.append(Right(
    id="f32-04-causal-cumsum-eye",
    exercise="causal_mask",
    about="Cumulative sum of the identity down the rows, cast to bool (a 1 at every column j <= i).",
    source=_L04_HEAD + _L04_CAUSAL_CUMSUM))

RIGHT.append(Right(
    id="f32-04-causal-greater-equal-outer",
    exercise="causal_mask",
    about="The ufunc outer np.greater_equal.outer(rows, cols) over np.arange(T).",
    source=_L04_HEAD + r'''
def causal_mask(T):
    """[T, T] boolean mask: True where key j <= query i."""
    T = positive_int(T, "T")
    positions = np.arange(T)
    return np.greater_equal.outer(positions, positions)   # [i, j] = i >= j
'''))

RIGHT.append(Right(
    id="f32-04-padding-tri-table-lookup",
    exercise="padding_mask",
    about="Fancy-indexes a (T+1)×T strictly-lower-triangular table by the lengths, so row L is True on positions 0..L-1.",
    source=_L04_HEAD + _L04_PAD_TRI_LOOKUP))

RIGHT.append(Right(
    id="f32-04-padding-greater-outer",
    exercise="padding_mask",
    about="np.greater.outer(lengths, np.arange(T)) instead of explicit [:, None] broadcasting.",
    source=_L04_HEAD + _L04_PAD_GREATER_OUTER))

RIGHT.append(Right(
    id="f32-04-attention-mask-where-repeat",
    exercise="attention_mask",
    about="Built on the learner's np.tri causal_mask and outer padding_mask: np.where(causal, keys, False) for the causal case and np.repeat of the key row T times when causal=False.",
    source=_L04_HEAD + _L04_CAUSAL_TRI + _L04_PAD_GREATER_OUTER + r'''
def attention_mask(lengths, T, causal=True):
    """[B, T, T] boolean mask: key padding, combined with the causal mask if causal=True."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    if not isinstance(causal, (bool, np.bool_)):
        raise ValueError(f"causal must be True or False, got {causal!r}")
    keys = padding_mask(lengths, T)[:, np.newaxis, :]          # [B, 1, T]
    if not causal:
        return np.repeat(keys, T, axis=1)                      # every query sees the same keys
    return np.where(causal_mask(T)[np.newaxis], keys, False)   # [B, T, T]
'''))

RIGHT.append(Right(
    id="f32-04-attention-mask-logical-and-reduce",
    exercise="attention_mask",
    about="Reaches the learner's cumsum causal_mask and tri-lookup padding_mask through lambdas and combines them with np.logical_and.reduce over np.broadcast_arrays, with an all-True grid standing in when causal=False.",
    source=_L04_HEAD + _L04_CAUSAL_CUMSUM + _L04_PAD_TRI_LOOKUP + r'''
def attention_mask(lengths, T, causal=True):
    """[B, T, T] boolean mask: key padding, combined with the causal mask if causal=True."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    if not isinstance(causal, (bool, np.bool_)):
        raise ValueError(f"causal must be True or False, got {causal!r}")
    order = (lambda n: causal_mask(n)) if causal else (lambda n: np.ones((n, n), dtype=bool))
    keys = (lambda: padding_mask(lengths, T))()
    parts = np.broadcast_arrays(keys[:, None, :], order(T)[None, :, :])
    return np.logical_and.reduce(parts)
'''))

RIGHT.append(Right(
    id="f32-04-masked-softmax-where-reductions",
    exercise="masked_softmax",
    about="Uses the where= and initial= arguments of np.max and np.sum so masked scores never enter the reductions, and np.divide(where=total > 0) into zeros for empty rows.",
    source=_L04_HEAD + _L04_MSOFTMAX_WHERE_REDUCE))

RIGHT.append(Right(
    id="f32-04-masked-softmax-log-sum-exp",
    exercise="masked_softmax",
    about="Log-space: subtracts the row's log-sum-exp (computed after the max shift) from the -inf-filled scores, and np.where sends masked entries and allowed-key-less rows to exactly 0.",
    source=_L04_HEAD + _L04_MSOFTMAX_LOGADDEXP))

RIGHT.append(Right(
    id="f32-04-masked-attention-scalar-true-mask",
    exercise="masked_attention",
    about="For mask=None passes the scalar np.True_ to the learner's where=-reduction masked_softmax (a 0-d mask broadcasts to everything) and scales Q before the product.",
    source=_L04_HEAD + r'''
import math
''' + _L04_MSOFTMAX_WHERE_REDUCE + r'''
def masked_attention(Q, K, V, mask=None):
    """Scaled dot-product attention with a boolean mask (True = may attend).

    Q: [..., T_q, d_k], K: [..., T_k, d_k], V: [..., T_k, d_v]; mask broadcasts to
    [..., T_q, T_k]. Returns (output [..., T_q, d_v], weights [..., T_q, T_k]).
    """
    Q, K, V = as_array(Q, "Q", min_ndim=2), as_array(K, "K", min_ndim=2), as_array(V, "V", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share d_k, got shapes {Q.shape} and {K.shape}")
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V must have the same number of keys, got {K.shape} and {V.shape}")
    if mask is not None:
        mask = bool_mask(mask)  # must be boolean; masked_softmax checks that it fits the scores
    if mask is None:
        mask = np.True_                       # one value that allows every (query, key) pair
    scores = (Q / math.sqrt(Q.shape[-1])) @ np.swapaxes(K, -1, -2)
    weights = masked_softmax(scores, mask)
    return weights @ V, weights
'''))

RIGHT.append(Right(
    id="f32-04-masked-attention-callable-class",
    exercise="masked_attention",
    about="A class whose __init__ stores the learner's log-space masked_softmax as an attribute and whose __call__ does einsum scores and einsum mixing; mask=None becomes an all-True grid of the scores' shape.",
    source=_L04_HEAD + _L04_MSOFTMAX_LOGADDEXP + r'''
class MaskedAttention:
    def __init__(self, normalise):
        self.normalise = normalise

    def __call__(self, Q, K, V, mask):
        scores = np.einsum("...qd,...kd->...qk", Q, K) / Q.shape[-1] ** 0.5
        if mask is None:
            mask = np.ones(scores.shape, dtype=bool)
        weights = self.normalise(scores, mask)
        return np.einsum("...qk,...kv->...qv", weights, V), weights


_layer = MaskedAttention(masked_softmax)


def masked_attention(Q, K, V, mask=None):
    """Scaled dot-product attention with a boolean mask (True = may attend).

    Q: [..., T_q, d_k], K: [..., T_k, d_k], V: [..., T_k, d_v]; mask broadcasts to
    [..., T_q, T_k]. Returns (output [..., T_q, d_v], weights [..., T_q, T_k]).
    """
    Q, K, V = as_array(Q, "Q", min_ndim=2), as_array(K, "K", min_ndim=2), as_array(V, "V", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share d_k, got shapes {Q.shape} and {K.shape}")
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V must have the same number of keys, got {K.shape} and {V.shape}")
    if mask is not None:
        mask = bool_mask(mask)  # must be boolean; masked_softmax checks that it fits the scores
    return _layer(Q, K, V, mask)
'''))

RIGHT.append(Right(
    id="f32-04-is-causal-copy-early-return",
    exercise="is_causal",
    about="For each t works on a fresh copy of X with the future rows replaced, passes attend copies so it cannot alter them, and returns False at the first moved prefix.",
    source=_L04_HEAD + r'''
def is_causal(attend, T, d, seed=0):
    """True if changing tokens after position t never changes outputs 0..t of attend."""
    if not callable(attend):
        raise ValueError(f"attend must be a function of X [T, d], got {type(attend).__name__}")
    T, d = positive_int(T, "T"), positive_int(d, "d")
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((T, d))
    before = np.asarray(attend(X.copy()))
    for t in range(T):
        changed = X.copy()
        changed[t + 1:] = rng.standard_normal((T - t - 1, d))
        after = np.asarray(attend(changed))
        if not np.allclose(after[:t + 1], before[:t + 1]):
            return False
    return True
'''))

RIGHT.append(Right(
    id="f32-04-is-causal-any-generator",
    exercise="is_causal",
    about="A nested helper builds each perturbed sequence with np.concatenate of the kept prefix and new rows, and not any(...) over a lazy generator stops at the first change.",
    source=_L04_HEAD + r'''
def is_causal(attend, T, d, seed=0):
    """True if changing tokens after position t never changes outputs 0..t of attend."""
    if not callable(attend):
        raise ValueError(f"attend must be a function of X [T, d], got {type(attend).__name__}")
    T, d = positive_int(T, "T"), positive_int(d, "d")
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, d))
    before = np.asarray(attend(X))

    def prefix_moves(t):
        fresh_future = rng.normal(size=(T - t - 1, d))
        X_new = np.concatenate([X[:t + 1], fresh_future], axis=0)
        return not np.allclose(np.asarray(attend(X_new))[:t + 1], before[:t + 1])

    return not any(prefix_moves(t) for t in range(T))
'''))

RIGHT.append(Right(
    id="f32-04-columns-transpose-of-own-causal",
    exercise="causal_mask_columns",
    about="Transposes the learner's own cumsum causal_mask and makes it contiguous.",
    source=_L04_HEAD + _L04_CAUSAL_CUMSUM + r'''
def causal_mask_columns(T):
    """[T, T] causal mask with tokens as columns: entry [i, j] (key i, query j) is True where i <= j."""
    T = positive_int(T, "T")
    return np.ascontiguousarray(causal_mask(T).T)
'''))

RIGHT.append(Right(
    id="f32-04-columns-triu-not-strict-tril",
    exercise="causal_mask_columns",
    about="Negates the strictly lower triangle np.tril(ones, k=-1) instead of writing the upper triangle.",
    source=_L04_HEAD + r'''
def causal_mask_columns(T):
    """[T, T] causal mask with tokens as columns: entry [i, j] (key i, query j) is True where i <= j."""
    T = positive_int(T, "T")
    below_diagonal = np.tril(np.ones((T, T), dtype=bool), k=-1)   # key i after query j
    return ~below_diagonal
'''))

RIGHT.append(Right(
    id="f32-04-mha-kpm-torch-arange",
    exercise="to_mha_key_padding_mask",
    about="Pure torch: torch.arange(T)[None, :] >= torch.as_tensor(lengths)[:, None].",
    source=_L04_HEAD + r'''
def to_mha_key_padding_mask(lengths, T):
    """torch.bool tensor [B, T] for nn.MultiheadAttention's key_padding_mask: True = ignore."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return torch.arange(T)[None, :] >= torch.as_tensor(lengths)[:, None]
'''))

RIGHT.append(Right(
    id="f32-04-mha-kpm-invert-own-padding",
    exercise="to_mha_key_padding_mask",
    about="Inverts the learner's own (tri-lookup) padding_mask with torch's ~ on a tensor made by torch.from_numpy.",
    source=_L04_HEAD + _L04_PAD_TRI_LOOKUP + r'''
def to_mha_key_padding_mask(lengths, T):
    """torch.bool tensor [B, T] for nn.MultiheadAttention's key_padding_mask: True = ignore."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    keep = torch.from_numpy(np.ascontiguousarray(padding_mask(lengths, T)))
    return ~keep
'''))

RIGHT.append(Right(
    id="f32-04-prefix-average-tri-normalised",
    exercise="prefix_average",
    about="W = np.tri(T) in X's dtype divided by its own row sums (keepdims), then one np.matmul.",
    source=_L04_HEAD + r'''
def prefix_average(X):
    """Row i of the result is the mean of rows 0..i of X, computed as W @ X."""
    X = as_array(X, "X", min_ndim=2)
    W = np.tri(X.shape[-2], dtype=X.dtype)
    W = W / W.sum(axis=1, keepdims=True)
    return np.matmul(W, X)
'''))

RIGHT.append(Right(
    id="f32-04-prefix-average-from-masked-softmax",
    exercise="prefix_average",
    about="Builds W as the learner's masked_softmax of all-zero scores under the learner's causal_mask (equal scores, causal), cast to X's dtype, then W @ X.",
    source=_L04_HEAD + _L04_CAUSAL_TRI + _L04_MSOFTMAX_WHERE_REDUCE + r'''
def prefix_average(X):
    """Row i of the result is the mean of rows 0..i of X, computed as W @ X."""
    X = as_array(X, "X", min_ndim=2)
    T = X.shape[-2]
    W = masked_softmax(np.zeros((T, T)), causal_mask(T)).astype(X.dtype)
    return W @ X
'''))

RIGHT.append(Right(
    id="f32-04-prefix-average-reciprocal-where",
    exercise="prefix_average",
    about="W from np.where(j <= i, 1/(i+1), 0) using np.reciprocal of a column of counts, with the product written as X's transposed-side (Xᵀ Wᵀ)ᵀ via swapaxes.",
    source=_L04_HEAD + r'''
def prefix_average(X):
    """Row i of the result is the mean of rows 0..i of X, computed as W @ X."""
    X = as_array(X, "X", min_ndim=2)
    T = X.shape[-2]
    i = np.arange(T)[:, None]
    j = np.arange(T)[None, :]
    counts = (i + 1).astype(X.dtype)
    W = np.where(j <= i, np.reciprocal(counts), X.dtype.type(0))
    return np.swapaxes(np.swapaxes(X, -1, -2) @ W.T, -1, -2)     # (Xᵀ Wᵀ)ᵀ = W X
'''))
