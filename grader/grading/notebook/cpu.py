"""The CPU time of a kernel's processes, as the operating system counts it, read from the
host's ``/proc`` outside the sandbox (which the sandbox cannot write).

Two counts, and the larger is taken, so that work cannot hide in either's blind spot:

* each thread's time on a CPU in nanoseconds (``/proc/PID/task/TID/schedstat``), summed
  over the threads there at the end (a thread that ended in between is not among them);
* each process's user and system time in clock ticks (``/proc/PID/stat``: ``utime``,
  ``stime``, and ``cutime``, ``cstime`` of the children it has waited for), which counts
  the threads that ended too, but only to a tick (10 ms).

:class:`CpuWindow` is how a rule about work is graded (``grader.grading.notebook.bridge``).
"""
from __future__ import annotations

import os

TICK = 1 / os.sysconf("SC_CLK_TCK")


def _threads(pid: int) -> dict[tuple[int, int], int]:
    """Nanoseconds on a CPU of each thread of ``pid``, by (process, thread)."""
    found = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as f:
                found[(pid, int(tid))] = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return found


def _ticks(pid: int) -> int | None:
    """``utime + stime + cutime + cstime`` of ``pid``, in clock ticks (None if unreadable)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return sum(int(fields[i]) for i in (11, 12, 13, 14))
    except (OSError, ValueError, IndexError):
        return None


class CpuWindow:
    """The CPU seconds the kernel's processes spent between :meth:`open` and
    :meth:`close`. ``problem`` says why nothing could be read."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.problem = ""
        self.threads: dict = {}
        self.ticks: dict = {}

    def open(self) -> "CpuWindow":
        pids = self.kernel.sandbox_pids()
        if not pids:
            self.problem = "the kernel's processes could not be found"
        self.threads = {k: v for pid in pids for k, v in _threads(pid).items()}
        self.ticks = {pid: t for pid in pids if (t := _ticks(pid)) is not None}
        if pids and not self.ticks:
            self.problem = "the kernel's CPU time could not be read"
        return self

    def close(self) -> float:
        pids = self.kernel.sandbox_pids()
        threads = {k: v for pid in pids for k, v in _threads(pid).items()}
        precise = sum(ns - self.threads.get(k, 0) for k, ns in threads.items()) / 1e9
        ticks = sum(max(0, t - self.ticks.get(pid, 0)) for pid in pids
                    if (t := _ticks(pid)) is not None)
        return max(precise, ticks * TICK)
