"""Lesson 09 exercises: the next-token loss, the sampling distribution, the model, generation
and the induction score.

``GPT`` is checked exactly in float64 with random weights in every layer, on plain runs and
on runs fed through a cache (the ``gpt_run`` driver); it reaches the learner's own
``causal_mask``, ``split_heads``, ``merge_heads`` and ``rope`` (stood in for by their sealed
results when they fail their own checks) and ``KVCache`` (named first when it fails its
own). ``generate`` runs on a model of tables (``counting_lm``) whose logits are exact, so
that a cached and an uncached run draw the same tokens, and is compared token for token.
A mistake is the reference with a knob turned.
"""
from __future__ import annotations

import functools
import inspect
import math
from types import SimpleNamespace

import numpy as np
import torch
from torch import nn

from ...learner.codec import Fixture
from ...learner.comparisons import ModuleOutcome
from .. import LESSONS, BadInput, Build, Case, Exercise, Misconception, Stated, knob
from ..stated import BAD_INPUTS, VALUES
from . import reference as ref
from .learner import GPTRun, SameKind

LESSON = LESSONS.of(__name__)  # every exercise here registers through it


def _t(rng, shape, scale=1.0) -> torch.Tensor:
    return torch.from_numpy(rng.normal(0.0, scale, size=shape))


def _ids(rng, V, shape) -> torch.Tensor:
    return torch.from_numpy(rng.integers(0, V, size=shape))


# ============================================================================= next_token_loss

def loss_cases(rng, hidden):
    shapes = [((2, 3), "two positions: one prediction"), ((4, 5), "one sequence"),
              ((2, 3, 4), "a batch of two"), ((2, 2, 5, 6), "two batch axes")]
    if hidden:
        shapes += [((3, 2), "three vocabulary words"), ((3, 6, 7), "a batch of three"),
                   ((1, 9, 11), "longer")]
    cases = [Case((_t(rng, s, 2.0), _ids(rng, s[-1], s[:-1])), note=note) for s, note in shapes]
    cases.append(Case((_t(rng, (2, 4, 5), 300.0), _ids(rng, 5, (2, 4))), note="large logits"))
    return cases


loss = functools.partial(knob, ref._next_token_loss)
LESSON.register(Exercise(
    name="next_token_loss", reference=ref.next_token_loss, cases=loss_cases,
    arg_names=("logits", "tokens"), seed=901, probes=("logits",),
    quantities=lambda logits, tokens: {
        "the number of predictions": int(np.prod(tokens.shape[:-1], dtype=int)) * (tokens.shape[-1] - 1),
        "T": tokens.shape[-1], "T - 1": tokens.shape[-1] - 1},
    compare=SameKind(why="Return the loss tensor itself: .item() or float() cuts it off from "
                         "the gradients that training needs."),
    misconceptions=[
        Misconception("each position scored on its own token", loss(shift=0), (
            "each position of yours is scored against its own token, not the next one: "
            "the prediction at position t is for the token at t + 1, so the last position "
            "has nothing to predict and the first token is never a target.")),
        Misconception("summed instead of averaged", loss(reduce="sum"), (
            "your loss is the sum over the predictions, not their mean: it grows with the "
            "batch and the length, and so does the size of every training step. Take the "
            "mean over every position that has a next token.")),
    ],
    bad_inputs=[BadInput(Case((torch.zeros(1, 3), torch.zeros(1, dtype=torch.long))),
                         "with one position (T = 1) no position has a next token"),
                BadInput(Case((torch.zeros(3, 4), torch.zeros(2, dtype=torch.long))),
                         "logits has 3 positions but tokens has 2"),
                BadInput(Case((torch.zeros(3, 4), torch.tensor([0, 1, 4]))),
                         "token id 4 is outside the vocabulary 0..3")],
    hint=("The prediction at position t is for the token at t + 1: drop the last position "
          "of the logits and the first token, flatten both, and take the mean cross-entropy "
          "of what is left. Keep it a tensor, so that gradients flow."),
    stated=(Stated("raises a `ValueError` for inputs that do not fit", BAD_INPUTS,
                   "should reject this input with a ValueError"),),
))


