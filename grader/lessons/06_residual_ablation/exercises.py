"""Lesson 06 exercises: the pre-norm block, the tiny transformer, token similarity, the
training loop and the depth sweep.

How each is checked:

* ``Block`` and ``TinyTransformer`` exactly: the learner's class is built, the reference's
  weights (random, LayerNorm gains and biases included, so that every layer matters) are
  copied into it, and its output on a float64 input must equal the reference's.
* ``token_similarity`` exactly, on random and on hand-made token sets (parallel,
  orthogonal, opposite).
* ``train`` exactly, as a component: a small float64 model and a small task, a few steps,
  so the same batches and the same Adam updates give the same losses.
* ``run_ablation`` never by its losses: by the shape of its result and by the direction of
  the effect: at the deepest depth the model without skips ends with a higher loss and starts
  with more similar tokens than the one with skips. The visible check runs seed 0; the hidden
  test cell repeats it and adds seed 1, so a graded notebook is checked over two seeds. A
  reduced budget (depths 1 and 4, 30 steps) keeps a graded run short; the effect is large
  there (over seeds 0-19 the loss gap is at least 0.12 and the similarity gap at least 0.7).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    LAST,
    LEARNING_RATE,
    AddFirstTask,
    WeightsMismatch,
    as_stream,
    as_tokens,
    check_steps_and_seed,
    load_weights,
    progress,
    quiet,
    small_model_threads,
)

from .. import reference as ref
from ..compare import FLOAT32, FLOAT64, difference
from ..shortcuts import _code_objects, _functions_of
from . import BadInput, Case, Exercise, Misconception, register

BLOCK_ARGS = ("d_model", "n_heads", "d_ff", "residual", "x", "weights")
MODEL_ARGS = ("vocab_size", "d_model", "n_heads", "d_ff", "n_layers", "seq_len", "residual",
              "tokens", "weights")


# ----------------------------------------------------------------------------- helpers

class DependencyNotWritten(RuntimeError):
    """The learner's function calls another exercise that is still a stub."""


class InputAccepted(RuntimeError):
    """The learner's class accepted sizes that the reference rejects."""


def _own_code(fn) -> set:
    return {code for f in _functions_of(fn) for code in _code_objects(f.__code__)}


def _calling(name: str, fn, call):
    """``call()`` with one torch thread, and a stub of *another* function reported as that
    function's."""
    try:
        with small_model_threads():
            return call()
    except NotImplementedError as exc:
        tb = exc.__traceback__
        while tb.tb_next is not None:
            tb = tb.tb_next
        code = tb.tb_frame.f_code
        if code in _own_code(fn):
            raise
        raise DependencyNotWritten(
            f"{name} calls {code.co_qualname}, which is not implemented yet. Finish that "
            f"exercise first; {name} is checked with it."
        ) from None


@dataclass(frozen=True)
class ReferenceWeights:
    """Stands for the random weights the check copies into the learner's model."""

    seed: int

    def __repr__(self) -> str:
        return f"the reference's random weights (seed {self.seed}), copied into your model"


def _randomise(module: nn.Module, seed: int) -> nn.Module:
    """Random float64 weights everywhere, LayerNorm gains and biases included, so that a
    norm used in the wrong place or twice changes the output."""
    g = torch.Generator().manual_seed(seed)
    module.double()
    with torch.no_grad():
        for sub in module.modules():
            for name, p in sub.named_parameters(recurse=False):
                noise = torch.randn(p.shape, generator=g, dtype=torch.float64)
                if isinstance(sub, nn.LayerNorm) and name == "weight":
                    p.copy_(1.0 + 0.3 * noise)
                elif p.ndim == 1:
                    p.copy_(0.3 * noise)
                elif isinstance(sub, nn.Embedding):
                    p.copy_(noise)
                else:
                    p.copy_(noise / math.sqrt(p.shape[-1]))
    return module


def _reference_state(build, seed: int) -> dict:
    try:
        module = build()
    except ValueError as exc:
        raise InputAccepted(f"it accepted sizes the exercise must reject ({exc})") from None
    return _randomise(module, seed).state_dict()


def _prepare(model: nn.Module, state: dict) -> nn.Module:
    model.double()
    load_weights(model, state)
    return model.eval()


