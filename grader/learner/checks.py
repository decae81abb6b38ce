"""``check(name, answer)``: what a notebook's test cells call.

In a notebook the expectations come from the recording ``release`` wrote beside it
(``grader.learner.recording``), so a learner's copy of the course needs no reference and
holds no answer. Hidden checks (``hidden=True``, only in the instructor's source
notebooks) and exercises with no recording use the live reference, which only the
instructor's side of the package provides: it registers itself under the entry point
group ``attention_course.expectations``, and this module never imports it by name.
"""
from __future__ import annotations

from .cases import Verdict
from .engine import judge
from .prose import wrapped

ENTRY_POINTS = "attention_course.expectations"


class CheckFailed(AssertionError):
    """Raised by ``check``; an ``AssertionError``, so nbgrader counts it as a failed test.

    In a notebook, IPython shows only the message (``_render_traceback_``): the frames of
    the grader are noise to a learner, and the message already says where to look.
    """

    def _render_traceback_(self) -> list[str]:
        lines = wrapped(str(self)).splitlines() or [""]  # at a space, not where the page ends
        return [f"✗ {lines[0]}", *lines[1:]]


class LocalSubject:
    """The answer itself, in this process (see ``grader.learner.engine.Subject``)."""

    def __init__(self, answer, driver, name: str = ""):  # driver: a grader.learner.drivers.Driver
        self.answer, self.driver, self.name = answer, driver, name

    def problem(self) -> str:
        if self.driver.calls_answer and (self.answer is None or not callable(self.answer)):
            return (f"check({self.name!r}, ...) needs your function itself, but got "
                    f"{type(self.answer).__name__}.")
        return ""

    def run(self, cases):
        from .agent import run

        return run(self.answer, self.driver, cases)

    def scan(self, rules):
        from .shortcuts import scan

        return scan(self.answer, rules)

    def work(self, work):
        from .work import measure_here

        return measure_here(self.answer, work)

    def helper(self, name: str, exp) -> LocalSubject | None:
        from .agent import namespace_of

        helper = namespace_of(self.answer).get(name)
        return None if helper is None else LocalSubject(helper, exp.info.driver, name)


_PROVIDER = None


def live_provider():
    """The instructor side's ``expectations(name, hidden)``, or None in a learner's copy."""
    global _PROVIDER
    if _PROVIDER is None:
        from importlib.metadata import entry_points

        _PROVIDER = False
        for entry in entry_points(group=ENTRY_POINTS):
            try:
                _PROVIDER = entry.load()
                break
            except Exception:  # noqa: BLE001 (registered, but not importable here)
                continue
    return _PROVIDER or None


def find_expectations(name: str, hidden: bool = False):
    """What ``check`` compares with: the recording for visible cases, else the live
    reference if this copy of the course has it."""
    from . import recording

    if not hidden:
        found = recording.find(name)
        if found is not None:
            return found
    provider = live_provider()
    if provider is not None:
        return provider(name, hidden)
    if hidden:
        return None
    known = ", ".join(recording.known()) or "none"
    raise CheckFailed(
        f"there is no recorded check for {name!r} here. The recordings (*.checks.json) are "
        f"next to the released notebooks; the exercises found are: {known}.")


def verdict(name: str, answer, *, hidden: bool = False) -> Verdict | None:
    exp = find_expectations(name, hidden)
    if exp is None:
        return None
    return judge(exp, LocalSubject(answer, exp.info.driver, name), expectations_of=find_expectations)


def check(name: str, answer, *, hidden: bool = False) -> None:
    """Check the learner's ``answer`` for exercise ``name``: print ✓ or raise
    :class:`CheckFailed` (an ``AssertionError``) that says what is wrong."""
    __tracebackhide__ = True
    result = verdict(name, answer, hidden=hidden)
    if result is None:
        print(f"· {name}: its hidden cases run when your work is graded.")
        return
    if not result.passed:
        raise CheckFailed(result.message)
    print(wrapped(result.message))
