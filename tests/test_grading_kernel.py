"""The sandboxed cell runner on its own: limits that the corpus does not reach."""
import dataclasses
import tempfile
from pathlib import Path

import pytest

from conftest import ROOT
from grading_corpus import memory_cgroups
from grader.grading.notebook import nbjson
from grader.grading.notebook.cpu import CpuWindow
from grader.grading.notebook.job import kernel_env
from grader.grading.notebook.kernel import Kernel, run_notebook
from grader.grading.notebook.sandbox import Limits, detect

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


def _kernel(scratch: Path, limits: Limits, n: int = 0, cgroups: bool = True) -> Kernel:
    box = detect("bwrap", ROOT, [ROOT / "solutions"], scratch, limits)
    job = scratch / "job"
    (job / "in" / "work").mkdir(parents=True, exist_ok=True)
    job.chmod(0o711)
    box = dataclasses.replace(box, cgroups=box.cgroups and cgroups)
    kernel = Kernel(job, box, limits, kernel_env(), n, ("numpy", "torch"))
    kernel.start()
    return kernel


def _measure(kernel: Kernel, code: str) -> tuple[str, int, bool]:
    import time

    window = kernel.memory_window()
    run, _ = kernel.request(code, 0, time.monotonic() + 60, "none")
    growth, started = window.close()
    assert not window.problem, window.problem
    return run.status, growth, started


# 32 MB kept outside the Python heap for a moment (long enough for the window's samples
# when there is no cgroup), then let go: in a memfd, a file in /tmp, /dev/shm or the
# working folder, pipe buffers, socket buffers.
HELD = {
    "memfd": "fd = os.memfd_create('b')\nfor _ in range(64): os.write(fd, b'x' * 2**19)\n"
             "time.sleep(0.2); os.close(fd)",
    "/tmp": "with open('/tmp/b', 'wb') as f:\n    for _ in range(64): f.write(b'x' * 2**19)\n"
            "time.sleep(0.2); os.remove('/tmp/b')",
    "work": "f = open('b', 'wb+'); os.remove('b')\nfor _ in range(64): f.write(b'x' * 2**19)\n"
            "f.flush(); time.sleep(0.2); f.close()",
    "pipes": "ps = []\nfor _ in range(32):\n    r, w = os.pipe(); fcntl.fcntl(w, 1031, 1 << 20)\n"
             "    os.write(w, b'x' * (1 << 20)); ps.append((r, w))\ntime.sleep(0.2)\n"
             "for r, w in ps: os.close(r); os.close(w)",
    "sockets": "ss, n = [], 0\nwhile n < 32 << 20:\n    a, b = socket.socketpair()\n"
               "    a.setblocking(False)\n    try:\n        while True: n += a.send(b'x' * 65536)\n"
               "    except BlockingIOError: pass\n    ss.append((a, b))\ntime.sleep(0.2)\ndel ss",
}
# A root grader's bubblewrap gives the kernel a /dev/shm it cannot write; where it can, it counts.
SHM = ("try:\n    f = open('/dev/shm/b', 'wb')\n"
       "except PermissionError:\n    open('/tmp/no-shm', 'w').close()\n"
       "else:\n    for _ in range(64): f.write(b'x' * 2**19)\n    f.close(); time.sleep(0.2); "
       "os.remove('/dev/shm/b')")


