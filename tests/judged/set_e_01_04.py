"""Set e, lessons 01-04: wrong answers written from the student notebooks and README only.

Each answer is what a learner types into the answer cell(s), with one realistic mistake
(the cause says where), verified wrong by verify_set_e_01_04.py against an independent
computation.
"""
from typing import NamedTuple


class Wrong(NamedTuple):
    id: str          # short unique id
    exercise: str    # the graded name, exactly as in the notebook's check("name", ...) cell
    cause: str       # the true cause, as a teacher would say it to the learner
    kind: str        # a short category
    wrong_on: str    # an input on which it gives a wrong result, and what goes wrong
    source: str      # the whole answer cell(s) as the learner types them


WRONG = []

# ============================================================================ lesson 01

L01 = """import numpy as np
from grader.learner.validation import matmul_operands, as_array
"""

WRONG += [
    Wrong(
        id="e-01-dot-row-of-B",
        exercise="matmul_dot",
        cause="In the inner loop you take B[j, :], row j of B, where column j of B belongs: "
              "write B[:, j], so that C[i, j] is row i of A dotted with column j of B.",
        kind="row for column (indices swapped on B)",
        wrong_on="A = [[1, 2], [3, 4]], B = [[1, 2], [3, 4]]: C[0, 0] comes out 1*1 + 2*2 = 5 "
                 "instead of 1*1 + 2*3 = 7 (rectangular shapes raise a broadcasting error).",
        source=L01 + """
def matmul_dot(A, B):
    \"\"\"C[i, j] = row i of A · column j of B, with a Python loop (over i and j: one entry at a time).\"\"\"
    A, B = matmul_operands(A, B)
    n, m = A.shape[0], B.shape[1]
    C = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            C[i, j] = np.sum(A[i, :] * B[j, :])
    return C
"""),
    Wrong(
        id="e-01-dot-j-loop-over-k",
        exercise="matmul_dot",
        cause="The loop over j runs over range(B.shape[0]), the shared size k, instead of "
              "range(B.shape[1]), the number of columns m of B: columns past k stay 0 (or "
              "the index runs past C when k > m).",
        kind="loop bound uses the wrong axis",
        wrong_on="A of shape 2x2 and B of shape 2x3 (ones): the last column of C stays 0 "
                 "instead of 2.",
        source=L01 + """
def matmul_dot(A, B):
    \"\"\"C[i, j] = row i of A · column j of B, with a Python loop (over i and j: one entry at a time).\"\"\"
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]))
    for i in range(A.shape[0]):
        for j in range(B.shape[0]):
            C[i, j] = (A[i, :] * B[:, j]).sum()
    return C
"""),
    Wrong(
        id="e-01-dot-total-not-reset",
        exercise="matmul_dot",
        cause="The running total is set to 0 once per row i, outside the loop over j, so each "
              "entry of a row also carries the sums of the entries before it; set total = 0 "
              "inside the j loop, right before the loop over p.",
        kind="initialisation outside the inner loop",
        wrong_on="A = [[1, 1]], B = [[1, 1], [1, 1]]: C comes out [[2, 4]] instead of [[2, 2]].",
        source=L01 + """
def matmul_dot(A, B):
    \"\"\"C[i, j] = row i of A · column j of B, with a Python loop (over i and j: one entry at a time).\"\"\"
    A, B = matmul_operands(A, B)
    n, k = A.shape
    m = B.shape[1]
    C = np.zeros((n, m))
    for i in range(n):
        total = 0.0
        for j in range(m):
            for p in range(k):
                total += A[i, p] * B[p, j]
            C[i, j] = total
    return C
"""),
    Wrong(
        id="e-01-dot-list-aliasing",
        exercise="matmul_dot",
        cause="C = [[0.0] * m] * n makes n references to one and the same row list, so every "
              "write goes into all rows and each row ends up equal to the last; build the "
              "rows separately ([[0.0] * m for _ in range(n)]) or use np.zeros((n, m)).",
        kind="list of lists aliased (one shared row)",
        wrong_on="A = [[1, 0], [0, 1]], B = [[1, 2], [3, 4]]: both rows come out [3, 4] "
                 "instead of [[1, 2], [3, 4]].",
        source=L01 + """
def matmul_dot(A, B):
    \"\"\"C[i, j] = row i of A · column j of B, with a Python loop (over i and j: one entry at a time).\"\"\"
    A, B = matmul_operands(A, B)
    n, m = A.shape[0], B.shape[1]
    C = [[0.0] * m] * n
    for i in range(n):
        for j in range(m):
            C[i][j] = sum(A[i, :] * B[:, j])
    return np.array(C)
"""),
]

WRONG += [
    Wrong(
        id="e-01-rows-assign-not-accumulate",
        exercise="matmul_rows",
        cause="Inside the loop over p you write C[i, :] = A[i, p] * B[p, :], which overwrites "
              "the row each time, so only the last term p = k-1 survives; add the terms with +=.",
        kind="= for +=",
        wrong_on="A = [[1, 1]], B = [[1, 0], [0, 1]]: row 0 comes out [0, 1] instead of [1, 1].",
        source=L01 + """
def matmul_rows(A, B):
    \"\"\"Row i of C = sum over p of A[i, p] * (row p of B), with a Python loop (over i and p).\"\"\"
    A, B = matmul_operands(A, B)
    n, k = A.shape
    C = np.zeros((n, B.shape[1]))
    for i in range(n):
        for p in range(k):
            C[i, :] = A[i, p] * B[p, :]
    return C
"""),
    Wrong(
        id="e-01-rows-C-inside-loop",
        exercise="matmul_rows",
        cause="C = np.zeros(...) sits inside the loop over i, so C is wiped at the start of "
              "every row and only the last row survives; create C once, before the loops.",
        kind="statement moved into a loop",
        wrong_on="A = [[1, 0], [0, 1]], B = [[1, 2], [3, 4]]: row 0 comes out [0, 0] instead of [1, 2].",
        source=L01 + """
def matmul_rows(A, B):
    \"\"\"Row i of C = sum over p of A[i, p] * (row p of B), with a Python loop (over i and p).\"\"\"
    A, B = matmul_operands(A, B)
    n, k = A.shape
    for i in range(n):
        C = np.zeros((n, B.shape[1]))
        for p in range(k):
            C[i] += A[i, p] * B[p]
    return C
"""),
    Wrong(
        id="e-01-rows-p-stops-early",
        exercise="matmul_rows",
        cause="The loop over p runs over range(k - 1), so the last row of B is never added; "
              "use range(k) (or range(A.shape[1])).",
        kind="range stopped one step early",
        wrong_on="A = [[1, 1]], B = [[1, 0], [0, 1]]: row 0 comes out [1, 0] instead of [1, 1].",
        source=L01 + """
def matmul_rows(A, B):
    \"\"\"Row i of C = sum over p of A[i, p] * (row p of B), with a Python loop (over i and p).\"\"\"
    A, B = matmul_operands(A, B)
    n, k = A.shape
    m = B.shape[1]
    C = np.zeros((n, m))
    for i in range(n):
        for p in range(k - 1):
            C[i, :] += A[i, p] * B[p, :]
    return C
"""),
    Wrong(
        id="e-01-rows-zeros-like-A",
        exercise="matmul_rows",
        cause="C = np.zeros_like(A) gives C the shape of A (n×k) instead of n×m: the result "
              "needs B's number of columns, np.zeros((A.shape[0], B.shape[1])).",
        kind="result shape copied from the wrong operand",
        wrong_on="A of shape 2×3 and B of shape 3×2: adding a row of length 2 into C's rows of "
                 "length 3 raises a broadcasting ValueError instead of returning the 2×2 product.",
        source=L01 + """
def matmul_rows(A, B):
    \"\"\"Row i of C = sum over p of A[i, p] * (row p of B), with a Python loop (over i and p).\"\"\"
    A, B = matmul_operands(A, B)
    C = np.zeros_like(A)
    for i in range(A.shape[0]):
        for p in range(A.shape[1]):
            C[i, :] += A[i, p] * B[p, :]
    return C
"""),
]

WRONG += [
    Wrong(
        id="e-01-cols-B-indices-swapped",
        exercise="matmul_cols",
        cause="The weight is written B[j, p] where B[p, j] belongs: column j of C must mix the "
              "columns of A with the entries of column j of B, not of row j.",
        kind="two indices swapped",
        wrong_on="A = [[1, 0], [0, 1]], B = [[1, 2], [3, 4]]: C comes out B transposed, "
                 "[[1, 3], [2, 4]], instead of [[1, 2], [3, 4]].",
        source=L01 + """
def matmul_cols(A, B):
    \"\"\"Column j of C = sum over p of B[p, j] * (column p of A), with a Python loop (over j and p).\"\"\"
    A, B = matmul_operands(A, B)
    n, k = A.shape
    m = B.shape[1]
    C = np.zeros((n, m))
    for j in range(m):
        for p in range(k):
            C[:, j] += B[j, p] * A[:, p]
    return C
"""),
    Wrong(
        id="e-01-cols-row-of-A",
        exercise="matmul_cols",
        cause="You mix A[p, :], the rows of A, where the columns A[:, p] belong: the column "
              "reading sums B[p, j] times column p of A.",
        kind="row slice for column slice",
        wrong_on="A = [[1, 2], [3, 4]], B = identity: C comes out A transposed, [[1, 3], [2, 4]], "
                 "instead of A.",
        source=L01 + """
def matmul_cols(A, B):
    \"\"\"Column j of C = sum over p of B[p, j] * (column p of A), with a Python loop (over j and p).\"\"\"
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]))
    for j in range(B.shape[1]):
        for p in range(A.shape[1]):
            C[:, j] += B[p, j] * A[p, :]
    return C
"""),
    Wrong(
        id="e-01-cols-stacked-as-rows",
        exercise="matmul_cols",
        cause="Each column is computed right, but np.array(columns) stacks them as rows, so "
              "the result is Cᵀ (m×n); stack them as columns, np.stack(columns, axis=1).",
        kind="result transposed (stack axis)",
        wrong_on="A = [[1, 2], [3, 4]], B = identity: returns [[1, 3], [2, 4]] instead of "
                 "[[1, 2], [3, 4]]; a 2×3 by 3×4 product comes back 4×2.",
        source=L01 + """
def matmul_cols(A, B):
    \"\"\"Column j of C = sum over p of B[p, j] * (column p of A), with a Python loop (over j and p).\"\"\"
    A, B = matmul_operands(A, B)
    columns = []
    for j in range(B.shape[1]):
        col = np.zeros(A.shape[0])
        for p in range(A.shape[1]):
            col += B[p, j] * A[:, p]
        columns.append(col)
    return np.array(columns)
"""),
    Wrong(
        id="e-01-cols-p-starts-at-1",
        exercise="matmul_cols",
        cause="The loop over p starts at 1 (range(1, k)), so column 0 of A is never mixed in; "
              "Python counts from 0, use range(k).",
        kind="range started one step late",
        wrong_on="A = [[1, 1]], B = [[1], [1]]: C comes out [[1]] instead of [[2]].",
        source=L01 + """
def matmul_cols(A, B):
    \"\"\"Column j of C = sum over p of B[p, j] * (column p of A), with a Python loop (over j and p).\"\"\"
    A, B = matmul_operands(A, B)
    n, k = A.shape
    m = B.shape[1]
    C = np.zeros((n, m))
    for j in range(m):
        for p in range(1, k):
            C[:, j] = C[:, j] + B[p, j] * A[:, p]
    return C
"""),
]

WRONG += [
    Wrong(
        id="e-01-outer-args-swapped",
        exercise="matmul_outer",
        cause="np.outer(B[p, :], A[:, p]) has its arguments in the wrong order: it gives an "
              "m×n term, the transpose of the one you need; write np.outer(A[:, p], B[p, :]).",
        kind="operands swapped",
        wrong_on="A = [[1, 2], [3, 4]], B = identity: returns [[1, 3], [2, 4]] instead of A "
                 "(rectangular shapes raise a broadcasting error).",
        source=L01 + """
def matmul_outer(A, B):
    \"\"\"C = sum over p of the outer product of column p of A and row p of B, with a Python loop (over p).\"\"\"
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]))
    for p in range(A.shape[1]):
        C += np.outer(B[p, :], A[:, p])
    return C
"""),
    Wrong(
        id="e-01-outer-elementwise-no-newaxis",
        exercise="matmul_outer",
        cause="A[:, p] * B[p, :] multiplies two vectors entry by entry instead of making the "
              "n×m outer product; give the column an axis, A[:, p][:, None] * B[p, :][None, :] "
              "(or np.outer).",
        kind="[:, None] left out (broadcasting)",
        wrong_on="A = [[1, 2], [3, 4]], B = [[1, 0], [0, 1]]: returns [[1, 4], [1, 4]] instead "
                 "of [[1, 2], [3, 4]] (when n != m it raises a broadcasting error).",
        source=L01 + """
def matmul_outer(A, B):
    \"\"\"C = sum over p of the outer product of column p of A and row p of B, with a Python loop (over p).\"\"\"
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]))
    for p in range(A.shape[1]):
        C += A[:, p] * B[p, :]
    return C
"""),
    Wrong(
        id="e-01-outer-only-last-term",
        exercise="matmul_outer",
        cause="C = (outer product of term p) inside the loop replaces C with each new rank-1 "
              "term, so only the last term p = k-1 is returned; start from zeros and add with C += ....",
        kind="= for +=",
        wrong_on="A = [[1, 1]], B = [[1], [1]]: returns [[1]] instead of [[2]].",
        source=L01 + """
def matmul_outer(A, B):
    \"\"\"C = sum over p of the outer product of column p of A and row p of B, with a Python loop (over p).\"\"\"
    A, B = matmul_operands(A, B)
    for p in range(A.shape[1]):
        C = A[:, p][:, None] * B[p, :][None, :]
    return C
"""),
    Wrong(
        id="e-01-outer-loop-over-n",
        exercise="matmul_outer",
        cause="The loop runs over range(A.shape[0]), the number of rows n, instead of the "
              "shared size k = A.shape[1]; there is one rank-1 term per column of A.",
        kind="loop bound from the wrong axis",
        wrong_on="A of shape 2×3 and B of shape 3×2 (all ones): the third term is never added, "
                 "so every entry is 2 instead of 3 (with n > k it raises an IndexError).",
        source=L01 + """
def matmul_outer(A, B):
    \"\"\"C = sum over p of the outer product of column p of A and row p of B, with a Python loop (over p).\"\"\"
    A, B = matmul_operands(A, B)
    n, m = A.shape[0], B.shape[1]
    C = np.zeros((n, m))
    for p in range(n):
        C += A[:, p, None] * B[None, p, :]
    return C
"""),
    Wrong(
        id="e-01-outer-row-times-column",
        exercise="matmul_outer",
        cause="Each term is the outer product of A[p, :] and B[:, p], row p of A with column p "
              "of B, the other way round from the reading: the term is column p of A times row p of B.",
        kind="rows and columns exchanged in both operands",
        wrong_on="A = [[1, 2], [3, 4]], B = [[1, 1], [0, 1]]: returns (B A)ᵀ = [[4, 3], [6, 4]] "
                 "instead of A B = [[1, 3], [3, 7]].",
        source=L01 + """
def matmul_outer(A, B):
    \"\"\"C = sum over p of the outer product of column p of A and row p of B, with a Python loop (over p).\"\"\"
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]))
    for p in range(A.shape[1]):
        C = C + A[p, :][:, None] * B[:, p][None, :]
    return C
"""),
]

BMM_HEAD = L01 + """
def batched_matmul(A, B):
    \"\"\"[..., n, k] @ [..., k, m] -> [..., n, m] for every batch item, with no Python loop.

    The batch axes broadcast: [n, k] times [b, k, m] gives [b, n, m].
    \"\"\"
    A = as_array(A, "A", min_ndim=2)
    B = as_array(B, "B", min_ndim=2)
    if A.shape[-1] != B.shape[-2]:
        raise ValueError(f"A has {A.shape[-1]} columns but B has {B.shape[-2]} rows "
                         f"(shapes {A.shape} and {B.shape})")
"""

