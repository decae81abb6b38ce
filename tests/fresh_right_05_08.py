"""Right but unusual answers to lessons 05 to 08, as data: ``RIGHT``, each a source a learner
types (imports, given lines, the answer and the graded helpers it calls) with what is
unusual about it.

They were written from the student notebooks, the README, ``courseware/`` and
``grader/learner/validation.py`` alone, by a tester who had not read the checks, and each
was verified against the tester's own independent computations, never against a check.
So they measure whether the checks accept right answers nobody anticipated
(``tests/test_fresh_right.py``). Keep them as they were written: an answer a check
rejects is a defect of the check, not of the answer.
"""
from typing import NamedTuple


class Right(NamedTuple):
    id: str          # short unique id
    exercise: str    # the graded name, exactly as in the notebook's check("name", ...) cell
    about: str       # one sentence: what is unusual about it
    source: str      # the whole answer cell(s) as the learner types them

# ---------------------------------------------------------------- lesson 05
_IMPORTS_05 = '''import math

import torch
import torch.nn.functional as F
from torch import nn
'''

_GIVEN_MASK_05 = '''

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

_SPLIT_HEAD_05 = '''

def split_heads(x, n_heads):
    """[B, T, d_model] -> [B, h, T, d_head]: head i gets features i*d_head:(i+1)*d_head."""
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError(f"x must be a tensor [B, T, d_model], got {getattr(x, 'shape', type(x))}")
    B, T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
'''

_MERGE_HEAD_05 = '''

def merge_heads(x):
    """[B, h, T, d_head] -> [B, T, h*d_head]: the heads of each token side by side."""
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
'''

# bodies
SPLIT_STACK = _SPLIT_HEAD_05 + '''    # one chunk of d_head features per head, stacked on a new head axis in front of T
    return torch.stack(x.chunk(n_heads, dim=-1), dim=1)
'''
SPLIT_UNFLATTEN = _SPLIT_HEAD_05 + '''    d_head = d_model // n_heads
    return x.unflatten(-1, (n_heads, d_head)).movedim(2, 1)
'''
SPLIT_RESHAPE = _SPLIT_HEAD_05 + '''    return x.reshape(B, T, n_heads, d_model // n_heads).transpose(1, 2)
'''
MERGE_CAT = _MERGE_HEAD_05 + '''    # the heads side by side along the features: head 0 first
    return torch.cat(x.unbind(dim=1), dim=-1)
'''
MERGE_FLATTEN = _MERGE_HEAD_05 + '''    return x.permute(0, 2, 1, 3).flatten(start_dim=2)
'''
MERGE_EINSUM = _MERGE_HEAD_05 + '''    return torch.einsum("bhtf->bthf", x).reshape(B, T, h * d_head)
'''

_MHA_INIT_HEAD = '''

class MultiHeadAttention(nn.Module):
    """Multi-head attention with four nn.Linear(d_model, d_model) layers w_q, w_k, w_v, w_o."""
'''
_MHA_INIT_CHECK = '''
    def __init__(self, d_model, n_heads):
        super().__init__()
        if n_heads <= 0 or d_model % n_heads:
            raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
'''
_MHA_FWD_HEAD = '''
    def forward(self, query, key, value, mask=None):
        """query [B, T_q, d_model]; key, value [B, T_k, d_model]; mask True = may attend.
        Returns (output [B, T_q, d_model], weights [B, h, T_q, T_k])."""
        B, T_q, T_k = attention_shapes(query, key, value, self.d_model)
        mask = as_attention_mask(mask, B, self.n_heads, T_q, T_k)
'''

# 1. direct calls, einsum, Q scaled before the product, torch.where for the mask
MHA_DIRECT = _IMPORTS_05 + _GIVEN_MASK_05 + SPLIT_RESHAPE + MERGE_FLATTEN + _MHA_INIT_HEAD + _MHA_INIT_CHECK + '''        self.w_q, self.w_k, self.w_v, self.w_o = (nn.Linear(d_model, d_model) for _ in range(4))
''' + _MHA_FWD_HEAD + '''        q = split_heads(self.w_q(query), self.n_heads) / math.sqrt(self.d_head)   # scale first
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = torch.einsum("bhqf,bhkf->bhqk", q, k)
        if mask is not None:
            scores = torch.where(mask, scores, torch.full_like(scores, float("-inf")))
        weights = torch.softmax(scores, dim=-1)
        heads = torch.einsum("bhqk,bhkf->bhqf", weights, v)
        return self.w_o(merge_heads(heads)), weights
'''

# 2. a lambda around split_heads, map over the three projections, log-sum-exp softmax
MHA_LAMBDA = _IMPORTS_05 + _GIVEN_MASK_05 + SPLIT_STACK + MERGE_CAT + _MHA_INIT_HEAD + _MHA_INIT_CHECK + '''        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
''' + _MHA_FWD_HEAD + '''        cut = lambda t: split_heads(t, self.n_heads)
        q, k, v = map(cut, (self.w_q(query), self.w_k(key), self.w_v(value)))
        scores = q.matmul(k.transpose(-1, -2)).div(self.d_head ** 0.5)
        if mask is not None:
            scores = scores.masked_fill(mask.logical_not(), -math.inf)
        weights = torch.exp(scores - torch.logsumexp(scores, dim=-1, keepdim=True))
        return self.w_o(merge_heads(weights.matmul(v))), weights
'''

# 3. module-level aliases of the helpers, and a softmax of the learner's own
MHA_ALIAS = _IMPORTS_05 + _GIVEN_MASK_05 + SPLIT_UNFLATTEN + MERGE_EINSUM + '''

def stable_softmax(scores):
    """Softmax over the last axis, the row maximum subtracted by broadcasting."""
    shifted = scores - scores.amax(dim=-1, keepdim=True)
    e = shifted.exp()
    return e / e.sum(dim=-1, keepdim=True)


sh, mh = split_heads, merge_heads      # short names for the two helpers
''' + _MHA_INIT_HEAD + _MHA_INIT_CHECK + '''        for name in ("w_q", "w_k", "w_v", "w_o"):
            setattr(self, name, nn.Linear(d_model, d_model))
''' + _MHA_FWD_HEAD + '''        h = self.n_heads
        q, k, v = sh(self.w_q(query), h), sh(self.w_k(key), h), sh(self.w_v(value), h)
        scores = (q @ k.mT) * (1.0 / math.sqrt(self.d_head))
        if mask is not None:
            scores = scores + torch.zeros((), dtype=scores.dtype).masked_fill(~mask, float("-inf"))
        weights = stable_softmax(scores)
        out = mh(weights @ v)
        return self.w_o(out), weights
'''

# 4. the helpers as staticmethods of the class
MHA_STATIC = _IMPORTS_05 + _GIVEN_MASK_05 + SPLIT_STACK + MERGE_FLATTEN + _MHA_INIT_HEAD + '''
    split = staticmethod(split_heads)
    merge = staticmethod(merge_heads)
''' + _MHA_INIT_CHECK + '''        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def _heads(self, layer, x):
        return self.split(layer(x), self.n_heads)
''' + _MHA_FWD_HEAD + '''        q = self._heads(self.w_q, query)
        k = self._heads(self.w_k, key)
        v = self._heads(self.w_v, value)
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = F.softmax(scores, dim=3)
        return self.w_o(self.merge(torch.matmul(weights, v))), weights
'''

# 5. functools.partial built in __init__
MHA_PARTIAL = _IMPORTS_05.replace("import math\n", "import functools\nimport math\n") + _GIVEN_MASK_05 + SPLIT_RESHAPE + MERGE_CAT + _MHA_INIT_HEAD + _MHA_INIT_CHECK + '''        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.to_heads = functools.partial(split_heads, n_heads=n_heads)
        self.from_heads = merge_heads
''' + _MHA_FWD_HEAD + '''        projected = [layer(t) for layer, t in zip((self.w_q, self.w_k, self.w_v), (query, key, value))]
        q, k, v = (self.to_heads(p) for p in projected)
        scores = torch.einsum("...qf,...kf->...qk", q, k) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask.expand_as(scores), float("-inf"))
        weights = scores.softmax(-1)
        return self.w_o(self.from_heads(weights @ v)), weights
