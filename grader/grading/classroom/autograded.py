"""A submission's autograded folder: what nbgrader's feedback steps read.

``autograded/{student}/{assignment}/`` holds, as after ``nbgrader autograde``:

* every file the student handed in that is not a notebook (data, images, helpers), with
  the course's own copies of its files on top;
* ``timestamp.txt`` and ``submission_secret.txt``, which ``nbgrader collect`` wrote and
  ``generate_feedback`` / ``release_feedback`` read;
* the autograded notebooks (the assignment's, under their own names);
* ``.grading/``: what the checker said about each notebook (:mod:`grader.grading.classroom.nbfeedback`).

The submitted files are hostile. Nothing is written outside the folder (names are
relative, without ``..``, and the folder is made afresh, so no link is followed), a name
that cannot be written is left out with a note, and the two files nbgrader reads are
checked, because one bad file would stop ``release_feedback`` for the whole class:

* ``timestamp.txt`` is the submission's time when it reads as one (see
  :func:`grader.grading.classroom.submissions.read_timestamp`), else empty (nbgrader then treats
  the submission as having no time);
* ``submission_secret.txt`` is kept when it looks like one (printable ASCII, at most 1 KB)
  and no other submission of the class has the same one (a copied folder would send one
  student's feedback to the other); otherwise a new random secret takes its place, which
  only means this student cannot fetch the feedback through the exchange.
"""
from __future__ import annotations

import re
import secrets
import shutil
from collections import defaultdict
from pathlib import Path, PurePosixPath

from .nbfeedback import SIDECAR

TIMESTAMP, SECRET = "timestamp.txt", "submission_secret.txt"
GOOD_SECRET = re.compile(rb"[\x21-\x7e]{1,1024}\n?")


def exchange_secrets(subs) -> dict[tuple[str, str], tuple[bytes, str]]:
    """Per submission: the ``submission_secret.txt`` to keep and, when it is not the
    student's own, why (naming no other student: results may be shown to students)."""
    by_secret = defaultdict(list)
    for sub in subs:
        data = sub.files.get(SECRET)
        if data is not None and GOOD_SECRET.fullmatch(data):
            by_secret[(sub.assignment, data.strip())].append(sub.student)
    out = {}
    for sub in subs:
        data = sub.files.get(SECRET)
        if data is None:
            out[sub.key] = (_new_secret(), "")  # not handed in through the exchange
        elif not GOOD_SECRET.fullmatch(data):
            out[sub.key] = (_new_secret(), "its submission_secret.txt is not one nbgrader writes "
                            "(it was replaced: this student cannot fetch feedback from the exchange)")
        else:
            twins = len(by_secret[(sub.assignment, data.strip())]) - 1
            out[sub.key] = (_new_secret(), f"its submission_secret.txt is the same as that of "
                            f"{twins} other submission(s) of {sub.assignment} (a copied submission "
                            "folder?); it was replaced") if twins else (data, "")
    return out


def _new_secret() -> bytes:
    return secrets.token_hex(64).encode()


def _safe(name: str) -> PurePosixPath | None:
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or not path.parts or any(p in ("", ".", "..") for p in path.parts):
        return None
    return path


def write_folder(folder: Path, files: dict[str, bytes], course_files: dict[str, bytes],
                 timestamp: str | None, secret: bytes, notebooks: dict[str, bytes],
                 sidecars: dict[str, str]) -> list[str]:
    """Make ``folder`` afresh with the submission's files, the course's files, the
    exchange's two files, the autograded ``notebooks`` and their ``sidecars``; return
    notes on the files that could not be kept."""
    if folder.is_symlink() or folder.is_file():
        folder.unlink()
    elif folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    notes = []
    reserved = {TIMESTAMP, SECRET, *notebooks}
    for name, data in [*files.items(), *course_files.items()]:
        rel = _safe(name)
        if rel is None or rel.suffix == ".ipynb" or rel.parts[0] in (SIDECAR, *reserved):
            continue
        target = folder.joinpath(*rel.parts)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_dir():
                raise IsADirectoryError(f"a folder of the same name was handed in too")
            target.write_bytes(data)
        except OSError as exc:
            notes.append(f"{name!r} was not kept in the autograded folder: {exc.strerror or exc}.")
    (folder / TIMESTAMP).write_text(timestamp or "", encoding="utf-8")
    (folder / SECRET).write_bytes(secret)
    for name, data in notebooks.items():
        (folder / name).write_bytes(data)
    (folder / SIDECAR).mkdir()
    for stem, text in sidecars.items():
        (folder / SIDECAR / f"{stem}.json").write_bytes(text.encode("utf-8", "backslashreplace"))
    return notes
