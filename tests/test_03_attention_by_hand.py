"""Lesson 03, attention by hand.

* grader.check: correct code written other ways passes, learner-like wrong code gets its
  diagnosis, and the WORKSHEET is graded step by step from typed numbers;
* the references against independent oracles: integer NumPy products, Python's integer
  floor division, float softmax, and the transpose relation between conventions;
* the printable worksheet: the generators write non-blank PNG and PDF pages, the
  committed assets are up to date, new_worksheet(seed) stays hand-friendly, and the
  learner's side (courseware.worksheet) reviews practice answers with a key it is given.
"""
import importlib
import math
import subprocess
import sys
from fractions import Fraction

import matplotlib.image as mpimg
import matplotlib.pyplot as plt
import numpy as np
import pytest
from conftest import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from courseware import worksheet as sheet
from courseware.worksheet import (HAND_LIMITS, STEPS, W_K, W_Q, W_V, X, new_worksheet,
                                  published_worksheet)
from grader import CheckFailed, check
from grader import reference as ref
from grader.learner.plugins import lesson_part
from grader.learner.validation import as_fractions
from sources import handed_over
from stated_rules import broken, message_of

read_matrix = lesson_part("03_attention_by_hand").read_matrix

LESSON = "grader.lessons.03_attention_by_hand"
answer_key = importlib.import_module(f"{LESSON}.reference").answer_key
assets = importlib.import_module(f"{LESSON}.assets")
KEY = answer_key()


def failure(name, value, hidden=False) -> str:
    with pytest.raises(CheckFailed) as info:
        check(name, value, hidden=hidden)
    return str(info.value)


def passes(name, value, capsys, hidden=False):
    check(name, value, hidden=hidden)
    out = capsys.readouterr().out
    assert out.startswith(f"✓ {name}"), out


# ----------------------------------------------------------------- the functions, written other ways

def scores_with_loops(K, Q):
    K, Q = as_fractions(K, "K"), as_fractions(Q, "Q")
    if K.shape[0] != Q.shape[0]:
        raise ValueError(f"K {K.shape} and Q {Q.shape} differ in d_k")
    return [[sum(K[:, i] * Q[:, j]) for j in range(Q.shape[1])] for i in range(K.shape[1])]


def half_with_floor_division(S):
    S = as_fractions(S, "S")
    return S // 2  # ints, not Fractions: still exact


def half_with_math_floor(S):
    S = as_fractions(S, "S")
    return np.vectorize(lambda s: math.floor(s / 2), otypes=[object])(S)


def softmax_entry_by_entry(S):
    S = as_fractions(S, "S", whole=True)
    P = np.array([[Fraction(3) ** s for s in row] for row in S], dtype=object)
    return P / P.sum(axis=0)  # divides column j by its sum


