"""The driver's side of grading on a Dask distributed cluster
(``python -m grader grade SUBMISSIONS --out DIR --scheduler tcp://HOST:8786``).

The driver reads the course and the submissions, proves the environment and writes every
output, exactly as without a cluster (:mod:`grader.grading.classroom.batch`); only the jobs run
elsewhere. Each job goes to the cluster as plain data and comes back as plain data
(:func:`grader.grading.classroom.worker.job_data`, :func:`~grader.grading.classroom.worker.result_data`); on
the worker it is graded by :func:`grader.grading.notebook.job.run_job`, the function the local
pool runs.

Scheduling is Dask's: a job asks for the resources of the driver's course version (and of
bubblewrap, unless ``--sandbox none``), so the scheduler places it only on a worker that
offers them; a worker that dies takes no job with it, because the scheduler runs its jobs
again elsewhere (up to ``distributed.scheduler.allowed-failures`` deaths per job, after
which the job fails with ``KilledWorker``); a job whose task raised is retried once
(``retries=1``). The driver counts each job exactly once: results are keyed by job, and a
second result for the same job is ignored (:class:`Once`).

The driver keeps :data:`WINDOW` jobs per worker thread on the cluster at a time (the
threads counted again every :data:`RECOUNT` seconds, as workers join and leave), so that the
scheduler holds a few notebooks per worker, not the whole class.
"""
from __future__ import annotations

import logging
import os
import time
import uuid
from dataclasses import dataclass, field

from ..notebook.job import Job, JobResult
from .worker import (
    BWRAP_RESOURCE,
    SANDBOX_ENV,
    CourseVersion,
    NotAGradingWorker,
    describe,
    grade_remote,
    job_data,
    mismatch,
    result_from,
)

WINDOW = 3  # jobs on the cluster per accepted worker thread
CONNECT_TIMEOUT = 20.0  # seconds to reach the scheduler
WORKER_WAIT = 30.0  # seconds to wait for a first worker to join
RECOUNT = 10.0  # seconds between counts of the workers that may grade (they come and go)


class ClusterError(RuntimeError):
    """The cluster cannot grade this course: unreachable, or no worker accepted."""


def resources_for(version: CourseVersion, sandbox: str) -> dict[str, int]:
    """What one job needs of a worker: this course version and, unless ``--sandbox none``,
    bubblewrap."""
    need = {version.resource: 1}
    if sandbox == "bwrap":
        need[BWRAP_RESOURCE] = 1
    return need


@dataclass
class WorkerVerdict:
    accepted: dict[str, int] = field(default_factory=dict)  # address -> threads
    refused: list[str] = field(default_factory=list)  # one message per refused worker
    sandboxes: set[str] = field(default_factory=set)  # the accepted workers' descriptions


def judge_workers(infos: dict, workers: dict, version: CourseVersion, sandbox: str) -> WorkerVerdict:
    """Which workers may grade for this driver. ``infos``: address -> what
    :func:`grader.grading.classroom.worker.describe` returned there (or the exception it raised);
    ``workers``: address -> the scheduler's view (``resources``, ``nthreads``)."""
    verdict = WorkerVerdict()
    need = resources_for(version, sandbox)
    for address in sorted(workers):
        info = infos.get(address, NotAGradingWorker("it did not answer"))
        where = f"worker {address}"
        if isinstance(info, BaseException):
            why = str(info) if isinstance(info, NotAGradingWorker) else \
                f"{type(info).__name__}: {info} (is the course installed there? run `make setup`)"
            verdict.refused.append(f"{where} cannot grade: {why}")
            continue
        where += f" ({info['host']})"
        problem = mismatch(where, CourseVersion(info["kit"], info["reference"]), version)
        if problem:
            verdict.refused.append(problem)
        elif sandbox == "bwrap" and info["sandbox"] != "bwrap":
            verdict.refused.append(f"{where} runs submissions without bubblewrap: {info['describe']}")
        elif any(workers[address].get("resources", {}).get(r, 0) < n for r, n in need.items()):
            verdict.refused.append(f"{where} does not offer the resources {sorted(need)} that route "
                                   "jobs to it: start it with `python -m grader worker SCHEDULER`")
        else:
            verdict.accepted[address] = int(workers[address].get("nthreads", 1))
            verdict.sandboxes.add(info["describe"])
    return verdict


