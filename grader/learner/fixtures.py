"""Test fixtures: the objects a check hands to a learner's function, built from data.

A case carries a :class:`~grader.learner.codec.Fixture` (a kind, its parameters as data,
and how a message shows it); :func:`build` turns it into the object. Fixtures are made
from torch's and NumPy's own functions, never from the course's answers: a fixture that
computed, say, masked attention the way the lesson asks would hand that answer to anyone
who reads this file.

The engine's own kinds serve any lesson:

* ``torch_mha``: torch's ``nn.MultiheadAttention`` with given weights;
* ``normal``: an array of normal draws from a seed, built where the answer runs (a large
  input then costs a recording or a bridge message a few bytes, not megabytes);
* ``learner_object``: an object of another of the *learner's* classes, found in the
  namespace of the answer under test, after the method calls the fixture lists. The
  check then runs the learner's own class, never an answer of the course's.

A lesson registers a kind of its own in its ``learner.py``, through its lesson
(``LESSON.fixture``, :mod:`grader.learner.plugins`).
"""
from __future__ import annotations

import numpy as np

from .codec import Fixture
from .plugins import find, register_fixture


def build(fixture: Fixture, namespace: dict | None = None):
    """The object ``fixture`` describes; ``namespace`` is where the answer under test was
    defined (the learner's classes a ``learner_object`` names are looked up there)."""
    factory = find("fixture", fixture.kind)
    if factory.wants_namespace:
        return factory(namespace or {}, **fixture.params)
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


# ----------------------------------------------------------------------------- modules

def load_state(module, state: dict) -> None:
    """Copy ``state`` (parameter name -> values) into ``module``'s parameters."""
    import torch

    params = dict(module.named_parameters())
    with torch.no_grad():
        for name, value in state.items():
            params[name].copy_(torch.as_tensor(np.asarray(value)))


@register_fixture("torch_mha")
def torch_mha(embed_dim: int, num_heads: int, batch_first: bool = True, kdim=None,
               seed: int = 0, state: dict | None = None):
    import torch
    from torch import nn

    with torch.random.fork_rng(devices=[]):
        torch.random.manual_seed(seed)
        module = nn.MultiheadAttention(embed_dim, num_heads, batch_first=batch_first, kdim=kdim,
                                       vdim=kdim)
    if state:
        load_state(module, state)
    return module


# ----------------------------------------------------------------------------- generated arrays

@register_fixture("normal")
def _normal(seed: int, shape, loc: float = 0.0, scale: float = 1.0) -> np.ndarray:
    return np.random.default_rng(int(seed)).normal(loc, scale, size=tuple(int(n) for n in shape))


def normal_fixture(seed: int, shape, loc: float = 0.0, scale: float = 1.0) -> Fixture:
    """An array of normal draws (float64, C order), made where the answer runs."""
    from .validation import shape_str

    around = f" around {loc:g}" if loc else ""
    return Fixture("normal", {"seed": int(seed), "shape": [int(n) for n in shape],
                              "loc": float(loc), "scale": float(scale)},
                   f"<a {shape_str(shape)} array of random normal numbers{around} (seed {seed})>")


# ----------------------------------------------------------------------------- the learner's objects

@register_fixture("learner_object", namespace=True)
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


