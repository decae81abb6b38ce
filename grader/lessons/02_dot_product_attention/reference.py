"""Lesson 02: scaled dot-product attention, one step at a time.

Row convention (PyTorch's): tokens are rows, ``Q: [..., T_q, d_k]``, ``K: [..., T_k, d_k]``,
``V: [..., T_k, d_v]``. Leading axes are batch axes; they broadcast and are never looped
over. Results keep float32 when every array input is float32.

Each graded function is a private core with keyword knobs, called with the right
settings. The lesson's catalogued mistakes (``exercises.py``) are the same cores with one
knob set wrong: the scale, the axis of the softmax, the transpose, what is returned.
"""
from __future__ import annotations

import functools
import numbers

import numpy as np

from ...learner.validation import as_array, positive_int, result_dtype, shape_str

__all__ = [
    "softmax",
    "attention_scores",
    "scaled_dot_product_attention",
    "attend_one_query",
    "self_attention",
    "score_variance",
]


# ----------------------------------------------------------------------------- softmax

def _axis_index(axis, ndim: int) -> int:
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, numbers.Integral):
        raise ValueError(f"axis must be an integer, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} does not exist for x with {ndim} axes")
    return int(axis)


def _softmax(x, axis=-1, *, shift="slice", total="slice", keepdims=True, along=None):
    """Softmax with its knobs. ``shift``: whose maximum is subtracted before ``np.exp``
    (each ``"slice"`` along the axis, each ``"matrix"`` of the last two axes, the whole
    ``"array"``, or None); ``total``: what the exponentials are divided by the sum of (the
    same choices); ``keepdims``: whether that sum keeps its axis; ``along``: an axis used
    in place of the ``axis`` argument."""
    x = as_array(x, "x", min_ndim=1)
    axis = _axis_index(axis, x.ndim) if along is None else along
    over = {"slice": axis, "matrix": (-2, -1), "array": None}
    if shift is not None:
        # site: the shifted scores
        x = x - x.max(axis=over[shift], keepdims=True)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        # site: the exponentials of the scores
        e = np.exp(x)
        # site: the weights
        return e / e.sum(axis=over[total], keepdims=keepdims)


def softmax(x, axis=-1):
    """``exp(x) / sum(exp(x))`` along ``axis``, without overflow.

    Subtracting the largest entry of each slice first changes nothing mathematically
    (the factor ``exp(-max)`` cancels) and keeps every exponent <= 0, so scores of
    +-1000 give exact weights instead of ``inf / inf = nan``.
    """
    return _softmax(x, axis)


# ----------------------------------------------------------------------------- scores

