"""The price snapshot as the advisor sees it: frozen offers, their source and date, currencies.

Loading is plain `json` + dataclasses (no pydantic, no YAML) because `gpuadvisor recommend` loads
the snapshot on every run and must stay fast. The file is validated field by field; a damaged
file is one UserError naming the file and the offer, never a traceback.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

from gpuadvisor.core.errors import UserError

FORMAT = "gpuadvisor-prices/1"
SHIPPED_NAME = "rental.json"


@dataclass(frozen=True)
class Offer:
    """One rentable instance shape. Prices are USD per hour for the whole instance.

    `region` is the region of the cheapest on-demand price (of the cheapest spot price where the
    shape has no on-demand price); `spot_usd_h` is the cheapest spot price in any region.
    `regions` maps every region to its (on-demand, spot) pair, None where not offered."""

    provider: str
    instance_type: str
    accelerator: str
    card: str
    gpu_count: int
    vcpus: float | None
    memory_gib: float | None
    region: str
    on_demand_usd_h: float | None
    spot_usd_h: float | None
    median_on_demand_usd_h: float | None
    regions: dict[str, tuple[float | None, float | None]] = field(default_factory=dict, hash=False)
    note: str = ""
    gpu_fraction: float = 1.0  # a share of one card (Azure NV4as_v4: 0.125 of an MI25); gpu_count is then 1
    gpu_memory_gib: float | None = None  # the memory that share has (fractional offers only)
    flags: tuple[str, ...] = ()  # suspect prices the builder's checks found (prices.checks); empty: none

    @property
    def suspect(self) -> bool:
        """A price the checks flagged: shown with its flags, set aside by the advisor."""
        return bool(self.flags)

    @property
    def fractional(self) -> bool:
        """A share of one GPU, not a whole card: the advisor does not count it as a card."""
        return self.gpu_fraction < 1.0

    def price_usd_h(self, spot: bool = False, region: str | None = None) -> float | None:
        """On-demand (or spot) USD/h in `region`, or at the cheapest region; None if not offered."""
        if region is None:
            return self.spot_usd_h if spot else self.on_demand_usd_h
        pair = self.regions.get(region)
        if pair is None:
            return None
        return pair[1] if spot else pair[0]

    def in_region(self, region: str) -> Offer:
        """This offer as rented in `region`: `region` and the two prices become that region's."""
        od, spot = self.regions[region]
        return replace(self, region=region, on_demand_usd_h=od, spot_usd_h=spot)

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in _OFFER_FIELDS}
        d["regions"] = {r: list(p) for r, p in sorted(self.regions.items())}
        if not self.note:
            d.pop("note")
        if not self.fractional:
            d.pop("gpu_fraction")
            d.pop("gpu_memory_gib")
        if self.flags:
            d["flags"] = list(self.flags)
        else:
            d.pop("flags")
        return d


_OFFER_FIELDS = (
    "provider", "instance_type", "accelerator", "card", "gpu_count", "vcpus", "memory_gib", "region",
    "on_demand_usd_h", "spot_usd_h", "median_on_demand_usd_h", "regions", "note", "gpu_fraction", "gpu_memory_gib",
    "flags",
)


class Unmapped(NamedTuple):
    """An accelerator the snapshot could not turn into offers, and why (reported, never dropped).
    Non-GPU accelerators (Gaudi, Inferentia, Trainium, TPUs) carry the reason `NOT_GPU`."""

    provider: str
    accelerator: str
    rows: int
    reason: str
    shapes: int = 0


NOT_GPU = "not a GPU"


class Anomaly(NamedTuple):
    """Something the builder's checks found in the source rows, and what the snapshot did about it.
    `kind` is one of ANOMALY_KINDS; `figures` holds the numbers that tripped the check."""

    kind: str
    provider: str
    shape: str
    region: str
    figures: str
    action: str


