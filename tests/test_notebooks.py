"""Notebook gates, for every lesson in solutions/ (DESIGN.md, gates 1 to 4 and 12):

1. the source notebook executes and passes all its own tests through nbgrader's validator,
   and every figure it draws has a title, labelled axes and colour bars, legends off the
   data and log axes where values span decades (gate 12, ``figure_facts``, in the same run);
2. the released notebook runs, every graded test fails on the stubs, and it earns 0;
3. nothing of the solutions or the hidden tests leaks into notebooks/;
4. notebooks/ equals a fresh release, made in another process under other BLAS and torch
   kernels (gate 10: recordings compared by what they say, ``grader.recording_compare``).
"""
import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

from conftest import ROOT
import figure_facts
import grading_corpus
import other_machine
from grader.course import assignments, released_notebook, source_notebook
from grader.lessons import load_all
from grader.learner.notebook import execute, graded_results
from sources import dictated

LESSONS = assignments(ROOT)
MARKERS = re.compile(r"BEGIN SOLUTION|END SOLUTION|BEGIN HIDDEN TESTS|END HIDDEN TESTS|BEGIN MARK SCHEME")


def nbgrader_meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def test_there_are_lessons():
    assert "01_matmul_views" in LESSONS


@pytest.mark.slow
@pytest.mark.parametrize("lesson", LESSONS)
def test_source_notebook_passes_nbgrader_validation_and_labels_its_figures(lesson, tmp_path):
    """Gates 1 and 12. The figures are read in the validator's own run (a hook installed
    in its kernel before the first cell, ``figure_facts``), so the notebook runs once."""
    from nbgrader.validator import Validator

    validator = Validator()
    validator.config.ExecutePreprocessor.timeout = 300
    facts = tmp_path / "figures.jsonl"
    validator.config.Execute.extra_arguments = ["--HistoryManager.hist_file=:memory:"] + [
        f"--IPKernelApp.exec_lines={line}" for line in figure_facts.kernel_lines(str(facts))]
    path = source_notebook(lesson, ROOT)
    results = validator.validate(str(path))
    failed = results.get("failed", [])
    assert not results.get("type_changed") and not results.get("changed")
    assert not failed, "source tests fail:\n" + "\n\n".join(f["error"] for f in failed)
    figures = figure_facts.locate(figure_facts.read(facts), nbformat.read(path, as_version=4), lesson)
    problems = figure_facts.problems(figures)
    assert not problems, "figures a reader cannot read:\n" + "\n".join(problems)


@pytest.mark.slow
@pytest.mark.parametrize("lesson", LESSONS)
def test_released_notebook_runs_and_earns_zero(lesson):
    nb = execute(released_notebook(lesson, ROOT), env={"NBGRADER_EXECUTION": "autograde"})
    results = graded_results(nb)
    assert results, "the released notebook has no graded tests"
    assert sum(r.points for r in results) == 0
    for r in results:
        if r.hidden:  # its checks are not in the learner's copy
            assert r.message == "runs when your work is graded" and r.grade_id.startswith("hidden_")
            continue
        assert "not implemented yet" in r.message, f"{r.grade_id} failed for another reason: {r.message}"
    assert any(r.hidden for r in results) and any(not r.hidden for r in results)
    for cell in nb.cells:
        if cell.cell_type == "code" and not nbgrader_meta(cell).get("grade"):
            errors = [o for o in cell.outputs if o.output_type == "error"]
            assert not errors, f"cell {cell.id} crashes on the stubs: {errors[0].ename}: {errors[0].evalue}"


def _solution_lines(source: str) -> list[str]:
    inside, lines = False, []
    for line in source.splitlines():
        if re.search(r"BEGIN (SOLUTION|HIDDEN TESTS)", line):
            inside = True
        elif re.search(r"END (SOLUTION|HIDDEN TESTS)", line):
            inside = False
        elif inside and len(line.strip()) > 12:
            lines.append(line.strip())
    return lines


