"""What a batch writes for people and programs: JSON results, grades.csv, progress."""
from __future__ import annotations

import csv
import datetime as dt
import io
import json
import sys
import time
from pathlib import Path


def submission_record(student: str, assignment: str, results, sandbox: str, timestamp: str | None) -> dict:
    """One student's results for one assignment (``results``: a JobResult per notebook)."""
    tests, manual = [], []
    for res in results:
        nb = Path(res.notebook).stem
        tests += [{"notebook": nb, **t} for t in res.tests]
        manual += [{"notebook": nb, **m} for m in res.manual]
    statuses = {r.status for r in results}
    status = "failed" if "failed" in statuses else ("graded" if "graded" in statuses else "missing")
    return {
        "student": student,
        "assignment": assignment,
        "status": status,
        "score": sum(t["points"] for t in tests),
        "max": sum(t["max"] for t in tests),
        "manual_max": sum(m["max"] for m in manual),
        "tests": tests,
        "manual": manual,
        "repairs": [r for res in results for r in res.repairs],
        "incidents": [i for res in results for i in res.incidents],
        "notes": [n for res in results for n in res.notes],
        "integrity": [n for res in results for n in res.integrity],
        "errors": [res.error for res in results if res.error],
        "sandbox": sandbox,
        "seconds": round(sum(r.seconds for r in results), 3),
        "timestamp": timestamp,
        "graded_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }


def write_json(path: Path, record: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def grades_csv(records: list[dict], columns: list[str]) -> str:
    """A row per student and assignment: each graded cell's points, total, max, status.
    Cells graded by hand stay empty until they are graded in formgrader."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["student", "assignment", *columns, "total", "max", "status", "integrity"])
    for rec in sorted(records, key=lambda r: (r["student"], r["assignment"])):
        points = {t["id"]: t["points"] for t in rec["tests"]}
        row = [rec["student"], rec["assignment"]]
        row += [f"{points[c]:g}" if c in points else "" for c in columns]
        row += [f"{rec['score']:g}", f"{rec['max']:g}", rec["status"], " | ".join(rec.get("integrity", []))]
        writer.writerow(row)
    return out.getvalue()


class Progress:
    """A bar with the ETA on a terminal; otherwise one line per finished submission."""

    def __init__(self, total: int, stream=None):
        self.stream = stream or sys.stdout
        self.total, self.done, self.start = total, 0, time.monotonic()
        self.bar = None
        if self.stream.isatty():
            import shutil

            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="submission", file=self.stream,
                            ncols=min(shutil.get_terminal_size((100, 24)).columns, 120),
                            bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}]{postfix}")

    def finished(self, record: dict) -> None:
        self.done += 1
        line = self.describe(record)
        if self.bar is not None:
            if record["status"] != "graded" or record["incidents"] or record.get("integrity"):
                self.bar.write(line, file=self.stream)
            self.bar.set_postfix_str(f"{record['student']}/{record['assignment']}", refresh=False)
            self.bar.update(1)
        else:
            print(f"[{self.done}/{self.total}] {line}", file=self.stream, flush=True)

    @staticmethod
    def describe(record: dict) -> str:
        text = (f"{record['student']}/{record['assignment']}: {record['score']:g}/{record['max']:g}"
                f" ({record['status']}, {record['seconds']:.1f} s)")
        extra = []
        if record["repairs"]:
            extra.append(f"{len(record['repairs'])} repair(s)")
        if record["incidents"]:
            extra.append(f"{len(record['incidents'])} incident(s)")
        if record["errors"]:
            extra.append("grader error: " + record["errors"][0].strip().splitlines()[-1])
        if record.get("integrity"):
            extra.append(f"INTEGRITY: {'; '.join(record['integrity'])}")
        return text + (f" [{'; '.join(extra)}]" if extra else "")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
