"""An instructor's term with nbgrader, end to end, on a small class of lesson 01.

Every step of the README's instructor guide runs once, in a copy of the course that is a
git repository, through the real commands:

* the roster and the due date go into the gradebook (``nbgrader db``), and
  ``nbgrader_config.py`` takes every point of a late notebook (penalty_method "zero");
* ``ontime`` hands in through nbgrader's exchange (``release_assignment``, ``submit``,
  ``collect``), with a written answer and a data file;
* ``late`` hands in 14 days after the due date;
* ``renamed`` leaves the release untouched and works in ``-Copy1``;
* ``hostile`` hands in files meant to break the batch or the feedback's release;
* ``absent`` is on the roster and hands in nothing;
* ``grade`` writes into ``marks/`` inside the course; the written answer is graded by
  hand in the gradebook, as formgrader does; two students are graded again;
* ``generate_feedback``, ``release_feedback``, the student's ``fetch_feedback``,
  ``nbgrader export``, and the call behind formgrader's Generate button.

One class, graded once plus one partial regrade (a module fixture); the tests read what
it left.
"""
from __future__ import annotations

import csv
import datetime as dt
import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from grading_corpus import Lesson, sandboxed

pytestmark = pytest.mark.slow
A = "01_matmul_views"
NB = f"{A}.ipynb"
ROSTER = ["absent", "hostile", "late", "ontime", "renamed"]
ESSAY = "free_text_readings"
COMMENT = "Good: the row reading, but say why the weights sum to 1."


def own_words(lesson: Lesson) -> dict[str, str]:
    """Honest answers that are not the course's solution word for word (no integrity note)."""
    return {gid: lesson.with_body(gid, ["checked = True"]) for gid in lesson.answers}


def run(cmd, cwd, env, check=True, timeout=600) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if check:
        assert done.returncode == 0, f"{cmd}:\n{done.stdout}\n{done.stderr}"
    return done


def nbgrader(course, env, *args, check=True):
    return run([sys.executable, "-m", "nbgrader", *args], course, env, check)


def grade(course, env, *args, check=True):
    sandbox = [] if sandboxed() else ["--sandbox", "none"]
    return run([sys.executable, "-m", "grader", "grade", *map(str, args), "--jobs", "2", *sandbox],
               course, env, check)


def rows(path: Path) -> dict[str, dict]:
    return {r["student"]: r for r in csv.DictReader(path.open(encoding="utf-8"))}


class Term:
    pass