def attention_returning_lists(X, W_Q, W_K, W_V):
    X = as_fractions(X, "X")
    W_Q, W_K, W_V = (as_fractions(W, n) for W, n in ((W_Q, "W_Q"), (W_K, "W_K"), (W_V, "W_V")))
    if any(W.shape[1] != X.shape[0] for W in (W_Q, W_K, W_V)) or W_Q.shape[0] != W_K.shape[0]:
        raise ValueError("the weight matrices do not fit X")
    Q, K, V = W_Q @ X, W_K @ X, W_V @ X
    scores = K.T @ Q
    scaled = scores // 2
    A = softmax_entry_by_entry(scaled)
    steps = {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": V @ A}
    return {k: v.tolist() for k, v in steps.items()}


def rows_by_transposing(X_rows, W_Q, W_K, W_V):
    X_rows = as_fractions(X_rows, "X_rows")
    if any(np.shape(W)[1] != X_rows.shape[1] for W in (W_Q, W_K, W_V)) or np.shape(W_Q)[0] != np.shape(W_K)[0]:
        raise ValueError("the weight matrices do not fit X_rows")
    columns = attention_returning_lists(X_rows.T, W_Q, W_K, W_V)
    return {k: np.array(v, dtype=object).T for k, v in columns.items()}


@pytest.mark.parametrize(
    "name, fn",
    [
        ("key_query_scores", scores_with_loops),
        ("floor_half", half_with_floor_division),
        ("floor_half", half_with_math_floor),
        ("softmax3_columns", softmax_entry_by_entry),
        ("attention_by_hand", attention_returning_lists),
        ("row_convention_attention", rows_by_transposing),
    ],
)
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_correct_alternatives_pass(name, fn, hidden, capsys):
    passes(name, fn, capsys, hidden)


# ----------------------------------------------------------------- learner-like mistakes

def half_with_np_trunc(S):
    S = as_fractions(S, "S")
    return np.trunc(S.astype(float) / 2)


def half_with_np_round(S):
    S = as_fractions(S, "S")
    return np.round(S.astype(float) / 2)


def softmax_fraction_base(S):
    S = as_fractions(S, "S", whole=True)
    P = Fraction(3) ** S  # the trap: a float array
    return P / P.sum(axis=0, keepdims=True)


def softmax_sum_axis_1(S):
    S = as_fractions(S, "S", whole=True)
    P = np.vectorize(lambda s: Fraction(3) ** s, otypes=[object])(S)
    return P / P.sum(axis=1, keepdims=True)


def softmax_int_powers(S):
    S = as_fractions(S, "S", whole=True)
    P = 3 ** S  # plain ints for s >= 0, so int / int is a float
    return P / P.sum(axis=0)


def softmax_row_sums_flat(S):
    S = as_fractions(S, "S", whole=True)
    P = np.vectorize(lambda s: Fraction(3) ** s, otypes=[object])(S)
    return P / P.sum(axis=1)  # the row sums, lined up with the columns


def attention_with_its_own_steps(X, W_Q, W_K, W_V, weights):
    """attention_by_hand written out, with A made by ``weights(scores, scaled)``."""
    X = as_fractions(X, "X")
    W_Q, W_K, W_V = (as_fractions(W, n) for W, n in ((W_Q, "W_Q"), (W_K, "W_K"), (W_V, "W_V")))
    if any(W.shape[1] != X.shape[0] for W in (W_Q, W_K, W_V)) or W_Q.shape[0] != W_K.shape[0]:
        raise ValueError("the weight matrices do not fit X")
    Q, K, V = W_Q @ X, W_K @ X, W_V @ X
    scores = K.T @ Q
    scaled = scores // 2
    A = weights(scores, scaled)
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": V @ A}


def attention_row_normalised(X, W_Q, W_K, W_V):
    def weights(scores, scaled):
        powers = np.array([[Fraction(3) ** int(s) for s in row] for row in scaled], dtype=object)
        return powers / powers.sum(axis=1)
    return attention_with_its_own_steps(X, W_Q, W_K, W_V, weights)


def attention_from_unscaled_scores(X, W_Q, W_K, W_V):
    return attention_with_its_own_steps(X, W_Q, W_K, W_V,
                                        lambda scores, scaled: softmax_entry_by_entry(scores))


def attention_z_is_a_v(X, W_Q, W_K, W_V):
    steps = attention_returning_lists(X, W_Q, W_K, W_V)
    A, V = np.array(steps["A"], dtype=object), np.array(steps["V"], dtype=object)
    steps["Z"] = A @ V
    return steps


@pytest.mark.parametrize(
    "name, fn, words",
    [
        ("floor_half", half_with_np_trunc, "you rounded toward zero"),
        ("floor_half", half_with_np_round, "Python's round"),
        ("softmax3_columns", softmax_fraction_base, "Fraction(3) ** S"),
        ("softmax3_columns", softmax_sum_axis_1, "each row of your weights sums to 1"),
        ("softmax3_columns", softmax_int_powers, "your weights are floats"),
        ("attention_by_hand", attention_z_is_a_v, "the operands of the output Z were swapped"),
        ("softmax3_columns", softmax_row_sums_flat, "divided by the row sums (a sum along "
                                                    "axis=1) without keepdims"),
        ("attention_by_hand", attention_row_normalised, "divided by the row sums (a sum along "
                                                        "axis=1) without keepdims"),
        ("attention_by_hand", attention_from_unscaled_scores, "the weights A used the scores where "
                                                              "it needs the scaled scores"),
    ],
)
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_mistakes_written_differently_get_their_diagnosis(name, fn, words, hidden):
    message = failure(name, fn, hidden)
    assert "Diagnosis:" in message and words in message, message
    assert not handed_over(message, "03_attention_by_hand")


def test_a_float_softmax_message_shows_fractions_as_fractions():
    message = failure("softmax3_columns", softmax_fraction_base)
    assert "1/10" in message or "1/4" in message or "3/4" in message
    assert "Fraction(1, " not in message


def test_attention_by_hand_names_the_first_step_that_differs():
    message = failure("attention_by_hand", attention_z_is_a_v)
    assert "step 'Z'" in message or "raised ValueError" in message


def _blocks(message: str) -> tuple[str, str]:
    """The 'Expected:' and 'Your function returned:' blocks of a failure message."""
    expected = message.split("Expected:", 1)[1].split("Your function returned:", 1)[0]
    returned = message.split("Your function returned:", 1)[1].split("What differs:", 1)[0]
    return expected, returned


def attention_softmax_along_rows(X, W_Q, W_K, W_V):
    steps = attention_returning_lists(X, W_Q, W_K, W_V)
    steps["A"] = softmax_sum_axis_1(steps["scaled"])
    steps["Z"] = np.array(steps["V"], dtype=object) @ steps["A"]
    return steps


def test_a_wrong_step_is_shown_alone_with_the_steps_it_comes_from():
    message = failure("attention_by_hand", attention_softmax_along_rows)
    expected, returned = _blocks(message)
    # Expected: A and the step it is computed from; returned: the learner's A alone.
    assert expected.lstrip().startswith("A, computed from scaled (yours is the same):")
    assert "scaled =" in expected and "A =" in expected
    assert returned.lstrip().startswith("A =")
    assert "(only A is shown, the first step that differs)" in returned
    for other in ("Q =", "K =", "V =", "scores =", "Z ="):
        assert other not in expected and other not in returned
    assert "step 'A'" in message and \
        "Diagnosis: your result sums to 1 along axis -1 (along each row)" in message
    assert len(message.splitlines()) < 50


@pytest.mark.parametrize("name", ["attention_by_hand", "row_convention_attention"])
def test_a_wrong_last_step_shows_the_two_steps_it_is_made_of(name):
    def z_doubled(*args):
        steps = dict((attention_returning_lists if name == "attention_by_hand" else rows_by_transposing)(*args))
        steps["Z"] = 2 * np.array(steps["Z"], dtype=object)
        return steps

    expected, returned = _blocks(failure(name, z_doubled))
    assert "Z, computed from V and A (yours are the same):" in expected
    assert [line.strip() for line in expected.splitlines() if line.endswith("=")] == ["V =", "A =", "Z ="]
    assert [line.strip() for line in returned.splitlines() if line.endswith("=")] == ["Z ="]


def test_a_missing_step_is_named_in_the_returned_block():
    def without_scaled(*args):
        steps = attention_returning_lists(*args)
        del steps["scaled"]
        return steps

    message = failure("attention_by_hand", without_scaled)
    _, returned = _blocks(message)
    assert "a dict with no key 'scaled'; its keys are 'Q', 'K', 'V', 'scores', 'A', 'Z'" in returned
    assert "the dict has no key 'scaled'" in message


def test_a_stub_is_not_implemented():
    def floor_half(S):
        S = as_fractions(S, "S")
        raise NotImplementedError()

    assert "not implemented yet" in failure("floor_half", floor_half)


def test_function_exercises_still_need_a_function():
    assert "needs your function itself" in failure("floor_half", {"S": 1})


# ----------------------------------------------------------------- the WORKSHEET

def grid(M) -> str:
    return "\n".join(" ".join(str(Fraction(v)) for v in row) for row in M)


def typed_worksheet(**changes) -> dict:
    answers = {step: grid(KEY[step]) for step in STEPS}
    answers.update(changes)
    return answers


STUB = '\n# YOUR CODE HERE\nraise NotImplementedError()\n'  # what nbgrader leaves in a release


@pytest.mark.parametrize("step", STEPS)
def test_every_step_passes_when_typed_as_text(step, capsys):
    passes(f"worksheet_{step}", typed_worksheet(), capsys)


@pytest.mark.parametrize("step", STEPS)
def test_the_released_placeholder_is_not_implemented(step):
    message = failure(f"worksheet_{step}", typed_worksheet(**{step: STUB}))
    assert "not implemented yet" in message and f"WORKSHEET['{step}']" in message


def test_steps_are_graded_separately(capsys):
    answers = {step: STUB for step in STEPS}
    answers["scaled"] = grid(KEY["scaled"])
    passes("worksheet_scaled", answers, capsys)
    for step in set(STEPS) - {"scaled"}:
        assert "not implemented yet" in failure(f"worksheet_{step}", answers)


def test_the_source_notebook_format_is_read():
    text = "\n### BEGIN SOLUTION\n" + grid(KEY["A"]) + "   # the weights\n### END SOLUTION\n"
    assert (read_matrix(text, "A") == KEY["A"]).all()


@pytest.mark.parametrize(
    "text",
    [
        "[[2, 1, 1, 1],\n [1, 1, 0, 1],\n [1, 0, 2, 1]]",
        "2, 1, 1, 1\n1, 1, 0, 1\n1, 0, 2, 1",
        "  2 1 1 1   # first row\n\n  1 1 0 1\n  1 0 2 1\n",
    ],
)
def test_text_layouts_that_are_read(text, capsys):
    passes("worksheet_Q", typed_worksheet(Q=text), capsys)


def test_lists_arrays_fractions_strings_and_unicode_minus_are_read(capsys):
    passes("worksheet_A", typed_worksheet(A=[[str(v) for v in row] for row in KEY["A"]]), capsys)
    passes("worksheet_K", typed_worksheet(K=np.array(KEY["K"].astype(int))), capsys)
    passes("worksheet_K", typed_worksheet(K=grid(KEY["K"]).replace("-", "−")), capsys)
    passes("worksheet_Z", typed_worksheet(Z=KEY["Z"].tolist()), capsys)


def test_a_wrong_entry_names_its_place_and_what_it_is_made_of():
    scores = KEY["scores"].copy()
    scores[1, 2] += 1
    message = failure("worksheet_scores", typed_worksheet(scores=grid(scores)))
    assert "1 of 16 entries is wrong" in message
    assert "row 2, column 3" in message
    assert "Row 2 of Kᵀ Q uses k₂ = (2, 1, 1)" in message and "q₃ = (1, 0, 2)" in message


def test_a_wrong_projection_entry_names_the_weight_row_and_the_token():
    Q = KEY["Q"].copy()
    Q[0, 3] = 5
    message = failure("worksheet_Q", typed_worksheet(Q=grid(Q)))
    assert "row 1, column 4" in message and "row 1 of W_Q" in message and "x₄" in message


def test_a_wrong_weight_shows_the_column_sum():
    A = KEY["A"].copy()
    A[0, 0] = Fraction(1, 32)
    message = failure("worksheet_A", typed_worksheet(A=grid(A)))
    assert "column 1 of your A adds up to 15/16" in message


def test_an_error_carried_forward_points_at_its_source():
    K = KEY["K"].copy()
    K[1, 2] = 0  # typed -1 as 0
    message = failure("worksheet_scores", typed_worksheet(K=grid(K), scores=grid(K.T @ KEY["Q"])))
    assert "your K is not right yet: fix K first" in message
    assert "check('worksheet_K', WORKSHEET) says where" in message


def test_a_wrong_entry_after_a_wrong_parent_says_to_fix_the_parent_first():
    scaled = KEY["scaled"].copy()
    scaled[0, 0] = 5
    A = KEY["A"].copy()
    A[3, 3] = Fraction(2, 14)
    message = failure("worksheet_A", typed_worksheet(scaled=grid(scaled), A=grid(A)))
    assert "depends on scaled" in message and "fix scaled first" in message


def test_decimals_close_to_the_answer_ask_for_fractions():
    message = failure("worksheet_A", typed_worksheet(A=KEY["A"].astype(float).round(3).tolist()))
    assert "rounded to decimals" in message and "fraction" in message


@pytest.mark.parametrize(
    "value, words",
    [
        ("1 2 3 4\n1 2 3", "row 1 has 4 numbers but row 2 has 3"),
        ("1 2 3 4\n1 2 3 4", "has 2 rows of 4 numbers, but Q has 3 rows of 4 numbers"),
        ("1 2 3 4\n1 2 3/ 4\n0 0 0 0", "reads '3/', which is not a number"),
        ([1, 2, 3], "should be a matrix"),
    ],
)
def test_unreadable_answers_are_explained(value, words):
    assert words in failure("worksheet_Q", typed_worksheet(Q=value))


def test_a_worksheet_that_is_not_a_dict_is_explained():
    assert "should be a dict" in failure("worksheet_Q", [1, 2])


def test_a_transposed_step_from_a_wrong_parent_says_to_fix_the_parent_first():
    K = KEY["K"].copy()
    K[1, 2] = 0
    message = failure("worksheet_scores", typed_worksheet(K=grid(K), scores=grid(KEY["Q"].T @ K)))
    assert "your K is not right yet: fix K first" in message


def test_a_transposed_step_from_the_right_parents_is_diagnosed():
    message = failure("worksheet_scores", typed_worksheet(scores=grid(KEY["Q"].T @ KEY["K"])))
    assert "Diagnosis: your scores are the transpose of Kᵀ Q" in message


def test_rounding_on_paper_is_diagnosed():
    half_up = np.vectorize(lambda s: math.floor(s / 2 + Fraction(1, 2)), otypes=[object])
    message = failure("worksheet_scaled", typed_worksheet(scaled=grid(half_up(KEY["scores"]))))
    assert "you rounded s/2 to the nearest whole number" in message


def test_practice_worksheets_are_reviewed_with_their_own_key():
    ws = new_worksheet(5)
    key = answer_key(ws)
    answers = {step: grid(key[step]) for step in STEPS}
    answers["Z"] = ""
    reviews = sheet.review_worksheet(answers, ws, key, label="PRACTICE")
    assert [r.status for r in reviews] == ["right"] * 6 + ["missing"]
    assert "PRACTICE['Z']" in reviews[-1].message
    published = {step: grid(KEY[step]) for step in STEPS}
    wrong = sheet.review_worksheet(published, ws, key, label="PRACTICE")
    assert not all(r.right for r in wrong)


def test_a_practice_review_points_at_the_parents_review_not_at_a_check():
    ws = new_worksheet(5)
    key = answer_key(ws)
    answers = {step: grid(key[step]) for step in STEPS}
    K = key["K"].copy()
    K[0, 0] += 1
    scores = key["scores"].copy()
    scores[0, 0] += 5
    answers.update(K=grid(K), scores=grid(scores))
    review = sheet.review_worksheet(answers, ws, key, label="PRACTICE")[STEPS.index("scores")]
    assert "fix K first (its review says where)" in review.message
    assert "check(" not in review.message

# ----------------------------------------------------------------- the references against oracles

small = st.integers(-4, 4)
dims = st.integers(1, 5)


def all_fractions(M) -> bool:
    return isinstance(M, np.ndarray) and M.dtype == object and all(isinstance(v, Fraction) for v in M.flat)


def as_float(M) -> np.ndarray:
    return np.asarray(M, dtype=object).astype(float)


@st.composite
def key_query_pairs(draw):
    d, t_k, t_q = draw(dims), draw(dims), draw(dims)
    K = draw(arrays(np.int64, (d, t_k), elements=small))
    Q = draw(arrays(np.int64, (d, t_q), elements=small))
    return K, Q


@settings(max_examples=60, deadline=None)
@given(pair=key_query_pairs())
def test_key_query_scores_is_k_transposed_times_q(pair):
    K, Q = pair
    S = ref.key_query_scores(K, Q)
    assert all_fractions(S)
    np.testing.assert_array_equal(as_float(S), K.T @ Q)  # integers: exact in float64 too
    i, j = K.shape[1] - 1, Q.shape[1] - 1
    assert S[i, j] == sum(int(a) * int(b) for a, b in zip(K[:, i], Q[:, j]))  # k_i · q_j


@settings(max_examples=60, deadline=None)
@given(S=arrays(np.int64, st.tuples(dims, dims), elements=st.integers(-50, 50)))
def test_floor_half_matches_integer_floor_division(S):
    H = ref.floor_half(S)
    assert all_fractions(H) and all(v.denominator == 1 for v in H.flat)
    np.testing.assert_array_equal(as_float(H), S // 2)  # Python/NumPy // floors, also below 0


@pytest.mark.parametrize("s, floor", [(-1, -1), (-3, -2), (-2, -1), (1, 0), (3, 1), (0, 0)])
def test_floor_half_goes_down_for_negatives(s, floor):
    assert ref.floor_half([[s]])[0, 0] == floor


def test_floor_half_on_fractions_and_floats():
    H = ref.floor_half([[Fraction(7, 3), Fraction(-5, 2)], [0.5, -0.5]])
    assert H.tolist() == [[1, -2], [0, -1]]


@settings(max_examples=60, deadline=None)
@given(S=arrays(np.int64, st.tuples(dims, dims), elements=st.integers(-6, 8)))
def test_softmax3_columns_is_exact_and_matches_floats(S):
    A = ref.softmax3_columns(S)
    assert all_fractions(A)
    assert all(sum(A[:, j]) == 1 for j in range(A.shape[1]))  # exactly 1
    powers = 3.0 ** S
    np.testing.assert_allclose(as_float(A), powers / powers.sum(axis=0), rtol=1e-12)
    # Ratios inside a column are exact powers of 3.
    if S.shape[0] > 1:
        assert A[0, 0] / A[1, 0] == Fraction(3) ** int(S[0, 0] - S[1, 0])


@st.composite
def problems(draw):
    d_in, T, d_k, d_v = draw(dims), draw(dims), draw(dims), draw(dims)
    X_ = draw(arrays(np.int64, (d_in, T), elements=st.integers(0, 2)))
    Ws = [draw(arrays(np.int64, (d, d_in), elements=st.integers(-1, 1))) for d in (d_k, d_k, d_v)]
    return (X_, *Ws)


def float_attention(X_, W_q, W_k, W_v):
    """The worksheet in plain NumPy floats: an oracle written without Fractions."""
    Q, K, V = W_q @ X_, W_k @ X_, W_v @ X_
    scores = K.T @ Q
    scaled = np.floor_divide(scores, 2)
    powers = 3.0 ** scaled
    A = powers / powers.sum(axis=0, keepdims=True)
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": V @ A}


@settings(max_examples=40, deadline=None)
@given(problem=problems())
def test_attention_by_hand_matches_a_float_oracle(problem):
    steps = ref.attention_by_hand(*problem)
    assert list(steps) == list(STEPS)
    oracle = float_attention(*problem)
    for name in STEPS:
        assert all_fractions(steps[name]), name
        np.testing.assert_allclose(as_float(steps[name]), oracle[name], rtol=1e-12, atol=1e-12)
    assert all(sum(steps["A"][:, j]) == 1 for j in range(steps["A"].shape[1]))


@settings(max_examples=40, deadline=None)
@given(problem=problems())
def test_row_convention_is_the_transpose_of_the_column_convention(problem):
    X_, *Ws = problem
    columns = ref.attention_by_hand(X_, *Ws)
    rows = ref.row_convention_attention(X_.T, *Ws)
    for name in STEPS:
        assert rows[name].shape == columns[name].T.shape
        assert (rows[name] == columns[name].T).all(), name
    assert all(sum(rows["A"][i]) == 1 for i in range(rows["A"].shape[0]))  # rows sum to 1


def test_published_worksheet_is_hand_friendly():
    assert X.shape == (6, 4) and W_Q.shape == W_K.shape == W_V.shape == (3, 6)
    for M in (X, W_Q, W_K, W_V):
        assert M.dtype.kind == "i" and np.abs(M).max() <= 1
    key = KEY
    scores = as_float(key["scores"])
    assert (scores < 0).sum() == 1 and scores.min() == -1  # one negative score: floor(-1/2)
    assert scores.max() <= 6 and (scores % 2 == 1).any()   # small, with odd ones
    scaled = as_float(key["scaled"])
    assert -1 <= scaled.min() and scaled.max() <= 3         # powers of 3 from 1/3 to 27
    sums = [sum(Fraction(3) ** int(s) for s in key["scaled"][:, j]) for j in range(4)]
    assert max(sums) <= 32
    for name in STEPS:
        assert max(v.denominator for v in key[name].flat) <= 32


def test_published_worksheet_shows_every_misconception():
    """Each mistake the lesson names changes some number on the published worksheet."""
    key = KEY
    scores = key["scores"]
    assert not (scores == scores.T).all()                       # Qᵀ K differs from Kᵀ Q
    halves = [s / 2 for s in scores.flat]
    assert any(round(h) != math.floor(h) for h in halves)       # rounding differs
    assert any(int(h) != math.floor(h) for h in halves)         # truncation differs
    A = key["A"]
    assert not (A == A.T).all()                                 # V Aᵀ differs from V A
    rows = ref.softmax3_columns(key["scaled"].T).T
    assert not (rows == A).all()                                # rows differ from columns


@pytest.mark.parametrize(
    "fn, args, message",
    [
        (ref.key_query_scores, (np.ones((3, 4)), np.ones((2, 4))), r"K of shape 3×4 and Q of shape 2×4"),
        (ref.floor_half, ([[1.0, float("nan")]],), r"S must hold finite numbers, got nan"),
        (ref.softmax3_columns, ([[Fraction(1, 2)]],), r"S must hold whole numbers, got 1/2"),
        (ref.softmax3_columns, ([0, 1],), r"S must have 2 axes, got shape 2"),
        (ref.attention_by_hand, (np.ones((6, 4)), np.ones((3, 5)), np.ones((3, 6)), np.ones((3, 6))),
         r"W_Q has 5 columns \(shape 3×5\) but X has 6 rows \(shape 6×4\)"),
        (ref.attention_by_hand, (np.ones((6, 4)), np.ones((3, 6)), np.ones((2, 6)), np.ones((3, 6))),
         r"W_Q has 3 rows \(shape 3×6\) and W_K has 2"),
        (ref.row_convention_attention, (np.ones((4, 5)), np.ones((3, 6)), np.ones((3, 6)), np.ones((3, 6))),
         r"W_Q has 6 columns \(shape 3×6\) but X_rows has 5 columns \(shape 4×5\)"),
        (ref.key_query_scores, ([[1, 2], [3]], [[1]]), r"K could not be read as an array"),
        (ref.floor_half, ([["3"]],), r"S must hold numbers, got '3'"),
    ],
)
def test_bad_input_raises_a_value_error_naming_the_argument(fn, args, message):
    with pytest.raises(ValueError, match=message):
        fn(*args)


def test_inputs_are_not_changed():
    S = np.array([[3, -1], [2, 5]])
    before = S.copy()
    ref.floor_half(S)
    ref.softmax3_columns(S)
    np.testing.assert_array_equal(S, before)

# ----------------------------------------------------------------- the rules the notebook states

def scores_in_floats(K, Q):
    K, Q = np.asarray(K, dtype=float), np.asarray(Q, dtype=float)
    if K.ndim != 2 or Q.ndim != 2 or K.shape[0] != Q.shape[0] or np.isnan(K).any():
        raise ValueError("K and Q must be matrices with the same number of rows, and numbers")
    return K.T @ Q


def scores_without_the_given_lines(K, Q):
    """Every entry made a Fraction, but no check that K and Q are matrices."""
    exact = np.vectorize(Fraction, otypes=[object])
    return exact(np.asarray(K, dtype=object)).T @ exact(np.asarray(Q, dtype=object))


def half_toward_zero(S):
    S = as_fractions(S, "S")
    return np.vectorize(lambda s: Fraction(int(s / 2)), otypes=[object])(S)


def half_without_the_given_line(S):
    """Every entry made a Fraction, strings and vectors included."""
    return np.vectorize(lambda s: Fraction(s) // 2, otypes=[object])(np.asarray(S, dtype=object))


def powers_without_the_given_line(S):
    P = np.vectorize(lambda s: Fraction(3) ** Fraction(s), otypes=[object])(
        np.asarray(S, dtype=object))
    return P / P.sum(axis=0)


def attention_with_float_weights(X, W_Q, W_K, W_V):
    def weights(scores, scaled):
        powers = 3.0 ** scaled.astype(float)
        return powers / powers.sum(axis=0)
    return attention_with_its_own_steps(X, W_Q, W_K, W_V, weights)


def attention_taking_a_vector(X, W_Q, W_K, W_V):
    """The given lines dropped: one vector X is taken as one token."""
    X = as_fractions(np.reshape(X, (np.shape(W_Q)[1], -1)), "X")
    return attention_returning_lists(X, W_Q, W_K, W_V)


def rows_trimming_the_weights(X_rows, W_Q, W_K, W_V):
    """The given lines dropped: weights wider than X_rows are cut to its width."""
    X_rows = as_fractions(X_rows, "X_rows")
    cut = [as_fractions(W, "W")[:, :X_rows.shape[1]] for W in (W_Q, W_K, W_V)]
    return rows_by_transposing(X_rows, *cut)


def worksheet_in_decimals(step: str) -> dict:
    return typed_worksheet(**{step: [[f"{float(v):.4f}" for v in row] for row in KEY[step]]})


AS_FRACTIONS = ("raises a `ValueError` naming the argument when the input is not a matrix of "
                "numbers")
BREAKS = {
    ("key_query_scores", "Returns T_k×T_q Fractions"): scores_in_floats,
    ("key_query_scores", AS_FRACTIONS): scores_without_the_given_lines,
    ("floor_half", "floor(-1/2) is -1"): half_toward_zero,
    ("floor_half", AS_FRACTIONS): half_without_the_given_line,
    ("softmax3_columns", "as exact Fractions"): softmax_int_powers,
    ("softmax3_columns", AS_FRACTIONS): powers_without_the_given_line,
    ("attention_by_hand", "every step exact"): attention_with_float_weights,
    ("attention_by_hand", AS_FRACTIONS): attention_taking_a_vector,
    ("row_convention_attention", AS_FRACTIONS): rows_trimming_the_weights,
    ("worksheet_A", "fractions as `3/16`"): worksheet_in_decimals("A"),
    ("worksheet_Z", "fractions as `3/16`"): worksheet_in_decimals("Z"),
}


@pytest.mark.parametrize("key", BREAKS, ids=lambda key: f"{key[0]}: {key[1][:40]}")
def test_an_answer_that_breaks_a_stated_rule_fails_and_names_it(key):
    assert not broken(key, BREAKS[key])


def test_a_whole_number_typed_with_a_point_is_still_read_as_whole(capsys):
    """Only the steps that hold fractions have a rule on how to type them."""
    assert not message_of("worksheet_Q", typed_worksheet(
        Q=[[f"{float(v):.1f}" for v in row] for row in KEY["Q"]]))


# ----------------------------------------------------------------- the printable worksheet

NAMES = [f"worksheet_{kind}.{ext}" for kind in ("blank", "key") for ext in ("png", "pdf")]


def ink(png, below: float = 0.9) -> float:
    """The share of pixels darker than ``below`` (0.9: anything not nearly white; 0.4:
    text and lines, not the pale fills of the boxes)."""
    image = mpimg.imread(png)[..., :3]
    return float((image.min(axis=-1) < below).mean())


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    out = tmp_path_factory.mktemp("assets")
    paths = sheet.write_blank(out) + assets.write_key(out)
    return out, paths


def test_the_generator_writes_blank_and_key_as_png_and_pdf(written):
    out, paths = written
    assert sorted(p.name for p in paths) == sorted(NAMES)
    for path in paths:
        assert path.exists() and path.stat().st_size > 10_000, path


def test_the_pages_are_not_blank_and_the_key_has_more_ink(written):
    out, _ = written
    assert ink(out / "worksheet_blank.png") > 0.05, "the template looks empty"
    blank, key = ink(out / "worksheet_blank.png", 0.4), ink(out / "worksheet_key.png", 0.4)
    assert key > 1.1 * blank, "the answer key shows hardly more than the template"
    height, width = mpimg.imread(out / "worksheet_key.png").shape[:2]
    assert width > height  # landscape


def test_the_pdfs_are_pdf_pages_with_drawing(written):
    out, _ = written
    for kind in ("blank", "key"):
        data = (out / f"worksheet_{kind}.pdf").read_bytes()
        assert data.startswith(b"%PDF") and data.rstrip().endswith(b"%%EOF")
        assert b"/Type /Page" in data and b"/Font" in data
    assert (out / "worksheet_blank.pdf").read_bytes() != (out / "worksheet_key.pdf").read_bytes()


def test_the_committed_assets_match_a_fresh_run(written):
    """A stale asset (say, after the published matrices changed) fails here: run
    `python -m courseware.worksheet` (the blank template) and
    `python -m grader.lessons.03_attention_by_hand.assets` (the answer key)."""
    out, _ = written
    for kind in ("blank", "key"):
        committed = ROOT / "assets" / f"worksheet_{kind}.png"
        assert committed.exists(), f"{committed} is missing: see this test's docstring"
        fresh = mpimg.imread(out / f"worksheet_{kind}.png")
        old = mpimg.imread(committed)
        assert fresh.shape == old.shape
        assert np.abs(fresh - old).mean() < 0.01, f"{committed.name} is stale"
        assert (ROOT / "assets" / f"worksheet_{kind}.pdf").exists()


def test_the_command_lines_write_a_practice_worksheet(tmp_path):
    for module in ("courseware.worksheet", f"{LESSON}.assets"):
        result = subprocess.run([sys.executable, "-m", module, "--out", str(tmp_path), "--seed", "7"],
                                capture_output=True, text=True, cwd=ROOT)
        assert result.returncode == 0, result.stderr
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(n.replace("worksheet_", "worksheet_seed7_") for n in NAMES)
    assert ink(tmp_path / "worksheet_seed7_key.png") > 0.05


def test_the_learners_command_line_writes_no_answer_key(tmp_path):
    result = subprocess.run([sys.executable, "-m", "courseware.worksheet", "--out", str(tmp_path)],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["worksheet_blank.pdf", "worksheet_blank.png"]


def test_the_learners_side_holds_no_answer():
    """courseware.worksheet imports only the learner's side (the lesson's learner.py, and
    in this checkout the packages above it, which import no answer), and computes no key
    itself."""
    code = ("import sys, courseware.worksheet\n"
            "print(sorted(m for m in sys.modules if m.startswith(('grader.lessons', 'grader.reference'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/")
    assert out.returncode == 0, out.stderr
    part = "grader.lessons.03_attention_by_hand"
    assert out.stdout.strip() == str(["grader.lessons", part, f"{part}.learner",
                                      "grader.lessons.stated"]), out.stdout
    assert not hasattr(published_worksheet(), "key")


def test_the_comparison_figures_draw(tmp_path):
    fig = sheet.compare_attention(KEY["A"], sheet.exact_attention(KEY["scores"]))
    fig.savefig(tmp_path / "compare.png")
    plt.close(fig)
    fig = sheet.weight_ratio_figure()
    fig.savefig(tmp_path / "ratio.png")
    plt.close(fig)
    assert ink(tmp_path / "compare.png") > 0.05 and ink(tmp_path / "ratio.png") > 0.01


def test_exact_attention_columns_are_softmax_of_scores_over_root_3():
    S = np.array([[0.0, 2.0], [3.0, -1.0]])
    A = sheet.exact_attention(S)
    np.testing.assert_allclose(A.sum(axis=0), 1.0)
    assert np.isclose(A[1, 0] / A[0, 0], np.exp(3 / np.sqrt(3)))


def test_review_answers_counts_the_right_steps(capsys):
    ws = new_worksheet(3)
    answers = sheet.blank_answers()
    answers["Q"] = answer_key(ws)["Q"].tolist()
    answers["K"] = "1 2 3"
    assert sheet.review_answers(answers, ws, ref.attention_by_hand) == 1
    out = capsys.readouterr().out
    assert "✓ Q" in out and "✗ K" in out and "· V: not filled in yet" in out


def attention_not_written(X, W_Q, W_K, W_V):
    X = as_fractions(X, "X")
    raise NotImplementedError()


def test_without_attention_by_hand_there_is_no_key_and_it_says_so(capsys):
    ws = new_worksheet(3)
    assert sheet.answer_key(attention_not_written, ws) is None
    assert "attention_by_hand is not written yet" in capsys.readouterr().out
    assert sheet.review_answers(sheet.blank_answers(), ws, attention_not_written) == 0
    out = capsys.readouterr().out
    assert "not written yet" in out and "steps right" not in out


def test_a_key_with_a_missing_step_is_refused(capsys):
    def without_z(*args):
        steps = ref.attention_by_hand(*args)
        del steps["Z"]
        return steps

    assert sheet.answer_key(without_z) is None
    assert "returned no Z" in capsys.readouterr().out

    def z_flattened(*args):
        steps = ref.attention_by_hand(*args)
        steps["Z"] = steps["Z"].ravel()
        return steps

    assert sheet.answer_key(z_flattened) is None
    assert "returned Z not as a matrix" in capsys.readouterr().out


def test_the_answer_key_is_the_learners_function_on_the_given_matrices():
    key = sheet.answer_key(ref.attention_by_hand, new_worksheet(4))
    fresh = answer_key(new_worksheet(4))
    assert list(key) == list(STEPS) and all((key[s] == fresh[s]).all() for s in STEPS)


def test_the_guide_says_what_each_entry_is_made_of_without_holding_the_key():
    story = lesson_part("03_attention_by_hand").story

    notes = sheet.guide(published_worksheet())
    assert list(notes) == list(STEPS)
    assert notes["Z"]["parents"] == ["V", "A"]
    assert notes["A"]["ancestors"] == ["K", "Q", "scores", "scaled"] and notes["A"]["columns_sum_to_one"]
    assert "columns_sum_to_one" not in notes["Z"]
    assert np.shape(notes["scores"]["stories"]) == (4, 4)
    template = notes["scores"]["stories"][1][2]
    assert template.startswith("Row 2 of Kᵀ Q uses k₂ = {K:col:1}")
    # The numbers come from the learner's own (right) steps when the review shows it.
    told = story(template, {"K": KEY["K"], "Q": KEY["Q"]})
    assert told.startswith("Row 2 of Kᵀ Q uses k₂ = (2, 1, 1)")
    assert story(template, {"Q": KEY["Q"]}) is None  # K not typed: no numbers to show
    # Nothing of the key is in the guide: no step's matrix appears in any sentence.
    text = str(notes)
    for step in ("scores", "scaled", "A", "Z"):
        assert sheet._vec(KEY[step][:, 0]) not in text, step


# ----------------------------------------------------------------- new_worksheet(seed)

SEEDS = range(300)


@pytest.fixture(scope="module")
def practice():
    return [new_worksheet(seed) for seed in SEEDS]


@pytest.fixture(scope="module")
def keys(practice):
    return [answer_key(ws) for ws in practice]


def test_new_worksheets_have_the_published_shapes(practice):
    for ws in practice:
        assert ws.X.shape == (6, 4)
        assert ws.W_Q.shape == ws.W_K.shape == ws.W_V.shape == (3, 6)


def test_new_worksheets_use_small_integers(practice, keys):
    for ws, key in zip(practice, keys):
        assert set(np.unique(ws.X)) <= {0, 1}
        for W in (ws.W_Q, ws.W_K, ws.W_V):
            assert W.dtype.kind == "i" and set(np.unique(W)) <= {-1, 0, 1}
        lo, hi = HAND_LIMITS["QKV"]
        for step in ("Q", "K", "V"):
            assert all(lo <= v <= hi and v.denominator == 1 for v in key[step].flat), (ws.seed, step)


def test_new_worksheets_keep_the_powers_of_3_bounded(practice, keys):
    for ws, key in zip(practice, keys):
        scores = np.array(key["scores"].tolist(), dtype=float)
        lo, hi = HAND_LIMITS["scores"]
        assert lo <= scores.min() and scores.max() <= hi
        assert (scores < 0).sum() <= HAND_LIMITS["negative_scores"]
        powers = [Fraction(3) ** int(s) for s in key["scaled"].flat]
        assert Fraction(1, 3) <= min(powers) and max(powers) <= 81, ws.seed
        for j in range(4):
            column = [Fraction(3) ** int(s) for s in key["scaled"][:, j]]
            assert sum(column) <= HAND_LIMITS["column_sum"]
            assert len(set(column)) >= 2  # never uniform: something to see in every column
        assert all(v.denominator <= 3 * 120 for v in key["A"].flat)


def test_new_worksheets_answer_keys_match_a_float_oracle(practice, keys):
    for ws, key in zip(practice[:40], keys):
        oracle = float_attention(*ws.given)
        for s in STEPS:
            np.testing.assert_allclose(as_float(key[s]), oracle[s], rtol=1e-12, atol=1e-12)


def test_new_worksheets_are_reproducible_and_varied(practice, keys):
    again = new_worksheet(17)
    assert (again.X == practice[17].X).all() and (again.W_V == practice[17].W_V).all()
    distinct = {(ws.X.tobytes(), ws.W_Q.tobytes(), ws.W_K.tobytes(), ws.W_V.tobytes()) for ws in practice}
    assert len(distinct) == len(practice)
    assert any((key["scores"] < 0).any() for key in keys)  # negatives do come up


@pytest.mark.parametrize("seed", [-1, 1.5, "3", True])
def test_new_worksheet_rejects_bad_seeds(seed):
    with pytest.raises(ValueError, match="seed must be a non-negative whole number"):
        new_worksheet(seed)
