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
    nb = execute(path, timeout=timeout)
    results = graded_results(nb)
    if not results:
        print(f"{path} has no graded test cells.", file=stream)
        return 0
    width = max(len(r.grade_id) for r in results)
    for r in results:
        mark = "✓" if r.passed else "✗"
        print(f"{mark} {r.grade_id:<{width}}  {r.points:g}/{r.max_points:g}  {r.message}", file=stream)
    total = sum(r.points for r in results)
    top = sum(r.max_points for r in results)
    print(f"Total: {total:g}/{top:g} (auto-graded cells only; free-text answers are graded by hand)",
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
