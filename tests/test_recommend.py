"""Ranking catalog cards: fits first, deterministic, reasons for misfits, measured figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuadvisor.advisor.ranking import layout, recommend, why_not
from gpuadvisor.catalog import Catalog, load_catalog
from gpuadvisor.core import results
from gpuadvisor.core.errors import UserError
from gpuadvisor.workload import make_workload

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(use_env=False)


def test_fits_first_and_sorted(catalog):
    opts = recommend(make_workload("llama-2-7b"), catalog)
    fits = [o.fits for o in opts]
    assert fits == sorted(fits, reverse=True)
    times = [o.time_s for o in opts if o.fits and o.time_s is not None]
    assert times == sorted(times)
    assert any(o.fits for o in opts)


def test_reasons_for_cards_that_do_not_fit(catalog):
    opts = recommend(make_workload("llama-2-70b", batch=1, seq_len=2048), catalog, gpu_counts=(1,))
    bad = [o for o in opts if not o.fits and o.memory_gib_per_gpu]
    assert bad
    for o in bad:
        assert o.reason.startswith(f"needs {o.needed_gib:.1f} GiB per GPU, has ")
    assert why_not(opts)


def test_multi_gpu_layout():
    w = make_workload("llama-2-70b")
    assert layout(w, 8).tensor_parallel == 8
    t = make_workload("llama-2-7b", mode="training")
    assert layout(t, 4).sharding == "zero3"
    assert layout(t.with_(num_gpus=1, sharding="zero2"), 4).sharding == "zero2"


def test_price_per_hour_and_energy(catalog):
    w = make_workload("llama-2-7b", mode="training", batch=8, seq_len=2048, train_tokens=1e8)
    opts = recommend(w, catalog, price_per_hour=2.0, sort_by="cost", gpu_counts=(1, 8))
    o = next(o for o in opts if o.fits and o.cost_usd is not None)
    assert o.cost_basis == "per hour"
    assert o.cost_usd == pytest.approx(2.0 * o.num_gpus * o.time_s / 3600)
    assert o.energy_wh == pytest.approx(o.hardware.tdp_w * o.num_gpus * o.time_s / 3600)
    costs = [x.cost_usd for x in opts if x.fits and x.cost_usd is not None]
    assert costs == sorted(costs)


def test_measured_figures_replace_datasheet(catalog):
    run = results.load(DATA / "fake-probe.json")
    w = make_workload("llama-2-7b")
    opts = recommend(w, catalog, measured=run, gpu_counts=(1,))
    used = [o for o in opts if o.uses_measured]
    assert used and all(o.hardware.source == "measured" for o in used)
    plain = {o.card: o for o in recommend(w, catalog, gpu_counts=(1,))}
    assert used[0].time_s != plain[used[0].card].time_s


def test_bad_arguments(catalog):
    w = make_workload("gpt2")
    with pytest.raises(UserError):
        recommend(w, catalog, sort_by="speed")
    with pytest.raises(UserError):
        recommend(w, catalog, gpu_counts=(0,))
    with pytest.raises(UserError):
        recommend(w, catalog, price_per_hour=-1)


@settings(max_examples=15, deadline=None)
@given(model=st.sampled_from(["gpt2", "llama-2-7b", "mixtral-8x7b", "70b"]),
       mode=st.sampled_from(["inference", "training", "lora"]), batch=st.integers(1, 16),
       sort_by=st.sampled_from(["time", "cost", "energy", "memory"]), seed=st.randoms())
def test_ranking_is_deterministic(catalog, model, mode, batch, sort_by, seed):
    w = make_workload(model, mode=mode, batch=batch, seq_len=512)
    a = recommend(w, catalog, sort_by=sort_by)
    cards = list(catalog.cards)
    seed.shuffle(cards)
    b = recommend(w, Catalog(cards=tuple(cards), origin=catalog.origin), sort_by=sort_by)
    key = [(o.card, o.num_gpus, o.fits) for o in a]
    assert key == [(o.card, o.num_gpus, o.fits) for o in b]
    assert json.dumps([o.to_dict() for o in a], default=str) == json.dumps([o.to_dict() for o in b], default=str)


def test_one_per_card_keeps_fewest_fitting_then_the_rest_with_reasons():
    from gpuadvisor.advisor.ranking import one_per_card, recommend
    from gpuadvisor.catalog import load_catalog
    from gpuadvisor.workload import make_workload

    catalog = load_catalog(use_env=False)
    options = recommend(make_workload("llama-2-70b", mode="inference", dtype="bf16"), catalog)
    rows = one_per_card(options)
    assert len(rows) == len({o.card for o in options}) == len(catalog)
    fit = [o for o in rows if o.fits]
    assert fit and rows[: len(fit)] == fit  # fitting cards first, in rank order
    for o in fit:
        assert o.num_gpus == min(x.num_gpus for x in options if x.card == o.card and x.fits)
    for o in rows[len(fit):]:
        assert not o.fits and "needs" in o.reason
        assert o.num_gpus == max(x.num_gpus for x in options if x.card == o.card)


def test_edge_modules_are_never_combined():
    from gpuadvisor.advisor.ranking import recommend
    from gpuadvisor.catalog import load_catalog
    from gpuadvisor.workload import make_workload

    catalog = load_catalog(use_env=False)
    options = recommend(make_workload("llama-3-8b"), catalog)
    jetsons = {c.name for c in catalog.cards if c.family == "jetson"}
    assert jetsons and all(o.num_gpus == 1 for o in options if o.card in jetsons)
    assert not any(o.fits for o in options if o.card == "Jetson Nano")
