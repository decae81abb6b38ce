"""Lesson 04 exercises: causal and padding masks, masked softmax and attention, the column
convention, torch's opposite polarity, the prefix average and the causal property.

Masks are boolean with True = may attend (except ``to_mha_key_padding_mask``, whose whole
point is torch's True = ignore). Case variants convert only the float arguments to
float32 or lists: a mask stays a boolean array.

Every catalogued mistake is a core of ``reference.py`` with one knob set wrong.
"""
from __future__ import annotations

import numpy as np

from ...learner.fixtures import ATTENDS, attend_fixture
from ...learner.shortcuts import Rules
from .. import BadInput, Case, Exercise, Misconception, knob, register
from ..cases import attention_quantities, floats, normal, small_ints, with_variants
from ..messages import inverted_polarity, softmax_over_queries
from . import reference as ref


FLOAT_MASK = (
    "your mask holds the floats 0.0 and 1.0. A mask is boolean: np.where(mask, ...) and ~mask "
    "need dtype bool (a float mask would also be *added* to the scores by torch). Build it "
    "with dtype=bool or with a comparison."
)
NO_DIAGONAL = (
    "your mask leaves out the diagonal, so a token cannot attend to itself (and row 0 has "
    "no allowed key at all). Causal means key j ≤ query i, including j = i: use "
    "np.tril(..., k=0), not k=-1."
)


# ============================================================================= causal_mask

register(Exercise(
    name="causal_mask",
    reference=ref.causal_mask,
    cases=lambda rng, hidden: [
        Case((T,), note="T = 1, one token sees itself" if T == 1 else f"T = {T}")
        for T in ([1, 2, 3, 4, 6] + ([5, 7, 9, np.int64(8)] if hidden else []))
    ],
    misconceptions=[
        Misconception(
            "inverted polarity", knob(ref._causal, invert=True),
            inverted_polarity("the future keys", "the keys j ≤ i of row i (np.tril, not np.triu)"),
        ),
        Misconception("diagonal excluded", knob(ref._causal, with_diagonal=False), NO_DIAGONAL),
        Misconception(
            "sees one token ahead", knob(ref._causal, ahead=1),
            "your mask lets query i see key i + 1, one token into the future. The diagonal "
            "offset is off by one: np.tril(..., k=0) keeps keys j ≤ i only.",
        ),
        Misconception(
            "column convention", knob(ref._causal, columns=True),
            "your mask is upper triangular: that is the causal mask with keys as rows and "
            "queries as columns (the column convention, section 7 of this lesson). Here "
            "row i is query i, so it may see the keys left of and on the diagonal: np.tril.",
        ),
        Misconception("float mask", knob(ref._causal, dtype=float), FLOAT_MASK),
    ],
    bad_inputs=[
        BadInput(Case((0,)), "T = 0 is not a sequence length"),
        BadInput(Case((2.5,)), "T = 2.5 is not a whole number"),
    ],
    arg_names=("T",),
    hint=("Row i of the mask belongs to query i, which may attend to key j when j is not "
          "after i. Look at row 0 and at the diagonal of your mask for the input above."),
    seed=401,
))


# ============================================================================= causal_mask_columns

def _columns(**wrong):
    """The column-convention mask with one more knob set wrong."""
    return knob(ref._causal, columns=True, **wrong)


