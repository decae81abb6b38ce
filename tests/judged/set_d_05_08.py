"""Held-out wrong answers, set d, lessons 05-08 (written from the student notebooks only)."""
from typing import NamedTuple


class Wrong(NamedTuple):
    id: str
    exercise: str
    cause: str
    kind: str
    wrong_on: str
    source: str


# ----------------------------------------------------------------------------- lesson 05

H05 = '''import math
import torch
import torch.nn.functional as F
from torch import nn
'''

SPLIT_HEAD = H05 + '''

def split_heads(x, n_heads):
    """[B, T, d_model] -> [B, h, T, d_head]: head i gets features i*d_head:(i+1)*d_head."""
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError(f"x must be a tensor [B, T, d_model], got {getattr(x, 'shape', type(x))}")
    B, T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
'''

MERGE_HEAD = H05 + '''

def merge_heads(x):
    """[B, h, T, d_head] -> [B, T, h*d_head]: the heads of each token side by side."""
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
'''

SPLIT_OK = '''

def split_heads(x, n_heads):
    """[B, T, d_model] -> [B, h, T, d_head]: head i gets features i*d_head:(i+1)*d_head."""
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError(f"x must be a tensor [B, T, d_model], got {getattr(x, 'shape', type(x))}")
    B, T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    return x.reshape(B, T, n_heads, d_model // n_heads).transpose(1, 2)


def merge_heads(x):
    """[B, h, T, d_head] -> [B, T, h*d_head]: the heads of each token side by side."""
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d_head)
'''

GIVEN_HELPERS = '''

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
    """None, or the bool mask (True = may attend) with 4 axes, broadcastable to [B, h, T_q, T_k]."""
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
'''

MHA_INIT = '''

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
'''

MHA_BODY_OK = '''        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        output = self.w_o(merge_heads(weights @ v))
        return output, weights
'''


def mha_source(body):
    return H05 + SPLIT_OK + GIVEN_HELPERS + MHA_INIT + body


MHA_OK_SOURCE = mha_source(MHA_BODY_OK)

COPY_HEAD = '''

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
'''

HOBO_HEAD = '''

def heads_one_by_one(x, mha):
    """Self-attention of mha on x [B, T, d_model], with a Python loop over the heads."""
    if x.dim() != 3 or x.shape[-1] != mha.d_model:
        raise ValueError(f"x must be [B, T, d_model={mha.d_model}], got shape {tuple(x.shape)}")
    d_head = mha.d_model // mha.n_heads
    outputs, maps = [], []
'''

COUNT_HEAD = H05 + '''

def mha_parameter_count(d_model, n_heads):
    """The number of learned numbers in MultiHeadAttention(d_model, n_heads)."""
    for name, value in (("d_model", d_model), ("n_heads", n_heads)):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
'''

VDU_HEAD = '''

def value_down_up(mha, head):
    """(down [d_model, d_head], up [d_head, d_model]) of one head's value path."""
    if isinstance(head, bool) or not isinstance(head, int) or not 0 <= head < mha.n_heads:
        raise ValueError(f"head must be an int from 0 to {mha.n_heads - 1}, got {head!r}")
    d_head = mha.d_model // mha.n_heads
    features = slice(head * d_head, (head + 1) * d_head)   # this head's d_head features
'''

WRONG = []


def add(*args):
    WRONG.append(Wrong(*args))


# split_heads
add("d34-05-split-heads-interleaved", "split_heads",
    "You reshaped to [B, T, d_head, h] and then moved the head axis forward, so head i gets every h-th feature "
    "(i, i+h, ...) instead of the block i*d_head:(i+1)*d_head; reshape to [B, T, n_heads, d_head] and transpose(1, 2).",
    "heads cut in the wrong order (interleaved features)",
    "x of shape [1, 1, 4] with n_heads=2: head 0 gets features 0 and 2 instead of 0 and 1.",
    SPLIT_HEAD + '''    d_head = d_model // n_heads
    return x.reshape(B, T, d_head, n_heads).permute(0, 3, 1, 2)
''')
add("d34-05-split-heads-transpose-batch", "split_heads",
    "After reshaping to [B, T, h, d_head] you swapped axes 0 and 2 (batch and heads) instead of axes 1 and 2 "
    "(tokens and heads); the result is [h, T, B, d_head]. Use .transpose(1, 2).",
    "transpose of the wrong axes",
    "x of shape [2, 3, 4] with n_heads=2: the result has shape [2, 3, 2, 2] laid out [h, T, B, d_head] instead of [B, h, T, d_head].",
    SPLIT_HEAD + '''    return x.reshape(B, T, n_heads, d_model // n_heads).transpose(0, 2)
''')
add("d34-05-split-heads-reshape-only", "split_heads",
    "You reshaped straight to [B, h, T, d_head]; reshape re-reads memory in order, so head 0 gets the first two "
    "tokens' features mixed together. Reshape to [B, T, h, d_head] first, then transpose(1, 2).",
    "reshape instead of reshape + transpose",
    "x of shape [1, 3, 4] with n_heads=2: head 0 token 1 holds features 2,3 of token 0 instead of features 0,1 of token 1.",
    SPLIT_HEAD + '''    return x.reshape(B, n_heads, T, d_model // n_heads)
''')

# merge_heads
add("d34-05-merge-heads-no-transpose", "merge_heads",
    "You reshaped [B, h, T, d_head] straight to [B, T, h*d_head] without first bringing the token axis in front "
    "of the head axis; transpose(1, 2) before the reshape.",
    "reshape without transpose",
    "x of shape [1, 2, 3, 2]: token 0's row holds head 0's tokens 0..2 instead of head 0 and head 1 of token 0.",
    MERGE_HEAD + '''    return x.reshape(B, T, h * d_head)
''')
add("d34-05-merge-heads-dhead-major", "merge_heads",
    "You permuted to [B, T, d_head, h] before flattening, so the features come out interleaved (feature 0 of every "
    "head, then feature 1, ...); permute to [B, T, h, d_head] (transpose(1, 2)) so head 0's features come first.",
    "axes in the wrong order before flattening",
    "x of shape [1, 2, 1, 2]: the merged row is [h0f0, h1f0, h0f1, h1f1] instead of [h0f0, h0f1, h1f0, h1f1].",
    MERGE_HEAD + '''    return x.permute(0, 2, 3, 1).reshape(B, T, h * d_head)
''')
add("d34-05-merge-heads-transpose-last", "merge_heads",
    "You swapped the last two axes (tokens and features) instead of the head and token axes before the reshape; "
    "use x.transpose(1, 2).",
    "transpose of the wrong axes",
    "x of shape [1, 2, 3, 2]: the numbers of different tokens are mixed into one row.",
    MERGE_HEAD + '''    return x.transpose(2, 3).reshape(B, T, h * d_head)
''')

# MultiHeadAttention
add("d34-05-mha-scale-d-model", "MultiHeadAttention",
    "In forward you divided the scores by sqrt(self.d_model); each head's dot products are sums of d_head terms, "
    "so the scale is sqrt(self.d_head).",
    "scale of the wrong quantity",
    "d_model=4, n_heads=2 on random inputs: the scores are divided by 2 instead of sqrt(2), so the weights are too flat.",
    mha_source(MHA_BODY_OK.replace("math.sqrt(self.d_head)", "math.sqrt(self.d_model)")))
add("d34-05-mha-softmax-over-queries", "MultiHeadAttention",
    "You took the softmax over dim=-2, the queries, so each key's column sums to 1; the softmax belongs over the "
    "keys, the last axis.",
    "softmax over the wrong axis",
    "self-attention with d_model=4, n_heads=2, T=3: the rows of the weights do not sum to 1.",
    mha_source(MHA_BODY_OK.replace("torch.softmax(scores, dim=-1)", "torch.softmax(scores, dim=-2)")))
add("d34-05-mha-mask-fill-zero", "MultiHeadAttention",
    "Where the mask is False you set the score to 0 instead of -inf, so a padding key still gets weight exp(0); "
    "fill with float('-inf').",
    "-inf vs 0 confusion in the mask",
    "a key mask with one False key: that key still gets a positive weight.",
    mha_source(MHA_BODY_OK.replace('masked_fill(~mask, float("-inf"))', 'masked_fill(~mask, 0.0)')))
