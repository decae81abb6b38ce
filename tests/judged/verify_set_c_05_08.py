"""Verify that every answer of set_c_05_08 is wrong: each differs from an independent
computation on at least one allowed input. Run with PYTHONPATH=/work/main."""
import math, os, sys, types, traceback
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from set_c_05_08 import WRONG

torch.set_num_threads(1)


def load(src):
    ns = {"__name__": "answer"}
    exec(compile(src, "<answer>", "exec"), ns)
    return ns


def differs(a, b, tol=1e-6):
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) != len(b) or any(differs(x, y, tol) for x, y in zip(a, b))
    a = a.detach().numpy() if isinstance(a, torch.Tensor) else np.asarray(a, dtype=float)
    b = b.detach().numpy() if isinstance(b, torch.Tensor) else np.asarray(b, dtype=float)
    if a.shape != b.shape:
        return True
    return not np.allclose(a, b, rtol=1e-5, atol=tol, equal_nan=False)


def wrong_on_any(call, ref, inputs):
    """True if call differs from ref (or raises) on at least one input."""
    for idx, args in enumerate(inputs):
        want = ref(*args)
        try:
            got = call(*args)
        except Exception as e:          # a crash on a valid input is a wrong answer
            return True, f"raises {type(e).__name__}: {str(e)[:60]}"
        if differs(got, want):
            return True, f"differs on input #{idx}"
    return False, "same on every input"


# ---------------------------------------------------------------- lesson 05 references
def r_split(x, h):
    B, T, d = x.shape
    dh = d // h
    return torch.stack([x[:, :, i * dh:(i + 1) * dh] for i in range(h)], dim=1)


def r_merge(x):
    return torch.cat([x[:, i] for i in range(x.shape[1])], dim=-1)


def r_mha(m, query, key, value, mask=None):
    h, d = m.n_heads, m.d_model
    dh = d // h
    Wq, bq = m.w_q.weight, m.w_q.bias
    outs, maps = [], []
    for i in range(h):
        r = slice(i * dh, (i + 1) * dh)
        q = query @ m.w_q.weight[r].T + m.w_q.bias[r]
        k = key @ m.w_k.weight[r].T + m.w_k.bias[r]
        v = value @ m.w_v.weight[r].T + m.w_v.bias[r]
        s = q @ k.transpose(-1, -2) / math.sqrt(dh)
        if mask is not None:
            mm = mask
            if mm.dim() == 2:
                mm = mm[:, None, :]
            s = torch.where(mm, s, torch.tensor(float("-inf")))
        w = torch.exp(s - s.amax(-1, keepdim=True))
        w = w / w.sum(-1, keepdim=True)
        outs.append(w @ v); maps.append(w)
    return torch.cat(outs, -1) @ m.w_o.weight.T + m.w_o.bias, torch.stack(maps, 1)


def randomize(module, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.5)


def t_split(ns):
    g = torch.Generator().manual_seed(0)
    coded = (100 * torch.arange(2)[:, None, None] + 10 * torch.arange(3)[None, :, None]
             + torch.arange(4)[None, None, :]).float()
    inputs = [(coded[:1], 2), (coded, 2), (torch.randn(2, 5, 12, generator=g), 3)]
    return wrong_on_any(ns["split_heads"], r_split, inputs)


def t_merge(ns):
    g = torch.Generator().manual_seed(0)
    coded = (1000 * torch.arange(1)[:, None, None, None] + 100 * torch.arange(2)[None, :, None, None]
             + 10 * torch.arange(3)[None, None, :, None] + torch.arange(2)).float()
    inputs = [(coded,), (torch.randn(2, 3, 4, 2, generator=g),)]
    return wrong_on_any(ns["merge_heads"], r_merge, inputs)