register(Exercise(
    name="causal_mask_columns",
    reference=ref.causal_mask_columns,
    cases=lambda rng, hidden: [
        Case((T,), note=f"T = {T}") for T in ([1, 2, 3, 5] + ([4, 6, 8] if hidden else []))
    ],
    misconceptions=[
        Misconception(
            "row convention", knob(ref._causal, columns=False),
            "this is the row-convention mask (queries as rows). With tokens as columns, "
            "entry [i, j] pairs key i with query j, so it is True where i ≤ j: the transpose, "
            "np.triu. The masked scores sit below the diagonal.",
        ),
        Misconception(
            "diagonal excluded", _columns(with_diagonal=False),
            "your mask leaves out the diagonal, so a token cannot attend to itself. Key i may "
            "be seen by query j when i ≤ j, including i = j: np.triu(..., k=0).",
        ),
        Misconception(
            "inverted polarity", _columns(invert=True),
            inverted_polarity("the keys that come after their query",
                              "key i for query j when i ≤ j: the upper triangle with its diagonal"),
        ),
        Misconception("float mask", _columns(dtype=float), FLOAT_MASK),
    ],
    bad_inputs=[BadInput(Case((-1,)), "T = -1 is not a sequence length")],
    arg_names=("T",),
    hint=("Here keys are rows and queries are columns: the mask is the row convention's, "
          "transposed."),
    seed=402,
))


# ============================================================================= padding_mask

def padding_cases(rng, hidden):
    cases = [
        Case(([1], 1), note="one token, no padding"),
        Case(([2, 1], 2)),
        Case(([3, 2], 3), note="the [2, 3] batch: one padded sentence"),
        Case((np.array([4, 1, 3]), 4), note="lengths as an array"),
        Case(([2, 0], 3), note="an empty sentence"),
        Case(([3, 3], 5), note="both padded"),
    ]
    if hidden:
        for B, T in [(1, 4), (3, 6), (4, 2), (2, 7)]:
            cases.append(Case((rng.integers(0, T + 1, size=B), T), note="random lengths"))
        cases.append(Case(([5, 5], 5), note="no padding at all"))
    return cases


register(Exercise(
    name="padding_mask",
    reference=ref.padding_mask,
    cases=padding_cases,
    misconceptions=[
        Misconception("inverted polarity", knob(ref._padding, invert=True),
                      inverted_polarity("the padding", "the real tokens")),
        Misconception(
            "one padding token too many", knob(ref._padding, extra_real=1),
            "your mask lets each sentence keep one padding position: position j is real when "
            "j < length, not j ≤ length (positions count from 0).",
        ),
        Misconception(
            "left padding", knob(ref._padding, padded_on="left"),
            "your mask marks the *last* tokens as real, as if the padding came first. Here "
            "sentences are padded on the right: the first lengths[b] positions are real.",
        ),
        Misconception(
            "transposed", knob(ref._padding, transposed=True),
            "your mask is [T, B]: one row per position. It should be [B, T], one row per "
            "sentence: compare np.arange(T)[None, :] with lengths[:, None].",
        ),
        Misconception("float mask", knob(ref._padding, dtype=float), FLOAT_MASK),
    ],
    bad_inputs=[
        BadInput(Case(([4, 2], 3)), "a length (4) is larger than T = 3"),
        BadInput(Case(([2, -1], 3)), "a length is negative"),
        BadInput(Case(([[2, 1]], 3)), "lengths is 2-D, not one length per sentence"),
        BadInput(Case(([1.5, 2], 3)), "1.5 is not a whole number of tokens"),
    ],
    arg_names=("lengths", "T"),
    hint=("Position j of sentence b is a real token when j is less than that sentence's "
          "length. Compare a row of positions with a column of lengths and let broadcasting "
          "build the [B, T] grid."),
    seed=403,
))


# ============================================================================= attention_mask

def attention_cases(rng, hidden):
    cases = [
        Case(([1], 1), note="one token"),
        Case(([2, 1], 2), note="causal"),
        Case(([2, 1], 2), {"causal": False}, note="padding only"),
        Case(([3, 2], 3), note="the [2, 3] batch, causal"),
        Case(([3, 2], 3), {"causal": False}, note="the [2, 3] batch, padding only"),
        Case(([1, 3, 0], 3), {"causal": False}, note="an empty sentence"),
        Case(([4, 2], 4), {"causal": True}, note="causal"),
    ]
    if hidden:
        for B, T in [(2, 5), (3, 4), (1, 6)]:
            for causal in (True, False):
                cases.append(Case((rng.integers(1, T + 1, size=B), T), {"causal": causal},
                                  note="random lengths"))
    return cases


