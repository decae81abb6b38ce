"""The instructor's side of the course: one folder per lesson, and the live expectations.

A lesson folder ``grader/lessons/NN_slug/`` (the name of its source notebook) holds

* ``reference.py``: the reference of every graded function of the lesson (``__all__``);
* ``exercises.py``: one :class:`Exercise` per check: its cases (drawn from a seed, more
  and different ones when hidden), its catalogued mistakes (the reference with one knob
  changed, see :func:`knob`), the inputs it must reject, its shortcut rules, how the
  learner's side runs and compares an answer (``driver``, ``compare``), and the rules its
  notebook states with what checks each (``stated``, :mod:`grader.lessons.stated`).

:func:`expectations` turns an exercise into what the check engine compares with: the
cases, the reference's outcome on each and each mistake's, computed by running them
exactly as an answer is run. ``release`` records them for the visible cases next to each
notebook; the grader computes them live, hidden cases included. Nothing here is ever in a
learner's copy of the course.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..learner import agent
from ..learner.comparisons import Comparison
from ..learner.drivers import Call, Driver
from ..learner.plugins import LESSONS, Lesson
from ..learner.cases import BadInput, Build, Case, ExerciseInfo, Expectations, Meta, MistakeRecord, Work
from ..learner.shortcuts import LOOP, Rules
from ..learner.relations import Substitution
from ..learner.standin import ModuleCall
from .stated import Check, Stated

HIDDEN_SEED_OFFSET = 7919
TWIN_SEED_OFFSET = 104_729
TWINS = 4  # fresh cases a visible check must also pass at grading
PROBED_CASES = 4  # the smallest cases whose reference dependence is recorded (``probes``)

__all__ = ["BadInput", "Build", "Case", "Check", "Exercise", "LESSONS", "LOOP", "Meta", "Misconception",
           "ModulesBuilt", "Rules", "Stated", "Work", "expectations", "get", "knob", "lessons",
           "load_all"]


@dataclass
class Misconception:
    """A known wrong answer and what to tell a learner whose answer behaves like it.

    ``message`` says what the learner probably did and how to look for it, never the
    solution's code. ``impl`` takes the same arguments as the answer (or, for a typed
    answer, is what the mistake gives).
    """

    name: str
    impl: Any
    message: str
    sample: Any = None  # what a learner with this mistake hands in, when ``impl`` is not that
    exact: bool = False  # named only when it behaves like the answer on every case (the error model's)


INFO_FIELDS = frozenset(f.name for f in dataclasses.fields(ExerciseInfo))


@dataclass(init=False)
class Exercise:
    """One graded function of a lesson: ``info``, what the learner's side knows of it
    (:class:`grader.learner.cases.ExerciseInfo`: its name, argument names, driver,
    comparison, shortcut rules, hint, bad inputs, ``uses``, ``outputs``, ``axes`` and
    ``work``), and what only the instructor's side holds, below.

    It is written with every field as a keyword (``Exercise(name=..., reference=...,
    cases=..., driver=...)``); those of ``info`` go there, and read through
    (``exercise.driver`` is ``exercise.info.driver``). A misspelt field is an error.
    """

    info: ExerciseInfo
    reference: Any
    cases: Callable[[np.random.Generator, bool], list[Case]]  # (generator, hidden) -> cases
    misconceptions: list[Misconception] = field(default_factory=list)
    seed: int = 0
    # What the reference's outcome becomes in the expectations, when the outcome itself is
    # the answer (a typed answer's key, which is recorded sealed).
    record: Callable | None = None
    # A composite's calls on the learner's other graded functions, as the reference makes
    # them: ``calls(*args, **kwargs) -> [(helper, args, kwargs)]`` for one case (a module
    # composite's gets the reference module, with the case's weights, first), or
    # ``ModulesBuilt(("Block",))`` for module classes it builds. The helper's reference
    # gives their results, sealed into stand-ins (grader.learner.standin) that take the
    # place of a helper which fails its own check.
    calls: Callable | ModulesBuilt | None = None
    # The case's named numbers, from its arguments: ``quantities(*args, **kwargs) ->
    # {"d_k": 4, "√d_k": 2.0}``. A relation names them when a result is off by one of
    # them ("every entry of yours is 4 = d_k times the expected one").
    quantities: Callable | None = None
    # The arguments whose rows a failing answer's dependence is probed on (("K", "V")):
    # which output positions change when one row changes, against the reference's
    # (``grader.learner.relations.dependence``), on the smallest :data:`PROBED_CASES`.
    probes: tuple[str, ...] = ()
    # The argument through which a factor on the scores shows ("Q": multiplying the queries
    # by c multiplies every score by c). For the smallest cases, the reference's result
    # with the scores multiplied by each factor built from the case's scale (√d_k, 1/√d_k,
    # √d_k/√T_k, ...) is recorded, so a wrong scale is named by the factor it amounts to.
    scales: str = ""
    # Every rule the notebook states for this exercise, in its words, with what checks it
    # (grader.lessons.stated); () for an exercise whose notebook states none. None: not
    # listed yet, which tests/test_stated_rules.py refuses.
    stated: tuple[Stated, ...] | None = None

    def __init__(self, *, reference, cases, info: ExerciseInfo | None = None, **fields):
        given = {k: fields.pop(k) for k in INFO_FIELDS & set(fields)}
        if info is None:
            info = ExerciseInfo(**{"driver": Call(), "compare": Comparison(), **given})
        elif given:
            info = dataclasses.replace(info, **given)
        self.info, self.reference, self.cases = info, reference, cases
        for f in dataclasses.fields(self):
            if f.name in ("info", "reference", "cases"):
                continue
            if f.name in fields:
                setattr(self, f.name, fields.pop(f.name))
            else:
                setattr(self, f.name, f.default if f.default is not dataclasses.MISSING
                        else f.default_factory())
        if fields:
            raise TypeError(f"exercise {info.name!r}: no field {sorted(fields)[0]!r}")
        for field_name, base in (("driver", Driver), ("compare", Comparison)):
            value = getattr(info, field_name)
            if not isinstance(value, base):
                raise TypeError(f"exercise {info.name!r}: {field_name} is a {type(value).__name__}, "
                                f"not a {base.__name__} (one dataclass per kind: "
                                f"grader.learner.{'drivers' if base is Driver else 'comparisons'})")
        self.info.uses, self.info.outputs = tuple(self.info.uses), tuple(self.info.outputs)
        self.info.arg_names = tuple(self.info.arg_names)

    def __getattr__(self, name: str):  # (only for a name that is not the exercise's own)
        info = self.__dict__.get("info")
        if info is not None and name in INFO_FIELDS:
            return getattr(info, name)
        raise AttributeError(f"an Exercise has no {name!r}")

    def draw(self, hidden: bool, offset: int = 0) -> list[Case]:
        """The cases, smallest first, each with the argument names filled in (``offset``
        moves the seed: the twins of grading)."""
        rng = np.random.default_rng(self.seed + (HIDDEN_SEED_OFFSET if hidden else 0) + offset)
        cases = sorted(self.cases(rng, hidden), key=Case.size)
        for case in cases:
            case.names = case.names or tuple(self.arg_names)
            if self.quantities is not None and not case.quantities:
                case.quantities = named_quantities(self.quantities, case)
        return cases


def named_quantities(compute: Callable, case: Case) -> dict[str, float]:
    """``compute``'s named numbers of ``case``, each a finite float (none for an input
    it cannot read, such as one that is not an array)."""
    try:
        found = compute(*case.args, **case.kwargs)
    except Exception:  # noqa: BLE001 (an odd input: the case simply names no quantity)
        return {}
    out = {}
    for name, value in found.items():
        value = float(value)
        if np.isfinite(value) and value > 0:
            out[str(name)] = value
    return out


def knob(core: Callable, **settings) -> Callable:
    """``core`` with some of its keyword arguments set: a catalogued mistake written as
    the reference with one knob changed."""
    made = functools.partial(core, **settings)
    functools.update_wrapper(made, core)
    made.__name__ = f"{core.__name__}[{', '.join(f'{k}={v!r}' for k, v in settings.items())}]"
    return made


# ----------------------------------------------------------------------------- the registry

# Each lesson folder is a Lesson of the one manager (grader.learner.plugins.LESSONS); its
# exercises.py registers its exercises through it: ``LESSON = LESSONS.of(__name__)``, then
# ``LESSON.register(Exercise(...))``.
EXERCISES: dict[str, Exercise] = LESSONS.exercises


def lessons() -> list[str]:
    """The lesson folders, in reading order."""
    return [lesson.folder for lesson in LESSONS.lessons()]


def lesson_module(lesson: str, part: str):
    return LESSONS.lesson(lesson).module(part)


def _import(lesson: Lesson | str) -> None:
    lesson = LESSONS.lesson(lesson) if isinstance(lesson, str) else lesson
    if lesson.has("exercises"):
        lesson.module("exercises")  # its LESSON.register(...) calls fill the lesson


def load_all() -> dict[str, Exercise]:
    for lesson in LESSONS.lessons():
        _import(lesson)
    return EXERCISES


def get(name: str) -> Exercise:
    """The exercise called ``name``, importing lessons in reading order only as far as
    needed (so that lesson 01 never imports torch)."""
    for lesson in LESSONS.lessons():
        if name in EXERCISES:
            break
        _import(lesson)
    if name not in EXERCISES:
        raise KeyError(f"no exercise is called {name!r}. Known exercises: "
                       f"{', '.join(sorted(load_all()))}")
    return EXERCISES[name]


def lesson_of(name: str) -> str:
    """The lesson folder that defines exercise ``name``."""
    get(name)
    return LESSONS.owner[name].folder


# ----------------------------------------------------------------------------- live expectations

@functools.lru_cache(maxsize=None)
def expectations(name: str, hidden: bool = False) -> Expectations:
    """The exercise's cases (visible or hidden), the reference's outcome on each, and each
    catalogued mistake's, computed only when a diagnosis first needs it."""
    return _expectations(get(name), get(name).draw(hidden), hidden)


