"""JupyterLab in a real headless Chromium, for tests/test_browser.py.

`course_copy` makes a throwaway course directory, `jupyter_lab` runs `make lab` on it
(127.0.0.1, a free port, a token) and always shuts it down, `chromium` opens Debian's
Chromium through Playwright, and `Lab` holds the few JupyterLab gestures the tests make:
open a notebook, run all cells, read what the cells show.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
INSTALL_HINT = ("Chromium is not installed; the browser tests need Debian's package: "
                "`sudo apt-get install -y chromium` (then rerun `make test`).")
# Without these flags Chromium phones home at start, which this closed network refuses.
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage",
]
COURSE_PARTS = ("solutions", "notebooks", "assets", "nbgrader_config.py")
# Lab settings for the test server: no news or update check (they would fetch from the web
# and pop a notification over the page), and every cell kept in the page (by default Lab
# only renders the cells near the viewport, so most outputs could not be inspected).
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
        {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}


def chromium_missing_reason() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    if not CHROMIUM.exists():
        return INSTALL_HINT
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed: run `make setup` (it installs '.[dev]')."
    return None


def course_copy(root: Path, dest: Path) -> Path:
    """Copy what a course directory needs (not .venv, not student data) into ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__")
    for part in COURSE_PARTS:
        src = root / part
        if src.is_dir():
            shutil.copytree(src, dest / part, ignore=ignore)
        elif src.exists():
            shutil.copy2(src, dest / part)
    return dest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    url: str
    token: str
    process: subprocess.Popen
    log: Path

    def page_url(self, path: str) -> str:
        sep = "&" if "?" in path else "?"
        return f"{self.url}{path}{sep}token={self.token}"

    def api(self, path: str, method: str = "GET") -> dict | list | None:
        request = urllib.request.Request(
            f"{self.url}{path}", method=method, data=b"" if method != "GET" else None,
            headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None

    def log_tail(self, lines: int = 40) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


def _wait_until_up(server: Server, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with {server.process.returncode}:\n"
                               f"{server.log_tail()}")
        try:
            server.api("/api/status")
            return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.25)
    raise RuntimeError(f"JupyterLab did not answer within {timeout:.0f} s:\n{server.log_tail()}")


def _shut_down(server: Server, timeout: float = 20) -> None:
    """The clean way first (the REST call that also shuts the kernels down), then signals."""
    proc = server.process
    if proc.poll() is None:
        try:
            server.api("/api/shutdown", method="POST")
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        try:
            proc.wait(timeout)
            return
        except subprocess.TimeoutExpired:
            pass
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
        if proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
        except subprocess.TimeoutExpired:
            pass


@contextmanager
def jupyter_lab(root: Path, course: Path, scratch: Path, timeout: float = 90):
    """Run ``make lab`` (the learner's command, from the checkout ``root``) on the course copy
    ``course``, on 127.0.0.1, a free port and a token; yield a `Server`; shut it down
    whatever happens. The interpreter running the tests provides jupyter (``BIN``)."""
    settings = scratch / "lab-settings"
    for name, values in LAB_SETTINGS.items():
        path = settings / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    (scratch / "lab-workspaces").mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "JUPYTERLAB_SETTINGS_DIR": str(settings),
        "JUPYTERLAB_WORKSPACES_DIR": str(scratch / "lab-workspaces"),
        "ATTENTION_COURSE_ROOT": str(course),
        "PYTHONUNBUFFERED": "1",
    }
    # The kernels must see what a learner's kernels see, and this make is not a sub-make.
    for name in ("MPLBACKEND", "NBGRADER_EXECUTION", "COURSE_STATIC_FIGURES", "JPY_SESSION_NAME",
                 "MAKEFLAGS", "MFLAGS", "MAKELEVEL"):
        env.pop(name, None)
    port, token = free_port(), secrets.token_hex(16)
    env["JUPYTER_TOKEN"] = token   # not on the command line, which make echoes into the log
    log = scratch / "jupyterlab.log"
    lab_args = "--no-browser --ServerApp.ip=127.0.0.1 --ServerApp.port_retries=0"
    # -o setup: the environment running the tests is already set up (it may be a conda env).
    cmd = ["make", "--no-print-directory", "-C", str(root), "-o", "setup", "lab",
           f"BIN={Path(sys.executable).parent}", f"PORT={port}", f"LAB_DIR={course}",
           f"LAB_ARGS={lab_args}"]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    server = Server(f"http://127.0.0.1:{port}", token, proc, log)
    try:
        _wait_until_up(server, timeout)
        yield server
    finally:
        _shut_down(server)


