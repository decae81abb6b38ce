"""What a figure says about itself, and what a reader needs of it (DESIGN.md, gate 12).

Three parts, so that the rules can be tested on figures built in a test and applied to
every figure a solution notebook draws:

- :func:`collect` reads one matplotlib figure into plain data (JSON): for every Axes its
  title, axis labels, colour bar label, scales, the range of its data and what its
  legend covers.
- :func:`install` runs inside a notebook's kernel, before the first cell: every figure
  the kernel renders (shown inline, by ``plt.show``, ``display`` or a widget's static
  fallback, or saved) is collected and appended, one JSON line each, to a file, with a
  key of the source of the cell that drew it. It costs one extra draw per figure.
- :func:`problems` takes those facts and returns what is wrong, in words that name the
  notebook, the cell and the axes.
"""
from __future__ import annotations

import json
import math

import numpy as np

# Positive values (of lines, markers or areas) whose largest is 10 ** DECADES times their
# smallest want a log axis.
DECADES = 3


# ---------------------------------------------------------------------------------------
# Collecting


def _text(label) -> str:
    return label.get_text().strip() if label is not None and label.get_visible() else ""


def _renderer(fig):
    canvas = fig.canvas
    return canvas.get_renderer() if hasattr(canvas, "get_renderer") else fig._get_renderer()


def _value_range(values) -> list[float] | None:
    """[smallest, largest] of the finite ``values``."""
    v = np.asarray(values, dtype=float).ravel()
    v = v[np.isfinite(v)]
    return [float(v.min()), float(v.max())] if v.size else None


def _data_values(ax):
    """The x and y values of what ``ax`` plots as lines, markers and filled areas. Not
    bars: a bar's length is read from zero, which a log axis does not have (weights of
    0.00003 and 0.997 are rightly bars of nothing and of nearly everything); not images
    or text, which have no range."""
    from matplotlib.collections import PathCollection, PolyCollection

    xs, ys = [], []
    for line in ax.lines:
        if not line.get_visible() or line.get_transform() != ax.transData:  # axhline: a guide
            continue
        xs.append(np.asarray(line.get_xdata(), dtype=float))
        ys.append(np.asarray(line.get_ydata(), dtype=float))
    for coll in ax.collections:
        if not coll.get_visible():
            continue
        if isinstance(coll, PathCollection) and coll.get_offset_transform() == ax.transData:
            offsets = np.asarray(coll.get_offsets(), dtype=float)
            if offsets.size:
                xs.append(offsets[:, 0])
                ys.append(offsets[:, 1])
        elif isinstance(coll, PolyCollection) and coll.get_transform() == ax.transData:
            for path in coll.get_paths():
                xs.append(path.vertices[:, 0])
                ys.append(path.vertices[:, 1])
    return xs, ys


def _axis_facts(ax, values, which: str) -> dict:
    axis = ax.xaxis if which == "x" else ax.yaxis
    label = _text(axis.label)
    found = [v for v in values if v.size]
    rng = _value_range(np.concatenate(found)) if found else None
    return {"label": label, "scale": axis.get_scale(), "visible": bool(ax.axison and axis.get_visible()),
            "range": rng}


def _has_data(ax) -> bool:
    return bool(ax.lines or ax.collections or ax.images or ax.patches or ax.texts or ax.tables
                or ax.artists)


