"""Lesson 04 references against independent oracles: torch's scaled_dot_product_attention
(boolean attn_mask and is_causal), torch's nn.MultiheadAttention (key_padding_mask), and
attention over the real tokens alone, on property-based masks and lengths."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from grader import reference as ref

finite = st.floats(-10, 10, allow_nan=False, width=64)
small = st.integers(1, 5)


def sdpa(Q, K, V, **kwargs) -> np.ndarray:
    t = [torch.from_numpy(np.ascontiguousarray(a)) for a in (Q, K, V)]
    if "attn_mask" in kwargs:
        kwargs["attn_mask"] = torch.from_numpy(np.ascontiguousarray(kwargs["attn_mask"]))
    return F.scaled_dot_product_attention(*t, **kwargs).numpy()


@st.composite
def qkv_and_mask(draw):
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    tq, tk, dk, dv = draw(small), draw(small), draw(small), draw(small)
    Q = draw(arrays(np.float64, batch + (tq, dk), elements=finite))
    K = draw(arrays(np.float64, batch + (tk, dk), elements=finite))
    V = draw(arrays(np.float64, batch + (tk, dv), elements=finite))
    # The mask may drop leading axes or have size-1 axes: it broadcasts.
    mask_batch = tuple(draw(st.sampled_from([b, 1])) for b in batch)[draw(st.integers(0, len(batch))):]
    mask = draw(arrays(bool, mask_batch + (tq, tk)))
    return Q, K, V, mask


@settings(max_examples=150, deadline=None)
@given(data=qkv_and_mask())
def test_masked_attention_equals_torch_sdpa_where_a_row_has_an_allowed_key(data):
    Q, K, V, mask = data
    out, weights = ref.masked_attention(Q, K, V, mask)
    theirs = sdpa(Q, K, V, attn_mask=mask)
    full = np.broadcast_to(mask, weights.shape)
    some = full.any(axis=-1)                       # rows with at least one allowed key
    np.testing.assert_allclose(out[some], theirs[some], rtol=1e-9, atol=1e-9)
    # Rows with no allowed key: zero weights and zero output, never NaN.
    assert np.all(weights[~some] == 0) and np.all(out[~some] == 0)
    assert not np.isnan(out).any() and not np.isnan(weights).any()
    assert np.all(weights[~full] == 0)
    np.testing.assert_allclose(weights[some].sum(axis=-1), 1.0, rtol=1e-12)


@settings(max_examples=60, deadline=None)
@given(data=qkv_and_mask())
def test_masked_softmax_equals_torch_softmax_of_minus_inf_filled_scores(data):
    scores, _, _, mask = data
    scores = scores @ np.swapaxes(scores, -1, -2)  # any real scores, [..., T, T]
    mask = mask[..., : scores.shape[-1]]
    if mask.shape[-1] != scores.shape[-1] or mask.shape[-2] != scores.shape[-2]:
        mask = np.ones(scores.shape[-2:], dtype=bool)
    mine = ref.masked_softmax(scores, mask)
    full = np.broadcast_to(mask, scores.shape)
    theirs = torch.softmax(torch.from_numpy(scores).masked_fill(torch.from_numpy(~full), -torch.inf),
                           dim=-1).numpy()
    some = full.any(axis=-1)
    np.testing.assert_allclose(mine[some], theirs[some], rtol=1e-9, atol=1e-12)
    assert np.isnan(theirs[~some]).all() and np.all(mine[~some] == 0)  # torch: NaN; ours: 0


def test_masked_softmax_is_stable_for_huge_scores():
    scores = np.array([[1000.0, 999.0, -1000.0], [0.0, 1.0, 900.0]])
    mask = np.array([[True, True, False], [True, True, False]])
    w = ref.masked_softmax(scores, mask)
    np.testing.assert_allclose(w, [[1 / (1 + np.e ** -1), 1 / (1 + np.e), 0],
                                   [1 / (1 + np.e), 1 / (1 + np.e ** -1), 0]], rtol=1e-12)


def test_float32_stays_float32():
    s = np.ones((2, 3), np.float32)
    assert ref.masked_softmax(s, np.ones(3, bool)).dtype == np.float32
    out, w = ref.masked_attention(s, s, s, np.array([[True, False], [True, True]]))
    assert out.dtype == np.float32 and w.dtype == np.float32
    assert ref.prefix_average(s).dtype == np.float32


@pytest.mark.parametrize("T", [1, 2, 3, 5, 8])
def test_causal_mask_is_what_sdpa_means_by_is_causal(T):
    rng = np.random.default_rng(T)
    Q, K, V = rng.normal(size=(3, 2, T, 4))
    mine, _ = ref.masked_attention(Q, K, V, ref.causal_mask(T))
    np.testing.assert_allclose(mine, sdpa(Q, K, V, is_causal=True), rtol=1e-9, atol=1e-12)
    assert ref.causal_mask(T).dtype == bool
    assert np.array_equal(ref.causal_mask(T), torch.ones(T, T, dtype=torch.bool).tril().numpy())


@settings(max_examples=50, deadline=None)
@given(T=small, data=st.data())
def test_padding_mask_equals_attention_over_the_real_tokens_alone(T, data):
    lengths = data.draw(st.lists(st.integers(1, T), min_size=1, max_size=4))
    rng = np.random.default_rng(T)
    X = rng.normal(size=(len(lengths), T, 3))
    mask = ref.padding_mask(lengths, T)
    assert mask.shape == (len(lengths), T) and mask.dtype == bool
    out, _ = ref.masked_attention(X, X, X, mask[:, None, :])
    for b, n in enumerate(lengths):
        real = X[b:b + 1, :n]
        np.testing.assert_allclose(out[b], sdpa(X[b:b + 1], real, real)[0], rtol=1e-9, atol=1e-12)


@settings(max_examples=50, deadline=None)
@given(T=small, data=st.data())
def test_attention_mask_equals_causal_attention_over_the_real_tokens(T, data):
    """A real query sees the real tokens up to itself; a padding query sees every real token."""
    lengths = data.draw(st.lists(st.integers(1, T), min_size=1, max_size=4))
    rng = np.random.default_rng(T + 10)
    X = rng.normal(size=(len(lengths), T, 2))
    out, _ = ref.masked_attention(X, X, X, ref.attention_mask(lengths, T))
    plain, _ = ref.masked_attention(X, X, X, ref.attention_mask(lengths, T, causal=False))
    for b, n in enumerate(lengths):
        real = X[b:b + 1, :n]
        np.testing.assert_allclose(out[b, :n], sdpa(real, real, real, is_causal=True)[0], rtol=1e-9)
        np.testing.assert_allclose(out[b, n:], sdpa(X[b:b + 1, n:], real, real)[0], rtol=1e-9)
        np.testing.assert_allclose(plain[b], sdpa(X[b:b + 1], real, real)[0], rtol=1e-9)


def test_attention_mask_shape_and_an_empty_sentence():
    mask = ref.attention_mask([3, 0], 3, causal=False)
    assert mask.shape == (2, 3, 3) and not mask[1].any() and mask[0].all()
    assert mask.flags.writeable


@pytest.mark.parametrize("T", [1, 2, 4, 7])
def test_column_convention_is_the_transpose_and_gives_transposed_weights(T):
    assert np.array_equal(ref.causal_mask_columns(T), ref.causal_mask(T).T)
    rng = np.random.default_rng(T)
    Xc = rng.normal(size=(3, T))                    # tokens as columns
    S = Xc.T @ Xc / np.sqrt(3)                       # Kᵀ Q: [key i, query j]
    # Softmax down each column, with the column mask, through torch.
    filled = torch.from_numpy(S).masked_fill(torch.from_numpy(~ref.causal_mask_columns(T)), -torch.inf)
    A_cols = torch.softmax(filled, dim=0).numpy()
    _, A_rows = ref.masked_attention(Xc.T, Xc.T, Xc.T, ref.causal_mask(T))
    np.testing.assert_allclose(A_cols, A_rows.T, rtol=1e-9, atol=1e-12)


def _mha(seed: int, d_model: int, heads: int):
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return torch.nn.MultiheadAttention(d_model, heads, batch_first=True).eval()


@settings(max_examples=40, deadline=None)
@given(T=st.integers(1, 6), data=st.data(), heads=st.sampled_from([1, 2, 3]))
def test_to_mha_key_padding_mask_makes_torch_ignore_the_padding(T, data, heads):
    lengths = data.draw(st.lists(st.integers(1, T), min_size=1, max_size=4))
    mha = _mha(T, 6, heads)
    x = torch.from_numpy(np.random.default_rng(T).normal(size=(len(lengths), T, 6)).astype(np.float32))
    mask = ref.to_mha_key_padding_mask(lengths, T)
    assert isinstance(mask, torch.Tensor) and mask.dtype == torch.bool
    with torch.no_grad():
        out, w = mha(x, x, x, key_padding_mask=mask)
        for b, n in enumerate(lengths):
            alone, w_alone = mha(x[b:b + 1], x[b:b + 1, :n], x[b:b + 1, :n])
            np.testing.assert_allclose(out[b].numpy(), alone[0].numpy(), rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(w[b, :, :n].numpy(), w_alone[0].numpy(), rtol=1e-5, atol=1e-6)
            assert np.all(w[b, :, n:].numpy() == 0)


def test_the_course_polarity_is_the_wrong_one_for_mha():
    """The oracle can tell the polarities apart: the course's mask does not work in MHA."""
    mha = _mha(0, 4, 2)
    x = torch.from_numpy(np.random.default_rng(0).normal(size=(1, 3, 4)).astype(np.float32))
    with torch.no_grad():
        _, w = mha(x, x, x, key_padding_mask=torch.from_numpy(ref.padding_mask([2], 3)))
    assert np.allclose(w[0, :, 2].numpy(), 1.0)  # all weight on the padding


