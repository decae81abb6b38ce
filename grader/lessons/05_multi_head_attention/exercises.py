"""Lesson 05 exercises: heads, multi-head attention, torch's module as the oracle.

Modules never travel in a case: a case says how to build them, as data (``case.build`` for
the learner's class; fixtures holding the check's weights: ``heads``, whose forward refuses
to run, and ``torch_mha``). Everything runs in float32 at the float32 tolerance. A mistake
is a core of ``reference.py`` with one knob set wrong (for the module, :func:`module_with`).
"""
from __future__ import annotations

import dataclasses
import math
from enum import StrEnum

import numpy as np
import torch

from ...learner.codec import Fixture
from ...learner.difference import FLOAT32, FLOAT64
from ...learner.comparisons import ModuleOutcome
from ...learner.drivers import Call, Module
from ...learner.shortcuts import Rules
from .. import LESSONS, LOOP, BadInput, Build, Case, Exercise, Misconception, Stated, knob
from ..stated import ADVICE, OBJECTS, SOURCE_SCAN, VALUES
from ..messages import inverted_polarity, scaled_by_sqrt_d_model
from . import reference as ref
from .learner import LoadsWeights, Named

LESSON = LESSONS.of(__name__)  # every exercise here registers through it

LAYERS, PAD = ref.LAYERS, "      "
ONE_THREAD = Call(threads=1)


# ----------------------------------------------------------------------------- weights, as data

