"""The advisor core: targets, options, frontier, picks, closest miss, buy versus rent."""

from __future__ import annotations

import math

import pytest
from fake_prices import OFFERS, FakeOffer
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuadvisor.advisor import Targets, advise, frontier, parse_duration_h
from gpuadvisor.advisor.options import Hardware, build_options
from gpuadvisor.catalog import load_catalog
from gpuadvisor.core.errors import UserError
from gpuadvisor.workload import make_workload


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(use_env=False)


@pytest.mark.parametrize(
    ("kw", "msg"),
    [
        ({"tokens_per_s": 0}, "tokens/s per user must be > 0"),
        ({"tokens_per_s": -5}, "tokens/s per user must be > 0"),
        ({"users": 0}, "concurrent users must be > 0"),
        ({"ttft_s": -1}, "time to first token must be > 0"),
        ({"deadline_h": 0}, "deadline must be > 0"),
        ({"usd_per_hour": 0}, "budget per hour must be > 0"),
        ({"budget_usd": -100}, "budget must be > 0"),
        ({"tokens": 0}, "token budget must be > 0"),
        ({"hours_per_month": 800}, "at most 730"),
        ({"utilisation": 1.5}, "utilisation"),
        ({"usd_per_kwh": -0.1}, "electricity price must be > 0"),
        ({"context": 100, "output_tokens": 256}, "must exceed the output tokens"),
        ({"tokens_per_s": math.nan}, "finite"),
    ],
)
def test_bad_targets_are_one_line_user_errors(kw, msg):
    with pytest.raises(UserError, match=msg):
        Targets(**kw).validate()


def test_free_electricity_is_allowed_and_durations_parse():
    assert Targets(usd_per_kwh=0).validate().electricity_usd_h(450, 1) == 0
    assert parse_duration_h("14d") == 336 and parse_duration_h("90m") == 1.5 and parse_duration_h("24") == 24
    for bad in ("soon", "-3h", "0d"):
        with pytest.raises(UserError):
            parse_duration_h(bad)


def test_serving_defaults_to_twenty_tokens_per_second_for_one_user(catalog):
    a = advise(make_workload("llama-3-8b"), catalog, offers=OFFERS)
    assert a.targets.tokens_per_s == 20 and a.targets.users == 1
    assert all(o.per_user_tokens_per_s >= 20 for o in a.options if o.meets)


def test_modest_target_picks_a_single_small_card_not_a_server(catalog):
    a = advise(make_workload("llama-3.1-8b"), catalog, Targets(tokens_per_s=30), offers=OFFERS)
    rent = a.picks["cheapest_rental"].option
    assert rent.hardware.gpus == 1 and rent.hardware.card == "GeForce RTX 4090"
    assert rent.per_user_tokens_per_s >= 30
    buy = a.picks["cheapest_purchase"].option
    assert buy.hardware.gpus == 1 and 16 <= buy.memory_gib_per_gpu <= 48
    # the L4 (300 GB/s) cannot stream 16 GB of bf16 weights 30 times a second
    l4 = next(o for o in a.options if o.hardware.card == "L4" and o.hardware.gpus == 1)
    assert l4.fits and not l4.meets and l4.binds == "bandwidth" and "tok/s per user" in l4.misses[0]


def test_70b_for_32_users_at_8k_needs_kv_room_beyond_two_80gb_cards(catalog):
    a = advise(make_workload("llama-3.1-70b"), catalog, Targets(users=32, context=8192), offers=OFFERS)
    two = next(o for o in a.options if o.hardware.card == "A100 SXM4 80GB" and o.hardware.gpus == 2)
    assert not two.fits and "KV cache room" in two.misses[0]
    pick = a.picks["cheapest"].option
    assert pick.hardware.gpus >= 4 and pick.max_users >= 32
    assert pick.usd_per_mtok == pytest.approx(pick.usd_per_hour / (pick.aggregate_tokens_per_s * 3600) * 1e6)


def test_training_meets_a_deadline_and_prices_the_job(catalog):
    w = make_workload("llama-3.2-1b", mode="training", batch=8, seq_len=2048)
    a = advise(w, catalog, Targets(tokens=100e9, deadline_h=14 * 24), offers=OFFERS)
    pick = a.picks["cheapest"].option
    assert pick.hardware.card.startswith("H100") and pick.wall_s <= 14 * 24 * 3600
    assert pick.job_usd == pytest.approx(pick.usd_per_hour * pick.wall_s / 3600)
    assert 1_000 < pick.job_usd < 20_000  # ~6e20 FLOPs: thousands of dollars of H100 time, not tens or millions
    slow = [o for o in a.options if o.fits and not o.meets]
    assert slow and all("deadline" in o.misses[0] for o in slow)


