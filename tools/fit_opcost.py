#!/usr/bin/env python3
"""Refit the op cost model's fitted constants (gpuadvisor/estimate/calibration/opgraph.py) on the calibration
split of tests/data/models-h100.json, and print them beside the table's values.

  python3 -m tools.fit_opcost
"""

from __future__ import annotations

from bench import models
from gpuadvisor.estimate import calibration as cal


def main() -> int:
    fits = {**models.fit_gpu_constants(), **models.fit_host_constants()}
    for name, v in fits.items():
        print(f"{name:22s} fit {v:g}   table {cal.value(name):g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
