"""Verify that every answer in set_c_01_04 differs from an independent correct computation.

Run from anywhere with PYTHONPATH=/work/main (courseware and grader.learner.validation import).
"""
import math
import re
import sys
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import set_c_01_04 as S  # noqa: E402

warnings.filterwarnings("ignore")
np.seterr(all="ignore")


# ------------------------------------------------------------ independent references
def r_matmul(A, B):
    A, B = np.asarray(A, float), np.asarray(B, float)
    n, k = A.shape
    m = B.shape[1]
    return np.array([[sum(A[i, p] * B[p, j] for p in range(k)) for j in range(m)] for i in range(n)])


def r_softmax(x, axis=-1):
    x = np.asarray(x, float)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def r_scores(Q, K):
    Q, K = np.asarray(Q, float), np.asarray(K, float)
    return np.matmul(Q, np.swapaxes(K, -1, -2)) / math.sqrt(Q.shape[-1])


def r_sdpa(Q, K, V):
    w = r_softmax(r_scores(Q, K), -1)
    return np.matmul(w, np.asarray(V, float)), w


def r_score_variance(d_k, n, seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n, d_k))
    k = rng.standard_normal((n, d_k))
    return np.var(np.einsum("nd,nd->n", q, k))


def r_one_query(q, K, V):
    q, K, V = (np.asarray(a, float) for a in (q, K, V))
    s = np.array([q.dot(k) for k in K]) / math.sqrt(len(q))
    w = np.exp(s - s.max()); w /= w.sum()
    return (w[:, None] * V).sum(0)


def r_self_attention(X, Wq, Wk, Wv):
    X = np.asarray(X, float)
    return r_sdpa(X @ Wq, X @ Wk, X @ Wv)


def r_causal(T):
    return np.array([[j <= i for j in range(T)] for i in range(T)])


def r_padding(lengths, T):
    return np.array([[t < L for t in range(T)] for L in lengths])


def r_attention_mask(lengths, T, causal=True):
    pad = r_padding(lengths, T)
    m = np.broadcast_to(pad[:, None, :], (len(lengths), T, T)).copy()
    if causal:
        m &= r_causal(T)[None]
    return m


def r_masked_softmax(scores, mask):
    scores = np.asarray(scores, float)
    mask = np.broadcast_to(mask, scores.shape)
    out = np.zeros_like(scores)
    for idx in np.ndindex(scores.shape[:-1]):
        row, m = scores[idx], mask[idx]
        if m.any():
            s = row[m]
            e = np.exp(s - s.max())
            out[idx][m] = e / e.sum()
    return out


def r_masked_attention(Q, K, V, mask=None):
    s = r_scores(Q, K)
    if mask is None:
        mask = np.ones(s.shape, bool)
    w = r_masked_softmax(s, mask)
    return np.matmul(w, np.asarray(V, float)), w


def r_prefix(X):
    X = np.asarray(X, float)
    return np.cumsum(X, axis=-2) / np.arange(1, X.shape[-2] + 1)[:, None]


def r_mha_mask(lengths, T):
    import torch
    return torch.tensor([[t >= L for t in range(T)] for L in lengths], dtype=torch.bool)


Fr = lambda M: np.array([[Fraction(v) for v in row] for row in M], dtype=object)


def r_kq(K, Q):
    K, Q = Fr(K), Fr(Q)
    return np.array([[sum((K[p, i] * Q[p, j] for p in range(K.shape[0])), Fraction(0))
                      for j in range(Q.shape[1])] for i in range(K.shape[1])], dtype=object)


def r_floor_half(S_):
    return np.array([[Fraction(math.floor(Fraction(v) / 2)) for v in row] for row in S_], dtype=object)


def r_softmax3(S_):
    P = np.array([[Fraction(3) ** int(v) for v in row] for row in S_], dtype=object)
    sums = [sum(P[:, j], Fraction(0)) for j in range(P.shape[1])]
    return np.array([[P[i, j] / sums[j] for j in range(P.shape[1])] for i in range(P.shape[0])], dtype=object)


