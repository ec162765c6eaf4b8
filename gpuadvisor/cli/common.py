"""Helpers shared by command modules: JSON printing, catalog loading from flags."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from gpuadvisor.catalog import Catalog, load_catalog


def catalog_from(args: argparse.Namespace) -> Catalog:
    return load_catalog(getattr(args, "catalog", []) or [])


def print_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")


def fmt(value: float | None, digits: int = 1, unit: str = "") -> str:
    if value is None:
        return "-"
    text = f"{value:,.{digits}f}"
    return f"{text} {unit}".rstrip()
