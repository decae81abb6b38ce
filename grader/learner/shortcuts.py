"""Finding forbidden shortcuts in a learner's function by reading its bytecode.

Some exercises ask for an implementation by hand: the loop versions of a matrix product
may not use ``@`` or ``np.matmul``; ``scaled_dot_product_attention`` may not call the
library's attention. Reading the source text would be fooled by comments, strings and
aliases (``from numpy import matmul as mm``), so this module walks compiled code:

* the ``@`` operator is a ``BINARY_OP`` instruction;
* a global name is resolved and compared with the forbidden objects, so aliases are
  caught; an attribute (``np.dot``, ``A.dot``) is caught by name, and by what it is when
  its owner can be resolved;
* ``for`` loops and comprehensions (``FOR_ITER``) are caught where loops are forbidden;
* nested functions, lambdas and comprehensions are scanned too, and so are the learner's
  own helper functions that the function calls.

Names are resolved in one of two ways, by a :class:`Scope`:

* :class:`RuntimeScope`: a live function's globals, compared by identity with the
  forbidden objects (in a notebook, where the function exists);
* :class:`SourceScope`: the learner's source, compiled but never run, with imports and
  simple assignments read from it (the grader, which never trusts what a learner's kernel
  says about itself). :func:`scan_source` builds one from a submission's cells.
"""
from __future__ import annotations

import ast
import dis
import inspect
import sys
import types
from dataclasses import dataclass, field

_MISSING = object()


@dataclass(frozen=True)
class Rules:
    """What an exercise forbids or requires.

    ``names`` maps a function or attribute name to how to call it in the message, for
    example ``{"matmul": "np.matmul"}``. ``objects`` are dotted paths of callables
    forbidden under any name (``"numpy.matmul"``). ``required`` are names at least one of
    which the function must use.
    """

    names: dict = field(default_factory=dict)
    objects: tuple = ()
    matmul_operator: bool = False
    loops: bool = False
    required: dict = field(default_factory=dict)
    why: str = ""

    def to_data(self) -> dict:
        return {"names": dict(self.names), "objects": list(self.objects),
                "matmul_operator": self.matmul_operator, "loops": self.loops,
                "required": dict(self.required), "why": self.why}

    @classmethod
    def from_data(cls, d: dict) -> Rules:
        return cls(dict(d["names"]), tuple(d["objects"]), bool(d["matmul_operator"]),
                   bool(d["loops"]), dict(d["required"]), d["why"])


NUMPY_PRODUCTS = {
    "matmul": "np.matmul",
    "dot": "np.dot / .dot()",
    "einsum": "np.einsum",
    "inner": "np.inner",
    "tensordot": "np.tensordot",
    "vdot": "np.vdot",
    "__matmul__": "the @ operator (via __matmul__)",
    "__rmatmul__": "the @ operator (via __rmatmul__)",
    "multi_dot": "np.linalg.multi_dot",
}
NUMPY_PRODUCT_OBJECTS = ("numpy.matmul", "numpy.dot", "numpy.einsum", "numpy.inner",
                         "numpy.tensordot", "numpy.vdot", "numpy.linalg.multi_dot",
                         "operator.matmul", "operator.imatmul")


@dataclass(frozen=True)
class Finding:
    what: str
    where: str  # "line 4 of matmul_dot"

    def __str__(self) -> str:
        return f"{self.what} ({self.where})"


def resolve_path(path: str):
    """The object at dotted ``path`` if its module is already imported, else ``_MISSING``
    (a learner's function can only use what their kernel loaded, and the check must not
    pay for importing torch itself)."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        module = sys.modules.get(".".join(parts[:i]))
        if module is None:
            continue
        value = module
        for part in parts[i:]:
            value = getattr(value, part, _MISSING)
            if value is _MISSING:
                return _MISSING
        return value
    return _MISSING


# ----------------------------------------------------------------------------- scopes

@dataclass
class Ref:
    """What a name stands for: a live object, or (from source) a dotted path; ``own`` is
    the learner's own function, whose code is scanned too."""

    value: object = _MISSING
    path: str = ""
    own: list = field(default_factory=list)  # [(code, scope, name)] to follow

    def attribute(self, name: str) -> Ref:
        if self.value is not _MISSING:
            return Ref(getattr(self.value, name, _MISSING))
        return Ref(path=f"{self.path}.{name}" if self.path else "")


UNKNOWN = Ref()


