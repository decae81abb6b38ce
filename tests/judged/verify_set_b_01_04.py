"""Verify every answer of set_b_01_04.py against an independent computation.

Run from any folder with PYTHONPATH=/work/main (so that grader.learner.validation and
courseware import):  PYTHONPATH=/work/main .venv/bin/python verify_set_b_01_04.py
Prints one line per answer: ok when the answer differs from the right result (or breaks the
stated rule) on the input its wrong_on names, FAIL otherwise.
"""
import ast
import math
import sys
import types
import warnings
from fractions import Fraction as Fr
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from set_b_01_04 import WRONG  # noqa: E402

warnings.filterwarnings("ignore")
np.seterr(all="ignore")


# ------------------------------------------------------------------ running an answer
def load(source, name):
    mod = types.ModuleType(f"answer_{name}")
    exec(compile(source, f"<{name}>", "exec"), mod.__dict__)
    return mod.__dict__


class Raised:
    def __init__(self, exc):
        self.exc = exc

    def __repr__(self):
        return f"raised {type(self.exc).__name__}: {str(self.exc)[:80]}"


def call(f, *args, **kw):
    try:
        return f(*args, **kw)
    except Exception as exc:  # noqa: BLE001
        return Raised(exc)


def same_array(got, want, atol=1e-9, exact_type=None):
    """True when got equals want: same shape, same values (NaN never equal), and, if
    exact_type is given, every entry of that Python type (Fractions) / that dtype."""
    if isinstance(got, Raised):
        return False
    if isinstance(want, torch.Tensor):
        if not isinstance(got, torch.Tensor) or got.dtype != want.dtype or tuple(got.shape) != tuple(want.shape):
            return False
        return bool((got == want).all())
    g = np.asarray(got, dtype=object) if exact_type is Fr else np.asarray(got)
    w = np.asarray(want, dtype=object) if exact_type is Fr else np.asarray(want)
    if g.shape != w.shape:
        return False
    if exact_type is Fr:
        return all(type(a) is Fr and a == b for a, b in zip(g.flat, w.flat))
    if w.dtype == bool:
        return g.dtype == bool and bool((g == w).all())
    g = g.astype(float)
    if not np.all(np.isfinite(g)):
        return False
    return bool(np.allclose(g, w, atol=atol, rtol=1e-9))


def differs(got, want, **kw):
    return not same_array(got, want, **kw), f"got {got!r}"[:160]


# ------------------------------------------------------------------ independent references
def r_matmul(A, B):
    A, B = np.asarray(A, float), np.asarray(B, float)
    n, k = A.shape
    m = B.shape[1]
    return np.array([[math.fsum(A[i, p] * B[p, j] for p in range(k)) for j in range(m)] for i in range(n)])


def r_batched(A, B):
    return np.matmul(np.asarray(A, float), np.asarray(B, float))


def r_scores_plain(Q, K):
    Q, K = np.asarray(Q, float), np.asarray(K, float)
    return np.einsum("...id,...jd->...ij", Q, K)


def r_softmax(x, axis=-1):
    x = np.asarray(x, float)
    return torch.softmax(torch.from_numpy(x), dim=axis).numpy()


def r_sdpa(Q, K, V):
    Q, K, V = (np.asarray(a, float) for a in (Q, K, V))
    w = r_softmax(r_scores_plain(Q, K) / math.sqrt(Q.shape[-1]), -1)
    return w @ V, w


def r_variance(d_k, n, seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n, d_k))
    k = rng.standard_normal((n, d_k))
    dots = np.array([math.fsum(q[i] * k[i]) for i in range(n)])
    return float(np.mean((dots - dots.mean()) ** 2))


def r_self(X, Wq, Wk, Wv):
    X = np.asarray(X, float)
    return r_sdpa(X @ np.asarray(Wq, float), X @ np.asarray(Wk, float), X @ np.asarray(Wv, float))


def fr(M):
    return np.array([[Fr(v) for v in row] for row in M], dtype=object)


def r_frac_matmul(A, B):
    A, B = fr(A), fr(B)
    return np.array([[sum((A[i, p] * B[p, j] for p in range(A.shape[1])), Fr(0))
                      for j in range(B.shape[1])] for i in range(A.shape[0])], dtype=object)


def r_kqs(K, Q):
    return r_frac_matmul(fr(K).T, Q)


def r_floor_half(S):
    return np.array([[Fr(math.floor(Fr(s) / 2)) for s in row] for row in S], dtype=object)


