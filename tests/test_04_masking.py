"""Lesson 04: masks, masked softmax and attention, torch's key_padding_mask, the prefix
average and the causal property.

First grader.check: correct code written other ways passes, shortcuts are named,
to_mha_key_padding_mask is judged by torch's nn.MultiheadAttention itself, is_causal is
handed attention-like functions built from torch's own attention, and failures read like
a teaching assistant's explanation. Then the references against independent oracles:
torch's scaled_dot_product_attention (boolean attn_mask and is_causal), torch's
nn.MultiheadAttention (key_padding_mask), and attention over the real tokens alone, on
property-based masks and lengths."""
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from grader import CheckFailed, check
from grader.learner.validation import positive_int
from grader import reference as ref
from grader.learner.fixtures import build
from grader.learner.plugins import lesson_part
from sources import handed_over
from stated_rules import broken

LEARNER_SIDE = lesson_part("04_masking")  # the lesson's own fixtures and comparison


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
    masked, alone = LEARNER_SIDE.mha_with_mask, LEARNER_SIDE.mha_on_real_tokens

    def spy_masked(*args):
        calls["masked"] += 1
        return masked(*args)

    def spy_alone(*args):
        calls["alone"] += 1
        return alone(*args)

    monkeypatch.setattr(LEARNER_SIDE, "mha_with_mask", spy_masked)
    monkeypatch.setattr(LEARNER_SIDE, "mha_on_real_tokens", spy_alone)
    check("to_mha_key_padding_mask", mha_mask_with_torch_ops)
    assert "✓" in capsys.readouterr().out
    assert calls["masked"] >= 5 and calls["alone"] >= 5


def test_torch_judges_behaviour_not_the_hand_written_mask(monkeypatch):
    """If torch's truth is replaced by attention that sees the padding, the reference mask
    itself fails: the verdict comes from torch, not from comparing two boolean tensors."""
    with_mask = LEARNER_SIDE.mha_with_mask

    def sees_everything(lengths, T):
        return with_mask(lengths, T, None)

    monkeypatch.setattr(LEARNER_SIDE, "mha_on_real_tokens", sees_everything)
    message = failure("to_mha_key_padding_mask", ref.to_mha_key_padding_mask)
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


# ----------------------------------------------------------------- the rules the notebook states

def causal_as_floats(T):
    T = _positive(T)
    return np.tril(np.ones((T, T)))


def causal_without_the_given_line(T):
    return np.tril(np.ones((int(T), int(T)), dtype=bool))


def columns_without_the_given_line(T):
    T = max(int(T), 0)
    return np.triu(np.ones((T, T), dtype=bool))


def padding_as_ints(lengths, T):
    return padding_by_comprehension(lengths, T).astype(int)


def padding_without_the_given_lines(lengths, T):
    return np.arange(T)[None, :] < np.asarray(lengths)[:, None]


def attention_mask_always_causal(lengths, T, causal=True):
    """The causal flag checked, then ignored."""
    if not isinstance(causal, bool):
        raise ValueError("causal must be a bool")
    return attention_with_logical_and(lengths, T, True)


def attention_mask_without_the_given_lines(lengths, T, causal=True):
    keys = padding_without_the_given_lines(lengths, T)[:, None, :]
    return keys & np.tri(T, dtype=bool) if causal else np.repeat(keys, T, axis=1)


def softmax_with_nan_rows(scores, mask):
    """-inf, then lesson 02's softmax: a row with no allowed key is 0/0."""
    scores, mask = np.asarray(scores, dtype=float), np.asarray(mask)
    if mask.dtype != bool:
        raise ValueError("the mask must be boolean")
    filled = np.where(mask, scores, -np.inf)
    with np.errstate(invalid="ignore"):
        e = np.exp(filled - filled.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)


