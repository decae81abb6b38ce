"""Set e, lessons 05 to 08: wrong answers written from the student notebooks alone.

Each answer's ``source`` is what a learner types into the answer cell(s): the imports, the
given lines, any graded helpers it calls (written correctly unless the mistake is in
them), and the graded name with one mistake (two where said). The sources are built
from shared pieces below, but each ``source`` string is complete and runs on its own.
"""
from typing import NamedTuple


class Wrong(NamedTuple):
    id: str          # short unique id
    exercise: str    # the graded name, exactly as in the notebook's check("name", ...) cell
    cause: str       # the true cause, as a teacher would say it to the learner
    kind: str        # a short category
    wrong_on: str    # one input on which it gives a wrong result, and what goes wrong
    source: str      # the whole answer cell(s), runnable on its own


WRONG = []

# =============================================================================== lesson 05

IMP05 = '''import math

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

SPLIT_OK = SPLIT_HEAD + '''    d_head = d_model // n_heads
    return x.reshape(B, T, n_heads, d_head).transpose(1, 2)
'''

MERGE_HEAD = '''

def merge_heads(x):
    """[B, h, T, d_head] -> [B, T, h*d_head]: the heads of each token side by side."""
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
'''

MERGE_OK = MERGE_HEAD + '''    return x.transpose(1, 2).reshape(B, T, h * d_head)
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

MHA_CLASS_HEAD = '''

class MultiHeadAttention(nn.Module):
    """Multi-head attention with four nn.Linear(d_model, d_model) layers w_q, w_k, w_v, w_o."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        if n_heads <= 0 or d_model % n_heads:
            raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
'''

MHA_INIT_OK = '''        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
'''

MHA_FWD_HEAD = '''
    def forward(self, query, key, value, mask=None):
        """query [B, T_q, d_model]; key, value [B, T_k, d_model]; mask True = may attend.
        Returns (output [B, T_q, d_model], weights [B, h, T_q, T_k])."""
        B, T_q, T_k = attention_shapes(query, key, value, self.d_model)
        mask = as_attention_mask(mask, B, self.n_heads, T_q, T_k)
'''

MHA_FWD_BODY_OK = '''        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = merge_heads(weights @ v)
        return self.w_o(out), weights
'''


def mha_source(init=MHA_INIT_OK, body=MHA_FWD_BODY_OK, split=SPLIT_OK, merge=MERGE_OK):
    return IMP05 + split + merge + MHA_GIVEN + MHA_CLASS_HEAD + init + MHA_FWD_HEAD + body


def mha_body(old, new):
    assert old in MHA_FWD_BODY_OK, old
    return MHA_FWD_BODY_OK.replace(old, new)


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

HOBO_OK = '''    for i in range(mha.n_heads):
        rows = slice(i * d_head, (i + 1) * d_head)
        q = x @ mha.w_q.weight[rows].T + mha.w_q.bias[rows]
        k = x @ mha.w_k.weight[rows].T + mha.w_k.bias[rows]
        v = x @ mha.w_v.weight[rows].T + mha.w_v.bias[rows]
        scores = q @ k.transpose(-2, -1) / math.sqrt(d_head)
        weights = torch.softmax(scores, dim=-1)
        outputs.append(weights @ v)
        maps.append(weights)
    output = mha.w_o(torch.cat(outputs, dim=-1))
    return output, torch.stack(maps, dim=1)
'''


def hobo(old, new):
    assert old in HOBO_OK, old
    return IMP05 + HOBO_HEAD + HOBO_OK.replace(old, new)


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