# ============================================================================= next_token_probs

def probs_case(rng, shape, note, scale=2.0, **kwargs) -> Case:
    return Case((_t(rng, shape, scale),), kwargs, note=note)


def probs_cases(rng, hidden):
    tied = torch.tensor([[1.0, 3.0, 3.0, 0.0, -1.0], [2.0, 2.0, 2.0, 2.0, 2.0]],
                        dtype=torch.float64)
    cases = [
        probs_case(rng, (4,), "temperature 1: a softmax"),
        probs_case(rng, (2, 5), "temperature 0.5", temperature=0.5),
        probs_case(rng, (2, 5), "temperature 2", temperature=2.0),
        probs_case(rng, (2, 6), "top_k = 2", top_k=2),
        probs_case(rng, (2, 6), "top_p = 0.5", top_p=0.5),
        Case((torch.tensor([[0.0, math.log(3.0), math.log(2.0), 0.0]], dtype=torch.float64),),
             {"top_p": 0.5}, note="top_p = 0.5 reached exactly by the first token"),
        Case((torch.tensor([[math.log(4.0), math.log(3.0), math.log(2.0), 0.0]],
                           dtype=torch.float64),),
             {"top_p": 0.7}, note="top_p = 0.7: the second token passes it"),
        Case((torch.log(torch.tensor([[0.4, 0.3, 0.2, 0.1]], dtype=torch.float64)),),
             {"temperature": 2.0, "top_p": 0.65},
             note="temperature 2, then top_p = 0.65: the tempered probabilities decide"),
        Case((torch.log(torch.tensor([[0.5, 0.2, 0.2, 0.1]], dtype=torch.float64)),),
             {"temperature": 0.5, "top_k": 2, "top_p": 0.9},
             note="temperature 0.5, then top_k = 2, then top_p = 0.9"),
        probs_case(rng, (2, 3, 6), "top_k = 3 and top_p = 0.6, batched", top_k=3, top_p=0.6),
        probs_case(rng, (2, 6), "top_k = 4 then top_p = 0.8, temperature 0.7", temperature=0.7,
                   top_k=4, top_p=0.8),
        Case((tied,), {"temperature": 0.0}, note="temperature 0 with tied largest logits"),
        Case((tied,), {"top_k": 2}, note="top_k = 2 with tied logits"),
        probs_case(rng, (3, 5), "top_k larger than the vocabulary", top_k=9),
        probs_case(rng, (2, 6), "large logits", scale=500.0, top_p=0.9),
    ]
    if hidden:
        cases += [
            probs_case(rng, (3, 7), "temperature 0.3, top_k = 3", temperature=0.3, top_k=3),
            probs_case(rng, (4, 8), "top_p = 0.95", top_p=0.95),
            probs_case(rng, (2, 2, 9), "temperature 0", temperature=0.0),
            probs_case(rng, (5, 6), "top_k = 1", top_k=1),
            probs_case(rng, (2, 6), "top_p = 1", top_p=1.0),
            probs_case(rng, (3, 10), "everything at once", temperature=1.5, top_k=6, top_p=0.7),
        ]
    return cases


def _bad_probs(why, **kwargs) -> BadInput:
    return BadInput(Case((torch.zeros(2, 4, dtype=torch.float64),), kwargs), why)


