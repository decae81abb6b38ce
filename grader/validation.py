"""Input validation shared by the reference implementations and the notebooks.

Every graded function raises ``ValueError`` for bad input, and the message names the
argument and the shape it got. These helpers keep those messages uniform.
"""
from __future__ import annotations

import numpy as np


def shape_str(shape) -> str:
    """``(2, 3)`` -> ``"2×3"``; ``()`` -> ``"a scalar"``."""
    shape = tuple(shape)
    return "×".join(str(n) for n in shape) if shape else "a scalar"


def as_array(x, name: str, *, ndim: int | None = None, min_ndim: int | None = None) -> np.ndarray:
    """Convert ``x`` (array, list, tuple) to a float ndarray and check its number of axes.

    Integer and boolean input becomes float64; float32 stays float32.
    """
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError) as exc:  # ragged lists, for example
        raise ValueError(f"{name} could not be read as an array: {exc}") from None
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise ValueError(f"{name} must hold numbers, got an array of dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"{name} must be real, got dtype {arr.dtype}")
    if not np.issubdtype(arr.dtype, np.floating):
        arr = arr.astype(np.float64)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} axes, got shape {shape_str(arr.shape)}")
    if min_ndim is not None and arr.ndim < min_ndim:
        raise ValueError(
            f"{name} must have at least {min_ndim} axes, got shape {shape_str(arr.shape)}"
        )
    return arr


def as_matrix(x, name: str) -> np.ndarray:
    """A 2-D float array, or a ``ValueError`` naming ``name``."""
    return as_array(x, name, ndim=2)


def check_inner(a: np.ndarray, b: np.ndarray, a_name: str = "A", b_name: str = "B") -> None:
    """Raise unless the last axis of ``a`` matches the second-to-last axis of ``b``."""
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(
            f"cannot multiply {a_name} of shape {shape_str(a.shape)} by {b_name} of shape "
            f"{shape_str(b.shape)}: {a_name} has {a.shape[-1]} columns but {b_name} has "
            f"{b.shape[-2]} rows"
        )


def matmul_operands(A, B) -> tuple[np.ndarray, np.ndarray]:
    """Validate the operands of a 2-D product ``A @ B`` and return them as float arrays."""
    A = as_matrix(A, "A")
    B = as_matrix(B, "B")
    check_inner(A, B)
    return A, B


def result_dtype(*arrays: np.ndarray) -> np.dtype:
    """The float dtype a product of ``arrays`` should have (float32 stays float32)."""
    return np.result_type(*arrays, np.float32)


def as_fractions(x, name: str, *, ndim: int = 2, whole: bool = False) -> np.ndarray:
    """An object array of exact ``fractions.Fraction`` values (lesson 03's by-hand arithmetic).

    Accepts ints, Fractions and finite floats (converted exactly: 0.5 is 1/2, but 0.1 is not
    1/10), as arrays or nested lists. Raises ``ValueError`` naming ``name`` for ragged
    input, anything that is not a number, NaN or infinity, the wrong number of axes, no
    entries at all, and, with ``whole=True``, entries that are not whole numbers.
    """
    from fractions import Fraction
    from numbers import Rational

    try:
        arr = np.array(x, dtype=object)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} could not be read as an array: {exc}") from None
    out = np.empty(arr.shape, dtype=object)
    for idx in np.ndindex(arr.shape):
        v = arr[idx]
        where = f" at index {idx}" if arr.ndim else ""
        if isinstance(v, (list, tuple, np.ndarray)):
            raise ValueError(f"{name} could not be read as an array: its rows have different lengths")
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (Rational, float, np.integer, np.floating)):
            raise ValueError(f"{name} must hold numbers, got {v!r}{where}")
        if isinstance(v, (float, np.floating)):
            if not np.isfinite(v):
                raise ValueError(f"{name} must hold finite numbers, got {v}{where}")
            v = float(v)
        out[idx] = Fraction(v) if not isinstance(v, np.integer) else Fraction(int(v))
    if out.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} axes, got shape {shape_str(out.shape)}")
    if out.size == 0:
        raise ValueError(f"{name} has no entries (shape {shape_str(out.shape)})")
    if whole:
        for idx in np.ndindex(out.shape):
            if out[idx].denominator != 1:
                raise ValueError(f"{name} must hold whole numbers, got {out[idx]} at index {idx}")
    return out
