"""Read a class's submissions, all of them, into memory before any student code runs.

The input is nbgrader's ``submitted/{student}/{assignment}/...`` tree, or a .zip of one
(with or without a top folder such as ``submitted/``). Zip entries are read directly,
never extracted, so names like ``../x`` cannot write anywhere; symbolic links are
skipped in both forms, so a submission cannot pull in a file from elsewhere.
"""
from __future__ import annotations

import fnmatch
import os
import stat
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

MAX_FILE = 50 * 1024 * 1024  # bytes per file
MAX_SUBMISSION = 200 * 1024 * 1024  # bytes per student and assignment
IGNORE = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", ".*", "__MACOSX"]


class SubmissionsError(RuntimeError):
    """The input cannot be read as a tree of submissions (the grader cannot work)."""


@dataclass
class Submission:
    student: str
    assignment: str
    files: dict[str, bytes] = field(default_factory=dict)  # path inside the assignment folder
    timestamp: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str]:
        return self.student, self.assignment


def _ignored(parts, ignore) -> bool:
    return any(fnmatch.fnmatch(p, pat) for p in parts for pat in ignore)


class _Collector:
    def __init__(self, assignments: list[str], ignore: list[str]):
        self.assignments = set(assignments)
        self.ignore = ignore
        self.subs: dict[tuple[str, str], Submission] = {}
        self.skipped: Counter = Counter()
        self.warnings: list[str] = []

    def add(self, student: str, assignment: str, rel: PurePosixPath, read, size: int) -> None:
        if assignment not in self.assignments:
            self.skipped[f"{student}/{assignment}"] += 1
            return
        sub = self.subs.setdefault((student, assignment), Submission(student, assignment))
        if _ignored(rel.parts, self.ignore) or not rel.parts:
            return
        name = rel.as_posix()
        used = sum(len(v) for v in sub.files.values())
        if size > MAX_FILE or used + size > MAX_SUBMISSION:
            sub.notes.append(f"{name} was not read: it is too large ({size / 2**20:.0f} MB).")
            return
        data = read()
        if name == "timestamp.txt":
            sub.timestamp = data.decode("utf-8", "replace").strip() or None
        sub.files[name] = data

    def result(self) -> list[Submission]:
        for where in sorted(self.skipped):
            self.warnings.append(f"skipped {where}: not an assignment of this course")
        return [self.subs[k] for k in sorted(self.subs)]


def _read_tree(top: Path, col: _Collector) -> None:
    for student_dir in sorted(top.iterdir()):
        if not student_dir.is_dir() or student_dir.is_symlink() or _ignored([student_dir.name], col.ignore):
            continue
        for adir in sorted(student_dir.iterdir()):
            if not adir.is_dir() or adir.is_symlink() or _ignored([adir.name], col.ignore):
                continue
            found = False
            for dirpath, dirnames, filenames in os.walk(adir, followlinks=False):
                dirnames[:] = [d for d in dirnames if not _ignored([d], col.ignore)]
                for fname in filenames:
                    path = Path(dirpath) / fname
                    info = path.lstat()
                    if not stat.S_ISREG(info.st_mode):  # symbolic links, devices, fifos
                        continue
                    rel = PurePosixPath(*path.relative_to(adir).parts)
                    col.add(student_dir.name, adir.name, rel, path.read_bytes, info.st_size)
                    found = True
            if not found:
                col.add(student_dir.name, adir.name, PurePosixPath(), bytes, 0)


def _zip_prefix(names: list[PurePosixPath], assignments: set[str]) -> int:
    """How many leading folders come before ``{student}/{assignment}``."""
    votes = Counter()
    for parts in (n.parts for n in names):
        for k in range(len(parts) - 2):
            if parts[k + 1] in assignments:
                votes[k] += 1
                break
    if not votes:
        raise SubmissionsError("the zip holds no {student}/{assignment}/ folders of this course's "
                               "assignments")
    return votes.most_common(1)[0][0]


def _read_zip(path: Path, col: _Collector) -> None:
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise SubmissionsError(f"{path} is not a readable zip file: {exc}") from exc
    with archive:
        entries = []
        for info in archive.infolist():
            mode = info.external_attr >> 16
            if info.is_dir() or stat.S_ISLNK(mode):
                continue
            parts = PurePosixPath(info.filename.replace("\\", "/")).parts
            if not parts or parts[0] == "/" or any(p in ("..", "") for p in parts):
                col.warnings.append(f"skipped zip entry {info.filename!r}: unsafe path")
                continue
            entries.append((PurePosixPath(*parts), info))
        k = _zip_prefix([e[0] for e in entries], col.assignments)
        for name, info in entries:
            parts = name.parts
            if len(parts) < k + 3 or _ignored(parts[: k + 2], col.ignore):
                continue
            col.add(parts[k], parts[k + 1], PurePosixPath(*parts[k + 2:]),
                    lambda info=info: archive.read(info), info.file_size)


def find_root(path: Path, assignments: list[str]) -> Path:
    """The ``submitted`` folder: ``path`` itself, or ``path/submitted``."""
    if (path / "submitted").is_dir():
        return path / "submitted"
    names = set(assignments)
    if any(child.name in names for child in path.iterdir() if child.is_dir()):
        raise SubmissionsError(
            f"{path} holds assignment folders directly; give the folder above it, the one with "
            "a folder per student (nbgrader's submitted/{student}/{assignment}/)")
    return path


def read_submissions(path: Path, assignments: list[str], ignore: list[str] | None = None
                     ) -> tuple[list[Submission], list[str]]:
    """Every submission under ``path`` (a folder or a .zip), and warnings about what was
    skipped. Raises :class:`SubmissionsError` when there is nothing to read."""
    col = _Collector(assignments, list(ignore or IGNORE))
    if not path.exists():
        raise SubmissionsError(f"{path} does not exist")
    if path.is_file():
        if not zipfile.is_zipfile(path):
            raise SubmissionsError(f"{path} is a file but not a zip file")
        _read_zip(path, col)
    else:
        _read_tree(find_root(path, assignments), col)
    subs = col.result()
    if not subs and not col.skipped:
        raise SubmissionsError(f"no submissions found in {path} (expected "
                               "submitted/{student}/{assignment}/{notebook}.ipynb)")
    return subs, col.warnings

