"""The shortcut scan reads what the source says (grader.learner.shortcuts).

Each evasion below is fed to the scan as a submission's cells (the grader's way: compiled,
never run) and must be found; the honest answers beside them, written with classes,
helpers, blocks and while loops where loops are allowed, must pass untouched. The bridge
tests run the whole check through a fake kernel (the real kernel-side agent, then a
tampered reply): a kernel that reports a required name as used changes nothing.
"""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

import attacks_scan
from grader import check
from grader.course import CheckCall
from grader.grading.notebook.bridge import Session
from grader.grading.notebook.trusted import Checker
from grader.grading.notebook.kernel import CellRun
from grader.learner.agent import handle
from grader.learner.checks import CheckFailed
from grader.learner.shortcuts import (LOOP, Rules, SourceReader, dynamic_uses,
                                      missing_required_message, scan_source)
from grader.lessons import get


def findings(cells: list[str], name: str, exercise: str | None = None) -> list[str]:
    reader = SourceReader()
    for i, cell in enumerate(cells):
        reader.read(cell, f"<cell {i}>")
    found, _ = scan_source(reader.scope(), name, get(exercise or name).rules)
    return [str(f) for f in found]


def required_called(cells: list[str], name: str) -> set[str]:
    reader = SourceReader()
    for i, cell in enumerate(cells):
        reader.read(cell, f"<cell {i}>")
    return scan_source(reader.scope(), name, get(name).rules)[1]


IMPORTS = "import numpy as np\n"

PREFIX_HONEST = IMPORTS + '''
def prefix_average(X):
    X = np.asarray(X, dtype=float)
    if X.ndim < 2:
        raise ValueError(f"X must be [..., T, d], got shape {X.shape}")
    T = X.shape[-2]
    W = np.tril(np.ones((T, T)))
    return (W / W.sum(axis=1, keepdims=True)) @ X
'''

