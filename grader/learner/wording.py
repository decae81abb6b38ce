"""How a check shows values and inputs in its messages."""
from __future__ import annotations

import contextlib
import contextvars
import textwrap

import numpy as np

from .cases import Case
from .prose import LINES, wrapped
from .difference import difference, to_numpy
from .validation import scalar_str, shape_str


def and_join(items: list[str]) -> str:
    """``["a", "b", "c"]`` -> ``"a, b and c"``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def arrays_in(x) -> bool:
    """Whether ``x`` is a list of arrays (a learner's blocks): shown array by array, never
    joined into one array that the learner did not write."""
    return isinstance(x, list) and bool(x) and all(
        isinstance(to_numpy(v), np.ndarray) and np.ndim(to_numpy(v)) >= 1 for v in x)


MESSAGE_LINES = LINES  # every message stays under this many lines (DESIGN.md, gate 6)
ONE_LINE = 100  # characters of an array written on one line, in a compact message

_COMPACT = contextvars.ContextVar("compact", default=0)


@contextlib.contextmanager
def compact(level: int = 1):
    """Within it, a message is written more tightly: at level 1, :func:`fmt_value` writes
    an array on one line, its shape and dtype after it, wherever that fits in
    :data:`ONE_LINE` characters; at level 2, an input that does not fit on one line is
    described by its shape and range (``describe_input``); at level 3, a wrong value's
    message that says what differs first leaves out the whole expected and returned values
    (:func:`shows_values`). How a message that would run over :data:`MESSAGE_LINES`
    lines is written again."""
    token = _COMPACT.set(level)
    try:
        yield
    finally:
        _COMPACT.reset(token)


def shows_values() -> bool:
    """Whether a wrong value's message shows the whole expected and returned values (not at
    :func:`compact` level 3, where its line on what differs first stands for them)."""
    return _COMPACT.get() < 3


def labelled(label: str, shown: str) -> list[str]:
    """``label`` ("Expected:") above ``shown``, or (compact) beside it if it is one line."""
    if _COMPACT.get() and "\n" not in shown:
        return [f"{label} {shown.strip()}"]
    return [label, shown]


def fitted(write) -> str:
    """``write()``'s message, written again more tightly while it runs over the line
    limit, counted as it is shown (:func:`grader.learner.prose.wrapped`)."""
    text = write()
    for level in (1, 2, 3):
        if len(wrapped(text).splitlines()) < MESSAGE_LINES:
            break
        with compact(level):
            text = write()
    return text




def _one_line(x: np.ndarray, indent: str, shape: bool = True) -> str | None:
    text = np.array2string(x, precision=4, suppress_small=True, separator=", ",
                           max_line_width=10 ** 6, threshold=60, edgeitems=3,
                           formatter={"object": str})
    text = " ".join(text.split()).replace("[ ", "[")
    line = f"{indent}{text}" + (f"  ({shape_str(x.shape)}, {x.dtype})" if shape else "")
    return line if len(line) <= ONE_LINE else None


def _summary(x) -> str:
    """An input too large for a compact message: its shape, dtype and range."""
    a = to_numpy(x)
    if not isinstance(a, np.ndarray) or a.dtype.kind not in "iuf" or not a.size:
        return ""
    finite = a[np.isfinite(a)]
    span = f", from {finite.min():.4g} to {finite.max():.4g}" if finite.size else ""
    return f"a {shape_str(a.shape)} {a.dtype} array{span} (too large to show here)"


def _entry(label: str, value, indent: str) -> str:
    """One entry of a tuple or dict: under its label, or (compact) beside it."""
    shown = fmt_value(value, indent + "  ")
    if _COMPACT.get() and "\n" not in shown:
        return f"{indent}{label}: {shown.strip()}"
    return f"{indent}{label}:\n{shown}"


def fmt_value(x, indent: str = "    ") -> str:
    x = to_numpy(x)
    if _COMPACT.get() and isinstance(x, np.ndarray) and x.ndim >= 1:
        line = _one_line(x, indent)
        if line is not None:
            return line
    if isinstance(x, tuple) or arrays_in(x):
        return "\n".join(_entry(f"item {i}", v, indent) for i, v in enumerate(x))
    if isinstance(x, dict):
        return "\n".join(_entry(repr(k), v, indent) for k, v in x.items())
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
    return indent + scalar_str(x)


SHOWN_ENTRIES = 1  # of a tuple or dict result, the entries that differ shown at most
LARGEST_SHOWN = 2  # axes of an array shown whole; of a bigger one, the matrix that differs


def _first_difference(want: np.ndarray, got: np.ndarray, tol) -> tuple[int, ...] | None:
    """The index of the first entry where ``got`` differs from ``want``, if both are
    float or int arrays of one shape."""
    if want.shape != got.shape or want.dtype.kind not in "biuf" or got.dtype.kind not in "biuf":
        return None
    w, g = want.astype(float), got.astype(float)
    scale = max(float(np.nanmax(np.abs(w))) if w.size and not np.all(np.isnan(w)) else 1.0, 1.0)
    bad = ~np.isclose(g, w, rtol=tol.rtol, atol=tol.atol_scale * scale, equal_nan=True)
    where = np.argwhere(bad)
    return tuple(int(i) for i in where[0]) if len(where) else None


def _matrices(want, got, tol, indent: str) -> tuple[str, str] | None:
    """Two arrays of more than :data:`LARGEST_SHOWN` axes, shown as the matrix that holds
    their first difference (``[0, 1]`` of a 2×2×3×3 array), or None."""
    want, got = to_numpy(want), to_numpy(got)
    if not (isinstance(want, np.ndarray) and isinstance(got, np.ndarray)) or \
            want.ndim <= LARGEST_SHOWN or got.ndim <= LARGEST_SHOWN:
        return None
    if want.shape == got.shape:
        first = _first_difference(want, got, tol)
        if first is None:
            return None
        leads = (first[: want.ndim - LARGEST_SHOWN],) * 2
    else:  # shapes that differ (the message says how): the first matrix of each
        leads = ((0,) * (want.ndim - LARGEST_SHOWN), (0,) * (got.ndim - LARGEST_SHOWN))

    def shown(a: np.ndarray, lead) -> str:  # the whole array's shape and dtype head the matrix
        line = _one_line(a[lead], indent + "  ", shape=False) if _COMPACT.get() else None
        body = [line] if line else fmt_value(a[lead], indent + "  ").splitlines()[:-1]
        where = f"[{', '.join(map(str, lead))}]"
        return "\n".join([f"{indent}{where} of the {shape_str(a.shape)} {a.dtype} array:", *body])
    return shown(want, leads[0]), shown(got, leads[1])


def _entries(x):
    """A tuple's or dict's entries as (label, value) pairs, else None."""
    if isinstance(x, tuple):
        return [(f"item {i}", v) for i, v in enumerate(x)]
    if isinstance(x, dict):
        return [(repr(k), v) for k, v in x.items()]
    return None


def note_text(note: tuple[list[str], list[str]]) -> str:
    """The words of :func:`noted_pair`'s note: the entries that are right, then the other
    entries that differ."""
    right, also = note
    return "; ".join(([f"{', '.join(right)}: as expected"] if right else []) +
                     ([f"also different: {', '.join(also)}"] if also else []))


def noted_pair(expected, returned, tol, indent: str = "    ",
               first: tuple[int, ...] = ()) -> tuple[str, str, tuple[list[str], list[str]]]:
    """``expected`` and ``returned`` as a message shows them, and a note on the entries
    not shown, as data: (the labels of the entries that are right, the labels of the
    other entries that differ); :func:`note_text` says it in words. When both are tuples or
    dicts of the same shape, only the entries that differ are shown (at most
    :data:`SHOWN_ENTRIES`; the positions in ``first`` before the others), with a line
    that says which others are right. Of an array with more than two axes, the matrix
    that holds the first difference is shown."""
    expected, returned = to_numpy(expected), to_numpy(returned)
    matrices = _matrices(expected, returned, tol, indent)
    if matrices is not None:
        return (*matrices, ([], []))
    want, got = _entries(expected), _entries(returned)
    if want is None or got is None or type(expected) is not type(returned) or \
            [k for k, _ in want] != [k for k, _ in got] or len(want) < 2:
        return fmt_value(expected, indent), fmt_value(returned, indent), ([], [])
    differ = [i for i, ((_, w), (_, g)) in enumerate(zip(want, got)) if difference(w, g, tol)]
    if not differ or len(differ) == len(want) and len(want) <= SHOWN_ENTRIES:
        return fmt_value(expected, indent), fmt_value(returned, indent), ([], [])
    differ.sort(key=lambda i: (first.index(i) if i in first else len(first), i))
    shown = differ[:SHOWN_ENTRIES]
    right = [want[i][0] for i in range(len(want)) if i not in differ]
    also = [want[i][0] for i in sorted(differ[len(shown):])]

    lines_w, lines_g = [], []
    for i in shown:
        pair = _matrices(want[i][1], got[i][1], tol, indent)
        if pair is not None:  # one head line: "item 1, [0, 0] of the 2×2×3×3 float32 array:"
            lines_w.append(f"{indent}{want[i][0]}, {pair[0][len(indent):]}")
            lines_g.append(f"{indent}{got[i][0]}, {pair[1][len(indent):]}")
            continue
        lines_w.append(_entry(want[i][0], want[i][1], indent))
        lines_g.append(_entry(got[i][0], got[i][1], indent))
    return "\n".join(lines_w), "\n".join(lines_g), (right, also)


def _same_as(arg, earlier: list[tuple[str, object]]) -> str:
    """The name of an earlier argument equal to ``arg`` (self-attention's key and value
    are its query), or ""."""
    a = to_numpy(arg)
    if not isinstance(a, np.ndarray) or a.size < 4:
        return ""
    for name, other in earlier:
        b = to_numpy(other)
        if isinstance(b, np.ndarray) and a.shape == b.shape and a.dtype == b.dtype and \
                np.array_equal(a, b, equal_nan=np.issubdtype(a.dtype, np.inexact)):
            return name
    return ""


RANDOM_SHOWN = 4  # entries of a module's random float input shown; a bigger one by its shape


def _random_input(arg) -> str:
    """A module case's float array with more than :data:`RANDOM_SHOWN` entries, in one
    line: its values mean nothing without the check's weights, which are not shown."""
    a = to_numpy(arg)
    if isinstance(a, np.ndarray) and np.issubdtype(a.dtype, np.floating) and a.size > RANDOM_SHOWN:
        return f"random values, shape {shape_str(a.shape)}, dtype {a.dtype}"
    return ""


