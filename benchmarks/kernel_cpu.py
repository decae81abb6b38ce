"""Benchmark (not a test): the CPU one submission costs, split between the grading process
and its kernel, with kernels that start warm (forked from a zygote) and cold (from
nothing), side by side in one run.

    .venv/bin/python benchmarks/kernel_cpu.py [--lesson 01_matmul_views] [--students 8] [--rounds 2]

In this one process, each round grades ``--students`` honest notebooks of the lesson one
after another (``grader.grading.notebook.job.run_job``, as a pool worker does), once with warm
kernels and once cold, turn about. The grading process's CPU is this process's own; the
kernel's is the rest of what a cpuacct cgroup (cgroup v1, as root) counts for the round:
the sandboxes, the kernels (killed, not waited for) and the zygote, whose start-up is
spread over the round's submissions as a worker spreads it over its batch. Each mode's
best round is printed.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(HERE))

from grade_vs_nbgrader import CPUACCT, _CpuWindow  # noqa: E402
from grading_corpus import Lesson  # noqa: E402


def grade_round(lesson: Lesson, box, kit: Path, scratch: Path, n: int) -> tuple[float, float, float]:
    """(wall, grader CPU, everything's CPU) for ``n`` submissions, in seconds."""
    from grader.grading.notebook import job as jobs, zygote
    from grader.grading.notebook.choice import candidates
    from grader.grading.notebook.job import Job, font_cache, run_job

    fonts = font_cache()
    window, grader, wall = _CpuWindow(), time.process_time(), time.perf_counter()
    for i in range(n):
        files = lesson.files(lesson.honest())
        job = Job(f"s{i}", lesson.name, lesson.filename, lesson.source, lesson.release, files, None,
                  sandbox=box, scratch=str(scratch), font_cache=fonts, kit=str(kit))
        job.candidates = candidates(files, lesson.filename, [lesson.filename])
        result = run_job(job)
        if result.status != "graded" or result.points != result.max_points:
            sys.exit(f"{lesson.name}: an honest notebook got {result.status} {result.points}: {result.error}")
    jobs._drop_spare()
    zygote.close_all()
    wall, grader = time.perf_counter() - wall, time.process_time() - grader
    return wall, grader, window.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lesson", default="01_matmul_views")
    parser.add_argument("--students", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    if not os.access(CPUACCT, os.W_OK):
        sys.exit("this benchmark needs a writable cgroup v1 cpuacct controller (run it as root)")
    from grader.grading.notebook.sandbox import Limits, detect
    from grader.kit import build_kit

    lesson = Lesson(args.lesson, ROOT)
    best: dict[str, tuple[float, float, float]] = {}
    with tempfile.TemporaryDirectory(prefix="kernel-cpu-") as tmp:
        scratch = Path(tmp)
        scratch.chmod(0o711)
        kit = build_kit(ROOT, scratch / "kit")
        box = detect("bwrap", kit, [ROOT / "solutions"], scratch, Limits())
        print(f"{args.students} honest notebooks of {lesson.name} per round, one after another, "
              f"best of {args.rounds}; load average {os.getloadavg()[0]:.1f} at the start")
        for r in range(args.rounds):
            for mode in ("warm", "cold"):
                got = grade_round(lesson, dataclasses.replace(box, warm=mode == "warm"), kit, scratch,
                                  args.students)
                print(f"  round {r + 1} {mode}: " + ", ".join(
                    f"{what} {v / args.students:.2f}" for what, v in zip(("wall", "grader", "all"), got)))
                if mode not in best or got[0] < best[mode][0]:
                    best[mode] = got
    n = args.students
    print(f"\n{'seconds per submission':<24} {'wall':>8} {'grader CPU':>11} {'kernel CPU':>11}")
    for mode in ("cold", "warm"):
        wall, grader, total = best[mode]
        print(f"{mode:<24} {wall / n:8.2f} {grader / n:11.2f} {(total - grader) / n:11.2f}")
    print(f"kernel CPU, warm over cold: {(best['warm'][2] - best['warm'][1]) / (best['cold'][2] - best['cold'][1]):.2f}x")


if __name__ == "__main__":
    main()
