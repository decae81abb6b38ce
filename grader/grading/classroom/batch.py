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
   (:func:`grader.grading.notebook.job.run_job`, which walks the steps listed in
   ``grader.grading.notebook.job.STEPS``), or with ``--scheduler`` on the workers of a Dask
   cluster, which call the same function (:mod:`grader.grading.classroom.cluster`);
5. as each submission finishes, write its gradebook entry, late penalty, autograded
   folder, feedback pages and JSON result, in this process only
   (:mod:`grader.grading.classroom.outputs`);
6. write ``grades.csv`` from the gradebook (:mod:`grader.grading.classroom.grades`), and list the
   submissions a person should look at.

``--student`` and ``--assignment`` grade only those submissions; the other rows of
``grades.csv`` stay, since it is written from the gradebook.

The set-up (course, gradebook, late policy, kit, sandbox, workers, proof) is one
:class:`~grader.grading.classroom.session.GradingSession`, as for ``serve``; each submission's result
is one :class:`~grader.grading.classroom.submission_result.SubmissionResult`, from which its outputs,
the console's lines and ``grades.csv``'s ``look_at`` column are made.

Exit status: 0 when every submission was graded, whatever the scores; 1 when some could
not be graded or recorded (each is named); 2 when the grader cannot start at all or its
environment fails the proof (the first failing test says what broke).
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ...course import course_root
from .autograded import exchange_secrets
from .gradebook import GradebookError
from ..notebook.job import GRADER_WALL, JobResult
from .late import LateConfigError
from .outputs import Outputs
from .report import OutError, Progress, check_out, printable, summary, write_grades
from ..notebook.sandbox import Limits
from .session import BrokenEnvironment, CourseError, GradingSession, SetupError
from ..notebook.status import JobStatus
from .submissions import SubmissionsError, read_submissions, select
from .times import doubt_the_future


def grade(submissions: Path, out: Path, *, jobs: int | None = None, limits: Limits | None = None,
          sandbox: str = "bwrap", db_url: str | None = None, stream=None, err=None,
          students: list[str] | None = None, only: list[str] | None = None,
          scheduler: str | None = None, grader_wall: float = GRADER_WALL, kernels: str = "warm",
          figures: str = "png") -> int:
    """Grade every submission under ``submissions`` (of ``students``, for the assignments
    ``only``; None: all) into ``out``; return the exit status. With ``scheduler`` (a Dask
    scheduler's address, or "local" for a LocalCluster here) the jobs run on that cluster
    (:mod:`grader.grading.classroom.cluster`); everything else runs here. ``grader_wall``: the
    seconds of the grading process's own work on one notebook (``grader.grading.notebook.watchdog``).
    ``kernels``: "warm" (forked from a zygote, ``grader.grading.notebook.zygote``) or "cold".
    ``figures``: "png" (figures drawn into the graded notebooks) or "text" (their text alone)."""
    stream, err = stream or sys.stdout, err or sys.stderr
    started = time.monotonic()
    try:
        session = GradingSession(course_root(), db_url=db_url, sandbox=sandbox, limits=limits, jobs=jobs,
                                 scheduler=scheduler, grader_wall=grader_wall, kernels=kernels,
                                 figures=figures,
                                 stream=stream)
        look: list[str] = []  # work not graded at all, repeated under "Needs a look"
        subs, warnings = read_submissions(submissions, list(session.course), session.ignore, look)
        secrets = exchange_secrets(subs)  # the whole class: a copied secret is seen even in a regrade
        subs = select(subs, students, only, list(session.course))
        doubt_the_future(subs, time.time())
        check_out(out, session.root, submissions)
    except (CourseError, SubmissionsError, GradebookError, LateConfigError, OutError) as exc:
        print(f"grade: {exc}", file=err)
        return 2
    for warning in warnings:
        print(printable(f"warning: {warning}"), file=stream)
    with session:
        try:
            session.start([submissions.resolve(), out.resolve()], most=session.job_count(subs))
        except SetupError as exc:
            print(f"grade: {exc}", file=err)
            return 2
        batch = Batch(session, subs, session.outputs(out, secrets), out, stream, err)
        return batch.run(started, look)


@dataclass
class Batch:
    """One ``grade`` run over ``subs`` in ``session``: their jobs, then each submission's
    outputs as its last notebook ends, then grades.csv and the console's summary."""

    session: GradingSession
    subs: list
    outputs: Outputs
    out: Path
    stream: object
    err: object
    done: list = field(default_factory=list)  # SubmissionResult, as each is written
    problems: list[str] = field(default_factory=list)

    def run(self, started: float, look: list[str]) -> int:
        session, subs, stream, err = self.session, self.subs, self.stream, self.err
        jobs = []
        groups = session.submission_jobs(subs, jobs)
        names = sorted({s.assignment for s in subs})
        by_key = {sub.key: sub for sub in subs}
        results: dict[int, JobResult] = {}
        print(f"Grading {len(subs)} submission(s), {session.job_count(subs)} notebook(s), "
              f"{session.workers} at a time.", file=stream)
        progress = Progress(len(subs), stream)

        def on_result(i: int, result: JobResult) -> None:
            results[i] = result
            key = (result.student, result.assignment)
            if all(j in results for j in groups[key]):
                written, trouble = self.outputs.finish(by_key[key], [results[j] for j in groups[key]])
                self.done.append(written.kept())
                self.problems.extend(trouble)
                progress.finished(written)

        def prepare() -> None:  # while the first notebooks run
            session.recorder.prepare({name: session.course[name] for name in names})
            session.recorder.open()

        try:
            session.prove(names, jobs, on_result, prepare)
        except BrokenEnvironment as exc:
            return self._stop(progress, f"grade: the grading environment failed its proof, so nobody "
                                        f"was graded.\n{exc}", 2)
        except GradebookError as exc:
            return self._stop(progress, f"grade: {exc}", 2)
        except KeyboardInterrupt:
            return self._stop(progress, f"\ngrade: interrupted; {len(self.done)} submission(s) were "
                                        "graded and recorded.", 130)
        finally:
            if self.done:
                problem = write_grades(self.out, session.recorder, session.course,
                                       {r.key: r for r in self.done})
                if problem:
                    self.problems.append(problem)
        progress.close()
        self._report(started, look, names)
        if self.problems:
            print("grade: some submissions were not graded:", file=err)
            for line in self.problems:
                print(printable(f"  - {line}"), file=err)
            return 1
        return 0

    def _stop(self, progress: Progress, why: str, status: int) -> int:
        progress.close()
        print(why, file=self.err)
        return status

    def _report(self, started: float, look: list[str], names: list[str]) -> None:
        recorder, out, subs = self.session.recorder, self.out, self.subs
        elapsed = time.monotonic() - started
        graded = sum(r.status != JobStatus.FAILED for r in self.done)
        print(f"Graded {graded} of {len(subs)} submission(s) in {elapsed:.1f} s "
              f"({elapsed / max(len(subs), 1):.2f} s per submission, {self.session.workers} parallel "
              "jobs).", file=self.stream)
        print(f"Wrote {out / 'grades.csv'} (from the gradebook, {recorder.db_url}), {out / 'results'}/, "
              f"{out / 'feedback'}/ and the autograded folders in {recorder.autograded_root}/.",
              file=self.stream)
        print(summary(self.done, recorder, names, look), file=self.stream, end="")
