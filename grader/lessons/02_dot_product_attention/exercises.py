"""Lesson 02 exercises: cases, misconceptions and rules for scaled dot-product attention.

The cases are chosen so that every misconception in the catalogue shows itself:

* the number of keys T_k, the number of queries T_q and the key width d_k all differ, so
  dividing by sqrt(T_k), sqrt(T_q), d_k or nothing each gives its own numbers;
* batched cases, where ``K.T`` reverses the batch axes too;
* d_v differs from d_k and from T_k, so a transposed V or the weights returned in place
  of the output show up in the shapes;
* "large scores" cases of several hundreds, where ``exp`` without subtracting the
  maximum overflows to ``inf / inf = nan``.

Every catalogued mistake is a core of ``reference.py`` with one knob set wrong.
"""
from __future__ import annotations

import numpy as np

from ...learner.shortcuts import Rules
from .. import BadInput, Case, Exercise, Misconception, knob, register
from ..cases import attention_quantities, normal, small_ints, with_variants
from ..messages import scaled_by_sqrt_d_model, softmax_over_queries
from . import reference as ref

# ----------------------------------------------------------------------------- rules

LIBRARY_ATTENTION = {
    "scaled_dot_product_attention": "torch.nn.functional.scaled_dot_product_attention",
    "_scaled_dot_product_attention_math": "torch's attention kernels",
    "_scaled_dot_product_flash_attention": "torch's attention kernels",
    "_scaled_dot_product_efficient_attention": "torch's attention kernels",
    "multi_head_attention_forward": "torch.nn.functional.multi_head_attention_forward",
    "MultiheadAttention": "torch.nn.MultiheadAttention",
    "MultiHeadAttention": "a library MultiHeadAttention layer",
    "dot_product_attention": "a library dot_product_attention",
}
LIBRARY_SOFTMAX = {
    "softmax": "a library softmax (scipy.special.softmax, torch.softmax, ...)",
    "log_softmax": "a library log_softmax",
}
# Caught under any alias, in whatever libraries the learner's kernel has imported.
ATTENTION_OBJECTS = (
    "torch.nn.functional.scaled_dot_product_attention",
    "torch.nn.functional.multi_head_attention_forward",
    "torch.nn.MultiheadAttention",
    "torch._C._nn.scaled_dot_product_attention",
    "torch.ops.aten.scaled_dot_product_attention",
)
SOFTMAX_OBJECTS = (
    "scipy.special.softmax",
    "scipy.special.log_softmax",
    "torch.softmax",
    "torch.log_softmax",
    "torch.nn.functional.softmax",
    "torch.nn.functional.log_softmax",
    "torch.special.softmax",
)
MATRIX_PRODUCTS = {
    "matmul": "np.matmul",
    "einsum": "np.einsum",
    "tensordot": "np.tensordot",
    "multi_dot": "np.linalg.multi_dot",
    "__matmul__": "the @ operator (via __matmul__)",
}

SOFTMAX_RULES = Rules(
    names=LIBRARY_SOFTMAX,
    objects=SOFTMAX_OBJECTS,
    why="Write softmax yourself from np.exp, np.max and np.sum: that is where the "
    "stability trick lives.",
)
ATTENTION_RULES = Rules(
    names=LIBRARY_ATTENTION,
    objects=ATTENTION_OBJECTS,
    why="The library computes attention for you, so it would hide every step this "
    "lesson is about. Build it from your attention_scores and softmax, then one product "
    "with V.",
)
ONE_QUERY_RULES = Rules(
    names={**LIBRARY_ATTENTION, **MATRIX_PRODUCTS},
    objects=ATTENTION_OBJECTS,
    matmul_operator=True,
    why="This exercise is the single-query sum written out: loop over the keys, score "
    "each one with q·k_i (np.sum(q * K[i]) or np.dot(q, K[i])), turn the scores into "
    "weights, and add up weight_i * V[i]. The matrix form comes in the exercise before.",
)
VARIANCE_RULES = Rules(
    loops=True,
    why="Draw every sample at once (the given lines do) and reduce with array "
    "operations: a Python loop over thousands of samples is slow.",
)


