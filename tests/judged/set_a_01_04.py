"""Held-out wrong answers for lessons 01-04 (matmul views, dot-product attention, attention
by hand, masking), written from the student notebooks and README only.

Each entry is one realistic learner mistake with its true cause; `source` is the whole answer
cell (imports, given lines, helpers) and runs on its own. verify_01_04.py checks each one
against an independent computation."""
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
        id='h34-01-dot-row-of-B',
        exercise='matmul_dot',
        cause='In the inner loop you multiply row i of A by `B[j, :]`, which is row j of B; the dot-product reading needs column j of B, `B[:, j]`. On square matrices this quietly computes A Bᵀ.',
        kind='row taken where a column belongs',
        wrong_on='A=[[1,2],[3,4]], B=[[5,6],[7,8]]: returns A Bᵀ = [[17,23],[39,53]] instead of [[19,22],[43,50]].',
        source='''import numpy as np

from grader.learner.validation import matmul_operands, as_array


def matmul_dot(A, B):
    """C[i, j] = row i of A · column j of B, with a Python loop (over i and j: one entry at a time)."""
    A, B = matmul_operands(A, B)
    n, m = A.shape[0], B.shape[1]
    C = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            C[i, j] = np.sum(A[i, :] * B[j, :])
    return C
''',
    ),
    Wrong(
        id='h34-01-dot-last-column-skipped',
        exercise='matmul_dot',
        cause='Your loop over the columns is `range(m - 1)`, so the last column of C is never filled and stays 0; `range(m)` already stops before m.',
        kind='loop range off by one',
        wrong_on="The notebook's A (2×3) and B (3×2): column 1 of C is [0, 0] instead of [3, 1].",
        source='''import numpy as np

from grader.learner.validation import matmul_operands, as_array


def matmul_dot(A, B):
    """C[i, j] = row i of A · column j of B, with a Python loop (over i and j: one entry at a time)."""
    A, B = matmul_operands(A, B)
    n, m = A.shape[0], B.shape[1]
    C = np.zeros((n, m))
    for i in range(n):
        for j in range(m - 1):
            C[i, j] = np.sum(A[i, :] * B[:, j])
    return C
''',
    ),
    Wrong(
        id='h34-01-dot-product-of-sums',
        exercise='matmul_dot',
        cause='You sum row i of A and column j of B separately and multiply the two sums; a dot product multiplies entry by entry first and then sums: `np.sum(A[i, :] * B[:, j])`.',
        kind='reductions done before the product',
        wrong_on="The notebook's A and B: C[0, 0] is 3·3 = 9 instead of 1·2 + 2·0 + 0·1 = 2.",
        source='''import numpy as np

from grader.learner.validation import matmul_operands, as_array


def matmul_dot(A, B):
    """C[i, j] = row i of A · column j of B, with a Python loop (over i and j: one entry at a time)."""
    A, B = matmul_operands(A, B)
    n, m = A.shape[0], B.shape[1]
    C = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            C[i, j] = np.sum(A[i, :]) * np.sum(B[:, j])
    return C
''',
    ),
    Wrong(
        id='h34-01-dot-ones-init',
        exercise='matmul_dot',
        cause='You start C with `np.ones` and then add each dot product into it with `+=`, so every entry is one too large; start from `np.zeros((n, m))` (or assign with `=`).',
        kind='wrong initial value of an accumulator',
        wrong_on="The notebook's A and B: returns [[3,4],[4,2]] instead of [[2,3],[3,1]].",
        source='''import numpy as np

from grader.learner.validation import matmul_operands, as_array


def matmul_dot(A, B):
    """C[i, j] = row i of A · column j of B, with a Python loop (over i and j: one entry at a time)."""
    A, B = matmul_operands(A, B)
    n, m = A.shape[0], B.shape[1]
    C = np.ones((n, m))
    for i in range(n):
        for j in range(m):
            C[i, j] += np.sum(A[i, :] * B[:, j])
    return C
''',
    ),
    Wrong(
        id='h34-01-dot-uses-np-dot',
        exercise='matmul_dot',
        cause='Each entry is computed with `np.dot(A[i, :], B[:, j])`, which this exercise forbids: build the dot product yourself with `*` and `np.sum`. The values are right, the rule is broken.',
        kind='forbidden call (np.dot) inside the loop',
        wrong_on='Any input: the numbers equal A @ B, but the function calls np.dot, which the exercise forbids.',
        source='''import numpy as np

from grader.learner.validation import matmul_operands, as_array


def matmul_dot(A, B):
    """C[i, j] = row i of A · column j of B, with a Python loop (over i and j: one entry at a time)."""
    A, B = matmul_operands(A, B)
    n, m = A.shape[0], B.shape[1]
    C = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            C[i, j] = np.dot(A[i, :], B[:, j])
    return C
''',
    ),
    Wrong(
        id='h34-01-rows-A-indices-swapped',
        exercise='matmul_rows',
        cause='The weight you take is `A[p, i]`, an entry of column i of A; row i of C is weighted by row i of A, `A[i, p]`. On square matrices this computes Aᵀ B.',
        kind='indices of A swapped',
        wrong_on='A=[[1,2],[3,4]], B=[[5,6],[7,8]]: returns Aᵀ B = [[26,30],[38,44]] instead of [[19,22],[43,50]].',
        source='''import numpy as np

from grader.learner.validation import matmul_operands, as_array


def matmul_rows(A, B):
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
        id='h34-01-rows-assign-not-accumulate',
        exercise='matmul_rows',
        cause='Inside the loop over p you write `C[i, :] = ...`, so each term replaces the previous one and only the last p survives; add the terms up with `+=`.',
        kind='= where += belongs (running sum lost)',
        wrong_on="The notebook's A and B: row 0 is 0·B[2] = [0, 0] instead of [2, 3].",
        source='''import numpy as np

from grader.learner.validation import matmul_operands, as_array


def matmul_rows(A, B):
    """Row i of C = sum over p of A[i, p] * (row p of B), with a Python loop (over i and p)."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    C = np.zeros((n, B.shape[1]))
    for i in range(n):
        for p in range(k):
            C[i, :] = A[i, p] * B[p, :]
    return C
''',
    ),
    Wrong(
        id='h34-01-rows-B-row-i',
        exercise='matmul_rows',
        cause='You add `A[i, p] * B[i, :]`: the row of B must change with p (`B[p, :]`), not stay at row i; as written, row i of C is just the sum of row i of A times row i of B.',
        kind='wrong loop index in a slice',
        wrong_on="The notebook's A and B: row 0 is (1+2+0)·[2, 1] = [6, 3] instead of [2, 3].",
        source='''import numpy as np

from grader.learner.validation import matmul_operands, as_array


def matmul_rows(A, B):
    """Row i of C = sum over p of A[i, p] * (row p of B), with a Python loop (over i and p)."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    C = np.zeros((n, B.shape[1]))
    for i in range(n):
        for p in range(k):
            C[i, :] += A[i, p] * B[i, :]
    return C
''',
    ),
    Wrong(
        id='h34-01-rows-init-inside-loop',
        exercise='matmul_rows',
        cause='`C = np.zeros(...)` sits inside the loop over i, so every new row starts by wiping the rows already computed and only the last row survives; create C once, before the loop.',
        kind='statement moved into a loop',
        wrong_on="The notebook's A and B: row 0 comes back as [0, 0] instead of [2, 3] (only row 1 is kept).",
        source='''import numpy as np

from grader.learner.validation import matmul_operands, as_array


def matmul_rows(A, B):
    """Row i of C = sum over p of A[i, p] * (row p of B), with a Python loop (over i and p)."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    for i in range(n):
        C = np.zeros((n, B.shape[1]))
        for p in range(k):
            C[i, :] += A[i, p] * B[p, :]
    return C
''',
    ),
    Wrong(
        id='h34-01-cols-B-indices-swapped',
        exercise='matmul_cols',
        cause='The weight of column p of A should be `B[p, j]` (column j of B); you wrote `B[j, p]`, which reads row j of B, so square inputs give A Bᵀ.',
        kind='indices of B swapped',
        wrong_on='A=[[1,2],[3,4]], B=[[5,6],[7,8]]: returns A Bᵀ = [[17,23],[39,53]] instead of [[19,22],[43,50]].',
        source='''import numpy as np

from grader.learner.validation import matmul_operands, as_array


def matmul_cols(A, B):
    """Column j of C = sum over p of B[p, j] * (column p of A), with a Python loop (over j and p)."""
    A, B = matmul_operands(A, B)
    k, m = B.shape
    C = np.zeros((A.shape[0], m))
    for j in range(m):
        for p in range(k):
            C[:, j] += B[j, p] * A[:, p]
    return C
''',
    ),
    Wrong(
        id='h34-01-cols-rows-of-A',
        exercise='matmul_cols',
        cause='You mix `A[p, :]`, the rows of A; the column reading mixes the columns of A, `A[:, p]`. On square matrices this computes Aᵀ B.',
        kind='row taken where a column belongs',
        wrong_on='A=[[1,2],[3,4]], B=[[5,6],[7,8]]: returns Aᵀ B = [[26,30],[38,44]] instead of [[19,22],[43,50]].',
        source='''import numpy as np

from grader.learner.validation import matmul_operands, as_array


def matmul_cols(A, B):
    """Column j of C = sum over p of B[p, j] * (column p of A), with a Python loop (over j and p)."""
    A, B = matmul_operands(A, B)
    k, m = B.shape
    C = np.zeros((A.shape[0], m))
    for j in range(m):
        for p in range(k):
            C[:, j] += B[p, j] * A[p, :]
    return C
''',
    ),
    Wrong(
        id='h34-01-cols-last-p-skipped',
        exercise='matmul_cols',
        cause='The loop over p runs over `range(k - 1)` and leaves out the last column of A; the sum is over all k columns, `range(k)`.',
        kind='loop range off by one',
        wrong_on="The notebook's A and B: returns [[2,3],[0,1]] instead of [[2,3],[3,1]] (the term of A's column 2 is missing).",
        source='''import numpy as np

from grader.learner.validation import matmul_operands, as_array


def matmul_cols(A, B):
    """Column j of C = sum over p of B[p, j] * (column p of A), with a Python loop (over j and p)."""
    A, B = matmul_operands(A, B)
    k, m = B.shape
    C = np.zeros((A.shape[0], m))
    for j in range(m):
        for p in range(k - 1):
            C[:, j] += B[p, j] * A[:, p]
    return C
''',
    ),
    Wrong(
        id='h34-01-cols-built-as-rows',
        exercise='matmul_cols',
        cause='You create C as m×n and store each mixed column in row j (`C[j, :]`), so you return Cᵀ; make C n×m and fill column j, `C[:, j]`.',
        kind='result transposed (columns stored as rows)',
        wrong_on='A=[[1,2],[3,4]], B=[[5,6],[7,8]]: returns [[19,43],[22,50]], the transpose of A B.',
        source='''import numpy as np

from grader.learner.validation import matmul_operands, as_array


def matmul_cols(A, B):
    """Column j of C = sum over p of B[p, j] * (column p of A), with a Python loop (over j and p)."""
    A, B = matmul_operands(A, B)
    k, m = B.shape
    C = np.zeros((m, A.shape[0]))
    for j in range(m):
        for p in range(k):
            C[j, :] += B[p, j] * A[:, p]
    return C
''',
    ),
    Wrong(
        id='h34-01-outer-factors-swapped',
        exercise='matmul_outer',
        cause='`np.outer(B[p, :], A[:, p])` puts the row of B first, which gives each term transposed (m×n); the term is `np.outer(A[:, p], B[p, :])`. Square inputs return (A B)ᵀ.',
        kind='arguments swapped (outer product order)',
        wrong_on='A=[[1,2],[3,4]], B=[[5,6],[7,8]]: returns [[19,43],[22,50]] = (A B)ᵀ.',
        source='''import numpy as np

from grader.learner.validation import matmul_operands, as_array


def matmul_outer(A, B):
    """C = sum over p of the outer product of column p of A and row p of B, with a Python loop (over p)."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    C = np.zeros((n, B.shape[1]))
    for p in range(k):
        C += np.outer(B[p, :], A[:, p])
    return C
''',
    ),
    Wrong(
        id='h34-01-outer-row-of-A-col-of-B',
        exercise='matmul_outer',
        cause='You take row p of A and column p of B (`A[p, :]`, `B[:, p]`); the outer-product reading uses column p of A and row p of B, `np.outer(A[:, p], B[p, :])`.',
        kind='row and column of the factors mixed up',
        wrong_on='A=[[1,2],[3,4]], B=[[5,6],[7,8]]: returns (B A)ᵀ = [[23,31],[34,46]] instead of [[19,22],[43,50]].',
        source='''import numpy as np

from grader.learner.validation import matmul_operands, as_array


def matmul_outer(A, B):
    """C = sum over p of the outer product of column p of A and row p of B, with a Python loop (over p)."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    C = np.zeros((n, B.shape[1]))
    for p in range(k):
        C += np.outer(A[p, :], B[:, p])
    return C
''',
    ),
    Wrong(
        id='h34-01-outer-overwrite',
        exercise='matmul_outer',
        cause='`C = np.outer(...)` inside the loop replaces C with each new rank-1 term, so you return only the last one; add the terms, `C += np.outer(A[:, p], B[p, :])`, starting from zeros.',
        kind='= where += belongs (running sum lost)',
        wrong_on="The notebook's A and B: returns outer([0,3],[1,0]) = [[0,0],[3,0]] instead of [[2,3],[3,1]].",
        source='''import numpy as np

from grader.learner.validation import matmul_operands, as_array


def matmul_outer(A, B):
    """C = sum over p of the outer product of column p of A and row p of B, with a Python loop (over p)."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    C = np.zeros((n, B.shape[1]))
    for p in range(k):
        C = np.outer(A[:, p], B[p, :])
    return C
''',
    ),
    Wrong(
        id='h34-01-outer-elementwise',
        exercise='matmul_outer',
        cause='`A[:, p] * B[p, :]` multiplies the two vectors entry by entry (and then broadcasts the vector onto every row of C); each term must be the full n×m outer product, `np.outer(A[:, p], B[p, :])` or `A[:, p][:, None] * B[p, :][None, :]`.',
        kind='elementwise product where an outer product belongs',
        wrong_on='A=[[1,2],[3,4]], B=[[5,6],[7,8]]: every row is [19, 50] (the diagonal of A B) instead of [[19,22],[43,50]].',
        source='''import numpy as np

from grader.learner.validation import matmul_operands, as_array


def matmul_outer(A, B):
    """C = sum over p of the outer product of column p of A and row p of B, with a Python loop (over p)."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    C = np.zeros((n, B.shape[1]))
    for p in range(k):
        C += A[:, p] * B[p, :]
    return C
''',
    ),
    Wrong(
        id='h34-01-outer-skips-first-term',
        exercise='matmul_outer',
        cause='Your loop is `range(1, k)`, so the rank-1 term of column 0 of A and row 0 of B is never added; Python indexes from 0, so loop over `range(k)`.',
        kind='loop starts at 1 instead of 0',
        wrong_on="The notebook's A and B: returns [[0,2],[3,1]] instead of [[2,3],[3,1]].",
        source='''import numpy as np

from grader.learner.validation import matmul_operands, as_array


def matmul_outer(A, B):
    """C = sum over p of the outer product of column p of A and row p of B, with a Python loop (over p)."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    C = np.zeros((n, B.shape[1]))
    for p in range(1, k):
        C += np.outer(A[:, p], B[p, :])
    return C
''',
    ),
    Wrong(
        id='h34-01-batched-einsum-one-batch-axis',
        exercise='batched_matmul',
        cause='`np.einsum("bnk,bkm->bnm", ...)` only accepts two 3-axis arrays with the same batch: it fails on plain matrices and on a [n, k] matrix times a [b, k, m] stack. Use `A @ B` (or `np.matmul`), which takes any number of batch axes and broadcasts them; with einsum, write `...nk,...km->...nm`.',
        kind='exactly one batch axis hard-coded',
        wrong_on='A of shape [2, 3] and B of shape [4, 3, 2] (the broadcast case of the docstring): raises instead of returning [4, 2, 2].',
        source='''import numpy as np

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
        id='h34-01-batched-sum-wrong-axis',
        exercise='batched_matmul',
        cause='You build the products `A[..., :, :, None] * B[..., None, :, :]` (axes n, k, m) but sum over axis -3, the n axis; the shared size k is axis -2, so `sum(axis=-2)`.',
        kind='reduction over the wrong axis',
        wrong_on="The notebook's A (2×3) and B (3×2): returns a 3×2 array (A's column sums times B's rows) instead of the 2×2 product.",
        source='''import numpy as np

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
    return np.sum(A[..., :, :, None] * B[..., None, :, :], axis=-3)
''',
    ),
    Wrong(
        id='h34-01-batched-swapaxes-B',
        exercise='batched_matmul',
        cause='You swap the last two axes of B before multiplying, as the scores QKᵀ do; a plain product needs B as it is: `A @ B`. It only runs when B is square, and then gives A Bᵀ.',
        kind='transpose added',
        wrong_on='A=[[1,2],[3,4]], B=[[5,6],[7,8]]: returns [[17,23],[39,53]] instead of [[19,22],[43,50]].',
        source='''import numpy as np

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
    return A @ np.swapaxes(B, -1, -2)
''',
    ),
    Wrong(
        id='h34-01-batched-tensordot',
        exercise='batched_matmul',
        cause='`np.tensordot(A, B, axes=([-1], [-2]))` sums over k but treats the batch axes of A and B as separate axes, pairing item b of A with every item of B ([b, n, b, m]); `A @ B` pairs item b with item b.',
        kind='every batch item paired with every other',
        wrong_on='A of shape [2, 3, 4] and B of shape [2, 4, 5]: returns shape [2, 3, 2, 5] instead of [2, 3, 5].',
        source='''import numpy as np

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
    return np.tensordot(A, B, axes=([-1], [-2]))
''',
    ),
    Wrong(
        id='h34-01-batched-python-loop',
        exercise='batched_matmul',
        cause='You loop over `A.shape[0]` and stack `A[b] @ B[b]`: the exercise forbids the Python loop, and it also assumes both inputs have one batch axis of the same size, so plain matrices and broadcast batches go wrong. One call, `A @ B`, handles every case.',
        kind='loop over the batch (forbidden) that also breaks 2-D input',
        wrong_on='A=[[1,2],[3,4]], B=[[5,6],[7,8]] (no batch axis): returns the dot products of rows, [17, 53], instead of the 2×2 product.',
        source='''import numpy as np

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
        id='h34-01-einsum-output-transposed',
        exercise='einsum_scores',
        cause='Your output subscripts are `...kq`, so the result is [T_k, T_q], the scores transposed; the query axis comes first: `"...qd,...kd->...qk"`.',
        kind='output axes in the wrong order',
        wrong_on='Q of shape [2, 3] and K of shape [4, 3]: returns a [4, 2] array instead of [2, 4].',
        source='''import numpy as np

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
        id='h34-01-einsum-K-as-d-by-T',
        exercise='einsum_scores',
        cause='The subscripts `...dk` for K read it as [d, T_k], so einsum computes Q K instead of Q Kᵀ (and fails unless T_k = d); K is [T_k, d]: `"...qd,...kd->...qk"`.',
        kind="operand's axes named in the wrong order",
        wrong_on='Q=[[1,2],[3,4]], K=[[5,6],[7,8]]: returns Q K = [[19,22],[43,50]] instead of Q Kᵀ = [[17,23],[39,53]].',
        source='''import numpy as np

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
        id='h34-01-einsum-no-batch-axes',
        exercise='einsum_scores',
        cause='`"qd,kd->qk"` only accepts single matrices and fails on any batch; start both inputs and the output with `...` so einsum carries the batch axes: `"...qd,...kd->...qk"`.',
        kind='batch axes left out of the subscripts',
        wrong_on='Q and K of shape [2, 3, 4]: raises instead of returning the [2, 3, 3] scores.',
        source='''import numpy as np

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
        id='h34-01-einsum-scaled',
        exercise='einsum_scores',
        cause='You divide by √d as attention does, but this function is the plain product Q Kᵀ; leave the scaling out here (lesson 02 adds it).',
        kind='scale applied that does not belong',
        wrong_on='Q=[[1,2]], K=[[3,4]] (d=2): returns 11/√2 ≈ 7.78 instead of 11.',
        source='''import numpy as np

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
        id='h34-01-einsum-keys-summed',
        exercise='einsum_scores',
        cause='Your output subscripts `...q` drop the key axis, so einsum sums over the keys as well as over d and returns one number per query; keep k in the output, `->...qk`.',
        kind='axis summed away that should stay',
        wrong_on="Q of shape [2, 3] and K of shape [4, 3]: returns shape [2] (each query's scores added up) instead of [2, 4].",
        source='''import numpy as np

from grader.learner.validation import matmul_operands, as_array


def einsum_scores(Q, K):
    """Q Kᵀ for every batch item: [..., T_q, d] and [..., T_k, d] -> [..., T_q, T_k].

    Use np.einsum: one call does it, with no loop and no other product.
    """
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share their last axis, got {Q.shape} and {K.shape}")
    return np.einsum("...qd,...kd->...q", Q, K)
''',
    ),
    Wrong(
        id='h34-01-war-nan-passes',
        exercise='weighted_average_rows',
        cause='You test `abs(sum - 1) > 1e-6` and `W < 0`, and both are False for NaN, so a row with a NaN weight is mixed instead of rejected; check `np.isfinite(W)` first (or write the sum test as `not (abs(sum - 1) <= 1e-6)`).',
        kind='NaN slips through a comparison',
        wrong_on='W=[[0.5, 0.5, nan]] with V of 3 rows: returns a NaN row instead of raising ValueError.',
        source='''import numpy as np

from grader.learner.validation import matmul_operands, as_array


def weighted_average_rows(W, V):
    """Row i of the result mixes the rows of V with weights W[i] (non-negative, sum 1).

    W: [..., n, m], V: [..., m, d] -> [..., n, d]. Raises ValueError for invalid weights.
    """
    W = as_array(W, "W", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if W.shape[-1] != V.shape[-2]:
        raise ValueError(f"W has {W.shape[-1]} weights per row but V has {V.shape[-2]} rows")
    sums = W.sum(axis=-1)
    off = np.abs(sums - 1) > 1e-6
    if np.any(off):
        row = tuple(np.argwhere(off)[0])
        raise ValueError(f"row {list(row)} of W sums to {sums[row]}, not 1")
    if np.any(W < 0):
        raise ValueError("W has a negative weight; convex weights are >= 0")
    return W @ V
''',
    ),
    Wrong(
        id='h34-01-war-column-sums',
        exercise='weighted_average_rows',
        cause='You add W up along axis -2, so you test that every column sums to 1; each row is one set of weights, so sum along axis -1.',
        kind='reduction over the wrong axis',
        wrong_on='W=[[1, 0], [1, 0]] (both rows valid) with V=[[1], [2]]: raises ValueError instead of returning [[1], [1]].',
        source='''import numpy as np

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
        bad = tuple(np.argwhere(~np.isfinite(W))[0])
        raise ValueError(f"W{list(bad)} is {W[bad]}: weights must be finite numbers")
    if np.any(W < 0):
        bad = tuple(np.argwhere(W < 0)[0])
        raise ValueError(f"W{list(bad)} = {W[bad]} is negative: weights must be >= 0")

    sums = W.sum(axis=-2)
    if np.any(np.abs(sums - 1) > 1e-6):
        raise ValueError(f"the weights must sum to 1, got sums {sums}")
    return W @ V
''',
    ),
    Wrong(
        id='h34-01-war-only-too-large',
        exercise='weighted_average_rows',
        cause='Your test only rejects sums above 1 + 1e-6; a row that sums to too little (0.5, say) passes. Test the distance to 1 in both directions: `np.abs(sums - 1) > 1e-6`.',
        kind='one side of a two-sided test left out',
        wrong_on='W=[[0.2, 0.3]] with V of 2 rows: returns a mixture instead of raising ValueError.',
        source='''import numpy as np

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
        bad = tuple(np.argwhere(~np.isfinite(W))[0])
        raise ValueError(f"W{list(bad)} is {W[bad]}: weights must be finite numbers")
    if np.any(W < 0):
        bad = tuple(np.argwhere(W < 0)[0])
        raise ValueError(f"W{list(bad)} = {W[bad]} is negative: weights must be >= 0")

    sums = W.sum(axis=-1)
    if np.any(sums > 1 + 1e-6):
        row = tuple(np.argwhere(sums > 1 + 1e-6)[0])
        raise ValueError(f"row {list(row)} of W sums to {sums[row]}, more than 1")
    return W @ V
''',
    ),
    Wrong(
        id='h34-01-war-zero-weight-rejected',
        exercise='weighted_average_rows',
        cause='`np.any(W <= 0)` also rejects weights that are exactly 0, which convex weights may be (a one-hot row is convex); only negative weights are invalid: `W < 0`.',
        kind='strict comparison where <= belongs',
        wrong_on='W=[[1, 0]] with V=[[1], [2]]: raises ValueError instead of returning [[1]].',
        source='''import numpy as np

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
    if np.any(W <= 0):
        bad = tuple(np.argwhere(W <= 0)[0])
        raise ValueError(f"W{list(bad)} = {W[bad]} is not positive")
    sums = W.sum(axis=-1)
    if np.any(np.abs(sums - 1) > 1e-6):
        raise ValueError(f"every row of W must sum to 1, got {sums}")
    return W @ V
''',
    ),
    Wrong(
        id='h34-01-war-divides-by-count',
        exercise='weighted_average_rows',
        cause='The weights already sum to 1, so `W @ V` is the average; dividing it by the number of weights per row averages a second time and shrinks the result.',
        kind='normalised twice',
        wrong_on='W=[[0.5, 0.5]], V=[[2.], [4.]]: returns [[1.5]] instead of [[3.]].',
        source='''import numpy as np

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
        bad = tuple(np.argwhere(~np.isfinite(W))[0])
        raise ValueError(f"W{list(bad)} is {W[bad]}: weights must be finite numbers")
    if np.any(W < 0):
        bad = tuple(np.argwhere(W < 0)[0])
        raise ValueError(f"W{list(bad)} = {W[bad]} is negative: weights must be >= 0")

    sums = W.sum(axis=-1)
    if np.any(np.abs(sums - 1) > 1e-6):
        raise ValueError(f"every row of W must sum to 1, got {sums}")
    return (W @ V) / W.shape[-1]
''',
    ),
    Wrong(
        id='h34-01-war-allclose-tolerance',
        exercise='weighted_average_rows',
        cause='`np.allclose(sums, 1)` uses a relative tolerance of 1e-5, ten times looser than the 1e-6 the exercise asks for, so a row summing to 1 + 5e-6 is accepted; compare `np.abs(sums - 1) > 1e-6`.',
        kind='tolerance looser than asked',
        wrong_on='W=[[0.5, 0.500005]] (sum 1 + 5e-6): returns a mixture instead of raising ValueError.',
        source='''import numpy as np

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
        bad = tuple(np.argwhere(~np.isfinite(W))[0])
        raise ValueError(f"W{list(bad)} is {W[bad]}: weights must be finite numbers")
    if np.any(W < 0):
        bad = tuple(np.argwhere(W < 0)[0])
        raise ValueError(f"W{list(bad)} = {W[bad]} is negative: weights must be >= 0")

    sums = W.sum(axis=-1)
    if not np.allclose(sums, 1):
        raise ValueError(f"every row of W must sum to 1, got {sums}")
    return W @ V
''',
    ),
    Wrong(
        id='h34-02-softmax-keepdims-missing',
        exercise='softmax',
        cause='`x.max(axis=axis)` without `keepdims=True` drops the axis, so on a matrix with axis=-1 the row maxima are broadcast along the rows and each column gets a different shift, which changes the weights; keep the axis: `x.max(axis=axis, keepdims=True)`.',
        kind='keepdims forgotten (broadcast along the wrong axis)',
        wrong_on='x=[[1, 2], [3, 5]], axis=-1: row 0 becomes softmax([-1, -3]) ≈ [0.88, 0.12] instead of [0.27, 0.73].',
        source='''import numpy as np

from grader.learner.validation import as_array


def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    shifted = x - x.max(axis=axis)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)
''',
    ),
    Wrong(
        id='h34-02-softmax-no-shift',
        exercise='softmax',
        cause='You take `np.exp(x)` directly, which overflows to inf for scores near 1000 and gives inf/inf = NaN; subtract the largest score along the axis first.',
        kind='stabilising shift left out',
        wrong_on='x=[1000, 0]: returns [nan, 0] instead of [1, 0].',
        source='''import numpy as np

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
        id='h34-02-softmax-global-max',
        exercise='softmax',
        cause="You subtract `x.max()`, the largest entry of the whole array; a row whose scores are far below it underflows to all zeros and becomes 0/0. Subtract each slice's own maximum, `x.max(axis=axis, keepdims=True)`.",
        kind='reduction over all axes where one axis belongs',
        wrong_on='x=[[0, 0], [1000, 1000]], axis=-1: row 0 becomes [nan, nan] instead of [0.5, 0.5].',
        source='''import numpy as np

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
        id='h34-02-softmax-axis-ignored',
        exercise='softmax',
        cause='Both reductions use `axis=-1` instead of the `axis` argument, so softmax(x, axis=0) still normalises the rows; pass `axis=axis` to `max` and `sum`.',
        kind='parameter replaced by a hard-coded value',
        wrong_on='x=[[1, 2], [3, 5]], axis=0: the rows sum to 1 and the columns do not; column 0 should be [0.12, 0.88].',
        source='''import numpy as np

from grader.learner.validation import as_array


def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
''',
    ),
    Wrong(
        id='h34-02-softmax-sum-everything',
        exercise='softmax',
        cause='You divide by `e.sum()`, the sum of the whole array, so on a matrix all entries together sum to 1 instead of each slice along `axis`; sum with `axis=axis, keepdims=True`.',
        kind='reduction over all axes where one axis belongs',
        wrong_on='x=[[0, 0], [0, 0]], axis=-1: every weight is 0.25 instead of 0.5.',
        source='''import numpy as np

from grader.learner.validation import as_array


def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum()
''',
    ),
    Wrong(
        id='h34-02-softmax-sign-flipped',
        exercise='softmax',
        cause='You compute `np.exp(m - x)` instead of `np.exp(x - m)`: that is the softmax of -x, which gives the largest weight to the smallest score.',
        kind='sign flipped inside the exponent',
        wrong_on='x=[1, 2, 3]: returns ≈ [0.67, 0.24, 0.09] instead of [0.09, 0.24, 0.67].',
        source='''import numpy as np

from grader.learner.validation import as_array


def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    m = x.max(axis=axis, keepdims=True)
    e = np.exp(m - x)
    return e / e.sum(axis=axis, keepdims=True)
''',
    ),
    Wrong(
        id='h34-02-scores-full-transpose',
        exercise='attention_scores',
        cause='`K.T` reverses every axis, so with a batch [B, T, d] it becomes [d, T, B] and the product fails or mixes batch items; transpose only the last two axes, `np.swapaxes(K, -1, -2)`.',
        kind='full transpose of a batched array',
        wrong_on='Q and K of shape [2, 3, 4]: raises instead of returning the [2, 3, 3] scores.',
        source='''import numpy as np

from grader.learner.validation import as_array


def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    d_k = Q.shape[-1]
    return Q @ K.T / np.sqrt(d_k)
''',
    ),
    Wrong(
        id='h34-02-scores-sqrt-Tq',
        exercise='attention_scores',
        cause='You divide by √Q.shape[-2], the square root of the number of queries; d_k is the length of each query and key vector, the last axis: `Q.shape[-1]`.',
        kind='scale from the wrong axis (sequence length)',
        wrong_on='Q of shape [2, 4], K of shape [3, 4]: the scores are divided by √2 instead of √4 = 2.',
        source='''import numpy as np

from grader.learner.validation import as_array


def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-2])
''',
    ),
    Wrong(
        id='h34-02-scores-no-sqrt',
        exercise='attention_scores',
        cause='You divide by d_k itself; the scale is its square root, `np.sqrt(Q.shape[-1])`.',
        kind='square root forgotten',
        wrong_on='Q=[[1, 1, 1, 1]], K=[[1, 1, 1, 1]] (d_k = 4): returns 1 instead of 4/2 = 2.',
        source='''import numpy as np

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
        id='h34-02-scores-no-scale',
        exercise='attention_scores',
        cause="You return Q Kᵀ without dividing by √d_k; the exercise's scores are `Q Kᵀ / np.sqrt(d_k)`.",
        kind='scale left out',
        wrong_on='Q=[[1, 1, 1, 1]], K=[[1, 1, 1, 1]] (d_k = 4): returns 4 instead of 2.',
        source='''import numpy as np

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
        id='h34-02-scores-K-times-Qt',
        exercise='attention_scores',
        cause='You compute K Qᵀ, whose row i belongs to key i; the scores have one row per query: `Q Kᵀ`, i.e. `Q @ np.swapaxes(K, -1, -2)`.',
        kind='operands swapped (result transposed)',
        wrong_on='Q of shape [2, 4], K of shape [3, 4]: returns a [3, 2] array instead of [2, 3].',
        source='''import numpy as np

