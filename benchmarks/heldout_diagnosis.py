"""How often does a check's message name the learner's actual mistake? (A measurement,
not a test.)

It runs every answer of the held-out set (``tests/heldout_answers.py``: wrong answers
written the way learners go wrong, and unusual right ones) through its exercise's check,
on the visible cases with the live reference, as a notebook's check cell does. A wrong
answer counts as *named* when every pattern written for its mistake matches the message's
diagnosis (the text before the input is shown; see ``tests/heldout.py``).

It prints, per lesson, the wrong answers named out of those measured, the share named
overall, how many messages run to 25 lines or more and the longest, and every right
answer that was rejected, with its message.

    PYTHONPATH=. .venv/bin/python benchmarks/heldout_diagnosis.py [--misses] [--json PATH]

``--misses`` also prints each unnamed answer: its id, what the learner got wrong, and the
first 6 lines of its message. ``--json PATH`` writes every answer's result.

With ``--set NAME`` it measures a set of wrong answers with their true causes instead
(``tests/causes.py``: set ``a`` was written before the error model's rules were) and
prints, per lesson, how many messages were judged RIGHT, VAGUE, WRONG or LEAK, and how
many wait for a judgement (never judged, or their diagnosis changed since).

    PYTHONPATH=. .venv/bin/python benchmarks/heldout_diagnosis.py --set a [--only h34-07]
        [--to-judge PATH] [--merge PATH]

``--to-judge PATH`` writes the answers that wait, each with its cause and diagnosis, for a
reader to judge; ``--merge PATH`` adds that reader's judgements (a JSON list of {"id",
"digest", "verdict", "why"}) to ``tests/judged/judged.json`` first.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))

from heldout import measure_all  # noqa: E402

LONG = 25  # lines: a message this long is too long to read in a notebook's output
SHOWN = 6  # lines of a missed answer's message shown with --misses


def report(results, misses: bool) -> str:
    wrong = [r for r in results if not r.right]
    right = [r for r in results if r.right]
    by_lesson = defaultdict(list)
    for r in wrong:
        by_lesson[r.lesson].append(r)
    width = max(len(lesson) for lesson in by_lesson)
    out = [f"{'lesson':<{width}}  named/total"]
    for lesson in sorted(by_lesson):
        rs = by_lesson[lesson]
        out.append(f"{lesson:<{width}}  {sum(bool(r.named) for r in rs):>5}/{len(rs)}")
    named = sum(bool(r.named) for r in wrong)
    out.append(f"\nnamed overall: {named}/{len(wrong)} = {named / len(wrong):.1%}")
    passed = [r for r in wrong if r.passed]
    if passed:
        out.append(f"wrong answers that passed their check: {', '.join(r.id for r in passed)}")
    long = [r for r in results if r.lines >= LONG]
    longest = max(results, key=lambda r: r.lines)
    out.append(f"messages of {LONG} lines or more: {len(long)} of {len(results)}; the longest: "
               f"{longest.lines} lines ({longest.id})")
    rejected = [r for r in right if not r.passed]
    out.append(f"right answers rejected: {len(rejected)} of {len(right)}")
    for r in rejected:
        out += [f"\n--- {r.id} ({r.exercise}): {r.about}", r.message]
    if misses:
        out.append("\nunnamed wrong answers:")
        for r in wrong:
            if not r.named:
                head = "\n".join("    " + line for line in r.message.splitlines()[:SHOWN])
                out += [f"\n{r.id} ({r.exercise}): {r.about}", head]
    return "\n".join(out)


def judged_report(measured) -> str:
    from causes import VERDICTS

    by_lesson = defaultdict(list)
    for m in measured:
        by_lesson[m.lesson].append(m)
    head = "".join(f"{v:>7}" for v in VERDICTS)
    out = [f"{'lesson':<28}{head}{'waiting':>9}{'RIGHT share':>13}"]
    for lesson in [*sorted(by_lesson), "all"]:
        ms = measured if lesson == "all" else by_lesson[lesson]
        counts = [sum(m.verdict == v for m in ms) for v in VERDICTS]
        done = sum(counts)
        share = f"{counts[0] / done:.0%}" if done else "-"
        out.append(f"{lesson:<28}" + "".join(f"{c:>7}" for c in counts)
                   + f"{len(ms) - done:>9}{share:>13}")
    long = [m for m in measured if m.lines >= LONG]
    out.append(f"\nmessages of {LONG} lines or more: {len(long)} of {len(measured)}"
               + (f" ({', '.join(m.id for m in long)})" if long else ""))
    passed = [m.id for m in measured if m.passed]
    if passed:
        out.append(f"wrong answers their check passed: {', '.join(passed)}")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", metavar="NAME", help="a set of answers with their causes (tests/causes.py)")
    parser.add_argument("--only", default="", help="with --set: only the ids that start with this")
    parser.add_argument("--to-judge", type=Path, metavar="PATH",
                        help="with --set: write the answers that wait for a judgement to PATH")
    parser.add_argument("--merge", type=Path, metavar="PATH",
                        help="with --set: first add the judgements in PATH to tests/judged/judged.json")
    parser.add_argument("--misses", action="store_true",
                        help="print every unnamed wrong answer and the start of its message")
    parser.add_argument("--json", type=Path, metavar="PATH",
                        help="write every answer's result to PATH")
    args = parser.parse_args()
    start = time.perf_counter()
    if args.set:
        import causes

        if args.merge:
            print(f"{causes.merge(args.merge)} judgements added")
        measured = causes.measure(args.set, args.only)
        print(judged_report(measured))
        print(f"\n({len(measured)} answers in {time.perf_counter() - start:.1f} s)")
        if args.to_judge:
            waiting = [{"id": m.id, "exercise": m.exercise, "cause": m.cause, "digest": m.digest,
                        "diagnosis": m.diagnosis} for m in measured if m.verdict is None]
            args.to_judge.write_text(json.dumps(waiting, indent=1, ensure_ascii=False) + "\n")
            print(f"{len(waiting)} answers to judge written to {args.to_judge}")
        return
    results = measure_all()
    print(report(results, args.misses))
    print(f"\n({len(results)} answers in {time.perf_counter() - start:.1f} s)")
    if args.json:
        args.json.write_text(json.dumps([r.as_dict() for r in results], indent=1) + "\n")


if __name__ == "__main__":
    main()
