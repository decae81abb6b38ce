"""Grading on a Dask cluster (``grade --scheduler``), against a real ``dask scheduler`` and
real ``dask worker`` processes started here from the venv, on random free ports.

One module fixture runs, in order:

1. a scheduler, and a worker of another course version (its released notebook differs);
   a grade with only that worker is refused, naming both hashes;
2. two workers of this course version join; a small corpus of lesson 01 (honest, empty,
   a misconception, a submission that kills its kernel) is graded on the cluster, with
   the other-version worker still there;
3. the same corpus is graded by the local pool;
4. it is graded on the cluster once more, and one of the two workers is killed (its whole
   process group) while it holds jobs.

Every process is stopped at the end, whatever happened. The checks that need no cluster
(which workers are accepted, a result counted once, a job refused on the worker) are
plain unit tests below.
"""
from __future__ import annotations

import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from attacks_structure import structure_samples
from conftest import ROOT
from grading_corpus import (
    course_copy,
    Expect,
    Lesson,
    Sample,
    kernel_exit_sample,
    misconception_samples,
    sandboxed,
    write,
)

A = "01_matmul_views"
STARTUP = 120  # seconds for a scheduler or a worker to come up on a busy machine


# ----------------------------------------------------------------------- no cluster needed

def _version(kit="k" * 64, reference="r" * 64):
    from grader.grading.classroom.worker import CourseVersion

    return CourseVersion(kit, reference)


def _info(version, sandbox="bwrap"):
    return {"kit": version.kit, "reference": version.reference, "sandbox": sandbox,
            "describe": f"{sandbox} here", "host": "lab-3", "pid": 1, "jobs": 0}


def _offers(version, bwrap=True, nthreads=1):
    from grader.grading.classroom.cluster import resources_for

    return {"nthreads": nthreads, "resources": resources_for(version, "bwrap" if bwrap else "none")}


def test_only_workers_of_the_same_course_version_with_the_sandbox_are_accepted():
    from grader.grading.classroom.cluster import judge_workers
    from grader.grading.classroom.worker import NotAGradingWorker

    ours = _version()
    other_kit, other_ref = _version(kit="a" * 64), _version(reference="b" * 64)
    infos = {"tcp://good:1": _info(ours), "tcp://kit:1": _info(other_kit),
             "tcp://ref:1": _info(other_ref), "tcp://nobwrap:1": _info(ours, "none"),
             "tcp://plain:1": NotAGradingWorker("not started with `python -m grader worker`"),
             "tcp://broken:1": ModuleNotFoundError("No module named 'grader'"),
             "tcp://noresources:1": _info(ours)}
    workers = {"tcp://good:1": _offers(ours, nthreads=2), "tcp://kit:1": _offers(other_kit),
               "tcp://ref:1": _offers(other_ref), "tcp://nobwrap:1": _offers(ours, bwrap=False),
               "tcp://plain:1": {"nthreads": 1}, "tcp://broken:1": {"nthreads": 1},
               "tcp://noresources:1": {"nthreads": 1, "resources": {}},
               "tcp://silent:1": _offers(ours)}
    verdict = judge_workers(infos, workers, ours, "bwrap")
    assert verdict.accepted == {"tcp://good:1": 2}
    assert len(verdict.refused) == 7
    text = "\n".join(verdict.refused)
    assert f"kit hash {'a' * 12} (the driver's: {'k' * 12})" in text
    assert f"reference hash {'b' * 12} (the driver's: {'r' * 12})" in text
    assert "make setup" in text and "without bubblewrap" in text
    assert "is the course installed there" in text and "not started with" in text
    assert "does not offer the resources" in text and "did not answer" in text
    for address in set(workers) - {"tcp://good:1"}:
        assert sum(address in line for line in verdict.refused) == 1, address
    # Without bubblewrap required, the worker that has none may grade.
    assert "tcp://nobwrap:1" in judge_workers(infos, workers, ours, "none").accepted