from grader.learner.validation import as_array


def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    d_k = Q.shape[-1]
    return K @ np.swapaxes(Q, -1, -2) / np.sqrt(d_k)
''',
    ),
    Wrong(
        id='h34-02-var-all-pairs',
        exercise='score_variance',
        cause='`q @ k.T` dots every query with every key (n_samples² numbers, mostly of pairs that were never drawn together); the experiment needs one dot product per row, `np.sum(q * k, axis=1)`.',
        kind='matrix product where a row-wise dot product belongs',
        wrong_on='d_k=4, n_samples=50, seed=0: returns the variance of 2500 cross products, a different number from the variance of the 50 paired ones.',
        source='''import numpy as np

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
    return np.var(q @ k.T)
''',
    ),
    Wrong(
        id='h34-02-var-sum-over-samples',
        exercise='score_variance',
        cause='`np.sum(q * k, axis=0)` adds up over the samples, giving d_k numbers; the dot product of pair i sums over the features of row i, `axis=1`.',
        kind='reduction over the wrong axis',
        wrong_on='d_k=1, n_samples=100: returns 0 (the variance of a single number) instead of about 1.',
        source='''import numpy as np

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
    return np.var(np.sum(q * k, axis=0))
''',
    ),
    Wrong(
        id='h34-02-var-no-reduction',
        exercise='score_variance',
        cause='You take the variance of the entrywise products `q * k` without adding them up per row, so you measure the variance of one term (about 1), not of the dot product (about d_k).',
        kind='reduction left out',
        wrong_on='d_k=16, n_samples=2000, seed=0: returns about 1 instead of about 16.',
        source='''import numpy as np

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
        id='h34-02-var-std',
        exercise='score_variance',
        cause='`np.std` is the square root of the variance; the function asks for the variance, `np.var`.',
        kind='standard deviation returned for the variance',
        wrong_on='d_k=16, n_samples=2000, seed=0: returns about 4 instead of about 16.',
        source='''import numpy as np

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
    return np.std(np.sum(q * k, axis=1))
''',
    ),
    Wrong(
        id='h34-02-var-scaled-scores',
        exercise='score_variance',
        cause='You divide the dot products by √d_k before taking the variance, which measures the scaled scores (about 1); the experiment asks for the variance of the raw `q·k`, which grows like d_k.',
        kind='scale applied that does not belong',
        wrong_on='d_k=16, n_samples=2000, seed=0: returns about 1 instead of about 16.',
        source='''import numpy as np

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
    scores = np.sum(q * k, axis=1) / np.sqrt(d_k)
    return np.var(scores)
''',
    ),
    Wrong(
        id='h34-02-var-mean-of-squares',
        exercise='score_variance',
        cause='You return the mean of the squared dot products, which is the variance only if their sample mean is exactly 0; subtract the mean first, or use `np.var`.',
        kind='mean not subtracted',
        wrong_on='d_k=2, n_samples=2, seed=0: the two dot products do not average to 0, so the result is far from their variance.',
        source='''import numpy as np

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
    s = np.sum(q * k, axis=1)
    return np.mean(s ** 2)
''',
    ),
    Wrong(
        id='h34-02-sdpa-softmax-query-axis',
        exercise='scaled_dot_product_attention',
        cause="You call `softmax(..., axis=-2)`, so each key's column sums to 1 and the queries compete for each key; each query's weights lie along the key axis, `axis=-1`.",
        kind='softmax over the wrong axis',
        wrong_on='Random Q, K, V of shape [3, 4]: the weight rows do not sum to 1 and the outputs differ.',
        source='''import numpy as np

from grader.learner.validation import as_array


def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    d_k = Q.shape[-1]
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)


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
        id='h34-02-sdpa-outputs-swapped',
        exercise='scaled_dot_product_attention',
        cause='You return `(weights, output)`; the exercise asks for `(output, weights)`.',
        kind='tuple items returned in the wrong order',
        wrong_on='Random Q of shape [2, 4], K of shape [3, 4], V of shape [3, 5]: the first item is [2, 3] (the weights) instead of [2, 5].',
        source='''import numpy as np

from grader.learner.validation import as_array


def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    d_k = Q.shape[-1]
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)


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
        id='h34-02-sdpa-weights-transposed',
        exercise='scaled_dot_product_attention',
        cause='You swap the last two axes of the weights before multiplying by V, so output row i mixes the values with column i of the weights (how much every query looks at key i); row i of the output uses row i of the weights: `weights @ V`.',
        kind='transpose added',
        wrong_on='Random Q, K, V of shape [3, 4]: the output is (weightsᵀ) V, different from weights V.',
        source='''import numpy as np

from grader.learner.validation import as_array


def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    d_k = Q.shape[-1]
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)


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
        id='h34-02-sdpa-scaled-twice',
        exercise='scaled_dot_product_attention',
        cause='`attention_scores` already divides by √d_k; dividing its result by √d_k again scales the scores by 1/d_k and flattens the weights. Pass the scores to `softmax` as they are.',
        kind='scale applied twice',
        wrong_on='Random Q, K, V of shape [3, 4] (d_k = 4): the scores are halved once more, so the weights are flatter than softmax(QKᵀ/2).',
        source='''import numpy as np

