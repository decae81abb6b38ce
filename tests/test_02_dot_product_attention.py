"""Lesson 02, scaled dot-product attention.

The check: correct code written other ways passes, library attention (and a library
softmax) is caught in the bytecode, and failures read like a teaching assistant's
explanation. The references: against independent oracles, torch's
scaled_dot_product_attention and softmax on property-based batched shapes, the matrix
form against the single-query sum, and the variance experiment against its expected
value d_k. The lesson's figures and the "mole" demo.
"""
import math
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from torch import softmax as soft
from torch.nn import MultiheadAttention as Layer
from torch.nn.functional import scaled_dot_product_attention as sdpa

from courseware import attention_plots, embeddings
from courseware import widgets as course_widgets
from grader import CheckFailed, check, lessons
from grader import reference as ref
from grader.learner.validation import as_array
from sources import handed_over
from stated_rules import broken

LESSON = "02_dot_product_attention"


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
    cases = lessons.get("scaled_dot_product_attention").draw(hidden=False)
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


def attention_by_aliased_layer(Q, K, V):
    layer = Layer(np.shape(Q)[-1], 1, batch_first=True)
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
        ("scaled_dot_product_attention", attention_by_aliased_layer, "(as `Layer`)"),
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


def test_a_check_in_a_kernel_without_torch_does_not_import_it():
    """The forbidden library functions are looked up only in modules the learner's kernel
    has already imported: a NumPy answer is checked without importing torch (or the
    instructor's side) into that kernel."""
    code = (
        "import sys\n"
        "import numpy as np\n"
        "from grader import check\n"
        "def softmax(x, axis=-1):\n"
        "    x = np.asarray(x, dtype=float)\n"
        "    if x.ndim == 0 or not isinstance(axis, int) or not -x.ndim <= axis < x.ndim:\n"
        "        raise ValueError(f'bad axis {axis!r} for x of shape {x.shape}')\n"
        "    e = np.exp(x - x.max(axis=axis, keepdims=True))\n"
        "    return e / e.sum(axis=axis, keepdims=True)\n"
        "check('softmax', softmax)\n"
        "print(sorted(m for m in sys.modules if m == 'torch' or (m.startswith('grader.lessons.') and m.count('.') >= 3 and not m.endswith('.learner')) or m.startswith('grader.reference')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/")
    assert out.returncode == 0, out.stderr
    assert "✓ softmax" in out.stdout, out.stdout
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout


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
    # Seed 000's mistake, named by the factor it puts on the scores (the catalogue keeps
    # its longer explanation for attention_scores, where the scores are the result).
    assert ("Diagnosis: your result is what the expected one would be with the scores "
            "multiplied by") in message
    assert "That is what dividing by √T" in message and "instead of √d_k gives." in message


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
    assert "Diagnosis: in output, your result holds NaN" in message
    assert "np.exp of a number above about 709.8" in message


def softmax_without_axis(x, axis=-1):
    x = as_array(x, "x", min_ndim=1)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError("bad axis")
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_ignoring_the_axis_argument_is_named():
    message = failure("softmax", softmax_without_axis)
    assert "axis = 0" in message  # a number on the line of its name
    assert "Diagnosis: your result sums to 1 along axis -1 (along each row), but the expected " \
           "one sums to 1 along axis -2 (down each column): you normalise over the wrong " \
           "axis." in message


def softmax_down_the_columns(x, axis=-1):
    x = as_array(x, "x", min_ndim=1)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError("bad axis")
    e = np.exp(x - np.max(x, axis=0))
    return e / np.sum(e, axis=0)


@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_a_softmax_hard_coded_to_axis_0_is_named(hidden):
    message = failure("softmax", softmax_down_the_columns, hidden)
    assert "Smallest input where it goes wrong (rows (axis=-1))" in message
    assert "Diagnosis: your result sums to 1 along axis -2 (down each column), but the " \
           "expected one sums to 1 along axis -1 (along each row): you normalise over the " \
           "wrong axis." in message
    assert not handed_over(message, LESSON)


def attention_softmax_axis_0(Q, K, V):
    Q, K, V = (as_array(a, n, min_ndim=2) for a, n in ((Q, "Q"), (K, "K"), (V, "V")))
    if Q.shape[-1] != K.shape[-1] or K.shape[-2] != V.shape[-2]:
        raise ValueError(f"shapes {Q.shape}, {K.shape} and {V.shape} do not fit")
    w = ref.softmax(ref.attention_scores(Q, K), axis=0)
    return w @ V, w


