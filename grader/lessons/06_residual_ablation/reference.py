"""Lesson 06 references: a pre-norm transformer block with and without its skips, a tiny
transformer, token similarity (rank collapse), a training loop and the depth sweep.

The attention sublayer is ``torch.nn.MultiheadAttention(batch_first=True)``; lesson 05 builds
multi-head attention by hand, and this lesson is about what goes around it. Inputs are
checked by the helpers in ``courseware.ablation``, the same ones the notebook's given lines
call, so the reference and the exercises raise the same ``ValueError`` messages.

Each graded piece is a private core with keyword knobs, and the public reference is the
core with every knob set right; a catalogued mistake (``exercises.py``) is the core with
one knob turned.

``SkipVariantBlock`` is not graded: the tests use it as the oracle of
``courseware.ablation.with_attention_skip`` (what the attention skip carries: the token's
own stream, its value vector, or nothing).
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
    progress,
)

__all__ = [
    "Block",
    "TinyTransformer",
    "token_similarity",
    "train",
    "run_ablation",
    "SkipVariantBlock",
]

BLOCK_INPUT, UPDATED = "the block's input", "the updated stream"


# ----------------------------------------------------------------------------- Block

class _Block(nn.Module):
    """The block, with knobs (right by default):

    * ``norm_at``: where each sublayer's LayerNorm sits: ``"branch"`` (pre-norm: only the
      sublayer reads the normalised stream), ``"stream"`` (the stream itself is normalised,
      so the skip carries ln(x)) or ``"after"`` (post-norm: ``ln(x + sublayer(x))``);
    * ``keys_values``: what attention takes its keys and values from: ``"normalised"``
      (the same ln1(x) as its queries) or ``"raw"`` (x itself);
    * ``mlp_norm``: the LayerNorm in front of the MLP, ``"ln2"`` or ``"ln1"``;
    * ``mlp_reads`` and ``mlp_skip_from``: what the MLP sublayer reads and what its skip
      carries, ``UPDATED`` (the stream after attention) or ``BLOCK_INPUT``;
    * ``residual_keeps``: the skips that ``residual=True`` keeps;
    * ``residual_removes``: the skips that ``residual=False`` removes;
    * ``attention_output``: what the attention sublayer hands on, ``"output"`` (the first
      item of ``nn.MultiheadAttention``'s pair) or ``"pair"`` (the pair itself);
    * ``causal``: whether attention masks the future keys.
    """

    def __init__(self, d_model, n_heads, d_ff, residual=True, *, norm_at="branch",
                 keys_values="normalised", mlp_norm="ln2", mlp_reads=UPDATED,
                 mlp_skip_from=UPDATED, residual_keeps=("attention", "mlp"),
                 residual_removes=("attention", "mlp"), attention_output="output", causal=False):
        super().__init__()
        check_block_sizes(d_model, n_heads, d_ff)
        self.d_model, self.residual = d_model, bool(residual)
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))
        self.norm_at, self.keys_values, self.mlp_norm = norm_at, keys_values, mlp_norm
        self.mlp_reads, self.mlp_skip_from = mlp_reads, mlp_skip_from
        self.residual_keeps, self.residual_removes = tuple(residual_keeps), tuple(residual_removes)
        self.attention_output, self.causal = attention_output, causal

    def forward(self, x):
        x = as_stream(x, self.d_model)
        attention_skip, mlp_skip = (self._skip(name) for name in ("attention", "mlp"))
        y = self._sublayer(x, x, self.ln1, lambda h: self._attend(h, x), attention_skip)
        reads = x if self.mlp_reads == BLOCK_INPUT else y
        skip = x if self.mlp_skip_from == BLOCK_INPUT else y
        norm = self.ln1 if self.mlp_norm == "ln1" else self.ln2
        return self._sublayer(reads, skip, norm, self.mlp, mlp_skip)

    def _skip(self, name: str) -> bool:
        """Whether the sublayer ``name`` adds its output to the stream."""
        if self.residual:
            return name in self.residual_keeps
        return name not in self.residual_removes

    def _sublayer(self, x, skip, norm, layer, keep_skip):
        """``skip + layer(norm(x))``, or ``layer(norm(x))`` without the skip."""
        if self.norm_at == "after":
            out = layer(x)
            return norm(skip + out) if keep_skip else norm(out)
        # site: the normalised copy of the stream
        h = norm(x)
        if self.norm_at == "stream":
            skip = h
        # site: the sublayer's output
        out = layer(h)
        # site: the skip
        return skip + out if keep_skip else out

    def _attend(self, h, x):
        kv = x if self.keys_values == "raw" else h
        mask = None
        if self.causal:
            T = h.shape[1]
            mask = torch.triu(torch.ones(T, T, dtype=torch.bool, device=h.device), diagonal=1)
        # site: the attention
        pair = self.attn(h, kv, kv, attn_mask=mask, need_weights=False)
        return pair if self.attention_output == "pair" else pair[0]


class Block(_Block):
    """Pre-norm transformer block: ``x = x + attn(ln1(x))``, then ``x = x + mlp(ln2(x))``.

    With ``residual=False`` both skips go: ``x = attn(ln1(x))``, then ``x = mlp(ln2(x))``.
    Self-attention without a mask: every token attends to every token.
    """

    def __init__(self, d_model, n_heads, d_ff, residual=True):
        super().__init__(d_model, n_heads, d_ff, residual)


# ----------------------------------------------------------------------------- TinyTransformer

class _TinyTransformer(nn.Module):
    """The model, with knobs (right by default): ``blocks_get_residual`` (the flag is
    passed on to every Block), ``one_block_shared`` (one Block object in every layer),
    ``positions`` (the position embedding is added), ``final_norm`` (``ln_f`` before
    the head) and ``blocks_in`` (``"ModuleList"``, or ``"list"``: a plain Python list,
    which registers none of the blocks' parameters)."""

    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual=True, *,
                 blocks_get_residual=True, one_block_shared=False, positions=True,
                 final_norm=True, blocks_in="ModuleList"):
        super().__init__()
        check_model_sizes(vocab_size, d_model, n_heads, d_ff, n_layers, seq_len)
        self.vocab_size, self.seq_len, self.residual = vocab_size, seq_len, bool(residual)
        self.positions, self.final_norm = positions, final_norm
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(seq_len, d_model)
        flag = {"residual": residual} if blocks_get_residual else {}
        if one_block_shared:
            blocks = [Block(d_model, n_heads, d_ff, **flag)] * n_layers
        else:
            # site: the list of blocks
            blocks = [Block(d_model, n_heads, d_ff, **flag) for _ in range(n_layers)]
        self.blocks = blocks if blocks_in == "list" else nn.ModuleList(blocks)
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens):
        tokens = as_tokens(tokens, self.vocab_size, self.seq_len)
        # site: the token embeddings
        x = self.tok_emb(tokens)
        if self.positions:
            # site: the sum of the token and position embeddings
            x = x + self.pos_emb(torch.arange(tokens.shape[1], device=tokens.device))
        # site: the loop over the blocks
        for block in self.blocks:
            x = block(x)
        # site: the logits
        return self.head(self.ln_f(x) if self.final_norm else x)


