"""Mistakes of lesson 07 that the catalogue no longer lists, because a relation
(grader.learner.relations) names them as well as their catalogued message did: each is still
fed in, as the reference with one knob set wrong, and must fail with that relation, no
catalogued diagnosis, the words that say what is wrong, and a short message that hands over
no solution code, on the visible and on the hidden cases."""
import pytest

from dropped import diagnosis, named_by_relation
from grader import lessons

ref = lessons.lesson_module("07_long_attention", "reference")
exercises = lessons.lesson_module("07_long_attention", "exercises")

DROPPED = [
    # (exercise, the mistake, the relation, words its diagnosis must hold)
    ("KVCache", exercises.cache_with(keep="last"), "part",
     "after call 2, in keys, along axis -2, your result holds only the last 1 of the expected "
     "2 rows: the earlier ones are missing"),
    ("KVCache", exercises.cache_with(join="flat"), "extra axis",
     "after call 1, in keys, your values are right, but your shape is"),
    ("decode_step", lessons.knob(ref._decode, append="never"), "part",
     "in cache.keys, along axis -2, your result holds only the first"),
]


@pytest.mark.parametrize("name, mistake, kind, words", DROPPED,
                         ids=[f"{n}:{m.__name__}" for n, m, _, _ in DROPPED])
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_a_dropped_mistake_is_named_by_its_relation(name, mistake, kind, words, hidden):
    verdict = named_by_relation(name, mistake, kind, hidden)
    assert words in diagnosis(verdict), verdict.message


def test_no_dropped_mistake_is_still_catalogued():
    """A mistake named by a relation is tested here, not in the catalogue as well."""
    for name, mistake, _, _ in DROPPED:
        assert mistake.__name__ not in {m.impl.__name__ for m in lessons.get(name).misconceptions}


def test_the_shared_judgement_fails_a_right_answer_and_a_wrong_relation():
    with pytest.raises(AssertionError, match="a dropped mistake passed"):
        named_by_relation("KVCache", ref.KVCache, "part", False)
    with pytest.raises(AssertionError, match="relation 'part'"):
        named_by_relation("KVCache", exercises.cache_with(keep="last"), "reshaped", False)
