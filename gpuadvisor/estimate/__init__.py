"""Memory, time and serving estimates of a workload on a GPU: pure functions, no torch, no UI.

`memory` counts the peak bytes per GPU tensor by tensor, `compute` turns FLOPs (`flops`) and bytes
(`traffic`) into time through `kernels` (GEMM, attention, launch physics) and `dispatch` (eager
PyTorch's host time), `engines` times a decode step per engine, `serving` derives what users of a
deployment see (TTFT, TPOT, tok/s, KV capacity) per engine profile, and `hardware` holds the figures
of one GPU (datasheet or measured). Every calibrated constant is in `calibration` (with its source);
modules import downwards only (calibration, hardware, kernels, traffic -> activations -> memory ->
flops, dispatch -> engines -> confidence -> compute -> serving, offload). This package re-exports the
public names so callers import from `gpuadvisor.estimate`.
"""

from gpuadvisor.estimate import calibration
from gpuadvisor.estimate.compute import ComputeEstimate, estimate_compute
from gpuadvisor.estimate.confidence import Confidence
from gpuadvisor.estimate.engines import DecodeStep, StepEngineName, decode_step
from gpuadvisor.estimate.flops import forward_flops_per_token, training_flops_per_token
from gpuadvisor.estimate.hardware import Efficiency, HardwareFigures, apply_measured, measured_figures
from gpuadvisor.estimate.memory import (
    ITEMS,
    GiB,
    MemoryBreakdown,
    estimate_memory,
    kv_cache_bytes,
    layer_activation_bytes,
    lora_params,
)
from gpuadvisor.estimate.serving import (
    DEFAULT_ENGINE,
    ENGINES,
    ServingEstimate,
    StepEngine,
    decode_step_time,
    engine_profile,
    estimate_serving,
    kv_capacity,
)

__all__ = [
    "DEFAULT_ENGINE",
    "ENGINES",
    "ITEMS",
    "ComputeEstimate",
    "Confidence",
    "DecodeStep",
    "Efficiency",
    "GiB",
    "HardwareFigures",
    "MemoryBreakdown",
    "ServingEstimate",
    "StepEngine",
    "StepEngineName",
    "apply_measured",
    "calibration",
    "decode_step",
    "decode_step_time",
    "engine_profile",
    "estimate_compute",
    "estimate_memory",
    "estimate_serving",
    "forward_flops_per_token",
    "kv_cache_bytes",
    "kv_capacity",
    "layer_activation_bytes",
    "lora_params",
    "measured_figures",
    "training_flops_per_token",
]
