"""Checks that every answer of set_d_05_08 differs from an independent computation.
Run with PYTHONPATH set to the repository."""
import math
import os
import sys
import traceback

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import set_d_05_08 as S

torch.set_num_threads(1)


def differs(a, b, tol=1e-5):
    """True when a and b differ (shape, type or values)."""
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) != len(b) or any(differs(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, torch.Tensor):
        a = a.detach().double().numpy()
    if isinstance(b, torch.Tensor):
        b = b.detach().double().numpy()
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        return True
    return not np.allclose(a, b, rtol=tol, atol=tol, equal_nan=False)


def run_or_raise(fn):
    """(True, value) or (False, None) when it raises."""
    try:
        return True, fn()
    except Exception:
        return False, None


# ----------------------------------------------------------------------------- lesson 05 references

def ref_split(x, h):
    B, T, d = x.shape
    dh = d // h
    out = torch.empty(B, h, T, dh)
    for i in range(h):
        out[:, i] = x[:, :, i * dh:(i + 1) * dh]
    return out


def ref_merge(x):
    return torch.cat([x[:, i] for i in range(x.shape[1])], dim=-1)


def ref_mha(Wq, bq, Wk, bk, Wv, bv, Wo, bo, h, query, key, value, mask=None):
    """Per head, per batch, with explicit loops (mask: [B, T_k] bool, True = attend)."""
    B, Tq, d = query.shape
    Tk = key.shape[1]
    dh = d // h
    Q, K, V = query @ Wq.T + bq, key @ Wk.T + bk, value @ Wv.T + bv
    heads, maps = [], []
    for i in range(h):
        f = slice(i * dh, (i + 1) * dh)
        s = Q[..., f] @ K[..., f].transpose(1, 2) / math.sqrt(dh)
        if mask is not None:
            s = torch.where(mask[:, None, :], s, torch.tensor(float("-inf")))
        w = torch.exp(s - s.max(-1, keepdim=True).values)
        w = w / w.sum(-1, keepdim=True)
        heads.append(w @ V[..., f])
        maps.append(w)
    return torch.cat(heads, -1) @ Wo.T + bo, torch.stack(maps, 1)


def mha_params(m):
    return (m.w_q.weight, m.w_q.bias, m.w_k.weight, m.w_k.bias, m.w_v.weight, m.w_v.bias,
            m.w_o.weight, m.w_o.bias)


def t_split(ns):
    x = torch.arange(2 * 3 * 4).reshape(2, 3, 4).float()
    ok, y = run_or_raise(lambda: ns["split_heads"](x, 2))
    return (not ok) or differs(y, ref_split(x, 2))


def t_merge(ns):
    x = torch.randn(1, 2, 3, 2)
    ok, y = run_or_raise(lambda: ns["merge_heads"](x))
    return (not ok) or differs(y, ref_merge(x))


def t_mha(ns):
    torch.manual_seed(0)
    m = ns["MultiHeadAttention"](4, 2)
    q, k, v = torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 4)
    mask = torch.tensor([[True] * 5, [True, True, True, False, False]])
    with torch.no_grad():
        out = m(q, k, v, mask=mask)
        ref = ref_mha(*mha_params(m), 2, q, k, v, mask)
    return differs(out, ref)


def torch_mha():
    torch.manual_seed(1)
    theirs = nn.MultiheadAttention(4, 2, batch_first=True)
    with torch.no_grad():
        theirs.in_proj_bias.normal_(0, 0.3)
        theirs.out_proj.bias.normal_(0, 0.3)
    return theirs


def t_copy(ns):
    theirs = torch_mha()
    ours = ns["copy_from_torch"](ns["MultiHeadAttention"](4, 2), theirs)
    q, k = torch.randn(2, 3, 4), torch.randn(2, 5, 4)
    with torch.no_grad():
        a = ours(q, k, k)
        b = theirs(q, k, k, average_attn_weights=False)
    return differs(a, b)


def t_hobo(ns):
    torch.manual_seed(3)
    m = ns["MultiHeadAttention"](4, 2)
    x = torch.randn(2, 3, 4)
    with torch.no_grad():
        a = ns["heads_one_by_one"](x, m)
        b = ref_mha(*mha_params(m), 2, x, x, x)
    return differs(a, b)


