"""Lesson 05: multi-head attention and cross-attention, in PyTorch.

Row convention (tokens are rows): ``query [B, T_q, d_model]``, ``key`` and
``value [B, T_k, d_model]``. Each of the ``h`` heads works on ``d_head = d_model / h``
features; the heads run side by side as one batched product and are concatenated.

Masks are boolean and **True means "may attend"** (as in
``torch.nn.functional.scaled_dot_product_attention``; the opposite of
``nn.MultiheadAttention``'s ``key_padding_mask``). ``MultiHeadAttention.forward``
accepts, by number of axes:

* 2 axes, ``[B, T_k]``: a key mask (False at padding), the same for every query and head;
* 3 axes, ``[B, T_q, T_k]``: one mask per batch item, shared by all heads;
* 4 axes, ``[B, h, T_q, T_k]``: one mask per head.

Any axis but the last two (``T_q``, ``T_k``) may have size 1 and is broadcast; a 2-axis
mask may also be ``[1, T_k]``. A query with no allowed key gets all-zero weights (not
NaN), as in lesson 04; its output is then ``w_o``'s bias alone.

Each graded function calls a private core with the right settings. The cores' keyword
knobs are the places where this lesson's mistakes happen (how heads are cut and joined,
the layers ``__init__`` builds, the scale, the mask's polarity, the softmax's axis, which
rows of torch's weights go where, which slice of a weight belongs to a head); the
catalogued mistakes (``exercises.py``) are the same cores with one knob set wrong.

This module imports nothing from other lessons: it is self-contained in torch.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from ...learner.validation import positive_int, shape_str

__all__ = [
    "split_heads",
    "merge_heads",
    "MultiHeadAttention",
    "copy_from_torch",
    "heads_one_by_one",
    "mha_parameter_count",
    "value_down_up",
]

LAYERS = ("w_q", "w_k", "w_v", "w_o")


# ----------------------------------------------------------------------------- validation

def _heads_fit(d_model: int, n_heads: int, d_name: str = "d_model") -> int:
    """``d_head``, or a ValueError when ``n_heads`` does not divide ``d_model``."""
    positive_int(n_heads, "n_heads")
    if d_model % n_heads:
        raise ValueError(
            f"n_heads = {n_heads} does not divide {d_name} = {d_model}: every head needs "
            f"the same number of features (d_head = {d_name} / n_heads)"
        )
    return d_model // n_heads


def _tensor(x, name: str, ndim: int, what: str) -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor {what}, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{name} must have {ndim} axes {what}, got shape {shape_str(x.shape)}")
    return x


def _check_inputs(query, key, value, d_model: int) -> tuple[int, int, int]:
    """(B, T_q, T_k) of valid attention inputs, or a ValueError naming the culprit."""
    for name, x in (("query", query), ("key", key), ("value", value)):
        _tensor(x, name, 3, "[B, T, d_model]")
        if x.shape[-1] != d_model:
            raise ValueError(
                f"{name} has {x.shape[-1]} features but the module has d_model = {d_model} "
                f"(shape {shape_str(x.shape)})"
            )
    if key.shape[:2] != value.shape[:2]:
        raise ValueError(
            f"key and value must hold the same tokens: key has shape {shape_str(key.shape)}, "
            f"value has shape {shape_str(value.shape)}"
        )
    if query.shape[0] != key.shape[0]:
        raise ValueError(
            f"query and key have different batch sizes: {shape_str(query.shape)} and "
            f"{shape_str(key.shape)}"
        )
    return query.shape[0], query.shape[1], key.shape[1]


def attention_mask(mask, batch: int, n_heads: int, t_q: int, t_k: int) -> torch.Tensor | None:
    """``mask`` (see the module docstring) as a bool tensor that broadcasts to
    ``[B, h, T_q, T_k]``, or None. Raises ValueError for any other shape or dtype."""
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        kind = mask.dtype if isinstance(mask, torch.Tensor) else type(mask).__name__
        raise ValueError(f"mask must be a bool tensor (True = may attend), got {kind}")
    given = tuple(mask.shape)
    if mask.dim() == 2:
        want, mask = "[B, T_k]", mask[:, None, None, :]
    elif mask.dim() == 3:
        want, mask = "[B, T_q, T_k]", mask[:, None, :, :]
    elif mask.dim() == 4:
        want = "[B, h, T_q, T_k]"
    else:
        raise ValueError(
            f"mask must have 2 axes [B, T_k], 3 axes [B, T_q, T_k] or 4 axes "
            f"[B, h, T_q, T_k], got shape {shape_str(given)}"
        )
    full = (batch, n_heads, t_q, t_k)
    if mask.shape[-1] != t_k or any(m not in (1, f) for m, f in zip(mask.shape, full)):
        raise ValueError(
            f"mask of shape {shape_str(given)} does not fit {want} with B = {batch}, "
            f"h = {n_heads}, T_q = {t_q}, T_k = {t_k} (an axis may also have size 1, "
            f"except T_k)"
        )
    return mask


# ----------------------------------------------------------------------------- heads

def _split_heads(x, n_heads, *, features="blocks", move_heads="transpose"):
    """``[B, T, d_model] -> [B, h, T, d_head]``.

    ``features``: which features a head gets, a block of ``d_head`` ("blocks") or every
    h-th one ("dealt"); ``move_heads``: how the head axis gets in front of the token axis,
    by a transpose after cutting each token's features ("transpose"), not at all ("no"),
    or by a reshape straight to ``[B, h, T, d_head]``, which re-reads memory ("reshape").
    """
    x = _tensor(x, "x", 3, "[B, T, d_model]")
    batch, tokens, d_model = x.shape
    d_head = _heads_fit(d_model, n_heads)
    if move_heads == "reshape":
        return x.reshape(batch, n_heads, tokens, d_head)
    if features == "blocks":
        # site: the cut of each token's features
        per_token = x.reshape(batch, tokens, n_heads, d_head)
    else:
        per_token = x.reshape(batch, tokens, d_head, n_heads).transpose(-2, -1)
    # site: the swap of the head and token axes
    return per_token.transpose(1, 2) if move_heads == "transpose" else per_token


def split_heads(x, n_heads):
    """``[B, T, d_model] -> [B, h, T, d_head]``: head i gets features
    ``i*d_head:(i+1)*d_head`` of every token, and the head axis moves in front of the
    token axis so that every head is a separate ``[T, d_head]`` matrix."""
    return _split_heads(x, n_heads)


def _merge_heads(x, *, move_tokens="transpose", join="concatenate"):
    """``[B, h, T, d_head] -> [B, T, h*d_head]``.

    ``move_tokens``: how the token axis gets in front of the head axis, by a transpose
    ("transpose") or not at all, the reshape re-reading memory ("reshape"); ``join``: how
    the heads of a token are put together: side by side ("concatenate"), feature by
    feature ("interleave"), or averaged into one ``d_head`` ("average").
    """
    x = _tensor(x, "x", 4, "[B, h, T, d_head]")
    batch, n_heads, tokens, d_head = x.shape
    if join == "average":
        return x.mean(dim=1)
    if move_tokens == "reshape":
        return x.reshape(batch, tokens, n_heads * d_head)
    # site: the swap of the head and token axes
    per_token = x.transpose(1, 2)                          # [B, T, h, d_head]
    if join == "interleave":
        per_token = per_token.transpose(-2, -1)            # [B, T, d_head, h]
    # site: the concatenation of the heads
    return per_token.reshape(batch, tokens, n_heads * d_head)


def merge_heads(x):
    """``[B, h, T, d_head] -> [B, T, h*d_head]``, the inverse of :func:`split_heads`: the
    heads' outputs for each token are concatenated, head 0 first."""
    return _merge_heads(x)


