"""grader.check on lesson 03: correct code written other ways passes, learner-like wrong
code gets its diagnosis, and the WORKSHEET is graded step by step from typed numbers."""
import math
from fractions import Fraction

import numpy as np
import pytest

from grader import CheckFailed, check
from grader.exercises.attention_by_hand import read_matrix, review_worksheet
from grader.reference.by_hand import STEPS, new_worksheet, published_worksheet
from grader.validation import as_fractions

KEY = published_worksheet().key


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
        ("attention_by_hand", attention_z_is_a_v, "Z = V A"),
    ],
)
def test_mistakes_written_differently_get_their_diagnosis(name, fn, words):
    message = failure(name, fn)
    assert "Diagnosis:" in message and words in message, message


def test_a_float_softmax_message_shows_fractions_as_fractions():
    message = failure("softmax3_columns", softmax_fraction_base)
    assert "1/10" in message or "1/4" in message or "3/4" in message
    assert "Fraction(1, " not in message


def test_attention_by_hand_names_the_first_step_that_differs():
    message = failure("attention_by_hand", attention_z_is_a_v)
    assert "step 'Z'" in message or "raised ValueError" in message


def _blocks(message: str) -> tuple[str, str]:
    """The 'Expected:' and 'Your function returned:' blocks of a failure message."""
    expected = message.split("Expected:\n", 1)[1].split("Your function returned:\n", 1)[0]
    returned = message.split("Your function returned:\n", 1)[1].split("What differs:", 1)[0]
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
    assert "step 'A'" in message and "Diagnosis: each row of your weights sums to 1" in message
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
    assert "follows correctly from your K" in message and "Fix K first" in message


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


def test_a_transposed_step_is_diagnosed_from_the_learners_own_parents():
    K = KEY["K"].copy()
    K[1, 2] = 0
    message = failure("worksheet_scores", typed_worksheet(K=grid(K), scores=grid(KEY["Q"].T @ K)))
    assert "transpose of Kᵀ Q" in message


def test_rounding_on_paper_is_diagnosed():
    half_up = np.vectorize(lambda s: math.floor(s / 2 + Fraction(1, 2)), otypes=[object])
    message = failure("worksheet_scaled", typed_worksheet(scaled=grid(half_up(KEY["scores"]))))
    assert "you rounded s/2 to the nearest whole number" in message


def test_practice_worksheets_are_reviewed_with_their_own_key():
    ws = new_worksheet(5)
    answers = {step: grid(ws.key[step]) for step in STEPS}
    answers["Z"] = ""
    reviews = review_worksheet(answers, ws, label="PRACTICE")
    assert [r.status for r in reviews] == ["right"] * 6 + ["missing"]
    assert "PRACTICE['Z']" in reviews[-1].message
    wrong = review_worksheet({step: grid(KEY[step]) for step in STEPS}, ws, label="PRACTICE")
    assert not all(r.right for r in wrong)