def attention_mask_calls(lengths, T, causal=True):
    """The reference's calls on the learner's helpers (its stand-ins, see Exercise.calls)."""
    return [("padding_mask", (lengths, T), {})] + ([("causal_mask", (T,), {})] if causal else [])


register(Exercise(
    name="attention_mask",
    reference=ref.attention_mask,
    calls=attention_mask_calls,
    cases=attention_cases,
    misconceptions=[
        Misconception(
            "padding masks the queries", knob(ref._attention_mask, padding_on="queries"),
            "you masked the padded *queries* (rows) instead of the padded *keys* (columns). "
            "Padding must stop every query from looking at a padding token, so it masks "
            "column j of every row: padding[:, None, :], not padding[:, :, None]. With "
            "causal=False your mask still lets real tokens attend to the padding.",
        ),
        Misconception(
            "padding masks queries and keys", knob(ref._attention_mask, padding_on="both"),
            "you masked the padded queries' rows as well as the padded keys. Only keys are "
            "masked here (padding[:, None, :]): a padding query's output is simply ignored "
            "later, and blanking its whole row leaves it with no allowed key at all.",
        ),
        Misconception(
            "combined with or", knob(ref._attention_mask, combine="or"),
            "you combined the two masks with | (or). A key is allowed only if it is a real "
            "token *and* not in the future: combine them with &.",
        ),
        Misconception(
            "causal flag ignored", knob(ref._attention_mask, always_causal=True),
            "your mask is causal even when causal=False. With causal=False only the padding "
            "is masked: broadcast padding[:, None, :] to [B, T, T].",
        ),
        Misconception(
            "inverted polarity", knob(ref._attention_mask, invert=True),
            inverted_polarity("the padding and the future keys",
                              "the real keys that are not in the future"),
        ),
        Misconception("diagonal excluded", knob(ref._attention_mask, with_diagonal=False),
                      NO_DIAGONAL),
    ],
    bad_inputs=[
        BadInput(Case(([3, 4], 3)), "a length (4) is larger than T = 3"),
        BadInput(Case(([2, 1], 0)), "T = 0 is not a sequence length"),
    ],
    arg_names=("lengths", "T"),
    hint=("A key may be attended when it is a real token and not in the future. The padding "
          "part is the same for every query and the causal part the same for every sentence: "
          "give each the axis it lacks, and combine them with a logical and."),
    seed=404,
))


# ============================================================================= masked_softmax
# The mistakes masked_softmax and masked_attention share: the same softmax knob, reached
# through either core.

AFTER_SOFTMAX = (
    "you applied the mask after the softmax (softmax, then multiply by the mask). The "
    "masked keys' share is simply thrown away, so the allowed weights no longer sum to 1, and "
    "they still depend on the masked scores through the softmax's denominator. Mask first: "
    "give the masked keys a score of −∞ wherever the mask is False, then take the softmax."
)
AFTER_SOFTMAX_RENORMALISED = (
    "you took the softmax first, zeroed the masked weights and divided by the new row sum. "
    "That is exact on paper, but when a masked key has a much larger score than the allowed "
    "ones, the allowed weights underflow to 0 *before* you mask, and the division is 0/0 = "
    "NaN. Mask first: set the masked scores to −∞, then take the softmax."
)
ZERO_FILL = (
    "you replaced the masked scores with 0 instead of −∞. A score of 0 is an ordinary score: "
    "exp(0) = 1, so masked keys still get weight (more than allowed keys with negative "
    "scores). Fill with -np.inf so that their weight is exp(−∞) = 0."
)
LARGE_NEGATIVE = (
    "you filled the masked scores with a large negative number (like -1e9) instead of −∞. "
    "That works while a row has an allowed key, but in a row where *every* key is masked all "
    "scores are equal, so the softmax spreads weight evenly over keys that are all forbidden. "
    "Use -np.inf, and give a row with no allowed key zeros explicitly."
)
NAN_ROWS = (
    "a row with no allowed key comes out as NaN. With every score −∞, the row maximum is −∞ "
    "and exp(−∞ − (−∞)) = exp(NaN); the sum is 0 and 0/0 = NaN. Such a row must be all zeros: "
    "shift by 0 where the maximum is −∞, and divide only where the sum is positive, "
    "leaving zeros elsewhere."
)
INVERTED_SOFTMAX = inverted_polarity(
    "the keys you set to −∞", "keeping the score where the mask is True and putting −∞ where "
    "it is False")


