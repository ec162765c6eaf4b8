#!/usr/bin/env python3
"""Kernel-level measurements for the time model (used by lab/bench_decode.py): host launch cost,
ceilings, bf16 GEMM efficiency against shape, SDPA rate against sequence length and head dimension,
elementwise bandwidth against size. Every sweep point is timed with CUDA events after a warm-up."""

from __future__ import annotations

import os
import platform
import statistics
import time
from pathlib import Path


def log(*a):
    print(*a, flush=True)


class Timer:
    def __init__(self, device: str):
        import torch

        self.torch = torch
        self.cuda = device == "cuda"

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    def wall(self, fn, reps: int = 3) -> list[float]:
        out = []
        for _ in range(reps):
            self.sync()
            t0 = time.perf_counter()
            fn()
            self.sync()
            out.append(time.perf_counter() - t0)
        return out


# ---------------------------------------------------------------- host and ceilings


def cuda_device_env() -> dict:
    """GPU 0 as a run records it: its name, SMs and memory (PyTorch), the driver and SM clocks (NVML, where it
    answers; else the error)."""
    import torch

    p = torch.cuda.get_device_properties(0)
    env: dict = {"device_name": p.name, "sms": p.multi_processor_count, "memory_gib": p.total_memory / 2**30}
    try:
        import pynvml

        pynvml.nvmlInit()
        hnd = pynvml.nvmlDeviceGetHandleByIndex(0)
        env["driver"] = pynvml.nvmlSystemGetDriverVersion()
        env["sm_clock_mhz"] = pynvml.nvmlDeviceGetClockInfo(hnd, pynvml.NVML_CLOCK_SM)
        env["max_sm_clock_mhz"] = pynvml.nvmlDeviceGetMaxClockInfo(hnd, pynvml.NVML_CLOCK_SM)
    except Exception as e:
        env["nvml_error"] = repr(e)
    return env


def host_info() -> dict:
    info = {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count()}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    t0 = time.perf_counter()
    s = 0
    for i in range(2_000_000):
        s += i
    info["python_loop_ns_per_iter"] = (time.perf_counter() - t0) / 2e6 * 1e9
    return info


def launch_costs(device: str) -> dict:
    """Microseconds per tiny eager kernel launch (queue-bound) and per nn.Linear call at batch 1."""
    import torch

    tm = Timer(device)
    x = torch.randn(16, device=device)
    n = 3000
    for _ in range(200):
        x.add_(1e-6)
    tm.sync()
    t = min(tm.wall(lambda: [x.add_(1e-6) for _ in range(n)], reps=3))
    out = {"add_us": t / n * 1e6}
    lin = torch.nn.Linear(1024, 1024, bias=False, device=device, dtype=torch.bfloat16 if device == "cuda" else None)
    h = torch.randn(1, 1024, device=device, dtype=lin.weight.dtype)
    with torch.no_grad():
        for _ in range(100):
            lin(h)
        t = min(tm.wall(lambda: [lin(h) for _ in range(n)], reps=3))
    out["linear_us"] = t / n * 1e6
    return out


def ceilings(device: str) -> dict:
    import torch

    if device != "cuda":
        return {}
    tm = Timer(device)
    a = torch.randn(8192, 8192, device=device, dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device=device, dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    t = statistics.median(tm.wall(lambda a=a, b=b: [a @ b for _ in range(10)], reps=5)) / 10
    out = {"bf16_matmul_tflops": 2 * 8192**3 / t / 1e12}
    src = torch.randn(2**28, device=device)  # 1 GiB fp32
    dst = torch.empty_like(src)
    dst.copy_(src)
    t = statistics.median(tm.wall(lambda d=dst, s=src: [d.copy_(s) for _ in range(10)], reps=5)) / 10
    out["copy_gbs"] = 2 * src.numel() * 4 / t / 1e9
    del a, b, src, dst
    torch.cuda.empty_cache()
    return out


def _event_time(fn, reps: int) -> float:
    """Median seconds of fn() timed with CUDA events, after a warm-up."""
    import torch

    for _ in range(3):
        fn()
    ts = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e) / 1e3)
    return statistics.median(ts)


