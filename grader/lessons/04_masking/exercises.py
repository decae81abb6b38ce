"""Lesson 04 exercises. Masks are boolean, True = may attend (but for torch's key_padding_mask);
case variants convert only the float arguments. A mistake is a core of ``reference.py`` with one
knob set wrong; those a relation names on its own (an inverted polarity, a transposed or reversed
mask, numbers for booleans, one diagonal) are not catalogued (tests/test_relations_02_04.py)."""
from __future__ import annotations

import functools

import numpy as np

from ...learner.shortcuts import Rules
from .. import LESSONS, BadInput, Case, Exercise, Misconception, Stated, knob
from ..stated import ADVICE, BAD_INPUTS, SOURCE_SCAN, VALUES
from ..drawing import attention_quantities, floats, normal, small_ints, with_variants
from ..messages import inverted_polarity, softmax_over_queries
from . import reference as ref
from .learner import ATTENDS, KeyPaddingMask, attend_fixture

LESSON = LESSONS.of(__name__)  # every exercise here registers through it


def bad(*args, why: str) -> BadInput:
    return BadInput(Case(args), why)


# ============================================================================= causal masks

causal = functools.partial(knob, ref._causal)
# The lesson's words on its given lines, for every function.
GIVEN = Stated("The first lines of each function (checking the input) are given.", BAD_INPUTS,
               "should reject this input with a ValueError")


LESSON.register(Exercise(
    name="causal_mask", reference=ref.causal_mask, arg_names=("T",), seed=401,
    cases=lambda rng, hidden: [
        Case((T,), note="T = 1, one token sees itself" if T == 1 else f"T = {T}")
        for T in [1, 2, 3, 4, 6] + ([5, 7, 9, np.int64(8)] if hidden else [])],
    bad_inputs=[bad(0, why="T = 0 is not a sequence length"),
                bad(2.5, why="T = 2.5 is not a whole number")],
    hint=("Row i of the mask belongs to query i, which may attend to key j when j is not after "
          "i. Look at row 0 and at the diagonal of your mask for the input above."),
    stated=(Stated("a `[T, T]` array of dtype `bool`", VALUES, "where a boolean array is expected"), GIVEN),
))

LESSON.register(Exercise(
    name="causal_mask_columns", reference=ref.causal_mask_columns, arg_names=("T",), seed=402,
    cases=lambda rng, hidden: [
        Case((T,), note=f"T = {T}") for T in [1, 2, 3, 5] + ([4, 6, 8] if hidden else [])],
    bad_inputs=[bad(-1, why="T = -1 is not a sequence length")],
    hint="Here keys are rows and queries are columns: the row convention's mask, transposed.",
    stated=(GIVEN,),
))


# ============================================================================= padding masks

def padding_cases(rng, hidden):
    cases = [Case(([1], 1), note="one token, no padding"), Case(([2, 1], 2)),
             Case(([3, 2], 3), note="the [2, 3] batch: one padded sentence"),
             Case((np.array([4, 1, 3]), 4), note="lengths as an array"),
             Case(([2, 0], 3), note="an empty sentence"), Case(([3, 3], 5), note="both padded")]
    if hidden:
        cases += [Case((rng.integers(0, T + 1, size=B), T), note="random lengths")
                  for B, T in [(1, 4), (3, 6), (4, 2), (2, 7)]]
        cases.append(Case(([5, 5], 5), note="no padding at all"))
    return cases


padding = functools.partial(knob, ref._padding)
LESSON.register(Exercise(
    name="padding_mask", reference=ref.padding_mask, cases=padding_cases,
    arg_names=("lengths", "T"), seed=403,
    misconceptions=[Misconception(
        "one padding token too many", padding(extra_real=1),
        "your mask lets each sentence keep one padding position: position j is real when "
        "j < length, not j ≤ length (positions count from 0).")],
    bad_inputs=[bad([4, 2], 3, why="a length (4) is larger than T = 3"),
                bad([2, -1], 3, why="a length is negative"),
                bad([[2, 1]], 3, why="lengths is 2-D, not one length per sentence"),
                bad([1.5, 2], 3, why="1.5 is not a whole number of tokens")],
    hint=("Position j of sentence b is a real token when j is less than that sentence's length. "
          "Compare a row of positions with a column of lengths and let broadcasting build the "
          "[B, T] grid."),
    stated=(Stated("a `[B, T]` boolean array", VALUES, "where a boolean array is expected"),
            Stated("No loop is needed", ADVICE), GIVEN),
))


