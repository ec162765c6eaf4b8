"""Tracing on the CPU as PyTorch would dispatch on an NVIDIA GPU.

A few functional entry points take a different path on the CPU than on CUDA, which would put ops
in the graph that a GPU never runs: scaled_dot_product_attention (the CPU's math fallback
materialises the attention matrix and its dropout; CUDA runs one flash or memory-efficient kernel,
forward and backward), dropout (one fused native_dropout kernel on CUDA, three ops on the CPU) and
nn.MultiheadAttention's inference fast path (a CPU/CUDA fused op the classifier cannot see into).
`cuda_dispatch(rec)` patches them for the trace and restores them after.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import gpuadvisor.estimate.trace.classify as C
from gpuadvisor.estimate.graph import Op, OpClass, Phase
from gpuadvisor.estimate.trace.recorder import Recorder, torch

_Function: Any = torch.autograd.Function  # torch is untyped here (an optional extra)

F = torch.nn.functional


@contextlib.contextmanager
def cuda_dispatch(rec: Recorder) -> Iterator[None]:
    originals = (F.scaled_dot_product_attention, F.dropout)
    fastpath = torch.backends.mha.get_fastpath_enabled()
    F.scaled_dot_product_attention = _fused_attention(rec)
    F.dropout = _fused_dropout
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        yield
    finally:
        F.scaled_dot_product_attention, F.dropout = originals
        torch.backends.mha.set_fastpath_enabled(fastpath)


def _fused_dropout(x: Any, p: float = 0.5, training: bool = True, inplace: bool = False) -> Any:
    if not training or p == 0.0:
        return x
    return torch.ops.aten.native_dropout(x, p, True)[0]


def _fused_attention(rec: Recorder) -> Any:
    class Flash(_Function):
        """One fused kernel each way: out and the log-sum-exp saved; no attention matrix in memory."""

        @staticmethod
        def forward(ctx: Any, q: Any, k: Any, v: Any, mask: Any, causal: bool) -> Any:
            out = q.new_empty((*q.shape[:-1], v.shape[-1]))
            lse = q.new_empty(q.shape[:-1], dtype=torch.float32)
            ctx.save_for_backward(q, k, v, out, lse, *(() if mask is None else (mask,)))
            ctx.causal = causal
            _record(rec, q, k, v, mask, out, causal, Phase.FORWARD)
            return out

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            q, k, v, _out, _lse, *mask = ctx.saved_tensors
            _record(rec, q, k, v, mask[0] if mask else None, grad, ctx.causal, Phase.BACKWARD)
            return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v), None, None

    def sdpa(q: Any, k: Any, v: Any, attn_mask: Any = None, dropout_p: float = 0.0, is_causal: bool = False,
             scale: Any = None, enable_gqa: bool = False) -> Any:
        if torch.is_autocast_enabled("cpu"):
            dt = torch.get_autocast_dtype("cpu")
            q, k, v = q.to(dt), k.to(dt), v.to(dt)
        mask = attn_mask if isinstance(attn_mask, torch.Tensor) and attn_mask.dtype != torch.bool else None
        return Flash.apply(q, k, v, mask, bool(is_causal))
    return sdpa


def _record(rec: Recorder, q: Any, k: Any, v: Any, mask: Any, out: Any, causal: bool, phase: Phase) -> None:
    if not rec.recording:
        return
    if q.dim() != 4:  # (heads, L, E) without a batch: as a batch of one
        q, k, v, out = (t.unsqueeze(0) for t in (q, k, v, out))
    shape = (*(float(x) for x in q.shape[:3]), float(k.shape[-2]), float(q.shape[-1]), 1.0 if causal else 0.0)
    backward = phase is Phase.BACKWARD
    io = sum(C.tensor_bytes(t) for t in (q, k, v)) + (C.tensor_bytes(mask) if mask is not None else 0.0)
    read = io + (2 * C.tensor_bytes(out) if backward else 0.0)  # backward reads out and its gradient
    written = sum(C.tensor_bytes(t) for t in (q, k, v)) if backward else C.tensor_bytes(out)
    name = "flash_attention_backward" if backward else "flash_attention"
    rec.ops.append(Op(name, OpClass.ATTENTION, phase, C.dtype_name(q.dtype), C.attention_flops(shape, backward),
                      read, written, shape))
