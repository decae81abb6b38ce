"""Lesson 05 exercises: heads, multi-head attention, torch's module as the oracle.

Modules cannot be passed to a check as plain inputs (the check copies its inputs and
compares them afterwards to catch in-place changes, and ``copy_from_torch`` changes its
input by design). So a case holds small *specs* whose ``repr`` reads like the code that
builds the module, and each exercise's ``call`` builds the modules from them:

* ``MultiHeadAttention``: the learner's class is instantiated, its four layers are checked
  (``nn.Linear(d_model, d_model)`` with bias) and loaded with the spec's seeded weights,
  and its ``forward`` runs on the case's tensors. When the values are right, the check
  also makes sure gradients reach all four layers, so the module can be trained.
* ``copy_from_torch``: a reference module with other weights and a seeded
  ``nn.MultiheadAttention`` go in; the parameters of the first come out.
* ``heads_one_by_one`` and ``value_down_up`` get a reference module whose ``forward``
  refuses to run, so the head-by-head loop cannot call the module it is meant to explain.

Everything runs in float32, the default of ``nn.Linear``, at the float32 tolerance of
``grader.compare``.
"""
from __future__ import annotations

import contextlib
import functools
import itertools
import math
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .. import reference as ref
from ..compare import FLOAT32, FLOAT64, difference
from ..reference import multi_head_attention as mha_ref
from ..shortcuts import Rules
from . import BadInput, Case, Exercise, Misconception, register

LAYERS = mha_ref.LAYERS


@contextlib.contextmanager
def one_thread():
    """Run torch on one thread. The check's tensors are tiny; on a busy machine, waking a
    second thread for each of them costs milliseconds per operation, one thread microseconds."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _single_threaded(call):
    @functools.wraps(call)
    def wrapper(fn, case):
        with one_thread():
            return call(fn, case)
    return wrapper


def _plain_call(fn, case: Case):
    return fn(*case.args, **case.kwargs)


# ----------------------------------------------------------------------------- specs

def _seeded_weights(d_model: int, seed: int, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """A weight ``[rows, d_model]`` and a bias ``[rows]``, large enough that attention is
    far from uniform and every mistake shows."""
    rng = np.random.default_rng(seed)
    weight = rng.normal(0.0, 1.0 / math.sqrt(d_model), size=(rows, d_model)) * 1.5
    bias = rng.normal(0.0, 0.3, size=rows)
    return weight.astype(np.float32), bias.astype(np.float32)


def _show(array: np.ndarray, indent: str) -> str:
    text = np.array2string(array, precision=3, suppress_small=True, separator=", ",
                           max_line_width=88 - len(indent), threshold=40, edgeitems=2)
    return "\n".join(indent + line for line in text.splitlines())


@dataclass(frozen=True)
class ModuleSpec:
    """A ``MultiHeadAttention(d_model, n_heads)`` whose four layers get seeded weights."""

    d_model: int
    n_heads: int
    seed: int
    show: tuple[str, ...] = ()  # layers whose weights the repr prints

    def weights(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        return {name: _seeded_weights(self.d_model, 1000 * self.seed + i, self.d_model)
                for i, name in enumerate(LAYERS)}

    def __repr__(self) -> str:
        text = (f"MultiHeadAttention(d_model={self.d_model}, n_heads={self.n_heads}) with the "
                f"check's weights (seed {self.seed})")
        weights, pad = self.weights(), "      "
        for name in self.show:
            text += f"\n{pad}{name}.weight =\n{_show(weights[name][0], pad + '  ')}"
        return text


@dataclass(frozen=True)
class TorchSpec:
    """An ``nn.MultiheadAttention(..., batch_first=True)`` with seeded weights."""

    d_model: int
    n_heads: int
    seed: int
    batch_first: bool = True
    kdim: int | None = None

    def build(self) -> nn.MultiheadAttention:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            module = nn.MultiheadAttention(self.d_model, self.n_heads, batch_first=self.batch_first,
                                           kdim=self.kdim, vdim=self.kdim)
        if module._qkv_same_embed_dim:
            w_in, b_in = _seeded_weights(self.d_model, 7000 + self.seed, 3 * self.d_model)
            w_out, b_out = _seeded_weights(self.d_model, 9000 + self.seed, self.d_model)
            with torch.no_grad():
                module.in_proj_weight.copy_(torch.from_numpy(w_in))
                module.in_proj_bias.copy_(torch.from_numpy(b_in))
                module.out_proj.weight.copy_(torch.from_numpy(w_out))
                module.out_proj.bias.copy_(torch.from_numpy(b_out))
        return module

    def __repr__(self) -> str:
        extra = "" if self.kdim is None else f", kdim={self.kdim}, vdim={self.kdim}"
        call = (f"nn.MultiheadAttention(embed_dim={self.d_model}, num_heads={self.n_heads}"
                f"{extra}, batch_first={self.batch_first})")
        if self.kdim is not None or not self.batch_first:
            return call
        module, d, pad = self.build(), self.d_model, "      "
        return "\n".join([
            f"{call}, with",
            f"{pad}in_proj_weight (rows 0:{d} query, {d}:{2 * d} key, {2 * d}:{3 * d} value) =",
            _show(module.in_proj_weight.detach().numpy(), pad + "  "),
            f"{pad}in_proj_bias =",
            _show(module.in_proj_bias.detach().numpy(), pad + "  "),
            f"{pad}out_proj.weight =",
            _show(module.out_proj.weight.detach().numpy(), pad + "  "),
            f"{pad}out_proj.bias =",
            _show(module.out_proj.bias.detach().numpy(), pad + "  "),
        ])


class ModuleLayoutError(TypeError):
    """The learner's module does not have the layers the exercise asks for."""


