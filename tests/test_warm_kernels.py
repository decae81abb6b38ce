"""Kernels forked from a zygote: what one submission leaves behind, the next never sees.

The leaving notebook changes every kind of state a process holds (module attributes,
``sys.modules``, builtins, files in each folder it may write, the environment, threads,
child processes, signal handlers, limits, the random state). The looking notebook reports
each one it finds. Run in the same kernel, it finds them all (so the look can fail); run
in the next kernel forked from the same zygote, it finds none.
"""
import dataclasses
import json
import tempfile
import time
from pathlib import Path

import pytest

from conftest import ROOT
from grader.grading.notebook import nbjson, zygote as zygotes
from grader.grading.notebook.job import kernel_env
from grader.grading.notebook.kernel import Kernel, run_notebook
from grader.grading.notebook.sandbox import Limits, detect

pytestmark = pytest.mark.slow
PRELOAD = ("numpy", "matplotlib.pyplot", "matplotlib_inline.backend_inline")
LIMITS = Limits(timeout=30, wall=120)

LEAVE = r"""
import atexit, builtins, os, resource, signal, subprocess, sys, threading, types, numpy
numpy.left_behind = "numpy attribute"
builtins.left_behind = "builtin"
sys.modules["left_behind"] = types.ModuleType("left_behind")
sys.path.append("/tmp/left_behind")
os.environ["LEFT_BEHIND"] = "environment"
for folder in ("/tmp", "/job/work", "/job/home", "/job/tmp", "/dev/shm", os.getcwd()):
    try:
        with open(os.path.join(folder, "left_behind"), "w") as f:
            f.write("file")
    except OSError:
        pass
threading.Thread(target=__import__("time").sleep, args=(600,), name="left_behind", daemon=True).start()
child = subprocess.Popen(["sleep", "600"], start_new_session=True)
signal.signal(signal.SIGUSR1, lambda *a: None)
resource.setrlimit(resource.RLIMIT_NOFILE, (64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
os.umask(0o077)
atexit.register(print, "left behind")
numpy.random.seed(1234)
print(child.pid)
"""

LOOK = r"""
import builtins, json, os, resource, signal, sys, threading, numpy
found = []
if hasattr(numpy, "left_behind"): found.append("numpy attribute")
if hasattr(builtins, "left_behind"): found.append("builtin")
if "left_behind" in sys.modules: found.append("sys.modules")
if "/tmp/left_behind" in sys.path: found.append("sys.path")
if "LEFT_BEHIND" in os.environ: found.append("environment")
for folder in ("/tmp", "/job/work", "/job/home", "/job/tmp", "/dev/shm", os.getcwd()):
    if os.path.exists(os.path.join(folder, "left_behind")): found.append("file in " + folder)
if any(t.name == "left_behind" for t in threading.enumerate()): found.append("thread")
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        if open(f"/proc/{pid}/cmdline", "rb").read().startswith(b"sleep\x00600"): found.append("process")
    except OSError:
        pass
if signal.getsignal(signal.SIGUSR1) is not signal.SIG_DFL: found.append("signal handler")
if resource.getrlimit(resource.RLIMIT_NOFILE)[0] == 64: found.append("limit")
mask = os.umask(0o022); os.umask(mask)
if mask == 0o077: found.append("umask")
state = numpy.random.get_state()[1][:3].tolist()
numpy.random.seed(1234)
if numpy.random.get_state()[1][:3].tolist() == state: found.append("random state")
status = dict(l.split(":", 1) for l in open("/proc/self/status") if ":" in l)
print(json.dumps({"found": found, "uid": os.getuid(), "caps": [status[k].strip() for k in ("CapEff", "CapPrm", "CapBnd")],
                  "no_new_privs": status["NoNewPrivs"].strip()}))
"""


def _job(scratch: Path, name: str) -> Path:
    job = scratch / name
    (job / "in" / "work").mkdir(parents=True)
    job.chmod(0o711)
    return job


def _run(job: Path, box, sources: list[str], kernels: list) -> tuple[list, list]:
    nb = nbjson.new_notebook([nbjson.new_cell("code", s, f"c{i}") for i, s in enumerate(sources)])

    def make(n):
        kernel = Kernel(job, box, LIMITS, kernel_env(), n, PRELOAD)
        kernels.append(kernel)
        return kernel

    runs = run_notebook(nb, make, LIMITS, lambda i: True)
    return runs, [o for c in nb.cells for o in c.outputs]


def _report(outputs) -> dict:
    return json.loads([o.text for o in outputs if o.get("text", "").startswith("{")][-1])


