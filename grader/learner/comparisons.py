"""How a check compares an answer's outcome with an expected one, kind by kind.

An exercise's description names its kind (``{"kind": "steps", ...}``); every kind works on
data only (arrays, tensors, numbers, lists, dicts), so it judges a value sent back by a
learner's kernel exactly as one computed in the notebook. ``differ`` returns ``None`` when
the two agree, else a :class:`Difference`: what differs, and optionally which part of the
value the message should show (a failing step, a module's layout).

``against_reference`` is True when ``expected`` is the reference's outcome, False when it
is a catalogued mistake's (the check then asks whether the learner's answer behaves like
that mistake, so alternatives the reference allows do not apply).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .compare import FLOAT32, difference, to_numpy
from .messages import and_join
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


def _number(x) -> float | None:
    x = to_numpy(x)
    if isinstance(x, np.ndarray) and x.size == 1 and x.dtype.kind in "iuf":
        x = x.item()
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        return None
    return float(x)


def _same_numbers(a, b) -> bool:
    """Whether ``a`` and ``b`` are lists of the same numbers (exactly)."""
    if not isinstance(a, (list, tuple)) or not isinstance(b, (list, tuple)) or len(a) != len(b):
        return False
    pairs = [(_number(x), _number(y)) for x, y in zip(a, b)]
    return all(x is not None and x == y for x, y in pairs)


class Comparison:
    """The default: ``grader.learner.compare.difference`` at the case's tolerance."""

    def __init__(self, spec: dict):
        self.spec = spec

    def differ(self, expected, actual, case, against_reference: bool = True) -> Difference | None:
        text = difference(expected, actual, case.tol)
        return Difference(text) if text else None

    def related(self, expected, actual, diff: Difference) -> tuple | None:
        """The two values a relation reads (``grader.learner.relations``), or None where
        a relation between them would not mean what it says (losses, layouts)."""
        return expected, actual

    def show(self, value, case, role: str, diff: Difference | None) -> str:
        """How the message shows ``value`` (``role``: "expected" or "returned")."""
        from .messages import fmt_value

        return fmt_value(value)

    def show_pair(self, expected, returned, case, diff: Difference | None) -> tuple[str, str, tuple]:
        """How the message shows the expected and the returned value side by side, and a
        note on what is not shown (``noted_pair``'s): a kind that shows values its own way shows each alone;
        otherwise a tuple or dict is narrowed to the entries that differ
        (``grader.learner.messages.noted_pair``)."""
        if type(self).show is Comparison.show:
            from .messages import noted_pair

            return noted_pair(expected, returned, case.tol)
        return (self.show(expected, case, "expected", diff),
                self.show(returned, case, "returned", diff), ([], []))


class Exact(Comparison):
    """Exact comparison against Fractions. When ``expected`` is a float array (a float
    mistake, during a diagnosis), the answer is read as floats too."""

    def differ(self, expected, actual, case, against_reference=True):
        text = exact(expected, actual, case.tol)
        return Difference(text) if text else None


def exact(expected, actual, tol, where: str = "") -> str | None:
    if isinstance(expected, np.ndarray) and expected.dtype != object:
        try:
            actual = np.asarray(actual, dtype=float)
        except (TypeError, ValueError):
            pass
    return difference(expected, actual, tol, where)


class Steps(Comparison):
    """A dict of steps (lesson 03's ``attention_by_hand``), compared step by step in
    order; the message shows only the first step that differs: the expected value with
    the steps it is computed from, and the learner's value of that step."""

    def related(self, expected, actual, diff):
        step = diff.focus
        if isinstance(expected, dict) and isinstance(actual, dict) and step in actual:
            return expected[step], actual[step]
        return None


    def differ(self, expected, actual, case, against_reference=True):
        order, parents = self.spec["order"], self.spec.get("parents", {})
        if not isinstance(actual, dict) or not isinstance(expected, dict):
            text = difference(expected, actual, case.tol)
            return Difference(text) if text else None
        for step in order:
            if step not in actual:
                return Difference(f"the dict has no key {step!r} (it needs {', '.join(order)})",
                                  focus=step)
            text = exact(expected[step], actual[step], case.tol, f"step {step!r}: ")
            if text:
                earlier = ", ".join(order[: order.index(step)])
                if earlier:
                    text += f" (the steps before it, {earlier}, are right)"
                return Difference(text, focus=step)
        del parents
        return None

    def show(self, value, case, role, diff):
        from .messages import fmt_value

        if not isinstance(value, dict) or diff is None or diff.focus is None:
            return fmt_value(value)
        step = diff.focus

        def block(name, v):
            return [f"    {name} =", fmt_value(v, "      ")]

        if role == "expected":
            parents = list(self.spec.get("parents", {}).get(step, []))
            lines = []
            if parents:
                lines.append(f"    {step}, computed from {' and '.join(parents)} (yours "
                             f"{'is' if len(parents) == 1 else 'are'} the same):")
            for s in (*parents, step):
                if s in value:
                    lines += block(s, value[s])
            return "\n".join(lines)
        if step in value:
            return "\n".join(block(step, value[step]) +
                             [f"    (only {step} is shown, the first step that differs)"])
        return (f"    a dict with no key {step!r}; its keys are "
                f"{', '.join(map(repr, value))}")


