"""Lesson 03 exercises: attention by hand, tokens as columns, exact fractions.

* The functions (``key_query_scores`` ... ``row_convention_attention``) are checked on
  seeded cases and compared exactly. Their catalogued mistakes are the reference's cores
  with one knob changed; scores transposed (Qᵀ K for Kᵀ Q) need no entry, since the
  relation between the results names them (``grader.learner.relations``).
* The ``WORKSHEET`` the learner fills in from paper is one typed exercise per step
  (``worksheet_Q`` ... ``worksheet_Z``, ``driver=Value()``), reviewed from
  recorded data alone (``grader.learner.typed``): the sealed key, the step's guide
  (``courseware.worksheet.guide``), and what each catalogued mistake gives from the key.
"""
from __future__ import annotations

import inspect
import math
from collections import namedtuple
from fractions import Fraction

import numpy as np

from courseware.worksheet import STEP_INFO, STEPS, guide, published_worksheet

from .. import LESSONS, BadInput, Case, Exercise, Meta, Misconception, Stated, knob
from ..stated import ADVICE, BAD_INPUTS, VALUES
from ..drawing import attention_quantities
from . import reference as ref
from .learner import Exact, Steps, Value, seal_key, seal_variant

LESSON = LESSONS.of(__name__)  # every exercise here registers through it

# ============================================================================ the functions
# ----------------------------------------------------------------------------- cases

def _ints(rng: np.random.Generator, shape, low: int, high: int) -> np.ndarray:
    return rng.integers(low, high + 1, size=shape)


FRACTIONS = np.vectorize(Fraction, otypes=[object])  # an array's entries as exact Fractions


def _variants(case: Case) -> list[Case]:
    """The same numbers as Fraction arrays, Python lists and floats: the check accepts
    any of them, and the result must be exact each time."""
    return [Case(tuple(convert(a) for a in case.args), note=note) for convert, note in (
        (FRACTIONS, "Fraction arrays"), (lambda a: np.asarray(a).tolist(), "Python lists"),
        (lambda a: np.asarray(a, dtype=np.float64), "floats"))]


# Numbers past what a float holds exactly: integers beyond 2**53, and fractions whose
# denominators pass a million (Fraction.limit_denominator's default). An answer that works
# in floats and turns the result back into Fractions is exact on the small cases only.
BIG = 2 ** 60 + 3
PRIMES = (1009, 1013)  # a product of two of them is past a million


def _beyond_floats(rng: np.random.Generator, shape) -> np.ndarray:
    """Fractions with numerators past 2**53 or denominators past a million."""
    whole = FRACTIONS(_ints(rng, shape, -3, 3)) * BIG
    parts = FRACTIONS(_ints(rng, shape, 1, 7)) / PRIMES[0] / PRIMES[1]
    return np.where(rng.integers(0, 2, size=shape).astype(bool), whole, parts + 1)


def score_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    shapes = [(1, 1, 1), (2, 2, 2), (2, 3, 2), (3, 4, 4), (3, 2, 4)] + (  # (d_k, T_k, T_q)
        [(1, 3, 3), (4, 2, 2), (2, 4, 1), (5, 3, 3), (3, 5, 4)] if hidden else [])
    cases = [Case((_ints(rng, (d, t_k), -1, 3), _ints(rng, (d, t_q), -1, 3)),
                  note="T_k ≠ T_q" if t_k != t_q else
                  "the worksheet's size" if (d, t_k) == (3, 4) else "")
             for d, t_k, t_q in shapes]
    halves = Case((FRACTIONS(_ints(rng, (2, 3), -3, 3)) / 2,
                   FRACTIONS(_ints(rng, (2, 3), -3, 3)) / 3), note="fractions")
    cases.append(Case((FRACTIONS(_ints(rng, (2, 3), -3, 3)) / PRIMES[0],
                       FRACTIONS(_ints(rng, (2, 2), -3, 3)) / PRIMES[1]),
                      note="fractions with large denominators"))
    cases.append(Case((_ints(rng, (2, 2), -3, 3) * BIG, _ints(rng, (2, 3), -3, 3)),
                      note="integers too large for a float"))
    return cases + [halves] + _variants(cases[3])


