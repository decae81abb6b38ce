"""How long every solution notebook takes to run, one after the other, as a learner's Run
All would: each in a fresh kernel, from this checkout, with the full budget (or, with
``--grading``, the reduced one that nbgrader's runs get: ``NBGRADER_EXECUTION`` set). The
total is printed against the course's bound of 200 s for all the lessons.

    PYTHONPATH=. .venv/bin/python benchmarks/notebook_runtime.py [--grading] [LESSON ...]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
BOUND = 200.0


def run(path: Path, grading: bool) -> float:
    nb = nbformat.read(path, as_version=4)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if grading:
        env["NBGRADER_EXECUTION"] = "autograde"
    else:
        env.pop("NBGRADER_EXECUTION", None)
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    client.execute(env=env)          # the kernel's environment (nbclient passes it on)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lessons", nargs="*", help="lesson folders (default: all)")
    parser.add_argument("--grading", action="store_true", help="the reduced budget")
    args = parser.parse_args()
    notebooks = sorted((ROOT / "solutions").glob("*/*.ipynb"))
    if args.lessons:
        notebooks = [p for p in notebooks if p.parent.name in args.lessons]
    total = 0.0
    for path in notebooks:
        took = run(path, args.grading)
        total += took
        print(f"{path.parent.name:28} {took:7.1f} s", flush=True)
    budget = "reduced (NBGRADER_EXECUTION)" if args.grading else "full"
    print(f"{'all ' + str(len(notebooks)):28} {total:7.1f} s   ({budget} budget; bound "
          f"{BOUND:.0f} s: {total / BOUND:.2f} of it)")
    sys.exit(0)


if __name__ == "__main__":
    main()
