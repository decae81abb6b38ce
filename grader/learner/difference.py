"""Comparing a learner's result with the reference, and saying how they differ.

``difference(expected, actual, tol)`` returns ``None`` when the two agree and otherwise a
short sentence that says what differs (type, shape, NaN, the largest error). It walks
tuples, lists and dicts, so functions that return ``(output, weights)`` or a dict of
steps are compared part by part.

Tolerance (the one the checks document): two float arrays agree when
``|actual - expected| <= atol + rtol * |expected|`` elementwise, with

* ``rtol = 1e-6`` and ``atol = 1e-9 * max(1, max|expected|)`` for float64 work,
* ``rtol = 1e-4`` and ``atol = 1e-5 * max(1, max|expected|)`` when any input is float32,

so that a correct float32 implementation passes and a real mistake never does. NaN
agrees only with NaN in the same place. Exact types (``Fraction``, ``int``, ``bool``)
must be equal.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from numbers import Number

import numpy as np

from .validation import scalar_str, shape_str


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol_scale: float

    def atol(self, expected: np.ndarray) -> float:
        finite = expected[np.isfinite(expected)] if expected.size else expected
        top = float(np.max(np.abs(finite))) if finite.size else 1.0
        return self.atol_scale * max(1.0, top)


FLOAT64 = Tolerance(rtol=1e-6, atol_scale=1e-9)
FLOAT32 = Tolerance(rtol=1e-4, atol_scale=1e-5)


def _is_torch(x) -> bool:
    return type(x).__module__.startswith("torch")


def to_numpy(x):
    """Torch tensors and array-likes to ndarrays; other values unchanged."""
    if _is_torch(x) and hasattr(x, "detach"):
        return x.detach().cpu().numpy()
    return x


def _numeric_array(x) -> np.ndarray | None:
    x = to_numpy(x)
    if isinstance(x, (bool, np.bool_)):
        return None
    if isinstance(x, np.ndarray):
        return x if x.dtype != object else None
    if isinstance(x, (list, tuple)) or (isinstance(x, Number) and not isinstance(x, Fraction)):
        try:
            arr = np.asarray(x)
        except (TypeError, ValueError):
            return None
        return arr if np.issubdtype(arr.dtype, np.number) or arr.dtype == bool else None
    return None


def _type_name(x) -> str:
    if x is None:
        return "None"
    if isinstance(x, np.ndarray):
        return f"an array of shape {shape_str(x.shape)}"
    opaque = getattr(x, "type", None) if type(x).__name__ == "Opaque" else None
    return f"a {opaque.rsplit('.', 1)[-1]}" if opaque else f"a {type(x).__name__}"


def _arrays_differ(expected: np.ndarray, actual: np.ndarray, tol: Tolerance, where: str) -> str | None:
    if actual.shape != expected.shape:
        hint = ""
        if actual.ndim == expected.ndim >= 2 and actual.shape == expected.shape[:-2] + expected.shape[:-3:-1]:
            hint = " (the last two axes are swapped: is the result transposed?)"
        return (
            f"{where}shape is {shape_str(actual.shape)}, expected {shape_str(expected.shape)}{hint}"
        )
    if expected.dtype == bool or actual.dtype == bool:
        if expected.dtype != actual.dtype:
            return f"{where}dtype is {actual.dtype}, expected {expected.dtype}"
        bad = np.argwhere(actual != expected)
        if bad.size:
            idx = tuple(int(i) for i in bad[0])
            return (
                f"{where}{len(bad)} of {actual.size} entries differ; first at index {idx}: "
                f"got {actual[idx]}, expected {expected[idx]}"
            )
        return None
    if not np.issubdtype(actual.dtype, np.number):
        return f"{where}dtype is {actual.dtype}, expected numbers"
    exp = expected.astype(np.float64)
    act = actual.astype(np.float64)
    nan_act, nan_exp = np.isnan(act), np.isnan(exp)
    if (nan_act & ~nan_exp).any():
        if act.ndim == 0:
            return f"{where}got NaN where a number was expected"
        idx = tuple(int(i) for i in np.argwhere(nan_act & ~nan_exp)[0])
        return f"{where}contains NaN (first at index {idx}) where a number was expected"
    if (nan_exp & ~nan_act).any():
        if act.ndim == 0:
            return f"{where}got {float(act):.6g} where NaN was expected"
        idx = tuple(int(i) for i in np.argwhere(nan_exp & ~nan_act)[0])
        return f"{where}has a number at index {idx} where NaN was expected"
    ok = np.isclose(act, exp, rtol=tol.rtol, atol=tol.atol(exp), equal_nan=True)
    if ok.all():
        return None
    bad = np.argwhere(~ok)
    idx = tuple(int(i) for i in bad[0])
    with np.errstate(invalid="ignore"):
        err = np.abs(act - exp)
    worst = float(np.nanmax(np.where(ok, 0.0, err)))
    if act.ndim == 0:
        return f"{where}got {float(act):.6g}, expected {float(exp):.6g} (error {worst:.3g})"
    return (
        f"{where}{len(bad)} of {act.size} entries differ (largest error {worst:.3g}); "
        f"first at index {idx}: got {act[idx]:.6g}, expected {exp[idx]:.6g}"
    )


def difference(expected, actual, tol: Tolerance = FLOAT64, where: str = "") -> str | None:
    """``None`` if ``actual`` matches ``expected`` within ``tol``, else what differs.

    A NumPy boolean array (a mask) must come back as a NumPy array: a mask in a list or a
    tensor has the right pattern but not what the next step needs (``~mask``,
    ``np.where``). Other values are compared by their numbers, whatever holds them."""
    if isinstance(expected, np.ndarray) and expected.dtype == bool and actual is not None \
            and not isinstance(actual, np.ndarray):
        return f"{where}returned {_type_name(actual)}, expected a NumPy array of dtype bool"
    expected, actual = to_numpy(expected), to_numpy(actual)
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{where}returned {_type_name(actual)}, expected a dict with keys {sorted(expected)}"
        missing = [k for k in expected if k not in actual]
        if missing:
            return f"{where}the dict is missing the key(s) {missing}"
        for key in expected:
            diff = difference(expected[key], actual[key], tol, f"{where}[{key!r}]: ")
            if diff:
                return diff
        return None
    if isinstance(expected, tuple):
        if not isinstance(actual, (tuple, list)):
            return (
                f"{where}returned {_type_name(actual)}, expected a tuple of {len(expected)} "
                f"values"
            )
        if len(actual) != len(expected):
            return f"{where}returned {len(actual)} values, expected {len(expected)}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            diff = difference(e, a, tol, f"{where}item {i}: ")
            if diff:
                return diff
        return None
    if isinstance(expected, np.ndarray) and expected.dtype == object:
        return _object_arrays_differ(expected, actual, where)
    exp_arr = _numeric_array(expected)
    if exp_arr is not None:
        if actual is None:
            return f"{where}returned None (is a `return` statement missing?)"
        act_arr = _numeric_array(actual)
        if act_arr is None:
            return f"{where}returned {_type_name(actual)}, expected numbers"
        return _arrays_differ(exp_arr, act_arr, tol, where)
    if expected != actual:
        return f"{where}got {scalar_str(actual)}, expected {scalar_str(expected)}"
    return None


def _object_arrays_differ(expected: np.ndarray, actual, where: str) -> str | None:
    """Exact comparison for arrays of Fractions (arithmetic done by hand)."""
    if not isinstance(actual, np.ndarray):
        try:
            actual = np.array(actual, dtype=object)
        except (TypeError, ValueError):
            return f"{where}returned {_type_name(actual)}, expected an array"
    if actual.shape != expected.shape:
        return f"{where}shape is {shape_str(actual.shape)}, expected {shape_str(expected.shape)}"
    for idx in np.ndindex(expected.shape):
        a, e = actual[idx], expected[idx]
        try:
            equal = Fraction(a) == Fraction(e)
        except (TypeError, ValueError):
            equal = False
        if not equal:
            return f"{where}entry {idx} is {a}, expected {e} (exactly)"
    return None
