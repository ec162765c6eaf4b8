"""One purchase price basis, chosen by the user: `new` (list and launch prices, the default) or
`street` (dated street and used prices); every card keeps its new price where one is known, the
output says which basis was used, and a card without the chosen basis says it fell back."""

from __future__ import annotations

import json

import pytest

from gpuadvisor.advisor.options import purchase_of
from gpuadvisor.catalog import load_catalog
from gpuadvisor.cli import main


@pytest.fixture(scope="module")
def cards():
    return {c.name: c for c in load_catalog().cards}


@pytest.mark.parametrize("name", ["GeForce RTX 3090", "Quadro RTX 5000", "Quadro RTX 6000", "Tesla P40",
                                  "GeForce RTX 4090", "RTX PRO 6000 Blackwell"])
def test_cards_that_carried_only_a_street_price_now_have_a_sourced_new_price(cards, name):
    c = cards[name]
    assert c.purchase is not None and c.purchase.kind == "list" and c.purchase.source.startswith("https://")
    assert c.street is not None and c.street.kind in ("street", "used") and len(c.street.date) >= 7
    assert c.street.usd != c.purchase.usd


def test_no_card_carries_a_street_price_as_its_new_price(cards):
    assert all(c.purchase is None or c.purchase.kind in ("list", "estimate") for c in cards.values())
    assert all(c.street is None or c.street.kind in ("street", "used") for c in cards.values())


def test_purchase_of_on_each_basis_and_the_fallback(cards):
    assert purchase_of(cards["GeForce RTX 3090"], "new")[:2] == (1499.0, "list")
    assert purchase_of(cards["GeForce RTX 3090"], "street")[:2] == (750.0, "used")
    assert purchase_of(cards["GeForce RTX 2080"], "street")[1] == "list, no street"  # no street price known
    assert purchase_of(cards["RTX A4000"], "new")[1] == "street, no new"  # no sourced list price yet


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("basis", ["new", "street"])
def test_recommend_says_which_basis_it_used(capsys, basis):
    rc, out, _ = run(capsys, "recommend", "llama-3.1-8b", "--tok-s", "30", "--price-basis", basis)
    assert rc == 0 and f"purchase price basis: {basis}:" in out
    rc, out, _ = run(capsys, "recommend", "llama-3.1-8b", "--tok-s", "30", "--price-basis", basis, "--json")
    d = json.loads(out)
    assert rc == 0 and d["price_basis"] == basis
    assert any(n.startswith(f"purchase price basis: {basis}") for n in d["notes"])


def test_the_basis_changes_the_price_of_a_card(capsys):
    prices = {}
    for basis in ("new", "street"):
        _, out, _ = run(capsys, "recommend", "llama-3.1-8b", "--tok-s", "30", "--buy-only", "--only", "3090",
                         "--price-basis", basis, "--json")
        buys = [p for p in json.loads(out)["picks"].values() if p["option"]["hardware"]["kind"] == "buy"]
        prices[basis] = {p["option"]["hardware"]["purchase_usd"] for p in buys}
    assert prices == {"new": {1499.0}, "street": {750.0}}


def test_a_bad_basis_is_one_line_exit_2(capsys):
    rc, _, err = run(capsys, "recommend", "llama-3.1-8b", "--price-basis", "used")
    assert rc == 2 and "--price-basis" in err and "invalid choice" in err and err.count("\n") == 1


def test_a_basis_that_would_be_ignored_is_refused(capsys):
    rc, _, err = run(capsys, "recommend", "llama-3.1-8b", "--price-basis", "street", "--rent-only")
    assert rc == 2 and err.count("\n") == 1 and "--rent-only evaluates no purchase" in err


def test_the_speed_ranking_prices_purchases_on_the_basis(capsys):
    costs = {}
    for basis in ("new", "street"):
        rc, out, _ = run(capsys, "recommend", "llama-3.1-8b", "--rank", "--price-basis", basis, "--json")
        d = json.loads(out)
        assert rc == 0 and d["price_basis"] == basis
        costs[basis] = {(o["card"], o["num_gpus"]): o["cost_usd"] for o in d["options"]}
    assert costs["new"][("GeForce RTX 3090", 1)] == 1499 and costs["street"][("GeForce RTX 3090", 1)] == 750