def r_by_hand(X, Wq, Wk, Wv):
    X, Wq, Wk, Wv = Fr(X), Fr(Wq), Fr(Wk), Fr(Wv)
    mm = lambda a, b: r_kq(a.T, b)
    Q, K, V = mm(Wq, X), mm(Wk, X), mm(Wv, X)
    sc = r_kq(K, Q)
    sl = r_floor_half(sc)
    A = r_softmax3(sl)
    Z = mm(V, A)
    return dict(Q=Q, K=K, V=V, scores=sc, scaled=sl, A=A, Z=Z)


def r_rows(Xr, Wq, Wk, Wv):
    d = r_by_hand(np.asarray(Xr, dtype=object).T, Wq, Wk, Wv)
    return {k: v.T for k, v in d.items()}


def r_is_causal(attend, T, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, d))
    before = attend(X)
    for t in range(T):
        X2 = X.copy()
        X2[t + 1:] = rng.normal(size=(T - t - 1, d))
        if not np.allclose(attend(X2)[:t + 1], before[:t + 1]):
            return False
    return True


# ------------------------------------------------------------ comparison helpers
def differs(got, ref):
    """True when got is not (numerically) the reference: other type, shape or values."""
    if isinstance(ref, tuple):
        if not isinstance(got, tuple) or len(got) != len(ref):
            return True
        return any(differs(g, r) for g, r in zip(got, ref))
    if isinstance(ref, dict):
        if not isinstance(got, dict) or set(got) != set(ref):
            return True
        return any(differs(got[k], ref[k]) for k in ref)
    if isinstance(ref, (bool, np.bool_)):
        return bool(got) != bool(ref) or not isinstance(got, (bool, np.bool_))
    try:
        import torch
        if isinstance(ref, torch.Tensor):
            return (not isinstance(got, torch.Tensor) or got.dtype != ref.dtype
                    or tuple(got.shape) != tuple(ref.shape) or not torch.equal(got, ref))
    except ImportError:
        pass
    ref_a = np.asarray(ref)
    got_a = np.asarray(got)
    if got_a.shape != ref_a.shape:
        return True
    if ref_a.dtype == object:  # exact fractions: must be Fractions and equal
        return not all(isinstance(g, Fraction) and g == r for g, r in zip(got_a.flat, ref_a.flat))
    if ref_a.dtype == bool:
        return got_a.dtype != bool or not np.array_equal(got_a, ref_a)
    if not np.issubdtype(got_a.dtype, np.number):
        return True
    return not np.allclose(got_a.astype(float), ref_a, equal_nan=False, atol=1e-9)


def raises_valueerror(f, *a):
    try:
        f(*a)
    except ValueError as e:
        return bool(str(e))
    return False


def wrong_call(f, ref, *args):
    """Wrong if f raises on a valid input or returns something other than ref(*args)."""
    try:
        got = f(*args)
    except Exception as exc:  # noqa: BLE001 - a crash on a valid input is a wrong result
        return True, f"raises {type(exc).__name__}"
    return differs(got, ref(*args)), "differs" if differs(got, ref(*args)) else "same"


def parse_steps(text):
    rows = []
    for line in text.splitlines():
        line = line.split("#")[0].strip()
        if line:
            rows.append([Fraction(tok) for tok in line.split()])
    return np.array(rows, dtype=object)


rng = np.random.default_rng(123)
R = lambda *s: rng.normal(size=s)