def r_sm3(S):
    S = fr(S)
    P = np.array([[Fr(3) ** int(s) for s in row] for row in S], dtype=object)
    out = np.empty(P.shape, dtype=object)
    for j in range(P.shape[1]):
        tot = sum(P[:, j], Fr(0))
        for i in range(P.shape[0]):
            out[i, j] = P[i, j] / tot
    return out


def r_abh(X, WQ, WK, WV):
    Q, K, V = r_frac_matmul(WQ, X), r_frac_matmul(WK, X), r_frac_matmul(WV, X)
    sc = r_kqs(K, Q)
    scaled = r_floor_half(sc)
    A = r_sm3(scaled)
    return {"Q": Q, "K": K, "V": V, "scores": sc, "scaled": scaled, "A": A, "Z": r_frac_matmul(V, A)}


def r_row(Xr, WQ, WK, WV):
    cols = r_abh(fr(Xr).T, WQ, WK, WV)
    return {k: v.T for k, v in cols.items()}


WS_X = np.array([[1, 1, 0, 0], [1, 1, 0, 0], [1, 0, 1, 1], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])
WS_WQ = np.array([[1, 0, 1, 0, 0, 0], [1, 0, 0, 0, 0, 1], [0, 0, 1, 0, 1, 0]])
WS_WK = np.array([[0, 1, 0, 1, 0, 0], [0, 0, 0, 1, -1, 1], [0, 1, 0, 0, 1, 0]])
WS_WV = np.array([[0, 0, 1, 0, 1, 0], [0, 0, 1, 0, 0, 1], [0, 0, 0, 0, 1, 1]])
WS_KEY = r_abh(WS_X, WS_WQ, WS_WK, WS_WV)


def parse_typed(text):
    rows = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            rows.append([Fr(tok) for tok in line.split()])
    if len({len(r) for r in rows}) != 1:
        return rows  # ragged: certainly not the key
    return np.array(rows, dtype=object)


def r_causal(T):
    return np.array([[j <= i for j in range(T)] for i in range(T)])


def r_padding(lengths, T):
    return np.array([[t < L for t in range(T)] for L in lengths])


def r_attn_mask(lengths, T, causal=True):
    B = len(lengths)
    out = np.zeros((B, T, T), dtype=bool)
    for b in range(B):
        for i in range(T):
            for j in range(T):
                out[b, i, j] = j < lengths[b] and (j <= i or not causal)
    return out


def r_masked_softmax(scores, mask):
    scores = np.asarray(scores, float)
    mask = np.broadcast_to(np.asarray(mask, bool), scores.shape)
    out = np.zeros_like(scores)
    for idx in np.ndindex(scores.shape[:-1]):
        s, m = scores[idx], mask[idx]
        if m.any():
            kept = s[m]
            e = np.exp(kept - kept.max())
            row = np.zeros_like(s)
            row[m] = e / e.sum()
            out[idx] = row
    return out


def r_masked_attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(a, float) for a in (Q, K, V))
    sc = r_scores_plain(Q, K) / math.sqrt(Q.shape[-1])
    if mask is None:
        mask = np.ones(sc.shape, bool)
    w = r_masked_softmax(sc, mask)
    return w @ V, w


def causal_attend(X):
    return r_masked_attention(X, X, X, r_causal(len(X)))[0]


def reads_next_from_1(X):  # output 0 = token 0; output i >= 1 = token min(i + 1, T - 1)
    T = len(X)
    return np.stack([X[0]] + [X[min(i + 1, T - 1)] for i in range(1, T)])


def one_ahead(X):  # output i = token i + token i + 1 (the last: token T-1 twice)
    T = len(X)
    return np.stack([X[i] + X[min(i + 1, T - 1)] for i in range(T)])


def r_cmc(T):
    return r_causal(T).T.copy()


def r_mha(lengths, T):
    return torch.tensor([[t >= L for t in range(T)] for L in lengths], dtype=torch.bool)


def r_prefix(X):
    X = np.asarray(X, float)
    return np.stack([X[..., : i + 1, :].mean(axis=-2) for i in range(X.shape[-2])], axis=-2)


def uses_call(source, func_name, attr):
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == func_name:
            for sub in ast.walk(node):
                if isinstance(sub, ast.Attribute) and sub.attr == attr:
                    return True
    return False


def raises_value_error(f, *args):
    try:
        f(*args)
    except ValueError as exc:
        return bool(str(exc))
    except Exception:  # noqa: BLE001
        return False
    return False


