"""Benchmark (not a test): ``python -m grader grade`` on this machine's process pool, on a
Dask cluster of 1 and of 2 worker processes on this machine, and on a Dask LocalCluster,
side by side in one run.

    .venv/bin/python benchmarks/grade_on_cluster.py [--students 12] [--rounds 2] [--baseline REV]

The clusters stand before the rounds start, as a real one does (a scheduler and
``python -m grader worker`` processes, each with one thread); each grade is timed whole,
from the command's start to its exit (connecting, the environment proof, grading and
writing every output). Every configuration grades the same generated class (honest, partial,
empty and misconception notebooks of one lesson); the configurations take turns for
``--rounds`` rounds, every other round in reverse order (the machine may be shared), and
each one's best round is reported.

It prints, per configuration, seconds and submissions per second, and CPU seconds per
submission (on a cluster, the driver's alone: what the one machine that writes the
gradebook spends per submission, whatever the cluster's size); then the cluster's per-submission overhead and its
ratio to the local pool on the same number of cores (the goal is 1.15 or less), the
LocalCluster's ratio to the pool, and a throughput model for 1,000 and 10,000 submissions
on N machines: a fixed start (a one-submission class on the 2-worker cluster), plus the
marginal core-seconds per submission spread over N x cores, but never faster than the
driver can write results. With ``--baseline REV`` it also grades with that revision's
local pool (``grade_vs_nbgrader.Baseline``), to show that the local path is no slower.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(HERE))

from grade_vs_nbgrader import bench_env, Baseline, course_copy, make_class, run, totals  # noqa: E402
from grading_corpus import Lesson, sandboxed, write  # noqa: E402

SANDBOX = [] if sandboxed() else ["--sandbox", "none"]


class StandingCluster:
    """A ``dask scheduler`` and ``workers`` grading processes (one thread each), started here."""

    def __init__(self, workers: int, course: Path, env: dict, where: Path):
        self.procs, self.where = [], where
        info = where / f"scheduler-{workers}.json"
        self.start([str(Path(sys.executable).with_name("dask")), "scheduler", "--host", "127.0.0.1",
                    "--port", "0", "--no-dashboard", "--scheduler-file", str(info)], env)
        self.address = self.wait(lambda: info.is_file() and json.loads(info.read_text() or "{}").get("address"))
        for i in range(workers):
            self.start([sys.executable, "-m", "grader", "worker", self.address, "--nworkers", "1",
                        *SANDBOX, "--", "--no-dashboard"], dict(env, ATTENTION_COURSE_ROOT=str(course)))
        from distributed import Client

        with Client(self.address, set_as_default=False) as client:
            self.wait(lambda: len(client.scheduler_info()["workers"]) == workers)

    def start(self, cmd, env) -> None:
        log = open(self.where / f"cluster-{len(self.procs)}-{os.getpid()}.log", "wb")
        self.procs.append(subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                           start_new_session=True))

    def wait(self, ready, timeout=180):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = ready()
            if value:
                return value
            if any(p.poll() is not None for p in self.procs):
                sys.exit(f"a cluster process exited; see the logs in {self.where}")
            time.sleep(0.3)
        sys.exit("the cluster did not start in time")

    def close(self) -> None:
        for proc in reversed(self.procs):
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for proc in self.procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def grade(students, tmp: Path, name: str, env: dict, *args) -> tuple[float, float, dict]:
    """(wall, driver CPU, totals) of one ``grade`` of ``students`` in a fresh course copy."""
    course = course_copy(tmp / name)
    write(students, course / "submitted")
    wall, cpu = run([sys.executable, "-m", "grader", "grade", str(course / "submitted"), "--out",
                     str(tmp / f"out-{name}"), *SANDBOX, *args], course,
                    dict(env, ATTENTION_COURSE_ROOT=str(course)))
    return wall, cpu, totals(course / "gradebook.db", students[0].assignment)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--lesson", default="01_matmul_views")
    parser.add_argument("--baseline", metavar="REV", default=None,
                        help="also grade with this git revision's local pool, side by side")
    parser.add_argument("--cores", type=int, default=2, help="cores per machine in the model (default 2)")
    args = parser.parse_args()
    lesson = Lesson(args.lesson, ROOT)
    students, n = make_class(lesson, args.students), args.students
    env = bench_env()
    print(f"{n} submissions of {lesson.name}, {os.cpu_count()} cores, best of {args.rounds} alternating "
          f"round(s); load average {os.getloadavg()[0]:.1f} at the start")
    keep = tempfile.TemporaryDirectory(prefix="bench-cluster-")
    where = Path(keep.name)
    worker_course = course_copy(where / "worker-course")
    clusters = {k: StandingCluster(k, worker_course, env, where) for k in (1, 2)}
    baseline = Baseline(args.baseline, args.lesson, n, where / "baseline") if args.baseline else None
    configs = {
        "local --jobs 1": ("--jobs", "1"),
        "cluster, 1 worker": ("--scheduler", clusters[1].address),
        "local --jobs 2": ("--jobs", "2"),
        "cluster, 2 workers": ("--scheduler", clusters[2].address),
        "LocalCluster --jobs 2": ("--scheduler", "local", "--jobs", "2"),
    }
    best: dict[str, tuple[float, float]] = {}
    graded = {}
    try:
        for r in range(args.rounds):
            line = {}
            order = list(configs) + (["baseline"] if baseline is not None else [])
            if r % 2:  # every other round backwards: no configuration always runs first
                order.reverse()
            with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
                for i, label in enumerate(order):
                    if label == "baseline":
                        (base := Path(tmp) / "b").mkdir()
                        wall, cpu = baseline.grade(base, 2)
                    else:
                        wall, cpu, graded[label] = grade(students, Path(tmp), f"c{i}", env, *configs[label])
                    if label not in best or wall < best[label][0]:
                        best[label] = (wall, cpu)
                    line[label] = f"{wall / n:.2f}"
            print(f"  round {r + 1}: " + ", ".join(f"{k} {line[k]}" for k in line) + " s per submission")
        with tempfile.TemporaryDirectory(prefix="bench-") as tmp:  # the fixed start
            start, start_cpu, _ = grade(students[:1], Path(tmp), "one", env, "--scheduler",
                                       clusters[2].address)
    finally:
        for cluster in clusters.values():
            cluster.close()
        if baseline is not None:
            baseline.close()
        keep.cleanup()

    print(f"\n{'':<34} {'s/submission':>12} {'submissions/s':>14} {'CPU s/sub':>10}")
    rows = list(configs) + (["baseline"] if baseline is not None else [])
    for label in rows:
        wall, cpu = best[label]
        name = f"local --jobs 2 at {args.baseline}" if label == "baseline" else label
        print(f"{name:<34} {wall / n:12.2f} {n / wall:14.2f} {cpu / n:10.3f}")
    print("(CPU: the command and the processes it waited for; on a cluster, the driver alone)")
    print()
    for cores, local, remote in ((1, "local --jobs 1", "cluster, 1 worker"),
                                 (2, "local --jobs 2", "cluster, 2 workers")):
        over = (best[remote][0] - best[local][0]) / n
        print(f"{cores} core(s): cluster over local pool, per submission: {best[remote][0] / best[local][0]:.2f}x "
              f"(overhead {over:+.2f} s per submission; goal: 1.15x or less)")
    print(f"LocalCluster over the local pool (2 processes): "
          f"{best['LocalCluster --jobs 2'][0] / best['local --jobs 2'][0]:.2f}x")
    if baseline is not None:
        print(f"local pool, this tree over {args.baseline}: {best['local --jobs 2'][0] / best['baseline'][0]:.2f}x")
    same = len({json.dumps(t, sort_keys=True) for t in graded.values()}) == 1
    print(f"same total for every student in every configuration (last round): {same}")

    # The model: t(n, N) = start + n * max(core_seconds / (N * cores), driver).
    wall2, cpu2 = best["cluster, 2 workers"]
    core_seconds = 2 * max(wall2 - start, 0.0) / max(n - 1, 1)
    driver = max(cpu2 - start_cpu, 1e-3) / max(n - 1, 1)  # the driver's marginal CPU
    print(f"\nThroughput model (machines of {args.cores} cores, each running `python -m grader worker`):")
    print(f"  fixed start {start:.1f} s (a class of one on the 2-worker cluster: connect, proof, one "
          f"submission); {core_seconds:.2f} core-seconds per further submission; the driver spends "
          f"{driver:.3f} s per submission, a ceiling of {1 / driver:.0f} submissions/s")
    print(f"  {'machines':>8} {'1,000 submissions':>18} {'10,000 submissions':>19}")
    for machines in (1, 2, 4, 8, 16, 32):
        per = max(core_seconds / (machines * args.cores), driver)
        cells = [f"{(start + k * per) / 60:14.1f} min" for k in (1000, 10000)]
        print(f"  {machines:>8} {cells[0]:>18} {cells[1]:>19}")


if __name__ == "__main__":
    main()