add("d34-05-mha-no-w-o", "MultiHeadAttention",
    "You return the merged heads without applying the output projection; the last step of forward is "
    "self.w_o(merge_heads(...)).",
    "a layer left out",
    "any input: the output lacks w_o's weight and bias.",
    mha_source(MHA_BODY_OK.replace("self.w_o(merge_heads(weights @ v))", "merge_heads(weights @ v)")))
add("d34-05-mha-value-from-key", "MultiHeadAttention",
    "You computed the values from the key tensor (self.w_v(key)) instead of from value; in self-attention they are "
    "the same tensor, but not when key and value differ.",
    "wrong argument used",
    "a call with key and value different tensors: the output uses the key tokens' values.",
    mha_source(MHA_BODY_OK.replace("self.w_v(value)", "self.w_v(key)")))
add("d34-05-mha-returns-scores", "MultiHeadAttention",
    "You return the masked scores instead of the softmax weights as the second item; return the weights after the "
    "softmax.",
    "returned the wrong variable",
    "any input: the second output is the scaled scores, not weights summing to 1.",
    mha_source(MHA_BODY_OK.replace("return output, weights", "return output, scores")))

# copy_from_torch
COPY_OK_BODY = '''    with torch.no_grad():
        ours.w_q.weight.copy_(theirs.in_proj_weight[:d])
        ours.w_k.weight.copy_(theirs.in_proj_weight[d:2 * d])
        ours.w_v.weight.copy_(theirs.in_proj_weight[2 * d:])
        ours.w_q.bias.copy_(theirs.in_proj_bias[:d])
        ours.w_k.bias.copy_(theirs.in_proj_bias[d:2 * d])
        ours.w_v.bias.copy_(theirs.in_proj_bias[2 * d:])
        ours.w_o.weight.copy_(theirs.out_proj.weight)
        ours.w_o.bias.copy_(theirs.out_proj.bias)
    return ours
'''


def copy_source(body):
    return MHA_OK_SOURCE + COPY_HEAD + body


add("d34-05-copy-transposed", "copy_from_torch",
    "You copied the transposes of torch's blocks (.T) into the weights; in_proj_weight and nn.Linear.weight are "
    "both stored [out, in], so the rows copy over as they are.",
    "a transpose added",
    "nn.MultiheadAttention(4, 2) with random weights: our output differs from torch's.",
    copy_source(COPY_OK_BODY.replace("in_proj_weight[:d])", "in_proj_weight[:d].T)")
                .replace("in_proj_weight[d:2 * d])", "in_proj_weight[d:2 * d].T)")
                .replace("in_proj_weight[2 * d:])", "in_proj_weight[2 * d:].T)")
                .replace("out_proj.weight)", "out_proj.weight.T)")))
add("d34-05-copy-q-k-swapped", "copy_from_torch",
    "You copied rows d:2d into w_q and rows 0:d into w_k (and the same for the biases); rows 0:d of in_proj_weight "
    "are the query projection, d:2d the key projection.",
    "two slices swapped",
    "nn.MultiheadAttention(4, 2) with random weights: the attention weights are those of the transposed scores.",
    copy_source(COPY_OK_BODY.replace("ours.w_q.weight.copy_(theirs.in_proj_weight[:d])", "ours.w_q.weight.copy_(theirs.in_proj_weight[d:2 * d])")
                .replace("ours.w_k.weight.copy_(theirs.in_proj_weight[d:2 * d])", "ours.w_k.weight.copy_(theirs.in_proj_weight[:d])")
                .replace("ours.w_q.bias.copy_(theirs.in_proj_bias[:d])", "ours.w_q.bias.copy_(theirs.in_proj_bias[d:2 * d])")
                .replace("ours.w_k.bias.copy_(theirs.in_proj_bias[d:2 * d])", "ours.w_k.bias.copy_(theirs.in_proj_bias[:d])")))
add("d34-05-copy-out-bias-missing", "copy_from_torch",
    "You copied w_o's weight but not its bias, so ours keeps its own random bias; copy theirs.out_proj.bias into "
    "ours.w_o.bias too.",
    "an operand left out",
    "nn.MultiheadAttention(4, 2) with a nonzero out_proj.bias: every output entry is off by the difference of the biases.",
    copy_source(COPY_OK_BODY.replace("        ours.w_o.bias.copy_(theirs.out_proj.bias)\n", "")))
add("d34-05-copy-v-bias-key-slice", "copy_from_torch",
    "For w_v's bias you copied in_proj_bias[d:2d], the key's slice; the value's bias is in_proj_bias[2d:3d].",
    "slice off by one block",
    "nn.MultiheadAttention(4, 2) with random in_proj_bias: the values are shifted by the wrong bias.",
    copy_source(COPY_OK_BODY.replace("ours.w_v.bias.copy_(theirs.in_proj_bias[2 * d:])", "ours.w_v.bias.copy_(theirs.in_proj_bias[d:2 * d])")))

# heads_one_by_one
HOBO_OK_BODY = '''    for i in range(mha.n_heads):
        rows = slice(i * d_head, (i + 1) * d_head)
        q = x @ mha.w_q.weight[rows].T + mha.w_q.bias[rows]
        k = x @ mha.w_k.weight[rows].T + mha.w_k.bias[rows]
        v = x @ mha.w_v.weight[rows].T + mha.w_v.bias[rows]
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_head), dim=-1)
        outputs.append(weights @ v)
        maps.append(weights)
    output = mha.w_o(torch.cat(outputs, dim=-1))
    return output, torch.stack(maps, dim=1)
'''


def hobo_source(body):
    return MHA_OK_SOURCE + HOBO_HEAD + body


add("d34-05-hobo-stack-dim0", "heads_one_by_one",
    "You stacked the heads' maps along dim=0, giving [h, B, T, T]; stack along dim=1 for [B, h, T, T].",
    "stacked on the wrong axis",
    "x of shape [2, 3, 4] with 2 heads: the weights come out [h, B, T, T].",
    hobo_source(HOBO_OK_BODY.replace("torch.stack(maps, dim=1)", "torch.stack(maps, dim=0)")))
add("d34-05-hobo-columns-not-rows", "heads_one_by_one",
    "You sliced the head's columns and multiplied without the transpose (x @ W[:, rows]); a head owns rows of "
    "nn.Linear's [out, in] weight: x @ W[rows].T.",
    "columns for rows (transpose left out)",
    "mha = MultiHeadAttention(4, 2) and random x: every head's queries, keys and values are wrong.",
    hobo_source(HOBO_OK_BODY.replace("mha.w_q.weight[rows].T", "mha.w_q.weight[:, rows]")
                .replace("mha.w_k.weight[rows].T", "mha.w_k.weight[:, rows]")
                .replace("mha.w_v.weight[rows].T", "mha.w_v.weight[:, rows]")))
add("d34-05-hobo-no-biases", "heads_one_by_one",
    "You computed each head's queries, keys and values with the weight slices only and left out the slices of the "
    "biases; add mha.w_q.bias[rows] (and k, v) as the big layers do.",
    "a term left out",
    "any mha with nonzero biases (nn.Linear's default): output and weights differ from mha(x, x, x).",
    hobo_source(HOBO_OK_BODY.replace(" + mha.w_q.bias[rows]", "").replace(" + mha.w_k.bias[rows]", "")
                .replace(" + mha.w_v.bias[rows]", "")))
add("d34-05-hobo-scale-d-model", "heads_one_by_one",
    "You divided each head's scores by sqrt(mha.d_model); a head's scores are sums of d_head terms, so divide by "
    "sqrt(d_head).",
    "scale of the wrong quantity",
    "mha = MultiHeadAttention(4, 2): the scores are divided by 2 instead of sqrt(2).",
    hobo_source(HOBO_OK_BODY.replace("math.sqrt(d_head)", "math.sqrt(mha.d_model)")))

