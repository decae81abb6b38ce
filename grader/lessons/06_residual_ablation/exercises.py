"""Lesson 06 exercises: the block, the tiny transformer, token similarity, training, the sweep.

Modules are checked exactly in float64, with random weights drawn here in every layer;
``train`` on a model of torch's own layers (``toy_lm``). ``run_ablation`` never against the
reference's losses: by the shape of its result, the direction of the effect at the deepest
depth, and one row drawn here that the learner's kernel redoes with the learner's own parts
(``ablation_row``). With depths 1 and 4 and 30 steps, over seeds 0-19, the loss gap is at
least 0.12 and the similarity gap at least 0.7. A mistake is the reference with a knob turned.
"""
from __future__ import annotations

import inspect
import math

import numpy as np
import torch
from torch import nn

from courseware.ablation import LAST

from ...learner.codec import Fixture
from ...learner.difference import FLOAT32
from ...learner.comparisons import ModuleOutcome
from ...learner.drivers import Call, Module
from .. import LESSONS, BadInput, Build, Case, Exercise, Misconception, ModulesBuilt, Stated, knob
from ..stated import VALUES
from . import reference as ref
from .learner import Ablation, Losses, PythonFloat, ablation_row, toy_lm

LESSON = LESSONS.of(__name__)  # every exercise here registers through it

MODULE_RUN = Module(threads=1)
TRAINING_RUN = Call(threads=1, quiet=True)


# ----------------------------------------------------------------------------- modules, as data

def _random_state(build, seed: int) -> dict | None:
    """``{parameter name: array}`` of ``build()`` in float64 with random weights everywhere,
    LayerNorm gains and biases included, so that a norm used in the wrong place or twice
    changes the output; None when ``build()`` rejects its sizes. Torch's global random
    state is left as it was."""
    with torch.random.fork_rng(devices=[]):
        try:
            module = build().double()
        except ValueError:
            return None
    g, state = torch.Generator().manual_seed(seed), {}
    for full, p in module.named_parameters():
        owner, _, name = full.rpartition(".")
        sub = module.get_submodule(owner)
        noise = torch.randn(p.shape, generator=g, dtype=torch.float64)
        if isinstance(sub, nn.LayerNorm) and name == "weight":
            noise = 1.0 + 0.3 * noise
        elif p.ndim == 1:
            noise = 0.3 * noise
        elif not isinstance(sub, nn.Embedding):  # an embedding's rows as drawn
            noise = noise / math.sqrt(p.shape[-1])
        state[full] = noise.numpy()
    return state


def _module_case(cls, sizes: tuple, residual: bool, x, seed: int, note: str = "") -> Case:
    """A case of the ``module`` driver: ``cls(*sizes, residual=residual)`` in float64 with
    the reference's random weights (none if the reference rejects the sizes), called on x."""
    names = list(inspect.signature(cls).parameters)
    state = _random_state(lambda: cls(*sizes, residual=residual), seed)
    describe = (f"{cls.__name__}({', '.join(f'{k}={v}' for k, v in zip(names, sizes))}, "
                f"residual={residual})")
    if state is not None:
        describe += (" in float64, with random weights loaded into every layer (LayerNorm "
                     "gains and biases included)")
    return Case((x,), note=note, build=Build(
        args=list(sizes), kwargs={"residual": residual}, dtype="float64", state=state,
        label="block" if cls is ref.Block else "model", describe=describe))


def _bad(cls, sizes: tuple, x, why: str) -> BadInput:
    return BadInput(_module_case(cls, sizes, True, x, 0), why)


def _tensor(rng: np.random.Generator, shape, offset: float = 0.0) -> torch.Tensor:
    return torch.from_numpy(rng.normal(offset, 1.0, size=shape))


# ----------------------------------------------------------------------------- Block

def block_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    shapes = [  # (batch, tokens, d_model, n_heads, d_ff, note)
        (1, 1, 4, 1, 4, "one token"), (1, 2, 4, 2, 8, "two tokens"),
        (2, 3, 4, 2, 8, "a batch of two"), (2, 4, 6, 3, 12, "three heads"),
    ] + ([(3, 2, 4, 4, 4, "one feature per head"), (1, 5, 8, 2, 16, "longer sequence"),
          (2, 3, 12, 3, 6, "d_ff < d_model")] if hidden else [])
    return [_module_case(ref.Block, sizes, residual, _tensor(rng, (batch, tokens, sizes[0]), 0.5),
                         int(rng.integers(1000)), f"{note}, residual={residual}")
            for batch, tokens, *sizes, note in shapes for residual in (True, False)]


