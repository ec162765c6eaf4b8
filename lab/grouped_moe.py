#!/usr/bin/env python3
"""A MoE layer's experts as one grouped GEMM (torch._grouped_mm: one launch over every expert's rows, as vLLM's
fused_moe and transformers >= 5 run them) against the same experts one torch.mm after another, and against one
dense GEMM of the same multiply-adds (the reference measured in the same run): is kernels.grouped_gemm_time's
model right, waves counted over all the experts' tiles, weights read once per expert that got rows?

Shapes: gpt-oss-120b's experts (128, gate_up 5760 x 2880, down 2880 x 2880), gpt-oss-20b's (32), Mixtral 8x7B's
(8, gate_up 28672 x 4096), at 8 to 2,048 rows an expert; bf16, each timed back to back for `--seconds` after as long a
warm-up.

  python3 -m lab.grouped_moe --out $OUT/grouped_moe.json
"""

from __future__ import annotations

import torch

from lab.results import bench_args, write_rows
from lab.timing import sustained as timed

#: (model, GEMM, experts, n, k, rows an expert)
SHAPES = [("gpt-oss-120b", "gate_up", 128, 5760, 2880, m) for m in (8, 32, 128, 256, 512)] + \
         [("gpt-oss-120b", "down", 128, 2880, 2880, m) for m in (32, 256)] + \
         [("gpt-oss-20b", "gate_up", 32, 5760, 2880, m) for m in (32, 256, 1024)] + \
         [("mixtral-8x7b", "gate_up", 8, 28672, 4096, m) for m in (64, 512, 2048)]


def measure(model: str, gemm: str, experts: int, n: int, k: int, m: int, seconds: float) -> dict:
    dt = torch.bfloat16
    a = torch.randn(experts * m, k, device="cuda", dtype=dt)
    w = torch.randn(experts, n, k, device="cuda", dtype=dt)  # (E, n, k), used as (E, k, n) column-major
    offs = torch.arange(1, experts + 1, device="cuda", dtype=torch.int32) * m
    dense_w = torch.randn(n, k, device="cuda", dtype=dt)
    row = {"model": model, "gemm": gemm, "experts": experts, "n": n, "k": k, "m": m,
           "flops": 2.0 * experts * m * n * k}
    try:
        row["grouped_s"] = timed(lambda: torch._grouped_mm(a, w.transpose(-2, -1), offs=offs), seconds)
    except (RuntimeError, AttributeError, TypeError) as e:  # an older PyTorch or another card
        row["grouped_error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
    chunks = a.split(m)
    row["loop_s"] = timed(lambda: [torch.mm(chunks[e], w[e].t()) for e in range(experts)], seconds)
    row["dense_s"] = timed(lambda: a @ dense_w.t(), seconds)
    print(f"{model} {gemm} E={experts} m={m}: grouped {row.get('grouped_s', float('nan')) * 1e3:.3f} ms, "
          f"loop {row['loop_s'] * 1e3:.3f} ms, dense {row['dense_s'] * 1e3:.3f} ms", flush=True)
    return row


def main() -> int:
    args = bench_args(__doc__, 0.3)
    rows = [measure(*shape, args.seconds) for shape in SHAPES]
    write_rows(args.out, rows, seconds=args.seconds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
