#!/usr/bin/env python3
"""Why eager decode's speed depends on the host: one run that measures the host's dispatch costs
(an eager op, a synchronizing call) and Hugging Face eager decoding (generate() and a plain loop over
forward()) of three models at batch 1, 8 and 32, first on a quiet host, then with the CPU loaded by
busy processes (the condition the slow calibration host showed). It also counts the synchronizing
calls per generate() step and profiles where generate()'s host time goes.

The eager engine profile is then a function of two measured host figures (gpuadvisor/estimate/
engines.py); this run is its check. Writes $OUT/host-eager.json.

  python3 -m lab.device.host_eager [--quick]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import multiprocessing as mp
import os
import pstats
import statistics
import time
import warnings
from pathlib import Path

from lab.bench_decode import MODELS, build_hf


def log(*a):
    print(*a, flush=True)


def _burn(stop):
    while not stop.is_set():
        for _ in range(100_000):
            pass


def host_figures() -> dict:
    """The two host figures the eager profile uses, measured with PyTorch on this host now."""
    import torch

    from probes.dispatch import measure

    return measure(torch)


def generate_step(model, hf, batch: int, prompt: int, gen: int) -> dict:
    import torch

    g = torch.Generator(device="cuda").manual_seed(batch)
    x = torch.randint(3, hf.vocab_size, (batch, prompt), device="cuda", generator=g)
    mask = torch.ones_like(x)

    def run(n):
        with torch.no_grad():
            return model.generate(x, attention_mask=mask, max_new_tokens=n, min_new_tokens=n, do_sample=False,
                                  pad_token_id=0, eos_token_id=None)

    def wall(fn, reps):
        ts = []
        for _ in range(reps):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            ts.append(time.perf_counter() - t0)
        return statistics.median(ts)

    run(2)
    t1 = wall(lambda: run(1), 3)
    tn = wall(lambda: run(gen + 1), 2)
    # a plain loop over forward() with the dynamic cache: generate()'s own bookkeeping left out
    with torch.no_grad():
        o = model(input_ids=x, attention_mask=mask, use_cache=True, logits_to_keep=1)
        cache, nxt = o.past_key_values, o.logits[:, -1:].argmax(-1)
        m = mask
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(gen):
            m = torch.cat([m, m[:, :1]], dim=1)
            o = model(input_ids=nxt, attention_mask=m, past_key_values=cache, use_cache=True, logits_to_keep=1)
            cache, nxt = o.past_key_values, o.logits[:, -1:].argmax(-1)
        torch.cuda.synchronize()
        loop = (time.perf_counter() - t0) / gen
        # the same loop's GPU time alone: dispatch it all, then time the GPU stream with events
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        o = model(input_ids=x, attention_mask=mask, use_cache=True, logits_to_keep=1)
        cache, nxt, m = o.past_key_values, o.logits[:, -1:].argmax(-1), mask
        torch.cuda.synchronize()
        torch.cuda._sleep(int(2e9 * 0.2))  # keep the GPU busy while the host queues the loop (~0.2 s)
        s.record()
        for _ in range(8):
            m = torch.cat([m, m[:, :1]], dim=1)
            o = model(input_ids=nxt, attention_mask=m, past_key_values=cache, use_cache=True, logits_to_keep=1)
            cache, nxt = o.past_key_values, o.logits[:, -1:].argmax(-1)
        e.record()
        e.synchronize()
        gpu = s.elapsed_time(e) / 8 / 1e3
    del cache, o
    # synchronizing calls per generate() step: counted through CUDA's sync debug mode
    torch.cuda.set_sync_debug_mode("warn")
    try:
        counts = []
        for n in (1, 9):
            with warnings.catch_warnings(record=True) as ws:
                warnings.simplefilter("always")
                run(n)
            counts.append(sum("synchroniz" in str(w.message) for w in ws))
    finally:
        torch.cuda.set_sync_debug_mode(0)
    return {"batch": batch, "prompt": prompt, "gen": gen, "generate_step_s": (tn - t1) / gen,
            "loop_step_s": loop, "loop_gpu_step_s": gpu, "syncs_per_step": (counts[1] - counts[0]) / 8,
            "syncs_generate_1": counts[0]}


def generate_profile(model, hf) -> list[str]:
    """Top host functions of a 17-token generate() at batch 1, by own time."""
    import torch

    x = torch.randint(3, hf.vocab_size, (1, 128), device="cuda")
    pr = cProfile.Profile()
    with torch.no_grad():
        model.generate(x, max_new_tokens=2, min_new_tokens=2, do_sample=False, pad_token_id=0, eos_token_id=None)
        pr.enable()
        model.generate(x, max_new_tokens=17, min_new_tokens=17, do_sample=False, pad_token_id=0, eos_token_id=None)
        pr.disable()
    buf = io.StringIO()
    pstats.Stats(pr, stream=buf).sort_stats("tottime").print_stats(14)
    return [ln for ln in buf.getvalue().splitlines() if ln.strip()][-16:]


def decode_set(models: dict, names: list[str], batches: list[int], prompt: int, gen: int, deadline: float) -> list:
    out = []
    for name in names:
        model, hf = models[name]
        for b in batches:
            if time.time() > deadline:
                out.append({"model": name, "batch": b, "error": "skipped: deadline"})
                continue
            try:
                rec = {"model": name, "layers": hf.num_hidden_layers, **generate_step(model, hf, b, prompt, gen)}
            except Exception as e:
                rec = {"model": name, "batch": b, "error": repr(e)[:300]}
            out.append(rec)
            log(f"  {name} b={b}: " + " ".join(f"{k}={v * 1e3:.2f}ms" if k.endswith("_s") else f"{k}={v}"
                                              for k, v in rec.items() if k not in ("model",)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="one model, one load level")
    ap.add_argument("--budget-s", type=float, default=420)
    args = ap.parse_args()
    import torch
    import transformers

    t_start = time.time()
    deadline = t_start + args.budget_s
    out_dir = Path(os.environ.get("OUT", "out"))
    out_dir.mkdir(parents=True, exist_ok=True)
    res: dict = {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "torch": torch.__version__,
                 "transformers": transformers.__version__, "device_name": torch.cuda.get_device_name(),
                 "cpus": os.cpu_count(), "levels": []}
    names = ["llama-3.2-1b"] if args.quick else ["llama-3.2-1b", "llama-3.2-3b", "llama-3.1-8b"]
    models = {n: build_hf(MODELS[n], "cuda") for n in names}
    log(f"built {names} in {time.time() - t_start:.1f}s")
    cpus = os.cpu_count() or 1
    levels = [0] if args.quick else [0, cpus, 2 * cpus]
    for n_burn in levels:
        stop = mp.Event()
        procs = [mp.Process(target=_burn, args=(stop,), daemon=True) for _ in range(n_burn)]
        for p in procs:
            p.start()
        time.sleep(0.5)
        try:
            lvl = {"busy_processes": n_burn, "host": host_figures()}
            log(f"load {n_burn}: host {lvl['host']}")
            sub = names if n_burn == 0 else [names[0], names[-1]]
            lvl["decode"] = decode_set(models, sub, [1, 8, 32], 512, 32, deadline)
            if time.time() < deadline:
                lvl["generate_profile"] = generate_profile(*models[names[0]])
            lvl["host_after"] = host_figures()
        finally:
            stop.set()
            for p in procs:
                p.join(timeout=5)
                if p.is_alive():
                    p.terminate()
        res["levels"].append(lvl)
        (out_dir / "host-eager.json").write_text(json.dumps(res, indent=1))
    res["wall_s"] = round(time.time() - t_start, 1)
    (out_dir / "host-eager.json").write_text(json.dumps(res, indent=1))
    log(f"done in {res['wall_s']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
