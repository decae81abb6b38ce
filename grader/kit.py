"""``python -m grader kit DIR``: write what a student receives.

The kit is the learner's side of the course and nothing else:

* ``notebooks/``: the released notebooks, each with its recorded checks;
* ``grader/``: the learner's side of the package (``grader/__init__.py``,
  ``grader/learner/`` and each lesson folder's ``learner.py``, the kinds of driver,
  comparison and fixture that lesson adds: ``grader.learner.plugins``), with a command
  line that only runs notebooks;
* ``courseware/`` and ``assets/`` (without the worksheet's answer key);
* a student README, a ``Makefile`` whose ``make lab`` sets everything up, the pinned
  ``constraints.txt`` and a ``pyproject.toml`` that installs the two packages.

It holds no ``solutions/``, no reference implementation, no catalogued mistake's
implementation, no hidden case or seed: nothing of ``grader/lessons`` but each ``learner.py``, none of ``grader/reference``,
release, kit or grading is copied. ``tests/test_kit.py`` searches a built kit for every
line of the solutions, references and mistakes, and runs its notebooks.

The kit is also what the grading sandbox holds (``grader.grading.notebook.sandbox``); ``KIT.json``
lists every file with its SHA-256, and :func:`kit_hash` names a kit's content;
:func:`reference_hash` names the instructor's side that judges what runs in it.
"""
from __future__ import annotations

import fnmatch
import hashlib
import json
import shutil
from pathlib import Path

from .course import NOTEBOOKS, assignments
from .learner import recording

TEMPLATES = Path(__file__).with_name("kit_files")
CHECKOUT = Path(__file__).resolve().parents[1]
MANIFEST = "KIT.json"
LEARNER_PACKAGE = ("grader/__init__.py", "grader/learner")
LESSON_PARTS = "grader/lessons/*/learner.py"  # the learner's side of each lesson folder
COURSEWARE = "courseware"
# Answer keys are the instructor's: the worksheet's key answers lesson 03's WORKSHEET.
NOT_FOR_STUDENTS = ("worksheet_key.*",)
TEXT = {".py", ".md", ".json", ".ipynb", ".toml", ".txt", ""}


class KitError(RuntimeError):
    pass


def _python_files(top: Path) -> list[Path]:
    if top.is_file():
        return [top]
    return sorted(p for p in top.rglob("*.py") if "__pycache__" not in p.parts)


def learner_files() -> list[Path]:
    """Every module of the learner's side of the package, in this checkout."""
    found = [p for part in LEARNER_PACKAGE for p in _python_files(CHECKOUT / part)]
    return found + sorted(CHECKOUT.glob(LESSON_PARTS))


def kit_files(root: Path) -> dict[str, Path | str]:
    """Every file of the kit: its path in the kit -> the file it is copied from (a Path)
    or its content (a str). The packages come from this checkout (the code that runs);
    the notebooks and assets from the course at ``root``."""
    files: dict[str, Path | str] = {}
    for part in (*LEARNER_PACKAGE, COURSEWARE):
        found = _python_files(CHECKOUT / part) if (CHECKOUT / part).exists() else []
        if not found:
            raise KitError(f"{CHECKOUT / part} is missing: the learner's side of the package")
    for path in [*learner_files(), *_python_files(CHECKOUT / COURSEWARE)]:
        files[path.relative_to(CHECKOUT).as_posix()] = path
    files["grader/__main__.py"] = TEMPLATES / "__main__.py"
    for path in sorted((root / "assets").glob("*")):
        if path.is_file() and not any(fnmatch.fnmatch(path.name, p) for p in NOT_FOR_STUDENTS):
            files[f"assets/{path.name}"] = path
    for name in assignments(root):
        folder = root / NOTEBOOKS / name
        notebook = folder / f"{name}.ipynb"
        checks = recording.recording_path(notebook)
        for path in (notebook, checks):
            if not path.is_file():
                raise KitError(f"{path.relative_to(root)} is missing: run `python -m grader release`")
            files[path.relative_to(root).as_posix()] = path
    files["README.md"] = TEMPLATES / "README.md"
    files["Makefile"] = TEMPLATES / "Makefile"
    files["pyproject.toml"] = TEMPLATES / "pyproject.toml"
    files[".gitignore"] = TEMPLATES / "gitignore"
    files["constraints.txt"] = CHECKOUT / "constraints.txt"
    return files


def _content(source: Path | str) -> bytes:
    return source.read_bytes() if isinstance(source, Path) else source.encode("utf-8")


def manifest(files: dict[str, Path | str]) -> dict[str, str]:
    return {rel: hashlib.sha256(_content(src)).hexdigest() for rel, src in sorted(files.items())}


def kit_hash(root: Path) -> str:
    """A name for the content of the kit ``root`` would build (what a grading worker
    compares with the driver's)."""
    text = json.dumps(manifest(kit_files(root)), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


# What computes a verdict besides the kit: the instructor's side of the package and the
# libraries the live reference computes with.
VERDICT_LIBRARIES = ("numpy", "torch")


def reference_files() -> dict[str, Path]:
    """The instructor's side of the package (references, lessons with their cases and
    mistakes, the trusted checker and the grading pipeline): every module of ``grader/``
    that the kit does not ship."""
    shipped = {p.relative_to(CHECKOUT).as_posix() for p in learner_files()}
    return {rel: path for path in _python_files(CHECKOUT / "grader")
            if (rel := path.relative_to(CHECKOUT).as_posix()) not in shipped}


def reference_hash() -> str:
    """A name for what reaches verdicts outside the sandbox: the content of
    :func:`reference_files` and the installed versions of ``VERDICT_LIBRARIES`` (what a
    grading worker compares with the driver's, besides :func:`kit_hash`)."""
    from importlib.metadata import PackageNotFoundError, version

    def installed(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "not installed"

    content = {"files": manifest(reference_files()),
               "libraries": {name: installed(name) for name in VERDICT_LIBRARIES}}
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()


def build_kit(root: Path, out: Path, *, force: bool = False) -> Path:
    """Write the kit of the course at ``root`` into ``out`` (a new or empty folder, or,
    with ``force``, one that holds an earlier kit)."""
    out = out.resolve()
    if out.exists() and any(out.iterdir()):
        if not (force and (out / MANIFEST).is_file()):
            raise KitError(f"{out} is not empty (use --force to replace an earlier kit there)")
    course = root.resolve()
    own = [course] + [course / d for d in ("solutions", NOTEBOOKS, "grader", COURSEWARE, "assets", "tests")]
    if any(out == d or d in out.parents for d in own[1:]) or out == course:
        raise KitError(f"write the kit into a folder of its own, not into {out}")
    if out.exists() and any(out.iterdir()):
        shutil.rmtree(out)
    files = kit_files(root)
    for rel, source in files.items():
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(_content(source))
    (out / MANIFEST).write_text(json.dumps({"files": manifest(files)}, indent=1, sort_keys=True) + "\n",
                                encoding="utf-8")
    return out
