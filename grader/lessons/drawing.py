"""Building blocks for case generators: readable small inputs and awkward variants.

Cases are sorted from small to large before they are run, so the first failure a learner
sees is on the smallest input that shows it. Small cases use small integers so that a
learner can redo them by hand.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..learner.cases import Case, non_contiguous
from ..learner.difference import FLOAT32


def small_ints(rng: np.random.Generator, shape, low: int = -3, high: int = 3) -> np.ndarray:
    """Non-zero integer-valued floats in ``[low, high]``: easy to check by hand, and with
    no zeros that could hide a mistake on a small case."""
    values = np.array([v for v in range(low, high + 1) if v != 0], dtype=np.float64)
    return rng.choice(values, size=shape)


def normal(rng: np.random.Generator, shape, scale: float = 1.0) -> np.ndarray:
    return rng.normal(0.0, scale, size=shape)


def _convert(case: Case, convert, note: str, tol=None, only: Callable | None = None) -> Case:
    args = tuple(convert(a) if isinstance(a, np.ndarray) and (only is None or only(a)) else a
                 for a in case.args)
    return Case(args, dict(case.kwargs), note=note, tol=tol or case.tol)


def as_float32(case: Case, note: str = "float32", only=None) -> Case:
    return _convert(case, lambda a: a.astype(np.float32), note, FLOAT32, only)


def as_lists(case: Case, note: str = "Python lists", only=None) -> Case:
    return _convert(case, lambda a: a.tolist(), note, None, only)


def as_strided(case: Case, note: str = "strided views") -> Case:
    return _convert(case, non_contiguous, note)


def scaled(case: Case, factor: float, note: str) -> Case:
    return _convert(case, lambda a: a * factor, note)


def floats(a: np.ndarray) -> bool:
    return np.issubdtype(a.dtype, np.floating)


def with_variants(base: list[Case], hidden: bool, only: Callable | None = None) -> list[Case]:
    """``base`` plus float32, Python-list and strided versions of its last case (of its
    last three when hidden). ``only`` picks the arrays that float32 and lists apply to
    (``floats``: a mask stays a boolean array); strided views apply to every array."""
    out = list(base)
    for case in base[-3:] if hidden else base[-1:]:
        out.append(as_float32(case, only=only))
        out.append(as_lists(case, only=only))
        out.append(as_strided(case))
    return out


def attention_quantities(Q, K, *rest, **kwargs) -> dict[str, float]:
    """The numbers of one scaled dot-product case that a relation may name: the key
    width d_k and the scale √d_k, the numbers of queries T_q and keys T_k."""
    q, k = np.shape(Q), np.shape(K)
    return {"√d_k": float(np.sqrt(k[-1])), "d_k": k[-1], "T_k": k[-2],
            "T_q": q[-2] if len(q) > 1 else 1}
