"""A MoE layer's experts as one grouped GEMM on an H100 (lab/grouped_moe.py, lab/data/h100-grouped-moe-2026-12-06):
kernels.grouped_gemm_time at the H100's datasheet figures, as the estimator takes them, against each measured
shape. Read by tests/test_gpt_oss.py and BENCHMARKS.md's probe section."""

from __future__ import annotations

import json
from typing import Any

from bench import REPO

RUN = REPO / "lab/data/h100-grouped-moe-2026-12-06/grouped_moe.json"


def run() -> dict[str, Any]:
    return dict(json.loads(RUN.read_text()))


def grouped_ratios() -> list[float]:
    """The tool's grouped-expert time over the measured `torch._grouped_mm`'s, shape by shape."""
    from bench.models import hardware
    from gpuadvisor.estimate import kernels
    from gpuadvisor.estimate.hardware import Efficiency

    figures = hardware()
    mfu, bandwidth_efficiency = Efficiency().validate().for_hardware(figures)
    rate = figures.peak_tflops("bf16") * 1e12 * mfu
    bandwidth = figures.bandwidth_gbs * 1e9 * bandwidth_efficiency
    return [kernels.grouped_gemm_time(r["experts"], r["m"], r["n"], r["k"], rate=rate, bandwidth=bandwidth,
                                      sms=figures.compute_units) / r["grouped_s"] for r in run()["rows"]]
