"""Which catalogued mistakes a rule of the error model reproduces at a named site.

For every catalogued mistake of every exercise, each mutant of the reference
(``grader.lessons.error_model.mutants``, before any is told apart from the catalogue) runs
on the visible and the hidden cases; a mutant that gives what the catalogued mistake
gives on every case (and is wrong somewhere with a number) reproduces it. Prints, per
catalogued mistake, the first mutant that does (or "-"), then the counts.

    PYTHONPATH=. .venv/bin/python benchmarks/catalogue_rules.py [--lesson 07]
"""
from __future__ import annotations

import argparse

from grader import lessons
from grader.learner.engine import holds_a_number
from grader.lessons.error_model import _differ, _quietly_run, _eligible, mutants


def reproducing(ex, mistake, found: list) -> list:
    """The mutants of ``found`` that give what ``mistake`` gives on every case, in order."""
    cases = [c for hidden in (False, True) for c in ex.draw(hidden) if c.build.memory_budget is None]
    cmp = ex.info.compare
    expected = _quietly_run(ex.reference, ex.driver, cases)
    answer = mistake.impl if mistake.sample is None else mistake.sample
    wanted = _quietly_run(answer, ex.driver, cases)
    if not any(w.error is None and holds_a_number(w.value) and _differ(cmp, c, e, w, True)
               for c, e, w in zip(cases, expected, wanted)):
        return []
    out = []
    for mutant in found:
        try:
            got = _quietly_run(mutant.impl, ex.driver, cases)
        except Exception:  # noqa: BLE001
            continue
        if not any(_differ(cmp, c, w, g, False) for c, w, g in zip(cases, wanted, got)):
            out.append(mutant)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lesson", default="", help="only lessons whose folder starts so")
    args = parser.parse_args()
    reached = total = 0
    for lesson in lessons.lessons():
        if not lesson.startswith(args.lesson):
            continue
        lessons._import(lesson)
        for name, ex in lessons.EXERCISES.items():
            if lessons.LESSONS.owner[name].folder != lesson or not ex.misconceptions:
                continue
            found = mutants(ex.reference) if _eligible(ex) else []
            print(f"== {lesson} {name} ({len(found)} mutants)")
            for mis in ex.misconceptions:
                total += 1
                hits = reproducing(ex, mis, found) if found else []
                reached += bool(hits)
                first = f"{hits[0].name} [{hits[0].where}]" if hits else "-"
                print(f"  {mis.name[:40]:<40} {first}")
    print(f"\nreproduced by a rule at a named site: {reached} of {total} catalogued mistakes")


if __name__ == "__main__":
    main()
