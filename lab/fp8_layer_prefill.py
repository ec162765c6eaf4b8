#!/usr/bin/env python3
"""One prefill of Llama 3.3 70B in FP8 on one GPU, layer by layer as an FP8 serving engine runs it: each linear's
input quantized per token (dynamic scales), the GEMM through torch._scaled_mm (cuBLASLt, row-wise scales, bf16 out),
RMSNorm, rotary, SiLU-and-multiply and the residual adds in bf16, causal attention through PyTorch's flash SDPA (GQA,
64 query / 8 KV heads). One decoder layer's weights are reused for all 80 (the same work; 70B of FP8 weights would
leave no room). The GPU floor of Dynamo 0.1's 3,000-token prompts (tests/data/published-serving.json: by Little's law
about 0.59 s each; the estimator's roofline 0.39 s), and of the estimator's prefill at 1,024-8,192 tokens.

  python3 -m lab.fp8_layer_prefill --out $OUT/fp8_layer_prefill.json
"""

from __future__ import annotations

import argparse

import torch
import torch.nn.functional as F

from lab import decoder_ops
from lab.results import write_rows
from lab.timing import sustained

HIDDEN, HEADS, KV_HEADS, DIM, FFN, LAYERS = 8192, 64, 8, 128, 28672, 80
FP8 = torch.float8_e4m3fn


def quant(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token dynamic FP8 quantization (vLLM's scaled_fp8_quant with per-token scales)."""
    scale = x.abs().amax(dim=-1, keepdim=True).float().clamp(min=1e-12) / 448.0
    return (x / scale).to(FP8), scale


def linear(x: torch.Tensor, weight: torch.Tensor, weight_scale: torch.Tensor) -> torch.Tensor:
    x8, scale = quant(x)
    return torch._scaled_mm(x8, weight.t(), scale_a=scale, scale_b=weight_scale, out_dtype=torch.bfloat16)


def rms(x: torch.Tensor, gamma: torch.Tensor) -> torch.Tensor:
    return decoder_ops.rms(x, gamma, 1e-5)


def make_layer() -> dict[str, torch.Tensor]:
    def w(n: int, k: int) -> tuple[torch.Tensor, torch.Tensor]:
        return (torch.randn(n, k, device="cuda", dtype=torch.bfloat16) * 0.02).to(FP8), \
            torch.full((1, n), 0.02 / 448 * 8, device="cuda")

    layer = {}
    for name, n, k in (("qkv", (HEADS + 2 * KV_HEADS) * DIM, HIDDEN), ("o", HIDDEN, HEADS * DIM),
                       ("gate_up", 2 * FFN, HIDDEN), ("down", HIDDEN, FFN)):
        layer[name], layer[name + "_scale"] = w(n, k)
    layer["norm1"] = torch.ones(HIDDEN, device="cuda", dtype=torch.bfloat16)
    layer["norm2"] = torch.ones(HIDDEN, device="cuda", dtype=torch.bfloat16)
    return layer


def decoder_layer(x: torch.Tensor, p: dict[str, torch.Tensor], cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    t = x.shape[0]
    qkv = linear(rms(x, p["norm1"]), p["qkv"], p["qkv_scale"])
    q, k, v = qkv.split((HEADS * DIM, KV_HEADS * DIM, KV_HEADS * DIM), dim=-1)
    q = decoder_ops.rotary(q.view(t, HEADS, DIM), cos, sin).transpose(0, 1)[None]
    k = decoder_ops.rotary(k.view(t, KV_HEADS, DIM), cos, sin).transpose(0, 1)[None]
    v = v.reshape(t, KV_HEADS, DIM).transpose(0, 1)[None]
    attn = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    x = x + linear(attn[0].transpose(0, 1).reshape(t, HEADS * DIM), p["o"], p["o_scale"])
    gate, up = linear(rms(x, p["norm2"]), p["gate_up"], p["gate_up_scale"]).chunk(2, dim=-1)
    return x + linear(F.silu(gate) * up, p["down"], p["down_scale"])


def measure(tokens: int, layer: dict[str, torch.Tensor]) -> dict[str, float]:
    x = torch.randn(tokens, HIDDEN, device="cuda", dtype=torch.bfloat16)
    angle = torch.arange(tokens, device="cuda")[:, None] * 1e-4 ** (torch.arange(DIM // 2, device="cuda") / DIM)
    cos, sin = angle.cos()[:, None].to(torch.bfloat16), angle.sin()[:, None].to(torch.bfloat16)
    with torch.inference_mode():
        decoder_layer(x, layer, cos, sin)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            decoder_layer(x, layer, cos, sin)
        layer_s = sustained(graph.replay, 2.0, 50)
        eager_s = sustained(lambda: decoder_layer(x, layer, cos, sin), 1.0, 50)
    row = {"tokens": tokens, "layer_s": layer_s, "eager_layer_s": eager_s, "prefill_s": layer_s * LAYERS}
    print(f"{tokens} tokens: one layer {layer_s * 1e3:.2f} ms (eager {eager_s * 1e3:.2f} ms), 80 layers "
          f"{row['prefill_s'] * 1e3:.0f} ms", flush=True)
    return row


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    layer = make_layer()
    rows = [measure(tokens, layer) for tokens in (1024, 3000, 8192)]
    write_rows(args.out, rows, model="llama-3.3-70b", weights="fp8 (per-channel), activations fp8 "
               "(per-token dynamic)", layers=LAYERS)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