@settings(max_examples=80, deadline=None)
@given(X=st.integers(1, 6).flatmap(
    lambda T: arrays(np.float64, st.tuples(st.integers(1, 2), st.just(T), st.integers(1, 4)),
                     elements=finite)))
def test_prefix_average_equals_cumsum_over_counts_and_a_lesson_01_mixture(X):
    T = X.shape[-2]
    expected = np.cumsum(X, axis=-2) / np.arange(1, T + 1)[:, None]
    np.testing.assert_allclose(ref.prefix_average(X), expected, rtol=1e-9, atol=1e-9)
    W = ref.masked_softmax(np.zeros((T, T)), ref.causal_mask(T))   # equal scores, causal
    np.testing.assert_allclose(ref.weighted_average_rows(W, X), expected, rtol=1e-9, atol=1e-9)


def _sdpa_layer(is_causal: bool):
    def attend(X):
        x = torch.from_numpy(X)[None]
        return F.scaled_dot_product_attention(x, x, x, is_causal=is_causal)[0].numpy()
    return attend


@settings(max_examples=40, deadline=None)
@given(T=st.integers(1, 7), d=st.integers(1, 4), seed=st.integers(0, 10_000))
def test_is_causal_agrees_with_torch_is_causal(T, d, seed):
    assert ref.is_causal(_sdpa_layer(True), T, d, seed) is True
    assert ref.is_causal(_sdpa_layer(False), T, d, seed) is (T == 1)
    assert ref.is_causal(ref.prefix_average, T, d, seed) is True


