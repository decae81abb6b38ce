"""Verify set f (lessons 01-04): every answer differs from an independent correct computation
on the input named in its `wrong_on` (or, for the few rule-breaking answers, breaks the rule).

Run from the repository root:  PYTHONPATH=. .venv/bin/python tests/judged/verify_set_f_01_04.py
Never calls the grader's checks.
"""
import ast
import math
import sys
import traceback
from fractions import Fraction

import numpy as np
import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from set_f_01_04 import WRONG  # noqa: E402

RAISES = object()  # expected: a ValueError


def load(src, name):
    ns = {"__name__": "learner_answer"}
    exec(compile(src, "<answer>", "exec"), ns)
    return ns[name]


def _differs(got, exp):
    """True when `got` is not the expected value `exp` (type, shape or numbers)."""
    if exp is RAISES:
        return True  # returned a value where a ValueError belongs
    if isinstance(exp, tuple):
        if not isinstance(got, tuple) or len(got) != len(exp):
            return True
        return any(_differs(g, e) for g, e in zip(got, exp))
    if isinstance(exp, dict):
        if not isinstance(got, dict) or set(got) != set(exp):
            return True
        return any(_differs(got[k], exp[k]) for k in exp)
    if isinstance(exp, torch.Tensor):
        if not isinstance(got, torch.Tensor) or got.dtype != exp.dtype or got.shape != exp.shape:
            return True
        return not torch.equal(got, exp)
    if isinstance(exp, (bool, np.bool_)):
        return not isinstance(got, (bool, np.bool_)) or bool(got) != bool(exp)
    if isinstance(exp, (float, int, np.floating, np.integer)):
        try:
            g = float(got)
        except Exception:
            return True
        if np.ndim(got) != 0:
            return True
        return not math.isclose(g, float(exp), rel_tol=1e-9, abs_tol=1e-12)
    exp = np.asarray(exp)
    if isinstance(got, torch.Tensor):
        return True  # numpy expected
    got = np.asarray(got)
    if got.shape != exp.shape:
        return True
    if exp.dtype == bool:
        return got.dtype != bool or not np.array_equal(got, exp)
    if exp.dtype == object:  # exact Fractions
        for g, e in zip(got.flat, exp.flat):
            if not isinstance(g, Fraction) or g != e:
                return True
        return False
    if got.dtype == object or got.dtype == bool or not np.issubdtype(got.dtype, np.number):
        return True
    return not np.allclose(got.astype(float), exp.astype(float), rtol=1e-9, atol=1e-12,
                           equal_nan=True)


def differs(call, exp):
    """Run `call()`; True (with a note) when its result or behaviour differs from `exp`."""
    try:
        with np.errstate(all="ignore"):
            got = call()
    except ValueError as e:
        if exp is RAISES:
            return False, "raised ValueError as expected"
        return True, f"raised ValueError: {e}"[:100]
    except Exception as e:  # any other error where a value (or ValueError) belongs
        return True, f"raised {type(e).__name__}: {e}"[:100]
    if exp is RAISES:
        return True, "returned a value instead of raising ValueError"
    d = _differs(got, exp)
    return d, ("differs" if d else "SAME as expected")


def uses(src, func_name, names):
    """True if the function `func_name` in `src` uses one of `names` (call, attribute or @)."""
    tree = ast.parse(src)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == func_name:
            for sub in ast.walk(node):
                if isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.MatMult) and "@" in names:
                    return True
                if isinstance(sub, ast.Attribute) and sub.attr in names:
                    return True
                if isinstance(sub, ast.Name) and sub.id in names:
                    return True
    return False


# ============================================================== independent references
def r_matmul(A, B):
    A, B = np.asarray(A, float), np.asarray(B, float)
    n, k = A.shape
    m = B.shape[1]
    C = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            for p in range(k):
                C[i, j] += A[i, p] * B[p, j]
    return C


def r_batched(A, B):
    return np.matmul(np.asarray(A, float), np.asarray(B, float))


def r_scores_qk(Q, K):
    Q, K = np.asarray(Q, float), np.asarray(K, float)
    return np.einsum("...id,...jd->...ij", Q, K)


def r_wavg(W, V):
    W, V = np.asarray(W, float), np.asarray(V, float)
    if not np.all(np.isfinite(W)) or np.any(W < 0) or np.any(np.abs(W.sum(-1) - 1) > 1e-6):
        return RAISES
    return np.matmul(W, V)


T01 = {}
T01["f-01-dot-sum-range-rows-of-A"] = lambda f: differs(
    lambda: f(np.arange(6.).reshape(2, 3) + 1, np.arange(6.).reshape(3, 2) + 1),
    r_matmul(np.arange(6.).reshape(2, 3) + 1, np.arange(6.).reshape(3, 2) + 1))
T01["f-01-dot-int-result-array"] = lambda f: differs(lambda: f([[0.5]], [[1.0]]), r_matmul([[0.5]], [[1.0]]))
T01["f-01-dot-row-of-B"] = lambda f: differs(lambda: f([[1, 2], [3, 4]], [[0, 1], [0, 0]]),
                                             r_matmul([[1, 2], [3, 4]], [[0, 1], [0, 0]]))
