#!/usr/bin/env python3
"""Where eager decode's "fixed" per-step host cost comes from: PyTorch SDPA's host time for a
key/value length it has not seen before (a new shape each decode step) against one it has, per
backend; then generate() with fresh prompt lengths, with the cuDNN attention backend on and off.

  python3 -m lab.device.sdpa_host       # writes $OUT/sdpa-host.json
"""

from __future__ import annotations

import itertools
import json
import os
import statistics
import time
from pathlib import Path

from lab.bench_decode import MODELS, build_hf
from lab.device.eager_check import generate_fresh

_fresh = itertools.count(700)


def log(*a):
    print(*a, flush=True)


def sdpa_host(torch, b: int, hq: int, hkv: int, d: int, backend) -> dict:
    """Host seconds per SDPA call (q_len 1, GQA through enable_gqa), fresh length vs repeated."""
    from torch.nn.attention import sdpa_kernel

    F = torch.nn.functional

    def call(L: int):
        q = torch.randn(b, hq, 1, d, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(b, hkv, L, d, device="cuda", dtype=torch.bfloat16)
        v = torch.randn_like(k)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with sdpa_kernel(backend) if backend is not None else _null():
            F.scaled_dot_product_attention(q, k, v, enable_gqa=hq != hkv)
        host = time.perf_counter() - t0
        torch.cuda.synchronize()
        return host

    try:
        call(next(_fresh))
        fresh = [call(next(_fresh)) for _ in range(8)]
        L = next(_fresh)
        call(L)
        same = [call(L) for _ in range(8)]
        return {"fresh_ms": statistics.median(fresh) * 1e3, "same_ms": statistics.median(same) * 1e3}
    except Exception as e:
        return {"error": repr(e)[:200]}


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def chosen_kernel(torch, b, hq, hkv, d) -> list[str]:
    from torch.profiler import ProfilerActivity, profile

    q = torch.randn(b, hq, 1, d, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(b, hkv, next(_fresh), d, device="cuda", dtype=torch.bfloat16)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        torch.nn.functional.scaled_dot_product_attention(q, k, k, enable_gqa=hq != hkv)
        torch.cuda.synchronize()
    return sorted({e.name[:90] for e in prof.events() if "CUDA" in str(getattr(e, "device_type", ""))})


def main() -> int:
    import torch
    from torch.nn.attention import SDPBackend

    out_dir = Path(os.environ.get("OUT", "out"))
    out_dir.mkdir(parents=True, exist_ok=True)
    res: dict = {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "torch": torch.__version__,
                 "cudnn_sdp_enabled": torch.backends.cuda.cudnn_sdp_enabled(), "sdpa": [], "generate": []}
    backends = {"default": None, "flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
                "cudnn": SDPBackend.CUDNN_ATTENTION, "math": SDPBackend.MATH}
    for shape in ((1, 32, 8, 64), (8, 32, 8, 128), (32, 32, 8, 128)):
        rec = {"shape": shape, "kernels": chosen_kernel(torch, *shape)}
        for name, be in backends.items():
            rec[name] = sdpa_host(torch, *shape, be)
        res["sdpa"].append(rec)
        log(rec)
    for name in ("llama-3.2-1b", "llama-3.1-8b"):
        model, hf = build_hf(MODELS[name], "cuda")
        for b in (1, 8, 32):
            rec = {"model": name, "batch": b}
            for cudnn in (True, False):
                torch.backends.cuda.enable_cudnn_sdp(cudnn)
                step = generate_fresh(model, hf, torch, b, long_runs=2)["step_s"]
                rec["cudnn_on_s" if cudnn else "cudnn_off_s"] = step
            torch.backends.cuda.enable_cudnn_sdp(True)
            res["generate"].append(rec)
            log(rec)
        del model
        torch.cuda.empty_cache()
    (out_dir / "sdpa-host.json").write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
