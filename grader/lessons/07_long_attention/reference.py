"""Lesson 07: attention at length. The softmax in one pass, attention streamed in blocks and
in tiles, and token-by-token decoding with a cache of keys and values.

Conventions (COURSE.md): tokens are rows, ``Q: [..., T_q, d_k]``, ``K: [..., T_k, d_k]``,
``V: [..., T_k, d_v]``; scores are ``q·k / sqrt(d_k)``; causal means key j may be seen by
query i when j <= i (lesson 04). Results keep float32 when every array input is float32.

Everything rests on one step, :func:`_absorb`: a block of scores joins a running maximum
``m``, a running sum ``s`` (relative to ``m``) and a running output ``o`` (relative to
``m`` as well, not yet divided by ``s``). When a block raises the maximum from ``m`` to
``m'``, everything kept so far is multiplied by ``exp(m - m')``, so that it is relative to
the new maximum; the division by ``s`` waits until the last block.

As in the other lessons, each graded function calls a private core with keyword knobs,
and each catalogued mistake (``exercises.py``) is a core with one knob set wrong.
"""
from __future__ import annotations

import numpy as np

from courseware.long_attention import (decode_inputs, key_value_rows, one_query, score_blocks,
                                       tile_inputs)

from ...learner.validation import positive_int, result_dtype, shape_str

__all__ = [
    "online_softmax_stats",
    "attention_one_pass",
    "tiled_attention",
    "KVCache",
    "decode_step",
]


# ----------------------------------------------------------------------------- the step

def _absorb(m, s, o, scores, values, *, rescale_sum=True, rescale_output=True,
            normalise="end"):
    """One block of ``scores`` (``[..., n]``) and its ``values`` (``[..., n, d_v]``, or
    None for the statistics alone) into the running ``(m, s, o)``; ``m`` and ``s`` have a
    last axis of length 1.

    ``rescale_sum`` / ``rescale_output``: multiply the running sum / output by
    ``exp(m - m')`` when the maximum grows; ``normalise``: ``"end"`` (the caller divides
    by ``s`` once, after the last block) or ``"each block"`` (divided here, every time).
    """
    # site: the new running maximum
    new = np.maximum(m, scores.max(axis=-1, keepdims=True))
    # While every score so far is -inf (a fully masked start), shift by 0, as lesson 04's
    # masked softmax does: exp(-inf - 0) = 0 instead of exp(-inf + inf) = NaN.
    shift = np.where(np.isfinite(new), new, 0).astype(new.dtype)
    # site: the factor that rescales what is kept so far
    alpha = np.exp(m - shift)               # exp(-inf) = 0 before the first block
    # site: the block's exponentials
    p = np.exp(scores - shift)
    # site: the running sum's update
    s = (s * alpha if rescale_sum else s) + p.sum(axis=-1, keepdims=True)
    if values is not None:
        # site: the running output's update
        o = (o * alpha if rescale_output else o) + p @ values
        if normalise == "each block":
            o = o / s
    return new, s, o


def _finish(s, o, normalise="end"):
    # site: the final division by the running sum
    return o / s if normalise == "end" else o


# ----------------------------------------------------------------------------- the statistics

def _merged(summaries):
    """Per-block ``(m_b, s_b)`` merged after the last block."""
    m = max(float(b[0]) for b in summaries)
    return m, float(sum(b[1] * np.exp(b[0] - m) for b in summaries))


def _online_stats(scores_blocks, *, start=-np.inf, shift=True, keep=False, summaries=False,
                  **absorb_knobs):
    """``(max, sum)`` in one pass. ``start``: the running maximum before any block;
    ``shift``: the sum is of ``exp(x - max)`` (else of ``exp(x)``); ``keep``: a copy of
    every block is kept and read again after the last one (two passes, with memory for the
    whole row); ``summaries``: each block's own maximum and sum are kept, and merged after
    the last block (memory that grows with the number of blocks)."""
    if summaries:
        kept = [(b.max(), np.exp(b - b.max()).sum()) for b in score_blocks(scores_blocks)]
        with np.errstate(invalid="ignore"):
            return _merged(kept)
    if keep:
        kept = [b.copy() for b in score_blocks(scores_blocks)]
        m = max(float(b.max()) for b in kept)
        with np.errstate(invalid="ignore"):
            return m, float(sum(np.exp(b - m).sum() for b in kept))
    m = s = None
    with np.errstate(over="ignore", invalid="ignore"):
        for b in score_blocks(scores_blocks):
            if m is None:
                # site: the running maximum's starting value
                m = np.full(1, start, dtype=b.dtype)
                # site: the running sum's starting value
                s = np.zeros(1, dtype=b.dtype)
            if shift:
                m, s, _ = _absorb(m, s, None, b, None, **absorb_knobs)
            else:
                m, s = np.maximum(m, b.max(keepdims=True)), s + np.exp(b).sum(keepdims=True)
    # site: the returned pair
    return float(m[0]), float(s[0])


