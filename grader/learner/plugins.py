"""The engine's interface for a lesson: the kinds of driver, comparison and fixture it adds.

* A **driver** says how an answer runs on a case (:mod:`grader.learner.drivers`).
* A **comparison** says how an outcome is compared with the expected one
  (:mod:`grader.learner.comparisons`).
* A **fixture** builds an object that a case hands to the answer
  (:mod:`grader.learner.fixtures`).

The engine has the kinds any lesson may use. A kind that only one lesson needs lives in
that lesson's folder, in ``grader/lessons/NN_slug/learner.py``, and registers itself
here::

    @register_comparison
    @dataclass(frozen=True)
    class Losses(Comparison):
        kind: ClassVar[str] = "losses"
        ...

    @register_fixture("add_first_task")
    def _add_first_task(vocab_size, seq_len, batch_size): ...

``learner.py`` is the learner's side of its lesson: the kit ships it (and nothing else of
``grader/lessons/``), so it holds no answer and imports nothing of the instructor's side
(``tests/test_boundary.py`` keeps both).

The engine looks a kind up by its name (:func:`find`). The first time a name is unknown,
:func:`load` imports every lesson's ``learner.py``, found by folder name next to this
package, never on ``sys.path`` or in the working directory. The engine itself names no
lesson and no lesson's exercise (``tests/test_boundary.py``).
"""
from __future__ import annotations

import dataclasses
import importlib
import re
from pathlib import Path
from typing import Any, Callable, ClassVar, Protocol

FAMILIES = ("driver", "comparison", "fixture")
FOLDER = re.compile(r"^\d\d_[a-z0-9_]+$")
PACKAGE = __name__.split(".")[0]
LESSONS = Path(__file__).resolve().parents[1] / "lessons"
LEARNER_PART = "learner.py"  # the learner's side of a lesson folder

class Kind(Protocol):
    """A driver or a comparison: a dataclass with a ``kind`` and fields of plain data."""

    kind: ClassVar[str]

    def to_data(self) -> dict: ...


# The engine's own kinds, registered when these are imported.
BUILT_IN = (f"{PACKAGE}.learner.drivers", f"{PACKAGE}.learner.comparisons",
            f"{PACKAGE}.learner.fixtures")

_KINDS: dict[str, dict[str, Any]] = {family: {} for family in FAMILIES}
_LOADED = False


def _register(family: str, name: str, obj) -> None:
    if not isinstance(name, str) or not name:
        raise ValueError(f"a {family} kind needs a name, got {name!r}")
    known = _KINDS[family].get(name)
    if known is not None and getattr(known, "__qualname__", None) != getattr(obj, "__qualname__", None):
        raise ValueError(f"two {family} kinds are named {name!r}: {known!r} and {obj!r}")
    _KINDS[family][name] = obj


def register_driver(cls):
    """Class decorator: a :class:`grader.learner.drivers.Driver` subclass, by its ``kind``."""
    _register("driver", cls.kind, cls)
    return cls


def register_comparison(cls):
    """Class decorator: a :class:`grader.learner.comparisons.Comparison` subclass, by its
    ``kind``."""
    _register("comparison", cls.kind, cls)
    return cls


def register_fixture(name: str, *, namespace: bool = False) -> Callable:
    """Function decorator: a fixture factory, called with the fixture's parameters. With
    ``namespace``, it is also given, first, the namespace the answer under test was
    defined in (a fixture that runs the learner's own classes)."""
    def decorate(factory):
        factory.wants_namespace = namespace
        _register("fixture", name, factory)
        return factory
    return decorate


def lesson_parts() -> list[str]:
    """The modules of every lesson folder's ``learner.py``, by folder name."""
    if not LESSONS.is_dir():
        return []
    return [f"{PACKAGE}.lessons.{folder.name}.learner" for folder in sorted(LESSONS.iterdir())
            if FOLDER.match(folder.name) and (folder / LEARNER_PART).is_file()]


def lesson_part(folder: str):
    """The module of the lesson folder ``folder``'s ``learner.py``: how the lesson's own
    courseware reaches it (a folder name starts with a digit, so ``import`` cannot)."""
    if not FOLDER.match(folder):
        raise ValueError(f"{folder!r} is not a lesson folder's name (NN_slug)")
    return importlib.import_module(f"{PACKAGE}.lessons.{folder}.learner")


def load(lessons: bool = True) -> None:
    """Import the engine's kinds, and with ``lessons`` every lesson's ``learner.py``, once,
    so that their kinds are registered. A lesson's part is imported only when a kind is
    not the engine's: a notebook whose checks use none costs nothing more."""
    global _LOADED
    for module in BUILT_IN:
        importlib.import_module(module)
    if lessons and not _LOADED:
        _LOADED = True
        for module in lesson_parts():
            importlib.import_module(module)


def find(family: str, name: str):
    """The kind ``name`` of ``family``; a ``ValueError`` that names it if none is known."""
    if name not in _KINDS[family]:
        load(lessons=False)
    if name not in _KINDS[family]:
        load()
    found = _KINDS[family].get(name)
    if found is None:
        known = ", ".join(sorted(_KINDS[family])) or "none"
        raise ValueError(f"unknown {family} kind {name!r} (the known ones are: {known})")
    return found


def default(family: str, name: str):
    """A new instance of the kind ``name`` with every field at its default."""
    return find(family, name)()


def kinds(family: str) -> dict[str, Any]:
    """Every registered kind of ``family``, the lessons' included."""
    load()
    return dict(_KINDS[family])


# ----------------------------------------------------------------------------- as data

def to_data(obj) -> dict:
    """A driver or comparison as JSON data: its ``kind`` and every field that is not at
    its default (what a recording holds and what the grader sends to a kernel)."""
    out = {"kind": obj.kind}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        default = f.default if f.default is not dataclasses.MISSING else \
            f.default_factory() if f.default_factory is not dataclasses.MISSING else dataclasses.MISSING
        if value != default:
            out[f.name] = value
    return out


def from_data(family: str, data, default: str):
    """The driver or comparison that ``data`` (from :func:`to_data`) describes. A kind or
    field that does not exist is a ``ValueError`` that names it: a misspelt key never
    passes silently."""
    if not isinstance(data, dict):
        raise ValueError(f"a {family} is a dict with a 'kind', got {type(data).__name__}")
    cls = find(family, data.get("kind", default))
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names - {"kind"})
    if unknown:
        raise ValueError(f"the {family} kind {cls.kind!r} has no field {unknown[0]!r} "
                         f"(its fields are: {', '.join(sorted(names)) or 'none'})")
    return cls(**{k: v for k, v in data.items() if k != "kind"})


__all__ = ["default", "find", "from_data", "kinds", "lesson_part", "lesson_parts", "load", "register_comparison",
           "register_driver", "register_fixture", "to_data"]