def test_is_causal_catches_a_leak_from_one_middle_token_only():
    def leaky(X):
        mask = ref.causal_mask(len(X))
        mask[0, 2] = True
        return ref.masked_attention(X, X, X, mask)[0]

    assert ref.is_causal(leaky, 5, 2, 0) is False
    assert ref.is_causal(leaky, 4, 1, 7) is False


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: ref.causal_mask(0), "T must be a positive integer, got 0"),
        (lambda: ref.causal_mask(True), "T must be a positive integer"),
        (lambda: ref.padding_mask([4, 1], 3), r"between 0 and T = 3, got \[4, 1\]"),
        (lambda: ref.padding_mask([[1, 2]], 3), "lengths must be a 1-D list.*shape 1×2"),
        (lambda: ref.padding_mask([1.5], 3), "whole numbers"),
        (lambda: ref.attention_mask([1], 2, causal="yes"), "causal must be True or False"),
        (lambda: ref.masked_softmax(np.zeros((2, 3)), np.ones((2, 3))), "mask must be a boolean array.*float64"),
        (lambda: ref.masked_softmax(np.zeros((2, 3)), np.ones((3, 3), bool)),
         "mask of shape 3×3 does not broadcast to shape 2×3"),
        (lambda: ref.masked_softmax(np.zeros(3), np.ones((2, 3), bool)), "does not broadcast"),
        (lambda: ref.masked_attention(np.ones((2, 3)), np.ones((4, 2)), np.ones((4, 1))),
         "Q of shape 2×3 and K of shape 4×2"),
        (lambda: ref.masked_attention(np.ones((2, 3)), np.ones((4, 3)), np.ones((3, 1))),
         "K of shape 4×3 and V of shape 3×1"),
        (lambda: ref.prefix_average(np.ones(3)), "X must have at least 2 axes, got shape 3"),
        (lambda: ref.is_causal(np.eye(3), 3, 2), "attend must be a function"),
        (lambda: ref.is_causal(lambda X: X.sum(), 3, 2), "one output per token"),
        (lambda: ref.to_mha_key_padding_mask([2, 5], 4), "between 0 and T = 4"),
    ],
)
def test_bad_input_names_the_argument_and_what_it_got(call, message):
    with pytest.raises(ValueError, match=message):
        call()
