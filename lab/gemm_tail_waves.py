#!/usr/bin/env python3
"""How a GEMM's time grows with its token count across wave boundaries: the last wave of output tiles, part full.

fp16 and bf16 products of a transformer's widths (N = 4096 outputs over K = 14336, Llama-3-8B's down projection;
N = 4096 over K = 4096, its output projection; N = 28672 over K = 4096, its fused gate and up), M = 128 to 4,096
tokens in steps of 128. Charged a whole wave per partial wave of 128 x 256 tiles (kernels._waves), time is a staircase
in M; charged at half-size tiles past the first wave (docs/gemm-waves.md), a finer one. The median of CUDA-event
timings after a warm-up, one row per product, with the output tiles and the device's SM count.

    python3 -m lab.gemm_tail_waves --out tail-waves.json
"""

from __future__ import annotations

import math

from lab.bench_kernels import _event_time
from lab.results import bench_args, write_rows

SHAPES = {"down_proj": (4096, 14336), "o_proj": (4096, 4096), "gate_up": (28672, 4096)}
TOKENS = range(128, 4097, 128)


def sweep() -> list[dict]:
    import torch

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    rows = []
    for dname, dtype in (("fp16", torch.float16), ("bf16", torch.bfloat16)):
        for name, (n, k) in SHAPES.items():
            w = torch.randn(k, n, device="cuda", dtype=dtype)
            for m in TOKENS:
                x = torch.randn(m, k, device="cuda", dtype=dtype)
                seconds = _event_time(lambda x=x, w=w: x @ w, 20)
                rows.append({"dtype": dname, "product": name, "m": m, "n": n, "k": k, "s": seconds, "sms": sms,
                             "tiles": math.ceil(m / 128) * math.ceil(n / 256),
                             "tflops": 2.0 * m * n * k / seconds / 1e12})
            del w
    return rows


if __name__ == "__main__":
    args = bench_args(__doc__, 0.0)
    write_rows(args.out, sweep())
