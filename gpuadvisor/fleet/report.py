"""The fleet report: one self-contained HTML file (Plotly inlined once, works offline).

It arranges what the core computed (the summary, the verdict, the outliers, the figure
statistics) into one Jinja2 template, rendered through gpuadvisor.htmlpage like the report
(the same page, styles and charts; autoescape on: node and device names are text).
Plotly is imported only when a report is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpuadvisor.core.results import DeviceResult
from gpuadvisor.fleet.model import Fleet
from gpuadvisor.fleet.outliers import FigureStat, figure_stats
from gpuadvisor.fleet.verdict import FleetVerdict
from gpuadvisor.htmlpage import Charts, plotly_js, render_page

TEMPLATE = "fleet_report.html.j2"
HEADLINE_GPU = ("memory.triad", "memory.d2d", "transfer.h2d_pinned", "fp32.fma", "fp64.fma", "tensor.bf16",
                "tensor.fp8")
HEADLINE_HOST = ("host.triad", "host.matmul_fp32", "host.matmul_fp64")
INTERCONNECT_PREFIXES = ("interconnect.", "p2p.", "nccl.", "nvlink.", "topology.")
STATUS_CLASS = {"ok": "ok", "lost": "bad", "timeout": "warn", "failed": "bad", "pending": "warn"}


def _n(v: float | None, unit: str = "") -> str:
    if v is None:
        return "-"
    text = f"{v:,.0f}" if abs(v) >= 100 else f"{v:,.1f}" if abs(v) >= 10 else f"{v:,.2f}"
    return f"{text} {unit}".rstrip()


def _rows(fleet: Fleet, verdict: FleetVerdict, stats: dict[tuple[str, str], FigureStat]) -> tuple[list, list, list]:
    """(columns, rows, interconnect): one row per GPU of every node (or its host), one column per figure."""
    gpu_keys = [k for k in HEADLINE_GPU if any(s[1] == k and not s[0].startswith("host: ") for s in stats)]
    host_only = not any(r.devices for r in fleet.results.values())
    keys = [k for k in HEADLINE_HOST if any(s[1] == k for s in stats)] if host_only else gpu_keys
    outl = {(o.node, o.device, o.key) for o in verdict.outliers}
    verd = {v.node: v for v in verdict.nodes}
    rows, links = [], []
    for entry in fleet.summary.nodes:
        run = fleet.results.get(entry.name)
        v = verd.get(entry.name)
        base = {"node": entry.name, "status": entry.status, "status_class": STATUS_CLASS.get(entry.status, ""),
                "reason": entry.reason or "", "passed": None if v is None else v.passed}
        if run is None:
            rows.append({**base, "gpu": "-", "cells": [{"text": "-", "cls": ""} for _ in keys]})
            continue
        units = [(None, f"host: {run.host.cpu}", None)] if host_only or not run.devices else [
            (d.index, d.name, d) for d in run.devices]
        for idx, gpu_figures, dev in units:
            cells = []
            for k in keys:
                m = dev.measurement(k) if dev is not None else next(
                    (mm for p in run.host_probes for mm in p.measurements if mm.key == k), None)
                st = stats.get((gpu_figures, k))
                if m is None or m.value is None:
                    cells.append({"text": "-", "cls": ""})
                    continue
                pct = f" ({100 * m.value / st.median:.0f}%)" if st and st.count > 1 and st.median else ""
                cells.append({"text": _n(m.value, m.unit) + pct, "cls": "bad" if (entry.name, idx, k) in outl else ""})
            rows.append({**base, "gpu": gpu_figures if idx is None else f"GPU {idx}: {gpu_figures}", "cells": cells})
            for m_dev in ([dev] if dev is not None else []):
                for p in m_dev.probes:
                    for m in p.measurements:
                        if m.key.startswith(INTERCONNECT_PREFIXES) or p.probe == "interconnect":
                            links.append({"node": entry.name, "gpu": f"GPU {idx}", "label": m.label,
                                          "value": _n(m.value, m.unit)})
        for p in [*run.host_probes, *(getattr(run, "node_probes", None) or [])]:
            for m in p.measurements:
                if m.key.startswith(INTERCONNECT_PREFIXES) or p.probe == "interconnect":
                    links.append({"node": entry.name, "gpu": "node", "label": m.label, "value": _n(m.value, m.unit)})
    labels = []
    for k in keys:
        st = next((s for (gpu_figures, kk), s in stats.items() if kk == k), None)
        labels.append(f"{st.label} ({st.unit})" if st else k)
    return labels, rows, links


def _heatmap(fleet: Fleet, stats: dict[tuple[str, str], FigureStat]) -> Any:
    """Each GPU's headline figures as a percentage of the fleet median for its kind of GPU."""
    import plotly.graph_objects as go

    keys = [k for k in HEADLINE_GPU if any(kk == k for _, kk in stats)] or list(HEADLINE_HOST)
    y, z, text = [], [], []
    for entry in fleet.summary.nodes:
        run = fleet.results.get(entry.name)
        if run is None:
            continue
        units: list[tuple[str, str, DeviceResult | None]] = [
            (f"{entry.name} GPU {d.index}", d.name, d) for d in run.devices] or [
            (f"{entry.name} host", f"host: {run.host.cpu}", None)]
        for label, gpu_figures, dev in units:
            row: list[float | None] = []
            trow: list[str] = []
            for k in keys:
                m = dev.measurement(k) if dev is not None else next(
                    (mm for p in run.host_probes for mm in p.measurements if mm.key == k), None)
                st = stats.get((gpu_figures, k))
                if m is None or m.value is None or st is None or not st.median:
                    row.append(None)
                    trow.append("")
                else:
                    row.append(round(100 * m.value / st.median, 1))
                    trow.append(f"{100 * m.value / st.median:.0f}%")
            y.append(label)
            z.append(row)
            text.append(trow)
    if not y or all(v is None for r in z for v in r):
        return None
    fig = go.Figure(go.Heatmap(z=z, x=list(keys), y=y, text=text, texttemplate="%{text}", zmid=100, zmin=80, zmax=120,
                               colorscale="RdBu", colorbar={"title": "% of median"}))
    fig.update_layout(title="Each figure as a % of the fleet median (same hardware)", template="plotly_white",
                      height=max(260, 40 * len(y) + 140), margin={"l": 220, "r": 20, "t": 60, "b": 60},
                      yaxis={"autorange": "reversed"})
    return fig


