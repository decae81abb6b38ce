"""``check(name, fn)``: test a learner's function against the reference and explain.

The order of work, the same for every exercise:

1. Forbidden shortcuts, read from the function's bytecode (``grader.shortcuts``).
2. Every case, from the smallest input to the largest. Each input is copied before the
   call, so a function that changes its input is caught and told so.
3. Inputs that must raise ``ValueError``.

On success one line is printed. On failure an ``AssertionError`` carries the smallest
failing input, the expected and the actual value, what differs, and a diagnosis: the
misconception from the exercise's catalogue that behaves like the learner's function on
the cases, or a general hint. Tolerances are documented in ``grader.compare``.
"""
from __future__ import annotations

import copy
import re
import textwrap
import traceback
from dataclasses import dataclass

import numpy as np

from . import exercises as registry
from .compare import difference, to_numpy
from .exercises import Case, Exercise, Misconception
from .exercises.cases import non_contiguous
from .shortcuts import _functions_of, missing_required_message, scan, shortcut_message
from .validation import shape_str

HIDDEN_SEED_OFFSET = 7919


class CheckFailed(AssertionError):
    """Raised by ``check``; an ``AssertionError``, so nbgrader counts it as a failed test.

    In a notebook, IPython shows only the message (``_render_traceback_``): the frames of
    the grader are noise to a learner, and the message already says where to look.
    """

    def _render_traceback_(self) -> list[str]:
        lines = str(self).splitlines() or [""]
        return [f"✗ {lines[0]}", *lines[1:]]


@dataclass
class Outcome:
    value: object = None
    error: BaseException | None = None
    where: str = ""  # the learner's line that raised, if any
    mutated: str = ""  # the name of an input the function changed


def _fail(message: str):
    __tracebackhide__ = True
    raise CheckFailed(message)


def _copy_value(x):
    """A deep copy that keeps an array's memory layout (a strided view stays strided)."""
    if isinstance(x, np.ndarray):
        if x.flags.c_contiguous or x.ndim == 0:
            return x.copy()
        if x.flags.f_contiguous:
            return np.asfortranarray(x.copy())
        return non_contiguous(x.copy())
    if isinstance(x, tuple):
        return tuple(_copy_value(v) for v in x)
    if isinstance(x, list):
        return [_copy_value(v) for v in x]
    if isinstance(x, dict):
        return {k: _copy_value(v) for k, v in x.items()}
    return copy.deepcopy(x)


def _copy_args(case: Case) -> Case:
    return Case(_copy_value(case.args), _copy_value(case.kwargs), case.note, case.tol, case.names)


def _same_input(before, after) -> bool:
    before, after = to_numpy(before), to_numpy(after)
    if isinstance(before, np.ndarray) and isinstance(after, np.ndarray):
        return before.shape == after.shape and np.array_equal(before, after, equal_nan=before.dtype.kind == "f")
    if isinstance(before, (list, tuple)) and isinstance(after, (list, tuple)):
        return len(before) == len(after) and all(_same_input(b, a) for b, a in zip(before, after))
    if isinstance(before, dict) and isinstance(after, dict):
        return before.keys() == after.keys() and all(_same_input(before[k], after[k]) for k in before)
    try:
        return bool(before == after)
    except Exception:  # objects without a usable ==
        return True


def _learner_files(fn) -> set[str]:
    """The files the learner's code lives in: a function's own, or a class's methods'."""
    return {f.__code__.co_filename for f in _functions_of(fn)}


def _learner_line(exc: BaseException, fn) -> str:
    files = _learner_files(fn)
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if not files or f.filename in files]
    if files and not mine:
        return ""  # raised before the learner's code ran (an exercise's call found a problem)
    frame = mine[-1] if mine else None
    if frame is None:
        return ""
    text = (frame.line or "").strip()
    return f"line {frame.lineno} of your code: `{text}`" if text else f"line {frame.lineno} of your code"


def run(ex: Exercise, fn, case: Case) -> Outcome:
    """Call ``fn`` on a copy of ``case``; never raises (except KeyboardInterrupt)."""
    mine = _copy_args(case)
    try:
        value = ex.call(fn, mine)
    except Exception as exc:  # the learner's code may raise anything
        return Outcome(error=exc, where=_learner_line(exc, fn))
    for i, (before, after) in enumerate(zip(case.args, mine.args)):
        if not _same_input(before, after):
            name = case.names[i] if i < len(case.names) else f"argument {i + 1}"
            return Outcome(value=value, mutated=name)
    return Outcome(value=value)


def _compare(ex: Exercise, expected, actual, case: Case) -> str | None:
    if ex.compare is not None:
        return ex.compare(expected, actual, case)
    return difference(expected, actual, case.tol)


def _error_gist(exc: BaseException) -> str:
    """An error's message without the numbers in it (shapes and values vary by case)."""
    return re.sub(r"-?\d+(\.\d+)?", "#", str(exc)).strip()