probs = functools.partial(knob, ref._next_token_probs)
LESSON.register(Exercise(
    name="next_token_probs", reference=ref.next_token_probs, cases=probs_cases,
    arg_names=("logits", "temperature", "top_k", "top_p"), seed=902,
    misconceptions=[
        Misconception("top-p applied before top-k", probs(order="p, then k"), (
            "your nucleus is chosen before top-k cuts the list: the probabilities that top_p "
            "adds up must be those after top-k, renormalised over the k tokens kept. Keep the "
            "top k first, then choose the nucleus among them.")),
        Misconception("nucleus stops before top_p", probs(nucleus="below p"), (
            "your nucleus leaves out the token that takes the total to top_p: keep adding "
            "tokens, most likely first, until their probability reaches at least top_p, and "
            "keep the token that gets it there.")),
    ],
    bad_inputs=[_bad_probs("temperature = -1 is negative", temperature=-1.0),
                _bad_probs("top_k = 0: at least one token must be kept", top_k=0),
                _bad_probs("top_p = 0 keeps nothing: it must be in (0, 1]", top_p=0.0),
                _bad_probs("top_p = 1.5 is outside (0, 1]", top_p=1.5)],
    hint=("In order: divide the logits by the temperature; keep the logits that are at least "
          "the k-th largest; sort the kept tokens' probabilities from the largest, and keep "
          "tokens until their sum reaches top_p (the first one always); then a softmax over "
          "what is kept, zeros elsewhere. Temperature 0: one 1 on the first largest logit."),
    stated=(Stated("A negative temperature, `top_k < 1` or `top_p` outside (0, 1] is a "
                   "`ValueError`", BAD_INPUTS, "should reject this input with a ValueError"),
            Stated("is greedy: all the probability on the largest logit (the first one, if "
                   "several tie)", VALUES, "temperature 0 with tied largest logits")),
))


# ============================================================================= GPT

def _random_state(build, seed: int) -> dict | None:
    """``{parameter name: array}`` of ``build()`` in float64 with random weights everywhere,
    LayerNorm gains and biases included; None when ``build()`` rejects its sizes."""
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
        elif not isinstance(sub, nn.Embedding):
            noise = noise / math.sqrt(p.shape[-1])
        state[full] = noise.numpy()
    return state


# The parameters whose gradients a plain run compares: through the embeddings, the turned
# queries and keys, the values and the head.
GRADIENTS = ["tok_emb.weight", "blocks.0.w_q.weight", "blocks.0.w_k.weight",
             "blocks.0.w_v.weight", "head.weight"]
SIZE_NAMES = ("vocab_size", "d_model", "n_heads", "n_layers", "d_ff", "max_len")


def gpt_case(rng, sizes: tuple, rope: bool, tokens, note: str, prefix=None, step=1) -> Case:
    state = _random_state(lambda: ref.GPT(*sizes, rope=rope), int(rng.integers(1000)))
    describe = f"GPT({', '.join(f'{k}={v}' for k, v in zip(SIZE_NAMES, sizes))}, rope={rope})"
    if state is not None:
        describe += (" in float64, with random weights loaded into every layer (LayerNorm gains "
                     "and biases included)")
    if prefix is not None:
        per_call = "one token" if step == 1 else f"{step} tokens"
        describe += (f", fed through a cache: the first {prefix} token"
                     f"{'s' if prefix > 1 else ''} in one call, then {per_call} per call")
    grads = None if prefix is not None or state is None else {"item": 0, "params": GRADIENTS}
    fed = {} if prefix is None else {"prefix": prefix, **({"step": step} if step > 1 else {})}
    return Case((tokens,), fed, note=note, build=Build(
        args=list(sizes), kwargs={"rope": rope}, dtype="float64", state=state, label="model",
        describe=describe, grads=grads))


