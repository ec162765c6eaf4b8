"""Plotly figures for the HTML report. Each function takes core data and returns a Figure, or None
when the data it needs is absent (the template then says what is missing)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape
from typing import Any

import plotly.graph_objects as go

from gpuadvisor.compare import FigureRow
from gpuadvisor.core.results import DeviceResult, ProbeResult

PALETTE = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#ca8a04", "#db2777", "#4b5563"]

# compute roofs, lowest first; int8 is in TOPS and drawn on the same axis
ROOFS = (
    ("fp64.fma", "FP64 (FMA)"),
    ("fp32.fma", "FP32 (FMA)"),
    ("tensor.tf32", "TF32 tensor"),
    ("tensor.fp16", "FP16 tensor"),
    ("tensor.bf16", "BF16 tensor"),
    ("tensor.fp8", "FP8 tensor"),
    ("tensor.int8", "INT8 tensor (TOPS)"),
)
MEMORY_KEYS = ("memory.triad", "memory.copy", "memory.d2d")


def _layout(fig: go.Figure, title: str, height: int = 420, **kw: Any) -> go.Figure:
    fig.update_layout(
        title={"text": title, "x": 0.01, "xanchor": "left", "font": {"size": 16}},
        template="plotly_white",
        height=height,
        margin={"l": 70, "r": 30, "t": 60, "b": 60},
        legend={"orientation": "h", "yanchor": "top", "y": -0.18, "x": 0},
        font={"family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif", "size": 12},
        **kw,
    )
    return fig


def _fmt(v: float | None, unit: str = "") -> str:
    if v is None:
        return "-"
    text = f"{v:,.0f}" if abs(v) >= 100 else f"{v:,.3g}"
    return f"{text} {unit}".rstrip()


def measured_vs_datasheet(rows: Sequence[FigureRow], title: str) -> go.Figure | None:
    """Horizontal bars: each figure as % of its datasheet value; hover and labels give the numbers."""
    rows = [r for r in rows if r.pct is not None]
    if not rows:
        return None
    rows = list(reversed(rows))  # plotly draws the first bar at the bottom
    colors = ["#16a34a" if (r.pct or 0) >= 85 else "#ca8a04" if (r.pct or 0) >= 60 else "#dc2626" for r in rows]
    fig = go.Figure(
        go.Bar(
            x=[r.pct for r in rows],
            y=[r.key for r in rows],
            orientation="h",
            marker_color=colors,
            text=[f"{r.pct:.0f}%  ({_fmt(r.value)} / {_fmt(r.datasheet, r.unit)})" for r in rows],
            textposition="auto",
            customdata=[
                [r.label, _fmt(r.value, r.unit), _fmt(r.datasheet, r.unit), r.datasheet_source or ""] for r in rows
            ],
            hovertemplate="<b>%{customdata[0]}</b><br>measured %{customdata[1]}<br>"
            "datasheet %{customdata[2]} (%{customdata[3]})<br>%{x:.1f}% of datasheet<extra></extra>",
            name="% of datasheet",
        )
    )
    fig.add_vline(x=100, line_dash="dot", line_color="#6b7280")
    top = max(110.0, max(r.pct or 0.0 for r in rows) + 10)
    _layout(fig, title, height=max(260, 34 * len(rows) + 120), showlegend=False)
    fig.update_xaxes(title_text="% of datasheet (or theoretical) value", range=[0, top], ticksuffix="%")
    fig.update_yaxes(automargin=True)
    return fig


def roofline(dev: DeviceResult, datasheet_bw: float | None = None) -> go.Figure | None:
    """Measured roofline: the best memory bandwidth as the slope, each measured compute peak as a roof."""
    bw_rows = [dev.measurement(k) for k in MEMORY_KEYS]
    bws = [(m.value, m.key) for m in bw_rows if m is not None and m.value]
    roofs = []
    for key, label in ROOFS:
        m = dev.measurement(key)
        if m is not None and m.value:
            roofs.append((label, m.value, key))
    if not bws or not roofs:
        return None
    bw, bw_key = max(bws)
    tb_s = bw / 1000.0  # GB/s -> TFLOP/s per FLOP/byte
    top = max(v for _, v, _ in roofs)
    x_min = 10 ** math.floor(math.log10(min(v for _, v, _ in roofs) / tb_s / 20))
    x_max = 10 ** math.ceil(math.log10(top / tb_s * 8))
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=[x_min, top / tb_s],
            y=[tb_s * x_min, top],
            mode="lines",
            line={"color": "#111827", "width": 3},
            name=f"memory: {bw:,.0f} GB/s ({bw_key})",
            hovertemplate="intensity %{x:.3g} FLOP/B<br>%{y:.3g} TFLOP/s<extra>memory bound</extra>",
        )
    )
    if datasheet_bw:
        d = datasheet_bw / 1000.0
        fig.add_trace(
            go.Scatter(
                x=[x_min, top / d],
                y=[d * x_min, top],
                mode="lines",
                line={"color": "#9ca3af", "width": 1.5, "dash": "dash"},
                name=f"memory, datasheet {datasheet_bw:,.0f} GB/s",
                hoverinfo="skip",
            )
        )
    for i, (label, peak, _key) in enumerate(roofs):
        ridge = peak / tb_s
        color = PALETTE[i % len(PALETTE)]
        fig.add_trace(
            go.Scatter(
                x=[ridge, x_max],
                y=[peak, peak],
                mode="lines+markers",
                marker={"size": [8, 0], "color": color},
                line={"color": color, "width": 2.5},
                name=f"{label}: {_fmt(peak)} (ridge {ridge:.3g} FLOP/B)",
                hovertemplate=f"{label}<br>roof {_fmt(peak)}<br>ridge at {ridge:.3g} FLOP/byte<extra></extra>",
            )
        )
    _layout(fig, "Roofline from measured ceilings", height=480)
    fig.update_xaxes(type="log", dtick=1, title_text="arithmetic intensity (FLOP per byte of memory traffic)")
    fig.update_yaxes(type="log", dtick=1, title_text="attainable TFLOP/s (TOPS for int8)")
    return fig


def transfer_sweep(probe: ProbeResult | None) -> go.Figure | None:
    rows = probe.data.get("sweep") if probe is not None else None
    if not isinstance(rows, list) or not rows or not isinstance(rows[0], dict) or "bytes" not in rows[0]:
        return None
    fig = go.Figure()
    series = [
        ("h2d_pinned_gbs", "host→device, pinned"),
        ("d2h_pinned_gbs", "device→host, pinned"),
        ("h2d_pageable_gbs", "host→device, pageable"),
        ("d2h_pageable_gbs", "device→host, pageable"),
    ]
    for i, (col, label) in enumerate(series):
        pts = [(r["bytes"], r.get(col)) for r in rows if isinstance(r, dict) and r.get(col) is not None]
        _add_series(fig, pts, label, {"color": PALETTE[i], "dash": "solid" if "pinned" in col else "dot"},
                    "%{x:.3s}B: %{y:.1f} GB/s")
    if not fig.data:
        return None
    _layout(fig, "Host ↔ device copies across sizes", height=400)
    fig.update_xaxes(type="log", dtick=1, title_text="bytes per copy")
    fig.update_yaxes(title_text="GB/s", rangemode="tozero")
    return fig


def _add_series(fig: go.Figure, pts: list[tuple[Any, Any]], label: str, line: dict[str, Any], hover: str) -> None:
    """One measured sweep as a line with markers (nothing where it has no point); `hover` names x and y."""
    if pts:
        fig.add_trace(
            go.Scatter(
                x=[p[0] for p in pts],
                y=[p[1] for p in pts],
                mode="lines+markers",
                name=label,
                line=line,
                hovertemplate=hover + "<extra>" + label + "</extra>",
            )
        )


def crossover(probe: ProbeResult | None) -> list[go.Figure]:
    """CPU vs GPU time across sizes for each sweep in the crossover probe (vector add, matmul)."""
    if probe is None:
        return []
    figs = []
    titles = {"vector_add": ("Vector add: CPU vs GPU", "elements"), "matmul": ("Matmul: CPU vs GPU", "N (N×N)")}
    for name, rows in probe.data.items():
        if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) and "size" in r for r in rows):
            continue
        title, xlabel = titles.get(name, (f"{name}: CPU vs GPU", "size"))
        fig = go.Figure()
        for i, (col, label) in enumerate(
            (("cpu_ms", "CPU (NumPy)"), ("gpu_ms", "GPU, kernel only"), ("gpu_transfer_ms", "GPU, with copies"))
        ):
            pts = [(r["size"], r.get(col)) for r in rows if r.get(col)]
            _add_series(fig, pts, label, {"color": ("#4b5563", "#16a34a", "#2563eb")[i],
                                          "dash": "dash" if i == 2 else "solid"}, "size %{x:,}<br>%{y:.4g} ms")
        for suffix, dash, label in (("kernel", "dot", "GPU wins from"), ("with_transfers", "dash", "with copies from")):
            m = next((m for m in probe.measurements if m.key == f"crossover.{name}.{suffix}"), None)
            if m is not None and m.value:
                fig.add_vline(x=m.value, line_dash=dash, line_color="#9ca3af")
                # annotations on a log axis take log10 coordinates (shapes take data values)
                fig.add_annotation(
                    x=math.log10(m.value),
                    y=1.0 if suffix == "kernel" else 0.0,
                    yref="paper",
                    yanchor="top" if suffix == "kernel" else "bottom",
                    xanchor="left",
                    text=f"{label} {m.value:,.0f}",
                    showarrow=False,
                    font={"size": 11, "color": "#4b5563"},
                    bgcolor="rgba(255,255,255,0.8)",
                )
        if not fig.data:
            continue
        if len(fig.data) == 1:  # the CPU alone (no GPU here): no "vs" and a legend for the one line
            title = title.replace(": CPU vs GPU", " on the CPU (no GPU measured)")
        _layout(fig, title, height=400, showlegend=True)
        fig.update_xaxes(type="log", dtick=1, title_text=xlabel)
        fig.update_yaxes(type="log", dtick=1, title_text="time (ms, median)")
        figs.append(fig)
    return figs


def memory_breakdown(parts: Sequence[tuple[str, float]], capacity_gib: float | None, title: str) -> go.Figure | None:
    """Stacked bar of the memory a workload needs per GPU, with the card's capacity as a line."""
    parts = [(k, v) for k, v in parts if v and v > 0]
    if not parts:
        return None
    fig = go.Figure()
    for i, (label, gib) in enumerate(parts):
        fig.add_trace(
            go.Bar(
                x=[gib],
                y=["per GPU"],
                orientation="h",
                name=f"{label}: {gib:,.1f} GiB",
                marker_color=PALETTE[i % len(PALETTE)],
                hovertemplate=f"{label}: %{{x:.2f}} GiB<extra></extra>",
            )
        )
    total = sum(v for _, v in parts)
    if capacity_gib:
        fig.add_vline(
            x=capacity_gib,
            line_color="#dc2626" if total > capacity_gib else "#16a34a",
            line_width=2,
            annotation_text=f"card memory {capacity_gib:,.0f} GiB",
            annotation_position="top",
        )
    _layout(fig, title, height=300, barmode="stack")
    fig.update_xaxes(title_text="GiB", range=[0, max(total, capacity_gib or 0) * 1.08])
    fig.update_yaxes(showticklabels=False)
    return fig


