"""Verify set_b_05_08: every wrong answer differs from an independent correct computation
on the input its `wrong_on` names (or breaks the stated rule it claims to break), and a
right answer of the same exercise passes that same check (a control).

Run from a scratch folder:
    PYTHONPATH=/work/main /work/main/.venv/bin/python /work/scratch/heldout34b/verify_set_b_05_08.py
Prints one line per answer, ok or FAIL, and exits non-zero if any fails.
"""
from __future__ import annotations

import copy
import math
import os
import sys
import traceback

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from set_b_05_08 import WRONG  # noqa: E402

torch.set_num_threads(1)


def load(w):
    ns = {"__name__": f"answer_{w.id.replace('-', '_')}"}
    exec(compile(w.source, f"<{w.id}>", "exec"), ns)
    return ns


def differs(ours, ref, rtol=1e-6, atol=1e-8):
    """True when `ours` is not `ref`: another shape, other values, NaN, or not an array."""
    try:
        a = ours.detach().numpy() if isinstance(ours, torch.Tensor) else np.asarray(ours, dtype=float)
        b = ref.detach().numpy() if isinstance(ref, torch.Tensor) else np.asarray(ref, dtype=float)
    except Exception:
        return True
    if a.shape != b.shape:
        return True
    return not np.allclose(a, b, rtol=rtol, atol=atol)


def raises_or_differs(fn, ref):
    try:
        got = fn()
    except Exception as exc:   # an error where the reference gives a value is wrong too
        return True, f"raises {type(exc).__name__}: {str(exc).splitlines()[0][:80]}"
    return differs(got, ref), f"got {np.round(np.asarray(_np(got), dtype=float), 4).tolist() if np.size(_np(got)) < 13 else np.shape(_np(got))}, expected {np.round(_np(ref), 4).tolist() if np.size(_np(ref)) < 13 else np.shape(_np(ref))}"


def _np(x):
    if isinstance(x, torch.Tensor):
        return x.detach().numpy()
    return np.asarray(x)


# ============================================================================ lesson 05 references

def ref_split(x, h):
    B, T, D = x.shape
    dh = D // h
    out = torch.empty(B, h, T, dh)
    for b in range(B):
        for i in range(h):
            for t in range(T):
                out[b, i, t] = x[b, t, i * dh:(i + 1) * dh]
    return out


def ref_merge(x):
    B, h, T, dh = x.shape
    out = torch.empty(B, T, h * dh)
    for b in range(B):
        for t in range(T):
            for i in range(h):
                out[b, t, i * dh:(i + 1) * dh] = x[b, i, t]
    return out


def torch_mha(d, h, seed=0):
    torch.manual_seed(seed)
    theirs = nn.MultiheadAttention(d, h, batch_first=True)
    with torch.no_grad():
        theirs.in_proj_bias.normal_(0, 0.5)
        theirs.out_proj.bias.normal_(0, 0.5)
    return theirs


def load_torch_into(ours, theirs):
    """My own copy of torch's weights into a module with w_q, w_k, w_v, w_o."""
    d = theirs.embed_dim
    W, b = theirs.in_proj_weight.detach(), theirs.in_proj_bias.detach()
    with torch.no_grad():
        for i, name in enumerate(("w_q", "w_k", "w_v")):
            getattr(ours, name).weight.copy_(W[i * d:(i + 1) * d])
            getattr(ours, name).bias.copy_(b[i * d:(i + 1) * d])
        ours.w_o.weight.copy_(theirs.out_proj.weight)
        ours.w_o.bias.copy_(theirs.out_proj.bias)
    return ours


