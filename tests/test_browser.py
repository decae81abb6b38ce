"""The course in a real browser (DESIGN.md, gate 8): `make lab` on a copy of the course,
driven by Playwright in Debian's headless Chromium.

- the lesson with the attention widget (02; lesson 01 until 02 exists) runs to the end
  from Run > Run All Cells, and no cell shows an error or needs scrolling sideways (and
  these checks do catch a throwaway notebook with a traceback and a too-long line);
- the attention widget's slider, dragged, redraws its figure (screenshots differ);
- the Validate button passes the solution notebook;
- in the student notebook the check cells are read-only and the cells come in order;
- formgrader lists every assignment; the assignment list shows a released one, and Fetch
  downloads it;
- a submission of it, collected and graded by `python -m grader grade`: formgrader's
  Generate Feedback and Release Feedback buttons, then the assignment list's Fetch
  Feedback, bring the student the course's feedback page;
- a submission with scripts, event handlers and `javascript:` links in its written answer
  and its outputs, graded, opens in formgrader with no script run and its figures shown;
- the server log shows no error, and the server shuts down cleanly in any case.

Screenshots go to test-artifacts/browser/ (ignored by git). Without Chromium the module
is skipped with the command that installs it; with CI set it fails instead.
"""
from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from browser_support import (FLAWED_CELLS, STDERR, Lab, chromium, chromium_missing_reason,
                             course_copy, jupyter_lab, write_notebook, write_widget_demo)
from conftest import ROOT
from grader.course import assignments, released_notebook, source_notebook

pytestmark = pytest.mark.slow

ARTIFACTS = ROOT / "test-artifacts" / "browser"
WIDGET_LESSON = "02_dot_product_attention"
WIDGET_LABEL = re.compile(r"temperature|scale", re.IGNORECASE)
# The lesson run in the browser: the one with the attention widget, once it exists; or the
# lesson BROWSER_LESSON names, for a run of any other lesson by hand
# (BROWSER_LESSON=09_tiny_gpt .venv/bin/python -m pytest tests/test_browser.py).
LESSON = os.environ.get("BROWSER_LESSON") or (
    WIDGET_LESSON if source_notebook(WIDGET_LESSON, ROOT).exists() else "01_matmul_views")
# Until lesson 02 exists, the widget path is tested on a throwaway notebook in the copy.
WIDGET_DEMO = "widget_demo/widget_demo.ipynb"
WIDGET_NOTEBOOK = (f"solutions/{LESSON}/{LESSON}.ipynb" if LESSON == WIDGET_LESSON
                   else WIDGET_DEMO)
