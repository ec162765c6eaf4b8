#!/usr/bin/env python3
"""Check gpuadvisor's time model against H100 measurements and write lab/history/validation-time.md.

Inputs (all measured on an H100 80GB HBM3 SXM, PyTorch 2.11, transformers 5.17):
  * tools/data/decode-h100.json       lab/bench_decode.py: decode per engine, 0.5B-8B, batch 1-64
  * tools/data/decode-h100-host.json  lab/bench_decode.py --host: host sweep and a re-check on a
                                      second machine of the same kind (batches 16 and 48: held out)
  * validation JSONs (tools/validate_estimates.py): prefill, training-step and decode-step times;
    v1 records carry "mode", v2 records "kind" (their cases are read with that file's workload_for)

Held-out rules, fixed before fitting: decode points with (model index + batch index) % 3 == 0
(models 0.5B, 1B, 3B, 8B; batches 1, 8, 32, 64) and every point of the second run; validation
cases as their file marks them. The time model has no constant fitted to the validation cases:
its rates come from the kernel sweeps of lab/bench_decode.py (lab/history/validation-time.md says which).

  python3 -m tools.validate_time                       # print the tables
  python3 -m tools.validate_time --write lab/history/validation-time.md
  python3 -m tools.validate_time --validation other/validation-h100-v2.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bench.models import workload_v1
from gpuadvisor.estimate import Efficiency, HardwareFigures, decode_step, estimate_compute
from gpuadvisor.workload import make_workload

ROOT = Path(__file__).resolve().parent.parent

try:
    from gpuadvisor.workload import spec_from_config
except ImportError:  # older trees kept it in hfconfig
    from gpuadvisor.hfconfig import spec_from_config

DATA = ROOT / "tools" / "data"
LAB = ROOT / "lab" / "data"  # raw files of the dated eager-decode checks and re-runs
ORDER = ["qwen2.5-0.5b", "llama-3.2-1b", "llama-3.2-3b", "llama-3.1-8b"]
BATCHES = [1, 8, 32, 64]
V1_HELD_OUT = {("gpt2-large", "bf16", 4, 1024), ("gpt2-large", "infer", 8, 1024), ("llama-3.2-3b", "infer", 8, 2048),
               ("llama-3.2-3b", "bf16", 2, 2048), ("qwen2.5-0.5b", "mixed", 2, 2048),
               ("tinyllama-1.1b", "bf16-ckpt", 16, 1024), ("qwen2.5-1.5b", "lora", 8, 512)}


def h100() -> HardwareFigures:
    from gpuadvisor.catalog import load_catalog

    return HardwareFigures.from_card(load_catalog().get("H100 SXM5 80GB"))


def decode_rows(path: Path, gpu_figures: HardwareFigures, *, all_held_out: bool, run: str) -> list[dict]:
    d = json.loads(path.read_text())
    rows = []
    for rec in d.get("decode", []):
        if "batch" not in rec:
            continue
        spec = spec_from_config(rec["config"], name=rec["model"])
        w = make_workload(spec, mode="inference", dtype="bf16", batch=rec["batch"], seq_len=rec["prompt"],
                          gen_tokens=rec["gen"])
        ctx = rec["prompt"] + rec["gen"] // 2
        held = all_held_out or (rec["model"] in ORDER and rec["batch"] in BATCHES
                                and (ORDER.index(rec["model"]) + BATCHES.index(rec["batch"])) % 3 == 0)
        for engine, key in (("graphs", "graphs_own"), ("eager", "eager")):
            meas = rec.get(key, {}).get("step_s")
            if not meas:
                continue
            est = decode_step(w, gpu_figures, batch=rec["batch"], context=ctx, engine=engine).time_s
            rows.append({"run": run, "model": rec["model"], "params_b": rec["params"] / 1e9, "batch": rec["batch"],
                         "engine": engine, "meas_tps": rec["batch"] / meas, "est_tps": rec["batch"] / est,
                         "err": 100 * (meas / est - 1), "held_out": held,
                         "graphs_hf_ms": rec.get("graphs_hf", {}).get("step_s", 0) * 1e3})
    return rows


EAGER_VARIANTS = {"default": "eager", "nocudnn": "eager, cuDNN attention off", "padded": "eager, padded batch"}


def eager_check_rows(path: Path, card: str, run: str) -> list[dict]:
    """lab/device/eager_check.py: generate() with a new length every step, against the estimate made
    with the dispatch probe's figures measured in the same run, and (plain variant) against the one
    made with no probe at all (the defaults a user without `gpuadvisor run` gets). Runs from F on
    timed generate() itself on tiny models, which is what the probe now measures; runs C-E had only
    the single-op and SDPA-level figures. Variants: cuDNN attention off (no plan: the estimate's plan
    is 0) and left-padded batches (padded=True)."""
    from dataclasses import replace

    from gpuadvisor.catalog import load_catalog

    d = json.loads(path.read_text())
    pr = d["probe"]
    card_hw = HardwareFigures.from_card(load_catalog().get(card))
    gpu_figures = replace(card_hw, host_op_s=pr["op_s"], attention_plan_s=pr["new_shape_s"])
    probe = "op + SDPA probe"
    if pr.get("generate_layer_s"):
        gpu_figures = replace(gpu_figures, eager_layer_s=pr["generate_layer_s"], eager_fixed_s=pr["generate_fixed_s"],
                     attention_plan_s=pr["generate_plan_s"])
        probe = "generate() probe"
    rows = []
    for rec in d["generate"]:
        if not rec.get("step_s"):
            continue
        variant = rec.get("variant", "default")
        spec = spec_from_config(rec["config"], name=rec["model"])
        w = make_workload(spec, mode="inference", dtype="bf16", batch=rec["batch"], seq_len=int(rec["context_mean"]),
                          gen_tokens=rec["gen"])
        for figures, label in ((gpu_figures, probe), (card_hw, "no probe")):
            if label == "no probe" and variant != "default":
                continue
            h = replace(figures, attention_plan_s=0.0) if variant == "nocudnn" else figures
            est = decode_step(w, h, batch=rec["batch"], context=int(rec["context_mean"]), engine="eager",
                              padded=variant == "padded").time_s
            rows.append({"run": run, "model": rec["model"], "params_b": rec["params"] / 1e9, "batch": rec["batch"],
                         "engine": f"{EAGER_VARIANTS[variant]} [{label}]", "meas_tps": rec["batch"] / rec["step_s"],
                         "est_tps": rec["batch"] / est,
                         "err": 100 * (rec["step_s"] / est - 1), "held_out": True, "graphs_hf_ms": 0.0})
    return rows


def phase_rows(path: Path, gpu_figures: HardwareFigures, source: str) -> tuple[list[dict], list[str]]:
    """Prefill / scoring / training-step rows (and eager decode-step rows of v2 generate cases)."""
    d = json.loads(path.read_text())
    rows, skipped = [], []
    for rec in d["records"]:
        m = rec.get("measured") or {}
        try:
            if "kind" in rec:
                from tools import validate_estimates as V

                w = V.workload_for(rec)
                kind, held = rec["kind"], rec["held_out"]
            else:
                w = workload_v1(rec)
                kind = rec["mode"]
                held = (rec["model"], rec["mode"], rec["batch"], rec["seq"]) in V1_HELD_OUT
            ce = estimate_compute(w, gpu_figures, Efficiency(), engine="eager")
        except Exception as e:  # a case the installed workload model cannot express
            skipped.append(f"{rec.get('id', '')} {rec['model']} {rec.get('kind', rec.get('mode'))}: {e}")
            continue
        phase = "prefill" if w.mode in ("inference", "scoring") else "training step"
        if w.mode == "scoring":
            phase = "scoring"
        if w.model.kind == "encoder" and w.mode == "inference":
            phase = "encode"
        est = ce.prefill_time_s if w.mode in ("inference", "scoring") else ce.step_time_s
        meas = (m.get("prefill_ms") or m.get("forward_ms") or m.get("step_ms") or m.get("time_ms") or 0) / 1e3
        base = {"source": source, "id": rec.get("id", ""), "model": rec["model"], "kind": kind,
                "params_b": w.model.num_params / 1e9, "batch": rec["batch"], "seq": rec["seq"], "held_out": held,
                "confidence": ce.confidence}
        if meas and est:
            rows.append({**base, "phase": phase, "meas_ms": meas * 1e3, "est_ms": est * 1e3,
                         "err": 100 * (est / meas - 1)})
        if m.get("decode_step_ms") and w.gen_tokens:
            st = decode_step(w, gpu_figures, batch=w.micro_batch, context=w.seq + w.gen_tokens // 2, engine="eager")
            rows.append({**base, "phase": "decode step (eager)", "meas_ms": m["decode_step_ms"],
                         "est_ms": st.time_s * 1e3, "err": 100 * (st.time_s * 1e3 / m["decode_step_ms"] - 1)})
    return rows, skipped


def summary(rows: list[dict], key: str = "phase") -> list[str]:
    out = ["| group | size | cases | within +-25% | mean abs error | worst | held-out cases | worst held-out |",
           "|---|---|---:|---:|---:|---:|---:|---:|"]
    groups = sorted({r[key] for r in rows})
    for g in groups:
        for size, test in ((">= 1B", lambda r: r["params_b"] >= 1), ("< 1B", lambda r: r["params_b"] < 1)):
            rs = [r for r in rows if r[key] == g and test(r)]
            if not rs:
                continue
            worst = max(rs, key=lambda r: abs(r["err"]))
            ho = [r for r in rs if r["held_out"]]
            wh = max(ho, key=lambda r: abs(r["err"])) if ho else None
            wh_text = "-" if wh is None else f"{wh['err']:+.1f}% ({wh['model']})"
            out.append(f"| {g} | {size} | {len(rs)} | {sum(abs(r['err']) <= 25 for r in rs)} | "
                       f"{sum(abs(r['err']) for r in rs) / len(rs):.1f}% | {worst['err']:+.1f}% ({worst['model']}) | "
                       f"{len(ho)} | {wh_text} |")
    return out


def decode_table(rows: list[dict]) -> list[str]:
    out = ["| run | model | params | batch | engine | measured tok/s | estimated tok/s | error | held out |",
           "| --- | --- | ---: | ---: | --- | ---: | ---: | ---: | --- |"]
    for r in rows:
        out.append(f"| {r['run']} | {r['model']} | {r['params_b']:.2f}B | {r['batch']} | {r['engine']} | "
                   f"{r['meas_tps']:,.1f} | {r['est_tps']:,.1f} | {r['err']:+.1f}% | "
                   f"{'yes' if r['held_out'] else ''} |")
    return out


def phase_table(rows: list[dict]) -> list[str]:
    out = ["| source | id | model | phase | kind | batch x seq | measured ms | estimated ms | error | held out | "
           "confidence |", "| --- | ---: | --- | --- | --- | --- | ---: | ---: | ---: | --- | --- |"]
    for r in rows:
        out.append(f"| {r['source']} | {r['id']} | {r['model']} | {r['phase']} | {r['kind']} | {r['batch']} x "
                   f"{r['seq']} | {r['meas_ms']:,.1f} | {r['est_ms']:,.1f} | {r['err']:+.1f}% | "
                   f"{'yes' if r['held_out'] else ''} | {r['confidence']} |")
    return out


def collect(validation: list[Path] | None = None) -> tuple[list[dict], list[dict], list[str]]:
    """Decode rows (per engine), phase rows (prefill, scoring, training, decode step) and the cases skipped."""
    gpu_figures = h100()
    drows = decode_rows(DATA / "decode-h100.json", gpu_figures, all_held_out=False, run="A")
    if (DATA / "decode-h100-host.json").exists():
        drows += decode_rows(DATA / "decode-h100-host.json", gpu_figures, all_held_out=True, run="B")
    # runs A and B repeated generate() over the same lengths, so some repeats reused the attention
    # plans the first one built (A: median of 2, B: of 5): their eager rows are listed, not scored
    for r in drows:
        if r["engine"] == "eager":
            r["engine"] = "eager (lengths repeated: not scored)"
    for path, card, run in ((LAB / "h100-round3" / "eager-check.json", "H100 SXM5 80GB", "C"),
                            (LAB / "h200-round3" / "eager-check.json", "H200 SXM 141GB", "D"),
                            (LAB / "h100-round4" / "eager-check-e.json", "H100 SXM5 80GB", "E"),
                            (LAB / "h100-round4" / "eager-check-f.json", "H100 SXM5 80GB", "F"),
                            (LAB / "h200-round4" / "eager-check-g.json", "H200 SXM 141GB", "G"),
                            (LAB / "h100-round5" / "eager-check-h.json", "H100 SXM5 80GB", "H"),
                            (LAB / "h200-round5" / "eager-check-i.json", "H200 SXM 141GB", "I")):
        if path.exists():
            drows += eager_check_rows(path, card, run)
    paths = list(validation) if validation else sorted(DATA.glob("validation-h100*.json"))
    reruns = {LAB / "h100-round3" / "validation-cases-profiled.json": "v2 rerun",  # 8 v2 cases again, profiled
              LAB / "h100-round4" / "validation-case98.json": "v2 rerun 2"}  # case 98, median of 5
    if not validation:
        paths += [p for p in reruns if p.exists()]
    prows: list[dict] = []
    skipped: list[str] = []
    for p in paths:
        src = reruns.get(p) or p.stem.replace("validation-h100", "v1").replace("v1-v2", "v2")
        r, s = phase_rows(p, gpu_figures, src)
        prows += r
        skipped += s
    return drows, prows, skipped


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--validation", action="append", help="validation JSON (repeatable; default: the ones in "
                    "tools/data)")
    ap.add_argument("--write", metavar="MD", help="write the tables into this Markdown file's generated section")
    args = ap.parse_args()
    drows, prows, skipped = collect([Path(p) for p in args.validation] if args.validation else None)
    text = ["## Decode (tools/data/decode-h100*.json)", "", "Error = estimated tok/s / measured tok/s - 1.", "",
            *summary(drows, "engine"), "",
            "Run A calibrated the engine profiles; run B is a second H100 machine of the same kind. Runs C (H100) "
            "and D (H200, another host) check the eager profile: generate() with a new length every step, "
            "estimated with the dispatch probe's figures from the same run (lab/device/eager_check.py). "
            "Run E (H100, another lease) repeats the check with the models in reverse order (the 8B at short "
            "contexts, the 1B at long ones), with cuDNN attention off (no plan build) and with left-padded "
            "batches (a mask: K and V copied per query head). Runs F (H100, a third lease) and G (H200, another "
            "host) add generate() timed on tiny models to the probe, which is what `gpuadvisor run` measures now. "
            "Runs H (H100, a fourth lease) and I (H200, cuDNN attention on and off) are the same check made after "
            "the last estimate changes, in reverse order: no figure or constant was fitted to them. "
            "Rows marked [no probe] are the same points estimated from the defaults alone.", "",
            *decode_table(drows), "", "## Prefill, scoring, training step and eager decode step (validation JSONs)",
            "", *summary(prows), "", *phase_table(prows)]
    if skipped:
        text += ["", f"Skipped {len(skipped)} case(s) the installed workload model cannot express:", "",
                 *[f"- {s}" for s in skipped]]
    body = "\n".join(text) + "\n"
    if args.write:
        md = Path(args.write)
        head = md.read_text().split("<!-- generated -->")[0] if md.exists() else ""
        md.write_text(head + "<!-- generated -->\n\n" + body)
        print(f"wrote {md}")
    else:
        print(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
