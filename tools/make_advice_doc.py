"""Write docs/advice.md: practitioner questions answered by the tool itself (`recommend`,
`estimate`, `check`), five of them the users of issue 23 (a student with an RTX 3060, a startup
serving a 70B model, a computer-vision engineer, a hobbyist buying a card, a cluster admin).

Each answer is the exact command, its text output pasted, and a summary built from the same
command's --json, followed by a sanity check written against what practitioners know. Run from
the repository root after the catalog, the estimator or the price snapshot changes:
`python3 -m tools.make_advice_doc` (about a minute); `--check` exits 1 when docs/advice.md is
not what the tool answers today (tests/test_advice_doc.py runs it).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

QUESTIONS = [
    ("Serve Llama-3.1-8B in bf16 to one user at 30 tok/s or more",
     "llama-3.1-8b --tok-s 30",
     "8B parameters in bf16 are 16 GB of weights that every generated token reads once, so one user's speed is "
     "about memory bandwidth / 16 GB: 30 tok/s needs roughly 600 GB/s of achieved bandwidth on a card with more "
     "than 16 GB. That rules out the L4 (300 GB/s, about 15 tok/s) and 16 GB cards, and rules in 24-48 GB cards "
     "(RTX 3090/4090, A10-class and up, L40S) or one small cloud GPU; an 8-GPU server would be waste."),
    ("Serve Llama-3.1-70B to 32 concurrent users at 8k context",
     "llama-3.1-70b --users 32 --input-len 7936",
     "70B in bf16 is 141 GB of weights, so at least 2 x 80 GB; the KV cache of 32 users x 8k tokens is another "
     "2 x 80 layers x 1,024 x 2 bytes = 320 KiB per token, 80 GiB for 262k tokens, so 2 x 80 GB cannot hold "
     "it: the answer needs 4 x 80 GB (or 8 x 48 GB) with tensor parallelism. Decode stays bandwidth-bound at "
     "this load."),
    ("QLoRA-tune a 7B model for 200M tokens within 24 h",
     "mistral-7b --mode qlora --batch 4 --seq 2048 --checkpointing --tokens 200m --deadline 24h",
     "QLoRA keeps the 7B base in 4 bits (about 4 GB) and trains adapters; with activation checkpointing one "
     "24-48 GB GPU fits it, and a single modern GPU processes a few thousand tokens/s, so 200M tokens take "
     "roughly 10-30 GPU-hours: one or two 48-80 GB cloud GPUs meet a day's deadline for tens of dollars."),
    ("Pre-train a 1B model on 100B tokens within 14 days",
     "llama-3.2-1b --mode training --batch 8 --seq 2048 --tokens 100b --deadline 14d",
     "6 x 1.24B params x 100B tokens = 7.4e20 FLOPs. One H100 at 40% MFU does 4e14 FLOP/s, so about 520 "
     "H100-hours; at the 20% model-FLOPs utilisation the estimate finds for this model (its 128k-token "
     "vocabulary makes the output layer and the logits a large share of the work) it is about 1,000 "
     "H100-hours: 4 H100s for about 11 days or 8 for about 6, a few thousand dollars."),
    ("Mixtral-8x7B inference with int4 weights",
     "mixtral-8x7b --dtype int4",
     "Mixtral has 46.7B parameters (all experts stay in memory) but only about 13B active per token: int4 weights "
     "are about 23.5 GB, so it needs more than 24 GB (a 32 GB or 48 GB card, or two 16-24 GB cards), and decode "
     "reads only the active experts, so it is fast for its size."),
    ("Can a Jetson Orin run a 3B model in int4 at 10 tok/s?",
     "llama-3.2-3b --dtype int4 --tok-s 10 --only orin",
     "Llama-3.2-3B in int4 is about 1.8 GB of weights (embeddings included). An Orin Nano 8GB has 68 GB/s of "
     "memory shared with its OS, so bandwidth alone allows about 30 tok/s; llama.cpp users report 15-25 tok/s "
     "for 3B q4 models on the Orin Nano, so 10 tok/s is comfortably met on every Orin. Prefill is slow: a "
     "1,024-token prompt takes seconds."),
    ("Buy or rent for 6 hours a day of 8B fine-tuning",
     "llama-3-8b --mode lora --batch 4 --seq 2048 --checkpointing --tokens 20m --deadline 6h --hours-per-day 6 "
     "--use-months 24",
     "The job: a 20M-token LoRA run that must fit into the day's 6 hours, so about 1,000 tokens/s or more. "
     "6 h/day is about 180 h/month. A card that does the job costs a few hundred to two thousand dollars; "
     "renting comparable work costs about $0.3-1 per hour. Break-even is purchase / (rent - electricity) hours: "
     "at 180 h/month buying pays back in one to three years, so the answer turns on the rental price one can "
     "actually get and on how long the card will stay useful."),
    ("Cheapest card for Stable Diffusion XL at batch 1",
     "sdxl-unet --batch 2 --ttft 0.5",
     "SDXL's UNet has 2.6B parameters (5.1 GB in bf16); with its text encoders and VAE a card needs 8 GB at the "
     "least and 12 GB to be comfortable. One image at batch 1 runs the UNet at batch 2 (classifier-free guidance) "
     "for 20-50 steps; the target here is 0.5 s per step, about 15 s per 30-step image. An 8 GB card such as "
     "the RTX 4060 is the floor (SDXL users keep the text encoders off the GPU on it); the preset counts UNet "
     "FLOPs only, so the time per step is on the optimistic side, but the ranking of cards holds."),
    ("Student: can my RTX 3060 (12 GB) QLoRA-tune Llama-3.1-8B on 20M tokens?",
     "estimate llama-3.1-8b --mode qlora --batch 4 --checkpointing --tokens 20m --gpu 3060",
     "QLoRA keeps the 8B base in 4 bits (about 5 GB with the 16-bit embeddings and head), and the adapters and "
     "their Adam states are small; what does not fit 12 GB at a micro-batch of 4 x 2,048 tokens is the "
     "activations, even checkpointed. A micro-batch of 1 with gradient accumulation (same effective batch) is "
     "what people run on 12 GB cards, and an RTX 3060 (about 25 dense bf16 TFLOPS) does a few hundred tokens/s: "
     "20M tokens take most of a day."),
    ("Student: what does my RTX 3060 serve in 4-bit, and how fast?",
     "estimate llama-3.1-8b --quant q4_k_m --gpu 3060 --users 1 --input-len 1024 --output-len 256",
     "A Q4_K_M 8B model is about 4.9 GB: it fits a 12 GB card with room for the KV cache, and one user's decode "
     "is bandwidth-bound at 360 GB/s / 4.9 GB, about 60 tok/s at most; llama.cpp users report 40-55 tok/s for "
     "8B Q4 models on an RTX 3060. The per-user figure also counts the prefill of each 1,024-token prompt."),
    ("Startup: serve Llama-3.1-70B to 100 concurrent users with 4k contexts at 20 tok/s each",
     "recommend llama-3.1-70b --users 100 --input-len 3840",
     "Memory first: 141 GB of bf16 weights plus 100 users x 4,096 tokens x 320 KiB = 125 GiB of KV cache, so at "
     "least four 80 GB GPUs. But every user's 3,840-token prompt must be prefilled too (this estimate assumes no "
     "prefix caching): at 20 tok/s each, 100 users start a new 256-token answer about every 13 s, about 30,000 "
     "prompt tokens/s, 4 PFLOP/s for a 70B model. That is eight B200-class or more H100-class GPUs, not four "
     "A100s; with prefix caching (chat turns reusing their history) far less."),
    ("Startup: the same 70B service on a $15,000-a-month budget",
     "recommend llama-3.1-70b --users 100 --input-len 3840 --budget-per-month 15000 --rent-only",
     "A month is 730 h, so $15,000 allows about $20/h: one 8-GPU H100 or H200 server rents for roughly that or "
     "more. The answer should either name such a rental or say plainly that nothing meets both the speed and "
     "the budget, and what comes closest."),
    ("Computer-vision engineer: train ViT-B/16 on 10 epochs of ImageNet (12.8M images) within a day",
     "recommend hf:vit-base-patch16-224 --mode training --batch 64 --samples 12.8m --deadline 24h --rent-only",
     "ViT-B/16 costs about 3 x 17.6 GFLOPs = 53 GFLOPs per training image, so 12.8M images are 6.8e17 FLOPs: "
     "hours on one modern GPU at realistic utilisation, minutes on eight. JPEG decoding and augmentation need "
     "CPU cores: instances with too few vCPUs per GPU are left out (the note says the default)."),
    ("Hobbyist: which card under $1,000 should I buy to chat with an 8B model?",
     "recommend llama-3.1-8b --tok-s 30 --buy-only --max-card-price 1000 --price-basis street",
     "An 8B model in bf16 is 16 GB of weights: a 24 GB card (a used RTX 3090) runs it at 40+ tok/s; 16 GB cards "
     "need a quantized model. Every card the answer names costs at most $1,000 each at street (used) prices, and "
     "prices are GPUs alone."),
    ("Hobbyist: buy or rent for a one-off 8B LoRA run?",
     "recommend llama-3-8b --mode lora --batch 4 --seq 2048 --checkpointing --tokens 20m",
     "A one-off job of a few GPU-hours rents for a few dollars; a card to buy costs hundreds to thousands. "
     "Buying cannot pay back within one job, and the answer should say so ('not worth buying') with what "
     "renting costs in all."),
    ("Cluster admin: does the shipped H200 node pass the acceptance rules?",
     "check --rules rules/training-node.yaml --probe reports/sample-h200x2-probe.json",
     "Both H200s reach their bandwidth, bf16 and NVLink thresholds, report no ECC, row-remap or XID errors, and "
     "agree with each other within 5% (bf16) and 3% (triad): a node to accept."),
    ("Cluster admin: will a 70B full fine-tune fit one 8x H100 node?",
     "estimate llama-3.1-70b --mode training --gpus 8 --sharding zero3 --batch 8 --checkpointing --tokens 1e8 "
     "--gpu 'H100 SXM5 80GB'",
     "Mixed-precision AdamW needs 16 bytes per parameter (fp32 weights, gradients, two moments) plus a bf16 copy: "
     "about 1.1 TB for 70B, against 640 GB on 8 x 80 GB. ZeRO-3 shards it but cannot make it smaller: it does "
     "not fit one node without an 8-bit optimizer, offload or more nodes, and the tool should say which."),
    ("Is a Tesla P40 a good cheap card for QLoRA?",
     "recommend llama-3.1-8b --mode qlora --batch 1 --checkpointing --tokens 20m --buy-only --only 'Tesla P40,3090' "
     "--price-basis street",
     "The P40 has 24 GB but no tensor cores and 1/64-rate fp16: its 16-bit matmuls run at its 12 TFLOPS FP32 "
     "rate, several times slower than an RTX 3090's tensor cores. Named explicitly it is costed at that rate "
     "and says so; it is never shortlisted on its own."),
]

INTRO = """# What the advisor answers: {n} practitioner questions

