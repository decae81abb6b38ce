"""Rebuild a submitted notebook on the assignment's own cells, matched by ``grade_id``.

nbgrader refuses a notebook whose graded cells were duplicated or retyped, and runs a
notebook with moved cells in the student's order. Here the notebook that is graded is
always the release's sequence of cells:

* answer cells carry the student's text (found by ``grade_id``, else by cell id, else by
  unchanged text or the first line of the given code), with the source's type and
  metadata;
* test and read-only cells come from the source (with the hidden tests); whatever the
  student did to them (edited, deleted, duplicated, moved, retyped) is undone;
* plain cells (explanations, demos) are the student's, and put back if deleted;
* cells the student added are kept, after the cell they followed;
* a deleted answer is graded as unanswered (the release's stub).

Every repair is reported in a sentence the student can read.
"""
from __future__ import annotations

import copy
import json
from collections import defaultdict
from dataclasses import dataclass, field

from . import nbjson
from .nbjson import nbgrader_meta
from .status import WRITTEN, CellKind
from .structure import notebook_problem, text_problem

CELL_TYPES = ("code", "markdown", "raw")


@dataclass
class Plan:
    """The notebook to run and what each of its cells is."""

    nb: nbjson.Node
    kinds: list[CellKind]  # per cell: answer, manual, test, locked, plain, added
    grade_ids: list[str]  # per cell; "" for cells without one
    repairs: list[str] = field(default_factory=list)
    answer_of: dict[str, str] = field(default_factory=dict)  # test grade_id -> answer grade_id
    given: dict[str, str] = field(default_factory=dict)  # answer grade_id -> the release's text


# The release's cells a submission may not change, put back as they were, as people call them.
RESTORED = {CellKind.TEST: "test cell", CellKind.LOCKED: "read-only cell", CellKind.TASK: "task cell"}


def kind_of(cell) -> CellKind:
    """The role of a cell of the source or release notebook."""
    meta = nbgrader_meta(cell)
    if meta.get("task"):
        return CellKind.TASK  # a locked description, graded by hand
    if meta.get("solution") and meta.get("grade"):
        return CellKind.MANUAL
    if meta.get("solution"):
        return CellKind.ANSWER
    if meta.get("grade"):
        return CellKind.TEST
    if meta.get("locked"):
        return CellKind.LOCKED
    return CellKind.PLAIN


def _text(source) -> str:
    if isinstance(source, list):
        return "".join(str(s) for s in source)
    return source if isinstance(source, str) else ""


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def read_submission(data: bytes) -> tuple[dict | None, str]:
    """The submitted notebook as a dict with a ``cells`` list, or None and why not. A
    notebook over a limit on its structure (``grader.grading.notebook.structure``) is not read: its
    nesting and size are measured on its text before it is parsed, its cells, outputs,
    lines and code once it is."""
    problem = text_problem(data)
    if problem:
        return None, f"the file was not read as a notebook: {problem}"
    try:
        obj = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as exc:
        return None, f"the file is not a readable notebook (not valid JSON: {exc})"
    problem = notebook_problem(obj) if isinstance(obj, dict) else ""
    if problem:
        return None, f"the file was not read as a notebook: {problem}"
    if isinstance(obj, dict) and "worksheets" in obj:
        try:  # an nbformat 3 notebook (rare enough to pay for importing nbformat)
            import nbformat

            obj = json.loads(nbformat.writes(nbformat.reads(json.dumps(obj), as_version=4)))
        except Exception as exc:  # noqa: BLE001 (nbformat raises many kinds)
            return None, f"the file is an old-format notebook that could not be converted ({exc})"
    if not isinstance(obj, dict) or not isinstance(obj.get("cells"), list):
        return None, "the file is JSON but not a notebook (it has no list of cells)"
    cells = []
    for raw in obj["cells"]:
        if not isinstance(raw, dict):
            continue
        cell = {
            "cell_type": raw.get("cell_type") if raw.get("cell_type") in CELL_TYPES else "raw",
            "source": _text(raw.get("source", "")),
            "metadata": raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {},
            "id": raw.get("id") if isinstance(raw.get("id"), str) else "",
        }
        cells.append(cell)
    return {"cells": cells}, ""


