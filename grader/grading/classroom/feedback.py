"""Feedback pages: the learner's own notebook with each test's name, points and message.

A hidden test shows its name, points and message, never its source: the lines between
``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS`` are left out, and the errors of
test cells are shown as their message, without a traceback that could quote them. (The
autograded notebook in the course folder keeps everything, for the instructor.) The pages
of grading on submit (``python -m grader serve``) say less: a hidden test shows its name,
points and whether it passed, and neither the checker's message nor what its cell printed,
so that resubmitting cannot map the hidden cases.

With :class:`Grades` (what the gradebook holds when the page is made), the page also
shows the points a person gave by hand and their comments, a score changed in
formgrader, and the late penalty, and its total is the gradebook's. Both ``grade``'s
pages and ``nbgrader generate_feedback``'s (:mod:`grader.grading.classroom.nbfeedback`) are made
this way.

The page is self-contained (no scripts, no network): student HTML output is shown as
text, markdown is rendered with raw HTML escaped, and images are embedded.
"""
from __future__ import annotations

import base64
import html
import re
from dataclasses import dataclass, field

from ..notebook.nbjson import nbgrader_meta
from ..notebook.results import TestResult
from ..notebook.scoring import strip_ansi
from ..notebook.jupyter_types import RICH, Output
from ..notebook.status import TestStatus

HIDDEN = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS.*?^[ \t]*### END HIDDEN TESTS[^\n]*\n?", re.S | re.M)
BADGE = {"passed": "#1a7f37", "failed": "#cf222e", "error": "#cf222e", "timeout": "#9a6700",
         "memory": "#9a6700", "missing": "#6e7781"}

CSS = """
body { font: 15px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #1f2328; }
h1 { font-size: 1.5rem; } .score { font-size: 1.2rem; }
table { border-collapse: collapse; width: 100%; margin: 1rem 0; }
td, th { border: 1px solid #d0d7de; padding: .3rem .5rem; vertical-align: top; text-align: left; }
pre { background: #f6f8fa; padding: .5rem; overflow-x: auto; white-space: pre-wrap; margin: .2rem 0; }
.badge { color: white; border-radius: .8rem; padding: 0 .5rem; font-size: .85rem; white-space: nowrap; }
.notes { background: #fff8c5; border: 1px solid #d4a72c; padding: .5rem 1rem; }
.cell { margin: 1rem 0; } .code pre.src { border-left: 3px solid #0969da; }
.test { border: 1px solid #d0d7de; border-radius: .4rem; padding: .5rem; }
.result { margin-top: .3rem; } .err { background: #ffebe9; } img { max-width: 100%; }
.hand { border: 1px solid #0969da; border-radius: .4rem; padding: .3rem .5rem; margin-top: .3rem; }
.late { background: #ffebe9; border: 1px solid #cf222e; padding: .5rem 1rem; }
"""


@dataclass
class Grades:
    """What the gradebook holds for one submitted notebook when its page is made."""

    cells: dict[str, dict] = field(default_factory=dict)  # grade_id -> score, max, comment
    score: float = 0.0  # the notebook's points, less the late penalty
    max_score: float = 0.0
    late_penalty: float = 0.0
    late: str = ""  # how late, for people ("" when on time or without a due date)


def visible_source(source: str) -> str:
    """A test cell's source without its hidden tests."""
    return HIDDEN.sub("# (hidden tests: their result is shown below)\n", source)


def _md(text: str) -> str:
    try:
        import mistune
    except ImportError:  # mistune comes with nbconvert; plain text if it is not there
        return f"<pre>{html.escape(text)}</pre>"
    return mistune.create_markdown(escape=True, plugins=["table", "strikethrough"])(text)


def _badge(status: str) -> str:
    return f'<span class="badge" style="background:{BADGE.get(status, "#6e7781")}">{status}</span>'


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")


