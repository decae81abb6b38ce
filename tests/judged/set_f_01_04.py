"""Set f, lessons 01-04: wrong answers written from the student notebooks and README only.

Each entry is one learner answer with one realistic mistake (two where said), its true
cause, and an input on which it goes wrong. The sources run on their own with
PYTHONPATH=. from the repository root (for grader.learner.validation).
"""
from typing import NamedTuple


class Wrong(NamedTuple):
    id: str
    exercise: str
    cause: str
    kind: str
    wrong_on: str
    source: str


H01 = '''import numpy as np
from grader.learner.validation import matmul_operands, as_array

'''

WRONG = []

# ------------------------------------------------------------------ lesson 01: matmul_dot
WRONG += [
    Wrong(
        id="f-01-dot-sum-range-rows-of-A",
        exercise="matmul_dot",
        cause="The inner sum runs `for p in range(n)` over the number of rows of A; the summed "
              "index p runs over the shared size k = A.shape[1] (the columns of A, the rows of B).",
        kind="loop bound from the wrong axis",
        wrong_on="A of shape 2×3 and B of shape 3×2: only p = 0, 1 are added, so the third "
                 "term A[i, 2]·B[2, j] of every entry is missing.",
        source=H01 + '''def matmul_dot(A, B):
    """C[i, j] = row i of A · column j of B, with a Python loop (over i and j: one entry at a time)."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    m = B.shape[1]
    C = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            C[i, j] = sum(A[i, p] * B[p, j] for p in range(n))
    return C
''',
    ),
    Wrong(
        id="f-01-dot-int-result-array",
        exercise="matmul_dot",
        cause="The result is created with `np.zeros((n, m), dtype=int)`, so every dot product "
              "is truncated to a whole number when it is stored; create it as a float array "
              "(`np.zeros((n, m))`).",
        kind="wrong dtype of the result array",
        wrong_on="A = [[0.5]] and B = [[1.0]]: the entry 0.5 is stored as 0.",
        source=H01 + '''def matmul_dot(A, B):
    """C[i, j] = row i of A · column j of B, with a Python loop (over i and j: one entry at a time)."""
    A, B = matmul_operands(A, B)
    n, m = A.shape[0], B.shape[1]
    C = np.zeros((n, m), dtype=int)
    for i in range(n):
        for j in range(m):
            C[i, j] = np.sum(A[i, :] * B[:, j])
    return C
''',
    ),
    Wrong(
        id="f-01-dot-row-of-B",
        exercise="matmul_dot",
        cause="Each entry multiplies row i of A with `B[j, :]`, a row of B; the dot-product "
              "reading takes column j of B, `B[:, j]`.",
        kind="row taken where a column belongs",
        wrong_on="A = [[1, 2], [3, 4]], B = [[0, 1], [0, 0]]: C[0, 0] comes out 2 (row 0 · "
                 "row 0 of B) instead of 0; for non-square shapes it raises.",
        source=H01 + '''def matmul_dot(A, B):
    """C[i, j] = row i of A · column j of B, with a Python loop (over i and j: one entry at a time)."""
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]))
    for i in range(A.shape[0]):
        for j in range(B.shape[1]):
            C[i, j] = np.sum(A[i, :] * B[j, :])
    return C
''',
    ),
    Wrong(
        id="f-01-dot-total-not-reset",
        exercise="matmul_dot",
        cause="The running total `total = 0.0` is set once before both loops, so each entry "
              "carries on from the previous one; reset it inside the j loop, before summing "
              "each entry.",
        kind="accumulator initialised outside the loop",
        wrong_on="A = [[1, 0]], B = [[1, 1], [0, 0]]: C[0, 1] comes out 2 (1 carried from "
                 "C[0, 0]) instead of 1.",
        source=H01 + '''def matmul_dot(A, B):
    """C[i, j] = row i of A · column j of B, with a Python loop (over i and j: one entry at a time)."""
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
''',
    ),
]

# ------------------------------------------------------------------ lesson 01: matmul_rows
WRONG += [
    Wrong(
        id="f-01-rows-assign-not-add",
        exercise="matmul_rows",
        cause="Inside the loop over p the row is written with `C[i] = A[i, p] * B[p]`, which "
              "replaces it each time so only the last term p = k-1 remains; accumulate with "
              "`C[i] += A[i, p] * B[p]`.",
        kind="= where += belongs",
        wrong_on="A = [[1, 1]], B = [[1, 0], [0, 1]]: the row comes out [0, 1] instead of [1, 1].",
        source=H01 + '''def matmul_rows(A, B):
    """Row i of C = sum over p of A[i, p] * (row p of B), with a Python loop (over i and p)."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    C = np.zeros((n, B.shape[1]))
    for i in range(n):
        for p in range(k):
            C[i] = A[i, p] * B[p]
    return C
''',
    ),
    Wrong(
        id="f-01-rows-weight-index-swapped",
        exercise="matmul_rows",
        cause="The weight is taken as `A[p, i]` instead of `A[i, p]`: the weights of row i of "
              "C are row i of A, so the row index comes first.",
        kind="two indices swapped",
        wrong_on="A = [[1, 2], [0, 0]], B = identity 2×2: row 0 comes out [1, 0] (column 0 of "
                 "A) instead of [1, 2]; non-square A raises IndexError.",
        source=H01 + '''def matmul_rows(A, B):
    """Row i of C = sum over p of A[i, p] * (row p of B), with a Python loop (over i and p)."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    C = np.zeros((n, B.shape[1]))
    for i in range(n):
        for p in range(k):
            C[i] += A[p, i] * B[p]
    return C
''',
    ),
    Wrong(
        id="f-01-rows-uses-matmul-operator",
        exercise="matmul_rows",
        cause="Each row is computed as `A[i] @ B`, with the `@` operator the exercise forbids; "
              "build the row from the sum over p of `A[i, p] * B[p]` instead. (The values are "
              "right: this answer breaks the stated rule only.)",
        kind="forbidden operator (rule broken, values right)",
        wrong_on="Any input, e.g. A = [[1, 2]], B = [[1], [1]]: the result is right but the "
                 "function uses `@`, which the exercise does not allow.",
        source=H01 + '''def matmul_rows(A, B):
    """Row i of C = sum over p of A[i, p] * (row p of B), with a Python loop (over i and p)."""
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]))
    for i in range(A.shape[0]):
        C[i] = A[i] @ B
    return C
''',
    ),
]

# ------------------------------------------------------------------ lesson 01: matmul_cols
WRONG += [
    Wrong(
        id="f-01-cols-row-of-A",
        exercise="matmul_cols",
        cause="The term added is `B[p, j] * A[p, :]`, row p of A; the column reading mixes the "
              "columns of A, `A[:, p]`.",
        kind="row taken where a column belongs",
        wrong_on="A = [[1, 2], [3, 4]], B = identity: column 0 comes out [1, 2] (row 0 of A) "
                 "instead of [1, 3]; non-square A raises.",
        source=H01 + '''def matmul_cols(A, B):
    """Column j of C = sum over p of B[p, j] * (column p of A), with a Python loop (over j and p)."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    m = B.shape[1]
    C = np.zeros((n, m))
    for j in range(m):
        for p in range(k):
            C[:, j] += B[p, j] * A[p, :]
    return C
''',
    ),
    Wrong(
        id="f-01-cols-weight-B-transposed",
        exercise="matmul_cols",
        cause="The weight is written `B[j, p]` where `B[p, j]` belongs: the weights of column j "
              "are column j of B, so p is the row index of B.",
        kind="two indices swapped",
        wrong_on="A = identity 2×2, B = [[1, 2], [3, 4]]: the result is Bᵀ = [[1, 3], [2, 4]] "
                 "instead of B.",
        source=H01 + '''def matmul_cols(A, B):
    """Column j of C = sum over p of B[p, j] * (column p of A), with a Python loop (over j and p)."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    m = B.shape[1]
    C = np.zeros((n, m))
    for j in range(m):
        for p in range(k):
            C[:, j] += B[j, p] * A[:, p]
    return C
''',
    ),
    Wrong(
        id="f-01-cols-zeros-like-A",
        exercise="matmul_cols",
        cause="The result starts as `np.zeros_like(A)`, an n×k array, and the loop runs "
              "`for j in range(C.shape[1])`, so it has k columns; C = AB is n×m: create it as "
              "`np.zeros((n, m))` and loop j over `B.shape[1]`.",
        kind="result created with the wrong shape",
        wrong_on="A of shape 2×3, B of shape 3×2: the function fails with an IndexError "
                 "(column 2 of B does not exist) instead of returning a 2×2 product.",
        source=H01 + '''def matmul_cols(A, B):
    """Column j of C = sum over p of B[p, j] * (column p of A), with a Python loop (over j and p)."""
    A, B = matmul_operands(A, B)
    C = np.zeros_like(A)
    for j in range(C.shape[1]):
        for p in range(A.shape[1]):
            C[:, j] += B[p, j] * A[:, p]
    return C
''',
    ),
]

# ------------------------------------------------------------------ lesson 01: matmul_outer
WRONG += [
    Wrong(
        id="f-01-outer-row-and-column-swapped",
        exercise="matmul_outer",
        cause="Each term is `np.outer(A[p], B[:, p])`, row p of A with column p of B; the "
              "outer-product reading pairs column p of A, `A[:, p]`, with row p of B, `B[p]`.",
        kind="row and column swapped",
        wrong_on="A = [[1, 2], [0, 0]], B = identity 2×2: the result is [[1, 0], [2, 0]] "
                 "(= (BA)ᵀ) instead of A.",
        source=H01 + '''def matmul_outer(A, B):
    """C = sum over p of the outer product of column p of A and row p of B, with a Python loop (over p)."""
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]))
    for p in range(A.shape[1]):
        C += np.outer(A[p], B[:, p])
    return C
''',
    ),
    Wrong(
        id="f-01-outer-return-in-loop",
        exercise="matmul_outer",
        cause="The `return C` is indented inside the loop over p, so the function returns after "
              "the first rank-1 term; move the return after the loop.",
        kind="return inside the loop",
        wrong_on="A = [[1, 1]], B = [[1], [1]]: returns [[1]] (only p = 0) instead of [[2]].",
        source=H01 + '''def matmul_outer(A, B):
    """C = sum over p of the outer product of column p of A and row p of B, with a Python loop (over p)."""
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]))
    for p in range(A.shape[1]):
        C += np.outer(A[:, p], B[p, :])
        return C
''',
    ),
    Wrong(
        id="f-01-outer-range-starts-at-1",
        exercise="matmul_outer",
        cause="The loop is `for p in range(1, k)`, which leaves out the first term, column 0 "
              "of A times row 0 of B; p runs from 0 (`range(k)`).",
        kind="range started one step late",
        wrong_on="A = [[1, 1]], B = [[1], [1]]: returns [[1]] instead of [[2]]; with k = 1 it "
                 "returns all zeros.",
        source=H01 + '''def matmul_outer(A, B):
    """C = sum over p of the outer product of column p of A and row p of B, with a Python loop (over p)."""
    A, B = matmul_operands(A, B)
    k = A.shape[1]
    C = np.zeros((A.shape[0], B.shape[1]))
    for p in range(1, k):
        C = C + A[:, p][:, None] * B[p, :][None, :]
    return C
''',
    ),
]

# ------------------------------------------------------------------ lesson 01: batched_matmul
H01B = '''    A = as_array(A, "A", min_ndim=2)
    B = as_array(B, "B", min_ndim=2)
    if A.shape[-1] != B.shape[-2]:
        raise ValueError(f"A has {A.shape[-1]} columns but B has {B.shape[-2]} rows "
                         f"(shapes {A.shape} and {B.shape})")
'''
BM_DEF = '''def batched_matmul(A, B):
    """[..., n, k] @ [..., k, m] -> [..., n, m] for every batch item, with no Python loop.

    The batch axes broadcast: [n, k] times [b, k, m] gives [b, n, m].
    """
''' + H01B

