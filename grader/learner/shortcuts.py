"""Finding forbidden shortcuts in a learner's function by reading its bytecode.

Some exercises ask for an implementation by hand: the loop versions of a matrix product
may not use ``@`` or ``np.matmul``; attention written by hand may not call the library's
attention. Reading the source text would be fooled by comments, strings and
aliases (``from numpy import matmul as mm``), so this module walks compiled code:

* the ``@`` operator is a ``BINARY_OP`` instruction;
* a global name is resolved and compared with the forbidden objects, so aliases are
  caught; an attribute (``np.dot``, ``A.dot``) is caught by name, and by what it is when
  its owner can be resolved; ``getattr(obj, "name")`` with a name the source spells out
  (a string, strings joined, a loop over strings) is read as ``obj.name``;
* ``for`` loops and comprehensions (``FOR_ITER``), ``while`` loops (a jump back),
  recursion and the library's loops over a Python function (``map``,
  ``functools.reduce``, ``np.vectorize``, ...) are caught where loops are forbidden, and
  count as the loop an exercise requires (:data:`LOOP`);
* nested functions, lambdas and comprehensions are scanned too, and so is the learner's
  own code that the function reaches: helper functions, classes (their bodies and every
  method, so a callable object's ``__call__``), the expressions module-level names are
  bound to (``f = make()``), and the decorators and default values of definitions;
* a required name counts only where the code calls it (``unused = np.einsum`` does not).

What the source cannot show is a finding of its own (:data:`DYNAMIC`): attribute names
built at run time (``getattr`` with a computed name), ``exec``, ``eval``, ``compile``,
``__import__``, ``importlib``, ``globals()``, ``vars()``, ``__dict__``, replacing a
function's ``__code__``, code imported from a module of the submission's own. Where an
exercise constrains how it is done (:attr:`Rules.constrains`), such a use in the code the
answer reaches costs that constraint, and so does one anywhere in the notebook that can
rebind names (``exec``, ``globals()``, ...): the scan can no longer say what runs. The
grader also notes each for a person (``grader.grading.notebook.integrity``).

Names are resolved in one of two ways, by a scope:

* :class:`RuntimeScope`: a live function's globals, compared by identity with the
  forbidden objects (in a notebook, where the function exists);
* :class:`SourceScope`: the learner's source, compiled but never run, with imports,
  definitions (inside ``if``, ``try``, ``with`` and other blocks too: every definition a
  name may have is scanned) and assignments read from it (the grader, which never trusts
  what a learner's kernel says about itself). :func:`scan_source` scans a name in one.
"""
from __future__ import annotations

import ast
import dis
import functools
import inspect
import linecache
import sys
import types
from dataclasses import dataclass, field
from enum import StrEnum

_MISSING = object()
# A required "name" that no Python name can be (a keyword): the answer must loop, whichever
# way (for, while, a comprehension, recursion, map, ...).
LOOP = "for"


class Code(StrEnum):
    """What a code object scanned belongs to: a function, or a class's method."""

    DEF = "def"
    CLASS = "class"


@dataclass(frozen=True)
class Rules:
    """What an exercise forbids or requires.

    ``names`` maps a function or attribute name to how to call it in the message, for
    example ``{"matmul": "np.matmul"}``. ``objects`` are dotted paths of callables
    forbidden under any name (``"numpy.matmul"``). ``required`` are names at least one of
    which the function must call; the name :data:`LOOP` stands for any loop (``{LOOP: "a
    Python loop over the heads"}``: the answer must have one).
    """

    names: dict = field(default_factory=dict)
    objects: tuple = ()
    matmul_operator: bool = False
    loops: bool = False
    required: dict = field(default_factory=dict)
    why: str = ""

    @property
    def constrains(self) -> bool:
        """Whether the rules say how the answer is written (a name, an operator, loops),
        beyond not calling the course's own code: where they do, code the scan cannot
        read costs the constraint."""
        return bool(self.names or self.matmul_operator or self.loops or self.required
                    or any(not p.startswith("grader.") for p in self.objects))

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
    where: str  # "line 4 of <the answer's name>"
    key: tuple = field(default=(), compare=False)  # where exactly, to say each use once

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


# ----------------------------------------------------------------------------- what the source cannot show

# Names whose use means the code does something the source does not spell out. Those in
# REBINDS can also rebind a name (the graded one included) where no scan sees it, so
# they count wherever they are in a notebook, not only in the code an answer reaches.
DYNAMIC = {
    "exec": "exec, which runs code built at run time",
    "eval": "eval, which runs code built at run time",
    "compile": "compile, which builds code at run time",
    "__import__": "__import__, which imports a module named at run time",
    "importlib": "importlib, which imports a module named at run time",
    "import_module": "importlib.import_module, which imports a module named at run time",
    "globals": "globals(), which reads or rebinds names at run time",
    "locals": "locals(), which reads or rebinds names at run time",
    "vars": "vars(), which reads or rebinds attributes by names built at run time",
    "__dict__": "__dict__, which reads or rebinds attributes by names built at run time",
    "__builtins__": "__builtins__, which reads or rebinds the built-in names",
    "builtins": "the builtins module, which reads or rebinds the built-in names",
    "__main__": "the __main__ module, which rebinds the notebook's names",
    "get_ipython": "get_ipython(), which runs code or rebinds names through IPython",
    "_getframe": "sys._getframe, which reads or rebinds a caller's names",
    "currentframe": "inspect.currentframe, which reads or rebinds a caller's names",
    "f_globals": "a frame's f_globals, which reads or rebinds names",
    "f_locals": "a frame's f_locals, which reads or rebinds names",
    "FunctionType": "types.FunctionType, which builds a function from code objects",
    "CodeType": "types.CodeType, which builds code at run time",
    "ctypes": "ctypes, which changes objects behind Python's back",
    "attrgetter": "operator.attrgetter, which reads an attribute named at run time",
    "methodcaller": "operator.methodcaller, which calls a method named at run time",
    "__getattribute__": "__getattribute__, which reads an attribute named at run time",
}
REBINDS = {"exec", "eval", "compile", "__import__", "importlib", "import_module", "globals",
           "locals", "vars", "__dict__", "__builtins__", "builtins", "__main__", "get_ipython",
           "_getframe", "currentframe", "f_globals", "f_locals", "FunctionType", "CodeType",
           "ctypes"}
