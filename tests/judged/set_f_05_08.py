"""Set f: wrong answers to the graded exercises of lessons 05, 06, 07 and 08.

Written from the student notebooks, the README, courseware/ and
grader/learner/validation.py only. Each answer is a right program with one realistic
mistake (a few with two, said so in the cause), and each `source` is the whole answer cell
as a learner types it: imports, the notebook's given lines, and any graded helpers the
exercise calls (written correctly unless the mistake is in them).

Many sources are made from one right program of the exercise by one textual edit
(`_edit`, which insists that the edited text occurs exactly once); the value of every
`source` is the full cell. verify_set_f_05_08.py checks every answer against an
independent computation on the input named in `wrong_on`.
"""
from typing import NamedTuple


class Wrong(NamedTuple):
    id: str          # short unique id
    exercise: str    # the graded name, exactly as in the notebook's check("name", ...) cell
    cause: str       # the true cause, as a teacher would say it to the learner
    kind: str        # a short category
    wrong_on: str    # one input on which it gives a wrong result, and what goes wrong
    source: str      # the whole answer cell(s), imports and given lines included


def _edit(src, old, new, count=1):
    """`src` with `old` replaced by `new`; `old` must occur exactly `count` times."""
    found = src.count(old)
    if found != count:
        raise AssertionError(f"expected {count} occurrence(s) of {old!r}, found {found}")
    return src.replace(old, new)


WRONG = []


def _add(id, exercise, cause, kind, wrong_on, source):
    WRONG.append(Wrong(id, exercise, cause, kind, wrong_on, source))


# =============================================================================== lesson 05

IMPORTS_05 = '''import math

import torch
import torch.nn.functional as F
from torch import nn
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
SPLIT_OK_BODY = '''    d_head = d_model // n_heads
    return x.reshape(B, T, n_heads, d_head).transpose(1, 2)
'''
SPLIT_OK = SPLIT_HEAD + SPLIT_OK_BODY

MERGE_HEAD = '''

def merge_heads(x):
    """[B, h, T, d_head] -> [B, T, h*d_head]: the heads of each token side by side."""
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
'''
MERGE_OK_BODY = '''    return x.transpose(1, 2).reshape(B, T, h * d_head)
'''
MERGE_OK = MERGE_HEAD + MERGE_OK_BODY

GIVEN_MASK_HELPERS = '''

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

MHA_OK_CLASS = '''

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
        out = merge_heads(weights @ v)
        return self.w_o(out), weights
'''
MHA_OK = IMPORTS_05 + SPLIT_OK + MERGE_OK + GIVEN_MASK_HELPERS + MHA_OK_CLASS

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
COPY_OK_BODY = '''    with torch.no_grad():
        W, b = theirs.in_proj_weight, theirs.in_proj_bias
        ours.w_q.weight.copy_(W[:d])
        ours.w_q.bias.copy_(b[:d])
        ours.w_k.weight.copy_(W[d:2 * d])
        ours.w_k.bias.copy_(b[d:2 * d])
        ours.w_v.weight.copy_(W[2 * d:])
        ours.w_v.bias.copy_(b[2 * d:])
        ours.w_o.weight.copy_(theirs.out_proj.weight)
        ours.w_o.bias.copy_(theirs.out_proj.bias)
    return ours
'''
COPY_OK = IMPORTS_05 + COPY_HEAD + COPY_OK_BODY

HEADS_HEAD = '''

def heads_one_by_one(x, mha):
    """Self-attention of mha on x [B, T, d_model], with a Python loop over the heads."""
    if x.dim() != 3 or x.shape[-1] != mha.d_model:
        raise ValueError(f"x must be [B, T, d_model={mha.d_model}], got shape {tuple(x.shape)}")
    d_head = mha.d_model // mha.n_heads
    outputs, maps = [], []
'''
HEADS_OK_BODY = '''    for i in range(mha.n_heads):
        rows = slice(i * d_head, (i + 1) * d_head)
        q = x @ mha.w_q.weight[rows].T + mha.w_q.bias[rows]
        k = x @ mha.w_k.weight[rows].T + mha.w_k.bias[rows]
        v = x @ mha.w_v.weight[rows].T + mha.w_v.bias[rows]
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_head), dim=-1)
        outputs.append(w @ v)
        maps.append(w)
    output = mha.w_o(torch.cat(outputs, dim=-1))
    return output, torch.stack(maps, dim=1)
'''
HEADS_OK = IMPORTS_05 + HEADS_HEAD + HEADS_OK_BODY

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
VDU_OK_BODY = '''    down = mha.w_v.weight[features].T       # [d_model, d_head]
    up = mha.w_o.weight[:, features].T      # [d_head, d_model]
    return down, up
'''
VDU_OK = IMPORTS_05 + VDU_HEAD + VDU_OK_BODY

# ------------------------------------------------------------------- split_heads

_add("f-05-split-heads-no-transpose", "split_heads",
     "You reshaped straight to [B, h, T, d_head] with x.reshape(B, n_heads, T, d_head), which re-reads "
     "the numbers in memory order, so head 0 gets token 0's and token 1's features mixed together. "
     "Reshape to [B, T, h, d_head] first, then swap the token and head axes with .transpose(1, 2).",
     "reshape instead of reshape + transpose",
     "x [1, 2, 4] with entries 10t + j and n_heads=2: head 0 should hold rows [0, 1] and [10, 11], "
     "but it gets [0, 1] and [2, 3].",
     IMPORTS_05 + SPLIT_HEAD + '''    d_head = d_model // n_heads
    return x.reshape(B, n_heads, T, d_head)
''')

_add("f-05-split-heads-strided-features", "split_heads",
     "You cut each token's features as reshape(B, T, d_head, n_heads) and then moved the last axis "
     "to the front, so head i gets every h-th feature (i, i + h, i + 2h, ...) instead of the "
     "contiguous block i*d_head:(i+1)*d_head. Reshape to (B, T, n_heads, d_head) and transpose axes 1 and 2.",
     "features grouped in the wrong order (strided instead of contiguous)",
     "x [1, 1, 4] = [[0, 1, 2, 3]] with n_heads=2: head 0 should be [0, 1], yours is [0, 2].",
     IMPORTS_05 + SPLIT_HEAD + '''    d_head = d_model // n_heads
    return x.reshape(B, T, d_head, n_heads).permute(0, 3, 1, 2)
''')

_add("f-05-split-heads-transpose-before-reshape", "split_heads",
     "You swapped the axes before cutting: x.transpose(1, 2).reshape(B, n_heads, T, d_head) first "
     "makes [B, d_model, T] and then re-reads it, so each head's rows are filled feature by feature "
     "across the tokens. Cut first, x.reshape(B, T, n_heads, d_head), and transpose after.",
     "transpose and reshape in the wrong order",
     "x [1, 2, 4] with entries 10t + j, n_heads=2: head 0 should be [[0, 1], [10, 11]], yours is "
     "[[0, 10], [1, 11]].",
     IMPORTS_05 + SPLIT_HEAD + '''    d_head = d_model // n_heads
    return x.transpose(1, 2).reshape(B, n_heads, T, d_head)
''')

# ------------------------------------------------------------------- merge_heads

_add("f-05-merge-heads-no-transpose", "merge_heads",
     "You reshaped [B, h, T, d_head] straight to [B, T, h*d_head] without moving the head axis "
     "back behind the token axis, so a token's row is filled with another head's rows. Transpose "
     "axes 1 and 2 first, then reshape.",
     "transpose left out",
     "x [1, 2, 2, 1] (h=2, T=2): token 0 should get [head0 t0, head1 t0], yours gets [head0 t0, head0 t1].",
     IMPORTS_05 + MERGE_HEAD + '''    return x.reshape(B, T, h * d_head)
''')

_add("f-05-merge-heads-head-minor", "merge_heads",
     "You moved the head axis to the end with permute(0, 2, 3, 1) before flattening, so the "
     "features come out interleaved (head 0's first feature, head 1's first feature, ...) instead of "
     "head 0's d_head features first. Use transpose(1, 2), which keeps each head's features together.",
     "axes permuted into the wrong order before flattening",
     "x [1, 2, 1, 2] with head 0 = [0, 1] and head 1 = [10, 11]: expected [0, 1, 10, 11], yours [0, 10, 1, 11].",
     IMPORTS_05 + MERGE_HEAD + '''    return x.permute(0, 2, 3, 1).reshape(B, T, h * d_head)
''')

_add("f-05-merge-heads-swaps-batch-and-head", "merge_heads",
     "You transposed axes 0 and 1 (batch and head) instead of 1 and 2 (head and token) before the "
     "reshape, so for B > 1 the rows of different sentences are mixed into one token. Use x.transpose(1, 2).",
     "transpose of the wrong pair of axes",
     "x [2, 2, 1, 1] (B=2, h=2, T=1): sentence 0 should get [x[0,0], x[0,1]], yours gets [x[0,0], x[1,0]].",
     IMPORTS_05 + MERGE_HEAD + '''    return x.transpose(0, 1).reshape(B, T, h * d_head)
''')

# ------------------------------------------------------------------- MultiHeadAttention

_MHA = MHA_OK

_add("f-05-mha-scale-sqrt-dmodel", "MultiHeadAttention",
     "In forward you divided the scores by math.sqrt(self.d_model); each head's dot products are sums "
     "of d_head terms, so the scale is math.sqrt(self.d_head).",
     "wrong quantity under the square root",
     "d_model=4, n_heads=2, random inputs: the weights are softer than expected (scores divided by 2 "
     "instead of sqrt(2)).",
     _edit(_MHA, "/ math.sqrt(self.d_head)", "/ math.sqrt(self.d_model)"))

_add("f-05-mha-softmax-over-queries", "MultiHeadAttention",
     "You took the softmax with dim=-2, over the queries; each query's weights must sum to 1 over the "
     "keys, the last axis: torch.softmax(scores, dim=-1).",
     "softmax over the wrong axis",
     "B=1, T_q=T_k=3, d_model=4, h=2: the weights' columns sum to 1 instead of their rows.",
     _edit(_MHA, "torch.softmax(scores, dim=-1)", "torch.softmax(scores, dim=-2)"))

_add("f-05-mha-mask-polarity-inverted", "MultiHeadAttention",
     "You filled -inf where the mask is True (scores.masked_fill(mask, ...)), as nn.MultiheadAttention's "
     "key_padding_mask does; in this course True means may attend, so fill where ~mask.",
     "mask polarity inverted",
     "key mask [[True, True, False]] with T_k=3: the padding key gets all the weight and the real keys none.",
     _edit(_MHA, "scores.masked_fill(~mask, float(\"-inf\"))", "scores.masked_fill(mask, float(\"-inf\"))"))

_add("f-05-mha-weights-averaged-over-heads", "MultiHeadAttention",
     "You returned weights.mean(dim=1), the heads' maps averaged (what nn.MultiheadAttention returns by "
     "default); the exercise wants one map per head, [B, h, T_q, T_k], so return weights itself.",
     "an axis averaged away",
     "any input with h=2: the weights come back [B, T_q, T_k] instead of [B, 2, T_q, T_k].",
     _edit(_MHA, "return self.w_o(out), weights", "return self.w_o(out), weights.mean(dim=1)"))

