"""What every test of a mistake the catalogue dropped checks (tests/test_relations_*.py):
the mistake, fed in as the answer, fails; it is named by the relation expected and by no
catalogued mistake; its message is short and hands over no solution code."""
from grader import lessons
from grader.learner.checks import LocalSubject, find_expectations
from grader.learner.engine import judge
from grader.learner.wording import MESSAGE_LINES
from sources import handed_over


def named_by_relation(name: str, answer, kind: str, hidden: bool):
    """The verdict on ``answer`` for the exercise ``name``, after checking that ``kind``
    names it as above; the caller checks the words of its diagnosis."""
    exp = lessons.expectations(name, hidden)
    verdict = judge(exp, LocalSubject(answer, exp.info.driver, name), expectations_of=find_expectations)
    assert not verdict.passed, f"{name}: a dropped mistake passed"
    assert verdict.relation == kind, f"relation {verdict.relation!r}\n{verdict.message}"
    assert not verdict.mistake, f"taken for the catalogued {verdict.mistake!r}\n{verdict.message}"
    assert len(verdict.message.splitlines()) < MESSAGE_LINES, verdict.message
    assert not handed_over(verdict.message, lessons.lesson_of(name)), verdict.message
    return verdict


def diagnosis(verdict) -> str:
    """The part of a message before the input it shows."""
    return verdict.message.split("Smallest input", 1)[0]