def _seeded_weights(d_model: int, seed: int, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """A weight ``[rows, d_model]`` and a bias, large enough that every mistake shows."""
    rng = np.random.default_rng(seed)
    weight = rng.normal(0.0, 1.0 / math.sqrt(d_model), size=(rows, d_model)) * 1.5
    return weight.astype(np.float32), rng.normal(0.0, 0.3, size=rows).astype(np.float32)


def _beside(array: np.ndarray) -> str:
    """`` value`` on its label's line where it fits, else below it (in one line, or rows)."""
    indent = PAD + "  "
    text = np.array2string(array, precision=3, suppress_small=True, separator=", ",
                           max_line_width=88 - len(indent), threshold=40, edgeitems=2)
    one = " ".join(text.split()).replace("[ ", "[")
    if len(indent + one) < 80:
        return f" {one}"
    return "".join(f"\n{indent}{line}"
                   for line in ([one] if len(indent + one) <= 100 else text.splitlines()))


def module_state(d_model: int, seed: int) -> dict[str, np.ndarray]:
    """The check's weights for the four layers, ``{"w_q.weight": ..., "w_q.bias": ...}``."""
    drawn = [_seeded_weights(d_model, 1000 * seed + i, d_model) for i in range(len(LAYERS))]
    return {f"{name}.{part}": value for name, pair in zip(LAYERS, drawn)
            for part, value in zip(("weight", "bias"), pair)}


def module_text(d_model: int, n_heads: int, seed: int | None = None, show=()) -> str:
    """How a message shows a module with the check's weights (and the weights of ``show``)."""
    text = f"MultiHeadAttention(d_model={d_model}, n_heads={n_heads})"
    if seed is not None:
        state = module_state(d_model, seed)
        text += f" with the check's weights (seed {seed})" + "".join(
            f"\n{PAD}{name}.weight ={_beside(state[f'{name}.weight'])}" for name in show)
    return text


def module_build(d_model: int, n_heads: int, seed: int | None = None) -> Build:
    """``case.build`` for ``cls(d_model, n_heads)`` with the check's weights (none: bad input)."""
    build = Build(args=[d_model, n_heads], seed=seed or 0, label="module",
                  describe=module_text(d_model, n_heads, seed))
    if seed is not None:
        build.state = module_state(d_model, seed)
        build.grads = {"item": 0, "params": [f"{name}.weight" for name in LAYERS]}
    return build


def heads_fixture(d_model: int, n_heads: int, seed: int, show=()) -> Fixture:
    """A module holding ``w_q, w_k, w_v, w_o`` with the check's weights and no forward."""
    return Fixture("heads", {"d_model": d_model, "n_heads": n_heads,
                             "state": module_state(d_model, seed)},
                   module_text(d_model, n_heads, seed, show))


def torch_fixture(d_model: int, n_heads: int, seed: int, batch_first: bool = True,
                  kdim: int | None = None) -> Fixture:
    """``nn.MultiheadAttention`` with the check's weights (torch's own with ``kdim``)."""
    extra = "" if kdim is None else f", kdim={kdim}, vdim={kdim}"
    call = (f"nn.MultiheadAttention(embed_dim={d_model}, num_heads={n_heads}{extra}, "
            f"batch_first={batch_first})")
    params = {"embed_dim": d_model, "num_heads": n_heads, "batch_first": batch_first,
              "kdim": kdim, "seed": seed}
    if kdim is not None:
        return Fixture("torch_mha", params, call)
    (w_in, b_in), (w_out, b_out) = (_seeded_weights(d_model, 7000 + seed, 3 * d_model),
                                    _seeded_weights(d_model, 9000 + seed, d_model))
    params["state"] = state = {"in_proj_weight": w_in, "in_proj_bias": b_in,
                               "out_proj.weight": w_out, "out_proj.bias": b_out}
    if not batch_first:
        return Fixture("torch_mha", params, call)
    d = d_model
    shown = [(f"in_proj_weight rows {i * d}:{(i + 1) * d} ({part})", w_in[i * d:(i + 1) * d])
             for i, part in enumerate(("query", "key", "value"))]
    shown += [(name, state[name]) for name in ("in_proj_bias", "out_proj.weight", "out_proj.bias")]
    return Fixture("torch_mha", params, "\n".join(
        [f"{call}, with", *(f"{PAD}{label} ={_beside(value)}" for label, value in shown)]))


# ----------------------------------------------------------------------------- rules, tensors

ATTENTION_SHORTCUTS = {"scaled_dot_product_attention": "F.scaled_dot_product_attention",
                       "MultiheadAttention": "nn.MultiheadAttention",
                       "multi_head_attention_forward": "F.multi_head_attention_forward"}
ATTENTION_OBJECTS = ("torch.nn.MultiheadAttention",
                     "torch.nn.functional.scaled_dot_product_attention",
                     "torch.nn.functional.multi_head_attention_forward")
BY_HAND_WHY = ("This exercise builds multi-head attention from its parts: the projections, the "
               "split into heads, the scaled scores, the softmax, the weighted values and w_o. "
               "torch's ready-made attention is the oracle the check compares with, so it cannot "
               "be the answer.")


def _rules(name: str, names=None, objects=(),
           why="Write it yourself; the course's reference solution is not the answer.") -> Rules:
    """Rules that also forbid the course's own reference of exercise ``name``, by any alias."""
    return Rules(names=dict(names or {}), objects=(*objects, f"grader.reference.{name}"), why=why)


def _coded(shape) -> torch.Tensor:
    """Entries that say where they are, one digit per axis: x[b, t, j] = 100·b + 10·t + j."""
    grids = np.meshgrid(*[np.arange(n) for n in shape], indexing="ij")
    return torch.from_numpy(sum(10 ** (len(shape) - 1 - i) * g
                                for i, g in enumerate(grids)).astype(np.float32))


def _normal(rng, shape, dtype=np.float32) -> torch.Tensor:
    return torch.from_numpy(rng.normal(size=shape).astype(dtype))


class Mask(StrEnum):
    """The mask a module case passes (none, or one of four shapes)."""

    NONE = ""
    KEYS = "keys"  # [B, T_k]: item 0 full, the others padded
    CAUSAL = "causal"  # [1, T, T]
    ROWS = "rows"  # random, [B, T_q, T_k]
    HEADS = "heads"  # random, [B, h, T_q, T_k]


def _mask(rng, kind: Mask, batch: int, n_heads: int, t_q: int, t_k: int) -> dict:
    """A case's mask of ``kind``, as keyword arguments."""
    match kind:
        case Mask.NONE:
            return {}
        case Mask.KEYS:
            lengths = [t_k] + [int(rng.integers(1, t_k)) if t_k > 1 else 1 for _ in range(batch - 1)]
            return {"mask": torch.arange(t_k)[None, :] < torch.tensor(lengths)[:, None]}
        case Mask.CAUSAL:
            return {"mask": torch.ones(t_q, t_k, dtype=torch.bool).tril()[None]}
        case Mask.ROWS:
            shape = (batch, t_q, t_k)
        case Mask.HEADS:
            shape = (batch, n_heads, t_q, t_k)
    mask = rng.random(shape) < 0.6
    np.put_along_axis(mask, rng.integers(0, t_k, size=shape[:-1])[..., None], True, axis=-1)
    return {"mask": torch.from_numpy(mask)}


# ----------------------------------------------------------------------------- split / merge

def split_cases(rng, hidden: bool) -> list[Case]:
    plans = [((1, 2, 4), 2), ((1, 3, 4), 2), ((2, 2, 6), 3), ((1, 3, 6), 2), ((2, 3, 4), 1),
             ((1, 2, 4), 4)]
    plans += [((2, 4, 8), 4), ((3, 2, 6), 6), ((1, 5, 9), 3), ((2, 3, 8), 2)] if hidden else []
    return [Case((_coded(shape), h), note="entries x[b, t, j] = 100·b + 10·t + j")
            for shape, h in plans] + [
        Case((_normal(rng, (2, 5, 8)), 4), note="random float32", tol=FLOAT32),
        Case((_normal(rng, (2, 3, 6), np.float64), 3), note="float64")]


def merge_cases(rng, hidden: bool) -> list[Case]:
    shapes = [(1, 2, 2, 2), (1, 2, 3, 2), (2, 3, 2, 2), (1, 1, 3, 4), (1, 4, 2, 1)] + (
        [(2, 4, 3, 2), (3, 2, 4, 3), (1, 3, 5, 3), (2, 6, 2, 1)] if hidden else [])
    return [Case((_coded(shape),), note="entries x[b, i, t, j] = 1000·b + 100·i + 10·t + j "
                 "(head i, token t, feature j)") for shape in shapes] + [
        Case((_normal(rng, (2, 4, 5, 2)),), note="random float32", tol=FLOAT32),
        Case((_normal(rng, (2, 3, 2, 2), np.float64),), note="float64")]


HEAD_MAPS = ("B", "h", "T_q", "T_k")  # the axes of the heads' attention maps

LESSON.register(Exercise(
    name="split_heads", reference=ref.split_heads, cases=split_cases, probes=("x",),
    axes={"": ("B", "h", "T", "d_head")},
    misconceptions=[
    ],
    bad_inputs=[
        BadInput(Case((torch.ones(3, 4), 2)), "x has 2 axes, not [B, T, d_model]"),
        BadInput(Case((torch.ones(1, 2, 6), 4)), "4 heads cannot share 6 features equally"),
        BadInput(Case((torch.ones(1, 2, 4), 0)), "n_heads is 0"),
    ],
    rules=_rules("split_heads"), driver=ONE_THREAD, arg_names=("x", "n_heads"), seed=501,
    hint=("Each token's d_model features are cut into h blocks of d_head features, head 0 "
          "first; then the head axis moves in front of the token axis, so that every head is "
          "its own [T, d_head] matrix."),
    stated=(Stated("(`reshape` works where `view` does not", ADVICE),),
))

LESSON.register(Exercise(
    name="merge_heads", reference=ref.merge_heads, cases=merge_cases, probes=("x",),
    misconceptions=[
        Misconception("averaged the heads", knob(ref._merge_heads, join="average"),
                      "you averaged the heads (shape [B, T, d_head]). Multi-head attention "
                      "concatenates them, each head's d_head features side by side: h × d_head = "
                      "d_model features per token. Averaging blurs what different heads found."),
    ],
    bad_inputs=[BadInput(Case((torch.ones(2, 3, 4),)), "x has 3 axes, not [B, h, T, d_head]")],
    rules=_rules("merge_heads"), driver=ONE_THREAD, arg_names=("x",), seed=502,
    hint=("This is split_heads backwards: bring the token axis back in front of the head "
          "axis, then lay each token's heads side by side, head 0 first."),
    stated=(Stated("with head 0's features first", VALUES, "in another order"),),
))


# ----------------------------------------------------------------------------- the module

MHA_PLANS = [  # d_model, n_heads, B, T_q, T_k (cross-attention where T_q ≠ T_k), mask, note
    (4, 2, 1, 2, 2, Mask.NONE, "self-attention"), (4, 1, 1, 3, 3, Mask.NONE, "one head"),
    (6, 3, 1, 2, 4, Mask.NONE, "cross-attention, T_q ≠ T_k"),
    (4, 2, 2, 3, 3, Mask.KEYS, "key padding mask [B, T_k]"),
    (6, 2, 2, 2, 5, Mask.KEYS, "cross-attention with a key padding mask"),
    (8, 4, 1, 4, 4, Mask.CAUSAL, "causal mask [1, T, T]"),
    (8, 2, 2, 3, 3, Mask.HEADS, "a mask per head [B, h, T_q, T_k]"),
]
HIDDEN_MHA_PLANS = [
    (8, 8, 2, 3, 3, Mask.NONE, "d_head = 1"),
    (12, 3, 3, 4, 6, Mask.KEYS, "cross-attention with a key padding mask"),
    (16, 4, 2, 5, 5, Mask.CAUSAL, "causal mask [1, T, T]"),
    (6, 2, 2, 5, 2, Mask.ROWS, "a mask per query [B, T_q, T_k]"),
    (12, 4, 2, 4, 3, Mask.HEADS, "a mask per head [B, h, T_q, T_k]"),
    (16, 2, 4, 6, 6, Mask.NONE, "self-attention"),
]


def mha_cases(rng, hidden: bool) -> list[Case]:
    cases = []
    for d_model, n_heads, batch, t_q, t_k, mask, note in \
            MHA_PLANS + (HIDDEN_MHA_PLANS if hidden else []):
        build = module_build(d_model, n_heads, int(rng.integers(0, 10_000)))
        query = _normal(rng, (batch, t_q, d_model))
        # Cross-attention: keys and values of their own, so that values projected from the
        # keys (or keys from the values) show.
        cross = t_q != t_k
        key = _normal(rng, (batch, t_k, d_model)) if cross else query.clone()
        value = _normal(rng, (batch, t_k, d_model)) if cross else query.clone()
        cases.append(Case((query, key, value), _mask(rng, mask, batch, n_heads, t_q, t_k),
                          note=note, tol=FLOAT32, build=build))
    return cases


def module_with(**knobs) -> type:
    """The reference class with a knob of its layers or of its forward changed."""
    return type(f"MultiHeadAttention[{', '.join(f'{k}={v!r}' for k, v in knobs.items())}]",
                (ref.MultiHeadAttention,), {"__module__": __name__, "knobs": knobs})


AVERAGED_MAPS = ("all your heads use one attention map, the average of the h heads' maps. Each "
                 "head applies its own weights [T_q, T_k] to its own d_head slice of the values "
                 "before the heads are concatenated and mixed by w_o: averaging makes h heads "
                 "behave like one.")
LINEAR = "an nn.Linear from d_model to d_model features"

MODULE_MISTAKES = [
    # What __init__ builds: the driver reports a layout that does not fit the check's weights.
    Misconception("w_o reads d_head features", module_with(w_o_reads="d_head"),
                  "your `__init__` makes self.w_o take d_head inputs. The heads' outputs are "
                  "concatenated (merge_heads), giving back h × d_head = d_model features; "
                  f"averaging them throws away what each head found. Make w_o {LINEAR}."),
    Misconception("projections narrowed to d_head", module_with(width="d_head"),
                  "your `__init__` makes self.w_q, self.w_k and self.w_v map d_model -> d_head "
                  f"features; make each {LINEAR}: the heads split the features, they do not "
                  "change their number."),
    Misconception("layers without bias", module_with(bias=False),
                  "your `__init__` makes self.w_q, self.w_k, self.w_v and self.w_o without a bias. "
                  "nn.MultiheadAttention's have biases: keep the default bias=True."),
    Misconception("w_k not an nn.Linear", module_with(w_k="nn.Conv1d"),
                  f"your `__init__` makes self.w_k a Conv1d; make it {LINEAR}."),
    # What forward does.
    Misconception("heads reshaped without the transpose", module_with(move_heads="reshape"),
                  "your heads mix tokens: the projections were reshaped straight to "
                  "[B, h, T, d_head] (and back) without a transpose, so a head's 'token' rows "
                  "are pieces of several tokens. Use split_heads and merge_heads."),
    Misconception("heads averaged", module_with(head_maps="averaged"), AVERAGED_MAPS),
    Misconception("heads averaged, map repeated", module_with(head_maps="averaged, repeated"),
                  AVERAGED_MAPS),
    Misconception("scaled by sqrt(d_model)", module_with(scale="d_model"),
                  scaled_by_sqrt_d_model("d_head = d_model / n_heads", "math.sqrt(self.d_head)")),
    Misconception("w_o forgotten", module_with(output_projection=False),
                  "your output is the concatenated heads: apply self.w_o after merge_heads. It "
                  "mixes the heads' features; without it each output feature comes from one head."),
    # A rule reproduces it (True and False swapped in the mask of the blocked scores), but
    # only this says why learners do it: torch's masks mean the opposite.
    Misconception("mask polarity inverted", module_with(mask_true_means="ignore"),
                  inverted_polarity("the keys you set to -inf",
                                    "a score of −∞ for the keys where the mask is False")),
]


def _bad(why: str, d_model=4, n_heads=2, t_q=2, t_k=2, t_v=2, q_features=4, mask=None,
         args=None) -> BadInput:
    args = args or (torch.ones(1, t_q, q_features), torch.ones(1, t_k, d_model),
                    torch.ones(1, t_v, d_model))
    return BadInput(Case(args, {} if mask is None else {"mask": mask},
                         build=module_build(d_model, n_heads)), why)


def mha_calls(mha, query, key, value, mask=None):
    """The reference's calls on the learner's split_heads and merge_heads, for their
    stand-ins (``mha``: the reference module with the case's weights)."""
    with torch.no_grad():
        _, weights = mha(query, key, value, mask)
        q, k, v = mha.w_q(query), mha.w_k(key), mha.w_v(value)
        heads = weights @ ref.split_heads(v, mha.n_heads)
    return [("split_heads", (q, mha.n_heads), {}), ("split_heads", (k, mha.n_heads), {}),
            ("split_heads", (v, mha.n_heads), {}), ("merge_heads", (heads,), {})]


LESSON.register(Exercise(
    name="MultiHeadAttention", reference=ref.MultiHeadAttention, cases=mha_cases,
    probes=("key", "value"), outputs=("output", "weights"), axes={"weights": HEAD_MAPS},
    calls=mha_calls,
    misconceptions=MODULE_MISTAKES,
    bad_inputs=[
        _bad("4 heads cannot share d_model = 6 equally", 6, 4, q_features=6),
        _bad("query has 5 features but d_model is 4", q_features=5),
        _bad("key has 3 tokens but value has 2", t_k=3),
        _bad("query has no batch axis", args=tuple(torch.ones(2, 4) for _ in range(3))),
        _bad("the key mask has 3 entries but there are 2 keys", t_q=3,
             mask=torch.ones(1, 3, dtype=torch.bool)),
        _bad("the mask holds floats, not bools", mask=torch.ones(1, 2)),
    ],
    rules=_rules("MultiHeadAttention", ATTENTION_SHORTCUTS, ATTENTION_OBJECTS, BY_HAND_WHY),
    stated=(Stated("the names matter: the checks load their own weights into `w_q`, `w_k`, `w_v` "
                   "and `w_o`", VALUES, "Compare the layers your `__init__` creates"),
            Stated("`F.scaled_dot_product_attention` and `nn.MultiheadAttention` are not allowed "
                   "inside your class", SOURCE_SCAN, "asks you to do by hand"),
            Stated("`forward` can use your `split_heads` and `merge_heads`: finish those first.",
                   ADVICE)),
    hint=("Follow the forward step by step: project, split into heads, scale each head's "
          "scores by the square root of d_head, mask, softmax over the keys, mix the values, "
          "merge the heads, project with w_o. The message shows the first thing that differs."),
    driver=Module(threads=1),
    compare=ModuleOutcome(items=[[1, "the weights (item 1): "],
                           [0, "the output (item 0): "]]),
    arg_names=("query", "key", "value"), seed=503,
))


# ----------------------------------------------------------------------------- copy_from_torch

def copy_cases(rng, hidden: bool) -> list[Case]:
    sizes = [(2, 1), (4, 2), (6, 3), (8, 2)] + (
        [(4, 4), (12, 3), (16, 8), (10, 5)] if hidden else [])
    seeds = [int(rng.integers(0, 10_000)) for _ in sizes]
    return [Case((heads_fixture(d_model, n_heads, seed + 1), torch_fixture(d_model, n_heads, seed)),
                 tol=FLOAT64) for (d_model, n_heads), seed in zip(sizes, seeds)]


# Blocks rotated (a swapped pair is named by a relation: tests/test_relations_05_06.py).
STACKED = ("in_proj_weight stacks the three blocks in the order query, key, value: w_q ← rows "
           "0:d, w_k ← rows d:2d, w_v ← rows 2d:3d (and the same slices of in_proj_bias).")


LESSON.register(Exercise(
    name="copy_from_torch", reference=ref.copy_from_torch, cases=copy_cases,
    misconceptions=[
        Misconception("rows taken every third", knob(ref._copy_from_torch, rows="every third"),
                      "you took every third row of in_proj_weight (W[0::3], W[1::3], W[2::3]), as "
                      "if the rows of q, k and v alternated. They come in three blocks of d rows: "
                      "W[:d] for w_q, W[d:2*d] for w_k and W[2*d:] for w_v."),
        Misconception("biases not copied", knob(ref._copy_from_torch, biases=False),
                      "the weights are right but the biases are not copied. Copy in_proj_bias[:d], "
                      "[d:2*d] and [2*d:] into w_q.bias, w_k.bias and w_v.bias, and out_proj.bias "
                      "into w_o.bias."),
        Misconception("out_proj not copied", knob(ref._copy_from_torch, out_proj=False),
                      "w_q, w_k and w_v are right, but w_o still has its own weights: copy "
                      "theirs.out_proj.weight and theirs.out_proj.bias into w_o too."),
    ],
    bad_inputs=[BadInput(Case((heads_fixture(4, 2, 0), torch_fixture(d, h, 0, **options))), why)
                for d, h, options, why in [
                    (6, 2, {}, "theirs has embed_dim 6 but ours has d_model 4"),
                    (4, 4, {}, "theirs has 4 heads but ours has 2"),
                    (4, 2, {"batch_first": False},
                     "theirs reads [T, B, d] inputs (batch_first=False)"),
                    (4, 2, {"kdim": 3}, "theirs has separate key and value sizes (kdim=3), so no "
                                        "in_proj_weight")]],
    rules=_rules("copy_from_torch"),
    hint=("in_proj_weight stacks the query, key and value weights in three blocks of d rows, "
          "each stored [out, in] like an nn.Linear weight; in_proj_bias is cut the same way, "
          "and out_proj does w_o's job. Copy without recording gradients."),
    driver=LoadsWeights(threads=1, arg=0),
    compare=Named(versus=" from torch's"),
    arg_names=("ours", "theirs"), seed=504,
    stated=(Stated("keeps `ours`'s own parameter objects", OBJECTS, "parameters that are not its own"),),
))


# ----------------------------------------------------------------------------- heads_one_by_one

def one_by_one_cases(rng, hidden: bool) -> list[Case]:
    plans = [(4, 2, 1, 2), (4, 1, 1, 3), (6, 3, 2, 3), (8, 2, 2, 4), (8, 4, 1, 5)] + (
        [(8, 8, 2, 3), (12, 3, 3, 4), (16, 4, 2, 6), (6, 2, 4, 2)] if hidden else [])
    cases = []
    for d_model, n_heads, batch, tokens in plans:
        mha = heads_fixture(d_model, n_heads, int(rng.integers(0, 10_000)))
        cases.append(Case((_normal(rng, (batch, tokens, d_model)), mha), tol=FLOAT32,
                          note="one head" if n_heads == 1 else f"{n_heads} heads"))
    return cases


LESSON.register(Exercise(
    name="heads_one_by_one", reference=ref.heads_one_by_one, cases=one_by_one_cases,
    outputs=("output", "weights"), axes={"weights": HEAD_MAPS},
    misconceptions=[
        Misconception("scaled by sqrt(d_model)", knob(ref._heads_one_by_one, scale="d_model"),
                      scaled_by_sqrt_d_model("d_head (a head's q and k)", "math.sqrt(d_head)")),
        Misconception("w_o forgotten", knob(ref._heads_one_by_one, output_projection=False),
                      "your output is the concatenated heads: apply mha.w_o to the concatenation, "
                      "as the module's forward does."),
        Misconception("weight slices taken as columns",
                      knob(ref._heads_one_by_one, weight_part="columns"),
                      "you sliced columns of the weights. nn.Linear stores weight as "
                      "[out_features, in_features] and computes x @ weight.T + bias, so head i's "
                      "part of w_q is a block of d_head ROWS, with the same slice of the bias."),
        Misconception("biases left out", knob(ref._heads_one_by_one, biases=False),
                      "your heads leave out the biases of w_q, w_k and w_v: nn.Linear computes "
                      "x @ weight.T + bias, and head i needs its slice of the bias too."),
    ],
    bad_inputs=[
        BadInput(Case((torch.ones(1, 2, 6), heads_fixture(4, 2, 0))),
                 "x has 6 features but d_model is 4"),
        BadInput(Case((torch.ones(2, 4), heads_fixture(4, 2, 0))), "x has no batch axis"),
    ],
    rules=dataclasses.replace(_rules("heads_one_by_one", ATTENTION_SHORTCUTS, ATTENTION_OBJECTS,
                                     BY_HAND_WHY), required={LOOP: "a Python loop over the heads"}),
    stated=(Stated("with a Python loop over the heads", SOURCE_SCAN,
                   "should use a Python loop over the heads"),
            Stated("`F.scaled_dot_product_attention` and `nn.MultiheadAttention` are not allowed "
                   "here either.", SOURCE_SCAN, "asks you to do by hand")),
    hint=("Head i uses its own block of d_head output features of w_q, w_k and w_v (rows of "
          "an nn.Linear weight, with their biases) and attends with the scale of d_head; the "
          "heads' outputs are concatenated and projected with w_o, and the maps stacked with "
          "the head axis second."),
    driver=ONE_THREAD, arg_names=("x", "mha"), seed=505,
))


# ----------------------------------------------------------------------------- parameter count

def count_cases(rng, hidden: bool) -> list[Case]:
    pairs = [(1, 1), (4, 1), (4, 2), (8, 4), (6, 3), (512, 8)] + (
        [(2, 2), (12, 4), (64, 16), (768, 12), (10, 5)] if hidden else [])
    return [Case(pair, note="d_model, n_heads") for pair in pairs]


LESSON.register(Exercise(
    name="mha_parameter_count", reference=ref.mha_parameter_count, cases=count_cases,
    misconceptions=[
        Misconception("biases not counted", knob(ref._parameter_count, biases=False),
                      "you counted the four weight matrices but not their biases: each of w_q, "
                      "w_k, w_v, w_o also has d_model biases."),
    ],
    bad_inputs=[
        BadInput(Case((6, 4)), "4 heads cannot share d_model = 6 equally"),
        BadInput(Case((4, 0)), "n_heads is 0"),
        BadInput(Case((0, 1)), "d_model is 0"),
        BadInput(Case((8.0, 2)), "d_model is a float, not an int"),
    ],
    rules=_rules("mha_parameter_count",
                 {**ATTENTION_SHORTCUTS, "parameters": ".parameters()",
                  "named_parameters": ".named_parameters()", "state_dict": ".state_dict()",
                  "numel": ".numel()", "nelement": ".nelement()", "Linear": "nn.Linear",
                  "Parameter": "nn.Parameter"}, ATTENTION_OBJECTS,
                 "Count from the shapes of the weights and biases: the formula is the answer, "
                 "not a module that counts for you."),
    arg_names=("d_model", "n_heads"), seed=506,
    hint=("Count the weights and the biases of the four projections. Does the number of heads "
          "change any of their sizes?"),
    stated=(Stated("building a module and counting its parameters is not allowed here",
                   SOURCE_SCAN, "asks you to do by hand"),),
))


# ----------------------------------------------------------------------------- value down / up

def down_up_cases(rng, hidden: bool) -> list[Case]:
    plans = [(4, 2, 0), (4, 2, 1), (6, 3, 2), (8, 4, 1), (6, 1, 0)] + (
        [(8, 2, 1), (12, 4, 3), (16, 8, 5), (9, 3, 0)] if hidden else [])
    return [Case((heads_fixture(d, h, int(rng.integers(0, 10_000)), show=("w_v", "w_o")), head),
                 note=f"head {head} of {h}", tol=FLOAT32) for d, h, head in plans]


LESSON.register(Exercise(
    name="value_down_up", reference=ref.value_down_up, cases=down_up_cases,
    outputs=("down", "up"),
    misconceptions=[
        Misconception("weights read as [in, out]",
                      knob(ref._value_down_up, read_as_in_out=("w_v", "w_o")),
                      "you read both weights as [in_features, out_features], but nn.Linear "
                      "stores [out, in]: the head's features are ROWS of w_v.weight (its outputs) "
                      "and COLUMNS of w_o.weight (its inputs), each block used on a token row "
                      "transposed: down is [d_model, d_head], up [d_head, d_model]."),
        Misconception("value-up from rows of w_o",
                      knob(ref._value_down_up, read_as_in_out=("w_o",)),
                      "your value-down is right, but value-up came from rows of w_o.weight. w_o "
                      "reads the concatenated heads, so the head's features are its input COLUMNS; "
                      "as a row map, value-up has shape [d_head, d_model]."),
        Misconception("value-down from columns of w_v",
                      knob(ref._value_down_up, read_as_in_out=("w_v",)),
                      "your value-up is right, but value-down came from columns of w_v.weight. The "
                      "head's features are outputs of w_v, so they are ROWS of w_v.weight ([out, "
                      "in]); as a row map, value-down has shape [d_model, d_head]."),
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
    driver=ONE_THREAD, arg_names=("mha", "head"), seed=507,
    stated=(),
))