# ----------------------------------------------------------------------------- softmax

def softmax_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    cases = [
        Case((small_ints(rng, 3),), note="one vector"),
        Case((small_ints(rng, (2, 3)),), note="rows (axis=-1)"),
        Case((small_ints(rng, (3, 3)),), note="rows (axis=-1)"),
        Case((small_ints(rng, (3, 2)),), {"axis": 0}, note="columns (axis=0)"),
        Case((small_ints(rng, (2, 2, 3)),), note="batched rows"),
        Case((small_ints(rng, (2, 3, 2)),), {"axis": 1}, note="middle axis (axis=1)"),
        Case((np.array([1000.0, 999.0, 1001.0, 998.0]),), note="large scores"),
        Case((np.array([[1000.0, -1000.0, 0.0], [-1000.0, -999.0, -1001.0]]),),
             note="large scores, rows far apart"),
        Case((normal(rng, (2, 3, 4), 2.0),), note="random floats"),
    ]
    if hidden:
        cases[-1:-1] = [
            Case((small_ints(rng, 5),), note="one vector"),
            Case((small_ints(rng, (4, 4)),), {"axis": -2}, note="columns (axis=-2)"),
            Case((small_ints(rng, (3, 2, 4)),), {"axis": 0}, note="first axis (axis=0)"),
            Case((np.full((2, 3), 7.0),), note="equal scores"),
            Case((normal(rng, (3, 5), 600.0),), note="large scores"),
            Case((np.array([[-800.0, -801.0], [700.0, 705.0], [0.5, 0.25]]),), {"axis": -1},
                 note="large scores, rows far apart"),
            Case((normal(rng, (2, 4, 3), 400.0),), {"axis": 1}, note="large scores"),
        ]
    return with_variants(cases, hidden)


UNSTABLE_MESSAGE = (
    "your softmax overflows: np.exp of a score above about 709.8 (88.7 in float32) is "
    "inf, and inf / inf is nan. Shift each slice by its own largest score before np.exp (keep the axis so "
    "the shift broadcasts back): the common factor cancels in the division, so the "
    "weights are the same, but every exponent is now <= 0."
)

register(Exercise(
    name="softmax",
    reference=ref.softmax,
    cases=softmax_cases,
    misconceptions=[
        Misconception("unstable softmax", knob(ref._softmax, shift=None), UNSTABLE_MESSAGE),
        Misconception(
            "max of the whole array", knob(ref._softmax, shift="array"),
            "you subtract the largest entry of the whole array, not of each slice. When "
            "one row is near 1000 and another near -1000, every exponent of the second row "
            "underflows to 0 and it becomes 0 / 0 = nan. Take the max along `axis` with "
            "keepdims=True, so each slice is shifted by its own maximum.",
        ),
        Misconception(
            "ignores axis", knob(ref._softmax, along=-1),
            "your function always normalises along the last axis and ignores its `axis` "
            "argument. Pass `axis=axis` to every max and sum.",
        ),
        Misconception(
            "axis hard-coded to 0", knob(ref._softmax, along=0),
            "your function always normalises along axis 0, whatever `axis` it is given: on "
            "the input above (axis=-1, the default) each column of your result sums to 1 "
            "instead of each row. Use the `axis` argument in every max and every sum.",
        ),
        Misconception(
            "normalises the whole array", knob(ref._softmax, shift="array", total="array"),
            "all the entries of your result together sum to 1, instead of each slice "
            "along `axis`. Sum with `axis=axis, keepdims=True`.",
        ),
        Misconception(
            "sum without keepdims", knob(ref._softmax, keepdims=False),
            "you divide by a sum taken without keepdims=True. The sum loses the axis, so "
            "NumPy lines it up with the wrong axis when it broadcasts (or cannot line it "
            "up at all). Write `e.sum(axis=axis, keepdims=True)`.",
        ),
    ],
    bad_inputs=[
        BadInput(Case((np.float64(2.0),)), "x is a scalar: it has no axis to normalise over"),
        BadInput(Case((np.ones((2, 3)),), {"axis": 2}), "x has 2 axes, so axis=2 does not exist"),
        BadInput(Case((np.ones((2, 3)),), {"axis": 1.0}), "axis is 1.0, not an integer"),
    ],
    rules=SOFTMAX_RULES,
    arg_names=("x",),
    hint=("A softmax exponentiates and normalises along one axis. Shift each slice by its own "
          "maximum first (the shift cancels in the division), and keep the summed axis so "
          "that the shapes line up when you divide."),
    seed=201,
))


