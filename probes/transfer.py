"""Host <-> device copies: pinned and pageable host memory, H2D and D2H, over a size sweep.

The datasheet figure is the PCIe link's theoretical rate from NVML (max generation x width);
the same-run reference is PyTorch copying a pinned tensor with non_blocking=True (else a plain
cudaMemcpy of pinned memory)."""

from __future__ import annotations

import time
from functools import partial
from operator import itemgetter
from typing import Any

import numpy as np

from gpuadvisor.core.results import ProbeResult
from probes.base import ProbeContext, measurement
from probes.timing import retry_smaller, time_gpu, time_host, time_torch

NAME = "transfer"
H2D, D2H = 1, 2  # cudaMemcpyKind


def sizes(quick: bool, free_bytes: int) -> list[int]:
    # --full stops at 256 MiB: on an H100 host 1 GiB moved no faster (pinned 54.3-55.1 GB/s against 53.8-55.1 at
    # 256 MiB; lab/data/h100-probe-time/probe-time.tgz) and its allocations and random fill took seconds
    top = 64 << 20 if quick else 256 << 20
    top = min(top, max(16 << 20, free_bytes // 4))
    out, s = [], 1 << 20
    step = 8 if quick else 4
    while s <= top:
        out.append(s)
        s *= step
    if out[-1] != top:
        out.append(top)
    return out


def run(ctx: ProbeContext) -> ProbeResult:
    cp = ctx.gpu()
    t0 = time.perf_counter()
    props = ctx.props
    free = int(props.get("memory_free_bytes") or cp.cuda.runtime.memGetInfo()[0])
    sweep = sizes(ctx.quick, free)
    top = sweep[-1]
    stream = cp.cuda.get_current_stream()
    reps = 5 if ctx.quick else 10

    def alloc(nbytes: int) -> tuple[Any, Any, Any]:
        dev = cp.empty(nbytes, dtype=cp.uint8)
        mem = cp.cuda.alloc_pinned_memory(nbytes)
        pinned = np.frombuffer(mem, dtype=np.uint8, count=nbytes)
        return dev, mem, pinned

    (dev, _pinned_mem, pinned), top = retry_smaller(alloc, top, min_bytes=16 << 20, free_pools=ctx.free_pools)
    sweep = [s for s in sweep if s <= top]
    pageable = np.frombuffer(bytearray(np.random.default_rng(7).bytes(top)), dtype=np.uint8)
    pinned[:] = pageable
    # correctness once: round trip of random bytes
    cp.cuda.runtime.memcpy(dev.data.ptr, pinned.ctypes.data, top, H2D)
    back = np.empty(1 << 20, dtype=np.uint8)
    cp.cuda.runtime.memcpy(back.ctypes.data, dev.data.ptr + top - (1 << 20), 1 << 20, D2H)
    if not np.array_equal(back, pageable[-(1 << 20):]):
        raise RuntimeError("host-to-device copy returned different bytes")

    rows = []
    for size in sweep:
        row: dict[str, Any] = {"bytes": size}
        for kind, name in ((H2D, "h2d"), (D2H, "d2h")):
            for host, hname in ((pinned, "pinned"), (pageable, "pageable")):
                if kind == H2D:
                    dst, src = dev.data.ptr, host.ctypes.data
                else:
                    dst, src = host.ctypes.data, dev.data.ptr
                if hname == "pinned":
                    t = time_gpu(cp, partial(cp.cuda.runtime.memcpyAsync, dst, src, size, kind, stream.ptr),
                                 warmup=1, repeats=reps, deadline=ctx.deadline,
                        what=f"{name} {hname}")
                else:  # pageable copies stage through the driver: time on the host clock
                    t = time_host(partial(cp.cuda.runtime.memcpy, dst, src, size, kind),
                                  warmup=1, repeats=max(3, reps // 2), deadline=ctx.deadline,
                                  what=f"{name} {hname}")
                row[f"{name}_{hname}_gbs"] = t.rate(size, 1e9)
                row[f"{name}_{hname}_spread"] = t.spread
        rows.append(row)
        ctx.deadline.check("size sweep")

    # reference: PyTorch pinned tensor -> cuda, non_blocking, at the largest size
    ref_h2d = ref_d2h = None
    ref_labels = {"h2d": "PyTorch pinned .to('cuda', non_blocking=True)",
                  "d2h": "PyTorch .copy_ to pinned, non_blocking=True"}
    torch = None if ctx.quick else ctx.torch()  # --quick: no PyTorch import (seconds); cudaMemcpy stands in
    ref_note = "PyTorch reference in --full only" if ctx.quick else ctx.torch_reason
    if torch is not None:
        try:
            th = torch.empty(top, dtype=torch.uint8).pin_memory()
            th.copy_(torch.from_numpy(pageable))
            td = th.to("cuda", non_blocking=True)
            t = time_torch(torch, lambda: th.to("cuda", non_blocking=True), warmup=1, repeats=reps,
                           deadline=ctx.deadline, what="PyTorch H2D")
            ref_h2d = t.rate(top, 1e9)
            t = time_torch(torch, lambda: th.copy_(td, non_blocking=True), warmup=1, repeats=reps,
                           deadline=ctx.deadline, what="PyTorch D2H")
            ref_d2h = t.rate(top, 1e9)
            del th, td
            torch.cuda.empty_cache()
        except Exception as e:
            if type(e).__name__ == "ProbeTimeout":
                raise
            ref_note = f"PyTorch reference failed: {type(e).__name__}: {e}"
    if ref_h2d is None:  # plain cudaMemcpy of pinned memory, the largest size
        ref_labels = {"h2d": "cudaMemcpy pinned", "d2h": "cudaMemcpy pinned"}
        last = rows[-1]
        ref_h2d, ref_d2h = last["h2d_pinned_gbs"], last["d2h_pinned_gbs"]

    gen, width = props.get("pcie_gen_max"), props.get("pcie_width_max")
    theo = props.get("pcie_theoretical_gbs")
    ds = (theo, f"theoretical: PCIe gen{gen} x{width}") if theo else (None, None)
    link = {"pcie_gen_max": gen, "pcie_width_max": width, "pcie_gen_current": props.get("pcie_gen_current"),
            "pcie_width_current": props.get("pcie_width_current"), "reference_note": ref_note}
    ms = []
    for name, label, ref in (("h2d", "Host to device", ref_h2d), ("d2h", "Device to host", ref_d2h)):
        for hname in ("pinned", "pageable"):
            col = f"{name}_{hname}_gbs"
            best = max(rows, key=itemgetter(col))
            ms.append(measurement(
                f"transfer.{name}_{hname}", f"{label}, {hname}" + (" (host-bound)" if hname == "pageable" else ""),
                best[col], "GB/s",
                spread=best[f"{name}_{hname}_spread"], datasheet=ds,
                reference=ref if hname == "pinned" else None,
                reference_label=ref_labels[name] if hname == "pinned" else None,
                at_bytes=best["bytes"], **link,
            ))
            # pageable copies are staged by the driver through a CPU memcpy: they measure the host
            ms[-1].host_bound = hname == "pageable"
    return ProbeResult(probe=NAME, status="ok", duration_s=time.perf_counter() - t0, measurements=ms,
                       data={"sweep": rows, "reference_bytes": top})
