#!/usr/bin/env python3
"""Whether a cuDNN-specific host probe explains the recurrent models' host-bound steps better than PyTorch's dispatch
probe: every recurrent case of lab/model_cases.UNSEEN measured as lab/measure_models.py measures it, with beside
each case (before and after) a launched cuDNN call timed on the host: a GRU of hidden 256 at batch 32 under inference
mode, 64 steps and 1 step, each the median of 15 synchronized calls: its host time per step ((t64 - t1) / 63) and per
call (t1). RNN_STEP_FLOOR_S and RNN_LAYER_CALL_S are those figures on the calibration host.

  python3 -m lab.rnn_host_runs --out $OUT/rnn_host-1.json [--timed 50]
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import time

import torch

from lab.measure_models import run_case
from lab.model_cases import RECURRENT_UNSEEN, UNSEEN


def rnn_probe(reps: int = 15) -> dict[str, float]:
    """Host seconds per launched step and per call of a cuDNN GRU (hidden 256, batch 32, bf16 inference)."""
    gru = torch.nn.GRU(256, 256, batch_first=True).cuda().to(torch.bfloat16).eval()

    def call(steps: int) -> float:
        x = torch.randn(32, steps, 256, device="cuda", dtype=torch.bfloat16)
        out = []
        with torch.inference_mode():
            for _ in range(3):
                gru(x)
            torch.cuda.synchronize()
            for _ in range(reps):
                t0 = time.perf_counter()
                gru(x)
                torch.cuda.synchronize()
                out.append(time.perf_counter() - t0)
        return statistics.median(out)

    one, many = call(1), call(64)
    return {"step_s": (many - one) / 63, "call_s": one}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--timed", type=int, default=50)
    a = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    env = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "device": torch.cuda.get_device_name(), "torch": torch.__version__, "cudnn": torch.backends.cudnn.version()}
    results = []
    for case in (c for c in UNSEEN if c["spec"] in RECURRENT_UNSEEN):
        before = rnn_probe()
        r = run_case(case, timed=a.timed)
        after = rnn_probe()
        r.pop("ops", None)
        results.append({**r, "rnn_probe": [before, after]})
        print(f"{case['spec']:38s} {case['mode']:9s} b={case['batch']:<5d} {r['time_s'] * 1e3:8.2f} ms, dispatch "
              f"{sum(r['dispatch_op_s']) / 2 * 1e6:5.1f} us, rnn step {before['step_s'] * 1e6:5.1f} us", flush=True)
        with open(a.out, "w") as f:
            json.dump({"env": env, "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
