"""The grading pipeline's parts, one at a time and without kernels: reading submissions,
the sandbox's view of the file system, scoring, feedback pages, CSV and progress."""
import io
import json
import os
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT
from grader.grading import nbjson
from grader.grading.feedback import render, visible_source
from grader.grading.job import JobResult
from grader.grading.kernel import CellRun
from grader.grading.report import Progress, grades_csv, submission_record
from grader.grading.sandbox import Limits, Sandbox, private_entries, readonly_paths
from grader.grading.scoring import score_test
from grader.grading.submissions import SubmissionsError, read_submissions

A = "01_matmul_views"


# ------------------------------------------------------------------ submissions

def _tree(root: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def test_a_tree_is_read_whole_and_odd_entries_are_skipped(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("instructor only")
    sub = _tree(tmp_path / "submitted", {
        f"alice/{A}/{A}.ipynb": b"{}", f"alice/{A}/data/x.csv": b"1,2",
        f"alice/{A}/timestamp.txt": b"2025-01-01 10:00:00 UTC",
        f"alice/{A}/.ipynb_checkpoints/{A}-checkpoint.ipynb": b"{}",
        f"bob/99_not_ours/{A}.ipynb": b"{}",
    })
    os.symlink(secret, sub / "alice" / A / "link.txt")
    (sub / "carol" / A).mkdir(parents=True)  # an empty submission still counts
    subs, warnings = read_submissions(tmp_path, [A])  # the course folder above submitted/ works too
    assert [(s.student, s.assignment) for s in subs] == [("alice", A), ("carol", A)]
    alice = subs[0]
    assert sorted(alice.files) == [f"{A}.ipynb", "data/x.csv", "timestamp.txt"]
    assert alice.timestamp == "2025-01-01 10:00:00 UTC"
    assert subs[1].files == {}
    assert warnings == ["skipped bob/99_not_ours: not an assignment of this course"]


def test_a_zip_is_read_without_extracting_and_unsafe_names_are_skipped(tmp_path):
    path = tmp_path / "class.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"export/submitted/alice/{A}/{A}.ipynb", "{}")
        z.writestr(f"export/submitted/bob/{A}/{A}.ipynb", "{}")
        z.writestr("../../escape.txt", "x")
        info = zipfile.ZipInfo(f"export/submitted/bob/{A}/link")
        info.external_attr = (0o120777 << 16)
        z.writestr(info, "/etc/passwd")
    subs, warnings = read_submissions(path, [A])
    assert [(s.student, list(s.files)) for s in subs] == [("alice", [f"{A}.ipynb"]), ("bob", [f"{A}.ipynb"])]
    assert any("unsafe path" in w for w in warnings)
    assert not (tmp_path.parent / "escape.txt").exists()


@pytest.mark.parametrize("make, message", [
    (lambda p: p / "nowhere", "does not exist"),
    (lambda p: _tree(p, {"notes.txt": b"hi"}) / "notes.txt", "not a zip file"),
    (lambda p: _tree(p / "empty", {}) if (p / "empty").mkdir() is None else None, "no submissions found"),
    (lambda p: _tree(p / "sub", {f"{A}/{A}.ipynb": b"{}"}), "give the folder above it"),
])
def test_unreadable_inputs_raise_with_a_reason(tmp_path, make, message):
    with pytest.raises(SubmissionsError, match=message):
        read_submissions(make(tmp_path), [A])


def test_a_zip_without_course_assignments_is_refused(tmp_path):
    path = tmp_path / "other.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("alice/hw1/hw1.ipynb", "{}")
    with pytest.raises(SubmissionsError, match="no {student}/{assignment}/ folders"):
        read_submissions(path, [A])


# ------------------------------------------------------------------ sandbox

def test_the_sandbox_sees_the_python_and_the_kit_but_no_course_data(tmp_path, monkeypatch):
    course = tmp_path / "course"
    (course / "solutions").mkdir(parents=True)
    kit = tmp_path / "scratch" / "kit"
    kit.mkdir(parents=True)
    monkeypatch.chdir(course)
    secrets = [course, tmp_path / "submitted", tmp_path / "out", course / "gradebook.db"]
    binds, _ = readonly_paths(kit, secrets)
    for path in binds:
        for secret in [*secrets, ROOT / "grader", ROOT / "solutions"]:
            assert not (str(secret) + "/").startswith(path.rstrip("/") + "/"), (path, secret)
    assert str(kit) in binds
    # The instructor's side of the package (this checkout) is not there at all.
    assert not any(p.startswith(str(ROOT / "grader")) or p.startswith(str(ROOT / "courseware"))
                   for p in binds)
    assert str(ROOT) not in binds and "/" not in binds


def test_files_only_their_owner_may_read_are_hidden(tmp_path):
    (tmp_path / "public.conf").write_text("x")
    (tmp_path / "secret.key").write_text("x")
    (tmp_path / "secret.key").chmod(0o600)
    (tmp_path / "private").mkdir(mode=0o700)
    (tmp_path / "private" / "inner").write_text("x")
    assert sorted(private_entries([str(tmp_path)])) == [str(tmp_path / "private"), str(tmp_path / "secret.key")]


def test_the_sandbox_command_wraps_the_kernel_in_limits_and_bwrap(tmp_path):
    limits = Limits(memory_mb=512)
    secret = tmp_path / "key"
    secret.write_text("x")
    box = Sandbox("bwrap", ("/usr",), (("usr/bin", "/bin"),), (str(secret), str(tmp_path)),
                  extra=("--uid", "65534"))
    cmd = box.command(["python", "-m", "ipykernel_launcher"], tmp_path, tmp_path / "work", limits)
    assert str(512 * 2**20) in cmd[:8]
    bwrap = cmd[cmd.index("bwrap"):]
    for flag in ("--unshare-all", "--die-with-parent", "--new-session", "--cap-drop"):
        assert flag in bwrap
    assert bwrap[bwrap.index("--ro-bind") + 1] == "/usr"
    assert ["--ro-bind", "/dev/null", str(secret)] == bwrap[bwrap.index("/dev/null") - 1:bwrap.index("/dev/null") + 2]
    assert ["--tmpfs", str(tmp_path)] == bwrap[bwrap.index(str(tmp_path)) - 1:bwrap.index(str(tmp_path)) + 1]
    assert ["--bind", str(tmp_path), str(tmp_path)] == bwrap[bwrap.index("--bind"):bwrap.index("--bind") + 3]
    assert bwrap[-3:] == ["python", "-m", "ipykernel_launcher"]
    plain = Sandbox("none", reason="no bwrap").command(["python"], tmp_path, tmp_path, limits)
    assert "bwrap" not in plain and plain[-1] == "python"
    assert "NOT isolated (no bwrap)" in Sandbox("none", reason="no bwrap").describe()


# ------------------------------------------------------------------ scoring

def _test_cell(outputs=(), points=2):
    cell = nbjson.new_cell("code", "check('x', x)", "t1", {"nbgrader": {"grade": True, "grade_id": "t1", "points": points}})
    cell.outputs = [nbjson.from_dict(o) for o in outputs]
    return cell


def _incident(status, detail):
    run = CellRun(0, status, detail=detail)
    return run, {"status": "incident", "run": run}


@pytest.mark.parametrize("run, verdict, status, points, phrase", [
    (CellRun(0, "ok"), {"status": "passed", "message": "✓ x: all pass"}, "passed", 2, "✓ x: all pass"),
    (CellRun(0, "error"), {"status": "failed", "message": "x is not right yet."}, "failed", 0,
     "x is not right yet."),
    (CellRun(0, "error"), {"status": "failed", "message": "x raised MemoryError: Unable to allocate"},
     "memory", 0, "Unable"),
    (CellRun(0, "error"), {"status": "error", "message": "This test has no checks."}, "error", 0, "no checks"),
    (*_incident("timeout", "stopped after 3 s"), "timeout", 0, "stopped after 3 s"),
    (*_incident("died", "process stopped"), "error", 0, "process stopped"),
    (*_incident("memory", "more than 10 MB"), "memory", 0, "more than 10 MB"),
    (CellRun(0, "wall", detail="reached its time limit"), None, "timeout", 0, "time limit"),
    (None, None, "error", 0, "did not run"),
])
def test_each_way_a_test_can_end_has_its_status(run, verdict, status, points, phrase):
    """Points come from the checker's verdict alone: nothing the test cell printed counts
    (a cell that printed a number used to be nbgrader's partial credit)."""
    cell = _test_cell([{"output_type": "execute_result", "data": {"text/plain": "2"}, "metadata": {},
                        "execution_count": 1}])
    result = score_test(cell, run, verdict, None, "")
    assert (result["status"], result["points"], result["max"]) == (status, points, 2.0)
    assert phrase in result["message"]


def test_a_test_whose_answer_did_not_finish_says_why_first():
    answer = CellRun(3, "timeout", detail="This cell was stopped after 5 s.")
    verdict = {"status": "failed", "message": "There is no `x` in your notebook when this test runs"}
    result = score_test(_test_cell(), CellRun(0, "error"), verdict, answer, "x")
    assert result["status"] == "timeout"
    assert result["message"].startswith("Your answer cell `x` did not finish: This cell was stopped")
    assert "There is no `x`" in result["message"]


# ------------------------------------------------------------------ feedback, CSV, progress

HIDDEN_CELL = 'check("f", f)\n### BEGIN HIDDEN TESTS\ncheck("f", f, hidden=True)\n### END HIDDEN TESTS\n'


def _result(tests, cells, status="graded"):
    nb = nbjson.new_notebook(cells)
    return JobResult("alice", A, f"{A}.ipynb", status, tests=tests,
                     manual=[{"id": "essay", "max": 2.0, "answered": True}], autograded=nb,
                     repairs=["The test cell `t1` was missing and has been put back."])


def test_feedback_shows_hidden_tests_by_name_points_and_message_only():
    test = nbjson.new_cell("code", HIDDEN_CELL, "t1", {"nbgrader": {"grade": True, "grade_id": "t1", "points": 2}})
    test.outputs = [nbjson.new_output("error", ename="CheckFailed", evalue="f is not right yet.",
                                      traceback=['File "<cell>", line 3, in check("f", f, hidden=True)'])]
    md = nbjson.new_cell("markdown", "Hello <script>alert(1)</script> **world**", "m1")
    code = nbjson.new_cell("code", "show()", "c1")
    code.outputs = [nbjson.new_output("display_data", data={"text/html": "<script>x()</script>",
                                                             "text/plain": "<Figure>", "image/png": "iVBORw0KGgo="})]
    tests = [{"id": "t1", "points": 0.0, "max": 2.0, "status": "failed", "message": "f is not right yet."}]
    page = render(_result(tests, [md, code, test]), "alice", A)
    assert "hidden=True" not in page and "HIDDEN TESTS" not in page
    assert "f is not right yet." in page and "t1" in page and "0 / 2" in page
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "<strong>world</strong>" in page
    assert 'src="data:image/png;base64,iVBORw0KGgo="' in page
    assert "was missing and has been put back" in page
    assert "Written answers (2 points) are graded by hand" in page
    assert visible_source(HIDDEN_CELL) == 'check("f", f)\n# (hidden tests: their result is shown below)\n'


def test_grades_csv_has_a_column_per_graded_cell_total_max_and_status():
    tests = [{"id": "t1", "points": 1.0, "max": 1.0, "status": "passed", "message": ""},
             {"id": "t2", "points": 0.0, "max": 2.0, "status": "failed", "message": ""}]
    record = submission_record("alice", A, [_result(tests, [])], "bwrap", None)
    missing = submission_record("bob", A, [_result([{**t, "points": 0.0} for t in tests], [], "missing")], "bwrap", None)
    text = grades_csv([missing, record], ["t1", "t2", "essay"])
    assert text.splitlines() == [
        "student,assignment,t1,t2,essay,total,max,status,integrity",
        f"alice,{A},1,0,,1,3,graded,",
        f"bob,{A},0,0,,0,3,missing,",
    ]
    assert record["manual_max"] == 2.0 and record["tests"][0]["notebook"] == A


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_is_a_bar_with_eta_on_a_terminal_and_lines_otherwise():
    record = submission_record("alice", A, [_result([], [])], "bwrap", None)
    plain = io.StringIO()
    p = Progress(2, plain)
    p.finished(record)
    assert plain.getvalue().startswith(f"[1/2] alice/{A}: 0/0 (graded")
    term = _Terminal()
    p = Progress(2, term)
    p.finished(record)
    p.close()
    assert "1/2" in term.getvalue() and "<" in term.getvalue()  # elapsed<remaining
    assert "[1/2]" not in term.getvalue()


def test_results_json_is_plain_json():
    record = submission_record("alice", A, [_result([], [])], "none", "2025-01-01")
    assert json.loads(json.dumps(record))["sandbox"] == "none"


def test_a_passing_cell_is_summed_up_by_its_last_tick_line():
    from grader.learner.notebook import summary_line

    printed = (
        "✓ matmul_dot: all 12 cases pass; 3 bad inputs rejected with ValueError.\n"
        "  tried: 1×1, rectangular,\n    large values\n"
        "✓ matmul_dot: all 25 hidden cases pass.\n"
    )
    assert summary_line(printed) == "✓ matmul_dot: all 25 hidden cases pass."
    assert summary_line("done\n") == "done"
    assert summary_line("") == "passed"


def _display(data: dict) -> dict:
    return {"msg_type": "display_data", "content": {"data": data, "metadata": {}},
            "parent_header": {}, "header": {"msg_type": "display_data"}}


def _stream(text: str) -> dict:
    return {"msg_type": "stream", "content": {"name": "stdout", "text": text},
            "parent_header": {}, "header": {"msg_type": "stream"}}


def test_figures_count_apart_from_the_text_cap_and_have_a_cap_of_their_own():
    from grader.grading.kernel import _Outputs

    png = "iVBORw0KGgo" + "A" * 400_000  # a 400 kB figure, as the kernel sends it (base64)
    sink = _Outputs(cap=1000, image_cap=1_000_000)
    sink.add(_display({"image/png": png, "text/plain": "<Figure size 640x480 with 1 Axes>"}))
    sink.add(_stream("x" * 900))
    outputs = sink.finish()
    assert outputs[0]["data"]["image/png"] == png, "the figure is kept whole"
    assert not any("[output cut" in o.get("text", "") for o in outputs)

    sink.add(_stream("y" * 500))  # now the text is over its cap: cut, with a note
    sink.add(_display({"image/png": png}))
    sink.add(_display({"image/png": png}))  # the third figure is over the figures' cap
    outputs = sink.finish()
    texts = "".join(o.get("text", "") for o in outputs if o["output_type"] == "stream")
    assert "[output cut: this cell printed more than 1,000 characters]" in texts
    assert "[figure left out" in texts
    assert sum(1 for o in outputs if o["output_type"] == "display_data") == 2
    assert len(texts.replace("\n", "").split("[")[0]) <= 1000


def test_a_pair_of_results_is_narrowed_to_what_differs():
    import numpy as np

    from grader.learner.compare import FLOAT64
    from grader.learner.messages import fmt_pair

    weights = np.full((2, 2, 3, 3), 1 / 3)
    wrong = weights.copy()
    wrong[1, 0, 2, 1] = 0.9
    output = np.arange(24.0).reshape(2, 3, 4)
    want, got = fmt_pair((output, weights), (output, wrong), FLOAT64)
    assert "item 1:" in want and "    item 0:" not in want and "(item 0: as expected)" in want
    assert "[1, 0] of the 2×2×3×3 array:" in got and "0.9" in got
    assert len(got.splitlines()) < 10
    params = {f"p{i}": np.ones(3) for i in range(6)}
    changed = {**params, "p2": np.zeros(3), "p4": np.zeros(3)}
    want, got = fmt_pair(params, changed, FLOAT64)
    assert "'p2':" in got and "'p4':" not in got and "also different: 'p4'" in got
    assert "'p0', 'p1', 'p3', 'p5': as expected" in got
    # values that are not tuples or dicts of one shape are shown whole
    assert fmt_pair(np.ones(2), np.zeros(3), FLOAT64)[1].count("\n") >= 1
