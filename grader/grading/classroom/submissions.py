"""Read a class's submissions, all of them, into memory before any student code runs.

The input is nbgrader's ``submitted/{student}/{assignment}/...`` tree, or a .zip of one
(with or without a top folder such as ``submitted/``), or one student's folder
(``submitted/alice``). Zip entries are read directly, never extracted, so names like
``../x`` cannot write anywhere; symbolic links are not followed in either form, so a submission
cannot pull in a file from elsewhere. Student and assignment folder names become paths
of the outputs, so a name that is not a plain identifier (a separator, a glob or
control character, a leading dot or dash, bytes that are not UTF-8) is skipped with a
warning that the end of the run repeats under "Needs a look".

One student's bytes cost only that submission. A file that cannot be read (a damaged
or truncated zip entry, permission denied, a link, a FIFO, a device), one past the
submission's limits on size and number, one whose name cannot be written (a part longer
than a file system takes, a file where a folder of the same name was handed in too) is
left out with a note and the flag "files not read"; a file name that is not UTF-8 is
read under a name with each such byte shown as U+FFFD, with a note and the flag
"file names not UTF-8". Both flags put the submission under "Needs a look".
"""
from __future__ import annotations

import errno
import fnmatch
import os
import re
import stat
import struct
import zipfile
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

MAX_FILE = 50 * 1024 * 1024  # bytes per file
MAX_SUBMISSION = 200 * 1024 * 1024  # bytes per student and assignment
MAX_FILES = 1000  # files per student and assignment
# A notebook's structure, bounded as its bytes are: the grading process's own work on a
# notebook (reading, repairing, scanning its code) grows with these, so a notebook over any
# of them is not read (grader.grading.notebook.structure). Each is far above the course's largest
# honest notebook, solved and with its outputs (in brackets).
MAX_DEPTH = 100  # lists and objects inside each other in its JSON (8)
MAX_VALUES = 5_000_000  # values in its JSON: strings, numbers, lists, objects (2,000)
MAX_CELLS = 10_000  # cells (66)
MAX_CELL_OUTPUTS = 1_000  # outputs of one cell (3)
MAX_OUTPUTS = 10_000  # outputs in all (39)
MAX_CELL_LINES = 5_000  # source lines of one cell (43)
MAX_LINES = 50_000  # source lines in all (658)
MAX_CODE = 1_000_000  # characters of code in all (20,291)
MAX_CODE_DEPTH = 100  # how deep a code cell's syntax nests (17)
NOT_READ, NO_TIME, NOT_UTF8 = "files not read", "no readable time", "file names not UTF-8"
MAX_NAME = 100  # characters in a student's or an assignment's name
MAX_PART = 255  # bytes in one part of a file's path: the most common file systems take no more
MAX_PATH = 1024  # bytes in a file's path inside the assignment folder
# What reading one zip entry can raise when the entry is damaged, truncated, encrypted or
# packed in a way this Python cannot unpack.
DAMAGED = (OSError, EOFError, zipfile.BadZipFile, zlib.error, RuntimeError, NotImplementedError,
           ValueError, UnicodeDecodeError)
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
    changed: float = 0.0  # the latest st_ctime of its folder and the files read (0: a zip's)

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


def shown(name: str) -> str:
    """``name`` quoted for a message; a name read from the file system with bytes that are
    not UTF-8 is shown as those bytes (``b'ab\\xff'``)."""
    return repr(os.fsencode(name)) if _undecodable(name) else repr(name)


def _undecodable(name: str) -> bool:
    return any("\udc80" <= ch <= "\udcff" for ch in name)


def as_text(name: str) -> str:
    """A name read from the file system, each byte that is not UTF-8 (a surrogate escape)
    shown as U+FFFD, so that it can be written into JSON, CSV and the console."""
    if not _undecodable(name):
        return name
    return os.fsencode(name).decode("utf-8", "replace")


def path_problem(name: str) -> str:
    """Why a file of this path (inside an assignment folder) cannot be written back, or ""."""
    parts = name.split("/")
    if any(p in ("", ".", "..") for p in parts) or "\0" in name:
        return "its name is not a plain relative path"
    if any(len(p.encode("utf-8", "surrogateescape")) > MAX_PART for p in parts):
        return f"a part of its name is longer than {MAX_PART} bytes, which no common file system takes"
    if len(name.encode("utf-8", "surrogateescape")) > MAX_PATH:
        return f"its name is longer than {MAX_PATH} bytes"
    return ""


def name_problem(name: str) -> str:
    """Why ``name`` cannot be a student's or an assignment's folder name, or ""."""
    if _undecodable(name):
        return "it is not UTF-8"
    if not name or len(name) > MAX_NAME:
        return f"it is empty or longer than {MAX_NAME} characters"
    if name[0] in ".-":
        return "it starts with a dot or a dash"
    if not name.isprintable() or UNSAFE.search(name):
        return "it holds a separator, space, quote, glob or control character"
    return ""