# ------------------------------------------------------------ cases, one per id
A22 = np.array([[1., 2.], [3., 4.]])
I2 = np.eye(2)
CASES = {
    "c34-01-dot-int-accumulator": lambda f, w: wrong_call(f, r_matmul, [[0.5, 0.25]], [[1.0], [1.0]]),
    "c34-01-dot-row-of-B": lambda f, w: wrong_call(f, r_matmul, A22, [[0., 1.], [0., 0.]]),
    "c34-01-dot-shape-from-A": lambda f, w: wrong_call(f, r_matmul, R(2, 3), R(3, 2)),
    "c34-01-dot-uses-at": lambda f, w: ("@" in w.source.split("def matmul_dot")[1]
                                        and not differs(f(A22, I2), A22), "values right, uses forbidden @"),
    "c34-01-rows-assign-not-add": lambda f, w: wrong_call(f, r_matmul, [[1., 2.]], [[1.], [1.]]),
    "c34-01-rows-weights-swapped-index": lambda f, w: wrong_call(f, r_matmul, A22, I2),
    "c34-01-rows-start-from-ones": lambda f, w: wrong_call(f, r_matmul, [[1.]], [[2.]]),
    "c34-01-cols-weight-index-swapped": lambda f, w: wrong_call(f, r_matmul, I2, A22),
    "c34-01-cols-reset-inside-loop": lambda f, w: wrong_call(f, r_matmul, [[1., 1.]], [[1.], [1.]]),
    "c34-01-cols-row-of-A": lambda f, w: wrong_call(f, r_matmul, A22, I2),
    "c34-01-outer-loop-over-n": lambda f, w: wrong_call(f, r_matmul, [[1., 1.]], [[1.], [1.]]),
    "c34-01-outer-args-reversed": lambda f, w: wrong_call(f, r_matmul, [[1., 0.], [0., 0.]], [[0., 1.], [0., 0.]]),
    "c34-01-outer-row-col-of-wrong-operand": lambda f, w: wrong_call(f, r_matmul, A22, I2),
    "c34-01-batched-np-dot": lambda f, w: wrong_call(f, np.matmul, R(2, 3, 4), R(2, 4, 5)),
    "c34-01-batched-einsum-fixed-batch": lambda f, w: wrong_call(f, np.matmul, R(2, 3), R(4, 3, 5)),
    "c34-01-batched-swapaxes-B": lambda f, w: wrong_call(f, np.matmul, R(2, 3, 3), R(2, 3, 3)),
    "c34-01-einsum-output-kq": lambda f, w: wrong_call(f, lambda Q, K: np.matmul(Q, np.swapaxes(K, -1, -2)), R(3, 2), R(4, 2)),
    "c34-01-einsum-scaled": lambda f, w: wrong_call(f, lambda Q, K: np.matmul(Q, np.swapaxes(K, -1, -2)), [[1., 1.]], [[1., 1.]]),
    "c34-01-einsum-sums-d-and-k": lambda f, w: wrong_call(f, lambda Q, K: np.matmul(Q, np.swapaxes(K, -1, -2)), R(2, 3), R(4, 3)),
    "c34-01-wavg-allclose-tolerance": lambda f, w: (not raises_valueerror(f, [[0.5, 0.500005]], [[1.0], [2.0]]), "no ValueError"),
    "c34-01-wavg-no-negative-check": lambda f, w: (not raises_valueerror(f, [[1.5, -0.5]], [[1.0], [2.0]]), "no ValueError"),
    "c34-01-wavg-sum-over-columns": lambda f, w: wrong_call(f, lambda W, V: np.asarray(W) @ np.asarray(V), [[1.0, 0.0], [1.0, 0.0]], [[1.0], [2.0]]),
    "c34-01-wavg-only-too-large": lambda f, w: (not raises_valueerror(f, [[0.25, 0.25]], [[1.0], [2.0]]), "no ValueError"),
}

def _inplace(f, w):
    x = np.array([1.0, 2.0])
    got = f(x)
    return (not differs(got, r_softmax([1.0, 2.0])) and not np.allclose(x, [1.0, 2.0]), "input mutated")

