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


def matmul_dot(A, B):
    """``C[i, j]`` is the dot product of row i of A and column j of B."""
    A, B = matmul_operands(A, B)
    n, m = A.shape[0], B.shape[1]
    C = np.zeros((n, m), dtype=result_dtype(A, B))
    for i in range(n):
        for j in range(m):
            C[i, j] = np.sum(A[i, :] * B[:, j])
    return C


def matmul_rows(A, B):
    """Row i of C is a combination of the rows of B, weighted by row i of A."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    C = np.zeros((n, B.shape[1]), dtype=result_dtype(A, B))
    for i in range(n):
        for p in range(k):
            C[i, :] += A[i, p] * B[p, :]
    return C


def matmul_cols(A, B):
    """Column j of C is a combination of the columns of A, weighted by column j of B."""
    A, B = matmul_operands(A, B)
    k, m = B.shape
    C = np.zeros((A.shape[0], m), dtype=result_dtype(A, B))
    for j in range(m):
        for p in range(k):
            C[:, j] += B[p, j] * A[:, p]
    return C


def matmul_outer(A, B):
    """C is the sum over p of the outer product of column p of A and row p of B."""
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]), dtype=result_dtype(A, B))
    for p in range(A.shape[1]):
        C += A[:, p, None] * B[None, p, :]
    return C


def _batch_shape(a: np.ndarray, b: np.ndarray, a_name: str, b_name: str) -> tuple:
    try:
        return np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(
            f"the batch axes of {a_name} (shape {shape_str(a.shape)}) and {b_name} "
            f"(shape {shape_str(b.shape)}) do not broadcast"
        ) from None


def batched_matmul(A, B):
    """``A @ B`` for stacks of matrices, ``[b, n, k] @ [b, k, m]``, and the broadcast
    ``[n, k] @ [b, k, m]``, with no Python loop."""
    A = as_array(A, "A", min_ndim=2)
    B = as_array(B, "B", min_ndim=2)
    check_inner(A, B)
    _batch_shape(A, B, "A", "B")
    return np.matmul(A, B)


def einsum_scores(Q, K):
    """``Q Kᵀ`` for every batch item, ``[..., T_q, d] x [..., T_k, d] -> [..., T_q, T_k]``."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(
            f"Q and K must have the same last axis (d_k), got Q of shape {shape_str(Q.shape)} "
            f"and K of shape {shape_str(K.shape)}"
        )
    _batch_shape(Q, K, "Q", "K")
    return np.einsum("...qd,...kd->...qk", Q, K)


def check_convex_rows(W: np.ndarray, name: str = "W", atol: float = CONVEX_ATOL) -> None:
    """Raise ``ValueError`` unless every row of ``W`` is non-negative and sums to 1."""
    if not np.all(np.isfinite(W)):
        raise ValueError(f"{name} contains NaN or infinite weights")
    negative = np.argwhere(W < 0)
    if negative.size:
        idx = tuple(int(i) for i in negative[0])
        raise ValueError(f"{name}{list(idx)} = {W[idx]:.4g} is negative; weights must be >= 0")
    sums = W.sum(axis=-1)
    off = np.argwhere(np.abs(sums - 1) > atol)
    if off.size:
        idx = tuple(int(i) for i in off[0])
        raise ValueError(
            f"row {list(idx)} of {name} sums to {sums[idx]:.6g}, not 1; every row of weights "
            f"must sum to 1"
        )


def weighted_average_rows(W, V):
    """Row i of the result is the mixture of the rows of V with the convex weights W[i].

    ``W: [..., n, m]`` (every row non-negative, summing to 1 within 1e-6),
    ``V: [..., m, d]``; returns ``[..., n, d]``.
    """
    W = as_array(W, "W", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if W.shape[-1] != V.shape[-2]:
        raise ValueError(
            f"W has {W.shape[-1]} weights per row (shape {shape_str(W.shape)}) but V has "
            f"{V.shape[-2]} rows (shape {shape_str(V.shape)}); they must match"
        )
    _batch_shape(W, V, "W", "V")
    check_convex_rows(W)
    return np.matmul(W, V)
