"""Lesson 06 references against independent oracles: PyTorch's own pre-norm
``nn.TransformerEncoderLayer`` / ``nn.TransformerEncoder``, attention written out by hand,
``F.cosine_similarity`` over explicit pairs; and the properties of the experiment."""
import itertools
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from courseware import ablation as cw
from grader import reference as ref
from grader.reference.residual_ablation import SkipVariantBlock, with_skip


@pytest.fixture(autouse=True)
def _one_thread():
    with cw.small_model_threads():
        yield


def randomised(module, seed=0):
    g = torch.Generator().manual_seed(seed)
    module.double()
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(0.5 * torch.randn(p.shape, generator=g, dtype=torch.float64) + 0.1)
    return module.eval()


def encoder_layer_like(block: ref.Block) -> nn.TransformerEncoderLayer:
    """torch's pre-norm encoder layer holding the block's weights."""
    d = block.d_model
    layer = nn.TransformerEncoderLayer(
        d, block.attn.num_heads, dim_feedforward=block.mlp[0].out_features, dropout=0.0,
        activation="gelu", batch_first=True, norm_first=True, dtype=torch.float64,
    )
    with torch.no_grad():
        layer.self_attn.load_state_dict(block.attn.state_dict())
        layer.norm1.load_state_dict(block.ln1.state_dict())
        layer.norm2.load_state_dict(block.ln2.state_dict())
        layer.linear1.load_state_dict(block.mlp[0].state_dict())
        layer.linear2.load_state_dict(block.mlp[2].state_dict())
    return layer.eval()


