"""Lesson 06.

grader.check: correct code written another way passes; wrong code gets a message that says
what went wrong. The catalogue of misconceptions is exercised by tests/test_exercises.py;
this file covers the rest of each check.

The references against independent oracles: PyTorch's own pre-norm
``nn.TransformerEncoderLayer`` / ``nn.TransformerEncoder``, attention written out by hand,
``F.cosine_similarity`` over explicit pairs; the properties of the experiment; and the
courseware the notebook uses.
"""
import copy
import itertools
import math
import re
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from courseware import ablation as cw
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
from grader import CheckFailed, check, lessons
from grader import reference as ref
from grader.learner import agent
from grader.learner.env import one_thread, quiet
from grader.learner.fixtures import materialise
from grader.reference import SkipVariantBlock
from attacks_scan import made_up_rows
from sources import handed_over
from stated_rules import broken

LESSON = "06_residual_ablation"
exercises = lessons.lesson_module(LESSON, "exercises")  # registers the lesson's exercises


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
    """Other attribute names, same layers in the same order."""

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


@pytest.mark.parametrize("cls", [BlockWithIfs, BlockWithFunctionalNorms])
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_correct_blocks_pass(cls, hidden, capsys):
    passes("Block", cls, capsys, hidden)


def test_renamed_layers_are_named_in_the_message():
    # The check loads the weights by the names of the given __init__: a block that renames
    # its layers is told which parameters it lacks, not shown a wrong output.
    message = failure("Block", RenamedBlock)
    assert "does not have the layers the exercise asks for" in message
    assert "it has no parameter `ln1.weight`" in message
    assert "norm_attn.weight 4" in message and "ln1.weight 4" in message


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


class PairThroughBothBranches(GivenBlock):
    """Keeps the flag, but the attention's pair goes on as it is, into the skip or the MLP."""

    def forward(self, x):
        x = as_stream(x, self.d_model)
        attended = self.attn(self.ln1(x), self.ln1(x), self.ln1(x))
        x = x + attended if self.residual else attended
        update = self.mlp(self.ln2(x))
        return x + update if self.residual else update


PAIR_DIAGNOSIS = ("Diagnosis: nn.MultiheadAttention returns a pair, (attention output, "
                  "attention weights)")


@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_adding_the_attention_pair_names_the_line_and_the_fix(hidden):
    message = failure("Block", TupleBlock, hidden)
    assert "raised TypeError" in message
    assert "x = x + self.attn(h, h, h)" in message
    assert PAIR_DIAGNOSIS in message and "Take the first item of the pair" in message
    assert not handed_over(message, LESSON)


def test_the_attention_pair_is_diagnosed_whichever_branch_meets_it_first():
    message = failure("Block", PairThroughBothBranches)
    assert "raised TypeError" in message and PAIR_DIAGNOSIS in message


# Skips forgotten with residual=True, written as a learner would.
class NoSkipsAtAll(GivenBlock):
    def forward(self, x):
        x = as_stream(x, self.d_model)
        h = self.ln1(x)
        x = self.attn(h, h, h, need_weights=False)[0]
        return self.mlp(self.ln2(x))


class NoAttentionSkip(GivenBlock):
    def forward(self, x):
        x = as_stream(x, self.d_model)
        h = self.ln1(x)
        x, _ = self.attn(h, h, h)
        update = self.mlp(self.ln2(x))
        if self.residual:
            update = update + x
        return update


class NoMlpSkip(GivenBlock):
    def forward(self, x):
        x = as_stream(x, self.d_model)
        a, _ = self.attn(self.ln1(x), self.ln1(x), self.ln1(x))
        if self.residual:
            a = x + a
        return self.mlp(self.ln2(a))


@pytest.mark.parametrize("cls, words", [
    # named by the error model (tests/test_rules_dropped.py): the skip's sum without its term
    (NoSkipsAtAll, "Diagnosis: your answer behaves exactly as if a term of the skip were left out"),
    (NoAttentionSkip, "Diagnosis: with residual=True your block keeps the MLP's skip but not the "
                      "attention's"),
    (NoMlpSkip, "Diagnosis: with residual=True your block keeps the attention's skip but not the "
                "MLP's"),
])
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_skips_missing_with_residual_are_diagnosed(cls, words, hidden):
    message = failure("Block", cls, hidden)
    assert "Smallest input where it goes wrong (one token, residual=True)" in message
    assert words in message, message
    assert not handed_over(message, LESSON)


