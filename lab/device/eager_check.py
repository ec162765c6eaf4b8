#!/usr/bin/env python3
"""Check of the eager engine profile on one GPU: the dispatch probe measures this host (op dispatch,
attention on a new sequence length), then generate() runs 1B, 3B and 8B models at batch 1, 8 and 32
with a prompt length no earlier call used (every decode step a new length, as in real use), and one
decode step of each model at batch 1 is profiled (its GPU time and top kernels). The estimate made
with the probe's figures is compared by tools/validate_time.py. Writes $OUT/<name>.json.

Variants (--variants) check the parts of the model one at a time: `nocudnn` runs generate() with
cuDNN attention off (no plan build: dispatch and GPU time alone), `padded` left-pads a quarter of
each prompt batch (a materialized mask: transformers then repeats K and V for every query head).

  python3 -m lab.device.eager_check [--reverse] [--variants default,nocudnn,padded] [--name eager-check]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import sys
import time
from pathlib import Path

from lab.bench_decode import MODELS, build_hf
from lab.profile_summary import profile_call

_prompts = itertools.count(0)
GEN = 24


def log(*a):
    print(*a, flush=True)


def generate_fresh(model, hf, torch, batch: int, long_runs: int = 3, padded: bool = False) -> dict:
    """Per-step seconds of generate() where every call starts from a prompt length not used before:
    the median of `long_runs` (GEN + 1)-token runs minus that of three 1-token runs, over GEN.
    `padded`: the first quarter of the rows (at least one) has 16 pad positions on the left."""
    def run(n, prompt):
        x = torch.randint(3, hf.vocab_size, (batch, prompt), device="cuda")
        mask = torch.ones_like(x)
        if padded:
            mask[: max(1, batch // 4), :16] = 0
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.no_grad():
            model.generate(x, attention_mask=mask, max_new_tokens=n, min_new_tokens=n,
                           do_sample=False, pad_token_id=0, eos_token_id=None)
        torch.cuda.synchronize()
        return time.perf_counter() - t0

    def prompt():  # 64 apart: no call sees a length an earlier one used
        return 520 + 64 * next(_prompts)

    t1 = statistics.median([run(1, prompt()) for _ in range(3)])
    ps = [prompt() for _ in range(long_runs)]
    tn = statistics.median([run(GEN + 1, p) for p in ps])
    return {"step_s": (tn - t1) / GEN, "context_mean": statistics.mean(ps) + GEN / 2, "gen": GEN}


def decode_profile(model, hf, torch, batch: int = 1, prompt: int = 512, padded: bool = False) -> dict:
    """One decode step after a `prompt`-token prefill, under the profiler; `padded` passes a mask with
    16 pad positions on the left of the first quarter of the rows (as generate() would)."""
    x = torch.randint(3, hf.vocab_size, (batch, prompt), device="cuda")
    mask = torch.ones_like(x)
    if padded:
        mask[: max(1, batch // 4), :16] = 0
    one = torch.ones(batch, 1, dtype=mask.dtype, device="cuda")
    with torch.no_grad():
        o = model(input_ids=x, attention_mask=mask, use_cache=True, logits_to_keep=1)
        cache, nxt = o.past_key_values, o.logits[:, -1:].argmax(-1)
        for _ in range(3):
            mask = torch.cat([mask, one], dim=1)
            o = model(input_ids=nxt, attention_mask=mask, past_key_values=cache, use_cache=True, logits_to_keep=1)
            cache, nxt = o.past_key_values, o.logits[:, -1:].argmax(-1)
        mask = torch.cat([mask, one], dim=1)

        def step():
            model(input_ids=nxt, attention_mask=mask, past_key_values=cache, use_cache=True, logits_to_keep=1)

        return profile_call(step, top=12)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reverse", action="store_true", help="8B first (short contexts), 1B last (long ones)")
    ap.add_argument("--variants", default="default", help="comma list of default, nocudnn, padded")
    ap.add_argument("--name", default="eager-check", help="output file name without .json")
    args = ap.parse_args()
    variants = [v for v in args.variants.split(",") if v]
    bad = set(variants) - {"default", "nocudnn", "padded"}
    if bad:
        print(f"eager_check: unknown variant(s) {', '.join(sorted(bad))}", file=sys.stderr)
        return 2
    import torch
    import transformers

    from probes.dispatch import attention_new_shape, eager_generate, measure

    def probe() -> dict:
        r = {**measure(torch), **attention_new_shape(torch, calls=7)}
        try:
            r.update({f"generate_{k}": v for k, v in eager_generate(torch).items()})
        except Exception as e:
            r["generate_error"] = repr(e)[:300]
        return r

    out_dir = Path(os.environ.get("OUT", "out"))
    out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    res: dict = {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "torch": torch.__version__,
                 "transformers": transformers.__version__, "device_name": torch.cuda.get_device_name(),
                 "cpus": os.cpu_count(), "probe": probe(),
                 "generate": [], "profiles": {}}
    log("probe", res["probe"])

    def save() -> None:
        res["wall_s"] = round(time.time() - t0, 1)
        (out_dir / f"{args.name}.json").write_text(json.dumps(res, indent=1))
    res["variants"] = variants
    names = ["llama-3.2-1b", "llama-3.2-3b", "llama-3.1-8b"]
    for name in reversed(names) if args.reverse else names:
        model, hf = build_hf(MODELS[name], "cuda")
        try:
            res["profiles"][name] = decode_profile(model, hf, torch)
            log(name, "profile gpu_ms", res["profiles"][name]["gpu_ms"], res["profiles"][name]["families_ms"])
        except Exception as e:
            res["profiles"][name] = {"error": repr(e)[:300]}
        if "padded" in variants:  # the KV cache's passes at batch 8, 2048 tokens: without and with a mask
            for pad in (False, True):
                key = f"{name} b8 2048{' padded' if pad else ''}"
                try:
                    res["profiles"][key] = decode_profile(model, hf, torch, batch=8, prompt=2048, padded=pad)
                    log(key, "gpu_ms", res["profiles"][key]["gpu_ms"], res["profiles"][key]["families_ms"])
                except Exception as e:
                    res["profiles"][key] = {"error": repr(e)[:300]}
        for b, variant in itertools.product((1, 8, 32), variants):
            if variant == "padded" and b == 1:
                continue  # one row: nothing to pad against
            rec = {"model": name, "config": MODELS[name], "batch": b, "variant": variant,
                   "params": sum(p.numel() for p in model.parameters())}
            torch.backends.cuda.enable_cudnn_sdp(variant != "nocudnn")
            try:
                rec.update(generate_fresh(model, hf, torch, b, padded=variant == "padded"))
            except Exception as e:
                rec["error"] = repr(e)[:300]
            finally:
                torch.backends.cuda.enable_cudnn_sdp(True)
            res["generate"].append(rec)
            log(rec)
        del model
        torch.cuda.empty_cache()
        save()  # after each model: a run cut short by the caller's time limit keeps what it measured
    res["probe_after"] = probe()
    save()
    log("done", res["wall_s"], "s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
