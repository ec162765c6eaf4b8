"""`gpuadvisor run`: the main job. Measure what is here, compare, recommend, write a report.

It composes the other commands' pieces rather than re-implementing them: the probe runner and
its summary, the recommender, and the report builder. Without a GPU it still measures the host
and recommends from the catalog, and says plainly that no GPU was found.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import sys
from pathlib import Path
from typing import Any

from gpuadvisor.cli.advisor_args import add_target_args
from gpuadvisor.cli.common import add_refresh_host
from gpuadvisor.cli.estimate_cmd import add_workload_args, efficiency_from, workload_from

DEFAULT_MODEL = "llama-3-8b"
DEFAULT_DIR = Path("reports")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run",
        help="the main job: probe this machine, compare with the datasheet, recommend, write a report",
        description="Probe this machine (GPUs and host), compare each figure with the datasheet, recommend "
        f"cards for a model (default {DEFAULT_MODEL}, bf16 inference) and write an HTML report.",
    )
    add_workload_args(p)
    add_target_args(p)
    p.set_defaults(model=None)
    p.add_argument("--full", action="store_true", help="the longer probe run (~30 s on an H100; the first on a "
                   "host also times generate(), ~15 s more)")
    add_refresh_host(p)
    p.add_argument("--out-dir", default=str(DEFAULT_DIR), metavar="DIR", help="where results and report go")
    p.add_argument("--no-report", action="store_true", help="skip the HTML report")
    p.add_argument("--top", type=int, default=8, help="rows of the speed ranking in --json (default 8)")
    p.set_defaults(func=run)


def _stamp(result: Any) -> str:
    return re.sub(r"[^0-9T]", "", result.created_at)[:15] or dt.datetime.now().strftime("%Y%m%dT%H%M%S")


def _unique(path: Path) -> Path:
    """Never overwrite an earlier run's files: add a counter when the name is taken."""
    if not path.exists():
        return path
    for i in range(2, 1000):
        candidate = path.with_name(f"{path.stem}-{i}{path.suffix}")
        if not candidate.exists():
            return candidate
    return path


def run(args: argparse.Namespace) -> int:
    from gpuadvisor.advisor.ranking import recommend, why_not
    from gpuadvisor.cli.common import print_json
    from gpuadvisor.cli.probe_cmd import Progress
    from gpuadvisor.core import results
    from gpuadvisor.probe_runner import run_probes

    workload, efficiency, opts, catalog, out_dir = _inputs(args)
    progress = Progress()
    try:
        result = run_probes(opts, on_event=progress)
    finally:
        progress.close()

    stamp = _stamp(result)
    probe_path = results.save(result, _unique(out_dir / f"probe-{stamp}.json"))
    options = recommend(workload, catalog, measured=result if result.gpu_found else None, efficiency=efficiency)
    advice = _advice(args, workload, catalog, efficiency, result)
    report_path = None
    if not args.no_report:
        from gpuadvisor.core.fileio import atomic_write_text
        from gpuadvisor.report import build_report

        html = build_report(result, workload, catalog, advice=advice)  # the same targets as printed
        report_path = atomic_write_text(_unique(out_dir / f"gpuadvisor-{stamp}.html"), html)

    fitting = [o for o in options if o.fits]
    if args.json:
        print_json({
            "gpu_found": result.gpu_found,
            "message": result.message,
            "complete": result.complete,
            "probe_file": str(probe_path),
            "report_file": str(report_path) if report_path else None,
            "workload": workload.to_dict(),
            "recommendations": [o.to_dict() for o in fitting[: args.top]],
            "not_fitting": why_not(options),
            "advice": advice.to_dict(),
        })
        return 0 if result.complete else 130
    return _print_text(args, workload, options, fitting, result, advice, probe_path, report_path)