WRONG += [
    Wrong(
        id="e-01-bmm-np-dot",
        exercise="batched_matmul",
        cause="np.dot on 3-axis arrays is not a batched product: it pairs every matrix of A "
              "with every matrix of B and returns [b, n, b, m]; use A @ B (np.matmul), which "
              "multiplies batch item by batch item.",
        kind="np.dot where np.matmul belongs",
        wrong_on="A and B of shape [2, 3, 4] and [2, 4, 5]: returns shape [2, 3, 2, 5] instead "
                 "of [2, 3, 5].",
        source=BMM_HEAD + """    return np.dot(A, B)
"""),
    Wrong(
        id="e-01-bmm-einsum-fixed-axes",
        exercise="batched_matmul",
        cause="The einsum string 'bnk,bkm->bnm' fixes exactly one batch axis on both sides, so "
              "2-D inputs, two batch axes or a broadcast [n, k] × [b, k, m] fail; write "
              "'...nk,...km->...nm' or simply A @ B.",
        kind="hard-coded number of axes",
        wrong_on="A = B = the 2×2 identity (no batch axis): einsum raises a ValueError instead "
                 "of returning the identity.",
        source=BMM_HEAD + """    return np.einsum("bnk,bkm->bnm", A, B)
"""),
    Wrong(
        id="e-01-bmm-loop-over-batch",
        exercise="batched_matmul",
        cause="You loop over A.shape[0] and stack A[b] @ B[b]: the exercise forbids the loop, "
              "and the loop assumes both have one batch axis of the same length, so a plain "
              "[n, k] matrix or a broadcast batch goes wrong; use one A @ B.",
        kind="Python loop over the batch (forbidden) that breaks broadcasting",
        wrong_on="A of shape [2, 3] and B of shape [3, 2]: A[b] is a row vector and B[b] a row "
                 "of length 2, so it raises instead of returning the 2×2 product.",
        source=BMM_HEAD + """    return np.stack([A[b] @ B[b] for b in range(A.shape[0])])
"""),
    Wrong(
        id="e-01-bmm-operands-swapped",
        exercise="batched_matmul",
        cause="You return B @ A: the product does not commute, the result is A @ B.",
        kind="operands swapped",
        wrong_on="A = [[1, 1], [0, 1]], B = [[1, 0], [1, 1]]: returns [[1, 1], [1, 2]] instead "
                 "of [[2, 1], [1, 1]].",
        source=BMM_HEAD + """    return np.matmul(B, A)
"""),
]

EINSUM_HEAD = L01 + """
def einsum_scores(Q, K):
    \"\"\"Q Kᵀ for every batch item: [..., T_q, d] and [..., T_k, d] -> [..., T_q, T_k].

    Use np.einsum: one call does it, with no loop and no other product.
    \"\"\"
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share their last axis, got {Q.shape} and {K.shape}")
"""

WRONG += [
    Wrong(
        id="e-01-einsum-output-kq",
        exercise="einsum_scores",
        cause="The output letters '...kq' put the key axis first, which returns K Qᵀ, the "
              "transpose of each score matrix; the output must be '...qk'.",
        kind="output axes in the wrong order",
        wrong_on="Q of shape [3, 2] and K of shape [2, 2]: returns shape [2, 3] instead of [3, 2].",
        source=EINSUM_HEAD + """    return np.einsum("...qd,...kd->...kq", Q, K)
"""),
    Wrong(
        id="e-01-einsum-no-ellipsis",
        exercise="einsum_scores",
        cause="'qd,kd->qk' names exactly two axes, so a batch of queries and keys raises; put "
              "'...' in front of every operand and of the output to carry the batch axes.",
        kind="batch axes not carried (hard-coded number of axes)",
        wrong_on="Q and K of shape [2, 3, 4]: einsum raises a ValueError instead of returning [2, 3, 3].",
        source=EINSUM_HEAD + """    return np.einsum("qd,kd->qk", Q, K)
"""),
    Wrong(
        id="e-01-einsum-k-not-transposed",
        exercise="einsum_scores",
        cause="'...qd,...dk->...qk' reads K as if it were already Kᵀ [d, T_k]: its first axis "
              "(the keys) is matched with Q's features. K is [..., T_k, d], so its letters are "
              "'kd': '...qd,...kd->...qk'.",
        kind="transpose left out",
        wrong_on="Q = [[1, 0], [0, 0]], K = [[0, 1], [0, 0]] (square, so einsum does not raise): "
                 "returns Q K = [[0, 1], [0, 0]] instead of Q Kᵀ = [[0, 0], [0, 0]]; with T_k != d it raises.",
        source=EINSUM_HEAD + """    return np.einsum("...qd,...dk->...qk", Q, K)
"""),
    Wrong(
        id="e-01-einsum-key-axis-summed",
        exercise="einsum_scores",
        cause="The output '...q' leaves out the key letter k, so einsum also sums over the keys "
              "and returns one number per query; keep k in the output: '...qk'.",
        kind="reduction over an axis that should stay (axis missing)",
        wrong_on="Q = [[1, 0]], K = [[1, 0], [2, 0]]: returns [3] instead of [[1, 2]].",
        source=EINSUM_HEAD + """    return np.einsum("...qd,...kd->...q", Q, K)
"""),
]

WAR_HEAD = L01 + """
def weighted_average_rows(W, V):
    \"\"\"Row i of the result mixes the rows of V with weights W[i] (non-negative, sum 1).

    W: [..., n, m], V: [..., m, d] -> [..., n, d]. Raises ValueError for invalid weights.
    \"\"\"
    W = as_array(W, "W", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if W.shape[-1] != V.shape[-2]:
        raise ValueError(f"W has {W.shape[-1]} weights per row but V has {V.shape[-2]} rows")
"""

WRONG += [
    Wrong(
        id="e-01-war-nan-equality",
        exercise="weighted_average_rows",
        cause="W == np.nan is False for every entry, NaN included (NaN equals nothing), so the "
              "NaN test never fires, and a NaN row's sum passes the abs(sum - 1) > 1e-6 test "
              "too; test with np.isnan(W) (or reject anything not np.isfinite).",
        kind="NaN compared with ==",
        wrong_on="W = [[0.5, 0.5, nan]], V = 3×2 ones: returns a NaN row instead of raising ValueError.",
        source=WAR_HEAD + """    if np.any(W == np.nan):
        raise ValueError("W holds a NaN weight")
    if np.any(W < 0):
        raise ValueError("W holds a negative weight")
    sums = W.sum(axis=-1)
    if np.any(np.abs(sums - 1) > 1e-6):
        raise ValueError(f"every row of W must sum to 1, got sums {sums}")
    return W @ V
"""),
    Wrong(
        id="e-01-war-sum-over-columns",
        exercise="weighted_average_rows",
        cause="The sums are taken with axis=-2, down each column, but it is each row of W "
              "(axis=-1) that must sum to 1; convex rows with uneven columns are rejected.",
        kind="reduction over the wrong axis",
        wrong_on="W = [[1, 0], [1, 0]], V = [[1.], [2.]]: raises ValueError instead of returning [[1], [1]].",
        source=WAR_HEAD + """    if not np.all(np.isfinite(W)):
        raise ValueError("W holds NaN or infinite weights")
    if np.any(W < 0):
        raise ValueError("W holds a negative weight")
    sums = W.sum(axis=-2)
    if np.any(np.abs(sums - 1) > 1e-6):
        raise ValueError(f"the weights must sum to 1, got {sums}")
    return W @ V
"""),
    Wrong(
        id="e-01-war-no-abs",
        exercise="weighted_average_rows",
        cause="The test sums - 1 > 1e-6 has no abs(), so it catches rows that sum to more "
              "than 1 and lets rows that sum to less through; compare abs(sums - 1) with 1e-6.",
        kind="abs left out (one-sided tolerance)",
        wrong_on="W = [[0.2, 0.3]], V = [[1.], [1.]]: returns [[0.5]] instead of raising ValueError.",
        source=WAR_HEAD + """    if not np.isfinite(W).all():
        raise ValueError("W holds NaN or infinite weights")
    if (W < 0).any():
        raise ValueError("W holds a negative weight")
    sums = W.sum(axis=-1)
    if (sums - 1 > 1e-6).any():
        raise ValueError(f"every row of W must sum to 1, got sums {sums}")
    return W @ V
"""),
    Wrong(
        id="e-01-war-zero-weight-rejected",
        exercise="weighted_average_rows",
        cause="The sign test W <= 0 also rejects weights that are exactly 0, which are allowed "
              "(convex means non-negative); test W < 0.",
        kind="<= for <",
        wrong_on="W = [[1, 0]], V = [[1.], [2.]]: raises ValueError instead of returning [[1]].",
        source=WAR_HEAD + """    if not np.all(np.isfinite(W)):
        raise ValueError("W holds NaN or infinite weights")
    if np.any(W <= 0):
        raise ValueError("every weight must be non-negative")
    if np.any(np.abs(W.sum(axis=-1) - 1) > 1e-6):
        raise ValueError("every row of W must sum to 1")
    return W @ V
"""),
    Wrong(
        id="e-01-war-divided-by-m",
        exercise="weighted_average_rows",
        cause="The validation is right, but the result is divided by the number of weights "
              "m: the weights already sum to 1, so W @ V is the average; dividing again "
              "shrinks it.",
        kind="scale applied twice",
        wrong_on="W = [[0.5, 0.5]], V = [[2.], [4.]]: returns [[1.5]] instead of [[3]].",
        source=WAR_HEAD + """    if not np.all(np.isfinite(W)):
        raise ValueError("W holds NaN or infinite weights")
    if np.any(W < 0):
        raise ValueError("W holds a negative weight")
    if np.any(np.abs(W.sum(axis=-1) - 1) > 1e-6):
        raise ValueError("every row of W must sum to 1")
    return W @ V / W.shape[-1]
"""),
    Wrong(
        id="e-01-war-exact-sum",
        exercise="weighted_average_rows",
        cause="The rows are compared with 1 exactly (sums != 1), with no tolerance, so weights "
              "whose float sum is 0.9999999999999999 are rejected; allow abs(sums - 1) <= 1e-6.",
        kind="exact float comparison (tolerance left out)",
        wrong_on="W = [[0.7, 0.2, 0.1]], V = 3×1 ones: the row sums to 0.9999999999999999 in "
                 "floats and it raises ValueError instead of returning [[1]].",
        source=WAR_HEAD + """    if np.isnan(W).any() or np.isinf(W).any():
        raise ValueError("W holds NaN or infinite weights")
    if (W < 0).any():
        raise ValueError("W holds a negative weight")
    if (W.sum(axis=-1) != 1).any():
        raise ValueError("every row of W must sum to 1")
    return W @ V
"""),
    Wrong(
        id="e-01-war-total-sum",
        exercise="weighted_average_rows",
        cause="W.sum() with no axis adds up every weight of the matrix, which is n (or more "
              "with batch axes), not 1; sum each row, W.sum(axis=-1).",
        kind="reduction over every axis",
        wrong_on="W = [[1, 0], [0, 1]], V = identity: the total is 2, so it raises ValueError "
                 "instead of returning the identity.",
        source=WAR_HEAD + """    if not np.all(np.isfinite(W)):
        raise ValueError("W holds NaN or infinite weights")
    if np.any(W < 0):
        raise ValueError("W holds a negative weight")
    if abs(W.sum() - 1) > 1e-6:
        raise ValueError(f"the weights must sum to 1, got {W.sum()}")
    return W @ V
"""),
]

# ============================================================================ lesson 02

L02 = """import numpy as np
from grader.learner.validation import as_array
"""

SOFTMAX_HEAD = """
def softmax(x, axis=-1):
    \"\"\"Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000.\"\"\"
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
"""
SOFTMAX_OK = SOFTMAX_HEAD + """    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)
"""

SCORES_HEAD = """
def attention_scores(Q, K):
    \"\"\"Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k].\"\"\"
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
"""
SCORES_OK = SCORES_HEAD + """    d_k = Q.shape[-1]
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
"""

SDPA_HEAD = """
def scaled_dot_product_attention(Q, K, V):
    \"\"\"softmax(Q Kᵀ / sqrt(d_k)) V. Returns (output [..., T_q, d_v], weights [..., T_q, T_k]).\"\"\"
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V need one row per key: K has {K.shape[-2]} rows, V has "
                         f"{V.shape[-2]} (shapes {K.shape} and {V.shape})")
"""
SDPA_OK = SDPA_HEAD + """    weights = softmax(attention_scores(Q, K), axis=-1)
    output = weights @ V
    return output, weights
"""

WRONG += [
    Wrong(
        id="e-02-softmax-max-no-keepdims",
        exercise="softmax",
        cause="x.max(axis=axis) without keepdims=True drops the axis, so for a matrix the "
              "maxima broadcast along the wrong axis: row i gets column i's shift, not one "
              "constant per row, and the weights change; keep the axis when you take the max.",
        kind="keepdims forgotten",
        wrong_on="x = [[0, 1], [2, 5]], axis=-1: row 0 is shifted by [1, 5] instead of 1 and "
                 "comes out [0.95, 0.05] instead of [0.27, 0.73].",
        source=L02 + SOFTMAX_HEAD + """    e = np.exp(x - x.max(axis=axis))
    return e / e.sum(axis=axis, keepdims=True)
"""),
    Wrong(
        id="e-02-softmax-sum-everything",
        exercise="softmax",
        cause="e.sum() with no axis divides by the sum of the whole array, so with more than "
              "one row no row sums to 1; sum along axis with keepdims=True.",
        kind="reduction over every axis",
        wrong_on="x = [[0, 0], [0, 0]]: every weight is 0.25 instead of 0.5.",
        source=L02 + SOFTMAX_HEAD + """    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum()
"""),
    Wrong(
        id="e-02-softmax-no-shift",
        exercise="softmax",
        cause="np.exp(x) is taken of the raw scores: above about 709.8 it overflows to inf and "
              "inf / inf gives NaN; subtract the largest score along the axis first.",
        kind="max subtraction left out (overflow)",
        wrong_on="x = [1000, 999]: returns [nan, nan] instead of [0.73, 0.27].",
        source=L02 + SOFTMAX_HEAD + """    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)
"""),
    Wrong(
        id="e-02-softmax-global-max",
        exercise="softmax",
        cause="x.max() with no axis subtracts the largest score of the whole array from every "
              "row, so a row far below that maximum underflows to all zeros and 0/0 = NaN; take "
              "the max along axis with keepdims=True.",
        kind="reduction over every axis (shift)",
        wrong_on="x = [[0, 1], [1000, 1001]], axis=-1: row 0 comes out [nan, nan] instead of "
                 "[0.27, 0.73].",
        source=L02 + SOFTMAX_HEAD + """    e = np.exp(x - x.max())
    return e / e.sum(axis=axis, keepdims=True)
"""),
    Wrong(
        id="e-02-softmax-axis-ignored",
        exercise="softmax",
        cause="The function always normalises along -1 whatever axis it is given: the "
              "reductions are written with axis=-1 where the parameter axis belongs.",
        kind="parameter replaced by its default",
        wrong_on="x = [[0, 0], [0, 1]], axis=0: columns should sum to 1 ([[0.5, 0.27], [0.5, "
                 "0.73]]) but the rows do ([[0.5, 0.5], [0.27, 0.73]]).",
        source=L02 + SOFTMAX_HEAD + """    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)
"""),
    Wrong(
        id="e-02-softmax-denominator-unshifted",
        exercise="softmax",
        cause="The numerator uses the shifted scores but the denominator sums np.exp(x) of "
              "the raw ones, so the factor e^max no longer cancels; divide by the sum of the "
              "same shifted exponentials.",
        kind="shift applied to one operand only",
        wrong_on="x = [1, 0]: returns [0.27, 0.10] instead of [0.73, 0.27].",
        source=L02 + SOFTMAX_HEAD + """    top = x.max(axis=axis, keepdims=True)
    return np.exp(x - top) / np.exp(x).sum(axis=axis, keepdims=True)
"""),
]