T01["f-01-dot-total-not-reset"] = lambda f: differs(lambda: f([[1, 0]], [[1, 1], [0, 0]]),
                                                    r_matmul([[1, 0]], [[1, 1], [0, 0]]))
T01["f-01-rows-assign-not-add"] = lambda f: differs(lambda: f([[1, 1]], np.eye(2)), r_matmul([[1, 1]], np.eye(2)))
T01["f-01-rows-weight-index-swapped"] = lambda f: differs(lambda: f([[1, 2], [0, 0]], np.eye(2)),
                                                          r_matmul([[1, 2], [0, 0]], np.eye(2)))
T01["f-01-rows-uses-matmul-operator"] = "rule:matmul_rows:@,matmul,dot,einsum,inner,tensordot,vdot"
T01["f-01-cols-row-of-A"] = lambda f: differs(lambda: f([[1, 2], [3, 4]], np.eye(2)), r_matmul([[1, 2], [3, 4]], np.eye(2)))
T01["f-01-cols-weight-B-transposed"] = lambda f: differs(lambda: f(np.eye(2), [[1, 2], [3, 4]]),
                                                         r_matmul(np.eye(2), [[1, 2], [3, 4]]))
T01["f-01-cols-zeros-like-A"] = lambda f: differs(lambda: f(np.ones((2, 3)), np.ones((3, 2))),
                                                  r_matmul(np.ones((2, 3)), np.ones((3, 2))))
T01["f-01-outer-row-and-column-swapped"] = lambda f: differs(lambda: f([[1, 2], [0, 0]], np.eye(2)),
                                                             r_matmul([[1, 2], [0, 0]], np.eye(2)))
T01["f-01-outer-return-in-loop"] = lambda f: differs(lambda: f([[1, 1]], [[1], [1]]), r_matmul([[1, 1]], [[1], [1]]))
T01["f-01-outer-range-starts-at-1"] = lambda f: differs(lambda: f([[1, 1]], [[1], [1]]), r_matmul([[1, 1]], [[1], [1]]))
_bA = np.arange(8.).reshape(2, 2, 2)
T01["f-01-batched-np-dot"] = lambda f: differs(lambda: f(_bA, _bA + 1), r_batched(_bA, _bA + 1))
T01["f-01-batched-sum-wrong-axis"] = lambda f: differs(lambda: f([[1, 2]], [[1, 1], [0, 1]]),
                                                       r_batched([[1, 2]], [[1, 1], [0, 1]]))
T01["f-01-batched-einsum-one-batch-axis"] = lambda f: differs(lambda: f(np.ones((2, 3)), np.ones((3, 2))),
                                                              r_batched(np.ones((2, 3)), np.ones((3, 2))))
_rq = np.random.default_rng(0)
_Q24, _K34 = _rq.normal(size=(2, 4)), _rq.normal(size=(3, 4))
_Qb, _Kb = _rq.normal(size=(2, 3, 4)), _rq.normal(size=(2, 3, 4))
T01["f-01-einsum-output-kq"] = lambda f: differs(lambda: f(_Q24, _K34), r_scores_qk(_Q24, _K34))
T01["f-01-einsum-no-ellipsis"] = lambda f: differs(lambda: f(_Qb, _Kb), r_scores_qk(_Qb, _Kb))
T01["f-01-einsum-K-as-dk"] = lambda f: differs(lambda: f([[1, 2], [3, 4]], [[1, 2], [3, 4]]),
                                               r_scores_qk([[1, 2], [3, 4]], [[1, 2], [3, 4]]))
T01["f-01-wavg-nan-slips-through"] = lambda f: differs(lambda: f([[0.5, 0.5, np.nan]], np.ones((3, 1))),
                                                       r_wavg([[0.5, 0.5, np.nan]], np.ones((3, 1))))
T01["f-01-wavg-sums-down-columns"] = lambda f: differs(lambda: f([[1, 0], [1, 0]], [[1], [2]]),
                                                       r_wavg([[1, 0], [1, 0]], [[1], [2]]))
T01["f-01-wavg-divides-by-m"] = lambda f: differs(lambda: f([[0.5, 0.5]], [[2], [4]]), r_wavg([[0.5, 0.5]], [[2], [4]]))
T01["f-01-wavg-negative-not-checked"] = lambda f: differs(lambda: f([[1.5, -0.5]], [[0], [1]]),
                                                          r_wavg([[1.5, -0.5]], [[0], [1]]))
T01["f-01-wavg-allclose-tolerance"] = lambda f: differs(lambda: f([[0.5, 0.500005]], [[1], [1]]),
                                                        r_wavg([[0.5, 0.500005]], [[1], [1]]))

TESTS = {}
TESTS.update(T01)