# ------------------------------------------------------------------ per-answer checks
I2 = np.eye(2)
A22 = np.array([[1.0, 2.0], [3.0, 4.0]])
rng0 = np.random.default_rng(0)
A23, B32 = rng0.normal(size=(2, 3)), rng0.normal(size=(3, 2))
A23b, B34 = rng0.normal(size=(2, 3)), rng0.normal(size=(3, 4))
Q234, K234, V234 = (rng0.normal(size=(2, 3, 4)) for _ in range(3))


def chk_matmul(name, A, B):
    return lambda ns: differs(call(ns[name], A, B), r_matmul(A, B))


def chk_rule_np_dot(ns, src):
    A, B = A23, B32
    values_right = same_array(call(ns["matmul_dot"], A, B), r_matmul(A, B))
    broke = uses_call(src, "matmul_dot", "dot")
    return broke and values_right, f"values right: {values_right}; calls np.dot: {broke}"


def chk_wavg_accepts(W, V):
    W, V = np.asarray(W, float), np.asarray(V, float)
    return lambda ns: differs(call(ns["weighted_average_rows"], W, V), W @ V)


def chk_wavg_rejects(W, V):
    def run(ns):
        ok = raises_value_error(ns["weighted_average_rows"], W, V)
        return (not ok), ("raised ValueError" if ok else f"returned {call(ns['weighted_average_rows'], W, V)!r}")
    return run


def chk_sdpa_out_or_w(Q, K, V, fn="scaled_dot_product_attention", ref=None):
    ref = ref or r_sdpa

    def run(ns):
        got = call(ns[fn], Q, K, V)
        want = ref(Q, K, V)
        if isinstance(got, Raised) or not isinstance(got, tuple) or len(got) != 2:
            return True, repr(got)[:160]
        ok = same_array(got[0], want[0]) and same_array(got[1], want[1])
        return (not ok), f"got output {np.asarray(got[0]).round(3).tolist()} weights {np.asarray(got[1]).round(3).tolist()}"[:160]
    return run


def chk_ws(step):
    def run(ns):
        typed = ns["WORKSHEET"][step]
        got = parse_typed(typed)
        want = WS_KEY[step]
        ok = isinstance(got, np.ndarray) and got.shape == want.shape and bool((got == want).all())
        # and every earlier step of the worksheet is right (the mistake is in `step`, unless stated)
        return (not ok), f"typed {typed.strip()!r}"[:160]
    return run


def chk_fn_frac(fn, ref, *args):
    return lambda ns: differs(call(ns[fn], *args), ref(*args), exact_type=Fr)


def chk_dict_steps(fn, ref, *args):
    def run(ns):
        got = call(ns[fn], *args)
        want = ref(*args)
        if isinstance(got, Raised) or not isinstance(got, dict):
            return True, repr(got)[:160]
        bad = [k for k in want if k not in got or not same_array(got[k], want[k], exact_type=Fr)]
        return bool(bad), f"steps that differ: {bad}"
    return run


def chk_iscausal(attend, T, d, want):
    def run(ns):
        got = call(ns["is_causal"], attend, T, d, 0)
        return (got is not want and got != want) or isinstance(got, Raised), f"got {got!r}"
    return run


def chk_msoftmax_input_untouched(ns):
    scores = np.array([[2.0, 1.0], [0.5, 3.0]])
    mask = np.array([[True, False], [True, True]])
    keep = scores.copy()
    call(ns["masked_softmax"], scores, mask)
    mutated = not np.array_equal(scores, keep)
    batched_wrong, detail = differs(call(ns["masked_softmax"], np.zeros((2, 2, 2)), r_causal(2)),
                                    r_masked_softmax(np.zeros((2, 2, 2)), r_causal(2)))
    return mutated and batched_wrong, f"input mutated: {mutated}; batched result wrong: {batched_wrong}"


SE = {}
sq = lambda *a: np.array(a, dtype=float)  # noqa: E731