PREFIX_EVASIONS = {
    "a while loop": (IMPORTS + '''
def prefix_average(X):
    X = np.asarray(X, dtype=float)
    out, i = np.empty_like(X), 0
    while i < X.shape[-2]:
        out[..., i, :] = X[..., : i + 1, :].mean(axis=-2)
        i += 1
    return out
''', "a while loop"),
    "a def inside try": (IMPORTS + '''
try:
    def prefix_average(X):
        X = np.asarray(X, dtype=float)
        return np.cumsum(X, axis=-2) / np.arange(1, X.shape[-2] + 1)[:, None]
except Exception:
    pass
''', "np.cumsum"),
    "a def inside if, beside an honest one": (PREFIX_HONEST + '''
if True:
    def prefix_average(X):
        return np.cumsum(X, axis=-2) / np.arange(1, X.shape[-2] + 1)[:, None]
''', "np.cumsum"),
    "a def inside with": (IMPORTS + '''
import contextlib
with contextlib.suppress(Exception):
    def prefix_average(X):
        return np.cumsum(X, axis=-2) / np.arange(1, X.shape[-2] + 1)[:, None]
''', "np.cumsum"),
    "a callable object": (IMPORTS + '''
class Averager:
    def __call__(self, X):
        return self.run(np.asarray(X, dtype=float))

    def run(self, X):
        return np.cumsum(X, axis=-2) / np.arange(1, X.shape[-2] + 1)[:, None]

prefix_average = Averager()
''', "np.cumsum"),
    "getattr with a joined name": (IMPORTS + '''
def prefix_average(X):
    run = getattr(np, "cum" + "sum")
    return run(X, axis=-2) / np.arange(1, X.shape[-2] + 1)[:, None]
''', "np.cumsum"),
    "getattr with a computed name": (IMPORTS + '''
def prefix_average(X):
    run = getattr(np, "".join(reversed("musmuc")))
    return run(X, axis=-2) / np.arange(1, X.shape[-2] + 1)[:, None]
''', "getattr with an attribute name built at run time"),
    "from numpy import cumsum as c, in another cell": (IMPORTS + '''
def prefix_average(X):
    return c(X, axis=-2) / np.arange(1, X.shape[-2] + 1)[:, None]
''', "np.cumsum"),
    "vars(np)": (IMPORTS + '''
def prefix_average(X):
    return vars(np)["cumsum"](X, axis=-2) / np.arange(1, X.shape[-2] + 1)[:, None]
''', "vars()"),
    "np.__dict__": (IMPORTS + '''
def prefix_average(X):
    return np.__dict__["cumsum"](X, axis=-2) / np.arange(1, X.shape[-2] + 1)[:, None]
''', "__dict__"),
    "a lambda": (IMPORTS + '''
prefix_average = lambda X: np.cumsum(X, axis=-2) / np.arange(1, X.shape[-2] + 1)[:, None]
''', "np.cumsum"),
    "a module-level binding made by a call": (IMPORTS + '''
def make():
    return lambda X, axis: np.cumsum(X, axis=axis)
running = make()

def prefix_average(X):
    return running(X, axis=-2) / np.arange(1, X.shape[-2] + 1)[:, None]
''', "np.cumsum"),
    "functools.reduce": (IMPORTS + '''
import functools

def prefix_average(X):
    X = np.asarray(X, dtype=float)
    rows = functools.reduce(lambda acc, x: acc + [acc[-1] + x], X[1:], [X[0]])
    return np.array(rows) / np.arange(1, len(X) + 1)[:, None]
''', "functools.reduce"),
    "map": (IMPORTS + '''
def prefix_average(X):
    X = np.asarray(X, dtype=float)
    return np.array(list(map(lambda i: X[: i + 1].mean(axis=0), range(len(X)))))
''', "map"),
    "recursion": (IMPORTS + '''
def prefix_average(X):
    X = np.asarray(X, dtype=float)
    if len(X) == 1:
        return X
    head = prefix_average(X[:-1])
    return np.concatenate([head, X.mean(axis=0, keepdims=True)])
''', "recursion"),
    "a nested function": (IMPORTS + '''
def prefix_average(X):
    def inner(Y):
        return np.cumsum(Y, axis=-2)
    return inner(X) / np.arange(1, X.shape[-2] + 1)[:, None]
''', "np.cumsum"),
    "a class attribute": (IMPORTS + '''
class Tools:
    running = np.cumsum

def prefix_average(X):
    return Tools.running(X, axis=-2) / np.arange(1, X.shape[-2] + 1)[:, None]
''', "np.cumsum"),
    "a decorator": (IMPORTS + '''
def use_cumsum(fn):
    return lambda X: np.cumsum(X, axis=-2) / np.arange(1, X.shape[-2] + 1)[:, None]

@use_cumsum
def prefix_average(X):
    raise NotImplementedError
''', "np.cumsum"),
    "a default argument": (IMPORTS + '''
def prefix_average(X, run=np.cumsum):
    return run(X, axis=-2) / np.arange(1, X.shape[-2] + 1)[:, None]
''', "np.cumsum"),
    "exec rebinding the answer": (PREFIX_HONEST + '''
exec("prefix_average = lambda X: np.cumsum(X, axis=-2) / np.arange(1, X.shape[-2] + 1)[:, None]")
''', "exec"),
    "globals() rebinding the answer": (PREFIX_HONEST + '''
globals()["prefix_average"] = lambda X: X
''', "globals()"),
    "a function that rebinds a global": (PREFIX_HONEST + '''
def swap():
    global prefix_average
    prefix_average = lambda X: np.cumsum(X, axis=-2) / np.arange(1, X.shape[-2] + 1)[:, None]
swap()
''', "np.cumsum"),
    "__code__ swapped": (PREFIX_HONEST + '''
def cheat(X):
    return np.cumsum(X, axis=-2) / np.arange(1, X.shape[-2] + 1)[:, None]
prefix_average.__code__ = cheat.__code__
''', "__code__"),
    "an import from a module handed in": ('''
from helpers import prefix_average
''', "a module of the submission's own"),
    "importlib": (IMPORTS + '''
import importlib

def prefix_average(X):
    return importlib.import_module("numpy").cumsum(X, axis=-2) / np.arange(1, X.shape[-2] + 1)[:, None]
''', "importlib"),
    "operator.attrgetter": (IMPORTS + '''
import operator

def prefix_average(X):
    return operator.attrgetter("cumsum")(np)(X, axis=-2) / np.arange(1, X.shape[-2] + 1)[:, None]
''', "operator.attrgetter"),
}
PREFIX_EXTRA_CELLS = {"from numpy import cumsum as c, in another cell": ["from numpy import cumsum as c\n"]}