WRONG += [
    Wrong(
        id="e-02-scores-full-transpose",
        exercise="attention_scores",
        cause="K.T reverses every axis, so on a batch [B, T_k, d_k] it gives [d_k, T_k, B] and "
              "the product pairs the wrong axes (or raises); transpose only the last two, "
              "np.swapaxes(K, -1, -2).",
        kind="transpose made full (.T on a batch)",
        wrong_on="Q and K of shape [2, 3, 4]: Q @ K.T tries to multiply [2, 3, 4] by [4, 3, 2] "
                 "and raises instead of returning [2, 3, 3].",
        source=L02 + SCORES_HEAD + """    return Q @ K.T / np.sqrt(Q.shape[-1])
"""),
    Wrong(
        id="e-02-scores-sqrt-tokens",
        exercise="attention_scores",
        cause="The scale uses Q.shape[-2], the number of queries, where d_k = Q.shape[-1], the "
              "length of each query and key vector, belongs.",
        kind="wrong axis for d_k",
        wrong_on="Q = [[1, 0], [0, 1], [1, 1]], K = [[1, 0]]: entries are divided by √3 instead of √2.",
        source=L02 + SCORES_HEAD + """    n = Q.shape[-2]
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(n)
"""),
    Wrong(
        id="e-02-scores-no-sqrt",
        exercise="attention_scores",
        cause="The scores are divided by d_k itself; the scale is its square root, np.sqrt(d_k).",
        kind="sqrt forgotten",
        wrong_on="Q = K = [[1, 1, 1, 1]] (d_k = 4): returns [[1]] instead of [[2]].",
        source=L02 + SCORES_HEAD + """    d_k = Q.shape[-1]
    return (Q @ np.swapaxes(K, -1, -2)) / d_k
"""),
    Wrong(
        id="e-02-scores-KQ",
        exercise="attention_scores",
        cause="You compute K Qᵀ, keys against queries, which is the transpose of each score "
              "matrix: row i must belong to query i, so write Q @ swapaxes(K, -1, -2).",
        kind="operands swapped (result transposed)",
        wrong_on="Q of shape [3, 2], K of shape [1, 2]: returns shape [1, 3] instead of [3, 1].",
        source=L02 + SCORES_HEAD + """    return K @ np.swapaxes(Q, -1, -2) / np.sqrt(K.shape[-1])
"""),
    Wrong(
        id="e-02-scores-sqrt-twice",
        exercise="attention_scores",
        cause="d_k is already set to np.sqrt(Q.shape[-1]) and then divided by np.sqrt(d_k) "
              "again, so the scores are divided by d_k ** 0.25; take the square root once.",
        kind="sqrt applied twice",
        wrong_on="Q = K = [[1] * 16] (d_k = 16): returns [[8]] instead of [[4]].",
        source=L02 + SCORES_HEAD + """    d_k = np.sqrt(Q.shape[-1])
    scores = np.matmul(Q, np.swapaxes(K, -1, -2))
    return scores / np.sqrt(d_k)
"""),
    Wrong(
        id="e-02-scores-floor-division",
        exercise="attention_scores",
        cause="// is floor division: it rounds every scaled score down to a whole number; "
              "use / for the scale.",
        kind="// for /",
        wrong_on="Q = K = [[1, 1]]: returns [[1]] instead of [[1.414]].",
        source=L02 + SCORES_HEAD + """    d_k = Q.shape[-1]
    return (Q @ np.swapaxes(K, -1, -2)) // np.sqrt(d_k)
"""),
    Wrong(
        id="e-02-scores-times-sqrt",
        exercise="attention_scores",
        cause="The scores are multiplied by √d_k instead of divided by it: the scale must "
              "shrink the scores, Q Kᵀ / √d_k.",
        kind="* for /",
        wrong_on="Q = K = [[1, 1, 1, 1]]: returns [[8]] instead of [[2]].",
        source=L02 + SCORES_HEAD + """    return Q @ np.swapaxes(K, -1, -2) * np.sqrt(Q.shape[-1])
"""),
]

VAR_HEAD = L02 + """
def score_variance(d_k, n_samples, seed):
    \"\"\"The sample variance of q·k over n_samples pairs of standard normal vectors of length d_k.\"\"\"
    if not isinstance(d_k, (int, np.integer)) or d_k < 1:
        raise ValueError(f"d_k must be a positive integer, got {d_k!r}")
    if not isinstance(n_samples, (int, np.integer)) or n_samples < 2:
        raise ValueError(f"n_samples must be an integer of at least 2, got {n_samples!r}")
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, d_k))   # one query per row
    k = rng.standard_normal((n_samples, d_k))   # one key per row
"""

WRONG += [
    Wrong(
        id="e-02-var-all-pairs",
        exercise="score_variance",
        cause="q @ k.T dots every query with every key, n_samples² numbers, and takes their "
              "variance; the experiment wants one dot product per row, the pairs (q[i], k[i]): "
              "np.sum(q * k, axis=1).",
        kind="matrix product where a row-wise dot belongs",
        wrong_on="d_k = 4, n_samples = 1000, seed = 0: the variance of the 10⁶ cross products "
                 "differs from the variance of the 1000 paired dot products (and it builds an "
                 "n×n matrix).",
        source=VAR_HEAD + """    scores = q @ k.T
    return scores.var()
"""),
    Wrong(
        id="e-02-var-sum-over-samples",
        exercise="score_variance",
        cause="np.sum(q * k, axis=0) adds down the samples, giving d_k sums of n_samples "
              "products each; the dot product of a pair sums over the features, axis=1.",
        kind="reduction over the wrong axis",
        wrong_on="d_k = 4, n_samples = 1000, seed = 0: returns the variance of 4 sums over 1000 "
                 "samples (in the hundreds) instead of about 4.",
        source=VAR_HEAD + """    dots = np.sum(q * k, axis=0)
    return np.var(dots)
"""),
    Wrong(
        id="e-02-var-no-sum",
        exercise="score_variance",
        cause="np.var(q * k) takes the variance of the single products q_i k_i; the score is "
              "their sum over the features, so sum along axis 1 first.",
        kind="sum left out",
        wrong_on="d_k = 4, n_samples = 1000, seed = 0: returns about 1 instead of about 4.",
        source=VAR_HEAD + """    products = q * k
    return np.var(products)
"""),
    Wrong(
        id="e-02-var-std",
        exercise="score_variance",
        cause="np.std returns the standard deviation, the square root of the variance; the "
              "exercise asks for the variance (np.var).",
        kind="sqrt applied to the result (std for var)",
        wrong_on="d_k = 4, n_samples = 1000, seed = 0: returns about 2 instead of about 4.",
        source=VAR_HEAD + """    dots = (q * k).sum(axis=1)
    return dots.std()
"""),
    Wrong(
        id="e-02-var-mean-of-squares",
        exercise="score_variance",
        cause="np.mean(dots ** 2) is the second moment, which equals the variance only when "
              "the sample mean is exactly 0; subtract the mean (np.var does it).",
        kind="centring left out",
        wrong_on="d_k = 4, n_samples = 10, seed = 0: returns 5.21 instead of 5.14 (too large by "
                 "the square of the sample mean of the dot products; with 1000 samples the gap "
                 "is only about 1e-5 relative).",
        source=VAR_HEAD + """    dots = np.sum(q * k, axis=1)
    return np.mean(dots ** 2)
"""),
    Wrong(
        id="e-02-var-scaled",
        exercise="score_variance",
        cause="The dot products are divided by √d_k before taking the variance: that is the "
              "scale attention applies later, but this experiment measures the raw q·k, whose "
              "variance is d_k; leave the scale out here.",
        kind="scale applied where none belongs",
        wrong_on="d_k = 4, n_samples = 1000, seed = 0: returns about 1 instead of about 4.",
        source=VAR_HEAD + """    dots = np.sum(q * k, axis=1) / np.sqrt(d_k)
    return dots.var()
"""),
]

SDPA_BASE = L02 + SOFTMAX_OK + SCORES_OK

WRONG += [
    Wrong(
        id="e-02-sdpa-softmax-query-axis",
        exercise="scaled_dot_product_attention",
        cause="softmax(..., axis=-2) normalises each column, over the queries, so every key's "
              "weights sum to 1 instead of every query's; the softmax runs along the key axis, "
              "axis=-1.",
        kind="softmax over the wrong axis",
        wrong_on="Q = [[1, 0], [0, 1]], K = [[1, 0], [1, 1]], V = identity: the rows of the "
                 "weights do not sum to 1.",
        source=SDPA_BASE + SDPA_HEAD + """    weights = softmax(attention_scores(Q, K), axis=-2)
    return weights @ V, weights
"""),
    Wrong(
        id="e-02-sdpa-softmax-axis0",
        exercise="scaled_dot_product_attention",
        cause="axis=0 is the first axis of the array, which on a batch is the batch axis: the "
              "softmax then mixes sentences. Count from the end, axis=-1, the key axis.",
        kind="softmax over the batch axis (axis counted from the front)",
        wrong_on="Q, K, V of shape [2, 3, 4] (random): the weights sum to 1 across the two "
                 "sentences, not along each query's row.",
        source=SDPA_BASE + SDPA_HEAD + """    scores = attention_scores(Q, K)
    weights = softmax(scores, axis=0)
    output = weights @ V
    return output, weights
"""),
    Wrong(
        id="e-02-sdpa-tuple-swapped",
        exercise="scaled_dot_product_attention",
        cause="The return line gives (weights, output); the exercise asks for (output, weights).",
        kind="tuple items swapped",
        wrong_on="Q = K = [[1, 0], [0, 1]], V = [[1, 2, 3], [4, 5, 6]]: the first item is the 2×2 "
                 "weights instead of the 2×3 output.",
        source=SDPA_BASE + SDPA_HEAD + """    weights = softmax(attention_scores(Q, K), axis=-1)
    output = weights @ V
    return weights, output
"""),
    Wrong(
        id="e-02-sdpa-weights-transposed",
        exercise="scaled_dot_product_attention",
        cause="The output multiplies V by the transposed weights (the column habit of lesson "
              "03), so output row i mixes the values with column i of the weights; row i of the "
              "output is row i of the weights times V: weights @ V.",
        kind="transpose added",
        wrong_on="Q = [[1, 0], [0, 1]], K = [[1, 0], [1, 1]], V = identity: the output is the "
                 "transposed weights instead of the weights.",
        source=SDPA_BASE + SDPA_HEAD + """    weights = softmax(attention_scores(Q, K), axis=-1)
    output = np.swapaxes(weights, -1, -2) @ V
    return output, weights
"""),
    Wrong(
        id="e-02-sdpa-unscaled",
        exercise="scaled_dot_product_attention",
        cause="The scores are written out as Q @ Kᵀ without the division by √d_k (your "
              "attention_scores is not used); divide by np.sqrt(Q.shape[-1]) before the softmax.",
        kind="scale left out",
        wrong_on="Q = [[1, 1, 1, 1]], K = [[1, 1, 1, 1], [0, 0, 0, 0]], V = [[1], [0]]: the "
                 "weights are softmax([4, 0]) instead of softmax([2, 0]).",
        source=SDPA_BASE + SDPA_HEAD + """    scores = Q @ np.swapaxes(K, -1, -2)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
"""),
    Wrong(
        id="e-02-sdpa-returns-scores",
        exercise="scaled_dot_product_attention",
        cause="The second item returned is the scores, the variable before the softmax; the "
              "exercise asks for the weights (softmax of the scores).",
        kind="returns the wrong variable",
        wrong_on="Q = K = [[1, 0], [0, 1]], V = identity: the second item is [[0.71, 0], [0, 0.71]] "
                 "instead of rows summing to 1.",
        source=SDPA_BASE + SDPA_HEAD + """    scores = attention_scores(Q, K)
    weights = softmax(scores, axis=-1)
    output = weights @ V
    return output, scores
"""),
    Wrong(
        id="e-02-sdpa-mixes-K",
        exercise="scaled_dot_product_attention",
        cause="The weights multiply K instead of V: the output mixes the value vectors, "
              "weights @ V.",
        kind="wrong operand (K for V)",
        wrong_on="Q = K = [[1, 0], [0, 1]], V = [[5, 5], [7, 7]]: returns mixes of the keys "
                 "instead of the values.",
        source=SDPA_BASE + SDPA_HEAD + """    weights = softmax(attention_scores(Q, K), axis=-1)
    return weights @ K, weights
"""),
    Wrong(
        id="e-02-sdpa-averaged-again",
        exercise="scaled_dot_product_attention",
        cause="The output is divided by the number of keys T_k: the weights already sum to 1, "
              "so weights @ V is the average and nothing more is divided.",
        kind="scale applied twice (extra division)",
        wrong_on="Q = K = [[1, 0], [0, 1]], V = [[2, 2], [2, 2]]: every output entry is 1 instead of 2.",
        source=SDPA_BASE + SDPA_HEAD + """    weights = softmax(attention_scores(Q, K), axis=-1)
    output = weights @ V / K.shape[-2]
    return output, weights
"""),
    Wrong(
        id="e-02-sdpa-helper-full-transpose",
        exercise="scaled_dot_product_attention",
        cause="scaled_dot_product_attention itself is right, but your attention_scores uses "
              "K.T, which reverses every axis of a batch; transpose only the last two axes "
              "there (np.swapaxes(K, -1, -2)).",
        kind="graded helper wrong (full transpose on a batch)",
        wrong_on="Q, K, V of shape [2, 3, 4]: raises in attention_scores instead of returning "
                 "[2, 3, 4] outputs.",
        source=L02 + SOFTMAX_OK + SCORES_HEAD + """    return Q @ K.T / np.sqrt(Q.shape[-1])
""" + SDPA_OK),
]

ONE_HEAD = L02 + """
def attend_one_query(q, K, V):
    \"\"\"The single-query sum for q [d_k] over keys K [T_k, d_k] and values V [T_k, d_v] -> [d_v].\"\"\"
    q = as_array(q, "q", ndim=1)
    K = as_array(K, "K", ndim=2)
    V = as_array(V, "V", ndim=2)
    if K.shape[1] != q.shape[0] or V.shape[0] != K.shape[0]:
        raise ValueError(f"q {q.shape}, K {K.shape} and V {V.shape} do not fit: "
                         f"q must be [d_k], K [T_k, d_k] and V [T_k, d_v]")
"""

WRONG += [
    Wrong(
        id="e-02-one-no-scale",
        exercise="attend_one_query",
        cause="Each score is q · k_i without the division by √d_k; the sum uses "
              "s_i = q · k_i / √d_k.",
        kind="scale left out",
        wrong_on="q = [1, 1, 1, 1], K = [[1, 1, 1, 1], [0, 0, 0, 0]], V = [[1], [0]]: returns "
                 "0.98 (softmax of [4, 0]) instead of 0.88 (softmax of [2, 0]).",
        source=ONE_HEAD + """    scores = []
    for i in range(K.shape[0]):
        scores.append(np.sum(q * K[i]))
    scores = np.array(scores)
    e = np.exp(scores - scores.max())
    weights = e / e.sum()
    out = np.zeros(V.shape[1])
    for i in range(K.shape[0]):
        out += weights[i] * V[i]
    return out
"""),
    Wrong(
        id="e-02-one-shift-first-score",
        exercise="attend_one_query",
        cause="You subtract the first key's score, scores[0], instead of the largest score: "
              "when a later score is much larger, its exponential still overflows to inf and "
              "the result is NaN; subtract scores.max().",
        kind="wrong stabilising shift",
        wrong_on="q = [1], K = [[-1000], [1000]], V = [[1], [2]]: returns [nan] instead of [2].",
        source=ONE_HEAD + """    d_k = len(q)
    scores = np.array([np.sum(q * K[i]) / np.sqrt(d_k) for i in range(len(K))])
    e = np.exp(scores - scores[0])
    weights = e / np.sum(e)
    out = np.zeros(V.shape[1])
    for i in range(len(K)):
        out += weights[i] * V[i]
    return out
"""),
    Wrong(
        id="e-02-one-assign-not-add",
        exercise="attend_one_query",
        cause="In the last loop out = weights[i] * V[i] replaces the sum at every key, so only "
              "the last key's term is returned; accumulate with out += ....",
        kind="= for +=",
        wrong_on="q = [0], K = [[0], [0]], V = [[2], [4]]: returns [2] (0.5 × 4) instead of [3].",
        source=ONE_HEAD + """    d_k = q.shape[0]
    s = np.zeros(K.shape[0])
    for i in range(K.shape[0]):
        s[i] = np.sum(q * K[i]) / np.sqrt(d_k)
    w = np.exp(s - s.max())
    w = w / w.sum()
    out = np.zeros(V.shape[1])
    for i in range(K.shape[0]):
        out = w[i] * V[i]
    return out
"""),
    Wrong(
        id="e-02-one-running-denominator",
        exercise="attend_one_query",
        cause="The denominator is a running total built inside the loop, so key i is divided "
              "by the sum of the exponentials of keys 0..i only, and earlier terms are never "
              "corrected; compute the whole sum first (or rescale the earlier terms when it grows).",
        kind="running value not rescaled",
        wrong_on="q = [0], K = [[0], [0]], V = [[2], [4]]: returns [4] (2/1 + 4/2) instead of [3].",
        source=ONE_HEAD + """    d_k = q.shape[0]
    scores = [np.sum(q * K[i]) / np.sqrt(d_k) for i in range(K.shape[0])]
    top = max(scores)
    total = 0.0
    out = np.zeros(V.shape[1])
    for i in range(K.shape[0]):
        e = np.exp(scores[i] - top)
        total += e
        out += e / total * V[i]
    return out
"""),
    Wrong(
        id="e-02-one-out-shape-dk",
        exercise="attend_one_query",
        cause="The sum starts from np.zeros(K.shape[1]), a vector of length d_k; the output "
              "has the length of a value vector, d_v = V.shape[1].",
        kind="hard-coded shape from the wrong array",
        wrong_on="q = [1, 0], K = [[1, 0], [0, 1]], V of shape 2×3: adding a length-3 term to a "
                 "length-2 vector raises instead of returning 3 numbers.",
        source=ONE_HEAD + """    d_k = K.shape[1]
    scores = np.array([np.sum(q * K[i]) for i in range(K.shape[0])]) / np.sqrt(d_k)
    weights = np.exp(scores - np.max(scores))
    weights /= weights.sum()
    out = np.zeros(K.shape[1])
    for i in range(K.shape[0]):
        out += weights[i] * V[i]
    return out
"""),
    Wrong(
        id="e-02-one-sqrt-Tk",
        exercise="attend_one_query",
        cause="The scale is √T_k (len(K), the number of keys) instead of √d_k (len(q), the "
              "length of the query).",
        kind="wrong quantity in the scale",
        wrong_on="q = [2], K = [[1], [0], [0], [0]], V = [[1], [0], [0], [0]]: scores are divided "
                 "by 2 instead of 1.",
        source=ONE_HEAD + """    scores = np.zeros(len(K))
    for i in range(len(K)):
        scores[i] = np.sum(q * K[i]) / np.sqrt(len(K))
    weights = np.exp(scores - scores.max())
    weights = weights / weights.sum()
    out = np.zeros(V.shape[1])
    for i in range(len(K)):
        out += weights[i] * V[i]
    return out
"""),
    Wrong(
        id="e-02-one-not-normalised",
        exercise="attend_one_query",
        cause="The weights are the shifted exponentials e^(s_i - max) but are never divided by "
              "their sum, so they do not add up to 1; divide by the sum before mixing the values.",
        kind="normalisation left out",
        wrong_on="q = [0], K = [[0], [0]], V = [[2], [4]]: returns [6] instead of [3].",
        source=ONE_HEAD + """    d_k = q.shape[0]
    scores = np.array([np.sum(q * K[i]) for i in range(K.shape[0])]) / np.sqrt(d_k)
    weights = np.exp(scores - scores.max())
    out = np.zeros(V.shape[1])
    for i in range(K.shape[0]):
        out += weights[i] * V[i]
    return out
"""),
]