def half_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    cases = [Case((np.array([[-1]]),), note="a negative odd score"),
             Case((np.array([[3, -4, 5]]),), note="one row"),
             Case((np.array([[0, 1], [-3, 7]]),), note="odd scores"),
             Case((_ints(rng, (4, 4), -5, 9),), note="the worksheet's size"),
             Case((np.array([[2, 6, -2], [-5, 1, 9]]),), note="rectangular")]
    if hidden:
        cases += [Case((_ints(rng, (3, 5), -9, 9),), note="rectangular"),
                  Case((np.array([[-7], [-6], [11]]),), note="one column"),
                  Case((_ints(rng, (5, 5), -12, 12),), note="wider range")]
    cases.append(Case((_beyond_floats(rng, (3, 3)),), note="numbers too large for a float"))
    fractions = np.array([[Fraction(7, 3), Fraction(-5, 2)], [Fraction(1, 2), Fraction(-9, 4)]])
    return cases + [Case((fractions,), note="fractions")] + _variants(cases[3])


def power_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    cases = [Case((np.array([[0, 1]]),), note="one row"),
             Case((np.array([[0], [2]]),), note="one column"),
             Case((np.array([[1, 0], [0, 2]]),), note="2×2"),
             Case((np.array([[1, 0, 1], [3, 1, 2], [0, -1, 1], [0, 0, 0]]),),
                  note="a negative score"),
             Case((_ints(rng, (4, 4), -1, 3),), note="the worksheet's size")]
    if hidden:
        cases += [Case((_ints(rng, (3, 5), -2, 4),), note="rectangular"),
                  Case((_ints(rng, (5, 2), -1, 4),), note="rectangular"),
                  Case((np.array([[4, 4], [4, 4]]),), note="equal scores")]
    cases.append(Case((np.array([[40, 0, 3], [-2, 38, 1], [0, 1, 41]]),),
                      note="powers of 3 too large for a float"))
    return cases + _variants(cases[4])


def _attention_case(rng, d_in, T, d_k, d_v, weights: int = 1) -> Case:
    X = _ints(rng, (d_in, T), 0, 1)
    X[rng.integers(d_in), :] = 1  # no token of all zeros
    Ws = tuple(_ints(rng, (d, d_in), -weights, weights) for d in (d_k, d_k, d_v))
    return Case((X, *Ws), note="d_v = T" if T == d_v else "")


def _past_floats(rng) -> Case:
    """Weights up to ±4, so scaled scores differ by dozens and 3**S passes what a float
    holds exactly: only exact steps give the right fractions."""
    X = np.array([[1, 0, 1, 1], [1, 1, 0, 1], [0, 1, 1, 1], [1, 1, 1, 0]])
    W_Q = np.array([[4, 3, -2, 4], [-3, 4, 4, 2]])
    W_K = np.array([[4, -4, 3, 3], [2, 4, -3, 4]])
    W_V = _ints(rng, (3, 4), -4, 4)
    return Case((X, W_Q, W_K, W_V), note="scores too large for a float's powers of 3")


def attention_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    # (d_in, T, d_k, d_v); d_v = T for some, so that a Z computed as A V has a value too.
    # The published worksheet is not among the cases: a message never shows its key.
    sizes = [(2, 2, 1, 2), (3, 2, 2, 1), (4, 3, 2, 3), (6, 4, 3, 3), (5, 3, 3, 2)] + (
        [(3, 3, 2, 3), (6, 4, 3, 4), (4, 5, 2, 2), (2, 4, 2, 3)] if hidden else [])
    cases = [_attention_case(rng, *s) for s in sizes] + [_past_floats(rng)]
    return cases + _variants(cases[3])


def _as_rows(X):
    return [list(r) for r in zip(*X)] if isinstance(X, list) else np.asarray(X).T.copy()


def row_attention_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    """The column convention's cases, with X turned into X_rows (tokens as rows)."""
    return [Case((_as_rows(c.args[0]), *c.args[1:]), note=c.note)
            for c in attention_cases(rng, hidden)]


def by_hand_calls(X, W_Q, W_K, W_V):
    """The reference's calls on the learner's helpers (its stand-ins, see Exercise.calls)."""
    steps = ref.attention_by_hand(X, W_Q, W_K, W_V)
    return [("key_query_scores", (steps["K"], steps["Q"]), {}),
            ("floor_half", (steps["scores"],), {}),
            ("softmax3_columns", (steps["scaled"],), {})]


