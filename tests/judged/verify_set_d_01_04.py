"""Check that every answer of set_d_01_04 differs from an independent computation on the
input named in its `wrong_on`. Run with PYTHONPATH set to the repository. Prints one line per answer."""
import math
import sys
import warnings
from fractions import Fraction as F
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from set_d_01_04 import WRONG  # noqa: E402

warnings.filterwarnings("ignore")
np.seterr(all="ignore")
a = np.array
I2 = np.eye(2)


class Raised:
    def __init__(self, exc):
        self.exc = exc


# ---------------------------------------------------------------- independent references
def ref_matmul(A, B):
    A, B = a(A, float), a(B, float)
    return a([[sum(A[i, p] * B[p, j] for p in range(A.shape[1])) for j in range(B.shape[1])]
              for i in range(A.shape[0])])


def ref_softmax(x, axis=-1):
    x = np.moveaxis(a(x, float), axis, -1)
    out = np.empty_like(x)
    for idx in np.ndindex(x.shape[:-1]):
        row = x[idx]
        e = [math.exp(v - max(row)) for v in row]
        out[idx] = [v / sum(e) for v in e]
    return np.moveaxis(out, -1, axis)


def ref_scores(Q, K):
    Q, K = a(Q, float), a(K, float)
    return np.einsum("...qd,...kd->...qk", Q, K) / math.sqrt(Q.shape[-1])


def ref_sdpa(Q, K, V):
    w = ref_softmax(ref_scores(Q, K))
    return np.einsum("...qk,...kd->...qd", w, a(V, float)), w


def ref_war(W, V):
    W, V = a(W, float), a(V, float)
    for row in W.reshape(-1, W.shape[-1]):
        if not all(math.isfinite(v) for v in row) or min(row) < 0 or not abs(sum(row) - 1) <= 1e-6:
            raise ValueError("bad row")
    return np.einsum("...nm,...md->...nd", W, V)


def ref_var(d_k, n, seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n, d_k))
    k = rng.standard_normal((n, d_k))
    return np.var(np.einsum("ij,ij->i", q, k))


def ref_one(q, K, V):
    return ref_sdpa(a([q], float), K, V)[0][0]


def ref_self(X, Wq, Wk, Wv):
    X = a(X, float)
    return ref_sdpa(X @ a(Wq, float), X @ a(Wk, float), X @ a(Wv, float))


def fr(M):
    return np.array([[F(v) for v in row] for row in M], dtype=object)


def ref_kqs(K, Q):
    K, Q = fr(K), fr(Q)
    return np.array([[sum((K[p, i] * Q[p, j] for p in range(K.shape[0])), F(0))
                      for j in range(Q.shape[1])] for i in range(K.shape[1])], dtype=object)


