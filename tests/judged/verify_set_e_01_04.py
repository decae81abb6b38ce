"""Verify every answer of set e (lessons 01-04) is wrong on the input named in wrong_on.

Run from the repository root:
    PYTHONPATH=. .venv/bin/python tests/judged/verify_set_e_01_04.py
It uses only independent reference computations written here (plain numpy/torch, Fractions).
"""
import math
import sys
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import set_e_01_04 as S  # noqa: E402

warnings.simplefilter("ignore")
np.seterr(all="ignore")


# ----------------------------------------------------------------------------- references

def r_matmul(A, B):
    A, B = np.asarray(A, float), np.asarray(B, float)
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[0]:
        raise ValueError("shapes")
    n, k = A.shape
    m = B.shape[1]
    C = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            C[i, j] = sum(A[i, p] * B[p, j] for p in range(k))
    return C


def r_batched(A, B):
    return np.matmul(np.asarray(A, float), np.asarray(B, float))


def r_einsum(Q, K):
    Q, K = np.asarray(Q, float), np.asarray(K, float)
    return Q @ np.swapaxes(K, -1, -2)


def r_war(W, V):
    W, V = np.asarray(W, float), np.asarray(V, float)
    if not np.all(np.isfinite(W)) or np.any(W < 0) or np.any(np.abs(W.sum(-1) - 1) > 1e-6):
        raise ValueError("weights")
    return W @ V


def r_softmax(x, axis=-1):
    x = np.asarray(x, float)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def r_scores(Q, K):
    Q, K = np.asarray(Q, float), np.asarray(K, float)
    return Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])


def r_score_variance_both(d_k, n, seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n, d_k))
    k = rng.standard_normal((n, d_k))
    s = np.einsum("nd,nd->n", q, k)
    return s.var(ddof=0), s.var(ddof=1)


def r_sdpa(Q, K, V):
    w = r_softmax(r_scores(Q, K), axis=-1)
    return w @ np.asarray(V, float), w


def r_one_query(q, K, V):
    q, K, V = (np.asarray(a, float) for a in (q, K, V))
    out, w = r_sdpa(q[None, :], K, V)
    return out[0]


def r_self_attention(X, W_q, W_k, W_v):
    X = np.asarray(X, float)
    return r_sdpa(X @ W_q, X @ W_k, X @ W_v)


def fr(M):
    return np.array([[Fraction(v) for v in row] for row in np.asarray(M, dtype=object).tolist()],
                    dtype=object)


def r_kqs(K, Q):
    K, Q = fr(K), fr(Q)
    T_k, T_q = K.shape[1], Q.shape[1]
    out = np.empty((T_k, T_q), dtype=object)
    for i in range(T_k):
        for j in range(T_q):
            out[i, j] = sum((K[p, i] * Q[p, j] for p in range(K.shape[0])), Fraction(0))
    return out


def r_floor_half(Sm):
    Sm = fr(Sm)
    return np.array([[Fraction(math.floor(v / 2)) for v in row] for row in Sm.tolist()], dtype=object)


def r_softmax3(Sm):
    Sm = fr(Sm)
    P = np.array([[Fraction(3) ** int(v) for v in row] for row in Sm.tolist()], dtype=object)
    out = np.empty(P.shape, dtype=object)
    for j in range(P.shape[1]):
        tot = sum(P[:, j].tolist(), Fraction(0))
        for i in range(P.shape[0]):
            out[i, j] = P[i, j] / tot
    return out


def fr_matmul(A, B):
    A, B = fr(A), fr(B)
    out = np.empty((A.shape[0], B.shape[1]), dtype=object)
    for i in range(A.shape[0]):
        for j in range(B.shape[1]):
            out[i, j] = sum((A[i, p] * B[p, j] for p in range(A.shape[1])), Fraction(0))
    return out


