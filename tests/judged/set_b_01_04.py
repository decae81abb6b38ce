"""Held-out wrong answers, set b, lessons 01-04 (tester heldout34b).

Written from the student notebooks, README.md, courseware/ and grader/learner/validation.py
only. Every answer is a complete answer cell (imports, given lines, graded helpers) with one
mistake, checked against an independent computation by verify_set_b_01_04.py.
"""
from typing import NamedTuple


class Wrong(NamedTuple):
    id: str          # short unique id
    exercise: str    # the graded name, as in the notebook's check("name", ...) cell
    cause: str       # the true cause, as a teacher would tell the learner
    kind: str        # a short category
    wrong_on: str    # an input on which it is wrong, and what goes wrong
    source: str      # the whole answer cell(s)


WRONG = []

# ---------------------------------------------------------------- lesson 01
_H01 = "import numpy as np\nfrom grader.learner.validation import matmul_operands, as_array\n\n"

WRONG += [
    Wrong(
        id="b34-01-dot-zeros-like-A",
        exercise="matmul_dot",
        cause="The result array is created with np.zeros_like(A), so it has A's shape n×k instead of n×m; "
              "the loop over j only fills the first m columns and the rest stay 0 (or the write runs past the "
              "end when m > k). Create it as np.zeros((A.shape[0], B.shape[1])).",
        kind="result allocated with the wrong shape",
        wrong_on="A 2×3, B 3×2: returns a 2×3 array whose last column is all zeros instead of the 2×2 product.",
        source=_H01 + '''def matmul_dot(A, B):
    """C[i, j] = row i of A · column j of B, with a Python loop (over i and j: one entry at a time)."""
    A, B = matmul_operands(A, B)
    C = np.zeros_like(A)
    for i in range(A.shape[0]):
        for j in range(B.shape[1]):
            C[i, j] = np.sum(A[i, :] * B[:, j])
    return C
''',
    ),
    Wrong(
        id="b34-01-dot-int-result",
        exercise="matmul_dot",
        cause="The result is allocated with dtype=int, so every float dot product written into it is "
              "truncated toward zero. Allocate a float array (np.zeros((n, m)) is float by default).",
        kind="integer dtype truncates the result",
        wrong_on="A = [[0.5]], B = [[1.0]]: returns [[0]] instead of [[0.5]].",
        source=_H01 + '''def matmul_dot(A, B):
    """C[i, j] = row i of A · column j of B, with a Python loop (over i and j: one entry at a time)."""
    A, B = matmul_operands(A, B)
    n, m = A.shape[0], B.shape[1]
    C = np.zeros((n, m), dtype=int)
    for i in range(n):
        for j in range(m):
            C[i, j] = sum(A[i, :] * B[:, j])
    return C
''',
    ),
    Wrong(
        id="b34-01-dot-ones-init-accumulate",
        exercise="matmul_dot",
        cause="C is started as np.ones and every entry is accumulated with += over p, so each entry ends "
              "up 1 too large. The running sum must start at 0 (np.zeros).",
        kind="wrong initial value of a running sum",
        wrong_on="A = [[1, 2]], B = [[3], [4]]: returns [[12]] instead of [[11]].",
        source=_H01 + '''def matmul_dot(A, B):
    """C[i, j] = row i of A · column j of B, with a Python loop (over i and j: one entry at a time)."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    m = B.shape[1]
    C = np.ones((n, m))
    for i in range(n):
        for j in range(m):
            for p in range(k):
                C[i, j] += A[i, p] * B[p, j]
    return C
''',
    ),
    Wrong(
        id="b34-01-dot-uses-np-dot",
        exercise="matmul_dot",
        cause="Each entry is computed with np.dot(A[i], B[:, j]), one of the calls this exercise forbids; "
              "the values are right but the rule is broken. Use np.sum(A[i, :] * B[:, j]) instead.",
        kind="forbidden call (rule broken, values right)",
        wrong_on="Any input: the values equal A @ B, but the code calls np.dot, which the exercise forbids.",
        source=_H01 + '''def matmul_dot(A, B):
    """C[i, j] = row i of A · column j of B, with a Python loop (over i and j: one entry at a time)."""
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]))
    for i in range(A.shape[0]):
        for j in range(B.shape[1]):
            C[i, j] = np.dot(A[i], B[:, j])
    return C
''',
    ),
    Wrong(
        id="b34-01-rows-accumulator-outside-loop",
        exercise="matmul_rows",
        cause="The accumulator row = np.zeros(m) is created once, before the loop over i, so row i of the "
              "result also contains the sums of all earlier rows. Reset it to zeros at the start of each i.",
        kind="statement moved out of a loop (running sum not reset)",
        wrong_on="A = [[1, 0], [0, 1]], B = [[1, 2], [3, 4]]: row 1 comes out [4, 6] instead of [3, 4].",
        source=_H01 + '''def matmul_rows(A, B):
    """Row i of C = sum over p of A[i, p] * (row p of B), with a Python loop (over i and p)."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    C = np.zeros((n, B.shape[1]))
    row = np.zeros(B.shape[1])
    for i in range(n):
        for p in range(k):
            row += A[i, p] * B[p, :]
        C[i, :] = row
    return C
''',
    ),
    Wrong(
        id="b34-01-rows-weight-index-swapped",
        exercise="matmul_rows",
        cause="The weight is taken as A[p, i] instead of A[i, p], i.e. from column i of A rather than row i, "
              "so the rows of B are mixed with the wrong weights (and the index runs off A when n ≠ k). "
              "Use A[i, p].",
        kind="indices swapped",
        wrong_on="A = [[1, 2], [3, 4]], B = identity 2×2: returns [[1, 3], [2, 4]] (Aᵀ) instead of A.",
        source=_H01 + '''def matmul_rows(A, B):
    """Row i of C = sum over p of A[i, p] * (row p of B), with a Python loop (over i and p)."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    C = np.zeros((n, B.shape[1]))
    for i in range(n):
        for p in range(k):
            C[i, :] += A[p, i] * B[p, :]
    return C
''',
    ),
    Wrong(
        id="b34-01-rows-assign-not-add",
        exercise="matmul_rows",
        cause="Inside the loop over p the row is assigned with = instead of added with +=, so only the last "
              "term A[i, k-1] * B[k-1] survives. Accumulate: C[i] += A[i, p] * B[p].",
        kind="assignment instead of accumulation",
        wrong_on="A = [[1, 1]], B = [[1, 0], [0, 1]]: returns [[0, 1]] instead of [[1, 1]].",
        source=_H01 + '''def matmul_rows(A, B):
    """Row i of C = sum over p of A[i, p] * (row p of B), with a Python loop (over i and p)."""
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]))
    for i in range(A.shape[0]):
        for p in range(A.shape[1]):
            C[i] = A[i, p] * B[p]
    return C
''',
    ),
    Wrong(
        id="b34-01-cols-weight-index-swapped",
        exercise="matmul_cols",
        cause="The weight of column p of A is read as B[j, p] instead of B[p, j] (row j of B rather than "
              "column j), so the columns of A are mixed with Bᵀ's weights. Use B[p, j].",
        kind="indices swapped",
        wrong_on="A = identity 2×2, B = [[1, 2], [3, 4]]: returns Bᵀ = [[1, 3], [2, 4]] instead of B.",
        source=_H01 + '''def matmul_cols(A, B):
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
        id="b34-01-cols-row-of-A",
        exercise="matmul_cols",
        cause="The loop adds B[p, j] * A[p, :], a row of A, where the column A[:, p] belongs; on square "
              "inputs this mixes the rows of A (giving (Aᵀ B)) and otherwise the shapes clash. Use A[:, p].",
        kind="row taken where a column belongs",
        wrong_on="A = [[1, 2], [3, 4]], B = identity: returns Aᵀ = [[1, 3], [2, 4]] instead of A.",
        source=_H01 + '''def matmul_cols(A, B):
    """Column j of C = sum over p of B[p, j] * (column p of A), with a Python loop (over j and p)."""
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]))
    for j in range(B.shape[1]):
        for p in range(A.shape[1]):
            C[:, j] += B[p, j] * A[p, :]
    return C
''',
    ),
    Wrong(
        id="b34-01-cols-p-range-rows-of-A",
        exercise="matmul_cols",
        cause="The inner loop runs over range(A.shape[0]) (n, the rows of A) instead of range(A.shape[1]) "
              "(k, the shared axis), so when n < k the last columns of A are never added, and when n > k "
              "the index runs off A. Loop p over k = A.shape[1].",
        kind="loop bound from the wrong axis",
        wrong_on="A = [[1, 2, 3]], B = [[1], [1], [1]]: returns [[1]] instead of [[6]] (only p = 0 is added, since n = 1).",
        source=_H01 + '''def matmul_cols(A, B):
    """Column j of C = sum over p of B[p, j] * (column p of A), with a Python loop (over j and p)."""
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]))
    for j in range(B.shape[1]):
        for p in range(A.shape[0]):
            C[:, j] = C[:, j] + B[p, j] * A[:, p]
    return C
''',
    ),
    Wrong(
        id="b34-01-outer-rows-of-A",
        exercise="matmul_outer",
        cause="The rank-1 terms use np.outer(A[p], B[p]), row p of A, where column p of A (A[:, p]) "
              "belongs; on square inputs this sums to Aᵀ B, otherwise the shapes clash. Use np.outer(A[:, p], B[p, :]).",
        kind="row taken where a column belongs",
        wrong_on="A = [[1, 2], [3, 4]], B = identity: returns Aᵀ instead of A.",
        source=_H01 + '''def matmul_outer(A, B):
    """C = sum over p of the outer product of column p of A and row p of B, with a Python loop (over p)."""
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]))
    for p in range(A.shape[1]):
        C += np.outer(A[p], B[p])
    return C
''',
    ),
    Wrong(
        id="b34-01-outer-operands-swapped",
        exercise="matmul_outer",
        cause="The outer product is written np.outer(B[p, :], A[:, p]) with its operands swapped, which is "
              "the transpose of each term, so the sum is (AB)ᵀ of shape m×n. Write np.outer(A[:, p], B[p, :]).",
        kind="arguments swapped (transposed result)",
        wrong_on="A 2×3, B 3×4 (any values): returns a 4×2 array, the transpose of the 2×4 product.",
        source=_H01 + '''def matmul_outer(A, B):
    """C = sum over p of the outer product of column p of A and row p of B, with a Python loop (over p)."""
    A, B = matmul_operands(A, B)
    C = 0
    for p in range(A.shape[1]):
        C = C + np.outer(B[p, :], A[:, p])
    return C
''',
    ),
    Wrong(
        id="b34-01-outer-elementwise-no-newaxis",
        exercise="matmul_outer",
        cause="The term is written A[:, p] * B[p, :] with no [:, None] on the column, so NumPy multiplies "
              "the two vectors entry by entry (when n = m) and the vector is broadcast over every row of C, "
              "instead of forming the n×m outer product. Write A[:, p, None] * B[None, p, :] (or np.outer).",
        kind="missing [:, None] (broadcasting mistake)",
        wrong_on="A = [[1, 0], [0, 1]], B = [[1, 2], [3, 4]]: returns [[1, 4], [1, 4]] instead of [[1, 2], [3, 4]].",
        source=_H01 + '''def matmul_outer(A, B):
    """C = sum over p of the outer product of column p of A and row p of B, with a Python loop (over p)."""
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]))
    for p in range(A.shape[1]):
        C += A[:, p] * B[p, :]
    return C
''',
    ),
    Wrong(
        id="b34-01-batched-np-dot",
        exercise="batched_matmul",
        cause="np.dot on arrays with more than two axes does not pair batch items: it sums the last axis of A "
              "against the second-to-last of B for every combination of batch items, giving shape "
              "[b, n, b, m]. Use A @ B (np.matmul), which treats leading axes as batch axes.",
        kind="np.dot instead of np.matmul on batches",
        wrong_on="A and B of shape [2, 3, 3]: returns shape [2, 3, 2, 3] instead of [2, 3, 3].",
        source=_H01 + '''def batched_matmul(A, B):
    """[..., n, k] @ [..., k, m] -> [..., n, m] for every batch item, with no Python loop.

    The batch axes broadcast: [n, k] times [b, k, m] gives [b, n, m].
    """
    A = as_array(A, "A", min_ndim=2)
    B = as_array(B, "B", min_ndim=2)
    if A.shape[-1] != B.shape[-2]:
        raise ValueError(f"A has {A.shape[-1]} columns but B has {B.shape[-2]} rows "
                         f"(shapes {A.shape} and {B.shape})")
    return np.dot(A, B)