def frontier(advice: Any) -> go.Figure | None:
    """Cost versus time of every option that fits (rentals, purchases, this machine's card), the
    Pareto frontier as a line, the named picks labelled. Options that miss a target are faint."""
    from gpuadvisor import presentation as pres

    pts = [o for o in advice.options if o.fits and o.cost is not None and o.time_s is not None]
    if not pts:
        return None
    ax = pres.axes(advice)
    fig = go.Figure()
    _frontier_points(fig, pts, ax)
    front = sorted(advice.frontier, key=lambda o: o.time_s)
    if front:
        fig.add_trace(
            go.Scatter(
                x=[o.time_s * ax.time_scale for o in front],
                y=[o.cost for o in front],
                mode="lines",
                line={"color": "#111827", "width": 1.5, "shape": "hv"},
                name="frontier: none is both cheaper and faster",
                hoverinfo="skip",
            )
        )
    _frontier_picks(fig, advice, ax)
    _layout(fig, "Cost versus time: every option, the frontier and the picks", height=520)
    xs = [o.time_s * ax.time_scale for o in pts]
    ys = [o.cost for o in pts if o.cost > 0]
    fig.update_xaxes(type="log", title_text=f"{ax.time} (estimate)", **_log_ticks(min(xs), max(xs)))
    fig.update_yaxes(type="log", title_text=f"{ax.cost} (estimate)", **_log_ticks(min(ys), max(ys), "$"))
    return fig


