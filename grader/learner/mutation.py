"""Which parameters a function changes in place, read from its source (never run).

At grading, whether an answer changed its input must not rest on the kernel's word:
the kernel-side agent compares each input before and after the call, but a submission
can patch the agent. So the grader also reads the answer's source. A parameter is
changed in place when the function, or a name that may share its memory, is

* assigned into (``x[i] = ...``, ``x.attr = ...``, ``x[i] += ...``, ``x += ...``) or
  deleted from (``del x[i]``);
* given to a method that changes its object (NumPy's ``fill``, ``sort``, ``put``, ...;
  torch's methods whose names end in ``_``; a list's or dict's ``append``, ``update``,
  ...), or to a function as the array it writes into (``np.copyto(x, ...)``,
  ``np.put``, ``np.place``, ``np.putmask``, ``np.fill_diagonal``, ``out=x``);
* given to another function of the learner's that changes that parameter.

A name shares a parameter's memory when it is bound to the parameter, to a view of it
(basic slicing, ``.T``, ``.reshape``, ``.view``, ``np.asarray``, ``torch.as_tensor``,
``.numpy()``, ...) or to a row of it in a ``for`` loop. Rebinding a name to anything
else (``x = x.copy()``, ``x = np.array(x)``, ``x = x + 1``) ends the sharing from that
line on: the reading follows the order of the statements, and a branch or a loop counts
as possibly taken. What only running could tell (an index that is an array, a helper
found at run time) is not guessed: the kernel's own comparison still adds a finding.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

# Functions and methods that return a view of (or the very) array they are given.
VIEW_FUNCTIONS = {"asarray", "asanyarray", "ascontiguousarray", "as_tensor", "from_numpy",
                  "reshape", "transpose", "swapaxes", "moveaxis", "squeeze", "expand_dims",
                  "ravel", "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_to", "permute",
                  "unsqueeze", "flip", "narrow", "select", "diagonal", "real", "imag",
                  # the course's own input checks (grader.learner.validation) return the
                  # array they were given when it already has the right type
                  "as_array", "as_matrix", "bool_mask", "lengths_array"}
# Functions that return views of (or the very) arrays among all their arguments.
VIEWS_OF_ALL = {"matmul_operands", "broadcast_arrays", "meshgrid"}
VIEW_METHODS = VIEW_FUNCTIONS | {"view", "view_as", "expand", "expand_as", "numpy", "detach",
                                 "T", "mT", "H", "mH", "data", "unflatten", "__array__"}
VIEW_ATTRIBUTES = {"T", "mT", "H", "mH", "real", "imag", "data", "flat"}
CHANGING_METHODS = {"fill", "sort", "resize", "put", "itemset", "partition", "setfield",
                    "setflags", "append", "extend", "insert", "pop", "remove", "clear",
                    "reverse", "update", "popitem", "setdefault", "__setitem__", "__delitem__",
                    "__iadd__", "__isub__", "__imul__", "__itruediv__"}
# Functions whose first argument is the array they write into.
WRITING_FUNCTIONS = {"copyto", "put", "place", "putmask", "fill_diagonal", "put_along_axis"}


@dataclass(frozen=True)
class Change:
    param: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"line {self.line}: `{self.text}`"


def _name_of(func) -> str:
    """The last name of a called thing (``np.copyto`` -> ``copyto``)."""
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def _basic_index(node) -> bool:
    """An index that makes a view: slices, integers, ``...`` and ``None``."""
    parts = node.elts if isinstance(node, ast.Tuple) else [node]
    for part in parts:
        if isinstance(part, ast.Slice):
            continue
        if isinstance(part, ast.Constant) and (part.value is None or part.value is Ellipsis
                                               or isinstance(part.value, int)):
            continue
        if isinstance(part, ast.UnaryOp) and isinstance(part.operand, ast.Constant):
            continue
        return False
    return True


class _Reader:
    def __init__(self, fn: ast.FunctionDef, functions: dict, depth: int):
        self.fn, self.functions, self.depth = fn, functions, depth
        args = fn.args
        self.params = [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]
        self.changes: dict[str, Change] = {}

    # -- what an expression may share memory with
    def shares(self, node, state: dict) -> frozenset:
        if isinstance(node, ast.Name):
            return state.get(node.id, frozenset())
        if isinstance(node, ast.Starred):
            return self.shares(node.value, state)
        if isinstance(node, ast.Subscript):
            return self.shares(node.value, state) if _basic_index(node.slice) else frozenset()
        if isinstance(node, ast.Attribute):
            return self.shares(node.value, state) if node.attr in VIEW_ATTRIBUTES else frozenset()
        if isinstance(node, (ast.IfExp,)):
            return self.shares(node.body, state) | self.shares(node.orelse, state)
        if isinstance(node, ast.NamedExpr):
            return self.shares(node.value, state)
        if isinstance(node, ast.Call):
            name = _name_of(node.func)
            if isinstance(node.func, ast.Attribute) and name in VIEW_METHODS:
                own = self.shares(node.func.value, state)
                if own:
                    return own
            if name in VIEW_FUNCTIONS and node.args:
                return self.shares(node.args[0], state)
            if name in VIEWS_OF_ALL:
                return frozenset().union(*(self.shares(a, state) for a in node.args))
        return frozenset()

    # -- changes
    def changed(self, target, state: dict, node) -> None:
        for param in self.shares(target, state):
            if param not in self.changes:
                try:
                    text = ast.unparse(node).splitlines()[0]
                except Exception:  # noqa: BLE001 (a node unparse cannot render)
                    text = ""
                self.changes[param] = Change(param, getattr(node, "lineno", self.fn.lineno), text[:120])

    def store(self, target, state: dict, node) -> None:
        """An assignment into ``target`` (not a rebinding of a name)."""
        if isinstance(target, (ast.Subscript, ast.Attribute)):
            base = target.value
            # x[i][j] = ... and x.a[i] = ...: the innermost object is changed too.
            while isinstance(base, (ast.Subscript, ast.Attribute)) and not self.shares(base, state):
                base = base.value
            self.changed(base, state, node)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self.store(elt, state, node)
        elif isinstance(target, ast.Starred):
            self.store(target.value, state, node)

    def calls(self, node, state: dict) -> None:
        for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
            name = _name_of(call.func)
            if isinstance(call.func, ast.Attribute) and (
                    name in CHANGING_METHODS or (name.endswith("_") and not name.startswith("_"))):
                self.changed(call.func.value, state, call)
            if name in WRITING_FUNCTIONS and call.args:
                self.changed(call.args[0], state, call)
            for kw in call.keywords:
                if kw.arg == "out":
                    for part in (kw.value.elts if isinstance(kw.value, ast.Tuple) else [kw.value]):
                        self.changed(part, state, call)
            own = self.functions.get(name) if isinstance(call.func, ast.Name) else None
            if own is not None and own is not self.fn and self.depth < 4:
                inner = changes(own, self.functions, self.depth + 1)
                params = [a.arg for a in [*own.args.posonlyargs, *own.args.args]]
                for i, arg in enumerate(call.args):
                    if i < len(params) and params[i] in inner:
                        self.changed(arg, state, call)
                for kw in call.keywords:
                    if kw.arg in inner:
                        self.changed(kw.value, state, call)

    # -- statements, in order
    def bind(self, target, value, state: dict, stmt=None) -> None:
        if isinstance(target, ast.Name):
            state[target.id] = self.shares(value, state) if value is not None else frozenset()
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = value.elts if isinstance(value, (ast.Tuple, ast.List)) and \
                len(value.elts) == len(target.elts) else [value] * len(target.elts)
            for t, v in zip(target.elts, values):
                self.bind(t, v, state, stmt)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, value, state, stmt)
        else:
            self.store(target, state, stmt or target)

    def block(self, body: list, state: dict) -> dict:
        for stmt in body:
            state = self.statement(stmt, state)
        return state

    def statement(self, stmt, state: dict) -> dict:
        state = dict(state)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.block(stmt.body, state)  # a closure may run: read it with today's sharing
            return state
        if isinstance(stmt, ast.ClassDef):
            return state
        self.calls_in(stmt, state)
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                self.bind(target, stmt.value, state, stmt)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self.bind(stmt.target, stmt.value, state, stmt)
        elif isinstance(stmt, ast.AugAssign):
            if isinstance(stmt.target, ast.Name):
                self.changed(stmt.target, state, stmt)  # in place for arrays and lists
            else:
                self.store(stmt.target, state, stmt)
        elif isinstance(stmt, ast.Delete):
            for target in stmt.targets:
                if isinstance(target, (ast.Subscript, ast.Attribute)):
                    self.store(target, state, stmt)
                elif isinstance(target, ast.Name):
                    state.pop(target.id, None)
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            entry = dict(state)
            self.bind(stmt.target, stmt.iter, state)
            if isinstance(stmt.target, ast.Name) and self.shares(stmt.iter, entry):
                state[stmt.target.id] = self.shares(stmt.iter, entry)  # a row is a view
            after = self.block(stmt.body, self.block(stmt.body, state))
            state = _union(entry, after, self.block(stmt.orelse, _union(entry, after)))
        elif isinstance(stmt, ast.While):
            after = self.block(stmt.body, self.block(stmt.body, state))
            state = _union(state, after, self.block(stmt.orelse, _union(state, after)))
        elif isinstance(stmt, ast.If):
            state = _union(self.block(stmt.body, state), self.block(stmt.orelse, state))
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, item.context_expr, state)
            state = self.block(stmt.body, state)
        elif isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            body = self.block(stmt.body, state)
            handled = [self.block(h.body, _union(state, body)) for h in stmt.handlers]
            orelse = self.block(stmt.orelse, body)
            state = self.block(stmt.finalbody, _union(state, body, orelse, *handled))
        elif isinstance(stmt, ast.Match):
            state = _union(state, *[self.block(case.body, state) for case in stmt.cases])
        return state

    def calls_in(self, stmt, state: dict) -> None:
        """The calls in ``stmt`` itself (a compound statement's header only)."""
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            parts = [stmt.iter]
        elif isinstance(stmt, (ast.While, ast.If)):
            parts = [stmt.test]
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            parts = [item.context_expr for item in stmt.items]
        elif isinstance(stmt, (ast.Try, ast.Match, getattr(ast, "TryStar", ast.Try))):
            parts = [stmt.subject] if isinstance(stmt, ast.Match) else []
        else:
            parts = [stmt]
        for part in parts:
            self.calls(part, state)
            for fn in (n for n in ast.walk(part) if isinstance(n, ast.Lambda)):
                self.calls(fn.body, state)


def _union(*states: dict) -> dict:
    out: dict = {}
    for state in states:
        for name, shared in state.items():
            out[name] = out.get(name, frozenset()) | shared
    return out


def changes(fn: ast.FunctionDef, functions: dict, depth: int = 0) -> dict[str, Change]:
    """The parameters ``fn`` changes in place, each with the first line that does."""
    reader = _Reader(fn, functions, depth)
    reader.block(fn.body, {p: frozenset({p}) for p in reader.params})
    return reader.changes


def functions_in(trees: list) -> dict[str, ast.FunctionDef]:
    """The learner's functions by name, wherever they are defined in the cells (the last
    definition of a name wins, as when the cells run in order)."""
    found = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found[node.name] = node
    return found


def source_changes(trees: list, name: str) -> dict[str, Change]:
    """The parameters the learner's function ``name`` changes in place, read from the
    cells' syntax trees ``trees``."""
    functions = functions_in(trees)
    fn = functions.get(name)
    return changes(fn, functions) if fn is not None else {}