def _outputs(cell, is_test: bool) -> str:
    parts = []
    for out in cell.get("outputs", []):
        kind = out.get("output_type")
        if kind == Output.STREAM:
            cls = ' class="err"' if out.get("name") == "stderr" else ""
            parts.append(f"<pre{cls}>{html.escape(strip_ansi(_text(out.get('text'))))}</pre>")
        elif kind == Output.ERROR:
            if is_test:
                continue  # the test's message is shown in its result box
            text = "\n".join(strip_ansi(line) for line in out.get("traceback", [])) or \
                f"{out.get('ename')}: {out.get('evalue')}"
            parts.append(f'<pre class="err">{html.escape(text)}</pre>')
        elif kind in RICH:
            data = out.get("data", {})
            image = next((m for m in ("image/png", "image/jpeg") if m in data), None)
            if image:
                payload = _text(data[image]).replace("\n", "")
                parts.append(f'<img alt="figure" src="data:{image};base64,{html.escape(payload)}">')
            elif "image/svg+xml" in data:
                svg = base64.b64encode(_text(data["image/svg+xml"]).encode()).decode()
                parts.append(f'<img alt="figure" src="data:image/svg+xml;base64,{svg}">')
            elif "text/plain" in data:
                parts.append(f"<pre>{html.escape(strip_ansi(_text(data['text/plain'])))}</pre>")
    return "".join(parts)


def _points(test: TestResult, grades: Grades | None) -> str:
    """A test's points: the gradebook's, saying so when a person changed them."""
    given = (grades.cells.get(test.id) or {}).get("score") if grades else None
    if given is None or abs(given - test.points) < 1e-9:
        return f'{test.points:g} / {test.max:g}'
    return f'{given:g} / {test.max:g} (set by your instructor; the tests gave {test.points:g})'


def _test_box(test: TestResult, grades: Grades | None) -> str:
    # A passing test's message is the line it printed, shown just above.
    message = "" if test.status == TestStatus.PASSED else f'<pre>{html.escape(test.message)}</pre>'
    return (f'<div class="result">{_badge(test.status)} <b>{html.escape(test.id)}</b>: '
            f'{_points(test, grades)} points{message}</div>')


def _hand_box(cell: dict, grades: Grades) -> str:
    """The points and comment a person gave a written answer."""
    got = grades.cells.get(cell["id"]) or {}
    if got.get("score") is None:
        text = f'not graded yet ({cell["max"]:g} points)'
    else:
        text = f'{got["score"]:g} / {cell["max"]:g} points'
    comment = got.get("comment")
    comment = f"<div>{_md(comment)}</div>" if comment else ""
    return f'<div class="hand"><b>Graded by hand</b>: {text}{comment}</div>'


def _summary(result, grades: Grades | None) -> list[str]:
    tests_max = sum(t.max for t in result.tests)
    manual = sum(m["max"] for m in result.manual)
    if grades is None:
        head = [f'<p class="score"><b>{result.points:g} / {tests_max:g}</b> points from the '
                "automatic tests."]
        if manual:
            head.append(f" Written answers ({manual:g} points) are graded by hand.")
        return head + ["</p>"]
    auto = sum(_score(grades, t.id, t.points) for t in result.tests)
    rows = [("Automatic tests", f"{auto:g} / {tests_max:g}")]
    if manual:
        scores = [(grades.cells.get(m["id"]) or {}).get("score") for m in result.manual]
        done = sum(s for s in scores if s is not None)
        pending = "" if all(s is not None for s in scores) else " (some are not graded yet)"
        rows.append(("Written answers, graded by hand", f"{done:g} / {manual:g}{pending}"))
    if grades.late_penalty or grades.late:
        rows.append(("Late penalty", f"−{grades.late_penalty:g}"))
    rows.append(("Total", f"<b>{grades.score:g} / {grades.max_score:g}</b>"))
    table = "".join(f"<tr><th>{name}</th><td>{value}</td></tr>" for name, value in rows)
    head = [f'<table class="score">{table}</table>']
    if grades.late:
        head.append(f'<div class="late">{html.escape(grades.late)}</div>')
    return head