from grader.learner.validation import as_array


def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    d_k = Q.shape[-1]
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)


def scaled_dot_product_attention(Q, K, V):
    """softmax(Q Kᵀ / sqrt(d_k)) V. Returns (output [..., T_q, d_v], weights [..., T_q, T_k])."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V need one row per key: K has {K.shape[-2]} rows, V has "
                         f"{V.shape[-2]} (shapes {K.shape} and {V.shape})")
    scores = attention_scores(Q, K) / np.sqrt(Q.shape[-1])
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
''',
    ),
    Wrong(
        id='h34-02-sdpa-no-softmax',
        exercise='scaled_dot_product_attention',
        cause='You multiply the raw scaled scores by V; the scores must first become weights with your `softmax` along the key axis.',
        kind='softmax left out',
        wrong_on='Q=[[1, 0]], K=[[1, 0], [0, 1]], V=[[1], [2]]: returns weights [0.71, 0] and output [0.71] instead of [0.67, 0.33] and [1.33].',
        source='''import numpy as np

from grader.learner.validation import as_array


def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    d_k = Q.shape[-1]
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)


def scaled_dot_product_attention(Q, K, V):
    """softmax(Q Kᵀ / sqrt(d_k)) V. Returns (output [..., T_q, d_v], weights [..., T_q, T_k])."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V need one row per key: K has {K.shape[-2]} rows, V has "
                         f"{V.shape[-2]} (shapes {K.shape} and {V.shape})")
    scores = attention_scores(Q, K)
    return scores @ V, scores
