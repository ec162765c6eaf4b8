"""Print a compact table of one or more fleet folders (the last thing lab/device/fleet.sh prints)."""

from __future__ import annotations

import sys
from pathlib import Path

FIGS = ("memory.triad", "memory.d2d", "fp32.fma", "tensor.bf16", "transfer.h2d_pinned")


def main(folders: list[str]) -> int:
    from gpuadvisor.core.errors import UserError
    from gpuadvisor.fleet import store
    from gpuadvisor.fleet.outliers import find_outliers

    for f in folders:
        if not Path(f).exists():
            continue
        try:
            fleet = store.load(f)
        except UserError as e:
            print(f"{f}: {e}")
            continue
        s = fleet.summary
        print(f"\n== {Path(f).name}: {len(s.nodes)} node(s) {s.counts()} in {s.duration_s} s "
              f"(deadline {s.timeout_s} s)")
        print(f"{'node':<28} {'status':<8} {'GPU':<22} " + " ".join(f"{k:>20}" for k in FIGS))
        for n in s.nodes:
            run = fleet.results.get(n.name)
            if run is None:
                print(f"{n.name:<28} {n.status:<8} {n.reason or ''}")
                continue
            for d in run.devices or [None]:
                vals = []
                for k in FIGS:
                    m = d.measurement(k) if d is not None else None
                    vals.append(f"{m.value:,.1f} {m.unit}" if m is not None and m.value is not None else "-")
                name = f"{d.index}: {d.name}" if d is not None else "host only"
                print(f"{n.name:<28} {n.status:<8} {name[:22]:<22} " + " ".join(f"{v:>20}" for v in vals))
            bad = [f"{p.probe}={p.status}" for d in run.devices for p in d.probes if p.status != "ok"]
            if bad:
                print(f"{'':<28} probes not ok: {', '.join(bad)}")
        for o in find_outliers(fleet.results, tolerance_pct=5):
            print(f"  outlier (5%): {o.describe()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
