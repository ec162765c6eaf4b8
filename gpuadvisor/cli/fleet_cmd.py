"""`gpuadvisor fleet probe|check|report`: probe every node of a Ray cluster, check, report.

Ray is imported only inside `fleet probe`, and only through gpuadvisor.fleet.import_ray, so a
missing extra is one line and exit 2. `fleet check` and `fleet report` read a fleet folder and
need no Ray at all.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import sys
import time
from pathlib import Path
from typing import Any

from gpuadvisor.cli.common import non_negative_float, positive_float, print_json
from gpuadvisor.core.errors import UserError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fleet",
        help="probe every GPU node of a Ray cluster; check and report the fleet (needs the [fleet] extra)",
        description="One probe task per GPU node of a Ray cluster (pinned to its node), gathered into one fleet "
        "folder: a probe result per node plus summary.json. See docs/fleet.md.",
    )
    fsub = p.add_subparsers(dest="fleet_command", metavar="SUBCOMMAND", parser_class=type(p))
    pr = fsub.add_parser("probe", help="probe every node (local Ray runtime, or --address)")
    pr.add_argument("--address", metavar="ADDR",
                    help="Ray cluster to join ('auto', HOST:6379); default: $RAY_ADDRESS, else a local runtime")
    mode = pr.add_mutually_exclusive_group()
    mode.add_argument("--quick", dest="mode", action="store_const", const="quick", help="short probe (default)")
    mode.add_argument("--full", dest="mode", action="store_const", const="full", help="longer sweeps")
    pr.set_defaults(mode="quick")
    pr.add_argument("--timeout", type=positive_float, metavar="S",
                    help="deadline for the whole fleet in seconds (default 900 quick, 3600 full)")
    pr.add_argument("--out", metavar="DIR", help="fleet folder (default: reports/fleet-YYYYmmdd-HHMMSS)")
    pr.add_argument("--force", action="store_true", help="write into a non-empty --out folder")
    pr.add_argument("--only", metavar="PROBE,...", help="run only these probes on every node")
    pr.add_argument("--no-torch", action="store_true", help="skip the PyTorch same-run references")
    pr.add_argument("--include-cpu-nodes", action="store_true", help="also probe the hosts of nodes without GPUs")
    pr.add_argument("--node-resource", metavar="NAME",
                    help="probe only nodes that carry this custom Ray resource (e.g. started with "
                         "--resources '{\"NAME\": 1}')")
    pr.add_argument("--json", action="store_true", help="print summary.json to stdout")
    pr.set_defaults(func=run_probe)

    ck = fsub.add_parser("check", help="rules on every node plus cross-node outliers (exit 0 pass, 1 fail, 2 usage)")
    ck.add_argument("folder", metavar="DIR", help="a fleet folder from 'fleet probe'")
    ck.add_argument("--rules", metavar="RULES.yaml", help="rules applied to every GPU of every node")
    ck.add_argument("--tolerance", type=non_negative_float, default=None, metavar="PCT",
                    help="outlier when a figure is this % worse than the fleet median (default 10)")
    ck.add_argument("--json", action="store_true", help="machine-readable output")
    ck.set_defaults(func=run_check)

    rp = fsub.add_parser("report", help="one self-contained HTML fleet report")
    rp.add_argument("folder", metavar="DIR", help="a fleet folder from 'fleet probe'")
    rp.add_argument("-o", "--output", metavar="FILE.html", help="output file (default: DIR/fleet-report.html)")
    rp.add_argument("--rules", metavar="RULES.yaml", help="also show pass/fail per node")
    rp.add_argument("--tolerance", type=non_negative_float, default=None, metavar="PCT", help="outlier threshold")
    rp.add_argument("--title", help="report title")
    rp.add_argument("--force", action="store_true", help="overwrite an existing output file")
    rp.set_defaults(func=run_report)
    p.set_defaults(func=lambda args: _no_sub(p))


def _no_sub(p: argparse.ArgumentParser) -> int:
    raise UserError("give a subcommand: probe, check or report (see 'gpuadvisor fleet --help')")


# --------------------------------------------------------------------------- probe


def run_probe(args: argparse.Namespace) -> int:
    import os

    from gpuadvisor.fleet import import_ray, store
    from gpuadvisor.fleet.runner import FleetOptions, run_fleet
    from gpuadvisor.probe_runner import parse_only

    opts = FleetOptions(
        address=args.address or os.environ.get("RAY_ADDRESS") or None,
        mode=args.mode or "quick",
        timeout_s=args.timeout,
        only=parse_only(args.only),
        use_torch=not args.no_torch,
        include_cpu_nodes=args.include_cpu_nodes,
        resource=args.node_resource,
    )
    import_ray()  # the missing extra is the first thing a user hears about, before any folder is made
    out = Path(args.out) if args.out else Path("reports") / _dt.datetime.now().strftime("fleet-%Y%m%d-%H%M%S")
    folder = store.prepare_folder(out, force=args.force)

    from gpuadvisor.fleet.ray_backend import RayBackend

    backend = RayBackend.connect(opts.address, opts.request())
    display = LiveNodes()
    try:
        fleet_run = run_fleet(opts, backend, folder, raw_nodes=backend.raw_nodes(), on_event=display)
    finally:
        display.close()
        backend.close()
    s = fleet_run.summary
    if args.json:
        sys.stdout.write(s.model_dump_json(indent=2) + "\n")
    else:
        _print_summary(s, folder)
    if fleet_run.gathered.interrupted:
        print("gpuadvisor: interrupted; the results received are saved", file=sys.stderr)
        return 130
    return 0 if s.all_ok else 1


class LiveNodes:
    """A live table of nodes on stderr while the fleet runs (plain lines when not a terminal)."""

    def __init__(self) -> None:
        from rich.console import Console

        self.console = Console(stderr=True, highlight=False)
        self.rows: dict[str, Any] = {}
        self.t0 = time.monotonic()
        self.live: Any = None
        if self.console.is_terminal:
            from rich.live import Live

            # a callable renderable: the elapsed times tick between events too
            self.live = Live(console=self.console, refresh_per_second=2, transient=False, get_renderable=self._table)
            self.live.start()

    def _table(self) -> Any:
        from rich.table import Table

        t = Table(title="gpuadvisor fleet probe", title_justify="left")
        for col in ("node", "GPUs", "status", "now", "probes done", "time"):
            t.add_column(col)
        colors = {"ok": "green", "lost": "red", "failed": "red", "timeout": "yellow"}
        for o in self.rows.values():
            status = o.status if o.finished else ("probing" if o.started else "waiting")
            c = colors.get(status)
            secs = o.duration_s if o.duration_s is not None else time.monotonic() - self.t0
            now = (o.reason or "") if o.finished else (o.current or "")
            t.add_row(o.node.name, str(o.node.gpus), f"[{c}]{status}[/]" if c else status, _esc(now),
                      str(o.done_probes), f"{secs:.0f} s")
        return t

    def __call__(self, kind: str, **kw: Any) -> None:
        o = kw.get("outcome")
        if o is None:
            return
        self.rows[o.node.node_id] = o
        if self.live is not None:
            self.live.refresh()
        elif kind == "node_started":
            self.console.print(f"{o.node.name}: probing ({o.node.gpus} GPU(s))", soft_wrap=True)
        elif kind == "node_done":
            why = f": {o.reason}" if o.reason else ""
            self.console.print(f"{o.node.name}: {o.status} ({o.duration_s or 0:.1f} s){why}", soft_wrap=True)

    def close(self) -> None:
        if self.live is not None:
            self.live.refresh()
            self.live.stop()
            self.live = None


def _esc(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def _print_summary(s: Any, folder: Path) -> None:
    from gpuadvisor.cli.common import console as make_console

    c = make_console()
    counts = s.counts()
    parts = [f"{v} {k}" for k, v in counts.items() if v]
    c.print(f"fleet: {len(s.nodes)} node(s): {', '.join(parts)}; {s.duration_s or 0:.1f} s; saved to {folder}",
            soft_wrap=True)
    for n in s.nodes:
        if n.status != "ok":
            c.print(f"  [red]{n.status}[/]: {_esc(n.name)}: {_esc(n.reason or '')}", soft_wrap=True)
    for sk in s.skipped:
        c.print(f"  skipped: {_esc(sk.name)}: {_esc(sk.reason)}", soft_wrap=True)


# --------------------------------------------------------------------------- check, report


def _verdict(args: argparse.Namespace) -> Any:
    from gpuadvisor import checks
    from gpuadvisor.fleet import store
    from gpuadvisor.fleet.outliers import DEFAULT_TOLERANCE_PCT
    from gpuadvisor.fleet.verdict import evaluate_fleet

    rules = checks.load_rules(args.rules) if args.rules else None
    fleet = store.load(args.folder)
    tol = DEFAULT_TOLERANCE_PCT if args.tolerance is None else args.tolerance
    return fleet, evaluate_fleet(fleet, rules, tolerance_pct=tol)


def run_check(args: argparse.Namespace) -> int:
    from gpuadvisor.cli.common import console as make_console

    _, verdict = _verdict(args)
    if args.json:
        print_json(verdict.to_dict())
        return verdict.exit_code
    c = make_console()
    for v in verdict.nodes:
        mark = "[green]PASS[/]" if v.passed else "[red]FAIL[/]"
        extra = ""
        if v.status != "ok":
            extra = f": {v.status}: {v.reason or ''}"
        elif v.report is not None and not v.report.passed:
            bad = [f"{d.label}: {o.rule}" for d in v.report.devices for o in d.outcomes if not o.passed]
            extra = f": {len(bad)} rule failure(s): {'; '.join(bad[:4])}" + (" ..." if len(bad) > 4 else "")
        elif v.note:
            extra = f" ({v.note})"
        c.print(f"{mark} {_esc(v.node)}{_esc(extra)}", soft_wrap=True)
    for o in verdict.outliers:
        c.print(f"  [yellow]outlier[/]: {_esc(o.describe())}", soft_wrap=True)
    if verdict.passed:
        c.print(f"[green]fleet passes[/]: {len(verdict.nodes)} node(s)")
    else:
        c.print(f"[red]fleet fails[/]: {verdict.failed_parts} of {len(verdict.nodes)} node(s)")
    return verdict.exit_code


def run_report(args: argparse.Namespace) -> int:
    from gpuadvisor.core.fileio import atomic_write_text, ensure_writable
    from gpuadvisor.fleet.report import build_fleet_report

    out = Path(args.output) if args.output else Path(args.folder) / "fleet-report.html"
    if out.suffix.lower() not in (".html", ".htm"):
        raise UserError(f"output file must end in .html: {out}")
    fleet, verdict = _verdict(args)
    ensure_writable(out, force=args.force)
    html = build_fleet_report(fleet, verdict, title=args.title)
    path = atomic_write_text(out, html, force=args.force)
    print(f"wrote {path} ({len(html) / 1e6:.1f} MB, self-contained: open it in any browser, offline)")
    return 0
