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

A helper may be a function or an ``nn.Module`` class (a layer that a model builds). A
module's stand-in is built with the reference's parameters, by name and shape, for each
set of constructor arguments the reference uses; its ``forward`` is keyed on those
arguments, its inputs and the values of its parameters, so it unlocks only where the
composite loaded the case's weights into it and handed it the right stream.

However the composite reaches its helper (by name, through a lambda or a local alias, a
``functools.partial``, a method or attribute holding it, a class built in ``__init__`` or
a subclass), it reaches the same object, so :func:`installed` changes *that object* for
the run, and puts it back after: a function's code is swapped for a call on the stand-in,
a module class's ``__init__`` and ``forward`` for the stand-in's. What cannot be changed
in place (a callable object, a partial) has its name rebound instead. Which stand-ins
were called is reported, so a check can say when a composite never reached one.
"""
from __future__ import annotations

import base64
import contextlib
import hashlib
import inspect
import json
import types
from dataclasses import dataclass, field
from typing import Any

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

    def __init__(self, helper: str, table: dict, reached: set | None = None):
        self.__name__ = self.__qualname__ = helper
        self._helper, self._table = helper, table
        self._reached = reached if reached is not None else set()

    def __call__(self, *args, **kwargs):
        self._reached.add(self._helper)
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


# ----------------------------------------------------------------------------- module stand-ins

@dataclass
class ModuleCall:
    """One call of a helper module by the reference composite: how the module was built
    (``init``, its constructor's arguments), the module itself with its weights, and the
    arguments of its ``forward``."""

    init: tuple[tuple, dict]
    module: Any
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)


def _init_parameters(cls) -> list:
    params = parameters_of(cls.__init__)
    return params[1:] if params and params[0][0] == "self" else params


def _forward_parameters(cls) -> list:
    params = parameters_of(cls.forward)
    return params[1:] if params and params[0][0] == "self" else params


def _layout(module) -> list:
    return [[name, list(p.shape)] for name, p in module.named_parameters()]


def _values_of(module, layout: list) -> list:
    return [module.get_parameter(name).detach() for name, _ in layout]


def seal_module(helper: str, reference_cls, calls: list[ModuleCall], salt: str) -> dict:
    """The stand-in table of the module class ``helper`` for one case: per constructor
    arguments the reference uses, the parameters' names and shapes (what a learner's
    model loads its weights into); per forward call, the output sealed under the
    constructor's arguments, the inputs and the parameters' values."""
    import torch

    init, params = _init_parameters(reference_cls), _forward_parameters(reference_cls)
    builds, entries, seen = [], [], []
    for call in calls:
        built = _bind(init, *call.init)
        layout = _layout(call.module)
        shape = {"init": [_exact_text(v) for v in built], "layout": layout,
                 "shown": shown(helper, built)}
        if shape not in builds:
            builds.append(shape)
        weights = _values_of(call.module, layout)
        values = built + _bind(params, call.args, call.kwargs) + weights
        grids = [grid_for(v) for v in values]
        key = fingerprint(helper, values, grids)
        with torch.no_grad():
            plain = codec.dumps(call.module(*call.args, **call.kwargs)).encode()
        box = bytes(x ^ y for x, y in zip(plain, _stream(key, salt, len(plain))))
        # The weights alone have an id too, so that a miss can say which part differs.
        held = fingerprint(helper, built + weights, grids[:len(built)] + grids[-len(weights):])
        entries.append({"id": _entry_id(key, salt), "grids": grids, "weights": _entry_id(held, salt),
                        "box": base64.b64encode(box).decode()})
        seen.append(shown(helper, _bind(params, call.args, call.kwargs)))
    return {"kind": "module", "init": init, "params": params, "builds": builds, "salt": salt,
            "entries": entries, "calls": seen}


def _exact_text(value) -> str:
    """A constructor argument as the text it is compared by (sizes and flags)."""
    part = _exact(value)
    return part.decode("latin-1") if part is not None else "?"


def _unlock(helper: str, table: dict, values: list):
    salt = table["salt"]
    for entry in table.get("entries", ()):
        key = fingerprint(helper, values, entry["grids"])
        if _entry_id(key, salt) == entry["id"]:
            raw = base64.b64decode(entry["box"])
            plain = bytes(x ^ y for x, y in zip(raw, _stream(key, salt, len(raw))))
            return codec.decode(json.loads(plain.decode()))
    return None


def _add_parameter(module, dotted: str, shape: list) -> None:
    """A zero parameter of ``shape`` at ``dotted`` (``attn.out_proj.weight``), with plain
    modules made on the way, so that the names match the reference's."""
    import torch

    *path, name = dotted.split(".")
    owner = module
    for part in path:
        if part not in owner._modules:
            owner.add_module(part, torch.nn.Module())
        owner = owner._modules[part]
    owner.register_parameter(name, torch.nn.Parameter(torch.zeros(shape)))


STATE = "_stand_in_built"  # where a stand-in module keeps how it was built


