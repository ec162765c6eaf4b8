#!/usr/bin/env python3
"""Depthwise convolutions as PyTorch runs them: NCHW ones go to its own CUDA kernels (`_conv_depthwise2d`) unless
its rule (aten/src/ATen/native/Convolution.cpp `use_cudnn_depthwise`: fp16 only, 32+ channels, 1/3/5 square
filters, width 7+, every stride-1 and some stride-2 shapes) picks cuDNN; channels-last ones always go to cuDNN.
For each depthwise shape of MobileNet-V3 Large and EfficientNet-B0 at their published batches, NCHW and NHWC, fp16
and bf16: forward, backward (input and weight gradients) and their sum, timed alone.

  python3 -m lab.device.depthwise --out $OUT/depthwise.json
"""

from __future__ import annotations

import argparse
import json

import torch
import torch.nn.functional as F

from lab.device.record import save_rows
from lab.rnn_calls import time_call  # median seconds over CUDA events, after a warm-up

#: (batch, channels, input size, kernel, stride): MobileNet-V3 Large (batch 512) and EfficientNet-B0 (batch 384)
SHAPES = [(512, 16, 112, 3, 1), (512, 64, 112, 3, 2), (512, 72, 56, 3, 1), (512, 72, 56, 5, 2), (512, 120, 28, 5, 1),
          (512, 240, 28, 3, 2), (512, 200, 14, 3, 1), (512, 480, 14, 3, 1), (512, 672, 14, 5, 2), (512, 960, 7, 5, 1),
          (384, 32, 112, 3, 1), (384, 96, 112, 3, 2), (384, 144, 56, 5, 2), (384, 240, 28, 3, 2),
          (384, 480, 14, 5, 1), (384, 672, 14, 5, 2), (384, 1152, 7, 3, 1)]


def one(n: int, c: int, size: int, k: int, stride: int, dtype: torch.dtype, channels_last: bool) -> dict:
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    x = torch.randn(n, c, size, size, device="cuda", dtype=dtype).to(memory_format=fmt).requires_grad_()
    w = torch.randn(c, 1, k, k, device="cuda", dtype=dtype).to(memory_format=fmt).requires_grad_()
    y = F.conv2d(x, w, stride=stride, padding=k // 2, groups=c)
    g = torch.randn_like(y)

    def fwd() -> None:
        with torch.no_grad():
            F.conv2d(x, w, stride=stride, padding=k // 2, groups=c)

    def bwd() -> None:
        torch.autograd.grad(y, (x, w), g, retain_graph=True)

    t_fwd, t_bwd = time_call(fwd, reps=10, warmup=3), time_call(bwd, reps=10, warmup=3)
    in_bytes, out_bytes = x.numel() * x.element_size(), y.numel() * y.element_size()
    return {"batch": n, "channels": c, "size": size, "kernel": k, "stride": stride,
            "dtype": str(dtype).split(".")[-1], "layout": "NHWC" if channels_last else "NCHW",
            "fwd_s": t_fwd, "bwd_s": t_bwd, "in_mb": in_bytes / 1e6, "out_mb": out_bytes / 1e6,
            "fwd_gbs": (in_bytes + out_bytes) / t_fwd / 1e9}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    rows = []
    for shape in SHAPES:
        for dtype in (torch.float16, torch.bfloat16):
            for cl in (False, True):
                r = one(*shape, dtype, cl)
                print(json.dumps(r), flush=True)
                rows.append(r)
                torch.cuda.empty_cache()
    save_rows(a.out, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