SELF_HEAD = """
def self_attention(X, W_q, W_k, W_v):
    \"\"\"Q = X W_q, K = X W_k, V = X W_v, then scaled dot-product attention. Returns (output, weights).\"\"\"
    X = as_array(X, "X", min_ndim=2)
    W_q = as_array(W_q, "W_q", ndim=2)
    W_k = as_array(W_k, "W_k", ndim=2)
    W_v = as_array(W_v, "W_v", ndim=2)
    if not W_q.shape[0] == W_k.shape[0] == W_v.shape[0] == X.shape[-1]:
        raise ValueError(f"W_q, W_k and W_v need d_model = {X.shape[-1]} rows to project X of shape "
                         f"{X.shape}; got {W_q.shape}, {W_k.shape} and {W_v.shape}")
    if W_q.shape[1] != W_k.shape[1]:
        raise ValueError(f"W_q and W_k must give queries and keys of the same length d_k, "
                         f"got {W_q.shape} and {W_k.shape}")
"""
SELF_BASE = L02 + SOFTMAX_OK + SCORES_OK + SDPA_OK + SELF_HEAD

WRONG += [
    Wrong(
        id="e-02-self-V-from-Wk",
        exercise="self_attention",
        cause="V is projected with W_k (a copy-paste of the line above it); the values come "
              "from W_v: V = X @ W_v.",
        kind="wrong weight matrix (copy-paste)",
        wrong_on="X = identity 2×2, W_q = W_k = identity, W_v = [[0, 1], [1, 0]]: the output "
                 "mixes rows of W_k instead of rows of W_v.",
        source=SELF_BASE + """    Q = X @ W_q
    K = X @ W_k
    V = X @ W_k
    return scaled_dot_product_attention(Q, K, V)
"""),
    Wrong(
        id="e-02-self-weights-transposed",
        exercise="self_attention",
        cause="The projections use the transposed matrices, X @ W.T (the habit of lesson 03's "
              "row convention, where W is d_out×d_in); here W_q is [d_model, d_k], so "
              "Q = X @ W_q, and the same for K and V.",
        kind="transpose added",
        wrong_on="X = [[1, 0], [0, 1]], W_q = W_k = [[0, 1], [0, 0]], W_v = identity: the queries "
                 "and keys come out as columns of W instead of rows, and so do the weights "
                 "(non-square matrices raise).",
        source=SELF_BASE + """    Q = X @ W_q.T
    K = X @ W_k.T
    V = X @ W_v.T
    return scaled_dot_product_attention(Q, K, V)
"""),
    Wrong(
        id="e-02-self-scale-d-model",
        exercise="self_attention",
        cause="The attention is written out inline and divides the scores by √(X.shape[-1]), "
              "the width of X; d_k is the width of the projected queries, W_q.shape[1].",
        kind="wrong quantity in the scale",
        wrong_on="X of shape [3, 4], W_q, W_k, W_v of shape [4, 2] (random): the scores are "
                 "divided by 2 instead of √2.",
        source=SELF_BASE + """    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(X.shape[-1])
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
"""),
    Wrong(
        id="e-02-self-output-only",
        exercise="self_attention",
        cause="You return only the output, [0] of what scaled_dot_product_attention gives; "
              "the exercise asks for the pair (output, weights).",
        kind="returns one tuple item instead of the pair",
        wrong_on="any input, e.g. X = identity 2×2 with identity weights: returns an array, not "
                 "(output, weights).",
        source=SELF_BASE + """    Q = X @ W_q
    K = X @ W_k
    V = X @ W_v
    output = scaled_dot_product_attention(Q, K, V)[0]
    return output
"""),
    Wrong(
        id="e-02-self-Q-K-swapped",
        exercise="self_attention",
        cause="The call passes K where Q belongs and Q where K belongs, so each weight row is "
              "a key's match with the queries (the transposed scores, normalised along the "
              "other axis); call scaled_dot_product_attention(Q, K, V).",
        kind="arguments swapped",
        wrong_on="X = identity 2×2, W_q = [[0, 1], [0, 0]], W_k = identity, W_v = identity: the "
                 "scores come out [[0, 0], [0.71, 0]] instead of [[0, 0.71], [0, 0]].",
        source=SELF_BASE + """    Q = X @ W_q
    K = X @ W_k
    V = X @ W_v
    return scaled_dot_product_attention(K, Q, V)
"""),
    Wrong(
        id="e-02-self-V-is-X",
        exercise="self_attention",
        cause="The values are the tokens themselves, V = X; they must be projected too, "
              "V = X @ W_v.",
        kind="projection left out",
        wrong_on="X of shape [3, 4], W_v of shape [4, 2]: the output has 4 columns instead of 2.",
        source=SELF_BASE + """    Q = X @ W_q
    K = X @ W_k
    output, weights = scaled_dot_product_attention(Q, K, X)
    return output, weights
"""),
]