def _frontier_points(fig: go.Figure, pts: list[Any], ax: Any) -> None:
    """One marker trace per kind (rent, buy, yours) and per meets/misses; the hover text escaped."""
    from gpuadvisor import presentation as pres

    def hover(o: Any) -> str:  # labels may come from a user's catalog: escaped
        meets = "meets every target" if o.meets else "misses: " + "; ".join(o.misses)
        figs = f"{pres.money(o.cost)} · {o.time_s * ax.time_scale:.3g}"
        return f"<b>{escape(o.label)}</b><br>{figs}<br>binds: {escape(o.binds_note or o.binds)}<br>{escape(meets)}"

    kinds = (
        ("rent", "rent", "#2563eb", "circle"),
        ("buy", "buy", "#16a34a", "square"),
        ("local", "yours", "#9333ea", "star"),
    )
    for kind, label, color, symbol in kinds:
        for meets in (True, False):
            group = [o for o in pts if o.hardware.kind == kind and o.meets == meets]
            if not group:
                continue
            fig.add_trace(
                go.Scatter(
                    x=[o.time_s * ax.time_scale for o in group],
                    y=[o.cost for o in group],
                    mode="markers",
                    name=f"{label}: {'meets the targets' if meets else 'misses a target'}",
                    marker={"size": 9 if meets else 7, "color": color, "symbol": symbol,
                            "opacity": 0.9 if meets else 0.25, "line": {"width": 0.5, "color": "white"}},
                    customdata=[hover(o) for o in group],
                    hovertemplate="%{customdata}<extra></extra>",
                )
            )


