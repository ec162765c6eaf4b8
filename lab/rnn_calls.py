#!/usr/bin/env python3
"""cuDNN's fused RNN as PyTorch calls it, timed call by call: one nn.LSTM/GRU call over T time steps and L layers,
forward (inference) and forward + backward (training, bf16 autocast), for T in 1..256, to separate what one call
costs (descriptors, workspace, the host's setup) from what each time step and layer costs (a small GEMM and the
cell's elementwise kernel, launched one after the other). Wall time per call between CUDA events, median of 20,
after 5 warm-ups; the peak memory of one training call too.

  python3 -m lab.rnn_calls --out $OUT/rnn_calls.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch


def time_call(fn, reps: int = 20, warmup: int = 5) -> tuple[float, float]:
    """Median seconds of `fn` over `reps` calls between CUDA events, after `warmup` untimed ones, and the median
    seconds the host took to issue each (from the call to its return, the GPU idle before it)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    out, host = [], []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        t0 = time.perf_counter()
        fn()
        host.append(time.perf_counter() - t0)
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b) / 1e3)
    return statistics.median(out), statistics.median(host)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    rows = []
    for mode in ("LSTM", "GRU"):
        for hidden in (128, 1024):
            for layers in (1, 2):
                for batch in (64, 512):
                    cls = getattr(torch.nn, mode)
                    rnn = cls(hidden, hidden, num_layers=layers, batch_first=True).cuda()
                    inf = cls(hidden, hidden, num_layers=layers, batch_first=True).cuda().to(torch.bfloat16).eval()
                    for steps in (1, 4, 16, 64, 256):
                        x = torch.randn(batch, steps, hidden, device="cuda")
                        xb = x.to(torch.bfloat16)

                        def infer(inf=inf, xb=xb) -> None:
                            with torch.inference_mode():
                                inf(xb)

                        def train(rnn=rnn, x=x) -> None:
                            with torch.autocast("cuda", dtype=torch.bfloat16):
                                out, _ = rnn(x.requires_grad_(False))
                            out.float().sum().backward()

                        t_inf, h_inf = time_call(infer)
                        torch.cuda.reset_peak_memory_stats()
                        base = torch.cuda.memory_allocated()
                        t_train, h_train = time_call(train)
                        peak = torch.cuda.max_memory_allocated() - base
                        rows.append({"mode": mode, "hidden": hidden, "layers": layers, "batch": batch,
                                     "steps": steps, "inference_s": t_inf, "training_s": t_train,
                                     "inference_host_s": h_inf, "training_host_s": h_train,
                                     "training_peak_bytes": peak})
                        print(f"{mode} h={hidden} L={layers} b={batch} T={steps}: inf {t_inf*1e3:.3f} ms "
                              f"(host {h_inf*1e3:.3f}), train {t_train*1e3:.3f} ms (host {h_train*1e3:.3f})",
                              flush=True)
                    rnn.zero_grad(set_to_none=True)
    import datetime
    import subprocess

    driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                            capture_output=True, text=True).stdout.strip().splitlines()[:1]
    env = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
           "driver": driver[0] if driver else None,
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    with open(a.out, "w") as f:
        json.dump({"env": env, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
