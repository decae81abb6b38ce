"""Benchmark (not a test): grading on submit (``python -m grader serve``), on this
machine's process pool and on a 2-worker Dask cluster on this machine, side by side in one
run, against ``python -m grader grade`` on the same class.

    .venv/bin/python benchmarks/serve_on_submit.py [--students 32] [--interval S] [--lesson NAME]

1. ``grade`` grades the class (``grade_vs_nbgrader.make_class``: honest, partial, empty and
   misconception notebooks) from a ``submitted/`` tree, timed whole: its throughput.
2. For each configuration, a fresh course: the assignment is released, ``serve`` is
   started and waits until it has proven the environment; then each student submits
   through nbgrader's exchange (``nbgrader submit``'s own code, ``ExchangeSubmit``, in this
   process) every ``--interval`` seconds (default: ``grade``'s seconds per submission, so
   that work arrives as fast as ``grade`` gets through it). Each student's latency is from
   the start of their submit to the moment their page is where ``nbgrader
   fetch_feedback`` looks for it (the exchange's ``feedback/{md5(secret + notebook)}.html``;
   the first three students also run ``fetch_feedback`` itself at the end, which must find
   it).

It prints, per configuration, the median and 95th percentile latency, the throughput (the
class over the time from the first submit to the last feedback) and its ratio to
``grade``'s, the service's own CPU seconds per submission (the one process that collects,
records and releases), and a model for 1,000 students submitting in the last hour before a
deadline on N machines.
"""
from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(HERE))

from grade_on_cluster import StandingCluster  # noqa: E402
from grade_vs_nbgrader import bench_env, course_copy, make_class, run, totals  # noqa: E402
from grading_corpus import Lesson, sandboxed, write  # noqa: E402

SANDBOX = [] if sandboxed() else ["--sandbox", "none"]


def _ticks(pid: int) -> float:
    """CPU seconds of one process (not its children), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Exchange:
    """A course whose assignment is released, and students who submit into its exchange."""

    def __init__(self, where: Path, lesson: str, env: dict):
        self.course = course_copy(where / "course")
        self.where, self.lesson, self.env = where, lesson, dict(env, ATTENTION_COURSE_ROOT=str(self.course))
        self.root = self.course / ".nbgrader_exchange"
        done = subprocess.run([sys.executable, "-m", "nbgrader", "release_assignment", lesson],
                              cwd=self.course, env=self.env, capture_output=True, text=True)
        if done.returncode:
            sys.exit(f"release_assignment failed:\n{done.stderr}")

    def submit(self, student: str, files: dict[str, bytes]) -> str:
        """Submit as ``student`` with nbgrader's own exchange code; return the secret."""
        from nbgrader.auth import Authenticator
        from nbgrader.coursedir import CourseDirectory
        from nbgrader.exchange.default.submit import ExchangeSubmit
        from traitlets.config import Config

        home = self.where / "homes" / student
        for name, data in files.items():
            path = home / self.lesson / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        c = Config()
        c.CourseDirectory.course_id = "attention"
        c.CourseDirectory.assignment_id = self.lesson
        c.CourseDirectory.student_id = student
        c.Exchange.root = str(self.root)
        c.Exchange.cache = str(home / ".cache")
        c.Exchange.assignment_dir = str(home)
        app = ExchangeSubmit(coursedir=CourseDirectory(config=c), authenticator=Authenticator(config=c),
                             config=c)
        app.log.setLevel("ERROR")
        app.start()
        cached = next((home / ".cache" / "attention").glob(f"{student}+{self.lesson}+*"))
        return (cached / "submission_secret.txt").read_text()

    def page(self, secret: str) -> Path:
        from nbgrader.utils import notebook_hash

        return self.root / "attention" / "feedback" / f"{notebook_hash(secret=secret, notebook_id=self.lesson)}.html"

    def fetch(self, student: str) -> bool:
        home = self.where / "homes" / student
        (home / "nbgrader_config.py").write_text(
            f'c = get_config()\nc.CourseDirectory.course_id = "attention"\n'
            f"c.Exchange.root = {str(self.root)!r}\nc.Exchange.cache = {str(home / '.cache')!r}\n")
        subprocess.run([sys.executable, "-m", "nbgrader", "fetch_feedback", self.lesson,
                        f"--student={student}"], cwd=home, env=self.env, capture_output=True)
        return any((home / self.lesson / "feedback").glob(f"*/{self.lesson}.html"))


