"""Values as data: a JSON tree in which arrays are dtype, shape and raw bytes.

The recorded checks (written by ``release``) and the grading bridge (the checker asking
a learner's kernel to run a function) both move values this way, and nothing else:

* numbers, strings, ``None``, booleans, lists and dicts as JSON, with a tag for what JSON
  cannot say (``{"$": "tuple", ...}``, a ``Fraction`` as ``"3/4"``, NaN and infinities);
* NumPy arrays and torch tensors as ``{"$": "nd" | "pt", "dtype", "shape", "b64"}``: the
  raw little-endian bytes of an allowed dtype, read back with ``np.frombuffer``. A strided
  or Fortran-ordered array keeps its memory layout, because a check that passes a strided
  view must pass the same view each time;
* :class:`Fixture`: a test fixture described by data, built by ``grader.learner.fixtures``.

There is no pickle and no code anywhere, so decoding runs nothing. :func:`decode` is also
what the checker applies to a learner's kernel's replies: it enforces :class:`DecodeLimits`
(size, depth, number of values, bytes per array) and raises :class:`DecodeError` on
anything malformed. :func:`encode` of a learner's result (``strict=False``) turns what is
not data (a generator, a module, a custom class) into an :class:`Opaque` description.
"""
from __future__ import annotations

import base64
import json
import math
import sys
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

FORMAT = 1
# dtypes that travel as raw bytes; object arrays travel entry by entry ("objarr").
DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64"}
TORCH_ONLY = {"bfloat16"}  # sent as float32 bytes, restored to this dtype


class EncodeError(TypeError):
    """A value that cannot be written as data (in strict mode)."""


class DecodeError(ValueError):
    """Data that is malformed or over a limit."""


@dataclass(frozen=True)
class DecodeLimits:
    """How much one decoded value may hold."""

    max_chars: int = 64 * 1024 * 1024
    max_depth: int = 48
    max_nodes: int = 200_000
    max_array_bytes: int = 64 * 1024 * 1024
    max_ndim: int = 16
    max_text: int = 1_000_000


TRUSTED = DecodeLimits(max_chars=1 << 40, max_nodes=1 << 40, max_array_bytes=1 << 40, max_text=1 << 40)


@dataclass(frozen=True)
class Fixture:
    """A test fixture handed to a learner's function, described by data.

    ``kind`` names a factory in ``grader.learner.fixtures``; ``params`` are its arguments
    (data); ``describe`` is how a failure message shows it.
    """

    kind: str
    params: dict = field(default_factory=dict)
    describe: str = ""

    def __repr__(self) -> str:
        return self.describe or f"<{self.kind} fixture>"

    def __hash__(self) -> int:  # params hold arrays; identity is enough for caching
        return id(self)

    def numel(self) -> int:
        """How many numbers the fixture stands for: a fixture for an array (its params
        have a ``shape``) counts its entries, so that cases sort by size; others count 0."""
        shape = self.params.get("shape")
        return math.prod(int(n) for n in shape) if isinstance(shape, (list, tuple)) else 0


@dataclass(frozen=True)
class Opaque:
    """Something a learner's function returned that is not data: only its type and a
    short description travel."""

    type: str
    text: str = ""

    def __repr__(self) -> str:
        return self.text or f"<{self.type} object>"


@dataclass
class _State:
    limits: DecodeLimits
    nodes: int = 0

    def count(self, depth: int) -> None:
        self.nodes += 1
        if self.nodes > self.limits.max_nodes:
            raise DecodeError(f"more than {self.limits.max_nodes:,} values")
        if depth > self.limits.max_depth:
            raise DecodeError(f"nested more than {self.limits.max_depth} levels deep")


# ----------------------------------------------------------------------------- encoding

def _torch():
    return sys.modules.get("torch")


def _is_tensor(x) -> bool:
    torch = _torch()
    return torch is not None and isinstance(x, torch.Tensor)


