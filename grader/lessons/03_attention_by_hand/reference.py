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
``new_worksheet(seed)`` draws practice problems whose arithmetic stays small.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ...learner.validation import as_fractions, shape_str

__all__ = [
    "key_query_scores",
    "floor_half",
    "softmax3_columns",
    "attention_by_hand",
    "row_convention_attention",
    "new_worksheet",
    "Worksheet",
]

STEPS = ("Q", "K", "V", "scores", "scaled", "A", "Z")

# The published worksheet: 4 tokens of dimension 6 (the columns of X) and 3×6 weights.
# Chosen so that every step fits on paper: Q, K and V hold -1..2, the scores run from -1
# to 6, the scaled scores from -1 to 3 (powers of 3 from 1/3 to 27), and the column sums
# are 32, 16/3, 16 and 14. One score is negative (floor(-1/2) = -1), some are odd (where
# rounding and floor disagree), and two columns have scores 0 and 1 that floor merges.
X = np.array([
    [1, 1, 0, 0],
    [1, 1, 0, 0],
    [1, 0, 1, 1],
    [0, 1, 0, 0],
    [0, 0, 1, 0],
    [0, 0, 0, 1],
])
W_Q = np.array([
    [1, 0, 1, 0, 0, 0],
    [1, 0, 0, 0, 0, 1],
    [0, 0, 1, 0, 1, 0],
])
W_K = np.array([
    [0, 1, 0, 1, 0, 0],
    [0, 0, 0, 1, -1, 1],
    [0, 1, 0, 0, 1, 0],
])
W_V = np.array([
    [0, 0, 1, 0, 1, 0],
    [0, 0, 1, 0, 0, 1],
    [0, 0, 0, 0, 1, 1],
])


# ----------------------------------------------------------------------------- helpers

def _product(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """The exact product of two Fraction matrices: entry [i, j] = row i of A · column j of B."""
    return np.array(
        [[sum((A[i, p] * B[p, j] for p in range(A.shape[1])), Fraction(0))
          for j in range(B.shape[1])] for i in range(A.shape[0])],
        dtype=object,
    ).reshape(A.shape[0], B.shape[1])


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


# ----------------------------------------------------------------------------- the steps

def key_query_scores(K, Q):
    """``Kᵀ Q`` for keys and queries stored as columns: entry ``[i, j]`` is ``k_i · q_j``.

    ``K: d_k×T_k``, ``Q: d_k×T_q`` (ints, Fractions or floats) -> ``T_k×T_q`` Fractions.
    Column j holds the scores of query j against every key.
    """
    K = as_fractions(K, "K")
    Q = as_fractions(Q, "Q")
    if K.shape[0] != Q.shape[0]:
        raise ValueError(
            f"K and Q must have the same number of rows d_k (one entry per feature), got K of "
            f"shape {shape_str(K.shape)} and Q of shape {shape_str(Q.shape)}"
        )
    return _product(K.T, Q)


def floor_half(S):
    """``floor(S / 2)`` entry by entry, exactly: the hand-friendly stand-in for ``S / √3``.

    Floor goes down, also for negative numbers: ``floor(-1/2) = -1`` and
    ``floor(-3/2) = -2``. Returns whole-number Fractions, so that ``3 ** result`` stays exact.
    """
    S = as_fractions(S, "S")
    return _elementwise(lambda s: Fraction(math.floor(s / 2)), S)


def softmax3_columns(S):
    """``3 ** S``, with every column divided by its sum: each column becomes weights that
    are positive and sum to exactly 1. ``S`` must hold whole numbers."""
    S = as_fractions(S, "S", whole=True)
    powers = _elementwise(lambda s: Fraction(3) ** int(s), S)
    sums = [sum(powers[:, j], Fraction(0)) for j in range(S.shape[1])]
    out = np.empty(S.shape, dtype=object)
    for i, j in np.ndindex(S.shape):
        out[i, j] = powers[i, j] / sums[j]
    return out


def attention_by_hand(X, W_Q, W_K, W_V):
    """Every step of the worksheet, exactly, with tokens as the columns of X.

    ``X: d_in×T``, ``W_Q, W_K: d_k×d_in``, ``W_V: d_v×d_in``. Returns a dict with the keys
    ``Q, K, V, scores, scaled, A, Z`` (in that order), each an object array of Fractions:
    ``scores = Kᵀ Q``, ``scaled = floor(scores / 2)``, ``A = softmax3_columns(scaled)`` and
    ``Z = V A``.
    """
    X, W_Q, W_K, W_V = _projection_operands(X, W_Q, W_K, W_V, "X", tokens_axis=1)
    Q, K, V = _product(W_Q, X), _product(W_K, X), _product(W_V, X)
    scores = key_query_scores(K, Q)
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    Z = _product(V, A)
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}


