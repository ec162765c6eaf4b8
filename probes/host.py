"""The host CPU through NumPy: copy and triad bandwidth, FP32 and FP64 matrix products."""

from __future__ import annotations

import time
from functools import partial

import numpy as np

from gpuadvisor.core.results import ProbeResult
from probes.base import ProbeContext, measurement
from probes.timing import time_host

NAME = "host"


def run(ctx: ProbeContext) -> ProbeResult:
    t0 = time.perf_counter()
    opts = ctx.options.get(NAME, {})
    vec_bytes = int(opts.get("vec_bytes", (64 << 20) if ctx.quick else (512 << 20)))
    mat_n = int(opts.get("mat_n", 1024 if ctx.quick else 2048))
    reps = int(opts.get("repeats", 3 if ctx.quick else 5))
    n = vec_bytes // 8
    rng = np.random.default_rng(3)
    # random blocks repeated to length: a copy moves the same bytes, and filling 512 MiB three times with
    # fresh random numbers took longer than timing them
    block = 1 << 16
    a, b, c = (np.resize(rng.random(block), n) for _ in range(3))
    s = 0.4
    ms = []
    t = time_host(lambda: np.copyto(c, a), repeats=reps, deadline=ctx.deadline, what="host copy")
    if not np.array_equal(c[:1000], a[:1000]):
        raise RuntimeError("NumPy copy is wrong")
    ms.append(measurement("host.copy", "Host memory copy (NumPy)", t.rate(2 * vec_bytes, 1e9), "GB/s",
                          spread=t.spread, array_mib=vec_bytes / 2**20, bytes_counted="read + write"))

    def triad() -> None:
        np.multiply(c, s, out=a)
        np.add(a, b, out=a)

    t = time_host(triad, repeats=reps, deadline=ctx.deadline, what="host triad")
    if not np.allclose(a[:1000], b[:1000] + s * c[:1000]):
        raise RuntimeError("NumPy triad is wrong")
    ms.append(measurement("host.triad", "Host memory triad (NumPy)", t.rate(3 * vec_bytes, 1e9), "GB/s",
                          spread=t.spread, array_mib=vec_bytes / 2**20,
                          bytes_counted="3 arrays (BabelStream convention; NumPy makes two passes)"))
    for dtype, key in ((np.float32, "host.matmul_fp32"), (np.float64, "host.matmul_fp64")):
        x = rng.standard_normal((mat_n, mat_n)).astype(dtype)
        y = rng.standard_normal((mat_n, mat_n)).astype(dtype)
        # at least 7 repeats after 2 warm-ups: a --quick product lasts milliseconds, and medians of 3 read
        # 2-9x low in some runs on an H100 host (lab/data/h100-probe-time/before-after.txt; cause not established)
        t = time_host(partial(np.matmul, x, y), warmup=2, repeats=max(reps, 7), deadline=ctx.deadline, what=key)
        k = min(mat_n, 64)
        ref = x[:k].astype(np.float64) @ y.astype(np.float64)
        err = np.linalg.norm((x[:k] @ y) - ref) / np.linalg.norm(ref)
        if not err < (1e-4 if dtype == np.float32 else 1e-10):
            raise RuntimeError(f"NumPy {dtype.__name__} matmul is wrong: relative error {err:.1e}")
        ms.append(measurement(key, f"Host {np.dtype(dtype).name} matmul (NumPy)", t.rate(2.0 * mat_n**3, 1e9),
                              "GFLOP/s", spread=t.spread, n=mat_n))
    return ProbeResult(probe=NAME, status="ok", duration_s=time.perf_counter() - t0, measurements=ms,
                       data={"vec_bytes": vec_bytes, "mat_n": mat_n, "repeats": reps})
