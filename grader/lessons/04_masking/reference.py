"""Lesson 04: masks for attention, causal and padding, and what they do to the softmax.

Conventions (COURSE.md): tokens are rows, ``Q: [..., T_q, d_k]``, ``K: [..., T_k, d_k]``,
``V: [..., T_k, d_v]``; a boolean mask has True where a query *may attend* to a key, the
same polarity as ``torch.nn.functional.scaled_dot_product_attention``. The one exception
is :func:`to_mha_key_padding_mask`, which builds ``nn.MultiheadAttention``'s
``key_padding_mask`` where True means *ignore*.

Each graded function calls a private core with the right settings. The core's keyword
knobs are the places where this lesson's mistakes happen (which triangle, which polarity,
the fill value, when the mask is applied, the axis of the softmax, which tokens
``is_causal`` changes); the lesson's catalogued mistakes (``exercises.py``) are the same
cores with one knob set wrong.

This module is self-contained: its softmax is a private helper here, so the lesson does
not depend on lesson 02's code. torch is imported only where a torch tensor is the result.
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

def _causal(T, *, with_diagonal=True, ahead=0, columns=False, invert=False, dtype=bool):
    """The causal mask, ``[T, T]``: query i may attend to key j when j ≤ i.

    ``with_diagonal``: a token sees itself; ``ahead``: how many keys after its own a query
    also sees; ``columns``: tokens as columns (the transpose); ``invert``: True where
    attention is forbidden; ``dtype``: the mask's dtype.
    """
    T = positive_int(T, "T")
    mask = np.tri(T, T, ahead if with_diagonal else ahead - 1, dtype=bool)
    if columns:
        # site: the mask for tokens as columns
        mask = np.ascontiguousarray(mask.T)
    if invert:
        mask = ~mask
    return mask.astype(dtype, copy=False)


def causal_mask(T):
    """``[T, T]`` bool: True where key j ≤ query i (a token sees itself and the past)."""
    return _causal(T)


def causal_mask_columns(T):
    """The causal mask in the column convention (tokens are columns, as in lesson 03).

    Entry ``[i, j]`` pairs key i with query j, so it is True where i ≤ j: the transpose of
    :func:`causal_mask`, upper triangular. The entries below the diagonal are masked.
    """
    return _causal(T, columns=True)


def _padding(lengths, T, *, extra_real=0, padded_on="right", transposed=False, invert=False,
             dtype=bool):
    """``[B, T]``: True at the real tokens of each sentence.

    ``extra_real``: how many padding positions also count as real; ``padded_on``: which
    end of a sentence the padding is on; ``transposed``: ``[T, B]`` instead; ``invert``:
    True at the padding; ``dtype``: the mask's dtype.
    """
    T = positive_int(T, "T")
    # site: the column of lengths
    lengths = lengths_array(lengths, T)[:, None]
    positions = np.arange(T)[None, :]
    if padded_on == "right":
        real = positions < lengths + extra_real
    else:
        real = positions >= T - lengths
    if transposed:
        real = np.ascontiguousarray(real.T)
    if invert:
        real = ~real
    return real.astype(dtype, copy=False)


def padding_mask(lengths, T):
    """``[B, T]`` bool: True at the real tokens of each sentence, False at its padding.

    Sentence b has ``lengths[b]`` real tokens followed by padding (right padding).
    """
    return _padding(lengths, T)


def _attention_mask(lengths, T, causal=True, *, padding_on="keys", combine="and",
                    always_causal=False, invert=False, **causal_knobs):
    """``[B, T, T]``: key padding, with the causal mask if ``causal``.

    ``padding_on``: what padding masks (the keys, the queries, or both); ``combine``: how
    padding and the causal mask are joined ("and" or "or"); ``always_causal``: ignore
    ``causal=False``; ``invert``: True where attention is forbidden; ``causal_knobs`` go
    to the causal mask.
    """
    if not isinstance(causal, (bool, np.bool_)):
        raise ValueError(f"causal must be True or False, got {causal!r}")
    pad = _padding(lengths, T)
    B, T = pad.shape
    # site: the key-padding mask
    padded = {"keys": pad[:, None, :],                       # [B, 1, T]: the same for every query
              "queries": pad[:, :, None],
              "both": pad[:, None, :] & pad[:, :, None]}[padding_on]
    padded = np.broadcast_to(padded, (B, T, T))
    if causal or always_causal:
        future = _causal(T, **causal_knobs)[None, :, :]
        mask = padded & future if combine == "and" else padded | future
    else:
        mask = padded.copy()
    return ~mask if invert else mask


def attention_mask(lengths, T, causal=True):
    """``[B, T, T]`` bool: query i of sentence b may attend to key j.

    Padding masks *keys* (columns): no query looks at a padding token. With
    ``causal=True`` the causal mask is combined with it by broadcasting:
    ``padding[:, None, :] & causal[None, :, :]``.
    """
    return _attention_mask(lengths, T, causal)


def _key_padding(lengths, T, *, true_at="padding", as_tensor=True, **padding_knobs):
    """``[B, T]`` for ``nn.MultiheadAttention``: ``true_at`` names where it is True (torch
    ignores those keys); ``as_tensor``: a torch tensor, not a NumPy array; ``padding_knobs``
    go to the padding mask (``dtype`` among them)."""
    mask = _padding(lengths, T, invert=true_at == "padding", **padding_knobs)
    if not as_tensor:
        return mask
    import torch

    return torch.from_numpy(mask)


def to_mha_key_padding_mask(lengths, T):
    """``torch.bool`` tensor ``[B, T]`` for ``nn.MultiheadAttention(key_padding_mask=...)``.

    That argument has the *opposite* polarity of this course: True means "ignore this key".
    So it is True at the padding and False at the real tokens.
    """
    return _key_padding(lengths, T)


# ----------------------------------------------------------------------------- softmax, attention

def _masked_softmax(scores, mask, *, fill=-np.inf, true_means="attend", mask_applied="before",
                    axis=-1, shift=True, guard_empty_rows=True):
    """A softmax over ``axis`` of ``scores`` where ``mask`` allows.

    ``fill``: what a masked score becomes before the softmax; ``true_means``: "attend" or
    "ignore"; ``mask_applied``: "before" the softmax (to the scores), or "after" it (the
    weights of an unmasked softmax times the mask), or "after, renormalised" (then divided
    by the new row sums); ``shift``: subtract the row maximum before ``np.exp``;
    ``guard_empty_rows``: a row with no allowed key gives zeros (shift by 0 there, divide
    only where the sum is positive).
    """
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    allowed = mask if true_means == "attend" else ~mask
    # The errors are ignored for the knobs' sake: with the right settings none occurs.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        before = mask_applied == "before"
        x = np.where(allowed, scores, fill).astype(scores.dtype) if before else scores
        # site: the shift of the scores
        top = np.max(x, axis=axis, keepdims=True) if shift else np.zeros((), x.dtype)
        if guard_empty_rows:
            top = np.where(np.isfinite(top), top, 0.0).astype(x.dtype)
        # site: the exponentials of the scores
        e = np.exp(x - top)                       # exp(−∞) = 0 exactly
        # site: the denominator of the softmax
        total = e.sum(axis=axis, keepdims=True)
        if guard_empty_rows:                      # 0 / 0 in a fully masked row: zeros, not NaN
            # site: the division of the exponentials by their sum
            weights = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
        else:
            weights = e / total
        if not before:
            weights = weights * allowed
        if mask_applied == "after, renormalised":
            weights = weights / weights.sum(axis=axis, keepdims=True)
    return weights


def masked_softmax(scores, mask):
    """Softmax over the last axis (the keys) where masked scores are −∞ *before* the softmax.

    ``mask`` is bool, True = may attend, and broadcasts to ``scores``. A row with no
    allowed key returns all zeros, never NaN.
    """
    return _masked_softmax(scores, mask)


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


def _masked_attention(Q, K, V, mask=None, *, scaled=True, use_mask=True,
                      none_means_no_mask=True, **softmax_knobs):
    """``(output, weights)`` of scaled dot-product attention with a boolean mask.

    ``scaled``: divide the scores by √d_k; ``use_mask``: apply the mask at all;
    ``none_means_no_mask``: ``mask=None`` becomes a mask of all True (else it is handed on
    as it is); ``softmax_knobs`` go to the masked softmax.
    """
    Q, K, V = _qkv(Q, K, V)
    # site: the product of the queries and the keys
    scores = np.matmul(Q, np.swapaxes(K, -1, -2))
    if scaled:
        # site: the scaled scores
        scores = scores / np.sqrt(Q.shape[-1]).astype(Q.dtype)
    if (mask is None and none_means_no_mask) or not use_mask:
        # site: the mask that allows every key
        mask = np.ones(scores.shape[-2:], dtype=bool)
    weights = _masked_softmax(scores, mask, **softmax_knobs)
    # site: the weighted sum of the rows of V
    return np.matmul(weights, V), weights


def masked_attention(Q, K, V, mask=None):
    """Scaled dot-product attention with a boolean mask (True = may attend).

    Returns ``(output [..., T_q, d_v], weights [..., T_q, T_k])``. ``mask`` broadcasts to
    ``[..., T_q, T_k]``; ``None`` means no mask. A query with no allowed key gets zero
    weights and a zero output row.
    """
    return _masked_attention(Q, K, V, mask)


# ----------------------------------------------------------------------------- prefix average

def _prefix_average(X, *, looks_ahead=False, with_diagonal=True, normalise="rows"):
    """``W @ X`` with a triangular ``W``: lower (``looks_ahead``: upper), with or without
    its diagonal, divided by its row sums ("rows"), its column sums ("columns"), by T
    ("T"), or not at all (None)."""
    X = as_array(X, "X", min_ndim=2)
    T = X.shape[-2]
    W = np.tri(T, T, 0 if with_diagonal else -1, dtype=X.dtype)
    if looks_ahead:
        W = np.ascontiguousarray(W.T)
    with np.errstate(invalid="ignore", divide="ignore"):  # an empty row of W, without its diagonal
        if normalise == "rows":
            # site: the row normalisation of W
            W = W / W.sum(axis=-1, keepdims=True)
        elif normalise == "columns":
            W = W / W.sum(axis=0, keepdims=True)
        elif normalise == "T":
            W = W / W.dtype.type(T)
    # site: the product of W and X
    return np.matmul(W, X)


def prefix_average(X):
    """Row i of the result is the mean of rows 0..i of X, as one matrix product ``W @ X``.

    ``W`` is lower triangular with each row normalised to sum to 1 (row i holds
    ``1 / (i + 1)`` in its first i + 1 entries): the row view of lesson 01, where output
    row i mixes the rows of X with the weights in row i of W. ``X: [..., T, d]``.
    """
    return _prefix_average(X)


# ----------------------------------------------------------------------------- the causal property

ROWS = {  # which rows of X (tokens) or of the output, for a position t
    "after t": lambda t: slice(t + 1, None),
    "t onwards": lambda t: slice(t, None),
    "up to t": lambda t: slice(None, t + 1),
    "all": lambda t: slice(None),
}


def _is_causal(attend: Callable, T, d, seed=0, *, change="after t", compare="up to t",
               every_t=True, last_t=False, redraw=True) -> bool:
    """Whether ``attend`` passes the causal test: for each position t (``every_t``, else
    only the last one, t = T − 2; ``last_t``: t = T − 1 as well, which has no token after
    it), replace the tokens ``change`` names with new random rows (``redraw``; else move
    them all by 1) and compare the outputs ``compare`` names with the originals."""
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
    # site: the loop over the positions t
    positions = range(T if last_t else T - 1)
    if not every_t:
        positions = positions[-1:]
    for t in positions:
        # site: the copy of the tokens
        changed = X.copy()
        rows = ROWS[change](t)
        changed[rows] = rng.normal(size=changed[rows].shape) if redraw else changed[rows] + 1
        after = np.asarray(attend(changed), dtype=float)
        kept = ROWS[compare](t)
        if not np.allclose(after[kept], before[kept], rtol=1e-9, atol=CAUSAL_ATOL):
            return False
    # site: the answer once every position passed
    return True


def is_causal(attend: Callable, T, d, seed=0) -> bool:
    """True if changing future tokens never changes an earlier output of ``attend``.

    ``attend`` maps a sequence ``X: [T, d]`` (one token per row) to outputs ``[T, ...]``
    (one per token). The test, over random inputs drawn from ``seed``: draw X; for every
    position t, replace the tokens after t (rows t+1 onwards) with new random rows and
    compare outputs 0..t with the originals. Any change larger than ``CAUSAL_ATOL``
    (absolute, plus 1e-9 relative) means the future leaked into the past: return False.
    Token t itself is never changed, because output t may depend on it.
    """
    return _is_causal(attend, T, d, seed)