WRONG += [
    # ------------------------------------------------------------------ split_heads
    Wrong(
        id="e-05-split-heads-reshape-no-transpose",
        exercise="split_heads",
        cause="You reshaped straight to [B, h, T, d_head], which re-reads the memory so that "
              "a head gets consecutive features of several tokens. Cut each token's features "
              "first, x.reshape(B, T, h, d_head), then move the head axis with .transpose(1, 2).",
        kind="reshape where a transpose is needed",
        wrong_on="x of shape [1, 2, 4] with n_heads=2: head 0 gets all 4 features of token 0 "
                 "instead of features 0:2 of tokens 0 and 1.",
        source=IMP05 + SPLIT_HEAD + '''    d_head = d_model // n_heads
    return x.reshape(B, n_heads, T, d_head)
''',
    ),
    Wrong(
        id="e-05-split-heads-strided-features",
        exercise="split_heads",
        cause="You cut the features as x.reshape(B, T, d_head, n_heads) and moved the last "
              "axis forward, so head i gets every h-th feature (i, i+h, i+2h, ...) instead of "
              "the block i*d_head:(i+1)*d_head. Reshape to (B, T, n_heads, d_head) and "
              "transpose axes 1 and 2.",
        kind="heads cut in the wrong order (interleaved features)",
        wrong_on="x [1, 1, 4] = [0, 1, 2, 3] with n_heads=2: head 0 gets [0, 2] instead of [0, 1].",
        source=IMP05 + SPLIT_HEAD + '''    d_head = d_model // n_heads
    return x.reshape(B, T, d_head, n_heads).permute(0, 3, 1, 2)
''',
    ),
    Wrong(
        id="e-05-split-heads-float-d-head",
        exercise="split_heads",
        cause="d_head = d_model / n_heads is a float, and reshape refuses a float size, so the "
              "function raises a TypeError on every input. Use integer division, "
              "d_model // n_heads.",
        kind="/ where // belongs",
        wrong_on="any valid input, e.g. x [1, 2, 4] with n_heads=2: TypeError instead of a "
                 "[1, 2, 2, 2] tensor.",
        source=IMP05 + SPLIT_HEAD + '''    d_head = d_model / n_heads
    return x.reshape(B, T, n_heads, d_head).transpose(1, 2)
''',
    ),
    Wrong(
        id="e-05-split-heads-stack-head-axis-first",
        exercise="split_heads",
        cause="torch.stack(x.chunk(n_heads, dim=-1)) stacks the heads on a new axis 0, giving "
              "[h, B, T, d_head]. The head axis belongs after the batch axis: stack with dim=1.",
        kind="new axis inserted at the wrong place",
        wrong_on="x [2, 3, 4] with n_heads=2: returns shape [2, 2, 3, 2] ordered [h, B, ...], so "
                 "entry [0, 1] is batch 1 head 0 instead of batch 0 head 1.",
        source=IMP05 + SPLIT_HEAD + '''    return torch.stack(x.chunk(n_heads, dim=-1))
''',
    ),
    # ------------------------------------------------------------------ merge_heads
    Wrong(
        id="e-05-merge-heads-no-transpose",
        exercise="merge_heads",
        cause="You reshaped [B, h, T, d_head] straight to [B, T, h*d_head] without first moving "
              "the head axis behind the token axis, so each output row mixes several tokens of "
              "one head. Do x.transpose(1, 2) before the reshape.",
        kind="transpose left out before a reshape",
        wrong_on="x [1, 2, 2, 1] (h=2, T=2): token 0's row holds head 0's two tokens instead of "
                 "token 0's two heads.",
        source=IMP05 + MERGE_HEAD + '''    return x.reshape(B, T, h * d_head)
''',
    ),
    Wrong(
        id="e-05-merge-heads-permute-interleaves",
        exercise="merge_heads",
        cause="permute(0, 2, 3, 1) puts d_head before h, so after the reshape the features are "
              "interleaved (feature 0 of every head, then feature 1 ...) instead of head 0's "
              "block first. Use transpose(1, 2), which gives [B, T, h, d_head].",
        kind="axes permuted in the wrong order",
        wrong_on="x [1, 2, 1, 2] with head 0 = [0, 1], head 1 = [2, 3]: returns [0, 2, 1, 3] "
                 "instead of [0, 1, 2, 3].",
        source=IMP05 + MERGE_HEAD + '''    return x.permute(0, 2, 3, 1).reshape(B, T, h * d_head)
''',
    ),
    Wrong(
        id="e-05-merge-heads-index-token-axis",
        exercise="merge_heads",
        cause="In the list comprehension you took x[:, :, i] (token i of every head) where "
              "head i is x[:, i]; the concatenation then joins tokens, not heads. Index the "
              "head axis, axis 1.",
        kind="indexed the wrong axis",
        wrong_on="x [1, 2, 3, 2] (h=2, T=3): returns shape [1, 2, 4] built from tokens 0 and 1 "
                 "instead of [1, 3, 4].",
        source=IMP05 + MERGE_HEAD + '''    return torch.cat([x[:, :, i] for i in range(h)], dim=-1)
''',
    ),
    # ------------------------------------------------------------------ MultiHeadAttention
    Wrong(
        id="e-05-mha-scale-sqrt-d-model",
        exercise="MultiHeadAttention",
        cause="The scores are divided by sqrt(self.d_model); each head's dot products are sums "
              "of d_head terms, so the scale is sqrt(self.d_head).",
        kind="scale of the wrong quantity",
        wrong_on="d_model=8, n_heads=2, random x [2, 3, 8] (self-attention): the scores are halved, "
                 "so the weights are flatter than torch's and the output differs.",
        source=mha_source(body=mha_body("math.sqrt(self.d_head)", "math.sqrt(self.d_model)")),
    ),
    Wrong(
        id="e-05-mha-mask-polarity-inverted",
        exercise="MultiHeadAttention",
        cause="masked_fill(mask, -inf) blanks the keys that MAY be attended (True = may "
              "attend in this course); fill where the mask is False: masked_fill(~mask, -inf).",
        kind="mask inverted",
        wrong_on="a key mask [[True, True, False]] on T_k=3: the weights fall only on the padding "
                 "key instead of the two real keys (and a row with no padding gets NaN).",
        source=mha_source(body=mha_body("masked_fill(~mask,", "masked_fill(mask,")),
    ),
    Wrong(
        id="e-05-mha-values-from-key",
        exercise="MultiHeadAttention",
        cause="The values are computed as self.w_v(key): in self-attention key and value are the "
              "same tensor, so it looks right, but the values must come from the value argument, "
              "self.w_v(value).",
        kind="wrong argument passed (key for value)",
        wrong_on="cross-attention with key != value, e.g. query [1, 2, 8], key and value two "
                 "different [1, 4, 8] tensors: the output averages projected keys.",
        source=mha_source(body=mha_body("self.w_v(value)", "self.w_v(key)")),
    ),
    Wrong(
        id="e-05-mha-weights-averaged-over-heads",
        exercise="MultiHeadAttention",
        cause="You return weights.mean(dim=1), the heads' average (what nn.MultiheadAttention "
              "returns by default); the exercise asks for every head's map, [B, h, T_q, T_k].",
        kind="extra reduction over the head axis",
        wrong_on="d_model=8, n_heads=2, self-attention on x [2, 3, 8]: weights of shape [2, 3, 3] "
                 "instead of [2, 2, 3, 3].",
        source=mha_source(body=mha_body("return self.w_o(out), weights",
                                        "return self.w_o(out), weights.mean(dim=1)")),
    ),
    Wrong(
        id="e-05-mha-softmax-over-queries",
        exercise="MultiHeadAttention",
        cause="torch.softmax(scores, dim=-2) normalises each key's column over the queries; "
              "each query's weights over the keys must sum to 1, so take the softmax over the "
              "last axis, dim=-1.",
        kind="softmax over the wrong axis",
        wrong_on="self-attention on x [2, 3, 8], d_model=8, n_heads=2: the rows of weights do not "
                 "sum to 1 (the columns do).",
        source=mha_source(body=mha_body("torch.softmax(scores, dim=-1)",
                                        "torch.softmax(scores, dim=-2)")),
    ),
    Wrong(
        id="e-05-mha-output-projection-skipped",
        exercise="MultiHeadAttention",
        cause="forward returns the merged heads without passing them through self.w_o; the "
              "last step is the output projection, return self.w_o(out), weights.",
        kind="final projection left out",
        wrong_on="any input, e.g. self-attention on x [2, 3, 8] with d_model=8, n_heads=2: the "
                 "output is the concatenated heads, missing w_o's weight and bias.",
        source=mha_source(body=mha_body("return self.w_o(out), weights", "return out, weights")),
    ),
    Wrong(
        id="e-05-mha-mask-fills-zero",
        exercise="MultiHeadAttention",
        cause="Masked scores are set to 0 instead of -inf; e^0 = 1, so a masked key still gets "
              "weight. Fill with float('-inf') so that the softmax gives it exactly 0.",
        kind="0 where -inf belongs",
        wrong_on="a key mask [[True, True, False]]: the padding key gets a positive weight.",
        source=mha_source(body=mha_body('scores.masked_fill(~mask, float("-inf"))',
                                        "scores.masked_fill(~mask, 0.0)")),
    ),
    Wrong(
        id="e-05-mha-mask-after-softmax",
        exercise="MultiHeadAttention",
        cause="You take the softmax first and then zero the masked weights, so the remaining "
              "weights no longer sum to 1. Put -inf into the scores before the softmax.",
        kind="mask applied after the softmax",
        wrong_on="a key mask [[True, True, False]]: the real keys' weights sum to less than 1.",
        source=mha_source(body='''        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights.masked_fill(~mask, 0.0)
        out = merge_heads(weights @ v)
        return self.w_o(out), weights
'''),
    ),
    Wrong(
        id="e-05-mha-linear-without-bias",
        exercise="MultiHeadAttention",
        cause="The four layers are created with bias=False; the exercise (like "
              "nn.MultiheadAttention) has biases, so loaded biases have nowhere to go and the "
              "output misses them. Use nn.Linear(d_model, d_model) with its default bias.",
        kind="layer created with the wrong option",
        wrong_on="weights and non-zero biases loaded from nn.MultiheadAttention(8, 2): the "
                 "output lacks the biases (w_q.bias is None).",
        source=mha_source(init='''        self.w_q = nn.Linear(d_model, d_model, bias=False)
        self.w_k = nn.Linear(d_model, d_model, bias=False)
        self.w_v = nn.Linear(d_model, d_model, bias=False)
        self.w_o = nn.Linear(d_model, d_model, bias=False)
'''),
    ),
    # ------------------------------------------------------------------ copy_from_torch
    Wrong(
        id="e-05-copy-transposed-weights",
        exercise="copy_from_torch",
        cause="You copied in_proj_weight's blocks and out_proj.weight transposed (.T), as if "
              "they were lesson 02's [in, out] matrices; both torch and nn.Linear store weights "
              "as [out, in], so copy the blocks as they are.",
        kind="transpose added",
        wrong_on="nn.MultiheadAttention(8, 2) with random weights: ours gets W.T everywhere and "
                 "its output differs from torch's.",
        source=IMP05 + COPY_HEAD + '''    W, b = theirs.in_proj_weight, theirs.in_proj_bias
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
        id="e-05-copy-key-value-blocks-swapped",
        exercise="copy_from_torch",
        cause="Rows d:2d of in_proj_weight (and of in_proj_bias) are the KEY projection and rows "
              "2d:3d the VALUE projection; you copied them the other way round.",
        kind="two slices swapped",
        wrong_on="nn.MultiheadAttention(8, 2) with random weights: w_k holds the value "
                 "projection, and the outputs differ from torch's.",
        source=IMP05 + COPY_HEAD + '''    W, b = theirs.in_proj_weight, theirs.in_proj_bias
    with torch.no_grad():
        ours.w_q.weight.copy_(W[:d])
        ours.w_v.weight.copy_(W[d:2 * d])
        ours.w_k.weight.copy_(W[2 * d:])
        ours.w_q.bias.copy_(b[:d])
        ours.w_v.bias.copy_(b[d:2 * d])
        ours.w_k.bias.copy_(b[2 * d:])
        ours.w_o.weight.copy_(theirs.out_proj.weight)
        ours.w_o.bias.copy_(theirs.out_proj.bias)
    return ours
''',
    ),
    Wrong(
        id="e-05-copy-biases-forgotten",
        exercise="copy_from_torch",
        cause="Only the weights are copied; ours keeps its own random biases. Copy "
              "in_proj_bias's three blocks into w_q.bias, w_k.bias, w_v.bias and "
              "out_proj.bias into w_o.bias as well.",
        kind="part of the state left out",
        wrong_on="nn.MultiheadAttention(8, 2) with random biases into a fresh "
                 "MultiHeadAttention(8, 2): ours keeps its own biases, so the outputs differ.",
        source=IMP05 + COPY_HEAD + '''    W = theirs.in_proj_weight
    with torch.no_grad():
        ours.w_q.weight.copy_(W[:d])
        ours.w_k.weight.copy_(W[d:2 * d])
        ours.w_v.weight.copy_(W[2 * d:])
        ours.w_o.weight.copy_(theirs.out_proj.weight)
    return ours
''',
    ),
    Wrong(
        id="e-05-copy-new-parameters",
        exercise="copy_from_torch",
        cause="Assigning new nn.Parameter objects gives the right numbers but replaces ours's "
              "parameters, so an optimizer made before the copy still holds the old ones. The "
              "exercise asks to copy into the existing parameters in place, with .copy_() "
              "under torch.no_grad().",
        kind="stated rule broken (parameters replaced, not copied in place)",
        wrong_on="any call: after it, ours.w_q.weight is a different object from the one "
                 "before the call.",
        source=IMP05 + COPY_HEAD + '''    W, b = theirs.in_proj_weight.detach(), theirs.in_proj_bias.detach()
    ours.w_q.weight = nn.Parameter(W[:d].clone())
    ours.w_k.weight = nn.Parameter(W[d:2 * d].clone())
    ours.w_v.weight = nn.Parameter(W[2 * d:].clone())
    ours.w_q.bias = nn.Parameter(b[:d].clone())
    ours.w_k.bias = nn.Parameter(b[d:2 * d].clone())
    ours.w_v.bias = nn.Parameter(b[2 * d:].clone())
    ours.w_o.weight = nn.Parameter(theirs.out_proj.weight.detach().clone())
    ours.w_o.bias = nn.Parameter(theirs.out_proj.bias.detach().clone())
    return ours
''',
    ),
    # ------------------------------------------------------------------ heads_one_by_one
    Wrong(
        id="e-05-hobo-columns-not-rows",
        exercise="heads_one_by_one",
        cause="You took head i's COLUMNS of each weight, weight[:, rows], and multiplied without "
              "the transpose, as with lesson 02's [in, out] W_q. nn.Linear stores [out, in]: "
              "head i's features are ROWS, weight[rows], used as x @ weight[rows].T.",
        kind="rows and columns confused",
        wrong_on="mha = MultiHeadAttention(8, 2), x [1, 3, 8]: each head projects with the wrong "
                 "block of the weights, so output and maps differ.",
        source=hobo('''        q = x @ mha.w_q.weight[rows].T + mha.w_q.bias[rows]
        k = x @ mha.w_k.weight[rows].T + mha.w_k.bias[rows]
        v = x @ mha.w_v.weight[rows].T + mha.w_v.bias[rows]''',
                    '''        q = x @ mha.w_q.weight[:, rows] + mha.w_q.bias[rows]
        k = x @ mha.w_k.weight[:, rows] + mha.w_k.bias[rows]
        v = x @ mha.w_v.weight[:, rows] + mha.w_v.bias[rows]'''),
    ),
    Wrong(
        id="e-05-hobo-maps-stacked-first",
        exercise="heads_one_by_one",
        cause="torch.stack(maps) stacks the heads on axis 0, [h, B, T, T]; the head axis belongs "
              "after the batch axis: torch.stack(maps, dim=1).",
        kind="stacked along the wrong axis",
        wrong_on="MultiHeadAttention(8, 2) on x [1, 3, 8]: weights of shape [2, 1, 3, 3] (head, "
                 "batch) instead of [1, 2, 3, 3].",
        source=hobo("torch.stack(maps, dim=1)", "torch.stack(maps)"),
    ),
    Wrong(
        id="e-05-hobo-appends-scores",
        exercise="heads_one_by_one",
        cause="maps.append(scores) keeps the scaled scores, before the softmax; the maps to "
              "return are the attention weights, maps.append(weights).",
        kind="returned the wrong variable",
        wrong_on="any input: the output is right but the returned maps are raw scores whose "
                 "rows do not sum to 1.",
        source=hobo("maps.append(weights)", "maps.append(scores)"),
    ),
    Wrong(
        id="e-05-hobo-value-bias-from-key",
        exercise="heads_one_by_one",
        cause="The value line adds mha.w_k.bias[rows] (copied from the key line); the values "
              "take w_v's bias, mha.w_v.bias[rows].",
        kind="copy-paste slip (wrong layer's bias)",
        wrong_on="a module whose w_k and w_v biases differ (any random one): the output differs; "
                 "the maps are right.",
        source=hobo("v = x @ mha.w_v.weight[rows].T + mha.w_v.bias[rows]",
                    "v = x @ mha.w_v.weight[rows].T + mha.w_k.bias[rows]"),
    ),
    # ------------------------------------------------------------------ mha_parameter_count
    Wrong(
        id="e-05-count-no-biases",
        exercise="mha_parameter_count",
        cause="You counted only the four d_model x d_model weight matrices; each nn.Linear also "
              "has d_model biases, so add 4 * d_model.",
        kind="term left out",
        wrong_on="d_model=8, n_heads=2: returns 256 instead of 288.",
        source=IMP05 + COUNT_HEAD + '''    return 4 * d_model * d_model
''',
    ),
    Wrong(
        id="e-05-count-per-head-squares",
        exercise="mha_parameter_count",
        cause="You gave each head its own small d_head x d_head matrices; the layers are "
              "d_model x d_model and every head reads d_head whole rows of them (d_head x "
              "d_model each). The count is 4 * d_model * d_model + 4 * d_model whatever n_heads.",
        kind="wrong formula (per-head blocks)",
        wrong_on="d_model=8, n_heads=2: returns 2*4*16 + 32 = 160 instead of 288.",
        source=IMP05 + COUNT_HEAD + '''    d_head = d_model // n_heads
    return n_heads * 4 * d_head * d_head + 4 * d_model
''',
    ),
    Wrong(
        id="e-05-count-forgets-output-layer",
        exercise="mha_parameter_count",
        cause="Only w_q, w_k and w_v are counted; the module has a fourth layer, w_o, with "
              "another d_model * d_model + d_model numbers.",
        kind="factor off (3 for 4)",
        wrong_on="d_model=8, n_heads=2: returns 216 instead of 288.",
        source=IMP05 + COUNT_HEAD + '''    return 3 * (d_model * d_model + d_model)
''',
    ),
    # ------------------------------------------------------------------ value_down_up
    Wrong(
        id="e-05-vdu-up-from-rows",
        exercise="value_down_up",
        cause="up is taken from ROWS features of w_o.weight; head i's numbers enter w_o as INPUT "
              "features, which are COLUMNS of the [out, in] weight: up = "
              "mha.w_o.weight[:, features].T.",
        kind="rows and columns confused",
        wrong_on="MultiHeadAttention(8, 2), head 0: up is rows 0:4 of w_o.weight instead of the "
                 "transpose of columns 0:4 (the same shape, other numbers).",
        source=IMP05 + VDU_HEAD + '''    down = mha.w_v.weight[features].T
    up = mha.w_o.weight[features]
    return down, up
''',
    ),
    Wrong(
        id="e-05-vdu-down-from-columns",
        exercise="value_down_up",
        cause="down is taken as COLUMNS of w_v.weight; head i's values are w_v's OUTPUT "
              "features, which are ROWS of the [out, in] weight: down = "
              "mha.w_v.weight[features].T.",
        kind="rows and columns confused",
        wrong_on="MultiHeadAttention(8, 2), head 1: down is columns 4:8 of w_v.weight "
                 "instead of rows 4:8 transposed.",
        source=IMP05 + VDU_HEAD + '''    down = mha.w_v.weight[:, features]
    up = mha.w_o.weight[:, features].T
    return down, up
''',
    ),
    Wrong(
        id="e-05-vdu-no-transposes",
        exercise="value_down_up",
        cause="The right slices, but neither is transposed: nn.Linear's weight is [out, in], "
              "so in the row convention down is w_v.weight[features].T [d_model, d_head] and up "
              "is w_o.weight[:, features].T [d_head, d_model].",
        kind="transpose left out",
        wrong_on="MultiHeadAttention(8, 2), head 0: down has shape [4, 8] and up [8, 4] instead "
                 "of [8, 4] and [4, 8].",
        source=IMP05 + VDU_HEAD + '''    down = mha.w_v.weight[features]
    up = mha.w_o.weight[:, features]
    return down, up
''',
    ),
    Wrong(
        id="e-05-vdu-bias-added-to-up",
        exercise="value_down_up",
        cause="You added w_o's bias to every row of up; the bias is added once to the output, "
              "not per head and not per feature, and the exercise leaves the biases aside: up "
              "is mha.w_o.weight[:, features].T alone.",
        kind="extra term added",
        wrong_on="any module with a non-zero w_o.bias, e.g. MultiHeadAttention(8, 2): each row "
                 "of up is shifted by the bias.",
        source=IMP05 + VDU_HEAD + '''    down = mha.w_v.weight[features].T
    up = mha.w_o.weight[:, features].T + mha.w_o.bias
    return down, up
''',
    ),
]

# =============================================================================== lesson 06

IMP06 = '''import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    MODEL, TASK, LEARNING_RATE, SKIPS, budget, configure_torch, progress,
    as_stream, as_tokens, as_hidden, check_block_sizes, check_model_sizes,
    check_steps_and_seed, check_depths, layer_outputs, gradient_profile, run_skip_variants,
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
        return x + m if self.residual else m
'''

BLOCK_OK = BLOCK_HEAD + BLOCK_BODY_OK

TINY_INIT_HEAD = '''

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
            [Block(d_model, n_heads, d_ff, residual) for _ in range(n_layers)])
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


def tiny_class(blocks=TINY_BLOCKS_OK, fwd=TINY_FWD_OK):
    return TINY_INIT_HEAD + blocks + TINY_MID + fwd


SIM_HEAD = '''

def token_similarity(h):
    """Mean cosine similarity between distinct tokens of each sequence, averaged over the
    batch. h: [..., T, d] with T >= 2 -> a Python float."""
    h = as_hidden(h)    # a float tensor; ValueError if a sequence has fewer than two tokens
'''

SIM_BODY_OK = '''    unit = h / h.norm(dim=-1, keepdim=True)
    cos = unit @ unit.transpose(-1, -2)                      # [..., T, T]
    T = h.shape[-2]
    off_diagonal = cos.sum(dim=(-1, -2)) - cos.diagonal(dim1=-2, dim2=-1).sum(dim=-1)
    return (off_diagonal / (T * (T - 1))).mean().item()
'''

SIM_OK = SIM_HEAD + SIM_BODY_OK

TRAIN_HEAD = '''

def train(model, task, steps, seed):
    """Train model in place; return the loss of every step, as a list of floats."""
    steps, seed = check_steps_and_seed(steps, seed)
    generator = torch.Generator().manual_seed(seed)        # every batch comes from here
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    model.train()
    losses = []
'''

TRAIN_BODY_OK = '''    for _ in progress(range(steps), "training"):
        tokens, targets = task.sample(generator)
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
'''

TRAIN_OK = TRAIN_HEAD + TRAIN_BODY_OK


def train_src(old, new):
    assert old in TRAIN_BODY_OK, old
    return IMP06 + TRAIN_HEAD + TRAIN_BODY_OK.replace(old, new)


ABL_HEAD = '''

def run_ablation(depths, steps, seed):
    """The depth sweep: one row (a dict) per run, two runs per depth."""
    depths = check_depths(depths)
    steps, seed = check_steps_and_seed(steps, seed)
    probe, _ = TASK.sample(torch.Generator().manual_seed(seed))    # fixed tokens to measure on
    rows = []
'''

ABL_BODY_OK = '''    for depth in depths:
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


def ablation_src(old, new):
    assert old in ABL_BODY_OK, old
    return (IMP06 + BLOCK_OK + tiny_class() + SIM_OK + TRAIN_OK + ABL_HEAD
            + ABL_BODY_OK.replace(old, new))


def block_src(body):
    return IMP06 + BLOCK_HEAD + body


WRONG += [
    # ------------------------------------------------------------------ Block
    Wrong(
        id="e-06-block-post-norm",
        exercise="Block",
        cause="You normalise after the addition, x = ln1(x + attn(x)) (a post-norm block), so "
              "attention reads the raw stream and the stream itself is normalised. In a pre-norm "
              "block the norm sits inside the branch: x = x + attn(ln1(x)), x = x + mlp(ln2(x)).",
        kind="norm in the wrong place",
        wrong_on="Block(8, 2, 16) with random weights, x [2, 3, 8], residual=True: the output is "
                 "a LayerNorm of the sum, not the sum.",
        source=block_src('''        if self.residual:
            a = self.attn(x, x, x, need_weights=False)[0]
            x = self.ln1(x + a)
            return self.ln2(x + self.mlp(x))
        h = self.ln1(x)
        x = self.attn(h, h, h, need_weights=False)[0]
        return self.mlp(self.ln2(x))
'''),
    ),
    Wrong(
        id="e-06-block-skip-carries-normed",
        exercise="Block",
        cause="You overwrite x with ln1(x) and then add attention to it, so the skip carries the "
              "normalised stream instead of the stream itself. Keep x, and add: "
              "x = x + attn(ln1(x)) (the same for the MLP).",
        kind="residual adds the wrong tensor",
        wrong_on="Block(8, 2, 16), x [2, 3, 8] with residual=True: the skip adds ln1(x), so the "
                 "output differs from x + attn(ln1(x)) + ...",
        source=block_src('''        x = self.ln1(x)
        a = self.attn(x, x, x, need_weights=False)[0]
        x = x + a if self.residual else a
        x = self.ln2(x)
        m = self.mlp(x)
        return x + m if self.residual else m
'''),
    ),
    Wrong(
        id="e-06-block-parallel-branches",
        exercise="Block",
        cause="The MLP reads ln2 of the block's INPUT (both branches computed side by side) "
              "rather than of the stream after the attention update. Compute x = x + "
              "attn(ln1(x)) first, then x + mlp(ln2(x)) on that new x.",
        kind="statement order (stale variable read)",
        wrong_on="Block(8, 2, 16), x [2, 3, 8], residual=True: the MLP never sees attention's "
                 "output.",
        source=block_src('''        h = self.ln1(x)
        a = self.attn(h, h, h, need_weights=False)[0]
        m = self.mlp(self.ln2(x))
        if self.residual:
            return x + a + m
        return self.mlp(self.ln2(a))
'''),
    ),
    Wrong(
        id="e-06-block-no-residual-keeps-mlp-skip",
        exercise="Block",
        cause="With residual=False you dropped the attention skip but kept the MLP's: "
              "x = mlp(ln2(x)) without '+ x'. Both additions go when residual is False.",
        kind="one branch of a flag left unchanged",
        wrong_on="Block(8, 2, 16, residual=False), x [2, 3, 8]: returns attn_out + mlp(...) "
                 "instead of mlp(...) alone.",
        source=block_src('''        h = self.ln1(x)
        a = self.attn(h, h, h, need_weights=False)[0]
        x = x + a if self.residual else a
        return x + self.mlp(self.ln2(x))
'''),
    ),
    Wrong(
        id="e-06-block-ln1-used-twice",
        exercise="Block",
        cause="Both sublayers read self.ln1; the MLP's norm is self.ln2, which has its own "
              "learned weight and bias.",
        kind="wrong layer used (copy-paste)",
        wrong_on="Block(8, 2, 16) with ln1 and ln2 holding different random weights: the MLP's "
                 "input differs.",
        source=block_src(BLOCK_BODY_OK.replace("self.mlp(self.ln2(x))", "self.mlp(self.ln1(x))")),
    ),
    # ------------------------------------------------------------------ TinyTransformer
    Wrong(
        id="e-06-tiny-final-norm-skipped",
        exercise="TinyTransformer",
        cause="forward sends the last block's output straight to the head; the stream is "
              "normalised once more first: self.head(self.ln_f(x)).",
        kind="layer left out",
        wrong_on="a 1-layer TinyTransformer (vocab 8, d_model 16, 2 heads, d_ff 32, seq_len 8) on "
                 "random tokens [2, 8]: the logits lack the final LayerNorm.",
        source=IMP06 + BLOCK_OK + tiny_class(fwd=TINY_FWD_OK.replace("self.head(self.ln_f(x))",
                                                                     "self.head(x)")),
    ),
    Wrong(
        id="e-06-tiny-positions-from-token-ids",
        exercise="TinyTransformer",
        cause="self.pos_emb(tokens) looks the positions up by token id; position t's vector is "
              "pos_emb(torch.arange(T)).",
        kind="wrong index tensor",
        wrong_on="a 1-layer model on random tokens [2, 8]: every token gets the position vector "
                 "of its id (two equal tokens get the same one) instead of its place's.",
        source=IMP06 + BLOCK_OK + tiny_class(fwd=TINY_FWD_OK.replace(
            "self.pos_emb(torch.arange(T, device=tokens.device))", "self.pos_emb(tokens)")),
    ),
    Wrong(
        id="e-06-tiny-residual-flag-not-passed",
        exercise="TinyTransformer",
        cause="The Blocks are built as Block(d_model, n_heads, d_ff), so they take the default "
              "residual=True and a model built with residual=False still has its skips. Pass "
              "the flag: Block(d_model, n_heads, d_ff, residual).",
        kind="argument left at its default",
        wrong_on="TinyTransformer(..., residual=False): its blocks add their skips, so the "
                 "logits equal the residual model's.",
        source=IMP06 + BLOCK_OK + tiny_class(blocks='''        self.blocks = nn.ModuleList(
            [Block(d_model, n_heads, d_ff) for _ in range(n_layers)])
'''),
    ),
    Wrong(
        id="e-06-tiny-one-block-repeated",
        exercise="TinyTransformer",
        cause="[Block(...)] * n_layers repeats ONE block object n_layers times, so all layers "
              "share their weights. Build a new Block per layer with a list comprehension.",
        kind="list multiplication shares one object",
        wrong_on="n_layers=2 with the two blocks loaded with different weights: both layers use "
                 "the last loaded weights.",
        source=IMP06 + BLOCK_OK + tiny_class(blocks='''        self.blocks = nn.ModuleList([Block(d_model, n_heads, d_ff, residual)] * n_layers)
'''),
    ),
    Wrong(
        id="e-06-tiny-embedding-scaled",
        exercise="TinyTransformer",
        cause="You multiply the token embeddings by sqrt(d_model), as in Attention Is All You "
              "Need; this model adds the two embeddings as they are: tok_emb(tokens) + "
              "pos_emb(positions).",
        kind="extra factor",
        wrong_on="a 1-layer model with d_model=16 on random tokens [2, 8]: the token part of the "
                 "stream is 4 times too large.",
        source=IMP06 + BLOCK_OK + tiny_class(fwd=TINY_FWD_OK.replace(
            "self.tok_emb(tokens) +", "self.tok_emb(tokens) * self.tok_emb.embedding_dim ** 0.5 +")),
    ),
    # ------------------------------------------------------------------ token_similarity
    Wrong(
        id="e-06-sim-diagonal-included",
        exercise="token_similarity",
        cause="You averaged all T*T cosines, including each token with itself (always 1). "
              "Leave the diagonal out and divide by T*(T-1).",
        kind="diagonal not excluded",
        wrong_on="two orthogonal tokens [[1, 0], [0, 1]]: returns 0.5 instead of 0.",
        source=IMP06 + SIM_HEAD + '''    unit = h / h.norm(dim=-1, keepdim=True)
    cos = unit @ unit.transpose(-1, -2)
    return cos.mean().item()
''',
    ),
    Wrong(
        id="e-06-sim-normalised-over-tokens",
        exercise="token_similarity",
        cause="h.norm(dim=-2) takes each feature's length over the tokens; cosine similarity "
              "divides each TOKEN by its own length, the norm over the features, dim=-1.",
        kind="reduction over the wrong axis",
        wrong_on="h = [[3, 0], [0, 1], [1, 1]]: the rows are not unit vectors, so it returns "
                 "0.267 instead of 0.471.",
        source=IMP06 + SIM_HEAD + SIM_BODY_OK.replace("h.norm(dim=-1, keepdim=True)",
                                                      "h.norm(dim=-2, keepdim=True)"),
    ),
    Wrong(
        id="e-06-sim-feature-gram",
        exercise="token_similarity",
        cause="unit.transpose(-1, -2) @ unit is the [d, d] product of the features with each "
              "other; the token-to-token cosines are unit @ unit.transpose(-1, -2), [T, T].",
        kind="operands of a product swapped",
        wrong_on="h = [[3, 0], [0, 1], [1, 1]]: returns 0.167, the off-diagonal mean of a 2 x 2 "
                 "feature matrix, instead of 0.471.",
        source=IMP06 + SIM_HEAD + SIM_BODY_OK.replace("unit @ unit.transpose(-1, -2)",
                                                      "unit.transpose(-1, -2) @ unit"),
    ),
    Wrong(
        id="e-06-sim-returns-tensor",
        exercise="token_similarity",
        cause="The function returns a 0-d tensor; the exercise asks for a Python float: end with "
              ".item() (or float(...)).",
        kind="right number, wrong type",
        wrong_on="any h, e.g. torch.randn(2, 4, 8): returns tensor(0.03...) instead of a float.",
        source=IMP06 + SIM_HEAD + SIM_BODY_OK.replace(".mean().item()", ".mean()"),
    ),
    Wrong(
        id="e-06-sim-full-transpose",
        exercise="token_similarity",
        cause="unit.T reverses ALL axes of a batched tensor [B, T, d] (it is only the matrix "
              "transpose for 2-D input); swap only the last two axes, unit.transpose(-1, -2).",
        kind="transpose made full (.T on a batched array)",
        wrong_on="h of shape [2, 3, 4]: unit @ unit.T fails (or mixes sequences) instead of "
                 "comparing each sequence's tokens.",
        source=IMP06 + SIM_HEAD + '''    unit = h / h.norm(dim=-1, keepdim=True)
    cos = unit @ unit.T
    T = h.shape[-2]
    off_diagonal = cos.sum(dim=(-1, -2)) - cos.diagonal(dim1=-2, dim2=-1).sum(dim=-1)
    return (off_diagonal / (T * (T - 1))).mean().item()
''',
    ),
    # ------------------------------------------------------------------ train
    Wrong(
        id="e-06-train-no-zero-grad",
        exercise="train",
        cause="The gradients are never cleared, so each backward adds to the gradients of all "
              "earlier steps. Call optimizer.zero_grad() before loss.backward() in every step.",
        kind="statement left out (gradient accumulation)",
        wrong_on="any model trained for 4 steps: from step 2 on the update uses summed "
                 "gradients, so the later losses drift from the right ones (clearly by step 4).",
        source=train_src("        optimizer.zero_grad()\n", ""),
    ),
    Wrong(
        id="e-06-train-global-generator",
        exercise="train",
        cause="task.sample() is called without the generator, so the batches come from torch's "
              "global random state and not from the seeded generator. Pass it: "
              "task.sample(generator).",
        kind="argument left at its default",
        wrong_on="seed=0, any model: the first batch is not the one the seed gives, so the very "
                 "first loss differs.",
        source=train_src("task.sample(generator)", "task.sample(None)"),
    ),
    Wrong(
        id="e-06-train-last-position-only",
        exercise="train",
        cause="The loss is taken on the last position only, logits[:, -1] against targets[:, -1]; "
              "the exercise trains on every position: flatten the logits to [batch*T, vocab] "
              "and the targets to [batch*T].",
        kind="slice where the whole axis belongs",
        wrong_on="any model: the first loss is the cross-entropy of position 7 only, not the "
                 "mean over the 8 positions.",
        source=train_src("F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))",
                         "F.cross_entropy(logits[:, -1], targets[:, -1])"),
    ),
    Wrong(
        id="e-06-train-batch-drawn-once",
        exercise="train",
        cause="The batch is drawn once, before the loop, so every step trains on the same "
              "tokens. Draw a new batch inside the loop, at the start of each step.",
        kind="statement moved out of the loop",
        wrong_on="steps=3: the second and third losses are measured on batch 1 again instead "
                 "of on batches 2 and 3.",
        source=IMP06 + TRAIN_HEAD + '''    tokens, targets = task.sample(generator)
    for _ in progress(range(steps), "training"):
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
        id="e-06-train-zero-grad-before-step",
        exercise="train",
        cause="optimizer.zero_grad() sits between loss.backward() and optimizer.step(), so the "
              "gradients are erased before the update and the weights never change. The order "
              "is zero_grad, backward, step.",
        kind="statements in the wrong order",
        wrong_on="steps=2: the second loss is that of the untrained model on batch 2.",
        source=train_src('''        optimizer.zero_grad()
        loss.backward()
        optimizer.step()''', '''        loss.backward()
        optimizer.zero_grad()
        optimizer.step()'''),
    ),
    # ------------------------------------------------------------------ run_ablation
    Wrong(
        id="e-06-ablation-seed-once-per-depth",
        exercise="run_ablation",
        cause="torch.manual_seed(seed) is called once per depth, before the residual loop, so "
              "the second model (without residuals) starts from other weights than the first. "
              "Seed right before building EACH model.",
        kind="statement moved out of the inner loop",
        wrong_on="depths (1,), steps 12, seed 0: the residual=False row's similarity_init and "
                 "losses come from different initial weights.",
        source=ablation_src('''        for residual in (True, False):
            torch.manual_seed(seed)
''', '''        torch.manual_seed(seed)
        for residual in (True, False):
'''),
    ),
    Wrong(
        id="e-06-ablation-init-similarity-after-training",
        exercise="run_ablation",
        cause="similarity_init is measured after train(...) has already changed the model, so "
              "it equals similarity_trained. Measure it right after building the model, before "
              "training.",
        kind="statement order",
        wrong_on="depths (1,), steps 12: similarity_init is the trained model's, not the "
                 "initial one's.",
        source=ablation_src('''            similarity_init = [token_similarity(h) for h in layer_outputs(model, probe)]
            losses = train(model, TASK, steps, seed)''', '''            losses = train(model, TASK, steps, seed)
            similarity_init = [token_similarity(h) for h in layer_outputs(model, probe)]'''),
    ),
    Wrong(
        id="e-06-ablation-final-loss-last-only",
        exercise="run_ablation",
        cause="final_loss is the last loss alone; the table asks for the mean of the last 10 "
              "losses, np.mean(losses[-10:]).",
        kind="index where a slice and a mean belong",
        wrong_on="depths (1,), steps 12: final_loss = losses[-1] differs from the mean of "
                 "losses[2:12].",
        source=ablation_src('float(np.mean(losses[-10:]))', 'float(losses[-1])'),
    ),
    Wrong(
        id="e-06-ablation-rows-without-first",
        exercise="run_ablation",
        cause="The inner loop runs residual over (False, True), so each depth's row without "
              "residuals comes first; the order asked is with residuals, then without.",
        kind="loop values in the wrong order",
        wrong_on="depths (1,): rows[0] has residual=False instead of True.",
        source=ablation_src("for residual in (True, False):", "for residual in (False, True):"),
    ),
]