FLAWED = "browser_checks/flawed.ipynb"


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@pytest.fixture(scope="module")
def artifacts() -> Path:
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    ARTIFACTS.mkdir(parents=True)
    return ARTIFACTS


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """A copy of the course with LESSON released to the exchange, as an instructor would."""
    reason = chromium_missing_reason()
    if reason:
        if in_ci():
            pytest.fail(f"{reason} CI is set, so the browser tests must run.")
        pytest.skip(reason)
    course = course_copy(ROOT, tmp_path_factory.mktemp("browser") / "course")
    with open(course / "nbgrader_config.py", "a", encoding="utf-8") as config:
        # the student's cache of submissions (nbgrader's default is in the home folder)
        config.write(f"\nc.Exchange.cache = {str(tmp_path_factory.mktemp('nbgrader-cache'))!r}\n")
    if WIDGET_NOTEBOOK == WIDGET_DEMO:
        write_widget_demo(course / WIDGET_DEMO)
    write_notebook(course / FLAWED, FLAWED_CELLS)
    done = subprocess.run([sys.executable, "-m", "nbgrader", "release_assignment", LESSON],
                          cwd=course, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return course


@pytest.fixture(scope="module")
def server(course, tmp_path_factory, artifacts):
    scratch = tmp_path_factory.mktemp("lab")
    try:
        with jupyter_lab(ROOT, course, scratch) as server:
            yield server
        assert server.process.returncode == 0, f"`make lab` ended with {server.process.returncode}"
    finally:
        if (scratch / "jupyterlab.log").exists():
            shutil.copy(scratch / "jupyterlab.log", artifacts / "jupyterlab.log")


@pytest.fixture(scope="module")
def browser(server, tmp_path_factory):
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as context:
        yield context


@pytest.fixture
def lab(request, browser, server, artifacts):
    """A new tab; when the test fails, a screenshot of where it stood."""
    page = browser.new_page()
    failed_before = request.session.testsfailed
    try:
        yield (lab := Lab(page, server, artifacts))
        if request.session.testsfailed > failed_before:
            lab.shot(f"FAILED-{request.node.name}")
    finally:
        page.close()


@pytest.fixture(scope="module")
def executed(browser, server, artifacts):
    """LESSON's solution notebook after Run > Run All Cells: the `Lab` and its cells."""
    page = browser.new_page()
    lab = Lab(page, server, artifacts / LESSON)
    lab.open(f"solutions/{LESSON}/{LESSON}.ipynb")
    cells = lab.run_all()
    lab.shot("end-of-notebook")
    for cell in cells:
        if cell["outputs"]:
            lab.shot(f"cell-{cell['index']:02d}", lab.cell(cell["index"]))
    yield lab, cells
    page.close()


def _describe(cell: dict) -> str:
    return f"cell {cell['index']} ({cell['source'][:60]!r})"


def shown_errors(cells: list[dict]) -> dict[int, str]:
    """Cells showing a traceback or stderr text (Lab gives both one mime type): the last
    lines of what they show, by cell index."""
    return {c["index"]: "\n".join(o["text"].strip().splitlines()[-8:])
            for c in cells for o in c["outputs"] if o["mime"] == STDERR}


def not_run(cells: list[dict]) -> list[int]:
    return [c["index"] for c in cells if c["kind"] == "code" and not re.search(r"\d", c["prompt"])]


def too_wide(cells: list[dict]) -> dict[int, str]:
    """Cells whose code or output is wider than the notebook (a sideways scroll bar)."""
    return {c["index"]: ", ".join(c["wide"]) for c in cells if c["wide"]}


def test_lesson_runs_to_the_end_without_errors(executed):
    _, cells = executed
    assert any(c["kind"] == "code" for c in cells), "no code cell on the page"
    errors = shown_errors(cells)
    assert not errors, "cells show errors or warnings:\n\n" + "\n\n".join(
        f"{_describe(cells[i])}:\n{text}" for i, text in errors.items())
    stopped = not_run(cells)
    assert not stopped, f"Run All stopped before {_describe(cells[stopped[0]])}"
    assert any(o["mime"] == "image/png" for c in cells for o in c["outputs"]), "no figure shown"


def test_no_cell_needs_scrolling_sideways(executed):
    _, cells = executed
    wide = too_wide(cells)
    assert not wide, "content wider than the notebook:\n" + "\n".join(
        f"{_describe(cells[i])}: {what}" for i, what in wide.items())


def test_the_page_checks_catch_a_flawed_notebook(lab):
    """The three checks above, on a notebook with a too-long line, a traceback and a cell
    that Run All never reaches: each must point at its cell."""
    lab.open(FLAWED)
    cells = lab.run_all()
    assert list(too_wide(cells)) == [0]
    assert list(shown_errors(cells)) == [1] and "ZeroDivisionError" in shown_errors(cells)[1]
    assert not_run(cells) == [2]


def _changed_fraction(before: bytes, after: bytes) -> float:
    """The share of pixels that differ between two PNG screenshots."""
    from PIL import Image, ImageChops

    a = Image.open(io.BytesIO(before)).convert("RGB")
    b = Image.open(io.BytesIO(after)).convert("RGB")
    if a.size != b.size:
        return 1.0
    diff = ImageChops.difference(a, b).convert("L").point(lambda v: 255 if v > 16 else 0)
    return sum(diff.histogram()[255:]) / (a.size[0] * a.size[1])


def _wait_for_new_figure(figure, old_src: str | None, timeout: float = 30, settle: float = 1):
    """Wait until the figure's image differs from ``old_src`` and then stays the same for
    ``settle`` seconds (the last redraw has arrived)."""
    page = figure.page
    deadline = time.monotonic() + timeout
    last, since = old_src, time.monotonic()
    while time.monotonic() < deadline:
        image = figure.locator("img")
        src = image.first.get_attribute("src") if image.count() else None
        if src != last:
            last, since = src, time.monotonic()
        elif src and src != old_src and time.monotonic() - since >= settle:
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"the figure was not redrawn within {timeout:.0f} s")


