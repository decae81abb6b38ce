"""Verify set f (lessons 05-08): every answer must differ from an independent right
computation on the input its `wrong_on` names.

Run from the repository root:  PYTHONPATH=. .venv/bin/python tests/judged/verify_set_f_05_08.py [id ...]
Prints one line per answer, `ok` (the answer is wrong where it says) or `FAIL`.
Nothing here uses the grader's checks: the references below are written from the notebooks.
"""
import copy
import math
import os
import sys
import traceback
import tracemalloc

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import set_f_05_08 as S  # noqa: E402

torch.set_num_threads(1)


# ------------------------------------------------------------------------------ helpers

def load(w):
    ns = {"__name__": "answer_" + w.id.replace("-", "_")}
    exec(compile(w.source, f"<{w.id}>", "exec"), ns)
    return ns[w.exercise], ns


def to_np(x):
    if isinstance(x, torch.Tensor):
        return x.detach().double().numpy()
    return np.asarray(x, dtype=float)


def differs(got, want, rtol=1e-5, atol=1e-8):
    """True when `got` is not `want` (shape, NaN or values)."""
    g, w = to_np(got), to_np(want)
    if g.shape != w.shape:
        return True
    if np.isnan(g).any() != np.isnan(w).any():
        return True
    return not np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)


def call(fn, *args, **kwargs):
    """(result, None) or (None, the exception)."""
    try:
        return fn(*args, **kwargs), None
    except Exception as exc:  # noqa: BLE001
        return None, exc


def wrong_value(fn, want, *args, rtol=1e-5, atol=1e-8, **kwargs):
    """(is wrong, note): raising counts as wrong; otherwise compared with `want`."""
    got, exc = call(fn, *args, **kwargs)
    if exc is not None:
        return True, f"raises {type(exc).__name__}: {str(exc).splitlines()[0][:80]}"
    if isinstance(want, tuple):
        if not isinstance(got, tuple) or len(got) != len(want):
            return True, f"returns {type(got).__name__}, not a {len(want)}-tuple"
        for i, (g, w) in enumerate(zip(got, want)):
            if differs(g, w, rtol, atol):
                return True, f"item {i} differs"
        return False, "same"
    if differs(got, want, rtol, atol):
        g = to_np(got)
        w = to_np(want)
        if g.shape != w.shape:
            return True, f"shape {g.shape} where {w.shape} belongs"
        return True, f"max |diff| {np.nanmax(np.abs(g - w)) if not np.isnan(g).any() else 'NaN'}"
    return False, "same"


TESTS = {}


def test(*ids):
    def deco(fn):
        for i in ids:
            TESTS[i] = fn
        return fn
    return deco


# ================================================================================ lesson 05
# references

def ref_split(x, h):
    B, T, d = x.shape
    dh = d // h
    out = torch.empty(B, h, T, dh, dtype=x.dtype)
    for b in range(B):
        for i in range(h):
            for t in range(T):
                out[b, i, t] = x[b, t, i * dh:(i + 1) * dh]
    return out


def ref_merge(x):
    B, h, T, dh = x.shape
    out = torch.empty(B, T, h * dh, dtype=x.dtype)
    for b in range(B):
        for t in range(T):
            for i in range(h):
                out[b, t, i * dh:(i + 1) * dh] = x[b, i, t]
    return out


def coded(B, T, d):
    return (100 * torch.arange(B)[:, None, None] + 10 * torch.arange(T)[None, :, None]
            + torch.arange(d)[None, None, :]).float()


class RefMHA(nn.Module):
    """A plain module with the attributes the exercises read, written independently."""

    def __init__(self, d_model, n_heads, seed=0):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        for name in ("w_q", "w_k", "w_v", "w_o"):
            lin = nn.Linear(d_model, d_model)
            with torch.no_grad():
                lin.weight.copy_(torch.randn(d_model, d_model, generator=g) / math.sqrt(d_model))
                lin.bias.copy_(0.5 * torch.randn(d_model, generator=g))
            setattr(self, name, lin)


def ref_mha_np(params, query, key, value, h, mask=None):
    """numpy float64 multi-head attention; params: dict name -> (W [out, in], b)."""
    q_in, k_in, v_in = (to_np(t) for t in (query, key, value))
    B, Tq, d = q_in.shape
    Tk = k_in.shape[1]
    dh = d // h
    Q = q_in @ params["w_q"][0].T + params["w_q"][1]
    K = k_in @ params["w_k"][0].T + params["w_k"][1]
    V = v_in @ params["w_v"][0].T + params["w_v"][1]
    out = np.zeros((B, Tq, d))
    weights = np.zeros((B, h, Tq, Tk))
    for b in range(B):
        for i in range(h):
            f = slice(i * dh, (i + 1) * dh)
            S = Q[b, :, f] @ K[b, :, f].T / math.sqrt(dh)
            if mask is not None:
                m = to_np(mask).astype(bool)
                if m.ndim == 2:
                    mm = np.broadcast_to(m[b][None, :], (Tq, Tk))
                elif m.ndim == 3:
                    mm = m[b]
                else:
                    mm = m[b, i]
                S = np.where(mm, S, -np.inf)
            S = S - S.max(axis=1, keepdims=True)
            P = np.exp(S)
            P /= P.sum(axis=1, keepdims=True)
            weights[b, i] = P
            out[b, :, f] = P @ V[b, :, f]
    out = out @ params["w_o"][0].T + params["w_o"][1]
    return out, weights


