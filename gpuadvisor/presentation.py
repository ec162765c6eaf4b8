"""How the TUI and the report show the advisor's decision: which options, in which columns, with
which names and units. Shared so both say the same thing; the figures themselves come from
`gpuadvisor.advisor` (an `Advice`), never recomputed here. No UI imports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpuadvisor.units import duration

# The picks the interfaces show, in this order ("cheapest" is always one of the first two).
PICK_ORDER = ("cheapest_rental", "cheapest_purchase", "fastest_within_budget", "best_value")
PICK_SHORT = {
    "cheapest": "cheapest",
    "cheapest_rental": "cheapest rent",
    "cheapest_purchase": "cheapest buy",
    "fastest_within_budget": "fastest",
    "best_value": "best value",
    "closest": "closest",
}
# The same in a terminal column of 10 characters, one name a line.
PICK_COMPACT = {
    "cheapest": "cheapest",
    "cheapest_rental": "cheap rent",
    "cheapest_purchase": "cheap buy",
    "fastest_within_budget": "fastest",
    "best_value": "value",
    "closest": "closest",
}
_VENDOR_WORDS = ("GeForce ", "Radeon ", "Instinct ", "Jetson ")


def money(usd: float | None, digits: int = 2) -> str:
    """$0.69, $23.92, $1,999; '-' for unknown; '<$0.01' for tiny amounts."""
    if usd is None:
        return "-"
    if 0 < usd < 0.01:
        return "<$0.01"
    return f"${usd:,.0f}" if abs(usd) >= 1000 else f"${usd:,.{digits}f}"


def weight_format(workload: Any) -> str:
    """A quantized workload's weights and compute ("mxfp4 weights (4.25 bits/weight), bf16 compute"): the words
    `estimate`'s header and the report's workload table share."""
    return (f"{workload.quant_format} weights ({workload.quant_bits_per_weight:g} bits/weight), "
            f"{workload.compute_dtype} compute")


def workload_shape(workload: Any, users: int | None = None) -> str:
    """One label for a workload's size, the same in `estimate`, `recommend`, `run`, the report and
    the TUI: a served decoder by its users and prompt + answer tokens (the context each user holds),
    a traced model by its batch, anything else by batch x sequence."""
    if workload.mode == "inference" and workload.model.kind == "decoder" and not workload.model.is_traced:
        n = users if users is not None else workload.batch
        who = f"{n} user{'s' if n != 1 else ''} x " if users is not None else f"batch {workload.batch} x "
        context = workload.seq + workload.gen_tokens
        return f"{who}({workload.seq:,} prompt + {workload.gen_tokens:,} answer tokens = {context:,}-token context)"
    if workload.model.is_traced:
        return f"batch {workload.batch}"
    return f"batch {workload.batch} x {workload.seq:,} tokens"


def short_label(o: Any) -> str:
    """A label that fits a terminal column: '4x H100 SXM5 80GB · runpod', 'buy RTX 4090'.
    The full label (instance type, region) is `o.label`."""
    hardware = o.hardware
    card = hardware.card
    for word in _VENDOR_WORDS:
        card = card.replace(word, "")
    n = f"{hardware.gpus}x {card}" if hardware.gpus > 1 else card
    if hardware.kind == "rent":
        return f"{n} · {hardware.provider}" + (" spot" if hardware.spot else "")
    if hardware.kind == "buy":
        return f"buy {n}"
    return f"your {n}"


def pick_names(advice: Any, *, compact: bool = False) -> dict[int, list[str]]:
    """id(option) -> the short names of the picks it is, in PICK_ORDER."""
    names = PICK_COMPACT if compact else PICK_SHORT
    out: dict[int, list[str]] = {}
    for name in PICK_ORDER:
        p = advice.picks.get(name)
        if p is not None:
            out.setdefault(id(p.option), []).append(names[name])
    if advice.closest is not None:
        out.setdefault(id(advice.closest.option), []).append(names["closest"])
    return out


def shown_options(advice: Any) -> list[Any]:
    """The options worth a row: the frontier, every pick, the closest miss and the local card,
    once each, cheapest first (unknown cost last), then fastest."""
    seen: dict[int, Any] = {}
    picked = [p.option for p in advice.picks.values()]
    extra = [advice.closest.option] if advice.closest is not None else []
    for o in [*advice.frontier, *picked, *extra, *advice.local]:
        seen.setdefault(id(o), o)
    return sorted(
        seen.values(),
        key=lambda o: (o.cost is None, o.cost or 0.0, o.time_s if o.time_s is not None else float("inf"), o.label),
    )


def first_choice(advice: Any) -> Any | None:
    """The option to highlight first: the cheapest pick, else the closest miss, else the cheapest shown."""
    for name in ("cheapest", "best_value"):
        if name in advice.picks:
            return advice.picks[name].option
    if advice.closest is not None:
        return advice.closest.option
    shown = shown_options(advice)
    return shown[0] if shown else None


@dataclass(frozen=True)
class Axes:
    """The frontier's two axes for this workload, with units people read."""

    cost: str  # "$ per hour" | "$ per job"
    time: str  # "ms per output token" | "s per request" | "hours"
    time_scale: float  # multiply Option.time_s by this to get the axis unit