WRONG += [
    Wrong(
        id="f-01-batched-np-dot",
        exercise="batched_matmul",
        cause="`np.dot(A, B)` is not a batched product: for 3-axis arrays it sums the last "
              "axis of A against the second-to-last of B for every pair of batch items, giving "
              "[b, n, b, m]; use `np.matmul(A, B)` (or `A @ B`), which pairs batch item b with b.",
        kind="np.dot used for a batched product",
        wrong_on="A and B of shape [2, 2, 2]: the result has shape [2, 2, 2, 2] instead of "
                 "[2, 2, 2].",
        source=H01 + BM_DEF + '''    return np.dot(A, B)
''',
    ),
    Wrong(
        id="f-01-batched-sum-wrong-axis",
        exercise="batched_matmul",
        cause="The broadcast product `A[..., :, :, None] * B[..., None, :, :]` has axes "
              "[..., n, k, m], and the sum is taken over `axis=-1` (m); the shared axis k is "
              "`axis=-2`.",
        kind="reduction over the wrong axis",
        wrong_on="A = [[1, 2]], B = [[1, 1], [0, 1]]: the result is [[2, 2]] (each A[0, p] "
                 "times the sum of row p of B) instead of [[1, 3]].",
        source=H01 + BM_DEF + '''    prod = A[..., :, :, None] * B[..., None, :, :]
    return prod.sum(axis=-1)
''',
    ),
    Wrong(
        id="f-01-batched-einsum-one-batch-axis",
        exercise="batched_matmul",
        cause="The einsum string `\"bnk,bkm->bnm\"` hard-codes exactly one batch axis on both "
              "sides, so plain matrices, two batch axes and the broadcast [n, k] × [b, k, m] all "
              "fail; write `\"...nk,...km->...nm\"` or use `A @ B`.",
        kind="batch axes hard-coded",
        wrong_on="A of shape [2, 3] and B of shape [3, 2] (no batch axis): einsum raises "
                 "instead of returning A @ B.",
        source=H01 + BM_DEF + '''    return np.einsum("bnk,bkm->bnm", A, B)
''',
    ),
]

# ------------------------------------------------------------------ lesson 01: einsum_scores
ES_DEF = '''def einsum_scores(Q, K):
    """Q Kᵀ for every batch item: [..., T_q, d] and [..., T_k, d] -> [..., T_q, T_k].

    Use np.einsum: one call does it, with no loop and no other product.
    """
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share their last axis, got {Q.shape} and {K.shape}")
'''
WRONG += [
    Wrong(
        id="f-01-einsum-output-kq",
        exercise="einsum_scores",
        cause="The output letters are written `->...kq`, so the result is [..., T_k, T_q], "
              "the transpose of the scores; the query axis comes first: `->...qk`.",
        kind="output axes in the wrong order",
        wrong_on="Q of shape [2, 4] and K of shape [3, 4]: the result is 3×2 instead of 2×3.",
        source=H01 + ES_DEF + '''    return np.einsum("...qd,...kd->...kq", Q, K)
''',
    ),
    Wrong(
        id="f-01-einsum-no-ellipsis",
        exercise="einsum_scores",
        cause="The string `\"qd,kd->qk\"` has no `...`, so it works only for single matrices and "
              "raises for any batch axis; add `...` in front of every operand and the output.",
        kind="batch axes left out",
        wrong_on="Q and K of shape [2, 3, 4]: einsum raises (too many axes for the subscripts) "
                 "instead of returning [2, 3, 3].",
        source=H01 + ES_DEF + '''    return np.einsum("qd,kd->qk", Q, K)
''',
    ),
    Wrong(
        id="f-01-einsum-K-as-dk",
        exercise="einsum_scores",
        cause="K is labelled `...dk` as if it were already transposed, so einsum sums Q's "
              "features against K's token axis and computes Q K, not Q Kᵀ; K is [..., T_k, d], "
              "label it `...kd`.",
        kind="transpose left out",
        wrong_on="Q = K = [[1, 2], [3, 4]]: the result is Q K = [[7, 10], [15, 22]] instead of "
                 "Q Kᵀ = [[5, 11], [11, 25]]; non-square K raises.",
        source=H01 + ES_DEF + '''    return np.einsum("...qd,...dk->...qk", Q, K)
''',
    ),
]

# ------------------------------------------------------------------ lesson 01: weighted_average_rows
WA_DEF = '''def weighted_average_rows(W, V):
    """Row i of the result mixes the rows of V with weights W[i] (non-negative, sum 1).

    W: [..., n, m], V: [..., m, d] -> [..., n, d]. Raises ValueError for invalid weights.
    """
    W = as_array(W, "W", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if W.shape[-1] != V.shape[-2]:
        raise ValueError(f"W has {W.shape[-1]} weights per row but V has {V.shape[-2]} rows")
'''
WRONG += [
    Wrong(
        id="f-01-wavg-nan-slips-through",
        exercise="weighted_average_rows",
        cause="Both tests are written as 'raise when bad' (`abs(sum - 1) > 1e-6`, `W < 0`), and "
              "every comparison with NaN is False, so a NaN weight passes both; test the good "
              "case and raise when it fails (e.g. `not np.all(np.isfinite(W))` first, or "
              "`~(abs(sum - 1) <= 1e-6)`).",
        kind="NaN not rejected (comparison with NaN is False)",
        wrong_on="W = [[0.5, 0.5, nan]], V = ones 3×1: returns [[nan]] instead of raising "
                 "ValueError.",
        source=H01 + WA_DEF + '''    sums = W.sum(axis=-1)
    if np.any(np.abs(sums - 1) > 1e-6):
        bad = np.argwhere(np.abs(sums - 1) > 1e-6)[0]
        raise ValueError(f"row {tuple(bad)} of W sums to {sums[tuple(bad)]}, not 1")
    if np.any(W < 0):
        raise ValueError(f"W has a negative weight at {tuple(np.argwhere(W < 0)[0])}")
    return W @ V
''',
    ),
    Wrong(
        id="f-01-wavg-sums-down-columns",
        exercise="weighted_average_rows",
        cause="The sums are checked with `W.sum(axis=-2)`, down the columns, so valid weights "
              "whose rows sum to 1 are rejected when the columns do not; every row must sum to "
              "1: `W.sum(axis=-1)`.",
        kind="reduction over the wrong axis",
        wrong_on="W = [[1, 0], [1, 0]] (rows sum to 1), V = [[1], [2]]: raises ValueError "
                 "(column 0 sums to 2) instead of returning [[1], [1]].",
        source=H01 + WA_DEF + '''    if not np.all(np.isfinite(W)):
        raise ValueError("W holds NaN or an infinite weight")
    if np.any(W < 0):
        raise ValueError("W holds a negative weight")
    sums = W.sum(axis=-2)
    if not np.all(np.abs(sums - 1) <= 1e-6):
        raise ValueError(f"the weights must sum to 1, got sums {sums}")
    return W @ V
''',
    ),
    Wrong(
        id="f-01-wavg-divides-by-m",
        exercise="weighted_average_rows",
        cause="After the checks the result is `W @ V / W.shape[-1]`, dividing once more by the "
              "number of weights as if averaging; the weights already sum to 1, so the mixture "
              "is just `W @ V`.",
        kind="extra factor applied",
        wrong_on="W = [[0.5, 0.5]], V = [[2], [4]]: returns [[1.5]] instead of [[3]].",
        source=H01 + WA_DEF + '''    if not np.all(np.isfinite(W)):
        raise ValueError("W holds NaN or an infinite weight")
    if np.any(W < 0):
        raise ValueError("W holds a negative weight")
    sums = W.sum(axis=-1)
    if not np.all(np.abs(sums - 1) <= 1e-6):
        raise ValueError(f"every row of W must sum to 1, got row sums {sums}")
    return W @ V / W.shape[-1]
''',
    ),
    Wrong(
        id="f-01-wavg-negative-not-checked",
        exercise="weighted_average_rows",
        cause="Only finiteness and the row sums are checked, so a row with a negative weight "
              "that still sums to 1 is mixed instead of rejected; add a check that raises when "
              "`np.any(W < 0)`.",
        kind="validation left out",
        wrong_on="W = [[1.5, -0.5]], V = [[0], [1]]: returns [[-0.5]] instead of raising "
                 "ValueError.",
        source=H01 + WA_DEF + '''    if not np.all(np.isfinite(W)):
        raise ValueError("W holds NaN or an infinite weight")
    sums = W.sum(axis=-1)
    if not np.all(np.abs(sums - 1) <= 1e-6):
        raise ValueError(f"every row of W must sum to 1, got row sums {sums}")
    return W @ V
''',
    ),
    Wrong(
        id="f-01-wavg-allclose-tolerance",
        exercise="weighted_average_rows",
        cause="The sum test is `np.allclose(sums, 1)`, whose default tolerance (about 1e-5) is "
              "ten times looser than the required 1e-6, so a row summing to 1 + 5e-6 is let "
              "through; compare `np.abs(sums - 1) <= 1e-6` (or pass `rtol=0, atol=1e-6`).",
        kind="tolerance too loose",
        wrong_on="W = [[0.5, 0.500005]], V = [[1], [1]]: returns [[1.000005]] instead of "
                 "raising ValueError.",
        source=H01 + WA_DEF + '''    if not np.all(np.isfinite(W)):
        raise ValueError("W holds NaN or an infinite weight")
    if np.any(W < 0):
        raise ValueError("W holds a negative weight")
    if not np.allclose(W.sum(axis=-1), 1):
        raise ValueError(f"every row of W must sum to 1, got row sums {W.sum(axis=-1)}")
    return W @ V
''',
    ),
]

# ================================================================== lesson 02
H02 = '''import numpy as np
from grader.learner.validation import as_array

'''
SM_DEF = '''def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
'''
SM_OK = SM_DEF + '''    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
'''
SC_DEF = '''def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
'''
SC_OK = SC_DEF + '''    d_k = Q.shape[-1]
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
'''
VAR_DEF = '''def score_variance(d_k, n_samples, seed):
    """The sample variance of q·k over n_samples pairs of standard normal vectors of length d_k."""
    if not isinstance(d_k, (int, np.integer)) or d_k < 1:
        raise ValueError(f"d_k must be a positive integer, got {d_k!r}")
    if not isinstance(n_samples, (int, np.integer)) or n_samples < 2:
        raise ValueError(f"n_samples must be an integer of at least 2, got {n_samples!r}")
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, d_k))   # one query per row
    k = rng.standard_normal((n_samples, d_k))   # one key per row
'''
SDPA_DEF = '''def scaled_dot_product_attention(Q, K, V):
    """softmax(Q Kᵀ / sqrt(d_k)) V. Returns (output [..., T_q, d_v], weights [..., T_q, T_k])."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V need one row per key: K has {K.shape[-2]} rows, V has "
                         f"{V.shape[-2]} (shapes {K.shape} and {V.shape})")
'''
SDPA_OK = SDPA_DEF + '''    weights = softmax(attention_scores(Q, K), axis=-1)
    return weights @ V, weights
'''
ONE_DEF = '''def attend_one_query(q, K, V):
    """The single-query sum for q [d_k] over keys K [T_k, d_k] and values V [T_k, d_v] -> [d_v]."""
    q = as_array(q, "q", ndim=1)
    K = as_array(K, "K", ndim=2)
    V = as_array(V, "V", ndim=2)
    if K.shape[1] != q.shape[0] or V.shape[0] != K.shape[0]:
        raise ValueError(f"q {q.shape}, K {K.shape} and V {V.shape} do not fit: "
                         f"q must be [d_k], K [T_k, d_k] and V [T_k, d_v]")
'''
SELF_DEF = '''def self_attention(X, W_q, W_k, W_v):
    """Q = X W_q, K = X W_k, V = X W_v, then scaled dot-product attention. Returns (output, weights)."""
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
'''
HELPERS_02 = SM_OK + "\n\n" + SC_OK + "\n\n"