def _agrees(ex: Exercise, mis: Misconception, case: Case, outcome: Outcome, expected) -> tuple[bool, bool]:
    """(does the misconception behave like the learner here, is that agreement telling)."""
    wrong = run(ex, mis.impl, case)
    if outcome.error is not None or wrong.error is not None:
        same = (
            outcome.error is not None
            and wrong.error is not None
            and type(outcome.error) is type(wrong.error)
        )
        # Raising where the reference returns a result is telling (a missing batch axis,
        # a check on the wrong axis) only when the error says the same thing: many
        # different mistakes raise a ValueError on the same input.
        telling = same and _error_gist(outcome.error) == _error_gist(wrong.error)
        return same, telling
    same = _compare(ex, wrong.value, outcome.value, case) is None
    telling = same and _compare(ex, expected, wrong.value, case) is not None
    return same, telling


def diagnose(ex: Exercise, cases, outcomes, expecteds, failing: int) -> Misconception | None:
    """The catalogued misconception that best explains the learner's outcomes, if any."""
    best, best_score = None, (0.0, 0)
    for mis in ex.misconceptions:
        same, telling = _agrees(ex, mis, cases[failing], outcomes[failing], expecteds[failing])
        if not same:
            continue
        agree = informative = 0
        for case, outcome, expected in zip(cases, outcomes, expecteds):
            s, t = _agrees(ex, mis, case, outcome, expected)
            agree += s
            informative += t
        score = (agree / len(cases), informative)
        if informative and score[0] >= 0.8 and (best is None or score > best_score):
            best, best_score = mis, score
    return best


# ----------------------------------------------------------------------------- formatting

def _fmt_value(x, indent: str = "    ") -> str:
    x = to_numpy(x)
    if isinstance(x, tuple):
        return "\n".join(f"{indent}item {i}:\n{_fmt_value(v, indent + '  ')}" for i, v in enumerate(x))
    if isinstance(x, dict):
        return "\n".join(f"{indent}{k!r}:\n{_fmt_value(v, indent + '  ')}" for k, v in x.items())
    if isinstance(x, list):
        try:
            x = np.asarray(x)
        except (TypeError, ValueError):
            return indent + repr(x)
    if isinstance(x, np.ndarray):
        text = np.array2string(
            x, precision=4, suppress_small=True, separator=", ", max_line_width=88 - len(indent),
            threshold=60, edgeitems=3, formatter={"object": str},  # Fractions as 3/4
        )
        body = "\n".join(indent + line for line in text.splitlines())
        return f"{body}\n{indent}(shape {shape_str(x.shape)}, dtype {x.dtype})"
    return indent + repr(x)


def describe_input(case: Case) -> str:
    parts = []
    for i, arg in enumerate(case.args):
        name = case.names[i] if i < len(case.names) else f"argument {i + 1}"
        kind = ""
        if isinstance(arg, list):
            kind = " (a Python list)"
        elif isinstance(arg, np.ndarray) and arg.ndim >= 1 and not arg.flags.c_contiguous:
            kind = " (a non-contiguous view)"
        parts.append(f"  {name}{kind} =\n{_fmt_value(arg)}")
    for key, val in case.kwargs.items():
        parts.append(f"  {key} =\n{_fmt_value(val)}")
    return "\n".join(parts)


def _case_title(case: Case) -> str:
    return f" ({case.note})" if case.note else ""


def _diagnosis(ex: Exercise, mis: Misconception | None, generic: str = "") -> str:
    if mis is not None:
        return f"Diagnosis: {mis.message}"
    text = generic or ex.hint
    return f"Hint: {text}" if text else ""


def _wrong_value_message(ex, case, expected, outcome, diff, mis) -> str:
    lines = [
        f"{ex.name} is not right yet.",
        "",
        f"Smallest input where it goes wrong{_case_title(case)}:",
        describe_input(case),
        "Expected:",
        _fmt_value(expected),
        "Your function returned:",
        _fmt_value(outcome.value),
        f"What differs: {diff}.",
    ]
    generic = ""
    if mis is None and case.note and "large" in case.note:
        generic = "it works on small numbers but not on large ones: look for overflow."
    diag = _diagnosis(ex, mis, generic)
    return "\n".join(lines + (["", diag] if diag else []))


def _error_message(ex, case, outcome, mis) -> str:
    err = outcome.error
    if isinstance(err, NotImplementedError):
        return (
            f"{ex.name} is not implemented yet: replace `raise NotImplementedError()` "
            f"with your code, then run this cell again."
        )
    where = f"\n  at {outcome.where}" if outcome.where else ""
    lines = [
        f"{ex.name} raised {type(err).__name__}: {err}{where}",
        "",
        f"It raised on this input{_case_title(case)}:",
        describe_input(case),
    ]
    diag = _diagnosis(ex, mis)
    if mis is None and isinstance(err, ValueError):
        lines += ["", "This input is valid: the reference returns a result for it. If the ValueError",
                  "comes from one of your own checks, its condition is too strict; otherwise",
                  "look at the shapes your code combines."]
    elif mis is None and isinstance(err, IndexError):
        lines += ["", "Check the ranges you loop over and the shapes you index with; this input",
                  "may not be square."]
    return "\n".join(lines + (["", diag] if diag else []))