def _layout(a: np.ndarray) -> str:
    if a.ndim < 2 and (a.flags.c_contiguous or a.size <= 1):
        return "C"
    if a.flags.c_contiguous:
        return "C"
    if a.flags.f_contiguous:
        return "F"
    return "strided"


def _bytes_of(a: np.ndarray) -> str:
    a = np.ascontiguousarray(a)
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("<"))
    return base64.b64encode(a.tobytes()).decode("ascii")


def _float(x: float):
    if math.isfinite(x):
        return x
    return {"$": "float", "v": "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")}


def _text(x, limit: int = 300) -> str:
    try:
        text = repr(x)
    except Exception:  # noqa: BLE001 (a learner's __repr__ may raise)
        text = ""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def encode(value, *, strict: bool = True, _depth: int = 0):
    """``value`` as a JSON-ready tree. ``strict=False`` describes what is not data as an
    :class:`Opaque` instead of raising :class:`EncodeError`."""
    if _depth > 200:
        raise EncodeError("the value is nested too deeply")
    again = lambda v: encode(v, strict=strict, _depth=_depth + 1)  # noqa: E731
    if value is None or type(value) in (str, bool, int):
        return value
    if type(value) is float:
        return _float(value)
    if type(value) is Fraction:
        return {"$": "frac", "v": f"{value.numerator}/{value.denominator}"}
    if value is Ellipsis:
        return {"$": "ellipsis"}
    if isinstance(value, np.ndarray) and type(value) is np.ndarray:
        return _encode_array(value, again)
    if isinstance(value, np.generic) and type(value).__module__ == "numpy":
        if value.dtype.name not in DTYPES:
            if strict:
                raise EncodeError(f"a NumPy scalar of dtype {value.dtype}")
            return _opaque(value)
        return {"$": "np", "dtype": value.dtype.name, "v": again(value.item())}
    if _is_tensor(value) and type(value).__name__ in ("Tensor", "Parameter"):
        return _encode_tensor(value)
    if type(value) is tuple:
        return {"$": "tuple", "v": [again(v) for v in value]}
    if type(value) is list:
        return [again(v) for v in value]
    if type(value) is dict:
        return _encode_dict(value, again)
    if type(value) is Fixture:
        return {"$": "fixture", "kind": value.kind, "params": again(value.params),
                "describe": value.describe}
    if type(value) is Opaque:
        return {"$": "opaque", "type": value.type, "text": value.text}
    if strict:
        raise EncodeError(f"a {type(value).__name__} cannot be written as data")
    return _plain(value, again)


def _plain(value, again):
    """A learner's subclass of a data type (a namedtuple, an IntEnum, an np.matrix, an
    nn.Parameter) as the plain type it extends; anything else as an Opaque."""
    try:
        for base in (bool, int, float, str):
            if isinstance(value, base):
                return again(base(value))
        if isinstance(value, tuple):
            return {"$": "tuple", "v": [again(v) for v in tuple.__iter__(value)]}
        if isinstance(value, list):
            return [again(v) for v in list.__iter__(value)]
        if isinstance(value, dict):
            return _encode_dict(dict(dict.items(value)), again)
        if isinstance(value, np.ndarray):
            return again(np.array(np.asarray(value)))
        if _is_tensor(value):
            return again(value.as_subclass(_torch().Tensor))
    except (EncodeError, RecursionError):
        raise
    except Exception:  # noqa: BLE001 (a learner's class may raise anywhere)
        pass
    return _opaque(value)


def _encode_dict(value: dict, again) -> dict:
    """A dict with string keys (and no key "$") is a JSON object; any other is tagged."""
    if all(type(k) is str for k in value) and "$" not in value:
        return {k: again(v) for k, v in value.items()}
    return {"$": "dict", "v": [[again(k), again(v)] for k, v in value.items()]}


def _opaque(value) -> dict:
    kind = type(value)
    name = getattr(kind, "__qualname__", "object")
    module = getattr(kind, "__module__", "")
    if module and module not in ("builtins", "__main__"):
        name = f"{module}.{name}"
    return {"$": "opaque", "type": str(name)[:200], "text": _text(value)}