''',
    ),
    Wrong(
        id="b34-01-batched-einsum-fixed-3d",
        exercise="batched_matmul",
        cause="The einsum spec 'bnk,bkm->bnm' hard-codes exactly one batch axis on both inputs, so a plain "
              "[n, k] matrix times a [b, k, m] stack (or 2-D inputs, or two batch axes) raises instead of "
              "broadcasting. Use '...nk,...km->...nm' or simply A @ B.",
        kind="hard-coded number of axes",
        wrong_on="A of shape [3, 4] and B of shape [2, 4, 5]: raises ValueError instead of returning shape [2, 3, 5].",
        source=_H01 + '''def batched_matmul(A, B):
    """[..., n, k] @ [..., k, m] -> [..., n, m] for every batch item, with no Python loop.

    The batch axes broadcast: [n, k] times [b, k, m] gives [b, n, m].
    """
    A = as_array(A, "A", min_ndim=2)
    B = as_array(B, "B", min_ndim=2)
    if A.shape[-1] != B.shape[-2]:
        raise ValueError(f"A has {A.shape[-1]} columns but B has {B.shape[-2]} rows "
                         f"(shapes {A.shape} and {B.shape})")
    return np.einsum("bnk,bkm->bnm", A, B)
''',
    ),
    Wrong(
        id="b34-01-batched-broadcast-sum-wrong-axis",
        exercise="batched_matmul",
        cause="The broadcast product A[..., :, :, None] * B[..., None, :, :] has axes [..., n, k, m], and the "
              "sum is taken over axis -3 (n) instead of axis -2 (k), the shared axis. Sum over axis=-2.",
        kind="reduction over the wrong axis",
        wrong_on="A = [[1, 2], [3, 4]], B = identity: returns [[4, 0], [0, 6]] (A's column sums on the diagonal) instead of A.",
        source=_H01 + '''def batched_matmul(A, B):
    """[..., n, k] @ [..., k, m] -> [..., n, m] for every batch item, with no Python loop.

    The batch axes broadcast: [n, k] times [b, k, m] gives [b, n, m].
    """
    A = as_array(A, "A", min_ndim=2)
    B = as_array(B, "B", min_ndim=2)
    if A.shape[-1] != B.shape[-2]:
        raise ValueError(f"A has {A.shape[-1]} columns but B has {B.shape[-2]} rows "
                         f"(shapes {A.shape} and {B.shape})")
    return (A[..., :, :, None] * B[..., None, :, :]).sum(axis=-3)
''',
    ),
    Wrong(
        id="b34-01-einsum-no-ellipsis",
        exercise="einsum_scores",
        cause="The spec 'qd,kd->qk' has no leading '...', so it accepts only 2-D Q and K and raises for any "
              "batch axes. Write '...qd,...kd->...qk'.",
        kind="batch axes not carried (missing ...)",
        wrong_on="Q and K of shape [2, 3, 4]: raises ValueError instead of returning shape [2, 3, 3].",
        source=_H01 + '''def einsum_scores(Q, K):
    """Q Kᵀ for every batch item: [..., T_q, d] and [..., T_k, d] -> [..., T_q, T_k].

    Use np.einsum: one call does it, with no loop and no other product.
    """
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share their last axis, got {Q.shape} and {K.shape}")
    return np.einsum("qd,kd->qk", Q, K)
''',
    ),
    Wrong(
        id="b34-01-einsum-implicit-output-order",
        exercise="einsum_scores",
        cause="The spec '...qd,...kd' has no '->' part, so einsum's implicit mode orders the output letters "
              "alphabetically, k before q, and returns [..., T_k, T_q], the transpose. Give the output "
              "explicitly: '...qd,...kd->...qk'.",
        kind="einsum implicit mode (output axes in alphabetical order)",
        wrong_on="Q = [[1, 0]], K = [[1, 0], [0, 1]]: returns shape [2, 1] instead of [[1, 0]] of shape [1, 2].",
        source=_H01 + '''def einsum_scores(Q, K):
    """Q Kᵀ for every batch item: [..., T_q, d] and [..., T_k, d] -> [..., T_q, T_k].

    Use np.einsum: one call does it, with no loop and no other product.
    """
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share their last axis, got {Q.shape} and {K.shape}")
    return np.einsum("...qd,...kd", Q, K)
''',
    ),
    Wrong(
        id="b34-01-einsum-matmul-pattern",
        exercise="einsum_scores",
        cause="The spec '...qd,...dk->...qk' copies the pattern of a plain product Q @ K, reading K as "
              "[d, T_k]; but K is [T_k, d], so this contracts Q's features with K's token axis (and fails "
              "unless T_k = d). K's letters must be kd: '...qd,...kd->...qk'.",
        kind="operand's axes mislabelled (missing transpose)",
        wrong_on="Q = K = [[1, 2], [3, 4]]: returns Q K = [[7, 10], [15, 22]] instead of Q Kᵀ = [[5, 11], [11, 25]].",
        source=_H01 + '''def einsum_scores(Q, K):
    """Q Kᵀ for every batch item: [..., T_q, d] and [..., T_k, d] -> [..., T_q, T_k].

    Use np.einsum: one call does it, with no loop and no other product.
    """
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share their last axis, got {Q.shape} and {K.shape}")
    return np.einsum("...qd,...dk->...qk", Q, K)
''',
    ),
    Wrong(
        id="b34-01-einsum-scaled",
        exercise="einsum_scores",
        cause="The einsum is right but the result is then divided by sqrt(d), the attention scaling of "
              "lesson 02; this exercise asks for the plain product Q Kᵀ. Return the einsum unscaled.",
        kind="extra scale applied",
        wrong_on="Q = K = [[1, 0, 0, 0]] (d = 4): returns [[0.5]] instead of [[1]].",
        source=_H01 + '''def einsum_scores(Q, K):
    """Q Kᵀ for every batch item: [..., T_q, d] and [..., T_k, d] -> [..., T_q, T_k].

    Use np.einsum: one call does it, with no loop and no other product.
    """
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share their last axis, got {Q.shape} and {K.shape}")
    return np.einsum("...qd,...kd->...qk", Q, K) / np.sqrt(Q.shape[-1])