# Built-in functions: dynamic as names, never as attributes (``module.eval()``,
# ``re.compile`` are ordinary methods).
BUILTIN_ONLY = {"exec", "eval", "compile", "__import__", "globals", "locals", "vars"}
GETATTRS = {"getattr", "setattr", "hasattr", "delattr"}
# Attributes whose assignment changes what a function or object runs.
SWAPS = {"__code__", "__call__", "__class__", "__globals__", "__dict__", "__defaults__",
         "__kwdefaults__", "__getattr__", "__getattribute__", "__closure__"}
# Loops run by the library on the learner's Python function: loops all the same.
LOOP_NAMES = {"map": "map", "filter": "filter", "reduce": "functools.reduce",
              "accumulate": "an accumulate", "starmap": "itertools.starmap",
              "vectorize": "np.vectorize", "frompyfunc": "np.frompyfunc",
              "apply_along_axis": "np.apply_along_axis", "apply_over_axes": "np.apply_over_axes",
              "fromiter": "np.fromiter"}
# Where a module may come from: the standard library and what the course installs, never a
# file handed in with the submission (which the check does not read).
LIBRARIES = {"numpy", "torch", "scipy", "matplotlib", "courseware", "grader", "IPython",
             "ipywidgets", "tqdm", "mpl_toolkits"} | set(getattr(sys, "stdlib_module_names", ()))


def _getattr_label(name: str) -> str:
    return (f"{name} with an attribute name built at run time, which the check cannot read "
            f"(spell the attribute out: obj.name)")


# ----------------------------------------------------------------------------- scopes

@dataclass
class Ref:
    """What a name stands for: a live object, or (from source) dotted paths (one per
    binding the source may make); ``own`` is the learner's own code reached through it
    (a function, a class's body and methods, the expression a name is bound to), which is
    scanned too, as ``[(code, scope, label, kind)]``."""

    value: object = _MISSING
    paths: tuple = ()
    own: list = field(default_factory=list)

    def attribute(self, name: str) -> Ref:
        if self.value is not _MISSING:
            try:
                return Ref(getattr(self.value, name, _MISSING))
            except Exception:  # noqa: BLE001 (a learner's object whose attribute raises)
                return UNKNOWN
        return Ref(paths=tuple(f"{p}.{name}" for p in self.paths))


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

    def source(self, filename: str) -> str:
        return "".join(linecache.getlines(filename))

    def value_ref(self, value) -> Ref:
        """What a value the code reaches stands for, as a name bound to it would."""
        return self._ref(value)

    def _ref(self, value) -> Ref:
        own = []
        if isinstance(value, types.FunctionType):
            if value.__globals__ is self.fn.__globals__:
                own = [(value.__code__, RuntimeScope(value), value.__name__, Code.DEF)]
        elif _learners_class(value, self.fn.__globals__):
            klass = value if inspect.isclass(value) else type(value)
            own = [(f.__code__, RuntimeScope(f), f.__name__, Code.CLASS) for f in functions_of(klass)]
        return Ref(value, own=own)


def _learners_class(value, namespace: dict) -> bool:
    """Whether ``value`` is a class defined in ``namespace`` (the learner's), or an object
    of one (a callable object)."""
    klass = value if inspect.isclass(value) else type(value)
    try:
        return klass.__module__ == namespace.get("__name__") and klass.__module__ != "builtins"
    except Exception:  # noqa: BLE001 (a class whose __module__ is not a plain attribute)
        return False


class SourceScope:
    """Names as the learner's source binds them, never run: ``paths`` (imports and
    ``name = module.attr``) and ``codes`` (the code of the functions and classes it
    defines and of the expressions it binds names to), each a list, one entry per binding
    the source may make; ``sources``: each cell's text by label; ``rebinds``: uses anywhere
    in the notebook of what can rebind a name unseen (``exec``, ``globals()``, ...)."""

    def __init__(self, paths: dict[str, list], codes: dict[str, list],
                 sources: dict[str, str] | None = None, rebinds: list | None = None):
        self.paths = paths
        self.codes = codes  # name -> [(code, kind)]
        self.sources = sources or {}
        self.rebinds = rebinds or []

    def resolve(self, name: str, deref: bool = False) -> Ref:  # noqa: ARG002
        codes, paths = self.codes.get(name, []), self.paths.get(name, [])
        if codes or paths:
            return Ref(paths=tuple(paths), own=[(code, self, name, kind) for code, kind in codes])
        import builtins

        return Ref(paths=(f"builtins.{name}",)) if hasattr(builtins, name) else UNKNOWN

    def source(self, filename: str) -> str:
        return self.sources.get(filename, "")


