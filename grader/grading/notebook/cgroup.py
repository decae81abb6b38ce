"""A memory cgroup per sandboxed kernel, made by the grading process outside the sandbox.

The kernel's launcher (``_limited_exec.py``) puts itself into its cgroup before it starts
bubblewrap, so every process of the sandbox is in it from its start. The cgroup's counter
is everything the sandbox holds: resident pages, page cache and shared memory (its tmpfs
folders, memfds, ``/dev/shm``) and kernel memory (pipe and socket buffers, page tables).
On these machines' cgroup v1 a 50 MB probe of each kind showed in
``memory.usage_in_bytes``, kernel memory included (``memory.kmem.*`` is a part of it, not
to be added). So ``--memory`` is the cgroup's limit, and a memory budget is the growth of
its peak (:class:`grader.grading.notebook.measure.MemoryWindow`).

The groups live beside the grading process's own, under ``attention-grader-PID-START``
(its process id and start time, so that two graders on one machine never take each
other's for a dead one's); each kernel's group is removed when the kernel goes, and the
empty groups of graders that died are removed by the next one.

Where no cgroup can be made (not root, no writable memory controller, cgroup v2 without
a delegated one), :func:`unavailable` says why and the window adds up what it can read
from outside instead.
"""
from __future__ import annotations

import atexit
import itertools
import os
import re
import signal
import time
from pathlib import Path

PREFIX = "attention-grader-"
# Per version: the limit, the usage, its peak (and what resets it), kills by the limit.
FILES = {1: {"limit": "memory.limit_in_bytes", "usage": "memory.usage_in_bytes",
             "peak": "memory.max_usage_in_bytes", "events": "memory.oom_control"},
         2: {"limit": "memory.max", "usage": "memory.current", "peak": "memory.peak",
             "events": "memory.events"}}
SWAP_LIMIT = {1: "memory.memsw.limit_in_bytes", 2: "memory.swap.max"}


class CgroupUnavailable(OSError):
    pass


def _unescape(field: str) -> str:
    """A path of ``mountinfo``, whose spaces and such are written as octal escapes."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def _mounts(mountinfo: str) -> list[tuple[str, str, str, set[str]]]:
    """(root, mount point, type, super options) of each mount in ``mountinfo``'s text."""
    found = []
    for line in mountinfo.splitlines():
        head, _, tail = line.partition(" - ")
        fields, rest = head.split(), tail.split()
        if len(fields) >= 5 and len(rest) >= 3:
            options = set(rest[2].split(","))
            found.append((_unescape(fields[3]), _unescape(fields[4]), rest[0], options))
    return found


# The file system types /proc/self/mountinfo names for each cgroup version.
MOUNT_V1, MOUNT_V2 = "cgroup", "cgroup2"


def locate(proc: str = "/proc/self") -> tuple[Path, int]:
    """This process's memory cgroup (its folder) and the cgroup version that holds the
    memory controller. Raises :class:`CgroupUnavailable`, saying why."""
    try:
        membership = Path(proc, "cgroup").read_text()
        mounts = _mounts(Path(proc, "mountinfo").read_text())
    except OSError as exc:
        raise CgroupUnavailable(f"cannot read this process's cgroups ({exc.strerror})") from exc
    own = {}  # controller ("" for cgroup v2's single hierarchy) -> this process's cgroup
    for line in membership.splitlines():
        number, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""] if number == "0" else []:
            own[name] = path
    for root, point, fstype, options in mounts:
        if fstype == MOUNT_V1 and "memory" in options and "memory" in own:
            return _beneath(point, root, own["memory"]), 1
    for root, point, fstype, _ in mounts:
        if fstype == MOUNT_V2 and "" in own:
            folder = _beneath(point, root, own[""])
            try:
                controllers = (folder / "cgroup.controllers").read_text().split()
            except OSError:
                controllers = []
            if "memory" in controllers:
                return folder, 2
    raise CgroupUnavailable("this machine has no memory cgroup controller mounted")