def describe_input(case: Case) -> str:
    parts, earlier = [], []
    module = bool(case.build.describe)
    if module:
        parts.append(f"  {case.build.label or 'module'} = {case.build.describe}")
    for i, arg in enumerate(case.args):
        name = case.names[i] if i < len(case.names) else f"argument {i + 1}"
        kind = ""
        if arrays_in(arg):
            kind = f" (a Python list of {len(arg)} array{'s' if len(arg) != 1 else ''})"
        elif isinstance(arg, list):
            kind = " (a Python list)"
        elif isinstance(arg, np.ndarray) and arg.ndim >= 1 and not arg.flags.c_contiguous:
            kind = " (a non-contiguous view)"
        same = _same_as(arg, earlier)
        earlier.append((name, arg))
        if same:
            parts.append(f"  {name} = the same as {same}")
            continue
        if module and _random_input(arg):
            parts.append(f"  {name} = {_random_input(arg)}")
            continue
        shown = fmt_value(arg)
        plain = not isinstance(to_numpy(arg), (np.ndarray, list))  # a number, a flag
        if "\n" not in shown and (_COMPACT.get() or plain):
            parts.append(f"  {name}{kind} = {shown.strip()}")
        elif _COMPACT.get() >= 2 and _summary(arg):
            parts.append(f"  {name} = {_summary(arg)}")
        else:
            parts.append(f"  {name}{kind} =\n{shown}")
    for key, val in case.kwargs.items():
        shown = fmt_value(val)
        one = "\n" not in shown and (_COMPACT.get() or not isinstance(to_numpy(val), np.ndarray))
        parts.append(f"  {key} = {shown.strip()}" if one else f"  {key} =\n{shown}")
    return "\n".join(parts)


def case_title(case: Case) -> str:
    return f" ({case.note})" if case.note else ""


def success_line(name: str, cases: list[Case], n_bad: int, hidden: bool) -> str:
    """One ✓ line, then (visible checks only) a short second line listing what was tried."""
    label = " hidden" if hidden else ""
    rejected = f"; {n_bad} bad input{'s' if n_bad != 1 else ''} rejected with ValueError" if n_bad else ""
    count = f"all {len(cases)}{label} cases pass" if len(cases) != 1 else f"the{label} case passes"
    line = f"✓ {name}: {count}{rejected}."
    notes = list(dict.fromkeys(case.note for case in cases if case.note))
    if notes and not hidden:
        line += "\n" + textwrap.fill(f"tried: {', '.join(notes)}", width=86,
                                     initial_indent="  ", subsequent_indent="    ")
    return line
