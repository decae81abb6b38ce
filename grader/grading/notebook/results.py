"""What grading says about one test cell: :class:`TestResult`, the one record that flows
from the checker's scoring (``grader.grading.notebook.scoring``) to the report, the gradebook, the
CSV and the feedback.

A result crosses processes (a Dask worker, a saved ``results.json``) as a plain dict
(:meth:`TestResult.to_dict`) and comes back through :meth:`TestResult.from_dict`, which
takes exactly the fields below: a misspelt key or an unknown status is an error that
names it, never a result read as 0 points.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

from .status import CheckStatus, TestStatus

# What a test cell's status may be (``grader.grading.notebook.status.TestStatus``), in order.
STATUSES = tuple(TestStatus)
# What the checker says of one test cell, before scoring (``grader.grading.notebook.trusted``).
CHECKED = tuple(CheckStatus)


@dataclass(frozen=True)
class CheckVerdict:
    """The checker's verdict on one test cell: ``status`` is a :class:`CheckStatus`
    (an incident: the kernel was stopped while it ran, and ``run`` says how); ``message`` is
    the check's ✓ line or its failure message; ``out_of_memory``: the learner's code raised
    MemoryError on one of the check's cases, as the kernel reported it."""

    status: CheckStatus
    message: str = ""
    run: object = None  # the stopped cell's CellRun, for an incident
    out_of_memory: bool = False

    def __post_init__(self):
        if self.status not in CHECKED:
            raise ValueError(f"a check's status {self.status!r} is not one of {', '.join(CHECKED)}")
        object.__setattr__(self, "status", CheckStatus(self.status))
        if (self.status == CheckStatus.INCIDENT) != (self.run is not None):
            raise ValueError("an incident, and only an incident, comes with the run it stopped")


@dataclass(frozen=True)
class TestResult:
    """One test cell of one graded notebook.

    * ``id``: the cell's nbgrader ``grade_id`` (a released copy of a test is prefixed, see
      ``grader.grading.notebook.job.RELEASED``);
    * ``points``: what it earned, from 0 to ``max``; all of ``max`` exactly when ``passed``;
    * ``max``: the cell's points in the source notebook;
    * ``status``: a :class:`TestStatus`;
    * ``message``: what the student reads: the check's ✓ line, or why it failed.
    """

    __test__ = False  # not a pytest test class, whatever its name

    id: str
    points: float
    max: float
    status: TestStatus
    message: str = ""

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"test {self.id!r}: status {self.status!r} is not one of "
                             f"{', '.join(STATUSES)}")
        object.__setattr__(self, "status", TestStatus(self.status))
        for name in ("points", "max"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                    not math.isfinite(value):
                raise ValueError(f"test {self.id!r}: {name} is {value!r}, not a finite number")
            object.__setattr__(self, name, float(value))
        if not 0 <= self.points <= self.max:
            raise ValueError(f"test {self.id!r}: {self.points:g} points out of {self.max:g}")
        if not isinstance(self.id, str) or not isinstance(self.message, str):
            raise ValueError(f"test {self.id!r}: id and message must be strings")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> TestResult:
        if isinstance(data, cls):
            return data
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"a test result has unknown fields {unknown} (it has {sorted(known)})")
        return cls(**data)