def test_the_honest_prefix_average_has_no_finding():
    assert findings([PREFIX_HONEST], "prefix_average") == []


@pytest.mark.parametrize("how", sorted(PREFIX_EVASIONS))
def test_each_evasion_of_the_prefix_average_rules_is_found(how):
    source, named = PREFIX_EVASIONS[how]
    cells = PREFIX_EXTRA_CELLS.get(how, []) + [source]
    found = findings(cells, "prefix_average")
    assert any(named in f for f in found), (how, found)


# ----------------------------------------------------------------- honest work written other ways

DOT_WITH_WHILE_AND_A_CLASS = (IMPORTS + "from grader.learner.validation import matmul_operands\n"
                              + attacks_scan.DOT_WITH_WHILE_AND_A_CLASS)


def test_honest_loops_classes_and_helpers_pass_where_loops_are_allowed():
    assert findings([DOT_WITH_WHILE_AND_A_CLASS], "matmul_dot") == []


def test_getattr_with_names_the_source_spells_out_is_read_as_an_attribute():
    honest = IMPORTS + '''
def prefix_average(X):
    if not hasattr(X, "shape") or getattr(X, "ndim", 0) < 2:
        raise ValueError(f"X must be a [T, d] matrix, got {getattr(X, 'shape', type(X))}")
    T = X.shape[-2]
    W = np.tril(np.ones((T, T)))
    return (W / W.sum(axis=1, keepdims=True)) @ X
'''
    assert findings([honest], "prefix_average") == []
    layers = '''
import torch
from torch import nn

class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        for name in ("w_q", "w_k", "w_v", "w_o"):
            setattr(self, name, nn.Linear(d_model, d_model))

    def forward(self, query, key, value, mask=None):
        q, k, v = (getattr(self, n)(x) for n, x in (("w_q", query), ("w_k", key), ("w_v", value)))
        return self.w_o(q), None
'''
    assert findings([layers], "MultiHeadAttention") == []


def test_a_name_the_loop_reads_from_a_variable_it_also_changes_is_not_spelled_out():
    source = IMPORTS + '''
def prefix_average(X):
    for name in ("mean", "sum"):
        name = name[::-1]
        getattr(np, name)
    return X
'''
    assert any("built at run time" in f for f in findings([source], "prefix_average"))


# ----------------------------------------------------------------- lesson 05: a callable object

MHA_VIA_A_CALLABLE = '''
import torch
import torch.nn.functional as F
from torch import nn

class _Forward:
    def __call__(self, *args, **kwargs):
        return F.multi_head_attention_forward(*args, **kwargs)

run = _Forward()

class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.d_model, self.n_heads = d_model, n_heads
        self.w_q, self.w_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.w_v, self.w_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        return run(query, key, value, self.d_model, self.n_heads)
'''


def test_the_library_attention_through_a_callable_object_is_found():
    found = findings([MHA_VIA_A_CALLABLE], "MultiHeadAttention")
    assert any("F.multi_head_attention_forward" in f for f in found), found


