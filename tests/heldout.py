"""Running the held-out answers (tests/heldout_answers.py) through their checks, and
reading whether each message names the learner's mistake.

A wrong answer is *named* when every pattern written for its mistake matches the
message's diagnosis (:func:`names`).

An answer's source runs in a module of its own, registered as a notebook registers its
cells (in ``sys.modules`` for its classes, in ``linecache`` for its source), so the check
finds the learner's helpers and reads the learner's code as it does in a notebook. The
check is the notebook's: :func:`grader.learner.engine.judge` on the exercise's visible
cases, with the live reference.
"""
from __future__ import annotations

import linecache
import re
import sys
import types
from dataclasses import asdict, dataclass

from heldout_answers import RIGHT, WRONG, Right, Wrong
from sources import YOUR_LINE

# Where a message stops diagnosing and starts showing the input.
DIAGNOSIS_ENDS = ("Smallest input", "It raised on this input", "Input:")


@dataclass
class Result:
    id: str
    exercise: str
    lesson: str
    about: str
    right: bool           # a right answer (it must pass), or a wrong one (it must fail)
    passed: bool
    named: bool | None    # for a wrong answer: whether its message names the mistake
    lines: int
    message: str

    def as_dict(self) -> dict:
        return asdict(self)


def diagnosis(message: str) -> str:
    """The part of ``message`` that says what is wrong: everything before the first of
    :data:`DIAGNOSIS_ENDS`, or the whole message if it has none."""
    ends = [i for i in (message.find(end) for end in DIAGNOSIS_ENDS) if i >= 0]
    return message[: min(ends)] if ends else message


def names(message: str, groups: tuple[str, ...]) -> bool:
    """Whether every pattern of ``groups`` matches, ignoring case, in the diagnosis. The
    learner's own line, quoted back ("at line 5 of your code: ..."), is left out: their
    code tells them nothing about their mistake."""
    text = YOUR_LINE.sub("", diagnosis(message))
    return all(re.search(group, text, re.IGNORECASE) for group in groups)


def answer_name(exercise: str) -> str:
    """The name the learner defines for ``exercise``: the worksheet's steps are all typed
    into one dict."""
    return "WORKSHEET" if exercise.startswith("worksheet_") else exercise


def load(answer: Wrong | Right):
    """The learner's answer, from its source run in a fresh module."""
    module_name = "heldout_" + re.sub(r"\W", "_", answer.id)
    filename = f"<heldout {answer.id}>"
    module = types.ModuleType(module_name)
    module.__file__ = filename
    sys.modules[module_name] = module
    linecache.cache[filename] = (len(answer.source), None,
                                 answer.source.splitlines(keepends=True), filename)
    exec(compile(answer.source, filename, "exec"), module.__dict__)  # the set's own code
    return module.__dict__[answer_name(answer.exercise)]


def judge(answer: Wrong | Right):
    """The check's verdict on ``answer`` (visible cases, live reference)."""
    from grader import lessons
    from grader.learner.checks import LocalSubject, find_expectations
    from grader.learner.engine import judge as engine_judge

    exp = lessons.expectations(answer.exercise, False)
    return engine_judge(exp, LocalSubject(load(answer), exp.info.driver, answer.exercise),
                        expectations_of=find_expectations)


def measure(answer: Wrong | Right) -> Result:
    from grader import lessons

    verdict = judge(answer)
    right = isinstance(answer, Right)
    return Result(answer.id, answer.exercise, lessons.lesson_of(answer.exercise), answer.about,
                  right, verdict.passed,
                  None if right else (not verdict.passed and names(verdict.message,
                                                                   answer.named)),
                  len(verdict.message.splitlines()), verdict.message)


def measure_all(answers=None) -> list[Result]:
    """Every answer of the set (or of ``answers``), measured in order."""
    import warnings

    import numpy as np

    from grader.learner.env import quiet

    # The wrong answers' own arithmetic warns (NaN from an empty row, overflow): the check
    # says so in its message, which is what is measured.
    with quiet(), warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return [measure(a) for a in (answers if answers is not None else [*WRONG, *RIGHT])]
