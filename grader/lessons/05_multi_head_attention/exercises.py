"""Lesson 05 exercises: heads, multi-head attention, torch's module as the oracle.

Modules never travel in a case: a case says how to build them, as data.

* ``MultiHeadAttention``: the ``module`` driver builds the learner's class from
  ``case.build`` (its arguments, a torch seed and the check's weights), loads the weights
  if the layers' names and shapes fit (else the outcome is the layout the ``__init__``
  made, and the ``module`` comparison says what differs), runs ``forward`` on the case's
  tensors and sends back the output and the gradients that reach the four weights, so
  that a module whose values are right but cannot be trained is caught too.
* ``copy_from_torch``: a ``heads`` fixture (four layers with other weights) and a
  ``torch_mha`` fixture (``nn.MultiheadAttention`` with the check's weights) go in; the
  parameters of the first come out (``"state_of": 0``).
* ``heads_one_by_one`` and ``value_down_up`` get a ``heads`` fixture, whose ``forward``
  refuses to run, so the head-by-head loop cannot call the module it is meant to explain.

Everything runs in float32, the default of ``nn.Linear``, at the float32 tolerance.

Every catalogued mistake is a core of ``reference.py`` with one knob set wrong; for the
module, a class made from the reference with one knob of its layers or its forward
changed (:func:`module_with`).
"""
from __future__ import annotations

import functools
import inspect
import itertools
import math

import numpy as np
import torch

from ...learner.codec import Fixture
from ...learner.compare import FLOAT32, FLOAT64
from ...learner.messages import and_join
from ...learner.shortcuts import Rules
from .. import BadInput, Case, Exercise, Misconception, knob, register
from ..messages import inverted_polarity, scaled_by_sqrt_d_model, softmax_over_queries
from . import reference as ref

LAYERS = ref.LAYERS
ONE_THREAD = {"kind": "call", "threads": 1}


# ----------------------------------------------------------------------------- weights, as data