def _batch_shape(arrays: dict[str, np.ndarray]) -> tuple:
    try:
        return np.broadcast_shapes(*(a.shape[:-2] for a in arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{name} {shape_str(a.shape)}" for name, a in arrays.items())
        raise ValueError(f"the batch axes (all but the last two) do not broadcast: {shapes}") from None


def _query_key(Q, K) -> tuple[np.ndarray, np.ndarray]:
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(
            f"Q and K must have the same last axis d_k, got Q of shape {shape_str(Q.shape)} "
            f"and K of shape {shape_str(K.shape)}"
        )
    return Q, K


def _check_values(K: np.ndarray, V: np.ndarray) -> None:
    if V.shape[-2] != K.shape[-2]:
        raise ValueError(
            f"V must have one row per key: K has {K.shape[-2]} rows (shape "
            f"{shape_str(K.shape)}) but V has {V.shape[-2]} (shape {shape_str(V.shape)})"
        )


def _divisor(divide_by: str, *, d_k: int, t_q: int, t_k: int, d_model: int | None = None) -> float:
    """What the scores are divided by: ``"sqrt(d_k)"`` (the key width) in the reference.
    The catalogued mistakes name another width (``"d_k"``, ``"sqrt(T_k)"``, ``"sqrt(T_q)"``,
    ``"sqrt(d_model)"``), or ``"1"`` for no scaling."""
    if divide_by == "1":
        return 1.0
    widths = {"d_k": d_k, "T_k": t_k, "T_q": t_q, "d_model": d_model}
    width = widths[divide_by.removeprefix("sqrt(").removesuffix(")")]
    # site: the scale of the scores
    return float(np.sqrt(width) if divide_by.startswith("sqrt(") else width)


def _swap_last_two(a: np.ndarray) -> np.ndarray:
    return np.swapaxes(a, -1, -2)


def _scores(Q, K, *, divide_by="sqrt(d_k)", d_model=None, transpose="last two axes",
            queries_first=True):
    """Scores with their knobs: the divisor (see :func:`_divisor`), how K is transposed
    (``"last two axes"``, or ``"every axis"`` as ``K.T`` does), and which operand comes
    first (``Q Kᵀ``, or ``K Qᵀ``)."""
    Q, K = _query_key(Q, K)
    _batch_shape({"Q": Q, "K": K})
    flip = {"last two axes": _swap_last_two, "every axis": np.transpose}[transpose]
    # site: the product of the queries and the keys
    product = np.matmul(Q, flip(K)) if queries_first else np.matmul(K, flip(Q))
    scale = _divisor(divide_by, d_k=Q.shape[-1], t_q=Q.shape[-2], t_k=K.shape[-2], d_model=d_model)
    # site: the scores
    return product / np.asarray(scale).astype(np.result_type(Q, K))


def attention_scores(Q, K):
    """``Q Kᵀ / sqrt(d_k)``: ``[..., T_q, d_k]`` and ``[..., T_k, d_k]`` -> ``[..., T_q, T_k]``.

    ``d_k`` is the length of each query and key vector (the last axis), never the number
    of tokens. Only the last two axes of K are swapped: ``K.T`` would reverse the batch
    axes too.
    """
    return _scores(Q, K)


# ----------------------------------------------------------------------------- attention

def _attention(Q, K, V, *, scores=attention_scores, weights_by=softmax, softmax_axis=-1,
               values_transposed=False, returns="output, weights"):
    """Attention with its knobs: the scores function, the softmax and the axis it runs
    along, whether V is transposed before the product, and what is returned
    (``"output, weights"``, ``"weights, output"``, ``"weights"`` or ``"output"``)."""
    Q, K = _query_key(Q, K)
    V = as_array(V, "V", min_ndim=2)
    _check_values(K, V)
    _batch_shape({"Q": Q, "K": K, "V": V})
    # site: the scores
    S = scores(Q, K)
    # site: the weights
    weights = weights_by(S, axis=softmax_axis)
    # site: the mix of the values
    output = np.matmul(weights, _swap_last_two(V) if values_transposed else V)
    # site: the returned output and weights
    return {"output, weights": (output, weights), "weights, output": (weights, output),
            "weights": weights, "output": output}[returns]


def scaled_dot_product_attention(Q, K, V):
    """``softmax(Q Kᵀ / sqrt(d_k)) V``; returns ``(output [..., T_q, d_v], weights [..., T_q, T_k])``.

    Row i of ``weights`` says how query i shares its attention among the keys, so the
    softmax runs along the key axis (the last one), and every row sums to 1.
    """
    return _attention(Q, K, V)


def _attend_one_query(q, K, V, *, divide_by="sqrt(d_k)", stable=True, normalised=True,
                      returns="output"):
    """The single-query sum with its knobs: the divisor (see :func:`_divisor`), whether
    the largest score is subtracted before ``np.exp``, whether the weights are divided by
    their sum, and what is returned (``"output"`` or ``"weights"``)."""
    q = as_array(q, "q", ndim=1)
    K = as_array(K, "K", ndim=2)
    V = as_array(V, "V", ndim=2)
    if K.shape[1] != q.shape[0]:
        raise ValueError(
            f"q has length {q.shape[0]} but the keys in K (shape {shape_str(K.shape)}) have "
            f"length {K.shape[1]}; both are d_k"
        )
    _check_values(K, V)
    scale = _divisor(divide_by, d_k=q.shape[0], t_q=1, t_k=K.shape[0])
    # site: the scores
    scores = [float(np.sum(q * K[i])) / scale for i in range(K.shape[0])]
    top = max(scores) if stable else 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        # site: the exponentials of the scores
        exps = [np.exp(s - top) for s in scores]
        # site: the denominator of the softmax
        total = sum(exps) if normalised else 1.0
        # site: the weights
        weights = [e / total for e in exps]
        if returns == "weights":
            return np.array(weights)
        # site: the output
        out = np.zeros(V.shape[1], dtype=result_dtype(q, K, V))
        # site: the loop over the keys
        for i in range(K.shape[0]):
            # site: the mix of the values
            out += weights[i] * V[i]
    return out


def attend_one_query(q, K, V):
    """One query, written as a sum with a loop over the keys:

    ``sum_i  exp(s_i) / sum_j exp(s_j) * v_i``  with  ``s_i = q·k_i / sqrt(d_k)``.

    ``q: [d_k]``, ``K: [T_k, d_k]``, ``V: [T_k, d_v]`` -> ``[d_v]``. It equals row i of
    ``scaled_dot_product_attention`` when ``q`` is query i.
    """
    return _attend_one_query(q, K, V)


# ----------------------------------------------------------------------------- self-attention

def _projections(X, W_q, W_k, W_v) -> tuple[np.ndarray, ...]:
    X = as_array(X, "X", min_ndim=2)
    W_q = as_array(W_q, "W_q", ndim=2)
    W_k = as_array(W_k, "W_k", ndim=2)
    W_v = as_array(W_v, "W_v", ndim=2)
    d_model = X.shape[-1]
    for name, W in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v)):
        if W.shape[0] != d_model:
            raise ValueError(
                f"{name} must have d_model = {d_model} rows to project X of shape "
                f"{shape_str(X.shape)}, got {name} of shape {shape_str(W.shape)}"
            )
    if W_q.shape[1] != W_k.shape[1]:
        raise ValueError(
            f"W_q and W_k must give queries and keys of the same length d_k, got W_q of "
            f"shape {shape_str(W_q.shape)} and W_k of shape {shape_str(W_k.shape)}"
        )
    return X, W_q, W_k, W_v


