"""Recordings are compared by what they say (``grader.recording_compare``), so that one
written on any machine passes ``release --check`` on every other (DESIGN.md, gate 10).

Each rule is fed a recording that says the same in other bytes, and one that says
something else: a float moved within its case's tolerance passes and one moved beyond it
fails (the same move passes a float32 case and fails a float64 one); any change that is
not a float fails; a stand-in sealed from results that differ in the last bits passes,
and one that unlocks another value, or does not unlock, fails. ``release`` keeps a
recording that says the same, byte for byte (``test_notebooks.py`` shows ``release
--check`` naming one that does not). A check's message, recorded and live, may show a
float one unit off in its last digit, and nothing else.
"""
from __future__ import annotations

import functools

import numpy as np
import pytest

from conftest import message_difference
from grader.learner import codec, recording
from grader.learner.cases import ErrorInfo, Expectations, Outcome
from grader.learner.standin import seal
from grader.lessons import expectations, get, helper_calls
from grader.recording_compare import differences
from grader.release import keep_recordings_that_say_the_same

PLAIN = "batched_matmul"  # lesson 01: float64 and float32 cases, catalogued mistakes
COMPOSITE = "scaled_dot_product_attention"  # lesson 02: stand-ins for softmax and the scores


def copy_of(name: str) -> Expectations:
    """The live expectations of ``name``, as a recording holds them (a deep copy)."""
    exp = expectations(name, False)
    return Expectations.from_data(codec.decode(codec.encode(exp.to_data())))


def text(name: str, exp: Expectations) -> str:
    return recording.dumps("lesson", {name: exp})


def case_index(exp: Expectations, dtype) -> int:
    """The first case whose reference outcome is a float array of ``dtype``."""
    for i, outcome in enumerate(exp.expected):
        if isinstance(outcome.value, np.ndarray) and outcome.value.dtype == dtype:
            return i
    raise AssertionError(f"no case of {PLAIN} gives a {dtype} array")


def moved(value: np.ndarray, shares: float, tol) -> np.ndarray:
    """``value`` with its largest entry moved by ``shares`` times what ``tol`` allows there."""
    out = value.copy()
    idx = np.unravel_index(np.argmax(np.abs(value)), value.shape)
    top = float(value[idx])
    out[idx] = top + shares * (tol.atol(value.astype(float)) + tol.rtol * abs(top))
    return out


# ----------------------------------------------------------------------------- floats

def test_a_recording_says_the_same_as_one_whose_floats_moved_within_the_tolerance():
    exp = copy_of(PLAIN)
    base = text(PLAIN, exp)
    assert differences(base, base) == []
    for i, case in enumerate(exp.cases):
        if isinstance(exp.expected[i].value, np.ndarray):
            exp.expected[i].value = moved(exp.expected[i].value, 0.5, case.tol)
    other = text(PLAIN, exp)
    assert other != base
    assert differences(base, other) == [] and differences(other, base) == []


@pytest.mark.parametrize("part", ["reference", "mistake"])
def test_a_float_beyond_its_case_tolerance_is_named_with_its_case_and_part(part):
    exp = copy_of(PLAIN)
    base = text(PLAIN, exp)
    i = case_index(exp, np.float64)
    outcome = exp.expected[i] if part == "reference" else exp.mistakes[0].outcomes[i]
    outcome.value = moved(outcome.value, 3.0, exp.cases[i].tol)
    found = differences(base, text(PLAIN, exp))
    assert len(found) == 1, found
    what = "the reference's outcome" if part == "reference" else f"mistake {exp.mistakes[0].name!r}"
    assert found[0].startswith(f"{PLAIN}: case {i} ({exp.cases[i].note}), {what}: "), found
    assert "more than the case's tolerance allows" in found[0]


def test_the_same_move_passes_a_float32_case_and_fails_a_float64_one():
    exp = copy_of(PLAIN)
    base = text(PLAIN, exp)
    i32, i64 = case_index(exp, np.float32), case_index(exp, np.float64)
    tol32 = exp.cases[i32].tol
    assert tol32 != exp.cases[i64].tol
    for i in (i32, i64):  # a tenth of what the float32 tolerance allows, on both cases
        value = exp.expected[i].value
        exp.expected[i].value = (value * (1 + tol32.rtol / 10)).astype(value.dtype)
    found = differences(base, text(PLAIN, exp))
    case64 = f"{PLAIN}: case {i64} ({exp.cases[i64].note})"
    assert len(found) == 1 and found[0].startswith(f"{case64}, the reference's outcome"), found


@pytest.mark.parametrize("change", [
    "error message", "error type", "dtype", "shape", "input shape", "note", "a mistake's name",
    "hidden",
])
def test_anything_but_a_float_must_be_equal(change):
    exp = copy_of(PLAIN)
    base = text(PLAIN, exp)
    i = case_index(exp, np.float64)
    value = exp.expected[i].value
    if change.startswith("error"):
        exp.mistakes[0].outcomes[i] = Outcome(error=ErrorInfo("ValueError", "shapes do not fit"))
        base = text(PLAIN, exp)
        error = exp.mistakes[0].outcomes[i].error
        if change == "error message":
            error.message += "!"
        else:
            error.type = "TypeError"
    elif change == "dtype":
        exp.expected[i].value = value.astype(np.float32)
    elif change == "shape":
        exp.expected[i].value = value[..., :-1]
    elif change == "input shape":
        exp.cases[i].args = (np.asarray(exp.cases[i].args[0])[..., :-1], *exp.cases[i].args[1:])
    elif change == "note":
        exp.cases[i].note += " again"
    elif change == "a mistake's name":
        exp.mistakes[0].name += " again"
    else:
        exp.hidden = True
    found = differences(base, text(PLAIN, exp))
    assert found and all(line.startswith(f"{PLAIN}: ") for line in found), found


