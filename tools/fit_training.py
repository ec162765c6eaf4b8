#!/usr/bin/env python3
"""Fit the training frameworks' constants (MEGATRON_EFF, FSDP2_ELEMENTWISE, COMPILE_EFF) to the calibration split
of tests/data/published-training.json: for each, the value on its grid (bench.training.FITTED) with the least mean
|log(estimate / published)| over that framework's calibration runs, the others held at their table values
(bench.training.fit_efficiency; tests/test_calibration_fits.py recomputes them).

  python3 tools/fit_training.py     # print the fitted values next to the table's
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.training import FITTED, fit_efficiency
from gpuadvisor.estimate import calibration as cal

if __name__ == "__main__":
    for name in FITTED:
        print(f"{name} = {fit_efficiency(name)}  (table: {cal.value(name)})")