SE.update({
    # lesson 01
    "b34-01-dot-zeros-like-A": chk_matmul("matmul_dot", A23, B32),
    "b34-01-dot-int-result": chk_matmul("matmul_dot", [[0.5]], [[1.0]]),
    "b34-01-dot-ones-init-accumulate": chk_matmul("matmul_dot", [[1.0, 2.0]], [[3.0], [4.0]]),
    "b34-01-rows-accumulator-outside-loop": chk_matmul("matmul_rows", I2, A22),
    "b34-01-rows-weight-index-swapped": chk_matmul("matmul_rows", A22, I2),
    "b34-01-rows-assign-not-add": chk_matmul("matmul_rows", [[1.0, 1.0]], I2),
    "b34-01-cols-weight-index-swapped": chk_matmul("matmul_cols", I2, A22),
    "b34-01-cols-row-of-A": chk_matmul("matmul_cols", A22, I2),
    "b34-01-cols-p-range-rows-of-A": chk_matmul("matmul_cols", [[1.0, 2.0, 3.0]], [[1.0], [1.0], [1.0]]),
    "b34-01-outer-rows-of-A": chk_matmul("matmul_outer", A22, I2),
    "b34-01-outer-operands-swapped": chk_matmul("matmul_outer", A23b, B34),
    "b34-01-outer-elementwise-no-newaxis": chk_matmul("matmul_outer", I2, A22),
    "b34-01-batched-np-dot": lambda ns: differs(call(ns["batched_matmul"], Q234[:, :, :3], K234[:, :3, :3]),
                                                r_batched(Q234[:, :, :3], K234[:, :3, :3])),
    "b34-01-batched-einsum-fixed-3d": lambda ns: differs(call(ns["batched_matmul"], np.ones((3, 4)), np.ones((2, 4, 5))),
                                                         r_batched(np.ones((3, 4)), np.ones((2, 4, 5)))),
    "b34-01-batched-broadcast-sum-wrong-axis": lambda ns: differs(call(ns["batched_matmul"], A22, I2), A22),
    "b34-01-einsum-no-ellipsis": lambda ns: differs(call(ns["einsum_scores"], Q234, K234), r_scores_plain(Q234, K234)),
    "b34-01-einsum-implicit-output-order": lambda ns: differs(call(ns["einsum_scores"], [[1.0, 0.0]], I2), [[1.0, 0.0]]),
    "b34-01-einsum-matmul-pattern": lambda ns: differs(call(ns["einsum_scores"], A22, A22), [[5.0, 11.0], [11.0, 25.0]]),
    "b34-01-einsum-scaled": lambda ns: differs(call(ns["einsum_scores"], [[1.0, 0, 0, 0]], [[1.0, 0, 0, 0]]), [[1.0]]),
    "b34-01-wavg-column-sums": chk_wavg_accepts([[1, 0], [1, 0]], [[1], [2]]),
    "b34-01-wavg-rejects-zero-weights": chk_wavg_accepts([[1, 0]], [[1], [2]]),
    "b34-01-wavg-allclose-tolerance": chk_wavg_rejects(np.array([[0.5, 0.500005]]), np.array([[1.0], [1.0]])),
    "b34-01-wavg-loop-assumes-2d": chk_wavg_accepts(np.full((2, 2, 2), 0.5), np.ones((2, 2, 1))),
    "b34-01-wavg-nan-slips-through": chk_wavg_rejects(np.array([[0.5, np.nan]]), np.array([[1.0], [2.0]])),
    # lesson 02
    "b34-02-softmax-global-max": lambda ns: differs(call(ns["softmax"], sq([0, 1], [-1000, -999]), -1),
                                                    r_softmax(sq([0, 1], [-1000, -999]), -1)),
    "b34-02-softmax-sum-axis-hardcoded": lambda ns: differs(call(ns["softmax"], A22, 0), r_softmax(A22, 0)),
    "b34-02-softmax-subtract-min": lambda ns: differs(call(ns["softmax"], sq(0, 1000)), r_softmax(sq(0, 1000))),
    "b34-02-softmax-denominator-unshifted": lambda ns: differs(call(ns["softmax"], sq(1, 1)), [0.5, 0.5]),
    "b34-02-softmax-max-no-keepdims": lambda ns: differs(call(ns["softmax"], sq([0, 1], [2, 3]), -1),
                                                         r_softmax(sq([0, 1], [2, 3]), -1)),
    "b34-02-scores-swapaxes-first-two": lambda ns: differs(call(ns["attention_scores"], Q234, K234),
                                                           r_scores_plain(Q234, K234) / 2),
    "b34-02-scores-inverse-scale": lambda ns: differs(call(ns["attention_scores"], [[1.0, 0, 0, 0]], [[1.0, 0, 0, 0]]), [[0.5]]),
    "b34-02-scores-divide-by-dk": lambda ns: differs(call(ns["attention_scores"], [[1.0, 0, 0, 0]], [[1.0, 0, 0, 0]]), [[0.5]]),
    "b34-02-scores-dk-from-axis-1": lambda ns: differs(call(ns["attention_scores"], [[[1.0, 0, 0, 0]]], [[[1.0, 0, 0, 0]]]), [[[0.5]]]),
    "b34-02-variance-sum-over-samples": lambda ns: differs(call(ns["score_variance"], 1, 1000, 0), r_variance(1, 1000, 0)),
    "b34-02-variance-no-sum": lambda ns: differs(call(ns["score_variance"], 64, 4000, 0), r_variance(64, 4000, 0)),
    "b34-02-variance-all-pairs-matrix": lambda ns: differs(call(ns["score_variance"], 2, 5, 0), r_variance(2, 5, 0)),
    "b34-02-variance-std": lambda ns: differs(call(ns["score_variance"], 16, 4000, 0), r_variance(16, 4000, 0)),
    "b34-02-sdpa-return-order": chk_sdpa_out_or_w(I2, I2, sq([1, 2, 3], [4, 5, 6])),
    "b34-02-sdpa-scaled-twice": chk_sdpa_out_or_w(sq([2, 0, 0, 0], [0, 2, 0, 0]), sq([2, 0, 0, 0], [0, 2, 0, 0]), I2),
    "b34-02-sdpa-weights-before-softmax": chk_sdpa_out_or_w(I2, I2, I2),
    "b34-02-sdpa-scale-by-dv": chk_sdpa_out_or_w(sq([1, 0, 0, 0], [0, 1, 0, 0]), sq([1, 0, 0, 0], [0, 1, 0, 0]), sq([1], [0])),
    "b34-02-sdpa-softmax-query-axis": chk_sdpa_out_or_w(sq([1, 0], [0, 1], [1, 1]), I2, I2),
    "b34-02-onequery-unshifted-denominator": lambda ns: differs(call(ns["attend_one_query"], sq(1, 0), sq([1, 0], [1, 0]), sq([1], [1])), [1.0]),
    "b34-02-onequery-off-by-one-keys": lambda ns: differs(call(ns["attend_one_query"], sq(0), sq([0], [0]), sq([0], [2])), [1.0]),
    "b34-02-onequery-mixes-keys": lambda ns: differs(call(ns["attend_one_query"], sq(1), sq([1]), sq([5])), [5.0]),
    "b34-02-onequery-no-scale": lambda ns: differs(call(ns["attend_one_query"], sq(2, 0, 0, 0), sq([1, 0, 0, 0], [0, 0, 0, 0]), sq([1], [0])),
                                                   r_sdpa(sq([2, 0, 0, 0]), sq([1, 0, 0, 0], [0, 0, 0, 0]), sq([1], [0]))[0][0]),
})