def attention_output_only(Q, K, V):
    Q, K, V = (as_array(a, n, min_ndim=2) for a, n in ((Q, "Q"), (K, "K"), (V, "V")))
    if Q.shape[-1] != K.shape[-1] or K.shape[-2] != V.shape[-2]:
        raise ValueError(f"shapes {Q.shape}, {K.shape} and {V.shape} do not fit")
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-1])
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)) @ V


def projections_fit(X, W_q, W_k, W_v) -> bool:
    rows = {W_q.shape[0], W_k.shape[0], W_v.shape[0], X.shape[-1]}
    return len(rows) == 1 and W_q.shape[1] == W_k.shape[1]


def self_attention_linear_layout(X, W_q, W_k, W_v):
    """The weights used as nn.Linear stores them, [out, in]: X @ W.T."""
    X = as_array(X, "X", min_ndim=2)
    if not projections_fit(X, W_q, W_k, W_v):
        raise ValueError("the projection matrices do not fit X")
    Q = X @ W_q.T
    K = X @ W_k.T
    V = X @ W_v.T
    return attention_inline(Q, K, V)


def self_attention_weights_first(X, W_q, W_k, W_v):
    """The column convention's order, W @ X: not catalogued."""
    X = as_array(X, "X", min_ndim=2)
    if not projections_fit(X, W_q, W_k, W_v):
        raise ValueError("the projection matrices do not fit X")
    return attention_inline(W_q @ X, W_k @ X, W_v @ X)


@pytest.mark.parametrize("name, fn, words", [
    ("scaled_dot_product_attention", attention_softmax_axis_0,
     "Diagnosis: your softmax runs along axis 0, the first axis of the scores"),
    ("scaled_dot_product_attention", attention_output_only,
     "Diagnosis: you returned the output alone"),
    ("self_attention", self_attention_linear_layout,
     "Diagnosis: you multiplied X by a transposed weight matrix"),
], ids=lambda v: getattr(v, "__name__", None))
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_attention_mistakes_written_by_hand_are_diagnosed(name, fn, words, hidden):
    message = failure(name, fn, hidden)
    assert words in message, message
    assert not handed_over(message, LESSON)


def test_the_softmax_over_queries_is_not_mistaken_for_axis_0():
    message = failure("scaled_dot_product_attention", attention_seed_000_axis(-2))
    assert "Diagnosis: in weights, your result sums to 1 along axis -2 (down each column)" \
        in message
    assert "axis 0" not in message


def attention_seed_000_axis(axis):
    def attention(Q, K, V):
        Q, K, V = (as_array(a, n, min_ndim=2) for a, n in ((Q, "Q"), (K, "K"), (V, "V")))
        if Q.shape[-1] != K.shape[-1] or K.shape[-2] != V.shape[-2]:
            raise ValueError("shapes do not fit")
        w = ref.softmax(ref.attention_scores(Q, K), axis=axis)
        return w @ V, w
    return attention


def test_a_transposed_weight_raises_where_the_column_order_fits():
    """The smallest case has T = d_k = d_v: W_q @ X fits there and X @ W_q.T raises, so
    neither is taken for the other."""
    shown = failure("self_attention", self_attention_weights_first)
    assert "What differs: item 0: shape is 3×3, expected 2×2" in shown
    assert "Diagnosis" not in shown and "transposed weight" not in shown
    X, W_q, W_k, W_v = lessons.get("self_attention").draw(hidden=False)[0].args
    assert X.shape[-2] == W_q.shape[1] == W_v.shape[1] != X.shape[-1]


