"""Test fixtures: the objects a check hands to a learner's function, built from data.

A case carries a :class:`~grader.learner.codec.Fixture` (a kind, its parameters as data,
and how a message shows it); :func:`build` turns it into the object. Fixtures are made
from torch's and NumPy's own functions, never from the course's answers: a fixture that
computed, say, masked attention the way the lesson asks would hand that answer to anyone
who reads this file.

* ``attend``: an attention-like function of ``X [T, d]`` (causal or not, in many ways),
  for ``is_causal`` to probe;
* ``heads``: a module holding ``w_q, w_k, w_v, w_o`` (``nn.Linear``) with given weights
  and no forward, for the exercises that work from a module's weights;
* ``torch_mha``: ``nn.MultiheadAttention`` with given weights;
* ``toy_lm``: a small language model built from torch's own layers, for ``train``.
* ``add_first_task``: lesson 06's toy task (``courseware.ablation.AddFirstTask``), for
  ``train``;
* ``normal``: an array of normal draws from a seed, built where the answer runs (a large
  input then costs a recording or a bridge message a few bytes, not megabytes);
* ``normal_blocks``: blocks of normal draws from a seed, each made only when it is asked
  for (a stream far longer than the memory an answer may hold, ``grader.learner.one_pass``);
* ``learner_object``: an object of another of the *learner's* classes, found in the
  namespace of the answer under test (``KVCache`` for ``decode_step``), after the method
  calls the fixture lists. The check then runs the learner's own class, never an answer
  of the course's.
* ``ablation_row``: one run of lesson 06's experiment redone with the *learner's own*
  ``TinyTransformer``, ``train`` and ``token_similarity`` (the settings the exercise
  states: the model built right after torch's generator is seeded with ``seed``,
  similarities on the probe batch drawn from ``Generator(seed)``), so that a row
  ``run_ablation`` returns can be compared with what the learner's parts give; it names
  no answer of the course's.
"""
from __future__ import annotations

import numpy as np

from .codec import Fixture


def build(fixture: Fixture, namespace: dict | None = None):
    """The object ``fixture`` describes; ``namespace`` is where the answer under test was
    defined (the learner's classes a ``learner_object`` names are looked up there)."""
    if fixture.kind == "learner_object":
        return _learner_object(namespace or {}, **fixture.params)
    if fixture.kind == "ablation_row":
        return _ablation_row(namespace or {}, **fixture.params)
    factory = FACTORIES.get(fixture.kind)
    if factory is None:
        raise ValueError(f"unknown fixture kind {fixture.kind!r}")
    return factory(**fixture.params)


def _has_fixture(value) -> bool:
    if isinstance(value, Fixture):
        return True
    if isinstance(value, (tuple, list)):
        return any(_has_fixture(v) for v in value)
    if isinstance(value, dict):
        return any(_has_fixture(v) for v in value.values())
    return False


def materialise(value, namespace: dict | None = None):
    """``value`` with every Fixture in it (in lists, tuples and dicts) built; anything
    without a fixture is returned as it is (the same object)."""
    if not _has_fixture(value):
        return value
    if isinstance(value, Fixture):
        return build(value, namespace)
    if isinstance(value, tuple):
        return tuple(materialise(v, namespace) for v in value)
    if isinstance(value, list):
        return [materialise(v, namespace) for v in value]
    if isinstance(value, dict):
        return {k: materialise(v, namespace) for k, v in value.items()}
    return value


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


def _leaks_into_first(T: int) -> np.ndarray:
    allowed = _tril(T)
    allowed[0, min(2, T - 1)] = True
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
    "next token": ("output i is a copy of token i + 1", False,
                   lambda X: np.concatenate([X[1:], np.zeros_like(X[:1])])),
    "mean": ("every output is the mean of all tokens", False,
             lambda X: np.broadcast_to(X.mean(axis=0), X.shape).copy()),
}


