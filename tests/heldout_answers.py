"""A held-out set of learners' answers, written the way learners go wrong: data only.

``WRONG`` holds answers that must fail their check, each with what the learner got wrong
(``about``) and regular expressions (``named``) written from the nature of the mistake
alone: the check's message *names* the mistake when every group matches, ignoring case,
somewhere in the message's diagnosis (the text before "Smallest input", "It raised on
this input" or "Input:"). ``RIGHT`` holds unusual but correct answers that must pass.

Every ``source`` is what a learner types in the notebook: the imports and given lines of
the exercise, the function or class itself, and the learner's other graded functions it
calls (right, or wrong where the story needs). It is executed in a fresh module; the
answer is the name of the exercise in it (``WORKSHEET`` for the worksheet steps).

The answers were written from the course's notebooks, its specification and its seeds,
never from its catalogue of known mistakes, so that they measure how the checks explain
mistakes nobody has shown them. ``benchmarks/heldout_diagnosis.py`` measures it;
``tests/test_heldout.py`` keeps it from getting worse.
"""
from __future__ import annotations

from typing import NamedTuple


class Wrong(NamedTuple):
    id: str
    exercise: str
    about: str
    source: str
    named: tuple[str, ...]


class Right(NamedTuple):
    id: str
    exercise: str
    about: str
    source: str


# ----------------------------------------------------------------------------- what cells share

L01 = """\
import numpy as np
from grader.learner.validation import matmul_operands, as_array
"""

L02 = """\
import numpy as np
from grader.learner.validation import as_array
"""

L03 = """\
import math
from fractions import Fraction

import numpy as np
from grader.learner.validation import as_fractions
"""

L04 = """\
import numpy as np
import torch
from grader.learner.validation import as_array, bool_mask, lengths_array, positive_int
"""

L05 = """\
import math

import torch
import torch.nn.functional as F
from torch import nn


def attention_shapes(query, key, value, d_model):
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor) or t.dim() != 3 or t.shape[-1] != d_model:
            got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            raise ValueError(f"{name} must be a tensor [B, T, d_model={d_model}], got {got}")
    if key.shape[:2] != value.shape[:2]:
        raise ValueError(f"key {tuple(key.shape)} and value {tuple(value.shape)} differ")
    if query.shape[0] != key.shape[0]:
        raise ValueError(f"query {tuple(query.shape)} and key {tuple(key.shape)} differ")
    return query.shape[0], query.shape[1], key.shape[1]


def as_attention_mask(mask, B, n_heads, T_q, T_k):
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise ValueError("mask must be a bool tensor (True = may attend)")
    given = tuple(mask.shape)
    if mask.dim() == 2:
        mask = mask[:, None, None, :]
    elif mask.dim() == 3:
        mask = mask[:, None, :, :]
    elif mask.dim() != 4:
        raise ValueError(f"mask must have 2, 3 or 4 axes, got shape {given}")
    if mask.shape[-1] != T_k or any(m not in (1, n) for m, n in
                                    zip(mask.shape, (B, n_heads, T_q, T_k))):
        raise ValueError(f"mask of shape {given} does not fit")
    return mask
"""

L06 = """\
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    MODEL, TASK, LEARNING_RATE, progress, as_stream, as_tokens, as_hidden,
    check_block_sizes, check_model_sizes, check_steps_and_seed, check_depths, layer_outputs,
)
"""

L07 = """\
import numpy as np

from grader.learner.validation import positive_int
from courseware.long_attention import (
    score_blocks, one_query, tile_inputs, key_value_rows, decode_inputs,
)
"""

L08 = """\
import numpy as np
import torch
import torch.nn.functional as F

from courseware.positions import position_sizes, rope_inputs, rope_score_inputs
"""

# The learner's other graded functions, written right, for the composites that call them.

SOFTMAX = """
def softmax(x, axis=-1):
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1}")
    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)
"""

SCORES = """
def attention_scores(Q, K):
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same d_k, got {Q.shape} and {K.shape}")
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
"""

SDPA = """
def scaled_dot_product_attention(Q, K, V):
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V need one row per key, got {K.shape} and {V.shape}")
    weights = softmax(attention_scores(Q, K), axis=-1)
    return weights @ V, weights
"""

SELF_ATTENTION_CHECKS = """
    X = as_array(X, "X", min_ndim=2)
    W_q = as_array(W_q, "W_q", ndim=2)
    W_k = as_array(W_k, "W_k", ndim=2)
    W_v = as_array(W_v, "W_v", ndim=2)
    if not W_q.shape[0] == W_k.shape[0] == W_v.shape[0] == X.shape[-1]:
        raise ValueError(f"W_q, W_k and W_v need d_model = {X.shape[-1]} rows")
    if W_q.shape[1] != W_k.shape[1]:
        raise ValueError(f"W_q and W_k must give the same d_k, got {W_q.shape}, {W_k.shape}")
"""

BY_HAND_HELPERS = """
def key_query_scores(K, Q):
    K = as_fractions(K, "K")
    Q = as_fractions(Q, "Q")
    if K.shape[0] != Q.shape[0]:
        raise ValueError(f"K and Q must have the same d_k, got {K.shape} and {Q.shape}")
    return K.T @ Q


def floor_half(S):
    S = as_fractions(S, "S")
    return S // 2


def softmax3_columns(S):
    S = as_fractions(S, "S", whole=True)
    powers = np.array([[Fraction(3) ** s for s in row] for row in S], dtype=object)
    return powers / powers.sum(axis=0)
"""

BY_HAND_CHECKS = """
    X = as_fractions(X, "X")
    W_Q, W_K, W_V = as_fractions(W_Q, "W_Q"), as_fractions(W_K, "W_K"), as_fractions(W_V, "W_V")
    for name, W in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
        if W.shape[1] != X.shape[0]:
            raise ValueError(f"{name} has {W.shape[1]} columns but X has {X.shape[0]} rows")
    if W_Q.shape[0] != W_K.shape[0]:
        raise ValueError(f"W_Q and W_K must have the same number of rows")
"""

ROWS_CHECKS = """
    X_rows = as_fractions(X_rows, "X_rows")
    W_Q, W_K, W_V = as_fractions(W_Q, "W_Q"), as_fractions(W_K, "W_K"), as_fractions(W_V, "W_V")
    for name, W in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
        if W.shape[1] != X_rows.shape[1]:
            raise ValueError(f"{name} has {W.shape[1]} columns but X_rows has "
                             f"{X_rows.shape[1]} columns")
    if W_Q.shape[0] != W_K.shape[0]:
        raise ValueError(f"W_Q and W_K must have the same number of rows")
"""

MASKS = """
def causal_mask(T):
    T = positive_int(T, "T")
    return np.tril(np.ones((T, T), dtype=bool))


def padding_mask(lengths, T):
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    return np.arange(T)[None, :] < lengths[:, None]
"""

ATTENTION_MASK_HEAD = """
def attention_mask(lengths, T, causal=True):
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
    if not isinstance(causal, (bool, np.bool_)):
        raise ValueError(f"causal must be True or False, got {causal!r}")
"""

MASKED_SOFTMAX = """
def masked_softmax(scores, mask):
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    filled = np.where(mask, scores, -np.inf)
    top = filled.max(axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(filled - top)
    total = e.sum(axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)
"""

MASKED_ATTENTION_HEAD = """
def masked_attention(Q, K, V, mask=None):
    Q, K = as_array(Q, "Q", min_ndim=2), as_array(K, "K", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share d_k, got shapes {Q.shape} and {K.shape}")
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V must have the same number of keys, got {K.shape} and {V.shape}")
    if mask is not None:
        mask = bool_mask(mask)
"""

LENGTHS_HEAD = """
    T = positive_int(T, "T")
    lengths = lengths_array(lengths, T)
"""

HEADS = """
def split_heads(x, n_heads):
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError(f"x must be a tensor [B, T, d_model], "
                         f"got {getattr(x, 'shape', type(x))}")
    B, T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    return x.reshape(B, T, n_heads, d_model // n_heads).transpose(1, 2)


def merge_heads(x):
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], "
                         f"got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d_head)
"""

SPLIT_HEAD = """
def split_heads(x, n_heads):
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        raise ValueError(f"x must be a tensor [B, T, d_model], "
                         f"got {getattr(x, 'shape', type(x))}")
    B, T, d_model = x.shape
    if n_heads <= 0 or d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
"""

MERGE_HEAD = """
def merge_heads(x):
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a tensor [B, h, T, d_head], "
                         f"got {getattr(x, 'shape', type(x))}")
    B, h, T, d_head = x.shape
"""

MHA_HEAD = """
class MultiHeadAttention(nn.Module):
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
        B, T_q, T_k = attention_shapes(query, key, value, self.d_model)
        mask = as_attention_mask(mask, B, self.n_heads, T_q, T_k)
"""

COPY_HEAD = """
def copy_from_torch(ours, theirs):
    if not isinstance(theirs, nn.MultiheadAttention) or not theirs.batch_first:
        raise ValueError("theirs must be an nn.MultiheadAttention created with batch_first=True")
    if not theirs._qkv_same_embed_dim:
        raise ValueError("theirs has kdim or vdim different from embed_dim")
    if theirs.embed_dim != ours.d_model or theirs.num_heads != ours.n_heads:
        raise ValueError("theirs and ours have different sizes")
    d = ours.d_model
"""

LOOP_HEAD = """
def heads_one_by_one(x, mha):
    if x.dim() != 3 or x.shape[-1] != mha.d_model:
        raise ValueError(f"x must be [B, T, d_model={mha.d_model}], got shape {tuple(x.shape)}")
    d_head = mha.d_model // mha.n_heads
    outputs, maps = [], []
"""

COUNT_HEAD = """
def mha_parameter_count(d_model, n_heads):
    for name, value in (("d_model", d_model), ("n_heads", n_heads)):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if d_model % n_heads:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
"""

DOWN_UP_HEAD = """
def value_down_up(mha, head):
    if isinstance(head, bool) or not isinstance(head, int) or not 0 <= head < mha.n_heads:
        raise ValueError(f"head must be an int from 0 to {mha.n_heads - 1}, got {head!r}")
    d_head = mha.d_model // mha.n_heads
    features = slice(head * d_head, (head + 1) * d_head)
"""

BLOCK_HEAD = """
class Block(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, residual=True):
        super().__init__()
        check_block_sizes(d_model, n_heads, d_ff)
        self.d_model, self.residual = d_model, bool(residual)
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x):
        x = as_stream(x, self.d_model)
"""

BLOCK = BLOCK_HEAD + """\
        h = self.ln1(x)
        attended = self.attn(h, h, h, need_weights=False)[0]
        x = x + attended if self.residual else attended
        h = self.ln2(x)
        update = self.mlp(h)
        return x + update if self.residual else update
"""

MODEL_HEAD = """
class TinyTransformer(nn.Module):
    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual=True):
        super().__init__()
        check_model_sizes(vocab_size, d_model, n_heads, d_ff, n_layers, seq_len)
        self.vocab_size, self.seq_len, self.residual = vocab_size, seq_len, bool(residual)
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(seq_len, d_model)
"""

MODEL_TAIL = """
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens):
        tokens = as_tokens(tokens, self.vocab_size, self.seq_len)
"""

MODEL_BLOCKS = """\
        self.blocks = nn.ModuleList(
            [Block(d_model, n_heads, d_ff, residual=residual) for _ in range(n_layers)])
"""

MODEL_FORWARD = """\
        positions = torch.arange(tokens.shape[1])
        stream = self.tok_emb(tokens) + self.pos_emb(positions)
        for block in self.blocks:
            stream = block(stream)
        return self.head(self.ln_f(stream))
"""

MODEL = MODEL_HEAD + MODEL_BLOCKS + MODEL_TAIL + MODEL_FORWARD

SIMILARITY = """
def token_similarity(h):
    h = as_hidden(h)
    unit = h / h.norm(dim=-1, keepdim=True).clamp_min(1e-8)
    cosines = unit @ unit.transpose(-1, -2)
    T = h.shape[-2]
    off = cosines.sum(dim=(-1, -2)) - cosines.diagonal(dim1=-2, dim2=-1).sum(dim=-1)
    return float((off / (T * (T - 1))).mean())
"""

TRAIN_HEAD = """
def train(model, task, steps, seed):
    steps, seed = check_steps_and_seed(steps, seed)
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    model.train()
    losses = []
"""

TRAIN = TRAIN_HEAD + """\
    for step in range(steps):
        tokens, targets = task.sample(generator)
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
"""

ABLATION_HEAD = """
def run_ablation(depths, steps, seed):
    depths = check_depths(depths)
    steps, seed = check_steps_and_seed(steps, seed)
    probe, _ = TASK.sample(torch.Generator().manual_seed(seed))
    rows = []
"""

ABLATION_HELPERS = BLOCK + MODEL + SIMILARITY + TRAIN

CACHE = """
class KVCache:
    def __init__(self):
        self._keys = None
        self._values = None

    def __len__(self):
        return 0 if self._keys is None else len(self._keys)

    def append(self, k, v):
        k, v = key_value_rows(k, v)
        if self._keys is None:
            self._keys, self._values = k.copy(), v.copy()
        else:
            self._keys = np.concatenate([self._keys, k])
            self._values = np.concatenate([self._values, v])

    @property
    def keys(self):
        if self._keys is None:
            raise ValueError("the cache is empty")
        return self._keys

    @property
    def values(self):
        if self._values is None:
            raise ValueError("the cache is empty")
        return self._values
"""

DECODE_HEAD = """
def decode_step(x_t, cache, W_q, W_k, W_v):
    x, W_q, W_k, W_v = decode_inputs(x_t, cache, W_q, W_k, W_v)
"""

SINUSOID_HEAD = """
def sinusoidal_positions(T, d):
    T, d = position_sizes(T, d)
"""

ROPE_HEAD = """
def rope(x, positions, base=10000.0):
    x, positions, base = rope_inputs(x, positions, base)
"""

ROPE = ROPE_HEAD + """\
    d = x.shape[-1]
    freqs = base ** (-np.arange(0, d, 2) / d)
    angles = np.outer(positions, freqs)
    a, b = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = a * np.cos(angles) - b * np.sin(angles)
    out[..., 1::2] = a * np.sin(angles) + b * np.cos(angles)
    return out
"""

ROPE_SCORES_HEAD = """
def rope_scores(Q, K, positions_q, positions_k, base=10000.0):
    Q, K, positions_q, positions_k, base = rope_score_inputs(Q, K, positions_q, positions_k, base)
"""

# The published worksheet's steps, as typed by a learner who got them right.
SHEET = {
    "Q": "2 1 1 1\n1 1 0 1\n1 0 2 1",
    "K": "1 2 0 0\n0 1 -1 1\n1 1 1 0",
    "V": "1 0 2 1\n1 0 1 2\n0 0 1 1",
    "scores": "3 1 3 2\n6 3 4 4\n0 -1 2 0\n1 1 0 1",
    "scaled": "1 0 1 1\n3 1 2 2\n0 -1 1 0\n0 0 0 0",
    "A": "3/32 3/16 3/16 3/14\n27/32 9/16 9/16 9/14\n1/32 1/16 3/16 1/14\n1/32 3/16 1/16 1/14",
    "Z": "3/16 1/2 5/8 3/7\n3/16 5/8 1/2 3/7\n1/16 1/4 1/4 1/7",
}


def _sheet(**typed: str) -> str:
    """A WORKSHEET cell: every step as on the answer key, but those in ``typed``."""
    steps = {**SHEET, **typed}
    body = "".join(f'WORKSHEET["{k}"] = """\n{v}\n"""\n' for k, v in steps.items())
    return "WORKSHEET = {}\n" + body


# ----------------------------------------------------------------------------- wrong answers

