#!/usr/bin/env python3
"""Build catalog/prices/rental.json from the raw SkyPilot rows committed in catalog/prices/raw/.

    python3 -m tools.build_prices                       # rebuild rental.json offline from the raw rows
    python3 -m tools.build_prices --import DIR [--date YYYY-MM-DD] [--only P,P]
        # first copy DIR/<provider>/vms.csv (+ SOURCE.tsv, where DIR/<provider>/DONE exists) into
        # catalog/prices/raw/ (compressed, with SOURCES.tsv), then rebuild
    python3 -m tools.build_prices --doc                 # ... and write docs/prices.md (coverage per provider)
    python3 -m tools.build_prices DIR --commit SHA --date YYYY-MM-DD [-o FILE]
        # a snapshot straight from DIR/<cloud>/vms.csv files (no raw copy), as `prices update` does

The raw rows are what was read from github.com/skypilot-org/skypilot-catalog
(catalogs/vN/<cloud>/vms.csv at the commit in SOURCES.tsv). The same parser, reduction and checks
serve `gpuadvisor prices update` (gpuadvisor.prices.refresh). Printed: offers and coverage per
provider, every anomaly the checks found (also kept in the snapshot's `anomalies`), and every
accelerator left out (`unmapped`). Bad input is one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from collections import Counter
from pathlib import Path

from gpuadvisor.core.errors import UserError
from gpuadvisor.core.fileio import atomic_write_text, read_text
from gpuadvisor.prices.model import PriceSnapshot, dump_snapshot
from gpuadvisor.prices.reduce import catalog_facts
from gpuadvisor.prices.refresh import build_from_raw, build_snapshot, unmapped_lines
from gpuadvisor.prices.skypilot import find_sources

ROOT = Path(__file__).resolve().parent.parent

RAW = ROOT / "catalog" / "prices" / "raw"


def read_files_tsv(path: str, date: str) -> list[dict[str, str]]:
    files = []
    for n, line in enumerate(read_text(path, "files TSV").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) < 3:
            raise UserError(f"{path}:{n}: expected provider, path, commit[, what was read] separated by tabs")
        entry = {"provider": parts[0].strip(), "path": parts[1].strip(), "commit": parts[2].strip(), "read": date}
        if len(parts) > 3:
            entry["coverage"] = parts[3].strip()
        files.append(entry)
    return files


def report(snap: PriceSnapshot, output: str) -> None:
    per = {p: sum(o.provider == p for o in snap.offers) for p in snap.providers()}
    print(f"wrote {output}: {len(snap.offers)} offers from {len(per)} providers "
          f"({', '.join(f'{p} {n}' for p, n in per.items())})")
    for p, c in snap.coverage.items():
        print(f"coverage: {p}: {c['rows']} rows, {c['gpu_shapes']} GPU shapes -> {c['offers']} offers, "
              f"{len(c['excluded'])} excluded, {len(c['joined'])} GPU-only shapes joined to host VMs, "
              f"{c['non_gpu_shapes']} non-GPU shapes")
    kinds = Counter(a.kind for a in snap.anomalies)
    print(f"anomalies: {sum(kinds.values())} ({', '.join(f'{k} {n}' for k, n in kinds.items()) or 'none'})")
    for a in snap.anomalies:
        print(f"anomaly: {a.kind}: {a.provider} {a.shape}{' ' + a.region if a.region else ''}: {a.figures}; {a.action}")
    for line in unmapped_lines(snap.unmapped, limit=1000):
        print(f"unmapped: {line}")


def coverage_table(snap: PriceSnapshot) -> str:
    """The coverage table of catalog/prices/README.md (tests/test_price_coverage.py checks it)."""
    rows = ["| provider | file | commit | raw rows | GPU shapes | offers | excluded | joined to host |",
            "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    files = {f["provider"]: f for f in snap.source.files}
    for p, c in snap.coverage.items():
        f = files.get(p, {})
        rows.append(f"| {p} | {f.get('path', '')} | {str(f.get('commit', ''))[:7]} | {c['rows']} | {c['gpu_shapes']} "
                    f"| {c['offers']} | {len(c['excluded'])} | {len(c['joined'])} |")
    total = sum(c["offers"] for c in snap.coverage.values())
    rows.append(f"| **all** | | | {sum(c['rows'] for c in snap.coverage.values())} "
                f"| {sum(c['gpu_shapes'] for c in snap.coverage.values())} | {total} "
                f"| {sum(len(c['excluded']) for c in snap.coverage.values())} "
                f"| {sum(len(c['joined']) for c in snap.coverage.values())} |")
    return "\n".join(rows)


# Card families a 2026 buyer looks for: the coverage page says which each provider lacks.
NOTABLE_FAMILIES = ("B300", "B200", "GB200", "H200", "H100", "MI355X", "MI300X", "A100", "L40S", "L4",
                    "RTX PRO 6000", "RTX 5090", "RTX 4090")
DOC = ROOT / "docs" / "prices.md"


def card_family(card: str) -> str:
    """'H100 SXM5 80GB' -> 'H100', 'GeForce RTX 4090' -> 'RTX 4090', 'Instinct MI300X' -> 'MI300X',
    'RTX PRO 6000 Blackwell' -> 'RTX PRO 6000': the card without maker line, form factor or memory."""
    import re

    name = re.sub(r"^(GeForce|Tesla|Quadro|Radeon Instinct|Instinct|Radeon PRO|Radeon)\s+", "", card)
    name = re.sub(r"\s*\(per GPU\)$", "", name)
    name = re.sub(r"\s+(SXM\d?|PCIe|NVL|\d+GB|Blackwell|Generation|Server Edition|Max-Q.*|Workstation.*)\b", "", name)
    return name.strip()


def coverage_page(snap: PriceSnapshot) -> str:
    """docs/prices.md: per provider the offers, flagged offers, card families present and notable
    ones missing, the file and its dates (tests/test_price_mapping.py keeps it in sync)."""
    files = {f["provider"]: f for f in snap.source.files}
    fresh = snap.freshness(today=snap.source.date)
    lines = [
        "# Rental price coverage per provider",
        "",
        "Generated by `python3 -m tools.build_prices --doc` from `catalog/prices/rental.json` "
        f"(SkyPilot catalog files read {snap.source.date}); `tests/test_price_mapping.py` keeps it in sync.",
        "How the offers are built and checked: [catalog/prices/README.md](../catalog/prices/README.md).",
        "",
        f"Dates: every file was read on {snap.source.date}. The exact date of each file's commit in "
        "skypilot-org/skypilot-catalog is not on record (the file index gives commits without dates and the "
        "repository is too large to fetch), so each file carries the earliest day a public record allows "
        "(`after YYYY-MM-DD`: a pull request that created its catalog folder or provider; the records are "
        f"listed below the table) or `unknown` ({len(fresh.undated)} of {len(files)} files). "
        "`gpuadvisor prices list` and `recommend` give the age as that range and warn where it can pass "
        "90 days. Azure's file is catalog v6 (no newer version exists, and Azure has no update workflow), US "
        "regions only, without the ND H200 v5, ND MI300X v5 or GB200/GB300 families.",
        "",
        f"Notable families checked: {', '.join(NOTABLE_FAMILIES)}. Flagged offers carry a suspect price "
        "(set aside by the advisor); excluded shapes are listed with their reason in `prices list --json` "
        "(`coverage.<provider>.excluded`).",
        "",
        "| provider | file | read | committed | offers | flagged | excluded | card families present "
        "| notable families missing |",
        "| --- | --- | --- | --- | ---: | ---: | ---: | --- | --- |",
    ]
    for p, c in snap.coverage.items():
        f = files.get(p, {})
        fams = sorted({card_family(o.card) for o in snap.offers if o.provider == p})
        missing = [n for n in NOTABLE_FAMILIES if n not in fams]
        flagged = sum(o.provider == p and bool(o.flags) for o in snap.offers)
        lines.append(f"| {p} | {f.get('path', '')}@{str(f.get('commit', ''))[:7]} | {f.get('read', '')} "
                     f"| {f.get('committed', 'unknown')} | {c['offers']} | {flagged} | {len(c['excluded'])} "
                     f"| {', '.join(fams)} | {', '.join(missing) or 'none'} |")
    lines += ["", "Where each commit date comes from:", ""]
    lines += [f"- {p}: {files[p].get('committed', 'unknown')}: {files[p].get('committed_source') or 'no record'}"
              for p in snap.coverage if p in files]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("dir", nargs="?", help="a folder of <cloud>/vms.csv files (without it: the raw rows)")
    ap.add_argument("--raw", default=str(RAW), help="the raw-rows folder (default catalog/prices/raw)")
    ap.add_argument("--import", dest="import_dir", metavar="DIR",
                    help="copy DIR/<provider>/vms.csv of finished providers into the raw folder first")
    ap.add_argument("--only", default="", metavar="P,P", help="with --import: only these providers")
    ap.add_argument("--commit", help="DIR mode: skypilot-catalog commit read, or 'per-file' with --files")
    ap.add_argument("--date", help="date the files were read, YYYY-MM-DD (--import: default today)")
    ap.add_argument("--files", help="DIR mode: TSV of provider, repository path, commit, coverage per file")
    ap.add_argument("--catalog", action="append", default=[], help="extra card folder to check names against")
    ap.add_argument("-o", "--output", default=str(ROOT / "catalog" / "prices" / "rental.json"))
    ap.add_argument("--table", action="store_true", help="also print the README's coverage table (markdown)")
    ap.add_argument("--doc", action="store_true", help="also write docs/prices.md (coverage per provider)")
    args = ap.parse_args(argv)
    try:
        names, memory, forms = catalog_facts(args.catalog)
        if args.dir:
            if not (args.commit and args.date):
                raise UserError("a DIR of vms.csv files needs --commit and --date")
            sources = find_sources(args.dir)
            files = read_files_tsv(args.files, args.date) if args.files else None
            if files is not None:
                missing = sorted(set(sources) - {f["provider"] for f in files})
                if missing:
                    raise UserError(f"{args.files}: no line for {', '.join(missing)}")
                files = [f for f in files if f["provider"] in sources]
            snap = build_snapshot(sources, commit=args.commit, date=args.date, files=files, card_names=names,
                                  card_memory=memory, card_forms=forms)
        else:
            if args.import_dir:
                from gpuadvisor.prices.raw import import_folder

                date = args.date or dt.date.today().isoformat()
                only = [p.strip() for p in args.only.split(",") if p.strip()] or None
                done = import_folder(args.import_dir, args.raw, date, only)
                print(f"raw rows: {', '.join(f'{e.provider} {e.rows}' for e in done)}")
            snap = build_from_raw(args.raw, card_names=names, card_memory=memory, card_forms=forms)
        atomic_write_text(args.output, dump_snapshot(snap), force=True)
    except UserError as e:
        print(f"build_prices: error: {e}", file=sys.stderr)
        return 2
    report(snap, args.output)
    if args.table:
        print(coverage_table(snap))
    if args.doc:
        atomic_write_text(DOC, coverage_page(snap), force=True)
        print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
