"""The CPU time of a call, for tests that check a cost grows linearly with an input's size."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any

CLOCK_RESOLUTION = 1e-4  # seconds: a shorter best is counted as this, so ratios stay finite


def best_cpu_seconds(call: Callable[[], Any], runs: int = 3) -> float:
    """The least process CPU time of ``runs`` calls, each without the garbage collector (its pauses
    are amortised linear, but noisy)."""
    best = float("inf")
    for _ in range(runs):
        gc.collect()
        gc.disable()
        try:
            started = time.process_time()
            call()
            best = min(best, time.process_time() - started)
        finally:
            gc.enable()
    return max(best, CLOCK_RESOLUTION)
