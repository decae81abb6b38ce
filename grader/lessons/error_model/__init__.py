"""The error model: a learner's wrong answer is, most often, a right program with one small
edit. The rules (:mod:`.rules`) make those edits at the named sites of a reference
(:mod:`.search`); the mutants that behave unlike the reference, unlike the catalogued
mistakes and unlike each other on an exercise's visible cases become mistakes of that
exercise, recorded at release and diagnosed as the catalogued ones are. A mutant is
named only when it behaves like the answer on every case (``MistakeRecord.exact``).
"""
from __future__ import annotations

import copy
import functools
import hashlib
import inspect
import json
import types
from dataclasses import dataclass
from pathlib import Path

from ...learner import agent
from ...learner.engine import holds_a_number
from .search import Mutant, mutants

__all__ = ["ModelMistake", "model_mistakes", "Mutant", "mutants"]


def _differ(cmp, case, a, b, against_reference: bool) -> bool:
    if a.error is not None or b.error is not None:
        return not (a.error is not None and b.error is not None and a.error.type == b.error.type)
    try:
        return cmp.differ(a.value, b.value, case, against_reference=against_reference) is not None
    except Exception:  # noqa: BLE001 (a comparison reads a reference's value first: two mutants'
        return True     # values it cannot read side by side are told apart)


def _quietly_run(impl, driver, cases):
    import warnings

    import numpy as np

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return agent.run(impl, driver, cases)


@dataclass(frozen=True)
class ModelMistake:
    """A mutant kept as a mistake of an exercise: named as a catalogued one is, and named
    only when it behaves like the answer on every case (``exact``)."""

    name: str
    impl: object
    message: str
    exact: bool = True


_KEPT: dict[str, tuple] = {}

# Which mutants each exercise keeps is decided at release, where they are told apart on the
# visible cases, and stored (``kept.json``): a grading process only builds the mutants and
# takes those, never runs them all again. An entry holds for the files it was decided from
# (:func:`fingerprint`); an exercise whose entry does not hold is told apart afresh.
STORE = Path(__file__).with_name("kept.json")
_FRESH: dict[str, dict] = {}  # entries decided in this process, for release to store


def model_mistakes(ex) -> tuple:
    """The error model's mistakes of the exercise ``ex``: each mutant that gives a value
    unlike the reference's on some visible case, and behaves unlike every catalogued
    mistake and every mutant kept before it on some case (decided at release and stored;
    once per process where the stored entry does not hold)."""
    if ex.name not in _KEPT:
        _KEPT[ex.name] = _mistakes(ex)
    return _KEPT[ex.name]


def _eligible(ex) -> bool:
    return ex.driver.calls_answer and ex.record is None and \
        isinstance(ex.reference, (types.FunctionType, type))


def _mistakes(ex) -> tuple:
    if not _eligible(ex):
        return ()
    found = mutants(ex.reference)
    if not found:
        return ()
    mark = fingerprint(ex, found)
    entry = stored().get(ex.name)
    if entry is not None and entry.get("fingerprint") == mark:
        chosen = [found[i] for i, _ in entry["kept"]]
        return tuple(ModelMistake(m.name, m.impl, m.message) for m in chosen)
    kept = _kept(ex, found)
    index = {id(m.impl): i for i, m in enumerate(found)}
    _FRESH[ex.name] = {"fingerprint": mark, "kept": [[index[id(k.impl)], k.name] for k in kept]}
    return kept


def fingerprint(ex, found: list) -> str:
    """What an exercise's kept mutants were decided from: the error model's code, the
    lesson's reference and exercises (the folder of the reference's file), and the
    mutants themselves."""
    folder = Path(inspect.getsourcefile(ex.reference)).parent
    files = [*sorted(Path(__file__).parent.glob("*.py")), folder / "reference.py", folder / "exercises.py"]
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0")
        digest.update(path.read_text(encoding="utf-8").replace("\r\n", "\n").encode())
    for m in found:
        digest.update(f"{m.name}\0{m.where}\0{m.detail!r}\n".encode())
    return digest.hexdigest()[:16]


@functools.cache
def stored() -> dict:
    if not STORE.is_file():
        return {}
    return json.loads(STORE.read_text(encoding="utf-8"))


def stale_entries() -> list[str]:
    """The exercises whose kept mutants were decided afresh in this process (their stored
    entry was missing or did not hold)."""
    return sorted(_FRESH)


def store(names, known) -> Path:
    """Write the entries of the exercises ``names`` (from this process, else as stored),
    dropping the entries of exercises not in ``known`` (every exercise there is)."""
    out = {name: entry for name, entry in stored().items() if name in known}
    for name in names:
        if name in _FRESH:
            out[name] = _FRESH[name]
    STORE.write_text(json.dumps(dict(sorted(out.items())), indent=1) + "\n", encoding="utf-8")
    stored.cache_clear()
    return STORE


def _kept(ex, found: list) -> tuple:
    # A case with a memory budget runs large inputs under a memory measure; the rest are
    # enough to tell the mutants apart.
    cases = [c for c in ex.draw(False) if c.build.memory_budget is None]
    cmp = ex.info.compare
    expected = _quietly_run(ex.reference, ex.driver, cases)
    seen = [_quietly_run(m.impl, ex.driver, cases) for m in ex.misconceptions]
    kept = []
    for mutant in found:
        try:
            outcomes = _quietly_run(mutant.impl, ex.driver, cases)
        except Exception:  # noqa: BLE001 (an edit that breaks more than the answer: never named)
            continue
        wrong = [o.error is None and _differ(cmp, c, e, o, True) for c, e, o in zip(cases, expected, outcomes)]
        if not any(w and holds_a_number(o.value) for w, o in zip(wrong, outcomes)):
            continue  # never wrong, or wrong only as NaN or inf, which many mistakes give
        if any(not any(_differ(cmp, c, o, t, False) for c, o, t in zip(cases, outcomes, other))
               for other in seen):
            continue
        try:
            again = _quietly_run(mutant.impl, ex.driver, cases)
        except Exception:  # noqa: BLE001 (as above)
            continue
        if any(_differ(cmp, c, o, a, False) for c, o, a in zip(cases, outcomes, again)):
            continue  # gives another value when run again (memory never written, a draw)
        seen.append(outcomes)
        for case, outcome in zip(cases, outcomes):
            _KNOWN[id(mutant.impl), _key(case)] = outcome
        kept.append(ModelMistake(mutant.name, mutant.impl, mutant.message))
    return tuple(kept)


# What a kept mutant gave on a visible case, while it was told apart from the others: the
# recording asks again for the same cases (the mutants live as long as this process).
_KNOWN: dict = {}


def _key(case) -> str:
    from ...learner import codec

    return codec.dumps(case.for_kernel())


def run_mistake(impl, driver, cases: list) -> list:
    """``impl`` (a mistake of the error model) on ``cases``, reusing what it gave while it
    was told apart from the others; None on a case with a memory budget, which it is not
    run on (its large inputs and its measure cost far more than they tell)."""
    todo = [i for i, c in enumerate(cases) if c.build.memory_budget is None]
    keys = {i: _key(cases[i]) for i in todo}
    out = {i: _KNOWN.get((id(impl), keys[i])) for i in todo}
    missing = [i for i in todo if out[i] is None]
    for i, outcome in zip(missing, _quietly_run(impl, driver, [cases[i] for i in missing])):
        out[i] = outcome
    return [copy.deepcopy(out[i]) if i in out else None for i in range(len(cases))]