# ----------------------------------------------------------------------------- the module

def _add_layers(mha, *, width="d_model", w_o_reads="d_model", bias=True, w_k="nn.Linear"):
    """Give ``mha`` its four projections, ``nn.Linear(d_model, d_model)`` with bias.

    ``width``: how many features w_q, w_k and w_v give ("d_model" or "d_head");
    ``w_o_reads``: how many features w_o takes ("d_model" or "d_head"); ``bias``: whether
    the layers have biases; ``w_k``: the kind of layer w_k is ("nn.Linear" or a 1-wide
    "nn.Conv1d").
    """
    features = {"d_model": mha.d_model, "d_head": mha.d_head}
    # site: the query projection
    mha.w_q = nn.Linear(mha.d_model, features[width], bias=bias)
    if w_k == "nn.Linear":
        # site: the key projection
        mha.w_k = nn.Linear(mha.d_model, features[width], bias=bias)
    else:
        mha.w_k = nn.Conv1d(mha.d_model, features[width], kernel_size=1, bias=bias)
    # site: the value projection
    mha.w_v = nn.Linear(mha.d_model, features[width], bias=bias)
    # site: the output projection
    mha.w_o = nn.Linear(features[w_o_reads], mha.d_model, bias=bias)


def _attend(mha, query, key, value, mask=None, *, move_heads="transpose", scale="d_head",
            mask_true_means="attend", softmax_over="keys", head_maps="own",
            output_projection=True):
    """The forward of :class:`MultiHeadAttention`: ``(output, weights)``.

    ``move_heads``: how heads are cut and joined (see :func:`_split_heads`); ``scale``:
    the scores are divided by √d_head, √d_model or nothing ("none"); ``mask_true_means``:
    "attend" or "ignore"; ``softmax_over``: "keys" or "queries"; ``head_maps``: every head
    keeps its own map ("own"), or all use their average, as one map ("averaged") or
    repeated h times ("averaged, repeated"); ``output_projection``: whether w_o is applied.
    """
    batch, t_q, t_k = _check_inputs(query, key, value, mha.d_model)
    allowed = attention_mask(mask, batch, mha.n_heads, t_q, t_k)
    # site: the queries
    q = _split_heads(mha.w_q(query), mha.n_heads, move_heads=move_heads)   # [B, h, T_q, d_head]
    # site: the keys
    k = _split_heads(mha.w_k(key), mha.n_heads, move_heads=move_heads)     # [B, h, T_k, d_head]
    # site: the values
    v = _split_heads(mha.w_v(value), mha.n_heads, move_heads=move_heads)   # [B, h, T_k, d_head]
    # site: the scores
    scores = q @ k.transpose(-2, -1)
    if scale != "none":
        # site: the scale of the scores
        scores = scores / math.sqrt(mha.d_head if scale == "d_head" else mha.d_model)
    if allowed is not None:
        # site: the mask of the blocked scores
        blocked = ~allowed if mask_true_means == "attend" else allowed
        # site: the masked scores
        scores = scores.masked_fill(blocked, float("-inf"))
    # site: the softmax of the scores
    weights = torch.softmax(scores, dim=-1 if softmax_over == "keys" else -2)
    if allowed is not None:
        # A query with no allowed key: softmax of all -inf is NaN; give it no weight.
        weights = weights.masked_fill(~allowed.any(dim=-1, keepdim=True), 0.0)
    if head_maps != "own":
        weights = weights.mean(dim=1, keepdim=True)
        if head_maps == "averaged, repeated":
            weights = weights.expand(-1, mha.n_heads, -1, -1)
    # site: the heads' outputs
    heads = weights @ v                                                    # [B, h, T_q, d_head]
    # site: the concatenation of the heads
    merged = _merge_heads(heads, move_tokens=move_heads)
    # site: the returned pair
    return (mha.w_o(merged) if output_projection else merged), weights