def r_by_hand(X, W_Q, W_K, W_V):
    Q, K, V = fr_matmul(W_Q, X), fr_matmul(W_K, X), fr_matmul(W_V, X)
    scores = r_kqs(K, Q)
    scaled = r_floor_half(scores)
    A = r_softmax3(scaled)
    Z = fr_matmul(V, A)
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}


def r_row_convention(X_rows, W_Q, W_K, W_V):
    cols = r_by_hand(fr(X_rows).T, W_Q, W_K, W_V)
    return {k: v.T for k, v in cols.items()}


def r_causal_mask(T):
    i = np.arange(T)[:, None]
    j = np.arange(T)[None, :]
    return j <= i


def r_padding_mask(lengths, T):
    lengths = np.asarray(lengths)
    return np.array([[t < L for t in range(T)] for L in lengths], dtype=bool)


def r_attention_mask(lengths, T, causal=True):
    pad = r_padding_mask(lengths, T)
    B = len(pad)
    out = np.zeros((B, T, T), dtype=bool)
    for b in range(B):
        for i in range(T):
            for j in range(T):
                out[b, i, j] = pad[b, j] and (j <= i or not causal)
    return out


def r_masked_softmax(scores, mask):
    scores = np.asarray(scores, float)
    mask = np.broadcast_to(np.asarray(mask, bool), scores.shape)
    out = np.zeros(scores.shape)
    for idx in np.ndindex(scores.shape[:-1]):
        row, m = scores[idx], mask[idx]
        if m.any():
            mx = row[m].max()
            e = np.where(m, np.exp(np.where(m, row - mx, 0.0)), 0.0)
            out[idx] = e / e.sum()
    return out


def r_masked_attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(a, float) for a in (Q, K, V))
    s = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    if mask is None:
        mask = np.ones(s.shape, bool)
    w = r_masked_softmax(s, mask)
    return w @ V, w


def r_is_causal(attend, T, d, seed=0):
    # brute force: for every t, perturb tokens after t several ways and compare outputs 0..t
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((T, d))
    before = np.asarray(attend(X))
    for t in range(T):
        for _ in range(3):
            X2 = X.copy()
            X2[t + 1:] = rng.standard_normal((T - t - 1, d))
            if not np.allclose(np.asarray(attend(X2))[:t + 1], before[:t + 1]):
                return False
    return True


def r_causal_mask_columns(T):
    return r_causal_mask(T).T.copy()


def r_mha_mask(lengths, T):
    return torch.from_numpy(~r_padding_mask(lengths, T))


def r_prefix_average(X):
    X = np.asarray(X, float)
    out = np.empty_like(X)
    T = X.shape[-2]
    for i in range(T):
        out[..., i, :] = X[..., :i + 1, :].mean(axis=-2)
    return out


REF = {
    "matmul_dot": r_matmul, "matmul_rows": r_matmul, "matmul_cols": r_matmul,
    "matmul_outer": r_matmul, "batched_matmul": r_batched, "einsum_scores": r_einsum,
    "weighted_average_rows": r_war, "softmax": r_softmax, "attention_scores": r_scores,
    "scaled_dot_product_attention": r_sdpa, "attend_one_query": r_one_query,
    "self_attention": r_self_attention, "key_query_scores": r_kqs, "floor_half": r_floor_half,
    "softmax3_columns": r_softmax3, "attention_by_hand": r_by_hand,
    "row_convention_attention": r_row_convention, "causal_mask": r_causal_mask,
    "padding_mask": r_padding_mask, "attention_mask": r_attention_mask,
    "masked_softmax": r_masked_softmax, "masked_attention": r_masked_attention,
    "is_causal": r_is_causal, "causal_mask_columns": r_causal_mask_columns,
    "to_mha_key_padding_mask": r_mha_mask, "prefix_average": r_prefix_average,
}


# ----------------------------------------------------------------------------- comparison

