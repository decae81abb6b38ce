"""How much of the full call's CPU time a causal tiled_attention takes, in several styles.

Lesson 07's rule "a tile counted as skipped must not be computed at all" is checked by the
CPU time of a causal call against the same call with ``causal=False``
(``grader.learner.work``; ``Exercise.work`` of tiled_attention). This script measures the
ratio for honest answers written in several styles and for answers that compute the tiles
above the diagonal and then count them as skipped, the way the check does: in this process
(as in a notebook), and from outside a sandboxed kernel (as at grading, with bubblewrap).
Run it on a quiet machine and on a busy one (``--burn 2`` adds two busy processes), and
keep the rule's limit (``Work.most``) between the two groups.

    PYTHONPATH=.:tests .venv/bin/python benchmarks/tiled_work_ratio.py [--rounds 3] [--burn 2]
"""
from __future__ import annotations

import argparse
import inspect
import multiprocessing
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

# ---- the styles (each takes float arrays, already checked)
def ref_loops(Q, K, V, bq, bk, causal=False):  # I-outer J-inner, the notebook's solution
    T_q, T_k, d_v = Q.shape[-2], K.shape[-2], V.shape[-1]
    batch = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    scale = 1 / np.sqrt(Q.shape[-1])
    out = np.zeros(batch + (T_q, d_v)); skipped = 0
    for i0 in range(0, T_q, bq):
        i1 = min(i0 + bq, T_q)
        m = np.full(batch + (i1 - i0, 1), -np.inf); s = np.zeros(batch + (i1 - i0, 1)); o = np.zeros(batch + (i1 - i0, d_v))
        for j0 in range(0, T_k, bk):
            j1 = min(j0 + bk, T_k)
            if causal and j0 > i1 - 1:
                skipped += 1; continue
            S = Q[..., i0:i1, :] @ np.swapaxes(K[..., j0:j1, :], -1, -2) * scale
            if causal:
                S = np.where(np.arange(j0, j1)[None, :] <= np.arange(i0, i1)[:, None], S, -np.inf)
            m_new = np.maximum(m, S.max(axis=-1, keepdims=True)); r = np.exp(m - m_new); p = np.exp(S - m_new)
            s = s * r + p.sum(axis=-1, keepdims=True); o = o * r + p @ V[..., j0:j1, :]; m = m_new
        out[..., i0:i1, :] = o / s
    return out, skipped

def anyway(Q, K, V, bq, bk, causal=False):  # counts the tile as skipped, computes it anyway
    T_q, T_k, d_v = Q.shape[-2], K.shape[-2], V.shape[-1]
    batch = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    scale = 1 / np.sqrt(Q.shape[-1])
    out = np.zeros(batch + (T_q, d_v)); skipped = 0
    for i0 in range(0, T_q, bq):
        i1 = min(i0 + bq, T_q)
        m = np.full(batch + (i1 - i0, 1), -np.inf); s = np.zeros(batch + (i1 - i0, 1)); o = np.zeros(batch + (i1 - i0, d_v))
        for j0 in range(0, T_k, bk):
            j1 = min(j0 + bk, T_k)
            S = Q[..., i0:i1, :] @ np.swapaxes(K[..., j0:j1, :], -1, -2) * scale
            if causal:
                if j0 > i1 - 1:
                    skipped += 1
                S = np.where(np.arange(j0, j1)[None, :] <= np.arange(i0, i1)[:, None], S, -np.inf)
            m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
            shift = np.where(np.isfinite(m_new), m_new, 0)
            r = np.exp(m - shift); p = np.exp(S - shift)
            s = s * r + p.sum(axis=-1, keepdims=True); o = o * r + p @ V[..., j0:j1, :]; m = m_new
        out[..., i0:i1, :] = o / s
    return out, skipped