def softmax_mistakes(core) -> list[Misconception]:
    """The masked softmax's own mistakes, as knobs of ``core`` (the masked softmax, or
    masked attention, which hands its softmax knobs on)."""
    return [
        Misconception("mask after the softmax", knob(core, mask_applied="after"), AFTER_SOFTMAX),
        Misconception("masked with 0", knob(core, fill=0.0), ZERO_FILL),
        Misconception("-1e9 leaks into a fully masked row", knob(core, fill=-1e9), LARGE_NEGATIVE),
        Misconception("inverted polarity", knob(core, true_means="ignore"), INVERTED_SOFTMAX),
        Misconception("NaN rows", knob(core, guard_empty_rows=False), NAN_ROWS),
    ]


def softmax_cases(rng, hidden):
    causal3 = ref.causal_mask(3)
    cases = [
        Case((np.array([[2.0]]), np.array([[True]])), note="one key"),
        Case((np.array([[1.0, 3.0]]), np.array([[True, False]])), note="one key masked"),
        Case((small_ints(rng, (2, 2)), ref.causal_mask(2)), note="causal"),
        Case((np.array([[1.0, -2.0, 0.0], [2.0, 1.0, 3.0]]),
              np.array([[True, False, True], [False, False, False]])),
             note="row 1 has no allowed key"),
        Case((small_ints(rng, (3, 3)), causal3), note="causal"),
        Case((small_ints(rng, (2, 3, 3)), ref.attention_mask([3, 2], 3)),
             note="the [2, 3] batch, padding and causal"),
        Case((small_ints(rng, (2, 3, 3)), ref.attention_mask([3, 0], 3, causal=False)),
             note="an empty sentence: no allowed key"),
        Case((small_ints(rng, (2, 3, 4)), ref.padding_mask([4, 2], 4)[:, None, :]),
             note="a [B, 1, T_k] key-padding mask broadcasts"),
        Case((np.array([[0.0, 1.0, 900.0]]), np.array([[True, True, False]])),
             note="large values: the masked key has the largest score"),
        Case((np.array([[1000.0, 999.0, -1000.0]]), np.array([[True, True, False]])),
             note="large values"),
        Case((normal(rng, (2, 4, 5), 2.0), rng.random((2, 4, 5)) < 0.6), note="random masks"),
    ]
    if hidden:
        cases += [
            Case((small_ints(rng, (4, 4)), ref.causal_mask(4)), note="causal"),
            Case((normal(rng, (3, 2, 4)), ref.causal_mask(4)[1:3]), note="T_q ≠ T_k"),
            Case((normal(rng, (2, 2, 3, 3)), ref.attention_mask([3, 1], 3)[:, None]),
                 note="heads axis"),
            Case((normal(rng, (5,)), np.array([True, False, True, True, False])), note="a 1-D row"),
            Case((normal(rng, (2, 3), 300.0), np.array([True, True, False])), note="large values"),
            Case((normal(rng, (3, 6, 6)), rng.random((3, 6, 6)) < 0.3), note="random masks"),
        ]
    return with_variants(cases, hidden, only=floats)