def mask_cases(rng, hidden):
    no = {"causal": False}
    cases = [Case(([1], 1), note="one token"), Case(([2, 1], 2), note="causal"),
             Case(([2, 1], 2), no, note="padding only"),
             Case(([3, 2], 3), note="the [2, 3] batch, causal"),
             Case(([3, 2], 3), no, note="the [2, 3] batch, padding only"),
             Case(([1, 3, 0], 3), no, note="an empty sentence"),
             Case(([4, 2], 4), {"causal": True}, note="causal")]
    if hidden:
        # B ≥ 2: one sentence of T = 6 would sort first and show two 6×6 masks, too long.
        cases += [Case((rng.integers(1, T + 1, size=B), T), {"causal": c}, note="random lengths")
                  for B, T in [(2, 5), (3, 4), (2, 6)] for c in (True, False)]
    return cases


def attention_mask_calls(lengths, T, causal=True):
    """The reference's calls on the learner's helpers (its stand-ins, see Exercise.calls)."""
    return [("padding_mask", (lengths, T), {})] + ([("causal_mask", (T,), {})] if causal else [])


combined = functools.partial(knob, ref._attention_mask)
LESSON.register(Exercise(
    name="attention_mask", reference=ref.attention_mask, cases=mask_cases,
    calls=attention_mask_calls, arg_names=("lengths", "T"), seed=404,
    misconceptions=[
        Misconception("padding masks the queries", combined(padding_on="queries"),
                      "you masked the padded *queries* (rows) instead of the padded *keys* "
                      "(columns). Padding must stop every query from looking at a padding token: "
                      "it masks column j of every row, padding[:, None, :], not padding[:, :, "
                      "None]. With causal=False, real tokens still attend to the padding."),
        Misconception("padding masks queries and keys", combined(padding_on="both"),
                      "you masked the padded queries' rows as well as the padded keys. Only keys "
                      "are masked (padding[:, None, :]): a blank row leaves its query no key."),
        Misconception("combined with or", combined(combine="or"),
                      "you combined the two masks with | (or). A key is allowed only if it is a "
                      "real token *and* not in the future: combine them with &."),
        Misconception("causal flag ignored", combined(always_causal=True),
                      "your mask is causal even when causal=False, which masks only the padding: "
                      "broadcast padding[:, None, :] to [B, T, T]."),
    ],
    bad_inputs=[bad([3, 4], 3, why="a length (4) is larger than T = 3"),
                bad([2, 1], 0, why="T = 0 is not a sequence length")],
    hint=("A key may be attended when it is a real token and not in the future. The padding part "
          "is the same for every query and the causal part the same for every sentence: give "
          "each the axis it lacks, and combine them with a logical and."),
    stated=(Stated("With `causal=False` it masks only the padding.", VALUES,
                   "your mask is causal even when causal=False"), GIVEN),
))


# ============================================================================= masked_softmax

def softmax_mistakes(core) -> list[Misconception]:
    """The masked softmax's mistakes, as knobs of ``core``: the masked softmax, or masked
    attention, which hands its softmax knobs on."""
    return [
        Misconception("mask after the softmax", knob(core, mask_applied="after"),
                      "you applied the mask after the softmax (softmax, then multiply by the "
                      "mask). The masked keys' share is thrown away, so the allowed weights no "
                      "longer sum to 1, and they still depend on the masked scores through the "
                      "softmax's denominator. Mask first (−∞ where the mask is False)."),
        Misconception("masked with 0", knob(core, fill=0.0),
                      "you replaced the masked scores with 0 instead of −∞. A score of 0 is an "
                      "ordinary score: exp(0) = 1, so masked keys still get weight (more than "
                      "allowed keys with negative scores). Fill with -np.inf: exp(−∞) = 0."),
        Misconception("-1e9 leaks into a fully masked row", knob(core, fill=-1e9),
                      "you filled the masked scores with a large negative number (like -1e9) "
                      "instead of −∞. That works while a row has an allowed key, but where *every* "
                      "key is masked all scores are equal: the softmax spreads weight evenly over "
                      "forbidden keys. Use -np.inf, and give a row with no allowed key zeros."),
        Misconception("inverted polarity", knob(core, true_means="ignore"),
                      inverted_polarity("the keys you set to −∞", "keeping the score where the "
                                        "mask is True and putting −∞ where it is False")),
    ]


