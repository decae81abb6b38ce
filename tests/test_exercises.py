"""Every registered exercise, whatever its lesson: the reference passes its own check,
every catalogued misconception is rejected with its own diagnosis, and every bad input
makes the reference raise a ValueError with a message."""
import pytest

from grader import CheckFailed, check
from grader.checking import run
from grader.exercises import load_all

EXERCISES = load_all()
MISCONCEPTIONS = [
    pytest.param(ex, mis, id=f"{ex.name}:{mis.name}")
    for ex in EXERCISES.values()
    for mis in ex.misconceptions
]
BAD_INPUTS = [
    pytest.param(ex, bad, id=f"{ex.name}:{i}")
    for ex in EXERCISES.values()
    for i, bad in enumerate(ex.bad_inputs)
]


@pytest.mark.parametrize("name", sorted(EXERCISES))
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_reference_passes_its_own_check(name, hidden, capsys):
    check(name, EXERCISES[name].reference, hidden=hidden)
    assert capsys.readouterr().out.startswith(f"✓ {name}")


@pytest.mark.parametrize("ex, mis", MISCONCEPTIONS)
@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
def test_misconception_is_rejected_with_its_own_message(ex, mis, hidden):
    with pytest.raises(CheckFailed) as info:
        check(ex.name, mis.impl, hidden=hidden)
    message = str(info.value)
    assert mis.message in message, f"expected the diagnosis of {mis.name!r}, got:\n{message}"
    for other in ex.misconceptions:
        if other is not mis and other.message != mis.message:
            assert other.message not in message, f"{mis.name!r} was diagnosed as {other.name!r}"


def test_misconception_names_are_unique_per_exercise():
    for ex in EXERCISES.values():
        names = [m.name for m in ex.misconceptions]
        assert len(names) == len(set(names)), ex.name


@pytest.mark.parametrize("ex, bad", BAD_INPUTS)
def test_reference_rejects_bad_input_with_a_message(ex, bad):
    outcome = run(ex, ex.reference, bad.case)
    assert isinstance(outcome.error, ValueError), f"{ex.name} accepted bad input: {bad.why}"
    assert str(outcome.error).strip()


def test_a_lesson_01_check_does_not_import_torch():
    """References and exercises load lazily, lesson by lesson: the first check of lesson
    01 (and each graded lesson-01 notebook) must not pay for importing torch."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from grader import check, reference\n"
        "check('matmul_dot', reference.matmul_dot)\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False"


def test_every_reference_name_resolves():
    from grader import reference

    for name in reference.__all__:
        assert callable(getattr(reference, name)) or name.isupper(), name