def variance_redrawn(d_k, n_samples, seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((d_k, n_samples))  # a different layout: different numbers
    k = rng.standard_normal((d_k, n_samples))
    if d_k < 1 or n_samples < 2 or not isinstance(d_k, int):
        raise ValueError("bad sizes")
    return float(np.var(np.sum(q * k, axis=0)))


def test_a_different_draw_is_told_what_its_value_is_not():
    message = failure("score_variance", variance_redrawn)
    assert "What differs: got " in message
    assert "near d_k = 4, so it measures the right kind of spread, but it is not the variance " \
           "of the n_samples dot products of the given draws" in message
    assert "Check that `rng`, `q` and `k` are drawn exactly as the given lines draw them" in message
    assert "Diagnosis" not in message


def variance_over_all_pairs(d_k, n_samples, seed):
    q, k = variance_setup(d_k, n_samples, seed)  # the given draws, kept as they are
    scores = q @ k.T
    return scores.var()


@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_the_variance_over_all_pairs_is_diagnosed_without_blaming_the_draws(hidden):
    message = failure("score_variance", variance_over_all_pairs, hidden)
    assert "Diagnosis: you took the variance over all n_samples × n_samples pairs" in message
    # The draws are the given ones: the remark about drawing them differently stays out.
    assert "spread, but" not in message and "drawn exactly as" not in message
    assert not handed_over(message, LESSON)


def variance_doubled(d_k, n_samples, seed):
    q, k = variance_setup(d_k, n_samples, seed)
    return 2 * float(np.var(np.sum(q * k, axis=-1)))


@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_a_value_far_from_d_k_gets_no_remark_and_no_pass(hidden):
    message = failure("score_variance", variance_doubled, hidden=hidden)
    assert "What differs:" in message
    assert "so it measures the right kind of spread" not in message


def test_the_accepted_estimates_and_the_remark_band_are_data_of_the_cases():
    """The comparison gets the other accepted estimates of the same draws and the band
    around d_k from the case, computed on the instructor's side."""
    for case in lessons.expectations("score_variance", False).cases:
        d_k, n_samples, seed = case.args
        q, k = variance_setup(d_k, n_samples, seed)  # the given lines of the notebook
        s = np.sum(q * k, axis=-1)
        assert case.meta.accept == pytest.approx([np.var(s, ddof=1), np.mean(s ** 2)], rel=1e-12)
        assert case.meta.near["value"] == d_k
        assert 0 < case.meta.near["within"] < d_k
        assert f"near d_k = {d_k}" in case.meta.near["message"]


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

# ----------------------------------------------------------------- the rules the notebook states

def softmax_unstable(x, axis=-1):
    """exp of the scores as they are: overflows on scores near 1000."""
    x = as_array(x, "x", min_ndim=1)
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"bad axis {axis!r}")
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(x)
        return e / e.sum(axis=axis, keepdims=True)