def _beneath(point: str, root: str, path: str) -> Path:
    """The folder of cgroup ``path`` in a hierarchy whose ``root`` is mounted at ``point``."""
    if root != "/" and (path + "/").startswith(root.rstrip("/") + "/"):
        path = path[len(root):]
    return Path(point, path.lstrip("/"))


def _start_time(pid: int) -> str | None:
    """The start time of process ``pid`` (clock ticks after boot), None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat_line = f.read()
    except OSError:
        return None
    return stat_line[stat_line.rfind(b")") + 2:].split()[19].decode()


def members(path: Path) -> list[int]:
    """The processes in the cgroup at ``path`` (none, if it cannot be read)."""
    try:
        return [int(p) for p in (Path(path) / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _write(path: Path, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


class MemoryCgroup:
    """One kernel's memory cgroup, at ``path``."""

    def __init__(self, path: Path, version: int, limit: int):
        self.path, self.version = path, version
        self._files = {k: path / v for k, v in FILES[version].items()}
        self._peak_fd: int | None = None  # v2: the descriptor through which the peak was reset
        path.mkdir(mode=0o755)
        if version == 1 and (path / "memory.memsw.usage_in_bytes").exists():
            # with swap accounting, memory and swap together: a page swapped out still counts
            self._files.update(usage=path / "memory.memsw.usage_in_bytes",
                               peak=path / "memory.memsw.max_usage_in_bytes")
        try:
            _write(self._files["limit"], str(limit))
            swap = path / SWAP_LIMIT[version]
            if swap.exists():  # memory and swap together stay within the limit, too
                _write(swap, str(limit) if version == 1 else "0")
            self.reset_peak()
        except OSError:
            self.remove()
            raise

    @property
    def procs(self) -> str:
        """The file a process writes its own id into to enter this cgroup."""
        return str(self.path / "cgroup.procs")

    def pids(self) -> list[int]:
        return members(self.path)

    def holds(self, pid: int) -> bool:
        return pid in self.pids()

    def usage(self) -> int:
        return int(self._files["usage"].read_text())

    def reset_peak(self) -> None:
        """From now on, the peak is the current usage."""
        if self.version == 1:
            for name in {"memory.max_usage_in_bytes", self._files["peak"].name}:
                _write(self.path / name, "0")
            return
        if self._peak_fd is not None:
            os.close(self._peak_fd)
            self._peak_fd = None
        fd = os.open(self._files["peak"], os.O_RDWR)
        try:
            os.write(fd, b"reset\n")  # resets the peak as read through this descriptor
        except OSError:
            os.close(fd)
            raise
        self._peak_fd = fd

    def peak(self) -> int:
        """The most it held at once since :meth:`reset_peak`."""
        if self.version == 1:
            return int(self._files["peak"].read_text())
        return int(os.pread(self._peak_fd, 64, 0))

    def stat(self) -> dict[str, int]:
        """``memory.stat``: what it holds, by kind (bytes)."""
        found = {}
        try:
            for line in (self.path / "memory.stat").read_text().splitlines():
                name, _, value = line.partition(" ")
                if value.strip().isdigit():
                    found[name] = int(value)
        except OSError:
            pass
        return found

    def kills(self) -> int:
        """How many of its processes the kernel killed because the group reached its limit."""
        try:
            for line in self._files["events"].read_text().splitlines():
                name, _, value = line.partition(" ")
                if name == "oom_kill":
                    return int(value)
            # v1 kernels before 4.13 have no oom_kill line: a charge the limit refused
            return int((self.path / "memory.failcnt").read_text()) if self.version == 1 else 0
        except (OSError, ValueError):
            return 0

    def kill(self, wait: float = 5.0) -> bool:
        """Kill every process in it (each through a pidfd, so a number taken again by
        another process is never signalled); whether it is empty within ``wait`` s."""
        deadline = time.monotonic() + wait
        while True:
            pids = self.pids()
            if not pids:
                return True
            if time.monotonic() > deadline:
                return False
            for pid in pids:
                try:
                    fd = os.pidfd_open(pid)
                except OSError:
                    continue
                try:
                    if self.holds(pid):
                        signal.pidfd_send_signal(fd, signal.SIGKILL)
                except OSError:
                    pass
                finally:
                    os.close(fd)
            time.sleep(0.01)

    def remove(self) -> None:
        """Kill what is left in it and remove it (quietly: a group that cannot be removed
        now is removed by the next grader's :func:`tidy`)."""
        if self._peak_fd is not None:
            os.close(self._peak_fd)
            self._peak_fd = None
        if self.kill():
            for _ in range(100):
                try:
                    self.path.rmdir()
                    return
                except FileNotFoundError:
                    return
                except OSError:  # still busy for a moment after its last process went
                    time.sleep(0.01)