def gpt_cases(rng, hidden):
    runs = [  # (sizes, rope, batch, T, prefix, note)
        ((5, 4, 2, 1, 8, 4), True, 1, 1, None, "one token"),
        ((5, 4, 2, 1, 8, 6), True, 1, 3, None, "one layer, three tokens"),
        ((6, 8, 2, 2, 16, 8), True, 2, 5, None, "two layers"),
        ((6, 8, 2, 2, 0, 8), True, 2, 4, None, "attention only (d_ff = 0)"),
        ((5, 8, 1, 1, 8, 6), False, 1, 4, None, "rope=False"),
        ((7, 8, 4, 2, 8, 12), True, 2, 12, None, "four heads, up to max_len"),
        ((6, 8, 2, 2, 16, 8), True, 2, 5, 2, "through a cache"),
        ((5, 4, 1, 1, 8, 8), True, 1, 6, 1, "through a cache from the first token"),
        ((6, 8, 2, 2, 8, 10), True, 2, 8, (2, 3), "through a cache, three tokens per call"),
    ]
    if hidden:
        runs += [
            ((9, 12, 3, 3, 24, 10), True, 2, 7, None, "three layers, three heads"),
            ((4, 4, 2, 2, 0, 6), False, 3, 6, None, "rope=False, attention only"),
            ((8, 8, 2, 2, 16, 16), True, 1, 10, 4, "through a cache"),
            ((6, 8, 4, 1, 8, 9), True, 2, 9, 8, "through a cache, the last token alone"),
            ((7, 8, 2, 2, 0, 12), True, 1, 11, (3, 4), "through a cache, four tokens per call"),
        ]
    return [gpt_case(rng, sizes, rope, _ids(rng, sizes[0], (batch, T)), note,
                     *(prefix if isinstance(prefix, tuple) else (prefix,)))
            for sizes, rope, batch, T, prefix, note in runs]


def gpt_calls(model, tokens, prefix=None, step=1):
    """The reference model's calls on the learner's parts, on one case (its stand-ins)."""
    made = []
    parts = ref.reference_parts()

    def noted(name):
        fn = getattr(parts, name)

        def call(*args, **kwargs):
            made.append((name, args, kwargs))
            return fn(*args, **kwargs)
        return call

    model.parts = SimpleNamespace(**{name: noted(name) if name != "KVCache" else parts.KVCache
                                     for name in ref.PART_NAMES})
    try:
        with torch.no_grad():
            if prefix is None:
                model(tokens)
            else:
                cache = []
                model(tokens[:, :prefix], cache=cache)
                for t in range(prefix, tokens.shape[1], step):
                    model(tokens[:, t:t + step], cache=cache)
    finally:
        model.parts = None
    return made


def _bad_gpt(sizes, tokens, why) -> BadInput:
    return BadInput(gpt_case(np.random.default_rng(0), sizes, True, tokens, ""), why)


