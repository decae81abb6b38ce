"""Mistakes of lessons 01 and 03 that the catalogue no longer lists, because a relation
(grader.learner.relations) names them as well as their catalogued message did. Each is
still judged here, visible and hidden: it fails, named by its relation and by no
catalogued mistake, in a message that is short and hands over no solution code."""
import functools

import numpy as np
import pytest

from dropped import by_an_edit, diagnosis, named_by_relation
from grader import lessons

MATMUL = lessons.lesson_module("01_matmul_views", "reference")
BY_HAND = lessons.lesson_module("03_attention_by_hand", "reference")
TRANSPOSED = "transposed: its last two axes are swapped"


def transposed_result(A, B, *, reading):
    """The product with C[i, j] stored at [j, i]."""
    return np.transpose(reading(A, B))


def steps(**setting):
    """attention_by_hand (or, with ``given="X_rows"``, row_convention_attention) with one
    setting of its convention changed."""
    convention = BY_HAND.ROW_CONVENTION if setting.get("given") == "X_rows" else \
        BY_HAND.COLUMN_CONVENTION
    return functools.partial(BY_HAND._steps, **{**convention, **setting})


DROPPED = [
    # (exercise, the mistake, the relation that names it, a phrase of its message)
    *[pytest.param(name, functools.partial(transposed_result, reading=getattr(MATMUL, name)),
                   "axes", TRANSPOSED, id=f"{name}:transposed result")
      for name in ("matmul_dot", "matmul_rows", "matmul_cols", "matmul_outer")],
    pytest.param("key_query_scores", functools.partial(BY_HAND._scores, formula="Qᵀ K"),
                 "axes", TRANSPOSED, id="key_query_scores:transposed scores (Qᵀ K)"),
    pytest.param("attention_by_hand", steps(scores="Qᵀ K"), "axes", TRANSPOSED,
                 id="attention_by_hand:transposed scores"),
    pytest.param("row_convention_attention", steps(given="X_rows", scores="K Qᵀ"), "axes",
                 TRANSPOSED, id="row_convention_attention:scores K Qᵀ"),
    pytest.param("matmul_dot", lessons.knob(MATMUL._dot, row_of_B=True), "substituted",
                 "where B is square, your result is what the expected one would be with B "
                 "transposed", id="matmul_dot:row of A dotted with row of B"),
    pytest.param("einsum_scores", lessons.knob(MATMUL._einsum_scores, subscripts="qd,kd->qk"),
                 "axes count", "it assumes a fixed number of axes", id="einsum_scores:no batch axes"),
    pytest.param("einsum_scores",
                 lessons.knob(MATMUL._einsum_scores, subscripts="...qd,...kd->...kq"), "axes",
                 TRANSPOSED, id="einsum_scores:output axes swapped"),
    pytest.param("attention_by_hand", steps(normalise="rows"), "normalised",
                 "sums to 1 along axis -1 (along each row), but the expected one sums to 1 "
                 "along axis -2 (down each column)", id="attention_by_hand:softmax along rows"),
    pytest.param("row_convention_attention", steps(given="X_rows", normalise="columns"),
                 "normalised", "sums to 1 along axis -2 (down each column)",
                 id="row_convention_attention:softmax down columns"),
    pytest.param("row_convention_attention",
                 functools.partial(BY_HAND._steps, **{**BY_HAND.COLUMN_CONVENTION,
                                                      "given": "X_rows"}),
                 "axes", TRANSPOSED, id="row_convention_attention:column-convention results"),
]


@pytest.mark.parametrize("name, mistake, kind, phrase", DROPPED)
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_a_dropped_mistake_is_named_by_its_relation(name, mistake, kind, phrase, hidden):
    verdict = named_by_relation(name, mistake, kind, hidden)
    assert by_an_edit(verdict, name) or phrase in diagnosis(verdict), verdict.message

