"""Lesson 09's toolkit: the corpus, the bridges to earlier NumPy parts, input checks, the
training loop, the budget and the figures.

The graded pieces (``next_token_loss``, ``next_token_probs``, ``GPT``, ``generate``,
``induction_score``) are written by the learner in the notebook, and nothing here computes
any of them. This module holds what the notebook and the checks share:

* ``Corpus``: a small language the course makes itself (no download). Sentences like "the
  small fluffy blue creature chases a red ball ." in which adjectives come in a fixed order
  (size, then texture, then colour), some adjectives go only with some nouns (only animals
  are fluffy, only things are wooden), and the verb depends on the subject. A model that
  predicts the next word well has to look back at the adjectives and nouns before it.
* ``RepeatTask``: random token sequences whose beginning is repeated once, with a period
  that changes from sequence to sequence, the task on which an induction head forms (the
  copy is predictable only by finding the earlier copy).
* the bridges between torch and the NumPy parts of lessons 07 and 08: ``rope_matrices``
  reads the turn your ``rope`` makes at each position off its action on the unit vectors,
  as a stack of ``d x d`` matrices that torch can multiply (so gradients flow);
  ``to_rows`` and ``from_rows`` store a layer's keys or values, every batch item and head
  at once, as one row per position in your ``KVCache``;
* the input checks that the given lines call, with the reference's words;
* ``train_lm``: the training loop (lesson 06 had you write one), and the budget: smaller
  while nbgrader validates or autogrades (``NBGRADER_EXECUTION`` is set).

It imports only the learner's side of ``grader`` (``grader.learner``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
import torch
from torch import nn

from grader.learner.env import grading
from grader.learner.validation import positive_int, shape_str

# ----------------------------------------------------------------------------- the corpus

SIZES = ("big", "small", "tiny")
TEXTURES_ANIMAL = ("fluffy",)
TEXTURES_THING = ("wooden",)
TEXTURES_ANY = ("shiny",)
COLOURS = ("red", "blue", "green")
ANIMALS = ("cat", "dog", "bird", "creature")
THINGS = ("box", "ball", "chair")
ANIMAL_VERBS = ("chases", "sees", "likes")
THING_VERBS = ("falls", "rolls")
DETERMINERS = ("the", "a")
END = "."
WORDS = (DETERMINERS + SIZES + TEXTURES_ANIMAL + TEXTURES_THING + TEXTURES_ANY + COLOURS
         + ANIMALS + THINGS + ANIMAL_VERBS + THING_VERBS + (END,))
ADJECTIVES = SIZES + TEXTURES_ANIMAL + TEXTURES_THING + TEXTURES_ANY + COLOURS
NOUNS = ANIMALS + THINGS


class Corpus:
    """The course's own little language, one word per token.

    ``sentence(rng)`` draws one sentence as a list of words; ``stream(n_words, seed)`` a
    text of whole sentences as token ids; ``encode`` / ``decode`` map between words and ids
    (``vocab`` is the list of words, id = position in it).
    """

    vocab = list(WORDS)

    def __init__(self):
        self.ids = {w: i for i, w in enumerate(self.vocab)}

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def noun_phrase(self, rng: np.random.Generator, animal: bool | None = None) -> list[str]:
        """A determiner, zero to three adjectives in the fixed order size, texture, colour,
        and a noun; fluffy goes only with animals and wooden only with things."""
        if animal is None:
            animal = bool(rng.random() < 0.6)
        words = [str(rng.choice(DETERMINERS))]
        if rng.random() < 0.5:
            words.append(str(rng.choice(SIZES)))
        if rng.random() < 0.5:
            words.append(str(rng.choice((TEXTURES_ANIMAL if animal else TEXTURES_THING)
                                        + TEXTURES_ANY)))
        if rng.random() < 0.5:
            words.append(str(rng.choice(COLOURS)))
        words.append(str(rng.choice(ANIMALS if animal else THINGS)))
        return words

    def sentence(self, rng: np.random.Generator) -> list[str]:
        """An animal does something to anything ("... chases a red ball ."), or a thing
        falls or rolls ("the wooden box falls .")."""
        subject = self.noun_phrase(rng)
        if subject[-1] in ANIMALS:
            return subject + [str(rng.choice(ANIMAL_VERBS))] + self.noun_phrase(rng) + [END]
        return subject + [str(rng.choice(THING_VERBS)), END]

    def stream(self, n_words: int, seed: int) -> torch.Tensor:
        """Whole sentences, one after another, until at least ``n_words`` words: ids [n]."""
        rng = np.random.default_rng(seed)
        words: list[str] = []
        while len(words) < n_words:
            words += self.sentence(rng)
        return torch.tensor([self.ids[w] for w in words], dtype=torch.long)

    def encode(self, text: str) -> torch.Tensor:
        unknown = [w for w in text.split() if w not in self.ids]
        if unknown:
            raise ValueError(f"not in the corpus's vocabulary: {', '.join(unknown)}")
        return torch.tensor([self.ids[w] for w in text.split()], dtype=torch.long)

    def decode(self, ids) -> str:
        return " ".join(self.vocab[int(i)] for i in torch.as_tensor(ids).reshape(-1))

    def is_sentence(self, words: list[str]) -> bool:
        """Whether ``words`` is one sentence this language can make."""
        def phrase(ws):
            if len(ws) < 2 or ws[0] not in DETERMINERS or ws[-1] not in NOUNS:
                return False
            animal = ws[-1] in ANIMALS
            order = [SIZES, (TEXTURES_ANIMAL if animal else TEXTURES_THING) + TEXTURES_ANY,
                     COLOURS]
            slot = 0
            for w in ws[1:-1]:
                while slot < 3 and w not in order[slot]:
                    slot += 1
                if slot == 3:
                    return False
                slot += 1
            return True

        if not words or words[-1] != END:
            return False
        verbs = [i for i, w in enumerate(words) if w in ANIMAL_VERBS + THING_VERBS]
        if len(verbs) != 1:
            return False
        v = verbs[0]
        subject, verb, rest = words[:v], words[v], words[v + 1:-1]
        if not phrase(subject):
            return False
        if verb in THING_VERBS:
            return subject[-1] in THINGS and not rest
        return subject[-1] in ANIMALS and phrase(rest)

    def grammatical_share(self, ids) -> float:
        """The share of the complete sentences in ``ids`` (those after the first full stop)
        that the language can make; NaN if there are none."""
        words = self.decode(ids).split()
        if END not in words:
            return float("nan")
        words = words[words.index(END) + 1:]
        sentences, current = [], []
        for w in words:
            current.append(w)
            if w == END:
                sentences.append(current)
                current = []
        if not sentences:
            return float("nan")
        return float(np.mean([self.is_sentence(s) for s in sentences]))


def windows(stream: torch.Tensor, length: int, batch_size: int,
            generator: torch.Generator) -> torch.Tensor:
    """``batch_size`` windows of ``length`` consecutive tokens of ``stream``, at random
    starts: [batch_size, length]."""
    starts = torch.randint(0, len(stream) - length + 1, (batch_size,), generator=generator)
    return torch.stack([stream[s:s + length] for s in starts.tolist()])


@dataclass(frozen=True)
class RepeatTask:
    """Sequences of ``length`` random tokens in which the first ``period`` tokens come again
    right after themselves, with ``period`` drawn for each sequence from ``shortest`` to
    ``longest``: [batch, length]. Before the copy nothing can be predicted; every token of
    the copy can, by finding the earlier copy of the current token and reading the token
    after it. The period changes from one sequence to the next, so no fixed offset finds
    that token: only its content does."""

    vocab_size: int = 16
    length: int = 24
    shortest: int = 4
    longest: int = 12
    batch_size: int = 32

    def sample(self, generator: torch.Generator) -> torch.Tensor:
        tokens = torch.randint(0, self.vocab_size, (self.batch_size, self.length),
                               generator=generator)
        periods = torch.randint(self.shortest, self.longest + 1, (self.batch_size,),
                                generator=generator)
        for row, period in zip(tokens, periods.tolist()):
            row[period:2 * period] = row[:period]
        return tokens

    def probe(self, period: int, seed: int = 99) -> torch.Tensor:
        """A fixed batch whose first ``period`` tokens repeat once: [batch, 2 * period]."""
        first = torch.randint(0, self.vocab_size, (self.batch_size, period),
                              generator=torch.Generator().manual_seed(seed))
        return torch.cat([first, first], dim=1)

    def floor(self) -> float:
        """The lowest mean next-token loss any model can reach: ln V on every prediction
        whose target is random, 0 on the period - 1 targets inside the copy that follow a
        predicted token, averaged over the periods."""
        n = self.length - 1
        periods = range(self.shortest, self.longest + 1)
        return float(np.mean([(n - (p - 1)) / n for p in periods]) * math.log(self.vocab_size))


# ----------------------------------------------------------------------------- the bridges

def rope_matrices(rope, positions, d_head: int, base: float = 10000.0) -> torch.Tensor:
    """The turn that ``rope`` (lesson 08's, a NumPy function) makes at each position, as
    torch matrices ``R [T, d_head, d_head]``: row j of ``R[t]`` is ``rope`` of the unit
    vector e_j at ``positions[t]``. RoPE is linear at each position, so for any row x at
    position t, ``rope(x) = x @ R[t]``; :func:`turn` applies it in torch, where gradients
    flow through x."""
    positions = np.asarray(positions)
    T = len(positions)
    units = np.broadcast_to(np.eye(d_head)[:, None, :], (d_head, T, d_head)).copy()
    turned = np.asarray(rope(units, positions, base), dtype=np.float64)  # [d_head, T, d_head]
    if turned.shape != units.shape:
        raise ValueError(f"rope returned shape {shape_str(turned.shape)} for the unit vectors "
                         f"of shape {shape_str(units.shape)}: it must keep the shape")
    return torch.from_numpy(np.ascontiguousarray(turned.transpose(1, 0, 2)))


def turn(x: torch.Tensor, R: torch.Tensor) -> torch.Tensor:
    """Rows of ``x [B, h, T, d_head]`` turned by ``R [T, d_head, d_head]`` (from
    :func:`rope_matrices`): row t becomes ``x[..., t, :] @ R[t]``."""
    return torch.einsum("bhtd,tde->bhte", x, R.to(x.dtype))


def to_rows(x: torch.Tensor) -> np.ndarray:
    """``[B, h, T, d_head]`` keys or values as a NumPy block of rows ``[T, B*h*d_head]``: one
    row per position, every batch item's and head's vector side by side, for your lesson 07
    ``KVCache`` (which keeps one row per position)."""
    B, h, T, d = x.shape
    return x.detach().permute(2, 0, 1, 3).reshape(T, B * h * d).numpy()


def from_rows(rows, batch: int, n_heads: int, like: torch.Tensor) -> torch.Tensor:
    """The inverse of :func:`to_rows`: ``[t, B*h*d_head]`` rows back to a tensor ``[B, h, t,
    d_head]`` of ``like``'s dtype."""
    rows = torch.as_tensor(np.asarray(rows)).to(like.dtype)
    t = rows.shape[0]
    return rows.reshape(t, batch, n_heads, -1).permute(1, 2, 0, 3)


def gpt_block(d_model: int, d_ff: int) -> nn.ModuleDict:
    """One block's layers, by name: ``ln1``, the projections ``w_q``, ``w_k``, ``w_v``,
    ``w_o`` (``nn.Linear(d_model, d_model)``), and, when ``d_ff > 0``, ``ln2`` and the MLP
    ``mlp`` (Linear, GELU, Linear). ``d_ff = 0`` makes an attention-only block."""
    layers = {"ln1": nn.LayerNorm(d_model)}
    for name in ("w_q", "w_k", "w_v", "w_o"):
        layers[name] = nn.Linear(d_model, d_model)
    if d_ff > 0:
        layers["ln2"] = nn.LayerNorm(d_model)
        layers["mlp"] = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(),
                                      nn.Linear(d_ff, d_model))
    return nn.ModuleDict(layers)


