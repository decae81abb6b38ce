"""Where and how the course's code runs: grading or not, torch threads, progress output,
and how much memory a call needs.

Defined once, for the checks, the notebooks' helpers (``courseware``) and the references.
"""
from __future__ import annotations

import contextlib
import os
import sys

_QUIET = 0


def grading() -> bool:
    """True while nbgrader validates or autogrades, or the course's grader runs a
    notebook (both set ``NBGRADER_EXECUTION``)."""
    return bool(os.environ.get("NBGRADER_EXECUTION"))


@contextlib.contextmanager
def one_thread():
    """Run torch on one thread (if torch is loaded at all). The checks' tensors are tiny;
    on a busy machine, waking a second thread for each of them costs milliseconds per
    operation, one thread microseconds."""
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _openblas_thread_setters():
    """(get, set) of the OpenBLAS that NumPy's wheel ships, if it can be found."""
    import ctypes
    import glob

    import numpy as np

    folder = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    for path in glob.glob(os.path.join(folder, "*openblas*")):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix in ("scipy_openblas", "openblas"):
            for suffix in ("64_", ""):
                get = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                set_ = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                if get is not None and set_ is not None:
                    return get, set_
    return None


@contextlib.contextmanager
def one_blas_thread():
    """NumPy's matrix products on one thread inside (where its OpenBLAS can be reached).

    The products a notebook or a check times are small. On a busy machine a second BLAS
    thread spends far more time waiting for its share than computing it: on two shared
    cores, a 129 × 64 product went from 0.3 ms to over 100 ms. One thread times the
    arithmetic, not that."""
    setters = _openblas_thread_setters()
    if setters is None:
        yield
        return
    get, set_ = setters
    before = get()
    set_(1)
    try:
        yield
    finally:
        set_(before)


@contextlib.contextmanager
def quiet():
    """No progress bars inside (the checks train many small models)."""
    global _QUIET
    _QUIET += 1
    try:
        yield
    finally:
        _QUIET -= 1


def is_quiet() -> bool:
    return _QUIET > 0


def peak_bytes(fn, *args, **kwargs) -> tuple[object, int]:
    """``(fn(*args, **kwargs), peak)``: the result, and the most memory the call held at
    once beyond what existed before it, in bytes, as Python's ``tracemalloc`` counts it
    (NumPy's arrays included; torch's tensors are not seen). Arguments built before the
    call are not counted; what the result keeps is."""
    import tracemalloc

    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result = fn(*args, **kwargs)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        if started:
            tracemalloc.stop()
    return result, max(0, peak)
