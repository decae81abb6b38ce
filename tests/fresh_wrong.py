"""Fresh rule-breaking answers, as data: ``WRONG``, each a source a learner types that
returns the right values but breaks one rule its notebook (or the README) states.

They were written from the student notebooks, the README, ``courseware/`` and
``grader/learner/validation.py`` alone, by a tester who had not read the checks, and each
was verified to return the right values against the tester's own computation. So they
measure whether the checks catch rule-breaking answers nobody anticipated
(``tests/test_fresh_wrong.py``, which also says which of them turned out right after all:
a rule that was advice, or a change nothing can observe). Keep them as they were written.
"""
from typing import NamedTuple


class Wrong(NamedTuple):
    id: str        # short unique id, e.g. "fw-02-loop-in-map"
    exercise: str  # the graded name, exactly as in the notebook's check("name", ...) cell
    rule: str      # the notebook's own words for the rule it breaks (copied exactly, a short phrase)
    how: str       # one sentence: how it breaks the rule
    source: str    # the whole answer cell(s), imports included; runs on its own in a fresh module


L01 = '''import numpy as np
from grader.learner.validation import matmul_operands, as_array
'''

# ----------------------------------------------------------------------------- lesson 01
WRONG = [
    Wrong(
        id="fw-01-dot-module-alias",
        exercise="matmul_dot",
        rule="you may **not** use `@`, `np.matmul`, `np.dot`",
        how="np.dot is bound to a module-level name `dot` once and the double loop calls `dot(A[i], B[:, j])`.",
        source=L01 + r'''
dot = np.dot    # shorter to type in the loop


def matmul_dot(A, B):
    """C[i, j] = row i of A · column j of B, with explicit loops over i and j."""
    A, B = matmul_operands(A, B)
    n, m = A.shape[0], B.shape[1]
    C = np.zeros((n, m), dtype=np.result_type(A, B))
    for i in range(n):
        for j in range(m):
            C[i, j] = dot(A[i], B[:, j])
    return C
'''),
    Wrong(
        id="fw-01-dot-loop-over-i-only",
        exercise="matmul_dot",
        rule="with explicit loops over i and j",
        how="Only i is looped over; each whole row of C is one broadcast product summed down the columns, so there is no loop over j.",
        source=L01 + r'''
def matmul_dot(A, B):
    """C[i, j] = row i of A · column j of B, with explicit loops over i and j."""
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]), dtype=np.result_type(A, B))
    for i in range(A.shape[0]):
        C[i] = (A[i][:, None] * B).sum(axis=0)     # every j at once
    return C
'''),
    Wrong(
        id="fw-01-rows-helper-at",
        exercise="matmul_rows",
        rule="you may **not** use `@`",
        how="A small helper `_mix(weights, rows)` returns `weights @ rows`, and the loop over i calls it for each row.",
        source=L01 + r'''
def _mix(weights, rows):
    """Mix the rows with the weights (the row reading)."""
    return weights @ rows


def matmul_rows(A, B):
    """Row i of C = sum over p of A[i, p] * (row p of B). Loop over i and p."""
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]), dtype=np.result_type(A, B))
    for i in range(A.shape[0]):
        C[i] = _mix(A[i], B)
    return C
'''),
    Wrong(
        id="fw-01-rows-broadcast-no-loop",
        exercise="matmul_rows",
        rule="Loop over i and p.",
        how="No loop at all: every A[i, p] * B[p] term is built by one broadcast and summed over p.",
        source=L01 + r'''
def matmul_rows(A, B):
    """Row i of C = sum over p of A[i, p] * (row p of B). Loop over i and p."""
    A, B = matmul_operands(A, B)
    terms = A[:, :, None] * B[None, :, :]      # terms[i, p] = A[i, p] * row p of B
    return terms.sum(axis=1)
'''),
    Wrong(
        id="fw-01-cols-inner-lambda",
        exercise="matmul_cols",
        rule="you may **not** use `@`, `np.matmul`, `np.dot`, `np.einsum`, `np.inner`",
        how="A lambda `weigh = lambda M, w: np.inner(M, w)` does each column's product, called in the loop over j.",
        source=L01 + r'''
weigh = lambda M, w: np.inner(M, w)     # the columns of M weighted by w


def matmul_cols(A, B):
    """Column j of C = sum over p of B[p, j] * (column p of A). Loop over j and p."""
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]), dtype=np.result_type(A, B))
    for j in range(B.shape[1]):
        C[:, j] = weigh(A, B[:, j])
    return C
'''),
    Wrong(
        id="fw-01-cols-multi-dot",
        exercise="matmul_cols",
        rule="the point is to build the product yourself from slices, `*` and `sum`",
        how="Each column is `np.linalg.multi_dot([A, B[:, j]])`, a library product that the notebook's list of forbidden calls does not name.",
        source=L01 + r'''
def matmul_cols(A, B):
    """Column j of C = sum over p of B[p, j] * (column p of A). Loop over j and p."""
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]), dtype=np.result_type(A, B))
    for j in range(B.shape[1]):
        C[:, j] = np.linalg.multi_dot([A, B[:, j]])
    return C
'''),
    Wrong(
        id="fw-01-outer-tensordot-axes0",
        exercise="matmul_outer",
        rule="you may **not** use `@`, `np.matmul`, `np.dot`, `np.einsum`, `np.inner`, `np.tensordot`",
        how="Each rank-1 term is `np.tensordot(A[:, p], B[p], axes=0)`, the outer product spelled with a forbidden call.",
        source=L01 + r'''
def matmul_outer(A, B):
    """C = sum over p of the outer product of column p of A and row p of B."""
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]), dtype=np.result_type(A, B))
    for p in range(A.shape[1]):
        C += np.tensordot(A[:, p], B[p], axes=0)     # axes=0: the outer product
    return C
'''),
    Wrong(
        id="fw-01-outer-no-loop",
        exercise="matmul_outer",
        rule="In the four loop exercises",
        how="All k rank-1 terms are built at once by broadcasting a [k, n, 1] stack against a [k, 1, m] stack and summed over the first axis, with no loop.",
        source=L01 + r'''
def matmul_outer(A, B):
    """C = sum over p of the outer product of column p of A and row p of B."""
    A, B = matmul_operands(A, B)
    rank_ones = A.T[:, :, None] * B[:, None, :]     # rank_ones[p] = outer(A[:, p], B[p])
    return rank_ones.sum(axis=0)
'''),
    Wrong(
        id="fw-01-batched-ndindex-comprehension",
        exercise="batched_matmul",
        rule="with no Python loop",
        how="The operands are broadcast to a common batch and a list comprehension over np.ndindex multiplies one batch item at a time.",
        source=L01 + r'''
def batched_matmul(A, B):
    """[..., n, k] @ [..., k, m] -> [..., n, m] for every batch item, with no Python loop.

    The batch axes broadcast: [n, k] times [b, k, m] gives [b, n, m].
    """
    A = as_array(A, "A", min_ndim=2)
    B = as_array(B, "B", min_ndim=2)
    if A.shape[-1] != B.shape[-2]:
        raise ValueError(f"A has {A.shape[-1]} columns but B has {B.shape[-2]} rows "
                         f"(shapes {A.shape} and {B.shape})")
    batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    A = np.broadcast_to(A, batch + A.shape[-2:])
    B = np.broadcast_to(B, batch + B.shape[-2:])
    out = np.array([A[idx] @ B[idx] for idx in np.ndindex(*batch)],
                   dtype=np.result_type(A, B))
    return out.reshape(batch + (A.shape[-2], B.shape[-1]))
'''),
    Wrong(
        id="fw-01-batched-vectorize",
        exercise="batched_matmul",
        rule="with no Python loop",
        how="np.vectorize with a core signature runs np.matmul once per batch item in a Python-level loop hidden inside NumPy.",
        source=L01 + r'''
_per_item = np.vectorize(np.matmul, signature="(n,k),(k,m)->(n,m)")


def batched_matmul(A, B):
    """[..., n, k] @ [..., k, m] -> [..., n, m] for every batch item, with no Python loop.

    The batch axes broadcast: [n, k] times [b, k, m] gives [b, n, m].
    """
    A = as_array(A, "A", min_ndim=2)
    B = as_array(B, "B", min_ndim=2)
    if A.shape[-1] != B.shape[-2]:
        raise ValueError(f"A has {A.shape[-1]} columns but B has {B.shape[-2]} rows "
                         f"(shapes {A.shape} and {B.shape})")
    return _per_item(A, B).astype(np.result_type(A, B), copy=False)
'''),
    Wrong(
        id="fw-01-einsum-transpose-then-at",
        exercise="einsum_scores",
        rule="Use np.einsum: one call does it, with no loop and no other product.",
        how="np.einsum is called only to swap the last two axes of K, and the product itself is done with `@`.",
        source=L01 + r'''
def einsum_scores(Q, K):
    """Q Kᵀ for every batch item: [..., T_q, d] and [..., T_k, d] -> [..., T_q, T_k].

    Use np.einsum: one call does it, with no loop and no other product.
    """
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share their last axis, got {Q.shape} and {K.shape}")
    K_t = np.einsum("...kd->...dk", K)      # einsum names the axes to swap
    return Q @ K_t
'''),
    Wrong(
        id="fw-01-einsum-per-batch-item",
        exercise="einsum_scores",
        rule="one call does it, with no loop",
        how="The batch is flattened and np.einsum('qd,kd->qk') is called once per batch item in a generator passed to np.stack.",
        source=L01 + r'''
def einsum_scores(Q, K):
    """Q Kᵀ for every batch item: [..., T_q, d] and [..., T_k, d] -> [..., T_q, T_k].

    Use np.einsum: one call does it, with no loop and no other product.
    """
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share their last axis, got {Q.shape} and {K.shape}")
    batch = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2])
    Qb = np.broadcast_to(Q, batch + Q.shape[-2:]).reshape((-1,) + Q.shape[-2:])
    Kb = np.broadcast_to(K, batch + K.shape[-2:]).reshape((-1,) + K.shape[-2:])
    out = np.stack([np.einsum("qd,kd->qk", q, k) for q, k in zip(Qb, Kb)]) if len(Qb) else \
        np.zeros((0, Q.shape[-2], K.shape[-2]), dtype=np.result_type(Q, K))
    return out.reshape(batch + (Q.shape[-2], K.shape[-2]))
'''),
    Wrong(
        id="fw-01-convex-nan-slips-through",
        exercise="weighted_average_rows",
        rule="a NaN weight, or an infinite one.",
        how="The checks are `abs(total - 1) > 1e-6` and `W < 0`, both False for NaN, so a row holding NaN is mixed instead of rejected.",
        source=L01 + r'''
def weighted_average_rows(W, V):
    """Row i of the result mixes the rows of V with weights W[i] (non-negative, sum 1).

    W: [..., n, m], V: [..., m, d] -> [..., n, d]. Raises ValueError for invalid weights.
    """
    W = as_array(W, "W", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if W.shape[-1] != V.shape[-2]:
        raise ValueError(f"W has {W.shape[-1]} weights per row but V has {V.shape[-2]} rows")
    totals = W.sum(axis=-1)
    bad_sum = np.abs(totals - 1) > 1e-6
    if bad_sum.any():
        row = tuple(np.argwhere(bad_sum)[0])
        raise ValueError(f"row {row} of W sums to {totals[row]}, not 1")
    if (W < 0).any():
        raise ValueError(f"W has a negative weight at {tuple(np.argwhere(W < 0)[0])}")
    return W @ V
'''),
    Wrong(
        id="fw-01-convex-empty-message",
        exercise="weighted_average_rows",
        rule="wants a `ValueError` with a non-empty message for every one",
        how="Every invalid W is caught, but the ValueError is raised with no message at all.",
        source=L01 + r'''
def weighted_average_rows(W, V):
    """Row i of the result mixes the rows of V with weights W[i] (non-negative, sum 1).

    W: [..., n, m], V: [..., m, d] -> [..., n, d]. Raises ValueError for invalid weights.
    """
    W = as_array(W, "W", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if W.shape[-1] != V.shape[-2]:
        raise ValueError(f"W has {W.shape[-1]} weights per row but V has {V.shape[-2]} rows")
    ok = np.isfinite(W).all() and (W >= 0).all() and (np.abs(W.sum(axis=-1) - 1) <= 1e-6).all()
    if not ok:
        raise ValueError
    return W @ V
'''),
    Wrong(
        id="fw-01-convex-assert",
        exercise="weighted_average_rows",
        rule="raise a `ValueError` for them instead of returning a mixture",
        how="The validity tests are `assert` statements, so invalid weights raise AssertionError (with a message) instead of ValueError.",
        source=L01 + r'''
def weighted_average_rows(W, V):
    """Row i of the result mixes the rows of V with weights W[i] (non-negative, sum 1).

    W: [..., n, m], V: [..., m, d] -> [..., n, d]. Raises ValueError for invalid weights.
    """
    W = as_array(W, "W", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if W.shape[-1] != V.shape[-2]:
        raise ValueError(f"W has {W.shape[-1]} weights per row but V has {V.shape[-2]} rows")
    assert np.isfinite(W).all(), "W holds NaN or an infinite weight"
    assert (W >= 0).all(), "W holds a negative weight"
    assert (np.abs(W.sum(axis=-1) - 1) <= 1e-6).all(), "a row of W does not sum to 1"
    return W @ V
'''),
    Wrong(
        id="fw-01-convex-renormalise-in-place",
        exercise="weighted_average_rows",
        rule="A change to an input is read from the source",
        how="After validating, it divides W by its row sums in place (`W /= ...`) to remove rounding, and as_array hands back the caller's own float array, so the caller's W is written.",
        source=L01 + r'''
def weighted_average_rows(W, V):
    """Row i of the result mixes the rows of V with weights W[i] (non-negative, sum 1).

    W: [..., n, m], V: [..., m, d] -> [..., n, d]. Raises ValueError for invalid weights.
    """
    W = as_array(W, "W", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if W.shape[-1] != V.shape[-2]:
        raise ValueError(f"W has {W.shape[-1]} weights per row but V has {V.shape[-2]} rows")
    if not np.isfinite(W).all():
        raise ValueError("W holds NaN or an infinite weight")
    if (W < 0).any():
        raise ValueError(f"W has a negative weight at index {tuple(np.argwhere(W < 0)[0])}")
    totals = W.sum(axis=-1, keepdims=True)
    if (np.abs(totals - 1) > 1e-6).any():
        raise ValueError("a row of W does not sum to 1 (within 1e-6)")
    W /= totals                      # tidy the rounding: every row sums to 1 exactly
    return W @ V
'''),
]