Wsa = [R(6, 3) for _ in range(3)]
Xsa = R(4, 6)
CASES.update({
    "c34-02-softmax-global-max": lambda f, w: wrong_call(f, r_softmax, [[1000., 999.], [-1000., -1001.]], -1),
    "c34-02-softmax-max-no-keepdims": lambda f, w: wrong_call(f, r_softmax, [[0., 0.], [5., 0.]], -1),
    "c34-02-softmax-sum-last-axis": lambda f, w: wrong_call(f, r_softmax, [[1., 2.], [3., 4.]], 0),
    "c34-02-softmax-subtract-min": lambda f, w: wrong_call(f, r_softmax, [-1000., 1000.]),
    "c34-02-softmax-inplace-input": _inplace,
    "c34-02-scores-full-transpose": lambda f, w: wrong_call(f, r_scores, R(2, 3, 4), R(2, 3, 4)),
    "c34-02-scores-divide-by-dk": lambda f, w: wrong_call(f, r_scores, [[1., 1, 1, 1]], [[1., 1, 1, 1]]),
    "c34-02-scores-sqrt-tq": lambda f, w: wrong_call(f, r_scores, [[1., 1, 1, 1]], [[1., 1, 1, 1]]),
    "c34-02-scores-multiply-sqrt": lambda f, w: wrong_call(f, r_scores, [[1., 1, 1, 1]], [[1., 1, 1, 1]]),
    "c34-02-variance-all-products": lambda f, w: wrong_call(f, r_score_variance, 64, 4000, 0),
    "c34-02-variance-sum-axis0": lambda f, w: wrong_call(f, r_score_variance, 16, 1000, 1),
    "c34-02-variance-all-pairs": lambda f, w: wrong_call(f, r_score_variance, 8, 500, 2),
    "c34-02-variance-std": lambda f, w: wrong_call(f, r_score_variance, 16, 4000, 0),
    "c34-02-sdpa-softmax-query-axis": lambda f, w: wrong_call(f, r_sdpa, R(3, 4), R(3, 4), R(3, 4)),
    "c34-02-sdpa-double-scale": lambda f, w: wrong_call(f, r_sdpa, R(3, 4), R(3, 4), R(3, 4)),
    "c34-02-sdpa-returns-swapped": lambda f, w: wrong_call(f, r_sdpa, R(3, 4), R(3, 4), R(3, 2)),
    "c34-02-sdpa-weights-transposed": lambda f, w: wrong_call(f, r_sdpa, R(3, 3), R(3, 3), R(3, 3)),
    "c34-02-one-query-no-scale": lambda f, w: wrong_call(f, r_one_query, [1., 1, 1, 1], [[1., 1, 1, 1], [0., 0, 0, 0]], [[1.], [0.]]),
    "c34-02-one-query-running-denominator": lambda f, w: wrong_call(f, r_one_query, [0.], [[0.], [0.]], [[1.], [1.]]),
    "c34-02-one-query-out-size-dk": lambda f, w: wrong_call(f, r_one_query, R(3), R(2, 3), R(2, 2)),
    "c34-02-self-attn-copy-paste-key": lambda f, w: wrong_call(f, r_self_attention, Xsa, *Wsa),
    "c34-02-self-attn-values-unprojected": lambda f, w: wrong_call(f, r_self_attention, Xsa, *Wsa),
    "c34-02-self-attn-column-projection": lambda f, w: wrong_call(f, r_self_attention, Xsa, *Wsa),
})

from courseware.worksheet import X as WS_X, W_Q as WS_WQ, W_K as WS_WK, W_V as WS_WV  # noqa: E402
WS_KEY = r_by_hand(WS_X, WS_WQ, WS_WK, WS_WV)


def ws_case(step):
    def case(ws, w):
        typed = parse_steps(ws[step])
        return differs(typed, WS_KEY[step]), f"typed {step} differs from the key"
    return case


for _id in ["Q-missed-term", "Q-transposed", "K-minus-sign-dropped", "K-negative-term-skipped",
            "V-transposed", "V-missed-term", "scores-QtK", "scores-sign", "scaled-truncate",
            "scaled-round-half-up", "scaled-divide-by-3", "A-rows-normalised",
            "A-from-unscaled-scores", "A-third-as-zero", "Z-weights-transposed", "Z-powers-not-weights"]:
    CASES["c34-03-ws-" + _id] = ws_case(_id.split("-")[0])

