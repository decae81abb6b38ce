"""The rules a notebook states for an exercise, and what checks each (``Exercise.stated``).

A notebook says more about an answer than "return the right numbers": use no Python loop,
read the keys `block` rows at a time, skip the causal tiles above the diagonal, raise a
``ValueError`` for weights that are not convex. Each such rule is listed with the exercise,
in the notebook's own words, beside what checks it in a way the answer cannot sidestep.
A rule that nothing can check is advice: the notebook words it as advice, and it earns no
points. ``tests/test_stated_rules.py`` keeps the list honest: every exercise has one, every
rule's words are in the released notebook, and every rule that is checked has an answer
in the lesson's tests that breaks it and fails with ``named`` in its message.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass


class Check(enum.Enum):
    """What holds a stated rule."""

    # The answer's source, compiled and never run (grader.learner.shortcuts): calls that
    # are forbidden or required, loops forbidden or required (Exercise.rules).
    SOURCE_SCAN = "the source scan"
    # A change to an input, read from the source (grader.learner.mutation) and compared in
    # the kernel before and after the call: only the answer's own arrays may change.
    MUTATION = "the mutation check"
    # The most memory the kernel's processes hold during a case with a memory budget, as
    # the operating system measures it from outside (grader.grading.notebook.measure).
    MEMORY = "memory measured from outside"
    # The CPU time of two calls, as the operating system measures it from outside
    # (grader.learner.work, grader.grading.notebook.cpu; Exercise.work).
    WORK = "CPU time measured from outside"
    # Inputs handed over so that a second pass, a kept block or too many rows read at once
    # raise in the kernel (lesson 07's OnePass driver): a finding there only costs points.
    ONE_PASS = "read-noting inputs"
    # Cases built so that an answer that breaks the rule returns other values (or other
    # types) than the reference.
    VALUES = "cases whose values show it"
    # Inputs the answer must reject with a ValueError (Exercise.bad_inputs).
    BAD_INPUTS = "inputs that must be rejected"
    # The parameter objects of the module an answer loads weights into, read before and
    # after the call (lesson 05's LoadsWeights driver): new objects, or memory of another
    # argument's, fail the call.
    OBJECTS = "the module's own parameters, compared before and after the call"
    # Nothing checks it: written as advice in the notebook, and it earns no points.
    ADVICE = "advice, not graded"


@dataclass(frozen=True)
class Stated:
    """One rule of an exercise: ``words``, as the released notebook writes them (the test
    finds them there, spaces aside); ``check``, what holds it; ``named``, a phrase the
    check's message holds when an answer breaks the rule (none for advice)."""

    words: str
    check: Check
    named: str = ""

    def __post_init__(self):
        if not isinstance(self.check, Check):
            raise TypeError(f"stated rule {self.words!r}: check is {self.check!r}, not a Check")
        if (self.check is Check.ADVICE) != (not self.named):
            raise ValueError(f"stated rule {self.words!r}: a checked rule names what its "
                             f"message says when it is broken (named=...), advice does not")


SOURCE_SCAN, MUTATION, MEMORY, WORK, ONE_PASS, VALUES, BAD_INPUTS, OBJECTS, ADVICE = Check

__all__ = ["ADVICE", "BAD_INPUTS", "Check", "MEMORY", "MUTATION", "OBJECTS", "ONE_PASS",
           "SOURCE_SCAN", "Stated", "VALUES", "WORK"]
