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

from grader.grading import exchange as ex
from grader.grading import serve
from grader.grading.ledger import Ledger
from grader.grading.serve import PolicyError, SubmitPolicy


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


def test_a_claimed_time_counts_unless_it_was_set_back_before_the_folder_existed(tmp_path):
    claimed = ex.parse_time("2025-03-01 12:00:00.000000 UTC")
    on_time = _entry(tmp_path, changed=claimed + 5)
    assert on_time.at() == (claimed, "")
    set_back = _entry(tmp_path, "amy+01_x+2025-03-01 12:00:00.000000 UTC+s", changed=claimed + 3600)
    at, note = set_back.at()
    assert at == claimed + 3600 and note.startswith(ex.BACKDATED_NOTE) and "13:00:00 UTC" in note
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
    handed = ex.read_entry(entry, [])
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
        ex.collect(ex.read_entry(entry, []), submitted)
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
        "from grader.grading import batch\n"
        "pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context('spawn'),\n"
        "                           initializer=batch._orphan_watch, initargs=(os.getpid(),))\n"
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
    assert "student id 'a b' cannot be used" in found["a b"]
    assert "not a folder" in found["eve"]
    assert len(found) == 3


def test_feedback_on_submit_shows_a_hidden_test_by_name_and_result_only():
    from grader.grading.feedback import render
    from grader.grading.job import JobResult

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
