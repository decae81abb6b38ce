"""A composite is judged on its own code however it reaches its helper (issue 32, §1).

A learner's ``MultiHeadAttention`` reaches ``split_heads`` by name, through a lambda, a
local alias, a ``functools.partial``, a staticmethod, an attribute set in ``__init__``, a
method of its own or the module's attribute; a ``TinyTransformer`` builds ``Block``
directly, through a subclass, a factory lambda, an alias or a class attribute. With a
wrong helper, every right composite passes, in the notebook and at grading, and says
that the reference's results stood in. A composite with its own mistake still fails,
and its message names the failing helper first. A composite that never reaches the
stand-in is told so, by the helper's name. Whatever was changed for the run is put back.
"""
from __future__ import annotations

import functools
import sys
import types

import numpy as np
import pytest

from grader.course import CheckCall
from grader.grading.notebook.bridge import Session
from grader.grading.notebook.trusted import Checker
from grader.learner.checks import verdict
from grader.learner.shortcuts import SourceReader
from grader.learner.standin import StandIn, installed
from grader.lessons import expectations

from heldout_answers import BLOCK, BLOCK_HEAD, HEADS, L05, L06, MHA_HEAD, MODEL_FORWARD, MODEL_HEAD, \
    MODEL_TAIL
from test_bridge import FakeKernel

NOTE = "the reference's results stood in for"

# ----------------------------------------------------------------------------- lesson 05

# A split_heads that reshapes without moving an axis: its own check fails.
FLAT_SPLIT = HEADS.replace("return x.reshape(B, T, n_heads, d_model // n_heads).transpose(1, 2)",
                           "return x.reshape(B, n_heads, T, d_model // n_heads)")
assert FLAT_SPLIT != HEADS

INIT = """
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
"""
REST = """
        s = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        w = torch.softmax(s, dim=-1)
        if mask is not None:
            w = w.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
        return self.w_o(merge_heads(w @ v)), w
"""
PROJECT = "self.w_q(query), self.w_k(key), self.w_v(value)"


def mha(reach: str, before: str = "", members: str = "") -> str:
    """A right MultiHeadAttention whose forward gets q, k and v from split_heads by
    ``reach`` (a line setting ``q, k, v``), with ``before`` at module level and
    ``members`` in the class body."""
    head = MHA_HEAD.replace("class MultiHeadAttention(nn.Module):\n",
                            "class MultiHeadAttention(nn.Module):\n" + members)
    head = head.replace("        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads\n",
                        "        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads\n"
                        + INIT)
    return before + head + reach + REST


REACHES = {
    "direct": mha(f"        q, k, v = (split_heads(t, self.n_heads) for t in ({PROJECT}))\n"),
    "lambda": mha("        sh = lambda t: split_heads(t, self.n_heads)\n"
                  f"        q, k, v = sh(self.w_q(query)), sh(self.w_k(key)), sh(self.w_v(value))\n"),
    "local alias": mha(f"        q, k, v = (_split(t, self.n_heads) for t in ({PROJECT}))\n",
                       before="\n_split = split_heads\n"),
    "partial": mha("        sh = functools.partial(split_heads, n_heads=self.n_heads)\n"
                   f"        q, k, v = map(sh, ({PROJECT}))\n", before="\nimport functools\n"),
    "staticmethod": mha(f"        q, k, v = (self.split(t, self.n_heads) for t in ({PROJECT}))\n",
                        members="    split = staticmethod(split_heads)\n"),
    "attribute set in __init__": mha(
        f"        q, k, v = (self._split(t, self.n_heads) for t in ({PROJECT}))\n"),
    "method": mha(f"        q, k, v = (self._heads(t) for t in ({PROJECT}))\n",
                  members="    def _heads(self, t):\n        return split_heads(t, self.n_heads)\n"),
    "module attribute": mha(f"        q, k, v = (heads.split_heads(t, self.n_heads) for t in ({PROJECT}))\n",
                            before="\nimport types\nheads = types.ModuleType('heads')\n"
                                   "heads.split_heads = split_heads\n"),
}
# The attribute set in __init__: added after the layers, so that nn.Module is set up.
REACHES["attribute set in __init__"] = REACHES["attribute set in __init__"].replace(
    INIT, INIT + "        self._split = split_heads\n")