gpt = functools.partial(knob, ref._GPT)
LESSON.register(Exercise(
    name="GPT", reference=ref.GPT, cases=gpt_cases, calls=gpt_calls,
    uses=("KVCache",), driver=GPTRun(threads=1),
    compare=ModuleOutcome(items=[[0, "the logits (item 0): "],
                         [1, "the attention weights kept in self.weights (item 1): "]]),
    arg_names=("tokens",), outputs=("logits", "attention weights kept in self.weights"),
    seed=903,
    misconceptions=[
        Misconception("cached tokens placed at position 0",
                      gpt(cache_positions="restart"), (
                          "with a cache your new tokens are turned as if they stood at position "
                          "0 again: the positions of the tokens you feed continue after the "
                          "cached ones, so the first new token is at len(cache[0]).")),
        Misconception("no final LayerNorm", gpt(final_norm=False), (
            "your head reads the stream directly. A pre-norm stack ends with one more "
            "LayerNorm, self.ln_f: the head reads the stream after it (lesson 06).")),
        Misconception("mask applied after the softmax", gpt(mask_at="after softmax"), (
            "you masked after the softmax: the softmax ran over every key, future ones "
            "included, and then the future weights were set to 0, so the weights of each "
            "query no longer add up to 1. Mask the scores with -inf before the softmax "
            "(lesson 04).")),
        Misconception("mask read the wrong way round", gpt(mask_keeps="blocked"), (
            "your mask is read the wrong way round: True in causal_mask marks a key the "
            "query may see (itself and the past), and you blocked those keys and kept the "
            "future ones. Set the scores to -inf where the mask is False.")),
        Misconception("scaled by √d_model", gpt(scale="√d_model"), (
            "you divided the scores by √d_model. Each head's scores are dot products of "
            "d_head features, so they are divided by √d_head (lesson 02), d_model / n_heads.")),
        Misconception("the MLP reads ln1", gpt(mlp_norm="ln1"), (
            "your MLP reads the stream through ln1, the attention's LayerNorm. Each sublayer "
            "has its own: the MLP reads ln2 of the stream.")),
    ],
    bad_inputs=[_bad_gpt((5, 4, 2, 1, 8, 3), torch.zeros(1, 4, dtype=torch.long),
                         "tokens has 4 positions but max_len is 3"),
                _bad_gpt((5, 4, 2, 1, 8, 3), torch.tensor([[1, 5]]),
                         "token id 5 is outside the vocabulary 0..4"),
                _bad_gpt((5, 6, 2, 1, 8, 3), torch.zeros(1, 2, dtype=torch.long),
                         "d_head = 3 is odd, and RoPE turns pairs")],
    hint=("Embed the tokens; in each block, queries, keys and values from ln1 of the stream, "
          "split into heads, queries and keys turned at their positions, scores over √d_head, "
          "the causal mask, a softmax, the heads merged and projected and added to the "
          "stream, then the MLP on ln2 added too; finally ln_f and the head. With a cache, the "
          "new tokens' positions start at len(cache[0])."),
    stated=(Stated("Keep the layers as they are, with their names", VALUES,
                   "does not have the layers the exercise asks for"),
            Stated("Keep each layer's attention weights in `self.weights`", VALUES,
                   "self.weights")),
))


# ============================================================================= generate

def counting_model(vocab_size: int, seed: int) -> Fixture:
    return Fixture("counting_lm", {"vocab_size": vocab_size, "seed": seed},
                   f"a small model of tables (vocab_size={vocab_size}) that takes a cache")


def generator(seed: int) -> Fixture:
    return Fixture("generator", {"seed": seed}, f"torch.Generator().manual_seed({seed})")


def generate_case(rng, V, prompt_shape, n_new, note, **kwargs) -> Case:
    seed = int(rng.integers(1000))
    kwargs = {"generator": generator(seed), **kwargs}
    return Case((counting_model(V, int(rng.integers(1000))),
                 torch.from_numpy(rng.integers(0, V, size=prompt_shape)), n_new), kwargs,
                note=note)


def generate_cases(rng, hidden):
    cases = [
        generate_case(rng, 5, (1, 1), 1, "one new token"),
        generate_case(rng, 5, (1, 2), 4, "four new tokens"),
        generate_case(rng, 6, (3,), 3, "a prompt without a batch axis"),
        generate_case(rng, 6, (2, 3), 5, "a batch of two prompts"),
        generate_case(rng, 6, (2, 3), 5, "without the cache", use_cache=False),
        generate_case(rng, 7, (1, 2), 6, "greedy (temperature 0)", temperature=0.0),
        generate_case(rng, 7, (2, 2), 6, "top_k = 2, temperature 0.8", top_k=2,
                      temperature=0.8),
        generate_case(rng, 7, (2, 2), 6, "top_p = 0.6", top_p=0.6),
        generate_case(rng, 5, (1, 3), 0, "no new tokens"),
    ]
    if hidden:
        cases += [
            generate_case(rng, 8, (3, 4), 10, "a batch of three"),
            generate_case(rng, 8, (1, 5), 12, "twelve new tokens, without the cache",
                          use_cache=False),
            generate_case(rng, 9, (2, 1), 8, "everything at once", temperature=1.3, top_k=5,
                          top_p=0.8),
        ]
    return cases


