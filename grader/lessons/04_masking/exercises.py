"""Lesson 04 exercises: causal and padding masks, masked softmax and attention, the column
convention, torch's opposite polarity, the prefix average and the causal property.

Masks are boolean with True = may attend (except ``to_mha_key_padding_mask``, whose whole
point is torch's True = ignore). Case variants here convert only the float arguments to
float32 or lists: a mask stays a boolean array.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import reference as ref
from ..compare import FLOAT32, difference
from ..shortcuts import Rules
from ..validation import shape_str
from . import BadInput, Case, Exercise, Misconception, register
from .cases import non_contiguous, normal, small_ints

# ----------------------------------------------------------------------------- case helpers


def _floats_only(case: Case, convert, note: str, tol=None) -> Case:
    args = tuple(
        convert(a) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a for a in case.args
    )
    return Case(args, dict(case.kwargs), note=note, tol=tol or case.tol)


def _variants(base: list[Case], hidden: bool) -> list[Case]:
    """``base`` plus float32, list and strided versions of its last cases (masks stay bool
    arrays; strided views apply to every array)."""
    out = list(base)
    for case in base[-3:] if hidden else base[-1:]:
        out.append(_floats_only(case, lambda a: a.astype(np.float32), "float32", FLOAT32))
        out.append(_floats_only(case, lambda a: a.tolist(), "Python lists"))
        args = tuple(non_contiguous(a) if isinstance(a, np.ndarray) else a for a in case.args)
        out.append(Case(args, dict(case.kwargs), note="strided views", tol=case.tol))
    return out


def _ones(T: int) -> np.ndarray:
    return np.ones((T, T), dtype=bool)


# ============================================================================= causal_mask

def _causal_inverted(T):
    return np.triu(_ones(T), k=1)


def _causal_no_diagonal(T):
    return np.tril(_ones(T), k=-1)


def _causal_one_ahead(T):
    return np.tril(_ones(T), k=1)


def _causal_upper(T):
    return np.triu(_ones(T))


def _causal_floats(T):
    return np.tril(np.ones((T, T)))


INVERTED_CAUSAL = (
    "your mask is True exactly where it should be False: True marks the future keys. In "
    "this course (and in torch's scaled_dot_product_attention) True means *may attend*, so "
    "row i is True for keys j ≤ i. Flip it, or build it with np.tril instead of np.triu."
)
NO_DIAGONAL = (
    "your mask leaves out the diagonal, so a token cannot attend to itself (and row 0 has "
    "no allowed key at all). Causal means key j ≤ query i, including j = i: use "
    "np.tril(..., k=0), not k=-1."
)
FLOAT_MASK = (
    "your mask holds the floats 0.0 and 1.0. A mask is boolean: np.where(mask, ...) and ~mask "
    "need dtype bool (a float mask would also be *added* to the scores by torch). Build it "
    "with dtype=bool or with a comparison."
)

register(Exercise(
    name="causal_mask",
    reference=ref.causal_mask,
    cases=lambda rng, hidden: [
        Case((T,), note="T = 1, one token sees itself" if T == 1 else f"T = {T}")
        for T in ([1, 2, 3, 4, 6] + ([5, 7, 9, np.int64(8)] if hidden else []))
    ],
    misconceptions=[
        Misconception("inverted polarity", _causal_inverted, INVERTED_CAUSAL),
        Misconception("diagonal excluded", _causal_no_diagonal, NO_DIAGONAL),
        Misconception(
            "sees one token ahead", _causal_one_ahead,
            "your mask lets query i see key i + 1, one token into the future. The diagonal "
            "offset is off by one: np.tril(..., k=0) keeps keys j ≤ i only.",
        ),
        Misconception(
            "column convention", _causal_upper,
            "your mask is upper triangular: that is the causal mask with keys as rows and "
            "queries as columns (the column convention, section 7 of this lesson). Here "
            "row i is query i, so it may see the keys left of and on the diagonal: np.tril.",
        ),
        Misconception("float mask", _causal_floats, FLOAT_MASK),
    ],
    bad_inputs=[
        BadInput(Case((0,)), "T = 0 is not a sequence length"),
        BadInput(Case((2.5,)), "T = 2.5 is not a whole number"),
    ],
    arg_names=("T",),
    hint="Entry [i, j] is True when key j is not after query i (j ≤ i): np.tril of a "
    "[T, T] array of True.",
    seed=401,
))


# ============================================================================= causal_mask_columns

def _columns_row_convention(T):
    return np.tril(_ones(T))


def _columns_no_diagonal(T):
    return np.triu(_ones(T), k=1)


def _columns_inverted(T):
    return np.tril(_ones(T), k=-1)


def _columns_floats(T):
    return np.triu(np.ones((T, T)))


register(Exercise(
    name="causal_mask_columns",
    reference=ref.causal_mask_columns,
    cases=lambda rng, hidden: [
        Case((T,), note=f"T = {T}") for T in ([1, 2, 3, 5] + ([4, 6, 8] if hidden else []))
    ],
    misconceptions=[
        Misconception(
            "row convention", _columns_row_convention,
            "this is the row-convention mask (queries as rows). With tokens as columns, "
            "entry [i, j] pairs key i with query j, so it is True where i ≤ j: the transpose, "
            "np.triu. The masked scores sit below the diagonal.",
        ),
        Misconception(
            "diagonal excluded", _columns_no_diagonal,
            "your mask leaves out the diagonal, so a token cannot attend to itself. Key i may "
            "be seen by query j when i ≤ j, including i = j: np.triu(..., k=0).",
        ),
        Misconception(
            "inverted polarity", _columns_inverted,
            "your mask is True where keys come after the query: the polarity is inverted. True "
            "means may attend, which in the column convention is the upper triangle with its "
            "diagonal.",
        ),
        Misconception("float mask", _columns_floats, FLOAT_MASK),
    ],
    bad_inputs=[BadInput(Case((-1,)), "T = -1 is not a sequence length")],
    arg_names=("T",),
    hint="Keys are rows and queries are columns now: the causal mask is the transpose of "
    "the row-convention one, np.triu.",
    seed=402,
))


# ============================================================================= padding_mask

def _pad_inverted(lengths, T):
    return np.arange(T)[None, :] >= np.asarray(lengths)[:, None]


def _pad_one_extra(lengths, T):
    return np.arange(T)[None, :] <= np.asarray(lengths)[:, None]


def _pad_left(lengths, T):
    return np.arange(T)[None, :] >= T - np.asarray(lengths)[:, None]


def _pad_transposed(lengths, T):
    return np.arange(T)[:, None] < np.asarray(lengths)[None, :]


def _pad_floats(lengths, T):
    return (np.arange(T)[None, :] < np.asarray(lengths)[:, None]).astype(float)


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


def padding_bad_inputs():
    return [
        BadInput(Case(([4, 2], 3)), "a length (4) is larger than T = 3"),
        BadInput(Case(([2, -1], 3)), "a length is negative"),
        BadInput(Case(([[2, 1]], 3)), "lengths is 2-D, not one length per sentence"),
        BadInput(Case(([1.5, 2], 3)), "1.5 is not a whole number of tokens"),
    ]


INVERTED_PADDING = (
    "your mask is True at the padding and False at the real tokens: the polarity is "
    "inverted. In this course True means *may attend*, so the real tokens are True. (The "
    "opposite convention, True = ignore, is nn.MultiheadAttention's key_padding_mask; it "
    "gets its own exercise.)"
)

register(Exercise(
    name="padding_mask",
    reference=ref.padding_mask,
    cases=padding_cases,
    misconceptions=[
        Misconception("inverted polarity", _pad_inverted, INVERTED_PADDING),
        Misconception(
            "one padding token too many", _pad_one_extra,
            "your mask lets each sentence keep one padding position: position j is real when "
            "j < length, not j ≤ length (positions count from 0).",
        ),
        Misconception(
            "left padding", _pad_left,
            "your mask marks the *last* tokens as real, as if the padding came first. Here "
            "sentences are padded on the right: the first lengths[b] positions are real.",
        ),
        Misconception(
            "transposed", _pad_transposed,
            "your mask is [T, B]: one row per position. It should be [B, T], one row per "
            "sentence: compare np.arange(T)[None, :] with lengths[:, None].",
        ),
        Misconception("float mask", _pad_floats, FLOAT_MASK),
    ],
    bad_inputs=padding_bad_inputs(),
    arg_names=("lengths", "T"),
    hint="Position j of sentence b is real when j < lengths[b]: compare a row of positions "
    "with a column of lengths and let broadcasting make the [B, T] grid.",
    seed=403,
))


# ============================================================================= attention_mask

def _pad(lengths, T):
    return np.arange(T)[None, :] < np.asarray(lengths)[:, None]


def _tril(T, k=0):
    return np.tril(_ones(T), k=k)


def _attn_on_queries(lengths, T, causal=True):
    queries = _pad(lengths, T)[:, :, None]                   # [B, T, 1]: masks rows
    full = np.broadcast_to(queries, (queries.shape[0], T, T))
    return full & _tril(T) if causal else full.copy()


def _attn_on_both(lengths, T, causal=True):
    pad = _pad(lengths, T)
    both = pad[:, :, None] & pad[:, None, :]
    return both & _tril(T) if causal else both


def _attn_with_or(lengths, T, causal=True):
    keys = np.broadcast_to(_pad(lengths, T)[:, None, :], (len(lengths), T, T))
    return keys | _tril(T) if causal else keys.copy()


def _attn_always_causal(lengths, T, causal=True):
    return _pad(lengths, T)[:, None, :] & _tril(T)


def _attn_inverted(lengths, T, causal=True):
    keys = np.broadcast_to(~_pad(lengths, T)[:, None, :], (len(lengths), T, T))
    return keys | ~_tril(T) if causal else keys.copy()


def _attn_no_diagonal(lengths, T, causal=True):
    keys = np.broadcast_to(_pad(lengths, T)[:, None, :], (len(lengths), T, T))
    return keys & _tril(T, -1) if causal else keys.copy()


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


register(Exercise(
    name="attention_mask",
    reference=ref.attention_mask,
    cases=attention_cases,
    misconceptions=[
        Misconception(
            "padding masks the queries", _attn_on_queries,
            "you masked the padded *queries* (rows) instead of the padded *keys* (columns). "
            "Padding must stop every query from looking at a padding token, so it masks "
            "column j of every row: padding[:, None, :], not padding[:, :, None]. With "
            "causal=False your mask still lets real tokens attend to the padding.",
        ),
        Misconception(
            "padding masks queries and keys", _attn_on_both,
            "you masked the padded queries' rows as well as the padded keys. Only keys are "
            "masked here (padding[:, None, :]): a padding query's output is simply ignored "
            "later, and blanking its whole row leaves it with no allowed key at all.",
        ),
        Misconception(
            "combined with or", _attn_with_or,
            "you combined the two masks with | (or). A key is allowed only if it is a real "
            "token *and* not in the future: combine them with &.",
        ),
        Misconception(
            "causal flag ignored", _attn_always_causal,
            "your mask is causal even when causal=False. With causal=False only the padding "
            "is masked: broadcast padding[:, None, :] to [B, T, T].",
        ),
        Misconception(
            "inverted polarity", _attn_inverted,
            "your mask is True where attention is *forbidden*. True means may attend: real "
            "keys that are not in the future.",
        ),
        Misconception("diagonal excluded", _attn_no_diagonal, NO_DIAGONAL),
    ],
    bad_inputs=[
        BadInput(Case(([3, 4], 3)), "a length (4) is larger than T = 3"),
        BadInput(Case(([2, 1], 0)), "T = 0 is not a sequence length"),
    ],
    arg_names=("lengths", "T"),
    hint="Key padding is padding_mask(lengths, T)[:, None, :] ([B, 1, T], the same for every "
    "query); & it with causal_mask(T)[None] ([1, T, T]) and broadcasting gives [B, T, T].",
    seed=404,
))


# ============================================================================= masked_softmax
# Helpers the misconceptions share. Each is what a learner might write.

def _stable_softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    top = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - top)
    return e / e.sum(axis=axis, keepdims=True)


def _zero_safe_divide(e, total):
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def _ms_after(scores, mask):
    return _stable_softmax(scores) * np.asarray(mask)


def _ms_after_renormalised(scores, mask):
    p = _stable_softmax(scores) * np.asarray(mask)
    with np.errstate(invalid="ignore", divide="ignore"):
        return p / p.sum(axis=-1, keepdims=True)


def _ms_zero_fill(scores, mask):
    return _stable_softmax(np.where(mask, scores, 0.0))


def _ms_large_negative(scores, mask):
    return _stable_softmax(np.where(mask, scores, -1e9))


def _ms_inverted(scores, mask):
    x = np.where(mask, -np.inf, np.asarray(scores, dtype=float))
    top = np.max(x, axis=-1, keepdims=True)
    e = np.exp(x - np.where(np.isfinite(top), top, 0.0))
    return _zero_safe_divide(e, e.sum(axis=-1, keepdims=True))


def _ms_nan_rows(scores, mask):
    x = np.where(mask, np.asarray(scores, dtype=float), -np.inf)
    with np.errstate(invalid="ignore"):
        top = np.max(x, axis=-1, keepdims=True)
        e = np.exp(x - top)
        return e / e.sum(axis=-1, keepdims=True)


def _ms_unstable(scores, mask):
    x = np.where(mask, np.asarray(scores, dtype=float), -np.inf)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(x)
        return _zero_safe_divide(e, e.sum(axis=-1, keepdims=True))


def _ms_query_axis(scores, mask):
    x = np.where(mask, np.asarray(scores, dtype=float), -np.inf)
    top = np.max(x, axis=-2, keepdims=True)
    e = np.exp(x - np.where(np.isfinite(top), top, 0.0))
    return _zero_safe_divide(e, e.sum(axis=-2, keepdims=True))


AFTER_SOFTMAX = (
    "you applied the mask after the softmax (softmax, then multiply by the mask). The "
    "masked keys' share is simply thrown away, so the allowed weights no longer sum to 1, and "
    "they still depend on the masked scores through the softmax's denominator. Mask first: "
    "set the masked scores to −∞ (np.where(mask, scores, -np.inf)), then take the softmax."
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
    "shift by 0 where the maximum is −∞, and divide only where the sum is positive "
    "(np.divide(e, total, out=np.zeros_like(e), where=total > 0))."
)
INVERTED_SOFTMAX = (
    "your softmax keeps the masked keys and drops the allowed ones: the polarity is inverted. "
    "True means may attend: np.where(mask, scores, -np.inf) keeps the score where the mask is "
    "True."
)

register(Exercise(
    name="masked_softmax",
    reference=ref.masked_softmax,
    cases=lambda rng, hidden: _softmax_cases(rng, hidden),
    misconceptions=[
        Misconception("mask after the softmax", _ms_after, AFTER_SOFTMAX),
        Misconception("mask after the softmax, renormalised", _ms_after_renormalised,
                      AFTER_SOFTMAX_RENORMALISED),
        Misconception("masked with 0", _ms_zero_fill, ZERO_FILL),
        Misconception("-1e9 leaks into a fully masked row", _ms_large_negative, LARGE_NEGATIVE),
        Misconception("inverted polarity", _ms_inverted, INVERTED_SOFTMAX),
        Misconception("NaN rows", _ms_nan_rows, NAN_ROWS),
        Misconception(
            "unstable softmax", _ms_unstable,
            "your softmax overflows on large scores: exp(1000) is inf, and inf/inf is NaN. "
            "Subtract each row's largest allowed score before np.exp (it cancels in the "
            "division).",
        ),
        Misconception(
            "softmax over the query axis", _ms_query_axis,
            "your weights sum to 1 down each column, over the queries. Each query (row) "
            "shares its attention among the keys: take the softmax over the last axis.",
        ),
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
    hint="np.where(mask, scores, -np.inf), then a stable softmax over the last axis; a row "
    "with no allowed key must give zeros, not NaN.",
    seed=405,
))


def _softmax_cases(rng, hidden):
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
    return _variants(cases, hidden)


# ============================================================================= masked_attention

def _scores(Q, K):
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    return np.matmul(Q, np.swapaxes(K, -1, -2)) / np.sqrt(Q.shape[-1])


def _mask_or_all(mask, scores):
    return np.ones(scores.shape[-2:], dtype=bool) if mask is None else np.asarray(mask)


def _ma_after(Q, K, V, mask=None):
    s = _scores(Q, K)
    w = _stable_softmax(s) * _mask_or_all(mask, s)
    return np.matmul(w, V), w


def _ma_zero_fill(Q, K, V, mask=None):
    s = _scores(Q, K)
    w = _stable_softmax(np.where(_mask_or_all(mask, s), s, 0.0))
    return np.matmul(w, V), w


def _ma_large_negative(Q, K, V, mask=None):
    s = _scores(Q, K)
    w = _stable_softmax(np.where(_mask_or_all(mask, s), s, -1e9))
    return np.matmul(w, V), w


def _ma_inverted(Q, K, V, mask=None):
    s = _scores(Q, K)
    w = _ms_inverted(s, _mask_or_all(mask, s))
    return np.matmul(w, V), w


def _ma_nan_rows(Q, K, V, mask=None):
    s = _scores(Q, K)
    w = _ms_nan_rows(s, _mask_or_all(mask, s))
    return np.matmul(w, V), w


def _ma_mask_ignored(Q, K, V, mask=None):
    w = _stable_softmax(_scores(Q, K))
    return np.matmul(w, V), w


def _ma_none_passed_on(Q, K, V, mask=None):
    s = _scores(Q, K)
    w = ref.masked_softmax(s, mask)
    return np.matmul(w, V), w


def _ma_unscaled(Q, K, V, mask=None):
    s = _scores(Q, K) * np.sqrt(np.shape(Q)[-1])
    w = ref.masked_softmax(s, _mask_or_all(mask, s))
    return np.matmul(w, V), w


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
    return _variants(cases, hidden)


MHA_NAMES = {
    "scaled_dot_product_attention": "torch.nn.functional.scaled_dot_product_attention",
    "multi_head_attention_forward": "torch.nn.functional.multi_head_attention_forward",
    "MultiheadAttention": "torch.nn.MultiheadAttention",
}

register(Exercise(
    name="masked_attention",
    reference=ref.masked_attention,
    cases=attention_cases_qkv,
    misconceptions=[
        Misconception("mask after the softmax", _ma_after, AFTER_SOFTMAX),
        Misconception("masked with 0", _ma_zero_fill, ZERO_FILL),
        Misconception("-1e9 leaks into a fully masked row", _ma_large_negative, LARGE_NEGATIVE),
        Misconception("inverted polarity", _ma_inverted, INVERTED_SOFTMAX),
        Misconception("NaN rows", _ma_nan_rows, NAN_ROWS),
        Misconception(
            "mask ignored", _ma_mask_ignored,
            "your weights ignore the mask: masked keys get weight as if there were no mask. "
            "Pass the mask to your masked softmax (mask=None means every key is allowed).",
        ),
        Misconception(
            "mask=None passed to masked_softmax", _ma_none_passed_on,
            "mask=None means no mask, but your function passed None on to masked_softmax, "
            "which needs a boolean array. Handle it before calling masked_softmax: when mask "
            "is None, use a mask of all True, for example "
            "`np.ones(scores.shape[-2:], dtype=bool)` (every query may attend to every key).",
        ),
        Misconception(
            "no scaling", _ma_unscaled,
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
    hint="scores = Q Kᵀ / sqrt(d_k); weights = masked_softmax(scores, mask); output = "
    "weights @ V. Return (output, weights).",
    seed=406,
))


# ============================================================================= prefix_average

def _prefix_sum(X):
    X = np.asarray(X, dtype=float)
    return np.matmul(np.tril(np.ones((X.shape[-2], X.shape[-2]))), X)


def _prefix_over_T(X):
    X = np.asarray(X, dtype=float)
    T = X.shape[-2]
    return np.matmul(np.tril(np.ones((T, T))) / T, X)


def _suffix_average(X):
    X = np.asarray(X, dtype=float)
    W = np.triu(np.ones((X.shape[-2], X.shape[-2])))
    return np.matmul(W / W.sum(axis=1, keepdims=True), X)


def _prefix_column_normalised(X):
    X = np.asarray(X, dtype=float)
    W = np.tril(np.ones((X.shape[-2], X.shape[-2])))
    return np.matmul(W / W.sum(axis=0, keepdims=True), X)


def _prefix_without_self(X):
    X = np.asarray(X, dtype=float)
    W = np.tril(np.ones((X.shape[-2], X.shape[-2])), k=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.matmul(W / W.sum(axis=1, keepdims=True), X)


def prefix_cases(rng, hidden):
    shapes = [(1, 1), (2, 1), (3, 2), (4, 3), (2, 3, 2), (2, 2, 4, 3)]
    if hidden:
        shapes += [(5, 1), (1, 4), (3, 5, 2), (6, 6), (4, 1, 3)]
    cases = [Case((small_ints(rng, s),), note="batched" if len(s) > 2 else "one sequence")
             for s in shapes]
    cases.append(Case((normal(rng, (2, 5, 3)),), note="random floats"))
    return _variants(cases, hidden)


register(Exercise(
    name="prefix_average",
    reference=ref.prefix_average,
    cases=prefix_cases,
    misconceptions=[
        Misconception(
            "running sum", _prefix_sum,
            "row i of your result is the *sum* of rows 0..i. Normalise each row of the "
            "lower-triangular matrix so that it sums to 1 (row i holds 1/(i + 1)).",
        ),
        Misconception(
            "divided by T", _prefix_over_T,
            "you divided every row by T, the sequence length. Row i averages i + 1 tokens, so "
            "its weights are 1/(i + 1): divide each row by its own sum.",
        ),
        Misconception(
            "upper triangular", _suffix_average,
            "row i of your result averages token i with the tokens *after* it. The prefix "
            "average looks back: the weight matrix is lower triangular (np.tril).",
        ),
        Misconception(
            "columns normalised", _prefix_column_normalised,
            "the columns of your weight matrix sum to 1, not its rows. By the row reading "
            "of lesson 01, row i of W holds the weights of output row i, so normalise rows: "
            "W.sum(axis=1, keepdims=True).",
        ),
        Misconception(
            "diagonal excluded", _prefix_without_self,
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
    hint="W = np.tril(np.ones((T, T))); divide each row of W by its sum; return W @ X.",
    seed=407,
))


# ============================================================================= to_mha_key_padding_mask
# Judged by torch's real nn.MultiheadAttention: with the right mask, attention over the
# padded batch gives what attention over each sentence's real tokens alone gives.

D_MODEL, N_HEADS = 4, 2
_MHA = None


def _mha():
    global _MHA
    if _MHA is None:
        import torch

        with torch.random.fork_rng():
            torch.manual_seed(404)
            _MHA = torch.nn.MultiheadAttention(D_MODEL, N_HEADS, batch_first=True).eval()
    return _MHA


def _tokens(lengths, T):
    seed = 1000 * int(T) + sum(int(v) * (7 ** i) for i, v in enumerate(lengths))
    return np.random.default_rng(seed).normal(size=(len(lengths), T, D_MODEL)).astype(np.float32)


def mha_with_mask(lengths, T, key_padding_mask):
    """(output, head-averaged weights) of the course's nn.MultiheadAttention on a fixed
    random batch, given ``key_padding_mask``."""
    import torch

    x = torch.from_numpy(_tokens(lengths, T))
    with torch.no_grad():
        out, w = _mha()(x, x, x, key_padding_mask=key_padding_mask, need_weights=True)
    return out.numpy(), w.numpy()


def mha_on_real_tokens(lengths, T):
    """The same attention run sentence by sentence on the real tokens alone, with no mask
    (every query is kept; only the keys and values are cut): what the mask must reproduce."""
    import torch

    x = torch.from_numpy(_tokens(lengths, T))
    outs, weights = [], []
    with torch.no_grad():
        for b, n in enumerate(lengths):
            real = x[b:b + 1, :n]
            out, w = _mha()(x[b:b + 1], real, real, need_weights=True)
            outs.append(out.numpy()[0])
            weights.append(np.pad(w.numpy()[0], ((0, 0), (0, T - n))))
    return np.stack(outs), np.stack(weights)


def _tokens_word(n: int) -> str:
    return f"{n} real token" + ("" if n == 1 else "s")


def _describe_behaviour(lengths, T, weights) -> str:
    """What torch did with a wrong mask, in words (completes "given your mask, torch's ...")."""
    for b, n in enumerate(lengths):
        if np.isnan(weights[b]).any():
            return (f"ignores every key of sentence {b}, which has {_tokens_word(n)}, and "
                    f"returns NaN")
        on_pad = float(weights[b, :, n:].sum(axis=-1).max()) if n < T else 0.0
        if on_pad > 1e-4:
            return (f"puts up to {on_pad:.3g} of a query's attention on the padding of sentence "
                    f"{b} ({_tokens_word(n)} of {T})")
        starved = np.flatnonzero(weights[b, :, :n].max(axis=0) < 1e-6)
        if starved.size:
            return f"never attends to real token {int(starved[0])} of sentence {b}"
    return "gives weights that differ from attention over the real tokens alone"


def _call_kpm(fn, case: Case):
    """Run ``fn``; the reference's mask is marked so that ``_mha_compare`` knows to judge
    against torch's behaviour on the real tokens, not against that mask."""
    out = fn(*case.args, **case.kwargs)
    if fn is ref.to_mha_key_padding_mask:
        out.judged_by_torch = True
    return out


