"""Source code for a catalogued mistake, to paste into a notebook's answer cell.

A mistake is the reference with one knob changed (``grader.lessons.knob``): a
``functools.partial`` of a core function or class, sometimes a class made on the fly
whose methods are partials. :func:`answer_source` writes Python that defines a name to
behave exactly like such an object: the source of every function and class of the
instructor's side it needs (inlined, since a learner's copy of the course has none of
them), imports for everything else, and the partials as expressions.
"""
from __future__ import annotations

import functools
import re
import inspect
import textwrap
import types

INLINE = ("grader.lessons", "grader.reference")
SIMPLE = (int, float, str, bool, type(None), complex)


def _simple(value) -> bool:
    if isinstance(value, SIMPLE):
        return True
    if isinstance(value, (tuple, list, frozenset, set)):
        return all(_simple(v) for v in value)
    if isinstance(value, dict):
        return all(_simple(k) and _simple(v) for k, v in value.items())
    return False


def _inline(obj) -> bool:
    module = getattr(obj, "__module__", "") or ""
    return module.startswith(INLINE)


def _codes(code: types.CodeType):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


class _Writer:
    def __init__(self):
        self.imports: list[str] = []
        self.defs: list[str] = []
        self.names: dict[int, str] = {}  # id(object) -> the name it is defined under
        self.counter = 0

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"_{stem.strip('_')}_{self.counter}"

    # -------------------------------------------------------------- expressions
    def expr(self, value) -> str:
        if _simple(value):
            return repr(value)
        if isinstance(value, functools.partial):
            args = [self.expr(a) for a in value.args]
            kwargs = [f"{k}={self.expr(v)}" for k, v in value.keywords.items()]
            self.imports.append("import functools")
            return f"functools.partial({', '.join([self.expr(value.func), *args, *kwargs])})"
        if isinstance(value, functools.partialmethod):
            kwargs = [f"{k}={self.expr(v)}" for k, v in value.keywords.items()]
            args = [self.expr(a) for a in value.args]
            self.imports.append("import functools")
            return f"functools.partialmethod({', '.join([self.expr(value.func), *args, *kwargs])})"
        if isinstance(value, types.ModuleType):
            self.imports.append(f"import {value.__name__}")
            return value.__name__
        if isinstance(value, (types.FunctionType, type)):
            return self.define(value)
        module, name = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
        if module and name and "<" not in name and "." not in name:
            self.imports.append(f"from {module} import {name}")
            return name
        raise TypeError(f"cannot write {value!r} as source")

    # -------------------------------------------------------------- definitions
    def define(self, obj) -> str:
        if id(obj) in self.names:
            return self.names[id(obj)]
        if not _inline(obj):
            module = obj.__module__
            if module == "builtins":
                return obj.__name__
            self.imports.append(f"from {module} import {obj.__qualname__.split('.')[0]}")
            return obj.__qualname__
        if isinstance(obj, type):
            return self._class(obj)
        return self._function(obj)

    def _needs(self, code: types.CodeType, scope: dict) -> None:
        """Define or import every global the code uses."""
        self._need_names([n for inner in _codes(code) for n in inner.co_names], scope)

    def _need_names(self, names, scope: dict) -> None:
        import builtins

        for name in names:
            if name not in scope or name in self._defined_globals:
                continue
            value = scope[name]
            self._defined_globals.add(name)
            if isinstance(value, types.ModuleType):
                self.imports.append(f"import {value.__name__} as {name}")
            elif isinstance(value, (types.FunctionType, type)) and _inline(value):
                defined = self.define(value)
                if defined != name:
                    self.defs.append(f"{name} = {defined}")
            elif isinstance(value, (types.FunctionType, type, types.BuiltinFunctionType)) \
                    or callable(value) and hasattr(value, "__module__"):
                module = getattr(value, "__module__", None)
                qualname = getattr(value, "__qualname__", getattr(value, "__name__", name))
                if module and "." not in qualname and "<" not in qualname:
                    self.imports.append(f"from {module} import {qualname} as {name}")
                else:
                    self.defs.append(f"{name} = {self.expr(value)}")
            elif _simple(value):
                self.defs.append(f"{name} = {value!r}")
            elif hasattr(builtins, name):
                continue
            else:
                statement = _statement(scope, name)
                if statement is None:
                    self.defs.append(f"{name} = {self.expr(value)}")
                else:  # a table of lambdas, say: its own source, and what it uses
                    text, used = statement
                    self._need_names(used, scope)
                    self.defs.append(text)

    _defined_globals: set

    def _function(self, fn: types.FunctionType) -> str:
        self.names[id(fn)] = fn.__name__
        source = textwrap.dedent(inspect.getsource(fn))
        self._needs(fn.__code__, fn.__globals__)
        self._need_names(_signature_names(source), fn.__globals__)
        self.defs.append(source)
        return fn.__name__

    def _class(self, cls: type) -> str:
        try:
            source = textwrap.dedent(inspect.getsource(cls))
            static = f"class {cls.__name__}" in source
        except (OSError, TypeError):
            static = False
        if static:
            self.names[id(cls)] = cls.__name__
            for base in cls.__bases__:
                if base is not object:
                    self.expr(base)
            for value in vars(cls).values():
                func = getattr(value, "__func__", value)
                if isinstance(func, types.FunctionType):
                    self._needs(func.__code__, func.__globals__)
                    self._need_names(_signature_names(textwrap.dedent(inspect.getsource(func))),
                                     func.__globals__)
            self.defs.append(source)
            return cls.__name__
        # A class made on the fly (a knob of a method): its bases and its own attributes.
        name = self.fresh("Mistake")
        self.names[id(cls)] = name
        bases = ", ".join(self.expr(b) for b in cls.__bases__)
        body = [f"    {k} = {self.expr(v)}" for k, v in vars(cls).items()
                if not (k.startswith("__") and k.endswith("__"))]
        self.defs.append(f"class {name}({bases}):\n" + ("\n".join(body) or "    pass"))
        return name