def softmax_without_the_given_lines(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def scores_checked_against_torch(Q, K):
    """Right scores, then a look at torch's attention on the way, to be sure."""
    S = scores_einsum(Q, K)
    t = [torch.as_tensor(np.asarray(a, dtype=float)) for a in (Q, K, K)]
    F.scaled_dot_product_attention(*t)
    return S


def scores_trimming_the_features(Q, K):
    """The given lines dropped: Q and K of different d_k are cut to the shorter one."""
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    d = min(Q.shape[-1], K.shape[-1])
    return np.einsum("...qd,...kd->...qk", Q[..., :d], K[..., :d]) / np.sqrt(d)


def one_query_without_a_loop(q, K, V):
    """The single-query sum without the loop over the keys the notebook asks for."""
    q, K, V = as_array(q, "q", ndim=1), as_array(K, "K", ndim=2), as_array(V, "V", ndim=2)
    if K.shape[1] != q.shape[0] or V.shape[0] != K.shape[0]:
        raise ValueError("shapes do not fit")
    s = (K * q).sum(axis=1) / np.sqrt(len(q))
    w = np.exp(s - s.max())
    return ((w / w.sum())[:, None] * V).sum(axis=0)


def one_query_overflowing(q, K, V):
    """The loop over the keys, with weights e^(s_i) taken as they are: inf on large scores."""
    q, K, V = as_array(q, "q", ndim=1), as_array(K, "K", ndim=2), as_array(V, "V", ndim=2)
    if K.shape[1] != q.shape[0] or V.shape[0] != K.shape[0]:
        raise ValueError("shapes do not fit")
    weights = [np.exp(np.sum(q * K[i]) / np.sqrt(len(q))) for i in range(len(K))]
    total = sum(weights)
    out = np.zeros(V.shape[1])
    for i in range(len(K)):
        out = out + weights[i] / total * V[i]
    return out


def one_query_flattening_q(q, K, V):
    """The given lines dropped: a matrix q is flattened into one query."""
    K, V = np.asarray(K, dtype=float), np.asarray(V, dtype=float)
    return one_query_with_math_exp(np.ravel(q)[:K.shape[1]], K, V)


def self_attention_taking_a_vector(X, W_q, W_k, W_v):
    """The given lines dropped: one vector X is taken as a sequence of one token."""
    X = np.atleast_2d(np.asarray(X, dtype=float))
    return attention_inline(X @ W_q, X @ W_k, X @ W_v)


def variance_without_the_given_checks(d_k, n_samples, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((n_samples, int(d_k))), rng.standard_normal((n_samples, int(d_k)))
    return float(np.var(np.sum(q * k, axis=-1)))


KEEP_THEM = "raise a `ValueError` for inputs that do not fit. Keep them."
NO_LIBRARY = "The library's attention functions are not allowed in this lesson's exercises"
BREAKS = {
    ("softmax", "a library softmax is not allowed here"): softmax_by_torch,
    ("softmax", "no overflow for scores of +-1000"): softmax_unstable,
    ("softmax", "(any axis, not only the last)"): softmax_without_axis,
    ("softmax", KEEP_THEM): softmax_without_the_given_lines,
    ("attention_scores", NO_LIBRARY): scores_checked_against_torch,
    ("attention_scores", KEEP_THEM): scores_trimming_the_features,
    ("scaled_dot_product_attention", "The library's attention (`torch.nn.functional."
     "scaled_dot_product_attention` and friends) is not allowed"): attention_by_torch,
    ("scaled_dot_product_attention", KEEP_THEM): accepts_mismatched_values,
    ("attend_one_query", "loop over the keys"): one_query_without_a_loop,
    ("attend_one_query", "No `@`, `np.matmul` or `np.einsum` here."): one_query_by_matmul,
    ("attend_one_query", KEEP_THEM): one_query_flattening_q,
    ("attend_one_query", "so that large scores do not overflow"): one_query_overflowing,
    ("self_attention", NO_LIBRARY): self_attention_by_torch,
    ("self_attention", KEEP_THEM): self_attention_taking_a_vector,
    ("score_variance", "keep them, so the check can repeat your draws"): variance_redrawn,
    ("score_variance", "without a Python loop"): variance_with_a_loop,
    ("score_variance", KEEP_THEM): variance_without_the_given_checks,
}


@pytest.mark.parametrize("key", BREAKS, ids=lambda key: f"{key[0]}: {key[1][:40]}")
def test_an_answer_that_breaks_a_stated_rule_fails_and_names_it(key):
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        assert not broken(key, BREAKS[key])


def test_temperature_explorer_has_a_named_slider_and_an_output(monkeypatch):
    import ipywidgets as widgets

    monkeypatch.setattr(course_widgets, "has_widget_frontend", lambda: True)
    drawn = []
    real = attention_plots.temperature_figure
    monkeypatch.setattr(attention_plots, "temperature_figure",
                        lambda *a, **k: drawn.append(a[1]) or real(*a, **k))
    box = attention_plots.temperature_explorer(np.eye(3), softmax=softmax_logsumexp)
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
    assert attention_plots.temperature_explorer(np.eye(3), softmax=softmax_logsumexp) is None
    assert drawn == [0.25, 1.0, 4.0]


def softmax_stub(x, axis=-1):
    raise NotImplementedError()


@pytest.mark.parametrize("front_end", [True, False], ids=["widget", "static"])
def test_temperature_explorer_with_a_stub_softmax_raises_in_the_cell(monkeypatch, front_end):
    """The released notebook catches NotImplementedError around the explorer: it must
    come from the call itself, not from inside a widget's redraw."""
    monkeypatch.setattr(course_widgets, "has_widget_frontend", lambda: front_end)
    with pytest.raises(NotImplementedError):
        attention_plots.temperature_explorer(np.eye(3), softmax=softmax_stub)


def test_the_figures_draw_with_the_softmax_they_are_given():
    uniform = lambda x, axis=-1: np.full_like(np.asarray(x, dtype=float), 1.0 / np.shape(x)[axis])  # noqa: E731
    assert attention_plots.mean_top_weight(64, 16, 1.0, softmax=uniform) == pytest.approx(1 / 16)
    sharp = attention_plots.mean_top_weight(64, 16, 1.0, softmax=softmax_logsumexp)
    assert sharp > 0.5  # unscaled scores of width 64: almost one-hot
    fig = attention_plots.temperature_figure(np.eye(3), 1.0, softmax=uniform)
    heatmap = fig.axes[0].images[0].get_array()
    np.testing.assert_allclose(heatmap, np.full((3, 3), 1 / 3))


# ================================================================= the references

finite = st.floats(-10, 10, allow_nan=False, width=64)
dims = st.integers(1, 6)


def torch_attention(Q, K, V):
    """torch's own attention, in float64, as the oracle."""
    t = [torch.from_numpy(np.array(a)) for a in (Q, K, V)]
    return F.scaled_dot_product_attention(*t).numpy()


def torch_weights(Q, K):
    q, k = torch.from_numpy(Q), torch.from_numpy(K)
    return torch.softmax(q @ k.transpose(-1, -2) / np.sqrt(Q.shape[-1]), dim=-1).numpy()


@st.composite
def qkv(draw, batched=True):
    batch = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=2))) if batched else ()
    t_q, t_k, d_k, d_v = draw(dims), draw(dims), draw(dims), draw(dims)
    assume(t_q != t_k and d_v != d_k)
    Q = draw(arrays(np.float64, batch + (t_q, d_k), elements=finite))
    K = draw(arrays(np.float64, batch + (t_k, d_k), elements=finite))
    V = draw(arrays(np.float64, batch + (t_k, d_v), elements=finite))
    return Q, K, V


