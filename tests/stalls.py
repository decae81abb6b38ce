"""Notebook bytes that hang the grading process when it reads them, for the tests of its
own wall limit (tests/test_grading_watchdog.py). They travel to a pool's worker process as
any job's files do (pickled, this module imported there), and hang when the job decodes
them as text: one in a Python loop, which the watchdog stops where it is, one inside C
code, which only killing its process stops."""
from __future__ import annotations

import time


class SpinsInPython(bytes):
    def decode(self, *args, **kwargs):
        while True:
            pass


class StallsInC(bytes):
    def decode(self, *args, **kwargs):
        time.sleep(3600)  # C code, which Python's pending exceptions do not interrupt
        return bytes(self).decode(*args, **kwargs)
