"""``python -m grader grade``: grade a class, in parallel, each submission in its sandbox.

The order of work:

1. read the course (every assignment in ``solutions/`` with its release) and every
   submission, into memory, before any student code runs;
2. build the student kit (what the sandbox holds, ``grader.kit``) and set up the sandbox:
   bubblewrap, or nothing only if ``--sandbox none`` says so; enter the assignments into
   the gradebook;
3. prove the environment: each assignment's source notebook is graded first, through the
   same sandbox, bridge and checker, and must earn full marks, and its release must earn
   0; otherwise nobody is graded;
4. run one job per submitted notebook in a pool of worker processes
   (:func:`grader.grading.job.run_job`, which walks the steps listed in
   ``grader.grading.job.STEPS``), or with ``--scheduler`` on the workers of a Dask
   cluster, which call the same function (:mod:`grader.grading.cluster`);
5. as each submission finishes, write its gradebook entry, late penalty, autograded
   folder, feedback pages and JSON result, in this process only
   (:mod:`grader.grading.outputs`);
6. write ``grades.csv`` from the gradebook (:mod:`grader.grading.grades`), and list the
   submissions a person should look at.

``--student`` and ``--assignment`` grade only those submissions; the other rows of
``grades.csv`` stay, since it is written from the gradebook.

Exit status: 0 when every submission was graded, whatever the scores; 1 when some could
not be graded or recorded (each is named); 2 when the grader cannot start at all or its
environment fails the proof (the first failing test says what broke).
"""
from __future__ import annotations

import fnmatch
import json
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

from ..course import NOTEBOOKS, SOLUTIONS, assignments, course_root
from ..kit import KitError, build_kit
from .autograded import exchange_secrets
from .choice import candidates
from .gradebook import GradebookError, Recorder
from .job import GRADER_WALL, Job, JobResult, font_cache, over_limit, run_job
from .late import LateConfigError, LatePolicy
from .outputs import Outputs
from .report import OutError, Progress, check_out, printable, summary, write_grades
from .sandbox import NO_SANDBOX, Limits, Sandbox, SandboxUnavailable, detect
from .submissions import SubmissionsError, read_submissions, select
from .times import doubt_the_future


class CourseError(RuntimeError):
    pass


class BrokenEnvironment(RuntimeError):
    """The source notebook did not earn full marks, or the release did not earn 0."""


@dataclass
class Assignment:
    name: str
    notebooks: dict[str, tuple[dict, dict]] = field(default_factory=dict)  # file -> (source, release)
    files: dict[str, bytes] = field(default_factory=dict)  # the source folder's other files


