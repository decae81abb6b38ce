"""How an answer runs on a case: one dataclass per kind of driver.

A driver is part of an exercise's description (``Exercise.driver``); it travels as data
(:func:`grader.learner.plugins.to_data`: ``{"kind": "call", "threads": 1}``) in a recording
and in the grader's requests to a kernel, and is read back strictly
(:meth:`Driver.from_data`): a kind or field that does not exist is an error that names it.

* :class:`Call`: ``answer(*args, **kwargs)``; fixtures among the arguments are built first
  (``grader.learner.fixtures``). A lesson's kind of call changes it through hooks: how the
  arguments are handed over (:meth:`Driver.hand_over`, :meth:`Call.handed_over`), what
  stands for the result (:meth:`Call.returned`), what else is read after the call
  (:meth:`Call.observed`), and how an error of its own is worded (:meth:`Driver.failure`).
  A case's ``build`` adds to a call:

  * ``{"witness": fixture}``: that fixture is also built after the call, where the answer
    lives, and reported under ``"witness"`` (the same work redone from the learner's own
    parts, so that a result written by hand earns nothing);
  * ``{"memory_budget": bytes}``: the most memory the call holds at once is measured
    (``grader.learner.env.peak_bytes``) and reported, under ``"extra memory"``, as within
    that budget or not;
  * ``{"first_bad_number": true}``: NumPy's floating-point errors are raised, so the
    error names the line that makes the first NaN or inf.
* :class:`Object`: the answer is a class. The case's ``build`` constructs it (``args``,
  ``kwargs``) and lists method calls (``calls``: ``[name, [args]]``); after each call the
  outcome records the attributes ``observe`` names (``"len"``: ``len(obj)``), as a dict
  per call.
* :class:`Module`: the case's ``build`` constructs the learner's class (with a torch seed),
  loads the weights it carries if the parameters' names and shapes fit, and calls the
  object on the arguments; optionally the gradients of a probe reach back to named
  parameters. A module never leaves the process it was built in: only its outputs,
  layout and gradients do.

Every kind takes ``threads=1`` (torch on one thread) and ``quiet=True`` (no progress
bars). A lesson adds a kind of its own in its ``learner.py`` (``LESSON.driver``,
:mod:`grader.learner.plugins`); a kind whose answer is a value rather
than code sets ``calls_answer = False`` and may judge it its own way (:meth:`Driver.judge`).
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from . import codec
from .cases import Build
from .env import peak_bytes
from .fixtures import materialise
from .plugins import from_data, register_driver, to_data


@dataclass(frozen=True)
class Driver:
    """What every kind of driver has."""

    threads: int | None = None  # 1: torch runs on one thread while the answer runs
    quiet: bool = False  # progress bars off while the answer runs

    kind: ClassVar[str] = ""
    # False: the answer is a value the learner wrote, handed over as it is, never called
    calls_answer: ClassVar[bool] = True

    def run(self, answer, data: dict, namespace: dict):
        """The answer's result on the case ``data`` (decoded); may raise."""
        raise NotImplementedError

    def judge(self, exp, subject):
        """A verdict of this kind's own, or None for the engine's (every built-in kind)."""
        return None

    def hand_over(self, args: list, names=()) -> list:
        """The arguments as the answer gets them (a kind that watches how they are read
        wraps them here, before a memory window opens at grading)."""
        return args

    def result_title(self, name: str) -> str:
        """What a message calls the answer's outcome, above it."""
        return "Your function returned:"

    def failure(self, name: str, case, error) -> str | None:
        """The message for an error that this kind raises itself (an input read twice),
        known by its type; None for any other error, which the engine words."""
        return None

    def to_data(self) -> dict:
        return to_data(self)

    @staticmethod
    def from_data(data) -> Driver:
        return from_data("driver", data, "call")


def _observed(value):
    """An attribute's value as data at the moment it is read (a view into a buffer that
    changes later must not change what was read)."""
    return as_data(value)


def read_attribute(obj, attr: str):
    return len(obj) if attr == "len" else getattr(obj, attr)


def build_of(data: dict) -> Build:
    """The case's build, from a case's kernel data (decoded)."""
    build = data.get("build")
    return build if isinstance(build, Build) else Build.from_data(build)


def kib(n: int) -> str:
    return f"{n / 1024:.0f} KiB"


def invoke(answer, args: list, kwargs: dict, data: dict, driver: Call, namespace: dict):
    """``answer(*args, **kwargs)`` for a ``call`` driver, with the case's ``build``
    options, once the arguments are built (here, or staged ahead of a memory window)."""
    build = build_of(data)
    budget = build.memory_budget
    with driver.handed_over(args, data.get("names")) as args:
        if build.first_bad_number:
            # Where the answer makes its first NaN or inf: NumPy raises FloatingPointError
            # there (grader.learner.relations.FIRST_BAD_NUMBER), and the error says the line.
            with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
                result = answer(*args, **kwargs)
        elif budget is None:
            result = answer(*args, **kwargs)
        else:
            result, peak = peak_bytes(answer, *args, **kwargs)
    result = driver.returned(result, args)
    observed = driver.observed(args)
    witness = build.witness
    if observed is None and budget is None and witness is None:
        return result
    out = {"returned": _observed(result)}
    if witness is not None:  # the same work redone from the learner's own parts
        out["witness"] = _observed(materialise(witness, namespace))
    out.update(observed or {})
    if budget is not None:
        within = peak <= budget
        out["extra memory"] = f"{'at most' if within else 'more than'} {kib(budget)}"
        return Budgeted(out, within)
    return out


