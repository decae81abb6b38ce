"""The figure rules of gate 12 (``figure_facts``), each fed a figure that breaks it.

The rules are applied to every figure of every solution notebook in the run that
validates it (``test_notebooks.py``), so that the notebooks run once; here each rule
meets figures built with matplotlib, bad ones and good ones, and the hook that collects
figures inside a kernel meets every way a notebook shows one.
"""
import json
import os

import matplotlib.pyplot as plt
import nbformat
import numpy as np
import pytest

import figure_facts


def problems_of(fig) -> list[str]:
    facts = {**figure_facts.collect(fig), "where": "test figure"}
    plt.close(fig)
    return figure_facts.problems([facts])


def labelled(ax, title="a title", x="x (s)", y="y (bytes)"):
    ax.set_title(title)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    return ax


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_a_good_figure_has_no_problem():
    fig, (lines, heat, drawing, logs) = plt.subplots(1, 4, figsize=(16, 3.5))
    t = np.linspace(0, 1, 50)
    labelled(lines, "two curves").plot(t, t, label="rising")
    lines.plot(t, 1 - t, label="falling")
    lines.set_ylim(-0.2, 2.2)
    lines.legend(loc="upper center", ncols=2)  # above the curves, below the top
    image = labelled(heat, "weights", "key", "query").imshow(np.eye(3))
    heat.set_xticks(range(3), ["the", "cat", "sat"])
    fig.colorbar(image, ax=heat, label="weight")
    drawing.plot([0, 1], [0, 1])
    drawing.axis("off")
    drawing.set_title("lines between tokens")
    labelled(logs, "memory", "T (tokens)", "peak (MB)").loglog([8, 64, 512, 4096], [1, 30, 2e3, 1e5])
    assert problems_of(fig) == []


def test_a_missing_title_is_named_with_where_it_is():
    fig, ax = plt.subplots()
    labelled(ax, title="").plot([0, 1], [0, 1])
    assert problems_of(fig) == ["test figure, axes 0: no title (and the figure has no suptitle)"]


def test_a_suptitle_titles_every_panel_and_an_empty_axes_needs_none():
    fig, (a, b, empty) = plt.subplots(1, 3)
    labelled(a, title="").plot([0, 1], [0, 1])
    labelled(b, title="").plot([0, 1], [1, 0])
    assert any("no title" in p for p in problems_of(fig))
    fig, (a, b, empty) = plt.subplots(1, 3)
    labelled(a, title="").plot([0, 1], [0, 1])
    labelled(b, title="").plot([0, 1], [1, 0])
    fig.suptitle("both")
    assert problems_of(fig) == []


def test_an_axis_without_a_label_is_named():
    fig, ax = plt.subplots()
    labelled(ax, x="").plot([0, 1], [0, 1])
    assert problems_of(fig) == ["test figure, axes 0 ('a title'): the x axis has no label"]
    fig, ax = plt.subplots()
    labelled(ax, y="").bar([0, 1], [2, 3])
    assert problems_of(fig) == ["test figure, axes 0 ('a title'): the y axis has no label"]


def test_a_heatmap_whose_ticks_name_tokens_still_needs_axis_labels():
    fig, ax = plt.subplots()
    ax.imshow(np.eye(3))
    ax.set_xticks(range(3), ["the", "cat", "sat"])
    ax.set_yticks(range(3), ["the", "cat", "sat"])
    ax.set_title("weights")
    assert problems_of(fig) == ["test figure, axes 0 ('weights'): the x axis has no label",
                                "test figure, axes 0 ('weights'): the y axis has no label"]


def test_an_axes_turned_off_needs_only_a_title():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    ax.axis("off")
    assert problems_of(fig) == ["test figure, axes 0: no title (and the figure has no suptitle)"]
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    ax.axis("off")
    ax.set_title("a drawing")
    assert problems_of(fig) == []


def test_a_shared_axis_takes_its_neighbours_label_or_the_figures():
    fig, (a, b) = plt.subplots(1, 2, sharey=True)
    labelled(a).plot([0, 1], [0, 1])
    labelled(b, y="").plot([0, 1], [1, 0])
    assert problems_of(fig) == []
    fig, (a, b) = plt.subplots(1, 2)  # not shared: the right panel's y axis says nothing
    labelled(a).plot([0, 1], [0, 1])
    labelled(b, y="").plot([0, 1], [1, 0])
    assert problems_of(fig) == ["test figure, axes 1 ('a title'): the y axis has no label"]
    fig, (a, b) = plt.subplots(1, 2)
    labelled(a, y="").plot([0, 1], [0, 1])
    labelled(b, y="").plot([0, 1], [1, 0])
    fig.supylabel("weight")
    assert problems_of(fig) == []


