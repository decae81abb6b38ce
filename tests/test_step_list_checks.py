"""The step ``list_checks`` (grader.grading.notebook.job): the checks each test cell makes, read from
the source notebook, whatever the submission's test cells say."""
from grader.grading.notebook.job import RELEASED, list_checks
from job_states import lesson, make_job, state_before


def test_each_test_cell_checks_what_its_source_cell_checks():
    nb = lesson().honest()
    for cell in nb["cells"]:  # the submission's own test cells are edited: no matter
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") in lesson().tests:
            cell["source"] = "pass"
    state = state_before("list_checks", make_job({lesson().filename: nb}))
    list_checks(state)
    assert list(state.checks) == list(lesson().tests)
    for grade_id, calls in state.checks.items():
        answer = lesson().tests[grade_id][1]
        assert [c.target for c in calls] == [lesson().target[answer]], grade_id
        assert all(c.hidden == grade_id.startswith("hidden_") for c in calls), grade_id


def test_the_proofs_release_half_makes_the_same_checks():
    state = state_before("list_checks", make_job({lesson().filename: lesson().source}, proof=True,
                                                 submitted_as=lesson().filename))
    list_checks(state)
    assert list(state.checks) == [*lesson().tests, *(f"{RELEASED}{g}" for g in lesson().tests)]
    for grade_id in lesson().tests:
        assert state.checks[f"{RELEASED}{grade_id}"] == state.checks[grade_id]