def random_params(d, seed):
    g = np.random.default_rng(seed)
    return {n: (g.normal(size=(d, d)) / math.sqrt(d), 0.5 * g.normal(size=d))
            for n in ("w_q", "w_k", "w_v", "w_o")}


def load_params(module, params):
    with torch.no_grad():
        for n, (W, b) in params.items():
            lin = getattr(module, n)
            lin.weight.copy_(torch.tensor(W, dtype=lin.weight.dtype))
            if lin.bias is not None:
                lin.bias.copy_(torch.tensor(b, dtype=lin.bias.dtype))


def mha_wrong(cls, d, h, B, Tq, Tk, mask=None, seed=0, same_kv=False):
    params = random_params(d, seed)
    g = torch.Generator().manual_seed(seed + 100)
    query = torch.randn(B, Tq, d, generator=g)
    key = torch.randn(B, Tk, d, generator=g)
    value = key if same_kv else torch.randn(B, Tk, d, generator=g)
    want = ref_mha_np(params, query, key, value, h, mask)
    mod, exc = call(cls, d, h)
    if exc is not None:
        return True, f"constructor raises {exc!r}"
    load_params(mod, params)
    with torch.no_grad():
        return wrong_value(mod, want, query, key, value, mask=mask, rtol=1e-4, atol=1e-5)


@test("f-05-split-heads-no-transpose", "f-05-split-heads-transpose-before-reshape")
def _(fn, ns):
    x = coded(1, 2, 4)
    return wrong_value(fn, ref_split(x, 2), x, 2)


@test("f-05-split-heads-strided-features")
def _(fn, ns):
    x = coded(1, 1, 4)
    return wrong_value(fn, ref_split(x, 2), x, 2)


@test("f-05-merge-heads-no-transpose")
def _(fn, ns):
    x = coded(1, 2, 4).reshape(1, 2, 2, 2)
    return wrong_value(fn, ref_merge(x), x)


@test("f-05-merge-heads-head-minor")
def _(fn, ns):
    x = torch.tensor([[[[0.0, 1.0]], [[10.0, 11.0]]]])   # [1, 2, 1, 2]
    return wrong_value(fn, ref_merge(x), x)


@test("f-05-merge-heads-swaps-batch-and-head")
def _(fn, ns):
    x = coded(2, 2, 1).reshape(2, 2, 1, 1)
    return wrong_value(fn, ref_merge(x), x)


@test("f-05-mha-scale-sqrt-dmodel", "f-05-softmax-over-queries", "f-05-mha-keys-from-wq",
      "f-05-mha-no-output-projection", "f-05-mha-weights-averaged-over-heads",
      "f-05-mha-softmax-over-queries")
def _(fn, ns):
    return mha_wrong(fn, 4, 2, 1, 3, 3)


@test("f-05-mha-mask-polarity-inverted", "f-05-mha-mask-after-softmax")
def _(fn, ns):
    mask = torch.tensor([[True, True, False]])
    return mha_wrong(fn, 4, 2, 1, 3, 3, mask=mask)


@test("f-05-mha-values-from-key")
def _(fn, ns):
    return mha_wrong(fn, 4, 2, 1, 3, 3)


def torch_mha(d, h, seed):
    torch.manual_seed(seed)
    theirs = nn.MultiheadAttention(d, h, batch_first=True)
    with torch.no_grad():
        theirs.in_proj_bias.normal_(0, 0.3)
        theirs.out_proj.bias.normal_(0, 0.3)
    return theirs


@test("f-05-copy-weights-transposed", "f-05-copy-biases-left-out", "f-05-copy-out-proj-forgotten",
      "f-05-copy-value-bias-from-key-slice")