register(Exercise(
    name="masked_softmax",
    reference=ref.masked_softmax,
    cases=softmax_cases,
    misconceptions=[
        *softmax_mistakes(ref._masked_softmax),
        Misconception("mask after the softmax, renormalised",
                      knob(ref._masked_softmax, mask_applied="after, renormalised"),
                      AFTER_SOFTMAX_RENORMALISED),
        Misconception(
            "unstable softmax", knob(ref._masked_softmax, shift=False),
            "your softmax overflows on large scores: exp(1000) is inf, and inf/inf is NaN. "
            "Subtract each row's largest allowed score before np.exp (it cancels in the "
            "division).",
        ),
        Misconception("softmax over the query axis", knob(ref._masked_softmax, axis=-2),
                      softmax_over_queries("axis=-2", "axis=-1")),
    ],
    bad_inputs=[
        BadInput(Case((np.zeros((2, 3)), np.ones((2, 3)))),
                 "the mask holds floats, not booleans (is 1 'attend' or 'ignore'?)"),
        BadInput(Case((np.zeros((2, 3)), np.ones((3, 3), dtype=bool))),
                 "a 3×3 mask does not fit 2×3 scores"),
    ],
    rules=Rules(
        names={"softmax": "a library softmax (torch.softmax, scipy.special.softmax, ...)",
               "log_softmax": "a library log_softmax"},
        why="Write the softmax yourself with np.exp and a sum: where the −∞ goes and what "
        "happens to a row with no allowed key is the point of this exercise.",
    ),
    arg_names=("scores", "mask"),
    hint=("Masked scores must drop out before the softmax, so that the weights of the allowed "
          "keys sum to 1. A row with no allowed key gives zeros, not NaN."),
    seed=405,
))


# ============================================================================= masked_attention

def attention_cases_qkv(rng, hidden):
    def qkv(b, tq, tk, dk, dv, draw=small_ints):
        return draw(rng, b + (tq, dk)), draw(rng, b + (tk, dk)), draw(rng, b + (tk, dv))

    cases = [
        Case(qkv((), 1, 1, 1, 1) + (np.array([[True]]),), note="one query, one key"),
        Case(qkv((), 2, 2, 1, 2) + (ref.causal_mask(2),), note="causal"),
        Case(qkv((), 2, 3, 2, 1) + (np.array([[True, True, False], [False, False, False]]),),
             note="query 1 has no allowed key"),
        Case(qkv((), 3, 3, 2, 2) + (None,), note="mask=None: no mask"),
        Case(qkv((), 3, 3, 2, 2) + (ref.causal_mask(3),), note="causal"),
        Case(qkv((2,), 3, 3, 4, 4) + (ref.attention_mask([3, 2], 3),),
             note="the [2, 3, 4] batch with one padded sentence"),
        Case(qkv((2,), 3, 3, 4, 4) + (ref.attention_mask([2, 0], 3, causal=False),),
             note="an empty sentence: no allowed key"),
        Case(qkv((2,), 2, 4, 3, 2) + (ref.padding_mask([4, 1], 4)[:, None, :],),
             note="cross-attention, T_q ≠ T_k, key padding"),
        Case(qkv((2,), 4, 5, 3, 2, normal) + (rng.random((2, 4, 5)) < 0.6,), note="random masks"),
    ]
    if hidden:
        cases += [
            Case(qkv((), 4, 4, 3, 5) + (ref.causal_mask(4),), note="causal"),
            Case(qkv((3,), 5, 5, 2, 3, normal) + (ref.attention_mask([5, 3, 1], 5),),
                 note="padding and causal"),
            Case(qkv((2, 2), 3, 3, 4, 2, normal) + (ref.attention_mask([3, 2], 3)[:, None],),
                 note="heads axis"),
            Case(qkv((), 3, 2, 2, 2, normal) + (np.array([[True, False], [False, False],
                                                           [True, True]]),),
                 note="query 1 has no allowed key"),
            Case(qkv((3,), 6, 6, 4, 4, normal) + (rng.random((3, 6, 6)) < 0.4,), note="random masks"),
        ]
    return with_variants(cases, hidden, only=floats)


