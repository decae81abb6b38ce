"""How a check compares an answer's outcome with an expected one: one dataclass per kind.

An exercise's description holds its comparison (``Exercise.compare``); it travels as data
(``{"kind": "module", "items": [...]}``, :func:`grader.learner.plugins.to_data`) in a
recording, and is read back strictly (:meth:`Comparison.from_data`). The engine has the
default and :class:`Module`; a lesson adds a kind of its own in its ``learner.py``
(``LESSON.comparison``, :mod:`grader.learner.plugins`). Every kind works on data only
(arrays, tensors, numbers, lists, dicts), so it judges a value sent back by a learner's
kernel exactly as one computed in the notebook. ``differ`` returns ``None`` when the two
agree, else a :class:`Difference`: what differs, and optionally which part of the value
the message should show (a failing step, a module's layout).

``against_reference`` is True when ``expected`` is the reference's outcome, False when it
is a catalogued mistake's (the check then asks whether the learner's answer behaves like
that mistake, so alternatives the reference allows do not apply).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .difference import FLOAT32, difference, to_numpy
from .wording import and_join
from .plugins import from_data, register_comparison, to_data
from .validation import shape_str


@dataclass
class Difference:
    text: str
    focus: object = None  # what part of the value to show; the kind knows what it means
    # What the answer's value suggests when no catalogued mistake explains it: shown only
    # then, since a diagnosis knows better.
    remark: str = ""
    # False when the exercise's hint about the computation would mislead (the value is right).
    hint: bool = True
    # True when ``text`` says what the mistake is, not only where the values differ (a kind
    # that judges by what the values mean): the message leads with it as its diagnosis.
    diagnoses: bool = False


def _real(dtype) -> bool:
    """Whether ``dtype`` holds real numbers: integers or floats (not bools)."""
    return np.issubdtype(dtype, np.integer) or np.issubdtype(dtype, np.floating)


def number(x) -> float | None:
    """``x`` as a float if it is one real number (a one-element array or tensor too)."""
    x = to_numpy(x)
    if isinstance(x, np.ndarray) and x.size == 1 and _real(x.dtype):
        x = x.item()
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        return None
    return float(x)


def same_numbers(a, b) -> bool:
    """Whether ``a`` and ``b`` are lists of the same numbers (exactly)."""
    if not isinstance(a, (list, tuple)) or not isinstance(b, (list, tuple)) or len(a) != len(b):
        return False
    pairs = [(number(x), number(y)) for x, y in zip(a, b)]
    return all(x is not None and x == y for x, y in pairs)


@register_comparison
@dataclass(frozen=True)
class Comparison:
    """The default: ``grader.learner.difference.difference`` at the case's tolerance."""

    kind: ClassVar[str] = "default"

    def to_data(self) -> dict:
        return to_data(self)

    @staticmethod
    def from_data(data) -> Comparison:
        return from_data("comparison", data, "default")

    def differ(self, expected, actual, case, against_reference: bool = True) -> Difference | None:
        text = difference(expected, actual, case.tol)
        return Difference(text) if text else None

    def related(self, expected, actual, diff: Difference) -> tuple | None:
        """The two values a relation reads (``grader.learner.relations``), or None where
        a relation between them would not mean what it says (losses, layouts)."""
        return expected, actual

    def show(self, value, case, role: str, diff: Difference | None) -> str:
        """How the message shows ``value`` (``role``: "expected" or "returned")."""
        from .wording import fmt_value

        return fmt_value(value)

    def show_pair(self, expected, returned, case, diff: Difference | None) -> tuple[str, str, tuple]:
        """How the message shows the expected and the returned value side by side, and a
        note on what is not shown (``noted_pair``'s): a kind that shows values its own way shows each alone;
        otherwise a tuple or dict is narrowed to the entries that differ
        (``grader.learner.wording.noted_pair``)."""
        if type(self).show is Comparison.show:
            from .wording import noted_pair

            return noted_pair(expected, returned, case.tol)
        return (self.show(expected, case, "expected", diff),
                self.show(returned, case, "returned", diff), ([], []))


