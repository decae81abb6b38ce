"""Read a class's submissions, all of them, into memory before any student code runs.

The input is nbgrader's ``submitted/{student}/{assignment}/...`` tree, or a .zip of one
(with or without a top folder such as ``submitted/``), or one student's folder
(``submitted/alice``). Zip entries are read directly, never extracted, so names like
``../x`` cannot write anywhere; symbolic links are skipped in both forms, so a submission
cannot pull in a file from elsewhere. Student and assignment folder names become paths
of the outputs, so a name that is not a plain identifier (a separator, a glob or
control character, a leading dot or dash) is skipped with a warning; so are files past
a submission's limits on size and number.
"""
from __future__ import annotations

import fnmatch
import os
import re
import stat
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

MAX_FILE = 50 * 1024 * 1024  # bytes per file
MAX_SUBMISSION = 200 * 1024 * 1024  # bytes per student and assignment
MAX_FILES = 1000  # files per student and assignment
NOT_READ, NO_TIME = "files not read", "no readable time"
MAX_NAME = 100  # characters in a student's or an assignment's name
# Characters a student id may not hold: path separators, glob and shell metacharacters,
# whitespace; nbgrader itself splits exchange names at "+".
UNSAFE = re.compile(r"[/\\*?\[\]{}+'\"`$|<>:;,!#%&=~\s]")
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
    flags: list[str] = field(default_factory=list)  # short labels for the instructor

    @property
    def key(self) -> tuple[str, str]:
        return self.student, self.assignment


def _ignored(parts, ignore) -> bool:
    return any(fnmatch.fnmatch(p, pat) for p in parts for pat in ignore)


# What nbgrader writes ("2025-03-01 12:00:00.000000 UTC", a zone name or offset last) and ISO
# 8601 times. Anything else is not parsed at all: nbgrader's parser would read a zone
# name as a file name.
TIME = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?"
                  r"( ?(Z|[+-]\d{2}:?\d{2}|[A-Za-z][A-Za-z_]{0,29}(/[A-Za-z][A-Za-z_+-]{0,29}){0,2}))?")


def read_timestamp(data: bytes) -> tuple[str | None, str]:
    """The submission time in ``timestamp.txt`` as nbgrader will read it, or None and why
    not (then nobody can say whether the submission was late)."""
    text = data[:200].decode("utf-8", "replace").strip()
    if not text:
        return None, ""
    if len(data) > 200 or not TIME.fullmatch(text):
        return None, (f"timestamp.txt does not hold a time ({text[:40]!r}), so whether the "
                      "submission was late could not be told.")
    from nbgrader.utils import parse_utc

    try:
        parse_utc(text)
    except (ValueError, OverflowError, TypeError) as exc:
        return None, (f"timestamp.txt does not hold a time ({text[:40]!r}: {exc}), so whether "
                      "the submission was late could not be told.")
    return text, ""


def name_problem(name: str) -> str:
    """Why ``name`` cannot be a student's or an assignment's folder name, or ""."""
    if not name or len(name) > MAX_NAME:
        return f"it is empty or longer than {MAX_NAME} characters"
    if name[0] in ".-":
        return "it starts with a dot or a dash"
    if not name.isprintable() or UNSAFE.search(name):
        return "it holds a separator, space, quote, glob or control character"
    return ""


class _Collector:
    def __init__(self, assignments: list[str], ignore: list[str]):
        self.assignments = set(assignments)
        self.ignore = ignore
        self.subs: dict[tuple[str, str], Submission] = {}
        self.skipped: Counter = Counter()
        self.unsafe: dict[str, str] = {}
        self.warnings: list[str] = []

    def add(self, student: str, assignment: str, rel: PurePosixPath, read, size: int) -> None:
        if assignment not in self.assignments:
            self.skipped[f"{student}/{assignment}"] += 1
            return
        problem = name_problem(student)
        if problem:
            self.unsafe.setdefault(student, problem)
            return
        sub = self.subs.setdefault((student, assignment), Submission(student, assignment))
        if _ignored(rel.parts, self.ignore) or not rel.parts:
            return
        name = rel.as_posix()
        used = sum(len(v) for v in sub.files.values())
        if len(sub.files) >= MAX_FILES:
            if len(sub.files) == MAX_FILES:
                sub.notes.append(f"Only the first {MAX_FILES} files were read; {name!r} and any "
                                 "after it were not.")
                sub.flags.append(NOT_READ)
                sub.files[""] = b""  # a marker, removed in result(): the note is said once
            return
        if size > MAX_FILE or used + size > MAX_SUBMISSION:
            sub.notes.append(f"{name!r} was not read: it is too large ({size / 2**20:.0f} MB).")
            if NOT_READ not in sub.flags:
                sub.flags.append(NOT_READ)
            return
        data = read()
        if name == "timestamp.txt":
            sub.timestamp, problem = read_timestamp(data)
            if problem:
                sub.notes.append(problem)
                sub.flags.append(NO_TIME)
        sub.files[name] = data

    def result(self) -> list[Submission]:
        for where in sorted(self.skipped):
            self.warnings.append(f"skipped {where}: not an assignment of this course")
        for student, problem in sorted(self.unsafe.items()):
            self.warnings.append(f"skipped the student folder {student!r}: not usable as a "
                                 f"student id ({problem})")
        for sub in self.subs.values():
            sub.files.pop("", None)
        return [self.subs[k] for k in sorted(self.subs)]