MHA_NAMES = {
    "scaled_dot_product_attention": "torch.nn.functional.scaled_dot_product_attention",
    "multi_head_attention_forward": "torch.nn.functional.multi_head_attention_forward",
    "MultiheadAttention": "torch.nn.MultiheadAttention",
}

def masked_attention_calls(Q, K, V, mask=None):
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is None:
        mask = np.ones(scores.shape[-2:], dtype=bool)
    return [("masked_softmax", (scores, mask), {})]


register(Exercise(
    name="masked_attention",
    probes=("K", "V"),
    outputs=("output", "weights"),
    quantities=attention_quantities,
    reference=ref.masked_attention,
    calls=masked_attention_calls,
    cases=attention_cases_qkv,
    misconceptions=[
        *softmax_mistakes(ref._masked_attention),
        Misconception(
            "mask ignored", knob(ref._masked_attention, use_mask=False),
            "your weights ignore the mask: masked keys get weight as if there were no mask. "
            "Pass the mask to your masked softmax (mask=None means every key is allowed).",
        ),
        Misconception(
            "mask=None passed to masked_softmax",
            knob(ref._masked_attention, none_means_no_mask=False),
            "mask=None means no mask, but your function passed None on to masked_softmax, "
            "which needs a boolean array. Handle it before calling masked_softmax: when mask "
            "is None, use a boolean mask of all True with one entry per (query, key) pair: "
            "every query may attend to every key.",
        ),
        Misconception(
            "no scaling", knob(ref._masked_attention, scaled=False),
            "your scores are not scaled: divide Q Kᵀ by sqrt(d_k), the square root of the "
            "last axis of Q and K, before the masked softmax.",
        ),
    ],
    bad_inputs=[
        BadInput(Case((np.ones((2, 3)), np.ones((4, 2)), np.ones((4, 2)), None)),
                 "Q has d_k = 3 but K has d_k = 2"),
        BadInput(Case((np.ones((2, 3)), np.ones((4, 3)), np.ones((3, 2)), None)),
                 "K has 4 keys but V has 3 rows"),
        BadInput(Case((np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 2)), np.ones((2, 3), dtype=bool))),
                 "a 2×3 mask does not fit 2×4 scores"),
        BadInput(Case((np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 2)), np.ones((2, 4)))),
                 "the mask holds floats, not booleans"),
    ],
    rules=Rules(
        names=MHA_NAMES,
        why="Build it from NumPy (scores, mask, softmax, weighted sum of the rows of V). torch's "
        "attention is the oracle your function is compared with later in the lesson.",
    ),
    arg_names=("Q", "K", "V", "mask"),
    hint=("Masked attention is the scaled scores, your masked softmax over the keys, and the "
          "weighted sum of the values. It returns the output and the weights, in that order."),
    seed=406,
))


# ============================================================================= prefix_average

def prefix_cases(rng, hidden):
    shapes = [(1, 1), (2, 1), (3, 2), (4, 3), (2, 3, 2), (2, 2, 4, 3)]
    if hidden:
        shapes += [(5, 1), (1, 4), (3, 5, 2), (6, 6), (4, 1, 3)]
    cases = [Case((small_ints(rng, s),), note="batched" if len(s) > 2 else "one sequence")
             for s in shapes]
    cases.append(Case((normal(rng, (2, 5, 3)),), note="random floats"))
    return with_variants(cases, hidden, only=floats)