''',
    ),
    Wrong(
        id='h34-02-sdpa-helper-full-transpose',
        exercise='scaled_dot_product_attention',
        cause='The function itself is right, but your `attention_scores` uses `K.T`, which reverses every axis of a batched K, so a batch fails; in `attention_scores` transpose only the last two axes, `np.swapaxes(K, -1, -2)`.',
        kind='full transpose of a batched array (in a helper)',
        wrong_on='Q, K, V of shape [2, 3, 4]: raises instead of returning outputs of shape [2, 3, 4].',
        source='''import numpy as np

from grader.learner.validation import as_array


def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    d_k = Q.shape[-1]
    return Q @ K.T / np.sqrt(d_k)


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
''',
    ),
    Wrong(
        id='h34-02-one-no-shift',
        exercise='attend_one_query',
        cause='You exponentiate the scores as they are, so a large score overflows to inf and the weights become NaN; subtract the largest score before `np.exp`.',
        kind='stabilising shift left out',
        wrong_on='q=[100, 0], K=[[100, 0], [0, 1]], V=[[1], [2]]: the first score is ≈ 7071, exp overflows, and the result is [nan] instead of [1].',
        source='''import numpy as np

from grader.learner.validation import as_array


def attend_one_query(q, K, V):
    """The single-query sum for q [d_k] over keys K [T_k, d_k] and values V [T_k, d_v] -> [d_v]."""
    q = as_array(q, "q", ndim=1)
    K = as_array(K, "K", ndim=2)
    V = as_array(V, "V", ndim=2)
    if K.shape[1] != q.shape[0] or V.shape[0] != K.shape[0]:
        raise ValueError(f"q {q.shape}, K {K.shape} and V {V.shape} do not fit: "
                         f"q must be [d_k], K [T_k, d_k] and V [T_k, d_v]")
    T_k = K.shape[0]
    d_k = q.shape[0]
    scores = [np.sum(q * K[i]) / np.sqrt(d_k) for i in range(T_k)]

    exps = [np.exp(s) for s in scores]
    total = sum(exps)
    out = np.zeros(V.shape[1])
    for i in range(T_k):
        out += exps[i] / total * V[i]
    return out
''',
    ),
    Wrong(
        id='h34-02-one-no-scale',
        exercise='attend_one_query',
        cause='Each score is `q · k_i` without the division by √d_k that the formula has; divide every score by `np.sqrt(len(q))`.',
        kind='scale left out',
        wrong_on='q=[1, 1, 1, 1], K=[[1, 1, 1, 1], [0, 0, 0, 0]], V=[[1], [0]]: weight e⁴/(e⁴+1) ≈ 0.98 instead of e²/(e²+1) ≈ 0.88.',
        source='''import numpy as np

from grader.learner.validation import as_array


def attend_one_query(q, K, V):
    """The single-query sum for q [d_k] over keys K [T_k, d_k] and values V [T_k, d_v] -> [d_v]."""
    q = as_array(q, "q", ndim=1)
    K = as_array(K, "K", ndim=2)
    V = as_array(V, "V", ndim=2)
    if K.shape[1] != q.shape[0] or V.shape[0] != K.shape[0]:
        raise ValueError(f"q {q.shape}, K {K.shape} and V {V.shape} do not fit: "
                         f"q must be [d_k], K [T_k, d_k] and V [T_k, d_v]")
    T_k = K.shape[0]
    scores = [np.sum(q * K[i]) for i in range(T_k)]
    m = max(scores)
    exps = [np.exp(s - m) for s in scores]
    total = sum(exps)
    out = np.zeros(V.shape[1])
    for i in range(T_k):
        out += exps[i] / total * V[i]
    return out
''',
    ),
    Wrong(
        id='h34-02-one-not-normalised',
        exercise='attend_one_query',
        cause='You add `exp(s_i - m) * V[i]` without dividing by the sum of the exponentials, so the weights do not sum to 1; divide each by `total`.',
        kind='normalisation left out',
        wrong_on='q=[0, 0], K=[[1, 0], [0, 1]], V=[[1], [3]]: returns [4] instead of the average [2].',
        source='''import numpy as np

from grader.learner.validation import as_array


def attend_one_query(q, K, V):
    """The single-query sum for q [d_k] over keys K [T_k, d_k] and values V [T_k, d_v] -> [d_v]."""
    q = as_array(q, "q", ndim=1)
    K = as_array(K, "K", ndim=2)
    V = as_array(V, "V", ndim=2)
    if K.shape[1] != q.shape[0] or V.shape[0] != K.shape[0]:
        raise ValueError(f"q {q.shape}, K {K.shape} and V {V.shape} do not fit: "
                         f"q must be [d_k], K [T_k, d_k] and V [T_k, d_v]")
    T_k = K.shape[0]
    d_k = q.shape[0]
    scores = [np.sum(q * K[i]) / np.sqrt(d_k) for i in range(T_k)]

    m = max(scores)
    out = np.zeros(V.shape[1])
    for i in range(T_k):
        out += np.exp(scores[i] - m) * V[i]
    return out
''',
    ),
    Wrong(
        id='h34-02-one-sqrt-Tk',
        exercise='attend_one_query',
        cause='You divide by √K.shape[0], the square root of the number of keys; d_k is the length of q (and of each key), `K.shape[1]` or `len(q)`.',
        kind='scale from the wrong axis (number of keys)',
        wrong_on='q=[1, 1, 1, 1], K=[[1, 1, 1, 1], [0, 0, 0, 0]], V=[[1], [0]] (2 keys, d_k = 4): scores divided by √2 instead of 2.',
        source='''import numpy as np

from grader.learner.validation import as_array


def attend_one_query(q, K, V):
    """The single-query sum for q [d_k] over keys K [T_k, d_k] and values V [T_k, d_v] -> [d_v]."""
    q = as_array(q, "q", ndim=1)
    K = as_array(K, "K", ndim=2)
    V = as_array(V, "V", ndim=2)
    if K.shape[1] != q.shape[0] or V.shape[0] != K.shape[0]:
        raise ValueError(f"q {q.shape}, K {K.shape} and V {V.shape} do not fit: "
                         f"q must be [d_k], K [T_k, d_k] and V [T_k, d_v]")
    T_k = K.shape[0]
    scores = [np.sum(q * K[i]) / np.sqrt(T_k) for i in range(T_k)]
    m = max(scores)
    exps = [np.exp(s - m) for s in scores]
    total = sum(exps)
    out = np.zeros(V.shape[1])
    for i in range(T_k):
        out += exps[i] / total * V[i]
    return out
''',
    ),
    Wrong(
        id='h34-02-one-running-total',
        exercise='attend_one_query',
        cause='You add to `total` inside the same loop that divides by it, so each value is weighted by exp(s_i)/(sum of the exponentials so far) instead of the sum over all keys; compute the full sum first, then loop over the keys again.',
        kind='running value used before it is complete',
        wrong_on='q=[0, 0], K=[[1, 0], [0, 1]], V=[[1], [3]]: returns 1·1 + ½·3 = [2.5] instead of [2].',
        source='''import numpy as np

from grader.learner.validation import as_array


def attend_one_query(q, K, V):
    """The single-query sum for q [d_k] over keys K [T_k, d_k] and values V [T_k, d_v] -> [d_v]."""
    q = as_array(q, "q", ndim=1)
    K = as_array(K, "K", ndim=2)
    V = as_array(V, "V", ndim=2)
    if K.shape[1] != q.shape[0] or V.shape[0] != K.shape[0]:
        raise ValueError(f"q {q.shape}, K {K.shape} and V {V.shape} do not fit: "
                         f"q must be [d_k], K [T_k, d_k] and V [T_k, d_v]")
    T_k = K.shape[0]
    d_k = q.shape[0]
    scores = [np.sum(q * K[i]) / np.sqrt(d_k) for i in range(T_k)]

    m = max(scores)
    total = 0.0
    out = np.zeros(V.shape[1])
    for i in range(T_k):
        e = np.exp(scores[i] - m)
        total += e
        out += e / total * V[i]
    return out
''',
    ),
    Wrong(
        id='h34-02-one-uses-matmul',
        exercise='attend_one_query',
        cause='You compute the scores and the output with `@`, which this exercise forbids: it asks for the sum itself, one key at a time. The values are right, the rule is broken.',
        kind='forbidden call (@) instead of the sum',
        wrong_on='Any input: the numbers are right, but the function uses @, which the exercise forbids.',
        source='''import numpy as np

from grader.learner.validation import as_array


def attend_one_query(q, K, V):
    """The single-query sum for q [d_k] over keys K [T_k, d_k] and values V [T_k, d_v] -> [d_v]."""
    q = as_array(q, "q", ndim=1)
    K = as_array(K, "K", ndim=2)
    V = as_array(V, "V", ndim=2)
    if K.shape[1] != q.shape[0] or V.shape[0] != K.shape[0]:
        raise ValueError(f"q {q.shape}, K {K.shape} and V {V.shape} do not fit: "
                         f"q must be [d_k], K [T_k, d_k] and V [T_k, d_v]")
    scores = K @ q / np.sqrt(q.shape[0])
    e = np.exp(scores - scores.max())
    weights = e / e.sum()
    return weights @ V
''',
    ),
    Wrong(
        id='h34-02-self-V-from-Wk',
        exercise='self_attention',
        cause='You compute `V = X @ W_k`: the values come from `W_v`, `V = X @ W_v`.',
        kind='wrong weight matrix (copy-paste)',
        wrong_on='Random X [3, 4], W_q, W_k, W_v [4, 2] with W_k ≠ W_v: the outputs are mixes of X W_k instead of X W_v.',
        source='''import numpy as np

from grader.learner.validation import as_array


def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    d_k = Q.shape[-1]
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)


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
    Q, K, V = X @ W_q, X @ W_k, X @ W_k
    return scaled_dot_product_attention(Q, K, V)
''',
    ),
    Wrong(
        id='h34-02-self-Q-K-swapped',
        exercise='self_attention',
        cause='You call `scaled_dot_product_attention(K, Q, V)`, so the keys ask and the queries answer: the scores are transposed before the softmax. Pass `(Q, K, V)` in that order.',
        kind='arguments swapped',
        wrong_on='Random X [3, 4], W_q, W_k, W_v [4, 2]: the weights are softmax of (Q Kᵀ)ᵀ/√2 by rows, not of Q Kᵀ/√2.',
        source='''import numpy as np

from grader.learner.validation import as_array


def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    d_k = Q.shape[-1]
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)


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
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    return scaled_dot_product_attention(K, Q, V)
''',
    ),
    Wrong(
        id='h34-02-self-scale-d-model',
        exercise='self_attention',
        cause='You divide the scores by √X.shape[-1], the width of the tokens; d_k is the width of the projected queries and keys, `W_q.shape[1]` (which `scaled_dot_product_attention` would use for you).',
        kind='scale from the wrong width (d_model)',
        wrong_on='Random X [3, 8] and W_q, W_k, W_v [8, 2]: the scores are divided by √8 instead of √2.',
        source='''import numpy as np

from grader.learner.validation import as_array


def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


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
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(X.shape[-1])
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
''',
    ),
    Wrong(
        id='h34-02-self-output-only',
        exercise='self_attention',
        cause='You return only `[0]` of the attention result; the function returns both, `(output, weights)`.',
        kind='returns one item of a tuple',
        wrong_on='Random X [3, 4] and W_q, W_k, W_v [4, 2]: returns a single [3, 2] array instead of the pair (output, weights).',
        source='''import numpy as np

from grader.learner.validation import as_array


def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    d_k = Q.shape[-1]
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)


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
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    return scaled_dot_product_attention(Q, K, V)[0]
''',
    ),
    Wrong(
        id='h34-02-self-V-unprojected',
        exercise='self_attention',
        cause='You pass X itself as the values, so W_v is never used; the values are `V = X @ W_v`.',
        kind='projection left out',
        wrong_on='Random X [3, 4] and W_v [4, 2]: the output is [3, 4] (mixes of X) instead of [3, 2].',
        source='''import numpy as np

