"""A submitted notebook's structure, bounded before the grading process works on it.

The bytes of a submission are bounded when it is read (``grader.grading.submissions``),
but 45 MB hold a million empty cells, or lists nested 200,000 deep, and the work of
reading, repairing and scanning a notebook grows with its cells, outputs, lines and
nesting, not its bytes. So a notebook is measured against the limits that live beside the
byte limits (``MAX_DEPTH`` ... ``MAX_CODE_DEPTH`` in ``grader.grading.submissions``), and
one over any of them is not read: it is graded as an unreadable notebook, with a note that
names the limit.

Nothing here recurses on the submission's structure: the nesting of the JSON is measured
on its text, outside strings, before any parser sees it (:func:`json_shape`); the nesting
of a parsed value or of a cell's syntax tree by walking it with a list (:func:`depth`,
:func:`code_depth`).
"""
from __future__ import annotations

import ast
import re

from .submissions import (
    MAX_CELL_LINES,
    MAX_CELL_OUTPUTS,
    MAX_CELLS,
    MAX_CODE,
    MAX_CODE_DEPTH,
    MAX_DEPTH,
    MAX_LINES,
    MAX_OUTPUTS,
    MAX_VALUES,
)

# A JSON string: a quote, then characters that are neither a quote nor a backslash or a
# backslash and the character it escapes, then a quote. In UTF-8 neither byte is ever part
# of a longer character, so the bytes can be read as they are.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_SPACE = b" \t\r\n"
# Every byte but the structure's and JSON's white space becomes "x" (a scalar's text).
_SCALARS = bytes(c if bytes([c]) in b"[]{},x" else ord("x") for c in range(256))
_SIGNS = bytes(1 if bytes([c]) in b"[{" else 255 if bytes([c]) in b"]}" else 0 for c in range(256))
_CHUNK = 1 << 22  # brackets summed at a time


def json_shape(data: bytes) -> tuple[int, int]:
    """How deep the lists and objects of the JSON text ``data`` nest, and how many values
    it holds (every string, number, literal, list and object; an object's keys are not
    counted), read from its text without parsing it. For text that is not JSON, the
    counts are those of its text as far as it can be read as JSON."""
    import numpy as np

    bare = _STRING.sub(b"x", data).translate(_SCALARS, _SPACE)
    empty = bare.count(b"[]") + bare.count(b"{}")
    values = bare.count(b",") + bare.count(b"[") + bare.count(b"{") - empty + 1
    steps = np.frombuffer(bare.translate(None, b"x,").translate(_SIGNS), dtype=np.int8)
    level = deepest = 0
    for start in range(0, len(steps), _CHUNK):  # a running sum, a few MB at a time
        run = np.cumsum(steps[start:start + _CHUNK], dtype=np.int64) + level
        deepest, level = max(deepest, int(run.max())), int(run[-1])
    return deepest, values


def text_problem(data: bytes) -> str:
    """Why the JSON text ``data`` is not read (nested too deep, too many values), or ""."""
    deepest, values = json_shape(data)
    if deepest > MAX_DEPTH:
        return (f"its lists and objects are nested {deepest:,} levels deep; a notebook may "
                f"nest them at most {MAX_DEPTH:,} deep")
    if values > MAX_VALUES:
        return f"it holds {values:,} JSON values; a notebook may hold at most {MAX_VALUES:,}"
    return ""


def depth(value) -> int:
    """How deep the lists and dicts of an already parsed JSON ``value`` nest (0 for a
    scalar), found without recursion."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, level = todo.pop()
        if isinstance(item, dict):
            item = item.values()
        elif not isinstance(item, (list, tuple)):
            continue
        deepest = max(deepest, level)
        todo.extend((child, level + 1) for child in item)
    return deepest


def code_depth(tree: ast.AST) -> int:
    """How deep a syntax tree nests, found without recursion."""
    deepest, todo = 0, [(tree, 1)]
    while todo:
        node, level = todo.pop()
        deepest = max(deepest, level)
        todo.extend((child, level + 1) for child in ast.iter_child_nodes(node))
    return deepest


def _lines(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _text(source) -> str:
    if isinstance(source, list):
        return "".join(s for s in source if isinstance(s, str))
    return source if isinstance(source, str) else ""


def _cells(nb: dict) -> list:
    """The notebook's cells; an nbformat 3 notebook keeps them in worksheets."""
    if isinstance(nb.get("worksheets"), list):
        return [c for w in nb["worksheets"] if isinstance(w, dict) and isinstance(w.get("cells"), list)
                for c in w["cells"]]
    return nb["cells"] if isinstance(nb.get("cells"), list) else []


def notebook_problem(nb: dict) -> str:
    """Why the parsed notebook ``nb`` is not read (over a limit on its cells, outputs,
    source lines, code or the nesting of its code), or ""."""
    cells = [c for c in _cells(nb) if isinstance(c, dict)]
    if len(cells) > MAX_CELLS:
        return f"it has {len(cells):,} cells; a notebook may have at most {MAX_CELLS:,}"
    outputs = lines = code = 0
    sources = []
    for n, cell in enumerate(cells, 1):
        shown = len(cell["outputs"]) if isinstance(cell.get("outputs"), list) else 0
        if shown > MAX_CELL_OUTPUTS:
            return f"its cell {n} has {shown:,} outputs; a cell may have at most {MAX_CELL_OUTPUTS:,}"
        text = _text(cell.get("source", cell.get("input")))  # nbformat 3 names a code cell's "input"
        count = _lines(text)
        if count > MAX_CELL_LINES:
            return f"its cell {n} has {count:,} lines; a cell may have at most {MAX_CELL_LINES:,}"
        outputs, lines = outputs + shown, lines + count
        if cell.get("cell_type") == "code" and text.strip():
            code += len(text)
            sources.append((n, text))
    if outputs > MAX_OUTPUTS:
        return f"it has {outputs:,} outputs; a notebook may have at most {MAX_OUTPUTS:,}"
    if lines > MAX_LINES:
        return f"it has {lines:,} lines; a notebook may have at most {MAX_LINES:,}"
    if code > MAX_CODE:
        return f"it has {code:,} characters of code; a notebook may have at most {MAX_CODE:,}"
    for n, text in sources:
        problem = _code_problem(text)
        if problem:
            return f"the code of its cell {n} {problem}"
    return ""


def _code_problem(text: str) -> str:
    """Why the code of a cell is nested too deep for the scans that read it, or ""."""
    from ..learner.shortcuts import python_source

    try:
        tree = ast.parse(python_source(text))
    except (SyntaxError, ValueError):
        return ""  # it does not run either: the kernel says so in its cell
    except (RecursionError, MemoryError):  # Python's own parser gave up on its nesting
        return f"is nested too deep for Python to read; code may nest at most {MAX_CODE_DEPTH:,} deep"
    deepest = code_depth(tree)
    if deepest > MAX_CODE_DEPTH:
        return f"is nested {deepest:,} levels deep; code may nest at most {MAX_CODE_DEPTH:,} deep"
    return ""
