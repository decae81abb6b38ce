"""The step ``choose_notebook`` (grader.grading.notebook.job): which submitted file is graded as
the assignment's notebook (grader.grading.notebook.choice)."""
import json

import pytest

from conftest import ROOT
from grader.grading.notebook import nbjson

A = "01_matmul_views"


@pytest.fixture(scope="module")
def lesson():
    from grading_corpus import Lesson

    return Lesson(A, ROOT)


def _choose(lesson, files):
    from grader.grading.notebook.choice import candidates, choose

    files = {k: (json.dumps(v).encode() if isinstance(v, dict) else v) for k, v in files.items()}
    return choose(candidates(files, lesson.filename, [lesson.filename]), files,
                  nbjson.from_dict(lesson.source), nbjson.from_dict(lesson.release), lesson.filename)


def test_the_notebook_with_the_work_is_graded_whatever_its_name(lesson):
    two = lesson.notebook({k: v for k, v in list(lesson.answers.items())[:2]})
    work = lesson.honest()
    choice = _choose(lesson, {lesson.filename: lesson.release, f"{A}-Copy1.ipynb": work, "x.txt": b"x"})
    assert choice.name == f"{A}-Copy1.ipynb" and choice.flags == ["renamed"]
    assert choice.notes == [f"{lesson.filename} has no more answers than the release in it; "
                            f"'{A}-Copy1.ipynb', with 7 answers changed, was graded in its place."]
    # the notebook's own name wins a tie; a second notebook with work is pointed out
    choice = _choose(lesson, {lesson.filename: two, "old/draft.ipynb": two})
    assert choice.name == lesson.filename and choice.flags == ["several copies with work"]
    assert "'old/draft.ipynb' (2 answers changed)" in choice.notes[0]
    choice = _choose(lesson, {"Untitled.ipynb": work})
    assert choice.name == "Untitled.ipynb" and "There was no" in choice.notes[0]


def test_no_notebook_an_untouched_one_or_an_unreadable_one_is_flagged(lesson):
    assert _choose(lesson, {"notes.txt": b"x"}).flags == ["missing"]
    untouched = _choose(lesson, {lesson.filename: lesson.release})
    assert untouched.name == lesson.filename and untouched.flags == ["nothing answered"]
    broken = _choose(lesson, {lesson.filename: b"{not json"})
    assert broken.name == lesson.filename and broken.flags == ["unreadable"]
    rescued = _choose(lesson, {lesson.filename: b"{not json", f"{A} (1).ipynb": lesson.honest()})
    assert rescued.name == f"{A} (1).ipynb" and "could not be read" in rescued.notes[0]


def test_another_notebook_of_the_assignment_is_never_a_candidate():
    from grader.grading.notebook.choice import candidates

    files = {"a.ipynb": b"", "b.ipynb": b"", "sub/b.ipynb": b"", "a-Copy1.ipynb": b"", "c.txt": b""}
    assert candidates(files, "a.ipynb", ["a.ipynb", "b.ipynb"]) == ["a.ipynb", "a-Copy1.ipynb"]


# ------------------------------------------------------------------ the step

def test_the_step_keeps_the_choice_for_the_steps_after_it():
    from grader.grading.notebook.job import choose_notebook
    from job_states import lesson as lesson_01, make_job, state_before

    one = lesson_01()
    state = state_before("choose_notebook", make_job({one.filename: one.release,
                                                      f"{A}-Copy1.ipynb": one.honest()}))
    choose_notebook(state)
    assert state.chosen == f"{A}-Copy1.ipynb" and state.flags == ["renamed"]
    assert len(state.choice_notes) == 1 and "was graded in its place" in state.choice_notes[0]


def test_the_proof_grades_the_file_it_names_without_choosing():
    from grader.grading.notebook.job import choose_notebook
    from job_states import lesson as lesson_01, make_job, state_before

    one = lesson_01()
    files = {one.filename: one.release, f"{A}-Copy1.ipynb": one.honest()}
    state = state_before("choose_notebook", make_job(files, proof=True, submitted_as=one.filename))
    choose_notebook(state)
    assert (state.chosen, state.flags, state.choice_notes) == (one.filename, [], [])
