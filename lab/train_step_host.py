#!/usr/bin/env python3
"""The host's time for the parts of an eager training step that are not the model's ops, against the number of
parameter tensors: the forward under bf16 autocast with its loss, loss.backward(), fused AdamW's step() and
zero_grad(set_to_none=True), each timed on the host (perf_counter around the call, the GPU idle before the step),
for a stack of N bias-free Linear(64, 64) layers (N parameter tensors, N matmuls), N in 1..512; median of 50 steps
after 10 warm-ups. The optimizer's and zero_grad's slopes are their host time per parameter tensor; the
intercepts are the step's fixed work. The host's dispatch probe (probes/dispatch.py) is recorded before and after.

  python3 -m lab.train_step_host --out $OUT/train_step_host.json
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from lab.results import write_rows

SIZES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)


def phases_s(n: int, steps: int = 50, warmup: int = 10) -> dict[str, float]:
    model = torch.nn.Sequential(*[torch.nn.Linear(64, 64, bias=False) for _ in range(n)]).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)
    x = torch.randn(32, 64, device="cuda")
    got: dict[str, list[float]] = {"forward": [], "backward": [], "optimizer": [], "zero_grad": [], "step": []}
    for i in range(warmup + steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(x).float().sum()
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        opt.step()
        t3 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        t4 = time.perf_counter()
        if i >= warmup:
            for name, s in (("forward", t1 - t0), ("backward", t2 - t1), ("optimizer", t3 - t2),
                            ("zero_grad", t4 - t3), ("step", t4 - t0)):
                got[name].append(s)
    return {name: statistics.median(v) for name, v in got.items()}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    from probes import dispatch

    probe_before = dispatch.measure(torch, repeats=3)["op_s"]
    rows = []
    for n in SIZES:
        rows.append({"tensors": n, **phases_s(n)})
        print({k: round(v * 1e6, 1) if k != "tensors" else v for k, v in rows[-1].items()}, flush=True)
    probe_after = dispatch.measure(torch, repeats=3)["op_s"]
    write_rows(a.out, rows, dispatch_op_s=[probe_before, probe_after])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
