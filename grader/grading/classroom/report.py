"""What a batch writes for people and programs: JSON results, grades.csv, the console,
each from the submissions' results in memory (``grader.grading.classroom.submission_result``).

The console says, for every submission, its score and then each of its notes (a missing,
unreadable or renamed notebook, lateness, stopped cells, integrity notes), and ends with
the short list of submissions a person should look at (:func:`summary`).
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from ...course import NOTEBOOKS, SOLUTIONS
from ..notebook.status import JobStatus

# Folders of a course that grading output must never be written into.
COURSE_FOLDERS = (SOLUTIONS, NOTEBOOKS, "autograded", "feedback", "submitted", "grader", "courseware",
                  "assets", "tests", ".nbgrader_exchange")
GITIGNORE = ("# Written by `python -m grader grade`: grades and feedback are student data and\n"
             "# never enter git.\n*\n")


class OutError(RuntimeError):
    """``--out`` cannot take the outputs."""


def write_json(path: Path, record: dict) -> None:
    """``record`` as JSON, readable as it is with ``cat``: every character that
    :func:`printable` escapes (a lone surrogate from bytes that were not UTF-8, a control
    character, a bidi override) is written as its JSON escape (``\\udcff``, ``\\u202e``),
    so the file means exactly what ``record`` says and shows a person what it holds."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(record, indent=1, ensure_ascii=False) + "\n"
    if not text.replace("\n", "").isprintable():  # json.dumps left the structure's newlines only
        text = "".join(c if c.isprintable() or c == "\n" else json.dumps(c)[1:-1] for c in text)
    path.write_bytes(text.encode("utf-8"))


