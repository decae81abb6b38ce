"""Answers that break a rule a notebook states, judged by the check (grader.lessons.stated).

Each lesson's test file holds ``BREAKS``: for each rule of its exercises that something
checks, keyed by (exercise, the rule's words), an answer that breaks it, written as a
learner would. :func:`broken` judges one and says what went wrong, if anything;
``tests/test_stated_rules.py`` sees that every checked rule has one.
"""
from __future__ import annotations

from grader.learner.checks import verdict
from grader.lessons import get


def stated(exercise: str, words: str):
    """The rule of ``exercise`` whose words are ``words``."""
    found = [s for s in get(exercise).stated or () if s.words == words]
    assert found, f"{exercise} states no rule {words!r}"
    return found[0]


def message_of(exercise: str, answer) -> str:
    """The message of the first of the visible and the hidden check that fails ``answer``,
    or "" if both pass."""
    for hidden in (False, True):
        result = verdict(exercise, answer, hidden=hidden)
        if result is not None and not result.passed:
            return result.message
    return ""


def broken(key: tuple[str, str], answer) -> str:
    """What is wrong with how the check treats ``answer``, which breaks the rule ``key``
    (exercise, words): "" when a check fails it with a message that names the rule."""
    exercise, words = key
    rule = stated(exercise, words)
    message = message_of(exercise, answer)
    if not message:
        return f"{exercise}: an answer that breaks {words!r} passes both checks"
    if rule.named not in message:
        return (f"{exercise}: the message for an answer that breaks {words!r} does not say "
                f"{rule.named!r}:\n{message}")
    return ""