def online_softmax_stats(scores_blocks):
    """The two numbers a softmax needs, in one pass over blocks of one row of scores.

    ``scores_blocks``: a list or a stream (any iterable) of non-empty 1-D arrays, read
    once, in order, each let go before the next. Returns ``(m, s)`` with ``m`` the
    largest score and ``s = sum(exp(x - m))`` over every score x: what the two-pass
    softmax of lesson 02 computes, so that ``softmax(x) = exp(x - m) / s``. A running
    maximum and a running sum are kept; when a block brings a larger maximum, the sum so
    far is multiplied by ``exp(m_old - m_new)``.
    """
    return _online_stats(scores_blocks)


# ----------------------------------------------------------------------------- one query

def _one_pass(q, K, V, block, *, start=-np.inf, scaled=True, stream=True, **absorb_knobs):
    """One query against keys and values in blocks of ``block``. ``start``: the running
    maximum before the first block; ``scaled``: divide scores by sqrt(d_k); ``stream``:
    one block at a time (else every score at once, which needs memory for T_k scores)."""
    q, K, V = one_query(q, K, V)
    block = positive_int(block, "block")
    dtype = result_dtype(q, K, V)
    # site: the scale of the scores
    scale = dtype.type(1 / np.sqrt(q.shape[0]) if scaled else 1)
    # site: the running maximum's starting value
    m = np.full(1, start, dtype=dtype)
    # site: the running sum's starting value
    s = np.zeros(1, dtype=dtype)
    # site: the running output's starting value
    o = np.zeros(V.shape[1], dtype=dtype)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if not stream:
            # Through np.asarray, which the check's row ledger does not see (one read of
            # every row is told apart by the ledger itself): the mistake is what the
            # memory budget catches, a score or a copy for every key held at once.
            K, V = np.asarray(K), np.asarray(V)
            m, s, o = _absorb(m, s, o, (K @ q) * scale, V, **absorb_knobs)
        else:
            # site: the loop over the blocks
            for j in range(0, K.shape[0], block):
                # site: the block's scores and values
                m, s, o = _absorb(m, s, o, (K[j:j + block] @ q) * scale, V[j:j + block],
                                  **absorb_knobs)
        # site: the final division by the running sum
        return _finish(s, o, absorb_knobs.get("normalise", "end")).astype(dtype, copy=False)


def attention_one_pass(q, K, V, block):
    """Attention of one query ``q: [d_k]`` over ``K: [T_k, d_k]`` and ``V: [T_k, d_v]``,
    reading the keys and values ``block`` rows at a time; returns ``[d_v]``.

    Only a running maximum, a running sum and a running output ``[d_v]`` are kept between
    blocks, so the extra memory is O(block + d_v) whatever T_k. Equal to lesson 02's
    ``softmax(q Kᵀ / sqrt(d_k)) V`` for every block size.
    """
    return _one_pass(q, K, V, block)


# ----------------------------------------------------------------------------- tiles

def _tile_skipped(i0, i1, j0, j1, rule) -> bool:
    """Whether the tile of queries i0..i1-1 and keys j0..j1-1 is skipped under ``rule``:
    "above" (every key after every query: the tile is wholly above the diagonal),
    "from the block's start" (its first key is not before the block's first query), or
    None (never)."""
    if rule == "above":
        # site: the test for a tile wholly above the diagonal
        return j0 > i1 - 1
    if rule == "from the block's start":
        return j0 >= i0
    return False


