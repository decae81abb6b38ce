"""What the operating system measures of a kernel's processes, from outside its sandbox.

Read from the host's ``/proc``, which the sandbox cannot write: a process's parent, its
resident size and peak (``VmRSS``, ``VmHWM``), its threads. :class:`MemoryWindow` is how a
memory budget is graded (``grader.grading.bridge.RemoteSubject``).
"""
from __future__ import annotations

import os


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


class MemoryWindow:
    """The most memory the kernel's processes held at once between :meth:`open` and
    :meth:`close`, as the operating system measured it from outside the sandbox: each
    process's peak resident size (``VmHWM``, which counts NumPy's and torch's memory
    alike) is reset to its current size at the start (``clear_refs``), and the sum of
    the peaks at the end, less the sum of the sizes at the start, is the growth. The
    sandbox cannot reset it itself (its ``/proc`` is read-only).

    A process started in the window could hold memory and end before the window does,
    so a process or thread started in it is reported: one still there at the end is seen
    among the kernel's; one that ended is seen, with bubblewrap and a root grader, in the
    sandbox's own process numbering, which ``nsenter`` reads from inside its namespace
    (each reading itself takes one number).
    """

    def __init__(self, kernel):
        self.kernel = kernel
        self.problem = ""  # why the window could not be measured
        self.base = 0
        self.before: set = set()
        self.numbered: int | None = None

    def open(self) -> "MemoryWindow":
        pids = self.kernel.sandbox_pids()
        if not pids:
            self.problem = "the kernel's processes could not be found"
        self.before = _tasks(pids)
        self.numbered = self.kernel.last_pid()
        for pid in pids:
            try:
                with open(f"/proc/{pid}/clear_refs", "w") as f:
                    f.write("5")
            except OSError as exc:
                self.problem = f"its peak memory could not be reset ({exc.strerror})"
        self.base = sum(_status(pid).get("VmRSS", 0) for pid in pids)
        return self

    def close(self) -> tuple[int, bool]:
        """The growth in bytes, and whether a process or thread started meanwhile."""
        pids = self.kernel.sandbox_pids()
        peak = sum(_status(pid).get("VmHWM", 0) for pid in pids)
        started = bool(_tasks(pids) - self.before)
        if self.numbered is not None:
            now = self.kernel.last_pid()
            started |= now is None or now != self.numbered + 1
        return max(0, peak - self.base), started