def test_the_mismatch_message_names_both_hashes_and_what_to_do():
    from grader.grading.classroom.worker import mismatch

    ours = _version()
    assert mismatch("worker x", ours, ours) == ""
    text = mismatch("worker x", _version(kit="a" * 64, reference="b" * 64), ours)
    assert "kit hash aaaaaaaaaaaa (the driver's: kkkkkkkkkkkk)" in text
    assert "reference hash bbbbbbbbbbbb (the driver's: rrrrrrrrrrrr)" in text
    assert "check out the driver's commit" in text and "make setup" in text


def test_a_result_is_counted_once():
    from grader.grading.classroom.cluster import Once
    from grader.grading.notebook.job import JobResult

    got = []
    once = Once(lambda i, r: got.append((i, r.student)))
    result = JobResult("alice", A, f"{A}.ipynb", "graded")
    assert once(0, result) and once(1, JobResult("bob", A, f"{A}.ipynb", "graded"))
    assert not once(0, result)  # the same job again (it ran twice)
    assert got == [(0, "alice"), (1, "bob")] and once.ignored == 1


def test_a_worker_of_another_version_refuses_a_job(monkeypatch):
    from grader.grading.classroom import worker

    class Side:
        version = _version()
        jobs = 0

    monkeypatch.setattr(worker, "_side", Side())
    with pytest.raises(worker.CourseVersionMismatch, match="reference hash rrrrrrrrrrrr"):
        worker.grade_remote({}, ("k" * 64, "x" * 64))
    monkeypatch.setattr(worker, "_side", None)
    with pytest.raises(worker.NotAGradingWorker, match="python -m grader worker"):
        worker.grade_remote({}, ("k" * 64, "r" * 64))


def test_the_hashes_change_with_what_they_name(tmp_path, monkeypatch):
    from grader import kit

    course = tmp_path / "course"
    for name in ("solutions", "notebooks"):
        shutil.copytree(ROOT / name, course / name)
    before = kit.kit_hash(course)
    path = course / "notebooks" / A / f"{A}.ipynb"
    path.write_text(path.read_text().replace("matrix", "Matrix", 1))
    assert kit.kit_hash(course) != before
    reference = kit.reference_hash()
    assert "grader/lessons/01_matmul_views/reference.py" in kit.reference_files()
    assert not any(p.startswith("grader/learner/") for p in kit.reference_files())
    monkeypatch.setattr(kit, "VERDICT_LIBRARIES", ("numpy", "no-such-library"))
    assert kit.reference_hash() != reference


class _Gone:
    address = "tcp://lost:1"


def _fake_grade(data, version):
    """What a worker returns, or raises, for the jobs of the test below."""
    from distributed import KilledWorker

    from grader.grading.notebook.job import JobResult
    from grader.grading.classroom.worker import result_data

    if data["student"] == "killer":
        raise KilledWorker("grade-x", _Gone(), 3)
    if data["student"] == "raiser":
        raise ValueError("the task raised")
    return result_data(JobResult(data["student"], A, data["notebook"], "graded", seconds=version[0] == "k" * 64))


def test_the_driver_turns_lost_and_raising_jobs_into_failed_results(monkeypatch):
    from distributed import Client, LocalCluster

    from grader.grading.classroom import cluster as cluster_module
    from grader.grading.notebook.job import Job

    version = _version()
    monkeypatch.setattr(cluster_module, "grade_remote", _fake_grade)
    jobs = [Job(name, A, f"{A}.ipynb", {}, {}, {}, None) for name in ("alice", "killer", "raiser", "bob")]
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None,
                      resources=cluster_module.resources_for(version, "none")) as local, \
            Client(local, set_as_default=False) as client:
        verdict = cluster_module.WorkerVerdict(accepted={next(iter(local.workers.values())).address: 1})
        grading = cluster_module.Cluster(client, version, "none", verdict)
        got = {}
        grading.run(jobs, lambda i, r: got.setdefault(i, r))
        assert sorted(got) == [0, 1, 2, 3]
        assert [got[i].status for i in range(4)] == ["graded", "failed", "failed", "graded"]
        assert got[0].seconds == 1  # the driver's version reached the worker
        assert "every worker that took it died" in got[1].error and "tcp://lost:1" in got[1].error
        assert got[2].error == "ValueError: the task raised"

        def broken(i, result):
            raise RuntimeError("the proof failed")

        with pytest.raises(RuntimeError, match="the proof failed"):
            grading.run(jobs, broken)