# ----------------------------------------------------------------------------- the scan

def functions_of(obj) -> list[types.FunctionType]:
    """The plain functions behind ``obj``: itself, a partial's function, a class's
    methods, or a callable object's class's methods."""
    import functools

    while isinstance(obj, functools.partial):
        obj = obj.func
    if isinstance(obj, types.MethodType):
        obj = obj.__func__
    if isinstance(obj, types.FunctionType):
        return [obj]
    if not inspect.isclass(obj):
        if isinstance(obj, (types.BuiltinFunctionType, types.ModuleType)):
            return []
        obj = type(obj)  # a callable object: its __call__ and every other method
    found = []
    for klass in obj.__mro__:
        module = getattr(klass, "__module__", "") or ""
        if module == "builtins" or module.split(".")[0] in ("torch", "numpy"):
            continue
        for value in vars(klass).values():
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if isinstance(value, property):
                value = value.fget
            if isinstance(value, types.FunctionType):
                found.append(value)
    return found


def code_objects(code: types.CodeType):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from code_objects(const)


# Where a library keeps the same function under other names (torch.special.softmax is
# torch.softmax's twin): a live object found there under a forbidden name is that name.
NAMESAKES = ("numpy", "numpy.linalg", "torch", "torch.special", "torch.nn.functional",
             "torch.linalg", "scipy.special")


def _namesake(value, names) -> str:
    """The forbidden name ``value`` goes by in one of :data:`NAMESAKES`, or ""."""
    for module in NAMESAKES:
        space = sys.modules.get(module)
        if space is None:
            continue
        for name in names:
            try:
                if getattr(space, name, _MISSING) is value:
                    return name
            except Exception:  # noqa: BLE001 (a lazy attribute that fails to load)
                continue
    return ""


def _forbidden(ref: Ref, rules: Rules) -> str:
    """A label if ``ref`` is one of the forbidden objects, else ""."""
    if ref.value is not _MISSING:
        for path in rules.objects:
            obj = resolve_path(path)
            if obj is not _MISSING and ref.value is obj:
                return getattr(obj, "__qualname__", getattr(obj, "__name__", path))
        return ""
    for path in ref.paths:
        if path in rules.objects:
            return path.rsplit(".", 1)[-1]
    return ""


def _unread(ref: Ref) -> str:
    """The module of the submission's own that ``ref`` comes from (which the check does
    not read), or ""."""
    for path in ref.paths:
        root = path.split(".")[0]
        if root and root not in LIBRARIES:
            return root
    return ""


def scan(obj, rules: Rules) -> tuple[list[Finding], set[str]]:
    """Forbidden uses in a live ``obj`` (function, class or callable object), and the
    required names it calls: in its code, and in the values its code reaches through no
    name the code loads (a parameter's default, a class attribute read as ``self.x``),
    which the source scan at grading reads where they are written."""
    kind = Code.DEF if isinstance(obj, types.FunctionType) else Code.CLASS
    functions = functions_of(obj)
    return scan_codes([(fn.__code__, RuntimeScope(fn), fn.__name__, kind) for fn in functions],
                      rules, bound=list(_bound_values(obj, functions)))


def _bound_values(obj, functions) -> list:
    """``(name, value, scope, where)`` for each value bound where the code finds it by a
    local name or an attribute of ``self``: the defaults of every function, and the
    attributes of the learner's classes that are not functions."""
    for fn in functions:
        code = fn.__code__
        positional = code.co_varnames[:code.co_argcount]
        defaults = fn.__defaults__ or ()
        named = list(zip(positional[len(positional) - len(defaults):], defaults))
        named += list((fn.__kwdefaults__ or {}).items())
        for name, value in named:
            yield name, value, RuntimeScope(fn), f"the default of `{name}` in {fn.__name__}"
    klass = obj if inspect.isclass(obj) else None
    if klass is None and functions and not isinstance(obj, types.FunctionType) \
            and not isinstance(obj, types.MethodType):
        klass = type(obj)
    if klass is None or not functions:
        return
    for k in klass.__mro__:
        module = getattr(k, "__module__", "") or ""
        if module == "builtins" or module.split(".")[0] in ("torch", "numpy"):
            continue
        for name, value in vars(k).items():
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if name.startswith("__") or isinstance(value, (types.FunctionType, property)):
                continue
            yield name, value, RuntimeScope(functions[0]), f"the attribute `{name}` of {k.__name__}"


@dataclass
class _Scan:
    rules: Rules
    findings: list = field(default_factory=list)
    used: set = field(default_factory=set)
    todo: list = field(default_factory=list)
    calls: dict = field(default_factory=dict)  # id(def code) -> {id(def code) it calls: where}
    keys: set = field(default_factory=set)

    def add(self, finding: Finding) -> None:
        key = finding.key or (finding.what, finding.where)
        if key not in self.keys:
            self.keys.add(key)
            self.findings.append(finding)


def scan_codes(todo: list, rules: Rules, bound: list = ()) -> tuple[list[Finding], set[str]]:
    """Scan ``[(code, scope, label, kind)]`` and the learner's code they reach, and the
    values in ``bound`` (:func:`_bound_values`) as names the code loads: they can be
    forbidden, never the call a rule requires (that must be a call in the code)."""
    state = _Scan(rules, todo=list(todo))
    for name, value, scope, where in bound:
        top = scope.fn.__code__
        _note(name, scope.value_ref(value), False, False, where, (where,), top, Code.DEF, state)
    seen: set[int] = set()
    while state.todo:
        code, scope, label, kind = state.todo.pop()
        if id(code) in seen:
            continue
        seen.add(id(code))
        for inner in code_objects(code):
            _scan_code(code, inner, scope, label, kind, state)
    if rules.loops or LOOP in rules.required:
        _recursion(state)
    return state.findings, state.used