# =============================================================================== lesson 07

IMP07 = '''import time

import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import positive_int
from courseware.long_attention import (
    budget, score_blocks, stream_of, one_query, tile_inputs, key_value_rows, decode_inputs,
    megabytes,
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

ONLINE_OK = '''    m, s = -np.inf, 0.0
    for b in blocks:
        m_new = max(m, float(b.max()))
        s = s * np.exp(m - m_new) + float(np.exp(b - m_new).sum())
        m = m_new
    return float(m), float(s)
'''


def online(old, new):
    assert old in ONLINE_OK, old
    return IMP07 + ONLINE_HEAD + ONLINE_OK.replace(old, new)


ONEPASS_HEAD = '''

def attention_one_pass(q, K, V, block):
    """Attention of one query q [d_k] over K [T_k, d_k], V [T_k, d_v], reading `block` keys at a time.

    One pass: each block of rows of K and V is read while it is the current block, never after.
    """
    q, K, V = one_query(q, K, V)              # given: checks the shapes, never copies K or V
    block = positive_int(block, "block")
'''

ONEPASS_OK = '''    d_k = q.shape[0]
    m, s, o = -np.inf, 0.0, np.zeros(V.shape[1])
    for j in range(0, K.shape[0], block):
        x = K[j:j + block] @ q / np.sqrt(d_k)
        m_new = max(m, x.max())
        scale = np.exp(m - m_new)
        p = np.exp(x - m_new)
        s = s * scale + p.sum()
        o = o * scale + p @ V[j:j + block]
        m = m_new
    return o / s
