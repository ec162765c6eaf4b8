"""Summary of a probe result's node figures, for BENCHMARKS.md: topology, P2P, the NCCL sweep against
torch.distributed, each GPU's GEMM bursts and health. Runs with only the standard library.

Usage: python3 -m lab.interconnect_table RESULT.json
"""

from __future__ import annotations

import json
import sys


def gb(v: float | None) -> str:
    return "-" if v is None else f"{v:,.1f}"


def main(path: str) -> int:
    with open(path, encoding="utf-8") as f:
        r = json.load(f)
    h = r["host"]
    print(f"== {path}: {r['created_at']} mode={r['mode']} driver={h.get('driver_version')} "
          f"CUDA={h.get('cuda_runtime_version')} CuPy={h.get('cupy_version')} torch={h.get('torch_version')}")
    for d in r["devices"]:
        print(f"GPU{d['index']}: {d['name']} [{d.get('catalog_name')}] flags={d.get('flags')}")
        for p in d["probes"]:
            if p["probe"] == "tensor":
                for m in p["measurements"]:
                    det = m.get("details", {})
                    ref = m.get("reference")
                    print(f"  {m['key']:<13} best {gb(m['value'])} median {gb(det.get('median'))} {m['unit']} "
                          f"spread {100 * (m.get('spread') or 0):.1f}% ref {gb(ref)} "
                          f"x{(m['value'] / ref) if ref and m['value'] else 0:.3f} "
                          f"ds {100 * m['value'] / m['datasheet'] if m.get('datasheet') and m['value'] else 0:.0f}%")
            elif p["probe"] == "health":
                dd = p["data"]
                errs = dd.get("nvlink_errors", {}).get("totals")
                print(f"  health: remap={dd.get('remapped_rows')} nvlink_err={errs} "
                      f"xid={dd.get('xid_events')} watched={dd.get('xid_watched')} clocks={dd.get('clocks')}")
            elif p["status"] != "ok":
                print(f"  {p['probe']}: {p['status']} {p.get('reason')}"[:300])
    for p in r.get("node_probes", []):
        print(f"-- node probe {p['probe']}: {p['status']} ({p['duration_s']:.1f} s) {p.get('reason') or ''}"[:900])
        data = p.get("data", {})
        topo = data.get("topology") or {}
        for row in topo.get("matrix", []):
            print("   topo " + "  ".join(f"{c:>5}" for c in row))
        for pair in topo.get("pairs", []):
            print(f"   pair {pair['a']}-{pair['b']}: {pair['label']} via={pair.get('via')} "
                  f"NVLink v{pair.get('version')} "
                  f"links={pair.get('links')} {gb(pair.get('gbs_per_direction'))} GB/s/dir; "
                  f"ancestor={pair.get('level_name')}")
        print(f"   datasheet per direction: {data.get('datasheet_per_direction_gbs')} ({data.get('datasheet_source')})")
        print(f"   NCCL versions: {data.get('nccl_versions')}, primary {data.get('nccl_primary')}")
        for m in p.get("measurements", []):
            ref, ds = m.get("reference"), m.get("datasheet")
            v = m.get("value")
            print(f"   {m['key']:<38} {gb(v):>9} {m['unit']:<5} ref {gb(ref):>9} "
                  f"x{(v / ref) if ref and v else 0:.3f}  ds% {100 * v / ds if ds and v else 0:5.1f}  "
                  f"spread {100 * (m.get('spread') or 0):.1f}%")
        sweep = data.get("nccl") or {}
        for op in ("all_reduce", "all_gather", "reduce_scatter"):
            ours = {x["bytes"]: x for x in sweep.get(f"{data.get('nccl_primary')}.{op}", [])}
            ref = {x["bytes"]: x for x in sweep.get(f"torch.{op}", [])}
            print(f"   sweep {op}: " + ", ".join(
                f"{s >> 20}M {ours[s]['busbw_gbs']:.0f}/{ref[s]['busbw_gbs']:.0f}" if s in ref else
                f"{s >> 20}M {ours[s]['busbw_gbs']:.0f}" for s in sorted(ours)))
        for k, v in (data.get("errors") or {}).items():
            print(f"   error {k}: {v}"[:400])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