# ---------------------------------------------------------------------------- worksheet
WRONG += [
    Wrong(
        id='e-03-ws-Q-tokens-as-rows',
        exercise='worksheet_Q',
        cause='Q is typed with one row per token (4 rows of 3), the row convention of the other lessons; in this worksheet tokens are columns: Q = W_Q X has 3 rows (features) of 4 numbers (tokens).',
        kind='transposed layout',
        wrong_on='the published worksheet: Q is typed 4×3 (Qᵀ) instead of 3×4.',
        source='''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

# Q = W_Q X, K = W_K X, V = W_V X: 3 rows of 4 numbers each, one column per token.
WORKSHEET["Q"] = """
2 1 1
1 1 0
1 0 2
1 1 1
"""
WORKSHEET["K"] = """
1 2 0 0
0 1 -1 1
1 1 1 0
"""
WORKSHEET["V"] = """
1 0 2 1
1 0 1 2
0 0 1 1
"""
'''),
    Wrong(
        id='e-03-ws-Q-missed-product',
        exercise='worksheet_Q',
        cause='Entry (3, 3) of Q, row 3 of W_Q dotted with token 3, counts only one of its two matching features (X rows 3 and 5 are both 1 there): it is 1 + 1 = 2, not 1.',
        kind='arithmetic slip (a product left out of a dot product)',
        wrong_on='the published worksheet: Q[2, 2] is typed 1 instead of 2.',
        source='''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

# Q = W_Q X, K = W_K X, V = W_V X: 3 rows of 4 numbers each, one column per token.
WORKSHEET["Q"] = """
2 1 1 1
1 1 0 1
1 0 1 1
"""
WORKSHEET["K"] = """
1 2 0 0
0 1 -1 1
1 1 1 0
"""
WORKSHEET["V"] = """
1 0 2 1
1 0 1 2
0 0 1 1
"""
'''),
    Wrong(
        id='e-03-ws-Q-K-swapped',
        exercise='worksheet_Q',
        cause='The numbers of K were typed under "Q" and those of Q under "K": Q comes from W_Q and K from W_K. Swap the two blocks back.',
        kind='two results swapped',
        wrong_on='the published worksheet: "Q" holds W_K X instead of W_Q X (and "K" holds W_Q X).',
        source='''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

# Q = W_Q X, K = W_K X, V = W_V X: 3 rows of 4 numbers each, one column per token.
WORKSHEET["Q"] = """
1 2 0 0
0 1 -1 1
1 1 1 0
"""
WORKSHEET["K"] = """
2 1 1 1
1 1 0 1
1 0 2 1
"""
WORKSHEET["V"] = """
1 0 2 1
1 0 1 2
0 0 1 1
"""
'''),
    Wrong(
        id='e-03-ws-K-minus-read-as-plus',
        exercise='worksheet_K',
        cause='Row 2 of W_K has a -1 (on feature 5), and it was used as +1: token 3 has feature 5, so entry (2, 3) of K is 0 + 0 - 1 + 0 = -1, not 1.',
        kind='sign slip (-1 taken as +1)',
        wrong_on='the published worksheet: K[1, 2] (0-based) is typed 1 instead of -1.',
        source='''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

# Q = W_Q X, K = W_K X, V = W_V X: 3 rows of 4 numbers each, one column per token.
WORKSHEET["Q"] = """
2 1 1 1
1 1 0 1
1 0 2 1
"""
WORKSHEET["K"] = """
1 2 0 0
0 1 1 1
1 1 1 0
"""
WORKSHEET["V"] = """
1 0 2 1
1 0 1 2
0 0 1 1
"""
'''),
    Wrong(
        id='e-03-ws-K-missed-product',
        exercise='worksheet_K',
        cause='K[0, 1] is row 1 of W_K (features 2 and 4) dotted with token 2, which has both features: 1 + 1 = 2; only one of them was counted.',
        kind='arithmetic slip (a product left out of a dot product)',
        wrong_on='the published worksheet: K[0, 1] is typed 1 instead of 2.',
        source='''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

# Q = W_Q X, K = W_K X, V = W_V X: 3 rows of 4 numbers each, one column per token.
WORKSHEET["Q"] = """
2 1 1 1
1 1 0 1
1 0 2 1
"""
WORKSHEET["K"] = """
1 1 0 0
0 1 -1 1
1 1 1 0
"""
WORKSHEET["V"] = """
1 0 2 1
1 0 1 2
0 0 1 1
"""
'''),
    Wrong(
        id='e-03-ws-V-tokens-as-rows',
        exercise='worksheet_V',
        cause='V is typed with one row per token (4 rows of 3); with tokens as columns, V = W_V X is 3 rows of 4, column j being the value of token j.',
        kind='transposed layout',
        wrong_on='the published worksheet: V is typed 4×3 (Vᵀ) instead of 3×4.',
        source='''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

# Q = W_Q X, K = W_K X, V = W_V X: 3 rows of 4 numbers each, one column per token.
WORKSHEET["Q"] = """
2 1 1 1
1 1 0 1
1 0 2 1
"""
WORKSHEET["K"] = """
1 2 0 0
0 1 -1 1
1 1 1 0
"""
WORKSHEET["V"] = """
1 1 0
0 0 0
2 1 1
1 2 1
"""
'''),
    Wrong(
        id='e-03-ws-V-rows-swapped',
        exercise='worksheet_V',
        cause='The last two rows of V are typed in the wrong order: row 2 of V comes from row 2 of W_V (features 3 and 6) and row 3 from row 3 (features 5 and 6).',
        kind='rows swapped',
        wrong_on="the published worksheet: V's rows 2 and 3 are exchanged ([0 0 1 1] typed second).",
        source='''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

# Q = W_Q X, K = W_K X, V = W_V X: 3 rows of 4 numbers each, one column per token.
WORKSHEET["Q"] = """
2 1 1 1
1 1 0 1
1 0 2 1
"""
WORKSHEET["K"] = """
1 2 0 0
0 1 -1 1
1 1 1 0
"""
WORKSHEET["V"] = """
1 0 2 1
0 0 1 1
1 0 1 2
"""
'''),
    Wrong(
        id='e-03-ws-scores-QtK',
        exercise='worksheet_scores',
        cause='The scores are typed as Qᵀ K, one row per query; the worksheet asks for Kᵀ Q, whose row i belongs to key i and column j to query j (the transpose of what was typed).',
        kind='result transposed (operands swapped)',
        wrong_on='the published worksheet: scores typed as the transpose of Kᵀ Q.',
        source='''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

# Q = W_Q X, K = W_K X, V = W_V X: 3 rows of 4 numbers each, one column per token.
WORKSHEET["Q"] = """
2 1 1 1
1 1 0 1
1 0 2 1
"""
WORKSHEET["K"] = """
1 2 0 0
0 1 -1 1
1 1 1 0
"""
WORKSHEET["V"] = """
1 0 2 1
1 0 1 2
0 0 1 1
"""

# Kᵀ Q: 4 rows (one per key) of 4 numbers (one per query).
WORKSHEET["scores"] = """
3 6 0 1
1 3 -1 1
3 4 2 0
2 4 0 1
"""
'''),
    Wrong(
        id='e-03-ws-scores-sign-slip',
        exercise='worksheet_scores',
        cause='Entry (3, 2) is k_3 · q_2 = 0·1 + (-1)·1 + 1·0 = -1; the -1 in k_3 = (0, -1, 1) was dropped and it was typed 1.',
        kind='sign slip in a dot product',
        wrong_on='the published worksheet: scores[2, 1] typed 1 instead of -1.',
        source='''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

# Q = W_Q X, K = W_K X, V = W_V X: 3 rows of 4 numbers each, one column per token.
WORKSHEET["Q"] = """
2 1 1 1
1 1 0 1
1 0 2 1
"""
WORKSHEET["K"] = """
1 2 0 0
0 1 -1 1
1 1 1 0
"""
WORKSHEET["V"] = """
1 0 2 1
1 0 1 2
0 0 1 1
"""

# Kᵀ Q: 4 rows (one per key) of 4 numbers (one per query).
WORKSHEET["scores"] = """
3 1 3 2
6 3 4 4
0 1 2 0
1 1 0 1
"""
'''),
    Wrong(
        id='e-03-ws-scaled-round-half-up',
        exercise='worksheet_scaled',
        cause='Odd scores were rounded to the nearest whole number with halves going up (3/2 -> 2, 1/2 -> 1, -1/2 -> 0); the step is the floor, rounding down: 3/2 -> 1, 1/2 -> 0, -1/2 -> -1.',
        kind='rounding for floor',
        wrong_on='the published worksheet: scores 3, 1 and -1 give 2, 1 and 0 instead of 1, 0 and -1.',
        source='''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

# Q = W_Q X, K = W_K X, V = W_V X: 3 rows of 4 numbers each, one column per token.
WORKSHEET["Q"] = """
2 1 1 1
1 1 0 1
1 0 2 1
"""
WORKSHEET["K"] = """
1 2 0 0
0 1 -1 1
1 1 1 0
"""
WORKSHEET["V"] = """
1 0 2 1
1 0 1 2
0 0 1 1
"""

# Kᵀ Q: 4 rows (one per key) of 4 numbers (one per query).
WORKSHEET["scores"] = """
3 1 3 2
6 3 4 4
0 -1 2 0
1 1 0 1
"""

# floor(scores / 2): 4 rows of 4 whole numbers.
WORKSHEET["scaled"] = """
2 1 2 1
3 2 2 2
0 0 1 0
1 1 0 1
"""
'''),
    Wrong(
        id='e-03-ws-scaled-toward-zero',
        exercise='worksheet_scaled',
        cause='-1/2 was rounded toward zero, to 0; the floor rounds down also below zero, so floor(-1/2) = -1.',
        kind='truncation for floor (negative case)',
        wrong_on='the published worksheet: scaled[2, 1] typed 0 instead of -1.',
        source='''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

# Q = W_Q X, K = W_K X, V = W_V X: 3 rows of 4 numbers each, one column per token.
WORKSHEET["Q"] = """
2 1 1 1
1 1 0 1
1 0 2 1
"""
WORKSHEET["K"] = """
1 2 0 0
0 1 -1 1
1 1 1 0
"""
WORKSHEET["V"] = """
1 0 2 1
1 0 1 2
0 0 1 1
"""

# Kᵀ Q: 4 rows (one per key) of 4 numbers (one per query).
WORKSHEET["scores"] = """
3 1 3 2
6 3 4 4
0 -1 2 0
1 1 0 1
"""

# floor(scores / 2): 4 rows of 4 whole numbers.
WORKSHEET["scaled"] = """
1 0 1 1
3 1 2 2
0 0 1 0
0 0 0 0
"""
'''),
    Wrong(
        id='e-03-ws-scaled-no-floor',
        exercise='worksheet_scaled',
        cause='The scores were halved but not rounded: fractions like 3/2 and -1/2 are left in; the step keeps whole numbers by taking the floor.',
        kind='floor left out',
        wrong_on='the published worksheet: scaled[0, 0] typed 3/2 instead of 1.',
        source='''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

# Q = W_Q X, K = W_K X, V = W_V X: 3 rows of 4 numbers each, one column per token.
WORKSHEET["Q"] = """
2 1 1 1
1 1 0 1
1 0 2 1
"""
WORKSHEET["K"] = """
1 2 0 0
0 1 -1 1
1 1 1 0
"""
WORKSHEET["V"] = """
1 0 2 1
1 0 1 2
0 0 1 1
"""

# Kᵀ Q: 4 rows (one per key) of 4 numbers (one per query).
WORKSHEET["scores"] = """
3 1 3 2
6 3 4 4
0 -1 2 0
1 1 0 1
"""

# floor(scores / 2): 4 rows of 4 whole numbers.
WORKSHEET["scaled"] = """
3/2 1/2 3/2 1
3 3/2 2 2
0 -1/2 1 0
1/2 1/2 0 1/2
"""
'''),
    Wrong(
        id='e-03-ws-A-rows-normalised',
        exercise='worksheet_A',
        cause="Each row of powers was divided by its row sum; in this convention each column is one query's weights, so divide every power by its column's sum.",
        kind='normalised along the wrong axis',
        wrong_on="the published worksheet: A's rows sum to 1 and its columns do not.",
        source='''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

# Q = W_Q X, K = W_K X, V = W_V X: 3 rows of 4 numbers each, one column per token.
WORKSHEET["Q"] = """
2 1 1 1
1 1 0 1
1 0 2 1
"""
WORKSHEET["K"] = """
1 2 0 0
0 1 -1 1
1 1 1 0
"""
WORKSHEET["V"] = """
1 0 2 1
1 0 1 2
0 0 1 1
"""

# Kᵀ Q: 4 rows (one per key) of 4 numbers (one per query).
WORKSHEET["scores"] = """
3 1 3 2
6 3 4 4
0 -1 2 0
1 1 0 1
"""

# floor(scores / 2): 4 rows of 4 whole numbers.
WORKSHEET["scaled"] = """
1 0 1 1
3 1 2 2
0 -1 1 0
0 0 0 0
"""

# A: 4 rows of 4 weights, every column adds up to 1. Write fractions like 3/16.
WORKSHEET["A"] = """
3/10 1/10 3/10 3/10
9/16 1/16 3/16 3/16
3/16 1/16 9/16 3/16
1/4 1/4 1/4 1/4
"""
'''),
    Wrong(
        id='e-03-ws-A-negative-power',
        exercise='worksheet_A',
        cause='3^(-1) was taken as 3; a negative exponent gives the reciprocal, 3^(-1) = 1/3, so column 2 has powers 1, 3, 1/3, 1 (sum 16/3), not 1, 3, 3, 1.',
        kind='sign of an exponent lost',
        wrong_on='the published worksheet: column 2 of A typed 1/8 3/8 3/8 1/8 instead of 3/16 9/16 1/16 3/16.',
        source='''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

# Q = W_Q X, K = W_K X, V = W_V X: 3 rows of 4 numbers each, one column per token.
WORKSHEET["Q"] = """
2 1 1 1
1 1 0 1
1 0 2 1
"""
WORKSHEET["K"] = """
1 2 0 0
0 1 -1 1
1 1 1 0
"""
WORKSHEET["V"] = """
1 0 2 1
1 0 1 2
0 0 1 1
"""

# Kᵀ Q: 4 rows (one per key) of 4 numbers (one per query).
WORKSHEET["scores"] = """
3 1 3 2
6 3 4 4
0 -1 2 0
1 1 0 1
"""

# floor(scores / 2): 4 rows of 4 whole numbers.
WORKSHEET["scaled"] = """
1 0 1 1
3 1 2 2
0 -1 1 0
0 0 0 0
"""

# A: 4 rows of 4 weights, every column adds up to 1. Write fractions like 3/16.
WORKSHEET["A"] = """
3/32 1/8 3/16 3/14
27/32 3/8 9/16 9/14
1/32 3/8 3/16 1/14
1/32 1/8 1/16 1/14
"""
'''),
    Wrong(
        id='e-03-ws-A-zero-power',
        exercise='worksheet_A',
        cause='3^0 was written as 0; any number to the power 0 is 1, so every scaled score of 0 gets power 1 and a share of the weight.',
        kind='wrong value for x^0',
        wrong_on='the published worksheet: A[2, 0] typed 0 instead of 1/32.',
        source='''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

# Q = W_Q X, K = W_K X, V = W_V X: 3 rows of 4 numbers each, one column per token.
WORKSHEET["Q"] = """
2 1 1 1
1 1 0 1
1 0 2 1
"""
WORKSHEET["K"] = """
1 2 0 0
0 1 -1 1
1 1 1 0
"""
WORKSHEET["V"] = """
1 0 2 1
1 0 1 2
0 0 1 1
"""

# Kᵀ Q: 4 rows (one per key) of 4 numbers (one per query).
WORKSHEET["scores"] = """
3 1 3 2
6 3 4 4
0 -1 2 0
1 1 0 1
"""

# floor(scores / 2): 4 rows of 4 whole numbers.
WORKSHEET["scaled"] = """
1 0 1 1
3 1 2 2
0 -1 1 0
0 0 0 0
"""

# A: 4 rows of 4 weights, every column adds up to 1. Write fractions like 3/16.
WORKSHEET["A"] = """
1/10 0 1/5 1/4
9/10 9/10 3/5 3/4
0 1/10 1/5 0
0 0 0 0
"""
'''),
    Wrong(
        id='e-03-ws-Z-A-transposed',
        exercise='worksheet_Z',
        cause="Z was computed as V Aᵀ: each output column mixed the values with a row of A. Column j of Z is V times column j of A (query j's weights).",
        kind='transpose added',
        wrong_on="the published worksheet: Z[0, 0] typed 153/224 (V's row 1 against A's row 1) instead of 3/16.",
        source='''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

# Q = W_Q X, K = W_K X, V = W_V X: 3 rows of 4 numbers each, one column per token.
WORKSHEET["Q"] = """
2 1 1 1
1 1 0 1
1 0 2 1
"""
WORKSHEET["K"] = """
1 2 0 0
0 1 -1 1
1 1 1 0
"""
WORKSHEET["V"] = """
1 0 2 1
1 0 1 2
0 0 1 1
"""

# Kᵀ Q: 4 rows (one per key) of 4 numbers (one per query).
WORKSHEET["scores"] = """
3 1 3 2
6 3 4 4
0 -1 2 0
1 1 0 1
"""

# floor(scores / 2): 4 rows of 4 whole numbers.
WORKSHEET["scaled"] = """
1 0 1 1
3 1 2 2
0 -1 1 0
0 0 0 0
"""

# A: 4 rows of 4 weights, every column adds up to 1. Write fractions like 3/16.
WORKSHEET["A"] = """
3/32 3/16 3/16 3/14
27/32 9/16 9/16 9/14
1/32 1/16 3/16 1/14
1/32 3/16 1/16 1/14
"""

# Z = V A: 3 rows of 4 numbers, one column per token.
WORKSHEET["Z"] = """
153/224 585/224 107/224 51/224
159/224 603/224 81/224 53/224
45/112 135/112 29/112 15/112
"""
'''),
    Wrong(
        id='e-03-ws-Z-powers-not-divided',
        exercise='worksheet_Z',
        cause='Z was computed from the powers of 3 (the numerators of A) and the column sums were never divided out; use the weights of A, whose columns sum to 1, or divide each column of the result by its column sum.',
        kind='normalisation left out',
        wrong_on="the published worksheet: Z[0, 0] typed 6 (V's row 1 against the powers 3, 27, 1, 1) instead of 3/16.",
        source='''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

# Q = W_Q X, K = W_K X, V = W_V X: 3 rows of 4 numbers each, one column per token.
WORKSHEET["Q"] = """
2 1 1 1
1 1 0 1
1 0 2 1
"""
WORKSHEET["K"] = """
1 2 0 0
0 1 -1 1
1 1 1 0
"""
WORKSHEET["V"] = """
1 0 2 1
1 0 1 2
0 0 1 1
"""

# Kᵀ Q: 4 rows (one per key) of 4 numbers (one per query).
WORKSHEET["scores"] = """
3 1 3 2
6 3 4 4
0 -1 2 0
1 1 0 1
"""

# floor(scores / 2): 4 rows of 4 whole numbers.
WORKSHEET["scaled"] = """
1 0 1 1
3 1 2 2
0 -1 1 0
0 0 0 0
"""

# A: 4 rows of 4 weights, every column adds up to 1. Write fractions like 3/16.
WORKSHEET["A"] = """
3/32 3/16 3/16 3/14
27/32 9/16 9/16 9/14
1/32 1/16 3/16 1/14
1/32 3/16 1/16 1/14
"""

# Z = V A: 3 rows of 4 numbers, one column per token.
WORKSHEET["Z"] = """
6 8/3 10 6
6 10/3 8 6
2 4/3 4 2
"""
'''),
]

# ---------------------------------------------------------------------------- functions

L03 = """import math
from fractions import Fraction

import numpy as np
from grader.learner.validation import as_fractions
"""

KQS_HEAD = """
def key_query_scores(K, Q):
    \"\"\"Kᵀ Q for keys and queries stored as columns: entry [i, j] is k_i · q_j.

    K: d_k×T_k and Q: d_k×T_q (ints, Fractions or floats). Returns T_k×T_q Fractions.
    \"\"\"
    K = as_fractions(K, "K")
    Q = as_fractions(Q, "Q")
    if K.shape[0] != Q.shape[0]:
        raise ValueError(f"K and Q must have the same number of rows d_k, got K of shape "
                         f"{K.shape} and Q of shape {Q.shape}")
"""
KQS_OK = KQS_HEAD + """    return K.T @ Q
"""

FLOOR_HEAD = """
def floor_half(S):
    \"\"\"floor(S / 2) entry by entry, exactly: the stand-in for S / √3. floor(-1/2) is -1.\"\"\"
    S = as_fractions(S, "S")
"""
FLOOR_OK = FLOOR_HEAD + """    out = np.empty(S.shape, dtype=object)
    for idx in np.ndindex(S.shape):
        out[idx] = Fraction(math.floor(S[idx] / 2))
    return out
"""

SM3_HEAD = """
def softmax3_columns(S):
    \"\"\"3 ** S with every column divided by its sum, exactly. Every column sums to 1.

    S holds whole numbers (the scaled scores).
    \"\"\"
    S = as_fractions(S, "S", whole=True)
"""
SM3_OK = SM3_HEAD + """    P = np.array([[Fraction(3) ** int(s) for s in row] for row in S], dtype=object)
    return P / P.sum(axis=0)
"""

WRONG += [
    Wrong(
        id="e-03-kqs-QtK",
        exercise="key_query_scores",
        cause="Q.T @ K puts the queries on the rows: entry [i, j] becomes q_i · k_j, the "
              "transpose of what is asked; keys are the rows of the result, K.T @ Q.",
        kind="operands swapped (result transposed)",
        wrong_on="K = [[1, 0]] (2 keys, d_k = 1), Q = [[2, 3, 4]]: returns 3×2 instead of 2×3.",
        source=L03 + KQS_HEAD + """    return Q.T @ K
"""),
    Wrong(
        id="e-03-kqs-row-habit",
        exercise="key_query_scores",
        cause="K @ Q.T is the row-convention formula (Q Kᵀ with tokens as rows) applied to "
              "columns: it multiplies over the tokens and gives a d_k×d_k matrix. With tokens "
              "as columns the scores are K.T @ Q.",
        kind="formula of the other convention",
        wrong_on="K = Q = [[1, 0], [0, 1], [1, 1]] (d_k = 3, 2 tokens): returns a 3×3 matrix "
                 "instead of the 2×2 [[2, 1], [1, 2]] (it raises when T_k != T_q).",
        source=L03 + KQS_HEAD + """    return K @ Q.T
"""),
    Wrong(
        id="e-03-kqs-float-zeros",
        exercise="key_query_scores",
        cause="The loop writes the exact sums into np.zeros((T_k, T_q)), a float array, so "
              "every Fraction is rounded to a float (1/9 becomes 0.111...); make the result "
              "an object array (dtype=object) or use K.T @ Q directly.",
        kind="float container for exact values",
        wrong_on="K = [[1/3]], Q = [[1/3]] as Fractions: returns the float 0.1111111111111111 "
                 "instead of Fraction(1, 9).",
        source=L03 + KQS_HEAD + """    T_k, T_q = K.shape[1], Q.shape[1]
    scores = np.zeros((T_k, T_q))
    for i in range(T_k):
        for j in range(T_q):
            scores[i, j] = sum(K[:, i] * Q[:, j])
    return scores
"""),
    Wrong(
        id="e-03-kqs-elementwise",
        exercise="key_query_scores",
        cause="(K * Q).sum(axis=0) multiplies key j with query j only, entry by entry, and gives "
              "the diagonal k_j · q_j as one row; every key must meet every query: K.T @ Q.",
        kind="* for @ (only matching pairs)",
        wrong_on="K = Q = [[1, 0], [0, 1]]: returns [1, 1] instead of the 2×2 identity "
                 "(different numbers of keys and queries raise).",
        source=L03 + KQS_HEAD + """    return (K * Q).sum(axis=0)
"""),
]

WRONG += [
    Wrong(
        id="e-03-floor-int",
        exercise="floor_half",
        cause="int() rounds toward zero, so int(-1/2) is 0; the floor rounds down, "
              "math.floor(-1/2) = -1 (or s // 2).",
        kind="truncation for floor",
        wrong_on="S = [[-1]]: returns [[0]] instead of [[-1]].",
        source=L03 + FLOOR_HEAD + """    return np.array([[Fraction(int(s / 2)) for s in row] for row in S], dtype=object)
"""),
    Wrong(
        id="e-03-floor-round",
        exercise="floor_half",
        cause="round() goes to the nearest whole number (halves to the even one), so "
              "round(3/2) = 2; the step rounds down, math.floor(s / 2).",
        kind="rounding for floor",
        wrong_on="S = [[3]]: returns [[2]] instead of [[1]].",
        source=L03 + FLOOR_HEAD + """    out = np.empty(S.shape, dtype=object)
    for i in range(S.shape[0]):
        for j in range(S.shape[1]):
            out[i, j] = Fraction(round(S[i, j] / 2))
    return out
"""),
    Wrong(
        id="e-03-floor-left-out",
        exercise="floor_half",
        cause="S / 2 halves the scores exactly but never rounds them down, so odd scores give "
              "halves like 3/2; take math.floor of each S / 2.",
        kind="floor left out",
        wrong_on="S = [[3]]: returns [[3/2]] instead of [[1]].",
        source=L03 + FLOOR_HEAD + """    return S / 2
"""),
    Wrong(
        id="e-03-floor-ceil",
        exercise="floor_half",
        cause="math.ceil rounds up; the worksheet's stand-in rounds down: math.floor(s / 2).",
        kind="ceil for floor",
        wrong_on="S = [[1]]: returns [[1]] instead of [[0]].",
        source=L03 + FLOOR_HEAD + """    return np.array([[Fraction(math.ceil(s / 2)) for s in row] for row in S], dtype=object)
"""),
]