def attention_by_hand(block: ref.Block, h: torch.Tensor) -> torch.Tensor:
    """softmax(Q Kᵀ / sqrt(d_head)) V per head, concatenated, then the output projection."""
    d, n_heads = block.d_model, block.attn.num_heads
    W, b = block.attn.in_proj_weight, block.attn.in_proj_bias
    q, k, v = (F.linear(h, W[i * d:(i + 1) * d], b[i * d:(i + 1) * d]) for i in range(3))
    B, T, _ = h.shape
    split = lambda t: t.reshape(B, T, n_heads, d // n_heads).transpose(1, 2)  # noqa: E731
    q, k, v = split(q), split(k), split(v)
    weights = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d // n_heads), dim=-1)
    out = (weights @ v).transpose(1, 2).reshape(B, T, d)
    return block.attn.out_proj(out)


sizes = st.sampled_from([(4, 1, 4), (4, 2, 8), (6, 3, 5), (8, 4, 16), (8, 2, 3)])


@settings(max_examples=25, deadline=None)
@given(size=sizes, batch=st.integers(1, 3), tokens=st.integers(1, 5), seed=st.integers(0, 10**6))
def test_block_with_residual_equals_torch_pre_norm_encoder_layer(size, batch, tokens, seed):
    block = randomised(ref.Block(*size, residual=True), seed)
    x = torch.randn(batch, tokens, size[0], dtype=torch.float64,
                    generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        expected = encoder_layer_like(block)(x)
        torch.testing.assert_close(block(x), expected, rtol=1e-10, atol=1e-10)


@settings(max_examples=25, deadline=None)
@given(size=sizes, batch=st.integers(1, 3), tokens=st.integers(1, 5), seed=st.integers(0, 10**6))
def test_block_without_residual_is_the_two_sublayers_composed(size, batch, tokens, seed):
    block = randomised(ref.Block(*size, residual=False), seed)
    x = torch.randn(batch, tokens, size[0], dtype=torch.float64,
                    generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        a = attention_by_hand(block, F.layer_norm(x, (size[0],), block.ln1.weight, block.ln1.bias))
        h = F.layer_norm(a, (size[0],), block.ln2.weight, block.ln2.bias)
        expected = block.mlp[2](F.gelu(block.mlp[0](h)))
        torch.testing.assert_close(block(x), expected, rtol=1e-10, atol=1e-10)


def test_both_flags_share_one_parameter_layout():
    a, b = ref.Block(8, 2, 16, residual=True), ref.Block(8, 2, 16, residual=False)
    assert [(k, v.shape) for k, v in a.state_dict().items()] == \
           [(k, v.shape) for k, v in b.state_dict().items()]


@pytest.mark.parametrize("residual", [True, False])
def test_tiny_transformer_equals_torch_encoder_with_final_norm(residual):
    model = randomised(ref.TinyTransformer(7, 8, 2, 16, 3, 6, residual=residual), seed=3)
    tokens = torch.randint(0, 7, (2, 5), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        x = model.tok_emb(tokens) + model.pos_emb(torch.arange(5))
        if residual:
            layers = [encoder_layer_like(b) for b in model.blocks]
            for layer in layers:
                x = layer(x)
        else:
            for b in model.blocks:
                a = attention_by_hand(b, b.ln1(x))
                x = b.mlp(b.ln2(a))
        expected = model.head(model.ln_f(x))
        torch.testing.assert_close(model(tokens), expected, rtol=1e-10, atol=1e-10)


def test_tiny_transformer_passes_the_flag_to_every_block():
    for residual in (True, False):
        model = ref.TinyTransformer(5, 4, 2, 8, 3, 4, residual=residual)
        assert [b.residual for b in model.blocks] == [residual] * 3
        assert len({id(b) for b in model.blocks}) == 3


def pairwise_mean(h: torch.Tensor) -> float:
    """The oracle: F.cosine_similarity on every ordered pair of distinct tokens."""
    h = h.reshape(-1, *h.shape[-2:])
    per_sequence = []
    for seq in h:
        values = [F.cosine_similarity(seq[i], seq[j], dim=0).item()
                  for i, j in itertools.permutations(range(seq.shape[0]), 2)]
        per_sequence.append(np.mean(values))
    return float(np.mean(per_sequence))


shapes = st.lists(st.integers(1, 3), max_size=2).flatmap(
    lambda batch: st.tuples(st.just(tuple(batch)), st.integers(2, 6), st.integers(1, 5)))


@settings(max_examples=60, deadline=None)
@given(shape=shapes, seed=st.integers(0, 10**6), scale=st.sampled_from([1e-3, 1.0, 1e3]))
def test_token_similarity_equals_pairwise_cosine(shape, seed, scale):
    batch, T, d = shape
    h = scale * torch.randn(*batch, T, d, dtype=torch.float64,
                            generator=torch.Generator().manual_seed(seed))
    assert ref.token_similarity(h) == pytest.approx(pairwise_mean(h), rel=1e-9, abs=1e-12)


def test_token_similarity_landmarks():
    assert ref.token_similarity(torch.eye(4, dtype=torch.float64)) == pytest.approx(0.0)
    assert ref.token_similarity(torch.ones(5, 3)) == pytest.approx(1.0)
    assert ref.token_similarity(torch.tensor([[1.0, 2.0], [-2.0, -4.0]])) == pytest.approx(-1.0)
    h = torch.randn(2, 4, 3, generator=torch.Generator().manual_seed(0))
    scaled = h * torch.tensor([1.0, 3.0, 0.5, 7.0])[:, None]   # lengths do not matter
    assert ref.token_similarity(scaled) == pytest.approx(ref.token_similarity(h), rel=1e-6)
    assert ref.token_similarity(h[:, [2, 0, 3, 1]]) == pytest.approx(ref.token_similarity(h))
    assert isinstance(ref.token_similarity(h), float)


@pytest.mark.parametrize("bad", [torch.ones(3), torch.ones(1, 4), torch.ones(2, 1, 4), "h"])
def test_token_similarity_rejects_bad_input(bad):
    with pytest.raises(ValueError, match="h "):
        ref.token_similarity(bad)


def test_task_targets_and_determinism():
    task = cw.AddFirstTask(vocab_size=8, seq_len=5, batch_size=4)
    tokens, targets = task.sample(torch.Generator().manual_seed(3))
    assert tokens.shape == targets.shape == (4, 5) and tokens.dtype == torch.long
    for seq, target in zip(tokens.tolist(), targets.tolist()):
        assert target == [(t + seq[0]) % 8 for t in seq]
    again, _ = task.sample(torch.Generator().manual_seed(3))
    other, _ = task.sample(torch.Generator().manual_seed(4))
    assert torch.equal(tokens, again) and not torch.equal(tokens, other)
    assert cw.TASK.chance_loss == pytest.approx(math.log(8))
    with pytest.raises(ValueError, match="generator"):
        task.sample(3)


def small_model(residual=True, n_layers=1, seed=0):
    torch.manual_seed(seed)
    return ref.TinyTransformer(**cw.MODEL, n_layers=n_layers, residual=residual)


def test_train_first_loss_is_the_untrained_models_loss_on_the_first_batch():
    model = small_model(seed=1)
    tokens, targets = cw.TASK.sample(torch.Generator().manual_seed(5))
    with torch.no_grad():
        logits = model(tokens)
        first = F.cross_entropy(logits.reshape(-1, 8), targets.reshape(-1)).item()
    before = [p.detach().clone() for p in model.parameters()]
    with cw.quiet():
        losses = ref.train(model, cw.TASK, 3, 5)
    assert losses[0] == pytest.approx(first, rel=1e-6)
    assert len(losses) == 3 and all(isinstance(v, float) for v in losses)
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))


def test_train_is_seeded_and_learns_the_task():
    with cw.quiet():
        a = ref.train(small_model(seed=0), cw.TASK, 150, 0)
        b = ref.train(small_model(seed=0), cw.TASK, 150, 0)
        c = ref.train(small_model(seed=0), cw.TASK, 5, 1)
    assert a == b and a[:5] != c
    assert np.mean(a[-10:]) < 0.5 * cw.TASK.chance_loss


@pytest.mark.parametrize("steps, seed", [(0, 0), (-1, 0), (2.5, 0), (True, 0), (3, -1), (3, 1.5)])
def test_train_rejects_bad_steps_and_seeds(steps, seed):
    with pytest.raises(ValueError, match="steps|seed"):
        ref.train(small_model(), cw.TASK, steps, seed)


@pytest.fixture(scope="module")
def sweep():
    with cw.quiet(), cw.small_model_threads():
        return {seed: ref.run_ablation([1, 4], 30, seed) for seed in (0, 3)}


def test_run_ablation_rows(sweep):
    rows = sweep[0]
    runs = [(r["depth"], r["residual"]) for r in rows]
    assert runs == [(1, True), (1, False), (4, True), (4, False)]
    for r in rows:
        assert len(r["losses"]) == 30
        assert r["final_loss"] == pytest.approx(np.mean(r["losses"][-10:]))
        assert len(r["similarity_init"]) == len(r["similarity_trained"]) == r["depth"] + 1
    # Same initial weights for both runs of a depth: same embeddings, same first loss.
    for a, b in zip(rows[::2], rows[1::2]):
        assert a["similarity_init"][0] == b["similarity_init"][0]


def test_run_ablation_shows_the_effect_for_every_seed(sweep):
    for rows in sweep.values():
        with_skips, without = rows[2], rows[3]
        assert without["final_loss"] > with_skips["final_loss"] + 0.1
        assert without["similarity_init"][-1] > 0.99 > 0.5 > with_skips["similarity_init"][-1]


def test_run_ablation_is_reproducible(sweep):
    with cw.quiet():
        again = ref.run_ablation([1], 30, 0)
    assert again == sweep[0][:2]


@pytest.mark.parametrize("depths, steps, seed", [([], 5, 0), ([0], 5, 0), ([2], 0, 0),
                                                 ([2], 5, -2), (3, 5, 0)])
def test_run_ablation_rejects_bad_input(depths, steps, seed):
    with pytest.raises(ValueError):
        ref.run_ablation(depths, steps, seed)


def test_layer_outputs_are_the_stream_between_blocks():
    model = randomised(ref.TinyTransformer(6, 8, 2, 8, 3, 4), seed=2)
    tokens = torch.randint(0, 6, (2, 4), generator=torch.Generator().manual_seed(0))
    states = cw.layer_outputs(model, tokens)
    assert len(states) == 4
    with torch.no_grad():
        x = model.tok_emb(tokens) + model.pos_emb(torch.arange(4))
        torch.testing.assert_close(states[0], x)
        for block, state in zip(model.blocks, states[1:]):
            x = block(x)
            torch.testing.assert_close(state, x)
    assert not any(b._forward_hooks or b._forward_pre_hooks for b in model.blocks)


def test_gradient_profile_matches_autograd():
    model = randomised(ref.TinyTransformer(6, 8, 2, 8, 2, 4, residual=False), seed=4)
    tokens, targets = cw.AddFirstTask(6, 4, 3).sample(torch.Generator().manual_seed(0))
    prof = cw.gradient_profile(model, tokens, targets)
    logits = model(tokens)
    loss = F.cross_entropy(logits.reshape(-1, 6), targets.reshape(-1))
    grads = torch.autograd.grad(loss, list(model.blocks[0].parameters()))
    assert prof["block"][0] == pytest.approx(math.sqrt(sum(float(g.pow(2).sum()) for g in grads)))
    assert prof["loss"] == pytest.approx(loss.item())
    assert len(prof["stream"]) == len(prof["differing"]) == 3
    assert all(d <= s + 1e-12 for d, s in zip(prof["differing"], prof["stream"]))
    assert all(p.grad is None for p in model.parameters())


def test_without_skips_the_deep_stream_gradient_stops_telling_tokens_apart():
    tokens, targets = cw.TASK.sample(torch.Generator().manual_seed(0))
    with_skips = cw.gradient_profile(small_model(True, 8), tokens, targets)
    without = cw.gradient_profile(small_model(False, 8), tokens, targets)
    assert min(without["differing"][2:-1]) < 1e-4 * min(with_skips["differing"])


def test_skip_variants():
    torch.manual_seed(0)
    block = randomised(ref.Block(8, 2, 16), seed=5)
    x = torch.randn(2, 3, 8, dtype=torch.float64)
    variants = {}
    for skip in cw.SKIPS:
        variant = SkipVariantBlock(8, 2, 16, skip).double()
        variant.load_state_dict(block.state_dict())
        variants[skip] = variant.eval()
    with torch.no_grad():
        torch.testing.assert_close(variants["stream"](x), block(x))
        h = block.ln1(x)
        a = attention_by_hand(block, h)
        d = 8
        v = h @ block.attn.in_proj_weight[2 * d:].T + block.attn.in_proj_bias[2 * d:]
        for skip, y in (("value", v + a), ("none", a)):
            torch.testing.assert_close(variants[skip](x), y + block.mlp(block.ln2(y)))
    with pytest.raises(ValueError, match="skip"):
        SkipVariantBlock(8, 2, 16, "key")


def test_with_skip_keeps_the_weights():
    model = randomised(ref.TinyTransformer(6, 8, 2, 8, 2, 4), seed=6)
    tokens = torch.randint(0, 6, (2, 4), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        before = model(tokens)
        after = with_skip(model, "stream")(tokens)
    assert all(isinstance(b, SkipVariantBlock) for b in model.blocks)
    torch.testing.assert_close(after, before)


def test_load_weights_by_name_by_order_or_not_at_all():
    source = randomised(ref.Block(4, 2, 8), seed=1).state_dict()

    class Renamed(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm_a = nn.LayerNorm(4)
            self.attention = nn.MultiheadAttention(4, 2, batch_first=True)
            self.norm_b = nn.LayerNorm(4)
            self.ff = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 4))

    renamed = cw.load_weights(Renamed().double(), source)
    assert torch.equal(renamed.ff[2].bias, source["mlp.2.bias"])
    with pytest.raises(cw.WeightsMismatch, match="expected: ln1.weight"):
        cw.load_weights(nn.Linear(4, 4), source)


def test_budget_follows_nbgrader(monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    assert cw.budget() is cw.FULL and cw.FULL.depths == (1, 2, 4, 8)
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert cw.budget() is cw.REDUCED
    assert cw.progress(range(3)) == range(3)  # no bars while nbgrader runs


def test_progress_is_silenced_by_quiet(monkeypatch):
    import courseware.widgets

    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    monkeypatch.setattr(courseware.widgets, "has_widget_frontend", lambda: True)
    items = range(4)
    with cw.quiet():
        assert cw.progress(items) is items
    bar = cw.progress(items, "x")
    assert bar is not items and list(bar) == [0, 1, 2, 3]


def test_progress_draws_no_text_bar_without_a_widget_front_end(monkeypatch, capsys):
    # Under nbclient or nbconvert (no Jupyter server, no NBGRADER_EXECUTION) a text bar
    # would leave its partial lines in the saved outputs: there is no bar at all.
    import courseware.widgets

    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    assert not courseware.widgets.has_widget_frontend()
    items = range(4)
    assert cw.progress(items, "training") is items
    assert list(cw.progress(items, "training")) == [0, 1, 2, 3]
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