class _Collector:
    def __init__(self, assignments: list[str], ignore: list[str], guard=None):
        self.assignments = set(assignments)
        self.ignore = ignore
        # why a file or folder may not be read, from its descriptor's status ("": it may)
        self.guard = guard or (lambda info: "")
        self.subs: dict[tuple[str, str], Submission] = {}
        self.skipped: Counter = Counter()
        self.unsafe: dict[str, str] = {}
        self.warnings: list[str] = []
        self.look: list[str] = []  # what the end of the run repeats under "Needs a look"

    def submission(self, student: str, assignment: str) -> Submission | None:
        """The submission of ``student`` for ``assignment``, or None when either name is not
        one to grade (then a warning says so)."""
        if assignment not in self.assignments:
            self.skipped[f"{as_text(student)}/{as_text(assignment)}"] += 1
            return None
        problem = name_problem(student)
        if problem:
            self.unsafe.setdefault(student, problem)
            return None
        return self.subs.setdefault((student, assignment), Submission(student, assignment))

    def not_read(self, student: str, assignment: str, rel: PurePosixPath, why: str) -> None:
        """A file or folder of a submission that could not be read: a note, and a flag."""
        sub = self.submission(student, assignment)
        if sub is None or _ignored(rel.parts, self.ignore):
            return
        what = repr(as_text(rel.as_posix())) if rel.parts else "The assignment folder"
        sub.notes.append(f"{what} was not read: {why}.")
        if NOT_READ not in sub.flags:
            sub.flags.append(NOT_READ)

    def saw(self, student: str, assignment: str, info: os.stat_result) -> None:
        """The submission's folder or one of its files has this status: keep its change time."""
        sub = self.submission(student, assignment)
        if sub is not None:
            sub.changed = max(sub.changed, info.st_ctime)

    def add(self, student: str, assignment: str, rel: PurePosixPath, read, size: int) -> None:
        sub = self.submission(student, assignment)
        if sub is None or _ignored(rel.parts, self.ignore) or not rel.parts:
            return
        name = as_text(rel.as_posix())
        if name != rel.as_posix():
            sub.notes.append(f"The file name {shown(rel.as_posix())} is not UTF-8: it was read as "
                             f"{name!r}.")
            if NOT_UTF8 not in sub.flags:
                sub.flags.append(NOT_UTF8)
        problem = path_problem(name)
        if not problem and name in sub.files:
            problem = "another file of the submission has the same name"
        if problem:
            self.not_read(student, assignment, PurePosixPath(name), problem)
            return
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
        try:
            data = read()
        except DAMAGED as exc:
            self.not_read(student, assignment, PurePosixPath(name), _why(exc))
            return
        if len(data) > MAX_FILE or used + len(data) > MAX_SUBMISSION:  # larger than it said
            self.not_read(student, assignment, PurePosixPath(name), "it is too large")
            return
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
            line = f"skipped the student folder {shown(student)}: not usable as a student id ({problem})"
            self.warnings.append(line)
            self.look.append(line)
        for sub in self.subs.values():
            sub.files.pop("", None)
            folders = {"/".join(n.split("/")[:i]) for n in sub.files for i in range(1, n.count("/") + 1)}
            for name in sorted(folders & set(sub.files)):  # cannot be written beside the folder
                del sub.files[name]
                self.not_read(sub.student, sub.assignment, PurePosixPath(name),
                              "a folder of the same name was handed in too")
        return [self.subs[k] for k in sorted(self.subs)]


def _why(exc: BaseException) -> str:
    """What went wrong reading a file, in a few words (never a traceback)."""
    if isinstance(exc, zipfile.BadZipFile) and "CRC" in str(exc):
        return "its zip entry is damaged (its checksum is wrong, as after a broken download)"
    if isinstance(exc, (EOFError, zlib.error, zipfile.BadZipFile)):
        return f"its zip entry is damaged or cut short ({type(exc).__name__}: {exc})"
    if isinstance(exc, PermissionError):
        return "permission denied"
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return f"{type(exc).__name__}: {exc}"


def _kind(mode: int) -> str:
    """What a file that is not a regular file is."""
    if stat.S_ISLNK(mode):
        return "it is a symbolic link, which is never followed"
    if stat.S_ISFIFO(mode):
        return "it is a FIFO (a named pipe), not a file"
    if stat.S_ISSOCK(mode):
        return "it is a socket, not a file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "it is a device, not a file"
    return "it is not a regular file"


