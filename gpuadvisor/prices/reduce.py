"""From checked SkyPilot rows to offers: map accelerators to catalog cards, join GCP's separately
priced GPUs to their host VMs, and keep per shape what advice needs (cheapest region, cheapest
spot, the median region, every region's pair). What cannot be mapped is counted, never dropped.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from gpuadvisor.core.errors import UserError
from gpuadvisor.prices import checks, mapping
from gpuadvisor.prices.hosts import attached_name, with_hosts
from gpuadvisor.prices.model import ANOMALY_KINDS, NOT_GPU, Anomaly, Offer, Unmapped, median_or_none
from gpuadvisor.prices.skypilot import Row

REDUCTION = (
    "One offer per (provider, instance type) with GPUs. Per region: the lowest on-demand and the "
    "lowest spot price over its zones. Kept: the cheapest on-demand region (its price and name), the "
    "cheapest spot price anywhere, the median of the regions' on-demand prices, and every region's "
    "(on-demand, spot) pair. GCP prices GPUs apart from their host VM: host families with fixed GPUs "
    "(a2, a3, a4, g2; host_families in accelerators.yaml) get VM + GPUs per zone; other GCP GPUs are "
    "listed alone with a note. A share of one GPU (Azure NV*as_v4, NV*ads_A10_v5) is an offer with "
    "gpu_fraction < 1 and that share's memory, never a whole card. Checks (anomalies): a spot price "
    "above on-demand is dropped; a per-GPU price more than 3x from the provider's median for the card "
    "is flagged; a region more than 3x from the same shape's other regions is left out, and one more "
    "than 20x below the market median for the card (a placeholder price); spot-only regions are "
    "flagged. CPU-only shapes are not counted; non-GPU accelerators and names with no catalog card "
    "are left out and counted in `unmapped`."
)


Target = str | dict[float, str]  # a card, or {GiB: card} for a name given to two memory sizes


class CardFacts(NamedTuple):
    """What the mapping checks need of each catalog card: names (lower-case name or alias -> card),
    memory (card -> GiB) and form factor (card -> the catalog's form_factor)."""

    names: dict[str, str]
    memory: dict[str, float]
    forms: dict[str, str]


@dataclass(frozen=True)
class AcceleratorMap:
    """catalog/prices/accelerators.yaml: SkyPilot accelerator names -> catalog cards."""

    cards: dict[str, Target]
    providers: dict[str, dict[str, Target]] = field(default_factory=dict)
    instances: dict[str, dict[str, Target]] = field(default_factory=dict)
    not_gpu: frozenset[str] = frozenset()
    not_gpu_prefixes: tuple[str, ...] = ()
    gpu_counts: dict[str, dict[str, float]] = field(default_factory=dict)
    host_families: dict[str, dict[str, str]] = field(default_factory=dict)
    host_counts: dict[str, dict[str, int]] = field(default_factory=dict)
    gpu_memory: dict[str, str] = field(default_factory=dict)  # provider -> how GpuInfo states memory
    memory_overrides: dict[str, dict[str, tuple[float, str]]] = field(default_factory=dict)  # (GiB, why)
    retired: dict[str, dict[str, tuple[str, str]]] = field(default_factory=dict)  # instance -> (why, source)

    def is_gpu(self, accelerator: str) -> bool:
        a = accelerator.lower()
        return a not in self.not_gpu and not any(a.startswith(p) for p in self.not_gpu_prefixes)

    def card_for(self, provider: str, accelerator: str, instance_type: str) -> Target | None:
        """The card (or {GiB: card} where the source gives one name to two memory sizes)."""
        for table, key in ((self.instances.get(provider, {}), instance_type),
                           (self.providers.get(provider, {}), accelerator), (self.cards, accelerator)):
            if key in table:
                return table[key]
        folded = accelerator.casefold()
        return next((c for a, c in sorted(self.cards.items()) if a.casefold() == folded), None)

    def memory_mib(self, provider: str, row: Row, count: float) -> float | None:
        """One GPU's memory in MiB as the row states it (or as corrected in memory_overrides)."""
        fixed = self.memory_overrides.get(provider, {}).get(row.instance_type)
        if fixed is not None:
            return fixed[0] * 1024.0 * (count if 0 < count < 1 else 1.0)
        return mapping.gpu_memory_mib(row.gpu_info, count, self.gpu_memory.get(provider, "per_gpu_mib"))

    def merged(self, extra: AcceleratorMap) -> AcceleratorMap:
        """This map with a user's map file over it (`prices update --map`): its names win."""
        def over(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
            return {**a, **{k: {**a.get(k, {}), **v} for k, v in b.items()}}

        return AcceleratorMap(
            cards={**self.cards, **extra.cards}, providers=over(self.providers, extra.providers),
            instances=over(self.instances, extra.instances), not_gpu=self.not_gpu | extra.not_gpu,
            not_gpu_prefixes=self.not_gpu_prefixes + extra.not_gpu_prefixes,
            gpu_counts=over(self.gpu_counts, extra.gpu_counts),
            host_families=over(self.host_families, extra.host_families),
            host_counts=over(self.host_counts, extra.host_counts), gpu_memory={**self.gpu_memory, **extra.gpu_memory},
            memory_overrides=over(self.memory_overrides, extra.memory_overrides),
            retired=over(self.retired, extra.retired))


def default_map_path() -> Path:
    from gpuadvisor.core.paths import shipped_catalog_dir

    return shipped_catalog_dir() / "prices" / "accelerators.yaml"


def load_map(path: str | os.PathLike[str] | None = None) -> AcceleratorMap:
    from gpuadvisor.core.fileio import load_yaml

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
    conventions = {str(k).lower(): str(v) for k, v in (d.get("gpu_memory") or {}).items()}
    for prov, conv in conventions.items():
        if conv not in mapping.MEMORY_CONVENTIONS:
            raise UserError(f"{p}: gpu_memory {prov}: {conv!r} is not one of {', '.join(mapping.MEMORY_CONVENTIONS)}")
    def targets(key: str) -> dict[str, dict[str, Target]]:
        return {k: {str(a): _target(c, p, str(a)) for a, c in v.items()} for k, v in table(key, True).items()}

    return AcceleratorMap(
        cards={str(k): _target(v, p, str(k)) for k, v in table("cards", False).items()},
        providers=targets("providers"),
        instances=targets("instances"),
        not_gpu=frozenset(str(x).lower() for x in d.get("not_gpu") or ()),
        not_gpu_prefixes=tuple(str(x).lower() for x in d.get("not_gpu_prefixes") or ()),
        gpu_counts=counts,
        host_families={k: {str(a): str(c) for a, c in v.items()} for k, v in table("host_families", True).items()},
        host_counts={k: {str(a): _host_count(c, p, a) for a, c in v.items()}
                     for k, v in table("host_counts", True).items()},
        gpu_memory=conventions,
        memory_overrides={k: {str(i): _memory_fix(v, p, str(i)) for i, v in t.items()}
                          for k, t in table("memory_overrides", True).items()},
        retired={k: _retired(t, p, k) for k, t in table("retired", True).items()},
    )


def _target(v: Any, p: Path, name: str) -> Target:
    """A card name, or {GiB: card} (a name the source gives to GPUs of two memory sizes)."""
    if isinstance(v, dict):
        try:
            out = {float(k): str(c) for k, c in v.items()}
        except (TypeError, ValueError):
            raise UserError(f"{p}: {name}: a memory table needs GiB keys (40: card, 80: card)") from None
        if len(out) < 2:
            raise UserError(f"{p}: {name}: a memory table needs two or more sizes")
        return out
    return str(v)


def _memory_fix(v: Any, p: Path, instance: str) -> tuple[float, str]:
    gib = v.get("gib") if isinstance(v, dict) else None
    if not isinstance(gib, (int, float)) or isinstance(gib, bool) or gib <= 0 or not v.get("why"):
        raise UserError(f"{p}: memory_overrides {instance}: needs 'gib' (per GPU, > 0) and 'why'")
    return float(gib), str(v["why"])


def _retired(t: dict[str, Any], p: Path, provider: str) -> dict[str, tuple[str, str]]:
    """retired: provider: {family: {why, source, instances: [...]}} -> instance -> (why, source)."""
    out: dict[str, tuple[str, str]] = {}
    for family, v in t.items():
        if not (isinstance(v, dict) and v.get("why") and v.get("source") and isinstance(v.get("instances"), list)):
            raise UserError(f"{p}: retired {provider} {family}: needs 'why', 'source' and a list of 'instances'")
        for name in v["instances"]:
            out[str(name)] = (f"{family}: {v['why']}", str(v["source"]))
    return out


def _host_count(v: Any, p: Path, instance: str) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        raise UserError(f"{p}: host_counts {instance}: needs a GPU count (integer >= 1), not {v!r}")
    return v


def _count(v: Any, p: Path, instance: str) -> float:
    """A corrected GPU count: a whole number >= 1, or a share of one GPU in (0, 1) (Azure lists its
    1/8-MI25 NV4as_v4 with count 1); always with the reason."""
    n = v.get("count") if isinstance(v, dict) else None
    ok = isinstance(n, (int, float)) and not isinstance(n, bool) and ((n >= 1 and n == int(n)) or 0 < n < 1)
    if not ok or not (isinstance(v, dict) and v.get("why")) or not isinstance(n, (int, float)):
        raise UserError(f"{p}: gpu_counts {instance}: needs 'count' (a whole number >= 1 or a share "
                        "between 0 and 1) and 'why'")
    return float(n)


class Reduction(NamedTuple):
    """What the reduction made of the rows: offers, what it left out, what its checks found, and
    per provider the accounting of every raw GPU shape (`coverage`)."""

    offers: list[Offer]
    unmapped: list[Unmapped]
    anomalies: list[Anomaly]
    coverage: dict[str, dict[str, Any]]


def raw_shape(r: Row) -> str:
    """A raw row's shape name: its instance type, or '8x H100 (attached)' for a GPU-only row."""
    return r.instance_type or attached_name(r.count, r.accelerator)


FLAG_ORDER = ("uniform low price", "spot above on-demand", "below market")  # how an offer lists its flags
Key = tuple[str, str, str, str]  # provider, shape, accelerator, card: a shape split by memory has two


@dataclass
class _Tally:
    """What reduce_rows gathers as it goes: rows left out by (provider, accelerator, why), the rows of
    every kept shape by (provider, shape, accelerator, card) with their join notes, the suspect-price
    flags per shape, findings and coverage."""

    skipped: dict[tuple[str, str, str], list[Row]] = field(default_factory=lambda: defaultdict(list))
    shapes: dict[Key, list[tuple[Row, str, float]]] = field(default_factory=lambda: defaultdict(list))
    notes: dict[Key, str] = field(default_factory=dict)
    flags: dict[Key, list[str]] = field(default_factory=lambda: defaultdict(list))
    component_low: dict[tuple[str, str, float | None], checks.UniformLow] = field(default_factory=dict)
    anomalies: list[Anomaly] = field(default_factory=list)
    coverage: dict[str, dict[str, Any]] = field(default_factory=dict)


def reduce_rows(
    rows: Iterable[Row],
    amap: AcceleratorMap,
    card_names: Mapping[str, str] | None = None,
    card_memory: Mapping[str, float] | None = None,
    card_forms: Mapping[str, str] | None = None,
) -> Reduction:
    """Offers, the unmapped tally, the checks' findings and the coverage. `card_names` (lower-case
    name or alias -> card name), when given, turns a mapping to a card the catalog lacks into an
    unmapped entry and lets a name no table maps find its card through the catalog's aliases;
    `card_memory` (card -> GiB) checks every row's memory against its card and gives a fractional
    offer its share's memory; `card_forms` (card -> form_factor) checks the form factor an instance
    name states (gpuadvisor.prices.mapping)."""
    by_provider: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        by_provider[r.provider].append(r)
    facts = CardFacts(dict(card_names or {}), dict(card_memory or {}), dict(card_forms or {}))
    t = _Tally()
    for provider, prows in sorted(by_provider.items()):
        _map_provider(t, provider, prows, amap, facts if card_names is not None else None)
    offers = _offers(t, card_memory)
    for provider, cov in t.coverage.items():
        cov["offers"] = sum(o.provider == provider for o in offers)
        cov["excluded"] = dict(sorted(cov["excluded"].items()))
        cov["refused_rows"] = dict(sorted(cov["refused_rows"].items()))
        cov["split"] = {k: sorted(v) for k, v in sorted(cov["split"].items())}
        cov["suspect"] = sum(o.provider == provider and bool(o.flags) for o in offers)
    unmapped = [Unmapped(p, a, len(rs), why, len({raw_shape(r) for r in rs}))
                for (p, a, why), rs in sorted(t.skipped.items())]
    for u in unmapped:
        if u.reason.startswith(("mismatch:", "retired:")):
            continue  # recorded per shape as they were found
        kind = "non_gpu" if u.reason == NOT_GPU else "unmapped"
        t.anomalies.append(Anomaly(kind, u.provider, u.accelerator, "", f"{u.shapes} shapes, {u.rows} rows",
                                   f"left out: {u.reason} (listed in unmapped)"))
    order = list(ANOMALY_KINDS)
    t.anomalies.sort(key=lambda a: (order.index(a.kind), a.provider, a.shape, a.region))
    return Reduction(offers, unmapped, t.anomalies, t.coverage)


def _map_provider(t: _Tally, provider: str, prows: list[Row], amap: AcceleratorMap,
                  facts: CardFacts | None) -> None:
    """One provider's rows, joined to their hosts, each to a card and GPU count or left out with why:
    retired instance families, rows whose memory or form factor is not their card's."""
    raw_gpu = {raw_shape(r) for r in prows if r.accelerator and amap.is_gpu(r.accelerator)}
    for r_acc, count, low in checks.uniform_low_components(provider, prows, amap.is_gpu):
        t.component_low[(provider, r_acc, count)] = low
    joined = with_hosts(prows, amap.host_families.get(provider, {}), amap.host_counts.get(provider, {}),
                        amap.is_gpu)
    t.anomalies.extend(joined.anomalies)
    excluded: dict[str, str] = {}
    kept: dict[str, set[str]] = defaultdict(set)  # shape -> cards it is an offer on
    refused: dict[str, str] = {}
    reported: set[tuple[str, str]] = set()
    for r, note in joined.rows:
        if not r.accelerator:
            continue  # a CPU-only shape
        acc = r.accelerator
        if not amap.is_gpu(acc):
            t.skipped[(provider, acc, NOT_GPU)].append(r)
            continue
        retired = amap.retired.get(provider, {}).get(r.instance_type)
        if retired:
            gone = f"retired: {retired[0]}"
            t.skipped[(provider, acc, gone)].append(r)
            excluded[r.instance_type] = f"{acc}: {gone} ({retired[1]})"
            if (r.instance_type, gone) not in reported:
                reported.add((r.instance_type, gone))
                t.anomalies.append(Anomaly("retired", provider, r.instance_type, "", retired[0],
                                           f"shape left out (source: {retired[1]})"))
            continue
        count = float(amap.gpu_counts.get(provider, {}).get(r.instance_type) or r.count or 0)
        card, refusal = _card_of(amap, provider, r, count, facts)
        if refusal or card is None:
            why = refusal or ""
            t.skipped[(provider, acc, why)].append(r)
            refused[r.instance_type] = f"{acc}: {why}"
            if why.startswith("mismatch:") and (r.instance_type, why) not in reported:
                reported.add((r.instance_type, why))
                t.anomalies.append(Anomaly("mismatch", provider, r.instance_type, r.region, why[len("mismatch: "):],
                                           "rows left out: never priced as another card"))
            continue
        key = (provider, r.instance_type, acc, card)
        t.shapes[key].append((r, card, count))
        kept[r.instance_type].add(card)
        if note:
            t.notes[key] = note
    for shape, why in refused.items():
        if shape in kept:
            continue
        excluded[shape] = why
    t.coverage[provider] = {
        "rows": len(prows), "gpu_shapes": len(raw_gpu), "excluded": excluded,
        "refused_rows": {s: w for s, w in refused.items() if s in kept},
        "split": {s: cards for s, cards in kept.items() if len(cards) > 1},
        "joined": {k: sorted(v) for k, v in sorted(joined.joined.items())},
        "non_gpu_shapes": len({raw_shape(r) for r in prows if r.accelerator and not amap.is_gpu(r.accelerator)})}


def _card_of(amap: AcceleratorMap, provider: str, r: Row, count: float,
             facts: CardFacts | None) -> tuple[str | None, str | None]:
    """A GPU row's card, or why it has none: a broken count, no mapping, a card the catalog lacks,
    or a card whose memory or form factor is not what the row states (reason 'mismatch: ...')."""
    if count > 1 and count != int(count):
        return None, f"GPU count {count:g} is neither whole nor a share of one GPU"
    target = amap.card_for(provider, r.accelerator, r.instance_type)
    if target is None and facts is not None:
        target = _by_alias(facts.names, r.accelerator)
    if target is None:
        return None, "no card mapping in catalog/prices/accelerators.yaml (or a --map file), nor a catalog alias"
    mib = amap.memory_mib(provider, r, count)
    if isinstance(target, dict):
        card = mapping.pick_by_memory(target, mib)
        if card is None:
            stated = f"{mapping.memory_gib(mib):g} GiB per GPU" if mib else "no memory"
            sizes = ", ".join(f"{g:g} GiB" for g in sorted(target))
            return None, f"mismatch: the row states {stated}, which is none of {sizes}"
    else:
        card = target
    if facts is None:
        return card, None
    known = facts.names.get(card.lower())
    if not known:
        return None, f"card not in catalog: maps to {card!r}"
    card = known
    whole = facts.memory.get(card)
    fraction = count if 0 < count < 1 else 1.0
    if mib is not None and whole and not mapping.memory_matches(mib, whole, fraction):
        share = f" x {fraction:g}" if fraction < 1 else ""
        return None, (f"mismatch: the row states {mapping.memory_gib(mib):g} GiB per GPU, "
                      f"{card} has {whole:g}{share}")
    form = mapping.form_mismatch(r.instance_type, card, facts.forms.get(card))
    if form:
        return None, f"mismatch: form factor: {form}"
    return card, None


def _by_alias(names: Mapping[str, str], accelerator: str) -> str | None:
    """A name no table maps, found through the catalog's names and aliases ignoring case and
    punctuation ('H100 NVL' -> 'H100 NVL 94GB'); the memory and form checks still apply."""
    def fold(text: str) -> str:
        return "".join(ch for ch in text.lower() if ch.isalnum())

    want = fold(accelerator)
    return next((card for label, card in sorted(names.items()) if fold(label) == want), None) if want else None


def _offers(t: _Tally, card_memory: Mapping[str, float] | None) -> list[Offer]:
    """Every kept shape's prices checked (against its own regions, its provider and the market)
    and made an offer, sorted. A suspect price is flagged on the offer, not changed."""
    tables = {key: _regions(group) for key, group in t.shapes.items()}
    for key, regions in tables.items():
        provider, shape = key[0], key[1]
        found, suspect = checks.spot_vs_on_demand(provider, shape, regions)
        t.anomalies.extend(found)
        if suspect:
            t.flags[key].append(suspect)
    medians = checks.provider_medians(
        (k[0], g[0][1], _whole_gpus(g[0][2]), tables[k]) for k, g in t.shapes.items() if g[0][2] >= 1)
    whole = [(k[0], g[0][1], g[0][2], tables[k]) for k, g in t.shapes.items() if g[0][2] >= 1]
    market = checks.market_medians(whole)
    by_provider = checks.provider_market(whole)
    offers = []
    for key, group in t.shapes.items():
        offer = _shape_offer(t, key, group, tables[key], medians, market, by_provider, card_memory)
        if offer is not None:
            offers.append(offer)
    offers.sort(key=lambda o: (o.provider, o.card, o.gpu_count, o.gpu_fraction,
                               o.on_demand_usd_h or o.spot_usd_h or 0.0,
                               o.instance_type))
    return offers


def _shape_offer(t: _Tally, key: Key, group: list[tuple[Row, str, float]],
                 regions: dict[str, list[float | None]], medians: Mapping[Any, Any], market: Mapping[str, Any],
                 by_provider: Mapping[str, dict[str, float]], card_memory: Mapping[str, float] | None) -> Offer | None:
    """One shape's offer, its findings noted; None (and why, in coverage and unmapped) when it is left out."""
    provider, shape = key[0], key[1]
    first, card, count = group[0]
    if count >= 1:
        cheap = checks.below_market(provider, shape, card, count, market.get(card), regions)
        t.anomalies.extend(cheap)
        if cheap and not regions:
            why = f"{first.accelerator}: every region more than 20x below the market median for {card} (anomalies)"
            t.coverage[provider]["excluded"][shape] = why
            return None
    low = checks.uniform_low(provider, shape, {r: p[0] for r, p in regions.items()})
    low = low or _component_low(t, provider, first, count, regions)
    if low is not None:
        t.anomalies.append(low.anomaly)
        t.flags[key].append(low.flag)
    found = checks.outliers(provider, shape, _whole_gpus(count) if count >= 1 else count,
                            medians.get((provider, card)), regions)
    t.anomalies.extend(found)
    note = t.notes.get(key, "")
    for a in found:
        if a.action.startswith("kept"):
            flag = f"check: {a.figures} in {a.region} (kept; see anomalies)"
            note = f"{note}; {flag}" if note else flag
    if count >= 1 and low is None:
        market_flag = checks.cheap_against_market(provider, shape, card, count, by_provider.get(card), regions)
        if market_flag is not None:
            t.anomalies.append(market_flag[0])
            t.flags[key].append(market_flag[1])
    t.anomalies.extend(checks.missing_on_demand(provider, shape, regions))
    flags = tuple(sorted(t.flags.get(key, ()), key=lambda f: (FLAG_ORDER.index(f.split(":", 1)[0])
                                                               if f.split(":", 1)[0] in FLAG_ORDER else 9, f)))
    offer = _offer(first, card, count, regions, note, card_memory, flags)
    if offer is None:
        no_price = "listed without a price in any region"
        t.skipped[(provider, first.accelerator, no_price)].extend(r for r, _, _ in group)
        t.coverage[provider]["excluded"][shape] = "listed without a price in any region"
        t.anomalies.append(Anomaly("no_price", provider, shape, "", f"{len(group)} rows, no price",
                                   "shape left out (counted in unmapped)"))
        return None
    if offer.fractional:
        t.anomalies.append(Anomaly(
            "fractional", provider, shape, "",
            f"{count:g} of one {card}" + (f" = {offer.gpu_memory_gib:g} GiB" if offer.gpu_memory_gib else ""),
            "kept as a fractional offer (gpu_fraction); the advisor does not count it as a card"))
    return offer


def _component_low(t: _Tally, provider: str, first: Row, count: float,
                   regions: dict[str, list[float | None]]) -> checks.UniformLow | None:
    """A host VM + GPUs shape whose GPU rows carry a uniform-low price in its cheapest region."""
    low = t.component_low.get((provider, first.accelerator, first.count))
    if low is None:
        return None
    ods = {r: p[0] for r, p in regions.items() if p[0] is not None}
    if not ods or min(sorted(ods), key=ods.__getitem__) not in low.regions:
        return None
    return low.for_shape(first.instance_type or "")


def _whole_gpus(count: float) -> float:
    return max(count, 1.0)


def _regions(group: list[tuple[Row, str, float]]) -> dict[str, list[float | None]]:
    """Per region, the lowest on-demand and the lowest spot price over its zones."""
    per_region: dict[str, list[float | None]] = {}
    for r, _, _ in group:
        od, spot = per_region.setdefault(r.region, [None, None])
        per_region[r.region] = [_min(od, r.price), _min(spot, r.spot)]
    return per_region


def _offer(first: Row, card: str, count: float, table: dict[str, list[float | None]], note: str,
           card_memory: Mapping[str, float] | None, flags: tuple[str, ...] = ()) -> Offer | None:
    regions = {reg: (p[0], p[1]) for reg, p in sorted(table.items()) if p[0] is not None or p[1] is not None}
    if not regions:
        return None
    ods = {reg: p[0] for reg, p in regions.items() if p[0] is not None}
    spots = [p[1] for p in regions.values() if p[1] is not None]
    pool: dict[str, float] = ods or {reg: p[1] for reg, p in regions.items() if p[1] is not None}
    region = min(sorted(pool), key=lambda reg: pool[reg])
    fraction = count if count < 1 else 1.0
    whole = card_memory.get(card) if card_memory else None
    return Offer(
        provider=first.provider, instance_type=first.instance_type, accelerator=first.accelerator, card=card,
        gpu_count=int(count) if count >= 1 else 1, vcpus=first.vcpus, memory_gib=first.memory_gib, region=region,
        on_demand_usd_h=ods.get(region), spot_usd_h=min(spots) if spots else None,
        median_on_demand_usd_h=median_or_none(ods.values()), regions=regions, note=note,
        gpu_fraction=round(fraction, 6), gpu_memory_gib=round(whole * fraction, 3) if whole and fraction < 1 else None,
        flags=flags,
    )


def _min(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)


def catalog_card_memory(extra_dirs: Iterable[str] = ()) -> dict[str, float]:
    """card name -> memory in GiB, from the catalog: a fractional offer's share of it."""
    from gpuadvisor.catalog import load_catalog

    return {c.name: float(c.memory_gib) for c in load_catalog(list(extra_dirs)).cards if c.memory_gib}


def catalog_card_forms(extra_dirs: Iterable[str] = ()) -> dict[str, str]:
    """card name -> the catalog's form_factor (PCIe ..., SXM, OAM, ...): the form factor check."""
    from gpuadvisor.catalog import load_catalog

    return {c.name: str(c.form_factor or "") for c in load_catalog(list(extra_dirs)).cards}


def catalog_facts(extra_dirs: Iterable[str] = ()) -> CardFacts:
    """Names, memory and form factors of the catalog's cards (shipped + extra folders)."""
    dirs = list(extra_dirs)
    return CardFacts(catalog_card_names(dirs), catalog_card_memory(dirs), catalog_card_forms(dirs))


def catalog_card_names(extra_dirs: Iterable[str] = ()) -> dict[str, str]:
    """lower-case card name or alias -> card name, from the catalog (shipped + extra folders)."""
    from gpuadvisor.catalog import load_catalog

    names: dict[str, str] = {}
    for c in load_catalog(list(extra_dirs)).cards:
        for label in (c.name, *c.aliases):
            names[label.lower()] = c.name
    return names