def _mutation_message(ex, case, outcome) -> str:
    names = list(case.names) + list(case.kwargs)
    value = None
    if outcome.mutated in names:
        i = names.index(outcome.mutated)
        value = case.args[i] if i < len(case.args) else case.kwargs[outcome.mutated]
    if type(value).__module__.startswith("torch"):
        fix = "Build a new tensor (`x = x + a`, not `x += a`), or work on `x.clone()`."
    else:
        fix = "Build a new array (`x = x + a`, not `x += a`), or work on `x.copy()`."
    return "\n".join([
        f"{ex.name} changed its input `{outcome.mutated}` in place.",
        "A function like this must leave its arguments as they were: the caller may use them",
        f"again. {fix}",
        "",
        f"Input{_case_title(case)}:",
        describe_input(case),
    ])


def _success_line(ex: Exercise, cases: list[Case], hidden: bool) -> str:
    """One ✓ line, then (visible checks only) a short second line listing what was tried."""
    label = " hidden" if hidden else ""
    n_bad = len(ex.bad_inputs)
    rejected = f"; {n_bad} bad input{'s' if n_bad != 1 else ''} rejected with ValueError" if n_bad else ""
    count = f"all {len(cases)}{label} cases pass" if len(cases) != 1 else f"the{label} case passes"
    line = f"✓ {ex.name}: {count}{rejected}."
    notes = list(dict.fromkeys(case.note for case in cases if case.note))
    if notes and not hidden:
        line += "\n" + textwrap.fill(f"tried: {', '.join(notes)}", width=86,
                                     initial_indent="  ", subsequent_indent="    ")
    return line


# ----------------------------------------------------------------------------- the check

def _check_rules(ex: Exercise, fn) -> None:
    __tracebackhide__ = True
    if ex.rules is None:
        return
    findings, _ = scan(fn, ex.rules)
    if findings:
        _fail(shortcut_message(ex.name, findings, ex.rules))


def _check_required(ex: Exercise, fn) -> None:
    """Checked after the cases, so that a stub hears "not implemented" first."""
    __tracebackhide__ = True
    if ex.rules is None or not ex.rules.required:
        return
    _, used = scan(fn, ex.rules)
    if not used:
        _fail(missing_required_message(ex.name, ex.rules))


def _check_bad_inputs(ex: Exercise, fn) -> None:
    __tracebackhide__ = True
    for bad in ex.bad_inputs:
        case = Case(bad.case.args, bad.case.kwargs, bad.case.note, bad.case.tol, ex.arg_names)
        outcome = run(ex, fn, case)
        if isinstance(outcome.error, NotImplementedError):
            _fail(_error_message(ex, case, outcome, None))
        if isinstance(outcome.error, ValueError) and str(outcome.error).strip():
            continue
        if outcome.error is None:
            got = "returned a result"
        elif isinstance(outcome.error, ValueError):
            got = "raised ValueError with an empty message"
        else:
            got = f"raised {type(outcome.error).__name__} ({outcome.error})"
        _fail("\n".join([
            f"{ex.name} should reject this input with a ValueError, because {bad.why}.",
            f"Instead it {got}.",
            "",
            "Input:",
            describe_input(case),
            "",
            "Raise ValueError with a message that names the argument and its shape, so the",
            "caller sees what went wrong instead of a wrong answer.",
        ]))


def check(name: str, fn, *, hidden: bool = False) -> None:
    """Check the learner's ``fn`` for exercise ``name``; print ✓ or raise AssertionError.

    ``hidden=True`` uses more cases drawn with a different seed.
    """
    __tracebackhide__ = True
    ex = registry.get(name)
    check_answer = getattr(ex, "check_answer", None)
    if check_answer is not None:
        # The answer is a value the learner typed, not a function (lesson 03's WORKSHEET):
        # such an exercise compares it and explains what differs itself.
        check_answer(fn, hidden=hidden)
        return
    if fn is None or not callable(fn):
        _fail(f"check({name!r}, ...) needs your function itself, but got {type(fn).__name__}.")
    _check_rules(ex, fn)

    rng = np.random.default_rng(ex.seed + (HIDDEN_SEED_OFFSET if hidden else 0))
    cases = sorted(ex.cases(rng, hidden), key=Case.size)
    for case in cases:
        case.names = case.names or ex.arg_names
    expecteds = [ex.call(ex.reference, _copy_args(case)) for case in cases]
    outcomes = [run(ex, fn, case) for case in cases]

    for i, (case, expected, outcome) in enumerate(zip(cases, expecteds, outcomes)):
        if isinstance(outcome.error, NotImplementedError):
            _fail(_error_message(ex, case, outcome, None))
        if outcome.error is not None:
            _fail(_error_message(ex, case, outcome, diagnose(ex, cases, outcomes, expecteds, i)))
        if outcome.mutated:
            _fail(_mutation_message(ex, case, outcome))
        diff = _compare(ex, expected, outcome.value, case)
        if diff:
            mis = diagnose(ex, cases, outcomes, expecteds, i)
            _fail(_wrong_value_message(ex, case, expected, outcome, diff, mis))

    _check_required(ex, fn)
    _check_bad_inputs(ex, fn)
    print(_success_line(ex, cases, hidden))
