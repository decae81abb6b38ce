"""Set d, lessons 01-04: wrong answers written from the student notebooks alone."""
from typing import NamedTuple


class Wrong(NamedTuple):
    id: str
    exercise: str
    cause: str
    kind: str
    wrong_on: str
    source: str


WRONG = [
    Wrong(
        id='d34-01-dot-row-of-b',
        exercise='matmul_dot',
        cause='In the inner line you take row j of B (`B[j, :]`) where the dot-product reading needs column j (`B[:, j]`), so you compute A Bᵀ instead of A B.',
        kind='wrong slice of an operand',
        wrong_on='For A = B = [[1, 2], [3, 4]] it returns A Bᵀ = [[5, 11], [11, 25]] instead of [[7, 10], [15, 22]]; on rectangular inputs it raises.',
        source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def matmul_dot(A, B):
    """C[i, j] = row i of A · column j of B, with a Python loop (over i and j: one entry at a time)."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    m = B.shape[1]
    C = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            C[i, j] = np.sum(A[i, :] * B[j, :])
    return C
''',
    ),
    Wrong(
        id='d34-01-dot-zeros-like-a',
        exercise='matmul_dot',
        cause="You start the result with `np.zeros_like(A)`, which has A's shape n×k; the product is n×m, so it needs `np.zeros((n, m))`.",
        kind='wrong initial value (shape of the result)',
        wrong_on='For A of shape 2×3 and B of shape 3×2 it returns a 2×3 array whose last column stays 0 instead of the 2×2 product.',
        source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def matmul_dot(A, B):
    """C[i, j] = row i of A · column j of B, with a Python loop (over i and j: one entry at a time)."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    m = B.shape[1]
    C = np.zeros_like(A)
    for i in range(n):
        for j in range(m):
            C[i, j] = np.sum(A[i, :] * B[:, j])
    return C
''',
    ),
    Wrong(
        id='d34-01-dot-range-m-minus-1',
        exercise='matmul_dot',
        cause='Your inner loop runs `range(m - 1)`, so the last column of C is never filled and stays 0; it should run over `range(m)`.',
        kind='loop bound off by one',
        wrong_on='For A = [[1, 2]] and B = [[1, 2], [3, 4]] it returns [[7, 0]] instead of [[7, 10]].',
        source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def matmul_dot(A, B):
    """C[i, j] = row i of A · column j of B, with a Python loop (over i and j: one entry at a time)."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    m = B.shape[1]
    C = np.zeros((n, m))
    for i in range(n):
        for j in range(m - 1):
            C[i, j] = np.sum(A[i, :] * B[:, j])
    return C
''',
    ),
    Wrong(
        id='d34-01-rows-b-index-i',
        exercise='matmul_rows',
        cause='Inside the loop you add `A[i, p] * B[i]`, row i of B, where the row reading mixes row p of B: it should be `B[p]`.',
        kind='wrong loop index',
        wrong_on='For A = [[1, 2], [3, 4]] and B = [[1, 0], [0, 1]] it returns [[3, 0], [0, 7]] instead of A itself.',
        source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def matmul_rows(A, B):
    """Row i of C = sum over p of A[i, p] * (row p of B), with a Python loop (over i and p)."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    m = B.shape[1]
    C = np.zeros((n, m))
    for i in range(n):
        for p in range(k):
            C[i] += A[i, p] * B[i]
    return C
''',
    ),
    Wrong(
        id='d34-01-rows-assign-not-accumulate',
        exercise='matmul_rows',
        cause='You write `C[i] = A[i, p] * B[p]`, so every p overwrites the previous term and row i keeps only the last one; it must accumulate with `+=`.',
        kind='running value overwritten instead of accumulated',
        wrong_on='For A = [[1, 2]] and B = [[1, 0], [0, 1]] it returns [[0, 2]] instead of [[1, 2]].',
        source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def matmul_rows(A, B):
    """Row i of C = sum over p of A[i, p] * (row p of B), with a Python loop (over i and p)."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    m = B.shape[1]
    C = np.zeros((n, m))
    for i in range(n):
        for p in range(k):
            C[i] = A[i, p] * B[p]
    return C
''',
    ),
    Wrong(
        id='d34-01-rows-ones-init',
        exercise='matmul_rows',
        cause='You start the sum with `np.ones((n, m))`, so every entry is one too large; a sum starts from `np.zeros((n, m))`.',
        kind='wrong initial value',
        wrong_on='For A = [[1, 0]] and B = [[2, 3], [4, 5]] it returns [[3, 4]] instead of [[2, 3]].',
        source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def matmul_rows(A, B):
    """Row i of C = sum over p of A[i, p] * (row p of B), with a Python loop (over i and p)."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    m = B.shape[1]
    C = np.ones((n, m))
    for i in range(n):
        for p in range(k):
            C[i] += A[i, p] * B[p]
    return C
''',
    ),
    Wrong(
        id='d34-01-cols-row-of-a',
        exercise='matmul_cols',
        cause='You add `B[p, j] * A[p, :]`, row p of A, where the column reading mixes column p of A: it should be `A[:, p]`.',
        kind='wrong slice of an operand',
        wrong_on='For A = [[1, 2], [3, 4]] and B = I it returns Aᵀ = [[1, 3], [2, 4]] instead of A; on non-square A it raises.',
        source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def matmul_cols(A, B):
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
        id='d34-01-cols-b-indices-swapped',
        exercise='matmul_cols',
        cause='The weight is written `B[j, p]` instead of `B[p, j]`: column j of C needs the entries of column j of B, so you multiply by Bᵀ.',
        kind='indices swapped',
        wrong_on='For A = I and B = [[1, 2], [3, 4]] it returns [[1, 3], [2, 4]] instead of B; with k ≠ m it raises an IndexError.',
        source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def matmul_cols(A, B):
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
        id='d34-01-cols-skip-first-p',
        exercise='matmul_cols',
        cause='Your loop over p is `range(1, k)`, so column 0 of A never enters the sum; it must be `range(k)`.',
        kind='loop starts at 1',
        wrong_on='For A = [[1, 2]] and B = [[1], [1]] it returns [[2]] instead of [[3]].',
        source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def matmul_cols(A, B):
    """Column j of C = sum over p of B[p, j] * (column p of A), with a Python loop (over j and p)."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    m = B.shape[1]
    C = np.zeros((n, m))
    for j in range(m):
        for p in range(1, k):
            C[:, j] += B[p, j] * A[:, p]
    return C
''',
    ),
    Wrong(
        id='d34-01-outer-row-and-column-swapped',
        exercise='matmul_outer',
        cause='You take the outer product of row p of A with column p of B (`np.outer(A[p], B[:, p])`); the outer-product reading pairs column p of A with row p of B: `np.outer(A[:, p], B[p])`.',
        kind='wrong slices (row and column swapped)',
        wrong_on='For A = [[1, 2], [3, 4]] and B = I it returns [[1, 3], [2, 4]] (Aᵀ) instead of A; for rectangular shapes it fails.',
        source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def matmul_outer(A, B):
    """C = sum over p of the outer product of column p of A and row p of B, with a Python loop (over p)."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    C = np.zeros((n, B.shape[1]))
    for p in range(k):
        C += np.outer(A[p], B[:, p])
    return C
''',
    ),
    Wrong(
        id='d34-01-outer-assign-in-loop',
        exercise='matmul_outer',
        cause='You write `C = np.outer(...)` inside the loop, so C is only the last rank-1 term; the terms must be added: `C += np.outer(A[:, p], B[p])`.',
        kind='running value overwritten',
        wrong_on='For A = [[1, 2]] and B = [[1], [1]] it returns [[2]] instead of [[3]].',
        source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def matmul_outer(A, B):
    """C = sum over p of the outer product of column p of A and row p of B, with a Python loop (over p)."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    C = np.zeros((n, B.shape[1]))
    for p in range(k):
        C = np.outer(A[:, p], B[p])
    return C
''',
    ),
    Wrong(
        id='d34-01-outer-elementwise',
        exercise='matmul_outer',
        cause='`A[:, p] * B[p]` multiplies two 1-D vectors entry by entry (or fails), it is not an outer product; you need `A[:, p][:, None] * B[p][None, :]` or `np.outer`.',
        kind='broadcasting instead of an outer product',
        wrong_on='For A = I (2×2) and B = [[1, 2], [3, 4]] it returns [[1, 4], [1, 4]] instead of [[1, 2], [3, 4]]; for n ≠ m it raises.',
        source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def matmul_outer(A, B):
    """C = sum over p of the outer product of column p of A and row p of B, with a Python loop (over p)."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    C = np.zeros((n, B.shape[1]))
    for p in range(k):
        C += A[:, p] * B[p]
    return C
''',
    ),
    Wrong(
        id='d34-01-batched-np-dot',
        exercise='batched_matmul',
        cause='`np.dot` does not treat leading axes as a batch: for 3-D arrays it pairs every matrix of A with every matrix of B and returns [b, n, b, m]; use `A @ B` (np.matmul).',
        kind='wrong product function for batches',
        wrong_on='For A and B of shape [2, 3, 4] and [2, 4, 5] it returns shape [2, 3, 2, 5] instead of [2, 3, 5].',
        source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def batched_matmul(A, B):
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
        id='d34-01-batched-einsum-fixed-batch',
        exercise='batched_matmul',
        cause="Your einsum string `'bnk,bkm->bnm'` demands exactly one batch axis on both sides, so 2-D inputs, two batch axes and the broadcast [n, k] × [b, k, m] all fail; use `'...nk,...km->...nm'` or `A @ B`.",
        kind='einsum with a fixed number of axes',
        wrong_on='For A of shape [2, 3] and B of shape [3, 4] (no batch axis) it raises instead of returning A @ B.',
        source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def batched_matmul(A, B):
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
        id='d34-01-batched-sum-wrong-axis',
        exercise='batched_matmul',
        cause='After building `A[..., :, :, None] * B[..., None, :, :]` of shape [..., n, k, m] you sum over the last axis (m); the shared axis k is axis -2.',
        kind='reduction over the wrong axis',
        wrong_on='For A of shape [2, 2] and B of shape [2, 3] it returns a 2×2 array instead of the 2×3 product.',
        source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def batched_matmul(A, B):
    """[..., n, k] @ [..., k, m] -> [..., n, m] for every batch item, with no Python loop.

    The batch axes broadcast: [n, k] times [b, k, m] gives [b, n, m].
    """
    A = as_array(A, "A", min_ndim=2)
    B = as_array(B, "B", min_ndim=2)
    if A.shape[-1] != B.shape[-2]:
        raise ValueError(f"A has {A.shape[-1]} columns but B has {B.shape[-2]} rows "
                         f"(shapes {A.shape} and {B.shape})")
    return (A[..., :, :, None] * B[..., None, :, :]).sum(axis=-1)
''',
    ),
    Wrong(
        id='d34-01-batched-loop-over-first-axis',
        exercise='batched_matmul',
        cause='You loop over `A.shape[0]` and stack `A[b] @ B[b]`: the exercise forbids the loop, and it assumes both have the same single batch axis, so a 2-D A with a 3-D B pairs rows of A with matrices of B; a single `A @ B` handles all cases.',
        kind='loop over the batch (forbidden) that breaks broadcasting',
        wrong_on='For A of shape [3, 4] and B of shape [2, 4, 5] it raises (or, for A of shape [2, 4], returns wrong vectors) instead of the [2, 3, 5] product.',
        source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def batched_matmul(A, B):
    """[..., n, k] @ [..., k, m] -> [..., n, m] for every batch item, with no Python loop.

    The batch axes broadcast: [n, k] times [b, k, m] gives [b, n, m].
    """
    A = as_array(A, "A", min_ndim=2)
    B = as_array(B, "B", min_ndim=2)
    if A.shape[-1] != B.shape[-2]:
        raise ValueError(f"A has {A.shape[-1]} columns but B has {B.shape[-2]} rows "
                         f"(shapes {A.shape} and {B.shape})")
    return np.stack([A[b] @ B[b] for b in range(A.shape[0])])
''',
    ),
    Wrong(
        id='d34-01-einsum-output-transposed',
        exercise='einsum_scores',
        cause='The output letters `...kq` put the keys first, so you return (Q Kᵀ)ᵀ; the scores are `...qk`, one row per query.',
        kind='output axes in the wrong order',
        wrong_on='For Q of shape [2, 4] and K of shape [3, 4] it returns shape [3, 2] instead of [2, 3].',
        source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def einsum_scores(Q, K):
    """Q Kᵀ for every batch item: [..., T_q, d] and [..., T_k, d] -> [..., T_q, T_k].

    Use np.einsum: one call does it, with no loop and no other product.
    """
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share their last axis, got {Q.shape} and {K.shape}")
    return np.einsum("...qd,...kd->...kq", Q, K)
''',
    ),
    Wrong(
        id='d34-01-einsum-no-ellipsis',
        exercise='einsum_scores',
        cause="Without `...` the string `'qd,kd->qk'` only accepts 2-D inputs; a batch of [2, 3, 4] raises. Write `'...qd,...kd->...qk'`.",
        kind='batch axes not allowed for',
        wrong_on='For Q and K of shape [2, 3, 4] it raises instead of returning [2, 3, 3] scores.',
        source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def einsum_scores(Q, K):
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
        id='d34-01-einsum-k-as-dk',
        exercise='einsum_scores',
        cause='You labelled K as `...dk`, as if it were already transposed; K is [..., T_k, d], so its letters are `...kd`.',
        kind='wrong axis letters for an operand',
        wrong_on='For square Q = K = [[1, 2], [3, 4]] it returns Q K = [[7, 10], [15, 22]] instead of Q Kᵀ = [[5, 11], [11, 25]]; when T_k ≠ d it raises.',
        source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def einsum_scores(Q, K):
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
        id='d34-01-einsum-scaled',
        exercise='einsum_scores',
        cause='You divide by `sqrt(d)` as in attention, but this function returns the plain product Q Kᵀ; leave the scale to lesson 02.',
        kind='extra scale applied',
        wrong_on='For Q = K = [[1, 0, 0, 0]] it returns [[0.5]] instead of [[1]].',
        source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def einsum_scores(Q, K):
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
        id='d34-01-war-nan-passes',
        exercise='weighted_average_rows',
        cause='Your checks `abs(sum - 1) > 1e-6` and `W < 0` are both False for NaN, so a NaN weight passes; test `np.isfinite(W).all()` first (or write the sum test as `not (abs(total - 1) <= 1e-6)`).',
        kind='NaN not caught by a comparison',
        wrong_on='For W = [[0.5, 0.5], [nan, 1.0]] and V = I it returns a row of NaN instead of raising ValueError.',
        source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def weighted_average_rows(W, V):
    """Row i of the result mixes the rows of V with weights W[i] (non-negative, sum 1).

    W: [..., n, m], V: [..., m, d] -> [..., n, d]. Raises ValueError for invalid weights.
    """
    W = as_array(W, "W", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if W.shape[-1] != V.shape[-2]:
        raise ValueError(f"W has {W.shape[-1]} weights per row but V has {V.shape[-2]} rows")
    if np.any(np.abs(W.sum(axis=-1) - 1) > 1e-6):
        raise ValueError("a row of W does not sum to 1")
    if np.any(W < 0):
        raise ValueError("W has a negative weight")
    return W @ V
''',
    ),
    Wrong(
        id='d34-01-war-sum-over-columns',
        exercise='weighted_average_rows',
        cause='You check `W.sum(axis=-2)`, the column sums; every row must sum to 1, so the check belongs on `axis=-1`.',
        kind='reduction over the wrong axis',
        wrong_on='For W = [[1, 0], [1, 0]] (both rows convex) and V = I it raises ValueError instead of returning W @ V = W.',
        source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def weighted_average_rows(W, V):
    """Row i of the result mixes the rows of V with weights W[i] (non-negative, sum 1).

    W: [..., n, m], V: [..., m, d] -> [..., n, d]. Raises ValueError for invalid weights.
    """
    W = as_array(W, "W", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if W.shape[-1] != V.shape[-2]:
        raise ValueError(f"W has {W.shape[-1]} weights per row but V has {V.shape[-2]} rows")
    if not np.all(np.isfinite(W)):
        raise ValueError("W holds NaN or infinite weights")
    if np.any(W < 0):
        raise ValueError("W has a negative weight")
    if np.any(np.abs(W.sum(axis=-2) - 1) > 1e-6):
        raise ValueError("a row of W does not sum to 1")
    return W @ V
''',
    ),
    Wrong(
        id='d34-01-war-no-negative-check',
        exercise='weighted_average_rows',
        cause='You only check that rows sum to 1, so a row with a negative weight like [1.5, -0.5] passes; convex weights also need `W >= 0`.',
        kind='a required check left out',
        wrong_on='For W = [[1.5, -0.5]] and V = [[1.0], [0.0]] it returns [[1.5]] instead of raising ValueError.',
        source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def weighted_average_rows(W, V):
    """Row i of the result mixes the rows of V with weights W[i] (non-negative, sum 1).

    W: [..., n, m], V: [..., m, d] -> [..., n, d]. Raises ValueError for invalid weights.
    """
    W = as_array(W, "W", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if W.shape[-1] != V.shape[-2]:
        raise ValueError(f"W has {W.shape[-1]} weights per row but V has {V.shape[-2]} rows")
    if not np.all(np.isfinite(W)):
        raise ValueError("W holds NaN or infinite weights")
    bad = np.abs(W.sum(axis=-1) - 1) > 1e-6
    if np.any(bad):
        raise ValueError(f"rows {np.argwhere(bad).tolist()} of W do not sum to 1")
    return W @ V
''',
    ),
    Wrong(
        id='d34-01-war-renormalise',
        exercise='weighted_average_rows',
        cause='Instead of raising for rows that do not sum to 1, you divide each row by its sum; the exercise wants a ValueError for such rows, not a silently repaired mixture.',
        kind='fixing the input instead of rejecting it',
        wrong_on='For W = [[1.0, 1.0]] and V = [[1.0], [3.0]] it returns [[2.0]] instead of raising ValueError.',
        source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def weighted_average_rows(W, V):
    """Row i of the result mixes the rows of V with weights W[i] (non-negative, sum 1).

    W: [..., n, m], V: [..., m, d] -> [..., n, d]. Raises ValueError for invalid weights.
    """
    W = as_array(W, "W", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if W.shape[-1] != V.shape[-2]:
        raise ValueError(f"W has {W.shape[-1]} weights per row but V has {V.shape[-2]} rows")
    if not np.all(np.isfinite(W)):
        raise ValueError("W holds NaN or infinite weights")
    if np.any(W < 0):
        raise ValueError("W has a negative weight")
    W = W / W.sum(axis=-1, keepdims=True)
    return W @ V
''',
    ),
    Wrong(
        id='d34-01-war-allclose-tolerance',
        exercise='weighted_average_rows',
        cause='`np.allclose(W.sum(-1), 1)` uses rtol=1e-5 plus atol=1e-8, about 1e-5 in all, ten times looser than the required 1e-6; compare `np.abs(total - 1) <= 1e-6` yourself.',
        kind='wrong tolerance',
        wrong_on='For W = [[0.5, 0.500005]] (sum 1 + 5e-6) and V = [[1.0], [1.0]] it returns a result instead of raising ValueError.',
        source=r'''import numpy as np
from grader.learner.validation import matmul_operands, as_array

def weighted_average_rows(W, V):
    """Row i of the result mixes the rows of V with weights W[i] (non-negative, sum 1).

    W: [..., n, m], V: [..., m, d] -> [..., n, d]. Raises ValueError for invalid weights.
    """
    W = as_array(W, "W", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if W.shape[-1] != V.shape[-2]:
        raise ValueError(f"W has {W.shape[-1]} weights per row but V has {V.shape[-2]} rows")
    if not np.all(np.isfinite(W)):
        raise ValueError("W holds NaN or infinite weights")
    if np.any(W < 0):
        raise ValueError("W has a negative weight")
    if not np.allclose(W.sum(axis=-1), 1):
        raise ValueError("a row of W does not sum to 1")
    return W @ V
''',
    ),
    Wrong(
        id='d34-02-softmax-no-max-shift',
        exercise='softmax',
        cause='You take `np.exp(x)` directly; for scores near 1000 it overflows to inf and inf/inf is NaN. Subtract `x.max(axis=axis, keepdims=True)` before `np.exp`.',
        kind='stability step left out',
        wrong_on='For x = [1000.0, 1001.0] it returns [nan, nan] instead of [0.2689, 0.7311].',
        source=r'''import numpy as np
from grader.learner.validation import as_array

def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)
''',
    ),
    Wrong(
        id='d34-02-softmax-keepdims-forgotten',
        exercise='softmax',
        cause="Your `max` and `sum` drop the reduced axis, so on a square matrix `x - x.max(axis=-1)` subtracts row j's max from column j and the division uses row sums per column; add `keepdims=True` to both reductions.",
        kind='keepdims forgotten (broadcasting along the wrong axis)',
        wrong_on='For x = [[0, 1], [2, 4]] it returns [[0.881, 0.0134], [6.51, 0.269]] instead of [[0.269, 0.731], [0.119, 0.881]]; for non-square x it raises.',
        source=r'''import numpy as np
from grader.learner.validation import as_array

def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    e = np.exp(x - x.max(axis=axis))
    return e / e.sum(axis=axis)
''',
    ),
    Wrong(
        id='d34-02-softmax-sum-last-axis',
        exercise='softmax',
        cause='The max uses `axis`, but the sum is hard-coded to `axis=-1`, so for `axis=0` you normalise along the wrong axis; use `axis=axis` in the sum too.',
        kind='parameter replaced by its default',
        wrong_on='For x = [[0, 1], [0, 0]] and axis=0 it returns [[0.5, 0.5], [0.731, 0.269]] instead of [[0.5, 0.731], [0.5, 0.269]].',
        source=r'''import numpy as np
from grader.learner.validation import as_array

def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
''',
    ),
    Wrong(
        id='d34-02-softmax-subtract-min',
        exercise='softmax',
        cause='You subtract the smallest score, which makes every exponent non-negative and lets the largest overflow; subtract the largest score so that every exponent is at most 0.',
        kind='wrong stabilising shift (min instead of max)',
        wrong_on='For x = [0.0, 1000.0] it returns [0, nan] instead of [0, 1].',
        source=r'''import numpy as np
from grader.learner.validation import as_array

def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    e = np.exp(x - x.min(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
''',
    ),
    Wrong(
        id='d34-02-softmax-global-max',
        exercise='softmax',
        cause='You subtract `x.max()`, the maximum of the whole array; a row whose scores are all far below it underflows to all zeros and gives 0/0. Take the max along `axis` with `keepdims=True`.',
        kind='reduction over the whole array instead of along the axis',
        wrong_on='For x = [[0.0, 1.0], [-1000.0, -999.0]] the second row comes out [nan, nan] instead of [0.2689, 0.7311].',
        source=r'''import numpy as np
from grader.learner.validation import as_array

def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    e = np.exp(x - x.max())
    return e / e.sum(axis=axis, keepdims=True)
''',
    ),
    Wrong(
        id='d34-02-scores-full-transpose',
        exercise='attention_scores',
        cause='`K.T` reverses every axis, so on a batch [b, T_k, d_k] it becomes [d_k, T_k, b]; transpose only the last two axes with `np.swapaxes(K, -1, -2)`.',
        kind='full transpose on a batched array',
        wrong_on='For Q and K of shape [2, 3, 4] it raises (or with matching sizes mixes batch items) instead of returning [2, 3, 3] scores.',
        source=r'''import numpy as np
from grader.learner.validation import as_array

def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    return Q @ K.T / np.sqrt(Q.shape[-1])
''',
    ),
    Wrong(
        id='d34-02-scores-sqrt-num-keys',
        exercise='attention_scores',
        cause='You divide by `sqrt(K.shape[-2])`, the square root of the number of keys; d_k is the length of each query and key vector, `Q.shape[-1]`.',
        kind='wrong size in the scale',
        wrong_on='For Q = [[1, 0, 0, 0]] and K = [[1, 0, 0, 0]] (one key, d_k = 4) it returns [[1.0]] instead of [[0.5]].',
        source=r'''import numpy as np
from grader.learner.validation import as_array

def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-2])
''',
    ),
    Wrong(
        id='d34-02-scores-divide-by-dk',
        exercise='attention_scores',
        cause='You divide by d_k itself; the formula divides by its square root, `np.sqrt(Q.shape[-1])`.',
        kind='sqrt forgotten',
        wrong_on='For Q = K = [[1, 1, 1, 1]] it returns [[1.0]] instead of [[2.0]].',
        source=r'''import numpy as np
from grader.learner.validation import as_array

def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    return Q @ np.swapaxes(K, -1, -2) / Q.shape[-1]
''',
    ),
    Wrong(
        id='d34-02-scores-power-precedence',
        exercise='attention_scores',
        cause='`Q.shape[-1] ** 1/2` is `(d_k ** 1) / 2` = d_k / 2 because `**` binds tighter than `/`; write `Q.shape[-1] ** 0.5` or `np.sqrt(Q.shape[-1])`.',
        kind='operator precedence in the square root',
        wrong_on='For Q = K = [[1, 1, 1, 1, 1, 1, 1, 1, 1]] (d_k = 9) it returns [[2.0]] instead of [[3.0]] (for d_k = 4 the two agree by chance).',
        source=r'''import numpy as np
from grader.learner.validation import as_array

def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    return Q @ np.swapaxes(K, -1, -2) / Q.shape[-1] ** 1/2
''',
    ),
    Wrong(
        id='d34-02-scores-no-scale',
        exercise='attention_scores',
        cause='You return the raw product Q Kᵀ; the scores must still be divided by `np.sqrt(Q.shape[-1])`.',
        kind='scale left out',
        wrong_on='For Q = K = [[1, 1, 1, 1]] it returns [[4.0]] instead of [[2.0]].',
        source=r'''import numpy as np
from grader.learner.validation import as_array

def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    return Q @ np.swapaxes(K, -1, -2)
''',
    ),
    Wrong(
        id='d34-02-var-sum-axis0',
        exercise='score_variance',
        cause='`(q * k).sum(axis=0)` adds over the samples and leaves d_k numbers; one dot product per pair is a sum over the features, `axis=1`.',
        kind='reduction over the wrong axis',
        wrong_on='For d_k = 4, n_samples = 100, seed 0 it returns the variance of 4 sums of 100 products (about 100) instead of about 4.',
        source=r'''import numpy as np
from grader.learner.validation import as_array

def score_variance(d_k, n_samples, seed):
    """The sample variance of q·k over n_samples pairs of standard normal vectors of length d_k."""
    if not isinstance(d_k, (int, np.integer)) or d_k < 1:
        raise ValueError(f"d_k must be a positive integer, got {d_k!r}")
    if not isinstance(n_samples, (int, np.integer)) or n_samples < 2:
        raise ValueError(f"n_samples must be an integer of at least 2, got {n_samples!r}")
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, d_k))   # one query per row
    k = rng.standard_normal((n_samples, d_k))   # one key per row
    dots = (q * k).sum(axis=0)
    return np.var(dots)
''',
    ),
    Wrong(
        id='d34-02-var-full-matrix',
        exercise='score_variance',
        cause='`q @ k.T` dots every query with every key, n_samples² numbers, and the variance is taken over them all; you need only the matching pairs, `(q * k).sum(axis=1)`.',
        kind='all pairs instead of matching pairs',
        wrong_on='For d_k = 4, n_samples = 100, seed 0 the result differs from the variance of the 100 row-wise dot products (it averages 10 000 numbers instead).',
        source=r'''import numpy as np
from grader.learner.validation import as_array

def score_variance(d_k, n_samples, seed):
    """The sample variance of q·k over n_samples pairs of standard normal vectors of length d_k."""
    if not isinstance(d_k, (int, np.integer)) or d_k < 1:
        raise ValueError(f"d_k must be a positive integer, got {d_k!r}")
    if not isinstance(n_samples, (int, np.integer)) or n_samples < 2:
        raise ValueError(f"n_samples must be an integer of at least 2, got {n_samples!r}")
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, d_k))   # one query per row
    k = rng.standard_normal((n_samples, d_k))   # one key per row
    dots = q @ k.T
    return np.var(dots)
''',
    ),
    Wrong(
        id='d34-02-var-no-sum',
        exercise='score_variance',
        cause='You take the variance of the products `q * k` themselves, which is about 1 for any d_k; first add each row up, `(q * k).sum(axis=1)`, then take the variance.',
        kind='reduction left out',
        wrong_on='For d_k = 16, n_samples = 1000, seed 0 it returns about 1 instead of about 16.',
        source=r'''import numpy as np
from grader.learner.validation import as_array

def score_variance(d_k, n_samples, seed):
    """The sample variance of q·k over n_samples pairs of standard normal vectors of length d_k."""
    if not isinstance(d_k, (int, np.integer)) or d_k < 1:
        raise ValueError(f"d_k must be a positive integer, got {d_k!r}")
    if not isinstance(n_samples, (int, np.integer)) or n_samples < 2:
        raise ValueError(f"n_samples must be an integer of at least 2, got {n_samples!r}")
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, d_k))   # one query per row
    k = rng.standard_normal((n_samples, d_k))   # one key per row
    return np.var(q * k)
''',
    ),
    Wrong(
        id='d34-02-var-std',
        exercise='score_variance',
        cause='`np.std` is the square root of the variance; the exercise asks for the variance, `np.var`.',
        kind='wrong statistic (std instead of variance)',
        wrong_on='For d_k = 16, n_samples = 1000, seed 0 it returns about 4 instead of about 16.',
        source=r'''import numpy as np
from grader.learner.validation import as_array

def score_variance(d_k, n_samples, seed):
    """The sample variance of q·k over n_samples pairs of standard normal vectors of length d_k."""
    if not isinstance(d_k, (int, np.integer)) or d_k < 1:
        raise ValueError(f"d_k must be a positive integer, got {d_k!r}")
    if not isinstance(n_samples, (int, np.integer)) or n_samples < 2:
        raise ValueError(f"n_samples must be an integer of at least 2, got {n_samples!r}")
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, d_k))   # one query per row
    k = rng.standard_normal((n_samples, d_k))   # one key per row
    dots = np.sum(q * k, axis=1)
    return np.std(dots)
''',
    ),
    Wrong(
        id='d34-02-var-divided-by-dk',
        exercise='score_variance',
        cause='You divide the variance by d_k, as if scaling the scores; the function must return Var(q·k) itself, which grows like d_k.',
        kind='extra normalisation applied',
        wrong_on='For d_k = 16, n_samples = 1000, seed 0 it returns about 1 instead of about 16.',
        source=r'''import numpy as np
from grader.learner.validation import as_array

def score_variance(d_k, n_samples, seed):
    """The sample variance of q·k over n_samples pairs of standard normal vectors of length d_k."""
    if not isinstance(d_k, (int, np.integer)) or d_k < 1:
        raise ValueError(f"d_k must be a positive integer, got {d_k!r}")
    if not isinstance(n_samples, (int, np.integer)) or n_samples < 2:
        raise ValueError(f"n_samples must be an integer of at least 2, got {n_samples!r}")
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, d_k))   # one query per row
    k = rng.standard_normal((n_samples, d_k))   # one key per row
    dots = np.sum(q * k, axis=1)
    return np.var(dots) / d_k
''',
    ),
    Wrong(
        id='d34-02-sdpa-softmax-query-axis',
        exercise='scaled_dot_product_attention',
        cause="You normalise with `axis=-2`, down each column (over the queries); each query's weights lie along the key axis, `axis=-1`.",
        kind='softmax over the wrong axis',
        wrong_on='For Q = [[1, 0], [0, 1], [1, 1]], K = [[1, 0], [0, 1]], V = I (2×2) the rows of the weights no longer sum to 1 (its columns do), and the outputs change accordingly.',
        source=r'''import numpy as np
from grader.learner.validation import as_array

def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)

def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])

def scaled_dot_product_attention(Q, K, V):
    """softmax(Q Kᵀ / sqrt(d_k)) V. Returns (output [..., T_q, d_v], weights [..., T_q, T_k])."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V need one row per key: K has {K.shape[-2]} rows, V has "
                         f"{V.shape[-2]} (shapes {K.shape} and {V.shape})")
    weights = softmax(attention_scores(Q, K), axis=-2)
    return weights @ V, weights
''',
    ),
    Wrong(
        id='d34-02-sdpa-tuple-swapped',
        exercise='scaled_dot_product_attention',
        cause='You return `(weights, output)`; the exercise asks for `(output, weights)`.',
        kind='returning the tuple in the wrong order',
        wrong_on='For Q, K of shape [2, 4] and V of shape [2, 3] the first item has shape [2, 2] instead of [2, 3].',
        source=r'''import numpy as np
from grader.learner.validation import as_array

def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)

