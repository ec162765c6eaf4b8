#!/usr/bin/env python3
"""FP32 ResNet-50 training as PyTorch runs it by default: convolutions with cuDNN's TF32 allowed
(torch.backends.cudnn.allow_tf32, True by default) and matmuls in full FP32 (torch.backends.cuda.matmul.allow_tf32,
False by default), against the same step with TF32 turned off for convolutions too: what the op pricer's
Rates.conv_rate assumes (FP32 convolutions at the TF32 tensor rate on cards that have one). And BERT-base's FP32
training with matmuls on TF32 and not (`--tf32`).

NCHW fp32 weights and inputs, no autocast, SGD with momentum, cudnn.benchmark on; the median of 10 steps between
CUDA events after 3 warm-ups, and the peak of max_memory_allocated over them.

  python3 -m lab.fp32_convs --out $OUT/fp32_convs.json
"""

from __future__ import annotations

import argparse
import json
import statistics

import torch

from lab.bench_kernels import cuda_device_env

BATCHES = (64, 128)


def step_s(batch: int, tf32_convs: bool, steps: int = 10, warmup: int = 3) -> tuple[float, int]:
    """Median seconds of one training step and its peak allocated bytes."""
    import torchvision

    torch.backends.cudnn.allow_tf32 = tf32_convs
    model = torchvision.models.resnet50().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(batch, 3, 224, 224, device="cuda")
    y = torch.randint(0, 1000, (batch,), device="cuda")
    loss_fn = torch.nn.CrossEntropyLoss()
    times = []
    torch.cuda.reset_peak_memory_stats()
    for i in range(warmup + steps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        end.record()
        torch.cuda.synchronize()
        if i >= warmup:
            times.append(start.elapsed_time(end) / 1e3)
    peak = torch.cuda.max_memory_allocated()
    del model, opt, x, y
    torch.cuda.empty_cache()
    return statistics.median(times), peak


def bert_step_s(batch: int, tf32_matmuls: bool, steps: int = 10, warmup: int = 3) -> tuple[float, int]:
    """Median seconds of one FP32 training step of BERT-base with its question-answering head at 384 tokens (the
    tool's hf:bert-base-uncased-qa, built by its own zoo), matmuls on TF32 or not, and its peak allocated bytes."""
    from gpuadvisor.estimate.trace import zoo

    torch.backends.cuda.matmul.allow_tf32 = tf32_matmuls
    with torch.device("cuda"):
        built = zoo.build(zoo.parse_ref("hf:bert-base-uncased-qa"), seq=384)
        args, kw = built.make_batch(batch)
    model = built.module.cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)
    times = []
    torch.cuda.reset_peak_memory_stats()
    for i in range(warmup + steps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        built.loss(model(*args, **kw)).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        end.record()
        torch.cuda.synchronize()
        if i >= warmup:
            times.append(start.elapsed_time(end) / 1e3)
    peak = torch.cuda.max_memory_allocated()
    del model, opt
    torch.cuda.empty_cache()
    torch.backends.cuda.matmul.allow_tf32 = False
    return statistics.median(times), peak


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    rows = []
    for batch in BATCHES:
        for tf32 in (True, False):
            t, peak = step_s(batch, tf32)
            rows.append({"model": "torchvision:resnet50", "mode": "training", "dtype": "fp32", "layout": "nchw",
                         "batch": batch, "cudnn_allow_tf32": tf32,
                         "matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
                         "step_s": t, "images_per_s": batch / t, "peak_bytes": peak})
            print(f"batch {batch} cudnn.allow_tf32={tf32}: {t * 1e3:.1f} ms, {batch / t:.0f} images/s", flush=True)
    for tf32 in (False, True):
        t, peak = bert_step_s(32, tf32)
        rows.append({"model": "hf:bert-base-uncased-qa", "mode": "training", "dtype": "fp32", "seq": 384, "batch": 32,
                     "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32, "matmul_allow_tf32": tf32,
                     "step_s": t, "sequences_per_s": 32 / t, "peak_bytes": peak})
        print(f"BERT-QA batch 32 matmul allow_tf32={tf32}: {t * 1e3:.1f} ms", flush=True)
    with open(a.out, "w") as f:
        json.dump({"env": cuda_device_env(), "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