# Each entry is opened relative to its folder's descriptor, never through a link (its own
# name included), and judged by the status of the descriptor read from: nothing can be
# swapped in between a check and the read. O_NONBLOCK: a FIFO put in a file's place does
# not wait for a writer; O_NOCTTY: a terminal never becomes the grader's.
OPEN = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


def open_folder(path, dir_fd: int | None = None) -> int:
    """A folder's descriptor, opened without following a link."""
    return os.open(path, OPEN | os.O_DIRECTORY, dir_fd=dir_fd)


def _read_fd(fd: int) -> bytes:
    """A regular file's bytes, at most ``MAX_FILE`` + 1."""
    chunks, left = [], MAX_FILE + 1
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _listing(folder: Path, col: _Collector) -> list[Path]:
    """The entries of a folder of the tree, or none (and a warning) when it cannot be read."""
    try:
        return sorted(folder.iterdir())
    except OSError as exc:
        line = f"could not read the folder {shown(str(folder))}: {_why(exc)}"
        col.warnings.append(line)
        col.look.append(line)
        return []


def _read_tree(top: Path, col: _Collector, only: str | None = None) -> None:
    for student_dir in _listing(top, col):
        if only is not None and student_dir.name != only:
            continue
        if not student_dir.is_dir() or student_dir.is_symlink() or _ignored([student_dir.name], col.ignore):
            continue
        for adir in _listing(student_dir, col):
            if not adir.is_dir() or adir.is_symlink() or _ignored([adir.name], col.ignore):
                continue
            _read_assignment(student_dir.name, adir, col)


def _read_assignment(student: str, adir: Path, col: _Collector, assignment: str | None = None) -> None:
    """Read ``adir``, the folder of ``student``'s ``assignment`` (by default, the folder's name)."""
    assignment = assignment or adir.name
    try:
        fd = open_folder(adir)
    except OSError as exc:
        col.not_read(student, assignment, PurePosixPath(), _refused(exc, adir))
        return
    try:
        read_folder(student, assignment, fd, col)
    finally:
        os.close(fd)


def read_folder(student: str, assignment: str, fd: int, col: _Collector,
                rel: PurePosixPath = PurePosixPath()) -> bool:
    """Read the open folder ``fd`` (``rel`` inside ``student``'s ``assignment``) and all
    under it; return whether it held anything but folders."""
    col.saw(student, assignment, os.fstat(fd))
    try:
        with os.scandir(fd) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as exc:
        col.not_read(student, assignment, rel, _why(exc))
        return True
    found = False
    for entry in entries:
        if not _ignored([entry.name], col.ignore):
            found = _read_entry(student, assignment, fd, entry, rel / entry.name, col) or found
    if not found and not rel.parts:
        col.add(student, assignment, rel, bytes, 0)
    return found


def _read_entry(student: str, assignment: str, dir_fd: int, entry: os.DirEntry, rel: PurePosixPath,
                col: _Collector) -> bool:
    """Read one entry of a folder; return whether it held anything but folders."""
    if not (entry.is_file(follow_symlinks=False) or entry.is_dir(follow_symlinks=False)):
        col.not_read(student, assignment, rel, _kind(_mode(entry)))  # never opened: a device may act
        return True
    try:
        fd = os.open(entry.name, OPEN, dir_fd=dir_fd)
    except OSError as exc:
        col.not_read(student, assignment, rel, _refused(exc, entry.name, dir_fd))
        return True
    try:
        info = os.fstat(fd)
        folder = stat.S_ISDIR(info.st_mode)
        problem = "" if folder or stat.S_ISREG(info.st_mode) else _kind(info.st_mode)
        if not problem and folder and len(str(rel).encode("utf-8", "surrogateescape")) > MAX_PATH:
            problem = f"its name is longer than {MAX_PATH} bytes"  # this bounds the folders open at once
        problem = problem or col.guard(info)
        if problem:
            col.not_read(student, assignment, rel, problem)
            return True
        if folder:
            return read_folder(student, assignment, fd, col, rel)
        col.add(student, assignment, rel, lambda: _read_fd(fd), info.st_size)
        col.saw(student, assignment, os.fstat(fd))  # after the read: any write before it counts
        return True
    finally:
        os.close(fd)


def _mode(entry: os.DirEntry) -> int:
    try:
        return entry.stat(follow_symlinks=False).st_mode
    except OSError:
        return 0