@pytest.fixture(scope="module")
def widget_lab(executed, browser, server, artifacts):
    if WIDGET_NOTEBOOK != WIDGET_DEMO:
        return executed[0]
    page = browser.new_page()
    lab = Lab(page, server, artifacts / "widget_demo")
    lab.open(WIDGET_DEMO)
    cells = lab.run_all()
    assert "widget front end: True" in cells[0]["outputs"][0]["text"], (
        "courseware.widgets did not detect JupyterLab's widget front end")
    return lab


@pytest.mark.parametrize("notebook", [WIDGET_NOTEBOOK])
def test_dragging_the_slider_redraws_the_figure(widget_lab, notebook):
    lab = widget_lab
    page = lab.page
    described = page.locator(".widget-label", has_text=WIDGET_LABEL)
    slider = page.locator(".widget-slider", has=described)
    assert slider.count(), f"{notebook}: no slider described by {WIDGET_LABEL.pattern!r}"
    slider = slider.first
    cell = page.locator(".jp-Notebook .jp-Cell", has=slider).first
    figure = cell.locator(".widget-output").first
    label = slider.locator(".widget-label")
    assert label.evaluate("e => e.scrollWidth <= e.clientWidth"), (
        f"the slider's description is cut off: {label.inner_text()!r}")

    cell.scroll_into_view_if_needed()
    lab.shot("widget-cell-before", cell)
    before = figure.screenshot(path=str(lab.artifacts / "widget-figure-before.png"))
    unchanged = _changed_fraction(before, figure.screenshot())
    assert unchanged < 0.01, f"the figure changes by itself ({unchanged:.2%} of its pixels)"
    image_src = figure.locator("img").first.get_attribute("src")
    readout = slider.locator(".widget-readout").inner_text()

    handle = slider.locator(".noUi-handle").bounding_box()
    track = slider.locator(".noUi-base").bounding_box()
    y = handle["y"] + handle["height"] / 2
    page.mouse.move(handle["x"] + handle["width"] / 2, y)
    page.mouse.down()
    page.mouse.move(track["x"] + track["width"] * 0.75, y, steps=10)
    page.mouse.up()

    assert slider.locator(".widget-readout").inner_text() != readout, "the slider did not move"
    _wait_for_new_figure(figure, image_src)
    after = figure.screenshot(path=str(lab.artifacts / "widget-figure-after.png"))
    lab.shot("widget-cell-after", cell)
    changed = _changed_fraction(before, after)
    assert changed > 0.01, f"the figure barely changed ({changed:.2%} of its pixels)"


def test_validate_button_passes_the_solution_notebook(executed):
    lab, _ = executed
    panel = lab.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
    panel.locator(".jp-Toolbar-item", has_text="Validate").click()
    dialog = lab.page.locator(".jp-Dialog")
    lab.page.wait_for_function(
        "() => { const d = document.querySelector('.jp-Dialog');"
        " return d && !/Validating/i.test(d.innerText); }", timeout=180_000, polling=250)
    lab.shot("validate")
    text = dialog.inner_text()
    dialog.locator("button", has_text="Ok").click()
    assert "Success! Your notebook passes all the tests." in text, text[:2000]