@pytest.fixture(scope="module")
def runs():
    """The leaving notebook, then the looking one in its kernel; then the looking one in
    the next kernel from the same zygote."""
    zygotes.close_all()
    with tempfile.TemporaryDirectory(prefix="grade-") as scratch:
        scratch = Path(scratch)
        scratch.chmod(0o711)
        box = detect("bwrap", ROOT, [ROOT / "solutions"], scratch, LIMITS)
        assert box.warm
        kernels: list[Kernel] = []
        same = _run(_job(scratch, "one"), box, [LEAVE, LOOK], kernels)
        (zygote,) = zygotes._zygotes.values()
        forks_after_one = zygote.forks
        nxt = _run(_job(scratch, "two"), box, [LOOK], kernels)
        yield {"same": same, "next": nxt, "kernels": kernels, "forks": (forks_after_one, zygote.forks),
               "zygote_alive": zygote.proc.poll() is None}
    zygotes.close_all()


def test_each_kernel_is_forked_from_the_zygote(runs):
    assert runs["forks"] == (1, 2)
    assert all(k.zygote is not None and not k.cold_because for k in runs["kernels"])
    assert runs["zygote_alive"]


def test_the_look_finds_every_kind_of_state_left_in_the_same_kernel(runs):
    statuses, outputs = runs["same"]
    assert [r.status for r in statuses] == ["ok", "ok"], outputs
    found = set(_report(outputs)["found"])
    expected = {"numpy attribute", "builtin", "sys.modules", "sys.path", "environment", "thread",
                "process", "signal handler", "limit", "umask", "random state",
                "file in /tmp", "file in /job/work", "file in /job/home", "file in /job/tmp"}
    # /dev/shm is looked at too, though a kernel cannot write there today.
    assert expected <= found


def test_the_next_kernel_from_the_same_zygote_sees_none_of_it(runs):
    statuses, outputs = runs["next"]
    assert [r.status for r in statuses] == ["ok"], outputs
    report = _report(outputs)
    assert report["found"] == []
    assert report["caps"] == ["0000000000000000"] * 3
    assert report["no_new_privs"] == "1"
    assert report["uid"] != _report(runs["same"][1])["uid"] != 0


def test_a_zygote_that_cannot_serve_leaves_the_kernel_cold_and_working(monkeypatch, capsys):
    zygotes.close_all()
    monkeypatch.setattr(zygotes.Zygote, "ready", lambda self, deadline: "it is broken on purpose")
    with tempfile.TemporaryDirectory(prefix="grade-") as scratch:
        scratch = Path(scratch)
        scratch.chmod(0o711)
        box = detect("bwrap", ROOT, [ROOT / "solutions"], scratch, LIMITS)
        kernels: list[Kernel] = []
        statuses, outputs = _run(_job(scratch, "cold"), box, ["print(6 * 7)"], kernels)
        assert [r.status for r in statuses] == ["ok"] and outputs[0].text == "42\n"
        assert kernels[0].zygote is None and "broken on purpose" in kernels[0].cold_because
        assert "starts cold" in capsys.readouterr().err
        kernels.clear()
        cold = dataclasses.replace(box, warm=False)
        statuses, outputs = _run(_job(scratch, "asked"), cold, ["print(6 * 7)"], kernels)
        assert outputs[0].text == "42\n" and kernels[0].zygote is None and not kernels[0].cold_because
    zygotes.close_all()


def test_a_zygote_put_aside_for_other_imports_keeps_its_kernel_until_it_ends():
    zygotes.close_all()
    with tempfile.TemporaryDirectory(prefix="grade-") as scratch:
        scratch = Path(scratch)
        scratch.chmod(0o711)
        box = detect("bwrap", ROOT, [ROOT / "solutions"], scratch, LIMITS)
        job = _job(scratch, "kept")
        kernel = Kernel(job, box, LIMITS, kernel_env(), 0, ("numpy",))
        kernel.start()
        try:
            first = kernel.zygote
            for other in (("json",), ("csv",)):  # two other notebooks' imports: KEEP is 2
                zygotes.for_kernels(other, kernel_env(), "", str(scratch))
            assert first not in zygotes._zygotes.values() and first in zygotes._retired
            cell = nbjson.new_cell("code", "print(6 * 7)", "c0")
            run = kernel.run(cell, 0, float("inf"))
            assert run.status == "ok" and cell.outputs[0].text == "42\n"
            assert first.proc.poll() is None
        finally:
            kernel.stop()
        first.proc.wait(timeout=30)  # it ends by itself once its kernel has ended
    zygotes.close_all()


