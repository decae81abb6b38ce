"""Where and how the course's code runs: grading or not, torch threads, progress output.

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
