"""Benchmark (not a test): ``python -m grader grade --jobs 2`` against stock
``nbgrader autograde`` on the same generated class, side by side in one run.

    .venv/bin/python benchmarks/grade_vs_nbgrader.py [--students 16] [--jobs 2] [--rounds 2]
        [--baseline REV]

With ``--baseline REV`` (a git revision of this repository, for example the commit before
a change) it also grades an equivalent class with that revision's grader, checked out in a
temporary worktree with its own course, in the same rounds, and prints the ratio of this
grader's seconds per submission to that one's.

Each tool gets its own copy of the course and the same ``submitted/`` tree: a class whose
notebooks are honest full, partial, empty or carry a catalogued misconception, built
from the real release and solution notebooks. It prints the seconds per submission of
each (the whole command, start-up included), their ratio, and the floor: running the
same notebooks with plain nbclient, one after another, with nothing else. It also grades
with ``--figures text`` (each figure's output its text alone, never drawn). The tools take
turns for ``--rounds`` rounds (the machine may be shared) and each one's best round is
reported. It also checks that every tool gives every student the same total.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))

import grading_corpus  # noqa: E402
from grading_corpus import Lesson, misconception_samples, write, Sample  # noqa: E402


def make_class(lesson: Lesson, n: int) -> list[Sample]:
    """n students: a rotation of honest full, partial, empty and misconception notebooks."""
    answers = list(lesson.answers)
    kinds = [
        lambda: lesson.honest(),
        lambda: lesson.notebook({a: lesson.answers[a] for a in answers[::2]}),
        lambda: lesson.release,
    ]
    mistakes = misconception_samples(lesson)
    students = []
    for i in range(n):
        name = f"student{i:03d}"
        if i % 4 == 3 and mistakes:
            sample = mistakes[(i // 4) % len(mistakes)]
            students.append(Sample(name, lesson.name, sample.files, {}))
        else:
            nb = kinds[i % 4 % 3]()
            students.append(Sample(name, lesson.name, lesson.files(nb), {}))
    return students


def bench_env() -> dict:
    """This environment, with the checkout on PYTHONPATH and the venv's scripts on PATH."""
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return dict(os.environ, PYTHONPATH=path,
                PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")


def course_copy(where: Path) -> Path:
    return grading_corpus.course_copy(ROOT, where)


CPUACCT = Path("/sys/fs/cgroup/cpuacct")


class _CpuWindow:
    """CPU seconds of this process and everything it starts while the window is open: with
    a cgroup v1 cpuacct controller (as root), every process, waited for or killed (sandboxed
    kernels are killed); without, only the processes that were waited for."""

    def __init__(self):
        self.group = CPUACCT / f"bench-{os.getpid()}-{time.monotonic_ns()}"
        try:
            self.group.mkdir()
            (self.group / "cgroup.procs").write_text(str(os.getpid()))
        except OSError:
            self.group = None
        self.start = self._rusage()

    @staticmethod
    def _rusage() -> float:
        mine, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return mine.ru_utime + mine.ru_stime + children.ru_utime + children.ru_stime

    def close(self) -> float:
        if self.group is None:
            return self._rusage() - self.start
        used = int((self.group / "cpuacct.usage").read_text()) / 1e9
        (CPUACCT / "cgroup.procs").write_text(str(os.getpid()))
        try:
            self.group.rmdir()
        except OSError:  # a process of the command still runs: the group stays
            pass
        return used


def cpu_note() -> str:
    if os.access(CPUACCT, os.W_OK):
        return "(CPU counts every process each command started, sandboxed kernels included: a cpuacct cgroup)"
    return ("(CPU counts the processes each command waited for; sandboxed kernels killed rather "
            "than waited for are left out: no cpuacct cgroup here)")


def run(cmd: list[str], cwd: Path, env: dict) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and everything it started)."""
    start, window = time.perf_counter(), _CpuWindow()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    seconds, cpu = time.perf_counter() - start, window.close()
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd[:4])} failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return seconds, cpu


def floor(notebooks: list[Path]) -> tuple[float, float]:
    """Plain nbclient, one notebook after another, in this already warm process."""
    import nbformat
    from nbclient import NotebookClient

    start, window = time.perf_counter(), _CpuWindow()
    quiet, saved = os.open(os.devnull, os.O_WRONLY), os.dup(2)
    os.dup2(quiet, 2)  # the kernels' start-up warnings
    try:
        for path in notebooks:
            nb = nbformat.read(path, as_version=4)
            NotebookClient(nb, timeout=120, allow_errors=True, kernel_name="python3",
                           resources={"metadata": {"path": str(path.parent)}}).execute()
    finally:
        os.dup2(saved, 2)
    return time.perf_counter() - start, window.close()


def totals(db: Path, assignment: str) -> dict[str, float]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{db}", "attention") as gb:
        return {s.student.id: s.score for s in gb.assignment_submissions(assignment)}


class Baseline:
    """Another revision of the grader, in a worktree, with the class its own code makes."""

    def __init__(self, rev: str, lesson: str, students: int, where: Path):
        import site

        self.tree = where / "tree"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(self.tree), rev],
                       check=True, capture_output=True)
        # A virtual environment of its own, whose packages are this one's but whose course
        # package is the worktree's: its kernels must import that revision, not this one
        # (this checkout's editable install is a .pth file, which a plain path line skips).
        venv = where / "venv"
        subprocess.run([sys.base_prefix + "/bin/python3", "-m", "venv", "--without-pip", str(venv)],
                       check=True)
        packages = next(venv.glob("lib/python*/site-packages"))
        (packages / "aa_baseline.pth").write_text(f"{self.tree}\n")
        (packages / "zz_packages.pth").write_text("\n".join(site.getsitepackages()) + "\n")
        self.python = str(venv / "bin" / "python")
        path = os.pathsep.join([str(venv / "bin"), str(Path(sys.executable).parent),
                                os.environ.get("PATH", "")])  # nbgrader runs alembic from PATH
        self.env = dict(os.environ, PATH=path, PYTHONPATH=str(self.tree / "tests"))
        self.lesson, self.students = lesson, students

    def close(self) -> None:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(self.tree)],
                       capture_output=True)

    def grade(self, tmp: Path, jobs: int) -> tuple[float, float]:
        course = tmp / "baseline"
        course.mkdir()
        for name in ("solutions", "notebooks"):
            shutil.copytree(self.tree / name, course / name)
        shutil.copy(self.tree / "nbgrader_config.py", course)
        make = (f"import sys; sys.path.insert(0, {str(self.tree / 'benchmarks')!r})\n"
                f"from pathlib import Path\n"
                f"from grade_vs_nbgrader import make_class\n"
                f"from grading_corpus import Lesson, write\n"
                f"lesson = Lesson({self.lesson!r}, Path({str(self.tree)!r}))\n"
                f"write(make_class(lesson, {self.students}), Path({str(course / 'submitted')!r}))\n")
        subprocess.run([self.python, "-c", make], env=self.env, check=True, capture_output=True,
                       cwd=self.tree)
        result = run([self.python, "-m", "grader", "grade", str(course / "submitted"), "--out",
                      str(tmp / "out-baseline"), "--jobs", str(jobs)], course,
                     dict(self.env, ATTENTION_COURSE_ROOT=str(course)))
        graded = totals(course / "gradebook.db", self.lesson)
        if not any(graded.values()):  # a baseline that earns nothing did not really grade
            sys.exit(f"the baseline graded every submission 0: its environment is broken ({graded})")
        return result


def one_round(lesson: Lesson, students: list[Sample], tmp: Path, jobs: int, env: dict,
              baseline: Baseline | None = None) -> dict:
    bin_dir = Path(sys.executable).parent
    theirs, ours, text = course_copy(tmp / "nbgrader"), course_copy(tmp / "ours"), course_copy(tmp / "text")
    for course in (theirs, ours, text):
        write(students, course / "submitted")
        # Both start from a course whose gradebook already has the assignment (not
        # timed), as an instructor's does once the assignment is released.
        run([str(bin_dir / "nbgrader"), "generate_assignment", lesson.name, "--force",
             f"--CourseDirectory.release_directory={tmp / 'release'}", "--log-level=ERROR"], course, env)
    times = {"nbgrader": run([str(bin_dir / "nbgrader"), "autograde", lesson.name, "--log-level=ERROR"],
                             theirs, env)}
    times["grade"] = run([sys.executable, "-m", "grader", "grade", str(ours / "submitted"), "--out",
                          str(tmp / "out"), "--jobs", str(jobs)], ours, dict(env, ATTENTION_COURSE_ROOT=str(ours)))
    # The same, with each figure's output its text alone, never drawn (--figures text).
    times["text"] = run([sys.executable, "-m", "grader", "grade", str(text / "submitted"), "--out",
                         str(tmp / "out-text"), "--jobs", str(jobs), "--figures", "text"], text,
                        dict(env, ATTENTION_COURSE_ROOT=str(text)))
    if baseline is not None:
        times["baseline"] = baseline.grade(tmp, jobs)
    times["floor"] = floor(sorted((theirs / "autograded").glob(f"*/{lesson.name}/{lesson.filename}")))
    same = totals(theirs / "gradebook.db", lesson.name) == totals(ours / "gradebook.db", lesson.name) \
        == totals(text / "gradebook.db", lesson.name)
    return {"times": times, "same": same}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=16)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2,
                        help="alternate the tools this many times and keep each one's best (default 2)")
    parser.add_argument("--lesson", default="01_matmul_views")
    parser.add_argument("--baseline", metavar="REV", default=None,
                        help="also grade with this git revision's grader, side by side")
    args = parser.parse_args()
    lesson = Lesson(args.lesson, ROOT)
    bin_dir = Path(sys.executable).parent
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    students = make_class(lesson, args.students)
    n = args.students
    print(f"{n} submissions of {lesson.name}, {os.cpu_count()} cores, best of {args.rounds} "
          f"alternating round(s); load average {os.getloadavg()[0]:.1f} at the start")
    best: dict[str, tuple[float, float]] = {}
    same = True
    base_dir = tempfile.TemporaryDirectory(prefix="bench-base-")
    baseline = Baseline(args.baseline, args.lesson, n, Path(base_dir.name)) if args.baseline else None
    for r in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
            result = one_round(lesson, students, Path(tmp), args.jobs, env, baseline)
        same &= result["same"]
        line = []
        for tool, (wall, cpu) in result["times"].items():
            if tool not in best or wall < best[tool][0]:
                best[tool] = (wall, cpu)
            line.append(f"{tool} {wall / n:.2f}")
        ratio = result["times"]["nbgrader"][0] / result["times"]["grade"][0]
        print(f"  round {r + 1}: " + ", ".join(line) + f" s per submission; speed-up {ratio:.2f}x")
    print(f"{'':<44} {'wall':>8} {'CPU':>8}   (seconds per submission, best round)")
    if baseline is not None:
        baseline.close()
    base_dir.cleanup()
    rows = [("stock nbgrader autograde (serial)", "nbgrader"),
            (f"python -m grader grade --jobs {args.jobs}", "grade"),
            ("the same with --figures text", "text"),
            ("floor: plain nbclient, one after another", "floor")]
    if "baseline" in best:
        rows.insert(2, (f"grade at {args.baseline} (baseline)", "baseline"))
    for label, tool in rows:
        wall, cpu = best[tool]
        print(f"{label:<44} {wall / n:8.2f} {cpu / n:8.2f}")
    print(f"speed-up over stock nbgrader, per submission: {best['nbgrader'][0] / best['grade'][0]:.2f}x "
          f"(over the serial floor: {best['floor'][0] / best['grade'][0]:.2f}x); with --figures text: "
          f"{best['nbgrader'][0] / best['text'][0]:.2f}x (over the floor: "
          f"{best['floor'][0] / best['text'][0]:.2f}x)")
    if "baseline" in best:
        print(f"this grader's seconds per submission over the baseline's: "
              f"{best['grade'][0] / best['baseline'][0]:.2f}x")
    print(f"same total for every student in every gradebook, every round: {same}")
    print(cpu_note())


if __name__ == "__main__":
    main()
