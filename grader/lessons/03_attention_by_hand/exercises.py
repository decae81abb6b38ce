"""Lesson 03 exercises: attention by hand, tokens as columns, exact fractions.

Two kinds of exercise live here:

* the functions (``key_query_scores``, ``floor_half``, ``softmax3_columns``,
  ``attention_by_hand``, ``row_convention_attention``), checked like every other function
  on seeded cases, compared exactly;
* the ``WORKSHEET`` the learner fills in from paper, one exercise per step
  (``worksheet_Q`` ... ``worksheet_Z``), so that each step earns its own points. These are
  :class:`WorksheetStep` exercises: ``check("worksheet_scores", WORKSHEET)`` reads the
  learner's numbers (a grid typed as text, or nested lists), and says which entry is the
  first wrong one and what it is made of ("row 2 of Kᵀ Q uses k₂ = ..."), which known
  mistake the whole step matches, or which earlier step the error comes from.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable

import numpy as np

from .. import reference as ref
from ..checking import CheckFailed
from ..compare import difference
from ..reference.by_hand import STEPS, Worksheet, published_worksheet
from ..validation import as_fractions, shape_str
from . import BadInput, Case, Exercise, Misconception, register

SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def _sub(n: int) -> str:
    return str(n).translate(SUBSCRIPTS)


# ============================================================================ the functions
# ----------------------------------------------------------------------------- cases

def _ints(rng: np.random.Generator, shape, low: int, high: int) -> np.ndarray:
    return rng.integers(low, high + 1, size=shape)


def _as_fraction_array(M) -> np.ndarray:
    out = np.empty(np.shape(M), dtype=object)
    for idx in np.ndindex(out.shape):
        out[idx] = Fraction(M[idx])
    return out


def _variants(case: Case) -> list[Case]:
    """The same numbers as Fraction arrays, Python lists and floats: the check accepts
    any of them, and the result must be exact each time."""
    return [
        Case(tuple(_as_fraction_array(a) for a in case.args), note="Fraction arrays"),
        Case(tuple(np.asarray(a).tolist() for a in case.args), note="Python lists"),
        Case(tuple(np.asarray(a, dtype=np.float64) for a in case.args), note="floats"),
    ]


def score_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    # (d_k, T_k, T_q)
    shapes = [(1, 1, 1), (2, 2, 2), (2, 3, 2), (3, 4, 4), (3, 2, 4)]
    if hidden:
        shapes += [(1, 3, 3), (4, 2, 2), (2, 4, 1), (5, 3, 3), (3, 5, 4)]
    cases = []
    for d, t_k, t_q in shapes:
        note = "T_k ≠ T_q" if t_k != t_q else ("the worksheet's size" if (d, t_k) == (3, 4) else "")
        cases.append(Case((_ints(rng, (d, t_k), -1, 3), _ints(rng, (d, t_q), -1, 3)), note=note))
    halves = Case((_as_fraction_array(_ints(rng, (2, 3), -3, 3)) / 2,
                   _as_fraction_array(_ints(rng, (2, 3), -3, 3)) / 3), note="fractions")
    return cases + [halves] + _variants(cases[3])


def half_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    cases = [
        Case((np.array([[-1]]),), note="a negative odd score"),
        Case((np.array([[3, -4, 5]]),), note="one row"),
        Case((np.array([[0, 1], [-3, 7]]),), note="odd scores"),
        Case((_ints(rng, (4, 4), -5, 9),), note="the worksheet's size"),
        Case((np.array([[2, 6, -2], [-5, 1, 9]]),), note="rectangular"),
    ]
    if hidden:
        cases += [
            Case((_ints(rng, (3, 5), -9, 9),), note="rectangular"),
            Case((np.array([[-7], [-6], [11]]),), note="one column"),
            Case((_ints(rng, (5, 5), -12, 12),), note="wider range"),
        ]
    fractions = np.array([[Fraction(7, 3), Fraction(-5, 2)], [Fraction(1, 2), Fraction(-9, 4)]],
                         dtype=object)
    return cases + [Case((fractions,), note="fractions")] + _variants(cases[3])


def power_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    cases = [
        Case((np.array([[0, 1]]),), note="one row"),
        Case((np.array([[0], [2]]),), note="one column"),
        Case((np.array([[1, 0], [0, 2]]),), note="2×2"),
        Case((np.array([[1, 0, 1], [3, 1, 2], [0, -1, 1], [0, 0, 0]]),), note="a negative score"),
        Case((_ints(rng, (4, 4), -1, 3),), note="the worksheet's size"),
    ]
    if hidden:
        cases += [
            Case((_ints(rng, (3, 5), -2, 4),), note="rectangular"),
            Case((_ints(rng, (5, 2), -1, 4),), note="rectangular"),
            Case((np.array([[4, 4], [4, 4]]),), note="equal scores"),
        ]
    return cases + _variants(cases[4])


def _attention_case(rng, d_in, T, d_k, d_v, note="") -> Case:
    X = _ints(rng, (d_in, T), 0, 1)
    X[rng.integers(d_in), :] = 1  # no token of all zeros
    Ws = tuple(_ints(rng, (d, d_in), -1, 1) for d in (d_k, d_k, d_v))
    return Case((X, *Ws), note=note)


def attention_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    # (d_in, T, d_k, d_v); d_v = T for some, so that a Z computed as A V has a value too.
    # The published worksheet is not among the cases: a message never shows its key.
    sizes = [(2, 2, 1, 2), (3, 2, 2, 1), (4, 3, 2, 3), (6, 4, 3, 3), (5, 3, 3, 2)]
    if hidden:
        sizes += [(3, 3, 2, 3), (6, 4, 3, 4), (4, 5, 2, 2), (2, 4, 2, 3)]
    cases = [_attention_case(rng, *s, note="d_v = T" if s[1] == s[3] else "") for s in sizes]
    return cases + _variants(cases[3])


def row_attention_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    cases = attention_cases(rng, hidden)
    out = []
    for case in cases:
        X = case.args[0]
        X_rows = [list(r) for r in zip(*X)] if isinstance(X, list) else np.asarray(X).T.copy()
        out.append(Case((X_rows, *case.args[1:]), note=case.note))
    return out


# ----------------------------------------------------------------------------- wrong answers
# Each reads like a learner's code: given lines first, then the mistake.

def _mat(rows) -> np.ndarray:
    rows = list(rows)
    out = np.empty((len(rows), len(rows[0]) if rows else 0), dtype=object)
    for i, row in enumerate(rows):
        for j, v in enumerate(row):
            out[i, j] = v
    return out


def _scores_transposed(K, Q):
    K, Q = as_fractions(K, "K"), as_fractions(Q, "Q")
    return Q.T.dot(K)


def _scores_q_kt(K, Q):
    K, Q = as_fractions(K, "K"), as_fractions(Q, "Q")
    return Q.dot(K.T)


def _half_round(S):
    S = as_fractions(S, "S")
    return _mat([round(s / 2) for s in row] for row in S)


def _half_round_up(S):
    S = as_fractions(S, "S")
    return _mat([math.floor(s / 2 + Fraction(1, 2)) for s in row] for row in S)


def _half_truncate(S):
    S = as_fractions(S, "S")
    return _mat([int(s / 2) for s in row] for row in S)


def _half_no_floor(S):
    S = as_fractions(S, "S")
    return S / 2


def _half_sqrt3(S):
    S = as_fractions(S, "S")
    return S.astype(float) / math.sqrt(3)


def _powers(S):
    return _mat([Fraction(3) ** int(s) for s in row] for row in S)


def _softmax_rows(S):
    S = as_fractions(S, "S", whole=True)
    P = _powers(S)
    return P / P.sum(axis=1, keepdims=True)


def _softmax_unnormalised(S):
    S = as_fractions(S, "S", whole=True)
    return _powers(S)


def _softmax_whole_matrix(S):
    S = as_fractions(S, "S", whole=True)
    P = _powers(S)
    return P / P.sum()


def _softmax_e(S):
    S = as_fractions(S, "S", whole=True)
    E = np.exp(S.astype(float))
    return E / E.sum(axis=0, keepdims=True)


def _softmax_floats(S):
    S = as_fractions(S, "S", whole=True)
    P = 3.0 ** S.astype(float)
    return P / P.sum(axis=0, keepdims=True)


def _steps_with(X, W_Q, W_K, W_V, *, scores=None, scale=None, softmax=None, mix=None, rows=False):
    """The worksheet's steps, with one of them swapped for a mistake."""
    X = as_fractions(X, "X_rows" if rows else "X")
    W_Q, W_K, W_V = as_fractions(W_Q, "W_Q"), as_fractions(W_K, "W_K"), as_fractions(W_V, "W_V")
    if rows:
        Q, K, V = X.dot(W_Q.T), X.dot(W_K.T), X.dot(W_V.T)
        S = (scores or (lambda K, Q: Q.dot(K.T)))(K, Q)
        scaled = (scale or ref.floor_half)(S)
        A = (softmax or (lambda s: ref.softmax3_columns(s.T).T))(scaled)
        Z = (mix or (lambda V, A: A.dot(V)))(V, A)
    else:
        Q, K, V = W_Q.dot(X), W_K.dot(X), W_V.dot(X)
        S = (scores or ref.key_query_scores)(K, Q)
        scaled = (scale or ref.floor_half)(S)
        A = (softmax or ref.softmax3_columns)(scaled)
        Z = (mix or (lambda V, A: V.dot(A)))(V, A)
    return {"Q": Q, "K": K, "V": V, "scores": S, "scaled": scaled, "A": A, "Z": Z}