_add("f-05-mha-keys-from-wq", "MultiHeadAttention",
     "A copy-paste slip: the keys are computed with self.w_q(key) instead of self.w_k(key), so w_k is "
     "never used and queries and keys share one projection.",
     "wrong parameter used (w_q in place of w_k)",
     "any input with different random w_q and w_k: the scores and weights differ from the reference's.",
     _edit(_MHA, "k = split_heads(self.w_k(key), self.n_heads)", "k = split_heads(self.w_q(key), self.n_heads)"))

_add("f-05-mha-values-from-key", "MultiHeadAttention",
     "You projected the values from the key argument, self.w_v(key), instead of self.w_v(value); "
     "this is invisible in self-attention and in mha(dec, enc, enc), but wrong whenever key and value differ.",
     "wrong input tensor used",
     "query, key, value three different random tensors [1, 3, 4]: the output uses the key tokens as values.",
     _edit(_MHA, "v = split_heads(self.w_v(value), self.n_heads)", "v = split_heads(self.w_v(key), self.n_heads)"))

_add("f-05-mha-mask-after-softmax", "MultiHeadAttention",
     "You took the softmax of the unmasked scores and then zeroed the masked weights; the remaining "
     "weights of a row no longer sum to 1. Put -inf into the scores before the softmax.",
     "mask applied after the softmax",
     "key mask [[True, True, False]]: each row's weights sum to less than 1 and the output is too small.",
     _edit(_MHA, '''        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
''', '''        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights.masked_fill(~mask, 0.0)
'''))

_add("f-05-mha-no-output-projection", "MultiHeadAttention",
     "You returned the merged heads directly; the last step is the output projection, "
     "return self.w_o(out), weights.",
     "a layer left out (w_o)",
     "any input with random w_o: the output is the concatenated heads, not w_o of them.",
     _edit(_MHA, "return self.w_o(out), weights", "return out, weights"))

# ------------------------------------------------------------------- copy_from_torch

_add("f-05-copy-weights-transposed", "copy_from_torch",
     "You copied each block transposed (W[:d].T, ...), as if torch stored [in, out]; in_proj_weight's "
     "rows and out_proj.weight are already [out, in] like nn.Linear.weight, so copy them as they are.",
     "a transpose added",
     "d_model=4, n_heads=2 with random torch weights: every projection of ours is the transpose of torch's.",
     IMPORTS_05 + COPY_HEAD + '''    with torch.no_grad():
        W, b = theirs.in_proj_weight, theirs.in_proj_bias
        ours.w_q.weight.copy_(W[:d].T)
        ours.w_q.bias.copy_(b[:d])
        ours.w_k.weight.copy_(W[d:2 * d].T)
        ours.w_k.bias.copy_(b[d:2 * d])
        ours.w_v.weight.copy_(W[2 * d:].T)
        ours.w_v.bias.copy_(b[2 * d:])
        ours.w_o.weight.copy_(theirs.out_proj.weight.T)
        ours.w_o.bias.copy_(theirs.out_proj.bias)
    return ours
''')

_add("f-05-copy-biases-left-out", "copy_from_torch",
     "You copied only the four weight matrices and left ours's biases at their own random start; "
     "copy in_proj_bias's three slices into w_q.bias, w_k.bias, w_v.bias and out_proj.bias into w_o.bias too.",
     "a term left out (biases)",
     "d_model=4 with torch biases set to random values: ours keeps its own biases, so every output differs.",
     IMPORTS_05 + COPY_HEAD + '''    with torch.no_grad():
        W = theirs.in_proj_weight
        ours.w_q.weight.copy_(W[:d])
        ours.w_k.weight.copy_(W[d:2 * d])
        ours.w_v.weight.copy_(W[2 * d:])
        ours.w_o.weight.copy_(theirs.out_proj.weight)
    return ours
''')

_add("f-05-copy-out-proj-forgotten", "copy_from_torch",
     "You loaded in_proj_weight and in_proj_bias but never copied out_proj into w_o, so ours keeps "
     "its own random output projection; copy theirs.out_proj.weight and .bias into ours.w_o.",
     "a layer left out (w_o not loaded)",
     "d_model=4, n_heads=2: the attention weights match torch's but the outputs do not.",
     IMPORTS_05 + COPY_HEAD + '''    with torch.no_grad():
        W, b = theirs.in_proj_weight, theirs.in_proj_bias
        ours.w_q.weight.copy_(W[:d])
        ours.w_q.bias.copy_(b[:d])
        ours.w_k.weight.copy_(W[d:2 * d])
        ours.w_k.bias.copy_(b[d:2 * d])
        ours.w_v.weight.copy_(W[2 * d:])
        ours.w_v.bias.copy_(b[2 * d:])
    return ours
''')

_add("f-05-copy-value-bias-from-key-slice", "copy_from_torch",
     "A copy-paste slip in the value bias: ours.w_v.bias gets b[d:2 * d], the key's slice; the value "
     "projection's bias is b[2 * d:].",
     "slice off by one block",
     "d_model=4 with random in_proj_bias: w_v.bias equals torch's key bias, so the outputs differ.",
     _edit(COPY_OK, "ours.w_v.bias.copy_(b[2 * d:])", "ours.w_v.bias.copy_(b[d:2 * d])"))

_add("f-05-copy-new-parameters", "copy_from_torch",
     "You replaced the parameters (ours.w_q.weight = nn.Parameter(W[:d]) and so on) instead of copying "
     "into them in place; the new parameters are views of torch's memory and anything that held ours's old "
     "ones (an optimizer) no longer sees them. Copy into the existing ones with .copy_ under torch.no_grad(). "
     "(Rule broken: values right, parameters not kept.)",
     "stated rule broken (new parameters instead of an in-place copy)",
     "any module: after the call ours.w_q.weight is a different object that shares memory with theirs.in_proj_weight.",
     IMPORTS_05 + COPY_HEAD + '''    W, b = theirs.in_proj_weight, theirs.in_proj_bias
    ours.w_q.weight = nn.Parameter(W[:d])
    ours.w_q.bias = nn.Parameter(b[:d])
    ours.w_k.weight = nn.Parameter(W[d:2 * d])
    ours.w_k.bias = nn.Parameter(b[d:2 * d])
    ours.w_v.weight = nn.Parameter(W[2 * d:])
    ours.w_v.bias = nn.Parameter(b[2 * d:])
    ours.w_o.weight = nn.Parameter(theirs.out_proj.weight)
    ours.w_o.bias = nn.Parameter(theirs.out_proj.bias)
    return ours
''')

# ------------------------------------------------------------------- heads_one_by_one

_add("f-05-heads-loop-scale-dmodel", "heads_one_by_one",
     "In the loop you scaled each head's scores by math.sqrt(mha.d_model); a head's queries and keys "
     "have d_head features, so divide by math.sqrt(d_head).",
     "wrong quantity under the square root",
     "d_model=8, n_heads=4: each head's scores are divided by sqrt(8) instead of sqrt(2), so the maps are too flat.",
     _edit(HEADS_OK, "/ math.sqrt(d_head)", "/ math.sqrt(mha.d_model)"))

_add("f-05-heads-loop-weight-columns", "heads_one_by_one",
     "You took head i's columns of each weight, x @ mha.w_q.weight[:, rows], reading nn.Linear's weight "
     "as [in, out]; it is [out, in], so head i's output features are the rows: x @ W[rows].T.",
     "rows and columns of the weight confused",
     "d_model=4, n_heads=2, random weights: head 0's queries, keys and values are all wrong.",
     IMPORTS_05 + HEADS_HEAD + '''    for i in range(mha.n_heads):
        rows = slice(i * d_head, (i + 1) * d_head)
        q = x @ mha.w_q.weight[:, rows] + mha.w_q.bias[rows]
        k = x @ mha.w_k.weight[:, rows] + mha.w_k.bias[rows]
        v = x @ mha.w_v.weight[:, rows] + mha.w_v.bias[rows]
        w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_head), dim=-1)
        outputs.append(w @ v)
        maps.append(w)
    output = mha.w_o(torch.cat(outputs, dim=-1))
    return output, torch.stack(maps, dim=1)
''')

_add("f-05-heads-loop-stack-dim0", "heads_one_by_one",
     "You stacked the heads' maps with torch.stack(maps, dim=0), which gives [h, B, T, T]; the head axis "
     "goes after the batch axis, dim=1.",
     "stacked along the wrong axis",
     "B=2, n_heads=2, T=3: the weights come back [2 heads, 2 batch, 3, 3], head and batch swapped.",
     _edit(HEADS_OK, "torch.stack(maps, dim=1)", "torch.stack(maps, dim=0)"))

_add("f-05-heads-loop-value-bias-missing", "heads_one_by_one",
     "You left out the value projection's bias: v = x @ mha.w_v.weight[rows].T, without "
     "+ mha.w_v.bias[rows].",
     "a term left out (one bias)",
     "any module whose w_v has a non-zero bias: the attention maps are right but the output is shifted.",
     _edit(HEADS_OK, "v = x @ mha.w_v.weight[rows].T + mha.w_v.bias[rows]", "v = x @ mha.w_v.weight[rows].T"))

_add("f-05-heads-loop-wo-without-bias", "heads_one_by_one",
     "You applied the output projection by hand as torch.cat(outputs, -1) @ mha.w_o.weight.T and dropped "
     "its bias; call mha.w_o(...) or add mha.w_o.bias.",
     "a term left out (output bias)",
     "any module whose w_o has a non-zero bias: every output row is off by w_o.bias.",
     _edit(HEADS_OK, "output = mha.w_o(torch.cat(outputs, dim=-1))",
           "output = torch.cat(outputs, dim=-1) @ mha.w_o.weight.T"))

# ------------------------------------------------------------------- mha_parameter_count

_add("f-05-count-no-biases", "mha_parameter_count",
     "You counted only the four d_model x d_model weight matrices; each nn.Linear also has a bias of "
     "d_model numbers: 4 * d_model * d_model + 4 * d_model.",
     "a term left out (biases)",
     "d_model=4, n_heads=2: 64 instead of 80.",
     IMPORTS_05 + COUNT_HEAD + '''    return 4 * d_model * d_model
''')

_add("f-05-count-three-layers", "mha_parameter_count",
     "You counted w_q, w_k and w_v but not the output projection w_o: there are four layers of "
     "d_model * d_model + d_model numbers each.",
     "a term left out (one layer)",
     "d_model=4, n_heads=1: 60 instead of 80.",
     IMPORTS_05 + COUNT_HEAD + '''    return 3 * (d_model * d_model + d_model)
''')