def test_student_notebook_keeps_its_cells_in_order_and_check_cells_read_only(lab):
    path = released_notebook(LESSON, ROOT)
    nb = nbformat.read(path, as_version=4)
    lab.open(path.relative_to(ROOT).as_posix())
    cells = lab.cells()
    assert [c["kind"] for c in cells] == [c.cell_type for c in nb.cells]
    for shown, cell in zip(cells, nb.cells):
        if cell.cell_type == "code":
            assert shown["source"] == cell.source.split("\n")[0], _describe(shown)

    locked = [i for i, c in enumerate(nb.cells)
              if c.cell_type == "code" and c.metadata.get("editable") is False]
    solution = [i for i, c in enumerate(nb.cells)
                if c.metadata.get("nbgrader", {}).get("solution") and c.cell_type == "code"]
    assert locked and solution

    def type_into(index: int) -> str:
        editor = lab.cell(index).locator(".cm-content")
        editor.click()
        lab.page.keyboard.type("zz")
        lab.page.keyboard.press("Escape")
        return editor.inner_text()

    lab.cell(locked[0]).scroll_into_view_if_needed()
    lab.shot("student-notebook")
    assert "zz" in type_into(solution[0]), "typing into a solution cell did nothing"
    for index in locked:
        assert "zz" not in type_into(index), f"check {_describe(cells[index])} is editable"


def test_formgrader_lists_every_assignment(lab, course):
    lab.page.goto(lab.server.page_url("/lab"))
    lab.menu("Nbgrader", "Formgrader")
    table = lab.page.frame_locator("iframe").last.locator("#main-table")
    names = assignments(course)
    for name in names:
        table.locator("tr", has_text=name).first.wait_for(timeout=60_000)
    lab.shot("formgrader")
    listed = table.inner_text()
    assert all(name in listed for name in names), listed


def test_assignment_list_shows_the_released_lesson_and_fetches_it(lab, course):
    lab.page.goto(lab.server.page_url("/lab"))
    lab.menu("Nbgrader", "Assignment List")
    released = lab.page.locator("#released_assignments_list")
    row = released.locator(".list_item", has_text=LESSON)
    row.wait_for(timeout=60_000)
    lab.shot("assignment-list")
    row.locator("button", has_text="Fetch").click()
    lab.page.locator("#fetched_assignments_list .list_item", has_text=LESSON).first.wait_for(
        timeout=60_000)
    lab.shot("assignment-list-fetched")
    assert (course / LESSON / f"{LESSON}.ipynb").exists()