ANOMALY_KINDS = {
    "mismatch": "rows whose GPU memory or form factor is not their card's (left out)",
    "retired": "an instance family the provider has retired (left out, with the source)",
    "uniform_low": "a price identical across regions and far below the shape's other regions (flagged)",
    "spot_above_on_demand": "spot price above the on-demand price of the same shape and region (flagged)",
    "spot_equals_on_demand": "spot price equal to on-demand: no spot price",
    "below_market": "per-GPU price far below other providers' for the same card (flagged)",
    "outlier": "per-GPU price more than 3x from the provider's median for the same GPU",
    "host_vm_added": "GPU-only rows priced with the host VM the same file lists",
    "gpu_only": "GPU-only rows whose host VM is not fixed or not listed",
    "fractional": "a share of one GPU, priced per share with that share's memory",
    "missing_on_demand": "a region with a spot price but no on-demand price",
    "no_price": "a shape listed without any price",
    "unmapped": "an accelerator with no catalog card",
    "non_gpu": "a non-GPU accelerator",
}


@dataclass(frozen=True)
class Source:
    name: str
    repository: str
    commit: str
    date: str
    license: str
    files: tuple[dict[str, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "repository": self.repository, "commit": self.commit, "date": self.date,
                "license": self.license, "files": [dict(f) for f in self.files]}


@dataclass(frozen=True)
class PriceSnapshot:
    """Dated, sourced rental offers. Iterating it (or `len`) goes over its offers."""

    source: Source
    offers: tuple[Offer, ...]
    unmapped: tuple[Unmapped, ...] = ()
    currency: str = "USD"
    built_by: str = "tools/build_prices.py"
    reduction: str = ""
    rates: dict[str, dict[str, Any]] = field(default_factory=dict, hash=False)
    path: str = ""
    anomalies: tuple[Anomaly, ...] = ()
    coverage: dict[str, dict[str, Any]] = field(default_factory=dict, hash=False)

    def __iter__(self) -> Iterator[Offer]:
        return iter(self.offers)

    def __len__(self) -> int:
        return len(self.offers)

    def describe(self) -> str:
        s = self.source
        if _is_sha(s.commit):
            where = f"@{s.commit[:7]}"
        elif s.files:
            where = f" ({len(s.files)} files, each at its own commit)"
        else:
            where = f" ({s.commit})" if s.commit else ""
        return f"{s.name} {s.repository}{where}, {s.date}"

    def versions_line(self) -> str:
        """One line for the TUI and the report: date, offers, and each file's version.
        'rental prices 2026-11-24: 1,234 offers, 12 providers (aws v8@00148f2, gcp v8@006059e, ...)'."""
        parts = []
        for f in self.source.files:
            path, commit = str(f.get("path", "")), str(f.get("commit", ""))
            ver = next((seg for seg in path.split("/") if seg[:1] == "v" and seg[1:].isdigit()), "")
            parts.append(f"{f.get('provider', '?')} {ver}@{commit[:7]}" if commit else str(f.get("provider", "?")))
        files = f" ({', '.join(parts)})" if parts else ""
        return (f"rental prices {self.source.date}: {len(self.offers):,} offers, {len(self.providers())} providers, "
                f"{self.source.name}{files}")

    def file_dates(self, providers: Iterable[str] | None = None) -> dict[str, str]:
        """provider -> the date its file was committed in the source repository: 'YYYY-MM-DD',
        'after YYYY-MM-DD' where only a lower bound is on record, or 'unknown', for these providers
        (all by default)."""
        wanted = set(providers) if providers is not None else None
        return {str(f.get("provider")): str(f.get("committed") or "unknown") for f in self.source.files
                if wanted is None or f.get("provider") in wanted}

    def freshness(self, today: str | None = None, providers: Iterable[str] | None = None) -> Freshness:
        """How old these prices are, from each file's commit date. The oldest file decides: its
        commit falls between the earliest date any file can have been committed (an exact date or a
        recorded lower bound) and the earliest date it must have been committed by (an exact date,
        else the day the files were read). The age is given as that range; past STALE_DAYS the
        warning says the prices are, or may be, that old."""
        import datetime as dt

        today = today or os.environ.get("GPUADVISOR_TODAY")  # pinned by generated docs, so they stay stable
        try:
            day = dt.date.fromisoformat(today) if today else dt.date.today()
        except ValueError:
            raise UserError(f"GPUADVISOR_TODAY must be YYYY-MM-DD, not {today!r}") from None
        dates = self.file_dates(providers)
        read = self.source.date
        latest_by = [d if _is_date(d) else read for d in dates.values()] or [read]
        earliest = [d.removeprefix("after ") for d in dates.values() if d != "unknown"]
        unknown = sorted(p for p, d in dates.items() if d == "unknown")
        bounded = sorted(p for p, d in dates.items() if d.startswith("after "))
        as_of = min(latest_by)
        exact = not unknown and not bounded
        basis = "oldest file commit" if exact else "read"
        since = min(earliest) if earliest and not exact else ""
        return Freshness(as_of, basis, _days(day, as_of), tuple(unknown), tuple(bounded), since,
                         _days(day, since) if since else None)

    @property
    def non_gpu(self) -> tuple[Unmapped, ...]:
        return tuple(u for u in self.unmapped if u.reason == NOT_GPU)

    def providers(self) -> list[str]:
        return sorted({o.provider for o in self.offers})

    def regions(self) -> list[str]:
        return sorted({r for o in self.offers for r in o.regions})

    def filter(
        self,
        providers: Sequence[str] | None = None,
        region: str | None = None,
        cards: Iterable[str] | None = None,
    ) -> PriceSnapshot:
        """The offers of these providers, offered in `region`, for these cards (exact names).

        With a region, each offer is priced there (`Offer.in_region`), so `price_usd_h()` answers
        for that region. Returns a snapshot (iterable over its offers) so the source stays
        attached. UserError on a provider or region the snapshot does not know, naming the known
        ones."""
        offers = self.offers
        if providers:
            known = self.providers()
            wanted = [p.strip().lower() for p in providers]
            for p in wanted:
                if p not in known:
                    raise UserError(f"unknown provider {p!r}; the price snapshot has: {', '.join(known)}")
            offers = tuple(o for o in offers if o.provider in wanted)
        if region:
            if region not in {r for o in self.offers for r in o.regions}:
                raise UserError(f"unknown region {region!r}; {_region_hint(self.offers, offers)}")
            offers = tuple(o.in_region(region) for o in offers if region in o.regions)
        if cards is not None:
            names = set(cards)
            offers = tuple(o for o in offers if o.card in names)
        return replace(self, offers=offers)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "source": self.source.to_dict(),
            "currency": self.currency,
            "built_by": self.built_by,
            "reduction": self.reduction,
            "rates": self.rates,
            "coverage": self.coverage,
            "offers": [o.to_dict() for o in self.offers],
            "unmapped": [u._asdict() for u in self.unmapped],
            "anomalies": [a._asdict() for a in self.anomalies],
        }


