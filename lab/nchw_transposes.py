#!/usr/bin/env python3
"""What a 16-bit NCHW convolution costs over the same convolution channels-last, and where the difference goes:
the layout transposes cuDNN runs around its NHWC kernels (nchwToNhwc / nhwcToNchw), counted and timed kernel by
kernel, on the convolutions of the models users run NCHW by default (VGG, ResNet-50, Stable Diffusion's UNet,
R3D-18's 3-D convolutions).

Each shape, bf16 (and fp16 for some): the forward under inference_mode, and a training call under autocast
(forward and backward of input and weight), each timed with CUDA events (median of 15 after 3 warm-ups,
cudnn.benchmark on) in NCHW and in channels-last; one more call of each under torch.profiler lists its kernels:
the transposes' count and time, and every kernel's name and time.

  python3 -m lab.nchw_transposes --out $OUT/nchw_transposes.json
"""

from __future__ import annotations

import argparse
import statistics

import torch
import torch.nn.functional as F

from lab.results import write_rows

TRANSPOSE_MARKS = ("nchwToNhwc", "nhwcToNchw", "transpose", "Transpose")

#: (label, batch, in channels, spatial dims, out channels, kernel, stride, padding)
SHAPES_2D = [
    ("vgg conv1_2", 32, 64, (224, 224), 64, 3, 1, 1),
    ("vgg conv3_2", 32, 256, (56, 56), 256, 3, 1, 1),
    ("vgg conv5_2", 32, 512, (14, 14), 512, 3, 1, 1),
    ("resnet50 1x1 64", 64, 64, (56, 56), 64, 1, 1, 0),
    ("resnet50 3x3 64", 64, 64, (56, 56), 64, 3, 1, 1),
    ("resnet50 1x1 256->64", 64, 256, (56, 56), 64, 1, 1, 0),
    ("resnet50 3x3 128", 64, 128, (28, 28), 128, 3, 1, 1),
    ("resnet50 1x1 1024->256", 64, 1024, (14, 14), 256, 1, 1, 0),
    ("resnet50 3x3 512", 64, 512, (7, 7), 512, 3, 1, 1),
    ("unet 320 b4", 4, 320, (64, 64), 320, 3, 1, 1),
    ("unet 640 b4", 4, 640, (32, 32), 640, 3, 1, 1),
    ("unet 1280 b4", 4, 1280, (16, 16), 1280, 3, 1, 1),
    ("unet 1280x8 b4", 4, 1280, (8, 8), 1280, 3, 1, 1),
    ("unet 320 b16", 16, 320, (64, 64), 320, 3, 1, 1),
    ("unet 640 b16", 16, 640, (32, 32), 640, 3, 1, 1),
    ("unet 1280 b16", 16, 1280, (16, 16), 1280, 3, 1, 1),
    ("unet conv_in b16", 16, 4, (64, 64), 320, 3, 1, 1),
    ("unet 1x1 320->640 b16", 16, 320, (32, 32), 640, 1, 1, 0),
]
SHAPES_3D = [
    ("r3d 64", 32, 64, (16, 56, 56), 64, 3, 1, 1),
    ("r3d 128", 32, 128, (8, 28, 28), 128, 3, 1, 1),
    ("r3d 256", 32, 256, (4, 14, 14), 256, 3, 1, 1),
    ("r3d 512", 32, 512, (2, 7, 7), 512, 3, 1, 1),
]
#: 1-D convolutions (wav2vec2's feature extractor: 512 channels over raw audio, strided) and a strided 1x1 (ResNet's
#: downsample), added after the first run to check the 1x1 rule and 1-D filters
SHAPES_1D = [
    ("wav2vec2 conv1 k3 s2", 8, 512, (3199,), 512, 3, 2, 0),
    ("wav2vec2 conv5 k2 s2", 8, 512, (99,), 512, 2, 2, 0),
    ("conv1d k3 s1 256", 32, 256, (1024,), 256, 3, 1, 1),
]
SHAPES_EXTRA_2D = [
    ("resnet50 1x1 s2 512->1024", 64, 512, (28, 28), 1024, 1, 2, 0),
]
#: NCHW 1x1 convolutions of stride 1 (no transposes: cuDNN runs them as GEMMs on NCHW as it is) across the spatial
#: sizes and channel pairs of ResNet-50's and Inception's stages, added after the first NCHW batch's ResNet-50 came
#: out 0.81x: one of the first call's 1x1 shapes (14x14) ran 4x slower in NCHW than channels-last
SHAPES_1X1 = [
    (f"1x1 {c}->{k} {size}x{size}", 64, c, (size, size), k, 1, 1, 0)
    for size, pairs in ((56, ((64, 256), (256, 64))), (28, ((128, 512), (512, 128))),
                        (14, ((256, 1024), (1024, 256))), (7, ((512, 2048), (2048, 512))),
                        (17, ((768, 192), (192, 768))), (35, ((288, 64), (64, 288))))
    for c, k in pairs
]
FP16_TOO = {"vgg conv3_2", "resnet50 3x3 64", "unet 320 b16", "unet 1280 b16"}


