"""One call from a workload, targets and prices to a decision: options, frontier, picks, closest
miss, buy versus rent, and the local card beside them. Interfaces render `Advice`; they never
recompute costs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpuadvisor.advisor.options import PRICE_BASES, Option, build_options, not_for_sale
from gpuadvisor.advisor.picks import BreakEven, Pick, buy_vs_rent, closest_miss, frontier, make_picks
from gpuadvisor.advisor.targets import Targets
from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate import DEFAULT_ENGINE, Efficiency
from gpuadvisor.workload import Workload


@dataclass(frozen=True)
class PriceInfo:
    """Where the rental prices came from (shown next to every decision)."""

    source: str
    offers: int
    spot: bool = False
    providers: tuple[str, ...] = ()
    region: str | None = None
    currency: str = "USD"
    freshness: str = ""  # 'prices as of 2026-11-24 (read; ...), 3 days old' (prices.model.Freshness.line)
    age_days: int | None = None
    stale_warning: str | None = None  # past prices.model.STALE_DAYS
    set_aside: tuple[str, ...] = ()  # suspect-price offers, not evaluated: 'gcp a3-highgpu-8g (8x H100 ...): flag'
    set_aside_kinds: tuple[tuple[str, int], ...] = ()  # (flag kind, offers)

    def set_aside_line(self) -> str | None:
        """'11 rental offers with suspect prices set aside, not evaluated (uniform low price 10, ...):
        gcp a4-highgpu-8g, ... and 7 more (`gpuadvisor prices list` shows each with its flags)'."""
        if not self.set_aside:
            return None
        kinds = ", ".join(f"{k} {n}" for k, n in self.set_aside_kinds)
        names = [entry.split(" (", 1)[0] for entry in self.set_aside]
        shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        n = len(names)
        return (f"{n} rental offer{'s' if n != 1 else ''} with suspect prices set aside, not evaluated ({kinds}): "
                f"{shown} (`gpuadvisor prices list` shows each with its flags)")

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["set_aside"] = list(self.set_aside)
        d["set_aside_kinds"] = dict(self.set_aside_kinds)
        return d


@dataclass(frozen=True)
class Advice:
    """Everything a decision needs; every figure is an estimate."""

    workload: Workload
    targets: Targets
    options: list[Option]
    frontier: list[Option]
    picks: dict[str, Pick]
    buy_vs_rent: BreakEven | None
    closest: Pick | None
    what_it_would_take: str | None
    local: list[Option]
    prices: PriceInfo | None
    engine: str
    notes: tuple[str, ...] = field(default=())
    price_basis: str = "new"  # purchase prices: "new" (list) or "street" (dated street/used)

    @property
    def met(self) -> bool:
        return bool(self.picks)

    def local_line(self) -> str | None:
        """'your RTX 4090 does this at X tok/s; an L40S rents for $Y per million tokens'."""
        if not self.local:
            return None
        lo = self.local[0]
        ref = self.picks.get("cheapest_rental")
        if lo.serving:
            if lo.per_user_tokens_per_s is None:
                mine = (f"takes {lo.request_s or 0:.3g} s per request" if lo.fits
                        else f"cannot run this ({lo.binds_note})")
            else:
                mine = (f"does this at {lo.per_user_tokens_per_s:,.0f} tok/s per user" if lo.fits
                        else f"cannot run this ({lo.binds_note})")
            known = ref is not None and ref.option.usd_per_mtok is not None
            other = (f"; the cheapest rental that meets the targets, {ref.option.label}, costs "
                     f"${ref.option.usd_per_mtok:,.2f} per million tokens" if ref is not None and known else "")
        else:
            mine = (f"does this in {(lo.wall_s or 0) / 3600:,.1f} h" if lo.fits and lo.wall_s
                    else ("fits" if lo.fits else f"cannot run this ({lo.binds_note})"))
            other = (f"; {ref.option.label} does it in {(ref.option.wall_s or 0) / 3600:,.1f} h for "
                     f"${ref.option.job_usd:,.2f}" if ref and ref.option.job_usd is not None else "")
        meas = " (measured figures)" if lo.uses_measured else ""
        hardware = lo.hardware
        mine_card = f"{hardware.gpus}x {hardware.card}" if hardware.gpus > 1 else hardware.card
        return f"your {mine_card}{meas} {mine}{other}"

    def to_dict(self, *, all_options: bool = False) -> dict[str, Any]:
        return {
            "schema": "gpuadvisor.advice/1",
            "workload": self.workload.to_dict(),
            "model": self.workload.model.to_dict(),
            "targets": self.targets.to_dict(),
            "engine": self.engine if self.workload.mode == "inference" and self.workload.model.kind == "decoder"
            else None,
            "prices": self.prices.to_dict() if self.prices else None,
            "price_basis": self.price_basis,
            "met": self.met,
            "picks": {k: p.to_dict() for k, p in self.picks.items()},
            "frontier": [o.to_dict() for o in self.frontier],
            "buy_vs_rent": self.buy_vs_rent.to_dict() if self.buy_vs_rent else None,
            "closest": self.closest.to_dict() if self.closest else None,
            "what_it_would_take": self.what_it_would_take,
            "local": [o.to_dict() for o in self.local],
            "local_line": self.local_line(),
            "options_evaluated": len(self.options),
            "options": [o.to_dict() for o in self.options] if all_options else None,
            "notes": list(self.notes),
            "estimate": True,
        }