def _read_tree(top: Path, col: _Collector, only: str | None = None) -> None:
    for student_dir in sorted(top.iterdir()):
        if only is not None and student_dir.name != only:
            continue
        if not student_dir.is_dir() or student_dir.is_symlink() or _ignored([student_dir.name], col.ignore):
            continue
        for adir in sorted(student_dir.iterdir()):
            if not adir.is_dir() or adir.is_symlink() or _ignored([adir.name], col.ignore):
                continue
            found = False
            for dirpath, dirnames, filenames in os.walk(adir, followlinks=False):
                dirnames[:] = sorted(d for d in dirnames if not _ignored([d], col.ignore))
                for fname in sorted(filenames):
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


def find_root(path: Path, assignments: list[str]) -> tuple[Path, str | None]:
    """The ``submitted`` folder (``path`` itself, or ``path/submitted``) and, when ``path``
    is one student's folder (it holds assignment folders directly), that student."""
    if (path / "submitted").is_dir():
        return path / "submitted", None
    names = set(assignments)
    path = path.resolve()
    if path.name in names:
        raise SubmissionsError(f"{path} is one assignment's folder; give its student's folder "
                               f"({path.parent}) and --assignment {path.name}, or the folder with a "
                               "folder per student")
    if any(child.name in names for child in path.iterdir() if child.is_dir()):
        return path.parent, path.name
    return path, None


def read_submissions(path: Path, assignments: list[str], ignore: list[str] | None = None
                     ) -> tuple[list[Submission], list[str]]:
    """Every submission under ``path`` (a folder, one student's folder or a .zip), and
    warnings about what was skipped. Raises :class:`SubmissionsError` when there is
    nothing to read."""
    col = _Collector(assignments, list(ignore or IGNORE))
    if not path.exists():
        raise SubmissionsError(f"{path} does not exist")
    if path.is_file():
        if not zipfile.is_zipfile(path):
            raise SubmissionsError(f"{path} is a file but not a zip file")
        _read_zip(path, col)
    else:
        root, student = find_root(path, assignments)
        _read_tree(root, col, student)
    subs = col.result()
    if not subs and not col.skipped:
        raise SubmissionsError(f"no submissions found in {path} (expected "
                               "submitted/{student}/{assignment}/{notebook}.ipynb)")
    return subs, col.warnings



def select(subs: list[Submission], students: list[str] | None, assignments: list[str] | None,
           course: list[str]) -> list[Submission]:
    """The submissions of ``students`` for ``assignments`` (each None: all). A name that
    matches nothing is an error that lists what there is."""
    unknown = sorted(set(assignments or ()) - set(course))
    if unknown:
        raise SubmissionsError(f"no assignment {', '.join(unknown)} in this course (there are "
                               f"{', '.join(course)})")
    have = sorted({s.student for s in subs})
    missing = sorted(set(students or ()) - set(have))
    if missing:
        shown = ", ".join(have[:20]) + (", ..." if len(have) > 20 else "")
        raise SubmissionsError(f"no submission from {', '.join(missing)} (the students who "
                               f"submitted are {shown or 'none'})")
    chosen = [s for s in subs if (not students or s.student in students)
              and (not assignments or s.assignment in assignments)]
    if not chosen:
        raise SubmissionsError(f"{', '.join(students or ['nobody'])} submitted none of "
                               f"{', '.join(assignments or course)}")
    return chosen