# ----------------------------------------------------------------------------- Block

def _call_block(cls, case: Case):
    d_model, n_heads, d_ff, residual, x, weights = case.args

    def go():
        model = cls(d_model, n_heads, d_ff, residual=residual)
        state = _reference_state(lambda: ref.Block(d_model, n_heads, d_ff, residual), weights.seed)
        _prepare(model, state)
        with torch.no_grad():
            return model(x)

    return _calling("Block", cls, go)


def _tensor(rng: np.random.Generator, shape, offset: float = 0.0) -> torch.Tensor:
    return torch.from_numpy(rng.normal(offset, 1.0, size=shape))


def block_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    shapes = [  # (batch, tokens, d_model, n_heads, d_ff, note)
        (1, 1, 4, 1, 4, "one token"),
        (1, 2, 4, 2, 8, "two tokens"),
        (2, 3, 4, 2, 8, "a batch of two"),
        (2, 4, 6, 3, 12, "three heads"),
    ]
    if hidden:
        shapes += [
            (3, 2, 4, 4, 4, "one feature per head"),
            (1, 5, 8, 2, 16, "longer sequence"),
            (2, 3, 12, 3, 6, "d_ff < d_model"),
        ]
    cases = []
    for batch, tokens, d_model, n_heads, d_ff, note in shapes:
        for residual in (True, False):
            x = _tensor(rng, (batch, tokens, d_model), offset=0.5)
            weights = ReferenceWeights(int(rng.integers(1000)))
            label = f"{note}, residual={residual}"
            cases.append(Case((d_model, n_heads, d_ff, residual, x, weights), note=label))
    return cases


class _NormedSkip(ref.Block):
    def forward(self, x):
        x = as_stream(x, self.d_model)
        x = self.ln1(x)
        out = self.attn(x, x, x, need_weights=False)[0]
        x = x + out if self.residual else out
        x = self.ln2(x)
        out = self.mlp(x)
        return x + out if self.residual else out


class _PostNorm(ref.Block):
    def forward(self, x):
        x = as_stream(x, self.d_model)
        out = self.attn(x, x, x, need_weights=False)[0]
        x = self.ln1(x + out) if self.residual else self.ln1(out)
        out = self.mlp(x)
        return self.ln2(x + out) if self.residual else self.ln2(out)


class _SkipFromBlockInput(ref.Block):
    def forward(self, x):
        x = as_stream(x, self.d_model)
        h = self.ln1(x)
        out = self.attn(h, h, h, need_weights=False)[0]
        y = x + out if self.residual else out
        out = self.mlp(self.ln2(y))
        return x + out if self.residual else out


class _MlpReadsBlockInput(ref.Block):
    def forward(self, x):
        x = as_stream(x, self.d_model)
        h = self.ln1(x)
        out = self.attn(h, h, h, need_weights=False)[0]
        y = x + out if self.residual else out
        out = self.mlp(self.ln2(x))
        return y + out if self.residual else out


class _KeysFromRawStream(ref.Block):
    def forward(self, x):
        x = as_stream(x, self.d_model)
        out = self.attn(self.ln1(x), x, x, need_weights=False)[0]
        x = x + out if self.residual else out
        out = self.mlp(self.ln2(x))
        return x + out if self.residual else out


class _OneNormTwice(ref.Block):
    def forward(self, x):
        x = as_stream(x, self.d_model)
        h = self.ln1(x)
        out = self.attn(h, h, h, need_weights=False)[0]
        x = x + out if self.residual else out
        out = self.mlp(self.ln1(x))
        return x + out if self.residual else out


class _KeepsMlpSkip(ref.Block):
    def forward(self, x):
        x = as_stream(x, self.d_model)
        h = self.ln1(x)
        out = self.attn(h, h, h, need_weights=False)[0]
        x = x + out if self.residual else out
        return x + self.mlp(self.ln2(x))


class _KeepsAttentionSkip(ref.Block):
    def forward(self, x):
        x = as_stream(x, self.d_model)
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        out = self.mlp(self.ln2(x))
        return x + out if self.residual else out


