"""Lesson 02 exercises. The cases let every mistake show itself: T_q, T_k, d_k and d_v differ,
batches (where ``K.T`` reverses the batch axes too), scores of several hundreds (where ``exp``
alone overflows). A mistake is a core of ``reference.py`` with one knob set wrong; those that a
relation names on its own are not catalogued (tests/test_relations_02_04.py keeps them named)."""
from __future__ import annotations

import functools

import numpy as np

from ...learner.shortcuts import Rules
from .. import LESSONS, LOOP, BadInput, Case, Exercise, Meta, Misconception, Stated, knob
from ..stated import ADVICE, BAD_INPUTS, SOURCE_SCAN, VALUES
from ..drawing import attention_quantities, normal, small_ints, with_variants
from . import reference as ref
from .learner import Accepted

LESSON = LESSONS.of(__name__)  # every exercise here registers through it


# The lesson's words on its given lines, and on the library's attention.
KEEP_THEM = Stated("raise a `ValueError` for inputs that do not fit. Keep them.", BAD_INPUTS,
                   "should reject this input with a ValueError")
NO_LIBRARY = Stated("The library's attention functions are not allowed in this lesson's "
                    "exercises", SOURCE_SCAN, "asks you to do by hand")


def bad(*shapes, why: str) -> BadInput:
    """An input that must raise: arrays of ones of ``shapes``."""
    return BadInput(Case(tuple(np.ones(shape) for shape in shapes)), why)


# ----------------------------------------------------------------------------- rules

LIBRARY_ATTENTION = {
    "scaled_dot_product_attention": "torch.nn.functional.scaled_dot_product_attention",
    **dict.fromkeys(("_scaled_dot_product_attention_math", "_scaled_dot_product_flash_attention",
                     "_scaled_dot_product_efficient_attention"), "torch's attention kernels"),
    "multi_head_attention_forward": "torch.nn.functional.multi_head_attention_forward",
    "MultiheadAttention": "torch.nn.MultiheadAttention",
    "MultiHeadAttention": "a library MultiHeadAttention layer",
    "dot_product_attention": "a library dot_product_attention"}
# Caught under any alias, in whatever libraries the learner's kernel has imported.
ATTENTION_OBJECTS = tuple(f"torch.{name}" for name in (
    "nn.functional.scaled_dot_product_attention", "nn.functional.multi_head_attention_forward",
    "nn.MultiheadAttention", "_C._nn.scaled_dot_product_attention",
    "ops.aten.scaled_dot_product_attention"))
ATTENTION_RULES = Rules(
    names=LIBRARY_ATTENTION, objects=ATTENTION_OBJECTS,
    why="The library computes attention for you, so it would hide every step this lesson is "
    "about. Build it from your attention_scores and softmax, then one product with V.")


# ----------------------------------------------------------------------------- softmax

def softmax_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    ints = [(3, {}, "one vector"), ((2, 3), {}, "rows (axis=-1)"), ((3, 3), {}, "rows (axis=-1)"),
            ((3, 2), {"axis": 0}, "columns (axis=0)"), ((2, 2, 3), {}, "batched rows"),
            ((2, 3, 2), {"axis": 1}, "middle axis (axis=1)")]
    cases = [Case((small_ints(rng, shape),), kw, note=note) for shape, kw, note in ints] + [
        Case((np.array([1000.0, 999.0, 1001.0, 998.0]),), note="large scores"),
        Case((np.array([[1000.0, -1000.0, 0.0], [-1000.0, -999.0, -1001.0]]),),
             note="large scores, rows far apart"),
        Case((normal(rng, (2, 3, 4), 2.0),), note="random floats")]
    if hidden:
        cases[-1:-1] = [
            Case((small_ints(rng, 5),), note="one vector"),
            Case((small_ints(rng, (4, 4)),), {"axis": -2}, note="columns (axis=-2)"),
            Case((small_ints(rng, (3, 2, 4)),), {"axis": 0}, note="first axis (axis=0)"),
            Case((np.full((2, 3), 7.0),), note="equal scores"),
            Case((normal(rng, (3, 5), 600.0),), note="large scores"),
            Case((np.array([[-800.0, -801.0], [700.0, 705.0], [0.5, 0.25]]),), {"axis": -1},
                 note="large scores, rows far apart"),
            Case((normal(rng, (2, 4, 3), 400.0),), {"axis": 1}, note="large scores")]
    return with_variants(cases, hidden)