# ----------------------------------------------------------------------------- lesson 02
L02 = '''import numpy as np
from grader.learner.validation import as_array
'''

_SOFTMAX_OK = r'''

def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
'''

WRONG += [
    Wrong(
        id="fw-02-softmax-getattr-torch",
        exercise="softmax",
        rule="a library softmax is not allowed here",
        how="torch's softmax is fetched with `getattr(torch, \"softmax\")` and applied to the array as a tensor.",
        source=L02 + r'''import torch

_normalise = getattr(torch, "softmax")


def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    return _normalise(torch.from_numpy(np.ascontiguousarray(x)), dim=int(axis)).numpy()
'''),
    Wrong(
        id="fw-02-softmax-exp-log-softmax",
        exercise="softmax",
        rule="`np.exp`, `max` and `sum` are all it takes (a library softmax is not allowed here)",
        how="It takes np.exp of torch.log_softmax, a library softmax in log space, instead of subtracting the max and dividing by the sum itself.",
        source=L02 + r'''import torch


def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    log_weights = torch.log_softmax(torch.from_numpy(np.ascontiguousarray(x)), dim=int(axis))
    return np.exp(log_weights.numpy())
'''),
    Wrong(
        id="fw-02-softmax-shift-in-place",
        exercise="softmax",
        rule="A change to an input is read from the source",
        how="It subtracts the maximum with `x -= ...`, and as_array returns the caller's float array itself, so the caller's scores are shifted in place.",
        source=L02 + r'''
def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    x -= x.max(axis=axis, keepdims=True)      # largest exponent is now 0
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)
'''),
    Wrong(
        id="fw-02-scores-scale-q-in-place",
        exercise="attention_scores",
        rule="A change to an input is read from the source",
        how="It scales the queries first with `Q /= np.sqrt(d_k)`, which writes into the caller's Q whenever it is already a float array.",
        source=L02 + r'''
def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    Q /= np.sqrt(Q.shape[-1])          # scale the small side first
    return Q @ np.swapaxes(K, -1, -2)
'''),
    Wrong(
        id="fw-02-variance-row-comprehension",
        exercise="score_variance",
        rule="without a Python loop",
        how="The dot products are collected by a list comprehension over the n_samples rows.",
        source=L02 + r'''
def score_variance(d_k, n_samples, seed):
    """The sample variance of q·k over n_samples pairs of standard normal vectors of length d_k."""
    if not isinstance(d_k, (int, np.integer)) or d_k < 1:
        raise ValueError(f"d_k must be a positive integer, got {d_k!r}")
    if not isinstance(n_samples, (int, np.integer)) or n_samples < 2:
        raise ValueError(f"n_samples must be an integer of at least 2, got {n_samples!r}")
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, d_k))   # one query per row
    k = rng.standard_normal((n_samples, d_k))   # one key per row
    dots = np.array([q[i] @ k[i] for i in range(n_samples)])
    return float(dots.var(ddof=1))
'''),
    Wrong(
        id="fw-02-variance-map-dot",
        exercise="score_variance",
        rule="without a Python loop",
        how="`map(np.dot, q, k)` walks the pairs one at a time and np.fromiter collects them.",
        source=L02 + r'''
def score_variance(d_k, n_samples, seed):
    """The sample variance of q·k over n_samples pairs of standard normal vectors of length d_k."""
    if not isinstance(d_k, (int, np.integer)) or d_k < 1:
        raise ValueError(f"d_k must be a positive integer, got {d_k!r}")
    if not isinstance(n_samples, (int, np.integer)) or n_samples < 2:
        raise ValueError(f"n_samples must be an integer of at least 2, got {n_samples!r}")
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, d_k))   # one query per row
    k = rng.standard_normal((n_samples, d_k))   # one key per row
    dots = np.fromiter(map(np.dot, q, k), dtype=float, count=n_samples)
    return float(np.var(dots, ddof=1))
'''),
    Wrong(
        id="fw-02-sdpa-import-alias",
        exercise="scaled_dot_product_attention",
        rule="The library's attention (`torch.nn.functional.scaled_dot_product_attention` and\nfriends) is not allowed",
        how="The output comes from torch's scaled_dot_product_attention imported under the name `fused_attention`; only the returned weights are computed with the learner's own softmax.",
        source=L02 + r'''import torch
from torch.nn.functional import scaled_dot_product_attention as fused_attention
''' + _SOFTMAX_OK + r'''

def scaled_dot_product_attention(Q, K, V):
    """softmax(Q Kᵀ / sqrt(d_k)) V. Returns (output [..., T_q, d_v], weights [..., T_q, T_k])."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V need one row per key: K has {K.shape[-2]} rows, V has "
                         f"{V.shape[-2]} (shapes {K.shape} and {V.shape})")
    weights = softmax(attention_scores(Q, K), axis=-1)
    dtype = np.result_type(Q, K, V)
    t = [torch.from_numpy(np.ascontiguousarray(a, dtype=dtype)) for a in (Q, K, V)]
    output = fused_attention(*t).numpy()
    return output, weights
'''),
    Wrong(
        id="fw-02-one-query-operator-matmul",
        exercise="attend_one_query",
        rule="No `@`, `np.matmul` or `np.einsum` here.",
        how="The scores come from a loop over the keys, but the weighted sum of the values is `operator.matmul(weights, V)`, the `@` operator called as a function.",
        source=L02 + r'''import operator


def attend_one_query(q, K, V):
    """The single-query sum for q [d_k] over keys K [T_k, d_k] and values V [T_k, d_v] -> [d_v]."""
    q = as_array(q, "q", ndim=1)
    K = as_array(K, "K", ndim=2)
    V = as_array(V, "V", ndim=2)
    if K.shape[1] != q.shape[0] or V.shape[0] != K.shape[0]:
        raise ValueError(f"q {q.shape}, K {K.shape} and V {V.shape} do not fit: "
                         f"q must be [d_k], K [T_k, d_k] and V [T_k, d_v]")
    scores = np.empty(K.shape[0])
    for i in range(K.shape[0]):
        scores[i] = (q * K[i]).sum() / np.sqrt(q.shape[0])
    weights = np.exp(scores - scores.max())
    weights /= weights.sum()
    return operator.matmul(weights, V)
'''),
    Wrong(
        id="fw-02-one-query-no-loop",
        exercise="attend_one_query",
        rule="loop over the keys, score each one",
        how="Every key is scored at once by broadcasting `K * q` and the values are summed by broadcasting too, so there is no loop over the keys.",
        source=L02 + r'''
def attend_one_query(q, K, V):
    """The single-query sum for q [d_k] over keys K [T_k, d_k] and values V [T_k, d_v] -> [d_v]."""
    q = as_array(q, "q", ndim=1)
    K = as_array(K, "K", ndim=2)
    V = as_array(V, "V", ndim=2)
    if K.shape[1] != q.shape[0] or V.shape[0] != K.shape[0]:
        raise ValueError(f"q {q.shape}, K {K.shape} and V {V.shape} do not fit: "
                         f"q must be [d_k], K [T_k, d_k] and V [T_k, d_v]")
    scores = (K * q).sum(axis=1) / np.sqrt(q.shape[0])
    weights = np.exp(scores - scores.max())
    weights = weights / weights.sum()
    return (weights[:, None] * V).sum(axis=0)
'''),
    Wrong(
        id="fw-02-one-query-logsumexp",
        exercise="attend_one_query",
        rule="subtract the largest score before `np.exp`, as in section 1",
        how="The weights are `np.exp(s - np.logaddexp.reduce(s))`: stable, but the largest score is never subtracted.",
        source=L02 + r'''
def attend_one_query(q, K, V):
    """The single-query sum for q [d_k] over keys K [T_k, d_k] and values V [T_k, d_v] -> [d_v]."""
    q = as_array(q, "q", ndim=1)
    K = as_array(K, "K", ndim=2)
    V = as_array(V, "V", ndim=2)
    if K.shape[1] != q.shape[0] or V.shape[0] != K.shape[0]:
        raise ValueError(f"q {q.shape}, K {K.shape} and V {V.shape} do not fit: "
                         f"q must be [d_k], K [T_k, d_k] and V [T_k, d_v]")
    scores = []
    for k_i in K:
        scores.append((q * k_i).sum() / np.sqrt(len(q)))
    scores = np.array(scores)
    log_total = np.logaddexp.reduce(scores)          # log of the sum of e^s, no overflow
    out = np.zeros(V.shape[1])
    for i, s in enumerate(scores):
        out = out + np.exp(s - log_total) * V[i]
    return out
'''),
    Wrong(
        id="fw-02-one-query-einsum-default",
        exercise="attend_one_query",
        rule="No `@`, `np.matmul` or `np.einsum` here.",
        how="np.einsum comes in as the default value of an extra keyword argument `_contract` and scores each key inside the loop.",
        source=L02 + r'''
def attend_one_query(q, K, V, _contract=np.einsum):
    """The single-query sum for q [d_k] over keys K [T_k, d_k] and values V [T_k, d_v] -> [d_v]."""
    q = as_array(q, "q", ndim=1)
    K = as_array(K, "K", ndim=2)
    V = as_array(V, "V", ndim=2)
    if K.shape[1] != q.shape[0] or V.shape[0] != K.shape[0]:
        raise ValueError(f"q {q.shape}, K {K.shape} and V {V.shape} do not fit: "
                         f"q must be [d_k], K [T_k, d_k] and V [T_k, d_v]")
    scores = np.array([_contract("d,d->", q, K[i]) for i in range(len(K))]) / np.sqrt(len(q))
    weights = np.exp(scores - scores.max())
    weights /= weights.sum()
    out = np.zeros(V.shape[1])
    for i in range(len(K)):
        out += weights[i] * V[i]
    return out
'''),
    Wrong(
        id="fw-02-self-attention-getattr-sdpa",
        exercise="self_attention",
        rule="The library's attention functions are not allowed in this lesson's exercises",
        how="self_attention projects X, then takes its output from `getattr(F, \"scaled_dot_product_attention\")` and its weights from the learner's softmax.",
        source=L02 + r'''import torch
import torch.nn.functional as F
''' + _SOFTMAX_OK + r'''

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
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    weights = softmax(attention_scores(Q, K), axis=-1)
    attend = getattr(F, "scaled_dot_product_attention")
    output = attend(*(torch.from_numpy(np.ascontiguousarray(a)) for a in (Q, K, V))).numpy()
    return output, weights
'''),
]

