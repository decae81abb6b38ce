"""How long ``python -m grader release --check`` takes now, beside a baseline commit's.

The baseline (default: db2748a, the commit before the error model) is checked out in a
temporary git worktree and both run with this checkout's Python, one after the other, a
few times each; the medians and their ratio are printed. The issue's bound is 1.5.

    PYTHONPATH=. .venv/bin/python benchmarks/release_time.py [--base COMMIT] [--runs 3]
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "grader", "release", "--check"], cwd=cwd,
                          capture_output=True, text=True)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"release --check failed in {cwd}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="db2748a", help="the baseline commit")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        subprocess.run(["git", "worktree", "add", "--detach", str(base), args.base], cwd=ROOT,
                       check=True, capture_output=True)
        try:
            times: dict[str, list[float]] = {"base": [], "now": []}
            for _ in range(args.runs):  # side by side, so that the machine's load hits both
                times["base"].append(timed(base))
                times["now"].append(timed(ROOT))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT,
                           capture_output=True)
    b, n = statistics.median(times["base"]), statistics.median(times["now"])
    print(f"release --check at {args.base}: median {b:.1f} s of {args.runs} "
          f"({', '.join(f'{t:.1f}' for t in times['base'])})")
    print(f"release --check now: median {n:.1f} s of {args.runs} "
          f"({', '.join(f'{t:.1f}' for t in times['now'])})")
    print(f"ratio now / base: {n / b:.2f} (the bound is 1.5)")


if __name__ == "__main__":
    main()
