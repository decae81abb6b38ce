"""A pool of worker processes on this machine that runs grading jobs
(:func:`grader.grading.notebook.job.run_job`), and stays up between batches so that a worker's spare
kernel is warm for the next job. A Dask cluster (:mod:`grader.grading.classroom.cluster`) is the
other runner; a :class:`~grader.grading.classroom.session.GradingSession` holds one or the other.
"""
from __future__ import annotations

import multiprocessing
import os
from collections import defaultdict
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from ..notebook.job import Job, JobResult, over_limit, run_job
from ..notebook.status import JobStatus


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _worker_start(parent: int, channel) -> None:
    """A pool's worker process, at its start: it dies with the process that started it
    (:func:`_orphan_watch`), and its watchdog says on ``channel`` which job it was killed
    over (``grader.grading.notebook.watchdog``)."""
    from ..notebook.watchdog import WATCH

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
    """A pool of worker processes that stays up between batches, so that a worker's zygote
    (``grader.grading.notebook.zygote``) is warm for the next job. ``grade`` runs one batch
    on it (:meth:`run`); ``serve`` feeds it each submission as it arrives (:meth:`feed`)."""

    def __init__(self, workers: int):
        self.workers = workers
        self.pool: ProcessPoolExecutor | None = None
        self.context = multiprocessing.get_context("spawn")
        self.killed = self.context.SimpleQueue()  # the jobs a worker's watchdog killed it over
        self.over: set[tuple] = set()  # read from ``killed``, until the feed of the job takes it

    def run(self, jobs: list[Job], on_result, meanwhile=None) -> None:
        """Run every job; ``on_result(index, JobResult)`` in this process as each one ends.
        ``meanwhile()`` runs here once the workers have started. One assignment's notebook
        after another: a worker's zygote serves the kernels of one notebook's imports."""
        feed = self.feed()
        try:
            for i in sorted(range(len(jobs)), key=lambda i: (jobs[i].assignment, jobs[i].notebook, i)):
                feed.add(i, jobs[i])
            if meanwhile is not None:
                meanwhile()
            while feed.pending:
                for i, result in feed.arrived(None):
                    on_result(i, result)
        except BaseException:
            feed.cancel()
            raise

    def feed(self) -> PoolFeed:
        """A feed of jobs into this pool: jobs are added one by one, and their results
        collected as they end."""
        return PoolFeed(self)

    def _pool(self) -> ProcessPoolExecutor:
        if self.pool is None:
            self.pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=self.context,
                                            initializer=_worker_start,
                                            initargs=(os.getpid(), self.killed))
        return self.pool

    def _broken(self, pool: ProcessPoolExecutor) -> None:
        """``pool`` broke (a worker died): the next job starts a new one."""
        if self.pool is pool:
            self.pool = None
            pool.shutdown(wait=False, cancel_futures=True)
        while not self.killed.empty():
            self.over.add(tuple(self.killed.get()))

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown()
            self.pool = None
        self.killed.close()


class PoolFeed:
    """Jobs handed to a :class:`PoolRunner` one by one (``add``), under keys of the
    caller's, and their results as they end (``arrived``). A worker process that dies takes
    only its own job with it: a job its watchdog killed it over is not graded
    (``grader.grading.notebook.job.over_limit``) and the others start again at no cost;
    otherwise each job is tried twice."""

    def __init__(self, runner: PoolRunner):
        self.runner = runner
        self.jobs: dict = {}  # key: job, until its result is taken
        self.futures: dict[Future, tuple[object, ProcessPoolExecutor]] = {}  # key, and its pool
        self.tries: dict = defaultdict(int)

    @property
    def pending(self) -> int:
        return len(self.jobs)

    def add(self, key, job: Job) -> None:
        if key in self.jobs:
            raise KeyError(f"a job under the key {key!r} is already in this feed")
        self.jobs[key] = job
        self._submit(key)

    def _submit(self, key) -> None:
        pool = self.runner._pool()
        self.futures[pool.submit(run_job, self.jobs[key])] = key, pool

    def arrived(self, timeout: float | None) -> list[tuple[object, JobResult]]:
        """The results that have arrived, waiting up to ``timeout`` seconds (None: until
        one does) when none has; each job's once."""
        if not self.futures:
            return []
        done, _ = wait(self.futures, timeout, return_when=FIRST_COMPLETED)
        out, broken = [], None
        for future in done:
            key, pool = self.futures.pop(future)
            try:
                out.append((key, future.result()))
            except BrokenProcessPool:
                broken = key
                self.futures[future] = key, pool
            except Exception as exc:  # noqa: BLE001 (pickling and the like)
                job = self.jobs[key]
                out.append((key, JobResult(job.student, job.assignment, job.notebook, JobStatus.FAILED,
                                           error=f"{type(exc).__name__}: {exc}")))
        if broken is not None:
            out += self._restart()
        for key, _ in out:
            del self.jobs[key]
        return out

    def _restart(self) -> list[tuple[object, JobResult]]:
        """After a worker died: every job of this feed still out ends, or starts again."""
        wait(self.futures)  # a broken pool fails every future it holds, at once
        out, again = [], []
        for future, (key, pool) in list(self.futures.items()):
            del self.futures[future]
            try:
                out.append((key, future.result()))
                continue
            except BrokenProcessPool:
                self.runner._broken(pool)
            except Exception as exc:  # noqa: BLE001
                job = self.jobs[key]
                out.append((key, JobResult(job.student, job.assignment, job.notebook, JobStatus.FAILED,
                                           error=f"{type(exc).__name__}: {exc}")))
                continue
            again.append(key)
        explained = bool(self.runner.over)  # a watchdog said which job it killed a worker over
        over = {k for k in again if self.jobs[k].key in self.runner.over}
        for key in over:  # the jobs it was killed over are not graded; the rest start again
            self.runner.over.discard(self.jobs[key].key)
            out.append((key, over_limit(self.jobs[key])))
        for key in (k for k in again if k not in over):
            if not explained:
                self.tries[key] += 1
            if self.tries[key] >= 2:
                job = self.jobs[key]
                out.append((key, JobResult(job.student, job.assignment, job.notebook, JobStatus.FAILED,
                                           error="the worker process grading it died twice")))
            else:
                self._submit(key)
        return out

    def cancel(self) -> None:
        """Stop at once: what has not started is cancelled and the workers end (their
        kernels die with them)."""
        pool = self.runner.pool
        self.runner.pool = None
        self.futures.clear()
        self.jobs.clear()
        if pool is not None:
            _stop(pool)
