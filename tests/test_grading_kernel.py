"""The sandboxed cell runner on its own: limits that the corpus does not reach."""
import tempfile
from pathlib import Path

import pytest

from conftest import ROOT
from grader.grading import nbjson
from grader.grading.job import kernel_env
from grader.grading.kernel import Kernel, run_notebook
from grader.grading.sandbox import Limits, detect

pytestmark = pytest.mark.slow


def _run(sources, limits):
    with tempfile.TemporaryDirectory(prefix="grade-") as scratch:
        scratch = Path(scratch)
        scratch.chmod(0o711)
        box = detect("auto", ROOT, [ROOT / "solutions"], scratch, limits)
        job = scratch / "job"
        (job / "in" / "work").mkdir(parents=True)
        job.chmod(0o711)
        nb = nbjson.new_notebook([nbjson.new_cell("code", s, f"c{i}") for i, s in enumerate(sources)])
        runs = run_notebook(nb, lambda n: Kernel(job, box, limits, kernel_env(), n),
                            limits, lambda i: True)
        return nb, runs


def test_an_uninterruptible_cell_is_killed_and_the_notebook_goes_on():
    sources = [
        "x = 41",
        "import time\nwhile True:\n    try:\n        time.sleep(5)\n    except BaseException:\n        pass",
        "print(x + 1)",
        "print('y' * 50_000)",
    ]
    nb, runs = _run(sources, Limits(timeout=2, wall=60, output_chars=1000))
    assert [r.status for r in runs] == ["ok", "stuck", "ok", "ok"]
    assert "did not respond to an interrupt" in runs[1].detail
    assert nb.cells[2].outputs[0].text == "42\n"  # replayed after the restart
    text = "".join(o.get("text", "") for o in nb.cells[3].outputs)
    assert "output cut" in text and len(text) < 1200


def test_the_wall_clock_cap_stops_the_notebook():
    nb, runs = _run(["import time\ntime.sleep(30)", "print('never')"], Limits(timeout=20, wall=3))
    assert [r.status for r in runs] == ["wall", "wall"]
    assert "time limit (3 s in all)" in runs[0].detail
    assert nb.cells[1].outputs[0].ename == "NotRun"


def test_a_kernel_that_keeps_dying_stops_being_restarted():
    sources = ["import os"] + ["os._exit(1)"] * 3 + ["print('late')"]
    nb, runs = _run(sources, Limits(timeout=10, max_restarts=2))
    assert [r.status for r in runs] == ["ok", "died", "died", "died", "not-run"]
    assert "restarted 3 times" in runs[-1].detail