def test_the_library_attention_through_a_callable_object_is_found_in_a_notebook_too():
    namespace: dict = {"__name__": "__main__"}
    exec(compile(MHA_VIA_A_CALLABLE, "<cell>", "exec"), namespace)  # the test's own code
    with pytest.raises(CheckFailed, match="multi_head_attention_forward"):
        check("MultiHeadAttention", namespace["MultiHeadAttention"])


def test_a_while_loop_is_found_in_a_notebook_too():
    namespace: dict = {"__name__": "__main__"}
    exec(compile(PREFIX_EVASIONS["a while loop"][0], "<cell>", "exec"), namespace)
    with pytest.raises(CheckFailed, match="a while loop"):
        check("prefix_average", namespace["prefix_average"])


def test_a_callable_object_is_found_in_a_notebook_too():
    namespace: dict = {"__name__": "__main__"}
    exec(compile(PREFIX_EVASIONS["a callable object"][0], "<cell>", "exec"), namespace)
    with pytest.raises(CheckFailed, match="np.cumsum"):
        check("prefix_average", namespace["prefix_average"])


# ----------------------------------------------------------------- required names

EINSUM_HONEST = IMPORTS + '''
def einsum_scores(Q, K):
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    if Q.ndim < 2 or K.ndim < 2 or Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must be [..., T, d] with the same d, got {Q.shape} and {K.shape}")
    return np.einsum("...ik,...jk->...ij", Q, K)
'''
EINSUM_UNUSED = IMPORTS + '''
def einsum_scores(Q, K):
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    if Q.ndim < 2 or K.ndim < 2 or Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must be [..., T, d] with the same d, got {Q.shape} and {K.shape}")
    unused = np.einsum
    return (Q[..., :, None, :] * K[..., None, :, :]).sum(axis=-1)
'''


def test_a_required_name_counts_only_where_it_is_called():
    assert required_called([EINSUM_HONEST], "einsum_scores") == {"einsum"}
    assert required_called([EINSUM_UNUSED], "einsum_scores") == set()
    aliased = "from numpy import einsum as e\n" + EINSUM_HONEST.replace("np.einsum(", "e(")
    assert required_called([aliased], "einsum_scores") == {"einsum"}


LOOPED = {
    "a for loop": "def f(x):\n    total = 0\n    for v in x:\n        total += v\n    return total\n",
    "a while loop": "def f(x):\n    i, total = 0, 0\n    while i < len(x):\n        total += x[i]\n"
                    "        i += 1\n    return total\n",
    "a comprehension": "def f(x):\n    return sum([v for v in x])\n",
    "map": "def f(x):\n    return sum(map(abs, x))\n",
    "functools.reduce": "import functools\n\ndef f(x):\n    return functools.reduce(lambda a, b: a + b, x)\n",
    "recursion": "def f(x):\n    return 0 if not len(x) else x[0] + f(x[1:])\n",
    "a loop in a helper": "def helper(x):\n    return [v for v in x]\n\ndef f(x):\n    return sum(helper(x))\n",
}


@pytest.mark.parametrize("kind", LOOPED)
def test_any_kind_of_loop_is_the_loop_a_rule_requires(kind):
    rules = Rules(required={LOOP: "a Python loop over the entries"})
    reader = SourceReader()
    reader.read(LOOPED[kind], "<cell 0>")
    assert scan_source(reader.scope(), "f", rules) == ([], {LOOP})


def test_code_with_no_loop_lacks_the_required_one_and_is_told_so():
    rules = Rules(required={LOOP: "a Python loop over the entries"}, why="Add them one by one.")
    reader = SourceReader()
    reader.read("import numpy as np\n\ndef f(x):\n    unused = map\n    return np.sum(x)\n", "<c>")
    assert scan_source(reader.scope(), "f", rules) == ([], set())
    assert missing_required_message("f", rules) == (
        "f should use a Python loop over the entries, and its code has none. Add them one by one.")


