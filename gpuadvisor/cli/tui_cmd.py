"""`gpuadvisor tui`: the interactive terminal UI."""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "tui",
        help="interactive terminal UI: workload ranking, device results, catalog, probe runs",
        description="Workload form with a live ranking, memory breakdown, your GPU's probe results against the "
        "catalog, a catalog browser, and probe runs in the background. Works in an 80x24 terminal.",
    )
    p.add_argument("--probe", metavar="RESULTS.json", help="saved probe results to show in the Device tab")
    p.add_argument("--model", metavar="PRESET", help="initial model in the form (default: llama-3-8b)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from gpuadvisor.core.errors import UserError

    if not sys.stdout.isatty() or not sys.stdin.isatty():
        raise UserError("the TUI needs an interactive terminal (stdin and stdout must be a TTY)")
    from gpuadvisor.tui import build_app

    initial = {"model": args.model} if args.model else None
    app = build_app(args.probe, list(getattr(args, "catalog", []) or []), initial=initial)
    app.run()
    return 0