'''

# 6. the helpers reached through a module object
MHA_MODULE_ATTR = _IMPORTS_05.replace("import math\n", "import math\nimport types\n") + _GIVEN_MASK_05 + SPLIT_UNFLATTEN + MERGE_FLATTEN + '''

heads = types.ModuleType("heads", "split_heads and merge_heads under short names")
heads.split = split_heads
heads.merge = merge_heads
''' + _MHA_INIT_HEAD + _MHA_INIT_CHECK + '''        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
''' + _MHA_FWD_HEAD + '''        q = heads.split(self.w_q(query), self.n_heads)
        k = heads.split(self.w_k(key), self.n_heads)
        v = heads.split(self.w_v(value), self.n_heads)
        scores = torch.baddbmm(
            torch.zeros(B * self.n_heads, T_q, T_k, dtype=q.dtype),
            q.reshape(B * self.n_heads, T_q, self.d_head),
            k.reshape(B * self.n_heads, T_k, self.d_head).transpose(1, 2),
            alpha=1.0 / math.sqrt(self.d_head),
        ).reshape(B, self.n_heads, T_q, T_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = scores.softmax(dim=-1)
        return self.w_o(heads.merge(weights @ v)), weights
'''

# 7. a helper object with __call__, built in __init__
MHA_HELPER_CLASS = _IMPORTS_05 + _GIVEN_MASK_05 + SPLIT_RESHAPE + MERGE_EINSUM + '''


class Heads:
    """Cuts [B, T, d_model] into n_heads heads and joins them back."""

    def __init__(self, n_heads):
        self.n_heads = n_heads

    def __call__(self, x):
        return split_heads(x, self.n_heads)

    def join(self, x):
        return merge_heads(x)
''' + _MHA_INIT_HEAD + _MHA_INIT_CHECK + '''        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.heads = Heads(n_heads)
''' + _MHA_FWD_HEAD + '''        q = self.heads(self.w_q(query))
        k = self.heads(self.w_k(key))
        v = self.heads(self.w_v(value))
        scores = q @ k.transpose(-2, -1)
        scores = scores / torch.tensor(float(self.d_head), dtype=scores.dtype).sqrt()
        if mask is not None:
            scores = torch.where(mask, scores, -torch.inf)
        top = scores.max(dim=-1, keepdim=True).values
        e = torch.exp(scores - top)
        weights = e / e.sum(dim=-1, keepdim=True)
        return self.w_o(self.heads.join(weights @ v)), weights
'''

_COPY_HEAD = '''

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

COPY_ZIP = '''import torch
from torch import nn
''' + _COPY_HEAD + '''    layers = (ours.w_q, ours.w_k, ours.w_v)
    weights = theirs.in_proj_weight.view(3, d, d).unbind(0)        # [3d, d] -> three [d, d]
    biases = (theirs.in_proj_bias.view(3, d).unbind(0) if theirs.in_proj_bias is not None
              else (None, None, None))
    with torch.no_grad():
        for layer, w, b in zip(layers + (ours.w_o,), weights + (theirs.out_proj.weight,),
                               biases + (theirs.out_proj.bias,)):
            layer.weight.copy_(w)
            if b is None:
                layer.bias.zero_()       # torch has no bias here: ours adds nothing either
            else:
                layer.bias.copy_(b)
    return ours
'''

COPY_STATE_DICT = '''import torch
from torch import nn
''' + _COPY_HEAD + '''    W, b = theirs.in_proj_weight, theirs.in_proj_bias
    new = {}
    for i, name in enumerate(("w_q", "w_k", "w_v")):
        new[f"{name}.weight"] = W[i * d:(i + 1) * d]
        new[f"{name}.bias"] = torch.zeros(d) if b is None else b[i * d:(i + 1) * d]
    new["w_o.weight"] = theirs.out_proj.weight
    new["w_o.bias"] = (torch.zeros(d) if theirs.out_proj.bias is None else theirs.out_proj.bias)
    # load_state_dict copies each entry into the parameter that is already there
    # (param.copy_ under torch.no_grad()), so ours keeps its own parameters
    ours.load_state_dict({k: v.detach() for k, v in new.items()}, strict=False)
    return ours
'''

_HOBO_HEAD = '''

def heads_one_by_one(x, mha):
    """Self-attention of mha on x [B, T, d_model], with a Python loop over the heads."""
    if x.dim() != 3 or x.shape[-1] != mha.d_model:
        raise ValueError(f"x must be [B, T, d_model={mha.d_model}], got shape {tuple(x.shape)}")
    d_head = mha.d_model // mha.n_heads
    outputs, maps = [], []
'''

HOBO_LINEAR = '''import math

import torch
import torch.nn.functional as F
from torch import nn
''' + _HOBO_HEAD + '''    for i in range(mha.n_heads):
        rows = slice(i * d_head, (i + 1) * d_head)
        q, k, v = (F.linear(x, layer.weight[rows], layer.bias[rows])
                   for layer in (mha.w_q, mha.w_k, mha.w_v))
        w = F.softmax(q @ k.transpose(-1, -2) / math.sqrt(d_head), dim=-1)
        outputs.append(w @ v)
        maps.append(w)
    return mha.w_o(torch.cat(outputs, dim=-1)), torch.stack(maps, dim=1)
'''

HOBO_EINSUM = '''import math

import torch
import torch.nn.functional as F
from torch import nn
''' + _HOBO_HEAD + '''    B, T, _ = x.shape
    Wq, Wk, Wv = mha.w_q.weight, mha.w_k.weight, mha.w_v.weight
    bq, bk, bv = mha.w_q.bias, mha.w_k.bias, mha.w_v.bias
    head = 0
    while head < mha.n_heads:
        lo, hi = head * d_head, (head + 1) * d_head
        q = (torch.einsum("btm,fm->btf", x, Wq[lo:hi]) + bq[lo:hi]) / math.sqrt(d_head)
        k = torch.einsum("btm,fm->btf", x, Wk[lo:hi]) + bk[lo:hi]
        v = torch.einsum("btm,fm->btf", x, Wv[lo:hi]) + bv[lo:hi]
        scores = torch.einsum("bqf,bkf->bqk", q, k)
        w = (scores - scores.logsumexp(dim=-1, keepdim=True)).exp()
        outputs.append(torch.einsum("bqk,bkf->bqf", w, v))
        maps.append(w)
        head += 1
    joined = torch.cat(outputs, dim=2)                           # head 0's features first
    out = F.linear(joined, mha.w_o.weight, mha.w_o.bias)         # what mha.w_o computes
    return out, torch.stack(maps, dim=1)
'''

_COUNT_HEAD = '''

def mha_parameter_count(d_model, n_heads):
    """The number of learned numbers in MultiHeadAttention(d_model, n_heads)."""
    for name, value in (("d_model", d_model), ("n_heads", n_heads)):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
'''

COUNT_PER_HEAD = '''import math

import torch
from torch import nn
''' + _COUNT_HEAD + '''    d_head = d_model // n_heads
    per_head = 3 * (d_model * d_head + d_head)        # its rows of w_q, w_k, w_v and their biases
    w_o = d_model * d_model + d_model                 # shared by all heads
    return n_heads * per_head + w_o
'''

COUNT_SHAPES = '''import math

import torch
from torch import nn
''' + _COUNT_HEAD + '''    layer_shapes = {"w_q": (d_model, d_model), "w_k": (d_model, d_model),
                    "w_v": (d_model, d_model), "w_o": (d_model, d_model)}
    return sum(math.prod(shape) + shape[0] for shape in layer_shapes.values())   # weight + bias
'''

_VDU_HEAD = '''

def value_down_up(mha, head):
    """(down [d_model, d_head], up [d_head, d_model]) of one head's value path."""
    if isinstance(head, bool) or not isinstance(head, int) or not 0 <= head < mha.n_heads:
        raise ValueError(f"head must be an int from 0 to {mha.n_heads - 1}, got {head!r}")
    d_head = mha.d_model // mha.n_heads
    features = slice(head * d_head, (head + 1) * d_head)   # this head's d_head features
'''

VDU_TRANSPOSE_FIRST = '''import torch
from torch import nn
''' + _VDU_HEAD + '''    W_v = mha.w_v.weight.detach().T          # row convention: [in, out] = [d_model, d_model]
    W_o = mha.w_o.weight.detach().T
    down = W_v[:, features].clone()          # the value features this head keeps (columns)
    up = W_o[features, :].clone()            # the input features of w_o it feeds (rows)
    return down, up
'''

VDU_PROBE = '''import torch
import torch.nn.functional as F
from torch import nn
''' + _VDU_HEAD + '''    with torch.no_grad():
        weight_v, weight_o = mha.w_v.weight, mha.w_o.weight
        every_input = torch.eye(mha.d_model, dtype=weight_v.dtype)    # one row per input feature
        down = F.linear(every_input, weight_v)[:, features]        # x D for each basis row x
        only_this_head = every_input[features]                      # head hands y = e_j, others 0
        up = F.linear(only_this_head, weight_o)                     # what w_o adds, no bias
    return down, up
'''

R05 = [
    ("f32-05-split-chunk-stack", "split_heads", "chunks the features into n_heads pieces and stacks them on a new axis 1 instead of reshape + transpose", _IMPORTS_05 + SPLIT_STACK),
    ("f32-05-split-unflatten-movedim", "split_heads", "unflattens the last axis into (h, d_head) and moves the head axis with movedim", _IMPORTS_05 + SPLIT_UNFLATTEN),
    ("f32-05-merge-unbind-cat", "merge_heads", "unbinds the head axis and concatenates the heads along the features", _IMPORTS_05 + MERGE_CAT),
    ("f32-05-merge-einsum-reshape", "merge_heads", "moves the head axis with an einsum permutation, then reshapes", _IMPORTS_05 + MERGE_EINSUM),
    ("f32-05-mha-direct-einsum", "MultiHeadAttention", "direct calls to split_heads/merge_heads, layers made by a generator, queries scaled before an einsum product, torch.where mask", MHA_DIRECT),
    ("f32-05-mha-lambda-split", "MultiHeadAttention", "split_heads reached through a local lambda mapped over the projections; softmax as exp(scores - logsumexp)", MHA_LAMBDA),
    ("f32-05-mha-alias-own-softmax", "MultiHeadAttention", "module-level aliases sh/mh for the helpers, layers made by setattr, an additive -inf mask and a softmax of the learner's own", MHA_ALIAS),
    ("f32-05-mha-staticmethod", "MultiHeadAttention", "split_heads/merge_heads bound as staticmethods of the class and called through self", MHA_STATIC),
    ("f32-05-mha-partial", "MultiHeadAttention", "functools.partial(split_heads, n_heads=...) stored in __init__, merge_heads stored as an attribute", MHA_PARTIAL),
    ("f32-05-mha-module-attr-baddbmm", "MultiHeadAttention", "the helpers reached as attributes of a types.ModuleType object; scores by torch.baddbmm with alpha = 1/sqrt(d_head)", MHA_MODULE_ATTR),
    ("f32-05-mha-helper-class", "MultiHeadAttention", "a helper object with __call__ (split) and join (merge) built in __init__, hand-written softmax", MHA_HELPER_CLASS),
    ("f32-05-copy-view-unbind-zip", "copy_from_torch", "views in_proj_weight as [3, d, d], unbinds it and copies with one zip loop over the four layers", COPY_ZIP),
    ("f32-05-copy-load-state-dict", "copy_from_torch", "builds a partial state dict of slices and lets load_state_dict copy them into the existing parameters", COPY_STATE_DICT),
    ("f32-05-hobo-flinear", "heads_one_by_one", "F.linear on each head's row slices of the weights, generator over the three layers", HOBO_LINEAR),
    ("f32-05-hobo-einsum-while", "heads_one_by_one", "a while loop over heads, einsum projections with the query scaled first, logsumexp softmax, w_o applied as F.linear", HOBO_EINSUM),
    ("f32-05-count-per-head", "mha_parameter_count", "counts each head's rows of w_q, w_k, w_v and their biases, then adds w_o", COUNT_PER_HEAD),
    ("f32-05-count-shapes-prod", "mha_parameter_count", "a dict of the four weight shapes summed with math.prod plus one bias per output", COUNT_SHAPES),
    ("f32-05-vdu-transpose-first", "value_down_up", "transposes the weights to the row convention first, then slices columns of W_v and rows of W_o (detached clones)", VDU_TRANSPOSE_FIRST),
    ("f32-05-vdu-probe-identity", "value_down_up", "probes the layers with identity rows through F.linear (no bias), as the notebook's cell does with one input feature", VDU_PROBE),
]

# ---------------------------------------------------------------- lesson 06
_IMPORTS_06 = '''import time

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

_BLOCK_HEAD = '''

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

BLOCK_LOOP = _BLOCK_HEAD + '''        attend = lambda h: self.attn(h, h, h, need_weights=False)[0]
        for norm, sublayer in ((self.ln1, attend), (self.ln2, self.mlp)):
            update = sublayer(norm(x))
            x = x + update if self.residual else update
        return x
'''

BLOCK_SKIP_ZERO = _BLOCK_HEAD + '''        skip = (lambda t: t) if self.residual else (lambda t: 0)
        h = self.ln1(x)
        a, _ = self.attn(query=h, key=h, value=h)
        x = skip(x) + a
        x = skip(x) + self.mlp(self.ln2(x))
        return x
'''

BLOCK_PLAIN_METHODS = _BLOCK_HEAD + '''        x = self._attention_sublayer(x)
        return self._mlp_sublayer(x)

    def _attention_sublayer(self, x):
        h = self.ln1(x)
        out = self.attn(h, h, h, need_weights=False)[0]
        return torch.add(x, out) if self.residual else out

    def _mlp_sublayer(self, x):
        out = self.mlp(self.ln2(x))
        return x.add(out) if self.residual else out
'''

_TT_HEAD = '''

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
_TT_TAIL_INIT = '''        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)
'''
_TT_FWD = '''
    def forward(self, tokens):
        tokens = as_tokens(tokens, self.vocab_size, self.seq_len)   # ValueError for bad ids or shapes
