"""Rule-breaking answers nobody anticipated are caught (issue 32, §2 and §7).

``tests/fresh_wrong.py`` holds answers that return the right values but break a rule their
notebook states, written from the notebooks and the README by a tester who had not read
the checks. Each is judged as the learner meets it, in the notebook (the visible check),
and as it is graded (the trusted checker and the kernel agent, hidden cases), through the
in-process kernel of ``tests/test_fresh_right.py``.

Not every one of them broke a rule after all. Those that return the right values and
differ in nothing a check or a learner can observe, or that break words which were
advice, are listed in ``RIGHT_AFTER_ALL`` with the reason, and the notebooks now word
those rules as what they are; they must pass. The few that break a rule no check here
sees are in ``NOT_SEEN_HERE``, with what does see them or why nothing does.
"""
from __future__ import annotations

from collections import Counter

import pytest

from grader import lessons

from fresh_wrong import WRONG
from heldout import judge
from heldout_answers import Right
from test_fresh_right import SLOW, graded, quietly

RIGHT_AFTER_ALL = {
    "fw-01-dot-loop-over-i-only": "the rule is a Python loop; over i and j is the reading, "
                                  "which the docstring now gives as advice",
    "fw-02-one-query-logsumexp": "stable without subtracting the maximum: the rule is now that "
                                 "large scores do not overflow",
    "fw-03-worksheet-scores-commas": "the worksheet reads numbers between commas as it reads "
                                     "them between spaces",
    "fw-03-worksheet-A-decimals": "0.09375 is exactly 3/32: the worksheet reads a decimal "
                                  "exactly",
    "fw-04-is-causal-no-early-exit": "the result is what is asked; stopping at the first change "
                                     "is now worded as allowed",
    "fw-06-block-empty-attn-mask": "a mask that hides nothing is no mask: every output is the "
                                   "same",
    "fw-06-block-is-causal-false": "is_causal=False is torch's default: nothing changes",
    "fw-06-block-extra-dropout-layer": "a Dropout(0.0) has no weights and changes nothing; the "
                                       "given layers keep their names",
    "fw-06-tiny-sequential-blocks": "nn.Sequential registers the blocks under the names "
                                    "nn.ModuleList gives them",
    "fw-06-train-zero-grad-last": "clearing after each step leaves no gradient for the next: "
                                  "the same updates, the same losses",
    "fw-06-ablation-deepcopy-no-reseed": "a copy of a model built right after seeding starts "
                                         "from the weights a new seeded build has",
    "fw-06-ablation-without-first": "each model is seeded before it is built, so the order of "
                                    "training changes nothing, and the rows come out in order",
    "fw-07-stats-functools-reduce": "functools.reduce is one loop over the stream, read once",
    "fw-07-one-pass-rest-then-block": "K[j:] is a view: a step still reads only its block's "
                                      "rows",
    "fw-07-decode-attend-then-append": "attending over the cache with the new key and value, "
                                       "then appending them, gives the same output and cache",
}
NOT_SEEN_HERE = {
    "fw-07-tiled-compute-then-skip": "the work rule is CPU time read from outside a sandboxed "
                                     "kernel: the grading corpus grades an answer like it",
    "fw-07-one-pass-block-summaries": "a summary kept per block is O(T_k / block): the budget "
                                      "sees it only with thousands of blocks, where honest "
                                      "answers' own overheads (np.split's views) pass it too",
}
CAUGHT = [w for w in WRONG if w.id not in RIGHT_AFTER_ALL and w.id not in NOT_SEEN_HERE]


def as_answer(wrong) -> Right:
    return Right(wrong.id, wrong.exercise, wrong.how, wrong.source)


def test_the_set_covers_every_lesson_and_every_id_is_classified_once():
    ids = [w.id for w in WRONG]
    assert len(ids) == len(set(ids)) and len(WRONG) >= 40
    assert set(RIGHT_AFTER_ALL) <= set(ids) and set(NOT_SEEN_HERE) <= set(ids)
    assert not set(RIGHT_AFTER_ALL) & set(NOT_SEEN_HERE)
    per_lesson = Counter(lessons.lesson_of(w.exercise) for w in CAUGHT)
    # The set was written for lessons 01-08, before lesson 09 existed.
    assert set(per_lesson) == {lesson for lesson in lessons.lessons() if lesson[:2] <= "08"}, \
        per_lesson
    assert min(per_lesson.values()) >= 3


@pytest.mark.parametrize("wrong", [w for w in CAUGHT if w.exercise not in SLOW],
                         ids=lambda w: w.id)
def test_a_fresh_rule_breaking_answer_fails_in_the_notebook(wrong):
    v = quietly(judge, as_answer(wrong))
    assert not v.passed, f"{wrong.id} ({wrong.how}) was accepted:\n{v.message}"


@pytest.mark.parametrize("wrong", CAUGHT, ids=lambda w: w.id)
def test_a_fresh_rule_breaking_answer_fails_at_grading(wrong):
    v = quietly(graded, as_answer(wrong), True)
    assert not v.passed, f"{wrong.id} ({wrong.how}) was accepted at grading:\n{v.message}"


@pytest.mark.parametrize("wrong", [w for w in WRONG if w.id in RIGHT_AFTER_ALL],
                         ids=lambda w: w.id)
def test_an_answer_that_was_right_after_all_passes_at_grading(wrong):
    v = quietly(graded, as_answer(wrong), True)
    assert v.passed, f"{wrong.id} ({RIGHT_AFTER_ALL[wrong.id]}) was rejected:\n{v.message}"