def anyway_scores_only(Q, K, V, bq, bk, causal=False):  # computes S of a skipped tile then drops it
    T_q, T_k, d_v = Q.shape[-2], K.shape[-2], V.shape[-1]
    batch = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    scale = 1 / np.sqrt(Q.shape[-1])
    out = np.zeros(batch + (T_q, d_v)); skipped = 0
    for i0 in range(0, T_q, bq):
        i1 = min(i0 + bq, T_q)
        m = np.full(batch + (i1 - i0, 1), -np.inf); s = np.zeros(batch + (i1 - i0, 1)); o = np.zeros(batch + (i1 - i0, d_v))
        for j0 in range(0, T_k, bk):
            j1 = min(j0 + bk, T_k)
            S = Q[..., i0:i1, :] @ np.swapaxes(K[..., j0:j1, :], -1, -2) * scale
            if causal and j0 > i1 - 1:
                skipped += 1; continue
            if causal:
                S = np.where(np.arange(j0, j1)[None, :] <= np.arange(i0, i1)[:, None], S, -np.inf)
            m_new = np.maximum(m, S.max(axis=-1, keepdims=True)); r = np.exp(m - m_new); p = np.exp(S - m_new)
            s = s * r + p.sum(axis=-1, keepdims=True); o = o * r + p @ V[..., j0:j1, :]; m = m_new
        out[..., i0:i1, :] = o / s
    return out, skipped

def j_outer(Q, K, V, bq, bk, causal=False):  # key blocks outer, all query blocks kept
    T_q, T_k, d_v = Q.shape[-2], K.shape[-2], V.shape[-1]
    batch = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    scale = 1 / np.sqrt(Q.shape[-1])
    m = np.full(batch + (T_q, 1), -np.inf); s = np.zeros(batch + (T_q, 1)); o = np.zeros(batch + (T_q, d_v))
    skipped = 0
    starts = list(range(0, T_q, bq))
    for j0 in range(0, T_k, bk):
        j1 = min(j0 + bk, T_k)
        for i0 in starts:
            i1 = min(i0 + bq, T_q)
            if causal and j0 >= i1:
                skipped += 1; continue
            S = Q[..., i0:i1, :] @ np.swapaxes(K[..., j0:j1, :], -1, -2) * scale
            if causal and j1 - 1 > i0:
                S = np.where(np.arange(j0, j1) <= np.arange(i0, i1)[:, None], S, -np.inf)
            mo = m[..., i0:i1, :]
            mn = np.maximum(mo, S.max(-1, keepdims=True)); r = np.exp(mo - mn); p = np.exp(S - mn)
            s[..., i0:i1, :] = s[..., i0:i1, :] * r + p.sum(-1, keepdims=True)
            o[..., i0:i1, :] = o[..., i0:i1, :] * r + p @ V[..., j0:j1, :]
            m[..., i0:i1, :] = mn
    return o / s, skipped

def full_mask_first(Q, K, V, bq, bk, causal=False):  # builds the whole T×T mask once, slices it
    T_q, T_k, d_v = Q.shape[-2], K.shape[-2], V.shape[-1]
    allowed = np.tril(np.ones((T_q, T_k), dtype=bool)) if causal else None
    batch = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    out = np.empty(batch + (T_q, d_v)); skipped = 0
    for i0 in range(0, T_q, bq):
        i1 = min(i0 + bq, T_q)
        m = np.full(batch + (i1 - i0, 1), -np.inf); s = np.zeros_like(m); o = np.zeros(batch + (i1 - i0, d_v))
        for j0 in range(0, T_k, bk):
            j1 = min(j0 + bk, T_k)
            if causal and not allowed[i0:i1, j0:j1].any():
                skipped += 1; continue
            S = (Q[..., i0:i1, :] @ np.swapaxes(K[..., j0:j1, :], -1, -2)) / np.sqrt(Q.shape[-1])
            if causal:
                S[..., ~allowed[i0:i1, j0:j1]] = -np.inf
            mn = np.maximum(m, S.max(-1, keepdims=True)); r = np.exp(m - mn); p = np.exp(S - mn)
            s = s * r + p.sum(-1, keepdims=True); o = o * r + p @ V[..., j0:j1, :]; m = mn
        out[..., i0:i1, :] = o / s
    return out, skipped

