"""grader.check on lesson 05: correct code written other ways passes; forbidden shortcuts,
wrong module layouts, untrainable modules and stubs are rejected with messages that say
what to change. (Every catalogued misconception is covered by tests/test_exercises.py.)"""
import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from grader import CheckFailed, check
from grader import reference as ref
from grader.reference.multi_head_attention import _check_inputs, attention_mask

torch.set_num_threads(1)


def failure(name, fn, hidden=False) -> str:
    with pytest.raises(CheckFailed) as info:
        check(name, fn, hidden=hidden)
    return str(info.value)


# ----------------------------------------------------------------- correct, written differently

def split_with_view_and_permute(x, n_heads):
    if x.dim() != 3 or n_heads <= 0 or x.shape[-1] % n_heads:
        raise ValueError(f"bad x {tuple(x.shape)} or n_heads {n_heads}")
    B, T, d = x.shape
    return x.contiguous().view(B, T, n_heads, d // n_heads).permute(0, 2, 1, 3)


def split_with_chunks(x, n_heads):
    if x.dim() != 3 or n_heads <= 0 or x.shape[-1] % n_heads:
        raise ValueError(f"bad x {tuple(x.shape)} or n_heads {n_heads}")
    return torch.stack(x.chunk(n_heads, dim=-1), dim=1)


def merge_with_cat(x):
    if x.dim() != 4:
        raise ValueError(f"x must have 4 axes, got {tuple(x.shape)}")
    return torch.cat(x.unbind(dim=1), dim=-1)


class EinsumAttention(nn.Module):
    """Correct, with einsum and torch.where instead of reshapes and masked_fill."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        if d_model % n_heads:
            raise ValueError("n_heads must divide d_model")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.w_q, self.w_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.w_v, self.w_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        B, T_q, T_k = _check_inputs(query, key, value, self.d_model)
        mask = attention_mask(mask, B, self.n_heads, T_q, T_k)
        h, d = self.n_heads, self.d_head
        q = self.w_q(query).unflatten(-1, (h, d))
        k = self.w_k(key).unflatten(-1, (h, d))
        v = self.w_v(value).unflatten(-1, (h, d))
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) * d ** -0.5
        if mask is not None:
            scores = torch.where(mask, scores, torch.tensor(-math.inf))
        weights = F.softmax(scores, dim=-1)
        heads = torch.einsum("bhqk,bkhd->bqhd", weights, v)
        return self.w_o(heads.flatten(-2)), weights


class LoopAttention(nn.Module):
    """Correct, with a Python loop over the heads inside forward."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        if d_model % n_heads:
            raise ValueError("n_heads must divide d_model")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        for name in ("w_q", "w_k", "w_v", "w_o"):
            setattr(self, name, nn.Linear(d_model, d_model))

    def forward(self, query, key, value, mask=None):
        B, T_q, T_k = _check_inputs(query, key, value, self.d_model)
        mask = attention_mask(mask, B, self.n_heads, T_q, T_k)
        q, k, v = self.w_q(query), self.w_k(key), self.w_v(value)
        outs, maps = [], []
        for i in range(self.n_heads):
            part = slice(i * self.d_head, (i + 1) * self.d_head)
            s = q[..., part] @ k[..., part].transpose(1, 2) / math.sqrt(self.d_head)
            if mask is not None:
                s = s.masked_fill(~mask[:, min(i, mask.shape[1] - 1)], -1e9)
            a = s.softmax(-1)
            outs.append(a @ v[..., part])
            maps.append(a)
        return self.w_o(torch.cat(outs, -1)), torch.stack(maps, 1)


def copy_with_chunk(ours, theirs):
    if not isinstance(theirs, nn.MultiheadAttention) or not theirs.batch_first:
        raise ValueError("theirs must be nn.MultiheadAttention(batch_first=True)")
    if not theirs._qkv_same_embed_dim or theirs.embed_dim != ours.d_model:
        raise ValueError("sizes differ")
    if theirs.num_heads != ours.n_heads:
        raise ValueError("heads differ")
    weights = theirs.in_proj_weight.chunk(3)
    biases = theirs.in_proj_bias.chunk(3)
    for layer, w, b in zip((ours.w_q, ours.w_k, ours.w_v), weights, biases):
        layer.weight.data = w.detach().clone()
        layer.bias.data = b.detach().clone()
    ours.w_o.load_state_dict(theirs.out_proj.state_dict())
    return ours


def one_by_one_with_linear(x, mha):
    if x.dim() != 3 or x.shape[-1] != mha.d_model:
        raise ValueError(f"bad x {tuple(x.shape)}")
    dh = mha.d_model // mha.n_heads
    outs, maps = [], []
    for i in range(mha.n_heads):
        r = slice(i * dh, (i + 1) * dh)
        q = F.linear(x, mha.w_q.weight[r], mha.w_q.bias[r])
        k = F.linear(x, mha.w_k.weight[r], mha.w_k.bias[r])
        v = F.linear(x, mha.w_v.weight[r], mha.w_v.bias[r])
        a = torch.softmax(q @ k.mT / dh ** 0.5, dim=-1)
        outs.append(a @ v)
        maps.append(a)
    return F.linear(torch.cat(outs, -1), mha.w_o.weight, mha.w_o.bias), torch.stack(maps, 1)


def count_by_layers(d_model, n_heads):
    if not isinstance(d_model, int) or not isinstance(n_heads, int) or d_model <= 0 or n_heads <= 0:
        raise ValueError("d_model and n_heads must be positive ints")
    if d_model % n_heads:
        raise ValueError("n_heads must divide d_model")
    per_layer = d_model * d_model + d_model
    return sum(per_layer for _ in ("w_q", "w_k", "w_v", "w_o"))


def down_up_with_t(mha, head):
    if not isinstance(head, int) or not 0 <= head < mha.n_heads:
        raise ValueError(f"no head {head!r}")
    d = mha.d_model // mha.n_heads
    down = mha.w_v.weight.t()[:, head * d:(head + 1) * d]
    up = mha.w_o.weight.t()[head * d:(head + 1) * d, :]
    return down.detach(), up.detach()


@pytest.mark.parametrize("name, fn", [
    ("split_heads", split_with_view_and_permute),
    ("split_heads", split_with_chunks),
    ("merge_heads", merge_with_cat),
    ("MultiHeadAttention", EinsumAttention),
    ("MultiHeadAttention", LoopAttention),
    ("copy_from_torch", copy_with_chunk),
    ("heads_one_by_one", one_by_one_with_linear),
    ("mha_parameter_count", count_by_layers),
    ("value_down_up", down_up_with_t),
])
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_correct_alternatives_pass(name, fn, hidden, capsys):
    check(name, fn, hidden=hidden)
    assert capsys.readouterr().out.startswith(f"✓ {name}")


def test_the_check_leaves_torch_as_it_found_it():
    torch.manual_seed(123)
    state = torch.get_rng_state()
    threads = torch.get_num_threads()
    check("MultiHeadAttention", EinsumAttention)
    assert torch.equal(torch.get_rng_state(), state)
    assert torch.get_num_threads() == threads


# ----------------------------------------------------------------- forbidden shortcuts

class WrapsTorch(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.inner = nn.MultiheadAttention(d_model, n_heads, batch_first=True)

    def forward(self, query, key, value, mask=None):
        return self.inner(query, key, value, average_attn_weights=False)


class CallsSdpa(ref.MultiHeadAttention.__bases__[0]):  # nn.Module, spelled so the scan must look
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads, self.d_model = n_heads, d_model
        for name in ("w_q", "w_k", "w_v", "w_o"):
            setattr(self, name, nn.Linear(d_model, d_model))

    def forward(self, query, key, value, mask=None):
        q = split_with_chunks(self.w_q(query), self.n_heads)
        k = split_with_chunks(self.w_k(key), self.n_heads)
        v = split_with_chunks(self.w_v(value), self.n_heads)
        out = F.scaled_dot_product_attention(q, k, v)
        return self.w_o(merge_with_cat(out)), None


from torch.nn.functional import scaled_dot_product_attention as attend  # noqa: E402  (an alias)


class CallsSdpaByAlias(CallsSdpa):
    def forward(self, query, key, value, mask=None):
        q = split_with_chunks(self.w_q(query), self.n_heads)
        k = split_with_chunks(self.w_k(key), self.n_heads)
        v = split_with_chunks(self.w_v(value), self.n_heads)
        return self.w_o(merge_with_cat(attend(q, k, v))), None


class BuiltOnTheReference(ref.MultiHeadAttention):
    pass


@pytest.mark.parametrize("cls, words", [
    (WrapsTorch, ["nn.MultiheadAttention", "__init__"]),
    (CallsSdpa, ["F.scaled_dot_product_attention", "forward"]),
    (CallsSdpaByAlias, ["scaled_dot_product_attention (as `attend`)"]),
])
def test_library_attention_inside_the_module_is_rejected(cls, words):
    message = failure("MultiHeadAttention", cls)
    assert message.startswith("MultiHeadAttention uses something this exercise asks you to do by hand")
    for word in words:
        assert word in message
    assert "oracle" in message


def test_a_module_built_on_the_reference_is_rejected():
    assert "reference solution" in failure("MultiHeadAttention", BuiltOnTheReference)


from grader.reference import split_heads as given_split  # noqa: E402


def split_by_reference(x, n_heads):
    return given_split(x, n_heads)


def count_with_a_module(d_model, n_heads):
    return sum(p.numel() for p in nn.MultiheadAttention(d_model, n_heads).parameters())


def one_by_one_calling_the_module(x, mha):
    return mha(x, x, x)


def test_other_shortcuts_are_rejected():
    assert "split_heads (as `given_split`)" in failure("split_heads", split_by_reference)
    message = failure("mha_parameter_count", count_with_a_module)
    assert ".parameters()" in message and "formula" in message
    message = failure("heads_one_by_one", one_by_one_calling_the_module)
    assert "raised RuntimeError" in message and "compute each head yourself" in message


# ----------------------------------------------------------------- layout, gradients, stubs

class Layout(nn.Module):
    def __init__(self, d_model, n_heads, w_o=None, bias=True, skip=()):
        super().__init__()
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        for name in ("w_q", "w_k", "w_v"):
            if name not in skip:
                setattr(self, name, nn.Linear(d_model, d_model, bias=bias))
        if "w_o" not in skip:
            self.w_o = nn.Linear(w_o or d_model, d_model, bias=bias)

    def forward(self, query, key, value, mask=None):
        return EinsumAttention.forward(self, query, key, value, mask)


class NoOutputLayer(Layout):
    def __init__(self, d_model, n_heads):
        super().__init__(d_model, n_heads, skip=("w_o",))


class OutputFromOneHead(Layout):
    def __init__(self, d_model, n_heads):
        super().__init__(d_model, n_heads, w_o=d_model // n_heads)


class NoBias(Layout):
    def __init__(self, d_model, n_heads):
        super().__init__(d_model, n_heads, bias=False)


class KeysAsConv(Layout):
    def __init__(self, d_model, n_heads):
        super().__init__(d_model, n_heads)
        self.w_k = nn.Conv1d(d_model, d_model, 1)


@pytest.mark.parametrize("cls, words", [
    (NoOutputLayer, ["creates no layer `self.w_o`", "nn.Linear(d_model, d_model) = nn.Linear(4, 4)"]),
    (OutputFromOneHead, ["d_head inputs", "concatenated", "averaging"]),
    (NoBias, ["self.w_q without a bias", "bias=True"]),
    (KeysAsConv, ["makes self.w_k a Conv1d"]),
])
def test_a_wrong_layout_is_explained_without_pointing_at_the_grader(cls, words):
    message = failure("MultiHeadAttention", cls)
    # A finding about the learner's __init__, not an error their code raised.
    assert message.startswith("MultiHeadAttention is not right yet: your `__init__` ")
    assert "raised" not in message and "ModuleLayoutError" not in message
    assert f"Found when the check built {cls.__name__}(d_model=" in message
    for word in words:
        assert word in message
    assert "of your code" not in message  # the error comes from the check, not a learner line


class AveragedHeadOutputs(Layout):
    """The reviewer's learner: the heads' outputs averaged, then w_o from d_head."""

    def __init__(self, d_model, n_heads):
        super().__init__(d_model, n_heads, w_o=d_model // n_heads)

    def forward(self, query, key, value, mask=None):
        B, T_q, T_k = _check_inputs(query, key, value, self.d_model)
        mask = attention_mask(mask, B, self.n_heads, T_q, T_k)
        q = split_with_chunks(self.w_q(query), self.n_heads)
        k = split_with_chunks(self.w_k(key), self.n_heads)
        v = split_with_chunks(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, -math.inf)
        weights = scores.softmax(-1)
        return self.w_o((weights @ v).mean(dim=1)), weights


@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_averaged_heads_hear_about_their_init_and_the_check_recovers(hidden, capsys):
    message = failure("MultiHeadAttention", AveragedHeadOutputs, hidden=hidden)
    assert message.startswith("MultiHeadAttention is not right yet: your `__init__` makes "
                              "self.w_o take 2 = d_head inputs.")
    # The layout is judged before the cases, and the ordinary check runs afterwards.
    check("MultiHeadAttention", EinsumAttention, hidden=hidden)
    assert capsys.readouterr().out.startswith("✓ MultiHeadAttention")
    assert "not implemented yet" in failure("MultiHeadAttention", Stub, hidden=hidden)


class Detached(EinsumAttention):
    def forward(self, query, key, value, mask=None):
        out, weights = super().forward(query, key, value, mask)
        return out.detach(), weights


class KeysFrozen(EinsumAttention):
    def forward(self, query, key, value, mask=None):
        B, T_q, T_k = _check_inputs(query, key, value, self.d_model)
        mask = attention_mask(mask, B, self.n_heads, T_q, T_k)
        q = split_with_chunks(self.w_q(query), self.n_heads)
        k = split_with_chunks(F.linear(key, self.w_k.weight.detach(), self.w_k.bias.detach()),
                              self.n_heads)
        v = split_with_chunks(self.w_v(value), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, -math.inf)
        weights = scores.softmax(-1)
        return self.w_o(merge_with_cat(weights @ v)), weights


def test_right_values_without_gradients_are_rejected():
    message = failure("MultiHeadAttention", Detached)
    assert "carries no gradient" in message and "cannot be trained" in message
    message = failure("MultiHeadAttention", KeysFrozen)
    assert "no gradient reaches w_k" in message


class Stub(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        raise NotImplementedError()


def test_a_stub_hears_not_implemented_first():
    assert "MultiHeadAttention is not implemented yet" in failure("MultiHeadAttention", Stub)


def test_an_error_inside_forward_points_at_the_learners_line():
    class Crashes(EinsumAttention):
        def forward(self, query, key, value, mask=None):
            q = self.w_q(query).view(2, 3)
            return q, q

    message = failure("MultiHeadAttention", Crashes)
    assert "raised RuntimeError" in message
    assert "of your code: `q = self.w_q(query).view(2, 3)`" in message


# ----------------------------------------------------------------- what a learner reads

def test_failures_show_the_inputs_a_learner_can_redo():
    message = failure("copy_from_torch", lambda ours, theirs: ours)
    assert "in_proj_weight (rows 0:2 query, 2:4 key, 4:6 value) =" in message
    assert "'w_q.weight'" in message
    message = failure("value_down_up", lambda mha, head: (mha.w_v.weight[:2].T, mha.w_o.weight[:, :2].T))
    assert "w_v.weight =" in message and "w_o.weight =" in message


def test_module_failures_compare_the_weights_first():
    class OverQueries(EinsumAttention):
        def forward(self, query, key, value, mask=None):
            out, weights = super().forward(query, key, value, mask)
            return out, weights.transpose(-2, -1)

    message = failure("MultiHeadAttention", OverQueries)
    assert "What differs: the weights (item 1)" in message


def test_mask_polarity_diagnosis_mentions_torchs_opposite_convention():
    from grader.exercises import get

    inverted = next(m for m in get("MultiHeadAttention").misconceptions if m.name == "mask polarity inverted")
    message = failure("MultiHeadAttention", inverted.impl)
    assert "True means 'may attend'" in message and "key_padding_mask" in message


def copy_with_transposed_columns(ours, theirs):
    """The in_proj blocks transposed, written the other way round: columns of W.T."""
    d = theirs.embed_dim
    if theirs.embed_dim != ours.d_model or theirs.num_heads != ours.n_heads:
        raise ValueError("sizes differ")
    if not theirs.batch_first or not theirs._qkv_same_embed_dim:
        raise ValueError("unsupported module")
    WT = theirs.in_proj_weight.T
    with torch.no_grad():
        for i, layer in enumerate((ours.w_q, ours.w_k, ours.w_v)):
            layer.weight.copy_(WT[:, i * d:(i + 1) * d])
            layer.bias.copy_(theirs.in_proj_bias[i * d:(i + 1) * d])
        ours.w_o.load_state_dict(theirs.out_proj.state_dict())
    return ours


def test_copy_failures_name_the_parameters_that_differ_plainly():
    message = failure("copy_from_torch", copy_with_transposed_columns)
    assert ("What differs: w_q.weight, w_k.weight and w_v.weight differ from torch's (w_q.bias, "
            "w_k.bias, w_v.bias, w_o.weight and w_o.bias are right). In w_q.weight: ") in message
    assert "['" not in message.split("What differs:", 1)[1]
    assert "Diagnosis: you copied the blocks of in_proj_weight transposed (W[...].T)" in message
