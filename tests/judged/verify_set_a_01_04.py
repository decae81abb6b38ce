"""Check every wrong answer of set_a_01_04.py against an independent computation.

Run from a scratch folder with PYTHONPATH=/work/main (so courseware and grader.learner.validation
import). For each answer: its source runs alone in a fresh namespace and defines the exercise's
name; its test shows it wrong on the input named in `wrong_on` (or, for a rule answer, that it uses
the forbidden call); the same test applied to a correct answer cell (the control) does NOT flag it;
and any helper it includes as correct passes its own check. Prints one line per answer.
"""
import ast
import copy
import importlib.util
import math
import numbers
import os
import sys
import warnings
from fractions import Fraction

import numpy as np
import torch

warnings.filterwarnings("ignore")
np.seterr(all="ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
if "/work/main" not in sys.path:
    sys.path.insert(0, "/work/main")

_spec = importlib.util.spec_from_file_location("wrong_01_04", os.path.join(HERE, "set_a_01_04.py"))
_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mod)
WRONG = _mod.WRONG


# ----------------------------------------------------------------------------- comparison
def same(a, b):
    """Is the answer's result `a` the expected result `b` (value and kind)?"""
    if isinstance(b, tuple):
        return isinstance(a, (tuple, list)) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(b, dict):
        return isinstance(a, dict) and set(a) == set(b) and all(same(a[k], b[k]) for k in b)
    if isinstance(b, torch.Tensor):
        return (isinstance(a, torch.Tensor) and a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
                and bool((a == b).all()))
    if isinstance(b, (bool, np.bool_)):
        return isinstance(a, (bool, np.bool_)) and bool(a) == bool(b)
    if isinstance(b, (float, np.floating)):
        return (isinstance(a, (float, np.floating, int)) and not isinstance(a, bool)
                and bool(np.isclose(a, b, rtol=1e-9, atol=0)))
    b = np.asarray(b)
    if not isinstance(a, np.ndarray) or a.shape != b.shape:
        return False
    if b.dtype == object:  # exact Fractions expected
        return all(isinstance(x, numbers.Rational) and x == y for x, y in zip(a.flat, b.flat))
    if b.dtype == bool:
        return a.dtype == bool and np.array_equal(a, b)
    return np.issubdtype(a.dtype, np.floating) and np.allclose(a, b, rtol=1e-7, atol=1e-10, equal_nan=True)


def differs(f, ref, *args, **kw):
    """True if f disagrees with ref on these arguments: another value, another kind of result, an
    error where ref returns, or a return where ref raises ValueError (invalid input)."""
    try:
        expected, ref_exc = ref(*copy.deepcopy(args), **copy.deepcopy(kw)), None
    except ValueError as exc:
        expected, ref_exc = None, exc
    try:
        got, exc = f(*copy.deepcopy(args), **copy.deepcopy(kw)), None
    except Exception as e:  # noqa: BLE001
        got, exc = None, e
    if ref_exc is not None:
        return not isinstance(exc, ValueError)
    if exc is not None:
        return True
    return not same(got, expected)


def rule(src, func_name, names):
    """True if the function `func_name` in `src` calls one of `names` (or uses @ if '@' in names)."""
    tree = ast.parse(src)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == func_name:
            for sub in ast.walk(node):
                if "@" in names and isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.MatMult):
                    return True
                if isinstance(sub, ast.Call):
                    fn = sub.func
                    name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", None)
                    if name in names:
                        return True
    return False


# ----------------------------------------------------------------------------- inputs
def R(*shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)

SQA, SQB = np.array([[1., 2.], [3., 4.]]), np.array([[5., 6.], [7., 8.]])
NBA = np.array([[1., 2., 0.], [0., 1., 3.]])
NBB = np.array([[2., 1.], [0., 1.], [1., 0.]])
PUB_X = np.array([[1, 1, 0, 0], [1, 1, 0, 0], [1, 0, 1, 1], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])
PUB_WQ = np.array([[1, 0, 1, 0, 0, 0], [1, 0, 0, 0, 0, 1], [0, 0, 1, 0, 1, 0]])
PUB_WK = np.array([[0, 1, 0, 1, 0, 0], [0, 0, 0, 1, -1, 1], [0, 1, 0, 0, 1, 0]])
PUB_WV = np.array([[0, 0, 1, 0, 1, 0], [0, 0, 1, 0, 0, 1], [0, 0, 0, 0, 1, 1]])


# ----------------------------------------------------------------------------- references (independent)
def ref_matmul(A, B):
    A, B = np.asarray(A, float), np.asarray(B, float)
    n, k = A.shape
    m = B.shape[1]
    return np.array([[math.fsum(A[i, p] * B[p, j] for p in range(k)) for j in range(m)] for i in range(n)])

def ref_scores_plain(Q, K):
    return torch.einsum("...qd,...kd->...qk", torch.as_tensor(np.asarray(Q, float)),
                        torch.as_tensor(np.asarray(K, float))).numpy()

def ref_war(W, V):
    W, V = np.asarray(W, float), np.asarray(V, float)
    for row in W.reshape(-1, W.shape[-1]):
        if not all(math.isfinite(w) and w >= 0 for w in row) or abs(math.fsum(row) - 1) > 1e-6:
            raise ValueError("invalid weights")
    return W @ V