def torch_style(Q, K, V, bq, bk, causal=False):
    Qt, Kt, Vt = (torch.as_tensor(np.asarray(a)) for a in (Q, K, V))
    T_q, T_k = Qt.shape[-2], Kt.shape[-2]
    scale = Qt.shape[-1] ** -0.5
    outs = []; skipped = 0
    for i0 in range(0, T_q, bq):
        i1 = min(i0 + bq, T_q)
        q = Qt[..., i0:i1, :]
        m = torch.full(q.shape[:-1] + (1,), float("-inf"), dtype=Qt.dtype); s = torch.zeros_like(m)
        o = torch.zeros(q.shape[:-1] + (Vt.shape[-1],), dtype=Qt.dtype)
        for j0 in range(0, T_k, bk):
            j1 = min(j0 + bk, T_k)
            if causal and j0 > i1 - 1:
                skipped += 1; continue
            S = q @ Kt[..., j0:j1, :].transpose(-1, -2) * scale
            if causal and j1 - 1 > i0:
                keep = torch.arange(j0, j1)[None, :] <= torch.arange(i0, i1)[:, None]
                S = S.masked_fill(~keep, float("-inf"))
            mn = torch.maximum(m, S.amax(-1, keepdim=True)); r = torch.exp(m - mn); p = torch.exp(S - mn)
            s = s * r + p.sum(-1, keepdim=True); o = o * r + p @ Vt[..., j0:j1, :]; m = mn
        outs.append(o / s)
    return torch.cat(outs, dim=-2).numpy(), skipped

def torch_anyway(Q, K, V, bq, bk, causal=False):
    Qt, Kt, Vt = (torch.as_tensor(np.asarray(a)) for a in (Q, K, V))
    T_q, T_k = Qt.shape[-2], Kt.shape[-2]
    scale = Qt.shape[-1] ** -0.5
    outs = []; skipped = 0
    for i0 in range(0, T_q, bq):
        i1 = min(i0 + bq, T_q)
        q = Qt[..., i0:i1, :]
        m = torch.full(q.shape[:-1] + (1,), float("-inf"), dtype=Qt.dtype); s = torch.zeros_like(m)
        o = torch.zeros(q.shape[:-1] + (Vt.shape[-1],), dtype=Qt.dtype)
        for j0 in range(0, T_k, bk):
            j1 = min(j0 + bk, T_k)
            S = q @ Kt[..., j0:j1, :].transpose(-1, -2) * scale
            if causal:
                skipped += j0 > i1 - 1
                keep = torch.arange(j0, j1)[None, :] <= torch.arange(i0, i1)[:, None]
                S = S.masked_fill(~keep, -1e30)
            mn = torch.maximum(m, S.amax(-1, keepdim=True)); r = torch.exp(m - mn); p = torch.exp(S - mn)
            s = s * r + p.sum(-1, keepdim=True); o = o * r + p @ Vt[..., j0:j1, :]; m = mn
        outs.append(o / s)
    return torch.cat(outs, dim=-2).numpy(), int(skipped)

def pure_python_rows(Q, K, V, bq, bk, causal=False):  # a loop over the query rows of each tile
    T_q, T_k, d_v = Q.shape[-2], K.shape[-2], V.shape[-1]
    scale = 1 / np.sqrt(Q.shape[-1])
    out = np.zeros(Q.shape[:-2] + (T_q, d_v)); skipped = 0
    for i0 in range(0, T_q, bq):
        i1 = min(i0 + bq, T_q)
        m = np.full(Q.shape[:-2] + (i1 - i0, 1), -np.inf); s = np.zeros_like(m); o = np.zeros(Q.shape[:-2] + (i1 - i0, d_v))
        for j0 in range(0, T_k, bk):
            j1 = min(j0 + bk, T_k)
            if causal and j0 > i1 - 1:
                skipped += 1; continue
            S = np.empty(Q.shape[:-2] + (i1 - i0, j1 - j0))
            for r in range(i1 - i0):
                S[..., r, :] = K[..., j0:j1, :] @ Q[..., i0 + r, :] * scale
                if causal:
                    S[..., r, max(0, i0 + r + 1 - j0):] = -np.inf
            mn = np.maximum(m, S.max(-1, keepdims=True)); rr = np.exp(m - mn); p = np.exp(S - mn)
            s = s * rr + p.sum(-1, keepdims=True); o = o * rr + p @ V[..., j0:j1, :]; m = mn
        out[..., i0:i1, :] = o / s
    return out, skipped