class FakeKernel:
    """The real kernel-side agent over a namespace; ``tamper`` rewrites its reply."""

    def __init__(self, source: str, tamper=None):
        self.ns: dict = {"__name__": "__main__"}
        exec(compile(source, "<answer>", "exec"), self.ns)  # the test's own code
        self.tamper = tamper

    def request(self, code: str, index: int, deadline: float, mime: str):
        payload = code[code.index("globals(), ") + len("globals(), "):-1]
        reply = handle(self.ns, eval(payload))  # a repr'd str built by the grader
        return CellRun(index, "ok"), self.tamper(reply) if self.tamper else reply


def bridge_verdict(source: str, exercise: str, tamper=None, hidden: bool = False):
    reader = SourceReader()
    reader.read(source, "<cell answer>")
    return Checker._check(CheckCall(exercise, exercise, hidden),
                          Session(FakeKernel(source, tamper), 0, 1e18), reader.scope())


def _says_einsum_is_used(reply: str) -> str:
    data = json.loads(reply)
    data["used"], data["findings"] = ["einsum"], []
    return json.dumps(data)


def test_a_kernel_that_reports_einsum_as_used_does_not_pass_the_rule():
    assert bridge_verdict(EINSUM_HONEST, "einsum_scores").passed
    for source in (EINSUM_UNUSED, EINSUM_UNUSED.replace("    unused = np.einsum\n", "")):
        v = bridge_verdict(source, "einsum_scores", tamper=_says_einsum_is_used)
        assert not v.passed and "does not call it" in v.message, v.message


def test_through_the_bridge_an_evasion_fails_and_the_honest_answer_passes():
    assert bridge_verdict(PREFIX_HONEST, "prefix_average").passed
    assert bridge_verdict(PREFIX_HONEST, "prefix_average", hidden=True).passed
    v = bridge_verdict(PREFIX_EVASIONS["a callable object"][0], "prefix_average")
    assert not v.passed and "np.cumsum" in v.message


# ----------------------------------------------------------------- rules that constrain

def test_only_rules_about_how_an_answer_is_written_constrain_it():
    assert Rules(loops=True).constrains and Rules(names={"x": "x"}).constrains
    assert not Rules(objects=("grader.reference.split_heads",)).constrains
    source = '''
def split_heads(x, n_heads):
    return getattr(x, "re" + name)(1)
'''
    assert findings([source], "split_heads") == []  # the integrity note is the grader's


def test_dynamic_uses_are_listed_for_the_integrity_notes():
    text = 'x = getattr(np, name)\nexec("y = 1")\nz = getattr(np, "sum")\n'
    found = dynamic_uses(compile(text, "<cell>", "exec"), text)
    whats = sorted(f.what.split(",")[0] for f in found)
    assert whats == ["exec", "getattr with an attribute name built at run time"], found
    assert not dynamic_uses(compile("import numpy as np\n", "<c>", "exec"), "import numpy as np\n")


def test_the_course_s_own_setup_magics_are_not_dynamic_but_other_magics_are():
    from grader.learner.shortcuts import python_source

    for cell, dynamic in (("%matplotlib inline\nimport numpy as np\n", False),
                          ("%run helpers.py\n", True),
                          ("%%writefile helpers.py\nx = 1\n", True),
                          ("get_ipython().run_cell('x = 1')\n", True),
                          ("%matplotlib inline\nget_ipython().user_ns['f'] = print\n", True)):
        text = python_source(cell)
        found = dynamic_uses(compile(text, "<c>", "exec"), text)
        assert bool(found) == dynamic, (cell, found)
    reader = SourceReader()
    reader.read("%matplotlib inline\nimport numpy as np\n", "<setup>")
    reader.read(PREFIX_HONEST, "<answer>")
    assert scan_source(reader.scope(), "prefix_average", get("prefix_average").rules)[0] == []


