"""`gpuadvisor tui` (placeholder until its issue lands)."""

from __future__ import annotations

import argparse

from gpuadvisor.errors import UserError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tui", help="(not yet built)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    raise UserError("'tui' is not built yet")
