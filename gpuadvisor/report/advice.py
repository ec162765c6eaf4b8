"""The workload half of the report: memory breakdown and ranking, computed by the core
(estimate, recommend) and shaped here into rows and chart points. Shared with the TUI."""

from __future__ import annotations

from typing import Any

from gpuadvisor.units import duration

GiB = 2**30


def model_rows(workload: Any) -> list[tuple[str, str]]:
    w = workload
    m = w.model
    rows = [
        ("model", m.name),
        (
            "parameters",
            _params(m.num_params)
            + (f" ({_params(m.active_params)} active)" if m.active_params != m.num_params else ""),
        ),
        ("mode", w.mode),
        ("precision", f"{w.dtype} (weights {w.weight_dtype}, compute {w.compute_dtype})" if w.is_training else w.dtype),
        ("batch × sequence", f"{w.batch} × {w.seq}"),
        ("GPUs", f"{w.num_gpus}" + (f" (tensor parallel {w.tensor_parallel})" if w.tensor_parallel > 1 else "")),
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


def rank(workload: Any, catalog: Any, **kw: Any) -> list[Any]:
    """One option per card, as `gpuadvisor recommend` shows them (keyword arguments pass through
    to advisor.ranking.recommend: gpu_counts, price_per_hour, measured, sort_by)."""
    from gpuadvisor.advisor.ranking import one_per_card, recommend

    return one_per_card(recommend(workload, catalog, **kw))


def option_fields(opt: Any, catalog: Any = None) -> dict[str, Any]:
    """The fields the interfaces show for one recommend.Option."""
    n = opt.num_gpus
    label = f"{n}× {opt.card}" if n > 1 else opt.card
    note = opt.reason
    if opt.uses_measured:
        note = f"{note}; uses this machine's measured figures" if note else "uses this machine's measured figures"
    return {
        "card": opt.card,
        "num_gpus": n,
        "label": label,
        "fits": opt.fits,
        "memory_gib": opt.needed_gib,
        "capacity_gib": opt.memory_gib_per_gpu,
        "time_s": opt.time_s,
        "cost": opt.cost_usd,
        "cost_basis": opt.cost_basis,
        "note": note,
        "memory": opt.memory,
        "measured": opt.uses_measured,
    }


def workload_view(workload: Any, catalog: Any, *, top: int = 12, **recommend_kw: Any) -> dict[str, Any]:
    """Everything the report template shows about a workload."""
    from gpuadvisor.estimate import estimate_memory

    view: dict[str, Any] = {
        "name": workload.model.name,
        "rows": model_rows(workload),
        "notes": [],
        "options": [],
        "option_headers": ["#", "option", "needs / GPU", "fits", "time", "cost"],
        "points": [],
        "error": None,
        "capacity_gib": None,
    }
    breakdown = estimate_memory(workload)
    options = [option_fields(o) for o in rank(workload, catalog, **recommend_kw)]
    best = next((o for o in options if o["fits"]), options[0] if options else None)
    if best is not None:
        breakdown = best["memory"]
    view["memory_parts"] = memory_parts(breakdown)
    view["memory"] = [(k, f"{v:,.2f}") for k, v in view["memory_parts"]]
    view["memory_total"] = f"{breakdown.total / GiB:,.2f}"
    view["capacity_gib"] = best["capacity_gib"] if best else None
    n = best["num_gpus"] if best else workload.num_gpus
    per = f" per GPU ({n} GPUs)" if n > 1 else ""
    on = f" on {best['label']}, the top option" if best else ""
    view["memory_title"] = f"Memory{per}: {breakdown.total / GiB:,.1f} GiB at the {breakdown.phase} peak{on}"
    view["notes"] = [*breakdown.notes, "Estimates, not measurements: validate on the card (see BENCHMARKS.md)."]
    for i, o in enumerate(options[:top], start=1):
        view["options"].append(
            [
                str(i),
                o["label"],
                f"{o['memory_gib']:,.1f} GiB" if o["memory_gib"] is not None else "-",
                "yes" if o["fits"] else "no",
                duration(o["time_s"]),
                money(o["cost"], o["cost_basis"]),
            ]
        )
        view["points"].append(
            {
                "label": o["label"],
                "time_s": o["time_s"],
                "cost": o["cost"],
                "fits": o["fits"],
                "rank": i,
                "detail": o["note"],
            }
        )
    return view


def money(cost: float | None, basis: str = "") -> str:
    if cost is None:
        return "-"
    text = "<$0.01" if cost < 0.01 else f"${cost:,.2f}" if cost < 1000 else f"${cost:,.0f}"
    return f"{text} to buy" if basis == "purchase" else text


def _params(n: float) -> str:
    for unit, div in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= div:
            return f"{n / div:.3g}{unit}"
    return f"{n:.0f}"


