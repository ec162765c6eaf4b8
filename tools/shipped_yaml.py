"""Write a shipped YAML table a tools/ script builds, or check that the shipped one is what it builds (`--check`,
for the tests and CI): the one command line the catalog's derived tables share."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml


def write_or_check(build: Callable[[], Any], out: Path, module: str, argv: Sequence[str] | None = None) -> int:
    """`python3 -m {module} [--check]`: write build()'s table to `out`, or (--check) exit 1 where the file differs."""
    ap = argparse.ArgumentParser(prog=f"python3 -m {module}")
    ap.add_argument("--check", action="store_true", help="fail if the file differs from what this script writes")
    a = ap.parse_args(argv)
    text = yaml.safe_dump(build(), sort_keys=False, allow_unicode=True, width=110)
    if a.check:
        same = out.is_file() and out.read_text() == text
        print("up to date" if same else f"{out} is stale: run python3 -m {module}", file=sys.stderr)
        return 0 if same else 1
    out.write_text(text)
    print(f"wrote {out}")
    return 0
