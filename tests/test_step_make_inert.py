"""The step ``make_inert`` (grader.grading.notebook.job): what an instructor's browser would run of
the student's markup and outputs is taken out in the grading worker, under the job's own
wall limit, and said in an integrity note (the cleaning itself: test_grading_hostile_bytes.py)."""
from grader.grading.notebook import nbjson
from grader.grading.notebook.job import make_inert
from job_states import lesson, make_job, state_before


def _state(markdown: str, output: dict | None = None):
    nb = lesson().honest()
    nb["cells"].append({"cell_type": "markdown", "id": "mine", "metadata": {}, "source": markdown})
    state = state_before("write_files", make_job({lesson().filename: nb}))
    if output is not None:
        code = next(c for c, k in zip(state.plan.nb.cells, state.plan.kinds) if k == "answer")
        code.outputs = [nbjson.from_dict(output)]
    return state


def test_honest_markup_and_outputs_stay_as_they_are_with_no_note():
    state = _state("Some *emphasis* and a [link](https://example.org).",
                   {"output_type": "stream", "name": "stdout", "text": "ok\n"})
    before = nbjson.dumps(state.plan.nb)
    integrity = list(state.integrity)
    make_inert(state)
    assert nbjson.dumps(state.plan.nb) == before and state.integrity == integrity


def test_a_script_in_markdown_and_a_javascript_output_are_taken_out_and_noted():
    state = _state("<script>alert(1)</script> hello",
                   {"output_type": "display_data", "metadata": {},
                    "data": {"application/javascript": "alert(2)", "text/plain": "x"}})
    make_inert(state)
    text = nbjson.dumps(state.plan.nb)
    assert "alert(1)</script>" not in text and "application/javascript" not in text
    assert any("application/javascript" in note for note in state.integrity), state.integrity
    assert len(state.integrity) >= 2
