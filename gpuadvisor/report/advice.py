"""The workload half of the report: the workload, its memory breakdown, and the advisor's decision
(targets, prices with their source and date, picks, buy versus rent, the frontier), shaped into
rows for the template. Figures come from `gpuadvisor.advisor` (an `Advice`); the wording of rows
and columns is shared with the TUI through `gpuadvisor.presentation`."""

from __future__ import annotations

from typing import Any

from gpuadvisor import presentation as pres
from gpuadvisor.modelspec import params_text

GiB = 2**30


def model_rows(workload: Any, users: int | None = None) -> list[tuple[str, str]]:
    w = workload
    m = w.model
    rows = [
        ("model", m.name),
        (
            "parameters",
            params_text(m.num_params)
            + (f" ({params_text(m.active_params)} active)" if m.active_params != m.num_params else ""),
        ),
        ("mode", w.mode),
        ("precision", f"{w.dtype} (weights {w.weight_dtype}, compute {w.compute_dtype})" if w.is_training
         else pres.weight_format(w) if w.quant_format != "none" else w.dtype),
        ("size", pres.workload_shape(w, users)),
    ]
    if w.is_training:
        rows.append(("optimizer", w.optimizer + (", activation checkpointing" if w.checkpointing else "")))
        if w.sharding != "none":
            rows.append(("sharding", w.sharding))
    if m.source:
        rows.append(("architecture from", m.source))
    return rows


def memory_parts(breakdown: Any) -> list[tuple[str, float]]:
    """(label, GiB) of the non-zero items of a MemoryBreakdown, in its order."""
    return [(k, v / GiB) for k, v in breakdown.items if v > 0]


def workload_view(advice: Any) -> dict[str, Any]:
    """Everything the template shows about a workload and the decision for it. The memory is the
    first pick's per GPU, in its layout with every user's KV cache (the figures `estimate` and
    `recommend` give that option); the bare workload on one GPU only when nothing was evaluated."""
    from gpuadvisor.estimate import estimate_memory

    w = advice.workload
    breakdown = estimate_memory(w)
    first = pres.first_choice(advice)
    users = advice.targets.users if w.mode == "inference" else None
    if first is not None and first.memory_parts:
        parts = list(first.memory_parts)
        total = sum(v for _, v in parts)
        # two lines: an option's label and layout run past the chart's width on one (Plotly's <br>)
        title = (f"Memory per GPU of the first pick: {total:,.1f} GiB of {first.memory_gib_per_gpu or 0:,.0f}<br>"
                 f"<span style='font-size:12px'>{first.label} ({first.layout})</span>")
        cap = first.memory_gib_per_gpu
    else:
        parts = memory_parts(breakdown)
        total = breakdown.total / GiB
        title = f"Memory on one GPU: {total:,.1f} GiB at the {breakdown.phase} peak"
        cap = None
    return {
        "name": w.model.name,
        "rows": model_rows(w, users),
        "memory_parts": parts,
        "memory": [(k, f"{v:,.2f}") for k, v in parts],
        "memory_total": f"{total:,.2f}",
        "memory_title": title,
        "capacity_gib": cap,
        "notes": [*breakdown.notes, "Estimates, not measurements: validate on the card (see BENCHMARKS.md)."],
        "decision": decision_view(advice),
    }


def decision_view(advice: Any) -> dict[str, Any]:
    """The decision: targets, the price snapshot's source and date, picks, buy or rent, frontier."""
    w = advice.workload
    picks = []
    for name in pres.PICK_ORDER:
        p = advice.picks.get(name)
        if p is not None:
            picks.append({"title": p.title, "label": p.option.label, "line": p.line, "binds": p.option.binds})
    shown = pres.shown_options(advice)
    names = pres.pick_names(advice)
    return {
        "targets": advice.targets.describe(w.mode, w.model.kind == "decoder"),
        "prices": pres.prices_line(advice),
        "summary": pres.summary_line(advice),
        "met": advice.met,
        "picks": picks,
        "buy_vs_rent": advice.buy_vs_rent.line if advice.buy_vs_rent else None,
        "local": advice.local_line(),
        "closest": advice.closest.line if advice.closest else None,
        "what_it_would_take": advice.what_it_would_take,
        "headers": pres.columns(advice),
        "rows": [pres.option_cells(advice, o, names) for o in shown],
        "notes": list(advice.notes),
    }