def test_a_worker_without_bubblewrap_refuses_to_start(tmp_path):
    empty = tmp_path / "bin"  # a PATH on which there is no bwrap
    empty.mkdir()
    env = dict(os.environ, PATH=str(empty),
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([sys.executable, "-m", "grader", "worker", "tcp://127.0.0.1:9"], env=env,
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "refusing to grade without a sandbox" in run.stderr
    assert "bubblewrap (bwrap) is not installed" in run.stderr


def test_the_worker_command_offers_its_version_and_passes_dask_options_on(monkeypatch):
    from grader import cli
    from grader.grading.classroom import worker

    version = _version()
    cmd = worker.command("tcp://h:8786", 3, version, "bwrap", ["--name", "lab-3"])
    assert cmd[1:5] == ["worker", "tcp://h:8786", "--nworkers", "3"]
    assert cmd[cmd.index("--nthreads") + 1] == "1"
    assert cmd[cmd.index("--resources") + 1] == f"{version.resource}=1 {worker.BWRAP_RESOURCE}=1"
    assert cmd[cmd.index("--preload") + 1] == "grader.grading.classroom.worker" and cmd[-2:] == ["--name", "lab-3"]
    none = worker.command("tcp://h:8786", 1, version, "none", [])
    assert worker.BWRAP_RESOURCE not in " ".join(none)
    seen = {}
    monkeypatch.setattr(worker, "main", lambda *a: seen.setdefault("args", a) and 0)
    cli.main(["worker", "tcp://h:8786", "--nworkers", "2", "--", "--name", "lab-3", "--nworkers", "9"])
    assert seen["args"] == ("tcp://h:8786", 2, "bwrap", ["--name", "lab-3", "--nworkers", "9"])


# ----------------------------------------------------------------------- a real cluster

SANDBOX = [] if sandboxed() else ["--sandbox", "none"]
BIN = Path(sys.executable).parent


def _env(course: Path) -> dict:
    # Every process imports this tree (not whatever checkout the venv was installed from).
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return dict(os.environ, ATTENTION_COURSE_ROOT=str(course), PYTHONPATH=path)


class Processes:
    """Processes started here, each in its own session, all stopped by :meth:`stop`."""

    def __init__(self, logs: Path):
        self.logs, self.started = logs, []

    def start(self, name: str, cmd: list[str], env: dict, cwd: Path) -> subprocess.Popen:
        log = open(self.logs / f"{name}.log", "wb")
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        proc.name, proc.killed = name, False
        self.started.append(proc)
        return proc

    def kill(self, proc: subprocess.Popen, sig=signal.SIGKILL) -> None:
        proc.killed = True
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass

    def stop(self) -> None:
        for proc in reversed(self.started):
            self.kill(proc, signal.SIGTERM)
        deadline = time.monotonic() + 15
        for proc in self.started:
            try:
                proc.wait(timeout=max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                pass
            self.kill(proc)
            proc.wait()

    def log(self, name: str) -> str:
        return (self.logs / f"{name}.log").read_text(errors="replace")[-3000:]


def _wait(what: str, ready, procs: Processes, timeout: float = STARTUP):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = ready()
        if value:
            return value
        for proc in procs.started:
            if not proc.killed and proc.poll() is not None:
                pytest.fail(f"{proc.name} exited ({proc.returncode}) while waiting for {what}:\n"
                            f"{procs.log(proc.name)}")
        time.sleep(0.3)
    pytest.fail(f"timed out waiting for {what}")


def samples(lesson: Lesson) -> list[Sample]:
    """A small class: honest, empty, a misconception (partial credit), a kernel that exits,
    and a notebook nested 200,000 deep, graded as unreadable on a worker as on the pool."""
    stub = Expect(0.0, "failed", "not implemented yet")
    deep = next(s for s in structure_samples(lesson) if s.student == "structure_nested_deep")
    return [Sample("honest", A, lesson.files(lesson.honest()), lesson.expect()),
            Sample("empty", A, lesson.files(lesson.release), lesson.expect({a: stub for a in lesson.answers})),
            misconception_samples(lesson)[0], kernel_exit_sample(lesson), deep]


class Run:
    def __init__(self, proc: subprocess.CompletedProcess | subprocess.Popen, out: Path, stdout: str,
                 stderr: str):
        self.returncode, self.out, self.stdout, self.stderr = proc.returncode, out, stdout, stderr

    def result(self, student: str) -> dict:
        return json.loads((self.out / "results" / student / f"{A}.json").read_text())

    def __str__(self) -> str:
        return f"exit {self.returncode}\n{self.stdout[-4000:]}\n{self.stderr[-4000:]}"


def _grade(course: Path, submitted: Path, out: Path, *args) -> Run:
    cmd = [sys.executable, "-m", "grader", "grade", str(submitted), "--out", str(out), *SANDBOX, *args]
    done = subprocess.run(cmd, env=_env(course), cwd=course, capture_output=True, text=True, timeout=600)
    return Run(done, out, done.stdout, done.stderr)


def _grade_and_kill(course, submitted, out, scheduler, client, workers, procs) -> tuple[Run, list]:
    """Grade on the cluster and, once the first submission is done, kill the one of
    ``workers`` that holds the most jobs (its whole process group)."""
    cmd = [sys.executable, "-m", "grader", "grade", str(submitted), "--out", str(out), *SANDBOX,
           "--scheduler", scheduler]
    proc = subprocess.Popen(cmd, env=_env(course), cwd=course, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    lines, held = [], []
    try:
        for line in proc.stdout:
            lines.append(line)
            if not held and re.match(r"\[1/\d+\] ", line):
                processing = client.processing()
                victim = max(workers, key=lambda w: len(processing.get(w.address, [])))
                held = list(processing.get(victim.address, []))
                procs.kill(victim.proc)
        stderr = proc.stderr.read()
        proc.wait(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
    return Run(proc, out, "".join(lines), stderr), held


class Worker:
    def __init__(self, proc, address=""):
        self.proc, self.address = proc, address


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    from distributed import Client

    base = tmp_path_factory.mktemp("cluster")
    logs = base / "logs"
    logs.mkdir()
    course, other = course_copy(ROOT, base / "course"), course_copy(ROOT, base / "other-course")
    path = other / "notebooks" / A / f"{A}.ipynb"  # another course version: the release differs
    path.write_text(path.read_text().replace("matrix", "Matrix", 1))
    lesson = Lesson(A, ROOT)
    c = type("Cluster", (), {})()
    c.samples = {s.student: s for s in samples(lesson)}
    c.submitted = base / "submitted"
    write(list(c.samples.values()), c.submitted)

    procs = Processes(logs)
    client = None
    try:
        info = base / "scheduler.json"
        procs.start("scheduler", [str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0",
                                  "--no-dashboard", "--scheduler-file", str(info)], _env(course), base)
        address = _wait("the scheduler", lambda: info.is_file() and json.loads(info.read_text() or "{}")
                        .get("address"), procs)
        client = Client(address, timeout="60s", set_as_default=False)

        def worker(name, where):
            cmd = [sys.executable, "-m", "grader", "worker", address, "--nworkers", "1", *SANDBOX,
                   "--", "--no-dashboard", "--name", name]
            return procs.start(name, cmd, _env(where), base)

        def joined(n):
            return lambda: len(client.scheduler_info()["workers"]) >= n and client.scheduler_info()["workers"]

        stranger = worker("stranger", other)
        _wait("the worker of another course version", joined(1), procs)
        c.alone = _grade(course, c.submitted, base / "out-alone", "--scheduler", address)

        good = [Worker(worker("good-1", course)), Worker(worker("good-2", course))]
        workers = _wait("three workers", joined(3), procs)
        names = {w["name"]: a for a, w in workers.items()}
        for w in good:
            w.address = names[w.proc.name]
        c.stranger_address = names["stranger"]
        c.cluster = _grade(course, c.submitted, base / "out-cluster", "--scheduler", address)
        c.jobs = {addr: info["jobs"] for addr, info in
                  client.run(__import__("grader.grading.classroom.worker", fromlist=["describe"]).describe).items()}
        procs.kill(stranger)
        _wait("the stranger to leave", lambda: len(client.scheduler_info()["workers"]) == 2, procs)

        c.local = _grade(course, c.submitted, base / "out-local", "--jobs", "2")
        c.killed, c.held = _grade_and_kill(course, c.submitted, base / "out-killed", address, client,
                                           good, procs)
        c.course = course
        yield c
    finally:
        if client is not None:
            client.close()
        procs.stop()


def _tests(result: dict) -> list:
    return [(t["id"], t["points"], t["status"], t["message"]) for t in result["tests"]]


@pytest.mark.slow
def test_a_driver_with_no_worker_of_its_version_refuses_and_names_both_hashes(cluster):
    run = cluster.alone
    assert run.returncode == 2, run
    assert "no worker of the cluster may grade this course" in run.stderr
    assert "has another course version: kit hash" in run.stderr
    assert "(the driver's: " in run.stderr and "make setup" in run.stderr
    assert not (run.out / "results").exists()


@pytest.mark.slow
def test_the_cluster_grades_as_the_local_pool_does(cluster):
    for run in (cluster.local, cluster.cluster):
        assert run.returncode == 0, run
        assert f"Graded {len(cluster.samples)} of {len(cluster.samples)} submission(s)" in run.stdout
    assert "Cluster: the Dask cluster at tcp://127.0.0.1:" in cluster.cluster.stdout
    for student, sample in cluster.samples.items():
        local, remote = cluster.local.result(student), cluster.cluster.result(student)
        assert _tests(remote) == _tests(local), student
        for field in ("status", "score", "max", "repairs", "incidents", "notes", "integrity", "sandbox"):
            assert remote[field] == local[field], (student, field)
        assert {t["id"]: t["points"] for t in remote["tests"]} == \
            {t: e.points for t, e in sample.tests.items()}, student
    rows = [list(csv.reader((run.out / "grades.csv").open())) for run in (cluster.local, cluster.cluster)]
    assert rows[0] == rows[1]


@pytest.mark.slow
def test_a_kernel_that_dies_on_a_worker_costs_only_its_own_tests(cluster):
    sample = cluster.samples["kernel_exit"]
    result = cluster.cluster.result("kernel_exit")
    assert result["score"] == sample.total > 0
    assert "stopped while this cell ran" in "\n".join(result["incidents"])


@pytest.mark.slow
def test_a_worker_of_another_version_is_refused_and_grades_nothing(cluster):
    run = cluster.cluster
    assert f"warning: refused worker {cluster.stranger_address}" in run.stdout, run
    assert "has another course version: kit hash" in run.stdout
    assert cluster.jobs[cluster.stranger_address] == 0
    assert sum(cluster.jobs.values()) == len(cluster.samples) + 1  # and the proof


@pytest.mark.slow
def test_a_worker_killed_mid_run_loses_nothing_and_nothing_counts_twice(cluster):
    run = cluster.killed
    assert cluster.held, "the killed worker held no job when it was killed"
    assert run.returncode == 0, run
    n = len(cluster.samples)
    assert f"Graded {n} of {n} submission(s)" in run.stdout, run
    done = re.findall(r"^\[(\d+)/(\d+)\] (\S+?)/", run.stdout, re.M)
    assert sorted(s for _, _, s in done) == sorted(cluster.samples), "each submission once"
    assert [int(k) for k, _, _ in done] == list(range(1, n + 1))
    for student in cluster.samples:
        assert _tests(run.result(student)) == _tests(cluster.local.result(student)), student
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{cluster.course / 'gradebook.db'}", "attention") as gb:
        assert sorted(s.student.id for s in gb.assignment_submissions(A)) == sorted(cluster.samples)
