"""Lesson 05 references against torch itself, on property-based cases.

``torch.nn.MultiheadAttention(batch_first=True)`` is the oracle for the module: after
``copy_from_torch`` our output and per-head weights equal torch's for self-attention and
cross-attention (T_q != T_k), with and without a key padding mask and with per-head
masks. The tests use torch's module, never numbers copied from it.

Also here: the toy task and the pictures the notebook relies on.
"""
import math

import matplotlib
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from grader import reference as ref
from grader.reference.multi_head_attention import attention_mask

matplotlib.use("Agg")
torch.set_num_threads(1)  # tiny tensors: see grader.exercises.multi_head_attention.one_thread


@st.composite
def setups(draw):
    """(d_model, n_heads, B, T_q, T_k, self-attention?, key lengths or None, seed)."""
    n_heads = draw(st.sampled_from([1, 2, 3, 4]))
    d_model = n_heads * draw(st.integers(1, 4))
    batch = draw(st.integers(1, 3))
    cross = draw(st.booleans())
    t_q = draw(st.integers(1, 5))
    t_k = draw(st.integers(1, 6)) if cross else t_q
    lengths = None
    if draw(st.booleans()):
        lengths = [draw(st.integers(1, t_k)) for _ in range(batch)]
    return d_model, n_heads, batch, t_q, t_k, not cross, lengths, draw(st.integers(0, 10_000))


def torch_twin(d_model, n_heads, seed, dtype=torch.float64):
    """A torch module with random weights and non-zero biases (torch starts biases at 0)."""
    torch.manual_seed(seed)
    theirs = nn.MultiheadAttention(d_model, n_heads, batch_first=True).to(dtype)
    with torch.no_grad():
        for p in theirs.parameters():
            p.normal_(0.0, 1.0 / math.sqrt(d_model) if p.dim() == 2 else 0.3)
    ours = ref.MultiHeadAttention(d_model, n_heads).to(dtype)
    return ref.copy_from_torch(ours, theirs), theirs


