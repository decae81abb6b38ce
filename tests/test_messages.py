"""How a check's message shows inputs and values (grader/learner/wording.py): each test
feeds in what an earlier wording showed wrongly, and reads what it shows now."""
import numpy as np

from grader.learner.cases import Case
from grader.learner.difference import difference
from grader.learner.wording import describe_input, fmt_value


def test_a_list_of_equal_blocks_is_shown_block_by_block_not_as_one_2d_array():
    blocks = [np.array([1.0]), np.array([3.0])]
    shown = describe_input(Case((blocks,), names=("scores_blocks",)))
    # Before: "scores_blocks (a Python list) =\n    [[1.],\n     [3.]]\n    (shape 2×1, ...)",
    # the 2-D array that the exercise rejects.
    assert "(a Python list) =" not in shown and "2×1" not in shown and "[[" not in shown
    assert shown.splitlines() == [
        "  scores_blocks (a Python list of 2 arrays) =",
        "    item 0:", "      [1.]", "      (shape 1, dtype float64)",
        "    item 1:", "      [3.]", "      (shape 1, dtype float64)",
    ]


def test_a_list_of_numbers_is_still_one_array():
    shown = describe_input(Case(([1, 4],), names=("depths",)))
    assert shown == "  depths (a Python list) =\n    [1, 4]\n    (shape 2, dtype int64)"
    assert "1 array)" in describe_input(Case(([np.zeros(2)],), names=("blocks",)))


def test_numpy_scalars_are_shown_as_the_numbers_they_hold():
    # Before: "np.float64(nan)", "np.True_", NumPy 2's repr.
    assert fmt_value(np.float64("nan")) == "    nan"
    assert fmt_value(np.float32(0.5)) == "    0.5"
    assert fmt_value((np.int64(3), np.bool_(True))) == "    item 0:\n      3\n    item 1:\n      True"
    assert fmt_value("text") == "    'text'" and fmt_value(None) == "    None"
    assert difference(False, np.bool_(True)) == "got True, expected False"
    assert difference("rows", np.str_("cols")) == "got 'cols', expected 'rows'"


def test_a_scalar_nan_is_named_without_an_index():
    # Before: "contains NaN (first at index ()) where a number was expected".
    assert difference(1.0, np.float64("nan")) == "got NaN where a number was expected"
    assert difference(float("nan"), 2.0) == "got 2 where NaN was expected"
    assert difference(np.ones(2), np.array([1.0, np.nan])) == \
        "contains NaN (first at index (1,)) where a number was expected"


def test_a_pair_of_results_is_narrowed_to_what_differs():
    import numpy as np

    from grader.learner.difference import FLOAT64
    from grader.learner.wording import note_text, noted_pair

    weights = np.full((2, 2, 3, 3), 1 / 3)
    wrong = weights.copy()
    wrong[1, 0, 2, 1] = 0.9
    output = np.arange(24.0).reshape(2, 3, 4)
    want, got, note = noted_pair((output, weights), (output, wrong), FLOAT64)
    assert "item 1, [1, 0] of the 2×2×3×3 float64 array:" in want and "item 0" not in want
    assert "item 1, [1, 0] of the 2×2×3×3 float64 array:" in got and "0.9" in got
    assert note_text(note) == "item 0: as expected"  # said once, by the message
    assert len(got.splitlines()) < 10
    params = {f"p{i}": np.ones(3) for i in range(6)}
    changed = {**params, "p2": np.zeros(3), "p4": np.zeros(3)}
    want, got, note = noted_pair(params, changed, FLOAT64)
    assert "'p2':" in got and "'p4':" not in got
    assert note_text(note) == "'p0', 'p1', 'p3', 'p5': as expected; also different: 'p4'"
    # values that are not tuples or dicts of one shape are shown whole
    shown = noted_pair(np.ones(2), np.zeros(3), FLOAT64)
    assert shown[1].count("\n") >= 1 and shown[2] == ([], [])



def test_a_message_too_long_with_the_values_keeps_what_differs_and_drops_them():
    """A tuple of matrices, wrong only on an input of five rows, gives a message that runs
    over the line limit even compact: the last level leaves out the whole values and keeps
    the line on what differs first (which names the entry, and both numbers)."""
    from grader import lessons
    from grader.learner.checks import LocalSubject, find_expectations
    from grader.learner.engine import judge
    from grader.learner.wording import MESSAGE_LINES

    ref = lessons.get("tiled_attention").reference

    def answer(Q, K, V, block_q, block_k, causal=False):
        out, skipped = ref(Q, K, V, block_q, block_k, causal)
        if np.shape(Q)[-2] == 5 and np.ndim(Q) == 2:
            out = out.copy()
            out[..., :4, -1] += 2.0
        return out, skipped

    exp = lessons.expectations("tiled_attention", False)
    verdict = judge(exp, LocalSubject(answer, exp.info.driver, "tiled_attention"),
                    expectations_of=find_expectations)
    lines = verdict.message.splitlines()
    assert not verdict.passed and len(lines) < MESSAGE_LINES, verdict.message
    assert any(line.startswith("What differs: item 0") for line in lines), verdict.message
    assert "Expected:" not in verdict.message, verdict.message