class BlockWithExtraLayer(GivenBlock):
    def __init__(self, d_model, n_heads, d_ff, residual=True):
        super().__init__(d_model, n_heads, d_ff, residual)
        self.gate = nn.Linear(d_model, d_model)

    def forward(self, x):
        return x


def test_changed_layers_are_explained_without_a_misleading_line():
    message = failure("Block", BlockWithExtraLayer)
    assert "does not have the layers the exercise asks for" in message
    assert "parameters the exercise does not ask for: `gate.weight` and `gate.bias`" in message
    assert "of your code" not in message


class BlockWithoutSizeCheck(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, residual=True):
        super().__init__()
        self.inner = ref.Block(4, 2, 8, residual)

    def forward(self, x):
        return x


def test_accepting_bad_sizes_fails():
    message = failure("Block", BlockWithoutSizeCheck)
    assert "does not have the layers" in message or "should reject this input" in message


class BlockWithoutShapeCheck(GivenBlock):
    """Right on every valid input, but never checks x, so x of two axes goes through."""

    def forward(self, x):
        if x.shape[-1] != self.d_model:
            raise ValueError("x has the wrong width")
        squeeze = x.ndim == 2
        x = x[None] if squeeze else x
        out = BlockWithIfs.forward(self, x)
        return out[0] if squeeze else out


def test_a_block_taking_a_stream_of_two_axes_must_reject_it():
    message = failure("Block", BlockWithoutShapeCheck)
    assert "should reject this input with a ValueError, because x has two axes" in message
    assert "Instead it returned a result" in message


class BlockAcceptingAnySizes(BlockWithIfs):
    """Builds (nn.MultiheadAttention rejects 6 features in 4 heads with an AssertionError)."""

    def __init__(self, d_model, n_heads, d_ff, residual=True):
        nn.Module.__init__(self)
        self.d_model, self.residual = d_model, bool(residual)
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))


def test_sizes_the_reference_rejects_must_raise_a_value_error():
    # The reference cannot be built there, so the case carries no weights: the learner's
    # class must raise a ValueError itself, while building or on the input.
    bad = lessons.get("Block").bad_inputs[0]
    assert bad.case.build.state is None
    message = failure("Block", BlockAcceptingAnySizes)
    assert "because d_model=6 cannot be split into n_heads=4 equal heads" in message
    assert "Instead it raised AssertionError" in message


# ----------------------------------------------------------------------------- TinyTransformer

class ModelWrittenDifferently(nn.Module):
    """The given names; positions by slicing the embedding's weight, blocks appended."""

    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual=True):
        super().__init__()
        check_model_sizes(vocab_size, d_model, n_heads, d_ff, n_layers, seq_len)
        self.vocab_size, self.seq_len = vocab_size, seq_len
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(seq_len, d_model)
        self.blocks = nn.ModuleList()
        for _ in range(n_layers):
            self.blocks.append(BlockWithIfs(d_model, n_heads, d_ff, residual=residual))
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens):
        tokens = as_tokens(tokens, self.vocab_size, self.seq_len)
        x = self.tok_emb(tokens) + self.pos_emb.weight[: tokens.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


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
def test_a_differently_written_model_passes(hidden, capsys):
    passes("TinyTransformer", ModelWrittenDifferently, capsys, hidden)


def test_a_renamed_model_is_told_which_layers_it_lacks():
    message = failure("TinyTransformer", RenamedModel)
    assert "does not have the layers the exercise asks for" in message
    assert "it has no parameter `tok_emb.weight`" in message


class ModelWithAListOfBlocks(nn.Module):
    """The given lines, and the blocks in a plain list."""

    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual=True):
        super().__init__()
        check_model_sizes(vocab_size, d_model, n_heads, d_ff, n_layers, seq_len)
        self.vocab_size, self.seq_len, self.residual = vocab_size, seq_len, bool(residual)
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(seq_len, d_model)
        self.blocks = []
        for _ in range(n_layers):
            self.blocks.append(BlockWithIfs(d_model, n_heads, d_ff, residual=residual))
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    forward = ModelWrittenDifferently.forward


