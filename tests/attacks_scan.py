"""Attacks on what the shortcut scan reads, on required names and on the experiment's
rows, as sample submissions for the grading corpus (``tests/grading_corpus.py``).

Each attack is a working answer that breaks only a rule of how it must be written (or a
made-up experiment): it must lose exactly the points of the tests of that answer, and
every other answer of the notebook, honest, keeps its points. The honest samples beside
them (loops where loops are allowed, helper classes, callable objects of the learner's
own) keep full points.

``scan_attack_samples(lessons)`` takes the corpus's lessons by name.
"""
from __future__ import annotations

import copy
import inspect

import numpy as np

from courseware.ablation import check_depths, check_steps_and_seed
from grading_corpus import Expect, Lesson, Sample, meta

BY_HAND = "uses something this exercise asks you to do by hand"

# ---------------------------------------------------------------------- lesson 04: prefix_average

_PREFIX_HEAD = '''def prefix_average(X):
    """Row i of the result is the mean of rows 0..i of X."""
    X = np.asarray(X)
    if X.ndim < 2:
        raise ValueError(f"X must be a [..., T, d] array, got shape {X.shape}")
    X = X.astype(float)
'''
_DIVIDE = "np.arange(1, X.shape[-2] + 1)[:, None]"

PREFIX_ATTACKS = {
    # name: (code of the answer cell, a cell added before it or "", phrase of the message)
    "scan_while_loop": (_PREFIX_HEAD + '''    out = np.empty_like(X)
    i = 0
    while i < X.shape[-2]:
        out[..., i, :] = X[..., : i + 1, :].mean(axis=-2)
        i += 1
    return out
''', "", "a while loop"),
    "scan_def_in_try": ("try:\n" + "\n".join("    " + line for line in (_PREFIX_HEAD + f'''    return np.cumsum(X, axis=-2) / {_DIVIDE}
''').splitlines()) + "\nexcept Exception:\n    pass\n", "", "np.cumsum"),
    "scan_callable_object": ('''class _Running:
    def __call__(self, X):
        X = np.asarray(X)
        if X.ndim < 2:
            raise ValueError(f"X must be a [..., T, d] array, got shape {X.shape}")
        return self.total(X.astype(float)) / np.arange(1, X.shape[-2] + 1)[:, None]

    def total(self, X):
        return np.cumsum(X, axis=-2)


prefix_average = _Running()
''', "", "np.cumsum"),
    "scan_getattr_joined": (_PREFIX_HEAD + f'''    return getattr(np, "cum" + "sum")(X, axis=-2) / {_DIVIDE}
''', "", "np.cumsum"),
    "scan_getattr_computed": (_PREFIX_HEAD + f'''    name = "".join(reversed("musmuc"))
    return getattr(np, name)(X, axis=-2) / {_DIVIDE}
''', "", "getattr with an attribute name built at run time"),
    "scan_alias_in_another_cell": (_PREFIX_HEAD + f'''    return running(X, axis=-2) / {_DIVIDE}
''', "from numpy import cumsum as running\n", "np.cumsum (as `running`)"),
    "scan_vars_of_numpy": (_PREFIX_HEAD + f'''    return vars(np)["cumsum"](X, axis=-2) / {_DIVIDE}
''', "", "vars()"),
    "scan_exec_rebinds_the_answer": (_PREFIX_HEAD + '''    T = X.shape[-2]
    W = np.tril(np.ones((T, T)))
    return (W / W.sum(axis=1, keepdims=True)) @ X


exec("prefix_average = lambda X: np.cumsum(np.asarray(X, dtype=float), axis=-2) / "
     "np.arange(1, np.shape(X)[-2] + 1)[:, None]")
''', "", "exec"),
}


def _with_added_cell(lesson: Lesson, nb: dict, before: str, source: str) -> dict:
    """``nb`` with a code cell of the learner's own right before the answer ``before``."""
    nb = copy.deepcopy(nb)
    i = next(i for i, c in enumerate(nb["cells"]) if meta(c).get("grade_id") == before)
    nb["cells"].insert(i, {"cell_type": "code", "execution_count": None, "id": "added-by-student",
                           "metadata": {}, "outputs": [], "source": source})
    return nb


