"""From options to decisions: the cost-versus-time Pareto frontier, named picks, the closest miss
and what it would take, and buy versus rent. Pure functions over `options.Option`.

* cheapest: the lowest cost that meets every target (serving: $/hour of the deployment, bought
  hardware amortised; training: $ of the job). Also named per kind: cheapest rental, cheapest
  purchase.
* fastest within budget: the shortest time (serving: time per output token; training: wall
  time) among the priced options that meet every target, budgets included; named only when a
  budget is set (without one it would name the fastest flagship there is, a ranking by speed).
* best value: among the frontier options that meet every target, the lowest cost x time.
* cheapest single GPU: named too when the cheapest rental spreads the model over several GPUs.
* buy versus rent: break-even hours = purchase price / (rental $/h - electricity $/h) against
  the cheapest rental that meets every target, for the purchase that pays back soonest; for
  training the rental's $/h is the cost of renting one hour of the purchased hardware's work.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from gpuadvisor.advisor.options import Option
from gpuadvisor.advisor.targets import Targets
from gpuadvisor.units import duration

PICK_TITLES = {
    "cheapest": "cheapest that meets every target",
    "cheapest_rental": "cheapest rental",
    "cheapest_purchase": "cheapest to buy",
    "cheapest_single_gpu": "cheapest rental on one GPU",
    "fastest_within_budget": "fastest within budget",
    "best_value": "best value (lowest cost x time on the frontier)",
    "closest": "closest (nothing meets every target)",
}


@dataclass(frozen=True)
class Pick:
    """A named choice and one line on it: what it costs, how fast, what binds."""

    name: str
    title: str
    option: Option
    line: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title, "line": self.line, "option": self.option.to_dict()}


@dataclass(frozen=True)
class BreakEven:
    """Buy `purchase` versus rent `rental`: hours of use after which buying is cheaper."""

    purchase: Option
    rental: Option
    rental_usd_h: float  # the rental's $/h for the purchased hardware's hour of use
    electricity_usd_h: float
    hours: float | None  # None: renting is never dearer than the electricity of owning
    months: float | None  # at the targets' hours of use per month
    verdict: str  # "buy" (pays back within half the hardware's life) | "close" (within its life) | "rent"
    line: str

    def to_dict(self) -> dict[str, Any]:
        return {"purchase": self.purchase.label, "purchase_usd": self.purchase.hardware.purchase_usd,
                "rental": self.rental.label, "rental_usd_h": self.rental_usd_h,
                "electricity_usd_h": self.electricity_usd_h, "break_even_hours": self.hours,
                "break_even_months": self.months, "verdict": self.verdict, "line": self.line}


def frontier(options: list[Option]) -> list[Option]:
    """The Pareto set of fitting options over (cost, time): none is both cheaper and faster.
    Sorted by cost; ties in both keep the first (options arrive in a stable order)."""
    pts = [o for o in options if o.fits and o.cost is not None and o.time_s is not None
           and o.hardware.kind != "local"]
    pts.sort(key=lambda o: (o.cost, o.time_s, o.label))
    out: list[Option] = []
    best_t = math.inf
    for o in pts:
        if o.time_s < best_t:  # type: ignore[operator]
            out.append(o)
            best_t = o.time_s  # type: ignore[assignment]
    return out


def _cheapest(opts: list[Option]) -> Option | None:
    """Lowest cost, then fastest. Options with no known price come last, the least hardware
    (memory x GPUs) first among them: the best guess at cheapest without a price."""
    def key(o: Option) -> tuple:
        if o.cost is None:
            return (1, (o.memory_gib_per_gpu or math.inf) * o.hardware.gpus, o.time_s or math.inf, o.label)
        return (0, o.cost, o.time_s or math.inf, o.label)

    return min(opts, key=key, default=None)


def describe(o: Option) -> str:
    """One line: price, speed, what binds."""
    hardware = o.hardware
    if hardware.kind == "rent":
        price = f"${o.usd_per_hour:,.2f}/h"
    elif hardware.kind == "buy" and hardware.purchase_usd is None:
        price = "price unknown (none in the catalog)"
    elif hardware.kind == "buy":
        price = f"${hardware.purchase_usd:,.0f} to buy ({hardware.purchase_kind} price)" + (
            f", ~${o.usd_per_hour:,.2f}/h amortised with power" if o.serving and o.usd_per_hour else "")
    else:
        price = f"electricity ~${o.usd_per_hour:,.2f}/h" if o.usd_per_hour is not None else "owned"
    if o.cannot_run:
        return f"{o.label}: {price}; {o.cannot_run}."
    if not o.fits:  # no run time for what does not fit
        return " ".join([o.label + ":", price + ";", f"does not fit ({o.binds_note or o.binds})."]) + "".join(
            f" Note: {n}." for n in o.notes)
    if o.serving:
        if o.per_user_tokens_per_s is not None:
            speed = (f"{o.per_user_tokens_per_s:,.0f} tok/s per user, first token {duration(o.ttft_s)}, "
                     f"{o.layout}")
            cost = f"${o.usd_per_mtok:,.2f} per 1M tokens" if o.usd_per_mtok is not None else ""
            if cost and o.usd_per_mtok_at_capacity is not None:
                cost += f" (${o.usd_per_mtok_at_capacity:,.2f} at full load)"
        else:
            speed = f"{duration(o.request_s)} per request, {o.layout}"
            cost = f"${o.usd_per_1k_requests:,.3f} per 1k requests" if o.usd_per_1k_requests is not None else ""
    else:
        speed = f"{duration(o.wall_s)} wall time, {o.layout}"
        cost = f"job ${o.job_usd:,.2f}" if o.job_usd is not None else ""
        if hardware.kind == "buy":
            cost += " (the hardware remains)"
    parts = [o.label + ":", price + ";", speed + (";" if cost else "."), (cost + "." if cost else "")]
    extra = "".join(f" Note: {n}." for n in o.notes)
    return " ".join(p for p in parts if p) + f" Binds: {o.binds_note or o.binds}." + extra


def make_picks(options: list[Option], targets: Targets) -> dict[str, Pick]:
    """The named picks among the options that meet every target (see the module docstring)."""
    meets = [o for o in options if o.meets and o.hardware.kind != "local"]
    picks: dict[str, Pick] = {}

    def add(name: str, o: Option | None, extra: str = "") -> None:
        if o is not None:
            picks[name] = Pick(name, PICK_TITLES[name], o, describe(o) + extra)

    add("cheapest", _cheapest(meets))
    add("cheapest_rental", _cheapest([o for o in meets if o.hardware.kind == "rent"]))
    add("cheapest_purchase", _cheapest([o for o in meets if o.hardware.kind == "buy"]))
    rent = picks.get("cheapest_rental")
    if rent is not None and rent.option.serving and rent.option.hardware.gpus > 1:  # one GPU is simpler to serve on
        add("cheapest_single_gpu", _cheapest([o for o in meets if o.hardware.kind == "rent" and o.hardware.gpus == 1]))
    # "fastest within budget" needs a budget: without one, the fastest option is whatever flagship
    # server there is, which is a ranking by speed, not advice (the frontier still shows it).
    if targets.any_budget:
        priced = [o for o in meets if o.cost is not None]  # a budget cannot vouch for an unknown price
        add("fastest_within_budget", min(priced, key=lambda o: (o.time_s if o.time_s is not None else math.inf,
                                                                o.cost or 0.0, o.label), default=None))
    front = [o for o in frontier(options) if o.meets]
    add("best_value", min(front, key=lambda o: (o.cost * o.time_s, o.label), default=None))  # type: ignore[operator]
    return picks


def closest_miss(options: list[Option], targets: Targets) -> tuple[Pick, str] | None:
    """When nothing meets every target: the option that comes closest, and what it would take."""
    runnable = [o for o in options if not o.cannot_run]  # what the support matrix rules out is never a pick
    cands = [o for o in runnable if o.hardware.kind != "local" and math.isfinite(o.shortfall)]
    if not cands:
        cands = [o for o in runnable if o.hardware.kind != "local"]
        if not cands:
            return None
        o = max(cands, key=lambda o: (o.memory_gib_per_gpu or 0) * o.hardware.gpus)
    else:
        o = min(cands, key=lambda o: (o.shortfall, o.cost if o.cost is not None else math.inf, o.label))
    pick = Pick("closest", PICK_TITLES["closest"], o, describe(o) + " Misses: " + "; ".join(o.misses) + ".")
    return pick, what_it_would_take(o, targets)


def what_it_would_take(o: Option, t: Targets) -> str:
    """One line on the change that would make the closest option meet the targets."""
    r = o.shortfall
    if not o.fits:
        if not o.serving:
            return (f"more memory: needs {o.needed_gib_per_gpu:,.1f} GiB per GPU; use activation checkpointing "
                    "(--checkpointing), a smaller --batch, more GPUs (ZeRO-3), or a card with more memory")
        if o.max_users:
            return (f"more KV cache room: {o.hardware.gpus * 2} GPUs of this card, fewer users per replica, "
                    "a shorter context or an fp8 KV cache")
        return (f"more memory: needs {o.needed_gib_per_gpu:,.1f} GiB per GPU; use more GPUs (tensor parallel), "
                "int8/int4 weights, or a card with more memory")
    m = o.misses[0] if o.misses else ""
    if "tok/s per user" in m:
        return (f"{r:.1f}x the per-user speed: a card with {r:.1f}x the memory bandwidth, tensor parallel over more "
                "GPUs, or int8/int4 weights (fewer bytes per token)")
    if "first token" in m:
        return f"{r:.1f}x faster prefill: more compute (TFLOP/s), tensor parallel, or shorter prompts"
    if "deadline" in m:
        n = math.ceil(o.hardware.gpus * r)
        return (f"{r:.1f}x the throughput: about {n} GPUs of this card, a faster card, or a deadline of "
                f"{(o.wall_s or 0) / 3600:,.0f} h")
    if "budget" in m:
        return f"{r:.1f}x the budget, or slower targets"
    return f"{r:.1f}x better on the missed target"


def buy_vs_rent(options: list[Option], targets: Targets) -> BreakEven | None:
    """Break-even of the cheapest purchase that meets every target (the "cheapest to buy" pick)
    against the cheapest rental that does, judged against the hours the user will really use the
    hardware (`Targets.planned_hours`: the amortisation period for serving, one job for training,
    or --use-hours / --use-months). Training: the rental's $/h is its job cost over the purchase's
    wall time, the cost of renting one hour of the purchased hardware's work."""
    meets = [o for o in options if o.meets and o.hardware.kind != "local"]
    buy = _cheapest([o for o in meets if o.hardware.kind == "buy" and o.hardware.purchase_usd])
    rent = _cheapest([o for o in meets if o.hardware.kind == "rent" and o.usd_per_hour])
    if buy is None or rent is None:
        return None
    return _break_even(buy, rent, targets)