# mha_parameter_count
add("d34-05-count-no-biases", "mha_parameter_count",
    "You counted the four d_model x d_model weight matrices but not the biases; each nn.Linear also has d_model "
    "biases: 4 * (d_model**2 + d_model).",
    "a term left out",
    "d_model=4, n_heads=2: returns 64 instead of 80.",
    COUNT_HEAD + '''    return 4 * d_model * d_model
''')
add("d34-05-count-per-head-blocks", "mha_parameter_count",
    "You counted h separate d_head x d_head matrices per projection; each projection is one d_model x d_model "
    "layer, whatever the number of heads, so the count is 4 * (d_model**2 + d_model).",
    "wrong formula (heads given small square matrices)",
    "d_model=4, n_heads=2: returns 48 instead of 80.",
    COUNT_HEAD + '''    d_head = d_model // n_heads
    return 4 * n_heads * (d_head * d_head + d_head)
''')
add("d34-05-count-no-w-o", "mha_parameter_count",
    "You counted only w_q, w_k and w_v; the output projection w_o is a fourth nn.Linear(d_model, d_model).",
    "a layer left out",
    "d_model=4, n_heads=2: returns 60 instead of 80.",
    COUNT_HEAD + '''    return 3 * (d_model * d_model + d_model)
''')

# value_down_up
VDU_OK_BODY = '''    down = mha.w_v.weight[features].T
    up = mha.w_o.weight[:, features].T
    return down, up
'''


def vdu_source(body):
    return MHA_OK_SOURCE + VDU_HEAD + body


add("d34-05-vdu-down-columns", "value_down_up",
    "For value-down you took columns of w_v.weight; head i's value features are w_v's output features, which are "
    "rows of the [out, in] weight: down = w_v.weight[features].T.",
    "columns for rows",
    "MultiHeadAttention(4, 2), head 0: down holds the wrong numbers (same shape).",
    vdu_source(VDU_OK_BODY.replace("mha.w_v.weight[features].T", "mha.w_v.weight[:, features]")))
add("d34-05-vdu-up-rows", "value_down_up",
    "For value-up you took rows of w_o.weight; head i feeds w_o's input features, which are columns of the "
    "[out, in] weight: up = w_o.weight[:, features].T.",
    "rows for columns",
    "MultiHeadAttention(4, 2), head 0: up holds rows 0:2 of w_o.weight instead of the transpose of its columns 0:2.",
    vdu_source(VDU_OK_BODY.replace("mha.w_o.weight[:, features].T", "mha.w_o.weight[features]")))
add("d34-05-vdu-head-zero", "value_down_up",
    "You sliced the first d_head features (:d_head) instead of the head's own slice, so every head gets head 0's "
    "matrices; use the given `features`.",
    "hard-coded index instead of the parameter",
    "MultiHeadAttention(4, 2), head 1: returns head 0's down and up.",
    vdu_source('''    down = mha.w_v.weight[:d_head].T
    up = mha.w_o.weight[:, :d_head].T
    return down, up
'''))


# ----------------------------------------------------------------------------- lesson 06

H06 = '''import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    MODEL, TASK, LEARNING_RATE, SKIPS, budget, configure_torch, progress,
    as_stream, as_tokens, as_hidden, check_block_sizes, check_model_sizes,
    check_steps_and_seed, check_depths, layer_outputs,
)
'''

BLOCK_HEAD = '''

class Block(nn.Module):
    """Pre-norm transformer block; x: [batch, tokens, d_model] -> the same shape."""

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
'''

BLOCK_OK_BODY = '''        h = self.ln1(x)
        a = self.attn(h, h, h, need_weights=False)[0]
        x = x + a if self.residual else a
        m = self.mlp(self.ln2(x))
        x = x + m if self.residual else m
        return x
'''

TINY_OK = '''

class TinyTransformer(nn.Module):
    """Embeddings, n_layers Blocks, a final LayerNorm and a linear head."""

    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual=True):
        super().__init__()
        check_model_sizes(vocab_size, d_model, n_heads, d_ff, n_layers, seq_len)
        self.vocab_size, self.seq_len, self.residual = vocab_size, seq_len, bool(residual)
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(seq_len, d_model)
        # self.blocks: an nn.ModuleList of n_layers Blocks
        self.blocks = nn.ModuleList([Block(d_model, n_heads, d_ff, residual) for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens):
        tokens = as_tokens(tokens, self.vocab_size, self.seq_len)   # ValueError for bad ids or shapes
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.tok_emb(tokens) + self.pos_emb(positions)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))
'''

SIM_HEAD = '''

def token_similarity(h):
    """Mean cosine similarity between distinct tokens of each sequence, averaged over the
    batch. h: [..., T, d] with T >= 2 -> a Python float."""
    h = as_hidden(h)    # a float tensor; ValueError if a sequence has fewer than two tokens
'''

SIM_OK_BODY = '''    unit = h / h.norm(dim=-1, keepdim=True)
    cos = unit @ unit.transpose(-1, -2)
    T = h.shape[-2]
    off_diagonal = cos.sum(dim=(-1, -2)) - cos.diagonal(dim1=-2, dim2=-1).sum(-1)
    return (off_diagonal / (T * (T - 1))).mean().item()
'''

TRAIN_HEAD = '''

def train(model, task, steps, seed):
    """Train model in place; return the loss of every step, as a list of floats."""
    steps, seed = check_steps_and_seed(steps, seed)
    generator = torch.Generator().manual_seed(seed)        # every batch comes from here
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    model.train()
    losses = []
'''

TRAIN_OK_BODY = '''    for _ in progress(range(steps), "training"):
        tokens, targets = task.sample(generator)
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
'''

RUN_HEAD = '''

def run_ablation(depths, steps, seed):
    """The depth sweep: one row (a dict) per run, two runs per depth."""
    depths = check_depths(depths)
    steps, seed = check_steps_and_seed(steps, seed)
    probe, _ = TASK.sample(torch.Generator().manual_seed(seed))    # fixed tokens to measure on
    rows = []
'''

RUN_OK_BODY = '''    for depth in depths:
        for residual in (True, False):
            torch.manual_seed(seed)
            model = TinyTransformer(**MODEL, n_layers=depth, residual=residual)
            similarity_init = [token_similarity(h) for h in layer_outputs(model, probe)]
            losses = train(model, TASK, steps, seed)
            similarity_trained = [token_similarity(h) for h in layer_outputs(model, probe)]
            rows.append({"depth": depth, "residual": residual, "losses": losses,
                         "final_loss": float(np.mean(losses[-10:])),
                         "similarity_init": similarity_init,
                         "similarity_trained": similarity_trained})
    return rows
'''


def block_source(body):
    return H06 + BLOCK_HEAD + body


def tiny_source(tiny=TINY_OK):
    return H06 + BLOCK_HEAD + BLOCK_OK_BODY + tiny


def sim_source(body):
    return H06 + SIM_HEAD + body


def train_source(body):
    return H06 + TRAIN_HEAD + body


def run_source(body):
    return (H06 + BLOCK_HEAD + BLOCK_OK_BODY + TINY_OK + SIM_HEAD + SIM_OK_BODY + TRAIN_HEAD
            + TRAIN_OK_BODY + RUN_HEAD + body)


# Block
add("d34-06-block-post-norm", "Block",
    "You wrote a post-norm block, x = ln1(x + attn(x)) and x = ln2(x + mlp(x)): the norms sit on the stream "
    "instead of inside the branches. Pre-norm is x = x + attn(ln1(x)), then x = x + mlp(ln2(x)).",
    "norm in the wrong place",
    "residual=True on a random [2, 3, 8] stream: the output is normalised and differs from x + attn(ln1(x)) + ....",
    block_source('''        if self.residual:
            x = self.ln1(x + self.attn(x, x, x, need_weights=False)[0])
            x = self.ln2(x + self.mlp(x))
        else:
            h = self.ln1(x)
            x = self.attn(h, h, h, need_weights=False)[0]
            x = self.mlp(self.ln2(x))
        return x
'''))
add("d34-06-block-skip-normed-stream", "Block",
    "Your skip adds the normalised copy h = ln1(x) instead of the stream x (x = h + attn(h)); the stream itself "
    "must pass through the skip unchanged: x = x + attn(ln1(x)).",
    "residual carries the wrong tensor",
    "residual=True on a random stream whose rows are not already normalised: the output differs by x - ln1(x).",
    block_source('''        if self.residual:
            x = self.ln1(x)
            x = x + self.attn(x, x, x, need_weights=False)[0]
            x = x + self.mlp(self.ln2(x))
        else:
            h = self.ln1(x)
            x = self.attn(h, h, h, need_weights=False)[0]
            x = self.mlp(self.ln2(x))
        return x
'''))
add("d34-06-block-nores-keeps-mlp-skip", "Block",
    "With residual=False you removed only the attention skip and kept x = x + mlp(ln2(x)); without residuals "
    "both additions go: x = mlp(ln2(attn(ln1(x)))).",
    "one of two skips left in",
    "residual=False on a random stream: the output has the attention output added to the MLP's.",
    block_source('''        h = self.ln1(x)
        a = self.attn(h, h, h, need_weights=False)[0]
        x = x + a if self.residual else a
        x = x + self.mlp(self.ln2(x))
        return x
'''))
add("d34-06-block-raw-keys-values", "Block",
    "You passed the normalised stream only as the query and the raw stream x as key and value (attn(h, x, x)); in "
    "a pre-norm block all three are ln1(x): attn(h, h, h).",
    "wrong argument for key and value",
    "residual=True on a random stream: the keys and values come from the unnormalised x.",
    block_source(BLOCK_OK_BODY.replace("self.attn(h, h, h, need_weights=False)", "self.attn(h, x, x, need_weights=False)")))