class MultiHeadAttention(nn.Module):
    """Multi-head attention with ``nn.Linear`` projections ``w_q, w_k, w_v, w_o``
    (``d_model -> d_model``, with bias), the same parameters as
    ``nn.MultiheadAttention(d_model, n_heads, batch_first=True)``. A catalogued mistake is
    this class with ``knobs`` set: keywords of :func:`_add_layers` or of :func:`_attend`."""

    knobs: dict = {}

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        positive_int(d_model, "d_model")
        self.d_head = _heads_fit(d_model, n_heads)
        self.d_model, self.n_heads = d_model, n_heads
        _add_layers(self, **{k: v for k, v in self.knobs.items()
                             if k in _add_layers.__kwdefaults__})

    def forward(self, query, key, value, mask=None):
        """``(output [B, T_q, d_model], weights [B, h, T_q, T_k])``; ``mask``: True = may
        attend, shapes as in the module docstring."""
        return _attend(self, query, key, value, mask,
                       **{k: v for k, v in self.knobs.items()
                          if k not in _add_layers.__kwdefaults__})

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, n_heads={self.n_heads}, d_head={self.d_head}"


# ----------------------------------------------------------------------------- torch's module

def _linear_layers(ours, name: str = "ours") -> dict[str, nn.Linear]:
    # Each name spelled out: the shortcut scan reads attribute names from the code.
    layers = {}
    given = {"w_q": getattr(ours, "w_q", None), "w_k": getattr(ours, "w_k", None),
             "w_v": getattr(ours, "w_v", None), "w_o": getattr(ours, "w_o", None)}
    for layer, found in given.items():
        if not isinstance(found, nn.Linear):
            raise ValueError(f"{name}.{layer} must be an nn.Linear, got {type(found).__name__}")
        layers[layer] = found
    d_model = layers["w_q"].in_features
    for layer, found in layers.items():
        if (found.in_features, found.out_features) != (d_model, d_model):
            raise ValueError(
                f"{name}.{layer} maps {found.in_features} -> {found.out_features} features; "
                f"every projection must map d_model -> d_model = {d_model} -> {d_model}"
            )
    return layers


