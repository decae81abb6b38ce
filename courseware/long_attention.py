"""Lesson 07: the input checks the notebook's given lines call (the reference uses the same
ones), the experiments' measurements, and the figures.

Tokens are rows; causal means key j may be seen by query i when j <= i (lesson 04).
Every figure function returns its figure, so that a notebook shows it and a test can save
it. The measurements use ``grader.learner.env.peak_bytes`` (Python's ``tracemalloc``) for
memory and ``courseware.timing.median_seconds`` for time.
"""
from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle

from grader.learner.env import _openblas_thread_setters, grading, one_blas_thread, peak_bytes  # noqa: F401
from grader.learner.plugins import lesson_part
from grader.learner.validation import as_array, as_matrix, shape_str

from .figures import HIGHLIGHT, RESULT, WEIGHT

_one_pass = lesson_part("07_long_attention")  # the lesson's learner.py: streams read once
Once, Stream = _one_pass.Once, _one_pass.Stream

SKIPPED = "#d9d9d9"


# ----------------------------------------------------------------------------- input checks

def score_blocks(scores_blocks):
    """Each block of one row of scores, checked as it is read: a non-empty 1-D float
    array with no NaN or +inf. The blocks are read once, in order: asked for them again
    after the last one, it raises ``ReadTwice`` (a generator would silently give nothing).
    It raises ``ValueError`` at the end if there was no block at all."""
    if isinstance(scores_blocks, (str, bytes, dict)) or not hasattr(scores_blocks, "__iter__"):
        raise ValueError(f"scores_blocks must be a list of 1-D blocks of scores, got "
                         f"{type(scores_blocks).__name__}")
    if isinstance(scores_blocks, np.ndarray) and scores_blocks.ndim < 2:
        raise ValueError(f"scores_blocks must be a list of blocks, got one array of shape "
                         f"{shape_str(scores_blocks.shape)}: put it in a list to make it one block")
    return Once(_checked_blocks(scores_blocks), "the blocks of scores_blocks")


def _checked_blocks(scores_blocks):
    count = 0
    for i, block in enumerate(scores_blocks):
        b = as_array(block, f"block {i} of scores_blocks", ndim=1)
        if b.size == 0:
            raise ValueError(f"block {i} of scores_blocks is empty: every block holds at least "
                             f"one score")
        bad = "NaN" if np.isnan(b).any() else "+inf" if np.isposinf(b).any() else ""
        if bad:
            raise ValueError(f"block {i} of scores_blocks holds {bad}, which is not a score a "
                             f"softmax can weigh")
        count += 1
        yield b
    if not count:
        raise ValueError("scores_blocks holds no block: there is no score to take the softmax of")


def stream_of(blocks):
    """``blocks`` (a list of blocks of scores) as the check hands them to
    ``online_softmax_stats``: a stream, which gives each block once, in order."""
    return Stream(blocks, "scores_blocks")


def _as_given(x, arr: np.ndarray) -> np.ndarray:
    """``arr``, which ``as_array`` made of ``x``; or ``x`` itself when ``arr`` is only
    NumPy's plain view of it: an array the check hands over to be read once (whose reads
    are noted, lesson 07's ``learner.py``) stays what it is."""
    if isinstance(x, np.ndarray) and x is not arr and arr.dtype == x.dtype and \
            arr.shape == x.shape and np.may_share_memory(arr, x):
        return x
    return arr


def one_query(q, K, V):
    """``q: [d_k]``, ``K: [T_k, d_k]``, ``V: [T_k, d_v]`` as float arrays (NumPy arrays
    are not copied), or a ``ValueError`` that names what does not fit."""
    q = as_array(q, "q", ndim=1)
    K = _as_given(K, as_array(K, "K", ndim=2))
    V = _as_given(V, as_array(V, "V", ndim=2))
    if K.shape[1] != q.shape[0]:
        raise ValueError(f"q has d_k = {q.shape[0]} features but the keys in K (shape "
                         f"{shape_str(K.shape)}) have {K.shape[1]}")
    if K.shape[0] != V.shape[0]:
        raise ValueError(f"K and V must have one row per key (the same T_k), got K of shape "
                         f"{shape_str(K.shape)} and V of shape {shape_str(V.shape)}")
    if K.shape[0] == 0:
        raise ValueError(f"K has no keys (shape {shape_str(K.shape)}): there is nothing to "
                         f"attend to")
    return q, K, V


