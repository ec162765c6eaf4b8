"""`recommend --rate R --p99-ttft T --p99-tpot P [--disaggregated]` (advisor/serve_slo.py): the cheapest colocated
option and the cheapest disaggregated mix that meet serving targets; what a miss rules out must never hide a
cheaper option that meets them."""

from __future__ import annotations

import json

import pytest
from fake_prices import FakeOffer

from gpuadvisor.advisor import serve_slo
from gpuadvisor.advisor.serve_slo import cheapest_disaggregated, cheapest_for_slo
from gpuadvisor.advisor.support import cannot_run
from gpuadvisor.catalog import load_catalog
from gpuadvisor.cli import main
from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate.serve.api import card_figures
from gpuadvisor.estimate.serve.disagg import kv_link
from gpuadvisor.estimate.serve.lengths import parse_lengths
from gpuadvisor.modelspec import resolve_model

CATALOG = load_catalog()
MODEL = resolve_model("llama-3.1-8b")


def _offer(card: str, gpus: int, usd: float, provider: str = "cloud") -> FakeOffer:
    return FakeOffer(provider, "x", card, gpus, usd, region="r1")


OFFERS = [_offer("L4", 1, 0.4), _offer("L4", 4, 1.6), _offer("GeForce RTX 4090", 2, 0.7), _offer("L40S", 1, 0.9),
          _offer("L40S", 2, 1.8), _offer("A100 SXM4 80GB", 1, 1.2), _offer("H100 SXM5 80GB", 1, 2.2),
          _offer("H100 SXM5 80GB", 2, 4.4), _offer("Tesla K80", 8, 0.1), _offer("H100 SXM5 80GB", 1, 1.0, "other")]
QUESTION = dict(engine="vllm", weights="bf16", kv_dtype=None, lengths=parse_lengths(None, 3000, 200), rate=4.0,
                slo_ttft=0.8, slo_tpot=0.03, requests=80)


def _no_ruling_out(monkeypatch):
    monkeypatch.setattr(serve_slo._Ruled, "ruled_out", lambda self, card, gpus: False)


def test_colocated_pick_is_the_cheapest_that_meets_with_or_without_ruling_out(monkeypatch):
    pick, tried, blocked, stopped = cheapest_for_slo(MODEL, CATALOG, OFFERS, **QUESTION)
    assert pick is not None and pick.meets and stopped is None
    assert all(not t.meets and t.usd_per_hour <= pick.usd_per_hour for t in tried[:-1])
    assert "Tesla K80" in blocked and all(t.card != "Tesla K80" for t in tried)
    _no_ruling_out(monkeypatch)
    brute, brute_tried, _, _ = cheapest_for_slo(MODEL, CATALOG, OFFERS, **QUESTION)
    assert (brute.card, brute.gpus, brute.usd_per_hour) == (pick.card, pick.gpus, pick.usd_per_hour)
    assert len(brute_tried) >= len(tried)


def test_a_pool_too_small_for_the_longest_request_rules_out_only_itself(monkeypatch):
    """Requests of 6,000 + 24,000 tokens: an L4's KV cache holds the prompt (prefill) but not the whole request
    (decode); the pick is the one found with no ruling out at all."""
    q = dict(QUESTION, lengths=parse_lengths(None, 6000, 24000), rate=0.05, slo_ttft=5.0, slo_tpot=0.05, requests=12)
    pick = cheapest_disaggregated(MODEL, CATALOG, OFFERS, **q).pick
    _no_ruling_out(monkeypatch)
    brute = cheapest_disaggregated(MODEL, CATALOG, OFFERS, **q).pick
    assert pick is not None and brute is not None and pick.to_dict()["usd_per_hour"] == brute.usd_per_hour
    assert (pick.prefill, pick.decode) == (brute.prefill, brute.decode)