class Accepted(Comparison):
    """A number with other accepted values (``case.meta["accept"]``), and a remark when
    the answer lands in a given range (``case.meta["near"]``) without being accepted
    (shown unless a catalogued mistake explains the value)."""

    def differ(self, expected, actual, case, against_reference=True):
        text = difference(expected, actual, case.tol)
        if text is None:
            return None
        if not against_reference:
            return Difference(text)
        value = _number(actual)
        if value is not None:
            if any(difference(alt, value, case.tol) is None for alt in case.meta.get("accept", [])):
                return None
            near = case.meta.get("near")
            if near and abs(value - near["value"]) < near["within"]:
                return Difference(text, remark=near["message"])
        return Difference(text)


LAYOUT_HELP = ("Compare the layers your `__init__` creates with the ones the exercise asks "
               "for: their names, and the sizes of their weights and biases")
UNREGISTERED_HELP = ("A layer's parameters belong to a module only when the module registers "
                     "the layer: as an attribute, or inside an nn.ModuleList or nn.Sequential. "
                     "A layer kept in a plain Python list or dict, or never created, is not "
                     "there")


class Module(Comparison):
    """The outcome of the ``module`` driver: the layout when the weights could not be
    loaded, else the output (item by item, in the order ``items`` gives), then the
    gradients that reach the parameters."""

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
        if against_reference and "grads" in expected:
            text = gradient_problem(expected, actual, case)
            if text:
                return Difference(text, focus="grads")
        return None

    def _output(self, expected, actual, case) -> str | None:
        items = self.spec.get("items")
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
            from .messages import noted_pair

            order = tuple(index for index, _ in self.spec.get("items") or ())
            return noted_pair(expected["output"], returned["output"], case.tol, first=order)
        layouts = [v.get("layout") or _state_layout(case) if isinstance(v, dict) and "not_module" not in v
                   else None for v in (expected, returned)]
        if diff is not None and diff.focus == "layout" and all(isinstance(x, dict) for x in layouts):
            return (*_layout_pair(*layouts), ([], []))
        return super().show_pair(expected, returned, case, diff)

    def show(self, value, case, role, diff):
        from .messages import fmt_value

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
    state = (case.build or {}).get("state") or {}
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


class Named(Comparison):
    """A dict of named tensors (a module's parameters): name every one that differs, then
    what differs in the first."""

    def differ(self, expected, actual, case, against_reference=True):
        if not isinstance(expected, dict) or not isinstance(actual, dict):
            text = difference(expected, actual, case.tol)
            return Difference(text) if text else None
        diffs = {name: difference(expected[name], actual.get(name), case.tol) for name in expected}
        wrong = [name for name, diff in diffs.items() if diff]
        if not wrong:
            return None
        right = [name for name in expected if name not in wrong]
        what = self.spec.get("versus", "")
        text = f"{and_join(wrong)} {'differs' if len(wrong) == 1 else 'differ'}{what}"
        if right:
            text += f" ({and_join(right)} {'is' if len(right) == 1 else 'are'} right)"
        return Difference(f"{text}. In {wrong[0]}: {diffs[wrong[0]]}")


