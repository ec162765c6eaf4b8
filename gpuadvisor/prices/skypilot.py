"""Read SkyPilot catalog CSVs (`catalogs/v*/<cloud>/vms.csv`) into checked rows.

Columns are found by header name, so every catalog version and cloud reads the same way (their
column orders differ). Every row is checked before anything is built: a bad row is one UserError
`FILE:ROW: what is wrong`, the same form the card catalog uses.
"""

from __future__ import annotations

import csv
import io
import math
import os
from dataclasses import dataclass
from pathlib import Path

from gpuadvisor.core.errors import UserError

REQUIRED = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region")
OPTIONAL = ("vCPUs", "MemoryGiB", "SpotPrice", "AvailabilityZone", "GpuInfo")


@dataclass(frozen=True)
class Row:
    provider: str
    instance_type: str
    accelerator: str
    count: float | None
    vcpus: float | None
    memory_gib: float | None
    price: float | None
    spot: float | None
    region: str
    zone: str
    where: str  # FILE:ROW, for messages
    gpu_info: str = ""  # the GpuInfo cell as written (memory per GPU: gpuadvisor.prices.mapping)


def read_csv(path: str | os.PathLike[str], provider: str) -> list[Row]:
    """All rows of one SkyPilot-format CSV; UserError `FILE:ROW: ...` on the first bad one."""
    from gpuadvisor.core.fileio import read_text

    p = Path(path)
    return parse_csv(read_text(p, "price file"), str(p), provider)


def parse_csv(text: str, name: str, provider: str) -> list[Row]:
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader)
    except StopIteration:
        raise UserError(f"{name}: empty file; a SkyPilot vms.csv starts with a header line") from None
    except csv.Error as e:
        raise UserError(f"{name}:1: unreadable CSV: {e}") from None
    header = [h.strip().lstrip("\ufeff") for h in header]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise UserError(f"{name}:1: missing column {missing[0]!r} (SkyPilot vms.csv columns: {', '.join(REQUIRED)})")
    col = {c: header.index(c) for c in (*REQUIRED, *OPTIONAL) if c in header}
    rows: list[Row] = []
    line = 1
    try:
        for fields in reader:
            line = reader.line_num
            if not fields or all(not f.strip() for f in fields):
                continue
            rows.append(_row(fields, col, len(header), f"{name}:{line}", provider))
    except csv.Error as e:
        raise UserError(f"{name}:{line + 1}: unreadable CSV: {e}") from None
    return rows


def _row(fields: list[str], col: dict[str, int], width: int, where: str, provider: str) -> Row:
    if len(fields) != width:
        raise UserError(f"{where}: expected {width} fields like the header, found {len(fields)}")

    def get(c: str) -> str:
        return fields[col[c]].strip() if c in col else ""

    instance, acc, region = get("InstanceType"), get("AcceleratorName"), get("Region")
    if not instance and not acc:
        raise UserError(f"{where}: row has neither InstanceType nor AcceleratorName")
    if not region:
        raise UserError(f"{where}: empty Region")
    count = _num(get("AcceleratorCount"), "AcceleratorCount", where)
    if acc and (count is None or count <= 0):
        raise UserError(f"{where}: AcceleratorName {acc!r} needs an AcceleratorCount above 0")
    vcpus = _num(get("vCPUs"), "vCPUs", where)
    memory = _num(get("MemoryGiB"), "MemoryGiB", where)
    price = _price(get("Price"), "Price", where)
    spot = _price(get("SpotPrice"), "SpotPrice", where)
    return Row(provider, instance, acc, count if acc else None, vcpus, memory, price, spot, region,
               get("AvailabilityZone"), where, get("GpuInfo"))


def _float(text: str, column: str, where: str) -> float | None:
    """A CSV cell as a number; empty is None; anything else is one line naming file, row and column."""
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        raise UserError(f"{where}: column {column}: not a number: {text!r}") from None


def _num(text: str, column: str, where: str) -> float | None:
    x = _float(text, column, where)
    if x is not None and (not math.isfinite(x) or x < 0):
        raise UserError(f"{where}: column {column}: {text!r} is not a finite number >= 0")
    return x


def _price(text: str, column: str, where: str) -> float | None:
    """USD/h; empty means not offered. Zero is taken as not offered too (some catalogs use it)."""
    x = _float(text, column, where)
    if x is None:
        return None
    if not math.isfinite(x):
        raise UserError(f"{where}: column {column}: not a finite price: {text!r}")
    if x < 0:
        raise UserError(f"{where}: column {column}: negative price {text}")
    return x or None


def find_sources(path: str | os.PathLike[str], provider: str | None = None) -> dict[str, Path]:
    """provider -> CSV. A folder holds <cloud>/vms.csv files (the SkyPilot layout); a single file
    needs --provider or a <cloud>/vms.csv path, whose folder names the provider."""
    p = Path(path)
    if p.is_dir():
        found = {d.name.lower(): d / "vms.csv" for d in sorted(p.iterdir()) if (d / "vms.csv").is_file()}
        if (p / "vms.csv").is_file():
            found = {(provider or p.name).lower(): p / "vms.csv", **found}
        if not found:
            raise UserError(f"{p}: no <cloud>/vms.csv files in this folder")
        if provider:
            key = provider.lower()
            if key not in found:
                raise UserError(f"{p}: no {key}/vms.csv here; found: {', '.join(found)}")
            found = {key: found[key]}
        return found
    if not p.exists():
        raise UserError(f"price file not found: {p}")
    if provider:
        return {provider.lower(): p}
    if p.name == "vms.csv" and p.parent.name:
        return {p.parent.name.lower(): p}
    raise UserError(f"{p}: which cloud is this? pass --provider NAME (or use a <cloud>/vms.csv path)")