'''


def onepass(old, new):
    assert old in ONEPASS_OK, old
    return IMP07 + ONEPASS_HEAD + ONEPASS_OK.replace(old, new)


TILED_HEAD = '''

def tiled_attention(Q, K, V, block_q, block_k, causal=False):
    """(output, skipped): attention computed tile by tile; with causal=True, tiles wholly in the future are skipped."""
    Q, K, V, batch = tile_inputs(Q, K, V, causal)   # given: checks; batch is the broadcast batch shape
    block_q, block_k = positive_int(block_q, "block_q"), positive_int(block_k, "block_k")
'''

TILED_OK = '''    T_q, T_k, d_k, d_v = Q.shape[-2], K.shape[-2], Q.shape[-1], V.shape[-1]
    out = np.empty(batch + (T_q, d_v))
    skipped = 0
    for i0 in range(0, T_q, block_q):
        i1 = min(i0 + block_q, T_q)
        Q_i = Q[..., i0:i1, :]
        m = np.full(batch + (i1 - i0, 1), -np.inf)
        s = np.zeros(batch + (i1 - i0, 1))
        o = np.zeros(batch + (i1 - i0, d_v))
        for j0 in range(0, T_k, block_k):
            j1 = min(j0 + block_k, T_k)
            if causal and j0 > i1 - 1:          # every key after every query of the block
                skipped += 1
                continue
            S = Q_i @ np.swapaxes(K[..., j0:j1, :], -1, -2) / np.sqrt(d_k)
            if causal and j1 - 1 > i0:          # the diagonal runs through this tile
                allowed = np.arange(j0, j1)[None, :] <= np.arange(i0, i1)[:, None]
                S = np.where(allowed, S, -np.inf)
            m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
            scale = np.exp(m - m_new)
            P = np.exp(S - m_new)
            s = s * scale + P.sum(axis=-1, keepdims=True)
            o = o * scale + P @ V[..., j0:j1, :]
            m = m_new
        out[..., i0:i1, :] = o / s
    return out, skipped