_add("f-05-count-times-heads", "mha_parameter_count",
     "You multiplied by n_heads, as if every head had its own full d_model x d_model projections; the "
     "heads share the four layers and only cut their outputs into slices, so the count does not depend on n_heads.",
     "a factor applied that does not belong (n_heads)",
     "d_model=4, n_heads=2: 160 instead of 80.",
     IMPORTS_05 + COUNT_HEAD + '''    return 4 * (d_model * d_model + d_model) * n_heads
''')

_add("f-05-count-square-head-projections", "mha_parameter_count",
     "You gave each head its own d_head x d_head projections for q, k and v; each head's projection reads "
     "all d_model input features, so it is d_head x d_model, and the three together are d_model x d_model each.",
     "wrong shape assumed for the per-head projections",
     "d_model=4, n_heads=2: 56 instead of 80.",
     IMPORTS_05 + COUNT_HEAD + '''    d_head = d_model // n_heads
    per_head = 3 * (d_head * d_head + d_head)
    return n_heads * per_head + d_model * d_model + d_model
''')

# ------------------------------------------------------------------- value_down_up

_add("f-05-vdu-no-transposes", "value_down_up",
     "You returned the slices as they sit in the weights, mha.w_v.weight[features] and "
     "mha.w_o.weight[:, features]; nn.Linear stores [out, in], so in the row convention both must be "
     "transposed: down = w_v.weight[features].T, up = w_o.weight[:, features].T.",
     "transpose left out",
     "d_model=4, n_heads=2, head 0: down comes back [2, 4] and up [4, 2] instead of [4, 2] and [2, 4].",
     IMPORTS_05 + VDU_HEAD + '''    down = mha.w_v.weight[features]
    up = mha.w_o.weight[:, features]
    return down, up
''')

_add("f-05-vdu-up-from-rows", "value_down_up",
     "For value-up you took head i's rows of w_o.weight, mha.w_o.weight[features]; a head's numbers arrive "
     "as w_o's input features, which are columns of the [out, in] weight: mha.w_o.weight[:, features].T.",
     "rows and columns of the weight confused",
     "d_model=4, n_heads=2, head 1: up has the right shape [2, 4] but holds w_o's rows 2:4, not its columns 2:4 transposed.",
     _edit(VDU_OK, "up = mha.w_o.weight[:, features].T      # [d_head, d_model]",
           "up = mha.w_o.weight[features]          # [d_head, d_model]"))

_add("f-05-vdu-down-from-columns", "value_down_up",
     "For value-down you took columns of w_v.weight, mha.w_v.weight[:, features]; head i's value "
     "features are w_v's outputs, rows of the [out, in] weight: mha.w_v.weight[features].T.",
     "rows and columns of the weight confused",
     "d_model=4, n_heads=2, head 0: down is [4, 2] as it should be but holds columns 0:2 of w_v.weight.",
     _edit(VDU_OK, "down = mha.w_v.weight[features].T       # [d_model, d_head]",
           "down = mha.w_v.weight[:, features]      # [d_model, d_head]"))

_add("f-05-vdu-returns-up-down", "value_down_up",
     "You returned (up, down); the exercise asks for (down, up), value-down first.",
     "tuple items returned in the wrong order",
     "d_model=4, n_heads=2, head 0: the first item is [2, 4] (up) where down [4, 2] belongs.",
     _edit(VDU_OK, "return down, up", "return up, down"))


# =============================================================================== lesson 06

IMPORTS_06 = '''import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    MODEL, TASK, LEARNING_RATE, as_stream, as_tokens, as_hidden, check_block_sizes,
    check_model_sizes, check_steps_and_seed, check_depths, layer_outputs, progress,
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
BLOCK_OK_BODY = '''        h = self.ln1(x)
        a = self.attn(h, h, h, need_weights=False)[0]
        x = x + a if self.residual else a
        m = self.mlp(self.ln2(x))
        x = x + m if self.residual else m
        return x
'''
BLOCK_OK = BLOCK_HEAD + BLOCK_OK_BODY

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
        self.blocks = nn.ModuleList(
            [Block(d_model, n_heads, d_ff, residual=residual) for _ in range(n_layers)])
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
    sims = unit @ unit.transpose(-1, -2)                  # [..., T, T] cosines
    T = h.shape[-2]
    diagonal = sims.diagonal(dim1=-2, dim2=-1).sum(dim=-1)
    per_sequence = (sims.sum(dim=(-2, -1)) - diagonal) / (T * (T - 1))
    return per_sequence.mean().item()
'''
SIM_OK = SIM_HEAD + SIM_OK_BODY

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
TRAIN_OK = TRAIN_HEAD + TRAIN_OK_BODY

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
            rows.append({
                "depth": depth,
                "residual": residual,
                "losses": losses,
                "final_loss": float(np.mean(losses[-10:])),
                "similarity_init": similarity_init,
                "similarity_trained": similarity_trained,
            })
    return rows
'''
RUN_OK = IMPORTS_06 + BLOCK_OK + TINY_OK + SIM_OK + TRAIN_OK + RUN_HEAD + RUN_OK_BODY

OK_06 = {
    "Block": IMPORTS_06 + BLOCK_OK,
    "TinyTransformer": IMPORTS_06 + BLOCK_OK + TINY_OK,
    "token_similarity": IMPORTS_06 + SIM_OK,
    "train": IMPORTS_06 + TRAIN_OK,
    "run_ablation": RUN_OK,
}

# ------------------------------------------------------------------- Block

_add("f-06-block-post-norm", "Block",
     "You wrote a post-norm block, x = ln1(x + attn(x)) and x = ln2(x + mlp(x)): the norms sit on the "
     "stream after each addition. In the pre-norm block the norm feeds only the sublayer, x = x + attn(ln1(x)), "
     "x = x + mlp(ln2(x)), and the stream itself is never normalised.",
     "norm in the wrong place",
     "residual=True, d_model=8, n_heads=2, random weights and input [2, 3, 8]: the output is a normalised "
     "stream instead of x plus the two corrections.",
     IMPORTS_06 + BLOCK_HEAD + '''        if self.residual:
            x = self.ln1(x + self.attn(x, x, x, need_weights=False)[0])
            x = self.ln2(x + self.mlp(x))
        else:
            h = self.ln1(x)
            x = self.attn(h, h, h, need_weights=False)[0]
            x = self.mlp(self.ln2(x))
        return x
''')

_add("f-06-block-mlp-reads-ln1", "Block",
     "The MLP reads self.ln1(x), the attention's norm, instead of self.ln2(x); ln2 is never used, so its "
     "learned scale and shift have no effect.",
     "wrong layer used (ln1 in place of ln2)",
     "residual=True with ln1 and ln2 loaded with different random scales: the MLP's input is normalised with ln1's.",
     _edit(IMPORTS_06 + BLOCK_OK, "m = self.mlp(self.ln2(x))", "m = self.mlp(self.ln1(x))"))

_add("f-06-block-no-residual-keeps-mlp-skip", "Block",
     "With residual=False you removed only the attention's skip: the last line still adds x + mlp(ln2(x)). "
     "Without residuals both additions go: x = mlp(ln2(x)).",
     "a flag honoured in one place only",
     "residual=False, random weights and input [2, 3, 8]: the output keeps a copy of attn's output added to the MLP's.",
     _edit(IMPORTS_06 + BLOCK_OK, "x = x + m if self.residual else m", "x = x + m"))

_add("f-06-block-parallel-branches", "Block",
     "You computed the MLP from the block's input, mlp(ln2(x)) with the x that entered the block, and added "
     "both branches at the end (x + attn + mlp, a 'parallel' block); in this block the MLP reads the stream "
     "after the attention's update has been added.",
     "statement order (a branch reads the stale stream)",
     "residual=True, random weights and input [2, 3, 8]: the MLP's input misses the attention update.",
     IMPORTS_06 + BLOCK_HEAD + '''        h = self.ln1(x)
        a = self.attn(h, h, h, need_weights=False)[0]
        if self.residual:
            m = self.mlp(self.ln2(x))
            return x + a + m
        return self.mlp(self.ln2(a))
''')

_add("f-06-block-skip-carries-normalised", "Block",
     "You overwrote the stream with its normalised copy, x = self.ln1(x), before the attention skip, so "
     "the skip adds ln1(x) instead of x itself; keep h = ln1(x) in a separate variable and add attn(h) to the raw x.",
     "residual carries the wrong tensor",
     "residual=True, input [2, 3, 8] with large, shifted values: the output has lost x's scale and offset.",
     _edit(IMPORTS_06 + BLOCK_OK, '''        h = self.ln1(x)
        a = self.attn(h, h, h, need_weights=False)[0]
''', '''        x = self.ln1(x)
        a = self.attn(x, x, x, need_weights=False)[0]
'''))

# ------------------------------------------------------------------- TinyTransformer

_TINY = IMPORTS_06 + BLOCK_OK + TINY_OK

_add("f-06-tiny-pos-emb-of-tokens", "TinyTransformer",
     "You looked the position embedding up with the token ids, self.pos_emb(tokens); it must be looked up with "
     "the positions 0..T-1, self.pos_emb(torch.arange(T)). (It runs because every token id is below seq_len.)",
     "wrong index tensor (tokens for positions)",
     "vocab_size=8, seq_len=8, tokens [[3, 3, 1]]: both 3s get the same vector, position 0's and 1's embeddings are never used.",
     _edit(_TINY, "x = self.tok_emb(tokens) + self.pos_emb(positions)", "x = self.tok_emb(tokens) + self.pos_emb(tokens)"))

_add("f-06-tiny-no-final-norm", "TinyTransformer",
     "forward maps the stream to logits with self.head(x) and never applies self.ln_f; the final LayerNorm "
     "comes between the last block and the head: self.head(self.ln_f(x)).",
     "a layer left out (ln_f)",
     "any model and tokens [2, 5]: the logits are the head of the raw stream.",
     _edit(_TINY, "return self.head(self.ln_f(x))", "return self.head(x)"))

_add("f-06-tiny-residual-flag-dropped", "TinyTransformer",
     "You built the blocks as Block(d_model, n_heads, d_ff) without passing residual, so every block keeps "
     "its skips even when the model is built with residual=False; pass residual=residual.",
     "argument left at its default",
     "residual=False, n_layers=2: the output is that of the model with residuals.",
     _edit(_TINY, "[Block(d_model, n_heads, d_ff, residual=residual) for _ in range(n_layers)]",
           "[Block(d_model, n_heads, d_ff) for _ in range(n_layers)]"))

_add("f-06-tiny-one-shared-block", "TinyTransformer",
     "nn.ModuleList([Block(...)] * n_layers) puts the same Block object in the list n_layers times, so all "
     "layers share one set of weights; build a new Block for each layer with a list comprehension.",
     "list repetition shares one object",
     "n_layers=2 with the reference's weights loaded: both layers run with the second block's weights.",
     _edit(_TINY, "[Block(d_model, n_heads, d_ff, residual=residual) for _ in range(n_layers)]",
           "[Block(d_model, n_heads, d_ff, residual=residual)] * n_layers"))

_add("f-06-tiny-only-last-block", "TinyTransformer",
     "In the loop over the blocks you wrote h = block(x) and never fed h back, so every block reads the "
     "embeddings and only the last block's output reaches the head; write x = block(x).",
     "running value not carried through the loop",
     "n_layers=2, random weights: the output is the head of the last block applied to the embeddings.",
     _edit(_TINY, '''        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))