class RefMHA(nn.Module):
    """An independent multi-head attention (a loop over heads and einsum), w_q..w_o names."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        for name in ("w_q", "w_k", "w_v", "w_o"):
            setattr(self, name, nn.Linear(d_model, d_model))

    def forward(self, query, key, value, mask=None):
        q, k, v = self.w_q(query), self.w_k(key), self.w_v(value)
        dh, outs, maps = self.d_head, [], []
        for i in range(self.n_heads):
            f = slice(i * dh, (i + 1) * dh)
            s = torch.einsum("bqd,bkd->bqk", q[..., f], k[..., f]) / math.sqrt(dh)
            if mask is not None:
                m = mask[:, None, :] if mask.dim() == 2 else mask
                s = s.masked_fill(~m, float("-inf"))
            w = torch.softmax(s, dim=-1)
            maps.append(w)
            outs.append(w @ v[..., f])
        return self.w_o(torch.cat(outs, -1)), torch.stack(maps, 1)


def referee(theirs, query, key, value, real=None):
    return theirs(query, key, value, average_attn_weights=False,
                  key_padding_mask=None if real is None else ~real)


def check_mha_answer(ns, d, h, query, key, value, real=None):
    theirs = torch_mha(d, h, seed=1)
    ours = load_torch_into(ns["MultiHeadAttention"](d, h), theirs)
    t_out, t_w = referee(theirs, query, key, value, real)
    try:
        with torch.no_grad():
            out, w = ours(query, key, value, mask=real)
    except Exception as exc:
        return True, f"raises {type(exc).__name__}: {str(exc).splitlines()[0][:80]}"
    bad = differs(out, t_out, 1e-4, 1e-5) or differs(w, t_w, 1e-4, 1e-5)
    return bad, f"max |out - torch| = {(out - t_out).abs().max().item() if out.shape == t_out.shape else 'shape ' + str(tuple(out.shape))}"


# ============================================================================ lesson 06 references

def randomise(module, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype) * 0.5)
    return module


def ref_block_forward(block, x, residual):
    """Independent pre-norm block from the block's own submodules, via functional calls."""
    ln1, ln2, attn, mlp = block.ln1, block.ln2, block.attn, block.mlp
    h = F.layer_norm(x, (x.shape[-1],), ln1.weight, ln1.bias, ln1.eps)
    a, _ = attn(h, h, h, need_weights=False)
    x = x + a if residual else a
    h = F.layer_norm(x, (x.shape[-1],), ln2.weight, ln2.bias, ln2.eps)
    m = mlp[2](F.gelu(mlp[0](h)))
    return x + m if residual else m


class RefBlock(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, residual=True):
        super().__init__()
        self.d_model, self.residual = d_model, residual
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x):
        return ref_block_forward(self, x, self.residual)


class RefTiny(nn.Module):
    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual=True):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(seq_len, d_model)
        self.blocks = nn.ModuleList([RefBlock(d_model, n_heads, d_ff, residual) for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens):
        x = self.tok_emb(tokens) + self.pos_emb(torch.arange(tokens.shape[1]))
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln_f(x))


def ref_similarity(h):
    h = np.asarray(h, dtype=float)
    flat = h.reshape(-1, h.shape[-2], h.shape[-1])
    sims = []
    for seq in flat:
        T = len(seq)
        tot = 0.0
        for i in range(T):
            for j in range(T):
                if i != j:
                    tot += seq[i] @ seq[j] / (np.linalg.norm(seq[i]) * np.linalg.norm(seq[j]))
        sims.append(tot / (T * (T - 1)))
    return float(np.mean(sims))


class SmallTask:
    """A task like the lesson's, small: targets = token + first token mod 8."""
    vocab_size, seq_len, batch_size = 8, 4, 6

    def sample(self, generator):
        t = torch.randint(0, 8, (6, 4), generator=generator)
        return t, (t + t[:, :1]) % 8


def small_model(seed):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Embedding(8, 12), nn.Linear(12, 8)).double()


def ref_train(model, task, steps, seed, lr):
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        tok, tgt = task.sample(g)
        logits = model(tok)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


# ============================================================================ lesson 07 references

def ref_attention(Q, K, V, causal=False):
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if causal:
        T = S.shape[-1]
        S = np.where(np.tril(np.ones((T, T), dtype=bool)), S, -np.inf)
    W = np.exp(S - S.max(-1, keepdims=True))
    return (W / W.sum(-1, keepdims=True)) @ V


def ref_skipped(T, bq, bk):
    n = 0
    for i0 in range(0, T, bq):
        last_q = min(i0 + bq, T) - 1
        for j0 in range(0, T, bk):
            if j0 > last_q:
                n += 1
    return n


class RowLog(np.ndarray):
    """An array that notes the rows its slices read, in order (my own one-pass detector)."""

    def __new__(cls, a, log):
        obj = np.asarray(a, dtype=float).view(cls)
        obj.log = log
        return obj

    def __array_finalize__(self, obj):
        self.log = getattr(obj, "log", None)

    def __getitem__(self, item):
        if isinstance(item, slice) and self.log is not None:
            start, stop, _ = item.indices(self.shape[0])
            self.log.append((start, stop))
        res = super().__getitem__(item)
        return res.view(np.ndarray) if isinstance(res, np.ndarray) else res


def went_back(log):
    """True when a slice starts before the start of an earlier slice (rows read again)."""
    seen_start = -1
    for start, _ in log:
        if start < seen_start:
            return True
        seen_start = max(seen_start, start)
    return False


# ============================================================================ lesson 08 references

