"""The grading service's durable record: one row per folder of the inbound exchange.

It is an SQLite file beside the outputs (``{out}/serve.sqlite``), written in one
transaction per change of a row's phase, synchronously, so that a service killed at any
moment (SIGKILL included) finds, when started again, exactly where each submission was:

``new``        seen in the exchange, not handled yet;
``superseded`` a later submission of the same student and assignment came first;
``deferred``   over the attempt limit: graded at ``not_before`` if it is still the latest;
``collected``  written to ``submitted/``, to be graded;
``graded``     in the gradebook, its feedback not yet released;
``held``       graded, its feedback held until the due date;
``released``   its feedback is in the exchange, where ``fetch_feedback`` finds it;
``failed``     it could not be graded (the grader's trouble, said in ``note``);
``refused``    it cannot be graded at all (an unusable student id, a link).

Every step after ``new`` can be done again without harm (collect replaces the folder,
the gradebook's entries are updated in place, release replaces the page), and a row moves
on only after its step is done, so a step cut short is done again, once. An attempt
counts against the limit in the transaction that records its grade, so it counts once.
"""
from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

PHASES = ("new", "superseded", "deferred", "collected", "graded", "held", "released", "failed", "refused")
COUNTED = ("graded", "held", "released")  # phases of an attempt that was graded

SCHEMA = """
CREATE TABLE IF NOT EXISTS submissions (
    inbound    TEXT PRIMARY KEY,  -- the exchange folder's name
    student    TEXT NOT NULL,
    assignment TEXT NOT NULL,
    at         REAL NOT NULL,     -- when it was handed in (unix seconds)
    seen       REAL NOT NULL,     -- when the service first saw it
    phase      TEXT NOT NULL,
    not_before REAL,              -- deferred: when it may be graded
    graded     REAL,              -- when its grade was recorded
    score      REAL,
    max        REAL,
    released   REAL,              -- when its feedback reached the exchange
    secret_sha TEXT NOT NULL DEFAULT '',
    notebooks  TEXT NOT NULL DEFAULT '',  -- its notebooks, for notices ("|"-separated)
    note       TEXT NOT NULL DEFAULT '',
    collected  TEXT NOT NULL DEFAULT '{}'  -- what reading its exchange folder found (JSON)
);
CREATE INDEX IF NOT EXISTS by_work ON submissions (student, assignment);
CREATE INDEX IF NOT EXISTS by_phase ON submissions (phase);
"""


@dataclass
class Row:
    inbound: str
    student: str
    assignment: str
    at: float
    seen: float
    phase: str
    not_before: float | None
    graded: float | None
    score: float | None
    max: float | None
    released: float | None
    secret_sha: str
    notebooks: str
    note: str
    collected: str

    @property
    def key(self) -> tuple[str, str]:
        return self.student, self.assignment


class Ledger:
    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(path), isolation_level=None, timeout=30)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(SCHEMA)
        self._known = {r[0] for r in self.db.execute("SELECT inbound FROM submissions")}

    def close(self) -> None:
        self.db.close()

    def knows(self, inbound: str) -> bool:
        return inbound in self._known

    def add(self, inbound: str, student: str, assignment: str, at: float, phase: str = "new",
            note: str = "") -> None:
        assert phase in PHASES
        with self.db:
            self.db.execute("INSERT OR IGNORE INTO submissions (inbound, student, assignment, at, seen, "
                            "phase, note) VALUES (?, ?, ?, ?, ?, ?, ?)",
                            (inbound, student, assignment, at, time.time(), phase, note))
        self._known.add(inbound)

    def set(self, inbound: str, phase: str, **values) -> None:
        """Move a row to ``phase`` with ``values``, in one transaction."""
        assert phase in PHASES
        names = ", ".join(f"{k} = ?" for k in values)
        with self.db:
            self.db.execute(f"UPDATE submissions SET phase = ?{', ' + names if names else ''} "
                            "WHERE inbound = ?", (phase, *values.values(), inbound))

    def rows(self, *phases: str) -> list[Row]:
        marks = ", ".join("?" * len(phases))
        cur = self.db.execute(f"SELECT * FROM submissions WHERE phase IN ({marks}) ORDER BY at, inbound",
                              phases)
        return [Row(*r) for r in cur.fetchall()]

    def get(self, inbound: str) -> Row | None:
        r = self.db.execute("SELECT * FROM submissions WHERE inbound = ?", (inbound,)).fetchone()
        return Row(*r) if r else None

    def graded_since(self, student: str, assignment: str, since: float) -> list[float]:
        """When each attempt of this student's at this assignment graded after ``since`` was."""
        marks = ", ".join("?" * len(COUNTED))
        cur = self.db.execute(
            f"SELECT graded FROM submissions WHERE student = ? AND assignment = ? AND phase IN ({marks}) "
            "AND graded > ? ORDER BY graded", (student, assignment, *COUNTED, since))
        return [r[0] for r in cur.fetchall()]

    def secret_owner(self, assignment: str, sha: str, student: str) -> bool:
        """Whether another student handed in this assignment with the same secret."""
        if not sha:
            return False
        return self.db.execute("SELECT 1 FROM submissions WHERE assignment = ? AND secret_sha = ? AND "
                               "student != ? LIMIT 1", (assignment, sha, student)).fetchone() is not None

    def counts(self) -> dict[str, int]:
        return dict(self.db.execute("SELECT phase, COUNT(*) FROM submissions GROUP BY phase").fetchall())

    def last_graded(self) -> Row | None:
        r = self.db.execute("SELECT * FROM submissions WHERE graded IS NOT NULL ORDER BY graded DESC "
                            "LIMIT 1").fetchone()
        return Row(*r) if r else None

    def troubles(self, n: int = 20) -> list[Row]:
        """The latest submissions that could not be graded or answered, with why."""
        cur = self.db.execute("SELECT * FROM submissions WHERE phase IN ('failed', 'refused') "
                              "ORDER BY seen DESC LIMIT ?", (n,))
        return [Row(*r) for r in cur.fetchall()]
