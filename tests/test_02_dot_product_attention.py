"""grader.check on lesson 02: correct code written other ways passes, library attention
(and a library softmax) is caught in the bytecode, and failures read like a teaching
assistant's explanation."""
import math
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import softmax as soft
from torch.nn.functional import scaled_dot_product_attention as sdpa

from courseware import attention_plots
from courseware import widgets as course_widgets
from grader import CheckFailed, check
from grader.validation import as_array


def failure(name, fn, hidden=False) -> str:
    with pytest.raises(CheckFailed) as info:
        check(name, fn, hidden=hidden)
    return str(info.value)


# ----------------------------------------------------------------- correct, written differently

def softmax_logsumexp(x, axis=-1):
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"bad axis {axis!r} for shape {x.shape}")
    m = np.max(x, axis=axis, keepdims=True)
    log_total = m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))
    return np.exp(x - log_total)


def softmax_moveaxis(x, axis=-1):
    x = np.array(x, dtype=float) if not isinstance(x, np.ndarray) else x
    if x.ndim == 0 or not isinstance(axis, int) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"bad input: shape {np.shape(x)}, axis {axis!r}")
    moved = np.moveaxis(x, axis, -1)
    e = np.exp(moved - moved.max(-1)[..., None])
    return np.moveaxis(e / e.sum(-1)[..., None], -1, axis)


def scores_einsum(Q, K):
    Q, K = as_array(Q, "Q", min_ndim=2), as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"d_k differs: {Q.shape} and {K.shape}")
    return np.einsum("...qd,...kd->...qk", Q, K) / math.sqrt(Q.shape[-1])


def scores_transpose_method(Q, K):
    Q, K = as_array(Q, "Q", min_ndim=2), as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"d_k differs: {Q.shape} and {K.shape}")
    axes = list(range(K.ndim))
    axes[-1], axes[-2] = axes[-2], axes[-1]
    return (Q / Q.shape[-1] ** 0.25) @ (K / K.shape[-1] ** 0.25).transpose(axes)


def attention_inline(Q, K, V):
    Q, K, V = (as_array(a, n, min_ndim=2) for a, n in ((Q, "Q"), (K, "K"), (V, "V")))
    if Q.shape[-1] != K.shape[-1] or K.shape[-2] != V.shape[-2]:
        raise ValueError(f"shapes do not fit: {Q.shape}, {K.shape}, {V.shape}")
    s = np.einsum("...id,...jd->...ij", Q, K) / np.sqrt(K.shape[-1])
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    return np.einsum("...ij,...jd->...id", w, V), w


def attention_with_helpers(Q, K, V):
    if np.ndim(V) < 2 or np.shape(V)[-2] != np.shape(K)[-2]:
        raise ValueError("K and V need the same number of rows")
    weights = softmax_logsumexp(scores_einsum(Q, K))
    return np.asarray(weights) @ np.asarray(V, dtype=float), weights


def one_query_with_math_exp(q, K, V):
    q, K, V = as_array(q, "q", ndim=1), as_array(K, "K", ndim=2), as_array(V, "V", ndim=2)
    if K.shape[1] != q.shape[0] or V.shape[0] != K.shape[0]:
        raise ValueError(f"shapes do not fit: {q.shape}, {K.shape}, {V.shape}")
    scores = [float(np.dot(q, k)) / math.sqrt(len(q)) for k in K]
    top = max(scores)
    weights = [math.exp(s - top) for s in scores]
    total = math.fsum(weights)
    return sum((w / total) * v for w, v in zip(weights, V))


def self_attention_inline(X, W_q, W_k, W_v):
    X = as_array(X, "X", min_ndim=2)
    W_q, W_k, W_v = (as_array(W, "W", ndim=2) for W in (W_q, W_k, W_v))
    if not (W_q.shape[0] == W_k.shape[0] == W_v.shape[0] == X.shape[-1]) or W_q.shape[1] != W_k.shape[1]:
        raise ValueError("the projection matrices do not fit X")
    return attention_inline(np.einsum("...td,dk->...tk", X, W_q), X @ W_k, X @ W_v)


