"""``python -m grader check NOTEBOOK``: run a notebook and print each question's result.

This is the part of the command line a learner's copy of the course has: it runs every
cell (errors do not stop the run, as when a notebook is graded) and reads the test cells'
results. Hidden tests are not in a learner's notebook; they run when the work is graded.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def check_notebook(path: Path, timeout: int = 120, stream=None) -> int:
    from .notebook import execute, graded_results

    stream = stream or sys.stdout
    if not path.is_file():
        print(f"no such notebook: {path}", file=sys.stderr)
        return 2
    progress = sys.stderr

    def on_cell(index: int, total: int, cell) -> None:
        line = f"running cell {index + 1}/{total}"
        if progress.isatty():
            end = "\n" if index + 1 == total else ""
            print(f"\r{line}", end=end, file=progress, flush=True)
        elif (index + 1) % 10 == 0 or index + 1 == total:
            print(line, file=progress, flush=True)

    nb = execute(path, timeout=timeout, on_cell=on_cell)
    results = graded_results(nb)
    if not results:
        print(f"{path} has no graded test cells.", file=stream)
        return 0
    width = max(len(r.grade_id) for r in results)
    for r in results:
        if r.hidden:
            print(f"· {r.grade_id:<{width}}  –/{r.max_points:g}  {r.message}", file=stream)
            continue
        mark = "✓" if r.passed else "✗"
        print(f"{mark} {r.grade_id:<{width}}  {r.points:g}/{r.max_points:g}  {r.message}", file=stream)
    here = [r for r in results if not r.hidden]
    total = sum(r.points for r in here)
    top = sum(r.max_points for r in here)
    later = sum(r.max_points for r in results if r.hidden)
    hidden = f"; {later:g} more in hidden tests that run when your work is graded" if later else ""
    print(f"Total here: {total:g}/{top:g}{hidden} (free-text answers are graded by hand)",
          file=stream)
    return 0


def add_check_command(sub) -> None:
    p = sub.add_parser("check", help="run one notebook and print each question's result")
    p.add_argument("notebook")
    p.add_argument("--timeout", type=int, default=120, help="seconds per cell (default 120)")
    p.set_defaults(func=lambda args: check_notebook(Path(args.notebook), args.timeout))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    add_check_command(sub)
    args = parser.parse_args(argv)
    return args.func(args)
