"""Held-out set b34, lessons 05 to 08: wrong answers written from the student notebooks
(and README, courseware, grader/learner/validation.py) alone, each with its true cause.

Each ``source`` is what a learner types into the notebook's answer cell(s): the imports and
given lines, the graded function or class with one mistake, and any graded helper it calls
(written correctly). The shared pieces below are plain string constants, joined per answer.
"""
from typing import NamedTuple


class Wrong(NamedTuple):
    id: str          # short unique id
    exercise: str    # the graded name, exactly as in the notebook's check("name", ...) cell
    cause: str       # the true cause, as a teacher would say it to the learner
    kind: str        # a short category
    wrong_on: str    # an input on which it gives a wrong result, and what goes wrong
    source: str      # the whole answer cell(s) as the learner types them

# ----------------------------------------------------------------------------- lesson 05

IMPORTS_05 = '''import math

import torch
import torch.nn.functional as F
from torch import nn
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
'''

MERGE_OK = '''
def merge_heads(x):
    """[B, h, T, d_head] -> [B, T, h*d_head]: the heads of each token side by side."""
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d_head)
'''

MHA_GIVEN = '''

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
'''

MHA_HEAD = '''

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
        out = self.w_o(merge_heads(weights @ v))
        return out, weights
'''


def mha_source(body):
    return IMPORTS_05 + SPLIT_OK + MERGE_OK + MHA_GIVEN + MHA_HEAD + body


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

COUNT_HEAD = '''

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

SPLIT_HEAD = '''

def split_heads(x, n_heads):
    """[B, T, d_model] -> [B, h, T, d_head]: head i gets features i*d_head:(i+1)*d_head."""
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError(f"x must be a tensor [B, T, d_model], got {getattr(x, 'shape', type(x))}")
    B, T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
'''

MERGE_HEAD = '''

def merge_heads(x):
    """[B, h, T, d_head] -> [B, T, h*d_head]: the heads of each token side by side."""
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
'''

W05 = [
    # ---------------- split_heads
    Wrong(
        id="b34-05-split-heads-interleaved-features",
        exercise="split_heads",
        cause="You cut each token's features as x.reshape(B, T, d_head, n_heads) and moved the last axis "
              "forward, so head i gets every n_heads-th feature (i, i+h, i+2h, ...) instead of the "
              "contiguous block i*d_head:(i+1)*d_head; reshape to (B, T, n_heads, d_head) and transpose(1, 2).",
        kind="reshape to the wrong split of an axis (strided instead of contiguous heads)",
        wrong_on="x of shape [1, 1, 4] with n_heads=2: head 0 gets features 0 and 2 instead of 0 and 1.",
        source=IMPORTS_05 + SPLIT_HEAD + '''    d_head = d_model // n_heads
    return x.reshape(B, T, d_head, n_heads).permute(0, 3, 1, 2)
''',
    ),
    Wrong(
        id="b34-05-split-heads-split-size-is-count",
        exercise="split_heads",
        cause="torch.split's second argument is the size of each piece, not the number of pieces: "
              "x.split(n_heads, dim=-1) makes d_head pieces of n_heads features each, so the result is "
              "[B, d_head, T, n_heads]; split by d_head (or use x.chunk(n_heads, dim=-1)).",
        kind="library argument misread (piece size vs number of pieces)",
        wrong_on="x of shape [1, 2, 6] with n_heads=2 gives shape [1, 3, 2, 2] instead of [1, 2, 2, 3].",
        source=IMPORTS_05 + SPLIT_HEAD + '''    return torch.stack(x.split(n_heads, dim=-1), dim=1)
''',
    ),
    Wrong(
        id="b34-05-split-heads-no-transpose",
        exercise="split_heads",
        cause="You cut the features into heads with x.reshape(B, T, n_heads, d_head) but stopped there: "
              "the head axis is still behind the token axis; add .transpose(1, 2) to get [B, h, T, d_head].",
        kind="transpose left out",
        wrong_on="x of shape [1, 3, 4] with n_heads=2 gives shape [1, 3, 2, 2] instead of [1, 2, 3, 2].",
        source=IMPORTS_05 + SPLIT_HEAD + '''    d_head = d_model // n_heads
    return x.reshape(B, T, n_heads, d_head)
''',
    ),
    # ---------------- merge_heads
    Wrong(
        id="b34-05-merge-heads-head-axis-last",
        exercise="merge_heads",
        cause="You moved the head axis to the end with permute(0, 2, 3, 1) before flattening, so each "
              "token's features come out interleaved (feature 0 of every head, then feature 1 ...); "
              "use transpose(1, 2) so that the flattened axis is (h, d_head) with head 0's block first.",
        kind="axes merged in the wrong order",
        wrong_on="x of shape [1, 2, 1, 2] with entries 0..3 gives [0, 2, 1, 3] instead of [0, 1, 2, 3].",
        source=IMPORTS_05 + MERGE_HEAD + '''    return x.permute(0, 2, 3, 1).reshape(B, T, h * d_head)
''',
    ),
    Wrong(
        id="b34-05-merge-heads-cat-along-tokens",
        exercise="merge_heads",
        cause="You concatenated the heads x[:, i] along dim=1, which is the token axis of each "
              "[B, T, d_head] piece, so the heads are stacked as extra tokens; concatenate along the "
              "feature axis, dim=-1.",
        kind="concatenation along the wrong axis",
        wrong_on="x of shape [1, 2, 3, 2] gives shape [1, 6, 2] instead of [1, 3, 4].",
        source=IMPORTS_05 + MERGE_HEAD + '''    return torch.cat([x[:, i] for i in range(h)], dim=1)
''',
    ),
    Wrong(
        id="b34-05-merge-heads-plain-reshape",
        exercise="merge_heads",
        cause="You reshaped [B, h, T, d_head] straight to [B, T, h*d_head]; reshape reads memory order, "
              "so a 'token' row is made of consecutive tokens of head 0, and so on; transpose(1, 2) first.",
        kind="reshape instead of transpose then reshape",
        wrong_on="x of shape [1, 2, 2, 1] (entries 0..3) gives [[0, 1], [2, 3]] instead of [[0, 2], [1, 3]].",
        source=IMPORTS_05 + MERGE_HEAD + '''    return x.reshape(B, T, h * d_head)
''',
    ),
    # ---------------- MultiHeadAttention
    Wrong(
        id="b34-05-mha-scale-sqrt-d-model",
        exercise="MultiHeadAttention",
        cause="In forward you divided the scores by sqrt(self.d_model); each head's dot products are "
              "sums of d_head terms, so the scale is sqrt(self.d_head).",
        kind="scale of the wrong quantity",
        wrong_on="d_model=8, n_heads=2: every score is divided by 2*sqrt(2) instead of 2, so the weights are flatter.",
        source=mha_source(MHA_BODY_OK.replace("math.sqrt(self.d_head)", "math.sqrt(self.d_model)")),
    ),
    Wrong(
        id="b34-05-mha-softmax-over-queries",
        exercise="MultiHeadAttention",
        cause="You took the softmax over dim=-2 (the queries) instead of dim=-1 (the keys), so each "
              "key's column sums to 1 rather than each query's row.",
        kind="softmax over the wrong axis",
        wrong_on="self-attention with d_model=4, n_heads=2 on x of shape [1, 3, 4]: rows of weights do not sum to 1.",
        source=mha_source(MHA_BODY_OK.replace("torch.softmax(scores, dim=-1)", "torch.softmax(scores, dim=-2)")),
    ),
    Wrong(
        id="b34-05-mha-mask-fill-true",
        exercise="MultiHeadAttention",
        cause="masked_fill(mask, -inf) fills where the mask is True, i.e. exactly the keys that may be "
              "attended; fill where it is False: masked_fill(~mask, float('-inf')).",
        kind="mask polarity inverted",
        wrong_on="a key mask [[True, True, False]] puts all the weight on the padding key instead of none.",
        source=mha_source(MHA_BODY_OK.replace("scores.masked_fill(~mask,", "scores.masked_fill(mask,")),
    ),
    Wrong(
        id="b34-05-mha-no-output-projection",
        exercise="MultiHeadAttention",
        cause="After merging the heads you returned the result without applying self.w_o; the output "
              "is w_o(merge_heads(weights @ v)).",
        kind="operand (final projection) left out",
        wrong_on="any input: the output differs from nn.MultiheadAttention's by the missing w_o.",
        source=mha_source(MHA_BODY_OK.replace("out = self.w_o(merge_heads(weights @ v))", "out = merge_heads(weights @ v)")),
    ),
    Wrong(
        id="b34-05-mha-keys-from-query",
        exercise="MultiHeadAttention",
        cause="You projected the keys from the query argument, self.w_k(query), instead of from key; "
              "self-attention hides it, but in cross-attention the keys must come from the encoder's states.",
        kind="wrong argument used (copy-paste)",
        wrong_on="cross-attention with query [1, 2, 4] and key = value [1, 3, 4]: the scores are [2, 2] instead of [2, 3] (error in the matmul with v).",
        source=mha_source(MHA_BODY_OK.replace("self.w_k(key)", "self.w_k(query)")),
    ),
    Wrong(
        id="b34-05-mha-values-through-w-k",
        exercise="MultiHeadAttention",
        cause="The values were computed with self.w_k(value) (a copy-paste of the key line) instead of "
              "self.w_v(value), so w_v is never used.",
        kind="wrong weight used (copy-paste)",
        wrong_on="any input with w_k and w_v different: the output mixes key projections instead of value projections.",
        source=mha_source(MHA_BODY_OK.replace("self.w_v(value)", "self.w_k(value)")),
    ),
    Wrong(
        id="b34-05-mha-mask-after-softmax",
        exercise="MultiHeadAttention",
        cause="You took the softmax first and then multiplied the weights by the mask, so the masked "
              "keys are zeroed but the remaining weights no longer sum to 1; set masked scores to -inf "
              "before the softmax.",
        kind="mask applied after the softmax",
        wrong_on="a key mask [[True, True, False]]: the rows of weights sum to less than 1 and the output is scaled down.",
        source=mha_source(MHA_BODY_OK.replace(
            '''        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