def _frontier_picks(fig: go.Figure, advice: Any, ax: Any) -> None:
    """Each pick labelled once, the labels fanned out around their points so that neighbours stay legible."""
    from gpuadvisor import presentation as pres

    names = pres.pick_names(advice)
    offsets = ((50, -45), (-70, 45), (70, 40), (-60, -55), (0, 60))
    labelled = [o for o in pres.shown_options(advice) if id(o) in names and o.fits and o.cost and o.time_s]
    for i, o in enumerate(sorted(labelled, key=lambda o: o.time_s)):
        dx, dy = offsets[i % len(offsets)]
        fig.add_annotation(
            x=math.log10(o.time_s * ax.time_scale),
            y=math.log10(o.cost),
            text=f"<b>{' · '.join(names[id(o)])}</b><br>{escape(pres.short_label(o))}",
            showarrow=True,
            arrowhead=2,
            ax=dx,
            ay=dy,
            font={"size": 11},
            align="left",
            bgcolor="rgba(255,255,255,0.9)",
            bordercolor="#9ca3af",
        )


def _log_ticks(lo: float, hi: float, prefix: str = "") -> dict[str, Any]:
    """Ticks at 1, 2 and 5 times a power of ten (denser when the data spans less than a decade and
    a half), labelled in full: plotly's log axis labels minor ticks with a bare digit, which reads
    as nonsense ("5 6 7 8 9 10 2 3")."""
    if not (lo > 0 and hi > 0):
        return {}
    mantissas = (1, 2, 5) if hi / lo > 30 else (1, 1.5, 2, 3, 5, 7)
    vals = [m * 10.0**e for e in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1)
            for m in mantissas]
    vals = [v for v in vals if lo / 2.5 <= v <= hi * 2.5]
    return {"tickvals": vals, "ticktext": [f"{prefix}{v:,.10g}" for v in vals]}
