"""Right answers nobody anticipated are accepted (issue 32, §7).

``tests/fresh_right_01_04.py`` and ``tests/fresh_right_05_08.py`` hold right but unusual
answers to every lesson, written from the notebooks and the README by a tester who had
not read the checks. Each must pass twice: in the notebook (the visible check, with the
live reference) and at grading, through the trusted checker and the real kernel agent,
on the hidden cases and on the visible ones with their twins. The kernel here is this
process (a module of its own stands for the notebook's ``__main__``); the memory budget
of lesson 07 is measured by the operating system only in the grading corpus's real
kernels, so here the kernel's own measure decides it; the CPU time a work rule reads is
this process's.
"""
from __future__ import annotations

import os
import warnings
from collections import Counter

import numpy as np
import pytest

from grader import lessons
from grader.course import CheckCall
from grader.grading.notebook.bridge import Session
from grader.grading.notebook.trusted import Checker
from grader.learner.env import quiet
from grader.learner.shortcuts import SourceReader

from fresh_right_01_04 import RIGHT as RIGHT_01_04
from fresh_right_05_08 import RIGHT as RIGHT_05_08
from heldout import judge
from heldout_answers import Right
from test_standin_reach import ModuleKernel, ident

RIGHT = [Right(a.id, a.exercise, a.about, a.source) for a in [*RIGHT_01_04, *RIGHT_05_08]]
SLOW = {"train", "run_ablation"}  # they train a model: once, at grading, is enough


class _NoWindow:
    """This process has no sandbox to measure from outside: the kernel's own measure
    of memory decides here (the corpus measures it from outside, in real kernels)."""

    problem = ""

    def close(self):
        return 0, False


class Kernel(ModuleKernel):
    def memory_window(self):
        return _NoWindow()

    def sandbox_pids(self):
        """The work rule (lesson 07's ``tiled_attention``) reads the CPU time of this
        process, where the answer runs."""
        return [os.getpid()]


def quietly(fn, *args):
    with quiet(), warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args)


def graded(answer: Right, hidden: bool):
    """The trusted checker's verdict on ``answer``: hidden cases, or the visible ones and
    their twins."""
    name = "WORKSHEET" if answer.exercise.startswith("worksheet_") else answer.exercise
    reader = SourceReader()
    reader.read(answer.source, "<cell answer>")
    call = CheckCall(answer.exercise, name, hidden)
    kernel = Kernel(answer.source, ident(f"fresh {answer.id} {hidden}"))
    return Checker._check(call, Session(kernel, 0, 1e18), reader.scope(), reader.trees)


def test_the_set_covers_every_lesson():
    ids = [a.id for a in RIGHT]
    assert len(ids) == len(set(ids)) and len(RIGHT) >= 30
    per_lesson = Counter(lessons.lesson_of(a.exercise) for a in RIGHT)
    # The set was written for lessons 01-08, before lesson 09 existed.
    assert set(per_lesson) == {lesson for lesson in lessons.lessons() if lesson[:2] <= "08"}, \
        per_lesson
    assert min(per_lesson.values()) >= 3


@pytest.mark.parametrize("answer", RIGHT, ids=[a.id for a in RIGHT])
def test_a_fresh_right_answer_passes_in_the_notebook(answer):
    if answer.exercise in SLOW:
        pytest.skip("trains a model: checked once, at grading")
    v = quietly(judge, answer)
    assert v.passed, f"{answer.id} ({answer.about}) was rejected:\n{v.message}"


@pytest.mark.parametrize("answer", RIGHT, ids=[a.id for a in RIGHT])
def test_a_fresh_right_answer_passes_at_grading(answer):
    for which in ([True] if answer.exercise in SLOW else [True, False]):
        v = quietly(graded, answer, which)
        assert v.passed, f"{answer.id} ({answer.about}) was rejected at grading:\n{v.message}"
