"""``python -m grader serve``: grade each submission as it arrives, and answer it.

Run from the course directory, it watches the inbound folder of nbgrader's exchange for
every released assignment and, for each new submission (the latest of a student's, as
with nbgrader):

1. **collects** it into ``submitted/{student}/{assignment}/``, as ``nbgrader collect``
   lays it out (:mod:`grader.grading.classroom.exchange`; read once, no link followed);
2. **grades** it through ``grade``'s own path: the same jobs, pool or Dask cluster,
   sandbox and outputs (:mod:`grader.grading.classroom.session`, :mod:`grader.grading.classroom.outputs`), the
   environment proven once before anybody is graded;
3. **records** it in the gradebook with its late penalty (``grade``'s outputs do);
4. **releases** its feedback with nbgrader's own ``generate_feedback`` and
   ``release_feedback``, so that the student's *Fetch Feedback* finds it.

What it has done is kept in a durable record (:mod:`grader.grading.classroom.ledger`), so that it
can be killed at any moment and started again, losing nothing and grading nothing twice.

The course's policy for grading on submit lives in ``nbgrader_config.py``
(:class:`SubmitPolicy`): how many attempts are graded per student, assignment and window
(an attempt over it is graded when the window allows, if it is still the latest, and its
feedback says when), and whether feedback waits for the due date.
"""
from __future__ import annotations

import copy
import datetime as dt
import json
import math
import os
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ...course import course_root
from .autograded import GOOD_SECRET, SECRET
from .exchange import (
    Exchange,
    ExchangeError,
    collect,
    new_secret,
    notice,
    read_entry,
    secret_sha,
    tidy,
)
from .gradebook import GradebookError
from ..notebook.job import GRADER_WALL
from .late import LateConfigError
from .ledger import Ledger
from .report import OutError, check_out, printable, write_grades, write_json
from ..notebook.sandbox import Limits
from .session import BrokenEnvironment, CourseError, GradingSession, SetupError
from ..notebook.status import JobStatus
from .submissions import SubmissionsError, read_submissions
from .times import utc

CRASH_ENV = "GRADER_SERVE_CRASH"  # tests: "collect", "grade" or "release" kills the service there
HEALTH = "serve-health.json"
LEDGER = "serve.sqlite"
SCRATCH = "grader-serve-"  # the scratch folders' prefix, in the system's temp folder


class PolicyError(RuntimeError):
    """The ``GradeOnSubmit`` settings of ``nbgrader_config.py`` cannot be used."""


@dataclass(frozen=True)
class SubmitPolicy:
    """``c.GradeOnSubmit`` in ``nbgrader_config.py``.

    ``attempts``: attempts graded per student and assignment in any ``window_hours``
    (0: no limit). The limit keeps hidden tests from being mapped by resubmitting.
    ``window_hours``: the length of that window.
    ``hold_feedback_until_due``: graded at once, but the feedback is released only once
    the assignment's due date (with the student's extension) has passed.
    """

    attempts: int = 3
    window_hours: float = 24.0
    hold_feedback_until_due: bool = False

    @classmethod
    def from_config(cls, config) -> "SubmitPolicy":
        given = dict(config.get("GradeOnSubmit", {}))
        known = {"attempts": int, "window_hours": (int, float), "hold_feedback_until_due": bool}
        for key, value in given.items():
            if key not in known:
                raise PolicyError(f"c.GradeOnSubmit.{key} is not a setting (there are "
                                  f"{', '.join(known)})")
            if isinstance(value, bool) and known[key] is not bool or not isinstance(value, known[key]):
                raise PolicyError(f"c.GradeOnSubmit.{key} = {value!r}: expected "
                                  f"{'True or False' if known[key] is bool else 'a number'}")
        policy = cls(**given)
        if policy.attempts < 0:
            raise PolicyError(f"c.GradeOnSubmit.attempts = {policy.attempts}: expected 0 (no limit) "
                              "or more")
        if not (math.isfinite(policy.window_hours) and policy.window_hours > 0):
            raise PolicyError(f"c.GradeOnSubmit.window_hours = {policy.window_hours}: expected a "
                              "positive number of hours")
        return policy

    @property
    def window(self) -> float:
        return self.window_hours * 3600

    def describe(self) -> str:
        limit = "no attempt limit" if not self.attempts else \
            f"{self.attempts} graded attempt(s) per assignment in any {self.window_hours:g} h"
        return limit + ("; feedback held until the due date" if self.hold_feedback_until_due else "")


def _crash_point(name: str) -> None:
    """Tests kill the service here, as a power cut would, to show that nothing is lost."""
    if os.environ.get(CRASH_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)