def _check_twin(ours, theirs) -> dict[str, nn.Linear]:
    if not isinstance(theirs, nn.MultiheadAttention):
        raise ValueError(f"theirs must be a torch.nn.MultiheadAttention, got {type(theirs).__name__}")
    layers = _linear_layers(ours)
    d_model = layers["w_q"].in_features
    if not theirs.batch_first:
        raise ValueError(
            "theirs has batch_first=False, so it reads [T, B, d_model] inputs; create it with "
            "batch_first=True to match ours ([B, T, d_model])"
        )
    if not theirs._qkv_same_embed_dim:
        raise ValueError(
            f"theirs has kdim={theirs.kdim}, vdim={theirs.vdim} != embed_dim="
            f"{theirs.embed_dim}: its projections are separate matrices, not one in_proj_weight"
        )
    if theirs.bias_k is not None or theirs.add_zero_attn:
        raise ValueError("theirs adds extra key/value positions (add_bias_kv or add_zero_attn)")
    if theirs.embed_dim != d_model:
        raise ValueError(f"theirs has embed_dim = {theirs.embed_dim} but ours has d_model = {d_model}")
    n_heads = getattr(ours, "n_heads", theirs.num_heads)
    if theirs.num_heads != n_heads:
        raise ValueError(
            f"theirs has num_heads = {theirs.num_heads} but ours has n_heads = {n_heads}: the "
            f"weights would fit, but the heads would attend differently"
        )
    return layers


def _copy_from_torch(ours, theirs, *, blocks_into=("w_q", "w_k", "w_v"), rows="blocks",
                     transposed=(), biases=True, out_proj=True):
    """Load ``theirs`` into ``ours``; returns ``ours``.

    ``blocks_into``: the layers that get in_proj's row blocks 0, 1 and 2; ``rows``: a
    layer's rows of in_proj are a block of d ("blocks") or every third row ("every
    third"); ``transposed``: the weights copied transposed ("in_proj", "out_proj");
    ``biases``: whether biases are copied; ``out_proj``: whether out_proj goes into w_o.
    """
    layers = _check_twin(ours, theirs)
    d = theirs.embed_dim
    weight, bias = theirs.in_proj_weight, theirs.in_proj_bias
    with torch.no_grad():
        for i, name in enumerate(blocks_into):
            # site: the rows of a projection
            part = slice(i * d, (i + 1) * d) if rows == "blocks" else slice(i, None, 3)
            block = weight[part]
            layers[name].weight.copy_(block.T if "in_proj" in transposed else block)
            if biases:
                _copy_bias(layers[name], None if bias is None else bias[part])
        if out_proj:
            out = theirs.out_proj.weight
            layers["w_o"].weight.copy_(out.T if "out_proj" in transposed else out)
            if biases:
                _copy_bias(layers["w_o"], theirs.out_proj.bias)
    return ours


