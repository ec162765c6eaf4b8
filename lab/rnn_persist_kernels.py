#!/usr/bin/env python3
"""cuDNN's persistent RNN training kernels, kernel by kernel: one nn.LSTM/GRU training call (an fp32 module under
bf16 autocast, as lab/rnn_calls.py and lab/models train) per mode, hidden size, layer count, direction count and
batch, profiled once warm: every CUDA kernel it ran, by name, with its count and summed device time, and the
forward's and the backward's separately. Device time, not wall time: the host's set-up and issuing, which the
call sweeps time too, is left out, so what a persistent kernel spends per step and batch row, and how several
layers and two directions share it (one after another, or beside each other), reads off directly.

  python3 -m lab.rnn_persist_kernels --out $OUT/rnn_persist_kernels.json [--steps 128]
"""

from __future__ import annotations

import argparse
import itertools

import torch

from lab.results import write_rows

MODES = ("LSTM", "GRU")
HIDDENS = (32, 64, 96, 128, 160)
LAYERS = (1, 2, 3)
DIRECTIONS = (1, 2)
BATCHES = (64, 256, 1024, 2048)


def kernels_of(fn) -> dict[str, list[float]]:
    """Kernel name -> [count, summed device seconds] of one call of `fn` under the profiler."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    out: dict[str, list[float]] = {}
    for e in prof.events():
        if e.device_type.name != "CUDA":
            continue
        got = out.setdefault(e.name[:90], [0, 0.0])
        got[0] += 1
        got[1] += e.device_time / 1e6
    return out


def one(mode: str, hidden: int, layers: int, directions: int, batch: int, steps: int) -> dict:
    rnn = getattr(torch.nn, mode)(hidden, hidden, num_layers=layers, bidirectional=directions == 2,
                                  batch_first=True).cuda()
    x = torch.randn(batch, steps, hidden, device="cuda")
    state: dict = {}

    def forward() -> None:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out, _ = rnn(x)
        state["loss"] = out.float().sum()

    def backward() -> None:
        state["loss"].backward()

    for _ in range(3):  # warm: cuDNN's plans, the allocator
        forward()
        backward()
    torch.cuda.synchronize()
    forward()
    torch.cuda.synchronize()
    fwd = kernels_of(forward)  # the forward again under the profiler (its graph replaces the warm one's)
    bwd = kernels_of(backward)
    return {"mode": mode, "hidden": hidden, "layers": layers, "directions": directions, "batch": batch,
            "steps": steps, "forward": fwd, "backward": bwd}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=128)
    a = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    rows = []
    for mode, hidden, layers, directions, batch in itertools.product(MODES, HIDDENS, LAYERS, DIRECTIONS, BATCHES):
        r = one(mode, hidden, layers, directions, batch, a.steps)
        rows.append(r)
        f = sum(v[1] for v in r["forward"].values())
        b = sum(v[1] for v in r["backward"].values())
        print(f"{mode} h{hidden} x{layers} d{directions} b{batch}: forward {f * 1e3:.3f} ms backward {b * 1e3:.3f} ms",
              flush=True)
        write_rows(a.out, rows)  # after every call: a failure keeps what ran
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