@functools.lru_cache(maxsize=None)
def twin_expectations(name: str) -> Expectations | None:
    """A few cases *like* the visible ones, which no learner has seen: the visible
    generator drawn again from another seed (or, where that gives the same inputs again,
    the hidden generator from that seed). At grading, a visible check must pass these too,
    so that an answer that replays the outcomes recorded in the notebook earns nothing.
    None for an exercise with a single fixed case (a typed answer)."""
    ex = get(name)
    if not ex.driver.calls_answer:
        return None
    seen = {_key(c) for c in ex.draw(False)}
    for hidden in (False, True):
        fresh = [c for c in ex.draw(hidden, TWIN_SEED_OFFSET) if _key(c) not in seen]
        if len(fresh) * 2 >= len(seen):
            break
    if not fresh:
        return None
    # A few, spread from the smallest to the largest: enough that a replay fails.
    step = max(1, len(fresh) // TWINS)
    twins = _expectations(ex, fresh[::step][:TWINS], False)
    # The visible check has read the code, tried the bad inputs and measured the work already.
    twins.info = dataclasses.replace(twins.info, rules=None, bad_inputs=[], work=None)
    return twins


def _key(case: Case) -> str:
    from ..learner import codec

    return codec.dumps(case.for_kernel())


def _expectations(ex: Exercise, cases: list[Case], hidden: bool) -> Expectations:
    name = ex.name
    expected = agent.run(ex.reference, ex.driver, cases)
    for case, outcome in zip(cases, expected):
        if outcome.error is not None:
            raise RuntimeError(f"the reference of {name} raised {outcome.error.type} on a case "
                               f"({case.note}): {outcome.error.message}")
        if ex.record is not None:
            outcome.value = ex.record(outcome.value)
    if ex.probes or ex.scales:
        _record_dependence(ex, cases[:PROBED_CASES], expected[:PROBED_CASES])
        if not any(kind != Substitution.SWAP for c in cases[:PROBED_CASES]
                   for kind, *_ in c.meta.swaps or ()):
            _record_square(ex, cases[PROBED_CASES:])
    from .error_model import model_mistakes

    mistakes = [MistakeRecord(m.name, m.message, functools.partial(_mistake_outcomes, m.impl, ex.driver,
                                                                   cases, m.exact), m.exact)
                for m in [*ex.misconceptions, *model_mistakes(ex)]]
    return Expectations(ex.info, hidden, cases, expected, mistakes, _stand_ins(ex, cases))


def _record_dependence(ex: Exercise, cases: list[Case], expected: list) -> None:
    """Put in each case's meta which output positions of the reference change when one
    row of a probed argument changes (``meta.depends = [[argument, row, positions]]``),
    and what the reference gives with one probed argument in the place of another of the
    same shape, or a square one transposed (``meta.swaps = [[kind, used, instead of,
    result]]``, as :func:`grader.learner.relations.substitutions` lists them)."""
    from ..learner.relations import changed_positions, probe_cases, rescaled, substitutions

    for case, outcome in zip(cases, expected):
        probes = probe_cases(case, ex.probes)
        if not probes:
            continue
        results = agent.run(ex.reference, ex.driver, [p for _, _, p in probes])
        depends = []
        for (name, row, _), result in zip(probes, results):
            moved = None if result.error is not None else \
                changed_positions(outcome.value, result.value, case.tol)
            if moved is None:
                break
            depends.append([name, row, moved])
        else:
            case.meta = case.meta.with_(depends=depends)
        if ex.scales:
            scaled = rescaled(case, ex.scales)
            results = agent.run(ex.reference, ex.driver, [c for _, _, c in scaled])
            found = [[v, why, r.value] for (v, why, _), r in zip(scaled, results) if r.error is None]
            if found:
                case.meta = case.meta.with_(scaled=found)
        _record_swaps(ex, case, substitutions(case, ex.probes))


def _record_swaps(ex: Exercise, case: Case, swaps: list) -> None:
    results = agent.run(ex.reference, ex.driver, [c for *_, c in swaps])
    found = [[str(kind), a, b, r.value] for (kind, a, b, _), r in zip(swaps, results)
             if r.error is None]
    if found:
        case.meta = case.meta.with_(swaps=found)


def _record_square(ex: Exercise, cases: list[Case]) -> None:
    """The swaps of the first of ``cases`` with a square probed argument, if the smallest
    cases have none: a result read along the wrong axes shows only on a square input."""
    from ..learner.relations import substitutions

    for case in cases:
        swaps = substitutions(case, ex.probes)
        if any(kind != Substitution.SWAP for kind, *_ in swaps):
            _record_swaps(ex, case, swaps)
            return


def _mistake_outcomes(impl, driver: Driver, cases: list[Case], exact: bool = False) -> list:
    """What a catalogued mistake gives on each case, without saying where an error came
    from: that is a line of the mistake's code, and the recordings ship in the kit. A
    diagnosis compares only an error's type and message."""
    from .error_model import run_mistake

    outcomes = run_mistake(impl, driver, cases) if exact else agent.run(impl, driver, cases)
    for outcome in outcomes:
        if outcome is not None and outcome.error is not None:
            outcome.error.where = ""
    return outcomes


def _stand_ins(ex: Exercise, cases: list[Case]) -> list[dict]:
    """Per case, the sealed table of each helper the reference calls (see ``Exercise.calls``)."""
    from ..learner.standin import seal, seal_module

    if ex.calls is None:
        return []
    out = []
    for case in cases:
        salt = hashlib.sha256(f"{ex.name}\0{_key(case)}".encode()).hexdigest()[:16]
        tables = {}
        for h, calls in helper_calls(ex, case).items():
            modules = [c for c in calls if isinstance(c, ModuleCall)]
            tables[h] = seal_module(h, get(h).reference, modules, salt) if modules else \
                seal(h, get(h).reference, calls, salt)
        out.append(tables)
    return out


@dataclass(frozen=True)
class ModulesBuilt:
    """``Exercise.calls`` of a module composite whose helpers are module classes it builds
    (a model's Blocks): the reference is built and run as the driver runs it, with each
    class named here recorded where the reference builds it, and every forward call of
    those modules is a call on the helper."""

    classes: tuple[str, ...]


def helper_calls(ex: Exercise, case: Case) -> dict[str, list]:
    """The composite's calls on each of its helpers on ``case``, as the reference makes
    them: ``{helper: [(args, kwargs)]}``, or ``[ModuleCall]`` for a module class (empty
    for an exercise that is no composite). A module composite's ``calls`` gets the
    reference module, built with the case's weights, before the case's arguments."""
    from ..learner import codec
    from ..learner.drivers import Module

    if ex.calls is None:
        return {}
    if isinstance(ex.calls, ModulesBuilt):
        return _modules_built(ex, case, ex.calls.classes)
    by_helper: dict[str, list] = {}
    data = codec.decode(codec.encode(case.for_kernel()))  # a copy: the calls may not change it
    args, kwargs = list(data["args"]), dict(data["kwargs"])
    if isinstance(ex.driver, Module):
        args = [built_module(ex.reference, data)] + args
    for helper, h_args, h_kwargs in ex.calls(*args, **kwargs):
        by_helper.setdefault(helper, []).append((tuple(h_args), dict(h_kwargs)))
    return by_helper


def built_module(cls, data: dict):
    """``cls`` built as the module driver builds it for the case ``data`` (its weights
    loaded), in eval mode."""
    from ..learner.drivers import build_module

    made = build_module(cls, data)
    if isinstance(made, dict):
        raise RuntimeError(f"the reference {cls.__name__} could not be built: {made}")
    return made


def _modules_built(ex: Exercise, case: Case, classes: tuple[str, ...]) -> dict[str, list]:
    """Each forward call of a module of ``classes`` while the reference runs ``case``,
    with the constructor arguments each module was built with."""
    import torch

    from ..learner import codec
    from ..learner.agent import namespace_of

    namespace = namespace_of(ex.reference)
    made: list = []
    saved = {name: namespace[name] for name in classes}

    def recorder(name, cls):
        def __init__(self, *args, **kwargs):
            cls.__init__(self, *args, **kwargs)
            made.append((name, self, (args, kwargs)))
        return type(cls.__name__, (cls,), {"__init__": __init__, "__module__": cls.__module__})

    data = codec.decode(codec.encode(case.for_kernel()))
    try:
        namespace.update({name: recorder(name, cls) for name, cls in saved.items()})
        model = built_module(ex.reference, data)
    finally:
        namespace.update(saved)
    calls: dict[str, list] = {name: [] for name in classes}
    hooks = [module.register_forward_pre_hook(
        lambda m, args, kwargs, name=name, init=init:
            calls[name].append(ModuleCall(init, m, tuple(args), dict(kwargs))), with_kwargs=True)
        for name, module, init in made]
    try:
        with torch.no_grad():
            model(*data["args"], **data["kwargs"])
    finally:
        for hook in hooks:
            hook.remove()
    return {name: found for name, found in calls.items() if found}
