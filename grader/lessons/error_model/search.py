"""Mutants of a reference: every edit of a rule (:mod:`.rules`) at one site of the code
the reference runs, compiled and ready to run like the reference.

A *site* is the statement of a lesson's ``reference.py`` just below a comment line
``# site: <what it is, in the learner's words>``. Only sites are edited, and a message names the site, never
the code. The functions searched are the reference and the functions of its own module
it calls, directly or through each other; each mutant changes one of them, and the
others are bound to it, so that the reference runs the edited one.
"""
from __future__ import annotations

import __future__
import ast
import inspect
import re
import textwrap
import types
from dataclasses import dataclass
from functools import cache

from .rules import (TWICE, Edit, Rule, constant_edits, counter_edits, counters, defaults, expression_edits,
                    sibling_edits, siblings, start_edits, statement_edits, value_edits,
                    values)

SITE = re.compile(r"^\s*#\s*site:\s*(?P<name>.+?)\s*$")


@dataclass(frozen=True)
class Mutant:
    """One edit of the reference: the rule, the site it was made at, the edit's details,
    and the reference with it (``impl``, called as the reference is)."""

    rule: Rule
    site: str
    detail: tuple
    impl: object
    where: str  # function and line, for the project's own reading ("_absorb:54")
    twice: bool = False  # the same edit at two sites (``site`` names both)

    @property
    def message(self) -> str:
        return self.rule.message(self.site, dict(self.detail))

    @property
    def name(self) -> str:
        return f"{self.rule.name} in {self.site}"


def _functions(reference) -> list[types.FunctionType]:
    """The functions the reference runs: itself (or, for a class, its methods and those of
    its bases from the same module) and the functions of its own module they call,
    directly or through each other. Another graded function of the module is not one of
    them: it is the learner's own part, with a check of its own."""
    module = reference.__module__
    if isinstance(reference, types.FunctionType):
        todo = [reference]
    elif isinstance(reference, type):
        todo = [m for cls in reference.__mro__ if cls.__module__ == module
                for m in vars(cls).values() if isinstance(m, types.FunctionType)]
    else:
        return []
    graded = set(getattr(inspect.getmodule(reference), "__all__", ())) - {reference.__name__}
    found = []
    while todo:
        fn = todo.pop(0)
        if fn in found:
            continue
        found.append(fn)
        for name in _names(fn.__code__):
            other = fn.__globals__.get(name)
            if isinstance(other, types.FunctionType) and other.__module__ == module and \
                    other not in found and name not in graded:
                todo.append(other)
    return found


