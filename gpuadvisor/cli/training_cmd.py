"""`estimate`'s training-at-scale flags and their printout: a layout (--tp --pp --cp --ep --vp --micro-batch), a
framework profile, or --layout auto, costed by gpuadvisor.estimate.parallel (step time, tokens/s per GPU, memory
per GPU, time to train)."""

from __future__ import annotations

import argparse
from typing import Any

from gpuadvisor.cli.common import positive_float, positive_int

LAYOUTS = ("given", "auto")


def _fraction(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a fraction such as 0.05, got {text!r}") from None
    if not (0.0 <= v < 10.0):
        raise argparse.ArgumentTypeError(f"expected a fraction in [0, 10), got {text!r}")
    return v


def _count(text: str) -> float:
    from gpuadvisor.cli.estimate_cmd import token_count

    return float(token_count(text))


def add_training_args(p: argparse.ArgumentParser) -> None:
    from gpuadvisor.estimate.parallel import framework_names

    g = p.add_argument_group("training at scale (parallel layouts; training, lora, qlora)")
    g.add_argument("--micro-batch", type=positive_int, default=None, metavar="N",
                   help="sequences per GPU per forward/backward; gradient accumulation reaches the global --batch")
    if "--pp" not in p._option_string_actions:  # the serving flags define it too, with the same meaning
        g.add_argument("--pp", type=positive_int, default=1, help="pipeline-parallel degree")
    g.add_argument("--vp", type=positive_int, default=1, help="interleaved pipeline: model chunks per GPU (1: 1F1B)")
    g.add_argument("--cp", type=positive_int, default=1, help="context-parallel degree (ring attention)")
    g.add_argument("--ep", type=positive_int, default=1, help="expert-parallel degree (MoE)")
    g.add_argument("--framework", default=None, metavar="NAME",
                   help=f"training framework profile: {' | '.join(framework_names())} (default: hf, or megatron "
                        "with PP/CP/EP)")
    g.add_argument("--layout", choices=LAYOUTS, default="given",
                   help="auto: search the layouts that fit and take the fastest (degrees given stay fixed)")
    g.add_argument("--recompute", choices=("none", "selective", "full"), default=None,
                   help="activation recomputation (default: --checkpointing's full, else the fastest that fits)")
    g.add_argument("--gpus-per-node", type=positive_int, default=None, metavar="N",
                   help="GPUs per NVLink domain (default 8; 72 on GB200/GB300 NVL72)")
    g.add_argument("--net-gbs", type=positive_float, default=None, metavar="GB/s",
                   help="node network bandwidth per GPU between nodes (default 50: one 400 Gb/s NIC per GPU)")
    g.add_argument("--samples-seen", type=_count, default=0.0, metavar="N",
                   help="time to train: sequences to train on (a sample budget, or MLPerf's samples-seen target)")
    g.add_argument("--restart-overhead", type=_fraction, default=0.0, metavar="FRACTION",
                   help="time to train: checkpointing and restarts as a share of the step time (e.g. 0.05)")


def print_training(parts: Any, hardware_source: str) -> None:
    """A training layout's answer: the layout, memory per GPU, the step and where it goes, time to train;
    `hardware_source` (the answer's) says which peak its MFU is of."""
    from rich.table import Table

    from gpuadvisor.cli.common import console
    from gpuadvisor.estimate.memory_result import GiB

    w, card, fw, est, budget, how, ranked = (parts.workload, parts.card, parts.framework, parts.chosen, parts.budget,
                                             parts.how, parts.ranked)
    con = console()
    lay = est.layout
    con.print(f"[bold]{w.model.name} {w.mode} ({w.dtype}) on {w.num_gpus} x {card.name}[/bold], global batch "
              f"{w.batch} x {w.seq} tokens, framework {fw.name}: {fw.description}")
    con.print(f"layout ({how}): TP {lay.tp}, PP {lay.pp}" + (f" x VP {lay.vp}" if lay.vp > 1 else "")
              + f", CP {lay.cp}" + (f", EP {lay.ep}" if lay.ep > 1 else "") + f", DP {lay.dp(w.num_gpus)}; "
              f"micro-batch {lay.micro_batch}, {est.grad_accum} micro-batches per step; sharding {lay.sharding}; "
              f"recomputation {lay.checkpointing}")
    t = Table(title="memory per GPU (fullest pipeline stage)")
    t.add_column("item")
    t.add_column("GiB", justify="right")
    for k, v in est.memory.items:
        if v:
            t.add_row(k, f"{v / GiB:.1f}")
    t.add_row("[bold]total[/bold]", f"[bold]{est.memory.total / GiB:.1f}[/bold]")
    con.print(t)
    cap = f"{card.memory_gib:g} GiB on the card" if card.memory_gib else "card memory unknown"
    con.print(f"{card.name}: {'fits' if est.fits else 'does NOT fit'} ({est.memory.total / GiB:.1f} GiB per GPU, "
              f"{cap})")
    con.print(f"[bold]step[/bold] {est.step_s:.3g} s: {est.tokens_per_s_per_gpu:,.0f} tokens/s per GPU, "
              f"{est.tokens_per_s:,.0f} tokens/s in all, MFU {est.mfu:.0%} of the "
              f"{'measured' if hardware_source == 'measured' else 'datasheet'} bf16 peak (estimate)")
    shares = ", ".join(f"{k} {v / est.step_s:.0%}" for k, v in est.parts if v / est.step_s >= 0.005)
    con.print(f"  where the step goes: {shares}")
    for n in parts.notes:
        con.print(f"  note: {n}")
    if budget.steps > 1:
        extra = f" (+{budget.overhead:.0%} checkpoints and restarts)" if budget.overhead else ""
        con.print(f"[bold]time to train[/bold]: {budget.steps:,} steps ({budget.tokens:.3g} tokens), "
                  f"{budget.seconds / 3600:,.1f} h{extra}")
    alts = [e for e in ranked[1:] if e.fits][:3]
    if alts:
        con.print("next fastest that fit: " + "; ".join(
            f"{e.layout.label()} {e.tokens_per_s_per_gpu:,.0f} tok/s/GPU" for e in alts))
