"""Building nbgrader cells with the right metadata, for source notebooks and test fixtures.

nbgrader reads each cell's ``metadata.nbgrader``; these helpers write it the same way
every time (schema version 3), with the grade id as the cell id so ids are stable.
"""
from __future__ import annotations

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

SCHEMA = 3


def _meta(grade_id: str, *, solution: bool, grade: bool, locked: bool, points: float | None = None,
          task: bool = False) -> dict:
    meta = {"grade_id": grade_id, "solution": solution, "grade": grade, "locked": locked,
            "schema_version": SCHEMA, "task": task}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def markdown(source: str, cell_id: str) -> nbformat.NotebookNode:
    """Plain prose, editable (not part of grading)."""
    return new_markdown_cell(source.strip("\n"), id=cell_id)


def code(source: str, cell_id: str) -> nbformat.NotebookNode:
    """A plain code cell (demonstrations, figures)."""
    return new_code_cell(source.strip("\n"), id=cell_id)


def readonly(source: str, grade_id: str, cell_type: str = "code") -> nbformat.NotebookNode:
    """A locked cell: nbgrader restores its source when grading."""
    make = new_code_cell if cell_type == "code" else new_markdown_cell
    cell = make(source.strip("\n"), id=grade_id)
    cell.metadata.update(_meta(grade_id, solution=False, grade=False, locked=True))
    return cell


def solution(source: str, grade_id: str) -> nbformat.NotebookNode:
    """An autograded answer cell; code between BEGIN/END SOLUTION becomes a stub."""
    cell = new_code_cell(source.strip("\n"), id=grade_id)
    cell.metadata.update(_meta(grade_id, solution=True, grade=False, locked=False))
    return cell


def tests(source: str, grade_id: str, points: float) -> nbformat.NotebookNode:
    """A locked, autograded test cell worth ``points``."""
    cell = new_code_cell(source.strip("\n"), id=grade_id)
    cell.metadata.update(_meta(grade_id, solution=False, grade=True, locked=True, points=points))
    return cell


def free_text(source: str, grade_id: str, points: float) -> nbformat.NotebookNode:
    """A manually graded written answer. The source's text (a model answer and rubric)
    is replaced by "YOUR ANSWER HERE" in the release."""
    cell = new_markdown_cell(source.strip("\n"), id=grade_id)
    cell.metadata.update(_meta(grade_id, solution=True, grade=True, locked=False, points=points))
    return cell


def notebook(cells: list) -> nbformat.NotebookNode:
    nb = new_notebook(cells=cells)
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    return nb