# ============================================================== correct answers (sanity)
# Each test above must NOT flag these: they are correct answers written independently, so
# a test that flags them would be testing the wrong thing.
CORRECT = {}
_H01 = "import numpy as np\nfrom grader.learner.validation import matmul_operands, as_array\n"
CORRECT["matmul_dot"] = _H01 + '''
def matmul_dot(A, B):
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]))
    for i in range(A.shape[0]):
        for j in range(B.shape[1]):
            C[i, j] = np.sum(A[i, :] * B[:, j])
    return C
'''
CORRECT["matmul_rows"] = _H01 + '''
def matmul_rows(A, B):
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]))
    for i in range(A.shape[0]):
        for p in range(A.shape[1]):
            C[i] += A[i, p] * B[p]
    return C
'''
CORRECT["matmul_cols"] = _H01 + '''
def matmul_cols(A, B):
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]))
    for j in range(B.shape[1]):
        for p in range(A.shape[1]):
            C[:, j] += B[p, j] * A[:, p]
    return C
'''
CORRECT["matmul_outer"] = _H01 + '''
def matmul_outer(A, B):
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]))
    for p in range(A.shape[1]):
        C += np.outer(A[:, p], B[p])
    return C
'''
CORRECT["batched_matmul"] = _H01 + '''
def batched_matmul(A, B):
    A = as_array(A, "A", min_ndim=2)
    B = as_array(B, "B", min_ndim=2)
    return A @ B
'''
CORRECT["einsum_scores"] = _H01 + '''
def einsum_scores(Q, K):
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    return np.einsum("...qd,...kd->...qk", Q, K)
'''
CORRECT["weighted_average_rows"] = _H01 + '''
def weighted_average_rows(W, V):
    W = as_array(W, "W", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if not np.all(np.isfinite(W)):
        raise ValueError("non-finite weight")
    if np.any(W < 0):
        raise ValueError("negative weight")
    if not np.all(np.abs(W.sum(axis=-1) - 1) <= 1e-6):
        raise ValueError("a row does not sum to 1")
    return W @ V
'''

# ============================================================== lesson 02 tests
def r_softmax(x, axis=-1):
    x = np.asarray(x, float)
    z = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=axis, keepdims=True)


def r_scores(Q, K):
    Q, K = np.asarray(Q, float), np.asarray(K, float)
    return np.einsum("...id,...jd->...ij", Q, K) / math.sqrt(Q.shape[-1])


def r_sdpa(Q, K, V):
    w = r_softmax(r_scores(Q, K), -1)
    return np.einsum("...ij,...jd->...id", w, np.asarray(V, float)), w


def r_one(q, K, V):
    return r_sdpa(np.asarray(q, float)[None], K, V)[0][0]


def r_self(X, Wq, Wk, Wv):
    X = np.asarray(X, float)
    return r_sdpa(X @ np.asarray(Wq, float), X @ np.asarray(Wk, float), X @ np.asarray(Wv, float))


def r_var_both(d_k, n, seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n, d_k))
    k = rng.standard_normal((n, d_k))
    dots = np.array([float(np.dot(q[i], k[i])) for i in range(n)])
    return float(np.var(dots)), float(np.var(dots, ddof=1))


def var_test(d_k, n, seed):
    """The notebook says 'sample variance' without saying ddof: a wrong answer must differ
    from both the ddof=0 and the ddof=1 variance."""
    def t(f):
        a, b = r_var_both(d_k, n, seed)
        d1, note = differs(lambda: f(d_k, n, seed), a)
        d2, _ = differs(lambda: f(d_k, n, seed), b)
        return d1 and d2, note
    return t


T02 = {}
T02["f-02-softmax-no-max-shift"] = lambda f: differs(lambda: f([1000.0, 999.0]), r_softmax([1000.0, 999.0]))
T02["f-02-softmax-sum-no-keepdims"] = lambda f: differs(lambda: f([[0, 1], [0, 0]], axis=-1), r_softmax([[0, 1], [0, 0]], -1))
T02["f-02-softmax-global-max"] = lambda f: differs(lambda: f([[0, 1], [-1000, -999]], axis=-1),
                                                   r_softmax([[0, 1], [-1000, -999]], -1))
T02["f-02-softmax-axis-ignored"] = lambda f: differs(lambda: f([[0, 1], [2, 3]], axis=0), r_softmax([[0, 1], [2, 3]], 0))
T02["f-02-softmax-subtract-min"] = lambda f: differs(lambda: f([0.0, 1000.0]), r_softmax([0.0, 1000.0]))
T02["f-02-softmax-exponent-sign"] = lambda f: differs(lambda: f([0.0, 1.0]), r_softmax([0.0, 1.0]))
_Qb3, _Kb3 = np.random.default_rng(5).normal(size=(2, 3, 4)), np.random.default_rng(6).normal(size=(2, 3, 4))
T02["f-02-scores-full-transpose"] = lambda f: differs(lambda: f(_Qb3, _Kb3), r_scores(_Qb3, _Kb3))
T02["f-02-scores-scale-by-tokens"] = lambda f: differs(lambda: f(_Q24, _K34), r_scores(_Q24, _K34))
T02["f-02-scores-no-sqrt"] = lambda f: differs(lambda: f([[1, 1, 1, 1]], [[1, 1, 1, 1]]), r_scores([[1, 1, 1, 1]], [[1, 1, 1, 1]]))
T02["f-02-scores-times-sqrt"] = lambda f: differs(lambda: f([[1, 1, 1, 1]], [[1, 1, 1, 1]]), r_scores([[1, 1, 1, 1]], [[1, 1, 1, 1]]))
T02["f-02-scores-K-times-Q"] = lambda f: differs(lambda: f(_Q24, _K34), r_scores(_Q24, _K34))
T02["f-02-var-returns-std"] = var_test(16, 4000, 0)
T02["f-02-var-dot-over-samples"] = var_test(1, 100, 0)
T02["f-02-var-products-not-summed"] = var_test(16, 4000, 0)
T02["f-02-var-mean-square"] = var_test(4, 10, 1)
T02["f-02-var-all-pairs"] = var_test(4, 50, 0)
_sq = ([[1, 0], [0, 1]], [[1, 0], [0, 0]], np.eye(2))
T02["f-02-sdpa-softmax-query-axis"] = lambda f: differs(lambda: f(*_sq), r_sdpa(*_sq))
_sw = (np.ones((2, 3)), np.arange(6.).reshape(2, 3), np.arange(10.).reshape(2, 5))
T02["f-02-sdpa-returns-swapped"] = lambda f: differs(lambda: f(*_sw), r_sdpa(*_sw))
T02["f-02-sdpa-weights-transposed"] = lambda f: differs(lambda: f(*_sq), r_sdpa(*_sq))
T02["f-02-sdpa-returns-scores"] = lambda f: differs(lambda: f([[1, 0]], [[1, 0]], [[1]]), r_sdpa([[1, 0]], [[1, 0]], [[1]]))
_us = ([[1, 0, 0, 0]], [[2, 0, 0, 0], [0, 0, 0, 0]], np.eye(2))
T02["f-02-sdpa-unscaled-scores"] = lambda f: differs(lambda: f(*_us), r_sdpa(*_us))
T02["f-02-one-no-max-shift"] = lambda f: differs(lambda: f([2000.0], [[1.0], [0.9]], [[1.0], [0.0]]),
                                                 r_one([2000.0], [[1.0], [0.9]], [[1.0], [0.0]]))