def _covered(ax, box, renderer) -> list[str]:
    """What of ``ax``'s data lies inside ``box`` (display coordinates)."""
    from matplotlib.collections import PathCollection
    from matplotlib.transforms import Bbox

    # Only the part of the legend over the axes can hide data: outside, data is clipped.
    inner = Bbox.intersection(Bbox.from_extents(box.x0 + 1, box.y0 + 1, box.x1 - 1, box.y1 - 1),
                              ax.get_window_extent(renderer))
    if inner is None:
        return []
    found = []

    def inside(points) -> int:
        points = np.asarray(points, dtype=float).reshape(-1, 2)
        return int(((points[:, 0] > inner.x0) & (points[:, 0] < inner.x1) &
                    (points[:, 1] > inner.y0) & (points[:, 1] < inner.y1)).sum())

    for line in ax.lines:
        if not line.get_visible():
            continue
        path = line.get_transform().transform_path(line.get_path())
        name = line.get_label() if not line.get_label().startswith("_") else "a line"
        drawn = line.get_linestyle() not in ("None", "none", "", " ")
        if inside(path.vertices) or (drawn and path.intersects_bbox(inner, filled=False)):
            found.append(f"line {name!r}")
    for coll in ax.collections:
        if not coll.get_visible():
            continue
        name = coll.get_label() if not coll.get_label().startswith("_") else type(coll).__name__
        if isinstance(coll, PathCollection):  # markers: a scatter
            if inside(coll.get_offset_transform().transform(coll.get_offsets())):
                found.append(f"markers {name!r}")
            continue
        transform = coll.get_transform()
        if any(transform.transform_path(p).intersects_bbox(inner, filled=True)
               for p in coll.get_paths()):
            found.append(f"area {name!r}")
    for patch in ax.patches:
        if patch.get_visible() and patch.get_window_extent(renderer).overlaps(inner):
            found.append(f"patch {patch.get_label()!r}" if not patch.get_label().startswith("_")
                         else "a bar or patch")
    for image in ax.images:
        if image.get_visible() and image.get_window_extent(renderer).overlaps(inner):
            found.append("an image")
    for text in ax.texts:
        if text.get_visible() and text.get_text().strip() and \
                text.get_window_extent(renderer).overlaps(inner):
            found.append(f"text {text.get_text().strip()[:30]!r}")
    return sorted(set(found))


def _colorbars(fig) -> dict:
    """Each colour bar's axes (by id), with its label."""
    found = {}
    for ax in fig.get_axes():
        for mappable in [*ax.images, *ax.collections]:
            bar = getattr(mappable, "colorbar", None)
            if bar is not None:
                axis = bar.ax.yaxis if bar.orientation == "vertical" else bar.ax.xaxis
                found[id(bar.ax)] = _text(axis.label)
    return found


def collect(fig, drawn: bool = False) -> dict:
    """The facts of one figure, as JSON-ready data. A figure not ``drawn`` just now is
    drawn first, for its layout and its legends' places."""
    if not drawn:
        fig.draw_without_rendering()
    renderer = _renderer(fig)
    bars = _colorbars(fig)
    axes = fig.get_axes()
    index = {id(ax): i for i, ax in enumerate(axes)}
    facts = []
    for i, ax in enumerate(axes):
        if not ax.get_visible():
            continue
        xs, ys = _data_values(ax)
        legend = ax.get_legend()
        legends = []
        if legend is not None and legend.get_visible():
            box = legend.get_window_extent(renderer)
            legends.append({"bbox": [round(v, 1) for v in box.extents],
                            "covers": _covered(ax, box, renderer)})
        for flegend in fig.legends:  # a figure legend must cover no axes' data either
            box = flegend.get_window_extent(renderer)
            if flegend.get_visible() and box.overlaps(ax.get_window_extent(renderer)):
                legends.append({"bbox": [round(v, 1) for v in box.extents],
                                "covers": _covered(ax, box, renderer), "figure_legend": True})
        facts.append({
            "index": i,
            "title": next((ax.get_title(loc).strip() for loc in ("center", "left", "right")
                           if ax.get_title(loc).strip()), ""),
            "colorbar": bars.get(id(ax)),
            "axis_on": bool(ax.axison),
            "has_data": _has_data(ax),
            "x": _axis_facts(ax, xs, "x"),
            "y": _axis_facts(ax, ys, "y"),
            # Axes whose labels count for this one: shared axes (an inner panel's label is
            # its neighbour's) and twins (one title for both).
            "shares_x": sorted(index[id(a)] for a in ax.get_shared_x_axes().get_siblings(ax)
                               if id(a) in index and a is not ax),
            "shares_y": sorted(index[id(a)] for a in ax.get_shared_y_axes().get_siblings(ax)
                               if id(a) in index and a is not ax),
            "twins": sorted(index[id(a)] for a in ax._twinned_axes.get_siblings(ax)  # no API
                            if id(a) in index and a is not ax),
            "legends": legends,
        })
    return {"suptitle": fig.get_suptitle().strip(), "supxlabel": fig.get_supxlabel().strip(),
            "supylabel": fig.get_supylabel().strip(), "axes": facts}