def ref_floor(S):
    return np.array([[F((F(v).numerator) // (2 * F(v).denominator)) for v in row] for row in S], dtype=object)


def ref_sm3(S):
    P = np.array([[F(3) ** int(v) for v in row] for row in S], dtype=object)
    sums = [sum(P[:, j], F(0)) for j in range(P.shape[1])]
    return np.array([[P[i, j] / sums[j] for j in range(P.shape[1])] for i in range(P.shape[0])], dtype=object)


def ref_abh(X, Wq, Wk, Wv):
    X, Wq, Wk, Wv = fr(X), fr(Wq), fr(Wk), fr(Wv)
    Q, K, V = Wq.dot(X), Wk.dot(X), Wv.dot(X)
    S = ref_kqs(K, Q)
    Sc = ref_floor(S)
    A = ref_sm3(Sc)
    return {"Q": Q, "K": K, "V": V, "scores": S, "scaled": Sc, "A": A, "Z": V.dot(A)}


def ref_rca(Xr, Wq, Wk, Wv):
    col = ref_abh(fr(Xr).T, Wq, Wk, Wv)
    return {k: v.T for k, v in col.items()}


def ref_causal(T):
    return a([[j <= i for j in range(T)] for i in range(T)], dtype=bool)


def ref_pad(lengths, T):
    return a([[t < L for t in range(T)] for L in lengths], dtype=bool)


def ref_am(lengths, T, causal=True):
    p = ref_pad(lengths, T)
    m = np.broadcast_to(p[:, None, :], (len(lengths), T, T)).copy()
    return m & ref_causal(T) if causal else m


def ref_ms(scores, mask):
    s = a(scores, float)
    mask = np.broadcast_to(a(mask, bool), s.shape)
    out = np.zeros_like(s)
    for idx in np.ndindex(s.shape[:-1]):
        allowed = [v for v, m in zip(s[idx], mask[idx]) if m]
        if not allowed:
            continue
        top = max(allowed)
        e = [math.exp(v - top) if m else 0.0 for v, m in zip(s[idx], mask[idx])]
        out[idx] = [v / sum(e) for v in e]
    return out


def ref_ma(Q, K, V, mask=None):
    sc = ref_scores(Q, K)
    w = ref_ms(sc, np.ones(sc.shape, bool) if mask is None else mask)
    return np.einsum("...qk,...kd->...qd", w, a(V, float)), w


def ref_is_causal(attend, T, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, d))
    before = np.array(attend(X.copy()), copy=True)
    for t in range(T):
        Y = X.copy()
        Y[t + 1:] = rng.normal(size=(T - t - 1, d))
        if not np.allclose(attend(Y)[:t + 1], before[:t + 1]):
            return False
    return True


def ref_cmc(T):
    return ref_causal(T).T.copy()


def ref_mha(lengths, T):
    return torch.tensor([[t >= L for t in range(T)] for L in lengths], dtype=torch.bool)


def ref_pa(X):
    X = a(X, float)
    return np.stack([X[..., : i + 1, :].mean(axis=-2) for i in range(X.shape[-2])], axis=-2)


def causal_layer(X):
    return ref_ma(X, X, X, ref_causal(len(X)))[0]


from courseware.worksheet import X as WX, W_Q as WQ, W_K as WK, W_V as WV  # noqa: E402

REF = {
    "matmul_dot": ref_matmul, "matmul_rows": ref_matmul, "matmul_cols": ref_matmul, "matmul_outer": ref_matmul,
    "batched_matmul": lambda A, B: np.einsum("...nk,...km->...nm", a(A, float), a(B, float)),
    "einsum_scores": lambda Q, K: ref_scores(Q, K) * math.sqrt(a(Q).shape[-1]),
    "weighted_average_rows": ref_war, "softmax": ref_softmax, "attention_scores": ref_scores,
    "score_variance": ref_var, "scaled_dot_product_attention": ref_sdpa, "attend_one_query": ref_one,
    "self_attention": ref_self, "key_query_scores": ref_kqs, "floor_half": ref_floor,
    "softmax3_columns": ref_sm3, "attention_by_hand": ref_abh, "row_convention_attention": ref_rca,
    "causal_mask": ref_causal, "padding_mask": ref_pad, "attention_mask": ref_am, "masked_softmax": ref_ms,
    "masked_attention": ref_ma, "is_causal": ref_is_causal, "causal_mask_columns": ref_cmc,
    "to_mha_key_padding_mask": ref_mha, "prefix_average": ref_pa,
}

rng = np.random.default_rng(0)
B3 = rng.normal(size=(2, 3, 4))
SQ = a([[1., 2.], [3., 4.]])
WS = (WX, WQ, WK, WV)
# id -> (args, kwargs): the input named in wrong_on
INPUT = {
    "d34-01-dot-row-of-b": ((SQ, SQ),), "d34-01-dot-zeros-like-a": ((np.ones((2, 3)), np.ones((3, 2))),),
    "d34-01-dot-range-m-minus-1": (([[1, 2]], SQ),),
    "d34-01-rows-b-index-i": ((SQ, I2),), "d34-01-rows-assign-not-accumulate": (([[1, 2]], I2),),
    "d34-01-rows-ones-init": (([[1, 0]], [[2, 3], [4, 5]]),),
    "d34-01-cols-row-of-a": ((SQ, I2),), "d34-01-cols-b-indices-swapped": ((I2, SQ),),
    "d34-01-cols-skip-first-p": (([[1, 2]], [[1], [1]]),),
    "d34-01-outer-row-and-column-swapped": ((SQ, I2),), "d34-01-outer-assign-in-loop": (([[1, 2]], [[1], [1]]),),
    "d34-01-outer-elementwise": ((I2, SQ),),
    "d34-01-batched-np-dot": ((rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 4, 5))),),
    "d34-01-batched-einsum-fixed-batch": ((np.ones((2, 3)), np.ones((3, 4))),),
    "d34-01-batched-sum-wrong-axis": ((np.ones((2, 2)), np.ones((2, 3))),),
    "d34-01-batched-loop-over-first-axis": ((rng.normal(size=(3, 4)), rng.normal(size=(2, 4, 5))),),
    "d34-01-einsum-output-transposed": ((np.ones((2, 4)), np.ones((3, 4))),),
    "d34-01-einsum-no-ellipsis": ((B3, B3),), "d34-01-einsum-k-as-dk": ((SQ, SQ),),
    "d34-01-einsum-scaled": (([[1, 0, 0, 0]], [[1, 0, 0, 0]]),),
    "d34-01-war-nan-passes": (([[0.5, 0.5], [np.nan, 1.0]], I2),),
    "d34-01-war-sum-over-columns": (([[1, 0], [1, 0]], I2),),
    "d34-01-war-no-negative-check": (([[1.5, -0.5]], [[1.0], [0.0]]),),
    "d34-01-war-renormalise": (([[1.0, 1.0]], [[1.0], [3.0]]),),
    "d34-01-war-allclose-tolerance": (([[0.5, 0.500005]], [[1.0], [1.0]]),),
    "d34-02-softmax-no-max-shift": (([1000.0, 1001.0],),),
    "d34-02-softmax-keepdims-forgotten": (([[0, 1], [2, 4]],),),
    "d34-02-softmax-sum-last-axis": (([[0, 1], [0, 0]],), {"axis": 0}),
    "d34-02-softmax-subtract-min": (([0.0, 1000.0],),),
    "d34-02-softmax-global-max": (([[0.0, 1.0], [-1000.0, -999.0]],),),
    "d34-02-scores-full-transpose": ((B3, B3),),
    "d34-02-scores-sqrt-num-keys": (([[1, 0, 0, 0]], [[1, 0, 0, 0]]),),
    "d34-02-scores-divide-by-dk": (([[1, 1, 1, 1]], [[1, 1, 1, 1]]),),
    "d34-02-scores-power-precedence": (([[1] * 9], [[1] * 9]),),
    "d34-02-scores-no-scale": (([[1, 1, 1, 1]], [[1, 1, 1, 1]]),),
    "d34-02-var-sum-axis0": ((4, 100, 0),), "d34-02-var-full-matrix": ((4, 100, 0),),
    "d34-02-var-no-sum": ((16, 1000, 0),), "d34-02-var-std": ((16, 1000, 0),),
    "d34-02-var-divided-by-dk": ((16, 1000, 0),),
    "d34-02-sdpa-softmax-query-axis": (([[1, 0], [0, 1], [1, 1]], I2, I2),),
    "d34-02-sdpa-tuple-swapped": ((np.ones((2, 4)), np.ones((2, 4)), np.ones((2, 3))),),
    "d34-02-sdpa-weights-transposed": (([[1, 0], [0, 0]], [[2, 0], [0, 0]], I2),),
    "d34-02-sdpa-scores-returned": (([[1, 0]], [[1, 0]], [[1.0]]),),
    "d34-02-sdpa-unscaled-scores": (([[2, 0]], [[1, 0], [0, 0]], I2),),
    "d34-02-one-no-max-shift": (([2000.0], [[1.0], [1.0]], [[1.0], [3.0]]),),
    "d34-02-one-no-scale": (([2, 0, 0, 0], [[1, 0, 0, 0], [0, 0, 0, 0]], [[1.0], [0.0]]),),
    "d34-02-one-running-total": (([0.0], [[0.0], [0.0]], [[1.0], [1.0]]),),
    "d34-02-one-shift-by-raw-max": (([-2000.0, 0, 0, 0], [[1, 0, 0, 0], [2, 0, 0, 0]], [[1.0], [0.0]]),),
    "d34-02-self-k-from-wq": ((I2, [[1, 0], [0, 0]], [[0, 1], [0, 0]], I2),),
    "d34-02-self-v-from-wk": ((I2, I2, I2, [[1], [2]]),),
    "d34-02-self-scaled-twice": (([[2, 0, 0, 0], [0, 0, 0, 0]], np.eye(4), np.eye(4), np.eye(4)),),
    "d34-02-self-residual-added": ((I2, I2, I2, I2),),
    "d34-03-kqs-qt-k": (([[1, 0]], [[1, 2, 3]]),), "d34-03-kqs-k-qt": (([[1, 2], [0, 0]], [[1, 0], [1, 0]]),),
    "d34-03-kqs-loop-off-by-one": (([[1], [1]], [[1], [1]]),), "d34-03-kqs-floats": (([[F(1, 3)]], [[1]]),),
    "d34-03-floor-int-truncates": (([[-1]],),), "d34-03-floor-round": (([[3]],),),
    "d34-03-floor-before-divide": (([[3]],),),
    "d34-03-sm3-int-base": (([[0], [1], [1]],),), "d34-03-sm3-rows": (([[0, 1], [0, 0]],),),
    "d34-03-sm3-total-sum": (([[0, 0], [0, 0]],),), "d34-03-sm3-fraction-whole-array": (([[0], [1], [1]],),),
    "d34-03-rca-v-unprojected-order": ((np.eye(3, dtype=int), np.eye(3, dtype=int), np.eye(3, dtype=int),
                                        [[0, 1, 0], [0, 0, 1], [1, 0, 0]]),),
    "d34-04-causal-triu": ((2,),), "d34-04-causal-diag-excluded": ((1,),), "d34-04-causal-float-dtype": ((2,),),
    "d34-04-causal-compare-flipped": ((3,),),
    "d34-04-pad-off-by-one": (([2], 3),), "d34-04-pad-axes-swapped": (([1, 2], 3),),
    "d34-04-pad-no-new-axis": (([2], 3),), "d34-04-pad-inverted": (([2], 3),),
    "d34-04-am-pad-on-queries": (([1], 2), {"causal": False}), "d34-04-am-no-broadcast": (([1], 2), {"causal": False}),
    "d34-04-am-or": (([1], 2), {"causal": True}), "d34-04-am-causal-ignored": (([2], 2), {"causal": False}),
    "d34-04-am-pad-rows-too": (([1], 2), {"causal": True}),
    "d34-04-ms-mask-after": (([0.0, 0.0], a([True, False])),),
    "d34-04-ms-fill-minus-1e9": (([1.0, 2.0], a([False, False])),),
    "d34-04-ms-empty-row-nan": (([1.0, 2.0], a([False, False])),),
    "d34-04-ms-mask-inverted": (([0.0, 1.0], a([True, False])),),
    "d34-04-ms-max-before-mask": (([0.0, 1.0, 900.0], a([True, True, False])),),
    "d34-04-ma-none-float-mask": (([[1.0]], [[1.0]], [[1.0]]),),
    "d34-04-ma-no-scale": (([[2.0, 0.0]], [[1.0, 0.0], [0.0, 0.0]], I2),),
    "d34-04-ma-full-transpose": ((B3, B3, B3),),
    "d34-04-ma-fill-zero": (([[0.0], [0.0]], [[0.0], [0.0]], [[1.0], [3.0]], a([[True, False], [True, True]])),),
    "d34-04-ic-replace-from-t": ((causal_layer, 3, 2),),
    "d34-04-ic-compare-all": ((lambda X: X, 3, 2),),
    "d34-04-ic-compare-before-t": ((lambda X: np.roll(X, -1, axis=0), 3, 2),),
    "d34-04-ic-return-in-loop": ((lambda X: np.vstack([X[:1], X[2:], X[-1:]]), 3, 2),),
    "d34-04-ic-no-copy": ((lambda X: X[::-1], 3, 2),),
    "d34-04-cmc-tril": ((2,),), "d34-04-cmc-diag-excluded": ((1,),), "d34-04-cmc-float": ((2,),),
    "d34-04-mha-numpy": (([2], 3),), "d34-04-mha-not-inverted": (([2], 3),), "d34-04-mha-off-by-one": (([2], 3),),
    "d34-04-pa-divide-columns": (([[1.0], [3.0]],),), "d34-04-pa-divide-by-T": (([[2.0], [4.0]],),),
    "d34-04-pa-transposed-w": (([[1.0], [3.0]],),), "d34-04-pa-diag-excluded": (([[1.0], [3.0]],),),
}
for ex in ("attention_by_hand",):
    for w in WRONG:
        if w.exercise == ex:
            INPUT.setdefault(w.id, (WS,))
for w in WRONG:
    if w.exercise == "row_convention_attention":
        INPUT.setdefault(w.id, ((WX.T, WQ, WK, WV),))


def same(x, y):
    """Exact-enough equality, strict about type (ndarray / tensor / dict), dtype kind and shape."""
    if isinstance(x, Raised) or isinstance(y, Raised):
        return isinstance(x, Raised) and isinstance(y, Raised)
    if isinstance(x, dict):
        return isinstance(y, dict) and x.keys() == y.keys() and all(same(x[k], y[k]) for k in x)
    if isinstance(x, tuple):
        return isinstance(y, tuple) and len(x) == len(y) and all(same(p, q) for p, q in zip(x, y))
    if isinstance(x, torch.Tensor) or isinstance(y, torch.Tensor):
        return isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor) and x.dtype == y.dtype \
            and x.shape == y.shape and bool((x == y).all())
    if isinstance(x, (bool, np.bool_)) or isinstance(y, (bool, np.bool_)):
        return bool(x) == bool(y) and isinstance(y, (bool, np.bool_)) and isinstance(x, (bool, np.bool_))
    x, y = np.asarray(x), np.asarray(y)
    if x.shape != y.shape:
        return False
    if x.dtype == object or y.dtype == object:  # exact fractions: same value and no floats
        return all(v == u and isinstance(v, F) == isinstance(u, F) for v, u in zip(x.flat, y.flat))
    if (x.dtype == bool) != (y.dtype == bool):
        return False
    return bool(np.allclose(x.astype(float), y.astype(float), rtol=1e-7, atol=1e-9, equal_nan=True)) \
        and bool((np.isnan(x.astype(float)) == np.isnan(y.astype(float))).all())


