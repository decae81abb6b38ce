"""Lesson 08: where positions come from. The sinusoidal table of "Attention Is All You
Need", added to the tokens, and rotary position embedding (RoPE, RoFormer), which turns
queries and keys instead.

Conventions (COURSE.md): tokens are rows, ``x: [..., T, d]``; leading axes are batch
axes. Feature pair i is ``(2i, 2i + 1)`` and turns at the frequency
``theta_i = base^(-2i/d)``: the sinusoidal table holds ``sin(t theta_i)`` in feature 2i
and ``cos(t theta_i)`` in feature 2i + 1, and RoPE rotates pair i of row t by the angle
``positions[t] theta_i``, counterclockwise:
``(a, b) -> (a cos - b sin, a sin + b cos)``. Results keep float32 when ``x`` (or Q and
K) is float32; the sinusoidal table is float64.

As in the other lessons, each graded function calls a private core with keyword knobs,
and each catalogued mistake (``exercises.py``) is a core with one knob set wrong.
"""
from __future__ import annotations

import numpy as np

from courseware.positions import position_sizes, rope_inputs, rope_score_inputs

from ...learner.validation import result_dtype

__all__ = [
    "sinusoidal_positions",
    "rope",
    "rope_scores",
]

# The exponent e of theta_i = base^(-e) for pair i of d features: "2i/d" is the reference;
# the others are mistakes (the 2 dropped, 2i counted twice as when i is taken for the
# feature index 2i, or no division by d).
EXPONENTS = {
    "2i/d": lambda i, d: 2 * i / d,
    "i/d": lambda i, d: i / d,
    "4i/d": lambda i, d: 4 * i / d,
    "i": lambda i, d: i,
}


def _frequencies(d: int, base: float, exponent: str = "2i/d") -> np.ndarray:
    """``theta_i`` for the ``d // 2`` pairs, as float64."""
    i = np.arange(d // 2, dtype=np.float64)
    return float(base) ** -EXPONENTS[exponent](i, d)


def _place(first: np.ndarray, second: np.ndarray, layout: str) -> np.ndarray:
    """The features of each pair put in their places: ``"pairs"`` (pair i in features 2i and
    2i + 1) or ``"halves"`` (pair i in features i and i + d/2)."""
    d = 2 * first.shape[-1]
    out = np.zeros(first.shape[:-1] + (d,), dtype=np.result_type(first, second))
    if layout == "pairs":
        out[..., 0::2], out[..., 1::2] = first, second
    else:
        out[..., : d // 2], out[..., d // 2:] = first, second
    return out


def _split(x: np.ndarray, layout: str) -> tuple[np.ndarray, np.ndarray]:
    """The two features of every pair of ``x`` (see :func:`_place`)."""
    d = x.shape[-1]
    if layout == "pairs":
        return x[..., 0::2], x[..., 1::2]
    return x[..., : d // 2], x[..., d // 2:]


# ----------------------------------------------------------------------------- sinusoids

def _sinusoidal(T, d, *, start=0, first="sin", layout="pairs", exponent="2i/d", base=10000.0):
    """The table with its knobs. ``start``: the position of the first row; ``first``: the
    function in feature 2i (``"sin"``, or ``"cos"`` with sin in 2i + 1); ``layout``: see
    :func:`_place`; ``exponent``: see :data:`EXPONENTS`."""
    T, d = position_sizes(T, d)
    t = np.arange(start, start + T, dtype=np.float64)
    # site: the angles
    angles = t[:, None] * _frequencies(d, base, exponent)[None, :]
    sin, cos = np.sin(angles), np.cos(angles)
    return _place(sin, cos, layout) if first == "sin" else _place(cos, sin, layout)


def sinusoidal_positions(T, d):
    """The ``(T, d)`` table of "Attention Is All You Need": row t is the position t,
    ``PE[t, 2i] = sin(t / 10000^(2i/d))`` and ``PE[t, 2i + 1] = cos(t / 10000^(2i/d))``.

    Positions count from 0, so row 0 is ``[0, 1, 0, 1, ...]``. An odd or non-positive d,
    or a negative T, is a ``ValueError``; T = 0 gives an empty ``(0, d)`` table.
    """
    return _sinusoidal(T, d)


# ----------------------------------------------------------------------------- RoPE

def _rope(x, positions, base=10000.0, *, layout="pairs", exponent="2i/d", turn=1.0,
          trig="cos, sin", where="positions"):
    """RoPE with its knobs. ``layout``: which features make a pair (:func:`_place`);
    ``exponent``: see :data:`EXPONENTS`; ``turn``: +1 counterclockwise, -1 the other way;
    ``trig``: ``"cos, sin"`` for a rotation, ``"sin, cos"`` with the two functions
    exchanged; ``where``: the angle's position is ``positions[t]`` or the row's index t
    (``"index"``)."""
    x, positions, base = rope_inputs(x, positions, base)
    d, dtype = x.shape[-1], result_dtype(x)
    at = positions if where == "positions" else np.arange(x.shape[-2])
    # site: the angles
    angles = at[:, None].astype(np.float64) * _frequencies(d, base, exponent)[None, :]
    c, s = np.cos(angles).astype(dtype), (turn * np.sin(angles)).astype(dtype)
    if trig != "cos, sin":
        c, s = s, c
    a, b = _split(x, layout)
    # site: the turned pairs
    return _place(a * c - b * s, a * s + b * c, layout)


def rope(x, positions, base=10000.0):
    """Rotary position embedding of ``x: [..., T, d]`` (d even) at ``positions`` (T whole
    numbers): every pair ``(x[..., 2i], x[..., 2i + 1])`` of row t turned counterclockwise
    by the angle ``positions[t] * theta_i``, ``theta_i = base^(-2i/d)``. Lengths are kept:
    each pair is rotated, never stretched.
    """
    return _rope(x, positions, base)


def _rope_scores(Q, K, positions_q, positions_k, base=10000.0, *, rotate=rope, turned="both",
                 scaled=True):
    """The scores with their knobs. ``rotate``: the RoPE used; ``turned``: which of Q and
    K are rotated (``"both"``, ``"queries"``, ``"neither"``); ``scaled``: divided by sqrt(d)."""
    Q, K, positions_q, positions_k, base = rope_score_inputs(Q, K, positions_q, positions_k,
                                                             base)
    # site: the turned queries
    q = Q if turned == "neither" else rotate(Q, positions_q, base)
    # site: the turned keys
    k = rotate(K, positions_k, base) if turned == "both" else K
    # site: the scores
    scores = q @ np.swapaxes(k, -1, -2)
    dtype = result_dtype(Q, K)
    # site: the scale of the scores
    return scores / dtype.type(np.sqrt(Q.shape[-1])) if scaled else scores


def rope_scores(Q, K, positions_q, positions_k, base=10000.0):
    """``rope(Q, positions_q) @ rope(K, positions_k)ᵀ / sqrt(d)``: ``[..., T_q, d]`` and
    ``[..., T_k, d]`` -> ``[..., T_q, T_k]``, only the last two axes of K swapped, batch
    axes broadcast. Score (m, n) depends on the positions only through ``positions_q[m] -
    positions_k[n]``.
    """
    return _rope_scores(Q, K, positions_q, positions_k, base)