def module_methods(helper: str, table: dict, reached: set) -> dict:
    """``__init__`` and ``forward`` of the stand-in for the module class ``helper``."""
    import torch

    def __init__(self, *args, **kwargs):
        torch.nn.Module.__init__(self)
        reached.add(helper)  # built is reached: sizes it is built with are its input too
        built = _bind(table["init"], args, kwargs)
        wanted = [_exact_text(v) for v in built]
        for shape in table.get("builds", ()):
            if shape["init"] == wanted:
                break
        else:
            made = "; ".join(b.get("shown", helper) for b in table.get("builds", ()))
            raise HelperInputMismatch(helper, f"{shown(helper, built)} is built, but on this input "
                                      f"the reference builds {made or 'none'}")
        object.__setattr__(self, STATE, (built, shape["layout"]))
        for name, dims in shape["layout"]:
            _add_parameter(self, name, dims)

    def forward(self, *args, **kwargs):
        reached.add(helper)
        built, layout = getattr(self, STATE)
        inputs = _bind(table["params"], args, kwargs)
        values = built + inputs + _values_of(self, layout)
        found = _unlock(helper, table, values)
        if found is None:
            expected = "; ".join(table.get("calls", ())) or "nothing"
            weights = built + _values_of(self, layout)
            same = any(_entry_id(fingerprint(helper, weights, e["grids"][:len(built)] +
                                             e["grids"][len(built) + len(inputs):]),
                                 table["salt"]) == e.get("weights") for e in table.get("entries", ()))
            which = "the case's weights, but another input" if same else \
                "weights that are not the case's (were they loaded into it?)"
            raise HelperInputMismatch(helper, f"{shown(helper, inputs)} is called with {which}; "
                                      f"on this input the reference calls {expected}")
        return found

    return {"__init__": __init__, "forward": forward}


def module_result(helper: str, table: dict, call: ModuleCall):
    """What the stand-in of ``table`` gives for ``call``: built as the call's module was,
    with its weights, and called with its inputs (raises as the stand-in would)."""
    import torch

    cls = type(helper, (torch.nn.Module,), module_methods(helper, table, set()))
    module = cls(*call.init[0], **call.init[1])
    with torch.no_grad():
        for name, value in call.module.named_parameters():
            module.get_parameter(name).data = value.detach().clone()
        return module(*call.args, **call.kwargs)


# ----------------------------------------------------------------------------- putting them in place

def _trampoline(*args, __stand_in__, **kwargs):
    """The code a learner's helper function runs while it is stood in for."""
    return __stand_in__(*args, **kwargs)


def _function_in_place(fn, stand_in) -> list | None:
    """Swap the code of the learner's function ``fn`` (or of the function it wraps) for a
    call on ``stand_in``; the undo steps, or None if it cannot be done."""
    seen = 0
    while isinstance(fn, types.FunctionType) and seen < 20:
        if not fn.__code__.co_freevars:
            saved = (fn.__code__, fn.__defaults__, fn.__kwdefaults__)
            fn.__code__, fn.__defaults__ = _trampoline.__code__, None
            fn.__kwdefaults__ = {"__stand_in__": stand_in}

            def undo(fn=fn, saved=saved):
                fn.__code__, fn.__defaults__, fn.__kwdefaults__ = saved
            return [undo]
        fn, seen = getattr(fn, "__wrapped__", None), seen + 1
    return None


def _class_in_place(cls, methods: dict) -> list | None:
    """Give the learner's module class ``cls`` the stand-in's methods (its subclasses
    inherit them); the undo steps, or None if ``cls`` is no ``nn.Module`` class."""
    import sys

    torch = sys.modules.get("torch")
    if torch is None or not isinstance(cls, type) or not issubclass(cls, torch.nn.Module):
        return None
    undo = []
    for name, method in methods.items():
        if name in cls.__dict__:
            undo.append(lambda name=name, old=cls.__dict__[name]: setattr(cls, name, old))
        else:
            undo.append(lambda name=name: delattr(cls, name))
        setattr(cls, name, method)
    return undo


class _Missing:
    pass


def _learners(obj, namespace: dict) -> bool:
    """Whether ``obj`` was defined in the learner's own code, where ``namespace`` is: only
    that is ever changed in place (a library's function, say ``torch.chunk`` bound to the
    helper's name, is not)."""
    home = namespace.get("__name__")
    return home is not None and getattr(obj, "__module__", None) == home


def _stand_in_for(name: str, table: dict, reached: set):
    if table.get("kind") == "module":
        import torch

        return type(name, (torch.nn.Module,), module_methods(name, table, reached))
    return StandIn(name, table, reached)


@contextlib.contextmanager
def installed(namespace: dict, tables: dict):
    """``namespace``'s helpers in ``tables`` stood in for, however a composite reaches
    them; yields the set of the helpers whose stand-ins were called. Everything is put
    back after, whatever happens."""
    reached: set = set()
    undo: list = []
    try:
        for name, table in tables.items():
            current = namespace.get(name, _Missing)
            steps = None
            if not _learners(current, namespace):
                pass  # a library's function or class is never changed, only the name
            elif table.get("kind") == "module":
                import torch  # noqa: F401 (a module stand-in needs it)

                steps = _class_in_place(current, module_methods(name, table, reached))
            else:
                steps = _function_in_place(current, StandIn(name, table, reached))
            if steps is None:  # not changeable in place: the name is rebound instead
                steps = [lambda name=name, before=current: (
                    namespace.pop(name, None) if before is _Missing
                    else namespace.__setitem__(name, before))]
                namespace[name] = _stand_in_for(name, table, reached)
            undo += steps
        yield reached
    finally:
        for step in reversed(undo):
            step()