'''


def tiled(old, new):
    assert old in TILED_OK, old
    return IMP07 + TILED_HEAD + TILED_OK.replace(old, new)


KV_OK = '''

class KVCache:
    """The keys [t, d_k] and values [t, d_v] of the t positions seen so far."""

    def __init__(self):
        self._keys = []
        self._values = []

    def __len__(self):
        """The number of positions in the cache."""
        return sum(len(k) for k in self._keys)

    def append(self, k, v):
        """Add one position (k [d_k], v [d_v]) or a block of them ([n, d_k], [n, d_v])."""
        k, v = key_value_rows(k, v)    # given: both as blocks of rows [n, d], one value per key
        self._keys.append(k)
        self._values.append(v)

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


def kv(old, new):
    assert old in KV_OK, old
    return IMP07 + KV_OK.replace(old, new)


DECODE_HEAD = '''

def decode_step(x_t, cache, W_q, W_k, W_v):
    """Causal self-attention for the new token x_t [d_model] (or new tokens [n, d_model]), reusing the cache."""
    x, W_q, W_k, W_v = decode_inputs(x_t, cache, W_q, W_k, W_v)   # given: checks the shapes
'''

DECODE_OK = '''    one_token = x.ndim == 1
    X = x[None, :] if one_token else x                 # [n, d_model]
    n, t = X.shape[0], len(cache)
    q, k, v = X @ W_q, X @ W_k, X @ W_v
    cache.append(k, v)                                 # before attending: a token sees itself
    K, V = cache.keys, cache.values                    # [t + n, d_k], [t + n, d_v]
    S = q @ K.T / np.sqrt(W_q.shape[1])                # [n, t + n]
    allowed = np.arange(t + n)[None, :] <= (t + np.arange(n))[:, None]
    S = np.where(allowed, S, -np.inf)
    P = np.exp(S - S.max(axis=-1, keepdims=True))
    P = P / P.sum(axis=-1, keepdims=True)
    out = P @ V
    return out[0] if one_token else out
'''


def decode(old, new):
    assert old in DECODE_OK, old
    return IMP07 + KV_OK + DECODE_HEAD + DECODE_OK.replace(old, new)


