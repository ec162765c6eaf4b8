"""The elementwise pieces of a decoder layer the lab's layer benchmarks write out unfused (fp8_layer_prefill,
bf16_layer_prefill): RMSNorm in fp32 and rotary embedding by halves, as an engine's fused kernels compute them."""

from __future__ import annotations

import torch


def rms(x: torch.Tensor, gamma: torch.Tensor, eps: float) -> torch.Tensor:
    """RMSNorm over the last dimension, computed in fp32."""
    return (x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * gamma


def rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotary embedding on the last dimension's two halves (`cos`, `sin`: half its width)."""
    half = x.shape[-1] // 2
    a, b = x[..., :half], x[..., half:]
    return torch.cat((a * cos - b * sin, b * cos + a * sin), dim=-1)