WITH_SKIPS = ("With residual=True both sublayers add their output to the stream, attention "
              "first, then the MLP.")
WITHOUT_SKIPS = ("residual=False removes both skips: each sublayer's output replaces the "
                 "stream instead of being added to it.")


LESSON.register(Exercise(
    name="Block", reference=ref.Block, cases=block_cases, probes=("x",),
    driver=MODULE_RUN, compare=ModuleOutcome(), arg_names=("x",),
    misconceptions=[
        Misconception("skip taken after the norm", knob(ref._Block, norm_at="stream"),
                      "your skip carries the normalised stream: you replaced x by its LayerNorm "
                      "before adding the sublayer's output. In a pre-norm block the norm only "
                      "feeds the sublayer; the skip carries the original, unnormalised x."),
        Misconception("post-norm", knob(ref._Block, norm_at="after"),
                      "you normalise the stream itself, after the addition: the post-norm block "
                      "of the original Transformer. This block is pre-norm: the LayerNorm sits "
                      "inside the branch, before the sublayer; the stream is never normalised."),
        Misconception("second skip from the block's input",
                      knob(ref._Block, mlp_skip_from=ref.BLOCK_INPUT),
                      "the MLP's skip adds the block's input, not the stream after attention, so "
                      "the attention's update is lost: add the MLP's output to the updated x."),
        Misconception("MLP fed the block's input", knob(ref._Block, mlp_reads=ref.BLOCK_INPUT),
                      "your MLP reads `ln2` of the block's input instead of the stream after "
                      "attention, so it never sees what attention added. The sublayers run one "
                      "after the other: the MLP's input is ln2 of the updated x."),
        Misconception("keys and values from the raw stream", knob(ref._Block, keys_values="raw"),
                      "your attention takes its query from ln1(x) but its keys and values from x "
                      "itself. In this block all three come from the same normalised tensor, ln1 "
                      "of the stream."),
        Misconception("one LayerNorm for both sublayers", knob(ref._Block, mlp_norm="ln1"),
                      "you used `ln1` in front of the MLP as well. Each sublayer has its own "
                      "LayerNorm and gain and bias: `ln1` before attention, `ln2` before the MLP."),
        Misconception("attention skip missing", knob(ref._Block, residual_keeps=("mlp",)),
                      "with residual=True your block keeps the MLP's skip but not the attention's: "
                      "the attention's output replaces the stream instead of being added to it, so "
                      f"the block's input never reaches its output. {WITH_SKIPS}"),
        Misconception("MLP skip missing", knob(ref._Block, residual_keeps=("attention",)),
                      "with residual=True your block keeps the attention's skip but not the MLP's: "
                      "it returns the MLP's output alone instead of adding it to the stream after "
                      f"attention. {WITH_SKIPS}"),
        Misconception("residual=False keeps the MLP skip",
                      knob(ref._Block, residual_removes=("attention",)),
                      "with residual=False your block still adds the MLP's output back to its "
                      f"input; only the attention's skip went. {WITHOUT_SKIPS}"),
        Misconception("residual=False keeps the attention skip",
                      knob(ref._Block, residual_removes=("mlp",)),
                      "with residual=False your block still adds the attention's output back to "
                      f"its input; only the MLP's skip went. {WITHOUT_SKIPS}"),
        Misconception("residual flag ignored", knob(ref._Block, residual_removes=()),
                      "with residual=False your block gives the same output as with residual=True: "
                      "the flag is not used. Read `self.residual` in forward and leave out both "
                      "additions when it is False."),
        Misconception("attention pair used as a tensor", knob(ref._Block, attention_output="pair"),
                      "nn.MultiheadAttention returns a pair, (attention output, attention "
                      "weights), and your code uses the whole pair where a tensor belongs: adding "
                      "or normalising a tuple raises this TypeError. Take the first item of the "
                      "pair, the attention output."),
    ],
    bad_inputs=[_bad(ref.Block, sizes, torch.ones(shape, dtype=torch.float64), why)
                for sizes, shape, why in [
                    ((6, 4, 8), (1, 2, 6), "d_model=6 cannot be split into n_heads=4 equal heads"),
                    ((4, 2, 8), (1, 2, 5), "x has 5 features but d_model is 4"),
                    ((4, 2, 8), (2, 4), "x has two axes, not [batch, tokens, d_model]")]],
    hint=("The title of the input above says which flag the block was built with. In a "
          "pre-norm block each sublayer reads a normalised copy of the stream; with "
          "residual=True it adds its result back to the stream, with residual=False its "
          "result replaces the stream."),
    stated=(Stated("pass no `attn_mask` (and no `is_causal`)", VALUES, "a mask or a range that leaves it out"),
            Stated("Keep its layers as they are, with their names", VALUES,
                   "does not have the layers the exercise asks for")),
))


