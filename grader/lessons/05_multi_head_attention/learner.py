"""The learner's side of lesson 05 (shipped in the kit).

* The ``heads`` fixture: a module holding ``w_q, w_k, w_v, w_o`` (``nn.Linear``) with given
  weights and no forward, for the exercises that work from a module's weights.
* The ``named`` comparison: a dict of named tensors (a module's parameters).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...learner.difference import difference
from ...learner.comparisons import Comparison, Difference
from ...learner.fixtures import load_state
from ...learner.wording import and_join
from ...learner.plugins import register_comparison, register_fixture

LAYERS = ("w_q", "w_k", "w_v", "w_o")


@register_fixture("heads")
def _heads(d_model: int, n_heads: int, state: dict):
    from torch import nn

    class Heads(nn.Module):
        """The check's module: four layers with the case's weights, and no forward."""

        def __init__(self):
            super().__init__()
            self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
            for name in LAYERS:
                setattr(self, name, nn.Linear(d_model, d_model))

        def forward(self, *args, **kwargs):
            raise RuntimeError(
                "the check's module has no forward: this exercise works from its weights "
                "(mha.w_q.weight, ...), so compute each head yourself")

    module = Heads()
    load_state(module, state)
    return module


@register_comparison
@dataclass(frozen=True)
class Named(Comparison):
    """A dict of named tensors (a module's parameters): name every one that differs, then
    what differs in the first."""

    versus: str = ""  # what the values are compared with, as the message says it ("from torch's")

    kind: ClassVar[str] = "named"


    def differ(self, expected, actual, case, against_reference=True):
        if not isinstance(expected, dict) or not isinstance(actual, dict):
            text = difference(expected, actual, case.tol)
            return Difference(text) if text else None
        diffs = {name: difference(expected[name], actual.get(name), case.tol) for name in expected}
        wrong = [name for name, diff in diffs.items() if diff]
        if not wrong:
            return None
        right = [name for name in expected if name not in wrong]
        what = self.versus
        text = f"{and_join(wrong)} {'differs' if len(wrong) == 1 else 'differ'}{what}"
        if right:
            text += f" ({and_join(right)} {'is' if len(right) == 1 else 'are'} right)"
        return Difference(f"{text}. In {wrong[0]}: {diffs[wrong[0]]}")
