"""One submission's result, made once, in the grading process: :class:`SubmissionResult`.

Every output of a graded submission is made from it, in memory (as otter-grader's
``GradingResults``): the gradebook entry, the autograded folder, the feedback pages, the
results JSON (:meth:`SubmissionResult.to_json`), the console's lines and the
``look_at`` column of ``grades.csv``. The JSON is written for people and programs to
read; the process that wrote it never reads it back.

It holds, per notebook, the job's :class:`~grader.grading.notebook.job.JobResult` (its tests'
:class:`~grader.grading.notebook.results.TestResult`, answers, manual parts, notes); for the
submission, the flags, the integrity notes, the late penalty and the gradebook's totals
(:class:`Marks`), and why a person should look (:meth:`SubmissionResult.look_at`).
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..notebook.choice import MISSING, NOT_GRADED, SEVERAL, UNREADABLE, UNTOUCHED
from .late import describe_lateness
from ..notebook.status import JobStatus
from .submissions import NO_TIME, NOT_READ, NOT_UTF8
from .times import BACKDATED_FLAG, FUTURE_FLAG

# Flags that mean a person should look, and how the list at the end says them.
LOOK = {MISSING: "no notebook", UNREADABLE: "unreadable notebook", NOT_GRADED: "could not be graded",
        SEVERAL: "several notebooks with work",
        UNTOUCHED: "nothing answered", NOT_READ: "files not read", NO_TIME: "no readable submission time",
        NOT_UTF8: "file names not UTF-8", BACKDATED_FLAG: "submission time set back",
        FUTURE_FLAG: "submission time in the future"}
NO_TIME_NOTE = "There is no timestamp.txt, so whether the submission was late could not be told."


@dataclass(frozen=True)
class Marks:
    """The gradebook's numbers for a recorded submission."""

    manual: float | None  # points given by hand (None while some are not given)
    late_penalty: float
    total: float  # everything, less the late penalty
    max: float


