"""Host time of eager PyTorch: ops dispatched per step, scaled to this host, plus the extra host time
of DTensor, bitsandbytes int8 linears and attention's per-shape plans. Pure functions.

Every eager op costs the calibration host HOST_OP_S of CPU time; a host the dispatch probe measured
scales all of it by its own op time (`host_op_scale`). Apart from `compute` and `engines` so that both
import it downwards (the step model and the decode-step model share these figures)."""

from __future__ import annotations

from typing import Any

from gpuadvisor.estimate import calibration as cal
from gpuadvisor.estimate.activations import _regime
from gpuadvisor.estimate.hardware import HardwareFigures
from gpuadvisor.workload import Mode, Workload

# compute capabilities where PyTorch picks cuDNN attention, which builds a plan per new sequence length
CUDNN_ATTENTION_CC = ("9.", "10.")


def host_op_scale(gpu_figures: HardwareFigures | None) -> float:
    """This host's eager op dispatch time relative to the calibration host's (HOST_OP_S)."""
    return gpu_figures.host_op_s / cal.HOST_OP_S if gpu_figures is not None and gpu_figures.host_op_s else 1.0


def attention_plan_s(gpu_figures: HardwareFigures | None) -> float:
    """Host seconds eager attention spends on a sequence length it has not seen: measured, or assumed
    from which backend PyTorch picks on this GPU (CUDNN_ATTENTION_PLAN_S)."""
    if gpu_figures is None:
        return 0.0
    if gpu_figures.attention_plan_s is not None:
        return gpu_figures.attention_plan_s
    cc = gpu_figures.compute_capability or ""
    return cal.CUDNN_ATTENTION_PLAN_S if cc.startswith(CUDNN_ATTENTION_CC) else 0.0


def is_dtensor(workload: Workload) -> bool:
    """Whether the step runs through DTensor: tensor-parallel training (inference TP is an engine's own)."""
    return workload.tensor_parallel > 1 and workload.mode in (Mode.TRAINING, Mode.LORA, Mode.QLORA)


def linears_per_layer(m: Any, *, mlp: bool = True) -> int:
    """Linear modules in one block: q/k/v/o (two with a fused q/k/v) and, with `mlp`, its two or three."""
    return (4 if not m.fused_qkv else 2) + ((3 if m.gated else 2) if mlp else 0)


def bnb_int8_host_s(workload: Workload, gpu_figures: HardwareFigures | None = None) -> float:
    """Host time bitsandbytes LLM.int8() linears add to one eager forward: they synchronize several
    times each, so this time adds to the GPU's instead of overlapping it."""
    if workload.quant_format != "int8" or not workload.model.is_transformer:
        return 0.0
    ops = cal.INT8_HOST_OPS_PER_LINEAR * linears_per_layer(workload.model) * workload.model.num_layers
    return ops * cal.HOST_OP_S * host_op_scale(gpu_figures)


def _train_ops_per_layer(norm: str, regime: str) -> float:
    """Host ops per layer of a training step (forward, autograd backward, optimizer), measured with
    tiny-width models: RMSNorm models (Python RMSNorm, rotary) and LayerNorm ones (GPT-2), pure 16-bit
    or fp32 (taken as equal) and under autocast."""
    if norm == "rmsnorm":
        return cal.HOST_OPS_TRAIN_RMSNORM_AMP if regime == "mixed" else cal.HOST_OPS_TRAIN_RMSNORM
    return cal.HOST_OPS_TRAIN_LAYERNORM_AMP if regime == "mixed" else cal.HOST_OPS_TRAIN_LAYERNORM


def train_host_s(workload: Workload) -> float:
    """Host time to dispatch one eager training step on the calibration host (before host_op_scale and
    DTensor): fixed ops plus ops per layer, LoRA adapters, QLoRA dequantization and MoE routing."""
    m = workload.model
    if not m.is_transformer:
        return (cal.HOST_OPS_FIXED_TRAIN + _train_ops_per_layer("layernorm", _regime(workload))) * cal.HOST_OP_S
    amp = _regime(workload) == "mixed" or (workload.is_adapter and workload.mixed_precision)
    ops = _train_ops_per_layer("rmsnorm" if m.norm == "rmsnorm" else "layernorm", "mixed" if amp else _regime(workload))
    per_layer = ops + (cal.HOST_OPS_MOE if m.num_experts > 1 else 0)
    if workload.is_adapter:
        linears = linears_per_layer(m, mlp=workload.lora_targets == "all")
        per_layer += cal.HOST_OPS_ADAPTER * linears
        if workload.mode == Mode.QLORA:
            per_layer += cal.HOST_OPS_DEQUANT * linears_per_layer(m)
    return (cal.HOST_OPS_FIXED_TRAIN + per_layer * m.num_layers) * cal.HOST_OP_S


def overlap(host: float, device: float, p: float | None = None) -> float:
    """Step time when the host dispatches kernels the GPU runs behind it: the larger of the two where
    one dominates, more than either where they are close (the GPU starves whenever the host falls
    behind, and the host stalls on the allocator and on syncs). `p` defaults to the transformer path's
    exponent; the op graph's steps run as a flow shop of their phases (opcost.StepTime.step_s)."""
    if host <= 0 or device <= 0:
        return max(host, device)
    p = cal.OVERLAP_P if p is None else p
    return (host**p + device**p) ** (1 / p)
