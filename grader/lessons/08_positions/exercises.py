"""Lesson 08 exercises: the sinusoidal table, RoPE, and RoPE's scores. The cases let every
mistake show itself: at least two feature pairs (a wrong frequency or the halves convention
shows only from the second pair on), positions that do not start at 0 or go up by one,
negative and large positions, another base, batch axes. A mistake is a core of
``reference.py`` with one knob set wrong; those that a relation names on its own are not
catalogued (tests/test_08_positions.py keeps them named): the table's sines and cosines in
two halves ("interleaved"), unscaled scores ("√d times the expected one"), K.T on a batch
("a fixed number of axes"), the queries' positions used for the keys ("substituted")."""
from __future__ import annotations

import functools

import numpy as np

from courseware.positions import rope_score_inputs
from .. import LESSONS, BadInput, Case, Exercise, Misconception, Rules, Stated, knob
from ..stated import ADVICE, BAD_INPUTS, SOURCE_SCAN, VALUES
from ..drawing import floats, normal, small_ints, with_variants
from . import reference as ref

LESSON = LESSONS.of(__name__)  # every exercise here registers through it


def bad(*args, why: str, **kwargs) -> BadInput:
    return BadInput(Case(args, kwargs), why)


# The lesson's own words on the given lines, for every exercise.
KEEP_THE_CHECK = Stated("it checks the input and raises a `ValueError` for one that does not "
                        "fit. Keep it.", BAD_INPUTS, "should reject this input with a ValueError")


def exponent_messages(base: str) -> dict[str, str]:
    """The diagnoses of a wrong exponent in ``theta_i = base^(-2i/d)``, in the words of an
    exercise whose base is ``base`` ("10000", or "base")."""
    pair = "i being the pair's number, 0 to d/2 - 1"
    return {
        "i/d": (f"your frequencies fall too slowly from one pair to the next: your exponent is "
                f"i/d where it is 2i/d ({pair}). Across the pairs the exponent must run from 0 "
                f"to almost 1, so that the last pair turns almost {base} times slower than the "
                f"first; yours only gets to about 1/2."),
        "4i/d": (f"your frequencies fall twice too fast: your exponent is 4i/d where it is 2i/d "
                 f"({pair}). That is what counting the 2 twice gives, for instance taking i to "
                 f"be the feature index 2i and then multiplying it by 2 again. Pair i sits in "
                 f"features 2i and 2i + 1, and its exponent is 2i/d."),
        "i": (f"your exponent is i, the pair number, with no division by d: {base}^(-i) is "
              f"tiny from the second pair on, so those features hardly move from one position "
              f"to the next. The exponent is 2i/d, which runs from 0 to almost 1 across the "
              f"d/2 pairs."),
    }


# ============================================================================= sinusoidal_positions

def sinusoidal_cases(rng, hidden):
    sizes = [(1, 2, "one position, one pair"), (3, 2, "three positions, one pair"),
             (4, 4, "two pairs"), (0, 4, "T = 0: an empty table"), (5, 6, "three pairs"),
             (16, 8, "16 positions, 8 features"), (50, 16, "50 positions, 16 features")]
    if hidden:
        sizes += [(2, 2, "two positions, one pair"), (6, 4, "two pairs"), (1, 12, "one position"),
                  (0, 2, "T = 0: an empty table"), (9, 10, "five pairs"),
                  (int(rng.integers(20, 40)), 12, "random T"), (128, 32, "128 positions")]
    cases = [Case((T, d), note=note) for T, d, note in sizes]
    return cases + [Case((np.int64(7), np.int64(10)), note="T and d as NumPy integers")]


