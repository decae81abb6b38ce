"""The step ``read_notebook`` (grader.grading.notebook.job): the chosen file read as a notebook
(grader.grading.notebook.repair.read_submission, whose handling of odd files is in
test_grading_repair.py), and why there is nothing to grade when it cannot be."""
from grader.grading.notebook.job import read_notebook
from job_states import A, lesson, make_job, state_before


def _read(job):
    state = state_before("read_notebook", job)
    read_notebook(state)
    return state


def test_a_readable_notebook_is_read_and_nothing_is_flagged():
    state = _read(make_job({lesson().filename: lesson().honest()}))
    assert state.submitted is not None and state.submitted["cells"]
    assert (state.problem, state.flags) == ("", [])


def test_no_notebook_says_so_and_is_flagged_missing_once():
    state = _read(make_job({"notes.txt": b"x"}))
    assert state.submitted is None and state.chosen is None
    assert state.problem == f"No notebook {A}.ipynb was submitted."
    assert state.flags == ["missing"]
    # The proof names its file; a file that is not there is missing too.
    proof = _read(make_job({"notes.txt": b"x"}, proof=True, submitted_as=f"{A}.ipynb"))
    assert proof.submitted is None and proof.flags == ["missing"]


def test_an_unreadable_notebook_names_the_file_and_is_flagged_unreadable_once():
    state = _read(make_job({lesson().filename: b"{not json"}))
    assert state.submitted is None
    assert state.problem.startswith(f"'{A}.ipynb': the file is not a readable notebook")
    assert state.problem.endswith(".")
    assert state.flags == ["unreadable"], "the choice flagged it already: not twice"
    proof = _read(make_job({lesson().filename: b"{not json"}, proof=True, submitted_as=f"{A}.ipynb"))
    assert proof.flags == ["unreadable"], "the proof does not choose: the flag is added here"
