"""Lesson 01 exercises: cases, misconceptions and rules for the matrix-product readings."""
from __future__ import annotations

import numpy as np

from ...learner.shortcuts import NUMPY_PRODUCT_OBJECTS, NUMPY_PRODUCTS, Rules
from ...learner.validation import matmul_operands
from .. import BadInput, Case, Exercise, Misconception, register
from ..cases import normal, scaled, small_ints, with_variants
from . import reference as ref

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

def product_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    """2-D products: 1×1, k = 1, rectangular, square, large values, and variants. Small
    products with n < m and with n > m, so that loops with swapped bounds or swapped
    indices run past the end of a matrix in each direction."""
    shapes = [(1, 1, 1), (2, 1, 1), (1, 2, 1), (2, 1, 3), (2, 3, 2), (3, 2, 4), (2, 2, 2),
              (3, 3, 3)]
    if hidden:
        shapes += [(1, 4, 1), (4, 1, 1), (1, 1, 5), (5, 3, 2), (4, 4, 4), (6, 5, 7), (1, 6, 6)]
    cases = []
    for n, k, m in shapes:
        note = "1×1" if (n, k, m) == (1, 1, 1) else ("k = 1" if k == 1 else "")
        if not note:
            note = "square" if n == k == m else "rectangular"
        cases.append(Case((small_ints(rng, (n, k)), small_ints(rng, (k, m))), note=note))
    big = Case((normal(rng, (5, 4)), normal(rng, (4, 6))), note="random floats")
    cases.append(big)
    cases.append(scaled(Case((normal(rng, (3, 4)), normal(rng, (4, 2)))), 1e6, "large values"))
    return with_variants(cases, hidden)


def product_bad_inputs() -> list[BadInput]:
    return [
        BadInput(Case((np.ones((2, 3)), np.ones((2, 3)))), "A has 3 columns but B has 2 rows"),
        BadInput(Case((np.ones(3), np.ones((3, 2)))), "A is a vector, not a matrix"),
        BadInput(Case((np.ones((2, 2, 2)), np.ones((2, 2)))), "A has three axes, not two"),
    ]


def batched_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    shapes = [((1, 1, 1), (1, 1, 1)), ((2, 2, 3), (2, 3, 2)), ((3, 2, 2), (3, 2, 2)),
              ((2, 3), (4, 3, 2)), ((2, 3, 4), (2, 4, 3))]
    if hidden:
        shapes += [((1, 2, 3), (1, 3, 4)), ((4, 4), (2, 4, 4)), ((2, 3, 2, 4), (2, 3, 4, 1)),
                   ((5, 1, 3), (5, 3, 6)), ((3, 3), (3, 3)), ((2, 1, 2, 3), (1, 4, 3, 2))]
    cases = []
    for a, b in shapes:
        if len(a) < len(b):
            note = "broadcast [n, k] @ [b, k, m]"
        elif len(a) == 2:
            note = "no batch axis"
        else:
            note = "square" if len(set(a + b)) == 1 else "batched"
        cases.append(Case((small_ints(rng, a), small_ints(rng, b)), note=note))
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


def mixture_bad_inputs() -> list[BadInput]:
    v = np.arange(6.0).reshape(3, 2)
    return [
        BadInput(Case((np.array([[0.5, 0.25, 0.0]]), v)), "row 0 of W sums to 0.75, not 1"),
        BadInput(Case((np.array([[0.75, 0.5, 0.0]]), v)), "row 0 of W sums to 1.25, not 1"),
        BadInput(Case((np.array([[1.5, -0.5, 0.0]]), v)),
                 "W has a negative weight (-0.5), even though the row sums to 1"),
        BadInput(Case((np.array([[0.5, 0.5]]), v)), "W has 2 weights per row but V has 3 rows"),
        BadInput(Case((np.array([[np.nan, 0.5, 0.5]]), v)), "W contains NaN"),
        BadInput(Case((np.array([[np.inf, 0.5, 0.5]]), v)), "W contains an infinite weight"),
    ]


# ----------------------------------------------------------------------------- misconceptions
# Each is a plausible wrong answer, written the way a learner would write it.