_o4 = ([1, 1, 1, 1], [[1, 1, 1, 1], [0, 0, 0, 0]], [[1], [0]])
T02["f-02-one-no-scale"] = lambda f: differs(lambda: f(*_o4), r_one(*_o4))
T02["f-02-one-normalise-inside-loop"] = lambda f: differs(lambda: f([0.0], [[0.0], [0.0], [0.0]], [[1.0], [3.0], [5.0]]),
                                                          r_one([0.0], [[0.0], [0.0], [0.0]], [[1.0], [3.0], [5.0]]))
T02["f-02-one-scale-by-keys"] = lambda f: differs(lambda: f(*_o4), r_one(*_o4))
T02["f-02-one-total-unshifted"] = lambda f: differs(lambda: f([2.0], [[1.0], [0.0]], [[1.0], [1.0]]),
                                                    r_one([2.0], [[1.0], [0.0]], [[1.0], [1.0]]))
_s1 = (np.eye(2), np.eye(2), [[0, 1], [1, 0]], np.eye(2))
T02["f-02-self-K-from-W_q"] = lambda f: differs(lambda: f(*_s1), r_self(*_s1))
_s2 = (np.eye(2), np.eye(2), np.eye(2), [[2.0], [0.0]])
T02["f-02-self-V-not-projected"] = lambda f: differs(lambda: f(*_s2), r_self(*_s2))
_X34 = np.random.default_rng(7).normal(size=(3, 4))
_W41 = [np.random.default_rng(s).normal(size=(4, 1)) for s in (8, 9, 10)]
T02["f-02-self-scale-d-model"] = lambda f: differs(lambda: f(_X34, *_W41), r_self(_X34, *_W41))
_s4 = ([[1, 2], [3, 4]], [[1, 1], [0, 0]], [[1, 1], [0, 0]], np.eye(2))
T02["f-02-self-weights-transposed"] = lambda f: differs(lambda: f(*_s4), r_self(*_s4))
_s5 = (np.eye(2), np.eye(2), np.eye(2), np.eye(2))
T02["f-02-self-returns-output-only"] = lambda f: differs(lambda: f(*_s5), r_self(*_s5))
TESTS.update(T02)

_H02 = "import numpy as np\nfrom grader.learner.validation import as_array\n"
_SM = '''
def softmax(x, axis=-1):
    x = as_array(x, "x", min_ndim=1)
    z = x - np.max(x, axis=axis, keepdims=True)
    return np.exp(z) / np.sum(np.exp(z), axis=axis, keepdims=True)
'''
_SC = '''
def attention_scores(Q, K):
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    return np.matmul(Q, np.swapaxes(K, -1, -2)) / np.sqrt(Q.shape[-1])
'''
_SDPA = '''
def scaled_dot_product_attention(Q, K, V):
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    w = softmax(attention_scores(Q, K), axis=-1)
    return w @ V, w
'''
CORRECT["softmax"] = _H02 + _SM
CORRECT["attention_scores"] = _H02 + _SC
CORRECT["score_variance"] = _H02 + '''
def score_variance(d_k, n_samples, seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, d_k))
    k = rng.standard_normal((n_samples, d_k))
    return np.var(np.sum(q * k, axis=1))
'''
CORRECT["scaled_dot_product_attention"] = _H02 + _SM + _SC + _SDPA
CORRECT["attend_one_query"] = _H02 + '''
def attend_one_query(q, K, V):
    q = as_array(q, "q", ndim=1)
    K = as_array(K, "K", ndim=2)
    V = as_array(V, "V", ndim=2)
    s = [float(np.sum(q * K[i])) / np.sqrt(len(q)) for i in range(len(K))]
    m = max(s)
    e = [np.exp(x - m) for x in s]
    out = np.zeros(V.shape[1])
    for i in range(len(K)):
        out += e[i] / sum(e) * V[i]
    return out
'''
CORRECT["self_attention"] = _H02 + _SM + _SC + _SDPA + '''
def self_attention(X, W_q, W_k, W_v):
    X = as_array(X, "X", min_ndim=2)
    return scaled_dot_product_attention(X @ np.asarray(W_q, float), X @ np.asarray(W_k, float),
                                        X @ np.asarray(W_v, float))
'''