# ----------------------------------------------------------------------------- scores

# (Q shape, K shape). T_q, T_k and d_k differ wherever they can.
SCORE_SHAPES = [((2, 4), (3, 4)), ((2, 3, 4), (2, 3, 4)), ((3, 9), (2, 9)),
                ((2, 2, 4), (2, 5, 4)), ((1, 4), (3, 4))]
SCORE_SHAPES_HIDDEN = [((4, 16), (3, 16)), ((3, 2, 1, 4), (3, 2, 6, 4)), ((2, 4), (2, 5, 4)),
                       ((5, 4), (5, 4)), ((2, 3, 9), (2, 2, 9))]


def _shape_note(shape_q, shape_k) -> str:
    if len(shape_q) > 2 or len(shape_k) > 2:
        return "batched"
    return "one sequence"


def score_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    shapes = SCORE_SHAPES + (SCORE_SHAPES_HIDDEN if hidden else [])
    cases = [Case((small_ints(rng, q, -2, 2), small_ints(rng, k, -2, 2)), note=_shape_note(q, k))
             for q, k in shapes]
    cases.append(Case((normal(rng, (2, 3, 6)), normal(rng, (2, 4, 6))), note="random floats"))
    return with_variants(cases, hidden)


SEQ_LEN_MESSAGE = (
    "you divided by the square root of the sequence length (the number of tokens). The "
    "scale is sqrt(d_k), where d_k is the length of each query and key vector, the last "
    "axis of Q. The sum q·k has d_k terms, so its spread grows with d_k, whatever the "
    "number of tokens."
)
D_K_MESSAGE = (
    "you divided by d_k itself. Divide by its square root, `np.sqrt(d_k)`: a dot product "
    "of d_k random terms has a standard deviation of about sqrt(d_k), and dividing by "
    "that brings it back to about 1. Dividing by d_k shrinks the scores too much, so the "
    "weights come out too flat."
)
NO_SCALE_MESSAGE = (
    "your scores are not scaled. Divide Q Kᵀ by the square root of d_k, the length of "
    "each query vector: without it the scores grow with d_k and the softmax saturates "
    "to almost one-hot weights."
)
K_DOT_T_MESSAGE = (
    "you transposed K with `K.T`. On a batched array `.T` reverses every axis, so "
    "[batch, T_k, d_k] becomes [d_k, T_k, batch]. Swap only the last two axes: "
    "`np.swapaxes(K, -1, -2)`, which works for any number of batch axes."
)

# (name, what the scores are divided by, message): wrong settings of `divide_by`.
WRONG_SCALES = [
    ("scaled by sqrt(T_k)", "sqrt(T_k)", SEQ_LEN_MESSAGE),
    ("scaled by sqrt(T_q)", "sqrt(T_q)", SEQ_LEN_MESSAGE),
    ("scaled by d_k", "d_k", D_K_MESSAGE),
    ("no scaling", "1", NO_SCALE_MESSAGE),
]
K_DOT_T = knob(ref._scores, transpose="every axis")

register(Exercise(
    name="attention_scores",
    quantities=attention_quantities,
    reference=ref.attention_scores,
    cases=score_cases,
    misconceptions=[
        *(Misconception(name, knob(ref._scores, divide_by=divisor), message)
          for name, divisor, message in WRONG_SCALES),
        Misconception("K.T on a batched array", K_DOT_T, K_DOT_T_MESSAGE),
        Misconception(
            "K Qᵀ", knob(ref._scores, queries_first=False),
            "your result is K Qᵀ, the transpose of the scores: entry [i, j] must be query i "
            "dotted with key j, so Q comes first: Q Kᵀ.",
        ),
    ],
    bad_inputs=[
        BadInput(Case((np.ones((2, 3)), np.ones((2, 4)))), "Q has d_k = 3 but K has d_k = 4"),
        BadInput(Case((np.ones(4), np.ones((3, 4)))), "Q is one vector, not a matrix of queries"),
        BadInput(Case((np.ones((2, 3, 4)), np.ones((3, 5, 4)))),
                 "the batch axes 2 and 3 do not broadcast"),
    ],
    rules=ATTENTION_RULES,
    arg_names=("Q", "K"),
    hint=("Entry [..., i, j] is query i dotted with key j, divided by the square root of the "
          "width of the keys. Check your result's shape on the input above first, then one "
          "entry by hand."),
    seed=202,
))


