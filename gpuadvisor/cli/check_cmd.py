"""`gpuadvisor check --rules RULES.yaml`: pass/fail checks of each GPU, for scripts and CI.

Exit 0 when every rule passes on every GPU, 1 when some rule fails, 2 on bad rules or usage.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from gpuadvisor.cli.common import console as make_console
from gpuadvisor.cli.common import print_json
from gpuadvisor.core.errors import UserError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "check",
        help="check each GPU against a rules file (exit 0 pass, 1 fail, 2 bad rules)",
        description="Evaluate a YAML rules file against probe results, for every GPU in them. "
        "Without --probe a quick probe runs now. See rules/README.md for the rule format.",
    )
    p.add_argument("--rules", required=True, metavar="RULES.yaml", help="the rules file")
    p.add_argument("--probe", metavar="RESULTS.json", help="saved probe results (default: run a quick probe now)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--junit", metavar="FILE", help="also write JUnit XML (one testsuite per GPU)")
    p.add_argument("--force", action="store_true", help="overwrite an existing --junit file")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from gpuadvisor import checks
    from gpuadvisor.core import results

    rules = checks.load_rules(args.rules)  # bad rules: UserError, exit 2, before any probing
    if args.junit:
        from gpuadvisor.core.fileio import ensure_writable

        ensure_writable(args.junit, force=args.force)  # a bad --junit fails now, not after a probe run
    elif args.force:
        raise UserError("--force overwrites the --junit file; without --junit there is none")
    run_result = results.load(args.probe) if args.probe else _probe_now(args)
    report = checks.evaluate(rules, run_result)
    if args.junit:
        from gpuadvisor.core.fileio import atomic_write_text

        atomic_write_text(args.junit, checks.junit_xml(report), force=args.force)
    if args.json:
        print_json(report.to_dict())
    else:
        _print(report)
    return report.exit_code


def _probe_now(args: argparse.Namespace) -> Any:
    from gpuadvisor import probe_runner

    print("gpuadvisor: no --probe given; running a quick probe now", file=sys.stderr)
    opts = probe_runner.RunOptions(mode="quick", catalog_dirs=list(getattr(args, "catalog", []) or []))
    return probe_runner.run_probes(opts)


def _print(report: Any) -> None:
    from rich.table import Table

    console = make_console()
    if report.devices and report.devices[0].index is None:
        console.print(f"[red]FAIL[/]: {_esc(report.devices[0].name)}; all {len(report.devices[0].outcomes)} rules fail")
        return
    for d in report.devices:
        status = "[green]PASS[/]" if d.passed else f"[red]FAIL[/] ({d.failures} of {len(d.outcomes)} rules)"
        table = Table(title=f"{_esc(d.label)}  {status}", title_justify="left", expand=False)
        table.add_column("", width=4)
        table.add_column("rule")
        table.add_column("measured", overflow="fold")
        table.add_column("note", overflow="fold")
        for o in d.outcomes:
            mark = "[green]ok[/]" if o.passed else "[red]FAIL[/]"
            table.add_row(mark, _esc(o.rule), _esc(o.measured), _esc(o.message))
        console.print(table)
    if report.passed:
        console.print(f"[green]all checks passed[/] on {len(report.devices)} GPU(s)")
    else:
        console.print(f"[red]checks failed[/] on {report.failed_parts} of {len(report.devices)} GPU(s)")


def _esc(text: str) -> str:
    from rich.markup import escape

    return escape(text)