class _FlagIgnored(ref.Block):
    def forward(self, x):
        x = as_stream(x, self.d_model)
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class _CausalMask(ref.Block):
    def forward(self, x):
        x = as_stream(x, self.d_model)
        h = self.ln1(x)
        T = x.shape[1]
        future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        out = self.attn(h, h, h, attn_mask=future, need_weights=False)[0]
        x = x + out if self.residual else out
        out = self.mlp(self.ln2(x))
        return x + out if self.residual else out


def _block_bad_inputs() -> list[BadInput]:
    w = ReferenceWeights(0)
    return [
        BadInput(Case((6, 4, 8, True, torch.ones(1, 2, 6, dtype=torch.float64), w)),
                 "d_model=6 cannot be split into n_heads=4 equal heads"),
        BadInput(Case((4, 2, 8, True, torch.ones(1, 2, 5, dtype=torch.float64), w)),
                 "x has 5 features but d_model is 4"),
        BadInput(Case((4, 2, 8, True, torch.ones(2, 4, dtype=torch.float64), w)),
                 "x has two axes, not [batch, tokens, d_model]"),
    ]


register(Exercise(
    name="Block",
    reference=ref.Block,
    cases=block_cases,
    call=_call_block,
    arg_names=BLOCK_ARGS,
    misconceptions=[
        Misconception(
            "skip taken after the norm", _NormedSkip,
            "your skip carries the normalised stream: you wrote `x = self.ln1(x)` and then "
            "added the sublayer's output to that. In a pre-norm block the norm only feeds "
            "the sublayer; the skip goes around both and carries the original x: "
            "`x = x + attn(ln1(x))`, then `x = x + mlp(ln2(x))`.",
        ),
        Misconception(
            "post-norm", _PostNorm,
            "you normalise the residual stream itself, after the addition "
            "(`ln1(x + attn(x))`): that is the post-norm block of the original Transformer. "
            "This block is pre-norm: the LayerNorm sits inside the branch, before the "
            "sublayer, and the stream x is never normalised: `x = x + attn(ln1(x))`.",
        ),
        Misconception(
            "second skip from the block's input", _SkipFromBlockInput,
            "the MLP's skip adds the block's input, not the stream after attention, so "
            "the attention's update is lost. The second skip must carry the updated "
            "stream: after `x = x + attn(ln1(x))`, write `x = x + mlp(ln2(x))` with that "
            "new x.",
        ),
        Misconception(
            "MLP fed the block's input", _MlpReadsBlockInput,
            "your MLP reads `ln2` of the block's input instead of the stream after "
            "attention, so the MLP never sees what attention added. The two sublayers run "
            "one after the other: the MLP's input is ln2 of the updated x.",
        ),
        Misconception(
            "keys and values from the raw stream", _KeysFromRawStream,
            "your attention takes its query from ln1(x) but its keys and values from x "
            "itself. In this block all three come from the same normalised tensor: "
            "`h = self.ln1(x)`, then `self.attn(h, h, h)`.",
        ),
        Misconception(
            "one LayerNorm for both sublayers", _OneNormTwice,
            "you used `ln1` in front of the MLP as well. Each sublayer has its own "
            "LayerNorm with its own gain and bias: `ln1` before attention, `ln2` before the "
            "MLP.",
        ),
        Misconception(
            "residual=False keeps the MLP skip", _KeepsMlpSkip,
            "with residual=False your block still adds the MLP's skip (`x + mlp(...)`); "
            "only the attention's skip went. residual=False removes both: the block "
            "returns `mlp(ln2(attn(ln1(x))))`.",
        ),
        Misconception(
            "residual=False keeps the attention skip", _KeepsAttentionSkip,
            "with residual=False your block still adds the attention's skip "
            "(`x + attn(...)`); only the MLP's skip went. residual=False removes both: "
            "`x = attn(ln1(x))`, then `x = mlp(ln2(x))`.",
        ),
        Misconception(
            "residual flag ignored", _FlagIgnored,
            "with residual=False your block gives the same output as with residual=True: "
            "the flag is not used. Read `self.residual` in forward and leave out both "
            "`x +` when it is False.",
        ),
        Misconception(
            "causal mask in the block", _CausalMask,
            "your attention is causal: each token attends only to itself and the tokens "
            "before it, so you passed a mask (attn_mask or is_causal). This lesson's block "
            "uses no mask: every token may attend to every token, later ones included. Call "
            "`self.attn(h, h, h, need_weights=False)` without a mask.",
        ),
    ],
    bad_inputs=_block_bad_inputs(),
    hint="Pre-norm: `h = self.ln1(x)`, then `x = x + self.attn(h, h, h, need_weights=False)[0]`; "
    "then the same with ln2 and mlp. nn.MultiheadAttention returns a pair (output, weights): "
    "keep the output. With residual=False, leave out both `x +`.",
))


