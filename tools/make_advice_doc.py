"""Write docs/advice.md: eight practitioner questions answered by `gpuadvisor recommend` itself.

Each answer is the exact command, its text output pasted, and a summary built from the same
command's --json (pick, cost, what binds), followed by a sanity check written against what
practitioners know. Run from the repository root after the catalog or the price snapshot
changes: `python3 -m tools.make_advice_doc` (about 10 s).
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
     "llama-3.1-70b --users 32 --context 8192",
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
     "llama-3-8b --mode lora --batch 4 --seq 2048 --checkpointing --tokens 20m --deadline 6h --hours-per-day 6",
     "The job: a 20M-token LoRA run that must fit into the day's 6 hours, so about 1,000 tokens/s or more. "
     "6 h/day is about 180 h/month. A card that does the job costs a few hundred to two thousand dollars; "
     "renting comparable work costs about $0.3-1 per hour. Break-even is purchase / (rent - electricity) hours: "
     "at 180 h/month buying pays back in one to three years, so the answer turns on the rental price one can "
     "actually get and on how long the card will stay useful."),
    ("Cheapest card for Stable Diffusion XL at batch 1",
     "sdxl --batch 2 --ttft 0.5",
     "SDXL's UNet has 2.6B parameters (5.1 GB in bf16); with its text encoders and VAE a card needs 8 GB at the "
     "least and 12 GB to be comfortable. One image at batch 1 runs the UNet at batch 2 (classifier-free guidance) "
     "for 20-50 steps; the target here is 0.5 s per step, about 15 s per 30-step image. An 8 GB card such as "
     "the RTX 4060 is the floor (SDXL users keep the text encoders off the GPU on it); the preset counts UNet "
     "FLOPs only, so the time per step is on the optimistic side, but the ranking of cards holds."),
]

INTRO = """# What the advisor answers: eight practitioner questions

Each answer below is `gpuadvisor recommend` run on this repository's catalog and price snapshot:
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


def _run(args: list[str]) -> str:
    env = {**os.environ, "COLUMNS": "160", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "gpuadvisor", "recommend", *args], capture_output=True, text=True,
                         cwd=ROOT, env=env, check=True)
    return out.stdout


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
        parts.append(f"or buy {buy['option']['label'][4:]} ({_cost(buy['option'])})")
    line = "; ".join(parts)
    o = (rent or buy)["option"]
    line += f"; binds: {o['binds']}"
    be = d.get("buy_vs_rent")
    if be and title.startswith("Buy or rent"):
        word = {"close": "close call", "buy": "buy", "rent": "rent"}[be["verdict"]]
        if be["break_even_months"] is None:
            line = f"{word}: buying never pays back; " + line
        else:
            line = (f"{word}: buying {be['purchase'][4:]} pays back after {be['break_even_months']:.0f} months "
                    f"of 6 h/day; " + line)
    return line[0].upper() + line[1:]


def _cost(o: dict) -> str:
    hw = o["hardware"]
    price = f"${o['usd_per_hour']:,.2f}/h" if hw["kind"] == "rent" else (
        f"${hw['purchase_usd']:,.0f} to buy" if hw["purchase_usd"] else "no price in the catalog")
    if o["mode"] != "inference":
        h = o["wall_s"] / 3600
        wall = f"{h / 24:,.1f} days" if h >= 48 else f"{h:,.1f} h"
        return f"{price}, {wall}, ${o['job_usd']:,.2f} for the job"
    if o["per_user_tokens_per_s"] is not None:
        mt = f", ${o['usd_per_mtok']:,.2f} per 1M tokens" if o["usd_per_mtok"] is not None else ""
        return f"{price}, {o['per_user_tokens_per_s']:,.0f} tok/s per user{mt}"
    return f"{price}, {o['request_s'] * 1000:,.0f} ms per request"


def main() -> int:
    parts = [INTRO]
    answers: list[str] = []
    for i, (title, args, sanity) in enumerate(QUESTIONS, 1):
        argv = [*shlex.split(args), "--top", "8"]
        text = _run(argv)
        data = json.loads(_run([*shlex.split(args), "--json"]))
        parts.append(f"## {i}. {title}\n")
        parts.append(f"```\ngpuadvisor recommend {args} --top 8\n```\n")
        parts.append("```\n" + text.rstrip() + "\n```\n")
        answer = one_line(title, data)
        answers.append(f"{i}. {title}: {answer}.")
        parts.append(f"**Answer**: {answer}.\n")
        parts.append("Picks (from `--json`):\n")
        parts.extend(_summary(data))
        parts.append(f"\n**Sanity check**: {sanity}\n")
    parts.insert(1, "## The answers in one line\n\n" + "\n".join(answers) + "\n")
    path = ROOT / "docs" / "advice.md"
    path.write_text("\n".join(parts))
    print(f"wrote {path.relative_to(ROOT)} ({len(QUESTIONS)} answers)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
