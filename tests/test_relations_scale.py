"""Scales of the scores that the catalogue no longer lists, because the recorded rescaled
results name them (``Exercise.scales``, ``grader.learner.relations.rescaled``): an answer
whose scores carry a wrong factor before the softmax is told which factor of the case's
scale it amounts to, on the visible and the hidden cases.

Each mistake is the lesson's reference with one knob set wrong, as it was when it was
catalogued."""
import pytest

from dropped import diagnosis, named_by_relation
from grader import lessons
from grader.learner.checks import LocalSubject, find_expectations
from grader.learner.engine import judge

R02 = lessons.lesson_module("02_dot_product_attention", "reference")
R04 = lessons.lesson_module("04_masking", "reference")
R07 = lessons.lesson_module("07_long_attention", "reference")
knob = lessons.knob

MISSING = "Is the division by √d_k missing?"
TWICE = "Is there one division by √d_k too many?"
BY_T_K = "That is what dividing by √T_k instead of √d_k gives."


def attention(by):
    return knob(R02._attention, scores=knob(R02._scores, divide_by=by))


DROPPED = [
    ("scaled_dot_product_attention", "no scaling", attention("1"), MISSING),
    ("scaled_dot_product_attention", "scaled by d_k", attention("d_k"), TWICE),
    ("scaled_dot_product_attention", "scaled by sqrt(T_k)", attention("sqrt(T_k)"), BY_T_K),
    ("scaled_dot_product_attention", "scaled by sqrt(T_q)", attention("sqrt(T_q)"),
     "That is what dividing by √T_q instead of √d_k gives."),
    ("attend_one_query", "no scaling", knob(R02._attend_one_query, divide_by="1"), MISSING),
    ("attend_one_query", "scaled by d_k", knob(R02._attend_one_query, divide_by="d_k"), TWICE),
    ("attend_one_query", "scaled by sqrt(T_k)",
     knob(R02._attend_one_query, divide_by="sqrt(T_k)"), BY_T_K),
    ("self_attention", "no scaling", knob(R02._self_attention, divide_by="1"), MISSING),
    ("self_attention", "scaled by sqrt(d_model)",
     knob(R02._self_attention, divide_by="sqrt(d_model)"),
     "That is what dividing by √d_model instead of √d_k gives."),
    ("masked_attention", "no scaling", knob(R04._masked_attention, scaled=False), MISSING),
    ("attention_one_pass", "scores not scaled", knob(R07._one_pass, scaled=False), MISSING),
]


@pytest.mark.parametrize("name, mistake, answer, phrase",
                         [pytest.param(*d, id=f"{d[0]}:{d[1]}") for d in DROPPED])
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_a_wrong_scale_is_named_by_the_factor_it_amounts_to(name, mistake, answer, phrase, hidden):
    verdict = named_by_relation(name, answer, "scaled scores", hidden)
    said = diagnosis(verdict)
    assert "with the scores multiplied by" in said and phrase in said, f"{mistake}: {verdict.message}"


def test_the_right_scale_and_another_mistake_are_not_taken_for_a_scale():
    for name in ("scaled_dot_product_attention", "attention_one_pass"):
        exp = lessons.expectations(name, False)
        ref = lessons.get(name).reference
        assert judge(exp, LocalSubject(ref, exp.info.driver, name), expectations_of=find_expectations).passed
    exp = lessons.expectations("scaled_dot_product_attention", False)
    wrong = knob(R02._attention, values_transposed=True)
    verdict = judge(exp, LocalSubject(wrong, exp.info.driver, "scaled_dot_product_attention"), expectations_of=find_expectations)
    assert not verdict.passed and verdict.relation != "scaled scores"
