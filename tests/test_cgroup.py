"""The kernels' memory cgroups (grader.grading.notebook.cgroup): made, entered by the launcher
before anything else runs, read, reset, limited and removed; and refused cleanly where
none can be made, so that the window adds up what it reads from outside instead."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.grading.notebook import cgroup
from grader.grading.notebook.kernel import Kernel
from grader.grading.notebook.measure import MemoryWindow, SummedGauge
from grader.grading.notebook.sandbox import LIMITED_EXEC, Limits, Sandbox

MB = 2**20
WHY_NOT = cgroup.unavailable()
needs_cgroups = pytest.mark.skipif(bool(WHY_NOT), reason=f"no memory cgroup here: {WHY_NOT}")

# A child that holds ``MB`` megabytes until told to let them go, then waits to be told to end.
HOLDER = ("import sys\nx = bytearray(int(sys.argv[1]) * 2**20)\nx[::4096] = b'1' * len(x[::4096])\n"
          "print('held', flush=True)\nsys.stdin.readline()\ndel x\nprint('freed', flush=True)\n"
          "sys.stdin.readline()\n")


def _launch(group: cgroup.MemoryCgroup, megabytes: int) -> subprocess.Popen:
    """A holder, started through the kernels' launcher into ``group``."""
    cmd = [sys.executable, "-I", "-S", str(LIMITED_EXEC), "0", "0", group.procs, "--",
           sys.executable, "-c", HOLDER, str(megabytes)]
    child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline() == "held\n"
    return child


@needs_cgroups
def test_a_cgroup_is_made_entered_read_reset_and_removed():
    group = cgroup.groups().make(256 * MB)
    child = None
    try:
        assert group.path.is_dir() and group.path.parent == cgroup.groups().folder
        child = _launch(group, 40)
        assert group.holds(child.pid) and group.pids() == [child.pid]
        assert group.usage() >= 40 * MB and group.peak() >= 40 * MB
        child.stdin.write("\n")
        child.stdin.flush()
        assert child.stdout.readline() == "freed\n"
        group.reset_peak()
        assert group.peak() < 40 * MB <= group.usage() + 40 * MB  # the peak starts again from now
        assert group.kills() == 0
    finally:
        group.remove()
        if child is not None:
            child.wait(10)
    assert not group.path.exists()
    assert child.returncode == -signal.SIGKILL  # removing the group ended what was left in it


@needs_cgroups
def test_the_limit_kills_and_the_kill_is_counted():
    group = cgroup.groups().make(32 * MB)
    try:
        cmd = [sys.executable, "-I", "-S", str(LIMITED_EXEC), "0", "0", group.procs, "--",
               sys.executable, "-c", HOLDER, "128"]
        done = subprocess.run(cmd, input="\n\n", capture_output=True, text=True, timeout=60)
        assert done.returncode == -signal.SIGKILL and "held" not in done.stdout
        assert group.kills() >= 1
    finally:
        group.remove()


