"""From checked SkyPilot rows to offers: map accelerators to catalog cards, join GCP's separately
priced GPUs to their host VMs, and keep per shape what advice needs (cheapest region, cheapest
spot, the median region, every region's pair). What cannot be mapped is counted, never dropped.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gpuadvisor.errors import UserError
from gpuadvisor.prices.model import Offer, Unmapped, median_or_none
from gpuadvisor.prices.skypilot import Row

REDUCTION = (
    "One offer per (provider, instance type) with GPUs. Per region: the lowest on-demand and the "
    "lowest spot price over its zones. Kept: the cheapest on-demand region (its price and name), the "
    "cheapest spot price anywhere, the median of the regions' on-demand prices, and every region's "
    "(on-demand, spot) pair. GCP prices GPUs apart from their host VM: host families with fixed GPUs "
    "(a2, a3) get VM + GPUs per zone; other GCP GPUs are listed alone with a note. CPU-only shapes, "
    "fractional GPUs, non-GPU accelerators and names with no catalog card are left out and counted "
    "in `unmapped`."
)
_COUNT_IN_NAME = re.compile(r"-(\d+)g(?:-|$)")


@dataclass(frozen=True)
class AcceleratorMap:
    """catalog/prices/accelerators.yaml: SkyPilot accelerator names -> catalog cards."""

    cards: dict[str, str]
    providers: dict[str, dict[str, str]] = field(default_factory=dict)
    instances: dict[str, dict[str, str]] = field(default_factory=dict)
    not_gpu: frozenset[str] = frozenset()
    not_gpu_prefixes: tuple[str, ...] = ()
    gpu_counts: dict[str, dict[str, int]] = field(default_factory=dict)
    host_families: dict[str, dict[str, str]] = field(default_factory=dict)

    def is_gpu(self, accelerator: str) -> bool:
        a = accelerator.lower()
        return a not in self.not_gpu and not any(a.startswith(p) for p in self.not_gpu_prefixes)

    def card_for(self, provider: str, accelerator: str, instance_type: str) -> str | None:
        for table, key in ((self.instances.get(provider, {}), instance_type),
                           (self.providers.get(provider, {}), accelerator), (self.cards, accelerator)):
            if key in table:
                return table[key]
        return None


def default_map_path() -> Path:
    from gpuadvisor.paths import shipped_catalog_dir

    return shipped_catalog_dir() / "prices" / "accelerators.yaml"


def load_map(path: str | os.PathLike[str] | None = None) -> AcceleratorMap:
    from gpuadvisor.fileio import load_yaml

    p = Path(path) if path else default_map_path()
    d = load_yaml(p, "accelerator map")
    if not isinstance(d, dict) or not isinstance(d.get("cards"), dict):
        raise UserError(f"{p}: an accelerator map needs a 'cards:' table of SkyPilot name -> card")

    def table(key: str, nested: bool) -> dict[str, Any]:
        t = d.get(key) or {}
        bad = not isinstance(t, dict) or (nested and any(not isinstance(v, dict) for v in t.values()))
        if bad:
            raise UserError(f"{p}: '{key}' must be a table{' of tables' if nested else ''}")
        return {str(k).lower() if nested else str(k): v for k, v in t.items()}

    counts = {prov: {str(i): _count(v, p, i) for i, v in t.items()} for prov, t in table("gpu_counts", True).items()}
    return AcceleratorMap(
        cards={str(k): str(v) for k, v in table("cards", False).items()},
        providers={k: {str(a): str(c) for a, c in v.items()} for k, v in table("providers", True).items()},
        instances={k: {str(a): str(c) for a, c in v.items()} for k, v in table("instances", True).items()},
        not_gpu=frozenset(str(x).lower() for x in d.get("not_gpu") or ()),
        not_gpu_prefixes=tuple(str(x).lower() for x in d.get("not_gpu_prefixes") or ()),
        gpu_counts=counts,
        host_families={k: {str(a): str(c) for a, c in v.items()} for k, v in table("host_families", True).items()},
    )


def _count(v: Any, p: Path, instance: str) -> int:
    n = v.get("count") if isinstance(v, dict) else None
    if not isinstance(n, int) or n < 1 or not (isinstance(v, dict) and v.get("why")):
        raise UserError(f"{p}: gpu_counts {instance}: needs 'count' (integer >= 1) and 'why'")
    return n


def reduce_rows(
    rows: Iterable[Row], amap: AcceleratorMap, card_names: Mapping[str, str] | None = None
) -> tuple[list[Offer], list[Unmapped]]:
    """Offers and the unmapped tally. `card_names` (lower-case name or alias -> card name), when
    given, turns a mapping to a card the catalog lacks into an unmapped entry."""
    by_provider: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        by_provider[r.provider].append(r)
    skipped: dict[tuple[str, str, str], int] = defaultdict(int)
    shapes: dict[tuple[str, str, str], list[tuple[Row, str, int]]] = defaultdict(list)
    notes: dict[tuple[str, str, str], str] = {}
    for provider, prows in by_provider.items():
        for r, note in _with_hosts(prows, amap.host_families.get(provider, {})):
            if not r.accelerator:
                continue  # a CPU-only shape
            acc = r.accelerator
            if not amap.is_gpu(acc):
                skipped[(provider, acc, "not a GPU")] += 1
                continue
            count = amap.gpu_counts.get(provider, {}).get(r.instance_type) or r.count or 0
            if count != int(count):
                skipped[(provider, acc, f"fractional GPU count {count:g}")] += 1
                continue
            card = amap.card_for(provider, acc, r.instance_type)
            if card is None:
                skipped[(provider, acc, "no card mapping in catalog/prices/accelerators.yaml")] += 1
                continue
            if card_names is not None:
                known = card_names.get(card.lower())
                if known is None:
                    skipped[(provider, acc, f"maps to {card!r}, which is not in the catalog")] += 1
                    continue
                card = known
            key = (provider, r.instance_type, acc)
            shapes[key].append((r, card, int(count)))
            if note:
                notes[key] = note
    offers = []
    for key, group in shapes.items():
        offer = _offer(group, notes.get(key, ""))
        if offer is None:
            skipped[(key[0], key[2], "listed without a price in any region")] += len(group)
        else:
            offers.append(offer)
    offers.sort(key=lambda o: (o.provider, o.card, o.gpu_count, o.on_demand_usd_h or o.spot_usd_h or 0.0))
    unmapped = [Unmapped(p, a, n, why) for (p, a, why), n in sorted(skipped.items())]
    return offers, unmapped


def _offer(group: list[tuple[Row, str, int]], note: str) -> Offer | None:
    first, card, count = group[0]
    per_region: dict[str, list[float | None]] = {}
    for r, _, _ in group:
        od, spot = per_region.setdefault(r.region, [None, None])
        per_region[r.region] = [_min(od, r.price), _min(spot, r.spot)]
    regions = {reg: (p[0], p[1]) for reg, p in per_region.items() if p[0] is not None or p[1] is not None}
    if not regions:
        return None
    ods = {reg: p[0] for reg, p in regions.items() if p[0] is not None}
    spots = [p[1] for p in regions.values() if p[1] is not None]
    pool = ods or {reg: p[1] for reg, p in regions.items()}
    region = min(sorted(pool), key=lambda reg: pool[reg])
    return Offer(
        provider=first.provider, instance_type=first.instance_type, accelerator=first.accelerator, card=card,
        gpu_count=count, vcpus=first.vcpus, memory_gib=first.memory_gib, region=region,
        on_demand_usd_h=ods.get(region), spot_usd_h=min(spots) if spots else None,
        median_on_demand_usd_h=median_or_none(ods.values()), regions=regions, note=note,
    )


def _min(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)


def _add(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else round(a + b, 6)


def _with_hosts(rows: list[Row], families: dict[str, str]) -> list[tuple[Row, str]]:
    """Rows ready to group. Where GPUs are priced on their own rows (InstanceType empty, as in
    GCP), host VMs of a family with fixed GPUs get VM + GPU prices per zone; GPU rows that no host
    used are kept alone, with a note that the host VM is billed on top."""
    gpu_rows = [r for r in rows if not r.instance_type]
    if not gpu_rows:
        return [(r, "") for r in rows]
    index = {(r.accelerator, r.count, r.region, r.zone): r for r in gpu_rows}
    used: set[tuple[str, float | None]] = set()
    out: list[tuple[Row, str]] = []
    for r in rows:
        if not r.instance_type or r.accelerator:
            continue
        acc = next((a for prefix, a in families.items() if r.instance_type.startswith(prefix)), None)
        m = _COUNT_IN_NAME.search(r.instance_type)
        if acc is None or m is None:
            continue
        gpu = index.get((acc, float(m.group(1)), r.region, r.zone))
        if gpu is None:
            continue
        used.add((acc, gpu.count))
        out.append((replace(r, accelerator=acc, count=gpu.count, price=_add(r.price, gpu.price),
                            spot=_add(r.spot, gpu.spot)), ""))
    note = "GPU only: the provider bills a host VM on top of this price"
    for r in gpu_rows:
        if (r.accelerator, r.count) not in used:
            out.append((replace(r, instance_type=f"{r.count:g}x {r.accelerator} (attached)"), note))
    out.extend((r, "") for r in rows if r.instance_type and r.accelerator)
    return out


def catalog_card_names(extra_dirs: Iterable[str] = ()) -> dict[str, str]:
    """lower-case card name or alias -> card name, from the catalog (shipped + extra folders)."""
    from gpuadvisor.catalog import load_catalog

    names: dict[str, str] = {}
    for c in load_catalog(list(extra_dirs)).cards:
        for label in (c.name, *c.aliases):
            names[label.lower()] = c.name
    return names