def _prefix_samples(lesson: Lesson) -> list[Sample]:
    samples = []
    for student, (code, added, phrase) in PREFIX_ATTACKS.items():
        nb = lesson.notebook({**lesson.answers, "prefix_average": code})
        if added:
            nb = _with_added_cell(lesson, nb, "prefix_average", added)
        broken = {"prefix_average": Expect(0.0, "failed", phrase)}
        integrity = []
        if student in ("scan_getattr_computed", "scan_vars_of_numpy", "scan_exec_rebinds_the_answer"):
            integrity = ["cannot read from its source"]
        samples.append(Sample(student, lesson.name, lesson.files(nb), lesson.expect(broken),
                              integrity=integrity, why=f"prefix_average: {student}"))
    return samples


# ---------------------------------------------------------------------- lesson 05: MultiHeadAttention

MHA_INIT = '''    def __init__(self, d_model, n_heads):
        super().__init__()
        if n_heads <= 0 or d_model % n_heads:
            raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
'''

MHA_VIA_LIBRARY = '''import torch.nn.functional as F


class _Attend:
    """Hands the whole computation to torch, through a callable object."""

    def __call__(self, mha, query, key, value, mask):
        B, T_q, T_k = attention_shapes(query, key, value, mha.d_model)
        mask = as_attention_mask(mask, B, mha.n_heads, T_q, T_k)
        blocked = None if mask is None else \
            (~mask).expand(B, mha.n_heads, T_q, T_k).reshape(B * mha.n_heads, T_q, T_k)
        out, weights = F.multi_head_attention_forward(
            query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1), mha.d_model,
            mha.n_heads, None, torch.cat([mha.w_q.bias, mha.w_k.bias, mha.w_v.bias]), None, None,
            False, 0.0, mha.w_o.weight, mha.w_o.bias, training=False, need_weights=True,
            attn_mask=blocked, use_separate_proj_weight=True, q_proj_weight=mha.w_q.weight,
            k_proj_weight=mha.w_k.weight, v_proj_weight=mha.w_v.weight,
            average_attn_weights=False)
        return out.transpose(0, 1), weights


attend = _Attend()


class MultiHeadAttention(nn.Module):
''' + MHA_INIT + '''
    def forward(self, query, key, value, mask=None):
        return attend(self, query, key, value, mask)
'''

MHA_WITH_A_HELPER_OBJECT = '''class _ScaledAttention:
    """The learner's own attention of the heads, as a callable object."""

    def __call__(self, q, k, v, mask, d_head):
        scores = q @ k.transpose(-2, -1) / math.sqrt(d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return weights @ v, weights


class MultiHeadAttention(nn.Module):
''' + MHA_INIT + '''        self.attend = _ScaledAttention()

    def forward(self, query, key, value, mask=None):
        B, T_q, T_k = attention_shapes(query, key, value, self.d_model)
        mask = as_attention_mask(mask, B, self.n_heads, T_q, T_k)
        heads = []
        for name, x in (("w_q", query), ("w_k", key), ("w_v", value)):
            heads.append(split_heads(getattr(self, name)(x), self.n_heads))
        out, weights = self.attend(*heads, mask, self.d_head)
        return self.w_o(merge_heads(out)), weights
'''


def _mha_samples(lesson: Lesson) -> list[Sample]:
    cheat = lesson.notebook({**lesson.answers, "MultiHeadAttention": MHA_VIA_LIBRARY})
    honest = lesson.notebook({**lesson.answers, "MultiHeadAttention": MHA_WITH_A_HELPER_OBJECT})
    return [
        Sample("scan_mha_library_via_callable", lesson.name, lesson.files(cheat),
               lesson.expect({"MultiHeadAttention": Expect(0.0, "failed",
                                                           "F.multi_head_attention_forward")}),
               why="MultiHeadAttention hands its work to torch through a callable object"),
        Sample("scan_honest_mha_with_helper_object", lesson.name, lesson.files(honest),
               lesson.expect(), why="an honest MultiHeadAttention with a callable helper object"),
    ]


# ---------------------------------------------------------------------- lesson 01: required einsum, loops

EINSUM_UNUSED = '''def einsum_scores(Q, K):
    """Q Kᵀ for every batch item, by broadcasting; np.einsum only named."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share their last axis, got {Q.shape} and {K.shape}")
    unused = np.einsum
    return (Q[..., :, None, :] * K[..., None, :, :]).sum(axis=-1)
'''