'''

TT_LISTCOMP = _TT_HEAD + '''        self.blocks = nn.ModuleList([Block(d_model, n_heads, d_ff, residual) for _ in range(n_layers)])
''' + _TT_TAIL_INIT + _TT_FWD + '''        T = tokens.shape[1]
        x = self.tok_emb(tokens) + self.pos_emb.weight[:T]     # rows 0..T-1 of the position table
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))
'''

TT_SUBCLASS = '''

class Layer(Block):
    """A Block whose sizes come from a dict; nothing else changes."""

    def __init__(self, sizes, residual):
        super().__init__(sizes["d_model"], sizes["n_heads"], sizes["d_ff"], residual=residual)
''' + _TT_HEAD + '''        sizes = dict(d_model=d_model, n_heads=n_heads, d_ff=d_ff)
        self.blocks = nn.ModuleList(Layer(sizes, residual) for _ in range(n_layers))
''' + _TT_TAIL_INIT + _TT_FWD + '''        positions = torch.arange(tokens.shape[-1], device=tokens.device)
        x = self.tok_emb(tokens) + self.pos_emb(positions)[None]
        x = functools.reduce(lambda stream, block: block(stream), self.blocks, x)
        return self.head(self.ln_f(x))
'''

TT_FACTORY = _TT_HEAD + '''        self.blocks = nn.ModuleList(
            self.make_block(d_model, n_heads, d_ff, residual) for _ in range(n_layers))