def row_convention_calls(X_rows, W_Q, W_K, W_V):
    """The row convention by the column one's helpers (the scaled scores transposed for
    the softmax), or by attention_by_hand itself on the transposed tokens."""
    steps = ref.row_convention_attention(X_rows, W_Q, W_K, W_V)
    return [("floor_half", (steps["scores"],), {}),
            ("softmax3_columns", (steps["scaled"].T,), {}),
            ("attention_by_hand", (np.asarray(X_rows, dtype=object).T, W_Q, W_K, W_V), {})]


def _bad(why: str, *arrays) -> BadInput:
    """A bad input of integer arrays of ones, given by their shapes, or of arrays as given."""
    return BadInput(Case(tuple(np.ones(a, int) if isinstance(a, (int, tuple)) else a
                               for a in arrays)), why)


# ----------------------------------------------------------------------------- messages

MSG_Q_KT = (
    "you multiplied Q Kᵀ, the row convention's formula. With tokens as columns, Q Kᵀ is "
    "d_k×d_k and adds up over the tokens instead of the features. The scores are Kᵀ Q: one "
    "row per key, one column per query, entry [i, j] = k_i · q_j."
)
USE_FLOOR = " Use math.floor(s / 2), or s // 2."
MSG_ROUND = (
    "you rounded s/2 to the nearest whole number (Python's round, which sends 3/2 to 2). The "
    "worksheet takes the floor, the largest whole number at most s/2: floor(3/2) = 1 and "
    "floor(-1/2) = -1." + USE_FLOOR
)
MSG_TRUNCATE = (
    "positive scores come out right, but negative odd scores are one too high: you rounded "
    "toward zero (int(s / 2) or np.trunc), and int(-1/2) is 0. Floor goes down, also below "
    "zero: floor(-1/2) = -1 and floor(-3/2) = -2." + USE_FLOOR
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
    "column{axis}, not its row."
)
MSG_ROW_SUMS_BROADCAST = (
    "you divided by the row sums (a sum along axis=1) without keepdims. That sum has one "
    "entry per row, and NumPy lines those entries up with the columns when it divides: "
    "entry [i, j] is divided by the sum of row j, so neither the rows nor the columns of "
    "your weights add up to 1. Here each column holds one query's weights: divide every "
    "power of 3 by the sum of its own column."
)
MSG_UNSCALED_POWERS = (
    "you raised 3 to the scores themselves. The softmax step uses the scaled scores, "
    "floor(scores / 2), the step before it: it stands in for the division by √3 and keeps "
    "the powers small."
)
MSG_WHOLE_MATRIX = (
    "you divided by the sum of the whole matrix, so the entries of all columns together "
    "add up to 1. Each column is one query's weights and is normalised on its own: divide "
    "by the sum of its column."
)
MSG_V_AT = (
    "you computed V Aᵀ: column j of your Z mixes the values with row j of A. The weights of "
    "query j are column j of A (the column that sums to 1), so Z = V A."
)


# ----------------------------------------------------------------------------- registration

STEPS_COMPARED = Steps(order=list(STEPS),
                       parents={step: list(STEP_INFO[step]["parents"]) for step in STEPS})


def columns_with(**setting):
    """``attention_by_hand`` with one setting of the column convention changed."""
    return knob(ref._steps, **{**ref.COLUMN_CONVENTION, **setting})


def rows_with(**setting):
    """``row_convention_attention`` with one setting of the row convention changed."""
    return knob(ref._steps, **{**ref.ROW_CONVENTION, **setting})


# The lesson's words on its given lines, for every function.
AS_FRACTIONS = Stated("raises a `ValueError` naming the argument when the input is not a matrix "
                      "of numbers", BAD_INPUTS, "should reject this input with a ValueError")


def _checked(name: str, seed: int, cases, mistakes: list, bad: list, hint: str, **more):
    """The exercise of the graded function ``name``: the reference's, with its arguments
    named as the reference names them, compared exactly unless ``more`` says otherwise."""
    reference = getattr(ref, name)
    return Exercise(name=name, reference=reference, cases=cases, misconceptions=mistakes,
                    bad_inputs=bad, arg_names=tuple(inspect.signature(reference).parameters),
                    hint=hint, seed=seed, **{"compare": Exact(), **more})


