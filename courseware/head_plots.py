"""Pictures of attention heads: how features are split into heads, per-head heatmaps,
attention as lines between tokens, a head picker, and the low-rank value maps.

Every drawing function makes a new figure and returns it (a test can save it; a notebook
cell shows it). Weights may be torch tensors or NumPy arrays.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .figures import CELL, draw_matrix
from .widgets import interactive_figure

HEAD_COLORS = ("#8ecae6", "#f4a261", "#90be6d", "#e9c46a", "#cdb4db", "#ffafcc", "#a3c4f3",
               "#b5e48c")
LINE_COLORS = ("#1d3557", "#c1440e", "#2d6a4f", "#7f5539", "#5a189a", "#9d0208", "#023e8a",
               "#386641")


def _np(x) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.asarray(x, dtype=float)


# ----------------------------------------------------------------------------- splitting

def split_picture(x, n_heads: int):
    """One sequence ``x [T, d_model]`` cut into heads two ways: ``split_heads`` (reshape to
    ``[T, h, d_head]``, then transpose) and a reshape straight to ``[h, T, d_head]``.

    Cells are coloured by the head their feature belongs to; next to each row of a head
    is the token it came from, in red when it is not the token of that row. With
    ``x[t, j] = 10·t + j`` the numbers say the same thing.
    """
    x = _np(x)
    tokens, d_model = x.shape
    d_head = x.shape[1] // n_heads
    # Cell (head, t, j) of each head's [T, d_head] matrix, and the (row, column) of x it is
    # read from: by the definition of a head, or as the n-th number of x in memory order.
    head, t, j = np.meshgrid(np.arange(n_heads), np.arange(tokens), np.arange(d_head),
                             indexing="ij")
    sources_of = (
        ("split_heads: reshape, then transpose", (t, head * d_head + j)),
        ("reshape straight to [h, T, d_head]", divmod((head * tokens + t) * d_head + j, d_model)),
    )
    versions = [(label, x[rows, cols], cols // d_head, rows) for label, (rows, cols) in sources_of]
    gap, block = 2.3, n_heads * (d_head + 2.3)
    width = d_model + 1.5 + 2 * block + 0.5
    fig, ax = plt.subplots(figsize=(0.55 * width + 0.6, 0.55 * (tokens + 3.6)))
    colors = [[HEAD_COLORS[j // d_head] for j in range(d_model)] for _ in range(tokens)]
    draw_matrix(ax, x, 0, 0, title=f"x [T={tokens}, d_model={d_model}]", colors=colors, fontsize=10)
    x0 = d_model + 1.5
    for label, values, owners, sources in versions:
        ax.text(x0, 1.55, label, fontsize=10, fontweight="bold", va="bottom")
        for head in range(n_heads):
            cells = [[HEAD_COLORS[owners[head, t, j]] for j in range(d_head)] for t in range(tokens)]
            draw_matrix(ax, values[head], x0, 0, title=f"head {head}", colors=cells, fontsize=10)
            for t in range(tokens):
                came_from = int(sources[head, t, 0])
                right = came_from == t and bool((owners[head, t] == head).all())
                ax.text(x0 + d_head + 0.12, -t - 0.5, f"t{came_from}", fontsize=8, va="center",
                        color="#333333" if right else "#c1121f",
                        fontweight="normal" if right else "bold")
            x0 += d_head + gap
    ax.set_xlim(-0.3, x0 - gap + 1.2)
    ax.set_ylim(-tokens - 1.3, 2.4)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(f"One sequence cut into {n_heads} heads, two ways", fontsize=11)
    ax.text(0, -tokens - 0.8, "colour: the head a feature belongs to.   t0, t1, ...: the token a "
            "row came from (red: not the token, or not the head, this row stands for)",
            fontsize=9, va="center")
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------- heatmaps

def _heatmap(ax, weights, row_labels, col_labels, title: str, annotate: bool = True) -> None:
    w = _np(weights)
    ax.imshow(w, cmap="Blues", vmin=0.0, vmax=1.0)
    ax.set_xticks(range(w.shape[1]), col_labels, fontsize=9)
    ax.set_yticks(range(w.shape[0]), row_labels, fontsize=9)
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("key", fontsize=9)
    ax.set_ylabel("query", fontsize=9)
    if annotate and w.size <= 100:
        for i in range(w.shape[0]):
            for j in range(w.shape[1]):
                if w[i, j] >= 0.005:
                    ax.text(j, i, f"{w[i, j]:.2f}".lstrip("0"), ha="center", va="center", fontsize=7,
                            color="white" if w[i, j] > 0.6 else "#222222")


def head_heatmaps(maps: dict, labels: dict, title: str = ""):
    """A grid of heatmaps: one row per layer, one column per head.

    ``maps[layer]`` is ``[h, T_q, T_k]`` (one example); ``labels[layer]`` is
    ``(query_labels, key_labels)``.
    """
    layers = list(maps)
    n_heads = max(_np(m).shape[0] for m in maps.values())
    fig, axes = plt.subplots(len(layers), n_heads, figsize=(3.3 * n_heads + 0.6, 3.2 * len(layers)),
                             squeeze=False)
    for row, layer in enumerate(layers):
        w = _np(maps[layer])
        rows, cols = labels[layer]
        for head in range(n_heads):
            ax = axes[row, head]
            if head < w.shape[0]:
                _heatmap(ax, w[head], rows, cols, f"{layer}\nhead {head}")
            else:
                ax.axis("off")
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------- lines

def draw_lines(ax, weights, query_labels, key_labels, color: str = LINE_COLORS[0],
               min_weight: float = 0.03, query_title: str = "queries", key_title: str = "keys") -> None:
    """Attention as lines between tokens (the picture of seed 001): keys on top, queries
    below, one line per (query, key) pair whose width and darkness grow with the weight."""
    w = _np(weights)
    t_q, t_k = w.shape
    span = max(t_q, t_k) - 1 or 1
    xq = np.linspace(0, span, t_q) if t_q > 1 else np.array([span / 2])
    xk = np.linspace(0, span, t_k) if t_k > 1 else np.array([span / 2])
    for i in range(t_q):
        for j in range(t_k):
            if w[i, j] >= min_weight:
                ax.plot([xq[i], xk[j]], [0.12, 0.88], color=color, linewidth=0.4 + 5.5 * w[i, j],
                        alpha=min(1.0, 0.15 + w[i, j]), solid_capstyle="round")
    box = dict(boxstyle="round,pad=0.3", facecolor=CELL, edgecolor="#888888")
    for j, label in enumerate(key_labels):
        ax.text(xk[j], 0.93, label, ha="center", va="bottom", fontsize=10, bbox=box)
    for i, label in enumerate(query_labels):
        ax.text(xq[i], 0.07, label, ha="center", va="top", fontsize=10, bbox=box)
    ax.text(-0.6, 0.93, key_title, ha="right", va="bottom", fontsize=9, style="italic")
    ax.text(-0.6, 0.07, query_title, ha="right", va="top", fontsize=9, style="italic")
    ax.set_xlim(-1.9, span + 0.6)
    ax.set_ylim(-0.12, 1.12)
    ax.axis("off")


def attention_lines(weights, query_labels, key_labels, title: str = "", head: int = 0, **kwargs):
    """One head's attention ``[T_q, T_k]`` as lines between tokens, on a new figure."""
    w = _np(weights)
    fig, ax = plt.subplots(figsize=(1.0 + 0.75 * max(w.shape) + 1.4, 2.6))
    draw_lines(ax, w, query_labels, key_labels, color=LINE_COLORS[head % len(LINE_COLORS)], **kwargs)
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


