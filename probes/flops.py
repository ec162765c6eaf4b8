"""FP32 and FP64 FMA throughput: each thread runs many independent FMA chains (no dependency
stalls), the grid fills every SM. Theoretical = SMs x FMA lanes per SM x 2 x max SM clock."""

from __future__ import annotations

import time
from functools import partial
from typing import Any

import numpy as np

from gpuadvisor.core.results import ProbeResult
from probes.base import ProbeContext, compiled, datasheet_for, measurement
from probes.timing import time_gpu

NAME = "flops"

# FMA lanes per SM by compute capability (CUDA C Programming Guide, "Arithmetic Instructions").
FP32_LANES: dict[str, int] = {
    "3.0": 192, "3.2": 192, "3.5": 192, "3.7": 192,
    "5.0": 128, "5.2": 128, "5.3": 128,
    "6.0": 64, "6.1": 128, "6.2": 128,
    "7.0": 64, "7.2": 64, "7.5": 64,
    "8.0": 64, "8.6": 128, "8.7": 128, "8.9": 128,
    "9.0": 128,
    "10.0": 128, "10.1": 128, "10.3": 128, "11.0": 128, "12.0": 128, "12.1": 128,
}
FP64_LANES: dict[str, int] = {
    "3.0": 8, "3.2": 8, "3.5": 64, "3.7": 64,
    "5.0": 4, "5.2": 4, "5.3": 4,
    "6.0": 32, "6.1": 4, "6.2": 4,
    "7.0": 32, "7.2": 2, "7.5": 2,
    "8.0": 32, "8.6": 2, "8.7": 2, "8.9": 2,
    "9.0": 64,
    "10.0": 64, "11.0": 2, "12.0": 2, "12.1": 2,
}

ACC = 16  # independent accumulators per thread

SOURCE = r"""
#define ACC @ACC@
template <typename T>
__device__ __forceinline__ void body(T* out, T b, T c, int iters) {
    T acc[ACC];
    const T seed = (T)(threadIdx.x & 31) * (T)1e-3;
#pragma unroll
    for (int j = 0; j < ACC; ++j) acc[j] = seed + (T)j * (T)1e-2;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int r = 0; r < 8; ++r) {
#pragma unroll
            for (int j = 0; j < ACC; ++j) acc[j] = fma(acc[j], b, c);
        }
    }
    T s = 0;
#pragma unroll
    for (int j = 0; j < ACC; ++j) s += acc[j];
    out[(long long)blockIdx.x * blockDim.x + threadIdx.x] = s;
}
extern "C" __global__ void fma_f32(float* out, float b, float c, int iters) { body<float>(out, b, c, iters); }
extern "C" __global__ void fma_f64(double* out, double b, double c, int iters) { body<double>(out, b, c, iters); }
""".replace("@ACC@", str(ACC))

INNER = 8  # the unrolled r loop
B, C = 0.999, 0.001  # the chain converges to 1: no overflow, no denormals


def lanes(cc: str | None, table: dict[str, int]) -> int | None:
    return table.get(cc or "")


def expected(dtype: Any, threads: int, iters: int) -> np.ndarray:
    """The kernel's output for each thread, in the same precision (host simulation)."""
    t = np.arange(threads) % 32
    seed = dtype(t) * dtype(1e-3)
    acc = np.stack([seed + dtype(j) * dtype(1e-2) for j in range(ACC)]).astype(dtype)
    b, c = dtype(B), dtype(C)
    for _ in range(iters * INNER):
        acc = (acc * b + c).astype(dtype)
    return acc.sum(axis=0, dtype=dtype)


def prepare(ctx: ProbeContext) -> dict[str, Any]:
    return compiled(ctx.cp, NAME, SOURCE, ("fma_f32", "fma_f64"), ("-std=c++14",))


def run(ctx: ProbeContext) -> ProbeResult:
    cp = ctx.gpu()
    t0 = time.perf_counter()
    props = ctx.props
    sms = int(props.get("multiprocessor_count") or 1)
    cc = props.get("compute_capability")
    clock = props.get("sm_clock_max_mhz")
    threads = 256
    blocks = sms * max(1, int(props.get("max_threads_per_sm") or 2048) // threads) * 4
    kernels = prepare(ctx)
    ms, data = [], {}
    target_ms = 15.0 if ctx.quick else 40.0
    reps = 5 if ctx.quick else 15
    for dtype, np_dtype, kname, table, card_attr in (
        ("fp32", cp.float32, "fma_f32", FP32_LANES, "fp32_tflops"),
        ("fp64", cp.float64, "fma_f64", FP64_LANES, "fp64_tflops"),
    ):
        kernel = kernels[kname]
        # correctness on one small launch against a host simulation
        small_iters = 3
        out = cp.empty(threads * 2, dtype=np_dtype)
        cp.cuda.runtime.memset(out.data.ptr, 0xFF, out.nbytes)  # poison: NaN where unwritten
        kernel((2,), (threads,), (out, np_dtype(B), np_dtype(C), np.int32(small_iters)))
        got = cp.asnumpy(out)
        want = expected(np.dtype(np_dtype).type, threads * 2, small_iters)
        if not np.all(np.isfinite(got)) or not np.allclose(got, want, rtol=1e-5, atol=0):
            raise RuntimeError(f"{kname} output does not match the host simulation")
        out = cp.empty(blocks * threads, dtype=np_dtype)
        # calibrate the iteration count to about target_ms per launch
        iters = 64
        while True:
            t = time_gpu(cp, partial(kernel, (blocks,), (threads,), (out, np_dtype(B), np_dtype(C), np.int32(iters))),
                         warmup=1, repeats=1, deadline=ctx.deadline, what=dtype, min_repeats=1)
            if t.median_ms >= target_ms / 8 or iters >= 1 << 22:
                break
            iters *= 4
        iters = max(1, int(iters * target_ms / max(t.median_ms, 1e-3)))
        t = time_gpu(cp, partial(kernel, (blocks,), (threads,), (out, np_dtype(B), np_dtype(C), np.int32(iters))),
                     warmup=1, repeats=reps, deadline=ctx.deadline, what=dtype)
        flops = 2.0 * ACC * INNER * iters * blocks * threads
        tflops = t.rate(flops, 1e12)
        n_lanes = lanes(cc, table)
        theo = sms * n_lanes * 2 * clock * 1e6 / 1e12 if (n_lanes and clock) else None
        how = f"{sms} SMs x {n_lanes} lanes x 2 x {clock} MHz"
        # the target is theoretical; the catalog figure is kept in details
        ds = datasheet_for(None, theo, how) if theo else datasheet_for(getattr(ctx.card, card_attr, None), None, "")
        ms.append(measurement(
            f"{dtype}.fma", f"{dtype.upper()} FMA (kernel)", tflops, "TFLOP/s", spread=t.spread, datasheet=ds,
            catalog_tflops=getattr(ctx.card, card_attr, None), theoretical_tflops=theo, lanes_per_sm=n_lanes,
            blocks=blocks, threads=threads, iters=iters, accumulators=ACC,
        ))
        data[dtype] = {"median_ms": t.median_ms, "iters": iters}
        ctx.deadline.check(dtype)
    ctx.free_pools()
    return ProbeResult(probe=NAME, status="ok", duration_s=time.perf_counter() - t0, measurements=ms, data=data)