# ----------------------------------------------------------------------------- TinyTransformer

def model_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    sizes = [  # (vocab, d_model, n_heads, d_ff, n_layers, seq_len, batch, T, note)
        (3, 4, 1, 4, 1, 2, 1, 2, "one layer"), (5, 4, 2, 8, 2, 3, 2, 3, "two layers"),
        (4, 6, 3, 6, 3, 4, 2, 3, "three layers, T < seq_len"),
    ] + ([(6, 8, 2, 16, 2, 5, 1, 5, "two layers, longer"),
          (2, 4, 4, 8, 4, 3, 3, 1, "four layers, one token"),
          (7, 4, 2, 4, 3, 6, 2, 6, "three layers, bigger vocabulary")] if hidden else [])
    return [_module_case(ref.TinyTransformer, tuple(model), residual,
                         torch.from_numpy(rng.integers(0, model[0], size=(batch, T))),
                         int(rng.integers(1000)), f"{note}, residual={residual}")
            for *model, batch, T, note in sizes for residual in (True, False)]


LESSON.register(Exercise(
    name="TinyTransformer", reference=ref.TinyTransformer, cases=model_cases,
    calls=ModulesBuilt(("Block",)),
    driver=MODULE_RUN, compare=ModuleOutcome(), arg_names=("tokens",),
    misconceptions=[
        Misconception("residual flag not passed to the blocks",
                      knob(ref._TinyTransformer, blocks_get_residual=False),
                      "with residual=False your model still behaves as if it had residuals: the "
                      "flag never reaches the blocks. Hand the model's own residual flag to every "
                      "Block it builds."),
        Misconception("one block repeated", knob(ref._TinyTransformer, one_block_shared=True),
                      "all your layers share one set of weights: `[block] * n_layers` puts one "
                      "Block object in the list n_layers times. Create a new Block per layer."),
        Misconception("blocks in a Python list", knob(ref._TinyTransformer, blocks_in="list"),
                      "your blocks sit in a plain Python list, so PyTorch never registers them: "
                      "none of their parameters is in the model's parameters() or state_dict(), so "
                      "no optimizer trains them and the check cannot load weights into them. An "
                      "nn.ModuleList is a list that registers what it holds."),
        Misconception("no final LayerNorm", knob(ref._TinyTransformer, final_norm=False),
                      "your head reads the stream directly. A pre-norm stack ends with one more "
                      "LayerNorm, self.ln_f: the head reads the stream after it."),
    ],
    bad_inputs=[_bad(ref.TinyTransformer, sizes, torch.tensor(tokens), why)
                for sizes, tokens, why in [
                    ((5, 4, 2, 8, 2, 3), [[0] * 4], "tokens has 4 positions but seq_len is 3"),
                    ((5, 4, 2, 8, 2, 3), [[1, 5]], "token id 5 is outside the vocabulary 0..4"),
                    ((5, 4, 2, 8, 0, 3), [[0, 0]], "n_layers is 0")]],
    hint=("Embed the tokens and their positions, run every block in order, then normalise "
          "once more before the output head, and pass residual on to every block."),
    stated=(Stated("each one gets the `residual` flag", VALUES, "the flag never reaches the blocks"),),
))


# ----------------------------------------------------------------------------- token_similarity

def _t(rows) -> torch.Tensor:
    return torch.tensor(rows, dtype=torch.float64)