# ----------------------------------------------------------------------------- attention

# (Q, K, V) shapes: T_q != T_k, d_k != d_v, T_k != d_k, T_k != d_v unless noted.
ATTENTION_SHAPES = [
    ((2, 4), (3, 4), (3, 2)),
    ((2, 3, 4), (2, 3, 4), (2, 3, 4)),          # the lesson's [2, 3, 4] example
    ((3, 4), (2, 4), (2, 5)),
    ((2, 2, 4), (2, 5, 4), (2, 5, 3)),
    ((1, 9), (4, 9), (4, 2)),
]
ATTENTION_SHAPES_HIDDEN = [
    ((4, 16), (3, 16), (3, 5)),
    ((2, 3, 2, 4), (2, 3, 6, 4), (2, 3, 6, 1)),
    ((2, 4), (2, 3, 4), (2, 3, 3)),             # broadcast Q over a batch; T_k == d_v
    ((3, 1, 4), (3, 5, 4), (3, 5, 2)),
    ((2, 3, 9), (2, 2, 9), (2, 2, 6)),
]


def attention_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    shapes = ATTENTION_SHAPES + (ATTENTION_SHAPES_HIDDEN if hidden else [])
    cases = []
    for q, k, v in shapes:
        note = "batched" if max(len(q), len(k)) > 2 else "one sequence"
        if q == (2, 3, 4) and k == q:
            note = "the [2, 3, 4] example"
        cases.append(Case((small_ints(rng, q, -2, 2), small_ints(rng, k, -2, 2),
                           small_ints(rng, v)), note=note))
    large = Case((normal(rng, (2, 3, 4)), normal(rng, (2, 4, 4)), normal(rng, (2, 4, 2))))
    cases.append(scaled_qk(large, 1500.0, "large scores"))
    if hidden:
        cases.append(scaled_qk(Case((normal(rng, (3, 8)), normal(rng, (5, 8)), normal(rng, (5, 3)))),
                               900.0, "large scores"))
    cases.append(Case((normal(rng, (2, 3, 6)), normal(rng, (2, 4, 6)), normal(rng, (2, 4, 5))),
                      note="random floats"))
    return with_variants(cases, hidden)


def scaled_qk(case: Case, top: float, note: str) -> Case:
    """Scale Q and K (not V) so that the largest score is ``top``: far beyond where
    ``np.exp`` overflows (about 709)."""
    Q, K, V = case.args
    scores = np.matmul(np.atleast_2d(Q), np.swapaxes(K, -1, -2)) / np.sqrt(Q.shape[-1])
    if scores.max() < -scores.min():
        Q = -Q  # so that the score largest in size is positive: that is what overflows
    factor = np.sqrt(top / np.abs(scores).max())
    return Case((Q * factor, K * factor, V), note=note, tol=case.tol)