def test_a_missing_exercise_or_an_unreadable_recording_is_a_difference():
    base = text(PLAIN, copy_of(PLAIN))
    two = recording.dumps("lesson", {PLAIN: copy_of(PLAIN), COMPOSITE: copy_of(COMPOSITE)})
    assert any("the exercises are" in line for line in differences(base, two))
    assert differences(base, "{not json")[0].startswith("not readable")


# ----------------------------------------------------------------------------- stand-ins

def resealed(exp: Expectations, helper: str, reference) -> Expectations:
    """``exp`` with every case's stand-in of ``helper`` sealed again from ``reference``."""
    ex = get(COMPOSITE)
    for case, tables in zip(exp.cases, exp.stand_ins):
        calls = helper_calls(ex, case)[helper]
        tables[helper] = seal(helper, reference, calls, tables[helper]["salt"])
    return exp


def scaled(reference, factor: float):
    """``reference`` with its results multiplied by ``factor`` (its own signature kept)."""
    @functools.wraps(reference)
    def other(*args, **kwargs):
        return reference(*args, **kwargs) * factor
    return other


def test_stand_ins_sealed_from_results_that_differ_in_the_last_bits_say_the_same():
    base = text(COMPOSITE, copy_of(COMPOSITE))
    softmax = get("softmax").reference
    other = text(COMPOSITE, resealed(copy_of(COMPOSITE), "softmax", scaled(softmax, 1 + 1e-13)))
    assert other != base  # the boxes differ byte for byte
    assert differences(base, other) == []


def test_a_stand_in_that_unlocks_another_value_is_a_difference():
    base = text(COMPOSITE, copy_of(COMPOSITE))
    softmax = get("softmax").reference
    other = text(COMPOSITE, resealed(copy_of(COMPOSITE), "softmax", scaled(softmax, 1 + 1e-3)))
    found = differences(base, other)
    assert found and all("the stand-in of softmax: what it unlocks:" in line for line in found
                         if "... and" not in line), found


def test_a_stand_in_sealed_for_other_inputs_does_not_unlock_and_says_so():
    exp = copy_of(COMPOSITE)
    base = text(COMPOSITE, exp)
    softmax = get("softmax").reference
    ex = get(COMPOSITE)
    for case, tables in zip(exp.cases, exp.stand_ins):
        calls = [((np.asarray(args[0]) * 2.0, *args[1:]), kwargs)
                 for args, kwargs in helper_calls(ex, case)["softmax"]]
        tables["softmax"] = seal("softmax", softmax, calls, tables["softmax"]["salt"])
    found = differences(text(COMPOSITE, exp), base)
    assert found and "the recorded one does not unlock with the input the reference passes it" \
        in found[0], found


# ----------------------------------------------------------------------------- release

def lesson_tree(folder, name: str, content: str):
    (folder / "01_lesson").mkdir(parents=True)
    path = folder / "01_lesson" / f"01_lesson{recording.SUFFIX}"
    path.write_text(content, encoding="utf-8")
    return path


def test_release_keeps_a_recording_that_says_the_same_and_replaces_one_that_does_not(tmp_path):
    exp = copy_of(PLAIN)
    fresh_text = text(PLAIN, exp)
    i = case_index(exp, np.float64)
    exp.expected[i].value = moved(exp.expected[i].value, 0.5, exp.cases[i].tol)
    within = text(PLAIN, exp)
    exp.expected[i].value = moved(exp.expected[i].value, 5.0, exp.cases[i].tol)
    beyond = text(PLAIN, exp)
    for old, kept in ((within, True), (beyond, False)):
        fresh = lesson_tree(tmp_path / f"fresh-{kept}", PLAIN, fresh_text)
        current = lesson_tree(tmp_path / f"current-{kept}", PLAIN, old)
        keep_recordings_that_say_the_same(fresh.parents[1], current.parents[1])
        assert fresh.read_text(encoding="utf-8") == (old if kept else fresh_text)


# ----------------------------------------------------------------------------- messages

@pytest.mark.parametrize("recorded, live", [
    ("got 0.643116, expected 0.63759.", "got 0.643115, expected 0.63759."),
    ("largest error 0.999999", "largest error 1"),  # a float rounded up to a whole number
    ("error 1.5e-05 at index (0, 1)", "error 1.6e-05 at index (0, 1)"),
])
def test_a_check_message_may_show_a_float_one_unit_off_in_its_last_digit(recorded, live):
    assert message_difference(recorded, live) is None


@pytest.mark.parametrize("recorded, live", [
    ("got 0.643116, expected 0.63759.", "got 0.643118, expected 0.63759."),  # two units
    ("2 of 4 entries differ", "3 of 4 entries differ"),  # a count is exact
    ("shape 2×3", "shape 2×4"),
    ("got 0.5, expected 1", "got 0.5; expected 1"),  # the words
    ("got 1.5", "got 1.5 and more"),
])
def test_a_check_message_that_says_anything_else_differs(recorded, live):
    assert message_difference(recorded, live) is not None

