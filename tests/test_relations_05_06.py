"""Mistakes of lessons 05 and 06 that left the catalogue because a relation names them as
well (grader/learner/relations.py): each is still fed in, as the reference with one knob
turned, and must fail with that relation, no catalogued diagnosis, the words that say what
is wrong, and a message under 25 lines, on the visible and on the hidden cases."""
import pytest

from dropped import by_an_edit, diagnosis, named_by_relation
from grader import lessons
from grader.lessons import knob

ref = lessons.lesson_module("05_multi_head_attention", "reference")
ref06 = lessons.lesson_module("06_residual_ablation", "reference")
exercises = lessons.lesson_module("05_multi_head_attention", "exercises")

DROPPED = [
    # (exercise, the mistake, the relation, words its message must hold)
    ("split_heads", knob(ref._split_heads, move_heads="no"), "axes",
     ["your result holds the expected values, with axes 1 and 2 swapped"]),
    ("value_down_up", knob(ref._value_down_up, transpose=False), "axes",
     ["in down, your result holds the expected values, transposed"]),
    ("copy_from_torch", knob(ref._copy_from_torch, blocks_into=("w_q", "w_v", "w_k")), "swapped",
     ["your w_k.weight and w_v.weight are swapped"]),
    ("copy_from_torch", knob(ref._copy_from_torch, blocks_into=("w_k", "w_q", "w_v")), "swapped",
     ["your w_q.weight and w_k.weight are swapped"]),
    ("copy_from_torch", knob(ref._copy_from_torch, blocks_into=("w_v", "w_k", "w_q")), "swapped",
     ["your w_q.weight and w_v.weight are swapped"]),
    ("copy_from_torch", knob(ref._copy_from_torch, transposed=("in_proj", "out_proj")), "axes",
     ["in w_q.weight, your result holds the expected values, transposed",
      "w_v.weight and w_o.weight differ from torch's"]),
    ("copy_from_torch", knob(ref._copy_from_torch, transposed=("in_proj",)), "axes",
     ["in w_q.weight, your result holds the expected values, transposed",
      "w_o.weight and w_o.bias are right"]),
    ("copy_from_torch", knob(ref._copy_from_torch, transposed=("out_proj",)), "axes",
     ["in w_o.weight, your result holds the expected values, transposed"]),
    ("copy_from_torch", knob(ref._copy_from_torch, blocks_into=("w_k", "w_v", "w_q")), "swapped",
     ["holds the expected"]),
    ("copy_from_torch", knob(ref._copy_from_torch, blocks_into=("w_v", "w_q", "w_k")), "swapped",
     ["holds the expected"]),
    ("mha_parameter_count", knob(ref._parameter_count, head_slice=("d_model", "d_model")),
     "depends", ["your result changes with n_heads", "the expected result does not depend on "
                 "n_heads"]),
    ("mha_parameter_count", knob(ref._parameter_count, head_slice=("d_head", "d_head")),
     "depends", ["your result changes with n_heads"]),
    ("MultiHeadAttention", exercises.module_with(softmax_over="queries"), "normalised",
     ["in weights, your result sums to 1 along axis -2 (down each column)"]),
    ("heads_one_by_one", knob(ref._heads_one_by_one, maps_axis=0), "axes",
     ["in weights, your result holds the expected values, with axes 0 and 1 swapped ([h, B, "
      "T_q, T_k] where [B, h, T_q, T_k] belongs)"]),
    ("split_heads", knob(ref._split_heads, move_heads="reshape"), "reshaped",
     ["your result is x reshaped to", "with no axis moved"]),
    ("merge_heads", knob(ref._merge_heads, move_tokens="reshape"), "reshaped",
     ["your result is x reshaped to", "with no axis moved"]),
    ("split_heads", knob(ref._split_heads, features="dealt"), "interleaved",
     ["along axes h and d_head read as one, your result holds the expected entries "
      "interleaved"]),
    ("merge_heads", knob(ref._merge_heads, join="interleave"), "interleaved",
     ["along the last axis, your result holds the expected entries interleaved"]),
    ("Block", knob(ref06._Block, causal=True), "misses",
     ["does not change your output at position 0, but it changes the expected one there"]),
]


@pytest.mark.parametrize("name, mistake, kind, words", DROPPED,
                         ids=[f"{n}:{m.__name__.split('[', 1)[1][:-1]}" for n, m, _, _ in DROPPED])
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_a_dropped_mistake_is_named_by_its_relation(name, mistake, kind, words, hidden):
    verdict = named_by_relation(name, mistake, kind, hidden)
    if by_an_edit(verdict, name):
        return
    assert words[0] in diagnosis(verdict), verdict.message
    for more in words[1:]:
        assert more in verdict.message, verdict.message


def _settings(impl):
    """A mistake's knobs: a knob's keywords, or a module class's ``knobs``."""
    return getattr(impl, "keywords", None) or getattr(impl, "knobs", None)


def test_no_dropped_mistake_is_still_catalogued():
    """A mistake named by a relation is tested here, not in the catalogue as well."""
    for name, mistake, _, _ in DROPPED:
        settings = _settings(mistake)
        assert settings
        assert all(_settings(m.impl) != settings for m in lessons.get(name).misconceptions
                   if getattr(m.impl, "func", type(m.impl)) is getattr(
                       mistake, "func", type(mistake))), (name, settings)
