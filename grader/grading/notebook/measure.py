"""What the operating system measures of a kernel's sandbox, from outside it.

Read from the kernel's memory cgroup (``grader.grading.notebook.cgroup``) where there is one, and
from the host's ``/proc``, which the sandbox cannot write: a process's parent, its
resident size and peak (``VmRSS``, ``VmHWM``), its threads, and what it holds beside
(``grader.grading.notebook.held``). :class:`MemoryWindow` is how a memory budget is graded
(``grader.grading.notebook.bridge.RemoteSubject``).
"""
from __future__ import annotations

import os
import time

from .held import held

SAMPLE = 0.02  # seconds between two samples of a window measured without a cgroup


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    stat_line = f.read()
            except OSError:
                continue
            if int(stat_line[stat_line.rfind(b")") + 2:].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _status(pid: int) -> dict[str, int]:
    """The ``kB`` lines of ``/proc/PID/status`` (VmRSS, VmHWM, ...), in bytes."""
    found = {}
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3 and parts[2] == b"kB":
                    found[parts[0].rstrip(b":").decode()] = int(parts[1]) * 1024
    except (OSError, ValueError):
        pass
    return found


def _tasks(pids) -> set[tuple[int, int]]:
    """Every (process, thread) of ``pids``."""
    found = set()
    for pid in pids:
        try:
            found |= {(pid, int(t)) for t in os.listdir(f"/proc/{pid}/task")}
        except OSError:
            pass
    return found


class CgroupGauge:
    """The growth of everything the kernel's memory cgroup holds: its peak is reset to its
    usage at the start, and the peak at the end, less that usage, is the growth. Every
    process of the sandbox must be in the group.

    Page cache counts too: a module imported for the first time during the call adds the
    files it reads to what its import costs anyway (importing ``numpy.polynomial`` with
    its files evicted grew the peak by 1.0 MiB, its resident size by 0.7 MiB). Nothing is
    subtracted for it: file cache read after the peak would let an answer hide what it
    held before."""

    samples = False

    def __init__(self, group):
        self.group, self.base = group, 0

    def open(self, pids) -> str:
        outside = [p for p in pids if not self.group.holds(p)]
        if outside:
            return f"a process of the kernel ({outside[0]}) is outside its memory cgroup"
        try:
            self.group.reset_peak()
            self.base = self.group.usage()
        except (OSError, ValueError) as exc:
            return f"its memory cgroup could not be read ({exc})"
        return ""

    def sample(self) -> None:
        pass

    def close(self, pids) -> int:  # noqa: ARG002 (the gauges' signature)
        return self.group.peak() - self.base


class SummedGauge:
    """Without a cgroup: each process's peak resident size (``VmHWM``, which counts
    NumPy's and torch's memory alike) is reset to its current size at the start
    (``clear_refs``; the sandbox cannot do that itself, its ``/proc`` is read-only), and
    what the sandbox holds beside resident pages (:mod:`grader.grading.notebook.held`: its tmpfs
    folders, memfds, pipe and socket buffers) is sampled while the call runs. The growth
    is the sum of the peaks less the sizes at the start, plus the most the rest grew."""

    samples = True

    def __init__(self, init: int | None):
        self.init, self.pids = init, []
        self.base = self.held_base = self.held_peak = 0

    def open(self, pids) -> str:
        problem = ""
        self.pids = list(pids)
        for pid in pids:
            try:
                with open(f"/proc/{pid}/clear_refs", "w") as f:
                    f.write("5")
            except OSError as exc:
                problem = f"its peak memory could not be reset ({exc.strerror})"
        self.base = sum(_status(pid).get("VmRSS", 0) for pid in pids)
        self.held_base = self.held_peak = held(self.init, pids)
        return problem

    def sample(self) -> None:
        # the processes of the start: one started since fails the window anyway
        self.held_peak = max(self.held_peak, held(self.init, self.pids))

    def close(self, pids) -> int:
        self.sample()
        peak = sum(_status(pid).get("VmHWM", 0) for pid in pids)
        return peak - self.base + self.held_peak - self.held_base


class MemoryWindow:
    """The most memory the kernel's sandbox held at once between :meth:`open` and
    :meth:`close`, as the operating system measured it from outside: with the kernel's
    memory cgroup (:class:`CgroupGauge`), everything it holds; without one, the sum of
    what can be read from outside (:class:`SummedGauge`), sampled by :meth:`sample`
    while the call runs.

    A process started in the window could hold memory and end before the window does,
    so a process or thread started in it is reported: one still there at the end is seen
    among the kernel's; one that ended is seen, with bubblewrap and a root grader, in the
    sandbox's own process numbering, which ``nsenter`` reads from inside its namespace
    (each reading itself takes one number).
    """

    def __init__(self, kernel):
        self.kernel = kernel
        self.problem = ""  # why the window could not be measured
        self.before: set = set()
        self.numbered: int | None = None
        self.next_sample = 0.0
        group = getattr(kernel, "cgroup", None)
        self.gauge = CgroupGauge(group) if group is not None else SummedGauge(kernel.sandbox_init())

    @property
    def by_cgroup(self) -> bool:
        return isinstance(self.gauge, CgroupGauge)

    def open(self) -> "MemoryWindow":
        pids = self.kernel.sandbox_pids()
        if not pids:
            self.problem = "the kernel's processes could not be found"
        self.before = _tasks(pids)
        self.numbered = self.kernel.last_pid()
        self.problem = self.gauge.open(pids) or self.problem
        if self.gauge.samples:
            self.kernel.window = self  # the kernel samples it while it waits for the call
        return self

    def sample(self) -> None:
        """Read what the window samples (nothing, with a cgroup), at most every ``SAMPLE`` s."""
        now = time.monotonic()
        if self.gauge.samples and now >= self.next_sample:
            self.next_sample = now + SAMPLE
            self.gauge.sample()

    def close(self) -> tuple[int, bool]:
        """The growth in bytes, and whether a process or thread started meanwhile."""
        if getattr(self.kernel, "window", None) is self:
            self.kernel.window = None
        pids = self.kernel.sandbox_pids()
        try:
            growth = self.gauge.close(pids)
        except (OSError, ValueError) as exc:
            self.problem, growth = f"its memory could not be read at the end ({exc})", 0
        started = bool(_tasks(pids) - self.before)
        if self.numbered is not None:
            now = self.kernel.last_pid()
            started |= now is None or now != self.numbered + 1
        return max(0, growth), started
