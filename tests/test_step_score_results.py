"""The step ``score_results`` (grader.grading.notebook.job): each test's status, points and message
from the run of its cell and the checker's verdict (grader.grading.notebook.scoring)."""
import pytest

from grader.grading.notebook import nbjson
from grader.grading.notebook.kernel import CellRun
from grader.grading.notebook.results import CheckVerdict
from grader.grading.notebook.scoring import score_test


def _test_cell(outputs=(), points=2):
    cell = nbjson.new_cell("code", "check('x', x)", "t1", {"nbgrader": {"grade": True, "grade_id": "t1", "points": points}})
    cell.outputs = [nbjson.from_dict(o) for o in outputs]
    return cell


def _incident(status, detail):
    run = CellRun(0, status, detail=detail)
    return run, CheckVerdict("incident", run=run)


@pytest.mark.parametrize("run, verdict, status, points, phrase", [
    (CellRun(0, "ok"), CheckVerdict("passed", "✓ x: all pass"), "passed", 2, "✓ x: all pass"),
    (CellRun(0, "error"), CheckVerdict("failed", "x is not right yet."), "failed", 0,
     "x is not right yet."),
    # Out of memory is what the kernel reported of the learner's code (a field), never words
    # in the message: a message that only says so is a failed check.
    (CellRun(0, "error"), CheckVerdict("failed", "x raised MemoryError: Unable to allocate",
                                       out_of_memory=True), "memory", 0, "Unable"),
    (CellRun(0, "error"), CheckVerdict("failed", "x raised MemoryError: printed by the answer"),
     "failed", 0, "printed by"),
    (CellRun(0, "error"), CheckVerdict("error", "This test has no checks."), "error", 0, "no checks"),
    (*_incident("timeout", "stopped after 3 s"), "timeout", 0, "stopped after 3 s"),
    (*_incident("died", "process stopped"), "error", 0, "process stopped"),
    (*_incident("memory", "more than 10 MB"), "memory", 0, "more than 10 MB"),
    (CellRun(0, "wall", detail="reached its time limit"), None, "timeout", 0, "time limit"),
    (None, None, "error", 0, "did not run"),
])
def test_each_way_a_test_can_end_has_its_status(run, verdict, status, points, phrase):
    """Points come from the checker's verdict alone: nothing the test cell printed counts
    (a cell that printed a number used to be nbgrader's partial credit)."""
    cell = _test_cell([{"output_type": "execute_result", "data": {"text/plain": "2"}, "metadata": {},
                        "execution_count": 1}])
    result = score_test(cell, run, verdict, None, "")
    assert (result.status, result.points, result.max) == (status, points, 2.0)
    assert phrase in result.message


def test_a_test_whose_answer_did_not_finish_says_why_first():
    answer = CellRun(3, "timeout", detail="This cell was stopped after 5 s.")
    verdict = CheckVerdict("failed", "There is no `x` in your notebook when this test runs")
    result = score_test(_test_cell(), CellRun(0, "error"), verdict, answer, "x")
    assert result.status == "timeout"
    assert result.message.startswith("Your answer cell `x` did not finish: This cell was stopped")
    assert "There is no `x`" in result.message


# ------------------------------------------------------------------ the step

class _Private:
    def problems(self):
        return ["your file 'x.txt' could not be read in the sandbox"]


def test_the_step_scores_every_test_and_says_what_went_wrong_with_the_files():
    from grader.grading.notebook.job import score_results
    from job_states import lesson, make_job, state_before

    state = state_before("score_results", make_job({lesson().filename: lesson().honest()}))
    plan = state.plan
    state.runs = [CellRun(i, "ok") if c.cell_type == "code" else None
                  for i, c in enumerate(plan.nb.cells)]
    state.verdicts = {g: CheckVerdict("passed", f"✓ {g}") for g, k in zip(plan.grade_ids, plan.kinds)
                      if k == "test"}
    del state.verdicts["hidden_matmul_dot"]  # a test the checker never reached
    state.private, state.notes = _Private(), ["Your file numpy/__init__.py was not used."]
    score_results(state)
    assert [t.id for t in state.tests] == list(lesson().tests)
    status = {t.id: t.status for t in state.tests}
    assert status.pop("hidden_matmul_dot") == "error" and set(status.values()) == {"passed"}
    assert state.manual and state.incidents == []
    assert state.notes == ["Your file numpy/__init__.py was not used.",
                           "Your file 'x.txt' could not be read in the sandbox."]
    assert state.finished is None, "a job whose every step ran is graded by _run"