def t_mha(ns):
    cls = ns["MultiHeadAttention"]
    g = torch.Generator().manual_seed(1)
    x = torch.randn(2, 4, 8, generator=g)
    dec, enc, enc2 = torch.randn(2, 3, 8, generator=g), torch.randn(2, 5, 8, generator=g), torch.randn(2, 5, 8, generator=g)
    real = torch.tensor([[True] * 5, [True] * 3 + [False] * 2])
    torch.manual_seed(0)
    ref_mod = nn.Module()
    for n in ("w_q", "w_k", "w_v", "w_o"):
        setattr(ref_mod, n, nn.Linear(8, 8))
    ref_mod.n_heads, ref_mod.d_model = 2, 8
    randomize(ref_mod, 3)
    try:
        mod = cls(8, 2)
        mod.load_state_dict(ref_mod.state_dict(), strict=False)
    except Exception as e:
        return True, f"raises {type(e).__name__}"
    inputs = [(x, x, x, None), (dec, enc, enc, None), (dec, enc, enc, real), (dec, enc, enc2, None)]
    with torch.no_grad():
        return wrong_on_any(lambda *a: mod(*a[:3], mask=a[3]), lambda *a: r_mha(ref_mod, *a), inputs)


def t_copy(ns):
    torch.manual_seed(2)
    theirs = nn.MultiheadAttention(8, 2, batch_first=True)
    with torch.no_grad():
        theirs.in_proj_bias.normal_(0, 0.3); theirs.out_proj.bias.normal_(0, 0.3)
    ours = ns["MultiHeadAttention"](8, 2)
    own = [ours.w_q.weight, ours.w_q.bias, ours.w_o.weight]
    try:
        res = ns["copy_from_torch"](ours, theirs)
    except Exception as e:
        return True, f"raises {type(e).__name__}"
    if res is not ours:
        return True, "does not return ours"
    if ours.w_q.weight is not own[0] or ours.w_o.weight is not own[2]:
        return True, "parameter objects replaced"
    g = torch.Generator().manual_seed(4)
    x = torch.randn(2, 4, 8, generator=g)
    with torch.no_grad():
        a = ours(x, x, x)[0]
        b = theirs(x, x, x, average_attn_weights=False)[0]
    return (True, "output differs from torch") if differs(a, b, 1e-5) else (False, "same")


def t_loop(ns):
    torch.manual_seed(4)
    mha = nn.Module()
    for n in ("w_q", "w_k", "w_v", "w_o"):
        setattr(mha, n, nn.Linear(16, 16))
    mha.n_heads, mha.d_model = 4, 16
    x = torch.randn(2, 6, 16)
    with torch.no_grad():
        return wrong_on_any(lambda x: ns["heads_one_by_one"](x, mha), lambda x: r_mha(mha, x, x, x), [(x,)])


def t_count(ns):
    ref = lambda d, h: sum(p.numel() for p in nn.MultiheadAttention(d, h).parameters())
    return wrong_on_any(ns["mha_parameter_count"], ref, [(8, 2), (64, 8), (64, 1), (12, 3)])


def t_vdu(ns):
    torch.manual_seed(5)
    mha = nn.Module()
    for n in ("w_q", "w_k", "w_v", "w_o"):
        setattr(mha, n, nn.Linear(8, 8))
    mha.n_heads, mha.d_model, mha.d_head = 2, 8, 4

    def ref(head):   # by probing: down = what w_v (no bias) gives on unit rows, up likewise for w_o
        eye = torch.eye(8)
        with torch.no_grad():
            down = (mha.w_v(eye) - mha.w_v.bias)[:, head * 4:(head + 1) * 4]
            z = torch.zeros(4, 8); z[:, head * 4:(head + 1) * 4] = torch.eye(4)
            up = mha.w_o(z) - mha.w_o.bias
        return down, up
    with torch.no_grad():
        return wrong_on_any(lambda h: ns["value_down_up"](mha, h), ref, [(0,), (1,)])


TESTS = {"split_heads": t_split, "merge_heads": t_merge, "MultiHeadAttention": t_mha,
         "copy_from_torch": t_copy, "heads_one_by_one": t_loop, "mha_parameter_count": t_count,
         "value_down_up": t_vdu}

