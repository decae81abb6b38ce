"""The parts of ``python -m grader serve`` one at a time: its policy, the exchange's
folders, the ledger, what a killed service leaves behind. The service end to end is
``tests/test_serve.py``."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from traitlets.config import Config

from grader.grading.classroom import exchange as ex
from grader.grading.classroom import serve, times
from grader.grading.classroom.ledger import Ledger
from grader.grading.classroom.serve import PolicyError, SubmitPolicy


def _config(**settings) -> Config:
    c = Config()
    for key, value in settings.items():
        c.GradeOnSubmit[key] = value
    return c


def test_the_policy_is_read_from_the_configuration():
    assert SubmitPolicy.from_config(Config()) == SubmitPolicy(3, 24.0, False)
    policy = SubmitPolicy.from_config(_config(attempts=5, window_hours=12, hold_feedback_until_due=True))
    assert (policy.attempts, policy.window, policy.hold_feedback_until_due) == (5, 12 * 3600, True)
    assert "5 graded attempt(s)" in policy.describe() and "held until the due date" in policy.describe()
    assert "no attempt limit" in SubmitPolicy.from_config(_config(attempts=0)).describe()


@pytest.mark.parametrize("settings, named", [
    ({"attempt": 3}, "c.GradeOnSubmit.attempt is not a setting"),
    ({"attempts": "3"}, "c.GradeOnSubmit.attempts = '3': expected a number"),
    ({"attempts": True}, "c.GradeOnSubmit.attempts = True"),
    ({"attempts": -1}, "expected 0 (no limit) or more"),
    ({"window_hours": 0}, "expected a positive number of hours"),
    ({"window_hours": float("nan")}, "expected a positive number of hours"),
    ({"hold_feedback_until_due": "yes"}, "expected True or False"),
])
def test_a_wrong_policy_setting_is_an_error_that_names_it(settings, named):
    with pytest.raises(PolicyError, match="c.GradeOnSubmit") as caught:
        SubmitPolicy.from_config(_config(**settings))
    assert named in str(caught.value)


def _entry(tmp_path, name="amy+01_x+2025-03-01 12:00:00.000000 UTC+r", changed=None):
    folder = tmp_path / name
    folder.mkdir()
    parts = name.rsplit("+", 3)
    return ex.Entry(name, folder, parts[0], parts[1], parts[2],
                    folder.stat().st_ctime if changed is None else changed)


def _exchange(root, check_owner=True) -> ex.Exchange:
    c = Config()
    c.Exchange.root = str(root)
    c.CourseDirectory.course_id = "course"
    c.CollectApp.check_owner = check_owner
    return ex.Exchange(c)


def test_a_claimed_time_counts_unless_it_was_set_back_before_the_folder_existed(tmp_path):
    claimed = times.parse_time("2025-03-01 12:00:00.000000 UTC")
    on_time = _entry(tmp_path, changed=claimed + 5)
    assert on_time.at() == (claimed, "")
    set_back = _entry(tmp_path, "amy+01_x+2025-03-01 12:00:00.000000 UTC+s", changed=claimed + 3600)
    at, note = set_back.at()
    assert at == claimed + 3600 and note.startswith(times.CLAIM_NOTE) and "13:00:00 UTC" in note
    garbled = _entry(tmp_path, "amy+01_x+yesterday+t", changed=claimed)
    at, note = garbled.at()
    assert at == claimed and "cannot be read" in note


def test_an_exchange_folder_is_read_without_following_links_and_collected_in_place(tmp_path):
    secret_file = tmp_path / "secret.txt"
    secret_file.write_text("the instructor's")
    (tmp_path / "inbound").mkdir()
    entry = _entry(tmp_path / "inbound")
    (entry.path / "01_x.ipynb").write_text("{}")
    (entry.path / "timestamp.txt").write_text("2025-03-01 12:00:00.000000 UTC")
    (entry.path / "submission_secret.txt").write_text("a" * 128)
    (entry.path / "data").mkdir()
    (entry.path / "data" / "x.csv").write_text("1,2\n")
    (entry.path / "stolen.txt").symlink_to(secret_file)
    os.mkfifo(entry.path / "pipe")
    handed = ex.read_entry(_exchange(tmp_path), entry, [])
    assert handed.secret == "a" * 128 and handed.notebooks == ["01_x"]
    assert sorted(handed.sub.files) == ["01_x.ipynb", "data/x.csv", "submission_secret.txt", "timestamp.txt"]
    assert any("symbolic link" in n for n in handed.sub.notes) and any("FIFO" in n for n in handed.sub.notes)

    submitted = tmp_path / "submitted"
    (submitted / "amy" / "01_x").mkdir(parents=True)
    (submitted / "amy" / "01_x" / "old.txt").write_text("an earlier submission's")
    folder = ex.collect(handed, submitted)
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) == [
        "01_x.ipynb", "data", "data/x.csv", "submission_secret.txt", "timestamp.txt"]
    assert os.listdir(submitted / "amy") == ["01_x"], "nothing is left beside it"


def test_a_collect_cut_short_leaves_the_old_folder_and_its_leftovers_are_tidied(tmp_path, monkeypatch):
    entry = _entry(tmp_path)
    (entry.path / "01_x.ipynb").write_text("{}")
    submitted = tmp_path / "submitted"
    (submitted / "amy" / "01_x").mkdir(parents=True)
    (submitted / "amy" / "01_x" / "old.txt").write_text("kept")

    def cut(*args):
        raise OSError("the disk is full")

    monkeypatch.setattr(ex.os, "replace", cut)
    with pytest.raises(OSError):
        ex.collect(ex.read_entry(_exchange(tmp_path), entry, []), submitted)
    assert (submitted / "amy" / "01_x" / "old.txt").read_text() == "kept"
    (submitted / "amy" / ".01_x.collecting-abc").mkdir()  # as after a SIGKILL
    ex.tidy(submitted)
    assert os.listdir(submitted / "amy") == ["01_x"]


def test_the_ledger_counts_only_graded_attempts_and_survives_a_reopening(tmp_path):
    ledger = Ledger(tmp_path / "serve.sqlite")
    now = time.time()
    for i, phase in enumerate(["released", "held", "graded", "failed", "superseded", "deferred"]):
        ledger.add(f"amy+01+t{i}+r", "amy", "01", now - 100 + i)
        ledger.set(f"amy+01+t{i}+r", phase, graded=now - 50 + i if phase != "superseded" else None)
    ledger.add("bob+01+t+r", "bob", "01", now)
    ledger.set("bob+01+t+r", "released", graded=now)
    assert ledger.graded_since("amy", "01", now - 60) == [now - 50, now - 49, now - 48]
    assert ledger.graded_since("amy", "01", now - 49.5) == [now - 49, now - 48]
    ledger.close()
    again = Ledger(tmp_path / "serve.sqlite")
    assert again.knows("amy+01+t3+r") and not again.knows("amy+01+t9+r")
    assert again.counts()["released"] == 2 and again.last_graded().student == "bob"
    assert [r.inbound for r in again.rows("new", "deferred")] == ["amy+01+t5+r"]


def test_the_ledger_sees_a_secret_handed_in_by_two_students(tmp_path):
    ledger = Ledger(tmp_path / "serve.sqlite")
    ledger.add("amy+01+t+r", "amy", "01", 1.0)
    ledger.set("amy+01+t+r", "collected", secret_sha="abc")
    assert ledger.secret_owner("01", "abc", "bob")
    assert not ledger.secret_owner("01", "abc", "amy") and not ledger.secret_owner("02", "abc", "bob")
    assert not ledger.secret_owner("01", "", "bob")


def test_a_killed_services_scratch_folder_is_removed_and_a_live_ones_is_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(serve.tempfile, "gettempdir", lambda: str(tmp_path))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    for name, pid in (("dead", dead.pid), ("live", os.getpid())):
        folder = tmp_path / f"{serve.SCRATCH}{name}"
        folder.mkdir()
        (folder / "pid").write_text(str(pid))
    (tmp_path / f"{serve.SCRATCH}odd").mkdir()  # no pid: not known to be ours, kept
    serve._tidy_scratch()
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{serve.SCRATCH}live", f"{serve.SCRATCH}odd"]


def test_a_pool_worker_ends_when_the_process_that_started_it_is_killed(tmp_path):
    code = (
        "import multiprocessing, os\n"
        "from concurrent.futures import ProcessPoolExecutor\n"
        "from grader.grading.classroom import pool as runner\n"
        "pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context('spawn'),\n"
        "                           initializer=runner._orphan_watch, initargs=(os.getpid(),))\n"
        "print(pool.submit(os.getpid).result(), flush=True)\n"
        "pool.submit(__import__('time').sleep, 120)  # the worker is busy when its parent dies\n"
        "__import__('time').sleep(0.5)\n"
        "os.kill(os.getpid(), 9)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    worker = int(done.stdout.split()[0])
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/{worker}") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not os.path.exists(f"/proc/{worker}"), "the worker outlived the killed service"


def test_a_page_posted_to_the_exchange_is_where_fetch_feedback_looks(tmp_path):
    from nbgrader.utils import notebook_hash

    c = Config()
    c.Exchange.root = str(tmp_path)
    c.CourseDirectory.course_id = "course"
    (tmp_path / "course" / "inbound").mkdir(parents=True)
    exchange = ex.Exchange(c)
    exchange.check()
    assert oct((tmp_path / "course" / "feedback").stat().st_mode & 0o777) == "0o711"
    exchange.post("s" * 128, ["01_x", "01_x-Copy1"], ex.notice("01_x", "amy", "not graded yet", ["<b>"]))
    for notebook in ("01_x", "01_x-Copy1"):
        page = (tmp_path / "course" / "feedback" / f"{notebook_hash(secret='s' * 128, notebook_id=notebook)}.html")
        assert "&lt;b&gt;" in page.read_text() and "<b>" not in page.read_text().split("<body>")[1]
    assert not list((tmp_path / "course" / "feedback").glob(".notice-*"))


def test_an_exchange_without_a_course_id_or_inbound_folder_is_an_error_that_names_it(tmp_path):
    c = Config()
    c.Exchange.root = str(tmp_path)
    with pytest.raises(ex.ExchangeError, match="course_id"):
        ex.Exchange(c)
    c.CourseDirectory.course_id = "course"
    with pytest.raises(ex.ExchangeError, match="inbound does not exist: release an assignment first"):
        ex.Exchange(c).check()
    c.CollectApp.check_owner = "no"
    with pytest.raises(ex.ExchangeError, match="c.CollectApp.check_owner = 'no': expected True or False"):
        ex.Exchange(c)


def test_unusable_inbound_names_are_refused_with_why(tmp_path):
    c = Config()
    c.Exchange.root = str(tmp_path)
    c.CourseDirectory.course_id = "course"
    inbound = tmp_path / "course" / "inbound"
    inbound.mkdir(parents=True)
    (inbound / "amy+01_x+2025-03-01 12:00:00.000000 UTC+r").mkdir()
    (inbound / "a b+01_x+2025-03-01 12:00:00.000000 UTC+r").mkdir()
    (inbound / "eve+01_x+2025-03-01 12:00:00.000000 UTC+r").symlink_to(tmp_path)
    (inbound / "amy+02_y+2025-03-01 12:00:00.000000 UTC+r").mkdir()  # not watched
    (inbound / "noplus").mkdir()
    found = {e.student: e.problem for e in ex.Exchange(c).entries({"01_x"})}
    assert found["amy"] == ""
    assert [e.student for e in ex.Exchange(c).entries({"01_x"}, lambda name: not name.startswith("amy+"))] == ["amy"]
    assert "student id 'a b' cannot be used" in found["a b"]
    assert "not a folder" in found["eve"]
    assert len(found) == 3


def test_feedback_on_submit_shows_a_hidden_test_by_name_and_result_only():
    from grader.grading.classroom.feedback import render
    from grader.grading.notebook.job import JobResult

    secret = "expected [[1.5, 2.0]] for Q = [[0.25, -3.0]]"
    cells = [{"cell_type": "code", "source": "check('f', f)\n", "outputs": [],
              "metadata": {"nbgrader": {"grade": True, "grade_id": "test_f", "points": 1}}},
             {"cell_type": "code", "source": "### BEGIN HIDDEN TESTS\ncheck('f', f, hidden=True)\n"
              "### END HIDDEN TESTS\n", "metadata": {"nbgrader": {"grade": True, "grade_id": "hidden_f",
                                                                  "points": 2}},
              "outputs": [{"output_type": "stream", "name": "stdout", "text": secret}]}]
    result = JobResult("amy", "01_x", "01_x.ipynb", "graded", tests=[
        {"id": "test_f", "points": 1.0, "max": 1.0, "status": "passed", "message": "visible words"},
        {"id": "hidden_f", "points": 0.0, "max": 2.0, "status": "failed", "message": secret}],
        autograded={"cells": cells})
    full = render(result, "amy", "01_x")
    assert secret in full  # grade's pages for the instructor's release keep the message
    page = render(result, "amy", "01_x", hidden_messages=False)
    assert secret not in page and "Q =" not in page
    assert "hidden_f" in page and "did not pass" in page and "0 / 2" in page
    assert "visible words" in page


# ------------------------------------------------------------------ what serve believes

SOON = "2025-03-01 12:00:00.000000 UTC"


def test_a_name_that_claims_a_time_in_the_future_counts_from_when_it_reached_the_exchange(tmp_path):
    claimed = times.parse_time("2099-01-01 00:00:00.000000 UTC")
    folder_time = times.parse_time(SOON)
    future = _entry(tmp_path, "amy+01_x+2099-01-01 00:00:00.000000 UTC+r", changed=folder_time)
    at, note = future.at()
    assert at == folder_time
    assert note == (f"{times.CLAIM_NOTE} 2099-01-01 00:00:00 UTC, later than it reached the exchange "
                    "(2025-03-01 12:00:00 UTC); the time it reached the exchange counts.")
    # a clock a little ahead of the exchange's is not a lie
    ahead = _entry(tmp_path, f"amy+01_x+{SOON}+s", changed=folder_time - times.SKEW + 1)
    assert ahead.at() == (folder_time, "")


def _handed_in(tmp_path, timestamp: str) -> ex.Entry:
    inbound = tmp_path / "course" / "inbound"
    inbound.mkdir(parents=True, exist_ok=True)
    entry = _entry(inbound, f"amy+01_x+{SOON}+{len(os.listdir(inbound))}")
    (entry.path / "01_x.ipynb").write_text("{}")
    (entry.path / "timestamp.txt").write_text(timestamp)
    return entry


def test_a_timestamp_txt_in_the_future_or_set_back_is_replaced_by_the_file_systems_time(tmp_path):
    from grader.grading.classroom.submission_result import LOOK

    for claim, flag in (("2099-01-01 00:00:00.000000 UTC", times.FUTURE_FLAG),
                        ("2020-01-01 00:00:00.000000 UTC", times.BACKDATED_FLAG)):
        entry = _handed_in(tmp_path, claim)
        changed = max(os.stat(p).st_ctime for p in (entry.path, *entry.path.iterdir()))
        handed = ex.read_entry(_exchange(tmp_path), entry, [])
        sub = handed.sub
        assert sub.changed == changed
        assert sub.timestamp == times.stamp(changed) == sub.files["timestamp.txt"].decode()
        assert sub.flags == [flag] and LOOK[flag].startswith("submission time")
        assert sub.notes == [times.judge(times.parse_time(claim), changed)[1]]
        assert claim[:19] in sub.notes[0]
    now = time.time()
    honest = ex.read_entry(_exchange(tmp_path), _handed_in(tmp_path, times.stamp(now - 1)), [])
    assert honest.sub.timestamp == times.stamp(now - 1) and honest.sub.flags == honest.sub.notes == []


def test_grade_believes_no_timestamp_txt_later_than_the_moment_of_grading():
    from grader.grading.classroom.submissions import Submission

    now = times.parse_time(SOON)
    future = Submission("amy", "01_x", timestamp="2099-01-01 00:00:00.000000 UTC")
    ahead = Submission("bob", "01_x", timestamp=times.stamp(now + times.SKEW - 1))  # a clock ahead
    past = Submission("cy", "01_x", timestamp="2020-01-01 00:00:00.000000 UTC")
    times.doubt_the_future([future, ahead, past], now)
    assert future.timestamp is None and future.flags == [times.FUTURE_FLAG]
    assert "2099-01-01 00:00:00 UTC (its timestamp.txt), later than it was graded" in future.notes[0]
    for sub in (ahead, past):
        assert sub.timestamp is not None and sub.flags == sub.notes == []


def test_a_hard_linked_file_is_left_out_and_never_read_as_the_students(tmp_path):
    from grader.grading.classroom.submissions import NOT_READ

    source = tmp_path / "source.ipynb"
    source.write_text('{"the instructor": "solutions"}')
    entry = _handed_in(tmp_path, times.stamp(time.time()))
    (entry.path / "01_x.ipynb").unlink()
    os.link(source, entry.path / "01_x.ipynb")
    (entry.path / "data").mkdir()
    os.link(source, entry.path / "data" / "copy.txt")
    (entry.path / "data" / "own.txt").write_text("mine")
    handed = ex.read_entry(_exchange(tmp_path), entry, [])
    assert sorted(handed.sub.files) == ["data/own.txt", "timestamp.txt"]
    assert handed.notebooks == [] and handed.problem == ""
    assert handed.sub.notes == [
        f"'{name}' was not read: it has 3 hard links: it is the same file as one elsewhere (perhaps one "
        "only the grader may read), not a copy the student handed in." for name in ("01_x.ipynb", "data/copy.txt")]
    assert handed.sub.flags == [NOT_READ]


@pytest.fixture
def account():
    """A throwaway Unix account, removed afterwards."""
    import pwd
    import shutil

    if os.geteuid() != 0 or not shutil.which("useradd"):
        pytest.skip("making a Unix account needs root and useradd")
    name = f"grt{os.getpid()}"
    subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name], check=True)
    try:
        yield name, pwd.getpwnam(name).pw_uid
    finally:
        subprocess.run(["userdel", name], check=True)


def test_where_students_are_users_a_folder_or_file_not_theirs_is_refused(tmp_path, account):
    from grader.grading.classroom.submissions import NOT_READ

    student, uid = account
    inbound = tmp_path / "course" / "inbound"
    inbound.mkdir(parents=True)
    forged = _entry(inbound, f"{student}+01_x+{SOON}+forged")  # made by root, filed under the student
    (forged.path / "01_x.ipynb").write_text("{}")
    theirs = _entry(inbound, f"{student}+01_x+{SOON}+theirs")
    (theirs.path / "01_x.ipynb").write_text("{}")
    (theirs.path / "planted.txt").write_text("root's")
    for path in (theirs.path, theirs.path / "01_x.ipynb"):
        os.chown(path, uid, -1)
    exchange = _exchange(tmp_path)
    found = {e.name: e.problem for e in exchange.entries({"01_x"})}
    why = f"its folder belongs to root, not to {student}: someone else handed it in under their name"
    assert found == {forged.name: why, theirs.name: ""}
    assert ex.read_entry(exchange, forged, []).problem == why  # read again later: still refused
    handed = ex.read_entry(exchange, theirs, [])
    assert sorted(handed.sub.files) == ["01_x.ipynb"] and handed.sub.flags == [NOT_READ]
    assert handed.sub.notes == [f"'planted.txt' was not read: it belongs to root, not to {student}."]
    # nbgrader's own switch turns the check off (every folder is one account's, as with Docker)
    relaxed = _exchange(tmp_path, check_owner=False)
    assert {e.problem for e in relaxed.entries({"01_x"})} == {""}
    assert sorted(ex.read_entry(relaxed, forged, []).sub.files) == ["01_x.ipynb"]


def test_a_folder_is_read_by_its_descriptor_so_swapping_it_for_a_link_changes_nothing(tmp_path):
    from grader.grading.classroom.submissions import _Collector, open_folder, read_folder

    secret = tmp_path / "solutions"
    (secret / "sub").mkdir(parents=True)
    (secret / "sub" / "answer.txt").write_text("the instructor's")
    folder = tmp_path / "handed"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "answer.txt").write_text("mine")
    fd = open_folder(folder)
    try:
        os.rename(folder / "sub", tmp_path / "moved")  # swapped after the folder was opened
        (folder / "sub").symlink_to(secret / "sub")
        col = _Collector(["01_x"], [])
        read_folder("amy", "01_x", fd, col)
    finally:
        os.close(fd)
    (sub,) = col.result()
    assert sub.files == {} and sub.notes == ["'sub' was not read: it is a symbolic link, which is never followed."]
    with pytest.raises(OSError):
        open_folder(folder / "sub")


def test_a_forged_line_in_an_inbound_name_is_printed_as_one_line(tmp_path, capsys):
    from grader.grading.classroom.report import printable

    inbound = tmp_path / "course" / "inbound"
    inbound.mkdir(parents=True)
    fake = "alice 01_x: 15\u221515, feedback released 1.0 s after submit"  # no "/" in a name: U+2215
    names = [f"eve\n{fake}+01_x+{SOON}+a", f"eve\x1b[2J+01_x+{SOON}+b", f"eve\u202emallory+01_x+{SOON}+c"]
    for name in names:
        (inbound / name).mkdir()
    service = object.__new__(serve.Service)
    service.exchange, service.watched, service.errors = _exchange(tmp_path), {"01_x"}, []
    service.stream, service.err = sys.stdout, sys.stderr
    service.ledger = Ledger(tmp_path / "serve.sqlite")
    service.scan(time.time())
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 3 and not any(line.startswith(fake) for line in lines), err
    assert "\x1b" not in err and "\u202e" not in err
    for name in names:
        assert printable(name) in err
    assert "eve\\nalice 01_x" in err and "eve\\x1b[2J" in err and "eve\\u202emallory" in err
    assert {r.phase for r in service.ledger.rows("refused")} == {"refused"}
    assert len(service.ledger.rows("refused")) == 3


@pytest.mark.parametrize("kind, text, shown", [
    ("newline", "a\nb", "a\\nb"),
    ("carriage return", "a\rb", "a\\rb"),
    ("tab", "a\tb", "a\\tb"),
    ("C0: NUL", "a\x00b", "a\\x00b"),
    ("C0: ESC, a terminal escape", "a\x1b[2Jb", "a\\x1b[2Jb"),
    ("C0: BEL", "a\x07", "a\\x07"),
    ("DEL", "a\x7fb", "a\\x7fb"),
    ("C1: NEL", "a\x85b", "a\\x85b"),
    ("C1: CSI, an 8-bit terminal escape", "a\x9b2Jb", "a\\x9b2Jb"),
    ("line separator", "a\u2028b", "a\\u2028b"),
    ("paragraph separator", "a\u2029b", "a\\u2029b"),
    ("bidi: LRE", "a\u202ab", "a\\u202ab"),
    ("bidi: RLE", "a\u202bb", "a\\u202bb"),
    ("bidi: PDF", "a\u202cb", "a\\u202cb"),
    ("bidi: LRO", "a\u202db", "a\\u202db"),
    ("bidi: RLO", "a\u202eb", "a\\u202eb"),
    ("bidi: LRI", "a\u2066b", "a\\u2066b"),
    ("bidi: RLI", "a\u2067b", "a\\u2067b"),
    ("bidi: FSI", "a\u2068b", "a\\u2068b"),
    ("bidi: PDI", "a\u2069b", "a\\u2069b"),
    ("bidi: LRM", "a\u200eb", "a\\u200eb"),
    ("bidi: RLM", "a\u200fb", "a\\u200fb"),
    ("bidi: ALM", "a\u061cb", "a\\u061cb"),
    ("zero width space", "a\u200bb", "a\\u200bb"),
    ("a lone surrogate (a byte not UTF-8)", "a\udcffb", "a\\udcffb"),
    ("honest: ASCII", "alice", "alice"),
    ("honest: digits and underscore", "bob_2", "bob_2"),
    ("honest: accents", "zoë", "zoë"),
    ("honest: a combining accent", "zoe\u0308", "zoe\u0308"),
    ("honest: other scripts", "Ævar Þór 李雷 Зоя أحمد", "Ævar Þór 李雷 Зоя أحمد"),
    ("honest: a message", "'x.txt' was not read: it is a FIFO.", "'x.txt' was not read: it is a FIFO."),
])
def test_printable_shows_each_kind_of_character_that_could_forge_a_line_as_an_escape(kind, text, shown):
    from grader.grading.classroom.report import printable

    assert printable(text) == shown
    assert printable(text).isprintable() and "\n" not in printable(text)
    assert printable(printable(text)) == printable(text)  # escaping twice changes nothing


def test_json_for_a_person_escapes_what_printable_escapes_and_means_the_same(tmp_path):
    import json

    from grader.grading.classroom.report import write_json

    record = {"inbound": "eve\u202emallory\x85\x9b\u2066+x", "why": "a\nb\x1b[2J", "name": "zoë", "raw": "\udcff"}
    write_json(tmp_path / "h.json", record)
    text = (tmp_path / "h.json").read_text(encoding="utf-8")
    assert json.loads(text) == record
    for char in "\u202e\x85\x9b\u2066\x1b":
        assert char not in text
    assert "\\u202e" in text and "\\u0085" in text and "zoë" in text and "\\udcff" in text
    assert all(line.isprintable() for line in text.splitlines())


class _Feed:
    """A runner's feed that grades nothing: the test says when each job ends."""

    def __init__(self):
        self.out: dict = {}  # key: job, handed over and not yet ended
        self.ended: list = []

    @property
    def pending(self) -> int:  # as a runner's: a job counts until its result is taken
        return len(self.out) + len(self.ended)

    def add(self, key, job) -> None:
        assert key not in self.out
        self.out[key] = job

    def end(self, inbound: str) -> None:
        for key in [k for k in self.out if k[0] == inbound]:
            job = self.out.pop(key)
            self.ended.append((key, f"graded {job}"))

    def arrived(self, timeout):
        ended, self.ended = self.ended, []
        return ended