def _abh_scores_transposed(X, W_Q, W_K, W_V):
    return _steps_with(X, W_Q, W_K, W_V, scores=_scores_transposed)


def _abh_softmax_rows(X, W_Q, W_K, W_V):
    return _steps_with(X, W_Q, W_K, W_V, softmax=_softmax_rows)


def _abh_round(X, W_Q, W_K, W_V):
    return _steps_with(X, W_Q, W_K, W_V, scale=_half_round)


def _abh_truncate(X, W_Q, W_K, W_V):
    return _steps_with(X, W_Q, W_K, W_V, scale=_half_truncate)


def _abh_a_v(X, W_Q, W_K, W_V):
    return _steps_with(X, W_Q, W_K, W_V, mix=lambda V, A: A.dot(V))


def _abh_v_at(X, W_Q, W_K, W_V):
    return _steps_with(X, W_Q, W_K, W_V, mix=lambda V, A: V.dot(A.T))


def _rows_softmax_columns(X_rows, W_Q, W_K, W_V):
    return _steps_with(X_rows, W_Q, W_K, W_V, rows=True, softmax=ref.softmax3_columns)


def _rows_not_transposed(X_rows, W_Q, W_K, W_V):
    X_rows = as_fractions(X_rows, "X_rows")
    return ref.attention_by_hand(X_rows.T, W_Q, W_K, W_V)


def _rows_at_v(X_rows, W_Q, W_K, W_V):
    return _steps_with(X_rows, W_Q, W_K, W_V, rows=True, mix=lambda V, A: A.T.dot(V))


def _rows_k_qt(X_rows, W_Q, W_K, W_V):
    return _steps_with(X_rows, W_Q, W_K, W_V, rows=True, scores=lambda K, Q: K.dot(Q.T))


# ----------------------------------------------------------------------------- messages

