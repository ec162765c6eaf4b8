#!/usr/bin/env python3
"""Compare the measured per-GPU peak memory and step time of lab/validate_multigpu.py with
gpuadvisor's estimate for the same workload (no torch needed; run it here after the device run).

  python3 -m tools.compare_multigpu out/multigpu.json [--gpu "H200 SXM5 141GB"] [--markdown]

Memory: the largest torch.cuda.max_memory_allocated over the ranks against the estimate's tensor
bytes (context and fragmentation excluded, as in tools/validate_estimates.py). Time: the median
step of the slower rank against the estimated step time on the named card.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

GiB = 2**30


def workload_for(case: dict, ranks: list[dict]):
    from gpuadvisor.workload import make_workload, spec_from_config

    r = ranks[0]
    spec = spec_from_config(r["config"], name="llama-2-7b-random", origin="validate_multigpu")
    world, mb, seq = r["world_size"], r["micro_batch"], r["seq"]
    common = {"mode": "training", "dtype": "bf16", "seq_len": seq, "num_gpus": world,
              "mixed_precision": bool(r["mixed_precision"]), "optimizer": r.get("optimizer", "adamw-fused")}
    if r["strategy"] == "tp":
        return make_workload(spec, batch=mb, tensor_parallel=world, **common)
    sharding = "fsdp" if r["strategy"] == "fsdp" else "none"
    return make_workload(spec, batch=mb * world, sharding=sharding, **common)


def rows_from(data: dict, gpu: str | None, host_op_us: float | None = None) -> list[dict]:
    from gpuadvisor.catalog import load_catalog, match_device
    from gpuadvisor.estimate import Efficiency, HardwareFigures, estimate_compute, estimate_memory

    cat = load_catalog()
    name = gpu or data.get("env", {}).get("device_name")
    card = (match_device(cat, name) if name else None) or cat.get("H200 SXM5 141GB")
    gpu_figures = HardwareFigures.from_card(card)
    if host_op_us:  # the host's eager op time, where its dispatch probe measured it (DTensor steps are host-bound)
        gpu_figures = replace(gpu_figures, host_op_s=host_op_us * 1e-6)
    rows = []
    for c in data["cases"]:
        ranks = [r for r in c.get("ranks", []) if r and r.get("peak_bytes")]
        row = {"case": c["case"], "card": card.name, "meas_gib": None, "est_gib": None, "mem_err_pct": None,
               "meas_ms": None, "est_ms": None, "time_err_pct": None,
               "error": c.get("error") or next((r.get("error") for r in c.get("ranks", []) if r.get("error")), None)}
        if ranks:
            row["meas_gib"] = max(r["peak_bytes"] for r in ranks) / GiB
            row["meas_ms"] = max(r["step_ms"] for r in ranks if r.get("step_ms"))
            try:
                w = workload_for(c, ranks)
                mem = estimate_memory(w)
                row["est_gib"] = mem.tensors / GiB
                row["phase"] = mem.phase
                row["breakdown_gib"] = {k: round(v / GiB, 2) for k, v in mem.items if v}
                ce = estimate_compute(w, gpu_figures, Efficiency())
                row["est_ms"] = ce.step_time_s * 1e3 if ce.step_time_s else None
            except Exception as e:  # keep the other rows
                row["error"] = f"{type(e).__name__}: {e}"
        if row["meas_gib"] and row["est_gib"]:
            row["mem_err_pct"] = 100 * (row["est_gib"] / row["meas_gib"] - 1)
        if row["meas_ms"] and row["est_ms"]:
            row["time_err_pct"] = 100 * (row["est_ms"] / row["meas_ms"] - 1)
        rows.append(row)
    return rows


def _f(v, d=2) -> str:
    return "-" if v is None else f"{v:.{d}f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", help="multigpu.json written by lab/validate_multigpu.py")
    ap.add_argument("--gpu", help="catalog card for the time estimate (default: the measured device)")
    ap.add_argument("--host-op-us", type=float, help="host op dispatch time in us (default: the estimator's, "
                    "10 us); the run's hosts had no dispatch probe, H200 hosts measured 6.0-9.4 us")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    try:
        data = json.loads(Path(args.json).read_text())
    except (OSError, ValueError) as e:
        print(f"{args.json}: cannot read ({e})", file=sys.stderr)
        return 2
    if args.host_op_us is not None and not 0.5 <= args.host_op_us <= 1000:
        print(f"--host-op-us {args.host_op_us}: expected 0.5 to 1000", file=sys.stderr)
        return 2
    rows = rows_from(data, args.gpu, args.host_op_us)
    if args.markdown:
        print("| case | measured GiB/GPU | estimated GiB/GPU | error % | measured ms | estimated ms | error % |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for r in rows:
            print(f"| {r['case']} | {_f(r['meas_gib'])} | {_f(r['est_gib'])} | {_f(r['mem_err_pct'], 1)} | "
                  f"{_f(r['meas_ms'], 0)} | {_f(r['est_ms'], 0)} | {_f(r['time_err_pct'], 1)} |")
    else:
        print(f"{'case':12} {'meas GiB':>9} {'est GiB':>8} {'err%':>6} {'meas ms':>8} {'est ms':>8} {'err%':>6}")
        for r in rows:
            print(f"{r['case']:12} {_f(r['meas_gib']):>9} {_f(r['est_gib']):>8} {_f(r['mem_err_pct'], 1):>6} "
                  f"{_f(r['meas_ms'], 0):>8} {_f(r['est_ms'], 0):>8} {_f(r['time_err_pct'], 1):>6}"
                  + (f"  {r['error']}" if r.get("error") else ""))
    ok = [abs(r["mem_err_pct"]) for r in rows if r["mem_err_pct"] is not None]
    if ok:
        print(f"worst per-GPU memory error: {max(ok):.1f}% over {len(ok)} case(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
