"""Stand-ins: a learner's graded helper replaced by the reference's recorded results.

A composite (attention that calls the learner's own softmax) is judged on its own: when
the learner's helper fails its own check, the composite runs again with a stand-in in
the helper's place, so that one bug costs only its own points.

A stand-in knows the helper's results only on the inputs the reference passes it on the
composite's cases, and each result is *sealed* with a key made from those inputs:

* the inputs are bound to the helper's parameters (so ``softmax(S)``,
  ``softmax(S, -1)`` and ``softmax(S, axis=-1)`` are one call), then fingerprinted:
  flags, integers and masks exactly; numbers on a grid of 2^-16 of the largest entry,
  each entry shifted to the middle of its cell (:func:`grid_for`), so a learner who
  computes the same scores in another order, or in float32, finds the same key;
* the result is encrypted with a keystream drawn from SHAKE-256 of that fingerprint.

So a composite unlocks a helper's result only by computing that helper's inputs, which is
its own work; reading the stand-in's table gives it nothing else. An input the reference
never passes raises :class:`HelperInputMismatch`, which the check reports as a diagnosis:
"your X calls softmax with an input the reference never gives it".
"""
from __future__ import annotations

import base64
import contextlib
import hashlib
import inspect
import json

import numpy as np

from . import codec

GRID_BITS = 16  # the rounding unit: 2^-16 of the power of two above the largest entry
MISMATCH = "HelperInputMismatch"


class HelperInputMismatch(Exception):
    """A stand-in was called with inputs the reference never passes the helper, named
    in ``helper`` (data the check reads, never the message)."""

    def __init__(self, helper: str, message: str):
        super().__init__(message)
        self.helper = helper


# ----------------------------------------------------------------------------- fingerprints

def _numbers(value) -> np.ndarray | None:
    """``value`` as a float64 array, if it is numbers (arrays, tensors, lists, Fractions)."""
    if type(value).__module__.startswith("torch"):
        try:
            value = value.detach().cpu().numpy()
        except Exception:  # noqa: BLE001
            return None
    try:
        a = np.asarray(value)
    except Exception:  # noqa: BLE001
        return None
    if a.dtype == object:
        try:
            a = np.array([float(x) for x in a.ravel()], dtype=float).reshape(a.shape)
        except Exception:  # noqa: BLE001
            return None
    if a.dtype.kind not in "iuf":
        return None
    return a.astype(np.float64)


def _exact(value) -> bytes | None:
    """The key part of a value compared exactly (flags, integers, masks, text), or None
    for numbers, which are compared on a grid."""
    if value is None or isinstance(value, (str, bool, np.bool_)):
        return b"=" + repr(value if not isinstance(value, np.bool_) else bool(value)).encode()
    if isinstance(value, (int, np.integer)):
        return b"int" + str(int(value)).encode()
    try:
        a = np.asarray(value)
    except Exception:  # noqa: BLE001
        return b"?" + type(value).__name__.encode()
    if a.dtype == bool:
        return b"bool" + repr(a.shape).encode() + np.ascontiguousarray(a).tobytes()
    if _numbers(value) is None:
        return b"?" + type(value).__name__.encode()
    return None


def grid_for(value) -> dict | None:
    """How the reference's ``value`` is rounded into a key: a power-of-two unit 2^-16 of
    its largest entry, and for each entry an offset (in 256ths of the unit) that puts it
    in the middle of its grid cell, so that an input computed in another order, whose
    entries differ by far less than half a unit, rounds to the same cells. The offsets
    say nothing of which cell an entry is in."""
    if _exact(value) is not None:
        return None
    a = _numbers(value)
    finite = np.isfinite(a)
    scale = float(np.max(np.abs(a[finite]))) if finite.any() else 0.0
    unit = 2.0 ** (int(np.ceil(np.log2(scale))) - GRID_BITS) if scale > 0 else 1.0
    frac = np.where(finite, a, 0.0) / unit
    frac = frac - np.floor(frac)
    offsets = np.round(np.mod(0.5 - frac, 1.0) * 256).astype(np.int64) % 256
    return {"unit": unit, "offsets": base64.b64encode(offsets.astype(np.uint8).tobytes()).decode()}


def _part(value, grid: dict | None) -> bytes:
    exact = _exact(value)
    if grid is None or exact is not None:
        return exact if exact is not None else b"?grid"
    a = _numbers(value)
    offsets = np.frombuffer(base64.b64decode(grid["offsets"]), dtype=np.uint8)
    if offsets.size != a.size:
        return b"?size" + repr(a.shape).encode()
    finite = np.isfinite(a)
    shifted = np.where(finite, a, 0.0) / float(grid["unit"]) + offsets.reshape(a.shape) / 256.0
    cells = np.floor(shifted).astype(np.int64)
    special = np.where(finite, 0, np.where(np.isnan(a), 1, np.where(a > 0, 2, 3))).astype(np.int8)
    return b"num" + repr(a.shape).encode() + cells.tobytes() + special.tobytes()