MSG_SCORES_TRANSPOSED = (
    "your scores are the transpose of Kᵀ Q: you put q_i · k_j in row i, column j (that is "
    "Qᵀ K, the layout Q Kᵀ gives in the row convention). With tokens as columns, row i "
    "belongs to key i and column j to query j: entry [i, j] is k_i · q_j, so compute K.T "
    "times Q."
)
MSG_Q_KT = (
    "you multiplied Q Kᵀ, the row convention's formula. With tokens as columns, Q Kᵀ is "
    "d_k×d_k and adds up over the tokens instead of the features. The scores are Kᵀ Q: one "
    "row per key, one column per query, entry [i, j] = k_i · q_j."
)
MSG_ROUND = (
    "you rounded s/2 to the nearest whole number (Python's round, which sends 3/2 to 2). The "
    "worksheet takes the floor, the largest whole number at most s/2: floor(3/2) = 1 and "
    "floor(-1/2) = -1. Use math.floor(s / 2), or s // 2."
)
MSG_ROUND_UP = (
    "you rounded halves up (or took the ceiling), so 1/2 became 1 and 3/2 became 2. The "
    "worksheet takes the floor, which goes down: floor(1/2) = 0, floor(3/2) = 1 and "
    "floor(-1/2) = -1. Use math.floor(s / 2), or s // 2."
)
MSG_TRUNCATE = (
    "positive scores come out right, but negative odd scores are one too high: you rounded "
    "toward zero (int(s / 2) or np.trunc), and int(-1/2) is 0. Floor goes down, also below "
    "zero: floor(-1/2) = -1 and floor(-3/2) = -2. Use math.floor(s / 2), or s // 2."
)
MSG_NO_FLOOR = (
    "you divided by 2 but did not take the floor, so odd scores give halves like 3/2. The "
    "next step raises 3 to these numbers, and they must be whole: floor(3/2) = 1."
)
MSG_SQRT3 = (
    "you divided by √3, as real attention does. On the worksheet floor(s / 2) stands in for "
    "s / √3 so that the numbers stay whole and everything after stays exact; the lesson "
    "compares the two later."
)
MSG_SOFTMAX_ROWS = (
    "each row of your weights sums to 1, but here each column must: column j holds the "
    "weights of query j over all the keys. Divide every power of 3 by the sum of its "
    "column (axis=0), not its row."
)
MSG_UNNORMALISED = (
    "you returned the powers of 3 without dividing them by their column sums; the weights "
    "of each column must add up to 1."
)
MSG_WHOLE_MATRIX = (
    "you divided by the sum of the whole matrix, so the entries of all columns together "
    "add up to 1. Each column is one query's weights and is normalised on its own: divide "
    "by the sum of its column."
)
MSG_E_POWERS = (
    "you used e**s (np.exp). The worksheet uses 3**s, so that every weight is an exact "
    "fraction you can write down."
)
MSG_FLOATS = (
    "your weights are floats, and 1/10 or 1/3 cannot be stored exactly as a float. Keep "
    "every number a Fraction. Two traps: Fraction(3) ** S with S a whole array turns the 3 "
    "into the float 3.0, and 3 ** s gives a plain int for s >= 0, so that dividing two of "
    "them gives a float. Raise a Fraction entry by entry: Fraction(3) ** s for each s."
)
MSG_A_V = (
    "you computed Z = A V, the row convention's order. With tokens as columns, V is d_v×T "
    "and column j of Z mixes the columns of V (the value vectors) with the weights in "
    "column j of A: Z = V A."
)
MSG_V_AT = (
    "you computed V Aᵀ: column j of your Z mixes the values with row j of A. The weights of "
    "query j are column j of A (the column that sums to 1), so Z = V A."
)
MSG_ROWS_SOFTMAX_COLUMNS = (
    "you normalised down the columns, the habit of the column convention. With tokens as "
    "rows, row i of the scores belongs to query i, so each row of A must sum to 1."
)
MSG_ROWS_NOT_TRANSPOSED = (
    "your results have tokens as columns: they are the column convention's results. With "
    "tokens as rows (X_rows is T×d_in), Q = X_rows W_Qᵀ is T×d_k, the scores are Q Kᵀ, A "
    "normalises each row and Z = A V: every result is the transpose of the column one."
)
MSG_ROWS_AT_V = (
    "you computed Aᵀ V: row i of your Z mixes the values with column i of A. In the row "
    "convention the weights of query i are row i of A (the row that sums to 1): Z = A V."
)
MSG_ROWS_K_QT = (
    "your scores are K Qᵀ, the transpose of what the row convention needs. Row i belongs "
    "to query i: entry [i, j] is q_i · k_j, so the scores are Q Kᵀ."
)


def _exact(expected, actual, case, where: str = "") -> str | None:
    """Exact comparison against the Fraction reference. When ``expected`` is a float array
    (a float misconception, during diagnosis), the learner's array is read as floats too,
    whether it came as float64 or as an object array of floats."""
    if isinstance(expected, np.ndarray) and expected.dtype != object:
        try:
            actual = np.asarray(actual, dtype=float)
        except (TypeError, ValueError):
            pass
    return difference(expected, actual, case.tol, where)


