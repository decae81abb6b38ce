"""The learner's side of lesson 03 (shipped in the kit): answers typed by hand, the
``WORKSHEET``, one matrix per step, and how steps are compared.

The learner types numbers worked out on paper, as text (one row per line, fractions like
``3/4``) or as nested lists. The review of one step needs only data, all of it recorded
by the grader, and none of it an answer: the key *sealed* (each entry as a salted hash,
:func:`seal_key`), what each catalogued mistake gives from the key (sealed the same way),
which steps a step is computed from, and for each entry a sentence saying what it is made
of, whose numbers come from the learner's own earlier steps. It tells whether the step is
right, which known mistake it matches, which earlier step to fix first, or which entry is
the first wrong one and what it is made of.

Here too: the ``value`` driver, whose answer is the typed value itself and whose verdict is
that review (:class:`Value`), and the ``exact`` and ``steps`` comparisons (Fractions, and
a dict of steps compared in order).
"""
from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field
from enum import StrEnum
from fractions import Fraction
from typing import ClassVar

import numpy as np

from ...learner.difference import difference
from ...learner.comparisons import Comparison, Difference
from ...learner.drivers import Driver
from ...learner.plugins import LESSONS
from ...learner.validation import shape_str

LESSON = LESSONS.of(__name__)  # what this folder adds registers through it

PLACEHOLDER = re.compile(r"NotImplementedError|YOUR (CODE|ANSWER) HERE")


class NotFilledIn(Exception):
    """The learner has not typed this step yet."""


class Unreadable(Exception):
    """The learner's numbers could not be read; the message says why."""


def _read_entry(token, where: str) -> Fraction:
    if isinstance(token, (bool, np.bool_)):
        raise Unreadable(f"{where} is {token!r}, not a number")
    if isinstance(token, str):
        text = token.strip().replace("−", "-")
        try:
            return Fraction(text)
        except (ValueError, ZeroDivisionError):
            raise Unreadable(
                f"{where} reads {token!r}, which is not a number: write whole numbers like 3 "
                f"or -1 and fractions like 3/4"
            ) from None
    if isinstance(token, (int, np.integer, Fraction)):
        return Fraction(int(token)) if isinstance(token, np.integer) else Fraction(token)
    if isinstance(token, (float, np.floating)):
        if not math.isfinite(token):
            raise Unreadable(f"{where} is {token}, not a number")
        return Fraction(float(token))
    raise Unreadable(f"{where} is {token!r} ({type(token).__name__}), not a number")


def _grid_from_text(text: str) -> list[list[str]]:
    rows = []
    for line in text.splitlines():
        line = line.split("#", 1)[0]
        tokens = [t for t in re.split(r"[\s,;\[\]()]+", line) if t]
        if tokens:
            rows.append(tokens)
    return rows


def _as_typed(token) -> str:
    """How the learner wrote an entry, for messages: 0.07 stays 0.07, not 7/100."""
    if isinstance(token, str):
        return token.strip()
    if isinstance(token, (float, np.floating)):
        return f"{float(token):.10g}"
    return str(token)


