#!/usr/bin/env python3
"""Block-scaled FP8 GEMMs (a scale per 128 of a row's activations, per 128x128 block of weights: DeepSeek-V3's and
Qwen3's FP8 checkpoints, as vLLM and SGLang run them) against per-tensor FP8 and bf16 at the same shapes, held back
to back so that the card settles: what share of the per-tensor FP8 rate does block scaling keep? Shapes: DeepSeek-V3's
products on one of eight tensor-parallel ranks (and TP1's widest), 2,048 and 8,192 tokens. Block-scaled through
torch.nn.functional.scaled_mm (BlockWise1x128 x BlockWise128x128, cuBLASLt on Hopper), per-tensor through
torch._scaled_mm; the reference, measured in the same run: the bf16 product of each shape. And DeepSeek-V3's experts
on one of eight ranks as one grouped launch, bf16 and FP8, at 1-256 rows an expert (measure_grouped).

  python3 -m lab.fp8_block_gemm --out $OUT/fp8_block_gemm.json
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from lab.results import bench_args, write_rows
from lab.timing import sustained

#: (layer GEMM, n, k) of DeepSeek-V3 at TP8 (and TP1's o and shared gate_up)
SHAPES = (("q_b", 3072, 1536), ("qkv_a", 2112, 7168), ("kv_b", 4096, 512), ("o", 7168, 2048),
          ("dense_gate_up", 4608, 7168), ("dense_down", 7168, 2304), ("o_tp1", 7168, 16384),
          ("gate_up_tp1", 36864, 7168), ("square", 8192, 8192))


def _block(a8: torch.Tensor, w8: torch.Tensor, m: int, n: int, k: int) -> Callable[[], torch.Tensor]:
    """A callable of the block-scaled product, or the error that stops it on this PyTorch."""
    a_scale = torch.ones(k // 128, m, device="cuda").t()  # (m, k/128), outer-dim major
    w_scale = torch.ones(n // 128, k // 128, device="cuda")
    if hasattr(F, "scaled_mm") and hasattr(F, "ScalingType"):
        def run() -> torch.Tensor:
            return F.scaled_mm(a8, w8.t(), a_scale, F.ScalingType.BlockWise1x128, w_scale.t(),
                               F.ScalingType.BlockWise128x128, output_dtype=torch.bfloat16)
    else:
        def run() -> torch.Tensor:
            return torch._scaled_mm(a8, w8.t(), scale_a=a_scale, scale_b=w_scale.t(), out_dtype=torch.bfloat16)
    run()
    torch.cuda.synchronize()
    return run


def measure(gemm: str, m: int, n: int, k: int, seconds: float) -> dict:
    one = torch.tensor(1.0, device="cuda")
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    a8, w8 = a.to(torch.float8_e4m3fn), w.to(torch.float8_e4m3fn)
    flops = 2.0 * m * n * k
    row: dict = {"gemm": gemm, "m": m, "n": n, "k": k}
    row["bf16_s"] = sustained(lambda: a @ w.t(), seconds, 20)
    row["fp8_tensor_s"] = sustained(
        lambda: torch._scaled_mm(a8, w8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16), seconds, 20)
    try:
        row["fp8_block_s"] = sustained(_block(a8, w8, m, n, k), seconds, 20)
    except (RuntimeError, TypeError, AttributeError, ValueError) as e:
        row["fp8_block_error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
    tf = {key[:-2]: flops / row[key] / 1e12 for key in ("bf16_s", "fp8_tensor_s", "fp8_block_s") if key in row}
    print(f"{gemm} m={m} n={n} k={k}: " + ", ".join(f"{key} {v:.0f}" for key, v in tf.items()) + " TFLOP/s"
          + (f" ({row['fp8_block_error']})" if "fp8_block_error" in row else ""), flush=True)
    return row


#: DeepSeek-V3's experts on one of eight tensor-parallel ranks: (GEMM, experts, n, k), at a few rows an expert (a
#: decode step's tokens x 8 / 256 routed evenly) up to a prefill's
GROUPED = (("experts_gate_up_tp8", 256, 512, 7168), ("experts_down_tp8", 256, 7168, 256))
GROUPED_ROWS = (1, 4, 16, 64, 256)


def measure_grouped(gemm: str, experts: int, n: int, k: int, m: int, seconds: float) -> dict:
    """One grouped launch over every expert's rows: bf16 (torch._grouped_mm) and FP8 with row-wise scales
    (torch._scaled_grouped_mm, Hopper's CUTLASS grouped kernel): is a memory-bound grouped product of small expert
    slices read at the card's bandwidth, as kernels.grouped_gemm_time prices it?"""
    a = torch.randn(experts * m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(experts, n, k, device="cuda", dtype=torch.bfloat16) * 0.02
    offs = torch.arange(1, experts + 1, device="cuda", dtype=torch.int32) * m
    row: dict = {"gemm": gemm, "experts": experts, "m": m, "n": n, "k": k}
    row["grouped_bf16_s"] = sustained(lambda: torch._grouped_mm(a, w.transpose(-2, -1), offs=offs), seconds, 20)
    a8, w8 = a.to(torch.float8_e4m3fn), w.to(torch.float8_e4m3fn)
    sa = torch.ones(experts * m, device="cuda")
    sb = torch.ones(experts, n, device="cuda")
    try:
        row["grouped_fp8_s"] = sustained(lambda: torch._scaled_grouped_mm(
            a8, w8.transpose(-2, -1), sa, sb, offs=offs, out_dtype=torch.bfloat16), seconds, 20)
    except (RuntimeError, TypeError, AttributeError, ValueError) as e:
        row["grouped_fp8_error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
    weights = experts * n * k
    gbs = {key[:-2]: weights * (2 if "bf16" in key else 1) / row[key] / 1e9
           for key in ("grouped_bf16_s", "grouped_fp8_s") if key in row}
    print(f"{gemm} m={m}/expert: " + ", ".join(f"{key} {v:.0f} GB/s of weights" for key, v in gbs.items())
          + (f" ({row['grouped_fp8_error']})" if "grouped_fp8_error" in row else ""), flush=True)
    return row


def main() -> int:
    args = bench_args(__doc__, 0.5)
    rows = [measure(g, m, n, k, args.seconds) for g, n, k in SHAPES
            for m in ((8192,) if g == "square" else (2048, 8192))]
    rows += [measure_grouped(g, e, n, k, m, args.seconds) for g, e, n, k in GROUPED for m in GROUPED_ROWS]
    write_rows(args.out, rows, seconds=args.seconds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