def differs(ref, got):
    """True when got is not the reference result (value, shape, or kind)."""
    if isinstance(ref, tuple):
        if not isinstance(got, tuple) or len(got) != len(ref):
            return True
        return any(differs(r, g) for r, g in zip(ref, got))
    if isinstance(ref, dict):
        if not isinstance(got, dict) or set(got) != set(ref):
            return True
        return any(differs(ref[k], got[k]) for k in ref)
    if isinstance(ref, (bool, np.bool_)):
        return not isinstance(got, (bool, np.bool_)) or bool(got) != bool(ref)
    if isinstance(ref, torch.Tensor):
        if not isinstance(got, torch.Tensor) or got.dtype != ref.dtype or got.shape != ref.shape:
            return True
        return not torch.equal(got, ref)
    ref = np.asarray(ref)
    try:
        got = np.asarray(got)
    except Exception:
        return True
    if got.shape != ref.shape:
        return True
    if ref.dtype == bool:
        return got.dtype != bool or not np.array_equal(got, ref)
    if ref.dtype == object:  # exact Fractions: every entry must be an exact rational equal to it
        for r, g in zip(ref.flat, got.flat):
            if isinstance(g, float) or isinstance(g, np.floating):
                g = Fraction(float(g))
            try:
                if g != r:
                    return True
            except Exception:
                return True
        return False
    if got.dtype == object:
        try:
            got = got.astype(float)
        except Exception:
            return True
    if not np.issubdtype(got.dtype, np.number):
        return True
    return not np.allclose(got, ref, rtol=1e-7, atol=1e-9, equal_nan=True)


def outcome(f, args, kwargs):
    try:
        return ("value", f(*args, **kwargs))
    except Exception as exc:  # noqa: BLE001
        return ("raise", exc)


def load(source):
    ns = {"__name__": "learner_answer"}
    exec(compile(source, "<answer>", "exec"), ns)
    return ns


# ----------------------------------------------------------------------------- worksheet

WS_X = np.array([[1, 1, 0, 0], [1, 1, 0, 0], [1, 0, 1, 1], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])
WS_WQ = np.array([[1, 0, 1, 0, 0, 0], [1, 0, 0, 0, 0, 1], [0, 0, 1, 0, 1, 0]])
WS_WK = np.array([[0, 1, 0, 1, 0, 0], [0, 0, 0, 1, -1, 1], [0, 1, 0, 0, 1, 0]])
WS_WV = np.array([[0, 0, 1, 0, 1, 0], [0, 0, 1, 0, 0, 1], [0, 0, 0, 0, 1, 1]])
WS_KEY = r_by_hand(WS_X, WS_WQ, WS_WK, WS_WV)


def parse_ws(text):
    rows = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        rows.append([Fraction(tok) for tok in line.split()])
    if len({len(r) for r in rows}) != 1:
        return rows  # ragged: wrong by shape
    return np.array(rows, dtype=object)


def check_worksheet(ns, step):
    ws = ns["WORKSHEET"]
    if step not in ws:
        return True, "step missing"
    got = parse_ws(ws[step])
    if not isinstance(got, np.ndarray):
        return True, "ragged rows"
    d = differs(WS_KEY[step], got)
    return d, ("differs from the key" if d else "SAME as the key") + f" (typed {got.shape}, key {WS_KEY[step].shape})"


# ----------------------------------------------------------------------------- cases
# id -> (args, kwargs): the input named in the answer's wrong_on (args may be a callable).
CASES = {}

