"""Lesson 09: a GPT from the learner's own parts.

First the references against independent computations: the loss as a loop of
log-probabilities, the distribution against a brute-force nucleus, the model against
torch's own attention with RoPE as complex numbers (no bridge of the course's), generation
against a loop, with and without the cache, and the induction score as a loop. Then the
bridges and the corpus. Then grader.check: correct answers written other ways pass; a
learner's wrong answers, written as a learner would, get named diagnoses; an answer that
breaks a stated rule fails and is told which (``BREAKS``); bad inputs; ``GPT`` judged on
its own beside a wrong or missing part of an earlier lesson (its stand-in) and named when
its ``KVCache`` fails; no message holds a solution line. Last, what the notebook claims of
its experiments, on a small budget: an induction head forms with RoPE and not without, and
the notebook's own solutions pass their checks.
"""
from __future__ import annotations

import importlib
import itertools
import json
import math
import sys
import types

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT
from courseware.gpt import (Corpus, RepeatTask, from_rows, gpt_block, gpt_sizes, gpt_tokens,
                            induction_inputs, loss_inputs, probs_inputs, prompt_inputs,
                            rope_matrices, to_rows, train_lm, turn, windows)
from courseware.long_attention import key_value_rows
from courseware.positions import rope_inputs
from grader import CheckFailed, check
from grader import reference as ref
from grader.learner.checks import verdict
from grader.learner.env import one_thread
from grader.learner.validation import positive_int
from stated_rules import broken

LESSON = "09_tiny_gpt"
EXERCISES = ["next_token_loss", "next_token_probs", "GPT", "generate", "induction_score"]


def failure(name, fn, hidden=False) -> str:
    with pytest.raises(CheckFailed) as info:
        check(name, fn, hidden=hidden)
    return str(info.value)


# ================================================================= independent computations

def loss_by_loop(logits, tokens):
    V, T = logits.shape[-1], tokens.shape[-1]
    flat_logits = logits.reshape(-1, T, V)
    flat_tokens = tokens.reshape(-1, T)
    total, n = 0.0, 0
    for b in range(flat_logits.shape[0]):
        for t in range(T - 1):
            row = flat_logits[b, t].tolist()
            top = max(row)
            log_z = top + math.log(sum(math.exp(x - top) for x in row))
            total += log_z - row[int(flat_tokens[b, t + 1])]
            n += 1
    return total / n


def nucleus_by_brute_force(p: list[float], top_p: float) -> set[int]:
    """The smallest set of most likely tokens whose probability reaches top_p (ties broken
    by the lower index), by trying sizes 1, 2, ..."""
    order = sorted(range(len(p)), key=lambda i: (-p[i], i))
    for size in range(1, len(p) + 1):
        if sum(p[i] for i in order[:size]) >= top_p - 1e-12:
            return set(order[:size])
    return set(order)


def rope_by_complex(x: torch.Tensor, positions, base=10000.0) -> torch.Tensor:
    """RoPE as complex multiplication, in torch (no NumPy part, no bridge)."""
    d = x.shape[-1]
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angles = torch.as_tensor(positions, dtype=torch.float64)[:, None] * theta
    z = torch.complex(x[..., 0::2].double(), x[..., 1::2].double()) * torch.polar(
        torch.ones_like(angles), angles)
    return torch.stack([z.real, z.imag], dim=-1).flatten(-2).to(x.dtype)


def gpt_by_torch(model, tokens, rope=True):
    """The model's logits with torch's own attention (is_causal) and complex RoPE, from the
    weights of ``model`` (a reference GPT)."""
    B, T = tokens.shape
    h = model.n_heads
    x = model.tok_emb(tokens)
    for block in model.blocks:
        n = block["ln1"](x)
        q, k, v = (block[name](n).view(B, T, h, -1).transpose(1, 2) for name in ("w_q", "w_k", "w_v"))
        if rope:
            q, k = rope_by_complex(q, range(T)), rope_by_complex(k, range(T))
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + block["w_o"](out.transpose(1, 2).reshape(B, T, -1))
        if "mlp" in block:
            x = x + block["mlp"](block["ln2"](x))
    return model.head(model.ln_f(x))


def induction_by_loop(weights, period):
    w = np.asarray(weights)
    T = w.shape[-1]
    lead = w.shape[:-2]
    out = np.zeros(lead)
    for index in np.ndindex(*lead):
        out[index] = np.mean([w[index][t, t - period + 1] for t in range(period, T)])
    return out


def small_gpt(seed=0, rope=True, d_ff=16, **sizes) -> ref.GPT:
    torch.manual_seed(seed)
    args = dict(vocab_size=7, d_model=8, n_heads=2, n_layers=2, d_ff=d_ff, max_len=16)
    args.update(sizes)
    return ref.GPT(**args, rope=rope).double().eval()


# ================================================================= the references

