"""`gpuadvisor prices list|show|update|reset`: browse the rental price snapshot, refresh it offline."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from gpuadvisor.cli.common import console, fmt, positive_int, print_json
from gpuadvisor.core.errors import UserError
from gpuadvisor.prices.model import region_label


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("prices", help="GPU rental prices: a dated SkyPilot snapshot, refreshable offline")
    psub = p.add_subparsers(dest="prices_command", metavar="ACTION", required=True, parser_class=type(p))

    ls = psub.add_parser("list", help="offers, cheapest first (first line: the snapshot's source and date)")
    ls.add_argument("--provider", action="append", default=[], metavar="P", help="only this provider (repeatable)")
    ls.add_argument("--card", metavar="C", help="only this card ('h100' matches every H100 card)")
    ls.add_argument("--region", metavar="R", help="only offers available in this region, priced there")
    ls.add_argument("--gpus", type=positive_int, metavar="N", help="only shapes with N GPUs")
    ls.add_argument("--spot", action="store_true", help="sort by spot price; only shapes with a spot price")
    ls.add_argument("--currency", default="USD", metavar="CUR", help="show prices in CUR (default USD)")
    ls.add_argument("--json", action="store_true", help="{source, currency, offers, unmapped} as JSON")
    ls.set_defaults(func=run_list)

    show = psub.add_parser("show", help="an instance type or a card: its offers and every region's prices")
    show.add_argument("name", help="instance type (g5.xlarge) or card (L40S)")
    show.add_argument("--json", action="store_true")
    show.set_defaults(func=run_show)

    up = psub.add_parser("update", help="refresh from SkyPilot-format CSVs you downloaded (no network)")
    up.add_argument("--from", dest="source", required=True, metavar="FILE_OR_DIR",
                    help="a folder of <cloud>/vms.csv files, or one vms.csv (with --provider)")
    up.add_argument("--provider", metavar="NAME", help="the cloud of a single file, or the one folder to read")
    up.add_argument("--commit", default="unknown", help="skypilot-catalog commit the files came from")
    up.add_argument("--date", help="date the files were downloaded, YYYY-MM-DD (default today)")
    up.add_argument("--committed", default="unknown", metavar="YYYY-MM-DD",
                    help="date of that commit (how old the prices are); default unknown")
    up.add_argument("--map", dest="map_file", metavar="FILE",
                    help="your accelerator map (the tables of catalog/prices/accelerators.yaml) over the shipped "
                         "one: names it maps win; names nobody maps are looked up in the catalog's aliases")
    up.set_defaults(func=run_update)

    rs = psub.add_parser("reset", help="delete your updated copy; the shipped snapshot applies again")
    rs.set_defaults(func=run_reset)


def _snapshot() -> Any:
    from gpuadvisor.prices import load_prices

    return load_prices()


def _matching_cards(offers: Any, query: str) -> set[str]:
    q = query.strip().lower()
    cards = {o.card for o in offers}
    exact = {c for c in cards if c.lower() == q}
    return exact or {c for c in cards if q in c.lower()}


def selected(args: argparse.Namespace) -> tuple[Any, list[Any]]:
    """The snapshot and its offers after the flags, cheapest first."""
    snap = _snapshot()
    sub = snap.filter(providers=args.provider or None, region=args.region)
    offers = list(sub)
    if args.card:
        wanted = _matching_cards(snap.offers, args.card)
        offers = [o for o in offers if o.card in wanted]
    if args.gpus:
        offers = [o for o in offers if o.gpu_count == args.gpus]
    if args.spot:
        offers = [o for o in offers if o.price_usd_h(True, args.region) is not None]
    big = float("inf")
    offers.sort(key=lambda o: (o.price_usd_h(args.spot, args.region) or big, o.provider, o.instance_type))
    return snap, offers


def run_list(args: argparse.Namespace) -> int:
    from gpuadvisor.prices import convert_usd
    from gpuadvisor.prices.model import NOT_GPU

    snap, offers = selected(args)
    cur = args.currency.strip().upper()
    rate = convert_usd(1.0, cur, snap)
    if args.json:
        print_json({"source": {**snap.source.to_dict(), "describe": snap.describe(), "versions": snap.versions_line()},
                    "freshness": snap.freshness().to_dict(), "file_dates": snap.file_dates(),
                    "currency": cur, "rate_per_usd": rate, "count": len(offers),
                    "flagged": sum(bool(o.flags) for o in offers),
                    "offers": [_converted(o.to_dict(), rate) for o in offers],
                    "unmapped": [u._asdict() for u in snap.unmapped if u.reason != NOT_GPU],
                    "non_gpu": [u._asdict() for u in snap.non_gpu],
                    "coverage": snap.coverage, "anomalies": [a._asdict() for a in snap.anomalies]})
        return 0
    print(f"prices: {snap.describe()}; {len(snap)} offers from {len(snap.providers())} providers")
    import textwrap

    print(textwrap.fill(f"files: {_files_line(snap)}", width=100, subsequent_indent="  "))
    fresh = snap.freshness(providers=sorted({o.provider for o in offers}) or None)
    print(textwrap.fill(fresh.line(), width=100, subsequent_indent="  "))
    if fresh.warning():
        print(textwrap.fill(fresh.warning() or "", width=100, subsequent_indent="  "), file=sys.stderr)
    flagged = [o for o in offers if o.flags]
    if flagged:
        print(textwrap.fill(f"flagged: {len(flagged)} offers with suspect prices (column 'suspect': uniform-low = "
                            "a price identical across regions and far below the others, spot>od = spot above "
                            "on-demand, below-mkt = far below every other provider; the advisor sets them aside; "
                            "`prices show NAME` says why)", width=100, subsequent_indent="  "))
    if snap.anomalies:
        from collections import Counter

        kinds = Counter(a.kind for a in snap.anomalies)
        print(textwrap.fill(f"checks: {', '.join(f'{k} {n}' for k, n in kinds.items())} (see --json 'anomalies')",
                            width=100, subsequent_indent="  "))
    _warn_unmapped(snap)
    if not offers:
        print("no offers match")
        return 0
    from rich import box
    from rich.table import Table

    where = f" in {args.region}" if args.region else ""
    plural = "" if len(offers) == 1 else "s"
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, title=f"{len(offers)} offer{plural}{where}, {cur}/hour")
    table.add_column("provider", no_wrap=True, max_width=10, overflow="ellipsis")
    narrow = 6 if flagged else 0  # room for the suspect column within 100 characters
    table.add_column("instance", no_wrap=True, max_width=22 - narrow, overflow="ellipsis")
    table.add_column("card", no_wrap=True, max_width=22 - narrow, overflow="ellipsis")
    table.add_column("GPUs", justify="right", no_wrap=True)
    table.add_column("on-dem.", justify="right", no_wrap=True)
    table.add_column("spot", justify="right", no_wrap=True)
    table.add_column("spot region" if args.spot and not args.region else "region", no_wrap=True,
                     max_width=12 - narrow // 2, overflow="ellipsis")
    if flagged:
        table.add_column("suspect", no_wrap=True, max_width=12, overflow="ellipsis")
    for o in offers:
        od, spot = o.price_usd_h(False, args.region), o.price_usd_h(True, args.region)
        row = [o.provider, o.instance_type, _card_label(o), str(o.gpu_count), fmt(_mul(od, rate), 2),
               fmt(_mul(spot, rate), 2), args.region or region_label(_spot_region(o) if args.spot else o.region)]
        if flagged:
            row.append(flag_kinds(o))
        table.add_row(*row)
    console().print(table)
    return 0


FLAG_CODES = {"uniform low price": "uniform-low", "spot above on-demand": "spot>od", "below market": "below-mkt"}


def flag_kinds(o: Any) -> str:
    """'uniform-low,spot>od': short codes of an offer's suspect-price flags (FLAG_CODES), or ''."""
    kinds = [str(f).split(":", 1)[0] for f in getattr(o, "flags", ())]
    return ",".join(FLAG_CODES.get(k, k) for k in kinds)


