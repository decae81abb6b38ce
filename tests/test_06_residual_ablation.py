"""grader.check on lesson 06: correct code written another way passes; wrong code gets a
message that says what went wrong. The catalogue of misconceptions is exercised by
tests/test_exercises.py; this file covers the rest of each check."""
import copy
import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from courseware.ablation import (
    LAST,
    LEARNING_RATE,
    MODEL,
    TASK,
    as_hidden,
    as_stream,
    as_tokens,
    check_block_sizes,
    check_depths,
    check_model_sizes,
    check_steps_and_seed,
    layer_outputs,
)
from grader import CheckFailed, check
from grader import reference as ref
from grader.exercises.residual_ablation import reference_ablation


def failure(name, fn, hidden=False) -> str:
    with pytest.raises(CheckFailed) as info:
        check(name, fn, hidden=hidden)
    return str(info.value)


def passes(name, fn, capsys, hidden=False):
    check(name, fn, hidden=hidden)
    assert capsys.readouterr().out.startswith(f"✓ {name}")


# ----------------------------------------------------------------------------- Block

class GivenBlock(nn.Module):
    """The given __init__ of the notebook; subclasses write forward as a learner might."""

    def __init__(self, d_model, n_heads, d_ff, residual=True):
        super().__init__()
        check_block_sizes(d_model, n_heads, d_ff)
        self.d_model, self.residual = d_model, bool(residual)
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))


class BlockWithIfs(GivenBlock):
    def forward(self, x):
        x = as_stream(x, self.d_model)
        h = self.ln1(x)
        attended, _weights = self.attn(h, h, h)
        if self.residual:
            x = x + attended
        else:
            x = attended
        update = self.mlp(self.ln2(x))
        if self.residual:
            return x + update
        return update


class BlockWithFunctionalNorms(GivenBlock):
    def forward(self, x):
        x = as_stream(x, self.d_model)
        d = (self.d_model,)
        h = F.layer_norm(x, d, self.ln1.weight, self.ln1.bias)
        a = self.attn(query=h, key=h, value=h, need_weights=False)[0]
        x = (x if self.residual else 0) + a
        m = self.mlp(F.layer_norm(x, d, self.ln2.weight, self.ln2.bias))
        return (x if self.residual else 0) + m


class RenamedBlock(nn.Module):
    """Other attribute names, same layers in the same order: weights load by position."""

    def __init__(self, d_model, n_heads, d_ff, residual=True):
        super().__init__()
        check_block_sizes(d_model, n_heads, d_ff)
        self.d, self.skip = d_model, residual
        self.norm_attn = nn.LayerNorm(d_model)
        self.self_attention = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.norm_mlp = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x):
        x = as_stream(x, self.d)
        h = self.norm_attn(x)
        a = self.self_attention(h, h, h, need_weights=False)[0]
        x = x + a if self.skip else a
        m = self.ff(self.norm_mlp(x))
        return x + m if self.skip else m


@pytest.mark.parametrize("cls", [BlockWithIfs, BlockWithFunctionalNorms, RenamedBlock])
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_correct_blocks_pass(cls, hidden, capsys):
    passes("Block", cls, capsys, hidden)


class BlockStub(GivenBlock):
    def forward(self, x):
        x = as_stream(x, self.d_model)
        raise NotImplementedError()


def test_a_stub_block_is_not_implemented_yet():
    message = failure("Block", BlockStub)
    assert "Block is not implemented yet" in message


class InPlaceBlock(GivenBlock):
    def forward(self, x):
        x = as_stream(x, self.d_model)
        h = self.ln1(x)
        x += self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


def test_adding_into_the_input_in_place_is_reported():
    assert "changed its input `x` in place" in failure("Block", InPlaceBlock)


class TupleBlock(GivenBlock):
    def forward(self, x):
        x = as_stream(x, self.d_model)
        h = self.ln1(x)
        x = x + self.attn(h, h, h)
        return x + self.mlp(self.ln2(x))


def test_adding_the_attention_pair_names_the_line_and_the_fix():
    message = failure("Block", TupleBlock)
    assert "raised TypeError" in message
    assert "x = x + self.attn(h, h, h)" in message
    assert "returns a pair (output, weights)" in message


class BlockWithExtraLayer(GivenBlock):
    def __init__(self, d_model, n_heads, d_ff, residual=True):
        super().__init__(d_model, n_heads, d_ff, residual)
        self.gate = nn.Linear(d_model, d_model)

    def forward(self, x):
        return x


def test_changed_layers_are_explained_without_a_misleading_line():
    message = failure("Block", BlockWithExtraLayer)
    assert "do not match the layers this exercise defines" in message
    assert "gate.weight" in message and "of your code" not in message


class BlockWithoutSizeCheck(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, residual=True):
        super().__init__()
        self.inner = ref.Block(4, 2, 8, residual)

    def forward(self, x):
        return x