# ---------------------------------------------------------------------------------------
# Inside the kernel


def source_key(source: str) -> str:
    """A short key of a cell's source: the kernel sees the source, not the cell's id."""
    import hashlib

    return hashlib.sha1(source.strip().encode("utf-8")).hexdigest()[:12]


def install(out_path: str, png_dir: str | None = None) -> None:
    """Collect every figure the kernel draws into ``out_path`` (one JSON line each, with a
    key of the running cell's source); with ``png_dir``, save each as a PNG there too.

    A figure is collected when it is rendered (inline, by ``display`` or ``savefig``),
    when ``plt.show`` is called while it is open, and at the end of the cell that leaves it
    open; again only if it changed since. So any backend will do (the inline one closes
    figures after each cell, Agg never shows them)."""
    import sys
    from pathlib import Path

    import matplotlib.pyplot as plt
    from IPython import get_ipython
    from matplotlib.backend_bases import FigureCanvasBase

    state = {"cell": None, "busy": False, "serial": 0}

    def changed(fig) -> bool:
        return fig.stale or not hasattr(fig, "_facts_serial")

    def record(fig, drawn: bool = False) -> None:
        if state["busy"]:
            return
        state["busy"] = True
        try:
            if not hasattr(fig, "_facts_serial"):
                state["serial"] += 1
                fig._facts_serial = state["serial"]
            facts = {"cell": state["cell"], "figure": fig._facts_serial, **collect(fig, drawn)}
            with open(out_path, "a", encoding="utf-8") as out:
                out.write(json.dumps(facts) + "\n")
            if png_dir:
                fig.savefig(Path(png_dir) / f"{fig._facts_serial:03d}_{state['cell']}.png",
                            dpi=100, bbox_inches="tight")
        finally:
            state["busy"] = False

    def open_figures():  # without plt.figure(n), which would change the current figure
        from matplotlib._pylab_helpers import Gcf

        return [manager.canvas.figure for manager in Gcf.get_all_fig_managers()]

    def pre_run_cell(info):
        # nbclient sends no cell id: the caller finds the cell by its source.
        state["cell"] = source_key(info.raw_cell)

    def rendered_anyway() -> bool:
        # The inline backend renders every figure it shows or leaves at a cell's end:
        # collected then, the figure needs no extra draw (a tenth of a second or more).
        return "inline" in plt.get_backend()

    def post_execute():
        # Runs before the inline backend's own hook, which shows and closes the figures.
        if "matplotlib.pyplot" in sys.modules and not rendered_anyway():
            for fig in open_figures():
                if changed(fig):
                    record(fig)

    shell = get_ipython()
    shell.events.register("pre_run_cell", pre_run_cell)
    shell.events.register("post_execute", post_execute)

    print_figure, show = FigureCanvasBase.print_figure, plt.show

    def printing(self, *args, **kwargs):
        new = changed(self.figure)  # before printing draws it, which makes it look unchanged
        result = print_figure(self, *args, **kwargs)
        if new:
            record(self.figure, drawn=True)
        return result

    def showing(*args, **kwargs):
        if not rendered_anyway():
            for fig in open_figures():
                if changed(fig):
                    record(fig)
        return show(*args, **kwargs)

    FigureCanvasBase.print_figure = printing
    plt.show = showing