def read_typed(value, label: str) -> tuple[np.ndarray, np.ndarray]:
    """The learner's numbers for one step as an object array of Fractions and, alongside,
    each entry as typed. Raises :class:`NotFilledIn` for a placeholder and
    :class:`Unreadable` with a message otherwise."""
    if value is None or value is Ellipsis:
        raise NotFilledIn
    if isinstance(value, str):
        if PLACEHOLDER.search(value):
            raise NotFilledIn
        rows = _grid_from_text(value)
        if not rows:
            raise NotFilledIn
    else:
        try:
            arr = np.array(value, dtype=object)
        except (TypeError, ValueError):
            raise Unreadable(f"{label} could not be read as a matrix") from None
        if arr.ndim == 1 and arr.size and all(isinstance(r, (list, tuple, np.ndarray)) for r in arr):
            rows = [list(r) for r in arr]  # ragged: report the row lengths below
        elif arr.ndim == 2:
            rows = [list(r) for r in arr]
        else:
            raise Unreadable(
                f"{label} should be a matrix (a list of rows), but it has shape "
                f"{shape_str(arr.shape)}"
            )
    widths = [len(r) for r in rows]
    if len(set(widths)) > 1:
        bad = next(i for i, w in enumerate(widths) if w != widths[0])
        raise Unreadable(
            f"the rows of {label} have different lengths: row 1 has {widths[0]} numbers but "
            f"row {bad + 1} has {widths[bad]}"
        )
    values = np.empty((len(rows), widths[0]), dtype=object)
    typed = np.empty(values.shape, dtype=object)
    for i, row in enumerate(rows):
        for j, token in enumerate(row):
            values[i, j] = _read_entry(token, f"row {i + 1}, column {j + 1} of {label}")
            typed[i, j] = _as_typed(token)
    return values, typed


def read_matrix(value, label: str) -> np.ndarray:
    """``read_typed`` without the typed text."""
    return read_typed(value, label)[0]


def _is_decimal(typed: str) -> bool:
    return "." in typed or "e" in typed.lower()


def _fmt(v) -> str:
    return str(Fraction(v))


def same(a, b) -> bool:
    a, b = np.asarray(a, dtype=object), np.asarray(b, dtype=object)
    return a.shape == b.shape and all(Fraction(x) == Fraction(y) for x, y in zip(a.flat, b.flat))


def shape_words(shape) -> str:
    rows, cols = shape
    return f"{rows} row{'s' * (rows != 1)} of {cols} number{'s' * (cols != 1)}"


# ----------------------------------------------------------------------------- a sealed key

DENOMINATORS = 4096  # how far a decimal is searched for the fraction it rounds


def _hash(*parts) -> str:
    return hashlib.sha256("|".join(map(str, parts)).encode("utf-8")).hexdigest()[:24]


def _exact_text(M) -> str:
    M = np.asarray(M, dtype=object)
    return f"{M.shape}:" + ";".join(_fmt(x) for x in M.flat)


def _rounded_text(M) -> str:
    M = np.asarray(M, dtype=object)
    return f"{M.shape}:" + ";".join(f"{round(float(x), 2):.2f}" for x in M.flat)


def seal_key(key: dict, salt: str) -> dict:
    """An answer key as data that holds no answer: each step's shape, and a salted hash of
    each entry (enough to say whether a typed entry is right, not what it should be)."""
    steps = {}
    for step, M in key.items():
        M = np.asarray(M, dtype=object)
        steps[step] = {"shape": list(M.shape),
                       "entries": [[_hash(salt, step, i, j, _fmt(M[i, j])) for j in range(M.shape[1])]
                                   for i in range(M.shape[0])]}
    return {"salt": salt, "steps": steps}


def seal_variant(M, salt: str, close: bool) -> dict:
    """What a catalogued mistake gives, as a hash of the whole matrix (of its values to two
    decimals when ``close``: the learner types decimals then)."""
    text = _rounded_text(M) if close else _exact_text(M)
    return {"shape": list(np.shape(M)), "hash": _hash(salt, "close" if close else "exact", text)}


