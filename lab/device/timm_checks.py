#!/usr/bin/env python3
"""timm's benchmark.py loop, as its published RTX 3090 rows ran it, timed on this GPU: what the cross-card rows
that the tool misses (VGG-16 NCHW inference at batch 1024; MobileNet-V3 and EfficientNet-B0 NCHW training) cost
on a card whose figures the tool was fitted on, and whether VGG-16's batch fits in a 3090's memory.

* inference: fp32 weights, fp16 autocast, torch.no_grad(), NCHW, cudnn.benchmark on (benchmark.py's
  InferenceBenchmarkRunner);
* training: SGD (benchmark.py's default optimizer), cross-entropy on random targets, fp16 autocast, no scaler;
* `--cap-gib G`: torch.cuda.set_per_process_memory_fraction so that PyTorch may hold only G GiB, a 24 GiB card's
  usable memory: does the step run, how fast, what peak (cuDNN's plans that need more workspace than is free are
  skipped: PyTorch tries the next plan on an out-of-memory error).

  python3 -m lab.device.timm_checks --out $OUT/timm.json [--cap-gib 23.4] [--only vgg16]
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Callable

import torch
import torchvision

from lab.device.record import save_rows

#: (model, source, mode, batch): the published rows' models and batches
CASES = [
    ("vgg16", "timm", "inference", 1024),
    ("resnet50", "timm", "inference", 1024),
    ("mobilenetv3_large_100", "timm", "training", 512),
    ("mobilenet_v3_large", "torchvision", "training", 512),
    ("efficientnet_b0", "timm", "training", 384),
    ("resnet50", "timm", "training", 512),
]


def build(name: str, source: str) -> torch.nn.Module:
    if source == "timm":
        import timm

        return timm.create_model(name, pretrained=False)
    return getattr(torchvision.models, name)()


def benchmark_step(model: torch.nn.Module, x: torch.Tensor, mode: str) -> Callable[[], None]:
    """One step of timm's benchmark.py on `x`: an fp16-autocast forward under no_grad (inference), or forward,
    cross-entropy on random targets, backward and an SGD step (training)."""
    if mode == "inference":
        model.eval()

        def step() -> None:
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16):
                model(x)
        return step
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    target = torch.randint(0, 1000, (x.shape[0],), device="cuda")
    loss_fn = torch.nn.CrossEntropyLoss()

    def train() -> None:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = loss_fn(model(x), target)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return train


def run(name: str, source: str, mode: str, batch: int, steps: int) -> dict:
    step = benchmark_step(build(name, source).cuda(), torch.randn(batch, 3, 224, 224, device="cuda"), mode)
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(steps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        step()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / 1e3)
    med = statistics.median(times)
    return {"time_s": med, "spread": (max(times) - min(times)) / med, "images_per_s": batch / med,
            "peak_allocated_gib": torch.cuda.max_memory_allocated() / 2**30,
            "peak_reserved_gib": torch.cuda.max_memory_reserved() / 2**30}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--cap-gib", type=float, default=0.0)
    ap.add_argument("--only", default="")
    ap.add_argument("--steps", type=int, default=10)
    a = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    total = torch.cuda.get_device_properties(0).total_memory
    if a.cap_gib:
        torch.cuda.set_per_process_memory_fraction(a.cap_gib * 2**30 / total)
    rows = []
    for name, source, mode, batch in CASES:
        if a.only and a.only != name:
            continue
        row = {"model": name, "source": source, "mode": mode, "batch": batch, "cap_gib": a.cap_gib or None}
        try:
            row.update(run(name, source, mode, batch, a.steps))
        except torch.OutOfMemoryError as e:
            row["error"] = f"out of memory: {str(e)[:200]}"
        torch.cuda.empty_cache()
        print(json.dumps(row), flush=True)
        rows.append(row)
    import timm

    save_rows(a.out, rows, timm=timm.__version__)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
