"""Every exercise, whatever its lesson (DESIGN.md, gate 6):

* the reference passes its own check, visible and hidden;
* every catalogued mistake is rejected with its own diagnosis, visible and hidden;
* every bad input makes the reference raise a ValueError with a message;
* the recorded checks beside the released notebooks say what the live reference gives
  (floats within each case's tolerance, stand-ins by what they unlock:
  ``grader.recording_compare``), and judge every answer the same way (``conftest.py``
  also compares the two for every ``check`` call of every test).
"""
import subprocess
import sys

import pytest

from grader import lessons
from grader.learner import agent, recording
from grader.learner.checks import LocalSubject, find_expectations
from grader.learner.engine import judge
from grader.learner.wording import MESSAGE_LINES
from grader.recording_compare import file_differences
from conftest import message_difference
from sources import handed_over, solution_fragments

BROKEN = {}
for _lesson in lessons.lessons():
    try:
        lessons._import(_lesson)
    except Exception as exc:  # noqa: BLE001 (reported by test_every_lesson_imports)
        BROKEN[_lesson] = f"{type(exc).__name__}: {exc}"
EXERCISES = dict(lessons.EXERCISES)
MISCONCEPTIONS = [
    pytest.param(ex, mis, id=f"{ex.name}:{mis.name}")
    for ex in EXERCISES.values()
    for mis in ex.misconceptions
]
BAD_INPUTS = [
    pytest.param(ex, i, id=f"{ex.name}:{i}")
    for ex in EXERCISES.values()
    for i in range(len(ex.bad_inputs))
]


@pytest.mark.parametrize("lesson", lessons.lessons())
def test_every_lesson_imports(lesson):
    assert lesson not in BROKEN, BROKEN.get(lesson)


def live(name, answer, hidden=False):
    exp = lessons.expectations(name, hidden)
    return judge(exp, LocalSubject(answer, exp.info.driver, name), expectations_of=find_expectations)




def answer_of(mis):
    return mis.impl if mis.sample is None else mis.sample


@pytest.mark.parametrize("name", sorted(EXERCISES))
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_reference_passes_its_own_check(name, hidden):
    verdict = live(name, EXERCISES[name].reference, hidden)
    assert verdict.passed, verdict.message
    assert verdict.message.startswith(f"✓ {name}")


@pytest.mark.parametrize("ex, mis", MISCONCEPTIONS)
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_misconception_is_rejected_with_its_own_message(ex, mis, hidden):
    verdict = live(ex.name, answer_of(mis), hidden)
    assert not verdict.passed
    assert mis.message in verdict.message, \
        f"expected the diagnosis of {mis.name!r}, got:\n{verdict.message}"
    for other in ex.misconceptions:
        if other is not mis and other.message != mis.message:
            assert other.message not in verdict.message, f"{mis.name!r} was diagnosed as {other.name!r}"
    diagnosis = verdict.message.index("Diagnosis:")
    for later in ("Smallest input", "It raised on this input", "Expected:"):
        assert later not in verdict.message[:diagnosis], f"the diagnosis comes after {later!r}"
    assert len(verdict.message.splitlines()) < MESSAGE_LINES, verdict.message
    leaked = handed_over(verdict.message, lessons.lesson_of(ex.name))
    assert not leaked, f"the message hands over solution code {leaked}:\n{verdict.message}"


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_no_hint_or_diagnosis_hands_over_the_solution(name):
    ex, lesson = EXERCISES[name], lessons.lesson_of(name)
    texts = {"hint": ex.hint or "", **{m.name: m.message for m in ex.misconceptions},
             **{f"bad input {i}": b.why for i, b in enumerate(ex.bad_inputs)}}
    for what, text in texts.items():
        leaked = handed_over(text, lesson)
        assert not leaked, f"{name} {what} hands over solution code {leaked}: {text}"