WS_ARGS = (WS_X, WS_WQ, WS_WK, WS_WV)
CASES.update({
    "c34-03-kq-swapped-product": lambda f, w: wrong_call(f, r_kq, R(2, 3).round(), R(2, 2).round()),
    "c34-03-kq-float-product": lambda f, w: wrong_call(f, r_kq, [[Fraction(1, 3)]], [[3]]),
    "c34-03-kq-prescaled": lambda f, w: wrong_call(f, r_kq, [[1]], [[2]]),
    "c34-03-floor-half-int-first": lambda f, w: wrong_call(f, r_floor_half, [[Fraction(-1, 2)]]),
    "c34-03-floor-half-floor-then-halve": lambda f, w: wrong_call(f, r_floor_half, [[3]]),
    "c34-03-floor-half-np-floor": lambda f, w: wrong_call(f, r_floor_half, [[1, 2]]),
    "c34-03-softmax3-total-sum": lambda f, w: wrong_call(f, r_softmax3, [[0, 0], [0, 1]]),
    "c34-03-softmax3-rows": lambda f, w: wrong_call(f, r_softmax3, [[0, 1], [0, 0]]),
    "c34-03-softmax3-colsum-broadcast-rows": lambda f, w: wrong_call(f, r_softmax3, [[0, 1], [0, 0]]),
    "c34-03-by-hand-args-swapped": lambda f, w: wrong_call(f, r_by_hand, *WS_ARGS),
    "c34-03-by-hand-softmax-of-scores": lambda f, w: wrong_call(f, r_by_hand, *WS_ARGS),
    "c34-03-by-hand-values-from-WK": lambda f, w: wrong_call(f, r_by_hand, *WS_ARGS),
    "c34-03-by-hand-Z-A-transposed": lambda f, w: wrong_call(f, r_by_hand, *WS_ARGS),
    "c34-03-rows-softmax-columns-reused": lambda f, w: wrong_call(f, r_rows, WS_X.T, *WS_ARGS[1:]),
    "c34-03-rows-scores-key-major": lambda f, w: wrong_call(f, r_rows, WS_X.T, *WS_ARGS[1:]),
    "c34-03-rows-Z-AT-V": lambda f, w: wrong_call(f, r_rows, WS_X.T, *WS_ARGS[1:]),
})

import torch  # noqa: E402

roll_attend = lambda X: X + np.roll(X, -1, axis=0)
ident = lambda X: X.copy()
peek1 = lambda X: X + np.where(np.arange(len(X))[:, None] == 1, np.roll(X, -1, axis=0), 0)
causal2 = np.array([[True, False], [True, True]])


def _mha_float(f, w):
    got = f([2], 3)
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(4, 2, batch_first=True).eval()
    x = torch.randn(1, 3, 4)
    with torch.no_grad():
        _, wts = mha(x, x, x, key_padding_mask=got)
    return (got.dtype != torch.bool and float(wts[0, :, 2].min()) > 0, f"dtype {got.dtype}, pad weight {float(wts[0, :, 2].min()):.3f}")