LAYOUT_HELP = ("Compare the layers your `__init__` creates with the ones the exercise asks "
               "for: their names, and the sizes of their weights and biases")
UNREGISTERED_HELP = ("A layer's parameters belong to a module only when the module registers "
                     "the layer: as an attribute, or inside an nn.ModuleList or nn.Sequential. "
                     "A layer kept in a plain Python list or dict, or never created, is not "
                     "there")


@register_comparison
@dataclass(frozen=True)
class ModuleOutcome(Comparison):
    """The outcome of the ``module`` driver: the layout when the weights could not be
    loaded, else the output (item by item, in the order ``items`` gives), then the
    gradients that reach the parameters."""

    items: list | None = None  # [[index, label], ...]: a tuple output compared item by item

    kind: ClassVar[str] = "module"

    def related(self, expected, actual, diff):
        if diff.focus == "output" and isinstance(expected, dict) and isinstance(actual, dict):
            return expected.get("output"), actual.get("output")
        return None


    def differ(self, expected, actual, case, against_reference=True):
        if not isinstance(actual, dict) or not isinstance(expected, dict):
            text = difference(expected, actual, case.tol)
            return Difference(text) if text else None
        if "not_module" in actual:
            return Difference(f"your class made a {actual['not_module']}, not an nn.Module",
                              focus="layout")
        if "layout" in actual or "layout" in expected:
            want = expected.get("layout") or _state_layout(case)
            got = actual.get("layout") or _state_layout(case)
            text = layout_difference(want, got)
            if text:
                return Difference(text, focus="layout")
        text = self._output(expected.get("output"), actual.get("output"), case)
        if text:
            return Difference(text, focus="output")
        # Gradients through a stand-in's recorded results cannot be compared: it is not
        # asked for them (grader.learner.drivers.build_module's caller, _module).
        if against_reference and "grads" in expected and not case.build.stand_ins:
            text = gradient_problem(expected, actual, case)
            if text:
                return Difference(text, focus="grads")
        return None

    def _output(self, expected, actual, case) -> str | None:
        items = self.items
        if items and isinstance(expected, tuple) and isinstance(actual, (tuple, list)) \
                and len(actual) == len(expected):
            for index, label in items:
                text = difference(expected[index], actual[index], case.tol, label)
                if text:
                    return text
            return None
        return difference(expected, actual, case.tol)

    def show_pair(self, expected, returned, case, diff):
        plain = all(isinstance(v, dict) and "output" in v and "not_module" not in v and "layout" not in v
                    for v in (expected, returned))
        if plain and (diff is None or diff.focus != "layout"):
            from .wording import noted_pair

            order = tuple(index for index, _ in self.items or ())
            return noted_pair(expected["output"], returned["output"], case.tol, first=order)
        layouts = [v.get("layout") or _state_layout(case) if isinstance(v, dict) and "not_module" not in v
                   else None for v in (expected, returned)]
        if diff is not None and diff.focus == "layout" and all(isinstance(x, dict) for x in layouts):
            return (*_layout_pair(*layouts), ([], []))
        return super().show_pair(expected, returned, case, diff)

    def show(self, value, case, role, diff):
        from .wording import fmt_value

        if isinstance(value, dict):
            if "not_module" in value:
                return f"    a {value['not_module']}"
            if "layout" in value or (diff is not None and diff.focus == "layout"):
                layout = value.get("layout") or _state_layout(case)
                return "\n".join(f"    {name}: {shape_str(shape)}" for name, shape in layout.items())
            return fmt_value(value.get("output"))
        return fmt_value(value)


LAYOUT_LINES = 6  # layers listed at most on each side of a layout that differs


