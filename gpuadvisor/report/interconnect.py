"""The report's node section: topology and P2P matrices as heatmaps, the NCCL sweep as a chart, the
link figures and each GPU's health, from the interconnect and health probes of a result.

`node_view(run, add)` returns what the template's node section needs (or None when the result
has neither probe); `add` registers a Plotly figure and returns its element id, as in
gpuadvisor/report/__init__.py. Plotly is imported here only, when a report is built.
"""

from __future__ import annotations

from typing import Any

from gpuadvisor.core.results import RunResult

OPS = (("all_reduce", "all-reduce"), ("all_gather", "all-gather"), ("reduce_scatter", "reduce-scatter"))
COLORS = {"all_reduce": "#2563eb", "all_gather": "#16a34a", "reduce_scatter": "#9333ea"}


def _size(nbytes: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if nbytes >= 1 << shift:
            v = nbytes / (1 << shift)
            return f"{v:g} {unit}"
    return f"{nbytes} B"


def _gb(v: float | None) -> str:
    return "-" if v is None else f"{v:,.0f}" if v >= 100 else f"{v:,.1f}"


def _layout(fig: Any, title: str, height: int = 380, **kw: Any) -> Any:
    fig.update_layout(
        title={"text": title, "x": 0.01, "xanchor": "left", "font": {"size": 16}},
        template="plotly_white", height=height, margin={"l": 70, "r": 30, "t": 60, "b": 60},
        font={"family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif", "size": 12}, **kw,
    )
    return fig


def topology_heatmap(topo: dict[str, Any]) -> Any:
    """GPU x GPU: the link label (NV18, PIX, SYS) as text, NVLink GB/s per direction as colour."""
    import plotly.graph_objects as go

    idx = topo.get("indices") or []
    matrix = topo.get("matrix") or []
    if len(idx) < 2 or not matrix:
        return None
    rate = {(p["a"], p["b"]): p.get("gbs_per_direction") or 0.0 for p in topo.get("pairs", [])}
    z = [[None if a == b else rate.get((min(a, b), max(a, b)), 0.0) for b in idx] for a in idx]
    names = [f"GPU {i}" for i in idx]
    fig = go.Figure(go.Heatmap(
        z=z, x=names, y=names, text=matrix, texttemplate="%{text}", colorscale="Blues", zmin=0,
        colorbar={"title": "NVLink GB/s<br>per direction"},
        hovertemplate="%{y} ↔ %{x}: %{text}, %{z:.0f} GB/s per direction<extra></extra>",
    ))
    return _layout(fig, "Topology (nvidia-smi topo -m labels)", height=260 + 40 * len(idx),
                   yaxis={"autorange": "reversed"})


def p2p_heatmap(p2p: dict[str, Any], key: str = "gbs") -> Any:
    """Source x destination: one-way peer copy GB/s; staged copies marked."""
    import plotly.graph_objects as go

    rows = [r for r in p2p.get("one_way", []) if key in r]
    if not rows:
        return None
    idx = sorted({r["src"] for r in rows} | {r["dst"] for r in rows})
    cell = {(r["src"], r["dst"]): r for r in rows}
    z = [[cell[(a, b)][key] if (a, b) in cell else None for b in idx] for a in idx]
    text = [["" if (a, b) not in cell else f"{cell[(a, b)][key]:.0f}" + ("*" if not cell[(a, b)]["peer_access"] else "")
             for b in idx] for a in idx]
    names = [f"GPU {i}" for i in idx]
    fig = go.Figure(go.Heatmap(
        z=z, x=names, y=names, text=text, texttemplate="%{text}", colorscale="Viridis", zmin=0,
        colorbar={"title": "GB/s"}, hovertemplate="%{y} → %{x}: %{z:.1f} GB/s<extra></extra>",
    ))
    return _layout(fig, "Peer-to-peer copy, one way (row: source, column: destination; * staged through host)",
                   height=260 + 40 * len(idx), yaxis={"autorange": "reversed", "title": "source"},
                   xaxis={"title": "destination"})


def nccl_chart(sweep: dict[str, list[dict[str, Any]]], primary: str | None, datasheet: float | None) -> Any:
    """Bus bandwidth against message size for each collective; the same-run torch.distributed dashed."""
    import plotly.graph_objects as go

    if not primary or not any(sweep.get(f"{primary}.{op}") for op, _ in OPS):
        return None
    fig = go.Figure()
    for op, label in OPS:
        for backend, dash, name in ((primary, "solid", "CuPy NCCL" if primary == "cupy" else "torch.distributed"),
                                    ("torch", "dash", "torch.distributed (reference)")):
            if backend == "torch" and primary == "torch" and dash == "dash":
                continue
            rows = sweep.get(f"{backend}.{op}") or []
            if not rows:
                continue
            fig.add_trace(go.Scatter(
                x=[r["bytes"] for r in rows], y=[r["busbw_gbs"] for r in rows], mode="lines+markers",
                name=f"{label}: {name}", line={"color": COLORS[op], "dash": dash},
                text=[_size(r["bytes"]) for r in rows],
                hovertemplate=f"{label} ({name}) %{{text}}: %{{y:.1f}} GB/s bus bandwidth<extra></extra>",
            ))
    if datasheet:
        fig.add_hline(y=datasheet, line={"color": "#6b7280", "dash": "dot"},
                      annotation_text=f"link rate per direction {datasheet:.0f} GB/s", annotation_position="top left")
    sizes = sorted({r["bytes"] for rows in sweep.values() for r in rows})
    return _layout(fig, "NCCL bus bandwidth by message size", height=440,
                   xaxis={"type": "log", "title": "bytes (whole buffer, as nccl-tests counts)",
                          "tickvals": sizes, "ticktext": [_size(s) for s in sizes]},
                   yaxis={"title": "bus bandwidth (GB/s)", "rangemode": "tozero"},
                   legend={"orientation": "h", "yanchor": "top", "y": -0.22, "x": 0})


def _health_rows(run: RunResult) -> list[dict[str, str]]:
    out = []
    for dev in run.devices:
        h = dev.probe("health")
        if h is None:
            continue
        d = h.data or {}
        rr = d.get("remapped_rows") or {}
        remap = "-" if not rr.get("supported") else (
            f"{rr.get('corrected', 0)} corr / {rr.get('uncorrected', 0)} unc"
            + (", PENDING" if rr.get("pending") else "") + (", FAILED" if rr.get("failed") else ""))
        nv = d.get("nvlink_errors") or {}
        nvl = "-" if not nv.get("supported") else (", ".join(f"{k} {v}" for k, v in (nv.get("totals") or {}).items())
                                                  or f"{nv.get('active_links', 0)} links")
        xids = d.get("xid_events") or []
        c = d.get("clocks") or {}
        clock = "-" if c.get("reached_max_pct") is None else (
            f"{c.get('sm_clock_busy_max_mhz')} / {c.get('sm_clock_max_mhz')} MHz max, "
            f"median {c.get('sm_clock_busy_median_mhz')} MHz")
        out.append({
            "gpu": f"GPU {dev.index}", "status": h.status, "remap": remap, "nvlink": nvl,
            "xid": ", ".join(str(e.get("xid")) for e in xids) or ("none" if d.get("xid_watched") else "not watched"),
            "clocks": clock, "throttle": ", ".join(c.get("throttle_reasons_under_load") or []) or "none",
            "problems": "; ".join(d.get("problems") or []) or (h.reason or ""),
        })
    return out


def node_view(run: RunResult, add: Any) -> dict[str, Any] | None:
    """What the node section shows; None when the result has no interconnect or health probe."""
    p = run.node_probe("interconnect")
    health = _health_rows(run)
    if p is None and not health:
        return None
    view: dict[str, Any] = {"status": None, "reason": None, "pairs": [], "p2p": [], "nccl": [], "health": health,
                            "chart_topology": None, "chart_p2p": None, "chart_nccl": None, "datasheet": "",
                            "errors": [], "versions": ""}
    if p is None:
        return view
    data = p.data or {}
    view["status"], view["reason"] = p.status, p.reason
    topo = data.get("topology") or {}
    view["pairs"] = [{
        "pair": f"GPU {x['a']} ↔ GPU {x['b']}", "label": x.get("label") or "?",
        "nvlink": (f"NVLink {x.get('version') or '?'} × {x.get('links')} ({x.get('via')})" if x.get("nvlink")
                   else "none"),
        "rate": _gb(x.get("gbs_per_direction")) + " GB/s" if x.get("gbs_per_direction") else "-",
        "ancestor": f"{x.get('level_name')}: {x.get('level_desc')}" if x.get("level_name") else "-",
    } for x in topo.get("pairs", [])]
    ds = data.get("datasheet_per_direction_gbs")
    view["datasheet"] = f"{ds:.0f} GB/s per direction ({data.get('datasheet_source')})" if ds else ""
    for m in p.measurements:
        ratio = m.ratio_to_reference
        row = {"key": m.key, "label": m.label, "value": f"{_gb(m.value)} {m.unit}",
               "ref": f"{_gb(m.reference)} ({ratio:.2f}×)" if ratio else "-",
               "pct": f"{m.pct_of_datasheet:.0f}%" if m.pct_of_datasheet else "-",
               "spread": f"{100 * m.spread:.1f}%" if m.spread is not None else "-"}
        (view["p2p"] if ".p2p_" in m.key else view["nccl"]).append(row)
    versions = data.get("nccl_versions") or {}
    view["versions"] = ", ".join(f"{k} {v}" for k, v in versions.items())
    view["errors"] = [f"{k}: {v}" for k, v in (data.get("errors") or {}).items()]
    view["chart_topology"] = add(topology_heatmap(topo)) if topo else None
    view["chart_p2p"] = add(p2p_heatmap(data.get("p2p") or {}))
    view["chart_nccl"] = add(nccl_chart(data.get("nccl") or {}, data.get("nccl_primary"), ds))
    return view
