#!/usr/bin/env python3
"""Validate gpuadvisor's memory (and time) estimates against real PyTorch runs.

Builds Hugging Face transformers models from configs with random weights (no download) and runs
the cases of tools/validation_cases.py (generate, encode, scoring, mixed/pure training, LoRA and
QLoRA with and without checkpointing, MoE, quantized weights, AdamW foreach/fused/8-bit), records
torch.cuda.max_memory_allocated and CUDA-event times (lab/validation_measure.py), and compares
them with the estimate for the same workload. A third of the cases (id % 3 == 0) are held out.

  python3 -m tools.validate_estimates                      # on the GPU: $OUT/validation-h100-v2.json
  python3 -m tools.validate_estimates --device cpu --tiny  # shake out bugs without a GPU
  python3 -m tools.validate_estimates --compare tools/data/validation-h100-v2.json [--markdown]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from pathlib import Path

from tools.validation_cases import CASES, MODELS, TINY, TINY_CASES, case_label

GiB = 2**30
OPTIMIZER = {"foreach": "adamw-foreach", "fused": "adamw-fused", "8bit": "adamw8bit"}


def workload_for(rec: dict):
    """The gpuadvisor Workload that describes a measured case."""
    from gpuadvisor.workload import make_workload, spec_from_config

    spec = spec_from_config(rec["config"], name=rec["model"], origin=f"validate:{rec['model']}")
    kind, b, s, o = rec["kind"], rec["batch"], rec["seq"], rec.get("opts", {})
    ckpt = kind.endswith("-ckpt")
    base = kind.replace("-ckpt", "")
    quant = o.get("quant", "none")
    if base == "generate":
        gen = rec.get("measured", {}).get("kv_tokens", s + 10) - s
        return make_workload(spec, mode="inference", dtype="bf16", batch=b, seq_len=s, gen_tokens=gen, quant=quant)
    if base == "encode":
        return make_workload(spec, mode="inference", dtype="bf16", batch=b, seq_len=s, gen_tokens=0)
    if base == "scoring":
        return make_workload(spec, mode="scoring", dtype="bf16", batch=b, seq_len=s, gen_tokens=0,
                             scoring=o.get("scoring", "loss"))
    if base in ("lora", "qlora"):
        return make_workload(spec, mode=base, dtype="bf16", batch=b, seq_len=s, lora_rank=16, checkpointing=ckpt,
                             quant=quant if base == "qlora" else "none", optimizer="adamw-foreach",
                             mixed_precision=bool(o.get("amp")))
    return make_workload(spec, mode="training", dtype="bf16", batch=b, seq_len=s, mixed_precision=base == "mixed",
                         checkpointing=ckpt, optimizer=OPTIMIZER[o.get("opt", "foreach")])


def report_kind(rec: dict) -> str:
    """The kind a case counts under in the worst-error-per-kind table."""
    kind = rec["kind"]
    moe = rec["config"].get("num_local_experts", 1) > 1
    if moe and kind.startswith(("mixed", "pure")):
        return "moe-training"
    if rec.get("opts", {}).get("quant") and kind == "generate":
        return "generate-quantized"
    return {"mixed-ckpt": "mixed", "pure-ckpt": "pure", "qlora-ckpt": "qlora"}.get(kind, kind)


def estimate_row(rec: dict, gpu_figures=None) -> dict:
    from gpuadvisor.estimate import Efficiency, estimate_compute, estimate_memory

    m = rec["measured"]
    row = {"id": rec["id"], "model": rec["model"], "kind": rec["kind"], "label": case_label(rec),
           "report_kind": report_kind(rec), "batch": rec["batch"], "seq": rec["seq"],
           "held_out": rec["held_out"], "meas_gib": m["peak_bytes"] / GiB if m.get("peak_bytes") else None,
           "meas_ms": m.get("time_ms"), "est_gib": None, "est_ms": None, "mem_err_pct": None, "time_err_pct": None}
    try:
        w = workload_for(rec)
        mem = estimate_memory(w)
        row.update(est_gib=mem.tensors / GiB, phase=mem.phase, params_b=round(w.model.num_params / 1e9, 3),
                   breakdown_gib={k: round(v / GiB, 3) for k, v in mem.items if v})
        if gpu_figures is not None:
            ce = estimate_compute(w, gpu_figures, Efficiency())
            t = ce.prefill_time_s if w.mode in ("inference", "scoring") else ce.step_time_s
            row["est_ms"] = t * 1e3 if t else None
    except Exception as e:  # one bad case must not hide the others
        row["error"] = f"{type(e).__name__}: {e}"
    if row["meas_gib"] and row["est_gib"]:
        row["mem_err_pct"] = 100 * (row["est_gib"] / row["meas_gib"] - 1)
    if row["meas_ms"] and row["est_ms"]:
        row["time_err_pct"] = 100 * (row["est_ms"] / row["meas_ms"] - 1)
    return row


def _f(v, d=2) -> str:
    return "-" if v is None else f"{v:.{d}f}"


def markdown_table(rows: list[dict]) -> str:
    out = ["| id | model | kind | batch x seq | measured GiB | estimated GiB | error % | held out |",
           "| ---: | --- | --- | --- | ---: | ---: | ---: | --- |"]
    for r in rows:
        err = "-" if r["mem_err_pct"] is None else f"{r['mem_err_pct']:+.1f}"
        out.append(f"| {r['id']} | {r['model']} | {r['label']} | {r['batch']} x {r['seq']} | {_f(r['meas_gib'])} | "
                   f"{_f(r['est_gib'])} | {err} | {'yes' if r['held_out'] else ''} |")
    return "\n".join(out)


def worst_by_kind(rows: list[dict]) -> dict[str, dict]:
    """Worst |memory error| per report kind: over all cases and over the held-out ones."""
    out: dict[str, dict] = {}
    for r in rows:
        if r["mem_err_pct"] is None:
            continue
        d = out.setdefault(r["report_kind"], {"n": 0, "worst": None, "n_held": 0, "worst_held": None})
        d["n"] += 1
        if d["worst"] is None or abs(r["mem_err_pct"]) > abs(d["worst"][0]):
            d["worst"] = (r["mem_err_pct"], r["id"])
        if r["held_out"]:
            d["n_held"] += 1
            if d["worst_held"] is None or abs(r["mem_err_pct"]) > abs(d["worst_held"][0]):
                d["worst_held"] = (r["mem_err_pct"], r["id"])
    return out


def summary_lines(rows: list[dict]) -> list[str]:
    lines = [f"{'kind':20} {'cases':>5} {'worst err %':>12} {'held out':>8} {'worst held-out %':>17}"]
    for k, d in sorted(worst_by_kind(rows).items()):
        w = f"{d['worst'][0]:+.1f} (#{d['worst'][1]})" if d["worst"] else "-"
        wh = f"{d['worst_held'][0]:+.1f} (#{d['worst_held'][1]})" if d["worst_held"] else "-"
        lines.append(f"{k:20} {d['n']:>5} {w:>12} {d['n_held']:>8} {wh:>17}")
    return lines


def summary_markdown(rows: list[dict]) -> str:
    out = ["| kind | cases | worst error % (case) | held-out cases | worst held-out error % (case) |",
           "|---|---:|---:|---:|---:|"]
    for k, d in sorted(worst_by_kind(rows).items()):
        w = f"{d['worst'][0]:+.1f} (#{d['worst'][1]})" if d["worst"] else "-"
        wh = f"{d['worst_held'][0]:+.1f} (#{d['worst_held'][1]})" if d["worst_held"] else "-"
        out.append(f"| {k} | {d['n']} | {w} | {d['n_held']} | {wh} |")
    return "\n".join(out)


def print_table(rows: list[dict]) -> None:
    hdr = f"{'#':>3} {'model':15} {'kind':22} {'B':>3} {'S':>5} {'meas GiB':>8} {'est GiB':>8} {'err%':>6} " \
          f"{'meas ms':>8} {'est ms':>8}"
    print(hdr)
    for r in rows:
        name = r["model"] + ("*" if r["held_out"] else "")
        print(f"{r['id']:>3} {name:15} {r['label']:22} {r['batch']:>3} {r['seq']:>5} {_f(r['meas_gib']):>8} "
              f"{_f(r['est_gib']):>8} {_f(r['mem_err_pct'], 1):>6} {_f(r['meas_ms'], 1):>8} {_f(r['est_ms'], 1):>8}"
              + (f"  {r['error']}" if r.get("error") else ""))
    print("* held out (id % 3 == 0): never used for calibration")
    print("\n".join(summary_lines(rows)))


def hardware(device_name: str | None):
    from gpuadvisor.catalog import load_catalog, match_device
    from gpuadvisor.estimate import HardwareFigures

    cat = load_catalog()
    card = (match_device(cat, device_name) if device_name else None) or cat.get("H100 SXM5 80GB")
    return HardwareFigures.from_card(card)


def run_cases(args) -> int:
    import torch

    from lab.validation_measure import environment, measure

    models = TINY if args.tiny else MODELS
    cases = TINY_CASES if args.tiny else CASES
    if args.only:
        keep = {int(i) for i in args.only.split(",")}
        cases = [c for c in cases if c["id"] in keep]
    cuda = args.device == "cuda"
    env = environment(args.device)
    print(json.dumps(env), flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    try:
        gpu_figures = hardware(env["device_name"] if cuda else None)
    except Exception as e:
        print(f"no hardware figures ({e}); memory only", flush=True)
        gpu_figures = None
    records, rows = [], []
    t_start = time.perf_counter()
    for c in cases:
        rec = {**c, "config": models[c["model"]], "env": env}
        if args.budget_s and time.perf_counter() - t_start > args.budget_s:
            rec["error"] = "skipped: time budget spent"
            records.append(rec)
            continue
        t0 = time.perf_counter()
        try:
            rec["measured"] = measure(c, models[c["model"]], args.device, args.reps)
        except Exception as e:  # every case on its own
            rec["error"] = f"{type(e).__name__}: {str(e)[:300]}"
            if cuda:
                gc.collect()
                torch.cuda.empty_cache()
        rec["wall_s"] = round(time.perf_counter() - t0, 2)
        records.append(rec)
        if "measured" in rec:
            r = estimate_row(rec, gpu_figures)
            rows.append(r)
            print(f"#{c['id']:<3} {c['model']:15} {case_label(c):22} meas {_f(r['meas_gib'])} est {_f(r['est_gib'])} "
                  f"GiB ({_f(r['mem_err_pct'], 1)}%) {_f(r['meas_ms'], 1)} ms  [{rec['wall_s']}s]"
                  + (f" {r['error']}" if r.get("error") else ""), flush=True)
        else:
            print(f"#{c['id']:<3} {c['model']:15} {case_label(c):22} ERROR {rec['error']}", flush=True)
        (out / "validation-h100-v2.json").write_text(json.dumps({"env": env, "records": records}, indent=1))
    (out / "validation_rows.json").write_text(json.dumps(rows, indent=1))
    print_table(rows)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--tiny", action="store_true", help="tiny configs (for a CPU smoke test)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--only", help="comma-separated case ids")
    ap.add_argument("--budget-s", type=float, default=0.0, help="skip the remaining cases after this many seconds")
    ap.add_argument("--out", default=os.environ.get("OUT", "out"))
    ap.add_argument("--compare", metavar="JSON", help="re-estimate saved measurements (no torch needed)")
    ap.add_argument("--markdown", action="store_true", help="with --compare: print a Markdown table")
    args = ap.parse_args()
    if args.compare:
        data = json.loads(Path(args.compare).read_text())
        gpu_figures = hardware(data["env"].get("device_name"))
        rows = [estimate_row(r, gpu_figures) for r in data["records"]
                if "measured" in r and r["measured"].get("peak_bytes")]
        if args.markdown:
            print(summary_markdown(rows))
            print()
            print(markdown_table(rows))
        else:
            print_table(rows)
        return 0
    return run_cases(args)


if __name__ == "__main__":
    sys.exit(main())
