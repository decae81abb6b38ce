"""Which submitted file to grade as an assignment's notebook.

Students rename and copy notebooks: the work can sit in ``01_matmul_views-Copy1.ipynb``
beside an untouched ``01_matmul_views.ipynb``, or in a subfolder. Every notebook of the
submission is a candidate (except another of the assignment's own notebooks), and the one
graded is the one with the learner's work: the most answer cells changed from the
release, the notebook's own name winning a tie. Whatever was chosen is said in a note;
when more than one candidate holds work, or none does, a flag asks a person to look.

This runs in the grading worker, beside the rest of the handling of submitted notebooks:
the files are hostile, and reading them must not stop the batch.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath

from .repair import assemble, read_submission
from .status import WRITTEN

# Flags: short labels of what a person should know about a graded notebook.
MISSING, UNREADABLE, RENAMED, SEVERAL, UNTOUCHED = (
    "missing", "unreadable", "renamed", "several copies with work", "nothing answered")
NOT_GRADED = "could not be graded"  # over the grader's own wall limit, or reading it failed


@dataclass
class Choice:
    name: str | None  # the file graded, or None: there was no notebook
    notes: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    work: dict[str, int] = field(default_factory=dict)  # candidate -> answers changed (readable ones)


def candidates(files, name: str, course_notebooks) -> list[str]:
    """The submitted notebooks that could be ``name``: itself first, then every other
    notebook at any depth whose file name is not another notebook of the assignment."""
    others = set(course_notebooks) - {name}
    found = [f for f in files if f.endswith(".ipynb") and f != name
             and PurePosixPath(f).name not in others]
    return ([name] if name in files else []) + sorted(found)


def answers_changed(nb: dict, source, release) -> int:
    """How many answer cells (code or written) of ``nb`` differ from the release's."""
    plan = assemble(source, release, nb)
    return sum(1 for cell, kind, gid in zip(plan.nb.cells, plan.kinds, plan.grade_ids)
               if kind in WRITTEN and cell.source.strip() != plan.given.get(gid, "").strip())


def choose(names: list[str], files: dict[str, bytes], source, release, wanted: str,
           read=None) -> Choice:
    """The candidate to grade as notebook ``wanted``, with notes and flags. ``read(name)``
    reads a candidate (default: :func:`~grader.grading.notebook.repair.read_submission` of its bytes)."""
    if not names:
        return Choice(None, flags=[MISSING])
    read = read or (lambda name: read_submission(files[name]))
    work, unreadable = {}, []
    for name in names:
        nb, _ = read(name)
        if nb is None:
            unreadable.append(name)
        else:
            work[name] = answers_changed(nb, source, release)
    if not work:  # nothing readable: grade the first, whose problem the job reports
        return Choice(names[0], flags=[UNREADABLE])
    best = max(work.values())
    chosen = next(n for n in names if work.get(n) == best)
    choice = Choice(chosen, work=work)
    if chosen != wanted:
        choice.flags.append(RENAMED)
        if wanted in work:
            choice.notes.append(f"{wanted} has no more answers than the release in it; "
                                f"{chosen!r}, with {_answers(best)}, was graded in its place.")
        elif wanted in unreadable:
            choice.notes.append(f"{wanted} could not be read; {chosen!r}, with {_answers(best)}, "
                                "was graded in its place.")
        else:
            choice.notes.append(f"There was no {wanted}; {chosen!r}, with {_answers(best)}, was "
                                "graded in its place.")
    rivals = [n for n in names if n != chosen and work.get(n, 0) > 0]
    if rivals:
        choice.flags.append(SEVERAL)
        choice.notes.append("Other notebooks with work were not graded: " + ", ".join(
            f"{n!r} ({_answers(work[n])})" for n in rivals) + ".")
    if best == 0:
        choice.flags.append(UNTOUCHED)
        choice.notes.append(f"No answer in {chosen!r} differs from the release: nothing was answered.")
    return choice


def _answers(n: int) -> str:
    return f"{n} answer{'s' if n != 1 else ''} changed"