# TinyTransformer
add("d34-06-tiny-no-ln-f", "TinyTransformer",
    "forward applies the head straight to the last block's output and never uses ln_f; the stream is normalised "
    "once at the end: self.head(self.ln_f(x)).",
    "a layer left out",
    "any tokens with n_layers=1: the logits lack the final LayerNorm.",
    tiny_source(TINY_OK.replace("self.head(self.ln_f(x))", "self.head(x)")))
add("d34-06-tiny-pos-emb-of-tokens", "TinyTransformer",
    "You looked the positional embeddings up with the token ids (pos_emb(tokens)); they are indexed by position: "
    "pos_emb(torch.arange(T)).",
    "wrong index for an embedding",
    "tokens [[3, 1, 4]]: position 0 gets pos_emb row 3 instead of row 0.",
    tiny_source(TINY_OK.replace("self.pos_emb(positions)", "self.pos_emb(tokens)")))
add("d34-06-tiny-residual-not-passed", "TinyTransformer",
    "You built the blocks as Block(d_model, n_heads, d_ff) without the residual flag, so they always keep their "
    "skips; pass residual to every Block.",
    "parameter left at its default",
    "residual=False, n_layers=2: the model still computes the blocks with skips.",
    tiny_source(TINY_OK.replace("Block(d_model, n_heads, d_ff, residual)", "Block(d_model, n_heads, d_ff)")))
add("d34-06-tiny-one-block-repeated", "TinyTransformer",
    "nn.ModuleList([Block(...)] * n_layers) puts the same Block object in the list n_layers times, so all layers "
    "share one set of weights; build a new Block for each layer in a comprehension.",
    "one module shared instead of n",
    "n_layers=2 loaded with a state_dict whose two blocks differ: both layers end up with block 1's weights.",
    tiny_source(TINY_OK.replace("nn.ModuleList([Block(d_model, n_heads, d_ff, residual) for _ in range(n_layers)])",
                                "nn.ModuleList([Block(d_model, n_heads, d_ff, residual)] * n_layers)")))

# token_similarity
add("d34-06-sim-diagonal-kept", "token_similarity",
    "You averaged the whole T x T cosine matrix, diagonal included; each token's similarity with itself (1) must be "
    "left out, so divide the off-diagonal sum by T(T - 1).",
    "terms not excluded",
    "h of shape [1, 2, 2] with orthogonal tokens: returns 0.5 instead of 0.",
    sim_source('''    unit = h / h.norm(dim=-1, keepdim=True)
    cos = unit @ unit.transpose(-1, -2)
    return cos.mean(dim=(-1, -2)).mean().item()
'''))
add("d34-06-sim-norm-over-tokens", "token_similarity",
    "You divided by the norm taken over the tokens (dim=-2) instead of over each token's features (dim=-1), so "
    "the dot products are not cosines; normalise each row: h.norm(dim=-1, keepdim=True).",
    "norm over the wrong axis",
    "h of shape [1, 2, 2] = [[1, 0], [1, 1]]: returns about 0.5 instead of cos 45° = 0.707.",
    sim_source(SIM_OK_BODY.replace("h.norm(dim=-1, keepdim=True)", "h.norm(dim=-2, keepdim=True)")))
add("d34-06-sim-divide-t-squared", "token_similarity",
    "You removed the diagonal but divided by T*T instead of by the T(T - 1) pairs that are left.",
    "wrong count in an average",
    "h of shape [1, 2, 2] with identical tokens: returns 0.5 instead of 1.",
    sim_source(SIM_OK_BODY.replace("(T * (T - 1))", "(T * T)")))
add("d34-06-sim-full-transpose", "token_similarity",
    "You wrote unit @ unit.T, which reverses every axis of a batched tensor; swap only the last two axes: "
    "unit.transpose(-1, -2) (or mT).",
    "full transpose on a batched array",
    "h of shape [3, 4, 5] (a batch): raises or compares the wrong vectors; only a single [T, d] sequence works.",
    sim_source(SIM_OK_BODY.replace("unit @ unit.transpose(-1, -2)", "unit @ unit.T")))
add("d34-06-sim-tensor-not-float", "token_similarity",
    "You return a 0-d tensor (.mean() without .item()); the function must return a Python float.",
    "right number of the wrong type",
    "any h: returns tensor(0.12...) instead of the float 0.12....",
    sim_source(SIM_OK_BODY.replace("(off_diagonal / (T * (T - 1))).mean().item()", "(off_diagonal / (T * (T - 1))).mean()")))

# train
add("d34-06-train-no-zero-grad", "train",
    "You never clear the gradients, so each backward adds to the previous steps' gradients; call "
    "optimizer.zero_grad() before loss.backward() in every step.",
    "a statement left out of the loop",
    "steps=4 on a small model: from the third step on the losses differ from a correct loop's.",
    train_source(TRAIN_OK_BODY.replace("        optimizer.zero_grad()\n", "")))
add("d34-06-train-global-generator", "train",
    "You called task.sample() without the generator, so the batches come from torch's global generator; pass the "
    "given generator: task.sample(generator).",
    "argument left at its default",
    "steps=3, seed=0: the batches (and so the losses) differ from those drawn from torch.Generator().manual_seed(0).",
    train_source(TRAIN_OK_BODY.replace("task.sample(generator)", "task.sample(None)")))
add("d34-06-train-last-position-only", "train",
    "You computed the cross-entropy on the last position only (logits[:, -1]); the loss is over every position, "
    "with logits flattened to [batch*T, vocab] and targets to [batch*T].",
    "reduction over a slice instead of every position",
    "steps=2: the first loss is the last position's loss, not the mean over all positions.",
    train_source(TRAIN_OK_BODY.replace(
        "F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))",
        "F.cross_entropy(logits[:, -1], targets[:, -1])")))
add("d34-06-train-generator-in-loop", "train",
    "You create torch.Generator().manual_seed(seed) inside the loop, so every step draws the same batch; the "
    "generator is made once, before the loop (the given line), and each step draws the next batch from it.",
    "statement moved into the loop",
    "steps=3: steps 2 and 3 train on step 1's batch, so their losses differ from the correct loop's.",
    train_source(TRAIN_OK_BODY.replace("        tokens, targets = task.sample(generator)\n",
                                       "        generator = torch.Generator().manual_seed(seed)\n"
                                       "        tokens, targets = task.sample(generator)\n")))
add("d34-06-train-step-before-backward", "train",
    "You call optimizer.step() before loss.backward(), so each update uses the previous step's gradients (and the "
    "first step none); the order is zero_grad, backward, step.",
    "statements in the wrong order",
    "steps=3: the second and third losses differ from the correct loop's.",
    train_source(TRAIN_OK_BODY.replace("        loss.backward()\n        optimizer.step()\n",
                                       "        optimizer.step()\n        loss.backward()\n")))