def _mha_compare(expected, actual, case: Case) -> str | None:
    """Compare by what torch's nn.MultiheadAttention does with each mask.

    Against the reference (``judged_by_torch``) the target is torch run on each sentence's
    real tokens alone, with no mask; the reference's own mask only sets the expected form
    (a torch.bool tensor of shape [B, T]). Against a misconception (when the checker looks
    for the one that behaves like the learner's function) the target is what torch does
    with that misconception's mask.
    """
    import torch

    lengths, T = [int(v) for v in np.asarray(case.args[0])], int(case.args[1])
    if not isinstance(expected, torch.Tensor):  # a misconception that is not a tensor
        return difference(expected, actual)
    if not isinstance(actual, torch.Tensor):
        kind = "a NumPy array" if isinstance(actual, np.ndarray) else f"a {type(actual).__name__}"
        return (f"returned {kind}, but nn.MultiheadAttention needs a torch tensor "
                f"(torch.from_numpy(...) or torch.tensor(...))")
    if actual.dtype != expected.dtype:
        return (f"dtype is {actual.dtype}, expected {expected.dtype} (a float key_padding_mask "
                f"is *added* to the scores, it does not ignore keys)")
    if tuple(actual.shape) != tuple(expected.shape):
        return f"shape is {shape_str(actual.shape)}, expected {shape_str(expected.shape)} ([B, T])"
    try:
        got = mha_with_mask(lengths, T, actual)
    except Exception as exc:  # torch rejects the mask
        return f"nn.MultiheadAttention rejected your mask: {type(exc).__name__}: {exc}"
    if getattr(expected, "judged_by_torch", False):
        target = mha_on_real_tokens(lengths, T)
    else:
        target = mha_with_mask(lengths, T, expected)
    if difference(target, got, FLOAT32) is None:
        return None
    return ("given your mask, torch's nn.MultiheadAttention "
            + _describe_behaviour(lengths, T, got[1]))


