"""Lesson 07: the input checks the notebook's given lines call (the reference uses the same
ones), the experiments' measurements, and the figures.

Tokens are rows; causal means key j may be seen by query i when j <= i (lesson 04).
Every figure function returns its figure, so that a notebook shows it and a test can save
it. The measurements use ``grader.learner.env.peak_bytes`` (Python's ``tracemalloc``) for
memory and ``courseware.timing.median_seconds`` for time.
"""
from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle

from grader.learner.env import grading, peak_bytes
from grader.learner.validation import as_array, as_matrix, shape_str

from .figures import HIGHLIGHT, RESULT, WEIGHT

SKIPPED = "#d9d9d9"


# ----------------------------------------------------------------------------- input checks

def score_blocks(scores_blocks):
    """Each block of one row of scores, checked as it is read: a non-empty 1-D float
    array with no NaN or +inf. A generator, so the blocks are read once, in order; it
    raises ``ValueError`` at the end if there was no block at all."""
    if isinstance(scores_blocks, (str, bytes, dict)) or not hasattr(scores_blocks, "__iter__"):
        raise ValueError(f"scores_blocks must be a list of 1-D blocks of scores, got "
                         f"{type(scores_blocks).__name__}")
    if isinstance(scores_blocks, np.ndarray) and scores_blocks.ndim < 2:
        raise ValueError(f"scores_blocks must be a list of blocks, got one array of shape "
                         f"{shape_str(scores_blocks.shape)}: put it in a list to make it one block")
    count = 0
    for i, block in enumerate(scores_blocks):
        b = as_array(block, f"block {i} of scores_blocks", ndim=1)
        if b.size == 0:
            raise ValueError(f"block {i} of scores_blocks is empty: every block holds at least "
                             f"one score")
        bad = "NaN" if np.isnan(b).any() else "+inf" if np.isposinf(b).any() else ""
        if bad:
            raise ValueError(f"block {i} of scores_blocks holds {bad}, which is not a score a "
                             f"softmax can weigh")
        count += 1
        yield b
    if not count:
        raise ValueError("scores_blocks holds no block: there is no score to take the softmax of")


def one_query(q, K, V):
    """``q: [d_k]``, ``K: [T_k, d_k]``, ``V: [T_k, d_v]`` as float arrays (NumPy arrays
    are not copied), or a ``ValueError`` that names what does not fit."""
    q = as_array(q, "q", ndim=1)
    K = as_array(K, "K", ndim=2)
    V = as_array(V, "V", ndim=2)
    if K.shape[1] != q.shape[0]:
        raise ValueError(f"q has d_k = {q.shape[0]} features but the keys in K (shape "
                         f"{shape_str(K.shape)}) have {K.shape[1]}")
    if K.shape[0] != V.shape[0]:
        raise ValueError(f"K and V must have one row per key (the same T_k), got K of shape "
                         f"{shape_str(K.shape)} and V of shape {shape_str(V.shape)}")
    if K.shape[0] == 0:
        raise ValueError(f"K has no keys (shape {shape_str(K.shape)}): there is nothing to "
                         f"attend to")
    return q, K, V


def tile_inputs(Q, K, V, causal):
    """``(Q, K, V, batch)`` for tiled attention: ``Q: [..., T_q, d_k]``, ``K: [..., T_k,
    d_k]``, ``V: [..., T_k, d_v]`` as float arrays, and the broadcast batch shape. With
    ``causal=True`` there must be as many queries as keys."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis (d_k), got Q of shape "
                         f"{shape_str(Q.shape)} and K of shape {shape_str(K.shape)}")
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V must have one row per key (the same T_k), got K of shape "
                         f"{shape_str(K.shape)} and V of shape {shape_str(V.shape)}")
    if K.shape[-2] == 0 or Q.shape[-2] == 0:
        raise ValueError(f"Q and K need at least one row each, got Q of shape "
                         f"{shape_str(Q.shape)} and K of shape {shape_str(K.shape)}")
    try:
        batch = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    except ValueError:
        raise ValueError(f"the batch axes of Q {shape_str(Q.shape)}, K {shape_str(K.shape)} and "
                         f"V {shape_str(V.shape)} do not broadcast") from None
    if not isinstance(causal, (bool, np.bool_)):
        raise ValueError(f"causal must be True or False, got {causal!r}")
    if causal and Q.shape[-2] != K.shape[-2]:
        raise ValueError(f"causal=True needs as many queries as keys (query i sees keys 0..i), "
                         f"got T_q = {Q.shape[-2]} and T_k = {K.shape[-2]}")
    return Q, K, V, batch


def _rows(x, name: str, what: str) -> np.ndarray:
    x = as_array(x, name)
    if x.ndim == 1:
        x = x[None, :]
    if x.ndim != 2:
        raise ValueError(f"{name} must be one {what} [d] or a block of them [n, d], got shape "
                         f"{shape_str(x.shape)}")
    if x.size == 0:
        raise ValueError(f"{name} has no entries (shape {shape_str(x.shape)})")
    return x


def key_value_rows(k, v):
    """``k`` and ``v`` as blocks of rows ``[n, d_k]`` and ``[n, d_v]``: one key ``[d_k]``
    becomes a block of one. ``ValueError`` unless there is one value per key."""
    k, v = _rows(k, "k", "key"), _rows(v, "v", "value")
    if k.shape[0] != v.shape[0]:
        raise ValueError(f"k holds {k.shape[0]} key(s) but v holds {v.shape[0]} value(s): the "
                         f"cache keeps one value per key")
    return k, v


def decode_inputs(x_t, cache, W_q, W_k, W_v):
    """``(x_t, W_q, W_k, W_v)`` for a decoding step, checked: ``x_t`` one token
    ``[d_model]`` or a block of new tokens ``[n, d_model]``, the projections ``[d_model,
    d_k]``, ``[d_model, d_k]``, ``[d_model, d_v]``, and a cache with ``append``,
    ``keys``, ``values`` and ``len``."""
    x = as_array(x_t, "x_t")
    if x.ndim not in (1, 2):
        raise ValueError(f"x_t must be one token [d_model] or a block of new tokens "
                         f"[n, d_model], got shape {shape_str(x.shape)}")
    W_q, W_k, W_v = as_matrix(W_q, "W_q"), as_matrix(W_k, "W_k"), as_matrix(W_v, "W_v")
    for name, W in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v)):
        if W.shape[0] != x.shape[-1]:
            raise ValueError(f"x_t has d_model = {x.shape[-1]} features but {name} has shape "
                             f"{shape_str(W.shape)} ({W.shape[0]} rows)")
    if W_q.shape[1] != W_k.shape[1]:
        raise ValueError(f"queries and keys must have the same width d_k, got W_q of shape "
                         f"{shape_str(W_q.shape)} and W_k of shape {shape_str(W_k.shape)}")
    if not all(hasattr(type(cache), name) for name in ("append", "keys", "values", "__len__")):
        raise ValueError(f"cache must be a KVCache (with append, keys, values and len), got "
                         f"{type(cache).__name__}")
    return x, W_q, W_k, W_v