def lines_per_head(maps: dict, labels: dict, titles: dict | None = None):
    """Lines between tokens for every layer (rows) and head (columns) of one example."""
    layers = list(maps)
    n_heads = max(_np(m).shape[0] for m in maps.values())
    widest = max(max(_np(m).shape[1:]) for m in maps.values())
    fig, axes = plt.subplots(len(layers), n_heads, squeeze=False,
                             figsize=(n_heads * (0.7 * widest + 1.6), 2.5 * len(layers)))
    for row, layer in enumerate(layers):
        w = _np(maps[layer])
        rows, cols = labels[layer]
        for head in range(n_heads):
            ax = axes[row, head]
            if head >= w.shape[0]:
                ax.axis("off")
                continue
            names = (titles or {}).get(layer, ("queries", "keys"))
            draw_lines(ax, w[head], rows, cols, color=LINE_COLORS[head % len(LINE_COLORS)],
                       query_title=names[0], key_title=names[1])
            ax.set_title(f"{layer}, head {head}", fontsize=10)
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------- picker

def head_picker(maps: dict, labels, static: list[dict] | None = None, titles: dict | None = None):
    """Choose a layer, a head and an example; see its heatmap and its lines side by side.

    ``maps[layer]`` is ``[N, h, T_q, T_k]`` for N examples; ``labels(layer, example)``
    returns ``(query_labels, key_labels)``. Without a widget front end (nbconvert,
    nbgrader), the settings in ``static`` are drawn instead (see
    ``courseware.widgets.interactive_figure``).
    """
    import ipywidgets as widgets

    layers = list(maps)
    n_heads = _np(maps[layers[0]]).shape[1]
    n_examples = _np(maps[layers[0]]).shape[0]

    def draw(layer, head, example):
        w = _np(maps[layer])[example, head]
        rows, cols = labels(layer, example)
        fig, (left, right) = plt.subplots(1, 2, figsize=(10.5, 3.4),
                                          gridspec_kw={"width_ratios": [1, 1.9]})
        _heatmap(left, w, rows, cols, f"{layer}, head {head}")
        names = (titles or {}).get(layer, ("queries", "keys"))
        draw_lines(right, w, rows, cols, color=LINE_COLORS[head % len(LINE_COLORS)],
                   query_title=names[0], key_title=names[1])
        right.set_title(f"test sequence {example}", fontsize=10)
        fig.tight_layout()
        return fig

    controls = {
        "layer": widgets.Dropdown(options=layers, value=layers[0], description="layer"),
        "head": widgets.Dropdown(options=list(range(n_heads)), value=0, description="head"),
        "example": widgets.IntSlider(value=0, min=0, max=n_examples - 1, description="example"),
    }
    return interactive_figure(draw, controls, static)