@settings(max_examples=25, deadline=None)
@given(st.integers(1, 3), st.integers(2, 6), st.integers(2, 7), st.integers(0, 2**16))
def test_the_loss_equals_a_loop_of_log_probabilities(B, T, V, seed):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(B, T, V, generator=g, dtype=torch.float64) * 3
    tokens = torch.randint(0, V, (B, T), generator=g)
    assert ref.next_token_loss(logits, tokens).item() == pytest.approx(loss_by_loop(logits, tokens), abs=1e-12)


def test_the_loss_is_a_scalar_tensor_that_gradients_flow_through():
    logits = torch.randn(2, 4, 5, dtype=torch.float64, requires_grad=True)
    loss = ref.next_token_loss(logits, torch.randint(0, 5, (2, 4)))
    assert loss.dim() == 0 and loss.requires_grad
    loss.backward()
    assert logits.grad[:, -1].abs().max() == 0      # the last position predicts nothing
    assert logits.grad[:, :-1].abs().max() > 0


def test_equal_logits_give_ln_v():
    assert ref.next_token_loss(torch.zeros(1, 10, 24), torch.randint(0, 24, (1, 10))).item() == \
        pytest.approx(math.log(24), abs=1e-6)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 9), st.floats(0.2, 3.0), st.one_of(st.none(), st.integers(1, 10)),
       st.one_of(st.none(), st.floats(0.05, 1.0)), st.integers(0, 2**16))
def test_the_distribution_keeps_top_k_then_the_smallest_nucleus(V, temperature, top_k, top_p, seed):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(V, generator=g, dtype=torch.float64) * 2
    p = ref.next_token_probs(logits, temperature, top_k, top_p)
    assert p.sum().item() == pytest.approx(1.0, abs=1e-12)
    scaled = (logits / temperature).tolist()
    kept = set(range(V))
    if top_k is not None and top_k < V:
        kth = sorted(scaled, reverse=True)[top_k - 1]
        kept = {i for i in kept if scaled[i] >= kth}
    if top_p is not None:
        z = sum(math.exp(scaled[i]) for i in kept)
        probs = [math.exp(scaled[i]) / z if i in kept else 0.0 for i in range(V)]
        kept = nucleus_by_brute_force(probs, top_p) & kept
    assert {i for i in range(V) if p[i] > 0} == kept
    z = sum(math.exp(scaled[i]) for i in kept)
    for i in kept:
        assert p[i].item() == pytest.approx(math.exp(scaled[i]) / z, rel=1e-9)


def test_temperature_0_is_greedy_on_the_first_largest():
    p = ref.next_token_probs(torch.tensor([1.0, 3.0, 3.0, 0.0]), temperature=0)
    assert p.tolist() == [0.0, 1.0, 0.0, 0.0]


@pytest.mark.parametrize("kwargs, words", [
    ({"temperature": -0.5}, "temperature must be a number >= 0"),
    ({"top_k": 0}, "top_k must be None or a whole number >= 1"),
    ({"top_p": 0.0}, "top_p must be None or a number in (0, 1]"),
    ({"top_p": 1.01}, "top_p must be None or a number in (0, 1]"),
])
def test_bad_settings_are_value_errors_that_say_which(kwargs, words):
    with pytest.raises(ValueError) as info:
        ref.next_token_probs(torch.zeros(3), **kwargs)
    assert words in str(info.value)