# ============================================================== lesson 03 tests
from courseware.worksheet import X as WS_X, W_Q as WS_WQ, W_K as WS_WK, W_V as WS_WV  # noqa: E402


def fr(M):
    return np.array([[Fraction(v) for v in row] for row in np.asarray(M, dtype=object)], dtype=object)


def fr_matmul(A, B):
    A, B = fr(A), fr(B)
    out = np.empty((A.shape[0], B.shape[1]), dtype=object)
    for i in range(A.shape[0]):
        for j in range(B.shape[1]):
            out[i, j] = sum((A[i, p] * B[p, j] for p in range(A.shape[1])), Fraction(0))
    return out


def r_kq(K, Q):
    return fr_matmul(fr(K).T, Q)


def r_floor(S):
    return np.array([[Fraction(math.floor(Fraction(s) / 2)) for s in row] for row in fr(S)], dtype=object)


def r_sm3(S):
    S = fr(S)
    P = np.array([[Fraction(3) ** int(s) for s in row] for row in S], dtype=object)
    out = np.empty(P.shape, dtype=object)
    for j in range(P.shape[1]):
        tot = sum(P[:, j], Fraction(0))
        for i in range(P.shape[0]):
            out[i, j] = P[i, j] / tot
    return out


def r_abh(X, WQ, WK, WV):
    Q, K, V = fr_matmul(WQ, X), fr_matmul(WK, X), fr_matmul(WV, X)
    scores = r_kq(K, Q)
    scaled = r_floor(scores)
    A = r_sm3(scaled)
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": fr_matmul(V, A)}


def r_row(X_rows, WQ, WK, WV):
    cols = r_abh(fr(X_rows).T, WQ, WK, WV)
    return {k: np.ascontiguousarray(v.T) for k, v in cols.items()}


def parse_typed(text):
    rows = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            rows.append([Fraction(tok) for tok in line.split()])
    if len({len(r) for r in rows}) != 1:
        return np.array([None])
    return np.array(rows, dtype=object)


def ws_test(step):
    def t(worksheet):
        exp = r_abh(WS_X, WS_WQ, WS_WK, WS_WV)[step]
        return differs(lambda: parse_typed(worksheet[step]), exp)
    return t


T03 = {}
for _step, _id in [("Q", "f-03-ws-Q-typed-as-rows"), ("K", "f-03-ws-K-minus-one-as-plus"),
                   ("V", "f-03-ws-V-last-feature-dropped"), ("scores", "f-03-ws-scores-QtK"),
                   ("scaled", "f-03-ws-scaled-rounds-toward-zero"), ("A", "f-03-ws-A-rows-normalised"),
                   ("Z", "f-03-ws-Z-rows-of-A")]:
    T03[_id] = ws_test(_step)
T03["f-03-kq-QtK"] = lambda f: differs(lambda: f([[1, 0, 0]], [[2, 3]]), r_kq([[1, 0, 0]], [[2, 3]]))
T03["f-03-kq-floats"] = lambda f: differs(lambda: f([[Fraction(1, 3)]], [[1]]), r_kq([[Fraction(1, 3)]], [[1]]))
T03["f-03-kq-sum-over-tokens"] = lambda f: differs(lambda: f(np.ones((3, 2), int), np.ones((3, 2), int)),
                                                   r_kq(np.ones((3, 2), int), np.ones((3, 2), int)))
T03["f-03-floor-int-truncates"] = lambda f: differs(lambda: f([[-1]]), r_floor([[-1]]))
T03["f-03-floor-round"] = lambda f: differs(lambda: f([[3]]), r_floor([[3]]))
T03["f-03-floor-before-halving"] = lambda f: differs(lambda: f([[3]]), r_floor([[3]]))
T03["f-03-sm3-int-powers-give-floats"] = lambda f: differs(lambda: f([[0], [2]]), r_sm3([[0], [2]]))
T03["f-03-sm3-normalise-rows"] = lambda f: differs(lambda: f([[0, 1], [0, 0]]), r_sm3([[0, 1], [0, 0]]))
T03["f-03-sm3-total-sum"] = lambda f: differs(lambda: f([[0, 0], [0, 0]]), r_sm3([[0, 0], [0, 0]]))
T03["f-03-sm3-base-and-exponent-swapped"] = lambda f: differs(lambda: f([[0], [1]]), r_sm3([[0], [1]]))
_WS = (WS_X, WS_WQ, WS_WK, WS_WV)
_WSR = (WS_X.T, WS_WQ, WS_WK, WS_WV)
for _id in ["f-03-abh-scores-args-swapped", "f-03-abh-softmax-of-unscaled", "f-03-abh-K-from-W_Q",
            "f-03-abh-Z-uses-A-transposed"]:
    T03[_id] = lambda f: differs(lambda: f(*_WS), r_abh(*_WS))