# ---------------------------------------------------------------- lessons 06-08
import math
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.long_attention import stream_of


def _differs(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape != b.shape or not np.allclose(a, b, rtol=1e-7, atol=1e-9)


def _wrong_on_any(call, ref, inputs):
    for idx, args in enumerate(inputs):
        want = ref(*args)
        try:
            got = call(*args)
        except Exception as e:
            return True, f"raises {type(e).__name__} on input #{idx}: {str(e)[:50]}"
        if isinstance(want, tuple):
            if not isinstance(got, tuple) or len(got) != len(want) or any(_differs(g, w) for g, w in zip(got, want)):
                return True, f"differs on input #{idx}"
        elif _differs(got, want):
            return True, f"differs on input #{idx}"
    return False, "same on every input"


def sdpa(Q, K, V, causal=False):
    Q, K, V = (torch.from_numpy(np.ascontiguousarray(a, dtype=np.float64)) for a in (Q, K, V))
    return F.scaled_dot_product_attention(Q, K, V, is_causal=causal).numpy()


# ---------------------------------------------------------------- lesson 07
def t_oss(ns):
    f = ns["online_softmax_stats"]

    def ref(blocks):
        row = np.concatenate(blocks)
        return (float(row.max()), float(np.sum(np.exp(row - row.max()))))
    cases = [[np.array([0.0]), np.array([2.0])], [np.array([2.0]), np.array([0.0])],
             [np.array([-3.0, -1.0])], [np.array([1000.0, 990.0]), np.array([1010.0, -1000.0])],
             [np.array([1.0, 3.0, 0.5])]]
    return _wrong_on_any(lambda b: tuple(float(v) for v in f(stream_of(b))), ref, [(c,) for c in cases])


def t_aop(ns):
    f = ns["attention_one_pass"]
    rng = np.random.default_rng(0)
    q, K, V = rng.normal(size=4), rng.normal(size=(10, 4)), rng.normal(size=(10, 3))
    ref = lambda q, K, V, b: sdpa(q[None], K, V)[0]
    inputs = [(q, K, V, b) for b in (3, 1, 4, 10, 11)]
    K_up = np.linspace(-2, 2, 10)[:, None]          # scores that grow from key to key
    inputs += [(np.ones(1), K_up, V, b) for b in (3, 1)]
    return _wrong_on_any(f, ref, inputs)


def t_tile(ns):
    f = ns["tiled_attention"]
    rng = np.random.default_rng(1)
    Q, K, V = rng.normal(size=(3, 12, 4))
    QB, KB, VB = rng.normal(size=(3, 2, 12, 4))
    far_K = -1000 + 0.1 * rng.normal(size=(4, 1))

    def ref(Q, K, V, bq, bk, causal):
        T = Q.shape[-2]
        skipped = sum(1 for i0 in range(0, T, bq) for j0 in range(0, K.shape[-2], bk)
                      if causal and j0 > min(i0 + bq, T) - 1)
        return sdpa(Q, K, V, causal), skipped
    inputs = [(Q, K, V, 4, 4, False), (Q, K, V, 6, 2, True), (Q, K, V, 4, 4, True), (Q, K, V, 5, 7, True),
              (QB, KB, VB, 4, 4, False), (np.ones((4, 1)), far_K, V[:4], 2, 2, False)]
    return _wrong_on_any(lambda *a: (lambda r: (r[0], r[1]))(f(*a)), ref, inputs)


def t_kv(ns):
    C = ns["KVCache"]
    rng = np.random.default_rng(2)
    blk_k, blk_v = rng.normal(size=(3, 4)), rng.normal(size=(3, 5))
    k1, v1 = rng.normal(size=4), rng.normal(size=5)
    k2, v2 = rng.normal(size=(2, 4)), rng.normal(size=(2, 5))
    try:
        other = C(); other.append(k1, v1)          # an earlier cache in the same session
        c = C()
        if len(c) != 0:
            return True, "a new cache is not empty"
        ks, vs = [], []
        for k, v in [(blk_k, blk_v), (k1, v1), (k2, v2)]:
            c.append(k, v)
            ks.append(np.atleast_2d(k)); vs.append(np.atleast_2d(v))
            K, V = np.concatenate(ks), np.concatenate(vs)
            if len(c) != len(K) or _differs(c.keys, K) or _differs(c.values, V):
                return True, f"wrong after {len(ks)} append(s)"
    except Exception as e:
        return True, f"raises {type(e).__name__}: {str(e)[:50]}"
    return False, "same"


def t_dec(ns):
    f, C = ns["decode_step"], ns["KVCache"]
    rng = np.random.default_rng(3)
    d_model, d_k, d_v = 6, 4, 4
    W_q, W_k = rng.normal(size=(2, d_model, d_k))
    W_v = rng.normal(size=(d_model, d_v))
    X = rng.normal(size=(10, d_model))
    want = sdpa(X @ W_q, X @ W_k, X @ W_v, causal=True)
    try:
        cache = C()
        outs = [f(X[:4], cache, W_q, W_k, W_v)]
        if np.shape(outs[0]) != (4, d_v) or _differs(outs[0], want[:4]):
            return True, "prompt output differs"
        for t in range(4, 10):
            o = f(X[t], cache, W_q, W_k, W_v)
            if np.shape(o) != (d_v,) or _differs(o, want[t]):
                return True, f"token {t} differs (shape {np.shape(o)})"
        if len(cache) != 10 or _differs(cache.keys, X @ W_k):
            return True, "cache contents wrong"
    except Exception as e:
        return True, f"raises {type(e).__name__}: {str(e)[:50]}"
    return False, "same"


# ---------------------------------------------------------------- lesson 08
def r_sin(T, d):
    PE = np.zeros((T, d))
    for t in range(T):
        for i in range(d // 2):
            PE[t, 2 * i] = math.sin(t / 10000 ** (2 * i / d))
            PE[t, 2 * i + 1] = math.cos(t / 10000 ** (2 * i / d))
    return PE


def t_sin(ns):
    return _wrong_on_any(ns["sinusoidal_positions"], r_sin, [(3, 4), (1, 4), (2, 2), (3, 8), (0, 6), (7, 16)])


def r_rope(x, p, base=10000.0):
    x = np.asarray(x, dtype=float)
    d = x.shape[-1]
    freqs = base ** (-np.arange(0, d, 2) / d)
    z = (x[..., 0::2] + 1j * x[..., 1::2]) * np.exp(1j * np.outer(np.asarray(p), freqs))
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = z.real, z.imag
    return out


def t_rope(ns):
    f = ns["rope"]
    rng = np.random.default_rng(4)
    inputs = [(np.array([[1.0, 0.0]]), np.array([1]), 10000.0),
              (rng.normal(size=(3, 4)), np.array([0, 1, 2]), 100.0),
              (rng.normal(size=(3, 4)), np.array([5, 6, 7]), 10000.0),
              (rng.normal(size=(2, 4)), np.array([0, 3]), 10000.0),
              (rng.normal(size=(2, 6, 8)), np.array([0, 1, 5, 17, 1000, -3]), 10000.0)]
    return _wrong_on_any(lambda x, p, b: f(x.copy(), p, b), r_rope, inputs)


def t_scores(ns):
    f = ns["rope_scores"]
    rng = np.random.default_rng(5)

    def ref(Q, K, pq, pk, base):
        d = Q.shape[-1]
        return r_rope(Q, pq, base) @ np.swapaxes(r_rope(K, pk, base), -1, -2) / np.sqrt(d)
    Q, K = rng.normal(size=(2, 3, 4))
    inputs = [(Q, K, np.arange(3), np.arange(3), 100.0),
              (Q, K, np.arange(10, 13), np.arange(3), 10000.0),
              (Q, K, np.arange(3), np.arange(1, 4), 10000.0),
              (rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), np.arange(3), np.arange(5), 10000.0)]
    return _wrong_on_any(lambda *a: f(*(x.copy() if isinstance(x, np.ndarray) else x for x in a)), ref, inputs)


MORE_TESTS = {"online_softmax_stats": t_oss, "attention_one_pass": t_aop, "tiled_attention": t_tile,
         "KVCache": t_kv, "decode_step": t_dec, "sinusoidal_positions": t_sin, "rope": t_rope,
         "rope_scores": t_scores}


# ---------------------------------------------------------------- lesson 06
import copy

from courseware.ablation import MODEL, TASK, LEARNING_RATE, layer_outputs


class _RefBlock(nn.Module):
    def __init__(self, d, h, f, residual=True):
        super().__init__()
        self.residual = residual
        self.ln1 = nn.LayerNorm(d)                      # created in Block's order, so that
        self.attn = nn.MultiheadAttention(d, h, batch_first=True)   # a seed gives the same init
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, f), nn.GELU(), nn.Linear(f, d))

    def forward(self, x):
        h = self.ln1(x)
        a = self.attn(h, h, h, need_weights=False)[0]
        x = x + a if self.residual else a
        m = self.mlp(self.ln2(x))
        return x + m if self.residual else m