CASES.update({
    "c34-04-causal-triu": lambda f, w: wrong_call(f, r_causal, 2),
    "c34-04-causal-strict-lower": lambda f, w: wrong_call(f, r_causal, 1),
    "c34-04-causal-float-dtype": lambda f, w: (f(3).dtype != bool and np.array_equal(f(3), r_causal(3)), "float dtype, right pattern"),
    "c34-04-padding-transposed-grid": lambda f, w: wrong_call(f, r_padding, [3, 2], 3),
    "c34-04-padding-le": lambda f, w: wrong_call(f, r_padding, [2], 3),
    "c34-04-padding-no-column": lambda f, w: wrong_call(f, r_padding, [1, 2, 3], 3),
    "c34-04-attnmask-pads-queries": lambda f, w: wrong_call(f, r_attention_mask, [1], 2, False),
    "c34-04-attnmask-or": lambda f, w: wrong_call(f, r_attention_mask, [2], 2, True),
    "c34-04-attnmask-noncausal-unbroadcast": lambda f, w: wrong_call(f, r_attention_mask, [3, 2], 3, False),
    "c34-04-msoftmax-fill-1e9": lambda f, w: wrong_call(f, r_masked_softmax, [[1.0, 2.0]], np.array([[False, False]])),
    "c34-04-msoftmax-empty-row-nan": lambda f, w: wrong_call(f, r_masked_softmax, [[1.0, 2.0]], np.array([[False, False]])),
    "c34-04-msoftmax-mask-inverted": lambda f, w: wrong_call(f, r_masked_softmax, [1.0, 2.0, 3.0], np.array([True, True, False])),
    "c34-04-msoftmax-max-before-mask": lambda f, w: wrong_call(f, r_masked_softmax, [0.0, 1.0, 900.0], np.array([True, True, False])),
    "c34-04-msoftmax-sum-over-queries": lambda f, w: wrong_call(f, r_masked_softmax, np.zeros((2, 2)), causal2),
    "c34-04-mattn-no-scale": lambda f, w: wrong_call(f, r_masked_attention, R(3, 4), R(3, 4), R(3, 4)),
    "c34-04-mattn-full-transpose": lambda f, w: wrong_call(f, r_masked_attention, R(2, 3, 4), R(2, 3, 4), R(2, 3, 4), r_causal(3)),
    "c34-04-mattn-sqrt-num-keys": lambda f, w: wrong_call(f, r_masked_attention, R(3, 4), R(3, 4), R(3, 4)),
    "c34-04-mattn-none-means-causal": lambda f, w: wrong_call(f, r_masked_attention, R(3, 4), R(3, 4), R(3, 4)),
    "c34-04-iscausal-off-by-one": lambda f, w: wrong_call(f, r_is_causal, roll_attend, 4, 2),
    "c34-04-iscausal-replaces-token-t": lambda f, w: wrong_call(f, r_is_causal, ident, 3, 2),
    "c34-04-iscausal-no-copy": lambda f, w: wrong_call(f, r_is_causal, ident, 3, 2),
    "c34-04-iscausal-return-in-loop": lambda f, w: wrong_call(f, r_is_causal, peek1, 3, 2),
    "c34-04-colmask-same-as-rows": lambda f, w: wrong_call(f, lambda T: r_causal(T).T, 2),
    "c34-04-colmask-strict-upper": lambda f, w: wrong_call(f, lambda T: r_causal(T).T, 1),
    "c34-04-mha-course-polarity": lambda f, w: wrong_call(f, r_mha_mask, [2], 3),
    "c34-04-mha-strict-greater": lambda f, w: wrong_call(f, r_mha_mask, [2], 3),
    "c34-04-mha-float-mask": _mha_float,
    "c34-04-prefix-no-column": lambda f, w: wrong_call(f, r_prefix, [[1.0], [1.0]]),
    "c34-04-prefix-zero-based-count": lambda f, w: wrong_call(f, r_prefix, [[2.0], [4.0]]),
    "c34-04-prefix-divide-by-T": lambda f, w: wrong_call(f, r_prefix, [[2.0], [4.0]]),
    "c34-04-prefix-cumsum": lambda f, w: ("np.cumsum" in w.source and not differs(f(Xp := R(2, 4, 3)), r_prefix(Xp)),
                                         "values right, uses np.cumsum"),
})


# ------------------------------------------------------------ run
def main():
    ids = [w.id for w in S.WRONG]
    assert len(ids) == len(set(ids)), "duplicate ids"
    n_fail = 0
    for w in S.WRONG:
        ns = {"__name__": "answer"}
        status, note = "FAIL", ""
        try:
            exec(compile(w.source, w.id, "exec"), ns)
            target = ns["WORKSHEET"] if w.exercise.startswith("worksheet_") else ns[w.exercise]
            case = CASES.get(w.id)
            if case is None:
                note = "no case written"
            else:
                ok, note = case(target, w)
                status = "ok" if ok else "FAIL"
        except Exception as exc:  # noqa: BLE001
            note = f"source did not load: {type(exc).__name__}: {exc}"
        n_fail += status != "ok"
        print(f"{status:4s} {w.id:48s} {w.exercise:28s} {note}")
    print(f"{len(S.WRONG) - n_fail} ok, {n_fail} FAIL, of {len(S.WRONG)}")
    return 1 if n_fail else 0


if __name__ == "__main__":
    sys.exit(main())