sinusoids = functools.partial(knob, ref._sinusoidal)
TABLE_EXPONENT = exponent_messages("10000")
LESSON.register(Exercise(
    name="sinusoidal_positions", reference=ref.sinusoidal_positions, cases=sinusoidal_cases,
    arg_names=("T", "d"), seed=801, quantities=lambda T, d: {"T": T, "d": d},
    misconceptions=[
        Misconception("positions counted from 1", sinusoids(start=1), (
            "your positions start at 1: your row t is the expected row t + 1. The first token "
            "is at position 0, where every angle is 0, so row 0 reads sin(0), cos(0), ... = "
            "0, 1, 0, 1, ...")),
        Misconception("sin and cos swapped", sinusoids(first="cos"), (
            "your table has the cosines in the even features and the sines in the odd ones. "
            "Feature 2i holds sin(t / 10000^(2i/d)) and feature 2i + 1 the cosine of the same "
            "angle, so row 0 (position 0) reads 0, 1, 0, 1, ...")),
        *(Misconception(f"exponent {e} for 2i/d", sinusoids(exponent=e), TABLE_EXPONENT[e])
          for e in ("i/d", "4i/d", "i")),
    ],
    bad_inputs=[bad(4, 5, why="d = 5 is odd: the features come in pairs"),
                bad(4, 0, why="d = 0: a table needs features"),
                bad(4, -2, why="d = -2 is negative"),
                bad(-1, 4, why="T = -1 is negative"),
                bad(2.5, 4, why="T = 2.5 is not a whole number")],
    rules=Rules(loops=True, why="Use no Python loop: a column of positions times a row of "
                "frequencies gives every angle at once (lesson 01's outer product)."),
    hint=("Row t is position t, counted from 0, and pair i (features 2i and 2i + 1) holds the "
          "sine and the cosine of one angle, t / 10000^(2i/d). Check row 0 first, [0, 1, 0, "
          "1, ...], then one more row of the input above by hand."),
    stated=(Stated("Use no Python loop", SOURCE_SCAN, "Use no Python loop"),
            Stated("T = 0 gives an empty `(0, d)` table", VALUES, "T = 0: an empty table"),
            Stated("an odd or non-positive d, or a negative T, raises a `ValueError`", BAD_INPUTS,
                   "should reject this input with a ValueError"),
            KEEP_THE_CHECK),
))


# ============================================================================= rope

def rope_case(rng, shape, positions, note, draw=small_ints, **kwargs) -> Case:
    return Case((draw(rng, shape), np.array(positions, dtype=np.int64)), kwargs, note=note)


def rope_cases(rng, hidden):
    cases = [
        rope_case(rng, (1, 2), [1], "one token at position 1, one pair"),
        rope_case(rng, (2, 2), [0, 1], "positions 0 and 1, one pair"),
        rope_case(rng, (3, 4), [0, 1, 2], "two pairs"),
        rope_case(rng, (3, 4), [4, 1, 6], "positions that do not start at 0 or go up by one"),
        rope_case(rng, (4, 6), [-2, 0, 3, 1], "negative positions"),
        rope_case(rng, (3, 4), [1, 2, 5], "base = 100", base=100.0),
        rope_case(rng, (2, 3, 4), [0, 1, 2], "batched"),
        rope_case(rng, (3, 8), [1000, 2048, 7], "large positions", normal),
        rope_case(rng, (2, 1, 5, 8), [3, 4, 5, 6, 7], "two batch axes, random values", normal)]
    if hidden:
        cases += [
            rope_case(rng, (1, 4), [3], "one token"),
            rope_case(rng, (4, 4), [0, 0, 1, 1], "repeated positions"),
            rope_case(rng, (2, 6), [7, -5], "negative positions"),
            rope_case(rng, (2, 3, 8), [2, 9, 4], "batched", normal),
            rope_case(rng, (5, 10), [0, 1, 2, 3, 4], "base = 500", normal, base=500.0),
            rope_case(rng, (2, 16), [4095, 100_000], "large positions", normal),
            rope_case(rng, (3, 2, 4, 12), [5, 1, 8, 2], "two batch axes", normal)]
    cases.append(rope_case(rng, (2, 4, 6), [3, 0, 9, 4], "random values", normal))
    return with_variants(cases, hidden, only=floats)


ROPE_EXPONENT = exponent_messages("base")
HALVES = ("you pair feature i with feature i + d/2, the first half of the features with the "
          "second half: the rotate-half convention of GPT-NeoX and of Llama in Hugging Face. "
          "This exercise uses RoFormer's pairs, neighbours: pair i is features 2i and 2i + 1. "
          "(The notebook shows that the two conventions are the same up to the order of the "
          "features; on the same input, though, they give different numbers.)")
