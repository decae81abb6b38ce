"""A grading machine's side of a Dask cluster: ``python -m grader worker SCHEDULER``.

The command names this machine's course version (:class:`CourseVersion`: the hash of the
kit its checkout builds and of the instructor's side that judges), checks that the sandbox
works here, and then becomes ``dask worker`` (``os.execv``) with:

* one thread per worker process: a process grades one notebook at a time and launches the
  next notebook's kernel ahead, exactly as a process of the local pool does;
* two Dask resources that route jobs: :meth:`CourseVersion.resource`, and
  :data:`BWRAP_RESOURCE` if submissions run in bubblewrap here. The driver asks for both,
  so Dask's scheduler never sends a job to a worker of another course version or without
  the sandbox the driver requires, now or when a worker joins or restarts later;
* this module as ``--preload``: :func:`dask_setup` builds the kit and detects the sandbox
  once per worker process, before the process joins the cluster.

A job arrives as plain data (:func:`job_data`) and is graded by :func:`grade_remote`, which
calls :func:`grader.grading.notebook.job.run_job`, the function the local pool calls; the result goes
back as plain data (:func:`result_data`).
"""
from __future__ import annotations

import dataclasses
from enum import Enum
import os
import shutil
import socket
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ...course import course_root
from ...kit import build_kit, kit_hash, reference_hash
from ..notebook import job as job_module
from ..notebook.results import TestResult
from ..notebook.job import Job, JobResult, font_cache, run_job
from ..notebook.sandbox import Limits, Sandbox, SandboxKind, detect

SANDBOX_ENV = "ATTENTION_GRADING_SANDBOX"  # the sandbox the wrapper checked: bwrap | none
BWRAP_RESOURCE = "attention-bwrap"
# Fields of a Job that name things on the machine that made it; a worker uses its own.
LOCAL_FIELDS = ("sandbox", "scratch", "font_cache", "kit")
WHAT_TO_DO = ("check out the driver's commit of the course on that machine, run `make setup` "
              "there, and restart its worker (`python -m grader worker SCHEDULER`)")


@dataclass(frozen=True)
class CourseVersion:
    kit: str  # grader.kit.kit_hash: what the sandbox holds
    reference: str  # grader.kit.reference_hash: what judges outside it

    @property
    def resource(self) -> str:
        """The Dask resource a worker of this version offers and a driver's jobs need."""
        return f"attention-course-{self.kit[:16]}-{self.reference[:16]}"

    def __str__(self) -> str:
        return f"kit {self.kit[:12]}, reference {self.reference[:12]}"


def this_version(root: Path | None = None) -> CourseVersion:
    return CourseVersion(kit_hash(root or course_root()), reference_hash())


class CourseVersionMismatch(RuntimeError):
    pass


def mismatch(where: str, theirs: CourseVersion, ours: CourseVersion) -> str:
    """What the driver says about a worker of another course version: "" if there is none."""
    if theirs == ours:
        return ""
    parts = [f"{name} hash {getattr(theirs, name)[:12]} (the driver's: {getattr(ours, name)[:12]})"
             for name in ("kit", "reference") if getattr(theirs, name) != getattr(ours, name)]
    return f"{where} has another course version: {'; '.join(parts)}. To use it, {WHAT_TO_DO}."


# ----------------------------------------------------------------------- a worker process

class WorkerSide:
    """What one worker process holds for its jobs: its kit, its sandbox, its scratch."""

    def __init__(self, mode: str, hidden: list[Path]):
        root = course_root()
        self.version = this_version(root)
        self.scratch = Path(tempfile.mkdtemp(prefix="grade-worker-"))
        os.chmod(self.scratch, 0o711)  # kernels run as another user without bubblewrap
        try:
            self.kit = build_kit(root, self.scratch / "kit")
            self.boxes = {mode: detect(mode, self.kit, [root, *hidden], self.scratch, Limits())}
        except BaseException:
            shutil.rmtree(self.scratch, ignore_errors=True)
            raise
        self.mode, self.hidden = mode, hidden
        self.fonts = font_cache()
        self.jobs = 0  # graded here (tests read it)

    def sandbox(self, kind: str) -> Sandbox:
        """The sandbox a job asks for: this machine's bubblewrap, or the fallback."""
        if kind not in self.boxes:
            if SandboxKind(kind) is SandboxKind.BWRAP:  # the resources keep such jobs away; never grade unsandboxed
                raise RuntimeError(f"this worker has no bubblewrap ({self.boxes[self.mode].reason})")
            self.boxes[kind] = detect(kind, self.kit, [course_root(), *self.hidden], self.scratch, Limits())
        return self.boxes[kind]

    def job(self, data: dict) -> Job:
        fields = {k: v for k, v in data.items() if k not in ("sandbox", "limits", "warm")}
        box = self.sandbox(data["sandbox"])
        if not data.get("warm", True):  # the grader asked for kernels started from nothing
            box = dataclasses.replace(box, warm=False)
        return Job(**fields, limits=Limits(**data["limits"]), sandbox=box,
                   scratch=str(self.scratch), font_cache=self.fonts, kit=str(self.kit))

    def describe(self) -> dict:
        box = self.boxes[self.mode]
        return {"kit": self.version.kit, "reference": self.version.reference, "sandbox": box.kind,
                "describe": box.describe(), "host": socket.gethostname(), "pid": os.getpid(),
                "jobs": self.jobs}

    def close(self) -> None:
        job_module._drop_spare()
        shutil.rmtree(self.scratch, ignore_errors=True)