def _timed(fn, reps: int = 15, warmup: int = 3) -> float:
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / 1e3)
    return statistics.median(times)


def _kernels(fn) -> list[tuple[str, float]]:
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return [(e.name, e.device_time_total / 1e6) for e in prof.events()
            if e.device_type == torch.autograd.DeviceType.CUDA]


def measure(label: str, n: int, c: int, dims: tuple[int, ...], k: int, r: int, stride: int, pad: int,
            dtype: torch.dtype) -> list[dict]:
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[len(dims)]
    cl = {1: torch.contiguous_format, 2: torch.channels_last, 3: torch.channels_last_3d}[len(dims)]
    rows = []
    for layout in ("nchw", "channels_last"):
        def make(train: bool, layout: str = layout):
            x = torch.randn(n, c, *dims, device="cuda", dtype=torch.float32 if train else dtype)
            w = torch.randn(k, c, *([r] * len(dims)), device="cuda", dtype=torch.float32 if train else dtype) * 0.05
            if layout == "channels_last":
                x, w = x.to(memory_format=cl), w.to(memory_format=cl)
            return x, w

        with torch.inference_mode():
            x, w = make(False)
            out_spatial = list(conv(x, w, stride=stride, padding=pad).shape[2:])
            fwd = lambda x=x, w=w: conv(x, w, stride=stride, padding=pad)  # noqa: E731
            t_fwd = _timed(fwd)
            k_fwd = _kernels(fwd)
        x, w = make(True)
        x.requires_grad_(True)
        w.requires_grad_(True)

        def train(x: torch.Tensor = x, w: torch.Tensor = w) -> None:
            with torch.autocast("cuda", dtype=dtype):
                y = conv(x, w, stride=stride, padding=pad)
            y.backward(torch.ones_like(y))

        t_train = _timed(train)
        k_train = _kernels(train)
        for mode, t, kern in (("forward", t_fwd, k_fwd), ("training", t_train, k_train)):
            tr = [(name, s) for name, s in kern if any(m in name for m in TRANSPOSE_MARKS)]
            rows.append({"label": label, "dims": len(dims), "out_spatial": out_spatial, "batch": n,
                         "in_channels": c, "spatial": list(dims), "out_channels": k, "kernel": r, "stride": stride,
                         "padding": pad,
                         "dtype": str(dtype).replace("torch.", ""), "layout": layout, "mode": mode, "time_s": t,
                         "transposes": len(tr), "transpose_s": sum(s for _, s in tr),
                         "kernel_s": sum(s for _, s in kern), "kernels": [[name[:160], s] for name, s in kern]})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--second", action="store_true", help="only the shapes added after the first run")
    ap.add_argument("--third", action="store_true", help="only the 1x1 convolutions of stride 1 (SHAPES_1X1)")
    a = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    rows = []
    shapes = SHAPES_1X1 if a.third else SHAPES_1D + SHAPES_EXTRA_2D if a.second else SHAPES_2D + SHAPES_3D
    for shape in shapes:
        for dtype in (torch.bfloat16, torch.float16) if shape[0] in FP16_TOO else (torch.bfloat16,):
            got = measure(*shape, dtype)
            rows += got
            nchw = {r["mode"]: r for r in got if r["layout"] == "nchw"}
            cl = {r["mode"]: r for r in got if r["layout"] == "channels_last"}
            print(shape[0], str(dtype)[6:], " ".join(
                f"{m}: nchw {nchw[m]['time_s'] * 1e3:.3f} ms cl {cl[m]['time_s'] * 1e3:.3f} ms "
                f"transposes {nchw[m]['transposes']} {nchw[m]['transpose_s'] * 1e3:.3f} ms" for m in nchw), flush=True)
    write_rows(a.out, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
