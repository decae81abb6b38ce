"""How much an answer computes, measured as CPU time (an exercise's :class:`~grader.learner.cases.Work`).

Some rules are about work that leaves no trace in the result: a causal tile above the
diagonal adds exp(-inf) = 0 to every row, so an answer that computes it and then counts
it as skipped returns exactly what one that skips it returns. What differs is the time the
call takes. So the check runs the call twice, as it is and with ``against`` (the full,
non-causal call of the same sizes), and compares their CPU times: skipping the tiles above
the diagonal needs about n(n + 1)/2 of the n² tiles' work, computing them all about n².

The measure is CPU time, not wall time, so that other programs on the machine count only
as far as they slow the answer's own instructions (caches, a shared core). The pairs of
runs alternate, and the ratio is the median over the pairs; a ratio above the limit is
measured again (``attempts``) before the rule counts as broken.

Here (:func:`measure_here`) the answer's own process measures it, which the answer could
fool: that is a hint for a learner. At grading the operating system measures the kernel's
processes from outside the sandbox (``grader.grading.notebook.cpu``), and only that counts.
"""
from __future__ import annotations

import dataclasses
import statistics
import time
from dataclasses import dataclass
from typing import Callable

from . import codec
from .cases import ErrorInfo, Work
from .env import one_blas_thread, one_thread
from .fixtures import materialise


@dataclass
class Measured:
    """What a measure of work found: the ratio of the CPU times (the call over the one it
    is compared with), or the error the answer raised, or why nothing could be measured."""

    ratio: float | None = None
    error: ErrorInfo | None = None
    problem: str = ""

    def kept(self, work: Work) -> bool:
        return self.error is None and not self.problem and self.ratio is not None \
            and self.ratio <= work.most


def median_ratio(pairs: list[tuple[float, float]]) -> float:
    """The median of ``case / against`` over pairs of CPU times (an ``against`` time of 0,
    too short to measure, counts as the ratio 1)."""
    return statistics.median(c / a if a > 0 else 1.0 for c, a in pairs)


def measured(run: Callable[[dict], float], work: Work) -> Measured:
    """``work`` measured with ``run(kwargs)`` (the CPU seconds of one call of the case with
    ``kwargs`` in place of its own): pairs of runs, alternating, and again up to
    ``work.attempts`` times while the median ratio is above ``work.most``; the smallest
    median found."""
    best = None
    for _ in range(max(1, work.attempts)):
        pairs = [(run({}), run(work.against)) for _ in range(max(1, work.rounds))]
        ratio = median_ratio(pairs)
        best = ratio if best is None else min(best, ratio)
        if best <= work.most:
            break
    return Measured(ratio=best)


HERE_ROUNDS = 3  # pairs of runs in a notebook, where the check is a hint and must be quick


def measure_here(answer, work: Work, namespace: dict | None = None) -> Measured:
    """``work`` measured in this process, with ``time.process_time`` (every thread of the
    process), with NumPy's BLAS and torch on one thread (as at grading: a second thread
    waiting for its share on a busy machine costs more than the arithmetic), in at most
    :data:`HERE_ROUNDS` pairs of runs. The arguments are built once, and the answer runs
    once before the clock starts (imports, caches)."""
    from .agent import error_info, namespace_of

    data = codec.decode(codec.encode(work.case.for_kernel()))
    namespace = namespace_of(answer) if namespace is None else namespace
    args = list(materialise(data["args"], namespace))
    kwargs = materialise(data["kwargs"], namespace)

    def run(changed: dict) -> float:
        start = time.process_time()
        answer(*args, **{**kwargs, **changed})
        return time.process_time() - start

    try:
        with one_thread(), one_blas_thread():
            run({})
            return measured(run, dataclasses.replace(work, rounds=min(work.rounds, HERE_ROUNDS)))
    except Exception as exc:  # the learner's code may raise anything
        return Measured(error=error_info(exc, answer))


def message(name: str, work: Work, found: Measured) -> str:
    """What a check says when ``found`` breaks ``work``'s rule."""
    call = f"the timed call ({work.case.note})" if work.case.note else "the timed call"
    if found.error is not None:
        where = f"\n  at {found.error.where}" if found.error.where else ""
        return (f"{name} raised {found.error.type} on {call}: {found.error.message}{where}\n\n"
                f"The check times this call to see that {work.rule}.")
    if found.problem:
        return (f"{name}'s work could not be measured on {call}: {found.problem}.\n\n"
                f"The check times this call to see that {work.rule}.")
    lines = [f"{name}: {work.found.format(ratio=found.ratio)}", "",
             f"The rule: {work.rule}. The check times {call} against the same call with "
             f"{_kwargs(work.against)}: its CPU time must be at most {work.most:g} of that, "
             f"and it was {found.ratio:.2f} (the median over pairs of runs, one after the "
             f"other, measured {work.attempts} times)."]
    return "\n".join(lines)


def _kwargs(kwargs: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