def test_accepting_bad_sizes_fails():
    message = failure("Block", BlockWithoutSizeCheck)
    assert "do not match" in message or "should reject this input" in message


# ----------------------------------------------------------------------------- TinyTransformer

class RenamedModel(nn.Module):
    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual=True):
        super().__init__()
        check_model_sizes(vocab_size, d_model, n_heads, d_ff, n_layers, seq_len)
        self.vocab_size, self.seq_len = vocab_size, seq_len
        self.embed = nn.Embedding(vocab_size, d_model)
        self.where = nn.Embedding(seq_len, d_model)
        self.layers = nn.ModuleList()
        for _ in range(n_layers):
            self.layers.append(BlockWithIfs(d_model, n_heads, d_ff, residual=residual))
        self.norm = nn.LayerNorm(d_model)
        self.out = nn.Linear(d_model, vocab_size)

    def forward(self, tokens):
        tokens = as_tokens(tokens, self.vocab_size, self.seq_len)
        x = self.embed(tokens) + self.where.weight[: tokens.shape[1]]
        for layer in self.layers:
            x = layer(x)
        return self.out(self.norm(x))


@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_a_renamed_model_passes(hidden, capsys):
    passes("TinyTransformer", RenamedModel, capsys, hidden)


class ModelOnStubBlocks(ref.TinyTransformer):
    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual=True):
        super().__init__(vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual)
        self.blocks = nn.ModuleList([BlockStub(d_model, n_heads, d_ff, residual)
                                     for _ in range(n_layers)])


def test_a_model_on_a_stub_block_says_which_exercise_to_finish():
    message = failure("TinyTransformer", ModelOnStubBlocks)
    assert "calls BlockStub.forward, which is not implemented yet" in message
    assert "TinyTransformer is not implemented yet" not in message


# ----------------------------------------------------------------------------- token_similarity

def similarity_by_broadcasting(h):
    h = as_hidden(h)
    cos = F.cosine_similarity(h[..., :, None, :], h[..., None, :, :], dim=-1)
    T = h.shape[-2]
    off = ~torch.eye(T, dtype=torch.bool)
    return cos[..., off].mean().item()


def similarity_in_numpy(h):
    h = as_hidden(h).numpy()
    unit = h / np.linalg.norm(h, axis=-1, keepdims=True)
    cos = np.einsum("...id,...jd->...ij", unit, unit)
    T = h.shape[-2]
    return np.mean((cos.sum(axis=(-1, -2)) - T) / (T * (T - 1)))


@pytest.mark.parametrize("fn", [similarity_by_broadcasting, similarity_in_numpy])
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_correct_similarities_pass(fn, hidden, capsys):
    passes("token_similarity", fn, capsys, hidden)


def similarity_ignoring_bad_input(h):
    h = torch.as_tensor(h, dtype=torch.float64)
    return similarity_by_broadcasting(h) if h.ndim >= 2 and h.shape[-2] > 1 else 1.0


def test_a_single_token_must_be_rejected():
    message = failure("token_similarity", similarity_ignoring_bad_input)
    assert "should reject this input with a ValueError" in message


# ----------------------------------------------------------------------------- train

def train_with_loss_module(model, task, steps, seed):
    steps, seed = check_steps_and_seed(steps, seed)
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    criterion = nn.CrossEntropyLoss()
    losses = []
    for _ in range(steps):
        tokens, targets = task.sample(generator)
        loss = criterion(model(tokens).transpose(1, 2), targets)
        model.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    return losses


@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_a_differently_written_training_loop_passes(hidden, capsys):
    passes("train", train_with_loss_module, capsys, hidden)


def train_keeping_tensors(model, task, steps, seed):
    steps, seed = check_steps_and_seed(steps, seed)
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    losses = []
    for _ in range(steps):
        tokens, targets = task.sample(generator)
        loss = F.cross_entropy(model(tokens).flatten(0, 1), targets.flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss)
    return losses


def test_keeping_loss_tensors_is_explained():
    message = failure("train", train_keeping_tensors)
    assert "entry 0 is a tensor, not a float: append `loss.item()`" in message


def train_stub(model, task, steps, seed):
    steps, seed = check_steps_and_seed(steps, seed)
    raise NotImplementedError()


def test_a_stub_train_is_not_implemented_yet():
    assert "train is not implemented yet" in failure("train", train_stub)


# ----------------------------------------------------------------------------- run_ablation

def ablation_by_hand(depths, steps, seed):
    """Correct, written differently: both models built first, then trained."""
    depths = check_depths(depths)
    steps, seed = check_steps_and_seed(steps, seed)
    probe = TASK.sample(torch.Generator().manual_seed(seed))[0]
    rows = []
    for depth in depths:
        models = []
        for residual in (True, False):
            torch.manual_seed(seed)
            models.append(ref.TinyTransformer(**MODEL, n_layers=depth, residual=residual))
        for residual, model in zip((True, False), models):
            before = [ref.token_similarity(h) for h in layer_outputs(model, probe)]
            losses = ref.train(model, TASK, steps, seed)
            rows.append(dict(depth=depth, residual=residual, losses=losses,
                             final_loss=sum(losses[-LAST:]) / len(losses[-LAST:]),
                             similarity_init=before,
                             similarity_trained=[ref.token_similarity(h)
                                                 for h in layer_outputs(model, probe)]))
    return rows