def advise(
    workload: Workload,
    catalog: Any,
    targets: Targets | None = None,
    *,
    offers: Any = (),
    prices: PriceInfo | None = None,
    spot: bool = False,
    region: str | None = None,
    buy: bool = True,
    rent: bool = True,
    engine: str = DEFAULT_ENGINE,
    efficiency: Efficiency | None = None,
    measured: dict[str, dict[str, float]] | None = None,
    local_cards: tuple[str, ...] = (),
    only: tuple[str, ...] = (),
    price_basis: str = "new",
    requires: tuple[str, ...] = (),
) -> Advice:
    """Evaluate every offer and purchasable card x count, then pick (module docstring). `requires`: support-matrix
    features the job needs beyond those its workload implies (options.build_options)."""
    if not (buy or rent):
        raise UserError("nothing to evaluate: both renting and buying are excluded")
    if price_basis not in PRICE_BASES:
        raise UserError(f"price basis must be one of {', '.join(PRICE_BASES)}, not {price_basis!r}")
    workload = workload.validate()
    targets_in = targets
    targets = (targets or Targets()).for_workload(workload)
    if workload.mode == "inference" and workload.model.kind == "decoder":
        # the serving figures use the targets' context: say so in the workload too
        workload = workload.with_(seq_len=targets.prompt_tokens, gen_tokens=targets.output_tokens)
    opts = build_options(workload, catalog, targets, offers=offers, spot=spot, region=region, buy=buy, rent=rent,
                         engine=engine, efficiency=efficiency, measured=measured, local_cards=local_cards,
                         only=only, price_basis=price_basis, requires=requires)
    local = [o for o in opts if o.hardware.kind == "local"]
    picks = make_picks(opts, targets)
    closest, take = (None, None) if picks else _closest(opts, workload, catalog, targets, engine, efficiency)
    notes = _notes(workload, targets, targets_in, opts, engine=engine, rent=rent, buy=buy, price_basis=price_basis)
    if buy:
        unsold = not_sold_note(not_for_sale(opts, catalog, only))
        notes += [unsold] if unsold else []
    if rent and prices is not None:
        notes += [line for line in (prices.stale_warning, prices.set_aside_line()) if line]
    return Advice(workload=workload, targets=targets, options=opts, frontier=frontier(opts), picks=picks,
                  buy_vs_rent=buy_vs_rent(opts, targets), closest=closest, what_it_would_take=take, local=local,
                  prices=prices, engine=engine, notes=tuple(notes), price_basis=price_basis)


def _closest(opts: list[Option], workload: Workload, catalog: Any, targets: Targets, engine: str,
             efficiency: Efficiency | None) -> tuple[Any, str | None]:
    """With no pick: the option closest to every target and what it would take (the way forward where
    it does not fit); (None, None) when nothing was evaluated."""
    miss = closest_miss(opts, targets)
    if not miss:
        return None, None
    closest, take = miss
    if not closest.option.fits:
        take = _way_forward_line(closest.option, workload, catalog, targets, engine, efficiency) or take
    return closest, take