@settings(max_examples=80, deadline=None)
@given(args=qkv())
def test_attention_equals_torch(args):
    Q, K, V = args
    output, weights = ref.scaled_dot_product_attention(Q, K, V)
    np.testing.assert_allclose(output, torch_attention(Q, K, V), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(weights, torch_weights(Q, K), rtol=1e-9, atol=1e-12)
    assert output.shape == Q.shape[:-1] + (V.shape[-1],)
    assert weights.shape == Q.shape[:-1] + (K.shape[-2],)


@settings(max_examples=40, deadline=None)
@given(args=qkv())
def test_one_query_matrix_broadcasts_over_the_batch(args):
    Q, K, V = args
    Q2 = Q.reshape(-1, *Q.shape[-2:])[0]  # one [T_q, d_k] matrix for every batch item
    expected = torch_attention(np.broadcast_to(Q2, K.shape[:-2] + Q2.shape), K, V)
    np.testing.assert_allclose(ref.scaled_dot_product_attention(Q2, K, V)[0], expected,
                               rtol=1e-9, atol=1e-9)


@settings(max_examples=60, deadline=None)
@given(args=qkv())
def test_scores_equal_torch(args):
    Q, K, _ = args
    expected = (torch.from_numpy(Q) @ torch.from_numpy(K).transpose(-1, -2)).numpy() / np.sqrt(Q.shape[-1])
    np.testing.assert_allclose(ref.attention_scores(Q, K), expected, rtol=1e-12, atol=1e-12)


def test_attention_float32_stays_float32_and_matches_torch():
    rng = np.random.default_rng(0)
    Q, K, V = (rng.normal(size=s).astype(np.float32) for s in [(2, 3, 4), (2, 5, 4), (2, 5, 2)])
    output, weights = ref.scaled_dot_product_attention(Q, K, V)
    assert output.dtype == weights.dtype == np.float32
    np.testing.assert_allclose(output, torch_attention(Q, K, V), rtol=1e-5, atol=1e-6)


# ----------------------------------------------------------------------------- softmax

@settings(max_examples=80, deadline=None)
@given(x=arrays(np.float64, st.lists(dims, min_size=1, max_size=3).map(tuple),
                elements=st.floats(-1000, 1000, allow_nan=False, width=64)),
       data=st.data())
def test_softmax_equals_torch_up_to_1000(x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    w = ref.softmax(x, axis=axis)
    assert np.isfinite(w).all() and (w >= 0).all()
    np.testing.assert_allclose(w.sum(axis=axis), 1.0, rtol=1e-12)
    np.testing.assert_allclose(w, torch.softmax(torch.from_numpy(x), dim=axis).numpy(),
                               rtol=1e-9, atol=1e-300)


def test_softmax_is_stable_at_plus_and_minus_1000():
    with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
        w = ref.softmax(np.array([[1000.0, -1000.0, 0.0], [-1000.0, -999.0, -1000.0]]))
    e = np.exp(1.0)
    np.testing.assert_allclose(w[0], [1.0, 0.0, 0.0], atol=1e-300)
    np.testing.assert_allclose(w[1], [1 / (2 + e), e / (2 + e), 1 / (2 + e)], rtol=1e-12)


def test_softmax_ignores_a_common_shift():
    x = np.array([0.3, -1.2, 2.0])
    np.testing.assert_allclose(ref.softmax(x + 800.0), ref.softmax(x), rtol=1e-12)


@pytest.mark.parametrize("bad, kwargs, words", [
    (np.float64(1.0), {}, "at least 1 axes"),
    (np.ones((2, 3)), {"axis": 2}, "axis 2 does not exist"),
    (np.ones((2, 3)), {"axis": 1.0}, "axis must be an integer"),
])
def test_softmax_rejects_bad_input_by_name(bad, kwargs, words):
    with pytest.raises(ValueError, match=words):
        ref.softmax(bad, **kwargs)


# ----------------------------------------------------------------------------- one query

@settings(max_examples=60, deadline=None)
@given(args=qkv(batched=False), row=st.integers(0, 5))
def test_one_query_sum_is_a_row_of_the_matrix_form(args, row):
    Q, K, V = args
    row = row % Q.shape[0]
    output, _ = ref.scaled_dot_product_attention(Q, K, V)
    np.testing.assert_allclose(ref.attend_one_query(Q[row], K, V), output[row], rtol=1e-9, atol=1e-9)


def test_one_query_is_stable_at_large_scores():
    q = np.array([40.0, -30.0])
    K = np.array([[40.0, -30.0], [-40.0, 30.0], [39.0, -30.0]])
    V = np.array([[1.0], [2.0], [3.0]])
    with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
        out = ref.attend_one_query(q, K, V)
    expected = torch_attention(q[None], K, V)[0]
    np.testing.assert_allclose(out, expected, rtol=1e-12)


# ----------------------------------------------------------------------------- self-attention

@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_self_attention_is_attention_of_projections(data):
    batch = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2)))
    t, d_model, d_k, d_v = (data.draw(dims) for _ in range(4))
    X = data.draw(arrays(np.float64, batch + (t, d_model), elements=finite))
    W_q, W_k = (data.draw(arrays(np.float64, (d_model, d_k), elements=finite)) for _ in range(2))
    W_v = data.draw(arrays(np.float64, (d_model, d_v), elements=finite))
    output, weights = ref.self_attention(X, W_q, W_k, W_v)
    np.testing.assert_allclose(output, torch_attention(X @ W_q, X @ W_k, X @ W_v), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(weights, torch_weights(X @ W_q, X @ W_k), rtol=1e-9, atol=1e-12)


# ----------------------------------------------------------------------------- variance

@pytest.mark.parametrize("d_k", [1, 8, 64, 512])
def test_score_variance_is_about_d_k(d_k):
    n = 20_000
    value = ref.score_variance(d_k, n, seed=d_k)
    standard_error = np.sqrt((2 * d_k ** 2 + 6 * d_k) / n)
    assert abs(value - d_k) < 5 * standard_error


def test_score_variance_is_seeded():
    assert ref.score_variance(16, 500, 3) == ref.score_variance(16, 500, 3)
    assert ref.score_variance(16, 500, 3) != ref.score_variance(16, 500, 4)


def test_score_variance_equals_a_plain_loop_over_the_same_draws():
    rng = np.random.default_rng(7)
    q = rng.standard_normal((300, 5))
    k = rng.standard_normal((300, 5))
    dots = [sum(q[i, j] * k[i, j] for j in range(5)) for i in range(300)]
    assert ref.score_variance(5, 300, 7) == pytest.approx(np.var(dots), rel=1e-12)


@pytest.mark.parametrize("args, words", [((0, 10, 0), "d_k must be a positive integer, got 0"),
                                         ((3, 1, 0), "n_samples must be at least 2"),
                                         ((2.5, 10, 0), "d_k must be a positive integer, got 2.5")])
def test_score_variance_rejects_bad_sizes(args, words):
    with pytest.raises(ValueError, match=words):
        ref.score_variance(*args)


# ----------------------------------------------------------------------------- the demo's claims

@pytest.mark.parametrize("sense", list(embeddings.SENTENCES))
def test_mole_moves_towards_the_sense_of_its_sentence(sense):
    tokens, X = embeddings.embed(embeddings.SENTENCES[sense])
    m = tokens.index("mole")
    output, weights = ref.self_attention(X, embeddings.W_Q, embeddings.W_K, embeddings.W_V)
    assert embeddings.closest_sense(X[m, :2] + output[m]) == sense
    content = [j for j, t in enumerate(tokens) if t in embeddings.CONTENT_WORDS]
    assert weights[m, content].sum() > 0.9  # mole attends to the words that carry meaning


def test_embedding_similarity_alone_attends_to_the_word_itself():
    tokens, X = embeddings.embed(embeddings.SENTENCES["skin"])
    m = tokens.index("mole")
    _, weights = ref.scaled_dot_product_attention(X, X, X)
    assert tokens[int(weights[m].argmax())] == "mole"


def test_unknown_words_are_named():
    with pytest.raises(ValueError, match="'vole'"):
        embeddings.embed("the vole dug")