# ----------------------------------------------------------------------------- input checks

def _whole(x, name: str, least: int = 0) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < least:
        raise ValueError(f"{name} must be a whole number of at least {least}, got {x!r}")
    return int(x)


def gpt_sizes(vocab_size, d_model, n_heads, n_layers, d_ff, max_len) -> None:
    """A ValueError naming the size that does not fit."""
    for name, value in (("vocab_size", vocab_size), ("d_model", d_model),
                        ("n_heads", n_heads), ("n_layers", n_layers), ("max_len", max_len)):
        positive_int(value, name)
    _whole(d_ff, "d_ff")
    if d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    if (d_model // n_heads) % 2:
        raise ValueError(f"d_head = d_model / n_heads = {d_model // n_heads} is odd: RoPE "
                         f"turns the features in pairs")


def gpt_tokens(tokens, vocab_size: int, max_len: int, start: int = 0) -> torch.Tensor:
    """``tokens`` as a long tensor [B, T], or a ValueError: not [B, T] integers, an id
    outside ``0..vocab_size - 1``, or positions ``start .. start + T - 1`` past max_len."""
    if not isinstance(tokens, torch.Tensor) or tokens.dim() != 2:
        raise ValueError(f"tokens must be a tensor [B, T] of token ids, got "
                         f"{getattr(tokens, 'shape', type(tokens).__name__)}")
    if tokens.dtype.is_floating_point or tokens.dtype == torch.bool or tokens.is_complex():
        raise ValueError(f"tokens must hold integer ids, got dtype {tokens.dtype}")
    if tokens.shape[1] == 0:
        raise ValueError("tokens has no positions (T = 0)")
    if tokens.numel() and (int(tokens.min()) < 0 or int(tokens.max()) >= vocab_size):
        bad = int(tokens.max()) if int(tokens.max()) >= vocab_size else int(tokens.min())
        raise ValueError(f"token id {bad} is outside the vocabulary 0..{vocab_size - 1}")
    if start + tokens.shape[1] > max_len:
        raise ValueError(f"positions {start}..{start + tokens.shape[1] - 1} go past max_len = "
                         f"{max_len}")
    return tokens.long()


def loss_inputs(logits, tokens) -> tuple[torch.Tensor, torch.Tensor]:
    """``(logits, tokens)`` checked: logits [..., T, V] floats, tokens [..., T] whole ids
    below V, T >= 2 (a next token to predict)."""
    if not isinstance(logits, torch.Tensor) or not logits.is_floating_point():
        raise ValueError("logits must be a floating-point tensor [..., T, V]")
    if not isinstance(tokens, torch.Tensor) or tokens.dtype.is_floating_point:
        raise ValueError("tokens must be a tensor of integer ids [..., T]")
    if logits.dim() < 2 or tuple(logits.shape[:-1]) != tuple(tokens.shape):
        raise ValueError(f"logits {shape_str(logits.shape)} must be tokens' shape "
                         f"{shape_str(tokens.shape)} plus one axis of V scores")
    if tokens.shape[-1] < 2:
        raise ValueError(f"tokens has T = {tokens.shape[-1]}: with fewer than two positions "
                         f"no position has a next token")
    V = logits.shape[-1]
    if tokens.numel() and (int(tokens.min()) < 0 or int(tokens.max()) >= V):
        raise ValueError(f"a token id is outside 0..{V - 1}, the logits' vocabulary")
    return logits, tokens.long()


def probs_inputs(logits, temperature, top_k, top_p):
    """The sampling settings checked, or a ValueError that names the one that is wrong."""
    if not isinstance(logits, torch.Tensor) or not logits.is_floating_point() or logits.dim() < 1:
        raise ValueError("logits must be a floating-point tensor [..., V]")
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float, np.number)) \
            or not math.isfinite(temperature) or temperature < 0:
        raise ValueError(f"temperature must be a number >= 0, got {temperature!r}")
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer))
                              or top_k < 1):
        raise ValueError(f"top_k must be None or a whole number >= 1, got {top_k!r}")
    if top_p is not None and (isinstance(top_p, bool) or not isinstance(top_p, (int, float, np.number))
                              or not 0 < top_p <= 1):
        raise ValueError(f"top_p must be None or a number in (0, 1], got {top_p!r}")
    return logits, float(temperature), top_k if top_k is None else int(top_k), \
        top_p if top_p is None else float(top_p)