WRONG += [
    # ------------------------------------------------------------------ online_softmax_stats
    Wrong(
        id="e-07-online-rescale-exponent-flipped",
        exercise="online_softmax_stats",
        cause="The running sum is multiplied by exp(m_new - m); when the maximum grows from m to "
              "m_new the old terms must shrink, so the factor is exp(m - m_new). (With m = -inf "
              "at the start, the flipped factor is exp(+inf) and 0 * inf gives NaN at once.)",
        kind="sign flipped inside an exponent",
        wrong_on="one block [1.0, 2.0]: returns s = NaN instead of 1.368.",
        source=online("s * np.exp(m - m_new)", "s * np.exp(m_new - m)"),
    ),
    Wrong(
        id="e-07-online-sum-not-rescaled",
        exercise="online_softmax_stats",
        cause="When a block raises the maximum you add the new terms relative to m_new but leave "
              "the old sum relative to the old maximum. Multiply the running sum by "
              "exp(m - m_new) before adding.",
        kind="running value not rescaled",
        wrong_on="blocks [0.0], [1.0]: returns s = 2 instead of 1 + e^-1 = 1.368.",
        source=online("s = s * np.exp(m - m_new) +", "s = s +"),
    ),
    Wrong(
        id="e-07-online-max-updated-too-early",
        exercise="online_softmax_stats",
        cause="m = m_new is done before the rescaling line, so exp(m - m_new) is always "
              "exp(0) = 1 and the old sum is never rescaled. Update m only after s.",
        kind="statement order (update before use)",
        wrong_on="blocks [0.0], [1.0]: returns s = 2 instead of 1.368.",
        source=online('''        m_new = max(m, float(b.max()))
        s = s * np.exp(m - m_new) + float(np.exp(b - m_new).sum())
        m = m_new''', '''        m_new = max(m, float(b.max()))
        m = m_new
        s = s * np.exp(m - m_new) + float(np.exp(b - m_new).sum())'''),
    ),
    Wrong(
        id="e-07-online-block-terms-own-max",
        exercise="online_softmax_stats",
        cause="The block's terms are taken relative to the block's own maximum, "
              "exp(b - b.max()), while the running sum is relative to the running maximum. Both "
              "must use the same reference: exp(b - m_new).",
        kind="wrong reference value in an exponent",
        wrong_on="blocks [2.0], [0.0]: the second block adds e^0 = 1 instead of e^-2, so s = 2 "
                 "instead of 1.135.",
        source=online("float(np.exp(b - m_new).sum())", "float(np.exp(b - b.max()).sum())"),
    ),
    Wrong(
        id="e-07-online-start-max-zero",
        exercise="online_softmax_stats",
        cause="The running maximum starts at 0 instead of -inf, so when every score is negative "
              "m stays 0 (not the largest score) and s is relative to 0. Start from m = -np.inf.",
        kind="wrong initial value",
        wrong_on="one block [-3.0, -1.0]: returns (0, 0.418) instead of (-1, 1.135).",
        source=online("m, s = -np.inf, 0.0", "m, s = 0.0, 0.0"),
    ),
    Wrong(
        id="e-07-online-two-loops",
        exercise="online_softmax_stats",
        cause="A first loop finds the maximum and a second loop sums the exponentials: that is the "
              "two-pass softmax, and the stream cannot be read twice. Keep m and s together in "
              "one loop, rescaling s by exp(m - m_new) when the maximum grows.",
        kind="stated rule broken (stream read twice)",
        wrong_on="stream_of([np.array([1.0, 2.0])]): the second loop asks the stream for its "
                 "blocks again and fails.",
        source=IMP07 + ONLINE_HEAD + '''    m = -np.inf
    for b in blocks:
        m = max(m, float(b.max()))
    s = 0.0
    for b in blocks:
        s += float(np.exp(b - m).sum())
    return m, s
''',
    ),
    Wrong(
        id="e-07-online-exp-ratio-overflows",
        exercise="online_softmax_stats",
        cause="You wrote the rescaling factor as np.exp(m) / np.exp(m_new): equal on paper, but "
              "for scores above about 709 both exponentials overflow to inf and inf/inf is NaN. "
              "Subtract first: np.exp(m - m_new).",
        kind="numerically unstable rewrite",
        wrong_on="blocks [1000.0, 990.0], [1010.0, -1000.0]: s is NaN instead of 1.0000454.",
        source=online("s * np.exp(m - m_new)", "s * np.exp(m) / np.exp(m_new)"),
    ),
    Wrong(
        id="e-07-online-returns-s-m",
        exercise="online_softmax_stats",
        cause="The function returns (s, m); the exercise asks for (m, s), the maximum first.",
        kind="tuple items swapped",
        wrong_on="one block [1.0, 2.0]: returns (1.368, 2.0) instead of (2.0, 1.368).",
        source=online("return float(m), float(s)", "return float(s), float(m)"),
    ),
    # ------------------------------------------------------------------ attention_one_pass
    Wrong(
        id="e-07-onepass-output-not-rescaled",
        exercise="attention_one_pass",
        cause="When the maximum grows you rescale s but not the running output o. Both are sums "
              "relative to the old maximum: o = o * scale + p @ V[j:j + block].",
        kind="one of two running values not rescaled",
        wrong_on="q=[1], K=[[0], [2]], V=[[1], [0]], block=1: the first value keeps its old "
                 "weight e^0 in o while s rescales it to e^-2, so the output is 0.881 instead of 0.119.",
        source=onepass("o = o * scale + p @ V[j:j + block]", "o = o + p @ V[j:j + block]"),
    ),
    Wrong(
        id="e-07-onepass-divides-each-block",
        exercise="attention_one_pass",
        cause="Each block's contribution is divided by the running sum as it is at that block, "
              "p @ V / s, but s still grows afterwards. Accumulate the undivided numerator and "
              "divide by s once, after the last block.",
        kind="normalisation moved into the loop",
        wrong_on="q=[1], K=[[0], [0]], V=[[1], [3]], block=1: returns 1/1 + 3/2 = 2.5 instead "
                 "of 2.",
        source=onepass('''        o = o * scale + p @ V[j:j + block]
        m = m_new
    return o / s''', '''        o = o * scale + p @ V[j:j + block] / s
        m = m_new
    return o'''),
    ),
    Wrong(
        id="e-07-onepass-drops-short-last-block",
        exercise="attention_one_pass",
        cause="range(0, len(K) - block + 1, block) stops before a last block shorter than "
              "`block`, so those keys are never read. Go up to len(K): range(0, len(K), block); "
              "the slice K[j:j + block] is simply shorter at the end.",
        kind="loop bound off (last partial block dropped)",
        wrong_on="T_k = 10 keys with block = 3: key 9 is ignored.",
        source=onepass("range(0, K.shape[0], block)", "range(0, K.shape[0] - block + 1, block)"),
    ),
    Wrong(
        id="e-07-onepass-scale-by-dk",
        exercise="attention_one_pass",
        cause="The scores are divided by d_k; the scale of scaled dot-product attention is "
              "sqrt(d_k).",
        kind="square root forgotten",
        wrong_on="q, K with d_k = 4 (random): the scores are halved, so the weights are too flat.",
        source=onepass("/ np.sqrt(d_k)", "/ d_k"),
    ),
    Wrong(
        id="e-07-onepass-no-max-subtracted",
        exercise="attention_one_pass",
        cause="You sum np.exp(x) without the running maximum; it is right on paper but "
              "overflows for scores above about 709 (inf / inf = NaN). Keep the running maximum "
              "and use exp(x - m_new), rescaling s and o when it grows.",
        kind="numerical stability dropped",
        wrong_on="q=[1], K with scores near 1000 (K = 1000 + noise, 10 keys), block=3: NaN "
                 "instead of the weighted average.",
        source=IMP07 + ONEPASS_HEAD + '''    d_k = q.shape[0]
    s, o = 0.0, np.zeros(V.shape[1])
    for j in range(0, K.shape[0], block):
        x = K[j:j + block] @ q / np.sqrt(d_k)
        p = np.exp(x)
        s = s + p.sum()
        o = o + p @ V[j:j + block]
    return o / s
''',
    ),
    Wrong(
        id="e-07-onepass-two-passes",
        exercise="attention_one_pass",
        cause="A first loop over the key blocks finds the maximum and a second loop computes the "
              "sums: the second loop goes back to rows already read, which the exercise forbids. "
              "Keep a running maximum and rescale s and o by exp(m - m_new) in a single loop.",
        kind="stated rule broken (second pass over the rows)",
        wrong_on="T_k = 10, block = 3: after reading rows 9:10 the second loop reads rows 0:3 "
                 "again.",
        source=IMP07 + ONEPASS_HEAD + '''    d_k = q.shape[0]
    m = -np.inf
    for j in range(0, K.shape[0], block):
        m = max(m, (K[j:j + block] @ q / np.sqrt(d_k)).max())
    s, o = 0.0, np.zeros(V.shape[1])
    for j in range(0, K.shape[0], block):
        p = np.exp(K[j:j + block] @ q / np.sqrt(d_k) - m)
        s = s + p.sum()
        o = o + p @ V[j:j + block]
    return o / s
''',
    ),
    Wrong(
        id="e-07-onepass-block-as-count",
        exercise="attention_one_pass",
        cause="You read `block` as the number of blocks and stepped by len(K) // block rows. "
              "`block` is the number of rows per step: step by block. (With block > T_k your "
              "step is 0 and range() fails; with a small block each step reads too many rows.)",
        kind="parameter misread (count vs size)",
        wrong_on="T_k = 10, block = 11: range() with step 0 raises instead of reading all 10 "
                 "keys in one block; with block = 2 each step reads 5 rows.",
        source=IMP07 + ONEPASS_HEAD + '''    d_k = q.shape[0]
    size = K.shape[0] // block
    m, s, o = -np.inf, 0.0, np.zeros(V.shape[1])
    for j in range(0, K.shape[0], size):
        x = K[j:j + size] @ q / np.sqrt(d_k)
        m_new = max(m, x.max())
        scale = np.exp(m - m_new)
        p = np.exp(x - m_new)
        s = s * scale + p.sum()
        o = o * scale + p @ V[j:j + size]
        m = m_new
    return o / s
''',
    ),
    Wrong(
        id="e-07-onepass-max-of-block-only",
        exercise="attention_one_pass",
        cause="m_new = x.max() forgets the running maximum: after a block of low scores the "
              "reference falls, and exp(m - m_new) becomes huge (inf for a drop of more than "
              "about 709). Take m_new = max(m, x.max()).",
        kind="running maximum replaced instead of updated",
        wrong_on="q=[1], K=[[1000], [-1000]], V=[[1], [2]], block=1: exp(2000) overflows and the "
                 "output is NaN instead of 1.",
        source=onepass("m_new = max(m, x.max())", "m_new = x.max()"),
    ),
    # ------------------------------------------------------------------ tiled_attention
    Wrong(
        id="e-07-tiled-skip-test-off-by-one",
        exercise="tiled_attention",
        cause="The skip test is j0 >= i1 - 1, which also skips a tile whose first key is the "
              "block's last query: that query may see its own key. Skip only when j0 > i1 - 1 "
              "(every key after every query).",
        kind="< vs <= (off by one)",
        wrong_on="T = 12, causal, 3 x 4 tiles: the tile of queries 6..8 and keys 8..11 is "
                 "skipped, so query 8 never sees its own key, and skipped is 4 instead of 3.",
        source=tiled("if causal and j0 > i1 - 1:", "if causal and j0 >= i1 - 1:"),
    ),
    Wrong(
        id="e-07-tiled-mask-tile-positions",
        exercise="tiled_attention",
        cause="The mask inside a diagonal tile compares positions within the tile, arange(j1 - "
              "j0) with arange(i1 - i0); it must compare positions in the whole sequence, "
              "arange(j0, j1) with arange(i0, i1).",
        kind="local index where a global one belongs",
        wrong_on="T = 12, causal, 3 x 4 tiles: in the tile of queries 3..5 and keys 4..7, query 3 "
                 "sees key 4 and query 5 sees key 6, both in their future.",
        source=tiled("allowed = np.arange(j0, j1)[None, :] <= np.arange(i0, i1)[:, None]",
                     "allowed = np.arange(j1 - j0)[None, :] <= np.arange(i1 - i0)[:, None]"),
    ),
    Wrong(
        id="e-07-tiled-break-counts-one",
        exercise="tiled_attention",
        cause="At the first tile in the future you count one and break out of the key loop; the "
              "output is right (all later tiles are in the future too), but skipped must count "
              "every skipped tile, not one per row of tiles.",
        kind="counter incremented once instead of per item",
        wrong_on="T = 12, causal, 4 x 4 tiles: returns skipped = 2 instead of 3.",
        source=tiled('''                skipped += 1
                continue''', '''                skipped += 1
                break'''),
    ),
    Wrong(
        id="e-07-tiled-state-outside-query-loop",
        exercise="tiled_attention",
        cause="m, s and o are created once, before the loop over query blocks, so each query "
              "block starts with the previous block's maximum, sum and output. Create them at "
              "the start of every query block.",
        kind="initialisation moved out of a loop",
        wrong_on="T = 12, not causal, 4 x 4 tiles: rows 4..11 mix in the first query block's "
                 "output.",
        source=IMP07 + TILED_HEAD + TILED_OK.replace('''    skipped = 0
    for i0 in range(0, T_q, block_q):
        i1 = min(i0 + block_q, T_q)
        Q_i = Q[..., i0:i1, :]
        m = np.full(batch + (i1 - i0, 1), -np.inf)
        s = np.zeros(batch + (i1 - i0, 1))
        o = np.zeros(batch + (i1 - i0, d_v))
''', '''    skipped = 0
    m = np.full(batch + (block_q, 1), -np.inf)
    s = np.zeros(batch + (block_q, 1))
    o = np.zeros(batch + (block_q, d_v))
    for i0 in range(0, T_q, block_q):
        i1 = min(i0 + block_q, T_q)
        Q_i = Q[..., i0:i1, :]
'''),
    ),
    Wrong(
        id="e-07-tiled-scale-after-update",
        exercise="tiled_attention",
        cause="m = m_new comes before scale = np.exp(m - m_new), so the scale is always 1 and "
              "the running sum and output are never rescaled. Compute the scale from the old m, "
              "then update m.",
        kind="statement order (update before use)",
        wrong_on="random Q, K, V of 12 tokens, 4 x 4 tiles: a row whose maximum rises in a later "
                 "tile gets the wrong weights.",
        source=tiled('''            m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
            scale = np.exp(m - m_new)''', '''            m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
            m = m_new
            scale = np.exp(m - m_new)'''),
    ),
    Wrong(
        id="e-07-tiled-max-keepdims-dropped",
        exercise="tiled_attention",
        cause="S.max(axis=-1) without keepdims=True gives a row [block_q] instead of a column "
              "[block_q, 1], so np.maximum(m, ...) broadcasts to a block_q x block_q table and "
              "mixes one row's maximum into another's. Keep the axis: keepdims=True.",
        kind="keepdims forgotten",
        wrong_on="Q, K, V [12, 4], 4 x 4 tiles: runs but returns wrong rows (other tile shapes "
                 "raise a broadcasting error).",
        source=tiled("m_new = np.maximum(m, S.max(axis=-1, keepdims=True))",
                     "m_new = np.maximum(m, S.max(axis=-1))"),
    ),
    Wrong(
        id="e-07-tiled-full-transpose",
        exercise="tiled_attention",
        cause="K[..., j0:j1, :].T reverses every axis of a batched array; only the last two must "
              "be swapped: np.swapaxes(K_j, -1, -2). (.T is fine only for 2-D input.)",
        kind="transpose made full (.T on a batched array)",
        wrong_on="Q, K, V of shape [2, 12, 4], 4 x 4 tiles: the product fails (or mixes batch and "
                 "feature axes) instead of giving [2, 12, 4].",
        source=tiled("Q_i @ np.swapaxes(K[..., j0:j1, :], -1, -2)", "Q_i @ K[..., j0:j1, :].T"),
    ),
    Wrong(
        id="e-07-tiled-mask-strict",
        exercise="tiled_attention",
        cause="The mask inside a diagonal tile allows j < i, so no query sees its own key (and "
              "query 0 sees nothing, giving NaN). Causal attention allows j <= i.",
        kind="< where <= belongs (diagonal excluded)",
        wrong_on="T = 12, causal, 4 x 4 tiles: row 0 is NaN and every other row misses its own "
                 "key.",
        source=tiled("np.arange(j0, j1)[None, :] <= np.arange(i0, i1)[:, None]",
                     "np.arange(j0, j1)[None, :] < np.arange(i0, i1)[:, None]"),
    ),
    # ------------------------------------------------------------------ KVCache
    Wrong(
        id="e-07-kv-len-counts-appends",
        exercise="KVCache",
        cause="len(cache) returns the number of append calls (the length of the list of "
              "blocks); it must count positions, and one append can add a block of n rows: sum "
              "the blocks' lengths.",
        kind="counted calls instead of rows",
        wrong_on="append a block of 3 keys and values: len(cache) is 1 instead of 3.",
        source=kv("return sum(len(k) for k in self._keys)", "return len(self._keys)"),
    ),
    Wrong(
        id="e-07-kv-prepends",
        exercise="KVCache",
        cause="insert(0, ...) puts each new block in front, so keys and values come newest "
              "first. The cache keeps the oldest first: append at the end.",
        kind="cache appended in the wrong order",
        wrong_on="append k=[1, 0] then k=[0, 1]: keys is [[0, 1], [1, 0]] instead of "
                 "[[1, 0], [0, 1]].",
        source=kv('''        self._keys.append(k)
        self._values.append(v)''', '''        self._keys.insert(0, k)
        self._values.insert(0, v)'''),
    ),
    Wrong(
        id="e-07-kv-values-returns-keys",
        exercise="KVCache",
        cause="The values property concatenates self._keys (copied from keys); it must "
              "concatenate self._values.",
        kind="returned the wrong variable (copy-paste)",
        wrong_on="append one key [2] and one value [3]: values is the [1, 2] key instead of "
                 "the [1, 3] value.",
        source=kv('''        return np.concatenate(self._values, axis=0)''',
                  '''        return np.concatenate(self._keys, axis=0)'''),
    ),
    Wrong(
        id="e-07-kv-class-level-lists",
        exercise="KVCache",
        cause="The lists are class attributes, created once for the class, so every KVCache "
              "shares them and a new cache already holds the positions of older ones. Create "
              "them in __init__ as self._keys = [] and self._values = [].",
        kind="mutable class attribute shared between instances",
        wrong_on="fill one cache with 2 positions, then make a new cache and append 1: its "
                 "len is 3 and its keys hold the other cache's rows.",
        source=IMP07 + KV_OK.replace('''    def __init__(self):
        self._keys = []
        self._values = []
''', '''    _keys = []
    _values = []

    def __init__(self):
        pass
'''),
    ),
    Wrong(
        id="e-07-kv-append-overwrites",
        exercise="KVCache",
        cause="append assigns the new block to the cache (self._keys = k) instead of adding it "
              "after the rows already there, so the cache only ever holds the last block. "
              "Concatenate: np.concatenate([self._keys, k]).",
        kind="= where += (concatenation) belongs",
        wrong_on="append one position, then another: len is 1 and keys has one row instead of 2.",
        source=IMP07 + '''

class KVCache:
    """The keys [t, d_k] and values [t, d_v] of the t positions seen so far."""

    def __init__(self):
        self._keys = None
        self._values = None

    def __len__(self):
        """The number of positions in the cache."""
        return 0 if self._keys is None else len(self._keys)

    def append(self, k, v):
        """Add one position (k [d_k], v [d_v]) or a block of them ([n, d_k], [n, d_v])."""
        k, v = key_value_rows(k, v)    # given: both as blocks of rows [n, d], one value per key
        self._keys = k
        self._values = v

    @property
    def keys(self):
        """Every key so far, one row per position: [t, d_k]."""
        if self._keys is None:
            raise ValueError("the cache is empty")
        return self._keys

    @property
    def values(self):
        """Every value so far, one row per position: [t, d_v]."""
        if self._values is None:
            raise ValueError("the cache is empty")
        return self._values
''',
    ),
    Wrong(
        id="e-07-kv-stack-adds-axis",
        exercise="KVCache",
        cause="np.stack puts the appended blocks on a new axis, giving [calls, n, d]; the "
              "positions must be rows of one [t, d] array: np.concatenate(..., axis=0).",
        kind="stack where concatenate belongs (extra axis)",
        wrong_on="append k=[1, 0], then k=[0, 1]: keys has shape [2, 1, 2] instead of [2, 2] (and "
                 "blocks of different sizes raise).",
        source=kv("return np.concatenate(self._keys, axis=0)", "return np.stack(self._keys)").replace(
            "return np.concatenate(self._values, axis=0)", "return np.stack(self._values)"),
    ),
    # ------------------------------------------------------------------ decode_step
    Wrong(
        id="e-07-decode-append-after-attending",
        exercise="decode_step",
        cause="You read cache.keys and cache.values before appending the new key and value, so "
              "the new token cannot see itself (and an empty cache has nothing to attend to). "
              "Append first, then attend over positions 0..t.",
        kind="statement order (append after use)",
        wrong_on="a cache holding 2 positions and one new token: its output ignores its own "
                 "value; with an empty cache the call raises.",
        source=decode('''    cache.append(k, v)                                 # before attending: a token sees itself
    K, V = cache.keys, cache.values                    # [t + n, d_k], [t + n, d_v]''',
                      '''    K, V = cache.keys, cache.values                    # what is cached so far
    cache.append(k, v)''').replace(
            "allowed = np.arange(t + n)[None, :] <= (t + np.arange(n))[:, None]",
            "allowed = np.arange(t)[None, :] <= (t + np.arange(n))[:, None]").replace(
            "# [n, t + n]", "# [n, t]"),
    ),
    Wrong(
        id="e-07-decode-block-not-causal",
        exercise="decode_step",
        cause="With a block of n new tokens every new token attends to all t + n positions, "
              "later new tokens included. New token i may see positions 0..t+i only: mask "
              "with the last n rows of the causal mask.",
        kind="mask left out",
        wrong_on="an empty cache and a prompt of 3 tokens: token 0 sees tokens 1 and 2.",
        source=decode('''    allowed = np.arange(t + n)[None, :] <= (t + np.arange(n))[:, None]
    S = np.where(allowed, S, -np.inf)
''', ""),
    ),
    Wrong(
        id="e-07-decode-mask-ignores-cache-offset",
        exercise="decode_step",
        cause="np.tril(np.ones((n, t + n))) lets new token i see positions 0..i, as if the "
              "block started at position 0; it starts at position t, so the diagonal is "
              "shifted: np.tril(..., k=t).",
        kind="triangle offset (k) wrong",
        wrong_on="a cache of 2 positions and one new token: the token sees only position 0 "
                 "instead of positions 0..2.",
        source=decode("allowed = np.arange(t + n)[None, :] <= (t + np.arange(n))[:, None]",
                      "allowed = np.tril(np.ones((n, t + n), dtype=bool))"),
    ),
    Wrong(
        id="e-07-decode-scale-d-model",
        exercise="decode_step",
        cause="The scores are divided by sqrt(W_q.shape[0]), the square root of d_model; the "
              "scale is sqrt(d_k), the width of the queries, W_q.shape[1].",
        kind="scale of the wrong quantity",
        wrong_on="d_model = 6, d_k = 4: the scores are divided by 2.45 instead of 2.",
        source=decode("np.sqrt(W_q.shape[1])", "np.sqrt(W_q.shape[0])"),
    ),
    Wrong(
        id="e-07-decode-single-token-row-kept",
        exercise="decode_step",
        cause="A single token x_t [d_model] must give a [d_v] output, but you always return the "
              "[n, d_v] array; drop the row axis when the input was one token.",
        kind="axis of length 1 too many",
        wrong_on="one token [6] with d_v = 4: returns shape [1, 4] instead of [4].",
        source=decode("return out[0] if one_token else out", "return out"),
    ),
    Wrong(
        id="e-07-decode-softmax-over-new-tokens",
        exercise="decode_step",
        cause="The softmax normalises over axis 0, the new tokens, instead of over each new "
              "token's cached positions (the last axis). Take the maximum and the sum with "
              "axis=-1.",
        kind="softmax over the wrong axis",
        wrong_on="one new token with a cache of 2 positions: every weight is 1, so the output is "
                 "the sum of the 3 values instead of their weighted average.",
        source=decode('''    P = np.exp(S - S.max(axis=-1, keepdims=True))
    P = P / P.sum(axis=-1, keepdims=True)''', '''    P = np.exp(S - S.max(axis=0, keepdims=True))
    P = P / P.sum(axis=0, keepdims=True)'''),
    ),
]