def _new_cell(cell_type: str, source: str, cell_id: str, metadata: dict) -> nbjson.Node:
    return nbjson.new_cell(cell_type, source, cell_id, copy.deepcopy(dict(metadata)))


def _label(cell) -> str:
    return f"`{nbgrader_meta(cell).get('grade_id') or cell.get('id')}`"


def match_cells(release_cells, cells: list[dict]) -> list[int | None]:
    """For each submitted cell, the index of the release cell it stands for, or None.

    First by ``grade_id`` (an unknown one means the student's own cell), then by cell id;
    cells left over are matched by unchanged text to release cells not yet claimed, in
    order, and answers by the first line of their given code.
    """
    by_grade, by_id, texts, lines = {}, {}, defaultdict(list), defaultdict(list)
    starts = defaultdict(int)
    for i, cell in enumerate(release_cells):
        grade_id = nbgrader_meta(cell).get("grade_id")
        if grade_id:
            by_grade[grade_id] = i
        if cell.get("id"):
            by_id[cell["id"]] = i
        text = _text(cell.source)
        texts[text.strip()].append(i)
        starts[_first_line(text)] += 1
        if kind_of(cell) in WRITTEN:
            lines[_first_line(text)].append(i)
    # A first line identifies an answer only if no other release cell starts with it.
    by_line = {line: found[0] for line, found in lines.items() if line and len(found) == 1 and starts[line] == 1}

    found: list[int | None] = [None] * len(cells)
    for n, cell in enumerate(cells):
        grade_id = nbgrader_meta(cell).get("grade_id")
        if isinstance(grade_id, str) and grade_id:
            found[n] = by_grade.get(grade_id)
        elif cell.get("id") in by_id:
            found[n] = by_id[cell["id"]]
    claimed = set(found)
    for n, cell in enumerate(cells):
        if found[n] is not None or (isinstance(nbgrader_meta(cell).get("grade_id"), str)
                                    and nbgrader_meta(cell).get("grade_id")):
            continue
        text = cell["source"].strip()
        free = [i for i in texts.get(text, []) if i not in claimed] if text else []
        slot = free[0] if free else by_line.get(_first_line(text))
        if slot is not None and (slot not in claimed or not free):
            found[n] = slot
            claimed.add(slot)
    return found