class Once:
    """``on_result(index, result)`` for each job once: a second result for a job that was
    already counted (a job run twice because its worker seemed lost) is ignored."""

    def __init__(self, on_result):
        self.on_result, self.seen, self.ignored = on_result, set(), 0

    def __call__(self, index: int, result: JobResult) -> bool:
        if index in self.seen:
            self.ignored += 1
            return False
        self.seen.add(index)
        self.on_result(index, result)
        return True


def failed(job: Job, why: str) -> JobResult:
    return JobResult(job.student, job.assignment, job.notebook, "failed", error=why)


class Cluster:
    """A connection to a Dask scheduler whose accepted workers grade this course."""

    def __init__(self, client, version: CourseVersion, sandbox: str, verdict: WorkerVerdict, local=None):
        self.client, self.version, self.sandbox, self.verdict = client, version, sandbox, verdict
        self.local = local  # a LocalCluster this driver started, if any

        self.threads = sum(verdict.accepted.values())

    def capacity(self) -> int:
        """Threads of the workers now in the cluster that offer what a job needs."""
        need = resources_for(self.version, self.sandbox)
        return sum(w.get("nthreads", 1) for w in self.client.scheduler_info()["workers"].values()
                   if all(w.get("resources", {}).get(r, 0) >= n for r, n in need.items()))

    def describe(self) -> str:
        n = len(self.verdict.accepted)
        where = "a LocalCluster on this machine" if self.local is not None else \
            f"the Dask cluster at {self.client.scheduler.address}"
        try:
            dashboard = f"dashboard {self.client.dashboard_link}"
        except KeyError:
            dashboard = "the scheduler serves no dashboard"
        return (f"{where}: {n} worker(s) of this course version ({self.version}), "
                f"{self.threads} thread(s); {dashboard}")

    def run(self, jobs: list[Job], on_result, meanwhile=None) -> None:
        """Grade ``jobs`` on the cluster; ``on_result(index, JobResult)`` here as each ends,
        once per job. ``meanwhile()`` runs once the first jobs are on their way."""
        feed = self.feed()
        deliver = Once(on_result)
        try:
            for i, job in enumerate(jobs):
                feed.add(i, job)
            if meanwhile is not None:
                meanwhile()
            while feed.pending:
                for i, result in feed.arrived(None):
                    deliver(i, result)
        except BaseException:
            feed.cancel()
            raise

    def feed(self) -> ClusterFeed:
        """A feed of jobs into the cluster: added one by one, their results collected as
        they end."""
        return ClusterFeed(self)

    def close(self) -> None:
        self.client.close()
        if self.local is not None:
            self.local.close()


def connect(address: str, sandbox: str, version: CourseVersion, jobs: int = 1) -> Cluster:
    """Connect to the scheduler at ``address`` (or, for ``"local"``, start a LocalCluster of
    ``jobs`` worker processes here) and keep the workers that may grade this course.
    Raises :class:`ClusterError` if none may, naming each refused worker and why."""
    from distributed import Client, LocalCluster

    from . import worker as worker_module

    local = None
    if address == "local":
        os.environ[SANDBOX_ENV] = sandbox  # the worker processes inherit it
        local = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                             resources=resources_for(version, sandbox), dashboard_address=":0",
                             preload=[worker_module.__name__], silence_logs=logging.ERROR)
        address = local.scheduler_address
    try:
        client = Client(address, timeout=f"{CONNECT_TIMEOUT}s", set_as_default=False)
    except (OSError, TimeoutError) as exc:
        if local is not None:
            local.close()
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    try:
        verdict = _workers(client, version, sandbox)
    except BaseException:
        client.close()
        if local is not None:
            local.close()
        raise
    return Cluster(client, version, sandbox, verdict, local)