''', '''        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights * mask
''')),
    ),
    # ---------------- copy_from_torch
    Wrong(
        id="b34-05-copy-weights-transposed",
        exercise="copy_from_torch",
        cause="You copied in_proj_weight's blocks and out_proj.weight transposed (W[:d].T ...), as if they "
              "were lesson 02's W_q; torch and nn.Linear both store [out, in], so copy them as they are.",
        kind="transpose added",
        wrong_on="any theirs with random weights: ours then computes x @ W instead of x @ W.T, so outputs differ.",
        source=IMPORTS_05 + COPY_HEAD + '''    W, b = theirs.in_proj_weight, theirs.in_proj_bias
    with torch.no_grad():
        ours.w_q.weight.copy_(W[:d].T)
        ours.w_k.weight.copy_(W[d:2 * d].T)
        ours.w_v.weight.copy_(W[2 * d:].T)
        ours.w_q.bias.copy_(b[:d])
        ours.w_k.bias.copy_(b[d:2 * d])
        ours.w_v.bias.copy_(b[2 * d:])
        ours.w_o.weight.copy_(theirs.out_proj.weight.T)
        ours.w_o.bias.copy_(theirs.out_proj.bias)
    return ours
''',
    ),
    Wrong(
        id="b34-05-copy-forgot-out-bias",
        exercise="copy_from_torch",
        cause="You copied out_proj.weight into w_o but not out_proj.bias, so w_o keeps its own random "
              "bias; copy theirs.out_proj.bias into ours.w_o.bias too.",
        kind="operand left out (one bias not copied)",
        wrong_on="theirs with a nonzero out_proj.bias: every output entry is off by the difference of the biases.",
        source=IMPORTS_05 + COPY_HEAD + '''    W, b = theirs.in_proj_weight, theirs.in_proj_bias
    with torch.no_grad():
        ours.w_q.weight.copy_(W[:d])
        ours.w_k.weight.copy_(W[d:2 * d])
        ours.w_v.weight.copy_(W[2 * d:])
        ours.w_q.bias.copy_(b[:d])
        ours.w_k.bias.copy_(b[d:2 * d])
        ours.w_v.bias.copy_(b[2 * d:])
        ours.w_o.weight.copy_(theirs.out_proj.weight)
    return ours
''',
    ),
    Wrong(
        id="b34-05-copy-bias-slice-not-changed",
        exercise="copy_from_torch",
        cause="The three bias lines all copy b[:d], the query's slice (the slice was not changed after "
              "copy-pasting the first line); the key and value biases are b[d:2*d] and b[2*d:].",
        kind="slice copy-pasted unchanged",
        wrong_on="theirs with random in_proj_bias: the value bias is the query bias, so the outputs differ.",
        source=IMPORTS_05 + COPY_HEAD + '''    W, b = theirs.in_proj_weight, theirs.in_proj_bias
    with torch.no_grad():
        ours.w_q.weight.copy_(W[:d])
        ours.w_k.weight.copy_(W[d:2 * d])
        ours.w_v.weight.copy_(W[2 * d:])
        ours.w_q.bias.copy_(b[:d])
        ours.w_k.bias.copy_(b[:d])
        ours.w_v.bias.copy_(b[:d])
        ours.w_o.weight.copy_(theirs.out_proj.weight)
        ours.w_o.bias.copy_(theirs.out_proj.bias)
    return ours
''',
    ),
    Wrong(
        id="b34-05-copy-new-parameters",
        exercise="copy_from_torch",
        cause="You replaced ours's parameters with new nn.Parameter objects made from slices of theirs's "
              "tensors (and w_o's with theirs's own out_proj parameters) instead of copying into the "
              "existing ones with copy_ under torch.no_grad(); the numbers are right, but ours's original "
              "parameter objects are gone (an optimizer holding them sees no change), and ours now shares "
              "memory with theirs.",
        kind="stated rule broken (parameters replaced, not copied in place)",
        wrong_on="any call: ours.w_q.weight is no longer the parameter object it was before, and changing theirs afterwards changes ours.",
        source=IMPORTS_05 + COPY_HEAD + '''    W, b = theirs.in_proj_weight, theirs.in_proj_bias
    ours.w_q.weight = nn.Parameter(W[:d])
    ours.w_k.weight = nn.Parameter(W[d:2 * d])
    ours.w_v.weight = nn.Parameter(W[2 * d:])
    ours.w_q.bias = nn.Parameter(b[:d])
    ours.w_k.bias = nn.Parameter(b[d:2 * d])
    ours.w_v.bias = nn.Parameter(b[2 * d:])
    ours.w_o.weight = theirs.out_proj.weight
    ours.w_o.bias = theirs.out_proj.bias
    return ours
''',
    ),
    # ---------------- heads_one_by_one
    Wrong(
        id="b34-05-hobo-weight-columns",
        exercise="heads_one_by_one",
        cause="For head i you took the columns weight[:, features] and computed x @ W_i; head i's "
              "projection is the rows weight[features] applied as x @ W_i.T (nn.Linear stores [out, in]).",
        kind="rows vs columns of a weight (transpose confusion)",
        wrong_on="d_model=4, n_heads=2 with random weights: head 0's queries, keys and values are all different.",
        source=IMPORTS_05 + HOBO_HEAD + '''    for i in range(mha.n_heads):
        f = slice(i * d_head, (i + 1) * d_head)
        q = x @ mha.w_q.weight[:, f] + mha.w_q.bias[f]
        k = x @ mha.w_k.weight[:, f] + mha.w_k.bias[f]
        v = x @ mha.w_v.weight[:, f] + mha.w_v.bias[f]
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_head), dim=-1)
        outputs.append(w @ v)
        maps.append(w)
    return mha.w_o(torch.cat(outputs, dim=-1)), torch.stack(maps, dim=1)
''',
    ),
    Wrong(
        id="b34-05-hobo-value-bias-left-out",
        exercise="heads_one_by_one",
        cause="The value line x @ W_v_i.T has no bias: each head's values need their slice of "
              "mha.w_v.bias added, as the queries and keys have.",
        kind="operand left out (a bias)",
        wrong_on="a module with a nonzero w_v.bias: every output row is off by w_o applied to the missing bias.",
        source=IMPORTS_05 + HOBO_HEAD + '''    for i in range(mha.n_heads):
        f = slice(i * d_head, (i + 1) * d_head)
        q = x @ mha.w_q.weight[f].T + mha.w_q.bias[f]
        k = x @ mha.w_k.weight[f].T + mha.w_k.bias[f]
        v = x @ mha.w_v.weight[f].T
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_head), dim=-1)
        outputs.append(w @ v)
        maps.append(w)
    return mha.w_o(torch.cat(outputs, dim=-1)), torch.stack(maps, dim=1)
''',
    ),
    Wrong(
        id="b34-05-hobo-maps-stacked-dim2",
        exercise="heads_one_by_one",
        cause="torch.stack(maps, dim=2) puts the head axis after the query axis ([B, T, h, T]); stack "
              "along dim=1 to get [B, h, T, T].",
        kind="stacked along the wrong axis",
        wrong_on="B=1, T=3, d_model=4, n_heads=2: the weights have shape [1, 3, 2, 3] instead of [1, 2, 3, 3].",
        source=IMPORTS_05 + HOBO_HEAD + '''    for i in range(mha.n_heads):
        f = slice(i * d_head, (i + 1) * d_head)
        q = x @ mha.w_q.weight[f].T + mha.w_q.bias[f]
        k = x @ mha.w_k.weight[f].T + mha.w_k.bias[f]
        v = x @ mha.w_v.weight[f].T + mha.w_v.bias[f]
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_head), dim=-1)
        outputs.append(w @ v)
        maps.append(w)
    return mha.w_o(torch.cat(outputs, dim=-1)), torch.stack(maps, dim=2)
''',
    ),
    Wrong(
        id="b34-05-hobo-slice-stride-one",
        exercise="heads_one_by_one",
        cause="Head i's rows were taken as i:i + d_head, so the heads overlap (head 1 starts at row 1); "
              "they start at i * d_head: slice(i * d_head, (i + 1) * d_head).",
        kind="slice start off (index instead of offset)",
        wrong_on="d_model=4, n_heads=2: head 1 uses rows 1:3 instead of 2:4 (and row 3 is never used).",
        source=IMPORTS_05 + HOBO_HEAD + '''    for i in range(mha.n_heads):
        f = slice(i, i + d_head)
        q = x @ mha.w_q.weight[f].T + mha.w_q.bias[f]
        k = x @ mha.w_k.weight[f].T + mha.w_k.bias[f]
        v = x @ mha.w_v.weight[f].T + mha.w_v.bias[f]
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_head), dim=-1)
        outputs.append(w @ v)
        maps.append(w)
    return mha.w_o(torch.cat(outputs, dim=-1)), torch.stack(maps, dim=1)
