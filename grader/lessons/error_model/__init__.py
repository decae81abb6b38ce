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
        return tuple(_mistake(found[i], found[alias[0]] if alias else None)
                     for i, _, *alias in entry["kept"])
    kept = _kept(ex, found)
    index = {id(m.impl): i for i, m in enumerate(found)}
    _FRESH[ex.name] = {"fingerprint": mark, "kept": [
        [index[id(k.impl)], k.name, *([index[id(k.alias.impl)]] if k.alias else [])] for k in kept]}
    return tuple(_mistake(k.mutant, k.alias) for k in kept)


def _mistake(mutant: Mutant, alias: Mutant | None) -> ModelMistake:
    return ModelMistake(mutant.name, mutant.impl, both(mutant, alias) if alias else mutant.message)


def both(first: Mutant, second: Mutant) -> str:
    """The message of two edits at two sites that no visible case tells apart: naming one
    would send the learner to the wrong place half the time, so both are named."""
    a, b = dict(first.detail), dict(second.detail)
    fixes = [first.rule.fix(first.site, **a), second.rule.fix(second.site, **b)]
    fix = fixes[0] if fixes[0] == fixes[1] else f"{fixes[0]} Or, in the second place: {fixes[1]}"
    return (f"your answer behaves exactly as if {first.rule.did(first.site, **a)}, or as if "
            f"{second.rule.did(second.site, **b)}: no case tells the two apart. {fix}")


@dataclass(frozen=True)
class _Kept:
    mutant: Mutant
    alias: Mutant | None = None  # another site's edit that behaves the same on every visible case

    @property
    def name(self) -> str:
        return self.mutant.name

    @property
    def impl(self):
        return self.mutant.impl


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


def _kept(ex, found: list) -> list:
    # A case with a memory budget runs large inputs under a memory measure; the rest are
    # enough to tell the mutants apart.
    cases = [c for c in ex.draw(False) if c.build.memory_budget is None]
    cmp = ex.info.compare
    expected = _quietly_run(ex.reference, ex.driver, cases)
    seen = [_quietly_run(m.impl, ex.driver, cases) for m in ex.misconceptions]
    owners: list[int | None] = [None] * len(seen)  # the kept mutant each of ``seen`` is, if one
    kept: list[_Kept] = []
    for mutant in found:
        try:
            outcomes = _quietly_run(mutant.impl, ex.driver, cases)
        except Exception:  # noqa: BLE001 (an edit that breaks more than the answer: never named)
            continue
        wrong = [o.error is None and _differ(cmp, c, e, o, True) for c, e, o in zip(cases, expected, outcomes)]
        if not any(w and holds_a_number(o.value) for w, o in zip(wrong, outcomes)):
            continue  # never wrong, or wrong only as NaN or inf, which many mistakes give
        alike = [i for i, other in enumerate(seen)
                 if not any(_differ(cmp, c, o, t, False) for c, o, t in zip(cases, outcomes, other))]
        if alike:
            k = owners[alike[0]]
            if k is not None and kept[k].alias is None and kept[k].mutant.site != mutant.site:
                kept[k] = _Kept(kept[k].mutant, mutant)
            continue
        try:
            again = _quietly_run(mutant.impl, ex.driver, cases)
        except Exception:  # noqa: BLE001 (as above)
            continue
        if any(_differ(cmp, c, o, a, False) for c, o, a in zip(cases, outcomes, again)):
            continue  # gives another value when run again (memory never written, a draw)
        seen.append(outcomes)
        owners.append(len(kept))
        for case, outcome in zip(cases, outcomes):
            _KNOWN[id(mutant.impl), _key(case)] = outcome
        kept.append(_Kept(mutant))
    return kept


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
