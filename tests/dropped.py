"""What every test of a mistake the catalogue dropped checks (tests/test_relations_*.py):
the mistake, fed in as the answer, fails; it is named by the relation expected (or, where that
relation yields to it, by an edit of the error model that reproduces every case) and by no
catalogued mistake; its message is short and hands over no solution code."""
from grader import lessons
from grader.learner.checks import LocalSubject, find_expectations
from grader.learner.engine import SAYS_ONLY_WHERE, judge
from grader.learner.wording import MESSAGE_LINES
from grader.lessons.error_model import model_mistakes
from sources import handed_over

EXACTLY = "your answer behaves exactly as if"


def named_by_relation(name: str, answer, kind: str, hidden: bool):
    """The verdict on ``answer`` for the exercise ``name``, after checking that ``kind``
    names it as above; the caller checks the words of its diagnosis."""
    exp = lessons.expectations(name, hidden)
    verdict = judge(exp, LocalSubject(answer, exp.info.driver, name), expectations_of=find_expectations)
    assert not verdict.passed, f"{name}: a dropped mistake passed"
    if by_an_edit(verdict, name):
        # A relation that says only what the result is yields to an edit of the error model
        # that reproduces every case, and names the step (engine.SAYS_ONLY_WHERE).
        assert kind in {str(k) for k in SAYS_ONLY_WHERE}, f"{kind!r} yielded\n{verdict.message}"
    else:
        assert verdict.relation == kind, f"relation {verdict.relation!r}\n{verdict.message}"
        assert not verdict.mistake, f"taken for the catalogued {verdict.mistake!r}\n{verdict.message}"
    assert len(verdict.message.splitlines()) < MESSAGE_LINES, verdict.message
    assert not handed_over(verdict.message, lessons.lesson_of(name)), verdict.message
    return verdict


def by_an_edit(verdict, name: str) -> bool:
    """Whether the verdict names an edit of the error model of the exercise ``name`` that
    behaves like the answer on every case (its words are the rule's, not a relation's)."""
    return verdict.mistake in {m.name for m in model_mistakes(lessons.get(name))} and \
        EXACTLY in diagnosis(verdict)


def diagnosis(verdict) -> str:
    """The part of a message before the input it shows."""
    return verdict.message.split("Smallest input", 1)[0]