''',
    ),
    # ---------------- mha_parameter_count
    Wrong(
        id="b34-05-count-no-biases",
        exercise="mha_parameter_count",
        cause="You counted only the four d_model x d_model weight matrices; each nn.Linear also has a "
              "bias of d_model numbers, so add 4 * d_model.",
        kind="term left out",
        wrong_on="d_model=2, n_heads=1: returns 16 instead of 24.",
        source=IMPORTS_05 + COUNT_HEAD + '''    return 4 * d_model * d_model
''',
    ),
    Wrong(
        id="b34-05-count-forgot-w-o",
        exercise="mha_parameter_count",
        cause="You counted W_q, W_k and W_v (3 layers) but not the output projection w_o, which is a "
              "fourth nn.Linear(d_model, d_model) with bias.",
        kind="term left out (one layer)",
        wrong_on="d_model=2, n_heads=1: returns 18 instead of 24.",
        source=IMPORTS_05 + COUNT_HEAD + '''    return 3 * (d_model * d_model + d_model)
''',
    ),
    Wrong(
        id="b34-05-count-one-head",
        exercise="mha_parameter_count",
        cause="You counted one head's share, d_model x d_head weights plus d_head biases per projection, "
              "and never multiplied by the number of heads (the heads together use all d_model rows); the "
              "count is 4 * (d_model * d_model + d_model).",
        kind="factor left out (per head instead of all heads)",
        wrong_on="d_model=4, n_heads=2: returns 40 instead of 80.",
        source=IMPORTS_05 + COUNT_HEAD + '''    d_head = d_model // n_heads
    return 4 * (d_model * d_head + d_head)
''',
    ),
    # ---------------- value_down_up
    Wrong(
        id="b34-05-vdu-up-rows-of-w-o",
        exercise="value_down_up",
        cause="For up you took rows w_o.weight[features]; head i's numbers enter w_o as input features, "
              "which are columns of the [out, in] weight: up = w_o.weight[:, features].T.",
        kind="rows vs columns of a weight",
        wrong_on="MultiHeadAttention(4, 2) with random weights, head 0: up has the right shape [2, 4] but other numbers.",
        source=IMPORTS_05 + VDU_HEAD + '''    down = mha.w_v.weight[features].T
    up = mha.w_o.weight[features]
    return down, up
''',
    ),
    Wrong(
        id="b34-05-vdu-down-columns-of-w-v",
        exercise="value_down_up",
        cause="For down you took columns w_v.weight[:, features]; head i's value features are outputs of "
              "w_v, i.e. rows of the [out, in] weight: down = w_v.weight[features].T.",
        kind="rows vs columns of a weight",
        wrong_on="MultiHeadAttention(4, 2) with random weights, head 0: down has the right shape [4, 2] but other numbers.",
        source=IMPORTS_05 + VDU_HEAD + '''    down = mha.w_v.weight[:, features]
    up = mha.w_o.weight[:, features].T
    return down, up
''',
    ),
    Wrong(
        id="b34-05-vdu-up-not-transposed",
        exercise="value_down_up",
        cause="You picked the right columns of w_o.weight for up but did not transpose them, so up is "
              "[d_model, d_head]; in the row convention up = w_o.weight[:, features].T, [d_head, d_model].",
        kind="transpose left out",
        wrong_on="MultiHeadAttention(4, 2), head 0: up has shape [4, 2] instead of [2, 4].",
        source=IMPORTS_05 + VDU_HEAD + '''    down = mha.w_v.weight[features].T
    up = mha.w_o.weight[:, features]
    return down, up
''',
    ),
]

# ----------------------------------------------------------------------------- lesson 06

IMPORTS_06 = '''import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    MODEL, TASK, LEARNING_RATE, progress,
    as_stream, as_tokens, as_hidden, check_block_sizes, check_model_sizes,
    check_steps_and_seed, check_depths, layer_outputs,
)
'''

BLOCK_HEAD = '''

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
'''

BLOCK_BODY_OK = '''        h = self.ln1(x)
        a = self.attn(h, h, h, need_weights=False)[0]
        x = x + a if self.residual else a
        m = self.mlp(self.ln2(x))
        x = x + m if self.residual else m
        return x
'''

TINY_HEAD = '''

class TinyTransformer(nn.Module):
    """Embeddings, n_layers Blocks, a final LayerNorm and a linear head."""

    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual=True):
        super().__init__()
        check_model_sizes(vocab_size, d_model, n_heads, d_ff, n_layers, seq_len)
        self.vocab_size, self.seq_len, self.residual = vocab_size, seq_len, bool(residual)
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(seq_len, d_model)
        # self.blocks: an nn.ModuleList of n_layers Blocks
'''

TINY_BLOCKS_OK = '''        self.blocks = nn.ModuleList(
            [Block(d_model, n_heads, d_ff, residual=residual) for _ in range(n_layers)])
'''

TINY_MID = '''        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens):
        tokens = as_tokens(tokens, self.vocab_size, self.seq_len)   # ValueError for bad ids or shapes
'''

TINY_FWD_OK = '''        T = tokens.shape[1]
        x = self.tok_emb(tokens) + self.pos_emb(torch.arange(T, device=tokens.device))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))
'''

BLOCK_OK_SRC = BLOCK_HEAD + BLOCK_BODY_OK
TINY_OK_SRC = TINY_HEAD + TINY_BLOCKS_OK + TINY_MID + TINY_FWD_OK

SIM_HEAD = '''

def token_similarity(h):
    """Mean cosine similarity between distinct tokens of each sequence, averaged over the
    batch. h: [..., T, d] with T >= 2 -> a Python float."""
    h = as_hidden(h)    # a float tensor; ValueError if a sequence has fewer than two tokens
'''

SIM_OK = SIM_HEAD + '''    u = h / h.norm(dim=-1, keepdim=True)
    C = u @ u.transpose(-1, -2)
    T = h.shape[-2]
    per_seq = (C.sum(dim=(-1, -2)) - C.diagonal(dim1=-2, dim2=-1).sum(-1)) / (T * (T - 1))
    return float(per_seq.mean())
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

TRAIN_OK = TRAIN_HEAD + '''    for _ in progress(range(steps), "training"):
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

W06 = [
    # ---------------- Block
    Wrong(
        id="b34-06-block-skip-adds-normed",
        exercise="Block",
        cause="You wrote x = self.ln1(x) and then x = x + attn(x, x, x), so the first skip carries the "
              "normalised stream instead of the stream itself; keep the norm in its own variable "
              "(h = self.ln1(x)) and add attn(h, h, h) to the un-normalised x.",
        kind="norm in the wrong place (stream overwritten by its norm)",
        wrong_on="Block(8, 2, 16) with random LayerNorm weights, residual=True, any x: the output differs (with residual=False it is right).",
        source=IMPORTS_06 + BLOCK_HEAD + '''        if self.residual:
            x = self.ln1(x)
            x = x + self.attn(x, x, x)[0]
            x = x + self.mlp(self.ln2(x))
        else:
            x = self.attn(self.ln1(x), self.ln1(x), self.ln1(x))[0]
            x = self.mlp(self.ln2(x))
        return x
''',
    ),
    Wrong(
        id="b34-06-block-ln1-twice",
        exercise="Block",
        cause="The MLP branch reads self.ln1(x) (copy-pasted from the attention line); it must read its "
              "own norm, self.ln2(x).",
        kind="wrong layer used (copy-paste)",
        wrong_on="Block(8, 2, 16) with ln1 and ln2 holding different random weights: the MLP's input and so the output differ, with and without residuals.",
        source=IMPORTS_06 + BLOCK_HEAD + '''        h = self.ln1(x)
        a = self.attn(h, h, h, need_weights=False)[0]
        x = x + a if self.residual else a
        m = self.mlp(self.ln1(x))
        x = x + m if self.residual else m
        return x
''',
    ),
    Wrong(
        id="b34-06-block-mlp-skip-kept",
        exercise="Block",
        cause="With residual=False you removed only the skip around attention; the MLP line still adds "
              "x back. Without residuals both additions go: x = mlp(ln2(x)).",
        kind="one of two branches not switched by the flag",
        wrong_on="Block(8, 2, 16, residual=False), any x: the output is attn + mlp(ln2(attn)) instead of mlp(ln2(attn)).",
        source=IMPORTS_06 + BLOCK_HEAD + '''        h = self.ln1(x)
        a = self.attn(h, h, h, need_weights=False)[0]
        x = x + a if self.residual else a
        x = x + self.mlp(self.ln2(x))
        return x
''',
    ),
    Wrong(
        id="b34-06-block-post-norm",
        exercise="Block",
        cause="You wrote a post-norm block, x = ln1(x + attn(x)) and x = ln2(x + mlp(x)): the norm is "
              "applied to the stream after the addition instead of inside the branch before the sublayer "
              "(pre-norm: x + attn(ln1(x))).",
        kind="norm in the wrong place (post-norm instead of pre-norm)",
        wrong_on="Block(8, 2, 16) with random weights on any x, with or without residuals: the output is ln2(...) of the stream instead of x + mlp(ln2(x)), and attention reads the un-normalised x.",
        source=IMPORTS_06 + BLOCK_HEAD + '''        a = self.attn(x, x, x)[0]
        x = self.ln1(x + a) if self.residual else self.ln1(a)
        m = self.mlp(x)
        x = self.ln2(x + m) if self.residual else self.ln2(m)
        return x