for _id in ["f-03-rows-softmax-down-columns", "f-03-rows-scores-KQt", "f-03-rows-V-with-W_Q",
            "f-03-rows-Z-column-layout"]:
    T03[_id] = lambda f: differs(lambda: f(*_WSR), r_row(*_WSR))
TESTS.update(T03)

_H03 = ("import math\nfrom fractions import Fraction\nimport numpy as np\n"
        "from grader.learner.validation import as_fractions\n")
_KQ = '''
def key_query_scores(K, Q):
    K = as_fractions(K, "K")
    Q = as_fractions(Q, "Q")
    return K.T @ Q
'''
_FH = '''
def floor_half(S):
    S = as_fractions(S, "S")
    return np.array([[Fraction(s.numerator // (2 * s.denominator)) for s in row] for row in S], dtype=object)
'''
_S3 = '''
def softmax3_columns(S):
    S = as_fractions(S, "S", whole=True)
    P = np.array([[Fraction(3) ** int(s) for s in row] for row in S], dtype=object)
    return P / P.sum(axis=0)
'''
CORRECT["key_query_scores"] = _H03 + _KQ
CORRECT["floor_half"] = _H03 + _FH
CORRECT["softmax3_columns"] = _H03 + _S3
CORRECT["attention_by_hand"] = _H03 + _KQ + _FH + _S3 + '''
def attention_by_hand(X, W_Q, W_K, W_V):
    X = as_fractions(X, "X")
    W_Q, W_K, W_V = as_fractions(W_Q, "W_Q"), as_fractions(W_K, "W_K"), as_fractions(W_V, "W_V")
    Q, K, V = W_Q @ X, W_K @ X, W_V @ X
    S = key_query_scores(K, Q)
    s2 = floor_half(S)
    A = softmax3_columns(s2)
    return dict(Q=Q, K=K, V=V, scores=S, scaled=s2, A=A, Z=V @ A)
'''
CORRECT["row_convention_attention"] = CORRECT["attention_by_hand"] + '''
def row_convention_attention(X_rows, W_Q, W_K, W_V):
    X_rows = as_fractions(X_rows, "X_rows")
    return {k: v.T for k, v in attention_by_hand(X_rows.T, W_Q, W_K, W_V).items()}
'''
_ws_right = {"Q": "2 1 1 1\n1 1 0 1\n1 0 2 1", "K": "1 2 0 0\n0 1 -1 1\n1 1 1 0",
             "V": "1 0 2 1\n1 0 1 2\n0 0 1 1", "scores": "3 1 3 2\n6 3 4 4\n0 -1 2 0\n1 1 0 1",
             "scaled": "1 0 1 1\n3 1 2 2\n0 -1 1 0\n0 0 0 0",
             "A": "3/32 3/16 3/16 3/14\n27/32 9/16 9/16 9/14\n1/32 1/16 3/16 1/14\n1/32 3/16 1/16 1/14",
             "Z": "3/16 1/2 5/8 3/7\n3/16 5/8 1/2 3/7\n1/16 1/4 1/4 1/7"}
for _step in _ws_right:
    CORRECT["worksheet_" + _step] = "WORKSHEET = {}\n" + "".join(
        f'WORKSHEET["{k}"] = """\n{v}  # my row\n"""\n' for k, v in _ws_right.items())

# ============================================================== lesson 04 tests
def r_causal(T):
    return np.array([[j <= i for j in range(T)] for i in range(T)], dtype=bool)


def r_pad(lengths, T):
    return np.array([[t < L for t in range(T)] for L in lengths], dtype=bool)


def r_am(lengths, T, causal=True):
    m = np.zeros((len(lengths), T, T), dtype=bool)
    for b, L in enumerate(lengths):
        for i in range(T):
            for j in range(T):
                m[b, i, j] = (j < L) and (j <= i or not causal)
    return m


def r_msoftmax(scores, mask):
    scores = np.asarray(scores, float)
    mask = np.broadcast_to(np.asarray(mask, bool), scores.shape)
    out = np.zeros(scores.shape)
    for idx in np.ndindex(scores.shape[:-1]):
        allowed = mask[idx]
        if allowed.any():
            s = scores[idx][allowed]
            e = np.exp(s - s.max())
            out[idx][allowed] = e / e.sum()
    return out


def r_mattn(Q, K, V, mask=None):
    Q, K, V = np.asarray(Q, float), np.asarray(K, float), np.asarray(V, float)
    s = np.einsum("...id,...jd->...ij", Q, K) / math.sqrt(Q.shape[-1])
    w = r_msoftmax(s, np.ones(s.shape, bool) if mask is None else mask)
    return np.einsum("...ij,...jd->...id", w, V), w


def r_cmc(T):
    return np.array([[i <= j for j in range(T)] for i in range(T)], dtype=bool)


def r_mha(lengths, T):
    return torch.tensor([[t >= L for t in range(T)] for L in lengths], dtype=torch.bool)


def r_prefix(X):
    X = np.asarray(X, float)
    out = np.empty_like(X)
    for i in range(X.shape[-2]):
        out[..., i, :] = X[..., : i + 1, :].mean(axis=-2)
    return out


def causal_layer(X):
    return r_mattn(X, X, X, r_causal(len(X)))[0]


