"""Build a snapshot from SkyPilot CSVs: the shipped one (tools/build_prices.py) and a user's
offline refresh (`gpuadvisor prices update`) share this code, so there is one parser."""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path

from gpuadvisor.core.errors import UserError
from gpuadvisor.prices.model import PriceSnapshot, Source, Unmapped, dump_snapshot, load_prices, user_path
from gpuadvisor.prices.reduce import REDUCTION, AcceleratorMap, load_map, reduce_rows
from gpuadvisor.prices.skypilot import Row, read_csv

SKYPILOT = {"name": "SkyPilot catalog", "repository": "skypilot-org/skypilot-catalog", "license": "Apache-2.0"}


def read_all(sources: Mapping[str, Path]) -> list[Row]:
    """Every row of every file, all checked before anything is built (first error wins)."""
    rows: list[Row] = []
    for provider, path in sources.items():
        rows.extend(read_csv(path, provider))
    return rows


def build_snapshot(
    sources: Mapping[str, Path],
    *,
    commit: str,
    date: str,
    files: Iterable[dict[str, str]] | None = None,
    amap: AcceleratorMap | None = None,
    card_names: Mapping[str, str] | None = None,
    card_memory: Mapping[str, float] | None = None,
    card_forms: Mapping[str, str] | None = None,
    name: str = SKYPILOT["name"],
    committed: str = "unknown",
) -> PriceSnapshot:
    _check_date(date)
    if committed != "unknown":
        _check_date(committed)
    rows = read_all(sources)
    red = reduce_rows(rows, amap or load_map(), card_names, card_memory, card_forms)
    if files is None:
        files = [{"provider": p, "path": str(f), "commit": commit, "read": date, "committed": committed}
                 for p, f in sources.items()]
    source = Source(name, SKYPILOT["repository"], commit, date, SKYPILOT["license"], tuple(files))
    return PriceSnapshot(source, tuple(red.offers), tuple(red.unmapped), reduction=REDUCTION,
                         anomalies=tuple(red.anomalies), coverage=red.coverage)


def build_from_raw(
    folder: str | os.PathLike[str] | None = None,
    *,
    amap: AcceleratorMap | None = None,
    card_names: Mapping[str, str] | None = None,
    card_memory: Mapping[str, float] | None = None,
    card_forms: Mapping[str, str] | None = None,
) -> PriceSnapshot:
    """The shipped snapshot from the committed raw rows (catalog/prices/raw): offline and
    deterministic, dated by the latest day a file was read."""
    from gpuadvisor.prices.raw import default_dir, raw_text, read_sources
    from gpuadvisor.prices.skypilot import parse_csv

    where = Path(folder) if folder else default_dir()
    entries = read_sources(where)
    if not entries:
        raise UserError(f"{where}: no providers in SOURCES.tsv")
    rows: list[Row] = []
    for e in entries:
        rows.extend(parse_csv(raw_text(where, e), f"{e.provider}.csv.gz", e.provider))
    for e in entries:
        _check_date(e.read)
    red = reduce_rows(rows, amap or load_map(), card_names, card_memory, card_forms)
    commits = {e.commit for e in entries}
    commit = commits.pop() if len(commits) == 1 else "per-file"
    source = Source(SKYPILOT["name"], SKYPILOT["repository"], commit, max(e.read for e in entries),
                    SKYPILOT["license"], tuple(e.file_entry() for e in entries))
    return PriceSnapshot(source, tuple(red.offers), tuple(red.unmapped), reduction=REDUCTION,
                         anomalies=tuple(red.anomalies), coverage=red.coverage)


def merge(base: PriceSnapshot, new: PriceSnapshot) -> PriceSnapshot:
    """`new`'s providers replace theirs in `base`; the other providers' offers stay."""
    fresh = {f["provider"] for f in new.source.files} | set(new.providers())
    offers = tuple(o for o in base.offers if o.provider not in fresh) + new.offers
    unmapped = tuple(u for u in base.unmapped if u.provider not in fresh) + new.unmapped
    anomalies = tuple(a for a in base.anomalies if a.provider not in fresh) + new.anomalies
    coverage = {**{p: c for p, c in base.coverage.items() if p not in fresh}, **new.coverage}
    files = tuple(f for f in base.source.files if f.get("provider") not in fresh) + new.source.files
    commits = {f.get("commit", "") for f in files}
    commit = commits.pop() if len(commits) == 1 else "per-file commits"
    dates = sorted({f.get("read", "") for f in files} - {""})
    date = dates[-1] if dates else new.source.date
    source = replace(new.source, commit=commit, date=date, files=files)
    offers = tuple(sorted(offers, key=lambda o: (o.provider, o.card, o.gpu_count, o.on_demand_usd_h or 0.0)))
    return replace(new, source=source, offers=offers, unmapped=tuple(sorted(unmapped)), rates=base.rates,
                   anomalies=anomalies, coverage=dict(sorted(coverage.items())))


def update_user_copy(
    sources: Mapping[str, Path],
    *,
    commit: str = "unknown",
    date: str | None = None,
    card_names: Mapping[str, str] | None = None,
    target: str | os.PathLike[str] | None = None,
    card_memory: Mapping[str, float] | None = None,
    card_forms: Mapping[str, str] | None = None,
    map_file: str | os.PathLike[str] | None = None,
    committed: str = "unknown",
) -> tuple[PriceSnapshot, Path]:
    """Check every row of every file, then write the merged snapshot atomically. Nothing is
    written if any file is bad, so the existing copy is left as it was. A new accelerator name
    finds its card through the catalog's aliases or a user map file (`map_file`, the format of
    catalog/prices/accelerators.yaml, over the shipped one); shipped files are never edited."""
    from gpuadvisor.core.fileio import atomic_write_text

    date = date or _dt.date.today().isoformat()
    amap = load_map()
    if map_file:
        amap = amap.merged(load_map(map_file))
    new = build_snapshot(sources, commit=commit, date=date, amap=amap, card_names=card_names,
                         card_memory=card_memory, card_forms=card_forms,
                         name=f"{SKYPILOT['name']} (refreshed)", committed=committed)
    if not new.offers and not new.unmapped:
        raise UserError(f"no GPU rows in {', '.join(str(p) for p in sources.values())}")
    snap = merge(load_prices(), new)
    path = Path(target) if target else user_path()
    atomic_write_text(path, dump_snapshot(snap), force=True)
    return snap, path


def _check_date(date: str) -> None:
    try:
        _dt.date.fromisoformat(date)
    except (TypeError, ValueError):
        raise UserError(f"date must be YYYY-MM-DD, not {date!r}") from None


def unmapped_lines(unmapped: Iterable[Unmapped], limit: int = 8) -> list[str]:
    """Short human lines: 'aws Inferentia (not a GPU, 42 rows)'."""
    items = [f"{u.provider} {u.accelerator} ({u.reason}, {u.rows} rows)" for u in unmapped]
    return items[:limit] + ([f"and {len(items) - limit} more"] if len(items) > limit else [])