# ----------------------------------------------------------------------------- TinyTransformer

def _call_model(cls, case: Case):
    vocab, d_model, n_heads, d_ff, n_layers, seq_len, residual, tokens, weights = case.args

    def go():
        model = cls(vocab, d_model, n_heads, d_ff, n_layers, seq_len, residual=residual)
        state = _reference_state(
            lambda: ref.TinyTransformer(vocab, d_model, n_heads, d_ff, n_layers, seq_len, residual),
            weights.seed,
        )
        _prepare(model, state)
        with torch.no_grad():
            return model(tokens)

    return _calling("TinyTransformer", cls, go)


def model_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    sizes = [  # (vocab, d_model, n_heads, d_ff, n_layers, seq_len, batch, T, note)
        (3, 4, 1, 4, 1, 2, 1, 2, "one layer"),
        (5, 4, 2, 8, 2, 3, 2, 3, "two layers"),
        (4, 6, 3, 6, 3, 4, 2, 3, "three layers, T < seq_len"),
    ]
    if hidden:
        sizes += [
            (6, 8, 2, 16, 2, 5, 1, 5, "two layers, longer"),
            (2, 4, 4, 8, 4, 3, 3, 1, "four layers, one token"),
            (7, 4, 2, 4, 3, 6, 2, 6, "three layers, bigger vocabulary"),
        ]
    cases = []
    for vocab, d_model, n_heads, d_ff, n_layers, seq_len, batch, T, note in sizes:
        for residual in (True, False):
            tokens = torch.from_numpy(rng.integers(0, vocab, size=(batch, T)))
            weights = ReferenceWeights(int(rng.integers(1000)))
            cases.append(Case((vocab, d_model, n_heads, d_ff, n_layers, seq_len, residual,
                               tokens, weights), note=f"{note}, residual={residual}"))
    return cases


class _ResidualNotPassed(ref.TinyTransformer):
    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual=True):
        super().__init__(vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual)
        self.blocks = nn.ModuleList([ref.Block(d_model, n_heads, d_ff) for _ in range(n_layers)])


class _OneSharedBlock(ref.TinyTransformer):
    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual=True):
        super().__init__(vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual)
        block = ref.Block(d_model, n_heads, d_ff, residual=residual)
        self.blocks = nn.ModuleList([block] * n_layers)


