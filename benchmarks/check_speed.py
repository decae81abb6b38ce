"""How long does one ``check()`` call take? (A benchmark, not a test.)

For every exercise it times ``check(name, reference)`` in visible mode (against the
recording beside its notebook, as a learner's notebook does) and hidden mode (the live
reference, as the instructor's source notebooks do), plus one failing call (the first
catalogued misconception, which also pays for the diagnosis), and prints the median
seconds per call next to the 0.3 s target, with the cost of running the reference alone
on the same cases as the baseline.

    .venv/bin/python benchmarks/check_speed.py [--repeat 5]
"""
from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import time

from grader import CheckFailed, check
from grader.learner import agent
from grader.lessons import load_all

TARGET = 0.3


def timed(fn) -> float:
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            fn()
        except CheckFailed:
            pass
    return time.perf_counter() - start


def baseline(ex, hidden: bool) -> float:
    """Only the reference on the same cases: the floor of any check."""
    cases = ex.draw(hidden)
    start = time.perf_counter()
    agent.run(ex.reference, ex.driver, cases)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rows, all_calls = [], []
    for name, ex in sorted(load_all().items()):
        for label, run in [
            ("visible", lambda: check(name, ex.reference)),
            ("hidden", lambda: check(name, ex.reference, hidden=True)),
            ("failing", (lambda: check(name, ex.misconceptions[0].sample or ex.misconceptions[0].impl))
             if ex.misconceptions else None),
        ]:
            if run is None:
                continue
            times = [timed(run) for _ in range(args.repeat)]
            floor = statistics.median(baseline(ex, label == "hidden") for _ in range(args.repeat))
            median = statistics.median(times)
            all_calls += times
            rows.append((name, label, median, floor))
    width = max(len(r[0]) for r in rows)
    print(f"{'exercise':<{width}}  mode     median s  reference-only s  ratio")
    for name, label, median, floor in rows:
        print(f"{name:<{width}}  {label:<7}  {median:8.4f}  {floor:16.4f}  {median / floor:5.1f}x")
    overall = statistics.median(all_calls)
    print(f"\nmedian over all {len(all_calls)} calls: {overall:.4f} s per check() "
          f"(target < {TARGET} s: {'met' if overall < TARGET else 'NOT met'}); "
          f"slowest median: {max(r[2] for r in rows):.4f} s")


if __name__ == "__main__":
    main()