I2 = np.eye(2)
M = [[1., 2.], [3., 4.]]
CASES.update({
    "e-01-dot-row-of-B": ((M, M), {}),
    "e-01-dot-j-loop-over-k": ((np.ones((2, 2)), np.ones((2, 3))), {}),
    "e-01-dot-total-not-reset": (([[1., 1.]], [[1., 1.], [1., 1.]]), {}),
    "e-01-dot-list-aliasing": ((I2, M), {}),
    "e-01-rows-assign-not-accumulate": (([[1., 1.]], I2), {}),
    "e-01-rows-C-inside-loop": ((I2, M), {}),
    "e-01-rows-p-stops-early": (([[1., 1.]], I2), {}),
    "e-01-rows-zeros-like-A": ((np.ones((2, 3)), np.ones((3, 2))), {}),
    "e-01-cols-B-indices-swapped": ((I2, M), {}),
    "e-01-cols-row-of-A": ((M, I2), {}),
    "e-01-cols-stacked-as-rows": ((M, I2), {}),
    "e-01-cols-p-starts-at-1": (([[1., 1.]], [[1.], [1.]]), {}),
    "e-01-outer-args-swapped": ((M, I2), {}),
    "e-01-outer-elementwise-no-newaxis": ((M, I2), {}),
    "e-01-outer-only-last-term": (([[1., 1.]], [[1.], [1.]]), {}),
    "e-01-outer-loop-over-n": ((np.ones((2, 3)), np.ones((3, 2))), {}),
    "e-01-outer-row-times-column": ((M, [[1., 1.], [0., 1.]]), {}),
    "e-01-bmm-np-dot": (lambda: (np.random.default_rng(0).normal(size=(2, 3, 4)),
                                 np.random.default_rng(1).normal(size=(2, 4, 5))), {}),
    "e-01-bmm-einsum-fixed-axes": ((I2, I2), {}),
    "e-01-bmm-loop-over-batch": ((np.ones((2, 3)), np.ones((3, 2))), {}),
    "e-01-bmm-operands-swapped": (([[1., 1.], [0., 1.]], [[1., 0.], [1., 1.]]), {}),
    "e-01-einsum-output-kq": ((np.ones((3, 2)), np.arange(4.).reshape(2, 2)), {}),
    "e-01-einsum-no-ellipsis": (lambda: (np.random.default_rng(0).normal(size=(2, 3, 4)),
                                         np.random.default_rng(1).normal(size=(2, 3, 4))), {}),
    "e-01-einsum-k-not-transposed": (([[1., 0.], [0., 0.]], [[0., 1.], [0., 0.]]), {}),
    "e-01-einsum-key-axis-summed": (([[1., 0.]], [[1., 0.], [2., 0.]]), {}),
    "e-01-war-nan-equality": (([[0.5, 0.5, np.nan]], np.ones((3, 2))), {}),
    "e-01-war-sum-over-columns": (([[1., 0.], [1., 0.]], [[1.], [2.]]), {}),
    "e-01-war-no-abs": (([[0.2, 0.3]], [[1.], [1.]]), {}),
    "e-01-war-zero-weight-rejected": (([[1., 0.]], [[1.], [2.]]), {}),
    "e-01-war-divided-by-m": (([[0.5, 0.5]], [[2.], [4.]]), {}),
    "e-01-war-exact-sum": (([[0.7, 0.2, 0.1]], np.ones((3, 1))), {}),
    "e-01-war-total-sum": ((I2, I2), {}),
})

CASES.update({
    "e-02-softmax-max-no-keepdims": (([[0., 1.], [2., 5.]],), {"axis": -1}),
    "e-02-softmax-sum-everything": ((np.zeros((2, 2)),), {}),
    "e-02-softmax-no-shift": (([1000., 999.],), {}),
    "e-02-softmax-global-max": (([[0., 1.], [1000., 1001.]],), {"axis": -1}),
    "e-02-softmax-axis-ignored": (([[0., 0.], [0., 1.]],), {"axis": 0}),
    "e-02-softmax-denominator-unshifted": (([1., 0.],), {}),
    "e-02-scores-full-transpose": (lambda: (np.random.default_rng(0).normal(size=(2, 3, 4)),
                                            np.random.default_rng(1).normal(size=(2, 3, 4))), {}),
    "e-02-scores-sqrt-tokens": (([[1., 0.], [0., 1.], [1., 1.]], [[1., 0.]]), {}),
    "e-02-scores-no-sqrt": (([[1.] * 4], [[1.] * 4]), {}),
    "e-02-scores-KQ": ((np.ones((3, 2)), np.ones((1, 2))), {}),
    "e-02-scores-sqrt-twice": (([[1.] * 16], [[1.] * 16]), {}),
    "e-02-scores-floor-division": (([[1., 1.]], [[1., 1.]]), {}),
    "e-02-scores-times-sqrt": (([[1.] * 4], [[1.] * 4]), {}),
})

