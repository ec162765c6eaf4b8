#!/usr/bin/env python3
"""Build catalog/prices/rental.json from SkyPilot catalog CSVs (DIR/<cloud>/vms.csv).

    python tools/build_prices.py DIR --commit SHA --date YYYY-MM-DD [-o catalog/prices/rental.json]
        [--files COMMITS.tsv] [--catalog EXTRA_CARD_DIR ...]

DIR holds one folder per cloud with the vms.csv read from github.com/skypilot-org/skypilot-catalog
(catalogs/v8/<cloud>/vms.csv). --commit is the catalog commit the files were read at; where they
come from several commits, pass --commit per-file and --files, a TSV of
`provider<TAB>path in the repository<TAB>commit<TAB>what was read`, which the snapshot records.
Uses the same parser and reduction as `gpuadvisor prices update` (gpuadvisor.prices.refresh).
Accelerators that map to no catalog card are printed and kept in the snapshot's `unmapped` list.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gpuadvisor.errors import UserError
from gpuadvisor.fileio import atomic_write_text, read_text
from gpuadvisor.prices.model import dump_snapshot
from gpuadvisor.prices.reduce import catalog_card_names
from gpuadvisor.prices.refresh import build_snapshot, unmapped_lines
from gpuadvisor.prices.skypilot import find_sources

ROOT = Path(__file__).resolve().parent.parent


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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("dir", help="folder of <cloud>/vms.csv files")
    ap.add_argument("--commit", required=True, help="skypilot-catalog commit read, or 'per-file' with --files")
    ap.add_argument("--date", required=True, help="date the files were read, YYYY-MM-DD")
    ap.add_argument("--files", help="TSV of provider, repository path, commit, coverage per file")
    ap.add_argument("--catalog", action="append", default=[], help="extra card folder to check names against")
    ap.add_argument("-o", "--output", default=str(ROOT / "catalog" / "prices" / "rental.json"))
    args = ap.parse_args(argv)
    try:
        sources = find_sources(args.dir)
        files = read_files_tsv(args.files, args.date) if args.files else None
        if files is not None:
            missing = sorted(set(sources) - {f["provider"] for f in files})
            if missing:
                raise UserError(f"{args.files}: no line for {', '.join(missing)}")
            files = [f for f in files if f["provider"] in sources]
        snap = build_snapshot(sources, commit=args.commit, date=args.date, files=files,
                              card_names=catalog_card_names(args.catalog))
        atomic_write_text(args.output, dump_snapshot(snap), force=True)
    except UserError as e:
        print(f"build_prices: error: {e}", file=sys.stderr)
        return 2
    per = {p: sum(o.provider == p for o in snap.offers) for p in snap.providers()}
    print(f"wrote {args.output}: {len(snap.offers)} offers from {len(per)} providers "
          f"({', '.join(f'{p} {n}' for p, n in per.items())})")
    for line in unmapped_lines(snap.unmapped, limit=100):
        print(f"unmapped: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
