#!/usr/bin/env python3
"""How long the tracer takes on models that are not shipped pre-traced, as a user on a two-core machine meets it:
`gpuadvisor estimate MODEL --mode M --batch B --json` in a fresh process, PyTorch installed, the trace cache empty
(cold) and then filled (cached), each under `taskset -c 0,1`. Also builds every torchvision model of every family
with no weights and the network disabled (what issue 33 asks every family to do).

  python3 -m lab.trace_times --out $OUT/trace_times.json [--budget-s 420]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

#: not shipped pre-traced (gpuadvisor/data/graphs), up to 100M parameters, classification
MODELS = [("torchvision:regnet_y_8gf", "training", 64), ("torchvision:maxvit_t", "training", 32),
          ("torchvision:efficientnet_b3", "training", 64), ("torchvision:mobilenet_v2", "training", 128),
          ("torchvision:resnext101_32x8d", "training", 32), ("torchvision:wide_resnet50_2", "training", 64),
          ("torchvision:swin_s", "training", 32), ("torchvision:convnext_small", "training", 64),
          ("torchvision:densenet169", "training", 32), ("torchvision:vit_l_16", "inference", 32),
          ("timm:vit_base_patch16_384", "inference", 16), ("timm:efficientnet_b2", "training", 64),
          ("torchvision:squeezenet1_1", "inference", 256), ("torchvision:googlenet", "inference", 128)]


def timed(cmd: list[str], env: dict[str, str], limit: float) -> tuple[float, int, str]:
    t0 = time.perf_counter()
    try:
        p = subprocess.run(["taskset", "-c", "0,1", *cmd], env=env, capture_output=True, text=True, timeout=limit)
        return time.perf_counter() - t0, p.returncode, (p.stderr or "").strip()[-300:]
    except subprocess.TimeoutExpired:
        return time.perf_counter() - t0, 124, f"no answer within {limit:.0f} s"


def build_every_torchvision_model() -> dict:
    """Each model of torchvision.models.list_models() built with weights=None (and weights_backbone=None where
    the builder takes it), the network disabled: which build, which fail and why."""
    import socket

    def no_network(*a, **k):
        raise OSError("network disabled")

    socket.socket.connect = no_network  # type: ignore[method-assign]
    import torchvision

    from gpuadvisor.estimate.trace.zoo import _no_weights

    ok, failed = [], {}
    for name in torchvision.models.list_models():
        try:
            torchvision.models.get_model(name, **_no_weights(torchvision, name))
            ok.append(name)
        except Exception as e:  # recorded: the test of issue 33 names the model and the error
            failed[name] = f"{type(e).__name__}: {str(e)[:160]}"
    return {"built": len(ok), "failed": failed, "torchvision": torchvision.__version__}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-s", type=float, default=420)
    ap.add_argument("--limit-s", type=float, default=150)
    a = ap.parse_args()
    start = time.perf_counter()
    rows = []
    for spec, mode, batch in MODELS:
        if time.perf_counter() - start > a.budget_s:
            rows.append({"model": spec, "skipped": "budget"})
            continue
        cache = tempfile.mkdtemp()
        env = {**os.environ, "XDG_CACHE_HOME": cache, "OMP_NUM_THREADS": "2"}
        cmd = [sys.executable, "-m", "gpuadvisor", "estimate", spec, "--mode", mode, "--batch", str(batch),
               "--gpu", "H100 SXM5 80GB", "--json"]
        cold, rc, err = timed(cmd, env, a.limit_s)
        cached, _, _ = timed(cmd, env, a.limit_s) if rc == 0 else (None, None, "")
        rows.append({"model": spec, "mode": mode, "batch": batch, "cold_s": round(cold, 2), "rc": rc,
                     "cached_s": None if cached is None else round(cached, 2), "error": err if rc else ""})
        print(f"{spec:36s} {mode:9s} cold {cold:6.1f} s rc={rc} cached {cached if cached is None else round(cached, 2)}"
              + (f"  {err[-120:]}" if rc else ""), flush=True)
    families = build_every_torchvision_model()
    print(f"torchvision {families['torchvision']}: {families['built']} built, {len(families['failed'])} failed: "
          f"{sorted(families['failed'])}", flush=True)
    from pathlib import Path

    import torch

    cpu = Path("/proc/cpuinfo").read_text().split("model name")[1].split("\n")[0].strip(": ")
    env = {"torch": torch.__version__, "nproc_used": 2, "cpu": cpu}
    with open(a.out, "w") as f:
        json.dump({"env": env, "traces": rows, "torchvision_build": families}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