def test_disaggregated_pick_is_the_cheapest_mix_that_meets_with_or_without_ruling_out(monkeypatch):
    pick, tried, blocked, _ = cheapest_disaggregated(MODEL, CATALOG, OFFERS, **QUESTION)
    assert pick is not None and pick.meets
    assert all(not t.meets and t.usd_per_hour <= pick.usd_per_hour for t in tried[:-1])
    assert "Tesla K80" in blocked
    for mix in tried:
        for pool in (mix.prefill, mix.decode):
            assert cannot_run(CATALOG.get(pool.card), ("vllm",)) is None
    _no_ruling_out(monkeypatch)
    brute, brute_tried, _, _ = cheapest_disaggregated(MODEL, CATALOG, OFFERS, **QUESTION)
    assert brute.usd_per_hour == pytest.approx(pick.usd_per_hour)
    assert len(brute_tried) > len(tried)  # the rule saved simulations and lost nothing


def test_mixes_pair_offers_of_one_provider_and_region_and_split_one_node():
    market = serve_slo._Market(MODEL, CATALOG, OFFERS, "vllm", "bf16", None)
    mixes = list(serve_slo._mixes(market))
    two = [m for m in mixes if len(m.offers) == 2]
    assert two and all(m.link == "network" for m in two)
    # the other provider's lone offer pairs only with a second instance of itself
    assert all(m.offers == ("other x", "other x") for m in two if "other x" in m.offers)
    splits = {(m.prefill.card, m.prefill.gpus, m.decode.gpus) for m in mixes if len(m.offers) == 1}
    assert ("L4", 1, 3) in splits and ("L4", 2, 2) in splits and ("H100 SXM5 80GB", 1, 1) in splits
    assert not any(m.prefill.card == "Tesla K80" or m.decode.card == "Tesla K80" for m in mixes)


@pytest.mark.parametrize(("card", "kind"), [("H100 SXM5 80GB", "nvlink"), ("A100 PCIe 80GB", "pcie"),
                                            ("GeForce RTX 3090", "pcie"), ("L40S", "pcie")])
def test_one_node_kv_link_is_nvlink_only_where_it_joins_the_node(card, kind):
    """A PCIe card's NVLink figure is a bridge between two cards: a node of them sends KV caches over PCIe."""
    gpu_figures = card_figures(CATALOG.get(card))
    assert kv_link(None, gpu_figures, gpu_figures, 4).kind == kind
    assert kv_link(None, gpu_figures, gpu_figures, 16).kind == "network"