def test_a_twin_axes_shares_its_title():
    fig, ax = plt.subplots()
    labelled(ax).plot([0, 1], [0, 1])
    twin = ax.twinx()
    twin.plot([0, 1], [3, 1], color="C1")
    assert problems_of(fig) == ["test figure, axes 1: the y axis has no label"]


def test_an_unlabelled_colour_bar_is_named():
    fig, ax = plt.subplots()
    image = labelled(ax).imshow(np.eye(3))
    fig.colorbar(image, ax=ax)
    assert problems_of(fig) == ["test figure, axes 1: the colour bar has no label"]
    fig, ax = plt.subplots()
    image = labelled(ax).imshow(np.eye(3))
    fig.colorbar(image, ax=ax, orientation="horizontal").set_label("weight")
    assert problems_of(fig) == []


@pytest.mark.parametrize("draw, covered", [
    (lambda ax: ax.plot(np.linspace(0, 1, 20), np.full(20, 0.9), label="flat"), "line 'flat'"),
    (lambda ax: ax.plot([0, 1], [1, 0], label="diagonal"), "line 'diagonal'"),  # no vertex inside
    (lambda ax: ax.scatter([0.05, 0.5], [0.95, 0.5], label="dots"), "markers 'dots'"),
    (lambda ax: ax.bar([0.1, 0.5], [1.0, 0.2], width=0.2, label="bars"), "a bar or patch"),
    (lambda ax: ax.fill_between([0, 1], [0.8, 0.8], [1, 1], label="band"), "area 'band'"),
    (lambda ax: ax.imshow(np.eye(3), extent=(0, 1, 0, 1), label="map"), "an image"),
])
def test_a_legend_over_the_data_is_named(draw, covered):
    fig, ax = plt.subplots()
    draw(labelled(ax))
    ax.plot([], [], label="an entry")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.legend(loc="upper left")
    found = problems_of(fig)
    assert len(found) == 1 and found[0].startswith("test figure, axes 0 ('a title'): its legend "
                                                   "covers "), found
    assert covered in found[0]


def test_a_legend_beside_the_data_or_outside_the_axes_is_fine():
    fig, ax = plt.subplots()
    t = np.linspace(0, 1, 50)
    labelled(ax).plot(t, t ** 2, label="square")
    ax.legend(loc="upper left")  # the curve stays low on the left
    assert problems_of(fig) == []
    fig, ax = plt.subplots()  # the line goes on past the axes, clipped, behind the legend
    labelled(ax).plot(3 * t, 0.5 + 0 * t, label="flat")
    ax.set_xlim(0, 1)
    ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5))
    assert problems_of(fig) == []


def test_a_figure_legend_over_an_axes_data_is_named():
    fig, ax = plt.subplots()
    labelled(ax).plot(np.linspace(0, 1, 20), np.full(20, 0.5), label="flat")
    fig.legend(loc="center")
    found = problems_of(fig)
    assert found == ["test figure, axes 0 ('a title'): its figure legend covers line 'flat'"]


def test_positive_values_over_decades_want_a_log_axis():
    fig, ax = plt.subplots()
    labelled(ax).plot([1, 2, 3, 4, 5, 6], [1, 10, 100, 1e3, 1e4, 1e5])
    assert problems_of(fig) == ["test figure, axes 0 ('a title'): its y values span 5.0 decades "
                                "(1 to 1e+05) on a linear axis: use a log axis"]
    fig, ax = plt.subplots()  # markers alone, and along x
    labelled(ax).scatter([1e-2, 1, 1e2], [1, 2, 3])
    assert problems_of(fig) == ["test figure, axes 0 ('a title'): its x values span 4.0 decades "
                                "(0.01 to 100) on a linear axis: use a log axis"]
    fig, ax = plt.subplots()
    labelled(ax).semilogy([1, 2, 3, 4, 5, 6], [1, 10, 100, 1e3, 1e4, 1e5])
    assert problems_of(fig) == []
    fig, ax = plt.subplots()  # values through 0 cannot go on a log axis: no rule
    labelled(ax).plot([1, 2, 3], [-1e5, 0, 1e5])
    assert problems_of(fig) == []


