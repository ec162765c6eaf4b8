#!/usr/bin/env python3
"""Check of the eager engine profile on one GPU: the dispatch probe measures this host (op dispatch,
attention on a new sequence length), then generate() runs 1B, 3B and 8B models at batch 1, 8 and 32
with a prompt length no earlier call used (every decode step a new length, as in real use), and one
decode step of each model at batch 1 is profiled (its GPU time and top kernels). The estimate made
with the probe's figures is compared by tools/validate_time.py. Writes $OUT/eager-check.json.

  python3 tools/device/eager_check.py
"""

from __future__ import annotations

import itertools
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from bench_decode import MODELS, build_hf  # noqa: E402
from profile_summary import profile_call  # noqa: E402

_prompts = itertools.count(0)
GEN = 24


def log(*a):
    print(*a, flush=True)


def generate_fresh(model, hf, torch, batch: int, long_runs: int = 3) -> dict:
    """Per-step seconds of generate() where every call starts from a prompt length not used before:
    the median of `long_runs` (GEN + 1)-token runs minus that of three 1-token runs, over GEN."""
    def run(n, prompt):
        x = torch.randint(3, hf.vocab_size, (batch, prompt), device="cuda")
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.no_grad():
            model.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=n, min_new_tokens=n,
                           do_sample=False, pad_token_id=0, eos_token_id=None)
        torch.cuda.synchronize()
        return time.perf_counter() - t0

    def prompt():  # 64 apart: no call sees a length an earlier one used
        return 520 + 64 * next(_prompts)

    t1 = statistics.median([run(1, prompt()) for _ in range(3)])
    ps = [prompt() for _ in range(long_runs)]
    tn = statistics.median([run(GEN + 1, p) for p in ps])
    return {"step_s": (tn - t1) / GEN, "context_mean": statistics.mean(ps) + GEN / 2, "gen": GEN}


def decode_profile(model, hf, torch) -> dict:
    x = torch.randint(3, hf.vocab_size, (1, 512), device="cuda")
    with torch.no_grad():
        o = model(input_ids=x, use_cache=True, logits_to_keep=1)
        cache, nxt = o.past_key_values, o.logits[:, -1:].argmax(-1)
        for _ in range(3):
            o = model(input_ids=nxt, past_key_values=cache, use_cache=True, logits_to_keep=1)
            cache, nxt = o.past_key_values, o.logits[:, -1:].argmax(-1)

        def step():
            model(input_ids=nxt, past_key_values=cache, use_cache=True, logits_to_keep=1)

        return profile_call(step, top=12)


def main() -> int:
    import torch
    import transformers

    from probes.dispatch import attention_new_shape, measure

    out_dir = Path(os.environ.get("OUT", "out"))
    out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    res: dict = {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "torch": torch.__version__,
                 "transformers": transformers.__version__, "device_name": torch.cuda.get_device_name(),
                 "cpus": os.cpu_count(), "probe": {**measure(torch), **attention_new_shape(torch, calls=7)},
                 "generate": [], "profiles": {}}
    log("probe", res["probe"])
    for name in ("llama-3.2-1b", "llama-3.2-3b", "llama-3.1-8b"):
        model, hf = build_hf(MODELS[name], "cuda")
        try:
            res["profiles"][name] = decode_profile(model, hf, torch)
            log(name, "profile gpu_ms", res["profiles"][name]["gpu_ms"], res["profiles"][name]["families_ms"])
        except Exception as e:
            res["profiles"][name] = {"error": repr(e)[:300]}
        for b in (1, 8, 32):
            rec = {"model": name, "config": MODELS[name], "batch": b,
                   "params": sum(p.numel() for p in model.parameters())}
            try:
                rec.update(generate_fresh(model, hf, torch, b))
            except Exception as e:
                rec["error"] = repr(e)[:300]
            res["generate"].append(rec)
            log(rec)
        del model
        torch.cuda.empty_cache()
    res["probe_after"] = {**measure(torch), **attention_new_shape(torch, calls=7)}
    res["wall_s"] = round(time.time() - t0, 1)
    (out_dir / "eager-check.json").write_text(json.dumps(res, indent=1))
    log("done", res["wall_s"], "s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