class _Sub:
    def __init__(self, student, assignment):
        self.student, self.assignment, self.files = student, assignment, {}
        self.key = student, assignment


class _Session:
    notebooks = ("a.ipynb", "b.ipynb")

    def __init__(self):
        self.finished = []

    def submission_jobs(self, subs, jobs):
        groups = {}
        for sub in subs:
            groups[sub.key] = []
            for name in self.notebooks:
                groups[sub.key].append(len(jobs))
                jobs.append(f"{sub.student}/{name}")
        return groups

    def outputs(self, out, secrets):
        session = self

        class Written:
            status, total, total_max = "graded", 1.0, 2.0

            def kept(self):
                return "kept"

        class Outputs:
            def finish(self, sub, done):
                session.finished.append((sub.key, done))
                return Written(), []

        return Outputs()


def _service(tmp_path, monkeypatch) -> serve.Service:
    service = serve.Service.__new__(serve.Service)
    service.ledger, service.feed, service.session = Ledger(tmp_path / "s.sqlite"), _Feed(), _Session()
    service.flights, service.said, service.out = {}, {}, tmp_path
    monkeypatch.setattr(service, "_read_submitted", lambda row, warnings: _Sub(*row.key))
    monkeypatch.setattr(service, "_secret", lambda sub: (b"s", ""))
    return service


