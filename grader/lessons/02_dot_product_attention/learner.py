"""The learner's side of lesson 02 (shipped in the kit): the ``accepted`` comparison, for
a number that has other accepted values."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...learner.difference import difference
from ...learner.comparisons import Comparison, Difference, number
from ...learner.plugins import LESSONS

LESSON = LESSONS.of(__name__)  # what this folder adds registers through it


@LESSON.comparison
@dataclass(frozen=True)
class Accepted(Comparison):
    """A number with other accepted values (``case.meta.accept``), and a remark when
    the answer lands in a given range (``case.meta.near``) without being accepted
    (shown unless a catalogued mistake explains the value)."""

    kind: ClassVar[str] = "accepted"


    def differ(self, expected, actual, case, against_reference=True):
        text = difference(expected, actual, case.tol)
        if text is None:
            return None
        if not against_reference:
            return Difference(text)
        value = number(actual)
        if value is not None:
            if any(difference(alt, value, case.tol) is None for alt in case.meta.accept or ()):
                return None
            near = case.meta.near
            if near and abs(value - near["value"]) < near["within"]:
                return Difference(text, remark=near["message"])
        return Difference(text)