Each answer below is the tool (`recommend`, `estimate`, `check`) run on this repository's catalog
and price snapshot:
the exact command, its output, then the pick, its cost and what binds (from the same command's
`--json`), and a check against what practitioners know. All figures are estimates: datasheet
figures and calibrated efficiencies (BENCHMARKS.md), the rental snapshot's date and source in each
output, purchase prices from the catalog (list, street or estimate, GPUs alone). Serving assumes
a vLLM-class engine (CUDA graphs, continuous batching, paged KV cache); add `--engine eager` for
Hugging Face `generate()`.

How the picks are made (docs/recommend-json.md has the details): options that miss a target are
dropped; the frontier keeps those that no other option beats on both cost and time; *cheapest* is
the lowest cost that meets every target (serving: dollars per hour of the deployment, bought cards
amortised over 36 months plus electricity; training: dollars for the job), *best value* the
frontier point with the lowest cost x time, *fastest within budget* the quickest that meets the
budget (named only when a budget is set: without one it would name the biggest server there
is). Buy versus rent: break-even hours = purchase price /
(rental $/h - electricity $/h).

This file is written by `python3 -m tools.make_advice_doc`; rerun it when the catalog or the price
snapshot changes.
"""


def _snapshot_date() -> str:
    """The shipped price snapshot's date: the day the prices' age is counted to here, so the page
    does not change from one day to the next."""
    return str(json.loads((ROOT / "catalog" / "prices" / "rental.json").read_text())["source"]["date"])


def _run(args: list[str]) -> tuple[str, int]:
    env = {**os.environ, "COLUMNS": "160", "PYTHONPATH": str(ROOT), "GPUADVISOR_TODAY": _snapshot_date()}
    out = subprocess.run([sys.executable, "-m", "gpuadvisor", *args], capture_output=True, text=True, cwd=ROOT,
                         env=env)
    if out.returncode not in (0, 1):  # check exits 1 when a rule fails: an answer, not an error
        raise SystemExit(f"gpuadvisor {' '.join(args)} failed: {out.stderr.strip()}")
    return out.stdout, out.returncode


def _command(cmdline: str) -> tuple[str, list[str]]:
    """('recommend' | 'estimate' | 'check', its arguments); a bare argument list is a recommend."""
    argv = shlex.split(cmdline)
    if argv[0] in ("recommend", "estimate", "check"):
        return argv[0], argv[1:]
    return "recommend", argv


def _estimate_answer(d: dict) -> str:
    """One line from `estimate --json` (docs/answer.schema.json)."""
    detail = d.get("detail") or {}
    lay = detail.get("layout") or {}
    mem = d["memory"]["per_gpu_bytes"] / 2**30
    where = f"{d['hardware']['card']}" + (f" ({lay.get('layout')})" if lay.get("layout") else "")
    if not d["fits"]:
        fixes = detail.get("way_forward") or []
        more = ("; the cheapest change that fits: " + fixes[0]["line"]) if fixes else "; nothing tried makes it fit"
        return f"No: it does not fit {where} ({mem:,.1f} GiB per GPU needed){more}"
    speed = ""
    serving = d.get("serving") or {}
    if serving.get("per_user_tokens_per_s"):
        speed = f", {serving['per_user_tokens_per_s']:,.0f} tok/s per user"
    elif d["time"].get("job_s"):
        h = d["time"]["job_s"] / 3600
        speed = f", {h / 24:,.1f} days for the job" if h >= 48 else f", {h:,.1f} h for the job"
    return f"Yes: it fits {where} with {mem:,.1f} GiB per GPU{speed}"


def _check_answer(d: dict) -> str:
    devs = d.get("devices", [])
    bad = [f"GPU {g['index']}: {g['failures']} failed" for g in devs if not g["passed"]]
    if not bad:
        return f"Yes: every rule passes on all {len(devs)} GPUs"
    return "No: " + "; ".join(bad)


def _summary(d: dict) -> list[str]:
    lines = []
    picks = d["picks"]
    for name in ("cheapest_rental", "cheapest_single_gpu", "cheapest_purchase", "best_value"):
        p = picks.get(name)
        if p:
            o = p["option"]
            lines.append(f"- **{p['title']}**: {o['label']}; {_cost(o)}; binds: {o['binds_note'] or o['binds']}.")
    if d.get("buy_vs_rent"):
        lines.append(f"- **buy or rent**: {d['buy_vs_rent']['line']}.")
    if not picks and d.get("closest"):
        lines.append(f"- **nothing meets every target**; closest: {d['closest']['line']}")
        lines.append(f"- **it would take**: {d['what_it_would_take']}.")
    return lines


def one_line(title: str, d: dict) -> str:
    """The answer in one line, from the --json of the question's command."""
    picks = d["picks"]
    if not picks:
        c = d.get("closest")
        return f"No: nothing evaluated meets every target; closest is {c['option']['label']}" if c else "No option"
    rent = picks.get("cheapest_single_gpu") or picks.get("cheapest_rental")
    buy = picks.get("cheapest_purchase")
    parts = []
    if title.startswith("Can "):
        o = buy["option"] if buy else rent["option"]
        return f"Yes: the cheapest that does is the {o['hardware']['card']} ({_cost(o)}); binds: {o['binds']}"
    if rent:
        parts.append(f"rent {rent['option']['label']} ({_cost(rent['option'])})")
    if buy:
        parts.append(f"{'or ' if rent else ''}buy {buy['option']['label'][4:]} ({_cost(buy['option'])})")
    best = picks.get("best_value")
    if best and best["option"]["label"] not in {p["option"]["label"] for p in (rent, buy) if p}:
        parts.append(f"best value (cost x time): {best['option']['label']} ({_cost(best['option'])})")
    line = "; ".join(parts)
    o = (rent or buy)["option"]
    line += f"; binds: {o['binds']}"
    notes = (buy or rent)["option"].get("notes") or []
    if notes:
        line += f"; note: {notes[0]}"
    be = d.get("buy_vs_rent")
    if be and "buy or rent" in title.lower():
        word = {"close": "close call", "buy": "buy", "rent": "rent, not worth buying"}[be["verdict"]]
        if be["break_even_months"] is None:
            line = f"{word}: buying never pays back; " + line
        else:
            hpm = d["targets"]["hours_per_month"]
            line = (f"{word}: buying {be['purchase'][4:]} pays back after {be['break_even_hours']:,.0f} h of use "
                    f"({be['break_even_months']:.0f} months at {hpm:,.0f} h/month); " + line)
    return line[0].upper() + line[1:]