''' + _TT_TAIL_INIT + '''
    @staticmethod
    def make_block(d_model, n_heads, d_ff, residual):
        """The factory of the stack: one Block with this model's residual flag."""
        return Block(d_model=d_model, n_heads=n_heads, d_ff=d_ff, residual=residual)
''' + _TT_FWD + '''        batch, T = tokens.shape
        where = torch.arange(T).expand(batch, T)
        x = F.embedding(tokens, self.tok_emb.weight) + F.embedding(where, self.pos_emb.weight)
        for i in range(len(self.blocks)):
            x = self.blocks[i](x)
        x = self.ln_f(x)
        return self.head(x)
'''

TT_LOOP_APPEND = _TT_HEAD + '''        self.blocks = nn.ModuleList()
        new_block = functools.partial(Block, d_model, n_heads, d_ff, residual=residual)
        while len(self.blocks) < n_layers:
            self.blocks.append(new_block())
''' + _TT_TAIL_INIT + _TT_FWD + '''        x = self.tok_emb(tokens)
        x = x + self.pos_emb(torch.arange(x.shape[1]))
        for block in iter(self.blocks):
            x = block(x)
        return self.head(self.ln_f(x))
'''

_TS_HEAD = '''

def token_similarity(h):
    """Mean cosine similarity between distinct tokens of each sequence, averaged over the
    batch. h: [..., T, d] with T >= 2 -> a Python float."""
    h = as_hidden(h)    # a float tensor; ValueError if a sequence has fewer than two tokens
'''

TS_SUM_TRICK = _TS_HEAD + '''    u = F.normalize(h.double(), dim=-1)                   # unit token vectors
    T = u.shape[-2]
    total = u.sum(dim=-2)                                 # sum of the unit vectors of a sequence
    # sum over i != j of u_i . u_j = |sum_i u_i|^2 - sum_i |u_i|^2
    pairs = total.pow(2).sum(-1) - u.pow(2).sum(dim=(-2, -1))
    return (pairs / (T * (T - 1))).mean().item()
'''

TS_COSINE_BROADCAST = _TS_HEAD + '''    T = h.shape[-2]
    sims = F.cosine_similarity(h.unsqueeze(-2), h.unsqueeze(-3), dim=-1)   # [..., T, T]
    off_diagonal = ~torch.eye(T, dtype=torch.bool)
    return float(sims[..., off_diagonal].mean())
'''

TS_NUMPY_TRACE = _TS_HEAD + '''    a = h.numpy().astype(np.float64)
    a = a.reshape(-1, *a.shape[-2:])                      # [batch, T, d], one batch axis
    T = a.shape[1]
    unit = a / np.linalg.norm(a, axis=-1, keepdims=True)
    gram = np.einsum("btd,bsd->bts", unit, unit)
    off = gram.sum(axis=(1, 2)) - np.trace(gram, axis1=1, axis2=2)
    return float(np.mean(off / (T * (T - 1))))
'''

_TRAIN_HEAD = '''

def train(model, task, steps, seed):
    """Train model in place; return the loss of every step, as a list of floats."""
    steps, seed = check_steps_and_seed(steps, seed)
    generator = torch.Generator().manual_seed(seed)        # every batch comes from here
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    model.train()
    losses = []