# ----------------------------------------------------------------------------- lesson 06

# A Block that never adds the skips: its own check fails.
NO_SKIPS = BLOCK_HEAD + """\
        h = self.ln1(x)
        x = self.attn(h, h, h, need_weights=False)[0]
        return self.mlp(self.ln2(x))
"""

BUILDS = {
    "direct": "        self.blocks = nn.ModuleList(\n"
              "            [Block(d_model, n_heads, d_ff, residual=residual) for _ in range(n_layers)])\n",
    "subclass": "        self.blocks = nn.ModuleList([MyBlock(d_model, n_heads, d_ff, residual)\n"
                "                                     for _ in range(n_layers)])\n",
    "factory lambda": "        make = lambda: Block(d_model, n_heads, d_ff, residual=residual)\n"
                      "        self.blocks = nn.ModuleList([make() for _ in range(n_layers)])\n",
    "alias in a loop": "        B = Block\n        self.blocks = nn.ModuleList()\n"
                       "        for _ in range(n_layers):\n"
                       "            self.blocks.append(B(d_model, n_heads, d_ff, residual=residual))\n",
    "class attribute": "        self.blocks = nn.ModuleList([self.block_class(d_model, n_heads, d_ff, residual)\n"
                       "                                     for _ in range(n_layers)])\n",
}


def model(build: str) -> str:
    head = MODEL_HEAD.replace("class TinyTransformer(nn.Module):\n",
                              "class TinyTransformer(nn.Module):\n    block_class = Block\n")
    return head + build + MODEL_TAIL + MODEL_FORWARD


SUBCLASS = "\nclass MyBlock(Block):\n    pass\n"

# ----------------------------------------------------------------------------- harness


def module_of(source: str, name: str) -> dict:
    """``source`` run in a module of its own, as a notebook's ``__main__`` is: its
    classes find their neighbours through it, and its code is the learner's."""
    module = types.ModuleType(name)
    sys.modules[name] = module
    exec(compile(source, f"<{name}>", "exec"), vars(module))  # the test's own code
    return vars(module)


class ModuleKernel(FakeKernel):
    """The fake kernel of tests/test_bridge.py, with the learner's code in a module."""

    def __init__(self, source: str, name: str):
        super().__init__("")
        self.ns = module_of(source, name)


def graded(source: str, exercise: str, name: str, hidden: bool = True):
    reader = SourceReader()
    reader.read(source, "<cell answer>")
    call = CheckCall(exercise, exercise, hidden)
    return Checker._check(call, Session(ModuleKernel(source, name), 0, 1e18), reader.scope())


def ident(text: str) -> str:
    return "learner_reach_" + "".join(c if c.isalnum() else "_" for c in text)


# ----------------------------------------------------------------------------- the tests

def test_the_wrong_helpers_fail_their_own_checks():
    """The control: the helpers these composites stand on are wrong, so every pass below
    is owed to a stand-in."""
    heads = module_of(L05 + FLAT_SPLIT, ident("split control"))
    assert not verdict("split_heads", heads["split_heads"]).passed
    block = module_of(L06 + NO_SKIPS, ident("block control"))
    assert not verdict("Block", block["Block"]).passed


@pytest.mark.parametrize("reach", list(REACHES))
def test_a_right_attention_passes_on_a_wrong_split_heads_however_it_reaches_it(reach):
    source = L05 + FLAT_SPLIT + REACHES[reach]
    ns = module_of(source, ident("mha " + reach))
    v = verdict("MultiHeadAttention", ns["MultiHeadAttention"])
    assert v.passed, v.message
    assert NOTE in v.message and v.stood_in == ("split_heads",), v.message
    at_grading = graded(source, "MultiHeadAttention", ident("graded mha " + reach))
    assert at_grading.passed, at_grading.message
    assert at_grading.stood_in == ("split_heads",)


