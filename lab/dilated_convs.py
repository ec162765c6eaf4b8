#!/usr/bin/env python3
"""What a dilated (atrous) convolution costs against the same convolution undilated: DeepLabV3-ResNet50's 3x3
convolutions at 65x65 (its backbone's layer3 at dilation 2, layer4 at 4, the ASPP head at 12, 24 and 36; a 520x520
image, output stride 8), and a few others, each bf16 channels-last under cudnn.benchmark: the forward under
inference_mode and a training call under autocast (forward, then the input's and the weight's gradients), timed
with CUDA events (median of 15 after 3 warm-ups) at its dilation and at dilation 1 (the same padding rule, so the
same output size); one more call of each under torch.profiler names its kernels (cuDNN's choice at that dilation).

  python3 -m lab.dilated_convs --out $OUT/dilated_convs.json
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from lab.nchw_transposes import _kernels, _timed
from lab.results import measure_and_write
from lab.timing import autocast_calls

#: (label, batch, in channels, height = width, out channels, kernel, dilations)
SHAPES = [
    ("deeplabv3 layer3 3x3 256", 8, 256, 65, 256, 3, (2,)),
    ("deeplabv3 layer4 3x3 512", 8, 512, 65, 512, 3, (4,)),
    ("deeplabv3 aspp 3x3 2048->256", 8, 2048, 65, 256, 3, (12, 24, 36)),
    ("deeplabv3 aspp 3x3 2048->256 b16", 16, 2048, 65, 256, 3, (12,)),
    ("generic 3x3 128 @ 128", 8, 128, 128, 128, 3, (2, 4)),
    ("generic 3x3 64 @ 256", 8, 64, 256, 64, 3, (2,)),
    ("tcn 1-D k3 512 @ 4096", 16, 512, 4096, 512, 3, (2, 8, 32)),
]


def _top_kernels(fn) -> list[tuple[str, float]]:
    """The call's six longest kernels (name, seconds): which algorithm cuDNN picked at that dilation."""
    return sorted(_kernels(fn), key=lambda kv: -kv[1])[:6]


def one(label: str, batch: int, cin: int, size: int, cout: int, k: int, dilation: int) -> dict:
    one_d = label.startswith("tcn")
    shape = (batch, cin, size) if one_d else (batch, cin, size, size)
    conv = F.conv1d if one_d else F.conv2d
    fmt = torch.contiguous_format if one_d else torch.channels_last
    x = torch.randn(shape, device="cuda").to(memory_format=fmt)
    w = torch.randn((cout, cin, k) if one_d else (cout, cin, k, k), device="cuda").to(memory_format=fmt)
    pad = dilation * (k - 1) // 2

    forward, training = autocast_calls(conv, x, w, padding=pad, dilation=dilation)

    return {"label": label, "batch": batch, "in_channels": cin, "size": size, "out_channels": cout, "kernel": k,
            "dilation": dilation, "one_d": one_d, "forward_s": _timed(forward), "training_s": _timed(training),
            "forward_kernels": _top_kernels(forward), "training_kernels": _top_kernels(training)}


def main() -> None:
    torch.backends.cudnn.benchmark = True
    measure_and_write(__doc__, (lambda a=(label, batch, cin, size, cout, k, d): one(*a)
                                for label, batch, cin, size, cout, k, dilations in SHAPES for d in (1, *dilations)),
                      lambda r: f"{r['label']} d={r['dilation']}: forward {r['forward_s'] * 1e3:.3f} ms, training "
                                f"{r['training_s'] * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