class RuntimeScope:
    """Names of a live function, looked up in its globals and closure."""

    def __init__(self, fn: types.FunctionType):
        self.fn = fn

    def resolve(self, name: str, deref: bool = False) -> Ref:
        fn = self.fn
        if deref:
            freevars = fn.__code__.co_freevars
            if fn.__closure__ and name in freevars:
                try:
                    return self._ref(fn.__closure__[freevars.index(name)].cell_contents)
                except ValueError:  # an empty cell
                    return UNKNOWN
            return UNKNOWN
        if name in fn.__globals__:
            return self._ref(fn.__globals__[name])
        builtins = fn.__globals__.get("__builtins__", {})
        if isinstance(builtins, types.ModuleType):
            builtins = vars(builtins)
        return Ref(builtins.get(name, _MISSING))

    def _ref(self, value) -> Ref:
        own = []
        if isinstance(value, types.FunctionType) and value.__globals__ is self.fn.__globals__:
            own = [(value.__code__, RuntimeScope(value), value.__name__)]
        return Ref(value, own=own)


class SourceScope:
    """Names as the learner's source defines them: imports, ``name = module.attr``
    assignments, and the functions and classes it defines (never run)."""

    def __init__(self, paths: dict[str, str], codes: dict[str, list]):
        self.paths = paths  # name -> dotted path
        self.codes = codes  # name -> [code objects] of a def (or a class's methods)

    def resolve(self, name: str, deref: bool = False) -> Ref:  # noqa: ARG002
        if name in self.codes:
            return Ref(path="", own=[(code, self, code.co_name) for code in self.codes[name]])
        if name in self.paths:
            return Ref(path=self.paths[name])
        import builtins

        return Ref(path=f"builtins.{name}") if hasattr(builtins, name) else UNKNOWN


# ----------------------------------------------------------------------------- the scan

def functions_of(obj) -> list[types.FunctionType]:
    """The plain functions behind ``obj``: itself, a partial's function, or a class's
    methods."""
    import functools

    while isinstance(obj, functools.partial):
        obj = obj.func
    if isinstance(obj, types.MethodType):
        obj = obj.__func__
    if isinstance(obj, types.FunctionType):
        return [obj]
    if inspect.isclass(obj):
        found = []
        for klass in obj.__mro__:
            if klass.__module__ in ("builtins",) or klass.__module__.startswith("torch"):
                continue
            for value in vars(klass).values():
                if isinstance(value, (staticmethod, classmethod)):
                    value = value.__func__
                if isinstance(value, types.FunctionType):
                    found.append(value)
        return found
    return []


def code_objects(code: types.CodeType):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from code_objects(const)


def _forbidden(ref: Ref, rules: Rules) -> str:
    """A label if ``ref`` is one of the forbidden objects, else ""."""
    if ref.value is not _MISSING:
        for path in rules.objects:
            obj = resolve_path(path)
            if obj is not _MISSING and ref.value is obj:
                return getattr(obj, "__qualname__", getattr(obj, "__name__", path))
        return ""
    if ref.path and ref.path in rules.objects:
        return ref.path.rsplit(".", 1)[-1]
    return ""


def scan(obj, rules: Rules) -> tuple[list[Finding], set[str]]:
    """Forbidden uses in a live ``obj`` (function or class), and the required names it
    uses."""
    return scan_codes([(fn.__code__, RuntimeScope(fn), fn.__name__) for fn in functions_of(obj)],
                      rules)


def scan_codes(todo: list, rules: Rules) -> tuple[list[Finding], set[str]]:
    """Scan ``[(code, scope, name)]`` and the learner's helpers they call."""
    findings: list[Finding] = []
    used: set[str] = set()
    seen: set[int] = set()
    todo = list(todo)
    while todo:
        code, scope, name = todo.pop()
        if id(code) in seen:
            continue
        seen.add(id(code))
        for inner in code_objects(code):
            _scan_code(code, inner, scope, name, rules, findings, used, todo)
    return findings, used


def _scan_code(top, code, scope, fn_name, rules: Rules, findings, used, todo) -> None:
    owner = UNKNOWN  # what the last name or attribute loaded stands for
    for ins in dis.get_instructions(code):
        line = ins.positions.lineno if ins.positions and ins.positions.lineno else None
        where = (f"line {line - top.co_firstlineno + 1} of {fn_name}" if line is not None
                 else f"in {fn_name}")
        if ins.opname == "BINARY_OP" and ins.argrepr in ("@", "@="):
            if rules.matmul_operator:
                findings.append(Finding("the @ operator", where))
            owner = UNKNOWN
            continue
        if ins.opname == "FOR_ITER" and rules.loops:
            kind = "a comprehension" if code.co_name.startswith("<") else "a for loop"
            findings.append(Finding(kind, where))
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLOSURE"):
            name = ins.argval
            ref = scope.resolve(name, deref=ins.opname in ("LOAD_DEREF", "LOAD_CLOSURE"))
            _note(name, ref, rules, findings, used, where, todo, own_ok=True)
            owner = ref
            continue
        if ins.opname in ("LOAD_ATTR", "LOAD_METHOD"):
            name = ins.argval
            ref = owner.attribute(name) if owner is not UNKNOWN else UNKNOWN
            _note(name, ref, rules, findings, used, where, todo, own_ok=False)
            owner = ref
            continue
        owner = UNKNOWN


