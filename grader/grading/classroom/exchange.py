"""nbgrader's exchange, as ``python -m grader serve`` reads and writes it.

``nbgrader submit`` writes each submission to ``{Exchange.root}/{course_id}/inbound/`` as
a folder named ``{student}+{assignment}+{timestamp}+{random}`` holding the student's
files, ``timestamp.txt`` and ``submission_secret.txt``. ``nbgrader fetch_feedback`` looks,
for each notebook of each submission in the student's cache, for
``{root}/{course_id}/feedback/{md5(secret + notebook)}.html``.

Everything in the inbound folder is written by students, so it is hostile: a folder is
read once, into memory, without following a link (:mod:`grader.grading.classroom.submissions`), and
only then written to ``submitted/`` (which ``nbgrader collect`` would have done with a copy
that follows links). What the file system says is believed, not what the student wrote:

* a file with more than one hard link is the same file as another one elsewhere (perhaps
  one only the grader may read), not a copy the student handed in: it is left out with a
  note, like a link;
* where students are separate users (a Unix account has the student's id; nbgrader's
  ``c.CollectApp.check_owner = False`` turns this off), the folder and everything in it
  must belong to that account: a folder that does not is refused whole (someone handed it
  in under another's name), a file that does not is left out with a note;
* the times it claims (its name's and ``timestamp.txt``'s) are bounded by the file
  system's (:mod:`grader.grading.classroom.times`).
"""
from __future__ import annotations

import hashlib
import html
import os
import pwd
import secrets
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from .autograded import GOOD_SECRET, SECRET, TIMESTAMP
from .submissions import Submission, _Collector, _refused, name_problem, open_folder, read_folder
from .times import judge, parse_time, stamp

SETTLE = 1.0  # seconds a folder must be left alone before it is read (submit writes it in steps)
NO_SECRET_WAIT = 60.0  # a folder without submission_secret.txt is read once this old


class ExchangeError(RuntimeError):
    """The exchange cannot be used (its folders are missing or unreadable)."""


@dataclass
class Entry:
    """One folder of the inbound exchange."""

    name: str  # the folder's name
    path: Path
    student: str
    assignment: str
    claimed: str  # the time in the name, as nbgrader wrote it
    changed: float  # the folder's st_ctime
    problem: str = ""  # why it cannot be graded ("" : it can)

    def at(self) -> tuple[float, str]:
        """When it was handed in by its name (unix seconds), and a note when that claim is not
        believed: the folder's own change time bounds it (:func:`grader.grading.classroom.times.judge`)."""
        claimed = parse_time(self.claimed)
        if claimed is None:
            return self.changed, (f"The time in its exchange name ({self.claimed!r}) cannot be read; "
                                  "the time it reached the exchange counts instead.")
        at, note, _ = judge(claimed, self.changed)
        return at, note


def account(student: str) -> int | None:
    """The uid of the Unix account named as ``student``, or None: students are not
    separate users here."""
    try:
        return pwd.getpwnam(student).pw_uid
    except (KeyError, ValueError):
        return None


