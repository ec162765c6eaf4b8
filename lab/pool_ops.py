#!/usr/bin/env python3
"""PyTorch's 2-D pooling kernels on the GPU, channels-last and NCHW, bf16: max pooling (with indices, as nn.MaxPool2d
runs under autograd and inference alike) and average pooling over the windows and shapes CNNs use, forward under
inference mode and forward + backward; median of 20 calls between CUDA events after 5 warm-ups. What the op
pricer's pooling (a streaming op over its tensors) is checked against.

  python3 -m lab.pool_ops --out $OUT/pool_ops.json
  python3 -m lab.pool_ops --shapes new --out $OUT/pool_ops_new.json   # shapes the fit never saw
"""

from __future__ import annotations

import argparse

import torch

from lab.conv_stem import time_s
from lab.results import write_rows

#: (kind, channels, size, kernel, stride, padding): ResNet's stem pool, Inception's branch pools and grid
#: reductions, DenseNet's transitions, VGG's pools
SHAPES = (("max", 64, 112, 3, 2, 1), ("max", 64, 147, 3, 2, 0), ("max", 192, 71, 3, 2, 0), ("max", 128, 224, 2, 2, 0),
          ("max", 512, 28, 2, 2, 0), ("avg", 192, 35, 3, 1, 1), ("avg", 768, 17, 3, 1, 1), ("avg", 2048, 8, 3, 1, 1),
          ("avg", 256, 56, 2, 2, 0), ("avg", 512, 28, 2, 2, 0))
#: shapes the fit of calibration.opgraph.POOL_KERNELS never saw, listed after it (`--shapes new`): GoogLeNet's stride-1
#: max pools in its inception blocks and its 2x2 grid reduction, Inception-v4's stride-1 average pools (without the
#: padding in the count) and a grid-reduction max pool
NEW_SHAPES = (("max", 192, 28, 3, 1, 1), ("max", 480, 14, 3, 1, 1), ("max", 832, 7, 3, 1, 1),
              ("max", 832, 14, 2, 2, 0), ("avg", 384, 35, 3, 1, 1), ("avg", 1536, 8, 3, 1, 1),
              ("max", 384, 35, 3, 2, 0))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--shapes", choices=("fit", "new"), default="fit")
    a = ap.parse_args()
    rows = []
    for layout in ("nhwc", "nchw"):
        for kind, c, size, k, stride, pad in SHAPES if a.shapes == "fit" else NEW_SHAPES:
            # Inception-v4 leaves the padding out of an average's count; the kernel is the same otherwise
            pool = (torch.nn.MaxPool2d(k, stride, pad) if kind == "max"
                    else torch.nn.AvgPool2d(k, stride, pad, count_include_pad=a.shapes == "fit"))
            x = torch.randn(a.batch, c, size, size, device="cuda", dtype=torch.bfloat16)
            if layout == "nhwc":
                x = x.to(memory_format=torch.channels_last)
            xg = x.detach().requires_grad_()

            def forward(pool=pool, x=x) -> None:
                with torch.inference_mode():
                    pool(x)

            y = pool(xg)
            grad = torch.randn_like(y)

            def both(pool=pool, xg=xg, grad=grad) -> None:
                torch.autograd.grad(pool(xg), xg, grad)

            fwd, fwd_bwd = time_s(forward), time_s(both)
            rows.append({"kind": kind, "layout": layout, "channels": c, "size": size, "kernel": k, "stride": stride,
                         "padding": pad, "batch": a.batch, "out_size": y.shape[-1], "forward_s": fwd,
                         "backward_s": max(fwd_bwd - fwd, 0.0)})
            print(rows[-1], flush=True)
    write_rows(a.out, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