# ------------------------------------------------------------------ lesson 02: softmax
WRONG += [
    Wrong(
        id="f-02-softmax-no-max-shift",
        exercise="softmax",
        cause="The exponentials are taken of the raw scores, `np.exp(x)`, so a score of 1000 "
              "overflows to inf and inf/inf gives NaN; subtract the largest score along `axis` "
              "(with keepdims) before `np.exp`.",
        kind="stabilising shift left out",
        wrong_on="x = [1000, 999]: returns [nan, nan] instead of about [0.731, 0.269].",
        source=H02 + SM_DEF + '''    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)
''',
    ),
    Wrong(
        id="f-02-softmax-sum-no-keepdims",
        exercise="softmax",
        cause="The division is by `e.sum(axis=axis)` without `keepdims=True`, so for a matrix "
              "the row sums broadcast along the last axis and entry [i, j] is divided by the "
              "sum of row j; keep the reduced axis so each entry is divided by its own row's sum.",
        kind="keepdims forgotten",
        wrong_on="x = [[0, 1], [0, 0]] with axis=-1: row 0 comes out [0.269, 0.5] instead of "
                 "[0.269, 0.731]; non-square x raises.",
        source=H02 + SM_DEF + '''    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis)
''',
    ),
    Wrong(
        id="f-02-softmax-global-max",
        exercise="softmax",
        cause="The shift is `x - x.max()`, the largest entry of the whole array, not of each "
              "slice along `axis`; a row far below that maximum underflows to all zeros and "
              "0/0 gives NaN. Take the max along `axis` with `keepdims=True`.",
        kind="reduction over every axis",
        wrong_on="x = [[0, 1], [-1000, -999]] with axis=-1: row 1 comes out [nan, nan] instead "
                 "of [0.269, 0.731].",
        source=H02 + SM_DEF + '''    e = np.exp(x - x.max())
    return e / e.sum(axis=axis, keepdims=True)
''',
    ),
    Wrong(
        id="f-02-softmax-axis-ignored",
        exercise="softmax",
        cause="Both reductions are written with `axis=-1` instead of the parameter `axis`, so "
              "the function always normalises the last axis; pass `axis=axis` to the max and "
              "the sum.",
        kind="parameter replaced by its default",
        wrong_on="x = [[0, 1], [2, 3]] with axis=0: the rows sum to 1 instead of the columns.",
        source=H02 + SM_DEF + '''    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
''',
    ),
    Wrong(
        id="f-02-softmax-subtract-min",
        exercise="softmax",
        cause="The shift subtracts the smallest score, `x.min(...)`, so the largest exponent is "
              "the whole spread of the scores and overflows for a spread like 1000; subtract "
              "the largest score, so the largest exponent is 0.",
        kind="max replaced by min",
        wrong_on="x = [0, 1000]: exp(1000) overflows and the result is [0, nan] instead of [0, 1].",
        source=H02 + SM_DEF + '''    e = np.exp(x - x.min(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
''',
    ),
    Wrong(
        id="f-02-softmax-exponent-sign",
        exercise="softmax",
        cause="The exponent is written `np.exp(x.max(...) - x)`, the shift the wrong way round, "
              "so smaller scores get larger weights; it should be `np.exp(x - x.max(...))`.",
        kind="sign flipped inside the exponent",
        wrong_on="x = [0, 1]: returns [0.731, 0.269] instead of [0.269, 0.731].",
        source=H02 + SM_DEF + '''    m = x.max(axis=axis, keepdims=True)
    e = np.exp(m - x)
    return e / e.sum(axis=axis, keepdims=True)
''',
    ),
]

# ------------------------------------------------------------------ lesson 02: attention_scores
WRONG += [
    Wrong(
        id="f-02-scores-full-transpose",
        exercise="attention_scores",
        cause="K is transposed with `K.T`, which reverses every axis of a batched K ([B, T, d] "
              "becomes [d, T, B]); swap only the last two axes, `np.swapaxes(K, -1, -2)`.",
        kind="transpose made full on a batched array",
        wrong_on="Q and K of shape [2, 3, 4]: the product raises instead of returning [2, 3, 3].",
        source=H02 + SC_DEF + '''    d_k = Q.shape[-1]
    return Q @ K.T / np.sqrt(d_k)
''',
    ),
    Wrong(
        id="f-02-scores-scale-by-tokens",
        exercise="attention_scores",
        cause="The scale is `np.sqrt(Q.shape[-2])`, the square root of the number of queries; "
              "d_k is the length of each query and key vector, `Q.shape[-1]`.",
        kind="d_k taken as the number of tokens",
        wrong_on="Q of shape [2, 4], K of shape [3, 4]: the scores are divided by √2 instead of "
                 "√4 = 2.",
        source=H02 + SC_DEF + '''    T_q = Q.shape[-2]
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(T_q)
''',
    ),
    Wrong(
        id="f-02-scores-no-sqrt",
        exercise="attention_scores",
        cause="The scores are divided by `d_k` itself; the scale is its square root, "
              "`np.sqrt(d_k)`.",
        kind="square root left out",
        wrong_on="Q = [[1, 1, 1, 1]], K = [[1, 1, 1, 1]]: returns [[1]] instead of [[2]].",
        source=H02 + SC_DEF + '''    d_k = Q.shape[-1]
    return (Q @ np.swapaxes(K, -1, -2)) / d_k
''',
    ),
    Wrong(
        id="f-02-scores-times-sqrt",
        exercise="attention_scores",
        cause="The product is multiplied by `np.sqrt(d_k)` instead of divided by it.",
        kind="* where / belongs",
        wrong_on="Q = K = [[1, 1, 1, 1]]: returns [[8]] instead of [[2]].",
        source=H02 + SC_DEF + '''    d_k = Q.shape[-1]
    return Q @ np.swapaxes(K, -1, -2) * np.sqrt(d_k)
''',
    ),
    Wrong(
        id="f-02-scores-K-times-Q",
        exercise="attention_scores",
        cause="The product is written `K @ Qᵀ`, keys first, which gives [T_k, T_q], the "
              "transpose of the scores; queries are the rows: `Q @ Kᵀ`.",
        kind="operands swapped",
        wrong_on="Q of shape [2, 4] and K of shape [3, 4]: the result is 3×2 instead of 2×3.",
        source=H02 + SC_DEF + '''    d_k = K.shape[-1]
    return K @ np.swapaxes(Q, -1, -2) / np.sqrt(d_k)
''',
    ),
]

# ------------------------------------------------------------------ lesson 02: score_variance
WRONG += [
    Wrong(
        id="f-02-var-returns-std",
        exercise="score_variance",
        cause="The last line returns `np.std(...)`, the standard deviation, which grows like "
              "√d_k; the exercise asks for the variance, `np.var(...)`.",
        kind="std where var belongs",
        wrong_on="d_k = 16, n_samples = 4000, seed = 0: returns about 4 instead of about 16.",
        source=H02 + VAR_DEF + '''    dots = np.sum(q * k, axis=1)
    return np.std(dots)
''',
    ),
    Wrong(
        id="f-02-var-dot-over-samples",
        exercise="score_variance",
        cause="The products are summed with `axis=0`, down the samples, which gives d_k sums of "
              "n_samples products instead of one dot product per pair; sum along the features, "
              "`axis=1`.",
        kind="reduction over the wrong axis",
        wrong_on="d_k = 1, n_samples = 100, seed = 0: there is one sum, so the variance is 0 "
                 "instead of about 1.",
        source=H02 + VAR_DEF + '''    dots = np.sum(q * k, axis=0)
    return np.var(dots)
''',
    ),
    Wrong(
        id="f-02-var-products-not-summed",
        exercise="score_variance",
        cause="`np.var(q * k)` takes the variance of the single products q_i k_i, which is "
              "about 1 for every d_k; sum each row first (`(q * k).sum(axis=1)`) so there is "
              "one dot product per pair.",
        kind="sum left out",
        wrong_on="d_k = 16, n_samples = 4000, seed = 0: returns about 1 instead of about 16.",
        source=H02 + VAR_DEF + '''    return np.var(q * k)
''',
    ),
    Wrong(
        id="f-02-var-mean-square",
        exercise="score_variance",
        cause="The variance is computed as `np.mean(dots ** 2)`, without subtracting the sample "
              "mean; that is the second moment, which equals the variance only when the mean "
              "is exactly 0. Use `np.var(dots)` (or subtract `dots.mean()` first).",
        kind="mean not subtracted",
        wrong_on="d_k = 4, n_samples = 10, seed = 1: the mean of the 10 dot products is not 0, "
                 "so the result is larger than the sample variance.",
        source=H02 + VAR_DEF + '''    dots = np.einsum("nd,nd->n", q, k)
    return np.mean(dots ** 2)
''',
    ),
    Wrong(
        id="f-02-var-all-pairs",
        exercise="score_variance",
        cause="`q @ k.T` dots every query with every key, n_samples² numbers, and the variance "
              "is taken over all of them; the pairs are the rows, query n with key n only: "
              "`np.sum(q * k, axis=1)`. (It also builds an n_samples × n_samples matrix.)",
        kind="full product where a row-wise dot belongs",
        wrong_on="d_k = 4, n_samples = 50, seed = 0: the variance over all 2500 products "
                 "differs from the variance over the 50 matching pairs.",
        source=H02 + VAR_DEF + '''    return np.var(q @ k.T)
''',
    ),
]

# ------------------------------------------------------------------ lesson 02: scaled_dot_product_attention
WRONG += [
    Wrong(
        id="f-02-sdpa-softmax-query-axis",
        exercise="scaled_dot_product_attention",
        cause="The softmax is taken with `axis=-2`, down the queries, so each key's column sums "
              "to 1; each query's weights lie along the key axis, `axis=-1`.",
        kind="softmax over the wrong axis",
        wrong_on="Q = [[1, 0], [0, 1]], K = [[1, 0], [0, 0]], V = identity: the weights' rows "
                 "do not sum to 1.",
        source=H02 + HELPERS_02 + SDPA_DEF + '''    weights = softmax(attention_scores(Q, K), axis=-2)
    return weights @ V, weights
''',
    ),
    Wrong(
        id="f-02-sdpa-returns-swapped",
        exercise="scaled_dot_product_attention",
        cause="The function returns `(weights, output)`; the exercise asks for `(output, "
              "weights)`.",
        kind="tuple items swapped",
        wrong_on="Q, K of shape [2, 3] and V of shape [2, 5]: the first item is 2×2 (the "
                 "weights) instead of the 2×5 output.",
        source=H02 + HELPERS_02 + SDPA_DEF + '''    weights = softmax(attention_scores(Q, K))
    output = weights @ V
    return weights, output
''',
    ),
    Wrong(
        id="f-02-sdpa-weights-transposed",
        exercise="scaled_dot_product_attention",
        cause="The output is `np.swapaxes(weights, -1, -2) @ V`: the weights are transposed "
              "before they meet V, so row i mixes the values with column i of the weights; "
              "the row reading needs `weights @ V`.",
        kind="transpose added",
        wrong_on="Q = [[1, 0], [0, 1]], K = [[1, 0], [0, 0]], V = identity: the output is the "
                 "transposed weights instead of the weights; with T_q ≠ T_k it raises.",
        source=H02 + HELPERS_02 + SDPA_DEF + '''    weights = softmax(attention_scores(Q, K), axis=-1)
    output = np.swapaxes(weights, -1, -2) @ V
    return output, weights
''',
    ),
    Wrong(
        id="f-02-sdpa-returns-scores",
        exercise="scaled_dot_product_attention",
        cause="The second item returned is `scores`, the scaled scores before the softmax; "
              "return the weights, `softmax(scores)`.",
        kind="wrong variable returned",
        wrong_on="Q = K = [[1, 0]], V = [[1]]: the second item is [[0.707]] (the score) "
                 "instead of [[1]] (the weight).",
        source=H02 + HELPERS_02 + SDPA_DEF + '''    scores = attention_scores(Q, K)
    weights = softmax(scores, axis=-1)
    return weights @ V, scores
''',
    ),
    Wrong(
        id="f-02-sdpa-unscaled-scores",
        exercise="scaled_dot_product_attention",
        cause="The scores are written inline as `Q @ np.swapaxes(K, -1, -2)` without the "
              "division by √d_k; use `attention_scores(Q, K)` (or divide by "
              "`np.sqrt(Q.shape[-1])`).",
        kind="scale left out",
        wrong_on="Q = [[1, 0, 0, 0]], K = [[2, 0, 0, 0], [0, 0, 0, 0]], V = identity 2×2: the "
                 "weights are softmax([2, 0]) instead of softmax([1, 0]).",
        source=H02 + HELPERS_02 + SDPA_DEF + '''    scores = Q @ np.swapaxes(K, -1, -2)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
''',
    ),
]