@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_blocks_in_a_python_list_are_said_to_be_unregistered(hidden):
    message = failure("TinyTransformer", ModelWithAListOfBlocks, hidden)
    assert "it has no parameter `blocks.0.ln1.weight`" in message
    assert "A layer kept in a plain Python list or dict, or never created, is not there" in message
    assert "Compare the layers your `__init__` creates" not in message
    assert "Diagnosis: your blocks sit in a plain Python list, so PyTorch never registers them: " \
           "none of their parameters is in the model's parameters() or state_dict()" in message
    assert not handed_over(message, LESSON)


class ModelOnStubBlocks(ref.TinyTransformer):
    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual=True):
        super().__init__(vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual)
        self.blocks = nn.ModuleList([BlockStub(d_model, n_heads, d_ff, residual)
                                     for _ in range(n_layers)])


def test_a_model_on_a_stub_block_says_which_exercise_to_finish():
    message = failure("TinyTransformer", ModelOnStubBlocks)
    assert "TinyTransformer calls your BlockStub, which is not implemented yet" in message
    assert "TinyTransformer is not implemented yet" not in message


# As in the notebook: the learner's TinyTransformer builds the learner's own Block, whose
# forward is still the stub (its __init__ is given).
class Block(GivenBlock):
    def forward(self, x):
        x = as_stream(x, self.d_model)
        raise NotImplementedError()


class TinyTransformer(ModelWrittenDifferently):
    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual=True):
        super().__init__(vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual)
        self.blocks = nn.ModuleList([Block(d_model, n_heads, d_ff, residual=residual)
                                     for _ in range(n_layers)])


@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_a_model_on_the_learners_unwritten_block_passes_with_the_reference_standing_in(hidden, capsys):
    """The learner's Block is a stub: the reference's sealed results stand in for it, so
    a right TinyTransformer earns its points and says so."""
    check("TinyTransformer", TinyTransformer, hidden=hidden)
    out = capsys.readouterr().out
    assert out.startswith("✓ TinyTransformer") and "Your Block fails its own check" in out, out


class StubModel(nn.Module):
    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual=True):
        super().__init__()
        check_model_sizes(vocab_size, d_model, n_heads, d_ff, n_layers, seq_len)
        raise NotImplementedError()


def test_a_stub_model_is_not_implemented_yet():
    message = failure("TinyTransformer", StubModel)
    assert message.startswith("TinyTransformer is not implemented yet")


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
    return float(np.mean((cos.sum(axis=(-1, -2)) - T) / (T * (T - 1))))


@pytest.mark.parametrize("fn", [similarity_by_broadcasting, similarity_in_numpy])
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_correct_similarities_pass(fn, hidden, capsys):
    passes("token_similarity", fn, capsys, hidden)


def similarity_as(kind):
    """A right similarity, returned as something other than the Python float the exercise
    asks for."""
    def similarity(h):
        value = similarity_by_broadcasting(h)
        return {"0-d tensor": torch.tensor(value, dtype=torch.float64),
                "np.float64": np.float64(value), "0-d array": np.asarray(value)}[kind]
    return similarity


@pytest.mark.parametrize("kind", ["0-d tensor", "np.float64", "0-d array"])
def test_a_right_similarity_that_is_not_a_python_float_fails(kind):
    message = failure("token_similarity", similarity_as(kind))
    assert "not a Python float" in message and "float(...)" in message


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


def test_the_training_check_hands_over_a_model_of_torchs_own_layers_and_the_task():
    case = lessons.expectations("train").cases[0]
    model, task, _, seed = materialise(case.args)
    assert not any(isinstance(m, (ref.Block, ref.TinyTransformer)) for m in model.modules())
    assert any(isinstance(m, nn.TransformerEncoderLayer) for m in model.modules())
    assert all(p.dtype == torch.float64 for p in model.parameters())
    assert isinstance(task, cw.AddFirstTask) and task.vocab_size == 5 and task.seq_len == 4
    state = case.args[0].params["state"]
    assert {n: list(p.shape) for n, p in model.named_parameters()} == \
        {n: list(v.shape) for n, v in state.items()}
    assert all(np.array_equal(p.detach().numpy(), state[n]) for n, p in model.named_parameters())
    # Two builds hold the same weights, and training one leaves the other as it was.
    again = materialise(case.args[0])
    with quiet():
        losses = ref.train(model, task, 2, seed)
    assert len(losses) == 2
    assert all(np.array_equal(p.detach().numpy(), state[n]) for n, p in again.named_parameters())


