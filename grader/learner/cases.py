"""What a check is made of, as data: cases, what running an answer on one gave, the
expectations of one exercise, and how to read and write them.

Everything here round-trips through ``grader.learner.codec``, so the same objects serve
the recorded checks (in notebooks), the live reference (at release and grading) and the
grading bridge (a learner's kernel sends back :class:`Outcome` data, never objects).
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from . import plugins
from .difference import FLOAT32, FLOAT64, Tolerance
from .shortcuts import Rules

TOLERANCES = {"float64": FLOAT64, "float32": FLOAT32}


def entries(x) -> int:
    """How many numbers ``x`` holds (for sorting cases from small to large)."""
    if isinstance(x, np.ndarray):
        return int(x.size)
    if isinstance(x, (list, tuple)):
        return sum(entries(v) for v in x)
    if isinstance(x, dict):
        return sum(entries(v) for v in x.values())
    if hasattr(x, "numel") and callable(x.numel):  # a tensor, or a fixture for an array
        return int(x.numel())
    return 1 if isinstance(x, (int, float, Fraction, np.number)) else 0


def non_contiguous(a: np.ndarray) -> np.ndarray:
    """The same values as ``a`` in a strided view (every other element of a bigger array)."""
    big = np.zeros(tuple(2 * n for n in a.shape), dtype=a.dtype)
    view = big[tuple(slice(None, None, 2) for _ in a.shape)]
    view[...] = a
    return view


class _Facts:
    """Typed fields that are written as a dict of those that are set (None: not set),
    in the fields' order, and read back strictly: a key that is no field is an error."""

    def to_data(self) -> dict:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if getattr(self, f.name) is not None}

    @classmethod
    def from_data(cls, d: dict | None):
        if d is None:
            return cls()
        if not isinstance(d, dict):
            raise ValueError(f"a case's {cls.__name__.lower()} is a dict, got {type(d).__name__}")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise ValueError(f"a case's {cls.__name__.lower()} has no field {unknown[0]!r} "
                             f"(its fields are: {', '.join(sorted(names))})")
        return cls(**d)

    def __bool__(self) -> bool:
        return any(getattr(self, f.name) is not None for f in dataclasses.fields(self))

    def with_(self, **changes):
        return dataclasses.replace(self, **changes)


@dataclass
class Build(_Facts):
    """How a case is built and run beyond its arguments (every field optional).

    For an object or a module the driver constructs from the learner's class: its
    arguments, the torch seed, the dtype, the weights to load (``state``), the gradients to
    report (``grads``: ``{"item": i, "params": [...]}``), the method calls (``calls``:
    ``[method, [args]]``), and how a message names and shows it (``label``,
    ``describe``). For a call: a fixture built after it where the answer lives
    (``witness``), the most memory it may hold (``memory_budget``, bytes; at grading the
    arguments ``late`` names, by index, arrive after the memory window opens, the first
    when it names none), NumPy's errors raised (``first_bad_number``), and the sealed
    stand-ins of the learner's helpers (``stand_ins``, grader.learner.standin).
    """

    args: list | None = None
    kwargs: dict | None = None
    seed: int | None = None
    dtype: str | None = None
    state: dict | None = None
    grads: dict | None = None
    calls: list | None = None
    label: str | None = None
    describe: str | None = None
    witness: object = None
    memory_budget: int | None = None
    late: list | None = None
    first_bad_number: bool | None = None
    stand_ins: dict | None = None

    # Read as data by the grading bridge, which asks for a build's keys by name.
    def get(self, key: str, default=None):
        value = getattr(self, key, None)
        return default if value is None else value

    def __contains__(self, key: str) -> bool:
        return getattr(self, key, None) is not None

    def __getitem__(self, key: str):
        if key not in self:
            raise KeyError(key)
        return getattr(self, key)


@dataclass
class Meta(_Facts):
    """What a comparison or a relation knows of a case, which never goes to the kernel.

    Recorded from the reference for the smallest probed cases: which output positions
    change when one row of a probed argument changes (``depends``: ``[[argument, row,
    positions]]``), its result with the scores scaled (``scaled``: ``[[factor, why,
    result]]``) and with one argument in another's place (``swaps``: ``[[kind, used,
    instead of, result]]``). Written by a lesson: other values accepted (``accept``), a
    range worth a remark (``near``: ``{"value", "within", "message"}``), a typed answer's
    step, label and guide (``step``, ``label``, ``guide``).
    """

    depends: list | None = None
    scaled: list | None = None
    swaps: list | None = None
    accept: list | None = None
    near: dict | None = None
    step: str | None = None
    label: str | None = None
    guide: str | None = None


