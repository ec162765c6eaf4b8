"""Shared timing: CUDA events, warm-up, repeats, median and relative spread, deadlines.

Everything here is importable without CuPy; the GPU timers take the CuPy module as an argument.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


class ProbeTimeout(Exception):
    """The probe ran past its time limit (raised cooperatively, between repeats)."""


class ProbeSkipped(Exception):
    """The probe does not apply here (no GPU, compute capability too old, library missing)."""


@dataclass
class Deadline:
    """A cooperative time limit: probes call check() between repeats and sizes."""

    limit_s: float | None
    start: float = field(default_factory=time.perf_counter)

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    @property
    def remaining(self) -> float:
        return float("inf") if self.limit_s is None else self.limit_s - self.elapsed

    def check(self, what: str = "") -> None:
        if self.limit_s is not None and self.elapsed > self.limit_s:
            where = f" during {what}" if what else ""
            raise ProbeTimeout(f"time limit of {self.limit_s:g} s reached{where}")


@dataclass
class Timing:
    """Times in milliseconds of the timed repeats (warm-ups excluded)."""

    times_ms: list[float]

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times_ms)

    @property
    def min_ms(self) -> float:
        return min(self.times_ms)

    @property
    def spread(self) -> float:
        """Relative spread (max - min) / median."""
        med = self.median_ms
        return (max(self.times_ms) - min(self.times_ms)) / med if med > 0 else 0.0

    def rate(self, amount: float, scale: float = 1.0) -> float:
        """amount per second of the median time, divided by scale (e.g. 1e9 for GB/s)."""
        return amount / (self.median_ms / 1e3) / scale

    def as_dict(self) -> dict[str, Any]:
        return {"median_ms": self.median_ms, "min_ms": self.min_ms, "spread": self.spread, "n": len(self.times_ms)}


def _time_with_events(
    fn: Callable[[], Any],
    sync: Callable[[], Any],
    elapsed_ms: Callable[[Callable[[], Any]], float],
    *,
    warmup: int,
    repeats: int,
    deadline: Deadline | None,
    what: str,
    min_repeats: int,
) -> Timing:
    """Warm up, then time each repeat with one pair of device events.

    Stops early (keeping the repeats done) once the deadline is near, as long as min_repeats
    were timed; raises ProbeTimeout if it is already past.
    """
    for _ in range(warmup):
        fn()
    sync()
    if deadline is not None:
        deadline.check(what)
    times: list[float] = []
    for i in range(repeats):
        times.append(elapsed_ms(fn))
        if deadline is not None and i + 1 >= min_repeats and deadline.remaining < 0.5:
            break
        if deadline is not None:
            deadline.check(what)
    return Timing(times)


def time_gpu(
    cp: Any,
    fn: Callable[[], Any],
    *,
    warmup: int = 2,
    repeats: int = 10,
    deadline: Deadline | None = None,
    what: str = "",
    min_repeats: int = 3,
) -> Timing:
    """Time fn (which enqueues work on CuPy's current stream) with CUDA events."""
    start, stop = cp.cuda.Event(), cp.cuda.Event()

    def elapsed_ms(f: Callable[[], Any]) -> float:
        start.record()
        f()
        stop.record()
        stop.synchronize()
        return cp.cuda.get_elapsed_time(start, stop)

    return _time_with_events(fn, cp.cuda.get_current_stream().synchronize, elapsed_ms, warmup=warmup,
                             repeats=repeats, deadline=deadline, what=what, min_repeats=min_repeats)


def time_torch(
    torch: Any,
    fn: Callable[[], Any],
    *,
    warmup: int = 2,
    repeats: int = 10,
    deadline: Deadline | None = None,
    what: str = "",
    min_repeats: int = 3,
) -> Timing:
    """Like time_gpu, with PyTorch's events on PyTorch's current stream."""

    def elapsed_ms(f: Callable[[], Any]) -> float:
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        f()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop)

    return _time_with_events(fn, torch.cuda.synchronize, elapsed_ms, warmup=warmup, repeats=repeats,
                             deadline=deadline, what=what, min_repeats=min_repeats)


def time_host(
    fn: Callable[[], Any],
    *,
    warmup: int = 1,
    repeats: int = 5,
    deadline: Deadline | None = None,
    what: str = "",
    min_repeats: int = 1,
    sync: Callable[[], Any] | None = None,
) -> Timing:
    """Wall-clock timing with perf_counter; sync (if given) runs after fn, inside the timed region."""
    for _ in range(warmup):
        fn()
        if sync:
            sync()
    times: list[float] = []
    for i in range(repeats):
        t0 = time.perf_counter()
        fn()
        if sync:
            sync()
        times.append((time.perf_counter() - t0) * 1e3)
        if deadline is not None and i + 1 >= min_repeats and deadline.remaining < 0.5:
            break
        if deadline is not None:
            deadline.check(what)
    return Timing(times)