def gemm_sweep(device: str) -> list[dict]:
    """bf16 y = x @ W^T for the decode models' layer shapes (N x K), M tokens; graphs-free event timing."""
    import torch

    if device != "cuda":
        return []
    shapes = {"0.5b-qkv": (1152, 896), "0.5b-up": (9728, 896), "0.5b-down": (896, 4864),
              "3b-qkv": (5120, 3072), "3b-up": (16384, 3072), "3b-down": (3072, 8192),
              "8b-qkv": (6144, 4096), "8b-up": (28672, 4096), "8b-down": (4096, 14336), "8b-head": (128256, 4096),
              "gpt2-head": (50257, 768), "gpt2-head-padded": (50304, 768)}  # misaligned vs padded vocabulary
    out = []
    for name, (n, k) in shapes.items():
        w = torch.randn(n, k, device=device, dtype=torch.bfloat16)
        for m in (1, 8, 32, 64, 256, 1024, 4096, 16384):
            try:
                x = torch.randn(m, k, device=device, dtype=torch.bfloat16)
                reps = 20 if m * n * k > 2**36 else 50
                t = _event_time(lambda x=x, w=w: x @ w.t(), reps)
                fl = 2.0 * m * n * k
                by = 2.0 * (m * k + n * k + m * n)
                out.append({"shape": name, "m": m, "n": n, "k": k, "s": t, "tflops": fl / t / 1e12,
                            "gbs": by / t / 1e9})
            except Exception as e:
                out.append({"shape": name, "m": m, "error": repr(e)})
        del w
    torch.cuda.empty_cache()
    return out


def attention_sweep(device: str, shapes=((64, 32), (128, 32), (64, 14)),
                    seqs=(128, 256, 512, 1024, 2048, 4096, 8192)) -> list[dict]:
    """Causal SDPA TFLOP/s (counted as 4*S*S*H*hd*B/2 fwd, 2.5x that fwd+bwd) against sequence length."""
    import torch
    import torch.nn.functional as F

    if device != "cuda":
        return []
    out = []
    for hd, heads in shapes:
        for s in seqs:
            try:
                b = max(1, 32768 // s)
                q = torch.randn(b, heads, s, hd, device=device, dtype=torch.bfloat16, requires_grad=True)
                k = torch.randn_like(q, requires_grad=True)
                v = torch.randn_like(q, requires_grad=True)
                fl = 4.0 * b * heads * s * s * hd / 2
                with torch.no_grad():
                    tf = _event_time(lambda q=q, k=k, v=v: F.scaled_dot_product_attention(q, k, v, is_causal=True), 20)
                go = torch.randn_like(q)

                def fb(q=q, k=k, v=v, go=go):
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                    o.backward(go)

                tfb = _event_time(fb, 10)
                out.append({"head_dim": hd, "heads": heads, "seq": s, "batch": b, "fwd_s": tf,
                            "fwd_tflops": fl / tf / 1e12, "fwdbwd_s": tfb, "fwdbwd_tflops": 3.5 * fl / tfb / 1e12})
                del q, k, v, go
            except Exception as e:
                out.append({"head_dim": hd, "seq": s, "error": repr(e)})
    torch.cuda.empty_cache()
    return out


def elementwise_sweep(device: str) -> list[dict]:
    """Achieved GB/s (read + write) of y = x * s + x for bf16 tensors of growing size."""
    import torch

    if device != "cuda":
        return []
    out = []
    for mib in (0.0625, 0.25, 1, 4, 16, 64, 256, 1024):
        try:
            n = int(mib * 2**20 / 2)
            x = torch.randn(n, device=device, dtype=torch.bfloat16)
            y = torch.empty_like(x)
            t = _event_time(lambda x=x, y=y: torch.add(x, x, alpha=0.5, out=y), 30)
            out.append({"mib": mib, "s": t, "gbs": 3 * n * 2 / t / 1e9})
        except Exception as e:
            out.append({"mib": mib, "error": repr(e)})
    return out


# ---------------------------------------------------------------- decode engines