soft = functools.partial(knob, ref._softmax)

LESSON.register(Exercise(
    name="softmax", reference=ref.softmax, cases=softmax_cases,
    misconceptions=[
        # A rule reproduces it (the maximum taken over every entry), but the NaN it gives
        # is named first, and only this says why it comes.
        Misconception("max of the whole array", soft(shift="array"),
                      "you subtract the largest entry of the whole array, not of each slice. When "
                      "one row is near 1000 and another near -1000, every exponent of the second "
                      "row underflows to 0: 0 / 0 = nan. Take the max along `axis` (keepdims)."),
        Misconception("normalises the whole array", soft(shift="array", total="array"),
                      "all the entries of your result together sum to 1, instead of each slice "
                      "along `axis`. Sum with `axis=axis, keepdims=True`."),
        Misconception("sum without keepdims", soft(keepdims=False),
                      "you divide by a sum taken without keepdims=True. The sum loses the axis, so "
                      "NumPy lines it up with the wrong axis when it broadcasts (or cannot line it "
                      "up at all). Keep the summed axis, with length 1."),
    ],
    bad_inputs=[
        BadInput(Case((np.float64(2.0),)), "x is a scalar: it has no axis to normalise over"),
        BadInput(Case((np.ones((2, 3)),), {"axis": 2}), "x has 2 axes, so axis=2 does not exist"),
        BadInput(Case((np.ones((2, 3)),), {"axis": 1.0}), "axis is 1.0, not an integer"),
    ],
    rules=Rules(
        names={"softmax": "a library softmax (scipy.special.softmax, torch.softmax, ...)",
               "log_softmax": "a library log_softmax"},
        objects=("scipy.special.softmax", "scipy.special.log_softmax", "torch.softmax",
                 "torch.log_softmax", "torch.nn.functional.softmax",
                 "torch.nn.functional.log_softmax", "torch.special.softmax"),
        why="Write softmax yourself from np.exp, np.max and np.sum: that is where the stability "
        "trick lives."),
    hint=("A softmax exponentiates and normalises along one axis. Shift each slice by its own "
          "maximum first (the shift cancels in the division), and keep the summed axis so that "
          "the shapes line up when you divide."),
    arg_names=("x",), seed=201,
    stated=(Stated("a library softmax is not allowed here", SOURCE_SCAN, "a library softmax"),
            Stated("no overflow for scores of +-1000", VALUES,
                   "np.exp of a number above about 709.8"),
            Stated("(any axis, not only the last)", VALUES, "you normalise over the wrong axis"),
            KEEP_THEM),
))


# ----------------------------------------------------------------------------- scores

def one_or_batched(*shapes) -> str:
    return "batched" if max(map(len, shapes)) > 2 else "one sequence"


# (Q shape, K shape). T_q, T_k and d_k differ wherever they can.
SCORE_SHAPES = [((2, 4), (3, 4)), ((2, 3, 4), (2, 3, 4)), ((3, 9), (2, 9)),
                ((2, 2, 4), (2, 5, 4)), ((1, 4), (3, 4))]
SCORE_SHAPES_HIDDEN = [((4, 16), (3, 16)), ((3, 2, 1, 4), (3, 2, 6, 4)), ((2, 4), (2, 5, 4)),
                       ((5, 4), (5, 4)), ((2, 3, 9), (2, 2, 9))]


def score_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    cases = [Case((small_ints(rng, q, -2, 2), small_ints(rng, k, -2, 2)), note=one_or_batched(q, k))
             for q, k in SCORE_SHAPES + (SCORE_SHAPES_HIDDEN if hidden else [])]
    cases.append(Case((normal(rng, (2, 3, 6)), normal(rng, (2, 4, 6))), note="random floats"))
    return with_variants(cases, hidden)


def keys_first(Q, K, *rest) -> dict:
    """The quantities with T_k named before T_q: where the two are equal, a scale by √T is read
    as the number of keys, seed 000's mistake."""
    named = attention_quantities(Q, K)
    return {"T_k": named.pop("T_k"), **named}


SEQ_LEN = ("you divided by the square root of the sequence length (the number of tokens). The "
           "scale is sqrt(d_k), where d_k is the length of each query and key vector, the last "
           "axis of Q. The sum q·k has d_k terms, so its spread grows with d_k, whatever the "
           "number of tokens.")
