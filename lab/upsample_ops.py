#!/usr/bin/env python3
"""What F.interpolate's upsampling costs, forward and backward: bilinear (align_corners False, as segmentation heads
call it) and nearest, at scales from 2x (U-Net, FPN) to DeepLabV3's 8x logits (65 -> 520) and its ASPP pooling
branch's 1x1 -> 65x65, channels-last and contiguous, bf16 and fp32. The forward runs one thread per output element;
the backward scatters each output's gradient into its source pixels with atomic adds, which serialize where many
outputs share a source (a 1x1 source: every output). Timed with CUDA events (median of 15 after 3 warm-ups); the
kernels named by torch.profiler.

  python3 -m lab.upsample_ops --out $OUT/upsample_ops.json
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from lab.nchw_transposes import _kernels, _timed
from lab.results import measure_and_write

#: (label, batch, channels, input size, output size)
SHAPES = [
    ("deeplabv3 logits 65->520", 8, 21, 65, 520),
    ("deeplabv3 aspp pool 1->65", 8, 256, 1, 65),
    ("fcn logits 28->224", 32, 21, 28, 224),
    ("unet 2x 64->128", 16, 256, 64, 128),
    ("unet 2x 128->256", 8, 64, 128, 256),
    ("fpn 2x 32->64", 32, 256, 32, 64),
    ("4x 56->224", 16, 64, 56, 224),
    ("pool 1->32", 32, 512, 1, 32),
    ("pool 2->64", 32, 512, 2, 64),
]


def one(label: str, batch: int, channels: int, size: int, out: int, mode: str, layout: str,
        dtype: torch.dtype) -> dict:
    x = torch.randn(batch, channels, size, size, device="cuda", dtype=dtype)
    if layout == "channels_last":
        x = x.to(memory_format=torch.channels_last)
    kw = {"align_corners": False} if mode == "bilinear" else {}

    def forward():
        with torch.no_grad():
            F.interpolate(x, size=(out, out), mode=mode, **kw)

    xg = x.clone().requires_grad_(True)
    y = F.interpolate(xg, size=(out, out), mode=mode, **kw)
    grad = torch.randn_like(y)

    def backward():
        torch.autograd.grad(y, xg, grad, retain_graph=True)

    top = lambda fn: sorted(_kernels(fn), key=lambda kv: -kv[1])[:4]  # noqa: E731
    return {"label": label, "batch": batch, "channels": channels, "size": size, "out_size": out, "mode": mode,
            "layout": layout, "dtype": str(dtype).removeprefix("torch."), "outputs": batch * channels * out * out,
            "forward_s": _timed(forward), "backward_s": _timed(backward), "forward_kernels": top(forward),
            "backward_kernels": top(backward)}


def main() -> None:
    measure_and_write(__doc__, (lambda a=(*shape, mode, layout, dtype): one(*a) for shape in SHAPES
                                for mode in ("bilinear", "nearest") for layout in ("channels_last", "contiguous")
                                for dtype in (torch.bfloat16, torch.float32)),
                      lambda r: f"{r['label']} {r['mode']} {r['layout']} {r['dtype']}: forward "
                                f"{r['forward_s'] * 1e6:.1f} us, backward {r['backward_s'] * 1e6:.1f} us")


if __name__ == "__main__":
    main()