def _(fn, ns):
    theirs = torch_mha(4, 2, 3)
    ours = RefMHA(4, 2, seed=9)
    x = torch.randn(1, 3, 4, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        want = theirs(x, x, x, need_weights=False)[0]
    got, exc = call(fn, ours, theirs)
    if exc is not None:
        return True, f"raises {exc!r}"
    params = {n: (to_np(getattr(got, n).weight), to_np(getattr(got, n).bias))
              for n in ("w_q", "w_k", "w_v", "w_o")}
    out, _ = ref_mha_np(params, x, x, x, 2)
    return (differs(out, want, 1e-4, 1e-5), "outputs of the loaded module differ from torch's")


@test("f-05-copy-new-parameters")
def _(fn, ns):
    theirs = torch_mha(4, 2, 3)
    ours = RefMHA(4, 2, seed=9)
    before = {n: p for n, p in ours.named_parameters()}
    got, exc = call(fn, ours, theirs)
    if exc is not None:
        return True, f"raises {exc!r}"
    after = dict(got.named_parameters())
    replaced = [n for n in before if after[n] is not before[n]]
    shared = after["w_q.weight"].data_ptr() == theirs.in_proj_weight.data_ptr()
    return bool(replaced) or shared, f"{len(replaced)} parameters replaced; w_q.weight shares torch's memory: {shared}"


def ref_heads(x, mha):
    P = {n: (to_np(getattr(mha, n).weight), to_np(getattr(mha, n).bias)) for n in ("w_q", "w_k", "w_v", "w_o")}
    return ref_mha_np(P, x, x, x, mha.n_heads)


@test("f-05-heads-loop-scale-dmodel")
def _(fn, ns):
    mha = RefMHA(8, 4, seed=2)
    x = torch.randn(1, 3, 8, generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        return wrong_value(fn, ref_heads(x, mha), x, mha, rtol=1e-4, atol=1e-5)


@test("f-05-heads-loop-weight-columns", "f-05-heads-loop-value-bias-missing", "f-05-heads-loop-wo-without-bias")
def _(fn, ns):
    mha = RefMHA(4, 2, seed=2)
    x = torch.randn(1, 3, 4, generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        return wrong_value(fn, ref_heads(x, mha), x, mha, rtol=1e-4, atol=1e-5)


@test("f-05-heads-loop-stack-dim0")
def _(fn, ns):
    mha = RefMHA(4, 2, seed=2)
    x = torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        return wrong_value(fn, ref_heads(x, mha), x, mha, rtol=1e-4, atol=1e-5)


def ref_count(d, h):
    return sum(p.numel() for p in RefMHA(d, h).parameters())


@test("f-05-count-no-biases", "f-05-count-times-heads", "f-05-count-square-head-projections")
def _(fn, ns):
    want = ref_count(4, 2)
    got, exc = call(fn, 4, 2)
    return (exc is not None or got != want), f"got {got}, want {want}"


@test("f-05-count-three-layers")
def _(fn, ns):
    want = ref_count(4, 1)
    got, exc = call(fn, 4, 1)
    return (exc is not None or got != want), f"got {got}, want {want}"


def ref_vdu(mha, head):
    d, dh = mha.d_model, mha.d_model // mha.n_heads
    f = slice(head * dh, (head + 1) * dh)
    with torch.no_grad():
        eye = torch.eye(d)
        down = (mha.w_v(eye) - mha.w_v.bias)[:, f]             # row r: what input feature r adds
        y = torch.zeros(dh, d)
        y[:, f] = torch.eye(dh)
        up = mha.w_o(y) - mha.w_o.bias                          # row r: what head feature r adds
    return down, up


@test("f-05-vdu-no-transposes", "f-05-vdu-down-from-columns", "f-05-vdu-returns-up-down")
def _(fn, ns):
    mha = RefMHA(4, 2, seed=4)
    return wrong_value(fn, ref_vdu(mha, 0), mha, 0)


@test("f-05-vdu-up-from-rows")
def _(fn, ns):
    mha = RefMHA(4, 2, seed=4)
    return wrong_value(fn, ref_vdu(mha, 1), mha, 1)


# ================================================================================ lesson 06

from courseware.ablation import MODEL, TASK, LEARNING_RATE, layer_outputs  # noqa: E402


def ok_object(exercise):
    w = S.Wrong("ok", exercise, "", "", "", S.OK_06[exercise])
    return load(w)


def ref_torch_mha(sd, prefix, x, h):
    d = x.shape[-1]
    dh = d // h
    W, b = sd[prefix + "in_proj_weight"], sd[prefix + "in_proj_bias"]
    q = x @ W[:d].T + b[:d]
    k = x @ W[d:2 * d].T + b[d:2 * d]
    v = x @ W[2 * d:].T + b[2 * d:]
    outs = []
    for i in range(h):
        f = slice(i * dh, (i + 1) * dh)
        w = torch.softmax(q[..., f] @ k[..., f].transpose(-1, -2) / math.sqrt(dh), dim=-1)
        outs.append(w @ v[..., f])
    o = torch.cat(outs, dim=-1)
    return o @ sd[prefix + "out_proj.weight"].T + sd[prefix + "out_proj.bias"]


def ref_block(sd, prefix, x, h, residual):
    d = x.shape[-1]
    ln = lambda t, n: F.layer_norm(t, (d,), sd[prefix + n + ".weight"], sd[prefix + n + ".bias"])  # noqa: E731
    a = ref_torch_mha(sd, prefix + "attn.", ln(x, "ln1"), h)
    x1 = x + a if residual else a
    z = ln(x1, "ln2")
    hid = F.gelu(z @ sd[prefix + "mlp.0.weight"].T + sd[prefix + "mlp.0.bias"])
    m = hid @ sd[prefix + "mlp.2.weight"].T + sd[prefix + "mlp.2.bias"]
    return x1 + m if residual else m


def random_state(template_module, seed):
    g = torch.Generator().manual_seed(seed)
    return {k: (0.5 * torch.randn(v.shape, generator=g, dtype=v.dtype) + (1.0 if k.endswith("ln1.weight") else 0.0))
            for k, v in template_module.state_dict().items()}


def block_wrong(cls, residual, seed=0, scale=1.0, shift=0.0):
    d, h, dff = 8, 2, 16
    OkBlock, _ = ok_object("Block")
    sd = random_state(OkBlock(d, h, dff, residual), seed)
    mod = cls(d, h, dff, residual)
    mod.load_state_dict(sd)
    x = scale * torch.randn(2, 3, d, generator=torch.Generator().manual_seed(seed + 1)) + shift
    with torch.no_grad():
        want = ref_block(sd, "", x, h, residual)
        return wrong_value(mod, want, x, rtol=1e-4, atol=1e-5)


@test("f-06-block-post-norm", "f-06-block-mlp-reads-ln1", "f-06-block-parallel-branches")
def _(fn, ns):
    return block_wrong(fn, True)


@test("f-06-block-no-residual-keeps-mlp-skip")
def _(fn, ns):
    return block_wrong(fn, False)


@test("f-06-block-skip-carries-normalised")
def _(fn, ns):
    return block_wrong(fn, True, scale=3.0, shift=2.0)


def ref_tiny(sd, tokens, n_layers, h, residual):
    d = sd["tok_emb.weight"].shape[1]
    x = sd["tok_emb.weight"][tokens] + sd["pos_emb.weight"][: tokens.shape[1]]
    for i in range(n_layers):
        x = ref_block(sd, f"blocks.{i}.", x, h, residual)
    x = F.layer_norm(x, (d,), sd["ln_f.weight"], sd["ln_f.bias"])
    return x @ sd["head.weight"].T + sd["head.bias"]


def tiny_wrong(cls, n_layers, residual, tokens, seed=0):
    OkTiny, _ = ok_object("TinyTransformer")
    sizes = dict(vocab_size=8, d_model=8, n_heads=2, d_ff=16, seq_len=8)
    sd = random_state(OkTiny(**sizes, n_layers=n_layers, residual=residual), seed)
    mod = cls(**sizes, n_layers=n_layers, residual=residual)
    mod.load_state_dict(sd)
    with torch.no_grad():
        want = ref_tiny(sd, tokens, n_layers, 2, residual)
        return wrong_value(mod, want, tokens, rtol=1e-4, atol=1e-5)


@test("f-06-tiny-pos-emb-of-tokens")
def _(fn, ns):
    return tiny_wrong(fn, 1, True, torch.tensor([[3, 3, 1]]))


@test("f-06-tiny-no-final-norm")
def _(fn, ns):
    return tiny_wrong(fn, 1, True, torch.tensor([[0, 1, 2, 3, 4], [5, 6, 7, 0, 1]]))


@test("f-06-tiny-residual-flag-dropped")
def _(fn, ns):
    return tiny_wrong(fn, 2, False, torch.tensor([[0, 1, 2, 3, 4], [5, 6, 7, 0, 1]]))


@test("f-06-tiny-one-shared-block", "f-06-tiny-only-last-block")
def _(fn, ns):
    return tiny_wrong(fn, 2, True, torch.tensor([[0, 1, 2, 3, 4], [5, 6, 7, 0, 1]]))


def ref_similarity(h):
    h = np.asarray(h, dtype=float)
    T = h.shape[-2]
    seqs = h.reshape(-1, T, h.shape[-1])
    vals = []
    for s in seqs:
        tot = 0.0
        for i in range(T):
            for j in range(T):
                if i != j:
                    tot += s[i] @ s[j] / (np.linalg.norm(s[i]) * np.linalg.norm(s[j]))
        vals.append(tot / (T * (T - 1)))
    return float(np.mean(vals))


def sim_wrong(fn, h):
    want = ref_similarity(h)
    got, exc = call(fn, torch.tensor(h, dtype=torch.float64))
    if exc is not None:
        return True, f"raises {exc!r}"
    if not isinstance(got, float):
        return True, f"returns {type(got).__name__}"
    return abs(got - want) > 1e-9, f"got {got:.4f}, want {want:.4f}"


@test("f-06-sim-diagonal-included")
def _(fn, ns):
    return sim_wrong(fn, [[1.0, 0.0], [0.0, 1.0]])


@test("f-06-sim-not-normalised")
def _(fn, ns):
    return sim_wrong(fn, [[2.0, 0.0], [2.0, 0.0]])


@test("f-06-sim-normalised-over-tokens")
def _(fn, ns):
    return sim_wrong(fn, [[1.0, 0.0], [1.0, 1.0]])


@test("f-06-sim-summed-over-batch")
def _(fn, ns):
    return sim_wrong(fn, [[[1.0, 0.0], [1.0, 0.0]], [[1.0, 0.0], [1.0, 0.0]]])


@test("f-06-sim-norm-without-keepdim")
def _(fn, ns):
    return sim_wrong(fn, [[3.0, 0.0], [1.0, 1.0]])


def small_model(seed=0):
    OkTiny, _ = ok_object("TinyTransformer")
    torch.manual_seed(seed)
    return OkTiny(vocab_size=8, d_model=16, n_heads=2, d_ff=32, n_layers=1, seq_len=8).double()


def ref_train(model, task, steps, seed):
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    model.train()
    out = []
    for _ in range(steps):
        tok, tgt = task.sample(g)
        logits = model(tok)
        loss = F.cross_entropy(logits.flatten(0, 1), tgt.flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
        out.append(loss.item())
    return out


def train_wrong(fn, steps, seed=0):
    m1 = small_model()
    m2 = copy.deepcopy(m1)
    want = ref_train(m1, TASK, steps, seed)
    got, exc = call(fn, m2, TASK, steps, seed)
    if exc is not None:
        return True, f"raises {exc!r}"
    if not isinstance(got, list) or len(got) != len(want):
        return True, f"returns {type(got).__name__} of length {len(got) if hasattr(got, '__len__') else '?'}"
    if not all(type(v) is float for v in got):
        return True, f"items are {type(got[0]).__name__}, not float"
    diff = [i for i, (a, b) in enumerate(zip(got, want)) if abs(a - b) > 1e-9 * max(1, abs(b))]
    return bool(diff), f"first differing step {diff[0] + 1 if diff else None}"


@test("f-06-train-no-zero-grad", "f-06-train-generator-reseeded-each-step")
def _(fn, ns):
    return train_wrong(fn, 4)


@test("f-06-train-cross-entropy-not-flattened", "f-06-train-last-position-only", "f-06-train-loss-tensor-kept")
def _(fn, ns):
    return train_wrong(fn, 1)


@test("f-06-train-step-before-backward")
def _(fn, ns):
    return train_wrong(fn, 3)


def ref_run(depths, steps, seed):
    OkTiny, _ = ok_object("TinyTransformer")
    probe, _ = TASK.sample(torch.Generator().manual_seed(seed))
    rows = []
    for depth in depths:
        for residual in (True, False):
            torch.manual_seed(seed)
            model = OkTiny(**MODEL, n_layers=depth, residual=residual)
            init = [ref_similarity(h.numpy()) for h in layer_outputs(model, probe)]
            losses = ref_train(model, TASK, steps, seed)
            trained = [ref_similarity(h.numpy()) for h in layer_outputs(model, probe)]
            rows.append(dict(depth=depth, residual=residual, losses=losses,
                             final_loss=sum(losses[-10:]) / len(losses[-10:]),
                             similarity_init=init, similarity_trained=trained))
    return rows


def run_wrong(fn, depths, steps, seed):
    want = ref_run(depths, steps, seed)
    got, exc = call(fn, depths, steps, seed)
    if exc is not None:
        return True, f"raises {exc!r}"
    if len(got) != len(want):
        return True, f"{len(got)} rows where {len(want)} belong"
    for r, (g, w) in enumerate(zip(got, want)):
        if set(g) != set(w):
            return True, f"row {r} keys {sorted(g)}"
        for key in w:
            gv, wv = g[key], w[key]
            if isinstance(wv, (bool, int)) and not isinstance(wv, float):
                if gv != wv:
                    return True, f"row {r} {key}: {gv} where {wv} belongs"
            elif differs(np.asarray(gv, dtype=float), np.asarray(wv, dtype=float), 1e-5, 1e-7):
                return True, f"row {r} {key} differs"
    return False, "same rows"


@test("f-06-run-seed-once", "f-06-run-final-loss-last-step", "f-06-run-final-loss-first-ten",
      "f-06-run-similarity-init-after-training", "f-06-run-without-first")
def _(fn, ns):
    return run_wrong(fn, (1,), 12, 0)


@test("f-06-run-train-seed-hardcoded")
def _(fn, ns):
    return run_wrong(fn, (1,), 12, 1)


# ================================================================================ lesson 07

from courseware.long_attention import stream_of  # noqa: E402


def ref_stats(blocks):
    row = np.concatenate([np.asarray(b, dtype=float) for b in blocks])
    m = row.max()
    return m, np.exp(row - m).sum()


def online_wrong(fn, blocks):
    want = ref_stats(blocks)
    with np.errstate(all="ignore"):
        got, exc = call(fn, stream_of([np.asarray(b, dtype=float) for b in blocks]))
    if exc is not None:
        return True, f"raises {type(exc).__name__}"
    if not isinstance(got, tuple) or len(got) != 2:
        return True, f"returns {got!r}"
    bad = any(not np.isfinite(g) or abs(g - w) > 1e-12 * max(1, abs(w)) for g, w in zip(got, want))
    return bad, f"got ({got[0]:.4f}, {got[1]:.4f}), want ({want[0]:.4f}, {want[1]:.4f})"


@test("f-07-online-no-rescale")
def _(fn, ns):
    return online_wrong(fn, [[0.0], [1.0]])


@test("f-07-online-rescale-sign-flipped")
def _(fn, ns):
    return online_wrong(fn, [[1.0, 2.0]])


@test("f-07-online-max-starts-at-zero")
def _(fn, ns):
    return online_wrong(fn, [[-1.0, -2.0]])


@test("f-07-online-returns-s-m")
def _(fn, ns):
    return online_wrong(fn, [[1.0, 3.0]])


@test("f-07-online-block-terms-own-max")
def _(fn, ns):
    return online_wrong(fn, [[3.0], [1.0, 2.0]])


@test("f-07-online-max-not-running")
def _(fn, ns):
    return online_wrong(fn, [[3.0], [1.0]])


@test("f-07-online-two-loops")
def _(fn, ns):
    return online_wrong(fn, [[1.0, 2.0], [0.5]])


def ref_attention(Q, K, V, causal=False):
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    S = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    if causal:
        T = S.shape[-1]
        S = np.where(np.tril(np.ones((T, T), dtype=bool)), S, -np.inf)
    S = S - S.max(axis=-1, keepdims=True)
    P = np.exp(S)
    P = P / P.sum(axis=-1, keepdims=True)
    return P @ V


def torch_check(Q, K, V, causal=False):
    t = [torch.from_numpy(np.asarray(a, dtype=np.float64)) for a in (Q, K, V)]
    return F.scaled_dot_product_attention(*t, is_causal=causal).numpy()


def qkv(seed, Tk=10, dk=4, dv=3):
    r = np.random.default_rng(seed)
    return r.normal(size=dk), r.normal(size=(Tk, dk)), r.normal(size=(Tk, dv))


@test("f-07-one-pass-output-not-rescaled", "f-07-one-pass-never-divided", "f-07-one-pass-no-scale",
      "f-07-one-pass-scale-by-tk", "f-07-one-pass-stops-one-short")
def _(fn, ns):
    q, K, V = qkv(3)
    want = ref_attention(q[None], K, V)[0]
    assert not differs(want, torch_check(q[None], K, V)[0])
    return wrong_value(fn, want, q, K, V, 3)


@test("f-07-one-pass-max-starts-at-zero")
def _(fn, ns):
    r = np.random.default_rng(4)
    K = -1000.0 + r.normal(size=(10, 1))
    V = r.normal(size=(10, 3))
    want = ref_attention(np.ones((1, 1)), K, V)[0]
    with np.errstate(all="ignore"):
        return wrong_value(fn, want, np.ones(1), K, V, 3)


def peak_memory(fn, *args):
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        result = fn(*args)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return result, peak


@test("f-07-one-pass-all-scores-first")
def _(fn, ns):
    r = np.random.default_rng(5)
    T = 1 << 20
    q, K, V = r.normal(size=2), r.normal(size=(T, 2)), r.normal(size=(T, 2))
    ok_fn, _ = load(S.Wrong("ok", "attention_one_pass", "", "", "", S.OK_07["attention_one_pass"]))
    want, ok_peak = peak_memory(ok_fn, q, K, V, 1024)
    got, peak = peak_memory(fn, q, K, V, 1024)
    same = not differs(got, want)
    return peak > 4 * 2 ** 20 and ok_peak < 2 ** 20, \
        f"peak {peak / 2 ** 20:.1f} MiB against the one-pass {ok_peak / 2 ** 10:.0f} KiB (values same: {same})"


def ref_skipped(T, bq, bk):
    count = 0
    for i0 in range(0, T, bq):
        last_query = min(i0 + bq, T) - 1
        for j0 in range(0, T, bk):
            count += j0 > last_query
    return count


def tiled_wrong(fn, T, bq, bk, causal, dv=3, batch=(), seed=6, Tq=None):
    r = np.random.default_rng(seed)
    Q = r.normal(size=batch + (T if Tq is None else Tq, 3))
    K = r.normal(size=batch + (T, 3))
    V = r.normal(size=batch + (T, dv))
    want_out = ref_attention(Q, K, V, causal)
    assert not differs(want_out, torch_check(Q, K, V, causal))
    want_skip = ref_skipped(T, bq, bk) if causal else 0
    with np.errstate(all="ignore"):
        got, exc = call(fn, Q, K, V, bq, bk, causal)
    if exc is not None:
        return True, f"raises {type(exc).__name__}: {str(exc).splitlines()[0][:70]}"
    out, skipped = got
    if differs(out, want_out):
        return True, f"output differs (skipped {skipped}, want {want_skip})"
    if skipped != want_skip:
        return True, f"output right, skipped {skipped} where {want_skip} belongs"
    return False, "same"


@test("f-07-tiled-skip-off-by-one")
def _(fn, ns):
    return tiled_wrong(fn, 4, 2, 1, True)


@test("f-07-tiled-skip-against-first-query", "f-07-tiled-mask-tile-local")
def _(fn, ns):
    return tiled_wrong(fn, 4, 4, 2, True)


@test("f-07-tiled-mask-strict")
def _(fn, ns):
    return tiled_wrong(fn, 4, 2, 2, True)


@test("f-07-tiled-scale-without-new-axis")
def _(fn, ns):
    return tiled_wrong(fn, 4, 2, 2, False, dv=2)


@test("f-07-tiled-break-counts-one")
def _(fn, ns):
    return tiled_wrong(fn, 12, 4, 4, True)


@test("f-07-tiled-full-transpose")
def _(fn, ns):
    return tiled_wrong(fn, 4, 2, 2, False, batch=(2,))


@test("f-07-tiled-state-not-reset")
def _(fn, ns):
    return tiled_wrong(fn, 4, 2, 2, False)


@test("f-07-tiled-key-step-block-q")
def _(fn, ns):
    return tiled_wrong(fn, 5, 2, 3, False)


def kv_script(cls, steps):
    """Run appends on a cache; return what is read after each: (len, keys, values) or an error name."""
    cache = cls()
    reads = []
    for k, v in steps:
        cache.append(k, v)
        try:
            reads.append((len(cache), np.array(cache.keys), np.array(cache.values)))
        except Exception as exc:  # noqa: BLE001
            reads.append(type(exc).__name__)
    return reads


def ref_kv(steps):
    ks, vs, reads = [], [], []
    for k, v in steps:
        k, v = np.atleast_2d(np.asarray(k, float)), np.atleast_2d(np.asarray(v, float))
        ks.extend(list(k))
        vs.extend(list(v))
        reads.append((len(ks), np.array(ks), np.array(vs)))
    return reads


def kv_wrong(fn, steps):
    want = ref_kv(steps)
    got, exc = call(kv_script, fn, steps)
    if exc is not None:
        return True, f"raises {type(exc).__name__}"
    for i, (g, w) in enumerate(zip(got, want)):
        if isinstance(g, str):
            return True, f"after append {i + 1}: reading raises {g}"
        if g[0] != w[0]:
            return True, f"after append {i + 1}: len {g[0]} where {w[0]} belongs"
        if differs(g[1], w[1]) or differs(g[2], w[2]):
            return True, f"after append {i + 1}: keys {g[1].shape} / values {g[2].shape} differ from {w[1].shape}"
    return False, "same"


R7 = np.random.default_rng(7)
KV_STEPS = [(R7.normal(size=3), R7.normal(size=2)), (R7.normal(size=3), R7.normal(size=2))]
KV_BLOCK = [(R7.normal(size=(3, 3)), R7.normal(size=(3, 2)))]


@test("f-07-kv-append-replaces", "f-07-kv-concatenate-axis1", "f-07-kv-newest-first", "f-07-kv-values-returns-keys")
def _(fn, ns):
    return kv_wrong(fn, KV_STEPS)


@test("f-07-kv-len-counts-appends")
def _(fn, ns):
    return kv_wrong(fn, KV_BLOCK)


@test("f-07-kv-keeps-caller-arrays")
def _(fn, ns):
    k, v = np.ones(3), np.full(2, 2.0)
    cache = fn()
    cache.append(k, v)
    k[:] = 7.0
    v[:] = 7.0
    keys = np.array(cache.keys)
    return bool((keys == 7.0).any()), f"cached key after the caller's change: {keys[0].tolist()}"


def decode_case(seed=8, d_model=6, d_k=4, d_v=3, T=5):
    r = np.random.default_rng(seed)
    W_q, W_k = r.normal(size=(2, d_model, d_k))
    W_v = r.normal(size=(d_model, d_v))
    X = r.normal(size=(T, d_model))
    full = ref_attention(X @ W_q, X @ W_k, X @ W_v, causal=True)
    assert not differs(full, torch_check(X @ W_q, X @ W_k, X @ W_v, True))
    return X, W_q, W_k, W_v, full


def decode_wrong(fn, ns, past, new, single=False):
    """`past` positions already in the cache (appended as keys and values), then `new` tokens."""
    X, W_q, W_k, W_v, full = decode_case()
    cache = ns["KVCache"]()
    if past:
        cache.append(X[:past] @ W_k, X[:past] @ W_v)
    x = X[past] if single else X[past:past + new]
    want = full[past] if single else full[past:past + new]
    with np.errstate(all="ignore"):
        return wrong_value(fn, want, x, cache, W_q, W_k, W_v)


@test("f-07-decode-append-after-attending")
def _(fn, ns):
    return decode_wrong(fn, ns, 3, 1, single=True)


@test("f-07-decode-tril-without-offset")
def _(fn, ns):
    return decode_wrong(fn, ns, 2, 2)


@test("f-07-decode-triu-mask", "f-07-decode-scale-dmodel", "f-07-decode-softmax-axis0",
      "f-07-decode-single-keeps-row-axis")
def _(fn, ns):
    return decode_wrong(fn, ns, 2, 1, single=True)


@test("f-07-decode-t-after-append")
def _(fn, ns):
    return decode_wrong(fn, ns, 0, 3)


# ================================================================================ lesson 08

def ref_sin(T, d):
    PE = np.zeros((T, d))
    for t in range(T):
        for i in range(d // 2):
            angle = t / 10000.0 ** (2 * i / d)
            PE[t, 2 * i] = math.sin(angle)
            PE[t, 2 * i + 1] = math.cos(angle)
    return PE


def ref_rope(x, positions, base=10000.0):
    x = np.asarray(x, dtype=float)
    d = x.shape[-1]
    freq = base ** (-np.arange(0, d, 2) / d)
    z = (x[..., 0::2] + 1j * x[..., 1::2]) * np.exp(1j * np.outer(np.asarray(positions, float), freq))
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = z.real, z.imag
    return out


def ref_scores(Q, K, pq, pk, base=10000.0):
    q, k = ref_rope(Q, pq, base), ref_rope(K, pk, base)
    return np.einsum("...md,...nd->...mn", q, k) / math.sqrt(Q.shape[-1])


@test("f-08-sin-cos-swapped", "f-08-sin-exponent-missing-2", "f-08-sin-exponent-sign", "f-08-sin-halves-not-pairs",
      "f-08-sin-integer-division", "f-08-sin-log10", "f-08-sin-no-column")
def _(fn, ns):
    return wrong_value(fn, ref_sin(2, 4), 2, 4)


@test("f-08-sin-positions-from-one")
def _(fn, ns):
    return wrong_value(fn, ref_sin(1, 2), 1, 2)


def rope_wrong(fn, x, positions, base=10000.0):
    x = np.asarray(x, dtype=float)
    want = ref_rope(x, positions, base)
    return wrong_value(fn, want, x.copy(), np.asarray(positions), base)


RX = np.random.default_rng(9)


@test("f-08-rope-clockwise", "f-08-rope-in-place")
def _(fn, ns):
    return rope_wrong(fn, [[1.0, 0.0]], [1])


@test("f-08-rope-base-hardcoded")
def _(fn, ns):
    return rope_wrong(fn, RX.normal(size=(1, 4)), [3], base=100.0)


@test("f-08-rope-halves", "f-08-rope-mixed-conventions")
def _(fn, ns):
    return rope_wrong(fn, [[1.0, 2.0, 3.0, 4.0]], [1])


@test("f-08-rope-concatenated-output")
def _(fn, ns):
    return rope_wrong(fn, [[1.0, 2.0, 3.0, 4.0]], [0])


@test("f-08-rope-no-column")
def _(fn, ns):
    return rope_wrong(fn, RX.normal(size=(2, 4)), [0, 5])


@test("f-08-rope-index-not-position")
def _(fn, ns):
    return rope_wrong(fn, RX.normal(size=(2, 4)), [5, 9])


@test("f-08-rope-exponent-missing-2")
def _(fn, ns):
    return rope_wrong(fn, RX.normal(size=(1, 4)), [3])


def scores_wrong(fn, Q, K, pq, pk, base=10000.0):
    want = ref_scores(Q, K, np.asarray(pq), np.asarray(pk), base)
    return wrong_value(fn, want, Q, K, np.asarray(pq), np.asarray(pk), base)


RS = np.random.default_rng(10)


@test("f-08-scores-keys-at-query-positions")
def _(fn, ns):
    return scores_wrong(fn, RS.normal(size=(2, 4)), RS.normal(size=(2, 4)), [10, 11], [0, 1])


@test("f-08-scores-base-not-passed")
def _(fn, ns):
    return scores_wrong(fn, RS.normal(size=(2, 4)), RS.normal(size=(3, 4)), [0, 1], [0, 1, 2], base=10.0)


@test("f-08-scores-divided-by-d", "f-08-scores-keys-by-queries")
def _(fn, ns):
    return scores_wrong(fn, RS.normal(size=(2, 4)), RS.normal(size=(3, 4)), [0, 1], [0, 1, 2])


@test("f-08-scores-full-transpose")
def _(fn, ns):
    return scores_wrong(fn, RS.normal(size=(2, 3, 4)), RS.normal(size=(2, 5, 4)), [0, 1, 2], [0, 1, 2, 3, 4])


@test("f-08-scores-keys-not-turned")
def _(fn, ns):
    return scores_wrong(fn, RS.normal(size=(2, 4)), RS.normal(size=(2, 4)), [3, 4], [3, 4])


@test("f-08-scores-keys-turned-back")
def _(fn, ns):
    return scores_wrong(fn, RS.normal(size=(2, 4)), RS.normal(size=(2, 4)), [1, 2], [1, 2])


# ================================================================================ main
# (the lessons 06-08 tests are added above this line)


OK_SOURCES = {
    "split_heads": S.IMPORTS_05 + S.SPLIT_OK,
    "merge_heads": S.IMPORTS_05 + S.MERGE_OK,
    "MultiHeadAttention": S.MHA_OK,
    "copy_from_torch": S.COPY_OK,
    "heads_one_by_one": S.HEADS_OK,
    "value_down_up": S.VDU_OK,
    "mha_parameter_count": S.IMPORTS_05 + S.COUNT_HEAD + "    return 4 * (d_model * d_model + d_model)\n",
}
for _name in ("OK_06", "OK_07", "OK_08"):
    OK_SOURCES.update(getattr(S, _name, {}))


def sanity():
    """Each test, run on the right program of its exercise, must find it right: this checks
    the references against the right programs the wrong answers were edited from."""
    bad = 0
    seen = set()
    for w in S.WRONG:
        fn_test = TESTS.get(w.id)
        if fn_test is None or fn_test in seen or w.exercise not in OK_SOURCES:
            continue
        seen.add(fn_test)
        ok = S.Wrong(w.id + "/right", w.exercise, "", "", "", OK_SOURCES[w.exercise])
        obj, ns = load(ok)
        torch.manual_seed(0)
        is_wrong, note = fn_test(obj, ns)
        if is_wrong:
            print(f"SANITY FAIL: the right {w.exercise} is judged wrong by {w.id}'s test: {note}")
            bad += 1
    print(f"sanity: {len(seen)} tests checked on right programs, {bad} disagree")
    return bad


def main(argv):
    only = set(argv)
    if sanity():
        return 2
    ids = [w.id for w in S.WRONG]
    assert len(ids) == len(set(ids)), "duplicate ids"
    bad = 0
    for w in S.WRONG:
        if only and w.id not in only:
            continue
        fn_test = TESTS.get(w.id)
        if fn_test is None:
            print(f"FAIL {w.id}: no test")
            bad += 1
            continue
        try:
            obj, ns = load(w)
            torch.manual_seed(0)
            is_wrong, note = fn_test(obj, ns)
        except Exception as exc:  # noqa: BLE001
            traceback.print_exc()
            is_wrong, note = False, f"test crashed: {exc!r}"
        print(f"{'ok  ' if is_wrong else 'FAIL'} {w.id}: {note}")
        bad += not is_wrong
    print(f"{len(S.WRONG)} answers, {bad} FAIL")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