K_DOT_T = ("you transposed K with `K.T`. On a batched array `.T` reverses every axis, so "
           "[batch, T_k, d_k] becomes [d_k, T_k, batch]. Swap only the last two axes: "
           "`np.swapaxes(K, -1, -2)`, which works for any number of batch axes.")
scores = functools.partial(knob, ref._scores)

LESSON.register(Exercise(
    name="attention_scores", reference=ref.attention_scores, cases=score_cases,
    probes=("Q", "K"), quantities=keys_first,
    misconceptions=[
        Misconception("scaled by sqrt(T_q)", scores(divide_by="sqrt(T_q)"), SEQ_LEN),
        Misconception("K.T on a batched array", scores(transpose="every axis"), K_DOT_T),
    ],
    bad_inputs=[
        bad((2, 3), (2, 4), why="Q has d_k = 3 but K has d_k = 4"),
        bad(4, (3, 4), why="Q is one vector, not a matrix of queries"),
        bad((2, 3, 4), (3, 5, 4), why="the batch axes 2 and 3 do not broadcast"),
    ],
    rules=ATTENTION_RULES,
    hint=("Entry [..., i, j] is query i dotted with key j, divided by the square root of the width "
          "of the keys. Check your result's shape on the input above first, then one entry by "
          "hand."),
    arg_names=("Q", "K"), seed=202,
    stated=(NO_LIBRARY, KEEP_THEM),
))


# ----------------------------------------------------------------------------- attention

# (Q, K, V) shapes: T_q != T_k, d_k != d_v, T_k != d_k, T_k != d_v unless noted.
ATTENTION_SHAPES = [((2, 4), (3, 4), (3, 2)), ((2, 3, 4), (2, 3, 4), (2, 3, 4)),  # the [2, 3, 4]
                    ((3, 4), (2, 4), (2, 5)), ((2, 2, 4), (2, 5, 4), (2, 5, 3)),  # example
                    ((1, 9), (4, 9), (4, 2))]
ATTENTION_SHAPES_HIDDEN = [((4, 16), (3, 16), (3, 5)), ((2, 3, 2, 4), (2, 3, 6, 4), (2, 3, 6, 1)),
                           ((2, 4), (2, 3, 4), (2, 3, 3)),  # Q broadcast over a batch; T_k == d_v
                           ((3, 1, 4), (3, 5, 4), (3, 5, 2)), ((2, 3, 9), (2, 2, 9), (2, 2, 6))]


def scaled_qk(rng, shapes, top: float) -> Case:
    """Normal Q, K, V; the largest score ``top``, positive, far beyond where np.exp overflows."""
    Q, K, V = (normal(rng, s) for s in shapes)
    scores = np.matmul(np.atleast_2d(Q), np.swapaxes(K, -1, -2)) / np.sqrt(Q.shape[-1])
    factor = np.sqrt(top / np.abs(scores).max())
    sign = -1.0 if scores.max() < -scores.min() else 1.0
    return Case((sign * Q * factor, K * factor, V), note="large scores")


def attention_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    cases = [Case((small_ints(rng, q, -2, 2), small_ints(rng, k, -2, 2), small_ints(rng, v)),
                  note="the [2, 3, 4] example" if q == k == (2, 3, 4) else one_or_batched(q, k))
             for q, k, v in ATTENTION_SHAPES + (ATTENTION_SHAPES_HIDDEN if hidden else [])]
    cases.append(scaled_qk(rng, [(2, 3, 4), (2, 4, 4), (2, 4, 2)], 1500.0))
    if hidden:
        cases.append(scaled_qk(rng, [(3, 8), (5, 8), (5, 3)], 900.0))
    cases.append(Case(tuple(normal(rng, s) for s in ((2, 3, 6), (2, 4, 6), (2, 4, 5))),
                      note="random floats"))
    return with_variants(cases, hidden)


def attention_calls(Q, K, V):
    """The reference's calls on the learner's helpers (its stand-ins, see Exercise.calls)."""
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    return [("attention_scores", (Q, K), {}),
            ("softmax", (ref.attention_scores(Q, K),), {"axis": -1})]


WHOLE_ARRAY = ("your softmax normalises the whole array (or each whole score matrix) at once, so "
               "all weights together sum to 1. Each query shares out its own attention: normalise "
               "each row, along the key axis, `axis=-1`.")
