"""Grading on submit (``python -m grader serve``), end to end with nbgrader's own commands.

Students submit as themselves (``nbgrader submit --student``) into the course's exchange;
the service runs with ``--once`` between their submissions, as cron would run it, and
each student fetches their feedback (``nbgrader fetch_feedback``). In one course of
lesson 01, with at most 2 graded attempts per day and "zero" for late work:

* round 1: ``ontime`` hands in honest work; ``twice`` hands in twice before the service
  looks (the latest counts); ``eager`` hands in a first try; ``hostile`` plants a link to
  the course's configuration in its exchange folder, dates its ``timestamp.txt`` in 2099,
  and adds folders nbgrader could not have written (a link named as a student's
  submission, an unusable student id, and ids that would write a forged line, a terminal
  escape or a bidi override into the service's log); ``linker``'s notebook is a hard link
  to the instructor's source notebook.
  The service is killed with SIGKILL in collect, then in grading, then in release, and
  started again each time (``GRADER_SERVE_CRASH``); the fourth start finishes;
* round 2: ``eager`` hands in again (its second graded attempt); ``million`` hands in a
  notebook of a million empty cells and ``deep`` one nested 200,000 levels deep (each
  costs only itself: graded as unreadable, its feedback released); the due date passes
  and ``late`` hands in;
* round 3: ``eager`` hands in a third time, over the limit.
"""
from __future__ import annotations

import datetime as dt
import html
import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT
from attacks_structure import MILLION_NOTE, NESTED_NOTE, million_empty_cells, nested_deep
from grading_corpus import Lesson, sandboxed

pytestmark = pytest.mark.slow
A = "01_matmul_views"
NB = f"{A}.ipynb"
STUDENTS = ["ontime", "twice", "eager", "hostile", "late", "linker", "million", "deep"]
FAKE = f"ontime {A}: 15\u221515, feedback released 0.5 s after submit"  # a line serve prints ("/" cannot be)
FORGED = [f"eve\n{FAKE}", "eve\x1b[2J", "eve\u202emallory"]  # student ids of inbound folders
PHASES = ["collect", "grade", "release"]
COL = {name: i for i, name in enumerate(  # the first columns of grades.csv
    ["student", "assignment", "status", "submitted_at", "auto", "manual", "late_penalty", "total"])}


