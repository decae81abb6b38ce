"""Figures for lesson 02: attention weights as heatmaps and bars, a temperature slider,
the variance of q·k against d_k, and the "mole" context demo.

Every drawing function makes a new figure (or draws on given axes) and returns the
figure, so a notebook cell shows it and a test can save it. The figures that turn scores
into weights take the learner's own ``softmax`` as an argument: they come after that
exercise, and this module holds no answer to it.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle

from .figures import HIGHLIGHT, RESULT, WEIGHT
from .widgets import interactive_figure

SENSE_COLORS = {"animal": "#2a9d8f", "chemistry": "#e76f51", "skin": "#6d597a"}


def _labels(prefix: str, n: int, labels=None) -> list[str]:
    return list(labels) if labels is not None else [f"{prefix}{i}" for i in range(n)]


def attention_heatmap(weights, query_labels=None, key_labels=None, *, ax=None, title: str = "",
                      annotate: bool = True, highlight_row: int | None = None):
    """Draw a ``[T_q, T_k]`` weight matrix: one row per query, one column per key."""
    W = np.asarray(weights, dtype=float)
    if W.ndim != 2:
        raise ValueError(f"weights must be one [T_q, T_k] matrix, got shape {W.shape}")
    fig = ax.figure if ax is not None else plt.figure(figsize=(0.6 * W.shape[1] + 2, 0.5 * W.shape[0] + 1.5))
    ax = ax if ax is not None else fig.add_subplot()
    image = ax.imshow(W, cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(W.shape[1]), _labels("k", W.shape[1], key_labels), rotation=0)
    ax.set_yticks(range(W.shape[0]), _labels("q", W.shape[0], query_labels))
    ax.set_xlabel("key (what is attended to)")
    ax.set_ylabel("query")
    if annotate and W.size <= 100:
        for (i, j), w in np.ndenumerate(W):
            ax.text(j, i, f"{w:.2f}", ha="center", va="center", fontsize=8,
                    color="white" if w > 0.6 else "#222222")
    if highlight_row is not None:
        ax.add_patch(Rectangle((-0.5, highlight_row - 0.5), W.shape[1], 1, fill=False,
                               edgecolor=HIGHLIGHT, linewidth=2.5))
    if title:
        ax.set_title(title, fontsize=10)
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.03, label="weight")
    return fig


def weight_bars(weights, key_labels=None, *, ax=None, title: str = "", color: str = WEIGHT,
                xlabel: str = "key (what is attended to)"):
    """One query's weights over the keys, as bars on a 0-to-1 scale."""
    w = np.asarray(weights, dtype=float)
    if w.ndim != 1:
        raise ValueError(f"weights must be one row of weights, got shape {w.shape}")
    fig = ax.figure if ax is not None else plt.figure(figsize=(0.55 * w.size + 2, 2.8))
    ax = ax if ax is not None else fig.add_subplot()
    labels = _labels("k", w.size, key_labels)
    ax.bar(range(w.size), w, color=color, edgecolor="#444444", linewidth=0.6)
    for j, value in enumerate(w):
        ax.text(j, value + 0.02, f"{value:.2f}", ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(w.size), labels)
    ax.set_ylim(0, 1.12)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("weight")
    ax.spines[["top", "right"]].set_visible(False)
    if title:
        ax.set_title(title, fontsize=10)
    return fig


# ----------------------------------------------------------------------------- temperature

