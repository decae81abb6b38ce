"""Finding forbidden shortcuts in a learner's function by reading its bytecode.

Some exercises ask for an implementation by hand: the loop versions of a matrix product
may not use ``@`` or ``np.matmul``; ``scaled_dot_product_attention`` may not call the
library's attention. Reading the source text would be fooled by comments, strings and
aliases (``from numpy import matmul as mm``), so this module walks the compiled code:

* the ``@`` operator is a ``BINARY_OP`` instruction;
* a global name is resolved in the function's globals and compared by identity with the
  forbidden objects, so aliases are caught;
* an attribute (``np.dot``, ``A.dot``) is caught by name, and by identity when its owner
  is a global that can be resolved;
* ``for`` loops and comprehensions (``FOR_ITER``) are caught where loops are forbidden;
* nested functions, lambdas and comprehensions are scanned too, and so are the learner's
  own helper functions that the function calls (defined in the same namespace).
"""
from __future__ import annotations

import dis
import inspect
import types
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Rules:
    """What an exercise forbids or requires.

    ``names`` maps a function or attribute name to how to call it in the message, for
    example ``{"matmul": "np.matmul"}``. ``objects`` are callables forbidden under any name.
    ``required`` are names at least one of which the function must use.
    """

    names: dict[str, str] = field(default_factory=dict)
    objects: tuple = ()
    matmul_operator: bool = False
    loops: bool = False
    required: dict[str, str] = field(default_factory=dict)
    why: str = ""


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


def numpy_product_objects() -> tuple:
    """The product functions themselves, so that aliases are caught by identity."""
    import operator

    import numpy as np

    return (np.matmul, np.dot, np.einsum, np.inner, np.tensordot, np.vdot,
            np.linalg.multi_dot, operator.matmul, operator.imatmul)


@dataclass(frozen=True)
class Finding:
    what: str
    where: str  # "line 4 of matmul_dot"

    def __str__(self) -> str:
        return f"{self.what} ({self.where})"


def _functions_of(obj) -> list[types.FunctionType]:
    """The plain functions behind ``obj``: itself, or a class's methods."""
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


def _code_objects(code: types.CodeType):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


def _resolve_global(fn: types.FunctionType, name: str):
    if name in fn.__globals__:
        return fn.__globals__[name]
    builtins = fn.__globals__.get("__builtins__", {})
    if isinstance(builtins, types.ModuleType):
        builtins = vars(builtins)
    return builtins.get(name, _MISSING)


_MISSING = object()


def _same_object(value, forbidden: tuple) -> bool:
    return any(value is f for f in forbidden)


def scan(obj, rules: Rules) -> tuple[list[Finding], set[str]]:
    """Forbidden uses in ``obj``, and the required names it does use."""
    findings: list[Finding] = []
    used_required: set[str] = set()
    seen: set[int] = set()
    todo = list(_functions_of(obj))
    while todo:
        fn = todo.pop()
        if id(fn.__code__) in seen:
            continue
        seen.add(id(fn.__code__))
        for code in _code_objects(fn.__code__):
            _scan_code(fn, code, rules, findings, used_required, todo)
    return findings, used_required


def _scan_code(fn, code, rules: Rules, findings, used_required, todo) -> None:
    owner = _MISSING  # value of the last resolvable global, for attribute identity checks
    for ins in dis.get_instructions(code):
        line = ins.positions.lineno if ins.positions and ins.positions.lineno else None
        if line is not None:
            rel = line - fn.__code__.co_firstlineno + 1
            where = f"line {rel} of {fn.__name__}"
        else:
            where = f"in {fn.__name__}"
        if ins.opname == "BINARY_OP" and ins.argrepr in ("@", "@="):
            if rules.matmul_operator:
                findings.append(Finding("the @ operator", where))
            owner = _MISSING
            continue
        if ins.opname == "FOR_ITER" and rules.loops:
            kind = "a comprehension" if code.co_name.startswith("<") else "a for loop"
            findings.append(Finding(f"{kind}", where))
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLOSURE"):
            name = ins.argval
            value = _resolve_global(fn, name) if ins.opname != "LOAD_DEREF" else _MISSING
            if ins.opname == "LOAD_DEREF" and fn.__closure__:
                freevars = fn.__code__.co_freevars
                if name in freevars:
                    value = fn.__closure__[freevars.index(name)].cell_contents
            _note_value(name, value, rules, findings, used_required, where, todo, fn)
            owner = value
            continue
        if ins.opname in ("LOAD_ATTR", "LOAD_METHOD"):
            name = ins.argval
            value = getattr(owner, name, _MISSING) if owner is not _MISSING else _MISSING
            _note_value(name, value, rules, findings, used_required, where, todo, None)
            owner = value
            continue
        owner = _MISSING


def _note_value(name, value, rules: Rules, findings, used_required, where, todo, fn) -> None:
    if name in rules.required:
        used_required.add(name)
    own_helper = (
        fn is not None and isinstance(value, types.FunctionType) and value.__globals__ is fn.__globals__
    )
    if name in rules.names and not own_helper:
        findings.append(Finding(rules.names[name], where))
    elif value is not _MISSING and _same_object(value, rules.objects):
        label = getattr(value, "__qualname__", getattr(value, "__name__", name))
        findings.append(Finding(f"{label} (as `{name}`)", where))
    # Follow the learner's own helpers: functions defined in the same namespace.
    if own_helper:
        todo.append(value)


def shortcut_message(fn_name: str, findings: list[Finding], rules: Rules) -> str:
    uses = "\n".join(f"  - {f}" for f in findings)
    why = f"\n{rules.why}" if rules.why else ""
    return (
        f"{fn_name} uses something this exercise asks you to do by hand:\n{uses}{why}"
    )


def missing_required_message(fn_name: str, rules: Rules) -> str:
    wanted = " or ".join(rules.required.values())
    return f"{fn_name} should use {wanted}, and it does not call it.{(' ' + rules.why) if rules.why else ''}"
