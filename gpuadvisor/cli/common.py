"""Helpers shared by command modules: JSON printing, catalog loading from flags."""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from gpuadvisor.catalog import Catalog, load_catalog


def catalog_from(args: argparse.Namespace) -> Catalog:
    """The catalog with the --catalog folders; a folder that holds no card file is refused (a typo
    in a path would otherwise read as a valid, empty extra catalog)."""
    from pathlib import Path

    from gpuadvisor.core.errors import UserError

    extra = getattr(args, "catalog", []) or []
    for d in extra:
        p = Path(d)
        if p.is_dir() and not any(f.suffix in (".yaml", ".yml") and f.is_file() for f in p.iterdir()):
            raise UserError(f"--catalog {d}: the folder holds no card files (*.yaml)")
    return load_catalog(extra)


def record_flags(p: argparse.ArgumentParser) -> None:
    """Keep the parser's own defaults and flag names on the parsed arguments, so that a command can tell the flags
    a user gave from those left at their defaults (`given`) without writing the defaults out again."""
    p.set_defaults(flag_defaults={a.dest: a.default for a in p._actions},
                   flag_names={a.dest: max(a.option_strings, key=len) for a in p._actions if a.option_strings})


def given(args: argparse.Namespace, *dests: str) -> list[str]:
    """The flags, by name and in the order of `dests`, whose value differs from the parser's default (record_flags);
    a default typed out is harmless."""
    defaults, names = getattr(args, "flag_defaults", {}), getattr(args, "flag_names", {})
    return [names.get(d, "--" + d.replace("_", "-")) for d in dests
            if (value := getattr(args, d, None)) != defaults.get(d) and value not in (None, [], ())]


def lengths_given(args: argparse.Namespace) -> tuple[bool, bool]:
    """Whether --input-len and --output-len were given (request.ServingLoad.lengths_given, lengths.parse_lengths: a
    ShareGPT shape takes them as its means)."""
    return getattr(args, "input_len", None) is not None, getattr(args, "output_len", None) is not None


def add_refresh_host(p: argparse.ArgumentParser) -> None:
    """`probe` and `run` both run the probes, so both can renew the host cache (probes/hostcache.py)."""
    p.add_argument("--refresh-host", action="store_true",
                   help="with --full: re-measure the host figures kept in the host cache (generate() timing, "
                        "~15 s; otherwise measured once per host and software stack)")


def console() -> Any:
    """A rich console for stdout; piped or captured output gets a wide page, not 80 columns,
    so that table rows stay on one line for grep and for logs."""
    from rich.console import Console

    c = Console(highlight=False)
    return c if c.is_terminal else Console(highlight=False, width=160)


def print_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")


def fmt(value: float | None, digits: int = 1, unit: str = "") -> str:
    if value is None:
        return "-"
    text = f"{value:,.{digits}f}"
    return f"{text} {unit}".rstrip()


# argparse `type=` callables: a bad value becomes a one-line usage error naming the flag.


def _number(text: str, conv: type, kind: str) -> float:
    try:
        v = conv(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not {kind}: {text!r}") from None
    if isinstance(v, float) and not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"not a finite number: {text!r}")
    return v


def positive_int(text: str) -> int:
    v = int(_number(text, int, "an integer"))
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1: {text!r}")
    return v


def non_negative_int(text: str) -> int:
    v = int(_number(text, int, "an integer"))
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0: {text!r}")
    return v


def positive_float(text: str) -> float:
    v = _number(text, float, "a number")
    if v <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0: {text!r}")
    return v


def non_negative_float(text: str) -> float:
    v = _number(text, float, "a number")
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0: {text!r}")
    return v


def gpu_counts_arg(text: str) -> list[int]:
    try:
        out = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of GPU counts: {text!r} (e.g. 1,2,4,8)") from None
    from gpuadvisor.core.limits import LIMITS

    gpus = LIMITS["gpus"]
    if not out or not gpus.contains(out[0]) or not gpus.contains(out[-1]):
        raise argparse.ArgumentTypeError(f"GPU counts must be {gpus.describe()}: {text!r}")
    return out
