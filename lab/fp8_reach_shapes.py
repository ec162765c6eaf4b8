#!/usr/bin/env python3
"""FP8 against bf16 GEMMs at the shapes a serving engine's prefill runs (Llama 3.3 70B and Llama 3.1 8B layers, TP1,
1,024-8,192 tokens) and at 8192^3, back to back for several seconds each so that the card settles at its power
limit: does a large FP8 GEMM reach FP8_REACH (0.89, the probe's 8192^3 pair) of a bf16 GEMM's share of its peak?
FP8 through torch._scaled_mm (cuBLASLt, per-tensor scales, bf16 out), as vLLM's FP8 linears run it on Hopper.

  python3 -m lab.fp8_reach_shapes --out $OUT/fp8_reach_shapes.json
"""

from __future__ import annotations

import torch

from lab.results import bench_args, write_rows
from lab.timing import sustained

#: (model, layer GEMM, n, k): n output features, k input features
SHAPES = (("llama-3.3-70b", "qkv", 10240, 8192), ("llama-3.3-70b", "o", 8192, 8192),
          ("llama-3.3-70b", "gate_up", 57344, 8192), ("llama-3.3-70b", "down", 8192, 28672),
          ("llama-3.1-8b", "qkv", 6144, 4096), ("llama-3.1-8b", "gate_up", 28672, 4096),
          ("llama-3.1-8b", "down", 4096, 14336), ("square", "8192^3", 8192, 8192))


def measure(model: str, gemm: str, m: int, n: int, k: int, seconds: float) -> dict:
    one = torch.tensor(1.0, device="cuda")
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    a8, w8 = a.to(torch.float8_e4m3fn), w.to(torch.float8_e4m3fn)
    flops = 2.0 * m * n * k
    bf16_s = sustained(lambda: a @ w.t(), seconds, 50)
    fp8_s = sustained(lambda: torch._scaled_mm(a8, w8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16),
                      seconds, 50)
    row = {"model": model, "gemm": gemm, "m": m, "n": n, "k": k, "bf16_tflops": flops / bf16_s / 1e12,
           "fp8_tflops": flops / fp8_s / 1e12}
    row["fp8_over_bf16"] = row["fp8_tflops"] / row["bf16_tflops"]
    print(f"{model} {gemm} m={m}: bf16 {row['bf16_tflops']:.0f}, fp8 {row['fp8_tflops']:.0f} TFLOP/s, "
          f"{row['fp8_over_bf16']:.2f}x (reach ratio {row['fp8_over_bf16'] / 2:.3f})", flush=True)
    return row


def main() -> int:
    args = bench_args(__doc__, 1.5)
    rows = [measure(model, gemm, m, n, k, args.seconds) for model, gemm, n, k in SHAPES
            for m in ((8192,) if model == "square" else (1024, 3000, 8192))]
    write_rows(args.out, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
