"""FLOPs per token of a forward and of a training step: pure counting, no rates, no calibration.

Apart from `compute` so that the decode-step model (`engines`) and the step model (`compute`) both
import it downwards."""

from __future__ import annotations

from gpuadvisor.workload import Workload


def training_flops_per_token(workload: Workload) -> float:
    """6 x matmul params (+2 more with checkpointing) plus causal attention (QK and AV)."""
    m = workload.model
    if not m.is_transformer:
        f = 3 * m.fwd_flops_per_sample if m.fwd_flops_per_sample else 6.0 * m.num_params
        return f * (4 / 3 if workload.checkpointing else 1.0)
    mult = 8.0 if workload.checkpointing else 6.0
    if workload.is_adapter:
        mult = 6.0 if workload.checkpointing else 4.0  # no weight gradients for the frozen base
    causal = 0.5 if m.kind == "decoder" else 1.0
    attn = mult / 4.0 * m.num_layers * workload.seq * m.pair_flops() * causal  # 2*S*d per token for QK^T and AV each
    return mult * m.matmul_params + attn


def forward_flops_per_token(workload: Workload, context: int | None = None) -> float:
    """2 x matmul params plus attention over `context` tokens (causal over the sequence when None)."""
    m = workload.model
    if not m.is_transformer:
        return m.fwd_flops_per_sample or 2.0 * m.num_params
    causal = 0.5 if m.kind == "decoder" and context is None else 1.0
    ctx = workload.seq if context is None else context
    return 2.0 * m.matmul_params + m.num_layers * ctx * m.pair_flops(decoding=context is not None) * causal
