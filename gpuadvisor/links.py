"""The links of a probed node in words, for the TUI and the CLI: one line per GPU pair.

Pure: reads the interconnect probe of a RunResult (topology, P2P figures, NCCL all-reduce).
"""

from __future__ import annotations

from gpuadvisor.core.results import RunResult


def link_lines(run: RunResult, index: int | None = None) -> list[str]:
    """'GPU 0 ↔ GPU 1: NV18 (NVLink 4 × 18 via nvswitch, 450 GB/s per direction); P2P 392 / 391 GB/s'
    for every pair (or every pair of GPU `index`), then the node's all-reduce bus bandwidth."""
    p = run.node_probe("interconnect")
    if p is None:
        return []
    if p.status != "ok" and not p.data.get("topology"):
        return [f"links: interconnect probe {p.status}" + (f" ({p.reason})" if p.reason else "")]
    lines = []
    for pair in (p.data.get("topology") or {}).get("pairs", []):
        a, b = pair["a"], pair["b"]
        if index is not None and index not in (a, b):
            continue
        what = pair.get("label") or "?"
        if pair.get("nvlink"):
            rate = f", {pair['gbs_per_direction']:.0f} GB/s per direction" if pair.get("gbs_per_direction") else ""
            what += f" (NVLink {pair.get('version') or '?'} × {pair.get('links')} via {pair.get('via')}{rate})"
        elif pair.get("level_desc"):
            what += f" (PCIe: {pair['level_desc']})"
        p2p = [p.get(f"interconnect.p2p_{x}_{y}") for x, y in ((a, b), (b, a))]
        vals = [f"{m.value:.0f}" for m in p2p if m is not None and m.value is not None]
        staged = any(m is not None and m.details.get("path") == "staged through host" for m in p2p)
        if vals:
            what += f"; P2P {' / '.join(vals)} GB/s" + (" (staged through host)" if staged else "")
        lines.append(f"GPU {a} ↔ GPU {b}: {what}")
    best = [m for m in (p.get(f"interconnect.allreduce_busbw_{s}") for s in ("4g", "1g", "256m", "16m")) if m]
    if best and best[0].value is not None:
        m = best[0]
        ref = f" ({m.ratio_to_reference:.2f}× torch.distributed)" if m.ratio_to_reference else ""
        size = int(m.details.get("bytes") or 0)
        size_text = f"{size >> 30} GiB" if size >= 1 << 30 else f"{size >> 20} MiB"
        lines.append(f"NCCL all-reduce {size_text}: {m.value:.0f} GB/s bus bandwidth{ref}")
    return lines