def _note(name, ref: Ref, rules: Rules, findings, used, where, todo, own_ok: bool) -> None:
    if name in rules.required:
        used.add(name)
    own = own_ok and bool(ref.own)
    if name in rules.names and not own:
        findings.append(Finding(rules.names[name], where))
    else:
        label = _forbidden(ref, rules)
        if label:
            findings.append(Finding(f"{label} (as `{name}`)", where))
    if own:
        todo.extend(ref.own)


# ----------------------------------------------------------------------------- from source

def _dotted(node) -> str:
    """``a.b.c`` for a chain of attributes on a name, else ""."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def python_source(cell_source: str) -> str:
    """A notebook cell as plain Python: IPython's magics become ordinary calls."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:  # pragma: no cover (IPython comes with the kernel)
        return cell_source
    try:
        return TransformerManager().transform_cell(cell_source)
    except Exception:  # noqa: BLE001 (a cell IPython cannot read either)
        return cell_source


class SourceReader:
    """Reads a submission's code cells in order, without running them, into the names
    they define (see :class:`SourceScope`)."""

    def __init__(self):
        self.paths: dict[str, str] = {}
        self.codes: dict[str, list] = {}
        self.trees: list[ast.Module] = []
        self.problems: list[str] = []

    def read(self, source: str, label: str) -> None:
        text = python_source(source)
        try:
            tree = ast.parse(text)
            module_code = compile(text, label, "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as exc:
            self.problems.append(f"{label}: {type(exc).__name__}: {exc}")
            return
        self.trees.append(tree)
        consts = {}
        for const in code_objects(module_code):
            consts.setdefault((const.co_name, const.co_firstlineno), const)
        for node in tree.body:  # in order: a later definition replaces an earlier one
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._define(node.name, [_code_at(consts, node)])
            elif isinstance(node, ast.ClassDef):
                methods = [_code_at(consts, n) for n in node.body
                           if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
                self._define(node.name, methods)
            else:
                self._bind(node)

    def _define(self, name: str, codes: list) -> None:
        self.codes[name] = [c for c in codes if c is not None]
        self.paths.pop(name, None)

    def _bind(self, node) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self._path(alias.asname, alias.name)
                else:
                    top = alias.name.split(".")[0]
                    self._path(top, top)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name != "*":
                    self._path(alias.asname or alias.name, f"{node.module}.{alias.name}")
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            if isinstance(target, ast.Name):
                dotted = _dotted(value)
                root = dotted.split(".")[0] if dotted else ""
                if root and (root in self.paths or root in self.codes):
                    if root in self.codes and dotted == root:
                        self.codes[target.id] = self.codes[root]
                    elif root in self.paths:
                        self._path(target.id, self.paths[root] + dotted[len(root):])
                else:
                    self.paths.pop(target.id, None)
                    self.codes.pop(target.id, None)

    def _path(self, name: str, path: str) -> None:
        self.paths[name] = path
        self.codes.pop(name, None)

    def scope(self) -> SourceScope:
        return SourceScope(dict(self.paths), {k: list(v) for k, v in self.codes.items()})


def _code_at(consts: dict, node) -> types.CodeType | None:
    line = node.lineno
    if node.decorator_list:
        line = min([line] + [d.lineno for d in node.decorator_list])
    return consts.get((node.name, line)) or consts.get((node.name, node.lineno))


def scan_source(scope: SourceScope, name: str, rules: Rules) -> tuple[list[Finding], set[str]]:
    """Forbidden uses in the learner's ``name`` as the source defines it."""
    codes = scope.codes.get(name, [])
    return scan_codes([(code, scope, code.co_name) for code in codes], rules)


# ----------------------------------------------------------------------------- messages

def shortcut_message(fn_name: str, findings: list[Finding], rules: Rules) -> str:
    uses = "\n".join(f"  - {f}" for f in findings)
    why = f"\n{rules.why}" if rules.why else ""
    return f"{fn_name} uses something this exercise asks you to do by hand:\n{uses}{why}"


def missing_required_message(fn_name: str, rules: Rules) -> str:
    wanted = " or ".join(rules.required.values())
    return (f"{fn_name} should use {wanted}, and it does not call it."
            f"{(' ' + rules.why) if rules.why else ''}")
