"""Spread of each figure over several probe runs: max |x - median| / median, per device figure.

Usage: python3 tools/repeatability.py run1.json run2.json ... [--limit-pct 3]
Prints a markdown table; exit 1 if any figure strays more than the limit from its median.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpuadvisor.results import load

# Sweep points and crossover sizes are not figures of merit; host figures depend on the host load.
SKIP_PREFIXES = ("crossover.",)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--limit-pct", type=float, default=3.0)
    args = ap.parse_args()
    runs = [load(f) for f in args.files]
    values: dict[str, list[float]] = {}
    units: dict[str, str] = {}
    for run in runs:
        for dev in run.devices:
            for probe in dev.probes:
                for m in probe.measurements:
                    if m.value is not None and not m.key.startswith(SKIP_PREFIXES):
                        values.setdefault(f"GPU{dev.index} {m.key}", []).append(m.value)
                        units[f"GPU{dev.index} {m.key}"] = m.unit
    worst = 0.0
    print("| figure | runs | median | min | max | max dev from median |\n| --- | ---: | ---: | ---: | ---: | ---: |")
    for key, vals in values.items():
        med = statistics.median(vals)
        dev = max(abs(v - med) for v in vals) / med * 100 if med else 0.0
        worst = max(worst, dev)
        print(f"| {key} | {len(vals)} | {med:,.1f} {units[key]} | {min(vals):,.1f} | {max(vals):,.1f} | {dev:.2f}% |")
    print(f"\nworst deviation from the median: {worst:.2f}% (limit {args.limit_pct}%)")
    return 0 if worst <= args.limit_pct else 1


if __name__ == "__main__":
    raise SystemExit(main())
