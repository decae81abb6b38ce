"""Execute a notebook cell by cell and report each graded test cell.

Used by ``python -m grader check NOTEBOOK`` and by the tests. Errors do not stop the
run: every cell is executed, as nbgrader's autograder does, so one failing exercise does
not hide the results of the others.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbclient import NotebookClient


@dataclass
class CellResult:
    grade_id: str
    points: float
    max_points: float
    passed: bool
    message: str  # the error's last line, or the printed ✓ line


def summary_line(printed: str) -> str:
    """What a passing test cell said: its last ✓ line (a check may print a second,
    indented line listing the cases it tried), else its last printed line."""
    lines = [line for line in printed.splitlines() if line.strip()]
    ticks = [line for line in lines if line.lstrip().startswith("✓")]
    return (ticks or lines or ["passed"])[-1].strip()


def _error_text(cell) -> str | None:
    for out in cell.get("outputs", []):
        if out.output_type == "error":
            value = out.get("evalue", "")
            return f"{out.ename}: {value}" if value else out.ename
    return None


def _stream_text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.output_type == "stream")


def execute(path: Path, timeout: int = 120, env: dict | None = None,
            python_flags: tuple[str, ...] = ()) -> nbformat.NotebookNode:
    """Run every cell of the notebook at ``path`` in its folder; return the executed copy.
    ``python_flags`` are given to the kernel's Python (``("-S",)``: no ``site``, so that
    only ``PYTHONPATH`` decides what the kernel imports)."""
    nb = nbformat.read(path, as_version=4)
    run_env = dict(os.environ, **(env or {}))
    run_env.setdefault("MPLBACKEND", "Agg")
    client = NotebookClient(
        nb, timeout=timeout, allow_errors=True, kernel_name="python3",
        resources={"metadata": {"path": str(Path(path).parent)}},
    )
    client.km = client.create_kernel_manager()
    if python_flags:  # the kernel spec's command, with the flags (jupyter_client fills in the file)
        client.km.kernel_spec.argv = [sys.executable, *python_flags, "-m", "ipykernel_launcher",
                                      "-f", "{connection_file}"]
    client.start_new_kernel(env=run_env)
    client.start_new_kernel_client()
    try:
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
    finally:
        client._cleanup_kernel()
    return nb


def graded_results(nb: nbformat.NotebookNode) -> list[CellResult]:
    """Points for each auto-graded test cell of an executed notebook."""
    results = []
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code" or not meta.get("grade") or meta.get("solution"):
            continue
        max_points = float(meta.get("points", 0))
        error = _error_text(cell)
        message = error or summary_line(_stream_text(cell))
        passed = error is None
        results.append(CellResult(meta["grade_id"], max_points if passed else 0.0, max_points, passed, message))
    return results
