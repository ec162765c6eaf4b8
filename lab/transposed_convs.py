#!/usr/bin/env python3
"""What a transposed convolution costs, and what the convolution it is the data gradient of costs: cuDNN runs a
transposed convolution's forward as that convolution's dgrad, so its GEMM's N is the transposed convolution's
output channels (DCGAN's last layer: 3) where the estimator had priced the forward convolution whose K they are.
Shapes: DCGAN's generator layer by layer (batch 256 and 1,024), U-Net's 2x2 stride-2 up-convolutions, a 4x4 stride-2
decoder head to 3 and to 1 channels, Mask R-CNN's mask-head up-convolution, and 1-D upsamplers of a HiFi-GAN-style
vocoder and a Conv-TasNet-style decoder. Each in bf16 (2-D channels-last) under cudnn.benchmark: the transposed
convolution's forward under inference_mode, a training call under autocast (forward, then the input's and the
weight's gradients), and the equivalent forward convolution (the transposed one's output as its input, its input as
the output), timed with CUDA events (median of 15 after 3 warm-ups); one more call of each under torch.profiler
names its kernels (cuDNN's choice).

  python3 -m lab.transposed_convs --out $OUT/transposed_convs.json
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from lab.nchw_transposes import _kernels, _timed
from lab.results import measure_and_write
from lab.timing import autocast_calls

#: (label, batch, in channels, input size (H = W, or length for 1-D), out channels, kernel, stride, padding, 1-D)
SHAPES = [
    *[(f"dcgan L1 b{b}", b, 100, 1, 512, 4, 1, 0, False) for b in (256, 1024)],
    *[(f"dcgan L2 b{b}", b, 512, 4, 256, 4, 2, 1, False) for b in (256, 1024)],
    *[(f"dcgan L3 b{b}", b, 256, 8, 128, 4, 2, 1, False) for b in (256, 1024)],
    *[(f"dcgan L4 b{b}", b, 128, 16, 64, 4, 2, 1, False) for b in (256, 1024)],
    *[(f"dcgan L5 b{b}", b, 64, 32, 3, 4, 2, 1, False) for b in (256, 1024)],
    ("unet up 1024->512 @28", 16, 1024, 28, 512, 2, 2, 0, False),
    ("unet up 512->256 @56", 16, 512, 56, 256, 2, 2, 0, False),
    ("unet up 128->64 @128", 8, 128, 128, 64, 2, 2, 0, False),
    ("decoder 4x4/2 64->3 @128", 16, 64, 128, 3, 4, 2, 1, False),
    ("decoder 4x4/2 64->1 @128", 16, 64, 128, 1, 4, 2, 1, False),
    ("decoder 3x3/2 128->64 @64", 32, 128, 64, 64, 3, 2, 1, False),
    ("maskrcnn mask up 256 @14", 512, 256, 14, 256, 2, 2, 0, False),
    ("hifigan up 512->256 k16/8", 16, 512, 256, 256, 16, 8, 4, True),
    ("hifigan up 256->128 k16/8", 16, 256, 2048, 128, 16, 8, 4, True),
    ("hifigan up 128->64 k4/2", 16, 128, 16384, 64, 4, 2, 1, True),
    ("tasnet decoder 512->1 k16/8", 16, 512, 4000, 1, 16, 8, 0, True),
]


def _top_kernels(fn) -> list[tuple[str, float]]:
    """The call's eight longest kernels (name, seconds): which algorithm cuDNN picked."""
    return sorted(_kernels(fn), key=lambda kv: -kv[1])[:8]


def one(label: str, batch: int, cin: int, size: int, cout: int, k: int, stride: int, pad: int, one_d: bool) -> dict:
    shape = (batch, cin, size) if one_d else (batch, cin, size, size)
    fmt = torch.contiguous_format if one_d else torch.channels_last
    tconv, conv = (F.conv_transpose1d, F.conv1d) if one_d else (F.conv_transpose2d, F.conv2d)
    x = torch.randn(shape, device="cuda").to(memory_format=fmt)
    w = (torch.randn((cin, cout, k) if one_d else (cin, cout, k, k), device="cuda") * 0.05).to(memory_format=fmt)
    with torch.no_grad():
        y = tconv(x, w, stride=stride, padding=pad)
    y = y.to(memory_format=fmt)

    forward, training = autocast_calls(tconv, x, w, stride=stride, padding=pad)

    def equivalent():  # the convolution whose data gradient the transposed one is, run forward
        with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):
            conv(y, w, stride=stride, padding=pad)

    return {"label": label, "batch": batch, "in_channels": cin, "size": size, "out_channels": cout, "kernel": k,
            "stride": stride, "padding": pad, "one_d": one_d, "out_size": int(y.shape[-1]),
            "forward_s": _timed(forward), "training_s": _timed(training), "equivalent_forward_s": _timed(equivalent),
            "forward_kernels": _top_kernels(forward), "training_kernels": _top_kernels(training),
            "equivalent_kernels": _top_kernels(equivalent)}


def main() -> None:
    torch.backends.cudnn.benchmark = True
    measure_and_write(__doc__, (lambda shape=shape: one(*shape) for shape in SHAPES),
                      lambda r: f"{r['label']}: forward {r['forward_s'] * 1e3:.3f} ms, training "
                                f"{r['training_s'] * 1e3:.3f} ms, equivalent forward "
                                f"{r['equivalent_forward_s'] * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
