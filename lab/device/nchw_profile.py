#!/usr/bin/env python3
"""Where an NCHW step's time goes, against the same step channels-last: one step of each case under
torch.profiler (fp16 autocast, cudnn.benchmark on, timm's benchmark loop: SGD for training), its median time over
timed steps, and the device time per aten op. The cases are the cross-card rows the tool misses in NCHW (timm's
RTX 3090 VGG-16 inference, MobileNet-V3 and EfficientNet-B0 training) and ResNet-50 beside them.

  python3 -m lab.device.nchw_profile --out $OUT/nchw_profile.json
"""

from __future__ import annotations

import argparse
import json

import torch
import torchvision
from torch.profiler import ProfilerActivity, profile

from lab.device.record import save_rows
from lab.device.timm_checks import benchmark_step
from lab.rnn_calls import time_call

#: (torchvision model, mode, batch)
CASES = [("vgg16", "inference", 1024), ("vgg16", "inference", 256), ("mobilenet_v3_large", "training", 512),
         ("efficientnet_b0", "training", 384), ("resnet50", "training", 512), ("resnet50", "inference", 1024)]


def run(name: str, mode: str, batch: int, channels_last: bool) -> dict:
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    model = getattr(torchvision.models, name)().cuda().to(memory_format=fmt)
    step = benchmark_step(model, torch.randn(batch, 3, 224, 224, device="cuda").to(memory_format=fmt), mode)
    time_s = time_call(step, reps=8, warmup=3)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    ops: dict[str, list[float]] = {}
    for e in prof.key_averages():
        dev = getattr(e, "self_device_time_total", 0) or 0
        if dev > 0:
            ops[e.key] = [round(float(dev), 1), int(e.count)]
    top = dict(sorted(ops.items(), key=lambda kv: -kv[1][0])[:40])
    return {"model": name, "mode": mode, "batch": batch, "layout": "NHWC" if channels_last else "NCHW",
            "time_s": time_s, "peak_gib": torch.cuda.max_memory_allocated() / 2**30, "ops_us": top}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    rows = []
    for name, mode, batch in CASES:
        for cl in (False, True):
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
            r = run(name, mode, batch, cl)
            print(json.dumps({k: v for k, v in r.items() if k != "ops_us"}), flush=True)
            rows.append(r)
    save_rows(a.out, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