def test_methods_named_like_builtins_are_not_dynamic():
    text = ("import re\nimport torch\nmha = torch.nn.Linear(2, 2).eval()\n"
            "pattern = re.compile('a+')\n")
    assert dynamic_uses(compile(text, "<c>", "exec"), text) == []
    text = "import builtins\nf = builtins.eval\n"
    assert dynamic_uses(compile(text, "<c>", "exec"), text)
    reader = SourceReader()
    reader.read("import torch\nm = torch.nn.Linear(2, 2).eval()\n", "<demo>")
    reader.read(PREFIX_HONEST, "<answer>")
    assert scan_source(reader.scope(), "prefix_average", get("prefix_average").rules)[0] == []


def prefix_with_a_computed_getattr(X):
    X = np.asarray(X, dtype=float)
    run = getattr(np, "".join(reversed("musmuc")))
    return run(X, axis=-2) / np.arange(1, X.shape[-2] + 1)[:, None]


def test_in_a_notebook_a_computed_getattr_is_found_where_the_source_is_at_hand():
    with pytest.raises(CheckFailed, match="built at run time"):
        check("prefix_average", prefix_with_a_computed_getattr)
    # Compiled from a string, the function has no source to read: the notebook's check
    # lets its getattr be (the grader reads the submission's source and decides).
    namespace: dict = {"__name__": "__main__"}
    exec(compile(PREFIX_HONEST.replace("X = np.asarray(X, dtype=float)",
                                       'X = np.asarray(getattr(X, "data", X), dtype=float)'),
                 "<no source>", "exec"), namespace)
    check("prefix_average", namespace["prefix_average"])


def test_a_timing_magic_is_read_as_the_code_it_times():
    """%time and %timeit are how a learner measures speed: they are read as the code they
    run, so timing an answer costs nothing, and a definition made inside one is read."""
    from grader.learner.shortcuts import python_source

    timed = "%timeit -n 10 -r 3 prefix_average(X)\n%time Y = prefix_average(X)"
    assert python_source(timed) == "prefix_average(X)\nY = prefix_average(X)\n"
    assert dynamic_uses(compile(python_source(timed), "<cell>", "exec"), python_source(timed)) == []
    hidden = "%%time\nprefix_average = lambda X: np.cumsum(X, axis=-2)\n"
    assert python_source(hidden) == "prefix_average = lambda X: np.cumsum(X, axis=-2)\n"
    other = "%env FOO=1"
    assert "run_line_magic('env'" in python_source(other)


# ------------------------------------- values the code reaches through no name it loads
# A parameter's default and a class attribute read through self are found by the source
# scan at grading, where they are written; the notebook's scan of the live function must
# find them too, or a learner is told ✓ and loses the points at grading.

