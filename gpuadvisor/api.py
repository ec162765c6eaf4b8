"""The advisor as a Python API, for notebooks and scripts: the CLI calls these same functions.

    from gpuadvisor import api
    w = api.workload("llama-3.1-8b")                      # a preset, "7b", or a config.json path
    ans = api.estimate(api.request(w, "L40S", api.Step(users=8)))  # one Answer, one schema, any question
    advice = api.advise(w, api.Targets(tokens_per_s=30))  # options, frontier, picks, buy versus rent
    print(advice.picks["cheapest_rental"].line)
    result = api.probe()                                  # measure this machine (needs a GPU for GPU figures)
    report = api.check(result, "rules.yaml")              # evaluate a probe result against rules

Every figure is an estimate unless it comes from `probe`. Bad input raises
`gpuadvisor.core.errors.UserError` with a one-line message. See docs/api.md.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from gpuadvisor.advisor import Advice, Option, Targets
from gpuadvisor.answer import Answer
from gpuadvisor.request import (
    DEFAULT_CARD,
    EstimateRequest,
    HardwareChoice,
    QuestionSpec,
    ServingLoad,
    Step,
    TrainingLayout,
)
from gpuadvisor.workload import Workload


def workload(model: Any, **kw: Any) -> Workload:
    """A validated Workload: `model` is a preset name, a parameter count ("7b") or a config.json
    path; keywords are Workload fields (mode, dtype, batch, seq_len, train_tokens, ...)."""
    from gpuadvisor.workload import make_workload

    return make_workload(model, **kw).validate()


def catalog(extra_dirs: Sequence[str] = ()) -> Any:
    """The GPU catalog (shipped cards plus any extra YAML folders)."""
    from gpuadvisor.catalog import load_catalog

    return load_catalog(list(extra_dirs))


def request(workload: Workload, card: str = DEFAULT_CARD, question: QuestionSpec | None = None, *,
            probe: str | None = None, mfu: float | None = None,
            bandwidth_efficiency: float | None = None) -> EstimateRequest:
    """A validated request: `workload` on `card` (a catalog name or alias; fuzzy), asking `question` (Step(),
    ServingLoad(...) or TrainingLayout(...); default: a step in the workload's own layout)."""
    hardware = HardwareChoice(card=card, probe=probe, mfu=mfu, bandwidth_efficiency=bandwidth_efficiency)
    return EstimateRequest(workload, hardware, question or Step()).validate()


def estimate(req: EstimateRequest, *, cat: Any = None) -> Answer:
    """The one estimator (gpuadvisor.estimator.estimate): every interface calls it. The Answer has the same
    fields and JSON schema (docs/answer.schema.json) for every question."""
    from gpuadvisor.estimator import estimate as _estimate

    if not isinstance(req, EstimateRequest):
        raise TypeError("api.estimate takes an EstimateRequest: api.estimate(api.request(w, card, api.Step(users=8)))")
    return _estimate(req, catalog=cat)


def advise(
    workload: Workload,
    targets: Targets | None = None,
    *,
    catalog: Any = None,
    offers: Sequence[Any] | None = None,
    providers: Sequence[str] = (),
    region: str | None = None,
    spot: bool = False,
    currency: str = "USD",
    rent: bool = True,
    buy: bool = True,
    only: Sequence[str] = (),
    engine: str = "graphs",
    efficiency: Any = None,
    measured: Any = None,
    local_cards: Sequence[str] = (),
    price_basis: str = "new",
    requires: Sequence[str] = (),
) -> Advice:
    """Options, the cost-versus-time frontier and named picks for `workload` under `targets`.

    Rental offers come from the shipped price snapshot (filtered by `providers` and `region`)
    unless `offers` is given; purchases from the catalog's prices. `measured` is a probe
    RunResult (its figures replace the matching card's datasheet figures) or a dict
    card name -> measured figures; `local_cards` names the cards in this machine;
    `price_basis` "new" (list prices, the default) or "street" (dated street/used prices) for purchases;
    `requires`: support-matrix features the job needs beyond its workload's (e.g. "flash-attention-2").
    """
    from gpuadvisor.advisor import advise as _advise
    from gpuadvisor.advisor.decide import PriceInfo
    from gpuadvisor.advisor.market import currency_code, offers_for

    if catalog is None:
        from gpuadvisor.catalog import load_catalog

        catalog = load_catalog()
    cat = catalog
    if offers is None:
        offer_list, info = offers_for(providers, region, spot=spot, currency=currency) if rent else ([], None)
    else:
        offer_list = list(offers)
        info = PriceInfo(source="offers given by the caller", offers=len(offer_list), spot=spot,
                         providers=tuple(providers), region=region, currency=currency_code(currency))
    meas = measured
    if measured is not None and not isinstance(measured, dict):
        from gpuadvisor.compare import measured_by_card

        meas = measured_by_card(measured, cat)
    return _advise(workload, cat, targets, offers=offer_list, prices=info, spot=spot, region=region, buy=buy, rent=rent,
                   engine=engine, efficiency=efficiency, measured=meas, local_cards=tuple(local_cards),
                   only=tuple(only), price_basis=price_basis, requires=tuple(requires))


def options(workload: Workload, targets: Targets | None = None, **kw: Any) -> list[Option]:
    """Every evaluated option (rentals, purchases, local), priced and checked; keywords as `advise`."""
    return advise(workload, targets, **kw).options


def picks(workload: Workload, targets: Targets | None = None, **kw: Any) -> dict[str, Any]:
    """The named picks (cheapest, cheapest_rental, cheapest_purchase, fastest_within_budget,
    best_value); empty when nothing meets every target (then see `advise(...).closest`)."""
    return advise(workload, targets, **kw).picks


def serving_picks(model: Any, *, rate: float, p99_ttft_s: float | None = None, p99_tpot_s: float | None = None,
                  engine: str = "vllm", input_len: int | None = None, output_len: int | None = None,
                  lengths: str | None = None,
                  weights: str = "bf16", kv_dtype: str | None = None, disaggregated: bool = False,
                  providers: Sequence[str] = (), region: str | None = None, spot: bool = False,
                  offers: Sequence[Any] | None = None, requests: int = 300, seed: int = 0) -> Any:
    """The cheapest rental whose simulation at `rate` req/s meets P99 TTFT and time-per-token targets, and with
    `disaggregated` the cheapest prefill and decode pools that do (advisor.serve_slo.ServingPicks: `colocated`,
    `disaggregated`, `cheaper`, what each search simulated). `lengths`: as `--lengths` (default fixed lengths of
    `input_len` and `output_len`, request.DEFAULT_INPUT_LEN and DEFAULT_OUTPUT_LEN when not given; a ShareGPT shape
    takes the given ones as its means)."""
    from gpuadvisor.advisor.market import offers_for
    from gpuadvisor.advisor.serve_slo import serving_picks as _serving_picks
    from gpuadvisor.catalog import load_catalog
    from gpuadvisor.estimate.serve.lengths import parse_lengths
    from gpuadvisor.modelspec import resolve_model
    from gpuadvisor.request import DEFAULT_INPUT_LEN, DEFAULT_OUTPUT_LEN

    m = resolve_model(model) if isinstance(model, str) else model
    offer_list = list(offers) if offers is not None else offers_for(providers, region, spot=spot)[0]
    drawn = parse_lengths(lengths, DEFAULT_INPUT_LEN if input_len is None else input_len,
                          DEFAULT_OUTPUT_LEN if output_len is None else output_len,
                          (input_len is not None, output_len is not None))
    return _serving_picks(m, load_catalog(), offer_list, disaggregated=disaggregated, engine=engine, weights=weights,
                          kv_dtype=kv_dtype, lengths=drawn, rate=rate,
                          slo_ttft=p99_ttft_s, slo_tpot=p99_tpot_s, requests=requests, seed=seed)


def probe(mode: str = "quick", device: str | int = "all", *, refresh_host: bool = False, on_event: Any = None) -> Any:
    """Measure this machine (GPUs and host): a results.RunResult. Without a GPU it measures the host.
    refresh_host (with mode="full") re-measures the figures kept in the host cache."""
    from gpuadvisor.probe_runner import RunOptions, run_probes

    return run_probes(RunOptions(mode=mode, device=device, refresh_host=refresh_host), on_event=on_event)


def prices_line(snapshot: Any = None) -> str:
    """One line on the rental price snapshot in use, for the TUI and the report: its date, offer
    and provider counts, and each source file's version ('aws v9@3e9a175, ...'); '' where this
    build has no price snapshot."""
    from gpuadvisor.advisor.market import load_snapshot

    snap = snapshot if snapshot is not None else load_snapshot()
    return "" if snap is None else str(snap.versions_line())


def check(result: Any, rules: str | os.PathLike[str] | Any) -> Any:
    """Evaluate a probe result (a RunResult or a results JSON path) against rules (a RuleSet or a
    YAML path): a checks.CheckReport with `.passed` and `.exit_code`."""
    from gpuadvisor import checks
    from gpuadvisor.core import results

    run = results.load(result) if isinstance(result, (str, os.PathLike)) else result
    ruleset = checks.load_rules(rules) if isinstance(rules, (str, os.PathLike)) else rules
    return checks.evaluate(ruleset, run)


__all__ = ["Advice", "Answer", "EstimateRequest", "HardwareChoice", "Option", "ServingLoad", "Step", "Targets",
           "TrainingLayout", "advise", "catalog", "check", "estimate", "options", "picks", "prices_line", "probe",
           "request", "serving_picks", "workload"]