def _rand(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.normal(size=s) for s in shapes)


I2 = np.eye(2)
CASES.update({
    "e-02-var-all-pairs": ((4, 1000, 0), {}),
    "e-02-var-sum-over-samples": ((4, 1000, 0), {}),
    "e-02-var-no-sum": ((4, 1000, 0), {}),
    "e-02-var-std": ((4, 1000, 0), {}),
    "e-02-var-mean-of-squares": ((4, 10, 0), {}),
    "e-02-var-scaled": ((4, 1000, 0), {}),
    "e-02-sdpa-softmax-query-axis": (([[1., 0.], [0., 1.]], [[1., 0.], [1., 1.]], I2), {}),
    "e-02-sdpa-softmax-axis0": (lambda: _rand((2, 3, 4), (2, 3, 4), (2, 3, 4)), {}),
    "e-02-sdpa-tuple-swapped": ((I2, I2, [[1., 2., 3.], [4., 5., 6.]]), {}),
    "e-02-sdpa-weights-transposed": (([[1., 0.], [0., 1.]], [[1., 0.], [1., 1.]], I2), {}),
    "e-02-sdpa-unscaled": (([[1.] * 4], [[1.] * 4, [0.] * 4], [[1.], [0.]]), {}),
    "e-02-sdpa-returns-scores": ((I2, I2, I2), {}),
    "e-02-sdpa-mixes-K": ((I2, I2, [[5., 5.], [7., 7.]]), {}),
    "e-02-sdpa-averaged-again": ((I2, I2, [[2., 2.], [2., 2.]]), {}),
    "e-02-sdpa-helper-full-transpose": (lambda: _rand((2, 3, 4), (2, 3, 4), (2, 3, 4)), {}),
    "e-02-one-no-scale": (([1.] * 4, [[1.] * 4, [0.] * 4], [[1.], [0.]]), {}),
    "e-02-one-shift-first-score": (([1.], [[-1000.], [1000.]], [[1.], [2.]]), {}),
    "e-02-one-assign-not-add": (([0.], [[0.], [0.]], [[2.], [4.]]), {}),
    "e-02-one-running-denominator": (([0.], [[0.], [0.]], [[2.], [4.]]), {}),
    "e-02-one-out-shape-dk": (([1., 0.], I2, np.ones((2, 3))), {}),
    "e-02-one-sqrt-Tk": (([2.], [[1.], [0.], [0.], [0.]], [[1.], [0.], [0.], [0.]]), {}),
    "e-02-one-not-normalised": (([0.], [[0.], [0.]], [[2.], [4.]]), {}),
    "e-02-self-V-from-Wk": ((I2, I2, I2, [[0., 1.], [1., 0.]]), {}),
    "e-02-self-weights-transposed": ((I2, [[0., 1.], [0., 0.]], [[0., 1.], [0., 0.]], I2), {}),
    "e-02-self-scale-d-model": (lambda: _rand((3, 4), (4, 2), (4, 2), (4, 2)), {}),
    "e-02-self-output-only": ((I2, I2, I2, I2), {}),
    "e-02-self-Q-K-swapped": ((I2, [[0., 1.], [0., 0.]], I2, I2), {}),
    "e-02-self-V-is-X": (lambda: _rand((3, 4), (4, 2), (4, 2), (4, 2)), {}),
})