def _names(code) -> list[str]:
    """The global names ``code`` reads, in the order it first reads them (never a set's
    order, which changes from one process to the next)."""
    names = list(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names += _names(const)
    return list(dict.fromkeys(names))


@cache
def _source(fn) -> tuple[ast.FunctionDef, dict[int, str], str] | None:
    """The function's tree (numbered as its file is), its sites (line: name) and its file."""
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return None
    sites, name = {}, None
    for i, line in enumerate(lines, start=first):
        found = SITE.match(line)
        if found:
            name = found["name"]
        elif name is not None and line.strip() and not line.strip().startswith("#"):
            sites[i], name = name, None
    if not sites:
        return None
    tree = ast.parse(textwrap.dedent("".join(lines)))
    ast.increment_lineno(tree, first - 1)
    node = tree.body[0]
    if not isinstance(node, ast.FunctionDef) or node.decorator_list:
        return None
    return node, sites, inspect.getsourcefile(fn) or "<reference>"


def _site_of(stmt: ast.stmt, sites: dict[int, str]) -> str | None:
    return sites.get(stmt.lineno)


def _own_nodes(stmt: ast.stmt):
    """The expression nodes of a statement, not those of the statements inside it, each
    with the path that finds it again in a copy of the tree."""
    todo = [(stmt, ())]
    while todo:
        node, path = todo.pop(0)
        for name, value in ast.iter_fields(node):
            items = value if isinstance(value, list) else [value]
            for i, child in enumerate(items):
                if not isinstance(child, ast.AST) or isinstance(child, ast.stmt):
                    continue
                step = path + ((name, i if isinstance(value, list) else None),)
                if isinstance(child, ast.expr):
                    yield child, step
                todo.append((child, step))


def _bodies(fn: ast.FunctionDef):
    """Every list of statements in the function, with the path to it."""
    todo = [(fn, ())]
    while todo:
        node, path = todo.pop(0)
        for name, value in ast.iter_fields(node):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                yield value, path + ((name, None),)
                for i, stmt in enumerate(value):
                    todo.append((stmt, path + ((name, i),)))


def _follow(node, path):
    for name, i in path:
        node = getattr(node, name) if i is None else getattr(node, name)[i]
    return node


def _replace(root, path, new):
    *head, (name, i) = path
    parent = _follow(root, head)
    if i is None:
        setattr(parent, name, new)
    else:
        getattr(parent, name)[i] = new


@cache
def edits_of(fn) -> list[tuple[str, Edit, types.CodeType, int]]:
    """Every edit at a site of ``fn``: (site, edit, the edited function's module code, line).
    Each edit is made in the function's tree, compiled, and taken back."""
    found = _source(fn)
    if found is None:
        return []
    tree, sites, filename = found
    group, numbers = siblings(tree), defaults(tree)
    loops, known = counters(tree), values(tree, sites)
    out = []

    def compiled(*changes):
        olds = [(path, _follow(tree, path)) for path, _ in changes]
        for path, new in changes:
            _replace(tree, path, new)
        try:
            module = ast.fix_missing_locations(ast.Module(body=[tree], type_ignores=[]))
            return compile(module, filename, "exec", flags=__future__.annotations.compiler_flag,
                           dont_inherit=True)
        except (SyntaxError, ValueError, TypeError):
            return None
        finally:
            for path, old in reversed(olds):
                _replace(tree, path, old)

    twice = []  # (site, path, edit, line) of the edits a learner makes at two sites alike

    for body, body_path in list(_bodies(tree)):
        for i, stmt in enumerate(list(body)):
            site = _site_of(stmt, sites)
            if site is None:
                continue
            stmt_path = body_path[:-1] + ((body_path[-1][0], i),)
            after = _site_of(body[i + 1], sites) if i + 1 < len(body) else None
            found_edits = [(body_path, e) for e in statement_edits(body, i, after)]
            if isinstance(stmt, (ast.Assign, ast.Return)) and stmt.value is not None:
                found_edits += [(stmt_path + (("value", None),), e)
                                for e in start_edits(stmt.value, returned=isinstance(stmt, ast.Return))]
            found_edits += [(stmt_path + path, e) for node, path in list(_own_nodes(stmt))
                            for e in [*expression_edits(node), *sibling_edits(node, group),
                                      *constant_edits(node, numbers), *counter_edits(node, loops),
                                      *value_edits(node, stmt.lineno, known)]]
            found_edits += list(_inner_statement_edits(stmt, stmt_path))
            for path, edit in found_edits:
                code = compiled((path, edit.new))
                if code is not None:
                    out.append((site, edit, code, stmt.lineno))
                    if edit.rule in TWICE and path[:len(stmt_path)] == stmt_path:
                        twice.append((site, path, edit, stmt.lineno))
    for k, (site, path, edit, line) in enumerate(twice):
        for other, other_path, other_edit, _ in twice[k + 1:]:
            if other != site and other_edit.rule is edit.rule and other_edit.detail == edit.detail:
                code = compiled((path, edit.new), (other_path, other_edit.new))
                if code is not None:
                    out.append((f"{site} and {other}", Edit(edit.rule, edit.new, edit.detail, twice=True),
                                code, line))
    return out


def _rebound(fn: types.FunctionType, space: dict) -> types.FunctionType:
    bound = types.FunctionType(fn.__code__, space, fn.__name__, fn.__defaults__, fn.__closure__)
    bound.__kwdefaults__ = fn.__kwdefaults__
    bound.__doc__, bound.__qualname__ = fn.__doc__, fn.__qualname__
    return bound


def _inner_statement_edits(stmt: ast.stmt, path: tuple):
    """The statement edits (``continue`` for ``break``) of the statements inside a site's
    own bodies that are no site of their own: they are part of it."""
    for name in ("body", "orelse"):
        body = getattr(stmt, name, None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt) and \
                not isinstance(stmt, (ast.For, ast.While, ast.FunctionDef)):
            for i, inner in enumerate(body):
                if isinstance(inner, ast.Continue):
                    yield from ((path + ((name, None),), e) for e in statement_edits(body, i))


def _bound(fn, code: types.CodeType, functions: list, reference):
    """The reference, with ``fn`` replaced by the function ``code`` defines, and the other
    functions it runs bound to it: for a class, a subclass of the same name whose methods
    run them."""
    space = dict(fn.__globals__)
    exec(code, space)  # noqa: S102 (the project's own reference, edited)
    edited = space.pop(fn.__name__) if _is_method(fn, reference) else space[fn.__name__]
    edited.__kwdefaults__ = fn.__kwdefaults__
    for other in functions:
        if other is not fn and not _is_method(other, reference):
            space[other.__name__] = _rebound(other, space)
    if not isinstance(reference, type):
        return space[reference.__name__]
    methods = {}
    for cls in reversed(reference.__mro__):  # the nearest class's method wins
        if cls.__module__ == reference.__module__:
            methods.update({name: edited if m is fn else _rebound(m, space)
                            for name, m in vars(cls).items() if isinstance(m, types.FunctionType)})
    return type(reference.__name__, (reference,), {**methods, "__module__": reference.__module__,
                                                   "__qualname__": reference.__qualname__})


def _is_method(fn, reference) -> bool:
    return isinstance(reference, type) and any(
        vars(cls).get(fn.__name__) is fn for cls in reference.__mro__)


def mutants(reference) -> list[Mutant]:
    """Every mutant of ``reference``: one edit at one site of the code it runs, in the
    order of the rules' ranks (the first of mutants that behave alike is named)."""
    functions = _functions(reference)
    out = []
    for fn in functions:
        if "super" in fn.__code__.co_names:
            continue  # compiled on its own, its super() has no class to look up
        for site, edit, code, line in edits_of(fn):
            out.append(Mutant(edit.rule, site, tuple(sorted(edit.detail.items())),
                              _bound(fn, code, functions, reference), f"{fn.__name__}:{line}",
                              edit.twice))
    # One edit before the same edit made at two sites: the fewer changes that explain an
    # answer, the likelier they are the learner's.
    return sorted(out, key=lambda m: (m.twice, m.rule.rank))
