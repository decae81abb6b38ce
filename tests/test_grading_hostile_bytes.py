"""One student's bytes never stop the class, and what the instructor opens is inert
(issue 21, sections 5 and 6).

Units first: reading hostile names and files, the CSV neutraliser and the sanitiser,
each fed something wrong. Then a small class of lesson 01 graded through the real
command, ``python -m grader grade``, once from a folder and once from a zip: a notebook
name and a student folder that are not UTF-8, unreadable files, damaged zip entries, a
formula student id, active markup in a written answer and in an output, and an honest
classmate graded after them. Each gets exactly its honest points, the batch exits 0 and
writes grades.csv, and nothing outside the sandbox changes.
"""
from __future__ import annotations

import csv
import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT
from grading_corpus import Lesson, course_copy, sandboxed

A = "01_matmul_views"


def _put(root: Path, student: bytes, files: dict) -> bytes:
    folder = os.path.join(bytes(root), student, A.encode())
    os.makedirs(folder, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(folder, name if isinstance(name, bytes) else name.encode()), "wb") as f:
            f.write(data)
    return folder


# ------------------------------------------------------------------ reading, units

def test_a_name_that_is_not_utf8_is_read_under_a_printable_name_with_a_note(tmp_path):
    from grader.grading.classroom.submissions import NOT_UTF8, read_submissions

    _put(tmp_path, b"alice", {b"notes-\xff.txt": b"x", f"{A}.ipynb": b"{}"})
    _put(tmp_path, b"bob\xfe", {f"{A}.ipynb": b"{}"})
    look: list[str] = []
    subs, warnings = read_submissions(tmp_path, [A], look=look)
    (alice,) = subs
    assert sorted(alice.files) == [f"{A}.ipynb", "notes-\ufffd.txt"]
    assert NOT_UTF8 in alice.flags
    assert "b'notes-\\xff.txt' is not UTF-8" in alice.notes[0]
    assert look == warnings == ["skipped the student folder b'bob\\xfe': not usable as a student id "
                                "(it is not UTF-8)"]
    json.dumps(alice.notes, ensure_ascii=False).encode("utf-8")  # no lone surrogate is left


def test_files_that_cannot_be_read_cost_only_themselves(tmp_path):
    from grader.grading.classroom.submissions import NOT_READ, read_submissions

    folder = _put(tmp_path, b"alice", {f"{A}.ipynb": b"{}", "ok.txt": b"fine"})
    os.mkfifo(os.path.join(folder, b"pipe"))
    os.symlink("/nonexistent", os.path.join(folder, b"dangling"))
    os.symlink("/etc", os.path.join(folder, b"linked-folder"))
    _put(tmp_path, b"bob", {f"{A}.ipynb": b"{}"})
    (alice, bob), _ = read_submissions(tmp_path, [A])
    assert sorted(alice.files) == [f"{A}.ipynb", "ok.txt"]
    notes = "\n".join(alice.notes)
    assert "'pipe' was not read: it is a FIFO" in notes
    assert "'dangling' was not read: it is a symbolic link" in notes
    assert "'linked-folder' was not read: it is a symbolic link" in notes
    assert alice.flags == [NOT_READ] and bob.flags == [] and bob.notes == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_a_file_without_read_permission_is_noted(tmp_path):
    from grader.grading.classroom.submissions import read_submissions

    folder = _put(tmp_path, b"alice", {f"{A}.ipynb": b"{}", "secret.txt": b"x"})
    os.chmod(os.path.join(folder, b"secret.txt"), 0)
    (alice,), _ = read_submissions(tmp_path, [A])
    assert "'secret.txt' was not read: permission denied." in alice.notes


def test_a_read_that_fails_is_a_note_not_a_crash(tmp_path, monkeypatch):
    """Permission denied as root cannot be made with a mode: the read itself fails here."""
    from grader.grading.classroom import submissions

    _put(tmp_path, b"alice", {f"{A}.ipynb": b"{}", "secret.txt": b"x"})
    real = submissions._read_fd

    def denied(fd):
        if os.readlink(f"/proc/self/fd/{fd}").endswith("secret.txt"):
            raise PermissionError(13, "Permission denied")
        return real(fd)

    monkeypatch.setattr(submissions, "_read_fd", denied)
    (alice,), _ = submissions.read_submissions(tmp_path, [A])
    assert sorted(alice.files) == [f"{A}.ipynb"]
    assert alice.notes == ["'secret.txt' was not read: permission denied."]


