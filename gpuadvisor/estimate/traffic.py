"""Bytes that elementwise kernels move, counted op by op as the Hugging Face implementations run
them in eager PyTorch. Matrix products and attention are timed in `kernels`; everything between
them (norms, rotary embeddings, activation functions, residual adds, casts, the loss over the
vocabulary, the optimizer) reads and writes memory and is bandwidth-bound. Pure functions.

Per element, with `a` the activation bytes (2 for bf16, 4 for fp32) and `r` the residual stream's
bytes (4 under autocast, where the residual stream stays fp32; else `a`):
* RMSNorm (HF's Python version): upcast, pow, mean, multiply by rsqrt, downcast, weight multiply;
  LayerNorm is one fused kernel (read + write);
* rotary embeddings on q and k: x*cos, rotate_half (neg + cat), *sin, add: ~10 passes;
* attention glue: heads merged back (transpose + contiguous) on q_dim;
* MLP: SwiGLU = SiLU + multiply (5a per intermediate element); GPT-2's tanh GELU is a Python formula
  of 8 pointwise ops; native GELU/ReLU one kernel;
* two residual adds of the hidden size; autocast casts every linear's input to bf16;
* training: the backward of each elementwise op moves about twice its forward's bytes (grad in,
  saved input, grad out), the loss moves ~36 bytes per logit, AdamW (foreach) ~21 state-sized
  passes per parameter.
"""

from __future__ import annotations

from typing import Any

from gpuadvisor.estimate import calibration as cal

# the byte counts this module used to define (BWD_FACTOR, LOSS_BYTES_PER_LOGIT, ADAMW_PASSES, 8-bit AdamW's
# 95 B a parameter, MOE_ROUTED_BYTES, INT8_IN_BYTES ...) are in the calibration table, with their sources
__getattr__ = cal.aliases(__name__, (
    "BWD_FACTOR", "LOSS_BYTES_PER_LOGIT", "ADAMW_PASSES", "ADAMW_FUSED_PASSES", "ADAMW8BIT_BYTES",
    "SOFTCAP_BYTES_PER_LOGIT", "LOSS_FWD_BYTES_PER_LOGIT", "MOE_ROUTED_BYTES", "MIXED_WEIGHT_BYTES",
    "INT8_IN_BYTES", "INT8_OUT_BYTES"))


def _norm_bytes(norm: str, r: float, a: float, mixed: bool) -> float:
    if norm == "rmsnorm":
        up = 0.0 if r == 4 else r + 4
        down = 0.0 if mixed else 4 + a
        return up + 8 + 4 + 8 + down + (8 if mixed else 2 * a)
    return 2 * r + (4 if mixed else 0)


def forward_bytes_per_token_layer(m: Any, *, a: float, mixed: bool, tp: int = 1) -> float:
    """Bytes the elementwise kernels of one layer's forward move per token (module docstring)."""
    r = 4.0 if mixed else a
    d, q, kv = m.hidden_size, m.q_dim / tp, m.kv_dim / tp
    inter = m.active_mlp_width / tp
    rope = m.max_positions == 0
    b = getattr(m, "norms_per_layer", 2) * _norm_bytes(m.norm, r, a, mixed) * d
    if mixed:  # autocast casts each linear's fp32 input to bf16 (q/k/v share one when fused)
        b += (4 + 2) * d * ((1 if m.fused_qkv else 3) + (2 if m.gated else 1))
    if rope:
        b += (30.0 + 6.0 if mixed else 10 * a) * (q + kv)
    b += 2 * a * q  # merge heads after attention
    act = {"swiglu": 5 * a, "geglu": 5 * a, "gelu": 2 * a, "relu": 2 * a,
           "gelu_tanh": 40.0 if mixed else 18 * a}.get(m.mlp_act, 2 * a)
    b += act * inter
    b += 2 * 3 * r * d  # residual adds
    if m.num_experts > 1:  # in the layers with experts
        moe = m.expert_layers / m.num_layers
        b += cal.MOE_ROUTED_BYTES * m.experts_per_token * (m.intermediate_size / tp) * moe
        b += 12 * a * d * m.experts_per_token * moe  # gather, weighting, un-permute, sum: the hidden state 6x
    return b


# bitsandbytes LLM.int8() (Linear8bitLt), per linear and token, in bytes at the achieved bandwidth.
# Input side (INT8_IN_BYTES): the bf16 input is cast to fp16 (4 B, an unvectorized cast at half the
# bandwidth), quantized row-wise to int8 (3 B, a quarter to two fifths of the bandwidth) and checked for
# outlier columns (abs, compare, any: 8 B). Output side (INT8_OUT_BYTES): the int32 product is dequantized
# to fp16 (6 B) and cast back to bf16 (4 B at half the bandwidth). Measured kernel by kernel on an H100
# apart from any model (lab/device/int8_gemm.py). The int8 product itself runs at about the bf16 rate
# there (629-971 TOPS against 745-793 TFLOP/s), so it is counted as a 16-bit product.


def _linear_shapes(m: Any, tp: int, inter: float | None) -> list[tuple[float, float]]:
    """(in, out) features of one layer's linears per tensor-parallel rank: q, k, v, o, and the MLP's
    where `inter` (its intermediate width per rank) is given."""
    d, q, kv = m.hidden_size, m.q_dim / tp, m.kv_dim / tp
    lin = [(d, q), (d, kv), (d, kv), (q, d)]
    if inter is not None:
        lin += [(d, inter)] * (2 if m.gated else 1) + [(inter, d)]
    return lin


def int8_linear_bytes_per_token_layer(m: Any, tp: int = 1) -> float:
    """Bytes bitsandbytes' LLM.int8() linears of one layer move per token, beyond the product itself."""
    lin = _linear_shapes(m, tp, m.active_mlp_width / tp)
    return sum(cal.INT8_IN_BYTES * k + cal.INT8_OUT_BYTES * n for k, n in lin)


def adapter_bytes_per_token_layer(m: Any, *, a: float, targets: str, tp: int = 1, amp: bool = False) -> float:
    """LoRA (PEFT): each adapted linear upcasts its input to fp32, and its fp32 adapter output is
    scaled, added and downcast; under autocast the adapters run in bf16 (one cast of the input, a
    bf16 output scaled and added). Forward bytes per token of one layer."""
    lin = _linear_shapes(m, tp, m.intermediate_size / tp if targets == "all" else None)
    if amp:
        return sum(2 * a * k + 6 * a * n for k, n in lin)
    return sum((a + 4) * k + (24 + 2 * a) * n for k, n in lin)


def optimizer_bytes_per_param(weight_bytes: float, optimizer: str, mixed: bool) -> float:
    """Bytes one optimizer step moves per parameter: AdamW foreach ("adamw", "adamw-foreach") runs
    ~21 state-sized passes, fused AdamW one pass over p, g, m, v (7), 8-bit AdamW reads and writes
    1-byte states plus the weights and grads, SGD 4 passes."""
    if optimizer == "adamw8bit":
        b = cal.ADAMW8BIT_BYTES
    elif optimizer == "sgd":
        b = 4.0 * weight_bytes
    elif optimizer == "adamw-fused":
        b = cal.ADAMW_FUSED_PASSES * weight_bytes
    else:
        b = cal.ADAMW_PASSES * weight_bytes
    return b + (cal.MIXED_WEIGHT_BYTES if mixed else 0.0)
