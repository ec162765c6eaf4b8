"""The builder's price checks. Each finding is an `Anomaly` recorded in the snapshot (and printed by
tools/build_prices.py) with the figures and what was done, so nothing is changed silently. A
suspect price is kept as the source gives it and *flagged* on its offer (`Offer.flags`): the
advisor sets flagged offers aside and says how many and why.

* spot at or above on-demand in a region: that region's spot price is dropped; when spot is above,
  the on-demand price is suspect too (GCP's H100 rows with spot above on-demand are exactly its
  uniform-low prices below), so the offer is flagged; spot equal to on-demand is no spot;
* a price identical in UNIFORM_MIN_REGIONS or more regions, below every other region of the
  shape and under UNIFORM_LOW_RATIO x their median (GCP listed a3-highgpu-8g's H100s at
  $4.20/GPU-h in 16 regions and $9.80-12.70 in the rest): flagged; for VM + GPU shapes the check
  reads the GPU rows, since the VM part differs by region;
* an offer's per-GPU price more than MARKET_SUSPECT_FACTOR x below the cheapest other provider
  (two or more others) for its card: flagged (against the cheapest, not the median, because
  marketplaces rent old cards legitimately ~10x below the clouds);
* a region's per-GPU on-demand price more than OUTLIER_FACTOR x from the provider's median for the
  same card (over every shape and region): flagged, kept (a bigger or smaller host can explain it);
* a region's on-demand price more than OUTLIER_FACTOR x from the median of the same shape's other
  regions (three or more): that region is left out of the offer; a shape whose dearest region
  costs more than SPREAD_FACTOR x its cheapest is flagged, kept (GCP lists a3-highgpu at about
  $5.4/h per H100 in most regions and $11-14 in five others);
* a region's per-GPU on-demand price more than MARKET_FACTOR x below the market median for the
  card (the median over providers of each provider's median shape): that region is left
  out; a shape left with no region is excluded from the snapshot, with the reason in `coverage`
  (a placeholder price such as $0.01/h for an A100 would otherwise be "the cheapest");
* a region with a spot price and no on-demand price: kept (spot-only there), flagged.

Pure functions over {region: [on-demand, spot]} tables; the reduction calls them per shape.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import NamedTuple

from gpuadvisor.prices.model import Anomaly
from gpuadvisor.prices.skypilot import Row

OUTLIER_FACTOR = 3.0
SAME_PRICE = 1e-3  # spot within 0.1 % of on-demand is the same price (AWS rounds one of them)
UNIFORM_MIN_REGIONS = 3  # regions sharing one identical price
UNIFORM_LOW_RATIO = 0.75  # ... at or below this fraction of the other regions' median (GCP B200: 0.71)
MARKET_SUSPECT_FACTOR = 3.0  # per GPU, this far below the cheapest other provider for the card: flagged
SPREAD_FACTOR = 2.0  # regions of one shape: beyond this the cheap and dear regions are flagged
MARKET_FACTOR = 20.0  # against other providers: marketplaces are legitimately up to ~11x below clouds (old GPUs)

Regions = dict[str, list[float | None]]  # region -> [on-demand, spot] USD/h for the whole shape


def spot_vs_on_demand(provider: str, shape: str, regions: Regions) -> tuple[list[Anomaly], str | None]:
    """Drop (in place) each region's spot price at or above its on-demand price. Above: the
    on-demand price is suspect too, so the offer's flag is returned; equal: there is no spot."""
    found, above = [], []
    for region, pair in sorted(regions.items()):
        od, spot = pair
        if od is None or spot is None or spot < od * (1 - SAME_PRICE):
            continue
        if spot > od * (1 + SAME_PRICE):
            above.append(region)
            found.append(Anomaly("spot_above_on_demand", provider, shape, region,
                                 f"spot {spot:.6g} > on-demand {od:.6g} USD/h",
                                 "spot price dropped in this region; the on-demand is suspect too (offer flagged)"))
        else:
            found.append(Anomaly("spot_equals_on_demand", provider, shape, region,
                                 f"spot {spot:.6g} = on-demand {od:.6g} USD/h", "no spot price in this region"))
        pair[1] = None
    flag = (f"spot above on-demand: in {_regions_text(above, len(regions))}, so the on-demand price is suspect too"
            if above else None)
    return found, flag


class UniformLow(NamedTuple):
    """A price identical across regions and far below the shape's other regions."""

    regions: frozenset[str]
    anomaly: Anomaly
    flag: str

    def for_shape(self, shape: str) -> UniformLow:
        """The same finding, reported on the host VM shape whose GPU rows carry it."""
        a = self.anomaly._replace(shape=shape, figures=f"its GPU rows ({self.anomaly.shape}): {self.anomaly.figures}")
        return UniformLow(self.regions, a, self.flag.replace("uniform low price: ", "uniform low price: GPU rows at "))