def t_count(ns):
    d, h = 4, 2
    truth = sum(p.numel() for p in nn.MultiheadAttention(d, h).parameters())
    return ns["mha_parameter_count"](d, h) != truth


def t_vdu(ns):
    torch.manual_seed(5)
    m = ns["MultiHeadAttention"](4, 2)
    bad = False
    for head in (0, 1):
        dh = 2
        # independent: value-down maps a row x to head's value features; up maps head's output to w_o's output
        E = torch.eye(4)
        down = torch.stack([m.w_v(E[r]) - m.w_v.bias for r in range(4)])[:, head * dh:(head + 1) * dh]
        Eh = torch.zeros(dh, 4)
        Eh[:, head * dh:(head + 1) * dh] = torch.eye(dh)
        up = m.w_o(Eh) - m.w_o.bias
        bad = bad or differs(ns["value_down_up"](m, head), (down, up))
    return bad


TESTS = {"split_heads": t_split, "merge_heads": t_merge, "MultiHeadAttention": t_mha,
         "copy_from_torch": t_copy, "heads_one_by_one": t_hobo,
         "mha_parameter_count": t_count, "value_down_up": t_vdu}

CONTROLS = [
    ("split_heads", S.H05 + S.SPLIT_OK), ("merge_heads", S.H05 + S.SPLIT_OK),
    ("MultiHeadAttention", S.MHA_OK_SOURCE),
    ("copy_from_torch", S.copy_source(S.COPY_OK_BODY)),
    ("heads_one_by_one", S.hobo_source(S.HOBO_OK_BODY)),
    ("mha_parameter_count", S.COUNT_HEAD + "    return 4 * (d_model * d_model + d_model)\n"),
    ("value_down_up", S.vdu_source(S.VDU_OK_BODY)),
]


# ----------------------------------------------------------------------------- lesson 06 references
import copy
import torch.nn.functional as F
from courseware.ablation import MODEL, TASK, LEARNING_RATE


def ref_attn(sd, p, h):
    d = h.shape[-1]
    n_heads = MODEL["n_heads"]
    W, b = sd[p + "in_proj_weight"], sd[p + "in_proj_bias"]
    q, k, v = (h @ W[i * d:(i + 1) * d].T + b[i * d:(i + 1) * d] for i in range(3))
    dh = d // n_heads
    outs = []
    for i in range(n_heads):
        f = slice(i * dh, (i + 1) * dh)
        w = torch.softmax(q[..., f] @ k[..., f].transpose(1, 2) / math.sqrt(dh), -1)
        outs.append(w @ v[..., f])
    return torch.cat(outs, -1) @ sd[p + "out_proj.weight"].T + sd[p + "out_proj.bias"]


def ref_block(sd, p, x, residual):
    d = x.shape[-1]
    ln = lambda t, n: F.layer_norm(t, (d,), sd[p + n + ".weight"], sd[p + n + ".bias"])
    mlp = lambda t: F.gelu(t @ sd[p + "mlp.0.weight"].T + sd[p + "mlp.0.bias"]) @ sd[p + "mlp.2.weight"].T + sd[p + "mlp.2.bias"]
    a = ref_attn(sd, p + "attn.", ln(x, "ln1"))
    x = x + a if residual else a
    m = mlp(ln(x, "ln2"))
    return x + m if residual else m


def randomize(module):
    with torch.no_grad():
        for p in module.parameters():
            p.normal_(0, 0.5)
    return module


def t_block(ns):
    bad = False
    for residual in (True, False):
        torch.manual_seed(0)
        blk = randomize(ns["Block"](MODEL["d_model"], MODEL["n_heads"], MODEL["d_ff"], residual))
        x = torch.randn(2, 3, MODEL["d_model"]) * 2 + 1
        with torch.no_grad():
            bad = bad or differs(blk(x), ref_block(blk.state_dict(), "", x, residual))
    return bad


def ref_tiny(sd, tokens, n_layers, residual):
    T = tokens.shape[1]
    x = sd["tok_emb.weight"][tokens] + sd["pos_emb.weight"][torch.arange(T)]
    for i in range(n_layers):
        x = ref_block(sd, f"blocks.{i}.", x, residual)
    x = F.layer_norm(x, (x.shape[-1],), sd["ln_f.weight"], sd["ln_f.bias"])
    return x @ sd["head.weight"].T + sd["head.bias"]