def test_frontier_is_pareto_and_sorted(catalog):
    a = advise(make_workload("mistral-7b"), catalog, Targets(tokens_per_s=10), offers=OFFERS)
    f = a.frontier
    assert f and [o.cost for o in f] == sorted(o.cost for o in f)
    assert all(f[i].time_s > f[i + 1].time_s for i in range(len(f) - 1))
    for o in a.options:
        if o.fits and o.cost is not None and o.time_s is not None and o.hardware.kind != "local":
            assert any(p.cost <= o.cost and p.time_s <= o.time_s for p in f)


_BASE = []


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.floats(0.1, 100), st.floats(0.001, 10)), min_size=1, max_size=30))
def test_frontier_property(points):
    from dataclasses import replace

    if not _BASE:
        _BASE.append(advise(make_workload("llama-3.2-1b"), load_catalog(use_env=False), offers=OFFERS[:1],
                            buy=False).options[0])
    base = _BASE[0]
    opts = [replace(base, usd_per_hour=c, tpot_s=t, hardware=replace(base.hardware, instance_type=str(i)))
            for i, (c, t) in enumerate(points)]
    f = frontier(opts)
    for o in opts:  # every option is dominated by (or is) a frontier point
        assert any(p.cost <= o.cost and p.time_s <= o.time_s for p in f)
    for p in f:  # no frontier point is strictly dominated
        assert not any(o.cost < p.cost and o.time_s < p.time_s for o in opts)


def test_nothing_meets_names_the_closest_and_what_it_would_take(catalog):
    a = advise(make_workload("llama-3.1-8b"), catalog, Targets(tokens_per_s=2000), offers=OFFERS)
    assert not a.picks and a.closest is not None
    assert "tok/s per user" in a.closest.line and "memory bandwidth" in a.what_it_would_take


def test_budget_per_hour_filters_and_fastest_within_budget_respects_it(catalog):
    a = advise(make_workload("llama-3.1-8b"), catalog, Targets(tokens_per_s=30, usd_per_hour=2.0), offers=OFFERS,
               buy=False)
    fast = a.picks["fastest_within_budget"].option
    assert fast.usd_per_hour <= 2.0
    assert all(o.usd_per_hour <= 2.0 for o in a.options if o.meets)


def test_modest_target_without_budget_names_no_flagship(catalog):
    """Without a budget there is no "fastest within budget": it would name the biggest server there is."""
    a = advise(make_workload("llama-3.1-8b"), catalog, Targets(tokens_per_s=30), offers=OFFERS)
    assert "fastest_within_budget" not in a.picks
    assert any("no budget set" in n for n in a.notes)
    assert all(p.option.hardware.gpus == 1 for k, p in a.picks.items() if k.startswith("cheapest_r"))


def test_buy_versus_rent_break_even_formula(catalog):
    offers = (FakeOffer("runpod", "1x_RTX4090", "GeForce RTX 4090", 1, 0.69),)
    t = Targets(tokens_per_s=30, hours_per_month=180, usd_per_kwh=0.2)
    a = advise(make_workload("llama-3.1-8b"), catalog, t, offers=offers, only=("RTX 4090",))
    be = a.buy_vs_rent
    assert be is not None and be.purchase.hardware.card == be.rental.hardware.card == "GeForce RTX 4090"
    price = be.purchase.hardware.purchase_usd
    elec = 450 * 0.8 / 1000 * 0.2  # TDP x utilisation x $/kWh
    assert be.electricity_usd_h == pytest.approx(elec)
    assert be.hours == pytest.approx(price / (0.69 - elec))
    assert be.months == pytest.approx(be.hours / 180)
    assert be.verdict == ("buy" if be.months <= 18 else "close" if be.months <= 36 else "rent")


def test_purchases_come_in_the_counts_people_buy(catalog):
    opts = build_options(make_workload("llama-3.1-70b"), catalog, Targets(), rent=False)
    for o in opts:
        fam = next(c.family for c in catalog.cards if c.name == o.hardware.card)
        form = next(c.form_factor for c in catalog.cards if c.name == o.hardware.card) or ""
        if fam in ("geforce", "radeon", "jetson"):
            assert o.hardware.gpus == 1
        if "SXM" in form or "OAM" in form:
            assert o.hardware.gpus in (4, 8)  # sold on baseboards, not one by one


def test_a_gpu_of_a_multi_gpu_board_is_bought_only_in_whole_boards(catalog):
    """The A16 (four GPUs on a board) and the K80 and M60 (two) are catalogued, and priced, per GPU; half an A16
    board is not for sale, so every purchase of one is a whole number of boards, priced as that many GPUs."""
    per_board = {c.name: c.gpus_per_board for c in catalog.cards if c.gpus_per_board > 1}
    assert per_board == {"Tesla K80": 2, "Tesla M60": 2, "A16": 4}
    opts = build_options(make_workload("llama-3.1-8b"), catalog, Targets(tokens_per_s=200), rent=False,
                         only=tuple(per_board), buy_counts={"datacenter": (1, 2, 3, 4, 8)})
    bought = {(o.hardware.card, o.hardware.gpus) for o in opts if o.hardware.kind == "buy"}
    assert ("A16", 4) in bought and ("A16", 8) in bought and ("Tesla M60", 2) in bought
    assert all(g % per_board[card] == 0 for card, g in bought), sorted(bought)
    a16 = next(o for o in opts if o.hardware.card == "A16" and o.hardware.gpus == 4)
    assert a16.hardware.purchase_usd == pytest.approx(4 * catalog.get("A16").street.usd)  # one board