# ----------------------------------------------------------------------------- lesson 03
L03 = '''import math
from fractions import Fraction

import numpy as np
from grader.learner.validation import as_fractions
'''

_HAND_OK = r'''

def key_query_scores(K, Q):
    """Kᵀ Q for keys and queries stored as columns: entry [i, j] is k_i · q_j."""
    K = as_fractions(K, "K")
    Q = as_fractions(Q, "Q")
    if K.shape[0] != Q.shape[0]:
        raise ValueError(f"K and Q must have the same number of rows d_k, got K of shape "
                         f"{K.shape} and Q of shape {Q.shape}")
    return K.T @ Q


def floor_half(S):
    """floor(S / 2) entry by entry, exactly: the stand-in for S / √3. floor(-1/2) is -1."""
    S = as_fractions(S, "S")
    out = np.empty(S.shape, dtype=object)
    for idx in np.ndindex(S.shape):
        out[idx] = Fraction(math.floor(S[idx] / 2))
    return out
'''

WRONG += [
    Wrong(
        id="fw-03-scores-float-roundtrip",
        exercise="key_query_scores",
        rule="The same steps in code, exactly",
        how="The product is taken in float64 and each entry is turned back into a Fraction with limit_denominator, which gives the exact value only while the numbers stay small.",
        source=L03 + r'''
def key_query_scores(K, Q):
    """Kᵀ Q for keys and queries stored as columns: entry [i, j] is k_i · q_j.

    K: d_k×T_k and Q: d_k×T_q (ints, Fractions or floats). Returns T_k×T_q Fractions.
    """
    K = as_fractions(K, "K")
    Q = as_fractions(Q, "Q")
    if K.shape[0] != Q.shape[0]:
        raise ValueError(f"K and Q must have the same number of rows d_k, got K of shape "
                         f"{K.shape} and Q of shape {Q.shape}")
    S = K.astype(float).T @ Q.astype(float)          # floats are much faster
    out = np.empty(S.shape, dtype=object)
    for idx in np.ndindex(S.shape):
        out[idx] = Fraction(S[idx]).limit_denominator(10**6)
    return out
'''),
    Wrong(
        id="fw-03-floor-through-float",
        exercise="floor_half",
        rule="$\\lfloor S/2 \\rfloor$ for every entry, exactly",
        how="Each entry goes through `float(s) / 2` and math.floor, so it is exact only while the float can hold the Fraction.",
        source=L03 + r'''
def floor_half(S):
    """floor(S / 2) entry by entry, exactly: the stand-in for S / √3. floor(-1/2) is -1."""
    S = as_fractions(S, "S")
    halve = np.vectorize(lambda s: Fraction(math.floor(float(s) / 2)), otypes=[object])
    return halve(S)
'''),
    Wrong(
        id="fw-03-softmax3-float-limit",
        exercise="softmax3_columns",
        rule="$3^S$ with every column divided by its sum, as exact Fractions.",
        how="The powers and the column sums are computed in float64 and the weights are turned back into Fractions with limit_denominator.",
        source=L03 + r'''
def softmax3_columns(S):
    """3 ** S with every column divided by its sum, exactly. Every column sums to 1.

    S holds whole numbers (the scaled scores).
    """
    S = as_fractions(S, "S", whole=True)
    P = 3.0 ** S.astype(float)
    A = P / P.sum(axis=0, keepdims=True)
    return np.array([[Fraction(a).limit_denominator(10**6) for a in row] for row in A],
                    dtype=object).reshape(S.shape)
'''),
    Wrong(
        id="fw-03-by-hand-float-weights",
        exercise="attention_by_hand",
        rule="every step exact",
        how="Q, K, V, scores and scaled are exact, but the weights A are computed with float powers of 3 and rounded back to Fractions before Z = V A.",
        source=L03 + _HAND_OK + r'''

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
    Q, K, V = W_Q @ X, W_K @ X, W_V @ X
    scores = key_query_scores(K, Q)
    scaled = floor_half(scores)
    P = np.power(3.0, scaled.astype(float))
    A_float = P / P.sum(axis=0)
    A = np.vectorize(lambda a: Fraction(a).limit_denominator(10**6), otypes=[object])(A_float)
    Z = V @ A
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
'''),
    Wrong(
        id="fw-03-worksheet-scores-commas",
        exercise="worksheet_scores",
        rule="numbers separated by spaces",
        how="The right scores K^T Q are typed with commas between the numbers of a row.",
        source=r'''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below
# Kᵀ Q: 4 rows (one per key) of 4 numbers (one per query).
WORKSHEET["scores"] = """
3, 1, 3, 2
6, 3, 4, 4
0, -1, 2, 0
1, 1, 0, 1
"""
'''),
    Wrong(
        id="fw-03-worksheet-A-decimals",
        exercise="worksheet_A",
        rule="Write fractions like 3/16.",
        how="The weights whose fractions end as decimals (denominators 32 and 16) are typed as decimals such as 0.09375; only the fourteenths stay fractions.",
        source=r'''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below
# A: 4 rows of 4 weights, every column adds up to 1. Write fractions like 3/16.
WORKSHEET["A"] = """
0.09375 0.1875 0.1875 3/14
0.84375 0.5625 0.5625 9/14
0.03125 0.0625 0.1875 1/14
0.03125 0.1875 0.0625 1/14
"""
'''),
]

# ----------------------------------------------------------------------------- lesson 04
L04 = '''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int
'''

_MASKED_SOFTMAX_OK = r'''

def masked_softmax(scores, mask):
    """Softmax over the last axis with masked scores set to -inf first.

    mask: boolean, True = may attend, broadcasts to scores. A row with no allowed key
    returns zeros, never NaN.
    """
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    s = np.where(mask, scores, -np.inf)
    top = s.max(axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)        # a row with no allowed key
    e = np.exp(s - top)
    total = e.sum(axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)
'''

_CAUSAL_OK = r'''

def causal_mask(T):
    """[T, T] boolean mask: True where key j <= query i."""
    T = positive_int(T, "T")
    return np.tril(np.ones((T, T), dtype=bool))
'''

