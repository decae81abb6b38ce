"""Which catalogued mistakes a relation names as well as the catalogue does.

For every catalogued mistake of every exercise, the check runs twice on the visible
cases: as it is, and with no catalogue at all. The second run shows what the relations
(``grader.learner.relations``) say on their own. Prints, per exercise, each mistake's
relation (or "-") and the first line of the diagnosis without the catalogue, then the
catalogue's size in lines.

    PYTHONPATH=. .venv/bin/python benchmarks/catalogue_relations.py [--lesson 02]
"""
from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from grader import lessons
from grader.learner.checks import LocalSubject, find_expectations
from grader.learner.engine import judge


def diagnosis(message: str) -> str:
    for line in message.splitlines():
        if line.startswith(("Diagnosis:", "Hint:")):
            return line
    return "(no diagnosis)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lesson", default="", help="only lessons whose folder starts so")
    args = parser.parse_args()
    named = total = 0
    for lesson in lessons.lessons():
        if not lesson.startswith(args.lesson):
            continue
        lessons._import(lesson)
        for name, ex in lessons.EXERCISES.items():
            if lessons.LESSONS.owner[name].folder != lesson or not ex.misconceptions:
                continue
            exp = dataclasses.replace(lessons.expectations(name, False), mistakes=[])
            print(f"== {lesson} {name}")
            for mis in ex.misconceptions:
                answer = mis.impl if mis.sample is None else mis.sample
                verdict = judge(exp, LocalSubject(answer, exp.info.driver, name), expectations_of=find_expectations)
                total += 1
                named += bool(verdict.relation)
                print(f"  {mis.name[:34]:<34} {verdict.relation or '-':<10} "
                      f"{'' if not verdict.passed else 'PASSES '}{diagnosis(verdict.message)[:110]}")
    lines = sum(len(p.read_text().splitlines())
                for p in Path(lessons.HERE).glob("*/exercises.py"))
    print(f"\nnamed by a relation alone: {named} of {total}; exercises.py lines: {lines}")


if __name__ == "__main__":
    main()