def train_on_the_last_batch_only(model, task, steps, seed):
    steps, seed = check_steps_and_seed(steps, seed)
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    batches = [task.sample(generator) for _ in range(steps)]
    losses = []
    for _ in range(steps):
        tokens, targets = batches[-1]
        loss = F.cross_entropy(model(tokens).flatten(0, 1), targets.flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def test_losses_that_differ_get_the_hint():
    message = failure("train", train_on_the_last_batch_only)
    assert "train is not right yet" in message and "Hint: One training step:" in message


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


def in_a_notebook(fn):
    """``fn`` as a learner's notebook holds it: beside that notebook's TinyTransformer,
    train and token_similarity (here the reference's), which the check runs again to
    redo one of the rows (this module's own TinyTransformer is a stub)."""
    import types

    namespace = {**fn.__globals__, "TinyTransformer": ref.TinyTransformer, "train": ref.train,
                 "token_similarity": ref.token_similarity}
    return types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__,
                              fn.__closure__)


def test_a_differently_written_sweep_passes(capsys):
    passes("run_ablation", in_a_notebook(ablation_by_hand), capsys)


def reference_rows(depths, steps, seed):
    """The reference's rows: those the live check computed (and cached) for its cases,
    else a fresh run."""
    for hidden in (False, True):
        exp = lessons.expectations("run_ablation", hidden)
        for case, outcome in zip(exp.cases, exp.expected):
            if case.args == (list(depths), steps, seed):
                return copy.deepcopy(outcome.value["returned"])
    return ref.run_ablation(depths, steps, seed)


def doctored(change):
    """A wrong run_ablation made from the reference's rows (cheap: they are cached)."""
    def run_ablation(depths, steps, seed):
        depths = check_depths(depths)
        steps, seed = check_steps_and_seed(steps, seed)
        rows = reference_rows(depths, steps, seed)
        change(rows)
        return rows
    return in_a_notebook(run_ablation)


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


def _trained_before_training(rows):
    for r in rows:
        r["similarity_trained"] = list(r["similarity_init"])


def _no_trained_similarity(rows):
    for r in rows:
        del r["similarity_trained"]


def _last_layer_only(rows):
    for r in rows:
        r["similarity_init"] = [r["similarity_init"][-1]]


def _init_after_training(rows):
    for r in rows:
        r["similarity_init"] = list(r["similarity_trained"])


def _first_ten_losses(rows):
    for r in rows:
        r["final_loss"] = float(np.mean(r["losses"][:10]))


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
    (_last_loss, ": it is the last loss alone (losses[-1])"),
    (_first_ten_losses, ": it is the mean of the first 10"),
    (_init_after_training, "it was measured after training"),
    (_no_trained_similarity, "has no key 'similarity_trained'"),
    (_trained_before_training, "has similarity_trained equal to its similarity_init, but"),
    (_last_layer_only, "has similarity_init of length 1; a 1-layer model has 2 streams"),
    (_different_start, "the two models start from different weights"),
    (_collapse_hidden, "without residuals the tokens should start out more alike"),
])
def test_a_wrong_sweep_is_explained(change, expected):
    message = failure("run_ablation", doctored(change))
    assert expected in message, message
    assert "run_ablation is not right yet" in message
    # What differs is what the mistake is: it leads, as the diagnosis, and is said once.
    assert expected in message.split("Smallest input")[0].split("Diagnosis: ", 1)[1], message
    assert "What differs" not in message and "Hint:" not in message


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
    assert "run_ablation calls your train_stub, which is not implemented yet" in message


@in_a_notebook
def ablation_without_checks(depths, steps, seed):
    return [] if not list(depths) else reference_rows(depths, steps, seed)