def _kpm_course_polarity(lengths, T):
    import torch

    return torch.from_numpy(_pad(lengths, T))


def _kpm_numpy(lengths, T):
    return ~_pad(lengths, T)


def _kpm_floats(lengths, T):
    import torch

    return torch.from_numpy(~_pad(lengths, T)).float()


def _kpm_one_too_few(lengths, T):
    import torch

    return torch.from_numpy(np.arange(T)[None, :] > np.asarray(lengths)[:, None])


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
            "course polarity", _kpm_course_polarity,
            "you returned this course's padding mask, True at the real tokens. "
            "nn.MultiheadAttention's key_padding_mask has the opposite polarity: True means "
            "*ignore this key*, so it must be True at the padding. Invert it with ~.",
        ),
        Misconception(
            "a NumPy array", _kpm_numpy,
            "you returned a NumPy array. nn.MultiheadAttention takes torch tensors: convert "
            "with torch.from_numpy(...) (it keeps dtype bool).",
        ),
        Misconception(
            "float mask", _kpm_floats,
            "your mask is a float tensor. torch *adds* a float key_padding_mask to the scores, "
            "so 1.0 makes a padding key more likely, not ignored. Return dtype torch.bool.",
        ),
        Misconception(
            "first padding key visible", _kpm_one_too_few,
            "your mask leaves the first padding position (j = lengths[b]) visible. Positions "
            "count from 0, so position j is padding when j ≥ lengths[b], not j > lengths[b].",
        ),
    ],
    bad_inputs=[
        BadInput(Case(([4, 1], 3)), "a length (4) is larger than T = 3"),
        BadInput(Case(([2, 1], 0)), "T = 0 is not a sequence length"),
    ],
    compare=_mha_compare,
    call=_call_kpm,
    arg_names=("lengths", "T"),
    hint="Start from the padding mask (True at real tokens), invert it with ~, and return it "
    "as a torch.bool tensor.",
    seed=408,
))