def similarity_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    cases = [
        Case((_t([[1.0, 0.0], [0.0, 2.0]]),), note="orthogonal tokens"),
        Case((_t([[1.0, 2.0], [2.0, 4.0], [-3.0, -6.0]]),), note="parallel and opposite tokens"),
        Case((_t([[1.0, 2.0, 0.0]] * 3),), note="collapsed: one token repeated"),
        Case((_tensor(rng, (3, 4)),), note="one sequence"),
        Case((_tensor(rng, (2, 3, 4), offset=0.3),), note="a batch of two"),
        Case((_tensor(rng, (2, 2, 3, 2)),), note="two batch axes"),
    ]
    cases += [
        Case((_tensor(rng, (5, 3), offset=1.0),), note="tokens sharing a direction"),
        Case((_tensor(rng, (4, 2, 6)),), note="a batch of four"),
        Case((_tensor(rng, (1, 7, 5)) * 1e3,), note="large values"),
        Case((_t([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 1.0], [2.0, 2.0]]]),),
             note="one orthogonal and one collapsed sequence"),
    ] if hidden else []
    return cases + [Case((_tensor(rng, (3, 5, 4)).float(),), note="float32", tol=FLOAT32)]


LESSON.register(Exercise(
    name="token_similarity", reference=ref.token_similarity, cases=similarity_cases,
    arg_names=("h",), compare=PythonFloat(),
    misconceptions=[
        Misconception("self-pairs included", knob(ref._token_similarity, self_pairs=True),
                      "you averaged over all T×T pairs, including each token with itself (a "
                      "similarity of exactly 1). Leave out the diagonal: average the T·(T-1) pairs "
                      "of distinct tokens."),
        Misconception("normalised along the token axis",
                      knob(ref._token_similarity, normalise_dim=-2),
                      "you normalised along the token axis (dim=-2). Each token is a row: "
                      "normalise along the feature axis, dim=-1, so that every token vector has "
                      "length 1."),
        Misconception("pairs across the batch", knob(ref._token_similarity, pool_batch=True),
                      "you compared tokens of different sequences: flattening the batch puts every "
                      "token of every sequence in one set. Compare the tokens of each sequence "
                      "among themselves ([..., T, T]), then average over the batch."),
        Misconception("one value per sequence", knob(ref._token_similarity, batch_mean=False),
                      "you returned one similarity per sequence. Average those over the batch too "
                      "and return one Python float."),
    ],
    bad_inputs=[
        BadInput(Case((torch.ones(4, dtype=torch.float64),)), "h has one axis, not [..., T, d]"),
        BadInput(Case((torch.ones(1, 3, dtype=torch.float64),)),
                 "h has a single token, so there is no pair to compare"),
        BadInput(Case((torch.ones(2, 1, 3, dtype=torch.float64),)),
                 "every sequence of h has a single token"),
    ],
    hint=("Compare directions, not lengths: normalise each token vector, take the cosine of "
          "every pair of distinct tokens of a sequence (not of a token with itself), average "
          "within each sequence, then over the batch, and return a Python float."),
    stated=(Stated("return a Python float", VALUES, "not a Python float"),
            Stated("leave out each token's similarity with itself", VALUES, "including each token with itself")),
))


# ----------------------------------------------------------------------------- train

TRAIN_SIZES = {"vocab_size": 5, "d_model": 4, "n_heads": 2, "d_ff": 8, "seq_len": 4}


def toy_model(n_layers: int, seed: int) -> Fixture:
    """A small float64 language model of torch's own layers, with random weights."""
    sizes = dict(TRAIN_SIZES, n_layers=n_layers)
    layers = f"{n_layers} pre-norm nn.TransformerEncoderLayer{'s' if n_layers > 1 else ''}"
    state = _random_state(lambda: toy_lm(**sizes), seed)
    return Fixture("toy_lm", {"sizes": sizes, "state": state},
                   f"a small language model from torch's own layers ({layers}, vocab_size=5, "
                   f"d_model=4, seq_len=4) in float64, with random weights")


def toy_task(batch_size: int) -> Fixture:
    """The ``add_first_task`` fixture: ``courseware.ablation.AddFirstTask`` at this size."""
    params = {"vocab_size": TRAIN_SIZES["vocab_size"], "seq_len": TRAIN_SIZES["seq_len"],
              "batch_size": batch_size}
    return Fixture("add_first_task", params,
                   f"AddFirstTask({', '.join(f'{k}={v}' for k, v in params.items())})")