# =============================================================================== lesson 08

IMP08 = '''import numpy as np
import torch
import torch.nn.functional as F

from courseware.positions import position_sizes, rope_inputs, rope_score_inputs
'''

SIN_HEAD = '''

def sinusoidal_positions(T, d):
    """The (T, d) table: PE[t, 2i] = sin(t / 10000^(2i/d)), PE[t, 2i + 1] = cos(t / 10000^(2i/d))."""
    T, d = position_sizes(T, d)      # given: T >= 0 and d even and positive, or a ValueError
'''

SIN_OK = '''    t = np.arange(T)[:, None]                  # a column of positions
    i = np.arange(d // 2)[None, :]             # a row of pair indices
    angles = t / 10000.0 ** (2 * i / d)        # [T, d/2]
    PE = np.zeros((T, d))
    PE[:, 0::2] = np.sin(angles)
    PE[:, 1::2] = np.cos(angles)
    return PE
'''


def sin_src(old, new):
    assert old in SIN_OK, old
    return IMP08 + SIN_HEAD + SIN_OK.replace(old, new)


ROPE_HEAD = '''

def rope(x, positions, base=10000.0):
    """Turn pair (2i, 2i + 1) of row t of x [..., T, d] counterclockwise by positions[t] * base^(-2i/d)."""
    x, positions, base = rope_inputs(x, positions, base)    # given: checks the shapes and positions
'''

ROPE_OK = '''    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)          # [d/2] frequencies
    angles = positions[:, None] * theta                 # [T, d/2]
    cos, sin = np.cos(angles), np.sin(angles)
    a, b = x[..., 0::2], x[..., 1::2]                   # first and second feature of each pair
    out = np.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out
'''


def rope_src(old, new):
    assert old in ROPE_OK, old
    return IMP08 + ROPE_HEAD + ROPE_OK.replace(old, new)


SCORES_HEAD = '''

def rope_scores(Q, K, positions_q, positions_k, base=10000.0):
    """rope(Q, positions_q) @ rope(K, positions_k)ᵀ / sqrt(d): [..., T_q, d], [..., T_k, d] -> [..., T_q, T_k]."""
    Q, K, positions_q, positions_k, base = rope_score_inputs(Q, K, positions_q, positions_k, base)  # given
'''

SCORES_OK = '''    d = Q.shape[-1]
    q = rope(Q, positions_q, base)
    k = rope(K, positions_k, base)
    return q @ np.swapaxes(k, -1, -2) / np.sqrt(d)
'''


def scores_src(old, new):
    assert old in SCORES_OK, old
    return IMP08 + ROPE_HEAD + ROPE_OK + SCORES_HEAD + SCORES_OK.replace(old, new)


