"""Lesson 08: the input checks that the notebook's given lines call (the reference calls
the same ones), so that a learner's function and the reference reject a bad input with
the same words.

Tokens are rows: ``x: [..., T, d]``, one position per row. Positions are whole numbers
(negative ones too: only differences of positions matter to RoPE's scores).
"""
from __future__ import annotations

import numbers

import numpy as np

from grader.learner.validation import as_array, shape_str


def _whole(x, name: str) -> int:
    """``x`` as a Python int, or a ``ValueError`` naming ``name``: NumPy integers are
    accepted; booleans, floats and anything else are not."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Integral):
        raise ValueError(f"{name} must be a whole number, got {x!r} of type {type(x).__name__}")
    return int(x)


def position_sizes(T, d) -> tuple[int, int]:
    """``(T, d)`` for a table of positions: T rows (0 or more) of d features, d even and
    positive, since the features come in (sin, cos) pairs."""
    T, d = _whole(T, "T"), _whole(d, "d")
    if T < 0:
        raise ValueError(f"T is the number of positions and cannot be negative, got T = {T}")
    if d <= 0:
        raise ValueError(f"d is the number of features and must be positive, got d = {d}")
    if d % 2:
        raise ValueError(f"d must be even, since the features come in (sin, cos) pairs; "
                         f"got d = {d}, which is odd")
    return T, d


def _base(base) -> float:
    if isinstance(base, (bool, np.bool_)) or not isinstance(base, numbers.Real) or \
            not np.isfinite(base) or base <= 0:
        raise ValueError(f"base must be a positive number, got {base!r}")
    return float(base)


def _positions(positions, T: int, name: str) -> np.ndarray:
    """One whole number per row: a 1-D int64 array of length ``T``."""
    try:
        p = np.asarray(positions)
    except (TypeError, ValueError) as exc:  # ragged lists, for example
        raise ValueError(f"{name} could not be read as an array: {exc}") from None
    if p.ndim != 1:
        raise ValueError(f"{name} must be 1-D, one position per row, got shape "
                         f"{shape_str(p.shape)}")
    if len(p) != T:
        raise ValueError(f"{name} must hold one position per row: the input has T = {T} "
                         f"rows, but {name} has {len(p)} entries")
    whole = np.issubdtype(p.dtype, np.integer) or (
        np.issubdtype(p.dtype, np.floating) and bool(np.all(np.isfinite(p)))
        and bool(np.all(p == np.round(p))))
    if p.dtype == bool or not whole:
        shown = p.tolist() if p.size <= 8 else f"{p[:8].tolist()[:-1]} ..."
        raise ValueError(f"{name} must hold whole numbers (token positions), got {shown}")
    return p.astype(np.int64)


def _rows_of_pairs(x, name: str) -> np.ndarray:
    """``x: [..., T, d]`` as a float array, with d even and positive."""
    x = as_array(x, name, min_ndim=2)
    d = x.shape[-1]
    if d == 0 or d % 2:
        raise ValueError(f"the last axis of {name} (d, the features) must be even and "
                         f"positive, since RoPE turns pairs of features; got {name} of shape "
                         f"{shape_str(x.shape)}")
    return x


def rope_inputs(x, positions, base=10000.0) -> tuple[np.ndarray, np.ndarray, float]:
    """``(x, positions, base)`` for RoPE: ``x: [..., T, d]`` as a float array (float32
    stays float32), ``positions`` as T whole numbers (int64), ``base`` as a float; or a
    ``ValueError`` that names what does not fit."""
    x = _rows_of_pairs(x, "x")
    return x, _positions(positions, x.shape[-2], "positions"), _base(base)


def rope_score_inputs(Q, K, positions_q, positions_k, base=10000.0):
    """``(Q, K, positions_q, positions_k, base)`` for RoPE's scores: ``Q: [..., T_q, d]``
    and ``K: [..., T_k, d]`` with the same even d and batch axes that broadcast, one
    whole position per query and per key; or a ``ValueError`` that names what does not
    fit."""
    Q, K = _rows_of_pairs(Q, "Q"), _rows_of_pairs(K, "K")
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d, got Q of shape "
                         f"{shape_str(Q.shape)} and K of shape {shape_str(K.shape)}")
    try:
        np.broadcast_shapes(Q.shape[:-2], K.shape[:-2])
    except ValueError:
        raise ValueError(f"the batch axes (all but the last two) of Q {shape_str(Q.shape)} "
                         f"and K {shape_str(K.shape)} do not broadcast") from None
    return (Q, K, _positions(positions_q, Q.shape[-2], "positions_q"),
            _positions(positions_k, K.shape[-2], "positions_k"), _base(base))
