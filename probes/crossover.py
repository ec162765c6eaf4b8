"""When does the GPU win? Vector add and N x N matmul on the CPU (NumPy) and the GPU (CuPy) over
a size sweep, the GPU with and without host<->device transfers. The crossover is the smallest
size from which the GPU is faster at every larger size of the sweep."""

from __future__ import annotations

import time
from functools import partial
from typing import Any

import numpy as np

from gpuadvisor.core.results import ProbeResult
from probes.base import ProbeContext, measurement
from probes.timing import time_gpu, time_host

NAME = "crossover"


def _on_gpu(cp: Any, op: Any, a: Any, b: Any) -> Any:
    """op on the GPU with both copies: host arrays in, a host array out."""
    return op(cp.asarray(a), cp.asarray(b)).get()


def vector_sizes(quick: bool) -> list[int]:
    return [1 << p for p in range(10, 25 if quick else 27, 2)]


def matmul_sizes(quick: bool) -> list[int]:
    return [64, 128, 256, 512, 1024, 2048] if quick else [32, 64, 128, 256, 512, 1024, 2048, 4096]


def repeats_at(size: int, big: int, reps: int) -> int:
    """Host timings at the large end of the sweep (tens to hundreds of ms each, far from any crossover)
    need fewer repeats: 3 from `big` up."""
    return min(reps, 3) if size >= big else reps


def crossover(rows: list[dict[str, Any]], gpu_key: str) -> int | None:
    """Smallest size from which the GPU is faster at that size and every larger one."""
    found = None
    for row in reversed(rows):
        g = row.get(gpu_key)
        if g is None or g >= row["cpu_ms"]:
            break
        found = row["size"]
    return found


def run(ctx: ProbeContext) -> ProbeResult:
    t0 = time.perf_counter()
    cp = ctx.cp
    opts = ctx.options.get(NAME, {})
    vsizes = opts.get("vector_sizes") or vector_sizes(ctx.quick)
    msizes = opts.get("matmul_sizes") or matmul_sizes(ctx.quick)
    reps = int(opts.get("repeats", 3 if ctx.quick else 5))
    rng = np.random.default_rng(5)
    sync = (lambda: cp.cuda.get_current_stream().synchronize()) if cp is not None else None
    vec_rows, mat_rows = [], []
    for n in vsizes:
        a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
        c = np.empty_like(a)
        row: dict[str, Any] = {"size": n}
        row["cpu_ms"] = time_host(partial(np.add, a, b, out=c), repeats=repeats_at(n, 1 << 24, max(reps, 5)),
                                  deadline=ctx.deadline, what="CPU vector add").median_ms
        if cp is not None:
            da, db = cp.asarray(a), cp.asarray(b)
            dc = cp.empty_like(da)
            row["gpu_ms"] = time_gpu(cp, partial(cp.add, da, db, out=dc), warmup=2,
                                     repeats=max(reps, 5), deadline=ctx.deadline, what="GPU vector add").median_ms
            if n == vsizes[0] and not np.array_equal(cp.asnumpy(dc), a + b):
                raise RuntimeError("GPU vector add is wrong")
            row["gpu_transfer_ms"] = time_host(partial(_on_gpu, cp, cp.add, a, b),
                                               repeats=repeats_at(n, 1 << 24, reps), deadline=ctx.deadline,
                                               what="GPU vector add + copies",
                                               sync=sync).median_ms
        vec_rows.append(row)
        ctx.deadline.check("vector add sweep")
    for n in msizes:
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        row = {"size": n}
        row["cpu_ms"] = time_host(partial(np.matmul, a, b), repeats=repeats_at(n, 2048, reps), deadline=ctx.deadline,
                                  what="CPU matmul").median_ms
        if cp is not None:
            da, db = cp.asarray(a), cp.asarray(b)
            row["gpu_ms"] = time_gpu(cp, partial(cp.matmul, da, db), warmup=2, repeats=max(reps, 5),
                                     deadline=ctx.deadline, what="GPU matmul").median_ms
            if n == msizes[0]:
                err = np.linalg.norm(cp.asnumpy(da @ db) - a.astype(np.float64) @ b) / np.linalg.norm(
                    a.astype(np.float64) @ b)
                if not err < 1e-3:
                    raise RuntimeError(f"GPU matmul is wrong: relative error {err:.1e}")
            row["gpu_transfer_ms"] = time_host(partial(_on_gpu, cp, cp.matmul, a, b),
                                               repeats=repeats_at(n, 2048, reps), deadline=ctx.deadline,
                                               what="GPU matmul + copies",
                                               sync=sync).median_ms
        mat_rows.append(row)
        ctx.deadline.check("matmul sweep")
    ms = []
    if cp is not None:
        for key, label, rows, unit in (
            ("crossover.vector_add", "Vector add crossover", vec_rows, "elements"),
            ("crossover.matmul", "Matmul crossover", mat_rows, "N"),
        ):
            for gkey, suffix, what in (("gpu_ms", "kernel", "GPU time without transfers"),
                                       ("gpu_transfer_ms", "with_transfers", "GPU time with transfers")):
                x = crossover(rows, gkey)
                note = None if x is not None else f"the GPU did not win up to {rows[-1]['size']}"
                ms.append(measurement(f"{key}.{suffix}", f"{label} ({what.split(' time ')[1]})", x, unit,
                                      compared=f"NumPy on the CPU vs {what}", note=note,
                                      sweep_min=rows[0]["size"], sweep_max=rows[-1]["size"]))
        if cp is not None:
            ctx.free_pools()
    return ProbeResult(probe=NAME, status="ok", duration_s=time.perf_counter() - t0, measurements=ms,
                       reason=None if cp is not None else "no usable GPU: CPU side only",
                       data={"vector_add": vec_rows, "matmul": mat_rows, "gpu": cp is not None})