class _NoPositions(ref.TinyTransformer):
    def forward(self, tokens):
        tokens = as_tokens(tokens, self.vocab_size, self.seq_len)
        x = self.tok_emb(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


class _NoFinalNorm(ref.TinyTransformer):
    def forward(self, tokens):
        tokens = as_tokens(tokens, self.vocab_size, self.seq_len)
        positions = torch.arange(tokens.shape[1])
        x = self.tok_emb(tokens) + self.pos_emb(positions)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


register(Exercise(
    name="TinyTransformer",
    reference=ref.TinyTransformer,
    cases=model_cases,
    call=_call_model,
    arg_names=MODEL_ARGS,
    misconceptions=[
        Misconception(
            "residual flag not passed to the blocks", _ResidualNotPassed,
            "with residual=False your model still behaves as if it had residuals: the "
            "flag never reaches the blocks. Build each one with "
            "`Block(d_model, n_heads, d_ff, residual=residual)`.",
        ),
        Misconception(
            "one block repeated", _OneSharedBlock,
            "all your layers share one set of weights: `[block] * n_layers` puts the same "
            "Block object in the list n_layers times. Create a new Block for each layer, "
            "for example in a list comprehension.",
        ),
        Misconception(
            "no position embedding", _NoPositions,
            "your model leaves out the position embedding. Attention without positions "
            "cannot tell the first token from the others; add "
            "`self.pos_emb(torch.arange(T))` to the token embeddings.",
        ),
        Misconception(
            "no final LayerNorm", _NoFinalNorm,
            "your head reads the stream directly. A pre-norm stack ends with one more "
            "LayerNorm: `logits = self.head(self.ln_f(x))`.",
        ),
    ],
    bad_inputs=[
        BadInput(Case((5, 4, 2, 8, 2, 3, True, torch.zeros(1, 4, dtype=torch.long),
                       ReferenceWeights(0))), "tokens has 4 positions but seq_len is 3"),
        BadInput(Case((5, 4, 2, 8, 2, 3, True, torch.tensor([[1, 5]]), ReferenceWeights(0))),
                 "token id 5 is outside the vocabulary 0..4"),
        BadInput(Case((5, 4, 2, 8, 0, 3, True, torch.zeros(1, 2, dtype=torch.long),
                       ReferenceWeights(0))), "n_layers is 0"),
    ],
    hint="Embed: `self.tok_emb(tokens) + self.pos_emb(torch.arange(T))`; run every block in "
    "order; then `self.head(self.ln_f(x))`. Pass `residual` on to every Block. This model uses "
    "your Block, so make Block's check pass first.",
))


# ----------------------------------------------------------------------------- token_similarity

def _t(rows) -> torch.Tensor:
    return torch.tensor(rows, dtype=torch.float64)


def similarity_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    cases = [
        Case((_t([[1.0, 0.0], [0.0, 2.0]]),), note="orthogonal tokens"),
        Case((_t([[1.0, 2.0], [2.0, 4.0], [-3.0, -6.0]]),), note="parallel and opposite tokens"),
        Case((_t([[1.0, 2.0, 0.0], [1.0, 2.0, 0.0], [1.0, 2.0, 0.0]]),),
             note="collapsed: one token repeated"),
        Case((_tensor(rng, (3, 4)),), note="one sequence"),
        Case((_tensor(rng, (2, 3, 4), offset=0.3),), note="a batch of two"),
        Case((_tensor(rng, (2, 2, 3, 2)),), note="two batch axes"),
    ]
    if hidden:
        cases += [
            Case((_tensor(rng, (5, 3), offset=1.0),), note="tokens sharing a direction"),
            Case((_tensor(rng, (4, 2, 6)),), note="a batch of four"),
            Case((_tensor(rng, (1, 7, 5)) * 1e3,), note="large values"),
            Case((_t([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 1.0], [2.0, 2.0]]]),),
                 note="one orthogonal and one collapsed sequence"),
        ]
    big = _tensor(rng, (3, 5, 4))
    cases.append(Case((big.float(),), note="float32", tol=FLOAT32))
    return cases


def _with_diagonal(h):
    h = torch.as_tensor(h)
    unit = F.normalize(h, dim=-1)
    cos = unit @ unit.transpose(-1, -2)
    return cos.mean().item()


def _raw_dots(h):
    h = torch.as_tensor(h)
    dots = h @ h.transpose(-1, -2)
    T = h.shape[-2]
    off = dots.sum(dim=(-1, -2)) - dots.diagonal(dim1=-2, dim2=-1).sum(dim=-1)
    return (off / (T * (T - 1))).mean().item()


def _normalised_over_tokens(h):
    h = torch.as_tensor(h)
    unit = F.normalize(h, dim=-2)
    cos = unit @ unit.transpose(-1, -2)
    T = h.shape[-2]
    off = cos.sum(dim=(-1, -2)) - cos.diagonal(dim1=-2, dim2=-1).sum(dim=-1)
    return (off / (T * (T - 1))).mean().item()


def _pairs_across_batch(h):
    h = torch.as_tensor(h)
    tokens = h.reshape(-1, h.shape[-1])
    unit = F.normalize(tokens, dim=-1)
    cos = unit @ unit.T
    n = tokens.shape[0]
    return ((cos.sum() - cos.diagonal().sum()) / (n * (n - 1))).item()


