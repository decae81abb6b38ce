"""Integrity notes: what in a submission a human should look at.

Read from the submission's source, never run. The scores stay what the checker computed
(no submission can change its own verdict: ``grader.grading.notebook.trusted``); these notes only
point a person at code that tried, or looks like it tried:

* rebinding ``check`` (or the package it comes from) in a notebook;
* installing an exception hook or replacing how IPython shows errors;
* importing the course's checking machinery beyond ``check`` and the given validation;
* reaching for the grading side: links, processes, memory measures, the sandbox's
  plumbing, the course's modules (``grader.grading.notebook.plumbing``);
* an answer whose code equals the course's solution or reference after renaming;
* code the source cannot show: ``exec``, ``eval``, ``compile``, ``__import__``,
  ``importlib``, ``globals()``, ``getattr`` with a name built at run time and the like
  (``grader.learner.shortcuts.dynamic_uses``). Where an exercise constrains how it is
  done, the checker also gives no credit for that constraint.
"""
from __future__ import annotations

import ast
import functools
import inspect
import json
import re

from ...learner.shortcuts import dynamic_uses, python_source
from .plumbing import attempts
from .nbjson import cell_text, nbgrader_meta
from .repair import Plan
from .status import CellKind

HOOKS = {"excepthook", "displayhook", "showtraceback", "_showtraceback", "showsyntaxerror",
         "_render_traceback_", "custom_exceptions", "CustomTB", "InteractiveTB", "SyntaxTB",
         "set_custom_exc"}
ALLOWED_IMPORTS = {"grader", "grader.learner.validation"}
MARKER = re.compile(r"^\s*### (BEGIN|END) SOLUTION.*$", re.M)
SMALLEST = 25  # answers with fewer AST nodes than this are too short to call a copy


def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(python_source(source))
    except (SyntaxError, ValueError):
        return None


def _binds_check(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == "check":
            return True
        if isinstance(node, ast.Name) and node.id == "check" and isinstance(node.ctx, (ast.Store, ast.Del)):
            return True
        if isinstance(node, (ast.Global, ast.Nonlocal)) and "check" in node.names:
            return True
        if isinstance(node, ast.Attribute) and node.attr == "check" and isinstance(node.ctx, (ast.Store, ast.Del)):
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                given = isinstance(node, ast.ImportFrom) and node.module == "grader" \
                    and alias.name == "check" and alias.asname in (None, "check")
                if bound == "check" and not given:
                    return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" \
                and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) \
                and node.args[1].value == "check":
            return True
    return False


def _hooks(tree: ast.AST) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in HOOKS and (
                isinstance(node.ctx, ast.Store) or node.attr == "set_custom_exc"):
            found.add(node.attr)
        if isinstance(node, ast.Name) and node.id in HOOKS and isinstance(node.ctx, ast.Store):
            found.add(node.id)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in HOOKS:
            found.add(node.name)
    return found


def _unread(source: str) -> list[str]:
    """What in a cell the source cannot show, each with its line."""
    text = python_source(source)
    try:
        code = compile(text, "<cell>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return []
    return [f"{f.what} ({f.where})" for f in dynamic_uses(code, text)]


def _course_imports(tree: ast.AST) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            if (name == "grader" or name.startswith("grader.")) and name not in ALLOWED_IMPORTS \
                    and not (name.startswith("grader.learner.validation")) and name != "grader.check":
                found.add(name)
    return found


class _Canon(ast.NodeTransformer):
    """Names replaced by their order of first appearance; docstrings dropped."""

    def __init__(self):
        self.names: dict[str, str] = {}

    def _name(self, name: str) -> str:
        return self.names.setdefault(name, f"v{len(self.names)}")

    def visit_Name(self, node):
        return ast.copy_location(ast.Name(self._name(node.id), node.ctx), node)

    def visit_arg(self, node):
        return ast.copy_location(ast.arg(self._name(node.arg), None), node)

    def _body(self, node):
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
        return node

    def visit_FunctionDef(self, node):
        node = self._body(node)
        node.name = self._name(node.name)
        node.returns = None
        self.generic_visit(node)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        node = self._body(node)
        node.name = self._name(node.name)
        self.generic_visit(node)
        return node


def canonical(node: ast.AST) -> tuple[str, int]:
    """A definition's shape with its names renamed, and its size in AST nodes."""
    import copy

    tree = _Canon().visit(copy.deepcopy(node))
    return ast.dump(tree, annotate_fields=False, include_attributes=False), sum(1 for _ in ast.walk(node))


def _definitions(tree: ast.AST) -> dict[str, ast.AST]:
    return {node.name: node for node in getattr(tree, "body", [])
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def _known_answers(source: dict, targets: dict[str, str]) -> dict[str, list[str]]:
    """For each answer's name: the canonical shapes of the course's own versions (the
    source notebook's solution, and the reference of the exercise it is checked as)."""
    known: dict[str, list[str]] = {}
    for cell in source["cells"]:
        meta = nbgrader_meta(cell)
        if not (meta.get("solution") and not meta.get("grade") and cell.get("cell_type") == "code"):
            continue
        text = cell_text(cell)
        tree = _parse(MARKER.sub("", text))
        for name, node in _definitions(tree).items() if tree else []:
            shape, size = canonical(node)
            if size >= SMALLEST:
                known.setdefault(name, []).append(shape)
    for name, exercise in targets.items():
        try:
            from ... import reference

            ref = getattr(reference, exercise, None) or getattr(reference, name, None)
            tree = ast.parse(inspect.getsource(ref)) if ref is not None else None
        except (TypeError, OSError, SyntaxError, ImportError):
            tree = None
        for node in _definitions(tree).values() if tree else []:
            shape, size = canonical(node)
            if size >= SMALLEST:
                known.setdefault(name, []).append(shape)
    return known


@functools.lru_cache(maxsize=32)
def _known_answers_of(source_text: str, targets: tuple) -> dict[str, list[str]]:
    return _known_answers(json.loads(source_text), dict(targets))


def notes(plan: Plan, source: dict, targets: dict[str, str]) -> list[str]:
    """Integrity notes for the notebook ``plan`` will run. ``targets`` maps each name
    the test cells check to the exercise it is checked as."""
    found: list[str] = []
    known = _known_answers_of(json.dumps(source, sort_keys=True), tuple(sorted(targets.items())))
    for cell, kind in zip(plan.nb.cells, plan.kinds):
        if cell.cell_type != "code" or kind == CellKind.TEST:
            continue
        tree = _parse(cell.source)
        if tree is None:
            continue
        where = f"cell `{cell.id}`"
        if _binds_check(tree):
            found.append(f"{where} rebinds `check`, the function the tests call.")
        hooks = _hooks(tree)
        if hooks:
            found.append(f"{where} replaces how errors are reported ({', '.join(sorted(hooks))}).")
        tried = attempts(tree)
        if tried:
            found.append(f"{where} reaches for the grading side: {'; '.join(tried)} (grading "
                         "neither follows nor trusts any of it, but a person should look).")
        reached = _course_imports(tree)
        if reached:
            found.append(f"{where} imports the course's checking code ({', '.join(sorted(reached))}).")
        unread = _unread(cell.source)
        if unread:
            found.append(f"{where} runs code the grader cannot read from its source: "
                         f"{'; '.join(unread)}.")
        if kind == CellKind.ANSWER:
            for name, node in _definitions(tree).items():
                if name in known and canonical(node)[0] in known[name]:
                    found.append(f"{where}: `{name}` has the same code as the course's own "
                                 f"solution once names are set aside (worth a look: a short "
                                 f"answer can match by chance).")
    return list(dict.fromkeys(found))