from grader.learner.validation import as_array


def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    d_k = Q.shape[-1]
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)


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
    Q, K = X @ W_q, X @ W_k
    return scaled_dot_product_attention(Q, K, X)
''',
    ),
    Wrong(
        id='h34-02-self-weights-transposed',
        exercise='self_attention',
        cause='You project with `X @ W.T`; with tokens as rows and W of shape [d_model, d_k] the projection is `X @ W` (it only runs at all when W is square).',
        kind='transpose added to the weight matrices',
        wrong_on='X [3, 3] and non-symmetric W_q, W_k, W_v [3, 3]: Q, K, V are X Wᵀ instead of X W, so the outputs differ.',
        source='''import numpy as np

from grader.learner.validation import as_array


def softmax(x, axis=-1):
    """Weights along `axis`: non-negative, summing to 1, and no overflow for scores of +-1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1} for x of "
                         f"shape {x.shape}, got {axis!r}")
    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    d_k = Q.shape[-1]
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)


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
    Q, K, V = X @ W_q.T, X @ W_k.T, X @ W_v.T
    return scaled_dot_product_attention(Q, K, V)
''',
    ),
    Wrong(
        id='h34-03-wsQ-transposed',
        exercise='worksheet_Q',
        cause='You typed one row per token (4 rows of 3), which is Qᵀ; in this lesson tokens are columns, so Q = W_Q X has 3 rows (one per query feature) and 4 columns (one per token).',
        kind='result transposed (tokens as rows)',
        wrong_on="The published worksheet: WORKSHEET['Q'] is 4×3 where Q is 3×4.",
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
''',
    ),
    Wrong(
        id='h34-03-wsQ-missed-term',
        exercise='worksheet_Q',
        cause='Entry (3, 3) of Q is row 3 of W_Q, (0,0,1,0,1,0), dotted with token 3, (0,0,1,0,1,0): two products of 1, so 2; you wrote 1, as if one of them were not there.',
        kind='arithmetic slip (a product left out of a dot product)',
        wrong_on='The published worksheet: Q[3,3] (1-based) is 1 instead of 2.',
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
''',
    ),
    Wrong(
        id='h34-03-wsK-minus-one-as-plus',
        exercise='worksheet_K',
        cause='Row 2 of W_K has a -1 (at feature 5); you counted it as +1, so k₃ got +1 instead of -1 in its second entry. A -1 in W_K subtracts that feature of the token.',
        kind='sign dropped',
        wrong_on='The published worksheet: K[2,3] (1-based) is 1 instead of -1.',
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
''',
    ),
    Wrong(
        id='h34-03-wsK-row-copied',
        exercise='worksheet_K',
        cause='Your third row of K repeats the first: you used row 1 of W_K, (0,1,0,1,0,0), again; row 3 of K comes from row 3 of W_K, (0,1,0,0,1,0).',
        kind='wrong row of a weight matrix used',
        wrong_on='The published worksheet: row 3 of K is [1, 2, 0, 0] instead of [1, 1, 1, 0].',
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
1 2 0 0
"""
WORKSHEET["V"] = """
1 0 2 1
1 0 1 2
0 0 1 1
"""
''',
    ),
    Wrong(
        id='h34-03-wsV-copied-K',
        exercise='worksheet_V',
        cause='The numbers you typed for V are those of K = W_K X; V is W_V X, with the rows of W_V.',
        kind='wrong weight matrix (copy-paste)',
        wrong_on='The published worksheet: V is typed as [[1,2,0,0],[0,1,-1,1],[1,1,1,0]] instead of [[1,0,2,1],[1,0,1,2],[0,0,1,1]].',
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
1 2 0 0
0 1 -1 1
1 1 1 0
"""
''',
    ),
    Wrong(
        id='h34-03-wsV-missed-term',
        exercise='worksheet_V',
        cause='Entry (2, 4) of V is row 2 of W_V, (0,0,1,0,0,1), dotted with token 4, (0,0,1,0,0,1): 1 + 1 = 2; you wrote 1.',
        kind='arithmetic slip (a product left out of a dot product)',
        wrong_on='The published worksheet: V[2,4] (1-based) is 1 instead of 2.',
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
0 0 1 1
"""
''',
    ),
    Wrong(
        id='h34-03-wsScores-QtK',
        exercise='worksheet_scores',
        cause="You computed Qᵀ K, whose row i is query i; the worksheet's scores are Kᵀ Q, one row per key and one column per query, so that step 4 can normalise down the columns.",
        kind='operands swapped (result transposed)',
        wrong_on='The published worksheet: scores[1,2] (1-based) is 6 where k₁·q₂ = 1 belongs (you have the transpose).',
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
''',
    ),
    Wrong(
        id='h34-03-wsScores-KtK',
        exercise='worksheet_scores',
        cause='You multiplied Kᵀ by K instead of by Q; the scores match keys with queries, Kᵀ Q.',
        kind='wrong operand (K used twice)',
        wrong_on='The published worksheet: scores[1,1] (1-based) is k₁·k₁ = 2 instead of k₁·q₁ = 3.',
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
2 3 1 0
3 6 0 1
1 0 2 -1
0 1 -1 1
"""
''',
    ),
    Wrong(
        id='h34-03-wsScores-sign-slip',
        exercise='worksheet_scores',
        cause="Entry (3, 2) is k₃·q₂ = (0,-1,1)·(1,1,0) = 0 - 1 + 0 = -1; you wrote 1, dropping the minus sign of K's -1.",
        kind='sign slip in one entry',
        wrong_on='The published worksheet: scores[3,2] (1-based) is 1 instead of -1.',
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
''',
    ),
    Wrong(
        id='h34-03-wsScaled-rounded',
        exercise='worksheet_scaled',
        cause='You rounded s/2 to the nearest whole number (halves up), so 3/2 became 2 and 1/2 became 1; the step is floor, always down: ⌊3/2⌋ = 1, ⌊1/2⌋ = 0, ⌊-1/2⌋ = -1.',
        kind='rounding where floor belongs',
        wrong_on='The published worksheet: scaled[1,1] (1-based), from score 3, is 2 instead of 1.',
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
''',
    ),
    Wrong(
        id='h34-03-wsScaled-toward-zero',
        exercise='worksheet_scaled',
        cause='For the negative score -1 you wrote ⌊-1/2⌋ = 0, rounding toward zero; floor rounds down, also below zero, so ⌊-1/2⌋ = -1.',
        kind='rounding toward zero where floor belongs',
        wrong_on='The published worksheet: scaled[3,2] (1-based), from score -1, is 0 instead of -1.',
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
''',
    ),
    Wrong(
        id='h34-03-wsScaled-halves',
        exercise='worksheet_scaled',
        cause='You divided by 2 but kept the halves (3/2, 1/2, -1/2); the step also takes the floor, so every entry is a whole number.',
        kind='floor left out',
        wrong_on='The published worksheet: scaled[1,1] (1-based) is 3/2 instead of 1.',
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
''',
    ),
    Wrong(
        id='h34-03-wsA-rows-normalised',
        exercise='worksheet_A',
        cause="You divided each power by the sum of its row; in the column convention each query is a column, so divide by the column's sum (32, 16/3, 16 and 14 here).",
        kind='normalised along the wrong axis',
        wrong_on='The published worksheet: A[1,1] (1-based) is 3/7 (row sum 7) instead of 3/32 (column sum 32).',
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
''',
    ),
    Wrong(
        id='h34-03-wsA-not-normalised',
        exercise='worksheet_A',
        cause='You typed the powers 3^scaled without dividing by the column sums, so the columns do not add up to 1; divide each power by the sum of its column.',
        kind='normalisation left out',
        wrong_on='The published worksheet: A[1,1] (1-based) is 3 instead of 3/32.',
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
3 1 3 3
27 3 9 9
1 1/3 3 1
1 1 1 1
"""
''',
    ),
    Wrong(
        id='h34-03-wsA-powers-of-scores',
        exercise='worksheet_A',
        cause='You raised 3 to the scores themselves instead of to the scaled scores ⌊scores/2⌋ of step 3; the softmax of step 4 takes the scaled scores.',
        kind='step skipped (unscaled scores used)',
        wrong_on='The published worksheet: column 1 comes from 3^(3, 6, 0, 1), so A[1,1] (1-based) is 27/760 instead of 3/32.',
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
27/760 9/100 27/118 9/94
729/760 81/100 81/118 81/94
1/760 1/100 9/118 1/94
3/760 9/100 1/118 3/94
"""
''',
    ),
    Wrong(
        id='h34-03-wsZ-A-transposed',
        exercise='worksheet_Z',
        cause='You multiplied V by Aᵀ (rows of A where its columns belong): column j of Z is V times column j of A, the weights of query j.',
        kind='transpose added',
        wrong_on="The published worksheet: Z[1,1] (1-based) is V's row 1 · A's row 1 = 3/32 + 3/8 + 3/14 instead of 3/16.",
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
    Wrong(
        id='h34-03-wsZ-mixes-K',
        exercise='worksheet_Z',
        cause='You mixed the columns of K with the weights; the output mixes the values, Z = V A.',
        kind='wrong operand (keys mixed instead of values)',
        wrong_on="The published worksheet: Z[1,1] (1-based) is K's row 1 · A's column 1 = 3/32 + 27/16 = 57/32 instead of 3/16.",
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
57/32 21/16 21/16 3/2
27/32 11/16 7/16 9/14
31/32 13/16 15/16 13/14
"""
''',
    ),
    Wrong(
        id='h34-03-kqs-QtK',
        exercise='key_query_scores',
        cause="You return `Q.T @ K`, whose entry (i, j) is q_i · k_j; the function's rows are keys: `K.T @ Q`.",
        kind='operands swapped (result transposed)',
        wrong_on='K=[[1, 0]] (d_k=1, two keys) and Q=[[1, 2, 3]] (three queries): returns a 3×2 array instead of the 2×3 [[1, 2, 3], [0, 0, 0]].',
        source='''import math
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
        id='h34-03-kqs-KtK',
        exercise='key_query_scores',
        cause='You compute `K.T @ K`, the keys against themselves; the scores pair keys with queries, `K.T @ Q`.',
        kind='wrong operand (K used twice)',
        wrong_on='K=[[1, 2], [3, 4]], Q=[[5, 6], [7, 8]]: returns [[10, 14], [14, 20]] instead of [[26, 30], [38, 44]].',
        source='''import math
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
    return K.T @ K
''',
    ),
    Wrong(
        id='h34-03-kqs-floats',
        exercise='key_query_scores',
        cause='`.astype(float)` turns the exact Fractions into floats; the function must return Fractions, so return `K.T @ Q` as it is (an object array of Fractions).',
        kind='right numbers of the wrong type (floats for Fractions)',
        wrong_on='K=[[1, 2], [3, 4]], Q=[[5, 6], [7, 8]]: the values are right but are floats, not Fractions.',
        source='''import math
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
        id='h34-03-kqs-K-Qt',
        exercise='key_query_scores',
        cause='`K @ Q.T` dots the rows of K with the rows of Q, i.e. features with features; keys and queries are the columns, so transpose K and not Q: `K.T @ Q`.',
        kind='transposes on the wrong operands',
        wrong_on='K=[[1, 2], [3, 4]], Q=[[5, 6], [7, 8]]: returns [[17, 23], [39, 53]] instead of [[26, 30], [38, 44]].',
        source='''import math
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
        id='h34-03-floor-int-truncates',
        exercise='floor_half',
        cause='`int(s / 2)` rounds toward zero, so -1/2 becomes 0; floor rounds down, `math.floor(s / 2)` (or `s // 2`), which gives -1.',
        kind='truncation toward zero where floor belongs',
        wrong_on='S=[[-1]]: returns [[0]] instead of [[-1]].',
        source='''import math
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
        id='h34-03-floor-round',
        exercise='floor_half',
        cause='`round(s / 2)` rounds to the nearest (even) whole number, so 3/2 becomes 2; the step rounds down, `math.floor(s / 2)`.',
        kind='rounding where floor belongs',
        wrong_on='S=[[3]]: returns [[2]] instead of [[1]].',
        source='''import math
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
        id='h34-03-floor-floats',
        exercise='floor_half',
        cause='You convert S to floats to use `np.floor`, so you return floats; the function must stay exact and return Fractions, e.g. `Fraction(math.floor(s / 2))` entry by entry.',
        kind='right numbers of the wrong type (floats for Fractions)',
        wrong_on='S=[[3, -1]]: the values [[1, -1]] are right but come back as floats, not Fractions.',
        source='''import math
from fractions import Fraction

import numpy as np

from grader.learner.validation import as_fractions


def floor_half(S):
    """floor(S / 2) entry by entry, exactly: the stand-in for S / √3. floor(-1/2) is -1."""
    S = as_fractions(S, "S")
    return np.floor(S.astype(float) / 2)
''',
    ),
    Wrong(
        id='h34-03-floor-before-halving',
        exercise='floor_half',
        cause='You take the floor of s first and halve afterwards, `floor(s) / 2`, which leaves halves for odd scores; halve first and then take the floor, `floor(s / 2)`.',
        kind='operations in the wrong order',
        wrong_on='S=[[3]]: returns [[3/2]] instead of [[1]].',
        source='''import math
from fractions import Fraction

import numpy as np

from grader.learner.validation import as_fractions


def floor_half(S):
    """floor(S / 2) entry by entry, exactly: the stand-in for S / √3. floor(-1/2) is -1."""
    S = as_fractions(S, "S")
    return np.array([[Fraction(math.floor(s), 2) for s in row] for row in S], dtype=object)
''',
    ),
    Wrong(
        id='h34-03-sm3-float-powers',
        exercise='softmax3_columns',
        cause="`Fraction(3) ** S` on a whole array raises 3.0, not the Fraction 3, so the powers and the weights are floats; raise `Fraction(3) ** int(s)` entry by entry, as the notebook's cell shows.",
        kind='right numbers of the wrong type (floats for Fractions)',
        wrong_on='S=[[0], [1]]: returns the floats [[0.25], [0.75]] instead of the Fractions 1/4 and 3/4.',
        source='''import math
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
        id='h34-03-sm3-rows',
        exercise='softmax3_columns',
        cause='You divide each power by the sum of its row; the weights of one query form a column, so divide by the column sums, `P / P.sum(axis=0)`.',
        kind='normalised along the wrong axis',
        wrong_on='S=[[0, 0], [1, 0]]: returns [[1/2, 1/2], [3/4, 1/4]] instead of [[1/4, 1/2], [3/4, 1/2]].',
        source='''import math
from fractions import Fraction

import numpy as np

from grader.learner.validation import as_fractions


def softmax3_columns(S):
    """3 ** S with every column divided by its sum, exactly. Every column sums to 1.

    S holds whole numbers (the scaled scores).
    """
    S = as_fractions(S, "S", whole=True)
    P = np.array([[Fraction(3) ** int(s) for s in row] for row in S], dtype=object)
    return P / P.sum(axis=1)[:, None]
''',
    ),
    Wrong(
        id='h34-03-sm3-total',
        exercise='softmax3_columns',
        cause="`P / P.sum()` divides by the sum of the whole matrix, so the matrix sums to 1 and no column does; divide by each column's own sum, `P.sum(axis=0)`.",
        kind='reduction over all axes where one axis belongs',
        wrong_on='S=[[0, 0], [1, 0]]: returns [[1/6, 1/6], [1/2, 1/6]] instead of [[1/4, 1/2], [3/4, 1/2]].',
        source='''import math
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
        id='h34-03-sm3-exponent-sign',
        exercise='softmax3_columns',
        cause='You raise 3 to `-s`, which gives the largest weight to the lowest score; the powers are 3^s.',
        kind='sign flipped inside the exponent',
        wrong_on='S=[[0], [1]]: returns [[3/4], [1/4]] instead of [[1/4], [3/4]].',
        source='''import math
from fractions import Fraction

import numpy as np

from grader.learner.validation import as_fractions


def softmax3_columns(S):
    """3 ** S with every column divided by its sum, exactly. Every column sums to 1.

    S holds whole numbers (the scaled scores).
    """
    S = as_fractions(S, "S", whole=True)
    P = np.array([[Fraction(3) ** -int(s) for s in row] for row in S], dtype=object)
    return P / P.sum(axis=0)
''',
    ),
    Wrong(
        id='h34-03-abh-scores-args-swapped',
        exercise='attention_by_hand',
        cause='You call `key_query_scores(Q, K)`; its first argument is the keys, so you get Qᵀ K (one row per query) and the softmax runs down the wrong columns. Call `key_query_scores(K, Q)`.',
        kind='arguments swapped',
        wrong_on='The published worksheet: scores[0, 1] is 6 (q₁·k₂) instead of 1 (k₁·q₂), and A and Z follow.',
        source='''import math
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
    Q, K, V = W_Q @ X, W_K @ X, W_V @ X
    scores = key_query_scores(Q, K)
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    Z = V @ A
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
''',
    ),
    Wrong(
        id='h34-03-abh-Z-A-transposed',
        exercise='attention_by_hand',
        cause='`Z = V @ A.T` mixes the values with the rows of A; column j of Z uses column j of A (the weights of query j): `Z = V @ A`.',
        kind='transpose added',
        wrong_on='The published worksheet: Z[0, 0] is 3/32 + 3/8 + 3/14 instead of 3/16 (Q to A are right).',
        source='''import math
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
    Q, K, V = W_Q @ X, W_K @ X, W_V @ X
    scores = key_query_scores(K, Q)
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    Z = V @ A.T
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
''',
    ),
    Wrong(
        id='h34-03-abh-scale-skipped',
        exercise='attention_by_hand',
        cause='You compute `scaled` but pass `scores` to `softmax3_columns`; step 4 takes the scaled scores, `softmax3_columns(scaled)`.',
        kind='step skipped (unscaled scores used)',
        wrong_on='The published worksheet: A[0, 0] is 27/760 instead of 3/32, and Z follows.',
        source='''import math
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
    Q, K, V = W_Q @ X, W_K @ X, W_V @ X
    scores = key_query_scores(K, Q)
    scaled = floor_half(scores)
    A = softmax3_columns(scores)
    Z = V @ A
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
''',
    ),
    Wrong(
        id='h34-03-abh-K-from-WQ',
        exercise='attention_by_hand',
        cause='You compute `K = W_Q @ X`; the keys come from W_K, `K = W_K @ X`.',
        kind='wrong weight matrix (copy-paste)',
        wrong_on='The published worksheet: K equals Q ([[2,1,1,1],...]) instead of [[1,2,0,0],...], and everything after it follows.',
        source='''import math
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
    Q, K, V = W_Q @ X, W_Q @ X, W_V @ X
    scores = key_query_scores(K, Q)
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    Z = V @ A
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
''',
    ),
    Wrong(
        id='h34-03-abh-helper-truncates',
        exercise='attention_by_hand',
        cause='attention_by_hand itself is right, but your `floor_half` uses `int(s / 2)`, which rounds -1/2 to 0; fix `floor_half` to round down (`math.floor(s / 2)`).',
        kind='truncation toward zero (in a helper)',
        wrong_on='The published worksheet: scaled[2, 1] (score -1) is 0 instead of -1, so column 2 of A and Z are wrong.',
        source='''import math
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
    return np.array([[Fraction(int(s / 2)) for s in row] for row in S], dtype=object)


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
    Q, K, V = W_Q @ X, W_K @ X, W_V @ X
    scores = key_query_scores(K, Q)
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    Z = V @ A
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
''',
    ),
    Wrong(
        id='h34-03-row-no-W-transpose',
        exercise='row_convention_attention',
        cause='With tokens as rows the projections are `X_rows @ W.T` (the weights are 3×d_in); `X_rows @ W` only runs when d_in = 3 and then projects with the wrong matrix.',
        kind='transpose left out',
        wrong_on='The published worksheet (X_rows 4×6, W 3×6): raises instead of returning; with 3 features it returns wrong numbers.',
        source='''import math
from fractions import Fraction

import numpy as np

from grader.learner.validation import as_fractions


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
    Q, K, V = X_rows @ W_Q, X_rows @ W_K, X_rows @ W_V
    scores = Q @ K.T
    scaled = floor_half(scores)
    A = softmax3_columns(scaled.T).T
    Z = A @ V
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
''',
    ),
    Wrong(
        id='h34-03-row-softmax-columns',
        exercise='row_convention_attention',
        cause="You reuse `softmax3_columns(scaled)` as it is, so A's columns sum to 1; in the row convention each query is a row, so normalise the rows: `softmax3_columns(scaled.T).T`.",
        kind='normalised along the wrong axis',
        wrong_on='The published worksheet: row 0 of A is [3/10, 9/16, 3/16, 1/4] (its columns sum to 1, its rows do not) instead of [3/32, 27/32, 1/32, 1/32].',
        source='''import math
from fractions import Fraction

import numpy as np

from grader.learner.validation import as_fractions


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
    Q, K, V = X_rows @ W_Q.T, X_rows @ W_K.T, X_rows @ W_V.T
    scores = Q @ K.T
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    Z = A @ V
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
''',
    ),
    Wrong(
        id='h34-03-row-Z-At-V',
        exercise='row_convention_attention',
        cause='`Z = A.T @ V` mixes the values with the columns of A; in the row convention row i of Z uses row i of A: `Z = A @ V`.',
        kind='transpose added',
        wrong_on='The published worksheet: Z[0] mixes V with column 0 of A (3/32, 3/16, 3/16, 3/14) instead of row 0.',
        source='''import math
from fractions import Fraction

import numpy as np

from grader.learner.validation import as_fractions


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
    Q, K, V = X_rows @ W_Q.T, X_rows @ W_K.T, X_rows @ W_V.T
    scores = Q @ K.T
    scaled = floor_half(scores)
    A = softmax3_columns(scaled.T).T
    Z = A.T @ V
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
''',
    ),
    Wrong(
        id='h34-03-row-scores-KQt',
        exercise='row_convention_attention',
        cause="`K @ Q.T` has one row per key, the column convention's layout; in the row convention row i belongs to query i: `scores = Q @ K.T`.",
        kind='operands swapped (result transposed)',
        wrong_on='The published worksheet: scores[0, 1] is k₁·q₂ = 1 instead of q₁·k₂ = 6 (the scores are transposed), and A and Z follow.',
        source='''import math
from fractions import Fraction

import numpy as np

from grader.learner.validation import as_fractions


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
    Q, K, V = X_rows @ W_Q.T, X_rows @ W_K.T, X_rows @ W_V.T
    scores = K @ Q.T
    scaled = floor_half(scores)
    A = softmax3_columns(scaled.T).T
    Z = A @ V
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
''',
    ),
    Wrong(
        id='h34-03-row-column-results',
        exercise='row_convention_attention',
        cause='You run `attention_by_hand(X_rows.T, ...)` and return its steps as they are, in the column convention; every step of the row convention is the transpose of those, so transpose each one (`{step: M.T for step, M in steps.items()}`).',
        kind='result not transposed back',
        wrong_on='The published worksheet: Q comes back 3×4 instead of 4×3, and the same for every step.',
        source='''import math
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
    Q, K, V = W_Q @ X, W_K @ X, W_V @ X
    scores = key_query_scores(K, Q)
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    Z = V @ A
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}


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
    return attention_by_hand(X_rows.T, W_Q, W_K, W_V)