def self_chk(X, Wq, Wk, Wv):
    def run(ns):
        got = call(ns["self_attention"], X, Wq, Wk, Wv)
        want = r_self(X, Wq, Wk, Wv)
        if isinstance(got, Raised) or not isinstance(got, tuple) or len(got) != 2:
            return True, repr(got)[:160]
        ok = same_array(got[0], want[0]) and same_array(got[1], want[1])
        return (not ok), f"got weights {np.asarray(got[1]).round(3).tolist()}"[:160]
    return run


SE.update({
    "b34-02-self-key-from-Wq": self_chk(I2, I2, sq([0, 1], [1, 0]), I2),
    "b34-02-self-weights-transposed": self_chk(sq([1, 0]), I2, I2, sq([0, 1], [0, 0])),
    "b34-02-self-args-swapped": self_chk(I2, sq([0, 1], [0, 0]), I2, I2),
    "b34-02-self-scale-dmodel": self_chk(np.eye(4), np.eye(4)[:, :1], np.eye(4)[:, :1], np.eye(4)),
})

# lesson 03
for sid, step in [("b34-03-ws-Q-tokens-as-rows", "Q"), ("b34-03-ws-Q-K-cells-swapped", "Q"),
                  ("b34-03-ws-K-minus-one-as-plus", "K"), ("b34-03-ws-K-negative-product-dropped", "K"),
                  ("b34-03-ws-V-with-WK", "V"), ("b34-03-ws-V-tokens-as-rows", "V"),
                  ("b34-03-ws-scores-QtK", "scores"), ("b34-03-ws-scores-minus-times-one", "scores"),
                  ("b34-03-ws-scaled-round-half-up", "scaled"), ("b34-03-ws-scaled-not-floored", "scaled"),
                  ("b34-03-ws-A-row-sums", "A"), ("b34-03-ws-A-from-scores", "A"),
                  ("b34-03-ws-Z-V-times-A-transposed", "Z"), ("b34-03-ws-Z-keys-mixed", "Z")]:
    SE[sid] = chk_ws(step)