''',
    ),
    Wrong(
        id="b34-01-wavg-column-sums",
        exercise="weighted_average_rows",
        cause="The sum-to-1 test uses W.sum(axis=-2), the column sums, instead of W.sum(axis=-1), the row "
              "sums, so valid row-convex weights whose columns do not sum to 1 are rejected (and bad rows "
              "can slip through). Sum along the last axis.",
        kind="reduction over the wrong axis",
        wrong_on="W = [[1, 0], [1, 0]], V = [[1], [2]]: raises ValueError instead of returning [[1], [1]].",
        source=_H01 + '''def weighted_average_rows(W, V):
    """Row i of the result mixes the rows of V with weights W[i] (non-negative, sum 1).

    W: [..., n, m], V: [..., m, d] -> [..., n, d]. Raises ValueError for invalid weights.
    """
    W = as_array(W, "W", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if W.shape[-1] != V.shape[-2]:
        raise ValueError(f"W has {W.shape[-1]} weights per row but V has {V.shape[-2]} rows")
    if not np.all(np.isfinite(W)):
        raise ValueError("W holds a NaN or infinite weight")
    if np.any(W < 0):
        raise ValueError("W holds a negative weight")
    sums = W.sum(axis=-2)
    if np.any(np.abs(sums - 1) > 1e-6):
        raise ValueError(f"the weights must sum to 1, got sums {sums}")
    return W @ V
''',
    ),
    Wrong(
        id="b34-01-wavg-rejects-zero-weights",
        exercise="weighted_average_rows",
        cause="The sign test is np.any(W <= 0), which also rejects weights that are exactly 0; convex "
              "weights may be 0 (a one-hot row is convex). Reject only W < 0.",
        kind="strict vs non-strict comparison",
        wrong_on="W = [[1, 0]], V = [[1], [2]]: raises ValueError instead of returning [[1]].",
        source=_H01 + '''def weighted_average_rows(W, V):
    """Row i of the result mixes the rows of V with weights W[i] (non-negative, sum 1).

    W: [..., n, m], V: [..., m, d] -> [..., n, d]. Raises ValueError for invalid weights.
    """
    W = as_array(W, "W", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if W.shape[-1] != V.shape[-2]:
        raise ValueError(f"W has {W.shape[-1]} weights per row but V has {V.shape[-2]} rows")
    if not np.isfinite(W).all():
        raise ValueError("every weight must be a finite number")
    if np.any(W <= 0):
        raise ValueError("every weight must be non-negative")
    if np.any(np.abs(W.sum(axis=-1) - 1) > 1e-6):
        raise ValueError("every row of W must sum to 1")
    return W @ V
''',
    ),
    Wrong(
        id="b34-01-wavg-allclose-tolerance",
        exercise="weighted_average_rows",
        cause="The sum test uses np.allclose(W.sum(axis=-1), 1), whose default relative tolerance 1e-5 is "
              "ten times looser than the required 1e-6, so a row summing to 1 + 5e-6 is accepted. Compare "
              "with np.abs(sums - 1) <= 1e-6 (or pass atol=1e-6, rtol=0).",
        kind="tolerance left at a library default",
        wrong_on="W = [[0.5, 0.500005]], V = [[1], [1]]: returns a mixture instead of raising ValueError.",
        source=_H01 + '''def weighted_average_rows(W, V):
    """Row i of the result mixes the rows of V with weights W[i] (non-negative, sum 1).

    W: [..., n, m], V: [..., m, d] -> [..., n, d]. Raises ValueError for invalid weights.
    """
    W = as_array(W, "W", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if W.shape[-1] != V.shape[-2]:
        raise ValueError(f"W has {W.shape[-1]} weights per row but V has {V.shape[-2]} rows")
    if np.isnan(W).any() or np.isinf(W).any():
        raise ValueError("W contains NaN or infinite weights")
    if (W < 0).any():
        raise ValueError("W contains a negative weight")
    if not np.allclose(W.sum(axis=-1), 1):
        raise ValueError("each row of W must sum to 1")
    return W @ V
''',
    ),
    Wrong(
        id="b34-01-wavg-loop-assumes-2d",
        exercise="weighted_average_rows",
        cause="The validation loops 'for i, row in enumerate(W)', which walks the rows only when W is 2-D; "
              "for a batched W [b, n, m] each 'row' is a whole n×m matrix whose sum is n, so valid batched "
              "weights are rejected. Check along the last axis for all batch items at once (W.sum(axis=-1)).",
        kind="loop over the first axis instead of the last",
        wrong_on="W of shape [2, 2, 2] with every row [0.5, 0.5], V of shape [2, 2, 1]: raises ValueError instead of returning the mixtures.",
        source=_H01 + '''def weighted_average_rows(W, V):
    """Row i of the result mixes the rows of V with weights W[i] (non-negative, sum 1).

    W: [..., n, m], V: [..., m, d] -> [..., n, d]. Raises ValueError for invalid weights.
    """
    W = as_array(W, "W", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if W.shape[-1] != V.shape[-2]:
        raise ValueError(f"W has {W.shape[-1]} weights per row but V has {V.shape[-2]} rows")
    for i, row in enumerate(W):
        if not np.all(np.isfinite(row)):
            raise ValueError(f"row {i} of W has a NaN or infinite weight: {row}")
        if np.any(row < 0):
            raise ValueError(f"row {i} of W has a negative weight: {row}")
        if abs(row.sum() - 1) > 1e-6:
            raise ValueError(f"row {i} of W sums to {row.sum()}, not 1")
    return W @ V
''',
    ),
    Wrong(
        id="b34-01-wavg-nan-slips-through",
        exercise="weighted_average_rows",
        cause="The checks are 'abs(sum - 1) > 1e-6' and 'W < 0', and both comparisons are False for NaN, so "
              "a row holding a NaN passes and the result is NaN. Test for NaN explicitly (np.isnan or "
              "np.isfinite) or write the sum test so that NaN fails it (not abs(sum - 1) <= 1e-6).",
        kind="NaN passes a comparison-based check",
        wrong_on="W = [[0.5, nan]], V = [[1], [2]]: returns [[nan]] instead of raising ValueError.",
        source=_H01 + '''def weighted_average_rows(W, V):
    """Row i of the result mixes the rows of V with weights W[i] (non-negative, sum 1).

    W: [..., n, m], V: [..., m, d] -> [..., n, d]. Raises ValueError for invalid weights.
    """
    W = as_array(W, "W", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if W.shape[-1] != V.shape[-2]:
        raise ValueError(f"W has {W.shape[-1]} weights per row but V has {V.shape[-2]} rows")
    if np.any(W < 0):
        raise ValueError("W has a negative weight")
    bad = np.abs(W.sum(axis=-1) - 1) > 1e-6
    if np.any(bad):
        raise ValueError(f"rows {np.argwhere(bad).tolist()} of W do not sum to 1")
    return W @ V
''',
    ),
]
# ---------------------------------------------------------------- lesson 02
_H02 = "import numpy as np\nfrom grader.learner.validation import as_array\n\n"

_SOFTMAX_HEAD = '''def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
'''
_SOFTMAX_OK = _SOFTMAX_HEAD + '''    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)
'''
_SCORES_HEAD = '''def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
'''
_SCORES_OK = _SCORES_HEAD + '''    d_k = Q.shape[-1]
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
'''
_SDPA_HEAD = '''def scaled_dot_product_attention(Q, K, V):
    """softmax(Q Kᵀ / sqrt(d_k)) V. Returns (output [..., T_q, d_v], weights [..., T_q, T_k])."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V need one row per key: K has {K.shape[-2]} rows, V has "
                         f"{V.shape[-2]} (shapes {K.shape} and {V.shape})")
'''
_SDPA_OK = _SDPA_HEAD + '''    weights = softmax(attention_scores(Q, K), axis=-1)
    return weights @ V, weights
'''
_SVAR_HEAD = '''def score_variance(d_k, n_samples, seed):
    """The sample variance of q·k over n_samples pairs of standard normal vectors of length d_k."""
    if not isinstance(d_k, (int, np.integer)) or d_k < 1:
        raise ValueError(f"d_k must be a positive integer, got {d_k!r}")
    if not isinstance(n_samples, (int, np.integer)) or n_samples < 2:
        raise ValueError(f"n_samples must be an integer of at least 2, got {n_samples!r}")
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, d_k))   # one query per row
    k = rng.standard_normal((n_samples, d_k))   # one key per row
'''
_ONEQ_HEAD = '''def attend_one_query(q, K, V):
    """The single-query sum for q [d_k] over keys K [T_k, d_k] and values V [T_k, d_v] -> [d_v]."""
    q = as_array(q, "q", ndim=1)
    K = as_array(K, "K", ndim=2)
    V = as_array(V, "V", ndim=2)
    if K.shape[1] != q.shape[0] or V.shape[0] != K.shape[0]:
        raise ValueError(f"q {q.shape}, K {K.shape} and V {V.shape} do not fit: "
                         f"q must be [d_k], K [T_k, d_k] and V [T_k, d_v]")
'''
_SELF_HEAD = '''def self_attention(X, W_q, W_k, W_v):
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
_L02_HELPERS = _H02 + _SOFTMAX_OK + "\n\n" + _SCORES_OK + "\n\n"

WRONG += [
    Wrong(
        id="b34-02-softmax-global-max",
        exercise="softmax",
        cause="The shift subtracts x.max(), the largest score of the whole array, instead of the largest "
              "along `axis`; a slice whose scores are all far below the global maximum underflows to 0/0 = NaN. "
              "Subtract x.max(axis=axis, keepdims=True).",
        kind="reduction over all axes instead of one",
        wrong_on="x = [[0, 1], [-1000, -999]], axis=-1: row 1 comes out [nan, nan] instead of [0.269, 0.731].",
        source=_H02 + _SOFTMAX_HEAD + '''    e = np.exp(x - x.max())
    return e / e.sum(axis=axis, keepdims=True)
''',
    ),
    Wrong(
        id="b34-02-softmax-sum-axis-hardcoded",
        exercise="softmax",
        cause="The max is taken along `axis` but the normalising sum is hard-coded to axis=-1, so for any "
              "other axis the result is normalised along the last axis instead. Use axis=axis in the sum too.",
        kind="parameter replaced by its default",
        wrong_on="x = [[1, 2], [3, 4]], axis=0: returns 0.5 everywhere (each row normalised) instead of [[0.119, 0.119], [0.881, 0.881]].",
        source=_H02 + _SOFTMAX_HEAD + '''    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)
''',
    ),
    Wrong(
        id="b34-02-softmax-subtract-min",
        exercise="softmax",
        cause="The shift subtracts the minimum along the axis instead of the maximum, so the largest "
              "exponent is max - min, which overflows to inf when the scores are spread wide (inf / inf = NaN). "
              "Subtract the maximum so the largest exponent is 0.",
        kind="max vs min confused",
        wrong_on="x = [0, 1000]: returns [0, nan] instead of [0, 1].",
        source=_H02 + _SOFTMAX_HEAD + '''    e = np.exp(x - x.min(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
''',
    ),
    Wrong(
        id="b34-02-softmax-denominator-unshifted",
        exercise="softmax",
        cause="The numerator uses the shifted scores exp(x - max) but the denominator sums np.exp(x) of "
              "the unshifted scores, so every weight is off by the factor exp(-max) (and the denominator can "
              "overflow). Divide by the sum of the same shifted exponentials.",
        kind="shift applied to only one of two operands",
        wrong_on="x = [1, 1]: returns [0.184, 0.184] instead of [0.5, 0.5].",
        source=_H02 + _SOFTMAX_HEAD + '''    m = x.max(axis=axis, keepdims=True)
    return np.exp(x - m) / np.exp(x).sum(axis=axis, keepdims=True)
''',
    ),
    Wrong(
        id="b34-02-softmax-max-no-keepdims",
        exercise="softmax",
        cause="The maximum is taken without keepdims=True, so for a 2-D input with axis=-1 the vector of row "
              "maxima is broadcast along the last axis: column j gets row j's maximum subtracted, which "
              "changes the weights (or raises when the shapes differ). Use keepdims=True.",
        kind="keepdims forgotten",
        wrong_on="x = [[0, 1], [2, 3]], axis=-1: row 0 comes out [0.731, 0.269] instead of [0.269, 0.731].",
        source=_H02 + _SOFTMAX_HEAD + '''    e = np.exp(x - x.max(axis=axis))
    return e / e.sum(axis=axis, keepdims=True)
''',
    ),
    Wrong(
        id="b34-02-scores-swapaxes-first-two",
        exercise="attention_scores",
        cause="K is transposed with np.swapaxes(K, 0, 1), which swaps the first two axes: right for a 2-D K "
              "but, with a batch axis, it swaps batch and tokens instead of tokens and features. Swap the last "
              "two axes: np.swapaxes(K, -1, -2).",
        kind="transpose of the wrong axes on a batch",
        wrong_on="Q and K of shape [2, 3, 4]: K becomes [3, 2, 4], whose last two axes do not fit Q's, so it raises ValueError instead of returning shape [2, 3, 3].",
        source=_H02 + _SCORES_HEAD + '''    return Q @ np.swapaxes(K, 0, 1) / np.sqrt(Q.shape[-1])
''',
    ),
    Wrong(
        id="b34-02-scores-inverse-scale",
        exercise="attention_scores",
        cause="The scale is computed as d_k ** -0.5 (already 1/√d_k) and then divided by, so the scores are "
              "multiplied by √d_k instead of divided. Either multiply by d_k ** -0.5 or divide by d_k ** 0.5.",
        kind="scale inverted (sign in an exponent)",
        wrong_on="Q = K = [[1, 0, 0, 0]] (d_k = 4): returns [[2]] instead of [[0.5]].",
        source=_H02 + _SCORES_HEAD + '''    scale = Q.shape[-1] ** -0.5
    return Q @ np.swapaxes(K, -1, -2) / scale
''',
    ),
    Wrong(
        id="b34-02-scores-divide-by-dk",
        exercise="attention_scores",
        cause="The scores are divided by d_k itself, not by its square root. Divide by np.sqrt(d_k).",
        kind="sqrt forgotten",
        wrong_on="Q = K = [[1, 0, 0, 0]] (d_k = 4): returns [[0.25]] instead of [[0.5]].",
        source=_H02 + _SCORES_HEAD + '''    d_k = Q.shape[-1]
    return (Q @ np.swapaxes(K, -1, -2)) / d_k
''',
    ),
    Wrong(
        id="b34-02-scores-dk-from-axis-1",
        exercise="attention_scores",
        cause="d_k is read as Q.shape[1], which is the feature length only for 2-D Q; with a batch axis "
              "Q.shape[1] is the number of queries T_q. Read it from the last axis, Q.shape[-1].",
        kind="hard-coded axis index",
        wrong_on="Q, K of shape [1, 1, 4] holding [1, 0, 0, 0]: divides by √1 and returns [[[1]]] instead of [[[0.5]]].",
        source=_H02 + _SCORES_HEAD + '''    d_k = Q.shape[1]
    return np.matmul(Q, np.swapaxes(K, -1, -2)) / np.sqrt(d_k)
''',
    ),
    Wrong(
        id="b34-02-variance-sum-over-samples",
        exercise="score_variance",
        cause="The dot products are taken with (q * k).sum(axis=0), summing over the samples instead of over "
              "the d_k features, which gives d_k numbers rather than one q·k per pair. Sum along axis=1 (-1).",
        kind="reduction over the wrong axis",
        wrong_on="d_k = 1, n_samples = 1000, seed = 0: returns 0 (the variance of a single number) instead of about 1.",
        source=_H02 + _SVAR_HEAD + '''    dots = (q * k).sum(axis=0)
    return float(np.var(dots))
''',
    ),
    Wrong(
        id="b34-02-variance-no-sum",
        exercise="score_variance",
        cause="The variance is taken of q * k, the element-wise products, without summing each row, so it "
              "measures the variance of one product (about 1) rather than of q·k (about d_k). Sum each row "
              "first: (q * k).sum(axis=1).",
        kind="reduction left out",
        wrong_on="d_k = 64, n_samples = 4000, seed = 0: returns about 1 instead of about 64.",
        source=_H02 + _SVAR_HEAD + '''    return np.var(q * k)
''',
    ),
    Wrong(
        id="b34-02-variance-all-pairs-matrix",
        exercise="score_variance",
        cause="q @ k.T forms every query against every key (n_samples² numbers, n_samples² memory), not one "
              "dot product per row, so the variance is over all cross pairs and differs from the per-pair "
              "sample. Take the row-wise dot product: (q * k).sum(axis=1).",
        kind="full product instead of row-wise dot products",
        wrong_on="d_k = 2, n_samples = 5, seed = 0: gives a different number from the variance of the 5 per-row dot products.",
        source=_H02 + _SVAR_HEAD + '''    scores = q @ k.T
    return scores.var()
''',
    ),
    Wrong(
        id="b34-02-variance-std",
        exercise="score_variance",
        cause="The function returns np.std of the dot products, the standard deviation (about √d_k), "
              "instead of their variance. Use np.var.",
        kind="std instead of var",
        wrong_on="d_k = 16, n_samples = 4000, seed = 0: returns about 4 instead of about 16.",
        source=_H02 + _SVAR_HEAD + '''    dots = np.sum(q * k, axis=-1)
    return np.std(dots)
''',
    ),
    Wrong(
        id="b34-02-sdpa-return-order",
        exercise="scaled_dot_product_attention",
        cause="The function returns (weights, output), the two items in the opposite order; the contract is "
              "(output, weights).",
        kind="tuple items swapped",
        wrong_on="Q = K = identity 2×2, V = [[1, 2, 3], [4, 5, 6]]: the first item is the 2×2 weight matrix and the second the 2×3 output.",
        source=_L02_HELPERS + _SDPA_HEAD + '''    weights = softmax(attention_scores(Q, K), axis=-1)
    output = weights @ V
    return weights, output
''',
    ),
    Wrong(
        id="b34-02-sdpa-scaled-twice",
        exercise="scaled_dot_product_attention",
        cause="attention_scores already divides by √d_k, and the function divides its result by √d_k again, "
              "so the scores are divided by d_k and the weights come out too flat. Use attention_scores' "
              "result as it is.",
        kind="scale applied twice",
        wrong_on="Q = K = [[2, 0, 0, 0], [0, 2, 0, 0]] (d_k = 4), V = identity: the diagonal weight is 0.731 (scores divided by 4) instead of 0.881 (divided by 2).",
        source=_L02_HELPERS + _SDPA_HEAD + '''    d_k = Q.shape[-1]
    scores = attention_scores(Q, K) / np.sqrt(d_k)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
''',
    ),
    Wrong(
        id="b34-02-sdpa-weights-before-softmax",
        exercise="scaled_dot_product_attention",
        cause="The output is right, but the second item returned is the scaled scores rather than the "
              "softmax weights (the variable named scores is returned instead of weights). Return the "
              "softmax of the scores.",
        kind="wrong variable returned",
        wrong_on="Q = K = V = [[1, 0], [0, 1]]: the second item is [[0.707, 0], [0, 0.707]] instead of rows summing to 1.",
        source=_L02_HELPERS + _SDPA_HEAD + '''    scores = attention_scores(Q, K)
    weights = softmax(scores)
    output = weights @ V
    return output, scores
''',
    ),
    Wrong(
        id="b34-02-sdpa-scale-by-dv",
        exercise="scaled_dot_product_attention",
        cause="The scores are written inline and scaled by the square root of V.shape[-1] (d_v), the width "
              "of the values, instead of d_k = Q.shape[-1]. They differ whenever d_v ≠ d_k.",
        kind="scale from the wrong operand",
        wrong_on="Q = K = [[1, 0, 0, 0], [0, 1, 0, 0]] (d_k = 4) and V of shape [2, 1]: the scores are divided by 1 instead of 2, diagonal weight 0.731 instead of 0.622.",
        source=_L02_HELPERS + _SDPA_HEAD + '''    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(V.shape[-1])
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
''',
    ),
    Wrong(
        id="b34-02-sdpa-softmax-query-axis",
        exercise="scaled_dot_product_attention",
        cause="The softmax runs over axis=-2, the query axis, so each key's column sums to 1 instead of each "
              "query's row. Normalise along the key axis, axis=-1.",
        kind="softmax over the wrong axis",
        wrong_on="Q = [[1, 0], [0, 1], [1, 1]], K = V = identity 2×2: the weight rows do not sum to 1.",
        source=_L02_HELPERS + _SDPA_HEAD + '''    weights = softmax(attention_scores(Q, K), axis=-2)
    return weights @ V, weights
''',
    ),
    Wrong(
        id="b34-02-onequery-unshifted-denominator",
        exercise="attend_one_query",
        cause="The loop subtracts the largest score in the numerator exp(s_i - m) but the total is "
              "accumulated from np.exp(s_i) without the shift, so every weight is scaled by exp(-m) and the "
              "weights do not sum to 1 (the total can also overflow). Subtract m in both places.",
        kind="shift applied to only one of two operands",
        wrong_on="q = [1, 0], K = [[1, 0], [1, 0]], V = [[1], [1]]: returns [0.49] instead of [1].",
        source=_H02 + _ONEQ_HEAD + '''    d_k = K.shape[1]
    scores = []
    for i in range(K.shape[0]):
        scores.append(np.sum(q * K[i]) / np.sqrt(d_k))
    m = max(scores)
    total = 0.0
    for s in scores:
        total += np.exp(s)
    out = np.zeros(V.shape[1])
    for i in range(K.shape[0]):
        out += np.exp(scores[i] - m) / total * V[i]
    return out
''',
    ),
    Wrong(
        id="b34-02-onequery-off-by-one-keys",
        exercise="attend_one_query",
        cause="The loops run over range(len(K) - 1), so the last key is never scored or mixed in. Loop over "
              "range(len(K)).",
        kind="loop bound off by one",
        wrong_on="q = [0], K = [[0], [0]], V = [[0], [2]]: returns [0] instead of [1].",
        source=_H02 + _ONEQ_HEAD + '''    d_k = q.shape[0]
    T_k = len(K) - 1
    scores = np.array([np.sum(q * K[i]) / np.sqrt(d_k) for i in range(T_k)])
    e = np.exp(scores - scores.max())
    w = e / e.sum()
    out = np.zeros(V.shape[1])
    for i in range(T_k):
        out = out + w[i] * V[i]
    return out
''',
    ),
    Wrong(
        id="b34-02-onequery-mixes-keys",
        exercise="attend_one_query",
        cause="The weighted sum adds weight_i * K[i], the keys, instead of weight_i * V[i], the values (and "
              "the output is allocated with d_k entries). Mix the rows of V.",
        kind="wrong operand (keys instead of values)",
        wrong_on="q = [1], K = [[1]], V = [[5]]: returns [1] instead of [5].",
        source=_H02 + _ONEQ_HEAD + '''    scale = np.sqrt(len(q))
    scores = [np.sum(q * k_i) / scale for k_i in K]
    m = max(scores)
    exps = [np.exp(s - m) for s in scores]
    total = sum(exps)
    out = np.zeros(K.shape[1])
    for i, e in enumerate(exps):
        out += e / total * K[i]
    return out
''',
    ),
    Wrong(
        id="b34-02-onequery-no-scale",
        exercise="attend_one_query",
        cause="Each score is q·k_i without the division by √d_k, following the intuition formula rather "
              "than the one the exercise states (s_i = q·k_i / √d_k). Divide each score by np.sqrt(len(q)).",
        kind="scale left out",
        wrong_on="q = [2, 0, 0, 0], K = [[1, 0, 0, 0], [0, 0, 0, 0]], V = [[1], [0]]: returns [0.881] instead of [0.731].",
        source=_H02 + _ONEQ_HEAD + '''    scores = np.array([np.sum(q * K[i]) for i in range(len(K))])
    w = np.exp(scores - scores.max())
    w = w / w.sum()
    out = np.zeros(V.shape[1])
    for i in range(len(K)):
        out += w[i] * V[i]
    return out
''',
    ),
    Wrong(
        id="b34-02-onequery-scores-with-matmul",
        exercise="attend_one_query",
        cause="The scores are computed in one product, K @ q, and the output as w @ V; the values are "
              "right, but this exercise forbids @ (and np.matmul, np.einsum): loop over the keys, score each "
              "one with np.sum(q * K[i]) and add up weight_i * V[i].",
        kind="forbidden operator (rule broken, values right)",
        wrong_on="Any input: the values equal the single-query sum, but the code uses @, which the exercise forbids.",
        source=_H02 + _ONEQ_HEAD + '''    scores = K @ q / np.sqrt(q.shape[0])
    w = np.exp(scores - scores.max())
    w = w / w.sum()
    return w @ V
''',
    ),
    Wrong(
        id="b34-02-self-key-from-Wq",
        exercise="self_attention",
        cause="The keys are computed as X @ W_q (a copy-paste of the query line), so W_k is never used. "
              "Compute K = X @ W_k.",
        kind="wrong parameter used (copy-paste)",
        wrong_on="X = identity 2×2, W_q = identity, W_k = [[0, 1], [1, 0]], W_v = identity: weights come out symmetric diagonal-heavy instead of off-diagonal-heavy.",
        source=_L02_HELPERS + _SDPA_OK + "\n\n" + _SELF_HEAD + '''    Q = X @ W_q
    K = X @ W_q
    V = X @ W_v
    return scaled_dot_product_attention(Q, K, V)
''',
    ),
    Wrong(
        id="b34-02-self-weights-transposed",
        exercise="self_attention",
        cause="The projections are written torch-style, X @ W.T, which treats each W as [d_out, d_model]; "
              "here W is [d_model, d_k], so this projects with the transposed matrices (and fails unless W is "
              "square). Use X @ W_q, X @ W_k, X @ W_v.",
        kind="transpose added",
        wrong_on="X = [[1, 0]], W_q = W_k = identity, W_v = [[0, 1], [0, 0]]: output [[0, 0]] instead of [[0, 1]].",
        source=_L02_HELPERS + _SDPA_OK + "\n\n" + _SELF_HEAD + '''    Q = X @ W_q.T
    K = X @ W_k.T
    V = X @ W_v.T
    return scaled_dot_product_attention(Q, K, V)
''',
    ),
    Wrong(
        id="b34-02-self-args-swapped",
        exercise="self_attention",
        cause="The projected keys and queries are passed in the wrong order, scaled_dot_product_attention(K, Q, V), "
              "so the scores are K Qᵀ, the transpose of Q Kᵀ, and each row's softmax belongs to a key. Pass (Q, K, V).",
        kind="arguments swapped",
        wrong_on="X = identity 2×2, W_q = [[0, 1], [0, 0]], W_k = W_v = identity: weight row 0 is [0.5, 0.5] instead of [0.330, 0.670].",
        source=_L02_HELPERS + _SDPA_OK + "\n\n" + _SELF_HEAD + '''    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    return scaled_dot_product_attention(K, Q, V)
''',
    ),
    Wrong(
        id="b34-02-self-scale-dmodel",
        exercise="self_attention",
        cause="Attention is written inline and the scores are divided by √(X.shape[-1]), the width d_model "
              "of the tokens, instead of √d_k, the width of the projected queries and keys (W_q.shape[1]).",
        kind="scale from the wrong operand",
        wrong_on="X = identity 4×4 (d_model = 4), W_q = W_k = first column of identity (d_k = 1), W_v = identity: weights use /2 instead of /1.",
        source=_L02_HELPERS + _SDPA_OK + "\n\n" + _SELF_HEAD + '''    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(X.shape[-1])
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
''',
    ),
]
# ---------------------------------------------------------------- lesson 03
_WS_RIGHT = {
    "Q": "2 1 1 1\n1 1 0 1\n1 0 2 1",
    "K": "1 2 0 0\n0 1 -1 1\n1 1 1 0",
    "V": "1 0 2 1\n1 0 1 2\n0 0 1 1",
    "scores": "3 1 3 2\n6 3 4 4\n0 -1 2 0\n1 1 0 1",
    "scaled": "1 0 1 1\n3 1 2 2\n0 -1 1 0\n0 0 0 0",
    "A": "3/32 3/16 3/16 3/14\n27/32 9/16 9/16 9/14\n1/32 1/16 3/16 1/14\n1/32 3/16 1/16 1/14",
    "Z": "3/16 1/2 5/8 3/7\n3/16 5/8 1/2 3/7\n1/16 1/4 1/4 1/7",
}
_WS_CELL_COMMENT = {
    "Q": "# Q = W_Q X, K = W_K X, V = W_V X: 3 rows of 4 numbers each, one column per token.",
    "scores": "# Kᵀ Q: 4 rows (one per key) of 4 numbers (one per query).",
    "scaled": "# floor(scores / 2): 4 rows of 4 whole numbers.",
    "A": "# A: 4 rows of 4 weights, every column adds up to 1. Write fractions like 3/16.",
    "Z": "# Z = V A: 3 rows of 4 numbers, one column per token.",
}
_WS_ORDER = ("Q", "K", "V", "scores", "scaled", "A", "Z")


def _ws_source(upto, **typed):
    """The worksheet cells as the learner fills them in, through step `upto` (every step of
    that cell included), with the typed rows of `typed` in place of the right ones."""
    last = _WS_ORDER.index("V" if upto in ("Q", "K", "V") else upto)
    lines = ["WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below", ""]
    for step in _WS_ORDER[: last + 1]:
        if step in _WS_CELL_COMMENT:
            lines.append(_WS_CELL_COMMENT[step])
        text = typed.get(step, _WS_RIGHT[step])
        lines.append(f'WORKSHEET["{step}"] = """\n{text}\n"""')
        if step in ("V", "scores", "scaled", "A", "Z"):
            lines.append("")
    return "\n".join(lines) + "\n"


_H03 = ("import math\nfrom fractions import Fraction\n\nimport numpy as np\n\n"
        "from grader.learner.validation import as_fractions\n\n")

_KQS_HEAD = '''def key_query_scores(K, Q):
    """Kᵀ Q for keys and queries stored as columns: entry [i, j] is k_i · q_j.

    K: d_k×T_k and Q: d_k×T_q (ints, Fractions or floats). Returns T_k×T_q Fractions.
    """
    K = as_fractions(K, "K")
    Q = as_fractions(Q, "Q")
    if K.shape[0] != Q.shape[0]:
        raise ValueError(f"K and Q must have the same number of rows d_k, got K of shape "
                         f"{K.shape} and Q of shape {Q.shape}")
'''
_KQS_OK = _KQS_HEAD + '''    return K.T @ Q
'''
_FH_HEAD = '''def floor_half(S):
    """floor(S / 2) entry by entry, exactly: the stand-in for S / √3. floor(-1/2) is -1."""
    S = as_fractions(S, "S")
'''
_FH_OK = _FH_HEAD + '''    return np.array([[Fraction(math.floor(s / 2)) for s in row] for row in S], dtype=object)
'''
_SM3_HEAD = '''def softmax3_columns(S):
    """3 ** S with every column divided by its sum, exactly. Every column sums to 1.

    S holds whole numbers (the scaled scores).
    """
    S = as_fractions(S, "S", whole=True)
'''
_SM3_OK = _SM3_HEAD + '''    P = np.array([[Fraction(3) ** int(s) for s in row] for row in S], dtype=object)
    return P / P.sum(axis=0, keepdims=True)
'''
_ABH_HEAD = '''def attention_by_hand(X, W_Q, W_K, W_V):
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
_ABH_OK = _ABH_HEAD + '''    Q, K, V = W_Q @ X, W_K @ X, W_V @ X
    scores = key_query_scores(K, Q)
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    Z = V @ A
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
'''
_ROW_HEAD = '''def row_convention_attention(X_rows, W_Q, W_K, W_V):
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
_L03_HELPERS = _H03 + _KQS_OK + "\n\n" + _FH_OK + "\n\n" + _SM3_OK + "\n\n"

WRONG += [
    # ---- the worksheet, typed by hand
    Wrong(
        id="b34-03-ws-Q-tokens-as-rows",
        exercise="worksheet_Q",
        cause="Q is typed with one row per token (4 rows of 3), the layout of lesson 02, which is the "
              "transpose of W_Q X; on this worksheet the tokens are the columns, so Q has 3 rows of 4, "
              "column j being the query of token j.",
        kind="transposed layout",
        wrong_on="The published worksheet: Q typed as a 4×3 matrix (rows 2 1 1 / 1 1 0 / 1 0 2 / 1 1 1) instead of 3×4.",
        source=_ws_source("Q", Q="2 1 1\n1 1 0\n1 0 2\n1 1 1"),
    ),
    Wrong(
        id="b34-03-ws-K-minus-one-as-plus",
        exercise="worksheet_K",
        cause="In row 2 of W_K, (0, 0, 0, 1, -1, 1), the -1 was multiplied as if it were +1, so token 3's "
              "entry (which meets the -1 with feature 5 = 1) became 1 instead of -1.",
        kind="sign dropped",
        wrong_on="The published worksheet: K row 2 typed 0 1 1 1 instead of 0 1 -1 1.",
        source=_ws_source("K", K="1 2 0 0\n0 1 1 1\n1 1 1 0"),
    ),
    Wrong(
        id="b34-03-ws-V-with-WK",
        exercise="worksheet_V",
        cause="V was computed with W_K (the matrix of the line above) instead of W_V, so the typed values "
              "are the keys. V = W_V X.",
        kind="wrong matrix used",
        wrong_on="The published worksheet: V typed equal to K (1 2 0 0 / 0 1 -1 1 / 1 1 1 0).",
        source=_ws_source("V", V="1 2 0 0\n0 1 -1 1\n1 1 1 0"),
    ),
    Wrong(
        id="b34-03-ws-Q-K-cells-swapped",
        exercise="worksheet_Q",
        cause="The numbers of Q and K were typed into each other's cells: the Q cell holds W_K X and the K "
              "cell holds W_Q X. Q = W_Q X goes under WORKSHEET[\"Q\"]. (Two steps wrong from one mix-up.)",
        kind="answers typed into the wrong cells",
        wrong_on="The published worksheet: Q typed as 1 2 0 0 / 0 1 -1 1 / 1 1 1 0 (which is K) instead of 2 1 1 1 / 1 1 0 1 / 1 0 2 1.",
        source=_ws_source("Q", Q="1 2 0 0\n0 1 -1 1\n1 1 1 0", K="2 1 1 1\n1 1 0 1\n1 0 2 1"),
    ),
    Wrong(
        id="b34-03-ws-K-negative-product-dropped",
        exercise="worksheet_K",
        cause="The product of W_K's -1 (row 2, feature 5) with token 3's feature 5 was left out of the sum, "
              "as if a negative weight contributed nothing, so K[2, 3] came out 0 instead of -1.",
        kind="term left out of a sum",
        wrong_on="The published worksheet: K row 2 typed 0 1 0 1 instead of 0 1 -1 1.",
        source=_ws_source("K", K="1 2 0 0\n0 1 0 1\n1 1 1 0"),
    ),
    Wrong(
        id="b34-03-ws-V-tokens-as-rows",
        exercise="worksheet_V",
        cause="V is typed with one row per token (4 rows of 3), the transpose of W_V X; on this worksheet "
              "each token's value vector is a column, so V has 3 rows of 4.",
        kind="transposed layout",
        wrong_on="The published worksheet: V typed as a 4×3 matrix (1 1 0 / 0 0 0 / 2 1 1 / 1 2 1) instead of 3×4.",
        source=_ws_source("V", V="1 1 0\n0 0 0\n2 1 1\n1 2 1"),
    ),
    Wrong(
        id="b34-03-ws-scores-QtK",
        exercise="worksheet_scores",
        cause="The scores were computed as Qᵀ K (row i = query i, column j = key j), the transpose of Kᵀ Q; "
              "on this worksheet row i belongs to key i and column j to query j.",
        kind="transposed product",
        wrong_on="The published worksheet: scores typed as the transpose of Kᵀ Q (first row 3 6 0 1 instead of 3 1 3 2).",
        source=_ws_source("scores", scores="3 6 0 1\n1 3 -1 1\n3 4 2 0\n2 4 0 1"),
    ),
    Wrong(
        id="b34-03-ws-scores-minus-times-one",
        exercise="worksheet_scores",
        cause="In key 3's dot products, k3 = (0, -1, 1), the product (-1)·1 was written as +1, so row 3 "
              "of the scores is too large wherever the query's second entry is 1.",
        kind="sign dropped in arithmetic",
        wrong_on="The published worksheet: scores row 3 typed 2 1 2 2 instead of 0 -1 2 0.",
        source=_ws_source("scores", scores="3 1 3 2\n6 3 4 4\n2 1 2 2\n1 1 0 1"),
    ),
    Wrong(
        id="b34-03-ws-scaled-round-half-up",
        exercise="worksheet_scaled",
        cause="Odd scores were rounded to the nearest whole number with halves going up (3/2 → 2, 1/2 → 1, "
              "-1/2 → 0) instead of always rounding down: ⌊3/2⌋ = 1, ⌊1/2⌋ = 0, ⌊-1/2⌋ = -1.",
        kind="rounding instead of floor",
        wrong_on="The published worksheet: every odd score is one too high after halving (row 1 typed 2 1 2 1 instead of 1 0 1 1).",
        source=_ws_source("scaled", scaled="2 1 2 1\n3 2 2 2\n0 0 1 0\n1 1 0 1"),
    ),
    Wrong(
        id="b34-03-ws-scaled-not-floored",
        exercise="worksheet_scaled",
        cause="The scores were divided by 2 but not rounded down, so odd scores are left as halves (3/2, "
              "1/2, -1/2); the step is ⌊score/2⌋, a whole number.",
        kind="floor left out",
        wrong_on="The published worksheet: scaled typed with 3/2, 1/2 and -1/2 where 1, 0 and -1 belong.",
        source=_ws_source("scaled", scaled="3/2 1/2 3/2 1\n3 3/2 2 2\n0 -1/2 1 0\n1/2 1/2 0 1/2"),
    ),
    Wrong(
        id="b34-03-ws-A-row-sums",
        exercise="worksheet_A",
        cause="Each power of 3 was divided by its row's sum instead of its column's sum (lesson 02's "
              "rows habit), so the rows of A add up to 1 and the columns do not. Here each column is one query.",
        kind="normalised along the wrong axis",
        wrong_on="The published worksheet: A row 1 typed 3/10 1/10 3/10 3/10 instead of 3/32 3/16 3/16 3/14.",
        source=_ws_source("A", A="3/10 1/10 3/10 3/10\n9/16 1/16 3/16 3/16\n3/16 1/16 9/16 3/16\n1/4 1/4 1/4 1/4"),
    ),
    Wrong(
        id="b34-03-ws-A-from-scores",
        exercise="worksheet_A",
        cause="3 was raised to the raw scores instead of the scaled scores ⌊score/2⌋ of step 3, so the "
              "weights are far too peaked. Use the scaled matrix as the exponents.",
        kind="step skipped (unscaled scores used)",
        wrong_on="The published worksheet: A column 1 typed 27/760 729/760 1/760 3/760 instead of 3/32 27/32 1/32 1/32.",
        source=_ws_source("A", A="27/760 9/100 27/118 9/94\n729/760 81/100 81/118 81/94\n1/760 1/100 9/118 1/94\n3/760 9/100 1/118 3/94"),
    ),
    Wrong(
        id="b34-03-ws-Z-V-times-A-transposed",
        exercise="worksheet_Z",
        cause="Column j of Z was computed from row j of A (V Aᵀ) instead of column j of A; the weights of "
              "query j are a column of A, so Z = V A.",
        kind="transpose added",
        wrong_on="The published worksheet: Z row 1 typed 153/224 585/224 107/224 51/224 instead of 3/16 1/2 5/8 3/7.",
        source=_ws_source("Z", Z="153/224 585/224 107/224 51/224\n159/224 603/224 81/224 53/224\n45/112 135/112 29/112 15/112"),
    ),
    Wrong(
        id="b34-03-ws-Z-keys-mixed",
        exercise="worksheet_Z",
        cause="Z was computed as K A, mixing the keys (the matrix drawn as Kᵀ to the left of the scores) "
              "instead of the values V. Z = V A.",
        kind="wrong operand (keys instead of values)",
        wrong_on="The published worksheet: Z row 1 typed 57/32 21/16 21/16 3/2 instead of 3/16 1/2 5/8 3/7.",
        source=_ws_source("Z", Z="57/32 21/16 21/16 3/2\n27/32 11/16 7/16 9/14\n31/32 13/16 15/16 13/14"),
    ),
    # ---- the functions
    Wrong(
        id="b34-03-kqs-QtK",
        exercise="key_query_scores",
        cause="The function returns Q.T @ K, entry [i, j] = q_i · k_j, the transpose of Kᵀ Q (shape T_q×T_k "
              "instead of T_k×T_q). Return K.T @ Q.",
        kind="transposed product",
        wrong_on="K = [[1, 0]], Q = [[1, 2, 3]] (d_k = 1, T_k = 2, T_q = 3): returns a 3×2 matrix instead of the 2×3 [[1, 2, 3], [0, 0, 0]].",
        source=_H03 + _KQS_HEAD + '''    return Q.T @ K
''',
    ),
    Wrong(
        id="b34-03-kqs-cast-to-int",
        exercise="key_query_scores",
        cause="The product is converted with .astype(int), on the idea that scores are whole numbers; that "
              "holds on the worksheet but not for Fraction or float inputs, whose scores are truncated (and "
              "the result holds ints, not Fractions). Return K.T @ Q as it is.",
        kind="wrong type (truncating cast)",
        wrong_on="K = [[1/2]], Q = [[1]]: returns [[0]] instead of [[1/2]].",
        source=_H03 + _KQS_HEAD + '''    scores = K.T @ Q
    return scores.astype(int)
''',
    ),
    Wrong(
        id="b34-03-kqs-floats",
        exercise="key_query_scores",
        cause="K and Q are converted to float before multiplying, so the result holds floats, not exact "
              "Fractions (1/3 comes out 0.333…). Multiply the Fraction arrays themselves.",
        kind="wrong type (floats for Fractions)",
        wrong_on="K = [[1/3]], Q = [[1]]: returns the float 0.3333333333333333 instead of Fraction(1, 3).",
        source=_H03 + _KQS_HEAD + '''    return K.T.astype(float) @ Q.astype(float)
''',
    ),
    Wrong(
        id="b34-03-floor-before-halving",
        exercise="floor_half",
        cause="The floor is applied before the division, math.floor(s) / 2, which leaves whole odd scores as "
              "halves (3 → 3/2). Divide first, then round down: math.floor(s / 2).",
        kind="operations in the wrong order",
        wrong_on="S = [[3, -1]]: returns [[3/2, -1/2]] instead of [[1, -1]].",
        source=_H03 + _FH_HEAD + '''    out = np.empty(S.shape, dtype=object)
    for idx in np.ndindex(S.shape):
        out[idx] = Fraction(math.floor(S[idx])) / 2
    return out
''',
    ),
    Wrong(
        id="b34-03-floor-int-first",
        exercise="floor_half",
        cause="S is converted with .astype(int) before the floor division, which truncates fractional "
              "entries toward zero first, so a negative non-whole entry lands one too high "
              "(-1/2 → 0 → 0 instead of ⌊-1/4⌋ = -1). Apply math.floor(s / 2) to the exact Fractions.",
        kind="truncating cast before rounding",
        wrong_on="S = [[-1/2]]: returns [[0]] instead of [[-1]].",
        source=_H03 + _FH_HEAD + '''    whole = S.astype(int)
    return np.array([[Fraction(v // 2) for v in row] for row in whole], dtype=object)
''',
    ),
    Wrong(
        id="b34-03-floor-float-result",
        exercise="floor_half",
        cause="The floor division is done on S.astype(float), so the values are right but come back as "
              "floats instead of exact Fractions. Work on the Fractions (math.floor(s / 2) or s // 2).",
        kind="wrong type (floats for Fractions)",
        wrong_on="S = [[3]]: returns the float 1.0 instead of Fraction(1).",
        source=_H03 + _FH_HEAD + '''    return S.astype(float) // 2
''',
    ),
    Wrong(
        id="b34-03-sm3-int-power-python",
        exercise="softmax3_columns",
        cause="The powers are written 3 ** S on the whole array: for exponents ≥ 0 that gives Python ints, "
              "and int / int is a float, so columns without a negative exponent come out as floats. Use "
              "Fraction(3) ** int(s) entry by entry.",
        kind="wrong type (floats for Fractions)",
        wrong_on="S = [[0], [2]]: returns floats [[0.1], [0.9]] instead of Fractions 1/10 and 9/10.",
        source=_H03 + _SM3_HEAD + '''    P = 3 ** S
    return P / P.sum(axis=0)
''',
    ),
    Wrong(
        id="b34-03-sm3-negative-power-float",
        exercise="softmax3_columns",
        cause="Each power is computed as Fraction(3 ** int(s)); for a negative s, 3 ** int(s) is a float "
              "(3 ** -1 = 0.333…) and Fraction of that float is not exactly 1/3, so every weight of that "
              "column is slightly off. Raise a Fraction: Fraction(3) ** int(s).",
        kind="float creeps into exact arithmetic",
        wrong_on="S = [[-1], [0]]: returns a weight close to but not exactly 1/4 (and 3/4).",
        source=_H03 + _SM3_HEAD + '''    P = np.array([[Fraction(3 ** int(s)) for s in row] for row in S], dtype=object)
    return P / P.sum(axis=0, keepdims=True)
''',
    ),
    Wrong(
        id="b34-03-sm3-row-sums",
        exercise="softmax3_columns",
        cause="The powers are divided by their row sums (axis=1), so the rows sum to 1 instead of the "
              "columns. Divide by P.sum(axis=0, keepdims=True).",
        kind="normalised along the wrong axis",
        wrong_on="S = [[0, 0], [1, 0]]: returns [[1/2, 1/2], [3/4, 1/4]] instead of [[1/4, 1/2], [3/4, 1/2]].",
        source=_H03 + _SM3_HEAD + '''    P = np.array([[Fraction(3) ** int(s) for s in row] for row in S], dtype=object)
    return P / P.sum(axis=1, keepdims=True)
''',
    ),
    Wrong(
        id="b34-03-sm3-shift-row-max",
        exercise="softmax3_columns",
        cause="For 'stability' each row's maximum is subtracted before the powers (lesson 02's habit, with "
              "axis=1); the softmax runs down the columns, and shifting each row by a different amount "
              "changes every column's weights. Subtract nothing (the arithmetic is exact), or a per-column maximum.",
        kind="stability shift along the wrong axis",
        wrong_on="S = [[0, 2], [1, 0]]: column 0 comes out [1/10, 9/10] (rows shifted by -2 and -1) instead of [1/4, 3/4].",
        source=_H03 + _SM3_HEAD + '''    S = S - S.max(axis=1, keepdims=True)
    P = np.array([[Fraction(3) ** int(s) for s in row] for row in S], dtype=object)
    return P / P.sum(axis=0, keepdims=True)
''',
    ),
    Wrong(
        id="b34-03-sm3-whole-sum",
        exercise="softmax3_columns",
        cause="The powers are divided by P.sum(), the sum of the whole matrix, so all the entries together "
              "sum to 1 rather than each column. Divide by each column's sum: P.sum(axis=0, keepdims=True).",
        kind="reduction over all axes instead of one",
        wrong_on="S = [[0, 0], [0, 0]]: returns 1/4 everywhere instead of 1/2.",
        source=_H03 + _SM3_HEAD + '''    P = np.array([[Fraction(3) ** int(s) for s in row] for row in S], dtype=object)
    return P / P.sum()
''',
    ),
    Wrong(
        id="b34-03-abh-scores-args-swapped",
        exercise="attention_by_hand",
        cause="key_query_scores is called as key_query_scores(Q, K), with the arguments swapped, so the "
              "'scores' are Qᵀ K, the transpose of Kᵀ Q, and A and Z inherit the error. Call key_query_scores(K, Q).",
        kind="arguments swapped",
        wrong_on="The published worksheet: scores[0] is [3, 6, 0, 1] instead of [3, 1, 3, 2].",
        source=_L03_HELPERS + _ABH_HEAD + '''    Q, K, V = W_Q @ X, W_K @ X, W_V @ X
    scores = key_query_scores(Q, K)
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    Z = V @ A
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
''',
    ),
    Wrong(
        id="b34-03-abh-Z-transposed-A",
        exercise="attention_by_hand",
        cause="Z is computed as V @ A.T, mixing the values with the rows of A; query j's weights are column "
              "j of A, so Z = V @ A.",
        kind="transpose added",
        wrong_on="The published worksheet: Z[0, 0] is 153/224 instead of 3/16.",
        source=_L03_HELPERS + _ABH_HEAD + '''    Q, K, V = W_Q @ X, W_K @ X, W_V @ X
    scores = key_query_scores(K, Q)
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": V @ A.T}
''',
    ),
    Wrong(
        id="b34-03-abh-helper-floor-int",
        exercise="attention_by_hand",
        cause="attention_by_hand itself is right, but its helper floor_half uses int(s / 2), which rounds "
              "toward zero, so ⌊-1/2⌋ comes out 0 instead of -1 and A and Z follow. Fix floor_half with "
              "math.floor(s / 2).",
        kind="helper rounds toward zero (composite)",
        wrong_on="The published worksheet: scaled[2, 1] is 0 instead of -1 (score -1).",
        source=_H03 + _KQS_OK + "\n\n" + _FH_HEAD + '''    return np.array([[Fraction(int(s / 2)) for s in row] for row in S], dtype=object)
''' + "\n\n" + _SM3_OK + "\n\n" + _ABH_OK,
    ),
    Wrong(
        id="b34-03-abh-softmax-of-scores",
        exercise="attention_by_hand",
        cause="The scaled scores are computed and returned, but A is taken as softmax3_columns(scores), "
              "from the raw scores, so the floor step never reaches A. Pass the scaled scores.",
        kind="wrong variable passed (step skipped)",
        wrong_on="The published worksheet: A[0, 0] is 27/760 instead of 3/32.",
        source=_L03_HELPERS + _ABH_HEAD + '''    Q, K, V = W_Q @ X, W_K @ X, W_V @ X
    scores = key_query_scores(K, Q)
    scaled = floor_half(scores)
    A = softmax3_columns(scores)
    Z = V @ A
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
''',
    ),
    Wrong(
        id="b34-03-row-columns-result-untransposed",
        exercise="row_convention_attention",
        cause="The function reuses attention_by_hand on X_rows.T and returns its column-convention results "
              "as they are; every step of the row convention is the transpose of those, so each one must "
              "be transposed back (Q.T, scores.T, A.T, ...).",
        kind="transpose left out",
        wrong_on="The published worksheet (X_rows = X.T): returns Q of shape 3×4 instead of 4×3, and A with columns summing to 1.",
        source=_L03_HELPERS + _ABH_OK + "\n\n" + _ROW_HEAD + '''    return attention_by_hand(X_rows.T, W_Q, W_K, W_V)
''',
    ),
    Wrong(
        id="b34-03-row-softmax-columns",
        exercise="row_convention_attention",
        cause="The projections and scores are right in the row convention, but A is taken with "
              "softmax3_columns, which normalises each column; with queries as rows each row must sum to 1 "
              "(softmax3_columns(scaled.T).T).",
        kind="normalised along the wrong axis",
        wrong_on="The published worksheet (X_rows = X.T): A's columns sum to 1 and its rows do not.",
        source=_L03_HELPERS + _ROW_HEAD + '''    Q = X_rows @ W_Q.T
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
        id="b34-03-row-scores-KQt",
        exercise="row_convention_attention",
        cause="The scores are written K @ Q.T, carrying the column convention's 'keys first' order over; in "
              "the row convention entry (i, j) is q_i · k_j, so scores = Q @ K.T.",
        kind="transposed product",
        wrong_on="The published worksheet (X_rows = X.T): scores[0] is [3, 1, 3, 2] instead of [3, 6, 0, 1] (the scores equal the column convention's Kᵀ Q, not its transpose).",
        source=_L03_HELPERS + _ROW_HEAD + '''    Q, K, V = X_rows @ W_Q.T, X_rows @ W_K.T, X_rows @ W_V.T
    scores = K @ Q.T
    scaled = floor_half(scores)
    A = softmax3_columns(scaled.T).T
    Z = A @ V
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
''',
    ),
    Wrong(
        id="b34-03-row-projection-not-transposed",
        exercise="row_convention_attention",
        cause="The projections are written X_rows @ W_Q without transposing the weights; W_Q is 3×d_in, so "
              "the row convention needs X_rows @ W_Q.T (and without it the product fails unless d_in = 3).",
        kind="transpose left out",
        wrong_on="The published worksheet (X_rows 4×6, W_Q 3×6): raises ValueError for the shape mismatch instead of returning Q of shape 4×3.",
        source=_L03_HELPERS + _ROW_HEAD + '''    Q = X_rows @ W_Q
    K = X_rows @ W_K
    V = X_rows @ W_V
    scores = Q @ K.T
    scaled = floor_half(scores)
    A = softmax3_columns(scaled.T).T
    Z = A @ V
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
''',
    ),
]
# ---------------------------------------------------------------- lesson 04
_H04 = ("import numpy as np\nimport torch\n\n"
        "from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int\n\n")

_CM_HEAD = '''def causal_mask(T):
    """[T, T] boolean mask: True where key j <= query i."""
    T = positive_int(T, "T")
'''
_CM_OK = _CM_HEAD + '''    return np.tril(np.ones((T, T), dtype=bool))
'''
_PM_HEAD = '''def padding_mask(lengths, T):
    """[B, T] boolean mask: True at the real tokens of each sentence, False at its padding."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
'''
_PM_OK = _PM_HEAD + '''    return np.arange(T)[None, :] < lengths[:, None]
'''
_AM_HEAD = '''def attention_mask(lengths, T, causal=True):
    """[B, T, T] boolean mask: key padding, combined with the causal mask if causal=True."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    if not isinstance(causal, (bool, np.bool_)):
        raise ValueError(f"causal must be True or False, got {causal!r}")
'''
_MS_HEAD = '''def masked_softmax(scores, mask):
    """Softmax over the last axis with masked scores set to -inf first.

    mask: boolean, True = may attend, broadcasts to scores. A row with no allowed key
    returns zeros, never NaN.
    """
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
'''
_MS_OK = _MS_HEAD + '''    s = np.where(mask, scores, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(s - m)
    total = e.sum(axis=-1, keepdims=True)
    return np.where(total > 0, e / np.where(total > 0, total, 1.0), 0.0)
'''
_MA_HEAD = '''def masked_attention(Q, K, V, mask=None):
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
_IC_HEAD = '''def is_causal(attend, T, d, seed=0):
    """True if changing tokens after position t never changes outputs 0..t of attend."""
    if not callable(attend):
        raise ValueError(f"attend must be a function of X [T, d], got {type(attend).__name__}")
    T, d = positive_int(T, "T"), positive_int(d, "d")
    rng = np.random.default_rng(seed)
'''
_CMC_HEAD = '''def causal_mask_columns(T):
    """[T, T] causal mask with tokens as columns: entry [i, j] (key i, query j) is True where i <= j."""
    T = positive_int(T, "T")
'''
_MHA_HEAD = '''def to_mha_key_padding_mask(lengths, T):
    """torch.bool tensor [B, T] for nn.MultiheadAttention's key_padding_mask: True = ignore."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
'''
_PA_HEAD = '''def prefix_average(X):
    """Row i of the result is the mean of rows 0..i of X, computed as W @ X."""
    X = as_array(X, "X", min_ndim=2)
'''

WRONG += [
    Wrong(
        id="b34-04-causal-float-tril",
        exercise="causal_mask",
        cause="np.tril(np.ones((T, T))) has the right pattern but dtype float64 (1.0/0.0), not bool; the "
              "mask must be a boolean array. Build it from np.ones((T, T), dtype=bool).",
        kind="numbers for a mask (wrong dtype)",
        wrong_on="T = 2: returns [[1., 0.], [1., 1.]] of dtype float64 instead of a bool array.",
        source=_H04 + _CM_HEAD + '''    return np.tril(np.ones((T, T)))
''',
    ),
    Wrong(
        id="b34-04-causal-triu",
        exercise="causal_mask",
        cause="np.triu keeps the upper triangle, j >= i, which lets each query see the future and not the "
              "past; with queries as rows the allowed pairs j <= i are the lower triangle, np.tril.",
        kind="wrong triangle",
        wrong_on="T = 2: returns [[True, True], [False, True]] instead of [[True, False], [True, True]].",
        source=_H04 + _CM_HEAD + '''    return np.triu(np.ones((T, T), dtype=bool))
''',
    ),
    Wrong(
        id="b34-04-causal-not-triu-k0",
        exercise="causal_mask",
        cause="The mask is built as ~np.triu(ones) with the default k=0, which removes the diagonal too, so "
              "no token may see itself (and row 0 sees nothing). The strictly upper part is np.triu(..., k=1); "
              "~ of that is the lower triangle with the diagonal.",
        kind="triangle offset k off by one",
        wrong_on="T = 2: returns [[False, False], [True, False]] instead of [[True, False], [True, True]].",
        source=_H04 + _CM_HEAD + '''    future = np.triu(np.ones((T, T), dtype=bool))
    return ~future
''',
    ),
    Wrong(
        id="b34-04-padding-off-by-one",
        exercise="padding_mask",
        cause="The comparison is positions <= lengths, which also marks position lengths[b], the first "
              "padding token, as real. Positions 0..length-1 are real: use <.",
        kind="comparison off by one",
        wrong_on="lengths = [1], T = 3: returns [[True, True, False]] instead of [[True, False, False]].",
        source=_H04 + _PM_HEAD + '''    return np.arange(T)[None, :] <= lengths[:, None]
''',
    ),
    Wrong(
        id="b34-04-padding-transposed",
        exercise="padding_mask",
        cause="The positions are made the column and the lengths the row (np.arange(T)[:, None] < lengths[None, :]), "
              "which builds the grid as [T, B], the transpose. Positions go along the row: "
              "np.arange(T)[None, :] < lengths[:, None].",
        kind="broadcast axes swapped (transposed result)",
        wrong_on="lengths = [1, 2], T = 3: returns shape [3, 2] instead of [2, 3].",
        source=_H04 + _PM_HEAD + '''    positions = np.arange(T)[:, None]
    return positions < lengths[None, :]
''',
    ),
    Wrong(
        id="b34-04-padding-no-column",
        exercise="padding_mask",
        cause="np.arange(T) < lengths compares the two 1-D arrays entry by entry, with no [:, None] on the "
              "lengths, so it fails when B ≠ T and gives a 1-D [T] result when B = T. Make the lengths a "
              "column: lengths[:, None].",
        kind="missing [:, None] (broadcasting mistake)",
        wrong_on="lengths = [1, 2], T = 2: returns [True, True] of shape [2] instead of [[True, False], [True, True]].",
        source=_H04 + _PM_HEAD + '''    return np.arange(T) < lengths
''',
    ),
    Wrong(
        id="b34-04-padding-left",
        exercise="padding_mask",
        cause="The mask puts the real tokens at the end (positions >= T - length), i.e. padding on the left; "
              "the notebook pads on the right, so the real tokens are positions 0..length-1.",
        kind="mask mirrored (wrong padding side)",
        wrong_on="lengths = [1], T = 3: returns [[False, False, True]] instead of [[True, False, False]].",
        source=_H04 + _PM_HEAD + '''    return np.arange(T)[None, :] >= (T - lengths)[:, None]
''',
    ),
    Wrong(
        id="b34-04-attnmask-padding-on-queries",
        exercise="attention_mask",
        cause="The padding mask is broadcast as padding[:, :, None] ([B, T, 1]), which blanks the rows of "
              "the padding queries instead of the columns of the padding keys; real queries can then still "
              "attend to <pad> when causal=False. Use padding[:, None, :].",
        kind="mask broadcast along the wrong axis",
        wrong_on="lengths = [1], T = 2, causal=False: returns [[[True, True], [False, False]]] instead of [[[True, False], [True, False]]].",
        source=_H04 + _CM_OK + "\n\n" + _PM_OK + "\n\n" + _AM_HEAD + '''    pad = padding_mask(lengths, T)[:, :, None]
    mask = np.broadcast_to(pad, (len(lengths), T, T))
    if causal:
        mask = mask & causal_mask(T)[None, :, :]
    return mask
''',
    ),
    Wrong(
        id="b34-04-attnmask-noncausal-unbroadcast",
        exercise="attention_mask",
        cause="With causal=False the function returns padding[:, None, :] as it is, of shape [B, 1, T]; "
              "the contract is a full [B, T, T] mask, so broadcast it (np.broadcast_to(..., (B, T, T))).",
        kind="axis of length 1 left unbroadcast",
        wrong_on="lengths = [2, 1], T = 2, causal=False: returns shape [2, 1, 2] instead of [2, 2, 2].",
        source=_H04 + _CM_OK + "\n\n" + _PM_OK + "\n\n" + _AM_HEAD + '''    keys = padding_mask(lengths, T)[:, None, :]
    if causal:
        return keys & causal_mask(T)[None, :, :]
    return keys
''',
    ),
    Wrong(
        id="b34-04-attnmask-or",
        exercise="attention_mask",
        cause="The two masks are combined with | (either allows it) instead of & (both must allow it), so "
              "every real key is visible again, future included, and only padding keys in the future stay masked.",
        kind="| instead of &",
        wrong_on="lengths = [2], T = 2, causal=True: returns all True instead of the lower triangle.",
        source=_H04 + _CM_OK + "\n\n" + _PM_OK + "\n\n" + _AM_HEAD + '''    pad = padding_mask(lengths, T)[:, None, :]
    if causal:
        return pad | causal_mask(T)[None, :, :]
    return np.broadcast_to(pad, (len(lengths), T, T)).copy()
''',
    ),
    Wrong(
        id="b34-04-attnmask-ignores-flag",
        exercise="attention_mask",
        cause="The causal argument is checked but never used: the causal mask is always combined, so "
              "causal=False still hides the future. Combine it only when causal is True.",
        kind="parameter ignored",
        wrong_on="lengths = [2], T = 2, causal=False: returns [[[True, False], [True, True]]] instead of all True.",
        source=_H04 + _CM_OK + "\n\n" + _PM_OK + "\n\n" + _AM_HEAD + '''    return padding_mask(lengths, T)[:, None, :] & causal_mask(T)[None, :, :]
''',
    ),
    Wrong(
        id="b34-04-msoftmax-max-before-mask",
        exercise="masked_softmax",
        cause="The row maximum is taken over the scores before masking, so a masked key with a huge score "
              "sets the shift; the allowed keys' exponentials then underflow to 0 and the row comes out as "
              "zeros (treated as empty). Set masked scores to -inf first and take the maximum of what is left.",
        kind="shift computed before the mask",
        wrong_on="scores = [0, 1, 900], mask = [True, True, False]: returns [0, 0, 0] instead of [0.269, 0.731, 0].",
        source=_H04 + _MS_HEAD + '''    m = scores.max(axis=-1, keepdims=True)
    e = np.exp(scores - m) * mask
    total = e.sum(axis=-1, keepdims=True)
    safe = np.where(total > 0, total, 1.0)
    return np.where(total > 0, e / safe, 0.0)
''',
    ),
    Wrong(
        id="b34-04-msoftmax-inplace-boolean-index",
        exercise="masked_softmax",
        cause="Masked scores are set with scores[~mask] = -np.inf. Boolean indexing does not broadcast: a "
              "[T, T] mask on [B, T, T] scores selects along the first two axes (batch, query) and blanks "
              "whole rows of the wrong items; and the assignment overwrites the caller's scores array in place. "
              "Use np.where(mask, scores, -np.inf), which broadcasts over the last axes and makes a new array.",
        kind="in-place change of an input; boolean index instead of broadcasting",
        wrong_on="scores = zeros [2, 2, 2] with the [2, 2] causal mask: batch 0 comes out [[0.5, 0.5], [0, 0]] instead of [[1, 0], [0.5, 0.5]]; and any float scores passed in are changed to -inf at the masked places.",
        source=_H04 + _MS_HEAD + '''    scores[~mask] = -np.inf
    m = scores.max(axis=-1, keepdims=True)
    m[~np.isfinite(m)] = 0.0
    e = np.exp(scores - m)
    total = e.sum(axis=-1, keepdims=True)
    total[total == 0] = 1.0
    return e / total
''',
    ),
    Wrong(
        id="b34-04-msoftmax-sum-no-keepdims",
        exercise="masked_softmax",
        cause="The row sums are taken without keepdims=True, so for a 2-D input the vector of sums is "
              "broadcast along the last axis: entry [i, j] is divided by row j's sum. Keep the axis: "
              "e.sum(axis=-1, keepdims=True).",
        kind="keepdims forgotten",
        wrong_on="scores = [[0, 0], [0, 0]], mask = [[True, False], [True, True]]: row 1 comes out [1, 0.5] instead of [0.5, 0.5].",
        source=_H04 + _MS_HEAD + '''    s = np.where(mask, scores, -np.inf)
    m = np.max(s, axis=-1, keepdims=True)
    m = np.where(np.isneginf(m), 0.0, m)
    e = np.exp(s - m)
    total = e.sum(axis=-1)
    return np.where(total > 0, e / np.maximum(total, 1e-300), 0.0)
''',
    ),
    Wrong(
        id="b34-04-msoftmax-polarity-inverted",
        exercise="masked_softmax",
        cause="np.where(mask, -np.inf, scores) puts -inf where the mask is True; in this course True means "
              "'may attend', so the allowed keys are the ones blanked. Swap the branches: "
              "np.where(mask, scores, -np.inf).",
        kind="mask polarity inverted",
        wrong_on="scores = [1, 2], mask = [True, False]: returns [0, 1] instead of [1, 0].",
        source=_H04 + _MS_HEAD + '''    s = np.where(mask, -np.inf, scores)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(s - m)
    total = e.sum(axis=-1, keepdims=True)
    return np.where(total > 0, e / np.where(total > 0, total, 1.0), 0.0)
''',
    ),
    Wrong(
        id="b34-04-msoftmax-fill-minus-1e9",
        exercise="masked_softmax",
        cause="Masked scores are filled with -1e9 instead of -inf; in a row where every key is masked all "
              "scores are equal, so the softmax spreads the weight evenly over forbidden keys instead of "
              "returning zeros. Use -inf and give a row with no allowed key zeros.",
        kind="-1e9 instead of -inf (fully masked row)",
        wrong_on="scores = [0.3, -1.2], mask = [False, False]: returns [0.5, 0.5] instead of [0, 0].",
        source=_H04 + _MS_HEAD + '''    s = np.where(mask, scores, -1e9)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
''',
    ),
    Wrong(
        id="b34-04-mattn-none-ones-like-float",
        exercise="masked_attention",
        cause="For mask=None the function builds np.ones_like(scores), a float array of 1.0, and "
              "masked_softmax rejects a non-boolean mask with a ValueError. Build a boolean all-True mask "
              "(np.ones(scores.shape, dtype=bool)) or skip the mask.",
        kind="numbers for a mask (wrong dtype)",
        wrong_on="Q = K = V = [[1, 0], [0, 1]], mask=None: raises ValueError instead of returning plain attention.",
        source=_H04 + _MS_OK + "\n\n" + _MA_HEAD + '''    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is None:
        mask = np.ones_like(scores)
    weights = masked_softmax(scores, mask)
    return weights @ V, weights
''',
    ),
    Wrong(
        id="b34-04-mattn-no-scale",
        exercise="masked_attention",
        cause="The scores are Q Kᵀ without the division by √d_k, so the weights are too sharp. Divide by "
              "np.sqrt(Q.shape[-1]) before the masked softmax.",
        kind="scale left out",
        wrong_on="Q = K = [[2, 0, 0, 0], [0, 2, 0, 0]] (d_k = 4), V = identity 2×2, mask=None: diagonal weight 0.982 instead of 0.881.",
        source=_H04 + _MS_OK + "\n\n" + _MA_HEAD + '''    scores = Q @ np.swapaxes(K, -1, -2)
    if mask is None:
        mask = np.ones(scores.shape, dtype=bool)
    weights = masked_softmax(scores, mask)
    return weights @ V, weights
''',
    ),
    Wrong(
        id="b34-04-mattn-none-naive-softmax",
        exercise="masked_attention",
        cause="The mask=None branch takes a separate, hand-written softmax np.exp(scores) / sum without "
              "subtracting the row maximum, so large scores overflow to inf / inf = NaN. Route it through "
              "masked_softmax with an all-True mask (or subtract the maximum).",
        kind="unstable softmax on one branch",
        wrong_on="Q = [[40, 0]], K = [[40, 0]], V = [[1]], mask=None: returns NaN instead of [[1]].",
        source=_H04 + _MS_OK + "\n\n" + _MA_HEAD + '''    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is None:
        e = np.exp(scores)
        weights = e / e.sum(axis=-1, keepdims=True)
    else:
        weights = masked_softmax(scores, mask)
    return weights @ V, weights
''',
    ),
    Wrong(
        id="b34-04-iscausal-replace-from-t",
        exercise="is_causal",
        cause="The new random rows replace X[t:] instead of X[t + 1:], so token t itself changes, and output "
              "t, which may depend on it, moves: every real attention layer is reported as not causal. "
              "Replace only the tokens after t.",
        kind="slice off by one",
        wrong_on="attend = causal self-attention (mask j <= i), T = 3, d = 2: returns False instead of True.",
        source=_H04 + _IC_HEAD + '''    X = rng.standard_normal((T, d))
    before = attend(X)
    for t in range(T):
        X_new = X.copy()
        X_new[t:] = rng.standard_normal((T - t, d))
        after = attend(X_new)
        if not np.allclose(after[:t + 1], before[:t + 1]):
            return False
    return True
''',
    ),
    Wrong(
        id="b34-04-iscausal-compares-all",
        exercise="is_causal",
        cause="The comparison is np.allclose(after, before) on all outputs, but outputs after t are allowed "
              "to change when their own tokens change; only outputs 0..t must stay (after[:t + 1] vs before[:t + 1]).",
        kind="slice left out (whole array compared)",
        wrong_on="attend = causal self-attention, T = 3, d = 2: returns False instead of True.",
        source=_H04 + _IC_HEAD + '''    X = rng.standard_normal((T, d))
    before = attend(X)
    for t in range(T):
        X2 = X.copy()
        X2[t + 1:] = rng.standard_normal((T - t - 1, d))
        if not np.allclose(attend(X2), before):
            return False
    return True
''',
    ),
    Wrong(
        id="b34-04-iscausal-no-copy",
        exercise="is_causal",
        cause="X_new = X makes no copy, so each replacement also changes X itself; by step t the tokens "
              "before t have been replaced by earlier steps, and outputs 0..t change even for a causal layer. "
              "Copy X (X.copy()) before changing the future.",
        kind="aliasing (input changed in place)",
        wrong_on="attend = causal self-attention, T = 3, d = 2: returns False instead of True.",
        source=_H04 + _IC_HEAD + '''    X = rng.standard_normal((T, d))
    before = attend(X)
    for t in range(T):
        X_new = X
        X_new[t + 1:] = rng.standard_normal((T - t - 1, d))
        after = attend(X_new)
        if not np.allclose(after[:t + 1], before[:t + 1]):
            return False
    return True
''',
    ),
    Wrong(
        id="b34-04-iscausal-return-in-loop",
        exercise="is_causal",
        cause="'return True' is indented inside the loop, so the function returns after checking t = 0 only "
              "and never tests later positions. Return True after the loop has finished.",
        kind="statement moved into a loop",
        wrong_on="attend(X) whose output 1 reads token 2 (output 0 reads only token 0), T = 3, d = 2: returns True instead of False.",
        source=_H04 + _IC_HEAD + '''    X = rng.standard_normal((T, d))
    before = attend(X)
    for t in range(T):
        X_new = X.copy()
        X_new[t + 1:] = rng.standard_normal((T - t - 1, d))
        after = attend(X_new)
        if not np.allclose(after[:t + 1], before[:t + 1]):
            return False
        return True
''',
    ),
    Wrong(
        id="b34-04-iscausal-excludes-t",
        exercise="is_causal",
        cause="The comparison uses after[:t] and before[:t], which leaves out output t itself, so a layer "
              "whose output t reads token t + 1 (one step into the future) is never caught. Compare outputs "
              "0..t: [:t + 1].",
        kind="slice end off by one",
        wrong_on="attend(X) whose output i reads token i + 1, T = 3, d = 2: returns True instead of False.",
        source=_H04 + _IC_HEAD + '''    X = rng.standard_normal((T, d))
    before = attend(X)
    for t in range(T):
        X_new = X.copy()
        X_new[t + 1:] = rng.standard_normal((T - t - 1, d))
        after = attend(X_new)
        if not np.allclose(after[:t], before[:t]):
            return False
    return True
''',
    ),
    Wrong(
        id="b34-04-cmcols-tril",
        exercise="causal_mask_columns",
        cause="The function returns the lower triangle, the row-convention mask; with tokens as columns "
              "entry [i, j] is key i and query j, so the allowed pairs i <= j are the upper triangle (np.triu, "
              "the transpose of the row mask).",
        kind="wrong triangle (transpose left out)",
        wrong_on="T = 2: returns [[True, False], [True, True]] instead of [[True, True], [False, True]].",
        source=_H04 + _CMC_HEAD + '''    return np.tril(np.ones((T, T), dtype=bool))
''',
    ),
    Wrong(
        id="b34-04-cmcols-triu-k1",
        exercise="causal_mask_columns",
        cause="np.triu(..., k=1) starts one above the diagonal, so a query may not see its own key. "
              "The diagonal is allowed: use k=0.",
        kind="triangle offset k off by one",
        wrong_on="T = 2: returns [[False, True], [False, False]] instead of [[True, True], [False, True]].",
        source=_H04 + _CMC_HEAD + '''    return np.triu(np.ones((T, T), dtype=bool), k=1)
''',
    ),
    Wrong(
        id="b34-04-cmcols-float",
        exercise="causal_mask_columns",
        cause="np.triu(np.ones((T, T))) has the right triangle but dtype float64; the mask must be boolean "
              "(np.ones(..., dtype=bool)).",
        kind="numbers for a mask (wrong dtype)",
        wrong_on="T = 2: returns [[1., 1.], [0., 1.]] of dtype float64 instead of bool.",
        source=_H04 + _CMC_HEAD + '''    return np.triu(np.ones((T, T)))
''',
    ),
    Wrong(
        id="b34-04-mha-numpy-array",
        exercise="to_mha_key_padding_mask",
        cause="The inverted mask is right but returned as a NumPy array; the docstring asks for a torch.bool "
              "tensor. Wrap it with torch.from_numpy (or torch.as_tensor).",
        kind="wrong type (array for a tensor)",
        wrong_on="lengths = [1], T = 2: returns the numpy array [[False, True]] instead of a torch tensor.",
        source=_H04 + _MHA_HEAD + '''    return np.arange(T)[None, :] >= lengths[:, None]
''',
    ),
    Wrong(
        id="b34-04-mha-float-tensor",
        exercise="to_mha_key_padding_mask",
        cause="The mask is converted to a float tensor (dtype=torch.float32); nn.MultiheadAttention treats a "
              "float key_padding_mask as numbers added to the scores, so 1.0 is added to padding scores "
              "instead of ignoring those keys. Return dtype torch.bool.",
        kind="numbers for a mask (wrong dtype)",
        wrong_on="lengths = [1], T = 2: returns tensor([[0., 1.]]) of dtype float32 instead of a bool tensor [[False, True]].",
        source=_H04 + _MHA_HEAD + '''    ignore = np.arange(T)[None, :] >= lengths[:, None]
    return torch.tensor(ignore, dtype=torch.float32)
''',
    ),
    Wrong(
        id="b34-04-mha-off-by-one",
        exercise="to_mha_key_padding_mask",
        cause="The comparison is positions > lengths, so the first padding position (index lengths[b]) is "
              "not marked to be ignored. Padding starts at index length: use >=.",
        kind="comparison off by one",
        wrong_on="lengths = [1], T = 3: returns [[False, False, True]] instead of [[False, True, True]].",
        source=_H04 + _MHA_HEAD + '''    return torch.from_numpy(np.arange(T)[None, :] > lengths[:, None])
''',
    ),
    Wrong(
        id="b34-04-mha-keeps-query-axis",
        exercise="to_mha_key_padding_mask",
        cause="The mask keeps the [B, 1, T] shape of section 3's key-padding mask; key_padding_mask must be "
              "[B, T]. Drop the query axis.",
        kind="extra axis of length 1",
        wrong_on="lengths = [1, 2], T = 2: returns shape [2, 1, 2] instead of [2, 2].",
        source=_H04 + _MHA_HEAD + '''    padding = np.arange(T)[None, :] < lengths[:, None]
    return torch.from_numpy(~padding[:, None, :])
''',
    ),
    Wrong(
        id="b34-04-prefix-zero-based-counts",
        exercise="prefix_average",
        cause="Each row of the triangle is divided by np.arange(T)[:, None], zero-based, so row i is divided "
              "by i instead of i + 1 (row 0 by 0, giving inf/NaN). Row i averages i + 1 rows: use np.arange(1, T + 1).",
        kind="off by one (zero-based count)",
        wrong_on="X = [[1], [3]]: returns [[nan], [4]] instead of [[1], [2]].",
        source=_H04 + _PA_HEAD + '''    T = X.shape[-2]
    W = np.tril(np.ones((T, T))) / np.arange(T)[:, None]
    return W @ X
''',
    ),
    Wrong(
        id="b34-04-prefix-divides-columns",
        exercise="prefix_average",
        cause="The counts np.arange(1, T + 1) are divided in without [:, None], so they broadcast along the "
              "last axis and divide column j by j + 1 instead of row i by i + 1; the rows of W no longer "
              "sum to 1. Write counts[:, None].",
        kind="missing [:, None] (broadcasting mistake)",
        wrong_on="X = [[1], [3]]: returns [[1], [2.5]] instead of [[1], [2]].",
        source=_H04 + _PA_HEAD + '''    T = X.shape[-2]
    W = np.tril(np.ones((T, T))) / np.arange(1, T + 1)
    return W @ X
''',
    ),
    Wrong(
        id="b34-04-prefix-T-from-axis-0",
        exercise="prefix_average",
        cause="T is read as X.shape[0], the batch size for a batched X [..., T, d], instead of X.shape[-2], "
              "the number of tokens; W then has the wrong size and the product fails or averages the wrong rows.",
        kind="hard-coded axis index",
        wrong_on="X of shape [2, 3, 1]: raises (W is 2×2 against 3 rows) instead of returning shape [2, 3, 1].",
        source=_H04 + _PA_HEAD + '''    T = X.shape[0]
    W = np.tril(np.ones((T, T)))
    W = W / W.sum(axis=1, keepdims=True)
    return W @ X
''',
    ),
    Wrong(
        id="b34-04-prefix-cumsum",
        exercise="prefix_average",
        cause="The prefix sums come from np.cumsum along the token axis, divided by the counts; the values "
              "are right, but the exercise forbids np.cumsum and asks for one matrix product W @ X with the "
              "normalised lower-triangular W.",
        kind="forbidden call (rule broken, values right)",
        wrong_on="Any input: the values equal the prefix means, but the code calls np.cumsum, which the exercise forbids.",
        source=_H04 + _PA_HEAD + '''    T = X.shape[-2]
    counts = np.arange(1, T + 1)[:, None]
    return np.cumsum(X, axis=-2) / counts
''',
    ),
]