def variance_setup(d_k, n_samples, seed):
    if not isinstance(d_k, int) or d_k < 1 or not isinstance(n_samples, int) or n_samples < 2:
        raise ValueError(f"bad sizes d_k={d_k!r}, n_samples={n_samples!r}")
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n_samples, d_k)), rng.standard_normal((n_samples, d_k))


def variance_ddof_1(d_k, n_samples, seed):
    q, k = variance_setup(d_k, n_samples, seed)
    return np.var(np.einsum("nd,nd->n", q, k), ddof=1)


def variance_mean_square(d_k, n_samples, seed):
    q, k = variance_setup(d_k, n_samples, seed)
    return np.mean(np.sum(q * k, axis=1) ** 2)


def variance_by_hand(d_k, n_samples, seed):
    q, k = variance_setup(d_k, n_samples, seed)
    s = (q * k).sum(axis=-1)
    return np.array(((s - s.mean()) ** 2).mean())


@pytest.mark.parametrize(
    "name, fn",
    [
        ("softmax", softmax_logsumexp),
        ("softmax", softmax_moveaxis),
        ("attention_scores", scores_einsum),
        ("attention_scores", scores_transpose_method),
        ("scaled_dot_product_attention", attention_inline),
        ("scaled_dot_product_attention", attention_with_helpers),
        ("attend_one_query", one_query_with_math_exp),
        ("self_attention", self_attention_inline),
        ("score_variance", variance_ddof_1),
        ("score_variance", variance_mean_square),
        ("score_variance", variance_by_hand),
    ],
    ids=lambda v: getattr(v, "__name__", v),
)
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_correct_alternatives_pass(name, fn, hidden, capsys):
    check(name, fn, hidden=hidden)
    assert capsys.readouterr().out.startswith(f"✓ {name}")


def test_the_cases_contain_what_the_misconceptions_need():
    from grader.exercises import load_all

    ex = load_all()["scaled_dot_product_attention"]
    cases = ex.cases(np.random.default_rng(ex.seed), False)
    arrays = [c for c in cases if isinstance(c.args[0], np.ndarray)]
    assert any(Q.shape[-2] != K.shape[-2] for Q, K, _ in (c.args for c in arrays))        # T_q != T_k
    assert any(K.shape[-2] != Q.shape[-1] for Q, K, _ in (c.args for c in arrays))        # T_k != d_k
    assert any(V.shape[-1] != Q.shape[-1] for Q, _, V in (c.args for c in arrays))        # d_v != d_k
    assert any(c.args[0].ndim == 3 for c in arrays)                                       # batched
    big = [c for c in cases if c.note == "large scores"]
    assert big and max(float(np.max(np.abs(Q @ np.swapaxes(K, -1, -2)))) / 2 for Q, K, _ in (c.args for c in big)) > 709


# ----------------------------------------------------------------- forbidden shortcuts

def attention_by_torch(Q, K, V):
    t = [torch.as_tensor(np.asarray(a, dtype=float)) for a in (Q, K, V)]
    out = F.scaled_dot_product_attention(*t)
    return out.numpy(), None


def attention_by_torch_alias(Q, K, V):
    t = [torch.as_tensor(np.asarray(a, dtype=float)) for a in (Q, K, V)]
    return sdpa(*t).numpy(), None


def attention_by_full_path(Q, K, V):
    t = [torch.as_tensor(np.asarray(a, dtype=float)) for a in (Q, K, V)]
    return torch.nn.functional.scaled_dot_product_attention(*t).numpy(), None


def _library(Q, K, V):
    return attention_by_torch_alias(Q, K, V)


def attention_via_own_helper(Q, K, V):
    return _library(Q, K, V)


def attention_by_multihead_layer(Q, K, V):
    layer = torch.nn.MultiheadAttention(np.shape(Q)[-1], 1, batch_first=True)
    return layer(torch.as_tensor(Q), torch.as_tensor(K), torch.as_tensor(V))


