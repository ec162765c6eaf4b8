#!/usr/bin/env python3
"""A serving engine's prefill step of Qwen3-14B in bf16 on one GPU, layer by layer: a batch of short prompts (a
ShareGPT burst's ~217-token prompts, 8,192 tokens a step as vLLM's token budget on an H100 packs them) or one long
one, through bf16 linears (cuBLAS), RMSNorm with Qwen3's per-head q/k norms, rotary, SiLU-and-multiply and the
residual adds, causal attention per prompt through PyTorch's flash SDPA (GQA, 40 query / 8 KV heads). One decoder
layer's weights are reused for all 40 (the same work). Each step is held back to back for seconds, so the figure is
at the clock a sustained prefill settles at (the GPU's power limit), which a burst's prefill phase runs at: whether
the estimator's prefill step (serve/stepcost.py, about 0.34 s for 8,192 tokens on an H100) is what the card does.
The layer's four linears are timed alone too, on the same shapes: the GEMMs' share apart from the elementwise kernels,
which this script writes unfused (fp32 norms, rotary by concatenation) where an engine fuses them.

  python3 -m lab.bf16_layer_prefill --out $OUT/bf16_layer_prefill.json
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from lab import decoder_ops
from lab.results import bench_args, write_rows
from lab.timing import sustained

HIDDEN, HEADS, KV_HEADS, DIM, FFN, LAYERS = 5120, 40, 8, 128, 17408, 40


def rms(x: torch.Tensor, gamma: torch.Tensor) -> torch.Tensor:
    return decoder_ops.rms(x, gamma, 1e-6)


def make_layer() -> dict[str, torch.Tensor]:
    layer = {name: torch.randn(n, k, device="cuda", dtype=torch.bfloat16) * 0.02
             for name, n, k in (("qkv", (HEADS + 2 * KV_HEADS) * DIM, HIDDEN), ("o", HIDDEN, HEADS * DIM),
                                ("gate_up", 2 * FFN, HIDDEN), ("down", HIDDEN, FFN))}
    for name, size in (("norm1", HIDDEN), ("norm2", HIDDEN), ("q_norm", DIM), ("k_norm", DIM)):
        layer[name] = torch.ones(size, device="cuda", dtype=torch.bfloat16)
    return layer


def decoder_layer(x: torch.Tensor, p: dict[str, torch.Tensor], prompts: int, cos: torch.Tensor,
                  sin: torch.Tensor) -> torch.Tensor:
    """`x`: the step's tokens, `prompts` prompts of equal length first (attention within each), any rows after them
    decode rows (their linears only: a decode row's attention reads its cache, a few per cent of this step)."""
    t = x.shape[0]
    qkv = F.linear(rms(x, p["norm1"]), p["qkv"])
    q, k, v = qkv.split((HEADS * DIM, KV_HEADS * DIM, KV_HEADS * DIM), dim=-1)
    length = cos.shape[0]
    n = prompts * length
    q = decoder_ops.rotary(rms(q[:n].view(prompts, length, HEADS, DIM), p["q_norm"]), cos, sin).transpose(1, 2)
    k = decoder_ops.rotary(rms(k[:n].view(prompts, length, KV_HEADS, DIM), p["k_norm"]), cos, sin).transpose(1, 2)
    v = v[:n].reshape(prompts, length, KV_HEADS, DIM).transpose(1, 2)
    attn = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    attn = attn.transpose(1, 2).reshape(n, HEADS * DIM)
    if t > n:
        attn = torch.cat((attn, torch.zeros(t - n, HEADS * DIM, device="cuda", dtype=attn.dtype)))
    x = x + F.linear(attn, p["o"])
    gate, up = F.linear(rms(x, p["norm2"]), p["gate_up"]).chunk(2, dim=-1)
    return x + F.linear(F.silu(gate) * up, p["down"])


def gemms_only(x: torch.Tensor, p: dict[str, torch.Tensor], attn: torch.Tensor, act: torch.Tensor) -> torch.Tensor:
    """The layer's four linears alone, on the same shapes (`attn` and `act` stand for the attention's output and the
    SiLU-and-multiply's): what the step's GEMMs take, apart from the norms, rotary, attention and activations."""
    F.linear(x, p["qkv"])
    F.linear(attn, p["o"])
    F.linear(x, p["gate_up"])
    return F.linear(act, p["down"])


def clocks() -> dict[str, float]:
    """The SM clock and board power now (NVML), or nothing where NVML is missing."""
    try:
        import pynvml

        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        return {"sm_clock_mhz": float(pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM)),
                "power_w": pynvml.nvmlDeviceGetPowerUsage(h) / 1e3}
    except Exception:
        return {}


def measure(prompts: int, length: int, decode_rows: int, layer: dict[str, torch.Tensor],
            seconds: float) -> dict[str, float]:
    tokens = prompts * length + decode_rows
    x = torch.randn(tokens, HIDDEN, device="cuda", dtype=torch.bfloat16)
    angle = torch.arange(length, device="cuda")[:, None] * 1e-4 ** (torch.arange(DIM // 2, device="cuda") / DIM)
    cos, sin = angle.cos()[:, None].to(torch.bfloat16), angle.sin()[:, None].to(torch.bfloat16)
    with torch.inference_mode():
        decoder_layer(x, layer, prompts, cos, sin)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            decoder_layer(x, layer, prompts, cos, sin)
        layer_s = sustained(graph.replay, seconds, 40)
        during = clocks()
        attn = torch.randn(tokens, HEADS * DIM, device="cuda", dtype=torch.bfloat16)
        act = torch.randn(tokens, FFN, device="cuda", dtype=torch.bfloat16)
        gemm_graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(gemm_graph):
            gemms_only(x, layer, attn, act)
        gemm_s = sustained(gemm_graph.replay, seconds, 40)
        during_gemms = {f"gemms_{k}": v for k, v in clocks().items()}
    row = {"prompts": prompts, "prompt_len": length, "decode_rows": decode_rows, "tokens": tokens,
           "layer_s": layer_s, "step_s": layer_s * LAYERS, "gemms_layer_s": gemm_s, "gemms_step_s": gemm_s * LAYERS,
           **during, **during_gemms}
    print(f"{prompts} x {length} + {decode_rows} decode = {tokens} tokens: one layer {layer_s * 1e3:.2f} ms "
          f"(its linears alone {gemm_s * 1e3:.2f} ms), 40 layers {row['step_s'] * 1e3:.0f} ms, {during} "
          f"{during_gemms}", flush=True)
    return row


#: (prompts, prompt length, decode rows) of the iterations timed: a burst's prefill iterations at vLLM's 8,192-token
#: budget (with and without the running requests' decodes), one long prompt, and iterations of about 2,000 tokens
SHAPES = ((38, 216, 0), (34, 216, 848), (1, 8192, 0), (9, 216, 0), (4, 512, 0))


def main() -> int:
    args = bench_args(__doc__, 4.0)
    layer = make_layer()
    rows = [measure(p, n, d, layer, args.seconds) for p, n, d in SHAPES]
    write_rows(args.out, rows, model="qwen3-14b", weights="bf16", layers=LAYERS)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