def _workers(client, version: CourseVersion, sandbox: str) -> WorkerVerdict:
    deadline = time.monotonic() + WORKER_WAIT
    while not client.scheduler_info()["workers"] and time.monotonic() < deadline:
        time.sleep(0.5)
    workers = client.scheduler_info()["workers"]
    if not workers:
        raise ClusterError(f"no worker joined the scheduler in {WORKER_WAIT:g} s: start one on "
                           "each grading machine with `python -m grader worker SCHEDULER`")
    infos = client.run(describe, on_error="return")
    verdict = judge_workers(infos, workers, version, sandbox)
    if not verdict.accepted:
        raise ClusterError("no worker of the cluster may grade this course:\n"
                           + "\n".join(f"  - {line}" for line in verdict.refused))
    return verdict


def open_cluster(address: str, sandbox: str, root, jobs: int, stream) -> Cluster:
    """:func:`connect` for ``grade``, which says what it connected to and whom it refused."""
    from .worker import this_version

    cluster = connect(address, sandbox, this_version(root), jobs)
    print(f"Cluster: {cluster.describe()}.", file=stream)
    if cluster.local is None:
        print(f"Sandbox: on each worker, {'; '.join(sorted(cluster.verdict.sandboxes))}.", file=stream)
    for line in cluster.verdict.refused:
        print(f"warning: refused {line}", file=stream)
    return cluster


class ClusterFeed:
    """Jobs handed to a :class:`Cluster` one by one (``add``), under keys of the caller's,
    and their results as they end (``arrived``). :data:`WINDOW` jobs per thread of the
    workers that may grade them are on the cluster at a time (the threads counted again
    every :data:`RECOUNT` seconds); the rest wait here, in the order they came."""

    POLL = 0.05  # seconds between looks at the futures while waiting

    def __init__(self, cluster: Cluster):
        self.cluster = cluster
        self.run_id = uuid.uuid4().hex[:8]
        self.need = resources_for(cluster.version, cluster.sandbox)
        self.version = (cluster.version.kit, cluster.version.reference)
        self.jobs: dict = {}  # key: job, until its result is taken
        self.queue: list = []  # keys not yet on the cluster
        self.futures: dict = {}  # future: key
        self.count = 0
        self.checked = time.monotonic()

    @property
    def pending(self) -> int:
        return len(self.jobs)

    def add(self, key, job: Job) -> None:
        if key in self.jobs:
            raise KeyError(f"a job under the key {key!r} is already in this feed")
        self.jobs[key] = job
        self.queue.append(key)
        self._fill()

    def _fill(self) -> None:
        if time.monotonic() - self.checked > RECOUNT:  # workers may have joined or left
            self.checked = time.monotonic()
            self.cluster.threads = self.cluster.capacity() or self.cluster.threads
        while self.queue and len(self.futures) < max(WINDOW * self.cluster.threads, 1):
            key = self.queue.pop(0)
            job = self.jobs[key]
            self.count += 1
            future = self.cluster.client.submit(
                grade_remote, job_data(job), self.version, key=f"grade-{self.run_id}-{self.count}",
                resources=self.need, retries=1, priority=1 if job.proof else 0)
            self.futures[future] = key

    def arrived(self, timeout: float | None) -> list[tuple[object, JobResult]]:
        """The results that have arrived, waiting up to ``timeout`` seconds (None: until
        one does) when none has."""
        from distributed import KilledWorker

        end = None if timeout is None else time.monotonic() + timeout
        while True:
            done = [f for f in self.futures if f.done()]
            if done or not self.futures or (end is not None and time.monotonic() >= end):
                break
            time.sleep(self.POLL)
        out = []
        for future in done:
            key = self.futures.pop(future)
            try:
                result = result_from(future.result())
            except KilledWorker as exc:
                result = failed(self.jobs[key], f"every worker that took it died ({exc})")
            except Exception as exc:  # noqa: BLE001 (a task that raised twice, a lost cluster)
                result = failed(self.jobs[key], f"{type(exc).__name__}: {exc}")
            future.release()
            del self.jobs[key]
            out.append((key, result))
        self._fill()
        return out

    def cancel(self) -> None:
        self.cluster.client.cancel(list(self.futures))
        self.futures.clear()
        self.queue.clear()
        self.jobs.clear()
