"""Verify the held-out wrong answers of lessons 05-08 (set_a_05_08.py).

Each answer's source is run in a fresh module; its exercise is then compared with an
independent reference written here (plain torch / NumPy, not the course's code) on the
input named in CASES[id]. An answer is kept ("ok") only if it differs there from the
reference: a different value, a different shape or type, an error the reference does not
raise, or (for the few rule-breaking answers) a broken rule measured here.

Run from a scratch folder:  PYTHONPATH=/work/main /work/main/.venv/bin/python verify_05_08.py
"""
from __future__ import annotations

import copy
import importlib.util
import math
import os
import sys
import tracemalloc
import types
import warnings

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
torch.set_num_threads(1)
warnings.filterwarnings("ignore")


def load_answers():
    spec = importlib.util.spec_from_file_location("wrong_05_08", os.path.join(HERE, "set_a_05_08.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.WRONG


def namespace(source: str, name: str = "answer") -> dict:
    mod = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), mod.__dict__)
    return mod.__dict__


class Differs(Exception):
    """Raised by a harness when the answer differs from the reference."""


def same_array(mine, ref, rtol, atol, what="result"):
    if isinstance(mine, torch.Tensor):
        mine = mine.detach().to(torch.float64).numpy()
    if isinstance(ref, torch.Tensor):
        ref = ref.detach().to(torch.float64).numpy()
    mine, ref = np.asarray(mine), np.asarray(ref)
    if mine.shape != ref.shape:
        raise Differs(f"{what}: shape {mine.shape}, reference {ref.shape}")
    if not np.allclose(mine, ref, rtol=rtol, atol=atol, equal_nan=False):
        bad = np.abs(np.nan_to_num(mine - ref, nan=np.inf)).max()
        raise Differs(f"{what}: largest gap {bad:.3g}")