WRONG += [
    Wrong(
        id="fw-04-causal-float-tri",
        exercise="causal_mask",
        rule="a `[T, T]` array of dtype `bool`",
        how="It returns `np.tri(T)`, the right lower triangle as 1.0 and 0.0 floats.",
        source=L04 + r'''
def causal_mask(T):
    """[T, T] boolean mask: True where key j <= query i."""
    T = positive_int(T, "T")
    return np.tri(T)          # ones on and below the diagonal
'''),
    Wrong(
        id="fw-04-padding-torch-bool",
        exercise="padding_mask",
        rule="a `[B, T]` boolean array",
        how="The comparison is done in torch, so the right True/False grid comes back as a torch.bool tensor instead of a NumPy array.",
        source=L04 + r'''
def padding_mask(lengths, T):
    """[B, T] boolean mask: True at the real tokens of each sentence, False at its padding."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return torch.arange(T)[None, :] < torch.from_numpy(lengths)[:, None]
'''),
    Wrong(
        id="fw-04-columns-nested-list",
        exercise="causal_mask_columns",
        rule="a `[T, T]` array of dtype `bool`",
        how="The upper triangle is returned as a nested Python list of bools, not as an array.",
        source=L04 + r'''
def causal_mask_columns(T):
    """[T, T] causal mask with tokens as columns: entry [i, j] (key i, query j) is True where i <= j."""
    T = positive_int(T, "T")
    return [[i <= j for j in range(T)] for i in range(T)]
'''),
    Wrong(
        id="fw-04-masked-softmax-torch-alias",
        exercise="masked_softmax",
        rule="library softmax functions are not accepted here",
        how="The -inf fill is done in NumPy, then `torch.special.softmax` (bound as `_row_softmax`) normalises and np.nan_to_num turns the empty rows' NaN into zeros.",
        source=L04 + r'''
_row_softmax = torch.special.softmax


def masked_softmax(scores, mask):
    """Softmax over the last axis with masked scores set to -inf first.

    mask: boolean, True = may attend, broadcasts to scores. A row with no allowed key
    returns zeros, never NaN.
    """
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    filled = np.where(mask, scores, -np.inf)
    weights = _row_softmax(torch.from_numpy(filled), dim=-1).numpy()
    return np.nan_to_num(weights, nan=0.0)
'''),
    Wrong(
        id="fw-04-masked-softmax-fill-in-place",
        exercise="masked_softmax",
        rule="A change to an input is read from the source",
        how="It writes -inf straight into the scores it was given (`scores[~allowed] = -np.inf`), and as_array returns the caller's array itself.",
        source=L04 + r'''
def masked_softmax(scores, mask):
    """Softmax over the last axis with masked scores set to -inf first.

    mask: boolean, True = may attend, broadcasts to scores. A row with no allowed key
    returns zeros, never NaN.
    """
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    allowed = np.broadcast_to(mask, scores.shape)
    scores[~allowed] = -np.inf
    top = scores.max(axis=-1, keepdims=True)
    top[~np.isfinite(top)] = 0.0
    e = np.exp(scores - top)
    total = e.sum(axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)
'''),
    Wrong(
        id="fw-04-masked-attention-torch-sdpa",
        exercise="masked_attention",
        rule="calling torch's attention is not accepted here",
        how="The weights come from the learner's masked_softmax, but the output is F.scaled_dot_product_attention with the same boolean mask, with NaN rows zeroed.",
        source=L04 + _MASKED_SOFTMAX_OK + r'''

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
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is None:
        mask = np.ones(scores.shape, dtype=bool)
    weights = masked_softmax(scores, mask)
    full = np.ascontiguousarray(np.broadcast_to(mask, scores.shape))
    t = [torch.from_numpy(np.ascontiguousarray(a, dtype=np.float64)) for a in (Q, K, V)]
    output = F.scaled_dot_product_attention(*t, attn_mask=torch.from_numpy(full)).numpy()
    return np.nan_to_num(output, nan=0.0).astype(weights.dtype), weights
'''),
    Wrong(
        id="fw-04-prefix-add-accumulate",
        exercise="prefix_average",
        rule="no Python loop and no `np.cumsum`",
        how="The running sums come from `np.add.accumulate`, which is np.cumsum under another name, divided by 1..T.",
        source=L04 + r'''
def prefix_average(X):
    """Row i of the result is the mean of rows 0..i of X, computed as W @ X."""
    X = as_array(X, "X", min_ndim=2)
    T = X.shape[-2]
    running = np.add.accumulate(X, axis=-2)
    return running / np.arange(1, T + 1, dtype=X.dtype)[:, None]
'''),
    Wrong(
        id="fw-04-prefix-torch-cumsum",
        exercise="prefix_average",
        rule="(**one matrix product**\ndoes it)",
        how="It uses torch.cumsum on the array as a tensor and divides by the counts: no matrix product at all, and no NumPy cumsum for a scan to find.",
        source=L04 + r'''
def prefix_average(X):
    """Row i of the result is the mean of rows 0..i of X, computed as W @ X."""
    X = as_array(X, "X", min_ndim=2)
    counts = torch.arange(1, X.shape[-2] + 1, dtype=torch.float64)[:, None]
    sums = torch.cumsum(torch.from_numpy(np.ascontiguousarray(X, dtype=np.float64)), dim=-2)
    return (sums / counts).numpy().astype(X.dtype)
'''),
    Wrong(
        id="fw-04-prefix-mean-comprehension",
        exercise="prefix_average",
        rule="no Python loop",
        how="Each prefix mean `X[..., :i + 1, :].mean(-2)` is built in a list comprehension and stacked.",
        source=L04 + r'''
def prefix_average(X):
    """Row i of the result is the mean of rows 0..i of X, computed as W @ X."""
    X = as_array(X, "X", min_ndim=2)
    return np.stack([X[..., :i + 1, :].mean(axis=-2) for i in range(X.shape[-2])], axis=-2)
'''),
    Wrong(
        id="fw-04-is-causal-no-early-exit",
        exercise="is_causal",
        rule="return False at the first change",
        how="It perturbs every position and collects all the comparisons before returning `all(...)`, so attend keeps being called after the first change.",
        source=L04 + r'''
def is_causal(attend, T, d, seed=0):
    """True if changing tokens after position t never changes outputs 0..t of attend."""
    if not callable(attend):
        raise ValueError(f"attend must be a function of X [T, d], got {type(attend).__name__}")
    T, d = positive_int(T, "T"), positive_int(d, "d")
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((T, d))
    before = np.asarray(attend(X))
    unchanged = []
    for t in range(T):
        X_new = X.copy()
        X_new[t + 1:] = rng.standard_normal((T - t - 1, d))
        after = np.asarray(attend(X_new))
        unchanged.append(np.allclose(after[:t + 1], before[:t + 1]))
    return all(unchanged)
'''),
    Wrong(
        id="fw-04-is-causal-shift-future",
        exercise="is_causal",
        rule="replace the tokens *after* `t` (`X[t + 1:]`) with new random rows",
        how="The future tokens are not redrawn: they are the same rows shifted by +1, a deterministic change that still moves any output that reads them.",
        source=L04 + r'''
def is_causal(attend, T, d, seed=0):
    """True if changing tokens after position t never changes outputs 0..t of attend."""
    if not callable(attend):
        raise ValueError(f"attend must be a function of X [T, d], got {type(attend).__name__}")
    T, d = positive_int(T, "T"), positive_int(d, "d")
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((T, d))
    before = np.asarray(attend(X))
    for t in range(T - 1):
        X_new = X.copy()
        X_new[t + 1:] += 1.0               # a different future
        if not np.allclose(np.asarray(attend(X_new))[:t + 1], before[:t + 1]):
            return False
    return True
'''),
    Wrong(
        id="fw-04-mha-mask-float-neg-inf",
        exercise="to_mha_key_padding_mask",
        rule="the `torch.bool` tensor\nthat `key_padding_mask` expects",
        how="It returns a float mask, 0 at real tokens and -inf at padding, which nn.MultiheadAttention adds to the scores and so treats exactly like the boolean one.",
        source=L04 + r'''
def to_mha_key_padding_mask(lengths, T):
    """torch.bool tensor [B, T] for nn.MultiheadAttention's key_padding_mask: True = ignore."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    padding = torch.from_numpy(np.arange(T)[None, :] >= lengths[:, None])
    return torch.zeros(padding.shape).masked_fill(padding, float("-inf"))
'''),
]

# ----------------------------------------------------------------------------- lesson 05
L05 = '''import math

import torch
import torch.nn.functional as F
from torch import nn
'''

_MHA_GIVEN = r'''

def attention_shapes(query, key, value, d_model):
    """(B, T_q, T_k) for valid inputs [B, T, d_model]; a ValueError naming the culprit otherwise."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor) or t.dim() != 3 or t.shape[-1] != d_model:
            got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            raise ValueError(f"{name} must be a tensor [B, T, d_model={d_model}], got {got}")
    if key.shape[:2] != value.shape[:2]:
        raise ValueError(f"key {tuple(key.shape)} and value {tuple(value.shape)} must hold the same tokens")
    if query.shape[0] != key.shape[0]:
        raise ValueError(f"query {tuple(query.shape)} and key {tuple(key.shape)} have different batch sizes")
    return query.shape[0], query.shape[1], key.shape[1]


def as_attention_mask(mask, B, n_heads, T_q, T_k):
    """None, or the bool mask (True = may attend) with 4 axes, broadcastable to [B, h, T_q, T_k].

    Accepts [B, T_k] (a key mask), [B, T_q, T_k] (shared by all heads) or [B, h, T_q, T_k];
    any axis but T_k may also have size 1.
    """
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise ValueError(f"mask must be a bool tensor (True = may attend), got "
                         f"{getattr(mask, 'dtype', type(mask).__name__)}")
    given = tuple(mask.shape)
    if mask.dim() == 2:
        mask = mask[:, None, None, :]
    elif mask.dim() == 3:
        mask = mask[:, None, :, :]
    elif mask.dim() != 4:
        raise ValueError(f"mask must have 2, 3 or 4 axes, got shape {given}")
    if mask.shape[-1] != T_k or any(m not in (1, n) for m, n in zip(mask.shape, (B, n_heads, T_q, T_k))):
        raise ValueError(f"mask of shape {given} does not fit B={B}, h={n_heads}, T_q={T_q}, T_k={T_k}")
    return mask


def split_heads(x, n_heads):
    """[B, T, d_model] -> [B, h, T, d_head]: head i gets features i*d_head:(i+1)*d_head."""
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError(f"x must be a tensor [B, T, d_model], got {getattr(x, 'shape', type(x))}")
    B, T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    return x.reshape(B, T, n_heads, d_model // n_heads).transpose(1, 2)


def merge_heads(x):
    """[B, h, T, d_head] -> [B, T, h*d_head]: the heads of each token side by side."""
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d_head)
'''

_MHA_INIT = r'''
    def __init__(self, d_model, n_heads):
        super().__init__()
        if n_heads <= 0 or d_model % n_heads:
            raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
'''

_MHA_OK = _MHA_GIVEN + r'''

class MultiHeadAttention(nn.Module):
    """Multi-head attention with four nn.Linear(d_model, d_model) layers w_q, w_k, w_v, w_o."""
''' + _MHA_INIT + r'''
    def forward(self, query, key, value, mask=None):
        """query [B, T_q, d_model]; key, value [B, T_k, d_model]; mask True = may attend.
        Returns (output [B, T_q, d_model], weights [B, h, T_q, T_k])."""
        B, T_q, T_k = attention_shapes(query, key, value, self.d_model)
        mask = as_attention_mask(mask, B, self.n_heads, T_q, T_k)
        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = scores.softmax(dim=-1)
        return self.w_o(merge_heads(weights @ v)), weights
'''

_COPY_GIVEN_HEAD = r'''

def copy_from_torch(ours, theirs):
    """Load theirs = nn.MultiheadAttention(d_model, n_heads, batch_first=True) into ours."""
    if not isinstance(theirs, nn.MultiheadAttention) or not theirs.batch_first:
        raise ValueError("theirs must be an nn.MultiheadAttention created with batch_first=True")
    if not theirs._qkv_same_embed_dim:
        raise ValueError("theirs has kdim or vdim different from embed_dim, so it has no in_proj_weight")
    if theirs.embed_dim != ours.d_model or theirs.num_heads != ours.n_heads:
        raise ValueError(f"theirs has embed_dim={theirs.embed_dim}, num_heads={theirs.num_heads}, "
                         f"but ours has d_model={ours.d_model}, n_heads={ours.n_heads}")
    d = ours.d_model
'''

_HEADS_GIVEN_HEAD = r'''

def heads_one_by_one(x, mha):
    """Self-attention of mha on x [B, T, d_model], with a Python loop over the heads."""
    if x.dim() != 3 or x.shape[-1] != mha.d_model:
        raise ValueError(f"x must be [B, T, d_model={mha.d_model}], got shape {tuple(x.shape)}")
    d_head = mha.d_model // mha.n_heads
    outputs, maps = [], []
'''