@pytest.mark.parametrize("rope", [True, False])
@pytest.mark.parametrize("d_ff", [16, 0])
def test_the_model_equals_torchs_attention_with_complex_rope(rope, d_ff):
    model = small_gpt(rope=rope, d_ff=d_ff)
    tokens = torch.randint(0, 7, (3, 9), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        ours, theirs = model(tokens), gpt_by_torch(model, tokens, rope)
    assert (ours - theirs).abs().max().item() < 1e-12


@pytest.mark.parametrize("prefix", [1, 3, 8])
def test_the_model_fed_through_a_cache_gives_the_same_logits(prefix):
    model = small_gpt()
    tokens = torch.randint(0, 7, (2, 9), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        full = model(tokens)
        cache = []
        pieces = [model(tokens[:, :prefix], cache=cache)]
        pieces += [model(tokens[:, t:t + 1], cache=cache) for t in range(prefix, 9)]
    assert len(cache) == 2 and len(cache[0]) == 9
    assert (torch.cat(pieces, dim=1) - full).abs().max().item() < 1e-12


def test_without_rope_the_last_position_cannot_tell_the_order_of_the_others():
    """One layer with the causal mask alone: the last token's output is the same for any
    order of the tokens before it (lesson 08). With RoPE it is not."""
    tokens = torch.tensor([[1, 2, 3, 4, 5, 6]])
    swapped = torch.tensor([[3, 1, 2, 5, 4, 6]])
    for rope, same in ((False, True), (True, False)):
        model = small_gpt(rope=rope, n_layers=1)
        with torch.no_grad():
            a, b = model(tokens)[0, -1], model(swapped)[0, -1]
        assert ((a - b).abs().max().item() < 1e-12) is same


def test_generation_equals_a_loop_and_is_the_same_with_and_without_the_cache():
    model = small_gpt()
    prompt = torch.tensor([[1, 2], [3, 4]])
    runs = [ref.generate(model, prompt, 10, top_k=4, generator=torch.Generator().manual_seed(5),
                         use_cache=use) for use in (True, False)]
    assert torch.equal(runs[0], runs[1]) and runs[0].shape == (2, 12)
    g, tokens = torch.Generator().manual_seed(5), prompt
    with torch.no_grad():
        for _ in range(10):
            p = ref.next_token_probs(model(tokens)[:, -1], top_k=4)
            tokens = torch.cat([tokens, torch.multinomial(p, 1, generator=g)], dim=1)
    assert torch.equal(runs[0], tokens)


def test_a_prompt_without_a_batch_axis_gives_one_sequence_back():
    model = small_gpt()
    out = ref.generate(model, torch.tensor([1, 2, 3]), 4, generator=torch.Generator().manual_seed(0))
    assert out.shape == (7,) and out[:3].tolist() == [1, 2, 3]


@settings(max_examples=20, deadline=None)
@given(st.integers(2, 10), st.integers(1, 9), st.integers(0, 2**16))
def test_the_induction_score_equals_a_loop(T, period, seed):
    period = min(period, T - 1)
    w = np.random.default_rng(seed).random((2, 3, T, T))
    assert np.allclose(ref.induction_score(w, period), induction_by_loop(w, period))
    assert isinstance(ref.induction_score(torch.from_numpy(w), period), torch.Tensor)


def test_a_perfect_induction_head_scores_1():
    T, period = 8, 4
    w = np.zeros((T, T))
    for t in range(T):
        w[t, t - period + 1 if t >= period else 0] = 1.0
    assert ref.induction_score(w, period) == 1.0


# ================================================================= bridges and corpus

def test_the_rope_bridge_equals_rope_and_lets_gradients_through():
    x = torch.randn(2, 3, 5, 8, dtype=torch.float64, requires_grad=True)
    positions = np.array([0, 3, 4, 9, 100])
    R = rope_matrices(ref.rope, positions, 8)
    turned = turn(x, R)
    assert (turned - rope_by_complex(x, positions)).abs().max().item() < 1e-12
    turned.sum().backward()
    assert x.grad is not None


def test_a_rope_that_changes_the_shape_is_named_by_the_bridge():
    with pytest.raises(ValueError, match="must keep the shape"):
        rope_matrices(lambda x, p, base: x[..., :2], np.arange(3), 4)


def test_rows_for_the_cache_go_there_and_back():
    k = torch.randn(2, 3, 5, 4, dtype=torch.float64)
    rows = to_rows(k)
    assert rows.shape == (5, 24)
    assert torch.equal(from_rows(rows, 2, 3, k), k)


def test_the_corpus_keeps_its_rules():
    corpus = Corpus()
    rng = np.random.default_rng(0)
    for _ in range(300):
        assert corpus.is_sentence(corpus.sentence(rng))
    for wrong in ["the blue small cat sees a box .", "a fluffy box falls .", "the wooden cat sees a box .",
                  "the cat falls .", "the box chases a cat .", "the cat sees .", "the cat sees a box"]:
        assert not corpus.is_sentence(wrong.split()), wrong
    stream = corpus.stream(500, seed=1)
    assert corpus.grammatical_share(stream) == 1.0
    with pytest.raises(ValueError, match="not in the corpus's vocabulary: purple"):
        corpus.encode("the purple cat")


# ================================================================= grader.check

def loss_with_log_softmax(logits, tokens):
    logits, tokens = loss_inputs(logits, tokens)
    logp = torch.log_softmax(logits[..., :-1, :], dim=-1)
    return -logp.gather(-1, tokens[..., 1:, None]).mean()


def probs_by_sorting_once(logits, temperature=1.0, top_k=None, top_p=None):
    logits, temperature, top_k, top_p = probs_inputs(logits, temperature, top_k, top_p)
    if temperature == 0:
        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)
    scaled = logits / temperature
    if top_k is not None:
        kth = scaled.sort(dim=-1, descending=True).values[..., min(top_k, scaled.shape[-1]) - 1:][..., :1]
        scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    if top_p is not None:
        p = scaled.softmax(-1)
        sorted_p, index = p.sort(dim=-1, descending=True, stable=True)
        drop_sorted = sorted_p.cumsum(-1) - sorted_p >= top_p
        drop = drop_sorted.scatter(-1, index, drop_sorted)
        scaled = scaled.masked_fill(drop, float("-inf"))
    return scaled.softmax(-1)


def induction_by_diagonal(weights, period):
    weights, period = induction_inputs(weights, period)
    if isinstance(weights, torch.Tensor):
        return weights.diagonal(offset=-(period - 1), dim1=-2, dim2=-1)[..., 1:].mean(-1)
    return np.diagonal(weights, offset=-(period - 1), axis1=-2, axis2=-1)[..., 1:].mean(-1)


def generate_by_loop(model, prompt, n_new, temperature=1.0, top_k=None, top_p=None,
                     generator=None, use_cache=True):
    tokens, n_new = prompt_inputs(prompt, n_new)
    cache = [] if use_cache else None
    fed = tokens
    with torch.no_grad():
        for _ in range(n_new):
            logits = model(fed, cache=cache) if use_cache else model(tokens)
            p = ref.next_token_probs(logits[:, -1], temperature, top_k, top_p)
            new = torch.multinomial(p, 1, generator=generator)
            tokens = torch.cat([tokens, new], dim=1)
            fed = new
    return tokens if prompt.dim() == 2 else tokens.squeeze(0)


@pytest.mark.parametrize("name, fn", [
    ("next_token_loss", loss_with_log_softmax),
    ("next_token_probs", probs_by_sorting_once),
    ("induction_score", induction_by_diagonal),
    ("generate", generate_by_loop),
], ids=lambda x: x if isinstance(x, str) else x.__name__)
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_correct_alternatives_pass(name, fn, hidden, capsys):
    check(name, fn, hidden=hidden)
    assert "✓" in capsys.readouterr().out


def test_the_reference_passes_every_check():
    for name in EXERCISES:
        for hidden in (False, True):
            v = verdict(name, getattr(ref, name), hidden=hidden)
            assert v.passed, v.message


# ----------------------------------------------------------------- wrong answers

def loss_on_the_same_token(logits, tokens):
    logits, tokens = loss_inputs(logits, tokens)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens.reshape(-1))