attention = functools.partial(knob, ref._attention)
LESSON.register(Exercise(
    name="scaled_dot_product_attention", scales="Q", reference=ref.scaled_dot_product_attention,
    cases=attention_cases, calls=attention_calls,
    probes=("K", "V"), outputs=("output", "weights"), quantities=attention_quantities,
    misconceptions=[
        Misconception("softmax along axis 0", attention(softmax_axis=0),
                      "your softmax runs along axis 0, the first axis of the scores. On one "
                      "sequence that is the query axis, so each column of the weights sums to 1; "
                      "on a batch it is the batch axis, and the weights mix different sequences. "
                      "Row i holds the weights query i gives to the keys: take the softmax over "
                      "the keys, the last axis, whatever the number of batch axes."),
        *(Misconception(f"softmax over {over}", attention(weights_by=soft(shift=it, total=it)),
                        WHOLE_ARRAY) for over, it in [("the whole array", "array"),
                                                      ("each whole matrix", "matrix")]),
        Misconception("K.T on a batched array", attention(scores=scores(transpose="every axis")),
                      K_DOT_T),
        Misconception("transposed V", attention(values_transposed=True),
                      "you multiplied the weights by Vᵀ. V holds one value vector per key, as rows "
                      "([T_k, d_v]), and the weights are [T_q, T_k]: `weights @ V` mixes the rows "
                      "of V directly, with no transpose."),
        Misconception("output returned alone", attention(returns="output"),
                      "you returned the output alone. This function returns a pair: the output "
                      "first, then the weights that made it (what the heatmaps draw)."),
    ],
    bad_inputs=[
        bad((2, 4), (3, 4), (4, 2), why="K has 3 rows (keys) but V has 4"),
        bad((2, 3), (3, 4), (3, 2), why="Q has d_k = 3 but K has d_k = 4"),
        bad((2, 4), (3, 4), 3, why="V is one vector, not one value vector per key"),
    ],
    rules=ATTENTION_RULES,
    stated=(Stated("The library's attention (`torch.nn.functional.scaled_dot_product_attention` "
                   "and friends) is not allowed", SOURCE_SCAN, "asks you to do by hand"),
            Stated("can do the same for every query at once and for any batch axes, with no loop",
                   ADVICE),
            Stated("Your `attention_scores` and `softmax` do most of the work.", ADVICE),
            KEEP_THEM),
    hint=("Attention is two steps: weights from the scaled scores, by a softmax over the keys, "
          "then a weighted sum of the value rows. The function returns both, the output first."),
    arg_names=("Q", "K", "V"), seed=203,
))


# ----------------------------------------------------------------------------- one query

# (T_k, d_k, d_v): T_k != d_k != d_v.
ONE_QUERY_SHAPES = [(3, 4, 2), (2, 4, 5), (4, 9, 3), (1, 4, 3)]
ONE_QUERY_SHAPES_HIDDEN = [(5, 16, 2), (6, 4, 1), (3, 1, 4), (2, 2, 2)]


def one_query_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    cases = [Case((small_ints(rng, d_k, -2, 2), small_ints(rng, (t, d_k), -2, 2),
                   small_ints(rng, (t, d_v))), note="small integers")
             for t, d_k, d_v in ONE_QUERY_SHAPES + (ONE_QUERY_SHAPES_HIDDEN if hidden else [])]
    cases.append(scaled_qk(rng, [4, (5, 4), (5, 3)], 1200.0))
    if hidden:
        cases.append(scaled_qk(rng, [8, (3, 8), (3, 2)], 800.0))
    cases.append(Case(tuple(normal(rng, s) for s in (6, (4, 6), (4, 5))), note="random floats"))
    return with_variants(cases, hidden)


one_query = functools.partial(knob, ref._attend_one_query)
LESSON.register(Exercise(
    name="attend_one_query", scales="q", reference=ref.attend_one_query, cases=one_query_cases,
    probes=("K", "V"), quantities=attention_quantities,
    misconceptions=[
    ],
    bad_inputs=[
        bad((2, 4), (3, 4), (3, 2), why="q is a matrix, but this function takes one query vector"),
        bad(3, (3, 4), (3, 2), why="q has length 3 but the keys have length 4"),
        bad(4, (3, 4), (2, 2), why="K has 3 rows (keys) but V has 2"),
    ],
    rules=Rules(
        names={**LIBRARY_ATTENTION, "matmul": "np.matmul", "einsum": "np.einsum",
               "tensordot": "np.tensordot", "multi_dot": "np.linalg.multi_dot",
               "__matmul__": "the @ operator (via __matmul__)"},
        objects=ATTENTION_OBJECTS, matmul_operator=True,
        required={LOOP: "a Python loop over the keys"},
        why="This exercise is the single-query sum written out: loop over the keys, score each one "
        "with q·k_i (np.sum(q * K[i]) or np.dot(q, K[i])), turn the scores into weights, and add "
        "up weight_i * V[i]. The matrix form comes in the exercise before."),
    hint=("For one query: score every key, scale the scores by the square root of d_k, turn them "
          "into weights that sum to 1 (stably), and add up the value vectors with those weights. "
          "Redo the input above key by key."),
    arg_names=("q", "K", "V"), seed=204,
    stated=(Stated("loop over the keys", SOURCE_SCAN, "should use a Python loop over the keys"),
            Stated("No `@`, `np.matmul` or `np.einsum` here.", SOURCE_SCAN,
                   "asks you to do by hand"),
            Stated("so that large scores do not overflow", VALUES, "overflow encountered in exp"),
            KEEP_THEM),
))