WRONG += [
    Wrong(
        id="fw-05-mha-sdpa-alias",
        exercise="MultiHeadAttention",
        rule="`F.scaled_dot_product_attention` and\n`nn.MultiheadAttention` are not allowed inside your class",
        how="forward computes the weights itself but takes the heads' outputs from F.scaled_dot_product_attention, reached through the class attribute `_fused`.",
        source=L05 + _MHA_GIVEN + r'''

class MultiHeadAttention(nn.Module):
    """Multi-head attention with four nn.Linear(d_model, d_model) layers w_q, w_k, w_v, w_o."""

    _fused = staticmethod(F.scaled_dot_product_attention)
''' + _MHA_INIT + r'''
    def forward(self, query, key, value, mask=None):
        """query [B, T_q, d_model]; key, value [B, T_k, d_model]; mask True = may attend.
        Returns (output [B, T_q, d_model], weights [B, h, T_q, T_k])."""
        B, T_q, T_k = attention_shapes(query, key, value, self.d_model)
        mask = as_attention_mask(mask, B, self.n_heads, T_q, T_k)
        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = scores.softmax(dim=-1)
        heads = self._fused(q, k, v, attn_mask=mask)
        return self.w_o(merge_heads(heads)), weights
'''),
    Wrong(
        id="fw-05-mha-functional-mha-forward",
        exercise="MultiHeadAttention",
        rule="`nn.MultiheadAttention` are not allowed inside your class: you are building them",
        how="forward hands its own w_q, w_k, w_v, w_o weights to F.multi_head_attention_forward, the function nn.MultiheadAttention itself runs, with the mask turned to torch's True = ignore.",
        source=L05 + _MHA_GIVEN + r'''

class MultiHeadAttention(nn.Module):
    """Multi-head attention with four nn.Linear(d_model, d_model) layers w_q, w_k, w_v, w_o."""
''' + _MHA_INIT + r'''
    def forward(self, query, key, value, mask=None):
        """query [B, T_q, d_model]; key, value [B, T_k, d_model]; mask True = may attend.
        Returns (output [B, T_q, d_model], weights [B, h, T_q, T_k])."""
        B, T_q, T_k = attention_shapes(query, key, value, self.d_model)
        mask = as_attention_mask(mask, B, self.n_heads, T_q, T_k)
        ignore = None
        if mask is not None:
            ignore = ~mask.expand(B, self.n_heads, T_q, T_k).reshape(B * self.n_heads, T_q, T_k)
        out, weights = F.multi_head_attention_forward(
            query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1),
            self.d_model, self.n_heads,
            None, torch.cat([self.w_q.bias, self.w_k.bias, self.w_v.bias]),
            None, None, False, 0.0, self.w_o.weight, self.w_o.bias,
            training=self.training, need_weights=True, attn_mask=ignore,
            use_separate_proj_weight=True, q_proj_weight=self.w_q.weight,
            k_proj_weight=self.w_k.weight, v_proj_weight=self.w_v.weight,
            average_attn_weights=False)
        return out.transpose(0, 1), weights
'''),
    Wrong(
        id="fw-05-copy-new-parameters",
        exercise="copy_from_torch",
        rule="Copying into the parameters that are already there, in place (`Tensor.copy_`), keeps `ours`'s own parameter objects.",
        how="Each weight and bias of ours is replaced by a new nn.Parameter holding a clone of torch's slice, so the right numbers sit in new parameter objects.",
        source=L05 + _MHA_OK + _COPY_GIVEN_HEAD + r'''    W = theirs.in_proj_weight.detach()
    b = theirs.in_proj_bias.detach()
    for i, layer in enumerate((ours.w_q, ours.w_k, ours.w_v)):
        layer.weight = nn.Parameter(W[i * d:(i + 1) * d].clone())
        layer.bias = nn.Parameter(b[i * d:(i + 1) * d].clone())
    ours.w_o.weight = nn.Parameter(theirs.out_proj.weight.detach().clone())
    ours.w_o.bias = nn.Parameter(theirs.out_proj.bias.detach().clone())
    return ours
'''),
    Wrong(
        id="fw-05-copy-data-views",
        exercise="copy_from_torch",
        rule="Copying into the parameters that are already there, in place (`Tensor.copy_`)",
        how="It rebinds each parameter's `.data` to a slice of torch's own tensors, so the parameter objects stay but nothing is copied: ours now shares storage with theirs.",
        source=L05 + _MHA_OK + _COPY_GIVEN_HEAD + r'''    ours.w_q.weight.data = theirs.in_proj_weight.data[:d]
    ours.w_k.weight.data = theirs.in_proj_weight.data[d:2 * d]
    ours.w_v.weight.data = theirs.in_proj_weight.data[2 * d:]
    ours.w_q.bias.data = theirs.in_proj_bias.data[:d]
    ours.w_k.bias.data = theirs.in_proj_bias.data[d:2 * d]
    ours.w_v.bias.data = theirs.in_proj_bias.data[2 * d:]
    ours.w_o.weight.data = theirs.out_proj.weight.data
    ours.w_o.bias.data = theirs.out_proj.bias.data
    return ours
'''),
    Wrong(
        id="fw-05-heads-batched-no-loop",
        exercise="heads_one_by_one",
        rule="with a Python loop over the heads",
        how="All heads are computed at once by projecting with mha.w_q, w_k, w_v and reshaping to [B, h, T, d_head], with no loop over the heads.",
        source=L05 + _MHA_OK + _HEADS_GIVEN_HEAD + r'''    B, T, _ = x.shape
    q = mha.w_q(x).reshape(B, T, mha.n_heads, d_head).transpose(1, 2)
    k = mha.w_k(x).reshape(B, T, mha.n_heads, d_head).transpose(1, 2)
    v = mha.w_v(x).reshape(B, T, mha.n_heads, d_head).transpose(1, 2)
    weights = (q @ k.transpose(-1, -2) / math.sqrt(d_head)).softmax(dim=-1)
    heads = (weights @ v).transpose(1, 2).reshape(B, T, mha.d_model)
    return mha.w_o(heads), weights
'''),
    Wrong(
        id="fw-05-heads-loop-sdpa",
        exercise="heads_one_by_one",
        rule="`F.scaled_dot_product_attention` and `nn.MultiheadAttention` are not\nallowed here either",
        how="The loop over heads is there, but each head's output comes from torch.nn.functional.scaled_dot_product_attention; only its map is computed by hand.",
        source=L05 + _MHA_OK + _HEADS_GIVEN_HEAD + r'''    for i in range(mha.n_heads):
        rows = slice(i * d_head, (i + 1) * d_head)
        q = x @ mha.w_q.weight[rows].T + mha.w_q.bias[rows]
        k = x @ mha.w_k.weight[rows].T + mha.w_k.bias[rows]
        v = x @ mha.w_v.weight[rows].T + mha.w_v.bias[rows]
        maps.append((q @ k.transpose(-1, -2) / math.sqrt(d_head)).softmax(dim=-1))
        outputs.append(torch.nn.functional.scaled_dot_product_attention(q, k, v))
    return mha.w_o(torch.cat(outputs, dim=-1)), torch.stack(maps, dim=1)
'''),
    Wrong(
        id="fw-05-count-build-torch-module",
        exercise="mha_parameter_count",
        rule="building a module and counting its parameters is not allowed here.",
        how="It builds torch's nn.MultiheadAttention(d_model, n_heads) and sums p.numel() over its parameters.",
        source=L05 + r'''
def mha_parameter_count(d_model, n_heads):
    """The number of learned numbers in MultiHeadAttention(d_model, n_heads)."""
    for name, value in (("d_model", d_model), ("n_heads", n_heads)):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    return sum(p.numel() for p in nn.MultiheadAttention(d_model, n_heads).parameters())
'''),
    Wrong(
        id="fw-05-count-linear-helper",
        exercise="mha_parameter_count",
        rule="The check\nwants the formula: building a module and counting its parameters is not allowed here.",
        how="A helper builds one nn.Linear(d_model, d_model) and counts its parameters, and the answer is four times that.",
        source=L05 + r'''
def _one_projection(d_model):
    layer = nn.Linear(d_model, d_model)
    return sum(p.numel() for p in layer.parameters())


def mha_parameter_count(d_model, n_heads):
    """The number of learned numbers in MultiHeadAttention(d_model, n_heads)."""
    for name, value in (("d_model", d_model), ("n_heads", n_heads)):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    return 4 * _one_projection(d_model)     # w_q, w_k, w_v, w_o
'''),
]

# ----------------------------------------------------------------------------- lesson 06
L06 = '''import copy
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    MODEL, TASK, LEARNING_RATE, SKIPS, budget, configure_torch, progress,
    as_stream, as_tokens, as_hidden, check_block_sizes, check_model_sizes,
    check_steps_and_seed, check_depths, layer_outputs,
)
'''

_BLOCK_HEAD = r'''

class Block(nn.Module):
    """Pre-norm transformer block; x: [batch, tokens, d_model] -> the same shape.

    residual=True:   x = x + attn(ln1(x)),  then  x = x + mlp(ln2(x))
    residual=False:  x = attn(ln1(x)),      then  x = mlp(ln2(x))
    """

    def __init__(self, d_model, n_heads, d_ff, residual=True):
        super().__init__()
        check_block_sizes(d_model, n_heads, d_ff)    # ValueError for sizes that do not fit
        self.d_model, self.residual = d_model, bool(residual)
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))
'''

_BLOCK_OK = _BLOCK_HEAD + r'''
    def forward(self, x):
        x = as_stream(x, self.d_model)    # ValueError unless x is [batch, tokens, d_model]
        h = self.ln1(x)
        a = self.attn(h, h, h, need_weights=False)[0]
        x = x + a if self.residual else a
        m = self.mlp(self.ln2(x))
        return x + m if self.residual else m
'''

_TINY_OK = r'''

class TinyTransformer(nn.Module):
    """Embeddings, n_layers Blocks, a final LayerNorm and a linear head."""

    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual=True):
        super().__init__()
        check_model_sizes(vocab_size, d_model, n_heads, d_ff, n_layers, seq_len)
        self.vocab_size, self.seq_len, self.residual = vocab_size, seq_len, bool(residual)
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(seq_len, d_model)
        # self.blocks: an nn.ModuleList of n_layers Blocks
        self.blocks = nn.ModuleList(Block(d_model, n_heads, d_ff, residual=residual)
                                    for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens):
        tokens = as_tokens(tokens, self.vocab_size, self.seq_len)   # ValueError for bad ids or shapes
        x = self.tok_emb(tokens) + self.pos_emb(torch.arange(tokens.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))
'''

_SIM_OK = r'''

def token_similarity(h):
    """Mean cosine similarity between distinct tokens of each sequence, averaged over the
    batch. h: [..., T, d] with T >= 2 -> a Python float."""
    h = as_hidden(h)    # a float tensor; ValueError if a sequence has fewer than two tokens
    u = F.normalize(h, dim=-1)
    T = h.shape[-2]
    cos = u @ u.transpose(-1, -2)
    off_diagonal = cos.sum(dim=(-1, -2)) - cos.diagonal(dim1=-2, dim2=-1).sum(-1)
    return (off_diagonal / (T * (T - 1))).mean().item()
'''