''',
    ),
    # ---------------- TinyTransformer
    Wrong(
        id="b34-06-tiny-positions-seq-len",
        exercise="TinyTransformer",
        cause="forward embeds the positions torch.arange(self.seq_len) whatever the length of the input; "
              "for tokens shorter than seq_len that is one position per slot of seq_len, not per token; "
              "use torch.arange(tokens.shape[1]).",
        kind="hard-coded length instead of the input's",
        wrong_on="TinyTransformer with seq_len=8 on tokens of shape [2, 5]: the sum of [2, 5, d] and [8, d] raises a size error.",
        source=IMPORTS_06 + BLOCK_OK_SRC + TINY_HEAD + TINY_BLOCKS_OK + TINY_MID + '''        x = self.tok_emb(tokens) + self.pos_emb(torch.arange(self.seq_len))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))
''',
    ),
    Wrong(
        id="b34-06-tiny-residual-not-passed",
        exercise="TinyTransformer",
        cause="The blocks are built as Block(d_model, n_heads, d_ff) without the residual flag, so they "
              "always keep their skips; pass residual=residual to every Block.",
        kind="parameter replaced by its default",
        wrong_on="TinyTransformer(..., residual=False) on any tokens: the output is the with-skips model's.",
        source=IMPORTS_06 + BLOCK_OK_SRC + TINY_HEAD + '''        self.blocks = nn.ModuleList([Block(d_model, n_heads, d_ff) for _ in range(n_layers)])
''' + TINY_MID + TINY_FWD_OK,
    ),
    Wrong(
        id="b34-06-tiny-same-block-repeated",
        exercise="TinyTransformer",
        cause="nn.ModuleList([Block(...)] * n_layers) puts the same Block object in the list n_layers "
              "times, so all layers share one set of weights; build a new Block in each iteration of a "
              "comprehension.",
        kind="one object repeated instead of n new ones (shared weights)",
        wrong_on="n_layers=2 with the two blocks loaded with different weights: both layers run the last-loaded weights.",
        source=IMPORTS_06 + BLOCK_OK_SRC + TINY_HEAD + '''        self.blocks = nn.ModuleList([Block(d_model, n_heads, d_ff, residual=residual)] * n_layers)
''' + TINY_MID + TINY_FWD_OK,
    ),
    Wrong(
        id="b34-06-tiny-pos-emb-of-tokens",
        exercise="TinyTransformer",
        cause="You looked up the position embedding with the token ids, self.pos_emb(tokens), so a token "
              "gets the position vector of its own id; look it up with the positions torch.arange(T).",
        kind="wrong index into an embedding",
        wrong_on="tokens [[3, 3]]: both positions get the same input vector, so the two outputs are equal instead of different.",
        source=IMPORTS_06 + BLOCK_OK_SRC + TINY_HEAD + TINY_BLOCKS_OK + TINY_MID + '''        x = self.tok_emb(tokens) + self.pos_emb(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))
''',
    ),
    # ---------------- token_similarity
    Wrong(
        id="b34-06-sim-diagonal-kept",
        exercise="token_similarity",
        cause="You averaged the whole T x T matrix of cosines, including each token's similarity with "
              "itself (always 1); leave out the diagonal and divide by T(T-1).",
        kind="entries not excluded (diagonal kept)",
        wrong_on="h = [[1, 0], [0, 1]]: returns 0.5 instead of 0.",
        source=IMPORTS_06 + SIM_HEAD + '''    u = h / h.norm(dim=-1, keepdim=True)
    C = u @ u.transpose(-1, -2)
    return float(C.mean())
''',
    ),
    Wrong(
        id="b34-06-sim-normalise-over-tokens",
        exercise="token_similarity",
        cause="You divided h by its norm over dim=-2 (the tokens) instead of dim=-1 (the features), so "
              "the rows are not unit vectors and the products are not cosines.",
        kind="reduction over the wrong axis",
        wrong_on="h = [[1, 0], [1, 1]]: returns 0.5 instead of cos 45° = 0.707.",
        source=IMPORTS_06 + SIM_HEAD + '''    u = h / h.norm(dim=-2, keepdim=True)
    C = u @ u.transpose(-1, -2)
    T = h.shape[-2]
    off = C.sum(dim=(-1, -2)) - C.diagonal(dim1=-2, dim2=-1).sum(-1)
    return float((off / (T * (T - 1))).mean())
''',
    ),
    Wrong(
        id="b34-06-sim-transpose-1-2",
        exercise="token_similarity",
        cause="h.transpose(1, 2) swaps the last two axes only for a 3-axis h; for [T, d] it raises and "
              "for [B1, B2, T, d] it swaps a batch axis with the tokens; use h.transpose(-1, -2) (or h.mT).",
        kind="axis counted from the front instead of the back",
        wrong_on="h of shape [3, 4] (one sequence, no batch axis): raises an IndexError instead of returning a float.",
        source=IMPORTS_06 + SIM_HEAD + '''    u = h / h.norm(dim=-1, keepdim=True)
    C = u @ u.transpose(1, 2)
    T = h.shape[-2]
    off = C.sum(dim=(-1, -2)) - C.diagonal(dim1=-2, dim2=-1).sum(-1)
    return float((off / (T * (T - 1))).mean())
''',
    ),
    Wrong(
        id="b34-06-sim-divide-by-t-squared",
        exercise="token_similarity",
        cause="You removed the diagonal from the sum but still divided by T*T; there are T(T-1) pairs of "
              "distinct tokens, so divide by T * (T - 1).",
        kind="wrong denominator of a mean",
        wrong_on="h = [[1, 0], [1, 0]] (identical tokens): returns 0.5 instead of 1.",
        source=IMPORTS_06 + SIM_HEAD + '''    u = h / h.norm(dim=-1, keepdim=True)
    C = u @ u.transpose(-1, -2)
    T = h.shape[-2]
    off = C.sum(dim=(-1, -2)) - C.diagonal(dim1=-2, dim2=-1).sum(-1)
    return float((off / (T * T)).mean())
''',
    ),
    # ---------------- train
    Wrong(
        id="b34-06-train-zero-grad-after-backward",
        exercise="train",
        cause="optimizer.zero_grad() is called between loss.backward() and optimizer.step(), so it wipes "
              "the gradients just computed and optimizer.step() has nothing to apply: the weights never "
              "change. Clear the gradients before loss.backward().",
        kind="statements in the wrong order",
        wrong_on="any model and 3 steps: the weights never change, so the losses differ from the reference's after the first step.",
        source=IMPORTS_06 + TRAIN_HEAD + '''    for _ in progress(range(steps), "training"):
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
        id="b34-06-train-last-position-only",
        exercise="train",
        cause="You computed the cross-entropy on the last position only (logits[:, -1], targets[:, -1]), "
              "as for next-token prediction; this task has a target at every position, so flatten all "
              "positions: logits to [batch*T, vocab], targets to [batch*T].",
        kind="loss over a slice instead of every position",
        wrong_on="any model and 1 step: the first loss is the last position's loss, not the mean over all positions.",
        source=IMPORTS_06 + TRAIN_HEAD + '''    for _ in progress(range(steps), "training"):
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
    # ---------------- run_ablation
    Wrong(
        id="b34-06-run-seed-once",
        exercise="run_ablation",
        cause="torch.manual_seed(seed) is called once before the loop, so each model is built from a "
              "different point of the random stream and the two models of a depth start from different "
              "weights; seed right before building each model.",
        kind="statement moved out of a loop",
        wrong_on="depths [1], 2 steps, seed 0: the with- and without-residual rows have different similarity_init[0] (different embeddings), where they must be equal.",
        source=IMPORTS_06 + BLOCK_OK_SRC + TINY_OK_SRC + SIM_OK + TRAIN_OK + RUN_HEAD + '''    torch.manual_seed(seed)
    for depth in depths:
        for residual in (True, False):
            model = TinyTransformer(**MODEL, n_layers=depth, residual=residual)
            sim_init = [token_similarity(s) for s in layer_outputs(model, probe)]
            losses = train(model, TASK, steps, seed)
            rows.append({
                "depth": depth, "residual": residual, "losses": losses,
                "final_loss": float(np.mean(losses[-10:])),
                "similarity_init": sim_init,
                "similarity_trained": [token_similarity(s) for s in layer_outputs(model, probe)],
            })
    return rows
''',
    ),
    Wrong(
        id="b34-06-run-final-loss-one-step",
        exercise="run_ablation",
        cause="final_loss is np.mean(losses[-10]): without the colon that is the 10th-last loss alone, "
              "not the mean of the last 10; write losses[-10:].",
        kind="index instead of slice",
        wrong_on="depths [1], 12 steps, seed 0: final_loss is one loss instead of the mean of the last ten.",
        source=IMPORTS_06 + BLOCK_OK_SRC + TINY_OK_SRC + SIM_OK + TRAIN_OK + RUN_HEAD + '''    for depth in depths:
        for residual in (True, False):
            torch.manual_seed(seed)
            model = TinyTransformer(**MODEL, n_layers=depth, residual=residual)
            sim_init = [token_similarity(s) for s in layer_outputs(model, probe)]
            losses = train(model, TASK, steps, seed)
            rows.append({
                "depth": depth, "residual": residual, "losses": losses,
                "final_loss": float(np.mean(losses[-10])),
                "similarity_init": sim_init,
                "similarity_trained": [token_similarity(s) for s in layer_outputs(model, probe)],
            })
    return rows
