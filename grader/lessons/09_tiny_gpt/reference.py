"""Lesson 09: a GPT from the learner's own parts. The next-token loss, the sampling
distribution (temperature, top-k, top-p), the model, generation with and without a KV
cache, and the induction score.

The model reaches five parts of earlier lessons, each a graded function or class of its own
(so that a wrong part is judged with its sealed stand-in when the model is checked):
lesson 04's ``causal_mask``, lesson 05's ``split_heads`` and ``merge_heads``, lesson 07's
``KVCache`` and lesson 08's ``rope``. The NumPy parts meet torch through the bridges of
``courseware.gpt`` (``rope_matrices`` and ``turn``; ``to_rows`` and ``from_rows``).

As in the other lessons, each graded function calls a private core with keyword knobs,
and a catalogued mistake (``exercises.py``) is a core with one knob set wrong.
"""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.gpt import (from_rows, gpt_block, gpt_sizes, gpt_tokens, induction_inputs,
                            loss_inputs, probs_inputs, prompt_inputs, rope_matrices, to_rows,
                            turn)

__all__ = [
    "next_token_loss",
    "next_token_probs",
    "GPT",
    "generate",
    "induction_score",
]

PART_NAMES = ("causal_mask", "split_heads", "merge_heads", "KVCache", "rope")


def reference_parts() -> SimpleNamespace:
    """The earlier lessons' references of the parts the model reaches."""
    from ... import reference

    return SimpleNamespace(**{name: getattr(reference, name) for name in PART_NAMES})


# ----------------------------------------------------------------------------- next_token_loss

def _next_token_loss(logits, tokens, *, shift=1, reduce="mean"):
    """The loss with its knobs: ``shift``, how far ahead the target is (0: the token
    itself); ``reduce``: ``"mean"`` over every predicted position or ``"sum"``."""
    logits, tokens = loss_inputs(logits, tokens)
    V, T = logits.shape[-1], tokens.shape[-1]
    # site: the predictions that have a next token
    predictions = logits[..., :T - shift, :] if shift else logits
    # site: the next tokens
    targets = tokens[..., shift:]
    return F.cross_entropy(predictions.reshape(-1, V), targets.reshape(-1), reduction=reduce)


def next_token_loss(logits, tokens):
    """The mean cross-entropy of the prediction at position t against the token at t + 1,
    over every position that has a next token: ``logits [..., T, V]``, ``tokens [..., T]``.
    A scalar tensor that gradients flow through."""
    return _next_token_loss(logits, tokens)


# ----------------------------------------------------------------------------- next_token_probs

def _next_token_probs(logits, temperature=1.0, top_k=None, top_p=None, *, order="k, then p",
                      nucleus="reaches p", greedy="first"):
    """The distribution with its knobs. ``order``: top-k then top-p (``"k, then p"``) or
    the other way; ``nucleus``: the nucleus ends at the token whose cumulative probability
    ``"reaches p"``, or just before it (``"below p"``); ``greedy``: which of tied largest
    logits temperature 0 picks, ``"first"``."""
    logits, temperature, top_k, top_p = probs_inputs(logits, temperature, top_k, top_p)
    V = logits.shape[-1]
    if temperature == 0:
        best = logits.argmax(dim=-1, keepdim=True)
        return torch.zeros_like(logits).scatter(-1, best, 1.0)
    # site: the tempered logits
    scaled = logits / temperature
    keep = torch.ones_like(scaled, dtype=torch.bool)

    def by_k(keep):
        if top_k is None or top_k >= V:
            return keep
        # site: the k-th largest logit
        kth = torch.topk(scaled, top_k, dim=-1).values[..., -1:]
        return keep & (scaled >= kth)

    def by_p(keep):
        if top_p is None:
            return keep
        probs = torch.softmax(scaled.masked_fill(~keep, float("-inf")), dim=-1)
        sorted_probs, order_ = torch.sort(probs, dim=-1, descending=True, stable=True)
        # site: the probability of the more likely tokens
        before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
        inside = before < top_p if nucleus == "reaches p" else before + sorted_probs <= top_p
        inside[..., 0] = True
        return keep & torch.zeros_like(keep).scatter(-1, order_, inside)

    keep = by_p(by_k(keep)) if order == "k, then p" else by_k(by_p(keep))
    # site: the softmax over the kept tokens
    return torch.softmax(scaled.masked_fill(~keep, float("-inf")), dim=-1)


