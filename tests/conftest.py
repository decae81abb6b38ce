import os
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")
os.environ.setdefault("MPLBACKEND", "Agg")

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


class _Once:
    """A subject that runs the answer once per list of cases, so that two judgements of
    the same answer (recorded and live) see the same outcomes."""

    def __init__(self, subject):
        self.subject, self.memo = subject, {}

    def problem(self):
        return self.subject.problem()

    def scan(self, rules):
        return self.subject.scan(rules)

    def helper_passes(self, name):
        return self.subject.helper_passes(name)

    def run(self, cases):
        from grader.learner import codec

        key = tuple(codec.dumps(c.for_kernel()) for c in cases)
        if key not in self.memo:
            self.memo[key] = self.subject.run(cases)
        return self.memo[key]


@pytest.fixture(autouse=True)
def recorded_check_equals_live(monkeypatch):
    """Every visible ``check`` a test makes is judged twice, with the recording beside the
    released notebook and with the live reference, and must get the same verdict and the
    same message: the recorded checks behave exactly as the reference does, for every
    answer the tests try."""
    from grader import lessons
    from grader.learner import checks as check_module
    from grader.learner import recording
    from grader.learner.engine import judge

    def both(name, answer, *, hidden=False):
        exp = check_module.expectations(name, hidden)
        if exp is None:
            return None
        subject = _Once(check_module.LocalSubject(answer, exp.info.driver, name))
        verdict = judge(exp, subject)
        if not hidden and recording.find(name) is not None:
            live = judge(lessons.expectations(name, False), subject)
            assert (live.passed, live.message) == (verdict.passed, verdict.message), \
                f"{name}: the recorded check and the live reference disagree"
        return verdict

    monkeypatch.setattr(check_module, "verdict", both)
