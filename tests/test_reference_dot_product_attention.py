"""Lesson 02 references against independent oracles: torch's scaled_dot_product_attention
and softmax on property-based batched shapes, the matrix form against the single-query
sum, and the variance experiment against its expected value d_k."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from courseware import embeddings
from grader import reference as ref

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


@pytest.mark.parametrize("args, words", [((0, 10, 0), "d_k must be at least 1"),
                                         ((3, 1, 0), "n_samples must be at least 2"),
                                         ((2.5, 10, 0), "d_k must be an integer")])
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
