"""Small, honest timings for the notebooks: the median of several runs."""
from __future__ import annotations

import statistics
import time


def median_seconds(fn, *args, repeat: int = 5, number: int = 1) -> float:
    """The median wall-clock seconds of ``fn(*args)``, over ``repeat`` runs of ``number`` calls."""
    fn(*args)  # warm-up: first calls pay for allocation and caches
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn(*args)
        runs.append((time.perf_counter() - start) / number)
    return statistics.median(runs)
