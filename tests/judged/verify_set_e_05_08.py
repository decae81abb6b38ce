"""Verify set e (lessons 05-08): every answer must differ from an independent reference
computation on at least one input the notebook's contract allows.

Run from the repository root:  PYTHONPATH=. .venv/bin/python tests/judged/verify_set_e_05_08.py
Prints one line per answer (ok / FAIL, and the first case where it differs). Also runs
each checker on a right answer first, which must show no difference (a harness check).
Nothing of the grader is run here: the references below are written from the notebooks.
"""
import copy
import math
import sys
import traceback
import types
import warnings

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import set_e_05_08 as S  # noqa: E402

warnings.filterwarnings("ignore")
torch.set_num_threads(1)


def load(source, name, tag="answer"):
    mod = types.ModuleType(f"learner_{tag}")
    exec(compile(source, f"<{tag}>", "exec"), mod.__dict__)
    return mod.__dict__[name]


def close(a, b, rtol=1e-4, atol=1e-6):
    """'' when a and b agree, else a short reason."""
    if isinstance(b, (tuple, list)):
        if not isinstance(a, (tuple, list)) or len(a) != len(b):
            return f"returned {type(a).__name__} of length {len(a) if hasattr(a, '__len__') else '?'}"
        for i, (x, y) in enumerate(zip(a, b)):
            r = close(x, y, rtol, atol)
            if r:
                return f"item {i}: {r}"
        return ""
    if isinstance(b, float) and not isinstance(b, np.floating):
        if not isinstance(a, float):
            return f"type {type(a).__name__} instead of a Python float"
        return "" if math.isclose(a, b, rel_tol=rtol, abs_tol=atol) else f"{a!r} vs {b!r}"
    if isinstance(b, int) and not isinstance(b, bool):
        return "" if (a == b and not isinstance(a, bool)) else f"{a!r} vs {b!r}"
    if isinstance(b, torch.Tensor):
        if not isinstance(a, torch.Tensor):
            return f"type {type(a).__name__} instead of a tensor"
        if tuple(a.shape) != tuple(b.shape):
            return f"shape {tuple(a.shape)} vs {tuple(b.shape)}"
        a64, b64 = a.detach().double(), b.detach().double()
        if not torch.allclose(a64, b64, rtol=rtol, atol=atol, equal_nan=False):
            return f"values differ by up to {(a64 - b64).abs().nan_to_num(float('inf')).max().item():.3g}"
        return ""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return f"shape {a.shape} vs {b.shape}"
    if not np.allclose(a.astype(float), b.astype(float), rtol=rtol, atol=atol):
        gap = np.nan_to_num(np.abs(a.astype(float) - b.astype(float)), nan=np.inf).max()
        return f"values differ by up to {gap:.3g}"
    return ""


def run_cases(fn_answer, cases):
    """cases: list of (label, call(obj) -> result, expected or judge(result) -> reason).
    Returns [(label, reason)] for every case where the answer differs (raising counts)."""
    diffs = []
    for label, call, expected in cases:
        try:
            got = call(fn_answer)
        except Exception as exc:  # an error on a valid input is a wrong answer
            diffs.append((label, f"raises {type(exc).__name__}: {str(exc).splitlines()[0][:90]}"))
            continue
        why = close(got, expected) if not callable(expected) else expected(got)
        if why:
            diffs.append((label, why))
    return diffs


# =============================================================================== lesson 05

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


def check_split(f):
    cases = []
    for B, T, d, h in [(1, 2, 4, 2), (1, 1, 4, 2), (2, 3, 4, 2), (2, 3, 6, 3), (1, 4, 8, 4), (2, 2, 4, 1)]:
        x = coded(B, T, d)
        cases.append((f"x coded [{B},{T},{d}] h={h}", lambda f, x=x, h=h: f(x, h), ref_split(x, h)))
    return run_cases(f, cases)


def check_merge(f):
    cases = []
    for B, h, T, dh in [(1, 2, 2, 1), (1, 2, 1, 2), (1, 2, 3, 2), (2, 3, 4, 2), (2, 2, 2, 2)]:
        x = (1000 * torch.arange(B)[:, None, None, None] + 100 * torch.arange(h)[None, :, None, None]
             + 10 * torch.arange(T)[None, None, :, None] + torch.arange(dh)).float()
        cases.append((f"x coded [{B},{h},{T},{dh}]", lambda f, x=x: f(x), ref_merge(x)))
    return run_cases(f, cases)


def random_weights(d, seed):
    g = torch.Generator().manual_seed(seed)
    return {n: (torch.randn(d, d, generator=g) / math.sqrt(d), 0.3 * torch.randn(d, generator=g))
            for n in ("w_q", "w_k", "w_v", "w_o")}


def load_weights(module, W):
    with torch.no_grad():
        for name, (w, b) in W.items():
            layer = getattr(module, name)
            layer.weight.copy_(w)
            if layer.bias is not None:
                layer.bias.copy_(b)


def ref_mha(W, h, query, key, value, mask=None):
    """Numpy float64 multi-head attention, head by head, query by query."""
    P = {n: (w.double().numpy(), b.double().numpy()) for n, (w, b) in W.items()}
    q_, k_, v_ = (t.double().numpy() for t in (query, key, value))
    Q = q_ @ P["w_q"][0].T + P["w_q"][1]
    K = k_ @ P["w_k"][0].T + P["w_k"][1]
    V = v_ @ P["w_v"][0].T + P["w_v"][1]
    B, Tq, d = Q.shape
    Tk = K.shape[1]
    dh = d // h
    m = None
    if mask is not None:
        m = mask.numpy()
        if m.ndim == 2:
            m = m[:, None, None, :]
        elif m.ndim == 3:
            m = m[:, None]
        m = np.broadcast_to(m, (B, h, Tq, Tk))
    weights = np.zeros((B, h, Tq, Tk))
    heads = np.zeros((B, Tq, d))
    for b in range(B):
        for i in range(h):
            f = slice(i * dh, (i + 1) * dh)
            for t in range(Tq):
                s = np.array([Q[b, t, f] @ K[b, j, f] for j in range(Tk)]) / math.sqrt(dh)
                if m is not None:
                    s = np.where(m[b, i, t], s, -np.inf)
                e = np.exp(s - s.max())
                w = e / e.sum()
                weights[b, i, t] = w
                heads[b, t, f] = w @ V[b, :, f]
    out = heads @ P["w_o"][0].T + P["w_o"][1]
    return torch.from_numpy(out).float(), torch.from_numpy(weights).float()