def _randomize(module, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.5 + (1.0 if p.dim() == 1 else 0.0) * 0.3)


def t_block(ns):
    cls = ns["Block"]
    x = torch.randn(2, 5, 8, generator=torch.Generator().manual_seed(0)) * 3 + 1
    for residual in (True, False):
        ref = _RefBlock(8, 2, 16, residual)
        _randomize(ref, 1)
        try:
            mine = cls(8, 2, 16, residual=residual)
            mine.load_state_dict(ref.state_dict())
            with torch.no_grad():
                got = mine(x)
        except Exception as e:
            return True, f"raises {type(e).__name__}: {str(e)[:50]}"
        with torch.no_grad():
            want = ref(x)
        if got.shape != want.shape or not torch.allclose(got, want, atol=1e-5):
            return True, f"differs with residual={residual}"
    return False, "same"


class _RefTiny(nn.Module):
    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual=True):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(seq_len, d_model)
        self.blocks = nn.ModuleList([_RefBlock(d_model, n_heads, d_ff, residual) for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens):
        x = self.tok_emb(tokens) + self.pos_emb.weight[: tokens.shape[1]]
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln_f(x))


def t_tiny(ns):
    cls = ns["TinyTransformer"]
    g = torch.Generator().manual_seed(0)
    cases = [(2, True, torch.tensor([[3, 3, 1, 0]])), (2, False, torch.randint(0, 8, (2, 8), generator=g)),
             (1, True, torch.randint(0, 8, (2, 5), generator=g))]
    for n_layers, residual, tokens in cases:
        ref = _RefTiny(**MODEL, n_layers=n_layers, residual=residual)
        _randomize(ref, 2)
        try:
            mine = cls(**MODEL, n_layers=n_layers, residual=residual)
            mine.load_state_dict(ref.state_dict())
            with torch.no_grad():
                got = mine(tokens)
        except Exception as e:
            return True, f"raises {type(e).__name__}: {str(e)[:50]}"
        with torch.no_grad():
            want = ref(tokens)
        if got.shape != want.shape or not torch.allclose(got, want, atol=1e-5):
            return True, f"differs (n_layers={n_layers}, residual={residual})"
    return False, "same"