rotary = functools.partial(knob, ref._rope)
LESSON.register(Exercise(
    name="rope", reference=ref.rope, cases=rope_cases, arg_names=("x", "positions", "base"),
    seed=802, probes=("x",),
    quantities=lambda x, positions, *rest, **kw: {"d": np.shape(x)[-1], "T": np.shape(x)[-2]},
    misconceptions=[
        Misconception("halves rotated", rotary(layout="halves"), HALVES),
        Misconception("turned the wrong way", rotary(turn=-1.0), (
            "your pairs turn clockwise, by minus the angle: the sine terms have the wrong sign. "
            "RoFormer turns pair (a, b) counterclockwise, so at a small positive angle its "
            "second feature grows by about a times the angle. Queries and keys turned the same "
            "wrong way still give scores that depend on the offset, but the offset n - m "
            "instead of m - n, and they differ from every model's that uses RoPE.")),
        Misconception("sin and cos exchanged", rotary(trig="sin, cos"), (
            "your rotation has sin where cos belongs and cos where sin belongs. At position "
            "0 (angle 0) a row must come out unchanged: each feature keeps itself times "
            "cos(angle) and takes the other feature of its pair times sin(angle).")),
        Misconception("row index for the position", rotary(where="index"), (
            "you turn row t by t·θ_i, its index in the array, instead of by positions[t]·θ_i. "
            "The positions are given, and need not start at 0 or go up by one (a second chunk "
            "of a text starts where the first one stopped).")),
        *(Misconception(f"exponent {e} for 2i/d", rotary(exponent=e), ROPE_EXPONENT[e])
          for e in ("i/d", "4i/d", "i")),
    ],
    bad_inputs=[bad(np.ones((3, 5)), np.arange(3), why="x has d = 5 features, an odd number"),
                bad(np.ones((3, 4)), np.arange(2), why="positions has 2 entries for T = 3 rows"),
                bad(np.ones((3, 4)), np.array([0.0, 0.5, 1.0]),
                    why="positions holds 0.5, not a whole number"),
                bad(np.ones(4), np.arange(1), why="x is 1-D: it needs rows [T, d]"),
                bad(np.ones((3, 4)), np.ones((3, 1), dtype=np.int64), why="positions is 2-D")],
    rules=Rules(loops=True, why="Use no Python loop at all: x[..., 0::2] and x[..., 1::2] are "
                "the two features of every pair, at every position, at once."),
    hint=("Row t of x turns each of its pairs (features 2i and 2i + 1) counterclockwise by the "
          "angle positions[t]·θ_i, with θ_i = base^(-2i/d). Position 0 leaves a row unchanged, "
          "and no row changes its length. Work out the first row of the input above by hand."),
    stated=(Stated("with no Python loop at all", SOURCE_SCAN, "Use no Python loop at all"),
            Stated("Return an array of the shape of `x`", VALUES, "shape"),
            KEEP_THE_CHECK),
))


# ============================================================================= rope_scores

def score_case(rng, q_shape, k_shape, pq, pk, note, draw=small_ints, **kwargs) -> Case:
    return Case((draw(rng, q_shape), draw(rng, k_shape), np.array(pq, dtype=np.int64),
                 np.array(pk, dtype=np.int64)), kwargs, note=note)


