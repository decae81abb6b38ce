"""The step ``run_and_check`` (grader.grading.notebook.job): what the kernel's outputs keep
(grader.grading.notebook.kernel), how the checker sums up a passing test cell, and the step itself
with ``run_notebook`` replaced: the spare's kernel first, one more try when no kernel
starts, then the end of the job. (The sandboxed kernel itself, with its limits, is in
test_grading_kernel.py.)"""


def test_a_passing_cell_is_summed_up_by_its_last_tick_line():
    from grader.learner.notebook import summary_line

    printed = (
        "✓ matmul_dot: all 12 cases pass; 3 bad inputs rejected with ValueError.\n"
        "  tried: 1×1, rectangular,\n    large values\n"
        "✓ matmul_dot: all 25 hidden cases pass.\n"
    )
    assert summary_line(printed) == "✓ matmul_dot: all 25 hidden cases pass."
    assert summary_line("done\n") == "done"
    assert summary_line("") == "passed"


def _display(data: dict) -> dict:
    return {"msg_type": "display_data", "content": {"data": data, "metadata": {}},
            "parent_header": {}, "header": {"msg_type": "display_data"}}


def _stream(text: str) -> dict:
    return {"msg_type": "stream", "content": {"name": "stdout", "text": text},
            "parent_header": {}, "header": {"msg_type": "stream"}}


def test_figures_count_apart_from_the_text_cap_and_have_a_cap_of_their_own():
    from grader.grading.notebook.kernel import _Outputs

    png = "iVBORw0KGgo" + "A" * 400_000  # a 400 kB figure, as the kernel sends it (base64)
    sink = _Outputs(cap=1000, image_cap=1_000_000)
    sink.add(_display({"image/png": png, "text/plain": "<Figure size 640x480 with 1 Axes>"}))
    sink.add(_stream("x" * 900))
    outputs = sink.finish()
    assert outputs[0]["data"]["image/png"] == png, "the figure is kept whole"
    assert not any("[output cut" in o.get("text", "") for o in outputs)

    sink.add(_stream("y" * 500))  # now the text is over its cap: cut, with a note
    sink.add(_display({"image/png": png}))
    sink.add(_display({"image/png": png}))  # the third figure is over the figures' cap
    outputs = sink.finish()
    texts = "".join(o.get("text", "") for o in outputs if o["output_type"] == "stream")
    assert "[output cut: this cell printed more than 1,000 characters]" in texts
    assert "[figure left out" in texts
    assert sum(1 for o in outputs if o["output_type"] == "display_data") == 2
    assert len(texts.replace("\n", "").split("[")[0]) <= 1000


# ------------------------------------------------------------------ the step

class _Private:
    """Stands in for the job's private directory: the kernels are never started."""

    first = "the spare's kernel, already launched"

    def kernel(self, n):
        raise AssertionError("the stand-in for run_notebook starts no kernel")


def _run_with(monkeypatch, outcomes):
    """Run the step with ``run_notebook`` giving ``outcomes`` in turn (an exception is
    raised); return the state and each call's (first kernel, checker)."""
    from grader.grading.notebook import job as job_module
    from job_states import lesson, make_job, state_before

    calls = []

    def run_notebook(nb, make_kernel, limits, replayable, first=None, on_test=None):
        calls.append((first, on_test.__self__))
        outcome = outcomes[len(calls) - 1]
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    monkeypatch.setattr(job_module, "run_notebook", run_notebook)
    state = state_before("run_and_check", make_job({lesson().filename: lesson().honest()}))
    state.private = _Private()
    job_module.run_and_check(state)
    return state, calls


def test_the_notebook_runs_once_on_the_spare_s_kernel(monkeypatch):
    runs = ["one run per cell"]
    state, calls = _run_with(monkeypatch, [runs])
    assert len(calls) == 1 and calls[0][0] == _Private.first
    assert state.runs is runs and state.verdicts is calls[0][1].results
    assert calls[0][1].tests is state.checks and state.finished is None


def test_a_kernel_that_does_not_start_is_tried_once_more_with_a_fresh_checker(monkeypatch):
    from grader.grading.notebook.kernel import KernelStartError

    runs = ["the second try's runs"]
    state, calls = _run_with(monkeypatch, [KernelStartError("slow machine"), runs])
    assert [first for first, _ in calls] == [_Private.first, None]
    assert calls[0][1] is not calls[1][1]
    assert state.runs is runs and state.verdicts is calls[1][1].results and state.finished is None


def test_a_kernel_that_does_not_start_twice_ends_the_job_as_failed(monkeypatch):
    from grader.grading.notebook.kernel import KernelStartError

    state, calls = _run_with(monkeypatch, [KernelStartError("first"), KernelStartError("no kernel")])
    assert len(calls) == 2
    result = state.finished
    assert (result.status, result.error, result.tests) == ("failed", "no kernel", [])
    assert result.notes == state.job.notes == ["from reading"]