''',
    ),
]

# ----------------------------------------------------------------------------- lesson 07

IMPORTS_07 = '''import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import positive_int
from courseware.long_attention import score_blocks, one_query, tile_inputs, key_value_rows, decode_inputs
'''

OSS_HEAD = '''

def online_softmax_stats(scores_blocks):
    """(m, s): the largest score, and the sum of exp(x - m) over every score x, in one pass.

    scores_blocks comes as a stream: each block once, in order, read with one for loop
    (it has no len() and no index).
    """
    blocks = score_blocks(scores_blocks)      # given: yields each block, checked, one at a time
'''

AOP_HEAD = '''

def attention_one_pass(q, K, V, block):
    """Attention of one query q [d_k] over K [T_k, d_k], V [T_k, d_v], reading `block` keys at a time.

    One pass: each block of rows of K and V is read while it is the current block, never after.
    """
    q, K, V = one_query(q, K, V)              # given: checks the shapes, never copies K or V
    block = positive_int(block, "block")
'''

AOP_LOOP_OK = '''    m, s = -np.inf, 0.0
    o = np.zeros(V.shape[1])
    scale = 1.0 / np.sqrt(q.shape[0])
    for j in range(0, K.shape[0], block):
        x = (K[j:j + block] @ q) * scale
        m_new = max(m, x.max())
        alpha = np.exp(m - m_new)
        p = np.exp(x - m_new)
        s = s * alpha + p.sum()
        o = o * alpha + p @ V[j:j + block]
        m = m_new
    return o / s
'''

TILE_HEAD = '''

def tiled_attention(Q, K, V, block_q, block_k, causal=False):
    """(output, skipped): attention computed tile by tile; with causal=True, tiles wholly in the future are skipped."""
    Q, K, V, batch = tile_inputs(Q, K, V, causal)   # given: checks; batch is the broadcast batch shape
    block_q, block_k = positive_int(block_q, "block_q"), positive_int(block_k, "block_k")
'''

# The right tiled loop, as a template: the wrong answers change one of the marked lines.
TILE_BODY_OK = '''    T_q, T_k, d_v = Q.shape[-2], K.shape[-2], V.shape[-1]
    scale = 1.0 / np.sqrt(Q.shape[-1])
    out = np.zeros(batch + (T_q, d_v))
    skipped = 0
    for i0 in range(0, T_q, block_q):
        i1 = min(i0 + block_q, T_q)
        Qi = Q[..., i0:i1, :]
        m = np.full(batch + (i1 - i0, 1), -np.inf)
        s = np.zeros(batch + (i1 - i0, 1))
        o = np.zeros(batch + (i1 - i0, d_v))
        for j0 in range(0, T_k, block_k):
            j1 = min(j0 + block_k, T_k)
            if causal and j0 > i1 - 1:
                skipped += 1
                continue
            S = Qi @ np.swapaxes(K[..., j0:j1, :], -1, -2) * scale
            if causal and j1 - 1 > i0:
                seen = np.arange(j0, j1)[None, :] <= np.arange(i0, i1)[:, None]
                S = np.where(seen, S, -np.inf)
            m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
            alpha = np.exp(m - m_new)
            p = np.exp(S - m_new)
            s = s * alpha + p.sum(axis=-1, keepdims=True)
            o = o * alpha + p @ V[..., j0:j1, :]
            m = m_new
        out[..., i0:i1, :] = o / s
    return out, skipped
'''

KV_OK = '''

class KVCache:
    """The keys [t, d_k] and values [t, d_v] of the t positions seen so far."""

    def __init__(self):
        self._keys, self._values = [], []
        self._t = 0

    def __len__(self):
        """The number of positions in the cache."""
        return self._t

    def append(self, k, v):
        """Add one position (k [d_k], v [d_v]) or a block of them ([n, d_k], [n, d_v])."""
        k, v = key_value_rows(k, v)    # given: both as blocks of rows [n, d], one value per key
        self._keys.append(np.array(k, dtype=float))
        self._values.append(np.array(v, dtype=float))
        self._t += k.shape[0]

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
'''

DECODE_HEAD = '''

def decode_step(x_t, cache, W_q, W_k, W_v):
    """Causal self-attention for the new token x_t [d_model] (or new tokens [n, d_model]), reusing the cache."""
    x, W_q, W_k, W_v = decode_inputs(x_t, cache, W_q, W_k, W_v)   # given: checks the shapes
'''

DECODE_BODY_OK = '''    single = x.ndim == 1
    X = x[None, :] if single else x
    n, t = X.shape[0], len(cache)
    q, k, v = X @ W_q, X @ W_k, X @ W_v
    cache.append(k, v)
    S = q @ cache.keys.T / np.sqrt(W_q.shape[1])
    seen = np.arange(t + n)[None, :] <= (t + np.arange(n))[:, None]
    S = np.where(seen, S, -np.inf)
    P = np.exp(S - S.max(axis=-1, keepdims=True))
    out = (P / P.sum(axis=-1, keepdims=True)) @ cache.values
    return out[0] if single else out
'''

W07 = [
    # ---------------- online_softmax_stats
    Wrong(
        id="b34-07-oss-max-updated-before-rescale",
        exercise="online_softmax_stats",
        cause="You update m to the new maximum first and then rescale the old sum by exp(m - m), which "
              "is 1: the old sum is never brought down to the new maximum. Compute the factor "
              "exp(m_old - m_new) before overwriting m.",
        kind="running value not rescaled (statements in the wrong order)",
        wrong_on="blocks [[0.0], [1.0]]: s = 1 + 1 = 2 instead of e^-1 + 1 = 1.368.",
        source=IMPORTS_07 + OSS_HEAD + '''    m, s = -np.inf, 0.0
    for b in blocks:
        m = max(m, float(b.max()))
        s = s * np.exp(m - m) + float(np.exp(b - m).sum())
    return m, s
''',
    ),
    Wrong(
        id="b34-07-oss-rescale-sign-flipped",
        exercise="online_softmax_stats",
        cause="The rescaling factor is written exp(m_new - m), the sign inside the exponent flipped: when "
              "the maximum rises the old sum must shrink, by exp(m - m_new) <= 1. At the first block "
              "m = -inf, so the flipped factor is exp(+inf) and 0 * inf makes s NaN.",
        kind="sign flipped inside an exponent",
        wrong_on="blocks [[0.0], [1.0]]: s is nan (0 * exp(+inf) at the first block) instead of 1.368; it is nan for every input.",
        source=IMPORTS_07 + OSS_HEAD + '''    m, s = -np.inf, 0.0
    for b in blocks:
        m_new = max(m, float(b.max()))
        s = s * np.exp(m_new - m) + float(np.exp(b - m_new).sum())
        m = m_new
    return m, s
''',
    ),
    Wrong(
        id="b34-07-oss-max-starts-at-zero",
        exercise="online_softmax_stats",
        cause="The running maximum starts at 0 instead of -inf, so when every score is negative m stays 0 "
              "and s is the sum of exp(x - 0) instead of exp(x - max); start from m = -np.inf.",
        kind="wrong initial value",
        wrong_on="blocks [[-1.0, -2.0]]: returns (0, 0.503) instead of (-1, 1.368).",
        source=IMPORTS_07 + OSS_HEAD + '''    m, s = 0.0, 0.0
    for b in blocks:
        m_new = max(m, float(b.max()))
        s = s * np.exp(m - m_new) + float(np.exp(b - m_new).sum())
        m = m_new
    return m, s
''',
    ),
    Wrong(
        id="b34-07-oss-new-terms-old-max",
        exercise="online_softmax_stats",
        cause="The block's own terms are added as exp(b - m) with the old maximum; after rescaling they "
              "must be relative to the new one, exp(b - m_new). On the first block m = -inf, so they are inf.",
        kind="wrong variable used (old instead of updated running value)",
        wrong_on="blocks [[1.0, 2.0]]: s is inf instead of 1.368.",
        source=IMPORTS_07 + OSS_HEAD + '''    m, s = -np.inf, 0.0
    for b in blocks:
        m_new = max(m, float(b.max()))
        s = s * np.exp(m - m_new) + float(np.exp(b - m).sum())
        m = m_new
    return m, s
