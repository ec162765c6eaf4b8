"""The cheapest rental that meets serving SLOs under a request rate, colocated or disaggregated.

Colocated: each (card, GPU count) of the price snapshot, cheapest first, laid out as tensor-parallel groups x
replicas, is simulated (estimate/serve/) at the rate, and the first whose P99 TTFT and P99 time per output token
meet the targets is the pick. Disaggregated (`cheapest_disaggregated`): a prefill pool and a decode pool, either
split within one offer's node (the KV cache over NVLink on SXM boards, else PCIe) or two offers of one provider,
region and GPU vendor joined by the network, possibly of different cards, cheapest mix first, each simulated by
estimate/serve/disagg.py.

What binds is the target with the least headroom. A card the support matrix (advisor/support.py) says cannot run
the engine is never simulated nor picked: it is returned with the reason. An option that misses rules out the
options it proves cannot meet either (`_Ruled`), so the simulations go to options that might; the number of
simulations and the scheduler steps they simulate are bounded (`SLO_TRIES`, `SEARCH_STEPS`): a search that runs
out of either says so (`Search.stopped`). Pure apart from the snapshot it is given."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from gpuadvisor.core import limits
from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate.serve.api import card_figures, estimate_load, serve_setup
from gpuadvisor.estimate.serve.lengths import Lengths
from gpuadvisor.layout import Layout

TP_CHOICES = (1, 2, 4, 8)
#: simulations one search may run (each about 20-60 ms at 300 requests)
SLO_TRIES = 400
#: scheduler iterations one search may simulate in all: about 12 s on a two-core machine (about 130,000 a second),
#: so that long prompts on cards far too small for the rate end the search instead of running for minutes; a search
#: for an 8B model at a few req/s spends about 100,000
SEARCH_STEPS = 1_500_000


class Search(NamedTuple):
    """One search's answer: the cheapest option that meets the targets (None: none simulated does), what it
    simulated, cheapest first, the cards the support matrix rules out, and why it stopped before running out of
    options (None: it did not)."""

    pick: Any
    tried: list[Any]
    cannot_run: dict[str, str]
    stopped: str | None = None


@dataclass
class _Budget:
    """What one search may spend: simulations (`tries`) and scheduler iterations simulated (`steps`)."""

    tries: int
    steps: int = SEARCH_STEPS
    runs: int = 0
    spent: int = 0

    def charge(self, figures: dict[str, Any]) -> None:
        self.runs += 1
        self.spent += int(figures.get("iterations") or 0) * int(figures.get("arrival_draws") or 1)

    def stopped(self) -> str | None:
        if self.runs >= self.tries:
            return f"{self.runs} options simulated, the most one search runs"
        if self.spent >= self.steps:
            return (f"{self.spent:,} scheduler steps simulated, past one search's budget of {self.steps:,} (fewer "
                    "--requests, or --provider / --region, let it look further)")
        return None
#: an option that served `achieved` req/s of `rate` rules out the same card with fewer than this share of
#: gpus x rate / achieved GPUs: replicas add throughput at best in proportion (the margin covers a larger TP group
#: whose extra KV cache does better than that)
SCALING_MARGIN = 0.8


@dataclass(frozen=True)
class _Verdict:
    """How one simulated option fares: its price, its P99s, whether it meets the targets and which binds."""

    usd_per_hour: float
    p99_ttft_s: float
    p99_tpot_s: float
    meets: bool
    binds: str
    figures: dict[str, Any]

    def p99_line(self) -> str:
        return (f"P99 TTFT {self.p99_ttft_s * 1e3:,.0f} ms, P99 TPOT {self.p99_tpot_s * 1e3:,.1f} ms; binds: "
                f"{self.binds}")

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def _verdict(f: dict[str, Any], usd: float, slo_ttft: float | None, slo_tpot: float | None) -> dict[str, Any]:
    """_Verdict's fields of a simulation's figures `f` at price `usd`."""
    ttft, tpot = f["ttft_s"]["p99"], f["tpot_s"]["p99"] or 0.0
    return {"usd_per_hour": usd, "p99_ttft_s": ttft, "p99_tpot_s": tpot, "figures": f,
            "meets": _meets(ttft, tpot, slo_ttft, slo_tpot), "binds": _binds(ttft, tpot, slo_ttft, slo_tpot)}


@dataclass(frozen=True)
class SloPick(_Verdict):
    card: str
    gpus: int
    layout: str
    offer: str

    def line(self) -> str:
        return f"{self.gpus} x {self.card} ({self.layout}) at ${self.usd_per_hour:,.2f}/h via {self.offer}: " + \
            self.p99_line()


@dataclass(frozen=True)
class Pool:
    """One pool of a disaggregated deployment: `gpus` GPUs of `card` in instances of `tp`."""

    card: str
    gpus: int
    tp: int

    def describe(self) -> str:
        instances = f", {self.gpus // self.tp} instances" if self.gpus > self.tp else ""
        return f"{self.gpus} x {self.card} (TP{self.tp}{instances})"

    def to_dict(self) -> dict[str, Any]:
        return {"card": self.card, "gpus": self.gpus, "tp": self.tp, "instances": self.gpus // self.tp}


@dataclass(frozen=True)
class DisaggPick(_Verdict):
    """A disaggregated mix: its pools, the offers it rents (one node split in two, or one offer per pool) and the
    link its KV caches cross."""

    prefill: Pool
    decode: Pool
    offers: tuple[str, ...]
    link: str

    def line(self) -> str:
        where = f"one node via {self.offers[0]}" if len(self.offers) == 1 else f"via {' + '.join(self.offers)}"
        return (f"prefill {self.prefill.describe()} + decode {self.decode.describe()} at ${self.usd_per_hour:,.2f}/h "
                f"({where}; KV over {self.link}): " + self.p99_line())

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d.update(prefill=self.prefill.to_dict(), decode=self.decode.to_dict(), offers=list(self.offers))
        return d


def _binds(ttft: float, tpot: float, slo_ttft: float | None, slo_tpot: float | None) -> str:
    parts = []
    if slo_ttft:
        parts.append((ttft / slo_ttft, f"P99 TTFT ({ttft / slo_ttft:.0%} of the target)"))
    if slo_tpot:
        parts.append((tpot / slo_tpot, f"P99 time per token ({tpot / slo_tpot:.0%} of the target)"))
    return max(parts)[1] if parts else "-"


def _meets(ttft: float, tpot: float, slo_ttft: float | None, slo_tpot: float | None) -> bool:
    return (slo_ttft is None or ttft <= slo_ttft) and (slo_tpot is None or tpot <= slo_tpot)


@dataclass
class _Ruled:
    """GPU counts per card proven too few: a count at or below `at_most[card]` cannot meet the targets."""

    at_most: dict[str, float] = field(default_factory=dict)

    def rule_out(self, card: str, gpus: float) -> None:
        self.at_most[card] = max(self.at_most.get(card, 0.0), gpus)

    def ruled_out(self, card: str, gpus: int) -> bool:
        return gpus <= self.at_most.get(card, 0.0)

    def short_of_rate(self, card: str, gpus: int, achieved: float | None, rate: float) -> None:
        """The option missed: the same card with no more GPUs cannot meet it, nor with fewer than the rate asks of
        what these GPUs served."""
        self.rule_out(card, gpus)
        if achieved:
            self.rule_out(card, gpus * rate / achieved * SCALING_MARGIN)


class _Market:
    """The snapshot's cheapest offer per (card, GPU count), the support matrix's verdict per card and the smallest
    tensor-parallel group that holds the model on each card."""

    def __init__(self, model: Any, catalog: Any, offers: list[Any], engine: str, weights: str,
                 kv_dtype: str | None) -> None:
        from gpuadvisor.advisor.support import QUANT_FEATURE, SERVE_ENGINE_FEATURE

        self.model, self.catalog, self.engine, self.weights, self.kv_dtype = model, catalog, engine, weights, kv_dtype
        self.needs = tuple(f for f in (SERVE_ENGINE_FEATURE.get(str(engine).lower().partition("@")[0]),
                                       QUANT_FEATURE.get(weights)) if f)
        self.blocked: dict[str, str] = {}
        self.best: dict[tuple[str, int], tuple[float, str]] = {}
        #: the same per provider and region: two instances a network joins (a KV cache does not cross the internet)
        self.by_place: dict[tuple[str, str], dict[tuple[str, int], tuple[float, str]]] = {}
        for o in offers:
            price = o.price_usd_h if hasattr(o, "price_usd_h") and not callable(o.price_usd_h) else o.on_demand_usd_h
            if price is None or not o.card or getattr(o, "fractional", False):
                continue  # a share of one GPU (prices.Offer.gpu_fraction < 1, AWS g6f: 1/8 of an L4) is no card
            key, entry = (o.card, int(o.gpu_count)), (float(price), f"{o.provider} {o.instance_type}")
            for table in (self.best, self.by_place.setdefault((o.provider, getattr(o, "region", "") or ""), {})):
                if key not in table or price < table[key][0]:
                    table[key] = entry
        self._cards: dict[str, Any] = {}
        self._min_tp: dict[str, int | None] = {}

    def card(self, name: str) -> Any | None:
        """The catalog card that may run the engine; None (and the reason in `blocked`) otherwise."""
        from gpuadvisor.advisor.support import cannot_run

        if name not in self._cards:
            try:
                card = self.catalog.get(name)
            except Exception:
                card = None
            if card is not None:
                why = cannot_run(card, self.needs)
                gpu_figures = card_figures(card)
                if why:
                    self.blocked[card.name] = why
                    card = None
                elif not gpu_figures.bandwidth_gbs or not gpu_figures.memory_gib:
                    card = None
            self._cards[name] = card
        return self._cards[name]

    def setup(self, card: Any, tp: int, **kw: Any) -> Any:
        return serve_setup(self.model, card_figures(card), self.engine, weights=self.weights, kv_dtype=self.kv_dtype,
                           layout=Layout(tp=tp), **kw)

    def min_tp(self, card: Any) -> int | None:
        """The smallest tensor-parallel group whose GPUs hold the weights and some KV cache."""
        if card.name not in self._min_tp:
            self._min_tp[card.name] = None
            for tp in TP_CHOICES:
                if self.model.num_heads % tp:
                    continue
                try:
                    self.setup(card, tp)
                except UserError:
                    continue
                self._min_tp[card.name] = tp
                break
        return self._min_tp[card.name]


def _screened(run: Callable[[int | None], dict[str, Any]], budget: _Budget, usd: float, slo_ttft: float | None,
              slo_tpot: float | None) -> dict[str, Any]:
    """An option's figures for the search: one draw of the arrivals screens it, and one that meets the targets on
    it is simulated again as `estimate` answers it (each figure the median of its draws: serve/sim.py
    ARRIVAL_DRAWS), whose verdict stands. Most options miss by far; the draws cost five times the steps."""
    f = run(1)
    budget.charge(f)
    if _verdict(f, usd, slo_ttft, slo_tpot)["meets"]:
        f = run(None)
        budget.charge(f)
    return f


def cheapest_for_slo(model: Any, catalog: Any, offers: list[Any], *, engine: str, weights: str, kv_dtype: str | None,
                     lengths: Lengths, rate: float, slo_ttft: float | None, slo_tpot: float | None,
                     requests: int = 300, seed: int = 0, tries: int = SLO_TRIES, steps: int = SEARCH_STEPS
                     ) -> Search:
    """The cheapest option that meets the SLOs (Search.pick: an SloPick) or None, every option evaluated, cheapest
    first, and card name -> "cannot run: <why>" for each card of a cheaper offer that the support matrix rules
    out."""
    _check_targets(slo_ttft, slo_tpot, requests)
    market = _Market(model, catalog, offers, engine, weights, kv_dtype)
    ruled, budget = _Ruled(), _Budget(tries, steps)
    evaluated: list[SloPick] = []
    for (card_name, gpus), (usd, offer) in sorted(market.best.items(), key=lambda kv: kv[1][0]):
        if stopped := budget.stopped():
            return Search(None, evaluated, market.blocked, stopped)
        card = market.card(card_name)
        if card is None or ruled.ruled_out(card.name, gpus):
            continue
        for tp in TP_CHOICES:
            if tp > gpus or gpus % tp or model.num_heads % tp:
                continue
            lay = Layout(tp=tp, replicas=gpus // tp)
            try:
                s = serve_setup(model, card_figures(card), engine, weights=weights, kv_dtype=kv_dtype, layout=lay)

                def run(draws: int | None, s: Any = s) -> dict[str, Any]:
                    return estimate_load(s, lengths, rate=rate, requests=requests, seed=seed, slo_ttft=slo_ttft,
                                         slo_tpot=slo_tpot, draws=draws)["figures"]

                f = _screened(run, budget, usd, slo_ttft, slo_tpot)
            except UserError:
                continue
            pick = SloPick(card=card.name, gpus=gpus, layout=lay.describe(), offer=offer,
                           **_verdict(f, usd, slo_ttft, slo_tpot))
            evaluated.append(pick)
            if pick.meets:
                return Search(pick, evaluated, market.blocked)
            ruled.short_of_rate(card.name, gpus, f.get("requests_per_s"), rate)
            break  # the smallest TP that fits; more TP rarely helps a rate that replicas cannot serve
    return Search(None, evaluated, market.blocked)


@dataclass(frozen=True)
class _Mix:
    prefill: Pool
    decode: Pool
    usd: float
    offers: tuple[str, ...]
    link: str | None  # None: the default of disagg.kv_link (NVLink within one node of one card, else the network)


def _mixes(market: _Market) -> Iterator[_Mix]:
    """Every mix of the snapshot, in no order: one offer's GPUs split between the pools, or two offers of one
    provider and region and one GPU vendor."""
    def sides(table: dict[tuple[str, int], tuple[float, str]]) -> Iterator[tuple[Any, int, int, float, str]]:
        for (name, gpus), (usd, label) in table.items():
            card = market.card(name)
            tp = market.min_tp(card) if card is not None else None
            if card is not None and tp is not None and gpus % tp == 0:
                yield card, gpus, tp, usd, label

    for card, gpus, tp, usd, label in sides(market.best):
        for p in range(tp, gpus, tp):  # one node: p GPUs prefill, the rest decode
            if (gpus - p) % tp == 0:
                yield _Mix(Pool(card.name, p, tp), Pool(card.name, gpus - p, tp), usd, (label,), None)
    for table in market.by_place.values():
        here = list(sides(table))
        for pc, pg, ptp, pu, pl in here:
            for dc, dg, dtp, du, dl in here:
                if pc.vendor != dc.vendor:  # the engines' KV connectors move caches between GPUs of one vendor
                    continue
                yield _Mix(Pool(pc.name, pg, ptp), Pool(dc.name, dg, dtp), pu + du, (pl, dl), "network")


def cheapest_disaggregated(model: Any, catalog: Any, offers: list[Any], *, engine: str, weights: str,
                           kv_dtype: str | None, lengths: Lengths, rate: float, slo_ttft: float | None,
                           slo_tpot: float | None, requests: int = 300, seed: int = 0, tries: int = SLO_TRIES,
                           steps: int = SEARCH_STEPS, below_usd: float | None = None) -> Search:
    """The cheapest disaggregated mix that meets the SLOs (Search.pick: a DisaggPick, or None), every mix simulated,
    cheapest first, and the cards the support matrix rules out. `below_usd`: only mixes cheaper than that (a
    colocated pick's price).

    A mix that misses rules out, for later mixes, a pool it proves too small: the decode pool when the P99 time per
    token misses (it depends on the decode pool alone at a rate), and either pool whose own part of the TTFT, at
    its P99, is past the target with the front-end."""
    from gpuadvisor.estimate.serve.disagg import DisaggSetup, estimate_disaggregated, kv_link
    from gpuadvisor.estimate.serve.profiles import serve_engine

    _check_targets(slo_ttft, slo_tpot, requests)
    if not serve_engine(engine).disaggregation:
        raise UserError(f"--disaggregated: {engine} has no disaggregated prefill/decode (vllm, sglang, trtllm have)")
    market = _Market(model, catalog, offers, engine, weights, kv_dtype)
    prefill_ruled, decode_ruled, budget = _Ruled(), _Ruled(), _Budget(tries, steps)
    evaluated: list[DisaggPick] = []
    setups: dict[tuple[str, int], Any] = {}
    inp, out = lengths.draw(requests, seed)  # the lengths estimate_disaggregated draws

    def setup(pool: Pool) -> Any:
        key = (pool.card, pool.tp)
        if key not in setups:
            setups[key] = market.setup(market.catalog.get(pool.card), pool.tp)
        return setups[key]

    for mix in sorted(_mixes(market), key=lambda x: (x.usd, x.prefill.gpus + x.decode.gpus, x.prefill.card)):
        if stopped := budget.stopped():
            return Search(None, evaluated, market.blocked, stopped)
        if below_usd is not None and mix.usd >= below_usd:
            break
        if prefill_ruled.ruled_out(mix.prefill.card, mix.prefill.gpus) or \
                decode_ruled.ruled_out(mix.decode.card, mix.decode.gpus):
            continue
        pre, dec = setup(mix.prefill), setup(mix.decode)
        link = kv_link(mix.link, pre.gpu_figures, dec.gpu_figures, mix.prefill.gpus + mix.decode.gpus)
        ds = DisaggSetup(pre, dec, mix.prefill.gpus // mix.prefill.tp, mix.decode.gpus // mix.decode.tp, link)
        short = ds.short_pools(inp, out)
        if short:  # the longest request does not fit that pool's KV cache: the pool is too small on that card
            for name, _, _ in short:
                ruled, pool = (prefill_ruled, mix.prefill) if name == "prefill" else (decode_ruled, mix.decode)
                ruled.rule_out(pool.card, pool.gpus)
            continue
        def run(draws: int | None, ds: Any = ds) -> dict[str, Any]:
            return estimate_disaggregated(ds, lengths, rate=rate, requests=requests, seed=seed, slo_ttft=slo_ttft,
                                          slo_tpot=slo_tpot, draws=draws)["figures"]

        f = _screened(run, budget, mix.usd, slo_ttft, slo_tpot)
        pick = DisaggPick(prefill=mix.prefill, decode=mix.decode, offers=mix.offers, link=link.describe(),
                          **_verdict(f, mix.usd, slo_ttft, slo_tpot))
        evaluated.append(pick)
        if pick.meets:
            return Search(pick, evaluated, market.blocked)
        _rule_out_pools(f, mix, slo_ttft, slo_tpot, prefill_ruled, decode_ruled)
    return Search(None, evaluated, market.blocked)


def _rule_out_pools(f: dict[str, Any], mix: _Mix, slo_ttft: float | None, slo_tpot: float | None,
                    prefill_ruled: _Ruled, decode_ruled: _Ruled) -> None:
    """What a missed mix proves (cheapest_disaggregated's docstring)."""
    if slo_tpot is not None and (f["tpot_s"]["p99"] or 0.0) > slo_tpot:
        decode_ruled.rule_out(mix.decode.card, mix.decode.gpus)
    if slo_ttft is None:
        return
    fe, parts = float(f.get("frontend_s") or 0.0), f["ttft_parts_p99_s"]
    if fe + parts["prefill queue + prefill"] > slo_ttft:
        prefill_ruled.rule_out(mix.prefill.card, mix.prefill.gpus)
    if fe + parts["decode queue + first decode"] > slo_ttft:
        decode_ruled.rule_out(mix.decode.card, mix.decode.gpus)


@dataclass(frozen=True)
class ServingPicks:
    """The answer of `recommend --rate R --p99-ttft T --p99-tpot P [--disaggregated]`: each search's pick (None: none
    evaluated meets the targets) and the options it simulated, cheapest first, and the cards ruled out."""

    colocated: SloPick | None
    colocated_tried: list[SloPick]
    disaggregated: DisaggPick | None
    disaggregated_tried: list[DisaggPick] | None  # None: not asked
    cannot_run: dict[str, str]
    colocated_stopped: str | None = None  # why that search stopped before its last option (Search.stopped)
    disaggregated_stopped: str | None = None

    @property
    def cheaper(self) -> str | None:
        """Which way meets the targets for less: colocated, disaggregated, equal, neither (None: not asked)."""
        if self.disaggregated_tried is None:
            return None
        c, d = self.colocated, self.disaggregated
        if c is None or d is None:
            return "disaggregated" if d is not None else ("colocated" if c is not None else "neither")
        if abs(c.usd_per_hour - d.usd_per_hour) < 0.005:
            return "equal"
        return "colocated" if c.usd_per_hour < d.usd_per_hour else "disaggregated"


def serving_picks(model: Any, catalog: Any, offers: list[Any], *, disaggregated: bool = False,
                  **question: Any) -> ServingPicks:
    """Both searches on one question (keywords of cheapest_for_slo); the disaggregated one first, so that an engine
    without disaggregation is refused before any simulation."""
    d = cheapest_disaggregated(model, catalog, offers, **question) if disaggregated else None
    c = cheapest_for_slo(model, catalog, offers, **question)
    return ServingPicks(c.pick, c.tried, d.pick if d else None, d.tried if d else None,
                        {**c.cannot_run, **(d.cannot_run if d else {})}, c.stopped, d.stopped if d else None)


def _check_targets(slo_ttft: float | None, slo_tpot: float | None, requests: int) -> None:
    if not (slo_ttft or slo_tpot):
        raise UserError("give at least one serving target: --p99-ttft or --p99-tpot")
    limits.check("slo_requests", requests)  # one simulation per option tried: fewer requests each


__all__ = ["SEARCH_STEPS", "SLO_TRIES", "DisaggPick", "Pool", "Search", "ServingPicks", "SloPick",
           "cheapest_disaggregated", "cheapest_for_slo", "serving_picks"]