register(
    Exercise(
        name="key_query_scores",
        reference=ref.key_query_scores,
        cases=score_cases,
        misconceptions=[
            Misconception("transposed scores (Qᵀ K)", _scores_transposed, MSG_SCORES_TRANSPOSED),
            Misconception("Q Kᵀ", _scores_q_kt, MSG_Q_KT),
        ],
        bad_inputs=[
            BadInput(Case((np.ones((3, 4), dtype=int), np.ones((2, 4), dtype=int))),
                     "K has 3 rows (d_k = 3) but Q has 2"),
            BadInput(Case((np.ones(3, dtype=int), np.ones((3, 2), dtype=int))),
                     "K is a vector, not a matrix with one key per column"),
            BadInput(Case((np.array([[1, np.nan]]), np.ones((1, 2)))), "K contains NaN"),
        ],
        compare=_exact,
        arg_names=("K", "Q"),
        hint="Entry [i, j] is the dot product of column i of K (key i) and column j of Q "
        "(query j): K.T times Q.",
        seed=301,
    ),
    Exercise(
        name="floor_half",
        reference=ref.floor_half,
        cases=half_cases,
        misconceptions=[
            Misconception("rounds half to even", _half_round, MSG_ROUND),
            Misconception("rounds halves up", _half_round_up, MSG_ROUND_UP),
            Misconception("truncates toward zero", _half_truncate, MSG_TRUNCATE),
            Misconception("no floor", _half_no_floor, MSG_NO_FLOOR),
            Misconception("divides by √3", _half_sqrt3, MSG_SQRT3),
        ],
        bad_inputs=[
            BadInput(Case((np.array([[1.0, np.nan]]),)), "S contains NaN"),
            BadInput(Case((np.array([1, 2, 3]),)), "S is a vector, not a matrix of scores"),
            BadInput(Case(([["3", "4"]],)), "S holds strings, not numbers"),
        ],
        compare=_exact,
        arg_names=("S",),
        hint="floor(s / 2) is the largest whole number at most s / 2; for negative s it goes "
        "further from zero: floor(-1/2) = -1. math.floor(s / 2) or s // 2 do it exactly.",
        seed=302,
    ),
    Exercise(
        name="softmax3_columns",
        reference=ref.softmax3_columns,
        cases=power_cases,
        misconceptions=[
            Misconception("softmax along rows", _softmax_rows, MSG_SOFTMAX_ROWS),
            Misconception("not normalised", _softmax_unnormalised, MSG_UNNORMALISED),
            Misconception("normalised by the whole matrix", _softmax_whole_matrix, MSG_WHOLE_MATRIX),
            Misconception("e instead of 3", _softmax_e, MSG_E_POWERS),
            Misconception("floats", _softmax_floats, MSG_FLOATS),
        ],
        bad_inputs=[
            BadInput(Case((np.array([[Fraction(1, 2)]], dtype=object),)),
                     "S holds 1/2, and 3 to the power 1/2 is not a fraction"),
            BadInput(Case((np.array([[0.0, np.inf]]),)), "S contains infinity"),
            BadInput(Case((np.array([0, 1]),)), "S is a vector, not a matrix"),
        ],
        compare=_exact,
        arg_names=("S",),
        hint="Raise 3 to every entry (Fraction(3) ** s, entry by entry), add up each column, and divide "
        "each entry by its column's sum. Every column of the result sums to exactly 1.",
        seed=303,
    ),
)

_ATTENTION_BAD = [
    BadInput(Case((np.ones((6, 4), int), np.ones((3, 5), int), np.ones((3, 6), int),
                   np.ones((3, 6), int))), "W_Q has 5 columns but X has 6 rows (features)"),
    BadInput(Case((np.ones((6, 4), int), np.ones((3, 6), int), np.ones((2, 6), int),
                   np.ones((3, 6), int))), "W_Q gives 3-dimensional queries but W_K 2-dimensional keys"),
    BadInput(Case((np.ones(6, int), np.ones((3, 6), int), np.ones((3, 6), int),
                   np.ones((3, 6), int))), "X is a vector, not a matrix of tokens"),
]
_ROWS_BAD = [
    BadInput(Case((np.ones((4, 5), int), np.ones((3, 6), int), np.ones((3, 6), int),
                   np.ones((3, 6), int))), "X_rows has 5 columns (features) but the weights have 6"),
    BadInput(Case((np.ones((4, 6), int), np.ones((3, 6), int), np.ones((2, 6), int),
                   np.ones((3, 6), int))), "W_Q gives 3-dimensional queries but W_K 2-dimensional keys"),
]


class ShownSteps:
    """A dict of steps as ``check`` handles it: compared step by step, and shown in a
    failure message as the first step that differs only, not all seven.

    ``check`` prints the expected value and the learner's in full. Seven matrices twice
    bury the one that matters, so :func:`_first_step_that_differs` marks that step on the
    two values it compares first (the failing case's expected and returned values), and
    :meth:`__repr__` shows it: the expected value with the steps it is computed from
    (right in the learner's dict too, since they come earlier), the learner's value alone.
    """

    def __init__(self, steps: dict):
        self.steps = steps
        self.focus: str | None = None  # the first step that differs, once compared
        self.role = ""  # "expected" or "returned", once compared

    def mark(self, step: str, role: str) -> None:
        if self.focus is None:  # the first comparison is the one the message is about
            self.focus, self.role = step, role

    def __repr__(self) -> str:
        from ..checking import _fmt_value

        def block(name: str, value) -> list[str]:
            return [f"{name} =", _fmt_value(value, "  ")]

        if self.focus is None:  # never compared: every step
            lines = [line for step in self.steps for line in block(step, self.steps[step])]
        elif self.role == "expected":
            parents = STEP_INFO[self.focus].parents
            lines = [f"{self.focus}, computed from {' and '.join(parents)} (yours "
                     f"{'is' if len(parents) == 1 else 'are'} the same):"] if parents else []
            for step in (*parents, self.focus):
                lines += block(step, self.steps[step])
        elif self.focus in self.steps:
            lines = block(self.focus, self.steps[self.focus]) + [
                f"(only {self.focus} is shown, the first step that differs)"]
        else:
            lines = [f"a dict with no key {self.focus!r}; its keys are "
                     f"{', '.join(map(repr, self.steps))}"]
        # check() indents the first line; the others are indented here to match.
        return "\n    ".join("\n".join(lines).splitlines())


def _call_steps(fn, case: Case):
    value = fn(*case.args, **case.kwargs)
    return ShownSteps(value) if isinstance(value, dict) else value


def _first_step_that_differs(expected, actual, case) -> str | None:
    """Compare a dict of steps in order and name the first step that differs (marking it on
    both values, for the message)."""
    shown = expected, actual
    expected = expected.steps if isinstance(expected, ShownSteps) else expected
    actual = actual.steps if isinstance(actual, ShownSteps) else actual
    if not isinstance(actual, dict):
        return difference(expected, actual, case.tol)
    for step in STEPS:
        if step not in actual:
            diff = f"the dict has no key {step!r} (it needs {', '.join(STEPS)})"
        else:
            diff = _exact(expected[step], actual[step], case, f"step {step!r}: ")
        if diff:
            for value, role in zip(shown, ("expected", "returned")):
                if isinstance(value, ShownSteps):
                    value.mark(step, role)
            if step not in actual:
                return diff
            earlier = ", ".join(STEPS[: STEPS.index(step)])
            return diff + (f" (the steps before it, {earlier}, are right)" if earlier else "")
    return None