''',
    ),
    # ---------------- attention_one_pass
    Wrong(
        id="b34-07-aop-no-scale",
        exercise="attention_one_pass",
        cause="The scores are K_block @ q without the division by sqrt(d_k); the softmax then weighs "
              "scores that are sqrt(d_k) times too large.",
        kind="scale left out",
        wrong_on="q = [1, 1, 1, 1], K = [[1, 0, 0, 0], [0, 0, 0, 0]], V = [[1], [0]], block 1: weight e/(e+1) instead of e^0.5/(e^0.5+1) on the first value.",
        source=IMPORTS_07 + AOP_HEAD + AOP_LOOP_OK.replace("scale = 1.0 / np.sqrt(q.shape[0])", "scale = 1.0"),
    ),
    Wrong(
        id="b34-07-aop-output-not-rescaled",
        exercise="attention_one_pass",
        cause="When a block raises the maximum you multiply s by exp(m - m_new) but not the running "
              "output o; o is a sum of the same terms times value rows, so it needs the same factor.",
        kind="running value not rescaled",
        wrong_on="q = [1], K = [[0], [1]], V = [[1], [0]], block 1: returns 0.731 instead of 0.269.",
        source=IMPORTS_07 + AOP_HEAD + AOP_LOOP_OK.replace("o = o * alpha + p @ V[j:j + block]", "o = o + p @ V[j:j + block]"),
    ),
    Wrong(
        id="b34-07-aop-last-short-block-dropped",
        exercise="attention_one_pass",
        cause="The loop is range(0, T_k - block + 1, block), which stops before a last block shorter than "
              "`block`, so the last keys are never scored; loop range(0, T_k, block) and let the last "
              "slice be shorter.",
        kind="loop bound off by one (last partial block dropped)",
        wrong_on="T_k = 3 keys with block = 2: the third key is ignored (any V whose third row differs).",
        source=IMPORTS_07 + AOP_HEAD + AOP_LOOP_OK.replace("range(0, K.shape[0], block)", "range(0, K.shape[0] - block + 1, block)"),
    ),
    Wrong(
        id="b34-07-aop-sum-not-accumulated",
        exercise="attention_one_pass",
        cause="s = s * alpha + ... was written s = p.sum(): the sum is reset at every block and holds only "
              "the last block's terms, while o holds all of them; accumulate s like o.",
        kind="running value reset instead of accumulated",
        wrong_on="q = [0], K = [[0], [0]], V = [[1], [1]], block 1: returns 2 instead of 1.",
        source=IMPORTS_07 + AOP_HEAD + AOP_LOOP_OK.replace("s = s * alpha + p.sum()", "s = p.sum()"),
    ),
    Wrong(
        id="b34-07-aop-two-passes",
        exercise="attention_one_pass",
        cause="You loop over the blocks once for the maximum and a second time for the sum and the "
              "output; the values are right but K is read twice, which is the two-pass softmax the "
              "exercise forbids. Keep one loop and rescale s and o when the maximum grows.",
        kind="stated rule broken (second pass over the rows)",
        wrong_on="q = [1], K = [[0], [1], [2]], V any, block 1: rows 0..2 are read for the maximum, then row 0 again after row 2.",
        source=IMPORTS_07 + AOP_HEAD + '''    scale = 1.0 / np.sqrt(q.shape[0])
    m = -np.inf
    for j in range(0, K.shape[0], block):
        m = max(m, float((K[j:j + block] @ q).max() * scale))
    s, o = 0.0, np.zeros(V.shape[1])
    for j in range(0, K.shape[0], block):
        p = np.exp((K[j:j + block] @ q) * scale - m)
        s += p.sum()
        o += p @ V[j:j + block]
    return o / s
''',
    ),
    # ---------------- tiled_attention
    Wrong(
        id="b34-07-tiled-skip-condition-off-by-one",
        exercise="tiled_attention",
        cause="A tile is skipped when j0 >= i1 - 1, i.e. also when its first key is the query block's "
              "last position, which that query may see; skip only when j0 > i1 - 1 (every key after every query).",
        kind="comparison off by one",
        wrong_on="causal, T = 3, block_q = 2, block_k = 1: the tile of key 1 for queries 0..1 and the tile of key 2 for query 2 are skipped, so queries 1 and 2 never see their own key, and skipped is 3 instead of 1.",
        source=IMPORTS_07 + TILE_HEAD + TILE_BODY_OK.replace("if causal and j0 > i1 - 1:", "if causal and j0 >= i1 - 1:"),
    ),
    Wrong(
        id="b34-07-tiled-mask-strict",
        exercise="tiled_attention",
        cause="Inside a diagonal tile you keep key j only when j < i, so no query sees its own key; "
              "causal attention lets query i see keys j <= i.",
        kind="comparison strict instead of inclusive (diagonal masked)",
        wrong_on="causal, T = 2, block 1 or 2: query 0 sees no key at all (nan) and query 1 sees only key 0.",
        source=IMPORTS_07 + TILE_HEAD + TILE_BODY_OK.replace(
            "if causal and j1 - 1 > i0:", "if causal and j1 - 1 >= i0:").replace(
            "np.arange(j0, j1)[None, :] <= np.arange(i0, i1)[:, None]",
            "np.arange(j0, j1)[None, :] < np.arange(i0, i1)[:, None]"),
    ),
    Wrong(
        id="b34-07-tiled-floor-number-of-blocks",
        exercise="tiled_attention",
        cause="You counted the query blocks as T_q // block_q and looped over range(n_q), which drops the "
              "last, shorter block when block_q does not divide T_q: those output rows stay 0. Use "
              "range(0, T_q, block_q) (or a ceiling division).",
        kind="floor instead of ceiling (last partial block dropped)",
        wrong_on="T_q = T_k = 3 with block_q = 2: output row 2 is all zeros.",
        source=IMPORTS_07 + TILE_HEAD + TILE_BODY_OK.replace(
            "    for i0 in range(0, T_q, block_q):\n",
            "    n_q = T_q // block_q\n    for i0 in range(0, n_q * block_q, block_q):\n"),
    ),
    Wrong(
        id="b34-07-tiled-keepdims-forgotten",
        exercise="tiled_attention",
        cause="The running m and s are kept as [block_q] vectors and the tile's maximum and sum are taken "
              "without keepdims, so S - m_new subtracts row c's maximum from column c instead of row r's "
              "from row r (and o * alpha, o / s scale columns instead of rows): keep m and s as "
              "[block_q, 1] columns, with keepdims=True.",
        kind="keepdims forgotten (broadcasting along the wrong axis)",
        wrong_on="T = 4 with block_q = block_k = 2 and d_v = 2, not causal: every shape lines up but every output row is wrong (block_q = 1 happens to be right; most other shapes raise a broadcasting error).",
        source=IMPORTS_07 + TILE_HEAD + TILE_BODY_OK.replace(
            "m = np.full(batch + (i1 - i0, 1), -np.inf)", "m = np.full(batch + (i1 - i0,), -np.inf)").replace(
            "s = np.zeros(batch + (i1 - i0, 1))", "s = np.zeros(batch + (i1 - i0,))").replace(
            "m_new = np.maximum(m, S.max(axis=-1, keepdims=True))", "m_new = np.maximum(m, S.max(axis=-1))").replace(
            "s = s * alpha + p.sum(axis=-1, keepdims=True)", "s = s * alpha + p.sum(axis=-1)"),
    ),
    Wrong(
        id="b34-07-tiled-local-positions",
        exercise="tiled_attention",
        cause="The mask inside a diagonal tile compares the positions within the tile, arange(j1 - j0) "
              "with arange(i1 - i0), instead of the positions in the whole sequence, arange(j0, j1) with "
              "arange(i0, i1); with tiles of different shapes the mask is cut in the wrong place.",
        kind="local instead of global indices",
        wrong_on="causal, T = 4, block_q = 4, block_k = 2: in the tile of keys 2..3 the local comparison lets query 0 see key 2, query 1 see keys 2 and 3, and query 2 see key 3.",
        source=IMPORTS_07 + TILE_HEAD + TILE_BODY_OK.replace(
            "np.arange(j0, j1)[None, :] <= np.arange(i0, i1)[:, None]",
            "np.arange(j1 - j0)[None, :] <= np.arange(i1 - i0)[:, None]"),
    ),
    # ---------------- KVCache
    Wrong(
        id="b34-07-kv-prepends",
        exercise="KVCache",
        cause="append stores the new block in front of the old ones (np.concatenate([k, old])), so keys "
              "and values come out newest first; the contract is oldest first, so put the new rows after.",
        kind="concatenation order reversed",
        wrong_on="append([1.0], [1.0]) then append([2.0], [2.0]): keys [[2], [1]] instead of [[1], [2]].",
        source=IMPORTS_07 + '''

class KVCache:
    """The keys [t, d_k] and values [t, d_v] of the t positions seen so far."""

    def __init__(self):
        self._k = None
        self._v = None

    def __len__(self):
        """The number of positions in the cache."""
        return 0 if self._k is None else self._k.shape[0]

    def append(self, k, v):
        """Add one position (k [d_k], v [d_v]) or a block of them ([n, d_k], [n, d_v])."""
        k, v = key_value_rows(k, v)    # given: both as blocks of rows [n, d], one value per key
        if self._k is None:
            self._k, self._v = k.copy(), v.copy()
        else:
            self._k = np.concatenate([k, self._k])
            self._v = np.concatenate([v, self._v])

    @property
    def keys(self):
        """Every key so far, one row per position: [t, d_k]."""
        if self._k is None:
            raise ValueError("the cache is empty")
        return self._k

    @property
    def values(self):
        """Every value so far, one row per position: [t, d_v]."""
        if self._v is None:
            raise ValueError("the cache is empty")
        return self._v
