"""Lesson 03: self-attention by hand, in the column convention, with exact fractions.

Tokens are the *columns* of X. With integer weight matrices every step can be done on
paper, and with ``fractions.Fraction`` every step here is exact:

    Q = W_Q X,  K = W_K X,  V = W_V X          (d_k×T, d_k×T, d_v×T)
    scores = Kᵀ Q                              (T×T, entry [i, j] = k_i · q_j)
    scaled = floor(scores / 2)                 (stands in for scores / √3)
    A      = 3**scaled, each column divided by its sum   (stands in for softmax)
    Z      = V A                               (column j mixes the values with column j of A)

``row_convention_attention`` does the same with tokens as rows, as every other lesson
does, and each of its results is the transpose of the column-convention one.

Each graded function is a private core called with the right settings. The settings are
knobs: the lesson's catalogued mistakes are the same cores with one knob changed
(``exercises.py``), and the worksheet's mistakes are those cores run on the answer key.
The worksheets themselves (the given matrices, ``new_worksheet``) are the learner's side's
(``courseware.worksheet``); their answer keys are computed here.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from courseware.worksheet import Worksheet, published_worksheet

from ...learner.validation import as_fractions, shape_str

__all__ = [
    "key_query_scores",
    "floor_half",
    "softmax3_columns",
    "attention_by_hand",
    "row_convention_attention",
]


# ----------------------------------------------------------------------------- helpers

def _product(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """The exact product of two Fraction matrices: entry [i, j] = row i of A · column j of B."""
    if A.shape[1] != B.shape[0]:
        raise ValueError(f"a {shape_str(A.shape)} matrix times a {shape_str(B.shape)} matrix: "
                         f"the shapes do not fit a product")
    return np.array(
        [[sum((A[i, p] * B[p, j] for p in range(A.shape[1])), Fraction(0))
          for j in range(B.shape[1])] for i in range(A.shape[0])],
        dtype=object,
    ).reshape(A.shape[0], B.shape[1])


def _evaluate(formula: str, **matrices) -> np.ndarray:
    """The product that ``formula`` names, such as ``"Kᵀ Q"`` (a ``ᵀ`` transposes)."""
    # site: the scores
    left, right = (matrices[f[0]].T if f.endswith("ᵀ") else matrices[f[0]] for f in formula.split())
    return _product(left, right)


def _elementwise(fn, M: np.ndarray) -> np.ndarray:
    out = np.empty(M.shape, dtype=object)
    for idx in np.ndindex(M.shape):
        out[idx] = fn(M[idx])
    return out


def _projection_operands(X, W_Q, W_K, W_V, x_name: str, tokens_axis: int):
    """Validate the operands of the three projections and return them as Fractions."""
    X = as_fractions(X, x_name)
    W_Q, W_K, W_V = (as_fractions(W, n) for W, n in ((W_Q, "W_Q"), (W_K, "W_K"), (W_V, "W_V")))
    d_in = X.shape[1 - tokens_axis]
    for W, n in ((W_Q, "W_Q"), (W_K, "W_K"), (W_V, "W_V")):
        if W.shape[1] != d_in:
            feature = "rows" if tokens_axis == 1 else "columns"
            raise ValueError(
                f"{n} has {W.shape[1]} columns (shape {shape_str(W.shape)}) but {x_name} has "
                f"{d_in} {feature} (shape {shape_str(X.shape)}), one per feature: they must match"
            )
    if W_Q.shape[0] != W_K.shape[0]:
        raise ValueError(
            f"W_Q and W_K must give queries and keys of the same size d_k, but W_Q has "
            f"{W_Q.shape[0]} rows (shape {shape_str(W_Q.shape)}) and W_K has {W_K.shape[0]} "
            f"(shape {shape_str(W_K.shape)})"
        )
    return X, W_Q, W_K, W_V


# ----------------------------------------------------------------------------- the cores

def _scores(K, Q, *, formula: str = "Kᵀ Q") -> np.ndarray:
    """The scores of keys and queries stored as columns, by ``formula``."""
    K = as_fractions(K, "K")
    Q = as_fractions(Q, "Q")
    if K.shape[0] != Q.shape[0]:
        raise ValueError(
            f"K and Q must have the same number of rows d_k (one entry per feature), got K of "
            f"shape {shape_str(K.shape)} and Q of shape {shape_str(Q.shape)}"
        )
    return _evaluate(formula, K=K, Q=Q)


# How a score s becomes the exponent of 3: the worksheet floors s/2; the others are the
# ways of getting it wrong that the lesson names, and real attention's s/√3.
SCALINGS = {
    "floor(s/2)": lambda s: Fraction(math.floor(s / 2)),
    "round(s/2)": lambda s: Fraction(round(s / 2)),  # Python rounds halves to even
    "floor(s/2 + 1/2)": lambda s: Fraction(math.floor(s / 2 + Fraction(1, 2))),  # halves up
    "sign(s)·floor(|s|/2 + 1/2)":  # halves away from zero
        lambda s: (1 if s >= 0 else -1) * SCALINGS["floor(s/2 + 1/2)"](abs(s)),
    "int(s/2)": lambda s: Fraction(int(s / 2)),  # toward zero
    "s/2": lambda s: s / 2,
    "s/√3": lambda s: float(s) / math.sqrt(3),
    "floor(float(s)/2)": lambda s: Fraction(math.floor(float(s) / 2)),  # through a float
}


def _scaled(S, *, scaling: str = "floor(s/2)") -> np.ndarray:
    """Every score scaled by ``scaling``: exact Fractions, or floats for ``s/√3``."""
    S = as_fractions(S, "S")
    out = _elementwise(SCALINGS[scaling], S)
    return out.astype(float) if any(isinstance(v, float) for v in out.flat) else out


NORMALISE_AXIS = {"columns": 0, "rows": 1, "matrix": None}


def _softmax3(S, *, base=3, normalise: str | None = "columns", keepdims=True) -> np.ndarray:
    """``base ** S``, divided by the sums that ``normalise`` names (``None``: not at all),
    kept as an axis (``keepdims``) or not: without it, NumPy lines the row sums up with
    the columns. A whole-number base keeps every entry an exact Fraction; a float base
    gives floats."""
    S = as_fractions(S, "S", whole=True)
    if isinstance(base, int):
        # site: the powers of 3
        powers = _elementwise(lambda s: Fraction(base) ** int(s), S)
    else:
        powers = float(base) ** S.astype(float)
    if normalise is None:
        return powers
    # site: the weights A
    return powers / powers.sum(axis=NORMALISE_AXIS[normalise], keepdims=keepdims)


# The settings of the two conventions. ``given`` names the input and how it holds the
# tokens (X: as columns, X_rows: as rows); ``tokens``, how every result holds them.
COLUMN_CONVENTION = {"given": "X", "tokens": "columns", "scores": "Kᵀ Q",
                     "normalise": "columns", "mix": "V A"}
ROW_CONVENTION = {"given": "X_rows", "tokens": "rows", "scores": "Q Kᵀ",
                  "normalise": "rows", "mix": "A V"}


def _steps(X, W_Q, W_K, W_V, *, given: str, tokens: str, scores: str, normalise: str,
           mix: str, scaling: str = "floor(s/2)", keepdims: bool = True,
           powers_of: str = "scaled") -> dict:
    """Every step of the worksheet, with the settings of one convention; ``keepdims`` is
    that of the sums A is normalised by, and ``powers_of`` names the step A raises 3 to
    the power of (``"scaled"``, or ``"scores"``: the unscaled scores)."""
    X, W_Q, W_K, W_V = _projection_operands(X, W_Q, W_K, W_V, given,
                                            tokens_axis=1 if given == "X" else 0)
    X_columns = X if given == "X" else X.T
    if tokens == "columns":
        # site: the queries
        Q = _product(W_Q, X_columns)
        # site: the keys
        K = _product(W_K, X_columns)
        # site: the values
        V = _product(W_V, X_columns)
    else:
        # site: the queries, keys and values
        Q, K, V = (_product(X_columns.T, W.T) for W in (W_Q, W_K, W_V))
    # site: the scores
    S = _evaluate(scores, K=K, Q=Q)
    # site: the scaled scores
    scaled = _scaled(S, scaling=scaling)
    # site: the weights A
    A = _softmax3(scaled if powers_of == "scaled" else S, normalise=normalise, keepdims=keepdims)
    # site: the output Z
    Z = _evaluate(mix, V=V, A=A)
    # site: the returned steps
    return {"Q": Q, "K": K, "V": V, "scores": S, "scaled": scaled, "A": A, "Z": Z}


# ----------------------------------------------------------------------------- the references

def key_query_scores(K, Q):
    """``Kᵀ Q`` for keys and queries stored as columns: entry ``[i, j]`` is ``k_i · q_j``.

    ``K: d_k×T_k``, ``Q: d_k×T_q`` (ints, Fractions or floats) -> ``T_k×T_q`` Fractions.
    Column j holds the scores of query j against every key.
    """
    return _scores(K, Q)


def floor_half(S):
    """``floor(S / 2)`` entry by entry, exactly: the hand-friendly stand-in for ``S / √3``.

    Floor goes down, also for negative numbers: ``floor(-1/2) = -1`` and
    ``floor(-3/2) = -2``. Returns whole-number Fractions, so that ``3 ** result`` stays exact.
    """
    return _scaled(S)


def softmax3_columns(S):
    """``3 ** S``, with every column divided by its sum: each column becomes weights that
    are positive and sum to exactly 1. ``S`` must hold whole numbers."""
    return _softmax3(S)


def attention_by_hand(X, W_Q, W_K, W_V):
    """Every step of the worksheet, exactly, with tokens as the columns of X.

    ``X: d_in×T``, ``W_Q, W_K: d_k×d_in``, ``W_V: d_v×d_in``. Returns a dict with the keys
    ``Q, K, V, scores, scaled, A, Z`` (in that order), each an object array of Fractions:
    ``scores = Kᵀ Q``, ``scaled = floor(scores / 2)``, ``A = softmax3_columns(scaled)`` and
    ``Z = V A``.
    """
    return _steps(X, W_Q, W_K, W_V, **COLUMN_CONVENTION)


def row_convention_attention(X_rows, W_Q, W_K, W_V):
    """The same computation with tokens as the *rows* of ``X_rows`` (``T×d_in``), as in
    PyTorch and every other lesson. The weights are the same ``d×d_in`` matrices.

    ``Q = X_rows W_Qᵀ`` (one query per row), ``scores = Q Kᵀ`` (entry ``[i, j]`` is
    ``q_i · k_j``), ``scaled = floor(scores / 2)``, ``A`` normalises each *row* of
    ``3 ** scaled``, and ``Z = A V``. Every result is the transpose of
    ``attention_by_hand(X_rows.T, W_Q, W_K, W_V)``'s.
    """
    return _steps(X_rows, W_Q, W_K, W_V, **ROW_CONVENTION)


def answer_key(ws: Worksheet | None = None) -> dict:
    """The answer key of a worksheet (the published one if None): every step, exactly."""
    return attention_by_hand(*(ws or published_worksheet()).given)
