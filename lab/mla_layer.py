#!/usr/bin/env python3
"""One DeepSeek layer's prefill, kernel by kernel, on one GPU in bf16: the latent attention's projections (q through
its latent, the KV latent with the rotary key, the latent's up-projection to every head's key and value, o), causal
attention over 192-wide query/key heads (values padded from 128 to 192, as vLLM's MLA prefill pads them for flash
attention), the router, the routed experts as one grouped GEMM each way (torch._grouped_mm, tokens spread evenly over
the experts) and the shared expert. Is the estimator's costing of a latent-attention MoE layer (compute._layer_gemms,
kernels.grouped_gemm_time, the serving step's attention) right on a card, shape by shape? The reference, measured in
the same run: one dense 8192^3 bf16 GEMM.

Shapes: DeepSeek-V3's (7,168 hidden, 128 heads, 256 experts of 2,048, top 8, one shared) and DeepSeek-V2-Lite's
(2,048 hidden, 16 heads, no query latent, 64 experts of 1,408, top 6, a shared one of 2,816), at 1,024-8,192 tokens.

  python3 -m lab.mla_layer --out $OUT/mla_layer.json
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from lab.results import bench_args, write_rows
from lab.timing import sustained as timed

#: name -> (hidden, heads, q_lora, kv_lora, nope, rope, v, experts, top_k, expert width, shared width)
MODELS = {"deepseek-v3": (7168, 128, 1536, 512, 128, 64, 128, 256, 8, 2048, 2048),
          "deepseek-v2-lite": (2048, 16, 0, 512, 128, 64, 128, 64, 6, 1408, 2816)}
TOKENS = {"deepseek-v3": (1024, 4096, 8192), "deepseek-v2-lite": (4096, 16384)}


def measure(model: str, tokens: int, seconds: float) -> dict:
    d, heads, q_lora, kv_lora, nope, rope, v, experts, top_k, inter, shared = MODELS[model]
    dt, dev = torch.bfloat16, "cuda"

    def w(n: int, k: int) -> torch.Tensor:
        return torch.randn(n, k, device=dev, dtype=dt) * 0.02

    x = torch.randn(tokens, d, device=dev, dtype=dt)
    qk = nope + rope
    gemms = {"kv_a": (x, w(kv_lora + rope, d)), "kv_b": (torch.randn(tokens, kv_lora, device=dev, dtype=dt),
                                                      w(heads * (nope + v), kv_lora)),
             "o": (torch.randn(tokens, heads * v, device=dev, dtype=dt), w(d, heads * v)),
             "router": (x, w(experts, d)), "shared_gate_up": (x, w(2 * shared, d)),
             "shared_down": (torch.randn(tokens, shared, device=dev, dtype=dt), w(d, shared))}
    if q_lora:
        gemms["q_a"] = (x, w(q_lora, d))
        gemms["q_b"] = (torch.randn(tokens, q_lora, device=dev, dtype=dt), w(heads * qk, q_lora))
    else:
        gemms["q"] = (x, w(heads * qk, d))
    row: dict = {"model": model, "tokens": tokens}
    for name, (a, b) in gemms.items():
        row[f"{name}_s"] = timed(lambda a=a, b=b: a @ b.t(), seconds)
    del gemms
    per = tokens * top_k // experts  # rows an expert, routed evenly
    offs = torch.arange(1, experts + 1, device=dev, dtype=torch.int32) * per
    for name, n, k in (("experts_gate_up", 2 * inter, d), ("experts_down", d, inter)):
        a = torch.randn(experts * per, k, device=dev, dtype=dt)
        ew = torch.randn(experts, n, k, device=dev, dtype=dt) * 0.02
        row[f"{name}_s"] = timed(lambda a=a, ew=ew: torch._grouped_mm(a, ew.transpose(-2, -1), offs=offs), seconds)
        del a, ew
    q = torch.randn(1, heads, tokens, qk, device=dev, dtype=dt)
    k = torch.randn(1, heads, tokens, qk, device=dev, dtype=dt)
    vv = torch.randn(1, heads, tokens, qk, device=dev, dtype=dt)  # 128 padded to 192
    row["attention_s"] = timed(lambda q=q, k=k, vv=vv: F.scaled_dot_product_attention(q, k, vv, is_causal=True),
                              seconds)
    del q, k, vv
    torch.cuda.empty_cache()
    parts = ", ".join(f"{key[:-2]} {val * 1e3:.3f}" for key, val in row.items() if key.endswith("_s"))
    print(f"{model} {tokens} tokens (ms): {parts}", flush=True)
    return row


def main() -> int:
    args = bench_args(__doc__, 0.3)
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    reference = timed(lambda a=a, b=b: a @ b, args.seconds)
    del a, b
    print(f"reference: dense 8192^3 bf16 GEMM {reference * 1e3:.3f} ms ({2 * 8192**3 / reference / 1e12:.0f} TFLOP/s)",
          flush=True)
    rows = [measure(m, t, args.seconds) for m in MODELS for t in TOKENS[m]]
    write_rows(args.out, rows, seconds=args.seconds, reference_gemm_s=reference)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