def _break_even(buy: Option, rent: Option, targets: Targets) -> BreakEven:
    rent_h = float(rent.usd_per_hour)  # type: ignore[arg-type]
    scaled = ""
    if not buy.serving and buy.wall_s and rent.job_usd is not None:
        rent_h = rent.job_usd / (buy.wall_s / 3600.0)
        scaled = (f" (renting does the job for ${rent.job_usd:,.2f}; {buy.label[4:]} takes "
                  f"{duration(buy.wall_s)}, so its hour of work rents for ${rent_h:,.2f})")
    elec = buy.electricity_usd_h
    price = buy.hardware.purchase_usd or 0.0
    plan_h, plan = targets.planned_hours(buy.serving, (buy.wall_s or 0) / 3600.0 or None)
    if rent_h <= elec:
        hours = months = None
        verdict = "rent"
        line = (f"rent: {rent.label} costs ${rent_h:,.2f}/h for this work, less than the "
                f"${elec:,.2f}/h of electricity to run {buy.label[4:]}{scaled}")
    else:
        hours = price / (rent_h - elec)
        months = hours / targets.hours_per_month
        # pays back within half the planned use: buy; not within it: not worth buying; in between: close
        verdict = "close" if plan_h is None else "buy" if hours <= plan_h / 2 else "rent" if hours > plan_h else "close"
        word = {"buy": "buy", "rent": "rent, not worth buying",
                "close": "close call, buying pays back late in the planned use"}
        line = (f"{word[verdict]}: {buy.label} (${price:,.0f}) breaks even with renting {rent.label} after "
                f"{hours:,.0f} h of use (${price:,.0f} / (${rent_h:,.2f}/h rent - ${elec:,.2f}/h electricity))"
                f"{scaled}; planned use: {plan}")
        if verdict == "rent" and plan_h is not None:
            line += f", {plan_h:,.0f} h, so renting costs ${rent_h * plan_h:,.2f} in all"
    return BreakEven(buy, rent, rent_h, elec, hours, months, verdict, line)


__all__ = ["PICK_TITLES", "BreakEven", "Pick", "buy_vs_rent", "closest_miss", "describe", "frontier", "make_picks",
           "what_it_would_take"]