H = Fr(1, 2)
SE.update({
    "b34-03-kqs-QtK": chk_fn_frac("key_query_scores", r_kqs, [[1, 0]], [[1, 2, 3]]),
    "b34-03-kqs-cast-to-int": chk_fn_frac("key_query_scores", r_kqs, [[H]], [[1]]),
    "b34-03-kqs-floats": chk_fn_frac("key_query_scores", r_kqs, [[Fr(1, 3)]], [[1]]),
    "b34-03-floor-before-halving": chk_fn_frac("floor_half", r_floor_half, [[3, -1]]),
    "b34-03-floor-int-first": chk_fn_frac("floor_half", r_floor_half, [[-H]]),
    "b34-03-floor-float-result": chk_fn_frac("floor_half", r_floor_half, [[3]]),
    "b34-03-sm3-int-power-python": chk_fn_frac("softmax3_columns", r_sm3, [[0], [2]]),
    "b34-03-sm3-negative-power-float": chk_fn_frac("softmax3_columns", r_sm3, [[-1], [0]]),
    "b34-03-sm3-row-sums": chk_fn_frac("softmax3_columns", r_sm3, [[0, 0], [1, 0]]),
    "b34-03-sm3-shift-row-max": chk_fn_frac("softmax3_columns", r_sm3, [[0, 2], [1, 0]]),
    "b34-03-sm3-whole-sum": chk_fn_frac("softmax3_columns", r_sm3, [[0, 0], [0, 0]]),
    "b34-03-abh-scores-args-swapped": chk_dict_steps("attention_by_hand", r_abh, WS_X, WS_WQ, WS_WK, WS_WV),
    "b34-03-abh-Z-transposed-A": chk_dict_steps("attention_by_hand", r_abh, WS_X, WS_WQ, WS_WK, WS_WV),
    "b34-03-abh-helper-floor-int": chk_dict_steps("attention_by_hand", r_abh, WS_X, WS_WQ, WS_WK, WS_WV),
    "b34-03-abh-softmax-of-scores": chk_dict_steps("attention_by_hand", r_abh, WS_X, WS_WQ, WS_WK, WS_WV),
    "b34-03-row-columns-result-untransposed": chk_dict_steps("row_convention_attention", r_row, WS_X.T, WS_WQ, WS_WK, WS_WV),
    "b34-03-row-softmax-columns": chk_dict_steps("row_convention_attention", r_row, WS_X.T, WS_WQ, WS_WK, WS_WV),
    "b34-03-row-scores-KQt": chk_dict_steps("row_convention_attention", r_row, WS_X.T, WS_WQ, WS_WK, WS_WV),
    "b34-03-row-projection-not-transposed": chk_dict_steps("row_convention_attention", r_row, WS_X.T, WS_WQ, WS_WK, WS_WV),
})