register(
    Exercise(
        name="attention_by_hand",
        reference=ref.attention_by_hand,
        cases=attention_cases,
        misconceptions=[
            Misconception("transposed scores", _abh_scores_transposed, MSG_SCORES_TRANSPOSED),
            Misconception("softmax along rows", _abh_softmax_rows, MSG_SOFTMAX_ROWS),
            Misconception("rounds instead of floor", _abh_round, MSG_ROUND),
            Misconception("truncates toward zero", _abh_truncate, MSG_TRUNCATE),
            Misconception("Z = A V", _abh_a_v, MSG_A_V),
            Misconception("Z = V Aᵀ", _abh_v_at, MSG_V_AT),
        ],
        bad_inputs=_ATTENTION_BAD,
        call=_call_steps,
        compare=_first_step_that_differs,
        arg_names=("X", "W_Q", "W_K", "W_V"),
        hint="Follow the worksheet: Q = W_Q X, K = W_K X, V = W_V X, scores = Kᵀ Q, scaled = "
        "floor(scores / 2), A = 3**scaled normalised per column, Z = V A. Use your functions "
        "from above for the middle steps.",
        seed=304,
    ),
    Exercise(
        name="row_convention_attention",
        reference=ref.row_convention_attention,
        cases=row_attention_cases,
        misconceptions=[
            Misconception("softmax down columns", _rows_softmax_columns, MSG_ROWS_SOFTMAX_COLUMNS),
            Misconception("column-convention results", _rows_not_transposed, MSG_ROWS_NOT_TRANSPOSED),
            Misconception("Z = Aᵀ V", _rows_at_v, MSG_ROWS_AT_V),
            Misconception("scores K Qᵀ", _rows_k_qt, MSG_ROWS_K_QT),
        ],
        bad_inputs=_ROWS_BAD,
        call=_call_steps,
        compare=_first_step_that_differs,
        arg_names=("X_rows", "W_Q", "W_K", "W_V"),
        hint="With tokens as rows: Q = X_rows W_Qᵀ, scores = Q Kᵀ, scaled = floor(scores / 2), "
        "A normalises each row of 3**scaled, Z = A V. Each result is the transpose of the "
        "column convention's.",
        seed=305,
    ),
)


# ============================================================================ the worksheet

class NotFilledIn(Exception):
    """The learner has not typed this step yet."""


class Unreadable(Exception):
    """The learner's numbers could not be read; the message says why."""


PLACEHOLDER = re.compile(r"NotImplementedError|YOUR (CODE|ANSWER) HERE")


def _read_entry(token, where: str) -> Fraction:
    if isinstance(token, (bool, np.bool_)):
        raise Unreadable(f"{where} is {token!r}, not a number")
    if isinstance(token, str):
        text = token.strip().replace("−", "-")
        try:
            return Fraction(text)
        except (ValueError, ZeroDivisionError):
            raise Unreadable(
                f"{where} reads {token!r}, which is not a number: write whole numbers like 3 "
                f"or -1 and fractions like 3/4"
            ) from None
    if isinstance(token, (int, np.integer, Fraction)):
        return Fraction(int(token)) if isinstance(token, np.integer) else Fraction(token)
    if isinstance(token, (float, np.floating)):
        if not math.isfinite(token):
            raise Unreadable(f"{where} is {token}, not a number")
        return Fraction(float(token))
    raise Unreadable(f"{where} is {token!r} ({type(token).__name__}), not a number")


def _grid_from_text(text: str) -> list[list[str]]:
    rows = []
    for line in text.splitlines():
        line = line.split("#", 1)[0]
        tokens = [t for t in re.split(r"[\s,;\[\]()]+", line) if t]
        if tokens:
            rows.append(tokens)
    return rows


def read_matrix(value, label: str) -> np.ndarray:
    """The learner's numbers for one step as an object array of Fractions.

    ``value`` is text with one row per line (numbers separated by spaces or commas,
    fractions as ``3/4``, ``#`` starts a comment), or nested lists / an array of numbers
    or such strings. Raises :class:`NotFilledIn` for a placeholder and :class:`Unreadable`
    with a message otherwise.
    """
    return _read_typed(value, label)[0]


def _as_typed(token) -> str:
    """How the learner wrote an entry, for messages: 0.07 stays 0.07, not 7/100."""
    if isinstance(token, str):
        return token.strip()
    if isinstance(token, (float, np.floating)):
        return f"{float(token):.10g}"
    return str(token)


def _read_typed(value, label: str) -> tuple[np.ndarray, np.ndarray]:
    """``read_matrix`` and, alongside, each entry as the learner typed it."""
    if value is None or value is Ellipsis:
        raise NotFilledIn
    if isinstance(value, str):
        if PLACEHOLDER.search(value):
            raise NotFilledIn
        rows = _grid_from_text(value)
        if not rows:
            raise NotFilledIn
    else:
        try:
            arr = np.array(value, dtype=object)
        except (TypeError, ValueError):
            raise Unreadable(f"{label} could not be read as a matrix") from None
        if arr.ndim == 1 and arr.size and all(isinstance(r, (list, tuple, np.ndarray)) for r in arr):
            rows = [list(r) for r in arr]  # ragged: report the row lengths below
        elif arr.ndim == 2:
            rows = [list(r) for r in arr]
        else:
            raise Unreadable(
                f"{label} should be a matrix (a list of rows), but it has shape "
                f"{shape_str(arr.shape)}"
            )
    widths = [len(r) for r in rows]
    if len(set(widths)) > 1:
        bad = next(i for i, w in enumerate(widths) if w != widths[0])
        raise Unreadable(
            f"the rows of {label} have different lengths: row 1 has {widths[0]} numbers but "
            f"row {bad + 1} has {widths[bad]}"
        )
    values = np.empty((len(rows), widths[0]), dtype=object)
    typed = np.empty(values.shape, dtype=object)
    for i, row in enumerate(rows):
        for j, token in enumerate(row):
            values[i, j] = _read_entry(token, f"row {i + 1}, column {j + 1} of {label}")
            typed[i, j] = _as_typed(token)
    return values, typed