def _cost(o: dict) -> str:
    hardware = o["hardware"]
    price = f"${o['usd_per_hour']:,.2f}/h" if hardware["kind"] == "rent" else (
        f"${hardware['purchase_usd']:,.0f} to buy" if hardware["purchase_usd"] else "no price in the catalog")
    if o["mode"] != "inference":
        h = o["wall_s"] / 3600
        wall = f"{h / 24:,.1f} days" if h >= 48 else f"{h:,.1f} h"
        return f"{price}, {wall}, ${o['job_usd']:,.2f} for the job"
    if o["per_user_tokens_per_s"] is not None:
        mt = f", ${o['usd_per_mtok']:,.2f} per 1M tokens" if o["usd_per_mtok"] is not None else ""
        return f"{price}, {o['per_user_tokens_per_s']:,.0f} tok/s per user{mt}"
    return f"{price}, {o['request_s'] * 1000:,.0f} ms per request"


def render() -> str:
    parts = [INTRO.replace("{n}", str(len(QUESTIONS)))]
    answers: list[str] = []
    for i, (title, cmdline, sanity) in enumerate(QUESTIONS, 1):
        cmd, args = _command(cmdline)
        shown = args + (["--top", "8"] if cmd == "recommend" else [])
        text, _ = _run([cmd, *shown])
        data = json.loads(_run([cmd, *args, "--json"])[0])
        parts.append(f"## {i}. {title}\n")
        parts.append(f"```\ngpuadvisor {cmd} {shlex.join(shown)}\n```\n")
        parts.append("```\n" + text.rstrip() + "\n```\n")
        if cmd == "recommend":
            answer = one_line(title, data)
        elif cmd == "estimate":
            answer = _estimate_answer(data)
        else:
            answer = _check_answer(data)
        answers.append(f"{i}. {title}: {answer}.")
        parts.append(f"**Answer**: {answer}.\n")
        if cmd == "recommend":
            parts.append("Picks (from `--json`):\n")
            parts.extend(_summary(data))
        parts.append(f"\n**Sanity check**: {sanity}\n")
    parts.insert(1, "## The answers in one line\n\n" + "\n".join(answers) + "\n")
    return "\n".join(parts)


def main() -> int:
    import argparse

    ap = argparse.ArgumentParser(description="write docs/advice.md from the tool's own answers")
    ap.add_argument("--check", action="store_true", help="exit 1 if docs/advice.md differs from today's answers")
    args = ap.parse_args()
    path = ROOT / "docs" / "advice.md"
    text = render()
    if args.check:
        if path.read_text() != text:
            print(f"{path.relative_to(ROOT)} is out of date: run python tools/make_advice_doc.py", file=sys.stderr)
            return 1
        print(f"{path.relative_to(ROOT)} is current ({len(QUESTIONS)} answers)")
        return 0
    path.write_text(text)
    print(f"wrote {path.relative_to(ROOT)} ({len(QUESTIONS)} answers)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