def _refused(exc: OSError, name, dir_fd: int | None = None) -> str:
    """Why opening ``name`` failed, in a few words: O_NOFOLLOW refuses a link with ELOOP."""
    if exc.errno == errno.ELOOP:
        return _kind(stat.S_IFLNK)
    if exc.errno == errno.ENXIO:  # a socket cannot be opened
        try:
            return _kind(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
        except OSError:
            pass
    return _why(exc)


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


def _open_zip(path: Path) -> zipfile.ZipFile:
    """The archive; one whose entries say their names are UTF-8 when some are not (which
    Python's zipfile refuses whole) is opened with those names read as code page 437, as
    zipfile reads names that do not say."""
    try:
        return zipfile.ZipFile(path)
    except UnicodeDecodeError:
        pass
    except (zipfile.BadZipFile, OSError) as exc:
        raise SubmissionsError(f"{path} is not a readable zip file: {exc}") from exc
    import io

    try:
        data = bytearray(path.read_bytes())
        _unflag_bad_utf8_names(data)
        return zipfile.ZipFile(io.BytesIO(bytes(data)))
    except (zipfile.BadZipFile, OSError, UnicodeDecodeError, struct.error, ValueError) as exc:
        raise SubmissionsError(f"{path} is not a readable zip file: some entry names say they are "
                               f"UTF-8 and are not, and the archive could not be read around them "
                               f"({exc})") from exc


UTF8_FLAG = 0x800  # bit 11 of an entry's flags: its name is UTF-8


def _unflag_bad_utf8_names(data: bytearray) -> None:
    """Clear the UTF-8 flag of each entry (central directory and local header) whose name
    is not UTF-8. Only plain archives (not ZIP64) are walked; others raise ValueError."""
    end = data.rfind(b"PK\x05\x06", max(0, len(data) - 65557))
    if end < 0:
        raise ValueError("no end of central directory")
    count, size, offset = struct.unpack_from("<HII", data, end + 10)
    if offset == 0xFFFFFFFF or count == 0xFFFF:
        raise ValueError("a ZIP64 archive")
    shift = end - size - offset  # bytes before the archive (a self-extracting stub)
    pos = offset + shift
    for _ in range(count):
        if data[pos:pos + 4] != b"PK\x01\x02":
            raise ValueError("a damaged central directory")
        flags, = struct.unpack_from("<H", data, pos + 8)
        n, m, k = struct.unpack_from("<HHH", data, pos + 28)
        local, = struct.unpack_from("<I", data, pos + 42)
        name = bytes(data[pos + 46:pos + 46 + n])
        if flags & UTF8_FLAG:
            try:
                name.decode("utf-8")
            except UnicodeDecodeError:
                struct.pack_into("<H", data, pos + 8, flags & ~UTF8_FLAG)
                at = local + shift
                if data[at:at + 4] == b"PK\x03\x04":
                    lflags, = struct.unpack_from("<H", data, at + 6)
                    struct.pack_into("<H", data, at + 6, lflags & ~UTF8_FLAG)
        pos += 46 + n + m + k


def _entry_name(info: zipfile.ZipInfo) -> str:
    """An entry's name as a file system would give it: its bytes read as UTF-8, each byte
    that is not UTF-8 as a surrogate escape (names that do not say they are UTF-8 are
    read by zipfile as code page 437, which gives their bytes back exactly)."""
    utf8 = info.flag_bits & UTF8_FLAG
    raw = info.orig_filename.encode("utf-8" if utf8 else "cp437")
    return raw.decode("utf-8", "surrogateescape")


def _read_zip(path: Path, col: _Collector) -> None:
    archive = _open_zip(path)
    with archive:
        entries = []
        for info in archive.infolist():
            if info.is_dir():
                continue
            filename = _entry_name(info)
            parts = PurePosixPath(filename.replace("\\", "/")).parts
            if not parts or parts[0] == "/" or any(p in ("..", "") for p in parts):
                line = f"skipped zip entry {shown(filename)}: unsafe path"
                col.warnings.append(line)
                col.look.append(line)
                continue
            entries.append((PurePosixPath(*parts), info))
        k = _zip_prefix([e[0] for e in entries], col.assignments)
        for name, info in entries:
            parts = name.parts
            if len(parts) < k + 3 or _ignored(parts[: k + 2], col.ignore):
                continue
            student, assignment, rel = parts[k], parts[k + 1], PurePosixPath(*parts[k + 2:])
            if stat.S_ISLNK(info.external_attr >> 16):
                col.not_read(student, assignment, rel, _kind(stat.S_IFLNK))
                continue
            col.add(student, assignment, rel, lambda info=info: archive.read(info), info.file_size)


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


def read_submissions(path: Path, assignments: list[str], ignore: list[str] | None = None,
                     look: list[str] | None = None) -> tuple[list[Submission], list[str]]:
    """Every submission under ``path`` (a folder, one student's folder or a .zip), and
    warnings about what was skipped; those of the warnings that mean a student's work was
    not graded (an unusable student folder, an unreadable folder, an unsafe zip entry) are
    also added to ``look``. Raises :class:`SubmissionsError` when there is nothing to read."""
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
    if look is not None:
        look.extend(col.look)
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
