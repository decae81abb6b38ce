"""Held-out wrong answers for lessons 05-08 (written by a learner-tester from the student
notebooks, the README, courseware/ and grader/learner/validation.py only).

Each answer is the whole answer cell(s) a learner would type, with one mistake (two where
the cause says so), and the cause a teacher would give. verify_05_08.py beside this file
checks that every answer differs from an independent computation on its `wrong_on` input.
"""
from typing import NamedTuple


class Wrong(NamedTuple):
    id: str          # short unique id
    exercise: str    # the graded name, as in the notebook's check("name", ...) cell
    cause: str       # the true cause, as a teacher would tell the learner
    kind: str        # a short category
    wrong_on: str    # an input on which it gives a wrong result, and what goes wrong
    source: str      # the whole answer cell(s), runnable on their own


WRONG = [
    Wrong(
        id='h34-05-split-heads-reshape-no-transpose',
        exercise='split_heads',
        cause="You reshaped x straight to [B, h, T, d_head]; reshape re-reads the numbers in memory order, so head 0 gets token 0's first and second blocks and the heads mix tokens. Cut each token's features first, x.reshape(B, T, n_heads, d_head), then swap the head and token axes with .transpose(1, 2).",
        kind='reshape without moving an axis',
        wrong_on="x of shape [1, 3, 4] with entries 10t + j and n_heads=2: head 0 comes out as [[0, 1], [2, 3], [10, 11]] (token 0's two blocks, then token 1's) instead of [[0, 1], [10, 11], [20, 21]].",
        source='''import math

import torch
import torch.nn.functional as F
from torch import nn


def split_heads(x, n_heads):
    """[B, T, d_model] -> [B, h, T, d_head]: head i gets features i*d_head:(i+1)*d_head."""
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError(f"x must be a tensor [B, T, d_model], got {getattr(x, 'shape', type(x))}")
    B, T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    d_head = d_model // n_heads
    return x.reshape(B, n_heads, T, d_head)
''',
    ),
    Wrong(
        id='h34-05-split-heads-features-strided',
        exercise='split_heads',
        cause="In split_heads you cut each token's features as [d_head, n_heads] and moved the last axis forward, so head i gets every n_heads-th feature (i, i + h, i + 2h, ...) instead of the contiguous block i*d_head:(i+1)*d_head. Reshape to (B, T, n_heads, d_head) so the head index is the slower one, then transpose(1, 2).",
        kind='heads split in the wrong order (strided features)',
        wrong_on='x [1, 2, 4] with entries 10t + j and n_heads=2: head 0 of token 0 is [0, 2] instead of [0, 1].',
        source='''import math

import torch
import torch.nn.functional as F
from torch import nn


def split_heads(x, n_heads):
    """[B, T, d_model] -> [B, h, T, d_head]: head i gets features i*d_head:(i+1)*d_head."""
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError(f"x must be a tensor [B, T, d_model], got {getattr(x, 'shape', type(x))}")
    B, T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    d_head = d_model // n_heads
    return x.reshape(B, T, d_head, n_heads).permute(0, 3, 1, 2)
''',
    ),
    Wrong(
        id='h34-05-split-heads-transpose-forgotten',
        exercise='split_heads',
        cause='You cut the features into heads correctly but stopped there: the result is [B, T, h, d_head], with the token axis in front of the head axis. Add .transpose(1, 2) so the head axis comes before the tokens, as [B, h, T, d_head] requires.',
        kind='transpose left out (axes in the wrong order)',
        wrong_on='x of shape [1, 3, 4] with n_heads=2: the result has shape [1, 3, 2, 2] instead of [1, 2, 3, 2].',
        source='''import math

import torch
import torch.nn.functional as F
from torch import nn


def split_heads(x, n_heads):
    """[B, T, d_model] -> [B, h, T, d_head]: head i gets features i*d_head:(i+1)*d_head."""
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError(f"x must be a tensor [B, T, d_model], got {getattr(x, 'shape', type(x))}")
    B, T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    d_head = d_model // n_heads
    return x.reshape(B, T, n_heads, d_head)
''',
    ),
    Wrong(
        id='h34-05-merge-heads-reshape-no-transpose',
        exercise='merge_heads',
        cause="merge_heads reshapes [B, h, T, d_head] straight to [B, T, h*d_head] without moving the head axis back behind the token axis, so each output row is made of one head's rows for consecutive tokens. Transpose first, x.transpose(1, 2), and then reshape.",
        kind='reshape without moving an axis',
        wrong_on="x [1, 2, 3, 2] (h=2, T=3): output token 0 is head 0's tokens 0 and 1 side by side instead of head 0's and head 1's token 0.",
        source='''import math

import torch
import torch.nn.functional as F
from torch import nn


def merge_heads(x):
    """[B, h, T, d_head] -> [B, T, h*d_head]: the heads of each token side by side."""
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
    return x.reshape(B, T, h * d_head)
''',
    ),
    Wrong(
        id='h34-05-merge-heads-heads-inner',
        exercise='merge_heads',
        cause="You moved the head axis to the very end, [B, T, d_head, h], before flattening, so the merged features are interleaved (head 0 feature 0, head 1 feature 0, head 0 feature 1, ...). The heads must sit side by side, head 0's whole block first: use x.transpose(1, 2), which gives [B, T, h, d_head], then reshape.",
        kind='heads merged in the wrong order (interleaved)',
        wrong_on='x [1, 2, 1, 2] holding head 0 = [a, b] and head 1 = [c, d] for one token: the result is [a, c, b, d] instead of [a, b, c, d].',
        source='''import math

import torch
import torch.nn.functional as F
from torch import nn


def merge_heads(x):
    """[B, h, T, d_head] -> [B, T, h*d_head]: the heads of each token side by side."""
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
    return x.permute(0, 2, 3, 1).reshape(B, T, h * d_head)
''',
    ),
    Wrong(
        id='h34-05-merge-heads-swaps-token-and-feature',
        exercise='merge_heads',
        cause='merge_heads swaps the token and feature axes (transpose(2, 3)) instead of the head and token axes (transpose(1, 2)), so the flattened rows mix tokens and features. The axis to move is the head axis, 1, behind the token axis, 2.',
        kind='transpose of the wrong pair of axes',
        wrong_on="x [1, 2, 3, 2] (h=2, T=3, d_head=2): output token 0 is [x[0,0,0,0], x[0,0,1,0], x[0,0,2,0], x[0,0,0,1]], feature 0 of several tokens, instead of head 0's and head 1's token 0.",
        source='''import math

import torch
import torch.nn.functional as F
from torch import nn


def merge_heads(x):
    """[B, h, T, d_head] -> [B, T, h*d_head]: the heads of each token side by side."""
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
    return x.transpose(2, 3).reshape(B, T, h * d_head)
''',
    ),
    Wrong(
        id='h34-05-mha-scale-d-model',
        exercise='MultiHeadAttention',
        cause="In forward you divide the scores by sqrt(d_model); each head's dot products are sums of only d_head terms, so the scale is sqrt(d_head) (self.d_head). With several heads your weights come out too flat.",
        kind='wrong scale (sqrt of the wrong size)',
        wrong_on='d_model=8, n_heads=2, self-attention on random x [2, 4, 8]: the scores are divided by sqrt(8) instead of sqrt(4), so every weight row is flatter than it should be.',
        source='''import math

import torch
import torch.nn.functional as F
from torch import nn


def split_heads(x, n_heads):
    """[B, T, d_model] -> [B, h, T, d_head]: head i gets features i*d_head:(i+1)*d_head."""
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError(f"x must be a tensor [B, T, d_model], got {getattr(x, 'shape', type(x))}")
    B, T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    d_head = d_model // n_heads
    return x.reshape(B, T, n_heads, d_head).transpose(1, 2)


def merge_heads(x):
    """[B, h, T, d_head] -> [B, T, h*d_head]: the heads of each token side by side."""
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d_head)


def attention_shapes(query, key, value, d_model):
    """(B, T_q, T_k) for valid inputs [B, T, d_model]; a ValueError naming the culprit otherwise."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor) or t.dim() != 3 or t.shape[-1] != d_model:
            got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            raise ValueError(f"{name} must be a tensor [B, T, d_model={d_model}], got {got}")
    if key.shape[:2] != value.shape[:2]:
        raise ValueError(f"key {tuple(key.shape)} and value {tuple(value.shape)} must hold the same tokens")
    if query.shape[0] != key.shape[0]:
        raise ValueError(f"query {tuple(query.shape)} and key {tuple(key.shape)} have different batch sizes")
    return query.shape[0], query.shape[1], key.shape[1]


def as_attention_mask(mask, B, n_heads, T_q, T_k):
    """None, or the bool mask (True = may attend) with 4 axes, broadcastable to [B, h, T_q, T_k].

    Accepts [B, T_k] (a key mask), [B, T_q, T_k] (shared by all heads) or [B, h, T_q, T_k];
    any axis but T_k may also have size 1.
    """
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise ValueError(f"mask must be a bool tensor (True = may attend), got "
                         f"{getattr(mask, 'dtype', type(mask).__name__)}")
    given = tuple(mask.shape)
    if mask.dim() == 2:
        mask = mask[:, None, None, :]
    elif mask.dim() == 3:
        mask = mask[:, None, :, :]
    elif mask.dim() != 4:
        raise ValueError(f"mask must have 2, 3 or 4 axes, got shape {given}")
    if mask.shape[-1] != T_k or any(m not in (1, n) for m, n in zip(mask.shape, (B, n_heads, T_q, T_k))):
        raise ValueError(f"mask of shape {given} does not fit B={B}, h={n_heads}, T_q={T_q}, T_k={T_k}")
    return mask


class MultiHeadAttention(nn.Module):
    """Multi-head attention with four nn.Linear(d_model, d_model) layers w_q, w_k, w_v, w_o."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        if n_heads <= 0 or d_model % n_heads:
            raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        """query [B, T_q, d_model]; key, value [B, T_k, d_model]; mask True = may attend.
        Returns (output [B, T_q, d_model], weights [B, h, T_q, T_k])."""
        B, T_q, T_k = attention_shapes(query, key, value, self.d_model)
        mask = as_attention_mask(mask, B, self.n_heads, T_q, T_k)
        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_model)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        output = self.w_o(merge_heads(weights @ v))
        return output, weights
''',
    ),
    Wrong(
        id='h34-05-mha-mask-after-softmax',
        exercise='MultiHeadAttention',
        cause='You apply the mask after the softmax, setting the masked weights to 0; the other weights were normalised with the padding keys included, so the rows no longer sum to 1. Fill the masked scores with -inf before the softmax.',
        kind='mask applied after the softmax',
        wrong_on="cross-attention with a key mask [[T]*5, [T,T,T,F,F]]: in sentence 1 each row's weights sum to less than 1 and the output is too small.",
        source='''import math

import torch
import torch.nn.functional as F
from torch import nn


def split_heads(x, n_heads):
    """[B, T, d_model] -> [B, h, T, d_head]: head i gets features i*d_head:(i+1)*d_head."""
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError(f"x must be a tensor [B, T, d_model], got {getattr(x, 'shape', type(x))}")
    B, T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    d_head = d_model // n_heads
    return x.reshape(B, T, n_heads, d_head).transpose(1, 2)


def merge_heads(x):
    """[B, h, T, d_head] -> [B, T, h*d_head]: the heads of each token side by side."""
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d_head)


def attention_shapes(query, key, value, d_model):
    """(B, T_q, T_k) for valid inputs [B, T, d_model]; a ValueError naming the culprit otherwise."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor) or t.dim() != 3 or t.shape[-1] != d_model:
            got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            raise ValueError(f"{name} must be a tensor [B, T, d_model={d_model}], got {got}")
    if key.shape[:2] != value.shape[:2]:
        raise ValueError(f"key {tuple(key.shape)} and value {tuple(value.shape)} must hold the same tokens")
    if query.shape[0] != key.shape[0]:
        raise ValueError(f"query {tuple(query.shape)} and key {tuple(key.shape)} have different batch sizes")
    return query.shape[0], query.shape[1], key.shape[1]


def as_attention_mask(mask, B, n_heads, T_q, T_k):
    """None, or the bool mask (True = may attend) with 4 axes, broadcastable to [B, h, T_q, T_k].

    Accepts [B, T_k] (a key mask), [B, T_q, T_k] (shared by all heads) or [B, h, T_q, T_k];
    any axis but T_k may also have size 1.
    """
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise ValueError(f"mask must be a bool tensor (True = may attend), got "
                         f"{getattr(mask, 'dtype', type(mask).__name__)}")
    given = tuple(mask.shape)
    if mask.dim() == 2:
        mask = mask[:, None, None, :]
    elif mask.dim() == 3:
        mask = mask[:, None, :, :]
    elif mask.dim() != 4:
        raise ValueError(f"mask must have 2, 3 or 4 axes, got shape {given}")
    if mask.shape[-1] != T_k or any(m not in (1, n) for m, n in zip(mask.shape, (B, n_heads, T_q, T_k))):
        raise ValueError(f"mask of shape {given} does not fit B={B}, h={n_heads}, T_q={T_q}, T_k={T_k}")
    return mask


class MultiHeadAttention(nn.Module):
    """Multi-head attention with four nn.Linear(d_model, d_model) layers w_q, w_k, w_v, w_o."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        if n_heads <= 0 or d_model % n_heads:
            raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        """query [B, T_q, d_model]; key, value [B, T_k, d_model]; mask True = may attend.
        Returns (output [B, T_q, d_model], weights [B, h, T_q, T_k])."""
        B, T_q, T_k = attention_shapes(query, key, value, self.d_model)
        mask = as_attention_mask(mask, B, self.n_heads, T_q, T_k)
        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights.masked_fill(~mask, 0.0)
        output = self.w_o(merge_heads(weights @ v))
        return output, weights
''',
    ),
    Wrong(
        id='h34-05-mha-mask-fill-zero',
        exercise='MultiHeadAttention',
        cause="Where the mask is False you set the score to 0, but a score of 0 still gets weight e^0 after the softmax: the padding keys keep a share. A masked score must become -inf (float('-inf')), whose exponential is 0.",
        kind='-inf vs 0 confusion in the mask',
        wrong_on='cross-attention with a key mask [[T]*5, [T,T,T,F,F]]: the padding keys 3 and 4 of sentence 1 get non-zero weights.',
        source='''import math

import torch
import torch.nn.functional as F
from torch import nn


def split_heads(x, n_heads):
    """[B, T, d_model] -> [B, h, T, d_head]: head i gets features i*d_head:(i+1)*d_head."""
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError(f"x must be a tensor [B, T, d_model], got {getattr(x, 'shape', type(x))}")
    B, T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    d_head = d_model // n_heads
    return x.reshape(B, T, n_heads, d_head).transpose(1, 2)


def merge_heads(x):
    """[B, h, T, d_head] -> [B, T, h*d_head]: the heads of each token side by side."""
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d_head)


def attention_shapes(query, key, value, d_model):
    """(B, T_q, T_k) for valid inputs [B, T, d_model]; a ValueError naming the culprit otherwise."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor) or t.dim() != 3 or t.shape[-1] != d_model:
            got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            raise ValueError(f"{name} must be a tensor [B, T, d_model={d_model}], got {got}")
    if key.shape[:2] != value.shape[:2]:
        raise ValueError(f"key {tuple(key.shape)} and value {tuple(value.shape)} must hold the same tokens")
    if query.shape[0] != key.shape[0]:
        raise ValueError(f"query {tuple(query.shape)} and key {tuple(key.shape)} have different batch sizes")
    return query.shape[0], query.shape[1], key.shape[1]


def as_attention_mask(mask, B, n_heads, T_q, T_k):
    """None, or the bool mask (True = may attend) with 4 axes, broadcastable to [B, h, T_q, T_k].

    Accepts [B, T_k] (a key mask), [B, T_q, T_k] (shared by all heads) or [B, h, T_q, T_k];
    any axis but T_k may also have size 1.
    """
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise ValueError(f"mask must be a bool tensor (True = may attend), got "
                         f"{getattr(mask, 'dtype', type(mask).__name__)}")
    given = tuple(mask.shape)
    if mask.dim() == 2:
        mask = mask[:, None, None, :]
    elif mask.dim() == 3:
        mask = mask[:, None, :, :]
    elif mask.dim() != 4:
        raise ValueError(f"mask must have 2, 3 or 4 axes, got shape {given}")
    if mask.shape[-1] != T_k or any(m not in (1, n) for m, n in zip(mask.shape, (B, n_heads, T_q, T_k))):
        raise ValueError(f"mask of shape {given} does not fit B={B}, h={n_heads}, T_q={T_q}, T_k={T_k}")
    return mask


class MultiHeadAttention(nn.Module):
    """Multi-head attention with four nn.Linear(d_model, d_model) layers w_q, w_k, w_v, w_o."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        if n_heads <= 0 or d_model % n_heads:
            raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        """query [B, T_q, d_model]; key, value [B, T_k, d_model]; mask True = may attend.
        Returns (output [B, T_q, d_model], weights [B, h, T_q, T_k])."""
        B, T_q, T_k = attention_shapes(query, key, value, self.d_model)
        mask = as_attention_mask(mask, B, self.n_heads, T_q, T_k)
        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, 0.0)
        weights = torch.softmax(scores, dim=-1)
        output = self.w_o(merge_heads(weights @ v))
        return output, weights
''',
    ),
    Wrong(
        id='h34-05-mha-softmax-over-queries',
        exercise='MultiHeadAttention',
        cause="The softmax runs over dim=-2, the queries, so each key's column sums to 1 instead of each query's row. The weights of one query are over the keys: softmax over the last axis, dim=-1.",
        kind='softmax over the wrong axis',
        wrong_on="self-attention on random x [2, 4, 8] with 2 heads: the weights' columns sum to 1 and the rows do not.",
        source='''import math

import torch
import torch.nn.functional as F
from torch import nn


def split_heads(x, n_heads):
    """[B, T, d_model] -> [B, h, T, d_head]: head i gets features i*d_head:(i+1)*d_head."""
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError(f"x must be a tensor [B, T, d_model], got {getattr(x, 'shape', type(x))}")
    B, T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    d_head = d_model // n_heads
    return x.reshape(B, T, n_heads, d_head).transpose(1, 2)


def merge_heads(x):
    """[B, h, T, d_head] -> [B, T, h*d_head]: the heads of each token side by side."""
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d_head)


def attention_shapes(query, key, value, d_model):
    """(B, T_q, T_k) for valid inputs [B, T, d_model]; a ValueError naming the culprit otherwise."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor) or t.dim() != 3 or t.shape[-1] != d_model:
            got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            raise ValueError(f"{name} must be a tensor [B, T, d_model={d_model}], got {got}")
    if key.shape[:2] != value.shape[:2]:
        raise ValueError(f"key {tuple(key.shape)} and value {tuple(value.shape)} must hold the same tokens")
    if query.shape[0] != key.shape[0]:
        raise ValueError(f"query {tuple(query.shape)} and key {tuple(key.shape)} have different batch sizes")
    return query.shape[0], query.shape[1], key.shape[1]


def as_attention_mask(mask, B, n_heads, T_q, T_k):
    """None, or the bool mask (True = may attend) with 4 axes, broadcastable to [B, h, T_q, T_k].

    Accepts [B, T_k] (a key mask), [B, T_q, T_k] (shared by all heads) or [B, h, T_q, T_k];
    any axis but T_k may also have size 1.
    """
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise ValueError(f"mask must be a bool tensor (True = may attend), got "
                         f"{getattr(mask, 'dtype', type(mask).__name__)}")
    given = tuple(mask.shape)
    if mask.dim() == 2:
        mask = mask[:, None, None, :]
    elif mask.dim() == 3:
        mask = mask[:, None, :, :]
    elif mask.dim() != 4:
        raise ValueError(f"mask must have 2, 3 or 4 axes, got shape {given}")
    if mask.shape[-1] != T_k or any(m not in (1, n) for m, n in zip(mask.shape, (B, n_heads, T_q, T_k))):
        raise ValueError(f"mask of shape {given} does not fit B={B}, h={n_heads}, T_q={T_q}, T_k={T_k}")
    return mask


class MultiHeadAttention(nn.Module):
    """Multi-head attention with four nn.Linear(d_model, d_model) layers w_q, w_k, w_v, w_o."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        if n_heads <= 0 or d_model % n_heads:
            raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        """query [B, T_q, d_model]; key, value [B, T_k, d_model]; mask True = may attend.
        Returns (output [B, T_q, d_model], weights [B, h, T_q, T_k])."""
        B, T_q, T_k = attention_shapes(query, key, value, self.d_model)
        mask = as_attention_mask(mask, B, self.n_heads, T_q, T_k)
        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-2)
        output = self.w_o(merge_heads(weights @ v))
        return output, weights
''',
    ),
    Wrong(
        id='h34-05-mha-w-o-not-applied',
        exercise='MultiHeadAttention',
        cause='You build w_o in __init__ but forward returns the merged heads without passing them through it. The last step is output = self.w_o(merge_heads(weights @ v)).',
        kind='a layer left out (output projection)',
        wrong_on='any input, e.g. self-attention on random x [2, 4, 8]: the output is the concatenated heads, not w_o of them (the weights are right).',
        source='''import math

import torch
import torch.nn.functional as F
from torch import nn


def split_heads(x, n_heads):
    """[B, T, d_model] -> [B, h, T, d_head]: head i gets features i*d_head:(i+1)*d_head."""
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError(f"x must be a tensor [B, T, d_model], got {getattr(x, 'shape', type(x))}")
    B, T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    d_head = d_model // n_heads
    return x.reshape(B, T, n_heads, d_head).transpose(1, 2)


def merge_heads(x):
    """[B, h, T, d_head] -> [B, T, h*d_head]: the heads of each token side by side."""
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d_head)


def attention_shapes(query, key, value, d_model):
    """(B, T_q, T_k) for valid inputs [B, T, d_model]; a ValueError naming the culprit otherwise."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor) or t.dim() != 3 or t.shape[-1] != d_model:
            got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            raise ValueError(f"{name} must be a tensor [B, T, d_model={d_model}], got {got}")
    if key.shape[:2] != value.shape[:2]:
        raise ValueError(f"key {tuple(key.shape)} and value {tuple(value.shape)} must hold the same tokens")
    if query.shape[0] != key.shape[0]:
        raise ValueError(f"query {tuple(query.shape)} and key {tuple(key.shape)} have different batch sizes")
    return query.shape[0], query.shape[1], key.shape[1]


def as_attention_mask(mask, B, n_heads, T_q, T_k):
    """None, or the bool mask (True = may attend) with 4 axes, broadcastable to [B, h, T_q, T_k].

    Accepts [B, T_k] (a key mask), [B, T_q, T_k] (shared by all heads) or [B, h, T_q, T_k];
    any axis but T_k may also have size 1.
    """
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise ValueError(f"mask must be a bool tensor (True = may attend), got "
                         f"{getattr(mask, 'dtype', type(mask).__name__)}")
    given = tuple(mask.shape)
    if mask.dim() == 2:
        mask = mask[:, None, None, :]
    elif mask.dim() == 3:
        mask = mask[:, None, :, :]
    elif mask.dim() != 4:
        raise ValueError(f"mask must have 2, 3 or 4 axes, got shape {given}")
    if mask.shape[-1] != T_k or any(m not in (1, n) for m, n in zip(mask.shape, (B, n_heads, T_q, T_k))):
        raise ValueError(f"mask of shape {given} does not fit B={B}, h={n_heads}, T_q={T_q}, T_k={T_k}")
    return mask


class MultiHeadAttention(nn.Module):
    """Multi-head attention with four nn.Linear(d_model, d_model) layers w_q, w_k, w_v, w_o."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        if n_heads <= 0 or d_model % n_heads:
            raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        """query [B, T_q, d_model]; key, value [B, T_k, d_model]; mask True = may attend.
        Returns (output [B, T_q, d_model], weights [B, h, T_q, T_k])."""
        B, T_q, T_k = attention_shapes(query, key, value, self.d_model)
        mask = as_attention_mask(mask, B, self.n_heads, T_q, T_k)
        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        output = merge_heads(weights @ v)
        return output, weights
''',
    ),
    Wrong(
        id='h34-05-mha-key-value-swapped',
        exercise='MultiHeadAttention',
        cause='In forward the keys are projected from `value` and the values from `key`. Self-attention and the usual cross-attention pass the same tensor for both, which hides it; the keys must come from w_k(key) and the values from w_v(value).',
        kind='arguments swapped (key and value)',
        wrong_on='cross-attention with different key and value tensors, query [2, 3, 8], key [2, 5, 8], value another [2, 5, 8]: the weights are computed from the value tensor and the output mixes the key tensor.',
        source='''import math

import torch
import torch.nn.functional as F
from torch import nn


def split_heads(x, n_heads):
    """[B, T, d_model] -> [B, h, T, d_head]: head i gets features i*d_head:(i+1)*d_head."""
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError(f"x must be a tensor [B, T, d_model], got {getattr(x, 'shape', type(x))}")
    B, T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    d_head = d_model // n_heads
    return x.reshape(B, T, n_heads, d_head).transpose(1, 2)


def merge_heads(x):
    """[B, h, T, d_head] -> [B, T, h*d_head]: the heads of each token side by side."""
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d_head)


def attention_shapes(query, key, value, d_model):
    """(B, T_q, T_k) for valid inputs [B, T, d_model]; a ValueError naming the culprit otherwise."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor) or t.dim() != 3 or t.shape[-1] != d_model:
            got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            raise ValueError(f"{name} must be a tensor [B, T, d_model={d_model}], got {got}")
    if key.shape[:2] != value.shape[:2]:
        raise ValueError(f"key {tuple(key.shape)} and value {tuple(value.shape)} must hold the same tokens")
    if query.shape[0] != key.shape[0]:
        raise ValueError(f"query {tuple(query.shape)} and key {tuple(key.shape)} have different batch sizes")
    return query.shape[0], query.shape[1], key.shape[1]


def as_attention_mask(mask, B, n_heads, T_q, T_k):
    """None, or the bool mask (True = may attend) with 4 axes, broadcastable to [B, h, T_q, T_k].

    Accepts [B, T_k] (a key mask), [B, T_q, T_k] (shared by all heads) or [B, h, T_q, T_k];
    any axis but T_k may also have size 1.
    """
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise ValueError(f"mask must be a bool tensor (True = may attend), got "
                         f"{getattr(mask, 'dtype', type(mask).__name__)}")
    given = tuple(mask.shape)
    if mask.dim() == 2:
        mask = mask[:, None, None, :]
    elif mask.dim() == 3:
        mask = mask[:, None, :, :]
    elif mask.dim() != 4:
        raise ValueError(f"mask must have 2, 3 or 4 axes, got shape {given}")
    if mask.shape[-1] != T_k or any(m not in (1, n) for m, n in zip(mask.shape, (B, n_heads, T_q, T_k))):
        raise ValueError(f"mask of shape {given} does not fit B={B}, h={n_heads}, T_q={T_q}, T_k={T_k}")
    return mask


class MultiHeadAttention(nn.Module):
    """Multi-head attention with four nn.Linear(d_model, d_model) layers w_q, w_k, w_v, w_o."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        if n_heads <= 0 or d_model % n_heads:
            raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        """query [B, T_q, d_model]; key, value [B, T_k, d_model]; mask True = may attend.
        Returns (output [B, T_q, d_model], weights [B, h, T_q, T_k])."""
        B, T_q, T_k = attention_shapes(query, key, value, self.d_model)
        mask = as_attention_mask(mask, B, self.n_heads, T_q, T_k)
        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(value), self.n_heads)
        v = split_heads(self.w_v(key), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        output = self.w_o(merge_heads(weights @ v))
        return output, weights
''',
    ),
    Wrong(
        id='h34-05-mha-weights-averaged',
        exercise='MultiHeadAttention',
        cause="You return the attention weights averaged over the heads ([B, T_q, T_k], like nn.MultiheadAttention's default); the exercise asks for one map per head, [B, h, T_q, T_k]. Return weights as they are.",
        kind='reduction that should not be there (head axis averaged away)',
        wrong_on='self-attention on x [2, 4, 8] with 2 heads: the weights have shape [2, 4, 4] instead of [2, 2, 4, 4].',
        source='''import math

import torch
import torch.nn.functional as F
from torch import nn


def split_heads(x, n_heads):
    """[B, T, d_model] -> [B, h, T, d_head]: head i gets features i*d_head:(i+1)*d_head."""
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError(f"x must be a tensor [B, T, d_model], got {getattr(x, 'shape', type(x))}")
    B, T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    d_head = d_model // n_heads
    return x.reshape(B, T, n_heads, d_head).transpose(1, 2)


def merge_heads(x):
    """[B, h, T, d_head] -> [B, T, h*d_head]: the heads of each token side by side."""
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d_head)


def attention_shapes(query, key, value, d_model):
    """(B, T_q, T_k) for valid inputs [B, T, d_model]; a ValueError naming the culprit otherwise."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor) or t.dim() != 3 or t.shape[-1] != d_model:
            got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            raise ValueError(f"{name} must be a tensor [B, T, d_model={d_model}], got {got}")
    if key.shape[:2] != value.shape[:2]:
        raise ValueError(f"key {tuple(key.shape)} and value {tuple(value.shape)} must hold the same tokens")
    if query.shape[0] != key.shape[0]:
        raise ValueError(f"query {tuple(query.shape)} and key {tuple(key.shape)} have different batch sizes")
    return query.shape[0], query.shape[1], key.shape[1]


def as_attention_mask(mask, B, n_heads, T_q, T_k):
    """None, or the bool mask (True = may attend) with 4 axes, broadcastable to [B, h, T_q, T_k].

    Accepts [B, T_k] (a key mask), [B, T_q, T_k] (shared by all heads) or [B, h, T_q, T_k];
    any axis but T_k may also have size 1.
    """
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise ValueError(f"mask must be a bool tensor (True = may attend), got "
                         f"{getattr(mask, 'dtype', type(mask).__name__)}")
    given = tuple(mask.shape)
    if mask.dim() == 2:
        mask = mask[:, None, None, :]
    elif mask.dim() == 3:
        mask = mask[:, None, :, :]
    elif mask.dim() != 4:
        raise ValueError(f"mask must have 2, 3 or 4 axes, got shape {given}")
    if mask.shape[-1] != T_k or any(m not in (1, n) for m, n in zip(mask.shape, (B, n_heads, T_q, T_k))):
        raise ValueError(f"mask of shape {given} does not fit B={B}, h={n_heads}, T_q={T_q}, T_k={T_k}")
    return mask


class MultiHeadAttention(nn.Module):
    """Multi-head attention with four nn.Linear(d_model, d_model) layers w_q, w_k, w_v, w_o."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        if n_heads <= 0 or d_model % n_heads:
            raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        """query [B, T_q, d_model]; key, value [B, T_k, d_model]; mask True = may attend.
        Returns (output [B, T_q, d_model], weights [B, h, T_q, T_k])."""
        B, T_q, T_k = attention_shapes(query, key, value, self.d_model)
        mask = as_attention_mask(mask, B, self.n_heads, T_q, T_k)
        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        output = self.w_o(merge_heads(weights @ v))
        return output, weights.mean(dim=1)
''',
    ),
    Wrong(
        id='h34-05-copy-weights-transposed',
        exercise='copy_from_torch',
        cause="You transposed torch's blocks of in_proj_weight before copying them. Both torch's in_proj_weight and nn.Linear.weight are stored [out, in], so the blocks go in as they are: w_q.weight.copy_(W[:d]), and so on.",
        kind='transpose added',
        wrong_on='theirs = nn.MultiheadAttention(8, 2, batch_first=True) with random biases, self-attention on x [2, 4, 8]: ours gives other weights and outputs than theirs.',
        source='''import math

import torch
import torch.nn.functional as F
from torch import nn


def split_heads(x, n_heads):
    """[B, T, d_model] -> [B, h, T, d_head]: head i gets features i*d_head:(i+1)*d_head."""
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError(f"x must be a tensor [B, T, d_model], got {getattr(x, 'shape', type(x))}")
    B, T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    d_head = d_model // n_heads
    return x.reshape(B, T, n_heads, d_head).transpose(1, 2)


def merge_heads(x):
    """[B, h, T, d_head] -> [B, T, h*d_head]: the heads of each token side by side."""
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d_head)


def attention_shapes(query, key, value, d_model):
    """(B, T_q, T_k) for valid inputs [B, T, d_model]; a ValueError naming the culprit otherwise."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor) or t.dim() != 3 or t.shape[-1] != d_model:
            got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            raise ValueError(f"{name} must be a tensor [B, T, d_model={d_model}], got {got}")
    if key.shape[:2] != value.shape[:2]:
        raise ValueError(f"key {tuple(key.shape)} and value {tuple(value.shape)} must hold the same tokens")
    if query.shape[0] != key.shape[0]:
        raise ValueError(f"query {tuple(query.shape)} and key {tuple(key.shape)} have different batch sizes")
    return query.shape[0], query.shape[1], key.shape[1]


def as_attention_mask(mask, B, n_heads, T_q, T_k):
    """None, or the bool mask (True = may attend) with 4 axes, broadcastable to [B, h, T_q, T_k].

    Accepts [B, T_k] (a key mask), [B, T_q, T_k] (shared by all heads) or [B, h, T_q, T_k];
    any axis but T_k may also have size 1.
    """
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise ValueError(f"mask must be a bool tensor (True = may attend), got "
                         f"{getattr(mask, 'dtype', type(mask).__name__)}")
    given = tuple(mask.shape)
    if mask.dim() == 2:
        mask = mask[:, None, None, :]
    elif mask.dim() == 3:
        mask = mask[:, None, :, :]
    elif mask.dim() != 4:
        raise ValueError(f"mask must have 2, 3 or 4 axes, got shape {given}")
    if mask.shape[-1] != T_k or any(m not in (1, n) for m, n in zip(mask.shape, (B, n_heads, T_q, T_k))):
        raise ValueError(f"mask of shape {given} does not fit B={B}, h={n_heads}, T_q={T_q}, T_k={T_k}")
    return mask


class MultiHeadAttention(nn.Module):
    """Multi-head attention with four nn.Linear(d_model, d_model) layers w_q, w_k, w_v, w_o."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        if n_heads <= 0 or d_model % n_heads:
            raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        """query [B, T_q, d_model]; key, value [B, T_k, d_model]; mask True = may attend.
        Returns (output [B, T_q, d_model], weights [B, h, T_q, T_k])."""
        B, T_q, T_k = attention_shapes(query, key, value, self.d_model)
        mask = as_attention_mask(mask, B, self.n_heads, T_q, T_k)
        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        output = self.w_o(merge_heads(weights @ v))
        return output, weights


@torch.no_grad()
def copy_from_torch(ours, theirs):
    """Load theirs = nn.MultiheadAttention(d_model, n_heads, batch_first=True) into ours."""
    if not isinstance(theirs, nn.MultiheadAttention) or not theirs.batch_first:
        raise ValueError("theirs must be an nn.MultiheadAttention created with batch_first=True")
    if not theirs._qkv_same_embed_dim:
        raise ValueError("theirs has kdim or vdim different from embed_dim, so it has no in_proj_weight")
    if theirs.embed_dim != ours.d_model or theirs.num_heads != ours.n_heads:
        raise ValueError(f"theirs has embed_dim={theirs.embed_dim}, num_heads={theirs.num_heads}, "
                         f"but ours has d_model={ours.d_model}, n_heads={ours.n_heads}")
    d = ours.d_model
    W, b = theirs.in_proj_weight, theirs.in_proj_bias
    ours.w_q.weight.copy_(W[:d].T)
    ours.w_k.weight.copy_(W[d:2 * d].T)
    ours.w_v.weight.copy_(W[2 * d:].T)
    ours.w_q.bias.copy_(b[:d])
    ours.w_k.bias.copy_(b[d:2 * d])
    ours.w_v.bias.copy_(b[2 * d:])
    ours.w_o.weight.copy_(theirs.out_proj.weight)
    ours.w_o.bias.copy_(theirs.out_proj.bias)
    return ours
''',
    ),
    Wrong(
        id='h34-05-copy-key-value-slices-swapped',
        exercise='copy_from_torch',
        cause='You took the key projection from rows 2d:3d and the value projection from rows d:2d of in_proj_weight (and the bias), the wrong way round. torch stacks query, key, value in that order: rows d:2d are the keys, 2d:3d the values.',
        kind='slices swapped',
        wrong_on="theirs = nn.MultiheadAttention(8, 2, batch_first=True), cross-attention with query [2, 3, 8] and key, value [2, 5, 8]: both the weights and the output differ from torch's.",
        source='''import math

import torch
import torch.nn.functional as F
from torch import nn


def split_heads(x, n_heads):
    """[B, T, d_model] -> [B, h, T, d_head]: head i gets features i*d_head:(i+1)*d_head."""
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError(f"x must be a tensor [B, T, d_model], got {getattr(x, 'shape', type(x))}")
    B, T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    d_head = d_model // n_heads
    return x.reshape(B, T, n_heads, d_head).transpose(1, 2)


def merge_heads(x):
    """[B, h, T, d_head] -> [B, T, h*d_head]: the heads of each token side by side."""
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d_head)


def attention_shapes(query, key, value, d_model):
    """(B, T_q, T_k) for valid inputs [B, T, d_model]; a ValueError naming the culprit otherwise."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor) or t.dim() != 3 or t.shape[-1] != d_model:
            got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            raise ValueError(f"{name} must be a tensor [B, T, d_model={d_model}], got {got}")
    if key.shape[:2] != value.shape[:2]:
        raise ValueError(f"key {tuple(key.shape)} and value {tuple(value.shape)} must hold the same tokens")
    if query.shape[0] != key.shape[0]:
        raise ValueError(f"query {tuple(query.shape)} and key {tuple(key.shape)} have different batch sizes")
    return query.shape[0], query.shape[1], key.shape[1]


def as_attention_mask(mask, B, n_heads, T_q, T_k):
    """None, or the bool mask (True = may attend) with 4 axes, broadcastable to [B, h, T_q, T_k].

    Accepts [B, T_k] (a key mask), [B, T_q, T_k] (shared by all heads) or [B, h, T_q, T_k];
    any axis but T_k may also have size 1.
    """
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise ValueError(f"mask must be a bool tensor (True = may attend), got "
                         f"{getattr(mask, 'dtype', type(mask).__name__)}")
    given = tuple(mask.shape)
    if mask.dim() == 2:
        mask = mask[:, None, None, :]
    elif mask.dim() == 3:
        mask = mask[:, None, :, :]
    elif mask.dim() != 4:
        raise ValueError(f"mask must have 2, 3 or 4 axes, got shape {given}")
    if mask.shape[-1] != T_k or any(m not in (1, n) for m, n in zip(mask.shape, (B, n_heads, T_q, T_k))):
        raise ValueError(f"mask of shape {given} does not fit B={B}, h={n_heads}, T_q={T_q}, T_k={T_k}")
    return mask


class MultiHeadAttention(nn.Module):
    """Multi-head attention with four nn.Linear(d_model, d_model) layers w_q, w_k, w_v, w_o."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        if n_heads <= 0 or d_model % n_heads:
            raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        """query [B, T_q, d_model]; key, value [B, T_k, d_model]; mask True = may attend.
        Returns (output [B, T_q, d_model], weights [B, h, T_q, T_k])."""
        B, T_q, T_k = attention_shapes(query, key, value, self.d_model)
        mask = as_attention_mask(mask, B, self.n_heads, T_q, T_k)
        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        output = self.w_o(merge_heads(weights @ v))
        return output, weights


@torch.no_grad()
def copy_from_torch(ours, theirs):
    """Load theirs = nn.MultiheadAttention(d_model, n_heads, batch_first=True) into ours."""
    if not isinstance(theirs, nn.MultiheadAttention) or not theirs.batch_first:
        raise ValueError("theirs must be an nn.MultiheadAttention created with batch_first=True")
    if not theirs._qkv_same_embed_dim:
        raise ValueError("theirs has kdim or vdim different from embed_dim, so it has no in_proj_weight")
    if theirs.embed_dim != ours.d_model or theirs.num_heads != ours.n_heads:
        raise ValueError(f"theirs has embed_dim={theirs.embed_dim}, num_heads={theirs.num_heads}, "
                         f"but ours has d_model={ours.d_model}, n_heads={ours.n_heads}")
    d = ours.d_model
    W, b = theirs.in_proj_weight, theirs.in_proj_bias
    ours.w_q.weight.copy_(W[:d])
    ours.w_k.weight.copy_(W[2 * d:])
    ours.w_v.weight.copy_(W[d:2 * d])
    ours.w_q.bias.copy_(b[:d])
    ours.w_k.bias.copy_(b[2 * d:])
    ours.w_v.bias.copy_(b[d:2 * d])
    ours.w_o.weight.copy_(theirs.out_proj.weight)
    ours.w_o.bias.copy_(theirs.out_proj.bias)
    return ours
''',
    ),
    Wrong(
        id='h34-05-copy-biases-left-out',
        exercise='copy_from_torch',
        cause='You copied the four weight matrices but none of the biases (in_proj_bias split in three, and out_proj.bias), so ours keeps its own random biases. Copy them too: w_q.bias.copy_(b[:d]), ..., w_o.bias.copy_(theirs.out_proj.bias).',
        kind='operand left out (biases)',
        wrong_on="theirs with random in_proj_bias and out_proj.bias, self-attention on x [2, 4, 8]: the output and weights differ from torch's.",
        source='''import math

import torch
import torch.nn.functional as F
from torch import nn


def split_heads(x, n_heads):
    """[B, T, d_model] -> [B, h, T, d_head]: head i gets features i*d_head:(i+1)*d_head."""
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError(f"x must be a tensor [B, T, d_model], got {getattr(x, 'shape', type(x))}")
    B, T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    d_head = d_model // n_heads
    return x.reshape(B, T, n_heads, d_head).transpose(1, 2)


def merge_heads(x):
    """[B, h, T, d_head] -> [B, T, h*d_head]: the heads of each token side by side."""
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d_head)


def attention_shapes(query, key, value, d_model):
    """(B, T_q, T_k) for valid inputs [B, T, d_model]; a ValueError naming the culprit otherwise."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor) or t.dim() != 3 or t.shape[-1] != d_model:
            got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            raise ValueError(f"{name} must be a tensor [B, T, d_model={d_model}], got {got}")
    if key.shape[:2] != value.shape[:2]:
        raise ValueError(f"key {tuple(key.shape)} and value {tuple(value.shape)} must hold the same tokens")
    if query.shape[0] != key.shape[0]:
        raise ValueError(f"query {tuple(query.shape)} and key {tuple(key.shape)} have different batch sizes")
    return query.shape[0], query.shape[1], key.shape[1]


def as_attention_mask(mask, B, n_heads, T_q, T_k):
    """None, or the bool mask (True = may attend) with 4 axes, broadcastable to [B, h, T_q, T_k].

    Accepts [B, T_k] (a key mask), [B, T_q, T_k] (shared by all heads) or [B, h, T_q, T_k];
    any axis but T_k may also have size 1.
    """
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise ValueError(f"mask must be a bool tensor (True = may attend), got "
                         f"{getattr(mask, 'dtype', type(mask).__name__)}")
    given = tuple(mask.shape)
    if mask.dim() == 2:
        mask = mask[:, None, None, :]
    elif mask.dim() == 3:
        mask = mask[:, None, :, :]
    elif mask.dim() != 4:
        raise ValueError(f"mask must have 2, 3 or 4 axes, got shape {given}")
    if mask.shape[-1] != T_k or any(m not in (1, n) for m, n in zip(mask.shape, (B, n_heads, T_q, T_k))):
        raise ValueError(f"mask of shape {given} does not fit B={B}, h={n_heads}, T_q={T_q}, T_k={T_k}")
    return mask


class MultiHeadAttention(nn.Module):
    """Multi-head attention with four nn.Linear(d_model, d_model) layers w_q, w_k, w_v, w_o."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        if n_heads <= 0 or d_model % n_heads:
            raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        """query [B, T_q, d_model]; key, value [B, T_k, d_model]; mask True = may attend.
        Returns (output [B, T_q, d_model], weights [B, h, T_q, T_k])."""
        B, T_q, T_k = attention_shapes(query, key, value, self.d_model)
        mask = as_attention_mask(mask, B, self.n_heads, T_q, T_k)
        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        output = self.w_o(merge_heads(weights @ v))
        return output, weights


@torch.no_grad()
def copy_from_torch(ours, theirs):
    """Load theirs = nn.MultiheadAttention(d_model, n_heads, batch_first=True) into ours."""
    if not isinstance(theirs, nn.MultiheadAttention) or not theirs.batch_first:
        raise ValueError("theirs must be an nn.MultiheadAttention created with batch_first=True")
    if not theirs._qkv_same_embed_dim:
        raise ValueError("theirs has kdim or vdim different from embed_dim, so it has no in_proj_weight")
    if theirs.embed_dim != ours.d_model or theirs.num_heads != ours.n_heads:
        raise ValueError(f"theirs has embed_dim={theirs.embed_dim}, num_heads={theirs.num_heads}, "
                         f"but ours has d_model={ours.d_model}, n_heads={ours.n_heads}")
    d = ours.d_model
    W, b = theirs.in_proj_weight, theirs.in_proj_bias
    ours.w_q.weight.copy_(W[:d])
    ours.w_k.weight.copy_(W[d:2 * d])
    ours.w_v.weight.copy_(W[2 * d:])
    ours.w_o.weight.copy_(theirs.out_proj.weight)
    return ours
''',
    ),
    Wrong(
        id='h34-05-copy-out-proj-forgotten',
        exercise='copy_from_torch',
        cause='The input projections are copied, but out_proj is not: ours.w_o keeps its random initial weight and bias. Copy theirs.out_proj.weight and .bias into ours.w_o.',
        kind='a layer left out',
        wrong_on="theirs = nn.MultiheadAttention(8, 2, batch_first=True), self-attention on x [2, 4, 8]: the weights match torch's but the output does not.",
        source='''import math

import torch
import torch.nn.functional as F
from torch import nn


def split_heads(x, n_heads):
    """[B, T, d_model] -> [B, h, T, d_head]: head i gets features i*d_head:(i+1)*d_head."""
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError(f"x must be a tensor [B, T, d_model], got {getattr(x, 'shape', type(x))}")
    B, T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    d_head = d_model // n_heads
    return x.reshape(B, T, n_heads, d_head).transpose(1, 2)


def merge_heads(x):
    """[B, h, T, d_head] -> [B, T, h*d_head]: the heads of each token side by side."""
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d_head)


def attention_shapes(query, key, value, d_model):
    """(B, T_q, T_k) for valid inputs [B, T, d_model]; a ValueError naming the culprit otherwise."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor) or t.dim() != 3 or t.shape[-1] != d_model:
            got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            raise ValueError(f"{name} must be a tensor [B, T, d_model={d_model}], got {got}")
    if key.shape[:2] != value.shape[:2]:
        raise ValueError(f"key {tuple(key.shape)} and value {tuple(value.shape)} must hold the same tokens")
    if query.shape[0] != key.shape[0]:
        raise ValueError(f"query {tuple(query.shape)} and key {tuple(key.shape)} have different batch sizes")
    return query.shape[0], query.shape[1], key.shape[1]


def as_attention_mask(mask, B, n_heads, T_q, T_k):
    """None, or the bool mask (True = may attend) with 4 axes, broadcastable to [B, h, T_q, T_k].

    Accepts [B, T_k] (a key mask), [B, T_q, T_k] (shared by all heads) or [B, h, T_q, T_k];
    any axis but T_k may also have size 1.
    """
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise ValueError(f"mask must be a bool tensor (True = may attend), got "
                         f"{getattr(mask, 'dtype', type(mask).__name__)}")
    given = tuple(mask.shape)
    if mask.dim() == 2:
        mask = mask[:, None, None, :]
    elif mask.dim() == 3:
        mask = mask[:, None, :, :]
    elif mask.dim() != 4:
        raise ValueError(f"mask must have 2, 3 or 4 axes, got shape {given}")
    if mask.shape[-1] != T_k or any(m not in (1, n) for m, n in zip(mask.shape, (B, n_heads, T_q, T_k))):
        raise ValueError(f"mask of shape {given} does not fit B={B}, h={n_heads}, T_q={T_q}, T_k={T_k}")
    return mask


class MultiHeadAttention(nn.Module):
    """Multi-head attention with four nn.Linear(d_model, d_model) layers w_q, w_k, w_v, w_o."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        if n_heads <= 0 or d_model % n_heads:
            raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        """query [B, T_q, d_model]; key, value [B, T_k, d_model]; mask True = may attend.
        Returns (output [B, T_q, d_model], weights [B, h, T_q, T_k])."""
        B, T_q, T_k = attention_shapes(query, key, value, self.d_model)
        mask = as_attention_mask(mask, B, self.n_heads, T_q, T_k)
        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        output = self.w_o(merge_heads(weights @ v))
        return output, weights


@torch.no_grad()
def copy_from_torch(ours, theirs):
    """Load theirs = nn.MultiheadAttention(d_model, n_heads, batch_first=True) into ours."""
    if not isinstance(theirs, nn.MultiheadAttention) or not theirs.batch_first:
        raise ValueError("theirs must be an nn.MultiheadAttention created with batch_first=True")
    if not theirs._qkv_same_embed_dim:
        raise ValueError("theirs has kdim or vdim different from embed_dim, so it has no in_proj_weight")
    if theirs.embed_dim != ours.d_model or theirs.num_heads != ours.n_heads:
        raise ValueError(f"theirs has embed_dim={theirs.embed_dim}, num_heads={theirs.num_heads}, "
                         f"but ours has d_model={ours.d_model}, n_heads={ours.n_heads}")
    d = ours.d_model
    W, b = theirs.in_proj_weight, theirs.in_proj_bias
    ours.w_q.weight.copy_(W[:d])
    ours.w_k.weight.copy_(W[d:2 * d])
    ours.w_v.weight.copy_(W[2 * d:])
    ours.w_q.bias.copy_(b[:d])
    ours.w_k.bias.copy_(b[d:2 * d])
    ours.w_v.bias.copy_(b[2 * d:])
    return ours
''',
    ),
    Wrong(
        id='h34-05-one-by-one-columns-not-rows',
        exercise='heads_one_by_one',
        cause="For head i you took columns i*d_head:(i+1)*d_head of each weight and multiplied without a transpose. nn.Linear computes x @ weight.T, so output feature f comes from row f: head i's slice is weight[rows] (its rows), used as x @ weight[rows].T.",
        kind='columns instead of rows (transpose removed)',
        wrong_on="d_model=8, 2 heads, random weights, x [2, 5, 8]: every head's queries, keys and values, and so the output, are wrong.",
        source='''import math

import torch
import torch.nn.functional as F
from torch import nn


def split_heads(x, n_heads):
    """[B, T, d_model] -> [B, h, T, d_head]: head i gets features i*d_head:(i+1)*d_head."""
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError(f"x must be a tensor [B, T, d_model], got {getattr(x, 'shape', type(x))}")
    B, T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    d_head = d_model // n_heads
    return x.reshape(B, T, n_heads, d_head).transpose(1, 2)


def merge_heads(x):
    """[B, h, T, d_head] -> [B, T, h*d_head]: the heads of each token side by side."""
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d_head)


def attention_shapes(query, key, value, d_model):
    """(B, T_q, T_k) for valid inputs [B, T, d_model]; a ValueError naming the culprit otherwise."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor) or t.dim() != 3 or t.shape[-1] != d_model:
            got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            raise ValueError(f"{name} must be a tensor [B, T, d_model={d_model}], got {got}")
    if key.shape[:2] != value.shape[:2]:
        raise ValueError(f"key {tuple(key.shape)} and value {tuple(value.shape)} must hold the same tokens")
    if query.shape[0] != key.shape[0]:
        raise ValueError(f"query {tuple(query.shape)} and key {tuple(key.shape)} have different batch sizes")
    return query.shape[0], query.shape[1], key.shape[1]


def as_attention_mask(mask, B, n_heads, T_q, T_k):
    """None, or the bool mask (True = may attend) with 4 axes, broadcastable to [B, h, T_q, T_k].

    Accepts [B, T_k] (a key mask), [B, T_q, T_k] (shared by all heads) or [B, h, T_q, T_k];
    any axis but T_k may also have size 1.
    """
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise ValueError(f"mask must be a bool tensor (True = may attend), got "
                         f"{getattr(mask, 'dtype', type(mask).__name__)}")
    given = tuple(mask.shape)
    if mask.dim() == 2:
        mask = mask[:, None, None, :]
    elif mask.dim() == 3:
        mask = mask[:, None, :, :]
    elif mask.dim() != 4:
        raise ValueError(f"mask must have 2, 3 or 4 axes, got shape {given}")
    if mask.shape[-1] != T_k or any(m not in (1, n) for m, n in zip(mask.shape, (B, n_heads, T_q, T_k))):
        raise ValueError(f"mask of shape {given} does not fit B={B}, h={n_heads}, T_q={T_q}, T_k={T_k}")
    return mask


class MultiHeadAttention(nn.Module):
    """Multi-head attention with four nn.Linear(d_model, d_model) layers w_q, w_k, w_v, w_o."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        if n_heads <= 0 or d_model % n_heads:
            raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        """query [B, T_q, d_model]; key, value [B, T_k, d_model]; mask True = may attend.
        Returns (output [B, T_q, d_model], weights [B, h, T_q, T_k])."""
        B, T_q, T_k = attention_shapes(query, key, value, self.d_model)
        mask = as_attention_mask(mask, B, self.n_heads, T_q, T_k)
        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        output = self.w_o(merge_heads(weights @ v))
        return output, weights


def heads_one_by_one(x, mha):
    """Self-attention of mha on x [B, T, d_model], with a Python loop over the heads."""
    if x.dim() != 3 or x.shape[-1] != mha.d_model:
        raise ValueError(f"x must be [B, T, d_model={mha.d_model}], got shape {tuple(x.shape)}")
    d_head = mha.d_model // mha.n_heads
    outputs, maps = [], []
    for i in range(mha.n_heads):
        rows = slice(i * d_head, (i + 1) * d_head)
        q = x @ mha.w_q.weight[:, rows] + mha.w_q.bias[rows]
        k = x @ mha.w_k.weight[:, rows] + mha.w_k.bias[rows]
        v = x @ mha.w_v.weight[:, rows] + mha.w_v.bias[rows]
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_head), dim=-1)
        outputs.append(weights @ v)
        maps.append(weights)
    output = mha.w_o(torch.cat(outputs, dim=-1))
    return output, torch.stack(maps, dim=1)
''',
    ),
    Wrong(
        id='h34-05-one-by-one-stack-dim0',
        exercise='heads_one_by_one',
        cause='torch.stack(maps) puts the new head axis first, [h, B, T, T]; the weights must be [B, h, T, T]. Stack along dim=1.',
        kind='new axis in the wrong place',
        wrong_on='x [2, 5, 8] with 2 heads: the weights have shape [2, 2, 5, 5] but hold [head, batch] where [batch, head] belongs.',
        source='''import math

import torch
import torch.nn.functional as F
from torch import nn


def split_heads(x, n_heads):
    """[B, T, d_model] -> [B, h, T, d_head]: head i gets features i*d_head:(i+1)*d_head."""
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError(f"x must be a tensor [B, T, d_model], got {getattr(x, 'shape', type(x))}")
    B, T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    d_head = d_model // n_heads
    return x.reshape(B, T, n_heads, d_head).transpose(1, 2)


def merge_heads(x):
    """[B, h, T, d_head] -> [B, T, h*d_head]: the heads of each token side by side."""
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d_head)


def attention_shapes(query, key, value, d_model):
    """(B, T_q, T_k) for valid inputs [B, T, d_model]; a ValueError naming the culprit otherwise."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor) or t.dim() != 3 or t.shape[-1] != d_model:
            got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            raise ValueError(f"{name} must be a tensor [B, T, d_model={d_model}], got {got}")
    if key.shape[:2] != value.shape[:2]:
        raise ValueError(f"key {tuple(key.shape)} and value {tuple(value.shape)} must hold the same tokens")
    if query.shape[0] != key.shape[0]:
        raise ValueError(f"query {tuple(query.shape)} and key {tuple(key.shape)} have different batch sizes")
    return query.shape[0], query.shape[1], key.shape[1]


def as_attention_mask(mask, B, n_heads, T_q, T_k):
    """None, or the bool mask (True = may attend) with 4 axes, broadcastable to [B, h, T_q, T_k].

    Accepts [B, T_k] (a key mask), [B, T_q, T_k] (shared by all heads) or [B, h, T_q, T_k];
    any axis but T_k may also have size 1.
    """
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise ValueError(f"mask must be a bool tensor (True = may attend), got "
                         f"{getattr(mask, 'dtype', type(mask).__name__)}")
    given = tuple(mask.shape)
    if mask.dim() == 2:
        mask = mask[:, None, None, :]
    elif mask.dim() == 3:
        mask = mask[:, None, :, :]
    elif mask.dim() != 4:
        raise ValueError(f"mask must have 2, 3 or 4 axes, got shape {given}")
    if mask.shape[-1] != T_k or any(m not in (1, n) for m, n in zip(mask.shape, (B, n_heads, T_q, T_k))):
        raise ValueError(f"mask of shape {given} does not fit B={B}, h={n_heads}, T_q={T_q}, T_k={T_k}")
    return mask


class MultiHeadAttention(nn.Module):
    """Multi-head attention with four nn.Linear(d_model, d_model) layers w_q, w_k, w_v, w_o."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        if n_heads <= 0 or d_model % n_heads:
            raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        """query [B, T_q, d_model]; key, value [B, T_k, d_model]; mask True = may attend.
        Returns (output [B, T_q, d_model], weights [B, h, T_q, T_k])."""
        B, T_q, T_k = attention_shapes(query, key, value, self.d_model)
        mask = as_attention_mask(mask, B, self.n_heads, T_q, T_k)
        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        output = self.w_o(merge_heads(weights @ v))
        return output, weights


def heads_one_by_one(x, mha):
    """Self-attention of mha on x [B, T, d_model], with a Python loop over the heads."""
    if x.dim() != 3 or x.shape[-1] != mha.d_model:
        raise ValueError(f"x must be [B, T, d_model={mha.d_model}], got shape {tuple(x.shape)}")
    d_head = mha.d_model // mha.n_heads
    outputs, maps = [], []
    for i in range(mha.n_heads):
        rows = slice(i * d_head, (i + 1) * d_head)
        q = x @ mha.w_q.weight[rows].T + mha.w_q.bias[rows]
        k = x @ mha.w_k.weight[rows].T + mha.w_k.bias[rows]
        v = x @ mha.w_v.weight[rows].T + mha.w_v.bias[rows]
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_head), dim=-1)
        outputs.append(weights @ v)
        maps.append(weights)
    output = mha.w_o(torch.cat(outputs, dim=-1))
    return output, torch.stack(maps)
''',
    ),
    Wrong(
        id='h34-05-one-by-one-value-bias-left-out',
        exercise='heads_one_by_one',
        cause="The head's values leave out w_v's bias: v = x @ W_v[rows].T needs + mha.w_v.bias[rows], the same slice as the weight's rows, as you did for q and k.",
        kind='operand left out (a bias)',
        wrong_on='any module with a non-zero w_v bias, e.g. random biases and x [2, 5, 8]: the weights are right, the output is off by A_i b_v,i U_i per head.',
        source='''import math

import torch
import torch.nn.functional as F
from torch import nn


def split_heads(x, n_heads):
    """[B, T, d_model] -> [B, h, T, d_head]: head i gets features i*d_head:(i+1)*d_head."""
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError(f"x must be a tensor [B, T, d_model], got {getattr(x, 'shape', type(x))}")
    B, T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    d_head = d_model // n_heads
    return x.reshape(B, T, n_heads, d_head).transpose(1, 2)


def merge_heads(x):
    """[B, h, T, d_head] -> [B, T, h*d_head]: the heads of each token side by side."""
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d_head)


def attention_shapes(query, key, value, d_model):
    """(B, T_q, T_k) for valid inputs [B, T, d_model]; a ValueError naming the culprit otherwise."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor) or t.dim() != 3 or t.shape[-1] != d_model:
            got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            raise ValueError(f"{name} must be a tensor [B, T, d_model={d_model}], got {got}")
    if key.shape[:2] != value.shape[:2]:
        raise ValueError(f"key {tuple(key.shape)} and value {tuple(value.shape)} must hold the same tokens")
    if query.shape[0] != key.shape[0]:
        raise ValueError(f"query {tuple(query.shape)} and key {tuple(key.shape)} have different batch sizes")
    return query.shape[0], query.shape[1], key.shape[1]


def as_attention_mask(mask, B, n_heads, T_q, T_k):
    """None, or the bool mask (True = may attend) with 4 axes, broadcastable to [B, h, T_q, T_k].

    Accepts [B, T_k] (a key mask), [B, T_q, T_k] (shared by all heads) or [B, h, T_q, T_k];
    any axis but T_k may also have size 1.
    """
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise ValueError(f"mask must be a bool tensor (True = may attend), got "
                         f"{getattr(mask, 'dtype', type(mask).__name__)}")
    given = tuple(mask.shape)
    if mask.dim() == 2:
        mask = mask[:, None, None, :]
    elif mask.dim() == 3:
        mask = mask[:, None, :, :]
    elif mask.dim() != 4:
        raise ValueError(f"mask must have 2, 3 or 4 axes, got shape {given}")
    if mask.shape[-1] != T_k or any(m not in (1, n) for m, n in zip(mask.shape, (B, n_heads, T_q, T_k))):
        raise ValueError(f"mask of shape {given} does not fit B={B}, h={n_heads}, T_q={T_q}, T_k={T_k}")
    return mask


class MultiHeadAttention(nn.Module):
    """Multi-head attention with four nn.Linear(d_model, d_model) layers w_q, w_k, w_v, w_o."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        if n_heads <= 0 or d_model % n_heads:
            raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        """query [B, T_q, d_model]; key, value [B, T_k, d_model]; mask True = may attend.
        Returns (output [B, T_q, d_model], weights [B, h, T_q, T_k])."""
        B, T_q, T_k = attention_shapes(query, key, value, self.d_model)
        mask = as_attention_mask(mask, B, self.n_heads, T_q, T_k)
        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        output = self.w_o(merge_heads(weights @ v))
        return output, weights


def heads_one_by_one(x, mha):
    """Self-attention of mha on x [B, T, d_model], with a Python loop over the heads."""
    if x.dim() != 3 or x.shape[-1] != mha.d_model:
        raise ValueError(f"x must be [B, T, d_model={mha.d_model}], got shape {tuple(x.shape)}")
    d_head = mha.d_model // mha.n_heads
    outputs, maps = [], []
    for i in range(mha.n_heads):
        rows = slice(i * d_head, (i + 1) * d_head)
        q = x @ mha.w_q.weight[rows].T + mha.w_q.bias[rows]
        k = x @ mha.w_k.weight[rows].T + mha.w_k.bias[rows]
        v = x @ mha.w_v.weight[rows].T
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_head), dim=-1)
        outputs.append(weights @ v)
        maps.append(weights)
    output = mha.w_o(torch.cat(outputs, dim=-1))
    return output, torch.stack(maps, dim=1)
''',
    ),
    Wrong(
        id='h34-05-one-by-one-sqrt-forgotten',
        exercise='heads_one_by_one',
        cause="You divide each head's scores by d_head instead of sqrt(d_head). The scale of scaled dot-product attention is the square root: / math.sqrt(d_head).",
        kind='sqrt forgotten',
        wrong_on='d_model=16, 2 heads (d_head=8), x [2, 5, 16]: the scores are divided by 8 instead of 2.83, so the weights are too flat.',
        source='''import math

import torch
import torch.nn.functional as F
from torch import nn


def split_heads(x, n_heads):
    """[B, T, d_model] -> [B, h, T, d_head]: head i gets features i*d_head:(i+1)*d_head."""
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError(f"x must be a tensor [B, T, d_model], got {getattr(x, 'shape', type(x))}")
    B, T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    d_head = d_model // n_heads
    return x.reshape(B, T, n_heads, d_head).transpose(1, 2)


def merge_heads(x):
    """[B, h, T, d_head] -> [B, T, h*d_head]: the heads of each token side by side."""
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d_head)


def attention_shapes(query, key, value, d_model):
    """(B, T_q, T_k) for valid inputs [B, T, d_model]; a ValueError naming the culprit otherwise."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor) or t.dim() != 3 or t.shape[-1] != d_model:
            got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            raise ValueError(f"{name} must be a tensor [B, T, d_model={d_model}], got {got}")
    if key.shape[:2] != value.shape[:2]:
        raise ValueError(f"key {tuple(key.shape)} and value {tuple(value.shape)} must hold the same tokens")
    if query.shape[0] != key.shape[0]:
        raise ValueError(f"query {tuple(query.shape)} and key {tuple(key.shape)} have different batch sizes")
    return query.shape[0], query.shape[1], key.shape[1]


def as_attention_mask(mask, B, n_heads, T_q, T_k):
    """None, or the bool mask (True = may attend) with 4 axes, broadcastable to [B, h, T_q, T_k].

    Accepts [B, T_k] (a key mask), [B, T_q, T_k] (shared by all heads) or [B, h, T_q, T_k];
    any axis but T_k may also have size 1.
    """
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise ValueError(f"mask must be a bool tensor (True = may attend), got "
                         f"{getattr(mask, 'dtype', type(mask).__name__)}")
    given = tuple(mask.shape)
    if mask.dim() == 2:
        mask = mask[:, None, None, :]
    elif mask.dim() == 3:
        mask = mask[:, None, :, :]
    elif mask.dim() != 4:
        raise ValueError(f"mask must have 2, 3 or 4 axes, got shape {given}")
    if mask.shape[-1] != T_k or any(m not in (1, n) for m, n in zip(mask.shape, (B, n_heads, T_q, T_k))):
        raise ValueError(f"mask of shape {given} does not fit B={B}, h={n_heads}, T_q={T_q}, T_k={T_k}")
    return mask


class MultiHeadAttention(nn.Module):
    """Multi-head attention with four nn.Linear(d_model, d_model) layers w_q, w_k, w_v, w_o."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        if n_heads <= 0 or d_model % n_heads:
            raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        """query [B, T_q, d_model]; key, value [B, T_k, d_model]; mask True = may attend.
        Returns (output [B, T_q, d_model], weights [B, h, T_q, T_k])."""
        B, T_q, T_k = attention_shapes(query, key, value, self.d_model)
        mask = as_attention_mask(mask, B, self.n_heads, T_q, T_k)
        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        output = self.w_o(merge_heads(weights @ v))
        return output, weights


def heads_one_by_one(x, mha):
    """Self-attention of mha on x [B, T, d_model], with a Python loop over the heads."""
    if x.dim() != 3 or x.shape[-1] != mha.d_model:
        raise ValueError(f"x must be [B, T, d_model={mha.d_model}], got shape {tuple(x.shape)}")
    d_head = mha.d_model // mha.n_heads
    outputs, maps = [], []
    for i in range(mha.n_heads):
        rows = slice(i * d_head, (i + 1) * d_head)
        q = x @ mha.w_q.weight[rows].T + mha.w_q.bias[rows]
        k = x @ mha.w_k.weight[rows].T + mha.w_k.bias[rows]
        v = x @ mha.w_v.weight[rows].T + mha.w_v.bias[rows]
        weights = torch.softmax(q @ k.transpose(-2, -1) / d_head, dim=-1)
        outputs.append(weights @ v)
        maps.append(weights)
    output = mha.w_o(torch.cat(outputs, dim=-1))
    return output, torch.stack(maps, dim=1)
''',
    ),
    Wrong(
        id='h34-05-count-no-biases',
        exercise='mha_parameter_count',
        cause='You counted only the weight matrices. Each of the four nn.Linear layers also has a bias of d_model numbers, so it is 4 * (d_model**2 + d_model).',
        kind='operand left out (biases)',
        wrong_on='d_model=8, n_heads=2: returns 256 instead of 288.',
        source='''import math

import torch
import torch.nn.functional as F
from torch import nn


def mha_parameter_count(d_model, n_heads):
    """The number of learned numbers in MultiHeadAttention(d_model, n_heads)."""
    for name, value in (("d_model", d_model), ("n_heads", n_heads)):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    per_layer = d_model * d_model                # weight [d_model, d_model]
    return 4 * per_layer
''',
    ),
    Wrong(
        id='h34-05-count-three-layers',
        exercise='mha_parameter_count',
        cause='You counted the three input projections and forgot the output projection w_o, which is a fourth nn.Linear(d_model, d_model): the total is 4 * (d_model**2 + d_model).',
        kind='a term left out (the output layer)',
        wrong_on='d_model=8, n_heads=2: returns 216 instead of 288.',
        source='''import math

import torch
import torch.nn.functional as F
from torch import nn


def mha_parameter_count(d_model, n_heads):
    """The number of learned numbers in MultiHeadAttention(d_model, n_heads)."""
    for name, value in (("d_model", d_model), ("n_heads", n_heads)):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    per_layer = d_model * d_model + d_model      # weight [d_model, d_model] and bias [d_model]
    return 3 * per_layer      # W_q, W_k, W_v
''',
    ),
    Wrong(
        id='h34-05-count-times-heads',
        exercise='mha_parameter_count',
        cause='You multiplied by n_heads as if every head had its own full-size layers. The heads share the same four d_model x d_model layers; each head reads only its d_head slice, so the count does not depend on n_heads.',
        kind='a factor applied that does not belong',
        wrong_on='d_model=8, n_heads=2: returns 576 instead of 288.',
        source='''import math

import torch
import torch.nn.functional as F
from torch import nn


def mha_parameter_count(d_model, n_heads):
    """The number of learned numbers in MultiHeadAttention(d_model, n_heads)."""
    for name, value in (("d_model", d_model), ("n_heads", n_heads)):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    per_layer = d_model * d_model + d_model      # weight [d_model, d_model] and bias [d_model]
    return n_heads * 4 * per_layer      # every head has its own layers
''',
    ),
    Wrong(
        id='h34-05-down-up-down-columns',
        exercise='value_down_up',
        cause="For value-down you took the head's columns of w_v.weight. That has the right shape, but w_v's output feature f (the head's value feature) is row f of the weight: down is the head's rows, transposed, mha.w_v.weight[features].T.",
        kind='columns instead of rows (right shape, wrong numbers)',
        wrong_on="d_model=8, n_heads=2, head 1, random weights: down has shape [8, 4] but holds w_v's input-feature columns 4:8, not its output rows 4:8 transposed.",
        source='''import math

import torch
import torch.nn.functional as F
from torch import nn


def split_heads(x, n_heads):
    """[B, T, d_model] -> [B, h, T, d_head]: head i gets features i*d_head:(i+1)*d_head."""
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError(f"x must be a tensor [B, T, d_model], got {getattr(x, 'shape', type(x))}")
    B, T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    d_head = d_model // n_heads
    return x.reshape(B, T, n_heads, d_head).transpose(1, 2)


def merge_heads(x):
    """[B, h, T, d_head] -> [B, T, h*d_head]: the heads of each token side by side."""
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d_head)


def attention_shapes(query, key, value, d_model):
    """(B, T_q, T_k) for valid inputs [B, T, d_model]; a ValueError naming the culprit otherwise."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor) or t.dim() != 3 or t.shape[-1] != d_model:
            got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            raise ValueError(f"{name} must be a tensor [B, T, d_model={d_model}], got {got}")
    if key.shape[:2] != value.shape[:2]:
        raise ValueError(f"key {tuple(key.shape)} and value {tuple(value.shape)} must hold the same tokens")
    if query.shape[0] != key.shape[0]:
        raise ValueError(f"query {tuple(query.shape)} and key {tuple(key.shape)} have different batch sizes")
    return query.shape[0], query.shape[1], key.shape[1]


def as_attention_mask(mask, B, n_heads, T_q, T_k):
    """None, or the bool mask (True = may attend) with 4 axes, broadcastable to [B, h, T_q, T_k].

    Accepts [B, T_k] (a key mask), [B, T_q, T_k] (shared by all heads) or [B, h, T_q, T_k];
    any axis but T_k may also have size 1.
    """
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise ValueError(f"mask must be a bool tensor (True = may attend), got "
                         f"{getattr(mask, 'dtype', type(mask).__name__)}")
    given = tuple(mask.shape)
    if mask.dim() == 2:
        mask = mask[:, None, None, :]
    elif mask.dim() == 3:
        mask = mask[:, None, :, :]
    elif mask.dim() != 4:
        raise ValueError(f"mask must have 2, 3 or 4 axes, got shape {given}")
    if mask.shape[-1] != T_k or any(m not in (1, n) for m, n in zip(mask.shape, (B, n_heads, T_q, T_k))):
        raise ValueError(f"mask of shape {given} does not fit B={B}, h={n_heads}, T_q={T_q}, T_k={T_k}")
    return mask


class MultiHeadAttention(nn.Module):
    """Multi-head attention with four nn.Linear(d_model, d_model) layers w_q, w_k, w_v, w_o."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        if n_heads <= 0 or d_model % n_heads:
            raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        """query [B, T_q, d_model]; key, value [B, T_k, d_model]; mask True = may attend.
        Returns (output [B, T_q, d_model], weights [B, h, T_q, T_k])."""
        B, T_q, T_k = attention_shapes(query, key, value, self.d_model)
        mask = as_attention_mask(mask, B, self.n_heads, T_q, T_k)
        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        output = self.w_o(merge_heads(weights @ v))
        return output, weights


def value_down_up(mha, head):
    """(down [d_model, d_head], up [d_head, d_model]) of one head's value path."""
    if isinstance(head, bool) or not isinstance(head, int) or not 0 <= head < mha.n_heads:
        raise ValueError(f"head must be an int from 0 to {mha.n_heads - 1}, got {head!r}")
    d_head = mha.d_model // mha.n_heads
    features = slice(head * d_head, (head + 1) * d_head)   # this head's d_head features
    down = mha.w_v.weight[:, features]         # [d_model, d_head]
    up = mha.w_o.weight[:, features].T         # columns of w_o = its input features
    return down, up
''',
    ),
    Wrong(
        id='h34-05-down-up-up-rows',
        exercise='value_down_up',
        cause="For value-up you took the head's rows of w_o.weight. Head i's numbers enter w_o as its input features, and an input feature of nn.Linear is a column of the weight: up is mha.w_o.weight[:, features].T.",
        kind='rows instead of columns (right shape, wrong numbers)',
        wrong_on='d_model=8, n_heads=2, head 1, random weights: up has shape [4, 8] but holds rows 4:8 of w_o.weight instead of its columns 4:8 transposed.',
        source='''import math

import torch
import torch.nn.functional as F
from torch import nn


def split_heads(x, n_heads):
    """[B, T, d_model] -> [B, h, T, d_head]: head i gets features i*d_head:(i+1)*d_head."""
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError(f"x must be a tensor [B, T, d_model], got {getattr(x, 'shape', type(x))}")
    B, T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    d_head = d_model // n_heads
    return x.reshape(B, T, n_heads, d_head).transpose(1, 2)


def merge_heads(x):
    """[B, h, T, d_head] -> [B, T, h*d_head]: the heads of each token side by side."""
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d_head)


def attention_shapes(query, key, value, d_model):
    """(B, T_q, T_k) for valid inputs [B, T, d_model]; a ValueError naming the culprit otherwise."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor) or t.dim() != 3 or t.shape[-1] != d_model:
            got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            raise ValueError(f"{name} must be a tensor [B, T, d_model={d_model}], got {got}")
    if key.shape[:2] != value.shape[:2]:
        raise ValueError(f"key {tuple(key.shape)} and value {tuple(value.shape)} must hold the same tokens")
    if query.shape[0] != key.shape[0]:
        raise ValueError(f"query {tuple(query.shape)} and key {tuple(key.shape)} have different batch sizes")
    return query.shape[0], query.shape[1], key.shape[1]


def as_attention_mask(mask, B, n_heads, T_q, T_k):
    """None, or the bool mask (True = may attend) with 4 axes, broadcastable to [B, h, T_q, T_k].

    Accepts [B, T_k] (a key mask), [B, T_q, T_k] (shared by all heads) or [B, h, T_q, T_k];
    any axis but T_k may also have size 1.
    """
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise ValueError(f"mask must be a bool tensor (True = may attend), got "
                         f"{getattr(mask, 'dtype', type(mask).__name__)}")
    given = tuple(mask.shape)
    if mask.dim() == 2:
        mask = mask[:, None, None, :]
    elif mask.dim() == 3:
        mask = mask[:, None, :, :]
    elif mask.dim() != 4:
        raise ValueError(f"mask must have 2, 3 or 4 axes, got shape {given}")
    if mask.shape[-1] != T_k or any(m not in (1, n) for m, n in zip(mask.shape, (B, n_heads, T_q, T_k))):
        raise ValueError(f"mask of shape {given} does not fit B={B}, h={n_heads}, T_q={T_q}, T_k={T_k}")
    return mask


class MultiHeadAttention(nn.Module):
    """Multi-head attention with four nn.Linear(d_model, d_model) layers w_q, w_k, w_v, w_o."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        if n_heads <= 0 or d_model % n_heads:
            raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        """query [B, T_q, d_model]; key, value [B, T_k, d_model]; mask True = may attend.
        Returns (output [B, T_q, d_model], weights [B, h, T_q, T_k])."""
        B, T_q, T_k = attention_shapes(query, key, value, self.d_model)
        mask = as_attention_mask(mask, B, self.n_heads, T_q, T_k)
        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        output = self.w_o(merge_heads(weights @ v))
        return output, weights


def value_down_up(mha, head):
    """(down [d_model, d_head], up [d_head, d_model]) of one head's value path."""
    if isinstance(head, bool) or not isinstance(head, int) or not 0 <= head < mha.n_heads:
        raise ValueError(f"head must be an int from 0 to {mha.n_heads - 1}, got {head!r}")
    d_head = mha.d_model // mha.n_heads
    features = slice(head * d_head, (head + 1) * d_head)   # this head's d_head features
    down = mha.w_v.weight[features].T          # rows of w_v = its output features
    up = mha.w_o.weight[features]              # [d_head, d_model]
    return down, up
''',
    ),
    Wrong(
        id='h34-05-down-up-returned-swapped',
        exercise='value_down_up',
        cause='The function returns (up, down); the exercise asks for (down, up), value-down first.',
        kind='two outputs swapped',
        wrong_on='d_model=8, n_heads=2, head 0: the first item has shape [4, 8] instead of [8, 4].',
        source='''import math

import torch
import torch.nn.functional as F
from torch import nn


def split_heads(x, n_heads):
    """[B, T, d_model] -> [B, h, T, d_head]: head i gets features i*d_head:(i+1)*d_head."""
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError(f"x must be a tensor [B, T, d_model], got {getattr(x, 'shape', type(x))}")
    B, T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    d_head = d_model // n_heads
    return x.reshape(B, T, n_heads, d_head).transpose(1, 2)


def merge_heads(x):
    """[B, h, T, d_head] -> [B, T, h*d_head]: the heads of each token side by side."""
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d_head)


def attention_shapes(query, key, value, d_model):
    """(B, T_q, T_k) for valid inputs [B, T, d_model]; a ValueError naming the culprit otherwise."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor) or t.dim() != 3 or t.shape[-1] != d_model:
            got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            raise ValueError(f"{name} must be a tensor [B, T, d_model={d_model}], got {got}")
    if key.shape[:2] != value.shape[:2]:
        raise ValueError(f"key {tuple(key.shape)} and value {tuple(value.shape)} must hold the same tokens")
    if query.shape[0] != key.shape[0]:
        raise ValueError(f"query {tuple(query.shape)} and key {tuple(key.shape)} have different batch sizes")
    return query.shape[0], query.shape[1], key.shape[1]


def as_attention_mask(mask, B, n_heads, T_q, T_k):
    """None, or the bool mask (True = may attend) with 4 axes, broadcastable to [B, h, T_q, T_k].

    Accepts [B, T_k] (a key mask), [B, T_q, T_k] (shared by all heads) or [B, h, T_q, T_k];
    any axis but T_k may also have size 1.
    """
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise ValueError(f"mask must be a bool tensor (True = may attend), got "
                         f"{getattr(mask, 'dtype', type(mask).__name__)}")
    given = tuple(mask.shape)
    if mask.dim() == 2:
        mask = mask[:, None, None, :]
    elif mask.dim() == 3:
        mask = mask[:, None, :, :]
    elif mask.dim() != 4:
        raise ValueError(f"mask must have 2, 3 or 4 axes, got shape {given}")
    if mask.shape[-1] != T_k or any(m not in (1, n) for m, n in zip(mask.shape, (B, n_heads, T_q, T_k))):
        raise ValueError(f"mask of shape {given} does not fit B={B}, h={n_heads}, T_q={T_q}, T_k={T_k}")
    return mask


class MultiHeadAttention(nn.Module):
    """Multi-head attention with four nn.Linear(d_model, d_model) layers w_q, w_k, w_v, w_o."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        if n_heads <= 0 or d_model % n_heads:
            raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        """query [B, T_q, d_model]; key, value [B, T_k, d_model]; mask True = may attend.
        Returns (output [B, T_q, d_model], weights [B, h, T_q, T_k])."""
        B, T_q, T_k = attention_shapes(query, key, value, self.d_model)
        mask = as_attention_mask(mask, B, self.n_heads, T_q, T_k)
        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        output = self.w_o(merge_heads(weights @ v))
        return output, weights


def value_down_up(mha, head):
    """(down [d_model, d_head], up [d_head, d_model]) of one head's value path."""
    if isinstance(head, bool) or not isinstance(head, int) or not 0 <= head < mha.n_heads:
        raise ValueError(f"head must be an int from 0 to {mha.n_heads - 1}, got {head!r}")
    d_head = mha.d_model // mha.n_heads
    features = slice(head * d_head, (head + 1) * d_head)   # this head's d_head features
    down = mha.w_v.weight[features].T          # rows of w_v = its output features
    up = mha.w_o.weight[:, features].T         # columns of w_o = its input features
    return up, down
''',
    ),
    Wrong(
        id='h34-05-down-up-down-not-transposed',
        exercise='value_down_up',
        cause="You found the right rows of w_v.weight for value-down but left them as [d_head, d_model]. In the row convention x @ down must give the head's values, so down is their transpose, [d_model, d_head]: add .T.",
        kind='transpose left out',
        wrong_on='d_model=8, n_heads=2, head 0: down has shape [4, 8] instead of [8, 4].',
        source='''import math

import torch
import torch.nn.functional as F
from torch import nn


def split_heads(x, n_heads):
    """[B, T, d_model] -> [B, h, T, d_head]: head i gets features i*d_head:(i+1)*d_head."""
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError(f"x must be a tensor [B, T, d_model], got {getattr(x, 'shape', type(x))}")
    B, T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    d_head = d_model // n_heads
    return x.reshape(B, T, n_heads, d_head).transpose(1, 2)


def merge_heads(x):
    """[B, h, T, d_head] -> [B, T, h*d_head]: the heads of each token side by side."""
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d_head)


def attention_shapes(query, key, value, d_model):
    """(B, T_q, T_k) for valid inputs [B, T, d_model]; a ValueError naming the culprit otherwise."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor) or t.dim() != 3 or t.shape[-1] != d_model:
            got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            raise ValueError(f"{name} must be a tensor [B, T, d_model={d_model}], got {got}")
    if key.shape[:2] != value.shape[:2]:
        raise ValueError(f"key {tuple(key.shape)} and value {tuple(value.shape)} must hold the same tokens")
    if query.shape[0] != key.shape[0]:
        raise ValueError(f"query {tuple(query.shape)} and key {tuple(key.shape)} have different batch sizes")
    return query.shape[0], query.shape[1], key.shape[1]


def as_attention_mask(mask, B, n_heads, T_q, T_k):
    """None, or the bool mask (True = may attend) with 4 axes, broadcastable to [B, h, T_q, T_k].

    Accepts [B, T_k] (a key mask), [B, T_q, T_k] (shared by all heads) or [B, h, T_q, T_k];
    any axis but T_k may also have size 1.
    """
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise ValueError(f"mask must be a bool tensor (True = may attend), got "
                         f"{getattr(mask, 'dtype', type(mask).__name__)}")
    given = tuple(mask.shape)
    if mask.dim() == 2:
        mask = mask[:, None, None, :]
    elif mask.dim() == 3:
        mask = mask[:, None, :, :]
    elif mask.dim() != 4:
        raise ValueError(f"mask must have 2, 3 or 4 axes, got shape {given}")
    if mask.shape[-1] != T_k or any(m not in (1, n) for m, n in zip(mask.shape, (B, n_heads, T_q, T_k))):
        raise ValueError(f"mask of shape {given} does not fit B={B}, h={n_heads}, T_q={T_q}, T_k={T_k}")
    return mask


class MultiHeadAttention(nn.Module):
    """Multi-head attention with four nn.Linear(d_model, d_model) layers w_q, w_k, w_v, w_o."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        if n_heads <= 0 or d_model % n_heads:
            raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        """query [B, T_q, d_model]; key, value [B, T_k, d_model]; mask True = may attend.
        Returns (output [B, T_q, d_model], weights [B, h, T_q, T_k])."""
        B, T_q, T_k = attention_shapes(query, key, value, self.d_model)
        mask = as_attention_mask(mask, B, self.n_heads, T_q, T_k)
        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        output = self.w_o(merge_heads(weights @ v))
        return output, weights


def value_down_up(mha, head):
    """(down [d_model, d_head], up [d_head, d_model]) of one head's value path."""
    if isinstance(head, bool) or not isinstance(head, int) or not 0 <= head < mha.n_heads:
        raise ValueError(f"head must be an int from 0 to {mha.n_heads - 1}, got {head!r}")
    d_head = mha.d_model // mha.n_heads
    features = slice(head * d_head, (head + 1) * d_head)   # this head's d_head features
    down = mha.w_v.weight[features]            # rows of w_v = its output features
    up = mha.w_o.weight[:, features].T         # columns of w_o = its input features
    return down, up
''',
    ),
    Wrong(
        id='h34-06-block-post-norm',
        exercise='Block',
        cause='With residual=True you wrote a post-norm block, ln1(x + attn(x)) and ln2(x + mlp(x)): the norms sit on the stream after each addition. In a pre-norm block the norm feeds the sublayer and the stream is never normalised: x = x + attn(ln1(x)), then x = x + mlp(ln2(x)).',
        kind='norm in the wrong place (post-norm)',
        wrong_on='Block(8, 2, 16) with random weights, x [2, 5, 8], residual=True: every output differs (each row of it is normalised by ln2).',
        source='''import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    MODEL, TASK, LEARNING_RATE, as_stream, as_tokens, as_hidden, check_block_sizes,
    check_model_sizes, check_steps_and_seed, check_depths, layer_outputs, progress,
)


class Block(nn.Module):
    """Pre-norm transformer block; x: [batch, tokens, d_model] -> the same shape.

    residual=True:   x = x + attn(ln1(x)),  then  x = x + mlp(ln2(x))
    residual=False:  x = attn(ln1(x)),      then  x = mlp(ln2(x))
    """

    def __init__(self, d_model, n_heads, d_ff, residual=True):
        super().__init__()
        check_block_sizes(d_model, n_heads, d_ff)    # ValueError for sizes that do not fit
        self.d_model, self.residual = d_model, bool(residual)
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x):
        x = as_stream(x, self.d_model)    # ValueError unless x is [batch, tokens, d_model]
        if self.residual:
            attended, _ = self.attn(x, x, x, need_weights=False)
            x = self.ln1(x + attended)
            x = self.ln2(x + self.mlp(x))
        else:
            h = self.ln1(x)
            attended, _ = self.attn(h, h, h, need_weights=False)
            x = self.mlp(self.ln2(attended))
        return x
''',
    ),
    Wrong(
        id='h34-06-block-skip-carries-normed',
        exercise='Block',
        cause="You overwrote x with ln1(x) at the start of forward, so the first skip adds the normalised copy instead of the stream itself. Keep the norm's output in its own variable (h = self.ln1(x)) and add attention's output to the original x.",
        kind='skip carries the normalised input (variable overwritten)',
        wrong_on='Block(8, 2, 16) with random weights and a LayerNorm whose weight is not 1, x [2, 5, 8], residual=True: the output differs by x - ln1(x).',
        source='''import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    MODEL, TASK, LEARNING_RATE, as_stream, as_tokens, as_hidden, check_block_sizes,
    check_model_sizes, check_steps_and_seed, check_depths, layer_outputs, progress,
)


class Block(nn.Module):
    """Pre-norm transformer block; x: [batch, tokens, d_model] -> the same shape.

    residual=True:   x = x + attn(ln1(x)),  then  x = x + mlp(ln2(x))
    residual=False:  x = attn(ln1(x)),      then  x = mlp(ln2(x))
    """

    def __init__(self, d_model, n_heads, d_ff, residual=True):
        super().__init__()
        check_block_sizes(d_model, n_heads, d_ff)    # ValueError for sizes that do not fit
        self.d_model, self.residual = d_model, bool(residual)
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x):
        x = as_stream(x, self.d_model)    # ValueError unless x is [batch, tokens, d_model]
        x = self.ln1(x)
        attended, _ = self.attn(x, x, x, need_weights=False)
        if self.residual:
            x = x + attended
            x = x + self.mlp(self.ln2(x))
        else:
            x = attended
            x = self.mlp(self.ln2(x))
        return x
''',
    ),
    Wrong(
        id='h34-06-block-parallel-branches',
        exercise='Block',
        cause="With residual=True the MLP branch reads ln2 of the block's input instead of the stream after the attention update: both branches run in parallel on the same x. The MLP must see the updated stream: first x = x + attn(...), then x = x + self.mlp(self.ln2(x)).",
        kind='a statement merged (the second sublayer reads the old stream)',
        wrong_on="Block(8, 2, 16) with random weights, x [2, 5, 8], residual=True: the MLP's input misses attention's update, so the output differs.",
        source='''import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    MODEL, TASK, LEARNING_RATE, as_stream, as_tokens, as_hidden, check_block_sizes,
    check_model_sizes, check_steps_and_seed, check_depths, layer_outputs, progress,
)


class Block(nn.Module):
    """Pre-norm transformer block; x: [batch, tokens, d_model] -> the same shape.

    residual=True:   x = x + attn(ln1(x)),  then  x = x + mlp(ln2(x))
    residual=False:  x = attn(ln1(x)),      then  x = mlp(ln2(x))
    """

    def __init__(self, d_model, n_heads, d_ff, residual=True):
        super().__init__()
        check_block_sizes(d_model, n_heads, d_ff)    # ValueError for sizes that do not fit
        self.d_model, self.residual = d_model, bool(residual)
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x):
        x = as_stream(x, self.d_model)    # ValueError unless x is [batch, tokens, d_model]
        h = self.ln1(x)
        attended, _ = self.attn(h, h, h, need_weights=False)
        if self.residual:
            x = x + attended + self.mlp(self.ln2(x))
        else:
            x = attended
            x = self.mlp(self.ln2(x))
        return x
''',
    ),
    Wrong(
        id='h34-06-block-no-residual-ln2-dropped',
        exercise='Block',
        cause="In the residual=False branch you feed attention's output straight into the MLP and skip ln2. Removing the skips removes the additions only; the norms stay: x = self.mlp(self.ln2(attn(ln1(x)))).",
        kind='a layer left out (only in one branch)',
        wrong_on='Block(8, 2, 16, residual=False) with random weights, x [2, 5, 8]: the output differs; with residual=True it is right.',
        source='''import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    MODEL, TASK, LEARNING_RATE, as_stream, as_tokens, as_hidden, check_block_sizes,
    check_model_sizes, check_steps_and_seed, check_depths, layer_outputs, progress,
)


class Block(nn.Module):
    """Pre-norm transformer block; x: [batch, tokens, d_model] -> the same shape.

    residual=True:   x = x + attn(ln1(x)),  then  x = x + mlp(ln2(x))
    residual=False:  x = attn(ln1(x)),      then  x = mlp(ln2(x))
    """

    def __init__(self, d_model, n_heads, d_ff, residual=True):
        super().__init__()
        check_block_sizes(d_model, n_heads, d_ff)    # ValueError for sizes that do not fit
        self.d_model, self.residual = d_model, bool(residual)
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x):
        x = as_stream(x, self.d_model)    # ValueError unless x is [batch, tokens, d_model]
        h = self.ln1(x)
        attended, _ = self.attn(h, h, h, need_weights=False)
        if self.residual:
            x = x + attended
            x = x + self.mlp(self.ln2(x))
        else:
            x = self.mlp(attended)
        return x
''',
    ),
    Wrong(
        id='h34-06-block-causal-mask',
        exercise='Block',
        cause='You passed a causal attn_mask, out of habit from language models. In this lesson every token may attend to every token, later ones included: call self.attn(h, h, h) with no mask.',
        kind='a mask that does not belong (rule of the lesson broken)',
        wrong_on='Block(8, 2, 16) with random weights, x [2, 5, 8]: every position but the last sees fewer keys than it should, so the outputs of positions 0..3 differ.',
        source='''import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    MODEL, TASK, LEARNING_RATE, as_stream, as_tokens, as_hidden, check_block_sizes,
    check_model_sizes, check_steps_and_seed, check_depths, layer_outputs, progress,
)


class Block(nn.Module):
    """Pre-norm transformer block; x: [batch, tokens, d_model] -> the same shape.

    residual=True:   x = x + attn(ln1(x)),  then  x = x + mlp(ln2(x))
    residual=False:  x = attn(ln1(x)),      then  x = mlp(ln2(x))
    """

    def __init__(self, d_model, n_heads, d_ff, residual=True):
        super().__init__()
        check_block_sizes(d_model, n_heads, d_ff)    # ValueError for sizes that do not fit
        self.d_model, self.residual = d_model, bool(residual)
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x):
        x = as_stream(x, self.d_model)    # ValueError unless x is [batch, tokens, d_model]
        h = self.ln1(x)
        T = x.shape[1]
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        attended, _ = self.attn(h, h, h, attn_mask=causal, need_weights=False)
        if self.residual:
            x = x + attended
            x = x + self.mlp(self.ln2(x))
        else:
            x = attended
            x = self.mlp(self.ln2(x))
        return x
''',
    ),
    Wrong(
        id='h34-06-tiny-residual-flag-not-passed',
        exercise='TinyTransformer',
        cause='You build the blocks without passing residual, so every Block uses its default residual=True and TinyTransformer(..., residual=False) still has its skips. Pass residual=residual to each Block.',
        kind='a parameter replaced by its default',
        wrong_on='TinyTransformer(8, 8, 2, 16, n_layers=2, seq_len=8, residual=False) with random weights, tokens [3, 6]: the logits are those of the model with skips.',
        source='''import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    MODEL, TASK, LEARNING_RATE, as_stream, as_tokens, as_hidden, check_block_sizes,
    check_model_sizes, check_steps_and_seed, check_depths, layer_outputs, progress,
)


class Block(nn.Module):
    """Pre-norm transformer block; x: [batch, tokens, d_model] -> the same shape.

    residual=True:   x = x + attn(ln1(x)),  then  x = x + mlp(ln2(x))
    residual=False:  x = attn(ln1(x)),      then  x = mlp(ln2(x))
    """

    def __init__(self, d_model, n_heads, d_ff, residual=True):
        super().__init__()
        check_block_sizes(d_model, n_heads, d_ff)    # ValueError for sizes that do not fit
        self.d_model, self.residual = d_model, bool(residual)
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x):
        x = as_stream(x, self.d_model)    # ValueError unless x is [batch, tokens, d_model]
        h = self.ln1(x)
        attended, _ = self.attn(h, h, h, need_weights=False)
        if self.residual:
            x = x + attended
            x = x + self.mlp(self.ln2(x))
        else:
            x = attended
            x = self.mlp(self.ln2(x))
        return x


class TinyTransformer(nn.Module):
    """Embeddings, n_layers Blocks, a final LayerNorm and a linear head."""

    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual=True):
        super().__init__()
        check_model_sizes(vocab_size, d_model, n_heads, d_ff, n_layers, seq_len)
        self.vocab_size, self.seq_len, self.residual = vocab_size, seq_len, bool(residual)
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(seq_len, d_model)
        # self.blocks: an nn.ModuleList of n_layers Blocks
        self.blocks = nn.ModuleList(
            [Block(d_model, n_heads, d_ff) for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens):
        tokens = as_tokens(tokens, self.vocab_size, self.seq_len)   # ValueError for bad ids or shapes
        T = tokens.shape[1]
        positions = torch.arange(T, device=tokens.device)
        x = self.tok_emb(tokens) + self.pos_emb(positions)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))
''',
    ),
    Wrong(
        id='h34-06-tiny-one-block-repeated',
        exercise='TinyTransformer',
        cause="[Block(...)] * n_layers puts the same Block object n_layers times in the list, so all the layers share one set of weights (and loading a state dict leaves only the last layer's). Make a new Block for each layer: [Block(...) for _ in range(n_layers)].",
        kind='one object repeated instead of n new ones',
        wrong_on="n_layers=2 with different random weights per block, tokens [3, 6]: both layers run block 1's weights, so the logits differ.",
        source='''import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    MODEL, TASK, LEARNING_RATE, as_stream, as_tokens, as_hidden, check_block_sizes,
    check_model_sizes, check_steps_and_seed, check_depths, layer_outputs, progress,
)


class Block(nn.Module):
    """Pre-norm transformer block; x: [batch, tokens, d_model] -> the same shape.

    residual=True:   x = x + attn(ln1(x)),  then  x = x + mlp(ln2(x))
    residual=False:  x = attn(ln1(x)),      then  x = mlp(ln2(x))
    """

    def __init__(self, d_model, n_heads, d_ff, residual=True):
        super().__init__()
        check_block_sizes(d_model, n_heads, d_ff)    # ValueError for sizes that do not fit
        self.d_model, self.residual = d_model, bool(residual)
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x):
        x = as_stream(x, self.d_model)    # ValueError unless x is [batch, tokens, d_model]
        h = self.ln1(x)
        attended, _ = self.attn(h, h, h, need_weights=False)
        if self.residual:
            x = x + attended
            x = x + self.mlp(self.ln2(x))
        else:
            x = attended
            x = self.mlp(self.ln2(x))
        return x


class TinyTransformer(nn.Module):
    """Embeddings, n_layers Blocks, a final LayerNorm and a linear head."""

    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual=True):
        super().__init__()
        check_model_sizes(vocab_size, d_model, n_heads, d_ff, n_layers, seq_len)
        self.vocab_size, self.seq_len, self.residual = vocab_size, seq_len, bool(residual)
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(seq_len, d_model)
        # self.blocks: an nn.ModuleList of n_layers Blocks
        self.blocks = nn.ModuleList([Block(d_model, n_heads, d_ff, residual=residual)] * n_layers)
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens):
        tokens = as_tokens(tokens, self.vocab_size, self.seq_len)   # ValueError for bad ids or shapes
        T = tokens.shape[1]
        positions = torch.arange(T, device=tokens.device)
        x = self.tok_emb(tokens) + self.pos_emb(positions)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))
''',
    ),
    Wrong(
        id='h34-06-tiny-ln-f-skipped',
        exercise='TinyTransformer',
        cause='forward sends the stream straight to the head and skips ln_f. A pre-norm stack never normalises the stream, so it does so once at the end: return self.head(self.ln_f(x)).',
        kind='a layer left out (final norm)',
        wrong_on='TinyTransformer(8, 8, 2, 16, n_layers=1, seq_len=8) with random weights, tokens [3, 6]: every logit differs.',
        source='''import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    MODEL, TASK, LEARNING_RATE, as_stream, as_tokens, as_hidden, check_block_sizes,
    check_model_sizes, check_steps_and_seed, check_depths, layer_outputs, progress,
)


class Block(nn.Module):
    """Pre-norm transformer block; x: [batch, tokens, d_model] -> the same shape.

    residual=True:   x = x + attn(ln1(x)),  then  x = x + mlp(ln2(x))
    residual=False:  x = attn(ln1(x)),      then  x = mlp(ln2(x))
    """

    def __init__(self, d_model, n_heads, d_ff, residual=True):
        super().__init__()
        check_block_sizes(d_model, n_heads, d_ff)    # ValueError for sizes that do not fit
        self.d_model, self.residual = d_model, bool(residual)
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x):
        x = as_stream(x, self.d_model)    # ValueError unless x is [batch, tokens, d_model]
        h = self.ln1(x)
        attended, _ = self.attn(h, h, h, need_weights=False)
        if self.residual:
            x = x + attended
            x = x + self.mlp(self.ln2(x))
        else:
            x = attended
            x = self.mlp(self.ln2(x))
        return x


class TinyTransformer(nn.Module):
    """Embeddings, n_layers Blocks, a final LayerNorm and a linear head."""

    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual=True):
        super().__init__()
        check_model_sizes(vocab_size, d_model, n_heads, d_ff, n_layers, seq_len)
        self.vocab_size, self.seq_len, self.residual = vocab_size, seq_len, bool(residual)
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(seq_len, d_model)
        # self.blocks: an nn.ModuleList of n_layers Blocks
        self.blocks = nn.ModuleList(
            [Block(d_model, n_heads, d_ff, residual=residual) for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens):
        tokens = as_tokens(tokens, self.vocab_size, self.seq_len)   # ValueError for bad ids or shapes
        T = tokens.shape[1]
        positions = torch.arange(T, device=tokens.device)
        x = self.tok_emb(tokens) + self.pos_emb(positions)
        for block in self.blocks:
            x = block(x)
        return self.head(x)
''',
    ),
    Wrong(
        id='h34-06-tiny-no-position-embedding',
        exercise='TinyTransformer',
        cause='You create pos_emb but never add it: the stream starts from the token embeddings alone, so the model cannot tell positions apart. Add self.pos_emb(torch.arange(T)) to the token embeddings.',
        kind='operand left out (position embeddings)',
        wrong_on='TinyTransformer(8, 8, 2, 16, n_layers=1, seq_len=8) with random weights, tokens [3, 6]: every logit differs.',
        source='''import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    MODEL, TASK, LEARNING_RATE, as_stream, as_tokens, as_hidden, check_block_sizes,
    check_model_sizes, check_steps_and_seed, check_depths, layer_outputs, progress,
)


class Block(nn.Module):
    """Pre-norm transformer block; x: [batch, tokens, d_model] -> the same shape.

    residual=True:   x = x + attn(ln1(x)),  then  x = x + mlp(ln2(x))
    residual=False:  x = attn(ln1(x)),      then  x = mlp(ln2(x))
    """

    def __init__(self, d_model, n_heads, d_ff, residual=True):
        super().__init__()
        check_block_sizes(d_model, n_heads, d_ff)    # ValueError for sizes that do not fit
        self.d_model, self.residual = d_model, bool(residual)
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x):
        x = as_stream(x, self.d_model)    # ValueError unless x is [batch, tokens, d_model]
        h = self.ln1(x)
        attended, _ = self.attn(h, h, h, need_weights=False)
        if self.residual:
            x = x + attended
            x = x + self.mlp(self.ln2(x))
        else:
            x = attended
            x = self.mlp(self.ln2(x))
        return x


class TinyTransformer(nn.Module):
    """Embeddings, n_layers Blocks, a final LayerNorm and a linear head."""

    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual=True):
        super().__init__()
        check_model_sizes(vocab_size, d_model, n_heads, d_ff, n_layers, seq_len)
        self.vocab_size, self.seq_len, self.residual = vocab_size, seq_len, bool(residual)
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(seq_len, d_model)
        # self.blocks: an nn.ModuleList of n_layers Blocks
        self.blocks = nn.ModuleList(
            [Block(d_model, n_heads, d_ff, residual=residual) for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens):
        tokens = as_tokens(tokens, self.vocab_size, self.seq_len)   # ValueError for bad ids or shapes
        T = tokens.shape[1]
        positions = torch.arange(T, device=tokens.device)
        x = self.tok_emb(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))
''',
    ),
    Wrong(
        id='h34-06-similarity-diagonal-included',
        exercise='token_similarity',
        cause="You average the whole T x T cosine matrix, the diagonal included, where every token's similarity with itself is 1. Leave the diagonal out: subtract its sum and divide by T(T - 1), the number of ordered pairs of distinct tokens.",
        kind='diagonal left in',
        wrong_on='h = random normal [3, 5, 4]: the result is (T - 1)/T * sim + 1/T, pulled towards 1 (and 1/T too high for orthogonal tokens).',
        source='''import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    MODEL, TASK, LEARNING_RATE, as_stream, as_tokens, as_hidden, check_block_sizes,
    check_model_sizes, check_steps_and_seed, check_depths, layer_outputs, progress,
)


def token_similarity(h):
    """Mean cosine similarity between distinct tokens of each sequence, averaged over the
    batch. h: [..., T, d] with T >= 2 -> a Python float."""
    h = as_hidden(h)    # a float tensor; ValueError if a sequence has fewer than two tokens
    T = h.shape[-2]
    unit = h / h.norm(dim=-1, keepdim=True)
    cos = unit @ unit.transpose(-2, -1)                        # [..., T, T]
    per_sequence = cos.mean(dim=(-2, -1))
    return per_sequence.mean().item()
''',
    ),
    Wrong(
        id='h34-06-similarity-norm-over-tokens',
        exercise='token_similarity',
        cause="You normalise along dim=-2, the tokens, so each feature column gets length 1 rather than each token vector. Cosine similarity divides each token's vector by its own length: h.norm(dim=-1, keepdim=True).",
        kind='norm over the wrong axis',
        wrong_on="h = random normal [3, 5, 4]: the token vectors are not unit length, so the 'cosines' are wrong.",
        source='''import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    MODEL, TASK, LEARNING_RATE, as_stream, as_tokens, as_hidden, check_block_sizes,
    check_model_sizes, check_steps_and_seed, check_depths, layer_outputs, progress,
)


def token_similarity(h):
    """Mean cosine similarity between distinct tokens of each sequence, averaged over the
    batch. h: [..., T, d] with T >= 2 -> a Python float."""
    h = as_hidden(h)    # a float tensor; ValueError if a sequence has fewer than two tokens
    T = h.shape[-2]
    unit = h / h.norm(dim=-2, keepdim=True)
    cos = unit @ unit.transpose(-2, -1)                        # [..., T, T]
    off_diagonal = cos.sum(dim=(-2, -1)) - cos.diagonal(dim1=-2, dim2=-1).sum(dim=-1)
    per_sequence = off_diagonal / (T * (T - 1))
    return per_sequence.mean().item()
''',
    ),
    Wrong(
        id='h34-06-similarity-upper-triangle-halved',
        exercise='token_similarity',
        cause='You sum each pair once (the upper triangle) but still divide by T(T - 1), which counts every pair in both orders. Either divide the upper triangle by T(T - 1)/2, or sum both triangles.',
        kind='count and denominator disagree (off by a factor 2)',
        wrong_on='h = random normal [3, 5, 4]: the result is exactly half the right value.',
        source='''import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    MODEL, TASK, LEARNING_RATE, as_stream, as_tokens, as_hidden, check_block_sizes,
    check_model_sizes, check_steps_and_seed, check_depths, layer_outputs, progress,
)


def token_similarity(h):
    """Mean cosine similarity between distinct tokens of each sequence, averaged over the
    batch. h: [..., T, d] with T >= 2 -> a Python float."""
    h = as_hidden(h)    # a float tensor; ValueError if a sequence has fewer than two tokens
    T = h.shape[-2]
    unit = h / h.norm(dim=-1, keepdim=True)
    cos = unit @ unit.transpose(-2, -1)                        # [..., T, T]
    off_diagonal = torch.triu(cos, diagonal=1).sum(dim=(-2, -1))     # each pair once
    per_sequence = off_diagonal / (T * (T - 1))
    return per_sequence.mean().item()
''',
    ),
    Wrong(
        id='h34-06-similarity-full-transpose',
        exercise='token_similarity',
        cause='unit.T reverses every axis of a batched tensor ([B, T, d] becomes [d, T, B]), not only the last two. Swap only the token and feature axes: unit.transpose(-2, -1) (or unit.mT).',
        kind='full transpose of a batched tensor',
        wrong_on='h = random normal [3, 5, 4] (a batch): the product fails or pairs the wrong axes; with a single sequence [T, d] it is right.',
        source='''import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    MODEL, TASK, LEARNING_RATE, as_stream, as_tokens, as_hidden, check_block_sizes,
    check_model_sizes, check_steps_and_seed, check_depths, layer_outputs, progress,
)


def token_similarity(h):
    """Mean cosine similarity between distinct tokens of each sequence, averaged over the
    batch. h: [..., T, d] with T >= 2 -> a Python float."""
    h = as_hidden(h)    # a float tensor; ValueError if a sequence has fewer than two tokens
    T = h.shape[-2]
    unit = h / h.norm(dim=-1, keepdim=True)
    cos = unit @ unit.T                                        # [..., T, T]
    off_diagonal = cos.sum(dim=(-2, -1)) - cos.diagonal(dim1=-2, dim2=-1).sum(dim=-1)
    per_sequence = off_diagonal / (T * (T - 1))
    return per_sequence.mean().item()
''',
    ),
    Wrong(
        id='h34-06-similarity-divides-by-own-norm-squared',
        exercise='token_similarity',
        cause='You divide each dot product h_i . h_j by |h_i|^2, the length of one token twice, instead of |h_i| |h_j|. Normalise both vectors: divide each token by its own norm first, then take the dot products.',
        kind='wrong normaliser',
        wrong_on="h = random normal [3, 5, 4] with token t scaled by 3**t (tokens of very different lengths): each 'cosine' is scaled by |h_j|/|h_i|, so the mean is far off (about 1% off even for unscaled random tokens).",
        source='''import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    MODEL, TASK, LEARNING_RATE, as_stream, as_tokens, as_hidden, check_block_sizes,
    check_model_sizes, check_steps_and_seed, check_depths, layer_outputs, progress,
)


def token_similarity(h):
    """Mean cosine similarity between distinct tokens of each sequence, averaged over the
    batch. h: [..., T, d] with T >= 2 -> a Python float."""
    h = as_hidden(h)    # a float tensor; ValueError if a sequence has fewer than two tokens
    T = h.shape[-2]
    norm2 = (h * h).sum(dim=-1, keepdim=True)                   # |h_i|^2
    cos = (h @ h.transpose(-2, -1)) / norm2                      # [..., T, T]
    off_diagonal = cos.sum(dim=(-2, -1)) - cos.diagonal(dim1=-2, dim2=-1).sum(dim=-1)
    per_sequence = off_diagonal / (T * (T - 1))
    return per_sequence.mean().item()
''',
    ),
    Wrong(
        id='h34-06-train-zero-grad-forgotten',
        exercise='train',
        cause='The loop never clears the gradients, so each backward() adds to the ones left by all earlier steps and the updates use a running sum. Call optimizer.zero_grad() before loss.backward() in every step.',
        kind='a statement left out (gradients accumulate)',
        wrong_on="a small float64 model, 6 steps, seed 3: the first two losses agree, then they drift from the reference's from step 3 on.",
        source='''import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    MODEL, TASK, LEARNING_RATE, as_stream, as_tokens, as_hidden, check_block_sizes,
    check_model_sizes, check_steps_and_seed, check_depths, layer_outputs, progress,
)


def train(model, task, steps, seed):
    """Train model in place; return the loss of every step, as a list of floats."""
    steps, seed = check_steps_and_seed(steps, seed)
    generator = torch.Generator().manual_seed(seed)        # every batch comes from here
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    model.train()
    losses = []
    for _ in progress(range(steps), "training"):
        tokens, targets = task.sample(generator)
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
''',
    ),
    Wrong(
        id='h34-06-train-zero-grad-after-backward',
        exercise='train',
        cause='You clear the gradients between backward() and step(), so the optimizer always steps with zero gradients and the weights never move. The order is zero_grad(), backward(), step().',
        kind='statements in the wrong order',
        wrong_on='a small float64 model, 4 steps, seed 3: the first loss is right, the later ones are the losses of the untrained model.',
        source='''import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    MODEL, TASK, LEARNING_RATE, as_stream, as_tokens, as_hidden, check_block_sizes,
    check_model_sizes, check_steps_and_seed, check_depths, layer_outputs, progress,
)


def train(model, task, steps, seed):
    """Train model in place; return the loss of every step, as a list of floats."""
    steps, seed = check_steps_and_seed(steps, seed)
    generator = torch.Generator().manual_seed(seed)        # every batch comes from here
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    model.train()
    losses = []
    for _ in progress(range(steps), "training"):
        tokens, targets = task.sample(generator)
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        loss.backward()
        optimizer.zero_grad()
        optimizer.step()
        losses.append(loss.item())
    return losses
''',
    ),
    Wrong(
        id='h34-06-train-generator-reseeded-each-step',
        exercise='train',
        cause='You make a new generator seeded with seed inside the loop, so every step draws the very same batch. Draw every batch from the one generator the given line made before the loop: task.sample(generator).',
        kind='a statement moved into the loop',
        wrong_on='a small float64 model, 4 steps, seed 3: the first loss is right, every later step trains on batch 1 again.',
        source='''import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    MODEL, TASK, LEARNING_RATE, as_stream, as_tokens, as_hidden, check_block_sizes,
    check_model_sizes, check_steps_and_seed, check_depths, layer_outputs, progress,
)


def train(model, task, steps, seed):
    """Train model in place; return the loss of every step, as a list of floats."""
    steps, seed = check_steps_and_seed(steps, seed)
    generator = torch.Generator().manual_seed(seed)        # every batch comes from here
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    model.train()
    losses = []
    for _ in progress(range(steps), "training"):
        tokens, targets = task.sample(torch.Generator().manual_seed(seed))
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
''',
    ),
    Wrong(
        id='h34-06-train-last-position-only',
        exercise='train',
        cause='The loss uses only the last position of each sequence, as in next-token prediction. Here every position has a target: flatten the logits to [batch*T, vocab] and the targets to [batch*T] and take the cross-entropy over all of them.',
        kind='only the last row used',
        wrong_on='a small float64 model, 3 steps, seed 3: the very first loss already differs from the mean over all positions.',
        source='''import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    MODEL, TASK, LEARNING_RATE, as_stream, as_tokens, as_hidden, check_block_sizes,
    check_model_sizes, check_steps_and_seed, check_depths, layer_outputs, progress,
)


def train(model, task, steps, seed):
    """Train model in place; return the loss of every step, as a list of floats."""
    steps, seed = check_steps_and_seed(steps, seed)
    generator = torch.Generator().manual_seed(seed)        # every batch comes from here
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    model.train()
    losses = []
    for _ in progress(range(steps), "training"):
        tokens, targets = task.sample(generator)
        logits = model(tokens)
        loss = F.cross_entropy(logits[:, -1], targets[:, -1])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
''',
    ),
    Wrong(
        id='h34-06-ablation-seeded-once',
        exercise='run_ablation',
        cause='You seed torch once before the loops, so each model is built from a different point of the random stream and the model without skips starts from other weights than its twin. Seed with torch.manual_seed(seed) right before building each model.',
        kind='a statement moved out of the loop',
        wrong_on='depths (1, 4), 30 steps, seed 0: only the first row is right; the other three start from other weights, so their losses and similarities differ.',
        source='''import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    MODEL, TASK, LEARNING_RATE, as_stream, as_tokens, as_hidden, check_block_sizes,
    check_model_sizes, check_steps_and_seed, check_depths, layer_outputs, progress,
)


class Block(nn.Module):
    """Pre-norm transformer block; x: [batch, tokens, d_model] -> the same shape.

    residual=True:   x = x + attn(ln1(x)),  then  x = x + mlp(ln2(x))
    residual=False:  x = attn(ln1(x)),      then  x = mlp(ln2(x))
    """

    def __init__(self, d_model, n_heads, d_ff, residual=True):
        super().__init__()
        check_block_sizes(d_model, n_heads, d_ff)    # ValueError for sizes that do not fit
        self.d_model, self.residual = d_model, bool(residual)
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x):
        x = as_stream(x, self.d_model)    # ValueError unless x is [batch, tokens, d_model]
        h = self.ln1(x)
        attended, _ = self.attn(h, h, h, need_weights=False)
        if self.residual:
            x = x + attended
            x = x + self.mlp(self.ln2(x))
        else:
            x = attended
            x = self.mlp(self.ln2(x))
        return x


class TinyTransformer(nn.Module):
    """Embeddings, n_layers Blocks, a final LayerNorm and a linear head."""

    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual=True):
        super().__init__()
        check_model_sizes(vocab_size, d_model, n_heads, d_ff, n_layers, seq_len)
        self.vocab_size, self.seq_len, self.residual = vocab_size, seq_len, bool(residual)
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(seq_len, d_model)
        # self.blocks: an nn.ModuleList of n_layers Blocks
        self.blocks = nn.ModuleList(
            [Block(d_model, n_heads, d_ff, residual=residual) for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens):
        tokens = as_tokens(tokens, self.vocab_size, self.seq_len)   # ValueError for bad ids or shapes
        T = tokens.shape[1]
        positions = torch.arange(T, device=tokens.device)
        x = self.tok_emb(tokens) + self.pos_emb(positions)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


def token_similarity(h):
    """Mean cosine similarity between distinct tokens of each sequence, averaged over the
    batch. h: [..., T, d] with T >= 2 -> a Python float."""
    h = as_hidden(h)    # a float tensor; ValueError if a sequence has fewer than two tokens
    T = h.shape[-2]
    unit = h / h.norm(dim=-1, keepdim=True)
    cos = unit @ unit.transpose(-2, -1)                        # [..., T, T]
    off_diagonal = cos.sum(dim=(-2, -1)) - cos.diagonal(dim1=-2, dim2=-1).sum(dim=-1)
    per_sequence = off_diagonal / (T * (T - 1))
    return per_sequence.mean().item()


def train(model, task, steps, seed):
    """Train model in place; return the loss of every step, as a list of floats."""
    steps, seed = check_steps_and_seed(steps, seed)
    generator = torch.Generator().manual_seed(seed)        # every batch comes from here
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    model.train()
    losses = []
    for _ in progress(range(steps), "training"):
        tokens, targets = task.sample(generator)
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def run_ablation(depths, steps, seed):
    """The depth sweep: one row (a dict) per run, two runs per depth."""
    depths = check_depths(depths)
    steps, seed = check_steps_and_seed(steps, seed)
    probe, _ = TASK.sample(torch.Generator().manual_seed(seed))    # fixed tokens to measure on
    rows = []
    torch.manual_seed(seed)
    for depth in depths:
        for residual in (True, False):
            model = TinyTransformer(**MODEL, n_layers=depth, residual=residual)
            similarity_init = [token_similarity(h) for h in layer_outputs(model, probe)]
            losses = train(model, TASK, steps, seed)
            similarity_trained = [token_similarity(h) for h in layer_outputs(model, probe)]
            rows.append({
                "depth": depth,
                "residual": residual,
                "losses": losses,
                "final_loss": float(np.mean(losses[-10:])),
                "similarity_init": similarity_init,
                "similarity_trained": similarity_trained,
            })
    return rows
''',
    ),
    Wrong(
        id='h34-06-ablation-init-similarity-after-training',
        exercise='run_ablation',
        cause="You measure similarity_init after train has run, so it is the trained model's similarity, the same as similarity_trained. Measure it before calling train: train changes the model in place.",
        kind='a statement moved after the one it must precede',
        wrong_on="depths (1, 4), 30 steps, seed 0: every row's similarity_init equals its similarity_trained instead of the untrained model's values.",
        source='''import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    MODEL, TASK, LEARNING_RATE, as_stream, as_tokens, as_hidden, check_block_sizes,
    check_model_sizes, check_steps_and_seed, check_depths, layer_outputs, progress,
)


class Block(nn.Module):
    """Pre-norm transformer block; x: [batch, tokens, d_model] -> the same shape.

    residual=True:   x = x + attn(ln1(x)),  then  x = x + mlp(ln2(x))
    residual=False:  x = attn(ln1(x)),      then  x = mlp(ln2(x))
    """

    def __init__(self, d_model, n_heads, d_ff, residual=True):
        super().__init__()
        check_block_sizes(d_model, n_heads, d_ff)    # ValueError for sizes that do not fit
        self.d_model, self.residual = d_model, bool(residual)
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x):
        x = as_stream(x, self.d_model)    # ValueError unless x is [batch, tokens, d_model]
        h = self.ln1(x)
        attended, _ = self.attn(h, h, h, need_weights=False)
        if self.residual:
            x = x + attended
            x = x + self.mlp(self.ln2(x))
        else:
            x = attended
            x = self.mlp(self.ln2(x))
        return x


class TinyTransformer(nn.Module):
    """Embeddings, n_layers Blocks, a final LayerNorm and a linear head."""

    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual=True):
        super().__init__()
        check_model_sizes(vocab_size, d_model, n_heads, d_ff, n_layers, seq_len)
        self.vocab_size, self.seq_len, self.residual = vocab_size, seq_len, bool(residual)
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(seq_len, d_model)
        # self.blocks: an nn.ModuleList of n_layers Blocks
        self.blocks = nn.ModuleList(
            [Block(d_model, n_heads, d_ff, residual=residual) for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens):
        tokens = as_tokens(tokens, self.vocab_size, self.seq_len)   # ValueError for bad ids or shapes
        T = tokens.shape[1]
        positions = torch.arange(T, device=tokens.device)
        x = self.tok_emb(tokens) + self.pos_emb(positions)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


def token_similarity(h):
    """Mean cosine similarity between distinct tokens of each sequence, averaged over the
    batch. h: [..., T, d] with T >= 2 -> a Python float."""
    h = as_hidden(h)    # a float tensor; ValueError if a sequence has fewer than two tokens
    T = h.shape[-2]
    unit = h / h.norm(dim=-1, keepdim=True)
    cos = unit @ unit.transpose(-2, -1)                        # [..., T, T]
    off_diagonal = cos.sum(dim=(-2, -1)) - cos.diagonal(dim1=-2, dim2=-1).sum(dim=-1)
    per_sequence = off_diagonal / (T * (T - 1))
    return per_sequence.mean().item()


def train(model, task, steps, seed):
    """Train model in place; return the loss of every step, as a list of floats."""
    steps, seed = check_steps_and_seed(steps, seed)
    generator = torch.Generator().manual_seed(seed)        # every batch comes from here
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    model.train()
    losses = []
    for _ in progress(range(steps), "training"):
        tokens, targets = task.sample(generator)
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def run_ablation(depths, steps, seed):
    """The depth sweep: one row (a dict) per run, two runs per depth."""
    depths = check_depths(depths)
    steps, seed = check_steps_and_seed(steps, seed)
    probe, _ = TASK.sample(torch.Generator().manual_seed(seed))    # fixed tokens to measure on
    rows = []
    for depth in depths:
        for residual in (True, False):
            torch.manual_seed(seed)
            model = TinyTransformer(**MODEL, n_layers=depth, residual=residual)
            losses = train(model, TASK, steps, seed)
            similarity_init = [token_similarity(h) for h in layer_outputs(model, probe)]
            similarity_trained = [token_similarity(h) for h in layer_outputs(model, probe)]
            rows.append({
                "depth": depth,
                "residual": residual,
                "losses": losses,
                "final_loss": float(np.mean(losses[-10:])),
                "similarity_init": similarity_init,
                "similarity_trained": similarity_trained,
            })
    return rows
''',
    ),
    Wrong(
        id='h34-06-ablation-final-loss-last-step',
        exercise='run_ablation',
        cause='final_loss is the last loss alone; the table asks for the mean of the last 10 losses, float(np.mean(losses[-10:])), which smooths out one noisy batch.',
        kind='reduction left out',
        wrong_on="depths (1, 4), 30 steps, seed 0: each row's final_loss is losses[-1], not the mean of losses[-10:].",
        source='''import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    MODEL, TASK, LEARNING_RATE, as_stream, as_tokens, as_hidden, check_block_sizes,
    check_model_sizes, check_steps_and_seed, check_depths, layer_outputs, progress,
)


class Block(nn.Module):
    """Pre-norm transformer block; x: [batch, tokens, d_model] -> the same shape.

    residual=True:   x = x + attn(ln1(x)),  then  x = x + mlp(ln2(x))
    residual=False:  x = attn(ln1(x)),      then  x = mlp(ln2(x))
    """

    def __init__(self, d_model, n_heads, d_ff, residual=True):
        super().__init__()
        check_block_sizes(d_model, n_heads, d_ff)    # ValueError for sizes that do not fit
        self.d_model, self.residual = d_model, bool(residual)
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x):
        x = as_stream(x, self.d_model)    # ValueError unless x is [batch, tokens, d_model]
        h = self.ln1(x)
        attended, _ = self.attn(h, h, h, need_weights=False)
        if self.residual:
            x = x + attended
            x = x + self.mlp(self.ln2(x))
        else:
            x = attended
            x = self.mlp(self.ln2(x))
        return x


class TinyTransformer(nn.Module):
    """Embeddings, n_layers Blocks, a final LayerNorm and a linear head."""

    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual=True):
        super().__init__()
        check_model_sizes(vocab_size, d_model, n_heads, d_ff, n_layers, seq_len)
        self.vocab_size, self.seq_len, self.residual = vocab_size, seq_len, bool(residual)
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(seq_len, d_model)
        # self.blocks: an nn.ModuleList of n_layers Blocks
        self.blocks = nn.ModuleList(
            [Block(d_model, n_heads, d_ff, residual=residual) for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens):
        tokens = as_tokens(tokens, self.vocab_size, self.seq_len)   # ValueError for bad ids or shapes
        T = tokens.shape[1]
        positions = torch.arange(T, device=tokens.device)
        x = self.tok_emb(tokens) + self.pos_emb(positions)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


def token_similarity(h):
    """Mean cosine similarity between distinct tokens of each sequence, averaged over the
    batch. h: [..., T, d] with T >= 2 -> a Python float."""
    h = as_hidden(h)    # a float tensor; ValueError if a sequence has fewer than two tokens
    T = h.shape[-2]
    unit = h / h.norm(dim=-1, keepdim=True)
    cos = unit @ unit.transpose(-2, -1)                        # [..., T, T]
    off_diagonal = cos.sum(dim=(-2, -1)) - cos.diagonal(dim1=-2, dim2=-1).sum(dim=-1)
    per_sequence = off_diagonal / (T * (T - 1))
    return per_sequence.mean().item()


def train(model, task, steps, seed):
    """Train model in place; return the loss of every step, as a list of floats."""
    steps, seed = check_steps_and_seed(steps, seed)
    generator = torch.Generator().manual_seed(seed)        # every batch comes from here
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    model.train()
    losses = []
    for _ in progress(range(steps), "training"):
        tokens, targets = task.sample(generator)
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def run_ablation(depths, steps, seed):
    """The depth sweep: one row (a dict) per run, two runs per depth."""
    depths = check_depths(depths)
    steps, seed = check_steps_and_seed(steps, seed)
    probe, _ = TASK.sample(torch.Generator().manual_seed(seed))    # fixed tokens to measure on
    rows = []
    for depth in depths:
        for residual in (True, False):
            torch.manual_seed(seed)
            model = TinyTransformer(**MODEL, n_layers=depth, residual=residual)
            similarity_init = [token_similarity(h) for h in layer_outputs(model, probe)]
            losses = train(model, TASK, steps, seed)
            similarity_trained = [token_similarity(h) for h in layer_outputs(model, probe)]
            rows.append({
                "depth": depth,
                "residual": residual,
                "losses": losses,
                "final_loss": losses[-1],
                "similarity_init": similarity_init,
                "similarity_trained": similarity_trained,
            })
    return rows
''',
    ),
    Wrong(
        id='h34-06-ablation-without-first',
        exercise='run_ablation',
        cause='For each depth you train the model without residuals first. The rows must come in the order depth 1 with, depth 1 without, depth 2 with, ...: loop over residual in (True, False).',
        kind='rows in the wrong order',
        wrong_on='depths (1, 4), 30 steps, seed 0: row 0 is depth 1 without residuals where depth 1 with residuals belongs (and so on for every pair).',
        source='''import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    MODEL, TASK, LEARNING_RATE, as_stream, as_tokens, as_hidden, check_block_sizes,
    check_model_sizes, check_steps_and_seed, check_depths, layer_outputs, progress,
)


class Block(nn.Module):
    """Pre-norm transformer block; x: [batch, tokens, d_model] -> the same shape.

    residual=True:   x = x + attn(ln1(x)),  then  x = x + mlp(ln2(x))
    residual=False:  x = attn(ln1(x)),      then  x = mlp(ln2(x))
    """

    def __init__(self, d_model, n_heads, d_ff, residual=True):
        super().__init__()
        check_block_sizes(d_model, n_heads, d_ff)    # ValueError for sizes that do not fit
        self.d_model, self.residual = d_model, bool(residual)
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x):
        x = as_stream(x, self.d_model)    # ValueError unless x is [batch, tokens, d_model]
        h = self.ln1(x)
        attended, _ = self.attn(h, h, h, need_weights=False)
        if self.residual:
            x = x + attended
            x = x + self.mlp(self.ln2(x))
        else:
            x = attended
            x = self.mlp(self.ln2(x))
        return x


class TinyTransformer(nn.Module):
    """Embeddings, n_layers Blocks, a final LayerNorm and a linear head."""

    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual=True):
        super().__init__()
        check_model_sizes(vocab_size, d_model, n_heads, d_ff, n_layers, seq_len)
        self.vocab_size, self.seq_len, self.residual = vocab_size, seq_len, bool(residual)
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(seq_len, d_model)
        # self.blocks: an nn.ModuleList of n_layers Blocks
        self.blocks = nn.ModuleList(
            [Block(d_model, n_heads, d_ff, residual=residual) for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens):
        tokens = as_tokens(tokens, self.vocab_size, self.seq_len)   # ValueError for bad ids or shapes
        T = tokens.shape[1]
        positions = torch.arange(T, device=tokens.device)
        x = self.tok_emb(tokens) + self.pos_emb(positions)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


def token_similarity(h):
    """Mean cosine similarity between distinct tokens of each sequence, averaged over the
    batch. h: [..., T, d] with T >= 2 -> a Python float."""
    h = as_hidden(h)    # a float tensor; ValueError if a sequence has fewer than two tokens
    T = h.shape[-2]
    unit = h / h.norm(dim=-1, keepdim=True)
    cos = unit @ unit.transpose(-2, -1)                        # [..., T, T]
    off_diagonal = cos.sum(dim=(-2, -1)) - cos.diagonal(dim1=-2, dim2=-1).sum(dim=-1)
    per_sequence = off_diagonal / (T * (T - 1))
    return per_sequence.mean().item()


def train(model, task, steps, seed):
    """Train model in place; return the loss of every step, as a list of floats."""
    steps, seed = check_steps_and_seed(steps, seed)
    generator = torch.Generator().manual_seed(seed)        # every batch comes from here
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    model.train()
    losses = []
    for _ in progress(range(steps), "training"):
        tokens, targets = task.sample(generator)
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def run_ablation(depths, steps, seed):
    """The depth sweep: one row (a dict) per run, two runs per depth."""
    depths = check_depths(depths)
    steps, seed = check_steps_and_seed(steps, seed)
    probe, _ = TASK.sample(torch.Generator().manual_seed(seed))    # fixed tokens to measure on
    rows = []
    for depth in depths:
        for residual in (False, True):
            torch.manual_seed(seed)
            model = TinyTransformer(**MODEL, n_layers=depth, residual=residual)
            similarity_init = [token_similarity(h) for h in layer_outputs(model, probe)]
            losses = train(model, TASK, steps, seed)
            similarity_trained = [token_similarity(h) for h in layer_outputs(model, probe)]
            rows.append({
                "depth": depth,
                "residual": residual,
                "losses": losses,
                "final_loss": float(np.mean(losses[-10:])),
                "similarity_init": similarity_init,
                "similarity_trained": similarity_trained,
            })
    return rows
''',
    ),
    Wrong(
        id='h34-06-ablation-similarity-last-layer-only',
        exercise='run_ablation',
        cause='You store only the similarity after the last layer, one float. The table asks for a list of depth + 1 floats, one for every stream that layer_outputs returns, embeddings first.',
        kind='only the last row kept (a list reduced to one value)',
        wrong_on='depths (1, 4), 30 steps, seed 0: similarity_init of the depth-4 rows is one number instead of a list of 5.',
        source='''import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    MODEL, TASK, LEARNING_RATE, as_stream, as_tokens, as_hidden, check_block_sizes,
    check_model_sizes, check_steps_and_seed, check_depths, layer_outputs, progress,
)


class Block(nn.Module):
    """Pre-norm transformer block; x: [batch, tokens, d_model] -> the same shape.

    residual=True:   x = x + attn(ln1(x)),  then  x = x + mlp(ln2(x))
    residual=False:  x = attn(ln1(x)),      then  x = mlp(ln2(x))
    """

    def __init__(self, d_model, n_heads, d_ff, residual=True):
        super().__init__()
        check_block_sizes(d_model, n_heads, d_ff)    # ValueError for sizes that do not fit
        self.d_model, self.residual = d_model, bool(residual)
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x):
        x = as_stream(x, self.d_model)    # ValueError unless x is [batch, tokens, d_model]
        h = self.ln1(x)
        attended, _ = self.attn(h, h, h, need_weights=False)
        if self.residual:
            x = x + attended
            x = x + self.mlp(self.ln2(x))
        else:
            x = attended
            x = self.mlp(self.ln2(x))
        return x


class TinyTransformer(nn.Module):
    """Embeddings, n_layers Blocks, a final LayerNorm and a linear head."""

    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual=True):
        super().__init__()
        check_model_sizes(vocab_size, d_model, n_heads, d_ff, n_layers, seq_len)
        self.vocab_size, self.seq_len, self.residual = vocab_size, seq_len, bool(residual)
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(seq_len, d_model)
        # self.blocks: an nn.ModuleList of n_layers Blocks
        self.blocks = nn.ModuleList(
            [Block(d_model, n_heads, d_ff, residual=residual) for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens):
        tokens = as_tokens(tokens, self.vocab_size, self.seq_len)   # ValueError for bad ids or shapes
        T = tokens.shape[1]
        positions = torch.arange(T, device=tokens.device)
        x = self.tok_emb(tokens) + self.pos_emb(positions)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


def token_similarity(h):
    """Mean cosine similarity between distinct tokens of each sequence, averaged over the
    batch. h: [..., T, d] with T >= 2 -> a Python float."""
    h = as_hidden(h)    # a float tensor; ValueError if a sequence has fewer than two tokens
    T = h.shape[-2]
    unit = h / h.norm(dim=-1, keepdim=True)
    cos = unit @ unit.transpose(-2, -1)                        # [..., T, T]
    off_diagonal = cos.sum(dim=(-2, -1)) - cos.diagonal(dim1=-2, dim2=-1).sum(dim=-1)
    per_sequence = off_diagonal / (T * (T - 1))
    return per_sequence.mean().item()


def train(model, task, steps, seed):
    """Train model in place; return the loss of every step, as a list of floats."""
    steps, seed = check_steps_and_seed(steps, seed)
    generator = torch.Generator().manual_seed(seed)        # every batch comes from here
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    model.train()
    losses = []
    for _ in progress(range(steps), "training"):
        tokens, targets = task.sample(generator)
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def run_ablation(depths, steps, seed):
    """The depth sweep: one row (a dict) per run, two runs per depth."""
    depths = check_depths(depths)
    steps, seed = check_steps_and_seed(steps, seed)
    probe, _ = TASK.sample(torch.Generator().manual_seed(seed))    # fixed tokens to measure on
    rows = []
    for depth in depths:
        for residual in (True, False):
            torch.manual_seed(seed)
            model = TinyTransformer(**MODEL, n_layers=depth, residual=residual)
            similarity_init = token_similarity(layer_outputs(model, probe)[-1])
            losses = train(model, TASK, steps, seed)
            similarity_trained = token_similarity(layer_outputs(model, probe)[-1])
            rows.append({
                "depth": depth,
                "residual": residual,
                "losses": losses,
                "final_loss": float(np.mean(losses[-10:])),
                "similarity_init": similarity_init,
                "similarity_trained": similarity_trained,
            })
    return rows
''',
    ),
    Wrong(
        id='h34-07-online-sum-not-rescaled',
        exercise='online_softmax_stats',
        cause="When a block raises the maximum, the sum so far is still relative to the old maximum; you add the new terms to it without rescaling. Multiply the running sum by np.exp(m - m_new) before adding the block's terms.",
        kind='running value not rescaled',
        wrong_on="blocks [1, 3, 0.5], [5, -1], [2]: m = 5 is right but s comes out about 2.27 instead of about 1.22 (the first block's terms are still relative to 3, not to 5).",
        source='''import numpy as np

from grader.learner.validation import positive_int
from courseware.long_attention import score_blocks, one_query, tile_inputs, key_value_rows, decode_inputs


def online_softmax_stats(scores_blocks):
    """(m, s): the largest score, and the sum of exp(x - m) over every score x, in one pass.

    scores_blocks comes as a stream: each block once, in order, read with one for loop
    (it has no len() and no index).
    """
    blocks = score_blocks(scores_blocks)      # given: yields each block, checked, one at a time
    m, s = -np.inf, 0.0
    for block in blocks:
        m_new = max(m, block.max())
        s = s + np.exp(block - m_new).sum()
        m = m_new
    return float(m), float(s)
''',
    ),
    Wrong(
        id='h34-07-online-rescale-sign-flipped',
        exercise='online_softmax_stats',
        cause="The rescaling factor has its exponent the wrong way round: when the maximum grows from m to m', the old terms shrink, by e^(m - m'), not grow by e^(m' - m). On the first block (m = -inf) your factor is e^(+inf), and 0 * inf makes s NaN.",
        kind='sign flipped inside an exponent',
        wrong_on='blocks [1, 3, 0.5], [5, -1], [2]: s is NaN from the first block on (0 * e^inf).',
        source='''import numpy as np

from grader.learner.validation import positive_int
from courseware.long_attention import score_blocks, one_query, tile_inputs, key_value_rows, decode_inputs


def online_softmax_stats(scores_blocks):
    """(m, s): the largest score, and the sum of exp(x - m) over every score x, in one pass.

    scores_blocks comes as a stream: each block once, in order, read with one for loop
    (it has no len() and no index).
    """
    blocks = score_blocks(scores_blocks)      # given: yields each block, checked, one at a time
    m, s = -np.inf, 0.0
    for block in blocks:
        m_new = max(m, block.max())
        s = s * np.exp(m_new - m) + np.exp(block - m_new).sum()
        m = m_new
    return float(m), float(s)
''',
    ),
    Wrong(
        id='h34-07-online-m-starts-at-zero',
        exercise='online_softmax_stats',
        cause='You start the running maximum at 0 instead of -inf. If every score is negative, m never moves from 0, so you return 0 as the maximum (and a sum relative to 0). Before the first block nothing has been seen: m = -np.inf.',
        kind='wrong initial value',
        wrong_on='blocks [-3, -1], [-2]: returns m = 0 and s = e^-3 + e^-1 + e^-2 ≈ 0.553 instead of m = -1 and s ≈ 1.503.',
        source='''import numpy as np

from grader.learner.validation import positive_int
from courseware.long_attention import score_blocks, one_query, tile_inputs, key_value_rows, decode_inputs


def online_softmax_stats(scores_blocks):
    """(m, s): the largest score, and the sum of exp(x - m) over every score x, in one pass.

    scores_blocks comes as a stream: each block once, in order, read with one for loop
    (it has no len() and no index).
    """
    blocks = score_blocks(scores_blocks)      # given: yields each block, checked, one at a time
    m, s = 0.0, 0.0
    for block in blocks:
        m_new = max(m, block.max())
        s = s * np.exp(m - m_new) + np.exp(block - m_new).sum()
        m = m_new
    return float(m), float(s)
''',
    ),
    Wrong(
        id='h34-07-online-block-terms-own-max',
        exercise='online_softmax_stats',
        cause="You rescale the old sum to the new maximum but add the block's terms relative to the block's own maximum. Both must be relative to the same m_new: add np.exp(block - m_new).sum(). It only goes wrong when a block's maximum is below the running one.",
        kind='wrong operand (block maximum where the running maximum belongs)',
        wrong_on="blocks [5, 1], [2, 3]: the second block's terms are e^(2-3) + e^0 ≈ 1.37 instead of e^(2-5) + e^(3-5) ≈ 0.185, so s ≈ 2.39 instead of ≈ 1.20.",
        source='''import numpy as np

from grader.learner.validation import positive_int
from courseware.long_attention import score_blocks, one_query, tile_inputs, key_value_rows, decode_inputs


def online_softmax_stats(scores_blocks):
    """(m, s): the largest score, and the sum of exp(x - m) over every score x, in one pass.

    scores_blocks comes as a stream: each block once, in order, read with one for loop
    (it has no len() and no index).
    """
    blocks = score_blocks(scores_blocks)      # given: yields each block, checked, one at a time
    m, s = -np.inf, 0.0
    for block in blocks:
        m_new = max(m, block.max())
        s = s * np.exp(m - m_new) + np.exp(block - block.max()).sum()
        m = m_new
    return float(m), float(s)
''',
    ),
    Wrong(
        id='h34-07-online-two-loops',
        exercise='online_softmax_stats',
        cause="You read the blocks twice, once for the maximum and once for the sum: that is the two-pass softmax, and a stream can be read only once (the second loop fails). Keep m and s together in one loop and rescale s by e^(m - m') whenever the maximum grows.",
        kind='rule broken: the stream read twice',
        wrong_on='stream_of([[1, 3, 0.5], [5, -1], [2]]): the second generator finds the stream used up and raises ReadTwice.',
        source='''import numpy as np

from grader.learner.validation import positive_int
from courseware.long_attention import score_blocks, one_query, tile_inputs, key_value_rows, decode_inputs


def online_softmax_stats(scores_blocks):
    """(m, s): the largest score, and the sum of exp(x - m) over every score x, in one pass.

    scores_blocks comes as a stream: each block once, in order, read with one for loop
    (it has no len() and no index).
    """
    blocks = score_blocks(scores_blocks)      # given: yields each block, checked, one at a time
    m = max(block.max() for block in blocks)           # first pass: the maximum
    s = sum(np.exp(block - m).sum() for block in blocks)   # second pass: the sum
    return float(m), float(s)
''',
    ),
    Wrong(
        id='h34-07-one-pass-output-not-rescaled',
        exercise='attention_one_pass',
        cause="You rescale the running sum s when the maximum grows but not the running output o, whose earlier terms are still relative to the old maximum. Multiply o by the same factor e^(m - m') before adding the block's p @ V_block.",
        kind='running value not rescaled (one of two)',
        wrong_on="q [4], K [10, 4], V [10, 3] random, block = 3: any later block that raises the maximum leaves the earlier value rows overweighted, so the output differs from torch's.",
        source='''import numpy as np

from grader.learner.validation import positive_int
from courseware.long_attention import score_blocks, one_query, tile_inputs, key_value_rows, decode_inputs


def attention_one_pass(q, K, V, block):
    """Attention of one query q [d_k] over K [T_k, d_k], V [T_k, d_v], reading `block` keys at a time.

    One pass: each block of rows of K and V is read while it is the current block, never after.
    """
    q, K, V = one_query(q, K, V)              # given: checks the shapes, never copies K or V
    block = positive_int(block, "block")
    T_k, d_k = K.shape
    m, s = -np.inf, 0.0
    o = np.zeros(V.shape[1])
    for j in range(0, T_k, block):
        x = K[j:j + block] @ q / np.sqrt(d_k)
        m_new = max(m, x.max())
        scale = np.exp(m - m_new)
        p = np.exp(x - m_new)
        s = s * scale + p.sum()
        o = o + p @ V[j:j + block]
        m = m_new
    return o / s
''',
    ),
    Wrong(
        id='h34-07-one-pass-no-final-division',
        exercise='attention_one_pass',
        cause='You return the running numerator o without dividing it by s. The output is the weighted average (1/s) * sum e^(x_j - m) v_j: divide once, after the last block, return o / s.',
        kind='normalisation left out',
        wrong_on='q [4], K [10, 4], V [10, 3] random, block = 3: the output is s times too large (s ≥ 1, the sum of the exponentials).',
        source='''import numpy as np

from grader.learner.validation import positive_int
from courseware.long_attention import score_blocks, one_query, tile_inputs, key_value_rows, decode_inputs


def attention_one_pass(q, K, V, block):
    """Attention of one query q [d_k] over K [T_k, d_k], V [T_k, d_v], reading `block` keys at a time.

    One pass: each block of rows of K and V is read while it is the current block, never after.
    """
    q, K, V = one_query(q, K, V)              # given: checks the shapes, never copies K or V
    block = positive_int(block, "block")
    T_k, d_k = K.shape
    m, s = -np.inf, 0.0
    o = np.zeros(V.shape[1])
    for j in range(0, T_k, block):
        x = K[j:j + block] @ q / np.sqrt(d_k)
        m_new = max(m, x.max())
        scale = np.exp(m - m_new)
        p = np.exp(x - m_new)
        s = s * scale + p.sum()
        o = o * scale + p @ V[j:j + block]
        m = m_new
    return o
''',
    ),
    Wrong(
        id='h34-07-one-pass-scale-d-k',
        exercise='attention_one_pass',
        cause='The scores are divided by d_k instead of sqrt(d_k). Scaled dot-product attention uses x_j = q . k_j / sqrt(d_k).',
        kind='sqrt forgotten',
        wrong_on="q [4], K [10, 4], V [10, 3] random, block = 3: the scores are halved (4 vs 2), so the weights are flatter than torch's.",
        source='''import numpy as np

from grader.learner.validation import positive_int
from courseware.long_attention import score_blocks, one_query, tile_inputs, key_value_rows, decode_inputs


def attention_one_pass(q, K, V, block):
    """Attention of one query q [d_k] over K [T_k, d_k], V [T_k, d_v], reading `block` keys at a time.

    One pass: each block of rows of K and V is read while it is the current block, never after.
    """
    q, K, V = one_query(q, K, V)              # given: checks the shapes, never copies K or V
    block = positive_int(block, "block")
    T_k, d_k = K.shape
    m, s = -np.inf, 0.0
    o = np.zeros(V.shape[1])
    for j in range(0, T_k, block):
        x = K[j:j + block] @ q / d_k
        m_new = max(m, x.max())
        scale = np.exp(m - m_new)
        p = np.exp(x - m_new)
        s = s * scale + p.sum()
        o = o * scale + p @ V[j:j + block]
        m = m_new
    return o / s
''',
    ),
    Wrong(
        id='h34-07-one-pass-last-short-block-dropped',
        exercise='attention_one_pass',
        cause='Your loop stops before the last block when block does not divide T_k: range(0, T_k - block + 1, block) only starts full blocks, so the last, shorter block of keys is never read. Loop over range(0, T_k, block); the slice K[j:j + block] is simply shorter at the end.',
        kind='off by one in a range (last partial block dropped)',
        wrong_on='T_k = 10, block = 3: key 9 is never read, so the output is the attention over keys 0..8 only; with block = 2 or 5 it is right.',
        source='''import numpy as np

from grader.learner.validation import positive_int
from courseware.long_attention import score_blocks, one_query, tile_inputs, key_value_rows, decode_inputs


def attention_one_pass(q, K, V, block):
    """Attention of one query q [d_k] over K [T_k, d_k], V [T_k, d_v], reading `block` keys at a time.

    One pass: each block of rows of K and V is read while it is the current block, never after.
    """
    q, K, V = one_query(q, K, V)              # given: checks the shapes, never copies K or V
    block = positive_int(block, "block")
    T_k, d_k = K.shape
    m, s = -np.inf, 0.0
    o = np.zeros(V.shape[1])
    for j in range(0, T_k - block + 1, block):
        x = K[j:j + block] @ q / np.sqrt(d_k)
        m_new = max(m, x.max())
        scale = np.exp(m - m_new)
        p = np.exp(x - m_new)
        s = s * scale + p.sum()
        o = o * scale + p @ V[j:j + block]
        m = m_new
    return o / s
''',
    ),
    Wrong(
        id='h34-07-one-pass-all-scores-at-once',
        exercise='attention_one_pass',
        cause="You compute every key's score at once before the loop and only then walk over it in blocks. That holds T_k scores in memory and reads all of K in one step; compute each block's scores inside the loop, K[j:j + block] @ q / sqrt(d_k).",
        kind='rule broken: memory O(T_k) instead of O(block)',
        wrong_on='T_k = 1,048,576 keys with d_k = 2 and block = 1024: the output is right, but the function holds 8 MiB of scores at once (one float64 per key), and reads all of K in one step.',
        source='''import numpy as np

from grader.learner.validation import positive_int
from courseware.long_attention import score_blocks, one_query, tile_inputs, key_value_rows, decode_inputs


def attention_one_pass(q, K, V, block):
    """Attention of one query q [d_k] over K [T_k, d_k], V [T_k, d_v], reading `block` keys at a time.

    One pass: each block of rows of K and V is read while it is the current block, never after.
    """
    q, K, V = one_query(q, K, V)              # given: checks the shapes, never copies K or V
    block = positive_int(block, "block")
    T_k, d_k = K.shape
    m, s = -np.inf, 0.0
    o = np.zeros(V.shape[1])
    scores = K @ q / np.sqrt(d_k)                    # every score, computed once
    for j in range(0, T_k, block):
        x = scores[j:j + block]
        m_new = max(m, x.max())
        scale = np.exp(m - m_new)
        p = np.exp(x - m_new)
        s = s * scale + p.sum()
        o = o * scale + p @ V[j:j + block]
        m = m_new
    return o / s
''',
    ),
    Wrong(
        id='h34-07-tiled-mask-tile-local',
        exercise='tiled_attention',
        cause="Inside a tile the diagonal runs through, you build the mask from positions within the tile (np.triu of the tile's shape), as if the tile started on the diagonal. Query i may see key j when j <= i in the whole sequence: compare np.arange(j0, j1) with np.arange(i0, i1).",
        kind='mask in tile-local positions',
        wrong_on='T = 12 in 3 x 4 tiles, causal: in the tile of queries 3..5 and keys 4..7 the local triangle lets query 3 see key 4 (its future), and in the tile of queries 6..8 and keys 4..7 it hides keys 5 and 6 from query 6; with 4 x 4 tiles it happens to be right.',
        source='''import numpy as np

from grader.learner.validation import positive_int
from courseware.long_attention import score_blocks, one_query, tile_inputs, key_value_rows, decode_inputs


def tiled_attention(Q, K, V, block_q, block_k, causal=False):
    """(output, skipped): attention computed tile by tile; with causal=True, tiles wholly in the future are skipped."""
    Q, K, V, batch = tile_inputs(Q, K, V, causal)   # given: checks; batch is the broadcast batch shape
    block_q, block_k = positive_int(block_q, "block_q"), positive_int(block_k, "block_k")
    T_q, T_k, d_k, d_v = Q.shape[-2], K.shape[-2], Q.shape[-1], V.shape[-1]
    output = np.empty(batch + (T_q, d_v))
    skipped = 0
    for i0 in range(0, T_q, block_q):
        i1 = min(i0 + block_q, T_q)
        Q_i = Q[..., i0:i1, :]
        m = np.full(batch + (i1 - i0, 1), -np.inf)
        s = np.zeros(batch + (i1 - i0, 1))
        o = np.zeros(batch + (i1 - i0, d_v))
        for j0 in range(0, T_k, block_k):
            j1 = min(j0 + block_k, T_k)
            if causal and j0 > i1 - 1:          # every key after every query: skip the tile
                skipped += 1
                continue
            S = Q_i @ np.swapaxes(K[..., j0:j1, :], -1, -2) / np.sqrt(d_k)
            if causal and j1 - 1 > i0:          # the diagonal runs through this tile
                future = np.triu(np.ones((i1 - i0, j1 - j0), dtype=bool), k=1)
                S = np.where(future, -np.inf, S)
            m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
            scale = np.exp(m - m_new)
            P = np.exp(S - m_new)
            s = s * scale + P.sum(axis=-1, keepdims=True)
            o = o * scale + P @ V[..., j0:j1, :]
            m = m_new
        output[..., i0:i1, :] = o / s
    return output, skipped
''',
    ),
    Wrong(
        id='h34-07-tiled-skip-off-by-one',
        exercise='tiled_attention',
        cause="The skip test is off by one: with j0 >= i1 - 1 you also skip a tile whose first key is the same position as the block's last query, which that query must see (its own key). Skip only when j0 > i1 - 1, that is when every key comes after every query.",
        kind='off by one in a comparison',
        wrong_on='T = 12 in 3 x 4 tiles, causal: the tile of queries 6..8 and keys 8..11 is skipped, so query 8 never sees itself, and the count of skipped tiles is one too many.',
        source='''import numpy as np

from grader.learner.validation import positive_int
from courseware.long_attention import score_blocks, one_query, tile_inputs, key_value_rows, decode_inputs


def tiled_attention(Q, K, V, block_q, block_k, causal=False):
    """(output, skipped): attention computed tile by tile; with causal=True, tiles wholly in the future are skipped."""
    Q, K, V, batch = tile_inputs(Q, K, V, causal)   # given: checks; batch is the broadcast batch shape
    block_q, block_k = positive_int(block_q, "block_q"), positive_int(block_k, "block_k")
    T_q, T_k, d_k, d_v = Q.shape[-2], K.shape[-2], Q.shape[-1], V.shape[-1]
    output = np.empty(batch + (T_q, d_v))
    skipped = 0
    for i0 in range(0, T_q, block_q):
        i1 = min(i0 + block_q, T_q)
        Q_i = Q[..., i0:i1, :]
        m = np.full(batch + (i1 - i0, 1), -np.inf)
        s = np.zeros(batch + (i1 - i0, 1))
        o = np.zeros(batch + (i1 - i0, d_v))
        for j0 in range(0, T_k, block_k):
            j1 = min(j0 + block_k, T_k)
            if causal and j0 >= i1 - 1:         # every key after every query: skip the tile
                skipped += 1
                continue
            S = Q_i @ np.swapaxes(K[..., j0:j1, :], -1, -2) / np.sqrt(d_k)
            if causal and j1 - 1 > i0:          # the diagonal runs through this tile
                future = np.arange(j0, j1)[None, :] > np.arange(i0, i1)[:, None]
                S = np.where(future, -np.inf, S)
            m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
            scale = np.exp(m - m_new)
            P = np.exp(S - m_new)
            s = s * scale + P.sum(axis=-1, keepdims=True)
            o = o * scale + P @ V[..., j0:j1, :]
            m = m_new
        output[..., i0:i1, :] = o / s
    return output, skipped
''',
    ),
    Wrong(
        id='h34-07-tiled-output-not-rescaled',
        exercise='tiled_attention',
        cause="In the online softmax over a row of tiles you rescale s but not o when a tile raises the row maximum, so earlier tiles' value rows stay overweighted. Multiply o by the same scale, exp(m - m_new), as s.",
        kind='running value not rescaled (one of two)',
        wrong_on='Q, K, V random [2, 12, 4], 4 x 4 tiles, causal=False: every row whose maximum grows after its first tile gets a wrong output.',
        source='''import numpy as np

from grader.learner.validation import positive_int
from courseware.long_attention import score_blocks, one_query, tile_inputs, key_value_rows, decode_inputs


def tiled_attention(Q, K, V, block_q, block_k, causal=False):
    """(output, skipped): attention computed tile by tile; with causal=True, tiles wholly in the future are skipped."""
    Q, K, V, batch = tile_inputs(Q, K, V, causal)   # given: checks; batch is the broadcast batch shape
    block_q, block_k = positive_int(block_q, "block_q"), positive_int(block_k, "block_k")
    T_q, T_k, d_k, d_v = Q.shape[-2], K.shape[-2], Q.shape[-1], V.shape[-1]
    output = np.empty(batch + (T_q, d_v))
    skipped = 0
    for i0 in range(0, T_q, block_q):
        i1 = min(i0 + block_q, T_q)
        Q_i = Q[..., i0:i1, :]
        m = np.full(batch + (i1 - i0, 1), -np.inf)
        s = np.zeros(batch + (i1 - i0, 1))
        o = np.zeros(batch + (i1 - i0, d_v))
        for j0 in range(0, T_k, block_k):
            j1 = min(j0 + block_k, T_k)
            if causal and j0 > i1 - 1:          # every key after every query: skip the tile
                skipped += 1
                continue
            S = Q_i @ np.swapaxes(K[..., j0:j1, :], -1, -2) / np.sqrt(d_k)
            if causal and j1 - 1 > i0:          # the diagonal runs through this tile
                future = np.arange(j0, j1)[None, :] > np.arange(i0, i1)[:, None]
                S = np.where(future, -np.inf, S)
            m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
            scale = np.exp(m - m_new)
            P = np.exp(S - m_new)
            s = s * scale + P.sum(axis=-1, keepdims=True)
            o = o + P @ V[..., j0:j1, :]
            m = m_new
        output[..., i0:i1, :] = o / s
    return output, skipped
''',
    ),
    Wrong(
        id='h34-07-tiled-break-counts-one',
        exercise='tiled_attention',
        cause='Stopping the row at the first future tile is fine (all later tiles are in the future too), but then you count only that one tile: skipped must add every tile left in the row, or use continue and count each one.',
        kind='count wrong (break after counting one)',
        wrong_on='T = 12 in 4 x 4 tiles, causal: the output is right but skipped is 2 instead of 3 (query block 0 has two future tiles).',
        source='''import numpy as np

from grader.learner.validation import positive_int
from courseware.long_attention import score_blocks, one_query, tile_inputs, key_value_rows, decode_inputs


def tiled_attention(Q, K, V, block_q, block_k, causal=False):
    """(output, skipped): attention computed tile by tile; with causal=True, tiles wholly in the future are skipped."""
    Q, K, V, batch = tile_inputs(Q, K, V, causal)   # given: checks; batch is the broadcast batch shape
    block_q, block_k = positive_int(block_q, "block_q"), positive_int(block_k, "block_k")
    T_q, T_k, d_k, d_v = Q.shape[-2], K.shape[-2], Q.shape[-1], V.shape[-1]
    output = np.empty(batch + (T_q, d_v))
    skipped = 0
    for i0 in range(0, T_q, block_q):
        i1 = min(i0 + block_q, T_q)
        Q_i = Q[..., i0:i1, :]
        m = np.full(batch + (i1 - i0, 1), -np.inf)
        s = np.zeros(batch + (i1 - i0, 1))
        o = np.zeros(batch + (i1 - i0, d_v))
        for j0 in range(0, T_k, block_k):
            j1 = min(j0 + block_k, T_k)
            if causal and j0 > i1 - 1:          # every key after every query: skip the tile
                skipped += 1
                break                           # the later key blocks are in the future too
            S = Q_i @ np.swapaxes(K[..., j0:j1, :], -1, -2) / np.sqrt(d_k)
            if causal and j1 - 1 > i0:          # the diagonal runs through this tile
                future = np.arange(j0, j1)[None, :] > np.arange(i0, i1)[:, None]
                S = np.where(future, -np.inf, S)
            m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
            scale = np.exp(m - m_new)
            P = np.exp(S - m_new)
            s = s * scale + P.sum(axis=-1, keepdims=True)
            o = o * scale + P @ V[..., j0:j1, :]
            m = m_new
        output[..., i0:i1, :] = o / s
    return output, skipped
''',
    ),
    Wrong(
        id='h34-07-tiled-m-starts-at-zero',
        exercise='tiled_attention',
        cause="You start each row's running maximum at 0 instead of -inf. On paper any start gives the same result, but when every score is far below 0 the maximum stays at 0, e^(score - 0) underflows to 0, and the row becomes 0/0 = NaN. Start from -np.inf so the first tile sets the real maximum.",
        kind='wrong initial value',
        wrong_on='Q, K [2, 12, 4] with every score near -1000, 4 x 4 tiles, causal=False: every output row is NaN.',
        source='''import numpy as np

from grader.learner.validation import positive_int
from courseware.long_attention import score_blocks, one_query, tile_inputs, key_value_rows, decode_inputs


def tiled_attention(Q, K, V, block_q, block_k, causal=False):
    """(output, skipped): attention computed tile by tile; with causal=True, tiles wholly in the future are skipped."""
    Q, K, V, batch = tile_inputs(Q, K, V, causal)   # given: checks; batch is the broadcast batch shape
    block_q, block_k = positive_int(block_q, "block_q"), positive_int(block_k, "block_k")
    T_q, T_k, d_k, d_v = Q.shape[-2], K.shape[-2], Q.shape[-1], V.shape[-1]
    output = np.empty(batch + (T_q, d_v))
    skipped = 0
    for i0 in range(0, T_q, block_q):
        i1 = min(i0 + block_q, T_q)
        Q_i = Q[..., i0:i1, :]
        m = np.zeros(batch + (i1 - i0, 1))
        s = np.zeros(batch + (i1 - i0, 1))
        o = np.zeros(batch + (i1 - i0, d_v))
        for j0 in range(0, T_k, block_k):
            j1 = min(j0 + block_k, T_k)
            if causal and j0 > i1 - 1:          # every key after every query: skip the tile
                skipped += 1
                continue
            S = Q_i @ np.swapaxes(K[..., j0:j1, :], -1, -2) / np.sqrt(d_k)
            if causal and j1 - 1 > i0:          # the diagonal runs through this tile
                future = np.arange(j0, j1)[None, :] > np.arange(i0, i1)[:, None]
                S = np.where(future, -np.inf, S)
            m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
            scale = np.exp(m - m_new)
            P = np.exp(S - m_new)
            s = s * scale + P.sum(axis=-1, keepdims=True)
            o = o * scale + P @ V[..., j0:j1, :]
            m = m_new
        output[..., i0:i1, :] = o / s
    return output, skipped
''',
    ),
    Wrong(
        id='h34-07-tiled-diagonal-masked',
        exercise='tiled_attention',
        cause='Your causal mask uses >=, so it hides key i from query i too: a position may see itself (j <= i), and only j > i is the future. Query 0 then sees no key at all and its row is NaN.',
        kind='wrong triangle (diagonal masked)',
        wrong_on="T = 12 in 4 x 4 tiles, causal: query 0's row is NaN and every other row misses its own key.",
        source='''import numpy as np

from grader.learner.validation import positive_int
from courseware.long_attention import score_blocks, one_query, tile_inputs, key_value_rows, decode_inputs


def tiled_attention(Q, K, V, block_q, block_k, causal=False):
    """(output, skipped): attention computed tile by tile; with causal=True, tiles wholly in the future are skipped."""
    Q, K, V, batch = tile_inputs(Q, K, V, causal)   # given: checks; batch is the broadcast batch shape
    block_q, block_k = positive_int(block_q, "block_q"), positive_int(block_k, "block_k")
    T_q, T_k, d_k, d_v = Q.shape[-2], K.shape[-2], Q.shape[-1], V.shape[-1]
    output = np.empty(batch + (T_q, d_v))
    skipped = 0
    for i0 in range(0, T_q, block_q):
        i1 = min(i0 + block_q, T_q)
        Q_i = Q[..., i0:i1, :]
        m = np.full(batch + (i1 - i0, 1), -np.inf)
        s = np.zeros(batch + (i1 - i0, 1))
        o = np.zeros(batch + (i1 - i0, d_v))
        for j0 in range(0, T_k, block_k):
            j1 = min(j0 + block_k, T_k)
            if causal and j0 > i1 - 1:          # every key after every query: skip the tile
                skipped += 1
                continue
            S = Q_i @ np.swapaxes(K[..., j0:j1, :], -1, -2) / np.sqrt(d_k)
            if causal and j1 - 1 > i0:          # the diagonal runs through this tile
                future = np.arange(j0, j1)[None, :] >= np.arange(i0, i1)[:, None]
                S = np.where(future, -np.inf, S)
            m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
            scale = np.exp(m - m_new)
            P = np.exp(S - m_new)
            s = s * scale + P.sum(axis=-1, keepdims=True)
            o = o * scale + P @ V[..., j0:j1, :]
            m = m_new
        output[..., i0:i1, :] = o / s
    return output, skipped
''',
    ),
    Wrong(
        id='h34-07-tiled-full-transpose',
        exercise='tiled_attention',
        cause='.T on an array with batch axes reverses all of its axes, [B, n, d] becomes [d, n, B], not only the last two. Swap only the last two axes: np.swapaxes(K_block, -1, -2) (or K_block.transpose(..., -1, -2) in torch).',
        kind='full transpose of a batched array',
        wrong_on='Q, K, V random [2, 12, 4] (a batch of 2), 4 x 4 tiles: the product fails or pairs the wrong axes; with 2-D inputs it is right.',
        source='''import numpy as np

from grader.learner.validation import positive_int
from courseware.long_attention import score_blocks, one_query, tile_inputs, key_value_rows, decode_inputs


def tiled_attention(Q, K, V, block_q, block_k, causal=False):
    """(output, skipped): attention computed tile by tile; with causal=True, tiles wholly in the future are skipped."""
    Q, K, V, batch = tile_inputs(Q, K, V, causal)   # given: checks; batch is the broadcast batch shape
    block_q, block_k = positive_int(block_q, "block_q"), positive_int(block_k, "block_k")
    T_q, T_k, d_k, d_v = Q.shape[-2], K.shape[-2], Q.shape[-1], V.shape[-1]
    output = np.empty(batch + (T_q, d_v))
    skipped = 0
    for i0 in range(0, T_q, block_q):
        i1 = min(i0 + block_q, T_q)
        Q_i = Q[..., i0:i1, :]
        m = np.full(batch + (i1 - i0, 1), -np.inf)
        s = np.zeros(batch + (i1 - i0, 1))
        o = np.zeros(batch + (i1 - i0, d_v))
        for j0 in range(0, T_k, block_k):
            j1 = min(j0 + block_k, T_k)
            if causal and j0 > i1 - 1:          # every key after every query: skip the tile
                skipped += 1
                continue
            S = Q_i @ K[..., j0:j1, :].T / np.sqrt(d_k)
            if causal and j1 - 1 > i0:          # the diagonal runs through this tile
                future = np.arange(j0, j1)[None, :] > np.arange(i0, i1)[:, None]
                S = np.where(future, -np.inf, S)
            m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
            scale = np.exp(m - m_new)
            P = np.exp(S - m_new)
            s = s * scale + P.sum(axis=-1, keepdims=True)
            o = o * scale + P @ V[..., j0:j1, :]
            m = m_new
        output[..., i0:i1, :] = o / s
    return output, skipped
''',
    ),
    Wrong(
        id='h34-07-kvcache-len-counts-calls',
        exercise='KVCache',
        cause='len(cache) counts the calls to append, not the positions: appending a block of n positions adds 1. Add the number of rows appended, k.shape[0].',
        kind='counts calls instead of rows',
        wrong_on='append one position, then a block of 3: len is 2 instead of 4 (keys and values are right).',
        source='''import numpy as np

from grader.learner.validation import positive_int
from courseware.long_attention import score_blocks, one_query, tile_inputs, key_value_rows, decode_inputs


class KVCache:
    """The keys [t, d_k] and values [t, d_v] of the t positions seen so far."""

    def __init__(self):
        self._keys = []
        self._values = []
        self._length = 0

    def __len__(self):
        """The number of positions in the cache."""
        return self._length

    def append(self, k, v):
        """Add one position (k [d_k], v [d_v]) or a block of them ([n, d_k], [n, d_v])."""
        k, v = key_value_rows(k, v)    # given: both as blocks of rows [n, d], one value per key
        self._keys.append(k)
        self._values.append(v)
        self._length += 1

    @property
    def keys(self):
        """Every key so far, one row per position: [t, d_k]."""
        if not self._keys:
            raise ValueError("the cache is empty: no keys yet")
        return np.concatenate(self._keys, axis=0)

    @property
    def values(self):
        """Every value so far, one row per position: [t, d_v]."""
        if not self._values:
            raise ValueError("the cache is empty: no values yet")
        return np.concatenate(self._values, axis=0)
''',
    ),
    Wrong(
        id='h34-07-kvcache-newest-first',
        exercise='KVCache',
        cause='You insert each new block at the front, so keys and values come out newest first. The cache keeps positions in order, oldest first: append at the end.',
        kind='order reversed',
        wrong_on='append one position, then another: keys are [k1, k0] instead of [k0, k1].',
        source='''import numpy as np

from grader.learner.validation import positive_int
from courseware.long_attention import score_blocks, one_query, tile_inputs, key_value_rows, decode_inputs


class KVCache:
    """The keys [t, d_k] and values [t, d_v] of the t positions seen so far."""

    def __init__(self):
        self._keys = []
        self._values = []
        self._length = 0

    def __len__(self):
        """The number of positions in the cache."""
        return self._length

    def append(self, k, v):
        """Add one position (k [d_k], v [d_v]) or a block of them ([n, d_k], [n, d_v])."""
        k, v = key_value_rows(k, v)    # given: both as blocks of rows [n, d], one value per key
        self._keys.insert(0, k)
        self._values.insert(0, v)
        self._length += k.shape[0]

    @property
    def keys(self):
        """Every key so far, one row per position: [t, d_k]."""
        if not self._keys:
            raise ValueError("the cache is empty: no keys yet")
        return np.concatenate(self._keys, axis=0)

    @property
    def values(self):
        """Every value so far, one row per position: [t, d_v]."""
        if not self._values:
            raise ValueError("the cache is empty: no values yet")
        return np.concatenate(self._values, axis=0)
''',
    ),
    Wrong(
        id='h34-07-kvcache-values-returns-keys',
        exercise='KVCache',
        cause='The values property returns the keys (copied from keys and not changed). It must concatenate self._values.',
        kind='wrong variable returned (copy-paste)',
        wrong_on='append k [3], v [2]: cache.values has shape [1, 3] and holds the key instead of [1, 2] holding the value.',
        source='''import numpy as np

from grader.learner.validation import positive_int
from courseware.long_attention import score_blocks, one_query, tile_inputs, key_value_rows, decode_inputs


class KVCache:
    """The keys [t, d_k] and values [t, d_v] of the t positions seen so far."""

    def __init__(self):
        self._keys = []
        self._values = []
        self._length = 0

    def __len__(self):
        """The number of positions in the cache."""
        return self._length

    def append(self, k, v):
        """Add one position (k [d_k], v [d_v]) or a block of them ([n, d_k], [n, d_v])."""
        k, v = key_value_rows(k, v)    # given: both as blocks of rows [n, d], one value per key
        self._keys.append(k)
        self._values.append(v)
        self._length += k.shape[0]

    @property
    def keys(self):
        """Every key so far, one row per position: [t, d_k]."""
        if not self._keys:
            raise ValueError("the cache is empty: no keys yet")
        return np.concatenate(self._keys, axis=0)

    @property
    def values(self):
        """Every value so far, one row per position: [t, d_v]."""
        if not self._values:
            raise ValueError("the cache is empty: no values yet")
        return np.concatenate(self._keys, axis=0)
''',
    ),
    Wrong(
        id='h34-07-kvcache-stack-not-concatenate',
        exercise='KVCache',
        cause='np.stack puts the appended blocks along a new axis, so keys come out [number of appends, n, d_k] (and fail when the blocks have different sizes). The blocks are rows to join one after the other: np.concatenate(..., axis=0) gives [t, d_k].',
        kind='an axis too many (stack vs concatenate)',
        wrong_on='append one position k [3]: keys has shape [1, 1, 3] instead of [1, 3].',
        source='''import numpy as np

from grader.learner.validation import positive_int
from courseware.long_attention import score_blocks, one_query, tile_inputs, key_value_rows, decode_inputs


class KVCache:
    """The keys [t, d_k] and values [t, d_v] of the t positions seen so far."""

    def __init__(self):
        self._keys = []
        self._values = []
        self._length = 0

    def __len__(self):
        """The number of positions in the cache."""
        return self._length

    def append(self, k, v):
        """Add one position (k [d_k], v [d_v]) or a block of them ([n, d_k], [n, d_v])."""
        k, v = key_value_rows(k, v)    # given: both as blocks of rows [n, d], one value per key
        self._keys.append(k)
        self._values.append(v)
        self._length += k.shape[0]

    @property
    def keys(self):
        """Every key so far, one row per position: [t, d_k]."""
        if not self._keys:
            raise ValueError("the cache is empty: no keys yet")
        return np.stack(self._keys)

    @property
    def values(self):
        """Every value so far, one row per position: [t, d_v]."""
        if not self._values:
            raise ValueError("the cache is empty: no values yet")
        return np.stack(self._values)
''',
    ),
    Wrong(
        id='h34-07-decode-query-cached-as-key',
        exercise='decode_step',
        cause="You append the new token's query to the cache where its key belongs, so the cache holds queries and the scores compare queries with queries. Append k = x_t W_k (and v); the query is used once, for this step's scores, and never cached.",
        kind='arguments swapped (query cached as key)',
        wrong_on='a prompt of 4 tokens, then tokens 4..6 one at a time, with W_q != W_k: every output differs from causal self-attention, and cache.keys holds X W_q instead of X W_k.',
        source='''import numpy as np

from grader.learner.validation import positive_int
from courseware.long_attention import score_blocks, one_query, tile_inputs, key_value_rows, decode_inputs


class KVCache:
    """The keys [t, d_k] and values [t, d_v] of the t positions seen so far."""

    def __init__(self):
        self._keys = []
        self._values = []
        self._length = 0

    def __len__(self):
        """The number of positions in the cache."""
        return self._length

    def append(self, k, v):
        """Add one position (k [d_k], v [d_v]) or a block of them ([n, d_k], [n, d_v])."""
        k, v = key_value_rows(k, v)    # given: both as blocks of rows [n, d], one value per key
        self._keys.append(k)
        self._values.append(v)
        self._length += k.shape[0]

    @property
    def keys(self):
        """Every key so far, one row per position: [t, d_k]."""
        if not self._keys:
            raise ValueError("the cache is empty: no keys yet")
        return np.concatenate(self._keys, axis=0)

    @property
    def values(self):
        """Every value so far, one row per position: [t, d_v]."""
        if not self._values:
            raise ValueError("the cache is empty: no values yet")
        return np.concatenate(self._values, axis=0)


def decode_step(x_t, cache, W_q, W_k, W_v):
    """Causal self-attention for the new token x_t [d_model] (or new tokens [n, d_model]), reusing the cache."""
    x, W_q, W_k, W_v = decode_inputs(x_t, cache, W_q, W_k, W_v)   # given: checks the shapes
    one_token = x.ndim == 1
    X = x[None, :] if one_token else x                 # [n, d_model]
    n, t = X.shape[0], len(cache)
    q, k, v = X @ W_q, X @ W_k, X @ W_v
    cache.append(q, v)                                 # before attending: a token sees itself
    K, V = cache.keys, cache.values                    # [t + n, d_k], [t + n, d_v]
    scores = q @ K.T / np.sqrt(W_q.shape[1])           # [n, t + n]
    future = np.arange(t + n)[None, :] > (t + np.arange(n))[:, None]
    scores = np.where(future, -np.inf, scores)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    out = weights @ V
    return out[0] if one_token else out
''',
    ),
    Wrong(
        id='h34-07-decode-no-mask-in-block',
        exercise='decode_step',
        cause="You let every new token attend over the whole cache. That is right for one token, but a block of n new tokens must not see each other's future: token i at position t + i may see positions 0..t + i only (the last n rows of the causal mask).",
        kind='mask left out',
        wrong_on='a prompt block of 4 tokens on an empty cache: tokens 0..2 see later prompt tokens; with single tokens it is right.',
        source='''import numpy as np

from grader.learner.validation import positive_int
from courseware.long_attention import score_blocks, one_query, tile_inputs, key_value_rows, decode_inputs


class KVCache:
    """The keys [t, d_k] and values [t, d_v] of the t positions seen so far."""

    def __init__(self):
        self._keys = []
        self._values = []
        self._length = 0

    def __len__(self):
        """The number of positions in the cache."""
        return self._length

    def append(self, k, v):
        """Add one position (k [d_k], v [d_v]) or a block of them ([n, d_k], [n, d_v])."""
        k, v = key_value_rows(k, v)    # given: both as blocks of rows [n, d], one value per key
        self._keys.append(k)
        self._values.append(v)
        self._length += k.shape[0]

    @property
    def keys(self):
        """Every key so far, one row per position: [t, d_k]."""
        if not self._keys:
            raise ValueError("the cache is empty: no keys yet")
        return np.concatenate(self._keys, axis=0)

    @property
    def values(self):
        """Every value so far, one row per position: [t, d_v]."""
        if not self._values:
            raise ValueError("the cache is empty: no values yet")
        return np.concatenate(self._values, axis=0)


def decode_step(x_t, cache, W_q, W_k, W_v):
    """Causal self-attention for the new token x_t [d_model] (or new tokens [n, d_model]), reusing the cache."""
    x, W_q, W_k, W_v = decode_inputs(x_t, cache, W_q, W_k, W_v)   # given: checks the shapes
    one_token = x.ndim == 1
    X = x[None, :] if one_token else x                 # [n, d_model]
    n, t = X.shape[0], len(cache)
    q, k, v = X @ W_q, X @ W_k, X @ W_v
    cache.append(k, v)                                 # before attending: a token sees itself
    K, V = cache.keys, cache.values                    # [t + n, d_k], [t + n, d_v]
    scores = q @ K.T / np.sqrt(W_q.shape[1])           # [n, t + n]
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    out = weights @ V
    return out[0] if one_token else out
''',
    ),
    Wrong(
        id='h34-07-decode-mask-without-offset',
        exercise='decode_step',
        cause="You took lesson 04's causal mask, np.triu(..., k=1), for the n new rows, but those rows sit at positions t..t+n-1, not 0..n-1: new token i may see keys 0..t+i. Shift the diagonal by t (k = t + 1), or compare key positions with t + np.arange(n).",
        kind='mask off by the cache length (triangle k off)',
        wrong_on='a prompt of 2 tokens, then tokens 2..4 one at a time: the single token at position 2 sees only key 0 instead of keys 0..2.',
        source='''import numpy as np

from grader.learner.validation import positive_int
from courseware.long_attention import score_blocks, one_query, tile_inputs, key_value_rows, decode_inputs


class KVCache:
    """The keys [t, d_k] and values [t, d_v] of the t positions seen so far."""

    def __init__(self):
        self._keys = []
        self._values = []
        self._length = 0

    def __len__(self):
        """The number of positions in the cache."""
        return self._length

    def append(self, k, v):
        """Add one position (k [d_k], v [d_v]) or a block of them ([n, d_k], [n, d_v])."""
        k, v = key_value_rows(k, v)    # given: both as blocks of rows [n, d], one value per key
        self._keys.append(k)
        self._values.append(v)
        self._length += k.shape[0]

    @property
    def keys(self):
        """Every key so far, one row per position: [t, d_k]."""
        if not self._keys:
            raise ValueError("the cache is empty: no keys yet")
        return np.concatenate(self._keys, axis=0)

    @property
    def values(self):
        """Every value so far, one row per position: [t, d_v]."""
        if not self._values:
            raise ValueError("the cache is empty: no values yet")
        return np.concatenate(self._values, axis=0)


def decode_step(x_t, cache, W_q, W_k, W_v):
    """Causal self-attention for the new token x_t [d_model] (or new tokens [n, d_model]), reusing the cache."""
    x, W_q, W_k, W_v = decode_inputs(x_t, cache, W_q, W_k, W_v)   # given: checks the shapes
    one_token = x.ndim == 1
    X = x[None, :] if one_token else x                 # [n, d_model]
    n, t = X.shape[0], len(cache)
    q, k, v = X @ W_q, X @ W_k, X @ W_v
    cache.append(k, v)                                 # before attending: a token sees itself
    K, V = cache.keys, cache.values                    # [t + n, d_k], [t + n, d_v]
    scores = q @ K.T / np.sqrt(W_q.shape[1])           # [n, t + n]
    future = np.triu(np.ones((n, t + n), dtype=bool), k=1)
    scores = np.where(future, -np.inf, scores)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    out = weights @ V
    return out[0] if one_token else out
''',
    ),
    Wrong(
        id='h34-07-decode-scale-d-model',
        exercise='decode_step',
        cause='You scale the scores by sqrt(d_model), the width of the token, instead of sqrt(d_k), the width of the queries and keys (W_q.shape[1]).',
        kind='scale of the wrong size',
        wrong_on='d_model = 6, d_k = 4: scores divided by 2.45 instead of 2, so every weight row is too flat (right when d_model = d_k).',
        source='''import numpy as np

from grader.learner.validation import positive_int
from courseware.long_attention import score_blocks, one_query, tile_inputs, key_value_rows, decode_inputs


class KVCache:
    """The keys [t, d_k] and values [t, d_v] of the t positions seen so far."""

    def __init__(self):
        self._keys = []
        self._values = []
        self._length = 0

    def __len__(self):
        """The number of positions in the cache."""
        return self._length

    def append(self, k, v):
        """Add one position (k [d_k], v [d_v]) or a block of them ([n, d_k], [n, d_v])."""
        k, v = key_value_rows(k, v)    # given: both as blocks of rows [n, d], one value per key
        self._keys.append(k)
        self._values.append(v)
        self._length += k.shape[0]

    @property
    def keys(self):
        """Every key so far, one row per position: [t, d_k]."""
        if not self._keys:
            raise ValueError("the cache is empty: no keys yet")
        return np.concatenate(self._keys, axis=0)

    @property
    def values(self):
        """Every value so far, one row per position: [t, d_v]."""
        if not self._values:
            raise ValueError("the cache is empty: no values yet")
        return np.concatenate(self._values, axis=0)


def decode_step(x_t, cache, W_q, W_k, W_v):
    """Causal self-attention for the new token x_t [d_model] (or new tokens [n, d_model]), reusing the cache."""
    x, W_q, W_k, W_v = decode_inputs(x_t, cache, W_q, W_k, W_v)   # given: checks the shapes
    one_token = x.ndim == 1
    X = x[None, :] if one_token else x                 # [n, d_model]
    n, t = X.shape[0], len(cache)
    q, k, v = X @ W_q, X @ W_k, X @ W_v
    cache.append(k, v)                                 # before attending: a token sees itself
    K, V = cache.keys, cache.values                    # [t + n, d_k], [t + n, d_v]
    scores = q @ K.T / np.sqrt(x.shape[-1])            # [n, t + n]
    future = np.arange(t + n)[None, :] > (t + np.arange(n))[:, None]
    scores = np.where(future, -np.inf, scores)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    out = weights @ V
    return out[0] if one_token else out
''',
    ),
    Wrong(
        id='h34-07-decode-one-token-keeps-row-axis',
        exercise='decode_step',
        cause='For a single token x_t [d_model] you return out with its row axis, [1, d_v]; the contract asks for [d_v] for one token and [n, d_v] only for a block. Return out[0] when x_t was one token.',
        kind='an axis of length 1 too many',
        wrong_on='a prompt of 4 tokens, then token 4 alone: the result has shape [1, 3] instead of [3].',
        source='''import numpy as np

from grader.learner.validation import positive_int
from courseware.long_attention import score_blocks, one_query, tile_inputs, key_value_rows, decode_inputs


class KVCache:
    """The keys [t, d_k] and values [t, d_v] of the t positions seen so far."""

    def __init__(self):
        self._keys = []
        self._values = []
        self._length = 0

    def __len__(self):
        """The number of positions in the cache."""
        return self._length

    def append(self, k, v):
        """Add one position (k [d_k], v [d_v]) or a block of them ([n, d_k], [n, d_v])."""
        k, v = key_value_rows(k, v)    # given: both as blocks of rows [n, d], one value per key
        self._keys.append(k)
        self._values.append(v)
        self._length += k.shape[0]

    @property
    def keys(self):
        """Every key so far, one row per position: [t, d_k]."""
        if not self._keys:
            raise ValueError("the cache is empty: no keys yet")
        return np.concatenate(self._keys, axis=0)

    @property
    def values(self):
        """Every value so far, one row per position: [t, d_v]."""
        if not self._values:
            raise ValueError("the cache is empty: no values yet")
        return np.concatenate(self._values, axis=0)


def decode_step(x_t, cache, W_q, W_k, W_v):
    """Causal self-attention for the new token x_t [d_model] (or new tokens [n, d_model]), reusing the cache."""
    x, W_q, W_k, W_v = decode_inputs(x_t, cache, W_q, W_k, W_v)   # given: checks the shapes
    one_token = x.ndim == 1
    X = x[None, :] if one_token else x                 # [n, d_model]
    n, t = X.shape[0], len(cache)
    q, k, v = X @ W_q, X @ W_k, X @ W_v
    cache.append(k, v)                                 # before attending: a token sees itself
    K, V = cache.keys, cache.values                    # [t + n, d_k], [t + n, d_v]
    scores = q @ K.T / np.sqrt(W_q.shape[1])           # [n, t + n]
    future = np.arange(t + n)[None, :] > (t + np.arange(n))[:, None]
    scores = np.where(future, -np.inf, scores)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    out = weights @ V
    return out
''',
    ),
    Wrong(
        id='h34-08-sin-exponent-i-not-2i',
        exercise='sinusoidal_positions',
        cause='Your exponent is i/d with i = 0, 1, 2, ...; the formula has 2i/d. Either take np.arange(0, d, 2) / d (the even numbers 2i) or 2 * np.arange(d // 2) / d.',
        kind='a factor left out in an exponent',
        wrong_on='T = 5, d = 8: pair 1 turns at 10000^(-1/8) ≈ 0.316 rad per position instead of 10000^(-2/8) = 0.1, so every column but the first two is wrong.',
        source='''import numpy as np

from courseware.positions import position_sizes, rope_inputs, rope_score_inputs


def sinusoidal_positions(T, d):
    """The (T, d) table: PE[t, 2i] = sin(t / 10000^(2i/d)), PE[t, 2i + 1] = cos(t / 10000^(2i/d))."""
    T, d = position_sizes(T, d)      # given: T >= 0 and d even and positive, or a ValueError
    t = np.arange(T)[:, None]                          # [T, 1] positions
    theta = 10000.0 ** (-np.arange(d // 2) / d)        # [d/2] frequencies, i = 0, 1, 2, ...
    angles = t * theta                                 # [T, d/2]
    PE = np.empty((T, d))
    PE[:, 0::2] = np.sin(angles)
    PE[:, 1::2] = np.cos(angles)
    return PE
''',
    ),
    Wrong(
        id='h34-08-sin-exponent-sign-flipped',
        exercise='sinusoidal_positions',
        cause='The exponent lost its minus sign: theta_i = 10000^(2i/d) makes the later pairs turn faster and faster instead of slower. theta_i = 1 / 10000^(2i/d) = 10000^(-2i/d).',
        kind='sign flipped in an exponent',
        wrong_on='T = 5, d = 8: pair 1 turns by 10 radians per position instead of 0.1; row 0 is still right, every later row differs from column 2 on.',
        source='''import numpy as np

from courseware.positions import position_sizes, rope_inputs, rope_score_inputs


def sinusoidal_positions(T, d):
    """The (T, d) table: PE[t, 2i] = sin(t / 10000^(2i/d)), PE[t, 2i + 1] = cos(t / 10000^(2i/d))."""
    T, d = position_sizes(T, d)      # given: T >= 0 and d even and positive, or a ValueError
    t = np.arange(T)[:, None]                          # [T, 1] positions
    theta = 10000.0 ** (np.arange(0, d, 2) / d)        # [d/2] frequencies: 2i = 0, 2, 4, ...
    angles = t * theta                                 # [T, d/2]
    PE = np.empty((T, d))
    PE[:, 0::2] = np.sin(angles)
    PE[:, 1::2] = np.cos(angles)
    return PE
''',
    ),
    Wrong(
        id='h34-08-sin-halves-not-interleaved',
        exercise='sinusoidal_positions',
        cause='You put all the sines in the first half of the features and all the cosines in the second. The table interleaves them: pair i is features 2i (sine) and 2i + 1 (cosine), PE[:, 0::2] = sin and PE[:, 1::2] = cos.',
        kind='halves instead of interleaved pairs (features in another order)',
        wrong_on='T = 5, d = 8: row 0 is [0, 0, 0, 0, 1, 1, 1, 1] instead of [0, 1, 0, 1, 0, 1, 0, 1].',
        source='''import numpy as np

from courseware.positions import position_sizes, rope_inputs, rope_score_inputs


def sinusoidal_positions(T, d):
    """The (T, d) table: PE[t, 2i] = sin(t / 10000^(2i/d)), PE[t, 2i + 1] = cos(t / 10000^(2i/d))."""
    T, d = position_sizes(T, d)      # given: T >= 0 and d even and positive, or a ValueError
    t = np.arange(T)[:, None]                          # [T, 1] positions
    theta = 10000.0 ** (-np.arange(0, d, 2) / d)       # [d/2] frequencies: 2i = 0, 2, 4, ...
    angles = t * theta                                 # [T, d/2]
    PE = np.empty((T, d))
    PE[:, : d // 2] = np.sin(angles)
    PE[:, d // 2:] = np.cos(angles)
    return PE
''',
    ),
    Wrong(
        id='h34-08-sin-sin-cos-swapped',
        exercise='sinusoidal_positions',
        cause='Sine and cosine are swapped: the even features (2i) hold the sine and the odd ones (2i + 1) the cosine, so row 0 is [0, 1, 0, 1, ...].',
        kind='two outputs swapped',
        wrong_on='T = 5, d = 8: row 0 is [1, 0, 1, 0, ...] instead of [0, 1, 0, 1, ...].',
        source='''import numpy as np

from courseware.positions import position_sizes, rope_inputs, rope_score_inputs


def sinusoidal_positions(T, d):
    """The (T, d) table: PE[t, 2i] = sin(t / 10000^(2i/d)), PE[t, 2i + 1] = cos(t / 10000^(2i/d))."""
    T, d = position_sizes(T, d)      # given: T >= 0 and d even and positive, or a ValueError
    t = np.arange(T)[:, None]                          # [T, 1] positions
    theta = 10000.0 ** (-np.arange(0, d, 2) / d)       # [d/2] frequencies: 2i = 0, 2, 4, ...
    angles = t * theta                                 # [T, d/2]
    PE = np.empty((T, d))
    PE[:, 0::2] = np.cos(angles)
    PE[:, 1::2] = np.sin(angles)
    return PE
''',
    ),
    Wrong(
        id='h34-08-sin-positions-from-one',
        exercise='sinusoidal_positions',
        cause="Your positions count from 1, so row t holds position t + 1's code. Positions count from 0: np.arange(T), and row 0 is [0, 1, 0, 1, ...].",
        kind='off by one (positions start at 1)',
        wrong_on="T = 5, d = 8: every row is the next position's row; row 0 is [sin 1, cos 1, ...] instead of [0, 1, 0, 1, ...].",
        source='''import numpy as np

from courseware.positions import position_sizes, rope_inputs, rope_score_inputs


def sinusoidal_positions(T, d):
    """The (T, d) table: PE[t, 2i] = sin(t / 10000^(2i/d)), PE[t, 2i + 1] = cos(t / 10000^(2i/d))."""
    T, d = position_sizes(T, d)      # given: T >= 0 and d even and positive, or a ValueError
    t = np.arange(1, T + 1)[:, None]                   # [T, 1] positions
    theta = 10000.0 ** (-np.arange(0, d, 2) / d)       # [d/2] frequencies: 2i = 0, 2, 4, ...
    angles = t * theta                                 # [T, d/2]
    PE = np.empty((T, d))
    PE[:, 0::2] = np.sin(angles)
    PE[:, 1::2] = np.cos(angles)
    return PE
''',
    ),
    Wrong(
        id='h34-08-sin-two-applied-twice',
        exercise='sinusoidal_positions',
        cause='np.arange(0, d, 2) already gives 2i (0, 2, 4, ...); multiplying by 2 again makes the exponent 4i/d, so the frequencies fall twice as fast. Use either np.arange(0, d, 2) / d or 2 * np.arange(d // 2) / d, not both.',
        kind='a factor applied twice',
        wrong_on='T = 5, d = 8: pair 1 turns at 10000^(-4/8) = 0.01 rad per position instead of 0.1.',
        source='''import numpy as np

from courseware.positions import position_sizes, rope_inputs, rope_score_inputs


def sinusoidal_positions(T, d):
    """The (T, d) table: PE[t, 2i] = sin(t / 10000^(2i/d)), PE[t, 2i + 1] = cos(t / 10000^(2i/d))."""
    T, d = position_sizes(T, d)      # given: T >= 0 and d even and positive, or a ValueError
    t = np.arange(T)[:, None]                          # [T, 1] positions
    theta = 10000.0 ** (-2 * np.arange(0, d, 2) / d)   # [d/2] frequencies: 10000^(-2i/d)
    angles = t * theta                                 # [T, d/2]
    PE = np.empty((T, d))
    PE[:, 0::2] = np.sin(angles)
    PE[:, 1::2] = np.cos(angles)
    return PE
''',
    ),
    Wrong(
        id='h34-08-rope-clockwise',
        exercise='rope',
        cause='You turn each pair clockwise, by R(-phi): the signs of the sine terms are swapped. Counterclockwise by phi is (a cos phi - b sin phi, a sin phi + b cos phi).',
        kind='sign flipped (rotation the wrong way)',
        wrong_on='x random [2, 6, 8] at positions [0, 1, 5, 17, 1000, -3]: row 0 is right (angle 0), every other row is turned the wrong way.',
        source='''import numpy as np

from courseware.positions import position_sizes, rope_inputs, rope_score_inputs


def rope(x, positions, base=10000.0):
    """Turn pair (2i, 2i + 1) of row t of x [..., T, d] counterclockwise by positions[t] * base^(-2i/d)."""
    x, positions, base = rope_inputs(x, positions, base)    # given: checks the shapes and positions
    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)              # [d/2]
    angles = positions[:, None] * theta                    # [T, d/2]
    cos, sin = np.cos(angles), np.sin(angles)
    a, b = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = a * cos + b * sin
    out[..., 1::2] = -a * sin + b * cos
    return out
''',
    ),
    Wrong(
        id='h34-08-rope-base-hard-coded',
        exercise='rope',
        cause='You wrote the base as the number 10000.0 instead of using the argument base, so rope(x, positions, base=...) ignores the base it is given. Use base ** (-np.arange(0, d, 2) / d).',
        kind='a parameter replaced by its default',
        wrong_on='x random [2, 6, 8], positions [0, 1, 5, 17, 1000, -3], base = 100: the result is the one for base 10000, wrong in every pair but pair 0.',
        source='''import numpy as np

from courseware.positions import position_sizes, rope_inputs, rope_score_inputs


def rope(x, positions, base=10000.0):
    """Turn pair (2i, 2i + 1) of row t of x [..., T, d] counterclockwise by positions[t] * base^(-2i/d)."""
    x, positions, base = rope_inputs(x, positions, base)    # given: checks the shapes and positions
    d = x.shape[-1]
    theta = 10000.0 ** (-np.arange(0, d, 2) / d)           # [d/2]
    angles = positions[:, None] * theta                    # [T, d/2]
    cos, sin = np.cos(angles), np.sin(angles)
    a, b = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out
''',
    ),
    Wrong(
        id='h34-08-rope-positions-not-a-column',
        exercise='rope',
        cause='positions * theta multiplies two 1-D arrays entry by entry, which only works when T = d/2 and then gives row t one angle for one pair. Every row needs every frequency: make positions a column, positions[:, None] * theta (an outer product, [T, d/2]).',
        kind='[:, None] left out (broadcasting)',
        wrong_on='x [2, 6, 8] (T = 6, d/2 = 4): the shapes do not broadcast and it raises; with T = d/2 it silently turns pair i of row t by positions[i] * theta_i.',
        source='''import numpy as np

from courseware.positions import position_sizes, rope_inputs, rope_score_inputs


def rope(x, positions, base=10000.0):
    """Turn pair (2i, 2i + 1) of row t of x [..., T, d] counterclockwise by positions[t] * base^(-2i/d)."""
    x, positions, base = rope_inputs(x, positions, base)    # given: checks the shapes and positions
    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)              # [d/2]
    angles = positions * theta                             # [T, d/2]
    cos, sin = np.cos(angles), np.sin(angles)
    a, b = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out
''',
    ),
    Wrong(
        id='h34-08-rope-in-place-overwrites-first',
        exercise='rope',
        cause="out = x is not a copy: a = x[..., 0::2] is a view into the same memory, so writing the new first features changes a before the second line reads it (and changes the caller's x too). Write into a new array, np.empty_like(x), or compute both new halves before assigning.",
        kind='in-place change of an input (a view read after it was overwritten)',
        wrong_on='x random [2, 6, 8] at positions [0, 1, 5, 17, 1000, -3]: the second feature of each turned pair uses the already-turned first one, and the input x is modified.',
        source='''import numpy as np

from courseware.positions import position_sizes, rope_inputs, rope_score_inputs


def rope(x, positions, base=10000.0):
    """Turn pair (2i, 2i + 1) of row t of x [..., T, d] counterclockwise by positions[t] * base^(-2i/d)."""
    x, positions, base = rope_inputs(x, positions, base)    # given: checks the shapes and positions
    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)              # [d/2]
    angles = positions[:, None] * theta                    # [T, d/2]
    cos, sin = np.cos(angles), np.sin(angles)
    a, b = x[..., 0::2], x[..., 1::2]
    out = x                                                # turn the pairs in place
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out
''',
    ),
    Wrong(
        id='h34-08-rope-halves-not-pairs',
        exercise='rope',
        cause='You pair feature i with feature i + d/2 (the halves convention of GPT-NeoX and Llama), but this exercise pairs neighbouring features (2i, 2i + 1): a = x[..., 0::2], b = x[..., 1::2], written back to the same places.',
        kind='pairs vs halves (features in another order)',
        wrong_on='x random [2, 6, 8] at positions [0, 1, 5, 17, 1000, -3]: row 0 is right, every other row differs (it equals the pairs result only on permuted features).',
        source='''import numpy as np

from courseware.positions import position_sizes, rope_inputs, rope_score_inputs


def rope(x, positions, base=10000.0):
    """Turn pair (2i, 2i + 1) of row t of x [..., T, d] counterclockwise by positions[t] * base^(-2i/d)."""
    x, positions, base = rope_inputs(x, positions, base)    # given: checks the shapes and positions
    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)              # [d/2]
    angles = positions[:, None] * theta                    # [T, d/2]
    cos, sin = np.cos(angles), np.sin(angles)
    a, b = x[..., : d // 2], x[..., d // 2:]
    out = np.empty_like(x)
    out[..., : d // 2] = a * cos - b * sin
    out[..., d // 2:] = a * sin + b * cos
    return out
''',
    ),
    Wrong(
        id='h34-08-rope-positions-ignored',
        exercise='rope',
        cause='You turn row t by t times each frequency, ignoring the positions you are given. Positions need not start at 0 or go up by one: use positions[:, None] * theta.',
        kind='argument replaced by an assumed default',
        wrong_on='x random [2, 6, 8] at positions [0, 1, 5, 17, 1000, -3]: rows 2..5 are turned by 2..5 instead of 5, 17, 1000, -3.',
        source='''import numpy as np

from courseware.positions import position_sizes, rope_inputs, rope_score_inputs


def rope(x, positions, base=10000.0):
    """Turn pair (2i, 2i + 1) of row t of x [..., T, d] counterclockwise by positions[t] * base^(-2i/d)."""
    x, positions, base = rope_inputs(x, positions, base)    # given: checks the shapes and positions
    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)              # [d/2]
    angles = np.arange(x.shape[-2])[:, None] * theta       # [T, d/2]
    cos, sin = np.cos(angles), np.sin(angles)
    a, b = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out
''',
    ),
    Wrong(
        id='h34-08-scores-full-transpose',
        exercise='rope_scores',
        cause='.T reverses every axis of a batched array, so for K [B, T_k, d] it gives [d, T_k, B] and the batch axes no longer line up. Swap only the last two axes: np.swapaxes(turned_k, -1, -2).',
        kind='full transpose of a batched array',
        wrong_on='Q [2, 3, 8], K [2, 4, 8]: the product raises (or, with other sizes, pairs the wrong axes); with 2-D Q and K it is right.',
        source='''import numpy as np

from courseware.positions import position_sizes, rope_inputs, rope_score_inputs


def rope(x, positions, base=10000.0):
    """Turn pair (2i, 2i + 1) of row t of x [..., T, d] counterclockwise by positions[t] * base^(-2i/d)."""
    x, positions, base = rope_inputs(x, positions, base)    # given: checks the shapes and positions
    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)              # [d/2]
    angles = positions[:, None] * theta                    # [T, d/2]
    cos, sin = np.cos(angles), np.sin(angles)
    a, b = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out


def rope_scores(Q, K, positions_q, positions_k, base=10000.0):
    """rope(Q, positions_q) @ rope(K, positions_k)ᵀ / sqrt(d): [..., T_q, d], [..., T_k, d] -> [..., T_q, T_k]."""
    Q, K, positions_q, positions_k, base = rope_score_inputs(Q, K, positions_q, positions_k, base)  # given
    d = Q.shape[-1]
    turned_q = rope(Q, positions_q, base)
    turned_k = rope(K, positions_k, base)
    return turned_q @ turned_k.T / np.sqrt(d)
''',
    ),
    Wrong(
        id='h34-08-scores-base-not-passed',
        exercise='rope_scores',
        cause='You call rope without passing base on, so it always turns with its default 10000 whatever base rope_scores gets. Pass it: rope(Q, positions_q, base), rope(K, positions_k, base).',
        kind='a parameter replaced by its default',
        wrong_on='Q [2, 3, 8], K [2, 4, 8], positions 10..12 and 0..3, base = 100: the scores are those for base 10000.',
        source='''import numpy as np

from courseware.positions import position_sizes, rope_inputs, rope_score_inputs


def rope(x, positions, base=10000.0):
    """Turn pair (2i, 2i + 1) of row t of x [..., T, d] counterclockwise by positions[t] * base^(-2i/d)."""
    x, positions, base = rope_inputs(x, positions, base)    # given: checks the shapes and positions
    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)              # [d/2]
    angles = positions[:, None] * theta                    # [T, d/2]
    cos, sin = np.cos(angles), np.sin(angles)
    a, b = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out


def rope_scores(Q, K, positions_q, positions_k, base=10000.0):
    """rope(Q, positions_q) @ rope(K, positions_k)ᵀ / sqrt(d): [..., T_q, d], [..., T_k, d] -> [..., T_q, T_k]."""
    Q, K, positions_q, positions_k, base = rope_score_inputs(Q, K, positions_q, positions_k, base)  # given
    d = Q.shape[-1]
    turned_q = rope(Q, positions_q)
    turned_k = rope(K, positions_k)
    return turned_q @ np.swapaxes(turned_k, -1, -2) / np.sqrt(d)
''',
    ),
    Wrong(
        id='h34-08-scores-keys-at-query-positions',
        exercise='rope_scores',
        cause='You turn the keys by the query positions. Each key turns by its own position: rope(K, positions_k, base). (When T_q != T_k this even fails the length check.)',
        kind='wrong argument (copy-paste)',
        wrong_on='Q, K [1, 3, 8] with positions_q = [10, 11, 12] and positions_k = [0, 1, 2]: the keys are turned as if they sat at 10..12, so every score has offset m - n shifted by 10.',
        source='''import numpy as np

from courseware.positions import position_sizes, rope_inputs, rope_score_inputs


def rope(x, positions, base=10000.0):
    """Turn pair (2i, 2i + 1) of row t of x [..., T, d] counterclockwise by positions[t] * base^(-2i/d)."""
    x, positions, base = rope_inputs(x, positions, base)    # given: checks the shapes and positions
    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)              # [d/2]
    angles = positions[:, None] * theta                    # [T, d/2]
    cos, sin = np.cos(angles), np.sin(angles)
    a, b = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out


def rope_scores(Q, K, positions_q, positions_k, base=10000.0):
    """rope(Q, positions_q) @ rope(K, positions_k)ᵀ / sqrt(d): [..., T_q, d], [..., T_k, d] -> [..., T_q, T_k]."""
    Q, K, positions_q, positions_k, base = rope_score_inputs(Q, K, positions_q, positions_k, base)  # given
    d = Q.shape[-1]
    turned_q = rope(Q, positions_q, base)
    turned_k = rope(K, positions_q, base)
    return turned_q @ np.swapaxes(turned_k, -1, -2) / np.sqrt(d)
''',
    ),
    Wrong(
        id='h34-08-scores-divided-by-d',
        exercise='rope_scores',
        cause='The scores are divided by d instead of sqrt(d); as in lesson 02 the scale is 1/sqrt(d).',
        kind='sqrt forgotten',
        wrong_on='Q [2, 3, 8], K [2, 4, 8]: every score is sqrt(8) ≈ 2.83 times too small.',
        source='''import numpy as np

from courseware.positions import position_sizes, rope_inputs, rope_score_inputs


def rope(x, positions, base=10000.0):
    """Turn pair (2i, 2i + 1) of row t of x [..., T, d] counterclockwise by positions[t] * base^(-2i/d)."""
    x, positions, base = rope_inputs(x, positions, base)    # given: checks the shapes and positions
    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)              # [d/2]
    angles = positions[:, None] * theta                    # [T, d/2]
    cos, sin = np.cos(angles), np.sin(angles)
    a, b = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out


def rope_scores(Q, K, positions_q, positions_k, base=10000.0):
    """rope(Q, positions_q) @ rope(K, positions_k)ᵀ / sqrt(d): [..., T_q, d], [..., T_k, d] -> [..., T_q, T_k]."""
    Q, K, positions_q, positions_k, base = rope_score_inputs(Q, K, positions_q, positions_k, base)  # given
    d = Q.shape[-1]
    turned_q = rope(Q, positions_q, base)
    turned_k = rope(K, positions_k, base)
    return turned_q @ np.swapaxes(turned_k, -1, -2) / d
''',
    ),
    Wrong(
        id='h34-08-scores-key-positions-negated',
        exercise='rope_scores',
        cause='You turn the keys by minus their positions, thinking the relative angle needs it. The dot product of two turned vectors already leaves only the difference of the angles: turn both by their own positions, rope(K, positions_k, base).',
        kind='sign flipped',
        wrong_on='Q [2, 3, 8], K [2, 4, 8] with positions_q 10..12 and positions_k 0..3: the scores depend on m + n instead of m - n (key 0, at position 0, is the only one right).',
        source='''import numpy as np

from courseware.positions import position_sizes, rope_inputs, rope_score_inputs


def rope(x, positions, base=10000.0):
    """Turn pair (2i, 2i + 1) of row t of x [..., T, d] counterclockwise by positions[t] * base^(-2i/d)."""
    x, positions, base = rope_inputs(x, positions, base)    # given: checks the shapes and positions
    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)              # [d/2]
    angles = positions[:, None] * theta                    # [T, d/2]
    cos, sin = np.cos(angles), np.sin(angles)
    a, b = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out


def rope_scores(Q, K, positions_q, positions_k, base=10000.0):
    """rope(Q, positions_q) @ rope(K, positions_k)ᵀ / sqrt(d): [..., T_q, d], [..., T_k, d] -> [..., T_q, T_k]."""
    Q, K, positions_q, positions_k, base = rope_score_inputs(Q, K, positions_q, positions_k, base)  # given
    d = Q.shape[-1]
    turned_q = rope(Q, positions_q, base)
    turned_k = rope(K, -positions_k, base)      # the key turns back
    return turned_q @ np.swapaxes(turned_k, -1, -2) / np.sqrt(d)
''',
    ),
]
