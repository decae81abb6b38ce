"""A pool of worker processes on this machine that runs grading jobs
(:func:`grader.grading.notebook.job.run_job`), and stays up between batches so that a worker's spare
kernel is warm for the next job. A Dask cluster (:mod:`grader.grading.classroom.cluster`) is the
other runner; a :class:`~grader.grading.classroom.session.GradingSession` holds one or the other.
"""
from __future__ import annotations

import multiprocessing
import os
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor, as_completed
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
    """A pool of worker processes that stays up between batches, so that a worker's spare
    kernel (``grader.grading.notebook.job``) is warm for the next job. ``grade`` runs one batch on
    it; ``serve`` one batch per round of submissions."""

    def __init__(self, workers: int):
        self.workers = workers
        self.pool: ProcessPoolExecutor | None = None
        self.context = multiprocessing.get_context("spawn")
        self.killed = self.context.SimpleQueue()  # the jobs a worker's watchdog killed it over

    def run(self, jobs: list[Job], on_result, meanwhile=None) -> None:
        """Run every job; ``on_result(index, JobResult)`` in this process as each one ends.
        ``meanwhile()`` runs here once the workers have started. A worker process that dies
        takes only its own job with it: a job its watchdog killed it over is not graded
        (``grader.grading.notebook.job.over_limit``) and the others go on at no cost; otherwise
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
                # One assignment after another: a worker's zygote (grader.grading.notebook.zygote)
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
                        result = JobResult(job.student, job.assignment, job.notebook, JobStatus.FAILED,
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
                        on_result(i, JobResult(job.student, job.assignment, job.notebook, JobStatus.FAILED,
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