F = Fraction
CASES.update({
    "e-03-kqs-QtK": (([[1, 0]], [[2, 3, 4]]), {}),
    "e-03-kqs-row-habit": (([[1, 0], [0, 1], [1, 1]], [[1, 0], [0, 1], [1, 1]]), {}),
    "e-03-kqs-float-zeros": (([[F(1, 3)]], [[F(1, 3)]]), {}),
    "e-03-kqs-elementwise": (([[1, 0], [0, 1]], [[1, 0], [0, 1]]), {}),
    "e-03-floor-int": (([[-1]],), {}),
    "e-03-floor-round": (([[3]],), {}),
    "e-03-floor-left-out": (([[3]],), {}),
    "e-03-floor-ceil": (([[1]],), {}),
    "e-03-sm3-rows": (([[0, 1], [0, 0]],), {}),
    "e-03-sm3-total": (([[0, 0], [0, 0]],), {}),
    "e-03-sm3-int-power": (([[0], [0], [0]],), {}),
    "e-03-sm3-fraction-of-float": (([[-1], [0]],), {}),
    "e-03-sm3-loop-over-rows-count": (([[0, 0, 0], [0, 0, 0]],), {}),
})

WS_ARGS = (WS_X, WS_WQ, WS_WK, WS_WV)
WS_ROW_ARGS = (WS_X.T, WS_WQ, WS_WK, WS_WV)
CASES.update({
    "e-03-abh-Z-A-transposed": (WS_ARGS, {}),
    "e-03-abh-scores-args-swapped": (WS_ARGS, {}),
    "e-03-abh-scale-skipped": (WS_ARGS, {}),
    "e-03-abh-K-from-WQ": (WS_ARGS, {}),
    "e-03-abh-dict-scaled-is-scores": (WS_ARGS, {}),
    "e-03-abh-helper-floor-int": (WS_ARGS, {}),
    "e-03-row-softmax-down-columns": (WS_ROW_ARGS, {}),
    "e-03-row-scores-KQt": (WS_ROW_ARGS, {}),
    "e-03-row-Z-At": (WS_ROW_ARGS, {}),
    "e-03-row-reuses-columns-untransposed": (WS_ROW_ARGS, {}),
    "e-03-row-projection-not-transposed": (WS_ROW_ARGS, {}),
})

CASES.update({
    "e-04-causal-triu": ((2,), {}),
    "e-04-causal-no-diagonal": ((1,), {}),
    "e-04-causal-float": ((2,), {}),
    "e-04-causal-inverted": ((2,), {}),
    "e-04-causal-one-ahead": ((2,), {}),
    "e-04-pad-le": (([1], 2), {}),
    "e-04-pad-transposed": (([1, 2, 0], 2), {}),
    "e-04-pad-no-newaxis": (([1, 3, 2], 3), {}),
    "e-04-pad-inverted": (([1], 2), {}),
    "e-04-pad-positions-from-1": (([2], 2), {}),
    "e-04-amask-pads-queries": (([1], 2), {"causal": False}),
    "e-04-amask-no-broadcast-noncausal": (([2, 1], 2), {"causal": False}),
    "e-04-amask-or": (([2], 2), {"causal": True}),
    "e-04-amask-flag-ignored": (([2], 2), {"causal": False}),
    "e-04-amask-helper-no-diagonal": (([2], 2), {"causal": True}),
})

CM2 = np.array([[True, False], [True, True]])
CASES.update({
    "e-04-msm-mask-after": (([0., 0.], [True, False]), {}),
    "e-04-msm-where-inverted": (([1., 2.], [True, False]), {}),
    "e-04-msm-fill-minus-1e9": (([1., 2.], [False, False]), {}),
    "e-04-msm-empty-row-nan": (([1., 2.], [False, False]), {}),
    "e-04-msm-shift-by-unmasked-max": (([0., 1., 900.], [True, True, False]), {}),
    "e-04-msm-sum-no-keepdims": ((np.zeros((2, 2)), CM2), {}),
    "e-04-msm-inplace-index": (lambda: (np.zeros((3, 2, 2)), CM2), {}),
    "e-04-matt-none-as-float-ones": ((np.eye(2), np.eye(2), np.eye(2)), {}),
    "e-04-matt-no-scale": (([[1.] * 4], [[1.] * 4, [0.] * 4], [[1.], [0.]]), {}),
    "e-04-matt-none-masks-everything": ((np.eye(2), np.eye(2), np.eye(2)), {}),
    "e-04-matt-mask-transposed": ((np.eye(2), np.eye(2), np.eye(2), CM2), {}),
    "e-04-matt-helper-mask-after": ((np.eye(2), np.eye(2), np.eye(2), CM2), {}),
})