class TinyTransformer(_TinyTransformer):
    """Token and position embeddings, ``n_layers`` Blocks, a final LayerNorm and a linear
    head: ``tokens [batch, T]`` (T <= seq_len) to ``logits [batch, T, vocab_size]``."""

    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual=True):
        super().__init__(vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual)


# ----------------------------------------------------------------------------- token_similarity

def _token_similarity(h, *, normalise_dim=-1, cosine=True, self_pairs=False,
                      pool_batch=False, batch_mean=True):
    """The similarity, with knobs (right by default): the axis the vectors are normalised
    along, whether they are normalised at all (``cosine``), whether each token's pair with
    itself counts, whether the tokens of all sequences are pooled into one set, and
    whether the per-sequence values are averaged into one float."""
    h = as_hidden(h)
    if pool_batch:
        h = h.reshape(-1, h.shape[-1])
    # site: the unit vectors
    unit = h / h.norm(dim=normalise_dim, keepdim=True).clamp_min(1e-8) if cosine else h
    # site: the cosines of all pairs
    cos = unit @ unit.transpose(-1, -2)                       # [..., T, T]
    T = h.shape[-2]
    if self_pairs:
        per_sequence = cos.mean(dim=(-1, -2))
    else:
        # site: the sum over distinct pairs
        off_diagonal = cos.sum(dim=(-1, -2)) - cos.diagonal(dim1=-2, dim2=-1).sum(dim=-1)
        # site: the average over distinct pairs
        per_sequence = off_diagonal / (T * (T - 1))
    # site: the average over the batch
    return float(per_sequence.mean()) if batch_mean else per_sequence


def token_similarity(h) -> float:
    """Mean cosine similarity over all pairs of distinct tokens of each sequence, averaged
    over the batch, as a Python float. ``h: [..., T, d]`` with T >= 2. Near 1: every token
    points the same way (rank collapse). Norms are clamped at 1e-8, as in
    ``F.cosine_similarity``."""
    return _token_similarity(h)


# ----------------------------------------------------------------------------- train

def _train(model, task, steps, seed, *, zero_grad="before backward", loss_over="every position",
           generator_made="once"):
    """The training loop, with knobs (right by default): when the gradients are cleared
    (``"before backward"``, ``"before step"`` or ``"never"``), which positions the loss
    covers (``"every position"`` or ``"last position"``), and whether the batches come from
    one generator (``"once"``) or a new one seeded alike at every step (``"each step"``)."""
    steps, seed = check_steps_and_seed(steps, seed)
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    model.train()
    losses = []
    # site: the recording of each step's loss
    for _ in progress(range(steps), "training", leave=False):
        if generator_made == "each step":
            generator = torch.Generator().manual_seed(seed)
        # site: the batch
        tokens, targets = task.sample(generator)
        logits = model(tokens)
        if loss_over == "last position":
            loss = F.cross_entropy(logits[:, -1], targets[:, -1])
        else:
            # site: the loss over every position
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        if zero_grad == "before backward":
            optimizer.zero_grad()
        loss.backward()
        if zero_grad == "before step":
            optimizer.zero_grad()
        optimizer.step()
        losses.append(loss.item())
    return losses


def train(model, task, steps, seed) -> list[float]:
    """Train ``model`` in place on ``task`` for ``steps`` Adam steps; the loss of each step.

    Every batch is ``task.sample(generator)`` from one ``torch.Generator`` seeded with
    ``seed``. The loss is the cross-entropy over every position, and each entry of the
    result is the loss of a step before its update, as a Python float.
    """
    return _train(model, task, steps, seed)


# ----------------------------------------------------------------------------- run_ablation

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
        # site: the recording of each run's row
        for residual in (True, False):
            torch.manual_seed(seed)
            # site: the model of a run
            model = TinyTransformer(**MODEL, n_layers=depth, residual=residual)
            similarity_init = _similarities(model, probe)
            # site: the training of a run
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


# ----------------------------------------------------------------------------- the why-Q oracle

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
        attended = self.attn(h, h, h, need_weights=False)[0]
        if self.skip == "stream":
            x = x + attended
        elif self.skip == "value":
            x = self.values(h) + attended
        else:
            x = attended
        return x + self.mlp(self.ln2(x))
