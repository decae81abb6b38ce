"""Kernels that start warm: a zygote per worker process that has imported what a
notebook's kernels import, and forks one kernel per submission into a sandbox made for it.

A kernel started from nothing spends a second or more of CPU importing NumPy, matplotlib,
ipykernel (and torch, for the lessons that use it) before the notebook's first cell. A
warm kernel is forked from a process that did that once (``_zygote.py``): the fork takes
milliseconds, and the imported pages are shared until written.

The sandbox is the same: :class:`grader.grading.notebook.kernel.Kernel` starts the sandbox's
command exactly as for a kernel started from nothing, but with a program that only holds
it open (``sleep``); the zygote's child joins that sandbox's namespaces, cgroup and limits,
becomes the kernel's own user and only then starts the kernel. So each kernel has its own
namespaces, tmpfs, user and limits, and nothing one kernel changes (modules, files,
environment, threads) is seen by the next: each is a fresh copy of the zygote, which never
runs a submission's code.

Kernels start cold (from nothing) when ``Sandbox.warm`` is off (``--kernels cold``), and,
with a note, where the zygote cannot serve: it did not start, or it runs threads after its
imports (a fork would copy only one), or joining a sandbox fails here.
"""
from __future__ import annotations

import json
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import OrderedDict
from pathlib import Path

from .sandbox import box_env

SOURCE = Path(__file__).with_name("_zygote.py")
HOLD = ("sleep", "infinity")  # what a warm kernel's sandbox runs until the kernel joins it
KEEP = 2  # zygotes kept per process (one per set of imports: lessons import different ones)


class WarmUnavailable(RuntimeError):
    """The zygote cannot start this kernel: it starts cold instead."""


class Zygote:
    """One zygote process, for kernels whose imports are ``preload`` and whose clean
    environment is ``env``."""

    def __init__(self, preload: tuple[str, ...], env: dict, font_cache: str = "", scratch: str = ""):
        self.dir = Path(tempfile.mkdtemp(prefix="zygote-", dir=scratch or None))
        fonts = self.dir / "home" / ".matplotlib"
        fonts.mkdir(parents=True)
        if font_cache and os.path.isfile(font_cache):
            shutil.copyfile(font_cache, fonts / os.path.basename(font_cache))
        (self.dir / "tmp").mkdir()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.log = open(self.dir / "log", "wb")
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-S", "-P", "-c", SOURCE.read_text(), str(theirs.fileno()),
                 json.dumps(list(preload))],
                env=box_env(env, str(self.dir)), cwd=self.dir, pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log, start_new_session=True)
        finally:
            theirs.close()
        self.sock = ours
        self.problem: str | None = None  # None: not known yet; "": ready
        self.forks = 0
        self.lock = threading.Lock()  # a worker may run jobs in several threads (Dask)

    def ready(self, deadline: float) -> str:
        """Empty once the zygote has done its imports; else why it cannot serve."""
        with self.lock:
            return self._ready(deadline)

    def _ready(self, deadline: float) -> str:
        while self.problem is None:
            wait = deadline - time.monotonic()
            if wait <= 0:
                return "it did not finish its imports in time"
            if select.select([self.sock], [], [], wait)[0]:
                answer = self.sock.recv(4096).decode(errors="replace")
                self.problem = "" if answer == "ready" else answer.removeprefix("no: ") or self._ended()
        return self.problem

    def _ended(self) -> str:
        self.log.flush()
        tail = (self.dir / "log").read_bytes()[-2000:].decode(errors="replace").strip().splitlines()
        return "it stopped while importing" + (f" ({tail[-1]})" if tail else "")

    def fork(self, request: dict, out: int, status: int) -> None:
        """Ask for a kernel; ``out`` gets its stdout and stderr, ``status`` its progress."""
        try:
            socket.send_fds(self.sock, [json.dumps(request).encode()], [out, status])
        except OSError as exc:
            self.problem = f"it stopped ({exc})"
            raise WarmUnavailable(self.problem) from exc
        self.forks += 1

    def retire(self) -> None:
        """Take no more requests; it ends by itself once its kernels have ended."""
        if self.sock.fileno() >= 0:
            self.sock.close()

    def ended(self) -> bool:
        if self.proc.poll() is None:
            return False
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        return True

    def close(self) -> None:
        """Stop it now, with any kernel still forked from it."""
        self.retire()
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.ended()


class WarmChild:
    """The grading process's view of one forked kernel, through its status pipe: its
    number outside the sandbox, whether it runs, and how it ended."""

    def __init__(self, status: int):
        self.fd, self.buffer = status, b""
        self.pid: int | None = None
        self.code: int | None = None
        self.ended = False

    def _read(self, wait: float) -> None:
        if self.ended or not select.select([self.fd], [], [], max(0.0, wait))[0]:
            return
        chunk = os.read(self.fd, 4096)
        if not chunk:
            self.ended = True
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n")
        for line in lines:
            word, _, value = line.decode(errors="replace").partition(" ")
            if word == "pid" and value.isdigit():
                self.pid = int(value)
            elif word == "exit" and value.lstrip("-").isdigit():
                self.code = int(value)

    def started(self, deadline: float) -> bool:
        """Wait until the kernel has been forked (True) or its start has failed (False)."""
        while self.pid is None and not self.ended and time.monotonic() < deadline:
            self._read(deadline - time.monotonic())
        return self.pid is not None

    def alive(self) -> bool:
        self._read(0)
        return self.pid is not None and not self.ended and self.code is None

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
            self.ended = True


_zygotes: OrderedDict[tuple, Zygote] = OrderedDict()
_retired: list[Zygote] = []  # no longer asked, still serving kernels of theirs
_finalizer = None
_lock = threading.Lock()


def for_kernels(preload: tuple[str, ...], env: dict, font_cache: str, scratch: str) -> Zygote:
    """The zygote of this process for kernels with these imports and this environment,
    started if there is none yet (the oldest of more than ``KEEP`` is stopped)."""
    with _lock:
        return _for_kernels(preload, env, font_cache, scratch)


def _for_kernels(preload: tuple[str, ...], env: dict, font_cache: str, scratch: str) -> Zygote:
    global _finalizer
    key = (preload, tuple(sorted(env.items())))
    zygote = _zygotes.get(key)
    _retired[:] = [z for z in _retired if not z.ended()]
    if zygote is not None and zygote.problem == "" and zygote.proc.poll() is not None:
        _zygotes.pop(key).close()  # it served, then stopped: a new one (one that could not
        # serve is kept, so that the kernels after it start cold at once)
        zygote = None
    if zygote is None:
        if _finalizer is None:
            from multiprocessing import util

            _finalizer = util.Finalize(None, close_all, exitpriority=90)
        zygote = _zygotes[key] = Zygote(preload, env, font_cache, scratch)
        while len(_zygotes) > KEEP:
            oldest = _zygotes.popitem(last=False)[1]
            oldest.retire()
            _retired.append(oldest)
    _zygotes.move_to_end(key)
    return zygote


def close_all() -> None:
    with _lock:
        while _zygotes:
            _zygotes.popitem()[1].close()
        while _retired:
            _retired.pop().close()
