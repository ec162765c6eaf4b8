"""`gpuadvisor probe` (placeholder until its issue lands)."""

from __future__ import annotations

import argparse

from gpuadvisor.errors import UserError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("probe", help="(not yet built)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    raise UserError("'probe' is not built yet")
