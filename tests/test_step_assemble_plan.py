"""The step ``assemble_plan`` (grader.grading.notebook.job): the notebook that will run, and the end
of a job with nothing to grade. (How a submission is rebuilt on the assignment's cells,
for every lesson, is in test_grading_repair.py.)"""
from grader.grading.notebook.job import RELEASED, assemble_plan
from job_states import A, lesson, make_job, state_before


def _assembled(job):
    state = state_before("assemble_plan", job)
    assemble_plan(state)
    return state


def test_a_submission_becomes_the_plan_and_the_choice_is_noted_on_the_state():
    job = make_job({lesson().filename: lesson().release, f"{A}-Copy1.ipynb": lesson().honest()})
    state = _assembled(job)
    assert state.finished is None and state.plan.repairs == []
    assert [c for c, k in zip(state.plan.nb.cells, state.plan.kinds) if k == "answer"]
    assert state.said == ["from reading", *state.choice_notes] and len(state.said) == 2
    assert job.notes == ["from reading"]  # a step writes to its state only, never to the job


def test_with_nothing_to_grade_the_job_ends_missing_with_every_test_at_0():
    state = _assembled(make_job({"notes.txt": b"x"}))
    result = state.finished
    assert result is not None and result.status == "missing"
    assert {t.status for t in result.tests} == {"missing"} and result.points == 0
    assert len(result.tests) == len(lesson().tests)
    assert {t.message for t in result.tests} == {f"No notebook {A}.ipynb was submitted."}
    assert result.manual and not any(m["answered"] for m in result.manual)
    assert result.answers and not any(a["answered"] for a in result.answers)
    assert result.notes == ["from reading", f"No notebook {A}.ipynb was submitted."]
    assert (result.flags, result.submitted_as) == (["missing"], None)
    assert result.autograded is state.plan.nb


def test_the_proof_runs_the_source_then_the_release_under_other_names():
    state = _assembled(make_job({lesson().filename: lesson().source}, proof=True,
                                submitted_as=lesson().filename))
    tests = [g for g, k in zip(state.plan.grade_ids, state.plan.kinds) if k == "test"]
    assert tests == [*lesson().tests, *(f"{RELEASED}{g}" for g in lesson().tests)]
    assert state.finished is None
