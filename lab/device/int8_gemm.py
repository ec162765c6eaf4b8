#!/usr/bin/env python3
"""What bitsandbytes' LLM.int8() costs per linear on this GPU, kernel by kernel, apart from any model:
the int8 product (bitsandbytes' own kernel) against a bf16 product of the same shape, then a whole
Linear8bitLt forward with inputs below the outlier threshold and with a few outlier columns (which
LLM.int8() multiplies in 16 bits). The time model (traffic.py, compute.py) counts these parts; this
run measures them on shapes of a 3B model's prefill (16384 tokens). Writes $OUT/int8-gemm.json.

  python3 lab/device/int8_gemm.py
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from lab.profile_summary import profile_call

TOKENS = 16384
SHAPES = [(3072, 3072), (3072, 1024), (3072, 8192), (8192, 3072)]  # (in, out): q/o, k/v, gate/up, down


def timed(torch, fn, reps: int = 20) -> float:
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / reps / 1e3


def measure_shape(torch, bnb, k: int, n: int) -> dict:
    """One (in, out) linear over TOKENS rows: bf16 and int8 products, and Linear8bitLt forwards."""
    rec: dict = {"in": k, "out": n}
    flops = 2.0 * TOKENS * k * n
    a16 = torch.randn(TOKENS, k, device="cuda", dtype=torch.bfloat16)
    w16 = torch.randn(n, k, device="cuda", dtype=torch.bfloat16) * 0.02
    t = timed(torch, lambda: a16 @ w16.t())
    rec["bf16_s"], rec["bf16_tflops"] = t, flops / t / 1e12
    a8 = torch.randint(-127, 127, (TOKENS, k), device="cuda", dtype=torch.int8)
    w8 = torch.randint(-127, 127, (n, k), device="cuda", dtype=torch.int8)
    t = timed(torch, lambda: bnb.functional.int8_linear_matmul(a8, w8))
    rec["int8_s"], rec["int8_tops"] = t, flops / t / 1e12
    lin = bnb.nn.Linear8bitLt(k, n, bias=False, has_fp16_weights=False, threshold=6.0)
    lin.weight = bnb.nn.Int8Params(w16.float().cpu(), requires_grad=False, has_fp16_weights=False)
    lin = lin.cuda()
    x = torch.randn(TOKENS, k, device="cuda", dtype=torch.bfloat16).clamp_(-5.0, 5.0)  # no outliers
    xo = x.clone()
    xo[:, :: max(1, k // 8)] *= 10.0  # 8 outlier columns in every row
    with torch.no_grad():
        rec["linear_s"] = timed(torch, lambda: lin(x), reps=10)
        rec["linear_profile"] = profile_call(lambda: lin(x), top=12)
        rec["linear_outliers_s"] = timed(torch, lambda: lin(xo), reps=10)
        rec["linear_outliers_profile"] = profile_call(lambda: lin(xo), top=12)
    return rec


def main() -> int:
    import bitsandbytes as bnb
    import torch

    out = Path(os.environ.get("OUT", "out"))
    out.mkdir(parents=True, exist_ok=True)
    res: dict = {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "torch": torch.__version__,
                 "bitsandbytes": bnb.__version__, "device_name": torch.cuda.get_device_name(),
                 "tokens": TOKENS, "shapes": []}
    for k, n in SHAPES:
        try:
            rec = measure_shape(torch, bnb, k, n)
        except Exception as e:  # keep what the other shapes measured
            rec = {"in": k, "out": n, "error": repr(e)[:300]}
        print(json.dumps({kk: v for kk, v in rec.items() if not kk.endswith("profile")}), flush=True)
        res["shapes"].append(rec)
        torch.cuda.empty_cache()
    (out / "int8-gemm.json").write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