class Attend:
    """A named attention-like function of ``X: [T, d]``, with a readable repr."""

    def __init__(self, kind: str):
        if kind not in ATTENDS:
            raise ValueError(f"unknown attend kind {kind!r}")
        self.kind = kind

    def __call__(self, X):
        X = np.asarray(X, dtype=float)
        if X.ndim != 2:
            from .validation import shape_str

            raise ValueError(f"attend takes X of shape [T, d], got shape {shape_str(X.shape)}")
        return ATTENDS[self.kind][2](X)

    def __repr__(self) -> str:
        return f"<{ATTENDS[self.kind][0]}>"


def attend_fixture(kind: str) -> Fixture:
    return Fixture("attend", {"kind": kind}, f"<{ATTENDS[kind][0]}>")


# ----------------------------------------------------------------------------- modules

LAYERS = ("w_q", "w_k", "w_v", "w_o")


def _load(module, state: dict) -> None:
    import torch

    params = dict(module.named_parameters())
    with torch.no_grad():
        for name, value in state.items():
            params[name].copy_(torch.as_tensor(np.asarray(value)))


def _heads(d_model: int, n_heads: int, state: dict):
    from torch import nn

    class Heads(nn.Module):
        """The check's module: four layers with the case's weights, and no forward."""

        def __init__(self):
            super().__init__()
            self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
            for name in LAYERS:
                setattr(self, name, nn.Linear(d_model, d_model))

        def forward(self, *args, **kwargs):
            raise RuntimeError(
                "the check's module has no forward: this exercise works from its weights "
                "(mha.w_q.weight, ...), so compute each head yourself")

    module = Heads()
    _load(module, state)
    return module


def _torch_mha(embed_dim: int, num_heads: int, batch_first: bool = True, kdim=None,
               seed: int = 0, state: dict | None = None):
    import torch
    from torch import nn

    with torch.random.fork_rng(devices=[]):
        torch.random.manual_seed(seed)
        module = nn.MultiheadAttention(embed_dim, num_heads, batch_first=batch_first, kdim=kdim,
                                       vdim=kdim)
    if state:
        _load(module, state)
    return module


def toy_lm(vocab_size: int, d_model: int, n_heads: int, d_ff: int, n_layers: int, seq_len: int):
    """A small pre-norm language model from torch's own layers: token and position
    embeddings, ``nn.TransformerEncoderLayer``s, a final norm and a linear head;
    ``tokens [B, T] -> logits [B, T, vocab_size]``, in float64."""
    import torch
    from torch import nn

    class ToyLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok_emb = nn.Embedding(vocab_size, d_model)
            self.pos_emb = nn.Embedding(seq_len, d_model)
            self.layers = nn.ModuleList(
                nn.TransformerEncoderLayer(d_model, n_heads, d_ff, dropout=0.0, batch_first=True,
                                           norm_first=True) for _ in range(n_layers))
            self.ln_f = nn.LayerNorm(d_model)
            self.head = nn.Linear(d_model, vocab_size)

        def forward(self, tokens):
            x = self.tok_emb(tokens) + self.pos_emb(torch.arange(tokens.shape[1]))
            for layer in self.layers:
                x = layer(x)
            return self.head(self.ln_f(x))

    return ToyLM().double()


def _toy_lm(sizes: dict, state: dict):
    model = toy_lm(**sizes)
    _load(model, state)
    return model


def _add_first_task(vocab_size: int, seq_len: int, batch_size: int):
    from courseware.ablation import AddFirstTask

    return AddFirstTask(vocab_size, seq_len, batch_size)


# ----------------------------------------------------------------------------- generated arrays

def _normal(seed: int, shape, loc: float = 0.0, scale: float = 1.0) -> np.ndarray:
    return np.random.default_rng(int(seed)).normal(loc, scale, size=tuple(int(n) for n in shape))


def normal_fixture(seed: int, shape, loc: float = 0.0, scale: float = 1.0) -> Fixture:
    """An array of normal draws (float64, C order), made where the answer runs."""
    from .validation import shape_str

    around = f" around {loc:g}" if loc else ""
    return Fixture("normal", {"seed": int(seed), "shape": [int(n) for n in shape],
                              "loc": float(loc), "scale": float(scale)},
                   f"<a {shape_str(shape)} array of random normal numbers{around} (seed {seed})>")


