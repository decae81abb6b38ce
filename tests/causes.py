"""Held-out wrong answers with their true causes (``tests/judged/set_*.py``), and what a
reader judged of each one's message (``tests/judged/judged.json``).

Each set was written from the student notebooks and the README alone, by someone who had
read neither the checks, nor the rules of the error model, nor the catalogue of mistakes.
Each answer carries its true cause, written by its author. A message is judged against
that cause, by someone who reads only the two, as one of:

- RIGHT: it names the cause, or the exact place, so that the learner would fix it;
- VAGUE: true, but no lead to the fix;
- WRONG: it misleads (names another mistake, or accepts the answer);
- LEAK: it hands over solution code.

A judgement is kept with the digest of the diagnosis it was made on (the message up to the
input it shows). When a change of the checks changes a diagnosis, its judgement no longer
counts, and the answer waits for a new one (``benchmarks/heldout_diagnosis.py
--to-judge``).
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent / "judged"
SETS = {
    # written before the error model's rules, and used while they were built
    "a": ("set_a_01_04.py", "set_a_05_08.py"),
    # written after them, by other writers, and never used to build them
    "b": ("set_b_01_04.py", "set_b_05_08.py"),
    # written after set b's misses had led to three more kinds of rule, and never used to build
    "c": ("set_c_01_04.py", "set_c_05_08.py"),
    # written after the catalogue shrank and the rules for a return inside a loop, a copy
    # left out, `=` for `+=`, `*` for `@`, swapped indices, a reduction over every axis and
    # two sites no case tells apart; never used to build anything
    "d": ("set_d_01_04.py", "set_d_05_08.py"),
    # written by new writers while the rules for another computed value, another loop's
    # counter, a row for a column, a transpose added, 0 for minus infinity and the same
    # slip at two sites were built, and read only once those rules were done
    "e": ("set_e_01_04.py", "set_e_05_08.py"),
    # written by new writers after the rules for a parameter read where a computed value
    # belongs, another axis's length, and a right composite that says what its failing
    # helper's own check says; never used to build anything
    "f": ("set_f_01_04.py", "set_f_05_08.py"),
}
VERDICTS = ("RIGHT", "VAGUE", "WRONG", "LEAK")
JUDGED = HERE / "judged.json"


def answers(name: str) -> list:
    """The wrong answers of set ``name``, in order."""
    found = []
    for filename in SETS[name]:
        spec = importlib.util.spec_from_file_location(f"causes_{Path(filename).stem}", HERE / filename)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        found += module.WRONG
    return found


def digest(diagnosis: str) -> str:
    return hashlib.sha256(" ".join(diagnosis.split()).encode()).hexdigest()[:16]


@dataclass
class Measured:
    id: str
    exercise: str
    lesson: str
    cause: str
    passed: bool
    diagnosis: str
    lines: int
    digest: str
    verdict: str | None  # None: never judged, or judged on another diagnosis


def judged() -> dict:
    """Every judgement: id -> {"verdict", "why", "digest"}."""
    if not JUDGED.exists():
        return {}
    data = json.loads(JUDGED.read_text())
    for key, entry in data.items():
        if entry.get("verdict") not in VERDICTS:
            raise ValueError(f"{JUDGED.name}: {key} has the verdict {entry.get('verdict')!r}, "
                             f"not one of {', '.join(VERDICTS)}")
    return data


def measure(name: str, only: str = "") -> list[Measured]:
    """Every answer of set ``name`` (whose id starts with ``only``) through its check, with
    the judgement of its diagnosis, if there is one for this diagnosis."""
    import warnings

    import numpy as np

    from grader import lessons
    from grader.learner.env import quiet
    from heldout import diagnosis, judge

    verdicts = judged()
    out = []
    for answer in answers(name):
        if not answer.id.startswith(only):
            continue
        with quiet(), warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            verdict = judge(answer)
        # A composite that passes with a stand-in for a helper that fails its own check
        # (the mistake is in that helper) says so, and that is its message.
        text = (f"(the check passed it, and said:) {verdict.message.strip()}" if verdict.stood_in
                else "(the check passed it)") if verdict.passed else diagnosis(verdict.message).strip()
        found = digest(text)
        entry = verdicts.get(answer.id, {})
        out.append(Measured(answer.id, answer.exercise, lessons.lesson_of(answer.exercise), answer.cause,
                            verdict.passed, text, len(verdict.message.splitlines()), found,
                            entry.get("verdict") if entry.get("digest") == found else None))
    return out


def merge(path: Path) -> int:
    """Add the judgements in ``path`` (a JSON list of {"id", "digest", "verdict", "why"})
    to :data:`JUDGED`; return how many."""
    data = judged()
    new = json.loads(Path(path).read_text())
    for entry in new:
        if entry.get("verdict") not in VERDICTS:
            raise ValueError(f"{path}: {entry.get('id')} has the verdict {entry.get('verdict')!r}")
        data[entry["id"]] = {"verdict": entry["verdict"], "why": entry.get("why", ""),
                             "digest": entry["digest"]}
    JUDGED.write_text(json.dumps(dict(sorted(data.items())), indent=1, ensure_ascii=False) + "\n")
    return len(new)
