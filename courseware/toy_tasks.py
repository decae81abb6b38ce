"""A tiny task whose attention you can read, a tiny encoder-decoder, and a training loop.

The task, "backwards plus max": the source is 6 tokens from 0 to 7; the target is the
last 4 source tokens read backwards, each plus the largest source token. For
``3 0 3 2 7 1`` the largest token is 7, the last four backwards are ``1 7 2 3``, and the
target is ``8 14 9 10``.

The model has two attention layers, each a multi-head attention module of the
learner's own class:

1. **encoder self-attention** over the source: a natural place to find the largest token
   (every token looks at it, wherever it is: attention by content);
2. **decoder cross-attention**: 4 learned query vectors, one per output position, attend
   to the 6 encoder outputs (T_q = 4, T_k = 6): output i needs source token 5 - i
   (attention by position).

Nothing tells the model to split the work this way; training finds it, and
:func:`head_roles` measures how clearly. Everything is seeded: the same seed gives the
same weights, batches, losses and pictures.

The attention layers are whatever class the notebook passes in (the learner's own
``MultiHeadAttention``); nothing here computes attention. Tiny tensors are fastest on
one thread (waking a second thread for each small operation costs more than it saves),
so :func:`train` runs on one thread. This module imports only the learner's side of
``grader`` (``grader.learner``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from grader.learner.env import grading, one_thread

LAYER_NAMES = ("encoder self-attention", "decoder cross-attention")


@dataclass(frozen=True)
class BackwardsPlusMax:
    """Source: ``src_len`` tokens in ``0 .. vocab-1``. Target: the last ``tgt_len`` source
    tokens backwards, each plus the largest source token."""

    vocab: int = 8
    src_len: int = 6
    tgt_len: int = 6

    @property
    def n_outputs(self) -> int:
        return 2 * self.vocab - 1  # sums from 0 + 0 to (vocab-1) + (vocab-1)

    def target(self, src: torch.Tensor) -> torch.Tensor:
        backwards = src.flip(-1)[..., : self.tgt_len]
        return backwards + src.max(dim=-1, keepdim=True).values

    def batch(self, size: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        src = torch.randint(0, self.vocab, (size, self.src_len), generator=generator)
        return src, self.target(src)

    def mirror(self, i: int) -> int:
        """The source position output ``i`` copies."""
        return self.src_len - 1 - i


class TinyEncoderDecoder(nn.Module):
    """Token and position embeddings, one encoder self-attention layer, one decoder
    cross-attention layer and a small MLP. ``attention_cls(d_model, n_heads)`` builds both
    attention layers; its ``forward(query, key, value)`` must return
    ``(output, weights [B, h, T_q, T_k])``."""

    def __init__(self, attention_cls, task: BackwardsPlusMax, d_model: int = 32, n_heads: int = 2):
        super().__init__()
        self.task = task
        self.embed = nn.Embedding(task.vocab, d_model)
        self.src_pos = nn.Parameter(0.5 * torch.randn(task.src_len, d_model))
        self.queries = nn.Parameter(0.5 * torch.randn(task.tgt_len, d_model))
        self.encoder = attention_cls(d_model, n_heads)
        self.cross = attention_cls(d_model, n_heads)
        self.mlp = nn.Sequential(nn.LayerNorm(d_model), nn.Linear(d_model, 4 * d_model), nn.ReLU(),
                                 nn.Linear(4 * d_model, d_model))
        self.readout = nn.Linear(d_model, task.n_outputs)

    def forward(self, src: torch.Tensor):
        """``(logits [B, tgt_len, n_outputs], {layer name: weights [B, h, T_q, T_k]})``."""
        x = self.embed(src) + self.src_pos
        update, enc_weights = self.encoder(x, x, x)
        x = x + update
        queries = self.queries.expand(src.shape[0], -1, -1)
        y, cross_weights = self.cross(queries, x, x)   # decoder queries, encoder keys and values
        y = queries + y
        y = y + self.mlp(y)
        maps = {LAYER_NAMES[0]: enc_weights, LAYER_NAMES[1]: cross_weights}
        return self.readout(y), maps


def training_budget(full: int = 600, graded: int = 150) -> int:
    """Training steps: ``full`` normally, ``graded`` while nbgrader runs the notebook
    (``NBGRADER_EXECUTION`` is set), so that grading stays fast."""
    return graded if grading() else full


def build_model(attention_cls, task: BackwardsPlusMax, seed: int = 0, **sizes) -> TinyEncoderDecoder:
    torch.random.manual_seed(seed)
    return TinyEncoderDecoder(attention_cls, task, **sizes)


def train(model: TinyEncoderDecoder, task: BackwardsPlusMax, steps: int, seed: int = 0,
          batch_size: int = 128, lr: float = 3e-3) -> tuple[list[float], float]:
    """Adam on cross-entropy, fresh random batches from ``seed``.
    Returns (the loss of every step, seconds taken)."""
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    losses, start = [], time.perf_counter()
    try:
        model.train()
        with one_thread():
            for _ in range(steps):
                src, tgt = task.batch(batch_size, generator)
                logits, _ = model(src)
                loss = F.cross_entropy(logits.reshape(-1, task.n_outputs), tgt.reshape(-1))
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                losses.append(float(loss.detach()))   # float() of a tensor that requires grad warns
    finally:
        model.eval()
    return losses, time.perf_counter() - start


@torch.no_grad()
def evaluate(model: TinyEncoderDecoder, task: BackwardsPlusMax, size: int = 1000, seed: int = 1):
    """(fraction of output tokens right, source [size, src_len], attention maps) on fresh data."""
    src, tgt = task.batch(size, torch.Generator().manual_seed(seed))
    logits, maps = model(src)
    return (logits.argmax(-1) == tgt).float().mean().item(), src, maps


def head_roles(task: BackwardsPlusMax, src: torch.Tensor, maps: dict) -> dict[str, list[float]]:
    """How clearly each head does each job, as average attention weights:

    * ``"on the largest token"``, per encoder head: the weight a token puts on the
      positions holding the largest source token (1.0: always and only there);
    * ``"on the mirror position"``, per cross-attention head: the weight output i puts on
      source position ``src_len - 1 - i``.
    """
    enc, cross = maps[LAYER_NAMES[0]], maps[LAYER_NAMES[1]]
    is_max = (src == src.max(dim=-1, keepdim=True).values).float()      # [B, T_k]
    on_max = (enc * is_max[:, None, None, :]).sum(-1).mean(dim=(0, 2))   # per head
    mirror = torch.tensor([task.mirror(i) for i in range(task.tgt_len)])
    on_mirror = cross[:, :, torch.arange(task.tgt_len), mirror].mean(dim=(0, 2))
    return {"on the largest token": on_max.tolist(), "on the mirror position": on_mirror.tolist()}
