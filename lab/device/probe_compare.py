"""Compare the figures of two probe results (before and after a change, or two runs of one tree):
one line per measurement key with both values and their ratio, '!' where they differ by more than
--tol (default 2 %). Host and crossover figures are marked '~': they time the CPU, whose run-to-run
spread on a shared host is larger than that.

    python3 lab/device/probe_compare.py before.json after.json [--tol 0.02]
"""

from __future__ import annotations

import argparse
import json
from typing import Any

NOISY = ("host.", "crossover.", "dispatch.", "transfer.h2d_pageable", "transfer.d2h_pageable")


def figures(path: str) -> dict[str, float | None]:
    with open(path, encoding="utf-8") as f:
        doc: dict[str, Any] = json.load(f)
    out: dict[str, float | None] = {}
    probes = list(doc.get("host_probes", []))
    for dev in doc.get("devices", []):
        probes += dev.get("probes", [])
    for p in probes:
        for m in p.get("measurements", []):
            out[m["key"]] = m.get("value")
            if m.get("reference"):
                out[m["key"] + " (reference)"] = m["reference"]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--tol", type=float, default=0.02)
    a = ap.parse_args()
    b, c = figures(a.before), figures(a.after)
    worst = 0.0
    for key in sorted(set(b) | set(c)):
        x, y = b.get(key), c.get(key)
        if x and y:
            r = y / x
            noisy = key.startswith(NOISY)
            mark = "~" if noisy and abs(r - 1) > a.tol else "!" if abs(r - 1) > a.tol else " "
            if not noisy and "(reference)" not in key:
                worst = max(worst, abs(r - 1))
            print(f"{mark} {key:45s} {x:12.4g} {y:12.4g} {r:7.3f}")
        else:
            print(f"  {key:45s} {x!s:>12} {y!s:>12}       -")
    print(f"largest GPU-figure difference (not host/crossover/dispatch/pageable, not references): {100 * worst:.1f} %")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