@pytest.fixture(scope="module")
def term(tmp_path_factory) -> Term:
    base = tmp_path_factory.mktemp("term")
    t = Term()
    t.course = course = base / "course"
    course.mkdir()
    for name in ("solutions", "notebooks"):
        shutil.copytree(ROOT / name, course / name)
    shutil.copy(ROOT / ".gitignore", course)
    t.cache, t.home = base / "cache", base / "home"
    config = (ROOT / "nbgrader_config.py").read_text()
    (course / "nbgrader_config.py").write_text(config + '\nc.LateSubmissionPlugin.penalty_method = "zero"\n')
    t.home.mkdir()  # the student's: their nbgrader configuration and their copy of the lesson
    (t.home / "nbgrader_config.py").write_text(
        f'c = get_config()\nc.CourseDirectory.course_id = "attention"\n'
        f"c.Exchange.root = {str(course / '.nbgrader_exchange')!r}\nc.Exchange.cache = {str(t.cache)!r}\n")
    # nbgrader runs `alembic` from PATH: as with an activated venv (the README's instructions)
    t.env = env = dict(os.environ, ATTENTION_COURSE_ROOT=str(course),
                       PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    run(["git", "init", "-q", "."], course, env)
    run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A"], course, env)
    run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "course"], course, env)

    lesson = t.lesson = Lesson(A, ROOT)
    answers = own_words(lesson)
    # the class was due a month ago, so a hand-in 14 days late is in the past (a time later than the
    # moment of grading is not believed)
    t.due = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=30)).replace(microsecond=0)
    roster = base / "roster.csv"
    roster.write_text("id,first_name,last_name\n" + "".join(f"{s},{s.title()},Student\n" for s in ROSTER))
    nbgrader(course, env, "db", "student", "import", str(roster))
    nbgrader(course, env, "db", "assignment", "add", A, f"--duedate={t.due:%Y-%m-%d %H:%M:%S} UTC")

    # ontime, through the exchange: the release, the student's copy, submit, collect
    nbgrader(course, env, "release_assignment", A)
    mine = t.home / A
    mine.mkdir()
    nb = lesson.notebook({**answers, ESSAY: "Rows of V are averaged with the weights of row i."})
    (mine / NB).write_text(json.dumps(nb))
    (mine / "data").mkdir()
    (mine / "data" / "extra.csv").write_text("1,2\n")
    nbgrader(t.home, env, "submit", A, "--student=ontime")
    nbgrader(course, env, "collect", A)

    submitted = course / "submitted"
    stamp = lambda when: f"{when:%Y-%m-%d %H:%M:%S.%f} UTC".encode()  # noqa: E731
    # it was handed in before the due date: the collected copy keeps that time
    (submitted / "ontime" / A / "timestamp.txt").write_bytes(stamp(t.due - dt.timedelta(hours=1)))
    folders = {
        "late": {NB: json.dumps(lesson.notebook(answers)).encode(),
                 "timestamp.txt": stamp(t.due + dt.timedelta(days=14)),
                 "submission_secret.txt": b"a" * 128},
        "renamed": {NB: json.dumps(lesson.release).encode(),
                    f"{A}-Copy1.ipynb": json.dumps(lesson.notebook(answers)).encode(),
                    "timestamp.txt": stamp(t.due - dt.timedelta(days=1)),
                    "submission_secret.txt": b"b" * 128},
        "hostile": {NB: json.dumps(lesson.notebook({"matmul_dot": answers["matmul_dot"]})).encode(),
                    "timestamp.txt": b"yesterday, honest",
                    "submission_secret.txt": b"\xff\xfe not a secret \n\n",
                    "we ird\nname.txt": b"odd", "01_matmul_views.ipynb.d/x.txt": b"x",
                    ".grading/01_matmul_views.json": b'{"sha256": "forged"}'},
    }
    for student, files in folders.items():
        for name, data in files.items():
            path = submitted / student / A / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    with open(submitted / "hostile" / A / "big.bin", "wb") as big:
        big.truncate(60 * 2 ** 20)  # past the 50 MB a file may have (sparse: no disk used)

    t.out = course / "marks"
    t.first = grade(course, env, submitted, "--out", t.out)
    t.csv_first = rows(t.out / "grades.csv")

    # the written answer graded by hand, as formgrader's grading page stores it
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "attention") as gb:
        grade_ = gb.find_grade(ESSAY, A, A, "ontime")
        grade_.manual_score, grade_.needs_manual_grade = 1.5, False
        gb.find_comment(ESSAY, A, A, "ontime").manual_comment = COMMENT
        gb.db.commit()
    t.regrade = grade(course, env, submitted, "--out", t.out, "--student", "ontime", "--student", "late",
                      "--assignment", A)
    t.csv = rows(t.out / "grades.csv")
    t.results = {s: json.loads((t.out / "results" / s / f"{A}.json").read_text())
                 for s in ROSTER if s != "absent"}

    t.generated = nbgrader(course, env, "generate_feedback", A, check=False)
    t.released = nbgrader(course, env, "release_feedback", A, check=False)
    t.fetched = nbgrader(t.home, env, "fetch_feedback", A, "--student=ontime", check=False)
    t.export = base / "export.csv"
    nbgrader(course, env, "export", f"--to={t.export}")
    t.git = run(["git", "status", "--porcelain", "--untracked-files=all"], course, env).stdout
    return t


def test_the_class_is_graded_and_exits_0(term):
    for run_ in (term.first, term.regrade):
        assert run_.returncode == 0, run_.stdout + run_.stderr
    assert "Graded 4 of 4 submission(s)" in term.first.stdout
    assert "Graded 2 of 2 submission(s)" in term.regrade.stdout


def test_every_file_of_a_submission_reaches_the_autograded_folder(term):
    folder = term.course / "autograded" / "ontime" / A
    submitted = term.course / "submitted" / "ontime" / A
    for name in ("timestamp.txt", "submission_secret.txt", "data/extra.csv"):
        assert (folder / name).read_bytes() == (submitted / name).read_bytes(), name
    assert (folder / NB).is_file() and (folder / ".grading" / f"{A}.json").is_file()


