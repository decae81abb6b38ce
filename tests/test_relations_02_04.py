"""Mistakes of lessons 02 and 04 that a relation names on its own (grader/learner/relations.py),
and that the catalogue therefore no longer lists: each is still named, by the relation this
test expects, on the visible and the hidden cases, in a message that says what is wrong.

Each mistake is the lesson's reference with one knob set wrong (``reference.py``), as it was
when it was catalogued."""
import pytest

from dropped import by_an_edit, named_by_relation
from grader import lessons

R02 = lessons.lesson_module("02_dot_product_attention", "reference")
R04 = lessons.lesson_module("04_masking", "reference")
knob = lessons.knob

NORMALISED = "you normalise over the wrong axis"
TRANSPOSED = "transposed: its last two axes are swapped"
SWAPPED = "output and weights are swapped"
INVERTED = "its polarity is inverted. In this course True means *may attend*"
NUMBERS = "holds numbers (float64) where a boolean array is expected"

OVERFLOW = "inf from a division by 0 or from np.exp of a number above about 709.8"
DIAGONAL = "only on the diagonal (where a position meets itself, j = i)"
UNSTABLE = knob(R02._softmax, shift=None)

DROPPED = [
    # lesson 02
    ("softmax", "unstable softmax", UNSTABLE, "nan", OVERFLOW),
    ("scaled_dot_product_attention", "unstable softmax",
     knob(R02._attention, weights_by=UNSTABLE), "nan", OVERFLOW),
    ("scaled_dot_product_attention", "weights returned alone",
     knob(R02._attention, returns="weights"), "ignores", "V never reaches your result"),
    ("scaled_dot_product_attention", "softmax over the query axis",
     knob(R02._attention, softmax_axis=-2), "normalised",
     "sums to 1 along axis -2 (down each column), but the expected one sums to 1 along axis -1"),
    ("attend_one_query", "unstable exponentials", knob(R02._attend_one_query, stable=False),
     "nan", OVERFLOW),
    ("attend_one_query", "returns the weights", knob(R02._attend_one_query, returns="weights"),
     "ignores", "V never reaches your result"),
    ("softmax", "ignores axis", knob(R02._softmax, along=-1), "normalised", NORMALISED),
    ("softmax", "axis hard-coded to 0", knob(R02._softmax, along=0), "normalised", NORMALISED),
    ("attention_scores", "scaled by sqrt(T_k)", knob(R02._scores, divide_by="sqrt(T_k)"),
     "scale", "that is what dividing by √T_k instead of √d_k gives"),
    ("attention_scores", "scaled by d_k", knob(R02._scores, divide_by="d_k"),
     "scale", "= 1/√d_k times the expected one. Is there one division by √d_k too many?"),
    ("attention_scores", "no scaling", knob(R02._scores, divide_by="1"),
     "scale", "= √d_k times the expected one. Is the division by √d_k missing?"),
    ("attention_scores", "K Qᵀ", knob(R02._scores, queries_first=False), "axes", TRANSPOSED),
    ("scaled_dot_product_attention", "weights returned first",
     knob(R02._attention, returns="weights, output"), "swapped", SWAPPED),
    ("self_attention", "weights returned first",
     knob(R02._self_attention, returns="weights, output"), "swapped", SWAPPED),
    ("self_attention", "keys projected with W_q", knob(R02._self_attention, keys_by="W_q"),
     "substituted", "with W_q passed in the place of W_k: your code uses W_q where W_k belongs"),
    # lesson 04
    ("causal_mask", "inverted polarity", knob(R04._causal, invert=True), "inverted", INVERTED),
    ("causal_mask", "column convention", knob(R04._causal, columns=True), "axes", TRANSPOSED),
    ("causal_mask", "float mask", knob(R04._causal, dtype=float), "type", NUMBERS),
    ("causal_mask", "sees one token ahead", knob(R04._causal, ahead=1), "diagonal",
     "only just above the diagonal (j = i + 1: a position and the one after it)"),
    ("causal_mask_columns", "row convention", knob(R04._causal, columns=False), "axes", TRANSPOSED),
    ("causal_mask_columns", "inverted polarity", knob(R04._causal, columns=True, invert=True),
     "inverted", INVERTED),
    ("causal_mask_columns", "float mask", knob(R04._causal, columns=True, dtype=float),
     "type", NUMBERS),
    ("padding_mask", "inverted polarity", knob(R04._padding, invert=True), "inverted", INVERTED),
    ("padding_mask", "transposed", knob(R04._padding, transposed=True), "axes", TRANSPOSED),
    ("padding_mask", "float mask", knob(R04._padding, dtype=float), "type", NUMBERS),
    ("padding_mask", "left padding", knob(R04._padding, padded_on="left"), "reordered",
     "your result is the expected one in reverse order along axis -1"),
    ("attention_mask", "inverted polarity", knob(R04._attention_mask, invert=True),
     "inverted", INVERTED),
    ("causal_mask", "diagonal excluded", knob(R04._causal, with_diagonal=False), "diagonal",
     DIAGONAL),
    ("causal_mask_columns", "diagonal excluded",
     knob(R04._causal, columns=True, with_diagonal=False), "diagonal", DIAGONAL),
    ("attention_mask", "diagonal excluded", knob(R04._attention_mask, with_diagonal=False),
     "diagonal", DIAGONAL),
    ("masked_softmax", "unstable softmax", knob(R04._masked_softmax, shift=False), "nan",
     OVERFLOW),
    ("masked_softmax", "NaN rows", knob(R04._masked_softmax, guard_empty_rows=False),
     "nan rows", "holds NaN on every row where the expected one is all zeros, and only there"),
    ("masked_attention", "NaN rows", knob(R04._masked_attention, guard_empty_rows=False),
     "nan rows", "holds NaN on every row where the expected one is all zeros, and only there"),
    ("masked_attention", "mask ignored", knob(R04._masked_attention, use_mask=False), "sees",
     "where the expected output does not change: it must not see it there"),
    ("prefix_average", "upper triangular", knob(R04._prefix_average, looks_ahead=True), "sees",
     "where the expected output does not change: it must not see it there"),
    ("prefix_average", "diagonal excluded", knob(R04._prefix_average, with_diagonal=False),
     "misses own", "no position sees its own row of X. The diagonal is left out"),
]


@pytest.mark.parametrize("name, mistake, answer, kind, phrase",
                         [pytest.param(*d, id=f"{d[0]}:{d[1]}") for d in DROPPED])
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_a_dropped_mistake_is_named_by_its_relation(name, mistake, answer, kind, phrase, hidden):
    verdict = named_by_relation(name, answer, kind, hidden)
    assert by_an_edit(verdict, name) or phrase in verdict.message, f"{mistake}: {verdict.message}"