REFERENCE = importlib.import_module("grader.lessons.09_tiny_gpt.reference")


def probs_nucleus_first(logits, temperature=1.0, top_k=None, top_p=None):
    return REFERENCE._next_token_probs(logits, temperature, top_k, top_p, order="p, then k")


def probs_nucleus_short(logits, temperature=1.0, top_k=None, top_p=None):
    logits, temperature, top_k, top_p = probs_inputs(logits, temperature, top_k, top_p)
    if temperature == 0:
        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)
    scaled = logits / temperature
    if top_k is not None and top_k < scaled.shape[-1]:
        kth = torch.topk(scaled, top_k).values[..., -1:]
        scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    if top_p is not None:
        p = scaled.softmax(-1)
        sorted_p, index = p.sort(dim=-1, descending=True, stable=True)
        drop_sorted = sorted_p.cumsum(-1) > top_p            # drops the token that reaches p
        drop_sorted[..., 0] = False
        scaled = scaled.masked_fill(drop_sorted.scatter(-1, index, drop_sorted), float("-inf"))
    return scaled.softmax(-1)


def probs_without_temperature_0(logits, temperature=1.0, top_k=None, top_p=None):
    """Temperature 0 taken as a very small temperature: ties share the probability."""
    return ref.next_token_probs(logits, max(temperature, 1e-3), top_k, top_p)


def induction_on_the_copy(weights, period):
    weights, period = induction_inputs(weights, period)
    if isinstance(weights, torch.Tensor):
        return weights.diagonal(offset=-period, dim1=-2, dim2=-1).mean(-1)
    return np.diagonal(weights, offset=-period, axis1=-2, axis2=-1).mean(-1)


def generate_feeding_everything(model, prompt, n_new, temperature=1.0, top_k=None, top_p=None,
                                generator=None, use_cache=True):
    tokens, n_new = prompt_inputs(prompt, n_new)
    cache = [] if use_cache else None
    with torch.no_grad():
        for _ in range(n_new):
            logits = model(tokens, cache=cache)
            p = ref.next_token_probs(logits[:, -1], temperature, top_k, top_p)
            tokens = torch.cat([tokens, torch.multinomial(p, 1, generator=generator)], dim=1)
    return tokens if prompt.dim() == 2 else tokens.squeeze(0)


def generate_with_argmax(model, prompt, n_new, temperature=1.0, top_k=None, top_p=None,
                         generator=None, use_cache=True):
    tokens, n_new = prompt_inputs(prompt, n_new)
    with torch.no_grad():
        for _ in range(n_new):
            p = ref.next_token_probs(model(tokens)[:, -1], temperature, top_k, top_p)
            tokens = torch.cat([tokens, p.argmax(-1, keepdim=True)], dim=1)
    return tokens if prompt.dim() == 2 else tokens.squeeze(0)


def loss_as_a_float(logits, tokens):
    return loss_with_log_softmax(logits, tokens).item()


def loss_summed(logits, tokens):
    logits, tokens = loss_inputs(logits, tokens)
    return F.cross_entropy(logits[..., :-1, :].reshape(-1, logits.shape[-1]),
                           tokens[..., 1:].reshape(-1), reduction="sum")