def test_an_empty_depth_list_must_be_rejected():
    message = failure("run_ablation", ablation_without_checks)
    assert "should reject this input with a ValueError, because depths is empty" in message


def test_a_wrong_sweep_shows_the_functions_arguments_and_labels_each_similarity():
    message = failure("run_ablation", doctored(_swap_data))
    inputs = message.split("Expected:", 1)[0]
    # The input is the call run_ablation(depths, steps, seed), nothing else.
    assert "  depths (a Python list) =\n    [1, 4]" in inputs
    assert "  steps = 30" in inputs and "  seed = 2" in inputs
    assert "seeds" not in inputs
    assert "depth  residual  final loss  similarity at init: embeddings  last layer" in message
    assert re.search(r"the token similarity after the last layer, at init, is \d\.\d{3} without "
                     r"residuals and \d\.\d{3} with them", message), message
    message = failure("run_ablation", doctored(_different_start))
    assert "the token similarity of their embeddings (before any block) is" in message
    assert "with residuals and" in message and "without." in message


# ----------------------------------------------------------------------------- references

@pytest.fixture(autouse=True)
def _one_thread():
    with one_thread():
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
    assert type(ref.token_similarity(h)) is float  # np.float64 is an instance of float too


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
    with quiet():
        losses = ref.train(model, cw.TASK, 3, 5)
    assert losses[0] == pytest.approx(first, rel=1e-6)
    assert len(losses) == 3 and all(isinstance(v, float) for v in losses)
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))


def test_train_is_seeded_and_learns_the_task():
    with quiet():
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
    with quiet(), one_thread():
        return {seed: reference_rows([1, 4], 30, seed) for seed in (2, 3)}


def test_run_ablation_rows(sweep):
    rows = sweep[2]
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
    with quiet():
        again = ref.run_ablation([1], 30, 2)
    assert again == sweep[2][:2]


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


def test_skip_variant_block():
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


def variant_of(model, skip):
    """``model`` with every block replaced by the oracle ``SkipVariantBlock``, holding the
    same weights."""
    for i, block in enumerate(model.blocks):
        variant = SkipVariantBlock(block.d_model, block.attn.num_heads,
                                   block.mlp[0].out_features, skip).double()
        variant.load_state_dict(block.state_dict())
        model.blocks[i] = variant.eval()
    return model


