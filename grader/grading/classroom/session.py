"""One grading session: what every entry point that grades (``grade``, ``serve``) sets up,
set up once and in one place.

A :class:`GradingSession` holds the course (every assignment in ``solutions/`` with its
release), the gradebook's recorder, the late policy, the student kit, the sandbox, the
runner (a :class:`~grader.grading.classroom.pool.PoolRunner` here, or a Dask cluster) and the jobs it
makes (:meth:`GradingSession.job`). It proves the environment (:meth:`GradingSession.prove`):
each assignment's source notebook is graded first, through the same sandbox, bridge and
checker, and must earn full marks, and its release must earn 0; otherwise nobody is graded.
Used as a context manager, it closes the runner and the gradebook and removes its scratch
folder, whatever happens.
"""
from __future__ import annotations

import fnmatch
import json
import os
import shutil
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from ...course import NOTEBOOKS, SOLUTIONS, assignments
from ...kit import KitError, build_kit
from ..notebook.choice import candidates
from .gradebook import Recorder
from ..notebook.job import GRADER_WALL, RELEASED, Job, JobResult, font_cache
from ..notebook.kernel import FIGURES
from .late import LatePolicy
from .outputs import Outputs
from .pool import PoolRunner, default_jobs
from ..notebook.sandbox import NO_SANDBOX, Limits, Sandbox, SandboxUnavailable, detect
from ..notebook.status import JobStatus


class CourseError(RuntimeError):
    pass


class SetupError(RuntimeError):
    """The session cannot grade: no kit, no sandbox, no cluster (the message says why)."""


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


def proof_problem(results: list[JobResult]) -> str:
    """Why the proof failed (the first failing test's message), or ""."""
    for res in results:
        if res.status != JobStatus.GRADED:  # the grader's error, or why it could not be graded
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


def _db_path(db_url: str) -> list[Path]:
    if db_url.startswith("sqlite:///"):
        path = Path(db_url[len("sqlite:///"):])
        return [path, path.with_name(path.name + "-journal")]
    return []


