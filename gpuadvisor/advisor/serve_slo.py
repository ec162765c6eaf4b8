"""The cheapest rental that meets serving SLOs under a request rate: each (card, GPU count) of the price snapshot,
cheapest first, laid out as tensor-parallel groups x replicas, is simulated (estimate/serve/) at the rate, and the
first whose P99 TTFT and P99 time per output token meet the targets is the pick. What binds is the target with the
least headroom. A card the support matrix (advisor/support.py) says cannot run the engine is never simulated nor
picked: it is returned with the reason. Pure apart from the snapshot it is given."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpuadvisor.core import limits
from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate.serve.api import card_figures, estimate_load, serve_setup
from gpuadvisor.estimate.serve.lengths import Lengths
from gpuadvisor.layout import Layout

TP_CHOICES = (1, 2, 4, 8)


@dataclass(frozen=True)
class SloPick:
    card: str
    gpus: int
    layout: str
    usd_per_hour: float
    offer: str
    p99_ttft_s: float
    p99_tpot_s: float
    meets: bool
    binds: str
    figures: dict[str, Any]

    def line(self) -> str:
        return (f"{self.gpus} x {self.card} ({self.layout}) at ${self.usd_per_hour:,.2f}/h via {self.offer}: P99 TTFT "
                f"{self.p99_ttft_s * 1e3:,.0f} ms, P99 TPOT {self.p99_tpot_s * 1e3:,.1f} ms; binds: {self.binds}")

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def _binds(ttft: float, tpot: float, slo_ttft: float | None, slo_tpot: float | None) -> str:
    parts = []
    if slo_ttft:
        parts.append((ttft / slo_ttft, f"P99 TTFT ({ttft / slo_ttft:.0%} of the target)"))
    if slo_tpot:
        parts.append((tpot / slo_tpot, f"P99 time per token ({tpot / slo_tpot:.0%} of the target)"))
    return max(parts)[1] if parts else "-"


def cheapest_for_slo(model: Any, catalog: Any, offers: list[Any], *, engine: str, weights: str, kv_dtype: str | None,
                     lengths: Lengths, rate: float, slo_ttft: float | None, slo_tpot: float | None,
                     requests: int = 300, seed: int = 0, tries: int = 40
                     ) -> tuple[SloPick | None, list[SloPick], dict[str, str]]:
    """(the cheapest option that meets the SLOs or None, every option evaluated, cheapest first, and card name ->
    "cannot run: <why>" for each card of a cheaper offer that the support matrix rules out)."""
    from gpuadvisor.advisor.support import QUANT_FEATURE, SERVE_ENGINE_FEATURE, cannot_run

    engine_needs = tuple(f for f in (SERVE_ENGINE_FEATURE.get(str(engine).lower().partition("@")[0]),) if f)
    weight_needs = tuple(f for f in (QUANT_FEATURE.get(weights),) if f)
    blocked: dict[str, str] = {}
    if not (slo_ttft or slo_tpot):
        raise UserError("give at least one serving target: --p99-ttft or --p99-tpot")
    limits.check("slo_requests", requests)  # one simulation per option tried: fewer requests each
    best: dict[tuple[str, int], tuple[float, str]] = {}
    for o in offers:
        price = o.price_usd_h if hasattr(o, "price_usd_h") and not callable(o.price_usd_h) else o.on_demand_usd_h
        if price is None or not o.card:
            continue
        key = (o.card, int(o.gpu_count))
        if key not in best or price < best[key][0]:
            best[key] = (float(price), f"{o.provider} {o.instance_type}")
    evaluated: list[SloPick] = []
    for (card_name, gpus), (usd, offer) in sorted(best.items(), key=lambda kv: kv[1][0]):
        if len(evaluated) >= tries:
            break
        try:
            card = catalog.get(card_name)
        except Exception:
            continue
        why = cannot_run(card, engine_needs + weight_needs)
        if why:
            blocked[card.name] = why
            continue
        hw = card_figures(card)
        if not hw.bandwidth_gbs or not hw.memory_gib:
            continue
        for tp in TP_CHOICES:
            if tp > gpus or gpus % tp or model.num_heads % tp:
                continue
            lay = Layout(tp=tp, replicas=gpus // tp)
            try:
                s = serve_setup(model, hw, engine, weights=weights, kv_dtype=kv_dtype, layout=lay)
                r = estimate_load(s, lengths, rate=rate, requests=requests, seed=seed, slo_ttft=slo_ttft,
                                  slo_tpot=slo_tpot)
            except UserError:
                continue
            f = r["figures"]
            ttft, tpot = f["ttft_s"]["p99"], f["tpot_s"]["p99"] or 0.0
            ok = (slo_ttft is None or ttft <= slo_ttft) and (slo_tpot is None or tpot <= slo_tpot)
            pick = SloPick(card.name, gpus, lay.describe(), usd, offer, ttft, tpot, ok,
                           _binds(ttft, tpot, slo_ttft, slo_tpot), f)
            evaluated.append(pick)
            if ok:
                return pick, evaluated, blocked
            break  # the smallest TP that fits; more TP rarely helps a rate that replicas cannot serve
    return None, evaluated, blocked
