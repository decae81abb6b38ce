"""Recorded checks: what ``release`` writes next to each released notebook, as data.

``notebooks/NN_slug/NN_slug.checks.json`` holds, for every exercise the notebook checks,
its visible cases, the reference's outcome on each, and each catalogued mistake's
outcome (a value, or an error's type and message), with the exercise's description
(driver, comparison, shortcut rules, bad inputs, hint). It is JSON in the format of
``grader.learner.codec``: no pickle and no code, so reading it runs nothing.

A notebook's ``check`` finds the recording wherever the notebook is opened: in the
kernel's working folder (the notebook's own folder, a copy elsewhere, a lesson fetched
through nbgrader's exchange), in ``$ATTENTION_COURSE_RECORDINGS``, or in the course the
package was installed from (``notebooks/*/``).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from . import codec
from .cases import Expectations

FORMAT = 1
SUFFIX = ".checks.json"
PACKAGE_ROOT = Path(__file__).resolve().parents[2]


class RecordingError(RuntimeError):
    pass


def recording_path(notebook: Path) -> Path:
    """Where the recording of ``notebook`` (``NN_slug.ipynb``) lives: beside it."""
    return notebook.with_name(notebook.stem + SUFFIX)


def dumps(lesson: str, expectations: dict[str, Expectations]) -> str:
    data = {"format": FORMAT, "lesson": lesson,
            "exercises": {name: codec.encode(exp.to_data()) for name, exp in expectations.items()}}
    return _layout(data, 0) + "\n"


def _layout(tree, depth: int) -> str:
    """JSON with the outer levels on their own lines (an exercise, its cases, each
    outcome) and everything deeper compact, so a diff shows which case changed."""
    compact = json.dumps(tree, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    if depth >= 4 or len(compact) < 100 or (isinstance(tree, dict) and "$" in tree) \
            or not isinstance(tree, (dict, list)):
        return compact
    pad, inner = " " * depth, " " * (depth + 1)
    if isinstance(tree, dict):
        items = [f"{inner}{json.dumps(k, ensure_ascii=False)}: {_layout(v, depth + 1)}"
                 for k, v in tree.items()]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    items = [f"{inner}{_layout(v, depth + 1)}" for v in tree]
    return "[\n" + ",\n".join(items) + f"\n{pad}]"


class Recording:
    """One recording file; an exercise is decoded the first time it is asked for."""

    def __init__(self, path: Path):
        self.path = path
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise RecordingError(f"{path} could not be read: {exc}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise RecordingError(f"{path} is not a recording this course can read "
                                 f"(format {data.get('format') if isinstance(data, dict) else '?'})")
        self.lesson = data.get("lesson", "")
        self._raw: dict = data.get("exercises", {})
        self._decoded: dict[str, Expectations] = {}

    def names(self) -> list[str]:
        return list(self._raw)

    def get(self, name: str) -> Expectations | None:
        if name not in self._raw:
            return None
        if name not in self._decoded:
            self._decoded[name] = Expectations.from_data(codec.decode(self._raw[name]))
        return self._decoded[name]


_CACHE: dict[tuple[str, float], Recording] = {}


def _load(path: Path) -> Recording | None:
    try:
        stamp = path.stat().st_mtime
    except OSError:
        return None
    key = (str(path), stamp)
    if key not in _CACHE:
        try:
            _CACHE[key] = Recording(path)
        except RecordingError:
            return None
    return _CACHE[key]


def search_paths() -> list[Path]:
    """Recording files, the nearest first."""
    found: list[Path] = []
    extra = os.environ.get("ATTENTION_COURSE_RECORDINGS", "")
    folders = [Path(p) for p in extra.split(os.pathsep) if p] + [Path.cwd()]
    for folder in folders:
        found += sorted(folder.glob(f"*{SUFFIX}")) if folder.is_dir() else []
    found += sorted((PACKAGE_ROOT / "notebooks").glob(f"*/*{SUFFIX}"))
    return list(dict.fromkeys(found))


def find(name: str) -> Expectations | None:
    """The recorded expectations of exercise ``name``, from the nearest recording."""
    for path in search_paths():
        recording = _load(path)
        if recording is not None:
            found = recording.get(name)
            if found is not None:
                return found
    return None


def known() -> list[str]:
    names: list[str] = []
    for path in search_paths():
        recording = _load(path)
        if recording is not None:
            names += [n for n in recording.names() if n not in names]
    return names