def score_cases(rng, hidden):
    cases = [
        score_case(rng, (1, 2), (2, 2), [2], [0, 1], "one query, two keys"),
        score_case(rng, (2, 4), (3, 4), [0, 1], [0, 1, 2], "T_q ≠ T_k"),
        score_case(rng, (3, 4), (3, 4), [2, 3, 4], [0, 1, 2], "queries and keys at other positions"),
        score_case(rng, (2, 3, 4), (2, 3, 4), [0, 1, 2], [0, 1, 2], "batched"),
        score_case(rng, (3, 4), (2, 5, 4), [4, 5, 6], [0, 1, 2, 3, 4], "batch axes broadcast"),
        score_case(rng, (1, 8), (4, 8), [500], [0, 100, 499, 1000], "large positions", normal),
        score_case(rng, (2, 2, 6), (2, 4, 6), [1, 3], [0, 2, 1, 3], "base = 50", normal,
                   base=50.0)]
    if hidden:
        cases += [
            score_case(rng, (1, 4), (2, 4), [3], [3, 0], "one query"),
            score_case(rng, (3, 6), (3, 6), [0, 1, 2], [5, 6, 7], "keys after the queries"),
            score_case(rng, (2, 4, 4), (1, 3, 4), [0, 1, 2, 3], [7, 8, 9], "batch axes broadcast",
                       normal),
            score_case(rng, (2, 12), (5, 12), [1000, 1001], [0, 250, 500, 750, 1000],
                       "large positions", normal),
            score_case(rng, (3, 2, 3, 8), (3, 2, 4, 8), [2, 0, 1], [3, 1, 0, 2], "two batch axes",
                       normal)]
    cases.append(score_case(rng, (2, 3, 8), (2, 5, 8), [7, 8, 9], [3, 4, 5, 6, 7],
                            "random values", normal))
    return with_variants(cases, hidden, only=floats)


def score_calls(Q, K, positions_q, positions_k, base=10000.0):
    """The reference's calls on the learner's rope (its stand-ins, see Exercise.calls)."""
    Q, K, positions_q, positions_k, base = rope_score_inputs(Q, K, positions_q, positions_k, base)
    return [("rope", (Q, positions_q), {"base": base}), ("rope", (K, positions_k), {"base": base})]


def score_quantities(Q, K, *rest, **kwargs) -> dict[str, float]:
    """T_k named before T_q: where the two are equal, a scale by √T is read as √T_k, as it
    is on the cases where they differ."""
    d = np.shape(Q)[-1]
    return {"√d": float(np.sqrt(d)), "d": d, "T_k": np.shape(K)[-2], "T_q": np.shape(Q)[-2]}


scores = functools.partial(knob, ref._rope_scores)
LESSON.register(Exercise(
    name="rope_scores", reference=ref.rope_scores, cases=score_cases, calls=score_calls,
    arg_names=("Q", "K", "positions_q", "positions_k", "base"), seed=803,
    probes=("Q", "K", "positions_q", "positions_k"), quantities=score_quantities,
    misconceptions=[
        Misconception("only the queries rotated", scores(turned="queries"), (
            "you rotate the queries but not the keys. Then score (m, n) sees the position of "
            "query m alone, and the offset m - n is lost. Rotate K too, each key at its own "
            "position in positions_k, before the product.")),
        Misconception("nothing rotated", scores(turned="neither"), (
            "your scores are lesson 02's scores of Q and K as they come: neither is rotated, so "
            "the positions never reach them. Turn Q at positions_q and K at positions_k with "
            "rope first, then score.")),
    ],
    bad_inputs=[bad(np.ones((2, 4)), np.ones((3, 6)), np.arange(2), np.arange(3),
                    why="Q has d = 4 but K has d = 6"),
                bad(np.ones((2, 4)), np.ones((3, 4)), np.arange(2), np.arange(2),
                    why="positions_k has 2 entries for 3 keys"),
                bad(np.ones((2, 3)), np.ones((3, 3)), np.arange(2), np.arange(3),
                    why="d = 3 is odd"),
                bad(np.ones((2, 4)), np.ones((3, 4)), np.arange(2), np.array([0.0, 1.5, 2.0]),
                    why="positions_k holds 1.5, not a whole number")],
    hint=("Turn Q at positions_q and K at positions_k with your rope, then score as in lesson "
          "02: every query row against every key row, divided by √d, with only the last two "
          "axes of K swapped so that batch axes line up."),
    stated=(Stated("Your `rope` does the turning", ADVICE),
            Stated("swapping only the last two axes of K so that batch axes line up and "
                   "broadcast", VALUES, "axes"),
            KEEP_THE_CHECK),
))