# lesson 04
SE.update({
    "b34-04-causal-float-tril": lambda ns: differs(call(ns["causal_mask"], 2), r_causal(2)),
    "b34-04-causal-triu": lambda ns: differs(call(ns["causal_mask"], 2), r_causal(2)),
    "b34-04-causal-not-triu-k0": lambda ns: differs(call(ns["causal_mask"], 2), r_causal(2)),
    "b34-04-padding-off-by-one": lambda ns: differs(call(ns["padding_mask"], [1], 3), r_padding([1], 3)),
    "b34-04-padding-transposed": lambda ns: differs(call(ns["padding_mask"], [1, 2], 3), r_padding([1, 2], 3)),
    "b34-04-padding-no-column": lambda ns: differs(call(ns["padding_mask"], [1, 2], 2), r_padding([1, 2], 2)),
    "b34-04-padding-left": lambda ns: differs(call(ns["padding_mask"], [1], 3), r_padding([1], 3)),
    "b34-04-attnmask-padding-on-queries": lambda ns: differs(call(ns["attention_mask"], [1], 2, False), r_attn_mask([1], 2, False)),
    "b34-04-attnmask-noncausal-unbroadcast": lambda ns: differs(call(ns["attention_mask"], [2, 1], 2, False), r_attn_mask([2, 1], 2, False)),
    "b34-04-attnmask-or": lambda ns: differs(call(ns["attention_mask"], [2], 2, True), r_attn_mask([2], 2, True)),
    "b34-04-attnmask-ignores-flag": lambda ns: differs(call(ns["attention_mask"], [2], 2, False), r_attn_mask([2], 2, False)),
    "b34-04-msoftmax-max-before-mask": lambda ns: differs(call(ns["masked_softmax"], sq(0, 1, 900), np.array([True, True, False])),
                                                          r_masked_softmax(sq(0, 1, 900), [True, True, False])),
    "b34-04-msoftmax-inplace-boolean-index": chk_msoftmax_input_untouched,
    "b34-04-msoftmax-sum-no-keepdims": lambda ns: differs(call(ns["masked_softmax"], np.zeros((2, 2)), np.array([[True, False], [True, True]])),
                                                          r_masked_softmax(np.zeros((2, 2)), [[True, False], [True, True]])),
    "b34-04-msoftmax-polarity-inverted": lambda ns: differs(call(ns["masked_softmax"], sq(1, 2), np.array([True, False])),
                                                            r_masked_softmax(sq(1, 2), [True, False])),
    "b34-04-msoftmax-fill-minus-1e9": lambda ns: differs(call(ns["masked_softmax"], sq(0.3, -1.2), np.array([False, False])), [0.0, 0.0]),
    "b34-04-mattn-none-ones-like-float": lambda ns: differs(call(ns["masked_attention"], I2, I2, I2), r_masked_attention(I2, I2, I2)),
    "b34-04-mattn-no-scale": lambda ns: differs(call(ns["masked_attention"], sq([2, 0, 0, 0], [0, 2, 0, 0]), sq([2, 0, 0, 0], [0, 2, 0, 0]), I2),
                                                r_masked_attention(sq([2, 0, 0, 0], [0, 2, 0, 0]), sq([2, 0, 0, 0], [0, 2, 0, 0]), I2)),
    "b34-04-mattn-none-naive-softmax": lambda ns: differs(call(ns["masked_attention"], sq([40, 0]), sq([40, 0]), sq([1])),
                                                          r_masked_attention(sq([40, 0]), sq([40, 0]), sq([1]))),
    "b34-04-iscausal-replace-from-t": chk_iscausal(causal_attend, 3, 2, True),
    "b34-04-iscausal-compares-all": chk_iscausal(causal_attend, 3, 2, True),
    "b34-04-iscausal-no-copy": chk_iscausal(causal_attend, 3, 2, True),
    "b34-04-iscausal-return-in-loop": chk_iscausal(reads_next_from_1, 3, 2, False),
    "b34-04-iscausal-excludes-t": chk_iscausal(one_ahead, 3, 2, False),
    "b34-04-cmcols-tril": lambda ns: differs(call(ns["causal_mask_columns"], 2), r_cmc(2)),
    "b34-04-cmcols-triu-k1": lambda ns: differs(call(ns["causal_mask_columns"], 2), r_cmc(2)),
    "b34-04-cmcols-float": lambda ns: differs(call(ns["causal_mask_columns"], 2), r_cmc(2)),
    "b34-04-mha-numpy-array": lambda ns: differs(call(ns["to_mha_key_padding_mask"], [1], 2), r_mha([1], 2)),
    "b34-04-mha-float-tensor": lambda ns: differs(call(ns["to_mha_key_padding_mask"], [1], 2), r_mha([1], 2)),
    "b34-04-mha-off-by-one": lambda ns: differs(call(ns["to_mha_key_padding_mask"], [1], 3), r_mha([1], 3)),
    "b34-04-mha-keeps-query-axis": lambda ns: differs(call(ns["to_mha_key_padding_mask"], [1, 2], 2), r_mha([1, 2], 2)),
    "b34-04-prefix-zero-based-counts": lambda ns: differs(call(ns["prefix_average"], sq([1], [3])), r_prefix(sq([1], [3]))),
    "b34-04-prefix-divides-columns": lambda ns: differs(call(ns["prefix_average"], sq([1], [3])), r_prefix(sq([1], [3]))),
    "b34-04-prefix-T-from-axis-0": lambda ns: differs(call(ns["prefix_average"], np.arange(6.0).reshape(2, 3, 1)),
                                                      r_prefix(np.arange(6.0).reshape(2, 3, 1))),
})


def uses_operator_matmul(source, func_name):
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == func_name:
            return any(isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.MatMult) for sub in ast.walk(node))
    return False


def chk_rule_onequery_matmul(ns, src):
    g = np.random.default_rng(3)
    q, K, V = g.normal(size=4), g.normal(size=(5, 4)), g.normal(size=(5, 2))
    values_right = same_array(call(ns["attend_one_query"], q, K, V), r_sdpa(q[None], K, V)[0][0])
    broke = uses_operator_matmul(src, "attend_one_query")
    return broke and values_right, f"values right: {values_right}; uses @: {broke}"


def chk_rule_prefix_cumsum(ns, src):
    X = np.random.default_rng(4).normal(size=(2, 5, 3))
    values_right = same_array(call(ns["prefix_average"], X), r_prefix(X))
    broke = uses_call(src, "prefix_average", "cumsum")
    return broke and values_right, f"values right: {values_right}; calls np.cumsum: {broke}"