def run(cmd, cwd, env, timeout=600) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def ok(done: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert done.returncode == 0, f"{done.args}:\n{done.stdout}\n{done.stderr}"
    return done


class Course:
    def __init__(self, base: Path):
        self.base = base
        self.root = base / "course"
        self.root.mkdir()
        for name in ("solutions", "notebooks"):
            subprocess.run(["cp", "-r", str(ROOT / name), str(self.root / name)], check=True)
        config = (ROOT / "nbgrader_config.py").read_text()
        (self.root / "nbgrader_config.py").write_text(
            config + '\nc.LateSubmissionPlugin.penalty_method = "zero"\nc.GradeOnSubmit.attempts = 2\n')
        self.exchange = self.root / ".nbgrader_exchange"
        self.env = dict(os.environ, ATTENTION_COURSE_ROOT=str(self.root),
                        PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
        self.env.pop("GRADER_SERVE_CRASH", None)
        self.out = self.root / "grading"
        self.runs: list[subprocess.CompletedProcess] = []

    def nbgrader(self, *args, cwd=None):
        return ok(run([sys.executable, "-m", "nbgrader", *args], cwd or self.root, self.env))

    def home(self, student: str) -> Path:
        home = self.base / "home" / student
        if not home.exists():
            home.mkdir(parents=True)
            (home / "nbgrader_config.py").write_text(
                f'c = get_config()\nc.CourseDirectory.course_id = "attention"\n'
                f"c.Exchange.root = {str(self.exchange)!r}\n"
                f"c.Exchange.cache = {str(home / '.cache')!r}\n")
        return home

    def submit(self, student: str, nb: dict | bytes) -> Path:
        """Hand in ``nb`` (or these bytes) as ``student``; return the exchange folder it made."""
        home = self.home(student)
        (home / A).mkdir(exist_ok=True)
        (home / A / NB).write_bytes(nb if isinstance(nb, bytes) else json.dumps(nb).encode())
        before = set(self.inbound())
        self.nbgrader("submit", A, f"--student={student}", cwd=home)
        time.sleep(0.01)
        new = set(self.inbound()) - before
        assert len(new) == 1, new
        return self.exchange / "attention" / "inbound" / new.pop()

    def inbound(self) -> list[str]:
        return os.listdir(self.exchange / "attention" / "inbound")

    def serve(self, crash: str | None = None) -> subprocess.CompletedProcess:
        time.sleep(1.1)  # the service reads a folder once nbgrader has left it alone for a second
        env = dict(self.env, **({"GRADER_SERVE_CRASH": crash} if crash else {}))
        sandbox = [] if sandboxed() else ["--sandbox", "none"]
        done = run([sys.executable, "-m", "grader", "serve", "--once", "--jobs", "2", *sandbox],
                   self.root, env)
        self.runs.append(done)
        return done

    def ledger(self) -> dict[str, tuple]:
        db = sqlite3.connect(self.out / "serve.sqlite")
        try:
            return {r[0]: r[1:] for r in db.execute(
                "SELECT inbound, student, phase, graded, released, not_before, note FROM submissions")}
        finally:
            db.close()

    def phases(self) -> dict[str, str]:
        return {name: row[1] for name, row in self.ledger().items()}

    def fetch(self, student: str) -> dict[str, str]:
        """``fetch_feedback`` as the student: each page, by the time of its submission."""
        home = self.home(student)
        self.nbgrader("fetch_feedback", A, f"--student={student}", cwd=home)
        return {p.parent.name: p.read_text() for p in sorted((home / A / "feedback").glob(f"*/{A}.html"))}


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    c = Course(tmp_path_factory.mktemp("serve"))
    roster = c.base / "roster.csv"
    roster.write_text("id,first_name,last_name\n" + "".join(f"{s},{s},Student\n" for s in STUDENTS))
    c.nbgrader("db", "student", "import", str(roster))
    due = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=30)
    c.nbgrader("db", "assignment", "add", A, f"--duedate={due:%Y-%m-%d %H:%M:%S} UTC")
    c.nbgrader("release_assignment", A)
    c.lesson = lesson = Lesson(A, ROOT)
    c.full = {gid: lesson.with_body(gid, ["checked = True"]) for gid in lesson.answers}
    first = next(iter(c.full))
    c.partial = {first: c.full[first]}

    # round 1
    c.folder = {"ontime": c.submit("ontime", lesson.notebook(c.full))}
    c.folder["twice_1"] = c.submit("twice", lesson.notebook(c.partial))
    c.folder["twice_2"] = c.submit("twice", lesson.notebook(c.full))
    c.folder["eager_1"] = c.submit("eager", lesson.notebook(c.partial))
    c.folder["hostile"] = hostile = c.submit("hostile", lesson.notebook(c.full))
    (hostile / "stolen.txt").symlink_to(c.root / "nbgrader_config.py")
    (hostile / "solutions").symlink_to(c.root / "solutions")
    inbound = hostile.parent
    c.mallory = inbound / f"mallory+{A}+2020-01-01 00:00:00.000000 UTC+x"
    c.mallory.symlink_to(hostile)
    c.bad_id = inbound / f"bad id+{A}+2020-01-01 00:00:00.000000 UTC+y"
    c.bad_id.mkdir()
    (c.bad_id / NB).write_text(json.dumps(lesson.notebook(c.full)))
    (hostile / "timestamp.txt").write_text("2099-01-01 00:00:00.000000 UTC")
    c.forged = [inbound / f"{student}+{A}+2020-01-01 00:00:00.000000 UTC+f{i}"
                for i, student in enumerate(FORGED)]
    for folder in c.forged:
        folder.mkdir()
        (folder / NB).write_text(json.dumps(lesson.notebook(c.full)))
    c.folder["linker"] = linker = c.submit("linker", lesson.notebook(c.partial))
    (linker / NB).unlink()
    os.link(c.root / "solutions" / A / NB, linker / NB)
    c.crashed = {}
    for phase in PHASES:
        c.crashed[phase] = (c.serve(crash=phase), c.phases())
    c.graded_before = {s: (c.root / "autograded" / s / A / NB).stat().st_mtime_ns
                       for s in ("ontime", "twice", "eager", "hostile")
                       if (c.root / "autograded" / s / A / NB).exists()}
    c.first = c.serve()
    c.graded_after = {s: (c.root / "autograded" / s / A / NB).stat().st_mtime_ns for s in c.graded_before}
    c.csv_first = (c.out / "grades.csv").read_text()

    # round 2
    c.folder["eager_2"] = c.submit("eager", lesson.notebook(c.full))
    c.folder["million"] = c.submit("million", million_empty_cells())
    c.folder["deep"] = c.submit("deep", nested_deep())
    past = dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=1)
    c.nbgrader("db", "assignment", "add", A, f"--duedate={past:%Y-%m-%d %H:%M:%S} UTC")
    c.folder["late"] = c.submit("late", lesson.notebook(c.full))
    c.second = c.serve()

    # round 3: over the limit
    c.folder["eager_3"] = c.submit("eager", lesson.notebook(c.partial))
    c.third = c.serve()
    c.pages = {s: c.fetch(s) for s in ("ontime", "twice", "eager", "hostile", "late", "million", "deep")}
    c.health = json.loads((c.out / "serve-health.json").read_text())
    c.grades = {r.split(",")[0]: r.split(",") for r in (c.out / "grades.csv").read_text().splitlines()}
    return c