@dataclass
class Bursts:
    """Milliseconds per operation in each of N short bursts: the best, the median and their spread.

    A power-capped GPU's clock moves while it works, so one long timing samples wherever the
    clock happens to be. Short bursts with a pause between them show both the rate the GPU
    reaches (the best burst) and the rate it holds (the median), and the spread says how far
    apart its bursts were.
    """

    ms_per_op: list[float]

    @property
    def best_ms(self) -> float:
        return min(self.ms_per_op)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.ms_per_op)

    @property
    def spread(self) -> float:
        med = self.median_ms
        return (max(self.ms_per_op) - min(self.ms_per_op)) / med if med > 0 else 0.0

    def rate(self, amount: float, scale: float = 1.0, which: str = "best") -> float:
        ms = self.best_ms if which == "best" else self.median_ms
        return amount / (ms / 1e3) / scale

    def as_dict(self) -> dict[str, Any]:
        return {"best_ms": self.best_ms, "median_ms": self.median_ms, "spread": self.spread,
                "bursts": len(self.ms_per_op)}


def gpu_burst(cp: Any, fn: Callable[[], Any], per_burst: int) -> Callable[[], float]:
    """A callable that runs fn per_burst times between one pair of CuPy events; returns ms per call."""

    def burst() -> float:
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        for _ in range(per_burst):
            fn()
        stop.record()
        stop.synchronize()
        return float(cp.cuda.get_elapsed_time(start, stop)) / per_burst

    return burst


def torch_burst(torch: Any, fn: Callable[[], Any], per_burst: int) -> Callable[[], float]:
    """Like gpu_burst, with PyTorch's events on its current stream."""

    def burst() -> float:
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(per_burst):
            fn()
        stop.record()
        stop.synchronize()
        return float(start.elapsed_time(stop)) / per_burst

    return burst


def interleaved_bursts(
    runners: dict[str, Callable[[], float]],
    *,
    bursts: int = 8,
    gap_s: float = 0.02,
    warmup: int = 1,
    deadline: Deadline | None = None,
    what: str = "",
    min_bursts: int = 3,
    optional: tuple[str, ...] = (),
    errors: dict[str, str] | None = None,
) -> dict[str, Bursts]:
    """N bursts of each runner, alternating between them (so that every runner sees the same clock
    and power state), with a short pause after each round. A runner named in `optional` that
    raises is dropped (its error goes into `errors`); any other runner's error propagates."""
    times: dict[str, list[float]] = {k: [] for k in runners}
    live = dict(runners)

    def call(name: str, r: Callable[[], float]) -> float | None:
        try:
            return r()
        except Exception as e:
            if name not in optional or isinstance(e, ProbeTimeout):
                raise
            if errors is not None:
                errors[name] = f"{type(e).__name__}: {' '.join(str(e).split())[:200]}"
            live.pop(name, None)
            times[name] = []
            return None

    for _ in range(warmup):
        for name, r in list(live.items()):
            call(name, r)
    for b in range(bursts):
        for name, r in list(live.items()):
            ms = call(name, r)
            if ms is not None:
                times[name].append(ms)
        if deadline is not None:
            if b + 1 >= min_bursts and deadline.remaining < 0.5:
                break
            deadline.check(what)
        if gap_s > 0:
            time.sleep(gap_s)
    return {k: Bursts(v) for k, v in times.items() if v}


def is_oom(exc: BaseException) -> bool:
    """CUDA out-of-memory from CuPy, PyTorch or a raw runtime call."""
    name = type(exc).__name__
    text = str(exc).lower()
    return name == "OutOfMemoryError" or "out of memory" in text or "cudaerrormemoryallocation" in text


def retry_smaller(
    alloc: Callable[[int], Any],
    nbytes: int,
    *,
    min_bytes: int = 64 << 20,
    free_pools: Callable[[], Any] | None = None,
    tries: int = 4,
) -> tuple[Any, int]:
    """Call alloc(nbytes); on out-of-memory free pools, halve and retry. Returns (result, nbytes used)."""
    last: BaseException | None = None
    for _ in range(tries):
        try:
            return alloc(nbytes), nbytes
        except Exception as e:
            if not is_oom(e):
                raise
            last = e
            if free_pools:
                free_pools()
            if nbytes // 2 < min_bytes:
                break
            nbytes //= 2
    raise MemoryError(f"CUDA out of memory even at {nbytes / 2**20:.0f} MiB: {last}")
