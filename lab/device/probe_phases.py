"""Where a `gpuadvisor probe` run's wall time goes: runs the CLI in this process with timers around its
phases (imports, GPU discovery, host info, catalog, PyTorch's background import and the wait for it,
kernel compilation per probe, each probe, properties, the XID watcher, saving, the summary) and writes
one line per phase to the file named by $PHASES (start and duration in seconds from the process start).

    PHASES=/tmp/phases.txt python3 lab/device/probe_phases.py probe --quick --out r.json --force

Works on any tree on PYTHONPATH (it wraps what it finds, by name), so the same driver times the tree
before and after a change. Used by lab/device/probe_time.sh.
"""

from __future__ import annotations

import atexit
import functools
import importlib
import os
import sys
import time
from typing import Any

T0 = time.perf_counter()
LINES: list[str] = []


def _note(name: str, start: float, end: float) -> None:
    LINES.append(f"{start - T0:8.3f} {end - start:8.3f} {name}")


def wrap(owner: Any, attr: str, label: str | None = None) -> None:
    fn = getattr(owner, attr, None)
    if fn is None or getattr(fn, "_phased", False):
        return

    @functools.wraps(fn)
    def timed(*a: Any, **kw: Any) -> Any:
        start = time.perf_counter()
        try:
            return fn(*a, **kw)
        finally:
            name = label or attr
            if attr == "run_one" and a:
                name = f"probe {a[0]}"
            _note(name, start, time.perf_counter())

    timed._phased = True  # type: ignore[attr-defined]
    setattr(owner, attr, timed)


def _flush() -> None:
    _note("process (until exit handlers)", T0, time.perf_counter())
    path = os.environ.get("PHASES")
    text = "\n".join(LINES) + "\n"
    if path:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stderr.write(text)


def main() -> int:
    atexit.register(_flush)
    start = time.perf_counter()
    from gpuadvisor.cli import main as cli_main

    _note("import gpuadvisor.cli", start, time.perf_counter())
    start = time.perf_counter()
    from gpuadvisor import devices, probe_runner
    from gpuadvisor.cli import probe_cmd

    _note("import probe_runner", start, time.perf_counter())
    wrap(devices, "discover", "discover GPUs (NVML, CuPy, CUDA init)")
    wrap(devices, "load_cupy", "  import cupy + device count")
    wrap(devices, "load_nvml", "  NVML init")
    wrap(probe_runner.provenance, "host_info", "host info")
    wrap(probe_runner, "_load_catalog", "catalog (runner)")
    wrap(probe_runner, "run_one")
    wrap(probe_cmd, "catalog_from", "catalog (CLI)")
    wrap(probe_cmd, "save", "save result")
    wrap(probe_cmd, "print_summary", "print summary")
    import probes
    import probes.base as base

    wrap(base, "preload_torch", "start PyTorch import (background)")
    wrap(base, "wait_for_torch", "wait for PyTorch import")
    wrap(base.ProbeContext, "torch", "ctx.torch()")
    for name in probes.ALL_PROBES:
        try:
            mod = importlib.import_module(f"probes.{name}")
        except Exception:
            continue
        wrap(mod, "prepare", f"prepare {name}")
    props = importlib.import_module("probes.properties")
    wrap(props, "collect", "properties.collect")
    health = importlib.import_module("probes.health")
    wrap(health.XidWatcher, "__enter__", "XID watcher start")
    wrap(health.XidWatcher, "__exit__", "XID watcher stop")
    start = time.perf_counter()
    try:
        return cli_main(sys.argv[1:])
    finally:
        _note("cli main", start, time.perf_counter())


if __name__ == "__main__":
    raise SystemExit(main())