def test_the_solution_search_finds_a_line_and_an_expression_of_the_solution():
    lesson = "04_masking"
    fragments = solution_fragments(lesson)
    assert len(fragments) > 20
    line = max(fragments, key=len)
    planted = f"Hint: write {line[: len(line) // 2]}  {line[len(line) // 2:]} and you are done."
    assert line in handed_over(planted, lesson)
    assert handed_over("Hint: set the masked scores with np.where(mask, scores, -np.inf).", lesson)
    assert not handed_over("Hint: the masked keys get a score of −∞ before the softmax.", lesson)
    assert not handed_over("Error\n  at line 3 of your code: `np.where(mask, scores, -np.inf)`", lesson)


def test_misconception_names_are_unique_per_exercise():
    for ex in EXERCISES.values():
        names = [m.name for m in ex.misconceptions]
        assert len(names) == len(set(names)), ex.name


@pytest.mark.parametrize("ex, i", BAD_INPUTS)
def test_reference_rejects_bad_input_with_a_message(ex, i):
    bad = ex.info.bad_inputs[i]
    outcome = agent.run(ex.reference, ex.driver, [bad.case])[0]
    assert outcome.error is not None and outcome.error.type == "ValueError", \
        f"{ex.name} accepted bad input: {bad.why}"
    assert outcome.error.message.strip()


# ----------------------------------------------------------------------------- recordings

RECORDED = [(path.parent.name, path) for path in sorted(
    (recording.PACKAGE_ROOT / "notebooks").glob(f"*/*{recording.SUFFIX}"))]


@pytest.mark.parametrize("lesson, path", RECORDED, ids=[r[0] for r in RECORDED])
def test_recording_holds_what_the_live_reference_gives(lesson, path, tmp_path):
    from grader.course import ROOT
    from grader.release import write_recording

    fresh = write_recording(ROOT, lesson, tmp_path)
    found = file_differences(path, fresh)
    assert not found, (f"{path} is stale (run `python -m grader release {lesson}`):\n"
                       + "\n".join(found))


@pytest.mark.parametrize("lesson, path", RECORDED, ids=[r[0] for r in RECORDED])
def test_recorded_and_live_give_the_same_verdicts(lesson, path):
    """The reference and every catalogued mistake, judged with the recording and with the
    live reference: the same verdict and the same message (a float shown may differ by one
    unit in its last digit, as when the recording was made on another CPU)."""
    rec = recording.Recording(path)
    assert rec.names()
    assert lesson not in BROKEN, BROKEN.get(lesson)
    for name in rec.names():
        recorded = rec.get(name)
        ex = EXERCISES[name]
        for answer in [ex.reference, *(answer_of(m) for m in ex.misconceptions)]:
            subject = LocalSubject(answer, ex.driver, name)
            a, b = judge(recorded, subject, expectations_of=find_expectations), live(name, answer)
            assert a.passed == b.passed, name
            found = message_difference(a.message, b.message)
            assert found is None, f"{name}: {found}"


def test_a_recording_holds_no_hidden_case():
    for _, path in RECORDED:
        rec = recording.Recording(path)
        for name in rec.names():
            assert not rec.get(name).hidden
            visible = lessons.expectations(name, False).cases
            assert len(rec.get(name).cases) == len(visible)


def test_a_lesson_01_check_needs_neither_torch_nor_the_instructors_side():
    """A released lesson-01 notebook checks against its recording: importing torch would
    be a cost, and importing the instructor's side a leak."""
    code = (
        "import sys\n"
        "import numpy as np\n"
        "from grader import check\n"
        "def einsum_scores(Q, K):\n"
        "    Q, K = np.asarray(Q, float), np.asarray(K, float)\n"
        "    if Q.ndim < 2 or K.ndim < 2 or Q.shape[-1] != K.shape[-1]:\n"
        "        raise ValueError(f'Q {Q.shape} and K {K.shape} do not fit')\n"
        "    return np.einsum('...qd,...kd->...qk', Q, K)\n"
        "check('einsum_scores', einsum_scores)\n"
        "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith('grader.lessons')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/")
    assert out.returncode == 0, out.stderr
    assert "✓ einsum_scores" in out.stdout, out.stdout
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout


def test_every_reference_name_resolves():
    from grader import reference

    for name in reference.names():
        assert callable(getattr(reference, name)) or name.isupper(), name
