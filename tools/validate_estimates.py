#!/usr/bin/env python3
"""Validate gpuadvisor's memory and time estimates against real PyTorch runs.

Builds Hugging Face transformers models from configs with random weights (no download), runs
  * bf16 inference: prefill of a batch with the KV cache (use_cache=True, last-position logits),
  * mixed-precision training: fp32 weights, bf16 autocast, AdamW (foreach),
  * pure bf16 training: bf16 weights, gradients and AdamW states,
  * (where peft is installed) LoRA and checkpointing variants,
measures torch.cuda.max_memory_allocated (per phase) and median step times, and compares them
with gpuadvisor's estimate for the same workload on the same card (from the catalog).

  python3 tools/validate_estimates.py                   # on the GPU; writes $OUT/validation.json
  python3 tools/validate_estimates.py --device cpu --tiny   # shake out bugs without a GPU
  python3 tools/validate_estimates.py --compare validation.json  # re-estimate saved measurements
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gpuadvisor.estimate import Efficiency, HardwareFigures, estimate_compute, estimate_memory
from gpuadvisor.workload import make_workload, spec_from_config

GiB = 2**30

# HF configs as published (architecture keys only); dropout off, SDPA attention.
MODELS = {
    "gpt2": {"model_type": "gpt2", "n_layer": 12, "n_embd": 768, "n_head": 12, "vocab_size": 50257,
             "n_positions": 1024},
    "gpt2-medium": {"model_type": "gpt2", "n_layer": 24, "n_embd": 1024, "n_head": 16, "vocab_size": 50257,
                    "n_positions": 1024},
    "gpt2-large": {"model_type": "gpt2", "n_layer": 36, "n_embd": 1280, "n_head": 20, "vocab_size": 50257,
                   "n_positions": 1024},
    "llama-3.2-3b": {"model_type": "llama", "num_hidden_layers": 28, "hidden_size": 3072, "num_attention_heads": 24,
                     "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 8192, "vocab_size": 128256,
                     "tie_word_embeddings": True},
    "qwen2.5-0.5b": {"model_type": "qwen2", "num_hidden_layers": 24, "hidden_size": 896, "num_attention_heads": 14,
                     "num_key_value_heads": 2, "intermediate_size": 4864, "vocab_size": 151936,
                     "tie_word_embeddings": True},
    "tinyllama-1.1b": {"model_type": "llama", "num_hidden_layers": 22, "hidden_size": 2048,
                       "num_attention_heads": 32, "num_key_value_heads": 4, "intermediate_size": 5632,
                       "vocab_size": 32000, "tie_word_embeddings": False},
    "llama-3.2-1b": {"model_type": "llama", "num_hidden_layers": 16, "hidden_size": 2048, "num_attention_heads": 32,
                     "num_key_value_heads": 8, "head_dim": 64, "intermediate_size": 8192, "vocab_size": 128256,
                     "tie_word_embeddings": True},
    "qwen2.5-1.5b": {"model_type": "qwen2", "num_hidden_layers": 28, "hidden_size": 1536, "num_attention_heads": 12,
                     "num_key_value_heads": 2, "intermediate_size": 8960, "vocab_size": 151936,
                     "tie_word_embeddings": True},
    "phi-3-mini": {"model_type": "phi3", "num_hidden_layers": 32, "hidden_size": 3072, "num_attention_heads": 32,
                   "num_key_value_heads": 32, "intermediate_size": 8192, "vocab_size": 32064,
                   "tie_word_embeddings": False},
}
TINY = {
    "tiny-gpt2": {"model_type": "gpt2", "n_layer": 2, "n_embd": 64, "n_head": 4, "vocab_size": 1000,
                  "n_positions": 128},
    "tiny-llama": {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
                   "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 1000,
                   "tie_word_embeddings": False},
    "tiny-qwen2": {"model_type": "qwen2", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
                   "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 1000,
                   "tie_word_embeddings": True},
}

# (model, mode, batch, seq, extra)  mode: infer | mixed | bf16 | mixed-ckpt | lora
CASES = [
    ("gpt2", "infer", 16, 1024), ("gpt2", "mixed", 8, 1024), ("gpt2", "bf16", 8, 1024),
    ("gpt2-medium", "infer", 16, 1024), ("gpt2-medium", "mixed", 8, 1024), ("gpt2-medium", "bf16", 8, 1024),
    ("qwen2.5-0.5b", "infer", 16, 1024), ("qwen2.5-0.5b", "mixed", 4, 1024), ("qwen2.5-0.5b", "bf16", 4, 1024),
    ("tinyllama-1.1b", "infer", 16, 1024), ("tinyllama-1.1b", "mixed", 4, 1024),
    ("tinyllama-1.1b", "bf16", 4, 1024), ("tinyllama-1.1b", "mixed-ckpt", 8, 1024),
    ("llama-3.2-1b", "infer", 16, 1024), ("llama-3.2-1b", "mixed", 4, 1024), ("llama-3.2-1b", "bf16", 4, 1024),
    ("llama-3.2-1b", "lora", 4, 1024),
    ("qwen2.5-1.5b", "infer", 16, 1024), ("qwen2.5-1.5b", "mixed", 4, 1024), ("qwen2.5-1.5b", "bf16", 4, 1024),
    ("phi-3-mini", "infer", 8, 2048), ("phi-3-mini", "bf16", 2, 1024), ("phi-3-mini", "lora", 4, 1024),
]
# held out: not used to calibrate the constants (other sizes, sequence lengths, models)
HELD_OUT = [
    ("gpt2-large", "bf16", 4, 1024), ("gpt2-large", "infer", 8, 1024),
    ("llama-3.2-3b", "infer", 8, 2048), ("llama-3.2-3b", "bf16", 2, 2048),
    ("qwen2.5-0.5b", "mixed", 2, 2048), ("tinyllama-1.1b", "bf16-ckpt", 16, 1024),
    ("qwen2.5-1.5b", "lora", 8, 512),
]
TINY_CASES = [(m, mode, 2, 32) for m in TINY for mode in ("infer", "mixed", "bf16", "mixed-ckpt", "lora")]


def workload_for(name: str, cfg: dict, mode: str, batch: int, seq: int):
    spec = spec_from_config(cfg, name=name, origin=f"validate:{name}")
    if mode == "infer":
        return make_workload(spec, mode="inference", dtype="bf16", batch=batch, seq_len=seq, gen_tokens=0)
    if mode == "lora":
        return make_workload(spec, mode="lora", dtype="bf16", batch=batch, seq_len=seq, lora_rank=16)
    return make_workload(spec, mode="training", dtype="bf16", batch=batch, seq_len=seq,
                         mixed_precision=mode.startswith("mixed"), checkpointing=mode.endswith("ckpt"))


def estimate_row(rec: dict, hw: HardwareFigures, eff: Efficiency) -> dict:
    w = workload_for(rec["model"], rec["config"], rec["mode"], rec["batch"], rec["seq"])
    mem = estimate_memory(w)
    ce = estimate_compute(w, hw, eff)
    est_ms = (ce.prefill_time_s if w.mode == "inference" else ce.step_time_s) * 1e3
    m = rec["measured"]
    row = {
        "model": rec["model"], "mode": rec["mode"], "batch": rec["batch"], "seq": rec["seq"],
        "params_b": round(w.model.num_params / 1e9, 3),
        "est_gib": mem.tensors / GiB, "meas_gib": (m["peak_bytes"] / GiB) if m.get("peak_bytes") else None,
        "est_ms": est_ms, "meas_ms": m.get("time_ms"), "phase": mem.phase,
        "held_out": (rec["model"], rec["mode"], rec["batch"], rec["seq"]) in HELD_OUT,
        "breakdown_gib": {k: round(v / GiB, 3) for k, v in mem.items if v},
    }
    row["mem_err_pct"] = 100 * (row["est_gib"] / row["meas_gib"] - 1) if row["meas_gib"] else None
    row["time_err_pct"] = 100 * (row["est_ms"] / row["meas_ms"] - 1) if row["meas_ms"] else None
    return row


def markdown_table(rows: list[dict]) -> str:
    out = ["| model | mode | batch x seq | est GiB | meas GiB | mem err % | est ms | meas ms | time err % |",
           "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        name = r["model"] + (" (held out)" if r.get("held_out") else "")
        out.append(f"| {name} | {r['mode']} | {r['batch']} x {r['seq']} | {r['est_gib']:.2f} | "
                   f"{r['meas_gib']:.2f} | {r['mem_err_pct']:+.1f} | {r['est_ms']:.1f} | {r['meas_ms']:.1f} | "
                   f"{r['time_err_pct']:+.1f} |")
    return "\n".join(out)


def print_table(rows: list[dict]) -> None:
    hdr = f"{'model':16} {'mode':10} {'B':>3} {'S':>5} {'est GiB':>8} {'meas GiB':>8} {'err%':>6} " \
          f"{'est ms':>8} {'meas ms':>8} {'err%':>6}"
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        def f(v, d=2):
            return "-" if v is None else f"{v:.{d}f}"
        name = r["model"] + ("*" if r.get("held_out") else "")
        print(f"{name:16} {r['mode']:10} {r['batch']:>3} {r['seq']:>5} {f(r['est_gib']):>8} "
              f"{f(r['meas_gib']):>8} {f(r['mem_err_pct'], 1):>6} {f(r['est_ms'], 1):>8} {f(r['meas_ms'], 1):>8} "
              f"{f(r['time_err_pct'], 1):>6}")
    mem = [r for r in rows if r["mem_err_pct"] is not None]
    tim = [r for r in rows if r["time_err_pct"] is not None]
    if any(r.get("held_out") for r in rows):
        print("* held out: not used to calibrate the constants")
    if mem:
        worst = max(mem, key=lambda r: abs(r["mem_err_pct"]))
        print(f"worst memory error: {worst['mem_err_pct']:+.1f}% ({worst['model']} {worst['mode']})")
    if tim:
        worst = max(tim, key=lambda r: abs(r["time_err_pct"]))
        print(f"worst time error:   {worst['time_err_pct']:+.1f}% ({worst['model']} {worst['mode']})")


# ---- measuring ---------------------------------------------------------------------------------
def _hf_config(cfg: dict):
    import transformers

    cfg = dict(cfg)
    mt = cfg.pop("model_type")
    cls = {"gpt2": transformers.GPT2Config, "llama": transformers.LlamaConfig, "qwen2": transformers.Qwen2Config,
           "phi3": transformers.Phi3Config}[mt]
    if mt == "gpt2":
        cfg.update(resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    else:
        cfg.update(attention_dropout=0.0)
        if mt == "phi3":
            cfg.update(resid_pdrop=0.0, embd_pdrop=0.0, pad_token_id=0)
    return cls(**cfg)


def measure(name: str, cfg: dict, mode: str, batch: int, seq: int, device: str, reps: int) -> dict:
    import torch
    import transformers

    cuda = device == "cuda"
    hf_cfg = _hf_config(cfg)
    hf_cfg._attn_implementation = "sdpa"
    dtype = torch.float32 if mode.startswith("mixed") else torch.bfloat16
    if cuda:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated() if cuda else 0
    with torch.device(device):
        model = transformers.AutoModelForCausalLM.from_config(hf_cfg, dtype=dtype, attn_implementation="sdpa")
    model.to(device)
    gen = torch.Generator(device=device).manual_seed(0)
    x = torch.randint(0, hf_cfg.vocab_size, (batch, seq), device=device, generator=gen)

    def sync():
        if cuda:
            torch.cuda.synchronize()

    def peak():
        return (torch.cuda.max_memory_allocated() - base) if cuda else None

    def reset():
        if cuda:
            torch.cuda.reset_peak_memory_stats()

    out: dict = {}
    if mode == "infer":
        model.eval()

        def step():
            with torch.no_grad():
                o = model(input_ids=x, use_cache=True, logits_to_keep=1)
            return o

        o = step()
        del o
        sync()
        out["static_bytes"] = (torch.cuda.memory_allocated() - base) if cuda else None
        reset()
        o = step()
        sync()
        out["peak_bytes"] = peak()
        del o
    else:
        model.train()
        if mode.endswith("ckpt"):
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        if mode == "lora":
            import peft

            lcfg = peft.LoraConfig(r=16, lora_alpha=32, lora_dropout=0.0, target_modules="all-linear")
            model = peft.get_peft_model(model, lcfg)
        params = [p for p in model.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(params, lr=1e-5)
        amp = mode.startswith("mixed")
        phases: dict = {}

        def step(record=False):
            opt.zero_grad(set_to_none=True)
            if record:
                sync()
                reset()
            with torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=amp):
                loss = model(input_ids=x, labels=x).loss
            loss.backward()
            if record:
                sync()
                phases["fb_peak"] = peak()
                reset()
            opt.step()
            if record:
                sync()
                phases["opt_peak"] = peak()
            del loss

        step()
        sync()
        opt.zero_grad(set_to_none=True)
        sync()
        out["static_bytes"] = (torch.cuda.memory_allocated() - base) if cuda else None
        step(record=True)
        out.update({k + "_bytes": v for k, v in phases.items()})
        out["peak_bytes"] = max(phases["fb_peak"], phases["opt_peak"]) if cuda else None
    # timing
    times = []
    for _ in range(reps):
        sync()
        t0 = time.perf_counter()
        r = step()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
        del r
    out["time_ms"] = statistics.median(times)
    out["times_ms"] = [round(t, 3) for t in times]
    out["reserved_bytes"] = torch.cuda.max_memory_reserved() if cuda else None
    model = None  # free it before the next case
    gc.collect()
    if cuda:
        torch.cuda.empty_cache()
    return out


def device_ceilings(device: str) -> dict:
    """A bf16 8192^3 matmul and a 4 GiB device copy: the measured peaks (for the *_vs_measured efficiencies)."""
    import torch

    if device != "cuda":
        return {}
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(20):
        a @ b
    torch.cuda.synchronize()
    tflops = 2 * 8192**3 * 20 / (time.perf_counter() - t0) / 1e12
    src = torch.empty(2**30, device="cuda", dtype=torch.float32)
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(20):
        dst.copy_(src)
    torch.cuda.synchronize()
    gbs = 2 * src.numel() * 4 * 20 / (time.perf_counter() - t0) / 1e9
    del a, b, src, dst
    torch.cuda.empty_cache()
    return {"bf16_matmul_tflops": tflops, "copy_gbs": gbs}


def hardware(device_name: str | None) -> HardwareFigures:
    from gpuadvisor.catalog import load_catalog, match_device

    cat = load_catalog()
    card = (match_device(cat, device_name) if device_name else None) or cat.get("H100 SXM5 80GB")
    return HardwareFigures.from_card(card)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--tiny", action="store_true", help="tiny configs (for a CPU smoke test)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--only", help="comma-separated model names")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--compare", metavar="JSON", help="re-estimate saved measurements (no torch needed)")
    ap.add_argument("--markdown", action="store_true", help="with --compare: print a Markdown table")
    ap.add_argument("--mfu", type=float)
    ap.add_argument("--bw", type=float)
    args = ap.parse_args()
    eff = Efficiency()
    if args.mfu:
        eff = Efficiency(mfu=args.mfu, bandwidth=args.bw or eff.bandwidth)

    if args.compare:
        data = json.loads(Path(args.compare).read_text())
        hw = hardware(data["env"].get("device_name"))
        rows = [estimate_row(r, hw, eff) for r in data["records"] if "error" not in r]
        print(markdown_table(rows) if args.markdown else "", end="\n" if args.markdown else "")
        print_table(rows)
        return 0

    import torch
    import transformers

    models = TINY if args.tiny else MODELS
    cases = TINY_CASES if args.tiny else CASES + HELD_OUT
    if args.only:
        keep = set(args.only.split(","))
        cases = [c for c in cases if c[0] in keep]
    try:
        import peft  # noqa: F401
    except ImportError:
        cases = [c for c in cases if c[1] != "lora"]
    cuda = args.device == "cuda"
    env = {
        "torch": torch.__version__, "transformers": transformers.__version__,
        "device_name": torch.cuda.get_device_name() if cuda else "cpu",
        "driver": None, "date": time.strftime("%Y-%m-%d"),
    }
    if cuda:
        try:
            import pynvml

            pynvml.nvmlInit()
            env["driver"] = pynvml.nvmlSystemGetDriverVersion()
        except Exception as e:
            env["driver"] = f"unknown ({e})"
        env.update(device_ceilings(args.device))
    print(json.dumps(env), flush=True)
    hw = hardware(env["device_name"] if cuda else None)
    records = []
    for name, mode, batch, seq in cases:
        rec = {"model": name, "config": models[name], "mode": mode, "batch": batch, "seq": seq}
        t0 = time.perf_counter()
        try:
            rec["measured"] = measure(name, models[name], mode, batch, seq, args.device, args.reps)
        except Exception as e:
            rec["error"] = f"{type(e).__name__}: {e}"
            print(f"{name} {mode}: {rec['error']}", flush=True)
            if cuda:
                gc.collect()
                torch.cuda.empty_cache()
        rec["wall_s"] = time.perf_counter() - t0
        records.append(rec)
        if "measured" in rec:
            r = estimate_row(rec, hw, eff)
            print(f"{name:16} {mode:10} est {r['est_gib']:.2f} GiB meas {r['meas_gib'] or 0:.2f} GiB "
                  f"| est {r['est_ms']:.1f} ms meas {r['meas_ms']:.1f} ms ({rec['wall_s']:.1f}s)", flush=True)
    data = {"env": env, "records": records}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "validation.json").write_text(json.dumps(data, indent=1))
    rows = [estimate_row(r, hw, eff) for r in records if "measured" in r]
    (out / "validation_table.json").write_text(json.dumps({"env": env, "rows": rows}, indent=1))
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