WHOLE_ARRAY_MESSAGE = (
    "your softmax normalises the whole array (or each whole score matrix) at once, so "
    "all weights together sum to 1. Each query shares out its own attention: normalise "
    "each row, along the key axis, `axis=-1`."
)
TRANSPOSED_V_MESSAGE = (
    "you multiplied the weights by Vᵀ. V holds one value vector per key, as rows "
    "([T_k, d_v]), and the weights are [T_q, T_k]: `weights @ V` mixes the rows of V "
    "directly, with no transpose."
)
AXIS_0_MESSAGE = (
    "your softmax runs along axis 0, the first axis of the scores. On one sequence that "
    "is the query axis, so each column of the weights sums to 1; on a batch it is the batch "
    "axis, and the weights mix different sequences. Row i holds the weights query i gives "
    "to the keys: take the softmax over the keys, the last axis, whatever the number of "
    "batch axes."
)
OUTPUT_ALONE_MESSAGE = (
    "you returned the output alone. This function returns two things, as a pair: the output "
    "first, then the weights that made it. The weights are what this lesson's heatmaps "
    "draw, and what the next lessons read."
)
WEIGHTS_AS_OUTPUT_MESSAGE = (
    "you returned the attention weights where the output belongs. Return the pair "
    "(output, weights), in that order: the weights say how much of each value to take, "
    "the output is the mixture of the values they make."
)

def attention_calls(Q, K, V):
    """The reference's calls on the learner's helpers (its stand-ins, see Exercise.calls)."""
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    return [("attention_scores", (Q, K), {}),
            ("softmax", (ref.attention_scores(Q, K),), {"axis": -1})]


register(Exercise(
    name="scaled_dot_product_attention",
    probes=("K", "V"),
    outputs=("output", "weights"),
    quantities=attention_quantities,
    reference=ref.scaled_dot_product_attention,
    calls=attention_calls,
    cases=attention_cases,
    misconceptions=[
        *(Misconception(name, knob(ref._attention, scores=knob(ref._scores, divide_by=divisor)),
                        message)
          for name, divisor, message in WRONG_SCALES),
        Misconception("softmax over the query axis", knob(ref._attention, softmax_axis=-2),
                      softmax_over_queries("`axis=-2`", "`axis=-1`, the key axis")),
        Misconception("softmax along axis 0", knob(ref._attention, softmax_axis=0),
                      AXIS_0_MESSAGE),
        Misconception("softmax over the whole array",
                      knob(ref._attention, weights_by=knob(ref._softmax, shift="array",
                                                           total="array")),
                      WHOLE_ARRAY_MESSAGE),
        Misconception("softmax over each whole matrix",
                      knob(ref._attention, weights_by=knob(ref._softmax, shift="matrix",
                                                           total="matrix")),
                      WHOLE_ARRAY_MESSAGE),
        Misconception("unstable softmax",
                      knob(ref._attention, weights_by=knob(ref._softmax, shift=None)),
                      UNSTABLE_MESSAGE),
        Misconception("K.T on a batched array", knob(ref._attention, scores=K_DOT_T),
                      K_DOT_T_MESSAGE),
        Misconception("transposed V", knob(ref._attention, values_transposed=True),
                      TRANSPOSED_V_MESSAGE),
        Misconception("weights returned first", knob(ref._attention, returns="weights, output"),
                      WEIGHTS_AS_OUTPUT_MESSAGE),
        Misconception("weights returned alone", knob(ref._attention, returns="weights"),
                      WEIGHTS_AS_OUTPUT_MESSAGE),
        Misconception("output returned alone", knob(ref._attention, returns="output"),
                      OUTPUT_ALONE_MESSAGE),
    ],
    bad_inputs=[
        BadInput(Case((np.ones((2, 4)), np.ones((3, 4)), np.ones((4, 2)))),
                 "K has 3 rows (keys) but V has 4"),
        BadInput(Case((np.ones((2, 3)), np.ones((3, 4)), np.ones((3, 2)))),
                 "Q has d_k = 3 but K has d_k = 4"),
        BadInput(Case((np.ones((2, 4)), np.ones((3, 4)), np.ones(3))),
                 "V is one vector, not one value vector per key"),
    ],
    rules=ATTENTION_RULES,
    arg_names=("Q", "K", "V"),
    hint=("Attention is two steps: weights from the scaled scores, by a softmax over the "
          "keys, then a weighted sum of the value rows. The function returns both, the output "
          "first."),
    seed=203,
))


# ----------------------------------------------------------------------------- one query

# (T_k, d_k, d_v): T_k != d_k != d_v.
ONE_QUERY_SHAPES = [(3, 4, 2), (2, 4, 5), (4, 9, 3), (1, 4, 3)]
ONE_QUERY_SHAPES_HIDDEN = [(5, 16, 2), (6, 4, 1), (3, 1, 4), (2, 2, 2)]


