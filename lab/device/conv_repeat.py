"""Run-to-run spread of the conv and elementwise probes: each run N times in one process (the first
pays cuDNN's start), one line per run with every figure. Run from the repo root on the GPU machine:
    PYTHONPATH=. python3 lab/device/conv_repeat.py [N]
"""

from __future__ import annotations

import sys

from gpuadvisor import devices
from probes import conv, elementwise
from probes.base import ProbeContext
from probes.properties import collect
from probes.timing import Deadline


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    d = devices.discover()
    if not d.usable:
        print(f"no usable GPU: {d.message}")
        return 1
    with d.cupy.cuda.Device(0):
        props = collect(d.cupy, d.nvml, devices.nvml_handle(d.nvml, 0), 0)
        for mod in (conv, elementwise):
            for i in range(n):
                ctx = ProbeContext(mode="full", deadline=Deadline(120), device_index=0, cp=d.cupy, props=props)
                r = mod.run(ctx)
                figs = " ".join(f"{m.key.split('.', 1)[1]}={m.value:.0f}/{m.ratio_to_reference or 0:.3f}"
                                for m in r.measurements)
                print(f"{mod.NAME} run {i + 1}: {r.duration_s:.2f} s {r.status} {figs}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
