"""`gpuadvisor recommend MODEL`: rank catalog cards and 1/2/4/8-GPU configurations."""

from __future__ import annotations

import argparse

from gpuadvisor.cli.common import gpu_counts_arg, non_negative_float
from gpuadvisor.cli.estimate_cmd import (
    add_workload_args,
    describe_workload,
    efficiency_from,
    fmt_time,
    print_presets,
    workload_from,
)
from gpuadvisor.errors import UserError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("recommend", help="rank GPUs and 1/2/4/8-GPU setups for a workload")
    add_workload_args(p)
    p.add_argument("--gpu-counts", type=gpu_counts_arg, default=[1, 2, 4, 8], metavar="N,N", help="default 1,2,4,8")
    p.add_argument("--price-per-hour", type=non_negative_float, metavar="USD",
                   help="rental price per GPU-hour (cost = price x GPUs x time); default: launch price x GPUs")
    p.add_argument("--sort", default="time", choices=["time", "cost", "energy", "memory"])
    p.add_argument("--probe", metavar="RESULTS.json", help="probe result: measured figures replace the local card's")
    p.add_argument("--top", type=int, default=15, help="rows of fitting options to show (default 15)")
    p.add_argument("--all", action="store_true", help="show every GPU count that fits, not only the fewest per card")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.list_models:
        return print_presets(args.json)
    from gpuadvisor.cli.common import catalog_from, console, print_json
    from gpuadvisor.recommend import fewest_gpus_per_card, recommend, why_not

    w = workload_from(args)
    eff = efficiency_from(args)
    if args.top < 1:
        raise UserError(f"--top must be >= 1, got {args.top}")
    catalog = catalog_from(args)
    measured = None
    if args.probe:
        from gpuadvisor import results

        measured = results.load(args.probe)
    options = recommend(w, catalog, gpu_counts=args.gpu_counts, price_per_hour=args.price_per_hour,
                        measured=measured, sort_by=args.sort, efficiency=eff)
    if measured is not None and not any(o.uses_measured for o in options):
        raise UserError(f"{args.probe}: its GPU matches no card in the catalog")
    fails = why_not(options)
    if args.json:
        print_json({"workload": w.to_dict(), "model": w.model.to_dict(), "sort_by": args.sort,
                    "options": [o.to_dict() for o in options], "not_fitting": fails,
                    "estimate": True})
        return 0
    from rich.table import Table

    con = console()
    con.print(f"[bold]{describe_workload(w)}[/bold]")
    fitting = [o for o in options if o.fits] if args.all else fewest_gpus_per_card(options)
    if fitting:
        cost_head = "cost $" if args.price_per_hour is not None else "price $ (launch)"
        what = "configurations" if args.all else "fewest GPUs per card"
        t = Table(title=f"{what} that fit, by {args.sort} (estimates)")
        for col in ("#", "card", "GPUs", "layout", "GiB/GPU", "time", "throughput", cost_head, "energy Wh", "bound"):
            t.add_column(col, justify="left" if col in ("card", "layout", "bound") else "right")
        for i, o in enumerate(fitting[: args.top], 1):
            ce = o.compute
            if w.mode == "inference":
                thr = f"{ce.decode_tokens_per_s:,.0f} tok/s" if ce.decode_tokens_per_s else (
                    f"{ce.prefill_tokens_per_s:,.0f} tok/s" if ce.prefill_tokens_per_s else "-")
            else:
                thr = f"{ce.tokens_per_s:,.0f} tok/s" if ce.tokens_per_s else "-"
            lay = []
            if o.workload.tensor_parallel > 1:
                lay.append(f"TP{o.workload.tensor_parallel}")
            if o.workload.data_parallel > 1:
                lay.append(o.workload.sharding if o.workload.sharding != "none" else f"DP{o.workload.data_parallel}")
            name = o.card + (" *" if o.uses_measured else "")
            t.add_row(str(i), name, str(o.num_gpus), "+".join(lay) or "-",
                      f"{o.needed_gib:.1f}/{o.memory_gib_per_gpu:g}",
                      fmt_time(o.time_s), thr, "-" if o.cost_usd is None else f"{o.cost_usd:,.2f}",
                      "-" if o.energy_wh is None else f"{o.energy_wh:,.1f}", ce.bound or "-")
        con.print(t)
        if any(o.uses_measured for o in fitting):
            con.print("* measured figures from the probe result replace the datasheet for this card")
    else:
        con.print("[bold red]no catalog card fits this workload at the GPU counts tried[/bold red]")
    if fails:
        con.print("[bold]cards that do not fit:[/bold]")
        for card, reason in fails.items():
            con.print(f"  {card}: {reason}")
    mfu, bw = eff.mfu, eff.bandwidth
    con.print(f"estimates: MFU {mfu:.0%}, bandwidth efficiency {bw:.0%} of datasheet "
              "(set --mfu/--bw-eff); times for the workload as given; see BENCHMARKS.md for accuracy")
    return 0