def test_cold_kernels_are_asked_for_by_name_and_reach_a_remote_worker(monkeypatch, tmp_path):
    from grader.cli import main
    from grader.grading.classroom import worker
    from grader.grading.notebook.job import Job
    from grader.grading.notebook.sandbox import Sandbox

    asked = {}
    monkeypatch.setattr("grader.grading.classroom.batch.grade", lambda *a, **kw: asked.update(kw) or 0)
    assert main(["grade", str(tmp_path), "--out", str(tmp_path / "out"), "--kernels", "cold"]) == 0
    assert asked["kernels"] == "cold"
    with pytest.raises(SystemExit):
        main(["grade", str(tmp_path), "--kernels", "tepid"])
    assert "start cold" in Sandbox("bwrap", warm=False).describe()
    assert "start warm" in Sandbox("bwrap").describe()
    data = worker.job_data(Job("s", "a", "a.ipynb", {}, {}, {}, None, sandbox=Sandbox("none", warm=False)))
    side = worker.WorkerSide.__new__(worker.WorkerSide)  # its kit and scratch are not needed here
    side.boxes, side.scratch, side.fonts, side.kit = {"none": Sandbox("none")}, tmp_path, "", tmp_path
    assert data["warm"] is False and side.job(data).sandbox.warm is False
    data["warm"] = True
    assert side.job(data).sandbox.warm is True


def test_a_fork_that_fails_ahead_of_its_job_leaves_the_kernel_cold_and_working(monkeypatch):
    zygotes.close_all()

    def refuse(self, request, out, status):
        raise zygotes.WarmUnavailable("it refused on purpose")

    monkeypatch.setattr(zygotes.Zygote, "fork", refuse)
    with tempfile.TemporaryDirectory(prefix="grade-") as scratch:
        scratch = Path(scratch)
        scratch.chmod(0o711)
        box = detect("bwrap", ROOT, [ROOT / "solutions"], scratch, LIMITS)
        zygote = zygotes.for_kernels(PRELOAD, kernel_env(), "", str(scratch))
        assert zygote.ready(time.monotonic() + 120) == ""  # so the fork is tried in launch()
        kernel = Kernel(_job(scratch, "early"), box, LIMITS, kernel_env(), 0, PRELOAD)
        kernel.launch()
        assert "refused on purpose" in kernel._early
        kernel.connect()
        try:
            cell = nbjson.new_cell("code", "print(6 * 7)", "c0")
            assert kernel.run(cell, 0, float("inf")).status == "ok" and cell.outputs[0].text == "42\n"
            assert kernel.zygote is None and "refused on purpose" in kernel.cold_because
        finally:
            kernel.stop()
    zygotes.close_all()


DRAW = "%matplotlib inline\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3]);"


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_figures_are_drawn_unless_the_grader_asks_for_their_text(warm):
    zygotes.close_all()
    with tempfile.TemporaryDirectory(prefix="grade-") as scratch:
        scratch = Path(scratch)
        scratch.chmod(0o711)
        box = dataclasses.replace(detect("bwrap", ROOT, [ROOT / "solutions"], scratch, LIMITS), warm=warm)
        seen = {}
        for figures in ("png", "text"):
            kernel = Kernel(_job(scratch, figures), box, LIMITS, kernel_env(), 0, PRELOAD, figures)
            kernel.start()
            try:
                cell = nbjson.new_cell("code", DRAW, "c0")
                assert kernel.run(cell, 0, float("inf")).status == "ok"
                seen[figures] = [o for o in cell.outputs if o.output_type == "display_data"]
            finally:
                kernel.stop()
        assert [sorted(o.data) for o in seen["png"]] == [["image/png", "text/plain"]]
        assert [sorted(o.data) for o in seen["text"]] == [["text/plain"]]
        assert seen["text"][0].data["text/plain"].startswith("<Figure size")
    zygotes.close_all()
    with pytest.raises(ValueError, match="figures='svg'"):
        Kernel(Path("/nonexistent"), box, LIMITS, kernel_env(), 0, PRELOAD, "svg")


def test_the_figures_asked_for_reach_every_job_and_a_remote_worker(monkeypatch, tmp_path):
    from grader.cli import main
    from grader.grading.classroom import worker
    from grader.grading.notebook.job import Job
    from grader.grading.notebook.sandbox import Sandbox

    asked = {}
    monkeypatch.setattr("grader.grading.classroom.batch.grade", lambda *a, **kw: asked.update(kw) or 0)
    assert main(["grade", str(tmp_path), "--out", str(tmp_path / "out"), "--figures", "text"]) == 0
    assert asked["figures"] == "text"
    with pytest.raises(SystemExit):
        main(["grade", str(tmp_path), "--figures", "svg"])
    data = worker.job_data(Job("s", "a", "a.ipynb", {}, {}, {}, None, figures="text"))
    side = worker.WorkerSide.__new__(worker.WorkerSide)
    side.boxes, side.scratch, side.fonts, side.kit = {"none": Sandbox("none")}, tmp_path, "", tmp_path
    assert side.job(data).figures == "text"
