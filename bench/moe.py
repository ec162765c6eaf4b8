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
    from bench.models import bf16_rates, hardware
    from gpuadvisor.estimate import kernels

    figures = hardware()
    rate, bandwidth = bf16_rates(figures)
    return [kernels.grouped_gemm_time(r["experts"], r["m"], r["n"], r["k"], rate=rate, bandwidth=bandwidth,
                                      sms=figures.compute_units) / r["grouped_s"] for r in run()["rows"]]


#: lab/fp8_block_gemm.py's H100 run: DeepSeek-V3's experts on one of eight TP ranks as one grouped launch (and its
#: dense products, block-scaled FP8 against per-tensor)
STREAM_RUN = REPO / "lab/data/h100-fp8-block-2026-12-06/fp8_block_gemm.json"
#: rows an expert of the grouped rows GROUPED_STREAM_K_RAMP is fitted on (tools/fit_grouped_stream.py); the rest
#: are held out
STREAM_FIT_ROWS = (1, 16, 256)


def stream_run() -> dict[str, Any]:
    return dict(json.loads(STREAM_RUN.read_text()))


def deepseek_grouped_ratios(*, held_out: bool | None = None) -> dict[str, float]:
    """The tool's grouped-expert time over torch._grouped_mm's (bf16) at DeepSeek-V3's TP8 expert shapes, by
    "GEMM m=rows": the rows the fit read (held_out False), the others (True), or all (None)."""
    from bench.models import bf16_rates, hardware
    from gpuadvisor.estimate import kernels

    figures = hardware()
    rate, bandwidth = bf16_rates(figures)
    return {f"{r['gemm']} m={r['m']}": kernels.grouped_gemm_time(
        r["experts"], r["m"], r["n"], r["k"], rate=rate, bandwidth=bandwidth, sms=figures.compute_units)
        / r["grouped_bf16_s"] for r in stream_run()["rows"]
        if "experts" in r and held_out in (None, r["m"] not in STREAM_FIT_ROWS)}


def block_fp8_ratios() -> list[float]:
    """Block-scaled FP8 (1x128 activations, 128x128 weights) over per-tensor FP8 throughput, shape by shape."""
    return [r["fp8_tensor_s"] / r["fp8_block_s"] for r in stream_run()["rows"] if "fp8_block_s" in r]