# ============================================================================= is_causal
# Each case hands the learner's is_causal a small attention-like function of X [T, d].

def _attend_masked(X, mask, fill=-np.inf):
    s = np.matmul(X, X.T) / np.sqrt(X.shape[-1])
    s = np.where(mask, s, fill)
    top = np.max(s, axis=-1, keepdims=True)
    e = np.exp(s - np.where(np.isfinite(top), top, 0.0))
    total = e.sum(axis=-1, keepdims=True)
    w = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
    return np.matmul(w, X)


def _attend_after_softmax(X):
    s = np.matmul(X, X.T) / np.sqrt(X.shape[-1])
    w = _stable_softmax(s) * np.tril(np.ones(s.shape, dtype=bool))
    return np.matmul(w, X)


def _leaks_into_first(X):
    T = X.shape[0]
    mask = np.tril(np.ones((T, T), dtype=bool))
    mask[0, min(2, T - 1)] = True
    return _attend_masked(X, mask)


def _next_token(X):
    out = np.zeros_like(X)
    out[:-1] = X[1:]
    return out


ATTENDS = {
    "causal": ("self-attention of X with a causal mask", True,
               lambda X: _attend_masked(X, np.tril(np.ones((len(X), len(X)), dtype=bool)))),
    "causal -1e9": ("causal self-attention with masked scores set to -1e9", True,
                    lambda X: _attend_masked(X, np.tril(np.ones((len(X), len(X)), dtype=bool)), -1e9)),
    "no diagonal": ("self-attention where token i sees only tokens before it (row 0 is zeros)",
                    True, lambda X: _attend_masked(X, np.tril(np.ones((len(X), len(X)), dtype=bool), -1))),
    "identity": ("the identity: output i is token i", True, lambda X: X.copy()),
    "first token": ("every output is a copy of token 0", True,
                    lambda X: np.broadcast_to(X[:1], X.shape).copy()),
    "prefix average": ("the prefix average: output i is the mean of tokens 0..i", True,
                       lambda X: np.matmul(np.tril(np.ones((len(X), len(X)))) /
                                           np.arange(1, len(X) + 1)[:, None], X)),
    "full": ("self-attention with no mask", False,
             lambda X: _attend_masked(X, np.ones((len(X), len(X)), dtype=bool))),
    "one ahead": ("self-attention where query i may also see key i + 1", False,
                  lambda X: _attend_masked(X, np.tril(np.ones((len(X), len(X)), dtype=bool), 1))),
    "after softmax": ("causal self-attention with the mask applied after the softmax", False,
                      _attend_after_softmax),
    "anti-causal": ("self-attention where query i sees only keys j ≥ i", False,
                    lambda X: _attend_masked(X, np.triu(np.ones((len(X), len(X)), dtype=bool)))),
    "leaks into first": ("causal self-attention, except that query 0 also sees key 2", False,
                         _leaks_into_first),
    "next token": ("output i is a copy of token i + 1", False, _next_token),
    "mean": ("every output is the mean of all tokens", False,
             lambda X: np.broadcast_to(X.mean(axis=0), X.shape).copy()),
}