'''

TRAIN_PROGRESS = _TRAIN_HEAD + '''    for _ in progress(range(steps), "training"):
        tokens, targets = task.sample(generator)
        logits = model(tokens)
        loss = F.cross_entropy(logits.flatten(0, -2), targets.flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
'''

TRAIN_NLL_WHILE = _TRAIN_HEAD + '''    def step_loss(tokens, targets):
        logits = model(tokens)
        vocab = logits.shape[-1]
        log_probs = F.log_softmax(logits.reshape(-1, vocab), dim=-1)
        return F.nll_loss(log_probs, targets.reshape(-1))

    while len(losses) < steps:
        loss = step_loss(*task.sample(generator))
        model.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses += [float(loss.detach())]
    return losses
'''

_RA_HEAD = '''

def run_ablation(depths, steps, seed):
    """The depth sweep: one row (a dict) per run, two runs per depth."""
    depths = check_depths(depths)
    steps, seed = check_steps_and_seed(steps, seed)
    probe, _ = TASK.sample(torch.Generator().manual_seed(seed))    # fixed tokens to measure on
    rows = []
'''

RA_NESTED = _RA_HEAD + '''    def similarities(model):
        return [token_similarity(stream) for stream in layer_outputs(model, probe)]

    for depth in depths:
        for residual in (True, False):
            torch.manual_seed(seed)
            model = TinyTransformer(**MODEL, n_layers=depth, residual=residual)
            before = similarities(model)
            losses = train(model, TASK, steps, seed)
            rows.append({"depth": depth, "residual": residual, "losses": losses,
                         "final_loss": float(np.mean(losses[-10:])),
                         "similarity_init": before, "similarity_trained": similarities(model)})
    return rows
'''

RA_PRODUCT = _RA_HEAD + '''    for depth, residual in itertools.product(depths, (True, False)):
        torch.random.manual_seed(seed)          # both runs of a depth start from the same weights
        model = TinyTransformer(n_layers=depth, residual=residual, **MODEL)
        row = dict(depth=depth, residual=residual)
        row["similarity_init"] = list(map(token_similarity, layer_outputs(model, probe)))
        row["losses"] = train(model, TASK, steps, seed)
        last = row["losses"][-10:]
        row["final_loss"] = sum(last) / len(last)
        row["similarity_trained"] = list(map(token_similarity, layer_outputs(model, probe)))
        rows.append(row)
    return rows
'''

_IMPORTS_06_FT = _IMPORTS_06.replace("import time\n", "import functools\nimport time\n")
_IMPORTS_06_IT = _IMPORTS_06.replace("import time\n", "import itertools\nimport time\n")

R06 = [
    ("f32-06-block-sublayer-loop", "Block", "loops over the two (norm, sublayer) pairs, attention reached through a lambda with need_weights=False", _IMPORTS_06 + BLOCK_LOOP),
    ("f32-06-block-skip-lambda-zero", "Block", "the skip is a lambda that returns the stream or the int 0, attention called with keyword arguments", _IMPORTS_06 + BLOCK_SKIP_ZERO),
    ("f32-06-block-two-methods", "Block", "each sublayer is a method of its own, torch.add / Tensor.add for the skips", _IMPORTS_06 + BLOCK_PLAIN_METHODS),
    ("f32-06-tt-listcomp", "TinyTransformer", "blocks from a list comprehension; positions read as a slice of pos_emb.weight", _IMPORTS_06 + BLOCK_LOOP + TT_LISTCOMP),
    ("f32-06-tt-subclass-reduce", "TinyTransformer", "blocks are a subclass of Block taking a sizes dict, built from a generator; the stack applied with functools.reduce", _IMPORTS_06_FT + BLOCK_SKIP_ZERO + TT_SUBCLASS),
    ("f32-06-tt-factory-staticmethod", "TinyTransformer", "a staticmethod factory makes each Block; embeddings by F.embedding on the tables; blocks indexed in a range loop", _IMPORTS_06 + BLOCK_PLAIN_METHODS + TT_FACTORY),
    ("f32-06-tt-modulelist-loop-partial", "TinyTransformer", "an empty nn.ModuleList filled in a while loop from a functools.partial of Block", _IMPORTS_06_FT + BLOCK_LOOP + TT_LOOP_APPEND),
    ("f32-06-ts-sum-of-units", "token_similarity", "uses |sum of unit vectors|^2 minus the sum of their squared norms instead of a T x T Gram matrix", _IMPORTS_06 + TS_SUM_TRICK),
    ("f32-06-ts-cosine-broadcast", "token_similarity", "F.cosine_similarity broadcast over a [..., T, T] grid, off-diagonal entries picked with a boolean mask", _IMPORTS_06 + TS_COSINE_BROADCAST),
    ("f32-06-ts-numpy-trace", "token_similarity", "in NumPy: batch axes flattened, einsum Gram matrix minus its trace", _IMPORTS_06 + TS_NUMPY_TRACE),
    ("f32-06-train-progress", "train", "loops over progress(range(steps)) with flatten(0, -2) for the logits", _IMPORTS_06 + TRAIN_PROGRESS),
    ("f32-06-train-nll-while", "train", "a while loop on len(losses), loss as nll_loss of log_softmax in a nested helper, model.zero_grad(set_to_none=True)", _IMPORTS_06 + TRAIN_NLL_WHILE),
    ("f32-06-ablation-nested", "run_ablation", "nested loops with a local similarities helper; uses the learner's Block, TinyTransformer, token_similarity and train", _IMPORTS_06 + BLOCK_LOOP + TT_LISTCOMP + TS_SUM_TRICK + TRAIN_PROGRESS + RA_NESTED),
    ("f32-06-ablation-product", "run_ablation", "itertools.product over depths and flags, rows filled key by key, final loss as sum/len", _IMPORTS_06_IT + BLOCK_SKIP_ZERO + TT_LISTCOMP + TS_COSINE_BROADCAST + TRAIN_NLL_WHILE + RA_PRODUCT),
]

# ---------------------------------------------------------------- lesson 07
_IMPORTS_07 = '''import math

import numpy as np
import torch
import torch.nn.functional as F

from grader.learner.validation import positive_int
from courseware.long_attention import score_blocks, one_query, tile_inputs, key_value_rows, decode_inputs
'''

_OSS_HEAD = '''

def online_softmax_stats(scores_blocks):
    """(m, s): the largest score, and the sum of exp(x - m) over every score x, in one pass.

    scores_blocks comes as a stream: each block once, in order, read with one for loop
    (it has no len() and no index).
    """
    blocks = score_blocks(scores_blocks)      # given: yields each block, checked, one at a time
'''

OSS_BRANCH = _OSS_HEAD + '''    m, s = -math.inf, 0.0
    for block in blocks:
        top = float(np.max(block))
        if top == -math.inf:              # a block of -inf scores adds e^-inf = 0 to the sum
            continue
        if top <= m:                      # the maximum stays: just add the block's terms
            s += float(np.exp(block - m).sum())
        else:                             # a new maximum: rescale what is already summed
            s = s * math.exp(m - top) + float(np.exp(block - top).sum())
            m = top
    return m, s
'''

OSS_ACCUMULATOR = _OSS_HEAD + '''    class Running:
        """The running maximum and the running sum of exp(x - maximum)."""

        def __init__(self):
            self.m, self.s = -np.inf, 0.0

        def update(self, block):
            new_m = max(self.m, block.max())
            if np.isneginf(new_m):
                return
            self.s = self.s * np.exp(self.m - new_m) + np.exp(block - new_m).sum()
            self.m = new_m

    running = Running()
    for block in blocks:
        running.update(block)
    return float(running.m), float(running.s)
'''

OSS_LOGSPACE = _OSS_HEAD + '''    m, log_s = -np.inf, -np.inf          # log_s = log of the sum of e^x over the scores seen so far
    for block in blocks:
        m = max(m, float(block.max()))
        log_s = np.logaddexp(log_s, np.logaddexp.reduce(block))
    return m, float(np.exp(log_s - m))       # the sum of e^(x - m) is e^(log_s - m)
'''

_AOP_HEAD = '''

def attention_one_pass(q, K, V, block):
    """Attention of one query q [d_k] over K [T_k, d_k], V [T_k, d_v], reading `block` keys at a time.

    One pass: each block of rows of K and V is read while it is the current block, never after.
    """
    q, K, V = one_query(q, K, V)              # given: checks the shapes, never copies K or V
    block = positive_int(block, "block")
'''

AOP_SCALED_Q = _AOP_HEAD + '''    q_scaled = q / math.sqrt(q.shape[0])     # scale the query once, not every block of scores
    m, s, o = -math.inf, 0.0, 0.0            # o becomes a [d_v] vector on the first block
    for start in range(0, K.shape[0], block):
        x = K[start:start + block] @ q_scaled                    # this block's scores
        m_new = max(m, float(x.max()))
        shrink = math.exp(m - m_new)
        p = np.exp(x - m_new)
        s = s * shrink + p.sum()
        o = o * shrink + p @ V[start:start + block]
        m = m_new
    return o / s
'''

AOP_GENERATOR_EINSUM = _AOP_HEAD + '''    def pairs():
        j = 0
        while j < len(K):
            yield K[j:j + block], V[j:j + block]
            j += block

    scale = 1.0 / math.sqrt(K.shape[1])
    m = -np.inf
    s = 0.0
    o = np.zeros(V.shape[1], dtype=np.result_type(q, K, V))
    for K_b, V_b in pairs():
        x = np.einsum("jd,d->j", K_b, q) * scale
        top = x.max()
        if top > m:                                   # rescale only when the maximum grows
            factor = np.exp(m - top)
            s, o, m = s * factor, o * factor, top
        w = np.exp(x - m)
        s += w.sum()
        o += np.einsum("j,jv->v", w, V_b)
    return o / s
'''

AOP_NORMALISED = _AOP_HEAD + '''    d_k = q.shape[-1]
    m, s = -np.inf, 0.0
    out = np.zeros(V.shape[-1], dtype=np.result_type(q, K, V))   # kept divided by s: a running average
    for j0 in range(0, len(K), block):
        j1 = min(j0 + block, len(K))
        x = np.dot(K[j0:j1], q) / math.sqrt(d_k)
        m_new = np.maximum(m, x.max())
        old = s * np.exp(m - m_new)          # the old sum, relative to the new maximum
        w = np.exp(x - m_new)
        s = old + w.sum()
        out = (old / s) * out + (w / s) @ V[j0:j1]
        m = m_new
    return out
'''

_TA_HEAD = '''

def tiled_attention(Q, K, V, block_q, block_k, causal=False):
    """(output, skipped): attention computed tile by tile; with causal=True, tiles wholly in the future are skipped."""
    Q, K, V, batch = tile_inputs(Q, K, V, causal)   # given: checks; batch is the broadcast batch shape
    block_q, block_k = positive_int(block_q, "block_q"), positive_int(block_k, "block_k")
'''

TA_BREAK = _TA_HEAD + '''    T_q, T_k, d_v = Q.shape[-2], K.shape[-2], V.shape[-1]
    scale = 1.0 / math.sqrt(Q.shape[-1])
    out = np.empty(batch + (T_q, d_v), dtype=np.result_type(Q, K, V))
    n_key_tiles = -(-T_k // block_k)
    skipped = 0
    for i0 in range(0, T_q, block_q):
        i1 = min(i0 + block_q, T_q)
        Q_i = Q[..., i0:i1, :] * scale
        m = np.full(batch + (i1 - i0, 1), -np.inf)
        s = np.zeros(batch + (i1 - i0, 1))
        o = np.zeros(batch + (i1 - i0, d_v))
        for J, j0 in enumerate(range(0, T_k, block_k)):
            if causal and j0 > i1 - 1:          # every key after every query, and so all later tiles
                skipped += n_key_tiles - J
                break
            j1 = min(j0 + block_k, T_k)
            S = Q_i @ np.swapaxes(K[..., j0:j1, :], -1, -2)
            if causal and j1 - 1 > i0:          # the diagonal crosses this tile
                keep = np.arange(j0, j1)[None, :] <= np.arange(i0, i1)[:, None]
                S = np.where(keep, S, -np.inf)
            m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
            c = np.exp(m - m_new)
            P = np.exp(S - m_new)
            s = s * c + P.sum(axis=-1, keepdims=True)
            o = o * c + P @ V[..., j0:j1, :]
            m = m_new
        out[..., i0:i1, :] = o / s
    return out, skipped
'''

TA_KEY_OUTER = _TA_HEAD + '''    T_q, T_k, d_v = Q.shape[-2], K.shape[-2], V.shape[-1]
    d_k = Q.shape[-1]
    # FlashAttention-1's order: key blocks outside, query blocks inside; the running
    # maximum and sum are one column per query, and the output is the accumulator
    m = np.full(batch + (T_q, 1), -np.inf)
    s = np.zeros(batch + (T_q, 1))
    out = np.zeros(batch + (T_q, d_v), dtype=np.result_type(Q, K, V))
    skipped = 0
    for j0 in range(0, T_k, block_k):
        j1 = min(j0 + block_k, T_k)
        K_j = K[..., j0:j1, :]
        V_j = V[..., j0:j1, :]
        first = 0
        if causal:
            first = j0 // block_q                # query blocks 0..first-1 end before key j0
            skipped += first
        for i0 in range(first * block_q, T_q, block_q):
            i1 = min(i0 + block_q, T_q)
            S = np.einsum("...qd,...kd->...qk", Q[..., i0:i1, :], K_j) / math.sqrt(d_k)
            if causal:
                future = np.arange(j0, j1) > np.arange(i0, i1)[:, None]
                if future.any():
                    S = np.where(future, -np.inf, S)
            rows = (Ellipsis, slice(i0, i1), slice(None))
            m_new = np.maximum(m[rows], S.max(-1, keepdims=True))
            c = np.exp(m[rows] - m_new)
            P = np.exp(S - m_new)
            s[rows] = s[rows] * c + P.sum(-1, keepdims=True)
            out[rows] = out[rows] * c + np.einsum("...qk,...kv->...qv", P, V_j)
            m[rows] = m_new
    out /= s
    return out, skipped
'''

TA_BACKWARDS = _TA_HEAD + '''    T_q, T_k = Q.shape[-2], K.shape[-2]
    d_k, d_v = Q.shape[-1], V.shape[-1]
    n_k = -(-T_k // block_k)
    out = np.empty(batch + (T_q, d_v), dtype=np.result_type(Q, K, V))
    skipped = 0
    for i0 in range(0, T_q, block_q):
        i1 = min(i0 + block_q, T_q)
        last = n_k - 1 if not causal else (i1 - 1) // block_k   # the last key tile with a visible key
        skipped += n_k - 1 - last
        m = np.full(batch + (i1 - i0, 1), -np.inf)
        s = np.zeros_like(m)
        o = np.zeros(batch + (i1 - i0, d_v))
        for J in range(last, -1, -1):          # from the diagonal back to key 0
            j0, j1 = J * block_k, min((J + 1) * block_k, T_k)
            S = np.matmul(Q[..., i0:i1, :], np.swapaxes(K[..., j0:j1, :], -1, -2)) / math.sqrt(d_k)
            if causal:
                S = np.where(np.arange(j0, j1) <= np.arange(i0, i1)[:, None], S, -np.inf)
            m_new = np.maximum(m, S.max(-1, keepdims=True))
            # a row may have seen no visible key yet (m_new = -inf): shift by 0 there
            shift = np.where(np.isneginf(m_new), 0.0, m_new)
            c = np.exp(m - shift)
            P = np.exp(S - shift)
            s = s * c + P.sum(-1, keepdims=True)
            o = o * c + P @ V[..., j0:j1, :]
            m = m_new
        out[..., i0:i1, :] = o / s
    return out, skipped
'''

_KV_HEAD = '''

class KVCache:
    """The keys [t, d_k] and values [t, d_v] of the t positions seen so far."""
'''

KV_LIST = _KV_HEAD + '''
    def __init__(self):
        self._key_blocks, self._value_blocks = [], []
        self._t = 0

    def __len__(self):
        """The number of positions in the cache."""
        return self._t

    def append(self, k, v):
        """Add one position (k [d_k], v [d_v]) or a block of them ([n, d_k], [n, d_v])."""
        k, v = key_value_rows(k, v)    # given: both as blocks of rows [n, d], one value per key
        self._key_blocks.append(np.array(k, copy=True))
        self._value_blocks.append(np.array(v, copy=True))
        self._t += k.shape[0]

    def _joined(self, blocks, what):
        if not blocks:
            raise ValueError(f"the cache is empty: there are no {what} yet")
        return np.concatenate(blocks, axis=0)

    @property
    def keys(self):
        """Every key so far, one row per position: [t, d_k]."""
        return self._joined(self._key_blocks, "keys")

    @property
    def values(self):
        """Every value so far, one row per position: [t, d_v]."""
        return self._joined(self._value_blocks, "values")
'''

KV_NP_APPEND = _KV_HEAD + '''
    def __init__(self):
        self.store = {"keys": None, "values": None}

    def __len__(self):
        """The number of positions in the cache."""
        k = self.store["keys"]
        return 0 if k is None else k.shape[0]

    def append(self, k, v):
        """Add one position (k [d_k], v [d_v]) or a block of them ([n, d_k], [n, d_v])."""
        k, v = key_value_rows(k, v)    # given: both as blocks of rows [n, d], one value per key
        for name, rows in (("keys", k), ("values", v)):
            old = self.store[name]
            self.store[name] = rows.copy() if old is None else np.append(old, rows, axis=0)

    def _read(self, name):
        if self.store[name] is None:
            raise ValueError(f"an empty cache has no {name}")
        return self.store[name]

    keys = property(lambda self: self._read("keys"), doc="Every key so far: [t, d_k].")
    values = property(lambda self: self._read("values"), doc="Every value so far: [t, d_v].")
'''

KV_DOUBLING = _KV_HEAD + '''
    def __init__(self):
        self._k = self._v = None    # buffers with room to spare; rows 0..t-1 are in use
        self._t = 0

    def __len__(self):
        """The number of positions in the cache."""
        return self._t

    @staticmethod
    def _room(buffer, rows, t):
        """buffer with space for rows after its first t rows (capacity doubles when full)."""
        need = t + rows.shape[0]
        if buffer is None:
            buffer = np.empty((max(need, 4), rows.shape[1]), dtype=rows.dtype)
        elif need > buffer.shape[0] or np.result_type(buffer, rows) != buffer.dtype:
            bigger = np.empty((max(need, 2 * buffer.shape[0]), buffer.shape[1]),
                              dtype=np.result_type(buffer, rows))
            bigger[:t] = buffer[:t]
            buffer = bigger
        buffer[t:need] = rows
        return buffer

    def append(self, k, v):
        """Add one position (k [d_k], v [d_v]) or a block of them ([n, d_k], [n, d_v])."""
        k, v = key_value_rows(k, v)    # given: both as blocks of rows [n, d], one value per key
        if self._k is not None and (k.shape[1] != self._k.shape[1] or v.shape[1] != self._v.shape[1]):
            raise ValueError(f"k and v must have {self._k.shape[1]} and {self._v.shape[1]} features "
                             f"like the cached ones, got {k.shape[1]} and {v.shape[1]}")
        self._k = self._room(self._k, k, self._t)
        self._v = self._room(self._v, v, self._t)
        self._t += k.shape[0]

    def _in_use(self, buffer):
        if buffer is None:
            raise ValueError("the cache is empty: append a key and a value first")
        view = buffer[:self._t]
        view.flags.writeable = False     # a read-only window on the cached rows
        return view

    @property
    def keys(self):
        """Every key so far, one row per position: [t, d_k]."""
        return self._in_use(self._k)

    @property
    def values(self):
        """Every value so far, one row per position: [t, d_v]."""
        return self._in_use(self._v)
'''

_DS_HEAD = '''

def decode_step(x_t, cache, W_q, W_k, W_v):
    """Causal self-attention for the new token x_t [d_model] (or new tokens [n, d_model]), reusing the cache."""
    x, W_q, W_k, W_v = decode_inputs(x_t, cache, W_q, W_k, W_v)   # given: checks the shapes
'''

DS_TRI = _DS_HEAD + '''    one = x.ndim == 1
    X = np.atleast_2d(x)
    n, t = X.shape[0], len(cache)
    cache.append(X @ W_k, X @ W_v)                 # before attending: a token sees itself
    K, V = cache.keys, cache.values                # [t + n, d_k], [t + n, d_v]
    S = (X @ W_q) @ K.T / math.sqrt(W_q.shape[1])
    visible = np.tri(n, t + n, k=t, dtype=bool)    # new token i sees positions 0..t+i
    S = np.where(visible, S, -np.inf)
    W = np.exp(S - S.max(axis=1, keepdims=True))
    out = (W / W.sum(axis=1, keepdims=True)) @ V
    return out[0] if one else out
'''

DS_ONE_BY_ONE = _DS_HEAD + '''    rows = x.reshape(-1, x.shape[-1])
    scale = 1.0 / math.sqrt(W_k.shape[1])
    outs = []
    for row in rows:                               # new token i goes in, then attends over 0..t+i
        cache.append(row @ W_k, row @ W_v)
        scores = cache.keys @ (row @ W_q * scale)
        weights = np.exp(scores - scores.max())
        outs.append(weights @ cache.values / weights.sum())
    out = np.stack(outs)
    return out[0] if x.ndim == 1 else out
'''

DS_LOGADDEXP = _DS_HEAD + '''    X = x[None, :] if x.ndim == 1 else x
    t = len(cache)
    n = len(X)
    q, k, v = (np.einsum("nm,md->nd", X, W) for W in (W_q, W_k, W_v))
    cache.append(k, v)
    scores = np.einsum("nd,sd->ns", q / math.sqrt(q.shape[-1]), cache.keys)
    positions = np.arange(t + n)
    scores[positions[None, :] > (t + np.arange(n))[:, None]] = -np.inf
    log_weights = scores - np.logaddexp.reduce(scores, axis=-1, keepdims=True)
    out = np.exp(log_weights) @ cache.values
    return out.reshape(x.shape[:-1] + (W_v.shape[1],))
'''

R07 = [
    ("f32-07-oss-branch", "online_softmax_stats", "branches on whether the block raises the maximum (rescaling only then), Python floats and math.exp, -inf blocks skipped", _IMPORTS_07 + OSS_BRANCH),
    ("f32-07-oss-accumulator-class", "online_softmax_stats", "the running (m, s) live in a small local class with an update method, called once per block in one for loop", _IMPORTS_07 + OSS_ACCUMULATOR),
    ("f32-07-oss-logspace", "online_softmax_stats", "keeps m and the log of the running sum (np.logaddexp per block) in one pass and turns it into s at the end", _IMPORTS_07 + OSS_LOGSPACE),
    ("f32-07-aop-scaled-query", "attention_one_pass", "scales the query once before the loop; the running output starts as the scalar 0.0", _IMPORTS_07 + AOP_SCALED_Q),
    ("f32-07-aop-generator-einsum", "attention_one_pass", "a nested generator yields each (K block, V block) once; einsum products; rescales only when the maximum grows", _IMPORTS_07 + AOP_GENERATOR_EINSUM),
    ("f32-07-aop-running-average", "attention_one_pass", "keeps the output already divided by the running sum (a running weighted average) instead of dividing once at the end", _IMPORTS_07 + AOP_NORMALISED),
    ("f32-07-ta-break-count", "tiled_attention", "query blocks outside; at the first future tile it breaks and counts that tile and all later ones as skipped; the diagonal tiles masked with global positions", _IMPORTS_07 + TA_BREAK),
    ("f32-07-ta-key-outer", "tiled_attention", "FlashAttention-1 order: key blocks outside, query blocks inside starting at the first block that can see them; per-query running m and s, the output as accumulator; einsum tiles", _IMPORTS_07 + TA_KEY_OUTER),
    ("f32-07-ta-backwards", "tiled_attention", "walks each row of tiles backwards from the diagonal tile to key 0, with a -inf-safe shift for rows that have seen no visible key yet", _IMPORTS_07 + TA_BACKWARDS),
    ("f32-07-kv-list-concat", "KVCache", "keeps a list of copied blocks and concatenates them when keys/values are read", _IMPORTS_07 + KV_LIST),
    ("f32-07-kv-np-append-dict", "KVCache", "a dict of two arrays grown with np.append; keys/values are property() objects built from lambdas", _IMPORTS_07 + KV_NP_APPEND),
    ("f32-07-kv-doubling-buffer", "KVCache", "preallocated buffers whose capacity doubles, keys/values returned as read-only views of the rows in use", _IMPORTS_07 + KV_DOUBLING),
    ("f32-07-ds-tri-listcache", "decode_step", "np.tri(n, t + n, k=t) for the causal rows; uses its own list-of-blocks KVCache", _IMPORTS_07 + KV_LIST + DS_TRI),
    ("f32-07-ds-one-by-one-npappend", "decode_step", "appends and attends one new token at a time (no mask needed); uses its own np.append KVCache", _IMPORTS_07 + KV_NP_APPEND + DS_ONE_BY_ONE),
    ("f32-07-ds-logaddexp-doubling", "decode_step", "einsum projections, the future masked by boolean indexing, softmax in log space with np.logaddexp.reduce; uses its own doubling-buffer KVCache (read-only views)", _IMPORTS_07 + KV_DOUBLING + DS_LOGADDEXP),
]

# ---------------------------------------------------------------- lesson 08
_IMPORTS_08 = '''import math

import numpy as np
import torch
import torch.nn.functional as F

from courseware.positions import position_sizes, rope_inputs, rope_score_inputs
'''

_SP_HEAD = '''

def sinusoidal_positions(T, d):
    """The (T, d) table: PE[t, 2i] = sin(t / 10000^(2i/d)), PE[t, 2i + 1] = cos(t / 10000^(2i/d))."""
    T, d = position_sizes(T, d)      # given: T >= 0 and d even and positive, or a ValueError
'''

SP_COMPLEX_VIEW = _SP_HEAD + '''    theta = 10000.0 ** (-np.arange(0, d, 2) / d)              # one frequency per pair
    angles = np.outer(np.arange(T), theta)                     # [T, d/2]
    # i * e^(-i a) = sin a + i cos a: viewed as floats, each complex number is the pair (sin, cos)
    pairs = np.ascontiguousarray(1j * np.exp(-1j * angles))
    return pairs.view(np.float64).reshape(T, d)
'''

SP_SLICE_ASSIGN = _SP_HEAD + '''    PE = np.empty((T, d))
    inv_freq = np.exp(-math.log(10000.0) * np.arange(d // 2) * 2 / d)
    angle = np.arange(T, dtype=np.float64)[:, None] * inv_freq[None, :]
    PE[:, 0::2] = np.sin(angle)
    PE[:, 1::2] = np.cos(angle)
    return PE
'''

SP_STACK_RESHAPE = _SP_HEAD + '''    i = np.arange(d // 2)
    angle = np.multiply.outer(np.arange(T), 1.0 / np.power(10000.0, 2 * i / d))
    return np.stack((np.sin(angle), np.cos(angle)), axis=-1).reshape(T, d)
'''

_ROPE_HEAD = '''

def rope(x, positions, base=10000.0):
    """Turn pair (2i, 2i + 1) of row t of x [..., T, d] counterclockwise by positions[t] * base^(-2i/d)."""
    x, positions, base = rope_inputs(x, positions, base)    # given: checks the shapes and positions
'''

ROPE_SLICES = _ROPE_HEAD + '''    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)                  # [d/2]
    angle = positions[:, None] * theta                         # [T, d/2], broadcasts over batch axes
    cos, sin = np.cos(angle), np.sin(angle)
    a, b = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out
'''

ROPE_COMPLEX = _ROPE_HEAD + '''    d = x.shape[-1]
    frequencies = np.power(base, -np.arange(d // 2) * 2.0 / d)
    z = x[..., 0::2] + 1j * x[..., 1::2]                       # pair (a, b) as a + ib
    turned = z * np.exp(1j * np.multiply.outer(positions, frequencies))
    out = np.stack([turned.real, turned.imag], axis=-1)        # [..., T, d/2, 2]
    return out.reshape(x.shape).astype(x.dtype, copy=False)
'''

ROPE_MATRICES = _ROPE_HEAD + '''    T, d = x.shape[-2], x.shape[-1]
    phi = np.outer(positions, base ** (-np.arange(0, d, 2) / d))        # [T, d/2]
    c, s = np.cos(phi), np.sin(phi)
    R = np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)    # [T, d/2, 2, 2]
    pairs = x.reshape(*x.shape[:-1], d // 2, 2)                         # [..., T, d/2, 2]
    turned = np.einsum("tpij,...tpj->...tpi", R, pairs)
    return turned.reshape(x.shape).astype(x.dtype, copy=False)
'''

ROPE_SWAP = _ROPE_HEAD + '''    d = x.shape[-1]
    theta = 1.0 / base ** (np.arange(0, d, 2) / d)
    angle = np.repeat(np.outer(positions, theta), 2, axis=-1)  # [T, d]: each pair's angle twice
    swapped = np.empty_like(x)                                 # (a, b) -> (-b, a) in every pair
    swapped[..., 0::2] = -x[..., 1::2]
    swapped[..., 1::2] = x[..., 0::2]
    return (x * np.cos(angle) + swapped * np.sin(angle)).astype(x.dtype, copy=False)
'''

_RS_HEAD = '''

def rope_scores(Q, K, positions_q, positions_k, base=10000.0):
    """rope(Q, positions_q) @ rope(K, positions_k)ᵀ / sqrt(d): [..., T_q, d], [..., T_k, d] -> [..., T_q, T_k]."""
    Q, K, positions_q, positions_k, base = rope_score_inputs(Q, K, positions_q, positions_k, base)  # given
'''

RS_DIRECT = _RS_HEAD + '''    q_turned = rope(Q, positions_q, base)
    k_turned = rope(K, positions_k, base)
    return q_turned @ np.swapaxes(k_turned, -1, -2) / math.sqrt(Q.shape[-1])
'''

RS_LAMBDA_EINSUM = _RS_HEAD + '''    turn = lambda X, p: rope(X, p, base=base)
    d = Q.shape[-1]
    # rope is linear, so the 1/sqrt(d) can go in before the turning
    return np.einsum("...qd,...kd->...qk", turn(Q / math.sqrt(d), positions_q), turn(K, positions_k))
'''

RS_PARTIAL = _RS_HEAD + '''    spin = functools.partial(rope, base=base)
    q, k = spin(Q, positions_q), spin(K, positions_k)
    return np.matmul(q, np.moveaxis(k, -1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
'''

RS_STATIC_CLASS = '''

class Rotary:
    """Scores of turned queries and keys; the turning is the learner's rope."""
    turn = staticmethod(rope)

    def __init__(self, base):
        self.base = base

    def __call__(self, Q, K, positions_q, positions_k):
        q = self.turn(Q, positions_q, self.base)
        k = self.turn(K, positions_k, self.base)
        return (q @ k.swapaxes(-1, -2)) / math.sqrt(q.shape[-1])
''' + _RS_HEAD + '''    return Rotary(base)(Q, K, positions_q, positions_k)
'''

RS_MODULE_ATTR = '''

positional = types.SimpleNamespace(rope=rope)   # the helpers of this notebook, by name
''' + _RS_HEAD + '''    d = Q.shape[-1]
    q = positional.rope(Q, positions_q, base)
    k = positional.rope(K, positions_k, base)
    scores = (q[..., :, None, :] * k[..., None, :, :]).sum(axis=-1)   # broadcast and sum over d
    return scores / math.sqrt(d)
'''

_IMPORTS_08_FT = _IMPORTS_08.replace("import math\n", "import functools\nimport math\n")
_IMPORTS_08_TY = _IMPORTS_08.replace("import math\n", "import math\nimport types\n")

R08 = [
    ("f32-08-sp-complex-view", "sinusoidal_positions", "builds i*e^(-i*angle) = sin + i cos and reinterprets the complex array as interleaved (sin, cos) floats", _IMPORTS_08 + SP_COMPLEX_VIEW),
    ("f32-08-sp-slice-assign-exp-log", "sinusoidal_positions", "frequencies as exp(-ln(10000) * 2i/d); even and odd columns filled by slice assignment", _IMPORTS_08 + SP_SLICE_ASSIGN),
    ("f32-08-sp-stack-reshape", "sinusoidal_positions", "np.multiply.outer for the angles, sin and cos stacked on a last axis then reshaped to interleave them", _IMPORTS_08 + SP_STACK_RESHAPE),
    ("f32-08-rope-complex", "rope", "pairs as complex numbers multiplied by e^(i*angle), real and imaginary parts stacked back", _IMPORTS_08 + ROPE_COMPLEX),
    ("f32-08-rope-2x2-matrices", "rope", "a [T, d/2, 2, 2] stack of rotation matrices applied to the reshaped pairs with einsum", _IMPORTS_08 + ROPE_MATRICES),
    ("f32-08-rope-swap-repeat", "rope", "GPT-J style: x*cos + swap(x)*sin with each pair's angle repeated twice and (a, b) -> (-b, a)", _IMPORTS_08 + ROPE_SWAP),
    ("f32-08-rs-direct-slices", "rope_scores", "direct calls to a slice-assignment rope, matmul with swapaxes", _IMPORTS_08 + ROPE_SLICES + RS_DIRECT),
    ("f32-08-rs-lambda-einsum-prescale", "rope_scores", "rope through a lambda; Q divided by sqrt(d) before turning (rope is linear); einsum scores; complex rope", _IMPORTS_08 + ROPE_COMPLEX + RS_LAMBDA_EINSUM),
    ("f32-08-rs-partial-moveaxis", "rope_scores", "functools.partial(rope, base=base), np.matmul with np.moveaxis; rotation-matrix rope", _IMPORTS_08_FT + ROPE_MATRICES + RS_PARTIAL),
    ("f32-08-rs-staticmethod-callable", "rope_scores", "a callable class holding rope as a staticmethod does the scoring; swap-and-repeat rope", _IMPORTS_08 + ROPE_SWAP + RS_STATIC_CLASS),
    ("f32-08-rs-namespace-broadcast-sum", "rope_scores", "rope reached as an attribute of a module-level SimpleNamespace; scores by broadcasting and summing over d", _IMPORTS_08_TY + ROPE_SLICES + RS_MODULE_ATTR),
]


RIGHT = [Right(*row) for row in R05 + R06 + R07 + R08]