@pytest.mark.parametrize("lesson", LESSONS)
def test_nothing_leaks_into_the_release(lesson):
    source = nbformat.read(source_notebook(lesson, ROOT), as_version=4)
    text = released_notebook(lesson, ROOT).read_text(encoding="utf-8")
    assert not MARKERS.search(text)
    released = nbformat.reads(text, as_version=4)
    released_code = "\n".join(c.source for c in released.cells)
    secret = []
    for cell in source.cells:
        meta = nbgrader_meta(cell)
        secret += _solution_lines(cell.source)
        if cell.cell_type == "markdown" and meta.get("solution"):
            secret += [l.strip() for l in cell.source.splitlines() if len(l.strip()) > 12]
    assert secret, "expected solution code in the source"
    leaked = [line for line in secret if line in released_code]
    # A line that is also in the source outside a solution (a given line) is not a leak.
    given = "\n".join(re.sub(r"### BEGIN.*?### END [A-Z ]+\n?", "", c.source, flags=re.S)
                      for c in source.cells if not (c.cell_type == "markdown" and nbgrader_meta(c).get("solution")))
    leaked = [line for line in leaked if line not in given]
    assert not leaked, f"solution or hidden-test lines in notebooks/: {leaked[:3]}"


def introductions(nb) -> list[tuple[str, list]]:
    """Each exercise (the ``grade_id`` of its solution code cell) with the cells shown
    before it since the previous exercise: its introduction, prose and demonstrations."""
    found, shown = [], []
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if cell.cell_type == "code" and meta.get("solution"):
            found.append((meta["grade_id"], shown))
            shown = []
        elif not meta.get("grade") and not meta.get("solution"):
            shown.append(cell)
    return found


WRITES_OUT: dict[str, str] = {}  # lessons being rewritten; the test says when they stop failing


@pytest.mark.parametrize("lesson", [
    pytest.param(lesson, marks=pytest.mark.xfail(strict=True, reason=WRITES_OUT[lesson]))
    if lesson in WRITES_OUT else lesson for lesson in LESSONS])
def test_no_introduction_writes_out_its_exercise(lesson):
    """The prose and the demonstrations before an exercise teach it without its code: no
    line or expression of its solution, in Markdown or in a code cell (issue 14, §10)."""
    released = nbformat.read(released_notebook(lesson, ROOT), as_version=4)
    problems = []
    for exercise, cells in introductions(released):
        for cell in cells:
            found = dictated(cell.source, lesson, exercise, markdown=cell.cell_type == "markdown")
            problems += [f"{exercise} <- {cell.cell_type} cell {cell.id}: {f}" for f in found]
    assert not problems, "the text before an exercise writes out its solution:\n" + "\n".join(problems)


# Three passages as they were before issue 14 rewrote them: each wrote out its exercise.
OLD_RECIPE = """Write `masked_softmax(scores, mask)`, a softmax over the last axis (the keys):

1. set the masked scores to `-np.inf` with `np.where(mask, scores, -np.inf)`;
2. subtract each row's maximum before `np.exp`, for stability. In a row with no allowed key
   the maximum is $-\\infty$: subtract 0 there instead;
3. divide by the row sum, and return zeros where the sum is 0
   (`np.divide(e, total, out=np.zeros_like(e), where=total > 0)`)."""
OLD_FORMULAS = """* **Value-down.** A token row $x$ becomes the head's value $x\\,D_i$ with
  $D_i$ = `w_v.weight[features, :].T`, shape `[d_model, d_head]`: down to `d_head` features.
* **Value-up.** After attention, `w_o` reads the head's `d_head` features through
  `w_o.weight[:, features]`; as a row map that is $U_i$ = `w_o.weight[:, features].T`."""
OLD_BLOCK = """Now put the pieces together:

```
weights = softmax(scores, axis=-1)      # [..., T_q, T_k]: row i = how query i shares its attention
output  = weights @ V                   # [..., T_q, d_v]: row i = mix of the rows of V
```"""