def inputs(batch, t_q, t_k, d_model, self_attention, seed, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    query = torch.randn(batch, t_q, d_model, generator=g, dtype=dtype)
    if self_attention:
        return query, query, query
    key = torch.randn(batch, t_k, d_model, generator=g, dtype=dtype)
    return query, key, key.clone()


@settings(max_examples=60, deadline=None)
@given(setup=setups())
def test_module_equals_torch_after_copy(setup):
    d_model, n_heads, batch, t_q, t_k, self_attention, lengths, seed = setup
    ours, theirs = torch_twin(d_model, n_heads, seed)
    query, key, value = inputs(batch, t_q, t_k, d_model, self_attention, seed)
    real = None if lengths is None else torch.arange(t_k)[None, :] < torch.tensor(lengths)[:, None]
    with torch.no_grad():
        out, weights = ours(query, key, value, mask=real)
        t_out, t_weights = theirs(query, key, value, average_attn_weights=False,
                                  key_padding_mask=None if real is None else ~real)
    assert weights.shape == (batch, n_heads, t_q, t_k)
    torch.testing.assert_close(out, t_out, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(weights, t_weights, rtol=1e-10, atol=1e-10)


def test_cross_attention_with_padding_in_float32():
    ours, theirs = torch_twin(12, 3, seed=7, dtype=torch.float32)
    query, key, value = inputs(3, 2, 5, 12, False, seed=7, dtype=torch.float32)
    real = torch.tensor([[True] * 5, [True] * 2 + [False] * 3, [True] * 4 + [False]])
    with torch.no_grad():
        out, weights = ours(query, key, value, mask=real)
        t_out, t_weights = theirs(query, key, value, key_padding_mask=~real, average_attn_weights=False)
    torch.testing.assert_close(out, t_out, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(weights, t_weights, rtol=1e-4, atol=1e-6)
    assert weights[1, :, :, 2:].abs().max() == 0


@settings(max_examples=40, deadline=None)
@given(setup=setups(), per_head=st.booleans())
def test_query_masks_equal_torch_attn_mask(setup, per_head):
    """3-axis [B, T_q, T_k] and 4-axis [B, h, T_q, T_k] masks against torch's attn_mask
    (bool, True = not allowed, shape [B*h, T_q, T_k])."""
    d_model, n_heads, batch, t_q, t_k, self_attention, _, seed = setup
    ours, theirs = torch_twin(d_model, n_heads, seed)
    query, key, value = inputs(batch, t_q, t_k, d_model, self_attention, seed)
    g = torch.Generator().manual_seed(seed + 1)
    shape = (batch, n_heads, t_q, t_k) if per_head else (batch, t_q, t_k)
    mask = torch.rand(shape, generator=g) < 0.6
    mask[..., 0] = True  # every query keeps at least one key
    full = (mask if per_head else mask[:, None].expand(-1, n_heads, -1, -1)).reshape(-1, t_q, t_k)
    with torch.no_grad():
        out, weights = ours(query, key, value, mask=mask)
        t_out, t_weights = theirs(query, key, value, attn_mask=~full, average_attn_weights=False)
    torch.testing.assert_close(out, t_out, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(weights, t_weights, rtol=1e-10, atol=1e-10)


def test_scores_are_scaled_by_sqrt_d_head_like_sdpa():
    """The core of one head against F.scaled_dot_product_attention, a second oracle."""
    mha = ref.MultiHeadAttention(8, 2).double()
    x = torch.randn(2, 4, 8, dtype=torch.float64)
    with torch.no_grad():
        _, weights = mha(x, x, x)
        q = ref.split_heads(mha.w_q(x), 2)
        k = ref.split_heads(mha.w_k(x), 2)
        eye = torch.eye(4, dtype=torch.float64).expand(2, 2, 4, 4)
        # Attending to the identity as values returns the weights themselves.
        sdpa_weights = torch.nn.functional.scaled_dot_product_attention(q, k, eye)
    torch.testing.assert_close(weights, sdpa_weights)


def test_a_query_with_no_allowed_key_gets_zero_weights_not_nan():
    mha = ref.MultiHeadAttention(4, 2)
    x = torch.randn(1, 3, 4)
    mask = torch.ones(1, 3, 3, dtype=torch.bool)
    mask[0, 1] = False
    with torch.no_grad():
        out, weights = mha(x, x, x, mask=mask)
    assert not torch.isnan(out).any()
    assert weights[0, :, 1].abs().max() == 0
    torch.testing.assert_close(out[0, 1], mha.w_o.bias.detach())


# ----------------------------------------------------------------------------- heads

@settings(max_examples=60, deadline=None)
@given(n_heads=st.integers(1, 4), d_head=st.integers(1, 3), batch=st.integers(1, 3),
       tokens=st.integers(1, 4))
def test_split_heads_gives_each_head_its_block_and_merge_undoes_it(n_heads, d_head, batch, tokens):
    x = torch.randn(batch, tokens, n_heads * d_head)
    heads = ref.split_heads(x, n_heads)
    assert heads.shape == (batch, n_heads, tokens, d_head)
    for i in range(n_heads):
        assert torch.equal(heads[:, i], x[..., i * d_head:(i + 1) * d_head])
    assert torch.equal(ref.merge_heads(heads), x)


def test_merge_heads_accepts_a_non_contiguous_input():
    x = torch.randn(2, 5, 3, 4).transpose(1, 2)  # [B=2, h=3, T=5, d_head=4], strided
    assert torch.equal(ref.merge_heads(x), torch.cat([x[:, i] for i in range(3)], dim=-1))


@settings(max_examples=40, deadline=None)
@given(setup=setups())
def test_heads_one_by_one_equals_the_vectorized_forward(setup):
    d_model, n_heads, batch, t_q, _, _, _, seed = setup
    ours, _ = torch_twin(d_model, n_heads, seed)
    x, _, _ = inputs(batch, t_q, t_q, d_model, True, seed)
    with torch.no_grad():
        loop_out, loop_weights = ref.heads_one_by_one(x, ours)
        out, weights = ours(x, x, x)
    torch.testing.assert_close(loop_out, out)
    torch.testing.assert_close(loop_weights, weights)


@pytest.mark.parametrize("d_model, n_heads", [(1, 1), (8, 1), (8, 2), (8, 8), (12, 3), (64, 16)])
def test_parameter_count_equals_torch_and_our_module(d_model, n_heads):
    theirs = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
    ours = ref.MultiHeadAttention(d_model, n_heads)
    expected = ref.mha_parameter_count(d_model, n_heads)
    assert expected == sum(p.numel() for p in theirs.parameters())
    assert expected == sum(p.numel() for p in ours.parameters())


@settings(max_examples=40, deadline=None)
@given(setup=setups())
def test_value_down_up_rebuilds_the_output_head_by_head(setup):
    """Seed 002: output = sum over heads of A_i (X down_i + b_v,i) up_i, plus w_o's bias."""
    d_model, n_heads, batch, t_q, t_k, self_attention, lengths, seed = setup
    ours, _ = torch_twin(d_model, n_heads, seed)
    query, key, value = inputs(batch, t_q, t_k, d_model, self_attention, seed)
    d_head = d_model // n_heads
    with torch.no_grad():
        out, weights = ours(query, key, value)
        rebuilt = ours.w_o.bias.clone()
        ups = []
        for i in range(n_heads):
            down, up = ref.value_down_up(ours, i)
            assert down.shape == (d_model, d_head) and up.shape == (d_head, d_model)
            assert torch.linalg.matrix_rank(down @ up) <= d_head
            rows = slice(i * d_head, (i + 1) * d_head)
            rebuilt = rebuilt + weights[:, i] @ (value @ down + ours.w_v.bias[rows]) @ up
            ups.append(up)
    torch.testing.assert_close(rebuilt, out)
    assert torch.equal(torch.cat(ups, dim=0), ours.w_o.weight.T)


def test_copy_from_torch_zeroes_our_biases_when_torch_has_none():
    theirs = nn.MultiheadAttention(4, 2, bias=False, batch_first=True)
    ours = ref.copy_from_torch(ref.MultiHeadAttention(4, 2), theirs)
    x = torch.randn(2, 3, 4)
    with torch.no_grad():
        torch.testing.assert_close(ours(x, x, x)[0], theirs(x, x, x)[0])
    assert all(getattr(ours, n).bias.abs().max() == 0 for n in ("w_q", "w_k", "w_v", "w_o"))


# ----------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("call, words", [
    (lambda: ref.split_heads(torch.ones(3, 4), 2), ["x", "3×4"]),
    (lambda: ref.split_heads(torch.ones(1, 2, 6), 4), ["n_heads = 4", "d_model = 6"]),
    (lambda: ref.merge_heads(torch.ones(2, 3, 4)), ["x", "2×3×4"]),
    (lambda: ref.MultiHeadAttention(6, 4), ["n_heads = 4", "d_model = 6"]),
    (lambda: ref.MultiHeadAttention(4, 2)(torch.ones(1, 2, 5), torch.ones(1, 2, 4), torch.ones(1, 2, 4)),
     ["query", "5 features"]),
    (lambda: ref.MultiHeadAttention(4, 2)(torch.ones(1, 2, 4), torch.ones(1, 3, 4), torch.ones(1, 2, 4)),
     ["key", "value", "1×3×4", "1×2×4"]),
    (lambda: ref.MultiHeadAttention(4, 2)(torch.ones(1, 2, 4), torch.ones(1, 2, 4), torch.ones(1, 2, 4),
                                          mask=torch.ones(1, 3, dtype=torch.bool)), ["mask", "1×3", "T_k = 2"]),
    (lambda: ref.MultiHeadAttention(4, 2)(torch.ones(1, 2, 4), torch.ones(1, 2, 4), torch.ones(1, 2, 4),
                                          mask=torch.ones(1, 2)), ["mask", "bool"]),
    (lambda: ref.copy_from_torch(ref.MultiHeadAttention(4, 2), nn.MultiheadAttention(4, 2)),
     ["batch_first"]),
    (lambda: ref.copy_from_torch(ref.MultiHeadAttention(4, 2), nn.MultiheadAttention(4, 4, batch_first=True)),
     ["num_heads = 4", "n_heads = 2"]),
    (lambda: ref.heads_one_by_one(torch.ones(1, 2, 6), ref.MultiHeadAttention(4, 2)), ["x", "6 features"]),
    (lambda: ref.mha_parameter_count(8.0, 2), ["d_model", "8.0"]),
    (lambda: ref.value_down_up(ref.MultiHeadAttention(4, 2), 2), ["head", "0 to 1", "2"]),
])
def test_bad_input_raises_a_value_error_that_names_it(call, words):
    with pytest.raises(ValueError) as info:
        call()
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_attention_mask_accepts_broadcastable_shapes():
    assert attention_mask(torch.ones(1, 5, dtype=torch.bool), 3, 2, 4, 5).shape == (1, 1, 1, 5)
    assert attention_mask(torch.ones(1, 4, 5, dtype=torch.bool), 3, 2, 4, 5).shape == (1, 1, 4, 5)
    assert attention_mask(torch.ones(3, 1, 1, 5, dtype=torch.bool), 3, 2, 4, 5).shape == (3, 1, 1, 5)
    with pytest.raises(ValueError):
        attention_mask(torch.ones(3, 4, 1, dtype=torch.bool), 3, 2, 4, 5)  # T_k may not broadcast


# ----------------------------------------------------------------------------- the toy task

def test_backwards_plus_max_targets():
    from courseware.toy_tasks import BackwardsPlusMax

    task = BackwardsPlusMax()
    src = torch.tensor([[5, 3, 4, 0, 7, 1]])
    assert task.target(src).tolist() == [[8, 14, 7, 11, 10, 12]]
    assert [task.mirror(i) for i in range(6)] == [5, 4, 3, 2, 1, 0]
    src, tgt = task.batch(50, torch.Generator().manual_seed(0))
    assert src.min() >= 0 and src.max() < task.vocab and tgt.max() < task.n_outputs


def test_training_budget_is_reduced_while_grading(monkeypatch):
    from courseware.toy_tasks import training_budget

    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    assert training_budget(400, 150) == 400
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert training_budget(400, 150) == 150


def test_training_is_seeded_and_restores_the_thread_count():
    from courseware.toy_tasks import BackwardsPlusMax, build_model, train

    task = BackwardsPlusMax()
    runs = [train(build_model(ref.MultiHeadAttention, task, seed=3), task, steps=5, seed=3)[0]
            for _ in range(2)]
    assert runs[0] == runs[1]
    threads = torch.get_num_threads()
    train(build_model(ref.MultiHeadAttention, task, seed=3), task, steps=1, seed=3)
    assert torch.get_num_threads() == threads


@pytest.mark.slow
def test_the_notebook_model_learns_the_roles_the_lesson_describes():
    """The graded budget (150 steps) with the notebook's seed: the task is learned, one
    encoder head finds the largest token, and the cross-attention reads the mirror."""
    from courseware.toy_tasks import BackwardsPlusMax, build_model, evaluate, head_roles, train

    task = BackwardsPlusMax()
    model = build_model(ref.MultiHeadAttention, task, seed=2)
    losses, _ = train(model, task, steps=150, seed=2)
    accuracy, src, maps = evaluate(model, task)
    roles = head_roles(task, src, maps)
    assert losses[-1] < losses[0] / 20 and accuracy > 0.95
    assert max(roles["on the largest token"]) > 0.8
    assert min(roles["on the mirror position"]) > 0.8


def test_head_roles_measures_what_it_says():
    from courseware.toy_tasks import LAYER_NAMES, BackwardsPlusMax, head_roles

    task = BackwardsPlusMax()
    src = torch.tensor([[1, 6, 2, 0, 3, 4]])
    on_max = torch.zeros(1, 2, 6, 6)
    on_max[:, 0, :, 1] = 1.0                # head 0: everyone looks at the 6
    on_max[:, 1] = 1.0 / 6                  # head 1: even spreading
    mirror = torch.zeros(1, 2, 6, 6)
    mirror[:, 0, torch.arange(6), 5 - torch.arange(6)] = 1.0
    mirror[:, 1, :, 0] = 1.0
    roles = head_roles(task, src, {LAYER_NAMES[0]: on_max, LAYER_NAMES[1]: mirror})
    assert roles["on the largest token"] == pytest.approx([1.0, 1 / 6])
    assert roles["on the mirror position"] == pytest.approx([1.0, 1 / 6])


# ----------------------------------------------------------------------------- pictures

def test_every_head_picture_draws(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    from courseware import head_plots, widgets

    maps = {"self": torch.softmax(torch.randn(3, 2, 4, 4), -1),
            "cross": torch.softmax(torch.randn(3, 2, 3, 4), -1)}
    labels = {"self": (list("abcd"), list("abcd")), "cross": (list("xyz"), list("abcd"))}
    figures = [
        head_plots.split_picture(torch.arange(12.0).reshape(3, 4), 2),
        head_plots.head_heatmaps({k: v[0] for k, v in maps.items()}, labels, title="t"),
        head_plots.lines_per_head({k: v[0] for k, v in maps.items()}, labels),
        head_plots.attention_lines(maps["cross"][0, 1], *labels["cross"], title="t", head=1),
        head_plots.value_spectra({"head 0": torch.tensor([2.0, 1.0, 1e-8]), "all heads":
                                  torch.tensor([2.0, 1.0, 0.5])}, d_head=2),
        head_plots.loss_curve([3.0, 1.0, 0.1]),
    ]
    for i, fig in enumerate(figures):
        fig.savefig(tmp_path / f"{i}.png")
        plt.close(fig)
    shown = []
    monkeypatch.setenv("COURSE_STATIC_FIGURES", "1")
    monkeypatch.setattr(widgets.plt, "show", lambda: shown.append(plt.gcf().axes[0].get_title()))
    static = [{"layer": "self", "head": 1, "example": 2}, {"layer": "cross", "head": 0, "example": 0}]
    assert head_plots.head_picker(maps, lambda layer, e: labels[layer], static=static) is None
    assert shown == ["self, head 1", "cross, head 0"]
