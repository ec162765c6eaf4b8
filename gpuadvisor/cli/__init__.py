"""The command line: parses, calls the core, prints. Each command lives in its own module.

Every command module exposes `register(subparsers)`, which adds its parser and sets
`func=run`. Heavy imports (CuPy, Textual, Plotly) happen inside `run`, never at import time,
so `gpuadvisor --help` and `gpuadvisor recommend` stay fast.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import sys
from collections.abc import Sequence
from typing import Any

from gpuadvisor import __version__
from gpuadvisor.core.errors import UserError

#: command modules, gpuadvisor/cli/<name>_cmd.py (serve_check registers `serve-check`)
COMMANDS = ("run", "probe", "catalog", "estimate", "recommend", "report", "check", "fleet", "tui", "prices",
            "serve_check")

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


#: old spellings of one concept, refused with the one name it has now (estimate, recommend, run, report)
RENAMED = {
    "--gen": "--output-len (tokens generated per request)",
    "--context": "--input-len (prompt tokens) and --output-len (answer tokens)",
    "--output-tokens": "--output-len (tokens generated per request)",
}


def refuse_renamed(argv: Sequence[str]) -> None:
    for arg in argv:
        name = arg.split("=", 1)[0]
        if name in RENAMED:
            raise UserError(f"{name} is now {RENAMED[name]}")


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors are one line (the usage text stays behind --help), and a flag is taken only by
    its whole name: argparse's prefix matching had read `tui --mode training` as `--model training`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UserError(f"{message} (see '{self.prog} --help')")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="gpuadvisor",
        description="Measure the GPU you have; pick the GPU you need.",
    )
    parser.add_argument("--version", action="version", version=f"gpuadvisor {__version__}")
    parser.add_argument(
        "--catalog",
        metavar="DIR",
        action="append",
        default=[],
        help="extra catalog folder of YAML cards (repeatable; overrides shipped cards of the same name)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS:
        module = importlib.import_module(f"gpuadvisor.cli.{name}_cmd")
        module.register(sub)
    return parser


#: commands that run briefly and leave little cyclic garbage (a 7 s training `recommend --all` peaks
#: under 1 MB higher without the cycle collector): it stays paused while they run (see `main`), unless
#: the model is traced from PyTorch code (torchvision:NAME, file.py:build: a spec with a colon)
BRIEF = ("recommend", "estimate")


def _brief(args: argparse.Namespace) -> bool:
    return getattr(args, "command", None) in BRIEF and ":" not in str(getattr(args, "model", None) or "")


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. The cycle collector is paused while the modules load and the arguments parse
    (~1e5 long-lived objects that it would traverse for nothing), and during the brief commands: ~35 ms
    of a 0.5 s cold `recommend`. The caller's collector state is restored on return."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _run(argv, was_enabled)
    finally:
        if was_enabled:
            gc.enable()


def _run(argv: Sequence[str] | None, collect: bool) -> int:
    try:
        parser = build_parser()
        refuse_renamed(sys.argv[1:] if argv is None else argv)
        args = parser.parse_args(argv)
        if collect and not _brief(args):
            gc.enable()
        if not getattr(args, "func", None):
            parser.print_help()
            return EXIT_USAGE
        return int(args.func(args) or 0)
    except UserError as e:
        print(f"gpuadvisor: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("gpuadvisor: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as e:  # a bug: still one line, but say it is ours
        print(f"gpuadvisor: internal error: {type(e).__name__}: {' '.join(str(e).split())}", file=sys.stderr)
        return EXIT_INTERNAL