def _encode_array(a: np.ndarray, again) -> dict:
    if a.dtype == object:
        return {"$": "objarr", "shape": list(a.shape), "v": [again(x) for x in a.flat]}
    if a.dtype.name not in DTYPES:
        raise EncodeError(f"an array of dtype {a.dtype} cannot be written as data")
    return {"$": "nd", "dtype": a.dtype.name, "shape": list(a.shape), "layout": _layout(a),
            "b64": _bytes_of(a)}


def _encode_tensor(t) -> dict:
    torch = _torch()
    t = t.detach().cpu()
    if t.is_sparse or t.is_quantized or t.is_complex():
        raise EncodeError(f"a tensor of layout {t.layout} and dtype {t.dtype}")
    name = str(t.dtype).removeprefix("torch.")
    if name in TORCH_ONLY:
        data = t.to(torch.float32).contiguous().numpy()
    elif name in DTYPES:
        data = t.contiguous().numpy()
    else:
        raise EncodeError(f"a tensor of dtype {t.dtype} cannot be written as data")
    return {"$": "pt", "dtype": name, "shape": list(t.shape), "b64": _bytes_of(data)}


def dumps(value, *, strict: bool = True, indent: int | None = None) -> str:
    return json.dumps(encode(value, strict=strict), ensure_ascii=False, indent=indent,
                      allow_nan=False)


# ----------------------------------------------------------------------------- decoding

def loads(text: str | bytes, limits: DecodeLimits = TRUSTED):
    """Decode a JSON string written by :func:`dumps`, within ``limits``."""
    if len(text) > limits.max_chars:
        raise DecodeError(f"the data is {len(text):,} characters long, more than the "
                          f"{limits.max_chars:,} allowed")
    try:
        tree = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise DecodeError(f"not readable as data: {str(exc)[:200]}") from None
    return decode(tree, limits)


def decode(tree, limits: DecodeLimits = TRUSTED):
    """The value a tree stands for (raises :class:`DecodeError` on malformed trees)."""
    try:
        return _decode(tree, _State(limits), 0)
    except DecodeError:
        raise
    except (RecursionError, MemoryError, OverflowError) as exc:
        raise DecodeError(f"not readable as data: {type(exc).__name__}") from None


def _decode(tree, state: _State, depth: int):
    state.count(depth)
    if tree is None or isinstance(tree, (bool, str)):
        if isinstance(tree, str) and len(tree) > state.limits.max_text:
            raise DecodeError("a string is too long")
        return tree
    if isinstance(tree, int):
        return tree
    if isinstance(tree, float):
        return tree
    if isinstance(tree, list):
        return [_decode(v, state, depth + 1) for v in tree]
    if not isinstance(tree, dict):
        raise DecodeError("not readable as data")
    if "$" not in tree:
        return {k: _decode(v, state, depth + 1) for k, v in tree.items()}
    tag = tree["$"]
    if not isinstance(tag, str):
        raise DecodeError("a malformed tag")
    if tag == "tuple":
        return tuple(_decode(v, state, depth + 1) for v in _list(tree, "v"))
    if tag == "dict":
        out = {}
        for pair in _list(tree, "v"):
            if not isinstance(pair, list) or len(pair) != 2:
                raise DecodeError("a dict entry that is not a [key, value] pair")
            key = _decode(pair[0], state, depth + 1)
            try:
                hash(key)
            except TypeError:
                raise DecodeError("a dict key that cannot be a key") from None
            out[key] = _decode(pair[1], state, depth + 1)
        return out
    if tag == "float":
        v = tree.get("v")
        if v not in ("nan", "inf", "-inf"):
            raise DecodeError(f"a float tag with value {v!r}")
        return float(v)
    if tag == "frac":
        return _fraction(tree.get("v"))
    if tag == "ellipsis":
        return Ellipsis
    if tag == "np":
        dtype = _dtype(tree.get("dtype"))
        v = _decode(tree.get("v"), state, depth + 1)
        if not isinstance(v, (bool, int, float)):
            raise DecodeError("a NumPy scalar that is not a number")
        try:
            return np.array(v, dtype=dtype)[()]
        except (OverflowError, ValueError) as exc:
            raise DecodeError(f"a NumPy scalar out of range: {exc}") from None
    if tag == "nd":
        return _decode_array(tree, state)
    if tag == "pt":
        return _decode_tensor(tree, state)
    if tag == "objarr":
        shape = _shape(tree, state)
        values = _list(tree, "v")
        if len(values) != math.prod(shape):
            raise DecodeError("an object array with the wrong number of entries")
        out = np.empty(len(values), dtype=object)
        for i, v in enumerate(values):
            out[i] = _decode(v, state, depth + 1)
        return out.reshape(shape)
    if tag == "fixture":
        params = _decode(tree.get("params", {}), state, depth + 1)
        if not isinstance(params, dict) or not isinstance(tree.get("kind"), str):
            raise DecodeError("a malformed fixture")
        return Fixture(tree["kind"], params, str(tree.get("describe", "")))
    if tag == "opaque":
        return Opaque(str(tree.get("type", "object"))[:200], str(tree.get("text", ""))[:1000])
    raise DecodeError(f"an unknown tag {tag!r}")