def one_query_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    shapes = ONE_QUERY_SHAPES + (ONE_QUERY_SHAPES_HIDDEN if hidden else [])
    cases = [Case((small_ints(rng, d_k, -2, 2), small_ints(rng, (t, d_k), -2, 2),
                   small_ints(rng, (t, d_v))), note="small integers") for t, d_k, d_v in shapes]
    cases.append(scaled_qk(Case((normal(rng, 4), normal(rng, (5, 4)), normal(rng, (5, 3)))),
                           1200.0, "large scores"))
    if hidden:
        cases.append(scaled_qk(Case((normal(rng, 8), normal(rng, (3, 8)), normal(rng, (3, 2)))),
                               800.0, "large scores"))
    cases.append(Case((normal(rng, 6), normal(rng, (4, 6)), normal(rng, (4, 5))),
                      note="random floats"))
    return with_variants(cases, hidden)


register(Exercise(
    name="attend_one_query",
    probes=("K", "V"),
    quantities=attention_quantities,
    reference=ref.attend_one_query,
    cases=one_query_cases,
    misconceptions=[
        Misconception(
            "no scaling", knob(ref._attend_one_query, divide_by="1"),
            "your scores are not scaled. The sum is often quoted with e^(q·k_i); the transformer "
            "divides each q·k_i by sqrt(d_k) first (d_k = len(q)), so that this function "
            "equals a row of scaled_dot_product_attention.",
        ),
        Misconception("scaled by sqrt(T_k)", knob(ref._attend_one_query, divide_by="sqrt(T_k)"),
                      SEQ_LEN_MESSAGE),
        Misconception("scaled by d_k", knob(ref._attend_one_query, divide_by="d_k"), D_K_MESSAGE),
        Misconception("unstable exponentials", knob(ref._attend_one_query, stable=False),
                      "your exponentials overflow: np.exp of a score above about 709.8 "
                      "(88.7 in float32) gives inf, and inf / inf is nan. Subtract the largest score from every score "
                      "before np.exp; the factor cancels when you divide by the sum."),
        Misconception("weights not normalised", knob(ref._attend_one_query, normalised=False),
                      "your weights do not sum to 1: you used e^(s_i) as the weight of v_i "
                      "without dividing by the sum of e^(s_j) over all keys j."),
        Misconception("returns the weights", knob(ref._attend_one_query, returns="weights"),
                      "you returned the weights, one per key. The function returns the "
                      "weighted sum of the value vectors, sum over i of weight_i * V[i], "
                      "one number per column of V (d_v of them)."),
    ],
    bad_inputs=[
        BadInput(Case((np.ones((2, 4)), np.ones((3, 4)), np.ones((3, 2)))),
                 "q is a matrix, but this function takes one query vector"),
        BadInput(Case((np.ones(3), np.ones((3, 4)), np.ones((3, 2)))),
                 "q has length 3 but the keys have length 4"),
        BadInput(Case((np.ones(4), np.ones((3, 4)), np.ones((2, 2)))),
                 "K has 3 rows (keys) but V has 2"),
    ],
    rules=ONE_QUERY_RULES,
    arg_names=("q", "K", "V"),
    hint=("For one query: score every key, scale the scores by the square root of d_k, turn "
          "them into weights that sum to 1 (stably), and add up the value vectors with those "
          "weights. Redo the input above key by key."),
    seed=204,
))


# ----------------------------------------------------------------------------- self-attention

# (X shape, d_k, d_v): d_model, d_k, d_v and T all differ, except in the smallest case,
# where T = d_k = d_v: a projection written in the column convention (W_q @ X) fits
# there, so it is not mistaken for a transposed weight (X @ W_q.T), which raises.
SELF_SHAPES = [((3, 5), 2, 4), ((2, 3, 5), 4, 2), ((4, 6), 3, 2),
               ((2, 3), 2, 2)]
SELF_SHAPES_HIDDEN = [((2, 4, 8), 4, 3), ((1, 3), 2, 1), ((3, 2, 4, 5), 2, 3), ((5, 4), 1, 6)]


