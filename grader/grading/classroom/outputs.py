"""What ``grade`` writes for one graded submission, in the grading process only.

The autograded notebooks arrive inert: active markup in the student's markdown and
outputs was taken out in the grading worker, with an integrity note, under the job's own
wall limit (``grader.grading.notebook.job.make_inert``). Then, in this order, so that each step
reads what the one before wrote:

1. the scores, into the gradebook (:class:`grader.grading.classroom.gradebook.Recorder`);
2. the late penalty, by nbgrader's own ``AssignLatePenalties`` (:mod:`grader.grading.classroom.late`);
3. the autograded folder, with every file of the submission (:mod:`grader.grading.classroom.autograded`);
4. the feedback pages, made from the result in memory and the gradebook's points and
   comments, as ``nbgrader generate_feedback`` makes them (:mod:`grader.grading.classroom.nbfeedback`);
5. the results JSON, with the gradebook's totals and why a person should look.

Each submission's result is a :class:`~grader.grading.classroom.submission_result.SubmissionResult`,
made once its gradebook entry is written, and never read back from what was written.

One submission's failure here is reported and stops nothing else.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from .nbfeedback import page_of
from .report import write_json
from ..notebook.status import JobStatus
from .submission_result import Lateness, Marks, SubmissionResult, time_flags


class Outputs:
    """Writes each submission's outputs as it finishes (``finish``)."""

    def __init__(self, out: Path, recorder, late, secrets: dict, course: dict, sandbox: str):
        self.out, self.recorder, self.late = out, recorder, late
        self.secrets, self.course, self.sandbox = secrets, course, sandbox

    def finish(self, sub, done) -> tuple[SubmissionResult, list[str]]:
        """The result of submission ``sub`` graded as ``done`` (a JobResult per notebook),
        and the problems that kept some of its outputs from being written."""
        secret, why = self.secrets.get(sub.key, (None, ""))
        flags = list(dict.fromkeys([*sub.flags, *(f for r in done for f in r.flags)]))
        result = SubmissionResult(sub.student, sub.assignment, tuple(done), self.sandbox, sub.timestamp,
                                  tuple(flags), exchange=why)
        problems = []
        try:
            if result.status == JobStatus.FAILED:
                problems.append(f"{sub.student}/{sub.assignment} could not be graded: "
                                + "; ".join(e.strip().splitlines()[-1] for e in result.errors))
            else:
                self._record(sub, result.notebooks)
                not_kept = self.recorder.write_autograded(
                    sub.student, sub.assignment, result.notebooks, sub.files,
                    self.course[sub.assignment].files, sub.timestamp, secret)
                result = replace(result, not_kept=tuple(not_kept))
                result = self._marked(result)
                self._pages(result)
        except Exception as exc:  # noqa: BLE001 (one submission's outputs must not stop the rest)
            problems.append(f"{sub.student}/{sub.assignment} was graded but not all of it was "
                            f"written: {type(exc).__name__}: {exc}")
        finally:
            try:
                write_json(self.out / "results" / sub.student / f"{sub.assignment}.json", result.to_json())
            except Exception as exc:  # noqa: BLE001 (the next submission's must still be written)
                problems.append(f"{sub.student}/{sub.assignment}: its results JSON could not be "
                                f"written: {type(exc).__name__}: {exc}")
        return result, problems

    def _record(self, sub, done) -> None:
        """Steps 1 and 2: the scores and the late penalty, into the gradebook."""
        self.recorder.record(sub.student, sub.assignment, done, sub.timestamp)
        self.late.apply(self.recorder.db_url, sub.student, sub.assignment,
                        [Path(r.notebook).stem for r in done])

    def _marked(self, result: SubmissionResult) -> SubmissionResult:
        """``result`` with the gradebook's totals, its lateness and the flags about its time."""
        numbers = self.recorder.totals(result.student, result.assignment)
        flags, notes = time_flags(list(result.flags), numbers["duedate"], result.timestamp)
        late = None if not numbers["seconds_late"] else Lateness(
            f"{numbers['timestamp']:%Y-%m-%d %H:%M:%S} UTC", f"{numbers['duedate']:%Y-%m-%d %H:%M:%S} UTC",
            numbers["seconds_late"], numbers["late_penalty"], self.late.describe)
        return replace(result, flags=tuple(flags), notes=tuple(notes), late=late, marks=Marks(
            numbers["manual"], numbers["late_penalty"], numbers["total"], numbers["max"]))

    def _pages(self, result: SubmissionResult) -> None:
        """Step 4: each notebook's feedback page, from its result in memory and what the
        gradebook holds for it."""
        for res in result.notebooks:
            stem = Path(res.notebook).stem
            page = self.out / "feedback" / result.student / result.assignment / f"{stem}.html"
            page.parent.mkdir(parents=True, exist_ok=True)
            text = page_of(res, self.recorder.gb, result.student, result.assignment, stem)
            page.write_bytes(text.encode("utf-8", "backslashreplace"))
