"""Held-out set C, lessons 01-04: wrong answers written from the student notebooks only."""
from typing import NamedTuple


class Wrong(NamedTuple):
    id: str
    exercise: str
    cause: str
    kind: str
    wrong_on: str
    source: str


WRONG = [
# ----------------------------------------------------------------- lesson 01
Wrong(
    id="c34-01-dot-int-accumulator",
    exercise="matmul_dot",
    cause="C was created with np.zeros((n, m), dtype=int), so every float dot product is truncated toward zero when it is stored in C[i, j]; create C as a float array (np.zeros((n, m)))." ,
    kind="wrong dtype of the result array",
    wrong_on="A=[[0.5, 0.25]], B=[[1.0], [1.0]]: the product is 0.75 but the function returns 0.",
    source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def matmul_dot(A, B):
    A, B = matmul_operands(A, B)
    n, m = A.shape[0], B.shape[1]
    C = np.zeros((n, m), dtype=int)
    for i in range(n):
        for j in range(m):
            C[i, j] = (A[i, :] * B[:, j]).sum()
    return C
'''),
Wrong(
    id="c34-01-dot-row-of-B",
    exercise="matmul_dot",
    cause="Entry (i, j) dots row i of A with row j of B (B[j, :]) instead of column j of B (B[:, j]); that computes A Bᵀ, which only has the right shape when B is square.",
    kind="row taken instead of column",
    wrong_on="A=[[1, 2], [3, 4]], B=[[0, 1], [0, 0]]: A@B is [[0, 1], [0, 3]] but the function gives A Bᵀ = [[2, 0], [4, 0]].",
    source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def matmul_dot(A, B):
    A, B = matmul_operands(A, B)
    n, m = A.shape[0], B.shape[1]
    C = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            C[i, j] = np.sum(A[i, :] * B[j, :])
    return C
'''),
Wrong(
    id="c34-01-dot-shape-from-A",
    exercise="matmul_dot",
    cause="The result was allocated as np.zeros_like(A), which is n×k, and the j loop runs over range(A.shape[1]); the result must be n×m (rows of A, columns of B) and j must run over B.shape[1].",
    kind="result shape taken from the wrong operand",
    wrong_on="A of shape 2×3 and B of shape 3×2: j runs to 2 and B[:, 2] is out of range, so the function raises an IndexError instead of returning the 2×2 product.",
    source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def matmul_dot(A, B):
    A, B = matmul_operands(A, B)
    C = np.zeros_like(A)
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            C[i, j] = np.sum(A[i, :] * B[:, j])
    return C
'''),
Wrong(
    id="c34-01-dot-uses-at",
    exercise="matmul_dot",
    cause="Each entry is computed with A[i, :] @ B[:, j]; the values are right but `@` is one of the products this exercise forbids: use (A[i, :] * B[:, j]).sum().",
    kind="forbidden call (rule broken)",
    wrong_on="any input: the values equal A@B, but the code contains the forbidden `@` operator.",
    source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def matmul_dot(A, B):
    A, B = matmul_operands(A, B)
    n, m = A.shape[0], B.shape[1]
    C = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            C[i, j] = A[i, :] @ B[:, j]
    return C
'''),
Wrong(
    id="c34-01-rows-assign-not-add",
    exercise="matmul_rows",
    cause="Inside the loop over p the row is assigned (C[i] = A[i, p] * B[p]) instead of accumulated (C[i] += ...), so only the last term p = k-1 survives.",
    kind="assignment instead of accumulation",
    wrong_on="A=[[1, 2]], B=[[1], [1]]: the answer is [[3]] but the function returns [[2]].",
    source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def matmul_rows(A, B):
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]))
    for i in range(A.shape[0]):
        for p in range(A.shape[1]):
            C[i] = A[i, p] * B[p]
    return C
'''),
Wrong(
    id="c34-01-rows-weights-swapped-index",
    exercise="matmul_rows",
    cause="The weight is read as A[p, i] instead of A[i, p]: the indices of A are swapped, which computes Aᵀ B for square A and fails for rectangular A.",
    kind="indices swapped",
    wrong_on="A=[[1, 2], [3, 4]], B=identity 2×2: A@B is A, but the function returns Aᵀ = [[1, 3], [2, 4]].",
    source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def matmul_rows(A, B):
    A, B = matmul_operands(A, B)
    n, k = A.shape
    C = np.zeros((n, B.shape[1]))
    for i in range(n):
        for p in range(k):
            C[i, :] += A[p, i] * B[p, :]
    return C
'''),
Wrong(
    id="c34-01-rows-start-from-ones",
    exercise="matmul_rows",
    cause="The accumulator was created with np.ones instead of np.zeros, so every entry of the result is 1 too large; a sum must start from 0.",
    kind="wrong initial value",
    wrong_on="A=[[1.0]], B=[[2.0]]: the product is [[2]] but the function returns [[3]].",
    source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def matmul_rows(A, B):
    A, B = matmul_operands(A, B)
    C = np.ones((A.shape[0], B.shape[1]))
    for i in range(A.shape[0]):
        for p in range(A.shape[1]):
            C[i] += A[i, p] * B[p]
    return C
'''),
Wrong(
    id="c34-01-cols-weight-index-swapped",
    exercise="matmul_cols",
    cause="The weight for column p of A is read as B[j, p] instead of B[p, j]; column j of C must use the weights in column j of B.",
    kind="indices swapped",
    wrong_on="A=identity 2×2, B=[[1, 2], [3, 4]]: A@B is B but the function returns Bᵀ = [[1, 3], [2, 4]].",
    source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def matmul_cols(A, B):
    A, B = matmul_operands(A, B)
    n, k = A.shape
    m = B.shape[1]
    C = np.zeros((n, m))
    for j in range(m):
        for p in range(k):
            C[:, j] += B[j, p] * A[:, p]
    return C
'''),
Wrong(
    id="c34-01-cols-reset-inside-loop",
    exercise="matmul_cols",
    cause="C[:, j] = 0 was put inside the loop over p, so the column is reset before every term and only the last term B[k-1, j] * A[:, k-1] is kept; reset it once, before the p loop (or not at all, since C starts at zero).",
    kind="statement moved into a loop",
    wrong_on="A=[[1, 1]], B=[[1], [1]]: the answer is [[2]] but the function returns [[1]].",
    source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def matmul_cols(A, B):
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]))
    for j in range(B.shape[1]):
        for p in range(A.shape[1]):
            C[:, j] = 0
            C[:, j] += B[p, j] * A[:, p]
    return C
'''),
Wrong(
    id="c34-01-cols-row-of-A",
    exercise="matmul_cols",
    cause="The term uses A[p, :] (row p of A) where the column reading needs A[:, p] (column p of A); for square A this computes (Bᵀ A)ᵀ = Aᵀ B, for rectangular A it does not even fit.",
    kind="row taken instead of column",
    wrong_on="A=[[1, 2], [3, 4]], B=identity 2×2: the answer is A but the function returns Aᵀ = [[1, 3], [2, 4]].",
    source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def matmul_cols(A, B):
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]))
    for j in range(B.shape[1]):
        for p in range(A.shape[1]):
            C[:, j] += B[p, j] * A[p, :]
    return C
'''),
Wrong(
    id="c34-01-outer-loop-over-n",
    exercise="matmul_outer",
    cause="The loop runs over range(A.shape[0]) (n, the rows of A) instead of range(A.shape[1]) (k, the shared axis); there is one rank-1 term per column of A, so p must run over k.",
    kind="loop over the wrong axis length",
    wrong_on="A of shape 1×2, A=[[1, 1]], B=[[1], [1]]: the answer is [[2]] but only p = 0 is summed and the function returns [[1]].",
    source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def matmul_outer(A, B):
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]))
    for p in range(A.shape[0]):
        C += np.outer(A[:, p], B[p, :])
    return C
'''),
Wrong(
    id="c34-01-outer-args-reversed",
    exercise="matmul_outer",
    cause="np.outer(B[p, :], A[:, p]) has its arguments in the wrong order, so each term is m×n, the transpose of the term needed; write np.outer(A[:, p], B[p, :]).",
    kind="arguments swapped",
    wrong_on="A=[[1, 0], [0, 0]], B=[[0, 1], [0, 0]] (square): the answer is [[0, 1], [0, 0]] but the function returns its transpose [[0, 0], [1, 0]]; for rectangular A and B the shapes do not even add up.",
    source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def matmul_outer(A, B):
    A, B = matmul_operands(A, B)
    C = np.zeros((B.shape[1], A.shape[0]))
    for p in range(A.shape[1]):
        C = C + np.outer(B[p, :], A[:, p])
    return C
'''),
Wrong(
    id="c34-01-outer-row-col-of-wrong-operand",
    exercise="matmul_outer",
    cause="Each term is np.outer(A[p, :], B[:, p]): row p of A and column p of B, where the outer-product reading needs column p of A and row p of B; the loop bound A.shape[1] then only works for square matrices, and the sum is wrong.",
    kind="row/column confusion",
    wrong_on="A=[[1, 2], [3, 4]], B=identity 2×2: the answer is A, but the function returns [[1, 3], [2, 4]]-like sums of the wrong rank-1 terms (here Aᵀ).",
    source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def matmul_outer(A, B):
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]))
    for p in range(A.shape[1]):
        C += np.outer(A[p, :], B[:, p])
    return C