def _lines(c: Course) -> list[str]:
    return [line for done in c.runs for line in done.stdout.splitlines() if "feedback released" in line]


def test_each_kill_happened_in_its_phase_and_left_the_work_there(term):
    names = {k: v.name for k, v in term.folder.items()}
    (collect, at_collect), (grade, at_grade), (release, at_release) = (term.crashed[p] for p in PHASES)
    for done in (collect, grade, release):
        assert done.returncode == -9, done.stdout + done.stderr  # SIGKILL, as the test asked
    # killed in collect: nothing moved past "new" (the folder written was not yet counted)
    assert {at_collect[names[s]] for s in ("ontime", "eager_1", "hostile", "twice_2")} == {"new"}
    # killed in grading: one submission was written to the gradebook, none recorded as graded
    assert "collected" in at_grade.values() and "graded" not in at_grade.values(), at_grade
    # killed in release: graded, nothing released
    assert "graded" in at_release.values() and "released" not in at_release.values(), at_release


def test_after_the_kills_every_submission_is_answered_once_and_none_is_graded_twice(term):
    ok(term.first)
    ok(term.second)
    ok(term.third)
    lines = _lines(term)
    for student in ("ontime", "twice", "hostile", "late"):
        assert sum(line.startswith(f"{student} {A}:") for line in lines) == 1, lines
    assert sum(line.startswith(f"eager {A}:") for line in lines) == 2, lines  # two graded attempts
    # graded before the kill in release: not graded again after it
    for student, before in term.graded_before.items():
        assert term.graded_after[student] == before, f"{student} was graded again"
    assert term.graded_before, "nothing was graded before the kill in release"


def test_the_latest_submission_counts_and_earlier_ones_are_superseded(term):
    phases = term.phases()
    assert phases[term.folder["twice_1"].name] == "superseded"
    assert phases[term.folder["twice_2"].name] == "released"
    assert term.grades["twice"][COL["auto"]] == term.grades["ontime"][COL["auto"]] != "0"
    pages = term.pages["twice"]
    assert len(pages) == 1, "only the submission graded has feedback"


def test_an_attempt_over_the_limit_is_not_graded_and_its_feedback_says_when(term):
    ledger = term.ledger()
    row = ledger[term.folder["eager_3"].name]
    assert row[1] == "deferred"
    graded = sorted(r[2] for r in ledger.values() if r[0] == "eager" and r[2])
    assert len(graded) == 2
    assert abs(row[4] - (graded[0] + 24 * 3600)) < 1e-3  # when the first of the two leaves the window
    when = f"{dt.datetime.fromtimestamp(row[4], dt.timezone.utc):%Y-%m-%d %H:%M:%S} UTC"
    notices = [p for p in term.pages["eager"].values() if "not graded yet" in p]
    assert len(notices) == 1 and when in notices[0] and "latest" in notices[0]
    assert "/ 17" not in notices[0], "a notice shows no score"
    # the gradebook holds the second attempt, not the third
    assert term.grades["eager"][COL["auto"]] == term.grades["ontime"][COL["auto"]]
    assert "over the attempt limit" in term.third.stdout


def test_late_work_is_graded_and_marked_late_by_the_policy(term):
    row = term.grades["late"]
    assert float(row[COL["late_penalty"]]) == float(row[COL["auto"]]) > 0
    assert float(row[COL["total"]]) == 0
    (page,) = term.pages["late"].values()
    assert "Late penalty" in page


