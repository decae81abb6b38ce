"""The step ``run_and_check`` (grader.grading.job): what the kernel's outputs keep
(grader.grading.kernel) and how the checker sums up a passing test cell. (The sandboxed
kernel itself, with its limits, is in test_grading_kernel.py.)"""


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
    from grader.grading.kernel import _Outputs

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