def test_serve_hands_each_submission_over_as_it_arrives_and_writes_it_when_its_notebooks_end(
        tmp_path, monkeypatch):
    service = _service(tmp_path, monkeypatch)
    service.ledger.add("amy+01+t1+r", "amy", "01", 1.0, "collected")
    assert service.send() == 1 and service.feed.pending == 2
    service.ledger.add("bob+01+t2+r", "bob", "01", 2.0, "collected")
    assert service.send() == 1 and service.feed.pending == 4  # amy's still out: bob's goes too
    assert service.send() == 0  # nothing is handed over twice
    service.feed.end("bob+01+t2+r")
    assert service.take(0) == 1 and service.session.finished == [
        (("bob", "01"), ["graded bob/a.ipynb", "graded bob/b.ipynb"])]
    assert service.ledger.get("bob+01+t2+r").phase == "graded"
    assert service.ledger.get("amy+01+t1+r").phase == "collected" and not service.idle


def test_a_submission_superseded_while_it_is_graded_has_its_result_dropped(tmp_path, monkeypatch):
    service = _service(tmp_path, monkeypatch)
    service.ledger.add("amy+01+t1+r", "amy", "01", 1.0, "collected")
    service.send()
    service.ledger.set("amy+01+t1+r", "superseded", note="a later one replaced it")
    service.ledger.add("amy+01+t2+r", "amy", "01", 2.0, "collected")
    service.send()
    service.feed.end("amy+01+t2+r")
    assert service.take(0) == 1
    service.feed.end("amy+01+t1+r")  # the earlier one ends last: it must not overwrite
    assert service.take(0) == 0
    assert [key for key, _ in service.session.finished] == [("amy", "01")]
    assert service.session.finished[0][1][0] == "graded amy/a.ipynb"
    assert service.ledger.get("amy+01+t1+r").phase == "superseded"
    assert service.ledger.get("amy+01+t2+r").phase == "graded" and service.idle
