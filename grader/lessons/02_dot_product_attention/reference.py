"""Lesson 02: scaled dot-product attention, one step at a time.

Row convention (PyTorch's): tokens are rows, ``Q: [..., T_q, d_k]``, ``K: [..., T_k, d_k]``,
``V: [..., T_k, d_v]``. Leading axes are batch axes; they broadcast and are never looped
over. Results keep float32 when every array input is float32.
"""
from __future__ import annotations

import numbers

import numpy as np

from ...learner.validation import as_array, shape_str

__all__ = [
    "softmax",
    "attention_scores",
    "scaled_dot_product_attention",
    "attend_one_query",
    "self_attention",
    "score_variance",
]


def _axis_index(axis, ndim: int) -> int:
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, numbers.Integral):
        raise ValueError(f"axis must be an integer, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} does not exist for x with {ndim} axes")
    return int(axis)


def softmax(x, axis=-1):
    """``exp(x) / sum(exp(x))`` along ``axis``, without overflow.

    Subtracting the largest entry of each slice first changes nothing mathematically
    (the factor ``exp(-max)`` cancels) and keeps every exponent <= 0, so scores of
    +-1000 give exact weights instead of ``inf / inf = nan``.
    """
    x = as_array(x, "x", min_ndim=1)
    axis = _axis_index(axis, x.ndim)
    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def _batch_shape(arrays: dict[str, np.ndarray]) -> tuple:
    try:
        return np.broadcast_shapes(*(a.shape[:-2] for a in arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{name} {shape_str(a.shape)}" for name, a in arrays.items())
        raise ValueError(f"the batch axes (all but the last two) do not broadcast: {shapes}") from None


def _query_key(Q, K) -> tuple[np.ndarray, np.ndarray]:
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(
            f"Q and K must have the same last axis d_k, got Q of shape {shape_str(Q.shape)} "
            f"and K of shape {shape_str(K.shape)}"
        )
    return Q, K


def _check_values(K: np.ndarray, V: np.ndarray) -> None:
    if V.shape[-2] != K.shape[-2]:
        raise ValueError(
            f"V must have one row per key: K has {K.shape[-2]} rows (shape "
            f"{shape_str(K.shape)}) but V has {V.shape[-2]} (shape {shape_str(V.shape)})"
        )


def attention_scores(Q, K):
    """``Q Kᵀ / sqrt(d_k)``: ``[..., T_q, d_k]`` and ``[..., T_k, d_k]`` -> ``[..., T_q, T_k]``.

    ``d_k`` is the length of each query and key vector (the last axis), never the number
    of tokens. Only the last two axes of K are swapped: ``K.T`` would reverse the batch
    axes too.
    """
    Q, K = _query_key(Q, K)
    _batch_shape({"Q": Q, "K": K})
    d_k = Q.shape[-1]
    return np.matmul(Q, np.swapaxes(K, -1, -2)) / np.sqrt(d_k).astype(np.result_type(Q, K))


def scaled_dot_product_attention(Q, K, V):
    """``softmax(Q Kᵀ / sqrt(d_k)) V``; returns ``(output [..., T_q, d_v], weights [..., T_q, T_k])``.

    Row i of ``weights`` says how query i shares its attention among the keys, so the
    softmax runs along the key axis (the last one), and every row sums to 1.
    """
    Q, K = _query_key(Q, K)
    V = as_array(V, "V", min_ndim=2)
    _check_values(K, V)
    _batch_shape({"Q": Q, "K": K, "V": V})
    weights = softmax(attention_scores(Q, K), axis=-1)
    return np.matmul(weights, V), weights


def attend_one_query(q, K, V):
    """One query, written as a sum with a loop over the keys:

    ``sum_i  exp(s_i) / sum_j exp(s_j) * v_i``  with  ``s_i = q·k_i / sqrt(d_k)``.

    ``q: [d_k]``, ``K: [T_k, d_k]``, ``V: [T_k, d_v]`` -> ``[d_v]``. It equals row i of
    ``scaled_dot_product_attention`` when ``q`` is query i.
    """
    q = as_array(q, "q", ndim=1)
    K = as_array(K, "K", ndim=2)
    V = as_array(V, "V", ndim=2)
    if K.shape[1] != q.shape[0]:
        raise ValueError(
            f"q has length {q.shape[0]} but the keys in K (shape {shape_str(K.shape)}) have "
            f"length {K.shape[1]}; both are d_k"
        )
    _check_values(K, V)
    d_k = q.shape[0]
    scores = [float(np.sum(q * K[i])) / np.sqrt(d_k) for i in range(K.shape[0])]
    top = max(scores)
    exps = [np.exp(s - top) for s in scores]
    total = sum(exps)
    out = np.zeros(V.shape[1], dtype=np.result_type(q, K, V))
    for i in range(K.shape[0]):
        out += exps[i] / total * V[i]
    return out


def self_attention(X, W_q, W_k, W_v):
    """Queries, keys and values are learned projections of the same tokens X.

    ``X: [..., T, d_model]``, ``W_q, W_k: [d_model, d_k]``, ``W_v: [d_model, d_v]``;
    ``Q = X W_q``, ``K = X W_k``, ``V = X W_v``; returns ``(output [..., T, d_v],
    weights [..., T, T])``. The scale is ``sqrt(d_k)``, the width of the projected
    queries and keys, not ``sqrt(d_model)``.
    """
    X = as_array(X, "X", min_ndim=2)
    W_q = as_array(W_q, "W_q", ndim=2)
    W_k = as_array(W_k, "W_k", ndim=2)
    W_v = as_array(W_v, "W_v", ndim=2)
    d_model = X.shape[-1]
    for name, W in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v)):
        if W.shape[0] != d_model:
            raise ValueError(
                f"{name} must have d_model = {d_model} rows to project X of shape "
                f"{shape_str(X.shape)}, got {name} of shape {shape_str(W.shape)}"
            )
    if W_q.shape[1] != W_k.shape[1]:
        raise ValueError(
            f"W_q and W_k must give queries and keys of the same length d_k, got W_q of "
            f"shape {shape_str(W_q.shape)} and W_k of shape {shape_str(W_k.shape)}"
        )
    return scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)


def _count(value, name: str, smallest: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < smallest:
        raise ValueError(f"{name} must be at least {smallest}, got {value}")
    return int(value)


def score_variance(d_k, n_samples, seed):
    """The sample variance of ``q·k`` over ``n_samples`` pairs of standard normal vectors
    of length ``d_k``, drawn with ``np.random.default_rng(seed)`` (q first, then k, each
    of shape ``[n_samples, d_k]``). It is about ``d_k``: each of the d_k products
    ``q_i k_i`` has variance 1, and they add.
    """
    d_k = _count(d_k, "d_k", 1)
    n_samples = _count(n_samples, "n_samples", 2)
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, d_k))
    k = rng.standard_normal((n_samples, d_k))
    return float(np.var(np.sum(q * k, axis=-1)))