# The kernel's agent patched to report einsum as used (and no finding) for every answer.
AGENT_SAYS_EINSUM = '''import grader.learner.agent as _agent


def _says_einsum(answer, rules):
    return [], {"einsum"}


_agent.scan = _says_einsum


def einsum_scores(Q, K):
    """Q Kᵀ for every batch item, by broadcasting."""
    Q = as_array(Q, "Q", min_ndim=2)
    K = as_array(K, "K", min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share their last axis, got {Q.shape} and {K.shape}")
    return (Q[..., :, None, :] * K[..., None, :, :]).sum(axis=-1)
'''

DOT_WITH_WHILE_AND_A_CLASS = '''class _Row:
    """Row i of A, one after the other (a helper object of the learner's own)."""

    def __init__(self, A):
        self.A, self.i = A, 0

    def __call__(self):
        row = self.A[self.i]
        self.i += 1
        return row


def _dot(a, b):
    total, k = a.dtype.type(0) * b.dtype.type(0), 0
    while k < len(a):
        total = total + a[k] * b[k]
        k += 1
    return total


def matmul_dot(A, B):
    """C[i, j] = row i of A · column j of B, with while loops over i, j and k."""
    A, B = matmul_operands(A, B)
    n, m = A.shape[0], B.shape[1]
    C = np.zeros((n, m), dtype=np.result_type(A, B))
    rows = _Row(A)
    i = 0
    while i < n:
        row = rows()
        j = 0
        while j < m:
            C[i, j] = _dot(row, B[:, j])
            j += 1
        i += 1
    return C
'''


def _einsum_samples(lesson: Lesson) -> list[Sample]:
    missing = Expect(0.0, "failed", "does not call it")
    return [
        Sample("scan_einsum_named_not_called", lesson.name,
               lesson.files(lesson.notebook({**lesson.answers, "einsum_scores": EINSUM_UNUSED})),
               lesson.expect({"einsum_scores": missing}), why="unused = np.einsum"),
        Sample("scan_agent_reports_einsum", lesson.name,
               lesson.files(lesson.notebook({**lesson.answers, "einsum_scores": AGENT_SAYS_EINSUM})),
               lesson.expect({"einsum_scores": missing}),
               integrity=["imports the course's checking code"],
               why="a patched agent reports einsum as used"),
        Sample("scan_honest_while_loops_and_a_class", lesson.name,
               lesson.files(lesson.notebook({**lesson.answers, "matmul_dot": DOT_WITH_WHILE_AND_A_CLASS})),
               lesson.expect(), why="honest: while loops and a helper class where loops are allowed"),
    ]


# ---------------------------------------------------------------------- lesson 06: made-up rows

def made_up_rows(depths, steps, seed):
    """Rows of the right form and direction, written, not trained."""
    depths = check_depths(depths)
    steps, seed = check_steps_and_seed(steps, seed)
    rows = []
    for depth in depths:
        for residual in (True, False):
            end = 1.2 if residual else 1.9
            losses = [2.1 - (2.1 - end) * i / max(steps - 1, 1) for i in range(steps)]
            rows.append({"depth": depth, "residual": residual, "losses": losses,
                         "final_loss": float(np.mean(losses[-10:])),
                         "similarity_init": [0.1] + [0.2 if residual else 0.9] * depth,
                         "similarity_trained": [0.1] + [0.3 if residual else 0.95] * depth})
    return rows


# The same, as the answer cell a learner would hand in (tests/test_06_residual_ablation.py
# calls the function itself).
MADE_UP_ABLATION = inspect.getsource(made_up_rows).replace("def made_up_rows(", "def run_ablation(", 1)


def _ablation_samples(lesson: Lesson) -> list[Sample]:
    nb = lesson.notebook({**lesson.answers, "run_ablation": MADE_UP_ABLATION})
    return [Sample("scan_made_up_ablation_rows", lesson.name, lesson.files(nb),
                   lesson.expect({"run_ablation": Expect(0.0, "failed",
                                                         "is not what your own parts give")}),
                   why="run_ablation invents its rows and trains nothing")]


def scan_attack_samples(lessons: dict[str, Lesson]) -> list[Sample]:
    """One sample per evasion of the scan, of the required-name rule and of the experiment
    check, and honest samples written in the ways the scan must accept."""
    return (_prefix_samples(lessons["04_masking"]) + _mha_samples(lessons["05_multi_head_attention"])
            + _einsum_samples(lessons["01_matmul_views"])
            + _ablation_samples(lessons["06_residual_ablation"]))