@dataclass(frozen=True)
class Lateness:
    submitted: str  # "%Y-%m-%d %H:%M:%S UTC"
    due: str
    seconds: float
    penalty: float
    policy: str  # the late policy, as people read it

    def to_json(self) -> dict:
        return {"submitted": self.submitted, "due": self.due, "seconds": self.seconds,
                "penalty": self.penalty, "policy": self.policy}


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class SubmissionResult:
    """One student's results for one assignment (``notebooks``: a JobResult per notebook)."""

    student: str
    assignment: str
    notebooks: tuple  # of JobResult, one per notebook of the assignment
    sandbox: str  # the sandbox's kind
    timestamp: str | None  # timestamp.txt, as handed in
    flags: tuple[str, ...] = ()  # the submission's and its notebooks' (grader.grading.notebook.choice)
    notes: tuple[str, ...] = ()  # said of the submission as a whole, after its notebooks' notes
    exchange: str = ""  # why its submission_secret.txt was replaced ("" : it was not)
    not_kept: tuple[str, ...] | None = None  # None: its autograded folder was not written
    marks: Marks | None = None  # None: not recorded in the gradebook
    late: Lateness | None = None
    graded_at: str = field(default_factory=_now)

    @property
    def key(self) -> tuple[str, str]:
        return self.student, self.assignment

    @property
    def status(self) -> JobStatus:
        statuses = {r.status for r in self.notebooks}
        if JobStatus.FAILED in statuses:
            return JobStatus.FAILED
        return JobStatus.GRADED if JobStatus.GRADED in statuses else JobStatus.MISSING

    @property
    def tests(self) -> list[tuple[str, object]]:
        """(notebook without .ipynb, TestResult) for every test, in order."""
        return [(Path(r.notebook).stem, t) for r in self.notebooks for t in r.tests]

    @property
    def points(self) -> float:
        """The tests' points."""
        return sum(t.points for _, t in self.tests)

    @property
    def max(self) -> float:
        """The tests' maximum."""
        return sum(t.max for _, t in self.tests)

    @property
    def total(self) -> float:
        """The gradebook's total (after points given by hand and the late penalty) once
        recorded; the tests' points until then."""
        return self.marks.total if self.marks is not None else self.points

    @property
    def total_max(self) -> float:
        return self.marks.max if self.marks is not None else self.max

    def _all(self, name: str) -> list[str]:
        return [x for r in self.notebooks for x in getattr(r, name)]

    @property
    def repairs(self) -> list[str]:
        return self._all("repairs")

    @property
    def incidents(self) -> list[str]:
        return self._all("incidents")

    @property
    def integrity(self) -> list[str]:
        return self._all("integrity")

    @property
    def all_notes(self) -> list[str]:
        return [*self._all("notes"), *self.notes]

    @property
    def errors(self) -> list[str]:
        return [r.error for r in self.notebooks if r.error]

    @property
    def seconds(self) -> float:
        return round(sum(r.seconds for r in self.notebooks), 3)

    def kept(self) -> SubmissionResult:
        """The result without its autograded notebooks: what a run keeps of a submission
        once its outputs are written (a class's notebooks need not stay in memory)."""
        return replace(self, notebooks=tuple(replace(r, autograded=None) for r in self.notebooks))

    def look_at(self) -> list[str]:
        """Why a person should look at it, in a few words each ([] : nobody need)."""
        if self.status == JobStatus.FAILED:
            return ["not graded: " + "; ".join(e.strip().splitlines()[-1] for e in self.errors if e.strip())]
        reasons = [LOOK[f] for f in self.flags if f in LOOK]
        if self.late is not None:
            reasons.append(f"late by {describe_lateness(self.late.seconds)} (penalty {self.late.penalty:g})")
        if self.incidents:
            reasons.append(f"{len(self.incidents)} cell(s) stopped")
        if self.integrity:
            reasons.append(f"{len(self.integrity)} integrity note(s)")
        if self.exchange:
            reasons.append("submission_secret.txt replaced")
        if self.not_kept:
            reasons.append(f"{len(self.not_kept)} file(s) not kept")
        return reasons

    def to_json(self) -> dict:
        """The results JSON (``results/{student}/{assignment}.json``), its keys in the
        order they have always had."""
        out = {
            "student": self.student,
            "assignment": self.assignment,
            "status": self.status,
            "score": self.points,
            "max": self.max,
            "manual_max": sum(m["max"] for r in self.notebooks for m in r.manual),
            "tests": [{"notebook": nb, **t.to_dict()} for nb, t in self.tests],
            "manual": [{"notebook": Path(r.notebook).stem, **m} for r in self.notebooks for m in r.manual],
            "repairs": self.repairs,
            "incidents": self.incidents,
            "notes": self.all_notes,
            "integrity": self.integrity,
            "errors": self.errors,
            "sandbox": self.sandbox,
            "seconds": self.seconds,
            "timestamp": self.timestamp,
            "graded_at": self.graded_at,
            "flags": list(self.flags),
            "graded_files": {Path(r.notebook).stem: r.submitted_as for r in self.notebooks},
            "exchange": self.exchange,
        }
        if self.not_kept is not None:
            out["not_kept"] = list(self.not_kept)
        if self.marks is not None:
            out.update(manual_points=self.marks.manual, late_penalty=self.marks.late_penalty,
                       total=self.marks.total, total_max=self.marks.max,
                       late=None if self.late is None else self.late.to_json())
        out["look_at"] = self.look_at()
        return out


def time_flags(flags: list[str], due: object, timestamp: str | None) -> tuple[list[str], list[str]]:
    """The flags about the submission's time once the gradebook's due date is known, and
    the note to add: without a due date the time does not matter; with one, a
    submission without a time cannot be told late or not."""
    if due is None:
        return [f for f in flags if f != NO_TIME], []
    if timestamp is None and not {NO_TIME, FUTURE_FLAG} & set(flags):
        return [*flags, NO_TIME], [NO_TIME_NOTE]
    return list(flags), []
