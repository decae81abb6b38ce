"""A job of lesson 01 and its state before a given grading step, for the tests of the
steps (tests/test_step_*.py): every step before it runs as in a real job, so that the step
under test reads what it would read there. No step that starts a kernel is run."""
from __future__ import annotations

import functools
import json
import time

from conftest import ROOT
from grader.grading.notebook import job as job_module
from grader.grading.notebook.choice import candidates
from grader.grading.notebook.job import Job, JobState
from grading_corpus import Lesson

A = "01_matmul_views"


@functools.cache
def lesson() -> Lesson:
    return Lesson(A, ROOT)


def encoded(files: dict) -> dict[str, bytes]:
    """``files`` with the notebooks given as dicts written as JSON."""
    return {k: (json.dumps(v).encode() if isinstance(v, dict) else v) for k, v in files.items()}


def make_job(files: dict, *, proof: bool = False, submitted_as: str | None = None, **kw) -> Job:
    """A job of lesson 01 on ``files`` (notebooks may be dicts); the candidates are found as
    the batch finds them, except for the proof, which names its file."""
    files = encoded(files)
    found = [] if proof else candidates(files, lesson().filename, [lesson().filename])
    return Job("alice", A, lesson().filename, lesson().source, lesson().release, files,
               submitted_as, notes=["from reading"], proof=proof, candidates=found, **kw)


# From this step on, steps make a private directory and start kernels: the tests of the
# later steps fill in what these would have written.
FIRST_WITH_KERNELS = "write_files"


def state_before(name: str, job: Job) -> JobState:
    """The state that the step ``name`` of ``grader.grading.notebook.job.STEPS`` starts from, if it
    comes no later than ``write_files``; for a later step, the state before write_files."""
    state = JobState.begin(job, time.monotonic())
    for step in job_module.STEPS:
        if step.__name__ in (name, FIRST_WITH_KERNELS):
            return state
        step(state)
        assert state.finished is None, f"the job ended at {step.__name__}: {state.finished}"
    raise LookupError(f"no step {name}")