def self_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    shapes = SELF_SHAPES + (SELF_SHAPES_HIDDEN if hidden else [])
    cases = []
    for x, d_k, d_v in shapes:
        d_model = x[-1]
        cases.append(Case((small_ints(rng, x, -1, 1), small_ints(rng, (d_model, d_k), -1, 1),
                           small_ints(rng, (d_model, d_k), -1, 1), small_ints(rng, (d_model, d_v))),
                          note="batched" if len(x) > 2 else "one sequence"))
    cases.append(Case((normal(rng, (2, 3, 6)), normal(rng, (6, 4)), normal(rng, (6, 4)),
                       normal(rng, (6, 5))), note="random floats"))
    return with_variants(cases, hidden)


def self_attention_calls(X, W_q, W_k, W_v):
    X = np.asarray(X, dtype=float)
    return [("scaled_dot_product_attention", (X @ np.asarray(W_q, dtype=float),
                                              X @ np.asarray(W_k, dtype=float),
                                              X @ np.asarray(W_v, dtype=float)), {})]


register(Exercise(
    name="self_attention",
    probes=("X", "W_q", "W_k", "W_v"),
    outputs=("output", "weights"),
    reference=ref.self_attention,
    calls=self_attention_calls,
    cases=self_cases,
    misconceptions=[
        Misconception(
            "no projections", knob(ref._self_attention, projected=False),
            "you used X itself as queries, keys and values. Project it first: Q = X @ W_q, "
            "K = X @ W_k, V = X @ W_v. The learned matrices are what let a token ask for "
            "something other than tokens that look like itself.",
        ),
        Misconception(
            "scaled by sqrt(d_model)", knob(ref._self_attention, divide_by="sqrt(d_model)"),
            scaled_by_sqrt_d_model("d_k = W_q.shape[1]",
                                   "√d_k, the width of the projected queries and keys"),
        ),
        Misconception("no scaling", knob(ref._self_attention, divide_by="1"), NO_SCALE_MESSAGE),
        Misconception(
            "keys projected with W_q", knob(ref._self_attention, keys_by="W_q"),
            "your keys come from W_q: K must be X @ W_k. With the same matrix for both, "
            "the scores are symmetric, and a token can only look for tokens like itself.",
        ),
        Misconception("weights returned first",
                      knob(ref._self_attention, returns="weights, output"),
                      WEIGHTS_AS_OUTPUT_MESSAGE),
        Misconception(
            "weights transposed", knob(ref._self_attention, weights_transposed=True),
            "you multiplied X by a transposed weight matrix. X is [..., T, d_model] and W_q is "
            "[d_model, d_k]: multiplied as given, they already make one query of length d_k per "
            "token. Transposed, W_q is [d_k, d_model] (the layout of an nn.Linear weight), and "
            "its rows no longer line up with the d_model features of X: that is numpy's "
            "ValueError on this valid input. The weights here are stored [d_model, d_out]: use "
            "all three as given.",
        ),
    ],
    bad_inputs=[
        BadInput(Case((np.ones((3, 5)), np.ones((4, 2)), np.ones((5, 2)), np.ones((5, 3)))),
                 "W_q has 4 rows but X has d_model = 5 columns"),
        BadInput(Case((np.ones((3, 5)), np.ones((5, 2)), np.ones((5, 3)), np.ones((5, 3)))),
                 "W_q gives queries of length 2 but W_k gives keys of length 3"),
        BadInput(Case((np.ones(5), np.ones((5, 2)), np.ones((5, 2)), np.ones((5, 3)))),
                 "X is one vector, not a sequence of tokens"),
    ],
    rules=ATTENTION_RULES,
    arg_names=("X", "W_q", "W_k", "W_v"),
    hint=("Self-attention makes the queries, keys and values from X with the three weight "
          "matrices, then attends. Check the shapes of your projections on the input above: "
          "d_k and d_v come from the weights."),
    seed=205,
))


# ----------------------------------------------------------------------------- variance