def _signature_names(source: str) -> list[str]:
    """Names a definition's default values and decorators use (they are evaluated where
    the function is defined, so its code does not list them)."""
    import ast

    node = ast.parse(source).body[0]
    found = []
    parts = [*node.decorator_list]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        parts += [*node.args.defaults, *[d for d in node.args.kw_defaults if d is not None]]
    for part in parts:
        found += [n.id for n in ast.walk(part) if isinstance(n, ast.Name)]
    return found


def _statement(scope: dict, name: str):
    """The source of the module-level assignment that defines ``name`` in ``scope``'s
    module, and the names it uses; None if there is none."""
    import ast
    import sys

    module = sys.modules.get(scope.get("__name__", ""))
    try:
        source = inspect.getsource(module)
    except (TypeError, OSError):
        return None
    for node in ast.parse(source).body:
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) and node.value is not None else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            used = [n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)]
            return ast.get_source_segment(source, node), used
    return None


def answer_source(obj, name: str) -> str:
    """Python that defines ``name`` to behave like ``obj`` (a mistake's implementation)."""
    writer = _Writer()
    writer._defined_globals = set()
    expression = writer.expr(obj)
    imports = "\n".join(dict.fromkeys(writer.imports))
    body = "\n\n\n".join(dict.fromkeys(writer.defs))
    # Annotations stay unevaluated, as in the modules the code comes from.
    return f"from __future__ import annotations\n{imports}\n\n\n{body}\n\n{name} = {expression}\n"


# ------------------------------------------------------------------ solution fragments
SOLUTION = re.compile(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", re.S)
SHORTEST_LINE = 12  # characters, whitespace ignored: shorter lines (``return C``) are idioms
SHORTEST_PART = 10  # the right-hand side of an ``x = ...`` or ``return ...`` line


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _fragments(text: str) -> set[str]:
    """Every line of the solution regions in ``text`` (one cell's source), and the
    expression of each of its ``x = ...`` and ``return ...`` lines, whitespace removed."""
    found: set[str] = set()
    for region in SOLUTION.findall(text):
        for line in region.splitlines():
            line = line.split("#")[0].strip() if not line.strip().startswith(("'", '"')) else line.strip()
            if len(_squeeze(line)) >= SHORTEST_LINE:
                found.add(_squeeze(line))
            part = re.match(r"^(?:return\s+|[\w\[\], .]+?\s*(?:[-+*/@]?=)\s*)(.+)$", line)
            if part and "==" not in line[: part.start(1)] and len(_squeeze(part.group(1))) >= SHORTEST_PART \
                    and not re.fullmatch(r"[\w\s,()]+|[\w\s,.]+", part.group(1)):  # names and
                # attributes alone (cache.keys): the interface
                found.add(_squeeze(part.group(1)))
    return found


def _cells(lesson: str) -> list[dict]:
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "solutions" / lesson / f"{lesson}.ipynb"
    return json.loads(path.read_text())["cells"]


def _text(cell: dict) -> str:
    return cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])


