"""`gpuadvisor report`: one self-contained HTML file from probe results and/or a workload."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from gpuadvisor.cli.advisor_args import add_target_args
from gpuadvisor.cli.common import catalog_from, given, record_flags
from gpuadvisor.cli.estimate_cmd import add_workload_args, print_presets, workload_from
from gpuadvisor.core.errors import UserError

DEFAULT_DIR = "reports"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="write a self-contained HTML report (probe results, roofline, the decision for a workload)",
        description="Write one HTML file that works offline: device summary, measured vs datasheet, roofline, "
        "CPU-vs-GPU crossover from --probe; memory breakdown, picks and the cost-versus-time frontier from "
        "--model (with the same target and price flags as `recommend`).",
    )
    p.add_argument("--probe", metavar="RESULTS.json", help="saved probe results")
    add_workload_args(p, json_flag=False)
    add_target_args(p)
    p.add_argument("-o", "--output", metavar="FILE.html", help=f"output file (default: {DEFAULT_DIR}/NAME.html)")
    p.add_argument("--title", help="report title")
    p.add_argument("--force", action="store_true", help="overwrite an existing output file")
    p.set_defaults(func=run)
    record_flags(p)


def default_output(run: Any, workload: Any) -> Path:
    parts = []
    if workload is not None:
        parts.append(workload.model.name)
    if run is not None:
        parts.append(run.devices[0].name if run.devices else "host")
    slug = re.sub(r"[^a-z0-9]+", "-", " ".join(parts).lower()).strip("-")[:80] or "report"
    return Path(DEFAULT_DIR) / f"{slug}.html"


def _refuse_workload_flags(args: argparse.Namespace) -> None:
    """A report of probe results alone has no workload: the workload's, targets' and prices' flags would be dropped,
    so they are refused (`report --probe FILE --mode training` had written the probe report without a word)."""
    flags = given(args, "mode", "batch", "gpus", "tp", "tok_s", "users", "ttft", "deadline", "only", "provider",
                  "region", "spot", "budget_per_hour", "max_card_price", "checkpointing", "tokens", "seq", "quant",
                  "dtype")
    if flags:
        raise UserError(f"{', '.join(sorted(flags))}: a workload's flags; give --model PRESET (the report of probe "
                        "results alone has no workload)")


def run(args: argparse.Namespace) -> int:
    from gpuadvisor.core import results

    if args.list_models:
        return print_presets(False)
    has_model = bool(args.model or args.model_opt)
    if not args.probe and not has_model:
        raise UserError("nothing to report: give --probe RESULTS.json, --model PRESET, or both")
    if not has_model:
        _refuse_workload_flags(args)
    run_result = results.load(args.probe) if args.probe else None
    workload = workload_from(args) if has_model else None
    catalog = catalog_from(args)
    out = Path(args.output) if args.output else default_output(run_result, workload)
    if out.suffix.lower() not in (".html", ".htm"):
        raise UserError(f"output file must end in .html: {out}")
    if args.output and not out.parent.is_dir():  # a typo must not create folders (at the root, say)
        raise UserError(f"-o {args.output}: the folder {out.parent} does not exist (create it first)")

    from gpuadvisor.core.fileio import atomic_write_text
    from gpuadvisor.report import build_report

    advice = _advice(args, run_result, workload, catalog) if workload is not None else None
    html = build_report(run_result, workload, catalog, title=args.title, advice=advice)
    path = atomic_write_text(out, html, force=args.force)
    print(f"wrote {path} ({len(html) / 1e6:.1f} MB, self-contained: open it in any browser, offline)")
    return 0


def _advice(args: argparse.Namespace, run_result: Any, workload: Any, catalog: Any) -> Any:
    """The advisor's decision with the target and price flags; the probed cards beside the picks."""
    from gpuadvisor.cli.advisor_args import advice_from
    from gpuadvisor.compare import local_cards

    measured = run_result if run_result is not None and run_result.devices else None
    return advice_from(args, workload, catalog, measured=measured, local_cards=local_cards(run_result, catalog))