def _one_per_sequence(h):
    h = torch.as_tensor(h)
    unit = F.normalize(h, dim=-1)
    cos = unit @ unit.transpose(-1, -2)
    T = h.shape[-2]
    off = cos.sum(dim=(-1, -2)) - cos.diagonal(dim1=-2, dim2=-1).sum(dim=-1)
    return off / (T * (T - 1))


register(Exercise(
    name="token_similarity",
    reference=ref.token_similarity,
    cases=similarity_cases,
    arg_names=("h",),
    misconceptions=[
        Misconception(
            "self-pairs included", _with_diagonal,
            "you averaged over all T×T pairs, including each token with itself (a "
            "similarity of exactly 1). Leave out the diagonal: average the T·(T-1) pairs of "
            "distinct tokens.",
        ),
        Misconception(
            "dot products, not cosines", _raw_dots,
            "you averaged raw dot products, which grow with the vectors' lengths. Cosine "
            "similarity divides each dot product by both lengths: normalise every token "
            "vector to length 1 along the feature axis (dim=-1) first.",
        ),
        Misconception(
            "normalised along the token axis", _normalised_over_tokens,
            "you normalised along the token axis (dim=-2). Each token is a row: normalise "
            "along the feature axis, dim=-1, so that every token vector has length 1.",
        ),
        Misconception(
            "pairs across the batch", _pairs_across_batch,
            "you compared tokens of different sequences: flattening the batch puts every "
            "token of every sequence in one set. Compare the tokens of each sequence among "
            "themselves ([..., T, T]), then average over the batch.",
        ),
        Misconception(
            "one value per sequence", _one_per_sequence,
            "you returned one similarity per sequence. Average those over the batch too and "
            "return one number (a float).",
        ),
    ],
    bad_inputs=[
        BadInput(Case((torch.ones(4, dtype=torch.float64),)), "h has one axis, not [..., T, d]"),
        BadInput(Case((torch.ones(1, 3, dtype=torch.float64),)),
                 "h has a single token, so there is no pair to compare"),
        BadInput(Case((torch.ones(2, 1, 3, dtype=torch.float64),)),
                 "every sequence of h has a single token"),
    ],
    hint="`unit = h / h.norm(dim=-1, keepdim=True)`, then `unit @ unit.transpose(-1, -2)` holds "
    "every pair's cosine; average the off-diagonal entries of each sequence, then over the "
    "batch, and return a float.",
))


# ----------------------------------------------------------------------------- train

@dataclass(frozen=True)
class ModelSpec:
    """A reference TinyTransformer in float64 with seeded random weights."""

    n_layers: int
    residual: bool
    seed: int
    vocab_size: int = 5
    d_model: int = 4
    n_heads: int = 2
    d_ff: int = 8
    seq_len: int = 4

    def build(self) -> nn.Module:
        model = ref.TinyTransformer(self.vocab_size, self.d_model, self.n_heads, self.d_ff,
                                    self.n_layers, self.seq_len, self.residual)
        return _randomise(model, self.seed)

    def __repr__(self) -> str:
        return (f"TinyTransformer(vocab_size={self.vocab_size}, d_model={self.d_model}, "
                f"n_heads={self.n_heads}, d_ff={self.d_ff}, n_layers={self.n_layers}, "
                f"seq_len={self.seq_len}, residual={self.residual}) in float64, random weights "
                f"(seed {self.seed})")


def _call_train(fn, case: Case):
    spec, task, steps, seed = case.args

    def go():
        with quiet():
            losses = fn(spec.build(), task, steps, seed)
        # Loss tensors still attached to their graphs cannot be printed: detach them (the
        # comparison still sees tensors and says so).
        if isinstance(losses, torch.Tensor):
            return losses.detach()
        if isinstance(losses, (list, tuple)):
            return type(losses)(v.detach() if isinstance(v, torch.Tensor) else v for v in losses)
        return losses

    return _calling("train", fn, go)


def train_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    runs = [(1, True, 1), (1, True, 4), (2, False, 4), (2, True, 6)]
    if hidden:
        runs += [(1, False, 3), (3, True, 5), (2, True, 8)]
    cases = []
    for n_layers, residual, steps in runs:
        spec = ModelSpec(n_layers, residual, int(rng.integers(1000)))
        task = AddFirstTask(vocab_size=5, seq_len=4, batch_size=int(rng.integers(2, 5)))
        seed = int(rng.integers(100))
        note = "one step" if steps == 1 else f"{steps} steps"
        cases.append(Case((spec, task, steps, seed), note=note))
    return cases


