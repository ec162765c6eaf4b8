#!/usr/bin/env python3
"""Image-stem convolutions (3 input channels) against the same convolutions with their channels padded to 8, and a
64-channel 3x3 convolution for reference, channels-last, on the GPU: forward under inference mode, and the weight
gradient alone (the input needs none, as a stem's) under training. What the op pricer's 3-channel rule
(opcost._conv_s: channels padded to 8 and the rate divided by MISALIGNED_SLOWDOWN) is checked against. Median of
20 calls between CUDA events after 5 warm-ups, cudnn.benchmark on.

  python3 -m lab.conv_stem --out $OUT/conv_stem.json [--grid]

--grid times instead three convolutions over input channels 3, 4, 8, 16, 32 and 64 (a 7x7/2 and a 3x3/2 on 224x224
inputs, a 3x3/1 on 56x56): how the rate per FLOP grows with the channels each filter tap carries.
"""

from __future__ import annotations

import argparse

import torch

from lab.results import write_rows
from lab.rnn_calls import time_call

#: (name, input channels, output channels, kernel, stride, padding, input size): the stems of ResNet, EfficientNet /
#: MobileNet, MobileNetV3, ConvNeXt (patchify) and ViT-B/16 (patch embedding), and a ResNet layer-1 convolution
SHAPES = (("resnet stem 7x7/2", 3, 64, 7, 2, 3, 224), ("efficientnet stem 3x3/2", 3, 32, 3, 2, 1, 224),
          ("mobilenetv3 stem 3x3/2", 3, 16, 3, 2, 1, 224), ("convnext stem 4x4/4", 3, 96, 4, 4, 0, 224),
          ("vit patch 16x16/16", 3, 768, 16, 16, 0, 224), ("resnet layer1 3x3", 64, 64, 3, 1, 1, 56))


#: (name, output channels, kernel, stride, padding, input size) of --grid, each over GRID_CHANNELS
GRID = (("7x7/2", 64, 7, 2, 3, 224), ("3x3/2", 32, 3, 2, 1, 224), ("3x3/1", 64, 3, 1, 1, 56))
GRID_CHANNELS = (3, 4, 8, 16, 32, 64)


def time_s(fn) -> float:
    """Median seconds of `fn` between CUDA events (lab.rnn_calls.time_call: 20 calls after 5 warm-ups)."""
    return time_call(fn)[0]


def conv_times(cin: int, cout: int, k: int, stride: int, pad: int, size: int, batch: int,
               dtype: torch.dtype) -> tuple[float, float]:
    """(forward seconds, weight-gradient seconds) of one channels-last convolution."""
    conv = torch.nn.Conv2d(cin, cout, k, stride, pad, bias=False).cuda().to(dtype).to(memory_format=torch.channels_last)
    x = torch.randn(batch, cin, size, size, device="cuda", dtype=dtype).to(memory_format=torch.channels_last)

    def forward() -> None:
        with torch.inference_mode():
            conv(x)

    y = conv(x)
    grad = torch.randn_like(y)

    def weight_grad() -> None:
        torch.autograd.grad(conv(x), conv.weight, grad)

    fwd = time_s(forward)
    both = time_s(weight_grad)
    return fwd, max(both - fwd, 0.0)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--grid", action="store_true", help="the channel grid instead of the stems")
    a = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    rows = []
    shapes = ([(name, c, cout, k, stride, pad, size) for name, cout, k, stride, pad, size in GRID
               for c in GRID_CHANNELS] if a.grid else SHAPES)
    for dtype_name, dtype in (("bf16", torch.bfloat16), ("fp16", torch.float16)):
        for name, cin, cout, k, stride, pad, size in shapes:
            for channels in sorted({cin, 8 if cin < 8 and not a.grid else cin}):
                fwd, wgrad = conv_times(channels, cout, k, stride, pad, size, a.batch, dtype)
                out_hw = (size + 2 * pad - k) // stride + 1
                flops = 2.0 * a.batch * out_hw * out_hw * cout * cin * k * k  # the useful FLOPs (3 channels)
                rows.append({"shape": name, "dtype": dtype_name, "in_channels": cin, "run_channels": channels,
                             "out_channels": cout, "kernel": k, "stride": stride, "padding": pad, "size": size,
                             "batch": a.batch, "forward_s": fwd, "weight_grad_s": wgrad, "useful_flops": flops})
                print(f"{dtype_name} {name} C={channels}: fwd {fwd * 1e3:.3f} ms ({flops / fwd / 1e12:.1f} TFLOP/s "
                      f"useful), wgrad {wgrad * 1e3:.3f} ms", flush=True)
    write_rows(a.out, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