def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])

def scaled_dot_product_attention(Q, K, V):
    """softmax(Q Kᵀ / sqrt(d_k)) V. Returns (output [..., T_q, d_v], weights [..., T_q, T_k])."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V need one row per key: K has {K.shape[-2]} rows, V has "
                         f"{V.shape[-2]} (shapes {K.shape} and {V.shape})")
    weights = softmax(attention_scores(Q, K), axis=-1)
    return weights, weights @ V
''',
    ),
    Wrong(
        id='d34-02-sdpa-weights-transposed',
        exercise='scaled_dot_product_attention',
        cause='You multiply `swapaxes(weights, -1, -2) @ V`, so output row i mixes the values with column i of the weights; row i must use row i, `weights @ V`.',
        kind='transposed weights in the mix',
        wrong_on='For Q = [[1, 0], [0, 0]], K = [[2, 0], [0, 0]], V = I the output is the transposed weight matrix instead of the weight matrix; with T_q ≠ T_k it raises.',
        source=r'''import numpy as np
from grader.learner.validation import as_array

def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)

def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])

def scaled_dot_product_attention(Q, K, V):
    """softmax(Q Kᵀ / sqrt(d_k)) V. Returns (output [..., T_q, d_v], weights [..., T_q, T_k])."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V need one row per key: K has {K.shape[-2]} rows, V has "
                         f"{V.shape[-2]} (shapes {K.shape} and {V.shape})")
    weights = softmax(attention_scores(Q, K), axis=-1)
    return np.swapaxes(weights, -1, -2) @ V, weights