def _recursion(state: _Scan) -> None:
    """A learner's function that reaches itself again through its calls is a loop."""
    done = set()
    for node in list(state.calls):
        if node not in done:
            where = _cycle(state.calls, node, done)
            if where:
                _loop(state, Finding("recursion (a function that calls itself again)", where))
                return


def _cycle(calls: dict, start, done: set) -> str:
    """Where a call closes a cycle among the calls reachable from ``start``, or ""; a walk
    with a stack of its own, not Python's: a learner's chain of calls can be long."""
    active, stack = {start}, [(start, iter(calls.get(start, {}).items()))]
    while stack:
        node, edges = stack[-1]
        for callee, where in edges:
            if callee in active:
                return where
            if callee not in done:
                active.add(callee)
                stack.append((callee, iter(calls.get(callee, {}).items())))
                break
        else:
            stack.pop()
            active.discard(node)
            done.add(node)
    return ""


def _where(top, code, ins, label: str) -> tuple[str, tuple]:
    line = ins.positions.lineno if ins.positions and ins.positions.lineno else None
    key = (code.co_filename, line, ins.positions.col_offset if ins.positions else None, ins.offset)
    if line is None:
        return f"in {label}", key
    if top.co_name in ("<module>", "<expression>") or top.co_name.startswith("<"):
        return f"line {line} of {code.co_filename}", key
    return f"line {line - top.co_firstlineno + 1} of {label}", key


def _backward_loops(code) -> list:
    """The first instruction of each ``while`` loop: jumps back that do not go to a
    ``FOR_ITER`` (a ``for`` loop's own), merged where their ranges overlap."""
    instructions = list(dis.get_instructions(code))
    at = {ins.offset: ins for ins in instructions}
    spans = []
    for ins in instructions:
        if "BACKWARD" in ins.opname and isinstance(ins.argval, int):
            target = at.get(ins.argval)
            if target is not None and target.opname != "FOR_ITER":
                spans.append((ins.argval, ins.offset))
    spans.sort()
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [at[start] for start, _ in merged]


def _loop(state: _Scan, finding: Finding, runs: bool = True) -> None:
    """A loop found: a finding where loops are forbidden, the required loop where one is
    required and the loop ``runs`` (``map`` named but never called runs none)."""
    if state.rules.loops:
        state.add(finding)
    if LOOP in state.rules.required and runs:
        state.used.add(LOOP)


def _scan_code(top, code, scope, label: str, kind: str, state: _Scan) -> None:
    rules = state.rules
    if rules.loops or LOOP in rules.required:
        for ins in _backward_loops(code):
            _loop(state, Finding("a while loop", _where(top, code, ins, label)[0]))
    calls = _GetattrCalls(scope, code)
    owner = UNKNOWN  # what the last name or attribute loaded stands for
    null = False  # the chain being loaded is called (a NULL was pushed for the call)
    instructions = list(dis.get_instructions(code))
    for i, ins in enumerate(instructions):
        where, key = _where(top, code, ins, label)
        op = ins.opname
        following = instructions[i + 1].opname if i + 1 < len(instructions) else ""
        if op == "BINARY_OP" and ins.argrepr in ("@", "@="):
            if rules.matmul_operator:
                state.add(Finding("the @ operator", where))
            owner, null = UNKNOWN, False
            continue
        if op == "FOR_ITER":
            what = "a comprehension" if code.co_name.startswith("<") else "a for loop"
            _loop(state, Finding(what, where))
        if op in ("STORE_ATTR", "DELETE_ATTR") and ins.argval in SWAPS and rules.constrains:
            state.add(Finding(f"assigning {ins.argval}, which changes what runs where the "
                              f"check cannot read it", where, key))
        if op == "PUSH_NULL":
            owner, null = UNKNOWN, True
            continue
        if op in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLOSURE", "LOAD_ATTR",
                  "LOAD_METHOD", "LOAD_FAST"):
            name = ins.argval
            attribute = op in ("LOAD_ATTR", "LOAD_METHOD")
            if op == "LOAD_FAST":
                ref = UNKNOWN
            elif attribute:
                ref = owner.attribute(name) if owner is not UNKNOWN else UNKNOWN
            else:
                ref = scope.resolve(name, deref=op in ("LOAD_DEREF", "LOAD_CLOSURE"))
            null = (null and attribute) or "NULL" in ins.argrepr
            called = op == "LOAD_METHOD" or "NULL|self" in ins.argrepr or (
                null and following not in ("LOAD_ATTR", "LOAD_METHOD"))
            if op != "LOAD_FAST":
                _note(name, ref, attribute, called, where, key, top, kind, state)
                if name in GETATTRS or _is_builtin(ref, GETATTRS):
                    _getattr_use(name, ins, calls, scope, where, key, state)
            owner = ref
            continue
        owner, null = UNKNOWN, False


def _is_builtin(ref: Ref, names) -> bool:
    import builtins

    if ref.value is not _MISSING:
        return any(ref.value is getattr(builtins, n) for n in names)
    return any(p in {f"builtins.{n}" for n in names} for p in ref.paths)