def prompt_inputs(prompt, n_new) -> tuple[torch.Tensor, int]:
    """The prompt as a long tensor [B, T0] (a [T0] prompt gets a batch axis of 1) and
    ``n_new`` as a whole number >= 0."""
    if not isinstance(prompt, torch.Tensor) or prompt.dim() not in (1, 2) or prompt.shape[-1] == 0:
        raise ValueError("prompt must be a tensor of token ids [T0] or [B, T0], T0 >= 1")
    if prompt.dtype.is_floating_point or prompt.dtype == torch.bool:
        raise ValueError(f"prompt must hold integer ids, got dtype {prompt.dtype}")
    return (prompt if prompt.dim() == 2 else prompt[None]).long(), _whole(n_new, "n_new")


def induction_inputs(weights, period):
    """``weights [..., T, T]`` (NumPy or torch) and a period with 1 <= period < T."""
    if not isinstance(weights, (np.ndarray, torch.Tensor)) or weights.ndim < 2 \
            or weights.shape[-1] != weights.shape[-2]:
        raise ValueError(f"weights must be an array [..., T, T], got "
                         f"{getattr(weights, 'shape', type(weights).__name__)}")
    T = weights.shape[-1]
    period = _whole(period, "period", 1)
    if period >= T:
        raise ValueError(f"period = {period} leaves no query after the first copy (T = {T})")
    return weights, period