def call(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except Differs:
        raise
    except Exception as exc:  # an error on a valid input is a wrong answer
        raise Differs(f"raised {type(exc).__name__}: {str(exc).splitlines()[0][:90]}") from None


# ============================================================================ lesson 05

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


def h_split_heads(ns, B=2, T=3, d=4, h=2):
    x = (100 * torch.arange(B)[:, None, None] + 10 * torch.arange(T)[None, :, None]
         + torch.arange(d)[None, None, :]).float()
    same_array(call(ns["split_heads"], x, h), ref_split(x, h), 0, 0)


def h_merge_heads(ns, B=2, h=2, T=3, dh=2):
    x = (1000 * torch.arange(B)[:, None, None, None] + 100 * torch.arange(h)[None, :, None, None]
         + 10 * torch.arange(T)[None, None, :, None] + torch.arange(dh)).float()
    same_array(call(ns["merge_heads"], x), ref_merge(x), 0, 0)


def random_linear_params(d_model, gen):
    return {n: (torch.randn(d_model, d_model, generator=gen) / math.sqrt(d_model),
                torch.randn(d_model, generator=gen) * 0.3) for n in ("w_q", "w_k", "w_v", "w_o")}


def load_linears(module, params):
    with torch.no_grad():
        for n, (W, b) in params.items():
            getattr(module, n).weight.copy_(W)
            getattr(module, n).bias.copy_(b)


def ref_mha(params, query, key, value, h, mask=None):
    """Plain per-batch, per-head loop in float64; mask True = may attend, shape [B, T_k] or [B, T_q, T_k]."""
    P = {n: (W.double(), b.double()) for n, (W, b) in params.items()}
    query, key, value = query.double(), key.double(), value.double()
    B, T_q, d = query.shape
    T_k = key.shape[1]
    dh = d // h
    out = torch.zeros(B, T_q, d, dtype=torch.float64)
    weights = torch.zeros(B, h, T_q, T_k, dtype=torch.float64)
    for b in range(B):
        Qf = query[b] @ P["w_q"][0].T + P["w_q"][1]
        Kf = key[b] @ P["w_k"][0].T + P["w_k"][1]
        Vf = value[b] @ P["w_v"][0].T + P["w_v"][1]
        concat = []
        for i in range(h):
            f = slice(i * dh, (i + 1) * dh)
            S = Qf[:, f] @ Kf[:, f].T / math.sqrt(dh)
            if mask is not None:
                m = mask[b] if mask.dim() == 3 else mask[b][None, :].expand(T_q, T_k)
                S = S.masked_fill(~m, -math.inf)
            A = torch.exp(S - S.max(dim=1, keepdim=True).values)
            A = A / A.sum(dim=1, keepdim=True)
            weights[b, i] = A
            concat.append(A @ Vf[:, f])
        out[b] = torch.cat(concat, dim=1) @ P["w_o"][0].T + P["w_o"][1]
    return out, weights


def mha_inputs(case, gen, d):
    if case == "self":
        x = torch.randn(2, 4, d, generator=gen)
        return x, x, x, None
    if case == "cross":
        dec, enc = torch.randn(2, 3, d, generator=gen), torch.randn(2, 5, d, generator=gen)
        return dec, enc, enc, None
    if case == "cross_kv":            # keys and values from different tensors (allowed)
        dec, enc, enc2 = (torch.randn(2, n, d, generator=gen) for n in (3, 5, 5))
        return dec, enc, enc2, None
    if case == "key_mask":
        dec, enc = torch.randn(2, 3, d, generator=gen), torch.randn(2, 5, d, generator=gen)
        mask = torch.tensor([[True] * 5, [True] * 3 + [False] * 2])
        return dec, enc, enc, mask
    raise KeyError(case)


def h_MultiHeadAttention(ns, case="self", d=8, h=2):
    gen = torch.Generator().manual_seed(5)
    params = random_linear_params(d, gen)
    query, key, value, mask = mha_inputs(case, gen, d)
    mha = call(ns["MultiHeadAttention"], d, h)
    call(load_linears, mha, params)
    with torch.no_grad():
        res = call(mha, query, key, value, mask=mask)
    if not (isinstance(res, tuple) and len(res) == 2):
        raise Differs(f"returned {type(res).__name__}, not (output, weights)")
    out, w = res
    r_out, r_w = ref_mha(params, query, key, value, h, mask)
    same_array(w, r_w, 1e-4, 1e-5, "weights")
    same_array(out, r_out, 1e-4, 1e-5, "output")


def h_copy_from_torch(ns, case="cross_kv", d=8, h=2):
    torch.manual_seed(11)
    theirs = nn.MultiheadAttention(d, h, batch_first=True)
    with torch.no_grad():
        theirs.in_proj_bias.normal_(0, 0.3)
        theirs.out_proj.bias.normal_(0, 0.3)
    ours = ns["MultiHeadAttention"](d, h)
    ours = call(ns["copy_from_torch"], ours, theirs)
    gen = torch.Generator().manual_seed(12)
    query, key, value, mask = mha_inputs(case, gen, d)
    with torch.no_grad():
        out, w = call(ours, query, key, value, mask=mask)
        t_out, t_w = theirs(query, key, value, average_attn_weights=False,
                            key_padding_mask=None if mask is None else ~mask)
    same_array(w, t_w, 1e-4, 1e-5, "weights")
    same_array(out, t_out, 1e-4, 1e-5, "output")


class RefusingMHA(nn.Module):
    """The layers of a multi-head attention module, whose forward refuses to run."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        for n in ("w_q", "w_k", "w_v", "w_o"):
            setattr(self, n, nn.Linear(d_model, d_model))

    def forward(self, *args, **kwargs):
        raise RuntimeError("heads_one_by_one must not call mha(...)")


def h_heads_one_by_one(ns, B=2, T=5, d=8, h=2):
    gen = torch.Generator().manual_seed(21)
    params = random_linear_params(d, gen)
    mha = RefusingMHA(d, h)
    load_linears(mha, params)
    x = torch.randn(B, T, d, generator=gen)
    with torch.no_grad():
        res = call(ns["heads_one_by_one"], x, mha)
    out, w = res
    r_out, r_w = ref_mha(params, x, x, x, h)
    same_array(w, r_w, 1e-4, 1e-5, "weights")
    same_array(out, r_out, 1e-4, 1e-5, "output")


def h_mha_parameter_count(ns, d=8, h=2):
    ref = sum(p.numel() for p in nn.MultiheadAttention(d, h).parameters())
    got = call(ns["mha_parameter_count"], d, h)
    if got != ref:
        raise Differs(f"returned {got!r}, reference {ref}")


def h_value_down_up(ns, d=8, h=2, head=1):
    gen = torch.Generator().manual_seed(31)
    params = random_linear_params(d, gen)
    mha = ns["MultiHeadAttention"](d, h)
    load_linears(mha, params)
    dh = d // h
    f = slice(head * dh, (head + 1) * dh)
    with torch.no_grad():
        eye = torch.eye(d)
        ref_down = (mha.w_v(eye) - mha.w_v.bias)[:, f]            # row x of eye -> head's values
        only_head = torch.zeros(dh, d)
        only_head[:, f] = torch.eye(dh)
        ref_up = mha.w_o(only_head) - mha.w_o.bias                # head hands y, others zeros
        res = call(ns["value_down_up"], mha, head)
    down, up = res
    same_array(down, ref_down, 1e-5, 1e-6, "down")
    same_array(up, ref_up, 1e-5, 1e-6, "up")


# ============================================================================ lesson 06

def ln(x, w, b):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + 1e-5) * w + b


def ref_self_attention(h_, sd, prefix, n_heads):
    W, bW = sd[prefix + "attn.in_proj_weight"], sd[prefix + "attn.in_proj_bias"]
    d = h_.shape[-1]
    dh = d // n_heads
    Q, K, V = (h_ @ W[i * d:(i + 1) * d].T + bW[i * d:(i + 1) * d] for i in range(3))
    outs = []
    for i in range(n_heads):
        f = slice(i * dh, (i + 1) * dh)
        A = torch.softmax(Q[..., f] @ K[..., f].transpose(-1, -2) / math.sqrt(dh), dim=-1)
        outs.append(A @ V[..., f])
    return torch.cat(outs, -1) @ sd[prefix + "attn.out_proj.weight"].T + sd[prefix + "attn.out_proj.bias"]


def ref_block(x, sd, prefix, n_heads, residual):
    a = ref_self_attention(ln(x, sd[prefix + "ln1.weight"], sd[prefix + "ln1.bias"]), sd, prefix, n_heads)
    x = x + a if residual else a
    h2 = ln(x, sd[prefix + "ln2.weight"], sd[prefix + "ln2.bias"])
    m = F.gelu(h2 @ sd[prefix + "mlp.0.weight"].T + sd[prefix + "mlp.0.bias"])
    m = m @ sd[prefix + "mlp.2.weight"].T + sd[prefix + "mlp.2.bias"]
    return x + m if residual else m


def random_state(module, seed):
    g = torch.Generator().manual_seed(seed)
    return {k: torch.randn(v.shape, generator=g, dtype=torch.float64) * (0.5 if v.dim() > 1 else 0.3)
            + (1.0 if k.endswith(("ln1.weight", "ln2.weight", "ln_f.weight")) else 0.0)
            for k, v in module.state_dict().items()}


def block_keys_module(d, h, d_ff):
    m = nn.Module()
    m.ln1 = nn.LayerNorm(d)
    m.attn = nn.MultiheadAttention(d, h, batch_first=True)
    m.ln2 = nn.LayerNorm(d)
    m.mlp = nn.Sequential(nn.Linear(d, d_ff), nn.GELU(), nn.Linear(d_ff, d))
    return m


def h_Block(ns, residual=True, B=2, T=5, d=8, h=2, d_ff=16):
    sd = random_state(block_keys_module(d, h, d_ff), 41)
    block = call(ns["Block"], d, h, d_ff, residual=residual).double()
    call(block.load_state_dict, sd)
    x = torch.randn(B, T, d, generator=torch.Generator().manual_seed(42), dtype=torch.float64)
    with torch.no_grad():
        out = call(block, x)
    same_array(out, ref_block(x, sd, "", h, residual), 1e-8, 1e-10)


def tiny_keys_module(vocab, d, h, d_ff, n_layers, seq_len):
    m = nn.Module()
    m.tok_emb = nn.Embedding(vocab, d)
    m.pos_emb = nn.Embedding(seq_len, d)
    m.blocks = nn.ModuleList([block_keys_module(d, h, d_ff) for _ in range(n_layers)])
    m.ln_f = nn.LayerNorm(d)
    m.head = nn.Linear(d, vocab)
    return m


def ref_tiny(tokens, sd, n_layers, h, residual):
    T = tokens.shape[1]
    x = sd["tok_emb.weight"][tokens] + sd["pos_emb.weight"][:T]
    for i in range(n_layers):
        x = ref_block(x, sd, f"blocks.{i}.", h, residual)
    x = ln(x, sd["ln_f.weight"], sd["ln_f.bias"])
    return x @ sd["head.weight"].T + sd["head.bias"]


def h_TinyTransformer(ns, residual=True, n_layers=2, T=6):
    vocab, d, h, d_ff, seq_len = 8, 8, 2, 16, 8
    sd = random_state(tiny_keys_module(vocab, d, h, d_ff, n_layers, seq_len), 51)
    model = call(ns["TinyTransformer"], vocab, d, h, d_ff, n_layers, seq_len, residual=residual).double()
    call(model.load_state_dict, sd)
    tokens = torch.randint(0, vocab, (3, T), generator=torch.Generator().manual_seed(52))
    with torch.no_grad():
        out = call(model, tokens)
    same_array(out, ref_tiny(tokens, sd, n_layers, h, residual), 1e-8, 1e-10)


def ref_similarity(h):
    h = np.asarray(h, dtype=np.float64)
    seqs = h.reshape(-1, h.shape[-2], h.shape[-1])
    means = []
    for s in seqs:
        T = len(s)
        vals = [s[i] @ s[j] / (np.linalg.norm(s[i]) * np.linalg.norm(s[j]))
                for i in range(T) for j in range(T) if i != j]
        means.append(np.mean(vals))
    return float(np.mean(means))


def h_token_similarity(ns, shape=(3, 5, 4), offset=0.0, spread=False):
    g = torch.Generator().manual_seed(61)
    h = torch.randn(*shape, generator=g, dtype=torch.float64) + offset
    if spread:   # tokens of very different lengths: token t scaled by 3**t
        h = h * 3.0 ** torch.arange(shape[-2], dtype=torch.float64)[:, None]
    got = call(ns["token_similarity"], h)
    if not isinstance(got, float):
        raise Differs(f"returned {type(got).__name__}, not a Python float")
    ref = ref_similarity(h.numpy())
    if not math.isclose(got, ref, rel_tol=1e-9, abs_tol=1e-12):
        raise Differs(f"returned {got:.6f}, reference {ref:.6f}")


class SmallModel(nn.Module):
    """A small float64 model made of torch's own layers: tokens [B, T] -> logits [B, T, V]."""

    def __init__(self, vocab=8, d=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(8, d) * 0.1)
        self.mix = nn.Linear(d, d)
        self.out = nn.Linear(d, vocab)

    def forward(self, tokens):
        x = self.emb(tokens) + self.pos[: tokens.shape[1]]
        x = x + torch.tanh(self.mix(x)).mean(dim=1, keepdim=True)   # lets position 0 reach the others
        return self.out(x)


def ref_train(model, task, steps, seed, lr):
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    crit = nn.CrossEntropyLoss()
    out = []
    for _ in range(steps):
        tok, tgt = task.sample(gen)
        opt.zero_grad(set_to_none=True)
        logits = model(tok)
        loss = crit(logits.flatten(0, 1), tgt.flatten())
        loss.backward()
        opt.step()
        out.append(float(loss))
    return out


def h_train(ns, steps=6, seed=3):
    from courseware.ablation import TASK, LEARNING_RATE
    torch.manual_seed(71)
    model = SmallModel().double()
    twin = copy.deepcopy(model)
    got = call(ns["train"], model, TASK, steps, seed)
    ref = ref_train(twin, TASK, steps, seed, LEARNING_RATE)
    if not isinstance(got, list) or not all(isinstance(v, float) for v in got):
        raise Differs(f"returned {type(got).__name__} of {type(got[0]).__name__ if got else None}")
    same_array(np.array(got), np.array(ref), 1e-9, 1e-12, "losses")


def ref_run_ablation(depths, steps, seed):
    """The sweep with this file's own model, similarity and loop; the model's submodules are
    made in the order the notebook's given lines make them, so the same seed gives the same weights."""
    from courseware.ablation import MODEL, TASK, LEARNING_RATE
    probe, _ = TASK.sample(torch.Generator().manual_seed(seed))
    rows = []
    L = dict(MODEL)
    for depth in depths:
        for residual in (True, False):
            torch.manual_seed(seed)
            net = tiny_keys_module(L["vocab_size"], L["d_model"], L["n_heads"], L["d_ff"], depth, L["seq_len"])

            def forward(tokens, net=net, residual=residual, keep=None):
                sd = dict(net.named_parameters())
                T = tokens.shape[1]
                x = sd["tok_emb.weight"][tokens] + sd["pos_emb.weight"][:T]
                states = [x]
                for i in range(depth):
                    x = ref_block(x, sd, f"blocks.{i}.", L["n_heads"], residual)
                    states.append(x)
                x = ln(x, sd["ln_f.weight"], sd["ln_f.bias"])
                return x @ sd["head.weight"].T + sd["head.bias"], states

            with torch.no_grad():
                sim_init = [ref_similarity(s.numpy()) for s in forward(probe)[1]]

            class Wrap(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.net = net

                def forward(self, tokens):
                    return forward(tokens)[0]

            losses = ref_train(Wrap(), TASK, steps, seed, LEARNING_RATE)
            with torch.no_grad():
                sim_trained = [ref_similarity(s.numpy()) for s in forward(probe)[1]]
            rows.append({"depth": depth, "residual": residual, "losses": losses,
                         "final_loss": float(np.mean(losses[-10:])),
                         "similarity_init": sim_init, "similarity_trained": sim_trained})
    return rows


_ABLATION_CACHE = {}


def h_run_ablation(ns, depths=(1, 4), steps=30, seed=0):
    key = (tuple(depths), steps, seed)
    if key not in _ABLATION_CACHE:
        _ABLATION_CACHE[key] = ref_run_ablation(depths, steps, seed)
    ref = _ABLATION_CACHE[key]
    got = call(ns["run_ablation"], list(depths), steps, seed)
    if not isinstance(got, list) or len(got) != len(ref):
        raise Differs(f"returned {type(got).__name__} of length {len(got) if hasattr(got, '__len__') else '?'}")
    for i, (g, r) in enumerate(zip(got, ref)):
        if set(g) != set(r):
            raise Differs(f"row {i} keys {sorted(g)}")
        if (g["depth"], g["residual"]) != (r["depth"], r["residual"]):
            raise Differs(f"row {i} is depth {g['depth']} residual {g['residual']}, "
                          f"reference depth {r['depth']} residual {r['residual']}")
        for k in ("losses", "final_loss", "similarity_init", "similarity_trained"):
            try:
                same_array(np.asarray(g[k], dtype=float), np.asarray(r[k], dtype=float), 1e-4, 1e-5,
                           f"row {i} {k}")
            except (TypeError, ValueError) as exc:
                raise Differs(f"row {i} {k}: {exc}") from None


# ============================================================================ lesson 07

def h_online_softmax_stats(ns, blocks=((1.0, 3.0, 0.5), (5.0, -1.0), (2.0,)), stream=True):
    from courseware.long_attention import stream_of
    blocks = [np.array(b, dtype=float) for b in blocks]
    row = np.concatenate(blocks)
    m = row.max()
    ref = (m, np.exp(row - m).sum())
    arg = stream_of(blocks) if stream else blocks
    got = call(ns["online_softmax_stats"], arg)
    same_array(np.array(got, dtype=float), np.array(ref), 1e-12, 1e-12, "(m, s)")


def sdpa(Q, K, V, causal=False):
    Q, K, V = (torch.from_numpy(np.ascontiguousarray(a, dtype=np.float64)) for a in (Q, K, V))
    return F.scaled_dot_product_attention(Q, K, V, is_causal=causal).numpy()


def h_attention_one_pass(ns, T_k=10, d_k=4, d_v=3, block=3, centre=0.0):
    rng = np.random.default_rng(81)
    q = rng.normal(size=d_k)
    K = rng.normal(size=(T_k, d_k)) + centre * q / (q @ q) * np.sqrt(d_k)
    V = rng.normal(size=(T_k, d_v))
    got = call(ns["attention_one_pass"], q, K, V, block)
    same_array(got, sdpa(q[None], K, V)[0], 1e-9, 1e-12)


def peak_bytes_of(fn, *args):
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        out = fn(*args)
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return out, peak


def h_attention_one_pass_memory(ns, T_k=1_048_576, block=1024):
    """The memory rule: O(block + d_v) beyond the inputs. One float64 score per key is 8 MiB."""
    rng = np.random.default_rng(82)
    q, K, V = rng.normal(size=2), rng.normal(size=(T_k, 2)), rng.normal(size=(T_k, 2))
    out, peak = call(peak_bytes_of, ns["attention_one_pass"], q, K, V, block)
    if peak > 2 * 2 ** 20:
        raise Differs(f"holds {peak / 2 ** 20:.1f} MiB at once for T_k = {T_k}, block = {block} "
                      f"(a block's scores are {8 * block / 2 ** 10:.0f} KiB)")
    same_array(out, sdpa(q[None], K, V)[0], 1e-8, 1e-10)


def ref_skipped(T, bq, bk, causal):
    if not causal:
        return 0
    n = 0
    for i0 in range(0, T, bq):
        last_query = min(i0 + bq, T) - 1
        for j0 in range(0, T, bk):
            if j0 > last_query:
                n += 1
    return n


def h_tiled_attention(ns, shape=(2, 12, 4), bq=3, bk=4, causal=True, centre=0.0, seed=91):
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.normal(size=shape) for _ in range(3))
    if centre:   # every score near `centre` (about -1000): positive queries against negative keys
        Q, K = np.abs(Q) + 1.0, -(np.abs(K) + 1.0)
        K = K * (-centre) / np.median(Q @ np.swapaxes(K, -1, -2) / np.sqrt(shape[-1])) * -1
    res = call(ns["tiled_attention"], Q, K, V, bq, bk, causal)
    out, skipped = res
    same_array(out, sdpa(Q, K, V, causal), 1e-9, 1e-12, "output")
    ref = ref_skipped(shape[-2], bq, bk, causal)
    if skipped != ref:
        raise Differs(f"skipped {skipped!r} tiles, reference {ref}")


def h_KVCache(ns, sizes=(1, 3, 1), d_k=3, d_v=2):
    rng = np.random.default_rng(101)
    cache = call(ns["KVCache"])
    keys, values = np.zeros((0, d_k)), np.zeros((0, d_v))
    for step, n in enumerate(sizes):
        k, v = rng.normal(size=(n, d_k)), rng.normal(size=(n, d_v))
        if n == 1:
            call(cache.append, k[0], v[0])
        else:
            call(cache.append, k, v)
        keys, values = np.vstack([keys, k]), np.vstack([values, v])
        got_len = call(len, cache)
        if got_len != len(keys):
            raise Differs(f"after append {step + 1} ({n} rows): len {got_len}, reference {len(keys)}")
        same_array(call(lambda: cache.keys), keys, 0, 0, f"keys after append {step + 1}")
        same_array(call(lambda: cache.values), values, 0, 0, f"values after append {step + 1}")


def h_decode_step(ns, prompt=4, total=7, d_model=6, d_k=4, d_v=3):
    rng = np.random.default_rng(111)
    W_q, W_k = rng.normal(size=(2, d_model, d_k))
    W_v = rng.normal(size=(d_model, d_v))
    X = rng.normal(size=(total, d_model))
    cache = call(ns["KVCache"])
    outs = []
    if prompt:
        outs.append(np.asarray(call(ns["decode_step"], X[:prompt], cache, W_q, W_k, W_v)))
    for t in range(prompt, total):
        o = np.asarray(call(ns["decode_step"], X[t], cache, W_q, W_k, W_v))
        if o.shape != (d_v,):
            raise Differs(f"one token at position {t}: shape {o.shape}, reference ({d_v},)")
        outs.append(o[None])
    got = np.concatenate(outs)
    same_array(got, sdpa(X @ W_q, X @ W_k, X @ W_v, causal=True), 1e-9, 1e-12, "outputs")
    same_array(call(lambda: cache.keys), X @ W_k, 1e-12, 1e-12, "cache.keys")


# ============================================================================ lesson 08

def ref_sinusoidal(T, d):
    PE = np.zeros((T, d))
    for t in range(T):
        for i in range(d // 2):
            angle = t / 10000 ** (2 * i / d)
            PE[t, 2 * i], PE[t, 2 * i + 1] = math.sin(angle), math.cos(angle)
    return PE


def h_sinusoidal_positions(ns, T=5, d=8):
    same_array(call(ns["sinusoidal_positions"], T, d), ref_sinusoidal(T, d), 1e-12, 1e-12)


def ref_rope(x, positions, base=10000.0):
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[-1]
    freq = base ** (-np.arange(0, d, 2) / d)
    z = (x[..., 0::2] + 1j * x[..., 1::2]) * np.exp(1j * np.outer(positions, freq))
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = z.real, z.imag
    return out


def h_rope(ns, shape=(2, 6, 8), positions=(0, 1, 5, 17, 1000, -3), base=10000.0):
    x = np.random.default_rng(121).normal(size=shape)
    kept = x.copy()
    got = call(ns["rope"], x, np.array(positions), base)
    same_array(got, ref_rope(kept, np.array(positions), base), 1e-9, 1e-12)
    if not np.array_equal(x, kept):
        raise Differs("changed its input x in place")


def h_rope_scores(ns, q_shape=(2, 3, 8), k_shape=(2, 4, 8), pq=(10, 11, 12), pk=(0, 1, 2, 3), base=10000.0):
    rng = np.random.default_rng(131)
    Q, K = rng.normal(size=q_shape), rng.normal(size=k_shape)
    pq, pk = np.array(pq), np.array(pk)
    ref = np.einsum("...md,...nd->...mn", ref_rope(Q, pq, base), ref_rope(K, pk, base)) / np.sqrt(q_shape[-1])
    same_array(call(ns["rope_scores"], Q, K, pq, pk, base), ref, 1e-9, 1e-12)


# ============================================================================ the cases

HARNESS = {name[2:]: fn for name, fn in list(globals().items()) if name.startswith("h_")}

# id -> (harness, keyword arguments): the input named in the answer's wrong_on
CASES = {}


def add(id_, harness, **kwargs):
    CASES[id_] = (harness, kwargs)


# lesson 05
add("h34-05-split-heads-reshape-no-transpose", "split_heads", B=1, T=3, d=4, h=2)
add("h34-05-split-heads-features-strided", "split_heads", B=1, T=2, d=4, h=2)
add("h34-05-split-heads-transpose-forgotten", "split_heads", B=1, T=3, d=4, h=2)
add("h34-05-merge-heads-reshape-no-transpose", "merge_heads", B=1, h=2, T=3, dh=2)
add("h34-05-merge-heads-heads-inner", "merge_heads", B=1, h=2, T=1, dh=2)
add("h34-05-merge-heads-swaps-token-and-feature", "merge_heads", B=1, h=2, T=3, dh=2)
add("h34-05-mha-scale-d-model", "MultiHeadAttention", case="self")
add("h34-05-mha-mask-after-softmax", "MultiHeadAttention", case="key_mask")
add("h34-05-mha-mask-fill-zero", "MultiHeadAttention", case="key_mask")
add("h34-05-mha-softmax-over-queries", "MultiHeadAttention", case="self")
add("h34-05-mha-w-o-not-applied", "MultiHeadAttention", case="self")
add("h34-05-mha-key-value-swapped", "MultiHeadAttention", case="cross_kv")
add("h34-05-mha-weights-averaged", "MultiHeadAttention", case="self")
add("h34-05-copy-weights-transposed", "copy_from_torch", case="self")
add("h34-05-copy-key-value-slices-swapped", "copy_from_torch", case="cross_kv")
add("h34-05-copy-biases-left-out", "copy_from_torch", case="self")
add("h34-05-copy-out-proj-forgotten", "copy_from_torch", case="self")
add("h34-05-one-by-one-columns-not-rows", "heads_one_by_one")
add("h34-05-one-by-one-stack-dim0", "heads_one_by_one")
add("h34-05-one-by-one-value-bias-left-out", "heads_one_by_one")
add("h34-05-one-by-one-sqrt-forgotten", "heads_one_by_one", d=16, h=2)
add("h34-05-count-no-biases", "mha_parameter_count", d=8, h=2)
add("h34-05-count-three-layers", "mha_parameter_count", d=8, h=2)
add("h34-05-count-times-heads", "mha_parameter_count", d=8, h=2)
add("h34-05-down-up-down-columns", "value_down_up", d=8, h=2, head=1)
add("h34-05-down-up-up-rows", "value_down_up", d=8, h=2, head=1)
add("h34-05-down-up-returned-swapped", "value_down_up", d=8, h=2, head=0)
add("h34-05-down-up-down-not-transposed", "value_down_up", d=8, h=2, head=0)

# lesson 06
add("h34-06-block-post-norm", "Block", residual=True)
add("h34-06-block-skip-carries-normed", "Block", residual=True)
add("h34-06-block-parallel-branches", "Block", residual=True)
add("h34-06-block-no-residual-ln2-dropped", "Block", residual=False)
add("h34-06-block-causal-mask", "Block", residual=True)
add("h34-06-tiny-residual-flag-not-passed", "TinyTransformer", residual=False, n_layers=2)
add("h34-06-tiny-one-block-repeated", "TinyTransformer", residual=True, n_layers=2)
add("h34-06-tiny-ln-f-skipped", "TinyTransformer", residual=True, n_layers=1)
add("h34-06-tiny-no-position-embedding", "TinyTransformer", residual=True, n_layers=1)
add("h34-06-similarity-diagonal-included", "token_similarity", shape=(3, 5, 4))
add("h34-06-similarity-norm-over-tokens", "token_similarity", shape=(3, 5, 4))
add("h34-06-similarity-upper-triangle-halved", "token_similarity", shape=(3, 5, 4))
add("h34-06-similarity-full-transpose", "token_similarity", shape=(3, 5, 4))
add("h34-06-similarity-divides-by-own-norm-squared", "token_similarity", shape=(3, 5, 4), spread=True)
add("h34-06-train-zero-grad-forgotten", "train", steps=6)
add("h34-06-train-zero-grad-after-backward", "train", steps=4)
add("h34-06-train-generator-reseeded-each-step", "train", steps=4)
add("h34-06-train-last-position-only", "train", steps=3)
add("h34-06-ablation-seeded-once", "run_ablation")
add("h34-06-ablation-init-similarity-after-training", "run_ablation")
add("h34-06-ablation-final-loss-last-step", "run_ablation")
add("h34-06-ablation-without-first", "run_ablation")
add("h34-06-ablation-similarity-last-layer-only", "run_ablation")

# lesson 07
add("h34-07-online-sum-not-rescaled", "online_softmax_stats")
add("h34-07-online-rescale-sign-flipped", "online_softmax_stats")
add("h34-07-online-m-starts-at-zero", "online_softmax_stats", blocks=((-3.0, -1.0), (-2.0,)))
add("h34-07-online-block-terms-own-max", "online_softmax_stats", blocks=((5.0, 1.0), (2.0, 3.0)))
add("h34-07-online-two-loops", "online_softmax_stats")
add("h34-07-one-pass-output-not-rescaled", "attention_one_pass", block=3)
add("h34-07-one-pass-no-final-division", "attention_one_pass", block=3)
add("h34-07-one-pass-scale-d-k", "attention_one_pass", block=3)
add("h34-07-one-pass-last-short-block-dropped", "attention_one_pass", T_k=10, block=3)
add("h34-07-one-pass-all-scores-at-once", "attention_one_pass_memory")
add("h34-07-tiled-mask-tile-local", "tiled_attention", bq=3, bk=4, causal=True)
add("h34-07-tiled-skip-off-by-one", "tiled_attention", bq=3, bk=4, causal=True)
add("h34-07-tiled-output-not-rescaled", "tiled_attention", bq=4, bk=4, causal=False)
add("h34-07-tiled-break-counts-one", "tiled_attention", bq=4, bk=4, causal=True)
add("h34-07-tiled-m-starts-at-zero", "tiled_attention", bq=4, bk=4, causal=False, centre=-1000.0)
add("h34-07-tiled-diagonal-masked", "tiled_attention", bq=4, bk=4, causal=True)
add("h34-07-tiled-full-transpose", "tiled_attention", shape=(2, 12, 4), bq=4, bk=4, causal=False)
add("h34-07-kvcache-len-counts-calls", "KVCache", sizes=(1, 3))
add("h34-07-kvcache-newest-first", "KVCache", sizes=(1, 1))
add("h34-07-kvcache-values-returns-keys", "KVCache", sizes=(1,))
add("h34-07-kvcache-stack-not-concatenate", "KVCache", sizes=(1,))
add("h34-07-decode-query-cached-as-key", "decode_step", prompt=4, total=7)
add("h34-07-decode-no-mask-in-block", "decode_step", prompt=4, total=4)
add("h34-07-decode-mask-without-offset", "decode_step", prompt=2, total=5)
add("h34-07-decode-scale-d-model", "decode_step", prompt=4, total=5, d_model=6, d_k=4)
add("h34-07-decode-one-token-keeps-row-axis", "decode_step", prompt=4, total=5)

# lesson 08
add("h34-08-sin-exponent-i-not-2i", "sinusoidal_positions", T=5, d=8)
add("h34-08-sin-exponent-sign-flipped", "sinusoidal_positions", T=5, d=8)
add("h34-08-sin-halves-not-interleaved", "sinusoidal_positions", T=5, d=8)
add("h34-08-sin-sin-cos-swapped", "sinusoidal_positions", T=5, d=8)
add("h34-08-sin-positions-from-one", "sinusoidal_positions", T=5, d=8)
add("h34-08-sin-two-applied-twice", "sinusoidal_positions", T=5, d=8)
add("h34-08-rope-clockwise", "rope")
add("h34-08-rope-base-hard-coded", "rope", base=100.0)
add("h34-08-rope-positions-not-a-column", "rope", shape=(2, 6, 8))
add("h34-08-rope-in-place-overwrites-first", "rope")
add("h34-08-rope-halves-not-pairs", "rope")
add("h34-08-rope-positions-ignored", "rope", positions=(0, 1, 5, 17, 1000, -3))
add("h34-08-scores-full-transpose", "rope_scores")
add("h34-08-scores-base-not-passed", "rope_scores", base=100.0)
add("h34-08-scores-keys-at-query-positions", "rope_scores", q_shape=(1, 3, 8), k_shape=(1, 3, 8), pq=(10, 11, 12), pk=(0, 1, 2))
add("h34-08-scores-divided-by-d", "rope_scores")
add("h34-08-scores-key-positions-negated", "rope_scores")


def verify(answer):
    if answer.id not in CASES:
        return False, "no case listed for this id"
    harness, kwargs = CASES[answer.id]
    try:
        ns = namespace(answer.source, answer.id.replace("-", "_"))
    except Exception as exc:
        return False, f"source does not run: {type(exc).__name__}: {exc}"
    if answer.exercise not in ns:
        return False, f"source does not define {answer.exercise}"
    if HARNESS_EXERCISE.get(harness, harness) != answer.exercise:
        return False, f"case harness {harness} is not for {answer.exercise}"
    try:
        HARNESS[harness](ns, **kwargs)
    except Differs as diff:
        return True, str(diff)
    return False, "same as the reference on the listed input"


HARNESS_EXERCISE = {"attention_one_pass_memory": "attention_one_pass"}


def main():
    answers = load_answers()
    ids = [a.id for a in answers]
    dup = {i for i in ids if ids.count(i) > 1}
    failures = 0
    for a in answers:
        ok, detail = verify(a)
        if a.id in dup:
            ok, detail = False, "duplicate id"
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {a.id} [{a.exercise}]: {detail}")
    counts = {}
    for a in answers:
        counts[a.exercise] = counts.get(a.exercise, 0) + 1
    print(f"\n{len(answers) - failures} ok, {failures} FAIL, of {len(answers)}")
    print("per exercise:", ", ".join(f"{k} {v}" for k, v in counts.items()))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