def mha_cases():
    g = torch.Generator().manual_seed(11)
    r = lambda *s: torch.randn(*s, generator=g)  # noqa: E731
    x = r(2, 3, 8)
    dec, enc_k, enc_v = r(2, 2, 8), r(2, 4, 8), r(2, 4, 8)
    keymask = torch.tensor([[True, True, False], [True, True, True]])
    causal3 = torch.tril(torch.ones(3, 3, dtype=torch.bool))[None].expand(2, 3, 3)
    perhead = torch.ones(2, 2, 3, 3, dtype=torch.bool)
    perhead[:, 1] = causal3[:, None][:, 0]
    perhead[0, 0, :, 0] = False
    return [
        ("self-attention d=8 h=2 x[2,3,8]", 8, 2, (x, x, x, None)),
        ("self-attention d=8 h=1", 8, 1, (x, x, x, None)),
        ("cross-attention T_q=2 T_k=4, key != value", 8, 2, (dec, enc_k, enc_v, None)),
        ("key mask [[T,T,F],[T,T,T]]", 8, 2, (x, x, x, keymask)),
        ("causal mask [B,T,T]", 8, 2, (x, x, x, causal3)),
        ("per-head mask [B,h,T,T]", 8, 2, (x, x, x, perhead)),
    ]


def check_mha(cls):
    cases = []
    for k, (label, d, h, (q, kk, v, mask)) in enumerate(mha_cases()):
        W = random_weights(d, 100 + k)

        def call(cls, d=d, h=h, W=W, q=q, kk=kk, v=v, mask=mask):
            torch.manual_seed(0)
            m = cls(d, h)
            load_weights(m, W)
            with torch.no_grad():
                out = m(q, kk, v, mask=mask)
            return tuple(out)
        cases.append((label, call, ref_mha(W, h, q, kk, v, mask)))
    return run_cases(cls, cases)


REF_MHA = None  # the right class, loaded from the module's right pieces (sanity-checked first)


def torch_mha(d, h, seed):
    torch.manual_seed(seed)
    theirs = nn.MultiheadAttention(d, h, batch_first=True)
    with torch.no_grad():
        theirs.in_proj_bias.normal_(0, 0.3)
        theirs.out_proj.bias.normal_(0, 0.3)
    return theirs


def check_copy(f):
    def call(f, d, h, seed, real=None):
        theirs = torch_mha(d, h, seed)
        torch.manual_seed(seed + 1)
        ours = REF_MHA(d, h)
        before = [id(p) for p in ours.parameters()]
        got = f(ours, theirs)
        if got is not ours:
            return "did not return ours"
        if [id(p) for p in ours.parameters()] != before:
            return "ours's parameter objects were replaced"
        g = torch.Generator().manual_seed(seed)
        q, kv = torch.randn(2, 3, d, generator=g), torch.randn(2, 5, d, generator=g)
        with torch.no_grad():
            o, w = ours(q, kv, kv, mask=real)
            to, tw = theirs(q, kv, kv, average_attn_weights=False,
                            key_padding_mask=None if real is None else ~real)
        return close((o, w), (to, tw)) or "same"
    real = torch.tensor([[True] * 5, [True] * 3 + [False] * 2])
    cases = [("nn.MultiheadAttention(8, 2), random biases", lambda f: call(f, 8, 2, 3), "same"),
             ("nn.MultiheadAttention(12, 3) with padding", lambda f: call(f, 12, 3, 4, real), "same")]
    return run_cases(f, [(lab, c, lambda got: "" if got == "same" else got) for lab, c, _ in cases])


def check_hobo(f):
    cases = []
    for label, d, h, shape, seed in [("MHA(8,2), x[1,3,8]", 8, 2, (1, 3, 8), 1),
                                     ("MHA(16,4), x[2,6,16]", 16, 4, (2, 6, 16), 2),
                                     ("MHA(6,1), x[2,4,6]", 6, 1, (2, 4, 6), 3)]:
        W = random_weights(d, seed)
        x = torch.randn(*shape, generator=torch.Generator().manual_seed(seed))

        def call(f, d=d, h=h, W=W, x=x):
            torch.manual_seed(0)
            m = REF_MHA(d, h)
            load_weights(m, W)
            m.forward = None  # the loop must be the learner's: mha(...) is refused
            with torch.no_grad():
                return tuple(f(x, m))
        cases.append((label, call, ref_mha(W, h, x, x, x)))
    return run_cases(f, cases)


def check_count(f):
    cases = []
    for d, h in [(8, 2), (8, 1), (64, 8), (6, 3), (1, 1)]:
        n = sum(p.numel() for p in nn.MultiheadAttention(d, h).parameters())
        cases.append((f"d_model={d}, n_heads={h}", lambda f, d=d, h=h: f(d, h), int(n)))
    return run_cases(f, cases)


def ref_down_up(m, head):
    d, h = m.d_model, m.n_heads
    dh = d // h
    f = slice(head * dh, (head + 1) * dh)
    with torch.no_grad():
        down = (torch.eye(d) @ m.w_v.weight.T)[:, f]                 # row x -> head's values
        Z = torch.zeros(dh, d)
        Z[:, f] = torch.eye(dh)
        up = Z @ m.w_o.weight.T                                        # head's y -> output
    return down, up