def softmax_cases(rng, hidden):
    def case(scores, mask, note):
        return Case((np.asarray(scores, dtype=float), np.asarray(mask, dtype=bool)), note=note)

    cases = [
        case([[2]], [[True]], "one key"), case([[1, 3]], [[True, False]], "one key masked"),
        case(small_ints(rng, (2, 2)), ref.causal_mask(2), "causal"),
        case([[1, -2, 0], [2, 1, 3]], [[True, False, True], [False] * 3],
             "row 1 has no allowed key"),
        case(small_ints(rng, (3, 3)), ref.causal_mask(3), "causal"),
        case(small_ints(rng, (2, 3, 3)), ref.attention_mask([3, 2], 3),
             "the [2, 3] batch, padding and causal"),
        case(small_ints(rng, (2, 3, 3)), ref.attention_mask([3, 0], 3, causal=False),
             "an empty sentence: no allowed key"),
        case(small_ints(rng, (2, 3, 4)), ref.padding_mask([4, 2], 4)[:, None, :],
             "a [B, 1, T_k] key-padding mask broadcasts"),
        case([[0, 1, 900]], [[True, True, False]],
             "large values: the masked key has the largest score"),
        case([[1000, 999, -1000]], [[True, True, False]], "large values"),
        case(normal(rng, (2, 4, 5), 2.0), rng.random((2, 4, 5)) < 0.6, "random masks")]
    if hidden:
        cases += [
            case(small_ints(rng, (4, 4)), ref.causal_mask(4), "causal"),
            case(normal(rng, (3, 2, 4)), ref.causal_mask(4)[1:3], "T_q ≠ T_k"),
            case(normal(rng, (2, 2, 3, 3)), ref.attention_mask([3, 1], 3)[:, None], "heads axis"),
            case(normal(rng, (5,)), [True, False, True, True, False], "a 1-D row"),
            case(normal(rng, (2, 3), 300.0), [True, True, False], "large values"),
            case(normal(rng, (3, 6, 6)), rng.random((3, 6, 6)) < 0.3, "random masks")]
    return with_variants(cases, hidden, only=floats)


LESSON.register(Exercise(
    name="masked_softmax", reference=ref.masked_softmax, cases=softmax_cases,
    arg_names=("scores", "mask"), seed=405,
    misconceptions=[
        *softmax_mistakes(ref._masked_softmax),
        Misconception("mask after the softmax, renormalised",
                      knob(ref._masked_softmax, mask_applied="after, renormalised"),
                      "you took the softmax first, zeroed the masked weights and divided by the "
                      "new row sum. That is exact on paper, but when a masked key has a much "
                      "larger score than the allowed ones, the allowed weights underflow to 0 "
                      "*before* you mask, and the division is 0/0 = NaN. Mask first: set the "
                      "masked scores to −∞, then take the softmax."),
        Misconception("softmax over the query axis", knob(ref._masked_softmax, axis=-2),
                      softmax_over_queries("axis=-2", "axis=-1")),
    ],
    bad_inputs=[
        bad(np.zeros((2, 3)), np.ones((2, 3)),
            why="the mask holds floats, not booleans (is 1 'attend' or 'ignore'?)"),
        bad(np.zeros((2, 3)), np.ones((3, 3), dtype=bool),
            why="a 3×3 mask does not fit 2×3 scores"),
    ],
    rules=Rules(
        names={"softmax": "a library softmax (torch.softmax, scipy.special.softmax, ...)",
               "log_softmax": "a library log_softmax"},
        why="Write the softmax yourself with np.exp and a sum: where the −∞ goes and what happens "
        "to a row with no allowed key is the point of this exercise."),
    hint=("Masked scores must drop out before the softmax, so that the weights of the allowed keys "
          "sum to 1. A row with no allowed key gives zeros, not NaN."),
    stated=(Stated("library softmax functions are not accepted here", SOURCE_SCAN,
                   "a library softmax"),
            Stated("**A row with no allowed key:** all zeros, never NaN.", VALUES,
                   "Such a row must come out as zeros"),
            Stated("**Large scores:** scores of ±1000 give no overflow, as in lesson 02.", VALUES,
                   "np.exp of a number above about 709.8"),
            Stated("**Any batch axes:** `mask` broadcasts to the shape of `scores`", VALUES,
                   "mask broadcasts"),
            GIVEN),
))