RULES = {"b34-02-onequery-scores-with-matmul": chk_rule_onequery_matmul,
         "b34-04-prefix-cumsum": chk_rule_prefix_cumsum}


# ------------------------------------------------------------------ sanity: the references
def sanity():
    assert np.allclose(r_matmul(A23, B32), A23 @ B32)
    assert np.allclose(r_softmax(sq(1, 2, 3)).sum(), 1)
    assert abs(r_variance(64, 20000, 1) - 64) < 3
    key = WS_KEY
    assert all(sum(key["A"][:, j], Fr(0)) == 1 for j in range(4))
    assert causal_attend(np.ones((3, 2))).shape == (3, 2)
    assert np.array_equal(r_attn_mask([3, 2], 3)[1], np.array([[1, 0, 0], [1, 1, 0], [1, 1, 0]], bool))
    assert np.allclose(r_masked_softmax(np.zeros((4, 4)), r_causal(4))[3], 0.25)


def r_is_causal(attend, T, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((T, d))
    base = attend(X)
    for t in range(T):
        Y = X.copy()
        Y[t + 1:] = rng.standard_normal((T - t - 1, d))
        if not np.allclose(attend(Y)[: t + 1], base[: t + 1]):
            return False
    return True


def check_helpers():
    """The helpers that composite answers carry are written right: each one, on its own,
    agrees with the independent reference."""
    import set_b_01_04 as S
    g = np.random.default_rng(7)
    ns = load(S._L02_HELPERS + S._SDPA_OK, "helpers02")
    x = g.normal(size=(2, 3, 4)) * 50
    assert np.allclose(ns["softmax"](x, 1), r_softmax(x, 1))
    assert np.allclose(ns["attention_scores"](Q234, K234), r_scores_plain(Q234, K234) / 2)
    o, w = ns["scaled_dot_product_attention"](Q234, K234, V234)
    ro, rw = r_sdpa(Q234, K234, V234)
    assert np.allclose(o, ro) and np.allclose(w, rw)
    ns = load(S._L03_HELPERS + S._ABH_OK, "helpers03")
    key = ns["attention_by_hand"](WS_X, WS_WQ, WS_WK, WS_WV)
    assert all(same_array(key[k], WS_KEY[k], exact_type=Fr) for k in WS_KEY)
    assert same_array(ns["floor_half"]([[-1, 3, Fr(-1, 2)]]), r_floor_half([[-1, 3, Fr(-1, 2)]]), exact_type=Fr)
    for k, text in S._WS_RIGHT.items():
        assert bool((parse_typed(text) == WS_KEY[k]).all()), k
    ns = load(S._H04 + S._CM_OK + "\n\n" + S._PM_OK + "\n\n" + S._MS_OK, "helpers04")
    assert same_array(ns["causal_mask"](4), r_causal(4))
    assert same_array(ns["padding_mask"]([3, 0, 2], 3), r_padding([3, 0, 2], 3))
    sc = g.normal(size=(2, 3, 3)) * 500
    m = g.random((3, 3)) < 0.5
    assert np.allclose(ns["masked_softmax"](sc, m), r_masked_softmax(sc, m))
    assert r_is_causal(causal_attend, 5, 3) and not r_is_causal(reads_next_from_1, 3, 2)
    assert not r_is_causal(one_ahead, 3, 2)


def main():
    sanity()
    check_helpers()
    failures = 0
    ids = [w.id for w in WRONG]
    assert len(ids) == len(set(ids)), "duplicate ids"
    missing = [i for i in ids if (i not in SE or SE[i] is None) and i not in RULES and i != "b34-01-dot-uses-np-dot"]
    for w in WRONG:
        ns = load(w.source, w.id)
        if w.exercise.startswith("worksheet_"):
            present = "WORKSHEET" in ns
        else:
            present = w.exercise in ns
        if w.id == "b34-01-dot-uses-np-dot":
            wrong, detail = chk_rule_np_dot(ns, w.source)
        elif w.id in RULES:
            wrong, detail = RULES[w.id](ns, w.source)
        elif w.id in missing:
            wrong, detail = False, "no check written"
        else:
            wrong, detail = SE[w.id](ns)
        ok = wrong and present
        failures += not ok
        detail = " ".join(str(detail).split())[:150]
        print(f"{'ok  ' if ok else 'FAIL'} {w.id:45s} {w.exercise:28s} {detail}")
    print(f"\n{len(WRONG) - failures} of {len(WRONG)} answers verified wrong" + (f", {failures} FAILED" if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