_TRAIN_OK = r'''

def train(model, task, steps, seed):
    """Train model in place; return the loss of every step, as a list of floats."""
    steps, seed = check_steps_and_seed(steps, seed)
    generator = torch.Generator().manual_seed(seed)        # every batch comes from here
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    model.train()
    losses = []
    for _ in progress(range(steps), "training"):
        tokens, targets = task.sample(generator)
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
'''

_ABLATION_HEAD = r'''

def run_ablation(depths, steps, seed):
    """The depth sweep: one row (a dict) per run, two runs per depth."""
    depths = check_depths(depths)
    steps, seed = check_steps_and_seed(steps, seed)
    probe, _ = TASK.sample(torch.Generator().manual_seed(seed))    # fixed tokens to measure on
    rows = []
'''

_ALL06 = _BLOCK_OK + _TINY_OK + _SIM_OK + _TRAIN_OK

WRONG += [
    Wrong(
        id="fw-06-block-empty-attn-mask",
        exercise="Block",
        rule="pass no `attn_mask` (and no `is_causal`)",
        how="It hands attention an all-False boolean attn_mask (torch's True = ignore, so nothing is hidden), which changes no number.",
        source=L06 + _BLOCK_HEAD + r'''
    def forward(self, x):
        x = as_stream(x, self.d_model)    # ValueError unless x is [batch, tokens, d_model]
        T = x.shape[1]
        nothing_hidden = torch.zeros(T, T, dtype=torch.bool)      # every token sees every token
        h = self.ln1(x)
        a, _ = self.attn(h, h, h, attn_mask=nothing_hidden, need_weights=False)
        x = x + a if self.residual else a
        m = self.mlp(self.ln2(x))
        return x + m if self.residual else m
'''),
    Wrong(
        id="fw-06-block-is-causal-false",
        exercise="Block",
        rule="pass no `attn_mask` (and no `is_causal`)",
        how="It calls `self.attn(h, h, h, need_weights=False, is_causal=False)`, spelling out the default that the notebook says not to pass.",
        source=L06 + _BLOCK_HEAD + r'''
    def forward(self, x):
        x = as_stream(x, self.d_model)    # ValueError unless x is [batch, tokens, d_model]
        h = self.ln1(x)
        a = self.attn(h, h, h, need_weights=False, is_causal=False)[0]
        if self.residual:
            x = x + a
            return x + self.mlp(self.ln2(x))
        return self.mlp(self.ln2(a))
'''),
    Wrong(
        id="fw-06-block-extra-dropout-layer",
        exercise="Block",
        rule="Keep its layers as they are, with their names",
        how="`__init__` gains a `self.drop = nn.Dropout(0.0)` applied to both branches; it has no weights and drops nothing, so the numbers are unchanged.",
        source=L06 + _BLOCK_HEAD.replace(
            "        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))\n",
            "        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))\n"
            "        self.drop = nn.Dropout(0.0)      # habit: dropout on every branch (off for now)\n") + r'''
    def forward(self, x):
        x = as_stream(x, self.d_model)    # ValueError unless x is [batch, tokens, d_model]
        h = self.ln1(x)
        a = self.drop(self.attn(h, h, h, need_weights=False)[0])
        x = x + a if self.residual else a
        m = self.drop(self.mlp(self.ln2(x)))
        return x + m if self.residual else m
'''),
    Wrong(
        id="fw-06-tiny-sequential-blocks",
        exercise="TinyTransformer",
        rule="self.blocks: an nn.ModuleList of n_layers Blocks",
        how="self.blocks is an nn.Sequential of the Blocks (same parameter names, same numbers) and forward calls it once.",
        source=L06 + _BLOCK_OK + r'''

class TinyTransformer(nn.Module):
    """Embeddings, n_layers Blocks, a final LayerNorm and a linear head."""

    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual=True):
        super().__init__()
        check_model_sizes(vocab_size, d_model, n_heads, d_ff, n_layers, seq_len)
        self.vocab_size, self.seq_len, self.residual = vocab_size, seq_len, bool(residual)
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(seq_len, d_model)
        # self.blocks: an nn.ModuleList of n_layers Blocks
        self.blocks = nn.Sequential(*[Block(d_model, n_heads, d_ff, residual) for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens):
        tokens = as_tokens(tokens, self.vocab_size, self.seq_len)   # ValueError for bad ids or shapes
        positions = torch.arange(tokens.shape[1])
        return self.head(self.ln_f(self.blocks(self.tok_emb(tokens) + self.pos_emb(positions))))
'''),
    Wrong(
        id="fw-06-similarity-normalise-in-place",
        exercise="token_similarity",
        rule="A change to an input is read from the source",
        how="It normalises with `h /= h.norm(...)`; as_hidden returns `h.detach()`, which shares storage with the caller's tensor (or NumPy array), so the caller's vectors are rescaled.",
        source=L06 + r'''

def token_similarity(h):
    """Mean cosine similarity between distinct tokens of each sequence, averaged over the
    batch. h: [..., T, d] with T >= 2 -> a Python float."""
    h = as_hidden(h)    # a float tensor; ValueError if a sequence has fewer than two tokens
    h /= h.norm(dim=-1, keepdim=True)
    T = h.shape[-2]
    cos = h @ h.transpose(-1, -2)
    pairs = cos.sum(dim=(-1, -2)) - cos.diagonal(dim1=-2, dim2=-1).sum(dim=-1)
    return float((pairs / (T * (T - 1))).mean())
'''),
    Wrong(
        id="fw-06-similarity-numpy-scalar",
        exercise="token_similarity",
        rule="return a Python float",
        how="The mean is taken in NumPy and returned as it comes, an np.float64 (a float subclass), not a Python float.",
        source=L06 + r'''

def token_similarity(h):
    """Mean cosine similarity between distinct tokens of each sequence, averaged over the
    batch. h: [..., T, d] with T >= 2 -> a Python float."""
    h = as_hidden(h)    # a float tensor; ValueError if a sequence has fewer than two tokens
    x = h.double().numpy()
    u = x / np.linalg.norm(x, axis=-1, keepdims=True)
    cos = u @ np.swapaxes(u, -1, -2)
    T = x.shape[-2]
    off = ~np.eye(T, dtype=bool)
    return cos[..., off].mean(axis=-1).mean()
'''),
    Wrong(
        id="fw-06-train-zero-grad-last",
        exercise="train",
        rule="clear the gradients the step before left behind, backpropagate, and let the optimizer\n   update the weights, in that order",
        how="The gradients are cleared at the end of each step, after optimizer.step(), instead of before backward; with a fresh model the losses are the same.",
        source=L06 + r'''

def train(model, task, steps, seed):
    """Train model in place; return the loss of every step, as a list of floats."""
    steps, seed = check_steps_and_seed(steps, seed)
    generator = torch.Generator().manual_seed(seed)        # every batch comes from here
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    model.train()
    losses = []
    for _ in range(steps):
        tokens, targets = task.sample(generator)
        logits = model(tokens)
        loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()          # tidy up for the next step
        losses.append(loss.item())
    return losses
'''),
    Wrong(
        id="fw-06-train-returns-array",
        exercise="train",
        rule="Return the list of losses.",
        how="The losses are recorded as floats but returned as a NumPy array (`np.array(losses)`), not as a list.",
        source=L06 + r'''

def train(model, task, steps, seed):
    """Train model in place; return the loss of every step, as a list of floats."""
    steps, seed = check_steps_and_seed(steps, seed)
    generator = torch.Generator().manual_seed(seed)        # every batch comes from here
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    model.train()
    losses = []
    for _ in progress(range(steps), "training"):
        tokens, targets = task.sample(generator)
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss))
    return np.array(losses)          # easier to plot and average
'''),
    Wrong(
        id="fw-06-ablation-deepcopy-no-reseed",
        exercise="run_ablation",
        rule="right after seeding torch's random generator with `seed`",
        how="Only the model with residuals is built after seeding; the one without is a copy.deepcopy of it with its flags turned off, so both start from the same weights without a second seed.",
        source=L06 + _ALL06 + _ABLATION_HEAD + r'''    for depth in depths:
        torch.manual_seed(seed)
        with_skips = TinyTransformer(**MODEL, n_layers=depth, residual=True)
        without = copy.deepcopy(with_skips)           # the very same weights
        without.residual = False
        for block in without.blocks:
            block.residual = False
        for residual, model in ((True, with_skips), (False, without)):
            sim_init = [token_similarity(h) for h in layer_outputs(model, probe)]
            losses = train(model, TASK, steps, seed)
            sim_trained = [token_similarity(h) for h in layer_outputs(model, probe)]
            rows.append({"depth": depth, "residual": residual, "losses": losses,
                         "final_loss": float(np.mean(losses[-10:])),
                         "similarity_init": sim_init, "similarity_trained": sim_trained})
    return rows
'''),
    Wrong(
        id="fw-06-ablation-without-first",
        exercise="run_ablation",
        rule="train two models: first with residuals, then without",
        how="At each depth the model without residuals is seeded, built and trained first, and its row is inserted after the other's, so the rows come out in the asked order.",
        source=L06 + _ALL06 + _ABLATION_HEAD + r'''    def one_run(depth, residual):
        torch.manual_seed(seed)
        model = TinyTransformer(**MODEL, n_layers=depth, residual=residual)
        sim_init = [token_similarity(h) for h in layer_outputs(model, probe)]
        losses = train(model, TASK, steps, seed)
        return {"depth": depth, "residual": residual, "losses": losses,
                "final_loss": float(np.mean(losses[-10:])),
                "similarity_init": sim_init,
                "similarity_trained": [token_similarity(h) for h in layer_outputs(model, probe)]}

    for depth in depths:
        without = one_run(depth, False)       # the interesting one first
        with_skips = one_run(depth, True)
        rows += [with_skips, without]
    return rows
'''),
]

# ----------------------------------------------------------------------------- lesson 07
L07 = '''import functools
import itertools
import math

import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import positive_int
from courseware.long_attention import (
    score_blocks, stream_of, one_query, tile_inputs, key_value_rows, decode_inputs,
)
'''

_STATS_HEAD = r'''

def online_softmax_stats(scores_blocks):
    """(m, s): the largest score, and the sum of exp(x - m) over every score x, in one pass.

    scores_blocks comes as a stream: each block once, in order, read with one for loop
    (it has no len() and no index).
    """
    blocks = score_blocks(scores_blocks)      # given: yields each block, checked, one at a time
'''

_ONE_PASS_HEAD = r'''

def attention_one_pass(q, K, V, block):
    """Attention of one query q [d_k] over K [T_k, d_k], V [T_k, d_v], reading `block` keys at a time.

    One pass: each block of rows of K and V is read while it is the current block, never after.
    """
    q, K, V = one_query(q, K, V)              # given: checks the shapes, never copies K or V
    block = positive_int(block, "block")
'''

_TILED_HEAD = r'''

def tiled_attention(Q, K, V, block_q, block_k, causal=False):
    """(output, skipped): attention computed tile by tile; with causal=True, tiles wholly in the future are skipped."""
    Q, K, V, batch = tile_inputs(Q, K, V, causal)   # given: checks; batch is the broadcast batch shape
    block_q, block_k = positive_int(block_q, "block_q"), positive_int(block_k, "block_k")
'''