''', '''        h = x
        for block in self.blocks:
            h = block(x)
        return self.head(self.ln_f(h))
'''))

# ------------------------------------------------------------------- token_similarity

_SIM = IMPORTS_06 + SIM_OK

_add("f-06-sim-diagonal-included", "token_similarity",
     "You averaged all T x T cosines, each token's similarity with itself (always 1) included; leave the "
     "diagonal out and divide by the T(T - 1) pairs of distinct tokens.",
     "diagonal not excluded",
     "h = [[1, 0], [0, 1]] (two orthogonal tokens): expected 0.0, yours 0.5.",
     _edit(_SIM, "per_sequence = (sims.sum(dim=(-2, -1)) - diagonal) / (T * (T - 1))",
           "per_sequence = sims.mean(dim=(-2, -1))"))

_add("f-06-sim-not-normalised", "token_similarity",
     "You averaged the raw dot products h_i . h_j: a cosine divides each by the two lengths. Normalise "
     "every token to length 1 first.",
     "a factor left out (the norms)",
     "h = [[2, 0], [2, 0]]: expected 1.0, yours 4.0.",
     _edit(_SIM, "unit = h / h.norm(dim=-1, keepdim=True)", "unit = h"))

_add("f-06-sim-normalised-over-tokens", "token_similarity",
     "You normalised along the token axis, h.norm(dim=-2), so each feature column has length 1; a cosine "
     "needs each token (row) to have length 1: h.norm(dim=-1, keepdim=True).",
     "norm over the wrong axis",
     "h = [[1, 0], [1, 1]]: expected 0.7071, yours 0.5.",
     _edit(_SIM, "unit = h / h.norm(dim=-1, keepdim=True)", "unit = h / h.norm(dim=-2, keepdim=True)"))

_add("f-06-sim-summed-over-batch", "token_similarity",
     "You summed the per-sequence similarities over the batch instead of averaging them: the result grows "
     "with the batch size. Use .mean().",
     "sum instead of mean",
     "h [2, 2, 2] with both sequences [[1, 0], [1, 0]]: expected 1.0, yours 2.0.",
     _edit(_SIM, "return per_sequence.mean().item()", "return per_sequence.sum().item()"))

_add("f-06-sim-norm-without-keepdim", "token_similarity",
     "h.norm(dim=-1) without keepdim=True has shape [..., T], which broadcasts against the features axis "
     "instead of the tokens; with d == T it runs and divides feature j by token j's length. Keep the axis: "
     "h.norm(dim=-1, keepdim=True).",
     "keepdims forgotten (broadcasting)",
     "h = [[3, 0], [1, 1]] (T = d = 2): expected 0.7071, yours differs (about 0.33).",
     _edit(_SIM, "unit = h / h.norm(dim=-1, keepdim=True)", "unit = h / h.norm(dim=-1)"))

# ------------------------------------------------------------------- train

_TRAIN = IMPORTS_06 + TRAIN_OK

_add("f-06-train-no-zero-grad", "train",
     "You never clear the gradients: without optimizer.zero_grad() before loss.backward(), each step's "
     "gradient is added to all the earlier ones and Adam follows their sum.",
     "statement left out (gradients accumulate)",
     "a small float64 model, 4 steps, seed 0: the losses agree for two steps and differ from the third on.",
     _edit(_TRAIN, "        optimizer.zero_grad()\n", ""))

_add("f-06-train-generator-reseeded-each-step", "train",
     "You made the batch with task.sample(torch.Generator().manual_seed(seed)) inside the loop, a fresh "
     "generator each step, so every step trains on the same batch; draw every batch from the one generator the given line made.",
     "statement moved into the loop (the same batch every step)",
     "a small float64 model, 4 steps, seed 0: from step 2 on the batches, and so the losses, differ.",
     _edit(_TRAIN, "tokens, targets = task.sample(generator)",
           "tokens, targets = task.sample(torch.Generator().manual_seed(seed))"))

_add("f-06-train-cross-entropy-not-flattened", "train",
     "F.cross_entropy(logits, targets) with logits [batch, T, vocab] reads axis 1 (the positions) as the "
     "classes; it runs here only because T = vocab = 8. Flatten to logits.reshape(-1, vocab) and targets.reshape(-1).",
     "wrong axis taken as the classes",
     "TASK (T = vocab = 8) and a small float64 model: the loss is a cross-entropy over positions, not over the vocabulary.",
     _edit(_TRAIN, "loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))",
           "loss = F.cross_entropy(logits, targets)"))

_add("f-06-train-last-position-only", "train",
     "You computed the loss on the last position only, logits[:, -1] against targets[:, -1], as for "
     "next-token prediction; this task scores every position.",
     "a slice where the whole axis belongs",
     "a small float64 model, 1 step: the first loss is the last position's cross-entropy, not the mean over all 8.",
     _edit(_TRAIN, "loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))",
           "loss = F.cross_entropy(logits[:, -1], targets[:, -1])"))

_add("f-06-train-step-before-backward", "train",
     "You call optimizer.step() before loss.backward(), right after zero_grad(): the step sees no gradient "
     "and the next zero_grad() clears this one, so the weights never change. The order is zero_grad, backward, step.",
     "statements in the wrong order",
     "a small float64 model, 3 steps: the losses of steps 2 and 3 are those of the untrained model on new batches.",
     _edit(_TRAIN, '''        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
''', '''        optimizer.zero_grad()
        optimizer.step()
        loss.backward()
'''))

_add("f-06-train-loss-tensor-kept", "train",
     "You appended the loss tensor itself, losses.append(loss); the exercise wants Python floats (loss.item()), "
     "and keeping the tensors also keeps every step's graph alive.",
     "right numbers of the wrong type",
     "any model, 1 step: losses[0] is a 0-d tensor, not a float.",
     _edit(_TRAIN, "losses.append(loss.item())", "losses.append(loss)"))

# ------------------------------------------------------------------- run_ablation

_add("f-06-run-seed-once", "run_ablation",
     "You seeded torch once, before the loops, so the model without residuals starts from other weights "
     "than the one with them; call torch.manual_seed(seed) right before building each model.",
     "statement moved out of the loop",
     "depths (1,), 12 steps, seed 0: row 1 (residual=False) starts from other weights than row 0, so its losses differ.",
     _edit(RUN_OK, '''    for depth in depths:
        for residual in (True, False):
            torch.manual_seed(seed)
''', '''    torch.manual_seed(seed)
    for depth in depths:
        for residual in (True, False):
'''))

_add("f-06-run-final-loss-last-step", "run_ablation",
     "final_loss is losses[-1], the last step alone; the table wants the mean of the last 10 losses, "
     "float(np.mean(losses[-10:])).",
     "a reduction left out",
     "depths (1,), 12 steps, seed 0: final_loss is the 12th loss, not the mean of losses 3..12.",
     _edit(RUN_OK, '"final_loss": float(np.mean(losses[-10:])),', '"final_loss": losses[-1],'))

_add("f-06-run-final-loss-first-ten", "run_ablation",
     "You sliced losses[:10], the first ten losses, for final_loss; the last ten are losses[-10:].",
     "slice from the wrong end",
     "depths (1,), 12 steps, seed 0: final_loss is the mean of steps 1..10 instead of 3..12.",
     _edit(RUN_OK, '"final_loss": float(np.mean(losses[-10:])),', '"final_loss": float(np.mean(losses[:10])),'))

_add("f-06-run-similarity-init-after-training", "run_ablation",
     "You measured similarity_init after calling train, so it is the trained model's similarity (the same "
     "list as similarity_trained); measure it right after building the model, before training.",
     "statement in the wrong place (measured after training)",
     "depths (1,), 12 steps, seed 0: similarity_init equals similarity_trained.",
     _edit(RUN_OK, '''            similarity_init = [token_similarity(h) for h in layer_outputs(model, probe)]
            losses = train(model, TASK, steps, seed)
''', '''            losses = train(model, TASK, steps, seed)
            similarity_init = [token_similarity(h) for h in layer_outputs(model, probe)]
'''))

_add("f-06-run-without-first", "run_ablation",
     "You loop over residual in (False, True), so each depth's run without residuals comes first; the rows "
     "go depth 1 with, depth 1 without, and so on.",
     "wrong order of the runs",
     "depths (1,), 12 steps, seed 0: row 0 has residual=False.",
     _edit(RUN_OK, "for residual in (True, False):", "for residual in (False, True):"))

_add("f-06-run-train-seed-hardcoded", "run_ablation",
     "You call train(model, TASK, steps, 0) with the seed hard-coded, so every sweep trains on seed 0's "
     "batches whatever seed it is given; pass seed.",
     "parameter replaced by a hard-coded number",
     "depths (1,), 12 steps, seed 1: the losses are those of seed 0's batches.",
     _edit(RUN_OK, "losses = train(model, TASK, steps, seed)", "losses = train(model, TASK, steps, 0)"))


# =============================================================================== lesson 07

IMPORTS_07 = '''import time

import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import positive_int
from courseware.long_attention import (
    budget, score_blocks, stream_of, one_query, tile_inputs, key_value_rows, decode_inputs,
)
'''

ONLINE_HEAD = '''

def online_softmax_stats(scores_blocks):
    """(m, s): the largest score, and the sum of exp(x - m) over every score x, in one pass.

    scores_blocks comes as a stream: each block once, in order, read with one for loop
    (it has no len() and no index).
    """
    blocks = score_blocks(scores_blocks)      # given: yields each block, checked, one at a time
'''
ONLINE_OK_BODY = '''    m, s = -np.inf, 0.0
    for block in blocks:
        m_new = max(m, float(block.max()))
        s = s * np.exp(m - m_new) + float(np.exp(block - m_new).sum())
        m = m_new
    return m, s
'''
ONLINE_OK = IMPORTS_07 + ONLINE_HEAD + ONLINE_OK_BODY

ONE_HEAD = '''

def attention_one_pass(q, K, V, block):
    """Attention of one query q [d_k] over K [T_k, d_k], V [T_k, d_v], reading `block` keys at a time.

    One pass: each block of rows of K and V is read while it is the current block, never after.
    """
    q, K, V = one_query(q, K, V)              # given: checks the shapes, never copies K or V
    block = positive_int(block, "block")
'''
ONE_OK_BODY = '''    d_k = q.shape[0]
    m, s = -np.inf, 0.0
    o = np.zeros(V.shape[1])
    for start in range(0, K.shape[0], block):
        K_b, V_b = K[start:start + block], V[start:start + block]
        x = K_b @ q / np.sqrt(d_k)
        m_new = max(m, x.max())
        scale = np.exp(m - m_new)
        p = np.exp(x - m_new)
        s = s * scale + p.sum()
        o = o * scale + p @ V_b
        m = m_new
    return o / s