def probs_top_p_before_the_temperature(logits, temperature=1.0, top_k=None, top_p=None):
    logits, temperature, top_k, top_p = probs_inputs(logits, temperature, top_k, top_p)
    if temperature == 0:
        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)
    keep = torch.ones_like(logits, dtype=torch.bool)
    if top_k is not None and top_k < logits.shape[-1]:
        keep = logits >= torch.topk(logits, top_k).values[..., -1:]
    if top_p is not None:
        p = torch.softmax(logits.masked_fill(~keep, float("-inf")), dim=-1)   # untempered
        sorted_p, index = p.sort(dim=-1, descending=True, stable=True)
        inside = sorted_p.cumsum(-1) - sorted_p < top_p
        keep = keep & torch.zeros_like(keep).scatter(-1, index, inside)
    return torch.softmax((logits / temperature).masked_fill(~keep, float("-inf")), dim=-1)


def induction_as_numpy(weights, period):
    return np.asarray(induction_by_diagonal(weights, period))


@pytest.mark.parametrize("name, fn, words", [
    ("next_token_loss", loss_as_a_float, "not a torch tensor"),
    ("next_token_loss", loss_summed, "the sum over the predictions, not their mean"),
    ("next_token_probs", probs_top_p_before_the_temperature, "temperature 2, then top_p"),
    ("induction_score", induction_as_numpy, "torch tensor in gives a torch tensor back"),
    ("next_token_loss", loss_on_the_same_token, "against its own token, not the next one"),
    ("next_token_probs", probs_nucleus_first, "your nucleus is chosen before top-k"),
    ("next_token_probs", probs_nucleus_short, "leaves out the token that takes the total to top_p"),
    ("next_token_probs", probs_without_temperature_0, "temperature 0"),
    ("induction_score", induction_on_the_copy, "earlier copy"),
    ("generate", generate_feeding_everything, "with a cache you feed the whole sequence"),
    ("generate", generate_with_argmax, "your tokens are the likeliest ones, not draws"),
], ids=lambda x: x if isinstance(x, str) and " " not in x else getattr(x, "__name__", "words"))
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_a_learners_wrong_answer_gets_a_named_diagnosis(name, fn, words, hidden):
    message = failure(name, fn, hidden)
    assert words in message, message


# ----------------------------------------------------------------- GPT written by a learner

PARTS = '''
def causal_mask(T):
    T = positive_int(T, "T")
    return np.tril(np.ones((T, T), dtype=bool))


def split_heads(x, n_heads):
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError(f"x must be a tensor [B, T, d_model], got {getattr(x, 'shape', type(x))}")
    B, T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    return x.reshape(B, T, n_heads, d_model // n_heads).transpose(1, 2)


def merge_heads(x):
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d_head)


class KVCache:
    def __init__(self):
        self.k = self.v = None

    def __len__(self):
        return 0 if self.k is None else len(self.k)

    def append(self, k, v):
        k, v = key_value_rows(k, v)
        self.k = k.copy() if self.k is None else np.concatenate([self.k, k])
        self.v = v.copy() if self.v is None else np.concatenate([self.v, v])

    @property
    def keys(self):
        return self.k

    @property
    def values(self):
        return self.v


def rope(x, positions, base=10000.0):
    x, positions, base = rope_inputs(x, positions, base)
    d = x.shape[-1]
    angles = positions[:, None] * base ** (-2 * np.arange(d // 2) / d)
    out = np.empty_like(x)
    out[..., 0::2] = x[..., 0::2] * np.cos(angles) - x[..., 1::2] * np.sin(angles)
    out[..., 1::2] = x[..., 0::2] * np.sin(angles) + x[..., 1::2] * np.cos(angles)
    return out
'''

MODEL = '''
class GPT(nn.Module):
    def __init__(self, vocab_size, d_model, n_heads, n_layers, d_ff, max_len, rope=True):
        super().__init__()
        gpt_sizes(vocab_size, d_model, n_heads, n_layers, d_ff, max_len)
        self.vocab_size, self.max_len, self.n_heads = vocab_size, max_len, n_heads
        self.d_head, self.rope_on = d_model // n_heads, bool(rope)
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.blocks = nn.ModuleList([gpt_block(d_model, d_ff) for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)
        self.weights = []

    def forward(self, tokens, cache=None):
        start = len(cache[0]) if cache else 0
        tokens = gpt_tokens(tokens, self.vocab_size, self.max_len, start)
        B, T = tokens.shape
        if cache is not None and not cache:
            for _ in self.blocks:
                cache.append(KVCache())
        R = rope_matrices(rope, np.arange(start, start + T), self.d_head) if self.rope_on else None
        allowed = torch.from_numpy(causal_mask(start + T)[start:])
        x = self.tok_emb(tokens)
        self.weights = []
        for layer, block in enumerate(self.blocks):
            h = block["ln1"](x)
            q = split_heads(block["w_q"](h), self.n_heads)
            k = split_heads(block["w_k"](h), self.n_heads)
            v = split_heads(block["w_v"](h), self.n_heads)
            if R is not None:
                q = turn(q, R)
                k = turn(k, R)
            if cache is not None:
                cache[layer].append(to_rows(k), to_rows(v))
                k = from_rows(cache[layer].keys, B, self.n_heads, q)
                v = from_rows(cache[layer].values, B, self.n_heads, q)
            scores = q @ k.transpose(-2, -1) / self.d_head ** 0.5
            w = scores.masked_fill(~allowed, float("-inf")).softmax(dim=-1)
            self.weights.append(w.detach())
            x = x + block["w_o"](merge_heads(w @ v))
            if "mlp" in block:
                x = x + block["mlp"](block["ln2"](x))
        return self.head(self.ln_f(x))
'''