def _layers_of(module, spec: ModuleSpec) -> dict[str, nn.Linear]:
    """The four layers, or a ModuleLayoutError that says what to change in ``__init__``."""
    d, d_head = spec.d_model, spec.d_model // spec.n_heads
    want = f"nn.Linear(d_model, d_model) = nn.Linear({d}, {d})"
    layers = {}
    for name in LAYERS:
        layer = getattr(module, name, None)
        if layer is None:
            raise ModuleLayoutError(
                f"your `__init__` creates no layer `self.{name}`. It should create four layers "
                f"self.w_q, self.w_k, self.w_v and self.w_o, each {want}."
            )
        if not isinstance(layer, nn.Linear):
            raise ModuleLayoutError(
                f"your `__init__` makes self.{name} a {type(layer).__name__}; make it {want}.")
        sizes = (layer.in_features, layer.out_features)
        if name == "w_o" and sizes == (d_head, d) and d_head != d:
            raise ModuleLayoutError(
                f"your `__init__` makes self.w_o take {d_head} = d_head inputs. The heads' "
                f"outputs are concatenated (merge_heads), which gives back h × d_head = "
                f"d_model = {d} features per token; averaging the heads down to d_head throws "
                f"away what each head found. Make w_o {want}."
            )
        if sizes != (d, d):
            raise ModuleLayoutError(
                f"your `__init__` makes self.{name} map {sizes[0]} -> {sizes[1]} features; make "
                f"it {want}. Every projection keeps d_model features: the heads split them, "
                f"they do not change their number."
            )
        if layer.bias is None:
            raise ModuleLayoutError(
                f"your `__init__` makes self.{name} without a bias. nn.MultiheadAttention's "
                f"projections have biases, so keep the default bias=True."
            )
        layers[name] = layer
    return layers


def _built_on_reference(cls) -> bool:
    return (isinstance(cls, type) and issubclass(cls, ref.MultiHeadAttention)
            and cls is not ref.MultiHeadAttention)


BUILT_ON_REFERENCE = ("your class is built on the course's reference solution; write "
                      "MultiHeadAttention on nn.Module yourself")


def layout_problem(cls, spec: ModuleSpec) -> str:
    """What is wrong with the layers ``cls(spec.d_model, spec.n_heads)`` builds, or "".

    An ``__init__`` that raises is not judged here: the check's cases report it (a stub's
    NotImplementedError, a ValueError, a learner's bug) with the line it came from.
    """
    if _built_on_reference(cls):
        return BUILT_ON_REFERENCE
    try:
        with one_thread(), torch.random.fork_rng(devices=[]):
            torch.manual_seed(spec.seed)
            module = cls(spec.d_model, spec.n_heads)
    except Exception:  # the learner's __init__ may raise anything
        return ""
    try:
        _layers_of(module, spec)
    except ModuleLayoutError as exc:
        return str(exc)
    return ""


def _load(module, spec: ModuleSpec) -> None:
    layers = _layers_of(module, spec)
    with torch.no_grad():
        for name, (weight, bias) in spec.weights().items():
            layers[name].weight.copy_(torch.from_numpy(weight))
            layers[name].bias.copy_(torch.from_numpy(bias))


def reference_module(spec: ModuleSpec, cls=ref.MultiHeadAttention) -> nn.Module:
    """A module of class ``cls`` with the spec's weights (also used by the tests)."""
    with torch.random.fork_rng(devices=[]):
        module = cls(spec.d_model, spec.n_heads)
    _load(module, spec)
    return module


class _NoForward(ref.MultiHeadAttention):
    """The module handed to heads_one_by_one and value_down_up: its weights are there to
    be read, but running it is not the exercise."""

    def forward(self, *args, **kwargs):
        raise RuntimeError(
            "this exercise works from the module's weights (mha.w_q.weight, ...), so calling "
            "mha(...) or mha.forward(...) is switched off here; compute each head yourself"
        )


# ----------------------------------------------------------------------------- rules

ATTENTION_SHORTCUTS = {
    "scaled_dot_product_attention": "F.scaled_dot_product_attention",
    "MultiheadAttention": "nn.MultiheadAttention",
    "multi_head_attention_forward": "F.multi_head_attention_forward",
}
ATTENTION_OBJECTS = (nn.MultiheadAttention, F.scaled_dot_product_attention,
                     F.multi_head_attention_forward)