'''
ONE_OK = IMPORTS_07 + ONE_HEAD + ONE_OK_BODY

TILE_HEAD = '''

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
            if causal and j0 > i1 - 1:          # every key after every query of the tile
                skipped += 1
                continue
            S = Q_i @ np.swapaxes(K[..., j0:j1, :], -1, -2) / np.sqrt(d_k)
            if causal and j1 - 1 > i0:          # the diagonal runs through this tile
                rows = np.arange(i0, i1)[:, None]
                cols = np.arange(j0, j1)[None, :]
                S = np.where(cols <= rows, S, -np.inf)
            m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
            scale = np.exp(m - m_new)
            p = np.exp(S - m_new)
            s = s * scale + p.sum(axis=-1, keepdims=True)
            o = o * scale + p @ V[..., j0:j1, :]
            m = m_new
        out[..., i0:i1, :] = o / s
    return out, skipped
'''
TILE_OK = IMPORTS_07 + TILE_HEAD + TILE_OK_BODY

KV_OK = '''

class KVCache:
    """The keys [t, d_k] and values [t, d_v] of the t positions seen so far."""

    def __init__(self):
        self._keys = []      # blocks of rows, oldest first
        self._values = []

    def __len__(self):
        """The number of positions in the cache."""
        return sum(len(k) for k in self._keys)

    def append(self, k, v):
        """Add one position (k [d_k], v [d_v]) or a block of them ([n, d_k], [n, d_v])."""
        k, v = key_value_rows(k, v)    # given: both as blocks of rows [n, d], one value per key
        self._keys.append(k.copy())
        self._values.append(v.copy())

    @property
    def keys(self):
        """Every key so far, one row per position: [t, d_k]."""
        if not self._keys:
            raise ValueError("the cache is empty: it has no keys yet")
        return np.concatenate(self._keys, axis=0)

    @property
    def values(self):
        """Every value so far, one row per position: [t, d_v]."""
        if not self._values:
            raise ValueError("the cache is empty: it has no values yet")
        return np.concatenate(self._values, axis=0)
'''

DECODE_HEAD = '''

def decode_step(x_t, cache, W_q, W_k, W_v):
    """Causal self-attention for the new token x_t [d_model] (or new tokens [n, d_model]), reusing the cache."""
    x, W_q, W_k, W_v = decode_inputs(x_t, cache, W_q, W_k, W_v)   # given: checks the shapes