def peek_next(X):  # output t reads token t + 1
    out = X.copy()
    out[:-1] += X[1:]
    return out


def peek_1_from_2(X):  # output 1 reads token 2
    out = X.copy()
    out[1] += X[2]
    return out


def peek_0_from_1(X):  # output 0 reads token 1
    out = X.copy()
    out[0] += X[1]
    return out


def ic_test(attend, T, d, expected, seed=0):
    def t(f):
        return differs(lambda: f(attend, T, d, seed), expected)
    return t


T04 = {}
T04["f-04-causal-triu"] = lambda f: differs(lambda: f(2), r_causal(2))
T04["f-04-causal-diagonal-excluded"] = lambda f: differs(lambda: f(1), r_causal(1))
T04["f-04-causal-one-step-ahead"] = lambda f: differs(lambda: f(2), r_causal(2))
T04["f-04-causal-int-dtype"] = lambda f: differs(lambda: f(2), r_causal(2))
T04["f-04-pad-less-equal"] = lambda f: differs(lambda: f([2], 3), r_pad([2], 3))
T04["f-04-pad-transposed"] = lambda f: differs(lambda: f([3, 2], 3), r_pad([3, 2], 3))
T04["f-04-pad-no-column"] = lambda f: differs(lambda: f([3, 2], 3), r_pad([3, 2], 3))
T04["f-04-pad-inverted"] = lambda f: differs(lambda: f([2], 3), r_pad([2], 3))
T04["f-04-am-pads-query-rows"] = lambda f: differs(lambda: f([1], 2, causal=False), r_am([1], 2, False))
T04["f-04-am-or-instead-of-and"] = lambda f: differs(lambda: f([2], 2, causal=True), r_am([2], 2, True))
T04["f-04-am-not-broadcast-without-causal"] = lambda f: differs(lambda: f([2, 1], 2, causal=False), r_am([2, 1], 2, False))
T04["f-04-am-causal-flag-ignored"] = lambda f: differs(lambda: f([2], 2, causal=False), r_am([2], 2, False))
_ff = ([[1.0, 2.0]], [[False, False]])
T04["f-04-ms-fill-minus-1e9"] = lambda f: differs(lambda: f(*_ff), r_msoftmax(*_ff))
T04["f-04-ms-mask-inverted"] = lambda f: differs(lambda: f([[1.0, 2.0]], [[True, False]]), r_msoftmax([[1.0, 2.0]], [[True, False]]))
T04["f-04-ms-empty-row-nan"] = lambda f: differs(lambda: f(*_ff), r_msoftmax(*_ff))
T04["f-04-ms-mask-after-softmax"] = lambda f: differs(lambda: f([[0.0, 0.0]], [[True, False]]), r_msoftmax([[0.0, 0.0]], [[True, False]]))
T04["f-04-ms-shift-by-masked-max"] = lambda f: differs(lambda: f([[0.0, 1.0, 900.0]], [[True, True, False]]),
                                                       r_msoftmax([[0.0, 1.0, 900.0]], [[True, True, False]]))
T04["f-04-ms-torch-softmax"] = "rule:masked_softmax:softmax,log_softmax"
_m1 = (np.ones((2, 4)), np.ones((3, 4)), np.ones((3, 1)))
T04["f-04-ma-none-mask-shaped-like-Q"] = lambda f: differs(lambda: f(*_m1), r_mattn(*_m1))
_m2 = ([[1, 1, 1, 1]], [[1, 1, 1, 1], [0, 0, 0, 0]], [[1], [0]])
T04["f-04-ma-no-scale"] = lambda f: differs(lambda: f(*_m2), r_mattn(*_m2))
_m3 = ([[1, 0]], [[1, 0]], [[5]])
T04["f-04-ma-none-means-all-masked"] = lambda f: differs(lambda: f(*_m3), r_mattn(*_m3))
_m4 = (np.eye(2), np.eye(2), np.eye(2), np.array([[True, False], [True, True]]))
T04["f-04-ma-fill-zero"] = lambda f: differs(lambda: f(*_m4), r_mattn(*_m4))
T04["f-04-ic-replaces-token-t"] = ic_test(causal_layer, 3, 2, True)
T04["f-04-ic-compares-before-t-only"] = ic_test(peek_next, 4, 2, False)
T04["f-04-ic-changes-X-in-place"] = ic_test(causal_layer, 3, 2, True)
T04["f-04-ic-returns-after-first-t"] = ic_test(peek_1_from_2, 3, 2, False)
T04["f-04-ic-skips-t0"] = ic_test(peek_0_from_1, 3, 2, False)
T04["f-04-cmc-tril"] = lambda f: differs(lambda: f(2), r_cmc(2))
T04["f-04-cmc-diagonal-excluded"] = lambda f: differs(lambda: f(2), r_cmc(2))
T04["f-04-cmc-rows-reversed"] = lambda f: differs(lambda: f(2), r_cmc(2))
T04["f-04-mha-numpy-array"] = lambda f: differs(lambda: f([3, 2], 3), r_mha([3, 2], 3))
T04["f-04-mha-not-inverted"] = lambda f: differs(lambda: f([3, 2], 3), r_mha([3, 2], 3))
T04["f-04-mha-strict-greater"] = lambda f: differs(lambda: f([3, 2], 3), r_mha([3, 2], 3))
T04["f-04-mha-float-mask"] = lambda f: differs(lambda: f([3, 2], 3), r_mha([3, 2], 3))
T04["f-04-prefix-divide-columns"] = lambda f: differs(lambda: f([[2.0], [4.0]]), r_prefix([[2.0], [4.0]]))
T04["f-04-prefix-count-from-zero"] = lambda f: differs(lambda: f([[2.0], [4.0]]), r_prefix([[2.0], [4.0]]))
_X231 = np.arange(6.).reshape(2, 3, 1)
T04["f-04-prefix-T-from-first-axis"] = lambda f: differs(lambda: f(_X231), r_prefix(_X231))
T04["f-04-prefix-upper-triangle"] = lambda f: differs(lambda: f([[2.0], [4.0]]), r_prefix([[2.0], [4.0]]))
T04["f-04-prefix-X-times-W"] = lambda f: differs(lambda: f([[1.0, 3.0], [5.0, 7.0]]), r_prefix([[1.0, 3.0], [5.0, 7.0]]))
T04["f-04-prefix-cumsum"] = "rule:prefix_average:cumsum"
TESTS.update(T04)

