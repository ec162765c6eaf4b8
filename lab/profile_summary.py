"""Where one step's time goes: torch.profiler over one call, summarised small enough to keep in a
validation record (top kernels by GPU time, GPU time per kernel family, host syncs and launches).

Used by lab/validation_measure.py when GPUADVISOR_PROFILE is set and by lab/device/host_eager.py;
the summaries are what the time model's physics is checked against (lab/history/validation-time.md).
"""

from __future__ import annotations

import time

FAMILIES = (  # first match wins; kernel names are lower-cased
    ("attention", ("flash", "fmha", "attention", "sdpa", "efficient_attention")),
    ("nccl", ("nccl",)),
    ("int8-gemm", ("igemm", "int8", "i8i8", "s8", "imma")),
    ("gemm", ("gemm", "cutlass", "xmma", "sm90_", "sm80_", "ampere_", "cublas", "grouped_mm", "gemv", "matmul")),
    ("reduce", ("reduce", "softmax", "norm", "argmax", "cross_entropy", "nll")),
    ("copy", ("copy", "cat", "memcpy", "memset", "index", "gather", "scatter")),
    ("elementwise", ("elementwise", "vectorized", "unrolled", "foreach", "adam")),
)


def family(name: str) -> str:
    n = name.lower()
    for fam, keys in FAMILIES:
        if any(k in n for k in keys):
            return fam
    return "other"


def profile_call(fn, *, top: int = 20) -> dict:
    """Run fn() once under torch.profiler (CPU + CUDA) and summarise it."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    t0 = time.perf_counter()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    wall_ms = (time.perf_counter() - t0) * 1e3
    kernels: dict[str, list[float]] = {}
    syncs = launches = 0
    for ev in prof.events():
        name = ev.name
        dev_us = getattr(ev, "device_time_total", None) or getattr(ev, "cuda_time_total", 0) or 0
        if getattr(ev, "device_type", None) is not None and str(ev.device_type).endswith("CUDA"):
            k = kernels.setdefault(name, [0, 0.0])
            k[0] += 1
            k[1] += ev.self_device_time_total if hasattr(ev, "self_device_time_total") else dev_us
        elif name in ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize",
                      "cudaMemcpyAsync", "cudaMemcpy"):
            syncs += 1
        elif name in ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx"):
            launches += 1
    fams: dict[str, float] = {}
    for name, (_, us) in kernels.items():
        fam = family(name)
        fams[fam] = fams.get(fam, 0.0) + us / 1e3
    gpu_ms = sum(fams.values())
    ranked = sorted(kernels.items(), key=lambda kv: -kv[1][1])[:top]
    return {
        "wall_ms": round(wall_ms, 3),  # under the profiler: host costs are inflated, use for shares only
        "gpu_ms": round(gpu_ms, 3),
        "families_ms": {k: round(v, 3) for k, v in sorted(fams.items(), key=lambda kv: -kv[1])},
        "syncs_or_copies": syncs,
        "launches": launches,
        "top": [{"name": n[:120], "count": c, "ms": round(us / 1e3, 3)} for n, (c, us) in ranked],
    }
