"""The learner's side of lesson 04 (shipped in the kit).

* The ``attend`` fixture: an attention-like function of ``X [T, d]`` (causal or not, in
  many ways), for ``is_causal`` to probe. Each is made from torch's own functions, never
  from an answer of the lesson's.
* The ``kpm`` comparison, for ``to_mha_key_padding_mask``: a mask is judged by what
  torch's ``nn.MultiheadAttention`` does with it, on a fixed padded batch.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...learner.codec import Fixture
from ...learner.difference import FLOAT32, difference
from ...learner.comparisons import Comparison, Difference
from ...learner.fixtures import torch_mha
from ...learner.plugins import LESSONS
from ...learner.validation import shape_str

LESSON = LESSONS.of(__name__)  # what this folder adds registers through it


# ----------------------------------------------------------------------------- attend

def _scores(X):
    import torch

    t = torch.from_numpy(np.ascontiguousarray(X, dtype=np.float64))
    return t, t @ t.T / np.sqrt(X.shape[-1])


def _masked(X, allowed: np.ndarray, fill=None) -> np.ndarray:
    """Self-attention of X where only ``allowed`` keys count, with torch's own attention;
    a query with no allowed key gets zeros."""
    import torch
    import torch.nn.functional as F

    t = torch.from_numpy(np.ascontiguousarray(X, dtype=np.float64))[None]
    mask = torch.from_numpy(allowed)
    if fill is not None:  # masked scores set to a big negative number instead of -inf
        mask = torch.zeros(allowed.shape, dtype=torch.float64).masked_fill(~mask, fill)
    out = F.scaled_dot_product_attention(t, t, t, attn_mask=mask)[0]
    return torch.nan_to_num(out, nan=0.0).numpy()


def _after_softmax(X) -> np.ndarray:
    import torch

    t, s = _scores(X)
    w = torch.softmax(s, dim=-1) * torch.ones(s.shape, dtype=torch.bool).tril()
    return (w @ t).numpy()


def _tril(T: int, k: int = 0) -> np.ndarray:
    return np.tri(T, T, k, dtype=bool)


def _future_waves(X) -> np.ndarray:
    """Token i plus sin(2πx) summed over the tokens after it: the later tokens moved by a
    whole number leave it as it is, new random tokens do not."""
    waves = np.sin(2 * np.pi * X)
    later = np.cumsum(waves[::-1], axis=0)[::-1]  # row i: the sum over rows i..T-1
    return X + np.concatenate([later[1:], np.zeros_like(X[:1])])


def _leaks_into_first(T: int) -> np.ndarray:
    allowed = _tril(T)
    allowed[0, min(2, T - 1)] = True
    return allowed


def _first_sees_next(T: int) -> np.ndarray:
    allowed = _tril(T)
    allowed[0, min(1, T - 1)] = True
    return allowed


def _leaks_late(T: int) -> np.ndarray:
    allowed = _tril(T)
    allowed[max(T - 2, 0), T - 1] = True
    return allowed


ATTENDS = {
    # kind: (description, is it causal, function of X)
    "causal": ("self-attention of X with a causal mask", True,
               lambda X: _masked(X, _tril(len(X)))),
    "causal -1e9": ("causal self-attention with masked scores set to -1e9", True,
                    lambda X: _masked(X, _tril(len(X)), fill=-1e9)),
    "no diagonal": ("self-attention where token i sees only tokens before it (row 0 is zeros)",
                    True, lambda X: _masked(X, _tril(len(X), -1))),
    "identity": ("the identity: output i is token i", True, lambda X: X.copy()),
    "first token": ("every output is a copy of token 0", True,
                    lambda X: np.broadcast_to(X[:1], X.shape).copy()),
    "prefix average": ("the prefix average: output i is the mean of tokens 0..i", True,
                       lambda X: np.cumsum(X, axis=0) / np.arange(1, len(X) + 1)[:, None]),
    "full": ("self-attention with no mask", False,
             lambda X: _masked(X, np.ones((len(X), len(X)), dtype=bool))),
    "one ahead": ("self-attention where query i may also see key i + 1", False,
                  lambda X: _masked(X, _tril(len(X), 1))),
    "after softmax": ("causal self-attention with the mask applied after the softmax", False,
                      _after_softmax),
    "anti-causal": ("self-attention where query i sees only keys j ≥ i", False,
                    lambda X: _masked(X, _tril(len(X), -1).T | np.eye(len(X), dtype=bool))),
    "leaks into first": ("causal self-attention, except that query 0 also sees key 2", False,
                         lambda X: _masked(X, _leaks_into_first(len(X)))),
    "first sees next": ("causal self-attention, except that query 0 also sees key 1", False,
                        lambda X: _masked(X, _first_sees_next(len(X)))),
    "leaks late": ("causal self-attention, except that query T - 2 also sees the last key", False,
                   lambda X: _masked(X, _leaks_late(len(X)))),
    "next token": ("output i is a copy of token i + 1", False,
                   lambda X: np.concatenate([X[1:], np.zeros_like(X[:1])])),
    "mean": ("every output is the mean of all tokens", False,
             lambda X: np.broadcast_to(X.mean(axis=0), X.shape).copy()),
    "future's waves": ("output i is token i plus sin(2πx) summed over the tokens after it",
                       False, _future_waves),
}


@LESSON.fixture("attend")
class Attend:
    """A named attention-like function of ``X: [T, d]``, with a readable repr."""

    def __init__(self, kind: str):
        if kind not in ATTENDS:
            raise ValueError(f"unknown attend kind {kind!r}")
        self.kind = kind

    def __call__(self, X):
        X = np.asarray(X, dtype=float)
        if X.ndim != 2:
            from ...learner.validation import shape_str

            raise ValueError(f"attend takes X of shape [T, d], got shape {shape_str(X.shape)}")
        return ATTENDS[self.kind][2](X)

    def __repr__(self) -> str:
        return f"<{ATTENDS[self.kind][0]}>"


def attend_fixture(kind: str) -> Fixture:
    return Fixture("attend", {"kind": kind}, f"<{ATTENDS[kind][0]}>")


# ----------------------------------------------------------------------------- torch's key padding

KPM_D_MODEL, KPM_HEADS, KPM_SEED = 4, 2, 404
_KPM_MHA = None


def _kpm_mha():
    global _KPM_MHA
    if _KPM_MHA is None:
        _KPM_MHA = torch_mha(KPM_D_MODEL, KPM_HEADS, seed=KPM_SEED).eval()
    return _KPM_MHA


def _kpm_tokens(lengths, T) -> np.ndarray:
    seed = 1000 * int(T) + sum(int(v) * (7 ** i) for i, v in enumerate(lengths))
    return np.random.default_rng(seed).normal(size=(len(lengths), T, KPM_D_MODEL)).astype(np.float32)


def mha_with_mask(lengths, T, key_padding_mask):
    """(output, head-averaged weights) of a fixed ``nn.MultiheadAttention`` on a fixed
    random padded batch, given ``key_padding_mask``."""
    import torch

    x = torch.from_numpy(_kpm_tokens(lengths, T))
    with torch.no_grad():
        out, w = _kpm_mha()(x, x, x, key_padding_mask=key_padding_mask, need_weights=True)
    return out.numpy(), w.numpy()


def mha_on_real_tokens(lengths, T):
    """The same attention run sentence by sentence on the real tokens alone, with no mask
    (every query is kept; only the keys and values are cut): what a right mask gives."""
    import torch

    x = torch.from_numpy(_kpm_tokens(lengths, T))
    outs, weights = [], []
    with torch.no_grad():
        for b, n in enumerate(lengths):
            real = x[b:b + 1, :n]
            out, w = _kpm_mha()(x[b:b + 1], real, real, need_weights=True)
            outs.append(out.numpy()[0])
            weights.append(np.pad(w.numpy()[0], ((0, 0), (0, T - n))))
    return np.stack(outs), np.stack(weights)


@LESSON.comparison
@dataclass(frozen=True)
class KeyPaddingMask(Comparison):
    """Lesson 04's ``to_mha_key_padding_mask``, judged by what torch's
    ``nn.MultiheadAttention`` does with the mask. Against the reference the target is
    torch run on each sentence's real tokens alone, with no mask (the reference's own mask
    only sets the expected form: a torch.bool tensor of shape [B, T]); against a mistake,
    what torch does with that mistake's mask."""

    kind: ClassVar[str] = "kpm"


    def related(self, expected, actual, diff):
        return None  # judged by what the values mean, not entry by entry


    def differ(self, expected, actual, case, against_reference=True):
        text = self._text(expected, actual, case, against_reference)
        return Difference(text) if text else None

    @staticmethod
    def _text(expected, actual, case, against_reference) -> str | None:
        import torch

        lengths, T = [int(v) for v in np.asarray(case.args[0])], int(case.args[1])
        if not isinstance(expected, torch.Tensor):  # a mistake that is not a tensor
            return difference(expected, actual)
        if not isinstance(actual, torch.Tensor):
            kind = "a NumPy array" if isinstance(actual, np.ndarray) else f"a {type(actual).__name__}"
            return (f"returned {kind}, but nn.MultiheadAttention needs a torch tensor "
                    f"(torch.from_numpy(...) or torch.tensor(...))")
        if actual.dtype != expected.dtype:
            return (f"dtype is {actual.dtype}, expected {expected.dtype} (a float "
                    f"key_padding_mask is *added* to the scores, it does not ignore keys)")
        if tuple(actual.shape) != tuple(expected.shape):
            return f"shape is {shape_str(actual.shape)}, expected {shape_str(expected.shape)} ([B, T])"
        try:
            got = mha_with_mask(lengths, T, actual)
        except Exception as exc:  # noqa: BLE001 (torch rejects the mask)
            return f"nn.MultiheadAttention rejected your mask: {type(exc).__name__}: {exc}"
        target = mha_on_real_tokens(lengths, T) if against_reference else \
            mha_with_mask(lengths, T, expected)
        if difference(target, got, FLOAT32) is None:
            return None
        return "given your mask, torch's nn.MultiheadAttention " + _describe(lengths, T, got[1])


def _tokens_word(n: int) -> str:
    return f"{n} real token" + ("" if n == 1 else "s")


def _describe(lengths, T, weights) -> str:
    """What torch did with a wrong mask, in words."""
    for b, n in enumerate(lengths):
        if np.isnan(weights[b]).any():
            return (f"ignores every key of sentence {b}, which has {_tokens_word(n)}, and "
                    f"returns NaN")
        on_pad = float(weights[b, :, n:].sum(axis=-1).max()) if n < T else 0.0
        if on_pad > 1e-4:
            return (f"puts up to {on_pad:.3g} of a query's attention on the padding of sentence "
                    f"{b} ({_tokens_word(n)} of {T})")
        starved = np.flatnonzero(weights[b, :, :n].max(axis=0) < 1e-6)
        if starved.size:
            return f"never attends to real token {int(starved[0])} of sentence {b}"
    return "gives weights that differ from attention over the real tokens alone"
