"""The learner's side of lesson 09 (shipped in the kit).

Fixtures:

* ``counting_lm``: a tiny language model for ``generate``, made of tables, not of any
  answer: the logits at position t are the row of the current token, a quarter of the sum
  of the rows of every token so far, and a row for the position. Every entry is a multiple
  of 1/16, so the sums are exact, and the model gives the same logits with a cache (a
  list that its forward fills with the running sum and the number of positions) as
  without one. Fed more than the new token with a non-empty cache, it places the tokens
  after the cached ones, as a real model does, and its logits then differ.
* ``generator``: a ``torch.Generator`` seeded with ``seed``.

Comparison: ``same_kind``, numbers that must also come as the kind the reference returns (a
loss that stays a tensor; torch in, torch out).

Driver: ``gpt_run``, the module driver of ``GPT``: the model built with the case's weights
and called on the tokens, its outcome the pair (logits, the attention weights it kept in
``self.weights``); with ``prefix`` set, fed through a cache instead: the first ``prefix``
tokens in one call, then ``step`` tokens (default 1) per call, its outcome the logits of all the calls
joined along the positions and the weights kept by the last call.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...learner.comparisons import Comparison, Difference
from ...learner.drivers import Module, build_module
from ...learner.fixtures import materialise
from ...learner.plugins import LESSONS

LESSON = LESSONS.of(__name__)  # what this folder adds registers through it

MAX_POSITIONS = 64


def counting_lm(vocab_size: int, seed: int):
    """The ``counting_lm`` fixture's model (see the module's docstring)."""
    import torch
    from torch import nn

    class CountingLM(nn.Module):
        def __init__(self):
            super().__init__()
            g = torch.Generator().manual_seed(seed)
            draw = lambda *shape: torch.randint(-8, 9, shape, generator=g).double() / 4
            self.vocab_size = vocab_size
            self.rows = draw(vocab_size, vocab_size)
            self.position_rows = draw(MAX_POSITIONS, vocab_size)

        def forward(self, tokens, cache=None):
            if not isinstance(tokens, torch.Tensor) or tokens.dim() != 2:
                raise ValueError(f"the model takes tokens [B, T], got "
                                 f"{getattr(tokens, 'shape', type(tokens).__name__)}")
            tokens = tokens.long()
            B, T = tokens.shape
            start, before = 0, torch.zeros(B, self.vocab_size, dtype=torch.float64)
            if cache is not None:
                if not isinstance(cache, list):
                    raise ValueError(f"the cache must be a list (empty at first), got "
                                     f"{type(cache).__name__}")
                if cache:
                    start, before = cache[0]["positions"], cache[0]["sum"]
            if start + T > MAX_POSITIONS:
                raise ValueError(f"positions {start}..{start + T - 1} go past the model's "
                                 f"{MAX_POSITIONS}")
            own = self.rows[tokens]                                  # [B, T, V]
            sums = before[:, None, :] + own.cumsum(dim=1)
            logits = own + sums / 4 + self.position_rows[start:start + T]
            if cache is not None:
                cache[:] = [{"positions": start + T, "sum": sums[:, -1]}]
            return logits

    return CountingLM()


@LESSON.fixture("counting_lm")
def _counting_lm(vocab_size: int, seed: int):
    return counting_lm(vocab_size, seed)


@LESSON.fixture("generator")
def _generator(seed: int):
    import torch

    return torch.Generator().manual_seed(seed)


@LESSON.driver
@dataclass(frozen=True)
class GPTRun(Module):
    """The module driver, with a cached run when the case's kwargs hold ``prefix``."""

    kind: ClassVar[str] = "gpt_run"

    def run(self, answer, data, namespace):
        import torch

        kwargs = materialise(data["kwargs"], namespace)
        prefix = kwargs.get("prefix")
        if prefix is None:
            built = []

            def made(*args, **kwargs):  # the answer's constructor, each model it builds noted
                model = answer(*args, **kwargs)
                built.append(model)
                return model

            result = super().run(made, data, namespace)
            if isinstance(result, dict) and "output" in result and built:
                result["output"] = (result["output"], kept_weights(built[-1]))
            return result
        obj = build_module(answer, data)
        if isinstance(obj, dict):
            return obj
        tokens = materialise(data["args"], namespace)[0]
        step = kwargs.get("step") or 1
        cache: list = []
        with torch.no_grad():
            pieces = [obj(tokens[:, :prefix], cache=cache)]
            for t in range(prefix, tokens.shape[1], step):
                pieces.append(obj(tokens[:, t:t + step], cache=cache))
        if not all(isinstance(p, torch.Tensor) for p in pieces):
            return {"output": (pieces[0], kept_weights(obj))}
        return {"output": (torch.cat(pieces, dim=1), kept_weights(obj))}


def kept_weights(model):
    """What ``model.weights`` holds (a list of tensors, one per layer, as asked), or a note
    of what is there instead."""
    weights = getattr(model, "weights", None)
    if isinstance(weights, (list, tuple)):
        return [w.detach() if hasattr(w, "detach") else w for w in weights]
    return f"no list in self.weights ({type(weights).__name__})"


# ----------------------------------------------------------------------------- comparisons

def _kind(x) -> str:
    module = type(x).__module__
    if module.startswith("torch"):
        return "a torch tensor"
    if module.startswith("numpy"):
        return "a NumPy array" if isinstance(x, np.ndarray) else "a NumPy number"
    return f"a Python {type(x).__name__}"


@LESSON.comparison
@dataclass(frozen=True)
class SameKind(Comparison):
    """Numbers compared as the default does, then their kind: a torch tensor where the
    reference returns one, a NumPy array where it returns one. ``why`` completes the
    message. Against a catalogued mistake only the numbers count."""

    why: str = ""

    kind: ClassVar[str] = "same_kind"

    def differ(self, expected, actual, case, against_reference=True):
        found = super().differ(expected, actual, case, against_reference)
        if found or not against_reference or _kind(expected) == _kind(actual):
            return found
        return Difference(f"the numbers are right, but they come as {_kind(actual)}, not "
                          f"{_kind(expected)}. {self.why}".strip(), hint=False)