def temperature_figure(scores, temperature: float = 1.0, query: int = 0, query_labels=None,
                       key_labels=None, *, softmax):
    """Heatmap of ``softmax(scores / temperature, axis=-1)`` and the weights of one query.

    ``scores`` are already divided by sqrt(d_k), so temperature 1 is standard attention;
    below 1 the weights sharpen towards the best key, above 1 they flatten towards uniform.
    ``softmax`` is the learner's own.
    """
    S = np.asarray(scores, dtype=float)
    if temperature <= 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    W = np.asarray(softmax(S / temperature, axis=-1), dtype=float)
    q_labels = _labels("q", S.shape[0], query_labels)
    k_labels = _labels("k", S.shape[1], key_labels)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10.5, 3.9), gridspec_kw={"width_ratios": [1.15, 1]})
    attention_heatmap(W, q_labels, k_labels, ax=left, highlight_row=query,
                      title=f"all weights at temperature {temperature:.2g}")
    weight_bars(W[query], k_labels, ax=right, color=RESULT,
                title=f'query "{q_labels[query]}" (row {query}): largest weight {W[query].max():.2f}')
    fig.suptitle("softmax(Q Kᵀ / (temperature · √d_k)): low temperature sharpens, high flattens",
                 fontsize=11)
    fig.tight_layout()
    return fig


def temperature_explorer(scores, query_labels=None, key_labels=None,
                         static_temperatures=(0.25, 1.0, 4.0), *, softmax):
    """A ``temperature`` slider and a ``query`` menu over :func:`temperature_figure`, with
    the learner's own ``softmax``.

    Without a widget front end it draws one figure per static temperature instead.
    ``softmax`` runs once first, so that a function not written yet raises here, in the
    cell, rather than inside the widget.
    """
    import ipywidgets as widgets

    S = np.asarray(scores, dtype=float)
    softmax(S, axis=-1)
    q_labels = _labels("q", S.shape[0], query_labels)
    controls = {
        "temperature": widgets.FloatLogSlider(
            value=1.0, base=10, min=-1.3, max=1.0, step=0.05, description="temperature",
            continuous_update=False, readout_format=".2f",
        ),
        "query": widgets.Dropdown(options=[(label, i) for i, label in enumerate(q_labels)],
                                  value=0, description="query"),
    }

    def draw(temperature, query):
        return temperature_figure(S, temperature, query, q_labels, key_labels, softmax=softmax)

    return interactive_figure(draw, controls, [{"temperature": t} for t in static_temperatures])


# ----------------------------------------------------------------------------- scale