# ============================================================================= masked_attention

def attention_cases(rng, hidden):
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
        Case(qkv((2,), 4, 5, 3, 2, normal) + (rng.random((2, 4, 5)) < 0.6,), note="random masks")]
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
            Case(qkv((3,), 6, 6, 4, 4, normal) + (rng.random((3, 6, 6)) < 0.4,),
                 note="random masks")]
    return with_variants(cases, hidden, only=floats)


def masked_attention_calls(Q, K, V, mask=None):
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    return [("masked_softmax", (scores, np.ones(scores.shape[-2:], dtype=bool) if mask is None
                                else mask), {})]


attention = functools.partial(knob, ref._masked_attention)
LESSON.register(Exercise(
    name="masked_attention", scales="Q", reference=ref.masked_attention, cases=attention_cases,
    calls=masked_attention_calls, arg_names=("Q", "K", "V", "mask"), seed=406,
    probes=("K", "V"), outputs=("output", "weights"), quantities=attention_quantities,
    misconceptions=[
        *softmax_mistakes(ref._masked_attention),
        Misconception("mask=None passed to masked_softmax", attention(none_means_no_mask=False),
                      "mask=None means no mask, but your function passed None on to "
                      "masked_softmax, which needs a boolean array. Handle it before calling "
                      "masked_softmax: for None, a boolean mask of all True (query × key)."),
    ],
    bad_inputs=[
        bad(*map(np.ones, [(2, 3), (4, 2), (4, 2)]), None, why="Q has d_k = 3 but K has d_k = 2"),
        bad(*map(np.ones, [(2, 3), (4, 3), (3, 2)]), None, why="K has 4 keys but V has 3 rows"),
        bad(*map(np.ones, [(2, 3), (4, 3), (4, 2)]), np.ones((2, 3), dtype=bool),
            why="a 2×3 mask does not fit 2×4 scores"),
        bad(*map(np.ones, [(2, 3), (4, 3), (4, 2), (2, 4)]),
            why="the mask holds floats, not booleans"),
    ],
    rules=Rules(
        names={"scaled_dot_product_attention": "torch.nn.functional.scaled_dot_product_attention",
               "multi_head_attention_forward": "torch.nn.functional.multi_head_attention_forward",
               "MultiheadAttention": "torch.nn.MultiheadAttention"},
        why="Build it from NumPy (scores, mask, softmax, weighted sum of the rows of V). torch's "
        "attention is the oracle your function is compared with later in the lesson."),
    hint=("Masked attention is the scaled scores, your masked softmax over the keys, and the "
          "weighted sum of the values. It returns the output and the weights, in that order."),
    stated=(Stated("calling torch's attention is not accepted here", SOURCE_SCAN,
                   "asks you to do by hand"),
            Stated("`mask=None` means no mask", VALUES, "mask=None: no mask"),
            Stated("A query with no allowed key gets zero weights, so its output row is zeros.",
                   VALUES, "Such a row must come out as zeros"),
            GIVEN),
))


# ============================================================================= prefix_average