def r_sim(h):
    h = np.asarray(h, dtype=float)
    T = h.shape[-2]
    flat = h.reshape(-1, T, h.shape[-1])
    vals = []
    for seq in flat:
        tot = 0.0
        for i in range(T):
            for j in range(T):
                if i != j:
                    tot += seq[i] @ seq[j] / np.linalg.norm(seq[i]) / np.linalg.norm(seq[j])
        vals.append(tot / (T * (T - 1)))
    return float(np.mean(vals))


def t_sim(ns):
    g = torch.Generator().manual_seed(3)
    inputs = [(torch.tensor([[1.0, 0.0], [0.0, 1.0]]),), (torch.tensor([[3.0, 0.0], [1.0, 1.0]]),),
              (torch.tensor([[[1.0, 0.0], [1.0, 0.0]], [[0.0, 1.0], [0.0, 1.0]]]),),
              (torch.randn(2, 3, 4, 6, generator=g),)]
    return _wrong_on_any(ns["token_similarity"], r_sim, inputs)


def _small_model():
    torch.manual_seed(7)
    return nn.Sequential(nn.Embedding(8, 16), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 8)).double()


def t_train(ns):
    m1 = _small_model()
    m2 = copy.deepcopy(m1)
    gen = torch.Generator().manual_seed(0)
    opt = torch.optim.Adam(m2.parameters(), lr=LEARNING_RATE)
    want = []
    for _ in range(5):
        tok, tgt = TASK.sample(gen)
        loss = F.cross_entropy(m2(tok).reshape(-1, 8), tgt.reshape(-1))
        opt.zero_grad(); loss.backward(); opt.step()
        want.append(loss.item())
    try:
        got = ns["train"](m1, TASK, 5, 0)
    except Exception as e:
        return True, f"raises {type(e).__name__}"
    return (True, "losses differ") if _differs(got, want) else (False, "same")


