"""The HTML report: one self-contained file (Plotly JS inlined once, no network) from probe
results and/or a workload. Numbers come from the core (results, readings, compare, estimate, the advisor);
this package only arranges them, builds the Plotly figures and renders one Jinja2 template through
gpuadvisor.htmlpage (the page, styles and charts it shares with the fleet report; autoescape on, so
user text, model names and device names, is always shown as text).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpuadvisor.compare import FigureRow, device_card, figure_rows, local_cards
from gpuadvisor.core.results import DeviceResult, GpuState, RunResult
from gpuadvisor.htmlpage import Charts, render_page
from gpuadvisor.readings import device_memory_gib, ecc_errors, other_processes, pcie_link

TEMPLATE = "report.html.j2"


def build_report(
    run: RunResult | None,
    workload: Any | None,
    catalog: Any,
    *,
    title: str | None = None,
    advice: Any | None = None,
) -> str:
    """Render the report as one HTML string.

    With a workload, the decision comes from the advisor: `advice` (an advisor.Advice, e.g. from
    `gpuadvisor.api.advise` with the user's targets and price filters), else the advisor's
    default targets with the shipped price snapshot; probe results, when given, replace the local
    card's datasheet figures and place that card beside the picks.
    """
    from gpuadvisor.report import figures

    charts = Charts()
    add = charts.add
    run_view = _run_view(run, catalog, add, figures) if run is not None else None
    from gpuadvisor.report.interconnect import node_view

    node = node_view(run, add) if run is not None else None
    crossover_charts: list[str] = []
    crossover_source = ""
    if run is not None:
        probe, crossover_source = _crossover_probe(run)
        crossover_charts = [c for c in (add(f) for f in figures.crossover(probe)) if c]
    wl_view = None
    if workload is not None:
        if advice is None:
            advice = _default_advice(run, workload, catalog)
        wl_view = workload_view(advice)
        wl_view["chart_memory"] = add(
            figures.memory_breakdown(wl_view["memory_parts"], wl_view["capacity_gib"], wl_view["memory_title"])
        )
        wl_view["chart_frontier"] = add(figures.frontier(advice))
    if title is None:
        parts = []
        if wl_view:
            parts.append(str(wl_view["name"]))
        if run is not None and run.devices:
            parts.append(run.devices[0].name)
        title = "gpuadvisor report" + (f": {' on '.join(parts)}" if parts else "")

    return render_page(
        Path(__file__).parent,
        TEMPLATE,
        title=title,
        charts=charts,
        run=run_view,
        workload=wl_view,
        node=node,
        crossover_charts=crossover_charts,
        crossover_source=crossover_source,
    )


def _default_advice(run: RunResult | None, workload: Any, catalog: Any) -> Any:
    """The advisor's decision with its default targets; this machine's cards beside the picks."""
    from gpuadvisor import api

    measured = run if run is not None and run.devices else None
    return api.advise(workload, catalog=catalog, measured=measured, local_cards=local_cards(run, catalog))


# --------------------------------------------------------------------------- probe results


def _n(v: float | None, digits: int = 1, unit: str = "") -> str:
    if v is None:
        return "-"
    if abs(v) >= 100:
        text = f"{v:,.0f}"
    elif abs(v) >= 10:
        text = f"{v:,.{min(digits, 1)}f}"
    else:
        text = f"{v:,.{max(digits, 2)}f}".rstrip("0").rstrip(".") if v else "0"
    return f"{text} {unit}".rstrip()


LARGE_SPREAD = 0.2  # (max-min)/median above this: the figure is shown with its range and flagged


def _spread(spread: float | None) -> str:
    """A measurement's spread as people read it: ±half the range; a large one says so."""
    if spread is None:
        return ""
    text = f"±{100 * spread / 2:.0f}%"
    return text + " (noisy: repeat it)" if spread > LARGE_SPREAD else text


def _figure_view(f: FigureRow) -> dict[str, str]:
    pct = f.pct
    ref = ""
    if f.reference:
        ratio = f" ({f.value / f.reference:.2f}×)" if f.value else ""
        ref = f"{f.reference_label or 'reference'}: {_n(f.reference, 1, f.unit)}{ratio}"
    return {
        "key": f.key,
        "label": f.label,
        "value": _n(f.value, 1, f.unit) if f.value is not None else "no value",
        "spread": _spread(f.spread) if f.spread is None or f.spread > LARGE_SPREAD else f"±{100 * f.spread / 2:.1f}%",
        "datasheet": _n(f.datasheet, 1, f.unit) if f.datasheet else "",
        "pct": f"{pct:.1f}%" if pct is not None else "",
        "pct_class": "" if pct is None else "ok" if pct >= 85 else "warn" if pct >= 60 else "bad",
        "reference": ref,
        "source": f.datasheet_source or "",
    }


def _state_rows(before: GpuState | None, after: GpuState | None) -> list[tuple[str, str, str]]:
    def get(s: GpuState | None, attr: str, unit: str = "") -> str:
        if s is None:
            return "-"
        v = getattr(s, attr)
        if v is None:
            return "-"
        if isinstance(v, list):
            if attr == "other_processes":
                return ", ".join(f"{p.get('name') or 'pid'} ({p.get('pid')})" for p in v) or "none"
            return ", ".join(v) or "none"
        return _n(float(v), 0, unit)

    return [
        ("SM clock", get(before, "sm_clock_mhz", "MHz"), get(after, "sm_clock_mhz", "MHz")),
        ("memory clock", get(before, "mem_clock_mhz", "MHz"), get(after, "mem_clock_mhz", "MHz")),
        ("temperature", get(before, "temperature_c", "°C"), get(after, "temperature_c", "°C")),
        ("power", get(before, "power_w", "W"), get(after, "power_w", "W")),
        ("power limit", get(before, "power_limit_w", "W"), get(after, "power_limit_w", "W")),
        ("PCIe", _link(before), _link(after)),
        ("clock events", get(before, "throttle_reasons"), get(after, "throttle_reasons")),
        ("other processes", get(before, "other_processes"), get(after, "other_processes")),
    ]


def _link(s: GpuState | None) -> str:
    if s is None or s.pcie_gen is None:
        return "-"
    return f"gen{s.pcie_gen} x{s.pcie_width or '?'}"


def _device_view(dev: DeviceResult, catalog: Any, add: Any, figures: Any) -> dict[str, Any]:
    mem = device_memory_gib(dev)
    card = device_card(dev, catalog)
    p = dev.properties
    gen, width, max_gen, max_width = pcie_link(dev)
    pcie = "-" if gen is None else f"gen{gen} x{width}" + (f" (max gen{max_gen} x{max_width})" if max_gen else "")
    ecc_on = p.get("ecc_enabled")
    unc = ecc_errors(dev, "uncorrected")
    rows = [
        ("catalog card", card.name if card else "not in the catalog"),
        ("memory", _n(mem, 1, "GiB")),
        ("compute capability", str(p.get("compute_capability") or "-")),
        ("SMs", str(p.get("multiprocessor_count") or p.get("sm_count") or "-")),
        ("max SM clock", _n(p.get("sm_clock_max_mhz"), 0, "MHz")),
        ("memory bus", f"{p['memory_bus_width_bits']}-bit" if p.get("memory_bus_width_bits") else "-"),
        ("PCIe link", pcie),
        (
            "ECC",
            "-"
            if ecc_on is None
            else ("on" if ecc_on else "off") + (f", {unc} uncorrected errors" if unc is not None else ""),
        ),
        ("UUID", dev.uuid or "-"),
    ]
    problems = list(dev.flags)
    for proc in other_processes(dev):
        text = f"other process: {proc.get('name') or 'pid'} ({proc.get('pid')})"
        if not any(str(proc.get("pid")) in f for f in problems):
            problems.append(text)
    frows = figure_rows(dev, card, prefixes=("memory.", "transfer.", "fp32.", "fp64.", "tensor."))
    others = [f for f in figure_rows(dev, card) if f not in frows and not f.key.startswith("crossover.")]
    probe_notes = [
        f"{pr.probe} probe {pr.status}" + (f": {pr.reason}" if pr.reason else "")
        for pr in dev.probes
        if pr.status != "ok"
    ]
    return {
        "index": dev.index,
        "name": dev.name,
        "card_name": card.name if card else None,
        "memory": _n(mem, 1, "GiB"),
        "pcie": pcie,
        "flags": problems,
        "problems": problems,
        "rows": rows,
        "state_rows": _state_rows(dev.state_before, dev.state_after),
        "figures": [_figure_view(f) for f in frows + others],
        "probe_notes": probe_notes,
        "chart_bars": add(figures.measured_vs_datasheet(frows, "Measured as % of datasheet")),
        "chart_roofline": add(figures.roofline(dev, card.memory_bandwidth_gbs if card else None)),
        "chart_transfer": add(figures.transfer_sweep(dev.probe("transfer"))),
    }


def _run_view(run: RunResult, catalog: Any, add: Any, figures: Any) -> dict[str, Any]:
    h = run.host
    host_rows = [
        ("host", h.hostname),
        ("OS", h.os),
        ("CPU", f"{h.cpu}" + (f" ({h.cpu_count} threads)" if h.cpu_count else "")),
        ("memory", _n(h.memory_gib, 1, "GiB")),
        ("Python / NumPy", f"{h.python} / {h.numpy or '-'}"),
        (
            "driver / CUDA",
            f"{h.driver_version or '-'} / driver {h.cuda_driver_version or '-'}, "
            f"runtime {h.cuda_runtime_version or '-'}",
        ),
        ("CuPy / PyTorch", f"{h.cupy_version or '-'} / {h.torch_version or '-'}"),
    ]
    host_figures = [
        {"label": m.label, "value": _n(m.value, 1, m.unit) if m.value is not None else "no value",
         "spread": _spread(m.spread), "noisy": m.spread is not None and m.spread > LARGE_SPREAD}
        for p in run.host_probes
        for m in p.measurements
        if not m.key.startswith("crossover.")
    ]
    return {
        "created_at": run.created_at,
        "host": h.hostname,
        "mode": run.mode,
        "complete": run.complete,
        "message": run.message,
        "host_rows": host_rows,
        "host_figures": host_figures,
        "devices": [_device_view(d, catalog, add, figures) for d in run.devices],
    }


def _crossover_probe(run: RunResult) -> tuple[Any, str]:
    for dev in run.devices:
        p = dev.probe("crossover")
        if p is not None and p.data:
            return p, f"GPU {dev.index} ({dev.name})"
    p = run.host_probe("crossover")
    if p is not None and p.data:
        return p, "host only"
    return None, ""


# --------------------------------------------------------------------------- workload


def workload_view(advice: Any) -> dict[str, Any]:
    """What the template and the charts need about a workload and the advisor's decision for it."""
    from gpuadvisor.report import advice as view

    return view.workload_view(advice)