def test_recommend_disaggregated_cli(capsys):
    assert main(["recommend", "llama-3.1-8b", "--rate", "4", "--p99-ttft", "800ms", "--p99-tpot", "30ms",
                 "--input-len", "3000", "--output-len", "200", "--requests", "80", "--disaggregated", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    dis = d["disaggregated"]
    assert dis["pick"]["meets"] and dis["pick"]["prefill"]["gpus"] >= 1 and dis["pick"]["decode"]["gpus"] >= 1
    want = "colocated" if d["pick"]["usd_per_hour"] < dis["pick"]["usd_per_hour"] else "disaggregated"
    assert dis["cheaper"] in (want, "equal")
    assert main(["recommend", "llama-3.1-8b", "--rate", "4", "--p99-ttft", "800ms", "--p99-tpot", "30ms",
                 "--input-len", "3000", "--output-len", "200", "--requests", "80", "--disaggregated"]) == 0
    out = capsys.readouterr().out
    assert "cheapest disaggregated mix that meets them" in out and "cheaper way to meet them" in out


@pytest.mark.parametrize(("argv", "words"), [
    (["--disaggregated"], "--rate"),
    (["--disaggregated", "--p99-ttft", "1s"], "--rate"),
    (["--rate", "1", "--p99-ttft", "1s", "--serve-engine", "llamacpp", "--disaggregated"], "llamacpp"),
])
def test_recommend_disaggregated_refuses_in_one_line(capsys, argv, words):
    assert main(["recommend", "llama-3.1-8b", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and words in err


@pytest.mark.slow  # doc sync: both searches over the whole snapshot (about 5 s)
def test_the_docs_example_where_disaggregated_is_cheaper(capsys):
    """docs/serving.md, "The cheapest disaggregated mix": the figures it states, on the committed price snapshot."""
    assert main(["recommend", "llama-3.1-8b", "--serve-engine", "vllm", "--rate", "10", "--p99-ttft", "500ms",
                 "--p99-tpot", "15ms", "--input-len", "3000", "--output-len", "200", "--disaggregated", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    pick, dis = d["pick"], d["disaggregated"]["pick"]
    assert (pick["gpus"], pick["card"], round(pick["usd_per_hour"], 2)) == (1, "B200", 3.79)
    assert round(pick["p99_tpot_s"] * 1e3, 1) == 9.2
    assert (dis["prefill"]["gpus"], dis["decode"]["gpus"], dis["decode"]["card"]) == (1, 1, "H100 SXM5 80GB")
    assert round(dis["usd_per_hour"], 2) == 2.58 and d["disaggregated"]["cheaper"] == "disaggregated"
    assert (round(dis["p99_ttft_s"] * 1e3), round(dis["p99_tpot_s"] * 1e3, 1)) == (492, 10.5)


def test_api_serving_picks_is_what_recommend_prints(capsys):
    from gpuadvisor import api

    r = api.serving_picks("llama-3.1-8b", rate=4.0, p99_ttft_s=0.8, p99_tpot_s=0.03, input_len=3000, output_len=200,
                          offers=OFFERS, requests=80, disaggregated=True)
    direct = cheapest_disaggregated(MODEL, CATALOG, OFFERS, **QUESTION).pick
    assert r.disaggregated.to_dict() == direct.to_dict()
    assert r.colocated.meets and r.cheaper in ("colocated", "disaggregated", "equal")
    assert "Tesla K80" in r.cannot_run
    with pytest.raises(UserError, match="llamacpp"):
        api.serving_picks("llama-3.1-8b", rate=1.0, p99_ttft_s=1.0, engine="llamacpp", offers=OFFERS,
                          disaggregated=True)


def test_a_search_past_its_budget_of_simulated_steps_stops_and_says_why(capsys):
    """70B with 8,000-token prompts at 50 req/s on the whole snapshot would simulate for minutes: each search stops
    once it has simulated SEARCH_STEPS scheduler iterations, and says so in one line (here a smaller budget)."""
    from gpuadvisor.advisor.market import offers_for

    offers, _ = offers_for([], None, spot=False)  # the shipped snapshot: options enough to spend any budget
    q = dict(QUESTION, rate=50.0, lengths=parse_lengths(None, 8000, 1000), slo_ttft=0.2, slo_tpot=0.01)
    for search in (cheapest_for_slo, cheapest_disaggregated):
        pick, tried, _, stopped = search(resolve_model("llama-3.1-70b"), CATALOG, offers, steps=20_000, **q)
        assert pick is None and tried and stopped and "budget of 20,000" in stopped
        steps = [t.figures["iterations"] * t.figures["arrival_draws"] for t in tried]  # every draw of an open loop
        assert sum(steps[:-1]) < 20_000 <= sum(steps)


def test_a_share_of_one_gpu_is_never_offered_as_a_card():
    """AWS's g6f.large is an eighth of an L4 (3 GiB) at $0.20/h: the serving search had taken it for a whole L4, the
    cheapest offer of that card, and recommended it (gpt-oss-20b at 1 request/s)."""
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Share(FakeOffer):
        fractional: bool = True

    share = Share("aws", "g6f.large", "L4", 1, 0.01, region="r1")
    pick, tried, _, _ = cheapest_for_slo(MODEL, CATALOG, [*OFFERS, share], **QUESTION)
    assert pick is not None
    assert all("g6f.large" not in t.offer for t in [*tried, pick])
    assert all("g6f.large" not in entry for _, entry in serve_slo._Market(
        MODEL, CATALOG, [share], "vllm", "bf16", None).best.values())