@pytest.mark.parametrize("cgroups", [True, False], ids=["cgroup", "summed"])
def test_the_memory_window_sees_all_the_sandbox_holds_from_outside(cgroups):
    """What a call held at once, measured by the operating system: NumPy's and torch's
    memory alike, whatever the kernel does to tracemalloc, and memory outside the Python
    heap (memfds, tmpfs files, pipe and socket buffers); a process or thread started
    during the call is reported, even one that ended before the window did. With the
    kernel's memory cgroup, or (where none can be made) summed from outside."""
    if cgroups and not memory_cgroups():
        pytest.skip("the grader cannot make memory cgroups here")
    with tempfile.TemporaryDirectory(prefix="grade-") as scratch:
        scratch = Path(scratch)
        scratch.chmod(0o711)
        kernel = _kernel(scratch, Limits(), cgroups=cgroups)
        assert (kernel.cgroup is not None) == cgroups
        try:
            imports = "import tracemalloc, numpy as np, torch, os, threading, time, fcntl, socket"
            assert _measure(kernel, imports)[0] == "ok"
            status, small, started = _measure(kernel, "x = np.ones(1000).sum()")
            assert status == "ok" and small < 2**20 and not started
            hidden = "tracemalloc.stop()\ny = np.ones(4 << 20); y += 1; del y"
            assert _measure(kernel, hidden)[1] > 30 * 2**20
            assert _measure(kernel, "t = torch.ones(4 << 20, dtype=torch.float64); del t")[1] > 30 * 2**20
            for where, code in HELD.items():
                status, growth, _ = _measure(kernel, code)
                assert status == "ok" and growth > 30 * 2**20, (where, status, growth)
            status, growth, _ = _measure(kernel, SHM)
            if _measure(kernel, "assert os.path.exists('/tmp/no-shm')")[0] == "ok":
                assert kernel.uid >= 0  # only a root grader's kernel, a user of its own
            else:
                assert status == "ok" and growth > 30 * 2**20, (status, growth)
            fork = "pid = os.fork()\nif pid == 0:\n    os._exit(0)\nos.waitpid(pid, 0)"
            assert _measure(kernel, fork)[2]
            thread = "th = threading.Thread(target=lambda: None); th.start(); th.join()"
            assert _measure(kernel, thread)[2]
        finally:
            group = kernel.cgroup
            kernel.stop()
        assert group is None or not group.path.exists()


BUSY = "def _busy():\n    x = 0\n    for i in range(3_000_000):\n        x += i\n"


def _cpu(kernel: Kernel, code: str) -> float:
    import time

    window = CpuWindow(kernel).open()
    run, _ = kernel.request(code, 0, time.monotonic() + 60, "none")
    seconds = window.close()
    assert run.status == "ok" and not window.problem, (run, window.problem)
    return seconds


def test_the_cpu_window_sees_the_kernels_work_from_outside_even_in_a_thread_that_ended():
    """The CPU time a request took, read from the host's /proc: work in the kernel's own
    thread, and in a thread that ended before the window did, counts; sleeping does not."""
    with tempfile.TemporaryDirectory(prefix="grade-") as scratch:
        scratch = Path(scratch)
        scratch.chmod(0o711)
        kernel = _kernel(scratch, Limits())
        try:
            assert _cpu(kernel, "import threading, time\n" + BUSY) >= 0
            busy = min(_cpu(kernel, "_busy()") for _ in range(2))
            threaded = min(_cpu(kernel, "t = threading.Thread(target=_busy); t.start(); t.join()")
                           for _ in range(2))
            idle = min(_cpu(kernel, "time.sleep(0.2)") for _ in range(2))
            assert busy > 5 * idle and threaded > 5 * idle, (busy, threaded, idle)
        finally:
            kernel.stop()


def test_a_cpu_window_that_finds_no_process_says_so():
    class Gone:
        def sandbox_pids(self):
            return []

    window = CpuWindow(Gone()).open()
    assert window.problem == "the kernel's processes could not be found"
    assert window.close() == 0


def test_a_fork_bomb_and_a_disk_filler_stop_at_their_limits():
    """A kernel may run a bounded number of processes and write a bounded number of
    bytes; past either, its own call fails, and the notebook goes on."""
    bomb = ("import os, time\nkids = 0\ntry:\n    while True:\n        if os.fork() == 0:\n"
            "            time.sleep(30)\n            os._exit(0)\n        kids += 1\n"
            "except OSError as exc:\n    print('stopped after', kids, type(exc).__name__)")
    fill = ("try:\n    with open('big', 'wb') as f:\n        for _ in range(100):\n"
            "            f.write(b'0' * 2**20)\nexcept OSError as exc:\n    print('disk', exc.strerror)")
    nb, runs = _run([bomb, fill, "print('next')"],
                    Limits(timeout=20, processes=64, disk_mb=32))
    assert [r.status for r in runs] == ["ok", "ok", "ok"]
    text = nb.cells[0].outputs[0].text
    assert text.startswith("stopped after") and int(text.split()[2]) < 64, text
    assert nb.cells[1].outputs[0].text == "disk No space left on device\n"
    assert nb.cells[2].outputs[0].text == "next\n"