def fingerprint(helper: str, values: list, grids: list) -> bytes:
    """The key of one call: the helper's name and its bound arguments, on their grids."""
    h = hashlib.sha256(helper.encode() + b"\0")
    for value, grid in zip(values, grids):
        part = _part(value, grid)
        h.update(len(part).to_bytes(8, "little") + part)
    return h.digest()


def _stream(key: bytes, salt: str, n: int) -> bytes:
    return hashlib.shake_256(b"out\0" + salt.encode() + b"\0" + key).digest(n)


def _entry_id(key: bytes, salt: str) -> str:
    return hashlib.sha256(b"id\0" + salt.encode() + b"\0" + key).hexdigest()[:32]


# ----------------------------------------------------------------------------- the table

def parameters_of(fn) -> list:
    """``[[name, has_default, default]]`` of ``fn``'s parameters, as data."""
    out = []
    for p in inspect.signature(fn).parameters.values():
        has = p.default is not inspect.Parameter.empty
        out.append([p.name, has, p.default if has else None])
    return out


def _bind(params: list, args: tuple, kwargs: dict) -> list:
    sig = inspect.Signature([inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                               default=default if has else inspect.Parameter.empty)
                             for name, has, default in params])
    bound = sig.bind(*args, **kwargs)  # a TypeError like the helper's own, if they do not fit
    bound.apply_defaults()
    return list(bound.arguments.values())


def shown(helper: str, values: list) -> str:
    """``softmax(array 2×3, -1)``: a call described by shapes and small values."""
    parts = []
    for v in values:
        a = None
        if not isinstance(v, (str, bool, int, float, type(None))):
            try:
                a = np.asarray(v.detach() if hasattr(v, "detach") else v)
            except Exception:  # noqa: BLE001
                a = None
        if a is not None and a.ndim > 0:
            what = "bool array" if a.dtype == bool else "array"
            parts.append(f"{what} {'×'.join(map(str, a.shape))}")
        else:
            parts.append(repr(v)[:40])
    return f"{helper}({', '.join(parts)})"


def seal(helper: str, reference, calls: list[tuple[tuple, dict]], salt: str) -> dict:
    """The stand-in table of ``helper`` for one case: ``calls`` are the reference's calls
    ``(args, kwargs)`` on it, whose results ``reference`` gives."""
    params = parameters_of(reference)
    entries, seen = [], []
    for args, kwargs in calls:
        values = _bind(params, args, kwargs)
        grids = [grid_for(v) for v in values]
        key = fingerprint(helper, values, grids)
        plain = codec.dumps(reference(*args, **kwargs)).encode()
        box = bytes(x ^ y for x, y in zip(plain, _stream(key, salt, len(plain))))
        entries.append({"id": _entry_id(key, salt), "grids": grids,
                        "box": base64.b64encode(box).decode()})
        seen.append(shown(helper, values))
    return {"params": params, "salt": salt, "entries": entries, "calls": seen}


class StandIn:
    """The helper's recorded results, for the inputs that unlock them."""

    def __init__(self, helper: str, table: dict):
        self.__name__ = self.__qualname__ = helper
        self._helper, self._table = helper, table

    def __call__(self, *args, **kwargs):
        values = _bind(self._table["params"], args, kwargs)
        salt = self._table["salt"]
        box = key = None
        for entry in self._table.get("entries", ()):
            key = fingerprint(self._helper, values, entry["grids"])
            if _entry_id(key, salt) == entry["id"]:
                box = entry["box"]
                break
        if box is None:
            call = shown(self._helper, values)
            expected = "; ".join(self._table.get("calls", ())) or "nothing"
            raise HelperInputMismatch(self._helper, f"{call} is called, but on this input the reference "
                                      f"calls {expected}")
        raw = base64.b64decode(box)
        plain = bytes(x ^ y for x, y in zip(raw, _stream(key, salt, len(raw))))
        return codec.decode(json.loads(plain.decode()))


@contextlib.contextmanager
def installed(namespace: dict, tables: dict):
    """``namespace`` with a stand-in in place of each helper in ``tables``, put back after."""
    missing = object()
    saved = {name: namespace.get(name, missing) for name in tables}
    try:
        for name, table in tables.items():
            namespace[name] = StandIn(name, table)
        yield
    finally:
        for name, before in saved.items():
            if before is missing:
                namespace.pop(name, None)
            else:
                namespace[name] = before