def build_fleet_report(fleet: Fleet, verdict: FleetVerdict, *, title: str | None = None) -> str:
    """The report as one HTML string; without Plotly importable, the same tables and no chart."""
    stats_list = figure_stats(fleet.results)
    stats = {(s.hardware, s.key): s for s in stats_list}
    columns, rows, links = _rows(fleet, verdict, stats)
    charts, chart_note = Charts(), ""
    try:
        charts.add(_heatmap(fleet, stats))
        if charts.figures:
            plotly_js()  # the page inlines it: find out now whether it can
    except Exception as e:  # missing, or broken by a mismatched dependency: the tables still count
        charts = Charts()
        chart_note = f"no chart: Plotly is not usable here ({type(e).__name__}: {e})"
    s = fleet.summary
    return render_page(
        Path(__file__).parent,
        TEMPLATE,
        title=title or f"gpuadvisor fleet report: {len(s.nodes)} node(s), {s.created_at}",
        charts=charts,
        summary=s,
        counts=s.counts(),
        gpus=sum(len(r.devices) for r in fleet.results.values()),
        verdict=verdict,
        columns=columns,
        rows=rows,
        links=links,
        outliers=[o.describe() for o in verdict.outliers],
        stats=[{"hardware": st.hardware, "label": st.label, "unit": st.unit, "median": _n(st.median),
                "range": f"{_n(st.lowest)} - {_n(st.highest)}", "count": st.count} for st in stats_list],
        chart_note=chart_note,
    )