def _last_term_only(A, B):
    """Assigns each term instead of adding it: only the last p survives."""
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]))
    for p in range(A.shape[1]):
        C[...] = A[:, p, None] * B[None, p, :]
    return C


def _running_total(A, B):
    """Never resets its running sum between entries of C."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    m = B.shape[1]
    C = np.zeros((n, m))
    total = 0.0
    for i in range(n):
        for j in range(m):
            for p in range(k):
                total += A[i, p] * B[p, j]
            C[i, j] = total
    return C


def _product(A, B):
    """A plain product without @ or np.matmul, so the misconceptions below read like a
    learner's code and pass the shortcut scan of the loop exercises."""
    if A.shape[1] != B.shape[0]:
        raise ValueError(f"shapes {A.shape} and {B.shape} do not fit")
    return (A[:, :, None] * B[None, :, :]).sum(axis=1)


def _rows_not_reset(A, B):
    """Keeps one accumulator row for all i: row i holds rows 0..i of the product."""
    A, B = matmul_operands(A, B)
    return np.cumsum(_product(A, B), axis=0)


def _cols_not_reset(A, B):
    """Keeps one accumulator column for all j: column j holds columns 0..j of the product."""
    A, B = matmul_operands(A, B)
    return np.cumsum(_product(A, B), axis=1)


def _integer_accumulator(A, B):
    """Stores each entry into an integer array, which cuts the fraction off."""
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]), dtype=int)
    for i in range(A.shape[0]):
        for j in range(B.shape[1]):
            C[i, j] = np.sum(A[i, :] * B[:, j])
    return C


def _row_dot_row(A, B):
    A, B = matmul_operands(A, B)
    return np.array([[np.sum(A[i] * B[j]) for j in range(B.shape[0])] for i in range(A.shape[0])])


def _transposed_result(A, B):
    A, B = matmul_operands(A, B)
    return _product(A, B).T


def _elementwise(A, B):
    A, B = matmul_operands(A, B)
    return A * B


def _dot_bounds_swapped(A, B):
    """Runs i over the columns of B and j over the rows of A. (Its lines differ from the
    solution's: the recording keeps the line where a mistake raises.)"""
    A, B = matmul_operands(A, B)
    n, m = A.shape[0], B.shape[1]
    C = np.zeros((n, m))
    for i in range(m):
        for j in range(n):
            C[i, j] = (A[i] * B[:, j]).sum()
    return C


