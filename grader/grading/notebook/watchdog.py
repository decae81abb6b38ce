"""A wall limit of its own on the grading process's work on one submission.

``--timeout`` and ``--wall`` bound the notebook's kernel. Everything else a job does
happens in the grading process itself: choosing and reading the notebook, repairing it,
scanning its code, scoring it, making its outputs inert. That work is bounded by the
notebook's structure (``grader.grading.notebook.structure``) and, whatever a submission finds that
the structure does not bound, by ``--grader-wall`` (:data:`DEFAULT`), which
:class:`Watchdog` enforces in each worker process, by a thread of its own:

1. when the limit passes, it raises :class:`OverLimit` in the thread grading the
   submission. Python raises it between two bytecodes, so a step looping in Python stops
   there, and the job ends with "could not be graded" (``grader.grading.notebook.job``);
2. a step stuck inside a library's C code never reaches the next bytecode: if the thread
   has not come back :data:`GRACE` s later (or the limit again, if it is shorter), the
   watchdog says which job it was on its ``channel`` and kills its own process. The local
   pool then gives that job the same result and starts a new worker
   (``grader.grading.classroom.pool.PoolRunner``); on a Dask cluster the worker's nanny starts a
   new one and the scheduler tries the job again elsewhere, up to its
   ``allowed-failures``.

While the kernel runs (:meth:`Watchdog.paused`) the clock stops: the kernel's own limits
bound that time. It stops for at most the time those limits allow, so that a check stuck
there still ends.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import threading
import time
from dataclasses import dataclass

DEFAULT = 120.0  # seconds of the grading process's own work on one notebook
GRACE = 10.0  # seconds a thread told to stop gets before its process is killed


class OverLimit(BaseException):
    """Raised in the thread grading a submission when the grading process's own work on it
    passed its limit. A BaseException, so that no step's ``except Exception`` keeps it."""


@dataclass
class _Watch:
    thread: int  # the ident of the thread grading the submission
    key: tuple  # what the channel says of the job
    seconds: float  # its limit
    deadline: float  # time.monotonic() when the limit passes
    told: bool = False  # OverLimit was raised in its thread


def _raise_in(thread: int, exc: type[BaseException]) -> None:
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread), ctypes.py_object(exc))


class Watchdog:
    """Bounds the work between :meth:`begin` and :meth:`end`, one job at a time."""

    def __init__(self):
        self._cond = threading.Condition()
        self._watch: _Watch | None = None
        self._thread: threading.Thread | None = None
        self.channel = None  # with .put(key): where a worker process says why it is killed

    def begin(self, key: tuple, seconds: float) -> None:
        """Start the clock for the job ``key`` in the calling thread, with ``seconds`` to go."""
        with self._cond:
            self._watch = _Watch(threading.get_ident(), key, seconds, time.monotonic() + seconds)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._keep, name="grading-watchdog", daemon=True)
                self._thread.start()
            self._cond.notify()

    def end(self) -> None:
        """The job is done (or has stopped): nothing is watched. Safe to call twice."""
        with self._cond:
            self._watch = None
            self._cond.notify()

    @contextlib.contextmanager
    def paused(self, at_most: float):
        """The clock stops while the block runs, for at most ``at_most`` seconds."""
        start = time.monotonic()
        with self._cond:
            if self._watch is not None:
                self._watch.deadline += at_most
        try:
            yield
        finally:
            with self._cond:
                if self._watch is not None:
                    self._watch.deadline -= max(0.0, at_most - (time.monotonic() - start))
                    self._cond.notify()

    def _keep(self) -> None:
        with self._cond:
            while True:
                watch = self._watch
                if watch is None:
                    self._cond.wait()
                    continue
                left = watch.deadline - time.monotonic()
                if left > 0:
                    self._cond.wait(left)
                elif not watch.told:
                    watch.told = True
                    watch.deadline = time.monotonic() + min(GRACE, watch.seconds)
                    _raise_in(watch.thread, OverLimit)
                else:  # the thread did not come back: it is stuck below Python
                    if self.channel is not None:
                        self.channel.put(watch.key)
                    os.kill(os.getpid(), signal.SIGKILL)


WATCH = Watchdog()  # this process's
