"""Grading a class: ``python -m grader grade SUBMISSIONS --out DIR``.

* :mod:`.submissions` reads the submitted tree (or zip) into memory;
* :mod:`.repair` rebuilds each notebook on the assignment's cells, by ``grade_id``;
* :mod:`.sandbox` and :mod:`.kernel` run it with limits, in bubblewrap when it works;
* :mod:`.scoring` turns the executed test cells into points, statuses and messages;
* :mod:`.job` is the self-contained per-notebook job that ties those together;
* :mod:`.session` is what ``grade`` and ``serve`` set up once: the course, the gradebook,
  the kit, the sandbox, the workers, the jobs and the proof;
* :mod:`.submission_result` is a submission's one result, from which :mod:`.outputs`,
  :mod:`.feedback`, :mod:`.report` and :mod:`.gradebook` write what people read;
* :mod:`.batch` is ``grade``: one session, its jobs in parallel, every output.
"""
from .notebook.job import Job, JobResult, run_job
from .notebook.sandbox import Limits, Sandbox

__all__ = ["Job", "JobResult", "Limits", "Sandbox", "run_job"]
