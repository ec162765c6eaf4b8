#!/usr/bin/env python3
"""Fit the training frameworks' compute efficiencies (MEGATRON_EFF, FSDP2_EFF, COMPILE_EFF) to the calibration
split of tests/data/published-training.json: for each, the grid value (0.50-1.00 in steps of 0.01) with the least
mean |log(estimate / published)| over that framework's calibration runs, the others held at their table values.

  python3 tools/fit_training.py     # print the fitted values (tests/test_calibration_fits.py recomputes them)
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gpuadvisor.estimate import calibration as cal  # noqa: E402
from gpuadvisor.estimate.parallel import published  # noqa: E402

FITTED = {"MEGATRON_EFF": ("megatron",), "FSDP2_EFF": ("fsdp2",), "COMPILE_EFF": ("compile", "compile-asynctp")}
GRID = [round(0.5 + i * 0.01, 2) for i in range(51)]


def fit(name: str) -> float:
    entries = [e for e in published.load() if not e["held_out"] and e["framework"] in FITTED[name]]
    best, best_err = GRID[0], math.inf
    for v in GRID:
        with cal.override(**{name: v}):
            err = sum(abs(math.log(c.ratio)) for c in published.evaluate(entries)) / len(entries)
        if err < best_err - 1e-12:
            best, best_err = v, err
    return best


def fits() -> dict[str, float]:
    return {name: fit(name) for name in FITTED}


if __name__ == "__main__":
    for k, v in fits().items():
        print(f"{k} = {v}  (table: {cal.value(k)})")