def softmax_unshifted(scores, mask):
    """exp of the scores as they are, masked keys set to 0 after."""
    scores, mask = np.asarray(scores, dtype=float), np.asarray(mask)
    if mask.dtype != bool:
        raise ValueError("the mask must be boolean")
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.where(mask, np.exp(scores), 0.0)
        total = e.sum(axis=-1, keepdims=True)
        return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def softmax_wanting_a_mask_of_the_scores_shape(scores, mask):
    scores, mask = np.asarray(scores, dtype=float), np.asarray(mask)
    if mask.dtype != bool or mask.shape != scores.shape:
        raise ValueError(f"the mask {mask.shape} must have the shape of the scores {scores.shape}")
    return softmax_then_nan_to_num(scores, mask)


def attention_reading_none_as_masking_everything(Q, K, V, mask=None):
    if mask is None:
        mask = np.zeros((np.shape(Q)[-2], np.shape(K)[-2]), dtype=bool)
    return attention_with_einsum(Q, K, V, mask)


def attention_with_nan_rows(Q, K, V, mask=None):
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    if Q.shape[-1] != K.shape[-1] or K.shape[-2] != V.shape[-2]:
        raise ValueError(f"shapes {Q.shape}, {K.shape}, {V.shape} do not fit")
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    weights = softmax_with_nan_rows(scores, np.ones(scores.shape[-2:], bool) if mask is None else mask)
    return weights @ V, weights


def attention_accepting_float_masks(Q, K, V, mask=None):
    return attention_with_einsum(Q, K, V, None if mask is None else np.asarray(mask).astype(bool))


def prefix_taking_a_vector(X):
    return prefix_with_divided_rows(np.atleast_2d(X))


def mha_mask_as_numpy(lengths, T):
    return mha_mask_with_torch_ops(lengths, T).numpy()


def mha_mask_without_the_given_lines(lengths, T):
    return torch.arange(T)[None, :] >= torch.as_tensor(np.asarray(lengths))[:, None]


def is_causal_without_the_given_lines(attend, T, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, d))
    before = np.asarray(attend(X))
    for t in range(T - 1):
        changed = X.copy()
        changed[t + 1:] = rng.normal(size=(T - t - 1, d))
        if not np.allclose(np.asarray(attend(changed))[:t + 1], before[:t + 1]):
            return False
    return True


def is_causal_moving_the_later_tokens(attend, T, d, seed=0):
    """The later tokens moved by 1, not drawn again: a change that any attention notices."""
    if not callable(attend):
        raise ValueError("attend must be a function")
    T, d = positive_int(T, "T"), positive_int(d, "d")
    X = np.random.default_rng(seed).normal(size=(T, d))
    before = np.asarray(attend(X))
    for t in range(T - 1):
        changed = X.copy()
        changed[t + 1:] += 1
        if not np.allclose(np.asarray(attend(changed))[:t + 1], before[:t + 1]):
            return False
    return True