def _list(tree: dict, key: str) -> list:
    value = tree.get(key)
    if not isinstance(value, list):
        raise DecodeError(f"a {tree.get('$')} without its list of values")
    return value


def _fraction(text) -> Fraction:
    if not isinstance(text, str) or len(text) > 10_000:
        raise DecodeError("a malformed fraction")
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise DecodeError(f"a malformed fraction {text[:40]!r}") from None


def _dtype(name) -> np.dtype:
    if name not in DTYPES:
        raise DecodeError(f"a dtype that is not allowed: {str(name)[:40]!r}")
    return np.dtype(name).newbyteorder("<")


def _shape(tree: dict, state: _State) -> tuple[int, ...]:
    shape = tree.get("shape")
    if (not isinstance(shape, list) or len(shape) > state.limits.max_ndim
            or not all(type(n) is int and n >= 0 for n in shape)):
        raise DecodeError("a malformed shape")
    return tuple(shape)


def _raw(tree: dict, dtype: np.dtype, shape, state: _State) -> np.ndarray:
    size = math.prod(shape) * dtype.itemsize
    if size > state.limits.max_array_bytes:
        raise DecodeError(f"an array of {size:,} bytes, more than the "
                          f"{state.limits.max_array_bytes:,} allowed")
    text = tree.get("b64")
    if not isinstance(text, str) or len(text) > 4 * (size // 3 + 1) + 4:
        raise DecodeError("an array whose bytes do not match its shape")
    try:
        data = base64.b64decode(text, validate=True)
    except ValueError:
        raise DecodeError("an array with malformed bytes") from None
    if len(data) != size:
        raise DecodeError("an array whose bytes do not match its shape")
    return np.frombuffer(data, dtype=dtype).reshape(shape).astype(dtype.newbyteorder("="))


def _decode_array(tree: dict, state: _State) -> np.ndarray:
    from .cases import non_contiguous

    shape = _shape(tree, state)
    a = _raw(tree, _dtype(tree.get("dtype")), shape, state)
    layout = tree.get("layout", "C")
    if layout == "F":
        return np.asfortranarray(a)
    if layout == "strided" and a.ndim:
        return non_contiguous(a)
    return a


def _decode_tensor(tree: dict, state: _State):
    import torch

    shape = _shape(tree, state)
    name = tree.get("dtype")
    if name in TORCH_ONLY:
        a = _raw(tree, np.dtype("float32"), shape, state)
        return torch.from_numpy(a.copy()).to(getattr(torch, name))
    a = _raw(tree, _dtype(name), shape, state)
    return torch.from_numpy(a.copy())