def _notes(workload: Workload, targets: Targets, targets_in: Targets | None, opts: list[Option], *, engine: str,
           rent: bool, buy: bool, price_basis: str) -> list[str]:
    """What the answer assumes and leaves out, in the user's terms (defaults taken, cards left out, prices)."""
    notes = ["estimates from datasheet figures and calibrated efficiencies (BENCHMARKS.md), not measurements; each "
             "card's matmul and memory rates at what published measurements say it reaches where one exists "
             "(docs/card-reach.md: an MI300X's large matmuls at 0.54 of its bf16 peak, an A100's copies at 0.79 of its "
             "bandwidth)"]
    decoder = workload.mode == "inference" and workload.model.kind == "decoder"
    if decoder:
        notes.append(f"serving engine: {engine} (vLLM-class continuous batching with CUDA graphs)"
                     if engine == "graphs" else f"serving engine: {engine}")
    if workload.mode != "inference" and not (workload.train_tokens or workload.train_samples) and (
            targets_in is None or not targets_in.tokens):
        unit = ("samples", "--samples") if workload.model.is_traced else ("tokens", "--tokens")
        dl = f" and the {targets.deadline_h:g} h deadline" if targets.deadline_h else ""
        notes.append(f"no {unit[0][:-1]} budget given ({unit[1]}): costs{dl} are for {targets.tokens:.3g} {unit[0]}, "
                     "the default")
    if not targets.any_budget:
        notes.append("no budget set (--budget-per-hour, --budget-per-month, --budget-per-job): no 'fastest within "
                     "budget' pick")
    if targets.budget_usd:
        notes.append(f"--budget ${targets.budget_usd:,.0f} is read as "
                     + ("a month of serving (--budget-per-month)" if workload.mode == "inference"
                        else "the whole job (--budget-per-job)") + "; --max-card-price caps what a card to buy costs")
    if rent and any(o.hardware.kind == "rent" for o in opts):
        from gpuadvisor.advisor.options import MIN_HOST_GIB, QLORA_LOAD_SHARE, VCPUS_PER_GPU, VISION_VCPUS_PER_GPU

        notes.append(f"rental instances checked for host needs (defaults): {VCPUS_PER_GPU} vCPUs per GPU "
                     f"({VISION_VCPUS_PER_GPU} for vision training's data loading), host memory >= {MIN_HOST_GIB} GiB "
                     f"and >= the 16-bit checkpoint for training and LoRA ({QLORA_LOAD_SHARE:.0%} of it for QLoRA); "
                     "local disk is not in the price snapshot and is not checked")
    if rent and not any(o.hardware.kind == "rent" for o in opts):
        notes.append("no rental offers were evaluated (no price snapshot, or the filters left none)")
    if not decoder and workload.compute_dtype in ("bf16", "fp16", "fp8"):
        notes.append("cards without tensor cores (Pascal and older, AMD GCN 5 and RDNA 1-2) are left out: "
                     f"{workload.compute_dtype} work runs there at the FP32 rate (--only NAME includes one)")
    if (workload.mode == "inference" and not decoder and targets_in is not None and targets_in.ttft_s is None) \
            or (workload.mode == "inference" and not decoder and targets_in is None):
        notes.append(f"no --ttft: a request is wanted within {targets.ttft_s:g} s (the default); --ttft sets it")
    blocked = support_note(opts)
    if blocked:
        notes.append(blocked)
    if buy:
        notes.append("purchase prices are for the GPUs alone, not the host or server around them")
        notes.append(basis_note(opts, price_basis))
        notes.append(f"bought hardware: purchase amortised over {targets.amortise_months:g} months at "
                     f"{targets.hours_per_month:g} h/month, plus electricity at ${targets.usd_per_kwh:g}/kWh x "
                     f"{targets.utilisation:.0%} of TDP (GPUs only)")
    return notes


def support_note(opts: list[Option]) -> str | None:
    """The cards the support matrix rules out, each with its reason (the first two), once: 'cannot run here
    (support matrix, docs/support.md): Tesla K80 (vLLM needs NVIDIA compute capability 7.0 or newer; ...)'."""
    why = {o.hardware.card: o.cannot_run.removeprefix("cannot run: ") for o in opts if o.cannot_run}
    if not why:
        return None
    cards = list(why)
    named = [f"{card} ({why[card]})" for card in cards[:2]]
    rest = cards[2:]
    more = f"; also {', '.join(rest[:6])}" + (f" and {len(rest) - 6} more" if len(rest) > 6 else "") if rest else ""
    return (f"{len(why)} card{'s' if len(why) != 1 else ''} cannot run this (support matrix, docs/support.md), "
            f"listed as such, never picked: {'; '.join(named)}{more}")


def not_sold_note(unsold: dict[str, Any]) -> str | None:
    """'not offered to buy, not sold on their own: A10G (cloud-only), GH200 96GB (systems-only) ...' for the
    cards `options.not_for_sale` names, pointing at where the reason and its source are; None when none."""
    if not unsold:
        return None
    parts = [f"{name} ({n.why})" for name, n in unsold.items()]
    return ("not offered to buy, not sold on their own: " + ", ".join(parts)
            + " (`gpuadvisor catalog show NAME` gives the reason and its source)")


def basis_note(opts: list[Option], basis: str) -> str:
    """Which purchase prices were used, naming the cards that fell back to the other basis."""
    other = "street" if basis == "new" else "new"
    fell = sorted({o.hardware.card for o in opts if o.hardware.kind == "buy" and not o.cannot_run
                   and (o.hardware.purchase_kind or "").endswith(f"no {basis}")})
    what = ("new: list prices and estimates for new cards" if basis == "new"
            else "street: dated street and used prices")
    back = (f"; no {basis} price, so the {other} price: {', '.join(fell[:8])}"
            + (f" and {len(fell) - 8} more" if len(fell) > 8 else "") if fell else "")
    return f"purchase price basis: {what} (--price-basis){back}"


def _way_forward_line(o: Option, workload: Workload, catalog: Any, targets: Targets, engine: str,
                      efficiency: Efficiency | None) -> str | None:
    """The cheapest change that makes the closest option fit, with its figures (advisor.remedy)."""
    from gpuadvisor.advisor.options import hardware_of, per_gpu_batch
    from gpuadvisor.advisor.remedy import way_forward

    card = next((c for c in catalog.cards if c.name == o.hardware.card), None)
    if card is None:
        return None
    fixes = way_forward(per_gpu_batch(workload, o.hardware.gpus), hardware_of(card), o.hardware.gpus, targets,
                        engine=engine, efficiency=efficiency)
    if not fixes:
        return None
    return f"{o.hardware.card} x {o.hardware.gpus} does not fit; " + "; or ".join(r.line for r in fixes)


__all__ = ["Advice", "PriceInfo", "advise"]