'''
DECODE_OK_BODY = '''    single = x.ndim == 1
    X = x[None, :] if single else x
    n, t = X.shape[0], len(cache)
    q, k, v = X @ W_q, X @ W_k, X @ W_v
    cache.append(k, v)                          # before attending: position t sees itself
    K, V = cache.keys, cache.values
    scores = q @ K.T / np.sqrt(W_q.shape[1])
    visible = np.arange(t + n)[None, :] <= t + np.arange(n)[:, None]
    scores = np.where(visible, scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    out = weights @ V
    return out[0] if single else out
'''
DECODE_OK = IMPORTS_07 + KV_OK + DECODE_HEAD + DECODE_OK_BODY

OK_07 = {
    "online_softmax_stats": ONLINE_OK,
    "attention_one_pass": ONE_OK,
    "tiled_attention": TILE_OK,
    "KVCache": IMPORTS_07 + KV_OK,
    "decode_step": DECODE_OK,
}

# ------------------------------------------------------------------- online_softmax_stats

_add("f-07-online-no-rescale", "online_softmax_stats",
     "When a block raises the maximum you add its terms e^(x - m') but leave the old sum as it was: its "
     "terms are still relative to the old maximum. Multiply s by e^(m - m') before adding the block's terms.",
     "running value not rescaled",
     "blocks [0.0], [1.0]: expected (1, 1 + e^-1 = 1.368), yours (1, 2.0).",
     _edit(ONLINE_OK, "s = s * np.exp(m - m_new) + float(np.exp(block - m_new).sum())",
           "s = s + float(np.exp(block - m_new).sum())"))

_add("f-07-online-rescale-sign-flipped", "online_softmax_stats",
     "The rescaling factor has its exponent upside down, np.exp(m_new - m): it should shrink the old sum, "
     "e^(m - m') <= 1. On the first block m is -inf, so your factor is e^(+inf) and 0 * inf gives NaN.",
     "sign flipped inside an exponent",
     "blocks [1.0, 2.0]: expected (2, 1 + e^-1), yours (2, nan).",
     _edit(ONLINE_OK, "s = s * np.exp(m - m_new)", "s = s * np.exp(m_new - m)"))

_add("f-07-online-max-starts-at-zero", "online_softmax_stats",
     "You started the running maximum at 0 instead of -inf, so when every score is negative m stays 0 and "
     "the sum is taken relative to 0; start from m = -np.inf.",
     "wrong initial value",
     "blocks [-1.0, -2.0]: expected (-1, 1 + e^-1), yours (0, e^-1 + e^-2).",
     _edit(ONLINE_OK, "m, s = -np.inf, 0.0", "m, s = 0.0, 0.0"))

_add("f-07-online-returns-s-m", "online_softmax_stats",
     "You return (s, m); the exercise asks for (m, s), the maximum first.",
     "tuple items returned in the wrong order",
     "blocks [1.0, 3.0]: expected (3, 1 + e^-2), yours (1.135, 3).",
     _edit(ONLINE_OK, "    return m, s\n", "    return s, m\n"))

_add("f-07-online-block-terms-own-max", "online_softmax_stats",
     "You add each block's terms relative to the block's own maximum, np.exp(block - block.max()), "
     "instead of the new running maximum m'; when a block's maximum is below the running one its terms are "
     "too large by e^(m' - local max).",
     "block terms relative to the wrong maximum",
     "blocks [3.0], [1.0, 2.0]: expected s = 1 + e^-1 + e^-2, yours 1 + 1 + e^-1.",
     _edit(ONLINE_OK, '''        m_new = max(m, float(block.max()))
        s = s * np.exp(m - m_new) + float(np.exp(block - m_new).sum())
''', '''        local = float(block.max())
        m_new = max(m, local)
        s = s * np.exp(m - m_new) + float(np.exp(block - local).sum())
'''))

_add("f-07-online-max-not-running", "online_softmax_stats",
     "m_new = block.max() forgets the maximum seen so far: after a block with smaller scores the 'maximum' "
     "goes down. The sum stays consistent with it, but the m you return is the last block's maximum; take "
     "max(m, block.max()).",
     "running value replaced instead of combined",
     "blocks [3.0], [1.0]: expected (3, 1 + e^-2), yours (1, e^2 + 1).",
     _edit(ONLINE_OK, "m_new = max(m, float(block.max()))", "m_new = float(block.max())"))

_add("f-07-online-two-loops", "online_softmax_stats",
     "You read the blocks twice, one loop for the maximum and a second for the sum: that is the two-pass "
     "softmax, and a stream gives its blocks only once, so the second loop fails. Keep m and s together in "
     "one loop and rescale s when m grows. (Rule broken: the stream is read twice.)",
     "stated rule broken (two passes over a stream)",
     "stream_of([[1.0, 2.0], [0.5]]): the second loop raises instead of returning (2, 1 + e^-1 + e^-1.5).",
     IMPORTS_07 + ONLINE_HEAD + '''    m = -np.inf
    for block in blocks:
        m = max(m, float(block.max()))
    s = 0.0
    for block in blocks:
        s += float(np.exp(block - m).sum())
    return m, s
''')

# ------------------------------------------------------------------- attention_one_pass

_add("f-07-one-pass-output-not-rescaled", "attention_one_pass",
     "You rescale the running sum s by e^(m - m') when the maximum grows but not the running output o; o "
     "keeps terms relative to the old maximum. Multiply o by the same factor: o = o * scale + p @ V_b.",
     "running value not rescaled (the output)",
     "q, K [10, 4], V [10, 3] random, block=3: the output differs from torch's whenever a later block raises the maximum.",
     _edit(ONE_OK, "o = o * scale + p @ V_b", "o = o + p @ V_b"))

_add("f-07-one-pass-never-divided", "attention_one_pass",
     "You return the running output o without dividing it by the sum s once at the end: o holds the "
     "numerator sum e^(x - m) v only. Return o / s.",
     "operand left out (the final division)",
     "q, K [10, 4], V [10, 3] random, block=3: the output is s times too large.",
     _edit(ONE_OK, "    return o / s\n", "    return o\n"))

_add("f-07-one-pass-no-scale", "attention_one_pass",
     "Your scores are K_b @ q without the division by sqrt(d_k); attention's scores are q . k / sqrt(d_k).",
     "scale left out",
     "q, K [10, 4], V [10, 3] random, block=3: the weights are too sharp (scores 2 times too large).",
     _edit(ONE_OK, "x = K_b @ q / np.sqrt(d_k)", "x = K_b @ q"))

_add("f-07-one-pass-scale-by-tk", "attention_one_pass",
     "You divide by np.sqrt(K.shape[0]), the number of keys T_k; the scale is the square root of the key "
     "width d_k, K.shape[1] (or len(q)).",
     "square root of the wrong quantity",
     "q, K [10, 4], V [10, 3] random, block=3: scores divided by sqrt(10) instead of 2.",
     _edit(ONE_OK, "x = K_b @ q / np.sqrt(d_k)", "x = K_b @ q / np.sqrt(K.shape[0])"))

_add("f-07-one-pass-stops-one-short", "attention_one_pass",
     "Your loop is range(0, K.shape[0] - 1, block): it stops one row early, so when (T_k - 1) is a multiple "
     "of block the last key is never read. Loop up to K.shape[0].",
     "range stopped one step early",
     "q, K [10, 4], V [10, 3] random, block=3: key 9 is never read and gets no weight.",
     _edit(ONE_OK, "for start in range(0, K.shape[0], block):", "for start in range(0, K.shape[0] - 1, block):"))

_add("f-07-one-pass-all-scores-first", "attention_one_pass",
     "You compute every score at once, K @ q, before the loop and only then walk the blocks: that holds T_k "
     "scores in memory and reads all of K in one step, which the one-pass rule forbids. Compute each block's "
     "scores inside the loop from K[start:start + block]. (Rule broken: memory O(T_k); the values are right.)",
     "stated rule broken (memory budget)",
     "T_k = 1,048,576 keys of d_k = 2, block=1024: the call holds an 8 MiB array of scores, far above one block's.",
     _edit(ONE_OK, '''    for start in range(0, K.shape[0], block):
        K_b, V_b = K[start:start + block], V[start:start + block]
        x = K_b @ q / np.sqrt(d_k)
''', '''    scores = K @ q / np.sqrt(d_k)
    for start in range(0, K.shape[0], block):
        V_b = V[start:start + block]
        x = scores[start:start + block]
'''))

_add("f-07-one-pass-max-starts-at-zero", "attention_one_pass",
     "You start the running maximum at 0 instead of -inf. Any start works on paper, but when every score is "
     "far below 0 the maximum stays 0, every e^(x - 0) underflows to 0, and o / s is 0/0 = NaN. Start from "
     "m = -np.inf so that the first block sets it.",
     "wrong initial value (underflow)",
     "q = [1], K near -1000 (10 keys), V [10, 3], block=3: NaN where torch gives a finite output.",
     _edit(ONE_OK, "m, s = -np.inf, 0.0", "m, s = 0.0, 0.0"))

# ------------------------------------------------------------------- tiled_attention

_TILE = TILE_OK

_add("f-07-tiled-skip-off-by-one", "tiled_attention",
     "Your skip test is j0 >= i1 - 1: a tile whose first key is the block's last query is skipped, though "
     "that query may see that key (itself). Skip only when j0 > i1 - 1, every key after every query.",
     "<= vs < (a boundary off by one)",
     "causal, T=4, block_q=2, block_k=1: query 1 never sees key 1 and query 3 never sees key 3; skipped is 4, not 2.",
     _edit(_TILE, "if causal and j0 > i1 - 1:", "if causal and j0 >= i1 - 1:"))

_add("f-07-tiled-skip-against-first-query", "tiled_attention",
     "You skip a tile when its first key comes after the block's first query (j0 > i0); the later queries "
     "of the block may still see those keys. Compare with the block's last query: skip when j0 > i1 - 1.",
     "wrong end of the block compared",
     "causal, T=4, block_q=4, block_k=2: queries 2 and 3 never see keys 2 and 3.",
     _edit(_TILE, "if causal and j0 > i1 - 1:", "if causal and j0 > i0:"))

_add("f-07-tiled-mask-tile-local", "tiled_attention",
     "Inside a tile the diagonal runs through, you masked with np.tril of the tile's own shape, positions "
     "counted from the tile's corner; use the positions in the whole sequence, rows i0..i1-1 against columns "
     "j0..j1-1. (Square tiles on the diagonal hide it.)",
     "mask built from tile-local indices",
     "causal, T=4, block_q=4, block_k=2: in the tile of keys 2..3, query 0 is let see key 2.",
     _edit(_TILE, '''                rows = np.arange(i0, i1)[:, None]
                cols = np.arange(j0, j1)[None, :]
                S = np.where(cols <= rows, S, -np.inf)
''', '''                S = np.where(np.tril(np.ones(S.shape[-2:], dtype=bool)), S, -np.inf)
'''))

_add("f-07-tiled-mask-strict", "tiled_attention",
     "Your mask keeps cols < rows, so no query sees its own key; causal attention lets query i see keys "
     "j <= i. Query 0 then sees nothing and its row is NaN.",
     "< vs <= (the diagonal left out)",
     "causal, T=4, block_q=block_k=2: row 0 is NaN and every other row misses its own key.",
     _edit(_TILE, "S = np.where(cols <= rows, S, -np.inf)", "S = np.where(cols < rows, S, -np.inf)"))

_add("f-07-tiled-scale-without-new-axis", "tiled_attention",
     "You keep m and s as vectors [rows] and remembered the [..., None] when subtracting m from the scores, "
     "but not when rescaling the output: o * scale multiplies o's columns instead of its rows. Use "
     "scale[..., None] there (or keep m and s as [rows, 1] columns).",
     "[:, None] left out (a broadcasting mistake)",
     "T=4, block_q=block_k=2, d_v=2, not causal: the output is wrong (with d_v != block_q it raises instead).",
     IMPORTS_07 + TILE_HEAD + '''    T_q, T_k, d_k, d_v = Q.shape[-2], K.shape[-2], Q.shape[-1], V.shape[-1]
    out = np.zeros(batch + (T_q, d_v))
    skipped = 0
    for i0 in range(0, T_q, block_q):
        i1 = min(i0 + block_q, T_q)
        Q_i = Q[..., i0:i1, :]
        m = np.full(batch + (i1 - i0,), -np.inf)
        s = np.zeros(batch + (i1 - i0,))
        o = np.zeros(batch + (i1 - i0, d_v))
        for j0 in range(0, T_k, block_k):
            j1 = min(j0 + block_k, T_k)
            if causal and j0 > i1 - 1:
                skipped += 1
                continue
            S = Q_i @ np.swapaxes(K[..., j0:j1, :], -1, -2) / np.sqrt(d_k)
            if causal and j1 - 1 > i0:
                rows = np.arange(i0, i1)[:, None]
                cols = np.arange(j0, j1)[None, :]
                S = np.where(cols <= rows, S, -np.inf)
            m_new = np.maximum(m, S.max(axis=-1))
            scale = np.exp(m - m_new)
            p = np.exp(S - m_new[..., None])
            s = s * scale + p.sum(axis=-1)
            o = o * scale + p @ V[..., j0:j1, :]
            m = m_new
        out[..., i0:i1, :] = o / s[..., None]
    return out, skipped
''')

_add("f-07-tiled-break-counts-one", "tiled_attention",
     "On the first tile in the future you add 1 to skipped and break: the values are right (every later tile "
     "is in the future too), but the tiles after it are never counted. Count every skipped tile "
     "(continue, or add the number of tiles left).",
     "break for continue (a counter)",
     "causal, T=12, block_q=block_k=4: skipped is 2 instead of 3.",
     _edit(_TILE, '''                skipped += 1
                continue
''', '''                skipped += 1
                break
'''))

_add("f-07-tiled-full-transpose", "tiled_attention",
     "You transposed the key block with .T, which on a batched array reverses every axis; swap only the last "
     "two, np.swapaxes(K_j, -1, -2). It works on 2-D inputs only.",
     "full .T on a batched array",
     "Q, K, V [2, 4, 3] (a batch of 2), block_q=block_k=2: it raises instead of returning the batch's attention.",
     _edit(_TILE, "S = Q_i @ np.swapaxes(K[..., j0:j1, :], -1, -2) / np.sqrt(d_k)",
           "S = Q_i @ K[..., j0:j1, :].T / np.sqrt(d_k)"))

_add("f-07-tiled-state-not-reset", "tiled_attention",
     "You set up m, s and o once, before the loop over query blocks, so each query block starts from the "
     "previous block's running maximum, sum and output; reset them at the start of every query block.",
     "statement moved out of the loop (state not reset)",
     "T=4, block_q=block_k=2, not causal: rows 2 and 3 mix in rows 0 and 1's sums and outputs.",
     _edit(_TILE, '''    for i0 in range(0, T_q, block_q):
        i1 = min(i0 + block_q, T_q)
        Q_i = Q[..., i0:i1, :]
        m = np.full(batch + (i1 - i0, 1), -np.inf)
        s = np.zeros(batch + (i1 - i0, 1))
        o = np.zeros(batch + (i1 - i0, d_v))
''', '''    m = np.full(batch + (block_q, 1), -np.inf)
    s = np.zeros(batch + (block_q, 1))
    o = np.zeros(batch + (block_q, d_v))
    for i0 in range(0, T_q, block_q):
        i1 = min(i0 + block_q, T_q)
        Q_i = Q[..., i0:i1, :]
'''))

_add("f-07-tiled-key-step-block-q", "tiled_attention",
     "Your loop over key blocks steps by block_q, range(0, T_k, block_q), while each tile takes block_k keys; "
     "with block_q < block_k the tiles overlap and some keys count twice (with block_q > block_k some are "
     "never read). Step by block_k.",
     "arguments swapped (block_q for block_k)",
     "T=5, block_q=2, block_k=3, not causal: keys 2 and 4 are counted twice.",
     _edit(_TILE, "for j0 in range(0, T_k, block_k):", "for j0 in range(0, T_k, block_q):"))

# ------------------------------------------------------------------- KVCache

_KV = IMPORTS_07 + KV_OK

_add("f-07-kv-append-replaces", "KVCache",
     "append stores the new block in place of what was there, self._k = k, so the cache only ever holds "
     "the last append; concatenate the new rows after the old ones.",
     "running value replaced instead of extended",
     "append(k0, v0) then append(k1, v1) with single rows: keys is [1, d_k] (k1 only) instead of [2, d_k].",
     IMPORTS_07 + '''

class KVCache:
    """The keys [t, d_k] and values [t, d_v] of the t positions seen so far."""

    def __init__(self):
        self._k = None
        self._v = None

    def __len__(self):
        """The number of positions in the cache."""
        return 0 if self._k is None else len(self._k)

    def append(self, k, v):
        """Add one position (k [d_k], v [d_v]) or a block of them ([n, d_k], [n, d_v])."""
        k, v = key_value_rows(k, v)    # given: both as blocks of rows [n, d], one value per key
        self._k = k.copy()
        self._v = v.copy()

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
''')

_add("f-07-kv-concatenate-axis1", "KVCache",
     "keys and values join the stored blocks with np.concatenate(..., axis=1), side by side; positions are "
     "rows, so join along axis 0.",
     "concatenated along the wrong axis",
     "append of one key [3] then another: keys is [1, 6] instead of [2, 3] (and blocks of different lengths raise).",
     _edit(_KV, "return np.concatenate(self._keys, axis=0)", "return np.concatenate(self._keys, axis=1)")
     .replace("return np.concatenate(self._values, axis=0)", "return np.concatenate(self._values, axis=1)"))

_add("f-07-kv-len-counts-appends", "KVCache",
     "__len__ returns len(self._keys), the number of append calls; a call may add a block of n positions. "
     "Count rows: sum(len(k) for k in self._keys).",
     "counts calls instead of positions",
     "append of a block of 3 keys: len(cache) is 1 instead of 3.",
     _edit(_KV, "return sum(len(k) for k in self._keys)", "return len(self._keys)"))

_add("f-07-kv-newest-first", "KVCache",
     "append puts the new rows in front, self._keys.insert(0, ...), so keys lists the newest position "
     "first; the cache is oldest first, new rows go after the old ones.",
     "wrong order (prepended instead of appended)",
     "append(k0, v0) then append(k1, v1): keys is [k1, k0] instead of [k0, k1].",
     _edit(_KV, '''        self._keys.append(k.copy())
        self._values.append(v.copy())
''', '''        self._keys.insert(0, k.copy())
        self._values.insert(0, v.copy())
'''))

_add("f-07-kv-values-returns-keys", "KVCache",
     "A copy-paste slip in the values property: it concatenates self._keys; it must return the values, "
     "np.concatenate(self._values, axis=0).",
     "wrong variable returned",
     "append(k, v) with k != v: cache.values equals cache.keys.",
     _edit(_KV, '''        if not self._values:
            raise ValueError("the cache is empty: it has no values yet")
        return np.concatenate(self._values, axis=0)
''', '''        if not self._values:
            raise ValueError("the cache is empty: it has no values yet")
        return np.concatenate(self._keys, axis=0)
'''))

_add("f-07-kv-keeps-caller-arrays", "KVCache",
     "append stores the arrays it is given without copying them (and one key [d_k] arrives as a view of the "
     "caller's array), so when the caller reuses its buffer for the next token, the cached key changes too. "
     "Store a copy: self._keys.append(k.copy()).",
     "a .copy() left out (aliasing)",
     "k = np.ones(3); append(k, v); then k[:] = 7: cache.keys shows 7s where 1s were appended.",
     _edit(_KV, '''        self._keys.append(k.copy())
        self._values.append(v.copy())
''', '''        self._keys.append(k)
        self._values.append(v)
'''))

# ------------------------------------------------------------------- decode_step

_DEC = DECODE_OK

_add("f-07-decode-append-after-attending", "decode_step",
     "You attend over the cache first and append the new key and value afterwards, so the new token never "
     "sees itself (and on an empty cache there is nothing to attend to). Append before reading cache.keys "
     "and cache.values.",
     "statement in the wrong order (append after attending)",
     "a cache holding 3 positions and one new token: its output misses its own value; on an empty cache it raises.",
     IMPORTS_07 + KV_OK + DECODE_HEAD + '''    single = x.ndim == 1
    X = x[None, :] if single else x
    n, t = X.shape[0], len(cache)
    q, k, v = X @ W_q, X @ W_k, X @ W_v
    K, V = cache.keys, cache.values
    scores = q @ K.T / np.sqrt(W_q.shape[1])
    visible = np.arange(t)[None, :] <= t + np.arange(n)[:, None]
    scores = np.where(visible, scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    out = weights @ V
    cache.append(k, v)
    return out[0] if single else out
''')

_add("f-07-decode-tril-without-offset", "decode_step",
     "Your mask is np.tril(np.ones((n, t + n))) with no offset, so new token i sees keys 0..i only, as if "
     "the block started at position 0; it sits at position t + i, so use k=t (it may see keys 0..t + i).",
     "triangle's offset k left out",
     "a cache holding 2 positions and a block of 2 new tokens: token 0 sees key 0 only instead of keys 0..2.",
     _edit(_DEC, "visible = np.arange(t + n)[None, :] <= t + np.arange(n)[:, None]",
           "visible = np.tril(np.ones((n, t + n), dtype=bool))"))

_add("f-07-decode-triu-mask", "decode_step",
     "You built the mask with np.triu(..., k=t), which keeps key j when j >= t + i: the new token sees itself "
     "and the future but none of the cached past. The visible keys are the lower triangle, np.tril(..., k=t).",
     "wrong triangle (triu for tril)",
     "a cache holding 2 positions and one new token: its output is its own value alone instead of an average over 3 positions.",
     _edit(_DEC, "visible = np.arange(t + n)[None, :] <= t + np.arange(n)[:, None]",
           "visible = np.triu(np.ones((n, t + n), dtype=bool), k=t)"))

_add("f-07-decode-scale-dmodel", "decode_step",
     "You scaled the scores by np.sqrt(x.shape[-1]), the square root of d_model; the keys have d_k = "
     "W_q.shape[1] features, so divide by sqrt(d_k).",
     "square root of the wrong quantity",
     "d_model=6, d_k=4, a cache of 2 positions and one new token: the weights are too flat.",
     _edit(_DEC, "scores = q @ K.T / np.sqrt(W_q.shape[1])", "scores = q @ K.T / np.sqrt(x.shape[-1])"))

_add("f-07-decode-single-keeps-row-axis", "decode_step",
     "For one token x_t [d_model] you return out, which is [1, d_v]; a single token must give [d_v], so "
     "return out[0] when the input was one token.",
     "an axis of length 1 too many",
     "one new token: the result has shape (1, d_v) instead of (d_v,).",
     _edit(_DEC, "    return out[0] if single else out\n", "    return out\n"))

_add("f-07-decode-softmax-axis0", "decode_step",
     "Your softmax normalises along axis 0, across the new tokens, instead of along each row's keys "
     "(axis=-1); for one new token every weight becomes 1 and the output is the sum of the values.",
     "softmax over the wrong axis",
     "a cache of 2 positions and one new token: the output is v_0 + v_1 + v_2 instead of their weighted average.",
     _edit(_DEC, '''    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
''', '''    weights = np.exp(scores - scores.max(axis=0, keepdims=True))
    weights = weights / weights.sum(axis=0, keepdims=True)
'''))

_add("f-07-decode-t-after-append", "decode_step",
     "You read t = len(cache) after appending the new rows, so t already counts them and the mask "
     "j <= t + i lets every new token see all the others; read the position t before cache.append.",
     "statement in the wrong order (t read after the append)",
     "an empty cache and a prompt of 3 tokens: token 0 sees tokens 1 and 2.",
     IMPORTS_07 + KV_OK + DECODE_HEAD + '''    single = x.ndim == 1
    X = x[None, :] if single else x
    n = X.shape[0]
    q, k, v = X @ W_q, X @ W_k, X @ W_v
    cache.append(k, v)
    t = len(cache)
    K, V = cache.keys, cache.values
    scores = q @ K.T / np.sqrt(W_q.shape[1])
    visible = np.arange(len(K))[None, :] <= t + np.arange(n)[:, None]
    scores = np.where(visible, scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    out = weights @ V
    return out[0] if single else out
''')


# =============================================================================== lesson 08

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
SIN_OK_BODY = '''    t = np.arange(T)[:, None]                            # a column of positions
    theta = 10000.0 ** (-np.arange(0, d, 2) / d)         # a row of d/2 frequencies
    angles = t * theta                                   # [T, d/2]
    PE = np.zeros((T, d))
    PE[:, 0::2] = np.sin(angles)
    PE[:, 1::2] = np.cos(angles)
    return PE
'''
SIN_OK = IMPORTS_08 + SIN_HEAD + SIN_OK_BODY

ROPE_HEAD = '''

def rope(x, positions, base=10000.0):
    """Turn pair (2i, 2i + 1) of row t of x [..., T, d] counterclockwise by positions[t] * base^(-2i/d)."""
    x, positions, base = rope_inputs(x, positions, base)    # given: checks the shapes and positions
'''
ROPE_OK_BODY = '''    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)            # [d/2]
    angles = positions[:, None] * theta                  # [T, d/2]
    cos, sin = np.cos(angles), np.sin(angles)
    a, b = x[..., 0::2], x[..., 1::2]                    # the two features of every pair
    out = np.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out
'''
ROPE_OK = ROPE_HEAD + ROPE_OK_BODY

SCORES_HEAD = '''

def rope_scores(Q, K, positions_q, positions_k, base=10000.0):
    """rope(Q, positions_q) @ rope(K, positions_k)ᵀ / sqrt(d): [..., T_q, d], [..., T_k, d] -> [..., T_q, T_k]."""
    Q, K, positions_q, positions_k, base = rope_score_inputs(Q, K, positions_q, positions_k, base)  # given
'''
SCORES_OK_BODY = '''    d = Q.shape[-1]
    q = rope(Q, positions_q, base)
    k = rope(K, positions_k, base)
    return q @ np.swapaxes(k, -1, -2) / np.sqrt(d)
'''
SCORES_OK = IMPORTS_08 + ROPE_OK + SCORES_HEAD + SCORES_OK_BODY

OK_08 = {
    "sinusoidal_positions": SIN_OK,
    "rope": IMPORTS_08 + ROPE_OK,
    "rope_scores": SCORES_OK,
}

# ------------------------------------------------------------------- sinusoidal_positions

_add("f-08-sin-cos-swapped", "sinusoidal_positions",
     "You put the cosines in the even features and the sines in the odd ones; the table has "
     "PE[t, 2i] = sin and PE[t, 2i + 1] = cos, so row 0 is [0, 1, 0, 1, ...].",
     "two outputs swapped (sin and cos)",
     "T=2, d=4: row 0 is [1, 0, 1, 0] instead of [0, 1, 0, 1].",
     _edit(SIN_OK, '''    PE[:, 0::2] = np.sin(angles)
    PE[:, 1::2] = np.cos(angles)
''', '''    PE[:, 0::2] = np.cos(angles)
    PE[:, 1::2] = np.sin(angles)
'''))

_add("f-08-sin-exponent-missing-2", "sinusoidal_positions",
     "Your frequencies use np.arange(d // 2) / d, that is i/d, in the exponent; the formula has 2i/d. "
     "Use np.arange(0, d, 2) / d (or 2 * np.arange(d // 2) / d).",
     "a factor left out (the 2 in 2i/d)",
     "T=2, d=4: PE[1, 2] should be sin(1/100) = 0.0100, yours is sin(1/10) = 0.0998.",
     _edit(SIN_OK, "theta = 10000.0 ** (-np.arange(0, d, 2) / d)", "theta = 10000.0 ** (-np.arange(d // 2) / d)"))

_add("f-08-sin-exponent-sign", "sinusoidal_positions",
     "The minus sign is missing in the exponent: 10000 ** (2i/d) makes the later pairs turn thousands of "
     "times faster, not slower. θ_i = 10000^(-2i/d) = 1 / 10000^(2i/d).",
     "sign flipped inside an exponent",
     "T=2, d=4: PE[1, 2] should be sin(0.01) = 0.01, yours is sin(100) = -0.506.",
     _edit(SIN_OK, "theta = 10000.0 ** (-np.arange(0, d, 2) / d)", "theta = 10000.0 ** (np.arange(0, d, 2) / d)"))

_add("f-08-sin-halves-not-pairs", "sinusoidal_positions",
     "You put all the sines in the first half of the features and all the cosines in the second, "
     "np.concatenate([sin, cos], axis=1); the table interleaves them, pair i in features 2i and 2i + 1.",
     "interleave vs concatenate",
     "T=2, d=4: row 0 is [0, 0, 1, 1] instead of [0, 1, 0, 1].",
     _edit(SIN_OK, '''    PE = np.zeros((T, d))
    PE[:, 0::2] = np.sin(angles)
    PE[:, 1::2] = np.cos(angles)
    return PE
''', '''    return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)
'''))

_add("f-08-sin-positions-from-one", "sinusoidal_positions",
     "Your positions run 1..T (np.arange(1, T + 1)); positions count from 0, so row 0 is position 0 with "
     "every angle 0.",
     "range started one step late",
     "T=1, d=2: expected [[0, 1]], yours [[sin 1, cos 1]] = [[0.841, 0.540]].",
     _edit(SIN_OK, "t = np.arange(T)[:, None]", "t = np.arange(1, T + 1)[:, None]"))

_add("f-08-sin-integer-division", "sinusoidal_positions",
     "You wrote the exponent with //, 2 * i // d, which is 0 for every pair (2i < d), so every pair turns at "
     "1 radian per position; use true division, 2 * i / d.",
     "// where / belongs",
     "T=2, d=4: PE[1, 2] should be sin(0.01), yours is sin(1) = 0.841.",
     _edit(SIN_OK, "theta = 10000.0 ** (-np.arange(0, d, 2) / d)         # a row of d/2 frequencies",
           "i = np.arange(d // 2)\n    theta = 10000.0 ** (-(2 * i // d))                  # a row of d/2 frequencies"))

_add("f-08-sin-no-column", "sinusoidal_positions",
     "The positions are a flat np.arange(T), not a column [:, None], so t * theta multiplies entry by entry "
     "instead of making the [T, d/2] outer product (and raises unless T == d/2); make t a column.",
     "[:, None] left out (a broadcasting mistake)",
     "T=2, d=4: every row is the same, [sin 0, cos 0, sin 0.01, cos 0.01]; T=3, d=4 raises.",
     _edit(SIN_OK, "t = np.arange(T)[:, None]", "t = np.arange(T)"))

_add("f-08-sin-log10", "sinusoidal_positions",
     "You wrote the frequencies as np.exp(-np.log10(10000.0) * 2i/d), with the base-10 logarithm: "
     "exp(log10(10000)) is e^4, not 10000. Use np.log, or write 10000.0 ** (-2i/d).",
     "wrong function (log10 for the natural log)",
     "T=2, d=4: PE[1, 2] should be sin(0.01) = 0.0100, yours is sin(e^-2) = 0.135.",
     _edit(SIN_OK, "theta = 10000.0 ** (-np.arange(0, d, 2) / d)",
           "theta = np.exp(-np.log10(10000.0) * np.arange(0, d, 2) / d)"))

# ------------------------------------------------------------------- rope

_ROPE = IMPORTS_08 + ROPE_OK

_add("f-08-rope-clockwise", "rope",
     "Your rotation has its signs swapped, (a cos + b sin, -a sin + b cos): that turns each pair clockwise, "
     "by -φ. Counterclockwise is (a cos φ - b sin φ, a sin φ + b cos φ).",
     "sign flipped (rotation the wrong way)",
     "x = [[1, 0]], positions [1]: expected [cos 1, sin 1] = [0.540, 0.841], yours [0.540, -0.841].",
     _edit(_ROPE, '''    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
''', '''    out[..., 0::2] = a * cos + b * sin
    out[..., 1::2] = -a * sin + b * cos
'''))

_add("f-08-rope-base-hardcoded", "rope",
     "You wrote the frequencies with 10000.0 instead of the base argument, so rope(x, p, base=...) ignores "
     "base; use base ** (-2i/d).",
     "parameter replaced by a hard-coded number",
     "x [1, 4], positions [3], base=100: pair 1 turns by 3/10000^(1/2) instead of 3/100^(1/2).",
     _edit(_ROPE, "theta = base ** (-np.arange(0, d, 2) / d)", "theta = 10000.0 ** (-np.arange(0, d, 2) / d)"))

_add("f-08-rope-halves", "rope",
     "You paired feature i with feature i + d/2 (x[..., :d//2] with x[..., d//2:]), the GPT-NeoX "
     "'rotate_half' convention; this exercise turns neighbouring features, pairs (2i, 2i + 1): "
     "x[..., 0::2] and x[..., 1::2].",
     "wrong pairing of the features",
     "x = [[1, 2, 3, 4]], positions [1]: the turned pairs are (1, 3) and (2, 4) instead of (1, 2) and (3, 4).",
     _edit(_ROPE, '''    a, b = x[..., 0::2], x[..., 1::2]                    # the two features of every pair
    out = np.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out
''', '''    a, b = x[..., : d // 2], x[..., d // 2:]             # the two features of every pair
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)
'''))

_add("f-08-rope-no-column", "rope",
     "positions * theta without [:, None] multiplies entry by entry (and raises unless T == d/2): every row "
     "is turned by the same angles. Make the positions a column, positions[:, None] * theta.",
     "[:, None] left out (a broadcasting mistake)",
     "x [2, 4] random, positions [0, 5]: row 0 should not move, yours turns it (pair 1 by 5/100).",
     _edit(_ROPE, "angles = positions[:, None] * theta", "angles = positions * theta"))

_add("f-08-rope-concatenated-output", "rope",
     "You read the pairs as x[..., 0::2] and x[..., 1::2] but wrote the result back with "
     "np.concatenate([first, second], -1), so the turned first features land in the first half; write "
     "them back interleaved, out[..., 0::2] and out[..., 1::2].",
     "interleave vs concatenate (output)",
     "x = [[1, 2, 3, 4]], positions [0]: expected x unchanged, yours [1, 3, 2, 4].",
     _edit(_ROPE, '''    out = np.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out
''', '''    return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)
'''))

_add("f-08-rope-in-place", "rope",
     "You wrote the turned first features into x itself, x[..., 0::2] = ..., while a = x[..., 0::2] is a "
     "view of x: the second line then reads the new first features instead of the old ones (and the "
     "caller's array is changed too). Write into a new array, out = np.empty_like(x).",
     "in-place change of the input (a view read after it was overwritten)",
     "x = [[1, 0]], positions [1]: expected [cos 1, sin 1] = [0.540, 0.841], yours [0.540, 0.455].",
     _edit(_ROPE, '''    out = np.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out