def _compare_losses(expected, actual, case: Case) -> str | None:
    if isinstance(actual, torch.Tensor) or not isinstance(actual, (list, tuple)):
        return (f"returned {type(actual).__name__}, expected a list of {len(expected)} floats, "
                f"one loss per step")
    if len(actual) != len(expected):
        return f"returned {len(actual)} losses for {len(expected)} steps (one per step)"
    for i, value in enumerate(actual):
        if isinstance(value, torch.Tensor):
            return (f"entry {i} is a tensor, not a float: append `loss.item()`. A list of "
                    f"loss tensors keeps every step's graph alive in memory")
        if not isinstance(value, (float, int, np.floating, np.integer)) or isinstance(value, bool):
            return f"entry {i} is a {type(value).__name__}, not a float"
    return difference(np.asarray(expected, dtype=float), np.asarray(actual, dtype=float), case.tol)


def _given_lines(model, task, steps, seed):
    steps, seed = check_steps_and_seed(steps, seed)
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    return steps, generator, optimizer


def _train_no_zero_grad(model, task, steps, seed):
    steps, generator, optimizer = _given_lines(model, task, steps, seed)
    losses = []
    for step in progress(range(steps), "training"):
        tokens, targets = task.sample(generator)
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def _train_zero_grad_before_step(model, task, steps, seed):
    steps, generator, optimizer = _given_lines(model, task, steps, seed)
    losses = []
    for step in progress(range(steps), "training"):
        tokens, targets = task.sample(generator)
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        loss.backward()
        optimizer.zero_grad()
        optimizer.step()
        losses.append(loss.item())
    return losses


def _train_last_position(model, task, steps, seed):
    steps, generator, optimizer = _given_lines(model, task, steps, seed)
    losses = []
    for step in progress(range(steps), "training"):
        tokens, targets = task.sample(generator)
        logits = model(tokens)
        loss = F.cross_entropy(logits[:, -1], targets[:, -1])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


register(Exercise(
    name="train",
    reference=ref.train,
    cases=train_cases,
    call=_call_train,
    compare=_compare_losses,
    arg_names=("model", "task", "steps", "seed"),
    misconceptions=[
        Misconception(
            "gradients never cleared", _train_no_zero_grad,
            "your losses match on the first step and drift after it: the gradients are "
            "never cleared, so each step adds to the sum of all earlier ones. Call "
            "`optimizer.zero_grad()` once per step, before `loss.backward()`.",
        ),
        Misconception(
            "gradients cleared before the update", _train_zero_grad_before_step,
            "your model never changes: `optimizer.zero_grad()` runs between "
            "`loss.backward()` and `optimizer.step()`, so every update uses zero gradients. "
            "The order is zero_grad, backward, step.",
        ),
        Misconception(
            "loss on the last position only", _train_last_position,
            "your loss uses the last position only. Every position has a target here: "
            "flatten logits to [batch·T, vocab] and targets to [batch·T] and take the "
            "cross-entropy over all of them.",
        ),
    ],
    bad_inputs=[
        BadInput(Case((ModelSpec(1, True, 0), AddFirstTask(5, 4, 2), 0, 0)), "steps is 0"),
        BadInput(Case((ModelSpec(1, True, 0), AddFirstTask(5, 4, 2), 2.5, 0)),
                 "steps is 2.5, not a whole number"),
        BadInput(Case((ModelSpec(1, True, 0), AddFirstTask(5, 4, 2), 3, -1)), "seed is negative"),
    ],
    hint="Each step: `tokens, targets = task.sample(generator)`, logits = model(tokens), "
    "cross-entropy over every position, then `optimizer.zero_grad()`, `loss.backward()`, "
    "`optimizer.step()`, and append `loss.item()`.",
))


# ----------------------------------------------------------------------------- run_ablation

KEYS = ("depth", "residual", "losses", "final_loss", "similarity_init", "similarity_trained")
CHECK_DEPTHS = (1, 4)
CHECK_STEPS = 30


