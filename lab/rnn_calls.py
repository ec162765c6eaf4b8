#!/usr/bin/env python3
"""cuDNN's fused RNN as PyTorch calls it, timed call by call: one nn.LSTM/GRU call over T time steps and L layers,
forward (inference) and forward + backward (training, bf16 autocast), for T in 1..256, to separate what one call
costs (descriptors, workspace, the host's setup) from what each time step and layer costs (a small GEMM and the
cell's elementwise kernel, launched one after the other). Wall time per call between CUDA events, median of 20,
after 5 warm-ups; the peak memory of one training call too.

  python3 -m lab.rnn_calls --out $OUT/rnn_calls.json [--hidden 128,256,768,1024] [--layers 1,2,3,4]
      [--batches 64,512] [--steps 1,4,16,64,256] [--directions 1,2] [--kernels]

--kernels adds, per mode and hidden size (1 layer, batch 64, 64 steps), what the profiler saw of one inference and
one training call: CUDA kernels launched and their summed device time, to tell a call that launches every time step
from one that runs its steps in a few long kernels.
"""

from __future__ import annotations

import argparse
import functools
import itertools
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


def phases(mode: str, hidden: int, layers: int, bidirectional: bool = False):
    """One call's two phases as the sweep times them: `infer(x)` of a bf16 input, a bf16 module under inference
    mode; `train(x)` of an fp32 input, an fp32 module under bf16 autocast, its output summed in fp32 and
    backpropagated. Returns the training module too (its gradients), then the two."""
    cls = getattr(torch.nn, mode)
    rnn = cls(hidden, hidden, num_layers=layers, bidirectional=bidirectional, batch_first=True).cuda()
    inf = cls(hidden, hidden, num_layers=layers, bidirectional=bidirectional,
              batch_first=True).cuda().to(torch.bfloat16).eval()

    def infer(x: torch.Tensor) -> None:
        with torch.inference_mode():
            inf(x)

    def train(x: torch.Tensor) -> None:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out, _ = rnn(x)
        out.float().sum().backward()

    return rnn, infer, train


def harness_calls(hiddens: tuple[int, ...], batches: tuple[int, ...] = (64, 512)) -> list[dict]:
    """The training harness with a Linear layer where the RNN was (autocast, the forward, `.float().sum()`, the
    backward through autograd's engine): the time a training call spends outside cuDNN's RNN, which a model's own
    graph prices as its other ops and its step's fixed host time."""
    out = []
    for hidden in hiddens:
        lin = torch.nn.Linear(hidden, hidden).cuda()
        for batch in batches:
            for steps in (1, 64):
                x = torch.randn(batch, steps, hidden, device="cuda")

                def train(lin=lin, x=x) -> None:
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        o = lin(x)
                    o.float().sum().backward()

                wall, host = time_call(train)
                out.append({"hidden": hidden, "batch": batch, "steps": steps, "training_s": wall,
                            "training_host_s": host})
                print("harness", out[-1], flush=True)
    return out


#: (mode, hidden, layers, bidirectional) profiled by --kernels besides one layer of each grid hidden size: the
#: layouts the grid lacks (several layers, both directions)
LAYOUTS = (("GRU", 256, 3, True), ("LSTM", 1024, 2, False), ("GRU", 256, 1, True), ("GRU", 256, 3, False))