def test_the_search_finds_prose_that_writes_out_the_code():
    assert dictated(OLD_RECIPE, "04_masking", "masked_softmax", markdown=True) == [
        "np.divide(e,total,out=np.zeros_like(e),where=total>0)", "np.where(mask,scores,-np.inf)"]
    assert dictated(OLD_FORMULAS, "05_multi_head_attention", "value_down_up", markdown=True) == [
        "w_v.weight[features, :].T", "w_o.weight[:, features]", "w_o.weight[:, features].T"]
    assert dictated(OLD_BLOCK, "02_dot_product_attention", "scaled_dot_product_attention",
                    markdown=True) == ["output=weights@V"]
    # The same ideas, taught without the code; names of tools and the exercise's own
    # interface (its docstring says "four nn.Linear(d_model, d_model) layers") are fine.
    assert not dictated("Masked keys get a score of −∞ before the softmax; a row with no "
                        "allowed key gives zeros (`np.exp`, `np.where`).", "04_masking",
                        "masked_softmax", markdown=True)
    assert not dictated("Turn autograd off with `torch.no_grad()` and copy in place with "
                        "`Tensor.copy_`.", "05_multi_head_attention", "copy_from_torch", markdown=True)
    assert not dictated("It has four `nn.Linear(d_model, d_model)` layers.",
                        "05_multi_head_attention", "MultiHeadAttention", markdown=True)
    # In a code cell only whole fragments count, and a demonstration of another route passes.
    assert dictated("rows = slice(i * d_head, (i + 1) * d_head)", "05_multi_head_attention",
                    "heads_one_by_one", markdown=False)
    assert not dictated("for i, W_i in enumerate(W.split(d_head)):", "05_multi_head_attention",
                        "heads_one_by_one", markdown=False)


