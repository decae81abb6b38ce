"""The exercise registry: what ``grader.check(name, fn)`` knows about each exercise.

Each lesson adds one module here (``grader/exercises/<slug>.py``) that builds
:class:`Exercise` objects and passes them to :func:`register`. An exercise is data plus
small functions: the reference, a case generator, the catalogue of misconceptions, the
forbidden shortcuts and the bad inputs that must raise ``ValueError``. ``grader.check``
does the rest, the same way for every lesson.
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Any, Callable

from ..compare import FLOAT64, Tolerance
from ..shortcuts import Rules


@dataclass
class Case:
    """One input: positional and keyword arguments, and an optional note for messages."""

    args: tuple
    kwargs: dict = field(default_factory=dict)
    note: str = ""
    tol: Tolerance = FLOAT64
    names: tuple[str, ...] = ()  # argument names, for messages; filled in by the registry

    def size(self) -> int:
        """How big the case is: the number of entries in its inputs (for 'smallest')."""
        from .cases import entries

        return sum(entries(a) for a in self.args) + sum(entries(v) for v in self.kwargs.values())


@dataclass
class Misconception:
    """A known wrong implementation and what to tell a learner whose code behaves like it.

    ``message`` says what the learner probably did and how to fix it. ``impl`` takes the
    same arguments as the exercise. A misconception that raises on some input matches a
    learner's function that raises the same exception type there.
    """

    name: str
    impl: Callable
    message: str


@dataclass
class BadInput:
    """An input the function must reject with ``ValueError``; ``why`` names the problem."""

    case: Case
    why: str


@dataclass
class Exercise:
    name: str
    reference: Callable
    cases: Callable[[Any, bool], list[Case]]  # (numpy Generator, hidden) -> cases
    misconceptions: list[Misconception] = field(default_factory=list)
    bad_inputs: list[BadInput] = field(default_factory=list)
    rules: Rules | None = None
    hint: str = ""  # shown when the failure matches no known misconception
    # How to run a function on a case; override for classes and modules.
    call: Callable[[Callable, Case], Any] = lambda fn, case: fn(*case.args, **case.kwargs)
    # How to compare; the default walks arrays, tuples and dicts (grader.compare).
    compare: Callable | None = None
    arg_names: tuple[str, ...] = ()
    seed: int = 0


EXERCISES: dict[str, Exercise] = {}


def register(*exercises: Exercise) -> None:
    for ex in exercises:
        if ex.name in EXERCISES and EXERCISES[ex.name] is not ex:
            raise ValueError(f"two exercises are registered as {ex.name!r}")
        EXERCISES[ex.name] = ex


def _modules_in_lesson_order() -> list[str]:
    """Exercise modules, the course's lessons first in reading order (a module is named
    after its lesson's slug: ``01_matmul_views`` -> ``matmul_views``), then any other."""
    from ..course import ROOT, assignments

    names = sorted(
        info.name for info in pkgutil.iter_modules(__path__)
        if not info.name.startswith("_") and info.name != "cases"
    )
    try:
        slugs = [a.split("_", 1)[1] for a in assignments(ROOT)]
    except OSError:  # installed without the course's solutions/ folder
        slugs = []
    return [s for s in slugs if s in names] + [n for n in names if n not in slugs]


_imported: set[str] = set()


def _import(module: str) -> None:
    if module not in _imported:
        importlib.import_module(f"{__name__}.{module}")
        _imported.add(module)


def load_all() -> dict[str, Exercise]:
    """Import every lesson module in this package, then return the registry."""
    for module in _modules_in_lesson_order():
        _import(module)
    return EXERCISES


def get(name: str) -> Exercise:
    """The exercise called ``name``, importing lesson modules in reading order only as far
    as needed (so a lesson-01 check never imports torch)."""
    for module in _modules_in_lesson_order():
        if name in EXERCISES:
            break
        _import(module)
    if name not in EXERCISES:
        known = ", ".join(sorted(load_all()))
        raise KeyError(f"no exercise is called {name!r}. Known exercises: {known}")
    return EXERCISES[name]