def _dynamic_label(name: str, ref: Ref, attribute: bool = False) -> str:
    if name in DYNAMIC and not (attribute and name in BUILTIN_ONLY):
        return DYNAMIC[name]
    if _is_builtin(ref, ("exec", "eval", "compile", "__import__", "globals", "locals", "vars")):
        return DYNAMIC[getattr(ref.value, "__name__", "") or ref.paths[0].rsplit(".", 1)[-1]]
    value = ref.value
    if value is not _MISSING:
        for path in ("importlib.import_module", "operator.attrgetter", "operator.methodcaller"):
            if value is resolve_path(path) and value is not _MISSING:
                return DYNAMIC[path.rsplit(".", 1)[-1]]
        if isinstance(value, types.ModuleType) and value.__name__ in DYNAMIC:
            return DYNAMIC[value.__name__]
    for path in ref.paths:
        parts = path.split(".")
        if parts[-1] in DYNAMIC and (parts[-1] not in BUILTIN_ONLY or parts[0] == "builtins"):
            return DYNAMIC[parts[-1]]
        if parts[0] in ("importlib", "ctypes", "__main__") or parts == ["builtins"]:
            return DYNAMIC[parts[0]]
        if parts[:2] == ["sys", "modules"]:
            return "sys.modules, which reads or rebinds modules by names built at run time"
    if ref.paths == () and ref.value is not _MISSING and ref.value is sys.modules:
        return "sys.modules, which reads or rebinds modules by names built at run time"
    return ""


def _note(name, ref: Ref, attribute: bool, called: bool, where, key, top, kind,
          state: _Scan) -> None:
    rules = state.rules
    leaf = {p.rsplit(".", 1)[-1] for p in ref.paths}
    if ref.value is not _MISSING:
        leaf.add(getattr(ref.value, "__name__", None))
        leaf.add(_namesake(ref.value, list(rules.names) + list(LOOP_NAMES)) or None)
        library = (getattr(type(ref.value), "__module__", "") or "").split(".")[0]
        if library in ("numpy", "torch", "scipy"):
            leaf.add(type(ref.value).__name__)  # an instance: np.vectorize(f) is a vectorize
    if called:
        state.used.update(({name} | leaf) & set(rules.required))
    own = not attribute and bool(ref.own)
    label = _forbidden(ref, rules)
    named = [n for n in [name, *sorted(leaf - {name, None})] if n in rules.names]
    if named and not (own and not ref.paths):
        state.add(Finding(rules.names[named[0]] + (f" (as `{name}`)" if named[0] != name else ""),
                          where))
    elif label:
        state.add(Finding(f"{label} (as `{name}`)", where))
    elif (name in LOOP_NAMES or leaf & set(LOOP_NAMES)) and not (own and not ref.paths):
        what = LOOP_NAMES.get(name) or LOOP_NAMES[next(iter(leaf & set(LOOP_NAMES)))]
        _loop(state, Finding(f"{what}, a loop over your function", where), runs=called)
    if rules.constrains:
        dynamic = _dynamic_label(name, ref, attribute)
        if dynamic:
            state.add(Finding(dynamic, where, key))
        module = _unread(ref) if not attribute else ""
        if module:
            state.add(Finding(f"code imported from `{module}`, a module of the submission's own "
                              f"that the check does not read", where, key))
    if own:
        state.todo.extend(ref.own)
        if kind == Code.DEF:
            calls = state.calls.setdefault(id(top), {})
            for code, _scope, _label, callee_kind in ref.own:
                if callee_kind == Code.DEF:
                    calls.setdefault(id(code), where)


# ----------------------------------------------------------------------------- getattr

class _GetattrCalls:
    """The ``getattr``-like calls of one code object, read from its source: which
    attribute names each may read, when the source spells them out."""

    def __init__(self, scope, code):
        self.scope, self.code = scope, code
        self._index: dict | None = None

    def call_at(self, ins):
        if self._index is None:
            self._index = {}
            tree = _tree(self.scope.source(self.code.co_filename))
            if tree is not None:
                for node in ast.walk(tree):
                    if isinstance(node, ast.Call):
                        f = node.func
                        self._index[(f.lineno, f.col_offset, f.end_lineno, f.end_col_offset)] = \
                            (node, tree)
        p = ins.positions
        if p is None:
            return None
        return self._index.get((p.lineno, p.col_offset, p.end_lineno, p.end_col_offset))