WRONG: list[Wrong] = [
    # ------------------------------------------------------------------ 01_matmul_views
    Wrong("01-dot-row-of-B", "matmul_dot",
          "takes row j of B instead of column j, so C[i, j] is row i of A dotted with row j "
          "of B (A Bᵀ, as for attention scores)",
          L01 + """
def matmul_dot(A, B):
    A, B = matmul_operands(A, B)
    n, m = A.shape[0], B.shape[1]
    C = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            C[i, j] = np.sum(A[i, :] * B[j, :])
    return C
""",
          (r"transpos|Bᵀ|B\.T\b|rows? j of B|rows? of B",)),
    Wrong("01-rows-overwrite", "matmul_rows",
          "assigns each term to row i instead of adding it, so only the last row of B "
          "(p = k - 1) survives",
          L01 + """
def matmul_rows(A, B):
    A, B = matmul_operands(A, B)
    n, k = A.shape
    C = np.zeros((n, B.shape[1]))
    for i in range(n):
        for p in range(k):
            C[i, :] = A[i, p] * B[p, :]
    return C
""",
          (r"overwr|replac|only the last|last term|accumulat|\+=|instead of add|not added",)),
    Wrong("01-cols-index-swapped", "matmul_cols",
          "weights column p of A with B[j, p] instead of B[p, j]: the column reading with "
          "B transposed",
          L01 + """
def matmul_cols(A, B):
    A, B = matmul_operands(A, B)
    k, m = B.shape
    C = np.zeros((A.shape[0], m))
    for j in range(m):
        for p in range(k):
            C[:, j] += B[j, p] * A[:, p]
    return C
""",
          (r"transpos|Bᵀ|swap|B\[j, ?p\]|indices",)),
    Wrong("01-outer-rows-of-A", "matmul_outer",
          "takes the outer product of row p of A with column p of B, instead of column p of "
          "A with row p of B",
          L01 + """
def matmul_outer(A, B):
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]))
    for p in range(A.shape[1]):
        C += np.outer(A[p, :], B[:, p])
    return C
""",
          (r"rows? (p )?of A|columns? (p )?of B|transpos|swapp",)),
    Wrong("01-batched-no-broadcast", "batched_matmul",
          "uses an einsum with one explicit batch letter, which cannot broadcast a single "
          "[n, k] matrix against a batch [b, k, m]",
          L01 + """
def batched_matmul(A, B):
    A = as_array(A, "A", min_ndim=2)
    B = as_array(B, "B", min_ndim=2)
    if A.shape[-1] != B.shape[-2]:
        raise ValueError(f"A has {A.shape[-1]} columns but B has {B.shape[-2]} rows")
    return np.einsum("bnk,bkm->bnm", A, B)
""",
          (r"broadcast|batch", r"einsum|\[n, ?k\]|2-?d|no batch ax|without a batch|single matrix|"
                             r"one matrix")),
    Wrong("01-einsum-k-not-transposed", "einsum_scores",
          "writes K's subscripts as 'dk', reading K as [d, T_k]: the product Q K, not Q Kᵀ",
          L01 + """
def einsum_scores(Q, K):
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share their last axis, got {Q.shape} and {K.shape}")
    return np.einsum("...qd,...dk->...qk", Q, K)
""",
          (r"transpos|Kᵀ|subscript|letters|\bkd\b|\bdk\b|axes of K",)),
    Wrong("01-einsum-one-batch-axis", "einsum_scores",
          "spells out exactly one batch axis ('bqd,bkd->bqk'), so 2-D inputs and inputs "
          "with two batch axes fail",
          L01 + """
def einsum_scores(Q, K):
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share their last axis, got {Q.shape} and {K.shape}")
    return np.einsum("bqd,bkd->bqk", Q, K)
""",
          (r"\.\.\.|ellipsis|any number of (batch|leading)|one batch ax|exactly one|2-?d|3-?d|"
           r"three ax|two batch ax",)),
    Wrong("01-convex-nan-slips", "weighted_average_rows",
          "checks sums and signs with comparisons that are False for NaN, so a NaN weight "
          "passes the checks",
          L01 + """
def weighted_average_rows(W, V):
    W = as_array(W, "W", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if W.shape[-1] != V.shape[-2]:
        raise ValueError(f"W has {W.shape[-1]} weights per row but V has {V.shape[-2]} rows")
    if np.any(W < 0):
        raise ValueError("W has a negative weight")
    if np.any(np.abs(W.sum(axis=-1) - 1) > 1e-6):
        raise ValueError("a row of W does not sum to 1")
    return W @ V
""",
          (r"nan",)),
    Wrong("01-convex-only-too-small", "weighted_average_rows",
          "rejects rows that sum to less than 1 but lets rows that sum to more than 1 through",
          L01 + """
def weighted_average_rows(W, V):
    W = as_array(W, "W", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if W.shape[-1] != V.shape[-2]:
        raise ValueError(f"W has {W.shape[-1]} weights per row but V has {V.shape[-2]} rows")
    if not np.all(np.isfinite(W)) or np.any(W < 0):
        raise ValueError("W must hold finite, non-negative weights")
    if np.any(W.sum(axis=-1) < 1 - 1e-6):
        raise ValueError("a row of W sums to less than 1")
    return W @ V
""",
          (r"sum", r"too large|more than 1|above 1|greater than 1|exceed|over 1|larger than 1|"
                   r"> ?1\b|sums? to (1\.\d*[1-9]|[2-9])")),

    # ------------------------------------------------------------------ 02_dot_product_attention
    Wrong("02-softmax-unstable", "softmax",
          "exponentiates the raw scores without subtracting the maximum, so scores of "
          "+1000 overflow to inf and give NaN",
          L02 + """
def softmax(x, axis=-1):
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1}")
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)
""",
          (r"overflow|unstable|stabil|subtract|largest|the max",)),
    Wrong("02-softmax-ignores-axis", "softmax",
          "always normalises along the last axis, whatever axis it is given",
          L02 + """
def softmax(x, axis=-1):
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1}")
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
""",
          (r"axis", r"ignor|always|argument|parameter|given|last axis|-1")),
    Wrong("02-softmax-no-keepdims", "softmax",
          "reduces without keepdims, so the max and the sum lose their axis and line up "
          "with the wrong axis when subtracted and divided",
          L02 + """
def softmax(x, axis=-1):
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1}")
    e = np.exp(x - x.max(axis=axis))
    return e / e.sum(axis=axis)
""",
          (r"keepdims|keep(s|ing)? the (reduced )?ax|dropp?(ed|ing|s)? the ax|los(t|es|ing) the "
           r"ax|reduced ax",)),
    Wrong("02-scores-sqrt-T", "attention_scores",
          "divides by the square root of the number of tokens (seed 000's reading of d_k)",
          L02 + """
def attention_scores(Q, K):
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same d_k, got {Q.shape} and {K.shape}")
    n_tokens = K.shape[-2]
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(n_tokens)
""",
          (r"sequence|tokens|T_k|T_q|number of keys|shape\[-2\]",
           r"d_k|√|sqrt|scale|divid")),
    Wrong("02-scores-K-dot-T", "attention_scores",
          "transposes K with K.T, which reverses every axis of a batched array",
          L02 + """
def attention_scores(Q, K):
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same d_k, got {Q.shape} and {K.shape}")
    return Q @ K.T / np.sqrt(Q.shape[-1])
""",
          (r"K\.T|\.T\b|every axis|all (the )?axes|swapaxes|last two ax",)),
    Wrong("02-scores-by-d_k", "attention_scores",
          "divides by d_k itself instead of its square root",
          L02 + """
def attention_scores(Q, K):
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same d_k, got {Q.shape} and {K.shape}")
    d_k = Q.shape[-1]
    return Q @ np.swapaxes(K, -1, -2) / d_k
""",
          (r"d_k", r"root|√|sqrt", r"instead|rather|not|itself|squared|too")),
    Wrong("02-scores-times-sqrt", "attention_scores",
          "multiplies the scores by √d_k instead of dividing",
          L02 + """
def attention_scores(Q, K):
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same d_k, got {Q.shape} and {K.shape}")
    return Q @ np.swapaxes(K, -1, -2) * np.sqrt(Q.shape[-1])
""",
          (r"multipl|times|×", r"d_k|√|sqrt|scale")),
    Wrong("02-sdpa-softmax-over-queries", "scaled_dot_product_attention",
          "normalises the weights along the query axis (-2), so every key's column sums to "
          "1 instead of every query's row",
          L02 + SOFTMAX + SCORES + """
def scaled_dot_product_attention(Q, K, V):
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V need one row per key, got {K.shape} and {V.shape}")
    weights = softmax(attention_scores(Q, K), axis=-2)
    return weights @ V, weights
""",
          (r"axis|columns?|quer(y|ies)", r"instead|-2|columns?|over the quer|query ax")),
    Wrong("02-sdpa-returns-swapped", "scaled_dot_product_attention",
          "returns (weights, output) instead of (output, weights)",
          L02 + SOFTMAX + SCORES + """
def scaled_dot_product_attention(Q, K, V):
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V need one row per key, got {K.shape} and {V.shape}")
    weights = softmax(attention_scores(Q, K))
    output = weights @ V
    return weights, output
""",
          (r"swap|order|other way round|reversed|wrong place|exchanged",)),
    Wrong("02-self-attention-scale-d_model", "self_attention",
          "computes the scores itself and scales them by the width of X (d_model) instead "
          "of the projected d_k",
          L02 + SOFTMAX + """
def self_attention(X, W_q, W_k, W_v):""" + SELF_ATTENTION_CHECKS + """\
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(X.shape[-1])
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
""",
          (r"d_model|width of X|X\.shape|features of X|model dim|input width|before (the )?proj",
           r"scale|d_k|√|sqrt|divid")),
    Wrong("02-self-attention-v-from-W_k", "self_attention",
          "projects the values with W_k (a copy-paste slip) instead of W_v",
          L02 + SOFTMAX + SCORES + SDPA + """
def self_attention(X, W_q, W_k, W_v):""" + SELF_ATTENTION_CHECKS + """\
    Q = X @ W_q
    K = X @ W_k
    V = X @ W_k
    return scaled_dot_product_attention(Q, K, V)
""",
          (r"W_v|values?", r"W_k|key (matrix|projection|weights)")),
    Wrong("02-one-query-no-scale", "attend_one_query",
          "forgets to divide each score by √d_k",
          L02 + """
def attend_one_query(q, K, V):
    q = as_array(q, "q", ndim=1)
    K = as_array(K, "K", ndim=2)
    V = as_array(V, "V", ndim=2)
    if K.shape[1] != q.shape[0] or V.shape[0] != K.shape[0]:
        raise ValueError(f"q {q.shape}, K {K.shape} and V {V.shape} do not fit")
    scores = [np.sum(q * K[i]) for i in range(K.shape[0])]
    top = max(scores)
    exps = [np.exp(s - top) for s in scores]
    total = sum(exps)
    result = np.zeros(V.shape[1])
    for i in range(K.shape[0]):
        result += exps[i] / total * V[i]
    return result
""",
          (r"scal|√|sqrt|d_k",
           r"\bno\b|not scaled|not divided|without|forg|miss|omit|never|unscaled")),
    Wrong("02-one-query-unshifted-total", "attend_one_query",
          "shifts the numerators by the largest score but sums unshifted exponentials in "
          "the denominator, so the weights do not sum to 1",
          L02 + """
def attend_one_query(q, K, V):
    q = as_array(q, "q", ndim=1)
    K = as_array(K, "K", ndim=2)
    V = as_array(V, "V", ndim=2)
    if K.shape[1] != q.shape[0] or V.shape[0] != K.shape[0]:
        raise ValueError(f"q {q.shape}, K {K.shape} and V {V.shape} do not fit")
    d_k = q.shape[0]
    scores = [np.sum(q * K[i]) / np.sqrt(d_k) for i in range(K.shape[0])]
    top = max(scores)
    total = sum(np.exp(s) for s in scores)
    result = np.zeros(V.shape[1])
    for i in range(K.shape[0]):
        result += np.exp(scores[i] - top) / total * V[i]
    return result
""",
          (r"numerator|denominator|top and bottom|both|sum to 1|normali",
           r"shift|max|subtract|largest")),
    Wrong("02-variance-all-pairs", "score_variance",
          "takes the variance of the whole matrix q @ k.T (every q with every k) instead "
          "of one dot product per row",
          L02 + """
def score_variance(d_k, n_samples, seed):
    if not isinstance(d_k, (int, np.integer)) or d_k < 1:
        raise ValueError(f"d_k must be a positive integer, got {d_k!r}")
    if not isinstance(n_samples, (int, np.integer)) or n_samples < 2:
        raise ValueError(f"n_samples must be an integer of at least 2, got {n_samples!r}")
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, d_k))
    k = rng.standard_normal((n_samples, d_k))
    return float(np.var(q @ k.T))
""",
          (r"q ?@ ?k|matrix|all pairs|every pair|cross|diagonal|each q with each k|every q|"
           r"other rows|one dot product per row|row by row|row-?wise",)),
    Wrong("02-variance-std", "score_variance",
          "returns the standard deviation of the dot products instead of their variance",
          L02 + """
def score_variance(d_k, n_samples, seed):
    if not isinstance(d_k, (int, np.integer)) or d_k < 1:
        raise ValueError(f"d_k must be a positive integer, got {d_k!r}")
    if not isinstance(n_samples, (int, np.integer)) or n_samples < 2:
        raise ValueError(f"n_samples must be an integer of at least 2, got {n_samples!r}")
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, d_k))
    k = rng.standard_normal((n_samples, d_k))
    dots = np.sum(q * k, axis=1)
    return float(np.std(dots))
""",
          (r"\bstd\b|standard deviation|square root|sqrt|√",)),

    # ------------------------------------------------------------------ 03_attention_by_hand
    Wrong("03-scores-Q-then-K", "key_query_scores",
          "computes Qᵀ K instead of Kᵀ Q, so rows are queries and columns keys",
          L03 + """
def key_query_scores(K, Q):
    K = as_fractions(K, "K")
    Q = as_fractions(Q, "Q")
    if K.shape[0] != Q.shape[0]:
        raise ValueError(f"K and Q must have the same d_k, got {K.shape} and {Q.shape}")
    return Q.T @ K
""",
          (r"transpos|Qᵀ|Q\.T|swap|other way round|rows? and columns?",)),
    Wrong("03-scores-as-floats", "key_query_scores",
          "converts to floats before multiplying, so the scores are floats, not Fractions",
          L03 + """
def key_query_scores(K, Q):
    K = as_fractions(K, "K")
    Q = as_fractions(Q, "Q")
    if K.shape[0] != Q.shape[0]:
        raise ValueError(f"K and Q must have the same d_k, got {K.shape} and {Q.shape}")
    return K.T.astype(float) @ Q.astype(float)
""",
          (r"fraction|float|exact",)),
    Wrong("03-floor-int-truncates", "floor_half",
          "uses int(), which rounds toward zero: int(-1/2) is 0, not -1",
          L03 + """
def floor_half(S):
    S = as_fractions(S, "S")
    return np.vectorize(lambda s: Fraction(int(s / 2)), otypes=[object])(S)
""",
          (r"toward(s)? zero|truncat|int\(|negative|below zero|-1/2",)),
    Wrong("03-floor-round", "floor_half",
          "rounds to the nearest whole number instead of rounding down",
          L03 + """
def floor_half(S):
    S = as_fractions(S, "S")
    return np.vectorize(lambda s: Fraction(round(s / 2)), otypes=[object])(S)
""",
          (r"round|nearest|even",)),
    Wrong("03-softmax3-rows", "softmax3_columns",
          "divides every row by its sum instead of every column",
          L03 + """
def softmax3_columns(S):
    S = as_fractions(S, "S", whole=True)
    powers = np.array([[Fraction(3) ** s for s in row] for row in S], dtype=object)
    return powers / powers.sum(axis=1, keepdims=True)
""",
          (r"each row|every row|rows? (sum|add)|along (the |each )?rows?|across (the |each )?rows?|"
           r"per row|axis ?=? ?1|row sums?",)),
    Wrong("03-softmax3-float-powers", "softmax3_columns",
          "raises the float 3.0 to the scores, so the weights are floats, not exact Fractions",
          L03 + """
def softmax3_columns(S):
    S = as_fractions(S, "S", whole=True)
    powers = 3.0 ** S.astype(int)
    return powers / powers.sum(axis=0)
""",
          (r"fraction|float|exact",)),
    Wrong("03-by-hand-Z-A-V", "attention_by_hand",
          "computes Z = A V (the row convention's order) instead of Z = V A",
          L03 + BY_HAND_HELPERS + """
def attention_by_hand(X, W_Q, W_K, W_V):""" + BY_HAND_CHECKS + """\
    Q, K, V = W_Q @ X, W_K @ X, W_V @ X
    scores = key_query_scores(K, Q)
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    Z = A @ V.T
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
""",
          (r"\bV ?@? ?A\b|\bA ?@? ?V\b|order of the product|other way round|column reading|"
           r"transpos",)),
    Wrong("03-by-hand-args-swapped", "attention_by_hand",
          "calls key_query_scores(Q, K), so the scores are Qᵀ K: transposed",
          L03 + BY_HAND_HELPERS + """
def attention_by_hand(X, W_Q, W_K, W_V):""" + BY_HAND_CHECKS + """\
    Q, K, V = W_Q @ X, W_K @ X, W_V @ X
    scores = key_query_scores(Q, K)
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    Z = V @ A
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
""",
          (r"swap|K, ?Q|Q, ?K|argument|transpos|other way round",)),
    Wrong("03-rows-softmax-down-columns", "row_convention_attention",
          "with tokens as rows, still normalises each column (softmax3_columns without the "
          "transposes), so the weights of each query do not sum to 1",
          L03 + BY_HAND_HELPERS + """
def row_convention_attention(X_rows, W_Q, W_K, W_V):""" + ROWS_CHECKS + """\
    Q, K, V = X_rows @ W_Q.T, X_rows @ W_K.T, X_rows @ W_V.T
    scores = Q @ K.T
    scaled = floor_half(scores)
    A = softmax3_columns(scaled)
    Z = A @ V
    return {"Q": Q, "K": K, "V": V, "scores": scores, "scaled": scaled, "A": A, "Z": Z}
""",
          (r"columns?", r"softmax|normali|sums? to 1|weights")),
    Wrong("03-sheet-scores-transposed", "worksheet_scores",
          "wrote Qᵀ K on paper: the score table transposed (rows are queries)",
          _sheet(scores="3 6 0 1\n1 3 -1 1\n3 4 2 0\n2 4 0 1"),
          (r"transpos|Qᵀ ?K|swap|rows? and columns?|rows? for columns?",)),
    Wrong("03-sheet-scaled-toward-zero", "worksheet_scaled",
          "rounded -1/2 toward zero (to 0) instead of down (to -1)",
          _sheet(scaled="1 0 1 1\n3 1 2 2\n0 0 1 0\n0 0 0 0"),
          (r"floor|round|toward(s)? zero|negative|down|-1",)),
    Wrong("03-sheet-A-rows", "worksheet_A",
          "normalised the powers of 3 along each row instead of each column",
          _sheet(A="3/10 1/10 3/10 3/10\n9/16 1/16 3/16 3/16\n3/16 1/16 9/16 3/16\n"
                   "1/4 1/4 1/4 1/4"),
          (r"rows? (sum|add)|per row|each row|along (the |each )?rows?|across (the |each )?rows?|"
           r"row sums?|normali[sz]ed (by|along|across) rows?",)),
    Wrong("03-sheet-K-sign-slip", "worksheet_K",
          "one arithmetic slip: K[1, 2] written as 1 instead of -1 (a sign dropped)",
          _sheet(K="1 2 0 0\n0 1 1 1\n1 1 1 0"),
          (r"entry|position|row 2|\[1, ?2\]|\(2, ?3\)", r"made of|sum|dot|product|W_K|sign")),
    Wrong("03-sheet-Z-transposed", "worksheet_Z",
          "wrote Z with tokens as rows (4 rows of 3), the transpose of V A",
          _sheet(Z="3/16 3/16 1/16\n1/2 5/8 1/4\n5/8 1/2 1/4\n3/7 3/7 1/7"),
          (r"transpos|4 ?[×x] ?3|3 ?[×x] ?4|rows and columns|one (column|row) per token|"
           r"4 rows",)),

    # ------------------------------------------------------------------ 04_masking
    Wrong("04-causal-no-diagonal", "causal_mask",
          "uses the strict lower triangle (k=-1), so a token cannot see itself",
          L04 + """
def causal_mask(T):
    T = positive_int(T, "T")
    return np.tril(np.ones((T, T), dtype=bool), k=-1)
""",
          (r"itself|j ?(<=|≤)? ?i|off by one|shift|strict|(leaves?|left) out the diagonal|"
           r"without the diagonal|exclud\w* the diagonal",)),
    Wrong("04-causal-upper", "causal_mask",
          "returns the upper triangle: each query sees itself and the future, not the past",
          L04 + """
def causal_mask(T):
    T = positive_int(T, "T")
    return np.triu(np.ones((T, T), dtype=bool))
""",
          (r"upper|transpos|triu|above the diagonal|future|later (keys|tokens)|"
           r"column convention",)),
    Wrong("04-causal-float", "causal_mask",
          "returns 1.0 and 0.0 (np.tril of ones) instead of a boolean array",
          L04 + """
def causal_mask(T):
    T = positive_int(T, "T")
    return np.tril(np.ones((T, T)))
""",
          (r"bool|dtype|float",)),
    Wrong("04-padding-one-extra", "padding_mask",
          "compares positions with <= length, so the first padding position counts as real",
          L04 + """
def padding_mask(lengths, T):""" + LENGTHS_HEAD + """\
    return np.arange(T)[None, :] <= lengths[:, None]
""",
          (r"off by one|one too many|<=|≤|one extra|one more|extra position|position (equal to|==) "
           r"(the )?length|first padding|one padding position",)),
    Wrong("04-padding-inverted", "padding_mask",
          "returns True at the padding and False at the real tokens",
          L04 + """
def padding_mask(lengths, T):""" + LENGTHS_HEAD + """\
    return np.arange(T)[None, :] >= lengths[:, None]
""",
          (r"polarity|invert|opposite|revers|negat|True (at|for|means) (the )?pad|~",)),
    Wrong("04-attention-mask-pads-queries", "attention_mask",
          "puts the padding on the query axis ([B, T, 1]) instead of the key axis ([B, 1, T])",
          L04 + MASKS + ATTENTION_MASK_HEAD + """\
    real = padding_mask(lengths, T)[:, :, None]
    if not causal:
        return np.broadcast_to(real, (len(lengths), T, T)).copy()
    return real & causal_mask(T)[None, :, :]
""",
          (r"quer(y|ies)|rows?", r"keys?|columns?", r"instead|rather|not|wrong|should")),
    Wrong("04-attention-mask-no-broadcast", "attention_mask",
          "with causal=False returns the [B, 1, T] key mask without broadcasting it to "
          "[B, T, T]",
          L04 + MASKS + ATTENTION_MASK_HEAD + """\
    keys = padding_mask(lengths, T)[:, None, :]
    if not causal:
        return keys
    return keys & causal_mask(T)[None, :, :]
""",
          (r"\[B, ?1, ?T\]|\(B, ?1, ?T\)|broadcast|size 1|one row|repeat|expand|\[B, ?T, ?T\]",)),
    Wrong("04-masked-softmax-fill-zero", "masked_softmax",
          "writes 0 into the masked scores instead of -inf, so masked keys keep weight",
          L04 + """
def masked_softmax(scores, mask):
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    filled = np.where(mask, scores, 0.0)
    e = np.exp(filled - filled.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
""",
          (r"\b0\b|zero", r"inf|∞")),
    Wrong("04-masked-softmax-after", "masked_softmax",
          "takes the softmax first and multiplies by the mask afterwards, so rows no longer "
          "sum to 1 and the masked scores leak through the denominator",
          L04 + """
def masked_softmax(scores, mask):
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights * mask
""",
          (r"after", r"softmax|normali")),
    Wrong("04-masked-softmax-nan-row", "masked_softmax",
          "fills with -inf and takes lesson 02's stable softmax, so a row with no allowed "
          "key becomes NaN",
          L04 + """
def masked_softmax(scores, mask):
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    filled = np.where(mask, scores, -np.inf)
    e = np.exp(filled - filled.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
""",
          (r"nan|no allowed|empty row|every key (is )?masked|all (keys )?masked|fully masked",)),
    Wrong("04-masked-softmax-minus-1e9", "masked_softmax",
          "fills with -1e9, so a row with no allowed key spreads its weight evenly over "
          "forbidden keys",
          L04 + """
def masked_softmax(scores, mask):
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    filled = np.where(mask, scores, -1e9)
    e = np.exp(filled - filled.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
""",
          (r"1e9|1e\+09|large negative|finite|uniform|even(ly)?|no allowed|fully masked|"
           r"every key (is )?masked|all (keys )?masked|empty",)),
    Wrong("04-masked-softmax-inverted", "masked_softmax",
          "masks where the mask is True (the polarity of nn.MultiheadAttention)",
          L04 + """
def masked_softmax(scores, mask):
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    filled = np.where(mask, -np.inf, scores)
    top = filled.max(axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(filled - top)
    total = e.sum(axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)
""",
          (r"polarity|invert|opposite|revers|negat|True means|~",)),
    Wrong("04-masked-attention-no-scale", "masked_attention",
          "forgets to divide the scores by √d_k before the masked softmax",
          L04 + MASKED_SOFTMAX + MASKED_ATTENTION_HEAD + """\
    scores = Q @ np.swapaxes(K, -1, -2)
    if mask is None:
        mask = np.ones(scores.shape[-2:], dtype=bool)
    weights = masked_softmax(scores, mask)
    return weights @ V, weights
""",
          (r"scal|√|sqrt|d_k",
           r"\bno\b|not scaled|not divided|without|forg|miss|omit|never|unscaled")),
    Wrong("04-masked-attention-none", "masked_attention",
          "passes mask=None straight to masked_softmax, which needs a boolean array",
          L04 + MASKED_SOFTMAX + MASKED_ATTENTION_HEAD + """\
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    weights = masked_softmax(scores, mask)
    return weights @ V, weights
""",
          (r"none|no mask|without a mask",)),
    Wrong("04-prefix-column-sums", "prefix_average",
          "normalises the lower-triangular matrix by its column sums instead of its row sums",
          L04 + """
def prefix_average(X):
    X = as_array(X, "X", min_ndim=2)
    T = X.shape[-2]
    W = np.tril(np.ones((T, T)))
    W = W / W.sum(axis=0, keepdims=True)
    return W @ X
""",
          (r"columns?|axis ?=? ?0",)),
    Wrong("04-prefix-divide-by-T", "prefix_average",
          "divides every row of the triangle by T instead of by the number of rows it "
          "averages (i + 1)",
          L04 + """
def prefix_average(X):
    X = as_array(X, "X", min_ndim=2)
    T = X.shape[-2]
    W = np.tril(np.ones((T, T))) / T
    return W @ X
""",
          (r"/ ?T\b|by T\b|same (number|divisor)|i ?\+ ?1|how many|count|rows? (do not|don't) "
           r"sum|sum to 1",)),
    Wrong("04-mha-mask-numpy", "to_mha_key_padding_mask",
          "returns a NumPy array instead of a torch bool tensor",
          L04 + """
def to_mha_key_padding_mask(lengths, T):""" + LENGTHS_HEAD + """\
    return np.arange(T)[None, :] >= lengths[:, None]
""",
          (r"tensor|torch|numpy|ndarray",)),
    Wrong("04-mha-mask-course-polarity", "to_mha_key_padding_mask",
          "keeps the course's polarity (True at real tokens), where key_padding_mask means "
          "True = ignore",
          L04 + """
def to_mha_key_padding_mask(lengths, T):""" + LENGTHS_HEAD + """\
    return torch.from_numpy(np.arange(T)[None, :] < lengths[:, None])
""",
          (r"polarity|invert|opposite|revers|negat|True means|ignore|~",)),
    Wrong("04-is-causal-changes-t-too", "is_causal",
          "replaces the tokens from t on (X[t:]) instead of after t, so even a causal layer "
          "looks non-causal",
          L04 + """
def is_causal(attend, T, d, seed=0):
    if not callable(attend):
        raise ValueError(f"attend must be a function of X [T, d], got {type(attend).__name__}")
    T, d = positive_int(T, "T"), positive_int(d, "d")
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, d))
    before = np.asarray(attend(X))
    for t in range(T):
        changed = X.copy()
        changed[t:] = rng.normal(size=(T - t, d))
        if not np.allclose(np.asarray(attend(changed))[: t + 1], before[: t + 1]):
            return False
    return True
""",
          (r"X\[t:\]|t itself|token t|including t|itself|off by one|t ?\+ ?1|after t",)),
    Wrong("04-is-causal-whole-output", "is_causal",
          "compares every output with before, not only outputs 0..t, so a causal layer "
          "fails because its later outputs (rightly) change",
          L04 + """
def is_causal(attend, T, d, seed=0):
    if not callable(attend):
        raise ValueError(f"attend must be a function of X [T, d], got {type(attend).__name__}")
    T, d = positive_int(T, "T"), positive_int(d, "d")
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, d))
    before = np.asarray(attend(X))
    for t in range(T - 1):
        changed = X.copy()
        changed[t + 1:] = rng.normal(size=(T - t - 1, d))
        if not np.allclose(np.asarray(attend(changed)), before):
            return False
    return True
""",
          (r"\[: ?t ?\+ ?1\]|earlier outputs|prefix|0 ?\.\. ?t|outputs? (0|up to)|later outputs|"
           r"whole output|every output|all (the )?outputs",)),

    # ------------------------------------------------------------------ 05_multi_head_attention
    Wrong("05-split-no-transpose", "split_heads",
          "reshapes straight to [B, h, T, d_head], which re-reads memory and mixes tokens "
          "between heads",
          L05 + SPLIT_HEAD + """\
    return x.reshape(B, n_heads, T, d_model // n_heads)
""",
          (r"transpos|swap|permut|mix(es|ed)? (the )?tokens",)),
    Wrong("05-split-strided", "split_heads",
          "cuts the features as [d_head, h] and permutes, so head i gets every h-th feature "
          "instead of a contiguous block",
          L05 + SPLIT_HEAD + """\
    d_head = d_model // n_heads
    return x.reshape(B, T, d_head, n_heads).permute(0, 3, 1, 2)
""",
          (r"interleav|strid|every h|every n_heads|contiguous|consecutive|block of features|"
           r"d_head, ?n_heads|\[B, ?T, ?d_head, ?h",)),
    Wrong("05-merge-no-transpose", "merge_heads",
          "reshapes [B, h, T, d_head] straight to [B, T, d_model], mixing tokens and heads",
          L05 + MERGE_HEAD + """\
    return x.reshape(B, T, h * d_head)
""",
          (r"transpos|swap|permut|mix",)),
    Wrong("05-merge-view", "merge_heads",
          "calls view after transpose, which PyTorch refuses on a non-contiguous tensor",
          L05 + MERGE_HEAD + """\
    return x.transpose(1, 2).view(B, T, h * d_head)
""",
          (r"view|contiguous|reshape",)),
    Wrong("05-merge-average", "merge_heads",
          "averages the heads instead of concatenating them",
          L05 + MERGE_HEAD + """\
    return x.mean(dim=1)
""",
          (r"average|mean|concat",)),
    Wrong("05-mha-scale-d_model", "MultiHeadAttention",
          "scales each head's scores by √d_model instead of √d_head",
          L05 + HEADS + MHA_HEAD + """\
        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_model)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return self.w_o(merge_heads(weights @ v)), weights
""",
          (r"d_model", r"d_head|scale|√|sqrt")),
    Wrong("05-mha-mask-polarity", "MultiHeadAttention",
          "fills -inf where the mask is True, the polarity of key_padding_mask",
          L05 + HEADS + MHA_HEAD + """\
        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return self.w_o(merge_heads(weights @ v)), weights
""",
          (r"polarity|invert|opposite|revers|negat|True means|~",)),
    Wrong("05-mha-no-w_o", "MultiHeadAttention",
          "returns the merged heads without the output projection w_o",
          L05 + HEADS + MHA_HEAD + """\
        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return merge_heads(weights @ v), weights
""",
          (r"w_o|output projection|out_proj|final projection",)),
    Wrong("05-mha-keys-through-w_q", "MultiHeadAttention",
          "projects the keys with w_q (a copy-paste slip) instead of w_k",
          L05 + HEADS + MHA_HEAD + """\
        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_q(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return self.w_o(merge_heads(weights @ v)), weights
""",
          (r"w_k|keys?", r"w_q|quer(y|ies)")),
    Wrong("05-mha-softmax-dim-2", "MultiHeadAttention",
          "takes the softmax over dim=-2 (the queries) instead of the keys",
          L05 + HEADS + MHA_HEAD + """\
        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-2)
        return self.w_o(merge_heads(weights @ v)), weights
""",
          (r"axis|dim|quer(y|ies)|columns?", r"instead|-2|over the quer|query ax|columns?")),
    Wrong("05-mha-weights-averaged", "MultiHeadAttention",
          "returns the weights averaged over the heads ([B, T_q, T_k], torch's default) "
          "instead of one map per head",
          L05 + HEADS + MHA_HEAD + """\
        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return self.w_o(merge_heads(weights @ v)), weights.mean(dim=1)
""",
          (r"averag|mean|one (map|set of weights) per head|\[B, ?h, ?T",)),
    Wrong("05-mha-mask-multiplied", "MultiHeadAttention",
          "multiplies the scores by the mask, so masked scores become 0 instead of -inf",
          L05 + HEADS + MHA_HEAD + """\
        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores * mask
        weights = torch.softmax(scores, dim=-1)
        return self.w_o(merge_heads(weights @ v)), weights
""",
          (r"inf|∞|masked_fill", r"\b0\b|zero|multipl")),
    Wrong("05-copy-transposed", "copy_from_torch",
          "transposes torch's weights before copying, as if in_proj_weight were [in, out]",
          L05 + COPY_HEAD + """\
    W, b = theirs.in_proj_weight, theirs.in_proj_bias
    with torch.no_grad():
        for i, layer in enumerate((ours.w_q, ours.w_k, ours.w_v)):
            layer.weight.copy_(W[i * d:(i + 1) * d].T)
            layer.bias.copy_(b[i * d:(i + 1) * d])
        ours.w_o.weight.copy_(theirs.out_proj.weight.T)
        ours.w_o.bias.copy_(theirs.out_proj.bias)
    return ours
""",
          (r"transpos|\.T\b|\[out, ?in\]|out, in",)),
    Wrong("05-copy-no-biases", "copy_from_torch",
          "copies the weights but not the biases",
          L05 + COPY_HEAD + """\
    W = theirs.in_proj_weight
    with torch.no_grad():
        ours.w_q.weight.copy_(W[:d])
        ours.w_k.weight.copy_(W[d:2 * d])
        ours.w_v.weight.copy_(W[2 * d:])
        ours.w_o.weight.copy_(theirs.out_proj.weight)
    return ours
""",
          (r"bias",)),
    Wrong("05-copy-no-out-proj", "copy_from_torch",
          "copies the three stacked input projections but leaves w_o as it was",
          L05 + COPY_HEAD + """\
    W, b = theirs.in_proj_weight, theirs.in_proj_bias
    with torch.no_grad():
        for i, layer in enumerate((ours.w_q, ours.w_k, ours.w_v)):
            layer.weight.copy_(W[i * d:(i + 1) * d])
            layer.bias.copy_(b[i * d:(i + 1) * d])
    return ours
""",
          (r"w_o|out_proj|output projection",)),
    Wrong("05-copy-q-k-swapped", "copy_from_torch",
          "reads the stacked projections in the order key, query, value",
          L05 + COPY_HEAD + """\
    W, b = theirs.in_proj_weight, theirs.in_proj_bias
    with torch.no_grad():
        for i, layer in enumerate((ours.w_k, ours.w_q, ours.w_v)):
            layer.weight.copy_(W[i * d:(i + 1) * d])
            layer.bias.copy_(b[i * d:(i + 1) * d])
        ours.w_o.weight.copy_(theirs.out_proj.weight)
        ours.w_o.bias.copy_(theirs.out_proj.bias)
    return ours
""",
          (r"swap|order|exchang", r"quer|keys?|w_q|w_k")),
    Wrong("05-loop-scale-d_model", "heads_one_by_one",
          "scales each head's scores by √d_model instead of √d_head",
          L05 + LOOP_HEAD + """\
    for i in range(mha.n_heads):
        rows = slice(i * d_head, (i + 1) * d_head)
        q = x @ mha.w_q.weight[rows].T + mha.w_q.bias[rows]
        k = x @ mha.w_k.weight[rows].T + mha.w_k.bias[rows]
        v = x @ mha.w_v.weight[rows].T + mha.w_v.bias[rows]
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(mha.d_model), dim=-1)
        outputs.append(weights @ v)
        maps.append(weights)
    return mha.w_o(torch.cat(outputs, dim=-1)), torch.stack(maps, dim=1)
""",
          (r"d_model", r"d_head|scale|√|sqrt")),
    Wrong("05-loop-no-bias", "heads_one_by_one",
          "slices the weights of each head but forgets the biases of w_q, w_k and w_v",
          L05 + LOOP_HEAD + """\
    for i in range(mha.n_heads):
        rows = slice(i * d_head, (i + 1) * d_head)
        q = x @ mha.w_q.weight[rows].T
        k = x @ mha.w_k.weight[rows].T
        v = x @ mha.w_v.weight[rows].T
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_head), dim=-1)
        outputs.append(weights @ v)
        maps.append(weights)
    return mha.w_o(torch.cat(outputs, dim=-1)), torch.stack(maps, dim=1)
""",
          (r"bias",)),
    Wrong("05-loop-columns", "heads_one_by_one",
          "takes a head's columns of each weight (x @ W[:, rows]) instead of its rows",
          L05 + LOOP_HEAD + """\
    for i in range(mha.n_heads):
        rows = slice(i * d_head, (i + 1) * d_head)
        q = x @ mha.w_q.weight[:, rows] + mha.w_q.bias[rows]
        k = x @ mha.w_k.weight[:, rows] + mha.w_k.bias[rows]
        v = x @ mha.w_v.weight[:, rows] + mha.w_v.bias[rows]
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_head), dim=-1)
        outputs.append(weights @ v)
        maps.append(weights)
    return mha.w_o(torch.cat(outputs, dim=-1)), torch.stack(maps, dim=1)
""",
          (r"columns?|transpos|\[out, ?in\]|out, ?in",)),
    Wrong("05-loop-stack-dim-0", "heads_one_by_one",
          "stacks the heads' maps on dim 0, giving [h, B, T, T] instead of [B, h, T, T]",
          L05 + LOOP_HEAD + """\
    for i in range(mha.n_heads):
        rows = slice(i * d_head, (i + 1) * d_head)
        q = x @ mha.w_q.weight[rows].T + mha.w_q.bias[rows]
        k = x @ mha.w_k.weight[rows].T + mha.w_k.bias[rows]
        v = x @ mha.w_v.weight[rows].T + mha.w_v.bias[rows]
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_head), dim=-1)
        outputs.append(weights @ v)
        maps.append(weights)
    return mha.w_o(torch.cat(outputs, dim=-1)), torch.stack(maps)
""",
          (r"stack|\[B, ?h|\(B, ?h|head ax[ie]s|dim ?= ?(0|1)|\[h, ?B|\(h, ?B|batch ax[ie]s "
           r"(and|with) (the )?head",)),
    Wrong("05-count-no-bias", "mha_parameter_count",
          "counts the four weight matrices but not their biases",
          L05 + COUNT_HEAD + """\
    return 4 * d_model * d_model
""",
          (r"bias",)),
    Wrong("05-count-no-w_o", "mha_parameter_count",
          "counts w_q, w_k and w_v but forgets the output projection",
          L05 + COUNT_HEAD + """\
    return 3 * (d_model * d_model + d_model)
""",
          (r"w_o|output projection|out_proj|fourth|three (layers|projections|matrices)|only 3",)),
    Wrong("05-count-per-head", "mha_parameter_count",
          "gives every head its own d_model × d_model matrices, so the count grows with "
          "n_heads",
          L05 + COUNT_HEAD + """\
    return n_heads * 4 * (d_model * d_model + d_model)
""",
          (r"n_heads|heads", r"multipl|per head|times|depend|each head|grow")),
    Wrong("05-down-up-untransposed", "value_down_up",
          "returns the slices in nn.Linear's [out, in] layout: down [d_head, d_model] and "
          "up [d_model, d_head]",
          L05 + DOWN_UP_HEAD + """\
    down = mha.w_v.weight[features, :].detach()
    up = mha.w_o.weight[:, features].detach()
    return down, up
""",
          (r"transpos|\[out, ?in\]|out, ?in|\.T\b",)),
    Wrong("05-down-up-rows-of-w_o", "value_down_up",
          "takes the head's rows of w_o (output features) for value-up instead of its "
          "columns (input features)",
          L05 + DOWN_UP_HEAD + """\
    down = mha.w_v.weight[features, :].T.detach()
    up = mha.w_o.weight[features, :].detach()
    return down, up
""",
          (r"columns?|input features?|rows? of w_o|output features?",)),

    # ------------------------------------------------------------------ 06_residual_ablation
    Wrong("06-block-post-norm", "Block",
          "writes a post-norm block: the norm is applied to the sum x + sublayer(x), so "
          "the stream itself is normalised",
          L06 + BLOCK_HEAD + """\
        attended = self.attn(x, x, x, need_weights=False)[0]
        x = self.ln1(x + attended) if self.residual else self.ln1(attended)
        update = self.mlp(x)
        return self.ln2(x + update) if self.residual else self.ln2(update)
""",
          (r"post-?norm|pre-?norm|normali[sz]e[sd]? the stream|after the (add|sum|residual|skip)"
           r"|ln1?\(x ?\+|inside the branch|norm(ali[sz]ation)? (is )?in the wrong place",)),
    Wrong("06-block-skip-normalised", "Block",
          "adds the sublayer's output to the normalised copy h instead of the stream x",
          L06 + BLOCK_HEAD + """\
        h = self.ln1(x)
        attended = self.attn(h, h, h, need_weights=False)[0]
        x = h + attended if self.residual else attended
        h = self.ln2(x)
        update = self.mlp(h)
        return h + update if self.residual else update
""",
          (r"normali[sz]|ln1|layer ?norm", r"skip|residual|add",
           r"instead|rather|not the|itself|raw|unnormali")),
    Wrong("06-block-keeps-mlp-skip", "Block",
          "with residual=False removes only the attention skip and keeps the MLP's",
          L06 + BLOCK_HEAD + """\
        h = self.ln1(x)
        attended = self.attn(h, h, h, need_weights=False)[0]
        x = x + attended if self.residual else attended
        return x + self.mlp(self.ln2(x))
""",
          (r"mlp|second skip|both skips|two skips|one skip|feed-?forward",)),
    Wrong("06-block-ln1-twice", "Block",
          "normalises the MLP's input with ln1 again instead of ln2",
          L06 + BLOCK_HEAD + """\
        h = self.ln1(x)
        attended = self.attn(h, h, h, need_weights=False)[0]
        x = x + attended if self.residual else attended
        update = self.mlp(self.ln1(x))
        return x + update if self.residual else update
""",
          (r"ln2|ln_2|second (layer ?)?norm|same (layer ?)?norm|ln1 twice",)),
    Wrong("06-block-adds-the-pair", "Block",
          "adds what nn.MultiheadAttention returns, the pair (output, weights), to the stream",
          L06 + BLOCK_HEAD + """\
        h = self.ln1(x)
        attended = self.attn(h, h, h)
        x = x + attended if self.residual else attended
        update = self.mlp(self.ln2(x))
        return x + update if self.residual else update
""",
          (r"tuple|pair|\[0\]|two things|returns two|\(output, ?weights\)",)),
    Wrong("06-block-causal-mask", "Block",
          "hides the future with a causal attn_mask, which this lesson's block must not do",
          L06 + BLOCK_HEAD + """\
        T = x.shape[1]
        future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        h = self.ln1(x)
        attended = self.attn(h, h, h, attn_mask=future, need_weights=False)[0]
        x = x + attended if self.residual else attended
        update = self.mlp(self.ln2(x))
        return x + update if self.residual else update
""",
          (r"mask|causal",)),
    Wrong("06-model-no-positions", "TinyTransformer",
          "embeds the tokens but forgets to add the position embeddings",
          L06 + BLOCK + MODEL_HEAD + MODEL_BLOCKS + MODEL_TAIL + """\
        stream = self.tok_emb(tokens)
        for block in self.blocks:
            stream = block(stream)
        return self.head(self.ln_f(stream))
""",
          (r"pos|position",)),
    Wrong("06-model-no-final-norm", "TinyTransformer",
          "sends the last block's stream to the head without ln_f",
          L06 + BLOCK + MODEL_HEAD + MODEL_BLOCKS + MODEL_TAIL + """\
        positions = torch.arange(tokens.shape[1])
        stream = self.tok_emb(tokens) + self.pos_emb(positions)
        for block in self.blocks:
            stream = block(stream)
        return self.head(stream)
""",
          (r"ln_f|final (layer ?)?norm|last (layer ?)?norm",)),
    Wrong("06-model-one-block-repeated", "TinyTransformer",
          "builds the list as [block] * n_layers: one block (one set of weights) run "
          "n_layers times",
          L06 + BLOCK + MODEL_HEAD + """\
        block = Block(d_model, n_heads, d_ff, residual=residual)
        self.blocks = nn.ModuleList([block] * n_layers)
""" + MODEL_TAIL + MODEL_FORWARD,
          (r"same block|shar(e|ed|ing)|one block|repeat|\* ?n_layers|copies|same object|"
           r"same (set of )?weights|one set of weights",)),
    Wrong("06-model-drops-residual-flag", "TinyTransformer",
          "builds every Block with its default residual=True, ignoring the model's flag",
          L06 + BLOCK + MODEL_HEAD + """\
        self.blocks = nn.ModuleList([Block(d_model, n_heads, d_ff) for _ in range(n_layers)])
""" + MODEL_TAIL + MODEL_FORWARD,
          (r"residual", r"flag|pass|ignor|every block|False|default|each block")),
    Wrong("06-model-positions-seq_len", "TinyTransformer",
          "takes positions arange(seq_len) instead of arange(T), which breaks for sequences "
          "shorter than seq_len",
          L06 + BLOCK + MODEL_HEAD + MODEL_BLOCKS + MODEL_TAIL + """\
        positions = torch.arange(self.seq_len)
        stream = self.tok_emb(tokens) + self.pos_emb(positions)
        for block in self.blocks:
            stream = block(stream)
        return self.head(self.ln_f(stream))
""",
          (r"seq_len|shorter|tokens\.shape|fewer (than|tokens)|actual (length|number)|T ?<",)),
    Wrong("06-similarity-with-diagonal", "token_similarity",
          "averages the whole cosine matrix, each token's similarity 1 with itself included",
          L06 + """
def token_similarity(h):
    h = as_hidden(h)
    unit = h / h.norm(dim=-1, keepdim=True)
    cosines = unit @ unit.transpose(-1, -2)
    return float(cosines.mean())
""",
          (r"diagonal|itself|distinct|T ?\(T ?- ?1\)|i ?= ?j|own|self-similarity",)),
    Wrong("06-similarity-dot-products", "token_similarity",
          "averages dot products without dividing by the lengths: not a cosine",
          L06 + """
def token_similarity(h):
    h = as_hidden(h)
    dots = h @ h.transpose(-1, -2)
    T = h.shape[-2]
    off = dots.sum(dim=(-1, -2)) - dots.diagonal(dim1=-2, dim2=-1).sum(dim=-1)
    return float((off / (T * (T - 1))).mean())
""",
          (r"normali[sz]|cosine|unit|length|magnitude|norm\b",)),
    Wrong("06-similarity-norm-over-tokens", "token_similarity",
          "normalises along the token axis (dim=-2) instead of each token's features",
          L06 + """
def token_similarity(h):
    h = as_hidden(h)
    unit = h / h.norm(dim=-2, keepdim=True)
    cosines = unit @ unit.transpose(-1, -2)
    T = h.shape[-2]
    off = cosines.sum(dim=(-1, -2)) - cosines.diagonal(dim1=-2, dim2=-1).sum(dim=-1)
    return float((off / (T * (T - 1))).mean())
""",
          (r"dim|axis|axes", r"-2|tokens?|features")),
    Wrong("06-similarity-tensor", "token_similarity",
          "returns a 0-d tensor instead of a Python float",
          L06 + """
def token_similarity(h):
    h = as_hidden(h)
    unit = h / h.norm(dim=-1, keepdim=True)
    cosines = unit @ unit.transpose(-1, -2)
    T = h.shape[-2]
    off = cosines.sum(dim=(-1, -2)) - cosines.diagonal(dim1=-2, dim2=-1).sum(dim=-1)
    return (off / (T * (T - 1))).mean()
""",
          (r"tensor|\.item",)),
    Wrong("06-train-zero-grad-after-backward", "train",
          "clears the gradients between backward and step, so the optimizer steps with "
          "zero gradients",
          L06 + TRAIN_HEAD + """\
    for step in range(steps):
        tokens, targets = task.sample(generator)
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        loss.backward()
        optimizer.zero_grad()
        optimizer.step()
        losses.append(loss.item())
    return losses
""",
          (r"zero_grad|clear", r"before|after|order|wipe|erase|between")),
    Wrong("06-train-never-zero-grad", "train",
          "never clears the gradients, so they accumulate from step to step",
          L06 + TRAIN_HEAD + """\
    for step in range(steps):
        tokens, targets = task.sample(generator)
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
""",
          (r"zero_grad|clear|accumul",)),
    Wrong("06-train-loss-tensors", "train",
          "records the loss tensors themselves instead of Python floats",
          L06 + TRAIN_HEAD + """\
    for step in range(steps):
        tokens, targets = task.sample(generator)
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss)
    return losses
""",
          (r"tensor|\.item",)),
    Wrong("06-train-same-batch", "train",
          "makes a new generator from the seed at every step, so every step trains on the "
          "same batch",
          L06 + TRAIN_HEAD + """\
    for step in range(steps):
        tokens, targets = task.sample(torch.Generator().manual_seed(seed))
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
""",
          (r"same batch|re-?seed|new generator|fresh generator|generator (at|on|in) (each|every)|"
           r"reset|given generator|the generator",)),
    Wrong("06-train-unflattened", "train",
          "hands cross_entropy the logits [batch, T, vocab] unflattened, so it reads T as "
          "the class axis",
          L06 + TRAIN_HEAD + """\
    for step in range(steps):
        tokens, targets = task.sample(generator)
        logits = model(tokens)
        loss = F.cross_entropy(logits, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
""",
          (r"flatten|reshape|batch ?· ?T|batch ?\* ?T|class(es)? (axis|dim)|dim(ension)? 1|"
           r"vocab(ulary)? ax",)),
    Wrong("06-ablation-seeded-once", "run_ablation",
          "seeds torch once before the sweep, so the models with and without residuals "
          "start from different weights",
          L06 + ABLATION_HELPERS + ABLATION_HEAD + """\
    torch.manual_seed(seed)
    for depth in depths:
        for residual in (True, False):
            model = TinyTransformer(**MODEL, n_layers=depth, residual=residual)
            before = [token_similarity(h) for h in layer_outputs(model, probe)]
            losses = train(model, TASK, steps, seed)
            rows.append({
                "depth": depth, "residual": residual, "losses": losses,
                "final_loss": float(np.mean(losses[-10:])),
                "similarity_init": before,
                "similarity_trained": [token_similarity(h) for h in layer_outputs(model, probe)],
            })
    return rows
""",
          (r"seed|weights|manual_seed|initiali[sz]",
           r"once|only before|before the (loop|sweep)|different (initial )?weights|"
           r"not the same weights")),
    Wrong("06-ablation-last-loss", "run_ablation",
          "records the very last loss as final_loss instead of the mean of the last 10",
          L06 + ABLATION_HELPERS + ABLATION_HEAD + """\
    for depth in depths:
        for residual in (True, False):
            torch.manual_seed(seed)
            model = TinyTransformer(**MODEL, n_layers=depth, residual=residual)
            before = [token_similarity(h) for h in layer_outputs(model, probe)]
            losses = train(model, TASK, steps, seed)
            rows.append({
                "depth": depth, "residual": residual, "losses": losses,
                "final_loss": losses[-1],
                "similarity_init": before,
                "similarity_trained": [token_similarity(h) for h in layer_outputs(model, probe)],
            })
    return rows
""",
          (r"last 10|mean of the last|average of the last|10 losses|last loss|single loss|"
           r"only the last|ten",)),
    Wrong("06-ablation-without-first", "run_ablation",
          "trains the model without residuals first at each depth, so the rows come in the "
          "wrong order",
          L06 + ABLATION_HELPERS + ABLATION_HEAD + """\
    for depth in depths:
        for residual in (False, True):
            torch.manual_seed(seed)
            model = TinyTransformer(**MODEL, n_layers=depth, residual=residual)
            before = [token_similarity(h) for h in layer_outputs(model, probe)]
            losses = train(model, TASK, steps, seed)
            rows.append({
                "depth": depth, "residual": residual, "losses": losses,
                "final_loss": float(np.mean(losses[-10:])),
                "similarity_init": before,
                "similarity_trained": [token_similarity(h) for h in layer_outputs(model, probe)],
            })
    return rows
""",
          (r"order|first|swap|revers",)),
    Wrong("06-ablation-trained-before", "run_ablation",
          "measures similarity_trained before training, so it equals similarity_init",
          L06 + ABLATION_HELPERS + ABLATION_HEAD + """\
    for depth in depths:
        for residual in (True, False):
            torch.manual_seed(seed)
            model = TinyTransformer(**MODEL, n_layers=depth, residual=residual)
            sims = [token_similarity(h) for h in layer_outputs(model, probe)]
            losses = train(model, TASK, steps, seed)
            rows.append({
                "depth": depth, "residual": residual, "losses": losses,
                "final_loss": float(np.mean(losses[-10:])),
                "similarity_init": sims,
                "similarity_trained": sims,
            })
    return rows
""",
          (r"similarity_trained|untrained|measured before|never trained|"
           r"before (the )?training, not|(same as|equals?) (the )?(similarity_init|initial)",)),
    Wrong("06-ablation-with-flagless-model", "run_ablation",
          "a right sweep built on the learner's TinyTransformer, which builds every Block "
          "with residual=True whatever its own flag says",
          L06 + BLOCK + MODEL_HEAD + """\
        self.blocks = nn.ModuleList([Block(d_model, n_heads, d_ff) for _ in range(n_layers)])
""" + MODEL_TAIL + MODEL_FORWARD + SIMILARITY + TRAIN + ABLATION_HEAD + """\
    for depth in depths:
        for residual in (True, False):
            torch.manual_seed(seed)
            model = TinyTransformer(**MODEL, n_layers=depth, residual=residual)
            before = [token_similarity(h) for h in layer_outputs(model, probe)]
            losses = train(model, TASK, steps, seed)
            rows.append({
                "depth": depth, "residual": residual, "losses": losses,
                "final_loss": float(np.mean(losses[-10:])),
                "similarity_init": before,
                "similarity_trained": [token_similarity(h) for h in layer_outputs(model, probe)],
            })
    return rows
""",
          (r"TinyTransformer", r"fail|own check|does not pass|residual")),

    # ------------------------------------------------------------------ 07_long_attention
    Wrong("07-stats-two-pass", "online_softmax_stats",
          "joins the blocks into one row and takes the max and the sum in two passes",
          L07 + """
def online_softmax_stats(scores_blocks):
    blocks = score_blocks(scores_blocks)
    row = np.concatenate(list(blocks))
    m = row.max()
    s = np.exp(row - m).sum()
    return float(m), float(s)
""",
          (r"two.?pass|concatenat|join|one pass|whole row",)),
    Wrong("07-stats-no-rescale", "online_softmax_stats",
          "adds each block's terms with the new maximum but never rescales the running sum "
          "when the maximum grows",
          L07 + """
def online_softmax_stats(scores_blocks):
    blocks = score_blocks(scores_blocks)
    m, s = -np.inf, 0.0
    for block in blocks:
        m = max(m, block.max())
        s = s + np.exp(block - m).sum()
    return float(m), float(s)
""",
          (r"rescal|e\^\(?m|exp\(m|multiply the (running )?sum|old sum|shrink|correct(ion)? "
           r"factor|when the max(imum)? (grows|changes|increases)",)),
    Wrong("07-stats-start-at-zero", "online_softmax_stats",
          "starts the running maximum at 0 instead of -inf, so rows of negative scores get "
          "m = 0",
          L07 + """
def online_softmax_stats(scores_blocks):
    blocks = score_blocks(scores_blocks)
    m, s = 0.0, 0.0
    for block in blocks:
        m_new = max(m, block.max())
        s = s * np.exp(m - m_new) + np.exp(block - m_new).sum()
        m = m_new
    return float(m), float(s)
""",
          (r"start|initial|begin|before the first", r"\b0\b|zero|-inf|−∞|-∞|infinity")),
    Wrong("07-stats-rescale-inverted", "online_softmax_stats",
          "rescales the running sum by exp(m' - m) instead of exp(m - m'): the sign of the "
          "correction is flipped",
          L07 + """
def online_softmax_stats(scores_blocks):
    blocks = score_blocks(scores_blocks)
    m, s = -np.inf, 0.0
    for block in blocks:
        m_new = max(m, block.max())
        if s > 0:
            s = s * np.exp(m_new - m)
        s = s + np.exp(block - m_new).sum()
        m = m_new
    return float(m), float(s)
""",
          (r"sign|revers|invert|other way|upside|m ?- ?m'|m' ?- ?m|m_new ?- ?m|m ?- ?m_new",)),
    Wrong("07-stats-returns-s-m", "online_softmax_stats",
          "returns (s, m) instead of (m, s)",
          L07 + """
def online_softmax_stats(scores_blocks):
    blocks = score_blocks(scores_blocks)
    m, s = -np.inf, 0.0
    for block in blocks:
        m_new = max(m, block.max())
        s = s * np.exp(m - m_new) + np.exp(block - m_new).sum()
        m = m_new
    return float(s), float(m)
""",
          (r"swap|order|other way round|revers|exchang",)),
    Wrong("07-one-pass-no-scale", "attention_one_pass",
          "forgets to divide the scores by √d_k",
          L07 + """
def attention_one_pass(q, K, V, block):
    q, K, V = one_query(q, K, V)
    block = positive_int(block, "block")
    m, s = -np.inf, 0.0
    o = np.zeros(V.shape[1])
    for j in range(0, K.shape[0], block):
        scores = K[j:j + block] @ q
        m_new = max(m, scores.max())
        p = np.exp(scores - m_new)
        s = s * np.exp(m - m_new) + p.sum()
        o = o * np.exp(m - m_new) + p @ V[j:j + block]
        m = m_new
    return o / s
""",
          (r"scal|√|sqrt|d_k",
           r"\bno\b|not scaled|not divided|without|forg|miss|omit|never|unscaled")),
    Wrong("07-one-pass-output-not-rescaled", "attention_one_pass",
          "rescales the running sum when the maximum grows, but not the running output",
          L07 + """
def attention_one_pass(q, K, V, block):
    q, K, V = one_query(q, K, V)
    block = positive_int(block, "block")
    scale = 1 / np.sqrt(q.shape[0])
    m, s = -np.inf, 0.0
    o = np.zeros(V.shape[1])
    for j in range(0, K.shape[0], block):
        scores = K[j:j + block] @ q * scale
        m_new = max(m, scores.max())
        p = np.exp(scores - m_new)
        s = s * np.exp(m - m_new) + p.sum()
        o = o + p @ V[j:j + block]
        m = m_new
    return o / s
""",
          (r"output|numerator|\bo\b|weighted sum|values?", r"rescal|multipl|e\^|exp\(|factor")),
    Wrong("07-one-pass-drops-last-block", "attention_one_pass",
          "loops over T_k // block full blocks, so the keys of a last, shorter block are "
          "never read",
          L07 + """
def attention_one_pass(q, K, V, block):
    q, K, V = one_query(q, K, V)
    block = positive_int(block, "block")
    scale = 1 / np.sqrt(q.shape[0])
    m, s = -np.inf, 0.0
    o = np.zeros(V.shape[1])
    n_blocks = max(1, K.shape[0] // block)
    for b in range(n_blocks):
        Kb, Vb = K[b * block:(b + 1) * block], V[b * block:(b + 1) * block]
        scores = Kb @ q * scale
        m_new = max(m, scores.max())
        p = np.exp(scores - m_new)
        s = s * np.exp(m - m_new) + p.sum()
        o = o * np.exp(m - m_new) + p @ Vb
        m = m_new
    return o / s
""",
          (r"last|partial|shorter|remainder|leftover|not divisible|does(n't| not) divide|"
           r"incomplete",)),
    Wrong("07-one-pass-all-scores", "attention_one_pass",
          "computes every score at once and takes a two-pass softmax, holding T_k scores",
          L07 + """
def attention_one_pass(q, K, V, block):
    q, K, V = one_query(q, K, V)
    block = positive_int(block, "block")
    scores = K @ q / np.sqrt(q.shape[0])
    e = np.exp(scores - scores.max())
    return e @ V / e.sum()
""",
          (r"memory|all (the )?scores|every score|at once|whole row|two.?pass|every key",)),
    Wrong("07-one-pass-divides-each-block", "attention_one_pass",
          "divides the running output by the running sum after every block instead of once "
          "at the end",
          L07 + """
def attention_one_pass(q, K, V, block):
    q, K, V = one_query(q, K, V)
    block = positive_int(block, "block")
    scale = 1 / np.sqrt(q.shape[0])
    m, s = -np.inf, 0.0
    o = np.zeros(V.shape[1])
    for j in range(0, K.shape[0], block):
        scores = K[j:j + block] @ q * scale
        m_new = max(m, scores.max())
        p = np.exp(scores - m_new)
        s = s * np.exp(m - m_new) + p.sum()
        o = (o * np.exp(m - m_new) + p @ V[j:j + block]) / s
        m = m_new
    return o
""",
          (r"divid|normali", r"once|end|every block|each block|after the last|too early|"
                             r"inside the loop")),
    Wrong("07-one-pass-start-at-zero", "attention_one_pass",
          "starts the running maximum at 0, so keys whose scores are all near -1000 "
          "underflow to a zero sum",
          L07 + """
def attention_one_pass(q, K, V, block):
    q, K, V = one_query(q, K, V)
    block = positive_int(block, "block")
    scale = 1 / np.sqrt(q.shape[0])
    m, s = 0.0, 0.0
    o = np.zeros(V.shape[1])
    for j in range(0, K.shape[0], block):
        scores = K[j:j + block] @ q * scale
        m_new = max(m, scores.max())
        p = np.exp(scores - m_new)
        s = s * np.exp(m - m_new) + p.sum()
        o = o * np.exp(m - m_new) + p @ V[j:j + block]
        m = m_new
    return o / s
""",
          (r"start|initial|begin", r"\b0\b|zero|-inf|−∞|-∞|infinity")),
    Wrong("07-tiles-local-positions", "tiled_attention",
          "masks a diagonal tile with positions counted within the tile, not in the whole "
          "sequence",
          L07 + """
def tiled_attention(Q, K, V, block_q, block_k, causal=False):
    Q, K, V, batch = tile_inputs(Q, K, V, causal)
    block_q, block_k = positive_int(block_q, "block_q"), positive_int(block_k, "block_k")
    T_q, T_k, d_v = Q.shape[-2], K.shape[-2], V.shape[-1]
    scale = 1 / np.sqrt(Q.shape[-1])
    out = np.zeros(batch + (T_q, d_v))
    skipped = 0
    for i0 in range(0, T_q, block_q):
        i1 = min(i0 + block_q, T_q)
        m = np.full(batch + (i1 - i0, 1), -np.inf)
        s = np.zeros(batch + (i1 - i0, 1))
        o = np.zeros(batch + (i1 - i0, d_v))
        for j0 in range(0, T_k, block_k):
            j1 = min(j0 + block_k, T_k)
            if causal and j0 > i1 - 1:
                skipped += 1
                continue
            S = Q[..., i0:i1, :] @ np.swapaxes(K[..., j0:j1, :], -1, -2) * scale
            if causal:
                S = np.where(np.arange(j1 - j0)[None, :] <= np.arange(i1 - i0)[:, None], S, -np.inf)
            m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
            p = np.exp(S - m_new)
            s = s * np.exp(m - m_new) + p.sum(axis=-1, keepdims=True)
            o = o * np.exp(m - m_new) + p @ V[..., j0:j1, :]
            m = m_new
        out[..., i0:i1, :] = o / s
    return out, skipped
""",
          (r"within (the|a|each) tile|inside the tile|local|whole[- ]sequence|global|offset|i0|j0|"
           r"absolute|relative to the tile",)),
    Wrong("07-tiles-skip-off-by-one", "tiled_attention",
          "skips a tile when j0 >= i1 - 1, so a tile whose first key is the last query's "
          "own position is skipped too",
          L07 + """
def tiled_attention(Q, K, V, block_q, block_k, causal=False):
    Q, K, V, batch = tile_inputs(Q, K, V, causal)
    block_q, block_k = positive_int(block_q, "block_q"), positive_int(block_k, "block_k")
    T_q, T_k, d_v = Q.shape[-2], K.shape[-2], V.shape[-1]
    scale = 1 / np.sqrt(Q.shape[-1])
    out = np.zeros(batch + (T_q, d_v))
    skipped = 0
    for i0 in range(0, T_q, block_q):
        i1 = min(i0 + block_q, T_q)
        m = np.full(batch + (i1 - i0, 1), -np.inf)
        s = np.zeros(batch + (i1 - i0, 1))
        o = np.zeros(batch + (i1 - i0, d_v))
        for j0 in range(0, T_k, block_k):
            j1 = min(j0 + block_k, T_k)
            if causal and j0 >= i1 - 1 and j0 > 0:
                skipped += 1
                continue
            S = Q[..., i0:i1, :] @ np.swapaxes(K[..., j0:j1, :], -1, -2) * scale
            if causal:
                S = np.where(np.arange(j0, j1)[None, :] <= np.arange(i0, i1)[:, None], S, -np.inf)
            m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
            p = np.exp(S - m_new)
            s = s * np.exp(m - m_new) + p.sum(axis=-1, keepdims=True)
            o = o * np.exp(m - m_new) + p @ V[..., j0:j1, :]
            m = m_new
        out[..., i0:i1, :] = o / s
    return out, skipped
""",
          (r"skip", r"off by one|one too many|diagonal|j0|i1|>=|boundary|touch|cross|own "
                    r"position")),
    Wrong("07-tiles-mask-not-skip", "tiled_attention",
          "masks the tiles wholly above the diagonal instead of skipping them, and reports "
          "0 skipped",
          L07 + """
def tiled_attention(Q, K, V, block_q, block_k, causal=False):
    Q, K, V, batch = tile_inputs(Q, K, V, causal)
    block_q, block_k = positive_int(block_q, "block_q"), positive_int(block_k, "block_k")
    T_q, T_k, d_v = Q.shape[-2], K.shape[-2], V.shape[-1]
    scale = 1 / np.sqrt(Q.shape[-1])
    out = np.zeros(batch + (T_q, d_v))
    for i0 in range(0, T_q, block_q):
        i1 = min(i0 + block_q, T_q)
        m = np.full(batch + (i1 - i0, 1), -np.inf)
        s = np.zeros(batch + (i1 - i0, 1))
        o = np.zeros(batch + (i1 - i0, d_v))
        for j0 in range(0, T_k, block_k):
            j1 = min(j0 + block_k, T_k)
            S = Q[..., i0:i1, :] @ np.swapaxes(K[..., j0:j1, :], -1, -2) * scale
            if causal:
                S = np.where(np.arange(j0, j1)[None, :] <= np.arange(i0, i1)[:, None], S, -np.inf)
            m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
            p = np.exp(S - m_new)
            s = s * np.exp(m - m_new) + p.sum(axis=-1, keepdims=True)
            o = o * np.exp(m - m_new) + p @ V[..., j0:j1, :]
            m = m_new
        out[..., i0:i1, :] = o / s
    return out, 0
""",
          (r"skip", r"count|mask(ed|ing)? instead|computed|never|\b0\b|none|zero")),
    Wrong("07-tiles-no-batch", "tiled_attention",
          "allocates the output and running statistics without the batch axes, so batched "
          "inputs fail",
          L07 + """
def tiled_attention(Q, K, V, block_q, block_k, causal=False):
    Q, K, V, batch = tile_inputs(Q, K, V, causal)
    block_q, block_k = positive_int(block_q, "block_q"), positive_int(block_k, "block_k")
    T_q, T_k, d_v = Q.shape[-2], K.shape[-2], V.shape[-1]
    scale = 1 / np.sqrt(Q.shape[-1])
    out = np.zeros((T_q, d_v))
    skipped = 0
    for i0 in range(0, T_q, block_q):
        i1 = min(i0 + block_q, T_q)
        m = np.full((i1 - i0, 1), -np.inf)
        s = np.zeros((i1 - i0, 1))
        o = np.zeros((i1 - i0, d_v))
        for j0 in range(0, T_k, block_k):
            j1 = min(j0 + block_k, T_k)
            if causal and j0 > i1 - 1:
                skipped += 1
                continue
            S = Q[i0:i1] @ K[j0:j1].T * scale
            if causal:
                S = np.where(np.arange(j0, j1)[None, :] <= np.arange(i0, i1)[:, None], S, -np.inf)
            m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
            p = np.exp(S - m_new)
            s = s * np.exp(m - m_new) + p.sum(axis=-1, keepdims=True)
            o = o * np.exp(m - m_new) + p @ V[j0:j1]
            m = m_new
        out[i0:i1] = o / s
    return out, skipped
""",
          (r"batch|\.\.\.|leading ax|ellipsis",)),
    Wrong("07-tiles-drop-last-rows", "tiled_attention",
          "loops over whole query blocks only (range(0, T_q - block_q + 1, block_q)), so the "
          "rows of a last, shorter block stay zero",
          L07 + """
def tiled_attention(Q, K, V, block_q, block_k, causal=False):
    Q, K, V, batch = tile_inputs(Q, K, V, causal)
    block_q, block_k = positive_int(block_q, "block_q"), positive_int(block_k, "block_k")
    T_q, T_k, d_v = Q.shape[-2], K.shape[-2], V.shape[-1]
    scale = 1 / np.sqrt(Q.shape[-1])
    out = np.zeros(batch + (T_q, d_v))
    skipped = 0
    for i0 in range(0, T_q - block_q + 1, block_q):
        i1 = i0 + block_q
        m = np.full(batch + (i1 - i0, 1), -np.inf)
        s = np.zeros(batch + (i1 - i0, 1))
        o = np.zeros(batch + (i1 - i0, d_v))
        for j0 in range(0, T_k, block_k):
            j1 = min(j0 + block_k, T_k)
            if causal and j0 > i1 - 1:
                skipped += 1
                continue
            S = Q[..., i0:i1, :] @ np.swapaxes(K[..., j0:j1, :], -1, -2) * scale
            if causal:
                S = np.where(np.arange(j0, j1)[None, :] <= np.arange(i0, i1)[:, None], S, -np.inf)
            m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
            p = np.exp(S - m_new)
            s = s * np.exp(m - m_new) + p.sum(axis=-1, keepdims=True)
            o = o * np.exp(m - m_new) + p @ V[..., j0:j1, :]
            m = m_new
        out[..., i0:i1, :] = o / s
    return out, skipped
""",
          (r"last|partial|shorter|remainder|leftover|not divisible|does(n't| not) divide|"
           r"incomplete",)),
    Wrong("07-tiles-strict-mask", "tiled_attention",
          "masks with j < i inside diagonal tiles, so a query cannot see its own key (and "
          "query 0 sees nothing)",
          L07 + """
def tiled_attention(Q, K, V, block_q, block_k, causal=False):
    Q, K, V, batch = tile_inputs(Q, K, V, causal)
    block_q, block_k = positive_int(block_q, "block_q"), positive_int(block_k, "block_k")
    T_q, T_k, d_v = Q.shape[-2], K.shape[-2], V.shape[-1]
    scale = 1 / np.sqrt(Q.shape[-1])
    out = np.zeros(batch + (T_q, d_v))
    skipped = 0
    for i0 in range(0, T_q, block_q):
        i1 = min(i0 + block_q, T_q)
        m = np.full(batch + (i1 - i0, 1), -np.inf)
        s = np.zeros(batch + (i1 - i0, 1))
        o = np.zeros(batch + (i1 - i0, d_v))
        for j0 in range(0, T_k, block_k):
            j1 = min(j0 + block_k, T_k)
            if causal and j0 > i1 - 1:
                skipped += 1
                continue
            S = Q[..., i0:i1, :] @ np.swapaxes(K[..., j0:j1, :], -1, -2) * scale
            if causal:
                S = np.where(np.arange(j0, j1)[None, :] < np.arange(i0, i1)[:, None], S, -np.inf)
            m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
            p = np.exp(S - m_new)
            s = s * np.exp(m - m_new) + p.sum(axis=-1, keepdims=True)
            o = o * np.exp(m - m_new) + p @ V[..., j0:j1, :]
            m = m_new
        out[..., i0:i1, :] = o / s
    return out, skipped
""",
          (r"itself|own (key|position)|<=|≤|strict|off by one|j ?(<=|≤)? ?i|"
           r"(leaves?|left) out the diagonal|without the diagonal|exclud\w* the diagonal",)),
    Wrong("07-cache-newest-first", "KVCache",
          "puts each new block in front of the old ones, so the cache is newest first",
          L07 + """
class KVCache:
    def __init__(self):
        self._keys = None
        self._values = None

    def __len__(self):
        return 0 if self._keys is None else len(self._keys)

    def append(self, k, v):
        k, v = key_value_rows(k, v)
        if self._keys is None:
            self._keys, self._values = k.copy(), v.copy()
        else:
            self._keys = np.concatenate([k, self._keys])
            self._values = np.concatenate([v, self._values])

    @property
    def keys(self):
        return self._keys

    @property
    def values(self):
        return self._values
""",
          (r"newest|revers|prepend|in front|beginning|wrong end|backwards",)),
    Wrong("07-cache-len-counts-appends", "KVCache",
          "counts calls to append in len, so a block of n positions counts as one",
          L07 + """
class KVCache:
    def __init__(self):
        self._keys, self._values = [], []
        self.count = 0

    def __len__(self):
        return self.count

    def append(self, k, v):
        k, v = key_value_rows(k, v)
        self._keys.append(k)
        self._values.append(v)
        self.count += 1

    @property
    def keys(self):
        return np.concatenate(self._keys)

    @property
    def values(self):
        return np.concatenate(self._values)
""",
          (r"len", r"calls? to append|append calls|number of (calls|appends)|"
                   r"count(s|ed|ing)? (the )?(calls|appends|blocks)|blocks? (as|counts? as) one|"
                   r"not (the number of )?(rows|positions)")),
    Wrong("07-cache-keeps-latest", "KVCache",
          "stores each appended block in place of the old one, so the cache only ever holds "
          "the latest positions",
          L07 + """
class KVCache:
    def __init__(self):
        self._keys = None
        self._values = None

    def __len__(self):
        return 0 if self._keys is None else len(self._keys)

    def append(self, k, v):
        k, v = key_value_rows(k, v)
        self._keys, self._values = k, v

    @property
    def keys(self):
        return self._keys

    @property
    def values(self):
        return self._values
""",
          (r"overwr|replac|only the (last|latest|newest)|forg|keeps? only|los(e|es|t)|drop|"
           r"earlier positions",)),
    Wrong("07-cache-stale-stack", "KVCache",
          "stacks the blocks on the first read of keys and keeps returning that stack, so "
          "keys and values read after a later append are stale",
          L07 + """
class KVCache:
    def __init__(self):
        self._k, self._v = [], []
        self._stacked = None

    def __len__(self):
        return sum(len(block) for block in self._k)

    def append(self, k, v):
        k, v = key_value_rows(k, v)
        self._k.append(k)
        self._v.append(v)

    def _stack(self):
        if self._stacked is None:          # stacking is slow: do it once
            self._stacked = (np.concatenate(self._k), np.concatenate(self._v))
        return self._stacked

    @property
    def keys(self):
        return self._stack()[0]

    @property
    def values(self):
        return self._stack()[1]
""",
          (r"stale|out of date|not updated|never updated|first read|still (hold|show|return)|"
           r"unchanged|does(n't| not) grow|missing the (new|latest|last)|earlier read",)),
    Wrong("07-decode-attend-before-append", "decode_step",
          "lets the query attend over the cache before appending the new key and value, so "
          "a token never sees itself",
          L07 + CACHE + DECODE_HEAD + """\
    X = np.atleast_2d(x)
    q, k, v = X @ W_q, X @ W_k, X @ W_v
    if len(cache) == 0:
        cache.append(k, v)
        return (v if x.ndim == 2 else v[0])
    K, V = cache.keys, cache.values
    scores = q @ K.T / np.sqrt(q.shape[-1])
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    out = e / e.sum(axis=-1, keepdims=True) @ V
    cache.append(k, v)
    return out if x.ndim == 2 else out[0]
""",
          (r"before (it )?(append|adding)|after (attend|attention)|append(ed|s|ing)? (only )?after|"
           r"too late", r"itself|\bown\b|\bself\b")),
    Wrong("07-decode-v-with-W_k", "decode_step",
          "projects the new value with W_k instead of W_v",
          L07 + CACHE + DECODE_HEAD + """\
    X = np.atleast_2d(x)
    t = len(cache)
    q = X @ W_q
    cache.append(X @ W_k, X @ W_k)
    K, V = cache.keys, cache.values
    scores = q @ K.T / np.sqrt(q.shape[-1])
    positions = t + np.arange(len(X))
    scores = np.where(np.arange(len(K))[None, :] <= positions[:, None], scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    out = e / e.sum(axis=-1, keepdims=True) @ V
    return out if x.ndim == 2 else out[0]
""",
          (r"W_v|values?", r"W_k|key (matrix|projection|weights)")),
    Wrong("07-decode-block-unmasked", "decode_step",
          "reads a block of new tokens without a causal mask, so each sees the later ones",
          L07 + CACHE + DECODE_HEAD + """\
    X = np.atleast_2d(x)
    q = X @ W_q
    cache.append(X @ W_k, X @ W_v)
    K, V = cache.keys, cache.values
    scores = q @ K.T / np.sqrt(q.shape[-1])
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    out = e / e.sum(axis=-1, keepdims=True) @ V
    return out if x.ndim == 2 else out[0]
""",
          (r"causal|mask|later (tokens|positions)|future|sees? (the )?(later|next)",)),
    Wrong("07-decode-mask-without-offset", "decode_step",
          "masks a block of new tokens with positions 0..n-1, forgetting the t positions "
          "already in the cache",
          L07 + CACHE + DECODE_HEAD + """\
    X = np.atleast_2d(x)
    q = X @ W_q
    cache.append(X @ W_k, X @ W_v)
    K, V = cache.keys, cache.values
    scores = q @ K.T / np.sqrt(q.shape[-1])
    positions = np.arange(len(X))
    scores = np.where(np.arange(len(K))[None, :] <= positions[:, None], scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    out = e / e.sum(axis=-1, keepdims=True) @ V
    return out if x.ndim == 2 else out[0]
""",
          (r"\bt ?\+|offset|len\(cache\)|cached positions|already in the cache|position t|shift|"
           r"whole[- ]sequence|absolute",)),
    Wrong("07-decode-scale-d_model", "decode_step",
          "scales the scores by √d_model (the width of x_t) instead of √d_k",
          L07 + CACHE + DECODE_HEAD + """\
    X = np.atleast_2d(x)
    t = len(cache)
    q = X @ W_q
    cache.append(X @ W_k, X @ W_v)
    K, V = cache.keys, cache.values
    scores = q @ K.T / np.sqrt(X.shape[-1])
    positions = t + np.arange(len(X))
    scores = np.where(np.arange(len(K))[None, :] <= positions[:, None], scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    out = e / e.sum(axis=-1, keepdims=True) @ V
    return out if x.ndim == 2 else out[0]
""",
          (r"d_model|width of x|x_t", r"scale|d_k|√|sqrt|divid")),
    Wrong("07-decode-keeps-row-axis", "decode_step",
          "returns [1, d_v] for a single token [d_model] instead of [d_v]",
          L07 + CACHE + DECODE_HEAD + """\
    X = np.atleast_2d(x)
    t = len(cache)
    q = X @ W_q
    cache.append(X @ W_k, X @ W_v)
    K, V = cache.keys, cache.values
    scores = q @ K.T / np.sqrt(q.shape[-1])
    positions = t + np.arange(len(X))
    scores = np.where(np.arange(len(K))[None, :] <= positions[:, None], scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True) @ V
""",
          (r"\[d_v\]|\[1, ?d_v\]|extra ax|squeez|1-?d|one-dimensional|\(1, ?\d+\)|leading 1|"
           r"single token|one token",)),
    Wrong("07-decode-with-newest-first-cache", "decode_step",
          "a right decode_step run on the learner's KVCache, which keeps the newest "
          "position first",
          L07 + """
class KVCache:
    def __init__(self):
        self._keys = None
        self._values = None

    def __len__(self):
        return 0 if self._keys is None else len(self._keys)

    def append(self, k, v):
        k, v = key_value_rows(k, v)
        if self._keys is None:
            self._keys, self._values = k.copy(), v.copy()
        else:
            self._keys = np.concatenate([k, self._keys])
            self._values = np.concatenate([v, self._values])

    @property
    def keys(self):
        return self._keys

    @property
    def values(self):
        return self._values
""" + DECODE_HEAD + """\
    X = np.atleast_2d(x)
    t = len(cache)
    q = X @ W_q
    cache.append(X @ W_k, X @ W_v)
    K, V = cache.keys, cache.values
    scores = q @ K.T / np.sqrt(q.shape[-1])
    positions = t + np.arange(len(X))
    scores = np.where(np.arange(len(K))[None, :] <= positions[:, None], scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    out = e / e.sum(axis=-1, keepdims=True) @ V
    return out if x.ndim == 2 else out[0]
""",
          (r"KVCache", r"fail|own check|does not pass|newest|order|revers")),
    Wrong("08-sin-exponent-without-2", "sinusoidal_positions",
          "divides by 10000^(i/d), with i the pair number, forgetting the 2 of 2i/d: the "
          "pairs turn at the wrong speeds",
          L08 + SINUSOID_HEAD + """\
    i = np.arange(d // 2)
    angles = np.arange(T)[:, None] / 10000 ** (i / d)
    pe = np.zeros((T, d))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles)
    return pe
""",
          (r"exponent|frequenc|θ|theta|2i|2 ?\* ?i|speed|wavelength",)),
    Wrong("08-sin-cos-own-exponent", "sinusoidal_positions",
          "gives every feature j its own exponent j/d, so the cosine of pair i turns with "
          "exponent (2i+1)/d instead of sharing its sine's angle",
          L08 + SINUSOID_HEAD + """\
    j = np.arange(d)
    angles = np.arange(T)[:, None] / 10000 ** (j / d)     # [T, d]
    pe = np.empty((T, d))
    pe[:, 0::2] = np.sin(angles[:, 0::2])
    pe[:, 1::2] = np.cos(angles[:, 1::2])
    return pe
""",
          (r"cos",
           r"same (angle|frequenc|speed)|shar|its sine|pair|2i ?\+ ?1|odd (features?|columns?)|"
           r"exponent|frequenc")),
    Wrong("08-sin-cos-swapped", "sinusoidal_positions",
          "puts the cosines in the even features and the sines in the odd ones",
          L08 + SINUSOID_HEAD + """\
    t = np.arange(T)[:, None]
    angles = t / 10000 ** (2 * np.arange(d // 2)[None, :] / d)
    pe = np.zeros((T, d))
    pe[:, 0::2] = np.cos(angles)
    pe[:, 1::2] = np.sin(angles)
    return pe
""",
          (r"sin", r"cos",
           r"swap|exchang|other way|wrong (column|place|feature)|revers|the other|places?|"
           r"order|even|odd")),
    Wrong("08-sin-halves", "sinusoidal_positions",
          "puts all the sines in the first half of the features and all the cosines in the "
          "second half instead of interleaving them pair by pair",
          L08 + SINUSOID_HEAD + """\
    t = np.arange(T).reshape(-1, 1)
    freq = 1.0 / 10000 ** (np.arange(0, d, 2) / d)
    return np.concatenate([np.sin(t * freq), np.cos(t * freq)], axis=1)
""",
          (r"half|halves|concatenat|interleav|alternat|neighbou?r|adjacent|side by side|"
           r"first d/2|block",)),
    Wrong("08-sin-positions-from-1", "sinusoidal_positions",
          "counts positions from 1 (np.arange(1, T + 1)), so row 0 is position 1",
          L08 + SINUSOID_HEAD + """\
    t = np.arange(1, T + 1)[:, None]
    angles = t / 10000 ** (np.arange(0, d, 2)[None, :] / d)
    pe = np.zeros((T, d))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles)
    return pe
""",
          (r"from 1|at 1|off by one|off-by-one|position 0|row 0|from 0|shift|"
           r"one (position|row)|count(s|ed|ing)? from",)),
    Wrong("08-sin-integer-division", "sinusoidal_positions",
          "writes the exponent as 2 * i // d, an integer division that is 0 for every pair, "
          "so every pair turns at one radian per position",
          L08 + SINUSOID_HEAD + """\
    pos = np.arange(T)[:, None]
    i = np.arange(d // 2)[None, :]
    div = 10000 ** (2 * i // d)
    pe = np.zeros((T, d))
    pe[:, ::2] = np.sin(pos / div)
    pe[:, 1::2] = np.cos(pos / div)
    return pe
""",
          (r"integer|//|floor|truncat|round|same (speed|frequenc|angle|wave)|"
           r"one (speed|frequenc)|every pair|all (the )?pairs|exponent",)),
    Wrong("08-sin-multiplies-by-wavelength", "sinusoidal_positions",
          "multiplies the position by 10000^(2i/d) instead of dividing by it, so the pairs "
          "turn faster and faster instead of slower",
          L08 + SINUSOID_HEAD + """\
    t = np.arange(T)[:, None]
    scale = 10000 ** (2 * np.arange(d // 2) / d)
    angles = t * scale
    pe = np.zeros((T, d))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles)
    return pe
""",
          (r"multipl|divid|inverse|reciprocal|negative|-2i|1 ?/|faster|too fast|upside|grow",)),
    Wrong("08-rope-clockwise", "rope",
          "turns each pair clockwise (the signs of the sines swapped: R(-φ), the transpose)",
          L08 + ROPE_HEAD + """\
    d = x.shape[-1]
    theta = base ** (-2 * np.arange(d // 2) / d)
    ang = positions[:, None] * theta
    c, s = np.cos(ang), np.sin(ang)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = x1 * c + x2 * s
    out[..., 1::2] = -x1 * s + x2 * c
    return out
""",
          (r"clockwise|direction|sign|negative (angle|position)|-\s?(angle|φ|phi|θ)|opposite|"
           r"revers|the other way|inverse|transpose of R|backwards",)),
    Wrong("08-rope-halves", "rope",
          "pairs feature i with feature i + d/2 (rotate_half, as GPT-NeoX and Llama do) "
          "instead of neighbouring features 2i and 2i+1",
          L08 + ROPE_HEAD + """\
    d = x.shape[-1]
    h = d // 2
    inv_freq = 1.0 / base ** (np.arange(0, d, 2) / d)
    freqs = np.outer(positions, inv_freq)
    cos = np.concatenate([np.cos(freqs)] * 2, axis=-1)
    sin = np.concatenate([np.sin(freqs)] * 2, axis=-1)
    rotated = np.concatenate([-x[..., h:], x[..., :h]], axis=-1)
    return x * cos + rotated * sin
""",
          (r"half|halves|rotate_half|i ?\+ ?d ?/ ?2|neighbou?r|adjacent|interleav|NeoX|Llama|"
           r"permut",)),
    Wrong("08-rope-row-index", "rope",
          "turns row t by its row number t (np.arange(T)) and ignores the positions it is given",
          L08 + ROPE_HEAD + """\
    T, d = x.shape[-2], x.shape[-1]
    t = np.arange(T)
    theta = base ** (-np.arange(0, d, 2) / d)
    angles = np.outer(t, theta)
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = even * np.cos(angles) - odd * np.sin(angles)
    out[..., 1::2] = even * np.sin(angles) + odd * np.cos(angles)
    return out
""",
          (r"row (number|index)|index of (the|each) row|arange|0, ?1, ?2|0, ?1, ?\.\.\.|"
           r"0 ?\.\. ?T|0 to T|instead of (the )?positions|ignor\w* (the )?positions|"
           r"not (the |your )?(given )?positions|positions (you were |it was )?given|"
           r"start(s|ing)? at 0|from 0",)),
    Wrong("08-rope-in-place", "rope",
          "writes the turned first features into x, then computes the second features from "
          "those already-turned values (even is a view of x), and changes the caller's x",
          L08 + ROPE_HEAD + """\
    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)
    angle = positions[:, None] * theta
    even, odd = x[..., 0::2], x[..., 1::2]
    x[..., 0::2] = even * np.cos(angle) - odd * np.sin(angle)
    x[..., 1::2] = even * np.sin(angle) + odd * np.cos(angle)
    return x
""",
          (r"in place|in-place|overwr|modif|mutat|chang\w* (your|the|its) input|view|"
           r"cop(y|ies)|already (turned|rotated|updated)",)),
    Wrong("08-rope-no-batch-axes", "rope",
          "slices the pairs with x[:, 0::2] instead of x[..., 0::2]: right for [T, d], but "
          "with batch axes it slices the wrong axis",
          L08 + ROPE_HEAD + """\
    d = x.shape[-1]
    theta = base ** (-2 * np.arange(d // 2) / d)
    angles = positions[:, None] * theta[None, :]
    out = np.zeros_like(x)
    out[:, 0::2] = x[:, 0::2] * np.cos(angles) - x[:, 1::2] * np.sin(angles)
    out[:, 1::2] = x[:, 0::2] * np.sin(angles) + x[:, 1::2] * np.cos(angles)
    return out
""",
          (r"batch|leading ax|\.\.\.|ellipsis|last axis|3-?d|more than two|extra ax|"
           r"x\[:, ?0::2\]|first axis|second axis|rows? axis",)),
    Wrong("08-rope-base-hardcoded", "rope",
          "writes 10000 into the frequencies instead of using the base argument",
          L08 + ROPE_HEAD + """\
    d = x.shape[-1]
    i = np.arange(d // 2)
    theta = 10000.0 ** (-2 * i / d)
    angles = positions[:, None] * theta
    even, odd = x[..., ::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., ::2] = even * np.cos(angles) - odd * np.sin(angles)
    out[..., 1::2] = even * np.sin(angles) + odd * np.cos(angles)
    return out
""",
          (r"\bbase\b",
           r"ignor|10000|10 ?000|hard[- ]?cod|default|not (use|pass)|unused|fixed|always")),
    Wrong("08-rope-torch-float32", "rope",
          "does the work in torch after .float(), so the angles at large positions and the "
          "result are only float32-accurate, and a float64 input comes back float32",
          L08 + ROPE_HEAD + """\
    xt = torch.from_numpy(x).float()
    d = xt.shape[-1]
    theta = 1.0 / base ** (torch.arange(0, d, 2).float() / d)
    angles = torch.from_numpy(positions)[:, None] * theta
    cos, sin = torch.cos(angles), torch.sin(angles)
    x1, x2 = xt[..., 0::2], xt[..., 1::2]
    out = torch.empty_like(xt)
    out[..., 0::2] = x1 * cos - x2 * sin
    out[..., 1::2] = x1 * sin + x2 * cos
    return out.numpy()
""",
          (r"float32|single|precision|dtype|float64|double|round",)),
    Wrong("08-scores-positions_q-for-keys", "rope_scores",
          "turns the keys by positions_q too, as if queries and keys always sat at the same "
          "positions",
          L08 + ROPE + ROPE_SCORES_HEAD + """\
    q = rope(Q, positions_q, base)
    k = rope(K, positions_q, base)
    return q @ np.swapaxes(k, -1, -2) / np.sqrt(Q.shape[-1])
""",
          (r"positions_k|key positions|positions of the keys|keys'? positions|"
           r"positions_q (for|on|to) (K|the keys)",)),
    Wrong("08-scores-scale-T_k", "rope_scores",
          "divides the scores by √T_k, the number of keys, instead of √d",
          L08 + ROPE + ROPE_SCORES_HEAD + """\
    q = rope(Q, positions_q, base)
    k = rope(K, positions_k, base)
    return q @ np.swapaxes(k, -1, -2) / np.sqrt(K.shape[-2])
""",
          (r"T_k|number of keys|sequence length|length|K\.shape\[-2\]|rows of K",
           r"√|sqrt|scal|divid")),
    Wrong("08-scores-base-not-passed", "rope_scores",
          "calls rope without passing base on, so a base other than 10000 is ignored",
          L08 + ROPE + ROPE_SCORES_HEAD + """\
    q = rope(Q, positions_q)
    k = rope(K, positions_k)
    return q @ np.swapaxes(k, -1, -2) / np.sqrt(Q.shape[-1])
""",
          (r"\bbase\b",
           r"pass|ignor|default|10 ?000|forw|not (use|give)|unused|dropp|drop")),
    Wrong("08-scores-K-unturned-with-clockwise-rope", "rope_scores",
          "turns only the queries and scores them against the unturned keys; the learner's "
          "own rope also turns clockwise",
          L08 + ROPE_HEAD + """\
    d = x.shape[-1]
    theta = base ** (-2 * np.arange(d // 2) / d)
    ang = positions[:, None] * theta
    c, s = np.cos(ang), np.sin(ang)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = x1 * c + x2 * s
    out[..., 1::2] = -x1 * s + x2 * c
    return out
""" + ROPE_SCORES_HEAD + """\
    d = Q.shape[-1]
    return rope(Q, positions_q, base) @ np.swapaxes(K, -1, -2) / np.sqrt(d)
""",
          (r"(K|keys?)\b[^.]{0,40}(not|never|un)\w*\s(turned|rotated)|"
           r"without (turning|rotating|rope)|only (Q|the quer)|unturned|unrotated|rope\(K|"
           r"turn\w* (K|the keys)|rotat\w* (K|the keys)|"
           r"positions_k\b[^.]{0,30}(no effect|ignor|unused|not used|never)",)),
    Wrong("08-scores-dot-T-with-batchless-rope", "rope_scores",
          "transposes the turned keys with .T, which reverses the batch axes too; the "
          "learner's own rope slices x[:, 0::2] and breaks on batch axes as well",
          L08 + ROPE_HEAD + """\
    d = x.shape[-1]
    theta = base ** (-2 * np.arange(d // 2) / d)
    angles = positions[:, None] * theta[None, :]
    out = np.zeros_like(x)
    out[:, 0::2] = x[:, 0::2] * np.cos(angles) - x[:, 1::2] * np.sin(angles)
    out[:, 1::2] = x[:, 0::2] * np.sin(angles) + x[:, 1::2] * np.cos(angles)
    return out
""" + ROPE_SCORES_HEAD + """\
    q = rope(Q, positions_q, base)
    k = rope(K, positions_k, base)
    return q @ k.T / np.sqrt(Q.shape[-1])
""",
          (r"\.T\b|transpos|swap|last two axes|batch axes|all (the )?axes|revers",)),
    Wrong("08-scores-unscaled-with-slow-rope", "rope_scores",
          "forgets to divide the scores by √d; the learner's own rope also uses the exponent "
          "i/d instead of 2i/d",
          L08 + ROPE_HEAD + """\
    d = x.shape[-1]
    theta = base ** (-np.arange(d // 2) / d)
    angles = np.outer(positions, theta)
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = even * np.cos(angles) - odd * np.sin(angles)
    out[..., 1::2] = even * np.sin(angles) + odd * np.cos(angles)
    return out
""" + ROPE_SCORES_HEAD + """\
    q = rope(Q, positions_q, base)
    k = rope(K, positions_k, base)
    return q @ np.swapaxes(k, -1, -2)
""",
          (r"√|sqrt|scal|divid",)),
]


