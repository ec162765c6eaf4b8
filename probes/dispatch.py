"""Host dispatch through PyTorch eager: what one eager op and one host-GPU synchronization cost on
this host, now. Eager frameworks (Hugging Face generate(), plain PyTorch training loops) are bound by
these two figures whenever the GPU work per op is small, and they differ between hosts of the same
machine kind (a loaded CPU makes every synchronization wait for the scheduler): the eager engine
profile takes them from here (gpuadvisor/estimate/engines.py) instead of assuming a quiet host.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from gpuadvisor.results import ProbeResult
from probes.base import ProbeContext, measurement, wait_for_torch
from probes.timing import ProbeSkipped

NAME = "dispatch"


def measure(torch: Any, *, ops: int = 2000, syncs: int = 300, repeats: int = 5) -> dict[str, float]:
    """Median over `repeats` of: host seconds per eager op (a 16-element in-place add, issued back to
    back: the GPU keeps up, so the host's dispatch is what is timed), seconds a synchronization adds
    (an op followed by torch.cuda.synchronize(), minus the op), and a Python loop iteration."""
    x = torch.zeros(16, device="cuda")
    for _ in range(200):  # warm the dispatcher and the allocator
        x.add_(1.0)
    torch.cuda.synchronize()
    op_s, sync_s, py_s = [], [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(ops):
            x.add_(1.0)
        torch.cuda.synchronize()
        op = (time.perf_counter() - t0) / ops
        t0 = time.perf_counter()
        for _ in range(syncs):
            x.add_(1.0)
            torch.cuda.synchronize()
        sync_s.append(max((time.perf_counter() - t0) / syncs - op, 0.0))
        op_s.append(op)
        t0 = time.perf_counter()
        for _ in range(200_000):
            pass
        py_s.append((time.perf_counter() - t0) / 200_000)
    if float(x[0].item()) != 200.0 + repeats * (ops + syncs):
        raise RuntimeError("dispatch probe: the adds did not all run")
    return {"op_s": statistics.median(op_s), "sync_s": statistics.median(sync_s),
            "python_iter_s": statistics.median(py_s),
            "op_spread": (max(op_s) - min(op_s)) / statistics.median(op_s)}


def run(ctx: ProbeContext) -> ProbeResult:
    t0 = time.perf_counter()
    ctx.gpu()
    wait_for_torch()
    torch = ctx.torch()
    if torch is None:
        raise ProbeSkipped(f"needs PyTorch with CUDA: {ctx.torch_reason}")
    reps = 3 if ctx.quick else 7
    r = measure(torch, repeats=reps)
    ms = [
        measurement("dispatch.op", "PyTorch eager op dispatch (host)", r["op_s"] * 1e6, "us",
                    spread=r["op_spread"], op="16-element in-place add, back to back", repeats=reps),
        measurement("dispatch.sync", "Host-GPU synchronization (host)", r["sync_s"] * 1e6, "us",
                    op="torch.cuda.synchronize() after one small op, the op's dispatch subtracted"),
        measurement("dispatch.python", "Python loop iteration (host)", r["python_iter_s"] * 1e9, "ns"),
    ]
    return ProbeResult(probe=NAME, status="ok", duration_s=time.perf_counter() - t0, measurements=ms,
                       data={"torch": torch.__version__, "repeats": reps})
