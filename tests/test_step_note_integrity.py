"""The step ``note_integrity`` (grader.grading.notebook.job): what in a submission a person should
look at, read from its source (grader.grading.notebook.integrity)."""
from grader.grading.notebook.job import note_integrity
from job_states import lesson, make_job, state_before

SAME = "has the same code as the course's own solution"


def _noted(answers):
    state = state_before("note_integrity", make_job({lesson().filename: lesson().notebook(answers)}))
    note_integrity(state)
    return state.integrity


def test_untouched_stubs_have_no_notes():
    assert _noted({}) == []


def test_the_solution_copied_is_pointed_out():
    notes = _noted({"matmul_dot": lesson().answers["matmul_dot"]})
    assert len(notes) == 1 and SAME in notes[0]
    assert notes[0].startswith("cell `matmul_dot`: `matmul_dot`")


def test_an_answer_that_rebinds_check_is_pointed_out():
    notes = _noted({"matmul_rows": "check = print\n" + lesson().answers["matmul_rows"]})
    assert "cell `matmul_rows` rebinds `check`, the function the tests call." in notes