def test_a_log_axis_with_values_it_cannot_draw_is_named():
    fig, ax = plt.subplots()
    labelled(ax).plot([1, 2, 3], [0, 10, 1000])
    ax.set_yscale("log")
    assert problems_of(fig) == ["test figure, axes 0 ('a title'): its y axis is logarithmic but "
                                "holds values <= 0 (0), which are not drawn"]


def test_bars_are_read_from_zero_and_need_no_log_axis():
    fig, ax = plt.subplots()
    labelled(ax).bar([0, 1, 2], [3e-5, 0.01, 0.99])
    assert problems_of(fig) == []
    fig, ax = plt.subplots()  # but the markers on them count
    labelled(ax).bar([0, 1, 2], [1, 1e3, 1e5])
    ax.plot([0, 1, 2], [1, 1e3, 1e5], "o")
    assert problems_of(fig) == ["test figure, axes 0 ('a title'): its y values span 5.0 decades "
                                "(1 to 1e+05) on a linear axis: use a log axis"]


WAYS = [
    "fig, ax = plt.subplots()\nax.plot([0, 1])\nax.set_title('left open')",          # cell's end
    "fig = plt.figure()\nfig.add_subplot().plot([1, 0])\nplt.show()",                  # show
    "fig = plt.figure()\nfig.add_subplot().plot([1, 0])\ndisplay(fig)\nplt.close(fig)",  # display
    "def draw(a):\n    fig, ax = plt.subplots()\n    ax.plot([0, a])\n    ax.set_xlabel('x')\n"
    "    return fig\n"
    "interactive_figure(draw, {'a': ipywidgets.IntSlider(value=1)}, [{'a': 1}, {'a': 2}])",
]
HOOKED = [
    "import ipywidgets\nimport matplotlib.pyplot as plt\nfrom IPython.display import display\n"
    "from courseware.widgets import interactive_figure",
    *WAYS,                                          # under Agg, which never shows a figure
    "plt.close('all')\n%matplotlib inline", *(f"{way}  # inline" for way in WAYS),  # as notebooks do
    "print(sorted(n for n in dir() if n.startswith('_f_')))",
]


@pytest.mark.slow
def test_the_kernel_hook_sees_every_way_a_cell_shows_a_figure(tmp_path):
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in HOOKED])
    out = tmp_path / "figures.jsonl"
    client = NotebookClient(nb, timeout=60, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}},
                            extra_arguments=[f"--IPKernelApp.exec_lines={line}"
                                             for line in figure_facts.kernel_lines(str(out))])
    client.execute(env=dict(os.environ, MPLBACKEND="Agg", COURSE_STATIC_FIGURES="1"))
    assert nb.cells[-1].outputs[0]["text"].strip() == "[]"  # no name left behind
    records = figure_facts.locate(figure_facts.read(out), nb, "hooked")
    found = sorted(records, key=lambda r: r["figure"])
    # Under Agg, display(fig) shows no picture (only the figure's repr): nothing is drawn.
    shown = [1, 2, 4, 4, 6, 7, 8, 9, 9]
    assert [r["where"] for r in found] == [f"hooked, cell {c} (id {nb.cells[c].id}), figure {n}"
                                           for n, c in enumerate(shown, 1)], found
    assert [r["axes"][0]["title"] for r in found if r["axes"][0]["title"]] == ["left open"] * 2
    assert [r["axes"][0]["x"]["label"] for r in found if r["axes"][0]["x"]["label"]] == ["x"] * 4


def test_a_cell_is_found_by_its_source():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("text"),
                                         nbformat.v4.new_code_cell("plt.plot([1])\n")])
    records = [{"cell": figure_facts.source_key("plt.plot([1])"), "figure": 3},
               {"cell": figure_facts.source_key("other"), "figure": 4}]
    figure_facts.locate(records, nb, "nb")
    assert records[0]["where"] == f"nb, cell 1 (id {nb.cells[1].id}), figure 3"
    assert records[1]["where"] == "nb, a cell not in the notebook, figure 4"


def test_the_facts_are_json():
    fig, ax = plt.subplots()
    labelled(ax).plot([1, 2], [3, 4], label="a")
    ax.legend()
    assert json.loads(json.dumps(figure_facts.collect(fig)))["axes"][0]["legends"]