_KVCACHE_OK = r'''

class KVCache:
    """The keys [t, d_k] and values [t, d_v] of the t positions seen so far."""

    def __init__(self):
        self._keys, self._values = [], []

    def __len__(self):
        """The number of positions in the cache."""
        return sum(len(k) for k in self._keys)

    def append(self, k, v):
        """Add one position (k [d_k], v [d_v]) or a block of them ([n, d_k], [n, d_v])."""
        k, v = key_value_rows(k, v)    # given: both as blocks of rows [n, d], one value per key
        self._keys.append(np.array(k))
        self._values.append(np.array(v))

    @property
    def keys(self):
        """Every key so far, one row per position: [t, d_k]."""
        if not self._keys:
            raise ValueError("the cache is empty: no keys yet")
        return np.concatenate(self._keys)

    @property
    def values(self):
        """Every value so far, one row per position: [t, d_v]."""
        if not self._values:
            raise ValueError("the cache is empty: no values yet")
        return np.concatenate(self._values)
'''

_DECODE_HEAD = r'''

def decode_step(x_t, cache, W_q, W_k, W_v):
    """Causal self-attention for the new token x_t [d_model] (or new tokens [n, d_model]), reusing the cache."""
    x, W_q, W_k, W_v = decode_inputs(x_t, cache, W_q, W_k, W_v)   # given: checks the shapes
'''

WRONG += [
    Wrong(
        id="fw-07-stats-tee-two-passes",
        exercise="online_softmax_stats",
        rule="going over the blocks a second time (a second loop, or a list of the blocks kept to read again) fails",
        how="itertools.tee splits the stream, which it reads only once, into two iterators: a first loop finds m, then a second pass sums exp(x - m) over tee's buffered copy of every block (islice stops it at the last block).",
        source=L07 + _STATS_HEAD + r'''    for_max, for_sum = itertools.tee(blocks)
    m, count = -math.inf, 0
    for b in for_max:                          # first pass: the maximum
        m, count = max(m, float(b.max())), count + 1
    # second pass over tee's copy; islice stops after the last block without asking for more
    s = sum(float(np.exp(b - m).sum()) for b in itertools.islice(for_sum, count))
    return m, s
'''),
    Wrong(
        id="fw-07-stats-functools-reduce",
        exercise="online_softmax_stats",
        rule="Read it with one `for` loop.",
        how="The running (m, s) update is folded over the stream with functools.reduce: one pass that keeps only m and s, but no for loop.",
        source=L07 + _STATS_HEAD + r'''
    def update(state, b):
        m, s = state
        m_new = max(m, float(b.max()))
        if m_new == -math.inf:                 # nothing but -inf so far
            return m_new, 0.0
        return m_new, s * math.exp(m - m_new) + float(np.exp(b - m_new).sum())

    return functools.reduce(update, blocks, (-math.inf, 0.0))
'''),
    Wrong(
        id="fw-07-stats-per-block-list",
        exercise="online_softmax_stats",
        rule="read the blocks once, in order, keeping only\n$m$ and $s$",
        how="One for loop reads each block once, but it keeps every block's own (max, sum) in a list and merges them all after the loop.",
        source=L07 + _STATS_HEAD + r'''    per_block = []
    for b in blocks:
        m_b = float(b.max())
        s_b = float(np.exp(b - m_b).sum()) if m_b > -math.inf else 0.0
        per_block.append((m_b, s_b))
    m = max(m_b for m_b, _ in per_block)
    if m == -math.inf:
        return m, 0.0
    s = sum(s_b * math.exp(m_b - m) for m_b, s_b in per_block)
    return m, s
'''),
    Wrong(
        id="fw-07-stats-chain-fromiter",
        exercise="online_softmax_stats",
        rule="Joining the blocks back into one row is not accepted either",
        how="itertools.chain.from_iterable flattens the stream into np.fromiter, so the blocks are joined into one row without np.concatenate, then m and s are taken the two-pass way.",
        source=L07 + _STATS_HEAD + r'''    row = np.fromiter(itertools.chain.from_iterable(blocks), dtype=float)
    m = float(row.max())
    return m, float(np.exp(row - m).sum())
'''),
    Wrong(
        id="fw-07-one-pass-two-loops",
        exercise="attention_one_pass",
        rule="a first loop over the keys for the maximum and a second\nfor the sums and the output fails",
        how="A generator expression over the key blocks finds the maximum score first, then a second loop over the same blocks sums the weights and the output.",
        source=L07 + _ONE_PASS_HEAD + r'''    scale = 1.0 / math.sqrt(q.shape[0])
    starts = range(0, K.shape[0], block)
    m = max(float((K[j:j + block] @ q).max()) * scale for j in starts)
    s, o = 0.0, np.zeros(V.shape[1])
    for j in starts:
        w = np.exp((K[j:j + block] @ q) * scale - m)
        s += w.sum()
        o += w @ V[j:j + block]
    return o / s
'''),
    Wrong(
        id="fw-07-one-pass-block-summaries",
        exercise="attention_one_pass",
        rule="Between blocks keep only $m$, $s$ and $o$",
        how="One pass over the blocks, but each block's (max, sum, unnormalised output) is appended to a list and the list is merged after the loop, so memory grows with T_k / block.",
        source=L07 + _ONE_PASS_HEAD + r'''    scale = 1.0 / math.sqrt(q.shape[0])
    summaries = []
    for j in range(0, K.shape[0], block):
        x = (K[j:j + block] @ q) * scale
        m_b = x.max()
        w = np.exp(x - m_b)
        summaries.append((m_b, w.sum(), w @ V[j:j + block]))
    m = max(m_b for m_b, _, _ in summaries)
    s = sum(s_b * np.exp(m_b - m) for m_b, s_b, _ in summaries)
    o = sum(o_b * np.exp(m_b - m) for m_b, _, o_b in summaries)
    return o / s
'''),
    Wrong(
        id="fw-07-one-pass-torch-softmax-blocks",
        exercise="attention_one_pass",
        rule="Library softmax and attention functions are not\naccepted here.",
        how="Each block's weights come from torch.softmax and its log-sum from torch.logsumexp, and the blocks' averages are merged online in log space.",
        source=L07 + _ONE_PASS_HEAD + r'''    scale = 1.0 / math.sqrt(q.shape[0])
    log_total, o = -math.inf, np.zeros(V.shape[1])
    for j in range(0, K.shape[0], block):
        x = torch.from_numpy((K[j:j + block] @ q) * scale)
        block_log_total = float(torch.logsumexp(x, dim=0))
        block_average = torch.softmax(x, dim=0).numpy() @ V[j:j + block]
        new_total = float(np.logaddexp(log_total, block_log_total))
        o = o * math.exp(log_total - new_total) + block_average * math.exp(block_log_total - new_total)
        log_total = new_total
    return o
'''),
    Wrong(
        id="fw-07-one-pass-rest-then-block",
        exercise="attention_one_pass",
        rule="So does reading more than\n`block` rows in one step",
        how="Each step takes the rest of the keys, `K[j:]`, and only then its first `block` rows, so every step reads from all remaining rows.",
        source=L07 + _ONE_PASS_HEAD + r'''    scale = 1.0 / math.sqrt(q.shape[0])
    m, s, o = -np.inf, 0.0, np.zeros(V.shape[1])
    j = 0
    while j < K.shape[0]:
        rest_K, rest_V = K[j:], V[j:]
        K_b, V_b = rest_K[:block], rest_V[:block]
        x = (K_b @ q) * scale
        m_new = max(m, x.max())
        w = np.exp(x - m_new)
        s = s * np.exp(m - m_new) + w.sum()
        o = o * np.exp(m - m_new) + w @ V_b
        m = m_new
        j += block
    return o / s
'''),
    Wrong(
        id="fw-07-tiled-compute-then-skip",
        exercise="tiled_attention",
        rule="a tile counted as skipped must\nnot be computed at all",
        how="Every tile's scores are computed and masked; a tile that comes out all masked is counted as skipped, so the causal call does the full work.",
        source=L07 + _TILED_HEAD + r'''    T_q, T_k, d_v = Q.shape[-2], K.shape[-2], V.shape[-1]
    scale = 1.0 / math.sqrt(Q.shape[-1])
    out = np.zeros(batch + (T_q, d_v), dtype=np.result_type(Q, K, V))
    skipped = 0
    for i0 in range(0, T_q, block_q):
        i1 = min(i0 + block_q, T_q)
        Q_i = Q[..., i0:i1, :]
        m = np.full(batch + (i1 - i0, 1), -np.inf)
        s = np.zeros(batch + (i1 - i0, 1))
        o = np.zeros(batch + (i1 - i0, d_v))
        for j0 in range(0, T_k, block_k):
            j1 = min(j0 + block_k, T_k)
            S = Q_i @ np.swapaxes(K[..., j0:j1, :], -1, -2) * scale
            if causal:
                allowed = np.arange(j0, j1)[None, :] <= np.arange(i0, i1)[:, None]
                if not allowed.any():
                    skipped += 1                      # nothing to add from this tile
                S = np.where(allowed, S, -np.inf)
            m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
            P = np.exp(S - m_new)
            s = s * np.exp(m - m_new) + P.sum(axis=-1, keepdims=True)
            o = o * np.exp(m - m_new) + P @ V[..., j0:j1, :]
            m = m_new
        out[..., i0:i1, :] = o / s
    return out, skipped
'''),
    Wrong(
        id="fw-07-tiled-full-score-buffer",
        exercise="tiled_attention",
        rule="under a memory budget that fits a few tiles and the output, but not all the scores",
        how="Tiles are computed (and future ones skipped) one at a time, but each is written into a preallocated [..., T_q, T_k] array of scores that is softmaxed at the end.",
        source=L07 + _TILED_HEAD + r'''    T_q, T_k = Q.shape[-2], K.shape[-2]
    scale = 1.0 / math.sqrt(Q.shape[-1])
    S = np.full(batch + (T_q, T_k), -np.inf)
    skipped = 0
    for i0 in range(0, T_q, block_q):
        i1 = min(i0 + block_q, T_q)
        for j0 in range(0, T_k, block_k):
            j1 = min(j0 + block_k, T_k)
            if causal and j0 > i1 - 1:
                skipped += 1
                continue
            tile = Q[..., i0:i1, :] @ np.swapaxes(K[..., j0:j1, :], -1, -2) * scale
            if causal:
                tile = np.where(np.arange(j0, j1)[None, :] <= np.arange(i0, i1)[:, None], tile, -np.inf)
            S[..., i0:i1, j0:j1] = tile
    W = np.exp(S - S.max(axis=-1, keepdims=True))
    W /= W.sum(axis=-1, keepdims=True)
    return (W @ V).astype(np.result_type(Q, K, V)), skipped
'''),
    Wrong(
        id="fw-07-tiled-row-torch-softmax",
        exercise="tiled_attention",
        rule="Library softmax and attention functions are not accepted here either.",
        how="Each block of queries is scored against all the key tiles it may see in one product and normalised with torch.softmax; the future tiles are still left out and counted.",
        source=L07 + _TILED_HEAD + r'''    T_q, T_k, d_v = Q.shape[-2], K.shape[-2], V.shape[-1]
    n_tiles_k = -(-T_k // block_k)
    out = np.zeros(batch + (T_q, d_v), dtype=np.result_type(Q, K, V))
    skipped = 0
    for i0 in range(0, T_q, block_q):
        i1 = min(i0 + block_q, T_q)
        seen = n_tiles_k if not causal else min(n_tiles_k, (i1 - 1) // block_k + 1)
        skipped += n_tiles_k - seen
        k_end = min(T_k, seen * block_k)
        S = Q[..., i0:i1, :] @ np.swapaxes(K[..., :k_end, :], -1, -2) / math.sqrt(Q.shape[-1])
        if causal:
            S = np.where(np.arange(k_end)[None, :] <= np.arange(i0, i1)[:, None], S, -np.inf)
        W = torch.softmax(torch.from_numpy(np.ascontiguousarray(S, dtype=np.float64)), dim=-1).numpy()
        out[..., i0:i1, :] = W @ V[..., :k_end, :]
    return out, skipped
'''),
    Wrong(
        id="fw-07-tiled-scale-q-in-place",
        exercise="tiled_attention",
        rule="A change to an input is read from the source",
        how="It folds 1/sqrt(d_k) into the queries once with `Q *= ...`, and tile_inputs hands back the caller's float array, so the caller's Q is scaled in place.",
        source=L07 + _TILED_HEAD + r'''    T_q, T_k, d_v = Q.shape[-2], K.shape[-2], V.shape[-1]
    Q *= 1.0 / math.sqrt(Q.shape[-1])          # scale once instead of in every tile
    out = np.zeros(batch + (T_q, d_v), dtype=np.result_type(Q, K, V))
    skipped = 0
    for i0 in range(0, T_q, block_q):
        i1 = min(i0 + block_q, T_q)
        m = np.full(batch + (i1 - i0, 1), -np.inf)
        s = np.zeros(batch + (i1 - i0, 1))
        o = np.zeros(batch + (i1 - i0, d_v))
        for j0 in range(0, T_k, block_k):
            j1 = min(j0 + block_k, T_k)
            if causal and j0 > i1 - 1:
                skipped += 1
                continue
            S = Q[..., i0:i1, :] @ np.swapaxes(K[..., j0:j1, :], -1, -2)
            if causal and j1 - 1 > i0:
                S = np.where(np.arange(j0, j1)[None, :] <= np.arange(i0, i1)[:, None], S, -np.inf)
            m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
            P = np.exp(S - m_new)
            s = s * np.exp(m - m_new) + P.sum(axis=-1, keepdims=True)
            o = o * np.exp(m - m_new) + P @ V[..., j0:j1, :]
            m = m_new
        out[..., i0:i1, :] = o / s
    return out, skipped
'''),
    Wrong(
        id="fw-07-decode-attend-then-append",
        exercise="decode_step",
        rule="appends $k$ and $v$ to the cache, **before** attending",
        how="It attends over the cached keys and values joined with the new ones, and appends k and v to the cache only after the output is computed.",
        source=L07 + _KVCACHE_OK + _DECODE_HEAD + r'''    rows = np.atleast_2d(x)
    q, k, v = rows @ W_q, rows @ W_k, rows @ W_v
    t, n = len(cache), len(rows)
    keys = np.concatenate([cache.keys, k]) if t else k
    values = np.concatenate([cache.values, v]) if t else v
    scores = q @ keys.T / math.sqrt(W_q.shape[1])
    allowed = np.arange(t + n)[None, :] <= (t + np.arange(n))[:, None]
    scores = np.where(allowed, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    w /= w.sum(axis=-1, keepdims=True)
    out = w @ values
    cache.append(k, v)                          # now remember this step's key and value
    return out[0] if x.ndim == 1 else out
'''),
    Wrong(
        id="fw-07-decode-torch-softmax",
        exercise="decode_step",
        rule="Library softmax and attention\nfunctions are not accepted here either.",
        how="The masked scores over the cache are normalised with torch.nn.functional.softmax instead of by hand.",
        source=L07 + _KVCACHE_OK + _DECODE_HEAD + r'''    rows = np.atleast_2d(x)
    t, n = len(cache), len(rows)
    cache.append(rows @ W_k, rows @ W_v)
    q = rows @ W_q
    scores = q @ cache.keys.T / math.sqrt(W_q.shape[1])
    allowed = np.arange(t + n)[None, :] <= (t + np.arange(n))[:, None]
    scores = torch.from_numpy(np.where(allowed, scores, -np.inf))
    out = F.softmax(scores, dim=-1).numpy() @ cache.values
    return out[0] if x.ndim == 1 else out
'''),
]