''',
    ),
    Wrong(
        id='h34-04-causal-float',
        exercise='causal_mask',
        cause='`np.tril(np.ones((T, T)))` is a float matrix of 1s and 0s; the mask must be boolean: pass `dtype=bool` to `np.ones` (or compare positions).',
        kind='right pattern of the wrong type (numbers for a mask)',
        wrong_on='T=3: returns floats 1.0/0.0 instead of a bool array.',
        source='''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def causal_mask(T):
    """[T, T] boolean mask: True where key j <= query i."""
    T = positive_int(T, "T")
    return np.tril(np.ones((T, T)))
''',
    ),
    Wrong(
        id='h34-04-causal-upper',
        exercise='causal_mask',
        cause='`np.triu` keeps the upper triangle, where key j > query i, so every query sees the future and not the past; the causal mask is the lower triangle, `np.tril`.',
        kind='wrong triangle',
        wrong_on='T=2: returns [[True, True], [False, True]] instead of [[True, False], [True, True]].',
        source='''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def causal_mask(T):
    """[T, T] boolean mask: True where key j <= query i."""
    T = positive_int(T, "T")
    return np.triu(np.ones((T, T), dtype=bool))
''',
    ),
    Wrong(
        id='h34-04-causal-no-diagonal',
        exercise='causal_mask',
        cause='`k=-1` drops the diagonal, so no token may look at itself (and query 0 has no key at all); the diagonal belongs to the mask: `np.tril(..., k=0)`.',
        kind='diagonal offset off by one',
        wrong_on='T=2: returns [[False, False], [True, False]] instead of [[True, False], [True, True]].',
        source='''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def causal_mask(T):
    """[T, T] boolean mask: True where key j <= query i."""
    T = positive_int(T, "T")
    return np.tril(np.ones((T, T), dtype=bool), k=-1)
''',
    ),
    Wrong(
        id='h34-04-causal-blocked-marked',
        exercise='causal_mask',
        cause='You mark the forbidden pairs (the future, `np.triu(k=1)`) with True; in this course True means "may attend", so mark the allowed ones: `np.tril(np.ones((T, T), dtype=bool))`.',
        kind='mask polarity inverted',
        wrong_on='T=2: returns [[False, True], [False, False]] instead of [[True, False], [True, True]].',
        source='''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def causal_mask(T):
    """[T, T] boolean mask: True where key j <= query i."""
    T = positive_int(T, "T")
    return np.triu(np.ones((T, T), dtype=bool), k=1)
