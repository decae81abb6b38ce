"""Lesson 03's pictures: the printable by-hand worksheet, and the approximation's error.

``python -m courseware.worksheet`` writes the published worksheet's blank template and
answer key into ``assets/`` as PNG and PDF; ``--seed N`` writes a practice worksheet from
``new_worksheet(N)`` instead. The notebook draws the same pages inline, compares the
worksheet's attention with the real softmax, and reviews a learner's practice answers.

The page uses the layout of a by-hand exercise: each product ``C = A B`` is drawn with
``B`` above ``C`` and ``A`` to its left, so that entry ``C[i, j]`` sits where row i of A
meets column j of B.
"""
from __future__ import annotations

import argparse
import math
from fractions import Fraction
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle

from grader.reference.by_hand import (  # noqa: F401  (X, W_*: for the notebook)
    STEPS,
    W_K,
    W_Q,
    W_V,
    Worksheet,
    X,
    new_worksheet,
    published_worksheet,
)

ASSETS = Path(__file__).resolve().parent.parent / "assets"
PAGE = (11.69, 8.27)  # A4 landscape, inches

GIVEN = "#e9ecef"
COLORS = {"Q": "#fde2c8", "K": "#d3e5f5", "V": "#d8efd9", "scores": "#e6dcf2",
          "scaled": "#e6dcf2", "powers": "#f6dde6", "A": "#cfeee9", "Z": "#fff2b3"}
EDGE = "#4a4a4a"


def _text(v) -> str:
    return str(Fraction(v))


def _cell_width(M) -> float:
    """Wide enough for the longest entry (fractions like 27/32 need more room)."""
    longest = max(len(_text(v)) for v in np.asarray(M, dtype=object).flat)
    return max(1.0, 0.28 * longest + 0.3)


class _Page:
    """Matrices drawn in page units (one unit is one cell of a whole-number matrix)."""

    def __init__(self, ax, fontsize: float):
        self.ax = ax
        self.fontsize = fontsize

    def matrix(self, M, x: float, y: float, *, title: str = "", fill: str = GIVEN,
               show: bool = True, width: float | None = None, title_side: str = "top") -> tuple:
        """Draw M with its top-left corner at (x, y); return (width, height) in units."""
        M = np.asarray(M, dtype=object)
        rows, cols = M.shape
        w = width or _cell_width(M)
        for i in range(rows):
            for j in range(cols):
                self.ax.add_patch(Rectangle((x + j * w, y - i - 1), w, 1, facecolor=fill,
                                            edgecolor=EDGE, linewidth=0.7))
                if show:
                    self.ax.text(x + (j + 0.5) * w, y - i - 0.5, _text(M[i, j]), ha="center",
                                 va="center", fontsize=self.fontsize)
        self.ax.add_patch(Rectangle((x, y - rows), cols * w, rows, fill=False, edgecolor="black",
                                    linewidth=1.4))
        if title:
            if title_side == "top":
                self.ax.text(x + cols * w / 2, y + 0.25, title, ha="center", va="bottom",
                             fontsize=self.fontsize + 1, fontweight="bold")
            else:
                self.ax.text(x - 0.3, y - rows / 2, title, ha="right", va="center",
                             fontsize=self.fontsize + 1, fontweight="bold")
        return cols * w, rows

    def note(self, x, y, text, **kw):
        kw.setdefault("fontsize", self.fontsize)
        kw.setdefault("ha", "center")
        kw.setdefault("va", "center")
        self.ax.text(x, y, text, **kw)

    def arrow(self, x0, y0, x1, y1, label=""):
        self.ax.annotate("", xy=(x1, y1), xytext=(x0, y0),
                         arrowprops=dict(arrowstyle="->", color="#555555", lw=1.2))
        if label:
            self.note((x0 + x1) / 2, y0 + 0.45, label, fontsize=self.fontsize - 1, color="#333333")


def draw_worksheet(ws: Worksheet | None = None, *, answers: bool = False, title: str | None = None,
                   figsize=PAGE):
    """One page: the given matrices filled in, every other box empty (``answers=False``,
    the template) or filled with the exact answer key (``answers=True``)."""
    ws = ws or published_worksheet()
    key = ws.key
    powers = np.array([[Fraction(3) ** int(s) for s in row] for row in key["scaled"]], dtype=object)
    sums = np.array([[sum(powers[:, j], Fraction(0)) for j in range(powers.shape[1])]], dtype=object)
    fig, ax = plt.subplots(figsize=figsize)
    page = _Page(ax, fontsize=10)
    shown = answers

    # Left: the three projections, X above, each W to the left of its product.
    wx = 1.0
    x_w, x_p = 0.0, 7.2
    top = 0.0
    page.matrix(ws.X, x_p, top, title="X  (tokens are columns)")
    y = top - ws.X.shape[0] - 1.2
    for letter in "QKV":
        W = getattr(ws, f"W_{letter}")
        page.matrix(W, x_w, y, title=f"W_{letter}", title_side="left")
        page.matrix(key[letter], x_p, y, fill=COLORS[letter], show=shown, width=wx)
        page.note(x_p + 4 * wx + 0.35, y - 1.5, f"= {letter}", ha="left",
                  fontsize=page.fontsize + 1, fontweight="bold")
        y -= key[letter].shape[0] + 0.8

    # Right, top: Kᵀ Q, then floor(·/2), then 3^x with its column sums.
    ws_scores = _cell_width(key["scores"])
    x_kt = 14.6
    x_s = x_kt + 3 + 0.6
    page.matrix(key["Q"], x_s, top, title="Q", fill=COLORS["Q"], show=shown, width=ws_scores)
    y_s = top - 3 - 0.8
    page.matrix(key["K"].T, x_kt, y_s, title="Kᵀ", fill=COLORS["K"], show=shown)
    page.note(x_s + 2 * ws_scores, y_s - 4 - 0.55, "Kᵀ Q  (row i: key i, column j: query j)",
              fontsize=page.fontsize - 1)
    page.matrix(key["scores"], x_s, y_s, fill=COLORS["scores"], show=shown, width=ws_scores)
    x_f = x_s + 4 * ws_scores + 1.9
    page.arrow(x_s + 4 * ws_scores + 0.15, y_s - 2, x_f - 0.15, y_s - 2, r"$\lfloor x/2 \rfloor$")
    page.matrix(key["scaled"], x_f, y_s, title="scaled", fill=COLORS["scaled"], show=shown,
                width=ws_scores)
    x_3 = x_f + 4 * ws_scores + 1.9
    w3 = max(_cell_width(powers), _cell_width(sums))
    page.arrow(x_f + 4 * ws_scores + 0.15, y_s - 2, x_3 - 0.15, y_s - 2, r"$3^x$")
    page.matrix(powers, x_3, y_s, title=r"$\mathbf{3^{scaled}}$", fill=COLORS["powers"], show=shown, width=w3)
    page.matrix(sums, x_3, y_s - 4 - 0.25, fill=COLORS["powers"], show=shown, width=w3)
    page.note(x_3 - 0.3, y_s - 4.75, "Σ column", ha="right", fontsize=page.fontsize - 1)

    # Right, bottom: A above, V to its left, Z = V A where they meet.
    wa = max(_cell_width(key["A"]), _cell_width(key["Z"]))
    x_a = x_s
    y_a = y_s - 4 - 2.6
    page.matrix(key["A"], x_a, y_a, title=r"A = $\mathbf{3^{scaled}}$ ÷ its column's sum", fill=COLORS["A"],
                show=shown, width=wa)
    y_z = y_a - 4 - 0.6
    page.matrix(key["V"], x_kt - 1.0, y_z, title="V", fill=COLORS["V"], show=shown,
                title_side="left")
    page.matrix(key["Z"], x_a, y_z, fill=COLORS["Z"], show=shown, width=wa)
    page.note(x_a + 2 * wa, y_z - 3 - 0.55, "Z = V A  (column j of Z mixes the values with column j of A)",
              fontsize=page.fontsize - 1)

    x_steps = x_a + 4 * wa + 1.0
    steps = [
        "Steps",
        "1.  Q = W_Q X,  K = W_K X,  V = W_V X",
        "2.  copy K, turned: Kᵀ; multiply Kᵀ Q",
        r"3.  scaled = $\lfloor$score / 2$\rfloor$ (round down,",
        r"     also below zero: $\lfloor -1/2 \rfloor = -1$)",
        r"4.  raise 3 to each, add up each column",
        "5.  A = each power ÷ its column's sum",
        "6.  Z = V A: column j of Z is V times",
        "     column j of A",
    ]
    for k, line in enumerate(steps):
        page.note(x_steps, y_a - 0.2 - 0.75 * k, line, ha="left", va="top",
                  fontsize=page.fontsize - (0 if k else -1), fontweight="bold" if k == 0 else "normal")

    heading = title or f"Self-attention by hand: {ws.name}" + (" (answer key)" if answers else "")
    left = -2.2
    ax.text(left, 3.3, heading, fontsize=14, fontweight="bold", va="bottom")
    ax.text(left, 2.2, r"Tokens are columns. $\lfloor x/2 \rfloor$ stands in for $x/\sqrt{3}$ and "
            r"$3^x$ for $e^x$, so every number stays exact. Each column of A adds up to 1.",
            fontsize=10, va="bottom")
    ax.set_xlim(left, max(x_3 + 4 * w3, x_steps + 10.5) + 0.3)
    ax.set_ylim(y_z - 3 - 1.2, 4.6)
    ax.set_aspect("equal")
    ax.axis("off")
    fig.tight_layout()
    return fig


def write_assets(out: Path = ASSETS, ws: Worksheet | None = None, stem: str = "worksheet") -> list[Path]:
    """Write ``{stem}_blank`` and ``{stem}_key`` as PNG and PDF into ``out``; return the paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for kind, answers in (("blank", False), ("key", True)):
        fig = draw_worksheet(ws, answers=answers)
        for ext, extra in (("png", {"dpi": 150}), ("pdf", {"metadata": {"CreationDate": None}})):
            path = out / f"{stem}_{kind}.{ext}"
            fig.savefig(path, **extra)
            paths.append(path)
        plt.close(fig)
    return paths


# ----------------------------------------------------------------------------- the comparison

def exact_attention(scores) -> np.ndarray:
    """Real attention weights for column-convention scores: softmax(scores / √3) down
    every column, in floats."""
    S = np.asarray(scores, dtype=float) / math.sqrt(3)
    E = np.exp(S - S.max(axis=0, keepdims=True))
    return E / E.sum(axis=0, keepdims=True)


def compare_attention(A_hand, A_exact, title: str = ""):
    """The worksheet's weights and the real ones side by side, and their difference."""
    A_hand = np.asarray(A_hand, dtype=object)
    hand = A_hand.astype(float)
    exact = np.asarray(A_exact, dtype=float)
    diff = hand - exact
    fig, axes = plt.subplots(1, 3, figsize=(12.5, 4.2))
    panels = [
        (hand, "by hand: 3^floor(s/2), per column", "Blues", (0, 1), [[_text(v) for v in r] for r in A_hand]),
        (exact, "real: softmax(s/√3), per column", "Blues", (0, 1), [[f"{v:.3f}" for v in r] for r in exact]),
        (diff, "by hand − real", "RdBu_r", (-np.abs(diff).max(), np.abs(diff).max()),
         [[f"{v:+.3f}" for v in r] for r in diff]),
    ]
    for ax, (M, name, cmap, (lo, hi), labels) in zip(axes, panels):
        image = ax.imshow(M, cmap=cmap, vmin=lo, vmax=hi)
        for i, j in np.ndindex(M.shape):
            dark = abs(M[i, j] - lo) / (hi - lo + 1e-12) > 0.65 if cmap == "Blues" else abs(M[i, j]) > 0.6 * hi
            ax.text(j, i, labels[i][j], ha="center", va="center", fontsize=9,
                    color="white" if dark else "black")
        ax.set_title(name, fontsize=11)
        ax.set_xticks(range(M.shape[1]), [f"q{j + 1}" for j in range(M.shape[1])])
        ax.set_yticks(range(M.shape[0]), [f"k{i + 1}" for i in range(M.shape[0])])
        fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    worst = np.unravel_index(np.argmax(np.abs(diff)), diff.shape)
    axes[2].add_patch(Rectangle((worst[1] - 0.5, worst[0] - 0.5), 1, 1, fill=False,
                                edgecolor="black", linewidth=2))
    fig.suptitle(title or f"Largest difference {abs(diff[worst]):.3f}, at key {worst[0] + 1}, "
                 f"query {worst[1] + 1} (boxed)", fontsize=12)
    fig.tight_layout()
    return fig


def weight_ratio_figure(max_gap: int = 6):
    """How much more weight a key gets than another whose score is ``gap`` lower, in the
    real softmax and with the floor trick (which depends on whether the lower score is even)."""
    gaps = np.arange(0, max_gap + 1)
    real = np.exp(gaps / math.sqrt(3))
    even = np.array([3.0 ** (math.floor((0 + g) / 2) - math.floor(0 / 2)) for g in gaps])
    odd = np.array([3.0 ** (math.floor((1 + g) / 2) - math.floor(1 / 2)) for g in gaps])
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    fine = np.linspace(0, max_gap, 200)
    ax.semilogy(fine, np.exp(fine / math.sqrt(3)), "-", color="#2a9d8f", lw=2,
                label="real: e^(gap/√3)")
    ax.semilogy(gaps - 0.06, even, "o", color="#e76f51", ms=8, label="by hand, lower score even (0, 2, …)")
    ax.semilogy(gaps + 0.06, odd, "s", color="#264653", ms=7, label="by hand, lower score odd (1, 3, …)")
    ax.semilogy(fine, 3.0 ** (fine / 2), ":", color="#999999", label="3^(gap/2) = e^(0.549·gap)")
    ax.annotate(f"gap 1: a tie (×1) or ×3 by hand,\n×{real[1]:.2f} for real", xy=(1, real[1]),
                xytext=(2.4, 1.25), arrowprops=dict(arrowstyle="->", color="#555555"), fontsize=9)
    ax.set_yticks([1, 3, 9, 27], ["×1", "×3", "×9", "×27"])
    ax.minorticks_off()
    ax.set_xlabel("score of key a − score of key b (same query)")
    ax.set_ylabel("weight of a / weight of b")
    ax.set_xticks(gaps)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=9, loc="upper left")
    ax.set_title("The floor trick moves in steps of ×3 every 2 points; the real weights grow smoothly",
                 fontsize=10)
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------- practice

def review_answers(answers: dict, worksheet: Worksheet | None = None, label: str = "PRACTICE") -> int:
    """Print a ✓ or ✗ line (and the reason) for every step of ``answers`` (a dict like
    ``WORKSHEET``) against ``worksheet``'s key; return how many steps are right."""
    from grader.exercises.attention_by_hand import review_worksheet

    right = 0
    for review in review_worksheet(answers, worksheet, label=label):
        if review.right:
            right += 1
            print(f"✓ {review.step}: {review.message}")
        elif review.status == "missing":
            print(f"· {review.step}: not filled in yet")
        else:
            print(f"✗ {review.step}: {review.message}")
    print(f"{right} of {len(STEPS)} steps right.")
    return right


def paper_and_code(steps: dict, answers: dict) -> int:
    """Say, step by step, whether the numbers typed in ``answers`` (like ``WORKSHEET``)
    equal the ``steps`` a function computed; return how many agree."""
    from grader.exercises.attention_by_hand import NotFilledIn, Unreadable, read_matrix

    agree = 0
    for step in STEPS:
        try:
            typed = read_matrix(answers.get(step), step)
        except NotFilledIn:
            print(f"{step:>6}: not typed in yet")
            continue
        except Unreadable as exc:
            print(f"{step:>6}: could not read it ({exc})")
            continue
        computed = np.asarray(steps[step], dtype=object)
        same = typed.shape == computed.shape and all(
            Fraction(a) == Fraction(b) for a, b in zip(typed.flat, computed.flat))
        agree += same
        print(f"{step:>6}: {'paper and code agree' if same else 'paper and code DIFFER'}")
    return agree


def blank_answers() -> dict:
    """A dict with every step empty, to fill in for a practice worksheet."""
    return {step: "" for step in STEPS}


# ----------------------------------------------------------------------------- command line

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m courseware.worksheet",
        description="Write the by-hand worksheet (blank template and answer key) as PNG and PDF.",
    )
    parser.add_argument("--out", type=Path, default=ASSETS, help="folder to write into (default: assets/)")
    parser.add_argument("--seed", type=int, default=None,
                        help="a practice worksheet from new_worksheet(SEED) instead of the published one")
    args = parser.parse_args(argv)
    matplotlib.use("Agg")
    if args.seed is None:
        paths = write_assets(args.out)
    else:
        paths = write_assets(args.out, new_worksheet(args.seed), stem=f"worksheet_seed{args.seed}")
    for path in paths:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
