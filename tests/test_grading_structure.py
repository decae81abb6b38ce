"""A notebook's structure is bounded before the grading process works on it
(grader.grading.notebook.structure, with the limits beside the byte limits in
grader.grading.classroom.submissions): each limit takes a notebook at the limit and refuses one over
it with a note that names the limit and the notebook's count; the nesting of the JSON is
measured on its text, strings and escapes aside, before any parser sees it; and nothing
that reads a notebook, or a kernel's outputs, recurses on the submission's structure."""
from __future__ import annotations

import ast
import json
import random

import pytest

from grader.grading.notebook import structure
from grader.grading.classroom import submissions
from grader.grading.notebook.repair import assemble, read_submission
from grader.grading.notebook.structure import code_depth, depth, json_shape, notebook_problem, text_problem
from job_states import lesson

# ------------------------------------------------------------------ the JSON's text


def _truth(value) -> tuple[int, int]:
    """(depth, values) of a parsed value, keys not counted, by plain recursion."""
    if isinstance(value, (dict, list)):
        inner = [_truth(v) for v in (value.values() if isinstance(value, dict) else value)]
        return 1 + max((d for d, _ in inner), default=0), 1 + sum(n for _, n in inner)
    return 0, 1


TRICKY = ["]]]", "[[[", "{\"a\": [1]}", "\\", "\\\"", "a\\\\", "\"", "}{", "é[ü]", "\u2028", "", "x,y,z"]


def _value(rng: random.Random, level: int = 0):
    roll = rng.random()
    if level > 5 or roll < 0.3:
        return rng.choice([0, -1.5e-3, True, None, *TRICKY])
    if roll < 0.65:
        return [_value(rng, level + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(TRICKY) + str(i): _value(rng, level + 1) for i in range(rng.randrange(4))}


def test_the_shape_read_from_the_text_is_the_parsed_values_shape():
    """Brackets, commas and quotes inside strings (escaped or not, keys too), white space
    and any layout json.dumps writes: the scan of the text agrees with the parsed value."""
    rng = random.Random(32)
    for _ in range(1500):
        value = _value(rng)
        for text in (json.dumps(value), json.dumps(value, indent=1), json.dumps(value, ensure_ascii=False)):
            assert json_shape(text.encode()) == _truth(value), text
            assert depth(value) == _truth(value)[0]


@pytest.mark.parametrize("chunk", [1, 2, 3, 7])
def test_the_text_is_read_the_same_whatever_falls_at_the_edge_of_a_chunk(monkeypatch, chunk):
    """Read a few bytes at a time, an escape, a string, a run of backslashes or the white
    space after a bracket that spans two chunks is read as in one piece (and a layout with
    more white space than the scan looks at byte by byte, too)."""
    monkeypatch.setattr(structure, "_CHUNK", chunk)
    rng = random.Random(chunk)
    for _ in range(150):
        value = _value(rng)
        for text in (json.dumps(value), json.dumps(value, indent=structure._INDENT + 6)):
            assert json_shape(text.encode()) == _truth(value), text


@pytest.mark.parametrize("text, shape", [
    (b'"[[[[["', (0, 1)),  # brackets in a string are text
    (b'["\\"[[[", "]"]', (1, 3)),  # an escaped quote does not end the string
    (b'["\\\\", [[]]]', (3, 4)),  # an escaped backslash does: the brackets after it count
    (b'{"[": {"]": []}}', (3, 3)),  # keys are strings too, and are not counted as values
    (b' [ \n\t[ ] , 1 ] ', (2, 3)),
    (b'[[[[', (4, 5)),  # text that is not JSON: counted as far as it reads
])
def test_strings_and_escapes_are_read_as_json_reads_them(text, shape):
    assert json_shape(text) == shape


def test_nesting_at_the_limit_is_read_and_one_level_more_is_refused():
    limit = submissions.MAX_DEPTH
    at = b'{"cells": []' + b', "m": ' + b"[" * (limit - 1) + b"]" * (limit - 1) + b"}"
    assert json_shape(at)[0] == limit and text_problem(at) == ""
    over = b"[" * (limit + 1) + b"]" * (limit + 1)
    assert text_problem(over) == (f"its lists and objects are nested {limit + 1} levels deep; a "
                                  f"notebook may nest them at most {limit} deep")


def test_values_at_the_limit_are_read_and_one_more_is_refused():
    limit = submissions.MAX_VALUES
    at = b"[" + b"0," * (limit - 2) + b"0]"  # the list and limit - 1 numbers
    assert json_shape(at) == (1, limit) and text_problem(at) == ""
    over = b"[" + b"0," * (limit - 1) + b"0]"
    assert text_problem(over) == f"it holds {limit + 1:,} JSON values; a notebook may hold at most {limit:,}"


def test_nesting_and_values_are_refused_before_any_parser_sees_the_bytes(monkeypatch):
    from grader.grading.notebook import repair

    def parse(*args, **kwargs):
        raise AssertionError("the notebook was parsed")

    monkeypatch.setattr(repair.json, "loads", parse)
    deep = b'{"cells": [' + b"[" * 200_000 + b"]" * 200_000 + b"]}"
    assert read_submission(deep) == (None, (
        "the file was not read as a notebook: its lists and objects are nested 200,002 levels "
        f"deep; a notebook may nest them at most {submissions.MAX_DEPTH} deep"))
    many = b'{"cells": [' + b"0," * submissions.MAX_VALUES + b"0]}"
    assert read_submission(many)[1].startswith("the file was not read as a notebook: it holds 5,000,003 JSON")


# ------------------------------------------------------------------ the parsed notebook

def _cell(source="", cell_type="code", outputs=0) -> dict:
    cell = {"cell_type": cell_type, "metadata": {}, "source": source}
    if cell_type == "code":
        cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "x"}] * outputs
    return cell