def _rules(name: str, *, names=None, objects=(), why: str = "") -> Rules:
    """Rules that also forbid the course's own reference of exercise ``name`` (so that
    ``from grader.reference import ...`` under any alias is caught)."""
    return Rules(names=dict(names or {}), objects=tuple(objects) + (getattr(ref, name),),
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


def _split_without_transpose(x, n_heads):
    B, T, d_model = x.shape
    return x.reshape(B, n_heads, T, d_model // n_heads)


def _split_head_axis_not_moved(x, n_heads):
    B, T, d_model = x.shape
    return x.reshape(B, T, n_heads, d_model // n_heads)


def _split_interleaved(x, n_heads):
    """Head i takes every h-th feature (i, i + h, ...) instead of a block of d_head."""
    B, T, d_model = x.shape
    return x.reshape(B, T, d_model // n_heads, n_heads).permute(0, 3, 1, 2)


def _merge_without_transpose(x):
    B, h, T, d_head = x.shape
    return x.reshape(B, T, h * d_head)


def _merge_by_averaging(x):
    return x.mean(dim=1)


def _merge_interleaved(x):
    B, h, T, d_head = x.shape
    return x.permute(0, 2, 3, 1).reshape(B, T, h * d_head)


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
        Misconception("reshaped without the transpose", _split_without_transpose, NO_TRANSPOSE_SPLIT),
        Misconception(
            "head axis not moved", _split_head_axis_not_moved,
            "your result has shape [B, T, h, d_head]: the features are cut into heads, but "
            "the head axis is still behind the token axis. Add .transpose(1, 2) so that "
            "every head is its own [T, d_head] matrix: [B, h, T, d_head].",
        ),
        Misconception(
            "features dealt out one by one", _split_interleaved,
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
    call=_single_threaded(_plain_call),
    arg_names=("x", "n_heads"),
    hint="x.reshape(B, T, h, d_head) cuts each token's features into h blocks; "
    ".transpose(1, 2) then gives [B, h, T, d_head].",
    seed=501,
))

register(Exercise(
    name="merge_heads",
    reference=ref.merge_heads,
    cases=merge_cases,
    misconceptions=[
        Misconception(
            "reshaped without the transpose", _merge_without_transpose,
            "your tokens are scrambled: you reshaped [B, h, T, d_head] straight to [B, T, "
            "d_model]. In memory, all of head 0's tokens come before head 1's, so token 0's "
            "row got head 0's rows for tokens 0 and 1. Move the token axis in front first, "
            "x.transpose(1, 2) -> [B, T, h, d_head], then .reshape(B, T, h * d_head).",
        ),
        Misconception(
            "averaged the heads", _merge_by_averaging,
            "you averaged the heads (shape [B, T, d_head]). Multi-head attention concatenates "
            "them: each head keeps its own d_head features, side by side, giving h × d_head "
            "= d_model features per token. Averaging would blur together what different "
            "heads found.",
        ),
        Misconception(
            "features of the heads interleaved", _merge_interleaved,
            "your concatenation interleaves the heads (feature 0 of every head, then feature "
            "1, ...). Head 0's d_head features come first, then head 1's: transpose to [B, T, "
            "h, d_head] and reshape, without reordering the last two axes.",
        ),
    ],
    bad_inputs=[
        BadInput(Case((torch.ones(2, 3, 4),)), "x has 3 axes, not [B, h, T, d_head]"),
    ],
    rules=_rules("merge_heads"),
    call=_single_threaded(_plain_call),
    arg_names=("x",),
    hint="x.transpose(1, 2) gives [B, T, h, d_head]; .reshape(B, T, h * d_head) then "
    "concatenates the heads of every token.",
    seed=502,
))


# ----------------------------------------------------------------------------- the module

@dataclass
class _Plan:
    d_model: int
    n_heads: int
    batch: int
    t_q: int
    t_k: int
    mask: str = ""           # "", "keys", "causal", "rows" (3 axes) or "heads" (4 axes)
    cross: bool = False
    note: str = field(default="")


def mha_cases(rng, hidden: bool) -> list[Case]:
    plans = [
        _Plan(4, 2, 1, 2, 2, note="self-attention"),
        _Plan(4, 1, 1, 3, 3, note="one head"),
        _Plan(6, 3, 1, 2, 4, cross=True, note="cross-attention, T_q ≠ T_k"),
        _Plan(4, 2, 2, 3, 3, mask="keys", note="key padding mask [B, T_k]"),
        _Plan(6, 2, 2, 2, 5, mask="keys", cross=True,
              note="cross-attention with a key padding mask"),
        _Plan(8, 4, 1, 4, 4, mask="causal", note="causal mask [1, T, T]"),
        _Plan(8, 2, 2, 3, 3, mask="heads", note="a mask per head [B, h, T_q, T_k]"),
    ]
    if hidden:
        plans += [
            _Plan(8, 8, 2, 3, 3, note="d_head = 1"),
            _Plan(12, 3, 3, 4, 6, mask="keys", cross=True,
                  note="cross-attention with a key padding mask"),
            _Plan(16, 4, 2, 5, 5, mask="causal", note="causal mask [1, T, T]"),
            _Plan(6, 2, 2, 5, 2, mask="rows", cross=True, note="a mask per query [B, T_q, T_k]"),
            _Plan(12, 4, 2, 4, 3, mask="heads", cross=True, note="a mask per head [B, h, T_q, T_k]"),
            _Plan(16, 2, 4, 6, 6, note="self-attention"),
        ]
    cases = []
    for plan in plans:
        spec = ModuleSpec(plan.d_model, plan.n_heads, int(rng.integers(0, 10_000)))
        query = _normal(rng, (plan.batch, plan.t_q, plan.d_model))
        if plan.cross:
            key = _normal(rng, (plan.batch, plan.t_k, plan.d_model))
            value = key.clone()
        else:
            key, value = query.clone(), query.clone()
        kwargs = {}
        if plan.mask == "keys":
            kwargs["mask"] = _key_mask(rng, plan.batch, plan.t_k)
        elif plan.mask == "causal":
            kwargs["mask"] = torch.ones(plan.t_q, plan.t_k, dtype=torch.bool).tril()[None]
        elif plan.mask == "rows":
            kwargs["mask"] = _random_mask(rng, (plan.batch, plan.t_q, plan.t_k))
        elif plan.mask == "heads":
            kwargs["mask"] = _random_mask(rng, (plan.batch, plan.n_heads, plan.t_q, plan.t_k))
        cases.append(Case((spec, query, key, value), kwargs, note=plan.note, tol=FLOAT32))
    return cases


class _Result(tuple):
    """``(output, weights)``, plus anything the check noticed about gradients."""

    grad_problem = ""


def _gradient_problem(module, output: torch.Tensor) -> str:
    if not output.requires_grad:
        return ("the output carries no gradient, so the module cannot be trained: something in "
                "forward cuts the autograd graph (.detach(), .item(), .numpy(), torch.tensor(...) "
                "of an intermediate result, or torch.no_grad()). Keep every step a torch "
                "operation on tensors.")
    probe = torch.linspace(-1.0, 1.0, output.numel()).reshape(output.shape)
    weights = [getattr(module, name).weight for name in LAYERS]
    grads = torch.autograd.grad((output * probe).sum(), weights, allow_unused=True)
    stuck = [name for name, g in zip(LAYERS, grads) if g is None or not bool(g.ne(0).any())]
    if stuck:
        return (f"the values are right, but no gradient reaches {', '.join(stuck)}, so "
                f"training would never change {'it' if len(stuck) == 1 else 'them'}. Check that "
                f"forward uses the layer's output as a tensor (no .detach() or .data).")
    return ""


@_single_threaded
def _call_module(cls, case: Case):
    spec, query, key, value = case.args
    if _built_on_reference(cls):
        raise ModuleLayoutError(BUILT_ON_REFERENCE)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(spec.seed)
        module = cls(spec.d_model, spec.n_heads)
    _load(module, spec)
    module.eval()
    with torch.enable_grad():
        result = module(query, key, value, **case.kwargs)
        if not (isinstance(result, (tuple, list)) and len(result) == 2
                and all(isinstance(r, torch.Tensor) for r in result)):
            return result
        output, weights = result
        out = _Result((output.detach(), weights.detach()))
        if output.shape == (query.shape[0], query.shape[1], spec.d_model):
            out.grad_problem = _gradient_problem(module, output)
    return out


def _compare_module(expected, actual, case: Case) -> str | None:
    """The weights first (easier to read than the output they lead to), then the output."""
    if isinstance(expected, tuple) and isinstance(actual, (tuple, list)) and len(actual) == 2:
        diff = (difference(expected[1], actual[1], case.tol, "the weights (item 1): ")
                or difference(expected[0], actual[0], case.tol, "the output (item 0): "))
    else:
        diff = difference(expected, actual, case.tol)
    # Only a problem the expected result does not share: when a misconception is compared
    # with the learner's result, both may lack the same gradient.
    problem = getattr(actual, "grad_problem", "")
    if diff is None and problem and problem != getattr(expected, "grad_problem", ""):
        return problem
    return diff


# The misconceptions, written the way a learner writes the class in the notebook.

def _split(x, n_heads):
    B, T, d_model = x.shape
    return x.reshape(B, T, n_heads, d_model // n_heads).transpose(1, 2)


def _merge(x):
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d_head)


class _LearnerModule(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def given(self, query, key, value, mask):
        B, T_q, T_k = mha_ref._check_inputs(query, key, value, self.d_model)
        return mha_ref.attention_mask(mask, B, self.n_heads, T_q, T_k)


class _NoTranspose(_LearnerModule):
    def forward(self, query, key, value, mask=None):
        mask = self.given(query, key, value, mask)
        B, T_q, T_k = query.shape[0], query.shape[1], key.shape[1]
        q = self.w_q(query).reshape(B, self.n_heads, T_q, self.d_head)
        k = self.w_k(key).reshape(B, self.n_heads, T_k, self.d_head)
        v = self.w_v(value).reshape(B, self.n_heads, T_k, self.d_head)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        heads = weights @ v
        return self.w_o(heads.reshape(B, T_q, self.d_model)), weights


class _AveragedMaps(_LearnerModule):
    def forward(self, query, key, value, mask=None):
        mask = self.given(query, key, value, mask)
        q = _split(self.w_q(query), self.n_heads)
        k = _split(self.w_k(key), self.n_heads)
        v = _split(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1).mean(dim=1, keepdim=True)  # one map for all
        return self.w_o(_merge(weights @ v)), weights


class _AveragedMapsRepeated(_LearnerModule):
    def forward(self, query, key, value, mask=None):
        mask = self.given(query, key, value, mask)
        q = _split(self.w_q(query), self.n_heads)
        k = _split(self.w_k(key), self.n_heads)
        v = _split(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        weights = weights.mean(dim=1, keepdim=True).expand(-1, self.n_heads, -1, -1)
        return self.w_o(_merge(weights @ v)), weights


class _ScaledByDModel(_LearnerModule):
    def forward(self, query, key, value, mask=None):
        mask = self.given(query, key, value, mask)
        q = _split(self.w_q(query), self.n_heads)
        k = _split(self.w_k(key), self.n_heads)
        v = _split(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_model)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return self.w_o(_merge(weights @ v)), weights


class _NotScaled(_LearnerModule):
    def forward(self, query, key, value, mask=None):
        mask = self.given(query, key, value, mask)
        q = _split(self.w_q(query), self.n_heads)
        k = _split(self.w_k(key), self.n_heads)
        v = _split(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return self.w_o(_merge(weights @ v)), weights


class _NoOutputProjection(_LearnerModule):
    def forward(self, query, key, value, mask=None):
        mask = self.given(query, key, value, mask)
        q = _split(self.w_q(query), self.n_heads)
        k = _split(self.w_k(key), self.n_heads)
        v = _split(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return _merge(weights @ v), weights


class _MaskInverted(_LearnerModule):
    def forward(self, query, key, value, mask=None):
        mask = self.given(query, key, value, mask)
        q = _split(self.w_q(query), self.n_heads)
        k = _split(self.w_k(key), self.n_heads)
        v = _split(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return self.w_o(_merge(weights @ v)), weights


class _SoftmaxOverQueries(_LearnerModule):
    def forward(self, query, key, value, mask=None):
        mask = self.given(query, key, value, mask)
        q = _split(self.w_q(query), self.n_heads)
        k = _split(self.w_k(key), self.n_heads)
        v = _split(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-2)
        return self.w_o(_merge(weights @ v)), weights


AVERAGED_MAPS = (
    "all your heads use one attention map, the average of the h heads' maps. Each head "
    "keeps its own weights [T_q, T_k] and applies them to its own d_head slice of the values; "
    "the heads' outputs are then concatenated (merge_heads) and mixed by w_o. Averaging makes "
    "h heads behave like one."
)

@dataclass
class ModuleExercise(Exercise):
    """An exercise whose answer is an ``nn.Module`` class: its ``__init__`` is judged first.

    The layers a class builds are a finding about ``__init__``, not an error the learner's
    code raised, so they are reported before any case runs, as "your `__init__` makes
    ...". ``grader.check`` hands a registered exercise with ``check_answer`` the answer
    itself; this one looks at the layers, then runs the usual check (during which
    ``check_answer`` is switched off, so that ``check`` takes its ordinary path).
    """

    _running_cases: bool = field(default=False, repr=False, compare=False)

    @property
    def check_answer(self):
        return None if self._running_cases else self._check_init_then_cases

    def _check_init_then_cases(self, cls, hidden: bool = False) -> None:
        __tracebackhide__ = True
        from ..checking import HIDDEN_SEED_OFFSET, CheckFailed, check
        from ..shortcuts import scan

        # Shortcuts (a wrapped nn.MultiheadAttention has no w_q either) are the cases' to report.
        if isinstance(cls, type) and not (self.rules and scan(cls, self.rules)[0]):
            if _built_on_reference(cls):
                raise CheckFailed(f"{self.name} is not right yet: {BUILT_ON_REFERENCE}.")
            rng = np.random.default_rng(self.seed + (HIDDEN_SEED_OFFSET if hidden else 0))
            specs = dict.fromkeys(case.args[0] for case in self.cases(rng, hidden))
            for spec in sorted(specs, key=lambda s: (s.d_model, s.n_heads)):
                problem = layout_problem(cls, spec)
                if problem:
                    raise CheckFailed("\n".join([
                        f"{self.name} is not right yet: {problem}",
                        "",
                        f"Found when the check built {cls.__name__}(d_model={spec.d_model}, "
                        f"n_heads={spec.n_heads}); forward was not called.",
                    ]))
        self._running_cases = True
        try:
            check(self.name, cls, hidden=hidden)
        finally:
            self._running_cases = False


register(ModuleExercise(
    name="MultiHeadAttention",
    reference=ref.MultiHeadAttention,
    cases=mha_cases,
    misconceptions=[
        Misconception(
            "heads reshaped without the transpose", _NoTranspose,
            "your heads mix tokens: the projections were reshaped straight to [B, h, T, "
            "d_head] (and back) without a transpose, so a head's 'token' rows are pieces of "
            "several tokens. Use split_heads and merge_heads: reshape to [B, T, h, d_head] "
            "and then transpose(1, 2), and the reverse on the way out.",
        ),
        Misconception("heads averaged", _AveragedMaps, AVERAGED_MAPS),
        Misconception("heads averaged, map repeated", _AveragedMapsRepeated, AVERAGED_MAPS),
        Misconception(
            "scaled by sqrt(d_model)", _ScaledByDModel,
            "you divided the scores by √d_model. Each head's scores are dot products of "
            "d_head-dimensional vectors, so their spread grows like √d_head: divide by "
            "math.sqrt(self.d_head), where d_head = d_model / n_heads.",
        ),
        Misconception(
            "scores not scaled", _NotScaled,
            "your scores are not scaled. Divide q kᵀ by √d_head before the softmax, so the "
            "softmax does not saturate as d_head grows.",
        ),
        Misconception(
            "w_o forgotten", _NoOutputProjection,
            "your output is the concatenated heads, without the output projection. After "
            "merge_heads, apply self.w_o: it mixes the heads' features, and without it each "
            "output feature could only ever come from one head.",
        ),
        Misconception(
            "mask polarity inverted", _MaskInverted,
            "your mask works the wrong way round: the keys where mask is True got -inf. In "
            "this course True means 'may attend', so block the others: "
            "scores.masked_fill(~mask, float('-inf')). (nn.MultiheadAttention's "
            "key_padding_mask is the opposite: there True means 'ignore'.)",
        ),
        Misconception(
            "softmax over the queries", _SoftmaxOverQueries,
            "your softmax runs over the queries (dim=-2). Each query's weights over the keys "
            "must sum to 1: torch.softmax(scores, dim=-1).",
        ),
    ],
    bad_inputs=[
        BadInput(Case((ModuleSpec(6, 4, 0), torch.ones(1, 2, 6), torch.ones(1, 2, 6),
                       torch.ones(1, 2, 6))), "4 heads cannot share d_model = 6 equally"),
        BadInput(Case((ModuleSpec(4, 2, 0), torch.ones(1, 2, 5), torch.ones(1, 2, 4),
                       torch.ones(1, 2, 4))), "query has 5 features but d_model is 4"),
        BadInput(Case((ModuleSpec(4, 2, 0), torch.ones(1, 2, 4), torch.ones(1, 3, 4),
                       torch.ones(1, 2, 4))), "key has 3 tokens but value has 2"),
        BadInput(Case((ModuleSpec(4, 2, 0), torch.ones(2, 4), torch.ones(2, 4),
                       torch.ones(2, 4))), "query has no batch axis"),
        BadInput(Case((ModuleSpec(4, 2, 0), torch.ones(1, 3, 4), torch.ones(1, 2, 4),
                       torch.ones(1, 2, 4)), {"mask": torch.ones(1, 3, dtype=torch.bool)}),
                 "the key mask has 3 entries but there are 2 keys"),
        BadInput(Case((ModuleSpec(4, 2, 0), torch.ones(1, 2, 4), torch.ones(1, 2, 4),
                       torch.ones(1, 2, 4)), {"mask": torch.ones(1, 2)}),
                 "the mask holds floats, not bools"),
    ],
    rules=_rules("MultiHeadAttention", names=ATTENTION_SHORTCUTS, objects=ATTENTION_OBJECTS,
                 why=BY_HAND_WHY),
    hint="Follow the steps: project with w_q, w_k, w_v; split_heads; scores = q kᵀ / √d_head; "
    "masked_fill(~mask, -inf); softmax over the keys (dim=-1); weights @ v; merge_heads; w_o.",
    call=_call_module,
    compare=_compare_module,
    arg_names=("module", "query", "key", "value"),
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
        cases.append(Case((ModuleSpec(d_model, n_heads, seed + 1),
                           TorchSpec(d_model, n_heads, seed)), tol=FLOAT64))
    return cases


@_single_threaded
def _parameters_after(fn, case: Case) -> dict[str, torch.Tensor]:
    ours_spec, theirs_spec = case.args
    ours = reference_module(ours_spec)
    theirs = theirs_spec.build()
    fn(ours, theirs)
    return {f"{name}.{kind}": getattr(getattr(ours, name), kind).detach().clone()
            for name in LAYERS for kind in ("weight", "bias")}


def _copy_blocks(ours, theirs, order):
    """Copies in_proj_weight's three row blocks into the layers named in ``order``."""
    d = theirs.embed_dim
    with torch.no_grad():
        for i, name in enumerate(order):
            layer = getattr(ours, name)
            layer.weight.copy_(theirs.in_proj_weight[i * d:(i + 1) * d])
            layer.bias.copy_(theirs.in_proj_bias[i * d:(i + 1) * d])
        ours.w_o.weight.copy_(theirs.out_proj.weight)
        ours.w_o.bias.copy_(theirs.out_proj.bias)
    return ours


BLOCK = {"w_q": "query", "w_k": "key", "w_v": "value"}


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _wrong_order_misconceptions() -> list[Misconception]:
    """One misconception per wrong order of the three blocks; ``order[i]`` is the layer
    that received block i (0 = query, 1 = key, 2 = value)."""
    found = []
    for order in itertools.permutations(("w_q", "w_k", "w_v")):
        if order == ("w_q", "w_k", "w_v"):
            continue

        def copy_in_order(ours, theirs, order=order):
            return _copy_blocks(ours, theirs, order)

        wrong = [f"the {block} block into {layer}"
                 for layer, block in zip(order, ("query", "key", "value")) if BLOCK[layer] != block]
        message = (
            f"you copied {_and(wrong)}. "
            f"in_proj_weight stacks the three blocks in the order query, key, value: w_q ← rows "
            f"0:d, w_k ← rows d:2d, w_v ← rows 2d:3d (and the same slices of in_proj_bias)."
        )
        found.append(Misconception(f"blocks copied into {', '.join(order)}", copy_in_order, message))
    return found


def _interleaved_rows(ours, theirs):
    W, b = theirs.in_proj_weight, theirs.in_proj_bias
    with torch.no_grad():
        for i, layer in enumerate((ours.w_q, ours.w_k, ours.w_v)):
            layer.weight.copy_(W[i::3])
            layer.bias.copy_(b[i::3])
        ours.w_o.weight.copy_(theirs.out_proj.weight)
        ours.w_o.bias.copy_(theirs.out_proj.bias)
    return ours


def _transposed(ours, theirs):
    d = theirs.embed_dim
    W, b = theirs.in_proj_weight, theirs.in_proj_bias
    with torch.no_grad():
        for i, layer in enumerate((ours.w_q, ours.w_k, ours.w_v)):
            layer.weight.copy_(W[i * d:(i + 1) * d].T)
            layer.bias.copy_(b[i * d:(i + 1) * d])
        ours.w_o.weight.copy_(theirs.out_proj.weight.T)
        ours.w_o.bias.copy_(theirs.out_proj.bias)
    return ours


def _in_proj_transposed(ours, theirs):
    d = theirs.embed_dim
    W, b = theirs.in_proj_weight, theirs.in_proj_bias
    with torch.no_grad():
        for i, layer in enumerate((ours.w_q, ours.w_k, ours.w_v)):
            layer.weight.copy_(W[i * d:(i + 1) * d].T)
            layer.bias.copy_(b[i * d:(i + 1) * d])
        ours.w_o.weight.copy_(theirs.out_proj.weight)
        ours.w_o.bias.copy_(theirs.out_proj.bias)
    return ours


def _out_proj_transposed(ours, theirs):
    d = theirs.embed_dim
    W, b = theirs.in_proj_weight, theirs.in_proj_bias
    with torch.no_grad():
        for i, layer in enumerate((ours.w_q, ours.w_k, ours.w_v)):
            layer.weight.copy_(W[i * d:(i + 1) * d])
            layer.bias.copy_(b[i * d:(i + 1) * d])
        ours.w_o.weight.copy_(theirs.out_proj.weight.T)
        ours.w_o.bias.copy_(theirs.out_proj.bias)
    return ours


def _compare_parameters(expected, actual, case: Case) -> str | None:
    """Name every parameter that differs (plainly: w_q.weight, not ['w_q.weight']), then
    what differs in the first."""
    if not isinstance(expected, dict) or not isinstance(actual, dict):
        return difference(expected, actual, case.tol)
    diffs = {name: difference(expected[name], actual.get(name), case.tol) for name in expected}
    wrong = [name for name, diff in diffs.items() if diff]
    if not wrong:
        return None
    right = [name for name in expected if name not in wrong]
    text = f"{_and(wrong)} {'differs' if len(wrong) == 1 else 'differ'} from torch's"
    if right:
        text += f" ({_and(right)} {'is' if len(right) == 1 else 'are'} right)"
    return f"{text}. In {wrong[0]}: {diffs[wrong[0]]}"


def _weights_only(ours, theirs):
    d = theirs.embed_dim
    W = theirs.in_proj_weight
    with torch.no_grad():
        ours.w_q.weight.copy_(W[:d])
        ours.w_k.weight.copy_(W[d:2 * d])
        ours.w_v.weight.copy_(W[2 * d:])
        ours.w_o.weight.copy_(theirs.out_proj.weight)
    return ours


def _in_proj_only(ours, theirs):
    d = theirs.embed_dim
    W, b = theirs.in_proj_weight, theirs.in_proj_bias
    with torch.no_grad():
        ours.w_q.weight.copy_(W[:d])
        ours.w_k.weight.copy_(W[d:2 * d])
        ours.w_v.weight.copy_(W[2 * d:])
        ours.w_q.bias.copy_(b[:d])
        ours.w_k.bias.copy_(b[d:2 * d])
        ours.w_v.bias.copy_(b[2 * d:])
    return ours


register(Exercise(
    name="copy_from_torch",
    reference=ref.copy_from_torch,
    cases=copy_cases,
    misconceptions=[
        *_wrong_order_misconceptions(),
        Misconception(
            "rows taken every third", _interleaved_rows,
            "you took every third row of in_proj_weight (W[0::3], W[1::3], W[2::3]), as if "
            "the rows of q, k and v alternated. They come in three blocks of d rows: "
            "W[:d] for w_q, W[d:2*d] for w_k and W[2*d:] for w_v.",
        ),
        Misconception(
            "weights transposed", _transposed,
            "all your weights are transposed, w_o's too. nn.Linear.weight, in_proj_weight and "
            "out_proj.weight are all stored [out_features, in_features], so copy each one as "
            "it is, without .T.",
        ),
        Misconception(
            "in_proj blocks transposed", _in_proj_transposed,
            "you copied the blocks of in_proj_weight transposed (W[...].T) into w_q, w_k and "
            "w_v; w_o is right. Each block is already stored [out_features, in_features], "
            "exactly like nn.Linear.weight, so copy it as it is, without .T. (The blocks are "
            "square, d × d, so copy_ accepted the transpose without complaint.)",
        ),
        Misconception(
            "out_proj transposed", _out_proj_transposed,
            "w_q, w_k and w_v are right, but w_o's weight is transposed. out_proj is an "
            "nn.Linear like w_o, stored the same way, [out_features, in_features]: copy "
            "out_proj.weight as it is, without .T.",
        ),
        Misconception(
            "biases not copied", _weights_only,
            "the weights are right but the biases are not copied. Copy in_proj_bias[:d], "
            "[d:2*d] and [2*d:] into w_q.bias, w_k.bias and w_v.bias, and out_proj.bias into "
            "w_o.bias.",
        ),
        Misconception(
            "out_proj not copied", _in_proj_only,
            "w_q, w_k and w_v are right, but w_o still has its own weights: copy "
            "theirs.out_proj.weight and theirs.out_proj.bias into w_o too.",
        ),
    ],
    bad_inputs=[
        BadInput(Case((ModuleSpec(4, 2, 0), TorchSpec(6, 2, 0))),
                 "theirs has embed_dim 6 but ours has d_model 4"),
        BadInput(Case((ModuleSpec(4, 2, 0), TorchSpec(4, 4, 0))),
                 "theirs has 4 heads but ours has 2"),
        BadInput(Case((ModuleSpec(4, 2, 0), TorchSpec(4, 2, 0, batch_first=False))),
                 "theirs reads [T, B, d] inputs (batch_first=False)"),
        BadInput(Case((ModuleSpec(4, 2, 0), TorchSpec(4, 2, 0, kdim=3))),
                 "theirs has separate key and value sizes (kdim=3), so no in_proj_weight"),
    ],
    rules=_rules("copy_from_torch"),
    hint="in_proj_weight is [3·d, d]: rows 0:d are w_q's weight, d:2d w_k's, 2d:3d w_v's, "
    "each already stored [out, in]; in_proj_bias is split the same way; out_proj is w_o. "
    "Copy inside `with torch.no_grad():`.",
    call=_parameters_after,
    compare=_compare_parameters,
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
        spec = ModuleSpec(d_model, n_heads, int(rng.integers(0, 10_000)))
        x = _normal(rng, (batch, tokens, d_model))
        note = "one head" if n_heads == 1 else f"{n_heads} heads"
        cases.append(Case((x, spec), note=note, tol=FLOAT32))
    return cases


@_single_threaded
def _call_one_by_one(fn, case: Case):
    x, spec = case.args
    return fn(x, reference_module(spec, _NoForward))


def _one_by_one_scaled_by_d_model(x, mha):
    d_head = mha.d_model // mha.n_heads
    outs, maps = [], []
    for i in range(mha.n_heads):
        rows = slice(i * d_head, (i + 1) * d_head)
        q = x @ mha.w_q.weight[rows].T + mha.w_q.bias[rows]
        k = x @ mha.w_k.weight[rows].T + mha.w_k.bias[rows]
        v = x @ mha.w_v.weight[rows].T + mha.w_v.bias[rows]
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(mha.d_model), dim=-1)
        outs.append(weights @ v)
        maps.append(weights)
    return mha.w_o(torch.cat(outs, dim=-1)), torch.stack(maps, dim=1)


def _one_by_one_no_w_o(x, mha):
    d_head = mha.d_model // mha.n_heads
    outs, maps = [], []
    for i in range(mha.n_heads):
        rows = slice(i * d_head, (i + 1) * d_head)
        q = x @ mha.w_q.weight[rows].T + mha.w_q.bias[rows]
        k = x @ mha.w_k.weight[rows].T + mha.w_k.bias[rows]
        v = x @ mha.w_v.weight[rows].T + mha.w_v.bias[rows]
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_head), dim=-1)
        outs.append(weights @ v)
        maps.append(weights)
    return torch.cat(outs, dim=-1), torch.stack(maps, dim=1)


def _one_by_one_columns(x, mha):
    d_head = mha.d_model // mha.n_heads
    outs, maps = [], []
    for i in range(mha.n_heads):
        cols = slice(i * d_head, (i + 1) * d_head)
        q = x @ mha.w_q.weight[:, cols] + mha.w_q.bias[cols]
        k = x @ mha.w_k.weight[:, cols] + mha.w_k.bias[cols]
        v = x @ mha.w_v.weight[:, cols] + mha.w_v.bias[cols]
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_head), dim=-1)
        outs.append(weights @ v)
        maps.append(weights)
    return mha.w_o(torch.cat(outs, dim=-1)), torch.stack(maps, dim=1)


def _one_by_one_no_bias(x, mha):
    d_head = mha.d_model // mha.n_heads
    outs, maps = [], []
    for i in range(mha.n_heads):
        rows = slice(i * d_head, (i + 1) * d_head)
        q = x @ mha.w_q.weight[rows].T
        k = x @ mha.w_k.weight[rows].T
        v = x @ mha.w_v.weight[rows].T
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_head), dim=-1)
        outs.append(weights @ v)
        maps.append(weights)
    return mha.w_o(torch.cat(outs, dim=-1)), torch.stack(maps, dim=1)


def _one_by_one_heads_first(x, mha):
    d_head = mha.d_model // mha.n_heads
    outs, maps = [], []
    for i in range(mha.n_heads):
        rows = slice(i * d_head, (i + 1) * d_head)
        q = x @ mha.w_q.weight[rows].T + mha.w_q.bias[rows]
        k = x @ mha.w_k.weight[rows].T + mha.w_k.bias[rows]
        v = x @ mha.w_v.weight[rows].T + mha.w_v.bias[rows]
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_head), dim=-1)
        outs.append(weights @ v)
        maps.append(weights)
    return mha.w_o(torch.cat(outs, dim=-1)), torch.stack(maps)


register(Exercise(
    name="heads_one_by_one",
    reference=ref.heads_one_by_one,
    cases=one_by_one_cases,
    misconceptions=[
        Misconception(
            "scaled by sqrt(d_model)", _one_by_one_scaled_by_d_model,
            "you divided each head's scores by √d_model. A head's q and k have d_head "
            "features, so divide by math.sqrt(d_head).",
        ),
        Misconception(
            "w_o forgotten", _one_by_one_no_w_o,
            "your output is the concatenated heads: apply mha.w_o to the concatenation, as "
            "the module's forward does.",
        ),
        Misconception(
            "weight slices taken as columns", _one_by_one_columns,
            "you sliced columns of the weights (weight[:, i*d_head:(i+1)*d_head]). "
            "nn.Linear stores weight as [out_features, in_features] and computes x @ weight.T "
            "+ bias, so head i's part of w_q is the block of ROWS weight[i*d_head:(i+1)*d_head], "
            "used as x @ rows.T + bias[i*d_head:(i+1)*d_head].",
        ),
        Misconception(
            "biases left out", _one_by_one_no_bias,
            "your heads leave out the biases of w_q, w_k and w_v. nn.Linear computes "
            "x @ weight.T + bias; head i needs its slice of the bias too, "
            "bias[i*d_head:(i+1)*d_head].",
        ),
        Misconception(
            "maps stacked heads first", _one_by_one_heads_first,
            "your weights have the heads on the first axis ([h, B, T, T]). Stack the heads' "
            "maps on axis 1, torch.stack(maps, dim=1), to get [B, h, T, T] like the module.",
        ),
    ],
    bad_inputs=[
        BadInput(Case((torch.ones(1, 2, 6), ModuleSpec(4, 2, 0))), "x has 6 features but d_model is 4"),
        BadInput(Case((torch.ones(2, 4), ModuleSpec(4, 2, 0))), "x has no batch axis"),
    ],
    rules=_rules("heads_one_by_one", names=ATTENTION_SHORTCUTS, objects=ATTENTION_OBJECTS,
                 why=BY_HAND_WHY),
    hint="For head i take rows i*d_head:(i+1)*d_head of mha.w_q.weight (and its bias), the "
    "same for w_k and w_v; attend with scale √d_head; concatenate the heads' outputs along "
    "the last axis and apply mha.w_o; stack the maps on dim=1.",
    call=_call_one_by_one,
    arg_names=("x", "mha"),
    seed=505,
))


# ----------------------------------------------------------------------------- parameter count

def count_cases(rng, hidden: bool) -> list[Case]:
    pairs = [(1, 1), (4, 1), (4, 2), (8, 4), (6, 3), (512, 8)]
    if hidden:
        pairs += [(2, 2), (12, 4), (64, 16), (768, 12), (10, 5)]
    return [Case(pair, note="d_model, n_heads") for pair in pairs]


def _count_per_head_full_size(d_model, n_heads):
    if d_model % n_heads:
        raise ValueError("n_heads must divide d_model")
    per_head = 3 * (d_model * d_model + d_model)
    return n_heads * per_head + d_model * d_model + d_model


def _count_no_biases(d_model, n_heads):
    if d_model % n_heads:
        raise ValueError("n_heads must divide d_model")
    return 4 * d_model * d_model


def _count_no_w_o(d_model, n_heads):
    if d_model % n_heads:
        raise ValueError("n_heads must divide d_model")
    return 3 * (d_model * d_model + d_model)


def _count_per_head_d_head(d_model, n_heads):
    """q, k, v as d_head x d_head blocks per head."""
    if d_model % n_heads:
        raise ValueError("n_heads must divide d_model")
    d_head = d_model // n_heads
    return n_heads * 3 * (d_head * d_head + d_head) + d_model * d_model + d_model


register(Exercise(
    name="mha_parameter_count",
    reference=ref.mha_parameter_count,
    cases=count_cases,
    misconceptions=[
        Misconception(
            "a full-size projection per head", _count_per_head_full_size,
            "you gave every head its own d_model × d_model projections. The heads share "
            "w_q, w_k and w_v: each head uses a d_head-row slice of them, so the h heads "
            "together have the same 3 × (d_model² + d_model) parameters as one head.",
        ),
        Misconception(
            "biases not counted", _count_no_biases,
            "you counted the four weight matrices but not their biases: each of w_q, w_k, "
            "w_v, w_o also has d_model biases.",
        ),
        Misconception(
            "w_o not counted", _count_no_w_o,
            "you counted w_q, w_k and w_v but not the output projection w_o, another "
            "d_model × d_model weight plus d_model biases.",
        ),
        Misconception(
            "per-head blocks of d_head x d_head", _count_per_head_d_head,
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
    hint="Four projections, each a d_model × d_model weight and a d_model bias. Does h appear?",
    seed=506,
))


# ----------------------------------------------------------------------------- value down / up

def down_up_cases(rng, hidden: bool) -> list[Case]:
    plans = [(4, 2, 0), (4, 2, 1), (6, 3, 2), (8, 4, 1), (6, 1, 0)]
    if hidden:
        plans += [(8, 2, 1), (12, 4, 3), (16, 8, 5), (9, 3, 0)]
    return [Case((ModuleSpec(d, h, int(rng.integers(0, 10_000)), show=("w_v", "w_o")), head),
                 note=f"head {head} of {h}", tol=FLOAT32) for d, h, head in plans]


@_single_threaded
def _call_down_up(fn, case: Case):
    spec, head = case.args
    return fn(reference_module(spec, _NoForward), head)


def _down_up_as_in_out(mha, head):
    """Reads both weights as if nn.Linear stored them [in, out]."""
    d_head = mha.d_model // mha.n_heads
    features = slice(head * d_head, (head + 1) * d_head)
    return mha.w_v.weight[:, features].detach(), mha.w_o.weight[features, :].detach()


def _down_up_up_from_rows(mha, head):
    d_head = mha.d_model // mha.n_heads
    features = slice(head * d_head, (head + 1) * d_head)
    return mha.w_v.weight[features, :].T.detach(), mha.w_o.weight[features, :].detach()


def _down_up_down_from_columns(mha, head):
    d_head = mha.d_model // mha.n_heads
    features = slice(head * d_head, (head + 1) * d_head)
    return mha.w_v.weight[:, features].detach(), mha.w_o.weight[:, features].T.detach()


def _down_up_not_transposed(mha, head):
    d_head = mha.d_model // mha.n_heads
    features = slice(head * d_head, (head + 1) * d_head)
    return mha.w_v.weight[features, :].detach(), mha.w_o.weight[:, features].detach()


DOWN_UP = ("down = w_v.weight[features, :].T and up = w_o.weight[:, features].T, with "
           "features = head*d_head:(head+1)*d_head")

register(Exercise(
    name="value_down_up",
    reference=ref.value_down_up,
    cases=down_up_cases,
    misconceptions=[
        Misconception(
            "weights read as [in, out]", _down_up_as_in_out,
            "you read both weights as [in_features, out_features]. nn.Linear stores weight "
            "as [out, in], so the head's features are ROWS of w_v.weight (its outputs) and "
            f"COLUMNS of w_o.weight (its inputs): {DOWN_UP}.",
        ),
        Misconception(
            "value-up from rows of w_o", _down_up_up_from_rows,
            "your value-down is right, but value-up came from rows of w_o.weight. w_o reads "
            "the concatenated heads, so the head's features are its input COLUMNS: "
            "up = w_o.weight[:, features].T, shape [d_head, d_model].",
        ),
        Misconception(
            "value-down from columns of w_v", _down_up_down_from_columns,
            "your value-up is right, but value-down came from columns of w_v.weight. The "
            "head's features are outputs of w_v, so they are ROWS of w_v.weight ([out, in]): "
            "down = w_v.weight[features, :].T, shape [d_model, d_head].",
        ),
        Misconception(
            "not transposed", _down_up_not_transposed,
            "you picked the right slices but did not transpose them. In the row convention a "
            "token row x maps to x @ down @ up, so down is [d_model, d_head] and up is "
            f"[d_head, d_model]: {DOWN_UP}.",
        ),
    ],
    bad_inputs=[
        BadInput(Case((ModuleSpec(4, 2, 0), 2)), "head 2 does not exist when n_heads is 2"),
        BadInput(Case((ModuleSpec(4, 2, 0), -1)), "head -1 is not a head number"),
        BadInput(Case((ModuleSpec(4, 2, 0), 0.5)), "head is a float"),
    ],
    rules=_rules("value_down_up"),
    hint=f"{DOWN_UP}; then x @ down @ up is this head's value-to-output map.",
    call=_call_down_up,
    arg_names=("mha", "head"),
    seed=507,
))
