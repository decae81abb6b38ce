"""Lesson 01 exercises: cases, misconceptions and rules for the matrix-product readings.

Every catalogued mistake is a core of ``reference.py`` with one knob changed, or a small
function below where no reading has it (another product than A B: :func:`_product_of`). A
transposed result needs no entry: the relation between the result and the expected one
names it (``grader.learner.relations``).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ...learner.shortcuts import NUMPY_PRODUCT_OBJECTS, NUMPY_PRODUCTS, Rules
from ...learner.validation import matmul_operands
from .. import LESSONS, LOOP, BadInput, Case, Exercise, Misconception, Stated, knob
from ..stated import BAD_INPUTS, SOURCE_SCAN
from ..drawing import attention_quantities, normal, scaled, small_ints, with_variants
from ..messages import transposed_with_dot_t
from . import reference as ref

LESSON = LESSONS.of(__name__)  # every exercise here registers through it

LOOP_RULES = Rules(
    names=NUMPY_PRODUCTS,
    objects=NUMPY_PRODUCT_OBJECTS,
    matmul_operator=True,
    why="This exercise is about reading the product by hand: build it from "
    "elementwise products, sums and slices, without a ready-made matrix product.",
)
NO_LOOP_RULES = Rules(
    loops=True,
    why="Let NumPy do the batch: one batched product (np.matmul or @) handles every "
    "batch item at once, with no Python loop.",
)
EINSUM_RULES = Rules(
    loops=True,
    names={k: v for k, v in NUMPY_PRODUCTS.items() if k != "einsum"},
    matmul_operator=True,
    required={"einsum": "np.einsum"},
    why="Write it as a single np.einsum call with subscripts for the batch, query, key "
    "and feature axes.",
)


# ----------------------------------------------------------------------------- cases

def _product_note(n: int, k: int, m: int) -> str:
    return "1×1" if n == k == m == 1 else "k = 1" if k == 1 else \
        "square" if n == k == m else "rectangular"


def product_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    """2-D products: 1×1, k = 1, rectangular, square, large values, and variants. Small
    products with n < m and with n > m, so that loops with swapped bounds or swapped
    indices run past the end of a matrix in each direction."""
    shapes = [(1, 1, 1), (2, 1, 1), (1, 2, 1), (2, 1, 3), (2, 3, 2), (3, 2, 4), (2, 2, 2),
              (3, 3, 3)] + ([(1, 4, 1), (4, 1, 1), (1, 1, 5), (5, 3, 2), (4, 4, 4), (6, 5, 7),
                             (1, 6, 6)] if hidden else [])
    cases = [Case((small_ints(rng, (n, k)), small_ints(rng, (k, m))), note=_product_note(n, k, m))
             for n, k, m in shapes]
    cases.append(Case((normal(rng, (5, 4)), normal(rng, (4, 6))), note="random floats"))
    cases.append(scaled(Case((normal(rng, (3, 4)), normal(rng, (4, 2)))), 1e6, "large values"))
    return with_variants(cases, hidden)


def _batched_note(a: tuple, b: tuple) -> str:
    return "broadcast [n, k] @ [b, k, m]" if len(a) < len(b) else "no batch axis" \
        if len(a) == 2 else "square" if len(set(a + b)) == 1 else "batched"


def batched_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    shapes = [((1, 1, 1), (1, 1, 1)), ((2, 2, 3), (2, 3, 2)), ((3, 2, 2), (3, 2, 2)),
              ((2, 3), (4, 3, 2)), ((2, 3, 4), (2, 4, 3))]
    if hidden:
        shapes += [((1, 2, 3), (1, 3, 4)), ((4, 4), (2, 4, 4)), ((2, 3, 2, 4), (2, 3, 4, 1)),
                   ((5, 1, 3), (5, 3, 6)), ((3, 3), (3, 3)), ((2, 1, 2, 3), (1, 4, 3, 2))]
    cases = [Case((small_ints(rng, a), small_ints(rng, b)), note=_batched_note(a, b))
             for a, b in shapes]
    cases.append(Case((normal(rng, (3, 4, 5)), normal(rng, (3, 5, 2))), note="random floats"))
    return with_variants(cases, hidden)


def score_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    shapes = [((1, 1), (1, 1)), ((2, 3), (4, 3)), ((2, 3, 4), (2, 3, 4)), ((3, 3), (3, 3)),
              ((2, 2, 3), (2, 4, 3))]
    if hidden:
        shapes += [((1, 5), (2, 5)), ((2, 3, 2, 4), (2, 3, 5, 4)), ((4, 2), (4, 2)),
                   ((3, 1, 4), (3, 6, 4))]
    cases = [Case((small_ints(rng, q), small_ints(rng, k)),
                  note="batched" if len(q) > 2 else "one sequence") for q, k in shapes]
    cases.append(Case((normal(rng, (2, 3, 4)), normal(rng, (2, 5, 4))), note="T_q ≠ T_k"))
    return with_variants(cases, hidden)


def convex_rows(rng: np.random.Generator, shape) -> np.ndarray:
    """Random rows of non-negative weights summing to 1, with some exact zeros."""
    w = rng.random(shape) * (rng.random(shape) > 0.25)
    w[..., 0] += 0.1  # no all-zero row
    return w / w.sum(axis=-1, keepdims=True)


def mixture_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    cases = [
        Case((np.array([[1.0]]), small_ints(rng, (1, 2))), note="one weight"),
        Case((np.array([[0.5, 0.5], [1.0, 0.0]]), small_ints(rng, (2, 3))), note="averages"),
        # Columns of this W do not sum to 1: only the rows must.
        Case((np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.5, 0.5, 0.0]]),
              small_ints(rng, (3, 2))), note="columns need not sum to 1"),
        Case((convex_rows(rng, (3, 4)), normal(rng, (4, 2))), note="rectangular"),
        Case((convex_rows(rng, (2, 3, 3)), normal(rng, (2, 3, 4))), note="batched"),
    ]
    if hidden:
        cases += [
            Case((np.eye(4), normal(rng, (4, 3))), note="one-hot weights copy rows"),
            Case((convex_rows(rng, (5, 2)), normal(rng, (2, 6))), note="rectangular"),
            Case((convex_rows(rng, (2, 2, 4, 3)), normal(rng, (2, 2, 3, 2))), note="batched"),
        ]
    return with_variants(cases, hidden)


def _bad(a_shape, b_shape, why: str) -> BadInput:
    return BadInput(Case((np.ones(a_shape), np.ones(b_shape))), why)


def _bad_weights(row: list, why: str) -> BadInput:
    return BadInput(Case((np.array([row]), np.arange(6.0).reshape(3, 2))), why)


# ----------------------------------------------------------------------------- mistakes
# Written the way a learner would write them.

def _elementwise(A, B):
    A, B = matmul_operands(A, B)
    return A * B


def _product_of(A, B, *, formula: str):
    """A product other than A B, which a reading that mixes up rows and columns computes:
    ``formula`` is "Aᵀ B", "A Bᵀ" or "(B A)ᵀ" (a ValueError where its shapes do not fit)."""
    A, B = matmul_operands(A, B)
    X, Y = {"Aᵀ B": (A.T, B), "A Bᵀ": (A, B.T), "(B A)ᵀ": (B, A)}[formula]
    if X.shape[1] != Y.shape[0]:
        raise ValueError(f"shapes {X.shape} and {Y.shape} do not fit")
    C = (X[:, :, None] * Y[None, :, :]).sum(axis=1)
    return C.T if formula == "(B A)ᵀ" else C


def _checks_columns(W, V):
    W, V = np.asarray(W, dtype=float), np.asarray(V, dtype=float)
    if np.any(np.abs(W.sum(axis=-2) - 1) > 1e-6):
        raise ValueError("columns of W must sum to 1")
    return np.matmul(W, V)


def _first_batch_item(A, B):
    """Every batch item of the result is the product of batch item 0."""
    C = np.matmul(np.asarray(A, dtype=float), np.asarray(B, dtype=float))
    return np.broadcast_to(C[(0,) * (C.ndim - 2)], C.shape).copy()


A_T_B, A_B_T = knob(_product_of, formula="Aᵀ B"), knob(_product_of, formula="A Bᵀ")


NO_PRODUCTS = Stated("you may **not** use `@`, `np.matmul`, `np.dot`, `np.einsum`, `np.inner`, "
                     "`np.tensordot` or `np.vdot`", SOURCE_SCAN, "asks you to do by hand")
OPERANDS = Stated("`matmul_operands` turns lists into arrays and raises a `ValueError` when the "
                  "shapes do not fit", BAD_INPUTS, "should reject this input with a ValueError")


# Only the last term kept: named by a rule (overwritten instead of added to) where the
# reference adds with `+=` (tests/test_rules_dropped.py), catalogued where it does not.
OVERWRITES = Misconception(
    "overwrites instead of accumulating", knob(ref._outer, accumulate=False),
    "your result equals the last term of the sum alone. Inside the loop over p you probably "
    "wrote `=` where you need `+=`, so each new term replaced the ones before.")


def _product_exercise(name, reference, extra, hint, loop: str = "", words: str = ""):
    """A loop version of the product; ``loop`` names the loop it must have, in the words of
    its docstring (``words``)."""
    rules = dataclasses.replace(LOOP_RULES, required={LOOP: loop}) if loop else LOOP_RULES
    looped = (Stated(words, SOURCE_SCAN, "should use a Python loop"),) if loop else ()
    return Exercise(
        name=name,
        reference=reference,
        cases=product_cases,
        misconceptions=[
            Misconception(
                "elementwise product", _elementwise,
                "you multiplied entry by entry (`A * B`). A matrix product sums over the "
                "shared axis k: C[i, j] = sum over p of A[i, p] * B[p, j]."),
            *extra,
        ],
        bad_inputs=[_bad((2, 3), (2, 3), "A has 3 columns but B has 2 rows"),
                    _bad(3, (3, 2), "A is a vector, not a matrix"),
                    _bad((2, 2, 2), (2, 2), "A has three axes, not two")],
        rules=rules,
        arg_names=("A", "B"),
        hint=hint,
        quantities=lambda A, B: {"k": np.shape(A)[-1]},
        probes=("A", "B"),
        stated=(NO_PRODUCTS, *looped, OPERANDS),
    )


LESSON.register(
    _product_exercise("matmul_dot", ref.matmul_dot, [
        OVERWRITES,
        Misconception(
            "running sum never reset", knob(ref._dot, reset=False),
            "each entry holds the sum of all the entries before it. Your running total "
            "starts at 0 once, outside the loops; start it at 0 again for every (i, j)."),
        Misconception(
            "integer result array", knob(ref._dot, dtype=int),
            "your result is the product with every fraction cut off: the array you fill has "
            "an integer dtype (`np.zeros(..., dtype=int)`, or `np.zeros_like` of an integer "
            "array), so each float is truncated when it is stored. Create C with a float "
            "dtype."),
        Misconception(
            "loop bounds swapped", knob(ref._dot, swap_bounds=True),
            "your loops run i over the columns of B and j over the rows of A: the two ranges "
            "are swapped. On a product with as many rows as columns nothing shows, but here A "
            "has n rows and B has m columns with n ≠ m, so an index runs past the end: that "
            "is the IndexError. i numbers the rows of C, which are the rows of A; j numbers "
            "its columns, which are the columns of B."),
    ], "C[i, j] pairs row i of A with column j of B: multiply them entry by entry and add. "
       "Work the smallest input above by hand and find the first entry of yours that differs.",
        loop="a Python loop (over i and j)", words="with a Python loop (over i and j: one entry at a time)"),
    _product_exercise("matmul_rows", ref.matmul_rows, [
        Misconception(
            "weights from a column of A", A_T_B,
            "you weighted the rows of B with column i of A (`A[:, i]`). The weights for row i "
            "of C are row i of A: `A[i, p]` multiplies row p of B."),
Misconception(
            "accumulator row not reset", knob(ref._rows, reset=False),
            "row i of your result holds rows 0 to i of the product added together. The row "
            "you accumulate into must start at zero again for every i."),
        Misconception(
            "mixes the columns of B", A_B_T,
            "you combined the columns of B (`B[:, p]`). In the row reading, row i of C is a "
            "combination of the rows of B: `A[i, p] * B[p, :]`."),
    ], "Row i of C is a weighted sum of the rows of B, and its weights are row i of A. Build "
       "row 0 of the input above by hand, term by term, and compare it with yours.",
        loop="a Python loop (over i and p)", words="with a Python loop (over i and p)"),
    _product_exercise("matmul_cols", ref.matmul_cols, [
        Misconception(
            "weights from a row of B", A_B_T,
            "you weighted the columns of A with row j of B (`B[j, p]`). The weights for "
            "column j of C are column j of B: `B[p, j]` multiplies column p of A."),
Misconception(
            "accumulator column not reset", knob(ref._cols, reset=False),
            "column j of your result holds columns 0 to j of the product added together. The "
            "column you accumulate into must start at zero again for every j."),
        Misconception(
            "mixes the rows of A", A_T_B,
            "you combined the rows of A (`A[p, :]`). In the column reading, column j of C is "
            "a combination of the columns of A: `B[p, j] * A[:, p]`."),
    ], "Column j of C is a weighted sum of the columns of A, and its weights are column j of "
       "B. Build column 0 of the input above by hand, term by term, and compare it with "
       "yours.", loop="a Python loop (over j and p)", words="with a Python loop (over j and p)"),
    _product_exercise("matmul_outer", ref.matmul_outer, [
        OVERWRITES,
        Misconception(
            "outer product of a row of A and a column of B", knob(_product_of, formula="(B A)ᵀ"),
            "you took outer products of row p of A with column p of B. The outer reading "
            "pairs column p of A (`A[:, p]`) with row p of B (`B[p, :]`)."),
        Misconception(
            "outer product of two columns", A_B_T,
            "you paired column p of A with column p of B. The second factor of each outer "
            "product is row p of B (`B[p, :]`)."),
    ], "C is a sum of k rank-1 matrices, one for each p, each made from a column of A and a "
       "row of B. Print the terms for the input above and check that they add up to A B.",
       loop="a Python loop (over p)", words="with a Python loop (over p)"),
)


LESSON.register(Exercise(
    name="batched_matmul",
    reference=ref.batched_matmul,
    cases=batched_cases,
    misconceptions=[
        Misconception(
            "np.dot on stacks", knob(ref._batched, product=np.dot),
            "you used np.dot. On arrays with more than two axes np.dot pairs every matrix of "
            "A with every matrix of B (a [b, n, k] by [b, k, m] product has shape "
            "[b, n, b, m]). np.matmul, or @, multiplies batch item with batch item."),
        Misconception(
            "first batch item only", _first_batch_item,
            "every batch item of your result is the product of batch item 0. Item b of the "
            "result must come from its own pair: item b of A times item b of B."),
    ],
    bad_inputs=[_bad((2, 2, 3), (2, 2, 3), "A has 3 columns but B has 2 rows"),
                _bad((2, 2, 3), (3, 3, 2), "the batch axes 2 and 3 do not broadcast"),
                _bad(3, (2, 3, 2), "A is a vector, not a matrix")],
    rules=NO_LOOP_RULES,
    arg_names=("A", "B"),
    quantities=lambda A, B: {"k": np.shape(A)[-1]},
    probes=("A", "B"),
    stated=(Stated("with no Python loop", SOURCE_SCAN, "with no Python loop"),),
    hint=("NumPy's matrix product treats every axis before the last two as a batch axis and "
          "broadcasts those axes, so one call handles the whole batch. Compare your result's "
          "shape with the expected one above."),
))


LESSON.register(Exercise(
    name="einsum_scores",
    reference=ref.einsum_scores,
    cases=score_cases,
    misconceptions=[
        Misconception(
            "K used untransposed", knob(ref._einsum_scores, subscripts="...qd,...dk->...qk"),
            "your subscripts read K as [d, T_k] (`...dk`). K holds one key per row, [T_k, d], "
            "so its subscripts are `...kd`; the shared letter d is summed."),
        Misconception(
            "K.T on a batched array",
            knob(ref._einsum_scores, subscripts="...qd,...dk->...qk", k_dot_t=True),
            transposed_with_dot_t("d", "einsum needs no transpose at all: give K the "
                                       "subscripts `...kd`.")),
    ],
    bad_inputs=[_bad((2, 3), (2, 4), "Q has d = 3 but K has d = 4"),
                _bad(3, (2, 3), "Q is a vector, not a matrix")],
    rules=EINSUM_RULES,
    stated=(Stated("Use np.einsum", SOURCE_SCAN, "should use np.einsum"),
            Stated("with no loop and no other product", SOURCE_SCAN, "asks you to do by hand")),
    arg_names=("Q", "K"),
    quantities=attention_quantities,
    probes=("Q", "K"),
    hint=("In an einsum, a letter that appears in both inputs but not in the output is "
          "summed. Give each axis its own letter (the batch axes, the queries, the keys, the "
          "features): which one do a query and a key share?"),
))


LESSON.register(Exercise(
    name="weighted_average_rows",
    reference=ref.weighted_average_rows,
    cases=mixture_cases,
    misconceptions=[
        Misconception(
            "plain average", knob(ref._weighted_average, weights="uniform"),
            "every output row is the plain average of the rows of V: the weights were "
            "ignored. Row i of the result is sum over j of W[i, j] * V[j]."),
        Misconception(
            "checks column sums", _checks_columns,
            "your function rejects a valid W. It checks that the columns of W sum to 1, but "
            "each row of W holds the weights of one mixture, so it is each row that must sum "
            "to 1 (the sums along the last axis)."),
    ],
    bad_inputs=[
        _bad_weights([0.5, 0.25, 0.0], "row 0 of W sums to 0.75, not 1"),
        _bad_weights([0.75, 0.5, 0.0], "row 0 of W sums to 1.25, not 1"),
        _bad_weights([0.5, 0.500005, 0.0], "row 0 of W sums to 1.000005: more than 1e-6 from 1"),
        _bad_weights([1.5, -0.5, 0.0], "W has a negative weight (-0.5), even though the row "
                                       "sums to 1"),
        _bad_weights([0.5, 0.5], "W has 2 weights per row but V has 3 rows"),
        _bad_weights([np.nan, 0.5, 0.5], "W contains NaN"),
        _bad_weights([np.inf, 0.5, 0.5], "W contains an infinite weight"),
    ],
    arg_names=("W", "V"),
    probes=("V",),
    stated=(Stated("raise a `ValueError` for them instead of returning a mixture", BAD_INPUTS,
                   "should reject this input with a ValueError"),
            Stated("a `ValueError` with a non-empty message", BAD_INPUTS,
                   "raised ValueError with an empty message")),
    hint=("Each row of W holds the weights of one output row: check that they are "
          "non-negative and sum to 1 before mixing. Row i of the result mixes the rows of V "
          "with the weights in row i of W."),
))