class Losses(Comparison):
    """One float per training step."""

    def differ(self, expected, actual, case, against_reference=True):
        text = self._text(expected, actual, case)
        return Difference(text) if text else None

    @staticmethod
    def _text(expected, actual, case) -> str | None:
        from .compare import _is_torch

        if _is_torch(actual) or not isinstance(actual, (list, tuple)):
            return (f"returned {type(actual).__name__}, expected a list of {len(expected)} "
                    f"floats, one loss per step")
        if len(actual) != len(expected):
            return f"returned {len(actual)} losses for {len(expected)} steps (one per step)"
        for i, value in enumerate(actual):
            if _is_torch(value):
                return (f"entry {i} is a tensor, not a float: append `loss.item()`. A list of "
                        f"loss tensors keeps every step's graph alive in memory")
            if not isinstance(value, (float, int, np.floating, np.integer)) or isinstance(value, bool):
                return f"entry {i} is a {type(value).__name__}, not a float"
        return difference(np.asarray(expected, dtype=float), np.asarray(actual, dtype=float),
                          case.tol)


class Ablation(Comparison):
    """Lesson 06's ``run_ablation``: never against the reference's losses, but by the shape
    of its result, the direction of the effect at the deepest depth, and one row chosen by
    the checker (the case's ``witness``), which must be what the learner's own
    ``TinyTransformer``, ``train`` and ``token_similarity`` give at those settings: the
    kernel redoes that run after the call (``grader.learner.fixtures.ablation_row``), so
    rows made up rather than trained earn nothing."""

    def related(self, expected, actual, diff):
        return None  # judged by what the values mean, not entry by entry


    KEYS = ("depth", "residual", "losses", "final_loss", "similarity_init", "similarity_trained")

    def differ(self, expected, actual, case, against_reference=True):
        witness = (case.build or {}).get("witness")
        if witness is not None:
            if not (isinstance(actual, dict) and "returned" in actual and "witness" in actual):
                return Difference("the check could not read your rows and their rerun")
            text = self._text(expected["returned"], actual["returned"], case) or \
                self._witness_problem(actual["returned"], actual["witness"], witness.params)
        else:
            text = self._text(expected, actual, case)
        return Difference(text, diagnoses=True) if text else None

    @staticmethod
    def _witness_problem(rows, redone, params) -> str | None:
        """Whether the row at the witness's depth and residual flag is the run redone."""
        depth, residual = params["depth"], params["residual"]
        found = [i for i, r in enumerate(rows) if r["depth"] == depth and r["residual"] == residual]
        if not found or not isinstance(redone, dict):
            return None if found else f"has no row for depth={depth}, residual={residual}"
        i, row = found[0], rows[found[0]]
        setting = (f"your TinyTransformer(**MODEL, n_layers={depth}, residual={residual}), built "
                   f"right after torch.manual_seed({params['seed']}) and trained by your "
                   f"train(model, TASK, {params['steps']}, {params['seed']})")
        for key in ("losses", "similarity_init", "similarity_trained"):
            mine, again = row[key], redone.get(key)
            if not isinstance(again, (list, tuple)) or len(again) != len(mine):
                return (f"row {i} (depth {depth}, residual={residual}) does not match its rerun: "
                        f"{setting} gives {key} of another length")
            before = row.get("similarity_init") if key == "similarity_trained" else None
            if _same_numbers(before, mine) and not _same_numbers(before, again):
                return (f"row {i} (depth {depth}, residual={residual}) has similarity_trained "
                        f"equal to its similarity_init, but {setting} changes them: measure "
                        f"similarity_trained after training")
            for j, (a, b) in enumerate(zip(mine, again)):
                a, b = _number(a), _number(b)
                if a is None or b is None or not math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-7):
                    return (f"row {i} (depth {depth}, residual={residual}) is not what your own "
                            f"parts give: its {key}[{j}] is {a!r}, but {setting} gives {b!r} "
                            f"(the check reran this row). Every row must come from building and "
                            f"training that run, not from numbers written into the row")
        return None

    def _text(self, want, rows, case) -> str | None:
        depths, steps = case.args[0], case.args[1]
        if not isinstance(rows, list):
            return f"returned a {type(rows).__name__}, expected a list of rows (dicts)"
        if len(rows) != len(want):
            return (f"returned {len(rows)} rows; depths {list(depths)} give {len(want)}, one "
                    f"with and one without residuals for each depth")
        for i, (row, ref_row) in enumerate(zip(rows, want)):
            problem = self._row_problem(row, ref_row["depth"], ref_row["residual"], steps)
            if problem:
                return f"row {i} {problem}"
        deepest = max(depths)
        return self._direction_problem([r for r in rows if r["depth"] == deepest])

    def _row_problem(self, row, depth, residual, steps) -> str | None:
        last = self.spec.get("last", 10)
        if not isinstance(row, dict):
            return f"is a {type(row).__name__}, not a dict"
        missing = [k for k in self.KEYS if k not in row]
        if missing:
            return f"has no key {missing[0]!r} (each row needs {', '.join(map(repr, self.KEYS))})"
        if row["depth"] != depth or row["residual"] != residual:
            return (f"is depth={row['depth']!r}, residual={row['residual']!r}; expected "
                    f"depth={depth}, residual={residual} here (for each depth, the run with "
                    f"residuals first)")
        losses = row["losses"]
        if not isinstance(losses, (list, tuple)) or len(losses) != steps:
            n = len(losses) if isinstance(losses, (list, tuple)) else type(losses).__name__
            return f"has losses of length {n}; train for {steps} steps gives {steps} losses"
        values = [_number(v) for v in losses]
        if any(v is None or not math.isfinite(v) for v in values):
            return "has losses that are not finite floats"
        final = _number(row["final_loss"])
        want = float(np.mean(values[-last:]))
        if final is None or not math.isclose(final, want, rel_tol=1e-6, abs_tol=1e-9):
            return (f"has final_loss {row['final_loss']!r}, but the mean of its last {last} "
                    f"losses is {want:.6g}")
        for key in ("similarity_init", "similarity_trained"):
            sims = row[key]
            if not isinstance(sims, (list, tuple)) or len(sims) != depth + 1:
                n = len(sims) if isinstance(sims, (list, tuple)) else type(sims).__name__
                return (f"has {key} of length {n}; a {depth}-layer model has {depth + 1} "
                        f"streams to measure (the embeddings, then one after each block)")
            sims = [_number(v) for v in sims]
            if any(v is None or not -1 - 1e-6 <= v <= 1 + 1e-6 for v in sims):
                return f"has {key} values that are not cosine similarities between -1 and 1"
        return None

    @staticmethod
    def _direction_problem(pair) -> str | None:
        with_skips, without = pair
        depth = with_skips["depth"]
        s_with = [_number(v) for v in with_skips["similarity_init"]]
        s_without = [_number(v) for v in without["similarity_init"]]
        if not math.isclose(s_with[0], s_without[0], rel_tol=1e-6, abs_tol=1e-9):
            return (f"depth {depth}: the two models start from different weights: the token "
                    f"similarity of their embeddings (before any block) is {s_with[0]:.4f} with "
                    f"residuals and {s_without[0]:.4f} without. Seed torch's random generator with "
                    f"`seed` right before building each model, so that the skips are the only "
                    f"difference")
        loss_with, loss_without = _number(with_skips["final_loss"]), _number(without["final_loss"])
        if with_skips["losses"] == without["losses"] and s_with == s_without:
            return (f"depth {depth}: the runs with and without residuals are identical, so the "
                    f"residual flag changes nothing. Pass `residual` on to TinyTransformer (which "
                    f"passes it on to every Block)")
        if not s_without[-1] > s_with[-1]:
            return (f"depth {depth}: without residuals the tokens should start out more alike "
                    f"than with them (rank collapse), but the token similarity after the last "
                    f"layer, at init, is {s_without[-1]:.3f} without residuals and {s_with[-1]:.3f} "
                    f"with them. Check that the two runs are not swapped and that the similarities "
                    f"are taken after each layer, embeddings first")
        if not loss_without > loss_with:
            return (f"depth {depth}: the model without residuals should end with the higher "
                    f"loss, but its final loss is {loss_without:.3f} against {loss_with:.3f} with "
                    f"residuals. Check that the two runs are not swapped")
        return None

    def show(self, value, case, role, diff):
        rows = value
        if isinstance(rows, dict) and "returned" in rows:
            rows = rows["returned"]
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            return f"    a {type(rows).__name__}, not a list of dicts"
        head = "similarity at init: embeddings"
        lines = [f"depth  residual  final loss  {head}  last layer"]
        for r in rows:
            try:
                sims = r["similarity_init"]
                lines.append(f"{r['depth']!s:>5}  {r['residual']!s:8}  "
                             f"{float(r['final_loss']):10.3f}  {float(sims[0]):{len(head)}.3f}  "
                             f"{float(sims[-1]):10.3f}")
            except (KeyError, TypeError, IndexError, ValueError):
                lines.append(f"a row with keys {sorted(map(str, r))}")
        return "\n".join("    " + line for line in lines)