def test_a_differently_written_sweep_passes(capsys):
    passes("run_ablation", ablation_by_hand, capsys)


def doctored(change):
    """A wrong run_ablation made from the reference's rows (cheap: they are cached)."""
    def run_ablation(depths, steps, seed):
        depths = check_depths(depths)
        steps, seed = check_steps_and_seed(steps, seed)
        rows = copy.deepcopy(reference_ablation(depths, steps, seed))
        change(rows)
        return rows
    return run_ablation


def _swap_data(rows):
    for a, b in zip(rows[::2], rows[1::2]):
        for key in ("losses", "final_loss", "similarity_init", "similarity_trained"):
            a[key], b[key] = b[key], a[key]


def _swap_losses(rows):
    for a, b in zip(rows[::2], rows[1::2]):
        for key in ("losses", "final_loss"):
            a[key], b[key] = b[key], a[key]


def _same_runs(rows):
    for a, b in zip(rows[::2], rows[1::2]):
        for key in ("losses", "final_loss", "similarity_init", "similarity_trained"):
            b[key] = copy.deepcopy(a[key])


def _flags_reversed(rows):
    for r in rows:
        r["residual"] = not r["residual"]


def _last_loss(rows):
    for r in rows:
        r["final_loss"] = r["losses"][-1]


def _no_trained_similarity(rows):
    for r in rows:
        del r["similarity_trained"]


def _last_layer_only(rows):
    for r in rows:
        r["similarity_init"] = [r["similarity_init"][-1]]


def _different_start(rows):
    for r in rows[1::2]:
        r["similarity_init"][0] += 0.05


def _collapse_hidden(rows):
    for r in rows[1::2]:
        r["similarity_init"][-1] = 0.0


@pytest.mark.parametrize("change, expected", [
    (_swap_data, "without residuals the tokens should start out more alike"),
    (_swap_losses, "should end with the higher loss"),
    (_same_runs, "are identical, so the residual flag changes nothing"),
    (_flags_reversed, "row 0 is depth=1, residual=False; expected depth=1, residual=True"),
    (_last_loss, "but the mean of its last 10 losses is"),
    (_no_trained_similarity, "has no key 'similarity_trained'"),
    (_last_layer_only, "has similarity_init of length 1; a 1-layer model has 2 streams"),
    (_different_start, "the two models start from different weights"),
    (_collapse_hidden, "without residuals the tokens should start out more alike"),
])
def test_a_wrong_sweep_is_explained(change, expected):
    message = failure("run_ablation", doctored(change))
    assert expected in message, message
    assert "run_ablation is not right yet" in message


def test_a_wrong_sweep_fails_the_hidden_check_too():
    assert "should end with the higher loss" in failure("run_ablation", doctored(_swap_losses),
                                                        hidden=True)


def ablation_on_a_stub_train(depths, steps, seed):
    depths = check_depths(depths)
    steps, seed = check_steps_and_seed(steps, seed)
    torch.manual_seed(seed)
    return train_stub(ref.TinyTransformer(**MODEL, n_layers=1), TASK, steps, seed)


def test_a_sweep_on_a_stub_train_says_which_exercise_to_finish():
    message = failure("run_ablation", ablation_on_a_stub_train)
    assert "run_ablation calls train_stub, which is not implemented yet" in message


def ablation_without_checks(depths, steps, seed):
    return [] if not list(depths) else reference_ablation(depths, steps, seed)


def test_an_empty_depth_list_must_be_rejected():
    message = failure("run_ablation", ablation_without_checks)
    assert "should reject this input with a ValueError, because depths is empty" in message


def test_a_wrong_sweep_shows_the_functions_arguments_and_labels_each_similarity():
    message = failure("run_ablation", doctored(_swap_data))
    inputs = message.split("Expected:", 1)[0]
    # The input is the call run_ablation(depths, steps, seed), nothing else.
    assert "  depths (a Python list) =\n    [1, 4]" in inputs
    assert "  steps =\n    30" in inputs and "  seed =\n    0" in inputs
    assert "seeds" not in inputs
    assert "depth  residual  final loss  similarity at init: embeddings  last layer" in message
    assert re.search(r"the token similarity after the last layer, at init, is \d\.\d{3} without "
                     r"residuals and \d\.\d{3} with them", message), message
    message = failure("run_ablation", doctored(_different_start))
    assert "the token similarity of their embeddings (before any block) is" in message
    assert "with residuals and" in message and "without." in message