# ----------------------------------------------------------------------------- right answers

RIGHT: list[Right] = [
    Right("01-dot-zip-sum", "matmul_dot",
          "a generator of products summed with Python's sum",
          L01 + """
def matmul_dot(A, B):
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]), dtype=np.result_type(A, B))
    for i, row in enumerate(A):
        for j, col in enumerate(B.T):
            C[i, j] = sum(a * b for a, b in zip(row, col))
    return C
"""),
    Right("01-outer-broadcast", "matmul_outer",
          "each outer product by broadcasting a column against a row",
          L01 + """
def matmul_outer(A, B):
    A, B = matmul_operands(A, B)
    C = np.zeros((A.shape[0], B.shape[1]), dtype=np.result_type(A, B))
    for p in range(A.shape[1]):
        C = C + A[:, p][:, None] * B[p, :][None, :]
    return C
"""),
    Right("01-einsum-other-letters", "einsum_scores",
          "other subscript letters, and K's axes named in the output order",
          L01 + """
def einsum_scores(Q, K):
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share their last axis, got {Q.shape} and {K.shape}")
    return np.einsum("...ic,...jc->...ij", Q, K)
"""),
    Right("02-softmax-logsumexp", "softmax",
          "the weights as exp(x - logsumexp(x)), with the log-sum-exp computed stably",
          L02 + """
def softmax(x, axis=-1):
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer from {-x.ndim} to {x.ndim - 1}")
    m = np.max(x, axis=axis, keepdims=True)
    log_total = m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))
    return np.exp(x - log_total)
"""),
    Right("02-scores-moveaxis", "attention_scores",
          "np.matmul with np.moveaxis, multiplying by the reciprocal of √d_k",
          L02 + """
def attention_scores(Q, K):
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same d_k, got {Q.shape} and {K.shape}")
    inv = 1.0 / np.sqrt(K.shape[-1])
    return np.matmul(Q, np.moveaxis(K, -1, -2)) * inv
"""),
    Right("02-sdpa-einsum-values", "scaled_dot_product_attention",
          "the learner's helpers, and the values mixed with an einsum",
          L02 + SOFTMAX + SCORES + """
def scaled_dot_product_attention(Q, K, V):
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    V = as_array(V, "V", min_ndim=2)
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V need one row per key, got {K.shape} and {V.shape}")
    weights = softmax(attention_scores(Q, K), axis=Q.ndim - 1)
    output = np.einsum("...qk,...kd->...qd", weights, V)
    return output, weights
"""),
    Right("02-one-query-running-max", "attend_one_query",
          "the sum in one loop over the keys with a running maximum (an online softmax)",
          L02 + """
def attend_one_query(q, K, V):
    q = as_array(q, "q", ndim=1)
    K = as_array(K, "K", ndim=2)
    V = as_array(V, "V", ndim=2)
    if K.shape[1] != q.shape[0] or V.shape[0] != K.shape[0]:
        raise ValueError(f"q {q.shape}, K {K.shape} and V {V.shape} do not fit")
    top, total, acc = -np.inf, 0.0, np.zeros(V.shape[1])
    for k_i, v_i in zip(K, V):
        s = float(np.sum(q * k_i)) / np.sqrt(len(q))
        new_top = max(top, s)
        shrink = np.exp(top - new_top)
        total = total * shrink + np.exp(s - new_top)
        acc = acc * shrink + np.exp(s - new_top) * v_i
        top = new_top
    return acc / total
"""),
    Right("03-floor-math-floor", "floor_half",
          "math.floor entry by entry, wrapped back into Fractions",
          L03 + """
def floor_half(S):
    S = as_fractions(S, "S")
    out = np.empty(S.shape, dtype=object)
    for index, s in np.ndenumerate(S):
        out[index] = Fraction(math.floor(s / 2))
    return out
"""),
    Right("03-softmax3-column-loop", "softmax3_columns",
          "one column at a time, with Fraction powers",
          L03 + """
def softmax3_columns(S):
    S = as_fractions(S, "S", whole=True)
    A = np.empty(S.shape, dtype=object)
    for j in range(S.shape[1]):
        column = [Fraction(3) ** int(s) for s in S[:, j]]
        total = sum(column)
        for i, p in enumerate(column):
            A[i, j] = p / total
    return A
"""),
    Right("04-causal-compare-positions", "causal_mask",
          "a comparison of a column of query positions with a row of key positions",
          L04 + """
def causal_mask(T):
    T = positive_int(T, "T")
    positions = np.arange(T)
    return positions[:, None] >= positions[None, :]
"""),
    Right("04-masked-softmax-nan-to-zero", "masked_softmax",
          "lets a row with no allowed key become NaN, then turns NaN into 0 on purpose",
          L04 + """
def masked_softmax(scores, mask):
    scores = as_array(scores, "scores", min_ndim=1)
    mask = bool_mask(mask, scores.shape)
    filled = np.where(mask, scores, -np.inf)
    with np.errstate(invalid="ignore"):
        e = np.exp(filled - filled.max(axis=-1, keepdims=True))
        weights = e / e.sum(axis=-1, keepdims=True)
    return np.nan_to_num(weights, nan=0.0)
"""),
    Right("05-split-unflatten", "split_heads",
          "unflatten the features, then permute the head axis forward",
          L05 + SPLIT_HEAD + """\
    return x.unflatten(-1, (n_heads, d_model // n_heads)).permute(0, 2, 1, 3)
"""),
    Right("05-mha-einsum-where", "MultiHeadAttention",
          "the scores with torch.einsum and the mask with torch.where",
          L05 + HEADS + MHA_HEAD + """\
        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) * self.d_head ** -0.5
        if mask is not None:
            scores = torch.where(mask, scores, torch.tensor(float("-inf")))
        weights = scores.softmax(dim=-1)
        out = torch.einsum("bhqk,bhkd->bhqd", weights, v)
        return self.w_o(merge_heads(out)), weights
"""),
    Right("05-count-factored", "mha_parameter_count",
          "the count factored as 4 · d_model · (d_model + 1)",
          L05 + COUNT_HEAD + """\
    return 4 * d_model * (d_model + 1)
"""),
    Right("05-down-up-narrow", "value_down_up",
          "narrow and .t() instead of slices and .T",
          L05 + DOWN_UP_HEAD + """\
    with torch.no_grad():
        down = mha.w_v.weight.narrow(0, head * d_head, d_head).t().clone()
        up = mha.w_o.weight.narrow(1, head * d_head, d_head).t().clone()
    return down, up
"""),
    Right("06-block-branches", "Block",
          "two explicit branches for the two settings of residual, and the weights asked "
          "for and dropped",
          L06 + BLOCK_HEAD + """\
        if self.residual:
            h = self.ln1(x)
            x = x + self.attn(h, h, h)[0]
            return x + self.mlp(self.ln2(x))
        h = self.ln1(x)
        y = self.attn(h, h, h)[0]
        return self.mlp(self.ln2(y))
"""),
    Right("06-similarity-cosine-pairs", "token_similarity",
          "F.cosine_similarity on every pair by broadcasting, the diagonal taken out by its "
          "trace",
          L06 + """
def token_similarity(h):
    h = as_hidden(h)
    cos = F.cosine_similarity(h.unsqueeze(-2), h.unsqueeze(-3), dim=-1, eps=1e-8)
    T = h.shape[-2]
    same = cos.diagonal(dim1=-2, dim2=-1).sum(-1)
    return (cos.sum(dim=(-2, -1)) - same).div(T * (T - 1)).mean().item()
"""),
    Right("06-train-zero-grad-first", "train",
          "clears the gradients first in each step (set_to_none) and flattens with view",
          L06 + TRAIN_HEAD + """\
    for _ in progress(range(steps), "training"):
        optimizer.zero_grad(set_to_none=True)
        tokens, targets = task.sample(generator)
        logits = model(tokens)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    return losses
"""),
    Right("07-stats-first-block-apart", "online_softmax_stats",
          "starts from the first block's own statistics instead of -inf and 0",
          L07 + """
def online_softmax_stats(scores_blocks):
    blocks = iter(score_blocks(scores_blocks))
    first = next(blocks)
    m = first.max()
    s = np.exp(first - m).sum()
    for block in blocks:
        top = block.max()
        if top > m:
            s = s * np.exp(m - top)
            m = top
        s += np.exp(block - m).sum()
    return float(m), float(s)
"""),
    Right("07-tiles-skip-j0-ge-i1", "tiled_attention",
          "the skip test written as j0 >= i1, and the tiles' outputs written into a list",
          L07 + """
def tiled_attention(Q, K, V, block_q, block_k, causal=False):
    Q, K, V, batch = tile_inputs(Q, K, V, causal)
    block_q, block_k = positive_int(block_q, "block_q"), positive_int(block_k, "block_k")
    T_q, T_k = Q.shape[-2], K.shape[-2]
    scale = Q.shape[-1] ** -0.5
    rows, skipped = [], 0
    for i0 in range(0, T_q, block_q):
        i1 = min(i0 + block_q, T_q)
        m = np.full(batch + (i1 - i0, 1), -np.inf)
        s = np.zeros(batch + (i1 - i0, 1))
        o = np.zeros(batch + (i1 - i0, V.shape[-1]))
        for j0 in range(0, T_k, block_k):
            j1 = min(j0 + block_k, T_k)
            if causal and j0 >= i1:
                skipped += 1
                continue
            S = np.matmul(Q[..., i0:i1, :], np.swapaxes(K[..., j0:j1, :], -1, -2)) * scale
            if causal:
                allowed = np.arange(j0, j1)[None, :] <= np.arange(i0, i1)[:, None]
                S = np.where(allowed, S, -np.inf)
            m_new = np.maximum(m, S.max(axis=-1, keepdims=True))
            p = np.exp(S - m_new)
            s = np.exp(m - m_new) * s + p.sum(axis=-1, keepdims=True)
            o = np.exp(m - m_new) * o + np.matmul(p, V[..., j0:j1, :])
            m = m_new
        rows.append(o / s)
    return np.concatenate(rows, axis=-2), skipped
"""),
    Right("07-cache-list-of-blocks", "KVCache",
          "keeps a list of blocks and stacks it when keys or values are read",
          L07 + """
class KVCache:
    def __init__(self):
        self._k, self._v = [], []

    def __len__(self):
        return sum(len(b) for b in self._k)

    def append(self, k, v):
        k, v = key_value_rows(k, v)
        self._k.append(np.array(k))
        self._v.append(np.array(v))

    @property
    def keys(self):
        if not self._k:
            raise ValueError("the cache is empty")
        return np.vstack(self._k)

    @property
    def values(self):
        if not self._v:
            raise ValueError("the cache is empty")
        return np.vstack(self._v)
"""),
    Right("07-decode-row-by-row", "decode_step",
          "each new token attends in its own loop iteration, over the cache's first t + i + 1 "
          "positions",
          L07 + CACHE + DECODE_HEAD + """\
    X = x.reshape(-1, x.shape[-1])
    t = len(cache)
    cache.append(X @ W_k, X @ W_v)
    K, V = cache.keys, cache.values
    out = []
    for i, row in enumerate(X):
        q = row @ W_q
        seen = t + i + 1
        scores = K[:seen] @ q / np.sqrt(len(q))
        w = np.exp(scores - scores.max())
        out.append((w / w.sum()) @ V[:seen])
    out = np.array(out)
    return out[0] if x.ndim == 1 else out
"""),
    Right("08-sin-exp-log-stack", "sinusoidal_positions",
          "frequencies as exp(-log(10000) 2i/d), and sin and cos stacked on a new last axis "
          "then reshaped to interleave them",
          L08 + SINUSOID_HEAD + """\
    pos = np.arange(T, dtype=float)[:, None]
    inv = np.exp(-np.log(10000.0) * np.arange(0, d, 2) / d)
    ang = pos * inv
    return np.stack([np.sin(ang), np.cos(ang)], axis=-1).reshape(T, d)
"""),
    Right("08-rope-complex", "rope",
          "each pair as a complex number a + ib, multiplied by exp(i·angle)",
          L08 + ROPE_HEAD + """\
    d = x.shape[-1]
    freqs = base ** (-np.arange(0, d, 2) / d)
    z = (x[..., 0::2] + 1j * x[..., 1::2]) * np.exp(1j * np.outer(positions, freqs))
    out = np.stack([z.real, z.imag], axis=-1).reshape(x.shape)
    return out.astype(x.dtype)
"""),
    Right("08-rope-einsum-matrices", "rope",
          "builds a 2 × 2 rotation matrix per row and pair and applies them with one einsum",
          L08 + ROPE_HEAD + """\
    d = x.shape[-1]
    theta = np.power(base, -np.arange(d // 2) * 2.0 / d)
    a = positions[:, None] * theta                                     # [T, d/2]
    c, s = np.cos(a), np.sin(a)
    R = np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)    # [T, d/2, 2, 2]
    pairs = x.reshape(*x.shape[:-1], d // 2, 2)
    turned = np.einsum("tpij,...tpj->...tpi", R, pairs)
    return turned.reshape(x.shape).astype(x.dtype, copy=False)
"""),
    Right("08-rope-halves-permuted", "rope",
          "permutes the features so the pairs become halves, turns them with rotate_half as "
          "the libraries do, and permutes back",
          L08 + ROPE_HEAD + """\
    d = x.shape[-1]
    h = d // 2
    perm = np.arange(d).reshape(h, 2).T.ravel()       # the first features of the pairs, then the second
    xh = x[..., perm]
    f = np.outer(positions, base ** (-np.arange(0, d, 2) / d))
    cos = np.concatenate([np.cos(f), np.cos(f)], axis=-1)
    sin = np.concatenate([np.sin(f), np.sin(f)], axis=-1)
    rotated = np.concatenate([-xh[..., h:], xh[..., :h]], axis=-1)
    out = np.empty_like(x)
    out[..., perm] = xh * cos + rotated * sin
    return out
"""),
    Right("08-scores-torch-matmul", "rope_scores",
          "scores the turned queries and keys in torch and hands back a NumPy array",
          L08 + ROPE + ROPE_SCORES_HEAD + """\
    q = torch.from_numpy(rope(Q, positions_q, base))
    k = torch.from_numpy(rope(K, positions_k, base))
    S = torch.matmul(q, k.transpose(-1, -2)) / float(np.sqrt(Q.shape[-1]))
    return S.numpy()
"""),
    Right("05-mha-with-broken-split", "MultiHeadAttention",
          "a right forward built on the learner's split_heads, which reshapes without the "
          "transpose: the reference's split_heads stands in for it",
          L05 + """
def split_heads(x, n_heads):
    B, T, d_model = x.shape
    return x.reshape(B, n_heads, T, d_model // n_heads)
""" + MERGE_HEAD + """\
    return x.transpose(1, 2).reshape(B, T, h * d_head)
""" + MHA_HEAD + """\
        q = split_heads(self.w_q(query), self.n_heads)
        k = split_heads(self.w_k(key), self.n_heads)
        v = split_heads(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return self.w_o(merge_heads(weights @ v)), weights
"""),
    Right("06-model-with-post-norm-block", "TinyTransformer",
          "a right model built on the learner's Block, which is post-norm: the reference's "
          "Block stands in for it",
          L06 + BLOCK_HEAD + """\
        attended = self.attn(x, x, x, need_weights=False)[0]
        x = self.ln1(x + attended) if self.residual else self.ln1(attended)
        update = self.mlp(x)
        return self.ln2(x + update) if self.residual else self.ln2(update)
""" + MODEL),
]