# ----------------------------------------------------------------------------- self-attention

# (X shape, d_k, d_v): d_model, d_k, d_v and T all differ, except in the smallest case, where
# T = d_k = d_v: a projection written in the column convention (W_q @ X) fits there, so it is not
# mistaken for a transposed weight (X @ W_q.T), which raises. With d_k = 1, d_model is odd: no
# query is 0, which would hide which matrix made the keys.
SELF_SHAPES = [((3, 5), 2, 4), ((2, 3, 5), 4, 2), ((4, 6), 3, 2), ((2, 3), 2, 2)]
SELF_SHAPES_HIDDEN = [((2, 4, 8), 4, 3), ((1, 3), 2, 1), ((3, 2, 4, 5), 2, 3), ((4, 5), 1, 6)]


def self_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    cases = [Case((small_ints(rng, x, -1, 1), small_ints(rng, (x[-1], d_k), -1, 1),
                   small_ints(rng, (x[-1], d_k), -1, 1), small_ints(rng, (x[-1], d_v))),
                  note=one_or_batched(x))
             for x, d_k, d_v in SELF_SHAPES + (SELF_SHAPES_HIDDEN if hidden else [])]
    cases.append(Case(tuple(normal(rng, s) for s in ((2, 3, 6), (6, 4), (6, 4), (6, 5))),
                      note="random floats"))
    return with_variants(cases, hidden)


def self_attention_calls(X, W_q, W_k, W_v):
    X = np.asarray(X, dtype=float)
    return [("scaled_dot_product_attention",
             tuple(X @ np.asarray(W, dtype=float) for W in (W_q, W_k, W_v)), {})]


self_attention = functools.partial(knob, ref._self_attention)
LESSON.register(Exercise(
    name="self_attention", scales="W_q", reference=ref.self_attention, cases=self_cases,
    calls=self_attention_calls, probes=("X", "W_q", "W_k", "W_v"), outputs=("output", "weights"),
    quantities=lambda X, W_q, *rest: {"√d_k": np.sqrt(np.shape(W_q)[1]), "d_k": np.shape(W_q)[1],
                                      "d_model": np.shape(X)[-1], "T": np.shape(X)[-2]},
    misconceptions=[
        Misconception("no projections", self_attention(projected=False),
                      "you used X itself as queries, keys and values. Project it first: Q = "
                      "X @ W_q, K = X @ W_k, V = X @ W_v. The learned matrices are what let a "
                      "token ask for something other than tokens that look like itself."),
        Misconception("weights transposed", self_attention(weights_transposed=True),
                      "you multiplied X by a transposed weight matrix. X is [..., T, d_model] and "
                      "W_q is [d_model, d_k]: as given, they make one query of length d_k per "
                      "token. Transposed (an nn.Linear weight's layout, [d_k, d_model]), its rows "
                      "no longer line up with the d_model features of X: that is numpy's "
                      "ValueError on this valid input. Use all three weights as given."),
    ],
    bad_inputs=[
        bad((3, 5), (4, 2), (5, 2), (5, 3), why="W_q has 4 rows but X has d_model = 5 columns"),
        bad((3, 5), (5, 2), (5, 3), (5, 3),
            why="W_q gives queries of length 2 but W_k gives keys of length 3"),
        bad(5, (5, 2), (5, 2), (5, 3), why="X is one vector, not a sequence of tokens"),
    ],
    rules=ATTENTION_RULES,
    stated=(NO_LIBRARY, Stated("(your `scaled_dot_product_attention` does that part)", ADVICE),
            KEEP_THEM),
    hint=("Self-attention makes the queries, keys and values from X with the three weight "
          "matrices, then attends. Check the shapes of your projections on the input above: d_k "
          "and d_v come from the weights."),
    arg_names=("X", "W_q", "W_k", "W_v"), seed=205,
))