''',
    ),
    Wrong(
        id='h34-04-pad-off-by-one',
        exercise='padding_mask',
        cause='Positions run from 0, so a sentence of length L has real tokens at 0..L-1; `<=` also marks position L (the first padding) as real. Use `np.arange(T)[None, :] < lengths[:, None]`.',
        kind='comparison off by one (<= for <)',
        wrong_on='lengths=[2], T=3: returns [[True, True, True]] instead of [[True, True, False]].',
        source='''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def padding_mask(lengths, T):
    """[B, T] boolean mask: True at the real tokens of each sentence, False at its padding."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return np.arange(T)[None, :] <= lengths[:, None]
''',
    ),
    Wrong(
        id='h34-04-pad-no-column',
        exercise='padding_mask',
        cause='`np.arange(T) < lengths` compares position j with the length of sentence j, entry by entry (and fails when B ≠ T); make the lengths a column, `lengths[:, None]`, so broadcasting builds the B×T grid.',
        kind='[:, None] left out (broadcasting)',
        wrong_on='lengths=[1, 3, 2], T=3: returns the 1-D [True, True, False] instead of a 3×3 mask.',
        source='''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def padding_mask(lengths, T):
    """[B, T] boolean mask: True at the real tokens of each sentence, False at its padding."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return np.arange(T) < lengths
''',
    ),
    Wrong(
        id='h34-04-pad-inverted',
        exercise='padding_mask',
        cause='`>=` marks the padding with True; the mask is True at the real tokens, `np.arange(T)[None, :] < lengths[:, None]`.',
        kind='mask polarity inverted',
        wrong_on='lengths=[2], T=3: returns [[False, False, True]] instead of [[True, True, False]].',
        source='''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def padding_mask(lengths, T):
    """[B, T] boolean mask: True at the real tokens of each sentence, False at its padding."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return np.arange(T)[None, :] >= lengths[:, None]
''',
    ),
    Wrong(
        id='h34-04-pad-transposed',
        exercise='padding_mask',
        cause='You put the positions in a column and the lengths in a row, which gives a [T, B] mask; the positions go along the row, `np.arange(T)[None, :] < lengths[:, None]`, for [B, T].',
        kind='result transposed',
        wrong_on='lengths=[3, 2], T=3: returns a 3×2 array instead of [[True, True, True], [True, True, False]].',
        source='''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def padding_mask(lengths, T):
    """[B, T] boolean mask: True at the real tokens of each sentence, False at its padding."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return np.arange(T)[:, None] < lengths[None, :]
''',
    ),
    Wrong(
        id='h34-04-am-pads-queries',
        exercise='attention_mask',
        cause='`padding[:, :, None]` blanks the rows of the padding queries; padding hides keys, so it must blank columns: `padding[:, None, :]`.',
        kind='mask applied to the wrong axis (queries for keys)',
        wrong_on='lengths=[2], T=3, causal=False: row 2 is all False and column 2 is True instead of the other way round.',
        source='''import numpy as np
import torch
import torch.nn.functional as F

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
    pad = padding_mask(lengths, T)[:, :, None]
    allowed = np.broadcast_to(pad, (len(lengths), T, T))
    if causal:
        allowed = allowed & causal_mask(T)[None, :, :]
    return allowed.copy()
''',
    ),
    Wrong(
        id='h34-04-am-causal-flag-ignored',
        exercise='attention_mask',
        cause='You always combine with the causal mask, so `causal=False` still hides the future; only add `causal_mask(T)` when `causal` is True.',
        kind='parameter ignored',
        wrong_on='lengths=[3], T=3, causal=False: returns the lower triangle instead of all True.',
        source='''import numpy as np