register(Exercise(
    name="prefix_average",
    probes=("X",),
    reference=ref.prefix_average,
    cases=prefix_cases,
    misconceptions=[
        Misconception(
            "running sum", knob(ref._prefix_average, normalise=None),
            "row i of your result is the *sum* of rows 0..i. Normalise each row of the "
            "lower-triangular matrix so that it sums to 1 (row i holds 1/(i + 1)).",
        ),
        Misconception(
            "divided by T", knob(ref._prefix_average, normalise="T"),
            "you divided every row by T, the sequence length. Row i averages i + 1 tokens, so "
            "its weights are 1/(i + 1): divide each row by its own sum.",
        ),
        Misconception(
            "upper triangular", knob(ref._prefix_average, looks_ahead=True),
            "row i of your result averages token i with the tokens *after* it. The prefix "
            "average looks back: the weight matrix is lower triangular (np.tril).",
        ),
        Misconception(
            "columns normalised", knob(ref._prefix_average, normalise="columns"),
            "the columns of your weight matrix sum to 1, not its rows. By the row reading "
            "of lesson 01, row i of W holds the weights of output row i, so normalise rows: "
            "W.sum(axis=1, keepdims=True).",
        ),
        Misconception(
            "diagonal excluded", knob(ref._prefix_average, with_diagonal=False),
            "your average leaves out token i itself (and token 0 has nothing to average, so it "
            "comes out NaN). The prefix includes the diagonal: np.tril(..., k=0).",
        ),
    ],
    bad_inputs=[BadInput(Case((np.ones(3),)), "X is a vector, not a [T, d] matrix")],
    rules=Rules(
        loops=True,
        names={"cumsum": "np.cumsum", "accumulate": "np.add.accumulate"},
        why="Write it as one matrix product W @ X with a normalised lower-triangular W: no "
        "Python loop, no running sum.",
    ),
    arg_names=("X",),
    hint=("Row i of the result averages tokens 0 to i. As one matrix product, that is a "
          "lower-triangular weight matrix whose every row sums to 1."),
    seed=407,
))


# ============================================================================= to_mha_key_padding_mask
# Judged by torch's real nn.MultiheadAttention (the "kpm" comparison): with the right mask,
# attention over the padded batch gives what attention over each sentence's real tokens
# alone gives.

def kpm_cases(rng, hidden):
    cases = [
        Case(([1], 1), note="one token"),
        Case(([2, 1], 2)),
        Case(([3, 2], 3), note="the [2, 3] batch: one padded sentence"),
        Case(([3, 3], 3), note="no padding"),
        Case(([1, 4, 2], 4)),
    ]
    if hidden:
        for B, T in [(2, 5), (3, 3), (1, 6), (4, 4)]:
            cases.append(Case((rng.integers(1, T + 1, size=B).tolist(), T), note="random lengths"))
    return cases


register(Exercise(
    name="to_mha_key_padding_mask",
    reference=ref.to_mha_key_padding_mask,
    cases=kpm_cases,
    misconceptions=[
        Misconception(
            "course polarity", knob(ref._key_padding, true_at="real tokens"),
            "you returned this course's padding mask, True at the real tokens. "
            "nn.MultiheadAttention's key_padding_mask has the opposite polarity: True means "
            "*ignore this key*, so it must be True at the padding. Invert it with ~.",
        ),
        Misconception(
            "a NumPy array", knob(ref._key_padding, as_tensor=False),
            "you returned a NumPy array. nn.MultiheadAttention takes torch tensors: convert "
            "with torch.from_numpy(...) (it keeps dtype bool).",
        ),
        Misconception(
            "float mask", knob(ref._key_padding, dtype=np.float32),
            "your mask is a float tensor. torch *adds* a float key_padding_mask to the scores, "
            "so 1.0 makes a padding key more likely, not ignored. Return dtype torch.bool.",
        ),
        Misconception(
            "first padding key visible", knob(ref._key_padding, extra_real=1),
            "your mask leaves the first padding position (j = lengths[b]) visible. Positions "
            "count from 0, so position j is padding when j ≥ lengths[b], not j > lengths[b].",
        ),
    ],
    bad_inputs=[
        BadInput(Case(([4, 1], 3)), "a length (4) is larger than T = 3"),
        BadInput(Case(([2, 1], 0)), "T = 0 is not a sequence length"),
    ],
    compare={"kind": "kpm"},
    arg_names=("lengths", "T"),
    hint=("nn.MultiheadAttention's key_padding_mask marks the keys to ignore: the opposite of "
          "this course's padding mask. It must be a torch.bool tensor of shape [B, T]."),
    seed=408,
))