def _files_line(snap: Any) -> str:
    """Each provider's file and version: 'aws catalogs/v8/aws/vms.csv@00148f2, ...'."""
    return ", ".join(f"{f.get('provider')} {f.get('path')}@{str(f.get('commit', ''))[:7]}" for f in snap.source.files)


def _card_label(o: Any) -> str:
    """'1/8 Radeon Instinct MI25' for a share of one GPU, else the card."""
    if not getattr(o, "fractional", False):
        return str(o.card)
    from fractions import Fraction

    return f"{Fraction(o.gpu_fraction).limit_denominator(64)} {o.card}"


def _spot_region(o: Any) -> str:
    """Where the cheapest spot price is (the offer's `region` is the cheapest on-demand one)."""
    spots = {r: p[1] for r, p in o.regions.items() if p[1] is not None}
    return min(sorted(spots), key=lambda r: spots[r]) if spots else o.region


def _mul(x: float | None, rate: float) -> float | None:
    return None if x is None else x * rate


def _converted(d: dict[str, Any], rate: float) -> dict[str, Any]:
    if rate == 1.0:
        return d
    for k in ("on_demand_usd_h", "spot_usd_h", "median_on_demand_usd_h"):
        d[k.replace("usd", "cur")] = _mul(d[k], rate)
    return d