class GradingSession:
    """The course, its gradebook and late policy (read when it is made: a
    :class:`CourseError`, ``GradebookError`` or ``LateConfigError`` says what is wrong),
    then, from :meth:`start`, the kit, the sandbox and the runner."""

    def __init__(self, root: Path, *, db_url: str | None = None, sandbox: str = "bwrap",
                 limits: Limits | None = None, jobs: int | None = None, scheduler: str | None = None,
                 grader_wall: float = GRADER_WALL, kernels: str = "warm", figures: str = "png",
                 stream=None):
        self.root, self.stream = root, stream or sys.stdout
        self.recorder = Recorder(root, db_url)
        self.course = load_course(root, self.recorder.ignore)
        self.late = LatePolicy(self.recorder.config)
        self.sandbox_mode, self.limits = sandbox, limits or Limits()
        self.warm = kernels == "warm"  # kernels forked from a zygote (grader.grading.notebook.zygote)
        if figures not in FIGURES:
            raise CourseError(f"figures={figures!r}: expected one of {', '.join(FIGURES)}")
        self.figures = figures  # what the graded notebooks' figures hold (grader.grading.notebook.kernel)
        self.jobs, self.scheduler, self.grader_wall = jobs or default_jobs(), scheduler, grader_wall
        self.scratch: Path | None = None
        self.kit, self.box, self.runner, self.fonts = "", Sandbox("none"), None, ""

    @property
    def ignore(self) -> list[str]:
        """What reading a submission leaves out."""
        return [*self.recorder.ignore, "__MACOSX"]

    @property
    def workers(self) -> int:
        """How many notebooks are graded at a time."""
        return getattr(self.runner, "threads", None) or self.jobs

    # ------------------------------------------------------------------ set-up
    def start(self, hidden: list[Path], scratch: Path | None = None, most: int | None = None) -> None:
        """Build the student kit (in ``scratch``, made here if not given), the sandbox (from
        which the course, the gradebook and ``hidden`` are kept out) and the runner (at
        most ``most`` worker processes on this machine). Raises :class:`SetupError`."""
        if scratch is None:
            scratch = Path(tempfile.mkdtemp(prefix="grade-"))
            os.chmod(scratch, 0o711)
        self.scratch = scratch
        try:
            self.kit = str(build_kit(self.root, scratch / "kit"))
        except KitError as exc:
            raise SetupError(f"cannot build the student kit the sandbox holds: {exc}") from None
        hidden = [self.root, *hidden, *_db_path(self.recorder.db_url)]
        remote = self.scheduler not in (None, "local")  # then each worker detects its own sandbox
        try:
            self.box = Sandbox(self.sandbox_mode, warm=self.warm) if remote else \
                detect(self.sandbox_mode, Path(self.kit), hidden, scratch, self.limits, warm=self.warm)
        except SandboxUnavailable as exc:
            raise SetupError(f"refusing to run submissions without a sandbox: {exc}.\n{NO_SANDBOX}") from None
        if not remote:
            print(f"Sandbox: {self.box.describe()}.", file=self.stream)
        if self.scheduler:
            from .cluster import ClusterError, open_cluster

            try:
                self.runner = open_cluster(self.scheduler, self.sandbox_mode, self.root, self.jobs,
                                           self.stream)
            except ClusterError as exc:
                raise SetupError(str(exc)) from None
        else:
            self.runner = PoolRunner(min(self.jobs, max(most or self.jobs, 1)))
        self.fonts = font_cache()

    def close(self) -> None:
        if self.runner is not None:
            self.runner.close()
            self.runner = None
        self.recorder.close()
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None

    def __enter__(self) -> GradingSession:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ jobs
    def job(self, student: str, assignment: str, notebook: str, files: dict[str, bytes], *,
            submitted_as: str | None = None, notes: list[str] = (), candidates: list[str] = (),
            proof: bool = False) -> Job:
        """The job that grades ``notebook`` of ``assignment`` from ``files``, with this
        session's sandbox, limits, scratch folder, fonts and kit."""
        source, release = self.course[assignment].notebooks[notebook]
        return Job(student=student, assignment=assignment, notebook=notebook, source=source,
                   release=release, files=files, submitted_as=submitted_as,
                   course_files=self.course[assignment].files, sandbox=self.box, limits=self.limits,
                   scratch=str(self.scratch or ""), font_cache=self.fonts, notes=list(notes), kit=self.kit,
                   proof=proof, candidates=list(candidates), grader_wall=self.grader_wall,
                   figures=self.figures)

    def proof_jobs(self, names) -> list[Job]:
        """For each assignment's notebook: the environment proof, its source graded as a
        submission and then its release (``grader.grading.notebook.job.proof_plan``)."""
        return [self.job("(proof)", name, filename, {filename: json.dumps(source).encode()},
                         submitted_as=filename, proof=True)
                for name in sorted(names)
                for filename, (source, _) in self.course[name].notebooks.items()]

    def submission_jobs(self, subs, jobs: list[Job]) -> dict:
        """Append a job per notebook of each submission to ``jobs``; return, per submission's
        key, the indices of its jobs."""
        groups = defaultdict(list)
        for sub in subs:
            notebooks = self.course[sub.assignment].notebooks
            for name in notebooks:
                groups[sub.key].append(len(jobs))
                jobs.append(self.job(sub.student, sub.assignment, name, sub.files, notes=list(sub.notes),
                                     candidates=candidates(sub.files, name, notebooks)))
        return groups

    def job_count(self, subs) -> int:
        """How many jobs grading ``subs`` takes, the proof's included."""
        names = {s.assignment for s in subs}
        return sum(len(self.course[n].notebooks) for n in names) + \
            sum(len(self.course[s.assignment].notebooks) for s in subs)

    def outputs(self, out: Path, secrets: dict) -> Outputs:
        """What writes each graded submission's outputs into ``out``."""
        return Outputs(out, self.recorder, self.late, secrets, self.course, self.box.kind)

    # ------------------------------------------------------------------ the proof
    def prove(self, names, jobs: list[Job] = (), on_result=None, prepare=None) -> None:
        """Prove the environment for the assignments ``names``, and run ``jobs`` beside the
        proof on the same workers: ``on_result(index, JobResult)`` for each of them, never
        before the proof has passed. ``prepare()`` runs once the workers have started.
        Raises :class:`BrokenEnvironment` with the first failing test."""
        proof = self.proof_jobs(names)
        proven: list[JobResult] = []
        waiting: list[tuple[int, JobResult]] = []  # jobs that ended before the proof did

        def arrived(i: int, result: JobResult) -> None:
            if i < len(proof):
                proven.append(result)
                if len(proven) == len(proof):
                    problem = proof_problem(proven)
                    if problem:
                        raise BrokenEnvironment(problem)
                    for item in waiting:
                        on_result(*item)
                    waiting.clear()
            elif len(proven) < len(proof):
                waiting.append((i - len(proof), result))
            else:
                on_result(i - len(proof), result)

        self.runner.run([*proof, *jobs], arrived, prepare)