# run_ablation
add("d34-06-run-seed-once", "run_ablation",
    "You seed torch once, before the loops, so each model starts from different weights; call "
    "torch.manual_seed(seed) right before building every model so both models of a depth start alike.",
    "statement moved out of the loop",
    "depths=[1], steps=2, seed=0: the model without residuals starts from other weights, so its similarity_init "
    "(even at the embeddings) differs.",
    run_source(RUN_OK_BODY.replace("    for depth in depths:\n", "    torch.manual_seed(seed)\n    for depth in depths:\n")
               .replace("            torch.manual_seed(seed)\n", "")))
add("d34-06-run-final-loss-last", "run_ablation",
    "final_loss is the last loss alone; it is the mean of the last 10 losses: np.mean(losses[-10:]).",
    "a reduction left out",
    "depths=[1], steps=12: final_loss equals losses[-1] instead of the mean of losses[2:].",
    run_source(RUN_OK_BODY.replace("float(np.mean(losses[-10:]))", "float(losses[-1])")))
add("d34-06-run-final-loss-first-ten", "run_ablation",
    "You averaged losses[:10], the first 10 losses; final_loss is the mean of the last 10, losses[-10:].",
    "slice from the wrong end",
    "depths=[1], steps=12: final_loss is the mean of losses[0:10] instead of losses[2:12].",
    run_source(RUN_OK_BODY.replace("float(np.mean(losses[-10:]))", "float(np.mean(losses[:10]))")))
add("d34-06-run-without-first", "run_ablation",
    "You loop over residual in (False, True), so each depth's run without residuals comes first; the rows go "
    "depth 1 with, depth 1 without, and so on.",
    "wrong order of the rows",
    "depths=[1], steps=2: row 0 has residual=False.",
    run_source(RUN_OK_BODY.replace("for residual in (True, False):", "for residual in (False, True):")))
add("d34-06-run-init-after-training", "run_ablation",
    "You measure similarity_init after train(...) has changed the weights, so it equals similarity_trained; measure "
    "it right after building the model, before training.",
    "statement in the wrong place",
    "depths=[1], steps=5: similarity_init is the trained model's similarity.",
    run_source(RUN_OK_BODY.replace(
        "            similarity_init = [token_similarity(h) for h in layer_outputs(model, probe)]\n"
        "            losses = train(model, TASK, steps, seed)\n",
        "            losses = train(model, TASK, steps, seed)\n"
        "            similarity_init = [token_similarity(h) for h in layer_outputs(model, probe)]\n")))


# ----------------------------------------------------------------------------- lesson 07

H07 = '''import numpy as np

from grader.learner.validation import positive_int
from courseware.long_attention import score_blocks, one_query, tile_inputs, key_value_rows, decode_inputs
'''

OSS_HEAD = H07 + '''

def online_softmax_stats(scores_blocks):
    """(m, s): the largest score, and the sum of exp(x - m) over every score x, in one pass."""
    blocks = score_blocks(scores_blocks)      # given: yields each block, checked, one at a time
'''

OSS_OK_BODY = '''    m, s = -np.inf, 0.0
    for block in blocks:
        m_new = max(m, float(block.max()))
        s = s * np.exp(m - m_new) + float(np.exp(block - m_new).sum())
        m = m_new
    return m, s
'''

add("d34-07-oss-max-updated-first", "online_softmax_stats",
    "You update m to the new maximum before rescaling, so s * exp(m - m) multiplies by 1 and the old sum is never "
    "rescaled; compute m_new first, rescale s by exp(m - m_new), then set m = m_new.",
    "statements in the wrong order (running value not rescaled)",
    "blocks [[0.0], [2.0]]: s = 1 + 1 = 2 instead of e^-2 + 1 = 1.135.",
    OSS_HEAD + '''    m, s = -np.inf, 0.0
    for block in blocks:
        m = max(m, float(block.max()))
        s = s * np.exp(m - m) + float(np.exp(block - m).sum())
    return m, s
''')
add("d34-07-oss-block-own-max", "online_softmax_stats",
    "You add each block's terms relative to that block's own maximum, exp(block - block.max()); after rescaling "
    "the old sum to the new maximum m', the block's terms must be exp(block - m') too.",
    "terms shifted by the wrong maximum",
    "blocks [[2.0], [0.0]]: s = 1 + 1 = 2 instead of 1 + e^-2 = 1.135.",
    OSS_HEAD + OSS_OK_BODY.replace("float(np.exp(block - m_new).sum())", "float(np.exp(block - block.max()).sum())"))
add("d34-07-oss-rescale-sign", "online_softmax_stats",
    "The rescaling factor has its exponent's sign flipped, exp(m_new - m); when the maximum grows from m to m' the "
    "old sum is multiplied by exp(m - m') <= 1 (with m = -inf at the start this even makes NaN).",
    "sign flipped inside an exponent",
    "blocks [[1.0, 2.0]]: 0 * exp(+inf) gives s = nan instead of 1.368.",
    OSS_HEAD + OSS_OK_BODY.replace("np.exp(m - m_new)", "np.exp(m_new - m)"))
add("d34-07-oss-start-at-zero", "online_softmax_stats",
    "You start the running maximum at 0 instead of -inf, so when every score is negative m stays 0 and s is "
    "relative to 0; start from m = -np.inf.",
    "wrong initial value",
    "blocks [[-3.0, -1.0]]: returns m = 0 and s = 0.418 instead of m = -1 and s = 1.135.",
    OSS_HEAD + OSS_OK_BODY.replace("m, s = -np.inf, 0.0", "m, s = 0.0, 0.0"))
add("d34-07-oss-two-loops", "online_softmax_stats",
    "You loop over the blocks twice, once for the maximum and once for the sum; the blocks are a stream and can be "
    "read only once, so keep m and s together in one loop and rescale s when m grows.",
    "rule broken: stream read twice",
    "any blocks, e.g. [[1.0], [2.0]]: the second loop over the stream raises (read twice).",
    OSS_HEAD + '''    m = -np.inf
    for block in blocks:
        m = max(m, float(block.max()))
    s = 0.0
    for block in blocks:
        s += float(np.exp(block - m).sum())
    return m, s
''')

AOP_HEAD = H07 + '''

def attention_one_pass(q, K, V, block):
    """Attention of one query q [d_k] over K [T_k, d_k], V [T_k, d_v], reading `block` keys at a time."""
    q, K, V = one_query(q, K, V)              # given: checks the shapes, never copies K or V
    block = positive_int(block, "block")
'''

AOP_OK_BODY = '''    d_k = q.shape[0]
    m, s = -np.inf, 0.0
    o = np.zeros(V.shape[1])
    for j in range(0, K.shape[0], block):
        K_b, V_b = K[j:j + block], V[j:j + block]
        x = K_b @ q / np.sqrt(d_k)
        m_new = max(m, x.max())
        scale = np.exp(m - m_new)
        p = np.exp(x - m_new)
        s = s * scale + p.sum()
        o = o * scale + p @ V_b
        m = m_new
    return o / s
'''

add("d34-07-aop-output-not-rescaled", "attention_one_pass",
    "When the maximum grows you rescale s but not the running output o; o's terms are relative to the old maximum "
    "too, so multiply o by the same exp(m - m_new).",
    "running value not rescaled",
    "T_k = 4 keys read 2 at a time where the second block holds the largest score: the first block's values are "
    "weighted too much.",
    AOP_HEAD + AOP_OK_BODY.replace("o = o * scale + p @ V_b", "o = o + p @ V_b"))
add("d34-07-aop-scale-d-k", "attention_one_pass",
    "You divided the scores by d_k instead of sqrt(d_k); the scores are q . k / sqrt(d_k).",
    "sqrt forgotten",
    "q of d_k = 4 features: the scores are halved again, so the weights are too flat.",
    AOP_HEAD + AOP_OK_BODY.replace("/ np.sqrt(d_k)", "/ d_k"))
add("d34-07-aop-last-short-block-dropped", "attention_one_pass",
    "Your loop range(0, T_k - block + 1, block) stops before a last, shorter block, so its keys are never read; "
    "loop over range(0, T_k, block) and let the last slice be shorter.",
    "range stopped too early",
    "T_k = 5 keys with block = 2: key 4 is never attended to.",
    AOP_HEAD + AOP_OK_BODY.replace("range(0, K.shape[0], block)", "range(0, K.shape[0] - block + 1, block)"))
