"""Spread of each figure over several probe runs, next to the spread each run recorded itself.

Usage: python3 -m tools.repeatability run1.json run2.json ... [--limit-pct 3] [--json OUT]
Per GPU figure and per node figure (interconnect): runs, median, min, max, the largest
|run - median| / median over the runs, and the median of the in-run spreads (each figure's
`spread`: (max - min) / median over its bursts, repeats or rounds). Host-bound figures
(pageable copies, which the driver stages through a CPU memcpy) are listed but kept out of the
verdict. Prints a markdown table; exit 1 if a GPU or node figure strays more than the limit.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from gpuadvisor.core.results import Measurement, load

# Sweep points and crossover sizes are not figures of merit.
SKIP_PREFIXES = ("crossover.",)


def collect(files: list[str]) -> dict[str, dict]:
    rows: dict[str, dict] = {}

    def add(where: str, m: Measurement) -> None:
        if m.value is None or m.key.startswith(SKIP_PREFIXES):
            return
        r = rows.setdefault(f"{where} {m.key}", {"unit": m.unit, "values": [], "spreads": [], "host_bound": False})
        r["values"].append(m.value)
        if m.spread is not None:
            r["spreads"].append(m.spread)
        r["host_bound"] = r["host_bound"] or m.host_bound or m.key.endswith("_pageable")

    for f in files:
        run = load(f)
        for dev in run.devices:
            for probe in dev.probes:
                for m in probe.measurements:
                    add(f"GPU{dev.index}", m)
        for probe in run.node_probes:
            for m in probe.measurements:
                add("node", m)
    for r in rows.values():
        vals = r["values"]
        med = statistics.median(vals)
        r.update(median=med, min=min(vals), max=max(vals),
                 max_dev_pct=max(abs(v - med) for v in vals) / med * 100 if med else 0.0,
                 in_run_spread_pct=100 * statistics.median(r["spreads"]) if r["spreads"] else None)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--limit-pct", type=float, default=3.0)
    ap.add_argument("--json", metavar="OUT", help="also write the table as JSON")
    args = ap.parse_args()
    rows = collect(args.files)
    print("| figure | runs | median | min | max | max dev from median | in-run spread (median) |\n"
          "| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    worst, worst_key = 0.0, None
    for key, r in rows.items():
        spread = "-" if r["in_run_spread_pct"] is None else f"{r['in_run_spread_pct']:.2f}%"
        tag = " (host-bound)" if r["host_bound"] else ""
        print(f"| {key}{tag} | {len(r['values'])} | {r['median']:,.1f} {r['unit']} | {r['min']:,.1f} | "
              f"{r['max']:,.1f} | {r['max_dev_pct']:.2f}% | {spread} |")
        if not r["host_bound"] and r["max_dev_pct"] > worst:
            worst, worst_key = r["max_dev_pct"], key
    print(f"\nworst deviation from the median, host-bound figures aside: {worst:.2f}% ({worst_key}; "
          f"limit {args.limit_pct}%)")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0 if worst <= args.limit_pct else 1


if __name__ == "__main__":
    raise SystemExit(main())