def _warn_unmapped(snap: Any) -> None:
    if snap.unmapped:
        from gpuadvisor.prices.refresh import unmapped_lines

        print(f"note: {len(snap.unmapped)} accelerators left out (not GPUs, or no catalog card): "
              f"{'; '.join(unmapped_lines(snap.unmapped, 4))}", file=sys.stderr)


def run_show(args: argparse.Namespace) -> int:
    snap = _snapshot()
    q = args.name.strip().lower()
    offers = [o for o in snap.offers if o.instance_type.lower() == q]
    if not offers:
        cards = _matching_cards(snap.offers, args.name)
        offers = [o for o in snap.offers if o.card in cards]
    if not offers:
        raise UserError(f"no instance type or card named {args.name!r} in the price snapshot "
                        f"(try 'gpuadvisor prices list --card {args.name}')")
    offers.sort(key=lambda o: (o.on_demand_usd_h or o.spot_usd_h or 0.0, o.provider))
    if args.json:
        print_json({"source": snap.describe(), "offers": [o.to_dict() for o in offers]})
        return 0
    print(f"prices: {snap.describe()}; {snap.freshness(providers=sorted({o.provider for o in offers})).line()}")
    for o in offers:
        cpu = f"{fmt(o.vcpus, 0)} vCPU, {fmt(o.memory_gib, 0)} GiB" if o.vcpus else "host VM not included"
        share = f" ({o.gpu_memory_gib:g} GiB of GPU memory)" if o.fractional and o.gpu_memory_gib else ""
        count = "" if o.fractional else f"{o.gpu_count}x "
        print(f"\n{o.provider} {o.instance_type}: {count}{_card_label(o)}{share} ({o.accelerator}), {cpu}")
        print(f"  cheapest {fmt(o.on_demand_usd_h, 3)} USD/h in {region_label(o.region)}; median region "
              f"{fmt(o.median_on_demand_usd_h, 3)}; cheapest spot {fmt(o.spot_usd_h, 3)}")
        if o.note:
            print(f"  note: {o.note}")
        for flag in o.flags:
            print(f"  SUSPECT PRICE: {flag} (set aside by the advisor)")
        for region, (od, spot) in sorted(o.regions.items(), key=lambda kv: (kv[1][0] or 1e9, kv[0])):
            print(f"    {region_label(region):<28} on-demand {fmt(od, 3):>8}   spot {fmt(spot, 3):>8}")
    return 0


def run_update(args: argparse.Namespace) -> int:
    from gpuadvisor.prices.reduce import catalog_facts
    from gpuadvisor.prices.refresh import unmapped_lines, update_user_copy
    from gpuadvisor.prices.skypilot import find_sources

    sources = find_sources(args.source, args.provider)
    facts = catalog_facts(args.catalog or [])
    snap, path = update_user_copy(sources, commit=args.commit, date=args.date, card_names=facts.names,
                                  card_memory=facts.memory, card_forms=facts.forms, map_file=args.map_file,
                                  committed=args.committed)
    counts = ", ".join(f"{p} {sum(o.provider == p for o in snap.offers)}" for p in sources)
    print(f"wrote {path}: {len(snap)} offers from {len(snap.providers())} providers (updated: {counts})")
    fresh = [u for u in snap.unmapped if u.provider in sources]
    for line in unmapped_lines(fresh, limit=50):
        print(f"warning: left out: {line}", file=sys.stderr)
    return 0


def run_reset(args: argparse.Namespace) -> int:
    from gpuadvisor.prices import shipped_path, user_path

    path = user_path()
    if path.is_file():
        path.unlink()
        print(f"removed {path}; using the shipped snapshot {shipped_path()}")
    else:
        print(f"no updated copy at {path}; using the shipped snapshot")
    return 0