WRONG += [
    Wrong(
        id="e-03-sm3-rows",
        exercise="softmax3_columns",
        cause="P.sum(axis=1, keepdims=True) divides each row by its row sum; the weights of a "
              "query are a column here, so divide by the column sums, P.sum(axis=0).",
        kind="normalised along the wrong axis",
        wrong_on="S = [[0, 1], [0, 0]]: returns [[1/4, 3/4], [1/2, 1/2]] instead of "
                 "[[1/2, 3/4], [1/2, 1/4]].",
        source=L03 + SM3_HEAD + """    P = np.array([[Fraction(3) ** int(s) for s in row] for row in S], dtype=object)
    return P / P.sum(axis=1, keepdims=True)
"""),
    Wrong(
        id="e-03-sm3-total",
        exercise="softmax3_columns",
        cause="P / P.sum() divides by the sum of the whole matrix, so only all the entries "
              "together sum to 1; each column must: P / P.sum(axis=0).",
        kind="reduction over every axis",
        wrong_on="S = [[0, 0], [0, 0]]: every weight is 1/4 instead of 1/2.",
        source=L03 + SM3_HEAD + """    P = np.array([[Fraction(3) ** int(s) for s in row] for row in S], dtype=object)
    return P / P.sum()
"""),
    Wrong(
        id="e-03-sm3-int-power",
        exercise="softmax3_columns",
        cause="3 ** S gives Python ints for the non-negative scores, and int / int is a float, "
              "so a column without a negative score comes out in floats (1/3 becomes "
              "0.333...); raise Fraction(3) to each int(s) entry by entry.",
        kind="exactness lost (int division gives floats)",
        wrong_on="S = [[0], [0], [0]]: returns the float 0.3333333333333333 three times instead "
                 "of Fraction(1, 3).",
        source=L03 + SM3_HEAD + """    P = 3 ** S
    return P / P.sum(axis=0)
"""),
    Wrong(
        id="e-03-sm3-fraction-of-float",
        exercise="softmax3_columns",
        cause="Fraction(3 ** s) converts a power that was already a float (3 ** -1 with an int "
              "exponent is 0.333...) into the fraction of that float, not 1/3; compute the "
              "power on a Fraction, Fraction(3) ** int(s).",
        kind="exactness lost (float converted back)",
        wrong_on="S = [[-1], [0]]: the weights are not exactly 1/4 and 3/4 (the 1/3 is the "
                 "binary float's fraction).",
        source=L03 + SM3_HEAD + """    P = np.array([[Fraction(3 ** int(s)) for s in row] for row in S], dtype=object)
    return P / P.sum(axis=0)
"""),
    Wrong(
        id="e-03-sm3-loop-over-rows-count",
        exercise="softmax3_columns",
        cause="The loop over the columns runs over range(S.shape[0]), the number of rows, so "
              "with more columns than rows the last columns are never normalised (and with "
              "more rows it runs past the last column); loop over range(S.shape[1]).",
        kind="loop bound from the wrong axis",
        wrong_on="S = [[0, 0, 0], [0, 0, 0]]: column 2 keeps its powers [1, 1] instead of [1/2, 1/2].",
        source=L03 + SM3_HEAD + """    P = np.array([[Fraction(3) ** int(s) for s in row] for row in S], dtype=object)
    for j in range(S.shape[0]):
        P[:, j] = P[:, j] / sum(P[:, j])
    return P
"""),
]

ABH_HEAD = """
def attention_by_hand(X, W_Q, W_K, W_V):
    \"\"\"Every step of the worksheet, with tokens as the columns of X (d_in×T).\"\"\"
    X = as_fractions(X, "X")
    W_Q, W_K, W_V = as_fractions(W_Q, "W_Q"), as_fractions(W_K, "W_K"), as_fractions(W_V, "W_V")
    for name, W in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
        if W.shape[1] != X.shape[0]:
            raise ValueError(f"{name} has {W.shape[1]} columns but X has {X.shape[0]} rows "
                             f"(features): shapes {W.shape} and {X.shape}")
    if W_Q.shape[0] != W_K.shape[0]:
        raise ValueError(f"W_Q and W_K must have the same number of rows, got shapes "
                         f"{W_Q.shape} and {W_K.shape}")
"""
ABH_OK = ABH_HEAD + """    Q = W_Q @ X
    K = W_K @ X
    V = W_V @ X
    scores = key_query_scores(K, Q)
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    Z = V @ A
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
"""
ABH_BASE = L03 + KQS_OK + FLOOR_OK + SM3_OK

WRONG += [
    Wrong(
        id="e-03-abh-Z-A-transposed",
        exercise="attention_by_hand",
        cause="Z = V @ A.T mixes the values with the rows of A; column j of Z uses query j's "
              "weights, column j of A: Z = V @ A.",
        kind="transpose added",
        wrong_on="the published worksheet (X, W_Q, W_K, W_V of courseware.worksheet): Z[0, 0] is "
                 "153/224 instead of 3/16; every other step is right.",
        source=ABH_BASE + ABH_HEAD + """    Q = W_Q @ X
    K = W_K @ X
    V = W_V @ X
    scores = key_query_scores(K, Q)
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    Z = V @ A.T
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
"""),
    Wrong(
        id="e-03-abh-scores-args-swapped",
        exercise="attention_by_hand",
        cause="key_query_scores(Q, K) passes the queries as keys, so the scores are Qᵀ K, the "
              "transpose, and every later step follows; call key_query_scores(K, Q).",
        kind="arguments swapped",
        wrong_on="the published worksheet: scores[0, 1] is 6 (q_1 · k_2) instead of 1 (k_1 · q_2).",
        source=ABH_BASE + ABH_HEAD + """    Q = W_Q @ X
    K = W_K @ X
    V = W_V @ X
    scores = key_query_scores(Q, K)
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    Z = V @ A
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
"""),
    Wrong(
        id="e-03-abh-scale-skipped",
        exercise="attention_by_hand",
        cause="softmax3_columns gets the raw scores, not the scaled ones: the floor(x/2) step "
              "is computed and returned but never used; pass scaled to softmax3_columns.",
        kind="intermediate computed but not used",
        wrong_on="the published worksheet: A's column 1 is 3^[3, 6, 0, 1] normalised "
                 "(27/760, ...) instead of 3/32, 27/32, 1/32, 1/32.",
        source=ABH_BASE + ABH_HEAD + """    Q = W_Q @ X
    K = W_K @ X
    V = W_V @ X
    scores = key_query_scores(K, Q)
    scaled = floor_half(scores)
    A = softmax3_columns(scores)
    Z = V @ A
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
"""),
    Wrong(
        id="e-03-abh-K-from-WQ",
        exercise="attention_by_hand",
        cause="K is computed with W_Q (copy-paste of the line above); keys come from W_K: "
              "K = W_K @ X.",
        kind="wrong weight matrix (copy-paste)",
        wrong_on="the published worksheet: K equals Q ([[2, 1, 1, 1], ...]) instead of "
                 "[[1, 2, 0, 0], ...], and every later step follows.",
        source=ABH_BASE + ABH_HEAD + """    Q = W_Q @ X
    K = W_Q @ X
    V = W_V @ X
    scores = key_query_scores(K, Q)
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    Z = V @ A
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
"""),
    Wrong(
        id="e-03-abh-dict-scaled-is-scores",
        exercise="attention_by_hand",
        cause="The computation is right, but the dict stores scores under \"scaled\" (a "
              "typo in the return line); put scaled there.",
        kind="returns the wrong variable",
        wrong_on="the published worksheet: \"scaled\" holds [[3, 1, 3, 2], ...] instead of "
                 "[[1, 0, 1, 1], ...].",
        source=ABH_BASE + ABH_HEAD + """    Q = W_Q @ X
    K = W_K @ X
    V = W_V @ X
    scores = key_query_scores(K, Q)
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    Z = V @ A
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scores, "A": A, "Z": Z}
"""),
    Wrong(
        id="e-03-abh-helper-floor-int",
        exercise="attention_by_hand",
        cause="attention_by_hand is right, but your floor_half uses int(), which rounds -1/2 "
              "toward zero to 0 instead of down to -1; fix floor_half (math.floor) and this "
              "follows.",
        kind="graded helper wrong (truncation for floor)",
        wrong_on="the published worksheet: scaled[2, 1] is 0 instead of -1 (score -1), so "
                 "column 2 of A and of Z are wrong too.",
        source=L03 + KQS_OK + FLOOR_HEAD + """    out = np.empty(S.shape, dtype=object)
    for idx in np.ndindex(S.shape):
        out[idx] = Fraction(int(S[idx] / 2))
    return out
""" + SM3_OK + ABH_OK),
]

ROW_HEAD = """
def row_convention_attention(X_rows, W_Q, W_K, W_V):
    \"\"\"The worksheet with tokens as the rows of X_rows (T×d_in); the same 3×d_in weights.

    Returns the same keys as attention_by_hand; A's rows sum to 1 and Z = A V.
    \"\"\"
    X_rows = as_fractions(X_rows, "X_rows")
    W_Q, W_K, W_V = as_fractions(W_Q, "W_Q"), as_fractions(W_K, "W_K"), as_fractions(W_V, "W_V")
    for name, W in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
        if W.shape[1] != X_rows.shape[1]:
            raise ValueError(f"{name} has {W.shape[1]} columns but X_rows has {X_rows.shape[1]} "
                             f"columns (features): shapes {W.shape} and {X_rows.shape}")
    if W_Q.shape[0] != W_K.shape[0]:
        raise ValueError(f"W_Q and W_K must have the same number of rows, got shapes "
                         f"{W_Q.shape} and {W_K.shape}")
"""
ROW_BASE = L03 + KQS_OK + FLOOR_OK + SM3_OK

WRONG += [
    Wrong(
        id="e-03-row-softmax-down-columns",
        exercise="row_convention_attention",
        cause="softmax3_columns(scaled) normalises each column, but with tokens as rows each "
              "query's weights are a row; normalise the rows, softmax3_columns(scaled.T).T.",
        kind="normalised along the wrong axis",
        wrong_on="the published worksheet with X_rows = X.T: A's columns sum to 1 instead of its "
                 "rows (A[0] is 3/10, 9/16, 3/16, 1/4 instead of 3/32, 27/32, 1/32, 1/32).",
        source=ROW_BASE + ROW_HEAD + """    Q = X_rows @ W_Q.T
    K = X_rows @ W_K.T
    V = X_rows @ W_V.T
    scores = Q @ K.T
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    Z = A @ V
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
"""),
    Wrong(
        id="e-03-row-scores-KQt",
        exercise="row_convention_attention",
        cause="scores = K @ Q.T puts the keys on the rows (entry [i, j] = k_i · q_j), the "
              "column convention's layout; with tokens as rows, row i belongs to query i: "
              "Q @ K.T.",
        kind="operands swapped (result transposed)",
        wrong_on="the published worksheet with X_rows = X.T: scores[0, 1] is 1 instead of 6.",
        source=ROW_BASE + ROW_HEAD + """    Q = X_rows @ W_Q.T
    K = X_rows @ W_K.T
    V = X_rows @ W_V.T
    scores = K @ Q.T
    scaled = floor_half(scores)
    A = softmax3_columns(scaled.T).T
    Z = A @ V
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
"""),
    Wrong(
        id="e-03-row-Z-At",
        exercise="row_convention_attention",
        cause="Z = A.T @ V mixes the values with the columns of A; in the row convention row i "
              "of Z is row i of A times V: Z = A @ V.",
        kind="transpose added",
        wrong_on="the published worksheet with X_rows = X.T: Z[0] mixes V with column 1 of A "
                 "instead of row 1.",
        source=ROW_BASE + ROW_HEAD + """    Q = X_rows @ W_Q.T
    K = X_rows @ W_K.T
    V = X_rows @ W_V.T
    scores = Q @ K.T
    scaled = floor_half(scores)
    A = softmax3_columns(scaled.T).T
    Z = A.T @ V
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
"""),
    Wrong(
        id="e-03-row-reuses-columns-untransposed",
        exercise="row_convention_attention",
        cause="You call attention_by_hand on X_rows.T and return its dict as it is: every step "
              "is in the column layout. The row convention's steps are the transposes, so "
              "transpose each one ({k: v.T for k, v in steps.items()}).",
        kind="transpose left out",
        wrong_on="the published worksheet with X_rows = X.T: Q comes back 3×4 instead of 4×3.",
        source=ROW_BASE + ABH_OK + ROW_HEAD + """    return attention_by_hand(X_rows.T, W_Q, W_K, W_V)
"""),
    Wrong(
        id="e-03-row-projection-not-transposed",
        exercise="row_convention_attention",
        cause="Q, K and V are computed as W @ X_rows.T, the column-convention projections, and "
              "never turned back, so they are 3×T and the scores Q @ K.T come out 3×3 "
              "(features against features); with tokens as rows, Q = X_rows @ W_Q.T.",
        kind="convention mixed (projection in the other layout)",
        wrong_on="the published worksheet with X_rows = X.T: Q is 3×4 and the scores 3×3 "
                 "instead of 4×3 and 4×4.",
        source=ROW_BASE + ROW_HEAD + """    Q = W_Q @ X_rows.T
    K = W_K @ X_rows.T
    V = W_V @ X_rows.T
    scores = Q @ K.T
    scaled = floor_half(scores)
    A = softmax3_columns(scaled.T).T
    Z = A @ V
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
"""),
]

# ============================================================================ lesson 04

L04 = """import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int
"""

CAUSAL_HEAD = """
def causal_mask(T):
    \"\"\"[T, T] boolean mask: True where key j <= query i.\"\"\"
    T = positive_int(T, "T")
"""
CAUSAL_OK = CAUSAL_HEAD + """    return np.tril(np.ones((T, T), dtype=bool))
"""

PAD_HEAD = """
def padding_mask(lengths, T):
    \"\"\"[B, T] boolean mask: True at the real tokens of each sentence, False at its padding.\"\"\"
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
"""
PAD_OK = PAD_HEAD + """    return np.arange(T)[None, :] < lengths[:, None]
"""

AMASK_HEAD = """
def attention_mask(lengths, T, causal=True):
    \"\"\"[B, T, T] boolean mask: key padding, combined with the causal mask if causal=True.\"\"\"
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    if not isinstance(causal, (bool, np.bool_)):
        raise ValueError(f"causal must be True or False, got {causal!r}")
"""

WRONG += [
    Wrong(
        id="e-04-causal-triu",
        exercise="causal_mask",
        cause="np.triu keeps the upper triangle, where key j >= query i: each query sees the "
              "future and not the past; the causal mask is the lower triangle, np.tril.",
        kind="wrong triangle (triu for tril)",
        wrong_on="T = 2: returns [[True, True], [False, True]] instead of [[True, False], [True, True]].",
        source=L04 + CAUSAL_HEAD + """    return np.triu(np.ones((T, T), dtype=bool))
"""),
    Wrong(
        id="e-04-causal-no-diagonal",
        exercise="causal_mask",
        cause="k=-1 drops the diagonal, so no token may attend to itself (and query 0 sees "
              "nothing); the mask includes j = i: np.tril with k=0.",
        kind="diagonal left out (k off by one)",
        wrong_on="T = 1: returns [[False]] instead of [[True]].",
        source=L04 + CAUSAL_HEAD + """    return np.tril(np.ones((T, T), dtype=bool), k=-1)
"""),
    Wrong(
        id="e-04-causal-float",
        exercise="causal_mask",
        cause="np.tril(np.ones((T, T))) is a float matrix of 1.0 and 0.0, not a boolean mask; "
              "give np.ones dtype=bool (or compare the positions).",
        kind="numbers for a mask (dtype)",
        wrong_on="T = 2: returns float64 [[1., 0.], [1., 1.]] instead of a bool array.",
        source=L04 + CAUSAL_HEAD + """    return np.tril(np.ones((T, T)))
"""),
    Wrong(
        id="e-04-causal-inverted",
        exercise="causal_mask",
        cause="The function returns the future keys, the positions to hide (True = masked, "
              "torch's MultiheadAttention polarity); in this course True means may attend, so "
              "return the lower triangle with its diagonal, the negation of this.",
        kind="mask polarity inverted",
        wrong_on="T = 2: returns [[False, True], [False, False]] instead of [[True, False], [True, True]].",
        source=L04 + CAUSAL_HEAD + """    future = np.triu(np.ones((T, T), dtype=bool), k=1)   # the keys a query must not see
    return future
"""),
    Wrong(
        id="e-04-causal-one-ahead",
        exercise="causal_mask",
        cause="k=1 also keeps the first diagonal above the main one, so every query may see "
              "the next token; use np.tril with the default k=0.",
        kind="k off by one (one future key let in)",
        wrong_on="T = 2: returns all True instead of [[True, False], [True, True]].",
        source=L04 + CAUSAL_HEAD + """    i = np.arange(T)[:, None]
    j = np.arange(T)[None, :]
    return j <= i + 1
"""),
]