def learner(*sources: str) -> dict:
    """The learner's cells run in a module of their own, as a notebook's run in __main__: a
    class's helpers are found in its module."""
    module = types.ModuleType(f"learner_09_{next(_MODULES)}")
    sys.modules[module.__name__] = module
    ns = module.__dict__
    ns.update({"np": np, "torch": torch, "nn": torch.nn, "math": math, "F": F,
          "positive_int": positive_int, "key_value_rows": key_value_rows,
          "rope_inputs": rope_inputs, "gpt_sizes": gpt_sizes, "gpt_block": gpt_block,
          "gpt_tokens": gpt_tokens, "rope_matrices": rope_matrices, "turn": turn,
          "to_rows": to_rows, "from_rows": from_rows})
    for source in sources:
        exec(compile(source, "/learner/cell.py", "exec"), ns)  # the test's own code
    return ns


_MODULES = itertools.count()


def edited(source: str, old: str, new: str) -> str:
    assert old in source, old
    return source.replace(old, new)


@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_a_gpt_of_correct_parts_passes(hidden):
    ns = learner(PARTS, MODEL)
    v = verdict("GPT", ns["GPT"], hidden=hidden)
    assert v.passed, v.message


WRONG_PARTS = {
    "rope turned the wrong way": ("out[..., 0::2] = x[..., 0::2] * np.cos(angles) - x[..., 1::2] * np.sin(angles)",
                                  "out[..., 0::2] = x[..., 0::2] * np.cos(angles) + x[..., 1::2] * np.sin(angles)"),
    "causal mask off by one": ("np.tril(np.ones((T, T), dtype=bool))",
                               "np.tril(np.ones((T, T), dtype=bool), k=-1) | np.eye(T, k=1, dtype=bool) | np.eye(T, dtype=bool)"),
    "split_heads without the transpose": ("return x.reshape(B, T, n_heads, d_model // n_heads).transpose(1, 2)",
                                          "return x.reshape(B, n_heads, T, d_model // n_heads)"),
}


@pytest.mark.parametrize("mistake", WRONG_PARTS)
def test_the_gpt_passes_beside_a_part_that_fails_its_own_check(mistake):
    old, new = WRONG_PARTS[mistake]
    ns = learner(edited(PARTS, old, new), MODEL)
    v = verdict("GPT", ns["GPT"])
    assert v.passed, v.message
    assert "the reference's results stood in for" in " ".join(v.message.split()), v.message


def test_the_gpt_with_its_own_mistake_still_fails_beside_a_wrong_part():
    old, new = WRONG_PARTS["rope turned the wrong way"]
    ns = learner(edited(PARTS, old, new),
                 edited(MODEL, "/ self.d_head ** 0.5", ""))
    assert not verdict("GPT", ns["GPT"]).passed


def test_a_gpt_whose_cache_restarts_the_positions_is_told_so():
    ns = learner(PARTS, edited(MODEL, "start = len(cache[0]) if cache else 0\n        tokens",
                               "start = 0\n        tokens"))
    message = failure("GPT", ns["GPT"])
    assert "fed through a cache" in message
    assert "continue after the cached ones" in message, message


def test_a_gpt_whose_mask_forgets_the_cached_positions_fails_on_several_new_tokens():
    ns = learner(PARTS, edited(MODEL, "allowed = torch.from_numpy(causal_mask(start + T)[start:])",
                               "allowed = torch.from_numpy(causal_mask(T))"))
    message = failure("GPT", ns["GPT"])
    assert "tokens per call" in message, message