def axes(advice: Any) -> Axes:
    w = advice.workload
    if w.mode == "inference":
        if w.model.kind == "decoder":
            return Axes("$ per hour", "ms per output token (per user)", 1000.0)
        return Axes("$ per hour", "seconds per request", 1.0)
    return Axes("$ per job", "wall time (hours)", 1 / 3600)


def columns(advice: Any, *, compact: bool = False) -> list[str]:
    """Headers of `option_cells` for the mode and model kind of the decision. `compact` (a terminal
    of 80 columns) keeps the frontier's two axes and what binds; the detail line gives the rest."""
    w = advice.workload
    if w.mode == "inference" and w.model.kind == "decoder":
        if compact:
            return ["pick", "option", "$/h", "$/1M", "tok/s", "binds"]
        return ["pick", "option", "$/h", "$/1M tok", "tok/s/user", "first token", "binds", "meets"]
    if w.mode == "inference":
        if compact:
            return ["pick", "option", "$/h", "$/1k", "request", "binds"]
        return ["pick", "option", "$/h", "$/1k req", "per request", "binds", "meets"]
    if compact:
        return ["pick", "option", "job $", "wall time", "binds"]
    return ["pick", "option", "$/h", "job $", "wall time", "binds", "meets"]


def option_cells(advice: Any, o: Any, picks: dict[int, list[str]] | None = None, *, compact: bool = False) -> list[str]:
    """One row of `columns(advice, compact=compact)` for option `o`."""
    picks = pick_names(advice, compact=compact) if picks is None else picks
    w = advice.workload
    pick = ("\n" if compact else ", ").join(picks.get(id(o), []))  # compact: one name a line
    fits = o.fits  # no run time for what does not fit
    nofit = "cannot run" if o.cannot_run else "no fit"
    if w.mode == "inference" and w.model.kind == "decoder":
        speed = "-" if o.per_user_tokens_per_s is None or not fits else f"{o.per_user_tokens_per_s:,.0f}"
        body = [money(o.usd_per_hour), money(o.usd_per_mtok) if fits else "-", speed] + (
            [] if compact else [duration(o.ttft_s) if fits else nofit])
    elif w.mode == "inference":
        body = [money(o.usd_per_hour), money(o.usd_per_1k_requests, 3) if fits else "-",
                duration(o.request_s) if fits else nofit]
    else:
        body = ([] if compact else [money(o.usd_per_hour)]) + [money(o.job_usd) if fits else "-",
                                                               duration(o.wall_s) if fits else nofit]
    if compact:
        return [pick, short_label(o), *body, "link" if o.binds == "interconnect" else o.binds]
    meets = "yes" if o.meets else o.cannot_run or ("no" if not o.misses else "no: " + "; ".join(o.misses))
    return [pick, o.label, *body, o.binds, meets]


def prices_line(advice: Any) -> str:
    """Where the rental prices came from, with the snapshot's date, or why there are none."""
    p = advice.prices
    if p is None:
        return "rental prices: none (no price snapshot in this build): purchases only"
    kind = "spot" if p.spot else "on-demand"
    where = []
    if p.providers:
        where.append(", ".join(p.providers))
    if p.region:
        where.append(p.region)
    filt = f", {' · '.join(where)}" if where else ""
    fresh = f"; {p.freshness}" if getattr(p, "freshness", "") else ""
    aside = len(getattr(p, "set_aside", ()))
    held = f", {aside} set aside (suspect prices)" if aside else ""
    return f"rental prices: {p.source} ({p.offers:,} offers, {kind}{filt}{held}){fresh}"


def summary_line(advice: Any) -> str:
    """How many options, how many meet the targets, how many are on the frontier."""
    opts = [o for o in advice.options if o.hardware.kind != "local"]
    meets = sum(o.meets for o in opts)
    return f"{meets}/{len(opts)} options meet targets · frontier: {len(advice.frontier)}"


__all__ = [
    "PICK_COMPACT",
    "PICK_ORDER",
    "PICK_SHORT",
    "Axes",
    "axes",
    "columns",
    "first_choice",
    "money",
    "option_cells",
    "pick_names",
    "prices_line",
    "short_label",
    "shown_options",
    "summary_line",
]