@pytest.mark.parametrize("build", list(BUILDS))
def test_a_right_model_passes_on_a_block_without_skips_however_it_builds_it(build):
    source = L06 + NO_SKIPS + SUBCLASS + model(BUILDS[build])
    ns = module_of(source, ident("model " + build))
    v = verdict("TinyTransformer", ns["TinyTransformer"])
    assert v.passed, v.message
    assert NOTE in v.message and v.stood_in == ("Block",), v.message
    at_grading = graded(source, "TinyTransformer", ident("graded model " + build))
    assert at_grading.passed, at_grading.message


def test_a_right_model_on_a_right_block_sets_nothing_aside():
    ns = module_of(L06 + BLOCK + SUBCLASS + model(BUILDS["subclass"]), ident("model right"))
    v = verdict("TinyTransformer", ns["TinyTransformer"])
    assert v.passed and v.stood_in == () and NOTE not in v.message, v.message


def test_a_wrong_model_on_a_wrong_block_names_the_block_first_and_its_own_mistake():
    """No final LayerNorm: the model's own mistake, told after the Block is named."""
    wrong = model(BUILDS["direct"]).replace("self.head(self.ln_f(stream))", "self.head(stream)")
    ns = module_of(L06 + NO_SKIPS + wrong, ident("model no final norm"))
    v = verdict("TinyTransformer", ns["TinyTransformer"])
    assert not v.passed
    lines = v.message.splitlines()
    assert lines[2].startswith("Your Block fails its own check, so the reference's results stood "
                               "in for it here: what follows is about TinyTransformer's own code"), v.message
    assert "ln_f" in v.message.split("Smallest input")[0].split("own code.")[1], v.message
    assert v.stood_in == ("Block",)


def test_a_model_that_hands_its_block_another_stream_is_told_which_part_differs():
    """No position embedding: the first Block gets a stream the reference never gives it,
    with the case's weights; a model that never loads the weights is told that instead."""
    wrong = model(BUILDS["direct"]).replace(" + self.pos_emb(positions)", "")
    v = verdict("TinyTransformer", module_of(L06 + NO_SKIPS + wrong, ident("model no pos"))["TinyTransformer"])
    assert not v.passed
    assert v.message.splitlines()[2].startswith(
        "Diagnosis: TinyTransformer gives Block an input the reference never gives it"), v.message
    assert "is called with the case's weights, but another input" in v.message, v.message


def test_a_wrong_attention_on_a_wrong_split_heads_still_fails_and_names_it_first():
    wrong = REACHES["lambda"].replace("return self.w_o(merge_heads(w @ v)), w",
                                      "return merge_heads(w @ v), w")
    source = L05 + FLAT_SPLIT + wrong
    for v in (verdict("MultiHeadAttention", module_of(source, ident("mha no w_o"))["MultiHeadAttention"]),
              graded(source, "MultiHeadAttention", ident("graded mha no w_o"))):
        assert not v.passed, v.message
        assert v.message.splitlines()[2].startswith("Your split_heads fails its own check"), v.message
        assert "w_o" in v.message.split("Smallest input")[0], v.message


CLOSURE_SPLIT = """
def _made():
    flat = True
    def split_heads(x, n_heads):
        B, T, d_model = x.shape
        if flat:
            return x.reshape(B, n_heads, T, d_model // n_heads)
    return split_heads

split_heads = _made()
_split = split_heads
"""


def test_a_helper_the_check_cannot_replace_is_named_as_such():
    """A split_heads made in a closure cannot have its code swapped, and the composite
    holds it under another name: the stand-in is never reached, and the message says so,
    naming split_heads, instead of blaming the composite."""
    source = L05 + HEADS + CLOSURE_SPLIT + mha(
        f"        q, k, v = (_split(t, self.n_heads) for t in ({PROJECT}))\n")
    for v in (verdict("MultiHeadAttention", module_of(source, ident("mha closure"))["MultiHeadAttention"]),
              graded(source, "MultiHeadAttention", ident("graded mha closure"))):
        assert not v.passed
        note = v.message.splitlines()[2]
        assert note.startswith("Your split_heads fails its own check. The check put the reference's "
                               "results in its place, but your MultiHeadAttention never reached it"), v.message
        assert v.blamed == ("split_heads",)