def _cli(course: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, ATTENTION_COURSE_ROOT=str(course),
               PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    done = subprocess.run([sys.executable, "-m", *args], cwd=course, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, f"{args}:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def graded(course):
    """The student's copy of LESSON submitted and collected through the exchange, and
    graded by `python -m grader grade`, as the README's instructor guide does it."""
    from grading_corpus import sandboxed

    if not (course / LESSON / f"{LESSON}.ipynb").exists():
        _cli(course, "nbgrader", "fetch_assignment", LESSON)
    _cli(course, "nbgrader", "submit", LESSON)
    _cli(course, "nbgrader", "collect", LESSON)
    _cli(course, "grader", "grade", "submitted", "--out", "grading", "--jobs", "2",
         *([] if sandboxed() else ["--sandbox", "none"]))
    return course


def test_feedback_released_in_formgrader_is_fetched_from_the_assignment_list(lab, graded):
    page = lab.page
    page.goto(lab.server.page_url("/lab"))
    lab.menu("Nbgrader", "Formgrader")
    frame = page.frame_locator("iframe").last
    row = frame.locator("#main-table tr", has_text=LESSON).first
    row.locator(".generate-feedback a").wait_for(timeout=60_000)
    for button, done in (("generate-feedback", "Successfully generated feedback"),
                         ("release-feedback", "Successfully released feedback")):
        row.locator(f".{button} a").click()
        modal = frame.locator(".modal", has_text=done)
        modal.wait_for(timeout=180_000)
        lab.shot(f"formgrader-{button}")
        modal.locator("button", has_text="OK").click()
        modal.wait_for(state="detached", timeout=30_000)

    page.goto(lab.server.page_url("/lab"))
    lab.menu("Nbgrader", "Assignment List")
    submitted = page.locator("#submitted_assignments_list .list_item", has_text=LESSON).first
    submitted.wait_for(timeout=60_000)
    submitted.locator("button", has_text="Fetch Feedback").click()
    page.locator("#submitted_assignments_list", has_text="view feedback").wait_for(timeout=60_000)
    lab.shot("assignment-list-feedback")
    pages = list((graded / LESSON / "feedback").glob(f"*/{LESSON}.html"))
    assert len(pages) == 1, pages
    text = pages[0].read_text(encoding="utf-8")
    student = next((graded / "submitted").iterdir()).name
    assert f"{LESSON}: feedback for {student}" in text, text[:500]
    assert "Automatic tests" in text and "hidden_" in text and "HIDDEN TESTS" not in text
    assert text == (graded / "grading" / "feedback" / student / LESSON / f"{LESSON}.html").read_text(
        encoding="utf-8"), "the page the student fetched is the one grade wrote"


def test_submit_in_the_assignment_list_brings_feedback_from_the_service(lab, course):
    """A student presses Submit; `python -m grader serve` (once, as cron runs it) grades
    it; the student presses Fetch Feedback and opens the course's page, whose hidden tests
    show their name and result only."""
    from grading_corpus import sandboxed

    if not (course / LESSON / f"{LESSON}.ipynb").exists():
        _cli(course, "nbgrader", "fetch_assignment", LESSON)
    page = lab.page
    page.goto(lab.server.page_url("/lab"))
    lab.menu("Nbgrader", "Assignment List")
    fetched = page.locator("#fetched_assignments_list .list_item", has_text=LESSON).first
    fetched.wait_for(timeout=60_000)
    submitted = page.locator("#submitted_assignments_list .list_item")
    before = len(list((course / ".nbgrader_exchange" / "attention" / "inbound").glob(f"*+{LESSON}+*")))
    fetched.locator("button", has_text="Submit").click()
    inbound = course / ".nbgrader_exchange" / "attention" / "inbound"
    deadline = time.monotonic() + 60
    while len(list(inbound.glob(f"*+{LESSON}+*"))) == before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(list(inbound.glob(f"*+{LESSON}+*"))) == before + 1, "Submit put nothing in the exchange"
    lab.shot("assignment-list-submitted")
    time.sleep(1.2)  # the service reads a folder once nbgrader has left it alone for a second
    served = _cli(course, "grader", "serve", "--once", "--assignment", LESSON, "--jobs", "2",
                  *([] if sandboxed() else ["--sandbox", "none"]))
    assert "feedback released" in served.stdout, served.stdout

    page.goto(lab.server.page_url("/lab"))
    lab.menu("Nbgrader", "Assignment List")
    submitted.first.wait_for(timeout=60_000)
    page.locator("#submitted_assignments_list .list_item", has_text=LESSON).first.locator(
        "button", has_text="Fetch Feedback").click()
    page.locator("#submitted_assignments_list", has_text="view feedback").wait_for(timeout=60_000)
    # this submission's page, in the folder named after its time (an earlier test of this
    # module may have fetched another submission's page already)
    stamp = max(inbound.glob(f"*+{LESSON}+*"), key=lambda p: p.stat().st_ctime).name.split("+")[2]
    newest = course / LESSON / "feedback" / stamp / f"{LESSON}.html"
    deadline = time.monotonic() + 60
    while not newest.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    lab.shot("assignment-list-feedback-on-submit")
    text = newest.read_text(encoding="utf-8")
    assert f"{LESSON}: feedback for" in text and "Automatic tests" in text, text[:500]
    assert "hidden_" in text and "a hidden test: it" in text and "hidden cases pass" not in text
    # the student opens it, as the "view feedback" link does
    page.goto(newest.as_uri())
    page.locator("h1", has_text="feedback for").wait_for(timeout=30_000)
    lab.shot("feedback-page-on-submit")


PROBE = "window.__ran || document.title === 'ran' ? 'ran' : ''"
HOSTILE_ANSWER = ("Weights sum to one.\n\n<script>window.__ran = 1; document.title = 'ran'</script>"
                  "<img src=x onerror=\"window.__ran = 2\"> <a href=\"javascript:window.__ran=3\">click me</a>")
HOSTILE_OUTPUT = ("\nfrom IPython.display import HTML, Javascript, display\n"
                  "display(HTML('<b>kept</b><img src=x onerror=\"window.__ran=4\">"
                  "<script>window.__ran=5</script><a href=\"javascript:window.__ran=6\">click me too</a>'))\n"
                  "display(Javascript('window.__ran = 7'))\n")


def test_formgrader_shows_a_hostile_submission_inert_with_its_figures(lab, graded):
    """The probe works: the same markup, put into a page as it is, runs."""
    from nbgrader.api import Gradebook

    from grading_corpus import Lesson, sandboxed

    page = lab.page
    page.set_content(HOSTILE_ANSWER)
    assert page.evaluate(PROBE) == "ran", "the probe cannot see a script run"

    lesson = Lesson(LESSON, ROOT)
    nb = lesson.honest()
    written = next(c for c in nb["cells"] if c["cell_type"] == "markdown"
                   and c["metadata"].get("nbgrader", {}).get("solution"))
    written["source"] = HOSTILE_ANSWER
    first = next(c for c in nb["cells"] if c["cell_type"] == "code"
                 and c["metadata"].get("nbgrader", {}).get("solution"))
    first["source"] += HOSTILE_OUTPUT
    folder = graded / "submitted" / "mallory" / LESSON
    folder.mkdir(parents=True)
    for name, data in lesson.files(nb).items():
        (folder / name).write_bytes(data)
    _cli(graded, "grader", "grade", "submitted", "--out", "grading", "--jobs", "2", "--student", "mallory",
         *([] if sandboxed() else ["--sandbox", "none"]))
    with Gradebook(f"sqlite:///{graded / 'gradebook.db'}", "attention") as gb:
        submission = gb.find_submission_notebook(LESSON, LESSON, "mallory").id

    page.goto(lab.server.page_url(f"/formgrader/submissions/{submission}/"))
    page.locator("text=Weights sum to one.").first.wait_for(timeout=60_000)
    page.locator("text=kept").first.wait_for(timeout=60_000)
    for text in ("click me", "click me too"):
        for link in page.get_by_text(text, exact=True).all():
            link.click()
    page.wait_for_load_state()
    lab.shot("formgrader-hostile-submission")
    assert page.evaluate(PROBE) == "", "a script of the submission ran in formgrader"
    figures = page.evaluate("""[...document.images].filter(i => i.src.startsWith('data:image/png')
                               && i.complete && i.naturalWidth > 0).length""")
    assert figures > 0, "the submission's figures are not shown"


def test_server_log_shows_no_errors(server):
    """Last in the module: what the tests above made the server do left no error behind
    (formgrader's gradebook, the exchange, kernels, extensions)."""
    log = server.log.read_text(errors="replace")
    errors = [line for line in log.splitlines()
              if re.match(r"\[(E|C) ", line) or line.startswith("Traceback")]
    assert not errors, "\n".join(errors[:20])
