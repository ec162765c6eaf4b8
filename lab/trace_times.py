#!/usr/bin/env python3
"""How long the tracer takes on models that are not shipped pre-traced, as a user on a two-core machine meets it:
`gpuadvisor estimate MODEL --mode M --batch B --json` in a fresh process, PyTorch installed, the trace cache empty
(cold: a fresh XDG_CACHE_HOME, so the catalog's cache is built too) and then filled (cached), each under
`taskset -c 0,1`. Each case is run `--repeat` times, each time with a fresh cache, and the least wall time kept (a
shared machine's neighbours only ever add to it); the CPU time (user + system) of that run is kept beside it. After
the timed cached run, one more cached run says whether it imported PyTorch (it must not: issue 33) and whether it
traced again (the cache's files unchanged). Also builds every torchvision model of every family with no weights and
the network disabled (what issue 33 asks every family to do); `--no-families` leaves that out.

Targets (issue 33): training under 20 s, inference under 10 s, cached under 1 s without importing PyTorch.

  python3 -m lab.trace_times --out $OUT/trace_times.json [--repeat 2] [--only SUBSTRING] [--budget-s 540]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: not shipped pre-traced (gpuadvisor/data/graphs), up to 100M parameters but vit_l_16 (304M), classification
MODELS = [("torchvision:regnet_y_8gf", "training", 64), ("torchvision:maxvit_t", "training", 32),
          ("torchvision:efficientnet_b3", "training", 64), ("torchvision:mobilenet_v2", "training", 128),
          ("torchvision:resnext101_32x8d", "training", 32), ("torchvision:wide_resnet50_2", "training", 64),
          ("torchvision:swin_s", "training", 32), ("torchvision:convnext_small", "training", 64),
          ("torchvision:densenet169", "training", 32), ("torchvision:vit_l_16", "inference", 32),
          ("timm:vit_base_patch16_384", "inference", 16), ("timm:efficientnet_b2", "training", 64),
          ("torchvision:squeezenet1_1", "inference", 256), ("torchvision:googlenet", "inference", 128)]
TARGET_S = {"training": 20.0, "inference": 10.0, "cached": 1.0}
GPU = "H100 SXM5 80GB"
#: a cached run that reports whether it imported PyTorch (the CLI's own main, in a fresh interpreter)
_IMPORT_CHECK = ("import sys, io, contextlib\nfrom gpuadvisor.cli import main\n"
                 "with contextlib.redirect_stdout(io.StringIO()):\n    code = main(sys.argv[1:])\n"
                 "print('TORCH', 'torch' in sys.modules)\nraise SystemExit(code)")


def timed(cmd: list[str], env: dict[str, str], limit: float) -> tuple[float, float, int, str, str]:
    """(wall s, CPU s of the process and its children, exit status, stdout, the end of stderr) of `cmd` on
    cores 0 and 1."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    try:
        p = subprocess.run(["taskset", "-c", "0,1", *cmd], env=env, capture_output=True, text=True, timeout=limit)
        rc, out, err = p.returncode, p.stdout, (p.stderr or "").strip()[-300:]
    except subprocess.TimeoutExpired:
        rc, out, err = 124, "", f"no answer within {limit:.0f} s"
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, rc, out, err


def cache_files(cache: str) -> set[str]:
    return {str(p.relative_to(cache)) for p in Path(cache).rglob("*") if p.is_file()}


def measure(spec: str, mode: str, batch: int, limit: float) -> dict:
    """One cold and one cached run of a case, each in a fresh process, then the import check."""
    cache = tempfile.mkdtemp(prefix="trace-times-")
    try:
        env = {**os.environ, "XDG_CACHE_HOME": cache, "OMP_NUM_THREADS": "2"}
        args = ["estimate", spec, "--mode", mode, "--batch", str(batch), "--gpu", GPU, "--json"]
        cold, cold_cpu, rc, _, err = timed([sys.executable, "-m", "gpuadvisor", *args], env, limit)
        row = {"cold_s": round(cold, 2), "cold_cpu_s": round(cold_cpu, 2), "rc": rc, "error": err if rc else ""}
        if rc != 0:
            return row
        files = cache_files(cache)
        cached, cached_cpu, _, _, _ = timed([sys.executable, "-m", "gpuadvisor", *args], env, limit)
        _, _, _, out, _ = timed([sys.executable, "-c", _IMPORT_CHECK, *args], env, limit)
        row.update(cached_s=round(cached, 2), cached_cpu_s=round(cached_cpu, 2),
                   cached_imports_torch="TORCH True" in out, cached_traced_again=cache_files(cache) != files)
        return row
    finally:
        shutil.rmtree(cache, ignore_errors=True)


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
    ap.add_argument("--repeat", type=int, default=1, help="runs of each case; the least wall time is kept")
    ap.add_argument("--only", default="", help="only the models whose spec contains this")
    ap.add_argument("--budget-s", type=float, default=540)
    ap.add_argument("--limit-s", type=float, default=150)
    ap.add_argument("--no-families", action="store_true")
    a = ap.parse_args()
    start = time.perf_counter()
    rows = []
    for spec, mode, batch in MODELS:
        if a.only not in spec:
            continue
        runs = []
        for _ in range(max(1, a.repeat)):
            if time.perf_counter() - start > a.budget_s:
                break
            runs.append(measure(spec, mode, batch, a.limit_s))
        if not runs:
            rows.append({"model": spec, "mode": mode, "batch": batch, "skipped": "budget"})
            continue
        ok = [r for r in runs if r["rc"] == 0]
        best = min(ok or runs, key=lambda r: r["cold_s"])
        if ok:  # the least of each figure: cold and cached runs were separate processes
            best = {**best, "cached_s": min(r["cached_s"] for r in ok),
                    "cached_imports_torch": any(r["cached_imports_torch"] for r in ok),
                    "cached_traced_again": any(r["cached_traced_again"] for r in ok)}
        row = {"model": spec, "mode": mode, "batch": batch, "runs": len(runs), **best,
               "cold_target_s": TARGET_S[mode]}
        rows.append(row)
        print(f"{spec:36s} {mode:9s} cold {row['cold_s']:6.1f} s (cpu {row['cold_cpu_s']:5.1f}) rc={row['rc']} "
              f"cached {row.get('cached_s')} s torch imported: {row.get('cached_imports_torch')}"
              + (f"  {row['error'][-120:]}" if row["rc"] else ""), flush=True)
    families = None
    if not a.no_families:
        families = build_every_torchvision_model()
        print(f"torchvision {families['torchvision']}: {families['built']} built, {len(families['failed'])} failed: "
              f"{sorted(families['failed'])}", flush=True)
    import torch

    from gpuadvisor.estimate.trace.tracer import TRACER_REVISION

    cpu = Path("/proc/cpuinfo").read_text().split("model name")[1].split("\n")[0].strip(": \t")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    env = {"torch": torch.__version__, "nproc_used": 2, "cpu": cpu, "commit": commit,
           "tracer_revision": TRACER_REVISION, "repeat": a.repeat, "targets_s": TARGET_S}
    met = [r for r in rows if r.get("rc") == 0 and r["cold_s"] < r["cold_target_s"]
           and r["cached_s"] < TARGET_S["cached"] and not r["cached_imports_torch"]]
    print(f"{len(met)} of {len(rows)} meet the targets", flush=True)
    with open(a.out, "w") as f:
        json.dump({"env": env, "traces": rows, "torchvision_build": families}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
