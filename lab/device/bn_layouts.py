#!/usr/bin/env python3
"""A train-mode batch norm as PyTorch runs it under fp16 autocast (cuDNN's kernels), NCHW against channels-last,
at the shapes of MobileNet-V3 Large (batch 512), EfficientNet-B0 (384) and ResNet-50 (512): forward, and forward
with backward, timed alone. The H200 profiles of those models' training steps put NCHW batch norm at 3-6x its
channels-last time (lab/data/h200-nchw-2026-12-05/nchw_profile.json); this says how that depends on the shape.

  python3 -m lab.device.bn_layouts --out $OUT/bn_layouts.json
"""

from __future__ import annotations

import argparse
import json

import torch

from lab.device.record import save_rows
from lab.rnn_calls import time_call  # median seconds over CUDA events, after a warm-up

#: (batch, channels, size)
SHAPES = [(512, 16, 112), (512, 64, 112), (512, 64, 56), (512, 72, 56), (512, 120, 28), (512, 240, 28),
          (512, 200, 14), (512, 480, 14), (512, 672, 14), (512, 960, 7), (384, 32, 112), (384, 96, 112),
          (384, 144, 56), (384, 240, 28), (384, 480, 14), (384, 1152, 7), (512, 256, 56), (512, 128, 28),
          (512, 512, 28), (512, 1024, 14), (512, 2048, 7), (128, 64, 56), (128, 512, 7)]


def one(n: int, c: int, size: int, channels_last: bool) -> dict:
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    bn = torch.nn.BatchNorm2d(c).cuda().train()
    x = torch.randn(n, c, size, size, device="cuda", dtype=torch.float16).to(memory_format=fmt).requires_grad_()
    g = torch.randn_like(x)

    def fwd() -> None:
        with torch.autocast("cuda", dtype=torch.float16):
            bn(x)

    def both() -> None:
        with torch.autocast("cuda", dtype=torch.float16):
            y = bn(x)
        y.backward(g)

    nbytes = x.numel() * 2
    return {"batch": n, "channels": c, "size": size, "layout": "NHWC" if channels_last else "NCHW",
            "fwd_s": time_call(fwd, reps=10, warmup=3), "fwd_bwd_s": time_call(both, reps=10, warmup=3),
            "tensor_mb": nbytes / 1e6}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rows = []
    for shape in SHAPES:
        for cl in (False, True):
            r = one(*shape, cl)
            print(json.dumps(r), flush=True)
            rows.append(r)
    save_rows(a.out, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
