"""How a check shows values and inputs in its messages."""
from __future__ import annotations

import textwrap

import numpy as np

from .cases import Case
from .compare import to_numpy
from .validation import shape_str


def and_join(items: list[str]) -> str:
    """``["a", "b", "c"]`` -> ``"a, b and c"``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def fmt_value(x, indent: str = "    ") -> str:
    x = to_numpy(x)
    if isinstance(x, tuple):
        return "\n".join(f"{indent}item {i}:\n{fmt_value(v, indent + '  ')}" for i, v in enumerate(x))
    if isinstance(x, dict):
        return "\n".join(f"{indent}{k!r}:\n{fmt_value(v, indent + '  ')}" for k, v in x.items())
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
    if case.build and case.build.get("describe"):
        parts.append(f"  {case.build.get('label', 'module')} =\n    {case.build['describe']}")
    for i, arg in enumerate(case.args):
        name = case.names[i] if i < len(case.names) else f"argument {i + 1}"
        kind = ""
        if isinstance(arg, list):
            kind = " (a Python list)"
        elif isinstance(arg, np.ndarray) and arg.ndim >= 1 and not arg.flags.c_contiguous:
            kind = " (a non-contiguous view)"
        parts.append(f"  {name}{kind} =\n{fmt_value(arg)}")
    for key, val in case.kwargs.items():
        parts.append(f"  {key} =\n{fmt_value(val)}")
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