def train_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    runs = [(1, 1), (1, 4), (2, 4), (2, 6)] + ([(1, 3), (3, 5), (2, 8)] if hidden else [])
    return [Case((toy_model(n_layers, int(rng.integers(1000))),
                  toy_task(int(rng.integers(2, 5))), steps, int(rng.integers(100))),
                 note="one step" if steps == 1 else f"{steps} steps") for n_layers, steps in runs]


LESSON.register(Exercise(
    name="train", reference=ref.train, cases=train_cases,
    arg_names=("model", "task", "steps", "seed"), driver=TRAINING_RUN, compare=Losses(),
    misconceptions=[
        Misconception("gradients never cleared", knob(ref._train, zero_grad="never"),
                      "your losses match on the first step and drift after it: the gradients are "
                      "never cleared, so each step adds to the sum of all earlier ones (backward "
                      "accumulates). Clear them once per step, before backpropagating."),
        Misconception("gradients cleared before the update",
                      knob(ref._train, zero_grad="before step"),
                      "your model never changes: the gradients are cleared between backpropagating "
                      "and the optimizer's step, so every update uses zero gradients. Clear the "
                      "old ones first, then backpropagate, then step."),
        Misconception("a new generator at every step", knob(ref._train, generator_made="each step"),
                      "your first loss is right and the later ones are not: every step trains on "
                      "the first batch again. Every batch must come from the one generator the "
                      "given line makes; a new generator (or a new seed) inside the loop starts "
                      "the batches over at every step."),
        Misconception("loss on the last position only", knob(ref._train, loss_over="last position"),
                      "your loss uses the last position only. Every position has a target here: "
                      "flatten logits to [batch·T, vocab] and targets to [batch·T] and take the "
                      "cross-entropy over all of them."),
    ],
    bad_inputs=[
        BadInput(Case((toy_model(1, 0), toy_task(2), 0, 0)), "steps is 0"),
        BadInput(Case((toy_model(1, 0), toy_task(2), 2.5, 0)), "steps is 2.5, not a whole number"),
        BadInput(Case((toy_model(1, 0), toy_task(2), 3, -1)), "seed is negative"),
    ],
    hint=("One training step: a batch from the task's generator, the loss over every "
          "position, then clear the old gradients, backpropagate and update, in that order; "
          "record each step's loss as a Python float."),
    stated=(Stated("with that generator", VALUES, "Every batch must come from the one generator"),
            Stated("in that order", VALUES, "then backpropagate, then step"),
            Stated("record the loss as a Python float", VALUES,
                   "not a float: append `loss.item()`")),
))


# ----------------------------------------------------------------------------- run_ablation

CHECK_DEPTHS, CHECK_STEPS = (1, 4), 30


def ablation_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    """The check's budget, and one of its runs (drawn here, so that which one is not
    known from the visible check) redone with the learner's own parts. (The models train in
    float32: the recordings agree across CPUs at the float32 tolerance.)"""
    seed = 1 if hidden else 2  # never 0, the seed an answer that writes its own in would pick
    pick = int(rng.integers(2 * len(CHECK_DEPTHS)))
    witness = ablation_row(CHECK_DEPTHS[pick // 2], pick % 2 == 0, CHECK_STEPS, seed)
    return [Case((list(CHECK_DEPTHS), CHECK_STEPS, seed),
                 note=f"the check's small budget, seed {seed}", tol=FLOAT32,
                 build=Build(witness=witness))]


LESSON.register(Exercise(
    name="run_ablation", reference=ref.run_ablation, cases=ablation_cases,
    uses=("TinyTransformer", "train", "token_similarity"),
    driver=TRAINING_RUN, compare=Ablation(last=LAST),
    arg_names=("depths", "steps", "seed"),
    bad_inputs=[
        BadInput(Case(([], 5, 0)), "depths is empty"),
        BadInput(Case(([1, 0], 5, 0)), "a depth of 0 has no blocks"),
        BadInput(Case(([1], 0, 0)), "steps is 0"),
    ],
    hint=("Both models of a depth must start from the same weights: seed torch's random "
          "generator right before building each. For each run, measure the similarities "
          "before and after training, and append one row with the six keys."),
    stated=(Stated("right after seeding torch's random generator with `seed`", VALUES,
                   "the two models start from different weights"),
            Stated("in the order depth 1 with, depth 1 without, depth 2 with, and so on", VALUES,
                   "expected depth=1, residual=True")),
))
