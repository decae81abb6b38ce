"""The learner's side of lesson 05 (shipped in the kit).

* The ``heads`` fixture: a module holding ``w_q, w_k, w_v, w_o`` (``nn.Linear``) with given
  weights and no forward, for the exercises that work from a module's weights.
* The ``named`` comparison: a dict of named tensors (a module's parameters).
* The ``loads_weights`` driver: a call whose outcome is the parameters of the module it
  is handed, after the call (an answer that copies weights into a module).
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import ClassVar

from ...learner.difference import difference
from ...learner.comparisons import Comparison, Difference
from ...learner.drivers import Call
from ...learner.fixtures import load_state
from ...learner.wording import and_join, case_title, describe_input
from ...learner.plugins import LESSONS

LESSON = LESSONS.of(__name__)  # what this folder adds registers through it

LAYERS = ("w_q", "w_k", "w_v", "w_o")


@LESSON.fixture("heads")
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


@LESSON.driver
@dataclass(frozen=True)
class LoadsWeights(Call):
    """``answer(*args)``; the outcome is argument ``arg``'s parameters after the call."""

    arg: int = 0

    kind: ClassVar[str] = "loads_weights"

    def returned(self, result, args):
        return {name: p.detach().clone() for name, p in args[self.arg].named_parameters()}

    def handed_over(self, args, names=()):
        return _own_parameters_kept(self.hand_over(args, names), self.arg)

    def failure(self, name, case, error):
        if error.type != ParametersReplaced.__name__:
            return None
        return "\n".join([
            f"{name} gave `{ARG_NAME}` parameters that are not its own.", "",
            f"Diagnosis: {error.message}. Copy into the parameters `{ARG_NAME}` already has, in "
            f"place (`Tensor.copy_`, under `torch.no_grad()`): that keeps `{ARG_NAME}`'s own "
            f"parameter objects, each with memory of its own. Whatever holds them (an "
            f"optimizer, a test) keeps working, and changing the other module later leaves "
            f"`{ARG_NAME}` as it is.", "",
            f"Smallest input where it goes wrong{case_title(case)}:", describe_input(case)])


ARG_NAME = "ours"


class ParametersReplaced(RuntimeError):
    """The answer put new parameter objects into the module, or parameters whose memory
    is another argument's, where it was to copy into the module's own."""


def _storage(t) -> int:
    return t.untyped_storage().data_ptr()


@contextlib.contextmanager
def _own_parameters_kept(args, arg: int):
    """Run the body with ``args``; on leaving, fail the call if argument ``arg`` holds a
    parameter that is not the one it held before, or whose memory is another argument's
    (a view of torch's weights, kept by ``.data =``)."""
    module = args[arg]
    before = dict(module.named_parameters())
    own = {name: _storage(p) for name, p in before.items()}
    yield args
    after = dict(module.named_parameters())
    replaced = [name for name, p in before.items() if after.get(name) is not p]
    if replaced:
        one = len(replaced) == 1
        raise ParametersReplaced(
            f"{and_join(replaced)} {'is a new object' if one else 'are new objects'}, not the "
            f"parameter{'' if one else 's'} it had before the call")
    others = {_storage(p) for i, a in enumerate(args) if i != arg and hasattr(a, "parameters")
              for p in a.parameters()}
    shared = [name for name, p in after.items() if _storage(p) in others and _storage(p) != own[name]]
    if shared:
        one = len(shared) == 1
        raise ParametersReplaced(
            f"{and_join(shared)} {'holds' if one else 'hold'} the memory of `theirs`'s "
            f"parameters, not {'its' if one else 'their'} own")


@LESSON.comparison
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