def _is_decimal(typed: str) -> bool:
    return "." in typed or "e" in typed.lower()


def _fmt(v) -> str:
    return str(Fraction(v))


def _vec(v) -> str:
    return "(" + ", ".join(_fmt(x) for x in v) + ")"


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and all(Fraction(x) == Fraction(y) for x, y in zip(a.flat, b.flat))


def _close(a: np.ndarray, b: np.ndarray, atol: float = 0.006) -> bool:
    """Equal up to the two decimals a learner would type (for decimal variants)."""
    return a.shape == b.shape and bool(np.all(np.abs(a.astype(float) - b.astype(float)) <= atol))


# ----------------------------------------------------------------------------- the steps

def _transpose(M):
    return M.T.copy()


def _dot(A, B):
    return _mat([sum((A[i, p] * B[p, j] for p in range(A.shape[1])), Fraction(0))
                 for j in range(B.shape[1])] for i in range(A.shape[0]))


def _half(fn):
    return lambda M: _mat([fn(s) for s in row] for row in M)


def _powers_of(M):
    """3 to every entry; only whole, modest exponents (a learner's typo must not hang)."""
    if any(Fraction(s).denominator != 1 or abs(s) > 60 for s in M.flat):
        raise ValueError("not whole numbers of a reasonable size")
    return _mat([Fraction(3) ** int(s) for s in row] for row in M)


def _normalise(P, axis):
    return P / P.sum(axis=axis, keepdims=True) if axis is not None else P / P.sum()


def _softmax_columns_of(M):
    return _normalise(_powers_of(M), 0)


@dataclass(frozen=True)
class StepInfo:
    what: str                      # "Q = W_Q X"
    parents: tuple[str, ...]       # steps it is computed from
    compute: Callable              # (worksheet, values: dict) -> matrix
    shape_words: str               # "3 rows of 4 numbers" is built from the key; this says why


def _projection(letter):
    def compute(ws, v):
        return _dot(_as_fraction_array(getattr(ws, f"W_{letter}")), _as_fraction_array(ws.X))
    return compute


STEP_INFO = {
    "Q": StepInfo("Q = W_Q X", (), _projection("Q"), "one column per token (query)"),
    "K": StepInfo("K = W_K X", (), _projection("K"), "one column per token (key)"),
    "V": StepInfo("V = W_V X", (), _projection("V"), "one column per token (value)"),
    "scores": StepInfo("Kᵀ Q", ("K", "Q"), lambda ws, v: _dot(v["K"].T, v["Q"]),
                       "one row per key, one column per query"),
    "scaled": StepInfo("floor(scores / 2)", ("scores",),
                       lambda ws, v: _half(lambda s: Fraction(math.floor(s / 2)))(v["scores"]),
                       "the same size as the scores"),
    "A": StepInfo("A (3^scaled, each column divided by its sum)", ("scaled",),
                  lambda ws, v: _softmax_columns_of(v["scaled"]), "one column of weights per query"),
    "Z": StepInfo("Z = V A", ("V", "A"), lambda ws, v: _dot(v["V"], v["A"]),
                  "one column per token (output)"),
}


@dataclass(frozen=True)
class StepMistake:
    """A known wrong way to do one step: ``variants`` compute what it gives from the step's
    parents (the key's or the learner's own); ``close`` compares to two decimals."""

    name: str
    variants: tuple
    message: str
    close: bool = False


def _other_projection(letter, other):
    def variant(ws, v):
        return _dot(_as_fraction_array(getattr(ws, f"W_{other}")), _as_fraction_array(ws.X))
    return variant


def _projection_mistakes(letter: str) -> list[StepMistake]:
    others = [o for o in "QKV" if o != letter]
    return [
        StepMistake(
            "tokens as rows",
            (lambda ws, v, L=letter: _transpose(STEP_INFO[L].compute(ws, v)),),
            f"your {letter} has one row per token: that is {letter} in the row convention. Here "
            f"tokens are the columns of X, so {letter} = W_{letter} X has one column per token.",
        ),
        StepMistake(
            "another weight matrix",
            tuple(_other_projection(letter, o) for o in others),
            f"these numbers come from another weight matrix: {letter} = W_{letter} X uses "
            f"W_{letter}, not W_{others[0]} or W_{others[1]}.",
        ),
    ]


def _half_away(s):
    return Fraction(math.floor(abs(s) / 2 + Fraction(1, 2)) * (1 if s >= 0 else -1))