def _inputs(args: argparse.Namespace) -> tuple[Any, Any, Any, Any, Path]:
    """The workload, efficiencies, probe options, catalog and output folder: every flag checked (and
    the folder found writable) before any time is spent on probes."""
    from gpuadvisor.cli.advisor_args import targets_from
    from gpuadvisor.cli.common import catalog_from
    from gpuadvisor.core.errors import UserError
    from gpuadvisor.core.fileio import ensure_writable
    from gpuadvisor.probe_runner import RunOptions

    if not (args.model or args.model_opt):
        args.model = DEFAULT_MODEL
    workload = workload_from(args)  # validate the workload before spending time on probes
    efficiency = efficiency_from(args)
    targets_from(args)  # bad targets fail before the probes, too
    if args.top < 1:
        raise UserError(f"--top must be >= 1, got {args.top}")
    opts = RunOptions(mode="full" if args.full else "quick", device="all", catalog_dirs=args.catalog or [],
                      refresh_host=args.refresh_host)
    catalog = catalog_from(args)
    out_dir = Path(args.out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise UserError(f"--out-dir is not a directory: {out_dir}")
    ensure_writable(out_dir / "probe.json", force=True)  # fail now, not after the probes
    return workload, efficiency, opts, catalog, out_dir


def _print_text(args: argparse.Namespace, workload: Any, options: list[Any], fitting: list[Any], result: Any,
                advice: Any, probe_path: Path, report_path: Path | None) -> int:
    """The probe summary, the recommendations and where the files are; 130 when Ctrl-C cut the probes short."""
    from gpuadvisor.cli.probe_cmd import print_summary

    if not result.gpu_found:
        print(f"No GPU was found on this machine ({result.message}).")
        print("Measured the host CPU only; the recommendations below come from the catalog's datasheets.\n")
    print_summary(result)
    _print_recommendations(workload, options, fitting, args.top, result, advice)
    print(f"\nProbe results: {probe_path}")
    if report_path:
        print(f"Report:        {report_path}")
    if not result.complete:
        print("Interrupted: the results above are partial.", file=sys.stderr)
        return 130
    return 0


def _print_recommendations(workload: Any, options: list[Any], fitting: list[Any], top: int, result: Any,
                           advice: Any) -> None:
    """The decision (picks, buy or rent), then how this machine's card does."""
    from gpuadvisor.cli.estimate_cmd import describe_workload

    workload = advice.workload  # with the targets' prompt and answer: the one label of this workload
    users = advice.targets.users if workload.mode == "inference" else None
    print(f"\nRecommendations for {describe_workload(workload, users=users)} (estimates)")
    print(f"  targets: {advice.targets.describe(workload.mode, workload.model.kind == 'decoder')}")
    for name in ("cheapest_rental", "cheapest_single_gpu", "cheapest_purchase", "best_value"):
        pk = advice.picks.get(name)
        if pk:
            print(f"  {pk.title}: {pk.line}")
    if advice.buy_vs_rent:
        print(f"  buy or rent: {advice.buy_vs_rent.line}")
    if not advice.picks:
        print("  nothing evaluated meets every target")
        if advice.closest:
            print(f"  closest: {advice.closest.line}\n  it would take: {advice.what_it_would_take}")
    if not fitting:
        print("  no card in the catalog fits this workload, even with 8 GPUs")
    for line in local_card_lines(result, advice, options, workload.mode):
        print(f"  {line}")
    line = advice.local_line()
    if line:
        print(f"  {line[0].upper()}{line[1:]}")
    print("  (`gpuadvisor recommend` with the same model and targets shows the frontier and every flag)")


def local_card_lines(result: Any, advice: Any, options: list[Any], mode: str) -> list[str]:
    """One line per card model in this machine, from the advisor's own option for it (the fewest of this
    machine's GPUs of that card that fit), so the line and the picks cannot disagree; where this machine has too
    few, how many of the card it takes (the catalog's option); GPUs whose card is not in the catalog are named."""
    from gpuadvisor.advisor.ranking import one_per_card
    from gpuadvisor.cli.estimate_cmd import fmt_time

    def speed(o: Any) -> str:
        return (f"{o.per_user_tokens_per_s:,.0f} tok/s per user" if o.per_user_tokens_per_s else
                f"{fmt_time(o.wall_s)} for the job" if o.wall_s else
                f"{fmt_time(o.request_s)} per request" if o.request_s else "")

    lines: list[str] = []
    by_card: dict[str, list[Any]] = {}
    for dev in result.devices:
        if dev.catalog_name:
            by_card.setdefault(dev.catalog_name, []).append(dev)
        else:
            lines.append(f"Your GPU {dev.index}, {dev.name}: not in the catalog, so not ranked")
    local = {o.hardware.card: o for o in advice.local}
    fewest = {o.card: o for o in reversed(one_per_card(options))}
    for card, devs in by_card.items():
        n = len(devs)
        mine = (f"Your {n}x {card} (GPUs {', '.join(str(d.index) for d in devs)})" if n > 1
                else f"Your GPU {devs[0].index}, {devs[0].name}")
        o = local.get(card)
        if o is not None and o.fits:
            lines.append(f"{mine}: fits on {o.hardware.gpus}, {speed(o)} (from the figures measured here)")
            continue
        any_count = fewest.get(card)
        if any_count is not None and any_count.fits:
            span = ("per request" if mode == "inference" else
                    "for the job" if advice.workload.train_tokens or advice.workload.train_samples else "per step")
            lines.append(f"{mine}: fits on {any_count.num_gpus}, {fmt_time(any_count.time_s)} {span}; "
                         f"this machine has {n}")
        else:
            why = o.binds_note if o is not None else (any_count.reason if any_count is not None else "not evaluated")
            lines.append(f"{mine}: does not fit ({why})")
    return lines


def _advice(args: argparse.Namespace, workload: Any, catalog: Any, efficiency: Any, result: Any) -> Any:
    """The decision for the workload, with this machine's cards (and measured figures) beside it."""
    from gpuadvisor.cli.advisor_args import advice_from
    from gpuadvisor.compare import local_cards, measured_by_card

    measured = measured_by_card(result, catalog) if result.gpu_found else None
    local = local_cards(result, catalog)
    return advice_from(args, workload, catalog, efficiency=efficiency, measured=measured, local_cards=local)
