"""The probe run behind ctrl+r, as a plain function the app runs in a worker thread.

A runner takes `on_event(kind, **kw)` and returns a RunResult; tests pass their own runner.
Events: total(total=n), message(text=...), probe_start(device, probe), probe_end(device, probe).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Runner = Callable[[Callable[..., None]], Any]  # runner(on_event) -> RunResult


def default_runner(on_event: Callable[..., None]) -> Any:
    """A quick probe run on this machine; without a usable GPU, the host probes only."""
    from gpuadvisor import devices, probe_runner
    from probes import GPU_PROBES, HOST_PROBES

    d = devices.discover()
    if d.usable:
        total = len(HOST_PROBES) + len(GPU_PROBES) * len(d.devices)
        on_event("message", text=f"Running quick probes on {len(d.devices)} GPU(s)…")
    else:
        total = len(HOST_PROBES) + 1  # the crossover probe's CPU side
        on_event("message", text=f"No usable GPU ({d.message or 'none found'}): running the host probe only")
    on_event("total", total=total)
    opts = probe_runner.RunOptions(mode="quick")
    return probe_runner.run_probes(opts, discovery=d, on_event=on_event)