STALE_DAYS = 90  # prices older than this get a warning in `prices list` and `recommend`


class Freshness(NamedTuple):
    """How old a snapshot's prices are. `as_of` (YYYY-MM-DD) is the latest day the oldest file can
    have been committed (`basis`: its commit date where every date is known, else the day the files
    were read) and `age_days` the age from it: the prices are at least that old. `max_age_days` is
    the most they can be (from the earliest recorded commit date or lower bound `since`; None when
    a file's date is wholly unknown, or when it equals `age_days`). `undated` and `bounded` name the
    providers whose commit date is unknown or known only as a lower bound."""

    as_of: str
    basis: str
    age_days: int | None
    undated: tuple[str, ...] = ()
    bounded: tuple[str, ...] = ()
    since: str = ""
    max_age_days: int | None = None

    @property
    def stale(self) -> bool:
        return self.age_days is not None and self.age_days > STALE_DAYS

    @property
    def may_be_stale(self) -> bool:
        """Older than STALE_DAYS for all one knows: certainly, or by the files' recorded dates."""
        return self.stale or (self.max_age_days is not None and self.max_age_days > STALE_DAYS)

    def line(self) -> str:
        """'prices as of 2026-11-24 (oldest file commit), 3 days old'; where commit dates are only
        bounded: '... (read; commit dates known only as lower bounds), 3 to 141 days old (committed on
        or after 2026-07-09)'; where some are unknown: '... (read; commit date unknown for 5 files, known
        only as a lower bound for 21), at least 3 days old'."""
        days = "" if self.age_days is None else f"{self.age_days} day{'s' if self.age_days != 1 else ''} old"
        if self.undated:
            what = f"read; commit date unknown for {_files(len(self.undated))}"
            if self.bounded:
                what += f", known only as a lower bound for {len(self.bounded)}"
            return f"prices as of {self.as_of} ({what})" + (f", at least {days}" if days else "")
        if self.bounded:
            span = (days if self.max_age_days in (None, self.age_days)
                    else f"{self.age_days} to {self.max_age_days} days old")
            return (f"prices as of {self.as_of} (read; commit dates known only as lower bounds)"
                    + (f", {span} (committed on or after {self.since})" if days else ""))
        what = "oldest file commit" if self.basis != "read" else "read"
        return f"prices as of {self.as_of} ({what})" + (f", {days}" if days else "")

    def warning(self) -> str | None:
        refresh = "refresh them with `gpuadvisor prices update --from DIR`"
        if self.stale:
            return f"warning: these prices are {self.age_days} days old (over {STALE_DAYS}); {refresh}"
        if not self.may_be_stale:
            return None
        if self.undated:
            return (f"warning: these prices may be over {STALE_DAYS} days old: a file's commit date is known only "
                    f"to be on or after {self.since} ({self.max_age_days} days ago) and "
                    f"{_files(len(self.undated))} have no commit date on record; {refresh}")
        return (f"warning: these prices may be up to {self.max_age_days} days old (over {STALE_DAYS}): the oldest "
                f"file's commit date is known only to be on or after {self.since}; {refresh}")

    def to_dict(self) -> dict[str, Any]:
        return {"as_of": self.as_of, "basis": self.basis, "age_days": self.age_days, "stale": self.stale,
                "max_age_days": self.max_age_days, "may_be_stale": self.may_be_stale, "since": self.since,
                "undated": list(self.undated), "bounded": list(self.bounded), "line": self.line()}