@dataclass(frozen=True)
class Budgeted:
    """A result run under a memory budget (``value``, whose ``"extra memory"`` words it
    for the learner), and whether this process measured it within: as data, so that the
    grader never reads it back out of the words."""

    value: dict
    within: bool


def _object(cls, data: dict, driver: Object, namespace: dict):
    build = build_of(data)
    obj = cls(*materialise(build.args or (), namespace),
              **materialise(build.kwargs or {}, namespace))
    seen = {}
    for i, (method, arguments) in enumerate(build.calls or ()):
        getattr(obj, method)(*materialise(arguments, namespace))
        seen[f"after call {i + 1}"] = {attr: _observed(read_attribute(obj, attr))
                                       for attr in driver.observe}
    return seen


def build_module(cls, data: dict):
    """``cls`` built for the case ``data`` (its ``build``: arguments, seed, dtype and
    weights) and put in eval mode; or, as data, why it could not be: not a module, or
    parameters whose names and shapes do not fit the case's weights."""
    import torch

    build = build_of(data)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(build.seed or 0))
        obj = cls(*build.args or (), **build.kwargs or {})
    if not isinstance(obj, torch.nn.Module):
        return {"not_module": type(obj).__name__}
    if build.dtype == "float64":
        obj.double()
    state = build.state
    if state is not None:
        layout = {name: list(p.shape) for name, p in obj.named_parameters()}
        if layout != {name: list(np.shape(v)) for name, v in state.items()}:
            return {"layout": layout}
        params = dict(obj.named_parameters())
        with torch.no_grad():
            for name, value in state.items():
                params[name].copy_(torch.as_tensor(np.asarray(value)).to(params[name].dtype))
    return obj.eval()


def _module(cls, data: dict, namespace: dict):
    import torch

    build = build_of(data)
    obj = build_module(cls, data)
    if isinstance(obj, dict):
        return obj
    args = materialise(data["args"], namespace)
    kwargs = materialise(data["kwargs"], namespace)
    # A stand-in's results are recorded values, outside autograd's graph: gradients are
    # not asked for when a helper is stood in for (grader.learner.comparisons.ModuleOutcome).
    grads = None if build.stand_ins else build.grads
    if not grads:
        with torch.no_grad():
            return {"output": obj(*args, **kwargs)}
    with torch.enable_grad():
        result = obj(*args, **kwargs)
        item = grads.get("item")
        out = result[item] if item is not None and isinstance(result, (tuple, list)) \
            and len(result) > item else result
        if not isinstance(out, torch.Tensor) or not out.is_floating_point():
            return {"output": result}
        if not out.requires_grad:
            return {"output": result, "graph": False}
        params = dict(obj.named_parameters())
        wanted = [n for n in grads["params"] if n in params]
        probe = torch.linspace(-1.0, 1.0, out.numel(), dtype=out.dtype).reshape(out.shape)
        found = torch.autograd.grad((out * probe).sum(), [params[n] for n in wanted],
                                    allow_unused=True)
        return {"output": result, "graph": True,
                "grads": {n: (g.detach() if g is not None else None) for n, g in zip(wanted, found)}}




def as_data(value):
    """The value as plain data (what reaches the checker), whatever the answer returned."""
    try:
        return codec.decode(codec.encode(value, strict=False))
    except (codec.EncodeError, codec.DecodeError, RecursionError) as exc:
        return codec.Opaque("unreadable", f"a result that could not be read as data ({exc})")


@register_driver
@dataclass(frozen=True)
class Call(Driver):
    """``answer(*args, **kwargs)`` (see the module's docstring)."""

    kind: ClassVar[str] = "call"

    def run(self, answer, data, namespace):
        args = list(materialise(data["args"], namespace))
        kwargs = materialise(data["kwargs"], namespace)
        result = invoke(answer, args, kwargs, data, self, namespace)
        return result.value if isinstance(result, Budgeted) else result

    def handed_over(self, args: list, names=()):
        """A context in which the answer runs on the arguments it yields; it may raise,
        on leaving, an error of the kind's own (an input read twice)."""
        return contextlib.nullcontext(self.hand_over(args, names))

    def returned(self, result, args: list):
        """What stands for the call's result (the state of an argument it changed)."""
        return result

    def observed(self, args: list) -> dict | None:
        """What else is read after the call, by name, beside the returned value; None:
        nothing (the outcome is the returned value itself)."""
        return None


@register_driver
@dataclass(frozen=True)
class Object(Driver):
    """The answer is a class, built and then called method by method."""

    observe: list = ()  # the attributes recorded after each call ("len": len(obj))

    kind: ClassVar[str] = "object"

    def result_title(self, name):
        return f"Your {name} gave:"

    def run(self, answer, data, namespace):
        return _object(answer, data, self, namespace)


@register_driver
@dataclass(frozen=True)
class Module(Driver):
    """The answer is an ``nn.Module`` class, built with the case's weights and called."""

    kind: ClassVar[str] = "module"

    def run(self, answer, data, namespace):
        return _module(answer, data, namespace)