def test_what_a_run_changes_is_put_back():
    ns = module_of(L05 + FLAT_SPLIT + REACHES["staticmethod"], ident("mha put back"))
    split, code = ns["split_heads"], ns["split_heads"].__code__
    assert verdict("MultiHeadAttention", ns["MultiHeadAttention"]).passed
    assert ns["split_heads"] is split and split.__code__ is code and split.__kwdefaults__ is None
    block_ns = module_of(L06 + NO_SKIPS + SUBCLASS + model(BUILDS["subclass"]), ident("model put back"))
    block, forward = block_ns["Block"], block_ns["Block"].__dict__["forward"]
    assert verdict("TinyTransformer", block_ns["TinyTransformer"]).passed
    assert block.__dict__["forward"] is forward and "forward" not in block_ns["MyBlock"].__dict__


def test_a_librarys_function_under_the_helpers_name_is_never_changed():
    """``split_heads = textwrap.dedent`` (a library's Python function): only the name is
    rebound for the run, the library's function never changes."""
    import textwrap

    table = expectations("MultiHeadAttention").stand_ins[0]["split_heads"]
    code = textwrap.dedent.__code__
    ns = {"__name__": "learner_library", "split_heads": textwrap.dedent}
    with installed(ns, {"split_heads": table}):
        assert isinstance(ns["split_heads"], StandIn) and textwrap.dedent.__code__ is code
    assert ns["split_heads"] is textwrap.dedent


def test_a_stand_in_module_refuses_weights_and_sizes_the_reference_never_uses():
    """The Block's stand-in unlocks only with the case's weights loaded and the sizes
    the reference builds it with: other weights, or another residual flag, refuse."""
    import torch

    from grader.learner.standin import HelperInputMismatch, module_result
    from grader.lessons import get, helper_calls

    ex = get("TinyTransformer")
    case = expectations("TinyTransformer").cases[0]
    table = expectations("TinyTransformer").stand_ins[0]["Block"]
    call = helper_calls(ex, case)["Block"][0]
    want = call.module(*call.args)
    torch.testing.assert_close(module_result("Block", table, call), want)
    with torch.no_grad():
        other = type(call)(call.init, _nudged(call.module), call.args, call.kwargs)
    with pytest.raises(HelperInputMismatch, match="is called with weights that are not the case's"):
        module_result("Block", table, other)
    flipped = (call.init[0], {**call.init[1], "residual": not call.init[1].get("residual", True)})
    with pytest.raises(HelperInputMismatch, match="is built, but on this input the reference builds"):
        module_result("Block", table, type(call)(flipped, call.module, call.args, call.kwargs))


def _nudged(module):
    import copy

    other = copy.deepcopy(module)
    next(other.parameters()).data += 1e-3
    return other


def test_a_model_that_builds_its_block_with_other_sizes_is_told_what_it_built():
    """The residual flag never reaches the blocks: with the reference's Block standing in,
    the message says the Block was built otherwise than the reference builds it."""
    wrong = model(BUILDS["direct"]).replace("Block(d_model, n_heads, d_ff, residual=residual)",
                                            "Block(d_model, n_heads, d_ff)")
    v = verdict("TinyTransformer", module_of(L06 + NO_SKIPS + wrong, ident("model no flag"))["TinyTransformer"])
    assert not v.passed
    head = v.message.split("Smallest input")[0]
    assert "TinyTransformer gives Block an input the reference never gives it" in head, v.message
    assert "Block(4, 1, 4, True) is built, but on this input the reference builds Block(4, 1, 4, False)" \
        in head, v.message
