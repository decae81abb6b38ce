"""The held-out sets with their causes (``tests/causes.py``): each answer names a real
exercise and a cause, ids are unique, and every judgement kept is one of the four
verdicts, of an answer that exists, on the digest of a diagnosis."""
import json

import pytest

import causes
from grader import lessons


@pytest.mark.parametrize("name", sorted(causes.SETS))
def test_each_set_names_real_exercises_and_says_each_cause(name):
    answers = causes.answers(name)
    ids = [a.id for a in answers]
    assert len(ids) == len(set(ids)) and len(ids) >= 80
    known = set(lessons.load_all())
    assert all(a.exercise in known and a.cause.strip() and a.source.strip() for a in answers)
    # Sets a to f were written for lessons 01-08, before lesson 09 existed.
    assert {lessons.lesson_of(a.exercise) for a in answers} == \
        {lesson for lesson in lessons.lessons() if lesson[:2] <= "08"}


def test_every_judgement_is_a_verdict_on_an_answer_of_a_set():
    ids = {a.id for name in causes.SETS for a in causes.answers(name)}
    judged = causes.judged()
    assert judged and set(judged) <= ids
    assert all(len(j["digest"]) == 16 and j["why"] for j in judged.values())


def test_a_judgement_that_is_not_a_verdict_is_refused(tmp_path, monkeypatch):
    bad = tmp_path / "judged.json"
    bad.write_text(json.dumps({"x": {"verdict": "GOOD", "digest": "0" * 16, "why": "?"}}))
    monkeypatch.setattr(causes, "JUDGED", bad)
    with pytest.raises(ValueError, match="GOOD"):
        causes.judged()


def test_the_digest_reads_what_a_diagnosis_says_not_where_its_lines_break():
    assert causes.digest("a b\nc") == causes.digest("a  b c") != causes.digest("a b d")