def _files(n: int) -> str:
    return f"{n} file{'s' if n != 1 else ''}"


def _days(day: Any, iso: str) -> int | None:
    import datetime as dt

    try:
        return (day - dt.date.fromisoformat(iso)).days
    except ValueError:
        return None


def _is_date(text: str) -> bool:
    return len(text) == 10 and text[4] == "-" and text[7] == "-" and text.replace("-", "").isdigit()


def _is_sha(text: str) -> bool:
    return len(text) >= 7 and all(c in "0123456789abcdef" for c in text.lower())


def _region_hint(all_offers: Sequence[Offer], offers: Sequence[Offer]) -> str:
    pool = sorted({region_label(r) for o in (offers or all_offers) for r in o.regions} - {""})
    shown = ", ".join(pool[:12]) + (f" and {len(pool) - 12} more" if len(pool) > 12 else "")
    return f"known regions: {shown}"


def region_label(region: str | None) -> str:
    """A region as words: the catalog's text without its empty parts (SkyPilot's vast rows read ', CN, AS' where
    the city is unknown); the data keeps the text it came with."""
    return ", ".join(part.strip() for part in (region or "").split(",") if part.strip())


def median_or_none(values: Iterable[float | None]) -> float | None:
    import statistics  # only the build needs it; loading stays lean

    xs = [v for v in values if v is not None]
    return float(statistics.median(xs)) if xs else None