def _load_json(path: Path) -> dict:
    """A notebook, its cells' sources as strings (JupyterLab saves them as lists of lines)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb.get("cells", []):
        if isinstance(cell.get("source"), list):
            cell["source"] = "".join(cell["source"])
    return nb


def load_course(root: Path, ignore: list[str]) -> dict[str, Assignment]:
    """Every assignment of the course, discovered from ``solutions/``."""
    names = assignments(root) if (root / SOLUTIONS).is_dir() else []
    if not names:
        raise CourseError(f"no assignments found in {root / SOLUTIONS}")
    course = {}
    for name in names:
        src_dir = root / SOLUTIONS / name
        asg = Assignment(name)
        for src in sorted(src_dir.glob("*.ipynb")):
            rel = root / NOTEBOOKS / name / src.name
            if not rel.is_file():
                raise CourseError(f"{rel} is missing: run `python -m grader release` first")
            asg.notebooks[src.name] = (_load_json(src), _load_json(rel))
        for path in sorted(src_dir.rglob("*")):
            parts = path.relative_to(src_dir).parts
            if path.is_file() and path.suffix != ".ipynb" and not any(
                    fnmatch.fnmatch(p, pat) for p in parts for pat in ignore):
                asg.files["/".join(parts)] = path.read_bytes()
        course[name] = asg
    return course


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _worker_start(parent: int, channel) -> None:
    """A pool's worker process, at its start: it dies with the process that started it
    (:func:`_orphan_watch`), and its watchdog says on ``channel`` which job it was killed
    over (``grader.grading.watchdog``)."""
    from .watchdog import WATCH

    _orphan_watch(parent)
    WATCH.channel = channel


def _orphan_watch(parent: int) -> None:
    """In a pool's worker process: ask the kernel to kill it (SIGKILL) when the process that
    started it, ``parent``, dies, so that a service killed with SIGKILL leaves no worker
    behind (nor its kernels: bubblewrap's die with it). Linux only; elsewhere a no-op."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # it died before the request was made
        os._exit(1)


def _stop(pool: ProcessPoolExecutor) -> None:
    """Stop at once: cancel what has not started and end the workers (their kernels die
    with them)."""
    pool.shutdown(wait=False, cancel_futures=True)
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.terminate()


class PoolRunner:
    """A pool of worker processes that stays up between batches, so that a worker's spare
    kernel (``grader.grading.job``) is warm for the next job. ``grade`` runs one batch on
    it; ``serve`` runs one batch per round of submissions."""

    def __init__(self, workers: int):
        self.workers = workers
        self.pool: ProcessPoolExecutor | None = None
        self.context = multiprocessing.get_context("spawn")
        self.killed = self.context.SimpleQueue()  # the jobs a worker's watchdog killed it over

    def run(self, jobs: list[Job], on_result, meanwhile=None) -> None:
        """Run every job; ``on_result(index, JobResult)`` in this process as each one ends.
        ``meanwhile()`` runs here once the workers have started. A worker process that dies
        takes only its own job with it: a job its watchdog killed it over is not graded
        (``grader.grading.job.over_limit``) and the others go on at no cost; otherwise
        each job is tried twice."""
        pending = dict(enumerate(jobs))
        tries = defaultdict(int)
        while pending:
            if self.pool is None:
                self.pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=self.context,
                                                initializer=_worker_start,
                                                initargs=(os.getpid(), self.killed))
            pool = self.pool
            try:
                # One assignment after another: a worker's zygote (grader.grading.zygote)
                # serves the kernels of one notebook's imports.
                order = sorted(pending, key=lambda i: (pending[i].assignment, pending[i].notebook, i))
                futures = {pool.submit(run_job, pending[i]): i for i in order}
                if meanwhile is not None:
                    meanwhile()
                    meanwhile = None
                for future in as_completed(futures):
                    i = futures[future]
                    try:
                        result = future.result()
                    except BrokenProcessPool:
                        raise
                    except Exception as exc:  # noqa: BLE001 (pickling and the like)
                        job = pending[i]
                        result = JobResult(job.student, job.assignment, job.notebook, "failed",
                                           error=f"{type(exc).__name__}: {exc}")
                    del pending[i]
                    on_result(i, result)
            except BrokenProcessPool:
                self.pool = None
                pool.shutdown(wait=False, cancel_futures=True)
                over = self._killed_over()
                if over:  # the jobs it was killed over are not graded; the rest start again
                    for i in [i for i in pending if pending[i].key in over]:
                        on_result(i, over_limit(pending.pop(i)))
                    continue
                for i in list(pending):  # a death nobody explained
                    tries[i] += 1
                    if tries[i] >= 2:
                        job = pending.pop(i)
                        on_result(i, JobResult(job.student, job.assignment, job.notebook, "failed",
                                               error="the worker process grading it died twice"))
            except BaseException:
                self.pool = None
                _stop(pool)
                raise

    def _killed_over(self) -> set[tuple]:
        """The keys of the jobs a worker's watchdog killed it over since the last look."""
        found = set()
        while not self.killed.empty():
            found.add(tuple(self.killed.get()))
        return found

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown()
            self.pool = None
        self.killed.close()


def _run_pool(jobs: list[Job], workers: int, on_result, meanwhile=None) -> None:
    """One batch on a pool of ``min(workers, len(jobs))`` processes, closed after it."""
    runner = PoolRunner(min(workers, max(len(jobs), 1)))
    try:
        runner.run(jobs, on_result, meanwhile)
    finally:
        runner.close()


def _db_path(db_url: str) -> list[Path]:
    if db_url.startswith("sqlite:///"):
        path = Path(db_url[len("sqlite:///"):])
        return [path, path.with_name(path.name + "-journal")]
    return []