def _hours(seconds: float) -> str:
    hours = seconds / 3600
    return f"{hours:g} hours" if hours != 1 else "hour"


@dataclass
class Flight:
    """A submission out to the workers: its ledger row, what was collected, the secret its
    feedback goes under, and its notebooks' results as they arrive."""

    row: object
    sub: object
    secret: tuple
    notebooks: int
    results: dict = field(default_factory=dict)


class Service:
    def __init__(self, out: Path, *, jobs: int | None = None, scheduler: str | None = None,
                 only: list[str] | None = None, sandbox: str = "bwrap", limits: Limits | None = None,
                 db_url: str | None = None, poll: float = 1.0, stream=None, err=None,
                 grader_wall: float = GRADER_WALL, kernels: str = "warm", figures: str = "png"):
        self.out, self.only, self.poll = out, set(only or ()), poll
        self.options = dict(jobs=jobs, scheduler=scheduler, sandbox=sandbox, limits=limits, db_url=db_url,
                            grader_wall=grader_wall, kernels=kernels, figures=figures)
        self.stream, self.err = stream or sys.stdout, err or sys.stderr
        self.root = course_root()
        self.watched: set[str] = set()
        self.errors: list[str] = []
        self.session: GradingSession | None = None
        self.ledger = self._nbgrader = None
        self.said: dict[tuple[str, str], object] = {}  # this process's results, for grades.csv
        self.flights: dict[str, Flight] = {}  # inbound folder: its submission, out to the workers
        self.feed = None
        self.handled = 0

    @property
    def recorder(self):
        return self.session.recorder

    @property
    def course(self):
        return self.session.course

    @property
    def late(self):
        return self.session.late

    # ------------------------------------------------------------------ set-up
    def start(self) -> int:
        """Read the course and its settings, build the kit, the sandbox and the workers,
        and prove the environment; return 0, or 2 with what is wrong."""
        try:
            self.session = GradingSession(self.root, stream=self.stream, **self.options)
            config = self.recorder.config
            self.policy = SubmitPolicy.from_config(config)
            self.exchange = Exchange(config)
            self.exchange.check()
            unknown = sorted(self.only - set(self.course))
            if unknown:
                raise CourseError(f"no assignment {', '.join(unknown)} in this course (there are "
                                  f"{', '.join(self.course)})")
            cd = config.CourseDirectory
            self.submitted = self.root / (cd.get("submitted_directory") or "submitted")
            check_out(self.out, self.root, self.submitted)
            self.ledger = Ledger(self.out / LEDGER)
        except (CourseError, GradebookError, LateConfigError, PolicyError, ExchangeError, OutError) as exc:
            print(f"serve: {exc}", file=self.err)
            return 2
        tidy(self.submitted)
        _tidy_scratch()
        scratch = Path(tempfile.mkdtemp(prefix=SCRATCH))
        os.chmod(scratch, 0o711)
        (scratch / "pid").write_text(str(os.getpid()))
        hidden = [self.submitted.resolve(), self.out.resolve(), self.exchange.course.resolve()]
        try:
            self.session.start(hidden, scratch)
        except SetupError as exc:
            print(f"serve: {exc}", file=self.err)
            return 2
        self.feed = self.session.runner.feed()
        print(f"Watching {self.exchange.inbound} ({self.policy.describe()}; late work: "
              f"{self.late.describe}).", file=self.stream, flush=True)
        return 0

    def watch(self) -> int:
        """Prove and enter any assignment released since the last look; 2 if a proof fails."""
        released = set(self.exchange.released()) & set(self.course)
        if self.only:
            released &= self.only
        new = sorted(released - self.watched)
        if not new:
            return 0

        def prepare() -> None:
            self.recorder.close()
            self.recorder.prepare({name: self.course[name] for name in new})
            self.recorder.open()

        try:
            self.session.prove(new, prepare=prepare)
        except BrokenEnvironment as problem:
            print(f"serve: the grading environment failed its proof, so nobody is graded.\n{problem}",
                  file=self.err)
            return 2
        self.watched.update(new)
        print(f"Proven and watched: {', '.join(new)}.", file=self.stream, flush=True)
        return 0

    def close(self) -> None:
        if self.feed is not None and self.feed.pending:
            self.feed.cancel()  # what is out is graded again at the next start
        if self.session is not None:
            self.session.close()
        if self.ledger is not None:
            self.ledger.close()

    # ------------------------------------------------------------------ one round
    def round(self, wait: float = 0.0) -> int:
        """Handle what is waiting: collect each new submission, hand it to the workers, and
        write and release what they have graded, waiting up to ``wait`` seconds for them;
        return how many submissions are still waiting to be read (folders nbgrader is still
        writing)."""
        now = time.time()
        unsettled = self.scan(now)
        self.decide(now)
        self.send()
        graded = self.take(wait)
        released = self.release(time.time())
        if graded or released or not (self.out / "grades.csv").exists():
            problem = write_grades(self.out, self.recorder, self.course, self.said)
            if problem:
                self.error(problem)
        self.health(unsettled)
        return unsettled

    def scan(self, now: float) -> int:
        """Enter each new, fully written inbound folder into the ledger."""
        unsettled = 0
        for entry in self.exchange.entries(self.watched, self.ledger.knows):
            if entry.problem:
                self.ledger.add(entry.name, entry.student, entry.assignment, entry.changed, "refused",
                                entry.problem)
                self.error(f"{entry.name} cannot be graded: {entry.problem}")
                continue
            if not self.exchange.settled(entry, now):
                unsettled += 1
                continue
            at, note = entry.at()
            self.ledger.add(entry.name, entry.student, entry.assignment, at, "new", note)
        return unsettled

    def decide(self, now: float) -> None:
        """For each student and assignment: the latest submission waiting is collected,
        or deferred when it is over the attempt limit; earlier ones are superseded."""
        groups: dict[tuple, list] = {}
        for row in self.ledger.rows("new", "deferred", "collected"):
            groups.setdefault(row.key, []).append(row)
        for key, rows in groups.items():
            latest = rows[-1]  # ordered by time handed in
            for row in rows[:-1]:
                self.ledger.set(row.inbound, "superseded",
                                note=f"A later submission ({utc(latest.at)}) replaced it.")
            if latest.phase == "collected" or (latest.phase == "deferred" and now < latest.not_before):
                continue
            handed = read_entry(self.exchange, self.exchange.entry(latest.inbound),
                                [*self.recorder.ignore, "__MACOSX"])
            if handed.problem:
                self.ledger.set(latest.inbound, "refused", note=handed.problem)
                self.error(f"{latest.inbound} cannot be graded: {handed.problem}")
                continue
            if self.policy.attempts:
                done = self.ledger.graded_since(*key, now - self.policy.window)
                if len(done) >= self.policy.attempts:
                    when = done[-self.policy.attempts] + self.policy.window
                    if latest.phase != "deferred" or latest.not_before != when:
                        self._defer(latest, handed, when)
                    continue
            secret = handed.secret
            sha = secret_sha(secret)
            collect(handed, self.submitted)
            _crash_point("collect")
            found = {"notes": handed.sub.notes, "flags": handed.sub.flags}
            self.ledger.set(latest.inbound, "collected", secret_sha=sha,
                            notebooks="|".join(handed.notebooks), collected=json.dumps(found))

    def _defer(self, row, handed, when: float) -> None:
        shown = f"{self.policy.attempts} attempt{'s' if self.policy.attempts != 1 else ''}"
        lines = [f"Your submission of {utc(row.at)} was received, but you have had {shown} of "
                 f"{row.assignment} graded in the last {_hours(self.policy.window)}, and that is "
                 f"how many are graded in any {_hours(self.policy.window)}.",
                 f"It will be graded at {utc(when)}, unless you submit again before then: the latest "
                 "submission is the one graded, as always. Fetch feedback again after that time."]
        if handed.secret:
            self.exchange.post(handed.secret, handed.notebooks or self._notebooks(row),
                               notice(row.assignment, row.student, "not graded yet", lines))
        self.ledger.set(row.inbound, "deferred", not_before=when, secret_sha=secret_sha(handed.secret),
                        notebooks="|".join(handed.notebooks), note=f"over the attempt limit: graded at {utc(when)}")
        self.say(f"{row.student} {row.assignment}: over the attempt limit ({shown} in "
                 f"{_hours(self.policy.window)}); graded at {utc(when)} if still the latest")

    def send(self) -> int:
        """Hand each collected submission not yet out to the workers, one job per notebook;
        return how many. Its row stays ``collected`` until it is graded: a service killed
        meanwhile grades it again when it starts."""
        sent, warnings = 0, []
        for row in self.ledger.rows("collected"):
            if row.inbound in self.flights:
                continue
            sub = self._read_submitted(row, warnings)
            if sub is None:
                self.ledger.set(row.inbound, "new", note="its collected folder was gone: collected again")
                continue
            jobs: list = []
            indices = self.session.submission_jobs([sub], jobs)[sub.key]
            flight = Flight(row, sub, self._secret(sub), len(indices))
            self.flights[row.inbound] = flight
            for i in indices:
                self.feed.add((row.inbound, i), jobs[i])
            sent += 1
        return sent

    def _secret(self, sub) -> tuple[bytes | str, str]:
        """The secret its feedback is posted under, and why it was replaced, if it was."""
        data = sub.files.get(SECRET)
        if data is None or not GOOD_SECRET.fullmatch(data):
            return new_secret(), ("its submission_secret.txt is not one nbgrader writes (it was "
                                  "replaced: this student cannot fetch feedback from the exchange)")
        if self.ledger.secret_owner(sub.assignment, secret_sha(data.decode().strip()), sub.student):
            return new_secret(), ("its submission_secret.txt is the same as another student's "
                                  "submission (a copied folder?); it was replaced")
        return data, ""

    def take(self, timeout: float) -> int:
        """Write the outputs of each submission whose notebooks have all been graded,
        waiting up to ``timeout`` seconds for one when none has; return how many. The result
        of a submission superseded while it was graded is dropped: the later one counts."""
        if not self.feed.pending:
            time.sleep(timeout)
            return 0
        taken = 0
        for (inbound, i), result in self.feed.arrived(timeout):
            flight = self.flights[inbound]
            flight.results[i] = result
            if len(flight.results) < flight.notebooks:
                continue
            del self.flights[inbound]
            now = self.ledger.get(inbound)
            if now is None or now.phase != "collected":
                continue
            taken += self._finish(flight)
        return taken

    def _finish(self, flight: Flight) -> int:
        row, sub = flight.row, flight.sub
        outputs = self.session.outputs(self.out, {sub.key: flight.secret})
        done = [flight.results[i] for i in sorted(flight.results)]
        written, trouble = outputs.finish(sub, done)
        self.said[sub.key] = written.kept()
        _crash_point("grade")
        if written.status == JobStatus.FAILED or trouble:
            why = "; ".join(trouble) or "it could not be graded"
            self.ledger.set(row.inbound, "failed", note=why)
            self.error(why)
            self._failed_notice(row, sub, flight.secret[0])
        else:
            self.ledger.set(row.inbound, "graded", graded=time.time(),
                            score=written.total, max=written.total_max)
        return 1

    @property
    def idle(self) -> bool:
        """Nothing is being graded and nothing collected waits to be."""
        return not self.flights and not self.ledger.rows("collected")

    def _read_submitted(self, row, warnings):
        folder = self.submitted / row.student
        if not (folder / row.assignment).is_dir():
            return None
        try:
            subs, _ = read_submissions(folder, list(self.course), [*self.recorder.ignore, "__MACOSX"], warnings)
        except SubmissionsError:
            return None
        sub = next((s for s in subs if s.assignment == row.assignment), None)
        if sub is None:
            return None
        found = json.loads(row.collected or "{}")
        # what reading the exchange's folder found (links, unreadable files), said again here
        sub.notes = list(dict.fromkeys([*found.get("notes", []), *sub.notes]))
        sub.flags = list(dict.fromkeys([*found.get("flags", []), *sub.flags]))
        return sub

    def _failed_notice(self, row, sub, secret: bytes) -> None:
        data = sub.files.get(SECRET, b"")
        if GOOD_SECRET.fullmatch(data) and data == secret:
            self.exchange.post(data.decode().strip(), self._notebooks(row),
                               notice(row.assignment, row.student, "not graded",
                                      ["Your submission was received but could not be graded "
                                       "automatically. Your instructor has been told and will look at it."]))

    def release(self, now: float) -> int:
        """Release the feedback of each graded submission (or hold it until the due date);
        return how many were released or held."""
        latest, count = {}, 0
        for row in self.ledger.rows("graded", "held"):
            if row.key in latest:  # graded twice before a release: only the latest's page exists
                self.ledger.set(latest[row.key].inbound, "released", released=now,
                                note="a later submission was graded before its feedback was released")
            latest[row.key] = row
        for row in latest.values():
            due = self._due(row)
            if self.policy.hold_feedback_until_due and due is not None and now < due:
                if row.phase != "held":
                    self._held_notice(row, due)
                    self.ledger.set(row.inbound, "held", note=f"feedback held until {utc(due)}")
                    self.say(f"{row.student} {row.assignment}: {row.score:g}/{row.max:g}; feedback held "
                             f"until {utc(due)}")
                    count += 1
                continue
            api = self._api()
            done = api.generate_feedback(row.assignment, row.student)
            _crash_point("release")
            if done.get("success"):
                done = api.release_feedback(row.assignment, row.student)
            if not done.get("success"):
                why = (done.get("error") or done.get("log") or "").strip().splitlines()[-1:] or ["?"]
                self.ledger.set(row.inbound, "failed", note=f"feedback not released: {why[0]}")
                self.error(f"{row.student}/{row.assignment}: feedback not released: {why[0]}")
                continue
            released = time.time()
            self.ledger.set(row.inbound, "released", released=released)
            self.handled += 1
            count += 1
            self.say(f"{row.student} {row.assignment}: {row.score:g}/{row.max:g}, feedback released "
                     f"{released - row.at:.1f} s after submit")
        return count

    def _due(self, row) -> float | None:
        """The due date of this student's work (with their extension), or None."""
        try:
            due = self.recorder.totals(row.student, row.assignment)["duedate"]
        except Exception:  # noqa: BLE001 (not in the gradebook: no due date to wait for)
            return None
        if due is None:
            return None
        return (due.replace(tzinfo=dt.timezone.utc) if due.tzinfo is None else due).timestamp()

    def _held_notice(self, row, due: float) -> None:
        folder = self.recorder.autograded_dir(row.student, row.assignment)
        try:
            data = (folder / SECRET).read_bytes()
        except OSError:
            return
        if GOOD_SECRET.fullmatch(data):
            self.exchange.post(data.decode().strip(), self._notebooks(row),
                               notice(row.assignment, row.student, "graded; feedback after the due date",
                                      [f"Your submission of {utc(row.at)} was received and graded.",
                                       f"Its feedback is released after the due date, {utc(due)}. "
                                       "Fetch feedback again after that time."]))

    def _notebooks(self, row) -> list[str]:
        """The notebooks a notice is posted for: those the student handed in, else the
        assignment's."""
        if row.notebooks:
            return row.notebooks.split("|")
        return [Path(name).stem for name in self.course[row.assignment].notebooks]

    def _api(self):
        if self._nbgrader is None:
            from nbgrader.apps.api import NbGraderAPI
            from nbgrader.coursedir import CourseDirectory

            config = copy.deepcopy(self.recorder.config)
            config.FeedbackExporter.hidden_messages = False  # name, points and result only
            self._nbgrader = NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)
        return self._nbgrader

    # ------------------------------------------------------------------ reporting
    def say(self, line: str) -> None:
        print(printable(line), file=self.stream, flush=True)

    def error(self, line: str) -> None:
        self.errors = [*self.errors, f"{utc(time.time())}: {line}"][-20:]
        print(printable(f"serve: {line}"), file=self.err, flush=True)

    def health(self, unsettled: int) -> None:
        """``serve-health.json``: what waits, what was graded last, what went wrong. All of it
        but this run's own errors comes from the ledger, so it survives a restart."""
        counts = self.ledger.counts()
        last = self.ledger.last_graded()
        data = {"pid": os.getpid(), "updated": utc(time.time()), "watching": sorted(self.watched),
                "queue": sum(counts.get(p, 0) for p in ("new", "collected", "graded")) + unsettled,
                "deferred": counts.get("deferred", 0), "held": counts.get("held", 0),
                "released": counts.get("released", 0), "failed": counts.get("failed", 0),
                "refused": counts.get("refused", 0),
                "last_graded": None if last is None else {
                    "student": last.student, "assignment": last.assignment, "score": last.score,
                    "max": last.max, "graded": utc(last.graded), "phase": last.phase},
                "not_graded": [{"inbound": r.inbound, "phase": r.phase, "why": r.note}
                               for r in self.ledger.troubles()],
                "errors": self.errors}
        tmp = self.out / f".{HEALTH}.tmp"
        write_json(tmp, data)
        os.replace(tmp, self.out / HEALTH)


def _tidy_scratch() -> None:
    """Remove the scratch folders of services that were killed (their process is gone)."""
    for folder in Path(tempfile.gettempdir()).glob(f"{SCRATCH}*"):
        try:
            pid = int((folder / "pid").read_text())
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except (OSError, ValueError):
            continue  # another user's, or not one of ours


def serve(out: Path, *, once: bool = False, **options) -> int:
    """Run the service until stopped (SIGTERM or Ctrl-C), or with ``once`` until what is
    waiting is handled; return the exit status."""
    service = Service(out, **options)

    def stop(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        status = service.start()
        if status:
            return status
        while True:
            status = service.watch()
            if status:
                return status
            unsettled = service.round(wait=service.poll)
            if once and not unsettled and service.idle:
                return 0
    except KeyboardInterrupt:
        print(f"serve: stopped; {service.handled} submission(s) answered this run.", file=service.err)
        return 0 if not once else 130
    finally:
        service.close()
        signal.signal(signal.SIGTERM, previous)