def assemble(source: nbjson.Node, release: nbjson.Node, submitted: dict | None) -> Plan:
    """The notebook to grade: ``release``'s cells filled from ``submitted`` (the output of
    :func:`read_submission`; None grades the release itself), tests from ``source``."""
    source_by_grade = {nbgrader_meta(c).get("grade_id"): c for c in source.cells if nbgrader_meta(c).get("grade_id")}
    rel = release.cells
    mine_cells = (submitted or {"cells": []})["cells"]
    claims: dict[int, list[dict]] = defaultdict(list)
    added: dict[int, list[dict]] = defaultdict(list)  # extra cells, after release cell i (-1: first)
    order, previous = [], -1
    for cell, slot in zip(mine_cells, match_cells(rel, mine_cells)):
        if slot is None:
            added[previous].append(cell)
        else:
            claims[slot].append(cell)
            order.append(slot)
            previous = slot
    repairs = []
    firsts = list(dict.fromkeys(order))
    if firsts != sorted(firsts):
        repairs.append("Some cells were not in the assignment's order; they were graded in "
                       "the assignment's order.")

    cells, kinds, grade_ids, used_ids = [], [], [], set()
    tried: dict[str, int] = defaultdict(int)  # per base id, the suffixes already taken

    def emit(cell, kind, grade_id=""):
        if not cell.id or cell.id in used_ids:
            base = cell.id or "added-cell"
            tried[base] += 1  # suffixes below it are taken: ids are never given back
            while f"{base}-{tried[base]}" in used_ids:
                tried[base] += 1
            cell.id = f"{base}-{tried[base]}"
        used_ids.add(cell.id)
        cells.append(cell)
        kinds.append(kind)
        grade_ids.append(grade_id)

    def emit_added(after: int):
        for extra in added.get(after, []):
            meta = {k: v for k, v in extra["metadata"].items() if k not in ("nbgrader", "execution")}
            if nbgrader_meta(extra).get("grade") or nbgrader_meta(extra).get("points"):
                repairs.append(f"The cell {_label(extra)} is marked as graded but is not part of "
                               "the assignment: it ran, and earns no points.")
            emit(_new_cell(extra["cell_type"], extra["source"], extra["id"], meta), CellKind.ADDED)

    emit_added(-1)
    for i, rcell in enumerate(rel):
        kind = kind_of(rcell)
        grade_id = nbgrader_meta(rcell).get("grade_id", "")
        mine = claims.get(i, [])
        scell = source_by_grade.get(grade_id, rcell) if grade_id else rcell
        label = _label(rcell)
        if kind in WRITTEN:
            if not mine:
                repairs.append(f"The answer cell {label} was missing, so it was graded as unanswered.")
                text = _text(rcell.source)
            else:
                text = mine[-1]["source"]
                if len(mine) > 1:
                    repairs.append(f"The answer cell {label} appeared {len(mine)} times; all copies "
                                   "ran in order, so the last one counts.")
                    for n, copy_ in enumerate(mine[:-1]):
                        emit(_new_cell(scell.cell_type, copy_["source"], f"{rcell.id}-copy{n + 1}", {}), CellKind.ADDED)
                if mine[-1]["cell_type"] != scell.cell_type:
                    repairs.append(f"The answer cell {label} had been turned into a "
                                   f"{mine[-1]['cell_type']} cell; it was graded as a "
                                   f"{scell.cell_type} cell.")
            emit(_new_cell(scell.cell_type, text, rcell.id, rcell.metadata), kind, grade_id)
        elif kind in RESTORED:
            what = RESTORED[kind]
            if not mine:
                repairs.append(f"The {what} {label} was missing and has been put back.")
            else:
                if len(mine) > 1:
                    repairs.append(f"The {what} {label} appeared {len(mine)} times; it ran once.")
                if any(m["source"] != _text(rcell.source) for m in mine):
                    repairs.append(f"Changes to the {what} {label} were undone.")
                if any(m["cell_type"] != rcell.cell_type for m in mine):
                    repairs.append(f"The {what} {label} had been changed to another cell type; "
                                   "it was put back.")
            metadata = copy.deepcopy(dict(rcell.metadata))
            metadata["nbgrader"] = copy.deepcopy(dict(nbgrader_meta(scell)))
            emit(_new_cell(scell.cell_type, _text(scell.source), rcell.id, metadata),
                 CellKind.MANUAL if kind == CellKind.TASK else kind, grade_id)
        else:
            if not mine:
                if rcell.cell_type == "code":
                    repairs.append(f"The given code cell {label} was missing and has been put back.")
                emit(_new_cell(rcell.cell_type, _text(rcell.source), rcell.id, rcell.metadata), CellKind.PLAIN)
            else:
                first = mine[0]
                meta = {k: v for k, v in first["metadata"].items() if k not in ("nbgrader", "execution")}
                emit(_new_cell(first["cell_type"], first["source"], rcell.id, meta), CellKind.PLAIN)
                for n, copy_ in enumerate(mine[1:]):
                    emit(_new_cell(copy_["cell_type"], copy_["source"], f"{rcell.id}-copy{n + 1}", {}), CellKind.ADDED)
        emit_added(i)

    nb = nbjson.new_notebook(cells, copy.deepcopy(dict(release.metadata)))
    plan = Plan(nb, kinds, grade_ids, repairs)
    plan.given = {nbgrader_meta(c)["grade_id"]: _text(c.source) for c in rel
                  if kind_of(c) in WRITTEN and nbgrader_meta(c).get("grade_id")}
    link_tests(plan)
    return plan


def link_tests(plan: Plan) -> None:
    """Fill ``plan.answer_of``: each test cell's answer cell, the last one before it."""
    current = ""
    for kind, grade_id in zip(plan.kinds, plan.grade_ids):
        if kind == CellKind.ANSWER:
            current = grade_id
        elif kind == CellKind.TEST and current:
            plan.answer_of[grade_id] = current