# ----------------------------------------------------------------------------- training

@dataclass(frozen=True)
class Budget:
    steps: int
    induction_steps: int
    label: str


def budget() -> Budget:
    """The notebook's training budget: full, or reduced while nbgrader runs it."""
    if grading():
        return Budget(60, 60, "reduced (nbgrader is running the notebook)")
    return Budget(400, 600, "full")


def train_lm(model, batches, steps: int, loss_fn, lr: float = 3e-3, seed: int = 0,
             every=None) -> list[float]:
    """Train ``model`` with Adam for ``steps`` steps on ``batches(generator)`` (token ids
    [B, T]), minimising ``loss_fn(model(tokens), tokens)``; the loss of each step. Every
    batch comes from one ``torch.Generator`` seeded with ``seed``. ``every``: an optional
    ``(n, fn)``: ``fn(step, model)`` is called before step 0 and after every n steps."""
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    model.train()
    losses = []
    for step in range(steps):
        if every is not None and step % every[0] == 0:
            every[1](step, model)
        tokens = batches(generator)
        loss = loss_fn(model(tokens), tokens)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(float(loss))
    if every is not None:
        every[1](steps, model)
    model.eval()
    return losses


# ----------------------------------------------------------------------------- your parts

def my_part(lesson: str, name: str, root: str = "..") -> None:
    """Print your answer cell ``name`` from your notebook of ``lesson`` ("04_masking"), found
    beside this lesson's folder, so that you can copy it here."""
    import json
    from pathlib import Path

    path = Path(root) / lesson / f"{lesson}.ipynb"
    if not path.exists():
        print(f"{path} is not here: open your lesson {lesson[:2]} notebook and copy `{name}` "
              f"from it.")
        return
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == name:
            source = "".join(cell["source"])
            if "raise NotImplementedError" in source:
                print(f"# your `{name}` in {path} is not written yet")
            print(source)
            return
    print(f"{path} has no answer cell `{name}`: copy it from your lesson {lesson[:2]} notebook.")