'''),
Wrong(
    id="c34-01-batched-np-dot",
    exercise="batched_matmul",
    cause="np.dot(A, B) is used for the batch; for arrays with more than 2 axes np.dot sums the last axis of A with the second-to-last of B across *all* batch pairs and returns shape [b, n, b, m]; use A @ B (np.matmul), which pairs batch item b with batch item b.",
    kind="wrong product function for batches",
    wrong_on="A and B of shape [2, 3, 4] and [2, 4, 5]: the result has shape (2, 3, 2, 5) instead of (2, 3, 5).",
    source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def batched_matmul(A, B):
    A = as_array(A, "A", min_ndim=2)
    B = as_array(B, "B", min_ndim=2)
    if A.shape[-1] != B.shape[-2]:
        raise ValueError(f"A has {A.shape[-1]} columns but B has {B.shape[-2]} rows "
                         f"(shapes {A.shape} and {B.shape})")
    return np.dot(A, B)
'''),
Wrong(
    id="c34-01-batched-einsum-fixed-batch",
    exercise="batched_matmul",
    cause="The einsum string 'bnk,bkm->bnm' fixes exactly one batch axis on both sides, so a plain [n, k] matrix times a [b, k, m] stack (or 2-D inputs, or two batch axes) fails; use A @ B, or '...nk,...km->...nm'.",
    kind="batch axes not broadcast",
    wrong_on="A of shape [2, 3] and B of shape [4, 3, 5]: the function raises instead of returning shape (4, 2, 5).",
    source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def batched_matmul(A, B):
    A = as_array(A, "A", min_ndim=2)
    B = as_array(B, "B", min_ndim=2)
    if A.shape[-1] != B.shape[-2]:
        raise ValueError(f"A has {A.shape[-1]} columns but B has {B.shape[-2]} rows "
                         f"(shapes {A.shape} and {B.shape})")
    return np.einsum("bnk,bkm->bnm", A, B)
'''),
Wrong(
    id="c34-01-batched-swapaxes-B",
    exercise="batched_matmul",
    cause="The learner carried over the Kᵀ habit from section 5 and wrote A @ np.swapaxes(B, -1, -2); B is already [k, m] and must not be transposed: return A @ B.",
    kind="transpose added",
    wrong_on="A and B both of shape [2, 3, 3]: the result is A @ Bᵀ per batch item instead of A @ B (square shapes hide it; rectangular ones raise).",
    source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def batched_matmul(A, B):
    A = as_array(A, "A", min_ndim=2)
    B = as_array(B, "B", min_ndim=2)
    if A.shape[-1] != B.shape[-2]:
        raise ValueError(f"A has {A.shape[-1]} columns but B has {B.shape[-2]} rows "
                         f"(shapes {A.shape} and {B.shape})")
    return A @ np.swapaxes(B, -1, -2)
'''),
Wrong(
    id="c34-01-einsum-output-kq",
    exercise="einsum_scores",
    cause="The output letters are written '...kq' instead of '...qk', so the result is K Qᵀ: the transpose of the scores, with one row per key; the output order must be query then key.",
    kind="output axes swapped",
    wrong_on="Q of shape [3, 2] and K of shape [4, 2]: the result has shape (4, 3) instead of (3, 4).",
    source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def einsum_scores(Q, K):
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share their last axis, got {Q.shape} and {K.shape}")
    return np.einsum("...qd,...kd->...kq", Q, K)
'''),
Wrong(
    id="c34-01-einsum-scaled",
    exercise="einsum_scores",
    cause="The result is divided by sqrt(d) as in attention; this function is asked for the plain product Q Kᵀ, the √d_k scaling belongs to lesson 02's attention_scores, not here.",
    kind="scale applied where none belongs",
    wrong_on="Q=[[1, 1]], K=[[1, 1]]: Q Kᵀ is [[2]] but the function returns [[1.414]].",
    source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def einsum_scores(Q, K):
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share their last axis, got {Q.shape} and {K.shape}")
    return np.einsum("...qd,...kd->...qk", Q, K) / np.sqrt(Q.shape[-1])
'''),
Wrong(
    id="c34-01-einsum-sums-d-and-k",
    exercise="einsum_scores",
    cause="The key letter was also dropped from the output ('...qd,...kd->...q'), so einsum sums over the keys as well as the features and returns one number per query; the key axis k must appear in the output.",
    kind="reduction over an extra axis",
    wrong_on="Q of shape [2, 3] and K of shape [4, 3]: the result has shape (2,) instead of (2, 4).",
    source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def einsum_scores(Q, K):
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share their last axis, got {Q.shape} and {K.shape}")
    return np.einsum("...qd,...kd->...q", Q, K)
'''),
Wrong(
    id="c34-01-wavg-allclose-tolerance",
    exercise="weighted_average_rows",
    cause="The sum test uses np.allclose(W.sum(-1), 1), whose default tolerance (rtol 1e-5 plus atol 1e-8) is ten times looser than the required 1e-6, so a row summing to 1 + 5e-6 is accepted; compare np.abs(total - 1) <= 1e-6 explicitly (with a NaN guard).",
    kind="tolerance too loose",
    wrong_on="W=[[0.5, 0.500005]], V=[[1.0], [2.0]]: the row sums to 1.000005 (off by more than 1e-6) but no ValueError is raised.",
    source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def weighted_average_rows(W, V):
    W = as_array(W, "W", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if W.shape[-1] != V.shape[-2]:
        raise ValueError(f"W has {W.shape[-1]} weights per row but V has {V.shape[-2]} rows")
    if not np.all(np.isfinite(W)):
        raise ValueError("W contains NaN or infinite weights")
    if np.any(W < 0):
        raise ValueError("W contains a negative weight")
    if not np.allclose(W.sum(axis=-1), 1):
        raise ValueError("a row of W does not sum to 1")
    return W @ V
'''),
Wrong(
    id="c34-01-wavg-no-negative-check",
    exercise="weighted_average_rows",
    cause="Only the row sums (and NaN/inf) are checked; a row like [1.5, -0.5] sums to 1 but is not convex. Also reject any W < 0.",
    kind="validation incomplete",
    wrong_on="W=[[1.5, -0.5]], V=[[1.0], [2.0]]: the row sums to 1 but has a negative weight, and no ValueError is raised.",
    source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def weighted_average_rows(W, V):
    W = as_array(W, "W", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if W.shape[-1] != V.shape[-2]:
        raise ValueError(f"W has {W.shape[-1]} weights per row but V has {V.shape[-2]} rows")
    if not np.all(np.isfinite(W)):
        raise ValueError("W contains NaN or infinite weights")
    total = W.sum(axis=-1)
    bad = np.abs(total - 1) > 1e-6
    if np.any(bad):
        raise ValueError(f"rows {np.argwhere(bad).ravel().tolist()} of W do not sum to 1")
    return W @ V
'''),
Wrong(
    id="c34-01-wavg-sum-over-columns",
    exercise="weighted_average_rows",
    cause="The sums are taken with W.sum(axis=-2), down each column, instead of along each row (axis=-1); a valid W with rows [1, 0] and [1, 0] is rejected and a W whose columns sum to 1 but rows do not is accepted.",
    kind="reduction over the wrong axis",
    wrong_on="W=[[1.0, 0.0], [1.0, 0.0]], V=[[1.0], [2.0]]: every row is convex, but the column sums are 2 and 0, so the function raises instead of returning [[1], [1]].",
    source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def weighted_average_rows(W, V):
    W = as_array(W, "W", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if W.shape[-1] != V.shape[-2]:
        raise ValueError(f"W has {W.shape[-1]} weights per row but V has {V.shape[-2]} rows")
    if not np.all(np.isfinite(W)):
        raise ValueError("W contains NaN or infinite weights")
    if np.any(W < 0):
        raise ValueError("W contains a negative weight")
    total = W.sum(axis=-2)
    if np.any(np.abs(total - 1) > 1e-6):
        raise ValueError("W's weights do not sum to 1")
    return W @ V
'''),
Wrong(
    id="c34-01-wavg-only-too-large",
    exercise="weighted_average_rows",
    cause="The sum test is total > 1 + 1e-6, which only catches rows whose sum is too large; a row summing to 0.5 passes. Test abs(total - 1) > 1e-6 (with NaN handled).",
    kind="one-sided comparison",
    wrong_on="W=[[0.25, 0.25]], V=[[1.0], [2.0]]: the row sums to 0.5 and no ValueError is raised.",
    source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def weighted_average_rows(W, V):
    W = as_array(W, "W", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if W.shape[-1] != V.shape[-2]:
        raise ValueError(f"W has {W.shape[-1]} weights per row but V has {V.shape[-2]} rows")
    if np.any(np.isnan(W)) or np.any(np.isinf(W)):
        raise ValueError("W contains NaN or infinite weights")
    if np.any(W < 0):
        raise ValueError("W contains a negative weight")
    total = W.sum(axis=-1)
    if np.any(total > 1 + 1e-6):
        raise ValueError("a row of W sums to more than 1")
    return W @ V
'''),
]

# ----------------------------------------------------------------- lesson 02
_SM_HEAD = r'''import numpy as np
from grader.learner.validation import as_array

def softmax(x, axis=-1):
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
'''
_SM_OK = _SM_HEAD + r'''    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
'''
_SCORES_OK = r'''
def attention_scores(Q, K):
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
'''
_SDPA_HEAD = r'''
def scaled_dot_product_attention(Q, K, V):
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V need one row per key: K has {K.shape[-2]} rows, V has "
                         f"{V.shape[-2]} (shapes {K.shape} and {V.shape})")
'''
_SDPA_OK = _SDPA_HEAD + r'''    weights = softmax(attention_scores(Q, K), axis=-1)
    return weights @ V, weights
'''
_SA_HEAD = r'''
def self_attention(X, W_q, W_k, W_v):
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
_AOQ_HEAD = r'''import numpy as np
from grader.learner.validation import as_array

def attend_one_query(q, K, V):
    q = as_array(q, "q", ndim=1)
    K = as_array(K, "K", ndim=2)
    V = as_array(V, "V", ndim=2)
    if K.shape[1] != q.shape[0] or V.shape[0] != K.shape[0]:
        raise ValueError(f"q {q.shape}, K {K.shape} and V {V.shape} do not fit: "
                         f"q must be [d_k], K [T_k, d_k] and V [T_k, d_v]")
'''
_SV_HEAD = r'''import numpy as np
from grader.learner.validation import as_array

def score_variance(d_k, n_samples, seed):
    if not isinstance(d_k, (int, np.integer)) or d_k < 1:
        raise ValueError(f"d_k must be a positive integer, got {d_k!r}")
    if not isinstance(n_samples, (int, np.integer)) or n_samples < 2:
        raise ValueError(f"n_samples must be an integer of at least 2, got {n_samples!r}")
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, d_k))   # one query per row
    k = rng.standard_normal((n_samples, d_k))   # one key per row
'''

WRONG += [
Wrong(
    id="c34-02-softmax-global-max",
    exercise="softmax",
    cause="The shift uses x.max() over the whole array instead of the maximum along `axis` (x.max(axis=axis, keepdims=True)); a row whose scores all lie far below the global maximum underflows to all zeros and 0/0 gives NaN.",
    kind="reduction over all axes instead of one",
    wrong_on="x=[[1000, 999], [-1000, -1001]], axis=-1: the second row's exps underflow to 0 and it comes out NaN instead of [0.731, 0.269].",
    source=_SM_HEAD + r'''    e = np.exp(x - x.max())
    return e / e.sum(axis=axis, keepdims=True)
'''),
Wrong(
    id="c34-02-softmax-max-no-keepdims",
    exercise="softmax",
    cause="x.max(axis=axis) is taken without keepdims=True, so for a square matrix with axis=-1 the row maxima broadcast along the last axis: entry (i, j) is shifted by the maximum of row j, not row i, and the rows are no longer a softmax of their own scores (for non-square input it raises). Keep the axis: x.max(axis=axis, keepdims=True).",
    kind="keepdims forgotten (broadcast along the wrong axis)",
    wrong_on="x=[[0, 0], [5, 0]], axis=-1: row 0 should be [0.5, 0.5] but is shifted by [0, 5] and comes out [0.993, 0.007].",
    source=_SM_HEAD + r'''    e = np.exp(x - x.max(axis=axis))
    return e / e.sum(axis=axis, keepdims=True)
'''),
Wrong(
    id="c34-02-softmax-sum-last-axis",
    exercise="softmax",
    cause="The maximum is taken along `axis` but the normalising sum is always e.sum(axis=-1, keepdims=True); the sum must run along the same `axis` the caller asked for.",
    kind="parameter replaced by its default",
    wrong_on="x=[[1, 2], [3, 4]], axis=0: each column should sum to 1 ([[0.119, 0.119], [0.881, 0.881]]) but the rows are normalised instead.",
    source=_SM_HEAD + r'''    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
'''),
Wrong(
    id="c34-02-softmax-subtract-min",
    exercise="softmax",
    cause="The scores are shifted by their minimum instead of their maximum; the shift still cancels, but the largest exponent becomes max - min, which overflows to inf when the scores are far apart (inf/inf = NaN). Subtract the maximum.",
    kind="max and min confused",
    wrong_on="x=[-1000, 1000]: exp(2000) overflows and the function returns [0, nan] instead of [0, 1].",
    source=_SM_HEAD + r'''    e = np.exp(x - x.min(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
'''),
Wrong(
    id="c34-02-softmax-inplace-input",
    exercise="softmax",
    cause="The shift is done in place (x -= x.max(...)); as_array returns the caller's own float array without copying, so the caller's scores are overwritten. The returned weights are right; write x = x - x.max(...) instead.",
    kind="in-place change of an input",
    wrong_on="x=np.array([1.0, 2.0]): the weights are right, but afterwards the caller's array holds [-1, 0].",
    source=_SM_HEAD + r'''    x -= x.max(axis=axis, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)
'''),
Wrong(
    id="c34-02-scores-full-transpose",
    exercise="attention_scores",
    cause="K.T reverses every axis, so with batch axes it is not the per-matrix transpose (for [B, T, d] it becomes [d, T, B]); use np.swapaxes(K, -1, -2).",
    kind="full transpose on a batched array",
    wrong_on="Q and K of shape [2, 3, 4]: Q @ K.T fails to broadcast (or, with equal sizes, mixes batch items) instead of returning [2, 3, 3] scores.",
    source=r'''import numpy as np
from grader.learner.validation import as_array

def attention_scores(Q, K):
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    return Q @ K.T / np.sqrt(Q.shape[-1])
'''),
Wrong(
    id="c34-02-scores-divide-by-dk",
    exercise="attention_scores",
    cause="The scores are divided by d_k itself instead of by its square root: the sqrt was left out, shrinking the scores by a further factor √d_k.",
    kind="sqrt forgotten",
    wrong_on="Q=[[1, 1, 1, 1]], K=[[1, 1, 1, 1]]: the score should be 4/2 = 2 but the function returns 1.",
    source=r'''import numpy as np
from grader.learner.validation import as_array

def attention_scores(Q, K):
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    d_k = Q.shape[-1]
    return Q @ np.swapaxes(K, -1, -2) / d_k
'''),
Wrong(
    id="c34-02-scores-sqrt-tq",
    exercise="attention_scores",
    cause="The scale uses Q.shape[-2], the number of queries (tokens), instead of Q.shape[-1], the length d_k of each query vector.",
    kind="wrong axis for a size",
    wrong_on="Q of shape [1, 4] and K of shape [1, 4], all ones: the score should be 4/√4 = 2 but the function divides by √1 and returns 4.",
    source=r'''import numpy as np
from grader.learner.validation import as_array

def attention_scores(Q, K):
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-2])
'''),
Wrong(
    id="c34-02-scores-multiply-sqrt",
    exercise="attention_scores",
    cause="The scores are multiplied by √d_k instead of divided by it (`*` where `/` belongs), so they grow with d_k instead of being brought back to unit variance.",
    kind="* instead of /",
    wrong_on="Q=[[1, 1, 1, 1]], K=[[1, 1, 1, 1]]: the score should be 2 but the function returns 8.",
    source=r'''import numpy as np
from grader.learner.validation import as_array

def attention_scores(Q, K):
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    return (Q @ np.swapaxes(K, -1, -2)) * np.sqrt(Q.shape[-1])
'''),
Wrong(
    id="c34-02-variance-all-products",
    exercise="score_variance",
    cause="np.var(q * k) takes the variance of all n_samples·d_k single products q_i k_i (each of variance 1) instead of first summing each row into one dot product; sum along axis 1 first: np.var((q * k).sum(axis=1)).",
    kind="reduction left out",
    wrong_on="d_k=64, n_samples=4000, seed=0: the true variance of q·k is about 64 but the function returns about 1.",
    source=_SV_HEAD + r'''    return np.var(q * k)
'''),
Wrong(
    id="c34-02-variance-sum-axis0",
    exercise="score_variance",
    cause="(q * k).sum(axis=0) sums over the samples instead of over the features, giving d_k numbers of variance n_samples; the dot product of each pair is the sum along axis=1.",
    kind="reduction over the wrong axis",
    wrong_on="d_k=16, n_samples=1000, seed=1: the variance should be about 16 but the function returns the spread of 16 sums of 1000 products, about 1000.",
    source=_SV_HEAD + r'''    dots = (q * k).sum(axis=0)
    return dots.var()
'''),
Wrong(
    id="c34-02-variance-all-pairs",
    exercise="score_variance",
    cause="q @ k.T builds the n_samples×n_samples matrix of every query against every key and takes the variance of all of it, instead of one dot product per row (pair i with pair i): use (q * k).sum(axis=1) or np.einsum('nd,nd->n', q, k).",
    kind="all pairs instead of matched pairs",
    wrong_on="d_k=8, n_samples=500, seed=2: the result is a different sample (n² cross products, not the n given pairs) and does not equal the variance of the n row dot products.",
    source=_SV_HEAD + r'''    return np.var(q @ k.T)
'''),
Wrong(
    id="c34-02-variance-std",
    exercise="score_variance",
    cause="np.std returns the standard deviation, the square root of the variance; the exercise asks for the variance, np.var.",
    kind="wrong statistic",
    wrong_on="d_k=16, n_samples=4000, seed=0: the variance is about 16 but the function returns about 4.",
    source=_SV_HEAD + r'''    return np.std((q * k).sum(axis=1))
'''),
Wrong(
    id="c34-02-sdpa-softmax-query-axis",
    exercise="scaled_dot_product_attention",
    cause="The softmax runs along axis=-2 (down the queries) instead of axis=-1 (along the keys), so the columns of the weights sum to 1 instead of each query's row.",
    kind="softmax over the wrong axis",
    wrong_on="Q, K, V random of shape [3, 4]: the weights' rows do not sum to 1 and the output differs from the reference.",
    source=_SM_OK + _SCORES_OK + _SDPA_HEAD + r'''    weights = softmax(attention_scores(Q, K), axis=-2)
    return weights @ V, weights
'''),
Wrong(
    id="c34-02-sdpa-double-scale",
    exercise="scaled_dot_product_attention",
    cause="attention_scores already divides by √d_k, and the result is divided by np.sqrt(Q.shape[-1]) once more, so the scores are divided by d_k overall and the weights come out too flat; scale once.",
    kind="scale applied twice",
    wrong_on="Q, K, V random of shape [3, 4] (d_k = 4): the weights are softmax(QKᵀ/4) instead of softmax(QKᵀ/2).",
    source=_SM_OK + _SCORES_OK + _SDPA_HEAD + r'''    scores = attention_scores(Q, K) / np.sqrt(Q.shape[-1])
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
'''),
Wrong(
    id="c34-02-sdpa-returns-swapped",
    exercise="scaled_dot_product_attention",
    cause="The function returns (weights, output) instead of (output, weights): the tuple items are in the wrong order.",
    kind="tuple items swapped",
    wrong_on="Q, K of shape [3, 4] and V of shape [3, 2]: the first item has shape (3, 3) instead of (3, 2).",
    source=_SM_OK + _SCORES_OK + _SDPA_HEAD + r'''    weights = softmax(attention_scores(Q, K), axis=-1)
    output = weights @ V
    return weights, output
'''),
Wrong(
    id="c34-02-sdpa-weights-transposed",
    exercise="scaled_dot_product_attention",
    cause="The output is np.swapaxes(weights, -1, -2) @ V: the weights are transposed before meeting V, so row i of the output mixes the values with column i of the weights (every query's weight on key i) instead of row i.",
    kind="transpose added",
    wrong_on="Q, K, V random of shape [3, 3]: the output differs from weights @ V.",
    source=_SM_OK + _SCORES_OK + _SDPA_HEAD + r'''    weights = softmax(attention_scores(Q, K), axis=-1)
    return np.swapaxes(weights, -1, -2) @ V, weights
'''),
Wrong(
    id="c34-02-one-query-no-scale",
    exercise="attend_one_query",
    cause="Each score is q·k_i without the division by √d_k (the unscaled formula quoted for intuition); the exercise's s_i is q·k_i / √d_k.",
    kind="scale left out",
    wrong_on="q=[1, 1, 1, 1], K=[[1, 1, 1, 1], [0, 0, 0, 0]], V=[[1.0], [0.0]]: the weight of key 0 should be e²/(e²+1) = 0.881 but is e⁴/(e⁴+1) = 0.982.",
    source=_AOQ_HEAD + r'''    scores = [np.sum(q * K[i]) for i in range(K.shape[0])]
    m = max(scores)
    exps = [np.exp(s - m) for s in scores]
    total = sum(exps)
    out = np.zeros(V.shape[1])
    for i in range(K.shape[0]):
        out += exps[i] / total * V[i]
    return out
'''),
Wrong(
    id="c34-02-one-query-running-denominator",
    exercise="attend_one_query",
    cause="The denominator is accumulated inside the same loop that adds up the outputs, so each value is divided by the running sum of the exps so far instead of by the total over all keys; compute the total before the loop that adds weight_i * V[i].",
    kind="statement moved into a loop (running value not final)",
    wrong_on="q=[0.0], K=[[0.0], [0.0]], V=[[1.0], [1.0]]: the answer is [1] but the function returns 1/1 + 1/2 = [1.5].",
    source=_AOQ_HEAD + r'''    d_k = q.shape[0]
    scores = [np.sum(q * K[i]) / np.sqrt(d_k) for i in range(K.shape[0])]
    m = max(scores)
    out = np.zeros(V.shape[1])
    total = 0.0
    for i in range(K.shape[0]):
        e = np.exp(scores[i] - m)
        total += e
        out += e / total * V[i]
    return out
'''),
Wrong(
    id="c34-02-one-query-out-size-dk",
    exercise="attend_one_query",
    cause="The accumulator is np.zeros(K.shape[1]), of length d_k, but the output has one entry per value feature: it must be np.zeros(V.shape[1]) (d_v).",
    kind="shape taken from the wrong operand",
    wrong_on="q of length 3, K of shape [2, 3] and V of shape [2, 2]: adding a length-2 value to a length-3 accumulator raises a broadcasting error.",
    source=_AOQ_HEAD + r'''    d_k = q.shape[0]
    scores = np.array([np.sum(q * K[i]) for i in range(K.shape[0])]) / np.sqrt(d_k)
    exps = np.exp(scores - scores.max())
    weights = exps / exps.sum()
    out = np.zeros(K.shape[1])
    for i in range(K.shape[0]):
        out += weights[i] * V[i]
    return out
'''),
Wrong(
    id="c34-02-self-attn-copy-paste-key",
    exercise="self_attention",
    cause="K is computed as X @ W_q (copied from the line above) instead of X @ W_k, so the keys equal the queries and W_k is never used.",
    kind="copy-paste operand",
    wrong_on="X random [4, 6], W_q, W_k, W_v random [6, 3]: the weights are softmax(Q Qᵀ/√3) instead of softmax(Q Kᵀ/√3).",
    source=_SM_OK + _SCORES_OK + _SDPA_OK + _SA_HEAD + r'''    Q = X @ W_q
    K = X @ W_q
    V = X @ W_v
    return scaled_dot_product_attention(Q, K, V)
'''),
Wrong(
    id="c34-02-self-attn-values-unprojected",
    exercise="self_attention",
    cause="The values are X itself: the learner projected only the queries and keys and passed X as V, so W_v is never applied; V must be X @ W_v.",
    kind="operand left out (projection skipped)",
    wrong_on="X random [4, 6], W_v of shape [6, 3]: the output has shape (4, 6) instead of (4, 3).",
    source=_SM_OK + _SCORES_OK + _SDPA_OK + _SA_HEAD + r'''    Q = X @ W_q
    K = X @ W_k
    return scaled_dot_product_attention(Q, K, X)
'''),
Wrong(
    id="c34-02-self-attn-column-projection",
    exercise="self_attention",
    cause="The projections are written W_q.T @ X.T (the column convention of lesson 03), which gives Q, K and V of shape [d_k, T] with tokens as columns; scaled_dot_product_attention expects tokens as rows, so attention runs over the feature axis. In the row convention the projection is X @ W_q.",
    kind="row/column convention mixed",
    wrong_on="X random [4, 6], W_q, W_k, W_v random [6, 3]: the weights have shape (3, 3) (features) instead of (4, 4) (tokens).",
    source=_SM_OK + _SCORES_OK + _SDPA_OK + _SA_HEAD + r'''    Q = W_q.T @ X.T
    K = W_k.T @ X.T
    V = W_v.T @ X.T
    return scaled_dot_product_attention(Q, K, V)
'''),
]

# ----------------------------------------------------------------- lesson 03: worksheet
WRONG += [
Wrong(
    id='c34-03-ws-Q-missed-term',
    exercise='worksheet_Q',
    cause='Entry Q[2, 2] (row 3 of W_Q, which picks features 3 and 5, against token 3) was written 1: only one of the two matching 1·1 products was counted; token 3 has both features, so the entry is 2.',
    kind='arithmetic slip: a term left out of a dot product',
    wrong_on='the published worksheet: entry (3, 3) of Q (row 3, token 3) is typed 1 instead of 2.',
    source=r'''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

# Q = W_Q X, K = W_K X, V = W_V X: 3 rows of 4 numbers each, one column per token.
WORKSHEET["Q"] = """
2 1 1 1
1 1 0 1
1 0 1 1
"""
'''),
Wrong(
    id='c34-03-ws-Q-transposed',
    exercise='worksheet_Q',
    cause='Q was typed with one query per row (4 rows of 3 numbers), the row convention of lesson 02; in this worksheet tokens are columns, so Q = W_Q X is 3 rows of 4 numbers, column j being the query of token j.',
    kind='transposed layout (row vs column convention)',
    wrong_on='the published worksheet: the typed Q is 4×3, the transpose of the 3×4 Q.',
    source=r'''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

# Q = W_Q X, K = W_K X, V = W_V X: 3 rows of 4 numbers each, one column per token.
WORKSHEET["Q"] = """
2 1 1
1 1 0
1 0 2
1 1 1
"""
'''),
Wrong(
    id='c34-03-ws-K-minus-sign-dropped',
    exercise='worksheet_K',
    cause='In row 2 of W_K the -1 weight on feature 5 was treated as +1, so K[1, 2] (token 3, which has feature 5) came out 1 instead of -1.',
    kind='sign flipped',
    wrong_on='the published worksheet: entry (2, 3) of K is typed 1 instead of -1.',
    source=r'''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

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
'''),
Wrong(
    id='c34-03-ws-K-negative-term-skipped',
    exercise='worksheet_K',
    cause="The product of W_K's -1 with token 3's feature 5 was skipped as if a negative weight contributed nothing, so K[1, 2] was written 0 instead of -1 (0·0 + 1·(-1) + ...).",
    kind='term with a negative weight dropped',
    wrong_on='the published worksheet: entry (2, 3) of K is typed 0 instead of -1.',
    source=r'''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

# Q = W_Q X, K = W_K X, V = W_V X: 3 rows of 4 numbers each, one column per token.
WORKSHEET["Q"] = """
2 1 1 1
1 1 0 1
1 0 2 1
"""
WORKSHEET["K"] = """
1 2 0 0
0 1 0 1
1 1 1 0
"""
'''),
Wrong(
    id='c34-03-ws-V-transposed',
    exercise='worksheet_V',
    cause='V was typed with one value per row (4 rows of 3), the row convention; here V = W_V X is 3 rows of 4 numbers, one column per token.',
    kind='transposed layout (row vs column convention)',
    wrong_on='the published worksheet: the typed V is 4×3, the transpose of the 3×4 V.',
    source=r'''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

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
    id='c34-03-ws-V-missed-term',
    exercise='worksheet_V',
    cause='V[0, 2] (row 1 of W_V, features 3 and 5, against token 3) was written 1: only one of the two products was counted; token 3 has both features, so the entry is 2.',
    kind='arithmetic slip: a term left out of a dot product',
    wrong_on='the published worksheet: entry (1, 3) of V is typed 1 instead of 2.',
    source=r'''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

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
1 0 1 1
1 0 1 2
0 0 1 1
"""
'''),
Wrong(
    id='c34-03-ws-scores-QtK',
    exercise='worksheet_scores',
    cause='The scores were computed as Qᵀ K (query i against key j in entry (i, j)) instead of Kᵀ Q; that is the transpose, so rows hold queries instead of keys.',
    kind='operands of the product swapped (transposed result)',
    wrong_on='the published worksheet: entry (1, 2) is typed 6 where Kᵀ Q has 1; the typed grid is the transpose of the answer.',
    source=r'''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

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
    id='c34-03-ws-scores-sign',
    exercise='worksheet_scores',
    cause='Entry (3, 2), k₃·q₂ with k₃ = (0, -1, 1) and q₂ = (1, 1, 0), was written 1 instead of -1: the minus sign of K[1, 2] was lost in the product.',
    kind='sign flipped',
    wrong_on='the published worksheet: entry (3, 2) of the scores is typed 1 instead of -1.',
    source=r'''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

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
    id='c34-03-ws-scaled-truncate',
    exercise='worksheet_scaled',
    cause='-1/2 was rounded toward zero to 0; the floor rounds down, also below zero, so floor(-1/2) = -1.',
    kind='truncation instead of floor',
    wrong_on='the published worksheet: entry (3, 2) of scaled is typed 0 instead of -1.',
    source=r'''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

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
    id='c34-03-ws-scaled-round-half-up',
    exercise='worksheet_scaled',
    cause='Every half was rounded up, the school rule (3/2 -> 2, 1/2 -> 1, -1/2 -> 0), instead of rounding down with the floor: floor(3/2) = 1, floor(1/2) = 0, floor(-1/2) = -1.',
    kind='rounding to nearest instead of floor',
    wrong_on='the published worksheet: the odd scores all come out one too high, e.g. entry (1, 1) is typed 2 instead of 1.',
    source=r'''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

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
    id='c34-03-ws-scaled-divide-by-3',
    exercise='worksheet_scaled',
    cause="The scores were divided by 3 (d_k = 3, forgetting the square root and the stand-in) before the floor; the worksheet's stand-in is floor(scores / 2).",
    kind='wrong divisor',
    wrong_on='the published worksheet: entry (1, 4), score 2, is typed floor(2/3) = 0 instead of floor(2/2) = 1.',
    source=r'''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

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
1 0 1 0
2 1 1 1
0 -1 0 0
0 0 0 0
"""
'''),
Wrong(
    id='c34-03-ws-A-rows-normalised',
    exercise='worksheet_A',
    cause="Each row of powers was divided by its row sum, the row convention's softmax; here every column is one query's weights, so each power must be divided by its column's sum.",
    kind='softmax over the wrong axis',
    wrong_on="the published worksheet: the typed A's rows sum to 1 and its columns do not; entry (1, 1) is 3/10 instead of 3/32.",
    source=r'''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

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
    id='c34-03-ws-A-from-unscaled-scores',
    exercise='worksheet_A',
    cause='The powers were taken of the raw scores (step 2) instead of the scaled scores of step 3: 3 ** scores in place of 3 ** floor(scores / 2).',
    kind='step skipped (scale left out)',
    wrong_on='the published worksheet: entry (1, 1) is typed 27/760 instead of 3/32.',
    source=r'''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

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
27/760 9/100 27/118 9/94
729/760 81/100 81/118 81/94
1/760 1/100 9/118 1/94
3/760 9/100 1/118 3/94
"""
'''),
Wrong(
    id='c34-03-ws-A-third-as-zero',
    exercise='worksheet_A',
    cause='3 ** -1 was taken as 0 instead of 1/3, so in column 2 key 3 gets weight 0 and the other weights are divided by 5 instead of 16/3.',
    kind='negative exponent mishandled',
    wrong_on='the published worksheet: column 2 is typed 1/5, 3/5, 0, 1/5 instead of 3/16, 9/16, 1/16, 3/16.',
    source=r'''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

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
3/32 1/5 3/16 3/14
27/32 3/5 9/16 9/14
1/32 0 3/16 1/14
1/32 1/5 1/16 1/14
"""
'''),
Wrong(
    id='c34-03-ws-Z-weights-transposed',
    exercise='worksheet_Z',
    cause="Z was computed as V Aᵀ, mixing the values with the rows of A; in the column convention query j's weights are column j of A, so Z = V A.",
    kind='transpose added',
    wrong_on='the published worksheet: entry (1, 1) is typed 153/224 instead of 3/16.',
    source=r'''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

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
    id='c34-03-ws-Z-powers-not-weights',
    exercise='worksheet_Z',
    cause='The values were mixed with the powers 3 ** scaled of step 4 before they were divided by their column sums, so each column of Z is its column sum times too large; use the normalised weights A.',
    kind='normalisation left out',
    wrong_on='the published worksheet: entry (1, 1) is typed 6 instead of 3/16.',
    source=r'''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

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

# ----------------------------------------------------------------- lesson 03: functions
_L3_IMPORTS = r'''import math
from fractions import Fraction

import numpy as np
from grader.learner.validation import as_fractions
'''
_KQ_HEAD = r'''
def key_query_scores(K, Q):
    K = as_fractions(K, "K")
    Q = as_fractions(Q, "Q")
    if K.shape[0] != Q.shape[0]:
        raise ValueError(f"K and Q must have the same number of rows d_k, got K of shape "
                         f"{K.shape} and Q of shape {Q.shape}")
'''
_KQ_OK = _KQ_HEAD + "    return K.T @ Q\n"
_FH_HEAD = r'''
def floor_half(S):
    S = as_fractions(S, "S")
'''
_FH_OK = _FH_HEAD + r'''    return np.array([[Fraction(math.floor(s / 2)) for s in row] for row in S], dtype=object)
'''
_SM3_HEAD = r'''
def softmax3_columns(S):
    S = as_fractions(S, "S", whole=True)
'''
_SM3_OK = _SM3_HEAD + r'''    P = np.array([[Fraction(3) ** int(s) for s in row] for row in S], dtype=object)
    return P / P.sum(axis=0, keepdims=True)
'''
_ABH_HEAD = r'''
def attention_by_hand(X, W_Q, W_K, W_V):
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
_RCA_HEAD = r'''
def row_convention_attention(X_rows, W_Q, W_K, W_V):
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
_HELPERS3 = _KQ_OK + _FH_OK + _SM3_OK

WRONG += [
Wrong(
    id="c34-03-kq-swapped-product",
    exercise="key_query_scores",
    cause="The function returns Q.T @ K (entry [i, j] = q_i · k_j) instead of K.T @ Q (entry [i, j] = k_i · q_j): rows must be keys and columns queries.",
    kind="operands swapped (transposed result)",
    wrong_on="K of shape 2×3 and Q of shape 2×2 (3 keys, 2 queries): the result is 2×3 instead of 3×2.",
    source=_L3_IMPORTS + _KQ_HEAD + "    return Q.T @ K\n"),
Wrong(
    id="c34-03-kq-float-product",
    exercise="key_query_scores",
    cause="The arrays are converted with .astype(float) before the product, so the result is floats, not exact Fractions, and fractional inputs like 1/3 are rounded; multiply the Fraction arrays themselves (K.T @ Q).",
    kind="exactness lost (float conversion)",
    wrong_on="K=[[Fraction(1, 3)]], Q=[[3]]: the exact score is Fraction(1) but the function returns the float 1.0 (and 1/10 · 1/10 comes out 0.010000000000000002).",
    source=_L3_IMPORTS + _KQ_HEAD + "    return K.T.astype(float) @ Q.astype(float)\n"),
Wrong(
    id="c34-03-kq-prescaled",
    exercise="key_query_scores",
    cause="The product is already divided by 2 (the learner folded step 3's scale into step 2); key_query_scores must return the raw Kᵀ Q, floor_half does the scaling.",
    kind="scale applied in the wrong step",
    wrong_on="K=[[1]], Q=[[2]]: the score is 2 but the function returns 1.",
    source=_L3_IMPORTS + _KQ_HEAD + "    return (K.T @ Q) / 2\n"),
Wrong(
    id="c34-03-floor-half-int-first",
    exercise="floor_half",
    cause="int(s) // 2 truncates the entry toward zero before halving; for a negative non-whole entry such as -1/2, int(-1/2) is 0, so the result is 0 instead of floor(-1/4) = -1. Apply math.floor to s / 2 itself (or use s // 2 on the Fraction).",
    kind="truncation toward zero hidden in int()",
    wrong_on="S=[[Fraction(-1, 2)]]: floor(-1/4) = -1 but the function returns 0.",
    source=_L3_IMPORTS + _FH_HEAD + r'''    return np.array([[Fraction(int(s) // 2) for s in row] for row in S], dtype=object)
'''),
Wrong(
    id="c34-03-floor-half-floor-then-halve",
    exercise="floor_half",
    cause="The floor is taken before the halving, Fraction(math.floor(s)) / 2, so an odd score keeps its half (3 -> 3/2); floor after dividing: math.floor(s / 2).",
    kind="operations in the wrong order",
    wrong_on="S=[[3]]: floor(3/2) = 1 but the function returns 3/2.",
    source=_L3_IMPORTS + _FH_HEAD + r'''    return np.array([[Fraction(math.floor(s)) / 2 for s in row] for row in S], dtype=object)
'''),
Wrong(
    id="c34-03-floor-half-np-floor",
    exercise="floor_half",
    cause="np.floor(S / 2) is called on an object array of Fractions; NumPy's floor has no loop for Fraction objects and raises a TypeError. Floor each entry with math.floor (or //) and keep it a Fraction.",
    kind="NumPy ufunc on an object array",
    wrong_on="S=[[1, 2]]: the function raises TypeError instead of returning [[0, 1]].",
    source=_L3_IMPORTS + _FH_HEAD + r'''    return np.floor(S / 2)
'''),
Wrong(
    id="c34-03-softmax3-total-sum",
    exercise="softmax3_columns",
    cause="The powers are divided by P.sum(), the sum of the whole matrix, instead of by each column's own sum (P.sum(axis=0, keepdims=True)); the columns then do not each add up to 1.",
    kind="reduction over all axes instead of one",
    wrong_on="S=[[0, 0], [0, 1]]: the columns should be [1/2, 1/2] and [1/4, 3/4] but every entry is divided by 6.",
    source=_L3_IMPORTS + _SM3_HEAD + r'''    P = np.array([[Fraction(3) ** int(s) for s in row] for row in S], dtype=object)
    return P / P.sum()
'''),
Wrong(
    id="c34-03-softmax3-rows",
    exercise="softmax3_columns",
    cause="Each row is divided by its row sum (axis=1), the row-convention softmax; in this lesson each column is one query's weights, so divide by the column sums (axis=0).",
    kind="softmax over the wrong axis",
    wrong_on="S=[[0, 1], [0, 0]]: the columns should be [1/2, 1/2] and [3/4, 1/4], but the function returns rows [1/4, 3/4] and [1/2, 1/2].",
    source=_L3_IMPORTS + _SM3_HEAD + r'''    P = np.array([[Fraction(3) ** int(s) for s in row] for row in S], dtype=object)
    return P / P.sum(axis=1, keepdims=True)
'''),
Wrong(
    id="c34-03-softmax3-colsum-broadcast-rows",
    exercise="softmax3_columns",
    cause="The column sums are taken correctly (axis=0), but then reshaped with [:, None], which turns them into a column and divides row i by the sum of column i; leave them as a row (keepdims=True, or no reshape).",
    kind="broadcasting along the wrong axis",
    wrong_on="S=[[0, 1], [0, 0]]: column sums are 2 and 4; row 0 is divided by 2 and row 1 by 4, giving [[1/2, 3/2], [1/4, 1/4]].",
    source=_L3_IMPORTS + _SM3_HEAD + r'''    P = np.array([[Fraction(3) ** int(s) for s in row] for row in S], dtype=object)
    return P / P.sum(axis=0)[:, None]
'''),
Wrong(
    id="c34-03-by-hand-args-swapped",
    exercise="attention_by_hand",
    cause="key_query_scores is called as key_query_scores(Q, K), with the arguments swapped, so the scores are Qᵀ K (rows = queries) and the softmax then runs over the wrong tokens; call key_query_scores(K, Q).",
    kind="arguments swapped",
    wrong_on="the published worksheet (X, W_Q, W_K, W_V from courseware.worksheet): scores comes out as the transpose of Kᵀ Q, and A and Z are wrong with it.",
    source=_L3_IMPORTS + _HELPERS3 + _ABH_HEAD + r'''    Q, K, V = W_Q @ X, W_K @ X, W_V @ X
    scores = key_query_scores(Q, K)
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    Z = V @ A
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
'''),
Wrong(
    id="c34-03-by-hand-softmax-of-scores",
    exercise="attention_by_hand",
    cause="softmax3_columns is given the raw scores instead of the scaled ones, so the floor(x/2) step is computed and returned but never used; A must be softmax3_columns(scaled).",
    kind="wrong variable passed on",
    wrong_on="the published worksheet: A[0, 0] is 27/760 (powers of the raw scores) instead of 3/32, and Z is wrong with it.",
    source=_L3_IMPORTS + _HELPERS3 + _ABH_HEAD + r'''    Q, K, V = W_Q @ X, W_K @ X, W_V @ X
    scores = key_query_scores(K, Q)
    scaled = floor_half(scores)
    A = softmax3_columns(scores)
    Z = V @ A
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
'''),
Wrong(
    id="c34-03-by-hand-values-from-WK",
    exercise="attention_by_hand",
    cause="V is computed as W_K @ X (a copy-paste of the line for K) instead of W_V @ X, so the values equal the keys and W_V is never used.",
    kind="copy-paste operand",
    wrong_on="the published worksheet: V comes out equal to K ([1, 2, 0, 0] in the first row instead of [1, 0, 2, 1]), and Z is wrong with it.",
    source=_L3_IMPORTS + _HELPERS3 + _ABH_HEAD + r'''    Q = W_Q @ X
    K = W_K @ X
    V = W_K @ X
    scores = key_query_scores(K, Q)
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    Z = V @ A
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
'''),
Wrong(
    id="c34-03-by-hand-Z-A-transposed",
    exercise="attention_by_hand",
    cause="Z is computed as V @ A.T: the weights are transposed, so column j of Z mixes the values with row j of A (key j's weight in every query) instead of column j, query j's own weights. In the column convention Z = V A.",
    kind="transpose added",
    wrong_on="the published worksheet: Z[0, 0] is 153/224 instead of 3/16.",
    source=_L3_IMPORTS + _HELPERS3 + _ABH_HEAD + r'''    Q, K, V = W_Q @ X, W_K @ X, W_V @ X
    scores = key_query_scores(K, Q)
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    Z = V @ A.T
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
'''),
Wrong(
    id="c34-03-rows-softmax-columns-reused",
    exercise="row_convention_attention",
    cause="softmax3_columns is applied to the row-convention scores Q Kᵀ as they are, so each column (one key's scores across queries) is normalised; in the row convention each row is one query's weights: use softmax3_columns(scaled.T).T (or normalise the rows).",
    kind="softmax over the wrong axis",
    wrong_on="the published worksheet, X_rows = X.T: A's rows do not sum to 1 and A is not the transpose of the column-convention A; Z is wrong with it.",
    source=_L3_IMPORTS + _HELPERS3 + _RCA_HEAD + r'''    Q, K, V = X_rows @ W_Q.T, X_rows @ W_K.T, X_rows @ W_V.T
    scores = Q @ K.T
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    Z = A @ V
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
'''),
Wrong(
    id="c34-03-rows-scores-key-major",
    exercise="row_convention_attention",
    cause="The scores are computed with key_query_scores(K.T, Q.T), the column-convention Kᵀ Q, and kept that way, so row i holds key i instead of query i; in the row convention the scores are Q Kᵀ (the transpose).",
    kind="transpose left out",
    wrong_on="the published worksheet, X_rows = X.T: scores comes out as Kᵀ Q instead of Q Kᵀ, and the rows of A and Z are wrong with it.",
    source=_L3_IMPORTS + _HELPERS3 + _RCA_HEAD + r'''    Q, K, V = X_rows @ W_Q.T, X_rows @ W_K.T, X_rows @ W_V.T
    scores = key_query_scores(K.T, Q.T)
    scaled = floor_half(scores)
    A = softmax3_columns(scaled.T).T
    Z = A @ V
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
'''),
Wrong(
    id="c34-03-rows-Z-AT-V",
    exercise="row_convention_attention",
    cause="Z is computed as A.T @ V: the transpose of A carried over from the column convention; in the row convention row i of A is query i's weights and Z = A V.",
    kind="transpose added",
    wrong_on="the published worksheet, X_rows = X.T: Z is not the transpose of the column-convention Z.",
    source=_L3_IMPORTS + _HELPERS3 + _RCA_HEAD + r'''    Q, K, V = X_rows @ W_Q.T, X_rows @ W_K.T, X_rows @ W_V.T
    scores = Q @ K.T
    scaled = floor_half(scores)
    A = softmax3_columns(scaled.T).T
    Z = A.T @ V
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
'''),
]

# ----------------------------------------------------------------- lesson 04
_L4_IMPORTS = r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int
'''
_CM_OK = r'''
def causal_mask(T):
    T = positive_int(T, "T")
    return np.tril(np.ones((T, T), dtype=bool))
'''
_PM_OK = r'''
def padding_mask(lengths, T):
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return np.arange(T)[None, :] < lengths[:, None]
'''
_AM_HEAD = r'''
def attention_mask(lengths, T, causal=True):
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    if not isinstance(causal, (bool, np.bool_)):
        raise ValueError(f"causal must be True or False, got {causal!r}")
'''
_MS_HEAD = r'''
def masked_softmax(scores, mask):
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
'''
_MS_OK = _MS_HEAD + r'''    s = np.where(mask, scores, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(s - m)
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total > 0, total, 1.0)
'''
_MA_HEAD = r'''
def masked_attention(Q, K, V, mask=None):
    Q, K, V = as_array(Q, "Q", min_ndim=2), as_array(K, "K", min_ndim=2), as_array(V, "V", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share d_k, got shapes {Q.shape} and {K.shape}")
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V must have the same number of keys, got {K.shape} and {V.shape}")
    if mask is not None:
        mask = bool_mask(mask)  # must be boolean; masked_softmax checks that it fits the scores
'''
_IC_HEAD = r'''
def is_causal(attend, T, d, seed=0):
    if not callable(attend):
        raise ValueError(f"attend must be a function of X [T, d], got {type(attend).__name__}")
    T, d = positive_int(T, "T"), positive_int(d, "d")
    rng = np.random.default_rng(seed)
'''
_MHA_HEAD = r'''
def to_mha_key_padding_mask(lengths, T):
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
'''
_PA_HEAD = r'''
def prefix_average(X):
    X = as_array(X, "X", min_ndim=2)
'''

WRONG += [
Wrong(
    id="c34-04-causal-triu",
    exercise="causal_mask",
    cause="np.triu keeps the upper triangle, True where key j >= query i (the future); the row-convention causal mask is the lower triangle, np.tril.",
    kind="wrong triangle",
    wrong_on="T=2: the answer is [[True, False], [True, True]] but the function returns [[True, True], [False, True]].",
    source=_L4_IMPORTS + r'''
def causal_mask(T):
    T = positive_int(T, "T")
    return np.triu(np.ones((T, T), dtype=bool))
'''),
Wrong(
    id="c34-04-causal-strict-lower",
    exercise="causal_mask",
    cause="np.tril(..., k=-1) leaves out the diagonal, so a token may not attend to itself and the first query has no allowed key at all; use k=0 (the default), diagonal included.",
    kind="triangle offset off by one",
    wrong_on="T=1: the answer is [[True]] but the function returns [[False]].",
    source=_L4_IMPORTS + r'''
def causal_mask(T):
    T = positive_int(T, "T")
    return np.tril(np.ones((T, T), dtype=bool), k=-1)
'''),
Wrong(
    id="c34-04-causal-float-dtype",
    exercise="causal_mask",
    cause="np.tril(np.ones((T, T))) has the right pattern but dtype float64 (1.0 and 0.0), not bool as the exercise requires; create the ones with dtype=bool or compare indices.",
    kind="wrong dtype",
    wrong_on="T=3: the values are right but the array's dtype is float64 instead of bool (and bool_mask rejects it when it is passed on as a mask).",
    source=_L4_IMPORTS + r'''
def causal_mask(T):
    T = positive_int(T, "T")
    return np.tril(np.ones((T, T)))
'''),
Wrong(
    id="c34-04-padding-transposed-grid",
    exercise="padding_mask",
    cause="The positions were made the column and the lengths the row (np.arange(T)[:, None] < lengths[None, :]), which builds the [T, B] grid; the mask is [B, T]: a column of lengths against a row of positions.",
    kind="broadcast axes swapped",
    wrong_on="lengths=[3, 2], T=3: the result has shape (3, 2) instead of (2, 3).",
    source=_L4_IMPORTS + r'''
def padding_mask(lengths, T):
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return np.arange(T)[:, None] < lengths[None, :]
'''),
Wrong(
    id="c34-04-padding-le",
    exercise="padding_mask",
    cause="Positions are compared with <= lengths, so position lengths[b] (the first padding token) is also marked real; a sentence of length L has real tokens 0..L-1, use <.",
    kind="comparison off by one",
    wrong_on="lengths=[2], T=3: the answer is [[True, True, False]] but the function returns [[True, True, True]].",
    source=_L4_IMPORTS + r'''
def padding_mask(lengths, T):
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return np.arange(T)[None, :] <= lengths[:, None]
'''),
Wrong(
    id="c34-04-padding-no-column",
    exercise="padding_mask",
    cause="lengths is compared without [:, None] (np.arange(T) < lengths); the two 1-D arrays are compared element by element instead of broadcasting to a [B, T] grid, which fails when B != T and gives a 1-D answer when B == T.",
    kind="[:, None] left out (broadcasting)",
    wrong_on="lengths=[1, 2, 3], T=3: the result is the 1-D [True, True, True] instead of the 3×3 grid.",
    source=_L4_IMPORTS + r'''
def padding_mask(lengths, T):
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return np.arange(T) < lengths
'''),
Wrong(
    id="c34-04-attnmask-pads-queries",
    exercise="attention_mask",
    cause="The padding mask was broadcast as padding[:, :, None], which blanks the <pad> token's own row (queries) instead of its column (keys); padding hides keys, so it must be padding[:, None, :].",
    kind="mask on the wrong axis (queries instead of keys)",
    wrong_on="lengths=[1], T=2, causal=False: the answer is [[[True, False], [True, False]]] but the function returns [[[True, True], [False, False]]].",
    source=_L4_IMPORTS + _CM_OK + _PM_OK + _AM_HEAD + r'''    padding = padding_mask(lengths, T)
    mask = np.broadcast_to(padding[:, :, None], (len(lengths), T, T))
    if causal:
        mask = mask & causal_mask(T)[None, :, :]
    return mask
'''),
Wrong(
    id="c34-04-attnmask-or",
    exercise="attention_mask",
    cause="The causal and padding masks are combined with | (allowed if either allows it) instead of & (allowed only if both allow it), so real queries can see the future and everyone can see real keys after them.",
    kind="wrong logical operator",
    wrong_on="lengths=[2], T=2, causal=True: the answer is [[[True, False], [True, True]]] but the function returns all True.",
    source=_L4_IMPORTS + _CM_OK + _PM_OK + _AM_HEAD + r'''    padding = padding_mask(lengths, T)
    mask = np.broadcast_to(padding[:, None, :], (len(lengths), T, T))
    if causal:
        mask = padding[:, None, :] | causal_mask(T)[None, :, :]
    return mask
'''),
Wrong(
    id="c34-04-attnmask-noncausal-unbroadcast",
    exercise="attention_mask",
    cause="With causal=False the function returns padding[:, None, :] as it is, of shape [B, 1, T]; the exercise asks for a [B, T, T] mask in both cases, so broadcast it (np.broadcast_to or & with np.ones((T, T), bool)).",
    kind="shape not broadcast to the full grid",
    wrong_on="lengths=[3, 2], T=3, causal=False: the result has shape (2, 1, 3) instead of (2, 3, 3).",
    source=_L4_IMPORTS + _CM_OK + _PM_OK + _AM_HEAD + r'''    key_padding = padding_mask(lengths, T)[:, None, :]
    if causal:
        return key_padding & causal_mask(T)[None, :, :]
    return key_padding
'''),
Wrong(
    id="c34-04-msoftmax-fill-1e9",
    exercise="masked_softmax",
    cause="Masked scores are filled with -1e9 instead of -inf; a row with no allowed key then holds equal scores and the softmax spreads the weight evenly over forbidden keys, where the function must return zeros for that row.",
    kind="-inf vs large negative fill",
    wrong_on="scores=[[1.0, 2.0]], mask=[[False, False]]: the answer is [[0, 0]] but the function returns [[0.5, 0.5]].",
    source=_L4_IMPORTS + _MS_HEAD + r'''    s = np.where(mask, scores, -1e9)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
'''),
Wrong(
    id="c34-04-msoftmax-empty-row-nan",
    exercise="masked_softmax",
    cause="The usual stable softmax is applied after the -inf fill with no special case, so a row with no allowed key computes -inf - (-inf) = NaN; replace an infinite row maximum by 0 (any finite shift) and divide by 1 where the sum is 0, so that row comes out zeros.",
    kind="fully masked row not handled",
    wrong_on="scores=[[1.0, 2.0]], mask=[[False, False]]: the answer is [[0, 0]] but the function returns [[nan, nan]].",
    source=_L4_IMPORTS + _MS_HEAD + r'''    s = np.where(mask, scores, -np.inf)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
'''),
Wrong(
    id="c34-04-msoftmax-mask-inverted",
    exercise="masked_softmax",
    cause="np.where(mask, -np.inf, scores) puts -inf where the mask is True, but True means 'may attend': the allowed keys get weight 0 and the forbidden ones share the weight. Write np.where(mask, scores, -np.inf).",
    kind="mask polarity inverted",
    wrong_on="scores=[1.0, 2.0, 3.0], mask=[True, True, False]: the answer is [0.269, 0.731, 0] but the function returns [0, 0, 1].",
    source=_L4_IMPORTS + _MS_HEAD + r'''    s = np.where(mask, -np.inf, scores)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(s - m)
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total > 0, total, 1.0)
'''),
Wrong(
    id="c34-04-msoftmax-max-before-mask",
    exercise="masked_softmax",
    cause="The row maximum is taken over the raw scores, masked keys included, before the -inf fill; when a masked key has a much larger score, every allowed exp underflows to 0 and the row comes out zeros (or NaN). Take the maximum of the masked scores.",
    kind="statement in the wrong order (shift before masking)",
    wrong_on="scores=[0.0, 1.0, 900.0], mask=[True, True, False]: the answer is [0.269, 0.731, 0] but the allowed exps underflow and the function returns [0, 0, 0].",
    source=_L4_IMPORTS + _MS_HEAD + r'''    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    e = np.where(mask, e, 0.0)
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total > 0, total, 1.0)
'''),
Wrong(
    id="c34-04-msoftmax-sum-over-queries",
    exercise="masked_softmax",
    cause="The normalising sum runs over axis=-2 (down the queries) instead of axis=-1 (along the keys), so each column, not each query's row, sums to 1.",
    kind="reduction over the wrong axis",
    wrong_on="scores=zeros((2, 2)), mask=causal [[True, False], [True, True]]: the answer is [[1, 0], [0.5, 0.5]] but the function returns [[0.5, 0], [0.5, 1]].",
    source=_L4_IMPORTS + _MS_HEAD + r'''    s = np.where(mask, scores, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(s - m)
    total = e.sum(axis=-2, keepdims=True)
    return e / np.where(total > 0, total, 1.0)
'''),
Wrong(
    id="c34-04-mattn-no-scale",
    exercise="masked_attention",
    cause="The scores are Q Kᵀ without the division by √d_k; masked attention is scaled dot-product attention, so divide by np.sqrt(Q.shape[-1]).",
    kind="scale left out",
    wrong_on="Q, K, V random of shape [3, 4], mask=None: the weights are softmax(QKᵀ) instead of softmax(QKᵀ/2).",
    source=_L4_IMPORTS + _MS_OK + _MA_HEAD + r'''    scores = Q @ np.swapaxes(K, -1, -2)
    if mask is None:
        mask = np.ones(scores.shape, dtype=bool)
    weights = masked_softmax(scores, mask)
    return weights @ V, weights
'''),
Wrong(
    id="c34-04-mattn-full-transpose",
    exercise="masked_attention",
    cause="K.T is used for the scores; with a batch axis it reverses every axis ([B, T, d] -> [d, T, B]) instead of swapping the last two, so batched input fails or mixes batch items. Use np.swapaxes(K, -1, -2).",
    kind="full transpose on a batched array",
    wrong_on="Q, K, V of shape [2, 3, 4] with the causal mask of T=3: the product Q @ K.T does not broadcast and the function raises instead of returning [2, 3, 4] outputs.",
    source=_L4_IMPORTS + _MS_OK + _MA_HEAD + r'''    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    if mask is None:
        mask = np.ones(scores.shape, dtype=bool)
    weights = masked_softmax(scores, mask)
    return weights @ V, weights
'''),
Wrong(
    id="c34-04-mattn-sqrt-num-keys",
    exercise="masked_attention",
    cause="The scale is np.sqrt(K.shape[-2]), the square root of the number of keys, instead of np.sqrt(Q.shape[-1]), the square root of d_k.",
    kind="wrong axis for a size",
    wrong_on="Q, K, V random with T=3 tokens and d_k=4: the scores are divided by √3 instead of 2.",
    source=_L4_IMPORTS + _MS_OK + _MA_HEAD + r'''    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-2])
    if mask is None:
        mask = np.ones(scores.shape, dtype=bool)
    weights = masked_softmax(scores, mask)
    return weights @ V, weights
'''),
Wrong(
    id="c34-04-mattn-none-means-causal",
    exercise="masked_attention",
    cause="mask=None is replaced by a causal (lower-triangular) mask, but None means no mask at all: every query may attend to every key, so it must become all True.",
    kind="default replaced by a different default",
    wrong_on="Q, K, V random of shape [3, 4], mask=None: the weights above the diagonal are 0 instead of positive.",
    source=_L4_IMPORTS + _MS_OK + _MA_HEAD + r'''    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is None:
        mask = np.tril(np.ones(scores.shape[-2:], dtype=bool))
    weights = masked_softmax(scores, mask)
    return weights @ V, weights
'''),
Wrong(
    id="c34-04-iscausal-off-by-one",
    exercise="is_causal",
    cause="The comparison uses outputs [:t] instead of [:t + 1], so output t itself is never compared after tokens t+1.. change; a layer whose output t reads token t+1 passes. Compare after[:t + 1] with before[:t + 1].",
    kind="slice off by one",
    wrong_on="attend = lambda X: X + np.roll(X, -1, axis=0) (output t reads token t+1), T=4, d=2: the answer is False but the function returns True.",
    source=_L4_IMPORTS + _IC_HEAD + r'''    X = rng.normal(size=(T, d))
    before = attend(X)
    for t in range(T):
        X_new = X.copy()
        X_new[t + 1:] = rng.normal(size=(T - t - 1, d))
        after = attend(X_new)
        if not np.allclose(after[:t], before[:t]):
            return False
    return True
'''),
Wrong(
    id="c34-04-iscausal-replaces-token-t",
    exercise="is_causal",
    cause="The replacement is X_new[t:] instead of X_new[t + 1:], so token t itself changes too, and output t (which may depend on it) moves: every real attention layer, causal or not, is reported as not causal.",
    kind="slice off by one",
    wrong_on="attend = the identity (lambda X: X.copy()), T=3, d=2: it is causal, but the function returns False.",
    source=_L4_IMPORTS + _IC_HEAD + r'''    X = rng.normal(size=(T, d))
    before = attend(X)
    for t in range(T):
        X_new = X.copy()
        X_new[t:] = rng.normal(size=(T - t, d))
        if not np.allclose(attend(X_new)[:t + 1], before[:t + 1]):
            return False
    return True
'''),
Wrong(
    id="c34-04-iscausal-no-copy",
    exercise="is_causal",
    cause="X_new = X makes a second name for the same array, not a copy, so each iteration's replacement stays in X: by step t, tokens up to t were already changed by earlier steps, and a causal layer is reported as not causal. Use X.copy().",
    kind="aliasing instead of copying (input changed in place)",
    wrong_on="attend = the identity (lambda X: X.copy()), T=3, d=2: at t = 1, token 1 was replaced in step 0, so output 1 moved and the function returns False instead of True.",
    source=_L4_IMPORTS + _IC_HEAD + r'''    X = rng.normal(size=(T, d))
    before = attend(X)
    for t in range(T):
        X_new = X
        X_new[t + 1:] = rng.normal(size=(T - t - 1, d))
        if not np.allclose(attend(X_new)[:t + 1], before[:t + 1]):
            return False
    return True
'''),
Wrong(
    id="c34-04-iscausal-return-in-loop",
    exercise="is_causal",
    cause="return True is indented inside the for loop, so the function stops after checking t = 0 and never tests later positions; return True only after the loop has finished.",
    kind="statement moved into a loop (early return)",
    wrong_on="attend whose output 1 reads token 2 (lambda X: X + np.where(np.arange(len(X))[:, None] == 1, np.roll(X, -1, axis=0), 0)), T=3, d=2: the answer is False but the function returns True after t = 0.",
    source=_L4_IMPORTS + _IC_HEAD + r'''    X = rng.normal(size=(T, d))
    before = attend(X)
    for t in range(T):
        X_new = X.copy()
        X_new[t + 1:] = rng.normal(size=(T - t - 1, d))
        if not np.allclose(attend(X_new)[:t + 1], before[:t + 1]):
            return False
        return True
'''),
Wrong(
    id="c34-04-colmask-same-as-rows",
    exercise="causal_mask_columns",
    cause="np.tril was kept from the row convention; with keys as rows and queries as columns the rule i <= j fills the upper triangle, so it must be np.triu (the transpose of the row mask).",
    kind="wrong triangle (convention not transposed)",
    wrong_on="T=2: the answer is [[True, True], [False, True]] but the function returns [[True, False], [True, True]].",
    source=_L4_IMPORTS + r'''
def causal_mask_columns(T):
    T = positive_int(T, "T")
    return np.tril(np.ones((T, T), dtype=bool))
'''),
Wrong(
    id="c34-04-colmask-strict-upper",
    exercise="causal_mask_columns",
    cause="np.triu(..., k=1) starts above the diagonal, so key i = query j is masked and a token cannot see itself; the diagonal belongs to the mask (k=0).",
    kind="triangle offset off by one",
    wrong_on="T=1: the answer is [[True]] but the function returns [[False]].",
    source=_L4_IMPORTS + r'''
def causal_mask_columns(T):
    T = positive_int(T, "T")
    return np.triu(np.ones((T, T), dtype=bool), k=1)
'''),
Wrong(
    id="c34-04-mha-course-polarity",
    exercise="to_mha_key_padding_mask",
    cause="The course's padding mask (True at the real tokens) is returned as it is; nn.MultiheadAttention's key_padding_mask means True = ignore, so it must be inverted: True at the padding.",
    kind="mask polarity inverted",
    wrong_on="lengths=[2], T=3: the answer is tensor([[False, False, True]]) but the function returns tensor([[True, True, False]]).",
    source=_L4_IMPORTS + _MHA_HEAD + r'''    real = np.arange(T)[None, :] < lengths[:, None]
    return torch.from_numpy(real)
'''),
Wrong(
    id="c34-04-mha-strict-greater",
    exercise="to_mha_key_padding_mask",
    cause="The padding is marked with positions > lengths instead of >= lengths, so the first padding position (index lengths[b]) is not ignored; padding starts at index L for a sentence of length L.",
    kind="comparison off by one",
    wrong_on="lengths=[2], T=3: the answer is tensor([[False, False, True]]) but the function returns all False.",
    source=_L4_IMPORTS + _MHA_HEAD + r'''    pad = np.arange(T)[None, :] > lengths[:, None]
    return torch.from_numpy(pad)
'''),
Wrong(
    id="c34-04-mha-float-mask",
    exercise="to_mha_key_padding_mask",
    cause="The mask is returned as a float tensor (1.0 at the padding); nn.MultiheadAttention adds a float key_padding_mask to the scores instead of ignoring those keys, so padding keeps weight. Return dtype torch.bool.",
    kind="wrong dtype changes the meaning",
    wrong_on="lengths=[2], T=3: the result has dtype float32, and a real nn.MultiheadAttention still gives the <pad> key positive weight (its score is only raised by 1).",
    source=_L4_IMPORTS + _MHA_HEAD + r'''    pad = np.arange(T)[None, :] >= lengths[:, None]
    return torch.tensor(pad, dtype=torch.float32)
'''),
Wrong(
    id="c34-04-prefix-no-column",
    exercise="prefix_average",
    cause="The lower triangle is divided by np.arange(1, T + 1) without [:, None], so column j (not row i) is divided by j + 1 and the rows of W no longer sum to 1; divide by np.arange(1, T + 1)[:, None].",
    kind="[:, None] left out (broadcasting)",
    wrong_on="X=[[1.0], [1.0]]: the answer is [[1], [1]] but W is [[1, 0], [1, 1/2]] and the function returns [[1], [1.5]].",
    source=_L4_IMPORTS + _PA_HEAD + r'''    T = X.shape[-2]
    W = np.tril(np.ones((T, T))) / np.arange(1, T + 1)
    return W @ X
'''),
Wrong(
    id="c34-04-prefix-zero-based-count",
    exercise="prefix_average",
    cause="Row i is divided by np.arange(T)[:, None], i.e. by i instead of i + 1 (row i averages i + 1 tokens); row 0 is divided by 0 and becomes inf and nan. Use np.arange(1, T + 1).",
    kind="off by one in a count",
    wrong_on="X=[[2.0], [4.0]]: the answer is [[2], [3]] but row 0 of W is [1/0, 0/0] = [inf, nan], so the function returns [[nan], [6]].",
    source=_L4_IMPORTS + _PA_HEAD + r'''    T = X.shape[-2]
    W = np.tril(np.ones((T, T))) / np.arange(T)[:, None]
    return W @ X
'''),
Wrong(
    id="c34-04-prefix-divide-by-T",
    exercise="prefix_average",
    cause="Every row of the lower triangle is divided by T (the whole length) instead of by its own count i + 1, so early rows are averaged over tokens they cannot see and come out too small.",
    kind="wrong normaliser",
    wrong_on="X=[[2.0], [4.0]]: the answer is [[2], [3]] but the function returns [[1], [3]].",
    source=_L4_IMPORTS + _PA_HEAD + r'''    T = X.shape[-2]
    W = np.tril(np.ones((T, T))) / T
    return W @ X
'''),
Wrong(
    id="c34-04-prefix-cumsum",
    exercise="prefix_average",
    cause="The values are right, but np.cumsum is used, which the exercise forbids: it asks for one matrix product W @ X with W the normalised lower triangle.",
    kind="forbidden call (rule broken)",
    wrong_on="any input: the result equals the prefix average, but the code calls the forbidden np.cumsum.",
    source=_L4_IMPORTS + _PA_HEAD + r'''    T = X.shape[-2]
    return np.cumsum(X, axis=-2) / np.arange(1, T + 1)[:, None]
'''),
]
