"""Feedback pages: the learner's own notebook with each test's name, points and message.

A hidden test shows its name, points and message, never its source: the lines between
``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS`` are left out, and the errors of
test cells are shown as their message, without a traceback that could quote them. (The
autograded notebook in the course folder keeps everything, for the instructor.)

The page is self-contained (no scripts, no network): student HTML output is shown as
text, markdown is rendered with raw HTML escaped, and images are embedded.
"""
from __future__ import annotations

import base64
import html
import re

from .repair import nbgrader_meta
from .scoring import strip_ansi

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
"""


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
        if kind == "stream":
            cls = ' class="err"' if out.get("name") == "stderr" else ""
            parts.append(f"<pre{cls}>{html.escape(strip_ansi(_text(out.get('text'))))}</pre>")
        elif kind == "error":
            if is_test:
                continue  # the test's message is shown in its result box
            text = "\n".join(strip_ansi(line) for line in out.get("traceback", [])) or \
                f"{out.get('ename')}: {out.get('evalue')}"
            parts.append(f'<pre class="err">{html.escape(text)}</pre>')
        elif kind in ("display_data", "execute_result"):
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


def _test_box(test: dict) -> str:
    # A passing test's message is the line it printed, shown just above.
    message = "" if test["status"] == "passed" else f'<pre>{html.escape(test["message"])}</pre>'
    return (f'<div class="result">{_badge(test["status"])} <b>{html.escape(test["id"])}</b>: '
            f'{test["points"]:g} / {test["max"]:g} points{message}</div>')


def render(result, student: str, assignment: str) -> str:
    """The feedback page of one graded notebook (a :class:`JobResult`)."""
    tests = {t["id"]: t for t in result.tests}
    score, top = result.points, result.max_points
    manual = sum(m["max"] for m in result.manual)
    head = [f"<h1>{html.escape(assignment)}: feedback for {html.escape(student)}</h1>",
            f'<p class="score"><b>{score:g} / {top:g}</b> points from the automatic tests.']
    if manual:
        head.append(f" Written answers ({manual:g} points) are graded by hand.")
    head.append("</p>")
    notes = [*result.notes, *result.repairs, *result.incidents]
    if result.integrity:
        items = "".join(f"<li>{html.escape(n)}</li>" for n in result.integrity)
        head.append(f'<div class="notes"><b>For your instructor to look at</b> (your score is '
                    f"what the tests gave)<ul>{items}</ul></div>")
    if notes:
        items = "".join(f"<li>{html.escape(n)}</li>" for n in notes)
        head.append(f'<div class="notes"><b>What happened while grading</b><ul>{items}</ul></div>')
    rows = "".join(
        f"<tr><td>{html.escape(t['id'])}</td><td>{t['points']:g} / {t['max']:g}</td>"
        f"<td>{_badge(t['status'])}</td><td><pre>{html.escape(t['message'])}</pre></td></tr>"
        for t in result.tests)
    head.append(f"<table><tr><th>test</th><th>points</th><th>status</th><th>message</th></tr>{rows}</table>")

    body = []
    for cell in (result.autograded or {}).get("cells", []):
        meta = nbgrader_meta(cell)
        grade_id = meta.get("grade_id", "")
        source = _text(cell.get("source"))
        if cell.get("cell_type") == "markdown":
            body.append(f'<div class="cell">{_md(source)}</div>')
        elif cell.get("cell_type") == "code":
            is_test = grade_id in tests
            shown = visible_source(source)
            inner = f'<pre class="src">{html.escape(shown)}</pre>{_outputs(cell, is_test)}'
            if is_test:
                inner = f'<div class="test">{inner}{_test_box(tests[grade_id])}</div>'
            body.append(f'<div class="cell code">{inner}</div>')
        else:
            body.append(f'<div class="cell"><pre>{html.escape(source)}</pre></div>')
    title = html.escape(f"{assignment} · {student}")
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
            f"<style>{CSS}</style></head><body>{''.join(head)}<h2>Your notebook</h2>{''.join(body)}"
            "</body></html>\n")