def test_feedback_reaches_each_student_and_shows_hidden_tests_by_name_and_result_only(term):
    (page,) = term.pages["ontime"].values()
    assert "feedback for ontime" in page and "hidden_matmul_dot" in page
    source = "".join(c["source"] for c in term.lesson.source["cells"]
                     if c["metadata"].get("nbgrader", {}).get("grade_id") == "hidden_matmul_dot")
    hidden = re.search(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", source, re.S).group(1)
    text = html.unescape(page)
    assert "HIDDEN TESTS" not in text
    for line in hidden.strip().splitlines():
        if len(line.strip()) > 12:
            assert line.strip() not in text, line
    assert "hidden cases pass" not in text, "a hidden test's message is not shown on submit"
    assert "hidden test: it passed" in text
    assert len(term.pages["eager"]) == 3  # two graded attempts and the notice


def test_a_hostile_submission_costs_only_itself_and_its_links_are_not_followed(term):
    folder = term.root / "submitted" / "hostile" / A
    assert (folder / NB).is_file()
    assert not (folder / "stolen.txt").exists() and not (folder / "solutions").exists()
    result = json.loads((term.out / "results" / "hostile" / f"{A}.json").read_text())
    assert any("symbolic link" in n for n in result["notes"]), result["notes"]
    assert term.grades["hostile"][COL["auto"]] == term.grades["ontime"][COL["auto"]]
    phases = term.phases()
    assert phases[term.mallory.name] == "refused" and phases[term.bad_id.name] == "refused"
    assert not (term.root / "submitted" / "mallory").exists()
    errors = " ".join(r["inbound"] + r["why"] for r in term.health["not_graded"])
    assert "mallory" in errors and "bad id" in errors


def test_a_notebook_over_a_structure_limit_costs_only_itself_and_its_round_goes_on(term):
    """A million empty cells and a notebook nested 200,000 deep, handed in with the rest of
    round 2: each is graded as unreadable, 0 with the limit named in its feedback, and the
    round grades and releases everyone else's."""
    ok(term.second)
    phases = term.phases()
    for student, note in (("million", MILLION_NOTE), ("deep", NESTED_NOTE)):
        assert phases[term.folder[student].name] == "released", phases
        row = term.grades[student]
        assert row[COL["status"]] == "missing" and row[COL["total"]] == "0", row
        (page,) = term.pages[student].values()
        assert note in html.unescape(page), page[-2000:]
        assert f"{student} {A}: 0/" in term.second.stdout
    for other in ("eager_2", "late"):
        assert phases[term.folder[other].name] == "released", phases
    assert float(term.grades["late"][COL["auto"]]) == float(term.grades["ontime"][COL["auto"]]) > 0
    refused = {r["inbound"] for r in term.health["not_graded"]}
    assert not refused & {term.folder["million"].name, term.folder["deep"].name}


def test_grades_csv_and_the_health_file_are_current(term):
    assert set(term.grades) >= {"ontime", "twice", "eager", "hostile", "late"}
    assert term.health["queue"] == 0 and term.health["deferred"] == 1
    assert term.health["last_graded"]["student"] in ("eager", "late", "million", "deep")  # round 2
    assert term.health["watching"] == [A]


def test_a_time_in_the_future_counts_from_when_the_folder_last_changed(term):
    folder = term.folder["hostile"]
    changed = max(os.stat(p).st_ctime for p in (folder, *folder.iterdir()) if not p.is_symlink())
    row = term.grades["hostile"]
    when = dt.datetime.fromtimestamp(changed, dt.timezone.utc)
    assert row[COL["submitted_at"]] == f"{when:%Y-%m-%d %H:%M:%S} UTC"
    assert float(row[COL["late_penalty"]]) == 0 and row[COL["total"]] == row[COL["auto"]]  # due in 30 days
    result = json.loads((term.out / "results" / "hostile" / f"{A}.json").read_text())
    assert "submission time in the future" in result["look_at"]
    assert any("2099-01-01 00:00:00 UTC, later than it reached the exchange" in n for n in result["notes"])
    collected = (term.root / "submitted" / "hostile" / A / "timestamp.txt").read_text()
    assert collected.startswith(f"{when:%Y-%m-%d %H:%M:%S}."), "a regrade of submitted/ reads the time believed"
    assert (folder / "timestamp.txt").read_text().startswith("2099"), "the exchange keeps the student's claim"


def test_a_hard_linked_notebook_is_never_graded_as_the_students(term):
    result = json.loads((term.out / "results" / "linker" / f"{A}.json").read_text())
    assert (result["status"], result["score"]) == ("missing", 0)
    assert any(f"'{NB}' was not read: it has 2 hard links" in n for n in result["notes"]), result["notes"]
    assert "files not read" in result["look_at"]
    assert not (term.root / "submitted" / "linker" / A / NB).exists()
    assert term.grades["linker"][COL["auto"]] == "0"


def test_a_student_id_cannot_write_a_line_or_an_escape_into_the_log_or_health_file(term):
    from grader.grading.classroom.report import printable

    out = "".join(done.stdout + done.stderr for done in term.runs)
    assert not any(line.startswith(FAKE) for line in out.splitlines()), out
    assert sum(line.startswith(f"ontime {A}:") for line in out.splitlines()) == 1
    assert "\x1b" not in out and "\u202e" not in out
    for folder in term.forged:
        assert printable(folder.name) in out
        assert term.phases()[folder.name] == "refused"
    assert not any((term.root / "submitted" / student).exists() for student in FORGED)
    text = (term.out / "serve-health.json").read_text()
    assert "\u202e" not in text and "\\u202e" in text
    assert all(line.isprintable() for line in text.splitlines())
    assert {f.name for f in term.forged} <= {r["inbound"] for r in term.health["not_graded"]}