@functools.lru_cache(maxsize=None)
def solution_fragments(lesson: str) -> tuple[str, ...]:
    """What no message may contain: every line of the lesson's solution regions, and the
    expression of each of its ``x = ...`` and ``return ...`` lines, whitespace removed."""
    found: set[str] = set()
    for cell in _cells(lesson):
        found |= _fragments(_text(cell))
    return tuple(sorted(found, key=len, reverse=True))


YOUR_LINE = re.compile(r"^\s*at line \d+ of your code: .*$", re.M)


def handed_over(message: str, lesson: str) -> list[str]:
    """The solution fragments of ``lesson`` that ``message`` contains (a quote of the
    learner's own line, "at line 5 of your code: ...", is theirs to see)."""
    squeezed = _squeeze(YOUR_LINE.sub("", message))
    return [f for f in solution_fragments(lesson) if f in squeezed]


# ------------------------------------------------------------------ prose that writes the code
CODE_SPAN = re.compile(r"```[^\n]*\n(.*?)```|`([^`\n]+)`", re.S)
NAMES_AND_CALLS = re.compile(r"[\w\s,.()]+")  # `torch.no_grad()`, `train(model, TASK, steps, seed)`
MOST_OF_A_LINE = 0.5


def _given(text: str) -> str:
    """A solution cell's source without its solution regions: what the learner is given."""
    return SOLUTION.sub("", text)


@functools.lru_cache(maxsize=None)
def exercises(lesson: str) -> dict[str, str]:
    """The source of each solution code cell of the lesson, by its nbgrader ``grade_id``."""
    return {cell["metadata"]["nbgrader"]["grade_id"]: _text(cell) for cell in _cells(lesson)
            if cell["cell_type"] == "code" and cell["metadata"].get("nbgrader", {}).get("solution")}


def _spans(markdown: str) -> list[str]:
    """The code in Markdown: each inline span, and each line of a fenced block."""
    spans = []
    for match in CODE_SPAN.finditer(markdown):
        spans += match.group(1).splitlines() if match.group(1) is not None else [match.group(2)]
    return spans


QUOTED_NAME = re.compile(r"""(["'])\w+\1""")  # a key the exercise asks for: interface


def dictated(text: str, lesson: str, exercise: str, markdown: bool) -> list[str]:
    """What ``text`` (a cell shown before ``exercise``) writes out of that exercise's
    solution: a fragment of it (as :func:`handed_over` finds them), or, in Markdown, a code
    span that is more than names, calls and quoted keys (an index, an operator, a
    statement) and makes up at least half of one of its solution lines. What the
    exercise's own cell gives (its signature, docstring and given lines) is interface,
    never dictation."""
    source = exercises(lesson)[exercise]
    given = _squeeze(_given(source))
    squeezed = _squeeze(text)
    found = [f for f in sorted(_fragments(source), key=len, reverse=True)
             if f in squeezed and f not in given]
    if markdown:
        lines = [_squeeze(line.split("#")[0]) for region in SOLUTION.findall(source)
                 for line in region.splitlines()]
        for span in _spans(text):
            s = _squeeze(span)
            if len(s) < SHORTEST_PART or NAMES_AND_CALLS.fullmatch(span) or s in given \
                    or QUOTED_NAME.fullmatch(span.strip()) \
                    or any(f in s for f in found):  # a fragment found already
                continue
            if any(s in line and len(s) >= MOST_OF_A_LINE * len(line) for line in lines if line):
                found.append(span.strip())
    return list(dict.fromkeys(found))