def _tree(text: str):
    if not text:
        return None
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def _folded(node) -> str | None:
    """The string ``node`` always is (a literal, literals joined with + or an f-string of
    literals), or None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _folded(node.left), _folded(node.right)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.JoinedStr):
        parts = [_folded(v) for v in node.values]
        return "".join(parts) if all(p is not None for p in parts) else None
    return None


def _static_names(node, tree) -> set[str] | None:
    """The attribute names ``node`` (getattr's second argument) can be: a folded string,
    or a loop variable that only ever runs over literal strings; None if unknown."""
    text = _folded(node)
    if text is not None:
        return {text}
    if not isinstance(node, ast.Name):
        return None
    scope = _enclosing(tree, node) or tree
    values: set[str] = set()
    stores = 0
    for other in ast.walk(scope):
        if isinstance(other, ast.Name) and other.id == node.id and isinstance(other.ctx, ast.Store):
            stores += 1
        if isinstance(other, (ast.For, ast.comprehension)):
            items = _loop_values(other.target, other.iter, node.id)
            if items is not None:
                values.update(items)
                stores -= 1
    return values if values and stores == 0 else None


def _loop_values(target, iterable, name: str) -> list[str] | None:
    """The strings a loop over literals gives ``name`` (``for n in ("a", "b")``, or
    ``for n, x in (("a", x1), ("b", x2))``), or None."""
    if not isinstance(iterable, (ast.Tuple, ast.List, ast.Set)):
        return None
    if isinstance(target, ast.Name) and target.id == name:
        items = [_folded(e) for e in iterable.elts]
    elif isinstance(target, ast.Tuple) and any(isinstance(t, ast.Name) and t.id == name
                                               for t in target.elts):
        k = next(i for i, t in enumerate(target.elts) if isinstance(t, ast.Name) and t.id == name)
        items = [_folded(e.elts[k]) if isinstance(e, ast.Tuple) and len(e.elts) > k else None
                 for e in iterable.elts]
    else:
        return None
    return items if items and all(i is not None for i in items) else None


def _enclosing(tree, node):
    for parent in ast.walk(tree):
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if any(child is node for child in ast.walk(parent)):
                best = parent
                inner = _enclosing_in(parent, node)
                return inner or best
    return None


def _enclosing_in(fn, node):
    for child in ast.iter_child_nodes(fn):
        for parent in ast.walk(child):
            if parent is not fn and isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                        ast.Lambda)):
                if any(c is node for c in ast.walk(parent)):
                    return _enclosing_in(parent, node) or parent
    return None


def _getattr_use(name: str, ins, calls: _GetattrCalls, scope, where, key, state: _Scan) -> None:
    """``getattr(obj, "name")`` read as ``obj.name``; a name the source does not spell out
    is a finding where the rules constrain the answer."""
    rules = state.rules
    found = calls.call_at(ins)
    if found is None and not calls.scope.source(calls.code.co_filename):
        return  # a live function whose source is not at hand: the grader's scan reads it
    names = None
    owner = UNKNOWN
    if found is not None:
        node, tree = found
        if len(node.args) >= 2 and not node.keywords:
            names = _static_names(node.args[1], tree)
            dotted = _dotted(node.args[0])
            if dotted:
                parts = dotted.split(".")
                owner = scope.resolve(parts[0])
                for part in parts[1:]:
                    owner = owner.attribute(part)
    if names is None:
        if rules.constrains:
            state.add(Finding(_getattr_label(name), where, key))
        return
    for attr in names:
        _note(attr, owner.attribute(attr) if owner is not UNKNOWN else UNKNOWN, True, True,
              where, key, None, "", state)


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


@functools.lru_cache(maxsize=1024)
def python_source(cell_source: str) -> str:
    """A notebook cell as plain Python: IPython's magics become ordinary calls. Kept for
    the cells read again (every scan of a notebook reads each cell, and the cells given in
    the release are the same in every submission)."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:  # pragma: no cover (IPython comes with the kernel)
        return cell_source
    try:
        return _timed_code(TransformerManager().transform_cell(cell_source))
    except Exception:  # noqa: BLE001 (a cell IPython cannot read either)
        return cell_source


TIMING_MAGICS = {"time", "timeit"}
TIMEIT_VALUES = {"-n", "-r", "-p"}  # %timeit's options that take a value


def _magic_code(call) -> str | None:
    """The Python that ``get_ipython().run_line_magic("time"/"timeit", "...")`` or
    ``run_cell_magic(...)`` runs, if it is a timing magic with literal text."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr in ("run_line_magic", "run_cell_magic")
            and isinstance(call.func.value, ast.Call) and _dotted(call.func.value.func) == "get_ipython"
            and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in call.args)
            and call.args and call.args[0].value in TIMING_MAGICS and not call.keywords):
        return None
    args = [a.value for a in call.args]
    if call.func.attr == "run_cell_magic":
        return args[2] if len(args) == 3 else None
    text = args[1].strip()
    while text.startswith("-"):  # %timeit's options come before the code
        option, _, text = text.partition(" ")
        if option in TIMEIT_VALUES:
            _, _, text = text.lstrip().partition(" ")
        text = text.lstrip()
    return text


def _timed_code(text: str) -> str:
    """``text`` with each timing magic (``%time``, ``%timeit``, ``%%time``, ``%%timeit``)
    replaced by the code it times, so that the source a check reads is the code that
    runs (a timed line can define or rebind names like any other)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    lines = text.splitlines()
    for node in reversed(tree.body):
        code = _magic_code(node.value) if isinstance(node, ast.Expr) else None
        if code is None:
            continue
        start, end = node.lineno - 1, node.end_lineno or node.lineno
        indent = lines[start][:len(lines[start]) - len(lines[start].lstrip())]
        lines[start:end] = [indent + line for line in code.splitlines()] or [indent + "pass"]
    return "\n".join(lines) + ("\n" if text.endswith("\n") else "")


# Line magics that only set up the notebook (how figures show, reloading modules): the
# course's own cells use them, and they run no code of the learner's.
SETUP_MAGICS = {"matplotlib", "autoreload", "load_ext", "config"}


def _setup_magic_lines(text: str) -> set[int]:
    """Lines holding only ``get_ipython().run_line_magic("<setup magic>", "<literal>")``."""
    tree = _tree(text)
    lines = set()
    for node in (tree.body if tree is not None else []):
        call = node.value if isinstance(node, ast.Expr) else None
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
                and call.func.attr == "run_line_magic" and isinstance(call.func.value, ast.Call) \
                and _dotted(call.func.value.func) == "get_ipython" and not call.func.value.args \
                and len(call.args) == 2 and all(_folded(a) is not None for a in call.args) \
                and _folded(call.args[0]) in SETUP_MAGICS and not call.keywords:
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def dynamic_uses(code: types.CodeType, text: str) -> list[Finding]:
    """Every use in ``code`` (a cell, compiled from ``text``) of what the source cannot
    show (:data:`DYNAMIC`, ``getattr`` with a name built at run time, assigning
    ``__code__`` and the like, an import of a module of the submission's own), each with
    its line; a finding's ``key`` says whether it can rebind names (``"rebinds"``)."""
    scope = SourceScope({}, {}, {code.co_filename: text})
    found: list[Finding] = []
    setup = _setup_magic_lines(text)
    for inner in code_objects(code):
        calls = _GetattrCalls(scope, inner)
        for ins in dis.get_instructions(inner):
            line = ins.positions.lineno if ins.positions and ins.positions.lineno else 0
            if inner is code and line in setup:
                continue
            where = f"line {line}"
            if ins.opname in ("STORE_ATTR", "DELETE_ATTR") and ins.argval in SWAPS:
                found.append(Finding(f"assigning {ins.argval}", where, ("rebinds", line)))
            if ins.opname == "IMPORT_NAME":
                root = str(ins.argval).split(".")[0]
                if root in DYNAMIC:
                    found.append(Finding(DYNAMIC[root], where, ("rebinds", line)))
                elif root and root not in LIBRARIES:
                    found.append(Finding(f"an import of `{root}`, a module of the submission's "
                                         f"own that the check does not read", where,
                                         ("reads", line)))
            if ins.opname not in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_ATTR", "LOAD_METHOD",
                                  "IMPORT_FROM"):
                continue
            name = ins.argval
            attribute = ins.opname in ("LOAD_ATTR", "LOAD_METHOD")
            if name in DYNAMIC and not (attribute and name in BUILTIN_ONLY):
                kind = "rebinds" if name in REBINDS else "reads"
                found.append(Finding(DYNAMIC[name], where, (kind, line)))
            elif name == "modules" and ins.opname in ("LOAD_ATTR", "LOAD_METHOD", "IMPORT_FROM"):
                found.append(Finding("sys.modules, which reads or rebinds modules by names built "
                                     "at run time", where, ("rebinds", line)))
            elif name in GETATTRS:
                hit = calls.call_at(ins)
                names = None
                if hit is not None and len(hit[0].args) >= 2 and not hit[0].keywords:
                    names = _static_names(hit[0].args[1], hit[1])
                if names is None:
                    kind = "rebinds" if name in ("setattr", "delattr") else "reads"
                    found.append(Finding(_getattr_label(name), where, (kind, line)))
    unique = {}
    for f in found:
        unique.setdefault((f.what, f.where), f)
    return list(unique.values())