def ref_softmax(x, axis=-1):
    return torch.softmax(torch.as_tensor(np.asarray(x, float)), dim=axis).numpy()

def ref_scores(Q, K):
    Q, K = np.asarray(Q, float), np.asarray(K, float)
    return ref_scores_plain(Q, K) / math.sqrt(Q.shape[-1])

def differs_var(f, d_k, n, seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n, d_k))
    k = rng.standard_normal((n, d_k))
    s = np.array([math.fsum(q[i] * k[i]) for i in range(n)])
    refs = [s.var(), s.var(ddof=1)]          # either reading of "sample variance"
    try:
        got = f(d_k, n, seed)
    except Exception:  # noqa: BLE001
        return True
    return not any(same(got, float(r)) for r in refs)

def ref_sdpa(Q, K, V):
    Q, K, V = (torch.as_tensor(np.asarray(a, float)) for a in (Q, K, V))
    w = torch.softmax(Q @ K.transpose(-1, -2) / math.sqrt(Q.shape[-1]), dim=-1)
    return (w @ V).numpy(), w.numpy()

def ref_one(q, K, V):
    out, _ = ref_sdpa(np.asarray(q, float)[None, :], K, V)
    return out[0]

def ref_self(X, W_q, W_k, W_v):
    X = np.asarray(X, float)
    return ref_sdpa(X @ W_q, X @ W_k, X @ W_v)

def fr(M):
    return np.array([[Fraction(v) for v in row] for row in np.asarray(M, dtype=object)], dtype=object)

def ref_kqs(K, Q):
    K, Q = fr(K), fr(Q)
    return np.array([[sum((K[p, i] * Q[p, j] for p in range(K.shape[0])), Fraction(0))
                      for j in range(Q.shape[1])] for i in range(K.shape[1])], dtype=object)