@dataclass
class Case:
    """One input: positional and keyword arguments, and how to show and judge it.

    ``build`` (:class:`Build`) says how the case is built and run beyond its arguments;
    ``meta`` (:class:`Meta`) is what a comparison or a relation knows of it, which never
    goes to the learner's kernel.
    """

    args: tuple
    kwargs: dict = field(default_factory=dict)
    note: str = ""
    tol: Tolerance = FLOAT64
    names: tuple[str, ...] = ()
    build: Build = field(default_factory=Build)
    meta: Meta = field(default_factory=Meta)
    quantities: dict = field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.build, Build) or not isinstance(self.meta, Meta):
            raise TypeError(f"a case's build is a Build and its meta a Meta, got "
                            f"{type(self.build).__name__} and {type(self.meta).__name__}")

    def size(self) -> int:
        return entries(self.args) + entries(self.kwargs) + entries(self.build.args or ())

    def to_data(self) -> dict:
        return {"args": self.args, "kwargs": self.kwargs, "note": self.note,
                "tol": _tol_name(self.tol), "names": self.names,
                "build": self.build.to_data() or None, "meta": self.meta.to_data(),
                **({"quantities": self.quantities} if self.quantities else {})}

    @classmethod
    def from_data(cls, d: dict) -> Case:
        return cls(tuple(d["args"]), dict(d["kwargs"]), d["note"], _tol(d["tol"]),
                   tuple(d["names"]), Build.from_data(d.get("build")), Meta.from_data(d.get("meta")),
                   {str(k): float(v) for k, v in (d.get("quantities") or {}).items()})

    def with_args(self, args: tuple) -> Case:
        """The same case with other positional arguments (a probe), no meta."""
        return Case(args, self.kwargs, self.note, self.tol, self.names, self.build)

    def with_build(self, **changes) -> Case:
        """The same case, run with ``changes`` to its build (stand-ins, a probe)."""
        return Case(self.args, self.kwargs, self.note, self.tol, self.names,
                    self.build.with_(**changes), self.meta, self.quantities)

    def for_kernel(self) -> dict:
        """What the driver needs to run this case: never ``meta`` or the note."""
        return {"args": self.args, "kwargs": self.kwargs, "build": self.build.to_data() or None,
                "names": self.names}


def _tol_name(tol: Tolerance):
    for name, known in TOLERANCES.items():
        if tol == known:
            return name
    return {"rtol": tol.rtol, "atol_scale": tol.atol_scale}


def _tol(data) -> Tolerance:
    if isinstance(data, str):
        return TOLERANCES[data]
    return Tolerance(float(data["rtol"]), float(data["atol_scale"]))


NUMBERS = re.compile(r"-?\d+(\.\d+)?")


@dataclass
class ErrorInfo:
    """An exception, as data: its type's name, its message, and where it came from."""

    type: str
    message: str = ""
    where: str = ""  # "line 3 of your code: `...`", if the learner's code raised it
    helper: str = ""  # another learner function that raised it (the composite's helper)
    bases: tuple[str, ...] = ()  # the built-in exception classes it derives from

    def is_a(self, kind: str) -> bool:
        """Whether it is a ``kind`` (``"ValueError"``), its own class or a subclass of it:
        a learner's ``class BadWeights(ValueError)`` rejects an input as well."""
        return self.type == kind or kind in self.bases

    @property
    def gist(self) -> str:
        """The message without its numbers (shapes and values vary from case to case)."""
        return NUMBERS.sub("#", self.message).strip()

    @property
    def not_implemented(self) -> bool:
        return self.type == "NotImplementedError"


