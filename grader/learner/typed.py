"""Answers typed by hand: lesson 03's ``WORKSHEET``, one matrix per step of the worksheet.

The learner types numbers worked out on paper, as text (one row per line, fractions like
``3/4``) or as nested lists. The review of one step needs only data, all of it recorded
by the grader: the answer key, what each catalogued mistake gives from the key, which
steps a step is computed from, and for each entry a sentence saying what it is made of.
It tells whether the step is right, which known mistake it matches, which earlier step to
fix first, or which entry is the first wrong one and what it is made of.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .validation import shape_str

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


def _close(a, b, atol: float = 0.006) -> bool:
    """Equal up to the two decimals a learner would type (for decimal variants)."""
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.all(np.abs(a.astype(float) - b.astype(float)) <= atol))


def shape_words(shape) -> str:
    rows, cols = shape
    return f"{rows} row{'s' * (rows != 1)} of {cols} number{'s' * (cols != 1)}"


@dataclass
class StepReview:
    step: str
    status: str  # "right", "missing", "unreadable", "wrong"
    message: str

    @property
    def right(self) -> bool:
        return self.status == "right"


def review_step(step: str, answers, key: dict, guide: dict, mistakes=(),
                label: str = "WORKSHEET") -> StepReview:
    """Read ``answers[step]`` and say whether it is right, and if not, why.

    ``key`` holds every step's right matrix. ``guide`` describes the step: ``what`` it
    is, its ``parents`` (the steps it is computed from directly) and ``ancestors`` (all
    of them), ``shape_words`` (why it has its shape) and ``stories`` (for each entry,
    what it is made of). ``mistakes`` are ``(message, [wrong matrices], close)``: what
    each catalogued mistake gives from the key (compared to two decimals when ``close``).
    """
    where = f"{label}[{step!r}]"
    expected = np.asarray(key[step], dtype=object)
    if not isinstance(answers, dict):
        return StepReview(step, "unreadable",
                          f"{label} should be a dict with the keys {', '.join(map(repr, key))}, "
                          f"but it is a {type(answers).__name__}.")
    try:
        mine, typed = read_typed(answers.get(step), where)
    except NotFilledIn:
        return StepReview(step, "missing", (
            f"replace the placeholder in {where} with the {shape_words(expected.shape)} "
            f"you worked out on paper for {guide['what']}."))
    except Unreadable as exc:
        return StepReview(step, "unreadable", f"{exc}.")
    if same(mine, expected):
        return StepReview(step, "right", f"all {expected.size} entries of {where} are right.")

    for message, variants, close in mistakes:
        for wrong in variants:
            if (_close if close else same)(mine, wrong) and not same(wrong, expected):
                return StepReview(step, "wrong", f"{where} is not right yet.\nDiagnosis: {message}")

    if mine.shape != expected.shape:
        return StepReview(step, "wrong", (
            f"{where} has {shape_words(mine.shape)}, but {step} has "
            f"{shape_words(expected.shape)}: {guide['shape_words']}."))

    decimals = [(i, j) for i, j in np.ndindex(mine.shape) if _is_decimal(typed[i, j])]
    near = all(abs(float(mine[idx]) - float(expected[idx])) < 5e-3 for idx in np.ndindex(mine.shape))
    if decimals and near:
        i, j = decimals[0]
        return StepReview(step, "wrong", (
            f"{where} has the right numbers, rounded to decimals (row {i + 1}, column {j + 1} "
            f"is {typed[i, j]}, for example). The worksheet is exact: write each one as a "
            f"fraction, like 3/16, and keep whole numbers whole."))

    theirs = _learner_values(answers, guide["parents"], key, label)
    wrong_parents = [p for p in guide["parents"] if p in theirs and not same(theirs[p], key[p])]

    def rounded(idx) -> bool:
        return _is_decimal(typed[idx]) and abs(float(mine[idx]) - float(expected[idx])) < 5e-3

    unequal = [idx for idx in np.ndindex(expected.shape) if mine[idx] != expected[idx]]
    bad = [idx for idx in unequal if not rounded(idx)]
    decimal_note = ""
    if len(bad) < len(unequal):
        n = len(unequal) - len(bad)
        them = "it as an exact fraction" if n == 1 else "those as exact fractions"
        decimal_note = (f" ({n} more {'is a decimal' if n == 1 else 'are decimals'} close to the "
                        f"right value: write {them} too)")
    i, j = bad[0]
    lines = [
        f"{where} is not right yet: {len(bad)} of {expected.size} entries "
        f"{'is' if len(bad) == 1 else 'are'} wrong{decimal_note}.",
        f"The first, reading row by row, is row {i + 1}, column {j + 1}, where you have "
        f"{typed[i, j]}.",
    ]
    if wrong_parents:
        names = " and ".join(wrong_parents)
        lines.append(f"{step} depends on {names}, and your {names} "
                     f"{'is' if len(wrong_parents) == 1 else 'are'} not right yet: fix "
                     f"{wrong_parents[0]} first (check('worksheet_{wrong_parents[0]}', {label}) "
                     f"says where), then redo this step with the corrected numbers.")
    else:
        lines.append(guide["stories"][i][j])
    if guide.get("columns_sum_to_one"):
        column_sum = sum(mine[:, j], Fraction(0))
        if column_sum != 1:
            shown = (f"about {float(column_sum):.4g}" if any(_is_decimal(t) for t in typed[:, j])
                     else _fmt(column_sum))
            lines.append(f"A check you can do on paper: column {j + 1} of your A adds up to "
                         f"{shown}, and every column of A must add up to 1.")
    return StepReview(step, "wrong", "\n".join(lines))


def _learner_values(answers: dict, steps, key: dict, label: str) -> dict:
    """The learner's readable steps with the right shape (others are left out)."""
    values = {}
    for s in steps:
        try:
            M = read_matrix(answers.get(s), f"{label}[{s!r}]")
        except (NotFilledIn, Unreadable):
            continue
        if M.shape == np.shape(key[s]):
            values[s] = M
    return values


def judge_value(exp, subject):
    """The verdict on a typed answer (the engine hands over exercises whose driver is
    ``value``): one step, from the recorded key, guide and mistakes."""
    from .engine import Verdict

    case = exp.cases[0]
    name = exp.info.name
    outcome = subject.run([case])[0]
    if outcome.error is not None:
        return Verdict(False, f"{name}: reading your answer raised {outcome.error.type}: "
                       f"{outcome.error.message}")
    mistakes = [(m.message, m.outcomes[0].value["variants"], m.outcomes[0].value["close"])
                for m in exp.mistakes]
    review = review_step(case.meta["step"], outcome.value, exp.expected[0].value,
                         case.meta["guide"], mistakes, case.meta.get("label", "WORKSHEET"))
    if review.status == "right":
        return Verdict(True, f"✓ {name}: {review.message}")
    if review.status == "missing":
        return Verdict(False, f"{name} is not implemented yet: {review.message}")
    return Verdict(False, f"{name}: {review.message}")