def _tiled(Q, K, V, block_q, block_k, causal=False, *, skip="above", mask_inside=True,
           count="skipped", start=-np.inf, scaled=True, stream=True, **absorb_knobs):
    """``(output, tiles)``. ``skip``: which causal tiles are left out (see
    :func:`_tile_skipped`); ``mask_inside``: mask the future keys inside a tile that
    crosses the diagonal; ``count``: what is counted ("skipped" or "computed" tiles);
    ``stream``: tile by tile (else one tile holding every score)."""
    Q, K, V, batch = tile_inputs(Q, K, V, causal)
    block_q, block_k = positive_int(block_q, "block_q"), positive_int(block_k, "block_k")
    T_q, T_k, d_v = Q.shape[-2], K.shape[-2], V.shape[-1]
    if not stream:
        return _tiled(Q, K, V, T_q, T_k, causal, skip=skip, mask_inside=mask_inside,
                      start=start, scaled=scaled, **absorb_knobs)[0], \
            causal_tiles_skipped(T_q, block_q, block_k) if causal else 0
    dtype = result_dtype(Q, K, V)
    # site: the scale of the scores
    scale = dtype.type(1 / np.sqrt(Q.shape[-1]) if scaled else 1)
    out = np.zeros(batch + (T_q, d_v), dtype=dtype)
    # site: the keys turned for the product
    Kt = np.swapaxes(K, -1, -2)
    tiles = {"skipped": 0, "computed": 0}
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        # site: the loop over the blocks of queries
        for i0 in range(0, T_q, block_q):
            # site: the end of a block of queries
            i1 = min(i0 + block_q, T_q)
            # site: the running maximum's starting value
            m = np.full(batch + (i1 - i0, 1), start, dtype=dtype)
            # site: the running sum's starting value
            s = np.zeros(batch + (i1 - i0, 1), dtype=dtype)
            # site: the running output's starting value
            o = np.zeros(batch + (i1 - i0, d_v), dtype=dtype)
            # site: the loop over the blocks of keys
            for j0 in range(0, T_k, block_k):
                # site: the end of a block of keys
                j1 = min(j0 + block_k, T_k)
                # site: the skip of a tile above the diagonal
                if causal and _tile_skipped(i0, i1, j0, j1, skip):
                    tiles["skipped"] += 1
                    continue
                tiles["computed"] += 1
                # site: the tile's scores
                S = (Q[..., i0:i1, :] @ Kt[..., :, j0:j1]) * scale
                # site: the test for a tile that crosses the diagonal
                if causal and mask_inside and j1 - 1 > i0:     # the tile crosses the diagonal
                    # site: the mask inside a tile
                    S = np.where(np.arange(j0, j1)[None, :] <= np.arange(i0, i1)[:, None],
                                 S, -np.inf)
                # site: the tile's step of the online softmax
                m, s, o = _absorb(m, s, o, S, V[..., j0:j1, :], **absorb_knobs)
            # site: the rows of the output a block of queries fills
            out[..., i0:i1, :] = _finish(s, o, absorb_knobs.get("normalise", "end"))
    return out, tiles[count]


def tiled_attention(Q, K, V, block_q, block_k, causal=False):
    """Scaled dot-product attention computed tile by tile; returns ``(output, skipped)``.

    The queries are cut into blocks of ``block_q`` rows and the keys and values into
    blocks of ``block_k`` rows. Each block of queries keeps a running maximum, sum and
    output per row (the online softmax of :func:`attention_one_pass`, for a block of rows
    at once) over the tiles of its row. With ``causal=True`` (query i sees keys j <= i;
    T_q must equal T_k), a tile whose keys all come after all its queries is skipped,
    never computed; a tile that crosses the diagonal is masked inside. ``skipped`` is the
    number of tiles skipped (0 when ``causal=False``). Batch axes broadcast.
    """
    return _tiled(Q, K, V, block_q, block_k, causal)


