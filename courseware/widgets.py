"""Interactive figures with a static fallback.

In JupyterLab a control (a slider, a dropdown) redraws a matplotlib figure. Where no
widget front end runs (nbconvert, nbclient, nbgrader's validation and autograding) the
same cell draws the figure for each of a few fixed settings instead, so the cell still
runs, still shows something, and the notebook's outputs stay meaningful.
"""
from __future__ import annotations

import os
from typing import Callable

import matplotlib.pyplot as plt


def has_widget_frontend() -> bool:
    """True when the kernel was started by a Jupyter server (JupyterLab, Notebook), which
    renders widgets; False under nbclient/nbconvert and during nbgrader runs."""
    if os.environ.get("NBGRADER_EXECUTION") or os.environ.get("COURSE_STATIC_FIGURES"):
        return False
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None or not hasattr(shell, "kernel"):
        return False
    return "JPY_SESSION_NAME" in os.environ


def interactive_figure(draw: Callable[..., plt.Figure], controls: dict, static: list[dict] | None = None):
    """Show ``draw(**values)`` under ``controls`` (a dict of name -> ipywidgets control).

    With a widget front end, returns the widget box (the last expression of a cell shows
    it); every change of a control redraws (a slider when it is let go). Without one, draws the figure for each dict of
    values in ``static`` (default: the controls' initial values) and returns None.
    """
    initial = {name: control.value for name, control in controls.items()}
    if not has_widget_frontend():
        for values in static or [initial]:
            fig = draw(**{**initial, **values})
            plt.show()
            plt.close(fig)
        return None

    import ipywidgets as widgets
    from IPython.display import display

    out = widgets.Output()

    def redraw(_change=None):
        values = {name: control.value for name, control in controls.items()}
        with out:
            out.clear_output(wait=True)
            fig = draw(**values)
            display(fig)
            plt.close(fig)

    for control in controls.values():
        style = getattr(control, "style", None)
        if style is not None and getattr(style, "description_width", None) == "":
            # ipywidgets cuts descriptions at a fixed width ("temperat..."): show them whole.
            style.description_width = "initial"
        if control.has_trait("continuous_update"):
            # Redraw when the slider is let go: a drag sends dozens of values, each redraw
            # takes a tenth of a second, and the figure would lag seconds behind the slider.
            control.continuous_update = False
        control.observe(redraw, names="value")
    redraw()
    return widgets.VBox([widgets.HBox(list(controls.values())), out])