WORKSHEET_MISTAKES = {
    "Q": _projection_mistakes("Q"),
    "K": _projection_mistakes("K"),
    "V": _projection_mistakes("V"),
    "scores": [
        StepMistake("transposed scores (Qᵀ K)", (lambda ws, v: _dot(v["Q"].T, v["K"]),),
                    MSG_SCORES_TRANSPOSED.replace("compute K.T times Q", "write Kᵀ Q")),
        StepMistake("Q Kᵀ", (lambda ws, v: _dot(v["Q"], v["K"].T),), MSG_Q_KT),
    ],
    "scaled": [
        StepMistake(
            "rounded",
            (lambda ws, v: _half(lambda s: math.floor(s / 2 + Fraction(1, 2)))(v["scores"]),
             lambda ws, v: _half(_half_away)(v["scores"]),
             lambda ws, v: _half(lambda s: round(s / 2))(v["scores"])),
            "you rounded s/2 to the nearest whole number, so 3/2 became 2. The worksheet takes "
            "the floor, the largest whole number at most s/2: floor(3/2) = 1, floor(1/2) = 0 "
            "and floor(-1/2) = -1.",
        ),
        StepMistake(
            "truncated toward zero",
            (lambda ws, v: _half(lambda s: int(s / 2))(v["scores"]),),
            "the positive scores are right, but not the negative odd ones: you rounded "
            "toward zero, so -1/2 became 0. Floor goes down, also below zero: "
            "floor(-1/2) = -1, the largest whole number at most -1/2.",
        ),
        StepMistake("no floor", (lambda ws, v: v["scores"] / 2,), MSG_NO_FLOOR),
        StepMistake("divided by √3", (lambda ws, v: v["scores"].astype(float) / math.sqrt(3),),
                    MSG_SQRT3, close=True),
    ],
    "A": [
        StepMistake("normalised along rows", (lambda ws, v: _normalise(_powers_of(v["scaled"]), 1),),
                    MSG_SOFTMAX_ROWS.replace(" (axis=0)", "")),
        StepMistake("not normalised", (lambda ws, v: _powers_of(v["scaled"]),),
                    "these are the powers of 3 themselves. Divide each one by the sum of its "
                    "column, so that every column of A adds up to 1."),
        StepMistake("normalised by the whole matrix",
                    (lambda ws, v: _normalise(_powers_of(v["scaled"]), None),), MSG_WHOLE_MATRIX),
        StepMistake("powers of the unscaled scores",
                    (lambda ws, v: _softmax_columns_of(v["scores"]),),
                    "you raised 3 to the scores themselves. The softmax step uses the scaled "
                    "scores, floor(scores / 2), which keeps the powers small."),
        StepMistake("e instead of 3",
                    (lambda ws, v: _normalise(np.exp(v["scaled"].astype(float)), 0),),
                    "you used powers of e. The worksheet uses powers of 3, so that every "
                    "weight is an exact fraction you can write down.", close=True),
    ],
    "Z": [
        StepMistake("Z = V Aᵀ", (lambda ws, v: _dot(v["V"], v["A"].T),), MSG_V_AT),
        StepMistake("A V with V turned to rows", (lambda ws, v: _dot(v["A"], v["V"].T),),
                    "you computed A V, the row convention's order, with V's tokens turned "
                    "into rows, which gives a 4×3 matrix and mixes with the rows of A. With "
                    "tokens as columns Z = V A: column j of Z mixes the value vectors with "
                    "the weights in column j of A."),
        StepMistake("Z with tokens as rows", (lambda ws, v: _dot(v["A"].T, v["V"].T),),
                    "your numbers are right but laid out with one row per token: that is Zᵀ, "
                    "the row convention's layout. Here Z = V A has one column per token."),
        StepMistake("powers not divided",
                    (lambda ws, v: _dot(v["V"], _powers_of(v["scaled"])),),
                    "you mixed the values with the powers of 3 before dividing by the column "
                    "sums. Use the weights A, whose columns add up to 1."),
    ],
}


def _parents_of(step: str) -> tuple[str, ...]:
    """Every step that ``step`` uses, directly or through another step."""
    found: list[str] = []
    for parent in STEP_INFO[step].parents:
        for p in (*_parents_of(parent), parent):
            if p not in found:
                found.append(p)
    return tuple(found)


@dataclass
class StepReview:
    step: str
    status: str  # "right", "missing", "unreadable", "wrong"
    message: str

    @property
    def right(self) -> bool:
        return self.status == "right"


def _shape_words(shape) -> str:
    rows, cols = shape
    return f"{rows} row{'s' * (rows != 1)} of {cols} number{'s' * (cols != 1)}"


def _learner_values(answers: dict, steps, key: dict) -> dict:
    """The learner's readable steps with the right shape (others are left out)."""
    values = {}
    for s in steps:
        try:
            M = read_matrix(answers.get(s), s)
        except (NotFilledIn, Unreadable):
            continue
        if M.shape == key[s].shape:
            values[s] = M
    return values


def _entry_story(step: str, i: int, j: int, ws: Worksheet, key: dict) -> str:
    """What entry [i, j] of ``step`` is made of, with 1-based names as on paper."""
    r, c = i + 1, j + 1
    if step in ("Q", "K", "V"):
        W = getattr(ws, f"W_{step}")
        return (f"It is row {r} of W_{step}, {_vec(W[i])}, times token {c} (column {c} of X), "
                f"x{_sub(c)} = {_vec(ws.X[:, j])}: multiply entry by entry and add.")
    if step == "scores":
        return (f"Row {r} of Kᵀ Q uses k{_sub(r)} = {_vec(key['K'][:, i])} (column {r} of K), and "
                f"column {c} uses q{_sub(c)} = {_vec(key['Q'][:, j])} (column {c} of Q): the entry "
                f"is k{_sub(r)} · q{_sub(c)}.")
    if step == "scaled":
        s = key["scores"][i, j]
        return (f"It is floor(s / 2) for the score s = {_fmt(s)} in the same place: the largest "
                f"whole number at most {_fmt(s)}/2.")
    if step == "A":
        col = key["scaled"][:, j]
        return (f"Column {c} of A comes from column {c} of the scaled scores, {_vec(col)}: raise 3 "
                f"to each, add the {len(col)} powers, and divide each power by that sum. The "
                f"entry is 3^{_fmt(key['scaled'][i, j])} divided by the sum.")
    # Z
    return (f"It is row {r} of V, {_vec(key['V'][i])}, times column {c} of A (the weights of "
            f"query {c}), {_vec(key['A'][:, j])}: multiply entry by entry and add.")


