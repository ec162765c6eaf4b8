#!/usr/bin/env python3
"""The host's time to issue one eager op, by kind of op: does a cuDNN convolution cost the host what an
elementwise op or a cuBLAS matmul does? Tiny tensors (the GPU keeps up, so the host's issuing is what is timed).

Inference (bf16 weights, torch.inference_mode()): one functional call per kind, issued back to back; host seconds a
call over 300 calls, and the time the synchronization after them waited (the GPU's backlog: near zero where the host
is the bound, as it must be for the figure to be the host's).

Training (fp32 weights under bf16 autocast, as lab/measure_models.py runs models): a stack of 16 modules of one kind;
the forward's host time and loss.backward()'s, per module (the GPU idle before each step), median of 5 steps.

The hosts' op time drifts by a third within a minute (the dispatch probe read 8.1-12.5 us in one call), so the kinds
are timed in ROUNDS interleaved rounds, each round every kind once; a kind's figure is read against the plain kind
timed in the same round (`add` for inference, the `scale` stack for training) and the median over rounds kept.

For each kind: the aten ops the call dispatches (what the tracer records: TorchDispatchMode), and the CUDA kernels it
launches (torch.profiler), so that a kind's time can be set against the op counts the estimator reads. The host's
dispatch probe (probes/dispatch.py) is recorded before and after: the unit of the estimator's host constants.

  python3 -m lab.host_op_kinds --out $OUT/host_op_kinds.json
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

from lab.results import write_rows

DEV = "cuda"
BF16 = torch.bfloat16
LAYERS = 16
ROUNDS = 15


class _Count(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.ops: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        self.ops.append(str(func.overloadpacket.__name__))
        return func(*args, **(kwargs or {}))


def _kernels(fn: Callable[[], object]) -> int:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)


def _aten_ops(fn: Callable[[], object]) -> list[str]:
    with _Count() as c:
        fn()
    return c.ops


def inference_kinds() -> dict[str, Callable[[], object]]:
    x = torch.randn(2, 64, device=DEV, dtype=BF16)
    y = torch.randn(2, 64, device=DEV, dtype=BF16)
    w = torch.randn(64, 64, device=DEV, dtype=BF16)
    b = torch.randn(64, device=DEV, dtype=BF16)
    a3 = torch.randn(4, 16, 32, device=DEV, dtype=BF16)
    m3 = torch.randn(4, 32, 16, device=DEV, dtype=BF16)
    img = torch.randn(2, 16, 8, 8, device=DEV, dtype=BF16).to(memory_format=torch.channels_last)
    img_nchw = torch.randn(2, 16, 8, 8, device=DEV, dtype=BF16)
    k3 = torch.randn(16, 16, 3, 3, device=DEV, dtype=BF16).to(memory_format=torch.channels_last)
    k1 = torch.randn(16, 16, 1, 1, device=DEV, dtype=BF16).to(memory_format=torch.channels_last)
    kdw = torch.randn(16, 1, 3, 3, device=DEV, dtype=BF16).to(memory_format=torch.channels_last)
    vol = torch.randn(2, 16, 4, 8, 8, device=DEV, dtype=BF16).to(memory_format=torch.channels_last_3d)
    k3d = torch.randn(16, 16, 3, 3, 3, device=DEV, dtype=BF16).to(memory_format=torch.channels_last_3d)
    kt = torch.randn(16, 16, 4, 4, device=DEV, dtype=BF16).to(memory_format=torch.channels_last)
    mean = torch.zeros(16, device=DEV, dtype=BF16)
    var = torch.ones(16, device=DEV, dtype=BF16)
    q = torch.randn(2, 4, 16, 32, device=DEV, dtype=BF16)
    table = torch.randn(100, 64, device=DEV, dtype=BF16)
    ids = torch.randint(0, 100, (2, 8), device=DEV)
    return {
        "add": lambda: x + y,
        "gelu": lambda: F.gelu(x),
        "linear": lambda: F.linear(x, w, b),
        "bmm": lambda: torch.bmm(a3, m3),
        "layer_norm": lambda: F.layer_norm(x, (64,)),
        "softmax": lambda: torch.softmax(x, -1),
        "sum": lambda: x.sum(-1),
        "batch_norm": lambda: F.batch_norm(img, mean, var),
        "max_pool2d": lambda: F.max_pool2d(img, 2),
        "sdpa": lambda: F.scaled_dot_product_attention(q, q, q),
        "embedding": lambda: F.embedding(ids, table),
        "conv3x3": lambda: F.conv2d(img, k3, padding=1),
        "conv1x1": lambda: F.conv2d(img, k1),
        "conv3x3_nchw": lambda: F.conv2d(img_nchw, k3.contiguous(), padding=1),
        "conv_depthwise": lambda: F.conv2d(img, kdw, padding=1, groups=16),
        "conv3d": lambda: F.conv3d(vol, k3d, padding=1),
        "conv_transpose": lambda: F.conv_transpose2d(img, kt, stride=2, padding=1),
        "view": lambda: x.view(2, 8, 8),
        "permute": lambda: x.view(2, 8, 8).permute(0, 2, 1),
    }


def time_calls(fn: Callable[[], object], calls: int = 300) -> tuple[float, float]:
    """(host seconds a call, seconds the synchronization after the calls waited)."""
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / calls, time.perf_counter() - t1


def training_stacks() -> dict[str, tuple[torch.nn.Module, torch.Tensor]]:
    def stack(make: Callable[[], torch.nn.Module]) -> torch.nn.Module:
        return torch.nn.Sequential(*[make() for _ in range(LAYERS)]).to(DEV)

    img = torch.randn(2, 16, 8, 8, device=DEV).to(memory_format=torch.channels_last)
    vec = torch.randn(2, 64, device=DEV)

    class Scale(torch.nn.Module):  # one elementwise op on a parameter: the stack's plain kernel op
        def __init__(self) -> None:
            super().__init__()
            self.w = torch.nn.Parameter(torch.ones(64))

        def forward(self, t: torch.Tensor) -> torch.Tensor:
            return t * self.w

    out = {
        "scale": (stack(Scale), vec),
        "linear": (stack(lambda: torch.nn.Linear(64, 64, bias=False)), vec),
        "layer_norm": (stack(lambda: torch.nn.LayerNorm(64)), vec),
        "gelu": (stack(torch.nn.GELU), vec),
        "conv3x3": (stack(lambda: torch.nn.Conv2d(16, 16, 3, padding=1, bias=False)), img),
        "conv1x1": (stack(lambda: torch.nn.Conv2d(16, 16, 1, bias=False)), img),
        "batch_norm": (stack(lambda: torch.nn.BatchNorm2d(16)), img),
    }
    for name in ("conv3x3", "conv1x1", "batch_norm"):
        out[name][0].to(memory_format=torch.channels_last)
    return out


def time_training(model: torch.nn.Module, x: torch.Tensor, steps: int = 5, warmup: int = 3) -> dict[str, float]:
    x = x.clone().requires_grad_(True)
    fwd, bwd = [], []
    for i in range(warmup + steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.autocast(DEV, dtype=BF16):
            loss = model(x).float().sum()
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        model.zero_grad(set_to_none=True)
        x.grad = None
        if i >= warmup:
            fwd.append(t1 - t0)
            bwd.append(t2 - t1)
    return {"forward_s": statistics.median(fwd), "backward_s": statistics.median(bwd)}


def training_counts(model: torch.nn.Module, x: torch.Tensor) -> dict[str, int]:
    x = x.clone().requires_grad_(True)
    with _Count() as c, torch.autocast(DEV, dtype=BF16):
        loss = model(x).float().sum()
    fwd_ops = len(c.ops)
    with _Count() as c:
        loss.backward()
    return {"forward_aten_ops": fwd_ops, "backward_aten_ops": len(c.ops)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    from probes import dispatch

    torch.backends.cudnn.benchmark = True
    probe_before = dispatch.measure(torch, repeats=3)["op_s"]
    kinds = inference_kinds()
    stacks = training_stacks()
    inference: dict[str, list[tuple[float, float]]] = {k: [] for k in kinds}
    training: dict[str, list[dict[str, float]]] = {k: [] for k in stacks}
    for _ in range(ROUNDS):
        with torch.inference_mode():
            for name, fn in kinds.items():
                inference[name].append(time_calls(fn))
        for name, (model, x) in stacks.items():
            training[name].append(time_training(model, x))
    rows = []
    with torch.inference_mode():
        for name, fn in kinds.items():
            got = inference[name]
            ratio = statistics.median(h / base[0] for (h, _), base in zip(got, inference["add"], strict=True))
            rows.append({"mode": "inference", "kind": name, "host_s": statistics.median(h for h, _ in got),
                         "per_add": ratio, "sync_wait_s": statistics.median(w for _, w in got),
                         "aten_ops": _aten_ops(fn), "kernels": _kernels(fn)})
            print(name, round(rows[-1]["host_s"] * 1e6, 2), "us", round(ratio, 2), "x add, waited",
                  round(rows[-1]["sync_wait_s"] * 1e6, 1), "us", rows[-1]["aten_ops"], rows[-1]["kernels"], flush=True)
    for name, (model, x) in stacks.items():
        got = training[name]
        row: dict[str, object] = {"mode": "training", "kind": name, "layers": LAYERS, **training_counts(model, x)}
        for phase in ("forward_s", "backward_s"):
            row[phase] = statistics.median(g[phase] for g in got)
            row[phase.replace("_s", "_per_scale")] = statistics.median(
                g[phase] / base[phase] for g, base in zip(got, training["scale"], strict=True))
        rows.append(row)
        print(name, {k: (round(v * 1e6 / LAYERS, 2) if k.endswith("_s") else v) for k, v in row.items()
                     if k not in ("mode", "kind")}, flush=True)
    probe_after = dispatch.measure(torch, repeats=3)["op_s"]
    print("probe", probe_before, probe_after)
    write_rows(a.out, rows, dispatch_op_s=[probe_before, probe_after], rounds=ROUNDS)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