@dataclass(frozen=True)
class Attend:
    """A named attention-like function of ``X: [T, d]``, with a readable repr."""

    kind: str

    def __call__(self, X):
        X = np.asarray(X, dtype=float)
        if X.ndim != 2:
            raise ValueError(f"attend takes X of shape [T, d], got shape {shape_str(X.shape)}")
        return ATTENDS[self.kind][2](X)

    def __repr__(self) -> str:
        return f"<{ATTENDS[self.kind][0]}>"


def causal_cases(rng, hidden):
    visible = [("identity", 1, 2), ("causal", 3, 2), ("full", 3, 2), ("first token", 3, 2),
               ("anti-causal", 3, 2), ("after softmax", 4, 3), ("one ahead", 4, 2),
               ("no diagonal", 4, 2), ("leaks into first", 5, 2), ("prefix average", 5, 3)]
    extra = [("causal -1e9", 4, 3), ("next token", 4, 1), ("mean", 3, 3), ("causal", 6, 4),
             ("leaks into first", 6, 3), ("after softmax", 5, 2), ("identity", 5, 2),
             ("first token", 6, 1), ("one ahead", 2, 3), ("full", 7, 2)]
    chosen = visible + (extra if hidden else [])
    chosen.sort(key=lambda c: c[1])  # smallest T first: cases have no array to size them
    return [Case((Attend(kind), T, d, int(rng.integers(0, 1000))),
                 note="causal" if ATTENDS[kind][1] else "not causal") for kind, T, d in chosen]