class Groups:
    """This process's folder of kernel cgroups, beneath ``base`` (a memory cgroup)."""

    def __init__(self, base: Path, version: int):
        self.base, self.version, self.pid = Path(base), version, os.getpid()
        self.folder = self.base / f"{PREFIX}{self.pid}-{_start_time(self.pid)}"
        self._count = itertools.count()
        tidy(self.base)
        try:
            self.folder.mkdir(mode=0o755, exist_ok=True)
            if version == 2:  # the kernels' groups need the memory controller delegated
                if "memory" not in (self.folder / "cgroup.controllers").read_text().split():
                    self.close()
                    raise CgroupUnavailable(
                        f"the memory controller is not delegated to {self.base} (cgroup v2: "
                        "its cgroup.subtree_control lacks memory, as it must while processes "
                        "are in it)")
                _write(self.folder / "cgroup.subtree_control", "+memory")
        except CgroupUnavailable:
            raise
        except OSError as exc:
            why = f"cannot make a cgroup in {self.base} ({exc.strerror})"
            raise CgroupUnavailable(why) from exc
        atexit.register(self.close)

    def make(self, limit: int) -> MemoryCgroup:
        """A fresh cgroup with ``limit`` bytes of memory. Raises ``OSError``."""
        return MemoryCgroup(self.folder / f"kernel-{next(self._count)}", self.version, limit)

    def close(self) -> None:
        if os.getpid() == self.pid:
            try:
                self.folder.rmdir()
            except OSError:
                pass


def tidy(base: Path) -> None:
    """Remove the empty kernel cgroups, and then the folders, of graders that are gone."""
    try:
        entries = list(Path(base).iterdir())
    except OSError:
        return
    for entry in entries:
        match = re.fullmatch(re.escape(PREFIX) + r"(\d+)-(\d+)", entry.name)
        if not match or _start_time(int(match.group(1))) == match.group(2):
            continue
        for child in entry.glob("kernel-*"):
            try:
                child.rmdir()
            except OSError:  # not empty: a process is still in it
                pass
        try:
            entry.rmdir()
        except OSError:
            pass


_groups: Groups | None = None
_why_not = ""
BASE: Path | None = None  # where the groups go; None: beside this process's own cgroup


def groups() -> Groups | None:
    """This process's kernel cgroups, made on first use (None where none can be made;
    :func:`unavailable` says why)."""
    global _groups, _why_not
    if _groups is not None and _groups.pid == os.getpid():
        return _groups
    _groups = None
    try:
        base, version = (BASE, _version(BASE)) if BASE is not None else locate()
        _groups, _why_not = Groups(base, version), ""
    except CgroupUnavailable as exc:
        _why_not = str(exc)
    return _groups


def _version(base: Path) -> int:
    if (base / FILES[1]["limit"]).exists():
        return 1
    if (base / "cgroup.controllers").exists():
        return 2
    raise CgroupUnavailable(f"{base} is not a memory cgroup")


def unavailable(limit: int = 64 * 2**20) -> str:
    """Why no memory cgroup can measure a kernel here ("" if one can): a cgroup is made,
    limited, its peak reset and read, and removed."""
    found = groups()
    if found is None:
        return _why_not
    try:
        probe = found.make(limit)
    except OSError as exc:
        return f"cannot make a memory cgroup in {found.folder} ({exc.strerror or exc})"
    try:
        probe.peak()
        probe.usage()
    except (OSError, ValueError) as exc:
        return f"cannot read a memory cgroup's peak in {found.folder} ({exc})"
    finally:
        probe.remove()
    return ""