def _layout_pair(want: dict, got: dict) -> tuple[str, str]:
    """Two layouts ({parameter name: shape}) shown by the parameters that differ: missing
    on one side, or of another shape."""
    def side(mine: dict, other: dict) -> list[str]:
        names = [n for n in mine if n not in other or list(other[n]) != list(mine[n])]
        layers: dict[str, list[str]] = {}  # one line per layer: w_q.weight 4×4, w_q.bias 4
        for n in names:
            layers.setdefault(n.rsplit(".", 1)[0] if "." in n else n, []).append(
                f"{n} {shape_str(mine[n])}")
        lines = [f"    {', '.join(parts)}" for parts in list(layers.values())[:LAYOUT_LINES]]
        if len(layers) > LAYOUT_LINES:
            lines.append(f"    … and {len(layers) - LAYOUT_LINES} more layers")
        return lines

    wanted, made = side(want, got), side(got, want)
    same = sum(1 for n in want if n in got and list(got[n]) == list(want[n]))
    wanted.append(f"    (and {same} parameter{'s' if same != 1 else ''} that yours has too)")
    made = made or ["    (no parameter of yours is of a shape or name the exercise does not ask for)"]
    return "\n".join(wanted), "\n".join(made)


def _state_layout(case) -> dict:
    state = case.build.state or {}
    return {name: list(np.shape(v)) for name, v in state.items()}


def layout_difference(want: dict, got: dict) -> str | None:
    """What differs between two layouts ({parameter name: shape}), in the learner's terms."""
    if want == got:
        return None
    missing = [n for n in want if n not in got]
    extra = [n for n in got if n not in want]
    resized = [n for n in want if n in got and list(got[n]) != list(want[n])]
    parts = []
    if missing:
        parts.append(f"it has no parameter {and_join([f'`{n}`' for n in missing[:4]])}"
                     + (" (and more)" if len(missing) > 4 else ""))
    if resized:
        n = resized[0]
        parts.append(f"`{n}` has shape {shape_str(got[n])}, expected {shape_str(want[n])}")
    if extra and not missing:
        parts.append(f"it has parameters the exercise does not ask for: "
                     f"{and_join([f'`{n}`' for n in extra[:4]])}")
    # Whole layers missing, and nothing renamed or resized: the layers are not registered,
    # whatever the learner's __init__ meant to create.
    unregistered = _whole_layers_missing(missing, got) and not extra and not resized
    return "the module your `__init__` builds does not have the layers the exercise asks " \
           f"for: {'; '.join(parts)}. {UNREGISTERED_HELP if unregistered else LAYOUT_HELP}"


def _whole_layers_missing(missing: list, got: dict) -> bool:
    """Whether every missing parameter belongs to a top-level attribute of which the
    module has no parameter at all."""
    have = {n.split(".")[0] for n in got}
    return bool(missing) and not any(n.split(".")[0] in have for n in missing)


def gradient_problem(expected: dict, actual: dict, case) -> str | None:
    if actual.get("graph") is False:
        return ("the output carries no gradient, so the module cannot be trained: something in "
                "forward cuts the autograd graph (.detach(), .item(), .numpy(), torch.tensor(...) "
                "of an intermediate result, or torch.no_grad()). Keep every step a torch "
                "operation on tensors.")
    want, got = expected.get("grads") or {}, actual.get("grads") or {}
    stuck = [name.split(".")[0] for name, g in want.items()
             if g is not None and bool(to_numpy(g).any())
             and (got.get(name) is None or not bool(to_numpy(got[name]).any()))]
    if stuck:
        return (f"the values are right, but no gradient reaches {', '.join(stuck)}, so "
                f"training would never change {'it' if len(stuck) == 1 else 'them'}. Check that "
                f"forward uses the layer's output as a tensor (no .detach() or .data).")
    for name, g in want.items():
        if g is None:
            continue
        text = difference(g, got.get(name), FLOAT32 if case.tol == FLOAT32 else case.tol)
        if text:
            return (f"the values are right, but the gradient that reaches {name} is not the "
                    f"reference's: {text}. Something in forward is computed outside autograd.")
    return None


