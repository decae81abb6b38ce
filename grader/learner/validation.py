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


def scalar_str(x) -> str:
    """A value as a message writes it: a NumPy scalar as the number it holds (``nan``,
    ``2.5``, ``True``), not as NumPy's ``np.float64(nan)``; anything else as repr."""
    if isinstance(x, (np.str_, np.bytes_)):
        return repr(x.item())
    if isinstance(x, np.generic) and not isinstance(x, np.void):
        return str(x)
    return repr(x)


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


def positive_int(x, name: str) -> int:
    """A positive Python int (a sequence length, a dimension), or a ``ValueError`` naming
    ``name``. NumPy integers are accepted; booleans and floats are not."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise ValueError(f"{name} must be a positive integer, got {x!r} of type {type(x).__name__}")
    if x < 1:
        raise ValueError(f"{name} must be a positive integer, got {x}")
    return int(x)


def lengths_array(lengths, T: int, name: str = "lengths") -> np.ndarray:
    """One length per sentence of a padded batch: a 1-D int64 array, every entry in 0..T.

    Whole-number floats (``3.0``) are accepted; anything else raises a ``ValueError``.
    """
    try:
        arr = np.asarray(lengths)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} could not be read as an array: {exc}") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(
            f"{name} must be a 1-D list with one length per sentence, got shape {shape_str(arr.shape)}"
        )
    whole = np.issubdtype(arr.dtype, np.integer) or (
        np.issubdtype(arr.dtype, np.floating) and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))
    )
    if arr.dtype == bool or not whole:
        raise ValueError(f"{name} must hold whole numbers, got {arr.tolist()}")
    arr = arr.astype(np.int64)
    if np.any(arr < 0) or np.any(arr > T):
        raise ValueError(f"every entry of {name} must lie between 0 and T = {T}, got {arr.tolist()}")
    return arr


def bool_mask(mask, shape=None, name: str = "mask") -> np.ndarray:
    """A boolean mask as an array; with ``shape``, it must broadcast to that shape without
    making it bigger (a mask may omit or shrink leading axes, not add them)."""
    arr = np.asarray(mask)
    if arr.dtype != bool:
        raise ValueError(
            f"{name} must be a boolean array (True = may attend), got dtype {arr.dtype} and shape "
            f"{shape_str(arr.shape)}"
        )
    if shape is not None:
        shape = tuple(shape)
        try:
            fits = np.broadcast_shapes(arr.shape, shape) == shape
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(
                f"{name} of shape {shape_str(arr.shape)} does not broadcast to shape {shape_str(shape)}"
            )
    return arr


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
    """An object array of exact ``fractions.Fraction`` values (arithmetic done by hand).

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
