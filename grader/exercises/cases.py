"""Building blocks for case generators: readable small inputs and awkward variants.

Cases are sorted from small to large before they are run, so the first failure a learner
sees is on the smallest input that shows it. Small cases use small integers so that a
learner can redo them by hand.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..compare import FLOAT32
from . import Case


def entries(x) -> int:
    if isinstance(x, np.ndarray):
        return int(x.size)
    if isinstance(x, (list, tuple)):
        return sum(entries(v) for v in x)
    if hasattr(x, "numel"):
        return int(x.numel())
    return 1 if isinstance(x, (int, float, Fraction, np.number)) else 0


def small_ints(rng: np.random.Generator, shape, low: int = -3, high: int = 3) -> np.ndarray:
    """Non-zero integer-valued floats in ``[low, high]``: easy to check by hand, and with
    no zeros that could hide a mistake on a small case."""
    values = np.array([v for v in range(low, high + 1) if v != 0], dtype=np.float64)
    return rng.choice(values, size=shape)


def normal(rng: np.random.Generator, shape, scale: float = 1.0) -> np.ndarray:
    return rng.normal(0.0, scale, size=shape)


def non_contiguous(a: np.ndarray) -> np.ndarray:
    """The same values as ``a`` in a strided view (every other element of a bigger array)."""
    big = np.zeros(tuple(2 * n for n in a.shape), dtype=a.dtype)
    view = big[tuple(slice(None, None, 2) for _ in a.shape)]
    view[...] = a
    assert not view.flags.c_contiguous or a.size <= 1
    return view


def as_float32(case: Case, note: str = "float32") -> Case:
    args = tuple(a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in case.args)
    return Case(args, dict(case.kwargs), note=note, tol=FLOAT32)


def as_lists(case: Case, note: str = "Python lists") -> Case:
    args = tuple(a.tolist() if isinstance(a, np.ndarray) else a for a in case.args)
    return Case(args, dict(case.kwargs), note=note, tol=case.tol)


def as_strided(case: Case, note: str = "strided views") -> Case:
    args = tuple(non_contiguous(a) if isinstance(a, np.ndarray) else a for a in case.args)
    return Case(args, dict(case.kwargs), note=note, tol=case.tol)


def scaled(case: Case, factor: float, note: str) -> Case:
    args = tuple(a * factor if isinstance(a, np.ndarray) else a for a in case.args)
    return Case(args, dict(case.kwargs), note=note, tol=case.tol)


def with_variants(base: list[Case], hidden: bool) -> list[Case]:
    """``base`` plus float32, list and strided versions of some of its cases."""
    out = list(base)
    picks = base[-3:] if hidden else base[-1:]
    for case in picks:
        out.append(as_float32(case))
        out.append(as_lists(case))
        out.append(as_strided(case))
    return out