@pytest.mark.parametrize("lesson", LESSONS)
def test_source_has_no_outputs(lesson):
    nb = nbformat.read(source_notebook(lesson, ROOT), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, cell.id


@pytest.mark.parametrize("lesson", LESSONS)
def test_points_are_split_and_some_tests_are_hidden(lesson):
    nb = nbformat.read(source_notebook(lesson, ROOT), as_version=4)
    graded = [c for c in nb.cells if nbgrader_meta(c).get("grade") and c.cell_type == "code"]
    assert len(graded) >= 2
    assert any("BEGIN HIDDEN TESTS" in c.source for c in graded)
    # A check of an earlier lesson's part (lesson 09 checks the parts its model reaches
    # again) earns its points in that lesson, so it is worth none here; every other test
    # cell is worth some.
    from grader.lessons import LESSONS, load_all

    load_all()
    for c in graded:
        owners = {LESSONS.owner[name].path.name for name in _checked_names(c.source)}
        points = nbgrader_meta(c).get("points", 0)
        if owners and lesson not in owners:
            assert points == 0, (c.source, points)
        else:
            assert points > 0, (c.source, points)


def _checked_names(source: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "check" and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant):
                names.add(first.value)
    return names


def test_every_check_names_a_registered_exercise_and_every_exercise_is_used():
    registered = set(load_all())
    used = set()
    for lesson in LESSONS:
        nb = nbformat.read(source_notebook(lesson, ROOT), as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code" and nbgrader_meta(cell).get("grade"):
                used |= _checked_names(cell.source)
    assert used <= registered, f"checks of unknown exercises: {used - registered}"
    assert registered <= used, f"exercises no notebook checks: {registered - used}"


@pytest.mark.slow
def test_notebooks_equal_a_fresh_release_made_on_another_machine():
    """Gates 4 and 10: ``release --check`` passes in a Python whose NumPy, OpenBLAS, torch,
    MKL and oneDNN kernels are not this machine's (``other_machine``): the notebooks are
    byte for byte a fresh release, and the recordings say what a fresh one says, on a
    machine whose floats round otherwise. It runs in its own process, so that the fresh
    release also shows that releasing does not depend on the process (its hash seed)."""
    env = other_machine.environment()
    command = other_machine.PROBE + "\nimport sys\nfrom grader.cli import main\n" \
        "sys.exit(main(['release', '--check']))\n"
    done = subprocess.run([sys.executable, "-c", command], env=dict(os.environ, **env),
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    first, _, output = done.stdout.partition("\n")
    report = json.loads(first) if first.startswith("{") else {}
    assert report, f"no kernel report:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert not other_machine.not_simulated(env, report), (env, report)
    assert done.returncode == 0, (f"under {env} (kernels {report}), `python -m grader release "
                                  f"--check` says:\n{output[-6000:]}\n{done.stderr[-3000:]}")


def test_the_simulated_machine_is_refused_when_a_library_ignores_it():
    env = {"NPY_DISABLE_CPU_FEATURES": "X86_V3 AVX512_ICL", "OPENBLAS_CORETYPE": "Nehalem",
           "ATEN_CPU_CAPABILITY": "default", "OMP_NUM_THREADS": "1"}
    taken = {"numpy_enabled": ["SSE42", "X86_V2"], "openblas_core": "Nehalem",
             "torch_capability": "DEFAULT", "torch_threads": 1}
    assert other_machine.not_simulated(env, taken) == []
    ignored = {"numpy_enabled": ["SSE42", "X86_V2", "X86_V3"], "openblas_core": "Haswell",
               "torch_capability": "AVX2", "torch_threads": 2}
    problems = other_machine.not_simulated(env, ignored)
    assert len(problems) == 4 and "X86_V3" in problems[0] and "Haswell" in problems[1], problems


def test_released_notebooks_have_cell_ids_and_no_outputs():
    """What the release strips, seen in ``notebooks/`` (which equals a fresh release)."""
    for lesson in LESSONS:
        nb = json.loads(released_notebook(lesson, ROOT).read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            assert cell.get("id"), lesson
            assert cell.get("outputs", []) == [] and cell.get("execution_count") is None, lesson


@pytest.fixture
def course_copy(tmp_path) -> Path:
    return grading_corpus.course_copy(ROOT, tmp_path / "course")


def _cli(course: Path, *args) -> subprocess.CompletedProcess:
    env = dict(os.environ, ATTENTION_COURSE_ROOT=str(course))
    return subprocess.run([sys.executable, "-m", "grader", *args], env=env, capture_output=True,
                          text=True, cwd=course)


def _move_beyond_the_tolerance(path: Path) -> str:
    """Move one float of the first exercise of recording ``path`` by three times what its
    case's tolerance allows; return the line ``release --check`` should print for it."""
    from grader.learner import codec
    from grader.learner.cases import Expectations
    from test_recording_compare import case_index, moved

    data = json.loads(path.read_text(encoding="utf-8"))
    name = next(iter(data["exercises"]))
    exp = Expectations.from_data(codec.decode(data["exercises"][name]))
    i = case_index(exp, np.float64)
    exp.expected[i].value = moved(exp.expected[i].value, 3.0, exp.cases[i].tol)
    data["exercises"][name] = codec.encode(exp.to_data())
    path.write_text(json.dumps(data), encoding="utf-8")
    return f"{name}: case {i} ({exp.cases[i].note}), the reference's outcome: "


@pytest.mark.slow
def test_release_check_fails_on_a_hand_edited_notebook_or_a_recording_beyond_tolerance(course_copy):
    lesson = LESSONS[0]
    path = released_notebook(lesson, course_copy)
    nb = nbformat.read(path, as_version=4)
    nb.cells[0].source += "\nEdited by hand."
    nbformat.write(nb, path)
    checks = path.with_name(f"{lesson}.checks.json")
    where = _move_beyond_the_tolerance(checks)
    result = _cli(course_copy, "release", "--check", lesson)
    assert result.returncode == 1
    assert f"notebooks/{lesson}/{lesson}.ipynb differs from a fresh release" in result.stdout
    assert (f"notebooks/{lesson}/{lesson}.checks.json differs from a fresh release beyond the "
            f"checks' tolerance:\n      {where}") in result.stdout, result.stdout
    assert "more than the case's tolerance allows" in result.stdout
    assert "Run `python -m grader release`" in result.stdout
    assert _cli(course_copy, "release", lesson).returncode == 0
    assert _cli(course_copy, "release", "--check", lesson).returncode == 0


@pytest.mark.slow
def test_release_check_fails_on_a_missing_or_extra_notebook(course_copy):
    lesson = LESSONS[0]
    released_notebook(lesson, course_copy).unlink()
    (course_copy / "notebooks" / "stray.ipynb").write_text("{}")
    result = _cli(course_copy, "release", "--check", lesson)
    assert result.returncode == 1
    assert "is missing" in result.stdout and "stray.ipynb is not produced by the release" in result.stdout