def printable(text: str) -> str:
    """``text`` as one line that shows what it holds, for everything the grader prints: a
    newline or tab, a control character (C0, C1, DEL, so the ESC of a terminal escape), a
    bidi override, embedding, isolate or mark, any other invisible format character and a
    lone surrogate (bytes that were not UTF-8) are each shown as their escape (``\\n``,
    ``\\x1b``, ``\\u202e``, ``\\udcff``). So a student's id, file name or text can add no
    line to a log, cannot move the cursor, colour or clear the terminal, and cannot reorder
    what a person reads. Printable text (``zoë``, ``bob_2``) is unchanged. Apply it to each
    line, never to lines already joined."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def check_out(out: Path, root: Path, submissions: Path | None = None) -> None:
    """Make ``out`` ready for the outputs, with a ``.gitignore`` that keeps all of it out of
    git wherever it is; refuse a folder of the course itself or one that overlaps the
    submissions."""
    where, course = out.resolve(), root.resolve()
    if where == course or course.is_relative_to(where):
        raise OutError(f"--out {out} holds the course itself; give the outputs a folder of their "
                       f"own, such as {root / 'grading'}")
    for part in COURSE_FOLDERS:
        if where.is_relative_to(course / part):
            raise OutError(f"--out {out} is inside the course's {part}/; give the outputs a folder "
                           f"of their own, such as {root / 'grading'}")
    given = submissions.resolve() if submissions is not None else None
    if given is not None and given.is_dir() and (where.is_relative_to(given) or given.is_relative_to(where)):
        raise OutError(f"--out {out} and the submissions {submissions} overlap; give the outputs "
                       "a folder of their own")
    try:
        out.mkdir(parents=True, exist_ok=True)
        ignore = out / ".gitignore"
        if not ignore.exists():
            ignore.write_text(GITIGNORE, encoding="utf-8")
        (out / ".write-test").write_text("")
        (out / ".write-test").unlink()
    except OSError as exc:
        raise OutError(f"cannot write to {out}: {exc}") from None


def course_sources(course) -> dict[str, dict[str, dict]]:
    """Each assignment's source notebooks (file name -> JSON), from ``load_course``'s."""
    return {name: {f: pair[0] for f, pair in asg.notebooks.items()} for name, asg in course.items()}


def write_grades(out: Path, recorder, course, fresh: dict | None = None) -> str:
    """Write ``out/grades.csv`` from the gradebook, with what this run's results in memory
    (``fresh``: SubmissionResult by key) say of their submissions, and what earlier runs'
    results JSON say of the others; return what went wrong, or ""."""
    from .grades import grades_csv

    try:
        text = grades_csv(recorder.db_url, recorder.course_id, course_sources(course), out / "results",
                          fresh)
        (out / "grades.csv").write_text(text, encoding="utf-8")
    except Exception as exc:  # noqa: BLE001 (SQLAlchemy and the file system raise many kinds)
        return f"grades.csv could not be written from the gradebook: {type(exc).__name__}: {exc}"
    return ""


def summary(records: list, recorder, assignments: list[str], ungraded: list[str] = ()) -> str:
    """The end of the console: who needs a look, who did not submit, what is left to
    grade by hand. ``ungraded`` says what of the students' work was not read at all (an
    unusable student folder, an unreadable folder)."""
    from .grades import class_status

    lines = []
    look = sorted(((r, r.look_at()) for r in records if r.look_at()), key=lambda pair: pair[0].key)
    if look:
        lines.append(f"Needs a look ({len(look)} of {len(records)} submission(s)):")
        lines += [f"  - {r.student}/{r.assignment}: {'; '.join(why)}" for r, why in look]
    elif not ungraded:
        lines.append(f"Nobody needs a look among the {len(records)} submission(s) graded.")
    if ungraded:
        if not look:
            lines.append(f"Needs a look (none of the {len(records)} submission(s) graded, but):")
        lines += [f"  - not graded: {line}" for line in ungraded]
    try:
        status = class_status(recorder.db_url, recorder.course_id, assignments)
    except Exception as exc:  # noqa: BLE001
        lines.append(f"(the gradebook could not be read for the rest: {exc})")
        return "".join(printable(line) + "\n" for line in lines)
    for name in assignments:
        absent, by_hand = status[name]["not submitted"], status[name]["to grade by hand"]
        if absent:
            shown = ", ".join(absent[:10]) + (f" and {len(absent) - 10} more" if len(absent) > 10 else "")
            lines.append(f"Not submitted ({name}): {shown}.")
        if by_hand:
            lines.append(f"To grade by hand in formgrader ({name}): {len(by_hand)} submission(s).")
    return "".join(printable(line) + "\n" for line in lines)


class Progress:
    """A bar with the ETA on a terminal; otherwise one line per finished submission."""

    def __init__(self, total: int, stream=None):
        self.stream = stream or sys.stdout
        self.total, self.done, self.start = total, 0, time.monotonic()
        self.bar = None
        if self.stream.isatty():
            import shutil

            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="submission", file=self.stream,
                            ncols=min(shutil.get_terminal_size((100, 24)).columns, 120),
                            bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}]{postfix}")

    def finished(self, result) -> None:
        """``result`` (a SubmissionResult) is done."""
        self.done += 1
        line = "\n".join(printable(text) for text in
                         [self.describe(result), *(f"    {d}" for d in self.details(result))])
        if self.bar is not None:
            if result.status != JobStatus.GRADED or self.details(result):
                self.bar.write(line, file=self.stream)
            self.bar.set_postfix_str(printable(f"{result.student}/{result.assignment}"), refresh=False)
            self.bar.update(1)
        else:
            print(f"[{self.done}/{self.total}] {line}", file=self.stream, flush=True)

    @staticmethod
    def describe(result) -> str:
        """One line: the tests' points (and the total after a late penalty)."""
        text = f"{result.student}/{result.assignment}: {result.points:g}/{result.max:g}"
        if result.marks is not None and result.marks.late_penalty:
            text += (f", {result.total:g}/{result.total_max:g} after a late penalty of "
                     f"{result.marks.late_penalty:g}")
        text += f" ({result.status}, {result.seconds:.1f} s)"
        extra = []
        if result.repairs:
            extra.append(f"{len(result.repairs)} repair(s)")
        if result.errors:
            extra.append("grader error: " + result.errors[0].strip().splitlines()[-1])
        return text + (f" [{'; '.join(extra)}]" if extra else "")

    @staticmethod
    def details(result) -> list[str]:
        """Each note of a submission, on its own line."""
        out = list(dict.fromkeys(result.all_notes))
        late = result.late
        if late is not None:
            out.append(f"late: submitted {late.submitted}, due {late.due}; penalty "
                       f"{late.penalty:g} ({late.policy})")
        out += [f"stopped: {i}" for i in result.incidents]
        out += [f"INTEGRITY: {n}" for n in result.integrity]
        if result.exchange:
            out.append(f"exchange: {result.exchange}")
        out += [f"not kept: {n}" for n in result.not_kept or []]
        return out

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