def test_a_late_submission_loses_its_points_as_nbgrader_autograde_would(term):
    late = term.results["late"]
    assert late["score"] == term.lesson.total() and late["late_penalty"] == term.lesson.total()
    assert late["total"] == 0 and late["late"]["seconds"] == 14 * 86400
    assert "penalty_method = 'zero'" in late["late"]["policy"]
    row = term.csv["late"]
    assert (row["auto"], row["late_penalty"], row["total"]) == (f"{term.lesson.total():g}",) * 2 + ("0",)
    assert "late by 14 days" in row["look_at"]
    assert "after a late penalty of 15" in term.first.stdout
    assert term.results["ontime"]["late"] is None and term.results["ontime"]["late_penalty"] == 0


def test_nbgrader_export_agrees_with_grades_csv(term):
    exported = {r["student_id"]: r for r in csv.DictReader(term.export.open()) if r["assignment"] == A}
    assert set(exported) == set(ROSTER) == set(term.csv)
    for student, row in term.csv.items():
        theirs = exported[student]
        assert float(theirs["score"]) == float(row["total"]), student
        assert float(theirs["late_submission_penalty"]) == float(row["late_penalty"] or 0), student
        assert float(theirs["max_score"]) == float(row["max"]), student
    assert float(exported["late"]["late_submission_penalty"]) == term.lesson.total()


def test_the_work_in_a_renamed_copy_is_graded_and_said_so(term):
    renamed = term.results["renamed"]
    assert renamed["score"] == term.lesson.total()
    assert renamed["graded_files"] == {A: f"{A}-Copy1.ipynb"}
    assert "renamed" in renamed["flags"]
    assert any(f"'{A}-Copy1.ipynb', with 7 answers changed, was graded in its place" in n
               for n in renamed["notes"]), renamed["notes"]
    assert f"{A}-Copy1.ipynb', with 7 answers changed, was graded in its place" in term.first.stdout


def test_grades_csv_has_every_student_and_keeps_rows_a_regrade_did_not_touch(term):
    assert set(term.csv) == set(ROSTER), "a row for everyone on the roster"
    assert term.csv["absent"]["status"] == "not submitted" and term.csv["absent"]["total"] == "0"
    for student in ("renamed", "hostile"):  # not regraded: their rows are the first run's
        assert term.csv[student] == term.csv_first[student]
    total = term.lesson.total()
    assert term.csv["renamed"]["total"] == f"{total:g}"
    assert term.csv["hostile"]["auto"] == "2"  # matmul_dot's visible and hidden tests
    header = list(csv.reader((term.out / "grades.csv").open()))[0]
    questions = [c for c in header if c.startswith("01.")]
    assert questions == [f"01.{q}" for q in (*term.lesson.answers, ESSAY)]
    assert len(header) < 25, header


def test_points_given_by_hand_reach_grades_csv_and_the_feedback(term):
    first, now = term.csv_first["ontime"], term.csv["ontime"]
    assert (first["manual"], first["hand_grading"], first[f"01.{ESSAY}"]) == ("", "to do", "")
    total = term.lesson.total()
    assert (now["auto"], now["manual"], now["total"]) == (f"{total:g}", "1.5", f"{total + 1.5:g}")
    assert now[f"01.{ESSAY}"] == "1.5"
    assert "To grade by hand in formgrader (01_matmul_views): 1 submission(s)." in term.first.stdout
    page = (term.out / "feedback" / "ontime" / A / f"{A}.html").read_text()
    assert "1.5 / 2 points" in page and html.escape(COMMENT) in page


def test_the_console_names_each_note_and_who_needs_a_look(term):
    out = term.first.stdout
    look = out[out.index("Needs a look"):]
    hostile = re.search(r"^  - hostile/01_matmul_views: (.*)$", look, re.M).group(1)
    for reason in ("files not read", "no readable submission time", "submission_secret.txt replaced"):
        assert reason in hostile, look
    assert re.search(r"^  - late/01_matmul_views: late by 14 days \(penalty 15\)$", look, re.M), look
    assert "nothing answered" not in look and "renamed/" not in look and "ontime/" not in look
    assert "Not submitted (01_matmul_views): absent." in out
    assert "'big.bin' was not read: it is too large (60 MB)." in out
    assert "timestamp.txt does not hold a time ('yesterday, honest')" in out