def causal_layer(X):
    return r_masked_attention(X, X, X, r_causal_mask(len(X)))[0]


def unmasked_layer(X):
    return r_masked_attention(X, X, X)[0]


def look_ahead_one(X):
    return np.roll(X, -1, axis=0)


def leak_into_1(X):
    Y = X.copy()
    Y[1] = X[2]
    return Y


def leak_into_0(X):
    Y = X.copy()
    Y[0] = X[1]
    return Y


CASES.update({
    "e-04-isc-replaces-token-t": ((causal_layer, 6, 4, 0), {}),
    "e-04-isc-no-copy": ((causal_layer, 6, 4, 0), {}),
    "e-04-isc-compares-before-t": ((look_ahead_one, 6, 4, 0), {}),
    "e-04-isc-return-in-loop": ((leak_into_1, 6, 4, 0), {}),
    "e-04-isc-starts-at-1": ((leak_into_0, 6, 4, 0), {}),
    "e-04-isc-compares-everything": ((causal_layer, 6, 4, 0), {}),
    "e-04-isc-runs-old-X": ((unmasked_layer, 6, 4, 0), {}),
    "e-04-cmc-tril": ((2,), {}),
    "e-04-cmc-negated": ((1,), {}),
    "e-04-cmc-k-minus-1": ((2,), {}),
    "e-04-cmc-fliplr": ((2,), {}),
    "e-04-cmc-float": ((2,), {}),
    "e-04-mha-not-inverted": (([1], 2), {}),
    "e-04-mha-numpy": (([1], 2), {}),
    "e-04-mha-float": (([1], 2), {}),
    "e-04-mha-gt": (([1], 2), {}),
    "e-04-mha-transposed": (([1, 2, 2], 2), {}),
    "e-04-prefix-column-normalised": (([[1.], [1.]],), {}),
    "e-04-prefix-no-newaxis": (([[2.], [4.]],), {}),
    "e-04-prefix-T-from-features": ((np.ones((3, 2)),), {}),
    "e-04-prefix-triu": (([[2.], [4.]],), {}),
    "e-04-prefix-X-times-W": (([[1., 2.], [3., 4.]],), {}),
    "e-04-prefix-sum": (([[2.], [4.]],), {}),
    "e-04-prefix-divide-by-T": (([[2.], [4.]],), {}),
})

# @@CASES@@




# ----------------------------------------------------------------------------- controls
# The correct helpers that composite answers include must equal the references, so that
# each composite answer carries only its one stated mistake.

