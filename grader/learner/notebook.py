"""Execute a notebook cell by cell and report each graded test cell.

Used by ``python -m grader check NOTEBOOK`` and by the tests. Errors do not stop the
run: every cell is executed, as nbgrader's autograder does, so one failing exercise does
not hide the results of the others.
"""
from __future__ import annotations

import ast
import os
import sys
import tempfile
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
    hidden: bool = False  # a hidden test: it runs only when the work is graded


def runs_here(source: str) -> bool:
    """Whether a test cell makes a check that runs in the learner's own notebook: a
    ``check(...)`` call without ``hidden=True``. A hidden test cell's checks are left out
    of the learner's copy (or are ``hidden=True``): they run when the work is graded."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return True  # the cell will say what is wrong with it when it runs
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "check":
            hidden = [k for k in node.keywords if k.arg == "hidden"]
            if not (hidden and isinstance(hidden[0].value, ast.Constant) and hidden[0].value.value):
                return True
    return False


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
            python_flags: tuple[str, ...] = (), on_cell=None) -> nbformat.NotebookNode:
    """Run every cell of the notebook at ``path`` in its folder; return the executed copy.
    ``python_flags`` are given to the kernel's Python (``("-S",)``: no ``site``, so that
    only ``PYTHONPATH`` decides what the kernel imports). ``on_cell(index, total, cell)``
    is called after each cell has run."""
    nb = nbformat.read(path, as_version=4)
    run_env = dict(os.environ, **(env or {}))
    run_env.setdefault("MPLBACKEND", "Agg")
    client = NotebookClient(
        nb, timeout=timeout, allow_errors=True, kernel_name="python3",
        resources={"metadata": {"path": str(Path(path).parent)}},
    )
    client.km = client.create_kernel_manager()
    sockets = None
    if os.name == "posix":  # local sockets: no TCP port, and no warning about one
        sockets = tempfile.TemporaryDirectory(prefix="check-")
        client.km.transport, client.km.ip = "ipc", os.path.join(sockets.name, "kernel")
    if python_flags:  # the kernel spec's command, with the flags (jupyter_client fills in the file)
        client.km.kernel_spec.argv = [sys.executable, *python_flags, "-m", "ipykernel_launcher",
                                      "-f", "{connection_file}"]
    client.start_new_kernel(env=run_env)
    client.start_new_kernel_client()
    try:
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
            if on_cell is not None:
                on_cell(index, len(nb.cells), cell)
    finally:
        client._cleanup_kernel()
        if sockets is not None:
            sockets.cleanup()
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
        if error is None and not runs_here(cell.source):
            results.append(CellResult(meta["grade_id"], 0.0, max_points, False,
                                      "runs when your work is graded", hidden=True))
            continue
        message = error or summary_line(_stream_text(cell))
        passed = error is None
        results.append(CellResult(meta["grade_id"], max_points if passed else 0.0, max_points, passed, message))
    return results
