"""Lesson 01: four ways to read a matrix product, batching, einsum, convex mixtures.

The loop versions are written the way the lesson explains each reading, and use neither
``@`` nor ``np.matmul``/``np.dot``/``np.einsum``: they are the readings, not a product
in disguise. Results keep float32 when both inputs are float32.
"""
from __future__ import annotations

import numpy as np

from ...learner.validation import as_array, check_inner, matmul_operands, result_dtype, shape_str

__all__ = [
    "matmul_dot",
    "matmul_rows",
    "matmul_cols",
    "matmul_outer",
    "batched_matmul",
    "einsum_scores",
    "weighted_average_rows",
]

CONVEX_ATOL = 1e-6  # how far a row sum of weights may be from 1


# Each reading is a private core called with the right settings. The settings are knobs: a
# catalogued mistake of the lesson is the same core with one knob changed (``exercises.py``).

def _dot(A, B, *, row_of_B=False, swap_bounds=False, reset=True, dtype=None):
    """The dot-product reading. Knobs: ``row_of_B``, row i of A dotted with row j of B;
    ``swap_bounds``, i runs over the columns of B and j over the rows of A; ``reset=False``,
    one running sum for every entry; ``dtype``, C's (``int`` cuts every fraction off)."""
    A, B = matmul_operands(A, B)
    n, m = A.shape[0], B.shape[0] if row_of_B else B.shape[1]
    # site: the result C
    C = np.zeros((n, m), dtype=dtype or result_dtype(A, B))
    total = 0.0
    # site: the loop over i
    for i in range(m if swap_bounds else n):
        # site: the loop over j
        for j in range(n if swap_bounds else m):
            # site: the dot product for entry (i, j)
            C[i, j] = np.sum(A[i, :] * (B[j, :] if row_of_B else B[:, j]))
            if not reset:
                total = C[i, j] = total + C[i, j]
    return C


def _rows(A, B, *, weight="A[i, p]", reset=True):
    """The row reading. Knobs: ``weight="A[p, i]"``, the indices of A swapped;
    ``reset=False``, row i starts from row i - 1 instead of from zero."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    # site: the result C
    C = np.zeros((n, B.shape[1]), dtype=result_dtype(A, B))
    # site: the loop over i
    for i in range(n):
        if not reset and i > 0:
            C[i, :] = C[i - 1, :]
        # site: the loop over p
        for p in range(k):
            # site: the weighted sum for row i
            C[i, :] += (A[i, p] if weight == "A[i, p]" else A[p, i]) * B[p, :]
    return C


def _cols(A, B, *, weight="B[p, j]", reset=True):
    """The column reading. Knobs: ``weight="B[j, p]"``, the indices of B swapped;
    ``reset=False``, column j starts from column j - 1 instead of from zero."""
    A, B = matmul_operands(A, B)
    k, m = B.shape
    # site: the result C
    C = np.zeros((A.shape[0], m), dtype=result_dtype(A, B))
    # site: the loop over j
    for j in range(m):
        if not reset and j > 0:
            C[:, j] = C[:, j - 1]
        # site: the loop over p
        for p in range(k):
            # site: the weighted sum for column j
            C[:, j] += (B[p, j] if weight == "B[p, j]" else B[j, p]) * A[:, p]
    return C


def _outer(A, B, *, accumulate=True):
    """The outer-product reading. Knob: ``accumulate=False``, each term replaces the sum."""
    A, B = matmul_operands(A, B)
    # site: the result C
    C = np.zeros((A.shape[0], B.shape[1]), dtype=result_dtype(A, B))
    # site: the loop over p
    for p in range(A.shape[1]):
        # site: the p-th outer product
        term = A[:, p, None] * B[None, p, :]
        # site: the sum of the outer products
        C = C + term if accumulate else term
    return C


def matmul_dot(A, B):
    """``C[i, j]`` is the dot product of row i of A and column j of B."""
    return _dot(A, B)


def matmul_rows(A, B):
    """Row i of C is a combination of the rows of B, weighted by row i of A."""
    return _rows(A, B)


def matmul_cols(A, B):
    """Column j of C is a combination of the columns of A, weighted by column j of B."""
    return _cols(A, B)


def matmul_outer(A, B):
    """C is the sum over p of the outer product of column p of A and row p of B."""
    return _outer(A, B)


def _batch_shape(a: np.ndarray, b: np.ndarray, a_name: str, b_name: str) -> tuple:
    try:
        return np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(
            f"the batch axes of {a_name} (shape {shape_str(a.shape)}) and {b_name} "
            f"(shape {shape_str(b.shape)}) do not broadcast"
        ) from None


def _batched(A, B, *, product=np.matmul):
    """Knob: ``product=np.dot``, which pairs every matrix of A with every matrix of B."""
    A = as_array(A, "A", min_ndim=2)
    B = as_array(B, "B", min_ndim=2)
    check_inner(A, B)
    _batch_shape(A, B, "A", "B")
    # site: the batched product
    return product(A, B)


def batched_matmul(A, B):
    """``A @ B`` for stacks of matrices, ``[b, n, k] @ [b, k, m]``, and the broadcast
    ``[n, k] @ [b, k, m]``, with no Python loop."""
    return _batched(A, B)


def _einsum_scores(Q, K, *, subscripts="...qd,...kd->...qk", k_dot_t=False):
    """Knobs: other ``subscripts``; ``k_dot_t``, K transposed with ``.T`` first."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(
            f"Q and K must have the same last axis (d_k), got Q of shape {shape_str(Q.shape)} "
            f"and K of shape {shape_str(K.shape)}"
        )
    _batch_shape(Q, K, "Q", "K")
    # site: the einsum of the scores
    return np.einsum(subscripts, Q, K.T if k_dot_t else K)


