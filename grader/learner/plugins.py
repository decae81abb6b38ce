"""The engine's interface for a lesson: one :class:`Lesson` per lesson folder, held by one
:class:`LessonManager` (:data:`LESSONS`), as pluggy's ``PluginManager`` holds plugins.

A lesson folder ``grader/lessons/NN_slug/`` is found here and only here, by its name
(:data:`FOLDER`), next to this package, never on ``sys.path`` or in the working directory.
Its :class:`Lesson` holds what the folder adds:

* **kinds** of driver (how an answer runs on a case, :mod:`grader.learner.drivers`), of
  comparison (how an outcome is compared with the expected one,
  :mod:`grader.learner.comparisons`) and of fixture (an object a case hands to the answer,
  :mod:`grader.learner.fixtures`), registered by the folder's ``learner.py``::

      LESSON = LESSONS.of(__name__)

      @LESSON.comparison
      @dataclass(frozen=True)
      class Losses(Comparison):
          kind: ClassVar[str] = "losses"
          ...

      @LESSON.fixture("add_first_task")
      def _add_first_task(vocab_size, seq_len, batch_size): ...

* its **exercises**, registered by the folder's ``exercises.py`` (the instructor's side,
  :mod:`grader.lessons`) the same way: ``LESSON.register(Exercise(...))``.

The engine has the kinds any lesson may use (:func:`register_driver` and its twins, for
``grader/learner/`` only). ``learner.py`` is the learner's side of its lesson: the kit
ships it (and nothing else of ``grader/lessons/``), so it holds no answer and imports
nothing of the instructor's side (``tests/test_boundary.py`` keeps both).

The engine looks a kind up by its name (:func:`find`). The first time a name is unknown,
every lesson's ``learner.py`` is imported. The engine itself names no lesson and no
lesson's exercise (``tests/test_boundary.py``).
"""
from __future__ import annotations

import dataclasses
import importlib
import re
from pathlib import Path
from typing import Any, Callable, ClassVar, Protocol

FAMILIES = ("driver", "comparison", "fixture")
FOLDER = re.compile(r"^\d\d_[a-z0-9_]+$")  # a lesson folder's name: NN_slug
PACKAGE = __name__.split(".")[0]
LEARNER_PART = "learner"  # the learner's side of a lesson folder (learner.py)


class Kind(Protocol):
    """A driver or a comparison: a dataclass with a ``kind`` and fields of plain data."""

    kind: ClassVar[str]

    def to_data(self) -> dict: ...


# The engine's own kinds, registered when these are imported.
BUILT_IN = (f"{PACKAGE}.learner.drivers", f"{PACKAGE}.learner.comparisons",
            f"{PACKAGE}.learner.fixtures")


class Lesson:
    """One lesson folder: its modules, the kinds it adds and the exercises it registers."""

    def __init__(self, manager: LessonManager, path: Path):
        self.manager, self.path, self.folder = manager, path, path.name
        self.kinds: dict[str, dict[str, Any]] = {family: {} for family in FAMILIES}
        self.exercises: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"Lesson({self.folder!r})"

    def has(self, part: str) -> bool:
        return (self.path / f"{part}.py").is_file()

    def module(self, part: str):
        """The folder's module ``part`` (``reference``, ``exercises``, ``learner``),
        imported: a folder name starts with a digit, so ``import`` cannot reach it."""
        return importlib.import_module(f"{self.manager.package}.{self.folder}.{part}")

    def learner(self):
        """The folder's ``learner.py``: its kinds, and what its courseware reaches."""
        return self.module(LEARNER_PART)

    # -- what the folder registers, each through its Lesson

    def driver(self, cls):
        """Class decorator: a :class:`grader.learner.drivers.Driver` subclass, by its ``kind``."""
        self.manager.add_kind("driver", cls.kind, cls, self)
        return cls

    def comparison(self, cls):
        """Class decorator: a :class:`grader.learner.comparisons.Comparison` subclass."""
        self.manager.add_kind("comparison", cls.kind, cls, self)
        return cls

    def fixture(self, name: str, *, namespace: bool = False) -> Callable:
        """Function decorator: a fixture factory, called with the fixture's parameters.
        With ``namespace``, it is also given, first, the namespace the answer under test
        was defined in (a fixture that runs the learner's own classes)."""
        def decorate(factory):
            factory.wants_namespace = namespace
            self.manager.add_kind("fixture", name, factory, self)
            return factory
        return decorate

    def register(self, *exercises) -> None:
        """Add ``exercises`` (the instructor's side's ``Exercise``) to this lesson."""
        self.manager.add_exercises(self, exercises)


