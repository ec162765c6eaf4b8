"""`gpuadvisor report`: one self-contained HTML file from probe results and/or a workload."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from gpuadvisor.cli.common import catalog_from
from gpuadvisor.errors import UserError

DEFAULT_DIR = "reports"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="write a self-contained HTML report (probe results, roofline, workload ranking)",
        description="Write one HTML file that works offline: device summary, measured vs datasheet, roofline, "
        "CPU-vs-GPU crossover from --probe; memory breakdown and ranking from --model.",
    )
    p.add_argument("--probe", metavar="RESULTS.json", help="saved probe results")
    add_workload_args(p)
    p.add_argument("-o", "--output", metavar="FILE.html", help=f"output file (default: {DEFAULT_DIR}/NAME.html)")
    p.add_argument("--title", help="report title")
    p.add_argument("--force", action="store_true", help="overwrite an existing output file")
    p.set_defaults(func=run)


def add_workload_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("workload")
    g.add_argument("--model", metavar="PRESET", help="preset name, parameter count ('7b') or a config.json path")
    g.add_argument("--mode", default="inference", help="inference, training, lora, qlora (default: inference)")
    g.add_argument("--dtype", default="bf16", help="fp32, bf16, fp16, fp8, int8, int4 (default: bf16)")
    g.add_argument("--batch", type=int, default=1, help="global batch, sequences per step (default: 1)")
    g.add_argument("--seq-len", type=int, default=0, metavar="TOKENS", help="tokens per sequence (default: model's)")
    g.add_argument(
        "--gpus", default="1,2,4,8", metavar="N[,N...]", help="GPU counts to consider per card (default: 1,2,4,8)"
    )
    g.add_argument("--price", type=float, metavar="USD", help="price per GPU-hour for the cost estimate")
    g.add_argument(
        "--tokens",
        type=float,
        default=0.0,
        metavar="N",
        help="training token budget for the time and cost estimate (default: one step)",
    )
    g.add_argument("--checkpointing", action="store_true", help="activation checkpointing (training)")
    g.add_argument("--optimizer", default="adamw", help="adamw, adamw8bit, sgd (training)")
    g.add_argument("--sharding", default="none", help="none, zero1, zero2, zero3, fsdp (training, several GPUs)")


def workload_from(args: argparse.Namespace) -> Any:
    if not args.model:
        return None
    from gpuadvisor.workload import make_workload

    return make_workload(
        args.model,
        mode=args.mode,
        dtype=args.dtype,
        batch=args.batch,
        seq_len=args.seq_len,
        num_gpus=min(gpu_counts(args.gpus)),
        checkpointing=args.checkpointing,
        optimizer=args.optimizer,
        sharding=args.sharding,
        train_tokens=args.tokens,
    )


def gpu_counts(text: str) -> tuple[int, ...]:
    try:
        counts = tuple(sorted({int(t) for t in str(text).split(",") if t.strip()}))
    except ValueError:
        raise UserError(f"--gpus: a count or a list of counts like 1,2,4,8, got {text!r}") from None
    if not counts or min(counts) < 1:
        raise UserError(f"--gpus: counts must be >= 1, got {text!r}")
    return counts


def default_output(run: Any, workload: Any) -> Path:
    parts = []
    if workload is not None:
        parts.append(workload.model.name)
    if run is not None:
        parts.append(run.devices[0].name if run.devices else "host")
    slug = re.sub(r"[^a-z0-9]+", "-", " ".join(parts).lower()).strip("-")[:80] or "report"
    return Path(DEFAULT_DIR) / f"{slug}.html"


def run(args: argparse.Namespace) -> int:
    from gpuadvisor import results

    if not args.probe and not args.model:
        raise UserError("nothing to report: give --probe RESULTS.json, --model PRESET, or both")
    run_result = results.load(args.probe) if args.probe else None
    workload = workload_from(args)
    catalog = catalog_from(args)
    out = Path(args.output) if args.output else default_output(run_result, workload)
    if out.suffix.lower() not in (".html", ".htm"):
        raise UserError(f"output file must end in .html: {out}")

    from gpuadvisor.fileio import atomic_write_text
    from gpuadvisor.report import build_report

    if args.price is not None and not args.price >= 0:
        raise UserError(f"--price must be >= 0, got {args.price}")
    html = build_report(
        run_result,
        workload,
        catalog,
        title=args.title,
        price_per_hour=args.price,
        gpu_counts=gpu_counts(args.gpus) if workload is not None else None,
    )
    path = atomic_write_text(out, html, force=args.force)
    print(f"wrote {path} ({len(html) / 1e6:.1f} MB, self-contained: open it in any browser, offline)")
    return 0