''',
    ),
    Wrong(
        id='d34-02-sdpa-scores-returned',
        exercise='scaled_dot_product_attention',
        cause='The second item you return is the scores, not the softmax of them; return the weights you computed.',
        kind='returning the wrong variable',
        wrong_on='For Q = K = [[1, 0]] and V = [[1.0]] it returns weights [[0.7071]] instead of [[1.0]].',
        source=r'''import numpy as np
from grader.learner.validation import as_array

def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)

def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])

def scaled_dot_product_attention(Q, K, V):
    """softmax(Q Kᵀ / sqrt(d_k)) V. Returns (output [..., T_q, d_v], weights [..., T_q, T_k])."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V need one row per key: K has {K.shape[-2]} rows, V has "
                         f"{V.shape[-2]} (shapes {K.shape} and {V.shape})")
    scores = attention_scores(Q, K)
    weights = softmax(scores, axis=-1)
    return weights @ V, scores
''',
    ),
    Wrong(
        id='d34-02-sdpa-unscaled-scores',
        exercise='scaled_dot_product_attention',
        cause='You compute `Q @ swapaxes(K)` yourself and skip the division by sqrt(d_k); use your `attention_scores`, which scales.',
        kind='scale left out',
        wrong_on='For Q = [[2, 0]], K = [[1, 0], [0, 0]], V = I it returns weights [[0.881, 0.119]] instead of [[0.805, 0.195]].',
        source=r'''import numpy as np
from grader.learner.validation import as_array

def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)

def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])

def scaled_dot_product_attention(Q, K, V):
    """softmax(Q Kᵀ / sqrt(d_k)) V. Returns (output [..., T_q, d_v], weights [..., T_q, T_k])."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V need one row per key: K has {K.shape[-2]} rows, V has "
                         f"{V.shape[-2]} (shapes {K.shape} and {V.shape})")
    scores = Q @ np.swapaxes(K, -1, -2)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
''',
    ),
    Wrong(
        id='d34-02-one-no-max-shift',
        exercise='attend_one_query',
        cause='You take `np.exp` of the raw scores; scores near 1000 overflow to inf and the result is NaN. Subtract the largest score before `np.exp`.',
        kind='stability step left out',
        wrong_on='For q = [2000.0], K = [[1.0], [1.0]], V = [[1.0], [3.0]] it returns [nan] instead of [2.0].',
        source=r'''import numpy as np
from grader.learner.validation import as_array