GIVEN = "The first lines of each function (checking the input) are given."
BREAKS = {
    ("causal_mask", "a `[T, T]` array of dtype `bool`"): causal_as_floats,
    ("causal_mask", GIVEN): causal_without_the_given_line,
    ("causal_mask_columns", GIVEN): columns_without_the_given_line,
    ("padding_mask", "a `[B, T]` boolean array"): padding_as_ints,
    ("padding_mask", GIVEN): padding_without_the_given_lines,
    ("attention_mask", "With `causal=False` it masks only the padding."):
        attention_mask_always_causal,
    ("attention_mask", GIVEN): attention_mask_without_the_given_lines,
    ("masked_softmax", "library softmax functions are not accepted here"): softmax_from_torch,
    ("masked_softmax", "**A row with no allowed key:** all zeros, never NaN."): softmax_with_nan_rows,
    ("masked_softmax", "**Large scores:** scores of ±1000 give no overflow, as in lesson 02."):
        softmax_unshifted,
    ("masked_softmax", "**Any batch axes:** `mask` broadcasts to the shape of `scores`"):
        softmax_wanting_a_mask_of_the_scores_shape,
    ("masked_softmax", GIVEN): softmax_accepting_float_masks,
    ("masked_attention", "calling torch's attention is not accepted here"): attention_from_torch,
    ("masked_attention", "`mask=None` means no mask"): attention_reading_none_as_masking_everything,
    ("masked_attention", "A query with no allowed key gets zero weights, so its output row is "
                         "zeros."): attention_with_nan_rows,
    ("masked_attention", GIVEN): attention_accepting_float_masks,
    ("prefix_average", "no Python loop and no `np.cumsum`"): prefix_with_cumsum,
    ("prefix_average", GIVEN): prefix_taking_a_vector,
    ("to_mha_key_padding_mask", "the `torch.bool` tensor that `key_padding_mask` expects, True "
                                "at the padding"): mha_mask_as_numpy,
    ("to_mha_key_padding_mask", GIVEN): mha_mask_without_the_given_lines,
    ("is_causal", GIVEN): is_causal_without_the_given_lines,
    ("is_causal", "replace the tokens *after* `t` (`X[t + 1:]`) with new random"):
        is_causal_moving_the_later_tokens,
}


@pytest.mark.parametrize("key", BREAKS, ids=lambda key: f"{key[0]}: {key[1][:40]}")
def test_an_answer_that_breaks_a_stated_rule_fails_and_names_it(key):
    assert not broken(key, BREAKS[key])


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


def causal_redrawing_token_t(attend, T, d, seed=0):
    """Re-draws token t with the later ones, for every t up to the last."""
    if not callable(attend):
        raise ValueError("attend must be callable")
    if T < 1 or d < 1:
        raise ValueError("T and d must be positive")
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, d))
    out = attend(X)
    for t in range(T):
        X_new = X.copy()
        X_new[t:] = rng.normal(size=X_new[t:].shape)
        if not np.allclose(attend(X_new)[: t + 1], out[: t + 1]):
            return False
    return True


def causal_redrawing_token_t_alone(attend, T, d, seed=0):
    if not callable(attend):
        raise ValueError("attend must be callable")
    if T < 1 or d < 1:
        raise ValueError("T and d must be positive")
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, d))
    out = np.asarray(attend(X))
    for t in range(T):
        X_new = X.copy()
        X_new[t] = rng.normal(size=d)
        if not np.allclose(np.asarray(attend(X_new))[: t + 1], out[: t + 1]):
            return False
    return True


@pytest.mark.parametrize("fn", [causal_redrawing_token_t, causal_redrawing_token_t_alone])
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_re_drawing_token_t_itself_is_diagnosed_on_one_token(fn, hidden):
    message = failure("is_causal", fn, hidden)
    # The smallest failing input has one token: the loop's only step re-draws token 0.
    assert "T = 1\n" in message and "got False, expected True" in message
    assert "Diagnosis: you re-drew token t itself (with the later tokens, or alone)" in message
    assert not handed_over(message, "04_masking")


def attention_masked_after_softmax(Q, K, V, mask=None):
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    if mask is not None:
        weights = weights * mask                       # the mask comes too late
    return weights @ V, weights


@pytest.mark.parametrize("kind", sorted(LEARNER_SIDE.ATTENDS))
def test_each_attend_fixture_is_as_causal_as_its_description_says(kind):
    """is_causal's cases hand over functions built from torch's own attention: each must be
    causal exactly when its description says so (from T = 3 on: with fewer tokens some
    leaks have nowhere to come from), whatever the seed."""
    attend = build(LEARNER_SIDE.attend_fixture(kind))
    causal = LEARNER_SIDE.ATTENDS[kind][1]
    for T, d, seed in [(3, 2, 0), (4, 1, 5), (6, 3, 11)]:
        assert ref.is_causal(attend, T, d, seed) is causal, (T, d, seed)
    X = np.random.default_rng(0).normal(size=(5, 3))
    assert attend(X).shape == X.shape