add("d34-07-aop-no-final-division", "attention_one_pass",
    "You return the running numerator o without dividing it by s; the weights only sum to 1 after the final o / s.",
    "an operand left out",
    "any q, K, V: the output is s times too large.",
    AOP_HEAD + AOP_OK_BODY.replace("return o / s", "return o"))

TILE_HEAD = H07 + '''

def tiled_attention(Q, K, V, block_q, block_k, causal=False):
    """(output, skipped): attention computed tile by tile; with causal=True, tiles wholly in the future are skipped."""
    Q, K, V, batch = tile_inputs(Q, K, V, causal)   # given: checks; batch is the broadcast batch shape
    block_q, block_k = positive_int(block_q, "block_q"), positive_int(block_k, "block_k")
'''

TILE_OK_BODY = '''    T_q, T_k, d_k, d_v = Q.shape[-2], K.shape[-2], Q.shape[-1], V.shape[-1]
    out = np.zeros(batch + (T_q, d_v))
    skipped = 0
    for i0 in range(0, T_q, block_q):
        i1 = min(i0 + block_q, T_q)
        Q_i = Q[..., i0:i1, :]
        m = np.full(batch + (i1 - i0, 1), -np.inf)
        s = np.zeros(batch + (i1 - i0, 1))
        o = np.zeros(batch + (i1 - i0, d_v))
        for j0 in range(0, T_k, block_k):
            j1 = min(j0 + block_k, T_k)
            if causal and j0 > i1 - 1:
                skipped += 1
                continue
            S = Q_i @ np.swapaxes(K[..., j0:j1, :], -1, -2) / np.sqrt(d_k)
            if causal and j1 - 1 > i0:
                visible = np.arange(i0, i1)[:, None] >= np.arange(j0, j1)[None, :]
                S = np.where(visible, S, -np.inf)
            m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
            scale = np.exp(m - m_new)
            p = np.exp(S - m_new)
            s = s * scale + p.sum(axis=-1, keepdims=True)
            o = o * scale + p @ V[..., j0:j1, :]
            m = m_new
        out[..., i0:i1, :] = o / s
    return out, skipped
'''

add("d34-07-tiled-skip-off-by-one", "tiled_attention",
    "Your skip test j0 >= i1 - 1 also skips a tile whose first key is the block's last query, which that query may "
    "see; a tile is wholly in the future only when j0 > i1 - 1 (its first key after the block's last query).",
    "comparison off by one",
    "T = 12, block_q = 3, block_k = 2, causal: the tile of keys 2..3 for queries 0..2 is skipped, so query 2 never "
    "sees key 2, and the skipped count is too high.",
    TILE_HEAD + TILE_OK_BODY.replace("if causal and j0 > i1 - 1:", "if causal and j0 >= i1 - 1:"))
add("d34-07-tiled-local-mask", "tiled_attention",
    "Inside a diagonal tile you built the causal mask from positions within the tile (arange(i1 - i0) against "
    "arange(j1 - j0)); the rule j <= i uses positions in the whole sequence: arange(i0, i1) against arange(j0, j1).",
    "mask from local instead of global indices",
    "T = 12 with block_q = 3, block_k = 4, causal: in the tile of queries 3..5 and keys 4..7, query 3 is let see "
    "key 4 and query 5 keys 4..6.",
    TILE_HEAD + TILE_OK_BODY.replace("np.arange(i0, i1)[:, None] >= np.arange(j0, j1)[None, :]",
                                     "np.arange(i1 - i0)[:, None] >= np.arange(j1 - j0)[None, :]"))
add("d34-07-tiled-mask-upper-triangle", "tiled_attention",
    "Your mask keeps the pairs with i <= j (the upper triangle) inside the diagonal tiles; under the causal mask query "
    "i may see key j when j <= i: compare arange(i0, i1)[:, None] >= arange(j0, j1)[None, :].",
    "the wrong triangle",
    "T = 4 in 4 x 4 tiles, causal: query 0 sees keys 0..3 and query 3 only key 3.",
    TILE_HEAD + TILE_OK_BODY.replace("np.arange(i0, i1)[:, None] >= np.arange(j0, j1)[None, :]",
                                     "np.arange(i0, i1)[:, None] <= np.arange(j0, j1)[None, :]"))
add("d34-07-tiled-stats-outside-query-loop", "tiled_attention",
    "You set m, s and o once, before the loop over query blocks, so each query block starts from the previous "
    "block's running stats; start them afresh for every query block, inside the loop over i0.",
    "statement moved out of the loop",
    "T = 8 in 4 x 4 tiles, not causal: the output of queries 4..7 mixes in the values weighted for queries 0..3.",
    TILE_HEAD + TILE_OK_BODY.replace(
        "    for i0 in range(0, T_q, block_q):\n        i1 = min(i0 + block_q, T_q)\n        Q_i = Q[..., i0:i1, :]\n"
        "        m = np.full(batch + (i1 - i0, 1), -np.inf)\n        s = np.zeros(batch + (i1 - i0, 1))\n"
        "        o = np.zeros(batch + (i1 - i0, d_v))\n",
        "    m = np.full(batch + (block_q, 1), -np.inf)\n    s = np.zeros(batch + (block_q, 1))\n"
        "    o = np.zeros(batch + (block_q, d_v))\n"
        "    for i0 in range(0, T_q, block_q):\n        i1 = min(i0 + block_q, T_q)\n        Q_i = Q[..., i0:i1, :]\n"))
add("d34-07-tiled-sum-not-rescaled", "tiled_attention",
    "You rescale the running output by exp(m - m_new) but add to the running sum s without rescaling it; s must be "
    "multiplied by the same factor as o.",
    "running value not rescaled",
    "T = 8 in 4 x 4 tiles with random scores: whenever a later tile raises a row's maximum, the row's weights no "
    "longer sum to 1.",
    TILE_HEAD + TILE_OK_BODY.replace("s = s * scale + p.sum(axis=-1, keepdims=True)", "s = s + p.sum(axis=-1, keepdims=True)"))

KV_OK = H07 + '''

class KVCache:
    """The keys [t, d_k] and values [t, d_v] of the t positions seen so far."""

    def __init__(self):
        self._keys, self._values = [], []

    def __len__(self):
        """The number of positions in the cache."""
        return sum(len(k) for k in self._keys)

    def append(self, k, v):
        """Add one position (k [d_k], v [d_v]) or a block of them ([n, d_k], [n, d_v])."""
        k, v = key_value_rows(k, v)    # given: both as blocks of rows [n, d], one value per key
        self._keys.append(np.array(k))
        self._values.append(np.array(v))

    @property
    def keys(self):
        """Every key so far, one row per position: [t, d_k]."""
        if not self._keys:
            raise ValueError("the cache is empty: no keys yet")
        return np.concatenate(self._keys)

    @property
    def values(self):
        """Every value so far, one row per position: [t, d_v]."""
        if not self._values:
            raise ValueError("the cache is empty: no values yet")
        return np.concatenate(self._values)
'''

add("d34-07-kv-append-replaces", "KVCache",
    "append assigns the new block (self._keys = [k]) instead of adding it after the ones already there, so the cache "
    "holds only the last append; append to the list (or concatenate).",
    "assignment instead of accumulation",
    "two appends of one position each: keys has 1 row instead of 2 and len is 1.",
    KV_OK.replace("        self._keys.append(np.array(k))\n        self._values.append(np.array(v))\n",
                  "        self._keys = [np.array(k)]\n        self._values = [np.array(v)]\n"))
add("d34-07-kv-len-counts-calls", "KVCache",
    "__len__ returns the number of append calls (len(self._keys), the number of blocks); it must count positions: "
    "the sum of the blocks' row counts.",
    "counts calls instead of positions",
    "one append of a block of 3 positions: len is 1 instead of 3.",
    KV_OK.replace("return sum(len(k) for k in self._keys)", "return len(self._keys)"))
add("d34-07-kv-newest-first", "KVCache",
    "You insert each new block at the front (insert(0, ...)), so the newest positions come first; keys and values "
    "are oldest first: add new blocks at the end.",
    "order reversed",
    "append k0 then k1: keys is [k1, k0] instead of [k0, k1].",
    KV_OK.replace("self._keys.append(np.array(k))", "self._keys.insert(0, np.array(k))")
    .replace("self._values.append(np.array(v))", "self._values.insert(0, np.array(v))"))