def attend_one_query(q, K, V):
    """The single-query sum for q [d_k] over keys K [T_k, d_k] and values V [T_k, d_v] -> [d_v]."""
    q = as_array(q, "q", ndim=1)
    K = as_array(K, "K", ndim=2)
    V = as_array(V, "V", ndim=2)
    if K.shape[1] != q.shape[0] or V.shape[0] != K.shape[0]:
        raise ValueError(f"q {q.shape}, K {K.shape} and V {V.shape} do not fit: "
                         f"q must be [d_k], K [T_k, d_k] and V [T_k, d_v]")
    d_k = q.shape[0]
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
        id='d34-02-one-no-scale',
        exercise='attend_one_query',
        cause='Your score is `q · k_i` without the division by `sqrt(d_k)`; the sum uses s_i = q · k_i / √d_k.',
        kind='scale left out',
        wrong_on='For q = [2, 0, 0, 0], K = [[1, 0, 0, 0], [0, 0, 0, 0]], V = [[1.0], [0.0]] it returns [0.881] instead of [0.731].',
        source=r'''import numpy as np
from grader.learner.validation import as_array

def attend_one_query(q, K, V):
    """The single-query sum for q [d_k] over keys K [T_k, d_k] and values V [T_k, d_v] -> [d_v]."""
    q = as_array(q, "q", ndim=1)
    K = as_array(K, "K", ndim=2)
    V = as_array(V, "V", ndim=2)
    if K.shape[1] != q.shape[0] or V.shape[0] != K.shape[0]:
        raise ValueError(f"q {q.shape}, K {K.shape} and V {V.shape} do not fit: "
                         f"q must be [d_k], K [T_k, d_k] and V [T_k, d_v]")
    scores = [np.sum(q * K[i]) for i in range(K.shape[0])]
    m = max(scores)
    exps = [np.exp(s - m) for s in scores]
    total = sum(exps)
    out = np.zeros(V.shape[1])
    for i in range(K.shape[0]):
        out += exps[i] / total * V[i]
    return out
''',
    ),
    Wrong(
        id='d34-02-one-running-total',
        exercise='attend_one_query',
        cause='You add to the denominator and divide inside the same loop, so early keys are divided by a partial sum; finish the sum of all exps first, then weight each value.',
        kind='normaliser computed inside the loop',
        wrong_on='For q = [0.0], K = [[0.0], [0.0]], V = [[1.0], [1.0]] it returns [1.5] instead of [1.0].',
        source=r'''import numpy as np
from grader.learner.validation import as_array

def attend_one_query(q, K, V):
    """The single-query sum for q [d_k] over keys K [T_k, d_k] and values V [T_k, d_v] -> [d_v]."""
    q = as_array(q, "q", ndim=1)
    K = as_array(K, "K", ndim=2)
    V = as_array(V, "V", ndim=2)
    if K.shape[1] != q.shape[0] or V.shape[0] != K.shape[0]:
        raise ValueError(f"q {q.shape}, K {K.shape} and V {V.shape} do not fit: "
                         f"q must be [d_k], K [T_k, d_k] and V [T_k, d_v]")
    d_k = q.shape[0]
    scores = [np.sum(q * K[i]) / np.sqrt(d_k) for i in range(K.shape[0])]
    m = max(scores)
    total = 0.0
    out = np.zeros(V.shape[1])
    for i in range(K.shape[0]):
        e = np.exp(scores[i] - m)
        total += e
        out += e / total * V[i]
    return out
''',
    ),
    Wrong(
        id='d34-02-one-shift-by-raw-max',
        exercise='attend_one_query',
        cause='You subtract the max of the *unscaled* dot products from the *scaled* scores; the shift no longer makes the largest exponent 0, so large negative scores overflow. Subtract the max of the scaled scores.',
        kind='shift computed on a different quantity',
        wrong_on='For q = [-2000.0, 0, 0, 0], K = [[1, 0, 0, 0], [2, 0, 0, 0]], V = [[1.0], [0.0]] the first exponent is -1000 - (-2000) = +1000, which overflows, and it returns [nan] instead of [1.0].',
        source=r'''import numpy as np
from grader.learner.validation import as_array

def attend_one_query(q, K, V):
    """The single-query sum for q [d_k] over keys K [T_k, d_k] and values V [T_k, d_v] -> [d_v]."""
    q = as_array(q, "q", ndim=1)
    K = as_array(K, "K", ndim=2)
    V = as_array(V, "V", ndim=2)
    if K.shape[1] != q.shape[0] or V.shape[0] != K.shape[0]:
        raise ValueError(f"q {q.shape}, K {K.shape} and V {V.shape} do not fit: "
                         f"q must be [d_k], K [T_k, d_k] and V [T_k, d_v]")
    d_k = q.shape[0]
    raw = [np.sum(q * K[i]) for i in range(K.shape[0])]
    m = max(raw)
    exps = [np.exp(r / np.sqrt(d_k) - m) for r in raw]
    total = sum(exps)
    out = np.zeros(V.shape[1])
    for i in range(K.shape[0]):
        out += exps[i] / total * V[i]
    return out
''',
    ),
    Wrong(
        id='d34-02-self-k-from-wq',
        exercise='self_attention',
        cause='You wrote `K = X @ W_q`, copied from the query line; the keys come from `W_k`.',
        kind='wrong operand (copy-paste)',
        wrong_on='For X = I (2×2), W_q = [[1, 0], [0, 0]], W_k = [[0, 1], [0, 0]], W_v = I the weights differ (every score uses W_q twice).',
        source=r'''import numpy as np
from grader.learner.validation import as_array

def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)

def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])

def scaled_dot_product_attention(Q, K, V):
    """softmax(Q Kᵀ / sqrt(d_k)) V. Returns (output [..., T_q, d_v], weights [..., T_q, T_k])."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V need one row per key: K has {K.shape[-2]} rows, V has "
                         f"{V.shape[-2]} (shapes {K.shape} and {V.shape})")
    weights = softmax(attention_scores(Q, K), axis=-1)
    return weights @ V, weights

def self_attention(X, W_q, W_k, W_v):
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
    Q = X @ W_q
    K = X @ W_q
    V = X @ W_v
    return scaled_dot_product_attention(Q, K, V)
''',
    ),
    Wrong(
        id='d34-02-self-v-from-wk',
        exercise='self_attention',
        cause='You wrote `V = X @ W_k`; the values come from `W_v`, which may even have a different width d_v.',
        kind='wrong operand (copy-paste)',
        wrong_on='For X = I (2×2), W_q = W_k = I and W_v = [[1], [2]] it returns outputs of width 2 instead of width 1.',
        source=r'''import numpy as np
from grader.learner.validation import as_array

def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)

def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])

def scaled_dot_product_attention(Q, K, V):
    """softmax(Q Kᵀ / sqrt(d_k)) V. Returns (output [..., T_q, d_v], weights [..., T_q, T_k])."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V need one row per key: K has {K.shape[-2]} rows, V has "
                         f"{V.shape[-2]} (shapes {K.shape} and {V.shape})")
    weights = softmax(attention_scores(Q, K), axis=-1)
    return weights @ V, weights

def self_attention(X, W_q, W_k, W_v):
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
    Q = X @ W_q
    K = X @ W_k
    V = X @ W_k
    return scaled_dot_product_attention(Q, K, V)
''',
    ),
    Wrong(
        id='d34-02-self-scaled-twice',
        exercise='self_attention',
        cause='You divide Q by `sqrt(d_k)` before calling `scaled_dot_product_attention`, which divides again; leave the scaling to it.',
        kind='scale applied twice',
        wrong_on='For X = [[2, 0, 0, 0], [0, 0, 0, 0]], W_q = W_k = W_v = I (4×4) the weights of token 0 are [0.731, 0.269] instead of [0.881, 0.119].',
        source=r'''import numpy as np
from grader.learner.validation import as_array

def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)

def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])

def scaled_dot_product_attention(Q, K, V):
    """softmax(Q Kᵀ / sqrt(d_k)) V. Returns (output [..., T_q, d_v], weights [..., T_q, T_k])."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V need one row per key: K has {K.shape[-2]} rows, V has "
                         f"{V.shape[-2]} (shapes {K.shape} and {V.shape})")
    weights = softmax(attention_scores(Q, K), axis=-1)
    return weights @ V, weights

def self_attention(X, W_q, W_k, W_v):
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
    Q = X @ W_q / np.sqrt(W_q.shape[1])
    K = X @ W_k
    V = X @ W_v
    return scaled_dot_product_attention(Q, K, V)
''',
    ),
    Wrong(
        id='d34-02-self-residual-added',
        exercise='self_attention',
        cause='You return `X @ W_v + output`, adding a residual the exercise does not ask for (the lesson adds it by hand later); return the attention output itself.',
        kind='extra term added (residual)',
        wrong_on='For X = [[1, 0], [0, 1]], W_q = W_k = W_v = I the output is the weights plus I instead of the weights.',
        source=r'''import numpy as np
from grader.learner.validation import as_array

def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)

def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])

def scaled_dot_product_attention(Q, K, V):
    """softmax(Q Kᵀ / sqrt(d_k)) V. Returns (output [..., T_q, d_v], weights [..., T_q, T_k])."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V need one row per key: K has {K.shape[-2]} rows, V has "
                         f"{V.shape[-2]} (shapes {K.shape} and {V.shape})")
    weights = softmax(attention_scores(Q, K), axis=-1)
    return weights @ V, weights

def self_attention(X, W_q, W_k, W_v):
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
    Q = X @ W_q
    K = X @ W_k
    V = X @ W_v
    output, weights = scaled_dot_product_attention(Q, K, V)
    return V + output, weights
''',
    ),
    Wrong(
        id='d34-03-ws-q-transposed',
        exercise='worksheet_Q',
        cause="You wrote Q with one row per token (4 rows of 3), i.e. Qᵀ; with tokens as columns Q = W_Q X is 3 rows of 4, column j being token j's query.",
        kind='transposed layout',
        wrong_on='On the published worksheet the typed Q is 4×3 instead of 3×4.',
        source=r'''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

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
''',
    ),
    Wrong(
        id='d34-03-ws-q-dropped-term',
        exercise='worksheet_Q',
        cause="Entry Q[3, 3] (row 3, token 3) is row 3 of W_Q, x₃ + x₅, dotted with X's column 3, which has a 1 in both places: 1 + 1 = 2; you wrote 1, dropping the second product.",
        kind='arithmetic slip (a term left out)',
        wrong_on='On the published worksheet Q[2, 2] (0-based) is typed 1 instead of 2.',
        source=r'''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

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
''',
    ),
    Wrong(
        id='d34-03-ws-k-minus-one-ignored',
        exercise='worksheet_K',
        cause='Row 2 of W_K has a -1 on feature 5; token 3 has that feature, so K[2, 3] = 0 - 1 + 0 = -1. You added it as +1.',
        kind='sign dropped',
        wrong_on='On the published worksheet K[1, 2] (0-based) is typed 1 instead of -1.',
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
WORKSHEET["V"] = """
1 0 2 1
1 0 1 2
0 0 1 1
"""
''',
    ),
    Wrong(
        id='d34-03-ws-k-transposed',
        exercise='worksheet_K',
        cause='You wrote one key per row (4 rows of 3), i.e. Kᵀ; the step asks for K = W_K X with one key per column, 3 rows of 4.',
        kind='transposed layout',
        wrong_on='On the published worksheet the typed K is 4×3 instead of 3×4.',
        source=r'''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

# Q = W_Q X, K = W_K X, V = W_V X: 3 rows of 4 numbers each, one column per token.
WORKSHEET["Q"] = """
2 1 1 1
1 1 0 1
1 0 2 1
"""
WORKSHEET["K"] = """
1 0 1
2 1 1
0 -1 1
0 1 0
"""
WORKSHEET["V"] = """
1 0 2 1
1 0 1 2
0 0 1 1
"""
''',
    ),
    Wrong(
        id='d34-03-ws-v-transposed',
        exercise='worksheet_V',
        cause='You wrote one value vector per row (4 rows of 3); V = W_V X keeps tokens as columns, 3 rows of 4.',
        kind='transposed layout',
        wrong_on='On the published worksheet the typed V is 4×3 instead of 3×4.',
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
''',
    ),
    Wrong(
        id='d34-03-ws-v-dropped-term',
        exercise='worksheet_V',
        cause="V[1, 3] is row 1 of W_V (features 3 and 5) against token 3's column, which has both: 1 + 1 = 2; you wrote 1.",
        kind='arithmetic slip (a term left out)',
        wrong_on='On the published worksheet V[0, 2] (0-based) is typed 1 instead of 2.',
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
''',
    ),
    Wrong(
        id='d34-03-ws-scores-qt-k',
        exercise='worksheet_scores',
        cause='You computed Qᵀ K, whose entry (i, j) is q_i · k_j: query rows, key columns. The step is Kᵀ Q, one row per key and one column per query; your grid is its transpose.',
        kind='transposed product (operands swapped)',
        wrong_on='On the published worksheet row 1 is typed 3 6 0 1 instead of 3 1 3 2.',
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
''',
    ),
    Wrong(
        id='d34-03-ws-scores-kt-k',
        exercise='worksheet_scores',
        cause="You multiplied Kᵀ by K instead of by Q: the grid's top must be Q, the queries, so entry (i, j) is k_i · q_j.",
        kind='wrong operand (K used twice)',
        wrong_on='On the published worksheet row 1 is typed 2 3 1 0 instead of 3 1 3 2.',
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
2 3 1 0
3 6 0 1
1 0 2 -1
0 1 -1 1
"""
''',
    ),
    Wrong(
        id='d34-03-ws-scaled-truncate',
        exercise='worksheet_scaled',
        cause='For the score -1 you wrote 0: that is rounding toward zero. The floor rounds down, also below zero: ⌊-1/2⌋ = -1.',
        kind='rounding toward zero instead of down',
        wrong_on='On the published worksheet scaled[2, 1] (0-based) is typed 0 instead of -1.',
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
''',
    ),
    Wrong(
        id='d34-03-ws-scaled-round-nearest',
        exercise='worksheet_scaled',
        cause='You rounded s/2 to the nearest whole number (3/2 → 2, 1/2 → 0, -1/2 → 0); the step is the floor: ⌊3/2⌋ = 1, ⌊-1/2⌋ = -1.',
        kind='rounding to nearest instead of down',
        wrong_on='On the published worksheet row 1 is typed 2 0 2 1 instead of 1 0 1 1.',
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
2 0 2 1
3 2 2 2
0 0 1 0
0 0 0 0
"""
''',
    ),
    Wrong(
        id='d34-03-ws-scaled-ceil',
        exercise='worksheet_scaled',
        cause='You rounded every odd score up (⌈x/2⌉); the step rounds down: ⌊3/2⌋ = 1, ⌊1/2⌋ = 0, ⌊-1/2⌋ = -1.',
        kind='rounding up instead of down',
        wrong_on='On the published worksheet row 1 is typed 2 1 2 1 instead of 1 0 1 1.',
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
''',
    ),
    Wrong(
        id='d34-03-ws-a-rows-normalised',
        exercise='worksheet_A',
        cause="You divided each power by its row's sum; with tokens as columns each query is a column, so every column of A must sum to 1.",
        kind='normalised along the wrong axis',
        wrong_on='On the published worksheet A[0, 0] is typed 3/10 instead of 3/32.',
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
''',
    ),
    Wrong(
        id='d34-03-ws-a-unscaled',
        exercise='worksheet_A',
        cause='You raised 3 to the scores themselves instead of to the scaled scores ⌊scores/2⌋ of step 3.',
        kind='a step skipped (powers of the unscaled scores)',
        wrong_on='On the published worksheet A[0, 0] is typed 27/760 instead of 3/32.',
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
''',
    ),
    Wrong(
        id='d34-03-ws-a-tip-one-entry',
        exercise='worksheet_A',
        cause='In column 2 you turned the 1/3 into 1 but left the other powers as they were; the tip is to multiply the *whole* column by 3 (3, 9, 1, 3), which keeps the weights 3/16, 9/16, 1/16, 3/16.',
        kind='a rescaling applied to one entry instead of the whole column',
        wrong_on='On the published worksheet column 2 is typed 1/6 1/2 1/6 1/6 instead of 3/16 9/16 1/16 3/16.',
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
3/32 1/6 3/16 3/14
27/32 1/2 9/16 9/14
1/32 1/6 3/16 1/14
1/32 1/6 1/16 1/14
"""
''',
    ),
    Wrong(
        id='d34-03-ws-z-a-transposed',
        exercise='worksheet_Z',
        cause="You mixed the values with the rows of A (V Aᵀ); column j of Z must use column j of A, query j's weights: Z = V A.",
        kind='transposed operand',
        wrong_on='On the published worksheet Z[0, 0] is typed 153/224 instead of 3/16.',
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
''',
    ),
    Wrong(
        id='d34-03-ws-z-unnormalised-powers',
        exercise='worksheet_Z',
        cause='You multiplied V by the powers 3^scaled before dividing by the column sums; Z = V A uses the normalised weights A.',
        kind='wrong operand (powers instead of weights)',
        wrong_on='On the published worksheet Z[0, 0] is typed 6 instead of 3/16.',
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
''',
    ),
    Wrong(
        id='d34-03-kqs-qt-k',
        exercise='key_query_scores',
        cause='You return `Q.T @ K`, entry (i, j) = q_i · k_j, which is T_q×T_k; the exercise wants Kᵀ Q, one row per key.',
        kind='operands swapped (transposed result)',
        wrong_on='For K = [[1, 0]] and Q = [[1, 2, 3]] (2 keys, 3 queries, d_k = 1) it returns a 3×2 array instead of 2×3.',
        source=r'''import math
from fractions import Fraction

import numpy as np
from grader.learner.validation import as_fractions

def key_query_scores(K, Q):
    """Kᵀ Q for keys and queries stored as columns: entry [i, j] is k_i · q_j.

    K: d_k×T_k and Q: d_k×T_q (ints, Fractions or floats). Returns T_k×T_q Fractions.
    """
    K = as_fractions(K, "K")
    Q = as_fractions(Q, "Q")
    if K.shape[0] != Q.shape[0]:
        raise ValueError(f"K and Q must have the same number of rows d_k, got K of shape "
                         f"{K.shape} and Q of shape {Q.shape}")
    return Q.T @ K
''',
    ),
    Wrong(
        id='d34-03-kqs-k-qt',
        exercise='key_query_scores',
        cause='`K @ Q.T` multiplies features by features and gives d_k×d_k (or fails); to dot key i with query j the product is `K.T @ Q`.',
        kind='transpose on the wrong operand',
        wrong_on='For K = Q = [[1, 0], [0, 1]] it happens to give I, but for K = [[1, 2], [0, 0]] and Q = [[1, 0], [1, 0]] it returns [[1, 1], [0, 0]] instead of [[1, 0], [2, 0]].',
        source=r'''import math
from fractions import Fraction

import numpy as np
from grader.learner.validation import as_fractions

def key_query_scores(K, Q):
    """Kᵀ Q for keys and queries stored as columns: entry [i, j] is k_i · q_j.

    K: d_k×T_k and Q: d_k×T_q (ints, Fractions or floats). Returns T_k×T_q Fractions.
    """
    K = as_fractions(K, "K")
    Q = as_fractions(Q, "Q")
    if K.shape[0] != Q.shape[0]:
        raise ValueError(f"K and Q must have the same number of rows d_k, got K of shape "
                         f"{K.shape} and Q of shape {Q.shape}")
    return K @ Q.T
''',
    ),
    Wrong(
        id='d34-03-kqs-loop-off-by-one',
        exercise='key_query_scores',
        cause='Your sum over the features runs `range(d_k - 1)`, so the last feature never enters any score; it must run over all `range(d_k)`.',
        kind='loop bound off by one',
        wrong_on='For K = [[1], [1]] and Q = [[1], [1]] it returns [[1]] instead of [[2]].',
        source=r'''import math
from fractions import Fraction

import numpy as np
from grader.learner.validation import as_fractions

def key_query_scores(K, Q):
    """Kᵀ Q for keys and queries stored as columns: entry [i, j] is k_i · q_j.

    K: d_k×T_k and Q: d_k×T_q (ints, Fractions or floats). Returns T_k×T_q Fractions.
    """
    K = as_fractions(K, "K")
    Q = as_fractions(Q, "Q")
    if K.shape[0] != Q.shape[0]:
        raise ValueError(f"K and Q must have the same number of rows d_k, got K of shape "
                         f"{K.shape} and Q of shape {Q.shape}")
    d_k, T_k = K.shape
    T_q = Q.shape[1]
    out = np.empty((T_k, T_q), dtype=object)
    for i in range(T_k):
        for j in range(T_q):
            out[i, j] = sum((K[p, i] * Q[p, j] for p in range(d_k - 1)), Fraction(0))
    return out
''',
    ),
    Wrong(
        id='d34-03-kqs-floats',
        exercise='key_query_scores',
        cause='`.astype(float)` turns the exact Fractions into floats, so 1/3 becomes 0.333…; keep the object array of Fractions that `K.T @ Q` gives.',
        kind='exactness lost (converted to float)',
        wrong_on='For K = [[Fraction(1, 3)]] and Q = [[1]] it returns 0.3333333333333333 instead of exactly 1/3.',
        source=r'''import math
from fractions import Fraction

import numpy as np
from grader.learner.validation import as_fractions

def key_query_scores(K, Q):
    """Kᵀ Q for keys and queries stored as columns: entry [i, j] is k_i · q_j.

    K: d_k×T_k and Q: d_k×T_q (ints, Fractions or floats). Returns T_k×T_q Fractions.
    """
    K = as_fractions(K, "K")
    Q = as_fractions(Q, "Q")
    if K.shape[0] != Q.shape[0]:
        raise ValueError(f"K and Q must have the same number of rows d_k, got K of shape "
                         f"{K.shape} and Q of shape {Q.shape}")
    return (K.T @ Q).astype(float)
''',
    ),
    Wrong(
        id='d34-03-floor-int-truncates',
        exercise='floor_half',
        cause='`int(s / 2)` rounds toward zero, so -1/2 becomes 0; the floor needs `math.floor(s / 2)` (or `s // 2`).',
        kind='rounding toward zero instead of down',
        wrong_on='For S = [[-1]] it returns [[0]] instead of [[-1]].',
        source=r'''import math
from fractions import Fraction

import numpy as np
from grader.learner.validation import as_fractions

def floor_half(S):
    """floor(S / 2) entry by entry, exactly: the stand-in for S / √3. floor(-1/2) is -1."""
    S = as_fractions(S, "S")
    return np.array([[Fraction(int(s / 2)) for s in row] for row in S], dtype=object)
''',
    ),
    Wrong(
        id='d34-03-floor-round',
        exercise='floor_half',
        cause='`round(s / 2)` rounds to the nearest (even) whole number, so 3/2 becomes 2; use `math.floor`.',
        kind='rounding to nearest instead of down',
        wrong_on='For S = [[3]] it returns [[2]] instead of [[1]].',
        source=r'''import math
from fractions import Fraction

import numpy as np
from grader.learner.validation import as_fractions

def floor_half(S):
    """floor(S / 2) entry by entry, exactly: the stand-in for S / √3. floor(-1/2) is -1."""
    S = as_fractions(S, "S")
    return np.array([[Fraction(round(s / 2)) for s in row] for row in S], dtype=object)
''',
    ),
    Wrong(
        id='d34-03-floor-before-divide',
        exercise='floor_half',
        cause='You floor s first and then divide by 2, which gives halves like 3/2; the floor must be taken of s/2: `math.floor(s / 2)`.',
        kind='operations in the wrong order',
        wrong_on='For S = [[3]] it returns [[3/2]] instead of [[1]].',
        source=r'''import math
from fractions import Fraction

import numpy as np
from grader.learner.validation import as_fractions

def floor_half(S):
    """floor(S / 2) entry by entry, exactly: the stand-in for S / √3. floor(-1/2) is -1."""
    S = as_fractions(S, "S")
    return np.array([[Fraction(math.floor(s)) / 2 for s in row] for row in S], dtype=object)
''',
    ),
    Wrong(
        id='d34-03-sm3-int-base',
        exercise='softmax3_columns',
        cause='With `3 ** S` the base is the int 3, so a column with no negative score has int powers and `int / int` gives floats; use `Fraction(3) ** int(s)` entry by entry.',
        kind='exactness lost (int base gives floats)',
        wrong_on='For S = [[0], [1], [1]] it returns floats 1/7 ≈ 0.142857… instead of exactly Fraction(1, 7).',
        source=r'''import math
from fractions import Fraction

import numpy as np
from grader.learner.validation import as_fractions

def softmax3_columns(S):
    """3 ** S with every column divided by its sum, exactly. Every column sums to 1.

    S holds whole numbers (the scaled scores).
    """
    S = as_fractions(S, "S", whole=True)
    P = 3 ** S
    return P / P.sum(axis=0)
''',
    ),
    Wrong(
        id='d34-03-sm3-rows',
        exercise='softmax3_columns',
        cause='You divide by `P.sum(axis=1, keepdims=True)`, the row sums; every column must sum to 1, so divide by `P.sum(axis=0)`.',
        kind='normalised along the wrong axis',
        wrong_on='For S = [[0, 1], [0, 0]] it returns [[1/4, 3/4], [1/2, 1/2]] instead of [[1/2, 3/4], [1/2, 1/4]].',
        source=r'''import math
from fractions import Fraction

import numpy as np
from grader.learner.validation import as_fractions

def softmax3_columns(S):
    """3 ** S with every column divided by its sum, exactly. Every column sums to 1.

    S holds whole numbers (the scaled scores).
    """
    S = as_fractions(S, "S", whole=True)
    P = np.array([[Fraction(3) ** int(s) for s in row] for row in S], dtype=object)
    return P / P.sum(axis=1, keepdims=True)
''',
    ),
    Wrong(
        id='d34-03-sm3-total-sum',
        exercise='softmax3_columns',
        cause="`P.sum()` with no axis adds every power in the matrix, so no column sums to 1; divide by each column's sum, `P.sum(axis=0)`.",
        kind='reduction over the whole array',
        wrong_on='For S = [[0, 0], [0, 0]] it returns 1/4 everywhere instead of 1/2.',
        source=r'''import math
from fractions import Fraction

import numpy as np
from grader.learner.validation import as_fractions

def softmax3_columns(S):
    """3 ** S with every column divided by its sum, exactly. Every column sums to 1.

    S holds whole numbers (the scaled scores).
    """
    S = as_fractions(S, "S", whole=True)
    P = np.array([[Fraction(3) ** int(s) for s in row] for row in S], dtype=object)
    return P / P.sum()
''',
    ),
    Wrong(
        id='d34-03-sm3-fraction-whole-array',
        exercise='softmax3_columns',
        cause="`Fraction(3) ** S` with a whole array falls back to floats (the notebook's first trap); raise `Fraction(3)` to each entry separately.",
        kind='exactness lost (Fraction ** array)',
        wrong_on='For S = [[0], [1], [1]] it returns floats (0.142857…) instead of exactly 1/7, 3/7, 3/7.',
        source=r'''import math
from fractions import Fraction

import numpy as np
from grader.learner.validation import as_fractions

def softmax3_columns(S):
    """3 ** S with every column divided by its sum, exactly. Every column sums to 1.

    S holds whole numbers (the scaled scores).
    """
    S = as_fractions(S, "S", whole=True)
    P = Fraction(3) ** S
    return P / P.sum(axis=0)
''',
    ),
    Wrong(
        id='d34-03-abh-scores-swapped-args',
        exercise='attention_by_hand',
        cause='You call `key_query_scores(Q, K)`; its first argument is the keys, so you get Qᵀ K, the transpose of the scores. Call `key_query_scores(K, Q)`.',
        kind='arguments swapped',
        wrong_on='On the published worksheet scores[0] is [3, 6, 0, 1] instead of [3, 1, 3, 2], and A and Z follow.',
        source=r'''import math
from fractions import Fraction

import numpy as np
from grader.learner.validation import as_fractions

def key_query_scores(K, Q):
    """Kᵀ Q for keys and queries stored as columns: entry [i, j] is k_i · q_j.

    K: d_k×T_k and Q: d_k×T_q (ints, Fractions or floats). Returns T_k×T_q Fractions.
    """
    K = as_fractions(K, "K")
    Q = as_fractions(Q, "Q")
    if K.shape[0] != Q.shape[0]:
        raise ValueError(f"K and Q must have the same number of rows d_k, got K of shape "
                         f"{K.shape} and Q of shape {Q.shape}")
    return K.T @ Q

def floor_half(S):
    """floor(S / 2) entry by entry, exactly: the stand-in for S / √3. floor(-1/2) is -1."""
    S = as_fractions(S, "S")
    return np.array([[Fraction(math.floor(s / 2)) for s in row] for row in S], dtype=object)

def softmax3_columns(S):
    """3 ** S with every column divided by its sum, exactly. Every column sums to 1.

    S holds whole numbers (the scaled scores).
    """
    S = as_fractions(S, "S", whole=True)
    P = np.array([[Fraction(3) ** int(s) for s in row] for row in S], dtype=object)
    return P / P.sum(axis=0)

def attention_by_hand(X, W_Q, W_K, W_V):
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
    Q = W_Q @ X
    K = W_K @ X
    V = W_V @ X
    scores = key_query_scores(Q, K)
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    Z = V @ A
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
''',
    ),
    Wrong(
        id='d34-03-abh-z-a-transposed',
        exercise='attention_by_hand',
        cause="`Z = V @ A.T` mixes the values with the rows of A; column j of Z must use column j of A (query j's weights): `Z = V @ A`.",
        kind='transposed operand',
        wrong_on='On the published worksheet Z[0, 0] is 153/224 instead of 3/16.',
        source=r'''import math
from fractions import Fraction

import numpy as np
from grader.learner.validation import as_fractions

def key_query_scores(K, Q):
    """Kᵀ Q for keys and queries stored as columns: entry [i, j] is k_i · q_j.

    K: d_k×T_k and Q: d_k×T_q (ints, Fractions or floats). Returns T_k×T_q Fractions.
    """
    K = as_fractions(K, "K")
    Q = as_fractions(Q, "Q")
    if K.shape[0] != Q.shape[0]:
        raise ValueError(f"K and Q must have the same number of rows d_k, got K of shape "
                         f"{K.shape} and Q of shape {Q.shape}")
    return K.T @ Q

def floor_half(S):
    """floor(S / 2) entry by entry, exactly: the stand-in for S / √3. floor(-1/2) is -1."""
    S = as_fractions(S, "S")
    return np.array([[Fraction(math.floor(s / 2)) for s in row] for row in S], dtype=object)

def softmax3_columns(S):
    """3 ** S with every column divided by its sum, exactly. Every column sums to 1.

    S holds whole numbers (the scaled scores).
    """
    S = as_fractions(S, "S", whole=True)
    P = np.array([[Fraction(3) ** int(s) for s in row] for row in S], dtype=object)
    return P / P.sum(axis=0)

def attention_by_hand(X, W_Q, W_K, W_V):
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
    Q = W_Q @ X
    K = W_K @ X
    V = W_V @ X
    scores = key_query_scores(K, Q)
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    Z = V @ A.T
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
''',
    ),
    Wrong(
        id='d34-03-abh-softmax-of-unscaled',
        exercise='attention_by_hand',
        cause='You pass `scores` to `softmax3_columns` instead of `scaled`, so the floor step has no effect on A and Z.',
        kind='a step skipped',
        wrong_on='On the published worksheet A[0, 0] is 27/760 instead of 3/32.',
        source=r'''import math
from fractions import Fraction

import numpy as np
from grader.learner.validation import as_fractions

def key_query_scores(K, Q):
    """Kᵀ Q for keys and queries stored as columns: entry [i, j] is k_i · q_j.

    K: d_k×T_k and Q: d_k×T_q (ints, Fractions or floats). Returns T_k×T_q Fractions.
    """
    K = as_fractions(K, "K")
    Q = as_fractions(Q, "Q")
    if K.shape[0] != Q.shape[0]:
        raise ValueError(f"K and Q must have the same number of rows d_k, got K of shape "
                         f"{K.shape} and Q of shape {Q.shape}")
    return K.T @ Q

def floor_half(S):
    """floor(S / 2) entry by entry, exactly: the stand-in for S / √3. floor(-1/2) is -1."""
    S = as_fractions(S, "S")
    return np.array([[Fraction(math.floor(s / 2)) for s in row] for row in S], dtype=object)

def softmax3_columns(S):
    """3 ** S with every column divided by its sum, exactly. Every column sums to 1.

    S holds whole numbers (the scaled scores).
    """
    S = as_fractions(S, "S", whole=True)
    P = np.array([[Fraction(3) ** int(s) for s in row] for row in S], dtype=object)
    return P / P.sum(axis=0)

def attention_by_hand(X, W_Q, W_K, W_V):
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
    Q = W_Q @ X
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
        id='d34-03-abh-k-from-wq',
        exercise='attention_by_hand',
        cause='You wrote `K = W_Q @ X`, copied from the query line; the keys come from `W_K`.',
        kind='wrong operand (copy-paste)',
        wrong_on='On the published worksheet K[0] is [2, 1, 1, 1] instead of [1, 2, 0, 0].',
        source=r'''import math
from fractions import Fraction

import numpy as np
from grader.learner.validation import as_fractions

def key_query_scores(K, Q):
    """Kᵀ Q for keys and queries stored as columns: entry [i, j] is k_i · q_j.

    K: d_k×T_k and Q: d_k×T_q (ints, Fractions or floats). Returns T_k×T_q Fractions.
    """
    K = as_fractions(K, "K")
    Q = as_fractions(Q, "Q")
    if K.shape[0] != Q.shape[0]:
        raise ValueError(f"K and Q must have the same number of rows d_k, got K of shape "
                         f"{K.shape} and Q of shape {Q.shape}")
    return K.T @ Q

def floor_half(S):
    """floor(S / 2) entry by entry, exactly: the stand-in for S / √3. floor(-1/2) is -1."""
    S = as_fractions(S, "S")
    return np.array([[Fraction(math.floor(s / 2)) for s in row] for row in S], dtype=object)

def softmax3_columns(S):
    """3 ** S with every column divided by its sum, exactly. Every column sums to 1.

    S holds whole numbers (the scaled scores).
    """
    S = as_fractions(S, "S", whole=True)
    P = np.array([[Fraction(3) ** int(s) for s in row] for row in S], dtype=object)
    return P / P.sum(axis=0)

def attention_by_hand(X, W_Q, W_K, W_V):
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
    Q = W_Q @ X
    K = W_Q @ X
    V = W_V @ X
    scores = key_query_scores(K, Q)
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    Z = V @ A
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
''',
    ),
    Wrong(
        id='d34-03-abh-dict-wrong-variable',
        exercise='attention_by_hand',
        cause='Your dict stores `scores` under the key "scaled"; the entry must hold the floored scores, `scaled`.',
        kind='returning the wrong variable',
        wrong_on='On the published worksheet "scaled" holds [3, 1, 3, 2] in row 0 instead of [1, 0, 1, 1].',
        source=r'''import math
from fractions import Fraction

import numpy as np
from grader.learner.validation import as_fractions

def key_query_scores(K, Q):
    """Kᵀ Q for keys and queries stored as columns: entry [i, j] is k_i · q_j.

    K: d_k×T_k and Q: d_k×T_q (ints, Fractions or floats). Returns T_k×T_q Fractions.
    """
    K = as_fractions(K, "K")
    Q = as_fractions(Q, "Q")
    if K.shape[0] != Q.shape[0]:
        raise ValueError(f"K and Q must have the same number of rows d_k, got K of shape "
                         f"{K.shape} and Q of shape {Q.shape}")
    return K.T @ Q

def floor_half(S):
    """floor(S / 2) entry by entry, exactly: the stand-in for S / √3. floor(-1/2) is -1."""
    S = as_fractions(S, "S")
    return np.array([[Fraction(math.floor(s / 2)) for s in row] for row in S], dtype=object)

def softmax3_columns(S):
    """3 ** S with every column divided by its sum, exactly. Every column sums to 1.

    S holds whole numbers (the scaled scores).
    """
    S = as_fractions(S, "S", whole=True)
    P = np.array([[Fraction(3) ** int(s) for s in row] for row in S], dtype=object)
    return P / P.sum(axis=0)

def attention_by_hand(X, W_Q, W_K, W_V):
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
    Q = W_Q @ X
    K = W_K @ X
    V = W_V @ X
    scores = key_query_scores(K, Q)
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    Z = V @ A
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scores, "A": A, "Z": Z}
''',
    ),
    Wrong(
        id='d34-03-rca-softmax-columns',
        exercise='row_convention_attention',
        cause="You reuse `softmax3_columns(scaled)` unchanged, so A's columns sum to 1; in the row convention each query is a row, so normalise `scaled.T` and transpose back.",
        kind='normalised along the wrong axis',
        wrong_on="On the published worksheet (X_rows = X.T) A[0] is not the transpose of the column convention's A: A[0, 0] = 3/10 instead of 3/32.",
        source=r'''import math
from fractions import Fraction

import numpy as np
from grader.learner.validation import as_fractions

def key_query_scores(K, Q):
    """Kᵀ Q for keys and queries stored as columns: entry [i, j] is k_i · q_j.

    K: d_k×T_k and Q: d_k×T_q (ints, Fractions or floats). Returns T_k×T_q Fractions.
    """
    K = as_fractions(K, "K")
    Q = as_fractions(Q, "Q")
    if K.shape[0] != Q.shape[0]:
        raise ValueError(f"K and Q must have the same number of rows d_k, got K of shape "
                         f"{K.shape} and Q of shape {Q.shape}")
    return K.T @ Q

def floor_half(S):
    """floor(S / 2) entry by entry, exactly: the stand-in for S / √3. floor(-1/2) is -1."""
    S = as_fractions(S, "S")
    return np.array([[Fraction(math.floor(s / 2)) for s in row] for row in S], dtype=object)

def softmax3_columns(S):
    """3 ** S with every column divided by its sum, exactly. Every column sums to 1.

    S holds whole numbers (the scaled scores).
    """
    S = as_fractions(S, "S", whole=True)
    P = np.array([[Fraction(3) ** int(s) for s in row] for row in S], dtype=object)
    return P / P.sum(axis=0)

def row_convention_attention(X_rows, W_Q, W_K, W_V):
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
    Q = X_rows @ W_Q.T
    K = X_rows @ W_K.T
    V = X_rows @ W_V.T
    scores = key_query_scores(K.T, Q.T).T
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    Z = A @ V
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
''',
    ),
    Wrong(
        id='d34-03-rca-scores-k-qt',
        exercise='row_convention_attention',
        cause="You compute `K @ Q.T`, entry (i, j) = k_i · q_j: the column convention's layout. With tokens as rows the scores are `Q @ K.T`, one row per query.",
        kind='transposed scores',
        wrong_on='On the published worksheet scores[0] is [3, 1, 3, 2] instead of [3, 6, 0, 1].',
        source=r'''import math
from fractions import Fraction

import numpy as np
from grader.learner.validation import as_fractions

def key_query_scores(K, Q):
    """Kᵀ Q for keys and queries stored as columns: entry [i, j] is k_i · q_j.

    K: d_k×T_k and Q: d_k×T_q (ints, Fractions or floats). Returns T_k×T_q Fractions.
    """
    K = as_fractions(K, "K")
    Q = as_fractions(Q, "Q")
    if K.shape[0] != Q.shape[0]:
        raise ValueError(f"K and Q must have the same number of rows d_k, got K of shape "
                         f"{K.shape} and Q of shape {Q.shape}")
    return K.T @ Q

def floor_half(S):
    """floor(S / 2) entry by entry, exactly: the stand-in for S / √3. floor(-1/2) is -1."""
    S = as_fractions(S, "S")
    return np.array([[Fraction(math.floor(s / 2)) for s in row] for row in S], dtype=object)

def softmax3_columns(S):
    """3 ** S with every column divided by its sum, exactly. Every column sums to 1.

    S holds whole numbers (the scaled scores).
    """
    S = as_fractions(S, "S", whole=True)
    P = np.array([[Fraction(3) ** int(s) for s in row] for row in S], dtype=object)
    return P / P.sum(axis=0)

def row_convention_attention(X_rows, W_Q, W_K, W_V):
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
    Q = X_rows @ W_Q.T
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
        id='d34-03-rca-z-at-v',
        exercise='row_convention_attention',
        cause='`A.T @ V` mixes the values with the columns of A; with tokens as rows, row i of Z uses row i of A: `Z = A @ V`.',
        kind='transposed operand',
        wrong_on='On the published worksheet Z[0, 0] is 153/224 instead of 3/16.',
        source=r'''import math
from fractions import Fraction

import numpy as np
from grader.learner.validation import as_fractions

def key_query_scores(K, Q):
    """Kᵀ Q for keys and queries stored as columns: entry [i, j] is k_i · q_j.

    K: d_k×T_k and Q: d_k×T_q (ints, Fractions or floats). Returns T_k×T_q Fractions.
    """
    K = as_fractions(K, "K")
    Q = as_fractions(Q, "Q")
    if K.shape[0] != Q.shape[0]:
        raise ValueError(f"K and Q must have the same number of rows d_k, got K of shape "
                         f"{K.shape} and Q of shape {Q.shape}")
    return K.T @ Q

def floor_half(S):
    """floor(S / 2) entry by entry, exactly: the stand-in for S / √3. floor(-1/2) is -1."""
    S = as_fractions(S, "S")
    return np.array([[Fraction(math.floor(s / 2)) for s in row] for row in S], dtype=object)

def softmax3_columns(S):
    """3 ** S with every column divided by its sum, exactly. Every column sums to 1.

    S holds whole numbers (the scaled scores).
    """
    S = as_fractions(S, "S", whole=True)
    P = np.array([[Fraction(3) ** int(s) for s in row] for row in S], dtype=object)
    return P / P.sum(axis=0)

def row_convention_attention(X_rows, W_Q, W_K, W_V):
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
    Q = X_rows @ W_Q.T
    K = X_rows @ W_K.T
    V = X_rows @ W_V.T
    scores = key_query_scores(K.T, Q.T).T
    scaled = floor_half(scores)
    A = softmax3_columns(scaled.T).T
    Z = A.T @ V
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
''',
    ),
    Wrong(
        id='d34-03-rca-a-no-back-transpose',
        exercise='row_convention_attention',
        cause='You softmax the columns of `scaled.T` but do not transpose the result back, so A is the column-convention matrix; write `softmax3_columns(scaled.T).T`.',
        kind='transpose forgotten',
        wrong_on='On the published worksheet A[0, 1] is 3/16 instead of 27/32, and Z follows.',
        source=r'''import math
from fractions import Fraction

import numpy as np
from grader.learner.validation import as_fractions

def key_query_scores(K, Q):
    """Kᵀ Q for keys and queries stored as columns: entry [i, j] is k_i · q_j.

    K: d_k×T_k and Q: d_k×T_q (ints, Fractions or floats). Returns T_k×T_q Fractions.
    """
    K = as_fractions(K, "K")
    Q = as_fractions(Q, "Q")
    if K.shape[0] != Q.shape[0]:
        raise ValueError(f"K and Q must have the same number of rows d_k, got K of shape "
                         f"{K.shape} and Q of shape {Q.shape}")
    return K.T @ Q

def floor_half(S):
    """floor(S / 2) entry by entry, exactly: the stand-in for S / √3. floor(-1/2) is -1."""
    S = as_fractions(S, "S")
    return np.array([[Fraction(math.floor(s / 2)) for s in row] for row in S], dtype=object)

def softmax3_columns(S):
    """3 ** S with every column divided by its sum, exactly. Every column sums to 1.

    S holds whole numbers (the scaled scores).
    """
    S = as_fractions(S, "S", whole=True)
    P = np.array([[Fraction(3) ** int(s) for s in row] for row in S], dtype=object)
    return P / P.sum(axis=0)

def row_convention_attention(X_rows, W_Q, W_K, W_V):
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
    Q = X_rows @ W_Q.T
    K = X_rows @ W_K.T
    V = X_rows @ W_V.T
    scores = key_query_scores(K.T, Q.T).T
    scaled = floor_half(scores)
    A = softmax3_columns(scaled.T)
    Z = A @ V
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
''',
    ),
    Wrong(
        id='d34-03-rca-v-unprojected-order',
        exercise='row_convention_attention',
        cause='`X_rows @ W_V` needs W_V as d_in×3; the given W_V is 3×d_in, so the projection is `X_rows @ W_V.T` (tokens as rows: (W_V X)ᵀ = Xᵀ W_Vᵀ).',
        kind='transposed weight matrix (no transpose on W)',
        wrong_on='On the published worksheet (d_in = 6) it raises a shape error; on a square case (d_in = 3, W_V = [[0, 1, 0], [0, 0, 1], [1, 0, 0]], X_rows = I) V comes out W_V instead of W_Vᵀ.',
        source=r'''import math
from fractions import Fraction

import numpy as np
from grader.learner.validation import as_fractions

def key_query_scores(K, Q):
    """Kᵀ Q for keys and queries stored as columns: entry [i, j] is k_i · q_j.

    K: d_k×T_k and Q: d_k×T_q (ints, Fractions or floats). Returns T_k×T_q Fractions.
    """
    K = as_fractions(K, "K")
    Q = as_fractions(Q, "Q")
    if K.shape[0] != Q.shape[0]:
        raise ValueError(f"K and Q must have the same number of rows d_k, got K of shape "
                         f"{K.shape} and Q of shape {Q.shape}")
    return K.T @ Q

def floor_half(S):
    """floor(S / 2) entry by entry, exactly: the stand-in for S / √3. floor(-1/2) is -1."""
    S = as_fractions(S, "S")
    return np.array([[Fraction(math.floor(s / 2)) for s in row] for row in S], dtype=object)

def softmax3_columns(S):
    """3 ** S with every column divided by its sum, exactly. Every column sums to 1.

    S holds whole numbers (the scaled scores).
    """
    S = as_fractions(S, "S", whole=True)
    P = np.array([[Fraction(3) ** int(s) for s in row] for row in S], dtype=object)
    return P / P.sum(axis=0)

def row_convention_attention(X_rows, W_Q, W_K, W_V):
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
    Q = X_rows @ W_Q.T
    K = X_rows @ W_K.T
    V = X_rows @ W_V
    scores = key_query_scores(K.T, Q.T).T
    scaled = floor_half(scores)
    A = softmax3_columns(scaled.T).T
    Z = A @ V
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
''',
    ),
    Wrong(
        id='d34-04-causal-triu',
        exercise='causal_mask',
        cause='`np.triu` keeps the upper triangle, where key j > query i: the future. Query i may see keys j ≤ i, the lower triangle: `np.tril`.',
        kind='wrong triangle',
        wrong_on='For T = 2 it returns [[True, True], [False, True]] instead of [[True, False], [True, True]].',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def causal_mask(T):
    """[T, T] boolean mask: True where key j <= query i."""
    T = positive_int(T, "T")
    return np.triu(np.ones((T, T), dtype=bool))
''',
    ),
    Wrong(
        id='d34-04-causal-diag-excluded',
        exercise='causal_mask',
        cause='`k=-1` drops the diagonal, so no token sees itself and row 0 is all False; the diagonal is included: `np.tril(..., k=0)`.',
        kind='triangle offset off by one',
        wrong_on='For T = 1 it returns [[False]] instead of [[True]].',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def causal_mask(T):
    """[T, T] boolean mask: True where key j <= query i."""
    T = positive_int(T, "T")
    return np.tril(np.ones((T, T), dtype=bool), k=-1)
''',
    ),
    Wrong(
        id='d34-04-causal-float-dtype',
        exercise='causal_mask',
        cause='`np.tril(np.ones((T, T)))` is an array of floats 1.0/0.0; the mask must have dtype bool (`np.ones((T, T), dtype=bool)`), or masked code that uses it with `np.where` or `~` breaks.',
        kind='wrong dtype',
        wrong_on='For T = 2 it returns [[1.0, 0.0], [1.0, 1.0]] of dtype float64 instead of a bool array.',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def causal_mask(T):
    """[T, T] boolean mask: True where key j <= query i."""
    T = positive_int(T, "T")
    return np.tril(np.ones((T, T)))
''',
    ),
    Wrong(
        id='d34-04-causal-compare-flipped',
        exercise='causal_mask',
        cause='`i[:, None] <= j[None, :]` is True where the query index is at most the key index, the future; the mask is key ≤ query: `j[None, :] <= i[:, None]`.',
        kind='comparison the wrong way round',
        wrong_on='For T = 3 row 0 is [True, True, True] instead of [True, False, False].',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def causal_mask(T):
    """[T, T] boolean mask: True where key j <= query i."""
    T = positive_int(T, "T")
    i = np.arange(T)
    return i[:, None] <= i[None, :]
''',
    ),
    Wrong(
        id='d34-04-pad-off-by-one',
        exercise='padding_mask',
        cause='`<=` marks position `length` as real too; positions 0..length-1 are real, so compare with `<`.',
        kind='comparison off by one',
        wrong_on='For lengths = [2] and T = 3 it returns [[True, True, True]] instead of [[True, True, False]].',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def padding_mask(lengths, T):
    """[B, T] boolean mask: True at the real tokens of each sentence, False at its padding."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return np.arange(T)[None, :] <= lengths[:, None]
''',
    ),
    Wrong(
        id='d34-04-pad-axes-swapped',
        exercise='padding_mask',
        cause='You put the positions in a column and the lengths in a row, which builds a [T, B] grid; positions go along a row (`[None, :]`), lengths down a column (`[:, None]`).',
        kind='broadcast axes swapped',
        wrong_on='For lengths = [1, 2] and T = 3 it returns a 3×2 array instead of 2×3.',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def padding_mask(lengths, T):
    """[B, T] boolean mask: True at the real tokens of each sentence, False at its padding."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return np.arange(T)[:, None] < lengths[None, :]
''',
    ),
    Wrong(
        id='d34-04-pad-no-new-axis',
        exercise='padding_mask',
        cause='`np.arange(T) < lengths` compares position b with length b elementwise instead of building a grid; give lengths a column axis: `lengths[:, None]`.',
        kind='missing [:, None] (broadcasting mistake)',
        wrong_on='For lengths = [2] and T = 3 it returns the 1-D [True, True, False] instead of [[True, True, False]]; for B ≠ T (and B ≠ 1) it raises.',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def padding_mask(lengths, T):
    """[B, T] boolean mask: True at the real tokens of each sentence, False at its padding."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return np.arange(T) < lengths
''',
    ),
    Wrong(
        id='d34-04-pad-inverted',
        exercise='padding_mask',
        cause="`>=` is True at the padding; this course's polarity is True = real token (may attend), so use `<`.",
        kind='mask inverted',
        wrong_on='For lengths = [2] and T = 3 it returns [[False, False, True]] instead of [[True, True, False]].',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def padding_mask(lengths, T):
    """[B, T] boolean mask: True at the real tokens of each sentence, False at its padding."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return np.arange(T)[None, :] >= lengths[:, None]
''',
    ),
    Wrong(
        id='d34-04-am-pad-on-queries',
        exercise='attention_mask',
        cause='`pad[:, :, None]` blanks the *rows* of padding queries; padding hides keys, so it must blank columns: `pad[:, None, :]`.',
        kind='padding applied to the wrong axis (queries)',
        wrong_on='For lengths = [1], T = 2, causal=False it returns [[[True, True], [False, False]]] instead of [[[True, False], [True, False]]].',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def causal_mask(T):
    """[T, T] boolean mask: True where key j <= query i."""
    T = positive_int(T, "T")
    return np.tril(np.ones((T, T), dtype=bool))

def padding_mask(lengths, T):
    """[B, T] boolean mask: True at the real tokens of each sentence, False at its padding."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return np.arange(T)[None, :] < lengths[:, None]

def attention_mask(lengths, T, causal=True):
    """[B, T, T] boolean mask: key padding, combined with the causal mask if causal=True."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    if not isinstance(causal, (bool, np.bool_)):
        raise ValueError(f"causal must be True or False, got {causal!r}")
    pad = padding_mask(lengths, T)
    mask = np.broadcast_to(pad[:, :, None], (len(lengths), T, T))
    if causal:
        mask = mask & causal_mask(T)[None, :, :]
    return mask
''',
    ),
    Wrong(
        id='d34-04-am-no-broadcast',
        exercise='attention_mask',
        cause='With `causal=False` you return `pad[:, None, :]`, of shape [B, 1, T]; the function must return the full [B, T, T] mask (e.g. `np.broadcast_to(..., (B, T, T))` or `& np.ones((T, T), bool)`).',
        kind='result not broadcast to the full shape',
        wrong_on='For lengths = [1], T = 2, causal=False it returns shape [1, 1, 2] instead of [1, 2, 2].',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def causal_mask(T):
    """[T, T] boolean mask: True where key j <= query i."""
    T = positive_int(T, "T")
    return np.tril(np.ones((T, T), dtype=bool))

def padding_mask(lengths, T):
    """[B, T] boolean mask: True at the real tokens of each sentence, False at its padding."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return np.arange(T)[None, :] < lengths[:, None]

def attention_mask(lengths, T, causal=True):
    """[B, T, T] boolean mask: key padding, combined with the causal mask if causal=True."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    if not isinstance(causal, (bool, np.bool_)):
        raise ValueError(f"causal must be True or False, got {causal!r}")
    pad = padding_mask(lengths, T)[:, None, :]
    if causal:
        return pad & causal_mask(T)[None, :, :]
    return pad
''',
    ),
    Wrong(
        id='d34-04-am-or',
        exercise='attention_mask',
        cause='`|` lets a pair through when *either* mask allows it; a pair may attend only if both allow it: combine with `&`.',
        kind='wrong logical operator',
        wrong_on='For lengths = [1], T = 2, causal=True it returns [[[True, False], [True, True]]] instead of [[[True, False], [True, False]]] (query 1 reaches the padding key).',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def causal_mask(T):
    """[T, T] boolean mask: True where key j <= query i."""
    T = positive_int(T, "T")
    return np.tril(np.ones((T, T), dtype=bool))

def padding_mask(lengths, T):
    """[B, T] boolean mask: True at the real tokens of each sentence, False at its padding."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return np.arange(T)[None, :] < lengths[:, None]

def attention_mask(lengths, T, causal=True):
    """[B, T, T] boolean mask: key padding, combined with the causal mask if causal=True."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    if not isinstance(causal, (bool, np.bool_)):
        raise ValueError(f"causal must be True or False, got {causal!r}")
    pad = padding_mask(lengths, T)[:, None, :]
    mask = np.broadcast_to(pad, (len(lengths), T, T))
    if causal:
        mask = mask | causal_mask(T)[None, :, :]
    return np.array(mask)
''',
    ),
    Wrong(
        id='d34-04-am-causal-ignored',
        exercise='attention_mask',
        cause='You always combine with the causal mask, without looking at `causal`; with `causal=False` only the padding should be masked.',
        kind='parameter ignored',
        wrong_on='For lengths = [2], T = 2, causal=False it returns [[[True, False], [True, True]]] instead of all True.',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def causal_mask(T):
    """[T, T] boolean mask: True where key j <= query i."""
    T = positive_int(T, "T")
    return np.tril(np.ones((T, T), dtype=bool))

def padding_mask(lengths, T):
    """[B, T] boolean mask: True at the real tokens of each sentence, False at its padding."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return np.arange(T)[None, :] < lengths[:, None]

def attention_mask(lengths, T, causal=True):
    """[B, T, T] boolean mask: key padding, combined with the causal mask if causal=True."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    if not isinstance(causal, (bool, np.bool_)):
        raise ValueError(f"causal must be True or False, got {causal!r}")
    pad = padding_mask(lengths, T)[:, None, :]
    return pad & causal_mask(T)[None, :, :]
''',
    ),
    Wrong(
        id='d34-04-am-pad-rows-too',
        exercise='attention_mask',
        cause="You also mask the padding queries' rows (`pad[:, :, None] & pad[:, None, :]`); padding hides keys only, and a `<pad>` query's own row stays as the causal mask leaves it.",
        kind='extra masking (query rows blanked)',
        wrong_on='For lengths = [1], T = 2, causal=True the row of query 1 is [False, False] instead of [True, False].',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def causal_mask(T):
    """[T, T] boolean mask: True where key j <= query i."""
    T = positive_int(T, "T")
    return np.tril(np.ones((T, T), dtype=bool))

def padding_mask(lengths, T):
    """[B, T] boolean mask: True at the real tokens of each sentence, False at its padding."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return np.arange(T)[None, :] < lengths[:, None]

def attention_mask(lengths, T, causal=True):
    """[B, T, T] boolean mask: key padding, combined with the causal mask if causal=True."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    if not isinstance(causal, (bool, np.bool_)):
        raise ValueError(f"causal must be True or False, got {causal!r}")
    pad = padding_mask(lengths, T)
    mask = pad[:, :, None] & pad[:, None, :]
    if causal:
        mask = mask & causal_mask(T)[None, :, :]
    return mask
''',
    ),
    Wrong(
        id='d34-04-ms-mask-after',
        exercise='masked_softmax',
        cause='You take the softmax of all scores and then zero the masked weights, so the allowed weights no longer sum to 1 and still depend on the masked scores; set masked scores to -inf *before* the softmax.',
        kind='mask applied after the softmax',
        wrong_on='For scores = [0.0, 0.0] and mask = [True, False] it returns [0.5, 0.0] instead of [1.0, 0.0].',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def masked_softmax(scores, mask):
    """Softmax over the last axis with masked scores set to -inf first.

    mask: boolean, True = may attend, broadcasts to scores. A row with no allowed key
    returns zeros, never NaN.
    """
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    return w * mask
''',
    ),
    Wrong(
        id='d34-04-ms-fill-minus-1e9',
        exercise='masked_softmax',
        cause='Filling with -1e9 and no special case spreads a fully masked row evenly over forbidden keys; fill with -inf and return zeros for a row with no allowed key.',
        kind='-inf vs a large finite fill',
        wrong_on='For scores = [1.0, 2.0] and mask = [False, False] it returns [0.5, 0.5] instead of [0.0, 0.0].',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def masked_softmax(scores, mask):
    """Softmax over the last axis with masked scores set to -inf first.

    mask: boolean, True = may attend, broadcasts to scores. A row with no allowed key
    returns zeros, never NaN.
    """
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    s = np.where(mask, scores, -1e9)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
''',
    ),
    Wrong(
        id='d34-04-ms-empty-row-nan',
        exercise='masked_softmax',
        cause='With -inf everywhere in a row, `s - s.max()` is -inf - (-inf) = NaN; a row with no allowed key must come out as zeros (shift it by a finite number instead, and return 0 where the sum is 0).',
        kind='a case not handled (empty row)',
        wrong_on='For scores = [1.0, 2.0] and mask = [False, False] it returns [nan, nan] instead of [0.0, 0.0].',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def masked_softmax(scores, mask):
    """Softmax over the last axis with masked scores set to -inf first.

    mask: boolean, True = may attend, broadcasts to scores. A row with no allowed key
    returns zeros, never NaN.
    """
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    s = np.where(mask, scores, -np.inf)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
''',
    ),
    Wrong(
        id='d34-04-ms-mask-inverted',
        exercise='masked_softmax',
        cause='`np.where(mask, -np.inf, scores)` blanks the allowed keys and keeps the forbidden ones; True means may attend, so keep the score where mask is True: `np.where(mask, scores, -np.inf)`.',
        kind='mask inverted',
        wrong_on='For scores = [0.0, 1.0] and mask = [True, False] it returns [0.0, 1.0] instead of [1.0, 0.0].',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def masked_softmax(scores, mask):
    """Softmax over the last axis with masked scores set to -inf first.

    mask: boolean, True = may attend, broadcasts to scores. A row with no allowed key
    returns zeros, never NaN.
    """
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    s = np.where(mask, -np.inf, scores)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(s - m)
    total = e.sum(axis=-1, keepdims=True)
    return np.where(total > 0, e / np.where(total > 0, total, 1.0), 0.0)
''',
    ),
    Wrong(
        id='d34-04-ms-max-before-mask',
        exercise='masked_softmax',
        cause='You subtract the max of the *unmasked* scores; when a masked key has a huge score, every allowed exp underflows to 0 and the row becomes 0 or NaN. Take the max after the -inf fill, over the allowed scores only.',
        kind='shift taken before masking',
        wrong_on='For scores = [0.0, 1.0, 900.0] and mask = [True, True, False] it returns [0, 0, 0] instead of [0.269, 0.731, 0].',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def masked_softmax(scores, mask):
    """Softmax over the last axis with masked scores set to -inf first.

    mask: boolean, True = may attend, broadcasts to scores. A row with no allowed key
    returns zeros, never NaN.
    """
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    m = scores.max(axis=-1, keepdims=True)
    e = np.where(mask, np.exp(scores - m), 0.0)
    total = e.sum(axis=-1, keepdims=True)
    return np.where(total > 0, e / np.where(total > 0, total, 1.0), 0.0)
''',
    ),
    Wrong(
        id='d34-04-ma-none-float-mask',
        exercise='masked_attention',
        cause="For `mask=None` you build `np.ones_like(scores)`, a float array, which `masked_softmax`'s `bool_mask` rejects; use a boolean all-True mask, e.g. `np.ones(scores.shape, dtype=bool)`.",
        kind='None handled with a float mask',
        wrong_on='For Q = K = V = [[1.0]] and mask=None it raises ValueError instead of returning ([[1.0]], [[1.0]]).',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def masked_softmax(scores, mask):
    """Softmax over the last axis with masked scores set to -inf first.

    mask: boolean, True = may attend, broadcasts to scores. A row with no allowed key
    returns zeros, never NaN.
    """
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    s = np.where(mask, scores, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(s - m)
    total = e.sum(axis=-1, keepdims=True)
    return np.where(total > 0, e / np.where(total > 0, total, 1.0), 0.0)

def masked_attention(Q, K, V, mask=None):
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
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is None:
        mask = np.ones_like(scores)
    weights = masked_softmax(scores, mask)
    return weights @ V, weights
''',
    ),
    Wrong(
        id='d34-04-ma-no-scale',
        exercise='masked_attention',
        cause='Your scores are `Q @ Kᵀ` without the division by `np.sqrt(Q.shape[-1])`.',
        kind='scale left out',
        wrong_on='For Q = [[2.0, 0.0]], K = [[1.0, 0.0], [0.0, 0.0]], V = I, mask=None the weights are [0.881, 0.119] instead of [0.805, 0.195].',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def masked_softmax(scores, mask):
    """Softmax over the last axis with masked scores set to -inf first.

    mask: boolean, True = may attend, broadcasts to scores. A row with no allowed key
    returns zeros, never NaN.
    """
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    s = np.where(mask, scores, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(s - m)
    total = e.sum(axis=-1, keepdims=True)
    return np.where(total > 0, e / np.where(total > 0, total, 1.0), 0.0)

def masked_attention(Q, K, V, mask=None):
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
    scores = Q @ np.swapaxes(K, -1, -2)
    if mask is None:
        mask = np.ones(scores.shape, dtype=bool)
    weights = masked_softmax(scores, mask)
    return weights @ V, weights
''',
    ),
    Wrong(
        id='d34-04-ma-full-transpose',
        exercise='masked_attention',
        cause='`K.T` reverses every axis of a batched K; swap only the last two (`np.swapaxes(K, -1, -2)`).',
        kind='full transpose on a batched array',
        wrong_on='For Q, K, V of shape [2, 3, 4] it raises instead of returning [2, 3, 4] outputs.',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def masked_softmax(scores, mask):
    """Softmax over the last axis with masked scores set to -inf first.

    mask: boolean, True = may attend, broadcasts to scores. A row with no allowed key
    returns zeros, never NaN.
    """
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    s = np.where(mask, scores, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(s - m)
    total = e.sum(axis=-1, keepdims=True)
    return np.where(total > 0, e / np.where(total > 0, total, 1.0), 0.0)

def masked_attention(Q, K, V, mask=None):
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
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    if mask is None:
        mask = np.ones(scores.shape, dtype=bool)
    weights = masked_softmax(scores, mask)
    return weights @ V, weights
''',
    ),
    Wrong(
        id='d34-04-ma-fill-zero',
        exercise='masked_attention',
        cause='You set masked scores to 0 and take a plain softmax; 0 is an ordinary score, so masked keys keep real weight. Use your `masked_softmax` (which fills with -inf).',
        kind='masked scores filled with 0',
        wrong_on='For Q = K = [[0.0], [0.0]], V = [[1.0], [3.0]] and mask = [[True, False], [True, True]], query 0 gets weights [0.5, 0.5] instead of [1, 0].',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def masked_softmax(scores, mask):
    """Softmax over the last axis with masked scores set to -inf first.

    mask: boolean, True = may attend, broadcasts to scores. A row with no allowed key
    returns zeros, never NaN.
    """
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    s = np.where(mask, scores, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(s - m)
    total = e.sum(axis=-1, keepdims=True)
    return np.where(total > 0, e / np.where(total > 0, total, 1.0), 0.0)

def masked_attention(Q, K, V, mask=None):
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
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, 0.0)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights
''',
    ),
    Wrong(
        id='d34-04-ic-replace-from-t',
        exercise='is_causal',
        cause='You replace `X[t:]`, token t included, but output t may depend on token t; replace only the tokens after it, `X[t + 1:]`.',
        kind='slice off by one',
        wrong_on='For attend = causal self-attention (masked_attention(X, X, X, causal_mask(T))[0]), T = 3, d = 2 it returns False instead of True.',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def is_causal(attend, T, d, seed=0):
    """True if changing tokens after position t never changes outputs 0..t of attend."""
    if not callable(attend):
        raise ValueError(f"attend must be a function of X [T, d], got {type(attend).__name__}")
    T, d = positive_int(T, "T"), positive_int(d, "d")
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, d))
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
        id='d34-04-ic-compare-all',
        exercise='is_causal',
        cause='You compare every output with `before`, but outputs after t are allowed to change when their tokens change; compare only `after[:t + 1]` with `before[:t + 1]`.',
        kind='compared too much',
        wrong_on='For attend = lambda X: X (the identity, which is causal), T = 3, d = 2 it returns False instead of True.',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def is_causal(attend, T, d, seed=0):
    """True if changing tokens after position t never changes outputs 0..t of attend."""
    if not callable(attend):
        raise ValueError(f"attend must be a function of X [T, d], got {type(attend).__name__}")
    T, d = positive_int(T, "T"), positive_int(d, "d")
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, d))
    before = attend(X)
    for t in range(T):
        X_new = X.copy()
        X_new[t + 1:] = rng.normal(size=(T - t - 1, d))
        after = attend(X_new)
        if not np.allclose(after, before):
            return False
    return True
''',
    ),
    Wrong(
        id='d34-04-ic-compare-before-t',
        exercise='is_causal',
        cause='You compare `after[:t]`, outputs 0..t-1, so output t itself is never checked against the tokens after it; compare `after[:t + 1]`.',
        kind='slice off by one',
        wrong_on='For attend = lambda X: np.roll(X, -1, axis=0) (output t is token t + 1), T = 3, d = 2 it returns True instead of False.',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def is_causal(attend, T, d, seed=0):
    """True if changing tokens after position t never changes outputs 0..t of attend."""
    if not callable(attend):
        raise ValueError(f"attend must be a function of X [T, d], got {type(attend).__name__}")
    T, d = positive_int(T, "T"), positive_int(d, "d")
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, d))
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
        id='d34-04-ic-return-in-loop',
        exercise='is_causal',
        cause='Your `return True` sits inside the loop, in the else branch, so only t = 0 is ever tested; return True only after the loop has checked every t.',
        kind='return placed inside the loop',
        wrong_on='For attend = lambda X: np.vstack([X[:1], X[2:], X[-1:]]) (output 0 is causal, output 1 reads token 2), T = 3, d = 2 it returns True instead of False.',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def is_causal(attend, T, d, seed=0):
    """True if changing tokens after position t never changes outputs 0..t of attend."""
    if not callable(attend):
        raise ValueError(f"attend must be a function of X [T, d], got {type(attend).__name__}")
    T, d = positive_int(T, "T"), positive_int(d, "d")
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, d))
    before = attend(X)
    for t in range(T):
        X_new = X.copy()
        X_new[t + 1:] = rng.normal(size=(T - t - 1, d))
        after = attend(X_new)
        if not np.allclose(after[:t + 1], before[:t + 1]):
            return False
        else:
            return True
    return True