class SealedKey:
    """The questions a review asks of a key, answered from :func:`seal_key`'s data."""

    def __init__(self, data: dict):
        self.salt, self.steps = data["salt"], data["steps"]

    def names(self) -> list[str]:
        return list(self.steps)

    def shape(self, step: str) -> tuple:
        return tuple(self.steps[step]["shape"])

    def size(self, step: str) -> int:
        rows, cols = self.shape(step)
        return rows * cols

    def entry(self, step: str, i: int, j: int, value) -> bool:
        return self.steps[step]["entries"][i][j] == _hash(self.salt, step, i, j, _fmt(value))

    def same(self, step: str, M) -> bool:
        M = np.asarray(M, dtype=object)
        return M.shape == self.shape(step) and all(
            self.entry(step, i, j, M[i, j]) for i, j in np.ndindex(M.shape))

    def near(self, step: str, i: int, j: int, x: float, atol: float = 5e-3) -> bool:
        """Whether ``x`` (a decimal) is within ``atol`` of the right entry: tries every
        fraction near ``x`` with a denominator up to DENOMINATORS."""
        tried = set()
        for q in range(1, DENOMINATORS + 1):
            for p in (math.floor(x * q), math.ceil(x * q)):
                f = Fraction(p, q)
                if abs(float(f) - x) < atol and f not in tried:
                    tried.add(f)
                    if self.entry(step, i, j, f):
                        return True
        return False

    def matches(self, M, variant: dict, close: bool) -> bool:
        text = _rounded_text(M) if close else _exact_text(M)
        return list(np.shape(M)) == list(variant["shape"]) and \
            variant["hash"] == _hash(self.salt, "close" if close else "exact", text)


class Review(StrEnum):
    """What a step of the worksheet is found to be."""

    RIGHT = "right"
    MISSING = "missing"
    UNREADABLE = "unreadable"
    WRONG = "wrong"


@dataclass
class StepReview:
    step: str
    status: Review
    message: str

    @property
    def right(self) -> bool:
        return self.status == Review.RIGHT


PLACE = re.compile(r"\{(\w+):(row|col|at):(\d+)(?::(\d+))?\}")


def story(template: str, values: dict) -> str | None:
    """A guide's sentence with its placeholders (``{K:col:0}``, ``{scores:at:1:2}``)
    filled from the learner's own steps, or None if one of those steps is not there."""
    def fill(m):
        step, kind, a, b = m.group(1), m.group(2), int(m.group(3)), m.group(4)
        if step not in values:
            raise KeyError(step)
        M = values[step]
        match kind:
            case "at":
                return _fmt(M[a, int(b)])
            case "row":
                vec = M[a]
            case "col":
                vec = M[:, a]
        return "(" + ", ".join(_fmt(x) for x in vec) + ")"

    try:
        return PLACE.sub(fill, template)
    except (KeyError, IndexError):
        return None