# ------------------------------------------------------------------ lesson 02: attend_one_query
WRONG += [
    Wrong(
        id="f-02-one-no-max-shift",
        exercise="attend_one_query",
        cause="Each weight is `np.exp(s_i)` of the raw score, so a score of several hundred "
              "overflows to inf and the output becomes NaN; subtract the largest score before "
              "`np.exp`, as in section 1.",
        kind="stabilising shift left out",
        wrong_on="q = [2000], K = [[1], [0.9]], V = [[1], [0]]: the scores are 2000 and 1800, "
                 "exp overflows and the output is NaN instead of about [1].",
        source=H02 + ONE_DEF + '''    d_k = q.shape[0]
    scores = [np.sum(q * K[i]) / np.sqrt(d_k) for i in range(K.shape[0])]
    exps = [np.exp(s) for s in scores]
    total = sum(exps)
    out = np.zeros(V.shape[1])
    for i in range(K.shape[0]):
        out += exps[i] / total * V[i]
    return out
''',
    ),
    Wrong(
        id="f-02-one-no-scale",
        exercise="attend_one_query",
        cause="The score is the bare dot product `q · k_i`; the exercise defines "
              "s_i = q · k_i / √d_k, so divide by `np.sqrt(len(q))`.",
        kind="scale left out",
        wrong_on="q = [1, 1, 1, 1], K = [[1, 1, 1, 1], [0, 0, 0, 0]], V = [[1], [0]]: the "
                 "weights are softmax([4, 0]) instead of softmax([2, 0]).",
        source=H02 + ONE_DEF + '''    scores = np.array([np.sum(q * K[i]) for i in range(K.shape[0])])
    w = np.exp(scores - scores.max())
    w = w / w.sum()
    out = np.zeros(V.shape[1])
    for i in range(K.shape[0]):
        out += w[i] * V[i]
    return out
''',
    ),
    Wrong(
        id="f-02-one-normalise-inside-loop",
        exercise="attend_one_query",
        cause="The division by the running total, `out = out / total`, is inside the loop over "
              "the keys, so earlier terms are divided again at every step; accumulate "
              "`out += w_i * V[i]` and `total += w_i` in the loop and divide once after it.",
        kind="statement moved into the loop",
        wrong_on="q = [0], K = [[0], [0], [0]], V = [[1], [3], [5]]: returns [2.33] instead "
                 "of the average [3].",
        source=H02 + ONE_DEF + '''    d_k = q.shape[0]
    scores = [np.dot(q, K[i]) / np.sqrt(d_k) for i in range(K.shape[0])]
    m = max(scores)
    out = np.zeros(V.shape[1])
    total = 0.0
    for i in range(K.shape[0]):
        w = np.exp(scores[i] - m)
        total += w
        out += w * V[i]
        out = out / total
    return out
''',
    ),
    Wrong(
        id="f-02-one-scale-by-keys",
        exercise="attend_one_query",
        cause="The scale is `np.sqrt(K.shape[0])`, the square root of the number of keys; d_k is "
              "the length of q and of each key, `K.shape[1]`.",
        kind="d_k taken as the number of tokens",
        wrong_on="q = [1, 1, 1, 1], K = [[1, 1, 1, 1], [0, 0, 0, 0]], V = [[1], [0]]: the "
                 "scores are divided by √2 instead of 2.",
        source=H02 + ONE_DEF + '''    scale = np.sqrt(K.shape[0])
    scores = [sum(q[d] * K[i, d] for d in range(len(q))) / scale for i in range(K.shape[0])]
    m = max(scores)
    exps = [np.exp(s - m) for s in scores]
    total = sum(exps)
    out = np.zeros(V.shape[1])
    for i in range(K.shape[0]):
        out = out + (exps[i] / total) * V[i]
    return out
''',
    ),
    Wrong(
        id="f-02-one-total-unshifted",
        exercise="attend_one_query",
        cause="The numerators are shifted, `np.exp(s_i - m)`, but the total is summed from the "
              "unshifted `np.exp(s_j)`, so every weight is off by the factor e^(-m) (and the "
              "total overflows for large scores); build the total from the same shifted "
              "exponentials.",
        kind="one side of a fraction rescaled, the other not",
        wrong_on="q = [2], K = [[1], [0]], V = [[1], [1]]: the weights sum to e^(-2) ≈ 0.135, "
                 "so the output is [0.135] instead of [1].",
        source=H02 + ONE_DEF + '''    d_k = q.shape[0]
    scores = [np.dot(q, K[i]) / np.sqrt(d_k) for i in range(K.shape[0])]
    m = max(scores)
    total = sum(np.exp(s) for s in scores)
    out = np.zeros(V.shape[1])
    for i in range(K.shape[0]):
        out += np.exp(scores[i] - m) / total * V[i]
    return out
''',
    ),
]

# ------------------------------------------------------------------ lesson 02: self_attention
SELF_HELPERS = HELPERS_02 + SDPA_OK + "\n\n"
WRONG += [
    Wrong(
        id="f-02-self-K-from-W_q",
        exercise="self_attention",
        cause="The keys are computed as `X @ W_q` (a copy of the query line); they come from "
              "`X @ W_k`.",
        kind="wrong weight matrix (copy-paste)",
        wrong_on="X = identity 2×2, W_q = identity, W_k = [[0, 1], [1, 0]], W_v = identity: "
                 "the weights favour each token itself instead of the other token.",
        source=H02 + SELF_HELPERS + SELF_DEF + '''    Q = X @ W_q
    K = X @ W_q
    V = X @ W_v
    return scaled_dot_product_attention(Q, K, V)
''',
    ),
    Wrong(
        id="f-02-self-V-not-projected",
        exercise="self_attention",
        cause="The values are the tokens themselves, `V = X`; they are projected too, "
              "`V = X @ W_v`.",
        kind="projection left out",
        wrong_on="X = identity 2×2, W_q = W_k = identity, W_v = [[2], [0]]: the output has 2 "
                 "columns (the tokens) instead of 1.",
        source=H02 + SELF_HELPERS + SELF_DEF + '''    Q = X @ W_q
    K = X @ W_k
    V = X
    return scaled_dot_product_attention(Q, K, V)
''',
    ),
    Wrong(
        id="f-02-self-scale-d-model",
        exercise="self_attention",
        cause="The scores are divided by `np.sqrt(X.shape[-1])`, the width d_model of the tokens; "
              "the scale is the width of the projected queries and keys, `W_q.shape[1]`.",
        kind="scale from the wrong width",
        wrong_on="X of shape [3, 4] and W_q, W_k, W_v of shape [4, 1]: the scores are divided "
                 "by 2 = √4 instead of 1 = √1.",
        source=H02 + SM_OK + "\n\n" + SELF_DEF + '''    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(X.shape[-1])
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
''',
    ),
    Wrong(
        id="f-02-self-weights-transposed",
        exercise="self_attention",
        cause="The projections are written `X @ W_q.T` (and the same for W_k, W_v), as if the "
              "weights were stored [d_k, d_model]; here they are [d_model, d_k], so it is "
              "`X @ W_q` with no transpose.",
        kind="transpose added",
        wrong_on="X = [[1, 2], [3, 4]] with W_q = W_k = [[1, 1], [0, 0]] and W_v = identity: "
                 "Q = X W_qᵀ differs from X W_q, so weights and output are wrong (non-square "
                 "weights raise).",
        source=H02 + SELF_HELPERS + SELF_DEF + '''    Q = X @ W_q.T
    K = X @ W_k.T
    V = X @ W_v.T
    return scaled_dot_product_attention(Q, K, V)
''',
    ),
    Wrong(
        id="f-02-self-returns-output-only",
        exercise="self_attention",
        cause="The last line takes `[0]` of the attention's result and returns only the output; "
              "the exercise returns the pair `(output, weights)`.",
        kind="one item of a tuple returned",
        wrong_on="X = identity 2×2 and all weights identity: returns a 2×2 array instead of a "
                 "pair (output, weights).",
        source=H02 + SELF_HELPERS + SELF_DEF + '''    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    return scaled_dot_product_attention(Q, K, V)[0]
''',
    ),
]