def t_tiny(ns):
    bad = False
    for residual in (True, False):
        torch.manual_seed(0)
        # a state_dict with every parameter random and every block different
        ctrl = {}
        exec(S.tiny_source(), ctrl)
        src = randomize(ctrl["TinyTransformer"](**MODEL, n_layers=2, residual=residual))
        sd = {k: v.clone() for k, v in src.state_dict().items()}
        model = ns["TinyTransformer"](**MODEL, n_layers=2, residual=residual)
        model.load_state_dict(sd)
        tokens = torch.tensor([[3, 1, 4, 1, 5], [2, 7, 0, 6, 6]])
        with torch.no_grad():
            bad = bad or differs(model(tokens), ref_tiny(sd, tokens, 2, residual))
    return bad


def ref_sim(h):
    h = np.asarray(h, dtype=float).reshape(-1, *h.shape[-2:])
    vals = []
    for seq in h:
        T = len(seq)
        tot = 0.0
        for i in range(T):
            for j in range(T):
                if i != j:
                    tot += seq[i] @ seq[j] / np.linalg.norm(seq[i]) / np.linalg.norm(seq[j])
        vals.append(tot / (T * (T - 1)))
    return float(np.mean(vals))


def t_sim(ns):
    cases = [torch.tensor([[[1.0, 0.0], [0.0, 1.0]]]), torch.tensor([[[1.0, 0.0], [1.0, 1.0]]]),
             torch.tensor([[[1.0, 2.0], [1.0, 2.0]]]), torch.randn(3, 4, 5), torch.randn(2, 2, 3, 4)]
    for h in cases:
        ok, y = run_or_raise(lambda: ns["token_similarity"](h))
        if not ok or type(y) is not float or abs(y - ref_sim(h.numpy())) > 1e-6:
            return True
    return False


def small_model():
    torch.manual_seed(7)
    return nn.Sequential(nn.Embedding(8, 6), nn.Linear(6, 8)).double()


