"""`gpuadvisor probe`: measure the GPUs (and the host) and compare with the datasheet.

Progress goes to stderr; the summary table (or --json) to stdout; --out saves the full result
atomically. Without a GPU the host probe and the CPU side of the crossover still run (exit 0).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuadvisor.cli.common import add_refresh_host, catalog_from, fmt
from gpuadvisor.cli.common import console as make_console
from gpuadvisor.core.errors import UserError
from gpuadvisor.core.fileio import ensure_writable
from probes import ALL_PROBES

if TYPE_CHECKING:  # the result models are pydantic: built when `probe` runs, not when any command starts
    from gpuadvisor.core.results import Measurement, ProbeResult, RunResult


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("probe", help="measure the GPU you have against its datasheet")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--quick", dest="mode", action="store_const", const="quick",
                      help="short run (default, ~5 s on an H100; no PyTorch)")
    mode.add_argument("--full", dest="mode", action="store_const", const="full",
                      help="longer sweeps, PyTorch references, cuDNN convolutions and streaming ops "
                           "(~25 s; the first on a host also times generate(), ~20 s more)")
    p.set_defaults(mode="quick")
    add_refresh_host(p)
    p.add_argument("--device", default="all", metavar="N|all", help="GPU index or 'all' (default)")
    p.add_argument("--only", metavar="PROBE,...", help=f"run only these probes: {', '.join(ALL_PROBES)}")
    p.add_argument("--json", action="store_true", help="print the full result as JSON")
    p.add_argument("--out", metavar="FILE", help="save the full result as JSON (atomic)")
    p.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    p.add_argument("--no-torch", action="store_true", help="skip the PyTorch same-run references")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from gpuadvisor.probe_runner import RunOptions, parse_device, parse_only, run_probes

    opts = RunOptions(
        mode=args.mode or "quick",
        device=parse_device(args.device),
        only=parse_only(args.only),
        use_torch=not args.no_torch,
        catalog_dirs=getattr(args, "catalog", []) or [],
        refresh_host=args.refresh_host,
    )
    if args.out:
        ensure_writable(args.out, force=args.force)
    elif args.force:
        raise UserError("--force overwrites the --out file; without --out there is none")
    catalog_from(args)  # a broken --catalog is an error now, not a note in the results
    progress = Progress()
    try:
        result = run_probes(opts, on_event=progress)
    finally:
        progress.close()
    if result.message and args.json:
        print(f"gpuadvisor: {result.message}", file=sys.stderr)
    if args.out:
        path = save(result, args.out, force=args.force)
        print(f"gpuadvisor: result saved to {path}", file=sys.stderr)
    if args.json:
        sys.stdout.write(result.model_dump_json(indent=2) + "\n")
    else:
        print_summary(result)
    if not result.complete:
        print("gpuadvisor: interrupted; partial result" + (" saved" if args.out else ""), file=sys.stderr)
        return 130
    return 0


def save(result: RunResult, path: str, *, force: bool = False) -> Path:
    """`results.save`, imported when a probe run has a result to save."""
    from gpuadvisor.core.results import save as save_result

    return save_result(result, path, force=force)


class Progress:
    """Probe-by-probe progress on stderr (a spinner on a terminal, plain lines otherwise)."""

    def __init__(self) -> None:
        from rich.console import Console

        self.console = Console(stderr=True, highlight=False)
        self.status: Any = None
        if self.console.is_terminal:
            self.status = self.console.status("discovering GPUs...")
            self.status.start()

    def __call__(self, kind: str, **kw: Any) -> None:
        dev = kw.get("device")
        where = "host" if dev is None else "node" if dev == "node" else f"GPU {dev}"
        if kind == "device_start":
            self.console.print(f"[bold]GPU {kw['device']}[/]: {kw.get('name')}")
        elif kind == "probe_start" and self.status is not None:
            self.status.update(f"{where}: {kw['probe']}...")
        elif kind == "probe_end":
            from rich.markup import escape

            res: ProbeResult = kw["result"]
            mark = {"ok": "[green]ok[/]", "skipped": "[yellow]skipped[/]", "timeout": "[red]timeout[/]",
                    "failed": "[red]failed[/]", "interrupted": "[red]interrupted[/]"}[res.status]
            # an ok probe's reason is a note (figures from the host cache, a part skipped); a reason is text, not markup
            why = f": {escape(res.reason)}" if res.reason else ""
            self.console.print(f"  {where} {res.probe:<17} {mark} ({res.duration_s:.1f} s){why}", soft_wrap=True)

    def close(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None


def _value(m: Measurement) -> str:
    if m.value is None:
        return "-"
    digits = 0 if m.unit in ("elements", "N") or m.value >= 100 else 1 if m.value >= 10 else 2
    return f"{fmt(m.value, digits)} {m.unit}"


def measurement_rows(probes: list[ProbeResult]) -> list[tuple[str, str, str, str, str]]:
    rows = []
    for p in probes:
        for m in p.measurements:
            pct = m.pct_of_datasheet
            ratio = m.ratio_to_reference
            rows.append((
                m.label,
                _value(m),
                "-" if pct is None else f"{pct:.0f}%",
                "-" if ratio is None else f"{ratio:.2f}x",
                m.reference_label or "-" if ratio is not None else "-",
            ))
    return rows


def print_summary(result: RunResult) -> None:
    from rich.table import Table

    console = make_console()
    h = result.host
    console.print(f"gpuadvisor probe ({result.mode}) on {h.hostname}: {h.cpu}; driver {h.driver_version or '-'}, "
                  f"CUDA {h.cuda_runtime_version or '-'}, CuPy {h.cupy_version or '-'}, torch {h.torch_version or '-'}",
                  soft_wrap=True)
    if result.message:
        console.print(result.message, soft_wrap=True)

    def table(title: str, probes: list[ProbeResult]) -> None:
        rows = measurement_rows(probes)
        if rows:
            t = Table(title=title, title_justify="left")
            for col, just in (("figure", "left"), ("value", "right"), ("% datasheet", "right"),
                              ("x reference", "right"), ("reference", "left")):
                t.add_column(col, justify=just)  # type: ignore[arg-type]
            for r in rows:
                t.add_row(*r)
            console.print(t)
        for p in probes:
            if p.status != "ok":
                console.print(f"  {p.probe}: {p.status}" + (f" ({p.reason})" if p.reason else ""), soft_wrap=True)

    for dev in result.devices:
        card = f" (catalog: {dev.catalog_name})" if dev.catalog_name else " (not in the catalog)"
        table(f"GPU {dev.index}: {dev.name}{card}", dev.probes)
        for flag in dev.flags:
            console.print(f"  [yellow]flag[/]: {flag}", soft_wrap=True)
    table("Node: between the GPUs", result.node_probes)
    from gpuadvisor.links import link_lines

    for line in link_lines(result):
        console.print(f"  {line}", soft_wrap=True)
    table("Host", result.host_probes)
    if not result.complete:
        console.print("[red]incomplete: interrupted[/]")
