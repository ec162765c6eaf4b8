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


def autocast_calls(op: Callable[..., Any], x: Any, w: Any, **kwargs: Any) -> tuple[Callable[[], None],
                                                                                   Callable[[], None]]:
    """(forward, training) of `op(x, w, **kwargs)` as a bf16 autocast model runs it: the forward under
    inference_mode; a training call on copies of x and w that need their gradients, its output's gradient ones."""
    import torch

    def forward() -> None:
        with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):
            op(x, w, **kwargs)

    xg, wg = x.clone().requires_grad_(True), w.clone().requires_grad_(True)

    def training() -> None:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = op(xg, wg, **kwargs)
        out.backward(torch.ones_like(out))

    return forward, training