''',
    ),
    Wrong(
        id="b34-07-kv-len-counts-appends",
        exercise="KVCache",
        cause="__len__ returns len(self._keys), the number of blocks appended, not the number of positions; "
              "a block of n rows counts once. Count rows: the sum of the blocks' lengths.",
        kind="counts calls instead of rows",
        wrong_on="append a block of 3 keys: len(cache) is 1 instead of 3.",
        source=IMPORTS_07 + KV_OK.replace("        return self._t\n", "        return len(self._keys)\n"),
    ),
    Wrong(
        id="b34-07-kv-class-level-lists",
        exercise="KVCache",
        cause="The lists _keys and _values are class attributes (written in the class body, not in "
              "__init__), so every KVCache shares them and a new cache already holds the old one's "
              "positions; create them in __init__ as self._keys = [].",
        kind="shared mutable state (class attribute instead of instance attribute)",
        wrong_on="a new cache made after another cache received one append: its len is already 1 and its keys are the other cache's.",
        source=IMPORTS_07 + '''

class KVCache:
    """The keys [t, d_k] and values [t, d_v] of the t positions seen so far."""

    _keys = []
    _values = []

    def __init__(self):
        pass

    def __len__(self):
        """The number of positions in the cache."""
        return sum(k.shape[0] for k in self._keys)

    def append(self, k, v):
        """Add one position (k [d_k], v [d_v]) or a block of them ([n, d_k], [n, d_v])."""
        k, v = key_value_rows(k, v)    # given: both as blocks of rows [n, d], one value per key
        self._keys.append(k.copy())
        self._values.append(v.copy())

    @property
    def keys(self):
        """Every key so far, one row per position: [t, d_k]."""
        if not self._keys:
            raise ValueError("the cache is empty")
        return np.concatenate(self._keys)

    @property
    def values(self):
        """Every value so far, one row per position: [t, d_v]."""
        if not self._values:
            raise ValueError("the cache is empty")
        return np.concatenate(self._values)
''',
    ),
    Wrong(
        id="b34-07-kv-stores-callers-array",
        exercise="KVCache",
        cause="append keeps the caller's arrays themselves (key_value_rows does not copy a float array), "
              "and keys reads them again at every call, so when the caller later writes into its array "
              "the cache changes too; store a copy (np.array(k) or k.copy()).",
        kind="aliasing: input kept by reference",
        wrong_on="k = np.ones((2, 3)); cache.append(k, k); k[:] = 0: cache.keys is then all zeros instead of ones.",
        source=IMPORTS_07 + KV_OK.replace(
            "        self._keys.append(np.array(k, dtype=float))\n        self._values.append(np.array(v, dtype=float))\n",
            "        self._keys.append(k)\n        self._values.append(v)\n"),
    ),
    # ---------------- decode_step
    Wrong(
        id="b34-07-decode-block-unmasked",
        exercise="decode_step",
        cause="For a block of n new tokens you let every new token attend to every cached position, "
              "including the new tokens after it; token i of the block sits at position t + i and may see "
              "only positions 0..t+i, so mask the later ones with -inf before the softmax.",
        kind="mask left out (future positions seen)",
        wrong_on="an empty cache and a prompt of 2 tokens: token 0 also sees token 1.",
        source=IMPORTS_07 + KV_OK + DECODE_HEAD + '''    single = x.ndim == 1
    X = x[None, :] if single else x
    q, k, v = X @ W_q, X @ W_k, X @ W_v
    cache.append(k, v)
    S = q @ cache.keys.T / np.sqrt(W_q.shape[1])
    P = np.exp(S - S.max(axis=-1, keepdims=True))
    out = (P / P.sum(axis=-1, keepdims=True)) @ cache.values
    return out[0] if single else out
''',
    ),
    Wrong(
        id="b34-07-decode-mask-not-offset",
        exercise="decode_step",
        cause="The causal mask of the block is np.tril of ones [n, t + n] with k = 0, so new token i may "
              "see positions 0..i instead of 0..t+i: it is not shifted by the t positions already cached; "
              "use k = t (or compare positions t + i with j).",
        kind="triangle offset missing",
        wrong_on="a cache holding 1 position and a block of 2 new tokens: new token 0 (position 1) cannot see itself, and new token 1 cannot see position 2.",
        source=IMPORTS_07 + KV_OK + DECODE_HEAD + '''    single = x.ndim == 1
    X = x[None, :] if single else x
    n, t = X.shape[0], len(cache)
    q, k, v = X @ W_q, X @ W_k, X @ W_v
    cache.append(k, v)
    S = q @ cache.keys.T / np.sqrt(W_q.shape[1])
    seen = np.tril(np.ones((n, t + n), dtype=bool))
    S = np.where(seen, S, -np.inf)
    P = np.exp(S - S.max(axis=-1, keepdims=True))
    out = (P / P.sum(axis=-1, keepdims=True)) @ cache.values
    return out[0] if single else out
''',
    ),
    Wrong(
        id="b34-07-decode-scale-d-model",
        exercise="decode_step",
        cause="The scores are divided by sqrt(x.shape[-1]) = sqrt(d_model); the scale belongs to the "
              "query/key width d_k, W_q.shape[1].",
        kind="scale of the wrong quantity",
        wrong_on="d_model = 6, d_k = 4, any cache with 2 or more positions: the weights are too flat.",
        source=IMPORTS_07 + KV_OK + DECODE_HEAD + DECODE_BODY_OK.replace("np.sqrt(W_q.shape[1])", "np.sqrt(x.shape[-1])"),
    ),
    Wrong(
        id="b34-07-decode-single-keeps-row-axis",
        exercise="decode_step",
        cause="For one token x_t [d_model] you turned it into a block of one row but returned the block, "
              "shape [1, d_v]; one token in must give [d_v] out, so take row 0 when the input was 1-D.",
        kind="axis of length 1 kept",
        wrong_on="one token x_t of shape [6] with d_v = 4: returns shape [1, 4] instead of [4].",
        source=IMPORTS_07 + KV_OK + DECODE_HEAD + DECODE_BODY_OK.replace("    return out[0] if single else out\n", "    return out\n"),
    ),
]

# ----------------------------------------------------------------------------- lesson 08

IMPORTS_08 = '''import numpy as np
import torch
import torch.nn.functional as F

from courseware.positions import position_sizes, rope_inputs, rope_score_inputs
'''

SIN_HEAD = '''

def sinusoidal_positions(T, d):
    """The (T, d) table: PE[t, 2i] = sin(t / 10000^(2i/d)), PE[t, 2i + 1] = cos(t / 10000^(2i/d))."""
    T, d = position_sizes(T, d)      # given: T >= 0 and d even and positive, or a ValueError
'''

ROPE_HEAD = '''

def rope(x, positions, base=10000.0):
    """Turn pair (2i, 2i + 1) of row t of x [..., T, d] counterclockwise by positions[t] * base^(-2i/d)."""
    x, positions, base = rope_inputs(x, positions, base)    # given: checks the shapes and positions
'''

ROPE_BODY_OK = '''    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)              # [d/2]
    angles = positions[:, None] * theta[None, :]           # [T, d/2]
    cos, sin = np.cos(angles), np.sin(angles)
    a, b = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out
'''

ROPE_OK = ROPE_HEAD + ROPE_BODY_OK

SCORES_HEAD = '''

def rope_scores(Q, K, positions_q, positions_k, base=10000.0):
    """rope(Q, positions_q) @ rope(K, positions_k)ᵀ / sqrt(d): [..., T_q, d], [..., T_k, d] -> [..., T_q, T_k]."""
    Q, K, positions_q, positions_k, base = rope_score_inputs(Q, K, positions_q, positions_k, base)  # given