WRONG += [
    Wrong(
        id="e-04-pad-le",
        exercise="padding_mask",
        cause="positions <= lengths lets one position too many through: a sentence of length L "
              "has real tokens 0..L-1, so compare with <.",
        kind="<= for <",
        wrong_on="lengths = [1], T = 2: returns [[True, True]] instead of [[True, False]].",
        source=L04 + PAD_HEAD + """    positions = np.arange(T)
    return positions[None, :] <= lengths[:, None]
"""),
    Wrong(
        id="e-04-pad-transposed",
        exercise="padding_mask",
        cause="The positions are made a column and the lengths a row, so the grid comes out "
              "[T, B], one row per position; positions go along the row: "
              "np.arange(T)[None, :] < lengths[:, None].",
        kind="broadcast axes exchanged (result transposed)",
        wrong_on="lengths = [1, 2, 0], T = 2: returns shape [2, 3] instead of [3, 2].",
        source=L04 + PAD_HEAD + """    return np.arange(T)[:, None] < lengths[None, :]
"""),
    Wrong(
        id="e-04-pad-no-newaxis",
        exercise="padding_mask",
        cause="np.arange(T) < lengths compares two 1-D arrays entry by entry (position b with "
              "sentence b), with no grid: give the lengths their own axis, lengths[:, None].",
        kind="[:, None] left out (broadcasting)",
        wrong_on="lengths = [1, 3, 2], T = 3: returns the 1-D [True, True, False] instead of a "
                 "3×3 mask (with B != T it raises).",
        source=L04 + PAD_HEAD + """    return np.arange(T) < lengths
"""),
    Wrong(
        id="e-04-pad-inverted",
        exercise="padding_mask",
        cause="positions >= lengths is True at the padding, the opposite polarity; the mask is "
              "True at the real tokens: positions < lengths.",
        kind="mask polarity inverted",
        wrong_on="lengths = [1], T = 2: returns [[False, True]] instead of [[True, False]].",
        source=L04 + PAD_HEAD + """    return np.arange(T)[None, :] >= lengths[:, None]
"""),
    Wrong(
        id="e-04-pad-positions-from-1",
        exercise="padding_mask",
        cause="The positions are counted from 1 (np.arange(1, T + 1)), so with < each sentence "
              "loses its last real token; positions start at 0: np.arange(T).",
        kind="range started one step off",
        wrong_on="lengths = [2], T = 2: returns [[True, False]] instead of [[True, True]].",
        source=L04 + PAD_HEAD + """    positions = np.arange(1, T + 1)
    return positions[None, :] < lengths[:, None]
"""),
]

AMASK_BASE = L04 + CAUSAL_OK + PAD_OK + AMASK_HEAD

WRONG += [
    Wrong(
        id="e-04-amask-pads-queries",
        exercise="attention_mask",
        cause="padding[:, :, None] puts the padding on the query axis, so it blanks the <pad> "
              "query's row and leaves the <pad> key visible; padding hides keys: "
              "padding[:, None, :].",
        kind="mask on the wrong axis (queries for keys)",
        wrong_on="lengths = [1], T = 2, causal=False: returns [[[True, True], [False, False]]] "
                 "instead of [[[True, False], [True, False]]].",
        source=AMASK_BASE + """    padding = padding_mask(lengths, T)
    mask = np.broadcast_to(padding[:, :, None], (len(lengths), T, T))
    if causal:
        mask = mask & causal_mask(T)[None, :, :]
    return mask
"""),
    Wrong(
        id="e-04-amask-no-broadcast-noncausal",
        exercise="attention_mask",
        cause="With causal=False the function returns padding[:, None, :] as it is, of shape "
              "[B, 1, T]; the result must be [B, T, T] either way, so broadcast it "
              "(np.broadcast_to(..., (B, T, T)) or & with an all-True [T, T]).",
        kind="shape not broadcast (axis of length 1 left)",
        wrong_on="lengths = [2, 1], T = 2, causal=False: returns shape [2, 1, 2] instead of [2, 2, 2].",
        source=AMASK_BASE + """    keys = padding_mask(lengths, T)[:, None, :]
    if causal:
        return keys & causal_mask(T)[None, :, :]
    return keys
"""),
    Wrong(
        id="e-04-amask-or",
        exercise="attention_mask",
        cause="The masks are combined with |, so a pair is allowed when either mask allows "
              "it; both must allow it: &.",
        kind="| for &",
        wrong_on="lengths = [2], T = 2, causal=True: query 0 may see key 1 (the future) because "
                 "the padding mask allows it.",
        source=AMASK_BASE + """    keys = padding_mask(lengths, T)[:, None, :]
    if causal:
        return keys | causal_mask(T)[None, :, :]
    return np.repeat(keys, T, axis=1)
"""),
    Wrong(
        id="e-04-amask-flag-ignored",
        exercise="attention_mask",
        cause="The causal mask is always combined in: the causal parameter is never read. "
              "With causal=False only the padding is masked.",
        kind="parameter ignored",
        wrong_on="lengths = [2], T = 2, causal=False: query 0 is kept from key 1 although "
                 "nothing is padded.",
        source=AMASK_BASE + """    keys = padding_mask(lengths, T)[:, None, :]
    return keys & causal_mask(T)[None, :, :]
"""),
    Wrong(
        id="e-04-amask-helper-no-diagonal",
        exercise="attention_mask",
        cause="attention_mask itself is right, but your causal_mask leaves out the diagonal "
              "(np.tril with k=-1), so no token sees itself and query 0 sees nothing; fix "
              "causal_mask (k=0).",
        kind="graded helper wrong (diagonal left out)",
        wrong_on="lengths = [2], T = 2, causal=True: the diagonal of the mask is False instead of True.",
        source=L04 + CAUSAL_HEAD + """    return np.tril(np.ones((T, T), dtype=bool), k=-1)
""" + PAD_OK + AMASK_HEAD + """    keys = padding_mask(lengths, T)[:, None, :]
    if causal:
        return keys & causal_mask(T)[None, :, :]
    return np.repeat(keys, T, axis=1)
"""),
]

MSM_HEAD = """
def masked_softmax(scores, mask):
    \"\"\"Softmax over the last axis with masked scores set to -inf first.

    mask: boolean, True = may attend, broadcasts to scores. A row with no allowed key
    returns zeros, never NaN.
    \"\"\"
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
"""
MSM_OK = MSM_HEAD + """    masked = np.where(mask, scores, -np.inf)
    top = masked.max(axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)      # a row with no allowed key: shift by 0
    e = np.exp(masked - top)                         # exp(-inf) = 0 at the masked keys
    total = e.sum(axis=-1, keepdims=True)
    return np.where(total > 0, e / np.where(total > 0, total, 1.0), 0.0)
"""

WRONG += [
    Wrong(
        id="e-04-msm-mask-after",
        exercise="masked_softmax",
        cause="The softmax runs over every score and the mask multiplies the weights "
              "afterwards, so the allowed weights no longer sum to 1 and still depend on the "
              "masked scores; set the masked scores to -inf before the softmax.",
        kind="mask applied after the softmax",
        wrong_on="scores = [0, 0], mask = [True, False]: returns [0.5, 0] instead of [1, 0].",
        source=L04 + MSM_HEAD + """    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights * mask
"""),
    Wrong(
        id="e-04-msm-where-inverted",
        exercise="masked_softmax",
        cause="np.where(mask, -np.inf, scores) puts -inf where the mask is True, the allowed "
              "keys; it is np.where(mask, scores, -np.inf): keep the score where allowed.",
        kind="mask polarity inverted (np.where branches swapped)",
        wrong_on="scores = [1, 2], mask = [True, False]: returns [0, 1] instead of [1, 0].",
        source=L04 + MSM_HEAD + """    masked = np.where(mask, -np.inf, scores)
    top = masked.max(axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(masked - top)
    total = e.sum(axis=-1, keepdims=True)
    return np.where(total > 0, e / np.where(total > 0, total, 1.0), 0.0)
"""),
    Wrong(
        id="e-04-msm-fill-minus-1e9",
        exercise="masked_softmax",
        cause="The masked scores are set to -1e9 instead of -inf: in a row with no allowed key "
              "every score is then -1e9 and the softmax spreads the weight evenly over "
              "forbidden keys; use -inf and return zeros for such a row.",
        kind="-1e9 for -inf (fully masked row)",
        wrong_on="scores = [1, 2], mask = [False, False]: returns [0.5, 0.5] instead of [0, 0].",
        source=L04 + MSM_HEAD + """    masked = np.where(mask, scores, -1e9)
    e = np.exp(masked - masked.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
"""),
    Wrong(
        id="e-04-msm-empty-row-nan",
        exercise="masked_softmax",
        cause="A row with no allowed key is not handled: its max is -inf, -inf - (-inf) is NaN "
              "and the row comes out NaN; shift such a row by 0 (or any finite number) and "
              "return zeros where the sum is 0.",
        kind="fully masked row not handled (NaN)",
        wrong_on="scores = [1, 2], mask = [False, False]: returns [nan, nan] instead of [0, 0].",
        source=L04 + MSM_HEAD + """    masked = np.where(mask, scores, -np.inf)
    e = np.exp(masked - masked.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
"""),
    Wrong(
        id="e-04-msm-shift-by-unmasked-max",
        exercise="masked_softmax",
        cause="The shift is the largest of the original scores, masked keys included: when a "
              "masked key has a huge score, the allowed ones underflow to 0 and the row "
              "comes out zeros; take the max of the masked scores (after the -inf).",
        kind="shift taken before the mask",
        wrong_on="scores = [0, 1, 900], mask = [True, True, False]: returns [0, 0, 0] instead of "
                 "[0.27, 0.73, 0].",
        source=L04 + MSM_HEAD + """    top = scores.max(axis=-1, keepdims=True)
    e = np.where(mask, np.exp(scores - top), 0.0)
    total = e.sum(axis=-1, keepdims=True)
    return np.where(total > 0, e / np.where(total > 0, total, 1.0), 0.0)
"""),
    Wrong(
        id="e-04-msm-sum-no-keepdims",
        exercise="masked_softmax",
        cause="e.sum(axis=-1) without keepdims=True drops the key axis, so the row sums "
              "broadcast along the wrong axis (entry [i, j] is divided by row j's sum); keep "
              "the axis.",
        kind="keepdims forgotten",
        wrong_on="scores = [[0, 0], [0, 0]], mask = [[True, False], [True, True]]: row 0 comes out "
                 "[0.5, 0] instead of [1, 0].",
        source=L04 + MSM_HEAD + """    masked = np.where(mask, scores, -np.inf)
    top = masked.max(axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(masked - top)
    total = e.sum(axis=-1)
    return np.where(total > 0, e / np.where(total > 0, total, 1.0), 0.0)
"""),
    Wrong(
        id="e-04-msm-inplace-index",
        exercise="masked_softmax",
        cause="scores[~mask] = -np.inf writes into the caller's array (as_array returns it "
              "unchanged when it is already float) and boolean indexing needs a mask of the "
              "same shape, so a [T, T] mask for a [B, T, T] batch raises; use "
              "np.where(mask, scores, -np.inf), which broadcasts and copies.",
        kind="in-place change of an input; no broadcasting",
        wrong_on="scores of shape [3, 2, 2] (zeros), mask = causal [2, 2]: raises an IndexError "
                 "instead of returning [[1, 0], [0.5, 0.5]] for each batch item (and with a "
                 "mask of the scores' own shape it overwrites the caller's scores).",
        source=L04 + MSM_HEAD + """    scores[~mask] = -np.inf
    top = scores.max(axis=-1, keepdims=True)
    top[~np.isfinite(top)] = 0.0
    e = np.exp(scores - top)
    total = e.sum(axis=-1, keepdims=True)
    total[total == 0] = 1.0
    return e / total
"""),
]

MATT_HEAD = """
def masked_attention(Q, K, V, mask=None):
    \"\"\"Scaled dot-product attention with a boolean mask (True = may attend).

    Q: [..., T_q, d_k], K: [..., T_k, d_k], V: [..., T_k, d_v]; mask broadcasts to
    [..., T_q, T_k]. Returns (output [..., T_q, d_v], weights [..., T_q, T_k]).
    \"\"\"
    Q, K, V = as_array(Q, "Q", min_ndim=2), as_array(K, "K", min_ndim=2), as_array(V, "V", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share d_k, got shapes {Q.shape} and {K.shape}")
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V must have the same number of keys, got {K.shape} and {V.shape}")
    if mask is not None:
        mask = bool_mask(mask)  # must be boolean; masked_softmax checks that it fits the scores
"""
MATT_BASE = L04 + MSM_OK + MATT_HEAD

WRONG += [
    Wrong(
        id="e-04-matt-none-as-float-ones",
        exercise="masked_attention",
        cause="For mask=None you pass np.ones_like(scores), a float array, and masked_softmax "
              "rejects a mask that is not boolean; make it np.ones(scores.shape, dtype=bool) "
              "(or skip the mask).",
        kind="numbers for a mask (dtype)",
        wrong_on="Q = K = V = identity 2×2, mask=None: raises ValueError instead of returning "
                 "plain attention.",
        source=MATT_BASE + """    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is None:
        mask = np.ones_like(scores)
    weights = masked_softmax(scores, mask)
    return weights @ V, weights
"""),
    Wrong(
        id="e-04-matt-no-scale",
        exercise="masked_attention",
        cause="The scores are Q Kᵀ without the division by √d_k; divide by "
              "np.sqrt(Q.shape[-1]) before the masked softmax.",
        kind="scale left out",
        wrong_on="Q = [[1, 1, 1, 1]], K = [[1, 1, 1, 1], [0, 0, 0, 0]], V = [[1], [0]], no mask: "
                 "the weights are softmax([4, 0]) instead of softmax([2, 0]).",
        source=MATT_BASE + """    scores = Q @ np.swapaxes(K, -1, -2)
    if mask is None:
        mask = np.ones(scores.shape, dtype=bool)
    weights = masked_softmax(scores, mask)
    return weights @ V, weights
"""),
    Wrong(
        id="e-04-matt-none-masks-everything",
        exercise="masked_attention",
        cause="For mask=None you build np.zeros(..., dtype=bool), which masks every key, so "
              "every weight and output is 0; no mask means every query may attend to every "
              "key: np.ones(..., dtype=bool).",
        kind="mask polarity inverted (default mask)",
        wrong_on="Q = K = V = identity 2×2, mask=None: returns zeros instead of plain attention.",
        source=MATT_BASE + """    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is None:
        mask = np.zeros(scores.shape, dtype=bool)
    weights = masked_softmax(scores, mask)
    output = weights @ V
    return output, weights
"""),
    Wrong(
        id="e-04-matt-mask-transposed",
        exercise="masked_attention",
        cause="The mask is transposed (its last two axes swapped) before use, as if keys were "
              "its rows; in this course mask[i, j] is query i against key j, the same layout "
              "as the scores, so pass it as it is.",
        kind="transpose added (mask)",
        wrong_on="Q = K = V = identity 2×2, mask = causal [[True, False], [True, True]]: query 0 "
                 "sees key 1 and query 1 sees only key 1.",
        source=MATT_BASE + """    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is None:
        mask = np.ones(scores.shape, dtype=bool)
    weights = masked_softmax(scores, np.swapaxes(mask, -1, -2))
    return weights @ V, weights
"""),
    Wrong(
        id="e-04-matt-helper-mask-after",
        exercise="masked_attention",
        cause="masked_attention itself is right, but your masked_softmax multiplies the "
              "softmax by the mask afterwards, so the weights of a masked row do not sum to 1; "
              "fix masked_softmax (-inf before the softmax).",
        kind="graded helper wrong (mask after the softmax)",
        wrong_on="Q = K = V = identity 2×2, mask = causal: row 0's weights are [0.67, 0] "
                 "instead of [1, 0].",
        source=L04 + MSM_HEAD + """    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True) * mask
""" + MATT_HEAD + """    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is None:
        mask = np.ones(scores.shape, dtype=bool)
    weights = masked_softmax(scores, mask)
    return weights @ V, weights
"""),
]