class PythonFloat(Comparison):
    """One number that must be a Python ``float``: compared as the default does, then by
    its type (exactly: ``np.float64`` subclasses ``float``). Against a catalogued mistake
    only the value counts, so a diagnosis finds the mistake whatever type it comes in."""

    def differ(self, expected, actual, case, against_reference=True):
        found = super().differ(expected, actual, case, against_reference)
        if found or not against_reference or type(actual) is float:
            return found
        return Difference(f"the value is right, but it is {_number_kind(actual)}, not a Python "
                          f"float. Return float(...) of it, which turns a one-element tensor or "
                          f"array, or a NumPy number, into a Python float", hint=False)


def _number_kind(x) -> str:
    if type(x).__module__.startswith("torch"):
        return ("a 0-d torch tensor" if getattr(x, "ndim", None) == 0
                else f"a torch {type(x).__name__}")
    if isinstance(x, np.ndarray):
        return f"a {x.ndim}-d NumPy array"
    if isinstance(x, np.generic):
        return f"a NumPy {x.dtype} (np.{type(x).__name__})"
    return f"a {type(x).__name__}"


class KeyPaddingMask(Comparison):
    """Lesson 04's ``to_mha_key_padding_mask``, judged by what torch's
    ``nn.MultiheadAttention`` does with the mask. Against the reference the target is
    torch run on each sentence's real tokens alone, with no mask (the reference's own mask
    only sets the expected form: a torch.bool tensor of shape [B, T]); against a mistake,
    what torch does with that mistake's mask."""

    def related(self, expected, actual, diff):
        return None  # judged by what the values mean, not entry by entry


    def differ(self, expected, actual, case, against_reference=True):
        text = self._text(expected, actual, case, against_reference)
        return Difference(text) if text else None

    @staticmethod
    def _text(expected, actual, case, against_reference) -> str | None:
        import torch

        from .fixtures import mha_on_real_tokens, mha_with_mask

        lengths, T = [int(v) for v in np.asarray(case.args[0])], int(case.args[1])
        if not isinstance(expected, torch.Tensor):  # a mistake that is not a tensor
            return difference(expected, actual)
        if not isinstance(actual, torch.Tensor):
            kind = "a NumPy array" if isinstance(actual, np.ndarray) else f"a {type(actual).__name__}"
            return (f"returned {kind}, but nn.MultiheadAttention needs a torch tensor "
                    f"(torch.from_numpy(...) or torch.tensor(...))")
        if actual.dtype != expected.dtype:
            return (f"dtype is {actual.dtype}, expected {expected.dtype} (a float "
                    f"key_padding_mask is *added* to the scores, it does not ignore keys)")
        if tuple(actual.shape) != tuple(expected.shape):
            return f"shape is {shape_str(actual.shape)}, expected {shape_str(expected.shape)} ([B, T])"
        try:
            got = mha_with_mask(lengths, T, actual)
        except Exception as exc:  # noqa: BLE001 (torch rejects the mask)
            return f"nn.MultiheadAttention rejected your mask: {type(exc).__name__}: {exc}"
        target = mha_on_real_tokens(lengths, T) if against_reference else \
            mha_with_mask(lengths, T, expected)
        if difference(target, got, FLOAT32) is None:
            return None
        return "given your mask, torch's nn.MultiheadAttention " + _describe(lengths, T, got[1])


