"""Catalogued mistakes that a rule of the error model reproduces at a named site, and that
the catalogue therefore no longer lists (issue: the catalogue shrinks). Each is still
named, by the rule and site this test expects, on the visible and the hidden cases, in a
message that is short, says what the learner did there, and hands over no solution code.

Each mistake is written as it was catalogued: a knob of the lesson's reference, in the
words of the lesson's ``exercises.py`` (evaluated in that module, so that ``ref``,
``knob`` and the lesson's own shorthands mean what they meant there). Found with
``benchmarks/catalogue_rules.py``; a reproduced entry was kept catalogued where the rule's
words would name another cause, or where a relation names something else first.
"""
import pytest

from dropped import diagnosis
from grader import lessons
from grader.learner.checks import LocalSubject, find_expectations
from grader.learner.engine import judge
from grader.learner.wording import MESSAGE_LINES
from sources import handed_over

LESSON = {lesson[:2]: lesson for lesson in lessons.lessons()}

DROPPED = [  # lesson, exercise, the name it was catalogued by, its knob, the mutant that names it
    ('01', 'matmul_cols', 'indices of B swapped',
     'knob(ref._cols, weight="B[j, p]")',
     'indices swapped in the weighted sum for column j'),
    ('01', 'matmul_cols', 'overwrites instead of accumulating',
     'knob(ref._outer, accumulate=False)',
     'overwritten instead of added to in the weighted sum for column j'),
    ('01', 'matmul_rows', 'indices of A swapped',
     'knob(ref._rows, weight="A[p, i]")',
     'indices swapped in the weighted sum for row i'),
    ('01', 'matmul_rows', 'overwrites instead of accumulating',
     'knob(ref._outer, accumulate=False)',
     'overwritten instead of added to in the weighted sum for row i'),
    ('01', 'weighted_average_rows', 'transposed weights',
     'knob(ref._weighted_average, weights="Wᵀ")',
     'transpose added in the mixture of the rows of V'),
    ('03', 'attention_by_hand', 'powers of the unscaled scores',
     'columns_with(powers_of="scores")',
     'another value used in the weights A'),
    ('03', 'attention_by_hand', 'Z = A V',
     'columns_with(mix="A V")',
     'operands swapped in the output Z'),
    ('02', 'attend_one_query', 'weights not normalised',
     'one_query(normalised=False)',
     'operand left out in the weights'),
    ('02', 'score_variance', 'variance of the products',
     'variance(summed_over=None)',
     'reduction left out in the dot products'),
    ('03', 'softmax3_columns', 'normalised by the whole matrix',
     'knob(ref._softmax3, normalise="matrix")',
     'reduced over every axis in the weights A'),
    ('03', 'softmax3_columns', 'not normalised',
     'knob(ref._softmax3, normalise=None)',
     'operand left out in the weights A'),
    ('04', 'prefix_average', 'columns normalised',
     'prefix(normalise="columns")',
     'axis changed in the row normalisation of W'),
    ('04', 'prefix_average', 'running sum',
     'prefix(normalise=None)',
     'operand left out in the row normalisation of W'),
    ('05', 'MultiHeadAttention', 'scores not scaled',
     'module_with(scale="none")',
     'operand left out in the scale of the scores'),
    ('05', 'mha_parameter_count', 'w_o not counted',
     'knob(ref._parameter_count, output_projection=False)',
     'operand left out in the total count'),
    ('06', 'Block', 'no skips with residual=True',
     'knob(ref._Block, residual_keeps=())',
     'operand left out in the skip'),
    ('06', 'TinyTransformer', 'no position embedding',
     'knob(ref._TinyTransformer, positions=False)',
     'operand left out in the sum of the token and position embeddings'),
    ('06', 'token_similarity', 'dot products, not cosines',
     'knob(ref._token_similarity, cosine=False)',
     'operand left out in the unit vectors'),
    ('07', 'attention_one_pass', 'output not rescaled',
     'one_pass(rescale_output=False)',
     "operand left out in the running output's update"),
    ('07', 'attention_one_pass', 'sum not rescaled',
     'one_pass(rescale_sum=False)',
     "operand left out in the running sum's update"),
    ('07', 'online_softmax_stats', 'maximum starts at 0',
     'stats(start=0.0)',
     "initial value changed in the running maximum's starting value"),
    ('07', 'online_softmax_stats', 'sum not rescaled',  # both named: no case tells them apart
     'stats(rescale_sum=False)',
     "another value used in the factor that rescales what is kept so far"),
    ('07', 'tiled_attention', 'output not rescaled',
     'tiles(rescale_output=False)',
     "operand left out in the running output's update"),
    ('07', 'tiled_attention', 'sum not rescaled',
     'tiles(rescale_sum=False)',
     "operand left out in the running sum's update"),
]


def _answer(lesson: str, impl: str):
    return eval(impl, vars(lessons.lesson_module(LESSON[lesson], "exercises")))  # the test's own table


@pytest.mark.parametrize("lesson, name, catalogued, impl, mutant",
                         [pytest.param(*d, id=f"{d[1]}:{d[2]}") for d in DROPPED])
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_a_dropped_mistake_is_named_by_its_rule_at_its_site(lesson, name, catalogued, impl, mutant, hidden):
    exp = lessons.expectations(name, hidden)
    assert not any(m.name == catalogued and not m.exact for m in exp.mistakes), \
        f"{name}: {catalogued!r} is still catalogued"
    verdict = judge(exp, LocalSubject(_answer(lesson, impl), exp.info.driver, name),
                    expectations_of=find_expectations)
    assert not verdict.passed, f"{name}: the dropped mistake {catalogued!r} passed"
    assert verdict.mistake == mutant, f"named {verdict.mistake!r} ({verdict.relation!r})\n{verdict.message}"
    assert "your answer behaves exactly as if" in diagnosis(verdict)
    assert len(verdict.message.splitlines()) < MESSAGE_LINES, verdict.message
    assert not handed_over(verdict.message, LESSON[lesson]), verdict.message


def test_a_mistake_no_rule_reaches_is_not_named_by_one():
    """The check above can fail: an answer that is wrong in a way no rule makes (every
    entry off by one half) gets no mutant's name."""
    exp = lessons.expectations("matmul_rows", False)
    ref = lessons.get("matmul_rows").reference
    verdict = judge(exp, LocalSubject(lambda A, B: ref(A, B) + 0.5, exp.info.driver, "matmul_rows"),
                    expectations_of=find_expectations)
    assert not verdict.passed and "your answer behaves exactly as if" not in diagnosis(verdict)