class SourceReader:
    """Reads a submission's code cells in order, without running them, into the names
    they bind (see :class:`SourceScope`).

    A definition or assignment at the top of a cell replaces what the name stood for; one
    inside a block (``if``, ``try``, ``with``, a loop, ...) may or may not run, so it is
    added to it: the scan reads every definition the name may have. A function that
    assigns a global (``global f``) binds it too, to its whole code."""

    def __init__(self):
        self.paths: dict[str, list] = {}
        self.codes: dict[str, list] = {}
        self.sources: dict[str, str] = {}
        self.rebinds: list[Finding] = []
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
        self.sources[label] = text
        self._label = label
        consts = {}
        for const in code_objects(module_code):
            consts.setdefault((const.co_name, const.co_firstlineno), const)
        self._consts = consts
        self._statements(tree.body, certain=True)
        for inner in code_objects(module_code):
            if inner is module_code or inner.co_flags & inspect.CO_NEWLOCALS == 0:
                continue
            for ins in dis.get_instructions(inner):
                if ins.opname == "STORE_GLOBAL":
                    self._add(ins.argval, code=(inner, "binding"), certain=False)
        for finding in dynamic_uses(module_code, text):
            if finding.key and finding.key[0] == "rebinds":
                self.rebinds.append(Finding(f"{finding.what}: used in the notebook, it leaves "
                                            "the check unable to tell what your function runs",
                                            f"{finding.where} of {label}",
                                            (label, finding.key[1], finding.what)))

    # -- statements, in order

    def _statements(self, body, certain: bool) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                codes = [(_code_at(self._consts, node), Code.DEF)]
                codes += [(c, "binding") for c in self._expressions(
                    node.decorator_list + node.args.defaults + [d for d in node.args.kw_defaults if d])]
                self._add(node.name, codes=codes, certain=certain)
            elif isinstance(node, ast.ClassDef):
                codes = [(_code_at(self._consts, node), Code.CLASS)]
                codes += [(c, "binding") for c in self._expressions(
                    node.decorator_list + node.bases + [k.value for k in node.keywords])]
                self._add(node.name, codes=codes, certain=certain)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                self._import(node, certain)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                self._assign(node, certain)
            else:
                if isinstance(node, (ast.For, ast.AsyncFor)):
                    for name in _names(node.target):
                        self._add(name, codes=[(c, "binding") for c in self._expressions([node.iter])],
                                  certain=False)
                if isinstance(node, (ast.With, ast.AsyncWith)):
                    for item in node.items:
                        for name in _names(item.optional_vars) if item.optional_vars else ():
                            self._add(name, codes=[(c, "binding") for c in
                                                   self._expressions([item.context_expr])],
                                      certain=False)
                for field_name in ("body", "orelse", "finalbody", "handlers", "cases"):
                    inner = getattr(node, field_name, None)
                    if isinstance(inner, list):
                        for child in inner:
                            if isinstance(child, (ast.ExceptHandler, ast.match_case)):
                                self._statements(child.body, certain=False)
                        self._statements([c for c in inner if isinstance(c, ast.stmt)], False)

    def _expressions(self, nodes) -> list:
        """Each expression compiled on its own (with the cell's line numbers), to scan."""
        out = []
        for node in nodes:
            if node is None:
                continue
            try:
                out.append(compile(ast.Expression(node), self._label, "eval", dont_inherit=True))
            except (SyntaxError, ValueError, TypeError):
                continue
        return out

    def _import(self, node, certain: bool) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self._add(alias.asname, path=alias.name, certain=certain)
                else:
                    top = alias.name.split(".")[0]
                    self._add(top, path=top, certain=certain)
        elif node.module and not node.level:
            for alias in node.names:
                if alias.name != "*":
                    self._add(alias.asname or alias.name, path=f"{node.module}.{alias.name}",
                              certain=certain)
        else:  # a relative import: a module the check does not read
            for alias in node.names:
                self._add(alias.asname or alias.name, path=f".{node.module or ''}.{alias.name}",
                          certain=certain)

    def _assign(self, node, certain: bool) -> None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        value = node.value
        if value is None:  # a bare annotation binds nothing
            return
        simple = isinstance(node, ast.Assign) and len(targets) == 1 and isinstance(targets[0], ast.Name)
        if simple:
            name = targets[0].id
            dotted = _dotted(value)
            root = dotted.split(".")[0] if dotted else ""
            if root and (root in self.paths or root in self.codes):
                rest = dotted[len(root):]
                paths = [p + rest for p in self.paths.get(root, [])]
                codes = list(self.codes.get(root, [])) if not rest else []
                if rest and self.codes.get(root):
                    codes = [(c, "binding") for c in self._expressions([value])]
                self._replace_or_add(name, paths, codes, certain)
                return
        codes = [(c, "binding") for c in self._expressions([value])]
        for target in targets:
            for name in _names(target):
                self._add(name, codes=codes, certain=certain and simple)

    def _replace_or_add(self, name, paths, codes, certain) -> None:
        if certain:
            self.paths[name], self.codes[name] = list(paths), list(codes)
        else:
            self.paths.setdefault(name, []).extend(paths)
            self.codes.setdefault(name, []).extend(codes)
        if not self.paths[name]:
            del self.paths[name]
        if not self.codes[name]:
            del self.codes[name]

    def _add(self, name: str, *, path: str = "", codes=(), code=None, certain: bool) -> None:
        codes = [c for c in codes if c[0] is not None] + ([code] if code else [])
        self._replace_or_add(name, [path] if path else [], codes, certain)

    def scope(self) -> SourceScope:
        return SourceScope({k: list(v) for k, v in self.paths.items()},
                           {k: list(v) for k, v in self.codes.items()},
                           dict(self.sources), list(self.rebinds))