# ============================================================================= is_causal
# Each case hands the learner's is_causal an attention-like function of X [T, d]: a
# fixture built from torch's own attention (grader.learner.fixtures), causal or not.

def causal_cases(rng, hidden):
    visible = [("identity", 1, 2), ("causal", 3, 2), ("full", 3, 2), ("first token", 3, 2),
               ("anti-causal", 3, 2), ("after softmax", 4, 3), ("one ahead", 4, 2),
               ("no diagonal", 4, 2), ("leaks into first", 5, 2), ("prefix average", 5, 3)]
    extra = [("causal -1e9", 4, 3), ("next token", 4, 1), ("mean", 3, 3), ("causal", 6, 4),
             ("leaks into first", 6, 3), ("after softmax", 5, 2), ("identity", 5, 2),
             ("first token", 6, 1), ("one ahead", 2, 3), ("full", 7, 2)]
    chosen = visible + (extra if hidden else [])
    chosen.sort(key=lambda c: c[1])  # smallest T first: a fixture has no array to size a case
    return [Case((attend_fixture(kind), T, d, int(rng.integers(0, 1000))),
                 note="causal" if ATTENDS[kind][1] else "not causal") for kind, T, d in chosen]


register(Exercise(
    name="is_causal",
    reference=ref.is_causal,
    cases=causal_cases,
    misconceptions=[
        Misconception(
            "changes token t too", knob(ref._is_causal, change="t onwards"),
            "you changed token t along with the later tokens, then asked whether outputs 0..t "
            "stayed the same. Output t is *allowed* to depend on token t, so every layer looks "
            "non-causal. Change only the tokens after t: X2[t + 1:].",
        ),
        Misconception(
            "re-draws token t, up to the last", knob(ref._is_causal, change="t onwards",
                                                     last_t=True),
            "you re-drew token t itself (with the later tokens, or alone), for every t up to "
            "the last one, then asked whether outputs 0..t stayed the same. Output t is "
            "*allowed* to depend on token t, so every layer looks non-causal, even on one "
            "token: there your test's only step re-draws token 0 and compares output 0. Change "
            "only the tokens after t; the last position has no token after it, so there is "
            "nothing to test there.",
        ),
        Misconception(
            "compares every output", knob(ref._is_causal, compare="all"),
            "you compared the whole output after changing the tokens after t. The later "
            "outputs (t + 1 onwards) may change, that is allowed; compare only outputs 0..t: "
            "out[:t + 1].",
        ),
        Misconception(
            "past into future", knob(ref._is_causal, change="up to t", compare="after t"),
            "you changed *earlier* tokens and checked that *later* outputs stayed the same. "
            "That is the direction attention is allowed to use. Causal means the future never "
            "reaches the past: change the tokens after t and check outputs 0..t.",
        ),
        Misconception(
            "only the last token changed", knob(ref._is_causal, every_t=False),
            "you changed only the last token. A leak can come from any later token (here query 0 "
            "sees key 2): for every t, change all the tokens after t and compare outputs 0..t.",
        ),
    ],
    bad_inputs=[
        BadInput(Case((np.eye(3), 3, 2, 0)), "attend is an array, not a function"),
        BadInput(Case((attend_fixture("causal"), 0, 2, 0)), "T = 0 is not a sequence length"),
        BadInput(Case((attend_fixture("causal"), 3, 0, 0)), "d = 0 is not a feature size"),
    ],
    arg_names=("attend", "T", "d", "seed"),
    hint=("Causal means that output t never depends on the tokens after t. Change only the "
          "tokens after t, for every t, and check that outputs 0 to t stay the same, with X "
          "drawn from the given seed."),
    seed=409,
))