def _ref_run(depths, steps, seed):
    probe, _ = TASK.sample(torch.Generator().manual_seed(seed))
    rows = []
    for depth in depths:
        for residual in (True, False):
            torch.manual_seed(seed)
            model = _RefTiny(**MODEL, n_layers=depth, residual=residual)
            init = [r_sim(s) for s in layer_outputs(model, probe)]
            gen = torch.Generator().manual_seed(seed)
            opt = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
            model.train()
            losses = []
            for _ in range(steps):
                tok, tgt = TASK.sample(gen)
                loss = F.cross_entropy(model(tok).reshape(-1, TASK.vocab_size), tgt.reshape(-1))
                opt.zero_grad(); loss.backward(); opt.step()
                losses.append(loss.item())
            rows.append({"depth": depth, "residual": residual, "losses": losses,
                         "final_loss": float(np.mean(losses[-10:])), "similarity_init": init,
                         "similarity_trained": [r_sim(s) for s in layer_outputs(model, probe)]})
    return rows


def t_run(ns):
    want = _ref_run((1,), 2, 0)
    try:
        got = ns["run_ablation"]((1,), 2, 0)
    except Exception as e:
        return True, f"raises {type(e).__name__}"
    if len(got) != len(want):
        return True, "row count"
    for a, b in zip(got, want):
        for key in ("similarity_init", "depth", "residual", "losses", "final_loss", "similarity_trained"):
            x, y = np.asarray(a[key], dtype=float), np.asarray(b[key], dtype=float)
            if x.shape != y.shape or not np.allclose(x, y, rtol=1e-5, atol=1e-6):
                return True, f"row residual={b['residual']}: {key} differs"
    return False, "same"


MORE_TESTS.update({"Block": t_block, "TinyTransformer": t_tiny, "token_similarity": t_sim,
              "train": t_train, "run_ablation": t_run})


TESTS.update(MORE_TESTS)


def main():
    bad = 0
    for w in WRONG:
        try:
            ns = load(w.source)
            if w.exercise not in ns:
                ok, detail = False, "exercise not defined"
            else:
                ok, detail = TESTS[w.exercise](ns)
        except Exception as e:
            ok, detail = False, "verify error " + repr(e)[:100]
        bad += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {w.id:50s} {w.exercise:22s} {detail}")
    print(f"{len(WRONG) - bad} of {len(WRONG)} verified wrong")


if __name__ == "__main__":
    main()
