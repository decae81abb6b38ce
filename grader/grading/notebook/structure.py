"""A submitted notebook's structure, bounded before the grading process works on it.

The bytes of a submission are bounded when it is read (``grader.grading.classroom.submissions``),
but 45 MB hold a million empty cells, or lists nested 200,000 deep, and the work of
reading, repairing and scanning a notebook grows with its cells, outputs, lines and
nesting, not its bytes. So a notebook is measured against the limits that live beside the
byte limits (``MAX_DEPTH`` ... ``MAX_CODE_DEPTH`` in ``grader.grading.classroom.submissions``), and
one over any of them is not read: it is graded as an unreadable notebook, with a note that
names the limit.

Nothing here recurses on the submission's structure: the nesting of the JSON is measured
on its text, outside strings, before any parser sees it (:func:`json_shape`); the nesting
of a parsed value or of a cell's syntax tree by walking it with a list (:func:`depth`,
:func:`code_depth`).
"""
from __future__ import annotations

import ast
import functools

from ..classroom.submissions import (
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

_CHUNK = 1 << 20  # bytes read at a time
# Each byte's step in the nesting: +1 opens a list or object, -1 closes one.
_STEP = bytes(1 if c in b"[{" else 255 if c in b"]}" else 0 for c in range(256))
_QUOTE, _BACKSLASH, _COMMA = ord('"'), ord("\\"), ord(",")
_SPACE = bytes(1 if c in b" \t\r\n" else 0 for c in range(256))
_CLOSES = {ord("["): ord("]"), ord("{"): ord("}")}
_INDENT = 64  # bytes of white space looked at one by one after a list or object opens


class _Scan:
    """Reads a JSON text a chunk at a time, and carries from one chunk to the next what
    the next needs: the backslashes just before it, whether it starts inside a string, a
    list or object opened last with nothing after it yet, and the counts so far. Every step
    but a few passes over the bytes works on the positions of the few bytes that matter
    (quotes, backslashes, brackets, commas)."""

    def __init__(self):
        self.run = 0  # backslashes just before the chunk
        self.inside = 0  # 1: the chunk starts inside a string
        self.pending = 0  # the closing byte that would make the last list or object opened empty
        self.level = self.deepest = self.commas = self.opens = self.empty = 0

    def read(self, chunk) -> None:
        import numpy as np

        quotes = self._quotes(chunk)  # the positions of the quotes that open or close a string
        steps = np.frombuffer(_STEP, dtype=np.int8)[chunk]
        marks = np.flatnonzero(steps | (chunk == _COMMA))
        # Before a byte, an odd number of quotes (and a string open at the start): inside.
        outside = (np.searchsorted(quotes, marks) + self.inside) % 2 == 0
        marks = marks[outside]
        moves = steps[marks].astype(np.int64)
        if len(moves):
            levels = np.cumsum(moves) + self.level
            self.deepest, self.level = max(self.deepest, int(levels.max())), int(levels[-1])
        self.commas += int(np.count_nonzero(moves == 0))
        opened = marks[moves == 1]
        self.opens += len(opened)
        self._empty(chunk, opened)
        self.inside = (self.inside + len(quotes)) % 2

    def _quotes(self, chunk):
        """The quotes of ``chunk`` that no odd run of backslashes escapes; sets ``run``."""
        import numpy as np

        found = np.flatnonzero(chunk == _QUOTE)
        slashes = np.flatnonzero(chunk == _BACKSLASH)
        run = self.run
        if len(slashes):
            # For each backslash, the length of its run so far (the chunk's first run goes on
            # from the backslashes just before it).
            starts = np.concatenate(([True], np.diff(slashes) != 1))
            first = np.maximum.accumulate(np.where(starts, np.arange(len(slashes)), 0))
            length = np.arange(len(slashes)) - first + 1 + np.where(slashes[first] == 0, run, 0)
            j = np.searchsorted(slashes, found) - 1  # the last backslash before each quote
            near = (j >= 0) & (slashes[np.maximum(j, 0)] == found - 1)
            before = np.where(near, length[np.maximum(j, 0)], 0)
            self.run = int(length[-1]) if slashes[-1] == len(chunk) - 1 else 0
        else:
            before = np.zeros(len(found), dtype=np.int64)
            self.run = 0
        if len(found) and found[0] == 0 and run:  # a quote first, after backslashes before the chunk
            before[0] = run
        return found[before % 2 == 0]

    def _empty(self, chunk, opened) -> None:
        """Count the lists and objects whose next byte that is not white space closes them."""
        import numpy as np

        space = np.frombuffer(_SPACE, dtype=np.uint8)[chunk]
        if self.pending:
            solid = np.flatnonzero(space == 0)[:1]
            if len(solid):
                self.empty += int(chunk[solid[0]] == self.pending)
                self.pending = 0
        if not len(opened):
            return
        last = len(chunk) - 1
        nxt = opened + 1
        for _ in range(_INDENT):  # a list or object with items opens before a line break and an indent
            waiting = (nxt <= last) & (space[np.minimum(nxt, last)] == 1)
            if not waiting.any():
                break
            nxt += waiting
        else:  # more white space than any layout writes: find the next byte the long way
            solid = np.flatnonzero(space == 0)
            at = np.searchsorted(solid, opened, side="right")
            nxt = np.where(at < len(solid), solid[np.minimum(at, len(solid) - 1)], last + 1)
        inner = nxt <= last
        kinds, after = chunk[opened[inner]], chunk[nxt[inner]]
        self.empty += int(np.count_nonzero(((kinds == ord("[")) & (after == ord("]")))
                                           | ((kinds == ord("{")) & (after == ord("}")))))
        if not inner[-1]:  # the last one opened ends the chunk's bytes: the next chunk says
            self.pending = _CLOSES[int(chunk[opened[-1]])]


def json_shape(data: bytes) -> tuple[int, int]:
    """How deep the lists and objects of the JSON text ``data`` nest, and how many values
    it holds (every string, number, literal, list and object; an object's keys are not
    counted), read from its bytes without parsing them. In UTF-8 no byte of a longer
    character is a quote, a backslash, a bracket or a comma. For text that is not JSON,
    the counts are those of its text as far as it reads as JSON."""
    import numpy as np

    text = np.frombuffer(data, dtype=np.uint8)
    scan = _Scan()
    for start in range(0, len(text), _CHUNK):
        scan.read(text[start:start + _CHUNK])
    return scan.deepest, scan.commas + scan.opens - scan.empty + 1


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


@functools.lru_cache(maxsize=1024)  # the cells given in the release are in every submission
def _code_problem(text: str) -> str:
    """Why the code of a cell is nested too deep for the scans that read it, or ""."""
    from ...learner.shortcuts import python_source

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