LESSON.register(
    _checked(
        "key_query_scores", 301, score_cases,
        [Misconception("Q Kᵀ", knob(ref._scores, formula="Q Kᵀ"), MSG_Q_KT)],
        [_bad("K has 3 rows (d_k = 3) but Q has 2", (3, 4), (2, 4)),
         _bad("K is a vector, not a matrix with one key per column", 3, (3, 2)),
         _bad("K contains NaN", np.array([[1, np.nan]]), np.ones((1, 2)))],
        "With tokens as columns, entry [i, j] is key i dotted with query j: a column of K with "
        "a column of Q. On the input above, check the shape first: one row per key, one column "
        "per query.",
        quantities=lambda K, Q: attention_quantities(np.transpose(Q), np.transpose(K)),
        stated=(Stated("Returns T_k×T_q Fractions", VALUES, "the exercise works in Fractions"),
                AS_FRACTIONS),
    ),
    _checked(
        "floor_half", 302, half_cases,
        [Misconception("rounds half to even", knob(ref._scaled, scaling="round(s/2)"), MSG_ROUND),
         Misconception(
             "rounds halves up", knob(ref._scaled, scaling="floor(s/2 + 1/2)"),
             "you rounded halves up (or took the ceiling), so 1/2 became 1 and 3/2 became 2. "
             "The worksheet takes the floor, which goes down: floor(1/2) = 0, floor(3/2) = 1 "
             "and floor(-1/2) = -1." + USE_FLOOR),
         Misconception("truncates toward zero", knob(ref._scaled, scaling="int(s/2)"),
                       MSG_TRUNCATE),
         Misconception("no floor", knob(ref._scaled, scaling="s/2"), MSG_NO_FLOOR),
         Misconception("divides by √3", knob(ref._scaled, scaling="s/√3"), MSG_SQRT3),
         Misconception(
             "goes through a float", knob(ref._scaled, scaling="floor(float(s)/2)"),
             "you turned the scores into floats on the way (float(s), np.floor on a float array "
             "or a float division), and a float holds only 53 bits: 2**60 + 3 becomes 2**60. "
             "Stay with whole numbers and Fractions: s // 2 is exact for both.")],
        [_bad("S contains NaN", np.array([[1.0, np.nan]])),
         _bad("S is a vector, not a matrix of scores", np.array([1, 2, 3])),
         _bad("S holds strings, not numbers", [["3", "4"]])],
        "floor(s / 2) is the largest whole number that is at most s / 2; below zero it moves "
        "away from zero (floor(-1/2) is -1). Try the negative odd scores of the input above.",
        stated=(Stated("floor(-1/2) is -1", VALUES, "you rounded toward zero"), AS_FRACTIONS),
    ),
    _checked(
        "softmax3_columns", 303, power_cases,
        [Misconception("softmax along rows", knob(ref._softmax3, normalise="rows"),
                       MSG_SOFTMAX_ROWS.format(axis=" (axis=0)")),
         Misconception("row sums without keepdims",
                       knob(ref._softmax3, normalise="rows", keepdims=False),
                       MSG_ROW_SUMS_BROADCAST),
         Misconception(
             "e instead of 3", knob(ref._softmax3, base=math.e),
             "you used e**s (np.exp). The worksheet uses 3**s, so that every weight is an "
             "exact fraction you can write down."),
         Misconception(
             "floats", knob(ref._softmax3, base=3.0),
             "your weights are floats, and 1/10 or 1/3 cannot be stored exactly as a float. "
             "Keep every number a Fraction. Two traps: Fraction(3) ** S with S a whole array "
             "turns the 3 into the float 3.0, and 3 ** s gives a plain int for s >= 0, so that "
             "dividing two of them gives a float. Raise a Fraction entry by entry: "
             "Fraction(3) ** s for each s.")],
        [_bad("S holds 1/2, and 3 to the power 1/2 is not a fraction",
              np.array([[Fraction(1, 2)]], dtype=object)),
         _bad("S contains infinity", np.array([[0.0, np.inf]])),
         _bad("S is a vector, not a matrix", np.array([0, 1]))],
        "Each column holds one query's weights: raise 3 to each entry of the column, exactly, "
        "as fractions, then divide by that column's sum. Every column of the result must sum "
        "to exactly 1.",
        stated=(Stated("as exact Fractions", VALUES, "your weights are floats"),
                AS_FRACTIONS),
    ),
    _checked(
        "attention_by_hand", 304, attention_cases,
        [Misconception("row sums without keepdims", columns_with(normalise="rows", keepdims=False),
                       MSG_ROW_SUMS_BROADCAST),
         Misconception("rounds instead of floor", columns_with(scaling="round(s/2)"), MSG_ROUND),
         Misconception("truncates toward zero", columns_with(scaling="int(s/2)"), MSG_TRUNCATE),
         Misconception("Z = V Aᵀ", columns_with(mix="V Aᵀ"), MSG_V_AT)],
        [_bad("W_Q has 5 columns but X has 6 rows (features)", (6, 4), (3, 5), (3, 6), (3, 6)),
         _bad("W_Q gives 3-dimensional queries but W_K 2-dimensional keys",
              (6, 4), (3, 6), (2, 6), (3, 6)),
         _bad("X is a vector, not a matrix of tokens", 6, (3, 6), (3, 6), (3, 6))],
        "Follow the worksheet step by step: the projections, the scores, the floor, the powers "
        "of 3 normalised per column, then Z from V and A. The message shows the first step "
        "that differs: fix that one first (your functions above do the middle steps).",
        calls=by_hand_calls, compare=STEPS_COMPARED,
        stated=(Stated("every step exact", VALUES, "the exercise works in Fractions"),
                Stated("Your three functions do the middle steps.", ADVICE), AS_FRACTIONS),
    ),
    _checked(
        "row_convention_attention", 305, row_attention_cases,
        [Misconception(
             "Z = Aᵀ V", rows_with(mix="Aᵀ V"),
             "you computed Aᵀ V: row i of your Z mixes the values with column i of A. In the "
             "row convention the weights of query i are row i of A (the row that sums to 1): "
             "Z = A V.")],
        [_bad("X_rows has 5 columns (features) but the weights have 6",
              (4, 5), (3, 6), (3, 6), (3, 6)),
         _bad("W_Q gives 3-dimensional queries but W_K 2-dimensional keys",
              (4, 6), (3, 6), (2, 6), (3, 6))],
        "With tokens as rows, every step is the transpose of the column convention's: check "
        "which side each matrix is multiplied from, and which axis of A sums to 1.",
        calls=row_convention_calls, compare=STEPS_COMPARED,
        stated=(AS_FRACTIONS,),
    ),
)