''', '''    x[..., 0::2] = a * cos - b * sin
    x[..., 1::2] = a * sin + b * cos
    return x
'''))

_add("f-08-rope-index-not-position", "rope",
     "You turned row t by t, np.arange(x.shape[-2]), instead of by positions[t]; the positions need not be "
     "0..T-1 (a KV cache's new queries start later).",
     "argument ignored (row index for the position)",
     "x [2, 4] random, positions [5, 9]: the rows are turned by 0 and 1 times the frequencies instead of 5 and 9.",
     _edit(_ROPE, "angles = positions[:, None] * theta", "angles = np.arange(x.shape[-2])[:, None] * theta"))

_add("f-08-rope-exponent-missing-2", "rope",
     "Your frequencies are base ** (-np.arange(d // 2) / d), i/d in the exponent; the formula is base^(-2i/d). "
     "Use np.arange(0, d, 2) / d.",
     "a factor left out (the 2 in 2i/d)",
     "x [1, 4] random, positions [3]: pair 1 turns by 3/10000^(1/4) = 0.3 instead of 3/100 = 0.03.",
     _edit(_ROPE, "theta = base ** (-np.arange(0, d, 2) / d)", "theta = base ** (-np.arange(d // 2) / d)"))

_add("f-08-rope-mixed-conventions", "rope",
     "You copied the rotate_half form, x * cos + rotate_half(x) * sin, but with each angle repeated for "
     "neighbouring features (np.repeat(angles, 2)); rotate_half pairs feature i with i + d/2, so the angles "
     "do not belong to the features they turn. Keep to pairs: (a cos - b sin, a sin + b cos) on x[..., 0::2], x[..., 1::2].",
     "two conventions mixed",
     "x = [[1, 2, 3, 4]], positions [1]: features 0 and 2 are mixed (feature 0 with pair 0's angle, feature 2 with pair 1's), giving [-1.98, -2.29, 3.01, 4.02] instead of [-1.14, 1.92, 2.96, 4.03]; pair 0's length changes from 2.24 to 3.03.",
     _edit(_ROPE, '''    a, b = x[..., 0::2], x[..., 1::2]                    # the two features of every pair
    out = np.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out
