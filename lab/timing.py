"""Timing a CUDA call held back to back: one owner for the lab scripts that time kernels at the card's settled
clock (fp8_reach_shapes, grouped_moe, sliding_window_attention)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def sustained(fn: Callable[[], Any], seconds: float, calls_per_check: int = 10) -> float:
    """Seconds a call over `seconds` of back-to-back calls (CUDA events around them; the host checks the clock
    every `calls_per_check` calls), after as long a warm-up so that the clocks settle."""
    import torch

    for _phase in ("warm", "timed"):
        torch.cuda.synchronize()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start, n = time.perf_counter(), 0
        a.record()
        while time.perf_counter() - start < seconds:
            for _ in range(calls_per_check):
                fn()
            n += calls_per_check
            torch.cuda.synchronize()
        b.record()
        b.synchronize()
    return a.elapsed_time(b) / 1e3 / n