GPT_MISTAKES = {
    "no final LayerNorm": (("return self.head(self.ln_f(x))", "return self.head(x)"),),
    "mask applied after the softmax": ((
        'w = scores.masked_fill(~allowed, float("-inf")).softmax(dim=-1)',
        "w = scores.softmax(dim=-1) * allowed"),),
    "mask read the wrong way round": ((
        'w = scores.masked_fill(~allowed, float("-inf")).softmax(dim=-1)',
        'w = scores.masked_fill(allowed, float("-inf")).softmax(dim=-1)'),),
    "scaled by √d_model": (("/ self.d_head ** 0.5", "/ (self.d_head * self.n_heads) ** 0.5"),),
    "the MLP reads ln1": (('x = x + block["mlp"](block["ln2"](x))',
                           'x = x + block["mlp"](block["ln1"](x))'),),
}
GPT_WORDS = {
    "no final LayerNorm": "your head reads the stream directly",
    "mask applied after the softmax": "you masked after the softmax",
    "mask read the wrong way round": "your mask is read the wrong way round",
    "scaled by √d_model": "you divided the scores by √d_model",
    "the MLP reads ln1": "your MLP reads the stream through ln1",
}


@pytest.mark.parametrize("mistake", GPT_MISTAKES)
def test_a_gpt_with_a_learners_mistake_is_told_it(mistake):
    source = MODEL
    for old, new in GPT_MISTAKES[mistake]:
        source = edited(source, old, new)
    message = failure("GPT", learner(PARTS, source)["GPT"])
    assert GPT_WORDS[mistake] in message, message


def test_a_gpt_whose_kvcache_fails_names_the_kvcache():
    ns = learner(edited(PARTS, "self.k = k.copy() if self.k is None else np.concatenate([self.k, k])",
                        "self.k = k.copy()"), MODEL)
    message = failure("GPT", ns["GPT"])
    assert "KVCache" in message, message


def test_a_gpt_that_renames_a_layer_is_told_its_layers():
    ns = learner(PARTS, edited(edited(MODEL, "self.head = nn.Linear", "self.out = nn.Linear"),
                               "return self.head(", "return self.out("))
    message = failure("GPT", ns["GPT"])
    assert "does not have the layers the exercise asks for" in message, message


# ----------------------------------------------------------------- stated rules

def loss_without_the_given_line(logits, tokens):
    return F.cross_entropy(logits[..., :-1, :].reshape(-1, logits.shape[-1]),
                           tokens[..., 1:].reshape(-1).clamp(0, logits.shape[-1] - 1)) \
        if logits.shape[-2] > 1 else logits.sum() * 0


def probs_without_the_given_line(logits, temperature=1.0, top_k=None, top_p=None):
    """Right on every good input; a bad setting goes through."""
    if temperature == 0:
        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)
    scaled = logits / temperature
    keep = torch.ones_like(scaled, dtype=torch.bool)
    if top_k is not None and top_k < scaled.shape[-1]:
        keep = scaled >= torch.topk(scaled, max(top_k, 1), dim=-1).values[..., -1:]
    if top_p is not None:
        p = torch.softmax(scaled.masked_fill(~keep, float("-inf")), dim=-1)
        sorted_p, index = torch.sort(p, dim=-1, descending=True, stable=True)
        inside = torch.cumsum(sorted_p, dim=-1) - sorted_p < top_p
        inside[..., 0] = True
        keep = keep & torch.zeros_like(keep).scatter(-1, index, inside)
    return torch.softmax(scaled.masked_fill(~keep, float("-inf")), dim=-1)


BREAKS = {
    ("next_token_loss", "raises a `ValueError` for inputs that do not fit"):
        loss_without_the_given_line,
    ("next_token_probs", "A negative temperature, `top_k < 1` or `top_p` outside (0, 1] is a "
                         "`ValueError`"): probs_without_the_given_line,
    ("next_token_probs", "is greedy: all the probability on the largest logit (the first one, "
                         "if several tie)"): probs_without_temperature_0,
    ("GPT", "Keep the layers as they are, with their names"):
        learner(PARTS, edited(edited(MODEL, "self.head = nn.Linear", "self.out = nn.Linear"),
                              "return self.head(", "return self.out("))["GPT"],
    ("GPT", "Keep each layer's attention weights in `self.weights`"):
        learner(PARTS, edited(MODEL, "self.weights.append(w.detach())", "pass"))["GPT"],
    ("generate", "draws one token with `torch.multinomial(next_token_probs(...), 1, "
                 "generator=generator)`"): generate_with_argmax,
    ("generate", "generation with a cache returns exactly what the same call without a cache "
                 "returns"):
        generate_feeding_everything,
}


@pytest.mark.parametrize("key", BREAKS, ids=lambda key: f"{key[0]}: {key[1][:40]}")
def test_an_answer_that_breaks_a_stated_rule_fails_and_names_it(key):
    assert not broken(key, BREAKS[key])


def test_no_message_or_hint_holds_a_line_of_the_lessons_solutions():
    from grader.lessons import get

    nb = json.loads((ROOT / "solutions" / LESSON / f"{LESSON}.ipynb").read_text())
    lines = set()
    for cell in nb["cells"]:
        text = "".join(cell["source"])
        if "### BEGIN SOLUTION" in text:
            body = text.split("### BEGIN SOLUTION")[1].split("### END SOLUTION")[0]
            lines |= {l.strip() for l in body.splitlines() if len(l.strip()) > 25}
    for name in EXERCISES:
        ex = get(name)
        for words in [ex.hint] + [m.message for m in ex.misconceptions]:
            for line in lines:
                assert line not in words, (name, line)