def tile_inputs(Q, K, V, causal):
    """``(Q, K, V, batch)`` for tiled attention: ``Q: [..., T_q, d_k]``, ``K: [..., T_k,
    d_k]``, ``V: [..., T_k, d_v]`` as float arrays, and the broadcast batch shape. With
    ``causal=True`` there must be as many queries as keys."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last axis (d_k), got Q of shape "
                         f"{shape_str(Q.shape)} and K of shape {shape_str(K.shape)}")
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V must have one row per key (the same T_k), got K of shape "
                         f"{shape_str(K.shape)} and V of shape {shape_str(V.shape)}")
    if K.shape[-2] == 0 or Q.shape[-2] == 0:
        raise ValueError(f"Q and K need at least one row each, got Q of shape "
                         f"{shape_str(Q.shape)} and K of shape {shape_str(K.shape)}")
    try:
        batch = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    except ValueError:
        raise ValueError(f"the batch axes of Q {shape_str(Q.shape)}, K {shape_str(K.shape)} and "
                         f"V {shape_str(V.shape)} do not broadcast") from None
    if not isinstance(causal, (bool, np.bool_)):
        raise ValueError(f"causal must be True or False, got {causal!r}")
    if causal and Q.shape[-2] != K.shape[-2]:
        raise ValueError(f"causal=True needs as many queries as keys (query i sees keys 0..i), "
                         f"got T_q = {Q.shape[-2]} and T_k = {K.shape[-2]}")
    return Q, K, V, batch


def _rows(x, name: str, what: str) -> np.ndarray:
    x = as_array(x, name)
    if x.ndim == 1:
        x = x[None, :]
    if x.ndim != 2:
        raise ValueError(f"{name} must be one {what} [d] or a block of them [n, d], got shape "
                         f"{shape_str(x.shape)}")
    if x.size == 0:
        raise ValueError(f"{name} has no entries (shape {shape_str(x.shape)})")
    return x


def key_value_rows(k, v):
    """``k`` and ``v`` as blocks of rows ``[n, d_k]`` and ``[n, d_v]``: one key ``[d_k]``
    becomes a block of one. ``ValueError`` unless there is one value per key."""
    k, v = _rows(k, "k", "key"), _rows(v, "v", "value")
    if k.shape[0] != v.shape[0]:
        raise ValueError(f"k holds {k.shape[0]} key(s) but v holds {v.shape[0]} value(s): the "
                         f"cache keeps one value per key")
    return k, v


def decode_inputs(x_t, cache, W_q, W_k, W_v):
    """``(x_t, W_q, W_k, W_v)`` for a decoding step, checked: ``x_t`` one token
    ``[d_model]`` or a block of new tokens ``[n, d_model]``, the projections ``[d_model,
    d_k]``, ``[d_model, d_k]``, ``[d_model, d_v]``, and a cache with ``append``,
    ``keys``, ``values`` and ``len``."""
    x = as_array(x_t, "x_t")
    if x.ndim not in (1, 2):
        raise ValueError(f"x_t must be one token [d_model] or a block of new tokens "
                         f"[n, d_model], got shape {shape_str(x.shape)}")
    W_q, W_k, W_v = as_matrix(W_q, "W_q"), as_matrix(W_k, "W_k"), as_matrix(W_v, "W_v")
    for name, W in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v)):
        if W.shape[0] != x.shape[-1]:
            raise ValueError(f"x_t has d_model = {x.shape[-1]} features but {name} has shape "
                             f"{shape_str(W.shape)} ({W.shape[0]} rows)")
    if W_q.shape[1] != W_k.shape[1]:
        raise ValueError(f"queries and keys must have the same width d_k, got W_q of shape "
                         f"{shape_str(W_q.shape)} and W_k of shape {shape_str(W_k.shape)}")
    if not all(hasattr(type(cache), name) for name in ("append", "keys", "values", "__len__")):
        raise ValueError(f"cache must be a KVCache (with append, keys, values and len), got "
                         f"{type(cache).__name__}")
    return x, W_q, W_k, W_v


# ----------------------------------------------------------------------------- budget

@dataclass(frozen=True)
class Budget:
    """How big the experiments are: the sizes of the memory sweep and its block size, the
    sequence lengths whose skipped tiles are counted, the positions at which a generated
    token is timed, the model width for the timing, and repeats per timing."""

    memory_sizes: tuple[int, ...]
    memory_block: int
    tile_sizes: tuple[int, ...]
    positions: tuple[int, ...]
    d_model: int
    repeat: int
    label: str


FULL = Budget(memory_sizes=(64, 128, 256, 512, 1024), memory_block=128,
              tile_sizes=(64, 256, 1024, 4096),
              positions=(16, 64, 128, 256, 512, 768, 1024, 1536), d_model=64, repeat=5,
              label="full")
REDUCED = Budget(memory_sizes=(32, 64, 128), memory_block=32, tile_sizes=(64, 256, 1024),
                 positions=(16, 64, 128, 256), d_model=32, repeat=3,
                 label="reduced (nbgrader is running this notebook)")


def budget() -> Budget:
    return REDUCED if grading() else FULL


def megabytes(n_bytes: float) -> str:
    """``1.5e6`` -> ``"1.4 MiB"``, with KiB and GiB where they read better."""
    for unit, size in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if n_bytes >= size:
            return f"{n_bytes / size:,.1f} {unit}"
    return f"{n_bytes:.0f} B"


# ----------------------------------------------------------------------------- the online softmax

def stats_after_each_block(online_stats, blocks) -> list[tuple[float, float]]:
    """``online_stats`` (the learner's function) on the first 1, 2, ... blocks: the running
    maximum and sum after each block."""
    return [tuple(online_stats(blocks[: k + 1])) for k in range(len(blocks))]


def running_stats_figure(blocks, trace, title: str = ""):
    """The scores, block by block, with the running maximum after each block (left), and
    the running sum (right). Where a block raises the maximum, the sum can drop: every
    earlier term was divided by exp(m_new - m_old)."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.4))
    x = 0
    for b, block in enumerate(blocks):
        xs = np.arange(x, x + len(block))
        left.axvspan(x - 0.5, x + len(block) - 0.5, color=WEIGHT if b % 2 else "#eef6fa",
                     alpha=0.6, linewidth=0)
        left.plot(xs, block, "o", color="#333333", markersize=4)
        m = trace[b][0]
        left.plot([x - 0.5, x + len(block) - 0.5], [m, m], color=HIGHLIGHT, linewidth=2.5,
                  label="running maximum after the block" if b == 0 else None)
        x += len(block)
    left.set_xlabel("score index (shaded bands: blocks)")
    left.set_ylabel("score")
    left.legend(fontsize=8, loc="lower left", bbox_to_anchor=(0, 1.0), frameon=False)
    sums = [s for _, s in trace]
    right.plot(range(1, len(sums) + 1), sums, "o-", color=RESULT,
               label="running sum after the block")
    rose = [b for b in range(1, len(trace)) if trace[b][0] > trace[b - 1][0]]
    right.plot([b + 1 for b in rose], [sums[b] for b in rose], "o", color=HIGHLIGHT, markersize=9,
               label="a block that raised the maximum")
    right.legend(fontsize=8, loc="lower left", bbox_to_anchor=(0, 1.0), frameon=False, ncol=2)
    right.set_xlabel("blocks read")
    right.set_ylabel("running sum s")
    right.set_xticks(range(1, len(sums) + 1))
    for ax in (left, right):
        ax.grid(True, alpha=0.3)
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------- memory

def working_memory(fn, Q, K, V) -> int:
    """The most memory ``fn(Q, K, V, out)`` holds at once beyond its inputs and the output
    array ``out`` it writes into (both made before the measurement), in bytes."""
    out = np.empty(Q.shape[:-1] + V.shape[-1:])
    _, peak = peak_bytes(fn, Q, K, V, out)
    return peak


def memory_sweep(methods: dict, sizes, d: int = 8, seed: int = 0) -> dict:
    """``working_memory`` of each of ``methods`` (name -> fn(Q, K, V, out)) for T queries
    against T keys, T in ``sizes``; also the largest gap between their outputs."""
    rng = np.random.default_rng(seed)
    result = {"T": list(sizes), **{name: [] for name in methods}, "largest difference": 0.0}
    for T in sizes:
        Q, K, V = (rng.normal(size=(T, d)) for _ in range(3))
        outs = []
        for name, fn in methods.items():
            result[name].append(working_memory(fn, Q, K, V))
            out = np.empty((T, d))
            fn(Q, K, V, out)
            outs.append(out)
        gap = max(float(np.abs(o - outs[0]).max()) for o in outs)
        result["largest difference"] = max(result["largest difference"], gap)
    return result


def _ticks_at(ax, values) -> None:
    """Label a log x axis at the measured values, as plain numbers (16, 64, 256), not as
    powers of ten (2×10¹, 6×10¹), and without the minor labels in between."""
    from matplotlib.ticker import NullFormatter

    values = [int(v) if float(v).is_integer() else v for v in values]
    ax.set_xticks(values, [str(v) for v in values])
    ax.xaxis.set_minor_formatter(NullFormatter())


def memory_figure(sweep: dict, title: str = ""):
    """Peak working memory against T, on log-log axes, with a T² guide line."""
    fig, ax = plt.subplots(figsize=(7, 4))
    T = np.asarray(sweep["T"], dtype=float)
    names = [k for k in sweep if k not in ("T", "largest difference")]
    for name, marker, color in zip(names, "os^", (HIGHLIGHT, RESULT, "#6a4c93")):
        ax.loglog(T, np.maximum(sweep[name], 1), marker + "-", color=color, label=name)
    first = np.asarray(sweep[names[0]], dtype=float)
    guide = first[-1] * (T / T[-1]) ** 2
    ax.loglog(T, guide, ":", color="#888888", label="∝ T² (guide)")
    _ticks_at(ax, sweep["T"])
    ax.set_xlabel("T (queries = keys)")
    ax.set_ylabel("peak working memory (bytes)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=9)
    if title:
        ax.set_title(title, fontsize=11)
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------- tiles

def tile_kinds(T: int, block_q: int, block_k: int, causal: bool = True) -> np.ndarray:
    """One entry per tile (rows: blocks of queries, columns: blocks of keys): "skip" for a
    causal tile whose keys all lie in the future of all its queries, "mask" for one that
    the diagonal runs through, "full" for the others."""
    rows, cols = -(-T // block_q), -(-T // block_k)
    kinds = np.full((rows, cols), "full", dtype=object)
    if not causal:
        return kinds
    for r in range(rows):
        queries = np.arange(r * block_q, min((r + 1) * block_q, T))
        for c in range(cols):
            keys = np.arange(c * block_k, min((c + 1) * block_k, T))
            future = keys[None, :] > queries[:, None]
            kinds[r, c] = "skip" if future.all() else "mask" if future.any() else "full"
    return kinds


def tile_figure(T: int, block_q: int, block_k: int, causal: bool = True, ax=None):
    """The T × T grid of (query, key) pairs cut into tiles: computed tiles in colour, the
    future pairs inside a diagonal tile hatched, skipped tiles grey with a cross."""
    kinds = tile_kinds(T, block_q, block_k, causal)
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(4.2, 4.2))
    colour = {"full": RESULT, "mask": WEIGHT, "skip": SKIPPED}
    for (r, c), kind in np.ndenumerate(kinds):
        i0, j0 = r * block_q, c * block_k
        h, w = min(block_q, T - i0), min(block_k, T - j0)
        ax.add_patch(Rectangle((j0, i0), w, h, facecolor=colour[kind], edgecolor="white",
                               linewidth=2.5))
        if kind == "skip":
            ax.plot([j0 + 0.2, j0 + w - 0.2], [i0 + 0.2, i0 + h - 0.2], color="#9a9a9a", lw=1)
            ax.plot([j0 + 0.2, j0 + w - 0.2], [i0 + h - 0.2, i0 + 0.2], color="#9a9a9a", lw=1)
        elif kind == "mask":
            for i in range(i0, i0 + h):
                for j in range(j0, j0 + w):
                    if j > i:
                        ax.add_patch(Rectangle((j, i), 1, 1, facecolor="white", alpha=0.75,
                                               hatch="///", edgecolor="#9a9a9a", linewidth=0))
    ax.set_xlim(0, T)
    ax.set_ylim(T, 0)
    ax.set_aspect("equal")
    ax.set_xticks(range(0, T + 1, block_k))
    ax.set_yticks(range(0, T + 1, block_q))
    ax.tick_params(labelsize=8)
    ax.set_xlabel("key position j", fontsize=9)
    ax.set_ylabel("query position i", fontsize=9)
    skipped = int((kinds == "skip").sum())
    ax.set_title(f"{block_q}×{block_k} tiles: {kinds.size - skipped} computed, {skipped} skipped",
                 fontsize=10)
    if own:
        fig.tight_layout()
        return fig
    return ax.figure


def tiles_figure(T: int, shapes, causal: bool = True):
    """:func:`tile_figure` for each ``(block_q, block_k)`` of ``shapes``, side by side."""
    from matplotlib.patches import Patch

    fig, axes = plt.subplots(1, len(shapes), figsize=(3.9 * len(shapes), 4.4), squeeze=False)
    for ax, (bq, bk) in zip(axes[0], shapes):
        tile_figure(T, bq, bk, causal, ax=ax)
    fig.legend(handles=[Patch(facecolor=RESULT, label="computed, no mask needed"),
                        Patch(facecolor=WEIGHT, label="computed, masked inside"),
                        Patch(facecolor="white", edgecolor="#9a9a9a", hatch="///",
                              label="a masked pair (j > i)"),
                        Patch(facecolor=SKIPPED, label="skipped: every key after every query")],
               loc="lower center", ncol=4, fontsize=9, frameon=False)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


# ----------------------------------------------------------------------------- time per token

def time_per_token(step, cache_of, without_cache, positions, d_model: int, repeat: int = 5,
                   seed: int = 0) -> dict:
    """Seconds to produce the output of the token at each position t of ``positions``,
    for one layer with random weights ``[d_model, d_model]``:

    * with a cache: ``step(X[t], cache, W_q, W_k, W_v)``, where ``cache`` is a fresh
      ``cache_of(X[:t], W_q, W_k, W_v)``, made before the clock starts;
    * without: ``without_cache(X[:t + 1], W_q, W_k, W_v)``, which recomputes everything
      for positions 0..t and returns the output of position t.

    Each time is the median of ``repeat`` runs, with NumPy's products on one thread
    (:func:`one_blas_thread`). Also returns the largest difference between the two
    outputs (they must agree).
    """
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(max(positions) + 1, d_model))
    W = [rng.normal(size=(d_model, d_model)) / np.sqrt(d_model) for _ in range(3)]
    result = {"t": list(positions), "with the cache": [], "without a cache": [],
              "largest difference": 0.0}
    with one_blas_thread():
        _time_each(step, cache_of, without_cache, positions, X, W, repeat, result)
    return result


def _time_each(step, cache_of, without_cache, positions, X, W, repeat, result) -> None:
    import statistics
    import time

    for t in positions:
        runs_with, runs_without = [], []
        for _ in range(repeat):
            cache = cache_of(X[:t], *W)
            start = time.perf_counter()
            mine = step(X[t], cache, *W)
            runs_with.append(time.perf_counter() - start)
            start = time.perf_counter()
            theirs = without_cache(X[: t + 1], *W)
            runs_without.append(time.perf_counter() - start)
        result["with the cache"].append(statistics.median(runs_with))
        result["without a cache"].append(statistics.median(runs_without))
        gap = float(np.abs(np.asarray(mine) - np.asarray(theirs)).max())
        result["largest difference"] = max(result["largest difference"], gap)


def timing_figure(timing: dict, title: str = ""):
    """Milliseconds per generated token against its position t, on log-log axes: the times
    span decades, and on a linear axis the cached line would lie flat at 0."""
    fig, ax = plt.subplots(figsize=(7, 3.8))
    t = timing["t"]
    ax.loglog(t, 1e3 * np.asarray(timing["without a cache"]), "o-", color=HIGHLIGHT,
              label="without a cache: everything recomputed")
    ax.loglog(t, 1e3 * np.asarray(timing["with the cache"]), "s-", color=RESULT,
              label="with the KV cache: one new token")
    _ticks_at(ax, t)
    ax.set_xlabel("position t of the generated token (log scale)")
    ax.set_ylabel("milliseconds per token (log scale)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=9)
    if title:
        ax.set_title(title, fontsize=11)
    fig.tight_layout()
    return fig
