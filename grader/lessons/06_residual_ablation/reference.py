"""Lesson 06 references: a pre-norm transformer block with and without its skips, a tiny
transformer, token similarity (rank collapse), a training loop and the depth sweep.

The attention sublayer is ``torch.nn.MultiheadAttention(batch_first=True)``; lesson 05 builds
multi-head attention by hand, and this lesson is about what goes around it. Inputs are
checked by the helpers in ``courseware.ablation``, the same ones the notebook's given lines
call, so the reference and the exercises raise the same ``ValueError`` messages.

Besides the graded API, ``SkipVariantBlock`` and ``with_skip`` answer the "why Q?"
question of the lesson: the attention sublayer's skip can carry the token's own stream (the
standard block), the token's value vector, or nothing.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    LAST,
    LEARNING_RATE,
    MODEL,
    SKIPS,
    TASK,
    as_hidden,
    as_stream,
    as_tokens,
    check_block_sizes,
    check_depths,
    check_model_sizes,
    check_steps_and_seed,
    layer_outputs,
    load_weights,
    progress,
)

__all__ = [
    "Block",
    "TinyTransformer",
    "token_similarity",
    "train",
    "run_ablation",
    "SkipVariantBlock",
    "with_skip",
]


class Block(nn.Module):
    """Pre-norm transformer block: ``x = x + attn(ln1(x))``, then ``x = x + mlp(ln2(x))``.

    With ``residual=False`` both skips go: ``x = attn(ln1(x))``, then ``x = mlp(ln2(x))``.
    Self-attention without a mask: every token attends to every token.
    """

    def __init__(self, d_model, n_heads, d_ff, residual=True):
        super().__init__()
        check_block_sizes(d_model, n_heads, d_ff)
        self.d_model, self.residual = d_model, bool(residual)
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def attend(self, h):
        return self.attn(h, h, h, need_weights=False)[0]

    def forward(self, x):
        x = as_stream(x, self.d_model)
        h = self.ln1(x)
        x = x + self.attend(h) if self.residual else self.attend(h)
        h = self.ln2(x)
        return x + self.mlp(h) if self.residual else self.mlp(h)


class TinyTransformer(nn.Module):
    """Token and position embeddings, ``n_layers`` Blocks, a final LayerNorm and a linear
    head: ``tokens [batch, T]`` (T <= seq_len) to ``logits [batch, T, vocab_size]``."""

    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual=True):
        super().__init__()
        check_model_sizes(vocab_size, d_model, n_heads, d_ff, n_layers, seq_len)
        self.vocab_size, self.seq_len, self.residual = vocab_size, seq_len, bool(residual)
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(seq_len, d_model)
        self.blocks = nn.ModuleList(
            [Block(d_model, n_heads, d_ff, residual=residual) for _ in range(n_layers)]
        )
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens):
        tokens = as_tokens(tokens, self.vocab_size, self.seq_len)
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.tok_emb(tokens) + self.pos_emb(positions)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


def token_similarity(h) -> float:
    """Mean cosine similarity over all pairs of distinct tokens of each sequence, averaged
    over the batch. ``h: [..., T, d]`` with T >= 2. Near 1: every token points the same way
    (rank collapse). Norms are clamped at 1e-8, as in ``F.cosine_similarity``."""
    h = as_hidden(h)
    unit = h / h.norm(dim=-1, keepdim=True).clamp_min(1e-8)
    cos = unit @ unit.transpose(-1, -2)                       # [..., T, T]
    T = h.shape[-2]
    off_diagonal = cos.sum(dim=(-1, -2)) - cos.diagonal(dim1=-2, dim2=-1).sum(dim=-1)
    return float((off_diagonal / (T * (T - 1))).mean())


def train(model, task, steps, seed) -> list[float]:
    """Train ``model`` in place on ``task`` for ``steps`` Adam steps; the loss of each step.

    Every batch is ``task.sample(generator)`` from one ``torch.Generator`` seeded with
    ``seed``. The loss is the cross-entropy over every position, and each entry of the
    result is the loss of a step before its update, as a Python float.
    """
    steps, seed = check_steps_and_seed(steps, seed)
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    model.train()
    losses = []
    for _ in progress(range(steps), "training", leave=False):
        tokens, targets = task.sample(generator)
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def _similarities(model, tokens) -> list[float]:
    return [token_similarity(h) for h in layer_outputs(model, tokens)]


def run_ablation(depths, steps, seed) -> list[dict]:
    """The depth sweep: for each depth, a TinyTransformer with residuals and one without.

    Both models of a depth start from ``torch.manual_seed(seed)``, so they have the same
    initial weights and differ only in their skips. Each row holds ``depth``, ``residual``,
    ``losses`` (from ``train``), ``final_loss`` (the mean of the last 10 losses), and
    ``similarity_init`` / ``similarity_trained``: ``token_similarity`` of the stream after
    each layer (embeddings first) on the probe batch ``task.sample(Generator(seed))``.
    """
    depths = check_depths(depths)
    steps, seed = check_steps_and_seed(steps, seed)
    probe, _ = TASK.sample(torch.Generator().manual_seed(seed))
    rows = []
    for depth in progress(depths, "depths"):
        for residual in (True, False):
            torch.manual_seed(seed)
            model = TinyTransformer(**MODEL, n_layers=depth, residual=residual)
            similarity_init = _similarities(model, probe)
            losses = train(model, TASK, steps, seed)
            rows.append({
                "depth": depth,
                "residual": residual,
                "losses": losses,
                "final_loss": float(np.mean(losses[-LAST:])),
                "similarity_init": similarity_init,
                "similarity_trained": _similarities(model, probe),
            })
    return rows


class SkipVariantBlock(Block):
    """A Block whose attention skip carries ``skip``:

    * ``"stream"``: the token's own stream, ``x + attn(ln1(x))`` (the standard Block);
    * ``"value"``: the token's value vector, ``ln1(x) W_v + b_v + attn(ln1(x))``, with the
      value projection of the attention layer itself;
    * ``"none"``: the attention output alone.

    The MLP sublayer keeps its standard skip, so only the attention's skip differs. The
    parameters are those of a Block, so every variant can start from the same weights.
    """

    def __init__(self, d_model, n_heads, d_ff, skip="stream"):
        super().__init__(d_model, n_heads, d_ff, residual=True)
        if skip not in SKIPS:
            raise ValueError(f"skip must be one of {sorted(SKIPS)}, got {skip!r}")
        self.skip = skip

    def values(self, h):
        d = self.d_model
        return F.linear(h, self.attn.in_proj_weight[2 * d:], self.attn.in_proj_bias[2 * d:])

    def forward(self, x):
        x = as_stream(x, self.d_model)
        h = self.ln1(x)
        if self.skip == "stream":
            x = x + self.attend(h)
        elif self.skip == "value":
            x = self.values(h) + self.attend(h)
        else:
            x = self.attend(h)
        return x + self.mlp(self.ln2(x))


def with_skip(model, skip):
    """``model`` with each of its ``blocks`` replaced by a ``SkipVariantBlock`` that holds
    the same weights."""
    for i, block in enumerate(model.blocks):
        d_model = block.ln1.normalized_shape[0]
        variant = SkipVariantBlock(d_model, block.attn.num_heads, block.mlp[0].out_features, skip)
        variant.to(next(block.parameters()).dtype)
        model.blocks[i] = load_weights(variant, block.state_dict())
    return model
