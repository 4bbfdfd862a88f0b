"""The one timing helper of the benchmarks: a median of wall times after a warm-up (no project imports, so the grid
benchmark's own environment can use it too)."""

from __future__ import annotations

from collections.abc import Callable
import statistics
import time


def median_s(fn: Callable[[], object], repeats: int, warmup: int = 2) -> float:
    """Median wall time of ``fn()`` in seconds over ``repeats`` runs, after ``warmup`` untimed runs."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeats):
        began = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - began)
    return statistics.median(samples)