def serve_class(name: str, students, where: Path, env: dict, interval: float, lesson: str,
                args: list[str]) -> dict:
    ex = Exchange(where / name, lesson, env)
    log = open(where / f"serve-{name}.log", "w+")
    proc = subprocess.Popen([sys.executable, "-m", "grader", "serve", "--poll", "0.25", *SANDBOX, *args],
                            cwd=ex.course, env=ex.env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while "Proven and watched" not in Path(log.name).read_text():
            if proc.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"serve ({name}) did not start:\n{Path(log.name).read_text()[-3000:]}")
            time.sleep(0.2)
        cpu0 = _ticks(proc.pid)
        latency, starts, lock = {}, {}, threading.Lock()
        waiting: dict[str, tuple[float, Path]] = {}

        def watch() -> None:
            while len(latency) < len(students):
                with lock:
                    for student, (start, page) in list(waiting.items()):
                        if page.exists():
                            latency[student] = time.monotonic() - start
                            del waiting[student]
                if proc.poll() is not None:
                    return
                time.sleep(0.05)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        first = time.monotonic()
        for i, sample in enumerate(students):
            due = first + i * interval
            time.sleep(max(0.0, due - time.monotonic()))
            start = starts[sample.student] = time.monotonic()
            secret = ex.submit(sample.student, sample.files)
            with lock:
                waiting[sample.student] = (start, ex.page(secret))
        watcher.join(timeout=900)
        if len(latency) < len(students):
            sys.exit(f"serve ({name}) answered {len(latency)} of {len(students)}:\n"
                     f"{Path(log.name).read_text()[-3000:]}")
        span = max(starts[s] + latency[s] for s in latency) - first
        cpu = _ticks(proc.pid) - cpu0
        fetched = all(ex.fetch(s.student) for s in students[:3])
        graded = totals(ex.course / "gradebook.db", lesson)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    values = sorted(latency.values())
    return {"median": statistics.median(values), "p95": values[max(0, int(round(0.95 * len(values))) - 1)],
            "span": span, "cpu": cpu, "fetched": fetched, "totals": graded}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=32)
    parser.add_argument("--lesson", default="01_matmul_views")
    parser.add_argument("--interval", type=float, default=None,
                        help="seconds between submissions (default: grade's seconds per submission)")
    parser.add_argument("--cores", type=int, default=2, help="cores per machine in the model (default 2)")
    args = parser.parse_args()
    lesson = Lesson(args.lesson, ROOT)
    students, n = make_class(lesson, args.students), args.students
    env = bench_env()
    env.pop("GRADER_SERVE_CRASH", None)
    print(f"{n} submissions of {lesson.name}, {os.cpu_count()} cores; load average "
          f"{os.getloadavg()[0]:.1f} at the start")
    keep = tempfile.TemporaryDirectory(prefix="bench-serve-")
    where = Path(keep.name)

    course = course_copy(where / "grade")
    write(students, course / "submitted")
    wall, _ = run([sys.executable, "-m", "grader", "grade", str(course / "submitted"), "--out",
                   str(where / "out-grade"), "--jobs", "2", *SANDBOX], course,
                  dict(env, ATTENTION_COURSE_ROOT=str(course)))
    expected = totals(course / "gradebook.db", lesson.name)
    grade_rate = n / wall * 60
    interval = args.interval if args.interval is not None else wall / n
    print(f"grade --jobs 2: {wall:.1f} s for the class, {grade_rate:.1f} submissions/min; students "
          f"submit every {interval:.2f} s")

    cluster = StandingCluster(2, course_copy(where / "worker-course"), env, where)
    try:
        results = {
            "serve --jobs 2": serve_class("local", students, where, env, interval, lesson.name, ["--jobs", "2"]),
            "serve, 2 Dask workers": serve_class("cluster", students, where, env, interval, lesson.name,
                                                 ["--scheduler", cluster.address]),
        }
    finally:
        cluster.close()
    print(f"\n{'configuration':24} {'median s':>9} {'p95 s':>7} {'sub/min':>8} {'grade/serve':>12} "
          f"{'svc CPU s/sub':>14}  fetch_feedback  scores as grade")
    for name, r in results.items():
        rate = n / r["span"] * 60
        print(f"{name:24} {r['median']:9.1f} {r['p95']:7.1f} {rate:8.1f} {grade_rate / rate:12.2f} "
              f"{r['cpu'] / n:14.2f}  {'found' if r['fetched'] else 'MISSING':14}  "
              f"{'same' if r['totals'] == expected else 'DIFFERENT'}")
    local = results["serve --jobs 2"]
    core_s = wall * 2 / n  # core-seconds per submission, from grade (start-up included)
    driver = local["cpu"] / n  # the service's own seconds per submission: one process, serial
    print(f"\nModel: 1,000 students in the last hour before a deadline (0.28 submissions/s), "
          f"{args.cores} cores per machine, {core_s:.2f} core-seconds per submission (grade's), "
          f"{driver:.2f} s of the service's own process per submission (at most "
          f"{3600 / max(driver, 1e-9):,.0f} per hour, whatever the cluster).")
    for machines in (1, 2, 4, 8, 16):
        per_hour = min(machines * args.cores / core_s, 1 / max(driver, 1e-9)) * 3600
        backlog = max(0.0, 1000 - per_hour)
        drain = backlog / per_hour * 60
        wait = "keeps up: each waits about its own grading time" if backlog == 0 else \
            f"{backlog:,.0f} still waiting at the deadline, answered within {drain:.0f} min after it"
        print(f"  N = {machines:2}: {per_hour:7,.0f} per hour; {wait}")


if __name__ == "__main__":
    main()