def _self_attention(X, W_q, W_k, W_v, *, projected=True, keys_by="W_k", divide_by="sqrt(d_k)",
                    returns="output, weights", weights_transposed=False):
    """Self-attention with its knobs: whether X is projected at all, the matrix the keys
    are projected with (``"W_k"`` or ``"W_q"``), the divisor of the scores (see
    :func:`_divisor`; ``"sqrt(d_model)"`` is the width of X), what is returned (see
    :func:`_attention`), and whether X is multiplied by the transposed weight matrices
    (``X @ W.T``, as with an ``nn.Linear`` weight stored ``[out, in]``)."""
    X, W_q, W_k, W_v = _projections(X, W_q, W_k, W_v)
    if weights_transposed:
        W_q, W_k, W_v = W_q.T, W_k.T, W_v.T
    if projected:
        # site: the queries, keys and values
        Q, K, V = X @ W_q, X @ {"W_k": W_k, "W_q": W_q}[keys_by], X @ W_v
    else:
        Q = K = V = X
    scores = functools.partial(_scores, divide_by=divide_by, d_model=X.shape[-1])
    return _attention(Q, K, V, scores=scores, returns=returns)


def self_attention(X, W_q, W_k, W_v):
    """Queries, keys and values are learned projections of the same tokens X.

    ``X: [..., T, d_model]``, ``W_q, W_k: [d_model, d_k]``, ``W_v: [d_model, d_v]``;
    ``Q = X W_q``, ``K = X W_k``, ``V = X W_v``; returns ``(output [..., T, d_v],
    weights [..., T, T])``. The scale is ``sqrt(d_k)``, the width of the projected
    queries and keys, not ``sqrt(d_model)``.
    """
    return _self_attention(X, W_q, W_k, W_v)


# ----------------------------------------------------------------------------- variance

def score_samples(d_k, n_samples, seed) -> tuple[np.ndarray, np.ndarray]:
    """The draws of :func:`score_variance`: ``q`` first, then ``k``, each
    ``[n_samples, d_k]``, from ``np.random.default_rng(seed)``. The lesson's given lines
    draw exactly these."""
    d_k = positive_int(d_k, "d_k")
    n_samples = positive_int(n_samples, "n_samples")
    if n_samples < 2:
        raise ValueError(f"n_samples must be at least 2 for a variance, got {n_samples}")
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n_samples, d_k)), rng.standard_normal((n_samples, d_k))


STATISTICS = {"variance": np.var, "standard deviation": np.std, "mean": np.mean}


def _score_variance(d_k, n_samples, seed, *, summed_over=-1, scaled=False, statistic="variance",
                    pairs="row with row"):
    """The experiment with its knobs: the axis the products ``q * k`` are summed over
    (-1: the d_k coordinates of each pair; None: not summed), whether the dot products
    are divided by sqrt(d_k) first, the statistic taken (see ``STATISTICS``), and which
    pairs are dotted: ``"row with row"`` (q[i] with k[i]) or ``"all"`` (every q[i] with
    every k[j], as ``q @ k.T`` gives)."""
    q, k = score_samples(d_k, n_samples, seed)
    if pairs == "all":
        return _all_pairs_variance(q, k)
    # site: the dot products
    dots = q * k if summed_over is None else np.sum(q * k, axis=summed_over)
    if scaled:
        dots = dots / np.sqrt(q.shape[-1])
    return float(STATISTICS[statistic](dots))


def _all_pairs_variance(q: np.ndarray, k: np.ndarray) -> float:
    """``np.var(q @ k.T)`` without the ``[n, n]`` matrix (200 MB for 5000 samples): the
    mean of the squared dot products is ``sum((qᵀq) * (kᵀk)) / n²``, and the mean dot
    product is ``mean(q) · mean(k)``."""
    n = q.shape[0]
    mean_square = float(np.sum((q.T @ q) * (k.T @ k))) / n ** 2
    mean = float(q.mean(axis=0) @ k.mean(axis=0))
    return mean_square - mean ** 2


def score_variance(d_k, n_samples, seed):
    """The sample variance of ``q·k`` over ``n_samples`` pairs of standard normal vectors
    of length ``d_k``, drawn with ``np.random.default_rng(seed)`` (q first, then k, each
    of shape ``[n_samples, d_k]``). It is about ``d_k``: each of the d_k products
    ``q_i k_i`` has variance 1, and they add.
    """
    return _score_variance(d_k, n_samples, seed)