LIVE_REACH = {
    "a default": ("attend_one_query", "np.einsum", '''
def attend_one_query(q, K, V, _contract=np.einsum):
    q, K, V = np.asarray(q, float), np.asarray(K, float), np.asarray(V, float)
    if q.ndim != 1 or K.ndim != 2 or V.ndim != 2 or K.shape[1] != len(q) or len(V) != len(K):
        raise ValueError("q, K and V do not fit")
    s = np.array([_contract("d,d->", q, K[i]) for i in range(len(K))]) / np.sqrt(len(q))
    w = np.exp(s - s.max())
    return sum(w[i] / w.sum() * V[i] for i in range(len(K)))
'''),
    "a keyword-only default": ("attend_one_query", "np.einsum", '''
def attend_one_query(q, K, V, *, _contract=np.einsum):
    q, K, V = np.asarray(q, float), np.asarray(K, float), np.asarray(V, float)
    if q.ndim != 1 or K.ndim != 2 or V.ndim != 2 or K.shape[1] != len(q) or len(V) != len(K):
        raise ValueError("q, K and V do not fit")
    s = np.array([_contract("d,d->", q, K[i]) for i in range(len(K))]) / np.sqrt(len(q))
    w = np.exp(s - s.max())
    return sum(w[i] / w.sum() * V[i] for i in range(len(K)))
'''),
    "a library twin under another module": ("masked_softmax", "softmax", '''
_rows = torch.special.softmax

def masked_softmax(scores, mask):
    scores = np.asarray(scores, dtype=float)
    mask = np.broadcast_to(np.asarray(mask, dtype=bool), scores.shape)
    w = _rows(torch.from_numpy(np.where(mask, scores, -np.inf)), dim=-1).numpy()
    return np.nan_to_num(w, nan=0.0)
'''),
    "an instance of a library loop": ("batched_matmul", "np.vectorize", '''
_each = np.vectorize(np.matmul, signature="(n,k),(k,m)->(n,m)")

def batched_matmul(A, B):
    A, B = np.asarray(A, float), np.asarray(B, float)
    if A.ndim < 2 or B.ndim < 2 or A.shape[-1] != B.shape[-2]:
        raise ValueError("A and B do not fit")
    return _each(A, B)
'''),
}

HONEST_LIVE = {
    "attend_one_query": '''
def attend_one_query(q, K, V, eps=0.0, *, dtype=np.float64):
    q, K, V = np.asarray(q, dtype), np.asarray(K, dtype), np.asarray(V, dtype)
    if q.ndim != 1 or K.ndim != 2 or V.ndim != 2 or K.shape[1] != len(q) or len(V) != len(K):
        raise ValueError("q, K and V do not fit")
    s = np.array([np.sum(q * K[i]) for i in range(len(K))]) / np.sqrt(len(q)) + eps
    w = np.exp(s - s.max())
    return sum(w[i] / w.sum() * V[i] for i in range(len(K)))
''',
}


@pytest.mark.parametrize("how", sorted(LIVE_REACH))
def test_a_forbidden_value_the_code_reaches_by_no_name_is_found_in_a_notebook(how):
    name, what, source = LIVE_REACH[how]
    namespace: dict = {"__name__": "__main__"}
    exec(compile(IMPORTS + "import torch\n" + source, "<cell>", "exec"), namespace)  # test code
    with pytest.raises(CheckFailed, match=re.escape(what)):
        check(name, namespace[name])


MHA_VIA_A_CLASS_ATTRIBUTE = '''
import torch
import torch.nn.functional as F
from torch import nn

class MultiHeadAttention(nn.Module):
    _fused = staticmethod(F.scaled_dot_product_attention)

    def __init__(self, d_model, n_heads):
        super().__init__()
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.w_q, self.w_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.w_v, self.w_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        B, T = query.shape[:2]
        split = lambda x: x.view(B, -1, self.n_heads, self.d_head).transpose(1, 2)
        q, k, v = split(self.w_q(query)), split(self.w_k(key)), split(self.w_v(value))
        weights = (q @ k.transpose(-1, -2) / self.d_head ** 0.5).softmax(dim=-1)
        heads = self._fused(q, k, v)
        return self.w_o(heads.transpose(1, 2).reshape(B, T, self.d_model)), weights
'''


def test_a_class_attribute_read_through_self_is_found_in_a_notebook():
    namespace: dict = {"__name__": "__main__"}
    exec(compile(MHA_VIA_A_CLASS_ATTRIBUTE, "<cell>", "exec"), namespace)  # the test's own code
    with pytest.raises(CheckFailed, match="scaled_dot_product_attention"):
        check("MultiHeadAttention", namespace["MultiHeadAttention"])


def test_harmless_defaults_are_not_findings():
    namespace: dict = {"__name__": "__main__"}
    exec(compile(IMPORTS + HONEST_LIVE["attend_one_query"], "<cell>", "exec"), namespace)
    check("attend_one_query", namespace["attend_one_query"])