def _rows_with_indices_of_A_swapped(A, B):
    """Takes the weight of row p of B from A[p, i]: column i of A."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    C = np.zeros((n, B.shape[1]))
    for i in range(n):
        for p in range(k):
            C[i, :] += A[p, i] * B[p, :]
    return C


def _cols_with_indices_of_B_swapped(A, B):
    """Takes the weight of column p of A from B[j, p]: row j of B."""
    A, B = matmul_operands(A, B)
    k, m = B.shape
    C = np.zeros((A.shape[0], m))
    for j in range(m):
        for p in range(k):
            C[:, j] += B[j, p] * A[:, p]
    return C


def _weights_from_column_of_A(A, B):
    """Row i of C mixes the rows of B with column i of A: Aᵀ B."""
    A, B = matmul_operands(A, B)
    return _product(A.T, B)


def _mixes_columns_of_B(A, B):
    """Row i of C mixes the columns of B: A Bᵀ."""
    A, B = matmul_operands(A, B)
    return _product(A, B.T)


def _outer_rows_by_cols(A, B):
    """Outer product of row p of A with column p of B, summed: (B A)ᵀ."""
    A, B = matmul_operands(A, B)
    return _product(B, A).T


LAST_TERM = Misconception(
    "overwrites instead of accumulating",
    _last_term_only,
    "your result equals the last term of the sum alone. Inside the loop over p you "
    "probably wrote `=` where you need `+=`, so each new term replaced the ones before.",
)
INTEGER_ACCUMULATOR = Misconception(
    "integer result array",
    _integer_accumulator,
    "your result is the product with every fraction cut off: the array you fill has an "
    "integer dtype (`np.zeros(..., dtype=int)`, or `np.zeros_like` of an integer array), "
    "so each float is truncated when it is stored. Create C with a float dtype.",
)
RUNNING_TOTAL = Misconception(
    "running sum never reset",
    _running_total,
    "each entry holds the sum of all the entries before it. Your running total starts at "
    "0 once, outside the loops; start it at 0 again for every (i, j).",
)
ROW_DOT_ROW = Misconception(
    "row of A dotted with row of B",
    _row_dot_row,
    "you took the dot product of row i of A with row j of B. The entry C[i, j] pairs row "
    "i of A with column j of B: `B[:, j]`, not `B[j]`.",
)
TRANSPOSED = Misconception(
    "transposed result",
    _transposed_result,
    "your result is the transpose of the product: C[i, j] ended up at [j, i]. Check the "
    "order of your indices when you store into C.",
)
BOUNDS_SWAPPED = Misconception(
    "loop bounds swapped",
    _dot_bounds_swapped,
    "your loops run i over the columns of B and j over the rows of A: the two ranges are "
    "swapped. On a product with as many rows as columns nothing shows, but here A has n "
    "rows and B has m columns with n ≠ m, so an index runs past the end: that is the "
    "IndexError. i numbers the rows of C, which are the rows of A; j numbers its columns, "
    "which are the columns of B.",
)
ELEMENTWISE = Misconception(
    "elementwise product",
    _elementwise,
    "you multiplied entry by entry (`A * B`). A matrix product sums over the shared axis "
    "k: C[i, j] = sum over p of A[i, p] * B[p, j].",
)


def _product_exercise(name, reference, extra, hint):
    return Exercise(
        name=name,
        reference=reference,
        cases=product_cases,
        misconceptions=[LAST_TERM, TRANSPOSED, ELEMENTWISE, *extra],
        bad_inputs=product_bad_inputs(),
        rules=LOOP_RULES,
        arg_names=("A", "B"),
        hint=hint,
    )


register(
    _product_exercise(
        "matmul_dot", ref.matmul_dot,
        [RUNNING_TOTAL, ROW_DOT_ROW, INTEGER_ACCUMULATOR, BOUNDS_SWAPPED],
        "C[i, j] pairs row i of A with column j of B: multiply them entry by entry and add. "
        "Work the smallest input above by hand and find the first entry of yours that "
        "differs.",
    ),
    _product_exercise(
        "matmul_rows", ref.matmul_rows,
        [
            Misconception(
                "weights from a column of A", _weights_from_column_of_A,
                "you weighted the rows of B with column i of A (`A[:, i]`). The weights for "
                "row i of C are row i of A: `A[i, p]` multiplies row p of B.",
            ),
            Misconception(
                "indices of A swapped", _rows_with_indices_of_A_swapped,
                "you swapped the indices of A: the weight you give row p of B sits in row p, "
                "column i of A, so row i of C is mixed with column i of A. The weights for "
                "row i of C are row i of A: its entry in column p weights row p of B. Where A "
                "is not square, the swapped indices run past its last row or column: that is "
                "the IndexError (on a square A you would get Aᵀ B).",
            ),
            Misconception(
                "accumulator row not reset", _rows_not_reset,
                "row i of your result holds rows 0 to i of the product added together. The "
                "row you accumulate into must start at zero again for every i.",
            ),
            Misconception(
                "mixes the columns of B", _mixes_columns_of_B,
                "you combined the columns of B (`B[:, p]`). In the row reading, row i of C "
                "is a combination of the rows of B: `A[i, p] * B[p, :]`.",
            ),
        ],
        "Row i of C is a weighted sum of the rows of B, and its weights are row i of A. Build "
        "row 0 of the input above by hand, term by term, and compare it with yours.",
    ),
    _product_exercise(
        "matmul_cols", ref.matmul_cols,
        [
            Misconception(
                "weights from a row of B", _mixes_columns_of_B,
                "you weighted the columns of A with row j of B (`B[j, p]`). The weights for "
                "column j of C are column j of B: `B[p, j]` multiplies column p of A.",
            ),
            Misconception(
                "indices of B swapped", _cols_with_indices_of_B_swapped,
                "you swapped the indices of B: the weight you give column p of A sits in row "
                "j, column p of B, so column j of C is mixed with row j of B. The weights for "
                "column j of C are column j of B: its entry in row p weights column p of A. "
                "Where B is not square, the swapped indices run past its last row or column: "
                "that is the IndexError (on a square B you would get A Bᵀ).",
            ),
            Misconception(
                "accumulator column not reset", _cols_not_reset,
                "column j of your result holds columns 0 to j of the product added together. "
                "The column you accumulate into must start at zero again for every j.",
            ),
            Misconception(
                "mixes the rows of A", _weights_from_column_of_A,
                "you combined the rows of A (`A[p, :]`). In the column reading, column j of "
                "C is a combination of the columns of A: `B[p, j] * A[:, p]`.",
            ),
        ],
        "Column j of C is a weighted sum of the columns of A, and its weights are column j of "
        "B. Build column 0 of the input above by hand, term by term, and compare it with "
        "yours.",
    ),
    _product_exercise(
        "matmul_outer", ref.matmul_outer,
        [
            Misconception(
                "outer product of a row of A and a column of B", _outer_rows_by_cols,
                "you took outer products of row p of A with column p of B. The outer "
                "reading pairs column p of A (`A[:, p]`) with row p of B (`B[p, :]`).",
            ),
            Misconception(
                "outer product of two columns", _mixes_columns_of_B,
                "you paired column p of A with column p of B. The second factor of each "
                "outer product is row p of B (`B[p, :]`).",
            ),
        ],
        "C is a sum of k rank-1 matrices, one for each p, each made from a column of A and a "
        "row of B. Print the terms for the input above and check that they add up to A B.",
    ),
)


# ----------------------------------------------------------------------------- batched

def _np_dot_batched(A, B):
    return np.dot(np.asarray(A, dtype=float), np.asarray(B, dtype=float))


def _first_batch_item(A, B):
    """Multiplies the matrices of batch item 0 and repeats them."""
    A = np.asarray(A, dtype=float)
    B = np.asarray(B, dtype=float)
    a0 = A.reshape(-1, *A.shape[-2:])[0]
    b0 = B.reshape(-1, *B.shape[-2:])[0]
    shape = np.broadcast_shapes(A.shape[:-2], B.shape[:-2]) + (A.shape[-2], B.shape[-1])
    return np.broadcast_to(np.matmul(a0, b0), shape).copy()


register(Exercise(
    name="batched_matmul",
    reference=ref.batched_matmul,
    cases=batched_cases,
    misconceptions=[
        Misconception(
            "np.dot on stacks", _np_dot_batched,
            "you used np.dot. On arrays with more than two axes np.dot pairs every matrix of "
            "A with every matrix of B (a [b, n, k] by [b, k, m] product has shape "
            "[b, n, b, m]). np.matmul, or @, multiplies batch item with batch item.",
        ),
        Misconception(
            "first batch item only", _first_batch_item,
            "every batch item of your result is the product of batch item 0. Item b of the "
            "result must come from its own pair: item b of A times item b of B.",
        ),
    ],
    bad_inputs=[
        BadInput(Case((np.ones((2, 2, 3)), np.ones((2, 2, 3)))), "A has 3 columns but B has 2 rows"),
        BadInput(Case((np.ones((2, 2, 3)), np.ones((3, 3, 2)))),
                 "the batch axes 2 and 3 do not broadcast"),
        BadInput(Case((np.ones(3), np.ones((2, 3, 2)))), "A is a vector, not a matrix"),
    ],
    rules=NO_LOOP_RULES,
    arg_names=("A", "B"),
    hint=("NumPy's matrix product treats every axis before the last two as a batch axis and "
          "broadcasts those axes, so one call handles the whole batch. Compare your result's "
          "shape with the expected one above."),
))


def _einsum_k_not_transposed(Q, K):
    return np.einsum("...qd,...dk->...qk", np.asarray(Q, float), np.asarray(K, float))


def _einsum_with_k_dot_t(Q, K):
    """Transposes K with .T first, which on a batch reverses every axis."""
    Q, K = np.asarray(Q, float), np.asarray(K, float)
    return np.einsum("...qd,...dk->...qk", Q, K.T)


def _einsum_swapped_output(Q, K):
    return np.einsum("...qd,...kd->...kq", np.asarray(Q, float), np.asarray(K, float))


def _einsum_no_batch(Q, K):
    return np.einsum("qd,kd->qk", np.asarray(Q, float), np.asarray(K, float))


register(Exercise(
    name="einsum_scores",
    reference=ref.einsum_scores,
    cases=score_cases,
    misconceptions=[
        Misconception(
            "K used untransposed", _einsum_k_not_transposed,
            "your subscripts read K as [d, T_k] (`...dk`). K holds one key per row, "
            "[T_k, d], so its subscripts are `...kd`; the shared letter d is summed.",
        ),
        Misconception(
            "K.T on a batched array", _einsum_with_k_dot_t,
            "you transposed K with `K.T`. On a batched array `.T` reverses every axis, so "
            "[batch, T_k, d] becomes [d, T_k, batch] and the batch axes no longer line up. "
            "einsum needs no transpose at all: give K the subscripts `...kd`.",
        ),
        Misconception(
            "output axes swapped", _einsum_swapped_output,
            "your output is K Qᵀ: the query and key axes are swapped. The output subscripts "
            "should list the query axis first: `->...qk`.",
        ),
        Misconception(
            "no batch axes", _einsum_no_batch,
            "your subscripts have no batch axes, so batched input fails. Start each operand "
            "and the output with `...` to carry any leading axes through.",
        ),
    ],
    bad_inputs=[
        BadInput(Case((np.ones((2, 3)), np.ones((2, 4)))), "Q has d = 3 but K has d = 4"),
        BadInput(Case((np.ones(3), np.ones((2, 3)))), "Q is a vector, not a matrix"),
    ],
    rules=EINSUM_RULES,
    arg_names=("Q", "K"),
    hint=("In an einsum, a letter that appears in both inputs but not in the output is "
          "summed. Give each axis its own letter (the batch axes, the queries, the keys, the "
          "features): which one do a query and a key share?"),
))


def _mix_uniform(W, V):
    """Ignores the weights: every output row is the plain mean of the rows of V."""
    W = np.asarray(W, float)
    V = np.asarray(V, float)
    shape = np.broadcast_shapes(W.shape[:-2], V.shape[:-2]) + (W.shape[-2], V.shape[-1])
    return np.broadcast_to(V.mean(axis=-2, keepdims=True), shape).copy()


def _mix_checks_columns(W, V):
    W = np.asarray(W, float)
    V = np.asarray(V, float)
    if np.any(np.abs(W.sum(axis=-2) - 1) > 1e-6):
        raise ValueError("columns of W must sum to 1")
    return np.matmul(W, V)


def _mix_transposed_weights(W, V):
    W = np.asarray(W, float)
    return np.matmul(np.swapaxes(W, -1, -2), np.asarray(V, float))


register(Exercise(
    name="weighted_average_rows",
    reference=ref.weighted_average_rows,
    cases=mixture_cases,
    misconceptions=[
        Misconception(
            "plain average", _mix_uniform,
            "every output row is the plain average of the rows of V: the weights were "
            "ignored. Row i of the result is sum over j of W[i, j] * V[j].",
        ),
        Misconception(
            "checks column sums", _mix_checks_columns,
            "your function rejects a valid W. It checks that the columns of W sum to 1, but "
            "each row of W holds the weights of one mixture, so it is each row that must "
            "sum to 1 (the sums along the last axis).",
        ),
        Misconception(
            "transposed weights", _mix_transposed_weights,
            "you mixed with Wᵀ. Row i of W holds the weights of output row i, so the result "
            "is W V (rows of V weighted by W[i]), not Wᵀ V.",
        ),
    ],
    bad_inputs=mixture_bad_inputs(),
    arg_names=("W", "V"),
    hint=("Each row of W holds the weights of one output row: check that they are "
          "non-negative and sum to 1 before mixing. Row i of the result mixes the rows of V "
          "with the weights in row i of W."),
))