def _bare(test: TestResult) -> TestResult:
    """A hidden test as feedback on submit shows it: no message."""
    said = "passed" if test.status == TestStatus.PASSED else "did not pass"
    return TestResult(test.id, test.points, test.max, test.status,
                      f"(a hidden test: it {said}; what it tried is not shown)")


def _score(grades: Grades, grade_id: str, default: float) -> float:
    got = (grades.cells.get(grade_id) or {}).get("score")
    return default if got is None else got


def hidden_ids(nb) -> set[str]:
    """The grade_ids of the test cells that hold hidden tests (in the autograded notebook,
    which keeps them)."""
    return {nbgrader_meta(c).get("grade_id", "") for c in (nb or {}).get("cells", [])
            if c.get("cell_type") == "code" and HIDDEN.search(_text(c.get("source")))}


def render(result, student: str, assignment: str, grades: Grades | None = None,
           hidden_messages: bool = True) -> str:
    """The feedback page of one graded notebook (a :class:`JobResult`), with what the
    gradebook holds for it when ``grades`` is given. Without ``hidden_messages`` (feedback
    on submit), a hidden test shows its name, points and whether it passed, and nothing
    else: neither the checker's message nor what its cell printed."""
    hidden = set() if hidden_messages else hidden_ids(result.autograded)
    tests = {t.id: (t if t.id not in hidden else _bare(t)) for t in result.tests}
    manual_cells = {m["id"]: m for m in result.manual}
    head = [f"<h1>{html.escape(assignment)}: feedback for {html.escape(student)}</h1>",
            *_summary(result, grades)]
    notes = [*result.notes, *result.repairs, *result.incidents]
    if result.integrity:
        items = "".join(f"<li>{html.escape(n)}</li>" for n in result.integrity)
        head.append(f'<div class="notes"><b>For your instructor to look at</b> (your score is '
                    f"what the tests gave)<ul>{items}</ul></div>")
    if notes:
        items = "".join(f"<li>{html.escape(n)}</li>" for n in notes)
        head.append(f'<div class="notes"><b>What happened while grading</b><ul>{items}</ul></div>')
    rows = "".join(
        f"<tr><td>{html.escape(t.id)}</td><td>{_points(t, grades)}</td>"
        f"<td>{_badge(t.status)}</td><td><pre>{html.escape(t.message)}</pre></td></tr>"
        for t in tests.values())
    head.append(f"<table><tr><th>test</th><th>points</th><th>status</th><th>message</th></tr>{rows}</table>")

    body = []
    for cell in (result.autograded or {}).get("cells", []):
        meta = nbgrader_meta(cell)
        grade_id = meta.get("grade_id", "")
        source = _text(cell.get("source"))
        hand = _hand_box(manual_cells[grade_id], grades) if grades and grade_id in manual_cells else ""
        if cell.get("cell_type") == "markdown":
            body.append(f'<div class="cell">{_md(source)}{hand}</div>')
        elif cell.get("cell_type") == "code":
            is_test = grade_id in tests
            shown = visible_source(source)
            printed = "" if grade_id in hidden else _outputs(cell, is_test)
            inner = f'<pre class="src">{html.escape(shown)}</pre>{printed}'
            if is_test:
                inner = f'<div class="test">{inner}{_test_box(tests[grade_id], grades)}</div>'
            body.append(f'<div class="cell code">{inner}{hand}</div>')
        else:
            body.append(f'<div class="cell"><pre>{html.escape(source)}</pre>{hand}</div>')
    title = html.escape(f"{assignment} · {student}")
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
            f"<style>{CSS}</style></head><body>{''.join(head)}<h2>Your notebook</h2>{''.join(body)}"
            "</body></html>\n")