# ================================================================= the experiments' claims

def induction_run(rope: bool, n_layers: int, steps: int) -> tuple[float, float]:
    """The notebook's induction experiment, on a smaller budget: the best induction score
    of any head on the probe, and the mean loss of the last 20 steps."""
    task = RepeatTask()
    probe = task.probe(period=12)
    with torch.random.fork_rng(devices=[]), one_thread():   # tiny tensors: one thread is fastest
        torch.manual_seed(0)
        net = ref.GPT(task.vocab_size, 32, 2, n_layers, 0, task.length, rope=rope)
        losses = train_lm(net, task.sample, steps, ref.next_token_loss, lr=1e-2)
    with torch.no_grad():
        net(probe)
    best = max(float(ref.induction_score(w, 12).mean(0).max()) for w in net.weights)
    return best, float(np.mean(losses[-20:]))


def test_an_induction_head_forms_with_rope_and_two_layers_and_not_without():
    two, two_loss = induction_run(True, 2, 400)
    flat, flat_loss = induction_run(False, 2, 400)
    one, one_loss = induction_run(True, 1, 400)
    assert two > 0.6 and flat < 0.4 and one < 0.4, (two, flat, one)
    assert two_loss + 0.15 < min(flat_loss, one_loss), (two_loss, flat_loss, one_loss)


def test_the_repeat_task_repeats_its_beginning_with_a_period_that_changes():
    task = RepeatTask(batch_size=200)
    tokens = task.sample(torch.Generator().manual_seed(0))
    periods = set()
    for row in tokens:
        found = [p for p in range(task.shortest, task.longest + 1)
                 if torch.equal(row[p:2 * p], row[:p])]
        assert found
        periods.add(found[0])
    assert periods == set(range(task.shortest, task.longest + 1))
    assert task.floor() == pytest.approx(np.mean([(23 - (p - 1)) / 23 for p in range(4, 13)])
                                         * math.log(16))


def test_training_on_the_corpus_makes_sentences_of_the_language():
    corpus = Corpus()
    text = corpus.stream(20_000, seed=0)
    with torch.random.fork_rng(devices=[]), one_thread():
        torch.manual_seed(0)
        model = ref.GPT(corpus.vocab_size, 48, 4, 2, 96, 64)
        untrained = ref.generate(model, corpus.encode("the"), 40,
                                 generator=torch.Generator().manual_seed(0))
        train_lm(model, lambda g: windows(text, 64, 16, g), 150, ref.next_token_loss)
        trained = ref.generate(model, corpus.encode("the"), 62,
                               generator=torch.Generator().manual_seed(0))
    assert corpus.grammatical_share(untrained) < 0.3 < 0.8 < corpus.grammatical_share(trained)


# ================================================================= the notebook

def solution_namespace() -> dict:
    nb = json.loads((ROOT / "solutions" / LESSON / f"{LESSON}.ipynb").read_text())
    ns: dict = {}
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        meta = cell["metadata"].get("nbgrader", {})
        if meta.get("solution") or cell["id"] == nb["cells"][1]["id"]:
            text = "\n".join(line for line in "".join(cell["source"]).splitlines()
                             if not line.startswith("%"))
            if meta.get("solution") or "import" in text:
                exec(compile(text.replace("BUDGET = budget()", "BUDGET = None")
                             .split("print(f\"Budget")[0], f"/learner/{cell['id']}.py", "exec"), ns)
    return ns


@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_the_notebooks_solutions_pass_their_checks(hidden):
    ns = solution_namespace()
    for name in EXERCISES:
        v = verdict(name, ns[name], hidden=hidden)
        assert v.passed, v.message


def test_the_notebook_checks_each_exercise_visibly_and_hidden_and_each_part_again():
    nb = json.loads((ROOT / "solutions" / LESSON / f"{LESSON}.ipynb").read_text())
    graded = ["".join(c["source"]) for c in nb["cells"]
              if c["metadata"].get("nbgrader", {}).get("grade") and c["cell_type"] == "code"]
    for name in EXERCISES:
        assert f'check("{name}", {name})' in graded
        assert any(f'check("{name}", {name}, hidden=True)' in s for s in graded)
    for part in ("causal_mask", "split_heads", "merge_heads", "KVCache", "rope"):
        cell = next(c for c in nb["cells"]
                    if c["metadata"].get("nbgrader", {}).get("grade_id") == f"test_part_{part}")
        assert "".join(cell["source"]) == f'check("{part}", {part})'
        assert cell["metadata"]["nbgrader"]["points"] == 0   # its points are in its own lesson