class AblationRows:
    """What ``run_ablation`` returned for one seed, shown as a short table: per run, the
    final loss and the token similarity at init of the embeddings and of the last layer."""

    def __init__(self, rows):
        self.rows = rows

    def __repr__(self) -> str:
        rows = self.rows
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            return f"a {type(rows).__name__}, not a list of dicts"
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
        return "\n    ".join(lines)


@functools.lru_cache(maxsize=16)
def _reference_rows(depths, steps, seed):
    return ref.run_ablation(depths, steps, seed)


def reference_ablation(depths, steps, seed):
    """The reference, remembered per (depths, steps, seed): the visible and the hidden
    checks of one notebook share the runs."""
    import copy

    return copy.deepcopy(_reference_rows(tuple(depths), steps, seed))


def _call_ablation(fn, case: Case):
    depths, steps, seed = case.args

    def go():
        with quiet():
            return AblationRows(fn(list(depths), steps, seed))

    return _calling("run_ablation", fn, go)


def _number(x) -> float | None:
    if isinstance(x, torch.Tensor) and x.numel() == 1:
        x = x.item()
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        return None
    return float(x)


def _row_problem(row, depth, residual, steps) -> str | None:
    if not isinstance(row, dict):
        return f"is a {type(row).__name__}, not a dict"
    missing = [k for k in KEYS if k not in row]
    if missing:
        return f"has no key {missing[0]!r} (each row needs {', '.join(map(repr, KEYS))})"
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
    want = float(np.mean(values[-LAST:]))
    if final is None or not math.isclose(final, want, rel_tol=1e-6, abs_tol=1e-9):
        return (f"has final_loss {row['final_loss']!r}, but the mean of its last {LAST} "
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


def _direction_problem(pair) -> str | None:
    with_skips, without = pair
    depth = with_skips["depth"]
    s_with = [_number(v) for v in with_skips["similarity_init"]]
    s_without = [_number(v) for v in without["similarity_init"]]
    if not math.isclose(s_with[0], s_without[0], rel_tol=1e-6, abs_tol=1e-9):
        return (f"depth {depth}: the two models start from different weights: the token "
                f"similarity of their embeddings (before any block) is {s_with[0]:.4f} with "
                f"residuals and {s_without[0]:.4f} without. Call torch.manual_seed(seed) right "
                f"before building each model, so that the skips are the only difference")
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


def _compare_ablation(expected: AblationRows, actual: AblationRows, case: Case) -> str | None:
    depths, steps, seed = case.args
    want, rows = expected.rows, actual.rows
    if not isinstance(rows, list):
        return f"returned a {type(rows).__name__}, expected a list of rows (dicts)"
    if len(rows) != len(want):
        return (f"returned {len(rows)} rows; depths {list(depths)} give {len(want)}, one with "
                f"and one without residuals for each depth")
    for i, (row, ref_row) in enumerate(zip(rows, want)):
        problem = _row_problem(row, ref_row["depth"], ref_row["residual"], steps)
        if problem:
            return f"row {i} {problem}"
    deepest = max(depths)
    return _direction_problem([r for r in rows if r["depth"] == deepest])


def ablation_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    seed = 1 if hidden else 0
    return [Case((list(CHECK_DEPTHS), CHECK_STEPS, seed),
                 note=f"the check's small budget, seed {seed}", tol=FLOAT64)]


def _call_reference_or_learner(fn, case: Case):
    if fn is ref.run_ablation:
        fn = reference_ablation
    return _call_ablation(fn, case)


register(Exercise(
    name="run_ablation",
    reference=ref.run_ablation,
    cases=ablation_cases,
    call=_call_reference_or_learner,
    compare=_compare_ablation,
    arg_names=("depths", "steps", "seed"),
    bad_inputs=[
        BadInput(Case(([], 5, 0)), "depths is empty"),
        BadInput(Case(([1, 0], 5, 0)), "a depth of 0 has no blocks"),
        BadInput(Case(([1], 0, 0)), "steps is 0"),
    ],
    hint="For each depth, and residual in (True, False): torch.manual_seed(seed), build the "
    "model, measure the similarity after each layer, train, measure again, and append one "
    "dict with the six keys.",
))