def _seeded_weights(d_model: int, seed: int, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """A weight ``[rows, d_model]`` and a bias ``[rows]``, large enough that attention is
    far from uniform and every mistake shows."""
    rng = np.random.default_rng(seed)
    weight = rng.normal(0.0, 1.0 / math.sqrt(d_model), size=(rows, d_model)) * 1.5
    bias = rng.normal(0.0, 0.3, size=rows)
    return weight.astype(np.float32), bias.astype(np.float32)


def _show(array: np.ndarray, indent: str) -> str:
    """``array`` on one line where it fits in 100 characters, else row by row."""
    text = np.array2string(array, precision=3, suppress_small=True, separator=", ",
                           max_line_width=88 - len(indent), threshold=40, edgeitems=2)
    one = " ".join(text.split()).replace("[ ", "[")
    if len(indent) + len(one) <= 100:
        return indent + one
    return "\n".join(indent + line for line in text.splitlines())


def _beside(array: np.ndarray, pad: str) -> str:
    """`` value`` on its label's line where it fits, else on the lines below."""
    shown = _show(array, pad + "  ")
    if "\n" in shown:
        return f"\n{shown}"
    return f" {shown.strip()}" if len(shown) < 80 else f"\n{shown}"


def module_state(d_model: int, seed: int) -> dict[str, np.ndarray]:
    """The check's weights for the four layers, ``{"w_q.weight": ..., "w_q.bias": ...}``."""
    state = {}
    for i, name in enumerate(LAYERS):
        state[f"{name}.weight"], state[f"{name}.bias"] = _seeded_weights(d_model, 1000 * seed + i,
                                                                         d_model)
    return state


def module_text(d_model: int, n_heads: int, seed: int | None = None, show=()) -> str:
    """How a message shows a module with the check's weights (and the weights of ``show``)."""
    text = f"MultiHeadAttention(d_model={d_model}, n_heads={n_heads})"
    if seed is None:
        return text
    text += f" with the check's weights (seed {seed})"
    state, pad = module_state(d_model, seed), "      "
    for name in show:
        text += f"\n{pad}{name}.weight ={_beside(state[f'{name}.weight'], pad)}"
    return text


def module_build(d_model: int, n_heads: int, seed: int | None = None) -> dict:
    """``case.build`` for the learner's class: ``cls(d_model, n_heads)`` under torch seed
    ``seed``, with the check's weights (none for a bad input, which must raise first)."""
    build = {"args": [d_model, n_heads], "seed": seed or 0, "label": "module",
             "describe": module_text(d_model, n_heads, seed)}
    if seed is not None:
        build["state"] = module_state(d_model, seed)
        build["grads"] = {"item": 0, "params": [f"{name}.weight" for name in LAYERS]}
    return build


def heads_fixture(d_model: int, n_heads: int, seed: int, show=()) -> Fixture:
    """A module holding ``w_q, w_k, w_v, w_o`` with the check's weights and no forward."""
    return Fixture("heads", {"d_model": d_model, "n_heads": n_heads,
                             "state": module_state(d_model, seed)},
                   module_text(d_model, n_heads, seed, show))


def torch_fixture(d_model: int, n_heads: int, seed: int, batch_first: bool = True,
                  kdim: int | None = None) -> Fixture:
    """``nn.MultiheadAttention(..., batch_first=True)`` with the check's weights."""
    extra = "" if kdim is None else f", kdim={kdim}, vdim={kdim}"
    call = (f"nn.MultiheadAttention(embed_dim={d_model}, num_heads={n_heads}{extra}, "
            f"batch_first={batch_first})")
    params = {"embed_dim": d_model, "num_heads": n_heads, "batch_first": batch_first,
              "kdim": kdim, "seed": seed}
    if kdim is not None:  # separate q, k, v weights: torch's own initial values will do
        return Fixture("torch_mha", params, call)
    w_in, b_in = _seeded_weights(d_model, 7000 + seed, 3 * d_model)
    w_out, b_out = _seeded_weights(d_model, 9000 + seed, d_model)
    params["state"] = {"in_proj_weight": w_in, "in_proj_bias": b_in,
                       "out_proj.weight": w_out, "out_proj.bias": b_out}
    if not batch_first:
        return Fixture("torch_mha", params, call)
    d, pad = d_model, "      "
    blocks = [f"{pad}in_proj_weight rows {i * d}:{(i + 1) * d} ({part}) ="
              f"{_beside(w_in[i * d:(i + 1) * d], pad)}"
              for i, part in enumerate(("query", "key", "value"))]
    describe = "\n".join([f"{call}, with", *blocks,
                          f"{pad}in_proj_bias ={_beside(b_in, pad)}",
                          f"{pad}out_proj.weight ={_beside(w_out, pad)}",
                          f"{pad}out_proj.bias ={_beside(b_out, pad)}"])
    return Fixture("torch_mha", params, describe)


# ----------------------------------------------------------------------------- rules

ATTENTION_SHORTCUTS = {
    "scaled_dot_product_attention": "F.scaled_dot_product_attention",
    "MultiheadAttention": "nn.MultiheadAttention",
    "multi_head_attention_forward": "F.multi_head_attention_forward",
}
ATTENTION_OBJECTS = ("torch.nn.MultiheadAttention",
                     "torch.nn.functional.scaled_dot_product_attention",
                     "torch.nn.functional.multi_head_attention_forward")


def _rules(name: str, *, names=None, objects=(), why: str = "") -> Rules:
    """Rules that also forbid the course's own reference of exercise ``name`` (so that
    ``from grader.reference import ...`` under any alias is caught)."""
    return Rules(names=dict(names or {}), objects=tuple(objects) + (f"grader.reference.{name}",),
                 why=why or "Write it yourself; the course's reference solution is not the answer.")


BY_HAND_WHY = (
    "This exercise builds multi-head attention from its parts: the projections, the split "
    "into heads, the scaled scores, the softmax, the weighted values and w_o. torch's "
    "ready-made attention is the oracle the check compares with, so it cannot be the answer."
)
COUNT_NAMES = {**ATTENTION_SHORTCUTS, "parameters": ".parameters()", "numel": ".numel()",
               "Linear": "nn.Linear"}
COUNT_WHY = ("Count from the shapes of the weights and biases: the formula is the answer, not "
             "a module that counts for you.")


# ----------------------------------------------------------------------------- tensors

def _coded(shape) -> torch.Tensor:
    """Entries that say where they are: x[b, t, j] = 100·b + 10·t + j (one digit per axis,
    so a value that lands in the wrong place is easy to spot)."""
    weights = [10 ** (len(shape) - 1 - i) for i in range(len(shape))]
    grids = np.meshgrid(*[np.arange(n) for n in shape], indexing="ij")
    return torch.from_numpy(sum(w * g for w, g in zip(weights, grids)).astype(np.float32))


def _normal(rng, shape, dtype=np.float32) -> torch.Tensor:
    return torch.from_numpy(rng.normal(size=shape).astype(dtype))


def _key_mask(rng, batch: int, t_k: int) -> torch.Tensor:
    """[B, T_k], True at real tokens: item 0 is full, the others end in padding."""
    lengths = [t_k] + [int(rng.integers(1, t_k)) if t_k > 1 else 1 for _ in range(batch - 1)]
    return torch.arange(t_k)[None, :] < torch.tensor(lengths)[:, None]


def _random_mask(rng, shape) -> torch.Tensor:
    """A random bool mask with at least one allowed key in every row."""
    mask = rng.random(shape) < 0.6
    first = rng.integers(0, shape[-1], size=shape[:-1])
    np.put_along_axis(mask, first[..., None], True, axis=-1)
    return torch.from_numpy(mask)


# ----------------------------------------------------------------------------- split / merge

def split_cases(rng, hidden: bool) -> list[Case]:
    plans = [((1, 2, 4), 2), ((1, 3, 4), 2), ((2, 2, 6), 3), ((1, 3, 6), 2), ((2, 3, 4), 1),
             ((1, 2, 4), 4)]
    if hidden:
        plans += [((2, 4, 8), 4), ((3, 2, 6), 6), ((1, 5, 9), 3), ((2, 3, 8), 2)]
    cases = [Case((_coded(shape), h), note="entries x[b, t, j] = 100·b + 10·t + j")
             for shape, h in plans]
    cases.append(Case((_normal(rng, (2, 5, 8)), 4), note="random float32", tol=FLOAT32))
    cases.append(Case((_normal(rng, (2, 3, 6), np.float64), 3), note="float64"))
    return cases


def merge_cases(rng, hidden: bool) -> list[Case]:
    shapes = [(1, 2, 2, 2), (1, 2, 3, 2), (2, 3, 2, 2), (1, 1, 3, 4), (1, 4, 2, 1)]
    if hidden:
        shapes += [(2, 4, 3, 2), (3, 2, 4, 3), (1, 3, 5, 3), (2, 6, 2, 1)]
    cases = [Case((_coded(shape),), note="entries x[b, i, t, j] = 1000·b + 100·i + 10·t + j "
                  "(head i, token t, feature j)") for shape in shapes]
    cases.append(Case((_normal(rng, (2, 4, 5, 2)),), note="random float32", tol=FLOAT32))
    cases.append(Case((_normal(rng, (2, 3, 2, 2), np.float64),), note="float64"))
    return cases


NO_TRANSPOSE_SPLIT = (
    "your heads mix tokens: you reshaped [B, T, d_model] straight to [B, h, T, d_head]. "
    "reshape only re-reads the numbers in memory order, and in memory the features of token 0 "
    "come first, so head 0 ends up with pieces of several tokens. First cut each token's "
    "features into heads, x.reshape(B, T, h, d_head), then move the head axis in front of "
    "the token axis with .transpose(1, 2)."
)

register(Exercise(
    name="split_heads",
    reference=ref.split_heads,
    cases=split_cases,
    misconceptions=[
        Misconception("reshaped without the transpose",
                      knob(ref._split_heads, move_heads="reshape"), NO_TRANSPOSE_SPLIT),
        Misconception(
            "head axis not moved", knob(ref._split_heads, move_heads="no"),
            "your result has shape [B, T, h, d_head]: the features are cut into heads, but "
            "the head axis is still behind the token axis. Add .transpose(1, 2) so that "
            "every head is its own [T, d_head] matrix: [B, h, T, d_head].",
        ),
        Misconception(
            "features dealt out one by one", knob(ref._split_heads, features="dealt"),
            "head 0 got features 0, h, 2h, ... (every h-th feature) instead of the block "
            "0:d_head. Reshape the last axis as (h, d_head), in that order: "
            "x.reshape(B, T, h, d_head).",
        ),
    ],
    bad_inputs=[
        BadInput(Case((torch.ones(3, 4), 2)), "x has 2 axes, not [B, T, d_model]"),
        BadInput(Case((torch.ones(1, 2, 6), 4)), "4 heads cannot share 6 features equally"),
        BadInput(Case((torch.ones(1, 2, 4), 0)), "n_heads is 0"),
    ],
    rules=_rules("split_heads"),
    driver=ONE_THREAD,
    arg_names=("x", "n_heads"),
    hint=("Each token's d_model features are cut into h blocks of d_head features, head 0 "
          "first; then the head axis moves in front of the token axis, so that every head is "
          "its own [T, d_head] matrix."),
    seed=501,
))

register(Exercise(
    name="merge_heads",
    reference=ref.merge_heads,
    cases=merge_cases,
    misconceptions=[
        Misconception(
            "reshaped without the transpose", knob(ref._merge_heads, move_tokens="reshape"),
            "your tokens are scrambled: you reshaped [B, h, T, d_head] straight to [B, T, "
            "d_model]. In memory, all of head 0's tokens come before head 1's, so token 0's "
            "row got head 0's rows for tokens 0 and 1. Move the token axis in front first, "
            "x.transpose(1, 2) -> [B, T, h, d_head], then .reshape(B, T, h * d_head).",
        ),
        Misconception(
            "averaged the heads", knob(ref._merge_heads, join="average"),
            "you averaged the heads (shape [B, T, d_head]). Multi-head attention concatenates "
            "them: each head keeps its own d_head features, side by side, giving h × d_head "
            "= d_model features per token. Averaging would blur together what different "
            "heads found.",
        ),
        Misconception(
            "features of the heads interleaved", knob(ref._merge_heads, join="interleave"),
            "your concatenation interleaves the heads (feature 0 of every head, then feature "
            "1, ...). Head 0's d_head features come first, then head 1's: transpose to [B, T, "
            "h, d_head] and reshape, without reordering the last two axes.",
        ),
    ],
    bad_inputs=[
        BadInput(Case((torch.ones(2, 3, 4),)), "x has 3 axes, not [B, h, T, d_head]"),
    ],
    rules=_rules("merge_heads"),
    driver=ONE_THREAD,
    arg_names=("x",),
    hint=("This is split_heads backwards: bring the token axis back in front of the head "
          "axis, then lay each token's heads side by side, head 0 first."),
    seed=502,
))


# ----------------------------------------------------------------------------- the module

MHA_PLANS = [
    # d_model, n_heads, B, T_q, T_k, mask, cross-attention, note; mask: "" (none), "keys"
    # [B, T_k], "causal" [1, T, T], "rows" [B, T_q, T_k] or "heads" [B, h, T_q, T_k]
    (4, 2, 1, 2, 2, "", False, "self-attention"),
    (4, 1, 1, 3, 3, "", False, "one head"),
    (6, 3, 1, 2, 4, "", True, "cross-attention, T_q ≠ T_k"),
    (4, 2, 2, 3, 3, "keys", False, "key padding mask [B, T_k]"),
    (6, 2, 2, 2, 5, "keys", True, "cross-attention with a key padding mask"),
    (8, 4, 1, 4, 4, "causal", False, "causal mask [1, T, T]"),
    (8, 2, 2, 3, 3, "heads", False, "a mask per head [B, h, T_q, T_k]"),
]
HIDDEN_MHA_PLANS = [
    (8, 8, 2, 3, 3, "", False, "d_head = 1"),
    (12, 3, 3, 4, 6, "keys", True, "cross-attention with a key padding mask"),
    (16, 4, 2, 5, 5, "causal", False, "causal mask [1, T, T]"),
    (6, 2, 2, 5, 2, "rows", True, "a mask per query [B, T_q, T_k]"),
    (12, 4, 2, 4, 3, "heads", True, "a mask per head [B, h, T_q, T_k]"),
    (16, 2, 4, 6, 6, "", False, "self-attention"),
]


def mha_cases(rng, hidden: bool) -> list[Case]:
    cases = []
    for d_model, n_heads, batch, t_q, t_k, mask, cross, note in \
            MHA_PLANS + (HIDDEN_MHA_PLANS if hidden else []):
        build = module_build(d_model, n_heads, int(rng.integers(0, 10_000)))
        query = _normal(rng, (batch, t_q, d_model))
        if cross:
            key = _normal(rng, (batch, t_k, d_model))
            value = key.clone()
        else:
            key, value = query.clone(), query.clone()
        kwargs = {}
        if mask == "keys":
            kwargs["mask"] = _key_mask(rng, batch, t_k)
        elif mask == "causal":
            kwargs["mask"] = torch.ones(t_q, t_k, dtype=torch.bool).tril()[None]
        elif mask == "rows":
            kwargs["mask"] = _random_mask(rng, (batch, t_q, t_k))
        elif mask == "heads":
            kwargs["mask"] = _random_mask(rng, (batch, n_heads, t_q, t_k))
        cases.append(Case((query, key, value), kwargs, note=note, tol=FLOAT32, build=build))
    return cases


def _keyword_knobs(core) -> set[str]:
    return {name for name, p in inspect.signature(core).parameters.items()
            if p.kind is p.KEYWORD_ONLY}


LAYER_KNOBS = _keyword_knobs(ref._add_layers)


def module_with(**setting) -> type:
    """The reference class with one knob changed: a knob of the layers its ``__init__``
    builds (``ref._add_layers``) or of its forward (``ref._attend``)."""
    layers = {k: v for k, v in setting.items() if k in LAYER_KNOBS}
    forward = {k: v for k, v in setting.items() if k not in LAYER_KNOBS}
    body = {"__module__": __name__}
    if layers:
        body["add_layers"] = functools.partialmethod(ref._add_layers, **layers)
    if forward:
        body["forward"] = functools.partialmethod(ref._attend, **forward)
    name = f"MultiHeadAttention[{', '.join(f'{k}={v!r}' for k, v in setting.items())}]"
    return type(name, (ref.MultiHeadAttention,), body)


AVERAGED_MAPS = (
    "all your heads use one attention map, the average of the h heads' maps. Each head "
    "keeps its own weights [T_q, T_k] and applies them to its own d_head slice of the values; "
    "the heads' outputs are then concatenated (merge_heads) and mixed by w_o. Averaging makes "
    "h heads behave like one."
)
LINEAR = "an nn.Linear from d_model to d_model features"

MODULE_MISTAKES = [
    # What __init__ builds: the driver reports a layout that does not fit the check's weights.
    Misconception(
        "w_o reads d_head features", module_with(w_o_reads="d_head"),
        "your `__init__` makes self.w_o take d_head inputs. The heads' outputs are "
        "concatenated (merge_heads), which gives back h × d_head = d_model features per "
        "token; averaging the heads down to d_head throws away what each head found. Make "
        f"w_o {LINEAR}.",
    ),
    Misconception(
        "projections narrowed to d_head", module_with(width="d_head"),
        "your `__init__` makes self.w_q, self.w_k and self.w_v map d_model -> d_head "
        f"features; make each {LINEAR}. Every projection keeps d_model features: the heads "
        "split them, they do not change their number.",
    ),
    Misconception(
        "layers without bias", module_with(bias=False),
        "your `__init__` makes self.w_q, self.w_k, self.w_v and self.w_o without a bias. "
        "nn.MultiheadAttention's projections have biases, so keep the default bias=True.",
    ),
    Misconception(
        "w_k not an nn.Linear", module_with(w_k="nn.Conv1d"),
        f"your `__init__` makes self.w_k a Conv1d; make it {LINEAR}.",
    ),
    # What forward does.
    Misconception(
        "heads reshaped without the transpose", module_with(move_heads="reshape"),
        "your heads mix tokens: the projections were reshaped straight to [B, h, T, "
        "d_head] (and back) without a transpose, so a head's 'token' rows are pieces of "
        "several tokens. Use split_heads and merge_heads: reshape to [B, T, h, d_head] "
        "and then transpose(1, 2), and the reverse on the way out.",
    ),
    Misconception("heads averaged", module_with(head_maps="averaged"), AVERAGED_MAPS),
    Misconception("heads averaged, map repeated", module_with(head_maps="averaged, repeated"),
                  AVERAGED_MAPS),
    Misconception(
        "scaled by sqrt(d_model)", module_with(scale="d_model"),
        scaled_by_sqrt_d_model("d_head = d_model / n_heads", "math.sqrt(self.d_head)"),
    ),
    Misconception(
        "scores not scaled", module_with(scale="none"),
        "your scores are not scaled. Divide q kᵀ by √d_head before the softmax, so the "
        "softmax does not saturate as d_head grows.",
    ),
    Misconception(
        "w_o forgotten", module_with(output_projection=False),
        "your output is the concatenated heads, without the output projection. After "
        "merge_heads, apply self.w_o: it mixes the heads' features, and without it each "
        "output feature could only ever come from one head.",
    ),
    Misconception(
        "mask polarity inverted", module_with(mask_true_means="ignore"),
        inverted_polarity("the keys you set to -inf",
                          "a score of −∞ for the keys where the mask is False"),
    ),
    Misconception(
        "softmax over the queries", module_with(softmax_over="queries"),
        softmax_over_queries("dim=-2", "the last axis (dim=-1)"),
    ),
]


def _qkv(d_model: int, t_q: int = 2, t_k: int = 2, t_v: int | None = None, q_features=None):
    return (torch.ones(1, t_q, q_features or d_model), torch.ones(1, t_k, d_model),
            torch.ones(1, t_v or t_k, d_model))


register(Exercise(
    name="MultiHeadAttention",
    probes=("key", "value"),
    outputs=("output", "weights"),
    uses=("split_heads", "merge_heads"),
    reference=ref.MultiHeadAttention,
    cases=mha_cases,
    misconceptions=MODULE_MISTAKES,
    bad_inputs=[
        BadInput(Case(_qkv(6), build=module_build(6, 4)),
                 "4 heads cannot share d_model = 6 equally"),
        BadInput(Case(_qkv(4, q_features=5), build=module_build(4, 2)),
                 "query has 5 features but d_model is 4"),
        BadInput(Case(_qkv(4, t_k=3, t_v=2), build=module_build(4, 2)),
                 "key has 3 tokens but value has 2"),
        BadInput(Case((torch.ones(2, 4), torch.ones(2, 4), torch.ones(2, 4)),
                      build=module_build(4, 2)), "query has no batch axis"),
        BadInput(Case(_qkv(4, t_q=3), {"mask": torch.ones(1, 3, dtype=torch.bool)},
                      build=module_build(4, 2)),
                 "the key mask has 3 entries but there are 2 keys"),
        BadInput(Case(_qkv(4), {"mask": torch.ones(1, 2)}, build=module_build(4, 2)),
                 "the mask holds floats, not bools"),
    ],
    rules=_rules("MultiHeadAttention", names=ATTENTION_SHORTCUTS, objects=ATTENTION_OBJECTS,
                 why=BY_HAND_WHY),
    hint=("Follow the forward step by step: project, split into heads, scale each head's "
          "scores by the square root of d_head, mask, softmax over the keys, mix the values, "
          "merge the heads, project with w_o. The message shows the first thing that differs."),
    driver={"kind": "module", "threads": 1},
    compare={"kind": "module", "items": [[1, "the weights (item 1): "],
                                         [0, "the output (item 0): "]]},
    arg_names=("query", "key", "value"),
    seed=503,
))


# ----------------------------------------------------------------------------- copy_from_torch

def copy_cases(rng, hidden: bool) -> list[Case]:
    sizes = [(2, 1), (4, 2), (6, 3), (8, 2)]
    if hidden:
        sizes += [(4, 4), (12, 3), (16, 8), (10, 5)]
    cases = []
    for d_model, n_heads in sizes:
        seed = int(rng.integers(0, 10_000))
        cases.append(Case((heads_fixture(d_model, n_heads, seed + 1),
                           torch_fixture(d_model, n_heads, seed)), tol=FLOAT64))
    return cases


BLOCK = {"w_q": "query", "w_k": "key", "w_v": "value"}


def _wrong_order_misconceptions() -> list[Misconception]:
    """One misconception per wrong order of the three blocks; ``order[i]`` is the layer
    that received block i (0 = query, 1 = key, 2 = value)."""
    found = []
    for order in itertools.permutations(("w_q", "w_k", "w_v")):
        if order == ("w_q", "w_k", "w_v"):
            continue
        wrong = [f"the {block} block into {layer}"
                 for layer, block in zip(order, ("query", "key", "value")) if BLOCK[layer] != block]
        message = (
            f"you copied {and_join(wrong)}. "
            f"in_proj_weight stacks the three blocks in the order query, key, value: w_q ← rows "
            f"0:d, w_k ← rows d:2d, w_v ← rows 2d:3d (and the same slices of in_proj_bias)."
        )
        found.append(Misconception(f"blocks copied into {', '.join(order)}",
                                   knob(ref._copy_from_torch, blocks_into=order), message))
    return found


register(Exercise(
    name="copy_from_torch",
    reference=ref.copy_from_torch,
    cases=copy_cases,
    misconceptions=[
        *_wrong_order_misconceptions(),
        Misconception(
            "rows taken every third", knob(ref._copy_from_torch, rows="every third"),
            "you took every third row of in_proj_weight (W[0::3], W[1::3], W[2::3]), as if "
            "the rows of q, k and v alternated. They come in three blocks of d rows: "
            "W[:d] for w_q, W[d:2*d] for w_k and W[2*d:] for w_v.",
        ),
        Misconception(
            "weights transposed", knob(ref._copy_from_torch, transposed=("in_proj", "out_proj")),
            "all your weights are transposed, w_o's too. nn.Linear.weight, in_proj_weight and "
            "out_proj.weight are all stored [out_features, in_features], so copy each one as "
            "it is, without .T.",
        ),
        Misconception(
            "in_proj blocks transposed", knob(ref._copy_from_torch, transposed=("in_proj",)),
            "you copied the blocks of in_proj_weight transposed (W[...].T) into w_q, w_k and "
            "w_v; w_o is right. Each block is already stored [out_features, in_features], "
            "exactly like nn.Linear.weight, so copy it as it is, without .T. (The blocks are "
            "square, d × d, so copy_ accepted the transpose without complaint.)",
        ),
        Misconception(
            "out_proj transposed", knob(ref._copy_from_torch, transposed=("out_proj",)),
            "w_q, w_k and w_v are right, but w_o's weight is transposed. out_proj is an "
            "nn.Linear like w_o, stored the same way, [out_features, in_features]: copy "
            "out_proj.weight as it is, without .T.",
        ),
        Misconception(
            "biases not copied", knob(ref._copy_from_torch, biases=False),
            "the weights are right but the biases are not copied. Copy in_proj_bias[:d], "
            "[d:2*d] and [2*d:] into w_q.bias, w_k.bias and w_v.bias, and out_proj.bias into "
            "w_o.bias.",
        ),
        Misconception(
            "out_proj not copied", knob(ref._copy_from_torch, out_proj=False),
            "w_q, w_k and w_v are right, but w_o still has its own weights: copy "
            "theirs.out_proj.weight and theirs.out_proj.bias into w_o too.",
        ),
    ],
    bad_inputs=[
        BadInput(Case((heads_fixture(4, 2, 0), torch_fixture(6, 2, 0))),
                 "theirs has embed_dim 6 but ours has d_model 4"),
        BadInput(Case((heads_fixture(4, 2, 0), torch_fixture(4, 4, 0))),
                 "theirs has 4 heads but ours has 2"),
        BadInput(Case((heads_fixture(4, 2, 0), torch_fixture(4, 2, 0, batch_first=False))),
                 "theirs reads [T, B, d] inputs (batch_first=False)"),
        BadInput(Case((heads_fixture(4, 2, 0), torch_fixture(4, 2, 0, kdim=3))),
                 "theirs has separate key and value sizes (kdim=3), so no in_proj_weight"),
    ],
    rules=_rules("copy_from_torch"),
    hint=("in_proj_weight stacks the query, key and value weights in three blocks of d rows, "
          "each stored [out, in] like an nn.Linear weight; in_proj_bias is cut the same way, "
          "and out_proj does w_o's job. Copy without recording gradients."),
    driver={"kind": "call", "threads": 1, "state_of": 0},
    compare={"kind": "named", "versus": " from torch's"},
    arg_names=("ours", "theirs"),
    seed=504,
))


# ----------------------------------------------------------------------------- heads_one_by_one

def one_by_one_cases(rng, hidden: bool) -> list[Case]:
    plans = [(4, 2, 1, 2), (4, 1, 1, 3), (6, 3, 2, 3), (8, 2, 2, 4), (8, 4, 1, 5)]
    if hidden:
        plans += [(8, 8, 2, 3), (12, 3, 3, 4), (16, 4, 2, 6), (6, 2, 4, 2)]
    cases = []
    for d_model, n_heads, batch, tokens in plans:
        mha = heads_fixture(d_model, n_heads, int(rng.integers(0, 10_000)))
        x = _normal(rng, (batch, tokens, d_model))
        note = "one head" if n_heads == 1 else f"{n_heads} heads"
        cases.append(Case((x, mha), note=note, tol=FLOAT32))
    return cases


register(Exercise(
    name="heads_one_by_one",
    reference=ref.heads_one_by_one,
    cases=one_by_one_cases,
    misconceptions=[
        Misconception(
            "scaled by sqrt(d_model)", knob(ref._heads_one_by_one, scale="d_model"),
            scaled_by_sqrt_d_model("d_head (a head's q and k)", "math.sqrt(d_head)"),
        ),
        Misconception(
            "w_o forgotten", knob(ref._heads_one_by_one, output_projection=False),
            "your output is the concatenated heads: apply mha.w_o to the concatenation, as "
            "the module's forward does.",
        ),
        Misconception(
            "weight slices taken as columns", knob(ref._heads_one_by_one, weight_part="columns"),
            "you sliced columns of the weights (weight[:, i*d_head:(i+1)*d_head]). "
            "nn.Linear stores weight as [out_features, in_features] and computes x @ weight.T "
            "+ bias, so head i's part of w_q is the block of ROWS weight[i*d_head:(i+1)*d_head], "
            "used as x @ rows.T + bias[i*d_head:(i+1)*d_head].",
        ),
        Misconception(
            "biases left out", knob(ref._heads_one_by_one, biases=False),
            "your heads leave out the biases of w_q, w_k and w_v. nn.Linear computes "
            "x @ weight.T + bias; head i needs its slice of the bias too, "
            "bias[i*d_head:(i+1)*d_head].",
        ),
        Misconception(
            "maps stacked heads first", knob(ref._heads_one_by_one, maps_axis=0),
            "your weights have the heads on the first axis ([h, B, T, T]). Stack the heads' "
            "maps on axis 1, torch.stack(maps, dim=1), to get [B, h, T, T] like the module.",
        ),
    ],
    bad_inputs=[
        BadInput(Case((torch.ones(1, 2, 6), heads_fixture(4, 2, 0))),
                 "x has 6 features but d_model is 4"),
        BadInput(Case((torch.ones(2, 4), heads_fixture(4, 2, 0))), "x has no batch axis"),
    ],
    rules=_rules("heads_one_by_one", names=ATTENTION_SHORTCUTS, objects=ATTENTION_OBJECTS,
                 why=BY_HAND_WHY),
    hint=("Head i uses its own block of d_head output features of w_q, w_k and w_v (rows of "
          "an nn.Linear weight, with their biases) and attends with the scale of d_head; the "
          "heads' outputs are concatenated and projected with w_o, and the maps stacked with "
          "the head axis second."),
    driver=ONE_THREAD,
    arg_names=("x", "mha"),
    seed=505,
))


# ----------------------------------------------------------------------------- parameter count

def count_cases(rng, hidden: bool) -> list[Case]:
    pairs = [(1, 1), (4, 1), (4, 2), (8, 4), (6, 3), (512, 8)]
    if hidden:
        pairs += [(2, 2), (12, 4), (64, 16), (768, 12), (10, 5)]
    return [Case(pair, note="d_model, n_heads") for pair in pairs]


register(Exercise(
    name="mha_parameter_count",
    reference=ref.mha_parameter_count,
    cases=count_cases,
    misconceptions=[
        Misconception(
            "a full-size projection per head",
            knob(ref._parameter_count, head_slice=("d_model", "d_model")),
            "you gave every head its own d_model × d_model projections. The heads share "
            "w_q, w_k and w_v: each head uses a d_head-row slice of them, so the h heads "
            "together have the same 3 × (d_model² + d_model) parameters as one head.",
        ),
        Misconception(
            "biases not counted", knob(ref._parameter_count, biases=False),
            "you counted the four weight matrices but not their biases: each of w_q, w_k, "
            "w_v, w_o also has d_model biases.",
        ),
        Misconception(
            "w_o not counted", knob(ref._parameter_count, output_projection=False),
            "you counted w_q, w_k and w_v but not the output projection w_o, another "
            "d_model × d_model weight plus d_model biases.",
        ),
        Misconception(
            "per-head blocks of d_head x d_head",
            knob(ref._parameter_count, head_slice=("d_head", "d_head")),
            "you counted a d_head × d_head block per head for q, k and v. Each head reads all "
            "d_model input features, so its slice of w_q is d_head × d_model, and the h "
            "slices together make the full d_model × d_model matrix.",
        ),
    ],
    bad_inputs=[
        BadInput(Case((6, 4)), "4 heads cannot share d_model = 6 equally"),
        BadInput(Case((4, 0)), "n_heads is 0"),
        BadInput(Case((0, 1)), "d_model is 0"),
        BadInput(Case((8.0, 2)), "d_model is a float, not an int"),
    ],
    rules=_rules("mha_parameter_count", names=COUNT_NAMES, objects=ATTENTION_OBJECTS,
                 why=COUNT_WHY),
    arg_names=("d_model", "n_heads"),
    hint=("Count the weights and the biases of the four projections. Does the number of heads "
          "change any of their sizes?"),
    seed=506,
))


# ----------------------------------------------------------------------------- value down / up

def down_up_cases(rng, hidden: bool) -> list[Case]:
    plans = [(4, 2, 0), (4, 2, 1), (6, 3, 2), (8, 4, 1), (6, 1, 0)]
    if hidden:
        plans += [(8, 2, 1), (12, 4, 3), (16, 8, 5), (9, 3, 0)]
    return [Case((heads_fixture(d, h, int(rng.integers(0, 10_000)), show=("w_v", "w_o")), head),
                 note=f"head {head} of {h}", tol=FLOAT32) for d, h, head in plans]


ROW_MAPS = ("A block of a weight stored [out, in] acts on a token row only once transposed "
            "(nn.Linear computes x @ weight.T): down must be [d_model, d_head] and up "
            "[d_head, d_model], so that a token row x goes to x @ down @ up")

register(Exercise(
    name="value_down_up",
    reference=ref.value_down_up,
    cases=down_up_cases,
    misconceptions=[
        Misconception(
            "weights read as [in, out]", knob(ref._value_down_up, read_as_in_out=("w_v", "w_o")),
            "you read both weights as [in_features, out_features]. nn.Linear stores weight "
            "as [out, in], so the head's d_head features are ROWS of w_v.weight (they are "
            "w_v's outputs) and COLUMNS of w_o.weight (they are w_o's inputs). "
            f"{ROW_MAPS}.",
        ),
        Misconception(
            "value-up from rows of w_o", knob(ref._value_down_up, read_as_in_out=("w_o",)),
            "your value-down is right, but value-up came from rows of w_o.weight. w_o reads "
            "the concatenated heads, so the head's features are its input COLUMNS; as a row "
            "map, value-up has shape [d_head, d_model].",
        ),
        Misconception(
            "value-down from columns of w_v", knob(ref._value_down_up, read_as_in_out=("w_v",)),
            "your value-up is right, but value-down came from columns of w_v.weight. The "
            "head's features are outputs of w_v, so they are ROWS of w_v.weight ([out, in]); "
            "as a row map, value-down has shape [d_model, d_head].",
        ),
        Misconception(
            "not transposed", knob(ref._value_down_up, transpose=False),
            f"you picked the right blocks of the weights but did not transpose them. {ROW_MAPS}.",
        ),
    ],
    bad_inputs=[
        BadInput(Case((heads_fixture(4, 2, 0), 2)), "head 2 does not exist when n_heads is 2"),
        BadInput(Case((heads_fixture(4, 2, 0), -1)), "head -1 is not a head number"),
        BadInput(Case((heads_fixture(4, 2, 0), 0.5)), "head is a float"),
    ],
    rules=_rules("value_down_up"),
    hint=("A head's value-down map reads d_model features and writes the head's d_head "
          "features (a part of w_v); its value-up map reads those d_head features (a part of "
          "w_o). nn.Linear stores its weight as [out, in]: find the head's rows or columns, "
          "then think about the row convention."),
    driver=ONE_THREAD,
    arg_names=("mha", "head"),
    seed=507,
))
