"""Lesson 04: masks for attention, causal and padding, and what they do to the softmax.

Conventions (COURSE.md): tokens are rows, ``Q: [..., T_q, d_k]``, ``K: [..., T_k, d_k]``,
``V: [..., T_k, d_v]``; a boolean mask has True where a query *may attend* to a key, the
same polarity as ``torch.nn.functional.scaled_dot_product_attention``. The one exception
is :func:`to_mha_key_padding_mask`, which builds ``nn.MultiheadAttention``'s
``key_padding_mask`` where True means *ignore*.

This module is self-contained: its softmax and scaling are private helpers here, so the
lesson does not depend on lesson 02's code. torch is imported only where a torch tensor
is the result.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ...learner.validation import as_array, bool_mask, lengths_array, positive_int, shape_str

__all__ = [
    "causal_mask",
    "padding_mask",
    "attention_mask",
    "masked_softmax",
    "masked_attention",
    "causal_mask_columns",
    "to_mha_key_padding_mask",
    "prefix_average",
    "is_causal",
]

CAUSAL_ATOL = 1e-9  # how much an earlier output may move before is_causal calls it a leak


# ----------------------------------------------------------------------------- masks

def causal_mask(T):
    """``[T, T]`` bool: True where key j ≤ query i (a token sees itself and the past)."""
    T = positive_int(T, "T")
    return np.tril(np.ones((T, T), dtype=bool))


def padding_mask(lengths, T):
    """``[B, T]`` bool: True at the real tokens of each sentence, False at its padding.

    Sentence b has ``lengths[b]`` real tokens followed by padding (right padding).
    """
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return np.arange(T)[None, :] < lengths[:, None]


def attention_mask(lengths, T, causal=True):
    """``[B, T, T]`` bool: query i of sentence b may attend to key j.

    Padding masks *keys* (columns): no query looks at a padding token. With
    ``causal=True`` the causal mask is combined with it by broadcasting:
    ``padding[:, None, :] & causal[None, :, :]``.
    """
    if not isinstance(causal, (bool, np.bool_)):
        raise ValueError(f"causal must be True or False, got {causal!r}")
    keys = padding_mask(lengths, T)[:, None, :]          # [B, 1, T]: one row for every query
    if not causal:
        return np.broadcast_to(keys, (keys.shape[0], T, T)).copy()
    return keys & causal_mask(T)[None, :, :]


def causal_mask_columns(T):
    """The causal mask in the column convention (tokens are columns, as in lesson 03).

    Entry ``[i, j]`` pairs key i with query j, so it is True where i ≤ j: the transpose of
    :func:`causal_mask`, upper triangular. The entries below the diagonal are masked.
    """
    T = positive_int(T, "T")
    return np.triu(np.ones((T, T), dtype=bool))


def to_mha_key_padding_mask(lengths, T):
    """``torch.bool`` tensor ``[B, T]`` for ``nn.MultiheadAttention(key_padding_mask=...)``.

    That argument has the *opposite* polarity of this course: True means "ignore this key".
    So it is True at the padding and False at the real tokens.
    """
    import torch

    return torch.from_numpy(~padding_mask(lengths, T))


# ----------------------------------------------------------------------------- softmax, attention

def _shifted_max(x: np.ndarray) -> np.ndarray:
    """Row maxima for a stable softmax; 0 for a row that is all −∞ (no allowed key)."""
    top = np.max(x, axis=-1, keepdims=True)
    return np.where(np.isfinite(top), top, 0.0).astype(x.dtype)


def masked_softmax(scores, mask):
    """Softmax over the last axis (the keys) where masked scores are −∞ *before* the softmax.

    ``mask`` is bool, True = may attend, and broadcasts to ``scores``. A row with no
    allowed key returns all zeros, never NaN.
    """
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    filled = np.where(mask, scores, -np.inf).astype(scores.dtype)
    e = np.exp(filled - _shifted_max(filled))     # exp(−∞) = 0 exactly
    total = e.sum(axis=-1, keepdims=True)
    # 0 / 0 in a fully masked row: give zeros instead of NaN.
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def _qkv(Q, K, V) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(
            f"Q and K must have the same last axis (d_k), got Q of shape {shape_str(Q.shape)} "
            f"and K of shape {shape_str(K.shape)}"
        )
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(
            f"K and V must have one row per key (the same T_k), got K of shape "
            f"{shape_str(K.shape)} and V of shape {shape_str(V.shape)}"
        )
    try:
        np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    except ValueError:
        raise ValueError(
            f"the batch axes of Q {shape_str(Q.shape)}, K {shape_str(K.shape)} and V "
            f"{shape_str(V.shape)} do not broadcast"
        ) from None
    return Q, K, V


def masked_attention(Q, K, V, mask=None):
    """Scaled dot-product attention with a boolean mask (True = may attend).

    Returns ``(output [..., T_q, d_v], weights [..., T_q, T_k])``. ``mask`` broadcasts to
    ``[..., T_q, T_k]``; ``None`` means no mask. A query with no allowed key gets zero
    weights and a zero output row.
    """
    Q, K, V = _qkv(Q, K, V)
    scores = np.matmul(Q, np.swapaxes(K, -1, -2)) / np.sqrt(Q.shape[-1]).astype(Q.dtype)
    if mask is None:
        mask = np.ones(scores.shape[-2:], dtype=bool)
    mask = bool_mask(mask, scores.shape)
    weights = masked_softmax(scores, mask)
    return np.matmul(weights, V), weights


# ----------------------------------------------------------------------------- prefix average

def prefix_average(X):
    """Row i of the result is the mean of rows 0..i of X, as one matrix product ``W @ X``.

    ``W`` is lower triangular with each row normalised to sum to 1 (row i holds
    ``1 / (i + 1)`` in its first i + 1 entries): the row view of lesson 01, where output
    row i mixes the rows of X with the weights in row i of W. ``X: [..., T, d]``.
    """
    X = as_array(X, "X", min_ndim=2)
    T = X.shape[-2]
    W = np.tril(np.ones((T, T), dtype=X.dtype))
    W /= W.sum(axis=-1, keepdims=True)
    return np.matmul(W, X)


# ----------------------------------------------------------------------------- the causal property

def is_causal(attend: Callable, T, d, seed=0) -> bool:
    """True if changing future tokens never changes an earlier output of ``attend``.

    ``attend`` maps a sequence ``X: [T, d]`` (one token per row) to outputs ``[T, ...]``
    (one per token). The test, over random inputs drawn from ``seed``: draw X; for every
    position t, replace the tokens after t (rows t+1 onwards) with new random rows and
    compare outputs 0..t with the originals. Any change larger than ``CAUSAL_ATOL``
    (absolute, plus 1e-9 relative) means the future leaked into the past: return False.
    Token t itself is never changed, because output t may depend on it.
    """
    if not callable(attend):
        raise ValueError(f"attend must be a function of X [T, d], got {type(attend).__name__}")
    T = positive_int(T, "T")
    d = positive_int(d, "d")
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, d))
    before = np.asarray(attend(X), dtype=float)
    if before.ndim < 1 or before.shape[0] != T:
        raise ValueError(
            f"attend must return one output per token (shape [T, ...] with T = {T}), got shape "
            f"{shape_str(before.shape)}"
        )
    for t in range(T - 1):
        changed = X.copy()
        changed[t + 1:] = rng.normal(size=(T - t - 1, d))
        after = np.asarray(attend(changed), dtype=float)
        if not np.allclose(after[: t + 1], before[: t + 1], rtol=1e-9, atol=CAUSAL_ATOL):
            return False
    return True
