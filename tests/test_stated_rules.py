"""Every rule a notebook states is checked, or stated as advice (grader.lessons.stated).

Each exercise lists the rules its notebook states (``Exercise.stated``). This keeps the
list honest: every exercise has one; every rule's words are in the released notebook, so
the list cannot drift from what learners read; what a rule says checks it is there (rules
for the source scan, a memory case, a timed case, read-noting inputs, inputs to reject);
an exercise whose check forbids or requires something says so in its notebook; and every
rule that is checked has an answer that breaks it in the lesson's own test file
(``BREAKS``, judged there by ``stated_rules.broken``).
"""
from __future__ import annotations

import importlib
import json
import re

import pytest

from conftest import LESSONS, ROOT
from grader.course import released_notebook
from grader.lessons import get, lesson_of, load_all
from grader.lessons.stated import ADVICE, BAD_INPUTS, MEMORY, OBJECTS, ONE_PASS, SOURCE_SCAN, WORK, Check, Stated
from grader.learner.plugins import lesson_part

EXERCISES = sorted(load_all(), key=lambda name: (lesson_of(name), name))


def _spaced(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def released_text(lesson: str) -> str:
    """Every cell of the lesson's released notebook, what a learner reads, spaces folded."""
    nb = json.loads(released_notebook(lesson, ROOT).read_text(encoding="utf-8"))
    return _spaced("\n".join("".join(c["source"]) for c in nb["cells"]))


def breaks_of(lesson: str) -> dict:
    """The lesson test file's answers that break its rules, by (exercise, words)."""
    return getattr(importlib.import_module(f"test_{lesson}"), "BREAKS", {})


@pytest.mark.parametrize("name", EXERCISES)
def test_every_exercise_lists_the_rules_its_notebook_states(name):
    stated = get(name).stated
    assert stated is not None, (f"{name} has no `stated`: list the rules its notebook states, "
                                f"() if it states none (grader/lessons/README.md)")
    assert all(isinstance(s, Stated) for s in stated), name
    assert len({s.words for s in stated}) == len(stated), f"{name} lists a rule twice"


@pytest.mark.parametrize("name", EXERCISES)
def test_every_rules_words_are_in_the_released_notebook(name):
    text = released_text(lesson_of(name))
    for rule in get(name).stated or ():
        assert rule.words.strip() and _spaced(rule.words) in text, \
            f"{name}: {rule.words!r} is not what its released notebook says"


def _memory_cases(ex) -> bool:
    return any(c.build.memory_budget for hidden in (False, True)
               for c in ex.draw(hidden))


@pytest.mark.parametrize("name", EXERCISES)
def test_what_a_rule_says_checks_it_is_there(name):
    ex = get(name)
    kinds = {rule.check for rule in ex.stated or ()}
    constrains = ex.rules is not None and ex.rules.constrains
    assert (SOURCE_SCAN in kinds) == constrains, \
        f"{name}: its check {'forbids or requires' if constrains else 'reads'} nothing in the " \
        f"source, but its notebook {'does not say so' if constrains else 'says it does'}"
    assert (WORK in kinds) == (ex.work is not None), name
    assert (ONE_PASS in kinds) == isinstance(ex.driver, lesson_part("07_long_attention").OnePass), name
    assert (MEMORY in kinds) == _memory_cases(ex), name
    assert (OBJECTS in kinds) == isinstance(ex.driver, lesson_part("05_multi_head_attention").LoadsWeights), name
    if BAD_INPUTS in kinds:
        assert ex.bad_inputs, f"{name}: a rule on inputs to reject, and none to try"


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_checked_rule_has_an_answer_that_breaks_it_in_the_lessons_tests(lesson):
    breaks = breaks_of(lesson)
    rules = {(name, rule.words): rule for name in EXERCISES if lesson_of(name) == lesson
             for rule in get(name).stated or ()}
    missing = [key for key, rule in rules.items() if rule.check is not ADVICE and key not in breaks]
    assert not missing, f"tests/test_{lesson}.py: no answer in BREAKS breaks {missing}"
    stale = [key for key in breaks if key not in rules or rules[key].check is ADVICE]
    assert not stale, f"tests/test_{lesson}.py: BREAKS holds answers for no checked rule: {stale}"


def test_a_checked_rule_names_what_its_message_says_and_advice_names_nothing():
    assert Stated("Use no Python loop", SOURCE_SCAN, "a for loop").named == "a for loop"
    assert Stated("One call does it.", ADVICE).named == ""
    with pytest.raises(ValueError, match="names what its message says"):
        Stated("Use no Python loop", SOURCE_SCAN)
    with pytest.raises(ValueError, match="names what its message says"):
        Stated("One call does it.", ADVICE, "a for loop")
    with pytest.raises(TypeError, match="not a Check"):
        Stated("Use no Python loop", "source scan", "a for loop")
    assert set(Check) >= {SOURCE_SCAN, MEMORY, WORK, ONE_PASS, BAD_INPUTS, ADVICE}


def test_the_inventory_catches_a_rule_left_out_of_the_notebook(monkeypatch):
    """The words test fails on words the notebook does not hold, and the breaks test on a
    checked rule with no answer that breaks it."""
    ex = get("rope")
    ghost = Stated("use exactly three lines", SOURCE_SCAN, "three lines")
    monkeypatch.setattr(ex, "stated", (*ex.stated, ghost))
    with pytest.raises(AssertionError, match="is not what its released notebook says"):
        test_every_rules_words_are_in_the_released_notebook("rope")
    with pytest.raises(AssertionError, match="no answer in BREAKS breaks"):
        test_every_checked_rule_has_an_answer_that_breaks_it_in_the_lessons_tests("08_positions")