def test_attend_fixtures_are_torch_attention():
    X = np.random.default_rng(1).normal(size=(5, 3))
    x = torch.from_numpy(X)[None]
    made = lambda kind: build(LEARNER_SIDE.attend_fixture(kind))  # noqa: E731
    np.testing.assert_allclose(made("causal")(X), F.scaled_dot_product_attention(
        x, x, x, is_causal=True)[0].numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(made("causal -1e9")(X), made("causal")(X), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(made("full")(X), F.scaled_dot_product_attention(x, x, x)[0].numpy(),
                               rtol=1e-12, atol=1e-12)
    no_diagonal = made("no diagonal")(X)
    assert np.all(no_diagonal[0] == 0) and not np.isnan(no_diagonal).any()
    np.testing.assert_allclose(no_diagonal[1], X[0], rtol=1e-12)   # token 1 sees token 0 only
    with pytest.raises(ValueError, match="shape"):
        made("causal")(X[0])


RECORDED_ONLY = """
import sys
import numpy as np
import torch
from grader import check
def is_causal(attend, T, d, seed=0):
    if not callable(attend):
        raise ValueError("attend must be callable")
    if T < 1 or d < 1:
        raise ValueError("T and d must be positive")
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, d))
    before = np.asarray(attend(X))
    for t in range(T - 1):
        changed = X.copy()
        changed[t + 1:] = rng.normal(size=(T - t - 1, d))
        if not np.allclose(np.asarray(attend(changed))[: t + 1], before[: t + 1]):
            return False
    return True
def to_mha_key_padding_mask(lengths, T):
    lengths = np.asarray(lengths)
    if T < 1 or lengths.ndim != 1 or (lengths > T).any() or (lengths < 0).any():
        raise ValueError(f"bad lengths {lengths} for T = {T}")
    return torch.from_numpy(np.arange(T)[None, :] >= lengths[:, None])
check("is_causal", is_causal)
check("to_mha_key_padding_mask", to_mha_key_padding_mask)
print(sorted(m for m in sys.modules if (m.startswith('grader.lessons.') and m.count('.') >= 3 and not m.endswith('.learner')) or m.startswith('grader.reference')))
"""


def test_lesson_04_checks_run_from_the_recording_alone():
    """A released lesson-04 notebook checks is_causal (fixtures) and the key padding mask
    (judged by torch) with its recording and the learner's side only."""
    out = subprocess.run([sys.executable, "-c", RECORDED_ONLY], capture_output=True, text=True,
                         cwd="/")
    assert out.returncode == 0, out.stderr
    assert "✓ is_causal" in out.stdout and "✓ to_mha_key_padding_mask" in out.stdout, out.stdout
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout


def test_mask_after_softmax_is_diagnosed_in_masked_attention():
    message = failure("masked_attention", attention_masked_after_softmax)
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
        weights = ref.masked_softmax(scores, mask)
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
    from grader.learner.validation import as_array, bool_mask

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


# ================================================================= the references against oracles

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


def test_is_causal_that_starts_its_loop_at_1_is_caught_by_a_leak_into_the_first_output():
    def from_one(attend, T, d, seed=0):
        if not callable(attend):
            raise ValueError("attend must be callable")
        if T < 1 or d < 1:
            raise ValueError("T and d must be positive")
        rng = np.random.default_rng(seed)
        X = rng.standard_normal((T, d))
        before = attend(X)
        for t in range(1, T):                    # output 0 is never tried alone
            X_new = X.copy()
            X_new[t + 1:] = rng.standard_normal((T - t - 1, d))
            if not np.allclose(attend(X_new)[:t + 1], before[:t + 1]):
                return False
        return True

    message = failure("is_causal", from_one)
    assert "query 0 also sees key 1" in message, message


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