def check_vdu(f):
    cases = []
    for d, h, head, seed in [(8, 2, 0, 5), (8, 2, 1, 5), (12, 3, 2, 6), (6, 1, 0, 7)]:
        torch.manual_seed(seed)
        m = REF_MHA(d, h)
        with torch.no_grad():
            m.w_o.bias.normal_(0, 0.3)

        def call(f, m=m, head=head):
            with torch.no_grad():
                return tuple(f(m, head))
        cases.append((f"MHA({d},{h}) head {head}", call, ref_down_up(m, head)))
    return run_cases(f, cases)


CORRECT = {
    "split_heads": (S.IMP05 + S.SPLIT_OK, check_split),
    "merge_heads": (S.IMP05 + S.MERGE_OK, check_merge),
    "MultiHeadAttention": (S.mha_source(), check_mha),
    "copy_from_torch": (S.IMP05 + S.COPY_HEAD + '''    W, b = theirs.in_proj_weight, theirs.in_proj_bias
    with torch.no_grad():
        for i, layer in enumerate((ours.w_q, ours.w_k, ours.w_v)):
            layer.weight.copy_(W[i * d:(i + 1) * d])
            layer.bias.copy_(b[i * d:(i + 1) * d])
        ours.w_o.weight.copy_(theirs.out_proj.weight)
        ours.w_o.bias.copy_(theirs.out_proj.bias)
    return ours
''', check_copy),
    "heads_one_by_one": (S.IMP05 + S.HOBO_HEAD + S.HOBO_OK, check_hobo),
    "mha_parameter_count": (S.IMP05 + S.COUNT_HEAD + "    return 4 * d_model * d_model + 4 * d_model\n",
                            check_count),
    "value_down_up": (S.IMP05 + S.VDU_HEAD + '''    return mha.w_v.weight[features].T, mha.w_o.weight[:, features].T
''', check_vdu),
}

# =============================================================================== lesson 06

from courseware.ablation import LEARNING_RATE, MODEL, TASK, layer_outputs  # noqa: E402