def ref_sinusoidal(T, d):
    PE = np.zeros((T, d))
    for t in range(T):
        for i in range(d // 2):
            PE[t, 2 * i] = math.sin(t / 10000 ** (2 * i / d))
            PE[t, 2 * i + 1] = math.cos(t / 10000 ** (2 * i / d))
    return PE


def ref_rope(x, p, base=10000.0):
    x = np.asarray(x, dtype=float)
    d = x.shape[-1]
    freq = base ** (-np.arange(0, d, 2) / d)
    z = (x[..., 0::2] + 1j * x[..., 1::2]) * np.exp(1j * np.outer(np.asarray(p, dtype=float), freq))
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = z.real, z.imag
    return out


def ref_rope_scores(Q, K, pq, pk, base=10000.0):
    q, k = ref_rope(Q, pq, base), ref_rope(K, pk, base)
    return np.einsum("...qd,...kd->...qk", q, k) / np.sqrt(np.shape(Q)[-1])


# ============================================================================ the checks, per id

CHECKS = {}


def check(id_):
    def deco(fn):
        CHECKS[id_] = fn
        return fn
    return deco


# ---------------- 05 split_heads / merge_heads
@check("b34-05-split-heads-interleaved-features")
def _(ns):
    x = torch.arange(4.0).reshape(1, 1, 4)
    return raises_or_differs(lambda: ns["split_heads"](x, 2), ref_split(x, 2))


@check("b34-05-split-heads-split-size-is-count")
def _(ns):
    x = torch.arange(12.0).reshape(1, 2, 6)
    return raises_or_differs(lambda: ns["split_heads"](x, 2), ref_split(x, 2))


@check("b34-05-split-heads-no-transpose")
def _(ns):
    x = torch.arange(12.0).reshape(1, 3, 4)
    return raises_or_differs(lambda: ns["split_heads"](x, 2), ref_split(x, 2))


@check("b34-05-merge-heads-head-axis-last")
def _(ns):
    x = torch.arange(4.0).reshape(1, 2, 1, 2)
    return raises_or_differs(lambda: ns["merge_heads"](x), ref_merge(x))


@check("b34-05-merge-heads-cat-along-tokens")
def _(ns):
    x = torch.arange(12.0).reshape(1, 2, 3, 2)
    return raises_or_differs(lambda: ns["merge_heads"](x), ref_merge(x))


@check("b34-05-merge-heads-plain-reshape")
def _(ns):
    x = torch.arange(4.0).reshape(1, 2, 2, 1)
    return raises_or_differs(lambda: ns["merge_heads"](x), ref_merge(x))


# ---------------- 05 MultiHeadAttention
torch.manual_seed(11)
_X8 = torch.randn(1, 3, 8)
_X4 = torch.randn(1, 3, 4)
_DEC, _ENC = torch.randn(1, 2, 4), torch.randn(1, 3, 4)
_KEYMASK = torch.tensor([[True, True, False]])


@check("b34-05-mha-scale-sqrt-d-model")
def _(ns):
    return check_mha_answer(ns, 8, 2, _X8, _X8, _X8)


@check("b34-05-mha-softmax-over-queries")
def _(ns):
    return check_mha_answer(ns, 4, 2, _X4, _X4, _X4)


@check("b34-05-mha-mask-fill-true")
def _(ns):
    return check_mha_answer(ns, 4, 2, _X4, _X4, _X4, _KEYMASK)


@check("b34-05-mha-no-output-projection")
def _(ns):
    return check_mha_answer(ns, 4, 2, _X4, _X4, _X4)


@check("b34-05-mha-keys-from-query")
def _(ns):
    return check_mha_answer(ns, 4, 2, _DEC, _ENC, _ENC)


@check("b34-05-mha-values-through-w-k")
def _(ns):
    return check_mha_answer(ns, 4, 2, _X4, _X4, _X4)


@check("b34-05-mha-mask-after-softmax")
def _(ns):
    return check_mha_answer(ns, 4, 2, _X4, _X4, _X4, _KEYMASK)


# ---------------- 05 copy_from_torch
def copy_case(ns, d=4, h=2):
    theirs = torch_mha(d, h, seed=3)
    ours = RefMHA(d, h)
    try:
        with torch.no_grad():
            got = ns["copy_from_torch"](ours, theirs)
            out, w = got(_X4, _X4, _X4)
    except Exception as exc:
        return True, f"raises {type(exc).__name__}: {exc}"
    t_out, t_w = referee(theirs, _X4, _X4, _X4)
    gap = (out - t_out).abs().max().item()
    return differs(out, t_out, 1e-4, 1e-5) or differs(w, t_w, 1e-4, 1e-5), f"max |out - torch| = {gap:.3g}"


@check("b34-05-copy-weights-transposed")
def _(ns):
    return copy_case(ns)


@check("b34-05-copy-forgot-out-bias")
def _(ns):
    return copy_case(ns)


@check("b34-05-copy-bias-slice-not-changed")
def _(ns):
    return copy_case(ns)


@check("b34-05-copy-new-parameters")
def _(ns):
    theirs = torch_mha(4, 2, seed=3)
    ours = RefMHA(4, 2)
    before = {n: p for n, p in ours.named_parameters()}
    got = ns["copy_from_torch"](ours, theirs)
    with torch.no_grad():
        out, _ = got(_X4, _X4, _X4)
    t_out, _ = referee(theirs, _X4, _X4, _X4)
    values_right = not differs(out, t_out, 1e-4, 1e-5)
    replaced = [n for n, p in got.named_parameters() if before[n] is not p]
    with torch.no_grad():
        theirs.in_proj_weight.add_(1.0)
    aliased = torch.equal(got.w_q.weight, theirs.in_proj_weight[:4])
    return bool(values_right and replaced), f"values right: {values_right}; parameters replaced: {replaced}; shares memory with theirs: {aliased}"


# ---------------- 05 heads_one_by_one
def hobo_case(ns, d=4, h=2, x=None):
    torch.manual_seed(5)
    mha = RefMHA(d, h)
    with torch.no_grad():
        for lin in (mha.w_q, mha.w_k, mha.w_v, mha.w_o):
            lin.bias.normal_(0, 0.5)
    x = torch.randn(1, 3, d) if x is None else x
    with torch.no_grad():
        ref_out, ref_w = mha(x, x, x)
        try:
            out, w = ns["heads_one_by_one"](x, mha)
        except Exception as exc:
            return True, f"raises {type(exc).__name__}: {exc}"
    shapes = f"weights {tuple(w.shape)} vs {tuple(ref_w.shape)}"
    return differs(out, ref_out, 1e-4, 1e-5) or differs(w, ref_w, 1e-4, 1e-5), shapes


for _id in ("b34-05-hobo-weight-columns", "b34-05-hobo-value-bias-left-out",
            "b34-05-hobo-maps-stacked-dim2", "b34-05-hobo-slice-stride-one"):
    CHECKS[_id] = hobo_case


# ---------------- 05 mha_parameter_count
def count_case(d, h):
    def run(ns):
        ref = sum(p.numel() for p in nn.MultiheadAttention(d, h).parameters())
        got = ns["mha_parameter_count"](d, h)
        return got != ref, f"got {got}, expected {ref}"
    return run


CHECKS["b34-05-count-no-biases"] = count_case(2, 1)
CHECKS["b34-05-count-forgot-w-o"] = count_case(2, 1)
CHECKS["b34-05-count-one-head"] = count_case(4, 2)


# ---------------- 05 value_down_up
def vdu_case(ns):
    torch.manual_seed(6)
    mha = RefMHA(4, 2)
    head, dh, d = 0, 2, 4
    f = slice(head * dh, (head + 1) * dh)
    with torch.no_grad():
        eye = torch.eye(d)
        down = (mha.w_v(eye) - mha.w_v.bias)[:, f]                 # row r: what input feature r adds
        inp = torch.zeros(dh, d)
        inp[:, f] = torch.eye(dh)
        up = mha.w_o(inp) - mha.w_o.bias                             # row r: what head feature r adds
        got = ns["value_down_up"](mha, head)
    ok_types = isinstance(got, tuple) and len(got) == 2
    if not ok_types:
        return True, f"returned {type(got).__name__}"
    bad = differs(got[0], down) or differs(got[1], up)
    return bad, f"down {tuple(got[0].shape)} (expected {tuple(down.shape)}), up {tuple(got[1].shape)} (expected {tuple(up.shape)}); down equal: {not differs(got[0], down)}, up equal: {not differs(got[1], up)}"


for _id in ("b34-05-vdu-up-rows-of-w-o", "b34-05-vdu-down-columns-of-w-v", "b34-05-vdu-up-not-transposed"):
    CHECKS[_id] = vdu_case


# ---------------- 06 Block
def block_case(residual_values=(True, False)):
    def run(ns):
        notes, bad = [], False
        for residual in residual_values:
            torch.manual_seed(0)
            block = randomise(ns["Block"](8, 2, 16, residual=residual), seed=7)
            x = torch.randn(2, 4, 8, generator=torch.Generator().manual_seed(8))
            with torch.no_grad():
                ref = ref_block_forward(block, x, residual)
                try:
                    got = block(x)
                except Exception as exc:
                    bad = True
                    notes.append(f"residual={residual}: raises {type(exc).__name__}")
                    continue
            d = differs(got, ref, 1e-5, 1e-6)
            bad |= d
            notes.append(f"residual={residual}: {'differs' if d else 'right'}")
        return bad, "; ".join(notes)
    return run


CHECKS["b34-06-block-skip-adds-normed"] = block_case((True,))
CHECKS["b34-06-block-ln1-twice"] = block_case((True, False))
CHECKS["b34-06-block-mlp-skip-kept"] = block_case((False,))
CHECKS["b34-06-block-post-norm"] = block_case((True, False))


# ---------------- 06 TinyTransformer
SIZES = dict(vocab_size=8, d_model=8, n_heads=2, d_ff=16, seq_len=8)


def tiny_case(n_layers, residual, tokens):
    def run(ns):
        torch.manual_seed(0)
        ref = randomise(RefTiny(**SIZES, n_layers=n_layers, residual=residual), seed=9)
        learner = ns["TinyTransformer"](**SIZES, n_layers=n_layers, residual=residual)
        missing = learner.load_state_dict(ref.state_dict(), strict=False)
        with torch.no_grad():
            expected = ref(tokens)
            try:
                got = learner(tokens)
            except Exception as exc:
                return True, f"raises {type(exc).__name__}: {str(exc).splitlines()[0][:90]}"
        gap = (got - expected).abs().max().item() if got.shape == expected.shape else "shape"
        return differs(got, expected, 1e-5, 1e-6), f"max gap {gap}; load: {missing}"
    return run


CHECKS["b34-06-tiny-positions-seq-len"] = tiny_case(1, True, torch.randint(0, 8, (2, 5), generator=torch.Generator().manual_seed(1)))
CHECKS["b34-06-tiny-residual-not-passed"] = tiny_case(2, False, torch.randint(0, 8, (2, 8), generator=torch.Generator().manual_seed(1)))
CHECKS["b34-06-tiny-same-block-repeated"] = tiny_case(2, True, torch.randint(0, 8, (2, 8), generator=torch.Generator().manual_seed(1)))
CHECKS["b34-06-tiny-pos-emb-of-tokens"] = tiny_case(1, True, torch.tensor([[3, 3]]))


# ---------------- 06 token_similarity
def sim_case(h):
    def run(ns):
        ref = ref_similarity(h)
        try:
            got = ns["token_similarity"](torch.tensor(h, dtype=torch.float64))
        except Exception as exc:
            return True, f"raises {type(exc).__name__}: {exc}"
        return (not isinstance(got, float)) or abs(got - ref) > 1e-9, f"got {got!r}, expected {ref:.4f}"
    return run


CHECKS["b34-06-sim-diagonal-kept"] = sim_case([[1.0, 0.0], [0.0, 1.0]])
CHECKS["b34-06-sim-normalise-over-tokens"] = sim_case([[1.0, 0.0], [1.0, 1.0]])
CHECKS["b34-06-sim-transpose-1-2"] = sim_case(np.random.default_rng(0).normal(size=(3, 4)).tolist())
CHECKS["b34-06-sim-divide-by-t-squared"] = sim_case([[1.0, 0.0], [1.0, 0.0]])


# ---------------- 06 train
def train_case(steps):
    def run(ns):
        from courseware.ablation import LEARNING_RATE
        m1, m2 = small_model(0), small_model(0)
        ref = ref_train(m1, SmallTask(), steps, 4, LEARNING_RATE)
        got = ns["train"](m2, SmallTask(), steps, 4)
        return differs(got, ref, 1e-9, 1e-12), f"got {np.round(got, 4).tolist()}, expected {np.round(ref, 4).tolist()}"
    return run


CHECKS["b34-06-train-zero-grad-after-backward"] = train_case(3)
CHECKS["b34-06-train-last-position-only"] = train_case(1)


# ---------------- 06 run_ablation
@check("b34-06-run-seed-once")
def _(ns):
    rows = ns["run_ablation"]([1], 2, 0)
    a, b = rows[0]["similarity_init"][0], rows[1]["similarity_init"][0]
    return abs(a - b) > 1e-9, f"similarity_init[0]: with {a:.6f}, without {b:.6f} (must be equal)"


@check("b34-06-run-final-loss-one-step")
def _(ns):
    rows = ns["run_ablation"]([1], 12, 0)
    bad = [r for r in rows if abs(r["final_loss"] - float(np.mean(r["losses"][-10:]))) > 1e-12]
    return bool(bad), f"final_loss {rows[0]['final_loss']:.6f} vs mean of last 10 {np.mean(rows[0]['losses'][-10:]):.6f}"


# ---------------- 07 online_softmax_stats
def oss_case(blocks):
    def run(ns):
        from courseware.long_attention import stream_of
        row = np.concatenate([np.asarray(b, dtype=float) for b in blocks])
        m = row.max()
        ref = (m, np.exp(row - m).sum())
        with np.errstate(all="ignore"):
            try:
                got = ns["online_softmax_stats"](stream_of([np.asarray(b, dtype=float) for b in blocks]))
            except Exception as exc:
                return True, f"raises {type(exc).__name__}: {exc}"
        return differs(got, ref), f"got {tuple(np.round(np.asarray(got, dtype=float), 4))}, expected {tuple(np.round(ref, 4))}"
    return run


CHECKS["b34-07-oss-max-updated-before-rescale"] = oss_case([[0.0], [1.0]])
CHECKS["b34-07-oss-rescale-sign-flipped"] = oss_case([[0.0], [1.0]])
CHECKS["b34-07-oss-max-starts-at-zero"] = oss_case([[-1.0, -2.0]])
CHECKS["b34-07-oss-new-terms-old-max"] = oss_case([[1.0, 2.0]])


# ---------------- 07 attention_one_pass
def aop_case(q, K, V, block):
    def run(ns):
        ref = ref_attention(np.asarray(q, float)[None], K, V)[0]
        with np.errstate(all="ignore"):
            try:
                got = ns["attention_one_pass"](np.asarray(q, float), np.asarray(K, float), np.asarray(V, float), block)
            except Exception as exc:
                return True, f"raises {type(exc).__name__}: {exc}"
        return differs(got, ref), f"got {np.round(got, 4).tolist()}, expected {np.round(ref, 4).tolist()}"
    return run


CHECKS["b34-07-aop-no-scale"] = aop_case([1, 1, 1, 1], [[1, 0, 0, 0], [0, 0, 0, 0]], [[1.0], [0.0]], 1)
CHECKS["b34-07-aop-output-not-rescaled"] = aop_case([1.0], [[0.0], [1.0]], [[1.0], [0.0]], 1)
CHECKS["b34-07-aop-last-short-block-dropped"] = aop_case([1.0], [[0.0], [0.5], [1.0]], [[0.0], [0.0], [1.0]], 2)
CHECKS["b34-07-aop-sum-not-accumulated"] = aop_case([0.0], [[0.0], [0.0]], [[1.0], [1.0]], 1)


@check("b34-07-aop-two-passes")
def _(ns):
    log = []
    q = np.array([1.0])
    K = RowLog(np.array([[0.0], [1.0], [2.0]]), log)
    V = np.array([[1.0], [2.0], [3.0]])
    got = ns["attention_one_pass"](q, K, V, 1)
    ref = ref_attention(q[None], np.asarray(K), V)[0]
    right = not differs(got, ref)
    back = went_back(log)
    return right and back, f"values right: {right}; rows of K read as slices: {log}; went back: {back}"


# ---------------- 07 tiled_attention
def tiled_case(T, bq, bk, causal, d=2, dv=2, seed=0, check_count=True):
    def run(ns):
        rng = np.random.default_rng(seed)
        Q, K, V = rng.normal(size=(T, d)), rng.normal(size=(T, d)), rng.normal(size=(T, dv))
        ref = ref_attention(Q, K, V, causal)
        ref_n = ref_skipped(T, bq, bk) if causal else 0
        with np.errstate(all="ignore"):
            try:
                out, n = ns["tiled_attention"](Q, K, V, bq, bk, causal)
            except Exception as exc:
                return True, f"raises {type(exc).__name__}: {exc}"
        bad = differs(out, ref) or (check_count and n != ref_n)
        rows = [i for i in range(T) if differs(np.asarray(out)[i], ref[i])] if np.shape(out) == ref.shape else "shape"
        return bad, f"rows that differ: {rows}; skipped {n} (expected {ref_n})"
    return run


CHECKS["b34-07-tiled-skip-condition-off-by-one"] = tiled_case(3, 2, 1, True)
CHECKS["b34-07-tiled-mask-strict"] = tiled_case(2, 1, 1, True)
CHECKS["b34-07-tiled-floor-number-of-blocks"] = tiled_case(3, 2, 2, False)
CHECKS["b34-07-tiled-keepdims-forgotten"] = tiled_case(4, 2, 2, False)
CHECKS["b34-07-tiled-local-positions"] = tiled_case(4, 4, 2, True)


# ---------------- 07 KVCache
@check("b34-07-kv-prepends")
def _(ns):
    c = ns["KVCache"]()
    c.append([1.0], [1.0])
    c.append([2.0], [2.0])
    return differs(c.keys, [[1.0], [2.0]]), f"keys {np.asarray(c.keys).tolist()}"


@check("b34-07-kv-len-counts-appends")
def _(ns):
    c = ns["KVCache"]()
    c.append(np.ones((3, 2)), np.ones((3, 2)))
    return len(c) != 3, f"len {len(c)} (expected 3)"


@check("b34-07-kv-class-level-lists")
def _(ns):
    a = ns["KVCache"]()
    a.append([1.0, 2.0], [3.0])
    b = ns["KVCache"]()
    return len(b) != 0, f"a new cache has len {len(b)} (expected 0)"


@check("b34-07-kv-stores-callers-array")
def _(ns):
    c = ns["KVCache"]()
    k = np.ones((2, 3))
    c.append(k, k)
    k[:] = 0
    return differs(c.keys, np.ones((2, 3))), f"keys after the caller zeroed its array: {np.asarray(c.keys).tolist()}"


# ---------------- 07 decode_step
def decode_case(n_cached, n_new, d_model=6, d_k=4, single=False):
    def run(ns):
        rng = np.random.default_rng(3)
        W_q, W_k, W_v = rng.normal(size=(3, d_model, d_k)) / np.sqrt(d_model)
        X = rng.normal(size=(n_cached + n_new, d_model))
        full = ref_attention(X @ W_q, X @ W_k, X @ W_v, causal=True)
        ref = full[n_cached:]
        cache = ns["KVCache"]()
        if n_cached:
            cache.append(X[:n_cached] @ W_k, X[:n_cached] @ W_v)
        x_t = X[n_cached] if single else X[n_cached:]
        if single:
            ref = ref[0]
        try:
            got = ns["decode_step"](x_t, cache, W_q, W_k, W_v)
        except Exception as exc:
            return True, f"raises {type(exc).__name__}: {exc}"
        gap = np.abs(np.asarray(got) - ref).max() if np.shape(got) == ref.shape else "shape"
        return differs(got, ref), f"got shape {np.shape(got)}, expected {ref.shape}; max gap {gap}"
    return run


CHECKS["b34-07-decode-block-unmasked"] = decode_case(0, 2)
CHECKS["b34-07-decode-mask-not-offset"] = decode_case(1, 2)
CHECKS["b34-07-decode-scale-d-model"] = decode_case(2, 1, single=True)
CHECKS["b34-07-decode-single-keeps-row-axis"] = decode_case(2, 1, single=True)


# ---------------- 08 sinusoidal_positions
def sin_case(T, d):
    def run(ns):
        return raises_or_differs(lambda: ns["sinusoidal_positions"](T, d), ref_sinusoidal(T, d))
    return run


CHECKS["b34-08-sin-exponent-i-not-2i"] = sin_case(2, 4)
CHECKS["b34-08-sin-halves-not-interleaved"] = sin_case(1, 4)
CHECKS["b34-08-sin-positions-from-one"] = sin_case(1, 2)
CHECKS["b34-08-sin-integer-division"] = sin_case(2, 4)
CHECKS["b34-08-sin-multiplied-by-frequency-power"] = sin_case(2, 4)


# ---------------- 08 rope
def rope_case(x, p, base=10000.0):
    def run(ns):
        xa = np.asarray(x, dtype=float)
        keep = xa.copy()
        bad, note = raises_or_differs(lambda: ns["rope"](xa, p, base), ref_rope(keep, p, base))
        return bad, note
    return run


CHECKS["b34-08-rope-clockwise"] = rope_case([[1.0, 0.0]], [1])
CHECKS["b34-08-rope-output-concatenated"] = rope_case([[1.0, 2.0, 3.0, 4.0]], [0])
CHECKS["b34-08-rope-second-line-reads-updated"] = rope_case([[1.0, 0.0]], [1])
CHECKS["b34-08-rope-base-hard-coded"] = rope_case([[0.0, 0.0, 1.0, 0.0]], [1], 100.0)
CHECKS["b34-08-rope-exponent-over-half-d"] = rope_case([[0.0, 0.0, 1.0, 0.0]], [1])


# ---------------- 08 rope_scores
def scores_case(Q, K, pq, pk, base=10000.0):
    def run(ns):
        Qa, Ka = np.asarray(Q, float), np.asarray(K, float)
        return raises_or_differs(lambda: ns["rope_scores"](Qa, Ka, pq, pk, base), ref_rope_scores(Qa, Ka, pq, pk, base))
    return run


CHECKS["b34-08-scores-positions-swapped"] = scores_case([[1.0, 0.0]], [[0.0, 1.0]], [2], [0])
CHECKS["b34-08-scores-divided-by-d"] = scores_case([[1.0, 0.0, 0.0, 0.0]], [[1.0, 0.0, 0.0, 0.0]], [0], [0])
CHECKS["b34-08-scores-keys-not-turned"] = scores_case([[1.0, 0.0]], [[1.0, 0.0]], [1], [1])
CHECKS["b34-08-scores-base-not-passed"] = scores_case([[0.0, 0.0, 1.0, 0.0]], [[0.0, 0.0, 1.0, 0.0]], [1], [0], 100.0)



# ============================================================================ controls
# A right answer for each exercise, built from the same given lines: every check above must
# pass it, so that each wrong answer fails for its own mistake and not for the check's input.

import set_b_05_08 as S  # noqa: E402

CONTROL = {
    "split_heads": S.IMPORTS_05 + S.SPLIT_OK,
    "merge_heads": S.IMPORTS_05 + S.MERGE_OK,
    "MultiHeadAttention": S.mha_source(S.MHA_BODY_OK),
    "copy_from_torch": S.IMPORTS_05 + S.COPY_HEAD + """    W, b = theirs.in_proj_weight, theirs.in_proj_bias
    with torch.no_grad():
        for i, lin in enumerate((ours.w_q, ours.w_k, ours.w_v)):
            lin.weight.copy_(W[i * d:(i + 1) * d])
            lin.bias.copy_(b[i * d:(i + 1) * d])
        ours.w_o.weight.copy_(theirs.out_proj.weight)
        ours.w_o.bias.copy_(theirs.out_proj.bias)
    return ours
""",
    "heads_one_by_one": S.IMPORTS_05 + S.HOBO_HEAD + """    for i in range(mha.n_heads):
        f = slice(i * d_head, (i + 1) * d_head)
        q = x @ mha.w_q.weight[f].T + mha.w_q.bias[f]
        k = x @ mha.w_k.weight[f].T + mha.w_k.bias[f]
        v = x @ mha.w_v.weight[f].T + mha.w_v.bias[f]
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_head), dim=-1)
        outputs.append(w @ v)
        maps.append(w)
    return mha.w_o(torch.cat(outputs, dim=-1)), torch.stack(maps, dim=1)
""",
    "mha_parameter_count": S.IMPORTS_05 + S.COUNT_HEAD + "    return 4 * (d_model * d_model + d_model)\n",
    "value_down_up": S.IMPORTS_05 + S.VDU_HEAD + """    return mha.w_v.weight[features].T, mha.w_o.weight[:, features].T
""",
    "Block": S.IMPORTS_06 + S.BLOCK_OK_SRC,
    "TinyTransformer": S.IMPORTS_06 + S.BLOCK_OK_SRC + S.TINY_OK_SRC,
    "token_similarity": S.IMPORTS_06 + S.SIM_OK,
    "train": S.IMPORTS_06 + S.TRAIN_OK,
    "run_ablation": S.IMPORTS_06 + S.BLOCK_OK_SRC + S.TINY_OK_SRC + S.SIM_OK + S.TRAIN_OK + S.RUN_HEAD + """    for depth in depths:
        for residual in (True, False):
            torch.manual_seed(seed)
            model = TinyTransformer(**MODEL, n_layers=depth, residual=residual)
            sim_init = [token_similarity(s) for s in layer_outputs(model, probe)]
            losses = train(model, TASK, steps, seed)
            rows.append({
                "depth": depth, "residual": residual, "losses": losses,
                "final_loss": float(np.mean(losses[-10:])),
                "similarity_init": sim_init,
                "similarity_trained": [token_similarity(s) for s in layer_outputs(model, probe)],
            })
    return rows
""",
    "online_softmax_stats": S.IMPORTS_07 + S.OSS_HEAD + """    m, s = -np.inf, 0.0
    for b in blocks:
        m_new = max(m, float(b.max()))
        s = s * np.exp(m - m_new) + float(np.exp(b - m_new).sum())
        m = m_new
    return m, s
""",
    "attention_one_pass": S.IMPORTS_07 + S.AOP_HEAD + S.AOP_LOOP_OK,
    "tiled_attention": S.IMPORTS_07 + S.TILE_HEAD + S.TILE_BODY_OK,
    "KVCache": S.IMPORTS_07 + S.KV_OK,
    "decode_step": S.IMPORTS_07 + S.KV_OK + S.DECODE_HEAD + S.DECODE_BODY_OK,
    "sinusoidal_positions": S.IMPORTS_08 + S.SIN_HEAD + """    angles = np.arange(T)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)[None, :]
    PE = np.zeros((T, d))
    PE[:, 0::2] = np.sin(angles)
    PE[:, 1::2] = np.cos(angles)
    return PE
""",
    "rope": S.IMPORTS_08 + S.ROPE_OK,
    "rope_scores": S.IMPORTS_08 + S.ROPE_OK + S.SCORES_HEAD + """    q, k = rope(Q, positions_q, base), rope(K, positions_k, base)
    return q @ np.swapaxes(k, -1, -2) / np.sqrt(Q.shape[-1])
""",
}


def run_control(w):
    """The check of answer w, run on the right answer of its exercise: must not flag it."""
    ns = {"__name__": "control"}
    exec(compile(CONTROL[w.exercise], f"<control {w.exercise}>", "exec"), ns)
    bad, note = CHECKS[w.id](ns)
    return not bad, note


# ============================================================================ main

def main():
    failures = 0
    ids = [w.id for w in WRONG]
    assert len(ids) == len(set(ids)), "duplicate ids"
    for w in WRONG:
        fn = CHECKS.get(w.id)
        if fn is None:
            print(f"FAIL {w.id}: no check written")
            failures += 1
            continue
        try:
            ns = load(w)
            assert w.exercise in ns, f"the source does not define {w.exercise}"
            bad, note = fn(ns)
            control_ok, control_note = run_control(w)
            if not control_ok:
                bad, note = False, f"the right answer fails this check too: {control_note}"
        except Exception:
            bad, note = False, "check crashed: " + traceback.format_exc().splitlines()[-1]
        print(f"{'ok  ' if bad else 'FAIL'} {w.id} [{w.exercise}]: {note}")
        failures += not bad
    missing = set(CHECKS) - set(ids)
    for m in sorted(missing):
        print(f"FAIL {m}: a check without an answer")
        failures += 1
    print(f"{len(WRONG) - failures} of {len(WRONG)} verified")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