def review_step(step: str, answers, worksheet: Worksheet | None = None,
                label: str = "WORKSHEET") -> StepReview:
    """Read the learner's ``answers[step]`` and say whether it is right, and if not, why."""
    ws = worksheet or published_worksheet()
    key = ws.key
    info = STEP_INFO[step]
    where = f"{label}[{step!r}]"
    expected = key[step]
    if not isinstance(answers, dict):
        return StepReview(step, "unreadable",
                          f"{label} should be a dict with the keys {', '.join(map(repr, STEPS))}, "
                          f"but it is a {type(answers).__name__}.")
    try:
        mine, typed = _read_typed(answers.get(step), where)
    except NotFilledIn:
        return StepReview(step, "missing", (
            f"replace the placeholder in {where} with the {_shape_words(expected.shape)} "
            f"you worked out on paper for {info.what}."))
    except Unreadable as exc:
        return StepReview(step, "unreadable", f"{exc}.")
    if _same(mine, expected):
        return StepReview(step, "right", f"all {expected.size} entries of {where} are right.")

    # A known mistake, from the right parents or from the learner's own.
    parents = _parents_of(step)
    theirs = _learner_values(answers, parents, key)
    sources = [key] + ([{**key, **theirs}] if theirs else [])
    for mistake in WORKSHEET_MISTAKES.get(step, []):
        for source in sources:
            for variant in mistake.variants:
                try:
                    wrong = variant(ws, source)
                except (ValueError, OverflowError, ZeroDivisionError):
                    continue
                if (_close if mistake.close else _same)(mine, wrong) and not _same(wrong, expected):
                    return StepReview(step, "wrong", f"{where} is not right yet.\nDiagnosis: "
                                      f"{mistake.message}")

    if mine.shape != expected.shape:
        return StepReview(step, "wrong", (
            f"{where} has {_shape_words(mine.shape)}, but {step} has "
            f"{_shape_words(expected.shape)}: {info.shape_words}."))

    decimals = [(i, j) for i, j in np.ndindex(mine.shape) if _is_decimal(typed[i, j])]
    near = all(abs(float(mine[idx]) - float(expected[idx])) < 5e-3 for idx in np.ndindex(mine.shape))
    if decimals and near:
        i, j = decimals[0]
        return StepReview(step, "wrong", (
            f"{where} has the right numbers, rounded to decimals (row {i + 1}, column {j + 1} "
            f"is {typed[i, j]}, for example). The worksheet is exact: write each one as a "
            f"fraction, like 3/16, and keep whole numbers whole."))

    wrong_parents = [p for p in info.parents if p in theirs and not _same(theirs[p], key[p])]
    if wrong_parents:
        try:
            own = info.compute(ws, {**key, **theirs})
        except (ValueError, OverflowError, ZeroDivisionError):
            own = None
        if own is not None and _same(mine, own):
            names = " and ".join(wrong_parents)
            return StepReview(step, "wrong", (
                f"{where} follows correctly from your {names}, but your {names} "
                f"{'is' if len(wrong_parents) == 1 else 'are'} not right yet. Fix "
                f"{wrong_parents[0]} first (check('worksheet_{wrong_parents[0]}', {label}) says "
                f"where), then redo this step with the corrected numbers."))

    def rounded(idx) -> bool:
        return _is_decimal(typed[idx]) and abs(float(mine[idx]) - float(expected[idx])) < 5e-3

    unequal = [idx for idx in np.ndindex(expected.shape) if mine[idx] != expected[idx]]
    bad = [idx for idx in unequal if not rounded(idx)]
    decimal_note = ""
    if len(bad) < len(unequal):
        n = len(unequal) - len(bad)
        them = "it as an exact fraction" if n == 1 else "those as exact fractions"
        decimal_note = (f" ({n} more {'is a decimal' if n == 1 else 'are decimals'} close to the "
                        f"right value: write {them} too)")
    i, j = bad[0]
    lines = [
        f"{where} is not right yet: {len(bad)} of {expected.size} entries "
        f"{'is' if len(bad) == 1 else 'are'} wrong{decimal_note}.",
        f"The first, reading row by row, is row {i + 1}, column {j + 1}, where you have "
        f"{typed[i, j]}.",
    ]
    if wrong_parents:
        names = " and ".join(wrong_parents)
        lines.append(f"{step} depends on {names}, and your {names} "
                     f"{'is' if len(wrong_parents) == 1 else 'are'} not right yet: fix "
                     f"{wrong_parents[0]} first.")
    else:
        lines.append(_entry_story(step, i, j, ws, key))
    if step == "A":
        column_sum = sum(mine[:, j], Fraction(0))
        if column_sum != 1:
            shown = (f"about {float(column_sum):.4g}" if any(_is_decimal(t) for t in typed[:, j])
                     else _fmt(column_sum))
            lines.append(f"A check you can do on paper: column {j + 1} of your A adds up to "
                         f"{shown}, and every column of A must add up to 1.")
    return StepReview(step, "wrong", "\n".join(lines))


def review_worksheet(answers, worksheet: Worksheet | None = None,
                     label: str = "WORKSHEET") -> list[StepReview]:
    """``review_step`` for every step, in the worksheet's order."""
    return [review_step(step, answers, worksheet, label) for step in STEPS]


# ----------------------------------------------------------------------------- registration

@dataclass
class WorksheetStep(Exercise):
    """One step of the published worksheet, graded on the numbers the learner typed.

    ``grader.check`` hands the answer (the whole ``WORKSHEET`` dict) to
    :meth:`check_answer` instead of running cases: there is one worksheet, and the
    feedback is about entries and the steps they come from.
    """

    step: str = "Q"
    worksheet: Worksheet = field(default_factory=published_worksheet)

    def check_answer(self, answers, hidden: bool = False) -> None:
        __tracebackhide__ = True
        review = review_step(self.step, answers, self.worksheet)
        if review.status == "right":
            print(f"✓ {self.name}: {review.message}")
            return
        if review.status == "missing":
            raise CheckFailed(f"{self.name} is not implemented yet: {review.message}")
        raise CheckFailed(f"{self.name}: {review.message}")


def _wrong_worksheet(key: dict, step: str, mistake: StepMistake, ws: Worksheet) -> dict:
    """The answer key with one step replaced by what ``mistake`` gives (as decimals for the
    float variants, the way a learner would type them)."""
    answers = dict(key)
    wrong = mistake.variants[0](ws, key)
    if mistake.close:
        wrong = np.round(wrong.astype(float), 2)
    answers[step] = wrong
    return answers


def _worksheet_exercises() -> list[WorksheetStep]:
    ws = published_worksheet()
    key = ws.key
    out = []
    for step in STEPS:
        misconceptions = [
            Misconception(m.name, _wrong_worksheet(key, step, m, ws), m.message)
            for m in WORKSHEET_MISTAKES[step]
        ]
        out.append(WorksheetStep(
            name=f"worksheet_{step}",
            reference=dict(key),
            cases=lambda rng, hidden: [],
            misconceptions=misconceptions,
            hint=f"{step} = {STEP_INFO[step].what}",
            step=step,
            worksheet=ws,
        ))
    return out


register(*_worksheet_exercises())