HONEST = [ref_loops, j_outer, full_mask_first, torch_style, pure_python_rows]
ANYWAY = [anyway, anyway_scores_only, torch_anyway]


def _as_answer(f):
    def tiled_attention(Q, K, V, block_q, block_k, causal=False):
        return f(*(np.asarray(a, dtype=float) for a in (Q, K, V)), block_q, block_k, causal)
    tiled_attention.__name__ = f.__name__
    return tiled_attention


def here(work, rounds: int) -> None:
    from grader.learner.work import measure_here

    print("In this process (time.process_time):")
    for f in HONEST + ANYWAY:
        found = [measure_here(_as_answer(f), work).ratio for _ in range(rounds)]
        print(f"  {f.__name__:20s} {' '.join(f'{r:.2f}' for r in found)}", flush=True)


def outside(work, rounds: int) -> None:
    from conftest import ROOT
    from grader.grading.notebook.bridge import RemoteSubject, Session
    from grader.grading.notebook.job import kernel_env
    from grader.grading.notebook.kernel import Kernel
    from grader.grading.notebook.sandbox import Limits, detect
    from grader.learner.shortcuts import SourceScope
    from grader.lessons import get

    source = inspect.getsource(sys.modules[__name__]).split("# ---- the styles", 1)[1]
    source = source.split("\n", 1)[1]
    source = "import numpy as np\nimport torch\n" + source.split("\n\nHONEST = ")[0]
    source += "\n" + "\n".join(f"def t_{f.__name__}(Q, K, V, block_q, block_k, causal=False):\n"
                                f"    return {f.__name__}(*(np.asarray(a, dtype=float) for a in "
                                f"(Q, K, V)), block_q, block_k, causal)" for f in HONEST + ANYWAY)
    print("From outside a sandboxed kernel (/proc, grader.grading.notebook.cpu):")
    with tempfile.TemporaryDirectory(prefix="grade-") as scratch:
        scratch = Path(scratch)
        scratch.chmod(0o711)
        limits = Limits()
        box = detect("bwrap", ROOT, [ROOT / "solutions"], scratch, limits)
        job = scratch / "job"
        (job / "in" / "work").mkdir(parents=True)
        job.chmod(0o711)
        kernel = Kernel(job, box, limits, kernel_env(str(ROOT)), 0, ("numpy", "torch"))
        kernel.start()
        try:
            run, _ = kernel.request(source, 0, time.monotonic() + 120, "none")
            assert run.status == "ok", run
            info = get("tiled_attention").info
            for f in HONEST + ANYWAY:
                subject = RemoteSubject(Session(kernel, 0, time.monotonic() + 600),
                                        f"t_{f.__name__}", info, SourceScope({}, {}), [])
                found = [subject.work(work).ratio for _ in range(rounds)]
                print(f"  {f.__name__:20s} {' '.join(f'{r:.2f}' for r in found)}", flush=True)
        finally:
            kernel.stop()


def _burn() -> None:
    while True:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="measures of each answer")
    parser.add_argument("--burn", type=int, default=0, help="busy processes to add")
    parser.add_argument("--where", choices=["here", "outside", "both"], default="both")
    args = parser.parse_args()
    from grader.lessons import get

    torch.set_num_threads(1)
    work = get("tiled_attention").work
    # One measure, not the check's attempts: what a single measure can give.
    work = type(work)(work.case, work.against, work.most, work.rule, work.found, work.rounds, 1)
    burners = [multiprocessing.Process(target=_burn, daemon=True) for _ in range(args.burn)]
    for b in burners:
        b.start()
    try:
        print(f"{work.case.note}; the rule's limit: {work.most}; median of {work.rounds} pairs")
        if args.where in ("here", "both"):
            here(work, args.rounds)
        if args.where in ("outside", "both"):
            outside(work, args.rounds)
    finally:
        for b in burners:
            b.kill()


if __name__ == "__main__":
    main()
