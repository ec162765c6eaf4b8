"""A DeepSeek layer's prefill on an H100, kernel by kernel (lab/mla_layer.py, lab/data/h100-mla-layer-2026-12-06):
the estimator's products of a latent-attention MoE layer (compute._layer_gemms: the projections through the query
and KV latents, the latent's up-projection, o, the router, the routed experts as grouped GEMMs, the shared expert),
priced by kernels.gemm_time and kernels.grouped_gemm_time at the H100's datasheet figures as the op pricer takes
them, and its attention (kernels.attention_time), against each measured part and the layer's sum. Read by
tests/test_deepseek.py and BENCHMARKS.md's probe section."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from bench import REPO

RUN = REPO / "lab/data/h100-mla-layer-2026-12-06/mla_layer.json"
#: the run's GEMM names by the (n, k) the estimator's layer lists them with (kv_b: keys' plain part and values)
PARTS = ("q_a", "q_b", "q", "kv_a", "kv_b", "o", "router", "experts_gate_up", "experts_down", "shared_gate_up",
         "shared_down")


def run() -> dict[str, Any]:
    return dict(json.loads(RUN.read_text()))


def layer_ratios() -> list[dict[str, Any]]:
    """Each measured layer: the tool's GEMM time and attention time over the measured sums (the run pads values to
    192 for flash attention, so the tool's attention is priced at the padded width here)."""
    from bench.models import bf16_rates, hardware
    from gpuadvisor.estimate import kernels
    from gpuadvisor.estimate.compute import _layer_gemms
    from gpuadvisor.modelspec import resolve_model

    figures = hardware()
    rate, bandwidth = bf16_rates(figures)
    sms = figures.compute_units
    out = []
    for r in run()["rows"]:
        spec = replace(resolve_model(r["model"]), dense_layers=0, dense_intermediate_size=0)  # an expert layer
        t = r["tokens"]
        gemm = 0.0
        for share, n, k, count, expert in _layer_gemms(spec, 1):
            if expert:
                gemm += kernels.grouped_gemm_time(count, share * t, n, k, rate=rate, bandwidth=bandwidth, sms=sms,
                                                  weight_groups=count * spec.experts_reached(t))
            else:
                gemm += count * kernels.gemm_time(share * t, n, k, rate=rate, bandwidth=bandwidth, sms=sms)
        attention = kernels.attention_time(t, t, spec.q_dim, spec.head_dim, 1, causal=True, rate=rate)
        measured_gemm = sum(r.get(f"{p}_s", 0.0) for p in PARTS)
        out.append({"model": r["model"], "tokens": t, "gemm_ratio": gemm / measured_gemm,
                    "attention_ratio": attention / r["attention_s"],
                    "layer_ratio": (gemm + attention) / (measured_gemm + r["attention_s"]),
                    "measured_ms": (measured_gemm + r["attention_s"]) * 1e3})
    return out