def _ic_changes_token_t(attend, T, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, d))
    before = attend(X)
    for t in range(T - 1):
        X2 = X.copy()
        X2[t:] = rng.normal(size=(T - t, d))
        if not np.allclose(attend(X2)[: t + 1], before[: t + 1]):
            return False
    return True


def _ic_compares_everything(attend, T, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, d))
    before = attend(X)
    for t in range(T - 1):
        X2 = X.copy()
        X2[t + 1:] = rng.normal(size=(T - t - 1, d))
        if not np.allclose(attend(X2), before):
            return False
    return True


def _ic_past_into_future(attend, T, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, d))
    before = attend(X)
    for t in range(1, T):
        X2 = X.copy()
        X2[:t] = rng.normal(size=(t, d))
        if not np.allclose(attend(X2)[t:], before[t:]):
            return False
    return True


def _ic_last_token_only(attend, T, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, d))
    X2 = X.copy()
    X2[-1] = rng.normal(size=d)
    return bool(np.allclose(attend(X2)[:-1], attend(X)[:-1]))


register(Exercise(
    name="is_causal",
    reference=ref.is_causal,
    cases=causal_cases,
    misconceptions=[
        Misconception(
            "changes token t too", _ic_changes_token_t,
            "you changed token t along with the later tokens, then asked whether outputs 0..t "
            "stayed the same. Output t is *allowed* to depend on token t, so every layer looks "
            "non-causal. Change only the tokens after t: X2[t + 1:].",
        ),
        Misconception(
            "compares every output", _ic_compares_everything,
            "you compared the whole output after changing the tokens after t. The later "
            "outputs (t + 1 onwards) may change, that is allowed; compare only outputs 0..t: "
            "out[:t + 1].",
        ),
        Misconception(
            "past into future", _ic_past_into_future,
            "you changed *earlier* tokens and checked that *later* outputs stayed the same. "
            "That is the direction attention is allowed to use. Causal means the future never "
            "reaches the past: change the tokens after t and check outputs 0..t.",
        ),
        Misconception(
            "only the last token changed", _ic_last_token_only,
            "you changed only the last token. A leak can come from any later token (here query 0 "
            "sees key 2): for every t, change all the tokens after t and compare outputs 0..t.",
        ),
    ],
    bad_inputs=[
        BadInput(Case((np.eye(3), 3, 2, 0)), "attend is an array, not a function"),
        BadInput(Case((Attend("causal"), 0, 2, 0)), "T = 0 is not a sequence length"),
        BadInput(Case((Attend("causal"), 3, 0, 0)), "d = 0 is not a feature size"),
    ],
    arg_names=("attend", "T", "d", "seed"),
    hint="Draw X [T, d] from np.random.default_rng(seed); for every t, replace X[t + 1:] with "
    "new random rows and check that attend(...)[:t + 1] is unchanged (np.allclose).",
    seed=409,
))