# ----------------------------------------------------------------------------- lesson 08
L08 = '''import functools

import numpy as np
import torch
import torch.nn.functional as F

from courseware.positions import position_sizes, rope_inputs, rope_score_inputs
'''

_ROPE_OK = r'''

def rope(x, positions, base=10000.0):
    """Turn pair (2i, 2i + 1) of row t of x [..., T, d] counterclockwise by positions[t] * base^(-2i/d)."""
    x, positions, base = rope_inputs(x, positions, base)    # given: checks the shapes and positions
    d = x.shape[-1]
    angles = np.outer(positions, base ** (-np.arange(0, d, 2) / d))    # [T, d/2]
    cos, sin = np.cos(angles), np.sin(angles)
    a, b = x[..., 0::2], x[..., 1::2]
    out = np.empty(np.broadcast_shapes(x.shape), dtype=np.result_type(x, np.float32))
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out
'''

WRONG += [
    Wrong(
        id="fw-08-sinusoid-pair-comprehension",
        exercise="sinusoidal_positions",
        rule="Use no Python loop",
        how="The sine and cosine columns of each pair are built in a list comprehension over the d/2 frequencies and stacked.",
        source=L08 + r'''
def sinusoidal_positions(T, d):
    """The (T, d) table: PE[t, 2i] = sin(t / 10000^(2i/d)), PE[t, 2i + 1] = cos(t / 10000^(2i/d))."""
    T, d = position_sizes(T, d)      # given: T >= 0 and d even and positive, or a ValueError
    t = np.arange(T, dtype=float)
    columns = [f(t / 10000.0 ** (2 * i / d)) for i in range(d // 2) for f in (np.sin, np.cos)]
    return np.stack(columns, axis=1)
'''),
    Wrong(
        id="fw-08-sinusoid-map-rows",
        exercise="sinusoidal_positions",
        rule="Use no Python loop: a column of positions times a row\nof frequencies gives every angle at once",
        how="Each row of the table is made by a function mapped over range(T) with `map`, then the rows are stacked.",
        source=L08 + r'''
def sinusoidal_positions(T, d):
    """The (T, d) table: PE[t, 2i] = sin(t / 10000^(2i/d)), PE[t, 2i + 1] = cos(t / 10000^(2i/d))."""
    T, d = position_sizes(T, d)      # given: T >= 0 and d even and positive, or a ValueError
    theta = 10000.0 ** (-np.arange(0, d, 2) / d)

    def row(t):
        out = np.empty(d)
        out[0::2], out[1::2] = np.sin(t * theta), np.cos(t * theta)
        return out

    return np.array(list(map(row, range(T))), dtype=float).reshape(T, d)
'''),
    Wrong(
        id="fw-08-sinusoid-given-line-replaced",
        exercise="sinusoidal_positions",
        rule="The first line of each function is given: it checks the\ninput and raises a `ValueError` for one that does not fit. Keep it.",
        how="The given check is replaced by `T, d = int(T), int(d)`, so an odd d or a negative T no longer raises a ValueError (an odd d silently drops its last column).",
        source=L08 + r'''
def sinusoidal_positions(T, d):
    """The (T, d) table: PE[t, 2i] = sin(t / 10000^(2i/d)), PE[t, 2i + 1] = cos(t / 10000^(2i/d))."""
    T, d = int(T), int(d)
    angles = np.outer(np.arange(max(T, 0)), 10000.0 ** (-np.arange(0, d - 1, 2) / d))
    table = np.empty((max(T, 0), 2 * angles.shape[1]))
    table[:, 0::2], table[:, 1::2] = np.sin(angles), np.cos(angles)
    return table
'''),
    Wrong(
        id="fw-08-rope-turn-in-place",
        exercise="rope",
        rule="A change to an input is read from the source",
        how="The turned pairs are written back into x itself (`x[..., 0::2] = ...`), and rope_inputs returns the caller's float array, so the caller's x is rotated in place and returned.",
        source=L08 + r'''
def rope(x, positions, base=10000.0):
    """Turn pair (2i, 2i + 1) of row t of x [..., T, d] counterclockwise by positions[t] * base^(-2i/d)."""
    x, positions, base = rope_inputs(x, positions, base)    # given: checks the shapes and positions
    d = x.shape[-1]
    angles = positions[:, None] * base ** (-np.arange(0, d, 2) / d)
    a, b = x[..., 0::2].copy(), x[..., 1::2].copy()
    x[..., 0::2] = a * np.cos(angles) - b * np.sin(angles)
    x[..., 1::2] = a * np.sin(angles) + b * np.cos(angles)
    return x
'''),
    Wrong(
        id="fw-08-rope-reduce-over-pairs",
        exercise="rope",
        rule="with no Python loop at all",
        how="functools.reduce folds a function that turns one pair at a time over range(d // 2), filling an output array pair by pair.",
        source=L08 + r'''
def rope(x, positions, base=10000.0):
    """Turn pair (2i, 2i + 1) of row t of x [..., T, d] counterclockwise by positions[t] * base^(-2i/d)."""
    x, positions, base = rope_inputs(x, positions, base)    # given: checks the shapes and positions
    d = x.shape[-1]

    def turn_pair(out, i):
        angle = positions * base ** (-2 * i / d)          # [T]
        a, b = x[..., 2 * i], x[..., 2 * i + 1]
        out[..., 2 * i] = a * np.cos(angle) - b * np.sin(angle)
        out[..., 2 * i + 1] = a * np.sin(angle) + b * np.cos(angle)
        return out

    return functools.reduce(turn_pair, range(d // 2), np.empty_like(x))
'''),
    Wrong(
        id="fw-08-rope-scores-scale-q-in-place",
        exercise="rope_scores",
        rule="A change to an input is read from the source",
        how="It divides the queries by sqrt(d) in place before turning them (`Q /= np.sqrt(d)`, allowed since RoPE is linear), which writes into the caller's Q.",
        source=L08 + _ROPE_OK + r'''

def rope_scores(Q, K, positions_q, positions_k, base=10000.0):
    """rope(Q, positions_q) @ rope(K, positions_k)ᵀ / sqrt(d): [..., T_q, d], [..., T_k, d] -> [..., T_q, T_k]."""
    Q, K, positions_q, positions_k, base = rope_score_inputs(Q, K, positions_q, positions_k, base)  # given
    Q /= np.sqrt(Q.shape[-1])             # scale first: turning is linear
    return rope(Q, positions_q, base) @ np.swapaxes(rope(K, positions_k, base), -1, -2)
'''),
]