def prefix_cases(rng, hidden):
    shapes = [(1, 1), (2, 1), (3, 2), (4, 3), (2, 3, 2), (2, 2, 4, 3)]
    shapes += [(5, 1), (1, 4), (3, 5, 2), (6, 6), (4, 1, 3)] if hidden else []
    cases = [Case((small_ints(rng, s),), note="batched" if len(s) > 2 else "one sequence")
             for s in shapes]
    cases.append(Case((normal(rng, (2, 5, 3)),), note="random floats"))
    return with_variants(cases, hidden, only=floats)


prefix = functools.partial(knob, ref._prefix_average)
LESSON.register(Exercise(
    name="prefix_average", reference=ref.prefix_average, cases=prefix_cases, probes=("X",),
    arg_names=("X",), seed=407,
    misconceptions=[
        Misconception("divided by T", prefix(normalise="T"),
                      "you divided every row by T, the sequence length. Row i averages i + 1 "
                      "tokens, so its weights are 1/(i + 1): divide each row by its own sum."),
    ],
    bad_inputs=[bad(np.ones(3), why="X is a vector, not a [T, d] matrix")],
    rules=Rules(loops=True, names={"cumsum": "np.cumsum", "accumulate": "np.add.accumulate"},
                why="Write it as one matrix product W @ X with a normalised lower-triangular W: no "
                "Python loop, no running sum."),
    hint=("Row i of the result averages tokens 0 to i. As one matrix product, that is a "
          "lower-triangular weight matrix whose every row sums to 1."),
    stated=(Stated("no Python loop and no `np.cumsum`", SOURCE_SCAN, "asks you to do by hand"),
            Stated("**one matrix product**", ADVICE), GIVEN),
))


# ============================================================================= key_padding_mask
# Judged by torch's nn.MultiheadAttention ("kpm"): with the right mask, attention over the padded
# batch gives what attention over each sentence's real tokens alone gives.

def kpm_cases(rng, hidden):
    cases = [Case(([1], 1), note="one token"), Case(([2, 1], 2)),
             Case(([3, 2], 3), note="the [2, 3] batch: one padded sentence"),
             Case(([3, 3], 3), note="no padding"), Case(([1, 4, 2], 4))]
    if hidden:
        cases += [Case((rng.integers(1, T + 1, size=B).tolist(), T), note="random lengths")
                  for B, T in [(2, 5), (3, 3), (1, 6), (4, 4)]]
    return cases


key_padding = functools.partial(knob, ref._key_padding)
LESSON.register(Exercise(
    name="to_mha_key_padding_mask", reference=ref.to_mha_key_padding_mask, cases=kpm_cases,
    compare=KeyPaddingMask(), arg_names=("lengths", "T"), seed=408,
    misconceptions=[
        Misconception("course polarity", key_padding(true_at="real tokens"),
                      "you returned this course's padding mask, True at the real tokens. "
                      "nn.MultiheadAttention's key_padding_mask has the opposite polarity: True "
                      "means *ignore this key*, so it must be True at the padding (invert: ~)."),
        Misconception("a NumPy array", key_padding(as_tensor=False),
                      "you returned a NumPy array. nn.MultiheadAttention takes torch tensors: "
                      "convert with torch.from_numpy(...) (it keeps dtype bool)."),
        Misconception("float mask", key_padding(dtype=np.float32),
                      "your mask is a float tensor: torch *adds* a float key_padding_mask to the "
                      "scores, so 1.0 makes a padding key more likely. Return torch.bool."),
        Misconception("first padding key visible", key_padding(extra_real=1),
                      "your mask leaves the first padding position (j = lengths[b]) visible. "
                      "Positions count from 0: position j is padding when j ≥ lengths[b]."),
    ],
    bad_inputs=[bad([4, 1], 3, why="a length (4) is larger than T = 3"),
                bad([2, 1], 0, why="T = 0 is not a sequence length")],
    hint=("nn.MultiheadAttention's key_padding_mask marks the keys to ignore: the opposite of "
          "this course's padding mask. It must be a torch.bool tensor of shape [B, T]."),
    stated=(Stated("the `torch.bool` tensor that `key_padding_mask` expects, True at the "
                   "padding", VALUES, "you returned a NumPy array"), GIVEN),
))


