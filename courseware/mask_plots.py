"""Pictures for lesson 04: boolean masks as grids, and attention weights as heatmaps with
the masked cells greyed out.

Rows are queries and columns are keys (the row convention) unless the axis names passed
in say otherwise. Every function returns its figure, so a notebook shows it and a test
can save it.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap

from .figures import HIGHLIGHT, RESULT

ALLOWED = RESULT
BLOCKED = "#e6e6e6"
PAD = "<pad>"


def _grid(ax, rows: int, cols: int) -> None:
    ax.set_xticks(np.arange(-0.5, cols, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, rows, 1), minor=True)
    ax.grid(which="minor", color="white", linewidth=2)
    ax.tick_params(which="minor", length=0)
    for side in ax.spines.values():
        side.set_visible(False)


def _labels(ax, row_labels, col_labels, row_name: str, col_name: str) -> None:
    ax.set_xticks(range(len(col_labels)), col_labels)
    ax.set_yticks(range(len(row_labels)), row_labels)
    ax.xaxis.tick_top()
    ax.xaxis.set_label_position("top")
    ax.set_xlabel(col_name, fontsize=9)
    ax.set_ylabel(row_name, fontsize=9)
    ax.tick_params(labelsize=9, length=0)


def draw_mask(ax, mask, row_labels, col_labels, title: str = "", *, row_name: str = "query",
              col_name: str = "key") -> None:
    """A boolean mask as a grid: coloured ✓ where attention is allowed, grey × where not."""
    mask = np.asarray(mask, dtype=bool)
    ax.imshow(mask.astype(int), cmap=ListedColormap([BLOCKED, ALLOWED]), vmin=0, vmax=1)
    for (i, j), ok in np.ndenumerate(mask):
        ax.text(j, i, "✓" if ok else "×", ha="center", va="center", fontsize=12,
                color="white" if ok else "#8a8a8a", fontweight="bold")
    _labels(ax, row_labels, col_labels, row_name, col_name)
    _grid(ax, *mask.shape)
    if title:
        ax.set_title(title, fontsize=10, pad=8)


def draw_weights(ax, weights, mask, row_labels, col_labels, title: str = "", *,
                 row_name: str = "query", col_name: str = "key") -> None:
    """Attention weights as a heatmap with their values; masked cells are grey and hatched."""
    weights = np.asarray(weights, dtype=float)
    mask = np.broadcast_to(np.asarray(mask, dtype=bool), weights.shape)
    shown = np.where(mask, weights, np.nan)
    cmap = plt.get_cmap("Blues").copy()
    cmap.set_bad(BLOCKED)
    ax.imshow(shown, cmap=cmap, vmin=0, vmax=1)
    for (i, j), ok in np.ndenumerate(mask):
        if ok:
            w = weights[i, j]
            ax.text(j, i, f"{w:.2f}", ha="center", va="center", fontsize=9,
                    color="white" if w > 0.6 else "black")
        else:
            ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///",
                                       edgecolor="#b5b5b5", linewidth=0))
            ax.text(j, i, f"{weights[i, j]:.2g}" if weights[i, j] else "0", ha="center",
                    va="center", fontsize=8, color="#8a8a8a")
    _labels(ax, row_labels, col_labels, row_name, col_name)
    _grid(ax, *weights.shape)
    if title:
        ax.set_title(title, fontsize=10, pad=8)


def padded_tokens(sentences: list[list[str]], T: int) -> list[list[str]]:
    """Each sentence's words followed by ``<pad>`` up to length T."""
    return [list(words) + [PAD] * (T - len(words)) for words in sentences]


def batch_masks(columns: dict[str, np.ndarray], sentences: list[list[str]]):
    """One row of panels per sentence, one column per mask.

    ``columns`` maps a title to a ``[B, T, T]`` mask (a ``[T, T]`` mask is shared by the
    batch, a ``[B, 1, T]`` one by every query of a sentence).
    """
    B = len(sentences)
    T = max(np.shape(m)[-1] for m in columns.values())
    tokens = padded_tokens(sentences, T)
    fig, axes = plt.subplots(B, len(columns), figsize=(2.9 * len(columns), 2.7 * B),
                             squeeze=False)
    for b in range(B):
        for c, (title, mask) in enumerate(columns.items()):
            full = np.broadcast_to(np.asarray(mask, dtype=bool), (B, T, T))[b]
            draw_mask(axes[b, c], full, tokens[b], tokens[b],
                      f"{title}\nsentence {b}" if b == 0 else f"sentence {b}")
    fig.tight_layout()
    return fig