class LessonManager:
    """Every lesson folder under ``root`` (the ``package``), found once, and the kinds and
    exercises they register, each with the lesson that owns it."""

    def __init__(self, root: Path, package: str):
        self.root, self.package = root, package
        self._lessons: dict[str, Lesson] | None = None
        self._kinds: dict[str, dict[str, Any]] = {family: {} for family in FAMILIES}
        self.exercises: dict[str, Any] = {}
        self.owner: dict[str, Lesson] = {}  # exercise name -> its lesson
        self._kinds_loaded = False

    def lessons(self) -> list[Lesson]:
        """The lesson folders, in reading order."""
        if self._lessons is None:
            found = sorted(p for p in self.root.iterdir() if p.is_dir() and FOLDER.match(p.name)) \
                if self.root.is_dir() else []
            self._lessons = {p.name: Lesson(self, p) for p in found}
        return list(self._lessons.values())

    def lesson(self, folder: str) -> Lesson:
        """The lesson of the folder ``folder``; a ``ValueError`` that names it if none."""
        if not isinstance(folder, str) or not FOLDER.match(folder):
            raise ValueError(f"{folder!r} is not a lesson folder's name (NN_slug)")
        self.lessons()
        if folder not in self._lessons:
            raise ValueError(f"there is no lesson folder {folder!r} in {self.root}")
        return self._lessons[folder]

    def of(self, module: str) -> Lesson:
        """The lesson whose folder holds the module named ``module`` (``__name__``)."""
        head, _, rest = module.partition(f"{self.package}.")
        if head or not rest:
            raise ValueError(f"{module!r} is not a module of a lesson folder")
        return self.lesson(rest.split(".")[0])

    # -- kinds

    def add_kind(self, family: str, name: str, obj, owner: Lesson | None) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"a {family} kind needs a name, got {name!r}")
        known = self._kinds[family].get(name)
        if known is not None and getattr(known, "__qualname__", None) != getattr(obj, "__qualname__", None):
            raise ValueError(f"two {family} kinds are named {name!r}: {known!r} and {obj!r}")
        self._kinds[family][name] = obj
        if owner is not None:
            owner.kinds[family][name] = obj

    def load_kinds(self, lessons: bool = True) -> None:
        """Import the engine's kinds, and with ``lessons`` every lesson's ``learner.py``,
        once. A lesson's part is imported only when a kind is not the engine's: a notebook
        whose checks use none costs nothing more."""
        for module in BUILT_IN:
            importlib.import_module(module)
        if lessons and not self._kinds_loaded:
            self._kinds_loaded = True
            for lesson in self.lessons():
                if lesson.has(LEARNER_PART):
                    lesson.learner()

    def find(self, family: str, name: str):
        """The kind ``name`` of ``family``; a ``ValueError`` that names it if none is known."""
        if name not in self._kinds[family]:
            self.load_kinds(lessons=False)
        if name not in self._kinds[family]:
            self.load_kinds()
        found = self._kinds[family].get(name)
        if found is None:
            known = ", ".join(sorted(self._kinds[family])) or "none"
            raise ValueError(f"unknown {family} kind {name!r} (the known ones are: {known})")
        return found

    def kinds(self, family: str) -> dict[str, Any]:
        """Every registered kind of ``family``, the lessons' included."""
        self.load_kinds()
        return dict(self._kinds[family])

    # -- exercises

    def add_exercises(self, lesson: Lesson, exercises) -> None:
        for ex in exercises:
            known = self.exercises.get(ex.name)
            if known is not None and known is not ex:
                raise ValueError(f"two exercises are registered as {ex.name!r}")
            self.exercises[ex.name] = lesson.exercises[ex.name] = ex
            self.owner[ex.name] = lesson


LESSONS = LessonManager(Path(__file__).resolve().parents[1] / "lessons", f"{PACKAGE}.lessons")


# ----------------------------------------------------------------------------- the engine's kinds

def register_driver(cls):
    """Class decorator for the engine's own drivers (a lesson's: ``Lesson.driver``)."""
    LESSONS.add_kind("driver", cls.kind, cls, None)
    return cls


def register_comparison(cls):
    """Class decorator for the engine's own comparisons (a lesson's: ``Lesson.comparison``)."""
    LESSONS.add_kind("comparison", cls.kind, cls, None)
    return cls


def register_fixture(name: str, *, namespace: bool = False) -> Callable:
    """Function decorator for the engine's own fixtures (a lesson's: ``Lesson.fixture``)."""
    def decorate(factory):
        factory.wants_namespace = namespace
        LESSONS.add_kind("fixture", name, factory, None)
        return factory
    return decorate


def lesson_part(folder: str):
    """The lesson folder ``folder``'s ``learner.py``: how its courseware reaches it."""
    return LESSONS.lesson(folder).learner()


def find(family: str, name: str):
    return LESSONS.find(family, name)


def default(family: str, name: str):
    """A new instance of the kind ``name`` with every field at its default."""
    return find(family, name)()


def kinds(family: str) -> dict[str, Any]:
    return LESSONS.kinds(family)


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


__all__ = ["LESSONS", "Lesson", "LessonManager", "default", "find", "from_data", "kinds", "lesson_part",
           "register_comparison", "register_driver", "register_fixture", "to_data"]