def randomize(module, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in module.named_parameters():
            if name.endswith("weight") and p.dim() == 1:        # LayerNorm gains
                p.copy_(1 + 0.3 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(0.4 * torch.randn(p.shape, generator=g))
    return module


def manual_attn(attn, h):
    d, nh = attn.embed_dim, attn.num_heads
    dh = d // nh
    W, b = attn.in_proj_weight, attn.in_proj_bias
    q, k, v = (h @ W[i * d:(i + 1) * d].T + b[i * d:(i + 1) * d] for i in range(3))
    B, T, _ = h.shape
    heads = []
    for i in range(nh):
        f = slice(i * dh, (i + 1) * dh)
        s = q[..., f] @ k[..., f].transpose(-1, -2) / math.sqrt(dh)
        heads.append(torch.softmax(s, dim=-1) @ v[..., f])
    return torch.cat(heads, dim=-1) @ attn.out_proj.weight.T + attn.out_proj.bias


def manual_block(blk, x, residual):
    d = x.shape[-1]
    ln = lambda m, t: F.layer_norm(t, (d,), m.weight, m.bias, m.eps)  # noqa: E731
    lin1, lin2 = blk.mlp[0], blk.mlp[2]
    mlp = lambda t: F.gelu(t @ lin1.weight.T + lin1.bias) @ lin2.weight.T + lin2.bias  # noqa: E731
    a = manual_attn(blk.attn, ln(blk.ln1, x))
    x = x + a if residual else a
    m = mlp(ln(blk.ln2, x))
    return x + m if residual else m


def check_block(cls):
    cases = []
    g = torch.Generator().manual_seed(21)
    x = torch.randn(2, 3, 8, generator=g)
    for residual in (True, False):
        def call(cls, residual=residual):
            torch.manual_seed(0)
            blk = randomize(cls(8, 2, 16, residual=residual), 5)
            with torch.no_grad():
                return blk(x)
        torch.manual_seed(0)
        ref = randomize(REF_BLOCK(8, 2, 16, residual=residual), 5)
        with torch.no_grad():
            expected = manual_block(ref, x, residual)
        cases.append((f"Block(8, 2, 16, residual={residual}), random weights, x [2, 3, 8]", call, expected))
    return run_cases(cls, cases)


def manual_tiny(model, tokens, residual):
    T = tokens.shape[1]
    x = model.tok_emb.weight[tokens] + model.pos_emb.weight[:T]
    for blk in model.blocks:
        x = manual_block(blk, x, residual)
    d = x.shape[-1]
    x = F.layer_norm(x, (d,), model.ln_f.weight, model.ln_f.bias, model.ln_f.eps)
    return x @ model.head.weight.T + model.head.bias


def check_tiny(cls):
    cases = []
    sizes = dict(vocab_size=8, d_model=16, n_heads=2, d_ff=32, seq_len=8)
    g = torch.Generator().manual_seed(3)
    for n_layers, residual, T in [(1, True, 8), (2, True, 5), (2, False, 8), (1, False, 3)]:
        tokens = torch.randint(0, 8, (2, T), generator=g)
        torch.manual_seed(1)
        ref = randomize(REF_TINY(**sizes, n_layers=n_layers, residual=residual), 9)
        with torch.no_grad():
            expected = manual_tiny(ref, tokens, residual)

        def call(cls, n_layers=n_layers, residual=residual, tokens=tokens, ref=ref):
            torch.manual_seed(1)
            m = cls(**sizes, n_layers=n_layers, residual=residual)
            m.load_state_dict(ref.state_dict())
            with torch.no_grad():
                return m(tokens)
        cases.append((f"{n_layers} layer(s), residual={residual}, tokens [2, {T}]", call, expected))
    return run_cases(cls, cases)


def ref_similarity(h):
    h = np.asarray(h, dtype=float)
    seqs = h.reshape(-1, *h.shape[-2:])
    means = []
    for seq in seqs:
        T = len(seq)
        tot = 0.0
        for i in range(T):
            for j in range(T):
                if i != j:
                    tot += seq[i] @ seq[j] / (np.linalg.norm(seq[i]) * np.linalg.norm(seq[j]))
        means.append(tot / (T * (T - 1)))
    return float(np.mean(means))


def check_similarity(f):
    g = torch.Generator().manual_seed(4)
    inputs = [("[[1, 0], [0, 1]]", torch.tensor([[1.0, 0.0], [0.0, 1.0]])),
              ("[[3, 0], [0, 1], [1, 1]]", torch.tensor([[3.0, 0.0], [0.0, 1.0], [1.0, 1.0]])),
              ("randn(2, 4, 8)", torch.randn(2, 4, 8, generator=g)),
              ("randn(2, 3, 4)", torch.randn(2, 3, 4, generator=g) + 0.5),
              ("randn(3, 2, 5, 6)", torch.randn(3, 2, 5, 6, generator=g))]
    return run_cases(f, [(label, lambda f, h=h: f(h), ref_similarity(h.numpy())) for label, h in inputs])


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(8, 12)
        self.lin = nn.Linear(12, 8)

    def forward(self, tokens):
        x = self.emb(tokens)
        return self.lin(torch.tanh(x + x.mean(dim=1, keepdim=True)))


def ref_train(model, steps, seed):
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    out = []
    for _ in range(steps):
        tok, tgt = TASK.sample(g)
        loss = F.cross_entropy(model(tok).flatten(0, -2), tgt.flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
        out.append(float(loss))
    return out


def check_train(f):
    torch.manual_seed(7)
    base = Small().double()
    expected = ref_train(copy.deepcopy(base), 4, 3)

    def call(f):
        torch.manual_seed(123)
        return f(copy.deepcopy(base), TASK, 4, 3)
    return run_cases(f, [("a small float64 model, steps=4, seed=3", call, expected)])


def ref_ablation(depths, steps, seed):
    probe, _ = TASK.sample(torch.Generator().manual_seed(seed))
    rows = []
    for depth in depths:
        for residual in (True, False):
            torch.manual_seed(seed)
            model = REF_TINY(**MODEL, n_layers=depth, residual=residual)
            init = [ref_similarity(h.numpy()) for h in layer_outputs(model, probe)]
            model.train()
            g = torch.Generator().manual_seed(seed)
            opt = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
            losses = []
            for _ in range(steps):
                tok, tgt = TASK.sample(g)
                loss = F.cross_entropy(model(tok).flatten(0, -2), tgt.flatten())
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(float(loss))
            trained = [ref_similarity(h.numpy()) for h in layer_outputs(model, probe)]
            rows.append({"depth": depth, "residual": residual, "losses": losses,
                         "final_loss": float(np.mean(losses[-10:])),
                         "similarity_init": init, "similarity_trained": trained})
    return rows


def compare_rows(got, expected):
    if not isinstance(got, list) or len(got) != len(expected):
        return f"{type(got).__name__} of {len(got) if hasattr(got, '__len__') else '?'} rows"
    for i, (g, e) in enumerate(zip(got, expected)):
        if set(g) != set(e):
            return f"row {i} keys {sorted(g)}"
        for key in e:
            if isinstance(e[key], bool):
                if g[key] is not e[key] and g[key] != e[key]:
                    return f"row {i} {key}: {g[key]!r} vs {e[key]!r}"
                continue
            why = close(g[key], e[key], rtol=1e-4, atol=1e-6)
            if why:
                return f"row {i} {key}: {why}"
    return ""


def check_ablation(f):
    expected = ref_ablation((1,), 12, 0)
    return run_cases(f, [("depths (1,), steps 12, seed 0", lambda f: f((1,), 12, 0),
                          lambda got: compare_rows(got, expected))])


CORRECT.update({
    "Block": (S.IMP06 + S.BLOCK_OK, check_block),
    "TinyTransformer": (S.IMP06 + S.BLOCK_OK + S.tiny_class(), check_tiny),
    "token_similarity": (S.IMP06 + S.SIM_OK, check_similarity),
    "train": (S.IMP06 + S.TRAIN_OK, check_train),
    "run_ablation": (S.IMP06 + S.BLOCK_OK + S.tiny_class() + S.SIM_OK + S.TRAIN_OK + S.ABL_HEAD
                     + S.ABL_BODY_OK, check_ablation),
})
REF_BLOCK = load(S.IMP06 + S.BLOCK_OK, "Block", "ref_block")
REF_TINY = load(S.IMP06 + S.BLOCK_OK + S.tiny_class(), "TinyTransformer", "ref_tiny")

# =============================================================================== lesson 07

from courseware.long_attention import stream_of  # noqa: E402


def ref_stats(blocks):
    row = np.concatenate([np.asarray(b, dtype=float) for b in blocks])
    m = float(row.max())
    return m, float(np.exp(row - m).sum())


def check_online(f):
    rng = np.random.default_rng(7)
    row = np.round(rng.normal(size=12) * 2, 1)
    inputs = [("[[1, 2]]", [np.array([1.0, 2.0])]),
              ("[[0], [1]]", [np.array([0.0]), np.array([1.0])]),
              ("[[2], [0]]", [np.array([2.0]), np.array([0.0])]),
              ("[[-3, -1]]", [np.array([-3.0, -1.0])]),
              ("[[1000, 990], [1010, -1000]]", [np.array([1000.0, 990.0]), np.array([1010.0, -1000.0])]),
              ("12 scores in 4 blocks", [row[:3], row[3:5], row[5:9], row[9:]])]
    return run_cases(f, [(label, lambda f, b=b: tuple(f(stream_of(b))), ref_stats(b))
                         for label, b in inputs])


class Tracked(np.ndarray):
    """An array that notes which rows are read by indexing (for the one-pass rule)."""

    def __array_finalize__(self, obj):
        self._log = None

    def __getitem__(self, idx):
        if self._log is not None:
            rows = idx[0] if isinstance(idx, tuple) else idx
            if isinstance(rows, slice):
                start, stop, _ = rows.indices(self.shape[0])
                self._log.append((start, stop))
            elif isinstance(rows, (int, np.integer)):
                self._log.append((int(rows), int(rows) + 1))
            else:
                self._log.append((0, self.shape[0]))
        return np.ndarray.__getitem__(self.view(np.ndarray), idx)


def tracked(a):
    t = np.array(a, dtype=float).view(Tracked)
    t._log = []
    return t


def one_pass_violation(log, block):
    latest = -1
    for start, stop in log:
        if stop - start > block:
            return f"reads {stop - start} rows in one step (block = {block})"
        if start < latest:
            return f"goes back to row {start} after reading from row {latest}"
        latest = max(latest, start)
    return ""


def ref_attention(Q, K, V, causal=False):
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    S = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    if causal:
        T = S.shape[-1]
        S = np.where(np.tril(np.ones((T, T), bool)), S, -np.inf)
    S = S - S.max(axis=-1, keepdims=True)
    W = np.exp(S)
    return (W / W.sum(axis=-1, keepdims=True)) @ V


def check_onepass(f):
    rng = np.random.default_rng(19)
    q, K, V = rng.normal(size=4), rng.normal(size=(10, 4)), rng.normal(size=(10, 3))
    K_far = 1000.0 + rng.normal(size=(10, 1))
    V_far = rng.normal(size=(10, 3))
    inputs = [("q=[1], K=[[0],[2]], V=[[1],[0]], block=1", np.ones(1), np.array([[0.0], [2.0]]),
               np.array([[1.0], [0.0]]), 1),
              ("q=[1], K=[[0],[0]], V=[[1],[3]], block=1", np.ones(1), np.zeros((2, 1)),
               np.array([[1.0], [3.0]]), 1)]
    inputs += [(f"random d_k=4, T_k=10, block={b}", q, K, V, b) for b in (3, 1, 2, 10, 11)]
    inputs += [("q=[1], scores near 1000, block=3", np.ones(1), K_far, V_far, 3),
               ("q=[1], K=[[1000],[-1000]], V=[[1],[2]], block=1", np.ones(1),
                np.array([[1000.0], [-1000.0]]), np.array([[1.0], [2.0]]), 1)]
    cases = [(label, lambda f, q=q, K=K, V=V, b=b: f(q, K, V, b), ref_attention(q[None], K, V)[0])
             for label, q, K, V, b in inputs]
    for b in (3, 2):
        def call(f, b=b):
            Kt, Vt = tracked(K), tracked(V)
            out = f(q, Kt, Vt, b)
            return out, one_pass_violation(Kt._log, b) or one_pass_violation(Vt._log, b)

        def judge(got, expected=ref_attention(q[None], K, V)[0]):
            out, violation = got
            return violation or close(out, expected)
        cases.append((f"rows read in one pass, T_k=10, block={b}", call, judge))
    return run_cases(f, cases)


def ref_skipped(T, bq, bk, causal):
    if not causal:
        return 0
    n = 0
    for i0 in range(0, T, bq):
        last_query = min(i0 + bq, T) - 1
        for j0 in range(0, T, bk):
            n += j0 > last_query
    return n


def check_tiled(f):
    rng = np.random.default_rng(23)
    Q, K, V = rng.normal(size=(3, 12, 4))
    Qb, Kb, Vb = rng.normal(size=(3, 2, 12, 4))
    cases = []
    for bq, bk in [(4, 4), (3, 4), (6, 2), (5, 7), (12, 12), (1, 1)]:
        for causal in (False, True):
            cases.append((f"[12, 4], {bq} x {bk} tiles, causal={causal}",
                          lambda f, bq=bq, bk=bk, c=causal: tuple(f(Q, K, V, bq, bk, c)),
                          (ref_attention(Q, K, V, causal), ref_skipped(12, bq, bk, causal))))
    for causal in (False, True):
        cases.append((f"batched [2, 12, 4], 4 x 4 tiles, causal={causal}",
                      lambda f, c=causal: tuple(f(Qb, Kb, Vb, 4, 4, c)),
                      (ref_attention(Qb, Kb, Vb, causal), ref_skipped(12, 4, 4, causal))))
    Qc, Kc, Vc = rng.normal(size=(2, 1, 5, 4)), rng.normal(size=(3, 7, 4)), rng.normal(size=(3, 7, 2))
    cases.append(("broadcast batch Q [2,1,5,4], K [3,7,4], V [3,7,2], 2 x 3 tiles",
                  lambda f: tuple(f(Qc, Kc, Vc, 2, 3)), (ref_attention(Qc, Kc, Vc), 0)))
    return run_cases(f, cases)


def check_kv(cls):
    rng = np.random.default_rng(29)

    def script(cls, ops):
        """ops: list of (cache index, k, v); a new index makes a new cache. Snapshots after each."""
        caches, snaps = {}, []
        for i, k, v in ops:
            if i not in caches:
                caches[i] = cls()
            c = caches[i]
            c.append(k, v)
            snaps.append((len(c), np.asarray(c.keys), np.asarray(c.values)))
        return snaps

    def expect(ops):
        store, snaps = {}, []
        for i, k, v in ops:
            k, v = np.atleast_2d(k), np.atleast_2d(v)
            ks, vs = store.get(i, (np.zeros((0, k.shape[1])), np.zeros((0, v.shape[1]))))
            ks, vs = np.vstack([ks, k]), np.vstack([vs, v])
            store[i] = (ks, vs)
            snaps.append((len(ks), ks, vs))
        return snaps

    scripts = {
        "one key [2] + value [3], twice, then a block of 3":
            [(0, rng.normal(size=2), rng.normal(size=3)), (0, rng.normal(size=2), rng.normal(size=3)),
             (0, rng.normal(size=(3, 2)), rng.normal(size=(3, 3)))],
        "a block of 3 first": [(0, rng.normal(size=(3, 2)), rng.normal(size=(3, 2)))],
        "k=[1, 0] then k=[0, 1]": [(0, np.array([1.0, 0.0]), np.array([1.0, 0.0])),
                                   (0, np.array([0.0, 1.0]), np.array([0.0, 1.0]))],
        "two caches: 2 positions in one, then a new cache with 1":
            [(0, rng.normal(size=2), rng.normal(size=2)), (0, rng.normal(size=2), rng.normal(size=2)),
             (1, rng.normal(size=2), rng.normal(size=2))],
    }
    return run_cases(cls, [(label, lambda c, ops=ops: script(c, ops), expect(ops))
                           for label, ops in scripts.items()])


def check_decode(f):
    KV = f.__globals__["KVCache"]
    rng = np.random.default_rng(31)
    cases = []
    for label, d_model, d_k, d_v, t, n, single in [
            ("empty cache, prompt of 3 tokens", 6, 4, 4, 0, 3, False),
            ("cache of 2, one new token [6]", 6, 4, 4, 2, 1, True),
            ("cache of 4, block of 3 new tokens", 6, 4, 3, 4, 3, False),
            ("cache of 5, one new token, d_k=2, d_v=5", 6, 2, 5, 5, 1, True),
            ("empty cache, one token", 4, 4, 4, 0, 1, True)]:
        W_q, W_k = rng.normal(size=(2, d_model, d_k))
        W_v = rng.normal(size=(d_model, d_v))
        X = rng.normal(size=(t + n, d_model))
        full = ref_attention(X @ W_q, X @ W_k, X @ W_v, causal=True)
        expected_out = full[t] if single else full[t:]

        def call(f, X=X, W=(W_q, W_k, W_v), t=t, single=single):
            cache = KV()
            if t:
                cache.append(X[:t] @ W[1], X[:t] @ W[2])
            out = f(X[t] if single else X[t:], cache, *W)
            return out, np.asarray(cache.keys), np.asarray(cache.values)
        cases.append((label, call, (expected_out, X @ W_k, X @ W_v)))
    return run_cases(f, cases)


CORRECT.update({
    "online_softmax_stats": (S.IMP07 + S.ONLINE_HEAD + S.ONLINE_OK, check_online),
    "attention_one_pass": (S.IMP07 + S.ONEPASS_HEAD + S.ONEPASS_OK, check_onepass),
    "tiled_attention": (S.IMP07 + S.TILED_HEAD + S.TILED_OK, check_tiled),
    "KVCache": (S.IMP07 + S.KV_OK, check_kv),
    "decode_step": (S.IMP07 + S.KV_OK + S.DECODE_HEAD + S.DECODE_OK, check_decode),
})

# =============================================================================== lesson 08

def ref_sinusoidal(T, d):
    PE = np.zeros((T, d))
    for t in range(T):
        for i in range(d // 2):
            angle = t / 10000 ** (2 * i / d)
            PE[t, 2 * i], PE[t, 2 * i + 1] = math.sin(angle), math.cos(angle)
    return PE


def check_sinusoidal(f):
    sizes = [(1, 2), (2, 4), (1, 4), (2, 2), (5, 8), (0, 4), (3, 2), (7, 12), (100, 64)]
    return run_cases(f, [(f"T={T}, d={d}", lambda f, T=T, d=d: f(T, d), ref_sinusoidal(T, d))
                         for T, d in sizes])


def ref_rope(x, positions, base=10000.0):
    x = np.asarray(x, dtype=float)
    d = x.shape[-1]
    freqs = base ** (-np.arange(0, d, 2) / d)
    z = (x[..., 0::2] + 1j * x[..., 1::2]) * np.exp(1j * np.outer(np.asarray(positions, float), freqs))
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = z.real, z.imag
    return out


def check_rope(f):
    rng = np.random.default_rng(37)
    p6 = np.array([0, 1, 5, 17, 1000, -3])
    inputs = [("x=[[1, 0]] at position 1", np.array([[1.0, 0.0]]), [1], 10000.0),
              ("x=[[0, 1]] at position 0", np.array([[0.0, 1.0]]), [0], 10000.0),
              ("x=[[1, 2, 3, 4]] at position 1", np.array([[1.0, 2.0, 3.0, 4.0]]), [1], 10000.0),
              ("x [6, 8], positions [0, 1, 5, 17, 1000, -3]", rng.normal(size=(6, 8)), p6, 10000.0),
              ("x [2, 6, 8] batched", rng.normal(size=(2, 6, 8)), p6, 10000.0),
              ("x [4, 8], positions 0..3", rng.normal(size=(4, 8)), np.arange(4), 10000.0),
              ("x [1, 4] at position 1, base=100", rng.normal(size=(1, 4)), [1], 100.0),
              ("x [3, 6], positions [2, 9, 4], base=500", rng.normal(size=(3, 6)), [2, 9, 4], 500.0)]
    cases = [(label, lambda f, x=x, p=p, b=b: f(x.copy(), p, b), ref_rope(x, p, b))
             for label, x, p, b in inputs]
    x = rng.normal(size=(3, 4))

    def untouched(f):
        mine = x.copy()
        f(mine, [1, 2, 3])
        return mine
    cases.append(("the caller's x after rope(x, [1, 2, 3])", untouched, x.copy()))
    return run_cases(f, cases)


def ref_rope_scores(Q, K, pq, pk, base=10000.0):
    q, k = ref_rope(Q, pq, base), ref_rope(K, pk, base)
    return q @ np.swapaxes(k, -1, -2) / math.sqrt(Q.shape[-1])


def check_rope_scores(f):
    rng = np.random.default_rng(41)
    Q4, K6 = rng.normal(size=(4, 8)), rng.normal(size=(6, 8))
    Q3, K3 = rng.normal(size=(2, 3, 8)), rng.normal(size=(2, 3, 8))
    Qb, Kb = rng.normal(size=(2, 1, 3, 8)), rng.normal(size=(4, 5, 8))
    inputs = [("Q [4, 8], K [6, 8], pq 10..13, pk 0..5", Q4, K6, np.arange(10, 14), np.arange(6), 10000.0),
              ("Q, K [3, 8], pq [10, 11, 12], pk [0, 1, 2]", Q3[0], K3[0], [10, 11, 12], [0, 1, 2], 10000.0),
              ("Q, K [3, 8] at positions 1000..1002", Q3[0], K3[0], [1000, 1001, 1002],
               [1000, 1001, 1002], 10000.0),
              ("Q [4, 8], K [6, 8], base=100", Q4, K6, np.arange(10, 14), np.arange(6), 100.0),
              ("Q [2, 3, 8], K [2, 3, 8]", Q3, K3, [0, 4, 2], [1, 1, 7], 10000.0),
              ("Q [2, 1, 3, 8], K [4, 5, 8] (batch broadcast)", Qb, Kb, [3, 4, 5], np.arange(5), 10000.0)]
    return run_cases(f, [(label, lambda f, Q=Q, K=K, pq=pq, pk=pk, b=b: f(Q, K, pq, pk, b),
                          ref_rope_scores(Q, K, pq, pk, b)) for label, Q, K, pq, pk, b in inputs])


CORRECT.update({
    "sinusoidal_positions": (S.IMP08 + S.SIN_HEAD + S.SIN_OK, check_sinusoidal),
    "rope": (S.IMP08 + S.ROPE_HEAD + S.ROPE_OK, check_rope),
    "rope_scores": (S.IMP08 + S.ROPE_HEAD + S.ROPE_OK + S.SCORES_HEAD + S.SCORES_OK, check_rope_scores),
})


def setup_refs():
    global REF_MHA
    REF_MHA = load(S.mha_source(), "MultiHeadAttention", "ref_mha")
    if check_mha(REF_MHA):
        raise SystemExit(f"the right MultiHeadAttention fails the harness: {check_mha(REF_MHA)}")


# =============================================================================== main

# The case of each answer's wrong_on sentence (a substring of a case label above): the
# answer must differ from the reference on that very case.
WHERE = {
    "e-05-split-heads-reshape-no-transpose": "x coded [1,2,4] h=2",
    "e-05-split-heads-strided-features": "x coded [1,1,4] h=2",
    "e-05-split-heads-float-d-head": "x coded [1,2,4] h=2",
    "e-05-split-heads-stack-head-axis-first": "x coded [2,3,4] h=2",
    "e-05-merge-heads-no-transpose": "x coded [1,2,2,1]",
    "e-05-merge-heads-permute-interleaves": "x coded [1,2,1,2]",
    "e-05-merge-heads-index-token-axis": "x coded [1,2,3,2]",
    "e-05-mha-scale-sqrt-d-model": "self-attention d=8 h=2",
    "e-05-mha-mask-polarity-inverted": "key mask",
    "e-05-mha-values-from-key": "cross-attention",
    "e-05-mha-weights-averaged-over-heads": "self-attention d=8 h=2",
    "e-05-mha-softmax-over-queries": "self-attention d=8 h=2",
    "e-05-mha-output-projection-skipped": "self-attention d=8 h=2",
    "e-05-mha-mask-fills-zero": "key mask",
    "e-05-mha-mask-after-softmax": "key mask",
    "e-05-mha-linear-without-bias": "self-attention d=8 h=2",
    "e-05-copy-transposed-weights": "nn.MultiheadAttention(8, 2)",
    "e-05-copy-key-value-blocks-swapped": "nn.MultiheadAttention(8, 2)",
    "e-05-copy-biases-forgotten": "nn.MultiheadAttention(8, 2)",
    "e-05-copy-new-parameters": "nn.MultiheadAttention(8, 2)",
    "e-05-hobo-columns-not-rows": "MHA(8,2), x[1,3,8]",
    "e-05-hobo-maps-stacked-first": "MHA(8,2), x[1,3,8]",
    "e-05-hobo-appends-scores": "MHA(8,2), x[1,3,8]",
    "e-05-hobo-value-bias-from-key": "MHA(8,2), x[1,3,8]",
    "e-05-count-no-biases": "d_model=8, n_heads=2",
    "e-05-count-per-head-squares": "d_model=8, n_heads=2",
    "e-05-count-forgets-output-layer": "d_model=8, n_heads=2",
    "e-05-vdu-up-from-rows": "MHA(8,2) head 0",
    "e-05-vdu-down-from-columns": "MHA(8,2) head 1",
    "e-05-vdu-no-transposes": "MHA(8,2) head 0",
    "e-05-vdu-bias-added-to-up": "MHA(8,2) head 0",
    "e-06-block-post-norm": "residual=True",
    "e-06-block-skip-carries-normed": "residual=True",
    "e-06-block-parallel-branches": "residual=True",
    "e-06-block-no-residual-keeps-mlp-skip": "residual=False",
    "e-06-block-ln1-used-twice": "residual=True",
    "e-06-tiny-final-norm-skipped": "1 layer(s), residual=True, tokens [2, 8]",
    "e-06-tiny-positions-from-token-ids": "1 layer(s), residual=True, tokens [2, 8]",
    "e-06-tiny-residual-flag-not-passed": "2 layer(s), residual=False",
    "e-06-tiny-one-block-repeated": "2 layer(s), residual=True",
    "e-06-tiny-embedding-scaled": "1 layer(s), residual=True, tokens [2, 8]",
    "e-06-sim-diagonal-included": "[[1, 0], [0, 1]]",
    "e-06-sim-normalised-over-tokens": "[[3, 0], [0, 1], [1, 1]]",
    "e-06-sim-feature-gram": "[[3, 0], [0, 1], [1, 1]]",
    "e-06-sim-returns-tensor": "randn(2, 4, 8)",
    "e-06-sim-full-transpose": "randn(2, 3, 4)",
    "e-06-ablation-seed-once-per-depth": "depths (1,)",
    "e-06-ablation-init-similarity-after-training": "depths (1,)",
    "e-06-ablation-final-loss-last-only": "depths (1,)",
    "e-06-ablation-rows-without-first": "depths (1,)",
    "e-07-online-rescale-exponent-flipped": "[[1, 2]]",
    "e-07-online-sum-not-rescaled": "[[0], [1]]",
    "e-07-online-max-updated-too-early": "[[0], [1]]",
    "e-07-online-block-terms-own-max": "[[2], [0]]",
    "e-07-online-start-max-zero": "[[-3, -1]]",
    "e-07-online-two-loops": "[[1, 2]]",
    "e-07-online-exp-ratio-overflows": "[[1000, 990], [1010, -1000]]",
    "e-07-online-returns-s-m": "[[1, 2]]",
    "e-07-onepass-output-not-rescaled": "K=[[0],[2]]",
    "e-07-onepass-divides-each-block": "K=[[0],[0]]",
    "e-07-onepass-drops-short-last-block": "T_k=10, block=3",
    "e-07-onepass-scale-by-dk": "random d_k=4, T_k=10, block=3",
    "e-07-onepass-no-max-subtracted": "scores near 1000",
    "e-07-onepass-two-passes": "rows read in one pass, T_k=10, block=3",
    "e-07-onepass-block-as-count": "random d_k=4, T_k=10, block=11",
    "e-07-onepass-max-of-block-only": "K=[[1000],[-1000]]",
    "e-07-tiled-skip-test-off-by-one": "[12, 4], 3 x 4 tiles, causal=True",
    "e-07-tiled-mask-tile-positions": "[12, 4], 3 x 4 tiles, causal=True",
    "e-07-tiled-break-counts-one": "[12, 4], 4 x 4 tiles, causal=True",
    "e-07-tiled-state-outside-query-loop": "[12, 4], 4 x 4 tiles, causal=False",
    "e-07-tiled-scale-after-update": "[12, 4], 4 x 4 tiles, causal=False",
    "e-07-tiled-max-keepdims-dropped": "[12, 4], 4 x 4 tiles, causal=False",
    "e-07-tiled-full-transpose": "batched [2, 12, 4], 4 x 4 tiles, causal=False",
    "e-07-tiled-mask-strict": "[12, 4], 4 x 4 tiles, causal=True",
    "e-07-kv-len-counts-appends": "a block of 3 first",
    "e-07-kv-prepends": "k=[1, 0] then k=[0, 1]",
    "e-07-kv-values-returns-keys": "one key [2] + value [3]",
    "e-07-kv-class-level-lists": "two caches",
    "e-07-kv-append-overwrites": "k=[1, 0] then k=[0, 1]",
    "e-07-kv-stack-adds-axis": "k=[1, 0] then k=[0, 1]",
    "e-07-decode-append-after-attending": "cache of 2, one new token",
    "e-07-decode-block-not-causal": "empty cache, prompt of 3 tokens",
    "e-07-decode-mask-ignores-cache-offset": "cache of 2, one new token",
    "e-07-decode-scale-d-model": "empty cache, prompt of 3 tokens",
    "e-07-decode-single-token-row-kept": "cache of 2, one new token",
    "e-07-decode-softmax-over-new-tokens": "cache of 2, one new token",
    "e-08-sin-exponent-i-over-d": "T=2, d=4",
    "e-08-sin-multiplies-by-power": "T=2, d=4",
    "e-08-sin-cos-swapped": "T=1, d=2",
    "e-08-sin-halves": "T=1, d=4",
    "e-08-sin-doubled-exponent": "T=2, d=4",
    "e-08-sin-positions-from-one": "T=1, d=2",
    "e-08-sin-floor-division": "T=2, d=4",
    "e-08-sin-pair-index-from-one": "T=2, d=2",
    "e-08-sin-outer-reversed": "T=2, d=4",
    "e-08-rope-clockwise": "x=[[1, 0]] at position 1",
    "e-08-rope-halves": "x=[[1, 2, 3, 4]] at position 1",
    "e-08-rope-overwrites-in-place": "x=[[1, 0]] at position 1",
    "e-08-rope-positions-ignored": "x [6, 8], positions [0, 1, 5, 17, 1000, -3]",
    "e-08-rope-exponent-i-over-d": "x=[[1, 2, 3, 4]] at position 1",
    "e-08-rope-base-hardcoded": "base=100",
    "e-08-rope-positions-not-column": "x [4, 8], positions 0..3",
    "e-08-rope-second-feature-sign": "x=[[0, 1]] at position 0",
    "e-08-scores-keys-at-query-positions": "Q, K [3, 8], pq [10, 11, 12]",
    "e-08-scores-base-not-passed": "base=100",
    "e-08-scores-full-transpose": "Q [2, 3, 8], K [2, 3, 8]",
    "e-08-scores-not-scaled": "Q [4, 8], K [6, 8], pq 10..13",
    "e-08-scores-keys-not-turned": "positions 1000..1002",
    "e-08-scores-scaled-both-operands": "Q [4, 8], K [6, 8], pq 10..13",
    "e-08-scores-operands-swapped": "Q [4, 8], K [6, 8], pq 10..13",
}
# (train's answers have one case: a small float64 model, 4 steps, seed 3.)


def main(only=None):
    setup_refs()
    for name, (src, checker) in CORRECT.items():
        if only and not name.startswith(only):
            continue
        diffs = checker(load(src, name, "right_" + name))
        print(f"harness {name:22s} {'ok (right answer passes)' if not diffs else 'BROKEN: ' + str(diffs[0])}")
        if diffs:
            raise SystemExit(1)
    ids = [w.id for w in S.WRONG]
    assert len(ids) == len(set(ids)), "duplicate ids"
    n_ok = n_fail = 0
    for w in S.WRONG:
        if only and not w.exercise.startswith(only):
            continue
        checker = CORRECT[w.exercise][1]
        try:
            diffs = checker(load(w.source, w.exercise, w.id))
        except Exception as exc:
            traceback.print_exc()
            diffs = []
            print(f"(source of {w.id} does not load: {exc})")
        where = WHERE.get(w.id)
        hit = [d for d in diffs if where is None or where in d[0]]
        if not hit:
            n_fail += 1
            print(f"FAIL {w.id}: no difference found" + (f" on the case '{where}'" if where else ""))
        else:
            n_ok += 1
            print(f"ok   {w.id}: {hit[0][0]}: {hit[0][1]}")
    print(f"{n_ok} ok, {n_fail} FAIL, of {n_ok + n_fail}")
    return n_fail


if __name__ == "__main__":
    sys.exit(1 if main(sys.argv[1] if len(sys.argv) > 1 else None) else 0)