@dataclass
class Outcome:
    """What one run of an answer on one case gave: a value, or an error; the name of an
    argument it changed in place, if any; in a run with stand-ins, the helpers whose
    stand-ins it called (``reached``: the kernel's word, which only words a message);
    and, for a run under a memory budget, whether the kernel measured it within
    (``within_budget``: its word, which can only add a finding to the grader's own)."""

    value: object = None
    error: ErrorInfo | None = None
    mutated: str = ""
    reached: tuple[str, ...] = ()
    within_budget: bool | None = None

    def to_data(self) -> dict:
        extra = {"reached": list(self.reached)} if self.reached else {}
        if self.within_budget is not None:
            extra["within budget"] = self.within_budget
        if self.error is not None:
            e = self.error
            bases = {"bases": list(e.bases)} if e.bases else {}
            return {"error": {"type": e.type, "message": e.message, "where": e.where,
                              "helper": e.helper, **bases}, "mutated": self.mutated, **extra}
        return {"value": self.value, "mutated": self.mutated, **extra}

    @classmethod
    def from_data(cls, d) -> Outcome:
        if not isinstance(d, dict):
            return cls(error=ErrorInfo("BridgeError", "your notebook's Python sent back no result for this input"))
        mutated = d.get("mutated", "")
        mutated = mutated[:200] if isinstance(mutated, str) else ""
        reached = d.get("reached")
        reached = tuple(str(h)[:200] for h in reached[:50]) if isinstance(reached, list) else ()
        if "error" in d:
            e = d["error"] if isinstance(d["error"], dict) else {}
            text = lambda k, n: str(e.get(k, ""))[:n]  # noqa: E731
            bases = e.get("bases")
            bases = tuple(str(b)[:100] for b in bases[:20]) if isinstance(bases, list) else ()
            return cls(error=ErrorInfo(text("type", 200) or "Exception", text("message", 20_000),
                                       text("where", 2000), text("helper", 200), bases),
                       mutated=mutated, reached=reached)
        within = d.get("within budget")
        return cls(value=d.get("value"), mutated=mutated, reached=reached,
                   within_budget=within if isinstance(within, bool) else None)


@dataclass
class Verdict:
    """A check's result: passed or not, and the message (a ✓ line, or what is wrong).

    The other fields say, as data, what the message rests on, so that nothing after the
    check needs to read its text: ``mistake``, the catalogued mistake diagnosed;
    ``relation``, the kind of relation between the result and the expected one that the
    message names (``grader.learner.relations``); ``raised_by``, the learner's helper
    whose error or missing code the message is about; ``stood_in``, the helpers whose
    reference results stood in for the learner's own; ``blamed``, the learner's graded
    parts this one runs that fail their own checks, which the message names; ``cause``,
    the words of its diagnosis, which another check's message may repeat.
    """

    passed: bool
    message: str
    mistake: str = ""
    relation: str = ""
    raised_by: str = ""
    stood_in: tuple[str, ...] = ()
    blamed: tuple[str, ...] = ()
    cause: str = ""


@dataclass
class Work:
    """A rule about how much an answer computes, checked by the CPU time it takes: the call
    ``case``, and the same call with the keyword arguments ``against`` in place of its own
    (``{"causal": False}``: the work that ``case`` must save part of), each run several
    times; the median ratio of their CPU times must be at most ``most``. In a notebook the
    answer's own process measures it; at grading, the operating system, from outside the
    sandbox (``grader.grading.notebook.cpu``). ``rule`` is the rule in the notebook's words, and
    ``found`` what a check says when the ratio is above ``most``; ``{ratio}`` in it is the
    ratio measured."""

    case: Case
    against: dict
    most: float
    rule: str
    found: str
    rounds: int = 5  # pairs of runs measured, one after the other
    attempts: int = 3  # measured again, up to this many times, before the rule is broken

    def to_data(self) -> dict:
        return {"case": self.case.to_data(), "against": dict(self.against), "most": self.most,
                "rule": self.rule, "found": self.found, "rounds": self.rounds,
                "attempts": self.attempts}

    @classmethod
    def from_data(cls, d: dict) -> Work:
        return cls(Case.from_data(d["case"]), dict(d["against"]), float(d["most"]),
                   str(d["rule"]), str(d["found"]), int(d["rounds"]), int(d["attempts"]))


@dataclass
class BadInput:
    """An input the answer must reject with ``ValueError``; ``why`` names the problem."""

    case: Case
    why: str