def _nb(cells) -> dict:
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def _spread(total: int, per: int, **kw) -> list[dict]:
    """Cells that hold ``total`` of something, at most ``per`` each."""
    counts = [per] * (total // per) + ([total % per] if total % per else [])
    return [_cell(**{k: v(n) for k, v in kw.items()}) for n in counts]


def _lines(n: int) -> str:
    return "x = 1\n" * n


LIMITS = {  # name: (limit, a notebook at the limit made from n, the note over it)
    "cells": (submissions.MAX_CELLS, lambda n: _nb([_cell() for _ in range(n)]),
              "it has {n:,} cells; a notebook may have at most {limit:,}"),
    "outputs of a cell": (submissions.MAX_CELL_OUTPUTS, lambda n: _nb([_cell("1"), _cell("2", outputs=n)]),
                          "its cell 2 has {n:,} outputs; a cell may have at most {limit:,}"),
    "outputs": (submissions.MAX_OUTPUTS,
                lambda n: _nb(_spread(n, submissions.MAX_CELL_OUTPUTS, source=lambda k: "1", outputs=lambda k: k)),
                "it has {n:,} outputs; a notebook may have at most {limit:,}"),
    "lines of a cell": (submissions.MAX_CELL_LINES, lambda n: _nb([_cell(_lines(n), "markdown")]),
                        "its cell 1 has {n:,} lines; a cell may have at most {limit:,}"),
    "lines": (submissions.MAX_LINES,
              lambda n: _nb(_spread(n, submissions.MAX_CELL_LINES, source=_lines, cell_type=lambda k: "raw")),
              "it has {n:,} lines; a notebook may have at most {limit:,}"),
    "code": (submissions.MAX_CODE, lambda n: _nb(_spread(n, 200_000, source=lambda k: "#" * k)),
             "it has {n:,} characters of code; a notebook may have at most {limit:,}"),
}


@pytest.mark.parametrize("name", list(LIMITS))
def test_each_structure_limit_takes_a_notebook_at_it_and_refuses_one_over_it(name):
    limit, make, note = LIMITS[name]
    assert notebook_problem(make(limit)) == ""
    assert notebook_problem(make(limit + 1)) == note.format(n=limit + 1, limit=limit)


def test_a_notebook_over_a_limit_is_not_read_and_the_note_says_which_and_how_many():
    nb = _nb([_cell() for _ in range(20_000)])
    assert read_submission(json.dumps(nb).encode()) == (
        None, "the file was not read as a notebook: it has 20,000 cells; a notebook may have "
              f"at most {submissions.MAX_CELLS:,}")


def test_source_given_as_a_list_of_lines_is_counted_as_its_text():
    cell = _cell(["x = 1\n"] * 3 + ["y = 2"])
    assert structure._lines(structure._text(cell["source"])) == 4
    big = _nb([_cell(["x\n"] * (submissions.MAX_CELL_LINES + 1), "markdown")])
    assert "has 5,001 lines" in notebook_problem(big)


def test_an_old_format_notebook_is_counted_in_its_worksheets():
    cells = [{"cell_type": "code", "input": "1", "outputs": []}] * (submissions.MAX_CELLS + 1)
    old = {"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": [{"cells": cells}]}
    assert notebook_problem(old).startswith(f"it has {submissions.MAX_CELLS + 1:,} cells")
    assert read_submission(json.dumps(old).encode())[0] is None


# ------------------------------------------------------------------ the nesting of code

def _nested(levels: int, name: str = "matmul_dot") -> str:
    """An answer whose syntax tree is exactly ``levels`` deep."""
    for k in range(levels):
        text = f"def {name}(A, B):\n    return {'-' * k}A\n"
        if code_depth(ast.parse(text)) == levels:
            return text
    raise AssertionError(levels)


def test_code_nested_at_the_limit_is_read_and_one_level_more_is_refused():
    limit = submissions.MAX_CODE_DEPTH
    assert notebook_problem(_nb([_cell(_nested(limit))])) == ""
    assert notebook_problem(_nb([_cell("1"), _cell(_nested(limit + 1))])) == (
        f"the code of its cell 2 is nested {limit + 1} levels deep; code may nest at most {limit} deep")


@pytest.mark.parametrize("code", ["x = " + "-" * 100_000 + "1", "x = 1" + " + 1" * 5_000, "x = a" + ".b" * 5_000])
def test_code_too_deep_for_python_to_read_is_refused_not_raised(code):
    assert notebook_problem(_nb([_cell(code)])) == (
        "the code of its cell 1 is nested too deep for Python to read; code may nest at most "
        f"{submissions.MAX_CODE_DEPTH} deep")


def test_code_at_the_limit_goes_through_the_repair_and_every_scan_of_its_source():
    """What the limits let through, the scans can read: at the deepest nesting allowed, the
    integrity notes, the checker's source reader and the shortcut scan raise nothing."""
    from grader.grading.notebook import integrity, nbjson
    from grader.learner.shortcuts import Rules, SourceReader, scan_source

    L = lesson()
    nb = L.notebook({"matmul_dot": _nested(submissions.MAX_CODE_DEPTH)})
    submitted, problem = read_submission(json.dumps(nb).encode())
    assert problem == ""
    plan = assemble(nbjson.from_dict(L.source), nbjson.from_dict(L.release), submitted)
    integrity.notes(plan, L.source, {"matmul_dot": "matmul_dot"})
    reader = SourceReader()
    for cell in plan.nb.cells:
        if cell.cell_type == "code":
            reader.read(cell.source, f"<cell {cell.id}>")
    assert reader.problems == [] and "matmul_dot" in reader.scope().codes
    scan_source(reader.scope(), "matmul_dot", Rules(loops=True))


def test_a_long_chain_of_the_learners_own_calls_is_scanned_without_recursion():
    """The shortcut scan follows the learner's calls with a stack of its own: three
    thousand functions, each calling the next, are a chain, and one more call back to the
    first is a loop."""
    from grader.learner.shortcuts import Rules, SourceReader, scan_source

    n = 3000
    text = "".join(f"def f{i}(x):\n    return f{i + 1}(x)\n" for i in range(n)) + f"def f{n}(x):\n    return x\n"
    for looped in (False, True):
        source = text + ("def f3000(x):\n    return f0(x)\n" if looped else "")
        reader = SourceReader()
        reader.read(source, "<cell>")
        findings, _ = scan_source(reader.scope(), "f0", Rules(loops=True))
        assert any("recursion" in f.what for f in findings) == looped


# ------------------------------------------------------------------ a kernel's outputs

def test_a_kernel_output_nested_deeper_than_a_notebook_may_be_is_left_out_with_a_note():
    from grader.grading.notebook.kernel import _Outputs

    def shown(levels: int) -> list:
        value = 1
        for _ in range(levels):
            value = [value]
        sink = _Outputs(100_000)
        sink.add({"msg_type": "display_data", "header": {"msg_type": "display_data"},
                  "content": {"data": {"application/json": value}, "metadata": {}}})
        return sink.finish()

    kept = shown(submissions.MAX_DEPTH - 2)  # with the content and its data: at the limit
    assert len(kept) == 1 and kept[0]["output_type"] == "display_data"
    (note,) = shown(600)
    assert note["name"] == "stderr" and "nested more than 100 levels deep" in note["text"]