def row_convention_attention(X_rows, W_Q, W_K, W_V):
    """The same computation with tokens as the *rows* of ``X_rows`` (``T×d_in``), as in
    PyTorch and every other lesson. The weights are the same ``d×d_in`` matrices.

    ``Q = X_rows W_Qᵀ`` (one query per row), ``scores = Q Kᵀ`` (entry ``[i, j]`` is
    ``q_i · k_j``), ``scaled = floor(scores / 2)``, ``A`` normalises each *row* of
    ``3 ** scaled``, and ``Z = A V``. Every result is the transpose of
    ``attention_by_hand(X_rows.T, W_Q, W_K, W_V)``'s.
    """
    X_rows, W_Q, W_K, W_V = _projection_operands(X_rows, W_Q, W_K, W_V, "X_rows", tokens_axis=0)
    Q, K, V = _product(X_rows, W_Q.T), _product(X_rows, W_K.T), _product(X_rows, W_V.T)
    scores = _product(Q, K.T)
    scaled = floor_half(scores)
    A = softmax3_columns(scaled.T).T
    Z = _product(A, V)
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}


# ----------------------------------------------------------------------------- worksheets

@dataclass(frozen=True)
class Worksheet:
    """A by-hand problem (integer ``X``, ``W_Q``, ``W_K``, ``W_V``) and its answer ``key``:
    the dict of ``attention_by_hand``, every step exact."""

    X: np.ndarray
    W_Q: np.ndarray
    W_K: np.ndarray
    W_V: np.ndarray
    seed: int | None = None
    key: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "key", attention_by_hand(self.X, self.W_Q, self.W_K, self.W_V))

    @property
    def name(self) -> str:
        return "the published worksheet" if self.seed is None else f"practice worksheet {self.seed}"


def published_worksheet() -> Worksheet:
    return Worksheet(X.copy(), W_Q.copy(), W_K.copy(), W_V.copy())


# What "hand-friendly" means for new_worksheet; the tests check these over many seeds.
HAND_LIMITS = {
    "X": (0, 1),              # entries of X (2 or 3 features per token)
    "W": (-1, 1),             # entries of W_Q, W_K, W_V (two 1s per row, at most one -1)
    "QKV": (-1, 2),           # entries of Q, K and V
    "scores": (-2, 9),        # so the scaled scores stay in -1..4
    "scaled": (-1, 4),        # so the powers of 3 stay in 1/3..81
    "negative_scores": 2,     # at most this many negative scores
    "column_sum": 120,        # the largest sum of powers of 3 in a column
}


def _two_of_six(rng: np.random.Generator, ones: int) -> np.ndarray:
    row = np.zeros(6, dtype=int)
    row[rng.choice(6, size=ones, replace=False)] = 1
    return row


def _draw(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Integer X (tokens with 2 or 3 features) and weights (rows picking two features),
    sometimes with one -1 in W_Q or W_K so that a score can be negative."""
    X_new = np.stack([_two_of_six(rng, int(rng.choice([2, 3]))) for _ in range(4)], axis=1)
    W_Q_new, W_K_new, W_V_new = (np.stack([_two_of_six(rng, 2) for _ in range(3)]) for _ in range(3))
    if rng.random() < 0.5:
        W = W_Q_new if rng.random() < 0.5 else W_K_new
        i, j = int(rng.integers(3)), int(rng.integers(6))
        if W[i, j] == 0:
            W[i, j] = -1
    return X_new, W_Q_new, W_K_new, W_V_new


def _hand_friendly(X_new, W_Q_new, W_K_new, W_V_new) -> bool:
    """The limits above, checked with integer arithmetic (cheap) before any Fraction."""
    Q, K, V = W_Q_new @ X_new, W_K_new @ X_new, W_V_new @ X_new
    lo, hi = HAND_LIMITS["QKV"]
    if min(Q.min(), K.min(), V.min()) < lo or max(Q.max(), K.max(), V.max()) > hi:
        return False
    if (V == 0).all(axis=1).any() or len({tuple(c) for c in X_new.T}) < X_new.shape[1]:
        return False  # a value row of zeros, or two identical tokens
    scores = K.T @ Q
    lo, hi = HAND_LIMITS["scores"]
    if scores.min() < lo or scores.max() > hi or (scores < 0).sum() > HAND_LIMITS["negative_scores"]:
        return False
    scaled = scores // 2  # integer floor division: the floor, also for negatives
    for column in scaled.T:
        if len(set(column.tolist())) < 2:  # uniform weights: nothing to see in this column
            return False
        if sum(Fraction(3) ** int(s) for s in column) > HAND_LIMITS["column_sum"]:
            return False
    return True


def new_worksheet(seed: int) -> Worksheet:
    """A fresh practice problem like the published one (X 6×4, weights 3×6), with its key.

    The same seed gives the same problem. X holds 0s and 1s, each weight row picks two
    features (sometimes with one -1), and the problem is drawn again until every step
    stays small (``HAND_LIMITS``): scaled scores from -1 to 4, so that the powers of 3
    run from 1/3 to 81.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative whole number, got {seed!r}")
    rng = np.random.default_rng(int(seed))
    while True:  # about one draw in a few dozen passes; see test_new_worksheet_is_quick
        drawn = _draw(rng)
        if _hand_friendly(*drawn):
            return Worksheet(*drawn, seed=int(seed))
