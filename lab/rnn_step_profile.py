#!/usr/bin/env python3
"""Where a recurrent model's training step spends its host time: the out-of-sample cases the recurrent pricer still
misses (lab/model_cases.UNSEEN: the keyword GRU, the bidirectional tagger, the activity GRU), each trained as
lab/measure_models.py trains it, its step timed between CUDA events, then five steps under the profiler: every
aten op's self CPU time and device time, so the cuDNN calls' host part (aten::_cudnn_rnn and its backward) reads
apart from the other ops' dispatch.

  python3 -m lab.rnn_step_profile --out $OUT/rnn_step_profile.json
"""

from __future__ import annotations

import argparse
import statistics

import torch

from gpuadvisor.estimate.trace import zoo
from lab.results import write_rows
from probes import dispatch

CASES = [("lab/models/gru_keyword.py:build", 128), ("lab/models/gru_keyword.py:build", 512),
         ("lab/models/bilstm_ner.py:build", 32), ("lab/models/gru_activity.py:build", 512),
         ("lab/models/gru_review.py:build", 32), ("lab/models/lstm_autoencoder.py:build", 2048)]


def one(spec: str, batch: int) -> dict:
    with torch.device("cuda"):
        built = zoo.build(zoo.parse_ref(spec))
        model = built.module
        args, kw = built.make_batch(batch)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)
    args, kw = zoo.prepare_inputs((args, kw), None, False)

    def step() -> None:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = built.loss(model(*args, **kw))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(5):
        step()
    torch.cuda.synchronize()
    probe = dispatch.measure(torch, repeats=3)["op_s"]
    times = []
    for _ in range(20):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        step()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / 1e3)
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            step()
        torch.cuda.synchronize()
    ops = {}
    for e in prof.key_averages():
        dev = getattr(e, "self_device_time_total", None) or getattr(e, "self_cuda_time_total", 0)
        ops[e.key] = {"cpu_self_us": round(float(e.self_cpu_time_total) / 5, 1), "device_us": round(float(dev) / 5, 1),
                      "count": e.count / 5}
    top = dict(sorted(ops.items(), key=lambda kv: -kv[1]["cpu_self_us"])[:40])
    return {"spec": spec, "batch": batch, "time_s": statistics.median(times), "dispatch_op_s": probe, "ops": top}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    rows = []
    for spec, batch in CASES:
        rows.append(one(spec, batch))
        r = rows[-1]
        rnn = {k: v for k, v in r["ops"].items() if "cudnn_rnn" in k}
        print(f"{spec} b{batch}: {r['time_s'] * 1e3:.2f} ms, probe {r['dispatch_op_s'] * 1e6:.1f} us, rnn {rnn}",
              flush=True)
    write_rows(a.out, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