def self_attention_by_torch(X, W_q, W_k, W_v):
    X = np.asarray(X, dtype=float)
    return attention_by_torch(X @ W_q, X @ W_k, X @ W_v)


def softmax_by_torch(x, axis=-1):
    return torch.softmax(torch.as_tensor(np.asarray(x, dtype=float)), dim=axis).numpy()


def softmax_by_alias(x, axis=-1):
    return soft(torch.as_tensor(np.asarray(x, dtype=float)), dim=axis).numpy()


def one_query_by_matmul(q, K, V):
    q, K, V = as_array(q, "q", ndim=1), as_array(K, "K", ndim=2), as_array(V, "V", ndim=2)
    s = K @ q / np.sqrt(len(q))
    w = np.exp(s - s.max())
    return (w / w.sum()) @ V


def variance_with_a_loop(d_k, n_samples, seed):
    q, k = variance_setup(d_k, n_samples, seed)
    return float(np.var([np.dot(q[i], k[i]) for i in range(n_samples)]))


@pytest.mark.parametrize(
    "name, fn, named",
    [
        ("scaled_dot_product_attention", attention_by_torch, "torch.nn.functional.scaled_dot_product_attention"),
        ("scaled_dot_product_attention", attention_by_torch_alias, "(as `sdpa`)"),
        ("scaled_dot_product_attention", attention_by_full_path, "torch.nn.functional.scaled_dot_product_attention"),
        ("scaled_dot_product_attention", attention_via_own_helper, "of attention_by_torch_alias"),
        ("scaled_dot_product_attention", attention_by_multihead_layer, "torch.nn.MultiheadAttention"),
        ("self_attention", self_attention_by_torch, "torch.nn.functional.scaled_dot_product_attention"),
        ("attend_one_query", attention_by_torch, "torch.nn.functional.scaled_dot_product_attention"),
        ("attend_one_query", one_query_by_matmul, "the @ operator"),
        ("softmax", softmax_by_torch, "a library softmax"),
        ("softmax", softmax_by_alias, "(as `soft`)"),
        ("score_variance", variance_with_a_loop, "a comprehension"),
    ],
    ids=lambda v: getattr(v, "__name__", None) if callable(v) else None,
)
def test_shortcuts_are_found_and_named(name, fn, named):
    message = failure(name, fn)
    assert "asks you to do by hand" in message, message
    assert named in message, message
    assert "line " in message


def test_library_objects_are_looked_up_only_in_modules_already_imported():
    from grader.exercises.dot_product_attention import ATTENTION_OBJECTS, _LoadedObjects

    assert F.scaled_dot_product_attention in list(ATTENTION_OBJECTS)
    assert torch.nn.MultiheadAttention in list(ATTENTION_OBJECTS)
    absent = _LoadedObjects([("a_module_nobody_imported", "attention")])
    assert list(absent) == [] and "a_module_nobody_imported" not in sys.modules


# ----------------------------------------------------------------- explaining failures

def attention_stub(Q, K, V):
    Q = as_array(Q, "Q", min_ndim=2)
    raise NotImplementedError()


def test_a_stub_is_reported_as_not_implemented():
    message = failure("scaled_dot_product_attention", attention_stub)
    assert "not implemented yet" in message


def scores_with_k_dot_t(Q, K):
    Q, K = as_array(Q, "Q", min_ndim=2), as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError("d_k differs")
    return Q @ K.T / np.sqrt(Q.shape[-1])


def test_k_dot_t_is_explained_with_the_learners_line():
    message = failure("attention_scores", scores_with_k_dot_t)
    assert "raised ValueError" in message
    assert "`return Q @ K.T / np.sqrt(Q.shape[-1])`" in message
    assert "(batched)" in message
    assert "Diagnosis: you transposed K with `K.T`" in message
    assert "np.swapaxes(K, -1, -2)" in message


def attention_seed_000(Q, K, V):
    """Divides by the number of tokens, a common misreading of d_k."""
    Q, K, V = (as_array(a, n, min_ndim=2) for a, n in ((Q, "Q"), (K, "K"), (V, "V")))
    if K.shape[-2] != V.shape[-2]:
        raise ValueError("K and V differ in rows")
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-2])
    weights = softmax_logsumexp(scores)
    return weights @ V, weights