def call(f, args, kwargs):
    try:
        return f(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001
        return Raised(exc)


def parse(text):
    rows = [line.split("#")[0].split() for line in text.strip().splitlines()]
    return np.array([[F(v) for v in r] for r in rows if r], dtype=object)


WS_REF = ref_abh(*WS)
n_fail = 0
for w in WRONG:
    ns = {"__name__": "answer_" + w.id.replace("-", "_")}
    try:
        exec(compile(w.source, w.id, "exec"), ns)
    except Exception as exc:  # noqa: BLE001
        print(f"FAIL {w.id}: source does not run: {exc!r}")
        n_fail += 1
        continue
    if w.exercise.startswith("worksheet_"):
        step = w.exercise[len("worksheet_"):]
        try:
            mine = parse(ns["WORKSHEET"][step])
            ok = not same(mine, WS_REF[step])
        except Exception as exc:  # noqa: BLE001
            ok, mine = True, exc
        print(f"{'ok  ' if ok else 'FAIL'} {w.id}: worksheet step {step}")
        n_fail += not ok
        continue
    f = ns.get(w.exercise)
    if f is None:
        print(f"FAIL {w.id}: does not define {w.exercise}")
        n_fail += 1
        continue
    spec = INPUT[w.id]
    args, kwargs = spec[0], (spec[1] if len(spec) > 1 else {})
    expected = call(REF[w.exercise], args, kwargs)
    got = call(f, args, kwargs)
    ok = not same(got, expected)
    brief = (lambda r: f"raised {type(r.exc).__name__}" if isinstance(r, Raised) else
             (type(r).__name__ if isinstance(r, (dict, tuple)) else np.array2string(np.asarray(r, dtype=object), threshold=8)
              .replace("\n", " ")[:70]))
    print(f"{'ok  ' if ok else 'FAIL'} {w.id}: got {brief(got)} | expected {brief(expected)}")
    n_fail += not ok
print(f"{len(WRONG)} answers, {n_fail} FAIL")