def review_step(step: str, answers, key: SealedKey, guide: dict, mistakes=(),
                label: str = "WORKSHEET") -> StepReview:
    """Read ``answers[step]`` and say whether it is right, and if not, why.

    ``key`` is the sealed answer key. ``guide`` describes the step: ``what`` it is, its
    ``parents`` (the steps it is computed from), ``shape_words`` (why it has its shape)
    and ``stories`` (for each entry, what it is made of: text whose placeholders are
    filled from the learner's own parent steps, shown only once those are right).
    ``mistakes`` are ``(message, [sealed variants], close)``: what each catalogued
    mistake gives from the key (to two decimals when ``close``).
    """
    where = f"{label}[{step!r}]"
    shape = key.shape(step)
    if not isinstance(answers, dict):
        return StepReview(step, Review.UNREADABLE,
                          f"{label} should be a dict with the keys {', '.join(map(repr, key.names()))}, "
                          f"but it is a {type(answers).__name__}.")
    try:
        mine, typed = read_typed(answers.get(step), where)
    except NotFilledIn:
        return StepReview(step, Review.MISSING, (
            f"replace the placeholder in {where} with the {shape_words(shape)} "
            f"you worked out on paper for {guide['what']}."))
    except Unreadable as exc:
        return StepReview(step, Review.UNREADABLE, f"{exc}.")
    if key.same(step, mine):
        return StepReview(step, Review.RIGHT, f"all {key.size(step)} entries of {where} are right.")

    for message, variants, close in mistakes:
        if any(key.matches(mine, variant, close) for variant in variants):
            return StepReview(step, Review.WRONG, f"{where} is not right yet.\nDiagnosis: {message}")

    if mine.shape != shape:
        return StepReview(step, Review.WRONG, (
            f"{where} has {shape_words(mine.shape)}, but {step} has "
            f"{shape_words(shape)}: {guide['shape_words']}."))

    def right(idx) -> bool:
        return key.entry(step, *idx, mine[idx])

    def rounded(idx) -> bool:
        return _is_decimal(typed[idx]) and key.near(step, *idx, float(mine[idx]))

    unequal = [idx for idx in np.ndindex(shape) if not right(idx)]
    rounded_right = [idx for idx in unequal if rounded(idx)]
    if rounded_right and len(rounded_right) == len(unequal):
        i, j = rounded_right[0]
        return StepReview(step, Review.WRONG, (
            f"{where} has the right numbers, rounded to decimals (row {i + 1}, column {j + 1} "
            f"is {typed[i, j]}, for example). The worksheet is exact: write each one as a "
            f"fraction, like 3/16, and keep whole numbers whole."))

    theirs = _learner_values(answers, guide["parents"], key, label)
    wrong_parents = [p for p in guide["parents"] if p in theirs and not key.same(p, theirs[p])]
    bad = [idx for idx in unequal if idx not in rounded_right]
    decimal_note = ""
    if rounded_right:
        n = len(rounded_right)
        them = "it as an exact fraction" if n == 1 else "those as exact fractions"
        decimal_note = (f" ({n} more {'is a decimal' if n == 1 else 'are decimals'} close to the "
                        f"right value: write {them} too)")
    i, j = bad[0]
    lines = [
        f"{where} is not right yet: {len(bad)} of {key.size(step)} entries "
        f"{'is' if len(bad) == 1 else 'are'} wrong{decimal_note}.",
        f"The first, reading row by row, is row {i + 1}, column {j + 1}, where you have "
        f"{typed[i, j]}.",
    ]
    if wrong_parents:
        names = " and ".join(wrong_parents)
        # Only the graded WORKSHEET has a check per step; a practice review shows them all.
        says_where = (f"check('worksheet_{wrong_parents[0]}', {label}) says where"
                      if label == "WORKSHEET" else "its review says where")
        lines.append(f"{step} depends on {names}, and your {names} "
                     f"{'is' if len(wrong_parents) == 1 else 'are'} not right yet: fix "
                     f"{wrong_parents[0]} first ({says_where}), then redo this step with the "
                     f"corrected numbers.")
    else:
        told = story(guide["stories"][i][j], theirs)
        if told is None:
            missing = " and ".join(p for p in guide["parents"] if p not in theirs)
            told = (f"It is made from {missing}: fill in {missing} (right) and this message "
                    f"shows the numbers this entry uses.")
        lines.append(told)
    if guide.get("columns_sum_to_one"):
        column_sum = sum(mine[:, j], Fraction(0))
        if column_sum != 1:
            shown = (f"about {float(column_sum):.4g}" if any(_is_decimal(t) for t in typed[:, j])
                     else _fmt(column_sum))
            lines.append(f"A check you can do on paper: column {j + 1} of your A adds up to "
                         f"{shown}, and every column of A must add up to 1.")
    return StepReview(step, Review.WRONG, "\n".join(lines))


def _learner_values(answers: dict, steps, key: SealedKey, label: str) -> dict:
    """The learner's readable steps with the right shape (others are left out)."""
    values = {}
    for s in steps:
        try:
            M = read_matrix(answers.get(s), f"{label}[{s!r}]")
        except (NotFilledIn, Unreadable):
            continue
        if M.shape == key.shape(s):
            values[s] = M
    return values