NEAR_D_K_MESSAGE = (
    "Your value is near d_k = {d_k}, so it measures the right kind of spread, but it is not "
    "the variance of the n_samples dot products of the given draws, row i of q with row i "
    "of k. Check that `rng`, `q` and `k` are drawn exactly as the given lines draw them (the "
    "check repeats those draws), and that each dot product pairs one row of q with the same "
    "row of k"
)


def variance_meta(d_k: int, n_samples: int, seed: int) -> dict:
    """What the comparison needs beside the reference's value (``case.meta``): the other
    estimates a correct solution may return (the variance with ddof=1, and the mean square,
    since the true mean of q·k is 0), and the band around d_k, four standard errors wide,
    where a value drawn from other samples lands."""
    q, k = ref.score_samples(d_k, n_samples, seed)
    dots = np.sum(q * k, axis=-1)
    standard_error = np.sqrt((2 * d_k ** 2 + 6 * d_k) / n_samples)
    return {"accept": [float(np.var(dots, ddof=1)), float(np.mean(dots ** 2))],
            "near": {"value": float(d_k), "within": float(4 * standard_error),
                     "message": NEAR_D_K_MESSAGE.format(d_k=d_k)}}


def variance_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    # Sizes and seeds only: the function draws its own samples from the seed.
    settings = [(4, 2000, 0), (16, 2000, 1), (64, 1000, 2), (1, 3000, 3), (256, 500, 4)]
    if hidden:
        settings += [(2, 5000, 11), (8, 800, 12), (32, 1500, 13), (128, 600, 14), (3, 50, 15)]
    return [Case((d_k, n, seed), note=f"d_k = {d_k}", meta=variance_meta(d_k, n, seed))
            for d_k, n, seed in settings]


register(Exercise(
    name="score_variance",
    reference=ref.score_variance,
    cases=variance_cases,
    misconceptions=[
        Misconception(
            "variance of the scaled scores", knob(ref._score_variance, scaled=True),
            "you measured the variance after dividing by sqrt(d_k), which is about 1 for "
            "every d_k. This function measures the raw q·k, to show why the scaling is "
            "needed: leave the division out here.",
        ),
        Misconception(
            "standard deviation", knob(ref._score_variance, statistic="standard deviation"),
            "you returned the standard deviation (about sqrt(d_k)). Return the variance, "
            "its square: np.var.",
        ),
        Misconception(
            "variance of the products", knob(ref._score_variance, summed_over=None),
            "you took the variance of the elementwise products q_i k_i (about 1). Add up "
            "each sample's d_k products first, to get one dot product per sample, then take "
            "the variance of those n_samples numbers.",
        ),
        Misconception(
            "summed over the samples", knob(ref._score_variance, summed_over=0),
            "you summed q * k over the samples axis (axis=0). One dot product q·k sums over "
            "the d_k coordinates of one sample, the last axis.",
        ),
        Misconception(
            "variance over all pairs", knob(ref._score_variance, pairs="all"),
            "you took the variance over all n_samples × n_samples pairs: q @ k.T dots every "
            "query with every key. The draws make n_samples pairs, row i of q with row i of k, "
            "and the experiment asks for the variance of those n_samples dot products. (The "
            "all-pairs value is near d_k too, but it is not that variance: each row of q "
            "appears in n_samples of its products, so they are not independent samples.)",
        ),
        Misconception(
            "mean instead of variance", knob(ref._score_variance, statistic="mean"),
            "you returned the mean of the dot products, which is about 0. The question is "
            "how spread out they are: np.var.",
        ),
    ],
    bad_inputs=[
        BadInput(Case((0, 100, 0)), "d_k = 0: a vector needs at least one coordinate"),
        BadInput(Case((4, 1, 0)), "n_samples = 1: a variance needs at least two samples"),
        BadInput(Case((2.5, 100, 0)), "d_k = 2.5 is not a whole number"),
    ],
    rules=VARIANCE_RULES,
    compare={"kind": "accepted"},
    arg_names=("d_k", "n_samples", "seed"),
    hint=("The experiment measures the spread of the raw dot product q·k: one number per "
          "sample, then how spread out those numbers are. Keep the given lines that draw the "
          "samples, so that the check can repeat your draws."),
    seed=206,
))