def test_scaling_by_the_sequence_length_is_named():
    message = failure("scaled_dot_product_attention", attention_seed_000)
    assert "Smallest input where it goes wrong (one sequence)" in message
    assert "Expected:" in message and "Your function returned:" in message
    assert "Diagnosis: you divided by the square root of the sequence length" in message
    assert "`Q.shape[-1]`" in message


def attention_naive_softmax(Q, K, V):
    Q, K, V = (as_array(a, n, min_ndim=2) for a, n in ((Q, "Q"), (K, "K"), (V, "V")))
    if K.shape[-2] != V.shape[-2]:
        raise ValueError("K and V differ in rows")
    e = np.exp(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights


def test_an_unstable_softmax_fails_on_large_scores_and_is_named():
    with np.errstate(over="ignore", invalid="ignore"):
        message = failure("scaled_dot_product_attention", attention_naive_softmax)
    assert "(large scores)" in message
    assert "contains NaN" in message
    assert "Diagnosis: your softmax overflows" in message


def softmax_without_axis(x, axis=-1):
    x = as_array(x, "x", min_ndim=1)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError("bad axis")
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_ignoring_the_axis_argument_is_named():
    message = failure("softmax", softmax_without_axis)
    assert "axis =\n    0" in message
    assert "ignores its `axis` argument" in message


def variance_redrawn(d_k, n_samples, seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((d_k, n_samples))  # a different layout: different numbers
    k = rng.standard_normal((d_k, n_samples))
    if d_k < 1 or n_samples < 2 or not isinstance(d_k, int):
        raise ValueError("bad sizes")
    return float(np.var(np.sum(q * k, axis=0)))


def test_a_different_draw_is_told_to_keep_the_given_lines():
    message = failure("score_variance", variance_redrawn)
    assert "near d_k = 4, so the idea is right" in message
    assert "keep `rng`, `q` and `k`" in message


def returns_nothing(Q, K, V):
    attention_inline(Q, K, V)


def test_a_missing_return_is_named():
    assert "returned None" in failure("scaled_dot_product_attention", returns_nothing)


def accepts_mismatched_values(Q, K, V):
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    V = V[..., : K.shape[-2], :] if V.ndim >= 2 else np.ones(K.shape[:-1] + (1,))
    n = min(K.shape[-2], V.shape[-2])
    return attention_inline(Q, K[..., :n, :], V[..., :n, :])


def test_mismatched_keys_and_values_must_raise():
    message = failure("scaled_dot_product_attention", accepts_mismatched_values)
    assert "should reject this input with a ValueError" in message
    assert "K has 3 rows (keys) but V has 4" in message


# ----------------------------------------------------------------- the temperature widget

def test_temperature_explorer_has_a_named_slider_and_an_output(monkeypatch):
    import ipywidgets as widgets

    monkeypatch.setattr(course_widgets, "has_widget_frontend", lambda: True)
    drawn = []
    real = attention_plots.temperature_figure
    monkeypatch.setattr(attention_plots, "temperature_figure",
                        lambda *a, **k: drawn.append(a[1]) or real(*a, **k))
    box = attention_plots.temperature_explorer(np.eye(3))
    controls, output = box.children
    slider = controls.children[0]
    assert isinstance(slider, widgets.FloatLogSlider) and slider.description == "temperature"
    assert isinstance(output, widgets.Output)
    slider.value = 4.0
    assert drawn == [1.0, 4.0]


def test_temperature_explorer_draws_static_figures_without_a_front_end(monkeypatch):
    monkeypatch.setattr(course_widgets, "has_widget_frontend", lambda: False)
    drawn = []
    real = attention_plots.temperature_figure
    monkeypatch.setattr(attention_plots, "temperature_figure",
                        lambda *a, **k: drawn.append(a[1]) or real(*a, **k))
    assert attention_plots.temperature_explorer(np.eye(3)) is None
    assert drawn == [0.25, 1.0, 4.0]