def _tokens_word(n: int) -> str:
    return f"{n} real token" + ("" if n == 1 else "s")


def _describe(lengths, T, weights) -> str:
    """What torch did with a wrong mask, in words."""
    for b, n in enumerate(lengths):
        if np.isnan(weights[b]).any():
            return (f"ignores every key of sentence {b}, which has {_tokens_word(n)}, and "
                    f"returns NaN")
        on_pad = float(weights[b, :, n:].sum(axis=-1).max()) if n < T else 0.0
        if on_pad > 1e-4:
            return (f"puts up to {on_pad:.3g} of a query's attention on the padding of sentence "
                    f"{b} ({_tokens_word(n)} of {T})")
        starved = np.flatnonzero(weights[b, :, :n].max(axis=0) < 1e-6)
        if starved.size:
            return f"never attends to real token {int(starved[0])} of sentence {b}"
    return "gives weights that differ from attention over the real tokens alone"


KINDS = {"default": Comparison, "exact": Exact, "steps": Steps, "accepted": Accepted,
         "module": Module, "named": Named, "losses": Losses, "ablation": Ablation,
         "kpm": KeyPaddingMask, "float": PythonFloat}


def comparison(spec: dict) -> Comparison:
    kind = spec.get("kind", "default")
    if kind not in KINDS:
        raise ValueError(f"unknown comparison {kind!r}")
    return KINDS[kind](spec)

