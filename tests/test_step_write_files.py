"""The step ``write_files`` (grader.grading.notebook.job): the submission's files put beside the
notebook in the job's private directory, except those that would replace a module grading
imports; the course's own files win. No kernel starts here: the next job's spare is
replaced by a stand-in that notes it was asked for."""
import os

import pytest

from grader.grading.notebook import job as job_module
from grader.grading.notebook.job import write_files
from job_states import lesson, make_job, state_before


@pytest.fixture
def spares(monkeypatch):
    """The jobs a spare was launched for (none is)."""
    launched = []
    monkeypatch.setattr(job_module, "_launch_spare", launched.append)
    return launched


def _written(tmp_path, files, course_files=None):
    job = make_job({lesson().filename: lesson().honest(), **files}, scratch=str(tmp_path),
                   course_files=course_files or {})
    state = state_before("write_files", job)
    write_files(state)
    return job, state


def test_the_files_are_written_the_course_s_win_and_a_shadowing_module_is_left_out(tmp_path, spares):
    job, state = _written(tmp_path, {"numpy/__init__.py": b"raise SystemExit", "data/x.csv": b"mine",
                                     "notes.txt": b"hi", "../up.txt": b"no"},
                          {"data/x.csv": b"course"})
    try:
        work = state.private.work
        assert work.parent.parent == state.private.dir and state.private.dir.parent == tmp_path
        found = sorted(str(p.relative_to(work)) for p in work.rglob("*") if p.is_file())
        assert found == ["01_matmul_views.ipynb", "data/x.csv", "notes.txt"]
        assert (work / "data/x.csv").read_bytes() == b"course"
        assert not (tmp_path / "up.txt").exists() and not (work.parent / "up.txt").exists()
        assert state.notes == ["Your file numpy/__init__.py was not used: it would replace the "
                               "module numpy that grading needs."]
        assert spares == [job], "the next job's kernel starts while this one runs"
    finally:
        state.private.remove()
    assert not state.private.dir.exists()


def test_a_name_this_file_system_cannot_hold_costs_only_that_file(tmp_path, spares):
    long = "x" * 300 + ".txt"
    _, state = _written(tmp_path, {long: b"x", "ok.txt": b"y"})
    try:
        assert (state.private.work / "ok.txt").read_bytes() == b"y"
        assert len(state.notes) == 1
        assert state.notes[0].startswith(f"Your file {long!r} could not be put beside the notebook")
    finally:
        state.private.remove()


def test_the_spare_private_directory_is_taken_when_its_settings_match(tmp_path, spares, monkeypatch):
    job = make_job({lesson().filename: lesson().honest()}, scratch=str(tmp_path))
    spare = job_module._Private(job)
    monkeypatch.setattr(job_module, "_spare", spare)
    state = state_before("write_files", job)
    write_files(state)
    try:
        assert state.private is spare and job_module._spare is None
        assert (spare.work / lesson().filename).is_file()
        assert oct(os.stat(spare.work / lesson().filename).st_mode & 0o777) == "0o644"
    finally:
        spare.remove()
