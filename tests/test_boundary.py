"""The two sides of the package (DESIGN.md, "Two sides"), kept by reading the imports.

* The learner's side (``grader/__init__.py``, ``grader/learner/``, each lesson folder's
  ``learner.py``, ``courseware/``) imports nothing of the instructor's side, not even
  inside a function.
* No module of ``grader`` or ``courseware`` takes part in an import circle.
"""
import ast
import re
from pathlib import Path

import pytest

from conftest import ROOT

PACKAGES = ("grader", "courseware")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "__pycache__" not in path.parts and "kit_files" not in path.parts:
                found[module_name(path)] = path
    return found


MODULES = all_modules()


def imports_of(name: str, path: Path) -> list[tuple[str, int]]:
    """Every module ``name`` imports (at any depth of its code), with the line."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            submodules = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in MODULES]
            found += [(sub, node.lineno) for sub in submodules]  # `from . import codec`
            if len(submodules) < len(node.names):  # names defined by the module itself
                found.append((target, node.lineno))
    return found


LESSON_PART = re.compile(r"^grader\.lessons\.\d\d_[a-z0-9_]+\.learner$")  # a lesson's learner.py


def learner_side(name: str) -> bool:
    return (name == "grader" or name.startswith("grader.learner") or bool(LESSON_PART.match(name))
            or name.split(".")[0] == "courseware")


def test_there_is_a_learner_side_and_an_instructors_side():
    assert any(n.startswith("grader.learner.") for n in MODULES)
    assert any(n.startswith("grader.lessons.") for n in MODULES)


@pytest.mark.parametrize("name", sorted(n for n in MODULES if learner_side(n)))
def test_the_learners_side_imports_nothing_of_the_instructors(name):
    bad = [f"line {line}: {target}" for target, line in imports_of(name, MODULES[name])
           if target.split(".")[0] == "grader" and not learner_side(target)]
    assert not bad, f"{name} reaches the instructor's side: {bad}"


def test_no_import_circles():
    graph = {name: sorted({t for t, _ in imports_of(name, path) if t in MODULES and t != name})
             for name, path in MODULES.items()}
    cycles = _cycles(graph)
    assert not cycles, "import circles: " + "; ".join(" -> ".join(c) for c in cycles)


def _cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, []):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_the_boundary_check_sees_a_forbidden_import(tmp_path):
    """The check itself: a learner-side module that imports the reference is caught,
    at any depth, and so is a circle."""
    fake = tmp_path / "m.py"
    fake.write_text("def f():\n    from grader.reference import softmax\n    return softmax\n")
    targets = [t for t, _ in imports_of("grader.learner.m", fake)]
    assert "grader.reference" in targets and not learner_side("grader.reference")
    assert _cycles({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == [["a", "b", "c"]]


# Control flows one way (the engine judges; a subject only runs and reads the answer).
ONE_WAY = {"grader.grading.notebook.bridge": ("grader.learner.engine", "grader.lessons")}


def calls_back(name: str, path: Path) -> list[str]:
    """The imports of ``name`` that would let a subject judge, or reach the expectations,
    itself: what ``ONE_WAY`` forbids it."""
    forbidden = ONE_WAY[name]
    return [f"line {line}: {target}" for target, line in imports_of(name, path)
            if any(target == f or target.startswith(f + ".") for f in forbidden)]


@pytest.mark.parametrize("name", sorted(ONE_WAY))
def test_a_subject_never_judges_nor_reaches_the_expectations(name):
    assert not calls_back(name, MODULES[name]), f"{name} calls back: {calls_back(name, MODULES[name])}"


def test_the_one_way_check_sees_a_subject_that_judges(tmp_path):
    fake = tmp_path / "bridge.py"
    fake.write_text("def helper_passes(name):\n    from ...learner.engine import judge\n"
                    "    from ...lessons import expectations\n    return judge(expectations(name), name)\n")
    found = calls_back("grader.grading.notebook.bridge", fake)
    assert len(found) == 2 and "grader.learner.engine" in found[0] and "grader.lessons" in found[1]


# The engine names no lesson (issue 24): whatever is one lesson's lives in its folder.
ENGINE = ROOT / "grader" / "learner"
LESSON_WORDS = re.compile(r"\blessons? \d\d?\b|\b\d\d_[a-z][a-z0-9_]*\b", re.IGNORECASE)


def _exercise_names() -> set[str]:
    from grader import lessons

    return set(lessons.load_all())


def names_a_lesson(path: Path, exercises: set[str]) -> list[str]:
    """Where the module at ``path`` names a lesson or one of its exercises: an identifier
    of the code that is an exercise's name; a string or comment that quotes one (in
    backticks or quotes, or the whole string); a lesson's number or folder. Attributes
    (``torch.softmax``) are a library's names, and a plain word ("the softmax") is the
    mathematics: neither names an exercise, but a name no English word is (one with an
    underscore or a capital: ``matmul_dot``, ``KVCache``) does, wherever it is written."""
    import io
    import tokenize

    text = path.read_text(encoding="utf-8")
    words = sorted(e for e in exercises if e.islower() and "_" not in e)
    coined = sorted(set(exercises) - set(words))
    quoted = re.compile("(?:``|`|'|\")(" + "|".join(map(re.escape, words)) + ")(?:``|`|'|\")"
                        + ("|\\b(" + "|".join(map(re.escape, coined)) + ")\\b" if coined else ""))
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Name) and node.id in exercises:
            found.append(f"line {node.lineno}: the name {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr in coined:
            found.append(f"line {node.lineno}: the attribute {node.attr}")
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in exercises:
            found.append(f"line {node.lineno}: defines {node.name}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            s = node.value
            hit = s if s in exercises else (quoted.search(s) or LESSON_WORDS.search(s))
            if hit:
                found.append(f"line {node.lineno}: {hit if isinstance(hit, str) else hit.group(0)!r}")
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            hit = quoted.search(tok.string) or LESSON_WORDS.search(tok.string)
            if hit:
                found.append(f"line {tok.start[0]}: {hit.group(0)!r} in a comment")
    return found


@pytest.mark.parametrize("path", sorted(ENGINE.glob("*.py")), ids=lambda p: p.name)
def test_the_engine_names_no_lesson_and_no_lessons_exercise(path):
    found = names_a_lesson(path, _exercise_names())
    assert not found, f"grader/learner/{path.name} names a lesson: {found}"


def test_the_naming_check_sees_a_lesson_planted_in_the_engine(tmp_path):
    exercises = {"run_ablation", "softmax", "KVCache"}
    plants = {
        "ok.py": "import torch\n\ndef f(x):\n    '''Normalise: the softmax of x.'''\n    return torch.softmax(x, -1)\n",
        "name.py": "def f(ns):\n    return ns['KVCache']\n",
        "code.py": "def f():\n    return run_ablation\n",
        "doc.py": "def f():\n    '''Lesson 06's check.'''\n",
        "quoted.py": "def f():\n    '''Judges ``run_ablation`` by its rows.'''\n",
        "comment.py": "x = 1  # as 06_residual_ablation does\n",
        "coined.py": "def f():\n    '''Build the KVCache first.'''\n",
        "defines.py": "def softmax(x):\n    return x\n",
        "attribute.py": "def f(ns):\n    return ns.KVCache\n",
    }
    for name, text in plants.items():
        (tmp_path / name).write_text(text)
    caught = {name for name in plants if names_a_lesson(tmp_path / name, exercises)}
    assert caught == set(plants) - {"ok.py"}, caught