@pytest.mark.parametrize("skip", list(cw.SKIPS))
def test_with_attention_skip_equals_the_oracle_variant_block(skip):
    model = randomised(ref.TinyTransformer(6, 8, 2, 8, 3, 4), seed=6)
    oracle = variant_of(copy.deepcopy(model), skip)
    tokens = torch.randint(0, 6, (2, 4), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        before = model(tokens)
        changed = cw.with_attention_skip(model, skip)
        after = changed(tokens)
        torch.testing.assert_close(after, oracle(tokens), rtol=1e-10, atol=1e-10)
    if skip == "stream":
        torch.testing.assert_close(after, before, rtol=0, atol=0)
    else:
        assert not torch.allclose(after, before)
    # Only the attention changed: the weights are the same tensors, under the wrapper.
    assert all(isinstance(b.attn, cw.AttentionWithSkip) for b in model.blocks)
    assert sum(p.numel() for p in model.parameters()) == \
        sum(p.numel() for p in oracle.parameters())
    with pytest.raises(ValueError, match="skip"):
        cw.with_attention_skip(model, "key")


def test_with_attention_skip_works_on_a_learners_model_called_with_keywords():
    class KeywordBlock(BlockWithFunctionalNorms):
        pass

    class Model(ModelWrittenDifferently):
        def forward(self, tokens):
            x = self.tok_emb(tokens) + self.pos_emb.weight[: tokens.shape[1]]
            for block in self.blocks:
                x = block(x=x)
            return self.head(self.ln_f(x))

    torch.manual_seed(3)
    mine = Model(6, 8, 2, 8, 2, 4).double().eval()
    for i, block in enumerate(mine.blocks):
        mine.blocks[i] = KeywordBlock(8, 2, 8).double().eval()
        mine.blocks[i].load_state_dict(block.state_dict())
    theirs = ref.TinyTransformer(6, 8, 2, 8, 2, 4).double().eval()
    theirs.load_state_dict(mine.state_dict())
    oracle = variant_of(theirs, "value")
    tokens = torch.randint(0, 6, (3, 4), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        torch.testing.assert_close(cw.with_attention_skip(mine, "value")(tokens), oracle(tokens))


LEARNERS_MODEL = """
import sys, torch
from torch import nn
from courseware.ablation import run_skip_variants

class Block(nn.Module):
    def __init__(self, d, h, f, residual=True):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, h, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(d, f), nn.GELU(), nn.Linear(f, d))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))

class TinyTransformer(nn.Module):
    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual=True):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(seq_len, d_model)
        self.blocks = nn.ModuleList(Block(d_model, n_heads, d_ff) for _ in range(n_layers))
        self.ln_f, self.head = nn.LayerNorm(d_model), nn.Linear(d_model, vocab_size)

    def forward(self, tokens):
        x = self.tok_emb(tokens) + self.pos_emb(torch.arange(tokens.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))

def train(model, task, steps, seed):
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(steps):
        tokens, targets = task.sample(g)
        loss = nn.functional.cross_entropy(model(tokens).flatten(0, 1), targets.flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses

torch.set_num_threads(1)
out = run_skip_variants(TinyTransformer, train, depth=2, steps=3, seed=0)
print(sorted(out), [len(v) for v in out.values()])
print(len(set(v[0] for v in out.values())), len(set(v[-1] for v in out.values())))
print(sorted(m for m in sys.modules if (m.startswith('grader.lessons.') and m.count('.') >= 3 and not m.endswith('.learner')) or m.startswith('grader.reference')))
"""


def test_run_skip_variants_trains_the_learners_model_without_the_instructors_side():
    out = subprocess.run([sys.executable, "-c", LEARNERS_MODEL], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    names, firsts, instructors = out.stdout.strip().splitlines()
    assert names == "['none', 'stream', 'value'] [3, 3, 3]"
    assert firsts == "3 3"  # the three skips give three different models
    assert instructors == "[]"


def skip_order_problem(variants) -> str | None:
    """What contradicts section 7's conclusion (the prose, question 1 and its rubric) in
    the final losses of ``run_skip_variants``: the standard skip lowest, the value skip
    clearly higher, no skip at chance. The margins are well inside what was measured at
    the grading budget over seeds 0 to 15 (value above stream by 0.36 at least, none above
    value by 1.0 at least)."""
    final = {skip: float(np.mean(losses[-LAST:])) for skip, losses in variants.items()}
    table = ", ".join(f"{skip} {loss:.3f}" for skip, loss in final.items())
    if not final["value"] > final["stream"] + 0.2:
        return f"the value skip does not end clearly above the standard skip: {table}"
    if not final["none"] > final["value"] + 0.5:
        return f"no skip does not end clearly above the value skip: {table}"
    if not abs(final["none"] - TASK.chance_loss) < 0.05:
        return f"no skip does not stay at chance ({TASK.chance_loss:.3f}): {table}"
    return None


def test_the_skip_experiment_keeps_its_conclusion_under_grading(monkeypatch):
    # Formgrader shows the autograded run's outputs, so the graded budget must give the
    # order that the prose and the free-text question rely on.
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    budget = cw.budget()
    with quiet(), one_thread():
        variants = cw.run_skip_variants(ref.TinyTransformer, ref.train, budget.variant_depth,
                                        budget.variant_steps, budget.seed)
    assert skip_order_problem(variants) is None, skip_order_problem(variants)
    swapped = {**variants, "stream": variants["value"], "value": variants["stream"]}
    assert "value skip does not end clearly above" in skip_order_problem(swapped)


def test_the_checks_load_the_weights_by_name_or_report_the_layout():
    """What the old ``load_weights`` did for the checks, the module driver does now: the
    given layer names load the case's weights (so the output is the reference's), and a
    module with other layers is reported by its layout."""
    exp = lessons.expectations("Block")
    case, expected = exp.cases[-1], exp.expected[-1]
    driver = exp.info.driver
    right = agent.run(BlockWithIfs, driver, [case])[0]
    torch.testing.assert_close(right.value["output"], expected.value["output"])
    renamed = agent.run(RenamedBlock, driver, [case])[0]
    assert set(renamed.value) == {"layout"}
    assert "norm_attn.weight" in renamed.value["layout"]


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
    with quiet():
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


LEARNERS_TRAIN = """
import sys, torch
import torch.nn.functional as F
from grader import check
from courseware.ablation import LEARNING_RATE, check_steps_and_seed

def train(model, task, steps, seed):
    steps, seed = check_steps_and_seed(steps, seed)
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    losses = []
    for _ in range(steps):
        tokens, targets = task.sample(generator)
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses

check("train", train)
print(sorted(m for m in sys.modules if (m.startswith('grader.lessons.') and m.count('.') >= 3 and not m.endswith('.learner')) or m.startswith('grader.reference')))
"""


def test_a_recorded_training_check_needs_nothing_of_the_instructors_side():
    """The recorded check builds its model and task from data (torch's own layers and the
    courseware's task) and runs the learner's loop without the reference."""
    out = subprocess.run([sys.executable, "-c", LEARNERS_TRAIN], capture_output=True, text=True,
                         cwd="/")
    assert out.returncode == 0, out.stderr
    assert "✓ train" in out.stdout, out.stdout
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout


# ----------------------------------------------------------------------------- made-up rows

def rows_with_one_run_changed(depths, steps, seed):
    """The reference's rows, with every run but the one the visible check redoes moved a
    little: caught only if the check redoes a row it chose, whichever it is."""
    rows = reference_rows(depths, steps, seed)
    for row in rows:
        row["losses"] = [v * 0.999 for v in row["losses"]]
        row["final_loss"] = sum(row["losses"][-LAST:]) / len(row["losses"][-LAST:])
    return rows


@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_made_up_rows_are_not_what_the_learners_own_parts_give(hidden):
    message = failure("run_ablation", in_a_notebook(made_up_rows), hidden=hidden)
    assert "is not what your own parts give" in message and "the check reran this row" in message


def test_rows_moved_off_their_runs_are_caught_by_the_row_the_check_reruns():
    message = failure("run_ablation", in_a_notebook(rows_with_one_run_changed))
    assert "is not what your own parts give: its losses[0]" in message


def test_the_rerun_uses_the_learners_own_parts():
    """A notebook whose train differs from the reference's (its own, slightly wrong) still
    passes run_ablation when its rows are what its own parts give: the row is judged
    against the learner's parts, never against the reference's numbers."""
    import types

    def slower_train(model, task, steps, seed):
        losses = ref.train(model, task, steps, seed)
        return [v + 1e-3 for v in losses]

    parts = {"TinyTransformer": ref.TinyTransformer, "train": slower_train,
             "token_similarity": ref.token_similarity}
    # ablation_by_hand calls ref.train: here `ref` is the notebook's own parts.
    namespace = {**ablation_by_hand.__globals__, **parts, "ref": types.SimpleNamespace(**parts)}
    check("run_ablation", types.FunctionType(ablation_by_hand.__code__, namespace, "run_ablation"))


# ----------------------------------------------------------------------------- the rules the notebook states

class BlockWithACausalMask(GivenBlock):
    """A causal mask, where the notebook says this lesson's attention has none."""

    def forward(self, x):
        x = as_stream(x, self.d_model)
        T = x.shape[1]
        future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        h = self.ln1(x)
        a = self.attn(h, h, h, attn_mask=future, need_weights=False)[0]
        x = x + a if self.residual else a
        m = self.mlp(self.ln2(x))
        return x + m if self.residual else m


class ModelIgnoringTheFlag(nn.Module):
    """Every block built with its default, residual=True."""

    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers, seq_len, residual=True):
        super().__init__()
        check_model_sizes(vocab_size, d_model, n_heads, d_ff, n_layers, seq_len)
        self.vocab_size, self.seq_len = vocab_size, seq_len
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(seq_len, d_model)
        self.blocks = nn.ModuleList([BlockWithIfs(d_model, n_heads, d_ff) for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    forward = ModelWrittenDifferently.forward


def similarity_with_itself(h):
    """Every pair, each token with itself included."""
    h = torch.as_tensor(h, dtype=torch.float64)
    if h.ndim < 2 or h.shape[-2] < 2:
        raise ValueError("h needs at least two tokens")
    unit = h / h.norm(dim=-1, keepdim=True)
    return float((unit @ unit.transpose(-1, -2)).mean())


def train_with_a_generator_of_its_own(model, task, steps, seed):
    """A new generator at every step: every batch is the first one again."""
    steps, seed = check_steps_and_seed(steps, seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    losses = []
    for _ in range(steps):
        tokens, targets = task.sample(torch.Generator().manual_seed(seed))
        loss = F.cross_entropy(model(tokens).flatten(0, 1), targets.flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def train_clearing_after_backward(model, task, steps, seed):
    """backward, then zero_grad, then step: every update is of zero gradients."""
    steps, seed = check_steps_and_seed(steps, seed)
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    losses = []
    for _ in range(steps):
        tokens, targets = task.sample(generator)
        loss = F.cross_entropy(model(tokens).flatten(0, 1), targets.flatten())
        loss.backward()
        optimizer.zero_grad()
        optimizer.step()
        losses.append(loss.item())
    return losses


def ablation_seeded_once(depths, steps, seed):
    """torch seeded once, before the sweep: the two models of a depth differ."""
    depths = check_depths(depths)
    steps, seed = check_steps_and_seed(steps, seed)
    probe = TASK.sample(torch.Generator().manual_seed(seed))[0]
    torch.manual_seed(seed)
    rows = []
    for depth in depths:
        for residual in (True, False):
            model = TinyTransformer(**MODEL, n_layers=depth, residual=residual)
            before = [token_similarity(h) for h in layer_outputs(model, probe)]
            losses = train(model, TASK, steps, seed)
            rows.append(dict(depth=depth, residual=residual, losses=losses,
                             final_loss=sum(losses[-LAST:]) / len(losses[-LAST:]),
                             similarity_init=before,
                             similarity_trained=[token_similarity(h)
                                                 for h in layer_outputs(model, probe)]))
    return rows


def ablation_without_first(depths, steps, seed):
    """The run without residuals first, at every depth."""
    depths = check_depths(depths)
    steps, seed = check_steps_and_seed(steps, seed)
    probe = TASK.sample(torch.Generator().manual_seed(seed))[0]
    rows = []
    for depth in depths:
        for residual in (False, True):
            torch.manual_seed(seed)
            model = TinyTransformer(**MODEL, n_layers=depth, residual=residual)
            before = [token_similarity(h) for h in layer_outputs(model, probe)]
            losses = train(model, TASK, steps, seed)
            rows.append(dict(depth=depth, residual=residual, losses=losses,
                             final_loss=sum(losses[-LAST:]) / len(losses[-LAST:]),
                             similarity_init=before,
                             similarity_trained=[token_similarity(h)
                                                 for h in layer_outputs(model, probe)]))
    return rows


BREAKS = {
    ("Block", "pass no `attn_mask` (and no `is_causal`)"): BlockWithACausalMask,
    ("Block", "Keep its layers as they are, with their names"): RenamedBlock,
    ("TinyTransformer", "each one gets the `residual` flag"): ModelIgnoringTheFlag,
    ("token_similarity", "return a Python float"): similarity_as("0-d tensor"),
    ("token_similarity", "leave out each token's similarity with itself"): similarity_with_itself,
    ("train", "with that generator"): train_with_a_generator_of_its_own,
    ("train", "in that order"): train_clearing_after_backward,
    ("train", "record the loss as a Python float"): train_keeping_tensors,
    ("run_ablation", "right after seeding torch's random generator with `seed`"):
        in_a_notebook(ablation_seeded_once),
    ("run_ablation", "in the order depth 1 with, depth 1 without, depth 2 with, and so on"):
        in_a_notebook(ablation_without_first),
}


@pytest.mark.parametrize("key", BREAKS, ids=lambda key: f"{key[0]}: {key[1][:40]}")
def test_an_answer_that_breaks_a_stated_rule_fails_and_names_it(key):
    assert not broken(key, BREAKS[key])