_H04 = ("import numpy as np\nimport torch\n"
        "from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int\n")
_CM = '''
def causal_mask(T):
    T = positive_int(T, "T")
    return np.arange(T)[None, :] <= np.arange(T)[:, None]
'''
_PM = '''
def padding_mask(lengths, T):
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return np.arange(T) < lengths[:, None]
'''
_MS = '''
def masked_softmax(scores, mask):
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    s = np.where(mask, scores, -np.inf)
    m = np.max(s, axis=-1, keepdims=True)
    m[~np.isfinite(m)] = 0.0
    e = np.exp(s - m)
    tot = e.sum(axis=-1, keepdims=True)
    tot[tot == 0] = 1.0
    return e / tot
'''
CORRECT["causal_mask"] = _H04 + _CM
CORRECT["padding_mask"] = _H04 + _PM
CORRECT["attention_mask"] = _H04 + _CM + _PM + '''
def attention_mask(lengths, T, causal=True):
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    m = padding_mask(lengths, T)[:, None, :] & np.ones((T, T), dtype=bool)
    if causal:
        m = m & causal_mask(T)
    return m
'''
CORRECT["masked_softmax"] = _H04 + _MS
CORRECT["masked_attention"] = _H04 + _MS + '''
def masked_attention(Q, K, V, mask=None):
    Q, K, V = as_array(Q, "Q", min_ndim=2), as_array(K, "K", min_ndim=2), as_array(V, "V", min_ndim=2)
    s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is None:
        mask = np.ones(s.shape, dtype=bool)
    w = masked_softmax(s, mask)
    return w @ V, w
'''
CORRECT["is_causal"] = _H04 + '''
def is_causal(attend, T, d, seed=0):
    T, d = positive_int(T, "T"), positive_int(d, "d")
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((T, d))
    before = attend(X)
    for t in range(T):
        Y = X.copy()
        Y[t + 1:] = rng.standard_normal((T - t - 1, d))
        if not np.allclose(attend(Y)[:t + 1], before[:t + 1]):
            return False
    return True
'''
CORRECT["causal_mask_columns"] = _H04 + '''
def causal_mask_columns(T):
    T = positive_int(T, "T")
    return np.triu(np.ones((T, T), dtype=bool))
'''
CORRECT["to_mha_key_padding_mask"] = _H04 + '''
def to_mha_key_padding_mask(lengths, T):
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return torch.from_numpy(np.arange(T)[None, :] >= lengths[:, None])
'''
CORRECT["prefix_average"] = _H04 + '''
def prefix_average(X):
    X = as_array(X, "X", min_ndim=2)
    T = X.shape[-2]
    W = np.tril(np.ones((T, T)))
    return (W / W.sum(axis=1, keepdims=True)) @ X
'''

# ==== RUN
def main():
    n_ok = n_fail = 0
    ids = [w.id for w in WRONG]
    dup = {i for i in ids if ids.count(i) > 1}
    for w in WRONG:
        name = "WORKSHEET" if w.exercise.startswith("worksheet_") else w.exercise
        test = TESTS.get(w.id)
        try:
            if test is None:
                ok, note = False, "no test written"
            elif isinstance(test, str):  # rule:func:names
                _, func, names = test.split(":")
                load(w.source, name)
                ok = uses(w.source, func, set(names.split(",")))
                note = "breaks the stated rule (values may be right)" if ok else "rule NOT broken"
            else:
                d, note = test(load(w.source, name))
                dc, notec = test(load(CORRECT[w.exercise], name))
                ok = d and not dc
                if dc:
                    note += f" | but the correct answer is flagged too: {notec}"
        except Exception as e:
            ok, note = False, f"verifier error {type(e).__name__}: {e}"
            traceback.print_exc()
        if w.id in dup:
            ok, note = False, "duplicate id"
        print(f"{'ok  ' if ok else 'FAIL'} {w.id:48s} {w.exercise:28s} {note}")
        n_ok += ok
        n_fail += not ok
    print(f"\n{n_ok} ok, {n_fail} FAIL, {len(WRONG)} answers")
    return n_fail


if __name__ == "__main__":
    sys.exit(1 if main() else 0)