# ============================================================================ the worksheet

PUBLISHED = published_worksheet()
KEY = ref.answer_key(PUBLISHED)
GUIDE = guide(PUBLISHED)
SALT = "03_attention_by_hand/WORKSHEET"  # the recording holds the key sealed with this

# A known wrong way to do one step: ``variants``, what it gives from the answer key (a
# mistake may be made more than one way); ``close``, the variants are decimals, matched
# to two places.
StepMistake = namedtuple("StepMistake", "name variants message close", defaults=(False,))


def _projection_mistakes(letter: str) -> list[StepMistake]:
    others = [o for o in "QKV" if o != letter]
    return [
        StepMistake(
            "tokens as rows", (KEY[letter].T.copy(),),
            f"your {letter} has one row per token: that is {letter} in the row convention. Here "
            f"tokens are the columns of X, so {letter} = W_{letter} X has one column per token.",
        ),
        StepMistake(
            "another weight matrix", tuple(KEY[o] for o in others),  # W_o X is the key's o
            f"these numbers come from another weight matrix: {letter} = W_{letter} X uses "
            f"W_{letter}, not W_{others[0]} or W_{others[1]}.",
        ),
    ]


def _scaled_by(*scalings: str) -> tuple:
    return tuple(ref._scaled(KEY["scores"], scaling=s) for s in scalings)


def _mixed(formula: str, A=None) -> tuple:
    return (ref._evaluate(formula, V=KEY["V"], A=KEY["A"] if A is None else A),)


POWERS = ref._softmax3(KEY["scaled"], normalise=None)