def test_the_launcher_refuses_to_start_outside_its_cgroup(tmp_path):
    """A kernel that could not enter its cgroup would be measured as holding nothing."""
    nowhere = str(tmp_path / "no" / "cgroup.procs")
    cmd = [sys.executable, "-I", "-S", str(LIMITED_EXEC), "0", "0", nowhere, "--",
           sys.executable, "-c", "print('ran')"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "ran" not in done.stdout
    assert "could not enter the kernel's memory cgroup" in done.stderr


@needs_cgroups
def test_the_groups_of_dead_graders_are_tidied_and_no_one_elses():
    base = cgroup.groups().base
    dead = base / f"{cgroup.PREFIX}999999999-12345"  # no such process
    reused = base / f"{cgroup.PREFIX}{os.getpid()}-1"  # this process's number, another start
    for folder in (dead, reused):
        (folder / "kernel-0").mkdir(parents=True)
    alive = cgroup.groups().make(64 * MB)
    try:
        cgroup.tidy(base)
        assert not dead.exists() and not reused.exists()
        assert alive.path.is_dir()  # this grader's own, alive
    finally:
        alive.remove()
        for folder in (dead, reused):
            for path in (folder / "kernel-0", folder):
                if path.exists():
                    path.rmdir()


# A grading worker that starts a sandboxed program in a cgroup of its own, and then dies.
WORKER = """
import subprocess, sys, time
from pathlib import Path
from grader.grading.notebook import cgroup
from grader.grading.notebook.sandbox import Limits, detect
scratch, kit = Path(sys.argv[1]), Path(sys.argv[2])
box = detect("bwrap", kit, [], scratch, Limits())
group = cgroup.groups().make(256 * 2**20)
job = scratch / "job"
(job / "in").mkdir(parents=True)
job.chmod(0o711)
cmd = box.command([sys.executable, "-c", "import time; time.sleep(120)"], job, 0, box.kernel_uid(),
                  Limits(), group.procs)
subprocess.Popen(cmd, cwd=job)
print(group.path, flush=True)
time.sleep(120)
"""


@pytest.mark.slow
@needs_cgroups
def test_a_killed_graders_groups_are_tidied_by_the_next_one(tmp_path):
    """A grading worker killed outright leaves its kernels' cgroups behind; bubblewrap
    ends the sandbox with its parent, and the next grader removes them."""
    from conftest import ROOT
    from grading_corpus import sandboxed

    if not sandboxed():
        pytest.skip("bubblewrap cannot run here")
    worker = subprocess.Popen([sys.executable, "-c", WORKER, str(tmp_path), str(ROOT)],
                              stdout=subprocess.PIPE, text=True)
    try:
        path = Path(worker.stdout.readline().strip())
        deadline = time.monotonic() + 60
        while len(cgroup.members(path)) < 2 and time.monotonic() < deadline:  # bwrap, its child
            time.sleep(0.05)
        assert len(cgroup.members(path)) >= 2
    finally:
        worker.kill()
        worker.wait()
    deadline = time.monotonic() + 30
    while cgroup.members(path) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not cgroup.members(path) and path.is_dir()  # the sandbox is gone, its cgroup is left
    cgroup.tidy(path.parent.parent)
    assert not path.parent.exists()


def _without_cgroups(monkeypatch, base: Path) -> str:
    monkeypatch.setattr(cgroup, "BASE", base)
    monkeypatch.setattr(cgroup, "_groups", None)
    return cgroup.unavailable()


def test_a_folder_that_is_no_memory_cgroup_is_refused(tmp_path, monkeypatch):
    assert _without_cgroups(monkeypatch, tmp_path) == f"{tmp_path} is not a memory cgroup"
    assert cgroup.groups() is None


def test_a_cgroup_folder_that_cannot_be_written_is_refused(tmp_path, monkeypatch):
    """A v1 hierarchy where this process may not make folders (simulated: a path that goes
    through a file) is refused with the reason, and the kernel falls back."""
    blocked = tmp_path / "file"
    blocked.write_text("")
    (tmp_path / cgroup.FILES[1]["limit"]).write_text("0")
    monkeypatch.setattr(cgroup, "_version", lambda base: 1)
    why = _without_cgroups(monkeypatch, blocked / "memory")
    assert why.startswith(f"cannot make a cgroup in {blocked / 'memory'}"), why
    box = Sandbox("none", reason="test", cgroups=True)
    kernel = Kernel(tmp_path, box, Limits(), {}, 0)
    kernel._make_cgroup()
    assert kernel.cgroup is None and kernel.cgroup_problem == why
    kernel.pid = lambda: None
    window = MemoryWindow(kernel)
    assert isinstance(window.gauge, SummedGauge) and not window.by_cgroup


def test_cgroup_v2_without_the_memory_controller_delegated_is_refused(tmp_path, monkeypatch):
    (tmp_path / "cgroup.controllers").write_text("cpu memory\n")
    folder = tmp_path / f"{cgroup.PREFIX}{os.getpid()}-{cgroup._start_time(os.getpid())}"
    folder.mkdir()
    (folder / "cgroup.controllers").write_text("cpu io\n")  # the parent delegates no memory
    why = _without_cgroups(monkeypatch, tmp_path)
    assert "memory controller is not delegated" in why, why


def test_the_memory_hierarchy_is_found_in_v1_and_in_v2(tmp_path):
    v1 = tmp_path / "v1"
    v1.mkdir()
    (v1 / "cgroup").write_text("9:name=systemd:/\n4:memory:/grading/batch\n0::/\n")
    (v1 / "mountinfo").write_text(
        "30 25 0:26 / /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory\n"
        "31 25 0:27 / /sys/fs/cgroup/unified rw,relatime shared:10 - cgroup2 cgroup2 rw\n")
    assert cgroup.locate(str(v1)) == (Path("/sys/fs/cgroup/memory/grading/batch"), 1)
    v2 = tmp_path / "v2"
    (v2 / "fs" / "grading").mkdir(parents=True)
    (v2 / "fs" / "grading" / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (v2 / "cgroup").write_text("0::/grading\n")
    (v2 / "mountinfo").write_text(f"30 25 0:26 / {v2 / 'fs'} rw,relatime - cgroup2 cgroup2 rw\n")
    assert cgroup.locate(str(v2)) == (v2 / "fs" / "grading", 2)
    (v2 / "fs" / "grading" / "cgroup.controllers").write_text("cpu io\n")
    with pytest.raises(cgroup.CgroupUnavailable, match="no memory cgroup controller"):
        cgroup.locate(str(v2))


def test_the_sandbox_line_says_how_memory_is_measured():
    measured = Sandbox("bwrap", cgroups=True).describe()
    assert "memory is measured by a cgroup per notebook" in measured
    plain = Sandbox("bwrap", cgroups=False, no_cgroup="not root").describe()
    assert "memory is measured WITHOUT a cgroup (not root)" in plain
    assert "pipe and socket buffers" in plain