def causal_tiles_skipped(T, block_q, block_k) -> int:
    """How many tiles of a causal ``T × T`` attention, cut into ``block_q × block_k``
    tiles, lie wholly above the diagonal (a closed form the tests compare with)."""
    T = positive_int(T, "T")
    block_q, block_k = positive_int(block_q, "block_q"), positive_int(block_k, "block_k")
    skipped = 0
    for i0 in range(0, T, block_q):
        last_query = min(i0 + block_q, T) - 1
        first_tile_above = last_query // block_k + 1      # tiles j with j * block_k > last_query
        skipped += max(0, -(-T // block_k) - first_tile_above)
    return skipped


# ----------------------------------------------------------------------------- the cache

def _append(cache, k, v, *, keep="all", join="rows"):
    """Add keys ``k`` and values ``v`` to ``cache``. ``keep``: "all" (after what is there)
    or "last" (in place of it); ``join``: "rows" (one row per position) or "flat" (the
    vectors laid end to end in one 1-D array)."""
    k, v = key_value_rows(k, v)
    if cache._widths is not None and (k.shape[1], v.shape[1]) != cache._widths:
        d_k, d_v = cache._widths
        raise ValueError(f"the cache holds keys of d_k = {d_k} and values of d_v = {d_v}, got k "
                         f"of shape {shape_str(k.shape)} and v of shape {shape_str(v.shape)}")
    cache._widths = (k.shape[1], v.shape[1])
    if join == "flat":
        k, v = k.ravel(), v.ravel()
    if cache._keys is None or keep == "last":
        cache._keys, cache._values = k.copy(), v.copy()
    else:
        cache._keys = np.concatenate([cache._keys, k])
        cache._values = np.concatenate([cache._values, v])


class KVCache:
    """The keys and values of the positions seen so far, one row per position.

    ``append(k, v)`` adds one position (``k: [d_k]``, ``v: [d_v]``) or a block of them
    (``[n, d_k]``, ``[n, d_v]``) after the others; ``keys`` (``[t, d_k]``) and ``values``
    (``[t, d_v]``) are everything appended so far, in order; ``len(cache)`` is t. An empty
    cache has no keys or values to show yet (reading them raises ``ValueError``).
    """

    def __init__(self):
        self._keys = None
        self._values = None
        self._widths = None

    def __len__(self) -> int:
        return 0 if self._keys is None else len(self._keys)

    def append(self, k, v):
        _append(self, k, v)

    @property
    def keys(self) -> np.ndarray:
        if self._keys is None:
            raise ValueError("the cache is empty: it has no keys yet")
        return self._keys

    @property
    def values(self) -> np.ndarray:
        if self._values is None:
            raise ValueError("the cache is empty: it has no values yet")
        return self._values


SEES = {  # which positions the new token at position p may see
    "itself": lambda cols, p: cols <= p,
    "before itself": lambda cols, p: cols < p,
    "one ahead": lambda cols, p: cols <= p + 1,
}


def _decode(x_t, cache, W_q, W_k, W_v, *, append="before", sees="itself", offset=True,
            scaled=True):
    """One decoding step. ``append``: the new keys and values go into the cache "before"
    attending, "after" it, or "never" (attended to, but not kept); ``sees``: which
    positions a new token may see (:data:`SEES`); ``offset``: a new token's position counts
    the cached ones before it (else the causal rows are taken from the top)."""
    x, W_q, W_k, W_v = decode_inputs(x_t, cache, W_q, W_k, W_v)
    X = x[None, :] if x.ndim == 1 else x
    t0, n = len(cache), X.shape[0]
    # site: the query, key and value of the new tokens
    q, k, v = X @ W_q, X @ W_k, X @ W_v
    if append == "before":
        cache.append(k, v)
        K, V = cache.keys, cache.values
    elif append == "after":
        K, V = cache.keys, cache.values
        cache.append(k, v)
    else:
        K = np.concatenate([cache.keys, k]) if t0 else k
        V = np.concatenate([cache.values, v]) if t0 else v
    dtype = result_dtype(x, W_q, W_k, W_v)
    # site: the scale of the scores
    scale = dtype.type(1 / np.sqrt(q.shape[-1]) if scaled else 1)
    # site: the positions of the new tokens
    positions = (t0 if offset else 0) + np.arange(n)
    # site: the positions each new token may see
    allowed = SEES[sees](np.arange(len(K))[None, :], positions[:, None])
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        # site: the masked scores
        scores = np.where(allowed, (q @ K.T) * scale, -np.inf)
        # site: the exponentials of the scores
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        # site: the softmax's weighted sum of the values
        out = (e / e.sum(axis=-1, keepdims=True)) @ V
    out = out.astype(dtype, copy=False)
    return out[0] if x.ndim == 1 else out


def decode_step(x_t, cache, W_q, W_k, W_v):
    """Causal self-attention for the newest token(s), reusing the cached keys and values.

    ``x_t: [d_model]`` is the token at position t = len(cache) (or ``[n, d_model]``, the
    next n tokens, as when a prompt is read in one go). Its query, key and value are
    ``x_t @ W_q``, ``x_t @ W_k``, ``x_t @ W_v``; the key and value are appended to
    ``cache`` first, then the query attends over every cached position up to its own
    (with a block of new tokens, new token i sits at position t + i and sees 0..t + i).
    Returns ``[d_v]`` (or ``[n, d_v]``). Called once per token over a sequence, with one
    cache, it gives lesson 04's causal self-attention of that sequence, row by row.
    """
    return _decode(x_t, cache, W_q, W_k, W_v)