# ------------------------------------------------------------------ lesson 03: worksheet (typed)
# The check reads the dict WORKSHEET; each answer fills in every step, one step wrong.
WRONG += [
    Wrong(
        id='f-03-ws-Q-typed-as-rows',
        exercise='worksheet_Q',
        cause='Q was typed in the row convention of lesson 02, one token per row (4 rows of 3 numbers, that is Qᵀ); in this worksheet tokens are columns, so Q = W_Q X has 3 rows (one per row of W_Q) and 4 columns (one per token).',
        kind='layout transposed (rows for columns)',
        wrong_on='The published worksheet: the typed Q is 4×3 ([[2, 1, 1], [1, 1, 0], [1, 0, 2], [1, 1, 1]]) where the 3×4 matrix W_Q X belongs.',
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
3/16 1/2 5/8 3/7
3/16 5/8 1/2 3/7
1/16 1/4 1/4 1/7
"""
''',
    ),
    Wrong(
        id='f-03-ws-K-minus-one-as-plus',
        exercise='worksheet_K',
        cause='In row 2 of W_K, (0, 0, 0, 1, -1, 1), the -1 was multiplied as if it were +1, so entry (2, 3) of K came out 1; with the sign it is 0 + 0 + 0 + 0 - 1 + 0 = -1.',
        kind='sign dropped in a hand product',
        wrong_on='The published worksheet: K[2, 3] (1-based) is typed as 1 instead of -1.',
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
3/16 1/2 5/8 3/7
3/16 5/8 1/2 3/7
1/16 1/4 1/4 1/7
"""
''',
    ),
    Wrong(
        id='f-03-ws-V-last-feature-dropped',
        exercise='worksheet_V',
        cause='Each entry of V dotted the row of W_V with only the first five features of the token, stopping one feature early, so the sixth feature (row 6 of X) never counted; the dot product runs over all six.',
        kind='sum stopped one term early',
        wrong_on='The published worksheet: rows 2 and 3 of V come out (1, 0, 1, 1) and (0, 0, 1, 0) instead of (1, 0, 1, 2) and (0, 0, 1, 1).',
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
1 0 1 1
0 0 1 0
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
3/16 1/2 5/8 3/7
3/16 5/8 1/2 3/7
1/16 1/4 1/4 1/7
"""
''',
    ),
    Wrong(
        id='f-03-ws-scores-QtK',
        exercise='worksheet_scores',
        cause='The grid was laid out with Qᵀ on the left and K above, so the typed matrix is Qᵀ K, with query i in row i; the step asks for Kᵀ Q, with key i in row i and query j in column j (the transpose of what was typed).',
        kind='operands swapped (transposed result)',
        wrong_on='The published worksheet: the typed scores are [[3, 6, 0, 1], [1, 3, -1, 1], [3, 4, 2, 0], [2, 4, 0, 1]], the transpose of Kᵀ Q.',
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
3/16 1/2 5/8 3/7
3/16 5/8 1/2 3/7
1/16 1/4 1/4 1/7
"""
''',
    ),
    Wrong(
        id='f-03-ws-scaled-rounds-toward-zero',
        exercise='worksheet_scaled',
        cause='The score -1 was halved and rounded toward zero, giving 0; the floor rounds down, also below zero, so floor(-1/2) = -1.',
        kind='truncation where the floor belongs',
        wrong_on='The published worksheet: scaled[3, 2] (1-based) is typed as 0 instead of -1.',
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

# A: 4 rows of 4 weights, every column adds up to 1. Write fractions like 3/16.
WORKSHEET["A"] = """
3/32 3/16 3/16 3/14
27/32 9/16 9/16 9/14
1/32 1/16 3/16 1/14
1/32 3/16 1/16 1/14
"""

# Z = V A: 3 rows of 4 numbers, one column per token.
WORKSHEET["Z"] = """
3/16 1/2 5/8 3/7
3/16 5/8 1/2 3/7
1/16 1/4 1/4 1/7
"""
''',
    ),
    Wrong(
        id='f-03-ws-A-rows-normalised',
        exercise='worksheet_A',
        cause="The powers of 3 were divided by their row sums, so every row of A adds up to 1; in the column convention each query is a column, so divide each power by its column's sum.",
        kind='normalised along the wrong axis',
        wrong_on='The published worksheet: the first row is typed [3/10, 1/10, 3/10, 3/10] instead of [3/32, 3/16, 3/16, 3/14], and the columns do not add up to 1.',
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

# Z = V A: 3 rows of 4 numbers, one column per token.
WORKSHEET["Z"] = """
3/16 1/2 5/8 3/7
3/16 5/8 1/2 3/7
1/16 1/4 1/4 1/7
"""
''',
    ),
    Wrong(
        id='f-03-ws-Z-rows-of-A',
        exercise='worksheet_Z',
        cause="Each entry of Z was computed as row i of V times row j of A, which is V Aᵀ; column j of Z uses column j of A (query j's weights): Z = V A.",
        kind='transpose added',
        wrong_on='The published worksheet: Z[1, 1] (1-based) is typed as 153/224 instead of 3/16.',
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
''',
    ),
]

# ================================================================== lesson 03: code
H03 = '''import math
from fractions import Fraction

import numpy as np
from grader.learner.validation import as_fractions

'''
KQ_DEF = '''def key_query_scores(K, Q):
    """Kᵀ Q for keys and queries stored as columns: entry [i, j] is k_i · q_j.

    K: d_k×T_k and Q: d_k×T_q (ints, Fractions or floats). Returns T_k×T_q Fractions.
    """
    K = as_fractions(K, "K")
    Q = as_fractions(Q, "Q")
    if K.shape[0] != Q.shape[0]:
        raise ValueError(f"K and Q must have the same number of rows d_k, got K of shape "
                         f"{K.shape} and Q of shape {Q.shape}")
'''
KQ_OK = KQ_DEF + '''    return K.T @ Q
'''
FH_DEF = '''def floor_half(S):
    """floor(S / 2) entry by entry, exactly: the stand-in for S / √3. floor(-1/2) is -1."""
    S = as_fractions(S, "S")
'''
FH_OK = FH_DEF + '''    return np.array([[Fraction(math.floor(s / 2)) for s in row] for row in S], dtype=object)
'''
S3_DEF = '''def softmax3_columns(S):
    """3 ** S with every column divided by its sum, exactly. Every column sums to 1.

    S holds whole numbers (the scaled scores).
    """
    S = as_fractions(S, "S", whole=True)
'''
S3_OK = S3_DEF + '''    P = np.array([[Fraction(3) ** int(s) for s in row] for row in S], dtype=object)
    return P / P.sum(axis=0, keepdims=True)
'''
ABH_DEF = '''def attention_by_hand(X, W_Q, W_K, W_V):
    """Every step of the worksheet, with tokens as the columns of X (d_in×T)."""
    X = as_fractions(X, "X")
    W_Q, W_K, W_V = as_fractions(W_Q, "W_Q"), as_fractions(W_K, "W_K"), as_fractions(W_V, "W_V")
    for name, W in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
        if W.shape[1] != X.shape[0]:
            raise ValueError(f"{name} has {W.shape[1]} columns but X has {X.shape[0]} rows "
                             f"(features): shapes {W.shape} and {X.shape}")
    if W_Q.shape[0] != W_K.shape[0]:
        raise ValueError(f"W_Q and W_K must have the same number of rows, got shapes "
                         f"{W_Q.shape} and {W_K.shape}")
'''
ROW_DEF = '''def row_convention_attention(X_rows, W_Q, W_K, W_V):
    """The worksheet with tokens as the rows of X_rows (T×d_in); the same 3×d_in weights.

    Returns the same keys as attention_by_hand; A's rows sum to 1 and Z = A V.
    """
    X_rows = as_fractions(X_rows, "X_rows")
    W_Q, W_K, W_V = as_fractions(W_Q, "W_Q"), as_fractions(W_K, "W_K"), as_fractions(W_V, "W_V")
    for name, W in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
        if W.shape[1] != X_rows.shape[1]:
            raise ValueError(f"{name} has {W.shape[1]} columns but X_rows has {X_rows.shape[1]} "
                             f"columns (features): shapes {W.shape} and {X_rows.shape}")
    if W_Q.shape[0] != W_K.shape[0]:
        raise ValueError(f"W_Q and W_K must have the same number of rows, got shapes "
                         f"{W_Q.shape} and {W_K.shape}")
'''
HELPERS_03 = KQ_OK + "\n\n" + FH_OK + "\n\n" + S3_OK + "\n\n"

# ------------------------------------------------------------------ lesson 03: key_query_scores
WRONG += [
    Wrong(
        id="f-03-kq-QtK",
        exercise="key_query_scores",
        cause="The product is written `Q.T @ K`, which puts query i in row i ([T_q, T_k]); "
              "the scores here have key i in row i: `K.T @ Q`.",
        kind="operands swapped (transposed result)",
        wrong_on="K = [[1, 0, 0]] (3 keys) and Q = [[2, 3]] (2 queries): returns a 2×3 matrix "
                 "instead of the 3×2 Kᵀ Q.",
        source=H03 + KQ_DEF + '''    return Q.T @ K
''',
    ),
    Wrong(
        id="f-03-kq-floats",
        exercise="key_query_scores",
        cause="The result is converted with `.astype(float)` at the end, which turns the exact "
              "Fractions into floats; return the object array of Fractions that `K.T @ Q` gives.",
        kind="exact values turned into floats",
        wrong_on="K = [[1/3]], Q = [[1]]: returns the float 0.333… instead of Fraction(1, 3).",
        source=H03 + KQ_DEF + '''    scores = K.T @ Q
    return scores.astype(float)
''',
    ),
    Wrong(
        id="f-03-kq-sum-over-tokens",
        exercise="key_query_scores",
        cause="The dot product k_i · q_j sums `for p in range(K.shape[1])`, over the keys' "
              "count T_k; it runs over the features, the rows: `range(K.shape[0])` (d_k).",
        kind="loop bound from the wrong axis",
        wrong_on="K = [[1, 1], [1, 1], [1, 1]] (d_k = 3, 2 keys) and Q = the same: every score "
                 "comes out 2 instead of 3.",
        source=H03 + KQ_DEF + '''    T_k, T_q = K.shape[1], Q.shape[1]
    out = np.empty((T_k, T_q), dtype=object)
    for i in range(T_k):
        for j in range(T_q):
            out[i, j] = sum((K[p, i] * Q[p, j] for p in range(K.shape[1])), Fraction(0))
    return out
''',
    ),
]

# ------------------------------------------------------------------ lesson 03: floor_half
WRONG += [
    Wrong(
        id="f-03-floor-int-truncates",
        exercise="floor_half",
        cause="`int(s / 2)` rounds toward zero, so -1/2 becomes 0 (and -3/2 becomes -1); the "
              "floor rounds down: `math.floor(s / 2)` (or `s // 2`).",
        kind="truncation where the floor belongs",
        wrong_on="S = [[-1]]: returns [[0]] instead of [[-1]].",
        source=H03 + FH_DEF + '''    out = np.empty(S.shape, dtype=object)
    for i in range(S.shape[0]):
        for j in range(S.shape[1]):
            out[i, j] = Fraction(int(S[i, j] / 2))
    return out
''',
    ),
    Wrong(
        id="f-03-floor-round",
        exercise="floor_half",
        cause="`round(s / 2)` rounds to the nearest whole number (halves to even), so 3/2 "
              "becomes 2; the stand-in is the floor, `math.floor(s / 2)`.",
        kind="round where the floor belongs",
        wrong_on="S = [[3]]: returns [[2]] instead of [[1]].",
        source=H03 + FH_DEF + '''    return np.array([[Fraction(round(s / 2)) for s in row] for row in S], dtype=object)
''',
    ),
    Wrong(
        id="f-03-floor-before-halving",
        exercise="floor_half",
        cause="The floor is taken of s and the result halved afterwards, `Fraction(math.floor(s)) "
              "/ 2`, so odd scores give halves; halve first, then take the floor: "
              "`math.floor(s / 2)`.",
        kind="operations in the wrong order",
        wrong_on="S = [[3]]: returns [[3/2]] instead of [[1]].",
        source=H03 + FH_DEF + '''    return np.array([[Fraction(math.floor(s)) / 2 for s in row] for row in S], dtype=object)
''',
    ),
]

# ------------------------------------------------------------------ lesson 03: softmax3_columns
WRONG += [
    Wrong(
        id="f-03-sm3-int-powers-give-floats",
        exercise="softmax3_columns",
        cause="The powers are written `3 ** S` with the int 3: for a non-negative exponent that "
              "gives a Python int, and an int divided by an int sum is a float, so the weights "
              "are inexact floats; raise `Fraction(3)` to each `int(s)`, entry by entry.",
        kind="exact values turned into floats",
        wrong_on="S = [[0], [2]]: returns the floats [0.1, 0.9] instead of Fraction(1, 10) and "
                 "Fraction(9, 10).",
        source=H03 + S3_DEF + '''    P = 3 ** S
    return P / P.sum(axis=0, keepdims=True)
''',
    ),
    Wrong(
        id="f-03-sm3-normalise-rows",
        exercise="softmax3_columns",
        cause="The powers are divided by `P.sum(axis=1, keepdims=True)`, the row sums; each "
              "column is one query's weights, so divide by the column sums, `axis=0`.",
        kind="normalised along the wrong axis",
        wrong_on="S = [[0, 1], [0, 0]]: returns [[1/4, 3/4], [1/2, 1/2]] instead of "
                 "[[1/2, 3/4], [1/2, 1/4]].",
        source=H03 + S3_DEF + '''    P = np.array([[Fraction(3) ** int(s) for s in row] for row in S], dtype=object)
    return P / P.sum(axis=1, keepdims=True)
''',
    ),
    Wrong(
        id="f-03-sm3-total-sum",
        exercise="softmax3_columns",
        cause="The powers are divided by `P.sum()`, the sum of the whole matrix, so the columns "
              "together add up to 1; divide each column by its own sum, `P.sum(axis=0, "
              "keepdims=True)`.",
        kind="reduction over every axis",
        wrong_on="S = [[0, 0], [0, 0]]: every weight comes out 1/4 instead of 1/2.",
        source=H03 + S3_DEF + '''    P = np.array([[Fraction(3) ** int(s) for s in row] for row in S], dtype=object)
    return P / P.sum()
''',
    ),
    Wrong(
        id="f-03-sm3-base-and-exponent-swapped",
        exercise="softmax3_columns",
        cause="Each power is written `s ** 3`, the cube of the score, instead of `3 ** s`; the "
              "stand-in for e^s raises 3 to the score: `Fraction(3) ** int(s)`.",
        kind="base and exponent swapped",
        wrong_on="S = [[0], [1]]: the powers are 0 and 1, giving weights [0, 1] instead of "
                 "[1/4, 3/4].",
        source=H03 + S3_DEF + '''    P = np.array([[Fraction(s) ** 3 for s in row] for row in S], dtype=object)
    return P / P.sum(axis=0, keepdims=True)
''',
    ),
]

# ------------------------------------------------------------------ lesson 03: attention_by_hand
ABH_SRC = H03 + HELPERS_03 + ABH_DEF
WRONG += [
    Wrong(
        id="f-03-abh-scores-args-swapped",
        exercise="attention_by_hand",
        cause="`key_query_scores(Q, K)` passes the queries where the keys belong, so the "
              "scores are Qᵀ K (query i in row i) and A and Z follow from them; call "
              "`key_query_scores(K, Q)`.",
        kind="arguments swapped",
        wrong_on="The published worksheet (X, W_Q, W_K, W_V of the lesson): the scores come out "
                 "transposed ([0, 1] is 6 instead of 1), and A and Z are wrong too.",
        source=ABH_SRC + '''    Q, K, V = W_Q @ X, W_K @ X, W_V @ X
    scores = key_query_scores(Q, K)
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    Z = V @ A
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
''',
    ),
    Wrong(
        id="f-03-abh-softmax-of-unscaled",
        exercise="attention_by_hand",
        cause="`scaled` is computed but A is built with `softmax3_columns(scores)`, from the "
              "scores before the floor; the weights come from the scaled scores: "
              "`softmax3_columns(scaled)`.",
        kind="wrong variable passed on",
        wrong_on="The published worksheet: column 1 of A is 3^(3, 6, 0, 1) normalised, "
                 "[27/760, 729/760, …], instead of [3/32, 27/32, 1/32, 1/32]; Z follows.",
        source=ABH_SRC + '''    Q = W_Q @ X
    K = W_K @ X
    V = W_V @ X
    scores = key_query_scores(K, Q)
    scaled = floor_half(scores)
    A = softmax3_columns(scores)
    Z = V @ A
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
''',
    ),
    Wrong(
        id="f-03-abh-K-from-W_Q",
        exercise="attention_by_hand",
        cause="The keys are computed as `W_Q @ X` (the query line copied); they are `W_K @ X`.",
        kind="wrong weight matrix (copy-paste)",
        wrong_on="The published worksheet: K comes out equal to Q ([[2, 1, 1, 1], …]) instead of "
                 "[[1, 2, 0, 0], [0, 1, -1, 1], [1, 1, 1, 0]], and every later step is wrong.",
        source=ABH_SRC + '''    Q = W_Q @ X
    K = W_Q @ X
    V = W_V @ X
    scores = key_query_scores(K, Q)
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": V @ A}
''',
    ),
    Wrong(
        id="f-03-abh-Z-uses-A-transposed",
        exercise="attention_by_hand",
        cause="The output is `V @ A.T`, so column j of Z mixes the values with row j of A; "
              "query j's weights are column j of A, so Z = V A with no transpose.",
        kind="transpose added",
        wrong_on="The published worksheet: Z[0, 0] comes out 153/224 instead of 3/16.",
        source=ABH_SRC + '''    Q, K, V = W_Q @ X, W_K @ X, W_V @ X
    scores = key_query_scores(K, Q)
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    Z = V @ A.T
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
''',
    ),
]

# ------------------------------------------------------------------ lesson 03: row_convention_attention
ROW_SRC = H03 + HELPERS_03 + ROW_DEF
WRONG += [
    Wrong(
        id="f-03-rows-softmax-down-columns",
        exercise="row_convention_attention",
        cause="A is `softmax3_columns(scaled)`, normalised down the columns as in the column "
              "convention; with tokens as rows each query is a row, so normalise the rows: "
              "`softmax3_columns(scaled.T).T`.",
        kind="normalised along the wrong axis",
        wrong_on="The published worksheet given as rows (X.T): A's columns sum to 1 but its rows "
                 "do not, and Z = A V is wrong too.",
        source=ROW_SRC + '''    Q = X_rows @ W_Q.T
    K = X_rows @ W_K.T
    V = X_rows @ W_V.T
    scores = Q @ K.T
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    Z = A @ V
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
''',
    ),
    Wrong(
        id="f-03-rows-scores-KQt",
        exercise="row_convention_attention",
        cause="The scores are `K @ Q.T`, key i in row i, as in the column convention; with "
              "tokens as rows the scores are `Q @ K.T`, query i in row i.",
        kind="operands swapped (transposed result)",
        wrong_on="The published worksheet given as rows: scores[0, 1] comes out 1 instead of 6 "
                 "(the scores are transposed), and A and Z follow.",
        source=ROW_SRC + '''    Q = X_rows @ W_Q.T
    K = X_rows @ W_K.T
    V = X_rows @ W_V.T
    scores = K @ Q.T
    scaled = floor_half(scores)
    A = softmax3_columns(scaled.T).T
    Z = A @ V
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
''',
    ),
    Wrong(
        id="f-03-rows-V-with-W_Q",
        exercise="row_convention_attention",
        cause="The values are projected with `W_Q.T` (the query line copied); they use the "
              "value weights: `V = X_rows @ W_V.T`.",
        kind="wrong weight matrix (copy-paste)",
        wrong_on="The published worksheet given as rows: V comes out equal to Q and Z is wrong.",
        source=ROW_SRC + '''    Q = X_rows @ W_Q.T
    K = X_rows @ W_K.T
    V = X_rows @ W_Q.T
    scores = Q @ K.T
    scaled = floor_half(scores)
    A = softmax3_columns(scaled.T).T
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": A @ V}
''',
    ),
    Wrong(
        id="f-03-rows-Z-column-layout",
        exercise="row_convention_attention",
        cause="Z is computed as `V.T @ A.T`, which is (A V)ᵀ, the column-convention layout with "
              "one column per token; in the row convention Z = A V, one row per token.",
        kind="result left in the other layout (transposed)",
        wrong_on="The published worksheet given as rows: Z is 3×4 instead of 4×3.",
        source=ROW_SRC + '''    Q = X_rows @ W_Q.T
    K = X_rows @ W_K.T
    V = X_rows @ W_V.T
    scores = Q @ K.T
    scaled = floor_half(scores)
    A = softmax3_columns(scaled.T).T
    Z = V.T @ A.T
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
''',
    ),
]

# ================================================================== lesson 04
H04 = '''import numpy as np
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

'''
H04T = '''import numpy as np
import torch
import torch.nn.functional as F
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

'''
CM_DEF = '''def causal_mask(T):
    """[T, T] boolean mask: True where key j <= query i."""
    T = positive_int(T, "T")
'''
CM_OK = CM_DEF + '''    return np.tril(np.ones((T, T), dtype=bool))
'''
PM_DEF = '''def padding_mask(lengths, T):
    """[B, T] boolean mask: True at the real tokens of each sentence, False at its padding."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
'''
PM_OK = PM_DEF + '''    return np.arange(T)[None, :] < lengths[:, None]
'''
AM_DEF = '''def attention_mask(lengths, T, causal=True):
    """[B, T, T] boolean mask: key padding, combined with the causal mask if causal=True."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    if not isinstance(causal, (bool, np.bool_)):
        raise ValueError(f"causal must be True or False, got {causal!r}")
'''
MS_DEF = '''def masked_softmax(scores, mask):
    """Softmax over the last axis with masked scores set to -inf first.

    mask: boolean, True = may attend, broadcasts to scores. A row with no allowed key
    returns zeros, never NaN.
    """
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
'''
MS_OK = MS_DEF + '''    masked = np.where(mask, scores, -np.inf)
    m = masked.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)          # a row with no allowed key: shift by 0
    e = np.exp(masked - m)                        # exp(-inf) = 0
    total = e.sum(axis=-1, keepdims=True)
    return np.where(total > 0, e / np.where(total > 0, total, 1.0), 0.0)
'''
MA_DEF = '''def masked_attention(Q, K, V, mask=None):
    """Scaled dot-product attention with a boolean mask (True = may attend).

    Q: [..., T_q, d_k], K: [..., T_k, d_k], V: [..., T_k, d_v]; mask broadcasts to
    [..., T_q, T_k]. Returns (output [..., T_q, d_v], weights [..., T_q, T_k]).
    """
    Q, K, V = as_array(Q, "Q", min_ndim=2), as_array(K, "K", min_ndim=2), as_array(V, "V", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share d_k, got shapes {Q.shape} and {K.shape}")
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V must have the same number of keys, got {K.shape} and {V.shape}")
    if mask is not None:
        mask = bool_mask(mask)  # must be boolean; masked_softmax checks that it fits the scores
'''
IC_DEF = '''def is_causal(attend, T, d, seed=0):
    """True if changing tokens after position t never changes outputs 0..t of attend."""
    if not callable(attend):
        raise ValueError(f"attend must be a function of X [T, d], got {type(attend).__name__}")
    T, d = positive_int(T, "T"), positive_int(d, "d")
    rng = np.random.default_rng(seed)
'''
CMC_DEF = '''def causal_mask_columns(T):
    """[T, T] causal mask with tokens as columns: entry [i, j] (key i, query j) is True where i <= j."""
    T = positive_int(T, "T")
'''
MHA_DEF = '''def to_mha_key_padding_mask(lengths, T):
    """torch.bool tensor [B, T] for nn.MultiheadAttention's key_padding_mask: True = ignore."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
'''
PA_DEF = '''def prefix_average(X):
    """Row i of the result is the mean of rows 0..i of X, computed as W @ X."""
    X = as_array(X, "X", min_ndim=2)
'''

# ------------------------------------------------------------------ lesson 04: causal_mask
WRONG += [
    Wrong(
        id="f-04-causal-triu",
        exercise="causal_mask",
        cause="`np.triu` keeps the upper triangle, where key j >= query i: each query sees the "
              "future instead of the past; the row convention's causal mask is the lower "
              "triangle, `np.tril`.",
        kind="wrong triangle (triu for tril)",
        wrong_on="T = 2: returns [[True, True], [False, True]] instead of [[True, False], "
                 "[True, True]].",
        source=H04 + CM_DEF + '''    return np.triu(np.ones((T, T), dtype=bool))
''',
    ),
    Wrong(
        id="f-04-causal-diagonal-excluded",
        exercise="causal_mask",
        cause="`np.tril(..., k=-1)` starts one diagonal below the main one, so no token may see "
              "itself; the diagonal belongs to the mask (j <= i): use `k=0`.",
        kind="diagonal offset off by one",
        wrong_on="T = 1: returns [[False]] instead of [[True]] (query 0 sees nothing).",
        source=H04 + CM_DEF + '''    return np.tril(np.ones((T, T), dtype=bool), k=-1)
''',
    ),
    Wrong(
        id="f-04-causal-one-step-ahead",
        exercise="causal_mask",
        cause="The comparison `j <= i + 1` lets each query see one token after itself; the rule "
              "is `j <= i`.",
        kind="comparison off by one",
        wrong_on="T = 2: entry [0, 1] is True (query 0 sees key 1) instead of False.",
        source=H04 + CM_DEF + '''    i = np.arange(T)[:, None]
    j = np.arange(T)[None, :]
    return j <= i + 1
''',
    ),
    Wrong(
        id="f-04-causal-int-dtype",
        exercise="causal_mask",
        cause="`np.tril(np.ones((T, T), dtype=int))` gives a matrix of 0s and 1s, not a boolean "
              "mask; `np.where(mask, ...)` and `~mask` read ints differently. Make it "
              "`dtype=bool`.",
        kind="numbers where a boolean mask belongs",
        wrong_on="T = 2: returns the int array [[1, 0], [1, 1]] instead of a bool array.",
        source=H04 + CM_DEF + '''    return np.tril(np.ones((T, T), dtype=int))
''',
    ),
]

# ------------------------------------------------------------------ lesson 04: padding_mask
WRONG += [
    Wrong(
        id="f-04-pad-less-equal",
        exercise="padding_mask",
        cause="The comparison is `positions <= lengths`, so position `lengths[b]`, the first "
              "padding token, is marked real; positions 0..lengths[b]-1 are real: use `<`.",
        kind="<= where < belongs (off by one)",
        wrong_on="lengths = [2], T = 3: returns [[True, True, True]] instead of "
                 "[[True, True, False]].",
        source=H04 + PM_DEF + '''    positions = np.arange(T)[None, :]
    return positions <= lengths[:, None]
''',
    ),
    Wrong(
        id="f-04-pad-transposed",
        exercise="padding_mask",
        cause="The positions are the column (`np.arange(T)[:, None]`) and the lengths the row "
              "(`lengths[None, :]`), which builds a [T, B] grid; the result is [B, T]: positions "
              "along the row, `np.arange(T)[None, :] < lengths[:, None]`.",
        kind="broadcast axes swapped (transposed result)",
        wrong_on="lengths = [3, 2], T = 3: returns a 3×2 array instead of 2×3.",
        source=H04 + PM_DEF + '''    return np.arange(T)[:, None] < lengths[None, :]
''',
    ),
    Wrong(
        id="f-04-pad-no-column",
        exercise="padding_mask",
        cause="`np.arange(T) < lengths` compares two 1-D arrays entry by entry; the lengths must "
              "be a column, `lengths[:, None]`, so broadcasting builds the [B, T] grid.",
        kind="[:, None] left out (broadcasting)",
        wrong_on="lengths = [3, 2], T = 3: raises a broadcasting error instead of returning a "
                 "2×3 mask (and lengths = [1], T = 3 gives shape (3,) instead of (1, 3)).",
        source=H04 + PM_DEF + '''    return np.arange(T) < lengths
''',
    ),
    Wrong(
        id="f-04-pad-inverted",
        exercise="padding_mask",
        cause="`positions >= lengths` is True at the padding; this mask is True at the real "
              "tokens (True = may attend): `positions < lengths`.",
        kind="mask polarity inverted",
        wrong_on="lengths = [2], T = 3: returns [[False, False, True]] instead of "
                 "[[True, True, False]].",
        source=H04 + PM_DEF + '''    positions = np.arange(T)[None, :]
    return positions >= lengths[:, None]
''',
    ),
]

# ------------------------------------------------------------------ lesson 04: attention_mask
AM_HELPERS = CM_OK + "\n\n" + PM_OK + "\n\n"
WRONG += [
    Wrong(
        id="f-04-am-pads-query-rows",
        exercise="attention_mask",
        cause="The padding is inserted as `padding[:, :, None]`, shape [B, T, 1], which blanks "
              "the `<pad>` token's own row (the query) instead of its column; padding hides "
              "keys: `padding[:, None, :]`.",
        kind="mask broadcast along the wrong axis",
        wrong_on="lengths = [1], T = 2, causal=False: returns [[[True, True], [False, False]]] "
                 "instead of [[[True, False], [True, False]]].",
        source=H04 + AM_HELPERS + AM_DEF + '''    pad = padding_mask(lengths, T)[:, :, None]
    mask = np.broadcast_to(pad, (len(lengths), T, T))
    if causal:
        mask = mask & causal_mask(T)[None, :, :]
    return np.array(mask)
''',
    ),
    Wrong(
        id="f-04-am-or-instead-of-and",
        exercise="attention_mask",
        cause="The padding and causal masks are combined with `|`, so a pair is allowed when "
              "either allows it; a pair may attend only if both allow it: `&`.",
        kind="| where & belongs",
        wrong_on="lengths = [2], T = 2, causal=True: entry [0, 0, 1] is True (query 0 sees the "
                 "future key 1) instead of False.",
        source=H04 + AM_HELPERS + AM_DEF + '''    pad = padding_mask(lengths, T)[:, None, :]
    if causal:
        return pad | causal_mask(T)[None, :, :]
    return np.broadcast_to(pad, (len(lengths), T, T)).copy()
''',
    ),
    Wrong(
        id="f-04-am-not-broadcast-without-causal",
        exercise="attention_mask",
        cause="With `causal=False` the function returns `padding[:, None, :]` as it is, shape "
              "[B, 1, T]; the result is [B, T, T] in both cases: broadcast it to that shape "
              "(e.g. `np.broadcast_to(..., (B, T, T)).copy()` or `& np.ones((T, T), bool)`).",
        kind="axis of length 1 not broadcast",
        wrong_on="lengths = [2, 1], T = 2, causal=False: returns shape (2, 1, 2) instead of "
                 "(2, 2, 2).",
        source=H04 + AM_HELPERS + AM_DEF + '''    pad = padding_mask(lengths, T)[:, None, :]
    if causal:
        return pad & causal_mask(T)[None, :, :]
    return pad
''',
    ),
    Wrong(
        id="f-04-am-causal-flag-ignored",
        exercise="attention_mask",
        cause="The causal mask is always combined, whatever `causal` says; combine it only "
              "`if causal:` and return the padding mask alone for `causal=False`.",
        kind="parameter ignored",
        wrong_on="lengths = [2], T = 2, causal=False: entry [0, 0, 1] is False instead of True.",
        source=H04 + AM_HELPERS + AM_DEF + '''    pad = padding_mask(lengths, T)[:, None, :]
    return pad & causal_mask(T)[None, :, :]
''',
    ),
]

# ------------------------------------------------------------------ lesson 04: masked_softmax
WRONG += [
    Wrong(
        id="f-04-ms-fill-minus-1e9",
        exercise="masked_softmax",
        cause="Masked scores are set to -1e9 instead of -inf; in a row where every key is "
              "masked all scores are then equal and the weight is spread evenly over forbidden "
              "keys. Use -inf and give such a row zeros.",
        kind="-1e9 where -inf belongs",
        wrong_on="scores = [[1, 2]], mask = [[False, False]]: returns [[0.5, 0.5]] instead of "
                 "[[0, 0]].",
        source=H04 + MS_DEF + '''    masked = np.where(mask, scores, -1e9)
    e = np.exp(masked - masked.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
''',
    ),
    Wrong(
        id="f-04-ms-mask-inverted",
        exercise="masked_softmax",
        cause="`np.where(mask, -np.inf, scores)` puts -inf where the mask is True; True means "
              "may attend, so keep the score there and put -inf where it is False: "
              "`np.where(mask, scores, -np.inf)`.",
        kind="mask polarity inverted",
        wrong_on="scores = [[1, 2]], mask = [[True, False]]: returns [[0, 1]] instead of "
                 "[[1, 0]].",
        source=H04 + MS_DEF + '''    masked = np.where(mask, -np.inf, scores)
    m = masked.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(masked - m)
    total = e.sum(axis=-1, keepdims=True)
    return np.where(total > 0, e / np.where(total > 0, total, 1.0), 0.0)
''',
    ),
    Wrong(
        id="f-04-ms-empty-row-nan",
        exercise="masked_softmax",
        cause="A row with no allowed key has max -inf, `-inf - (-inf)` is NaN and the whole row "
              "comes out NaN; such a row must return zeros (shift it by 0 instead, or replace "
              "its weights with 0).",
        kind="fully masked row not handled",
        wrong_on="scores = [[1, 2]], mask = [[False, False]]: returns [[nan, nan]] instead of "
                 "[[0, 0]].",
        source=H04 + MS_DEF + '''    masked = np.where(mask, scores, -np.inf)
    e = np.exp(masked - masked.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
''',
    ),
    Wrong(
        id="f-04-ms-mask-after-softmax",
        exercise="masked_softmax",
        cause="The softmax is taken over every score and the mask multiplied in afterwards, so "
              "the allowed weights do not sum to 1 and still depend on the masked scores; set "
              "the masked scores to -inf before the softmax.",
        kind="mask applied after the softmax",
        wrong_on="scores = [[0, 0]], mask = [[True, False]]: returns [[0.5, 0]] instead of "
                 "[[1, 0]].",
        source=H04 + MS_DEF + '''    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights * mask
''',
    ),
    Wrong(
        id="f-04-ms-shift-by-masked-max",
        exercise="masked_softmax",
        cause="The shift is the max of the raw scores, masked keys included, so a huge masked "
              "score makes every allowed exponential underflow to 0 and the row comes out as "
              "zeros; take the max after the masking (of the allowed scores only).",
        kind="stabilising max taken before the mask",
        wrong_on="scores = [[0, 1, 900]], mask = [[True, True, False]]: returns [[0, 0, 0]] "
                 "instead of [[0.269, 0.731, 0]].",
        source=H04 + MS_DEF + '''    m = scores.max(axis=-1, keepdims=True)
    e = np.where(mask, np.exp(scores - m), 0.0)
    total = e.sum(axis=-1, keepdims=True)
    return np.where(total > 0, e / np.where(total > 0, total, 1.0), 0.0)
''',
    ),
    Wrong(
        id="f-04-ms-torch-softmax",
        exercise="masked_softmax",
        cause="The weights come from `torch.softmax`, a library softmax the exercise does not "
              "accept; write the exponentials and the sum yourself. (The values are right: "
              "this answer breaks the stated rule only.)",
        kind="forbidden call (rule broken, values right)",
        wrong_on="Any input, e.g. scores = [[1, 2]], mask = [[True, True]]: the values are "
                 "right but the function calls torch.softmax.",
        source=H04T + MS_DEF + '''    masked = torch.as_tensor(np.where(mask, scores, -np.inf), dtype=torch.float64)
    weights = torch.softmax(masked, dim=-1).numpy()
    return np.nan_to_num(weights, nan=0.0)
''',
    ),
]

# ------------------------------------------------------------------ lesson 04: masked_attention
MA_SRC = H04 + MS_OK + "\n\n" + MA_DEF
WRONG += [
    Wrong(
        id="f-04-ma-none-mask-shaped-like-Q",
        exercise="masked_attention",
        cause="For `mask=None` the all-True mask is made with `np.ones_like(Q, dtype=bool)`, "
              "shape [..., T_q, d_k]; it must fit the scores, [..., T_q, T_k] (e.g. "
              "`np.ones(scores.shape, dtype=bool)`).",
        kind="default built with the wrong shape",
        wrong_on="Q of shape [2, 4], K of shape [3, 4], V of shape [3, 1], mask=None: raises "
                 "a ValueError (a [2, 4] mask does not fit [2, 3] scores) instead of attending.",
        source=MA_SRC + '''    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is None:
        mask = np.ones_like(Q, dtype=bool)
    weights = masked_softmax(scores, mask)
    return weights @ V, weights
''',
    ),
    Wrong(
        id="f-04-ma-no-scale",
        exercise="masked_attention",
        cause="The scores are `Q @ Kᵀ` without the division by √d_k; divide by "
              "`np.sqrt(Q.shape[-1])` before the masked softmax.",
        kind="scale left out",
        wrong_on="Q = [[1, 1, 1, 1]], K = [[1, 1, 1, 1], [0, 0, 0, 0]], V = [[1], [0]], "
                 "mask=None: the weights are softmax([4, 0]) instead of softmax([2, 0]).",
        source=MA_SRC + '''    scores = Q @ np.swapaxes(K, -1, -2)
    if mask is None:
        mask = np.ones(scores.shape, dtype=bool)
    weights = masked_softmax(scores, mask)
    return weights @ V, weights
''',
    ),
    Wrong(
        id="f-04-ma-none-means-all-masked",
        exercise="masked_attention",
        cause="`mask=None` is turned into `np.zeros(..., dtype=bool)`, which masks every key, so "
              "every weight and output is 0; no mask means every query may attend to every "
              "key: an all-True mask (`np.ones`).",
        kind="default with inverted polarity",
        wrong_on="Q = K = [[1, 0]], V = [[5]], mask=None: returns output [[0]] and weights "
                 "[[0]] instead of [[5]] and [[1]].",
        source=MA_SRC + '''    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is None:
        mask = np.zeros(scores.shape, dtype=bool)
    weights = masked_softmax(scores, mask)
    return weights @ V, weights
''',
    ),
    Wrong(
        id="f-04-ma-fill-zero",
        exercise="masked_attention",
        cause="The masked scores are set to 0 (`np.where(mask, scores, 0)`) and then a plain "
              "softmax is taken, so masked keys keep real weight (0 is an ordinary score); set "
              "them to -inf, or call `masked_softmax(scores, mask)`.",
        kind="0 where -inf belongs",
        wrong_on="Q = K = [[1, 0], [0, 1]], V = identity, mask = causal [[True, False], [True, "
                 "True]]: query 0 gives key 1 a weight of about 0.33 instead of 0.",
        source=MA_SRC + '''    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, 0.0)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights
''',
    ),
]

# ------------------------------------------------------------------ lesson 04: is_causal
WRONG += [
    Wrong(
        id="f-04-ic-replaces-token-t",
        exercise="is_causal",
        cause="The new random rows replace `X[t:]`, token t included, so output t may rightly "
              "change and a causal function is reported as not causal; replace only the tokens "
              "after t, `X[t + 1:]`.",
        kind="slice starts one position early",
        wrong_on="attend = causal masked self-attention (X, X, X with causal_mask), T = 3, "
                 "d = 2: returns False instead of True.",
        source=H04 + IC_DEF + '''    X = rng.normal(size=(T, d))
    before = attend(X)
    for t in range(T):
        X_new = X.copy()
        X_new[t:] = rng.normal(size=(T - t, d))
        after = attend(X_new)
        if not np.allclose(after[:t + 1], before[:t + 1]):
            return False
    return True
''',
    ),
    Wrong(
        id="f-04-ic-compares-before-t-only",
        exercise="is_causal",
        cause="Only outputs `[:t]` are compared, so output t itself is never checked after the "
              "tokens after t change, and a function whose output t reads token t + 1 passes; "
              "compare `after[:t + 1]` with `before[:t + 1]`.",
        kind="slice stops one position early",
        wrong_on="attend(X) = X with row t + 1 added to row t (each output peeks one token "
                 "ahead), T = 4, d = 2: returns True instead of False.",
        source=H04 + IC_DEF + '''    X = rng.normal(size=(T, d))
    before = attend(X)
    for t in range(T):
        X_new = X.copy()
        X_new[t + 1:] = rng.normal(size=(T - t - 1, d))
        after = attend(X_new)
        if not np.allclose(after[:t], before[:t]):
            return False
    return True
''',
    ),
    Wrong(
        id="f-04-ic-changes-X-in-place",
        exercise="is_causal",
        cause="The future tokens are overwritten in X itself (no copy), so the changes pile up: "
              "by step t the tokens up to t were already replaced in earlier steps and the "
              "outputs before t move even for a causal function; change a copy of the original "
              "X at each step (`X_new = X.copy()`).",
        kind="in-place change of the input (.copy() left out)",
        wrong_on="attend = causal masked self-attention, T = 3, d = 2: returns False instead of "
                 "True.",
        source=H04 + IC_DEF + '''    X = rng.normal(size=(T, d))
    before = attend(X)
    for t in range(T):
        X[t + 1:] = rng.normal(size=(T - t - 1, d))
        after = attend(X)
        if not np.allclose(after[:t + 1], before[:t + 1]):
            return False
    return True
''',
    ),
    Wrong(
        id="f-04-ic-returns-after-first-t",
        exercise="is_causal",
        cause="Both `return True` and `return False` are inside the loop, so only t = 0 is ever "
              "tested; return False inside the loop when something moved, and True only after "
              "the loop has tried every t.",
        kind="return inside the loop",
        wrong_on="attend(X) = X with row 2 added to row 1 (output 1 reads token 2), T = 3, "
                 "d = 2: returns True instead of False.",
        source=H04 + IC_DEF + '''    X = rng.normal(size=(T, d))
    before = attend(X)
    for t in range(T):
        X_new = X.copy()
        X_new[t + 1:] = rng.normal(size=(T - t - 1, d))
        after = attend(X_new)
        if np.allclose(after[:t + 1], before[:t + 1]):
            return True
        else:
            return False
''',
    ),
    Wrong(
        id="f-04-ic-skips-t0",
        exercise="is_causal",
        cause="The loop is `for t in range(1, T)`, so the future of position 0 is never changed "
              "on its own (at t = 1 token 1 stays fixed); t runs from 0: `range(T)`.",
        kind="range started one step late",
        wrong_on="attend(X) = X with row 1 added to row 0 (output 0 reads token 1), T = 3, "
                 "d = 2: returns True instead of False.",
        source=H04 + IC_DEF + '''    X = rng.normal(size=(T, d))
    before = attend(X)
    for t in range(1, T):
        X_new = X.copy()
        X_new[t + 1:] = rng.normal(size=(T - t - 1, d))
        after = attend(X_new)
        if not np.allclose(after[:t + 1], before[:t + 1]):
            return False
    return True
''',
    ),
]

# ------------------------------------------------------------------ lesson 04: causal_mask_columns
WRONG += [
    Wrong(
        id="f-04-cmc-tril",
        exercise="causal_mask_columns",
        cause="`np.tril` gives the row convention's mask; with keys as rows and queries as "
              "columns the allowed pairs i <= j are the upper triangle, `np.triu` (the "
              "transpose of the row mask).",
        kind="wrong triangle (tril for triu)",
        wrong_on="T = 2: returns [[True, False], [True, True]] instead of [[True, True], "
                 "[False, True]].",
        source=H04 + CMC_DEF + '''    return np.tril(np.ones((T, T), dtype=bool))
''',
    ),
    Wrong(
        id="f-04-cmc-diagonal-excluded",
        exercise="causal_mask_columns",
        cause="`np.triu(..., k=1)` starts above the diagonal, so no query sees its own key; "
              "i <= j includes i = j: use `k=0`.",
        kind="diagonal offset off by one",
        wrong_on="T = 2: returns [[False, True], [False, False]] instead of [[True, True], "
                 "[False, True]].",
        source=H04 + CMC_DEF + '''    return np.triu(np.ones((T, T), dtype=bool), k=1)
''',
    ),
    Wrong(
        id="f-04-cmc-rows-reversed",
        exercise="causal_mask_columns",
        cause="`causal_mask(T)[::-1]` reverses the order of the rows (a flip), which puts the "
              "triangle in the wrong corner; the column-convention mask is the transpose, "
              "`causal_mask(T).T`.",
        kind="flip where a transpose belongs",
        wrong_on="T = 2: returns [[True, True], [True, False]] instead of [[True, True], "
                 "[False, True]].",
        source=H04 + CM_OK + "\n\n" + CMC_DEF + '''    return causal_mask(T)[::-1]
''',
    ),
]

# ------------------------------------------------------------------ lesson 04: to_mha_key_padding_mask
WRONG += [
    Wrong(
        id="f-04-mha-numpy-array",
        exercise="to_mha_key_padding_mask",
        cause="The function returns the NumPy array `~padding` itself; `key_padding_mask` "
              "needs a `torch.bool` tensor: wrap it with `torch.from_numpy(...)` (or build it "
              "with torch).",
        kind="wrong type (NumPy array for a tensor)",
        wrong_on="lengths = [3, 2], T = 3: returns a numpy.ndarray instead of a torch.bool "
                 "tensor.",
        source=H04T + PM_OK + "\n\n" + MHA_DEF + '''    return ~padding_mask(lengths, T)
''',
    ),
    Wrong(
        id="f-04-mha-not-inverted",
        exercise="to_mha_key_padding_mask",
        cause="The course's padding mask is passed on unchanged, True at the real tokens; "
              "`key_padding_mask` means True = ignore, so it must be True at the padding: "
              "invert it with `~`.",
        kind="mask polarity not inverted",
        wrong_on="lengths = [3, 2], T = 3: returns [[True, True, True], [True, True, False]] "
                 "instead of [[False, False, False], [False, False, True]].",
        source=H04T + PM_OK + "\n\n" + MHA_DEF + '''    return torch.from_numpy(padding_mask(lengths, T))
''',
    ),
    Wrong(
        id="f-04-mha-strict-greater",
        exercise="to_mha_key_padding_mask",
        cause="The padding is found with `positions > lengths`, which misses position "
              "`lengths[b]`, the first padding token; padding starts at the length: use `>=`.",
        kind="> where >= belongs (off by one)",
        wrong_on="lengths = [3, 2], T = 3: position 2 of sentence 1 is False (attended) instead "
                 "of True (ignored).",
        source=H04T + MHA_DEF + '''    positions = torch.arange(T)[None, :]
    return positions > torch.from_numpy(lengths)[:, None]
''',
    ),
    Wrong(
        id="f-04-mha-float-mask",
        exercise="to_mha_key_padding_mask",
        cause="The mask is returned as `.float()`, 1.0 at the padding; torch adds a float "
              "key_padding_mask to the scores instead of ignoring keys, so padding keeps most "
              "of its weight. Return the boolean tensor.",
        kind="numbers where a boolean mask belongs",
        wrong_on="lengths = [3, 2], T = 3: returns a float32 tensor of 0.0/1.0 instead of a "
                 "torch.bool tensor.",
        source=H04T + MHA_DEF + '''    positions = torch.arange(T)[None, :]
    pad = positions >= torch.from_numpy(lengths)[:, None]
    return pad.float()
''',
    ),
]

# ------------------------------------------------------------------ lesson 04: prefix_average
WRONG += [
    Wrong(
        id="f-04-prefix-divide-columns",
        exercise="prefix_average",
        cause="The counts `np.arange(1, T + 1)` are divided in without `[:, None]`, so they "
              "broadcast along the rows and column j is divided by j + 1; row i must be "
              "divided by i + 1: `np.arange(1, T + 1)[:, None]`.",
        kind="[:, None] left out (broadcasting)",
        wrong_on="X = [[2], [4]]: row 1 comes out 2 + 4/2 = 4 instead of the mean 3.",
        source=H04 + PA_DEF + '''    T = X.shape[-2]
    W = np.tril(np.ones((T, T))) / np.arange(1, T + 1)
    return W @ X
''',
    ),
    Wrong(
        id="f-04-prefix-count-from-zero",
        exercise="prefix_average",
        cause="Row i is divided by `np.arange(T)[:, None]`, that is by i, but it holds i + 1 "
              "ones; row 0 is divided by 0 and becomes inf/NaN. Divide by "
              "`np.arange(1, T + 1)[:, None]`.",
        kind="count off by one",
        wrong_on="X = [[2], [4]]: row 0 comes out NaN and row 1 is 6 instead of 2 and 3.",
        source=H04 + PA_DEF + '''    T = X.shape[-2]
    W = np.tril(np.ones((T, T))) / np.arange(T)[:, None]
    return W @ X
''',
    ),
    Wrong(
        id="f-04-prefix-T-from-first-axis",
        exercise="prefix_average",
        cause="T is taken as `X.shape[0]`, which for a batch [B, T, d] is the batch size; the "
              "tokens are the second-to-last axis, `X.shape[-2]`.",
        kind="axis counted from the wrong end",
        wrong_on="X of shape [2, 3, 1]: W is 2×2 and the product raises instead of returning "
                 "[2, 3, 1].",
        source=H04 + PA_DEF + '''    T = X.shape[0]
    W = np.tril(np.ones((T, T)))
    W = W / W.sum(axis=1, keepdims=True)
    return W @ X
''',
    ),
    Wrong(
        id="f-04-prefix-upper-triangle",
        exercise="prefix_average",
        cause="W is built from `np.triu`, so row i averages rows i..T-1 (the future); the "
              "prefix average is lower triangular, `np.tril`.",
        kind="wrong triangle (triu for tril)",
        wrong_on="X = [[2], [4]]: row 0 comes out 3 instead of 2.",
        source=H04 + PA_DEF + '''    T = X.shape[-2]
    W = np.triu(np.ones((T, T)))
    W = W / W.sum(axis=-1, keepdims=True)
    return W @ X
''',
    ),
    Wrong(
        id="f-04-prefix-X-times-W",
        exercise="prefix_average",
        cause="The product is written `X @ W`, which mixes the features (columns) of X; the "
              "average runs over the tokens, the rows: `W @ X`.",
        kind="operands swapped",
        wrong_on="X = [[1, 3], [5, 7]]: row 0 comes out [1 + 1.5, 1.5] = [2.5, 1.5] "
                 "instead of [1, 3]; non-square X raises.",
        source=H04 + PA_DEF + '''    T = X.shape[-2]
    W = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]
    return X @ W
''',
    ),
    Wrong(
        id="f-04-prefix-cumsum",
        exercise="prefix_average",
        cause="The averages come from `np.cumsum`, which the exercise forbids; build the "
              "normalised lower-triangular W and return `W @ X`. (The values are right: this "
              "answer breaks the stated rule only.)",
        kind="forbidden call (rule broken, values right)",
        wrong_on="Any input, e.g. X = [[2], [4]]: the values are right but the function "
                 "calls np.cumsum.",
        source=H04 + PA_DEF + '''    T = X.shape[-2]
    return np.cumsum(X, axis=-2) / np.arange(1, T + 1)[:, None]
''',
    ),
]