def kernel_profile(fn, width: int) -> tuple[int, float, list[tuple[str, int]]]:
    """One warm call of `fn` under the profiler: the CUDA kernels it launched, their summed device seconds, and
    their names (the first `width` characters) by how often each ran, most frequent first."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    evs = [e for e in prof.events() if e.device_type.name == "CUDA"]
    names: dict[str, int] = {}
    for e in evs:
        names[e.name[:width]] = names.get(e.name[:width], 0) + 1
    return len(evs), sum(e.device_time for e in evs) / 1e6, sorted(names.items(), key=lambda kv: -kv[1])


def profile_kernels(hiddens: tuple[int, ...], batch: int = 64, steps: int = 64) -> list[dict]:
    """CUDA kernels of one warm inference and one warm training call per layout, their summed device time and the
    host's time to issue the call: a call that launches per time step shows about `steps` x layers x directions x
    kernels per step, and its host time grows with them."""
    layouts = [(mode, h, 1, False) for mode in ("LSTM", "GRU") for h in hiddens] + list(LAYOUTS)
    out = []
    for mode, hidden, layers, bidir in layouts:
        _, infer, train = phases(mode, hidden, layers, bidir)
        x = torch.randn(batch, steps, hidden, device="cuda")
        for phase, fn in (("inference", functools.partial(infer, x.to(torch.bfloat16))),
                          ("training", functools.partial(train, x))):
            wall, host = time_call(fn)
            kernels, device_s, names = kernel_profile(fn, width=70)
            out.append({"mode": mode, "hidden": hidden, "layers": layers, "bidirectional": bidir, "batch": batch,
                        "steps": steps, "phase": phase, "wall_s": wall, "host_s": host, "kernels": kernels,
                        "device_s": device_s, "top": names[:6]})
            print(out[-1], flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--hidden", default="128,1024", help="hidden sizes, comma-separated")
    ap.add_argument("--layers", default="1,2", help="layer counts, comma-separated")
    ap.add_argument("--batches", default="64,512", help="batch sizes, comma-separated")
    ap.add_argument("--steps", default="1,4,16,64,256", help="time steps, comma-separated")
    ap.add_argument("--directions", default="1", help="1 (unidirectional), 2 (bidirectional) or both: 1,2")
    ap.add_argument("--kernels", action="store_true", help="also profile one call per mode and hidden size")
    a = ap.parse_args()
    direction_counts = tuple(int(x) for x in a.directions.split(","))
    batches = tuple(int(x) for x in a.batches.split(","))
    step_counts = tuple(int(x) for x in a.steps.split(","))
    hiddens = tuple(int(x) for x in a.hidden.split(","))
    layer_counts = tuple(int(x) for x in a.layers.split(","))
    torch.backends.cudnn.benchmark = True
    rows = []
    for mode in ("LSTM", "GRU"):
        for hidden in hiddens:
            for layers, directions, batch in itertools.product(layer_counts, direction_counts, batches):
                rnn, infer, train = phases(mode, hidden, layers, bidirectional=directions == 2)
                for steps in step_counts:
                    x = torch.randn(batch, steps, hidden, device="cuda")
                    xb = x.to(torch.bfloat16)
                    t_inf, h_inf = time_call(functools.partial(infer, xb))
                    torch.cuda.reset_peak_memory_stats()
                    base = torch.cuda.memory_allocated()
                    t_train, h_train = time_call(functools.partial(train, x))
                    peak = torch.cuda.max_memory_allocated() - base
                    rows.append({"mode": mode, "hidden": hidden, "layers": layers, "directions": directions,
                                 "batch": batch,
                                 "steps": steps, "inference_s": t_inf, "training_s": t_train,
                                 "inference_host_s": h_inf, "training_host_s": h_train,
                                 "training_peak_bytes": peak})
                    print(f"{mode} h={hidden} L={layers} D={directions} b={batch} T={steps}: inf {t_inf*1e3:.3f} ms "
                          f"(host {h_inf*1e3:.3f}), train {t_train*1e3:.3f} ms (host {h_train*1e3:.3f})",
                          flush=True)
                rnn.zero_grad(set_to_none=True)
    harness = harness_calls(hiddens, batches)
    from lab.results import environment
    from probes import dispatch

    env = environment(dispatch_op_s=dispatch.measure(torch, repeats=3)["op_s"])
    with open(a.out, "w") as f:  # the timings first: a profiler failure below must not lose them
        json.dump({"env": env, "rows": rows, "harness": harness}, f, indent=1)
    if a.kernels:
        kernels = profile_kernels(hiddens)
        with open(a.out, "w") as f:
            json.dump({"env": env, "rows": rows, "harness": harness, "kernels": kernels}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
