"""What a sandbox holds beside its resident pages, read from outside it, for a grader that
cannot make a memory cgroup (``grader.grading.notebook.cgroup``):

* its tmpfs folders (``/job``, ``/tmp`` and ``/dev``, which holds ``/dev/shm``): the
  blocks in use, read through the sandbox's root, ``/proc/PID/root``;
* memfds, and deleted files that a process still holds open: their sizes, through
  ``/proc/PID/fd`` (a file in one of the tmpfs folders above is already counted there);
* pipe buffers (the bytes queued, in whole pages) and socket buffers (for a Unix socket
  the memory its sent data holds, for any other the bytes queued both ways): each pipe
  is opened through ``/proc/PID/fd`` and each socket taken with ``pidfd_getfd``, and
  asked, without reading a byte.

These are sampled while a call runs (``MemoryWindow.sample``), so memory held for less
than a sample's interval can be missed; a cgroup counts everything, always.
"""
from __future__ import annotations

import ctypes
import fcntl
import os
import socket
import stat
import struct
import termios

TMPFS = ("job", "tmp", "dev")  # the sandbox's own tmpfs mounts (grader.grading.notebook.sandbox)
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
SIOCINQ, SIOCOUTQ = termios.FIONREAD, termios.TIOCOUTQ
SYS_PIDFD_GETFD = 438  # the same number on every Linux architecture


def _path_beneath(root: str, name: str) -> int:
    """An ``O_PATH`` descriptor of ``name`` in the folder ``root``, following no link."""
    top = os.open(root, os.O_PATH | os.O_DIRECTORY)
    try:
        return os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY, dir_fd=top)
    finally:
        os.close(top)


def tmpfs_used(init: int) -> tuple[int, set[int]]:
    """Bytes in use in the sandbox's tmpfs folders, seen through the root of its process
    ``init``, and those file systems' device numbers."""
    used, devices = 0, set()
    for name in TMPFS:
        try:
            fd = _path_beneath(f"/proc/{init}/root", name)
        except OSError:
            continue
        try:
            device = os.fstat(fd).st_dev
            if device not in devices:
                info = os.fstatvfs(fd)
                used += (info.f_blocks - info.f_bfree) * info.f_frsize
                devices.add(device)
        except OSError:
            pass
        finally:
            os.close(fd)
    return used, devices


def _pipe_bytes(pid: int, fd: int) -> int:
    """Bytes queued in the pipe ``fd`` of ``pid``, in whole pages (a pipe holds pages)."""
    try:
        ours = os.open(f"/proc/{pid}/fd/{fd}", os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return 0
    try:
        queued = struct.unpack("i", fcntl.ioctl(ours, SIOCINQ, b"\0" * 4))[0]
    except OSError:
        queued = 0
    finally:
        os.close(ours)
    return -(-queued // PAGE) * PAGE


_libc = None


def _socket_bytes(pidfd: int, fd: int) -> int:
    """The memory the socket ``fd`` holds in buffers (see the module's docstring)."""
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    ours = _libc.syscall(SYS_PIDFD_GETFD, pidfd, fd, 0)
    if ours < 0:
        return 0
    try:
        sock = socket.socket(fileno=ours)
    except OSError:
        os.close(ours)
        return 0
    try:
        ask = (SIOCOUTQ,) if sock.family == socket.AF_UNIX else (SIOCINQ, SIOCOUTQ)
        return sum(struct.unpack("i", fcntl.ioctl(sock.fileno(), req, b"\0" * 4))[0] for req in ask)
    except OSError:
        return 0
    finally:
        sock.close()


def descriptors_held(pids, counted_devices: set[int]) -> int:
    """Bytes held through the open descriptors of ``pids``: memfds and deleted files
    (outside ``counted_devices``), pipe and socket buffers. Each is counted once, however
    many processes hold it."""
    seen: set = set()
    total = 0
    for pid in pids:
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:
            continue
        try:
            names = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            os.close(pidfd)
            continue
        try:
            for name in names:
                total += _descriptor(pid, pidfd, int(name), counted_devices, seen)
        finally:
            os.close(pidfd)
    return total


def _descriptor(pid: int, pidfd: int, fd: int, counted_devices: set[int], seen: set) -> int:
    try:
        target = os.readlink(f"/proc/{pid}/fd/{fd}")
    except OSError:
        return 0
    if target.startswith(("pipe:", "socket:")):
        if target in seen:
            return 0
        seen.add(target)
        return _pipe_bytes(pid, fd) if target.startswith("pipe:") else _socket_bytes(pidfd, fd)
    if not (target.startswith("/memfd:") or target.endswith(" (deleted)")):
        return 0
    try:
        info = os.stat(f"/proc/{pid}/fd/{fd}")
    except OSError:
        return 0
    key = (info.st_dev, info.st_ino)
    if not stat.S_ISREG(info.st_mode) or info.st_dev in counted_devices or key in seen:
        return 0
    seen.add(key)
    return info.st_blocks * 512


def held(init: int | None, pids) -> int:
    """Everything :mod:`held` reads of a sandbox, in bytes: its tmpfs folders (when it
    has a root of its own, seen through its process ``init``) and its descriptors."""
    used, devices = tmpfs_used(init) if init is not None else (0, set())
    return used + descriptors_held(pids, devices)