def uniform_low(provider: str, shape: str, on_demand: dict[str, float | None]) -> UniformLow | None:
    """The regions sharing one identical on-demand price (UNIFORM_MIN_REGIONS or more) where every
    other region (two or more) is dearer and their median is over 1 / UNIFORM_LOW_RATIO x that
    price: a source SKU price that is not the list price (kept, flagged)."""
    ods = {r: round(v, 6) for r, v in on_demand.items() if v is not None}
    counts: dict[float, list[str]] = defaultdict(list)
    for r, v in sorted(ods.items()):
        counts[v].append(r)
    if not counts:
        return None
    price, same = min(counts.items(), key=lambda kv: kv[0])
    others = [v for r, v in ods.items() if v != price]
    if len(same) < UNIFORM_MIN_REGIONS or len(others) < 2:
        return None
    median = float(statistics.median(others))
    if price > UNIFORM_LOW_RATIO * median:
        return None
    figures = (f"{price:.6g} USD/h identical in {len(same)} regions, {price / median:.2f}x the median "
               f"{median:.6g} of the other {len(others)}")
    anomaly = Anomaly("uniform_low", provider, shape, _regions_text(same, len(ods)), figures,
                      "kept, flagged: a source SKU price below the shape's other regions; the advisor sets it aside")
    flag = (f"uniform low price: {price:.4g} USD/h identical in {len(same)} regions, {price / median:.2f}x the "
            f"median of the other {len(others)}")
    return UniformLow(frozenset(same), anomaly, flag)


def uniform_low_components(provider: str, rows: Iterable[Row], is_gpu: Callable[[str], bool]
                           ) -> list[tuple[str, float | None, UniformLow]]:
    """uniform_low over the GPU-only rows (InstanceType empty) of each (accelerator, count): the
    GPU part of a VM + GPUs price, identical across regions where the VM part is not."""
    per: dict[tuple[str, float | None], dict[str, float | None]] = defaultdict(dict)
    for r in rows:
        if r.instance_type or not r.accelerator or not is_gpu(r.accelerator) or r.price is None:
            continue
        table = per[(r.accelerator, r.count)]
        prev = table.get(r.region)
        table[r.region] = r.price if prev is None else min(prev, r.price)
    out = []
    for (acc, count), table in sorted(per.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0)):
        low = uniform_low(provider, f"{count or 0:g}x {acc} (GPU rows)", table)
        if low is not None:
            out.append((acc, count, low))
    return out


def cheap_against_market(provider: str, shape: str, card: str, gpus: float, others: dict[str, float] | None,
                         regions: Regions) -> tuple[Anomaly, str] | None:
    """The offer's headline (cheapest on-demand region) more than MARKET_SUSPECT_FACTOR x below the
    cheapest other provider's price per GPU for the card (`others`: provider -> median; two or
    more besides this one): kept, flagged (set aside by the advisor)."""
    ods = {r: od for r, (od, _) in regions.items() if od is not None}
    rest = {p: m for p, m in (others or {}).items() if p != provider}
    if len(rest) < 2 or not ods:
        return None
    region = min(sorted(ods), key=ods.__getitem__)
    per_gpu = ods[region] / gpus
    cheapest = min(sorted(rest), key=rest.__getitem__)
    if per_gpu * MARKET_SUSPECT_FACTOR >= rest[cheapest]:
        return None
    ratio = rest[cheapest] / per_gpu
    anomaly = Anomaly("below_market", provider, shape, region,
                      f"{per_gpu:.4f} USD/h per GPU vs {rest[cheapest]:.4f} at {cheapest}, the cheapest of "
                      f"{len(rest)} other providers for {card} ({ratio:.1f}x below)",
                      "kept, flagged: far below every other provider's price for this card; the advisor sets it aside")
    return anomaly, f"below market: {ratio:.1f}x below the cheapest other provider ({cheapest}) for {card}"


def missing_on_demand(provider: str, shape: str, regions: Regions) -> list[Anomaly]:
    """Regions with a spot price and no on-demand price (one finding per shape)."""
    spot_only = sorted(r for r, (od, spot) in regions.items() if od is None and spot is not None)
    if not spot_only:
        return []
    shown = ", ".join(spot_only[:6]) + (f" and {len(spot_only) - 6} more" if len(spot_only) > 6 else "")
    return [Anomaly("missing_on_demand", provider, shape, shown,
                    f"{len(spot_only)} of {len(regions)} regions have a spot price only",
                    "kept: spot-only in those regions (no on-demand price there)")]


def provider_medians(shapes: Iterable[tuple[str, str, float, Regions]]) -> dict[tuple[str, str], float]:
    """(provider, card) -> median per-GPU on-demand USD/h over every (shape, region)."""
    per: dict[tuple[str, str], list[float]] = defaultdict(list)
    for provider, card, gpus, regions in shapes:
        per[(provider, card)].extend(od / gpus for od, _ in regions.values() if od is not None)
    return {k: float(statistics.median(v)) for k, v in per.items() if v}