def _names(target) -> list[str]:
    """The plain names an assignment target binds (``a``, ``a, b``, ``*rest``)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in _names(e)]
    if isinstance(target, ast.Starred):
        return _names(target.value)
    return []


def _code_at(consts: dict, node) -> types.CodeType | None:
    line = node.lineno
    if node.decorator_list:
        line = min([line] + [d.lineno for d in node.decorator_list])
    return consts.get((node.name, line)) or consts.get((node.name, node.lineno))


def scan_source(scope: SourceScope, name: str, rules: Rules) -> tuple[list[Finding], set[str]]:
    """Forbidden uses in the learner's ``name`` as the source defines it; where the rules
    constrain the answer, also what makes the source unable to say what runs: no
    definition it can read, one imported from a module of the submission's own, and
    anything in the notebook that can rebind names unseen (``exec``, ``globals()``, ...)."""
    ref = scope.resolve(name)
    findings: list[Finding] = []
    label = _forbidden(ref, rules)
    if label:
        findings.append(Finding(f"{label} (as `{name}`)", f"where {name} is defined"))
    if rules.constrains:
        module = _unread(ref)
        if module:
            findings.append(Finding(f"`{name}` itself, imported from `{module}`, a module of the "
                                    f"submission's own that the check does not read",
                                    f"where {name} is imported"))
        if not ref.own and not ref.paths:
            findings.append(Finding(f"`{name}` itself, which no cell defines in a way the check "
                                    f"can read", "the notebook"))
    more, used = scan_codes(ref.own, rules)
    findings += more
    if rules.constrains:
        findings += scope.rebinds
    return findings, used


# ----------------------------------------------------------------------------- messages

def shortcut_message(fn_name: str, findings: list[Finding], rules: Rules) -> str:
    uses = "\n".join(f"  - {f}" for f in findings)
    why = f"\n{rules.why}" if rules.why else ""
    return f"{fn_name} uses something this exercise asks you to do by hand:\n{uses}{why}"


def missing_required_message(fn_name: str, rules: Rules) -> str:
    wanted = " or ".join(rules.required.values())
    lacks = "its code has none" if set(rules.required) == {LOOP} else "it does not call it"
    return (f"{fn_name} should use {wanted}, and {lacks}."
            f"{(' ' + rules.why) if rules.why else ''}")
