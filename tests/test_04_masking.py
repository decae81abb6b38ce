"""grader.check on lesson 04: correct code written other ways passes, shortcuts are named,
to_mha_key_padding_mask is judged by torch's nn.MultiheadAttention itself, and failures
read like a teaching assistant's explanation."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from grader import CheckFailed, check
from grader.exercises import masking as lesson


def failure(name, fn, hidden=False) -> str:
    with pytest.raises(CheckFailed) as info:
        check(name, fn, hidden=hidden)
    return str(info.value)


def _positive(T):
    if not isinstance(T, (int, np.integer)) or isinstance(T, bool) or T < 1:
        raise ValueError(f"T must be a positive integer, got {T!r}")
    return int(T)


def _lengths(lengths, T):
    arr = np.asarray(lengths)
    if arr.ndim != 1 or np.any(arr != np.round(arr)) or np.any(arr < 0) or np.any(arr > T):
        raise ValueError(f"lengths must be whole numbers in 0..{T}, got {arr.tolist()}")
    return arr.astype(int)


# ----------------------------------------------------------------- correct, written differently

def causal_by_comparison(T):
    T = _positive(T)
    i = np.arange(T)
    return i[:, None] >= i[None, :]


def padding_by_comprehension(lengths, T):
    T = _positive(T)
    return np.array([[j < n for j in range(T)] for n in _lengths(lengths, T)], dtype=bool)


def attention_with_logical_and(lengths, T, causal=True):
    T = _positive(T)
    lengths = _lengths(lengths, T)
    if not isinstance(causal, bool):
        raise ValueError("causal must be a bool")
    keys = np.arange(T)[None, None, :] < lengths[:, None, None]
    future = np.arange(T)[None, :, None] < np.arange(T)[None, None, :]
    return np.logical_and(keys, ~future) if causal else np.repeat(keys, T, axis=1)


def softmax_then_nan_to_num(scores, mask):
    scores = np.asarray(scores)
    scores = scores.astype(float) if scores.dtype.kind != "f" else scores
    mask = np.asarray(mask)
    if mask.dtype != bool or np.broadcast_shapes(mask.shape, scores.shape) != scores.shape:
        raise ValueError(f"bad mask {mask.dtype} {mask.shape} for scores {scores.shape}")
    filled = np.where(mask, scores, -np.inf)
    with np.errstate(invalid="ignore"):
        e = np.exp(filled - filled.max(axis=-1, keepdims=True))
        return np.nan_to_num(e / e.sum(axis=-1, keepdims=True))


def attention_with_einsum(Q, K, V, mask=None):
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    if Q.shape[-1] != K.shape[-1] or K.shape[-2] != V.shape[-2]:
        raise ValueError(f"shapes {Q.shape}, {K.shape}, {V.shape} do not fit")
    scores = np.einsum("...qd,...kd->...qk", Q, K) / np.sqrt(Q.shape[-1])
    weights = softmax_then_nan_to_num(scores, np.ones(scores.shape[-2:], bool) if mask is None else mask)
    return np.einsum("...qk,...kv->...qv", weights, V), weights


def columns_as_transpose(T):
    return causal_by_comparison(T).T


def mha_mask_with_torch_ops(lengths, T):
    T = _positive(T)
    lengths = torch.as_tensor(_lengths(lengths, T))
    return torch.arange(T)[None, :] >= lengths[:, None]


def prefix_with_divided_rows(X):
    X = np.asarray(X)
    if X.ndim < 2:
        raise ValueError(f"X must be [..., T, d], got shape {X.shape}")
    T = X.shape[-2]
    W = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]
    return np.einsum("ij,...jd->...id", W, X)


def causal_one_position_at_a_time(attend, T, d, seed=0):
    if not callable(attend):
        raise ValueError("attend must be callable")
    T, d = _positive(T), _positive(d)
    rng = np.random.default_rng(seed)
    for _ in range(2):
        X = rng.normal(size=(T, d))
        base = attend(X)
        for j in range(1, T):          # change token j alone; outputs before j must hold
            Y = X.copy()
            Y[j] = rng.normal(size=d)
            if not np.allclose(attend(Y)[:j], base[:j]):
                return False
    return True


@pytest.mark.parametrize(
    "name, fn",
    [
        ("causal_mask", causal_by_comparison),
        ("padding_mask", padding_by_comprehension),
        ("attention_mask", attention_with_logical_and),
        ("masked_softmax", softmax_then_nan_to_num),
        ("masked_attention", attention_with_einsum),
        ("causal_mask_columns", columns_as_transpose),
        ("to_mha_key_padding_mask", mha_mask_with_torch_ops),
        ("prefix_average", prefix_with_divided_rows),
        ("is_causal", causal_one_position_at_a_time),
    ],
)
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_correct_alternatives_pass(name, fn, hidden, capsys):
    check(name, fn, hidden=hidden)
    assert "✓" in capsys.readouterr().out


# ----------------------------------------------------------------- forbidden shortcuts

def softmax_from_torch(scores, mask):
    s = torch.as_tensor(np.asarray(scores, dtype=float))
    m = torch.as_tensor(np.asarray(mask))
    return torch.nan_to_num(torch.softmax(s.masked_fill(~m, -torch.inf), dim=-1)).numpy()


def attention_from_torch(Q, K, V, mask=None):
    q, k, v = (torch.as_tensor(np.asarray(a, dtype=float)) for a in (Q, K, V))
    m = None if mask is None else torch.as_tensor(np.asarray(mask))
    return F.scaled_dot_product_attention(q, k, v, attn_mask=m).numpy(), None


def prefix_with_cumsum(X):
    X = np.asarray(X, dtype=float)
    return np.cumsum(X, axis=-2) / np.arange(1, X.shape[-2] + 1)[:, None]


def prefix_with_loop(X):
    X = np.asarray(X, dtype=float)
    return np.stack([X[..., : i + 1, :].mean(axis=-2) for i in range(X.shape[-2])], axis=-2)


@pytest.mark.parametrize(
    "name, fn, named",
    [
        ("masked_softmax", softmax_from_torch, "a library softmax"),
        ("masked_attention", attention_from_torch, "torch.nn.functional.scaled_dot_product_attention"),
        ("prefix_average", prefix_with_cumsum, "np.cumsum"),
        ("prefix_average", prefix_with_loop, "a comprehension"),
    ],
)
def test_shortcuts_are_found_and_named(name, fn, named):
    message = failure(name, fn)
    assert "asks you to do by hand" in message and named in message


def test_own_helper_called_softmax_is_fine(capsys):
    namespace = {"np": np}
    exec(
        "def softmax(x):\n"
        "    e = np.exp(x - np.max(x, axis=-1, keepdims=True))\n"
        "    return e / e.sum(axis=-1, keepdims=True)\n"
        "def masked_softmax(scores, mask):\n"
        "    scores, mask = np.asarray(scores), np.asarray(mask)\n"
        "    if mask.dtype != bool or np.broadcast_shapes(mask.shape, scores.shape) != scores.shape:\n"
        "        raise ValueError('mask must be boolean and fit the scores')\n"
        "    allowed = np.broadcast_to(mask, scores.shape).any(axis=-1, keepdims=True)\n"
        "    safe = np.where(allowed, np.where(mask, scores, -np.inf), 0.0)\n"
        "    return np.where(allowed, softmax(safe), 0.0)\n",
        namespace,
    )
    check("masked_softmax", namespace["masked_softmax"])
    assert "✓" in capsys.readouterr().out


# ----------------------------------------------------------------- torch's real behaviour

def test_to_mha_check_runs_torch_multihead_attention(monkeypatch, capsys):
    calls = {"masked": 0, "alone": 0}
    masked, alone = lesson.mha_with_mask, lesson.mha_on_real_tokens

    def spy_masked(*args):
        calls["masked"] += 1
        return masked(*args)

    def spy_alone(*args):
        calls["alone"] += 1
        return alone(*args)

    monkeypatch.setattr(lesson, "mha_with_mask", spy_masked)
    monkeypatch.setattr(lesson, "mha_on_real_tokens", spy_alone)
    check("to_mha_key_padding_mask", mha_mask_with_torch_ops)
    assert "✓" in capsys.readouterr().out
    assert calls["masked"] >= 5 and calls["alone"] >= 5


def test_torch_judges_behaviour_not_the_hand_written_mask(monkeypatch):
    """If torch's truth is replaced by attention that sees the padding, the reference mask
    itself fails: the verdict comes from torch, not from comparing two boolean tensors."""
    def sees_everything(lengths, T):
        return lesson.mha_with_mask(lengths, T, None)

    monkeypatch.setattr(lesson, "mha_on_real_tokens", sees_everything)
    from grader.reference import to_mha_key_padding_mask

    message = failure("to_mha_key_padding_mask", to_mha_key_padding_mask)
    assert "nn.MultiheadAttention" in message


def mha_mask_as_uint8(lengths, T):
    return mha_mask_with_torch_ops(lengths, T).to(torch.uint8)


def mha_mask_of_the_course(lengths, T):
    return ~mha_mask_with_torch_ops(lengths, T)


def test_mha_messages_describe_what_torch_did():
    assert "dtype is torch.uint8, expected torch.bool" in failure("to_mha_key_padding_mask", mha_mask_as_uint8)
    message = failure("to_mha_key_padding_mask", mha_mask_of_the_course)
    assert "given your mask, torch's nn.MultiheadAttention ignores every key of sentence 0" in message
    assert "returns NaN" in message
    assert "True means *ignore this key*" in message


# ----------------------------------------------------------------- explaining failures

def softmax_masks_in_place(scores, mask):
    scores = np.asarray(scores, dtype=float)
    scores[~np.broadcast_to(mask, scores.shape)] = -np.inf   # changes the caller's array
    return softmax_then_nan_to_num(scores, np.ones(scores.shape, bool))


def test_masking_the_callers_scores_in_place_is_reported():
    assert "changed its input `scores` in place" in failure("masked_softmax", softmax_masks_in_place)


def softmax_accepting_float_masks(scores, mask):
    return softmax_then_nan_to_num(scores, np.asarray(mask).astype(bool))


def test_a_float_mask_must_be_rejected():
    message = failure("masked_softmax", softmax_accepting_float_masks)
    assert "should reject this input with a ValueError" in message
    assert "the mask holds floats, not booleans" in message


def test_is_causal_failure_names_the_layer_it_was_given():
    def always_true(attend, T, d, seed=0):
        if not callable(attend):
            raise ValueError("attend must be callable")
        if T < 1 or d < 1:
            raise ValueError("T and d must be positive")
        return True

    message = failure("is_causal", always_true)
    assert "<self-attention with no mask>" in message
    assert "got True, expected False" in message


def test_mask_after_softmax_is_diagnosed_in_masked_attention():
    message = failure("masked_attention", lesson._ma_after)
    assert "Diagnosis: you applied the mask after the softmax" in message
    assert "denominator" in message


def test_a_stub_is_not_implemented_for_every_exercise():
    def stub(*args, **kwargs):
        raise NotImplementedError()

    for name in ["causal_mask", "padding_mask", "attention_mask", "masked_softmax", "masked_attention",
                 "causal_mask_columns", "to_mha_key_padding_mask", "prefix_average", "is_causal"]:
        assert "not implemented yet" in failure(name, stub)


def test_mask_none_passed_on_to_masked_softmax_is_diagnosed():
    def passes_none_on(Q, K, V, mask=None):
        Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
        if mask is not None and np.asarray(mask).dtype != bool:
            raise ValueError("mask must be boolean")
        scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
        weights = lesson.ref.masked_softmax(scores, mask)
        return weights @ V, weights

    message = failure("masked_attention", passes_none_on)
    assert "(mask=None: no mask)" in message
    assert "Diagnosis: mask=None means no mask" in message
    assert "Handle it before calling masked_softmax" in message


def _released_masked_attention(body: str, keep_given_mask_check: bool = True):
    """The released notebook's masked_attention cell, with ``body`` written in place of the
    stub: what a learner's function is, given lines included."""
    import json
    from pathlib import Path

    nb = json.loads(Path(__file__).parents[1].joinpath(
        "notebooks", "04_masking", "04_masking.ipynb").read_text(encoding="utf-8"))
    source = next("".join(c["source"]) for c in nb["cells"] if c.get("id") == "masked_attention")
    stub = "    # YOUR CODE HERE\n    raise NotImplementedError()"
    assert stub in source
    source = source.replace(stub, body)
    given_check = "    if mask is not None:\n        mask = bool_mask(mask)"
    assert given_check in source
    if not keep_given_mask_check:
        source = source.replace(given_check, "    pass")
    from grader.validation import as_array, bool_mask

    namespace = {"np": np, "as_array": as_array, "bool_mask": bool_mask}
    exec(compile(source, "<masked_attention cell>", "exec"), namespace)
    return namespace["masked_attention"]


INLINE_SOFTMAX_BODY = """\
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    allowed = np.ones(scores.shape[-2:], dtype=bool) if mask is None else mask
    filled = np.where(allowed, scores, -np.inf)
    top = filled.max(axis=-1, keepdims=True)
    e = np.exp(filled - np.where(np.isfinite(top), top, 0.0))
    total = e.sum(axis=-1, keepdims=True)
    weights = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
    return weights @ V, weights"""


def test_the_given_lines_reject_a_float_mask_even_without_masked_softmax(capsys):
    # A learner may write the softmax inline instead of calling masked_softmax; the given
    # lines of the released cell still reject a float mask.
    check("masked_attention", _released_masked_attention(INLINE_SOFTMAX_BODY))
    assert "✓ masked_attention" in capsys.readouterr().out
    # Without those lines the same body accepts a float mask, and the check says so.
    message = failure("masked_attention", _released_masked_attention(INLINE_SOFTMAX_BODY, False))
    assert "the mask holds floats, not booleans" in message
