"""``python -m grader <command>``: the instructor's and the grading service's interface."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .course import course_root
from .learner.cli import add_check_command


def _release(args) -> int:
    from .release import ReleaseError, release, stale_files

    root = course_root()
    try:
        if args.check:
            problems = stale_files(root, args.lessons or None)
            if problems:
                print("notebooks/ is stale: it does not match a fresh release of solutions/.")
                for line in problems:
                    print(f"  - {line}")
                print("Run `python -m grader release` and commit the result.")
                return 1
            print("notebooks/ is up to date with solutions/.")
            return 0
        names = release(root, args.lessons or None)
    except ReleaseError as exc:
        print(f"release failed: {exc}", file=sys.stderr)
        return 2
    print(f"Released {len(names)} assignment(s) into notebooks/: {', '.join(names)}")
    return 0


def _kit(args) -> int:
    from .kit import KitError, build_kit

    try:
        out = build_kit(course_root(), Path(args.dir), force=args.force)
    except KitError as exc:
        print(f"kit: {exc}", file=sys.stderr)
        return 2
    print(f"Wrote the student kit into {out}: {len(list(out.rglob('*')))} files, no answers. "
          f"Give it to students as it is (see {out / 'README.md'}).")
    return 0


def _grade(args) -> int:
    from .grading.classroom.batch import grade
    from .grading.classroom.pool import default_jobs
    from .grading.notebook.sandbox import Limits

    limits = Limits(timeout=args.timeout, memory_mb=args.memory, wall=args.wall, disk_mb=args.disk,
                    processes=args.processes)
    return grade(Path(args.submissions), Path(args.out), jobs=args.jobs or default_jobs(),
                 limits=limits, sandbox=args.sandbox, db_url=args.db, students=args.student,
                 only=args.assignment, scheduler=args.scheduler, grader_wall=args.grader_wall,
                 kernels=args.kernels, figures=args.figures)


def _serve(args) -> int:
    from .grading.notebook.sandbox import Limits
    from .grading.classroom.serve import serve

    limits = Limits(timeout=args.timeout, memory_mb=args.memory, wall=args.wall, disk_mb=args.disk,
                    processes=args.processes)
    out = Path(args.out) if args.out else course_root() / "grading"
    return serve(out, once=args.once, jobs=args.jobs, scheduler=args.scheduler, only=args.assignment,
                 sandbox=args.sandbox, limits=limits, db_url=args.db, poll=args.poll,
                 grader_wall=args.grader_wall, kernels=args.kernels, figures=args.figures)


def _grades(args) -> int:
    from .grading.classroom.grades import grades_csv
    from .grading.classroom.gradebook import Recorder
    from .grading.classroom.report import OutError, check_out
    from .course import sources

    root = course_root()
    out = Path(args.out)
    try:
        recorder = Recorder(root, args.db)
        check_out(out, root)
        text = grades_csv(recorder.db_url, recorder.course_id, sources(root), out / "results")
    except OutError as exc:
        print(f"grades: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 (a gradebook that cannot be read)
        print(f"grades: cannot read the gradebook: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    (out / "grades.csv").write_text(text, encoding="utf-8")
    print(f"Wrote {out / 'grades.csv'} from the gradebook ({recorder.db_url}): "
          f"{max(len(text.splitlines()) - 1, 0)} row(s).")
    return 0


def _worker(args) -> int:
    from .grading.classroom.pool import default_jobs
    from .grading.classroom.worker import main

    return main(args.scheduler, args.nworkers or default_jobs(), args.sandbox, args.dask_args)


def _positive(kind):
    def parse(text):
        value = kind(text)
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be positive, got {text}")
        return value
    return parse


def _limit_options(p) -> None:
    """The sandbox's limits and mode, and the grader's own wall limit, as ``grade`` and
    ``serve`` take them."""
    from .grading.notebook.sandbox import Limits
    from .grading.notebook.watchdog import DEFAULT as GRADER_WALL

    given = Limits()  # the defaults are the limits' own, said once
    p.add_argument("--timeout", type=_positive(float), default=given.timeout, metavar="S",
                   help=f"seconds one cell may run (default {given.timeout:g})")
    p.add_argument("--memory", type=_positive(int), default=given.memory_mb, metavar="MB",
                   help=f"memory one notebook may use (default {given.memory_mb})")
    p.add_argument("--wall", type=_positive(float), default=given.wall, metavar="S",
                   help=f"seconds one notebook may run in all (default {given.wall:g})")
    p.add_argument("--disk", type=_positive(int), default=given.disk_mb, metavar="MB",
                   help=f"what one notebook may write, in its working folders and in /tmp each "
                   f"(default {given.disk_mb}; past it, a write fails with 'No space left on "
                   f"device')")
    p.add_argument("--processes", type=_positive(int), default=given.processes, metavar="N",
                   help=f"processes and threads one notebook may run at once (default "
                   f"{given.processes}; past it, starting another fails with 'Resource "
                   f"temporarily unavailable')")
    p.add_argument("--grader-wall", type=_positive(float), default=GRADER_WALL, metavar="S",
                   help=f"seconds the grading process may spend on its own work on one notebook "
                   f"(reading, repairing, scanning and scoring it; its code's run is bounded by "
                   f"--timeout and --wall) (default {GRADER_WALL:g}; past it, that notebook is "
                   f"not graded, with a note)")
    p.add_argument("--sandbox", choices=("bwrap", "none"), default="bwrap",
                   help="bwrap: each submission in bubblewrap (default; grading refuses to run "
                   "without it); none: run submissions unsandboxed, in a private directory with "
                   "limits only, able to read what this user can read")
    p.add_argument("--kernels", choices=("warm", "cold"), default="warm",
                   help="warm: each notebook's kernel is forked from a process that has already "
                   "imported what its kernels import, into a sandbox of its own (default); cold: "
                   "each kernel starts from nothing")
    p.add_argument("--figures", choices=("png", "text"), default="png",
                   help="png: the graded notebooks' figures are drawn, as in JupyterLab (default); "
                   "text: each figure's output is its text alone (\"<Figure size 1000x360 with 2 "
                   "Axes>\"), never drawn: the scores are the same, the figures are missing from "
                   "the graded notebooks and the feedback")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("release", help="regenerate notebooks/ (and their recorded checks) "
                       "from solutions/")
    p.add_argument("lessons", nargs="*", metavar="LESSON",
                   help="only these assignments (default: all)")
    p.add_argument("--check", action="store_true", help="exit 1 if notebooks/ is stale")
    p.set_defaults(func=_release)
    add_check_command(sub)
    p = sub.add_parser("kit", help="write what a student receives (no answers) into DIR")
    p.add_argument("dir", metavar="DIR")
    p.add_argument("--force", action="store_true", help="replace DIR if it holds an earlier kit")
    p.set_defaults(func=_kit)
    p = sub.add_parser(
        "grade", help="grade a class's submissions in parallel, each in its own sandbox",
        description="Grade nbgrader's submitted/{student}/{assignment}/{notebook}.ipynb tree (or "
        "a .zip of one). Writes the course gradebook, DIR/grades.csv, DIR/feedback/ and "
        "DIR/results/. Exit status 0 when every submission was graded, whatever the scores.")
    p.add_argument("submissions", metavar="SUBMISSIONS", help="the submitted/ folder, its parent, or a .zip")
    p.add_argument("--out", required=True, metavar="DIR", help="where to write results and feedback")
    p.add_argument("--jobs", type=_positive(int), default=None, metavar="N",
                   help="submissions graded at once (default: the number of cores)")
    _limit_options(p)
    p.add_argument("--db", default=None, metavar="URL",
                   help="gradebook URL (default: the course's, from nbgrader_config.py)")
    p.add_argument("--student", action="append", metavar="NAME",
                   help="grade only this student's submissions (repeatable); grades.csv keeps "
                   "everyone's rows")
    p.add_argument("--assignment", action="append", metavar="NAME",
                   help="grade only this assignment (repeatable)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="grade on the Dask cluster whose scheduler is at ADDRESS (tcp://HOST:8786; "
                   "its machines run `python -m grader worker`), or 'local' for a Dask "
                   "LocalCluster of --jobs processes on this machine; default: a pool of --jobs "
                   "processes here. On a cluster, each worker's --nworkers sets how many "
                   "notebooks it grades at once")
    p.set_defaults(func=_grade)
    p = sub.add_parser(
        "serve", help="grade each submission as it arrives in nbgrader's exchange, and release "
        "its feedback",
        description="Watch nbgrader's inbound exchange for every released assignment. Each new "
        "submission (the latest of a student's) is collected into submitted/ as `nbgrader "
        "collect` does, graded as `grade` grades it, recorded in the gradebook with its late "
        "penalty, and its feedback generated and released through nbgrader, where the "
        "student's Fetch Feedback finds it. Prints one line per submission and keeps "
        "DIR/grades.csv and DIR/serve-health.json current. The attempt limit and holding "
        "feedback until the due date are set in nbgrader_config.py (c.GradeOnSubmit). Safe "
        "to kill at any moment: its record (DIR/serve.sqlite) says where each submission is.")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="where to write grades.csv, results, feedback pages, the health file and "
                   "the service's record (default: grading/ in the course)")
    p.add_argument("--jobs", type=_positive(int), default=None, metavar="N",
                   help="notebooks graded at once (default: the number of cores)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="grade on the Dask cluster at ADDRESS (or 'local'), as for grade")
    p.add_argument("--assignment", action="append", metavar="NAME",
                   help="watch only this assignment (repeatable; default: every released one)")
    p.add_argument("--once", action="store_true",
                   help="handle what is waiting, then exit (for cron, and for tests)")
    p.add_argument("--poll", type=_positive(float), default=1.0, metavar="S",
                   help="seconds between looks at the exchange (default 1)")
    _limit_options(p)
    p.add_argument("--db", default=None, metavar="URL",
                   help="gradebook URL (default: the course's, from nbgrader_config.py)")
    p.set_defaults(func=_serve)
    p = sub.add_parser(
        "grades", help="rewrite DIR/grades.csv from the gradebook (after grading by hand)",
        description="Write DIR/grades.csv from the gradebook without grading anything: the "
        "points given by hand in formgrader, late penalties and every student's row.")
    p.add_argument("--out", required=True, metavar="DIR", help="the folder `grade --out` wrote")
    p.add_argument("--db", default=None, metavar="URL",
                   help="gradebook URL (default: the course's, from nbgrader_config.py)")
    p.set_defaults(func=_grades)
    p = sub.add_parser(
        "worker", help="make this machine a grading worker of a Dask cluster",
        description="Check that this machine can grade (the student kit, the sandbox), name its "
        "course version, then start `dask worker SCHEDULER` with one grading process per core. "
        "The driver (`grade --scheduler SCHEDULER`) sends jobs only to workers of its own "
        "course version. Options after -- go to `dask worker` itself, for example "
        "`python -m grader worker tcp://HOST:8786 -- --name lab-3 --memory-limit 8GB`.")
    p.add_argument("scheduler", metavar="SCHEDULER", help="the scheduler's address, tcp://HOST:8786")
    p.add_argument("--nworkers", type=_positive(int), default=None, metavar="N",
                   help="notebooks graded at once on this machine (default: the number of cores)")
    p.add_argument("--sandbox", choices=("bwrap", "none"), default="bwrap",
                   help="as for grade: bwrap (default; refuses to start without it) or none")
    p.set_defaults(func=_worker)
    argv = list(sys.argv[1:] if argv is None else argv)
    rest = []  # `worker ... -- DASK_ARGS`: options for `dask worker` itself
    if argv[:1] == ["worker"] and "--" in argv:
        argv, rest = argv[:argv.index("--")], argv[argv.index("--") + 1:]
    args = parser.parse_args(argv)
    args.dask_args = rest
    return args.func(args)