''', '''    cos, sin = np.repeat(cos, 2, axis=-1), np.repeat(sin, 2, axis=-1)   # one angle per feature
    half = d // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * cos + rotated * sin
'''))

# ------------------------------------------------------------------- rope_scores

_add("f-08-scores-keys-at-query-positions", "rope_scores",
     "A copy-paste slip: the keys are turned with positions_q, rope(K, positions_q, base); they sit at "
     "positions_k.",
     "wrong argument passed (positions_q for positions_k)",
     "Q [2, 4], K [2, 4] random, positions_q [10, 11], positions_k [0, 1]: the offsets are 0 and ±1 instead of about 10.",
     _edit(SCORES_OK, "k = rope(K, positions_k, base)", "k = rope(K, positions_q, base)"))

_add("f-08-scores-base-not-passed", "rope_scores",
     "You call rope(Q, positions_q) and rope(K, positions_k) without base, so they always use 10000; pass "
     "base on to both calls.",
     "argument left at its default",
     "Q [2, 4], K [3, 4] random, positions 0.. , base=10: the scores are those of base 10000.",
     _edit(SCORES_OK, '''    q = rope(Q, positions_q, base)
    k = rope(K, positions_k, base)
''', '''    q = rope(Q, positions_q)
    k = rope(K, positions_k)
'''))

_add("f-08-scores-divided-by-d", "rope_scores",
     "You divided the dot products by d instead of sqrt(d); the scores are scaled as in lesson 02, by the "
     "square root of the width.",
     "square root forgotten",
     "Q [2, 4], K [3, 4] random: every score is half the expected one (d = 4, sqrt(d) = 2).",
     _edit(SCORES_OK, "return q @ np.swapaxes(k, -1, -2) / np.sqrt(d)", "return q @ np.swapaxes(k, -1, -2) / d"))

_add("f-08-scores-full-transpose", "rope_scores",
     "k.T on a batched array reverses every axis, so the batch axes no longer line up (it works only for 2-D "
     "K); swap only the last two axes, np.swapaxes(k, -1, -2).",
     "full .T on a batched array",
     "Q [2, 3, 4], K [2, 5, 4] (a batch of 2): it raises instead of returning [2, 3, 5].",
     _edit(SCORES_OK, "return q @ np.swapaxes(k, -1, -2) / np.sqrt(d)", "return q @ k.T / np.sqrt(d)"))

_add("f-08-scores-keys-not-turned", "rope_scores",
     "Only the queries are turned: you score rope(Q) against the raw K. RoPE turns both, the keys by "
     "positions_k, so that the score depends on the offset only.",
     "operand left unchanged (one side of RoPE left out)",
     "Q [2, 4], K [2, 4] random, positions_q = positions_k = [3, 4]: the scores differ (key 0 should be turned by 3).",
     _edit(SCORES_OK, "return q @ np.swapaxes(k, -1, -2) / np.sqrt(d)", "return q @ np.swapaxes(K, -1, -2) / np.sqrt(d)"))

_add("f-08-scores-keys-by-queries", "rope_scores",
     "You computed k @ qᵀ, the keys against the queries, which gives [..., T_k, T_q]; the result is queries "
     "by keys, q @ kᵀ.",
     "operands swapped",
     "Q [2, 4], K [3, 4]: the result has shape (3, 2) instead of (2, 3).",
     _edit(SCORES_OK, "return q @ np.swapaxes(k, -1, -2) / np.sqrt(d)", "return k @ np.swapaxes(q, -1, -2) / np.sqrt(d)"))

_add("f-08-scores-keys-turned-back", "rope_scores",
     "You turned the keys by minus their positions, rope(K, -positions_k), reasoning that the score should "
     "see the difference; the rotations already leave only n - m in the dot product when both are turned "
     "forward. With the minus the score depends on m + n.",
     "sign flipped (an argument negated)",
     "Q [2, 4], K [2, 4] random, positions [1, 2] for both: the scores differ from rope(Q) @ rope(K)ᵀ / 2.",
     _edit(SCORES_OK, "k = rope(K, positions_k, base)", "k = rope(K, -positions_k, base)"))