def grade(submissions: Path, out: Path, *, jobs: int | None = None, limits: Limits | None = None,
          sandbox: str = "bwrap", db_url: str | None = None, stream=None, err=None,
          students: list[str] | None = None, only: list[str] | None = None,
          scheduler: str | None = None, grader_wall: float = GRADER_WALL) -> int:
    """Grade every submission under ``submissions`` (of ``students``, for the assignments
    ``only``; None: all) into ``out``; return the exit status. With ``scheduler`` (a Dask
    scheduler's address, or "local" for a LocalCluster here) the jobs run on that cluster
    (:mod:`grader.grading.cluster`); everything else runs here. ``grader_wall``: the
    seconds of the grading process's own work on one notebook (``grader.grading.watchdog``)."""
    stream, err = stream or sys.stdout, err or sys.stderr
    limits = limits or Limits()
    started = time.monotonic()
    root = course_root()
    try:
        recorder = Recorder(root, db_url)
        course = load_course(root, recorder.ignore)
        late = LatePolicy(recorder.config)
        look: list[str] = []  # work not graded at all, repeated under "Needs a look"
        subs, warnings = read_submissions(submissions, list(course), [*recorder.ignore, "__MACOSX"], look)
        secrets = exchange_secrets(subs)  # the whole class: a copied secret is seen even in a regrade
        subs = select(subs, students, only, list(course))
        doubt_the_future(subs, time.time())
        check_out(out, root, submissions)
    except (CourseError, SubmissionsError, GradebookError, LateConfigError, OutError) as exc:
        print(f"grade: {exc}", file=err)
        return 2
    for warning in warnings:
        print(printable(f"warning: {warning}"), file=stream)

    scratch = Path(tempfile.mkdtemp(prefix="grade-"))
    os.chmod(scratch, 0o711)
    try:
        try:
            kit = build_kit(root, scratch / "kit")
        except KitError as exc:
            print(f"grade: cannot build the student kit the sandbox holds: {exc}", file=err)
            return 2
        hidden = [root, submissions.resolve(), out.resolve(), *_db_path(recorder.db_url)]
        remote = scheduler not in (None, "local")  # then each worker detects its own sandbox
        try:
            box = Sandbox(sandbox) if remote else detect(sandbox, kit, hidden, scratch, limits)
        except SandboxUnavailable as exc:
            print(f"grade: refusing to run submissions without a sandbox: {exc}.\n{NO_SANDBOX}",
                  file=err)
            return 2
        if not remote:
            print(f"Sandbox: {box.describe()}.", file=stream)
        outputs = Outputs(out, recorder, late, secrets, course, box.kind)
        if scheduler:
            from .cluster import ClusterError, open_cluster

            try:
                cluster = open_cluster(scheduler, sandbox, root, jobs or default_jobs(), stream)
            except ClusterError as exc:
                print(f"grade: {exc}", file=err)
                return 2
        try:
            return _grade_all(course, subs, out, box, limits, recorder, scratch,
                              cluster.threads if scheduler else jobs or default_jobs(),
                              started, stream, err, str(kit), outputs,
                              cluster.run if scheduler else None, look, grader_wall)
        finally:
            if scheduler:
                cluster.close()
    finally:
        recorder.close()
        shutil.rmtree(scratch, ignore_errors=True)


def proof_jobs(course: dict[str, Assignment], names, make) -> list[Job]:
    """For each assignment's notebook: the environment proof, its source graded as a
    submission and then its release (``grader.grading.job.proof_plan``)."""
    jobs = []
    for name in sorted(names):
        for filename, (source, release) in course[name].notebooks.items():
            job = make("(proof)", name, filename, source, release,
                       {filename: json.dumps(source).encode()}, filename, [])
            job.proof = True
            jobs.append(job)
    return jobs


def proof_problem(results: list[JobResult]) -> str:
    """Why the proof failed (the first failing test's message), or ""."""
    from .job import RELEASED

    for res in results:
        if res.status != "graded":  # the grader's error, or why it could not be graded
            why = res.error or "\n".join(res.notes[-1:])
            return f"{res.assignment}: grading its source notebook failed: {why}"
        for test in res.tests:
            released = test.id.startswith(RELEASED)
            if test.points != (0 if released else test.max):
                what = "the released notebook must earn 0" if released else \
                    "the source notebook must earn full marks"
                return (f"{res.assignment}: {what}, but its test {test.id.removeprefix(RELEASED)} "
                        f"got {test.points:g}/{test.max:g} ({test.status}):\n{test.message}")
    return ""