def outliers(provider: str, shape: str, gpus: float, median: float | None, regions: Regions,
             factor: float = OUTLIER_FACTOR) -> list[Anomaly]:
    """Two checks of on-demand prices per GPU. Against the provider's median for the card
    (`median`): regions more than `factor` x above or below are flagged (one finding per shape)
    and kept, since a shape's host (vCPUs, memory) can explain it (AWS g4dn.16xlarge: one T4 and
    64 vCPUs). Against the shape's own other regions: a region more than `factor` x from their
    median is left out (in place): the same machine cannot cost that much more or less."""
    found = []
    ods = {r: od for r, (od, _) in regions.items() if od is not None}
    if len(ods) >= 3:
        for r, od in sorted(ods.items()):
            others = statistics.median(v for k, v in ods.items() if k != r)
            if not others / factor <= od <= others * factor:
                found.append(Anomaly("outlier", provider, shape, r,
                                     f"{od:.6g} USD/h vs {others:.6g} median of its other regions ({od / others:.2f}x)",
                                     "region left out of this offer"))
                del regions[r]
    ods = {r: od for r, (od, _) in regions.items() if od is not None}
    if len(ods) >= 2 and max(ods.values()) > SPREAD_FACTOR * min(ods.values()):
        cheap, dear = min(sorted(ods), key=ods.__getitem__), max(sorted(ods), key=ods.__getitem__)
        low = sum(v < ods[dear] / SPREAD_FACTOR for v in ods.values())
        found.append(Anomaly("outlier", provider, shape, f"{cheap} .. {dear}",
                             f"regions from {ods[cheap]:.6g} to {ods[dear]:.6g} USD/h ({ods[dear] / ods[cheap]:.2f}x; "
                             f"{low} of {len(ods)} below half the dearest)",
                             "kept, flagged: the offer's price is its cheapest region; check it at the provider"))
    if median:
        per = {r: od / gpus / median for r, (od, _) in regions.items() if od is not None}
        bad = sorted(r for r, x in per.items() if not 1 / factor <= x <= factor)
        if bad:
            lo, hi = min(per[r] for r in bad), max(per[r] for r in bad)
            span = f"{lo:.2f}x" if lo == hi else f"{lo:.2f}-{hi:.2f}x"
            found.append(Anomaly("outlier", provider, shape, _regions_text(bad, len(per)),
                                 f"per-GPU price {span} the provider's median {median:.4f} USD/h for this GPU",
                                 "kept, flagged: the shape's host (vCPUs, memory) may explain it"))
    return found


def _regions_text(regions: list[str], of: int) -> str:
    shown = ", ".join(regions[:4]) + (f" and {len(regions) - 4} more" if len(regions) > 4 else "")
    return f"{shown} ({len(regions)} of {of} regions)" if of > 1 else shown


def market_medians(shapes: Iterable[tuple[str, str, float, Regions]]) -> dict[str, float]:
    """card -> the market's per-GPU on-demand price: the median over providers (one vote each, so
    a provider with many shapes or regions does not outvote the rest) of each provider's median
    over its shapes of the shape's median region."""
    per: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for provider, card, gpus, regions in shapes:
        ods = [od / gpus for od, _ in regions.values() if od is not None]
        if ods:
            per[card][provider].append(float(statistics.median(ods)))
    return {card: float(statistics.median(statistics.median(v) for v in provs.values()))
            for card, provs in per.items()}


def provider_market(shapes: Iterable[tuple[str, str, float, Regions]]) -> dict[str, dict[str, float]]:
    """card -> provider -> that provider's median over its shapes of the shape's median region, per GPU."""
    per: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for provider, card, gpus, regions in shapes:
        ods = [od / gpus for od, _ in regions.values() if od is not None]
        if ods:
            per[card][provider].append(float(statistics.median(ods)))
    return {card: {p: float(statistics.median(v)) for p, v in provs.items()} for card, provs in per.items()}


def below_market(provider: str, shape: str, card: str, gpus: float, median: float | None, regions: Regions,
                 factor: float = MARKET_FACTOR) -> list[Anomaly]:
    """Leave out (in place) regions priced more than `factor` x below the market median per GPU."""
    if not median:
        return []
    bad = {r: od for r, (od, _) in regions.items() if od is not None and od / gpus < median / factor}
    for r in bad:
        del regions[r]
    left = "region left out of this offer" if regions else "region left out; no region left, so the shape is excluded"
    return [Anomaly("outlier", provider, shape, r,
                    f"{od / gpus:.4f} USD/h per GPU vs market median {median:.4f} for {card} "
                    f"({median / (od / gpus):.0f}x below)", left)
            for r, od in sorted(bad.items())]
