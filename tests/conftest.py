import os
import re
from decimal import Decimal
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")
os.environ.setdefault("MPLBACKEND", "Agg")

from grader.learner import plugins  # noqa: E402 (after the backend is chosen)

ROOT = Path(__file__).resolve().parent.parent
# Every lesson folder: each gives a marker, so that `pytest -m lesson08` runs one lesson.
LESSONS = [lesson.folder for lesson in plugins.LESSONS.lessons()]


def pytest_configure(config):
    # xdist would hand the files out by their number of tests; keep the order that
    # pytest_collection_modifyitems gives them (``--no-loadscope-reorder``).
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False
    for lesson in LESSONS:
        config.addinivalue_line("markers", f"lesson{lesson[:2]}: the tests of {lesson} (its "
                                           f"test file, and the shared tests run on it)")


# The files that take longest, longest first: each is one unit of work under `-n 2 --dist
# loadfile`, so they are handed out before the rest, while the other worker fills its time
# with the many short files (pytest_configure keeps this order;
# xdist's own order, by number of tests, gave these few-test files out last, and the run
# ended on one of them with the other worker idle). Most run a module fixture that grades a
# class, serves a course, starts a Dask cluster or a browser, or executes every notebook.
LONGEST_FIRST = (
    "test_grading_corpus.py",
    "test_notebooks.py",
    "test_browser.py",
    "test_serve.py",
    "test_kit.py",
    "test_grading_cluster.py",
    "test_grading_cli.py",
    "test_instructor_workflow.py",
    "test_grading_hostile_bytes.py",
)


def _file_order(items) -> dict[str, int]:
    """The rank of each test file: :data:`LONGEST_FIRST`, then the others by their number
    of tests, most first (xdist's own order), then by name."""
    counts: dict[str, int] = {}
    for item in items:
        counts[item.path.name] = counts.get(item.path.name, 0) + 1
    listed = {name: i for i, name in enumerate(LONGEST_FIRST)}
    ranked = sorted(counts, key=lambda name: (listed.get(name, len(listed)), -counts[name], name))
    return {name: i for i, name in enumerate(ranked)}


def pytest_collection_modifyitems(config, items):
    """Mark each test with its lesson: the lesson of its file (``test_08_positions.py``),
    or every lesson its id names (a shared test run once per lesson or notebook). Then put
    the files in the order they are handed to the workers (:func:`_file_order`); the tests
    of a file keep their order."""
    for item in items:
        named = re.match(r"test_(\d\d)_", item.path.name)
        found = {named.group(1)} if named else \
            {lesson[:2] for lesson in LESSONS if lesson in item.nodeid}
        for number in sorted(found):
            item.add_marker(f"lesson{number}")
    rank = _file_order(items)
    items.sort(key=lambda item: rank[item.path.name])  # stable: a file's tests keep their order


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

    def helper(self, name, exp):
        return self.subject.helper(name, exp)

    def run(self, cases):
        from grader.learner import codec

        key = tuple(codec.dumps(c.for_kernel()) for c in cases)
        if key not in self.memo:
            self.memo[key] = self.subject.run(cases)
        return self.memo[key]


NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?")


def message_difference(recorded: str, live: str) -> str | None:
    """``None`` when two check messages say the same: the same text, and the same numbers,
    except that a number written with a decimal point or an exponent (a float, rounded to
    the digits shown) may differ by one unit in its last digit. A recording made on
    another CPU holds floats that differ from the live reference's in their last bits,
    and a float that lies on a rounding boundary shows one digit otherwise; every other
    difference (a word, an integer, a second digit) is one."""
    parts_a, parts_b = NUMBER.split(recorded), NUMBER.split(live)
    if parts_a != parts_b:
        return f"the messages differ:\n{recorded}\n---- live ----\n{live}"
    for x, y in zip(NUMBER.findall(recorded), NUMBER.findall(live)):
        if x == y:
            continue
        floats = [n for n in (x, y) if re.search(r"[.eE]", n)]
        if floats:
            unit = min(Decimal(1).scaleb(Decimal(n).as_tuple().exponent) for n in floats)
            if abs(Decimal(x) - Decimal(y)) <= unit:
                continue
        return (f"{x} in the recorded check's message, {y} in the live one's:\n{recorded}\n"
                f"---- live ----\n{live}")
    return None


@pytest.fixture(autouse=True)
def recorded_check_equals_live(monkeypatch):
    """Every visible ``check`` a test makes is judged twice, with the recording beside the
    released notebook and with the live reference, and must get the same verdict and the
    same message (:func:`message_difference`): the recorded checks behave exactly as the
    reference does, for every answer the tests try, on any CPU."""
    from grader import lessons
    from grader.learner import checks as check_module
    from grader.learner import recording
    from grader.learner.engine import judge

    def both(name, answer, *, hidden=False):
        exp = check_module.find_expectations(name, hidden)
        if exp is None:
            return None
        subject = _Once(check_module.LocalSubject(answer, exp.info.driver, name))
        verdict = judge(exp, subject, expectations_of=check_module.find_expectations)
        if not hidden and recording.find(name) is not None:
            live = judge(lessons.expectations(name, False), subject,
                         expectations_of=check_module.find_expectations)
            assert live.passed == verdict.passed, \
                f"{name}: the recorded check and the live reference disagree"
            found = message_difference(verdict.message, live.message)
            assert found is None, \
                f"{name}: the recorded check and the live reference disagree: {found}"
        return verdict

    monkeypatch.setattr(check_module, "verdict", both)
