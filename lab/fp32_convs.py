#!/usr/bin/env python3
"""FP32 ResNet-50 training as PyTorch runs it by default: convolutions with cuDNN's TF32 allowed
(torch.backends.cudnn.allow_tf32, True by default) and matmuls in full FP32 (torch.backends.cuda.matmul.allow_tf32,
False by default), against the same step with TF32 turned off for convolutions too: what the op pricer's
Rates.conv_rate assumes (FP32 convolutions at the TF32 tensor rate on cards that have one). And BERT-base's FP32
training with matmuls on TF32 and not (`--tf32`).

NCHW fp32 weights and inputs, no autocast, cudnn.benchmark on; the median of 10 steps between CUDA events after 3
warm-ups, and the peak of max_memory_allocated over them.

  python3 -m lab.fp32_convs --out $OUT/fp32_convs.json
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

import torch

from lab.bench_kernels import cuda_device_env
from lab.results import bench_args, write_rows

BATCHES = (64, 128)
WARMUP, STEPS = 3, 10


def timed_training(model: Any, step: Callable[[Any], Any], optimizer: Any) -> tuple[float, int]:
    """Median seconds of one training step (`step(model)` returns the loss) and its peak allocated bytes."""
    times = []
    torch.cuda.reset_peak_memory_stats()
    for i in range(WARMUP + STEPS):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        step(model).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        end.record()
        torch.cuda.synchronize()
        if i >= WARMUP:
            times.append(start.elapsed_time(end) / 1e3)
    peak = torch.cuda.max_memory_allocated()
    torch.cuda.empty_cache()
    return statistics.median(times), peak


def resnet_step_s(batch: int, tf32_convs: bool) -> tuple[float, int]:
    """ResNet-50's FP32 step (SGD with momentum) with cuDNN's TF32 on or off."""
    import torchvision

    torch.backends.cudnn.allow_tf32 = tf32_convs
    model = torchvision.models.resnet50().cuda()
    x = torch.randn(batch, 3, 224, 224, device="cuda")
    y = torch.randint(0, 1000, (batch,), device="cuda")
    loss = torch.nn.CrossEntropyLoss()
    out = timed_training(model, lambda m: loss(m(x), y), torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9))
    torch.backends.cudnn.allow_tf32 = True
    return out


def bert_step_s(batch: int, tf32_matmuls: bool) -> tuple[float, int]:
    """BERT-base with its question-answering head at 384 tokens (the tool's hf:bert-base-uncased-qa, built by its own
    zoo), FP32 with fused AdamW, matmuls on TF32 or not."""
    from gpuadvisor.estimate.trace import zoo

    torch.backends.cuda.matmul.allow_tf32 = tf32_matmuls
    with torch.device("cuda"):
        built = zoo.build(zoo.parse_ref("hf:bert-base-uncased-qa"), seq=384)
        args, kw = built.make_batch(batch)
    model = built.module.cuda().train()
    out = timed_training(model, lambda m: built.loss(m(*args, **kw)),
                         torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True))
    torch.backends.cuda.matmul.allow_tf32 = False
    return out


def main() -> int:
    a = bench_args(__doc__, 0.0)
    torch.backends.cudnn.benchmark = True
    rows = []
    for batch in BATCHES:
        for tf32 in (True, False):
            t, peak = resnet_step_s(batch, tf32)
            rows.append({"model": "torchvision:resnet50", "dtype": "fp32", "layout": "nchw", "batch": batch,
                         "cudnn_allow_tf32": tf32, "matmul_allow_tf32": False, "step_s": t,
                         "images_per_s": batch / t, "peak_bytes": peak})
            print(f"ResNet-50 batch {batch} cudnn.allow_tf32={tf32}: {t * 1e3:.1f} ms", flush=True)
    for tf32 in (False, True):
        t, peak = bert_step_s(32, tf32)
        rows.append({"model": "hf:bert-base-uncased-qa", "dtype": "fp32", "seq": 384, "batch": 32,
                     "cudnn_allow_tf32": True, "matmul_allow_tf32": tf32, "step_s": t, "sequences_per_s": 32 / t,
                     "peak_bytes": peak})
        print(f"BERT-QA batch 32 matmul allow_tf32={tf32}: {t * 1e3:.1f} ms", flush=True)
    write_rows(a.out, rows, gpu=cuda_device_env())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