_side: WorkerSide | None = None


def dask_setup(worker) -> None:
    """Dask's preload hook, in each worker process before it joins the scheduler."""
    global _side
    _side = WorkerSide(os.environ.get(SANDBOX_ENV, "bwrap"), [Path(worker.local_directory)])


def dask_teardown(worker) -> None:  # noqa: ARG001 (Dask's signature)
    global _side
    if _side is not None:
        _side.close()
        _side = None


class NotAGradingWorker(RuntimeError):
    pass


def _here() -> WorkerSide:
    if _side is None:
        raise NotAGradingWorker("this Dask worker was not started with `python -m grader worker` "
                                "(it has no kit and no sandbox)")
    return _side


def describe() -> dict:
    """This worker process, for the driver (``Client.run``)."""
    return _here().describe()


def job_data(job: Job) -> dict:
    """A job as plain data: notebooks, files, limits and the kind of sandbox it needs."""
    data = {f.name: getattr(job, f.name) for f in dataclasses.fields(Job) if f.name not in LOCAL_FIELDS}
    data["limits"] = dataclasses.asdict(job.limits)
    data["sandbox"] = job.sandbox.kind
    data["warm"] = job.sandbox.warm
    return data


def _plain(obj):
    if isinstance(obj, Enum):  # a status: its string
        return obj.value
    if isinstance(obj, TestResult):
        return obj.to_dict()
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


def result_data(result: JobResult) -> dict:
    return {f.name: _plain(getattr(result, f.name)) for f in dataclasses.fields(JobResult)}


def result_from(data: dict) -> JobResult:
    from ..notebook import nbjson

    result = JobResult(**data)
    if result.autograded is not None:
        result.autograded = nbjson.from_dict(result.autograded)
    return result


def grade_remote(data: dict, version: tuple[str, str]) -> dict:
    """One job on this worker: what a process of the local pool does, through the same
    :func:`run_job`. ``version`` is the driver's (kit, reference); a worker of another
    version refuses the job (Dask's resources should never have sent it here)."""
    side = _here()
    problem = mismatch(f"the worker {socket.gethostname()} (pid {os.getpid()})", side.version,
                       CourseVersion(*version))
    if problem:
        raise CourseVersionMismatch(problem)
    result = run_job(side.job(data))
    side.jobs += 1
    return result_data(result)


# ----------------------------------------------------------------------- the command

def command(scheduler: str, nworkers: int, version: CourseVersion, sandbox: str,
            extra: list[str]) -> list[str]:
    """The ``dask worker`` command line of a grading machine."""
    resources = [f"{version.resource}=1"] + ([f"{BWRAP_RESOURCE}=1"] if sandbox == "bwrap" else [])
    dask = str(Path(sys.executable).with_name("dask"))
    return [dask, "worker", scheduler, "--nworkers", str(nworkers), "--nthreads", "1",
            "--resources", " ".join(resources), "--preload", __name__, *extra]


def main(scheduler: str, nworkers: int, sandbox: str, extra: list[str], err=None) -> int:
    """Check this machine, then become its ``dask worker`` (returns only on failure)."""
    from ...kit import KitError
    from ..notebook.sandbox import NO_SANDBOX, SandboxUnavailable

    err = err or sys.stderr
    root = course_root()
    with tempfile.TemporaryDirectory(prefix="grade-worker-check-") as tmp:
        os.chmod(tmp, 0o711)
        try:
            kit = build_kit(root, Path(tmp) / "kit")
            box = detect(sandbox, kit, [root], Path(tmp), Limits())
        except KitError as exc:
            print(f"worker: cannot build the student kit the sandbox holds: {exc}", file=err)
            return 2
        except SandboxUnavailable as exc:
            print(f"worker: refusing to grade without a sandbox: {exc}.\n{NO_SANDBOX}", file=err)
            return 2
    version = this_version(root)
    cmd = command(scheduler, nworkers, version, box.kind, extra)
    print(f"Course version {version}; sandbox: {box.describe()}.\nStarting {nworkers} grading "
          f"worker process(es) for {scheduler}: {' '.join(cmd[1:])}", file=err, flush=True)
    env = dict(os.environ, **{SANDBOX_ENV: sandbox})
    os.execve(cmd[0], cmd, env)
    return 2  # not reached