add("d34-07-kv-class-level-lists", "KVCache",
    "You made _keys and _values class attributes (lists written in the class body) and __init__ does not make new "
    "ones, so every KVCache shares the same lists; create the lists in __init__ with self._keys = [].",
    "shared mutable state (wrong initial value)",
    "two caches in a row: the second new cache already holds the first cache's positions.",
    KV_OK.replace('''    def __init__(self):
        self._keys, self._values = [], []
''', '''    _keys, _values = [], []

    def __init__(self):
        pass
'''))
add("d34-07-kv-values-returns-keys", "KVCache",
    "The values property concatenates self._keys (a copy of the keys property); it must return the values.",
    "returned the wrong variable",
    "append k = [1, 2], v = [3]: values is [[1, 2]] instead of [[3]].",
    KV_OK.replace('''            raise ValueError("the cache is empty: no values yet")
        return np.concatenate(self._values)''', '''            raise ValueError("the cache is empty: no values yet")
        return np.concatenate(self._keys)'''))

DEC_HEAD = '''

def decode_step(x_t, cache, W_q, W_k, W_v):
    """Causal self-attention for the new token x_t [d_model] (or new tokens [n, d_model]), reusing the cache."""
    x, W_q, W_k, W_v = decode_inputs(x_t, cache, W_q, W_k, W_v)   # given: checks the shapes
'''

DEC_OK_BODY = '''    rows = np.atleast_2d(x)
    q, k, v = rows @ W_q, rows @ W_k, rows @ W_v
    cache.append(k, v)
    K, V = cache.keys, cache.values
    n, t_all = rows.shape[0], len(cache)
    S = q @ K.T / np.sqrt(W_q.shape[1])
    positions = np.arange(t_all - n, t_all)
    visible = np.arange(t_all)[None, :] <= positions[:, None]
    S = np.where(visible, S, -np.inf)
    weights = np.exp(S - S.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    out = weights @ V
    return out[0] if x.ndim == 1 else out
'''


def dec_source(body):
    return KV_OK + DEC_HEAD + body


add("d34-07-decode-append-after", "decode_step",
    "You attend over the cache before appending the new key and value, so the new token never sees itself (and an "
    "empty cache has nothing at all); append k and v first, then attend over positions 0..t.",
    "statement in the wrong order",
    "a cache holding 2 positions and one new token: the output averages only the 2 old values.",
    dec_source('''    rows = np.atleast_2d(x)
    q, k, v = rows @ W_q, rows @ W_k, rows @ W_v
    K, V = cache.keys, cache.values
    S = q @ K.T / np.sqrt(W_q.shape[1])
    weights = np.exp(S - S.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    cache.append(k, v)
    out = weights @ V
    return out[0] if x.ndim == 1 else out
'''))
add("d34-07-decode-no-causal-mask", "decode_step",
    "With a block of n new tokens you let every new token see every cached position, including the new tokens "
    "after it; new token i may see positions 0..t+i only (the last n rows of the causal mask).",
    "mask left out",
    "an empty cache and a prompt of 3 tokens: token 0 attends to tokens 1 and 2.",
    dec_source(DEC_OK_BODY.replace("    S = np.where(visible, S, -np.inf)\n", "")))
add("d34-07-decode-mask-from-top-left", "decode_step",
    "You built the mask as np.tril(np.ones((n, t + n))) with k = 0, which anchors it at the top-left: new token i "
    "then sees only positions 0..i. The new tokens sit at t..t+n-1, so the diagonal must be offset by t "
    "(k = t_all - n).",
    "triangle offset wrong (k off by t)",
    "a cache holding 3 positions and one new token: it sees only position 0 instead of positions 0..3.",
    dec_source(DEC_OK_BODY.replace("    visible = np.arange(t_all)[None, :] <= positions[:, None]\n",
                                   "    visible = np.tril(np.ones((n, t_all), dtype=bool))\n")))
add("d34-07-decode-scale-d-model", "decode_step",
    "You scaled the scores by sqrt(W_q.shape[0]), the width d_model of the tokens; the scores are q . k / sqrt(d_k), "
    "with d_k = W_q.shape[1].",
    "scale of the wrong quantity",
    "d_model = 6, d_k = 4 with a cache of 2 positions: the weights are too flat.",
    dec_source(DEC_OK_BODY.replace("np.sqrt(W_q.shape[1])", "np.sqrt(W_q.shape[0])")))


# ----------------------------------------------------------------------------- lesson 08

H08 = '''import numpy as np

from courseware.positions import position_sizes, rope_inputs, rope_score_inputs
'''

SIN_HEAD = H08 + '''

def sinusoidal_positions(T, d):
    """The (T, d) table: PE[t, 2i] = sin(t / 10000^(2i/d)), PE[t, 2i + 1] = cos(t / 10000^(2i/d))."""
    T, d = position_sizes(T, d)      # given: T >= 0 and d even and positive, or a ValueError
'''

SIN_OK_BODY = '''    t = np.arange(T)[:, None]
    i = np.arange(d // 2)[None, :]
    theta = 1.0 / 10000 ** (2 * i / d)
    angles = t * theta
    PE = np.zeros((T, d))
    PE[:, 0::2] = np.sin(angles)
    PE[:, 1::2] = np.cos(angles)
    return PE
'''

add("d34-08-sin-exponent-i", "sinusoidal_positions",
    "Your exponent is i/d instead of 2i/d, so pair i turns at 10000^(-i/d), too fast for every pair but the first; "
    "theta_i = 1 / 10000^(2i/d).",
    "a factor left out of an exponent",
    "T = 2, d = 4: pair 1 turns by 10000^(-1/4) = 0.1 per position instead of 10000^(-1/2) = 0.01.",
    SIN_HEAD + SIN_OK_BODY.replace("10000 ** (2 * i / d)", "10000 ** (i / d)"))
add("d34-08-sin-exponent-sign", "sinusoidal_positions",
    "You wrote theta = 1 / 10000^(-2i/d), so the frequencies grow with i instead of shrinking (a sign flipped in the "
    "exponent); theta_i = 10000^(-2i/d).",
    "sign flipped inside an exponent",
    "T = 2, d = 4: pair 1 turns by 100 radians per position instead of 0.01.",
    SIN_HEAD + SIN_OK_BODY.replace("10000 ** (2 * i / d)", "10000 ** (-2 * i / d)"))
add("d34-08-sin-halves-not-interleaved", "sinusoidal_positions",
    "You concatenated all the sines and then all the cosines; pair i sits in features 2i and 2i+1, so write the sines "
    "to PE[:, 0::2] and the cosines to PE[:, 1::2].",
    "concatenated instead of interleaved",
    "T = 1, d = 4: row 0 is [0, 0, 1, 1] instead of [0, 1, 0, 1].",
    SIN_HEAD + SIN_OK_BODY.replace(
        "    PE = np.zeros((T, d))\n    PE[:, 0::2] = np.sin(angles)\n    PE[:, 1::2] = np.cos(angles)\n    return PE\n",
        "    return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)\n"))
add("d34-08-sin-cos-swapped", "sinusoidal_positions",
    "You put the cosines in the even features and the sines in the odd ones; PE[t, 2i] is the sine and PE[t, 2i+1] "
    "the cosine.",
    "two outputs swapped",
    "T = 1, d = 2: row 0 is [1, 0] instead of [0, 1].",
    SIN_HEAD + SIN_OK_BODY.replace("PE[:, 0::2] = np.sin(angles)", "PE[:, 0::2] = np.cos(angles)")
    .replace("PE[:, 1::2] = np.cos(angles)", "PE[:, 1::2] = np.sin(angles)"))
add("d34-08-sin-positions-from-one", "sinusoidal_positions",
    "You numbered the positions 1..T (np.arange(1, T + 1)); positions count from 0, so row 0 is [0, 1, 0, 1, ...].",
    "range started one step off",
    "T = 1, d = 2: row 0 is [sin 1, cos 1] instead of [0, 1].",
    SIN_HEAD + SIN_OK_BODY.replace("np.arange(T)[:, None]", "np.arange(1, T + 1)[:, None]"))