# ----------------------------------------------------------------------------- variance

NEAR_D_K = ("Your value is near d_k = {d_k}, so it measures the right kind of spread, but it is "
            "not the variance of the n_samples dot products of the given draws, row i of q with "
            "row i of k. Check that `rng`, `q` and `k` are drawn exactly as the given lines draw "
            "them (the check repeats those draws), and that each dot product pairs one row of q "
            "with the same row of k")


def variance_meta(d_k: int, n_samples: int, seed: int) -> Meta:
    """``case.meta``: the other estimates a right answer may return (ddof=1; the mean square, as
    the true mean is 0), and the band, four standard errors around d_k, of other draws."""
    q, k = ref.score_samples(d_k, n_samples, seed)
    dots = np.sum(q * k, axis=-1)
    standard_error = np.sqrt((2 * d_k ** 2 + 6 * d_k) / n_samples)
    return Meta(accept=[float(np.var(dots, ddof=1)), float(np.mean(dots ** 2))],
                near={"value": float(d_k), "within": float(4 * standard_error),
                      "message": NEAR_D_K.format(d_k=d_k)})


def variance_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    # Sizes and seeds only: the function draws its own samples from the seed.
    settings = [(4, 2000, 0), (16, 2000, 1), (64, 1000, 2), (1, 3000, 3), (256, 500, 4)]
    if hidden:
        settings += [(2, 5000, 11), (8, 800, 12), (32, 1500, 13), (128, 600, 14), (3, 50, 15)]
    return [Case((d_k, n, seed), note=f"d_k = {d_k}", meta=variance_meta(d_k, n, seed))
            for d_k, n, seed in settings]


variance = functools.partial(knob, ref._score_variance)
LESSON.register(Exercise(
    name="score_variance", reference=ref.score_variance, cases=variance_cases,
    misconceptions=[
        Misconception("variance of the scaled scores", variance(scaled=True),
                      "you measured the variance after dividing by sqrt(d_k), which is about 1 for "
                      "every d_k. This function measures the raw q·k, to show why the scaling is "
                      "needed: leave the division out here."),
        Misconception("standard deviation", variance(statistic="standard deviation"),
                      "you returned the standard deviation (about sqrt(d_k)). Return the variance, "
                      "its square: np.var."),
        Misconception("summed over the samples", variance(summed_over=0),
                      "you summed q * k over the samples axis (axis=0). One dot product q·k sums "
                      "over the d_k coordinates of one sample, the last axis."),
        Misconception("variance over all pairs", variance(pairs="all"),
                      "you took the variance over all n_samples × n_samples pairs: q @ k.T dots "
                      "every query with every key. The draws make n_samples pairs, row i of q with "
                      "row i of k: the experiment asks for the variance of those n_samples dot "
                      "products. (The all-pairs value is near d_k too, but its products are not "
                      "independent: each row of q is in n_samples of them.)"),
        Misconception("mean instead of variance", variance(statistic="mean"),
                      "you returned the mean of the dot products, which is about 0. The question "
                      "is how spread out they are: np.var."),
    ],
    bad_inputs=[
        BadInput(Case((0, 100, 0)), "d_k = 0: a vector needs at least one coordinate"),
        BadInput(Case((4, 1, 0)), "n_samples = 1: a variance needs at least two samples"),
        BadInput(Case((2.5, 100, 0)), "d_k = 2.5 is not a whole number"),
    ],
    rules=Rules(loops=True, why="Draw every sample at once (the given lines do) and reduce with "
                "array operations: a Python loop over thousands of samples is slow."),
    compare=Accepted(),
    hint=("The experiment measures the spread of the raw dot product q·k: one number per sample, "
          "then how spread out those numbers are. Keep the given lines that draw the samples, so "
          "that the check can repeat your draws."),
    arg_names=("d_k", "n_samples", "seed"), seed=206,
    stated=(Stated("keep them, so the check can repeat your draws", VALUES,
                   "Check that `rng`, `q` and `k` are drawn exactly as the given lines draw them"),
            Stated("without a Python loop", SOURCE_SCAN, "a Python loop over thousands of samples"),
            KEEP_THEM),
))