def copy_from_torch(ours, theirs):
    """Load the weights of ``theirs``, a ``torch.nn.MultiheadAttention(batch_first=True)``,
    into ``ours`` (any module with ``w_q, w_k, w_v, w_o``), so that both give the same
    output. Returns ``ours``.

    torch stacks the three input projections in one ``in_proj_weight [3*d_model,
    d_model]``: rows ``0:d`` are the query projection, ``d:2d`` the key projection,
    ``2d:3d`` the value projection, each stored ``[out, in]`` like ``nn.Linear.weight``.
    A module created with ``bias=False`` has no biases; ours then get zeros.
    """
    return _copy_from_torch(ours, theirs)


def _copy_bias(layer: nn.Linear, bias) -> None:
    if layer.bias is None:
        if bias is not None and bool(bias.ne(0).any()):
            raise ValueError("ours has a layer without bias, but theirs has a non-zero bias")
        return
    if bias is None:
        layer.bias.zero_()
    else:
        layer.bias.copy_(bias)


# ----------------------------------------------------------------------------- one head at a time

def _heads_of(mha) -> tuple[int, int]:
    layers = _linear_layers(mha, "mha")
    d_model = layers["w_q"].in_features
    n_heads = getattr(mha, "n_heads", None)
    if n_heads is None:
        raise ValueError("mha must have an n_heads attribute")
    return d_model, _heads_fit(d_model, n_heads)


def _head_projection(x, layer: nn.Linear, features: slice, weight_part: str, biases: bool):
    """One head's share of ``layer(x)``: the rows ``features`` of its ``[out, in]`` weight
    ("rows"), or (a mistake) its columns ("columns"); with the same slice of the bias or
    (a mistake) none."""
    # site: the head's share of a bias
    bias = layer.bias[features] if biases else None
    if weight_part == "rows":
        # site: the head's share of a projection
        return F.linear(x, layer.weight[features], bias)
    projected = x @ layer.weight[:, features]
    return projected if bias is None else projected + bias


def _heads_one_by_one(x, mha, *, weight_part="rows", biases=True, scale="d_head",
                      output_projection=True, maps_axis=1):
    """Self-attention of ``mha`` on ``x``, one head at a time.

    ``weight_part`` and ``biases``: a head's share of each projection (see
    :func:`_head_projection`); ``scale``: the scores are divided by √d_head or √d_model;
    ``output_projection``: whether w_o is applied to the concatenated heads;
    ``maps_axis``: the axis the heads' maps are stacked on.
    """
    d_model, d_head = _heads_of(mha)
    x = _tensor(x, "x", 3, "[B, T, d_model]")
    if x.shape[-1] != d_model:
        raise ValueError(f"x has {x.shape[-1]} features but mha has d_model = {d_model}")
    outputs, maps = [], []
    # site: the collection of the heads' maps
    for head in range(mha.n_heads):
        # site: the rows of a head
        rows = slice(head * d_head, (head + 1) * d_head)
        q, k, v = (_head_projection(x, layer, rows, weight_part, biases)    # [B, T, d_head]
                   for layer in (mha.w_q, mha.w_k, mha.w_v))
        # site: the scores
        scores = q @ k.transpose(-2, -1) / math.sqrt(d_head if scale == "d_head" else d_model)
        # site: the softmax of the scores
        weights = torch.softmax(scores, dim=-1)
        # site: the heads' outputs
        outputs.append(weights @ v)
        maps.append(weights)
    # site: the concatenation of the heads
    joined = torch.cat(outputs, dim=-1)
    # site: the returned pair
    return (mha.w_o(joined) if output_projection else joined), torch.stack(maps, dim=maps_axis)