def _normal_blocks(seed: int, shape, loc: float = 0.0, scale: float = 1.0):
    """``shape[0]`` blocks of ``shape[1]`` normal draws, made one at a time as they are
    read. The generator is made here, before any block: the first use of NumPy's random
    module costs memory that is not the reader's."""
    rng = np.random.default_rng(int(seed))
    n, size = (int(v) for v in shape)
    return (rng.normal(loc, scale, size=size) for _ in range(n))


def normal_blocks_fixture(seed: int, n: int, size: int, loc: float = 0.0,
                          scale: float = 1.0) -> Fixture:
    """A stream of ``n`` blocks of ``size`` normal draws, each made when it is read."""
    around = f" around {loc:g}" if loc else ""
    return Fixture("normal_blocks", {"seed": int(seed), "shape": [int(n), int(size)],
                                     "loc": float(loc), "scale": float(scale)},
                   f"<a stream of {n:,} blocks of {size:,} random normal scores{around} "
                   f"(seed {seed}), each made when it is read>")


# ----------------------------------------------------------------------------- the learner's objects

def _learner_object(namespace: dict, cls: str, args=(), calls=()):
    """``cls(*args)`` from the learner's namespace, then each ``[method, arguments]`` of
    ``calls`` on it, in order."""
    made = namespace.get(cls)
    if made is None or not callable(made):
        raise NameError(f"this check also runs your {cls}, but there is no {cls} in your "
                        f"notebook: run its cell first")
    obj = made(*args)
    for method, arguments in calls:
        getattr(obj, method)(*arguments)
    return obj


def learner_object(cls: str, calls=(), describe: str = "", args=()) -> Fixture:
    """An object of the learner's class ``cls`` after ``calls`` (``[method, [args]]``)."""
    return Fixture("learner_object", {"cls": cls, "args": list(args),
                                      "calls": [[m, list(a)] for m, a in calls]},
                   describe or f"<your {cls}>")


def _ablation_row(namespace: dict, depth: int, residual: bool, steps: int, seed: int) -> dict:
    """The experiment's run at ``depth`` (with or without residuals), from the learner's
    own classes and functions in ``namespace``."""
    import torch

    from courseware.ablation import LAST, MODEL, TASK, layer_outputs

    parts = {}
    for name in ("TinyTransformer", "train", "token_similarity"):
        parts[name] = namespace.get(name)
        if not callable(parts[name]):
            raise NameError(f"this check also runs your {name}, but there is no {name} in "
                            f"your notebook: run its cell first")
    probe = TASK.sample(torch.Generator().manual_seed(seed))[0]
    measure = parts["token_similarity"]
    torch.random.manual_seed(seed)
    model = parts["TinyTransformer"](**MODEL, n_layers=depth, residual=residual)
    at_start = [measure(stream) for stream in layer_outputs(model, probe)]
    trained = parts["train"](model, TASK, steps, seed)
    return dict(depth=depth, residual=residual, losses=trained,
                final_loss=sum(trained[-LAST:]) / len(trained[-LAST:]),
                similarity_init=at_start,
                similarity_trained=[measure(stream) for stream in layer_outputs(model, probe)])


def ablation_row(depth: int, residual: bool, steps: int, seed: int) -> Fixture:
    """Lesson 06's run at ``depth`` redone with the learner's own parts."""
    return Fixture("ablation_row", {"depth": int(depth), "residual": bool(residual),
                                    "steps": int(steps), "seed": int(seed)},
                   f"<your TinyTransformer (n_layers={depth}, residual={residual}) trained by your "
                   f"train for {steps} steps, seed {seed}>")


FACTORIES = {
    "attend": Attend,
    "heads": _heads,
    "torch_mha": _torch_mha,
    "toy_lm": _toy_lm,
    "add_first_task": _add_first_task,
    "normal": _normal,
    "normal_blocks": _normal_blocks,
}


# ----------------------------------------------------------------------------- torch's key padding

KPM_D_MODEL, KPM_HEADS, KPM_SEED = 4, 2, 404
_KPM_MHA = None


def _kpm_mha():
    global _KPM_MHA
    if _KPM_MHA is None:
        _KPM_MHA = _torch_mha(KPM_D_MODEL, KPM_HEADS, seed=KPM_SEED).eval()
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