def kernel_lines(out_path: str, png_dir: str | None = None) -> list[str]:
    """IPython ``exec_lines`` that install the collector before the notebook's first cell,
    leaving no name behind in the notebook's namespace."""
    from pathlib import Path

    here = str(Path(__file__).resolve().parent)
    return [f"import sys as _f_sys; _f_sys.path.append({here!r}); import figure_facts as _f_facts; "
            f"_f_sys.path.remove({here!r}); _f_facts.install({out_path!r}, {png_dir!r}); "
            f"del _f_sys, _f_facts"]


def read(out_path) -> list[dict]:
    """The facts a kernel wrote, one per figure (a figure rendered twice counts once, as
    last drawn)."""
    from pathlib import Path

    path = Path(out_path)
    found = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            found[(record["cell"], record["figure"])] = record
    return list(found.values())


# ---------------------------------------------------------------------------------------
# Judging


def _label_of(axes, i: int, which: str, figure: dict) -> str:
    """Axis ``which`` of axes ``i``'s label: its own, a shared neighbour's, or the figure's."""
    own = axes[i][which]["label"]
    if own:
        return own
    for j in axes[i][f"shares_{which}"]:
        if j in axes and axes[j][which]["label"]:
            return axes[j][which]["label"]
    return figure[f"sup{which}label"]


def problems(figures: list[dict]) -> list[str]:
    """What is wrong with each figure: every record in ``figures`` is :func:`collect`'s
    facts with ``where`` (the notebook, cell and figure, in words) added."""
    found = []
    for figure in figures:
        axes = {a["index"]: a for a in figure["axes"]}
        for i, ax in axes.items():
            name = f"{figure['where']}, axes {i}"
            if ax["title"]:
                name += f" ({ax['title']!r})"
            say = lambda what: found.append(f"{name}: {what}")  # noqa: E731
            if ax["colorbar"] is not None:
                if not ax["colorbar"]:
                    say("the colour bar has no label")
                continue
            if not ax["has_data"]:
                continue
            titled = ax["title"] or figure["suptitle"] or any(
                axes[j]["title"] for j in ax["twins"] if j in axes)
            if not titled:
                say("no title (and the figure has no suptitle)")
            if ax["axis_on"]:
                for which in "xy":
                    if ax[which]["visible"] and not _label_of(axes, i, which, figure):
                        say(f"the {which} axis has no label")
            for which in "xy":
                facts = ax[which]
                if not facts["visible"] or facts["range"] is None:
                    continue
                low, high = facts["range"]
                if facts["scale"] == "linear" and low > 0 and high / low >= 10 ** DECADES:
                    say(f"its {which} values span {math.log10(high / low):.1f} decades "
                        f"({low:.3g} to {high:.3g}) on a linear axis: use a log axis")
                if facts["scale"] == "log" and low <= 0:
                    say(f"its {which} axis is logarithmic but holds values <= 0 ({low:.3g}), "
                        f"which are not drawn")
            for legend in ax["legends"]:
                if legend["covers"]:
                    say(f"its {'figure ' if legend.get('figure_legend') else ''}legend covers "
                        f"{', '.join(legend['covers'])}")
    return found


def locate(records: list[dict], notebook, name: str) -> list[dict]:
    """Add ``where`` to each record: the notebook ``name``, the cell (its index among the
    notebook's cells and its id) and the figure's number in the run."""
    cells = {}
    for i, cell in enumerate(notebook.cells):
        if cell.cell_type == "code":
            cells.setdefault(source_key(cell.source), f"cell {i} (id {cell.get('id', '?')})")
    for record in records:
        cell_words = cells.get(record["cell"], "a cell not in the notebook")
        record["where"] = f"{name}, {cell_words}, figure {record['figure']}"
    return records