def ref_floor(S):
    return np.array([[Fraction(s.numerator // (2 * s.denominator)) for s in row] for row in fr(S)], dtype=object)

def ref_sm3(S):
    S = fr(S)
    P = np.array([[Fraction(3 ** int(s)) if s >= 0 else Fraction(1, 3 ** int(-s)) for s in row] for row in S],
                 dtype=object)
    sums = [sum(P[:, j]) for j in range(P.shape[1])]
    return np.array([[P[i, j] / sums[j] for j in range(P.shape[1])] for i in range(P.shape[0])], dtype=object)

def ref_abh(X, W_Q, W_K, W_V):
    X, W_Q, W_K, W_V = fr(X), fr(W_Q), fr(W_K), fr(W_V)
    Q, K, V = W_Q @ X, W_K @ X, W_V @ X
    scores = ref_kqs(K, Q)
    scaled = ref_floor(scores)
    A = ref_sm3(scaled)
    Z = V @ A
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}

def ref_rows(X_rows, W_Q, W_K, W_V):
    return {k: v.T.copy() for k, v in ref_abh(np.asarray(X_rows).T, W_Q, W_K, W_V).items()}

def ref_causal(T):
    return np.array([[j <= i for j in range(T)] for i in range(T)], dtype=bool)

def ref_pad(lengths, T):
    return np.array([[j < L for j in range(T)] for L in lengths], dtype=bool)

def ref_am(lengths, T, causal=True):
    return np.array([[[j < L and (j <= i or not causal) for j in range(T)] for i in range(T)] for L in lengths],
                    dtype=bool)

def ref_ms(scores, mask):
    scores = np.asarray(scores, float)
    mask = np.broadcast_to(np.asarray(mask), scores.shape)
    out = np.zeros_like(scores)
    for idx in np.ndindex(scores.shape[:-1]):
        allowed = np.flatnonzero(mask[idx])
        if len(allowed):
            out[idx + (allowed,)] = torch.softmax(torch.as_tensor(scores[idx][allowed]), dim=0).numpy()
    return out

def ref_ma(Q, K, V, mask=None):
    Q, K, V = (np.asarray(a, float) for a in (Q, K, V))
    s = ref_scores(Q, K)
    w = ref_ms(s, np.ones(s.shape, bool) if mask is None else mask)
    return w @ V, w

def ref_cmc(T):
    return ref_causal(T).T.copy()

def ref_mha(lengths, T):
    return torch.tensor(~ref_pad(lengths, T), dtype=torch.bool)

def ref_prefix(X):
    X = np.asarray(X, float)
    return np.stack([X[..., :i + 1, :].mean(axis=-2) for i in range(X.shape[-2])], axis=-2)

# attend functions for is_causal, with a known answer
def causal_layer(X):
    return ref_ma(X, X, X, ref_causal(len(X)))[0]

def next_token(X):                       # output t is token t + 1: not causal
    return np.roll(X, -1, axis=0)

def peek_first(X):                       # output 0 is token 1, the rest is X: not causal
    out = X.copy()
    out[0] = X[1]
    return out

def differs_causal(f, attend, T, d, seed, expected):
    try:
        got = f(attend, T, d, seed)
    except Exception:  # noqa: BLE001
        return True
    return not (isinstance(got, (bool, np.bool_)) and bool(got) == expected)

# worksheet
WS_RIGHT = ref_abh(PUB_X, PUB_WQ, PUB_WK, PUB_WV)

def read_typed(text):
    rows = []
    for line in text.splitlines():
        line = line.split("#")[0].strip()
        if line:
            rows.append([Fraction(tok) for tok in line.split()])
    return rows

def ws_differs(ns, step):
    typed = read_typed(ns["WORKSHEET"][step])
    right = WS_RIGHT[step]
    if [len(r) for r in typed] != [right.shape[1]] * right.shape[0]:
        return True
    return any(typed[i][j] != right[i, j] for i in range(right.shape[0]) for j in range(right.shape[1]))

def ws_others_right(ns, step):
    return all(not ws_differs(ns, s) for s in ns["WORKSHEET"] if s != step)


HELPER_CHECKS = {
    "softmax": lambda h: not differs(h, ref_softmax, R(2, 3), axis=-1) and not differs(h, ref_softmax, [1000., 0.])
               and not differs(h, ref_softmax, R(3, 2), axis=0),
    "attention_scores": lambda h: not differs(h, ref_scores, R(2, 3, 4), R(2, 5, 4, seed=1)),
    "scaled_dot_product_attention": lambda h: not differs(h, ref_sdpa, R(2, 3, 4), R(2, 5, 4, seed=1), R(2, 5, 2, seed=2)),
    "key_query_scores": lambda h: not differs(h, ref_kqs, [[1, 2, 0], [3, 4, 1]], [[5, 6], [7, 8]]),
    "floor_half": lambda h: not differs(h, ref_floor, [[-1, 3, 0], [4, -3, 1]]),
    "softmax3_columns": lambda h: not differs(h, ref_sm3, [[0, -1], [2, 1]]),
    "attention_by_hand": lambda h: not differs(h, ref_abh, PUB_X, PUB_WQ, PUB_WK, PUB_WV),
    "causal_mask": lambda h: not differs(h, ref_causal, 4),
    "padding_mask": lambda h: not differs(h, ref_pad, [3, 1, 0], 3),
    "masked_softmax": lambda h: not differs(h, ref_ms, [[1., 2.], [3., 900.]], np.array([[True, False], [False, False]])),
}

TESTS = {'h34-01-dot-row-of-B': 'differs(f, ref_matmul, SQA, SQB)', 'h34-01-dot-last-column-skipped': 'differs(f, ref_matmul, NBA, NBB)', 'h34-01-dot-product-of-sums': 'differs(f, ref_matmul, NBA, NBB)', 'h34-01-dot-ones-init': 'differs(f, ref_matmul, NBA, NBB)', 'h34-01-dot-uses-np-dot': "rule(src, 'matmul_dot', {'dot'})", 'h34-01-rows-A-indices-swapped': 'differs(f, ref_matmul, SQA, SQB)', 'h34-01-rows-assign-not-accumulate': 'differs(f, ref_matmul, NBA, NBB)', 'h34-01-rows-B-row-i': 'differs(f, ref_matmul, NBA, NBB)', 'h34-01-rows-init-inside-loop': 'differs(f, ref_matmul, NBA, NBB)', 'h34-01-cols-B-indices-swapped': 'differs(f, ref_matmul, SQA, SQB)', 'h34-01-cols-rows-of-A': 'differs(f, ref_matmul, SQA, SQB)', 'h34-01-cols-last-p-skipped': 'differs(f, ref_matmul, NBA, NBB)', 'h34-01-cols-built-as-rows': 'differs(f, ref_matmul, SQA, SQB)', 'h34-01-outer-factors-swapped': 'differs(f, ref_matmul, SQA, SQB)', 'h34-01-outer-row-of-A-col-of-B': 'differs(f, ref_matmul, SQA, SQB)', 'h34-01-outer-overwrite': 'differs(f, ref_matmul, NBA, NBB)', 'h34-01-outer-elementwise': 'differs(f, ref_matmul, SQA, SQB)', 'h34-01-outer-skips-first-term': 'differs(f, ref_matmul, NBA, NBB)', 'h34-01-batched-einsum-one-batch-axis': 'differs(f, np.matmul, R(2, 3), R(4, 3, 2))', 'h34-01-batched-sum-wrong-axis': 'differs(f, np.matmul, NBA, NBB)', 'h34-01-batched-swapaxes-B': 'differs(f, np.matmul, SQA, SQB)', 'h34-01-batched-tensordot': 'differs(f, np.matmul, R(2, 3, 4), R(2, 4, 5))', 'h34-01-batched-python-loop': 'differs(f, np.matmul, SQA, SQB)', 'h34-01-einsum-output-transposed': 'differs(f, ref_scores_plain, R(2, 3), R(4, 3))', 'h34-01-einsum-K-as-d-by-T': 'differs(f, ref_scores_plain, SQA, SQB)', 'h34-01-einsum-no-batch-axes': 'differs(f, ref_scores_plain, R(2, 3, 4), R(2, 3, 4))', 'h34-01-einsum-scaled': 'differs(f, ref_scores_plain, [[1., 2.]], [[3., 4.]])', 'h34-01-einsum-keys-summed': 'differs(f, ref_scores_plain, R(2, 3), R(4, 3))', 'h34-01-war-nan-passes': 'differs(f, ref_war, [[0.5, 0.5, np.nan]], np.ones((3, 2)))', 'h34-01-war-column-sums': 'differs(f, ref_war, [[1., 0.], [1., 0.]], [[1.], [2.]])', 'h34-01-war-only-too-large': 'differs(f, ref_war, [[0.2, 0.3]], [[1.], [2.]])', 'h34-01-war-zero-weight-rejected': 'differs(f, ref_war, [[1., 0.]], [[1.], [2.]])', 'h34-01-war-divides-by-count': 'differs(f, ref_war, [[0.5, 0.5]], [[2.], [4.]])', 'h34-01-war-allclose-tolerance': 'differs(f, ref_war, [[0.5, 0.500005]], [[1.], [2.]])', 'h34-02-softmax-keepdims-missing': 'differs(f, ref_softmax, [[1., 2.], [3., 5.]], axis=-1)', 'h34-02-softmax-no-shift': 'differs(f, ref_softmax, [1000., 0.])', 'h34-02-softmax-global-max': 'differs(f, ref_softmax, [[0., 0.], [1000., 1000.]], axis=-1)', 'h34-02-softmax-axis-ignored': 'differs(f, ref_softmax, [[1., 2.], [3., 5.]], axis=0)', 'h34-02-softmax-sum-everything': 'differs(f, ref_softmax, [[0., 0.], [0., 0.]], axis=-1)', 'h34-02-softmax-sign-flipped': 'differs(f, ref_softmax, [1., 2., 3.])', 'h34-02-scores-full-transpose': 'differs(f, ref_scores, R(2, 3, 4), R(2, 3, 4, seed=1))', 'h34-02-scores-sqrt-Tq': 'differs(f, ref_scores, R(2, 4), R(3, 4, seed=1))', 'h34-02-scores-no-sqrt': 'differs(f, ref_scores, [[1., 1., 1., 1.]], [[1., 1., 1., 1.]])', 'h34-02-scores-no-scale': 'differs(f, ref_scores, [[1., 1., 1., 1.]], [[1., 1., 1., 1.]])', 'h34-02-scores-K-times-Qt': 'differs(f, ref_scores, R(2, 4), R(3, 4, seed=1))', 'h34-02-var-all-pairs': 'differs_var(f, 4, 50, 0)', 'h34-02-var-sum-over-samples': 'differs_var(f, 1, 100, 0)', 'h34-02-var-no-reduction': 'differs_var(f, 16, 2000, 0)', 'h34-02-var-std': 'differs_var(f, 16, 2000, 0)', 'h34-02-var-scaled-scores': 'differs_var(f, 16, 2000, 0)', 'h34-02-var-mean-of-squares': 'differs_var(f, 2, 2, 0)', 'h34-02-sdpa-softmax-query-axis': 'differs(f, ref_sdpa, R(3, 4), R(3, 4, seed=1), R(3, 4, seed=2))', 'h34-02-sdpa-outputs-swapped': 'differs(f, ref_sdpa, R(2, 4), R(3, 4, seed=1), R(3, 5, seed=2))', 'h34-02-sdpa-weights-transposed': 'differs(f, ref_sdpa, R(3, 4), R(3, 4, seed=1), R(3, 4, seed=2))', 'h34-02-sdpa-scaled-twice': 'differs(f, ref_sdpa, R(3, 4), R(3, 4, seed=1), R(3, 4, seed=2))', 'h34-02-sdpa-no-softmax': 'differs(f, ref_sdpa, [[1., 0.]], [[1., 0.], [0., 1.]], [[1.], [2.]])', 'h34-02-sdpa-helper-full-transpose': 'differs(f, ref_sdpa, R(2, 3, 4), R(2, 3, 4, seed=1), R(2, 3, 4, seed=2))', 'h34-02-one-no-shift': 'differs(f, ref_one, [100., 0.], [[100., 0.], [0., 1.]], [[1.], [2.]])', 'h34-02-one-no-scale': 'differs(f, ref_one, [1., 1., 1., 1.], [[1., 1., 1., 1.], [0., 0., 0., 0.]], [[1.], [0.]])', 'h34-02-one-not-normalised': 'differs(f, ref_one, [0., 0.], [[1., 0.], [0., 1.]], [[1.], [3.]])', 'h34-02-one-sqrt-Tk': 'differs(f, ref_one, [1., 1., 1., 1.], [[1., 1., 1., 1.], [0., 0., 0., 0.]], [[1.], [0.]])', 'h34-02-one-running-total': 'differs(f, ref_one, [0., 0.], [[1., 0.], [0., 1.]], [[1.], [3.]])', 'h34-02-one-uses-matmul': "rule(src, 'attend_one_query', {'@'})", 'h34-02-self-V-from-Wk': 'differs(f, ref_self, R(3, 4), R(4, 2, seed=1), R(4, 2, seed=2), R(4, 2, seed=3))', 'h34-02-self-Q-K-swapped': 'differs(f, ref_self, R(3, 4), R(4, 2, seed=1), R(4, 2, seed=2), R(4, 2, seed=3))', 'h34-02-self-scale-d-model': 'differs(f, ref_self, R(3, 8), R(8, 2, seed=1), R(8, 2, seed=2), R(8, 2, seed=3))', 'h34-02-self-output-only': 'differs(f, ref_self, R(3, 4), R(4, 2, seed=1), R(4, 2, seed=2), R(4, 2, seed=3))', 'h34-02-self-V-unprojected': 'differs(f, ref_self, R(3, 4), R(4, 2, seed=1), R(4, 2, seed=2), R(4, 2, seed=3))', 'h34-02-self-weights-transposed': 'differs(f, ref_self, R(3, 3), R(3, 3, seed=1), R(3, 3, seed=2), R(3, 3, seed=3))', 'h34-03-wsQ-transposed': "ws_differs(ns, 'Q')", 'h34-03-wsQ-missed-term': "ws_differs(ns, 'Q')", 'h34-03-wsK-minus-one-as-plus': "ws_differs(ns, 'K')", 'h34-03-wsK-row-copied': "ws_differs(ns, 'K')", 'h34-03-wsV-copied-K': "ws_differs(ns, 'V')", 'h34-03-wsV-missed-term': "ws_differs(ns, 'V')", 'h34-03-wsScores-QtK': "ws_differs(ns, 'scores')", 'h34-03-wsScores-KtK': "ws_differs(ns, 'scores')", 'h34-03-wsScores-sign-slip': "ws_differs(ns, 'scores')", 'h34-03-wsScaled-rounded': "ws_differs(ns, 'scaled')", 'h34-03-wsScaled-toward-zero': "ws_differs(ns, 'scaled')", 'h34-03-wsScaled-halves': "ws_differs(ns, 'scaled')", 'h34-03-wsA-rows-normalised': "ws_differs(ns, 'A')", 'h34-03-wsA-not-normalised': "ws_differs(ns, 'A')", 'h34-03-wsA-powers-of-scores': "ws_differs(ns, 'A')", 'h34-03-wsZ-A-transposed': "ws_differs(ns, 'Z')", 'h34-03-wsZ-mixes-K': "ws_differs(ns, 'Z')", 'h34-03-kqs-QtK': 'differs(f, ref_kqs, [[1, 0]], [[1, 2, 3]])', 'h34-03-kqs-KtK': 'differs(f, ref_kqs, [[1, 2], [3, 4]], [[5, 6], [7, 8]])', 'h34-03-kqs-floats': 'differs(f, ref_kqs, [[1, 2], [3, 4]], [[5, 6], [7, 8]])', 'h34-03-kqs-K-Qt': 'differs(f, ref_kqs, [[1, 2], [3, 4]], [[5, 6], [7, 8]])', 'h34-03-floor-int-truncates': 'differs(f, ref_floor, [[-1]])', 'h34-03-floor-round': 'differs(f, ref_floor, [[3]])', 'h34-03-floor-floats': 'differs(f, ref_floor, [[3, -1]])', 'h34-03-floor-before-halving': 'differs(f, ref_floor, [[3]])', 'h34-03-sm3-float-powers': 'differs(f, ref_sm3, [[0], [1]])', 'h34-03-sm3-rows': 'differs(f, ref_sm3, [[0, 0], [1, 0]])', 'h34-03-sm3-total': 'differs(f, ref_sm3, [[0, 0], [1, 0]])', 'h34-03-sm3-exponent-sign': 'differs(f, ref_sm3, [[0], [1]])', 'h34-03-abh-scores-args-swapped': 'differs(f, ref_abh, PUB_X, PUB_WQ, PUB_WK, PUB_WV)', 'h34-03-abh-Z-A-transposed': 'differs(f, ref_abh, PUB_X, PUB_WQ, PUB_WK, PUB_WV)', 'h34-03-abh-scale-skipped': 'differs(f, ref_abh, PUB_X, PUB_WQ, PUB_WK, PUB_WV)', 'h34-03-abh-K-from-WQ': 'differs(f, ref_abh, PUB_X, PUB_WQ, PUB_WK, PUB_WV)', 'h34-03-abh-helper-truncates': 'differs(f, ref_abh, PUB_X, PUB_WQ, PUB_WK, PUB_WV)', 'h34-03-row-no-W-transpose': 'differs(f, ref_rows, PUB_X.T, PUB_WQ, PUB_WK, PUB_WV)', 'h34-03-row-softmax-columns': 'differs(f, ref_rows, PUB_X.T, PUB_WQ, PUB_WK, PUB_WV)', 'h34-03-row-Z-At-V': 'differs(f, ref_rows, PUB_X.T, PUB_WQ, PUB_WK, PUB_WV)', 'h34-03-row-scores-KQt': 'differs(f, ref_rows, PUB_X.T, PUB_WQ, PUB_WK, PUB_WV)', 'h34-03-row-column-results': 'differs(f, ref_rows, PUB_X.T, PUB_WQ, PUB_WK, PUB_WV)', 'h34-04-causal-float': 'differs(f, ref_causal, 3)', 'h34-04-causal-upper': 'differs(f, ref_causal, 2)', 'h34-04-causal-no-diagonal': 'differs(f, ref_causal, 2)', 'h34-04-causal-blocked-marked': 'differs(f, ref_causal, 2)', 'h34-04-pad-off-by-one': 'differs(f, ref_pad, [2], 3)', 'h34-04-pad-no-column': 'differs(f, ref_pad, [1, 3, 2], 3)', 'h34-04-pad-inverted': 'differs(f, ref_pad, [2], 3)', 'h34-04-pad-transposed': 'differs(f, ref_pad, [3, 2], 3)', 'h34-04-am-pads-queries': 'differs(f, ref_am, [2], 3, causal=False)', 'h34-04-am-causal-flag-ignored': 'differs(f, ref_am, [3], 3, causal=False)', 'h34-04-am-or': 'differs(f, ref_am, [3], 3, causal=True)', 'h34-04-am-noncausal-shape': 'differs(f, ref_am, [2], 3, causal=False)', 'h34-04-ms-nan-row': 'differs(f, ref_ms, [[1., 2.]], np.array([[False, False]]))', 'h34-04-ms-fill-1e9': 'differs(f, ref_ms, [[1., 2.]], np.array([[False, False]]))', 'h34-04-ms-mask-after': 'differs(f, ref_ms, [[0., 0.]], np.array([[True, False]]))', 'h34-04-ms-inverted': 'differs(f, ref_ms, [[1., 2.]], np.array([[True, False]]))', 'h34-04-ms-max-before-masking': 'differs(f, ref_ms, [[0., 1., 900.]], np.array([[True, True, False]]))', 'h34-04-ms-query-axis': 'differs(f, ref_ms, [[1., 2.], [3., 4.]], np.ones((2, 2), dtype=bool))', 'h34-04-ms-torch-softmax': "rule(src, 'masked_softmax', {'softmax'})", 'h34-04-ma-none-float-mask': 'differs(f, ref_ma, R(3, 4), R(3, 4, seed=1), R(3, 2, seed=2))', 'h34-04-ma-no-scale': 'differs(f, ref_ma, R(3, 4), R(3, 4, seed=1), R(3, 2, seed=2), mask=np.tril(np.ones((3, 3), dtype=bool)))', 'h34-04-ma-mask-after-softmax': 'differs(f, ref_ma, R(3, 4), R(3, 4, seed=1), R(3, 2, seed=2), mask=np.tril(np.ones((3, 3), dtype=bool)))', 'h34-04-ma-helper-fill-1e9': 'differs(f, ref_ma, R(2, 3), R(2, 3, seed=1), R(2, 3, seed=2), mask=np.array([[True, True], [False, False]]))', 'h34-04-ma-dk-from-keys': 'differs(f, ref_ma, R(2, 4), R(3, 4, seed=1), R(3, 2, seed=2))', 'h34-04-ic-changes-token-t': 'differs_causal(f, causal_layer, 4, 3, 0, expected=True)', 'h34-04-ic-compares-all': 'differs_causal(f, causal_layer, 4, 3, 0, expected=True)', 'h34-04-ic-misses-output-t': 'differs_causal(f, next_token, 4, 3, 0, expected=False)', 'h34-04-ic-in-place': 'differs_causal(f, causal_layer, 4, 3, 0, expected=True)', 'h34-04-ic-skips-position-0': 'differs_causal(f, peek_first, 4, 3, 0, expected=False)', 'h34-04-cmc-row-mask': 'differs(f, ref_cmc, 2)', 'h34-04-cmc-no-diagonal': 'differs(f, ref_cmc, 2)', 'h34-04-cmc-float': 'differs(f, ref_cmc, 3)', 'h34-04-mha-not-inverted': 'differs(f, ref_mha, [2], 3)', 'h34-04-mha-numpy': 'differs(f, ref_mha, [2], 3)', 'h34-04-mha-float': 'differs(f, ref_mha, [2], 3)', 'h34-04-mha-off-by-one': 'differs(f, ref_mha, [2], 3)', 'h34-04-pa-divide-columns': 'differs(f, ref_prefix, [[1.], [1.]])', 'h34-04-pa-divide-by-T': 'differs(f, ref_prefix, [[2.], [4.]])', 'h34-04-pa-upper-triangle': 'differs(f, ref_prefix, [[2.], [4.]])', 'h34-04-pa-T-from-features': 'differs(f, ref_prefix, R(3, 2))', 'h34-04-pa-cumsum': "rule(src, 'prefix_average', {'cumsum'})"}

HELPERS_OK = {'h34-02-sdpa-softmax-query-axis': ['softmax', 'attention_scores'], 'h34-02-sdpa-outputs-swapped': ['softmax', 'attention_scores'], 'h34-02-sdpa-weights-transposed': ['softmax', 'attention_scores'], 'h34-02-sdpa-scaled-twice': ['softmax', 'attention_scores'], 'h34-02-sdpa-no-softmax': ['softmax', 'attention_scores'], 'h34-02-sdpa-helper-full-transpose': ['softmax'], 'h34-02-self-V-from-Wk': ['softmax', 'attention_scores', 'scaled_dot_product_attention'], 'h34-02-self-Q-K-swapped': ['softmax', 'attention_scores', 'scaled_dot_product_attention'], 'h34-02-self-scale-d-model': ['softmax'], 'h34-02-self-output-only': ['softmax', 'attention_scores', 'scaled_dot_product_attention'], 'h34-02-self-V-unprojected': ['softmax', 'attention_scores', 'scaled_dot_product_attention'], 'h34-02-self-weights-transposed': ['softmax', 'attention_scores', 'scaled_dot_product_attention'], 'h34-03-abh-scores-args-swapped': ['key_query_scores', 'floor_half', 'softmax3_columns'], 'h34-03-abh-Z-A-transposed': ['key_query_scores', 'floor_half', 'softmax3_columns'], 'h34-03-abh-scale-skipped': ['key_query_scores', 'floor_half', 'softmax3_columns'], 'h34-03-abh-K-from-WQ': ['key_query_scores', 'floor_half', 'softmax3_columns'], 'h34-03-abh-helper-truncates': ['key_query_scores', 'softmax3_columns'], 'h34-03-row-no-W-transpose': ['floor_half', 'softmax3_columns'], 'h34-03-row-softmax-columns': ['floor_half', 'softmax3_columns'], 'h34-03-row-Z-At-V': ['floor_half', 'softmax3_columns'], 'h34-03-row-scores-KQt': ['floor_half', 'softmax3_columns'], 'h34-03-row-column-results': ['key_query_scores', 'floor_half', 'softmax3_columns', 'attention_by_hand'], 'h34-04-am-pads-queries': ['causal_mask', 'padding_mask'], 'h34-04-am-causal-flag-ignored': ['causal_mask', 'padding_mask'], 'h34-04-am-or': ['causal_mask', 'padding_mask'], 'h34-04-am-noncausal-shape': ['causal_mask', 'padding_mask'], 'h34-04-ma-none-float-mask': ['masked_softmax'], 'h34-04-ma-no-scale': ['masked_softmax'], 'h34-04-ma-mask-after-softmax': ['masked_softmax'], 'h34-04-ma-dk-from-keys': ['masked_softmax'], 'h34-04-mha-not-inverted': ['padding_mask'], 'h34-04-mha-numpy': ['padding_mask'], 'h34-04-mha-float': ['padding_mask']}

CONTROLS = {
    'matmul_dot': '''import numpy as np

from grader.learner.validation import matmul_operands, as_array


def matmul_dot(A, B):
    """C[i, j] = row i of A · column j of B, with a Python loop (over i and j: one entry at a time)."""
    A, B = matmul_operands(A, B)
    n, m = A.shape[0], B.shape[1]
    C = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            C[i, j] = np.sum(A[i, :] * B[:, j])
    return C
''',
    'matmul_rows': '''import numpy as np

from grader.learner.validation import matmul_operands, as_array


def matmul_rows(A, B):
    """Row i of C = sum over p of A[i, p] * (row p of B), with a Python loop (over i and p)."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    C = np.zeros((n, B.shape[1]))
    for i in range(n):
        for p in range(k):
            C[i, :] += A[i, p] * B[p, :]
    return C
''',
    'matmul_cols': '''import numpy as np

from grader.learner.validation import matmul_operands, as_array


def matmul_cols(A, B):
    """Column j of C = sum over p of B[p, j] * (column p of A), with a Python loop (over j and p)."""
    A, B = matmul_operands(A, B)
    k, m = B.shape
    C = np.zeros((A.shape[0], m))
    for j in range(m):
        for p in range(k):
            C[:, j] += B[p, j] * A[:, p]
    return C
''',
    'matmul_outer': '''import numpy as np

from grader.learner.validation import matmul_operands, as_array


def matmul_outer(A, B):
    """C = sum over p of the outer product of column p of A and row p of B, with a Python loop (over p)."""
    A, B = matmul_operands(A, B)
    n, k = A.shape
    C = np.zeros((n, B.shape[1]))
    for p in range(k):
        C += np.outer(A[:, p], B[p, :])
    return C
''',
    'batched_matmul': '''import numpy as np

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
    return A @ B
''',
    'einsum_scores': '''import numpy as np

from grader.learner.validation import matmul_operands, as_array


def einsum_scores(Q, K):
    """Q Kᵀ for every batch item: [..., T_q, d] and [..., T_k, d] -> [..., T_q, T_k].

    Use np.einsum: one call does it, with no loop and no other product.
    """
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share their last axis, got {Q.shape} and {K.shape}")
    return np.einsum("...qd,...kd->...qk", Q, K)
''',
    'weighted_average_rows': '''import numpy as np

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
        raise ValueError("W holds a negative weight")
    sums = W.sum(axis=-1)
    if np.any(np.abs(sums - 1) > 1e-6):
        raise ValueError(f"every row of W must sum to 1, got {sums}")
    return W @ V
''',
    'softmax': '''import numpy as np

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
''',
    'attention_scores': '''import numpy as np

from grader.learner.validation import as_array


def attention_scores(Q, K):
    """Q Kᵀ / sqrt(d_k) over the last two axes: [..., T_q, d_k], [..., T_k, d_k] -> [..., T_q, T_k]."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis d_k, got Q of shape {Q.shape} "
                         f"and K of shape {K.shape}")
    d_k = Q.shape[-1]
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
''',
    'score_variance': '''import numpy as np

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
    return np.var(np.sum(q * k, axis=1))
''',
    'scaled_dot_product_attention': '''import numpy as np

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
''',
    'attend_one_query': '''import numpy as np

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
    scores = [np.sum(q * K[i]) / np.sqrt(q.shape[0]) for i in range(T_k)]
    m = max(scores)
    exps = [np.exp(s - m) for s in scores]
    total = sum(exps)
    out = np.zeros(V.shape[1])
    for i in range(T_k):
        out += exps[i] / total * V[i]
    return out
''',
    'self_attention': '''import numpy as np

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
    return scaled_dot_product_attention(Q, K, V)
''',
    'worksheet_Q': '''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

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
''',
    'worksheet_K': '''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

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
''',
    'worksheet_V': '''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

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
''',
    'worksheet_scores': '''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

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
''',
    'worksheet_scaled': '''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

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
''',
    'worksheet_A': '''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

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
''',
    'worksheet_Z': '''WORKSHEET = {}   # the numbers you worked out on paper, filled in step by step below

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
3/16 1/2 5/8 3/7
3/16 5/8 1/2 3/7
1/16 1/4 1/4 1/7
"""
''',
    'key_query_scores': '''import math
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
''',
    'floor_half': '''import math
from fractions import Fraction

import numpy as np

from grader.learner.validation import as_fractions


def floor_half(S):
    """floor(S / 2) entry by entry, exactly: the stand-in for S / √3. floor(-1/2) is -1."""
    S = as_fractions(S, "S")
    return np.array([[Fraction(math.floor(s / 2)) for s in row] for row in S], dtype=object)
''',
    'softmax3_columns': '''import math
from fractions import Fraction

import numpy as np

from grader.learner.validation import as_fractions


def softmax3_columns(S):
    """3 ** S with every column divided by its sum, exactly. Every column sums to 1.

    S holds whole numbers (the scaled scores).
    """
    S = as_fractions(S, "S", whole=True)
    P = np.array([[Fraction(3) ** int(s) for s in row] for row in S], dtype=object)
    return P / P.sum(axis=0)
''',
    'attention_by_hand': '''import math
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
''',
    'row_convention_attention': '''import math
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
    Z = A @ V
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
''',
    'causal_mask': '''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def causal_mask(T):
    """[T, T] boolean mask: True where key j <= query i."""
    T = positive_int(T, "T")
    return np.tril(np.ones((T, T), dtype=bool))
''',
    'padding_mask': '''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def padding_mask(lengths, T):
    """[B, T] boolean mask: True at the real tokens of each sentence, False at its padding."""
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return np.arange(T)[None, :] < lengths[:, None]
''',
    'attention_mask': '''import numpy as np
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
    allowed = np.broadcast_to(pad, (len(lengths), T, T))
    if causal:
        allowed = allowed & causal_mask(T)[None, :, :]
    return allowed.copy()
''',
    'masked_softmax': '''import numpy as np
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
''',
    'masked_attention': '''import numpy as np
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
        mask = np.ones(scores.shape, dtype=bool)
    weights = masked_softmax(scores, mask)
    return weights @ V, weights
''',
    'is_causal': '''import numpy as np
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
        if not np.allclose(after[:t + 1], before[:t + 1]):
            return False
    return True
''',
    'causal_mask_columns': '''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def causal_mask_columns(T):
    """[T, T] causal mask with tokens as columns: entry [i, j] (key i, query j) is True where i <= j."""
    T = positive_int(T, "T")
    return np.triu(np.ones((T, T), dtype=bool))
''',
    'to_mha_key_padding_mask': '''import numpy as np
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
    return torch.from_numpy(~padding_mask(lengths, T))
''',
    'prefix_average': '''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int


def prefix_average(X):
    """Row i of the result is the mean of rows 0..i of X, computed as W @ X."""
    X = as_array(X, "X", min_ndim=2)
    T = X.shape[-2]
    W = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]
    return W @ X
''',
}


def run(source, name):
    ns = {"__name__": f"answer_{name}"}
    exec(compile(source, f"<{name}>", "exec"), ns)
    return ns


def evaluate(test, ns, source, exercise):
    f = ns.get(exercise)
    return bool(eval(test, globals(), {"f": f, "ns": ns, "src": source}))


def main():
    control_ns = {ex: run(src, "control_" + ex) for ex, src in CONTROLS.items()}
    bad = 0
    for w in WRONG:
        notes = []
        try:
            ns = run(w.source, w.id)
            defined = "WORKSHEET" in ns if w.exercise.startswith("worksheet_") else callable(ns.get(w.exercise))
            if not defined:
                notes.append("does not define the exercise's name")
            wrong = evaluate(TESTS[w.id], ns, w.source, w.exercise)
            if not wrong:
                notes.append("not shown wrong")
            control = evaluate(TESTS[w.id], control_ns[w.exercise], CONTROLS[w.exercise], w.exercise)
            if control:
                notes.append("the test also flags a correct answer")
            for h in HELPERS_OK.get(w.id, []):
                if not HELPER_CHECKS[h](ns[h]):
                    notes.append(f"helper {h} is not correct")
            if w.exercise.startswith("worksheet_") and not ws_others_right(ns, w.exercise[len("worksheet_"):]):
                notes.append("another worksheet step is wrong too")
        except Exception as exc:  # noqa: BLE001
            notes.append(f"verify crashed: {type(exc).__name__}: {exc}")
        status = "FAIL" if notes else "ok"
        bad += bool(notes)
        print(f"{status:4s} {w.id:40s} {w.exercise:28s} {'; '.join(notes)}")
    print(f"{len(WRONG) - bad} of {len(WRONG)} answers verified")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