# ============================================================================= is_causal
# Each case hands the learner's is_causal an attention-like function of X [T, d]: a fixture
# built from torch's own attention (grader.learner.fixtures), causal or not.

def causal_cases(rng, hidden):
    chosen = [("identity", 1, 2), ("causal", 3, 2), ("full", 3, 2), ("first token", 3, 2),
              ("anti-causal", 3, 2), ("after softmax", 4, 3), ("one ahead", 4, 2),
              ("no diagonal", 4, 2), ("leaks into first", 5, 2), ("prefix average", 5, 3),
              ("future's waves", 4, 2), ("leaks late", 4, 2), ("first sees next", 3, 2)]
    if hidden:
        chosen += [("causal -1e9", 4, 3), ("next token", 4, 1), ("mean", 3, 3), ("causal", 6, 4),
                   ("leaks into first", 6, 3), ("after softmax", 5, 2), ("identity", 5, 2),
                   ("first token", 6, 1), ("one ahead", 2, 3), ("full", 7, 2),
                   ("future's waves", 6, 3), ("leaks late", 6, 2), ("first sees next", 5, 2)]
    chosen.sort(key=lambda c: c[1])  # smallest T first: a fixture has no array to size a case
    return [Case((attend_fixture(kind), T, d, int(rng.integers(0, 1000))),
                 note="causal" if ATTENDS[kind][1] else "not causal") for kind, T, d in chosen]


causal_test = functools.partial(knob, ref._is_causal)
LESSON.register(Exercise(
    name="is_causal", reference=ref.is_causal, cases=causal_cases,
    arg_names=("attend", "T", "d", "seed"), seed=409,
    misconceptions=[
        Misconception("changes token t too", causal_test(change="t onwards"),
                      "you changed token t along with the later tokens, then asked whether outputs "
                      "0..t stayed the same. Output t is *allowed* to depend on token t, so every "
                      "layer looks non-causal. Change only the tokens after t: X2[t + 1:]."),
        Misconception("re-draws token t, up to the last",
                      causal_test(change="t onwards", last_t=True),
                      "you re-drew token t itself (with the later tokens, or alone), for every t "
                      "up to the last one, then asked whether outputs 0..t stayed the same. Output "
                      "t is *allowed* to depend on token t, so every layer looks non-causal, even "
                      "on one token (your only step re-draws token 0 and compares output 0). "
                      "Change only the tokens after t; the last position has none to change."),
        Misconception("compares every output", causal_test(compare="all"),
                      "you compared the whole output after changing the tokens after t. The later "
                      "outputs (t + 1 onwards) may change, that is allowed; compare only outputs "
                      "0..t: out[:t + 1]."),
        Misconception("past into future", causal_test(change="up to t", compare="after t"),
                      "you changed *earlier* tokens and checked that *later* outputs stayed the "
                      "same: attention may use that direction. Causal means the future never "
                      "reaches the past: change the tokens after t and check outputs 0..t."),
        Misconception("moves the later tokens", causal_test(redraw=False),
                      "you moved the tokens after t (added a number to them) instead of drawing "
                      "new random ones. A layer that reads the later tokens through a function "
                      "that repeats, such as sin(2πx), never sees a move by 1. Replace them with "
                      "new random rows: X2[t + 1:] = rng.normal(size=...)."),
        Misconception("only the last token changed", causal_test(every_t=False),
                      "you changed only the last token. A leak can come from any later token "
                      "(here query 0 sees key 2): for every t, change all the tokens after t and "
                      "compare outputs 0..t."),
    ],
    bad_inputs=[bad(np.eye(3), 3, 2, 0, why="attend is an array, not a function"),
                bad(attend_fixture("causal"), 0, 2, 0, why="T = 0 is not a sequence length"),
                bad(attend_fixture("causal"), 3, 0, 0, why="d = 0 is not a feature size")],
    hint=("Causal means that output t never depends on the tokens after t. For every t, change "
          "only the tokens after t and check outputs 0 to t, with X drawn from the given seed."),
    stated=(Stated("replace the tokens *after* `t` (`X[t + 1:]`) with new random", VALUES,
                   "instead of drawing new random ones"), GIVEN),
))