def test_names_that_cannot_be_written_are_not_read(tmp_path):
    from grader.grading.classroom.submissions import read_submissions

    path = tmp_path / "class.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"alice/{A}/{A}.ipynb", "{}")
        z.writestr(f"alice/{A}/{'x' * 300}.txt", "long")
        z.writestr(f"alice/{A}/data", "a file")
        z.writestr(f"alice/{A}/data/inside.txt", "and a folder of the same name")
        z.writestr(f"alice/{A}/twice.txt", "one")
        z.writestr(f"alice/{A}/twice.txt", "two")
    (alice,), _ = read_submissions(path, [A])
    assert sorted(alice.files) == [f"{A}.ipynb", "data/inside.txt", "twice.txt"]
    notes = "\n".join(alice.notes)
    assert "longer than 255 bytes" in notes
    assert "'data' was not read: a folder of the same name was handed in too" in notes
    assert "'twice.txt' was not read: another file of the submission has the same name" in notes


def _stored_zip(path: Path, entries: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for name, data in entries.items():
            z.writestr(name, data)


def _flip(path: Path, entry: str, compressed: bool = False) -> None:
    """Damage one entry's data, as a broken download does."""
    with zipfile.ZipFile(path) as z:
        info = z.getinfo(entry)
    raw = bytearray(path.read_bytes())
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    raw[start + (2 if compressed else info.compress_size // 2)] ^= 0xFF
    path.write_bytes(bytes(raw))


def test_a_damaged_zip_entry_costs_only_that_file(tmp_path):
    from grader.grading.classroom.submissions import NOT_READ, read_submissions

    path = tmp_path / "class.zip"
    _stored_zip(path, {f"alice/{A}/{A}.ipynb": b"{" + b" " * 100 + b"}", f"bob/{A}/{A}.ipynb": b"{}"})
    _flip(path, f"alice/{A}/{A}.ipynb")
    (alice, bob), _ = read_submissions(path, [A])
    assert alice.files == {} and alice.flags == [NOT_READ]
    assert "checksum is wrong" in alice.notes[0]
    assert bob.files == {f"{A}.ipynb": b"{}"}


def test_a_cut_deflate_stream_costs_only_that_file(tmp_path):
    from grader.grading.classroom.submissions import read_submissions

    path = tmp_path / "class.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(f"alice/{A}/{A}.ipynb", json.dumps({"cells": list(range(2000))}))
        z.writestr(f"bob/{A}/{A}.ipynb", "{}")
    _flip(path, f"alice/{A}/{A}.ipynb", compressed=True)
    (alice, bob), _ = read_submissions(path, [A])
    assert alice.files == {} and "damaged" in alice.notes[0]
    assert bob.files == {f"{A}.ipynb": b"{}"}


def test_a_zip_whose_names_lie_about_utf8_is_still_read(tmp_path):
    """Python's zipfile refuses a whole archive when one entry says its name is UTF-8 and
    it is not; the reader opens it around that entry."""
    from grader.grading.classroom.submissions import read_submissions

    path = tmp_path / "class.zip"
    _stored_zip(path, {f"alice/{A}/{A}.ipynb": b"{}", f"b\u00e9b/{A}/{A}.ipynb": b"{}"})
    raw = path.read_bytes().replace("b\u00e9b".encode(), b"b\xff\xfeb")
    path.write_bytes(raw)
    with pytest.raises(UnicodeDecodeError):
        zipfile.ZipFile(path)
    look: list[str] = []
    subs, _ = read_submissions(path, [A], look=look)
    assert [s.student for s in subs] == ["alice"]
    assert look == ["skipped the student folder b'b\\xff\\xfeb': not usable as a student id (it is not UTF-8)"]


# ------------------------------------------------------------------ grades.csv, units

@pytest.mark.parametrize("cell, written", [
    ("@SUM(1)", "'@SUM(1)"), ("=1+1", "'=1+1"), ("+1", "'+1"), ("-1", "'-1"),
    ("\t=1", "'\t=1"), ("\r=1", "'\r=1"), ("  =HYPERLINK(\"x\")", "'  =HYPERLINK(\"x\")"),
    ("\uff1d1", "'\uff1d1"), ("alice", "alice"), ("j.doe@example.org", "j.doe@example.org"), ("", ""),
])
def test_a_text_cell_never_starts_a_formula(cell, written):
    from grader.grading.classroom.grades import neutral

    assert neutral(cell) == written


def test_only_the_graders_own_numbers_may_start_with_a_minus():
    from grader.grading.classroom.grades import Number, _num, neutral

    assert neutral(_num(-2.5)) == "-2.5" and neutral(_num(3)) == "3"
    assert neutral("-2.5") == "'-2.5"  # text that looks like a number is still text
    assert neutral(Number("-1+cmd|' /C calc'!A0")) == "'-1+cmd|' /C calc'!A0"  # not a number


def test_grades_csv_neutralises_every_cell_and_quotes_separators():
    from grader.grading.classroom.grades import _Neutral

    out = __import__("io").StringIO()
    _Neutral(csv.writer(out, lineterminator="\n")).writerow(["@SUM(1)", 'a,"b"', "=1\n=2"])
    assert out.getvalue() == "'@SUM(1),\"a,\"\"b\"\"\",\"'=1\n=2\"\n"
    assert next(csv.reader([out.getvalue()])) == ["'@SUM(1)", 'a,"b"', "'=1\n=2"]


# ------------------------------------------------------------------ the sanitiser, units

HOSTILE_MARKDOWN = [
    "<script>document.title = 'ran'</script>",
    "<img src=x onerror=\"document.title='ran'\">",
    "[click](javascript:document.title='ran')",
    "<a href=\"jav&#x61;script:alert(1)\">x</a>",
    "<iframe src=\"https://example.org\"></iframe>",
    "<object data=x></object><embed src=x>",
    "<svg><script>alert(1)</script></svg>",
    "<details open ontoggle=alert(1)>x</details>",
    "$\\href{javascript:alert(1)}{x}$",
    "<div style=\"background:url(javascript:alert(1))\">x</div>",
    "<a href=\"java\tscript:alert(1)\">x</a>",
]
HONEST_MARKDOWN = [
    "The scores are **scaled** by $1/\\sqrt{d_k}$, so $a<b$ holds; `<pad>` is masked.",
    "> a quote\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\nx = a @ b\n```",
    "<details><summary>why</summary><span style=\"color: red\">because</span></details>",
    "[the paper](https://arxiv.org/abs/1706.03762) and ![fig](attachment:fig.png)",
]


@pytest.mark.parametrize("source", HOSTILE_MARKDOWN)
def test_active_markup_in_markdown_is_removed_and_said(source):
    from grader.grading.notebook import inert

    new, found = inert.markdown(source)
    assert found, source
    assert inert.NOTE in new
    html = inert._markdown_html(new)
    assert inert.findings(html) == [], html
    assert "javascript:" not in html.lower() or '<div class="highlight"><pre>' in html  # as text


@pytest.mark.parametrize("source", HONEST_MARKDOWN)
def test_ordinary_markdown_stays_exactly_as_it_was(source):
    from grader.grading.notebook import inert

    assert inert.markdown(source) == (source, [])


def test_the_courses_own_markdown_is_left_alone():
    from grader.grading.notebook import inert

    for path in sorted((ROOT / "solutions").glob("*/*.ipynb")) + sorted((ROOT / "notebooks").glob("*/*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        assert inert.notebook(nb) == [], path


def _out(data: dict, metadata: dict | None = None) -> dict:
    return {"output_type": "display_data", "data": dict(data), "metadata": metadata or {}}


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>'


def test_outputs_keep_figures_and_lose_active_markup():
    from grader.grading.notebook import inert

    figure = _out({"image/png": PNG, "text/plain": "<Figure>"}, {"image/png": {"width": 600}})
    svg = _out({"image/svg+xml": SVG})
    table = _out({"text/html": "<table><tr><td>1</td></tr></table>"})
    assert [inert.output(o) for o in (figure, svg, table)] == [[], [], []]
    assert figure["data"]["image/png"] == PNG and svg["data"]["image/svg+xml"] == SVG

    script = _out({"text/html": "<b>kept</b><script>window.ran = 1</script>", "text/plain": "x"})
    assert inert.output(script) and script["data"]["text/html"].startswith("<b>kept</b>")
    assert "<script" not in script["data"]["text/html"]
    js = _out({"application/javascript": "window.ran = 1", "text/plain": "<JS>"})
    assert inert.output(js) == ["a application/javascript output"] and "application/javascript" not in js["data"]
    bad_svg = _out({"image/svg+xml": '<svg onload="window.ran=1"/>', "text/plain": "svg"})
    assert inert.output(bad_svg) and "image/svg+xml" not in bad_svg["data"]
    fake_png = _out({"image/png": '"><script>window.ran=1</script>'})
    assert inert.output(fake_png) and fake_png["data"] == {
        "text/plain": "[output removed by the grader: it was active markup]"}
    widget = _out({"application/vnd.jupyter.widget-view+json": {"model_id": "</script><script>x"}})
    assert inert.output(widget)
    real_widget = _out({"application/vnd.jupyter.widget-view+json": {
        "model_id": "0" * 32, "version_major": 2, "version_minor": 0}})
    assert inert.output(real_widget) == []
    attribute = _out({"image/png": PNG}, {"image/png": {"width": "1 onerror=alert(1)"}})
    assert inert.output(attribute) == ["output metadata that is not plain"] and attribute["metadata"] == {}


# ------------------------------------------------------------------ the real command

SANDBOX = [] if sandboxed() else ["--sandbox", "none"]
FAKE = f"[9\u22159] zz_honest\u2215{A}: 99\u221599 (graded, 1.0 s)"  # a line grade prints ("/" cannot be)
FORGED = [f"eve\n{FAKE}", "eve\x1b[2J", "eve\u202emallory"]  # student folders
FUTURE = b"2099-01-01 00:00:00.000000 UTC"
HOSTILE_ANSWER = ("Attention weights sum to one.\n\n<script>document.title = 'ran'</script>"
                  "<img src=x onerror=\"document.title='ran'\"> [more](javascript:document.title='ran')")
HOSTILE_OUTPUT = ("\nfrom IPython.display import HTML, Javascript, display\n"
                  "display(HTML('<b>kept</b><img src=x onerror=\"document.title=1\">"
                  "<script>document.title=2</script>'))\ndisplay(Javascript('document.title=3'))\n")


def _hashes(*folders: Path) -> dict[str, str]:
    out = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")) if folder.is_dir() else [folder]:
            if path.is_file() and not path.is_symlink():
                out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _grade(course: Path, *args) -> subprocess.CompletedProcess:
    env = dict(os.environ, ATTENTION_COURSE_ROOT=str(course),
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "grader", "grade", *map(str, args), "--jobs", "2",
                           *SANDBOX], env=env, capture_output=True, text=True, cwd=course, timeout=900)


class Class:
    pass


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Class:
    base = tmp_path_factory.mktemp("hostile")
    c = Class()
    c.course = course_copy(ROOT, base / "course")
    c.lesson = lesson = Lesson(A, ROOT)
    honest = lesson.files(lesson.honest())
    nb = lesson.honest()
    for cell in nb["cells"]:
        gid = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if gid == "free_text_readings":
            cell["source"] = HOSTILE_ANSWER
        if gid == "matmul_dot":
            cell["source"] += HOSTILE_OUTPUT
    c.submitted = base / "submitted"
    _put(c.submitted, b"aa_name", {f"{A}-\xff.ipynb".encode("latin-1"): honest[f"{A}.ipynb"],
                                   b"timestamp.txt": honest["timestamp.txt"]})
    _put(c.submitted, b"ab_folder\xff", honest)
    folder = _put(c.submitted, b"ac_unreadable", {**honest, "timestamp.txt": FUTURE})
    os.mkfifo(os.path.join(folder, b"pipe.txt"))
    os.mkfifo(os.path.join(folder, f"pipe\n{FAKE}\x1b[2J\u202e.txt".encode()))
    for student in FORGED:
        _put(c.submitted, student.encode(), honest)
    os.makedirs(os.path.join(bytes(c.submitted), b"zz_honest", f"x\n{FAKE}".encode()))
    os.symlink("/nonexistent", os.path.join(folder, b"dangling.txt"))
    folder = _put(c.submitted, b"ad_nb_link", {b"timestamp.txt": honest["timestamp.txt"]})
    os.symlink("/nonexistent", os.path.join(folder, f"{A}.ipynb".encode()))
    _put(c.submitted, b"@SUM(1)", honest)
    _put(c.submitted, b"=1+1", honest)
    _put(c.submitted, b"ae_markup", lesson.files(nb))
    _put(c.submitted, b"zz_honest", honest)
    c.zip = base / "class.zip"
    _stored_zip(c.zip, {**{f"submitted/ba_crc/{A}/{n}": d for n, d in honest.items()},
                        **{f"submitted/bb_cut/{A}/{n}": d for n, d in honest.items()},
                        **{f"submitted/zz_zip_honest/{A}/{n}": d for n, d in honest.items()}})
    _flip(c.zip, f"submitted/ba_crc/{A}/{A}.ipynb")
    with zipfile.ZipFile(c.zip) as z:  # bb_cut's notebook ends half way: its entry is cut short
        info = z.getinfo(f"submitted/bb_cut/{A}/{A}.ipynb")
    raw = bytearray(c.zip.read_bytes())
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    raw[start + info.compress_size // 2: start + info.compress_size] = b"\0" * (info.compress_size
                                                                                 - info.compress_size // 2)
    c.zip.write_bytes(bytes(raw))

    kept = [c.course / "solutions", c.course / "notebooks", c.course / "nbgrader_config.py", c.submitted, c.zip]
    c.before = _hashes(*kept)
    c.tree = _grade(c.course, c.submitted, "--out", base / "out-tree")
    c.tree_csv = (base / "out-tree" / "grades.csv").read_text(encoding="utf-8")
    c.zipped = _grade(c.course, c.zip, "--out", base / "out-zip")
    c.after = _hashes(*kept)
    c.out = {"tree": base / "out-tree", "zip": base / "out-zip"}
    return c


def _result(c: Class, run: str, student: str) -> dict:
    return json.loads((c.out[run] / "results" / student / f"{A}.json").read_text(encoding="utf-8"))


def _rows(text: str) -> dict[str, dict]:
    return {r["student"]: r for r in csv.DictReader(text.splitlines())}


@pytest.mark.slow
def test_the_class_is_graded_and_the_batch_exits_0(graded):
    for run in (graded.tree, graded.zipped):
        assert run.returncode == 0, f"{run.stdout}\n{run.stderr}"
        assert "Traceback" not in run.stderr, run.stderr
    assert "Graded 6 of 6 submission(s)" in graded.tree.stdout, graded.tree.stdout
    assert "Graded 3 of 3 submission(s)" in graded.zipped.stdout, graded.zipped.stdout
    for run in ("tree", "zip"):
        assert (graded.out[run] / "grades.csv").is_file()


@pytest.mark.slow
@pytest.mark.parametrize("run, student, points, status, note, look", [
    ("tree", "aa_name", "full", "graded", "is not UTF-8", "file names not UTF-8"),
    ("tree", "ac_unreadable", "full", "graded", "'pipe.txt' was not read: it is a FIFO", "files not read"),
    ("tree", "ad_nb_link", 0, "missing", "was not read: it is a symbolic link", "files not read"),
    ("tree", "@SUM(1)", "full", "graded", "", ""),
    ("tree", "ae_markup", "full", "graded", "", "integrity note"),
    ("tree", "zz_honest", "full", "graded", "", ""),
    ("zip", "ba_crc", 0, "missing", "checksum is wrong", "files not read"),
    ("zip", "bb_cut", 0, "missing", "was not read: its zip entry is damaged", "files not read"),
    ("zip", "zz_zip_honest", "full", "graded", "", ""),
])
def test_each_submission_gets_exactly_its_honest_points(graded, run, student, points, status, note, look):
    result = _result(graded, run, student)
    want = graded.lesson.total() if points == "full" else points
    assert (result["status"], result["score"]) == (status, want), result["notes"]
    if status == "graded":
        expect = graded.lesson.expect()
        assert {t["id"]: t["points"] for t in result["tests"]} == {k: e.points for k, e in expect.items()}
    assert note in "\n".join(result["notes"])
    assert look in "; ".join(result["look_at"])
    if not look:
        assert not any("markup" in n for n in result["integrity"]), result["integrity"]


@pytest.mark.slow
def test_what_was_not_graded_is_under_needs_a_look(graded):
    tail = graded.tree.stdout.split("Needs a look", 1)[1]
    assert "not graded: skipped the student folder b'ab_folder\\xff': not usable as a student id (it is not UTF-8)" in tail
    assert "not graded: skipped the student folder '=1+1'" in tail
    for student in ("aa_name", "ac_unreadable", "ad_nb_link", "ae_markup"):
        assert f"  - {student}/{A}:" in tail, tail
    zip_tail = graded.zipped.stdout.split("Needs a look", 1)[1]
    assert f"  - ba_crc/{A}: files not read" in zip_tail and f"  - bb_cut/{A}: files not read" in zip_tail


@pytest.mark.slow
def test_no_cell_of_grades_csv_is_a_formula(graded):
    for text in (graded.tree_csv, (graded.out["zip"] / "grades.csv").read_text(encoding="utf-8")):
        for row in csv.reader(text.splitlines()):
            for cell in row:
                assert not cell.lstrip(" ").startswith(("=", "+", "@", "\t", "\r")), cell
                if cell.startswith("-"):
                    float(cell)  # only the grader's own numbers
    rows = _rows(graded.tree_csv)
    assert "'@SUM(1)" in rows and "@SUM(1)" not in rows
    assert float(rows["'@SUM(1)"]["total"]) == graded.lesson.total()


@pytest.mark.slow
def test_the_autograded_notebook_is_inert_and_keeps_its_figures(graded):
    import nbformat

    from grader.grading.notebook import inert

    path = graded.course / "autograded" / "ae_markup" / A / f"{A}.ipynb"
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    text = path.read_text(encoding="utf-8")
    outputs = json.dumps([c.outputs for c in nb.cells if c.cell_type == "code"])  # code is shown escaped
    for active in ("<script", "onerror", "javascript:", "application/javascript"):
        assert active not in outputs, active
    assert "<b>kept</b>" in outputs
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            rendered = inert._markdown_html(cell.source)
            assert inert.findings(rendered) == [], rendered
    (answer,) = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "free_text_readings"]
    assert answer.source.startswith(inert.NOTE) and "Attention weights sum to one." in answer.source
    assert all(inert.output(o) == [] for c in json.loads(text)["cells"] for o in c.get("outputs", []))
    integrity = "\n".join(_result(graded, "tree", "ae_markup")["integrity"])
    assert "`free_text_readings`: active markup was removed" in integrity
    assert "its output held active markup" in integrity and "application/javascript" in integrity
    honest = nbformat.read(graded.course / "autograded" / "zz_honest" / A / f"{A}.ipynb", as_version=4)
    figures = sum("image/png" in o.get("data", {}) for c in honest.cells if c.cell_type == "code"
                  for o in c.outputs)
    assert figures and figures == sum("image/png" in o.get("data", {}) for c in nb.cells
                                      if c.cell_type == "code" for o in c.outputs)


@pytest.mark.slow
def test_nothing_outside_the_sandbox_changed(graded):
    assert graded.before == graded.after
    # the zip's batch left the folder's students' gradebook rows as they were
    before, after = _rows(graded.tree_csv), _rows((graded.out["zip"] / "grades.csv").read_text(encoding="utf-8"))
    for student, row in before.items():
        keep = ["auto", "manual", "late_penalty", "total", "max"]  # status comes from each --out's JSON
        assert [row[k] for k in keep] == [after[student][k] for k in keep], student


@pytest.mark.slow
def test_no_name_writes_a_line_or_an_escape_into_the_console(graded):
    from grader.grading.classroom.report import printable

    out = graded.tree.stdout + graded.tree.stderr
    lines = out.splitlines()
    assert not any(line.startswith(FAKE) or line.startswith(f"{FAKE[:5]}") for line in lines), out
    assert "\x1b" not in out and "\u202e" not in out
    for student in FORGED:
        line = f"skipped the student folder {student!r}: not usable as a student id"
        assert sum(printable(line) in x for x in lines) == 2, out  # the warning, and under "Needs a look"
    assert printable(f"warning: skipped zz_honest/x\n{FAKE}: not an assignment of this course") in lines
    notes = "\n".join(_result(graded, "tree", "ac_unreadable")["notes"])
    assert repr(f"pipe\n{FAKE}\x1b[2J\u202e.txt") + " was not read: it is a FIFO" in notes
    text = (graded.out["tree"] / "results" / "ac_unreadable" / f"{A}.json").read_text(encoding="utf-8")
    assert "\u202e" not in text and all(line.isprintable() for line in text.splitlines())


@pytest.mark.slow
def test_a_timestamp_in_the_future_of_grading_is_not_believed_and_is_said(graded):
    result = _result(graded, "tree", "ac_unreadable")
    assert result["timestamp"] is None and "submission time in the future" in result["look_at"]
    said = "2099-01-01 00:00:00 UTC (its timestamp.txt), later than it was graded"
    assert any(said in n for n in result["notes"]), result["notes"]
    assert _rows(graded.tree_csv)["ac_unreadable"]["submitted_at"] == ""
    assert (graded.course / "autograded" / "ac_unreadable" / A / "timestamp.txt").read_text() == ""
    assert _rows(graded.tree_csv)["zz_honest"]["submitted_at"] == "2025-03-01 12:00:00 UTC"
    tail = graded.tree.stdout.split("Needs a look", 1)[1]
    assert f"  - ac_unreadable/{A}: " in tail and "submission time in the future" in tail