# ---- currencies -------------------------------------------------------------------------------

CURRENCIES: dict[str, float] = {"USD": 1.0}


def convert_usd(amount: float, currency: str, snapshot: PriceSnapshot | None = None) -> float:
    """`amount` US dollars in `currency`. USD always; another currency only with a sourced, dated
    rate in the snapshot's `rates` (units of that currency per USD). UserError otherwise."""
    code = (currency or "").strip().upper()
    if code in CURRENCIES:
        return amount * CURRENCIES[code]
    snap = snapshot if snapshot is not None else load_prices()
    rate = snap.rates.get(code)
    if rate is None:
        known = sorted({*CURRENCIES, *snap.rates})
        raise UserError(f"unknown currency {currency!r}; prices convert to: {', '.join(known)}")
    return amount * float(rate["per_usd"])


# ---- files ------------------------------------------------------------------------------------


def shipped_path() -> Path:
    from gpuadvisor.core.paths import shipped_catalog_dir

    return shipped_catalog_dir() / "prices" / SHIPPED_NAME


def user_path() -> Path:
    """Where `prices update` writes: $GPUADVISOR_PRICES, else the XDG data folder."""
    env = os.environ.get("GPUADVISOR_PRICES")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "gpuadvisor" / "prices.json"


_CACHE: dict[tuple[str, int], PriceSnapshot] = {}


def load_prices(path: str | os.PathLike[str] | None = None) -> PriceSnapshot:
    """The snapshot at `path`; else the user's updated copy if there is one; else the shipped one."""
    if path is None:
        user = user_path()
        p = user if user.is_file() else shipped_path()
    else:
        p = Path(path)
    try:
        key = (str(p.resolve()), p.stat().st_mtime_ns)
    except OSError:
        key = (str(p), -1)
    if key not in _CACHE:
        _CACHE[key] = snapshot_from_dict(_read_json(p), p)
    return _CACHE[key]


def _read_json(p: Path) -> Any:
    from gpuadvisor.core.fileio import load_json

    return load_json(p, "price snapshot")


def snapshot_from_dict(d: Any, where: str | os.PathLike[str] = "price snapshot") -> PriceSnapshot:
    """Build (and check) a snapshot from its JSON form; UserError naming the file and offer."""
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        raise UserError(f"{where}: not a gpuadvisor price snapshot (format {FORMAT!r} expected)")
    try:
        s = d["source"]
        source = Source(str(s["name"]), str(s["repository"]), str(s["commit"]), str(s["date"]),
                        str(s["license"]), tuple(dict(f) for f in s.get("files", ())))
        offers = tuple(_offer(o) for o in d["offers"])
        unmapped = tuple(Unmapped(str(u["provider"]), str(u["accelerator"]), int(u["rows"]), str(u["reason"]),
                                  int(u.get("shapes", 0))) for u in d.get("unmapped", ()))
        anomalies = tuple(Anomaly(*(str(a[k]) for k in Anomaly._fields)) for a in d.get("anomalies", ()))
        coverage = dict(d.get("coverage") or {})
        rates = dict(d.get("rates") or {})
        for code, r in rates.items():
            if not (isinstance(r, dict) and r.get("source") and r.get("date")):
                raise ValueError(f"rate {code!r} needs per_usd, source and date")
            _positive(r["per_usd"], f"rate {code}")
    except UserError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        n = len(d.get("offers", [])) if isinstance(d.get("offers"), list) else 0
        raise UserError(f"{where}: damaged price snapshot ({n} offers): {_msg(e)}") from None
    return PriceSnapshot(source, offers, unmapped, str(d.get("currency", "USD")), str(d.get("built_by", "")),
                         str(d.get("reduction", "")), rates, str(where), anomalies, coverage)