def mean_top_weight(d_k: int, n_keys: int, divide_by: float, n_samples: int = 300, seed: int = 0,
                    *, softmax) -> float:
    """The average largest softmax weight of one query over ``n_keys`` random keys, with
    standard normal vectors of length ``d_k``, scores divided by ``divide_by``, and the
    learner's own ``softmax``. Near 1 means the softmax is almost one-hot; 1 / n_keys
    means uniform."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, 1, d_k))
    K = rng.standard_normal((n_samples, n_keys, d_k))
    scores = np.sum(q * K, axis=-1) / divide_by
    return float(np.asarray(softmax(scores, axis=-1)).max(axis=-1).mean())


def scale_figure(d_ks, variances, top_weights: dict, n_keys: int):
    """Left: variance of q·k against d_k, with the line variance = d_k.
    Right: how peaked the softmax is for each choice of divisor (``top_weights`` maps a
    label to one value per d_k)."""
    d_ks = np.asarray(d_ks, dtype=float)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    left.loglog(d_ks, d_ks, color="#999999", linewidth=1, label="variance = d_k")
    left.loglog(d_ks, variances, "o", color=RESULT, label="measured: var(q·k)")
    left.set_xlabel("d_k (length of each query and key)")
    left.set_ylabel("variance of q·k")
    left.set_title("the spread of q·k grows like d_k", fontsize=10)
    left.legend()
    left.grid(True, which="both", alpha=0.3)
    styles = ["s-", "o-", "^-", "d-"]
    for (label, values), style in zip(top_weights.items(), styles):
        right.semilogx(d_ks, values, style, label=label)
    right.axhline(1.0 / n_keys, color="#999999", linewidth=1, linestyle="--")
    right.text(d_ks[-1], 1.0 / n_keys + 0.015, f"uniform (1/{n_keys})", fontsize=8, color="#666666",
               ha="right", va="bottom")
    right.set_ylim(0, 1.05)
    right.set_xlabel("d_k")
    right.set_ylabel("average largest weight")
    right.set_title(f"how one-hot the softmax gets ({n_keys} keys)", fontsize=10)
    right.legend(fontsize=8)
    right.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------- context

def context_figure(results: dict, meanings: dict, context_points: dict):
    """The "mole" demo.

    ``results`` maps a sense to ``(tokens, weights, moved)``: the sentence's tokens, the
    weights of the ambiguous word's query over them, and where the word lands in the
    meaning plane after attention. ``meanings`` maps a sense to its direction;
    ``context_points`` maps a content word to ``(sense, point)``.
    """
    senses = list(results)
    fig = plt.figure(figsize=(12, 6.2))
    grid = fig.add_gridspec(len(senses), 2, width_ratios=[1, 1.25])
    plane = fig.add_subplot(grid[:, 0])
    for sense, direction in meanings.items():
        plane.plot([0, 1.15 * direction[0]], [0, 1.15 * direction[1]], color=SENSE_COLORS[sense],
                   alpha=0.25, linewidth=6, solid_capstyle="round")
        plane.text(*(1.3 * direction), sense, color=SENSE_COLORS[sense], ha="center", va="center",
                   fontsize=11, fontweight="bold")
    for word, (sense, point) in context_points.items():
        plane.plot(*point, "o", color=SENSE_COLORS[sense], markersize=4, alpha=0.6)
        direction = meanings[sense] / np.linalg.norm(meanings[sense])
        side = np.array([-direction[1], direction[0]])  # labels beside the line, not on it
        plane.annotate(word, point, textcoords="offset points", xytext=tuple(10 * side),
                       fontsize=8, color="#444444", va="center",
                       ha="right" if side[0] < -0.3 else ("left" if side[0] > 0.3 else "center"))
    plane.plot(0, 0, "ko", markersize=7)
    plane.annotate('"mole" alone', (0, 0), textcoords="offset points", xytext=(-8, 8), fontsize=9,
                   ha="right")
    for sense, (_, _, moved) in results.items():
        plane.annotate("", xy=moved, xytext=(0, 0),
                       arrowprops={"arrowstyle": "-|>", "color": SENSE_COLORS[sense], "linewidth": 2})
    plane.set_xlim(-1.55, 1.55)
    plane.set_ylim(-1.1, 1.5)
    plane.set_aspect("equal")
    plane.set_xticks([])
    plane.set_yticks([])
    plane.set_xlabel("meaning x (feature 0 of the embedding)")
    plane.set_ylabel("meaning y (feature 1)")
    plane.set_title('where "mole" lands after attention, in each sentence', fontsize=10)
    for row, (sense, (tokens, weights, _)) in enumerate(results.items()):
        ax = fig.add_subplot(grid[row, 1])
        weight_bars(weights, tokens, ax=ax, color=SENSE_COLORS[sense], xlabel="key")
        ax.xaxis.label.set_fontsize(9)
        ax.yaxis.label.set_fontsize(9)
        ax.set_title(f'"{" ".join(tokens)}": weights of "mole"', fontsize=9, loc="left")
        ax.tick_params(axis="x", labelsize=8)
        ax.set_yticks([0, 0.5, 1])
    fig.tight_layout()
    return fig


def similarity_vs_projection_figure(tokens, raw_weights, projected_weights, word: str):
    """One word's weights from raw embedding similarity (X Xᵀ) beside those from learned
    projections (X W_q (X W_k)ᵀ)."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 2.9), sharey=True)
    weight_bars(raw_weights, tokens, ax=left, color=HIGHLIGHT,
                title=f'"{word}" with Q = K = X (embedding similarity)')
    weight_bars(projected_weights, tokens, ax=right, color=RESULT,
                title=f'"{word}" with Q = X W_q, K = X W_k (projections)')
    for ax in (left, right):
        ax.tick_params(axis="x", labelsize=8)
    fig.tight_layout()
    return fig