ISC_HEAD = """
def is_causal(attend, T, d, seed=0):
    \"\"\"True if changing tokens after position t never changes outputs 0..t of attend.\"\"\"
    if not callable(attend):
        raise ValueError(f"attend must be a function of X [T, d], got {type(attend).__name__}")
    T, d = positive_int(T, "T"), positive_int(d, "d")
    rng = np.random.default_rng(seed)
"""

WRONG += [
    Wrong(
        id="e-04-isc-replaces-token-t",
        exercise="is_causal",
        cause="X_new[t:] replaces token t too, and output t may depend on token t, so every "
              "causal layer is reported non-causal; replace only the tokens after t, X_new[t + 1:].",
        kind="slice off by one (start)",
        wrong_on="attend = causal masked self-attention (Q = K = V = X with causal_mask), T = 6, "
                 "d = 4, seed = 0: returns False instead of True.",
        source=L04 + ISC_HEAD + """    X = rng.standard_normal((T, d))
    before = attend(X)
    for t in range(T):
        X_new = X.copy()
        X_new[t:] = rng.standard_normal((T - t, d))
        after = attend(X_new)
        if not np.allclose(after[:t + 1], before[:t + 1]):
            return False
    return True
"""),
    Wrong(
        id="e-04-isc-no-copy",
        exercise="is_causal",
        cause="X_new = X is not a copy: each step's replacement is written into X itself, so at "
              "step t token t has already been replaced by step t-1 and output t moves even for "
              "a causal layer; start every step from X.copy().",
        kind=".copy() left out (changes accumulate)",
        wrong_on="attend = causal masked self-attention, T = 6, d = 4, seed = 0: returns False "
                 "instead of True.",
        source=L04 + ISC_HEAD + """    X = rng.standard_normal((T, d))
    before = attend(X)
    for t in range(T):
        X_new = X
        X_new[t + 1:] = rng.standard_normal((T - t - 1, d))
        after = attend(X_new)
        if not np.allclose(after[:t + 1], before[:t + 1]):
            return False
    return True
"""),
    Wrong(
        id="e-04-isc-compares-before-t",
        exercise="is_causal",
        cause="The comparison uses after[:t] and before[:t], outputs 0..t-1, so output t itself "
              "is never compared; a layer whose output t reads token t+1 passes. Compare "
              "[:t + 1].",
        kind="slice off by one (stop)",
        wrong_on="attend = lambda X: np.roll(X, -1, axis=0) (output t is token t+1), T = 6, "
                 "d = 4, seed = 0: returns True instead of False.",
        source=L04 + ISC_HEAD + """    X = rng.standard_normal((T, d))
    before = attend(X)
    for t in range(T):
        changed = X.copy()
        changed[t + 1:] = rng.standard_normal((T - t - 1, d))
        after = attend(changed)
        if not np.allclose(after[:t], before[:t]):
            return False
    return True
"""),
    Wrong(
        id="e-04-isc-return-in-loop",
        exercise="is_causal",
        cause="return True sits inside the loop, right after the first comparison, so only "
              "t = 0 is ever tested; return True after the loop has tried every t.",
        kind="return inside the loop",
        wrong_on="attend = a layer whose output 1 is token 2 (the rest copy their own token), "
                 "T = 6, d = 4, seed = 0: returns True instead of False.",
        source=L04 + ISC_HEAD + """    X = rng.standard_normal((T, d))
    before = attend(X)
    for t in range(T):
        X_new = X.copy()
        X_new[t + 1:] = rng.standard_normal((T - t - 1, d))
        after = attend(X_new)
        if not np.allclose(after[:t + 1], before[:t + 1]):
            return False
        return True
"""),
    Wrong(
        id="e-04-isc-starts-at-1",
        exercise="is_causal",
        cause="The loop starts at t = 1, so changing tokens 1.. and looking at output 0 is never "
              "tried; a layer that leaks only into the first output passes. Start at t = 0.",
        kind="range started one step late",
        wrong_on="attend = a layer whose output 0 is token 1 (the rest copy their own token), "
                 "T = 6, d = 4, seed = 0: returns True instead of False.",
        source=L04 + ISC_HEAD + """    X = rng.standard_normal((T, d))
    before = attend(X)
    for t in range(1, T):
        X_new = X.copy()
        X_new[t + 1:] = rng.standard_normal((T - t - 1, d))
        if not np.allclose(attend(X_new)[:t + 1], before[:t + 1]):
            return False
    return True
"""),
    Wrong(
        id="e-04-isc-compares-everything",
        exercise="is_causal",
        cause="np.allclose(after, before) compares all the outputs, including those after t, "
              "which may change; only outputs 0..t must stay: after[:t + 1] against before[:t + 1].",
        kind="slice left out",
        wrong_on="attend = causal masked self-attention, T = 6, d = 4, seed = 0: returns False "
                 "instead of True.",
        source=L04 + ISC_HEAD + """    X = rng.standard_normal((T, d))
    before = attend(X)
    for t in range(T):
        X_new = X.copy()
        X_new[t + 1:] = rng.standard_normal((T - t - 1, d))
        after = attend(X_new)
        if not np.allclose(after, before):
            return False
    return True
"""),
    Wrong(
        id="e-04-isc-runs-old-X",
        exercise="is_causal",
        cause="after = attend(X) runs the layer on the original tokens, not on the changed copy, "
              "so nothing ever moves and every layer is called causal; call attend(X_new).",
        kind="wrong variable passed",
        wrong_on="attend = self-attention with no mask (Q = K = V = X), T = 6, d = 4, seed = 0: "
                 "returns True instead of False.",
        source=L04 + ISC_HEAD + """    X = rng.standard_normal((T, d))
    before = attend(X)
    for t in range(T):
        X_new = X.copy()
        X_new[t + 1:] = rng.standard_normal((T - t - 1, d))
        after = attend(X)
        if not np.allclose(after[:t + 1], before[:t + 1]):
            return False
    return True
"""),
]

CMC_HEAD = """
def causal_mask_columns(T):
    \"\"\"[T, T] causal mask with tokens as columns: entry [i, j] (key i, query j) is True where i <= j.\"\"\"
    T = positive_int(T, "T")
"""

WRONG += [
    Wrong(
        id="e-04-cmc-tril",
        exercise="causal_mask_columns",
        cause="np.tril is the row convention's mask; with keys as rows and queries as columns, "
              "key i is allowed for query j when i <= j, the upper triangle: np.triu.",
        kind="wrong triangle (tril for triu)",
        wrong_on="T = 2: returns [[True, False], [True, True]] instead of [[True, True], [False, True]].",
        source=L04 + CMC_HEAD + """    return np.tril(np.ones((T, T), dtype=bool))
"""),
    Wrong(
        id="e-04-cmc-negated",
        exercise="causal_mask_columns",
        cause="~causal_mask(T) negates the row mask instead of transposing it: that is the "
              "strict upper triangle, so the diagonal (a token seeing itself) is lost; the "
              "column mask is causal_mask(T).T.",
        kind="negation for transpose",
        wrong_on="T = 1: returns [[False]] instead of [[True]].",
        source=L04 + CAUSAL_OK + CMC_HEAD + """    return ~causal_mask(T)
"""),
    Wrong(
        id="e-04-cmc-k-minus-1",
        exercise="causal_mask_columns",
        cause="k=-1 keeps one diagonal below the main one as well, so query j may also see key "
              "j+1, the next token; use np.triu with k=0.",
        kind="k off by one (one future key let in)",
        wrong_on="T = 2: returns all True instead of [[True, True], [False, True]].",
        source=L04 + CMC_HEAD + """    return np.triu(np.ones((T, T), dtype=bool), k=-1)
"""),
    Wrong(
        id="e-04-cmc-fliplr",
        exercise="causal_mask_columns",
        cause="np.fliplr mirrors the row mask left to right instead of transposing it, so the "
              "triangle ends up on the anti-diagonal side; transpose: causal_mask(T).T.",
        kind="flip for transpose",
        wrong_on="T = 2: returns [[False, True], [True, True]] instead of [[True, True], [False, True]].",
        source=L04 + CAUSAL_OK + CMC_HEAD + """    return np.fliplr(causal_mask(T))
"""),
    Wrong(
        id="e-04-cmc-float",
        exercise="causal_mask_columns",
        cause="np.triu(np.ones((T, T))) holds floats 1.0 and 0.0, not booleans; create the ones "
              "with dtype=bool.",
        kind="numbers for a mask (dtype)",
        wrong_on="T = 2: returns float64 [[1., 1.], [0., 1.]] instead of a bool array.",
        source=L04 + CMC_HEAD + """    upper = np.triu(np.ones((T, T)))
    return upper
"""),
]

MHA_HEAD = """
def to_mha_key_padding_mask(lengths, T):
    \"\"\"torch.bool tensor [B, T] for nn.MultiheadAttention's key_padding_mask: True = ignore.\"\"\"
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
"""

WRONG += [
    Wrong(
        id="e-04-mha-not-inverted",
        exercise="to_mha_key_padding_mask",
        cause="The course's padding mask is handed over as it is, True at the real tokens, but "
              "key_padding_mask means True = ignore; invert it (~) so that True marks the padding.",
        kind="mask polarity not inverted",
        wrong_on="lengths = [1], T = 2: returns tensor([[True, False]]) instead of tensor([[False, True]]).",
        source=L04 + PAD_OK + MHA_HEAD + """    return torch.from_numpy(padding_mask(lengths, T))
"""),
    Wrong(
        id="e-04-mha-numpy",
        exercise="to_mha_key_padding_mask",
        cause="The inverted mask is right but stays a NumPy array; nn.MultiheadAttention wants a "
              "torch tensor: wrap it with torch.from_numpy(...).",
        kind="wrong type (NumPy array for a tensor)",
        wrong_on="lengths = [1], T = 2: returns np.array([[False, True]]) instead of a torch.bool tensor.",
        source=L04 + PAD_OK + MHA_HEAD + """    return ~padding_mask(lengths, T)
"""),
    Wrong(
        id="e-04-mha-float",
        exercise="to_mha_key_padding_mask",
        cause="torch.tensor(..., dtype=torch.float32) makes a float mask, which "
              "nn.MultiheadAttention adds to the scores (1.0 or 0.0) instead of ignoring keys; "
              "keep dtype=torch.bool.",
        kind="numbers for a mask (dtype)",
        wrong_on="lengths = [1], T = 2: returns tensor([[0., 1.]]) (float) instead of tensor([[False, True]]).",
        source=L04 + PAD_OK + MHA_HEAD + """    ignore = ~padding_mask(lengths, T)
    return torch.tensor(ignore, dtype=torch.float32)
"""),
    Wrong(
        id="e-04-mha-gt",
        exercise="to_mha_key_padding_mask",
        cause="positions > lengths misses the first padding position (position L of a sentence "
              "of length L); padding starts at position L: positions >= lengths.",
        kind="> for >=",
        wrong_on="lengths = [1], T = 2: returns tensor([[False, False]]) instead of tensor([[False, True]]).",
        source=L04 + MHA_HEAD + """    positions = torch.arange(T)
    return positions[None, :] > torch.as_tensor(lengths)[:, None]
"""),
    Wrong(
        id="e-04-mha-transposed",
        exercise="to_mha_key_padding_mask",
        cause="The positions are a column and the lengths a row, so the mask is [T, B]; "
              "key_padding_mask is [B, T], one row per sentence.",
        kind="broadcast axes exchanged (result transposed)",
        wrong_on="lengths = [1, 2, 2], T = 2: returns shape [2, 3] instead of [3, 2].",
        source=L04 + MHA_HEAD + """    lengths_t = torch.as_tensor(lengths)
    return torch.arange(T)[:, None] >= lengths_t[None, :]
"""),
]

PREFIX_HEAD = """
def prefix_average(X):
    \"\"\"Row i of the result is the mean of rows 0..i of X, computed as W @ X.\"\"\"
    X = as_array(X, "X", min_ndim=2)
"""

WRONG += [
    Wrong(
        id="e-04-prefix-column-normalised",
        exercise="prefix_average",
        cause="W is divided by its column sums (axis=0), so its rows do not sum to 1; each row i "
              "must average i+1 tokens: divide by the row sums, axis=-1 with keepdims=True.",
        kind="normalised along the wrong axis",
        wrong_on="X = [[1], [1]]: returns [[0.5], [1.5]] instead of [[1], [1]].",
        source=L04 + PREFIX_HEAD + """    T = X.shape[-2]
    W = np.tril(np.ones((T, T)))
    W = W / W.sum(axis=0, keepdims=True)
    return W @ X
"""),
    Wrong(
        id="e-04-prefix-no-newaxis",
        exercise="prefix_average",
        cause="W / np.arange(1, T + 1) divides column j by j+1 instead of row i by i+1: the "
              "counts need their own axis, np.arange(1, T + 1)[:, None].",
        kind="[:, None] left out (broadcasting)",
        wrong_on="X = [[2], [4]]: row 1 comes out 2 + 2 = 4 instead of 3.",
        source=L04 + PREFIX_HEAD + """    T = X.shape[-2]
    W = np.tril(np.ones((T, T))) / np.arange(1, T + 1)
    return W @ X
"""),
    Wrong(
        id="e-04-prefix-T-from-features",
        exercise="prefix_average",
        cause="T is read from X.shape[-1], the number of features d; the tokens are the rows, "
              "T = X.shape[-2].",
        kind="wrong axis for a size",
        wrong_on="X of shape [3, 2]: W is 2×2 and W @ X raises instead of returning [3, 2].",
        source=L04 + PREFIX_HEAD + """    T = X.shape[-1]
    W = np.tril(np.ones((T, T)))
    W /= W.sum(axis=-1, keepdims=True)
    return W @ X
"""),
    Wrong(
        id="e-04-prefix-triu",
        exercise="prefix_average",
        cause="np.triu keeps the upper triangle, so row i averages rows i..T-1 (a suffix "
              "average that reads the future); the prefix needs the lower triangle, np.tril.",
        kind="wrong triangle (triu for tril)",
        wrong_on="X = [[2], [4]]: returns [[3], [4]] instead of [[2], [3]].",
        source=L04 + PREFIX_HEAD + """    T = X.shape[-2]
    W = np.triu(np.ones((T, T)))
    W = W / W.sum(axis=-1, keepdims=True)
    return W @ X
"""),
    Wrong(
        id="e-04-prefix-X-times-W",
        exercise="prefix_average",
        cause="X @ W multiplies on the wrong side: it mixes the features of each token (and "
              "raises unless d = T); the rows of W mix the rows of X: W @ X.",
        kind="operands swapped",
        wrong_on="X = [[1, 2], [3, 4]]: returns [[2, 1], [5, 2]] (X @ W) instead of [[1, 2], [2, 3]].",
        source=L04 + PREFIX_HEAD + """    T = X.shape[-2]
    W = np.tril(np.ones((T, T)))
    W = W / W.sum(axis=-1, keepdims=True)
    return X @ W
"""),
    Wrong(
        id="e-04-prefix-sum",
        exercise="prefix_average",
        cause="W is the lower triangle of ones without the division, so W @ X is the prefix sum; "
              "divide row i of W by i+1 (its row sum) to average.",
        kind="normalisation left out",
        wrong_on="X = [[2], [4]]: returns [[2], [6]] instead of [[2], [3]].",
        source=L04 + PREFIX_HEAD + """    T = X.shape[-2]
    W = np.tril(np.ones((T, T)))
    return W @ X
"""),
    Wrong(
        id="e-04-prefix-divide-by-T",
        exercise="prefix_average",
        cause="Every row of W is divided by T, the full length, but row i averages only i+1 "
              "tokens; divide by the row sums (np.arange(1, T + 1)[:, None]).",
        kind="wrong normaliser (constant for a count)",
        wrong_on="X = [[2], [4]]: returns [[1], [3]] instead of [[2], [3]].",
        source=L04 + PREFIX_HEAD + """    T = X.shape[-2]
    W = np.tril(np.ones((T, T))) / T
    return W @ X
"""),
]