WRONG += [
    # ------------------------------------------------------------------ sinusoidal_positions
    Wrong(
        id="e-08-sin-exponent-i-over-d",
        exercise="sinusoidal_positions",
        cause="The frequency is 10000^(-i/d); the formula has 2i/d in the exponent, "
              "10000 ** (2 * i / d), so your pairs turn too fast (pair i at the speed of pair i/2).",
        kind="frequency exponent off by a factor 2",
        wrong_on="T=2, d=4: PE[1, 2] = sin(1/10000^(1/4)) = sin(0.1) instead of sin(0.01).",
        source=sin_src("10000.0 ** (2 * i / d)", "10000.0 ** (i / d)"),
    ),
    Wrong(
        id="e-08-sin-multiplies-by-power",
        exercise="sinusoidal_positions",
        cause="You multiply the position by 10000^(2i/d); the angle is the position DIVIDED by "
              "it, t / 10000^(2i/d) (the exponent's sign is flipped), so later pairs must turn "
              "more slowly, not faster.",
        kind="sign flipped inside an exponent (* for /)",
        wrong_on="T=2, d=4: PE[1, 2] = sin(1 * 100) instead of sin(1 / 100).",
        source=sin_src("t / 10000.0 ** (2 * i / d)", "t * 10000.0 ** (2 * i / d)"),
    ),
    Wrong(
        id="e-08-sin-cos-swapped",
        exercise="sinusoidal_positions",
        cause="The even features hold the cosine and the odd ones the sine; the table puts the "
              "sine at 2i and the cosine at 2i + 1, so row 0 is [0, 1, 0, 1, ...].",
        kind="two outputs swapped",
        wrong_on="T=1, d=2: row 0 is [1, 0] instead of [0, 1].",
        source=sin_src('''    PE[:, 0::2] = np.sin(angles)
    PE[:, 1::2] = np.cos(angles)''', '''    PE[:, 0::2] = np.cos(angles)
    PE[:, 1::2] = np.sin(angles)'''),
    ),
    Wrong(
        id="e-08-sin-halves",
        exercise="sinusoidal_positions",
        cause="np.concatenate([sin, cos], axis=1) puts all sines in the first half and all "
              "cosines in the second; pair i is the two neighbouring features 2i and 2i + 1. "
              "Interleave: PE[:, 0::2] = sin, PE[:, 1::2] = cos.",
        kind="halves where interleaving belongs",
        wrong_on="T=1, d=4: row 0 is [0, 0, 1, 1] instead of [0, 1, 0, 1].",
        source=sin_src('''    PE = np.zeros((T, d))
    PE[:, 0::2] = np.sin(angles)
    PE[:, 1::2] = np.cos(angles)
    return PE''', '''    return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)'''),
    ),
    Wrong(
        id="e-08-sin-doubled-exponent",
        exercise="sinusoidal_positions",
        cause="i already runs over the even features 0, 2, 4, ... (np.arange(0, d, 2)), and the "
              "exponent multiplies it by 2 again: 2i/d becomes 4i/d. Use either i = "
              "np.arange(d // 2) with 2 * i / d, or the even features divided by d.",
        kind="factor applied twice (frequency exponent off)",
        wrong_on="T=2, d=4: PE[1, 2] = sin(1/10000) instead of sin(1/100).",
        source=sin_src("i = np.arange(d // 2)[None, :]             # a row of pair indices",
                       "i = np.arange(0, d, 2)[None, :]            # the pairs' first features"),
    ),
    Wrong(
        id="e-08-sin-positions-from-one",
        exercise="sinusoidal_positions",
        cause="The positions run 1..T (np.arange(1, T + 1)); they count from 0, so row 0 is "
              "position 0: [0, 1, 0, 1, ...].",
        kind="range started one step off",
        wrong_on="T=1, d=2: row 0 is [sin 1, cos 1] instead of [0, 1].",
        source=sin_src("t = np.arange(T)[:, None]", "t = np.arange(1, T + 1)[:, None]"),
    ),
    Wrong(
        id="e-08-sin-floor-division",
        exercise="sinusoidal_positions",
        cause="(2 * i) // d is integer division and is 0 for every pair, so every pair turns "
              "one radian per position. The exponent is the fraction 2 * i / d.",
        kind="// where / belongs",
        wrong_on="T=2, d=4: PE[1, 2] = sin(1) instead of sin(0.01).",
        source=sin_src("10000.0 ** (2 * i / d)", "10000.0 ** ((2 * i) // d)"),
    ),
    Wrong(
        id="e-08-sin-pair-index-from-one",
        exercise="sinusoidal_positions",
        cause="The pair index runs 1..d/2 (np.arange(1, d // 2 + 1)); it starts at 0, so that "
              "pair 0 turns one radian per position and the last pair uses exponent (d-2)/d.",
        kind="index off by one",
        wrong_on="T=2, d=2: PE[1, 0] = sin(1/10000) instead of sin(1).",
        source=sin_src("i = np.arange(d // 2)[None, :]", "i = np.arange(1, d // 2 + 1)[None, :]"),
    ),
    Wrong(
        id="e-08-sin-outer-reversed",
        exercise="sinusoidal_positions",
        cause="np.outer(frequencies, positions) makes a [d/2, T] table, frequencies down and "
              "positions across; the angles must be [T, d/2], a column of positions times a row "
              "of frequencies: np.outer(positions, frequencies).",
        kind="outer product in the wrong order (transposed)",
        wrong_on="T=2, d=4: the [2, 2] angles are transposed, so PE[0, 2] = sin(1) instead of "
                 "0 (for T != d/2 the assignment fails).",
        source=sin_src('''    t = np.arange(T)[:, None]                  # a column of positions
    i = np.arange(d // 2)[None, :]             # a row of pair indices
    angles = t / 10000.0 ** (2 * i / d)        # [T, d/2]''',
                       '''    frequencies = 1.0 / 10000.0 ** (2 * np.arange(d // 2) / d)
    angles = np.outer(frequencies, np.arange(T))'''),
    ),
    # ------------------------------------------------------------------ rope
    Wrong(
        id="e-08-rope-clockwise",
        exercise="rope",
        cause="Both sin terms have the wrong sign: (a cos + b sin, -a sin + b cos) turns the "
              "pair clockwise. Counterclockwise is (a cos - b sin, a sin + b cos).",
        kind="sign flipped (rotation direction)",
        wrong_on="x = [[1, 0]] at position 1: returns [cos 1, -sin 1] instead of [cos 1, sin 1].",
        source=rope_src('''    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos''', '''    out[..., 0::2] = a * cos + b * sin
    out[..., 1::2] = -a * sin + b * cos'''),
    ),
    Wrong(
        id="e-08-rope-halves",
        exercise="rope",
        cause="You paired feature i with feature i + d/2 (the two halves, GPT-NeoX's "
              "rotate_half); this exercise pairs neighbours, (2i, 2i + 1): x[..., 0::2] with "
              "x[..., 1::2].",
        kind="rotation pairs the wrong halves",
        wrong_on="x = [[1, 2, 3, 4]] at position 1: features 0 and 2 are turned together "
                 "instead of 0 and 1.",
        source=rope_src('''    a, b = x[..., 0::2], x[..., 1::2]                   # first and second feature of each pair
    out = np.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos''', '''    half = d // 2
    a, b = x[..., :half], x[..., half:]                 # first half with second half
    out = np.empty_like(x)
    out[..., :half] = a * cos - b * sin
    out[..., half:] = a * sin + b * cos'''),
    ),
    Wrong(
        id="e-08-rope-overwrites-in-place",
        exercise="rope",
        cause="a = x[..., 0::2] is a view, and you write the turned first features back into x "
              "before computing the second ones, so the second line reads the already turned a "
              "(and the caller's array is changed). Write into a new array, np.empty_like(x).",
        kind="in-place change of an input (aliased view)",
        wrong_on="x = [[1, 0]] at position 1: the second feature becomes cos 1 * sin 1 instead "
                 "of sin 1, and the caller's x is overwritten.",
        source=rope_src('''    out = np.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out''', '''    x[..., 0::2] = a * cos - b * sin
    x[..., 1::2] = a * sin + b * cos
    return x'''),
    ),
    Wrong(
        id="e-08-rope-positions-ignored",
        exercise="rope",
        cause="The angles use np.arange(T), the row numbers, instead of the positions passed "
              "in; positions need not start at 0 or go up by one: use positions[:, None].",
        kind="parameter replaced by a default (row index)",
        wrong_on="x of 6 rows with positions [0, 1, 5, 17, 1000, -3]: rows 2..5 turn by 2..5 "
                 "times the frequencies instead.",
        source=rope_src("angles = positions[:, None] * theta",
                        "angles = np.arange(x.shape[-2])[:, None] * theta"),
    ),
    Wrong(
        id="e-08-rope-exponent-i-over-d",
        exercise="rope",
        cause="theta = base ** (-np.arange(d // 2) / d) uses exponent -i/d; RoPE's frequencies "
              "are base^(-2i/d): np.arange(0, d, 2) / d (or 2 * np.arange(d // 2) / d).",
        kind="frequency exponent off by a factor 2",
        wrong_on="x [1, 4] at position 1: pair 1 turns by 10000^(-1/4) = 0.1 rad instead of 0.01.",
        source=rope_src("base ** (-np.arange(0, d, 2) / d)", "base ** (-np.arange(d // 2) / d)"),
    ),
    Wrong(
        id="e-08-rope-base-hardcoded",
        exercise="rope",
        cause="The frequencies use 10000.0 written out, so the base argument is ignored. Use "
              "base ** (-np.arange(0, d, 2) / d).",
        kind="hard-coded number instead of the parameter",
        wrong_on="rope(x [1, 4], [1], base=100.0): pair 1 turns by 10000^(-1/2) instead of "
                 "100^(-1/2).",
        source=rope_src("base ** (-np.arange(0, d, 2) / d)", "10000.0 ** (-np.arange(0, d, 2) / d)"),
    ),
    Wrong(
        id="e-08-rope-positions-not-column",
        exercise="rope",
        cause="positions * theta multiplies two 1-D arrays entry by entry instead of making the "
              "[T, d/2] table of every position times every frequency; make positions a column: "
              "positions[:, None] * theta.",
        kind="[:, None] left out (broadcasting)",
        wrong_on="x [4, 8] with positions [0, 1, 2, 3] (T = d/2 = 4): row t gets the angles "
                 "[0, theta_1, 2 theta_2, 3 theta_3] for every row; other shapes raise.",
        source=rope_src("angles = positions[:, None] * theta", "angles = positions * theta"),
    ),
    Wrong(
        id="e-08-rope-second-feature-sign",
        exercise="rope",
        cause="The second feature is a sin - b cos; turning (a, b) by phi gives "
              "(a cos - b sin, a sin + b cos), with a plus in the second line.",
        kind="sign flipped (one term)",
        wrong_on="x = [[0, 1]] at position 0: returns [0, -1] instead of [0, 1].",
        source=rope_src("out[..., 1::2] = a * sin + b * cos", "out[..., 1::2] = a * sin - b * cos"),
    ),
    # ------------------------------------------------------------------ rope_scores
    Wrong(
        id="e-08-scores-keys-at-query-positions",
        exercise="rope_scores",
        cause="The keys are turned with positions_q (copied from the query line); each key "
              "turns by its own position: rope(K, positions_k, base).",
        kind="wrong argument passed (copy-paste)",
        wrong_on="Q, K [3, 8] with positions_q = [10, 11, 12] and positions_k = [0, 1, 2]: the "
                 "keys turn as if at 10..12, so the scores see offsets m - n instead of 10 + m - n "
                 "(and T_q != T_k raises).",
        source=scores_src("rope(K, positions_k, base)", "rope(K, positions_q, base)"),
    ),
    Wrong(
        id="e-08-scores-base-not-passed",
        exercise="rope_scores",
        cause="rope(Q, positions_q) and rope(K, positions_k) are called without base, so they "
              "always use 10000; pass the base on: rope(Q, positions_q, base).",
        kind="argument left at its default",
        wrong_on="rope_scores(Q, K, pq, pk, base=100.0) with Q [4, 8], K [6, 8]: the scores of "
                 "base 10000.",
        source=scores_src('''    q = rope(Q, positions_q, base)
    k = rope(K, positions_k, base)''', '''    q = rope(Q, positions_q)
    k = rope(K, positions_k)'''),
    ),
    Wrong(
        id="e-08-scores-full-transpose",
        exercise="rope_scores",
        cause="k.T reverses every axis of a batched [..., T_k, d] array; only the last two are "
              "to be swapped, np.swapaxes(k, -1, -2), so that the batch axes line up.",
        kind="transpose made full (.T on a batched array)",
        wrong_on="Q [2, 3, 8], K [2, 3, 8]: q @ k.T fails or mixes the batches instead of giving "
                 "[2, 3, 3].",
        source=scores_src("q @ np.swapaxes(k, -1, -2)", "q @ k.T"),
    ),
    Wrong(
        id="e-08-scores-not-scaled",
        exercise="rope_scores",
        cause="The dot products are returned without the division by sqrt(d) that lesson 02's "
              "scores have.",
        kind="scale left out",
        wrong_on="Q [4, 8], K [6, 8]: every score is sqrt(8) = 2.83 times too large.",
        source=scores_src("q @ np.swapaxes(k, -1, -2) / np.sqrt(d)", "q @ np.swapaxes(k, -1, -2)"),
    ),
    Wrong(
        id="e-08-scores-keys-not-turned",
        exercise="rope_scores",
        cause="Only the queries are turned; the keys are used as they are, so the scores depend "
              "on where the queries are, not on the offset. Turn both: k = rope(K, positions_k, "
              "base).",
        kind="operation applied to one operand only",
        wrong_on="Q, K [3, 8] at positions 0..2 and again at 1000..1002: the scores change, "
                 "though every offset is the same.",
        source=scores_src("k = rope(K, positions_k, base)", "k = K"),
    ),
    Wrong(
        id="e-08-scores-scaled-both-operands",
        exercise="rope_scores",
        cause="You divide both Q and K by sqrt(d) before turning them, so their product is "
              "divided by d. The sqrt(d) belongs once, on the product.",
        kind="scale applied twice",
        wrong_on="Q [4, 8], K [6, 8]: every score is 1/sqrt(8) times the right one.",
        source=scores_src('''    q = rope(Q, positions_q, base)
    k = rope(K, positions_k, base)
    return q @ np.swapaxes(k, -1, -2) / np.sqrt(d)''', '''    q = rope(Q / np.sqrt(d), positions_q, base)
    k = rope(K / np.sqrt(d), positions_k, base)
    return q @ np.swapaxes(k, -1, -2)'''),
    ),
    Wrong(
        id="e-08-scores-operands-swapped",
        exercise="rope_scores",
        cause="k @ q^T puts the keys on the rows: [..., T_k, T_q]. The scores have one row per "
              "query: q @ swapaxes(k, -1, -2).",
        kind="operands of a product swapped (transposed result)",
        wrong_on="Q [4, 8], K [6, 8]: returns shape [6, 4] instead of [4, 6].",
        source=scores_src("q @ np.swapaxes(k, -1, -2)", "k @ np.swapaxes(q, -1, -2)"),
    ),
]