''',
    ),
    Wrong(
        id='d34-04-ic-no-copy',
        exercise='is_causal',
        cause='`X_new = X` is not a copy: writing the new rows changes X itself, and when `attend` returns a view of its input, `before` changes with it, so nothing ever looks different. Use `X_new = X.copy()`.',
        kind='in-place change of the input (no copy)',
        wrong_on='For attend = lambda X: X[::-1] (a view; output 0 is the last token, not causal), T = 3, d = 2 it returns True instead of False.',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def is_causal(attend, T, d, seed=0):
    """True if changing tokens after position t never changes outputs 0..t of attend."""
    if not callable(attend):
        raise ValueError(f"attend must be a function of X [T, d], got {type(attend).__name__}")
    T, d = positive_int(T, "T"), positive_int(d, "d")
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, d))
    before = attend(X)
    for t in range(T):
        X_new = X
        X_new[t + 1:] = rng.normal(size=(T - t - 1, d))
        after = attend(X_new)
        if not np.allclose(after[:t + 1], before[:t + 1]):
            return False
    return True
''',
    ),
    Wrong(
        id='d34-04-cmc-tril',
        exercise='causal_mask_columns',
        cause='`np.tril` is the row-convention mask; with keys as rows and queries as columns, key i is visible to query j when i ≤ j, the upper triangle: `np.triu`.',
        kind='wrong triangle (row convention kept)',
        wrong_on='For T = 2 it returns [[True, False], [True, True]] instead of [[True, True], [False, True]].',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def causal_mask_columns(T):
    """[T, T] causal mask with tokens as columns: entry [i, j] (key i, query j) is True where i <= j."""
    T = positive_int(T, "T")
    return np.tril(np.ones((T, T), dtype=bool))
''',
    ),
    Wrong(
        id='d34-04-cmc-diag-excluded',
        exercise='causal_mask_columns',
        cause='`k=1` leaves out the diagonal, so no token sees itself; use `np.triu(..., k=0)`.',
        kind='triangle offset off by one',
        wrong_on='For T = 1 it returns [[False]] instead of [[True]].',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def causal_mask_columns(T):
    """[T, T] causal mask with tokens as columns: entry [i, j] (key i, query j) is True where i <= j."""
    T = positive_int(T, "T")
    return np.triu(np.ones((T, T), dtype=bool), k=1)
''',
    ),
    Wrong(
        id='d34-04-cmc-float',
        exercise='causal_mask_columns',
        cause='`np.triu(np.ones((T, T)))` gives floats; a mask must be boolean (`dtype=bool`).',
        kind='wrong dtype',
        wrong_on='For T = 2 it returns [[1.0, 1.0], [0.0, 1.0]] of dtype float64 instead of a bool array.',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def causal_mask_columns(T):
    """[T, T] causal mask with tokens as columns: entry [i, j] (key i, query j) is True where i <= j."""
    T = positive_int(T, "T")
    return np.triu(np.ones((T, T)))
''',
    ),
    Wrong(
        id='d34-04-mha-numpy',
        exercise='to_mha_key_padding_mask',
        cause='You return a NumPy array; `nn.MultiheadAttention` wants a `torch.bool` tensor: wrap it with `torch.from_numpy` (or `torch.as_tensor`).',
        kind='wrong type (NumPy instead of torch)',
        wrong_on='For lengths = [2] and T = 3 it returns a numpy.ndarray instead of tensor([[False, False, True]]).',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def to_mha_key_padding_mask(lengths, T):
    """torch.bool tensor [B, T] for nn.MultiheadAttention's key_padding_mask: True = ignore."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return np.arange(T)[None, :] >= lengths[:, None]
''',
    ),
    Wrong(
        id='d34-04-mha-not-inverted',
        exercise='to_mha_key_padding_mask',
        cause="You return the course's mask (True at the real tokens); `key_padding_mask` means True = ignore, so it must be True at the padding.",
        kind='mask polarity not inverted',
        wrong_on='For lengths = [2] and T = 3 it returns tensor([[True, True, False]]) instead of tensor([[False, False, True]]).',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def to_mha_key_padding_mask(lengths, T):
    """torch.bool tensor [B, T] for nn.MultiheadAttention's key_padding_mask: True = ignore."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return torch.from_numpy(np.arange(T)[None, :] < lengths[:, None])
''',
    ),
    Wrong(
        id='d34-04-mha-off-by-one',
        exercise='to_mha_key_padding_mask',
        cause='`>` leaves position `length`, the first padding token, unmarked; positions from `length` on are padding, so compare with `>=`.',
        kind='comparison off by one',
        wrong_on='For lengths = [2] and T = 3 it returns tensor([[False, False, False]]) instead of tensor([[False, False, True]]).',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def to_mha_key_padding_mask(lengths, T):
    """torch.bool tensor [B, T] for nn.MultiheadAttention's key_padding_mask: True = ignore."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return torch.from_numpy(np.arange(T)[None, :] > lengths[:, None])
''',
    ),
    Wrong(
        id='d34-04-pa-divide-columns',
        exercise='prefix_average',
        cause='`tril / np.arange(1, T + 1)` divides each *column* j by j + 1; row i must be divided by i + 1: `np.arange(1, T + 1)[:, None]`.',
        kind='missing [:, None] (broadcasting mistake)',
        wrong_on='For X = [[1.0], [3.0]] it returns [[1.0], [2.5]] instead of [[1.0], [2.0]].',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def prefix_average(X):
    """Row i of the result is the mean of rows 0..i of X, computed as W @ X."""
    X = as_array(X, "X", min_ndim=2)
    T = X.shape[-2]
    W = np.tril(np.ones((T, T))) / np.arange(1, T + 1)
    return W @ X
''',
    ),
    Wrong(
        id='d34-04-pa-divide-by-T',
        exercise='prefix_average',
        cause='You divide every row by T; row i averages i + 1 tokens, so it must be divided by i + 1.',
        kind='wrong normaliser (hard-coded length)',
        wrong_on='For X = [[2.0], [4.0]] it returns [[1.0], [3.0]] instead of [[2.0], [3.0]].',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def prefix_average(X):
    """Row i of the result is the mean of rows 0..i of X, computed as W @ X."""
    X = as_array(X, "X", min_ndim=2)
    T = X.shape[-2]
    W = np.tril(np.ones((T, T))) / T
    return W @ X
''',
    ),
    Wrong(
        id='d34-04-pa-transposed-w',
        exercise='prefix_average',
        cause='`W.T @ X` averages each token with the tokens *after* it (W.T is upper triangular); the causal average is `W @ X`.',
        kind='transposed weight matrix',
        wrong_on='For X = [[1.0], [3.0]] it returns [[2.5], [1.5]] instead of [[1.0], [2.0]].',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def prefix_average(X):
    """Row i of the result is the mean of rows 0..i of X, computed as W @ X."""
    X = as_array(X, "X", min_ndim=2)
    T = X.shape[-2]
    W = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]
    return W.T @ X
''',
    ),
    Wrong(
        id='d34-04-pa-diag-excluded',
        exercise='prefix_average',
        cause='`np.tril(..., k=-1)` leaves each token out of its own average (and row 0 becomes 0); the prefix 0..i includes i, so use k=0.',
        kind='triangle offset off by one',
        wrong_on='For X = [[1.0], [3.0]] it returns [[0.0], [0.5]] instead of [[1.0], [2.0]].',
        source=r'''import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int

def prefix_average(X):
    """Row i of the result is the mean of rows 0..i of X, computed as W @ X."""
    X = as_array(X, "X", min_ndim=2)
    T = X.shape[-2]
    W = np.tril(np.ones((T, T)), k=-1) / np.arange(1, T + 1)[:, None]
    return W @ X
''',
    ),
]
