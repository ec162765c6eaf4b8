"""The builder's price checks. Each finding is an `Anomaly` recorded in the snapshot (and printed by
tools/build_prices.py) with the figures and what was done, so nothing is changed silently:

* spot above on-demand in a region: that region's spot price is dropped (spot is never dearer);
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
from collections.abc import Iterable

from gpuadvisor.prices.model import Anomaly

OUTLIER_FACTOR = 3.0
SPREAD_FACTOR = 2.0  # regions of one shape: beyond this the cheap and dear regions are flagged
MARKET_FACTOR = 20.0  # against other providers: marketplaces are legitimately up to ~11x below clouds (old GPUs)

Regions = dict[str, list[float | None]]  # region -> [on-demand, spot] USD/h for the whole shape


def spot_above_on_demand(provider: str, shape: str, regions: Regions) -> list[Anomaly]:
    """Drop (in place) each region's spot price that is above its on-demand price."""
    found = []
    for region, pair in sorted(regions.items()):
        od, spot = pair
        if od is not None and spot is not None and spot > od:
            found.append(Anomaly("spot_above_on_demand", provider, shape, region,
                                 f"spot {spot:.6g} > on-demand {od:.6g} USD/h", "spot price dropped in this region"))
            pair[1] = None
    return found


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