def job_maker(course: dict[str, Assignment], box: Sandbox, limits: Limits, scratch: Path, kit: str,
              grader_wall: float = GRADER_WALL):
    """``make(student, assignment, notebook, source, release, files, submitted_as, notes)``:
    a :class:`Job` with this run's sandbox, limits, scratch folder, fonts and kit."""
    fonts = font_cache()

    def make(student, assignment, name, source, release, files, submitted_as, notes):
        return Job(student, assignment, name, source, release, files, submitted_as,
                   course[assignment].files, box, limits, str(scratch), fonts, notes, kit,
                   grader_wall=grader_wall)
    return make


def submission_jobs(course: dict[str, Assignment], subs, make, jobs: list[Job]) -> dict:
    """Append a job per notebook of each submission to ``jobs``; return, per submission's
    key, the indices of its jobs."""
    groups = defaultdict(list)
    for sub in subs:
        asg = course[sub.assignment]
        for name, (source, release) in asg.notebooks.items():
            groups[sub.key].append(len(jobs))
            job = make(sub.student, sub.assignment, name, source, release, sub.files, None, list(sub.notes))
            job.candidates = candidates(sub.files, name, asg.notebooks)
            jobs.append(job)
    return groups


def _grade_all(course, subs, out, box, limits, recorder, scratch, workers, started, stream, err,
               kit: str, outputs: Outputs, run=None, look: list[str] | None = None,
               grader_wall: float = GRADER_WALL) -> int:
    make = job_maker(course, box, limits, scratch, kit, grader_wall)
    proof = proof_jobs(course, {s.assignment for s in subs}, make)
    jobs = list(proof)
    groups = submission_jobs(course, subs, make, jobs)
    by_key = {sub.key: sub for sub in subs}
    results: dict[int, JobResult] = {}
    records, problems = [], []
    print(f"Grading {len(subs)} submission(s), {len(jobs)} notebook(s), {workers} at a time.", file=stream)
    progress = Progress(len(subs), stream)

    def finish(key) -> None:
        record, trouble = outputs.finish(by_key[key], [results[i] for i in groups[key]])
        records.append(record)
        problems.extend(trouble)
        progress.finished(record)

    proven: list[JobResult] = []
    waiting: list[tuple] = []  # submissions finished before the proof was complete

    def on_result(i: int, result: JobResult) -> None:
        results[i] = result
        if i < len(proof):
            proven.append(result)
            if len(proven) == len(proof):
                problem = proof_problem(proven)
                if problem:
                    raise BrokenEnvironment(problem)
                for key in waiting:
                    finish(key)
                waiting.clear()
            return
        key = (result.student, result.assignment)
        if all(j in results for j in groups[key]):
            if len(proven) < len(proof):
                waiting.append(key)
            else:
                finish(key)

    def prepare() -> None:  # while the first notebooks run
        recorder.prepare({name: course[name] for name in sorted({s.assignment for s in subs})})
        recorder.open()

    try:
        if run is None:
            _run_pool(jobs, workers, on_result, prepare)
        else:  # a cluster's
            run(jobs, on_result, prepare)
    except BrokenEnvironment as exc:
        progress.close()
        print(f"grade: the grading environment failed its proof, so nobody was graded.\n{exc}",
              file=err)
        return 2
    except GradebookError as exc:
        progress.close()
        print(f"grade: {exc}", file=err)
        return 2
    except KeyboardInterrupt:
        progress.close()
        print(f"\ngrade: interrupted; {len(records)} submission(s) were graded and recorded.", file=err)
        return 130
    finally:
        if records:
            problem = write_grades(out, recorder, course)
            if problem:
                problems.append(problem)
    progress.close()
    elapsed = time.monotonic() - started
    print(f"Graded {len(records) - sum(r['status'] == 'failed' for r in records)} of {len(subs)} "
          f"submission(s) in {elapsed:.1f} s ({elapsed / max(len(subs), 1):.2f} s per submission, "
          f"{workers} parallel jobs).", file=stream)
    print(f"Wrote {out / 'grades.csv'} (from the gradebook, {recorder.db_url}), {out / 'results'}/, "
          f"{out / 'feedback'}/ and the autograded folders in {recorder.autograded_root}/.",
          file=stream)
    print(summary(records, recorder, sorted({s.assignment for s in subs}), look or []), file=stream, end="")
    if problems:
        print("grade: some submissions were not graded:", file=err)
        for line in problems:
            print(printable(f"  - {line}"), file=err)
        return 1
    return 0