def ref_train(model, steps, seed):
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    out = []
    for _ in range(steps):
        tok, tgt = TASK.sample(g)
        lg = model(tok)
        loss = F.cross_entropy(lg.flatten(0, 1), tgt.flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
        out.append(float(loss))
    return out


def t_train(ns):
    ref = ref_train(small_model(), 5, 3)
    torch.manual_seed(123)   # the global generator is elsewhere
    got = ns["train"](small_model(), TASK, 5, 3)
    return differs(got, ref, tol=1e-9)


def t_run(ns):
    ctrl = {}
    exec(S.run_source(S.RUN_OK_BODY), ctrl)
    ref = ctrl["run_ablation"]([1], 12, 0)
    got = ns["run_ablation"]([1], 12, 0)
    if len(got) != len(ref):
        return True
    for a, b in zip(got, ref):
        if a["depth"] != b["depth"] or a["residual"] != b["residual"]:
            return True
        for key in ("losses", "final_loss", "similarity_init", "similarity_trained"):
            if differs(a[key], b[key], tol=1e-6):
                return True
    return False


TESTS.update({"Block": t_block, "TinyTransformer": t_tiny, "token_similarity": t_sim,
              "train": t_train, "run_ablation": t_run})
CONTROLS += [
    ("Block", S.block_source(S.BLOCK_OK_BODY)), ("TinyTransformer", S.tiny_source()),
    ("token_similarity", S.sim_source(S.SIM_OK_BODY)), ("train", S.train_source(S.TRAIN_OK_BODY)),
]


# ----------------------------------------------------------------------------- lesson 07 references

def ref_attention(Q, K, V, causal=False):
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if causal:
        T = S.shape[-1]
        S = np.where(np.tril(np.ones((T, T), dtype=bool)), S, -np.inf)
    W = np.exp(S - S.max(-1, keepdims=True))
    return (W / W.sum(-1, keepdims=True)) @ V


def t_oss(ns):
    cases = [[np.array([0.0]), np.array([2.0])], [np.array([2.0]), np.array([0.0])],
             [np.array([1.0, 2.0])], [np.array([-3.0, -1.0])],
             [np.array([1.0]), np.array([2.0])], [np.array([0.5, -1, 3]), np.array([4.0]), np.array([-2.0, 1])]]
    for blocks in cases:
        ok, got = run_or_raise(lambda: ns["online_softmax_stats"](list(blocks)))
        row = np.concatenate(blocks)
        if not ok or differs(got, (row.max(), np.exp(row - row.max()).sum()), tol=1e-12):
            return True
    return False


def t_aop(ns):
    rng = np.random.default_rng(0)
    q, K, V = rng.normal(size=4), rng.normal(size=(5, 4)), rng.normal(size=(5, 3))
    K[3] = 3 * q       # a large score in a later block
    truth = ref_attention(q[None], K, V)[0]
    for block in (1, 2, 3, 5, 7):
        ok, got = run_or_raise(lambda: ns["attention_one_pass"](q, K, V, block))
        if not ok or differs(got, truth, tol=1e-10):
            return True
    return False


def t_tiled(ns):
    rng = np.random.default_rng(1)
    Q, K, V = rng.normal(size=(3, 2, 12, 4)) * 2
    for bq, bk in [(4, 4), (3, 2), (3, 4), (5, 7), (12, 12)]:
        for causal in (False, True):
            ok, got = run_or_raise(lambda: ns["tiled_attention"](Q, K, V, bq, bk, causal))
            if not ok:
                return True
            out, skipped = got
            n_skip = 0
            if causal:
                for i0 in range(0, 12, bq):
                    for j0 in range(0, 12, bk):
                        n_skip += j0 > min(i0 + bq, 12) - 1
            if differs(out, ref_attention(Q, K, V, causal), tol=1e-10) or skipped != n_skip:
                return True
    return False


def t_kv(ns):
    rng = np.random.default_rng(2)
    blocks = [(rng.normal(size=2), rng.normal(size=1)), (rng.normal(size=(3, 2)), rng.normal(size=(3, 1))),
              (rng.normal(size=2), rng.normal(size=1))]
    for _ in range(2):     # two caches, one after the other
        cache = ns["KVCache"]()
        ks, vs = [], []
        for k, v in blocks:
            cache.append(k, v)
            ks.append(np.atleast_2d(k))
            vs.append(np.atleast_2d(v))
            if len(cache) != sum(len(a) for a in ks):
                return True
            if differs(cache.keys, np.concatenate(ks), 1e-12) or differs(cache.values, np.concatenate(vs), 1e-12):
                return True
    return False


def t_decode(ns):
    rng = np.random.default_rng(3)
    W_q, W_k, W_v = rng.normal(size=(3, 6, 4))
    X = rng.normal(size=(8, 6))
    truth = ref_attention(X @ W_q, X @ W_k, X @ W_v, causal=True)
    # prompt of 3 into an empty cache, then tokens 3 and 4 one at a time, then a block of 3
    cache = ns["KVCache"]()
    pieces = []
    for part in (X[:3], X[3], X[4], X[5:8]):
        ok, out = run_or_raise(lambda: ns["decode_step"](part, cache, W_q, W_k, W_v))
        if not ok:
            return True
        pieces.append(np.atleast_2d(out))
    if differs(np.concatenate(pieces), truth, tol=1e-10):
        return True
    # also: a cache already holding positions, and one new token
    cache = ns["KVCache"]()
    cache.append(X[:3] @ W_k, X[:3] @ W_v)
    ok, out = run_or_raise(lambda: ns["decode_step"](X[3], cache, W_q, W_k, W_v))
    return (not ok) or differs(out, truth[3], tol=1e-10)


TESTS.update({"online_softmax_stats": t_oss, "attention_one_pass": t_aop, "tiled_attention": t_tiled,
              "KVCache": t_kv, "decode_step": t_decode})
CONTROLS += [
    ("online_softmax_stats", S.OSS_HEAD + S.OSS_OK_BODY), ("attention_one_pass", S.AOP_HEAD + S.AOP_OK_BODY),
    ("tiled_attention", S.TILE_HEAD + S.TILE_OK_BODY), ("KVCache", S.KV_OK),
    ("decode_step", S.dec_source(S.DEC_OK_BODY)),
]


# ----------------------------------------------------------------------------- lesson 08 references

def ref_pe(T, d):
    PE = np.zeros((T, d))
    for t in range(T):
        for i in range(d // 2):
            ang = t / 10000.0 ** (2 * i / d)
            PE[t, 2 * i], PE[t, 2 * i + 1] = math.sin(ang), math.cos(ang)
    return PE


def t_sin(ns):
    for T, d in [(1, 2), (2, 4), (5, 8), (0, 4)]:
        ok, got = run_or_raise(lambda: ns["sinusoidal_positions"](T, d))
        if not ok or differs(got, ref_pe(T, d), tol=1e-12):
            return True
    return False


def ref_rope(x, p, base=10000.0):
    x = np.asarray(x, dtype=float)
    d = x.shape[-1]
    freq = base ** (-np.arange(0, d, 2) / d)
    z = (x[..., 0::2] + 1j * x[..., 1::2]) * np.exp(1j * np.outer(p, freq))
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = z.real, z.imag
    return out


def t_rope(ns):
    rng = np.random.default_rng(4)
    cases = [(np.array([[1.0, 0.0]]), [1], 10000.0), (np.array([[1.0, 2.0, 3.0, 4.0]]), [1], 100.0),
             (rng.normal(size=(2, 4, 6)), [5, 0, -3, 17], 10000.0), (rng.normal(size=(1, 4)), [5], 10000.0)]
    for x, p, base in cases:
        keep = x.copy()
        ok, got = run_or_raise(lambda: ns["rope"](x, p, base))
        if not ok or differs(got, ref_rope(keep, p, base), tol=1e-12) or not np.array_equal(x, keep):
            return True
    return False


def ref_scores(Q, K, pq, pk, base=10000.0):
    rq, rk = ref_rope(Q, pq, base), ref_rope(K, pk, base)
    return np.einsum("...qd,...kd->...qk", rq, rk) / np.sqrt(Q.shape[-1])


def t_rs(ns):
    rng = np.random.default_rng(5)
    q1 = rng.normal(size=(1, 4))
    cases = [(rng.normal(size=(2, 4)), rng.normal(size=(2, 4)), [5, 6], [0, 1], 10000.0),
             (rng.normal(size=(1, 4)), rng.normal(size=(1, 4)), [3], [0], 100.0),
             (rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), [0, 1, 2], [4, 3, 2, 1, 0], 10000.0),
             (q1, q1, [3], [3], 10000.0)]
    for Q, K, pq, pk, base in cases:
        ok, got = run_or_raise(lambda: ns["rope_scores"](Q, K, pq, pk, base))
        if not ok or differs(got, ref_scores(Q, K, pq, pk, base), tol=1e-12):
            return True
    return False


TESTS.update({"sinusoidal_positions": t_sin, "rope": t_rope, "rope_scores": t_rs})
CONTROLS += [("sinusoidal_positions", S.SIN_HEAD + S.SIN_OK_BODY), ("rope", S.ROPE_OK_SOURCE),
             ("rope_scores", S.rs_source(S.RS_OK_BODY))]


# ----------------------------------------------------------------------------- main

exercise_lessons = {}


def main():
    only = sys.argv[1:]
    ids = set()
    n_ok = n_fail = 0
    for w in S.WRONG:
        if only and not any(w.id.startswith(o) for o in only):
            continue
        problems = []
        if w.id in ids:
            problems.append("duplicate id")
        ids.add(w.id)
        ns = {"__name__": "answer_" + w.id.replace("-", "_")}
        try:
            exec(compile(w.source, w.id, "exec"), ns)
            if w.exercise not in ns:
                problems.append("does not define " + w.exercise)
            else:
                torch.manual_seed(0)
                np.random.seed(0)
                if not TESTS[w.exercise](ns):
                    problems.append("agrees with the reference")
        except Exception as exc:
            problems.append("test crashed: " + type(exc).__name__ + ": " + str(exc).splitlines()[0][:120])
        if problems:
            n_fail += 1
            print(f"FAIL {w.id}: {'; '.join(problems)}")
        else:
            n_ok += 1
            print(f"ok   {w.id}")
    print(f"{n_ok} ok, {n_fail} FAIL")
    for exercise, source in CONTROLS:
        if only and not any(o.split("-")[1] in exercise_lessons.get(exercise, "") for o in only):
            continue
        ns = {"__name__": "control"}
        exec(source, ns)
        torch.manual_seed(0)
        np.random.seed(0)
        print(("control ok   " if not TESTS[exercise](ns) else "control BROKEN ") + exercise)


if __name__ == "__main__":
    main()