add("d34-08-sin-even-indices-doubled", "sinusoidal_positions",
    "You took i = np.arange(0, d, 2), which is already 2i, and then multiplied by 2 again in the exponent, so pair i "
    "uses 10000^(-4i/d); either use arange(d // 2) with 2i/d or arange(0, d, 2) with i/d.",
    "a factor applied twice",
    "T = 2, d = 4: pair 1 turns by 10000^(-1) per position instead of 10000^(-1/2).",
    SIN_HEAD + SIN_OK_BODY.replace("np.arange(d // 2)[None, :]", "np.arange(0, d, 2)[None, :]"))
add("d34-08-sin-precedence", "sinusoidal_positions",
    "Written without parentheses, 1 / 10000 ** 2 * i / d is (i / d) / 10000**2, not 1 / 10000**(2i/d): the exponent "
    "needs its own parentheses, 10000 ** (2 * i / d).",
    "operator precedence",
    "T = 2, d = 4: pair 0 gets frequency 0 (row 1 starts [0, 1]) instead of 1 radian per position.",
    SIN_HEAD + SIN_OK_BODY.replace("1.0 / 10000 ** (2 * i / d)", "1 / 10000 ** 2 * i / d"))

ROPE_HEAD = H08 + '''

def rope(x, positions, base=10000.0):
    """Turn pair (2i, 2i + 1) of row t of x [..., T, d] counterclockwise by positions[t] * base^(-2i/d)."""
    x, positions, base = rope_inputs(x, positions, base)    # given: checks the shapes and positions
'''

ROPE_OK_BODY = '''    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)
    angles = positions[:, None] * theta[None, :]
    cos, sin = np.cos(angles), np.sin(angles)
    a, b = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out
'''

add("d34-08-rope-clockwise", "rope",
    "Your signs turn each pair clockwise, (a cos + b sin, -a sin + b cos); counterclockwise is (a cos - b sin, "
    "a sin + b cos).",
    "sign flipped",
    "x = [[1, 0]] at position 1: returns [cos 1, -sin 1] instead of [cos 1, sin 1].",
    ROPE_HEAD + ROPE_OK_BODY.replace("a * cos - b * sin", "a * cos + b * sin").replace("a * sin + b * cos", "-a * sin + b * cos"))
add("d34-08-rope-base-hard-coded", "rope",
    "You wrote 10000.0 in the frequencies instead of the base argument, so any other base is ignored; use "
    "base ** (-2i/d).",
    "parameter replaced by a hard-coded number",
    "base = 100, d = 4, position 1: pair 1 turns by 0.01 instead of 0.1.",
    ROPE_HEAD + ROPE_OK_BODY.replace("theta = base ** (-np.arange(0, d, 2) / d)", "theta = 10000.0 ** (-np.arange(0, d, 2) / d)"))
add("d34-08-rope-exponent-half", "rope",
    "You used np.arange(d // 2) / d in the exponent, i/d instead of 2i/d, so every pair after the first turns too "
    "fast; the frequencies are base^(-2i/d).",
    "a factor left out of an exponent",
    "d = 4, position 1: pair 1 turns by 10000^(-1/4) instead of 10000^(-1/2).",
    ROPE_HEAD + ROPE_OK_BODY.replace("-np.arange(0, d, 2) / d", "-np.arange(d // 2) / d"))
add("d34-08-rope-row-index-not-position", "rope",
    "You turned row t by t (np.arange(T)) instead of by positions[t]; the positions need not be 0..T-1.",
    "argument replaced by a default",
    "x of one row at positions [5]: the row is returned unturned instead of turned by 5 theta_i.",
    ROPE_HEAD + ROPE_OK_BODY.replace("positions[:, None] * theta", "np.arange(x.shape[-2])[:, None] * theta"))
add("d34-08-rope-in-place-overwrite", "rope",
    "You wrote the turned first features back into x before computing the second ones, so the second features use "
    "the already turned a (and the caller's array is changed in place); compute both from the original a and b "
    "into a new array.",
    "in-place change of an input",
    "x = [[1, 0]] at position 1: the second feature is cos(1) sin(1) instead of sin(1), and x itself is changed.",
    ROPE_HEAD + '''    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)
    angles = positions[:, None] * theta[None, :]
    cos, sin = np.cos(angles), np.sin(angles)
    a, b = x[..., 0::2], x[..., 1::2]
    x[..., 0::2] = a * cos - b * sin
    x[..., 1::2] = a * sin + b * cos
    return x
''')
add("d34-08-rope-halves", "rope",
    "You paired feature i with feature i + d/2 (the halves convention, x[..., :d//2] with x[..., d//2:]); this "
    "lesson pairs neighbouring features, x[..., 0::2] with x[..., 1::2].",
    "features paired in the wrong order",
    "x = [[1, 2, 3, 4]] at position 1: features 0 and 2 are turned together instead of 0 and 1.",
    ROPE_HEAD + '''    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)
    angles = positions[:, None] * theta[None, :]
    cos, sin = np.cos(angles), np.sin(angles)
    a, b = x[..., : d // 2], x[..., d // 2:]
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)
''')

ROPE_OK_SOURCE = ROPE_HEAD + ROPE_OK_BODY

RS_HEAD = '''

def rope_scores(Q, K, positions_q, positions_k, base=10000.0):
    """rope(Q, positions_q) @ rope(K, positions_k)ᵀ / sqrt(d): [..., T_q, d], [..., T_k, d] -> [..., T_q, T_k]."""
    Q, K, positions_q, positions_k, base = rope_score_inputs(Q, K, positions_q, positions_k, base)  # given
'''

RS_OK_BODY = '''    turned_q = rope(Q, positions_q, base)
    turned_k = rope(K, positions_k, base)
    return turned_q @ np.swapaxes(turned_k, -1, -2) / np.sqrt(Q.shape[-1])
'''


def rs_source(body):
    return ROPE_OK_SOURCE + RS_HEAD + body


add("d34-08-rs-positions-swapped", "rope_scores",
    "You turned Q by positions_k and K by positions_q; each query turns by its own position, positions_q, and each "
    "key by positions_k.",
    "arguments swapped",
    "T_q = T_k = 2 with positions_q = [5, 6] and positions_k = [0, 1]: the offsets come out negated.",
    rs_source(RS_OK_BODY.replace("rope(Q, positions_q, base)", "rope(Q, positions_k, base)")
              .replace("rope(K, positions_k, base)", "rope(K, positions_q, base)")))
add("d34-08-rs-base-not-passed", "rope_scores",
    "You called rope(Q, positions_q) and rope(K, positions_k) without base, so they always use 10000; pass the base "
    "on.",
    "argument left at its default",
    "base = 100 with positions_q = [3], positions_k = [0]: the scores use base 10000's frequencies.",
    rs_source(RS_OK_BODY.replace("rope(Q, positions_q, base)", "rope(Q, positions_q)")
              .replace("rope(K, positions_k, base)", "rope(K, positions_k)")))
add("d34-08-rs-full-transpose", "rope_scores",
    "You wrote turned_k.T, which reverses every axis of a batched K; swap only the last two axes "
    "(np.swapaxes(turned_k, -1, -2)) so the batch axes line up.",
    "full transpose on a batched array",
    "Q of shape [2, 3, 4] and K of shape [2, 5, 4]: raises (or multiplies the wrong axes) instead of giving [2, 3, 5].",
    rs_source(RS_OK_BODY.replace("np.swapaxes(turned_k, -1, -2)", "turned_k.T")))
add("d34-08-rs-no-scale", "rope_scores",
    "You left out the division by sqrt(d); the scores are rope(Q) @ rope(K)^T / sqrt(d).",
    "scale left out",
    "d = 4: every score is twice the expected one.",
    rs_source(RS_OK_BODY.replace(" / np.sqrt(Q.shape[-1])", "")))
add("d34-08-rs-keys-not-turned", "rope_scores",
    "You turned only the queries and scored them against the raw keys; both queries and keys are turned, each by "
    "its own positions, so that the score depends only on their offset.",
    "an operand left out (one side not rotated)",
    "Q = K of one row, positions_q = positions_k = [3]: the score is q . R(3 theta) q instead of |q|^2 / sqrt(d).",
    rs_source(RS_OK_BODY.replace("turned_k = rope(K, positions_k, base)", "turned_k = K")))