def _msg(e: Exception) -> str:
    return f"missing field {e}" if isinstance(e, KeyError) else " ".join(str(e).split())


def _offer(o: dict[str, Any]) -> Offer:
    try:
        regions = _regions(o["regions"])
        offer = Offer(
            provider=str(o["provider"]), instance_type=str(o["instance_type"]), accelerator=str(o["accelerator"]),
            card=str(o["card"]), gpu_count=int(o["gpu_count"]), vcpus=_opt(o.get("vcpus")),
            memory_gib=_opt(o.get("memory_gib")), region=str(o["region"]),
            on_demand_usd_h=_price(o.get("on_demand_usd_h")), spot_usd_h=_price(o.get("spot_usd_h")),
            median_on_demand_usd_h=_price(o.get("median_on_demand_usd_h")), regions=regions,
            note=str(o.get("note", "")), gpu_fraction=float(o.get("gpu_fraction", 1.0)),
            gpu_memory_gib=_opt(o.get("gpu_memory_gib")), flags=tuple(str(f) for f in o.get("flags", ())),
        )
    except (KeyError, TypeError, ValueError) as e:
        name = o.get("instance_type", "?") if isinstance(o, dict) else "?"
        raise ValueError(f"offer {name!r}: {_msg(e)}") from None
    if offer.gpu_count < 1 or (offer.on_demand_usd_h is None and offer.spot_usd_h is None):
        raise ValueError(f"offer {offer.instance_type!r}: needs a GPU count >= 1 and a price")
    if not 0 < offer.gpu_fraction <= 1 or (offer.fractional and offer.gpu_count != 1):
        raise ValueError(f"offer {offer.instance_type!r}: gpu_fraction must be in (0, 1], with one GPU when below 1")
    return offer


def _regions(raw: dict[str, Any]) -> dict[str, tuple[float | None, float | None]]:
    """Every region's (on-demand, spot) pair, checked in one pass: the bulk of a snapshot, so kept
    lean (a cold `recommend` loads it)."""
    out: dict[str, tuple[float | None, float | None]] = {}
    for r, (od, spot) in raw.items():
        if od is not None:
            od = float(od)
            if not 0 < od < math.inf:
                raise ValueError(f"price must be a positive number, not {od!r}")
        if spot is not None:
            spot = float(spot)
            if not 0 < spot < math.inf:
                raise ValueError(f"price must be a positive number, not {spot!r}")
        out[r] = (od, spot)
    return out


def _opt(v: Any) -> float | None:
    return None if v is None else float(v)


def _price(v: Any) -> float | None:
    return None if v is None else _positive(v, "price")


def _positive(v: Any, what: str) -> float:
    x = float(v)
    if not math.isfinite(x) or x <= 0:
        raise ValueError(f"{what} must be a positive number, not {v!r}")
    return x


def dump_snapshot(snapshot: PriceSnapshot) -> str:
    """The JSON text of a snapshot: one offer per line keeps diffs of refreshes readable."""
    d = snapshot.to_dict()
    tail = {k: d.pop(k) for k in ("coverage", "offers", "unmapped", "anomalies")}
    head = json.dumps(d, indent=1)[:-2]
    parts = []
    for key, items in tail.items():
        if isinstance(items, dict):
            lines = [f"{json.dumps(k)}:{json.dumps(v, separators=(',', ':'), sort_keys=True)}"
                     for k, v in items.items()]
            parts.append(f' "{key}": {{\n  ' + ",\n  ".join(lines) + "\n }")
        else:
            lines = [json.dumps(x, separators=(",", ":")) for x in items]
            parts.append(f' "{key}": [\n  ' + ",\n  ".join(lines) + "\n ]")
    return head + ",\n" + ",\n".join(parts) + "\n}\n"