def judge_value(exp, subject):
    """The verdict on a typed answer (the engine hands over exercises whose driver is
    ``value``): one step, from the recorded key, guide and mistakes."""
    from ...learner.cases import Verdict

    case = exp.cases[0]
    name = exp.info.name
    outcome = subject.run([case])[0]
    if outcome.error is not None:
        return Verdict(False, f"{name}: reading your answer raised {outcome.error.type}: "
                       f"{outcome.error.message}")
    mistakes = [(m.message, m.outcomes[0].value["variants"], m.outcomes[0].value["close"])
                for m in exp.mistakes]
    review = review_step(case.meta.step, outcome.value, SealedKey(exp.expected[0].value),
                         case.meta.guide, mistakes, case.meta.label or "WORKSHEET")
    match review.status:
        case Review.RIGHT:
            return Verdict(True, f"✓ {name}: {review.message}")
        case Review.MISSING:
            return Verdict(False, f"{name} is not implemented yet: {review.message}")
    return Verdict(False, f"{name}: {review.message}")


# ----------------------------------------------------------------------------- the driver

@LESSON.driver
@dataclass(frozen=True)
class Value(Driver):
    """The answer is a value the learner typed (one step of the worksheet): handed over as
    it is, never called, and judged by :func:`judge_value`."""

    kind: ClassVar[str] = "value"
    calls_answer: ClassVar[bool] = False

    def judge(self, exp, subject):
        return judge_value(exp, subject)


# ----------------------------------------------------------------------------- comparisons

@LESSON.comparison
@dataclass(frozen=True)
class Exact(Comparison):
    """Exact comparison against Fractions. When ``expected`` is a float array (a float
    mistake, during a diagnosis), the answer is read as floats too."""

    kind: ClassVar[str] = "exact"


    def differ(self, expected, actual, case, against_reference=True):
        text = exact(expected, actual, case.tol)
        return Difference(text) if text else None


def exact(expected, actual, tol, where: str = "") -> str | None:
    if isinstance(expected, np.ndarray) and expected.dtype != object:
        try:
            actual = np.asarray(actual, dtype=float)
        except (TypeError, ValueError):
            pass
    return difference(expected, actual, tol, where)




@LESSON.comparison
@dataclass(frozen=True)
class Steps(Comparison):
    """A dict of steps (lesson 03's ``attention_by_hand``), compared step by step in
    order; the message shows only the first step that differs: the expected value with
    the steps it is computed from, and the learner's value of that step."""

    order: list = ()  # the steps, in the order they are computed
    parents: dict = field(default_factory=dict)  # step -> the steps it is computed from

    kind: ClassVar[str] = "steps"


    def related(self, expected, actual, diff):
        step = diff.focus
        if isinstance(expected, dict) and isinstance(actual, dict) and step in actual:
            return expected[step], actual[step]
        return None


    def differ(self, expected, actual, case, against_reference=True):
        order, parents = self.order, self.parents
        if not isinstance(actual, dict) or not isinstance(expected, dict):
            text = difference(expected, actual, case.tol)
            return Difference(text) if text else None
        for step in order:
            if step not in actual:
                return Difference(f"the dict has no key {step!r} (it needs {', '.join(order)})",
                                  focus=step)
            text = exact(expected[step], actual[step], case.tol, f"step {step!r}: ")
            if text:
                earlier = ", ".join(order[: order.index(step)])
                if earlier:
                    text += f" (the steps before it, {earlier}, are right)"
                return Difference(text, focus=step)
        del parents
        return None

    def show(self, value, case, role, diff):
        from ...learner.wording import fmt_value

        if not isinstance(value, dict) or diff is None or diff.focus is None:
            return fmt_value(value)
        step = diff.focus

        def block(name, v):
            return [f"    {name} =", fmt_value(v, "      ")]

        if role == "expected":
            parents = list(self.parents.get(step, []))
            lines = []
            if parents:
                lines.append(f"    {step}, computed from {' and '.join(parents)} (yours "
                             f"{'is' if len(parents) == 1 else 'are'} the same):")
            for s in (*parents, step):
                if s in value:
                    lines += block(s, value[s])
            return "\n".join(lines)
        if step in value:
            return "\n".join(block(step, value[step]) +
                             [f"    (only {step} is shown, the first step that differs)"])
        return (f"    a dict with no key {step!r}; its keys are "
                f"{', '.join(map(repr, value))}")