@dataclass
class ExerciseInfo:
    """What the learner's side knows of an exercise: how to run an answer on a case
    (``driver``), how to compare (``compare``), the forbidden shortcuts, the inputs that
    must be rejected, and a hint for failures no catalogued mistake explains."""

    name: str
    arg_names: tuple[str, ...] = ()
    # a grader.learner.drivers.Driver and a grader.learner.comparisons.Comparison
    driver: plugins.Kind = field(default_factory=lambda: plugins.default("driver", "call"))
    compare: plugins.Kind = field(default_factory=lambda: plugins.default("comparison", "default"))
    rules: Rules | None = None
    hint: str = ""
    bad_inputs: list[BadInput] = field(default_factory=list)
    # The learner's other graded classes and functions it runs, where no stand-in can take
    # their place (a module built inside it): a failure says which of them fail their checks.
    uses: tuple[str, ...] = ()
    # The names of the entries of a tuple result (("m", "s")), which a message uses when
    # one entry holds another's expected value.
    outputs: tuple[str, ...] = ()
    # The names of an output's axes ({"weights": ("B", "h", "T_q", "T_k")}), for a message
    # that finds the right values with the axes in another order.
    axes: dict = field(default_factory=dict)
    # A rule about how much the answer computes, measured as CPU time (:class:`Work`).
    work: Work | None = None

    def __post_init__(self):
        # A bad input is shown with the exercise's argument names unless it has its own.
        for bad in self.bad_inputs:
            bad.case.names = bad.case.names or tuple(self.arg_names)

    def to_data(self) -> dict:
        return {"name": self.name, "arg_names": self.arg_names, "driver": self.driver.to_data(),
                "compare": self.compare.to_data(), "rules": self.rules.to_data() if self.rules else None,
                "hint": self.hint,
                "bad_inputs": [{"case": b.case.to_data(), "why": b.why} for b in self.bad_inputs],
                **({"uses": list(self.uses)} if self.uses else {}),
                **({"outputs": list(self.outputs)} if self.outputs else {}),
                **({"axes": {k: list(v) for k, v in self.axes.items()}} if self.axes else {}),
                **({"work": self.work.to_data()} if self.work else {})}

    @classmethod
    def from_data(cls, d: dict) -> ExerciseInfo:
        return cls(d["name"], tuple(d["arg_names"]), plugins.from_data("driver", d["driver"], "call"),
                   plugins.from_data("comparison", d["compare"], "default"),
                   Rules.from_data(d["rules"]) if d["rules"] else None, d["hint"],
                   [BadInput(Case.from_data(b["case"]), b["why"]) for b in d["bad_inputs"]],
                   tuple(str(u) for u in d.get("uses") or ()),
                   tuple(str(o) for o in d.get("outputs") or ()),
                   {str(k): tuple(map(str, v)) for k, v in (d.get("axes") or {}).items()},
                   Work.from_data(d["work"]) if d.get("work") else None)


class MistakeRecord:
    """A catalogued mistake as the check sees it: its name, its message, and what it
    gives on each case. ``outcomes`` may be a list or a function that computes it once
    (the live reference computes a mistake's outcomes only when a diagnosis needs them).
    An ``exact`` mistake (the error model's) is named only when it behaves like the answer
    on every case it was run on; its outcome on a case it was not run on is None."""

    def __init__(self, name: str, message: str, outcomes, exact: bool = False):
        self.name, self.message = name, message
        self._outcomes = outcomes
        self.exact = exact  # named only when it behaves like the answer on every case

    @property
    def outcomes(self) -> list[Outcome]:
        if callable(self._outcomes):
            self._outcomes = self._outcomes()
        return self._outcomes


@dataclass
class Expectations:
    """Everything a check compares a learner's answer with, for one exercise: the cases
    (visible or hidden), the reference's outcome on each, and each mistake's."""

    info: ExerciseInfo
    hidden: bool
    cases: list[Case]
    expected: list[Outcome]
    mistakes: list[MistakeRecord]
    # For a composite: per case, ``{helper: sealed table}`` of the learner's graded
    # helpers it calls (``grader.learner.standin``); empty for any other exercise.
    stand_ins: list[dict] = field(default_factory=list)

    def to_data(self) -> dict:
        return {"info": self.info.to_data(), "hidden": self.hidden,
                "cases": [c.to_data() for c in self.cases],
                "expected": [o.to_data() for o in self.expected],
                "mistakes": [{"name": m.name, "message": m.message,
                              "outcomes": [None if o is None else o.to_data() for o in m.outcomes],
                              **({"exact": True} if m.exact else {})}
                             for m in self.mistakes],
                **({"stand_ins": self.stand_ins} if self.stand_ins else {})}

    @classmethod
    def from_data(cls, d: dict) -> Expectations:
        return cls(ExerciseInfo.from_data(d["info"]), bool(d["hidden"]),
                   [Case.from_data(c) for c in d["cases"]],
                   [Outcome.from_data(o) for o in d["expected"]],
                   [MistakeRecord(m["name"], m["message"],
                                  [None if o is None and m.get("exact") is True else Outcome.from_data(o)
                                   for o in m["outcomes"]], m.get("exact") is True)
                    for m in d["mistakes"]],
                   list(d.get("stand_ins") or []))

    def helpers(self) -> list[str]:
        """The learner's graded helpers this composite calls, in the order first seen."""
        return list(dict.fromkeys(h for tables in self.stand_ins for h in tables))

    def with_stand_ins(self, helpers) -> list[Case]:
        """The cases, each carrying the sealed tables of ``helpers`` to the driver."""
        out = []
        for case, tables in zip(self.cases, self.stand_ins):
            out.append(case.with_build(stand_ins={h: tables[h] for h in helpers if h in tables}))
        return out