@contextmanager
def chromium(user_data_dir: Path, width: int = 1400, height: int = 1000):
    """A Playwright browser context on Debian's Chromium with a fresh user-data dir."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(user_data_dir), executable_path=str(CHROMIUM), headless=True,
            args=CHROMIUM_ARGS, viewport={"width": width, "height": height})
        try:
            yield context
        finally:
            context.close()


# --- JupyterLab gestures -----------------------------------------------------------------

STDERR = 'application/vnd.jupyter.stderr'   # how Lab marks both tracebacks and stderr text

# One record per cell, in page order: kind, prompt, first source line, what its outputs show.
CURRENT_CELLS = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell"
_READ_CELLS = """() => [...document.querySelectorAll('CURRENT_CELLS')]
  .map((cell, index) => ({
    index,
    kind: cell.classList.contains('jp-CodeCell') ? 'code'
        : cell.classList.contains('jp-MarkdownCell') ? 'markdown' : 'raw',
    prompt: (cell.querySelector('.jp-InputPrompt') || {}).textContent || '',
    source: ((cell.querySelector('.cm-content') || {}).innerText || '').split('\\n')[0],
    outputs: [...cell.querySelectorAll('.jp-OutputArea-output')].map(o => ({
      mime: o.dataset.mimeType || '', text: o.innerText.slice(0, 4000)})),
    wide: [...cell.querySelectorAll('.jp-OutputArea-output, .cm-scroller')]
      .filter(e => e.scrollWidth > e.clientWidth + 2)
      .map(e => `${e.className.split(' ')[0]} ${e.scrollWidth}px in ${e.clientWidth}px`),
  }))""".replace("CURRENT_CELLS", CURRENT_CELLS)

# The notebook's indicator says "idle" for a moment before a kernel exists; the status bar
# says "| Idle" only once the kernel is connected.
_KERNEL_READY = """name => {
  const tab = document.querySelector('#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current');
  if (!tab || tab.textContent.trim() !== name) return false;
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  const status = panel && panel.querySelector('.jp-Notebook-ExecutionIndicator');
  const bar = [...document.querySelectorAll('#jp-main-statusbar .jp-StatusBar-TextItem')];
  return status && status.dataset.status === 'idle'
    && bar.some(item => /\\| Idle$/.test(item.textContent.trim()));
}"""

_RUN_FINISHED = """() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  const status = panel && panel.querySelector('.jp-Notebook-ExecutionIndicator');
  const prompts = [...(panel ? panel.querySelectorAll('.jp-CodeCell .jp-InputPrompt') : [])]
    .map(p => p.textContent);
  return status && status.dataset.status === 'idle' && prompts.some(t => /\\d/.test(t))
    && !prompts.some(t => t.includes('*'));
}"""


def _exactly(text: str) -> re.Pattern:
    return re.compile(f"^{re.escape(text)}$")


class Lab:
    """One browser tab on the JupyterLab `Server`; screenshots go to ``artifacts``."""

    def __init__(self, page, server: Server, artifacts: Path):
        self.page, self.server, self.artifacts = page, server, artifacts
        artifacts.mkdir(parents=True, exist_ok=True)

    def shot(self, name: str, locator=None) -> Path:
        path = self.artifacts / f"{name}.png"
        (locator or self.page).screenshot(path=str(path))
        return path

    def open(self, path: str, timeout: float = 90) -> None:
        """Open ``path`` (relative to the course) and wait until its kernel is idle."""
        # A workspace of its own, reset: Lab would otherwise reopen earlier tabs too.
        workspace = secrets.token_hex(4)
        self.page.goto(self.server.page_url(f"/lab/workspaces/{workspace}/tree/{path}?reset"))
        self.page.wait_for_function(_KERNEL_READY, arg=Path(path).name, timeout=timeout * 1000,
                                    polling=100)

    def menu(self, *labels: str) -> None:
        """Click through the menu bar: ``menu("Run", "Run All Cells")``."""
        first, *rest = labels
        self.page.locator(".lm-MenuBar-itemLabel", has_text=_exactly(first)).click()
        for label in rest:
            self.page.locator(".lm-Menu:visible .lm-Menu-itemLabel",
                              has_text=_exactly(label)).click()

    def run_all(self, timeout: float = 150) -> list[dict]:
        """Run > Run All Cells; wait until the kernel is idle with no cell queued."""
        self.menu("Run", "Run All Cells")
        self.page.wait_for_function(_RUN_FINISHED, timeout=timeout * 1000, polling=250)
        return self.cells()

    def cells(self) -> list[dict]:
        return self.page.evaluate(_READ_CELLS)

    def cell(self, index: int):
        return self.page.locator(CURRENT_CELLS).nth(index)


WIDGET_DEMO = '''\
%matplotlib inline
import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np

from courseware.widgets import has_widget_frontend, interactive_figure

print("widget front end:", has_widget_frontend())
scores = np.random.default_rng(0).normal(size=(5, 5)) * 2

def draw(temperature):
    z = scores / temperature
    weights = np.exp(z - z.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    fig, ax = plt.subplots(figsize=(4, 3.2))
    ax.imshow(weights, vmin=0, vmax=1, cmap="viridis")
    ax.set(title=f"softmax(scores / {temperature:.1f})", xlabel="key", ylabel="query")
    return fig

interactive_figure(draw, {"temperature": widgets.FloatSlider(
    value=1.0, min=0.1, max=5.0, step=0.1, description="temperature")})
'''


# What the page checks must catch: a code line wider than the notebook, a traceback, and
# the cell after it, which Run All never reaches.
FLAWED_CELLS = [
    "weights = [0.1, 0.2, 0.7]  # " + "a comment far too long to read without scrolling " * 4,
    "1 / 0",
    "print('never reached')",
]


def write_notebook(path: Path, sources: list[str]) -> Path:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                 "language": "python"}
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def write_widget_demo(path: Path) -> Path:
    """A one-cell notebook with a `courseware.widgets.interactive_figure` under a
    "temperature" slider: the widget path, tested before a lesson with a widget exists."""
    return write_notebook(path, [WIDGET_DEMO])