LESSON.register(Exercise(
    name="generate", reference=ref.generate, cases=generate_cases,
    arg_names=("model", "prompt", "n_new", "temperature", "top_k", "top_p", "generator",
               "use_cache"),
    uses=("next_token_probs",), seed=904,
    misconceptions=[
        Misconception("the whole sequence fed again with a cache",
                      knob(ref._generate, feed="everything"), (
                          "with a cache you feed the whole sequence at every step: the cache "
                          "already holds every earlier position, so the model places what you "
                          "feed after them. Feed only the token you just drew.")),
        Misconception("the likeliest token instead of a draw", knob(ref._generate, draw="argmax"), (
            "your tokens are the likeliest ones, not draws: each new token must be drawn from "
            "the distribution with torch.multinomial(..., 1, generator=generator), so that "
            "temperature, top-k and top-p change what comes out and the generator makes it "
            "repeatable.")),
    ],
    bad_inputs=[BadInput(Case((counting_model(5, 0), torch.tensor([[0, 1]]), -1)),
                         "n_new = -1 is negative"),
                BadInput(Case((counting_model(5, 0), torch.zeros(1, 0, dtype=torch.long), 2)),
                         "the prompt is empty")],
    hint=("Run the model on the prompt, then n_new times: the distribution of the last "
          "position's logits from your next_token_probs, one draw with torch.multinomial("
          "..., 1, generator=generator), the token appended. With a cache, feed the model only "
          "the token just drawn (the cache remembers the rest); without one, the whole "
          "sequence."),
    stated=(Stated("draws one token with `torch.multinomial(next_token_probs(...), 1, "
                   "generator=generator)`", VALUES, "not draws"),
            Stated("generation with a cache returns exactly what the same call without a cache "
                   "returns", VALUES,
                   "with a cache")),
))


# ============================================================================= induction_score

def attention_rows(rng, lead, T) -> np.ndarray:
    """Causal attention weights [..., T, T]: random rows that sum to 1 over keys 0..t."""
    scores = rng.normal(0.0, 2.0, size=(*lead, T, T))
    scores = np.where(np.tril(np.ones((T, T), dtype=bool)), scores, -np.inf)
    w = np.exp(scores - scores.max(-1, keepdims=True))
    return w / w.sum(-1, keepdims=True)


def induction_cases(rng, hidden):
    runs = [((), 4, 2, "period 2, T = 4"), ((), 6, 3, "period 3"), ((2,), 8, 4, "two heads"),
            ((2, 3), 10, 5, "layers and heads"), ((), 7, 3, "T not twice the period"),
            ((), 5, 1, "period 1")]
    if hidden:
        runs += [((3,), 12, 6, "three heads"), ((2, 2), 9, 4, "odd T"), ((), 16, 8, "longer")]
    cases = [Case((attention_rows(rng, lead, T), period), note=note) for lead, T, period, note in runs]
    cases.append(Case((torch.from_numpy(attention_rows(rng, (2,), 6)), 3),
                      note="a torch tensor: a torch tensor back"))
    return cases


LESSON.register(Exercise(
    name="induction_score", reference=ref.induction_score, cases=induction_cases,
    arg_names=("weights", "period"), seed=905,
    quantities=lambda weights, period: {"T - period, the number of queries":
                                        weights.shape[-1] - period},
    compare=SameKind(why="A torch tensor in gives a torch tensor back, a NumPy array a NumPy "
                         "array: index and average with the input's own operations."),
    misconceptions=[
        Misconception("weight on the earlier copy itself", knob(ref._induction_score, offset=0), (
            "you read the weight on the earlier copy of the current token, key t - period. "
            "An induction head looks one further, at the token that came after that copy, "
            "key t - period + 1: that is the token it predicts comes next.")),
    ],
    bad_inputs=[BadInput(Case((np.ones((4, 4)) / 4, 4)),
                         "period = 4 leaves no query after the first copy (T = 4)"),
                BadInput(Case((np.ones((4, 3)) / 3, 1)), "weights is not square [..., T, T]")],
    hint=("For each query t from period to T - 1, read the weight on key t - period + 1, then "
          "average over those queries: one number per leading index."),
    stated=(),
))