WORKSHEET_MISTAKES = {
    **{letter: _projection_mistakes(letter) for letter in "QKV"},
    "scores": [
        StepMistake(
            "transposed scores (Qᵀ K)", (ref._scores(KEY["K"], KEY["Q"], formula="Qᵀ K"),),
            "your scores are the transpose of Kᵀ Q: you put q_i · k_j in row i, column j "
            "(that is Qᵀ K, the layout Q Kᵀ gives in the row convention). With tokens as "
            "columns, row i belongs to key i and column j to query j: entry [i, j] is "
            "k_i · q_j, so write Kᵀ Q."),
        StepMistake("Q Kᵀ", (ref._scores(KEY["K"], KEY["Q"], formula="Q Kᵀ"),), MSG_Q_KT),
    ],
    "scaled": [
        StepMistake(
            "rounded",
            _scaled_by("floor(s/2 + 1/2)", "sign(s)·floor(|s|/2 + 1/2)", "round(s/2)"),
            "you rounded s/2 to the nearest whole number, so 3/2 became 2. The worksheet takes "
            "the floor, the largest whole number at most s/2: floor(3/2) = 1, floor(1/2) = 0 "
            "and floor(-1/2) = -1.",
        ),
        StepMistake(
            "truncated toward zero", _scaled_by("int(s/2)"),
            "the positive scores are right, but not the negative odd ones: you rounded "
            "toward zero, so -1/2 became 0. Floor goes down, also below zero: "
            "floor(-1/2) = -1, the largest whole number at most -1/2.",
        ),
        StepMistake("no floor", _scaled_by("s/2"), MSG_NO_FLOOR),
        StepMistake("divided by √3", _scaled_by("s/√3"), MSG_SQRT3, close=True),
    ],
    "A": [
        StepMistake("normalised along rows", (ref._softmax3(KEY["scaled"], normalise="rows"),),
                    MSG_SOFTMAX_ROWS.format(axis="")),
        StepMistake("not normalised", (POWERS,),
                    "these are the powers of 3 themselves. Divide each one by the sum of its "
                    "column, so that every column of A adds up to 1."),
        StepMistake("normalised by the whole matrix",
                    (ref._softmax3(KEY["scaled"], normalise="matrix"),), MSG_WHOLE_MATRIX),
        StepMistake("powers of the unscaled scores", (ref._softmax3(KEY["scores"]),),
                    MSG_UNSCALED_POWERS),
        StepMistake("e instead of 3", (ref._softmax3(KEY["scaled"], base=math.e),),
                    "you used powers of e. The worksheet uses powers of 3, so that every "
                    "weight is an exact fraction you can write down.", close=True),
    ],
    "Z": [
        StepMistake("Z = V Aᵀ", _mixed("V Aᵀ"), MSG_V_AT),
        StepMistake("A V with V turned to rows", _mixed("A Vᵀ"),
                    "you computed A V, the row convention's order, with V's tokens turned "
                    "into rows, which gives a 4×3 matrix and mixes with the rows of A. With "
                    "tokens as columns Z = V A: column j of Z mixes the value vectors with "
                    "the weights in column j of A."),
        StepMistake("Z with tokens as rows", _mixed("Aᵀ Vᵀ"),
                    "your numbers are right but laid out with one row per token: that is Zᵀ, "
                    "the row convention's layout. Here Z = V A has one column per token."),
        StepMistake("powers not divided", _mixed("V A", A=POWERS),
                    "you mixed the values with the powers of 3 before dividing by the column "
                    "sums. Use the weights A, whose columns add up to 1."),
    ],
}


def _worksheet_step(step: str) -> Exercise:
    """One step's typed exercise. A mistake's sample is the WORKSHEET of a learner who
    makes it: the key with ``step`` replaced by its first variant (to two decimals where
    it gives decimals, the way a learner would type them)."""
    meta = Meta(step=step, label="WORKSHEET", guide=GUIDE[step])
    return Exercise(
        name=f"worksheet_{step}",
        reference=dict(KEY),
        cases=lambda rng, hidden: [Case((), note="the published worksheet", meta=meta)],
        misconceptions=[
            Misconception(
                m.name, {"variants": [seal_variant(v, SALT, m.close) for v in m.variants],
                         "close": m.close}, m.message,
                sample={**KEY, step: np.round(np.asarray(m.variants[0], dtype=float), 2)
                        if m.close else m.variants[0]})
            for m in WORKSHEET_MISTAKES[step]
        ],
        driver=Value(),
        record=lambda key: seal_key(key, SALT),
        hint=STEP_INFO[step]["what"],
        # Only A and Z hold fractions: a whole number typed as 2.0 is read as 2.
        stated=(Stated("fractions as `3/16`", VALUES, "write each one as a fraction, like 3/16"),)
        if step in ("A", "Z") else (),
    )


LESSON.register(*(_worksheet_step(step) for step in STEPS))