def controls():
    rng = np.random.default_rng(7)
    F = Fraction
    rows = []

    def agree(name, source, fname, inputs):
        ns = load(source)
        bad = [i for i, args in enumerate(inputs) if differs(REF[fname](*args), ns[fname](*args))]
        rows.append((f"control {name}", not bad, "matches the reference" if not bad else f"differs on inputs {bad}"))

    agree("softmax", S.L02 + S.SOFTMAX_OK, "softmax",
          [(rng.normal(size=(3, 4)),), ([1000., -1000., 3.],), (rng.normal(size=(2, 3, 4)), 1)])
    agree("attention_scores", S.L02 + S.SCORES_OK, "attention_scores",
          [(rng.normal(size=(3, 4)), rng.normal(size=(5, 4))),
           (rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)))])
    agree("scaled_dot_product_attention", S.SDPA_BASE + S.SDPA_OK, "scaled_dot_product_attention",
          [(rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 2)))])
    ws = (WS_X, WS_WQ, WS_WK, WS_WV)
    agree("key_query_scores", S.L03 + S.KQS_OK, "key_query_scores",
          [([[1, 2, 0], [F(1, 3), -1, 2]], [[1, 0], [2, F(1, 2)]])])
    agree("floor_half", S.L03 + S.FLOOR_OK, "floor_half", [([[-1, 3, 0], [1, -3, F(5, 2)]],)])
    agree("softmax3_columns", S.L03 + S.SM3_OK, "softmax3_columns", [([[0, 1, -1], [2, 0, 0]],)])
    agree("attention_by_hand", S.ABH_BASE + S.ABH_OK, "attention_by_hand", [ws])
    agree("causal_mask", S.L04 + S.CAUSAL_OK, "causal_mask", [(1,), (4,)])
    agree("padding_mask", S.L04 + S.PAD_OK, "padding_mask", [([0, 3, 1], 3)])
    agree("masked_softmax", S.L04 + S.MSM_OK, "masked_softmax",
          [(rng.normal(size=(2, 3, 3)), np.tril(np.ones((3, 3), bool))),
           ([1., 2.], [False, False]), ([0., 1., 900.], [True, True, False]),
           ([1000., -1000.], [True, True])])
    return rows


def main():
    results = controls()
    ids = [w.id for w in S.WRONG]
    assert len(ids) == len(set(ids)), "duplicate ids"
    for w in S.WRONG:
        try:
            ns = load(w.source)
        except Exception as exc:  # noqa: BLE001
            results.append((w.id, False, f"source does not run: {exc!r}"))
            continue
        if w.exercise.startswith("worksheet_"):
            if "WORKSHEET" not in ns:
                results.append((w.id, False, "WORKSHEET not defined"))
                continue
            ok, note = check_worksheet(ns, w.exercise[len("worksheet_"):])
            results.append((w.id, ok, note))
            continue
        if w.exercise not in ns:
            results.append((w.id, False, "exercise name not defined"))
            continue
        if w.id not in CASES:
            results.append((w.id, False, "no case"))
            continue
        args, kwargs = CASES[w.id]
        if callable(args):
            args = args()
        if w.exercise == "score_variance":
            v0, v1 = r_score_variance_both(*args)
            got = outcome(ns[w.exercise], args, kwargs)
            if got[0] == "raise":
                results.append((w.id, True, f"answer raises {got[1]!r}"))
            else:
                g = float(np.asarray(got[1]))
                ok = not (np.isclose(g, v0, rtol=1e-9) or np.isclose(g, v1, rtol=1e-9))
                results.append((w.id, ok, f"{g:.6g} vs var {v0:.6g} (ddof=0) / {v1:.6g} (ddof=1)"))
            continue
        ref = outcome(REF[w.exercise], args, kwargs)
        got = outcome(ns[w.exercise], args, kwargs)
        if ref[0] == "raise" and got[0] == "raise":
            ok, note = False, f"both raise ({ref[1]!r})"
        elif ref[0] != got[0]:
            ok = True
            note = (f"answer raises {type(got[1]).__name__}: {got[1]}" if got[0] == "raise"
                    else "answer returns where the reference raises ValueError")
            if ref[0] == "raise" and not isinstance(ref[1], ValueError):
                ok, note = False, f"reference raised {ref[1]!r}"
        else:
            ok = differs(ref[1], got[1])
            note = "values differ" if ok else "SAME as reference"
        results.append((w.id, ok, note))
    bad = 0
    for rid, ok, note in results:
        print(f"{'ok  ' if ok else 'FAIL'} {rid}: {note}"[:200])
        bad += not ok
    counts = {}
    for w in S.WRONG:
        counts[w.exercise] = counts.get(w.exercise, 0) + 1
    print(f"\n{len(S.WRONG)} answers (+ {len(results) - len(S.WRONG)} controls), {bad} FAIL; per exercise: {counts}")
    return bad


if __name__ == "__main__":
    sys.exit(1 if main() else 0)
