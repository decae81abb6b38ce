"""The learner's side of lesson 06 (shipped in the kit).

Fixtures:

* ``toy_lm``: a small language model built from torch's own layers, for ``train``;
* ``add_first_task``: the lesson's toy task (``courseware.ablation.AddFirstTask``), for
  ``train``;
* ``ablation_row``: one run of the experiment redone with the *learner's own*
  ``TinyTransformer``, ``train`` and ``token_similarity`` (the settings the exercise
  states: the model built right after torch's generator is seeded with ``seed``,
  similarities on the probe batch drawn from ``Generator(seed)``), so that a row
  ``run_ablation`` returns can be compared with what the learner's parts give; it names
  no answer of the course's.

Comparisons: ``losses`` (one float per training step), ``ablation`` (the experiment's
rows, judged by what they mean) and ``float`` (one number that must be a Python float).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...learner.codec import Fixture
from ...learner.difference import difference
from ...learner.comparisons import Comparison, Difference, number, same_numbers
from ...learner.fixtures import load_state
from ...learner.plugins import LESSONS

LESSON = LESSONS.of(__name__)  # what this folder adds registers through it


# ----------------------------------------------------------------------------- fixtures

def toy_lm(vocab_size: int, d_model: int, n_heads: int, d_ff: int, n_layers: int, seq_len: int):
    """A small pre-norm language model from torch's own layers: token and position
    embeddings, ``nn.TransformerEncoderLayer``s, a final norm and a linear head;
    ``tokens [B, T] -> logits [B, T, vocab_size]``, in float64."""
    import torch
    from torch import nn

    class ToyLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok_emb = nn.Embedding(vocab_size, d_model)
            self.pos_emb = nn.Embedding(seq_len, d_model)
            self.layers = nn.ModuleList(
                nn.TransformerEncoderLayer(d_model, n_heads, d_ff, dropout=0.0, batch_first=True,
                                           norm_first=True) for _ in range(n_layers))
            self.ln_f = nn.LayerNorm(d_model)
            self.head = nn.Linear(d_model, vocab_size)

        def forward(self, tokens):
            x = self.tok_emb(tokens) + self.pos_emb(torch.arange(tokens.shape[1]))
            for layer in self.layers:
                x = layer(x)
            return self.head(self.ln_f(x))

    return ToyLM().double()


@LESSON.fixture("toy_lm")
def _toy_lm(sizes: dict, state: dict):
    model = toy_lm(**sizes)
    load_state(model, state)
    return model


@LESSON.fixture("add_first_task")
def _add_first_task(vocab_size: int, seq_len: int, batch_size: int):
    from courseware.ablation import AddFirstTask

    return AddFirstTask(vocab_size, seq_len, batch_size)


@LESSON.fixture("ablation_row", namespace=True)
def _ablation_row(namespace: dict, depth: int, residual: bool, steps: int, seed: int) -> dict:
    """The experiment's run at ``depth`` (with or without residuals), from the learner's
    own classes and functions in ``namespace``."""
    import torch

    from courseware.ablation import LAST, MODEL, TASK, layer_outputs

    parts = {}
    for name in ("TinyTransformer", "train", "token_similarity"):
        parts[name] = namespace.get(name)
        if not callable(parts[name]):
            raise NameError(f"this check also runs your {name}, but there is no {name} in "
                            f"your notebook: run its cell first")
    probe = TASK.sample(torch.Generator().manual_seed(seed))[0]
    measure = parts["token_similarity"]
    torch.random.manual_seed(seed)
    model = parts["TinyTransformer"](**MODEL, n_layers=depth, residual=residual)
    at_start = [measure(stream) for stream in layer_outputs(model, probe)]
    trained = parts["train"](model, TASK, steps, seed)
    return dict(depth=depth, residual=residual, losses=trained,
                final_loss=sum(trained[-LAST:]) / len(trained[-LAST:]),
                similarity_init=at_start,
                similarity_trained=[measure(stream) for stream in layer_outputs(model, probe)])


def ablation_row(depth: int, residual: bool, steps: int, seed: int) -> Fixture:
    """Lesson 06's run at ``depth`` redone with the learner's own parts."""
    return Fixture("ablation_row", {"depth": int(depth), "residual": bool(residual),
                                    "steps": int(steps), "seed": int(seed)},
                   f"<your TinyTransformer (n_layers={depth}, residual={residual}) trained by your "
                   f"train for {steps} steps, seed {seed}>")


# ----------------------------------------------------------------------------- comparisons

@LESSON.comparison
@dataclass(frozen=True)
class Losses(Comparison):
    """One float per training step."""

    kind: ClassVar[str] = "losses"


    def differ(self, expected, actual, case, against_reference=True):
        text = self._text(expected, actual, case)
        return Difference(text) if text else None

    @staticmethod
    def _text(expected, actual, case) -> str | None:
        from ...learner.difference import _is_torch

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




@LESSON.comparison
@dataclass(frozen=True)
class Ablation(Comparison):
    """Lesson 06's ``run_ablation``: never against the reference's losses, but by the shape
    of its result, the direction of the effect at the deepest depth, and one row chosen by
    the checker (the case's ``witness``), which must be what the learner's own
    ``TinyTransformer``, ``train`` and ``token_similarity`` give at those settings: the
    kernel redoes that run after the call (``grader.learner.fixtures.ablation_row``), so
    rows made up rather than trained earn nothing."""

    last: int = 10  # final_loss is the mean of this many last losses

    kind: ClassVar[str] = "ablation"


    def related(self, expected, actual, diff):
        return None  # judged by what the values mean, not entry by entry


    KEYS = ("depth", "residual", "losses", "final_loss", "similarity_init", "similarity_trained")

    def differ(self, expected, actual, case, against_reference=True):
        witness = case.build.witness
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
            if same_numbers(before, mine) and not same_numbers(before, again):
                return (f"row {i} (depth {depth}, residual={residual}) has similarity_trained "
                        f"equal to its similarity_init, but {setting} changes them: measure "
                        f"similarity_trained after training")
            for j, (a, b) in enumerate(zip(mine, again)):
                a, b = number(a), number(b)
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
        last = self.last
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
        values = [number(v) for v in losses]
        if any(v is None or not math.isfinite(v) for v in values):
            return "has losses that are not finite floats"
        final = number(row["final_loss"])
        want = float(np.mean(values[-last:]))
        if final is None or not math.isclose(final, want, rel_tol=1e-6, abs_tol=1e-9):
            said = {"the last loss alone (losses[-1])": values[-1],
                    f"the mean of the first {last}": float(np.mean(values[:last])),
                    "the mean of every loss": float(np.mean(values))}
            what = next((f": it is {words}" for words, v in said.items()
                         if final is not None and math.isclose(final, v, rel_tol=1e-6, abs_tol=1e-9)), "")
            return (f"has final_loss {row['final_loss']!r}, but the mean of its last {last} "
                    f"losses is {want:.6g}{what}")
        for key in ("similarity_init", "similarity_trained"):
            sims = row[key]
            if not isinstance(sims, (list, tuple)) or len(sims) != depth + 1:
                n = len(sims) if isinstance(sims, (list, tuple)) else type(sims).__name__
                return (f"has {key} of length {n}; a {depth}-layer model has {depth + 1} "
                        f"streams to measure (the embeddings, then one after each block)")
            sims = [number(v) for v in sims]
            if any(v is None or not -1 - 1e-6 <= v <= 1 + 1e-6 for v in sims):
                return f"has {key} values that are not cosine similarities between -1 and 1"
        return None

    @staticmethod
    def _direction_problem(pair) -> str | None:
        with_skips, without = pair
        depth = with_skips["depth"]
        s_with = [number(v) for v in with_skips["similarity_init"]]
        s_without = [number(v) for v in without["similarity_init"]]
        if not math.isclose(s_with[0], s_without[0], rel_tol=1e-6, abs_tol=1e-9):
            for row in pair:  # the start differs because it was measured after training
                if [number(v) for v in row["similarity_init"]] == \
                        [number(v) for v in row["similarity_trained"]]:
                    return (f"depth {depth}, residual={row['residual']}: similarity_init is "
                            f"similarity_trained, stream for stream, and the two models' starts "
                            f"differ: it was measured after training. Measure it right after "
                            f"building the model, before `train`")
            return (f"depth {depth}: the two models start from different weights: the token "
                    f"similarity of their embeddings (before any block) is {s_with[0]:.4f} with "
                    f"residuals and {s_without[0]:.4f} without. Seed torch's random generator with "
                    f"`seed` right before building each model, so that the skips are the only "
                    f"difference")
        loss_with, loss_without = number(with_skips["final_loss"]), number(without["final_loss"])
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




@LESSON.comparison
@dataclass(frozen=True)
class PythonFloat(Comparison):
    """One number that must be a Python ``float``: compared as the default does, then by
    its type (exactly: ``np.float64`` subclasses ``float``). Against a catalogued mistake
    only the value counts, so a diagnosis finds the mistake whatever type it comes in."""

    kind: ClassVar[str] = "float"


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