def einsum_scores(Q, K):
    """``Q Kᵀ`` for every batch item, ``[..., T_q, d] x [..., T_k, d] -> [..., T_q, T_k]``."""
    return _einsum_scores(Q, K)


def check_convex_rows(W: np.ndarray, name: str = "W", atol: float = CONVEX_ATOL) -> None:
    """Raise ``ValueError`` unless every row of ``W`` is non-negative and sums to 1."""
    if not np.all(np.isfinite(W)):
        raise ValueError(f"{name} contains NaN or infinite weights")
    # site: the test for negative weights
    negative = np.argwhere(W < 0)
    if negative.size:
        idx = tuple(int(i) for i in negative[0])
        raise ValueError(f"{name}{list(idx)} = {W[idx]:.4g} is negative; weights must be >= 0")
    # site: the row sums of the weights
    sums = W.sum(axis=-1)
    # site: the test for rows that do not sum to 1
    off = np.argwhere(np.abs(sums - 1) > atol)
    if off.size:
        idx = tuple(int(i) for i in off[0])
        raise ValueError(
            f"row {list(idx)} of {name} sums to {sums[idx]:.6g}, not 1; every row of weights "
            f"must sum to 1"
        )


def _weighted_average(W, V, *, weights="W"):
    """Knob: ``weights="uniform"``, W ignored (the plain average of the rows of V), or
    ``"Wᵀ"``, W transposed."""
    W = as_array(W, "W", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if W.shape[-1] != V.shape[-2]:
        raise ValueError(
            f"W has {W.shape[-1]} weights per row (shape {shape_str(W.shape)}) but V has "
            f"{V.shape[-2]} rows (shape {shape_str(V.shape)}); they must match"
        )
    _batch_shape(W, V, "W", "V")
    check_convex_rows(W)
    W = {"W": W, "Wᵀ": np.swapaxes(W, -1, -2),
         "uniform": np.full_like(W, 1 / W.shape[-1])}[weights]
    # site: the mixture of the rows of V
    return np.matmul(W, V)


def weighted_average_rows(W, V):
    """Row i of the result is the mixture of the rows of V with the convex weights W[i].

    ``W: [..., n, m]`` (every row non-negative, summing to 1 within 1e-6),
    ``V: [..., m, d]``; returns ``[..., n, d]``.
    """
    return _weighted_average(W, V)