def batch_attention(weights, mask, sentences: list[list[str]], title: str = ""):
    """The attention weights of every sentence of a padded batch, side by side."""
    weights = np.asarray(weights, dtype=float)
    B, T = weights.shape[0], weights.shape[-1]
    mask = np.broadcast_to(np.asarray(mask, dtype=bool), weights.shape)
    tokens = padded_tokens(sentences, T)
    fig, axes = plt.subplots(1, B, figsize=(3.3 * B, 3.2), squeeze=False)
    for b in range(B):
        draw_weights(axes[0, b], weights[b], mask[b], tokens[b], tokens[b], f"sentence {b}")
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig


def _fill_label(f: float) -> str:
    if not np.isfinite(f):
        return "−∞"
    if abs(f) >= 1e4:
        return f"−1e{int(round(np.log10(abs(f))))}" if f < 0 else f"1e{int(round(np.log10(f)))}"
    return f"{f:g}".replace("-", "−")


def fill_value_leak(fills, leaked, empty_row: dict[str, np.ndarray]):
    """Left: the weight a masked key still gets for each fill value (log scale).
    Right: the weights of a row with no allowed key under each way of masking it."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10.5, 3.6),
                                      gridspec_kw={"width_ratios": [1.15, 1]})
    labels = [_fill_label(f) for f in fills]
    leaked = np.asarray(leaked, dtype=float)
    floor = 1e-20
    heights = np.maximum(leaked, floor)
    colors = [HIGHLIGHT if v > 0 else ALLOWED for v in leaked]
    left.bar(labels, heights, color=colors)
    left.set_yscale("log")
    left.set_ylim(floor / 3, 2)
    left.set_xlabel("value written into the masked score")
    left.set_ylabel("weight on the masked key")
    for x, v in enumerate(leaked):
        left.text(x, max(v, floor) * 1.6, f"{v:.1e}" if v > 0 else "exactly 0", ha="center",
                  va="bottom", fontsize=8)
    left.set_title("One masked key in a row of ordinary scores", fontsize=10)

    names = list(empty_row)
    values = np.array([empty_row[n] for n in names], dtype=float)
    cmap = plt.get_cmap("Blues").copy()
    cmap.set_bad("#f6d5d1")                      # NaN cells: pale red
    im = right.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=0, vmax=1, aspect="auto")
    for (i, j), v in np.ndenumerate(values):
        right.text(j, i, "NaN" if np.isnan(v) else f"{v:.2f}", ha="center", va="center",
                   fontsize=9, color="#c0392b" if np.isnan(v) else "black")
    right.set_yticks(range(len(names)), names, fontsize=9)
    right.set_xticks(range(values.shape[1]), [f"key {j}" for j in range(values.shape[1])],
                     fontsize=9)
    right.set_xlabel("key (every one masked)")
    right.set_ylabel("how the row is masked")
    right.set_title("A row where every key is masked", fontsize=10)
    fig.colorbar(im, ax=right, fraction=0.046, pad=0.04, label="weight")
    fig.tight_layout()
    return fig


def conventions(row_mask, col_mask, tokens: list[str]):
    """The causal mask with queries as rows (this course) and with queries as columns
    (lesson 03 and the column-convention pictures)."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(7.2, 3.3))
    draw_mask(a, row_mask, tokens, tokens, "row convention (this course)\nentry [i, j]: query i, key j")
    draw_mask(b, col_mask, tokens, tokens, "column convention (lesson 03)\nentry [i, j]: key i, query j",
              row_name="key", col_name="query")
    fig.tight_layout()
    return fig


def weight_matrix(W, tokens: list[str], title: str = ""):
    """One weight matrix as a heatmap, zeros above the diagonal shown as masked."""
    W = np.asarray(W, dtype=float)
    fig, ax = plt.subplots(figsize=(3.8, 3.4))
    draw_weights(ax, W, W > 0, tokens, tokens, title, row_name="output row i",
                 col_name="row j of X")
    fig.tight_layout()
    return fig