def test_hostile_files_stay_in_their_folder_and_break_nothing(term):
    folder = term.course / "autograded" / "hostile" / A
    assert (folder / "we ird\nname.txt").read_bytes() == b"odd"
    assert (folder / "01_matmul_views.ipynb.d" / "x.txt").read_bytes() == b"x"
    assert not (folder / "big.bin").exists()
    assert re.fullmatch(r"[0-9a-f]{128}", (folder / "submission_secret.txt").read_text())
    assert (folder / "timestamp.txt").read_text() == ""
    sidecar = json.loads((folder / ".grading" / f"{A}.json").read_text())
    assert sidecar["sha256"] != "forged"
    result = term.results["hostile"]
    assert "submission_secret.txt is not one nbgrader writes" in result["exchange"]
    assert [p.name for p in (term.course / "autograded").iterdir()] and \
        sorted(p.name for p in (term.course / "autograded").iterdir()) == ["hostile", "late", "ontime", "renamed"]


def test_feedback_reaches_the_student_through_nbgraders_exchange(term):
    for step in (term.generated, term.released, term.fetched):
        assert step.returncode == 0, step.stdout + step.stderr
    pages = list((term.home / A / "feedback").glob(f"*/{A}.html"))
    assert len(pages) == 1, term.fetched.stdout + term.fetched.stderr
    page = pages[0].read_text()
    assert page == (term.course / "feedback" / "ontime" / A / f"{A}.html").read_text()
    assert "feedback for ontime" in page and "Graded by hand" in page and html.escape(COMMENT) in page
    assert "hidden_matmul_dot" in page and "HIDDEN TESTS" not in page
    source = "".join(c["source"] for c in term.lesson.source["cells"] if c["metadata"].get("nbgrader", {})
                     .get("grade_id") == "hidden_matmul_dot")
    hidden = re.search(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", source, re.S).group(1)
    assert hidden.strip() and hidden.strip() not in html.unescape(page)
    late = (term.course / "feedback" / "late" / A / f"{A}.html").read_text()
    assert "Late penalty" in late and "Submitted 14 days after the due date" in late


def test_the_outputs_in_the_course_are_ignored_by_git(term):
    assert term.git == "", term.git
    ignore = term.out / ".gitignore"
    kept = ignore.read_text()
    ignore.unlink()
    try:  # without the .gitignore grade writes, git would see the outputs
        shown = run(["git", "status", "--porcelain", "--untracked-files=all"], term.course, term.env).stdout
        assert "marks/grades.csv" in shown and "marks/results/" in shown
    finally:
        ignore.write_text(kept)


def test_formgraders_generate_button_writes_exactly_the_release(term, tmp_path):
    """The call formgrader's Generate button makes (NbGraderAPI.generate_assignment), with
    the course's nbgrader_config.py; nbgrader's own output is kept aside to show that it
    differs (the check has teeth)."""
    script = f"""
import shutil, sys
from nbgrader.apps.api import NbGraderAPI
from nbgrader.coursedir import CourseDirectory
from grader.course import nbgrader_config
config = nbgrader_config()
hook = config.GenerateAssignment.post_convert_hook
def keep_then_release(**kw):
    shutil.copytree("notebooks/{A}", {str(tmp_path / 'nbgrader')!r})
    hook(**kw)
config.GenerateAssignment.post_convert_hook = keep_then_release
api = NbGraderAPI(CourseDirectory(config=config), config=config)
result = api.generate_assignment("{A}")
print(result.get("log", ""))
sys.exit(0 if result["success"] else 1)
"""
    done = run([sys.executable, "-c", script], term.course, term.env)
    theirs = (tmp_path / "nbgrader" / NB).read_text()
    ours = (term.course / "notebooks" / A / NB).read_text()
    assert theirs != (ROOT / "notebooks" / A / NB).read_text(), "nbgrader's own output should differ"
    changed = run(["git", "status", "--porcelain", "--untracked-files=all"], term.course, term.env).stdout
    assert changed == "", f"Generate changed the course:\n{changed}\n{done.stdout}"
    assert ours == (ROOT / "notebooks" / A / NB).read_text()
