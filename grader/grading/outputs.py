"""What ``grade`` writes for one graded submission, in the grading process only.

The autograded notebooks arrive inert: active markup in the student's markdown and
outputs was taken out in the grading worker, with an integrity note, under the job's own
wall limit (``grader.grading.job.make_inert``). Then, in this order, so that each step
reads what the one before wrote:

1. the scores, into the gradebook (:class:`grader.grading.gradebook.Recorder`);
2. the late penalty, by nbgrader's own ``AssignLatePenalties`` (:mod:`grader.grading.late`);
3. the autograded folder, with every file of the submission (:mod:`grader.grading.autograded`);
4. the feedback pages, made from the autograded notebooks and the gradebook exactly as
   ``nbgrader generate_feedback`` makes them (:mod:`grader.grading.nbfeedback`);
5. the results JSON, with the gradebook's totals and why a person should look.

One submission's failure here is reported and stops nothing else.
"""
from __future__ import annotations

from pathlib import Path

from . import nbfeedback
from .choice import MISSING, NOT_GRADED, SEVERAL, UNREADABLE, UNTOUCHED
from .late import describe_lateness
from .report import submission_record, write_json
from .submissions import NO_TIME, NOT_READ, NOT_UTF8
from .times import BACKDATED_FLAG, FUTURE_FLAG

# Flags that mean a person should look, and how the list at the end says them.
LOOK = {MISSING: "no notebook", UNREADABLE: "unreadable notebook", NOT_GRADED: "could not be graded",
        SEVERAL: "several notebooks with work",
        UNTOUCHED: "nothing answered", NOT_READ: "files not read", NO_TIME: "no readable submission time",
        NOT_UTF8: "file names not UTF-8", BACKDATED_FLAG: "submission time set back",
        FUTURE_FLAG: "submission time in the future"}


def look_at(record: dict) -> list[str]:
    """Why a person should look at a submission, in a few words each ("" : nobody need)."""
    if record["status"] == "failed":
        return ["not graded: " + "; ".join(e.strip().splitlines()[-1] for e in record["errors"] if e.strip())]
    reasons = [LOOK[f] for f in record.get("flags", []) if f in LOOK]
    late = record.get("late")
    if late:
        reasons.append(f"late by {describe_lateness(late['seconds'])} (penalty {late['penalty']:g})")
    if record["incidents"]:
        reasons.append(f"{len(record['incidents'])} cell(s) stopped")
    if record.get("integrity"):
        reasons.append(f"{len(record['integrity'])} integrity note(s)")
    if record.get("exchange"):
        reasons.append("submission_secret.txt replaced")
    if record.get("not_kept"):
        reasons.append(f"{len(record['not_kept'])} file(s) not kept")
    return reasons


class Outputs:
    """Writes each submission's outputs as it finishes (``finish``)."""

    def __init__(self, out: Path, recorder, late, secrets: dict, course: dict, sandbox: str):
        self.out, self.recorder, self.late = out, recorder, late
        self.secrets, self.course, self.sandbox = secrets, course, sandbox

    def finish(self, sub, done) -> tuple[dict, list[str]]:
        """The record of submission ``sub`` graded as ``done`` (a JobResult per notebook),
        and the problems that kept some of its outputs from being written."""
        record = submission_record(sub.student, sub.assignment, done, self.sandbox, sub.timestamp)
        record["flags"] = list(dict.fromkeys([*sub.flags, *(f for r in done for f in r.flags)]))
        record["graded_files"] = {Path(r.notebook).stem: r.submitted_as for r in done}
        secret, why = self.secrets.get(sub.key, (None, ""))
        record["exchange"] = why
        problems = []
        try:
            if record["status"] == "failed":
                problems.append(f"{sub.student}/{sub.assignment} could not be graded: "
                                + "; ".join(e.strip().splitlines()[-1] for e in record["errors"]))
            else:
                self._write(sub, done, record, secret)
        except Exception as exc:  # noqa: BLE001 (one submission's outputs must not stop the rest)
            problems.append(f"{sub.student}/{sub.assignment} was graded but not all of it was "
                            f"written: {type(exc).__name__}: {exc}")
        finally:
            record["look_at"] = look_at(record)
            try:
                write_json(self.out / "results" / sub.student / f"{sub.assignment}.json", record)
            except Exception as exc:  # noqa: BLE001 (the next submission's must still be written)
                problems.append(f"{sub.student}/{sub.assignment}: its results JSON could not be "
                                f"written: {type(exc).__name__}: {exc}")
        return record, problems

    def _write(self, sub, done, record, secret) -> None:
        rec = self.recorder
        rec.record(sub.student, sub.assignment, done, sub.timestamp)
        notebooks = [Path(r.notebook).stem for r in done]
        self.late.apply(rec.db_url, sub.student, sub.assignment, notebooks)
        record["not_kept"] = rec.write_autograded(
            sub.student, sub.assignment, done, sub.files, self.course[sub.assignment].files,
            sub.timestamp, secret)
        numbers = rec.totals(sub.student, sub.assignment)
        if numbers["duedate"] is None and NO_TIME in record["flags"]:
            record["flags"].remove(NO_TIME)  # without a due date, the time does not matter
        elif numbers["duedate"] is not None and sub.timestamp is None and not {NO_TIME, FUTURE_FLAG} & set(record["flags"]):
            record["flags"].append(NO_TIME)
            record["notes"].append("There is no timestamp.txt, so whether the submission was late "
                                   "could not be told.")
        record.update(manual_points=numbers["manual"], late_penalty=numbers["late_penalty"],
                      total=numbers["total"], total_max=numbers["max"])
        record["late"] = None if not numbers["seconds_late"] else {
            "submitted": f"{numbers['timestamp']:%Y-%m-%d %H:%M:%S} UTC",
            "due": f"{numbers['duedate']:%Y-%m-%d %H:%M:%S} UTC", "seconds": numbers["seconds_late"],
            "penalty": numbers["late_penalty"], "policy": self.late.describe}
        folder = rec.autograded_dir(sub.student, sub.assignment)
        for res in done:
            stem = Path(res.notebook).stem
            page = self.out / "feedback" / sub.student / sub.assignment / f"{stem}.html"
            page.parent.mkdir(parents=True, exist_ok=True)
            page.write_text(nbfeedback.page(folder, sub.student, sub.assignment, stem, rec.db_url),
                            encoding="utf-8")