def heads_one_by_one(x, mha):
    """Self-attention of ``mha`` on ``x [B, T, d_model]``, one head at a time in a Python
    loop. Head i uses rows ``i*d_head:(i+1)*d_head`` of ``w_q``, ``w_k`` and ``w_v`` (a
    ``d_head x d_model`` slice of each ``[out, in]`` weight) and its own attention; the
    heads' outputs are concatenated and projected by ``w_o``.

    Returns ``(output, weights)``, equal to ``mha(x, x, x)``: h small products give the
    same numbers as one big one.
    """
    return _heads_one_by_one(x, mha)


def _parameter_count(d_model, n_heads, *, head_slice=("d_head", "d_model"), biases=True,
                     output_projection=True):
    """Parameters of multi-head attention, counted head by head.

    ``head_slice``: the shape of a head's share of w_q, w_k and w_v, ``(d_head, d_model)``
    rows by columns; ``biases``: whether biases count; ``output_projection``: whether w_o
    counts.
    """
    positive_int(d_model, "d_model")
    sizes = {"d_model": d_model, "d_head": _heads_fit(d_model, n_heads)}
    rows, columns = (sizes[s] for s in head_slice)
    # site: the count of one head's parameters
    per_head = 3 * (rows * columns + (rows if biases else 0))      # its share of q, k and v
    # site: the count of w_o's parameters
    w_o = d_model * d_model + (d_model if biases else 0)
    # site: the total count
    return n_heads * per_head + (w_o if output_projection else 0)


def mha_parameter_count(d_model, n_heads):
    """Parameters of multi-head attention: four ``d_model x d_model`` weights and four
    biases of ``d_model``. The number of heads changes how the features are split, not
    how many there are: h heads of ``d_head x d_model`` slices make the full matrices, so
    the count, ``4 * d_model * d_model + 4 * d_model``, does not depend on ``n_heads``."""
    return _parameter_count(d_model, n_heads)


def _value_down_up(mha, head, *, read_as_in_out=(), transpose=True):
    """``(down, up)`` of one head.

    ``read_as_in_out``: the layers whose weight is read as if stored ``[in, out]`` (the
    head's features then come from the other axis and need no transpose); ``transpose``:
    whether the slices of the ``[out, in]`` weights are transposed into row maps.
    """
    d_model, d_head = _heads_of(mha)
    if isinstance(head, bool) or not isinstance(head, int) or not 0 <= head < mha.n_heads:
        raise ValueError(f"head must be an int from 0 to {mha.n_heads - 1}, got {head!r}")
    features = slice(head * d_head, (head + 1) * d_head)

    def row_map(name: str, head_features_are: str):
        weight = getattr(mha, name).weight.detach()
        if name in read_as_in_out:   # features looked for on the other axis, used as they are
            return (weight[:, features] if head_features_are == "rows" else weight[features, :]).clone()
        # site: the head's block of a weight
        block = weight[features, :] if head_features_are == "rows" else weight[:, features]
        # site: value-down and value-up
        return (block.T if transpose else block).clone()

    # The head's features are outputs of w_v (rows of [out, in]) and inputs of w_o (columns).
    # site: the returned pair
    return row_map("w_v", "rows"), row_map("w_o", "columns")


def value_down_up(mha, head):
    """Seed 002's low-rank view of one head's value path, in the row convention.

    The head owns ``features = head*d_head:(head+1)*d_head``. Returns
    ``(down [d_model, d_head], up [d_head, d_model])``: ``down = w_v.weight[features, :].T``
    (those are w_v's output features; a token row ``x`` maps to the head's value
    ``x @ down``), and ``up = w_o.weight[:, features].T`` (w_o's input features; the head's
    output ``y`` adds ``y @ up`` to the layer's output). ``down @ up`` is the head's
    value-to-output map, of rank at most ``d_head``.
    """
    return _value_down_up(mha, head)
