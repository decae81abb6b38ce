"""The held-out answers (tests/heldout_answers.py) through their checks: every right
answer passes, every wrong one fails with a message that hands over no solution code and
is not too long, and at least a given share of the messages name the learner's mistake.

MAX_LINES is the limit every message keeps (``grader.learner.wording.MESSAGE_LINES``);
NAMED_AT_LEAST is what the checks achieve now: raise it as the messages improve
(``benchmarks/heldout_diagnosis.py --misses`` lists the answers left unnamed).
"""
from __future__ import annotations

import re
from collections import Counter

import pytest

from grader import lessons
from grader.learner.wording import MESSAGE_LINES
from heldout import diagnosis, measure, measure_all, names
from heldout_answers import RIGHT, WRONG
from sources import handed_over

# ---------------------------------------------------------------- where the checks stand now
# Every message has fewer lines than this (the longest now: 24; before relations, 47).
MAX_LINES = MESSAGE_LINES
# The share of wrong answers whose message names the mistake (now 115 of 138, 83.3%;
# before relations, 95 of 138, 68.8%).
NAMED_AT_LEAST = 0.83
# ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def results() -> dict:
    return {r.id: r for r in measure_all()}


def test_the_set_is_what_it_claims():
    ids = [a.id for a in [*WRONG, *RIGHT]]
    assert len(ids) == len(set(ids))
    per_lesson = Counter(lessons.lesson_of(w.exercise) for w in WRONG)
    # The set was written for lessons 01-08, before lesson 09 existed.
    assert set(per_lesson) == {lesson for lesson in lessons.lessons() if lesson[:2] <= "08"}
    assert len(WRONG) >= 70 and len(RIGHT) >= 12
    assert 2 * sum(n for lesson, n in per_lesson.items() if lesson[:2] in {"05", "06", "07"}) \
        >= len(WRONG)
    composite = [w for w in WRONG
                 if lessons.get(w.exercise).calls or lessons.get(w.exercise).uses]
    assert len(composite) >= 12
    for w in WRONG:
        assert w.named and all(re.compile(group) for group in w.named), w.id


@pytest.mark.parametrize("answer_id", [r.id for r in RIGHT])
def test_a_right_answer_passes(results, answer_id):
    r = results[answer_id]
    assert r.passed, f"{answer_id} ({r.about}) was rejected:\n{r.message}"


@pytest.mark.parametrize("answer_id", [w.id for w in WRONG])
def test_a_wrong_answer_fails(results, answer_id):
    assert not results[answer_id].passed, f"{answer_id} passed: {results[answer_id].about}"


@pytest.mark.parametrize("answer_id", [a.id for a in [*WRONG, *RIGHT]])
def test_no_message_hands_over_the_solution(results, answer_id):
    r = results[answer_id]
    assert not handed_over(r.message, r.lesson), r.message


def test_no_message_is_too_long(results):
    long = {r.id: r.lines for r in results.values() if r.lines >= MAX_LINES}
    assert not long, f"messages of {MAX_LINES} lines or more: {long}"


def test_enough_messages_name_the_mistake(results):
    wrong = [r for r in results.values() if not r.right]
    share = sum(bool(r.named) for r in wrong) / len(wrong)
    assert share >= NAMED_AT_LEAST, (
        f"{share:.1%} of the wrong answers are named, fewer than {NAMED_AT_LEAST:.0%}: "
        f"{sorted(r.id for r in wrong if not r.named)}")


# ---------------------------------------------------------------- the measurement can fail

GENERIC = """\
attention_scores is not right yet.

Hint: Check your shapes, then work one entry of the input above by hand.

Smallest input where it goes wrong (one sequence):
  the scale is sqrt(d_k): you multiplied by it
"""


def test_a_generic_hint_names_no_mistake():
    times_sqrt = next(w for w in WRONG if w.id == "02-scores-times-sqrt")
    assert not names(GENERIC, times_sqrt.named)
    # What comes after the input is shown is not the diagnosis, however right it is.
    assert "multiplied" not in diagnosis(GENERIC)
    naming = GENERIC.replace("Hint: Check", "Diagnosis: you multiplied by √d_k. Check")
    assert names(naming, times_sqrt.named)


def test_the_learners_own_line_names_nothing():
    quoted = ("batched_matmul raised ValueError: too many subscripts\n"
              "  at line 9 of your code: `return np.einsum(\"bnk,bkm->bnm\", A, B)`\n\n"
              "Hint: the matrix product broadcasts the batch axes.\n\nIt raised on this input:")
    batched = next(w for w in WRONG if w.id == "01-batched-no-broadcast")
    assert not names(quoted, batched.named)


def test_a_right_answer_with_a_bug_is_rejected():
    right = next(r for r in RIGHT if r.id == "04-causal-compare-positions")
    buggy = right._replace(id="04-causal-compare-positions-bug",
                           source=right.source.replace(">=", ">"))
    assert buggy.source != right.source
    assert not measure(buggy).passed