# ----------------------------------------------------------------------------- low rank

def value_spectra(singular_values: dict, d_head: int):
    """Singular values of value-to-output maps, on a log scale. ``singular_values`` maps
    a label (``"head 0"``, ..., ``"all heads"``) to a 1-D array, largest first."""
    labels = list(singular_values)
    fig, ax = plt.subplots(figsize=(8.5, 3.4))
    width = 0.8 / len(labels)
    for k, label in enumerate(labels):
        s = np.maximum(_np(singular_values[label]), 1e-12)
        color = HEAD_COLORS[k % len(HEAD_COLORS)] if label.startswith("head") else "#555555"
        ax.bar(np.arange(len(s)) + k * width, s, width, label=label, color=color,
               edgecolor="#333333", linewidth=0.4)
    ax.set_yscale("log")
    ax.set_ylim(1e-9, None)
    edge = d_head - 0.5 + 0.4 - width / 2  # the gap between group d_head and the next
    ax.axvline(edge, color="#c1121f", linestyle="--", linewidth=1,
               label=f"after d_head = {d_head} values")
    ax.set_xlabel("singular value number")
    ax.set_ylabel("singular value (log scale)")
    ax.set_xticks(np.arange(len(s)) + 0.4 - width / 2, range(1, len(s) + 1))
    ax.set_title("Each head's value-to-output map (down @ up) has rank d_head; their sum has "
                 "full rank", fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


def loss_curve(losses, title: str = "training loss"):
    fig, ax = plt.subplots(figsize=(6.5, 2.8))
    ax.semilogy(np.arange(1, len(losses) + 1), losses, color=LINE_COLORS[0], linewidth=1)
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats, log scale)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return fig