'''

W08 = [
    # ---------------- sinusoidal_positions
    Wrong(
        id="b34-08-sin-exponent-i-not-2i",
        exercise="sinusoidal_positions",
        cause="The frequencies are 10000 ** (-i / d) with i = 0, 1, ..., d/2 - 1: the exponent is 2i/d, "
              "so use np.arange(0, d, 2) / d (or 2 * np.arange(d // 2) / d).",
        kind="factor left out of an exponent",
        wrong_on="T = 2, d = 4: PE[1, 2] = sin(10000^-0.25) = 0.0998 instead of sin(10000^-0.5) = 0.0100.",
        source=IMPORTS_08 + SIN_HEAD + '''    t = np.arange(T)[:, None]
    theta = 10000.0 ** (-np.arange(d // 2) / d)
    angles = t * theta[None, :]
    PE = np.empty((T, d))
    PE[:, 0::2] = np.sin(angles)
    PE[:, 1::2] = np.cos(angles)
    return PE
''',
    ),
    Wrong(
        id="b34-08-sin-halves-not-interleaved",
        exercise="sinusoidal_positions",
        cause="You concatenated all the sines and then all the cosines, [sin | cos]; the table interleaves "
              "them, sine in feature 2i and cosine in feature 2i + 1 (assign to PE[:, 0::2] and PE[:, 1::2]).",
        kind="concatenation instead of interleaving",
        wrong_on="T = 1, d = 4: row 0 is [0, 0, 1, 1] instead of [0, 1, 0, 1].",
        source=IMPORTS_08 + SIN_HEAD + '''    t = np.arange(T)[:, None]
    theta = 10000.0 ** (-np.arange(0, d, 2) / d)
    angles = t * theta[None, :]
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)
''',
    ),
    Wrong(
        id="b34-08-sin-positions-from-one",
        exercise="sinusoidal_positions",
        cause="The positions are np.arange(1, T + 1); positions count from 0, so row 0 must be the angle-0 "
              "row [0, 1, 0, 1, ...]: use np.arange(T).",
        kind="index off by one",
        wrong_on="T = 1, d = 2: returns [[sin 1, cos 1]] = [[0.841, 0.540]] instead of [[0, 1]].",
        source=IMPORTS_08 + SIN_HEAD + '''    t = np.arange(1, T + 1)[:, None]
    theta = 10000.0 ** (-np.arange(0, d, 2) / d)
    angles = t * theta[None, :]
    PE = np.zeros((T, d))
    PE[:, 0::2] = np.sin(angles)
    PE[:, 1::2] = np.cos(angles)
    return PE
''',
    ),
    Wrong(
        id="b34-08-sin-integer-division",
        exercise="sinusoidal_positions",
        cause="The exponent was written np.arange(0, d, 2) // d with integer division, which is 0 for "
              "every pair, so every pair turns at 1 radian per position; use true division, /.",
        kind="// instead of /",
        wrong_on="T = 2, d = 4: PE[1, 2] = sin(1) = 0.841 instead of sin(0.01) = 0.0100.",
        source=IMPORTS_08 + SIN_HEAD + '''    t = np.arange(T)[:, None]
    theta = 1.0 / 10000.0 ** (np.arange(0, d, 2) // d)
    angles = t * theta[None, :]
    PE = np.zeros((T, d))
    PE[:, 0::2] = np.sin(angles)
    PE[:, 1::2] = np.cos(angles)
    return PE
''',
    ),
    Wrong(
        id="b34-08-sin-multiplied-by-frequency-power",
        exercise="sinusoidal_positions",
        cause="The angle is t * 10000 ** (2i/d) instead of t / 10000 ** (2i/d): the exponent's sign is "
              "flipped, so the later pairs turn thousands of times faster instead of slower.",
        kind="sign flipped inside an exponent",
        wrong_on="T = 2, d = 4: PE[1, 2] = sin(100) = -0.506 instead of sin(0.01) = 0.0100.",
        source=IMPORTS_08 + SIN_HEAD + '''    t = np.arange(T)[:, None]
    angles = t * 10000.0 ** (np.arange(0, d, 2) / d)[None, :]
    PE = np.zeros((T, d))
    PE[:, 0::2] = np.sin(angles)
    PE[:, 1::2] = np.cos(angles)
    return PE
''',
    ),
    # ---------------- rope
    Wrong(
        id="b34-08-rope-clockwise",
        exercise="rope",
        cause="The pair is turned with the signs of the sine swapped, (a cos + b sin, -a sin + b cos): "
              "that is R(-phi), clockwise; counterclockwise is (a cos - b sin, a sin + b cos).",
        kind="sign flipped (rotation direction)",
        wrong_on="x = [[1, 0]] at position 1: returns [cos 1, -sin 1] instead of [cos 1, sin 1].",
        source=IMPORTS_08 + ROPE_HEAD + ROPE_BODY_OK.replace(
            "out[..., 0::2] = a * cos - b * sin", "out[..., 0::2] = a * cos + b * sin").replace(
            "out[..., 1::2] = a * sin + b * cos", "out[..., 1::2] = -a * sin + b * cos"),
    ),
    Wrong(
        id="b34-08-rope-output-concatenated",
        exercise="rope",
        cause="You read the pairs correctly from x[..., 0::2] and x[..., 1::2] but wrote the result as "
              "np.concatenate([first, second], axis=-1), so the turned features come back in halves; "
              "write them back interleaved, into out[..., 0::2] and out[..., 1::2].",
        kind="concatenation instead of interleaving",
        wrong_on="x = [[1, 2, 3, 4]] at position 0 (no turn at all): returns [1, 3, 2, 4] instead of [1, 2, 3, 4].",
        source=IMPORTS_08 + ROPE_HEAD + '''    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)
    angles = positions[:, None] * theta[None, :]
    cos, sin = np.cos(angles), np.sin(angles)
    a, b = x[..., 0::2], x[..., 1::2]
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)
''',
    ),
    Wrong(
        id="b34-08-rope-second-line-reads-updated",
        exercise="rope",
        cause="You wrote the turned first features back into x[..., 0::2] and then computed the second "
              "features from x[..., 0::2], which already holds the new values; compute both from the "
              "original a and b (keep copies, or write into a new array).",
        kind="value overwritten before it is used",
        wrong_on="x = [[1, 0]] at position 1: the second feature is cos 1 * sin 1 = 0.455 instead of sin 1 = 0.841.",
        source=IMPORTS_08 + ROPE_HEAD + '''    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)
    angles = positions[:, None] * theta[None, :]
    cos, sin = np.cos(angles), np.sin(angles)
    x = x.copy()
    x[..., 0::2] = x[..., 0::2] * cos - x[..., 1::2] * sin
    x[..., 1::2] = x[..., 0::2] * sin + x[..., 1::2] * cos
    return x
''',
    ),
    Wrong(
        id="b34-08-rope-base-hard-coded",
        exercise="rope",
        cause="The frequencies use 10000.0 ** (...) instead of the base argument, so rope(x, p, base=100) "
              "turns as if base were 10000; use base ** (-np.arange(0, d, 2) / d).",
        kind="parameter replaced by its default",
        wrong_on="x = [[0, 0, 1, 0]] at position 1 with base = 100: feature 3 is sin(0.01) instead of sin(0.1).",
        source=IMPORTS_08 + ROPE_HEAD + ROPE_BODY_OK.replace("theta = base ** (", "theta = 10000.0 ** ("),
    ),
    Wrong(
        id="b34-08-rope-exponent-over-half-d",
        exercise="rope",
        cause="The exponent is np.arange(0, d, 2) / (d // 2), i.e. 4i/d: you took both the even indices "
              "(2i) and the number of pairs (d/2); use np.arange(0, d, 2) / d, or np.arange(d // 2) / (d // 2).",
        kind="factor applied twice (in an exponent)",
        wrong_on="x = [[0, 0, 1, 0]] at position 1, d = 4: pair 1 turns by 10000^-1 = 0.0001 instead of 10000^-0.5 = 0.01.",
        source=IMPORTS_08 + ROPE_HEAD + ROPE_BODY_OK.replace("np.arange(0, d, 2) / d)", "np.arange(0, d, 2) / (d // 2))"),
    ),
    # ---------------- rope_scores
    Wrong(
        id="b34-08-scores-positions-swapped",
        exercise="rope_scores",
        cause="You turned Q by positions_k and K by positions_q; each matrix turns by its own positions: "
              "rope(Q, positions_q) and rope(K, positions_k).",
        kind="arguments swapped",
        wrong_on="one query at position 2 and one key at position 0 (T_q = T_k = 1): the score is that of offset -2 instead of +2.",
        source=IMPORTS_08 + ROPE_OK + SCORES_HEAD + '''    d = Q.shape[-1]
    q = rope(Q, positions_k, base)
    k = rope(K, positions_q, base)
    return q @ np.swapaxes(k, -1, -2) / np.sqrt(d)
''',
    ),
    Wrong(
        id="b34-08-scores-divided-by-d",
        exercise="rope_scores",
        cause="The scores are divided by d instead of sqrt(d).",
        kind="sqrt forgotten",
        wrong_on="Q = K = [[1, 0, 0, 0]] at position 0: score 0.25 instead of 0.5.",
        source=IMPORTS_08 + ROPE_OK + SCORES_HEAD + '''    d = Q.shape[-1]
    q = rope(Q, positions_q, base)
    k = rope(K, positions_k, base)
    return q @ np.swapaxes(k, -1, -2) / d
''',
    ),
    Wrong(
        id="b34-08-scores-keys-not-turned",
        exercise="rope_scores",
        cause="Only the queries go through rope; the keys must be turned too, by their own positions, or "
              "the score depends on the query's position alone and not on the offset m - n.",
        kind="operation applied to one operand only",
        wrong_on="Q = K = [[1, 0]], query at position 1, key at position 1: score cos(1)/sqrt(2) = 0.382 instead of 1/sqrt(2) = 0.707.",
        source=IMPORTS_08 + ROPE_OK + SCORES_HEAD + '''    d = Q.shape[-1]
    q = rope(Q, positions_q, base)
    return q @ np.swapaxes(K, -1, -2) / np.sqrt(d)
''',
    ),
    Wrong(
        id="b34-08-scores-base-not-passed",
        exercise="rope_scores",
        cause="rope is called without base, so it always uses its default 10000 whatever rope_scores "
              "was given; pass base on: rope(Q, positions_q, base).",
        kind="parameter not passed on (default used)",
        wrong_on="d = 4, Q = K = [[0, 0, 1, 0]], query at position 1, key at position 0, base = 100: pair 1 turns by 10000^-0.5 = 0.01 instead of 100^-0.5 = 0.1, so the score is cos(0.01)/2 = 0.49998 instead of cos(0.1)/2 = 0.4975.",
        source=IMPORTS_08 + ROPE_OK + SCORES_HEAD + '''    d = Q.shape[-1]
    q = rope(Q, positions_q)
    k = rope(K, positions_k)
    return q @ np.swapaxes(k, -1, -2) / np.sqrt(d)
''',
    ),
]


WRONG = W05 + W06 + W07 + W08