import torch
import torch.nn.functional as F

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
        id='h34-04-am-or',
        exercise='attention_mask',
        cause='A pair may attend only if both masks allow it, which is `&`; with `|` a query may look at the future whenever that key is real, and at padding whenever it is in the past.',
        kind='| where & belongs',
        wrong_on='lengths=[3], T=3, causal=True: returns all True instead of the lower triangle.',
        source='''import numpy as np
import torch
import torch.nn.functional as F

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
        return pad | causal_mask(T)[None, :, :]
    return np.broadcast_to(pad, (len(lengths), T, T)).copy()
''',
    ),
    Wrong(
        id='h34-04-am-noncausal-shape',
        exercise='attention_mask',
        cause='With `causal=False` you return `padding[:, None, :]`, which is [B, 1, T]; the function promises [B, T, T], so broadcast it (e.g. `np.broadcast_to(..., (B, T, T)).copy()` or `np.repeat`).',
        kind='axis of length 1 left unbroadcast',
        wrong_on='lengths=[2], T=3, causal=False: returns shape [1, 1, 3] instead of [1, 3, 3].',
        source='''import numpy as np
import torch
import torch.nn.functional as F

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
        id='h34-04-ms-nan-row',
        exercise='masked_softmax',
        cause='For a row with no allowed key, the largest score is -inf and `x - m` is -inf - (-inf) = NaN, so the row comes out NaN; shift such a row by 0 instead (e.g. `m = np.where(np.isfinite(m), m, 0)`) and return zeros where the sum of the exponentials is 0.',
        kind='fully masked row not handled (NaN)',
        wrong_on='scores=[[1, 2]], mask=[[False, False]]: returns [[nan, nan]] instead of [[0, 0]].',
        source='''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def masked_softmax(scores, mask):
    """Softmax over the last axis with masked scores set to -inf first.

    mask: boolean, True = may attend, broadcasts to scores. A row with no allowed key
    returns zeros, never NaN.
    """
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    x = np.where(mask, scores, -np.inf)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
''',
    ),
    Wrong(
        id='h34-04-ms-fill-1e9',
        exercise='masked_softmax',
        cause='You fill masked scores with -1e9; where a row has no allowed key all its scores are equal and the softmax spreads the weight evenly over forbidden keys. Fill with -inf and return zeros for such a row.',
        kind='large negative fill instead of -inf',
        wrong_on='scores=[[1, 2]], mask=[[False, False]]: returns [[0.5, 0.5]] instead of [[0, 0]].',
        source='''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def masked_softmax(scores, mask):
    """Softmax over the last axis with masked scores set to -inf first.

    mask: boolean, True = may attend, broadcasts to scores. A row with no allowed key
    returns zeros, never NaN.
    """
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    x = np.where(mask, scores, -1e9)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
''',
    ),
    Wrong(
        id='h34-04-ms-mask-after',
        exercise='masked_softmax',
        cause='You take the softmax of all the scores and then multiply by the mask, so the allowed weights no longer sum to 1 and still depend on the masked scores; set the masked scores to -inf before the softmax.',
        kind='mask applied after the softmax',
        wrong_on='scores=[[0, 0]], mask=[[True, False]]: returns [[0.5, 0]] instead of [[1, 0]].',
        source='''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def masked_softmax(scores, mask):
    """Softmax over the last axis with masked scores set to -inf first.

    mask: boolean, True = may attend, broadcasts to scores. A row with no allowed key
    returns zeros, never NaN.
    """
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights * mask
''',
    ),
    Wrong(
        id='h34-04-ms-inverted',
        exercise='masked_softmax',
        cause='`np.where(mask, -np.inf, scores)` hides the keys the mask allows and keeps the others; True means "may attend", so keep the score where the mask is True: `np.where(mask, scores, -np.inf)`.',
        kind='mask polarity inverted',
        wrong_on='scores=[[1, 2]], mask=[[True, False]]: returns [[0, 1]] instead of [[1, 0]].',
        source='''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def masked_softmax(scores, mask):
    """Softmax over the last axis with masked scores set to -inf first.

    mask: boolean, True = may attend, broadcasts to scores. A row with no allowed key
    returns zeros, never NaN.
    """
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    x = np.where(mask, -np.inf, scores)
    m = x.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(x - m)
    total = e.sum(axis=-1, keepdims=True)
    return np.where(total > 0, e / np.where(total > 0, total, 1.0), 0.0)
''',
    ),
    Wrong(
        id='h34-04-ms-max-before-masking',
        exercise='masked_softmax',
        cause="You subtract the largest of all the scores, masked ones included; when a masked key's score is far above the allowed ones, every allowed exponential underflows to 0 and the row comes out as zeros. Take the maximum of the masked scores (after the -inf).",
        kind='stabilising shift taken before the mask',
        wrong_on='scores=[[0, 1, 900]], mask=[[True, True, False]]: returns [[0, 0, 0]] instead of [[0.27, 0.73, 0]].',
        source='''import numpy as np
import torch
import torch.nn.functional as F

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
        id='h34-04-ms-query-axis',
        exercise='masked_softmax',
        cause='You reduce over axis -2, so each column sums to 1; the softmax runs over the last axis, the keys: `axis=-1` for the maximum and the sum.',
        kind='softmax over the wrong axis',
        wrong_on='scores=[[1, 2], [3, 4]], mask all True: returns column-normalised weights ([[0.12, 0.12], [0.88, 0.88]]) instead of rows [0.27, 0.73].',
        source='''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def masked_softmax(scores, mask):
    """Softmax over the last axis with masked scores set to -inf first.

    mask: boolean, True = may attend, broadcasts to scores. A row with no allowed key
    returns zeros, never NaN.
    """
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    x = np.where(mask, scores, -np.inf)
    m = x.max(axis=-2, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(x - m)
    total = e.sum(axis=-2, keepdims=True)
    return np.where(total > 0, e / np.where(total > 0, total, 1.0), 0.0)
''',
    ),
    Wrong(
        id='h34-04-ms-torch-softmax',
        exercise='masked_softmax',
        cause='You call `torch.softmax` and clean the NaN rows afterwards; the exercise asks you to write the softmax yourself and does not accept library softmax functions. The values are right, the rule is broken.',
        kind='forbidden call (a library softmax)',
        wrong_on='Any input: the numbers are right, but the function calls torch.softmax, which the exercise forbids.',
        source='''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def masked_softmax(scores, mask):
    """Softmax over the last axis with masked scores set to -inf first.

    mask: boolean, True = may attend, broadcasts to scores. A row with no allowed key
    returns zeros, never NaN.
    """
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    x = torch.as_tensor(np.where(mask, scores, -np.inf))
    weights = torch.softmax(x, dim=-1).numpy()
    return np.nan_to_num(weights, nan=0.0)
''',
    ),
    Wrong(
        id='h34-04-ma-none-float-mask',
        exercise='masked_attention',
        cause='For `mask=None` you build `np.ones_like(scores)`, a float array, and `masked_softmax` rejects non-boolean masks with a ValueError; build an all-True boolean mask, `np.ones(scores.shape, dtype=bool)`.',
        kind='wrong type for a mask (numbers)',
        wrong_on='Any Q, K, V with mask=None: raises ValueError instead of returning plain attention.',
        source='''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def masked_softmax(scores, mask):
    """Softmax over the last axis with masked scores set to -inf first.

    mask: boolean, True = may attend, broadcasts to scores. A row with no allowed key
    returns zeros, never NaN.
    """
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    x = np.where(mask, scores, -np.inf)
    m = x.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)      # a row with no allowed key: shift by 0, not by -inf
    e = np.exp(x - m)
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
        id='h34-04-ma-no-scale',
        exercise='masked_attention',
        cause='The scores are `Q Kᵀ` without the division by √d_k; divide by `np.sqrt(Q.shape[-1])` before the masked softmax.',
        kind='scale left out',
        wrong_on='Random Q, K of shape [3, 4] with the causal mask: the weights are sharper than softmax(QKᵀ/2).',
        source='''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def masked_softmax(scores, mask):
    """Softmax over the last axis with masked scores set to -inf first.

    mask: boolean, True = may attend, broadcasts to scores. A row with no allowed key
    returns zeros, never NaN.
    """
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    x = np.where(mask, scores, -np.inf)
    m = x.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)      # a row with no allowed key: shift by 0, not by -inf
    e = np.exp(x - m)
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
        id='h34-04-ma-mask-after-softmax',
        exercise='masked_attention',
        cause='You take the softmax over all keys and then multiply the weights by the mask, so the allowed weights do not sum to 1 and still depend on the masked keys; pass the mask into `masked_softmax` so the masked scores are -inf before the softmax.',
        kind='mask applied after the softmax',
        wrong_on="Random Q, K, V of shape [3, 4] with the causal mask: row 0's weight on key 0 is below 1 instead of exactly 1.",
        source='''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def masked_softmax(scores, mask):
    """Softmax over the last axis with masked scores set to -inf first.

    mask: boolean, True = may attend, broadcasts to scores. A row with no allowed key
    returns zeros, never NaN.
    """
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    x = np.where(mask, scores, -np.inf)
    m = x.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)      # a row with no allowed key: shift by 0, not by -inf
    e = np.exp(x - m)
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
    weights = masked_softmax(scores, np.ones(scores.shape, dtype=bool))
    if mask is not None:
        weights = weights * mask
    return weights @ V, weights
''',
    ),
    Wrong(
        id='h34-04-ma-helper-fill-1e9',
        exercise='masked_attention',
        cause='masked_attention itself is right, but your `masked_softmax` fills masked scores with -1e9, so a query with no allowed key spreads its weight evenly over forbidden keys and gets a non-zero output; fix `masked_softmax` (fill with -inf and return zeros for an empty row).',
        kind='large negative fill instead of -inf (in a helper)',
        wrong_on='Q, K, V of shape [2, 3] with mask=[[True, True], [False, False]]: query 1 gets weights [0.5, 0.5] and the mean of V instead of zeros.',
        source='''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def masked_softmax(scores, mask):
    """Softmax over the last axis with masked scores set to -inf first.

    mask: boolean, True = may attend, broadcasts to scores. A row with no allowed key
    returns zeros, never NaN.
    """
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    x = np.where(mask, scores, -1e9)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


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
        mask = np.ones(scores.shape, dtype=bool)
    weights = masked_softmax(scores, mask)
    return weights @ V, weights
''',
    ),
    Wrong(
        id='h34-04-ma-dk-from-keys',
        exercise='masked_attention',
        cause='You divide by √K.shape[-2], the square root of the number of keys; d_k is the length of each query and key vector, `Q.shape[-1]`.',
        kind='scale from the wrong axis (number of keys)',
        wrong_on='Q of shape [2, 4], K of shape [3, 4] (3 keys, d_k = 4), mask=None: the scores are divided by √3 instead of 2.',
        source='''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def masked_softmax(scores, mask):
    """Softmax over the last axis with masked scores set to -inf first.

    mask: boolean, True = may attend, broadcasts to scores. A row with no allowed key
    returns zeros, never NaN.
    """
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    x = np.where(mask, scores, -np.inf)
    m = x.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)      # a row with no allowed key: shift by 0, not by -inf
    e = np.exp(x - m)
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
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-2])
    if mask is None:
        mask = np.ones(scores.shape, dtype=bool)
    weights = masked_softmax(scores, mask)
    return weights @ V, weights
''',
    ),
    Wrong(
        id='h34-04-ic-changes-token-t',
        exercise='is_causal',
        cause='You replace `X[t:]`, which changes token t too, so output t moves even for a causal layer and you return False; only the tokens after t change: `X[t + 1:]`.',
        kind='slice off by one (token t itself replaced)',
        wrong_on='attend = causal self-attention, T=4, d=3: returns False instead of True.',
        source='''import numpy as np
import torch
import torch.nn.functional as F

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
        id='h34-04-ic-compares-all',
        exercise='is_causal',
        cause='You compare all the outputs, `after` with `before`; outputs after t are allowed to change when the tokens after t change. Compare only `after[:t + 1]` with `before[:t + 1]`.',
        kind='slice left out (every output compared)',
        wrong_on='attend = causal self-attention, T=4, d=3: returns False instead of True.',
        source='''import numpy as np
import torch
import torch.nn.functional as F

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
        id='h34-04-ic-misses-output-t',
        exercise='is_causal',
        cause='You compare `after[:t]` with `before[:t]`, which leaves out output t; a layer whose output t reads token t + 1 slips through. Compare outputs 0..t, `[:t + 1]`.',
        kind='slice off by one (output t not compared)',
        wrong_on='attend(X) = X shifted up by one (output t is token t+1), T=4, d=3: returns True instead of False.',
        source='''import numpy as np
import torch
import torch.nn.functional as F

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
        id='h34-04-ic-in-place',
        exercise='is_causal',
        cause='You write the new rows into X itself, so the changes pile up: from the second position on, tokens before t are no longer the ones `before` was computed from, and a causal layer looks non-causal. Change a copy, `X_new = X.copy()`, each time.',
        kind='input changed in place',
        wrong_on='attend = causal self-attention, T=4, d=3: returns False instead of True.',
        source='''import numpy as np
import torch
import torch.nn.functional as F

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
        X[t + 1:] = rng.normal(size=(T - t - 1, d))
        after = attend(X)
        if not np.allclose(after[:t + 1], before[:t + 1]):
            return False
    return True
''',
    ),
    Wrong(
        id='h34-04-ic-skips-position-0',
        exercise='is_causal',
        cause='Your loop starts at t = 1, so the future of position 0 (`X[1:]`) is never changed on its own; a layer whose output 0 reads token 1 passes. Loop over every position, `range(T)`.',
        kind='loop starts at 1 instead of 0',
        wrong_on='attend copies X but sets output 0 to token 1, T=4, d=3: returns True instead of False.',
        source='''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def is_causal(attend, T, d, seed=0):
    """True if changing tokens after position t never changes outputs 0..t of attend."""
    if not callable(attend):
        raise ValueError(f"attend must be a function of X [T, d], got {type(attend).__name__}")
    T, d = positive_int(T, "T"), positive_int(d, "d")
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, d))
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
    Wrong(
        id='h34-04-cmc-row-mask',
        exercise='causal_mask_columns',
        cause='You return the row-convention mask, `np.tril`; with keys as rows and queries as columns the rule i <= j fills the upper triangle: `np.triu(np.ones((T, T), dtype=bool))`, the transpose.',
        kind='transpose left out',
        wrong_on='T=2: returns [[True, False], [True, True]] instead of [[True, True], [False, True]].',
        source='''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def causal_mask_columns(T):
    """[T, T] causal mask with tokens as columns: entry [i, j] (key i, query j) is True where i <= j."""
    T = positive_int(T, "T")
    return np.tril(np.ones((T, T), dtype=bool))
''',
    ),
    Wrong(
        id='h34-04-cmc-no-diagonal',
        exercise='causal_mask_columns',
        cause='`np.triu(..., k=1)` leaves out the diagonal, so a token may not see itself; the rule is i <= j, diagonal included: `k=0`.',
        kind='diagonal offset off by one',
        wrong_on='T=2: returns [[False, True], [False, False]] instead of [[True, True], [False, True]].',
        source='''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def causal_mask_columns(T):
    """[T, T] causal mask with tokens as columns: entry [i, j] (key i, query j) is True where i <= j."""
    T = positive_int(T, "T")
    return np.triu(np.ones((T, T), dtype=bool), k=1)
''',
    ),
    Wrong(
        id='h34-04-cmc-float',
        exercise='causal_mask_columns',
        cause='`np.triu(np.ones((T, T)))` holds floats; a mask is boolean, so build it from `np.ones((T, T), dtype=bool)`.',
        kind='right pattern of the wrong type (numbers for a mask)',
        wrong_on='T=3: returns floats 1.0/0.0 instead of a bool array.',
        source='''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def causal_mask_columns(T):
    """[T, T] causal mask with tokens as columns: entry [i, j] (key i, query j) is True where i <= j."""
    T = positive_int(T, "T")
    return np.triu(np.ones((T, T)))
''',
    ),
    Wrong(
        id='h34-04-mha-not-inverted',
        exercise='to_mha_key_padding_mask',
        cause="You hand over the course's padding mask, True at the real tokens; `key_padding_mask` means True = ignore, so invert it: True at the padding (`~padding_mask(lengths, T)`).",
        kind='mask polarity inverted (course convention kept)',
        wrong_on='lengths=[2], T=3: returns tensor([[True, True, False]]) instead of tensor([[False, False, True]]).',
        source='''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def padding_mask(lengths, T):
    """[B, T] boolean mask: True at the real tokens of each sentence, False at its padding."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return np.arange(T)[None, :] < lengths[:, None]


def to_mha_key_padding_mask(lengths, T):
    """torch.bool tensor [B, T] for nn.MultiheadAttention's key_padding_mask: True = ignore."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return torch.from_numpy(padding_mask(lengths, T))
''',
    ),
    Wrong(
        id='h34-04-mha-numpy',
        exercise='to_mha_key_padding_mask',
        cause='You return a NumPy array; `nn.MultiheadAttention` needs a `torch.bool` tensor, so wrap it: `torch.from_numpy(...)` or `torch.as_tensor(...)`.',
        kind='wrong type (NumPy array for a tensor)',
        wrong_on='lengths=[2], T=3: returns the NumPy array [[False, False, True]] instead of a torch.bool tensor.',
        source='''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def padding_mask(lengths, T):
    """[B, T] boolean mask: True at the real tokens of each sentence, False at its padding."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return np.arange(T)[None, :] < lengths[:, None]


def to_mha_key_padding_mask(lengths, T):
    """torch.bool tensor [B, T] for nn.MultiheadAttention's key_padding_mask: True = ignore."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return ~padding_mask(lengths, T)
''',
    ),
    Wrong(
        id='h34-04-mha-float',
        exercise='to_mha_key_padding_mask',
        cause='You convert the mask to float; torch reads a float `key_padding_mask` as numbers added to the scores, so the padding gets +1 instead of being ignored. Keep it boolean: `dtype=torch.bool`.',
        kind='wrong dtype (float mask for a boolean one)',
        wrong_on='lengths=[2], T=3: returns tensor([[0., 0., 1.]]) (float32) instead of a torch.bool tensor.',
        source='''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def padding_mask(lengths, T):
    """[B, T] boolean mask: True at the real tokens of each sentence, False at its padding."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return np.arange(T)[None, :] < lengths[:, None]


def to_mha_key_padding_mask(lengths, T):
    """torch.bool tensor [B, T] for nn.MultiheadAttention's key_padding_mask: True = ignore."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return torch.tensor(~padding_mask(lengths, T), dtype=torch.float32)
''',
    ),
    Wrong(
        id='h34-04-mha-off-by-one',
        exercise='to_mha_key_padding_mask',
        cause='Padding starts at position `lengths[b]`; `>` marks only the positions after it, so the first padding token is attended to. Use `>=`.',
        kind='comparison off by one (> for >=)',
        wrong_on='lengths=[2], T=3: returns tensor([[False, False, False]]) instead of tensor([[False, False, True]]).',
        source='''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def to_mha_key_padding_mask(lengths, T):
    """torch.bool tensor [B, T] for nn.MultiheadAttention's key_padding_mask: True = ignore."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return torch.from_numpy(np.arange(T)[None, :] > lengths[:, None])
''',
    ),
    Wrong(
        id='h34-04-pa-divide-columns',
        exercise='prefix_average',
        cause='`np.tril(...) / np.arange(1, T + 1)` divides column j by j + 1, so the rows do not sum to 1; the counts belong to the rows: `/ np.arange(1, T + 1)[:, None]`.',
        kind='[:, None] left out (divides columns, not rows)',
        wrong_on='X=[[1], [1]]: returns [[1], [1.5]] instead of [[1], [1]].',
        source='''import numpy as np
import torch
import torch.nn.functional as F

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
        id='h34-04-pa-divide-by-T',
        exercise='prefix_average',
        cause='You divide every row by T; row i averages only i + 1 tokens, so divide row i by i + 1 (`np.arange(1, T + 1)[:, None]`).',
        kind='normaliser hard-coded to the full length',
        wrong_on='X=[[2], [4]]: returns [[1], [3]] instead of [[2], [3]].',
        source='''import numpy as np
import torch
import torch.nn.functional as F

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
        id='h34-04-pa-upper-triangle',
        exercise='prefix_average',
        cause='`np.triu` averages each token with the ones after it (a suffix average); the prefix average keeps the lower triangle, `np.tril`, and divides row i by i + 1.',
        kind='wrong triangle',
        wrong_on='X=[[2], [4]]: returns [[3], [4]] instead of [[2], [3]].',
        source='''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def prefix_average(X):
    """Row i of the result is the mean of rows 0..i of X, computed as W @ X."""
    X = as_array(X, "X", min_ndim=2)
    T = X.shape[-2]
    W = np.triu(np.ones((T, T))) / (T - np.arange(T))[:, None]
    return W @ X
''',
    ),
    Wrong(
        id='h34-04-pa-T-from-features',
        exercise='prefix_average',
        cause='`X.shape[-1]` is the number of features d, not the number of tokens; W must be T×T with `T = X.shape[-2]`.',
        kind='length taken from the wrong axis',
        wrong_on='X of shape [3, 2]: builds a 2×2 W and raises instead of returning a [3, 2] array.',
        source='''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def prefix_average(X):
    """Row i of the result is the mean of rows 0..i of X, computed as W @ X."""
    X = as_array(X, "X", min_ndim=2)
    T = X.shape[-1]
    W = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]
    return W @ X
''',
    ),
    Wrong(
        id='h34-04-pa-cumsum',
        exercise='prefix_average',
        cause='You divide a running sum, `np.cumsum`, by the counts; the exercise asks for one matrix product with the lower-triangular W and forbids `np.cumsum`. The values are right, the rule is broken.',
        kind='forbidden call (np.cumsum)',
        wrong_on='Any input: the numbers are right, but the function calls np.cumsum, which the exercise forbids.',
        source='''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def prefix_average(X):
    """Row i of the result is the mean of rows 0..i of X, computed as W @ X."""
    X = as_array(X, "X", min_ndim=2)
    T = X.shape[-2]
    return np.cumsum(X, axis=-2) / np.arange(1, T + 1)[:, None]
''',
    ),
]