def test_only_filters_cards_and_local_card_sits_beside_the_picks(catalog):
    a = advise(make_workload("llama-3.2-3b", dtype="int4"), catalog, Targets(tokens_per_s=10), only=("jetson",),
               rent=False)
    assert a.options and all("Jetson" in o.hardware.card for o in a.options)
    with pytest.raises(UserError, match="no catalog card matches"):
        advise(make_workload("llama-3.2-1b"), catalog, only=("nonexistent-xyz",))
    a = advise(make_workload("llama-3.1-8b"), catalog, Targets(tokens_per_s=30), offers=OFFERS,
               local_cards=("GeForce RTX 4090",))
    assert [o.hardware.kind for o in a.local] == ["local"]
    line = a.local_line()
    assert line.startswith("your GeForce RTX 4090 does this at ") and "per million tokens" in line
    assert all(p.option.hardware.kind != "local" for p in a.picks.values())


def test_local_machine_counts_every_gpu_and_uses_the_fewest_that_fit(catalog):
    """A 70B model does not fit one H200 but fits the two this machine has; an 8B fits one of them."""
    two = ("H200 SXM 141GB", "H200 SXM 141GB")
    big = advise(make_workload("llama-3.1-70b"), catalog, Targets(tokens_per_s=10), offers=OFFERS, local_cards=two)
    assert [(o.hardware.gpus, o.fits) for o in big.local] == [(2, True)]
    assert big.local_line().startswith("your 2x H200 SXM 141GB does this at ")
    small = advise(make_workload("llama-3.1-8b"), catalog, Targets(tokens_per_s=10), offers=OFFERS, local_cards=two)
    assert [(o.hardware.gpus, o.fits) for o in small.local] == [(1, True)]


def test_options_are_deterministic_and_unknown_cards_in_offers_are_skipped(catalog):
    w = make_workload("mistral-7b")
    one = [o.to_dict() for o in build_options(w, catalog, Targets(), offers=OFFERS)]
    two = [o.to_dict() for o in build_options(w, catalog, Targets(), offers=OFFERS)]
    assert one == two
    assert not any(o["hardware"]["provider"] == "nowhere" for o in one)


def test_diffusion_models_are_priced_per_request(catalog):
    a = advise(make_workload("sdxl", batch=2), catalog, offers=OFFERS)
    pick = a.picks["cheapest_purchase"].option
    assert pick.request_s and pick.usd_per_1k_requests and pick.per_user_tokens_per_s is None
    assert pick.memory_gib_per_gpu > 6  # SDXL's UNet in bf16 does not fit a 6 GB card (5.3 GiB measured at batch 2)
    assert all(o.usd_per_mtok is None for o in a.options)


def test_hardware_labels():
    assert Hardware("rent", "L4", 1, 0.8, provider="aws", instance_type="g6.xlarge", region="us-east-1").label == \
        "L4 (aws g6.xlarge in us-east-1)"
    assert Hardware("buy", "GeForce RTX 4090", 2).label == "buy 2x GeForce RTX 4090"


def test_a_multi_gpu_cheapest_rental_comes_with_the_cheapest_single_gpu(catalog):
    offers = (FakeOffer("hyper", "2x_A4000", "RTX A4000", 2, 0.30), FakeOffer("runpod", "1x_L40S", "L40S", 1, 0.86))
    a = advise(make_workload("llama-3.1-8b"), catalog, Targets(tokens_per_s=30), offers=offers, buy=False)
    assert a.picks["cheapest_rental"].option.hardware.gpus == 2
    assert a.picks["cheapest_single_gpu"].option.hardware.card == "L40S"
    a = advise(make_workload("llama-3.1-8b"), catalog, Targets(tokens_per_s=30), offers=offers[1:], buy=False)
    assert "cheapest_single_gpu" not in a.picks


def test_training_buy_versus_rent_prices_the_same_work(catalog):
    w = make_workload("llama-3-8b", mode="qlora", batch=4, seq_len=2048, checkpointing=True)
    a = advise(w, catalog, Targets(tokens=50e6, hours_per_month=180), offers=OFFERS)
    be = a.buy_vs_rent
    assert be is not None and be.rental is a.picks["cheapest_rental"].option
    assert be.rental_usd_h == pytest.approx(be.rental.job_usd / (be.purchase.wall_s / 3600))
    assert be.hours == pytest.approx(be.purchase.hardware.purchase_usd / (be.rental_usd_h - be.electricity_usd_h))
    # the purchase weighed is the "cheapest to buy" pick, so the two lines name one card
    assert be.purchase is a.picks["cheapest_purchase"].option
    assert be.verdict == "rent" and "one job" in be.line  # a one-off job: buying does not pay back