def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
    """The distribution of the next token, ``[..., V]``: divide by the temperature, keep the
    tokens whose logit is at least the k-th largest (``top_k``), keep the smallest set of
    most likely tokens whose probability reaches ``top_p`` (the most likely always stays),
    softmax over what is kept. ``temperature = 0`` is greedy (all on the first largest)."""
    return _next_token_probs(logits, temperature, top_k, top_p)


# ----------------------------------------------------------------------------- GPT

class _GPT(nn.Module):
    """The model, with knobs (right by default): ``parts``, the earlier lessons' parts it
    calls (the references; a namespace of ``PART_NAMES``); ``scale``, what the scores are
    divided by (``"√d_head"``, ``"√d_model"`` or ``None``); ``final_norm`` (``ln_f`` before
    the head); ``cache_positions`` (``"continue"``: new tokens with a cache sit after the
    cached ones; ``"restart"``: at 0); ``mask_at`` (``"before softmax"``: masked scores
    become -inf; ``"after softmax"``: masked weights are set to 0 after a softmax over every
    key); ``mask_keeps`` (``"allowed"``: True in the causal mask is a key that may be seen;
    ``"blocked"``: the mask read the other way round); ``mlp_norm`` (``"ln2"`` or
    ``"ln1"``)."""

    parts: SimpleNamespace | None = None

    def __init__(self, vocab_size, d_model, n_heads, n_layers, d_ff, max_len, rope=True, *,
                 scale="√d_head", final_norm=True, cache_positions="continue",
                 mask_at="before softmax", mask_keeps="allowed", mlp_norm="ln2"):
        super().__init__()
        gpt_sizes(vocab_size, d_model, n_heads, n_layers, d_ff, max_len)
        self.vocab_size, self.max_len, self.n_heads = vocab_size, max_len, n_heads
        self.d_head, self.rope_on = d_model // n_heads, bool(rope)
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.blocks = nn.ModuleList([gpt_block(d_model, d_ff) for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)
        self.weights = []
        self.scale, self.final_norm, self.cache_positions = scale, final_norm, cache_positions
        self.mask_at, self.mask_keeps, self.mlp_norm = mask_at, mask_keeps, mlp_norm

    def forward(self, tokens, cache=None):
        parts = self.parts or reference_parts()
        start = 0 if not cache else len(cache[0])
        if self.cache_positions == "restart":
            start = 0
        tokens = gpt_tokens(tokens, self.vocab_size, self.max_len, start)
        B, T = tokens.shape
        if cache is not None and len(cache) == 0:
            cache.extend(parts.KVCache() for _ in self.blocks)
        positions = np.arange(start, start + T)
        R = rope_matrices(parts.rope, positions, self.d_head) if self.rope_on else None
        mask = torch.from_numpy(np.asarray(parts.causal_mask(start + T))[start:])
        if self.mask_keeps == "blocked":
            mask = ~mask
        x = self.tok_emb(tokens)
        self.weights = []
        for i, block in enumerate(self.blocks):
            # site: the normalised copy of the stream
            h = block["ln1"](x)
            q, k, v = (parts.split_heads(block[n](h), self.n_heads) for n in ("w_q", "w_k", "w_v"))
            if R is not None:
                # site: the turned queries and keys
                q, k = turn(q, R), turn(k, R)
            if cache is not None:
                cache[i].append(to_rows(k), to_rows(v))
                k = from_rows(cache[i].keys, B, self.n_heads, q)
                v = from_rows(cache[i].values, B, self.n_heads, q)
            scores = q @ k.transpose(-1, -2)
            if self.scale:
                # site: the scale of the scores
                scores = scores / math.sqrt(self.d_head if self.scale == "√d_head"
                                            else self.d_head * self.n_heads)
            if self.mask_at == "after softmax":
                weights = torch.softmax(scores, dim=-1).masked_fill(~mask, 0.0)
            else:
                # site: the masked softmax
                weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
            self.weights.append(weights.detach())
            # site: the attention's skip
            x = x + block["w_o"](parts.merge_heads(weights @ v))
            if "mlp" in block:
                # site: the MLP's skip
                x = x + block["mlp"](block[self.mlp_norm](x))
        # site: the logits
        return self.head(self.ln_f(x) if self.final_norm else x)


class GPT(_GPT):
    """Token embeddings, ``n_layers`` causal pre-norm blocks whose attention turns queries
    and keys with RoPE (no position table; ``rope=False``: no positions at all), a final
    LayerNorm and an output head: ``tokens [B, T]`` to logits ``[B, T, vocab_size]``.

    ``forward(tokens, cache=None)``: with a cache (a list, empty at first, that forward fills
    with one ``KVCache`` per block), the tokens sit after the cached positions, and their
    keys and values join the cache. Each layer's attention weights are kept in
    ``self.weights``."""

    def __init__(self, vocab_size, d_model, n_heads, n_layers, d_ff, max_len, rope=True):
        super().__init__(vocab_size, d_model, n_heads, n_layers, d_ff, max_len, rope)


# ----------------------------------------------------------------------------- generate

def _generate(model, prompt, n_new, temperature=1.0, top_k=None, top_p=None, generator=None,
              use_cache=True, *, probs=next_token_probs, feed="new token", draw="sample"):
    """Generation with its knobs: ``probs``, the distribution (the learner's own
    ``next_token_probs`` is a helper); ``feed``: with a cache, ``"new token"`` or
    ``"everything"`` (the whole sequence again at every step); ``draw``: ``"sample"``
    (``torch.multinomial``) or ``"argmax"`` (the likeliest token, no draw)."""
    tokens, n_new = prompt_inputs(prompt, n_new)
    cache = [] if use_cache else None
    with torch.no_grad():
        logits = model(tokens, cache=cache) if use_cache else model(tokens)
        for step in range(n_new):
            p = probs(logits[:, -1], temperature, top_k, top_p)
            # site: the drawn token
            if draw == "argmax":
                new = p.argmax(dim=-1, keepdim=True)
            else:
                new = torch.multinomial(p, 1, generator=generator)
            tokens = torch.cat([tokens, new], dim=1)
            if step == n_new - 1:
                break
            if use_cache:
                logits = model(new if feed == "new token" else tokens, cache=cache)
            else:
                logits = model(tokens)
    return tokens if prompt.dim() == 2 else tokens[0]


def generate(model, prompt, n_new, temperature=1.0, top_k=None, top_p=None, generator=None,
             use_cache=True):
    """The prompt ([T0] or [B, T0]) followed by ``n_new`` tokens, each drawn with
    ``torch.multinomial(next_token_probs(...), 1, generator=generator)`` from the logits of
    the last position. With a cache the model is fed one new token per step, and the result
    is exactly what the same call without a cache returns."""
    return _generate(model, prompt, n_new, temperature, top_k, top_p, generator, use_cache)


# ----------------------------------------------------------------------------- induction_score

def _induction_score(weights, period, *, offset=1):
    """The score with its knob: ``offset``, which key after the earlier copy is read (1:
    the token after it; 0: the earlier copy itself)."""
    weights, period = induction_inputs(weights, period)
    T = weights.shape[-1]
    queries = np.arange(period, T)
    # site: the key after the earlier copy
    keys = queries - period + offset
    picked = weights[..., queries, keys]
    # site: the mean over the queries
    return picked.mean(-1)


def induction_score(weights, period):
    """The mean, over the queries t from ``period`` to T - 1, of the weight on key
    t - period + 1 (the token after the earlier copy of token t): one score per leading
    index, ``weights.shape[:-2]``; NumPy in, NumPy out, torch in, torch out."""
    return _induction_score(weights, period)
