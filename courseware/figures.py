"""Figures the notebooks share: matrices drawn as grids of numbers, heatmaps, timings.

Every function draws on a new figure (or a given axes) and returns the figure, so a
notebook cell can show it and a test can save it.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle

HIGHLIGHT = "#f4a261"   # what is being combined
RESULT = "#2a9d8f"      # what it produces
WEIGHT = "#8ecae6"      # weights
CELL = "#f1f1f1"


def _fmt(x: float) -> str:
    return f"{x:.0f}" if float(x).is_integer() else f"{x:.2g}"


def draw_matrix(ax, M, x0: float, y0: float, *, title: str = "", colors=None, alpha=None,
                fontsize: int = 11) -> None:
    """Draw ``M`` as a grid of numbered cells with its top-left corner at ``(x0, y0)``.

    ``colors[i][j]`` (or None) fills a cell; ``alpha`` scales the fill per cell.
    """
    M = np.atleast_2d(np.asarray(M, dtype=float))
    n, m = M.shape
    for i in range(n):
        for j in range(m):
            color = colors[i][j] if colors is not None and colors[i][j] else CELL
            a = 1.0 if alpha is None else float(alpha[i][j])
            ax.add_patch(Rectangle((x0 + j, y0 - i - 1), 1, 1, facecolor=color, alpha=a,
                                   edgecolor="#555555", linewidth=0.8))
            ax.text(x0 + j + 0.5, y0 - i - 0.5, _fmt(M[i, j]), ha="center", va="center",
                    fontsize=fontsize)
    if title:
        ax.text(x0 + m / 2, y0 + 0.35, title, ha="center", va="bottom", fontsize=fontsize + 1,
                fontweight="bold")


def _paint(shape, cells, color):
    grid = [[None] * shape[1] for _ in range(shape[0])]
    for i, j in cells:
        grid[i][j] = color
    return grid


def _frame(ax, width: float, height: float) -> None:
    ax.set_xlim(-0.5, width + 0.5)
    ax.set_ylim(-height - 1.2, 1.6)
    ax.set_aspect("equal")
    ax.axis("off")


READINGS = {"dot": "The dot-product reading", "rows": "The row reading",
            "cols": "The column reading", "outer": "The outer-product reading"}


def matmul_reading(kind: str, A, B, i: int = 0, j: int = 0):
    """One picture per reading of ``C = A B``: ``"dot"``, ``"rows"``, ``"cols"`` or ``"outer"``.

    The highlighted cells show what combines into the highlighted part of C.
    """
    A, B = np.asarray(A, dtype=float), np.asarray(B, dtype=float)
    C = A @ B
    n, k = A.shape
    m = B.shape[1]
    if kind == "outer":
        return _outer_reading(A, B)
    gap = 1.6
    xa, xb, xc = 0.0, k + gap, k + gap + m + gap
    fig, ax = plt.subplots(figsize=(1.0 + 0.62 * (xc + m), 1.4 + 0.6 * max(n, k)))
    if kind == "dot":
        ca = _paint(A.shape, [(i, p) for p in range(k)], HIGHLIGHT)
        cb = _paint(B.shape, [(p, j) for p in range(k)], HIGHLIGHT)
        cc = _paint(C.shape, [(i, j)], RESULT)
        terms = " + ".join(f"{_fmt(A[i, p])}·{_fmt(B[p, j])}" for p in range(k))
        caption = f"C[{i},{j}] = row {i} of A · column {j} of B = {terms} = {_fmt(C[i, j])}"
        alpha_b = None
    elif kind == "rows":
        ca = _paint(A.shape, [(i, p) for p in range(k)], WEIGHT)
        cb = _paint(B.shape, [(p, q) for p in range(k) for q in range(m)], HIGHLIGHT)
        cc = _paint(C.shape, [(i, q) for q in range(m)], RESULT)
        w = np.abs(A[i]) / max(np.abs(A[i]).max(), 1e-12)
        alpha_b = [[0.25 + 0.75 * w[p]] * m for p in range(k)]
        terms = " + ".join(f"{_fmt(A[i, p])}·(row {p} of B)" for p in range(k))
        caption = f"row {i} of C = {terms}"
    elif kind == "cols":
        ca = _paint(A.shape, [(r, p) for r in range(n) for p in range(k)], HIGHLIGHT)
        cb = _paint(B.shape, [(p, j) for p in range(k)], WEIGHT)
        cc = _paint(C.shape, [(r, j) for r in range(n)], RESULT)
        alpha_b = None
        terms = " + ".join(f"{_fmt(B[p, j])}·(col {p} of A)" for p in range(k))
        caption = f"column {j} of C = {terms}"
    else:
        raise ValueError(f"kind must be 'dot', 'rows', 'cols' or 'outer', got {kind!r}")
    alpha_a = None
    if kind == "cols":
        w = np.abs(B[:, j]) / max(np.abs(B[:, j]).max(), 1e-12)
        alpha_a = [[0.25 + 0.75 * w[p] for p in range(k)] for _ in range(n)]
    draw_matrix(ax, A, xa, 0, title="A", colors=ca, alpha=alpha_a)
    ax.text(xa + k + gap / 2, -n / 2, "×", ha="center", va="center", fontsize=18)
    draw_matrix(ax, B, xb, 0, title="B", colors=cb, alpha=alpha_b)
    ax.text(xb + m + gap / 2, -n / 2, "=", ha="center", va="center", fontsize=18)
    draw_matrix(ax, C, xc, 0, title="C = A B", colors=cc)
    _frame(ax, xc + m, max(n, k))
    ax.text(0, -max(n, k) - 0.9, caption, fontsize=10, ha="left", va="center")
    ax.set_title(READINGS[kind], fontsize=12)
    fig.tight_layout()
    return fig


def _outer_reading(A, B):
    n, k = A.shape
    m = B.shape[1]
    width_term = max(m, 3) + 1.6
    fig, ax = plt.subplots(figsize=(1.0 + 0.62 * (width_term * (k + 1)), 1.6 + 0.6 * n))
    x = 0.0
    for p in range(k):
        term = np.outer(A[:, p], B[p, :])
        pad = (max(m, 3) - m) / 2  # room for the title over narrow terms
        draw_matrix(ax, term, x + pad, 0, title=f"A[:, {p}] ⊗ B[{p}, :]",
                    colors=_paint(term.shape, [(r, q) for r in range(n) for q in range(m)], HIGHLIGHT),
                    fontsize=10)
        x += max(m, 3)
        ax.text(x + 0.8, -n / 2, "+" if p < k - 1 else "=", ha="center", va="center", fontsize=18)
        x += 1.6
    C = A @ B
    draw_matrix(ax, C, x, 0, title="C = A B",
                colors=_paint(C.shape, [(r, q) for r in range(n) for q in range(m)], RESULT))
    _frame(ax, x + m, n)
    ax.text(0, -n - 0.9, f"C is a sum of {k} rank-1 matrices, one per column of A and matching "
            "row of B", fontsize=10, ha="left", va="center")
    ax.set_title(READINGS["outer"], fontsize=12)
    fig.tight_layout()
    return fig


def timing_plot(batch_sizes, loop_seconds, batched_seconds, title: str = ""):
    """Seconds per call against batch size, for a Python loop and one batched call."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
    left.loglog(batch_sizes, loop_seconds, "o-", label="Python loop over the batch")
    left.loglog(batch_sizes, batched_seconds, "s-", label="one batched product")
    left.set_xlabel("batch size")
    left.set_ylabel("seconds per call")
    left.legend()
    left.grid(True, which="both", alpha=0.3)
    ratio = np.asarray(loop_seconds) / np.asarray(batched_seconds)
    # The ratio grows by decades with the batch: on a log axis the small batches show too.
    right.loglog(batch_sizes, ratio, "o-", color=RESULT)
    right.set_xlabel("batch size")
    right.set_ylabel("loop time / batched time")
    right.axhline(1, color="#999999", linewidth=0.8)
    right.grid(True, which="both", alpha=0.3)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig
