"""Lesson 03's worksheet: its given matrices, practice problems, the printable page, the
review of typed answers, and the approximation's error.

The given matrices of a worksheet (``X``, ``W_Q``, ``W_K``, ``W_V``) are the problem,
not its answers. An answer key is the dict of every step that an ``attention_by_hand``
computes from them: in a learner's notebook, the learner's own (``answer_key``); on the
instructor's side, the reference's. So this module draws, reviews and compares with a key
it is given, and computes none.

``python -m courseware.worksheet`` writes the published worksheet's blank template into
``assets/`` as PNG and PDF; ``--seed N`` writes the blank page of ``new_worksheet(N)``.

The page uses the layout of a by-hand exercise: each product ``C = A B`` is drawn with
``B`` above ``C`` and ``A`` to its left, so that entry ``C[i, j]`` sits where row i of A
meets column j of B.
"""
from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np

from grader.learner.plugins import lesson_part

_typed = lesson_part("03_attention_by_hand")  # typed answers: the lesson's learner.py
NotFilledIn, SealedKey, StepReview, Unreadable = (_typed.NotFilledIn, _typed.SealedKey,
                                                  _typed.StepReview, _typed.Unreadable)
read_matrix, review_step, same, seal_key = (_typed.read_matrix, _typed.review_step,
                                            _typed.same, _typed.seal_key)

ASSETS = Path(__file__).resolve().parent.parent / "assets"
PAGE = (11.69, 8.27)  # A4 landscape, inches

STEPS = ("Q", "K", "V", "scores", "scaled", "A", "Z")

# The published worksheet: 4 tokens of dimension 6 (the columns of X) and 3×6 weights.
# Chosen so that every step fits on paper: Q, K and V hold -1..2, the scores run from -1
# to 6, the scaled scores from -1 to 3 (powers of 3 from 1/3 to 27), and the column sums
# are 32, 16/3, 16 and 14. One score is negative (floor(-1/2) = -1), some are odd (where
# rounding and floor disagree), and two columns have scores 0 and 1 that floor merges.
X = np.array([
    [1, 1, 0, 0],
    [1, 1, 0, 0],
    [1, 0, 1, 1],
    [0, 1, 0, 0],
    [0, 0, 1, 0],
    [0, 0, 0, 1],
])
W_Q = np.array([
    [1, 0, 1, 0, 0, 0],
    [1, 0, 0, 0, 0, 1],
    [0, 0, 1, 0, 1, 0],
])
W_K = np.array([
    [0, 1, 0, 1, 0, 0],
    [0, 0, 0, 1, -1, 1],
    [0, 1, 0, 0, 1, 0],
])
W_V = np.array([
    [0, 0, 1, 0, 1, 0],
    [0, 0, 1, 0, 0, 1],
    [0, 0, 0, 0, 1, 1],
])


# ----------------------------------------------------------------------------- worksheets

@dataclass(frozen=True)
class Worksheet:
    """A by-hand problem: integer ``X`` (tokens are its columns) and weights ``W_Q``,
    ``W_K``, ``W_V``. Its answer key is not here: ``answer_key`` asks a function for it."""

    X: np.ndarray
    W_Q: np.ndarray
    W_K: np.ndarray
    W_V: np.ndarray
    seed: int | None = None

    @property
    def name(self) -> str:
        return "the published worksheet" if self.seed is None else f"practice worksheet {self.seed}"

    @property
    def given(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(X, W_Q, W_K, W_V)``: the arguments of ``attention_by_hand``."""
        return self.X, self.W_Q, self.W_K, self.W_V


def published_worksheet() -> Worksheet:
    return Worksheet(X.copy(), W_Q.copy(), W_K.copy(), W_V.copy())


# What "hand-friendly" means for new_worksheet; the tests check these over many seeds.
HAND_LIMITS = {
    "X": (0, 1),              # entries of X (2 or 3 features per token)
    "W": (-1, 1),             # entries of W_Q, W_K, W_V (two 1s per row, at most one -1)
    "QKV": (-1, 2),           # entries of Q, K and V
    "scores": (-2, 9),        # so the scaled scores stay in -1..4
    "scaled": (-1, 4),        # so the powers of 3 stay in 1/3..81
    "negative_scores": 2,     # at most this many negative scores
    "column_sum": 120,        # the largest sum of powers of 3 in a column
}


def _two_of_six(rng: np.random.Generator, ones: int) -> np.ndarray:
    row = np.zeros(6, dtype=int)
    row[rng.choice(6, size=ones, replace=False)] = 1
    return row


def _draw(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Integer X (tokens with 2 or 3 features) and weights (rows picking two features),
    sometimes with one -1 in W_Q or W_K so that a score can be negative."""
    X_new = np.stack([_two_of_six(rng, int(rng.choice([2, 3]))) for _ in range(4)], axis=1)
    W_Q_new, W_K_new, W_V_new = (np.stack([_two_of_six(rng, 2) for _ in range(3)]) for _ in range(3))
    if rng.random() < 0.5:
        W = W_Q_new if rng.random() < 0.5 else W_K_new
        i, j = int(rng.integers(3)), int(rng.integers(6))
        if W[i, j] == 0:
            W[i, j] = -1
    return X_new, W_Q_new, W_K_new, W_V_new


def _hand_friendly(X_new, W_Q_new, W_K_new, W_V_new) -> bool:
    """The limits above, checked with integer arithmetic (cheap) before any Fraction."""
    Q, K, V = W_Q_new @ X_new, W_K_new @ X_new, W_V_new @ X_new
    lo, hi = HAND_LIMITS["QKV"]
    if min(Q.min(), K.min(), V.min()) < lo or max(Q.max(), K.max(), V.max()) > hi:
        return False
    if (V == 0).all(axis=1).any() or len({tuple(c) for c in X_new.T}) < X_new.shape[1]:
        return False  # a value row of zeros, or two identical tokens
    scores = K.T @ Q
    lo, hi = HAND_LIMITS["scores"]
    if scores.min() < lo or scores.max() > hi or (scores < 0).sum() > HAND_LIMITS["negative_scores"]:
        return False
    scaled = scores // 2  # integer floor division: the floor, also for negatives
    for column in scaled.T:
        if len(set(column.tolist())) < 2:  # uniform weights: nothing to see in this column
            return False
        if sum(Fraction(3) ** int(s) for s in column) > HAND_LIMITS["column_sum"]:
            return False
    return True


def new_worksheet(seed: int) -> Worksheet:
    """A fresh practice problem like the published one (X 6×4, weights 3×6).

    The same seed gives the same problem. X holds 0s and 1s, each weight row picks two
    features (sometimes with one -1), and the problem is drawn again until every step
    stays small (``HAND_LIMITS``): scaled scores from -1 to 4, so that the powers of 3
    run from 1/3 to 81.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative whole number, got {seed!r}")
    rng = np.random.default_rng(int(seed))
    while True:  # about one draw in a few dozen passes; see test_new_worksheet_is_quick
        drawn = _draw(rng)
        if _hand_friendly(*drawn):
            return Worksheet(*drawn, seed=int(seed))


def answer_key(attention, ws: Worksheet | None = None) -> dict | None:
    """The answer key of ``ws`` (the published worksheet if None): the dict of every step
    that ``attention`` (your ``attention_by_hand``) computes from its given matrices, each
    step as an array. None, after saying so, while ``attention`` is not written yet."""
    ws = ws or published_worksheet()
    try:
        steps = attention(*ws.given)
    except NotImplementedError:
        print(f"attention_by_hand is not written yet, so there is no answer key for {ws.name} "
              f"here: the key comes from your attention_by_hand. Write it in section 2, then "
              f"run this cell again.")
        return None
    missing = [step for step in STEPS if not isinstance(steps, dict) or step not in steps]
    if missing:
        print(f"your attention_by_hand returned no {', '.join(missing)}, so there is no answer "
              f"key for {ws.name} here: its check says what it should return.")
        return None
    key = {step: np.asarray(steps[step], dtype=object) for step in STEPS}
    flat = [step for step in STEPS if key[step].ndim != 2]
    if flat:
        print(f"your attention_by_hand returned {', '.join(flat)} not as a matrix, so there is "
              f"no answer key for {ws.name} here: its check says what it should return.")
        return None
    return key


# ----------------------------------------------------------------------------- what each step is

STEP_INFO = {
    "Q": {"what": "Q = W_Q X", "parents": (), "shape_words": "one column per token (query)"},
    "K": {"what": "K = W_K X", "parents": (), "shape_words": "one column per token (key)"},
    "V": {"what": "V = W_V X", "parents": (), "shape_words": "one column per token (value)"},
    "scores": {"what": "Kᵀ Q", "parents": ("K", "Q"),
               "shape_words": "one row per key, one column per query"},
    "scaled": {"what": "floor(scores / 2)", "parents": ("scores",),
               "shape_words": "the same size as the scores"},
    "A": {"what": "A (3^scaled, each column divided by its sum)", "parents": ("scaled",),
          "shape_words": "one column of weights per query"},
    "Z": {"what": "Z = V A", "parents": ("V", "A"), "shape_words": "one column per token (output)"},
}
SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def ancestors(step: str) -> tuple[str, ...]:
    """Every step that ``step`` uses, directly or through another step."""
    found: list[str] = []
    for parent in STEP_INFO[step]["parents"]:
        for p in (*ancestors(parent), parent):
            if p not in found:
                found.append(p)
    return tuple(found)


def _text(v) -> str:
    return str(Fraction(v))


def _vec(v) -> str:
    return "(" + ", ".join(_text(x) for x in v) + ")"


def _sub(n: int) -> str:
    return str(n).translate(SUBSCRIPTS)


def _entry_story(step: str, i: int, j: int, ws: Worksheet) -> str:
    """What entry [i, j] of ``step`` is made of, with 1-based names as on paper. Numbers of
    earlier steps are placeholders (``{K:col:0}``) that the review fills from the learner's
    own steps once they are right: the guide itself holds no answer."""
    r, c = i + 1, j + 1
    if step in ("Q", "K", "V"):
        W = getattr(ws, f"W_{step}")
        return (f"It is row {r} of W_{step}, {_vec(W[i])}, times token {c} (column {c} of X), "
                f"x{_sub(c)} = {_vec(ws.X[:, j])}: multiply entry by entry and add.")
    if step == "scores":
        return (f"Row {r} of Kᵀ Q uses k{_sub(r)} = {{K:col:{i}}} (column {r} of K), and "
                f"column {c} uses q{_sub(c)} = {{Q:col:{j}}} (column {c} of Q): the entry "
                f"is k{_sub(r)} · q{_sub(c)}.")
    if step == "scaled":
        return (f"It is floor(s / 2) for the score s = {{scores:at:{i}:{j}}} in the same place: "
                f"the largest whole number at most s/2.")
    if step == "A":
        return (f"Column {c} of A comes from column {c} of the scaled scores, {{scaled:col:{j}}}: "
                f"raise 3 to each, add the {ws.X.shape[1]} powers, and divide each power by that "
                f"sum. The entry is 3^{{scaled:at:{i}:{j}}} divided by the sum.")
    return (f"It is row {r} of V, {{V:row:{i}}}, times column {c} of A (the weights of query "
            f"{c}), {{A:col:{j}}}: multiply entry by entry and add.")


def step_shapes(ws: Worksheet) -> dict[str, tuple[int, int]]:
    """The shape of every step of ``ws``, from its given matrices."""
    T = ws.X.shape[1]
    return {"Q": (ws.W_Q.shape[0], T), "K": (ws.W_K.shape[0], T), "V": (ws.W_V.shape[0], T),
            "scores": (T, T), "scaled": (T, T), "A": (T, T), "Z": (ws.W_V.shape[0], T)}


def guide(ws: Worksheet) -> dict:
    """For each step, what ``grader.learner.typed.review_step`` says about it besides the
    sealed key: what it is, the steps it comes from, why it has its shape, and for every
    entry a sentence saying what it is made of (from ``ws``'s given matrices, and from the
    learner's own earlier steps)."""
    out = {}
    for step, (rows, cols) in step_shapes(ws).items():
        info = STEP_INFO[step]
        out[step] = {
            "what": info["what"],
            "parents": list(info["parents"]),
            "ancestors": list(ancestors(step)),
            "shape_words": info["shape_words"],
            "stories": [[_entry_story(step, i, j, ws) for j in range(cols)] for i in range(rows)],
        }
        if step == "A":
            out[step]["columns_sum_to_one"] = True
    return out


# ----------------------------------------------------------------------------- the page

GIVEN = "#e9ecef"
COLORS = {"Q": "#fde2c8", "K": "#d3e5f5", "V": "#d8efd9", "scores": "#e6dcf2",
          "scaled": "#e6dcf2", "powers": "#f6dde6", "A": "#cfeee9", "Z": "#fff2b3"}
EDGE = "#4a4a4a"


def _room(chars: int) -> float:
    """The width of a cell that holds ``chars`` characters (one unit at least)."""
    return max(1.0, 0.28 * chars + 0.3)


def _cell_width(M) -> float:
    """Wide enough for the longest entry (fractions like 27/32 need more room)."""
    return _room(max(len(_text(v)) for v in np.asarray(M, dtype=object).flat))


# A blank box has room for what the published worksheet needs there: whole numbers down
# to -1, powers and sums like 16/3, weights like 27/32. A key that needs more gets more.
BLANK_ROOM = {"scores": _room(2), "powers": _room(4), "A": _room(5)}


class _Page:
    """Matrices drawn in page units (one unit is one cell of a whole-number matrix)."""

    def __init__(self, ax, fontsize: float):
        self.ax = ax
        self.fontsize = fontsize

    def matrix(self, M, x: float, y: float, *, title: str = "", fill: str = GIVEN,
               show: bool = True, width: float | None = None, title_side: str = "top") -> tuple:
        """Draw M with its top-left corner at (x, y); return (width, height) in units."""
        from matplotlib.patches import Rectangle

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


def _boxes(ws: Worksheet, key: dict | None) -> dict:
    """What each box of the page holds: the key's numbers (and the powers of 3 with their
    column sums, read from its scaled scores), or empty boxes of the same shapes."""
    if key is not None:
        boxes = {step: np.asarray(key[step], dtype=object) for step in STEPS}
        boxes["powers"] = np.array([[Fraction(3) ** int(s) for s in row]
                                    for row in boxes["scaled"]], dtype=object)
        boxes["sums"] = np.array([[sum(boxes["powers"][:, j], Fraction(0))
                                   for j in range(boxes["powers"].shape[1])]], dtype=object)
        return boxes
    T = ws.X.shape[1]
    shapes = {"Q": (ws.W_Q.shape[0], T), "K": (ws.W_K.shape[0], T), "V": (ws.W_V.shape[0], T),
              "scores": (T, T), "scaled": (T, T), "A": (T, T), "Z": (ws.W_V.shape[0], T),
              "powers": (T, T), "sums": (1, T)}
    return {name: np.zeros(shape, dtype=object) for name, shape in shapes.items()}


def draw_worksheet(ws: Worksheet | None = None, key: dict | None = None, *,
                   title: str | None = None, figsize=PAGE):
    """One page: the given matrices filled in, every other box empty (``key=None``, the
    template) or filled with the numbers of ``key`` (an answer key, see ``answer_key``)."""
    import matplotlib.pyplot as plt

    ws = ws or published_worksheet()
    shown = key is not None
    boxes = _boxes(ws, key)

    def fit(least: float, *names: str) -> float:
        return max([least] + [_cell_width(boxes[n]) for n in names]) if shown else least

    fig, ax = plt.subplots(figsize=figsize)
    page = _Page(ax, fontsize=10)

    # Left: the three projections, X above, each W to the left of its product.
    wx = 1.0
    x_w, x_p = 0.0, 7.2
    top = 0.0
    page.matrix(ws.X, x_p, top, title="X  (tokens are columns)")
    y = top - ws.X.shape[0] - 1.2
    for letter in "QKV":
        W = getattr(ws, f"W_{letter}")
        page.matrix(W, x_w, y, title=f"W_{letter}", title_side="left")
        page.matrix(boxes[letter], x_p, y, fill=COLORS[letter], show=shown, width=wx)
        page.note(x_p + 4 * wx + 0.35, y - 1.5, f"= {letter}", ha="left",
                  fontsize=page.fontsize + 1, fontweight="bold")
        y -= boxes[letter].shape[0] + 0.8

    # Right, top: Kᵀ Q, then floor(·/2), then 3^x with its column sums.
    ws_scores = fit(BLANK_ROOM["scores"], "scores")
    x_kt = 14.6
    x_s = x_kt + 3 + 0.6
    page.matrix(boxes["Q"], x_s, top, title="Q", fill=COLORS["Q"], show=shown, width=ws_scores)
    y_s = top - 3 - 0.8
    page.matrix(boxes["K"].T, x_kt, y_s, title="Kᵀ", fill=COLORS["K"], show=shown,
                width=fit(_room(2), "K"))
    page.note(x_s + 2 * ws_scores, y_s - 4 - 0.55, "Kᵀ Q  (row i: key i, column j: query j)",
              fontsize=page.fontsize - 1)
    page.matrix(boxes["scores"], x_s, y_s, fill=COLORS["scores"], show=shown, width=ws_scores)
    x_f = x_s + 4 * ws_scores + 1.9
    page.arrow(x_s + 4 * ws_scores + 0.15, y_s - 2, x_f - 0.15, y_s - 2, r"$\lfloor x/2 \rfloor$")
    page.matrix(boxes["scaled"], x_f, y_s, title="scaled", fill=COLORS["scaled"], show=shown,
                width=ws_scores)
    x_3 = x_f + 4 * ws_scores + 1.9
    w3 = fit(BLANK_ROOM["powers"], "powers", "sums")
    page.arrow(x_f + 4 * ws_scores + 0.15, y_s - 2, x_3 - 0.15, y_s - 2, r"$3^x$")
    page.matrix(boxes["powers"], x_3, y_s, title=r"$\mathbf{3^{scaled}}$", fill=COLORS["powers"],
                show=shown, width=w3)
    page.matrix(boxes["sums"], x_3, y_s - 4 - 0.25, fill=COLORS["powers"], show=shown, width=w3)
    page.note(x_3 - 0.3, y_s - 4.75, "Σ column", ha="right", fontsize=page.fontsize - 1)

    # Right, bottom: A above, V to its left, Z = V A where they meet.
    wa = fit(BLANK_ROOM["A"], "A", "Z")
    x_a = x_s
    y_a = y_s - 4 - 2.6
    page.matrix(boxes["A"], x_a, y_a, title=r"A = $\mathbf{3^{scaled}}$ ÷ its column's sum",
                fill=COLORS["A"], show=shown, width=wa)
    y_z = y_a - 4 - 0.6
    page.matrix(boxes["V"], x_kt - 1.0, y_z, title="V", fill=COLORS["V"], show=shown,
                width=fit(_room(2), "V"), title_side="left")
    page.matrix(boxes["Z"], x_a, y_z, fill=COLORS["Z"], show=shown, width=wa)
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

    heading = title or f"Self-attention by hand: {ws.name}" + (" (answer key)" if shown else "")
    left = -2.2
    top_y = 4.6
    bottom_y = y_z - 3 - 1.2
    # The heading is the axes' title, placed where it always stood (data y = 3.3).
    ax.set_title(heading, loc="left", y=(3.3 - bottom_y) / (top_y - bottom_y), pad=0,
                 fontsize=14, fontweight="bold", va="bottom")
    ax.text(left, 2.2, r"Tokens are columns. $\lfloor x/2 \rfloor$ stands in for $x/\sqrt{3}$ and "
            r"$3^x$ for $e^x$, so every number stays exact. Each column of A adds up to 1.",
            fontsize=10, va="bottom")
    ax.set_xlim(left, max(x_3 + 4 * w3, x_steps + 10.5) + 0.3)
    ax.set_ylim(bottom_y, top_y)
    ax.set_aspect("equal")
    ax.axis("off")
    fig.tight_layout()
    return fig


def save_pages(fig, out: Path, name: str) -> list[Path]:
    """Write ``fig`` as ``{name}.png`` and ``{name}.pdf`` into ``out`` (the same bytes on
    every run: the PDF carries no date), close it, and return the two paths."""
    import matplotlib.pyplot as plt

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext, extra in (("png", {"dpi": 150}), ("pdf", {"metadata": {"CreationDate": None}})):
        path = out / f"{name}.{ext}"
        fig.savefig(path, **extra)
        paths.append(path)
    plt.close(fig)
    return paths


def write_blank(out: Path = ASSETS, ws: Worksheet | None = None, stem: str = "worksheet") -> list[Path]:
    """Write the blank template ``{stem}_blank`` as PNG and PDF into ``out``."""
    return save_pages(draw_worksheet(ws), out, f"{stem}_blank")


# ----------------------------------------------------------------------------- the comparison

def exact_attention(scores) -> np.ndarray:
    """Real attention weights for column-convention scores: softmax(scores / √3) down
    every column, in floats."""
    S = np.asarray(scores, dtype=float) / math.sqrt(3)
    E = np.exp(S - S.max(axis=0, keepdims=True))
    return E / E.sum(axis=0, keepdims=True)


def compare_attention(A_hand, A_exact, title: str = ""):
    """The worksheet's weights and the real ones side by side, and their difference."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    A_hand = np.asarray(A_hand, dtype=object)
    hand = A_hand.astype(float)
    exact = np.asarray(A_exact, dtype=float)
    diff = hand - exact
    fig, axes = plt.subplots(1, 3, figsize=(12.5, 4.2))
    panels = [
        (hand, "by hand: 3^floor(s/2), per column", "Blues", (0, 1), [[_text(v) for v in r] for r in A_hand],
         "weight"),
        (exact, "real: softmax(s/√3), per column", "Blues", (0, 1), [[f"{v:.3f}" for v in r] for r in exact],
         "weight"),
        (diff, "by hand − real", "RdBu_r", (-np.abs(diff).max(), np.abs(diff).max()),
         [[f"{v:+.3f}" for v in r] for r in diff], "weight by hand − real weight"),
    ]
    for ax, (M, name, cmap, (lo, hi), labels, bar) in zip(axes, panels):
        image = ax.imshow(M, cmap=cmap, vmin=lo, vmax=hi)
        for i, j in np.ndindex(M.shape):
            dark = abs(M[i, j] - lo) / (hi - lo + 1e-12) > 0.65 if cmap == "Blues" else abs(M[i, j]) > 0.6 * hi
            ax.text(j, i, labels[i][j], ha="center", va="center", fontsize=9,
                    color="white" if dark else "black")
        ax.set_title(name, fontsize=11)
        ax.set_xticks(range(M.shape[1]), [f"q{j + 1}" for j in range(M.shape[1])])
        ax.set_yticks(range(M.shape[0]), [f"k{i + 1}" for i in range(M.shape[0])])
        ax.set_xlabel("query (column)")
        ax.set_ylabel("key (row)")
        fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label=bar)
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
    import matplotlib.pyplot as plt

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

def review_worksheet(answers, ws: Worksheet, key: dict,
                     label: str = "PRACTICE") -> list[StepReview]:
    """``grader.learner.typed.review_step`` for every step of ``answers`` (a dict like
    ``WORKSHEET``), in the worksheet's order, against ``key`` (``ws``'s answer key)."""
    notes = guide(ws)
    sealed = SealedKey(seal_key({step: key[step] for step in STEPS}, salt=label))
    return [review_step(step, answers, sealed, notes[step], (), label) for step in STEPS]


def review_answers(answers: dict, ws: Worksheet, attention, label: str = "PRACTICE") -> int:
    """Print a ✓ or ✗ line (and the reason) for every step of ``answers`` against the
    answer key that ``attention`` (your ``attention_by_hand``) computes for ``ws``; return
    how many steps are right. The review is only as right as that function: its check
    must pass first."""
    key = answer_key(attention, ws)
    if key is None:
        return 0
    right = 0
    for review in review_worksheet(answers, ws, key, label):
        if review.right:
            right += 1
            print(f"✓ {review.step}: {review.message}")
        elif review.status == _typed.Review.MISSING:
            print(f"· {review.step}: not filled in yet")
        else:
            print(f"✗ {review.step}: {review.message}")
    print(f"{right} of {len(STEPS)} steps right.")
    return right


def paper_and_code(steps: dict, answers: dict) -> int:
    """Say, step by step, whether the numbers typed in ``answers`` (like ``WORKSHEET``)
    equal the ``steps`` a function computed; return how many agree."""
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
        agreed = same(typed, np.asarray(steps[step], dtype=object))
        agree += agreed
        print(f"{step:>6}: {'paper and code agree' if agreed else 'paper and code DIFFER'}")
    return agree


def blank_answers() -> dict:
    """A dict with every step empty, to fill in for a practice worksheet."""
    return {step: "" for step in STEPS}


# ----------------------------------------------------------------------------- command line

def main(argv: list[str] | None = None) -> int:
    import matplotlib

    parser = argparse.ArgumentParser(
        prog="python -m courseware.worksheet",
        description="Write the by-hand worksheet's blank template as PNG and PDF.",
    )
    parser.add_argument("--out", type=Path, default=ASSETS, help="folder to write into (default: assets/)")
    parser.add_argument("--seed", type=int, default=None,
                        help="a practice worksheet from new_worksheet(SEED) instead of the published one")
    args = parser.parse_args(argv)
    matplotlib.use("Agg")
    if args.seed is None:
        paths = write_blank(args.out)
    else:
        paths = write_blank(args.out, new_worksheet(args.seed), stem=f"worksheet_seed{args.seed}")
    for path in paths:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