def _owner(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def not_own(info: os.stat_result, student: str, uid: int | None) -> str:
    """Why a file or folder of ``student``'s inbound folder, of status ``info``, is not the
    student's own copy, or ""."""
    if not stat.S_ISDIR(info.st_mode) and info.st_nlink > 1:
        return (f"it has {info.st_nlink} hard links: it is the same file as one elsewhere (perhaps "
                "one only the grader may read), not a copy the student handed in")
    if uid is not None and info.st_uid != uid:
        return f"it belongs to {_owner(info.st_uid)}, not to {student}"
    return ""


class Exchange:
    """The course's folders in nbgrader's exchange."""

    def __init__(self, config):
        root = config.Exchange.get("root") or "/srv/nbgrader/exchange"
        self.course_id = config.CourseDirectory.get("course_id") or ""
        if not self.course_id:
            raise ExchangeError("nbgrader_config.py sets no CourseDirectory.course_id: the exchange's "
                                "folders are named after it")
        self.check_owner = config.CollectApp.get("check_owner", True)
        if not isinstance(self.check_owner, bool):
            raise ExchangeError(f"c.CollectApp.check_owner = {self.check_owner!r}: expected True or False")
        self.course = Path(root) / self.course_id
        self.inbound = self.course / "inbound"
        self.feedback = self.course / "feedback"
        self.outbound = self.course / "outbound"

    def released(self) -> list[str]:
        """The assignments released to students (``nbgrader release_assignment``)."""
        try:
            return sorted(p.name for p in self.outbound.iterdir() if p.is_dir() and not p.is_symlink())
        except FileNotFoundError:
            return []

    def check(self) -> None:
        """The inbound folder must be there; the feedback folder is made as
        ``release_feedback`` makes it (students may pass through it, not list it)."""
        if not self.inbound.is_dir():
            raise ExchangeError(
                f"{self.inbound} does not exist: release an assignment first (`nbgrader "
                f"release_assignment NAME` creates the course's exchange folders)")
        if not os.access(self.inbound, os.R_OK | os.X_OK):
            raise ExchangeError(f"cannot list {self.inbound}: permission denied")
        if not self.feedback.is_dir():
            self.feedback.mkdir(mode=0o711)
            os.chmod(self.feedback, 0o711)

    def entries(self, assignments: set[str], known=lambda name: False) -> list[Entry]:
        """Every inbound folder of ``assignments`` but those ``known`` (a name nbgrader cannot
        have written, an unusable student id, a folder not the student's comes with its
        ``problem``)."""
        out = []
        with os.scandir(self.inbound) as it:
            for item in it:
                parts = item.name.rsplit("+", 3)
                if len(parts) < 3 or parts[1] not in assignments or known(item.name):
                    continue
                try:
                    info = item.stat(follow_symlinks=False)
                except OSError:
                    continue
                student = parts[0]
                problem = name_problem(student)
                if problem:
                    problem = f"the student id {student!r} cannot be used: {problem}"
                elif not stat.S_ISDIR(info.st_mode):
                    problem = "it is not a folder (a link or a file)"
                else:
                    problem = self.not_theirs(info, student)
                out.append(Entry(item.name, Path(item.path), student, parts[1], parts[2],
                                 info.st_ctime, problem))
        return out

    def entry(self, name: str) -> Entry:
        """The inbound folder ``name`` (of an entry seen before), to read it again."""
        student, assignment, claimed = name.rsplit("+", 3)[:3]
        return Entry(name, self.inbound / name, student, assignment, claimed, 0.0)

    def not_theirs(self, info: os.stat_result, student: str) -> str:
        """Why an inbound folder of status ``info`` cannot be ``student``'s, or ""."""
        uid = account(student) if self.check_owner else None
        if uid is not None and info.st_uid != uid:
            return (f"its folder belongs to {_owner(info.st_uid)}, not to {student}: someone else "
                    "handed it in under their name")
        return ""

    def settled(self, entry: Entry, now: float) -> bool:
        """Whether ``nbgrader submit`` is done writing the folder: its secret is there and
        nothing changed in it for :data:`SETTLE` seconds (or, without a secret, for
        :data:`NO_SECRET_WAIT`)."""
        try:
            info = os.stat(entry.path, follow_symlinks=False)
            secret = os.lstat(entry.path / SECRET)
        except FileNotFoundError:
            return now - entry.changed > NO_SECRET_WAIT
        except OSError:
            return True  # unreadable: reading it will say so
        return now - max(info.st_ctime, info.st_mtime, secret.st_ctime) >= SETTLE

    def feedback_page(self, secret: str, notebook: str) -> Path:
        """Where ``fetch_feedback`` looks for a notebook's page, as nbgrader names it."""
        from nbgrader.utils import notebook_hash

        return self.feedback / f"{notebook_hash(secret=secret, notebook_id=notebook)}.html"

    def post(self, secret: str, notebooks: list[str], page: str) -> None:
        """Put ``page`` where ``fetch_feedback`` finds it for each of ``notebooks``, replaced
        at once as ``release_feedback`` replaces pages (a copy, then a rename)."""
        for notebook in notebooks:
            target = self.feedback_page(secret, notebook)
            fd, tmp = tempfile.mkstemp(prefix=".notice-", suffix=".html", dir=self.feedback)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(page)
                os.chmod(tmp, 0o644)
                os.replace(tmp, target)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise


@dataclass
class Handed:
    """What one inbound folder held, read once."""

    sub: Submission
    secret: str  # "" when there is none nbgrader could have written
    notebooks: list[str] = field(default_factory=list)  # its top-level notebooks, without .ipynb
    problem: str = ""  # why it is refused whole ("": it is not)


def read_entry(exchange: Exchange, entry: Entry, ignore: list[str]) -> Handed:
    """The folder's files, into memory, no link followed (as ``grade`` reads ``submitted/``),
    each judged by the status of the descriptor it is read from: a file that is not the
    student's own copy (:func:`not_own`) is left out with a note, a folder that is not theirs
    is refused whole. Its ``timestamp.txt`` is believed only within the file system's
    bounds; outside them it is replaced, with a note and a flag."""
    uid = account(entry.student) if exchange.check_owner else None
    refused = Submission(entry.student, entry.assignment)
    try:
        fd = open_folder(entry.path)
    except OSError as exc:
        return Handed(refused, "", problem=f"its folder cannot be read: {_refused(exc, entry.path)}")
    try:
        problem = exchange.not_theirs(os.fstat(fd), entry.student)
        if problem:
            return Handed(refused, "", problem=problem)
        col = _Collector([entry.assignment], ignore, lambda info: not_own(info, entry.student, uid))
        read_folder(entry.student, entry.assignment, fd, col)
    finally:
        os.close(fd)
    subs = col.result()
    sub = subs[0] if subs else refused
    _believe_the_file_system(sub)
    data = sub.files.get(SECRET, b"")
    secret = data.decode("ascii") if GOOD_SECRET.fullmatch(data) else ""
    notebooks = sorted(PurePosixPath(n).stem for n in sub.files if "/" not in n and n.endswith(".ipynb"))
    return Handed(sub, secret, notebooks)


def _believe_the_file_system(sub: Submission) -> None:
    """A ``timestamp.txt`` set back or in the future of when the folder last changed is
    replaced by that time, in the files collected too (so a later ``grade`` of
    ``submitted/`` reads the time believed), with a note and a flag."""
    claimed = parse_time(sub.timestamp) if sub.timestamp else None
    if claimed is None or not sub.changed:
        return
    at, note, flag = judge(claimed, sub.changed)
    if note:
        sub.timestamp = stamp(at)
        sub.files[TIMESTAMP] = sub.timestamp.encode()
        sub.notes.append(note)
        sub.flags.append(flag)


def collect(handed: Handed, submitted: Path) -> Path:
    """Write the submission into ``submitted/{student}/{assignment}/`` as ``nbgrader
    collect`` lays it out (every file, ``timestamp.txt`` and ``submission_secret.txt``
    included), replacing an earlier one. The new folder is written beside it and put in
    its place with renames, so a crash leaves the old folder or the new one."""
    sub = handed.sub
    parent = submitted / sub.student
    parent.mkdir(parents=True, exist_ok=True)
    final = parent / sub.assignment
    new = Path(tempfile.mkdtemp(prefix=f".{sub.assignment}.collecting-", dir=parent))
    try:
        for name, data in sub.files.items():
            target = new.joinpath(*PurePosixPath(name).parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        os.chmod(new, 0o755)
        old = None
        if final.is_symlink() or final.is_file():
            final.unlink()
        elif final.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{sub.assignment}.replaced-", dir=parent))
            os.replace(final, old / "x")
        os.replace(new, final)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(new, ignore_errors=True)
        raise
    return final


def tidy(submitted: Path) -> None:
    """Remove what a collect stopped halfway left behind (its folders start with a dot)."""
    if not submitted.is_dir():
        return
    for student in submitted.iterdir():
        if student.is_dir() and not student.is_symlink():
            for left in student.glob(".*.collecting-*"):
                shutil.rmtree(left, ignore_errors=True)
            for left in student.glob(".*.replaced-*"):
                shutil.rmtree(left, ignore_errors=True)


def secret_sha(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest() if secret else ""


def new_secret() -> bytes:
    return secrets.token_hex(64).encode()


CSS = """
body { font: 15px/1.5 system-ui, sans-serif; max-width: 50rem; margin: 2rem auto; padding: 0 1rem; color: #1f2328; }
h1 { font-size: 1.4rem; } .box { border: 1px solid #d4a72c; background: #fff8c5; padding: .5rem 1rem; }
"""


def notice(assignment: str, student: str, title: str, lines: list[str]) -> str:
    """A short feedback page that says what happened to a submission, no score."""
    body = "".join(f"<p>{html.escape(line)}</p>" for line in lines)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>'
            f"{html.escape(assignment)} · {html.escape(student)}</title><style>{CSS}</style></head>"
            f"<body><h1>{html.escape(assignment)}: {html.escape(title)}</h1>"
            f'<div class="box">{body}</div></body></html>\n')
