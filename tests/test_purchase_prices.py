"""tools/purchase_prices.py: the CSV of purchase prices is what the catalog's `purchase` lines say."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from gpuadvisor.catalog import load_catalog, load_file

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "purchase_prices.py"
if not TOOL.is_file():  # an sdist carries tests/ but not tools/
    pytest.skip("tools/purchase_prices.py is not in this source tree", allow_module_level=True)
from tools import purchase_prices as pp  # noqa: E402  (after the sdist skip)

HEADER = "card,usd,kind,source,date,note\n"


@pytest.fixture
def workspace(tmp_path, capsys):
    """A copy of two shipped catalog files with every price cleared, and an empty price table."""
    cat = tmp_path / "catalog"
    cat.mkdir()
    for name in ("nvidia-jetson.yaml", "amd-radeon.yaml"):
        shutil.copy(ROOT / "catalog" / name, cat / name)
    csv = tmp_path / "prices.csv"
    csv.write_text(HEADER)
    assert pp.main(["--csv", str(csv), "--catalog", str(cat)]) == 0
    assert all(c.purchase is None for p in cat.iterdir() for c in load_file(p))
    capsys.readouterr()
    return cat, csv


def run(capsys, *argv):
    code = pp.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_shipped_catalog_agrees_with_the_csv(capsys):
    code, out, err = run(capsys, "--check")
    assert code == 0, err
    assert "catalog agrees" in out


def test_write_touches_only_purchase_lines_and_check_then_passes(capsys, workspace):
    cat, csv = workspace
    csv.write_text(HEADER + "Jetson Nano,99,list,https://example.com/nano,2019-03-18,\n"
                   "Radeon RX 7600,269,list,https://example.com/rx7600-launch,2023-05,\n")
    street = csv.parent / "street.csv"
    street.write_text(HEADER + "Radeon RX 7600,259.99,street,https://example.com/rx7600,2025-06,"
                      '"cheapest new, in stock"\n')
    args = ("--csv", str(csv), "--street-csv", str(street), "--catalog", str(cat))
    before = {p.name: p.read_text().splitlines() for p in cat.iterdir()}
    code, _, err = run(capsys, *args, "--check")
    assert code == 1 and "2 cards disagree" in err
    code, out, _ = run(capsys, *args)
    assert code == 0 and "updated 2 cards" in out and "1 with a street price (1 street)" in out
    for p in cat.iterdir():
        after = Counter(p.read_text().splitlines())
        was = Counter(before[p.name])
        added, removed = list((after - was).elements()), list((was - after).elements())
        assert len(removed) == 1 and "purchase: null" in removed[0]
        assert len(added) == (2 if p.name == "amd-radeon.yaml" else 1)  # + the street line
        assert all("purchase:" in a or "street:" in a for a in added)
    rx = {c.name: c for c in load_file(cat / "amd-radeon.yaml")}["Radeon RX 7600"]
    assert rx.purchase.usd == 269 and rx.purchase.kind == "list"
    assert rx.street.usd == 259.99 and rx.street.kind == "street" and rx.street.note == "cheapest new, in stock"
    assert {c.name: c for c in load_file(cat / "nvidia-jetson.yaml")}["Jetson Nano"].purchase.date == "2019-03-18"
    assert run(capsys, *args, "--check")[0] == 0
    # dropping a row sets the card back to null, and its street line goes
    csv.write_text(HEADER + "Jetson Nano,99,list,https://example.com/nano,2019-03-18,\n")
    street.write_text(HEADER)
    assert run(capsys, *args)[0] == 0
    rx = {c.name: c for c in load_file(cat / "amd-radeon.yaml")}["Radeon RX 7600"]
    assert rx.purchase is None and rx.street is None


def test_a_street_price_in_the_new_price_table_is_refused(capsys, workspace):
    cat, csv = workspace
    csv.write_text(HEADER + "Radeon RX 7600,259.99,street,https://example.com/rx7600,2025-06,\n")
    code, _, err = run(capsys, "--csv", str(csv), "--catalog", str(cat))
    assert code == 2 and err.count("\n") == 1
    assert "kind 'street' does not belong in this file (here: list, estimate)" in err


def test_missing_purchase_line_is_inserted_after_launch_price(capsys, workspace):
    cat, csv = workspace
    path = cat / "nvidia-jetson.yaml"
    path.write_text("".join(line for line in path.read_text().splitlines(keepends=True) if "purchase:" not in line))
    assert run(capsys, "--csv", str(csv), "--catalog", str(cat))[0] == 0
    lines = path.read_text().splitlines()
    idx = [i for i, line in enumerate(lines) if line.strip() == "purchase: null"]
    assert idx and all(lines[i - 1].strip().startswith("launch_price_usd:") for i in idx)
    assert all(c.purchase is None for c in load_file(path))


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ("No Such Card,100,list,https://example.com,2025-01,", r"no catalog card named 'No Such Card'"),
        ("Jetson Nano,-1,list,https://example.com,2025-01,", r"row 2 \(Jetson Nano\): field 'usd'"),
        ("Jetson Nano,99,msrp,https://example.com,2025-01,", r"row 2 \(Jetson Nano\): field 'kind'"),
        ("Jetson Nano,99,list,www.example.com,2025-01,", r"field 'source': Value error, must be an http"),
        ("Jetson Nano,99,list,https://example.com,01/2025,", r"field 'date'"),
        ("Jetson Nano,99,list,https://example.com,2025-01\nJetson Nano,98,list,https://example.com,2025-01,",
         r"row 2 \(Jetson Nano\): expected 6 columns"),
        ("Jetson Nano,99,list,https://example.com,2025-01,\nJetson Nano,98,list,https://example.com,2025-01,",
         r"row 3 \(Jetson Nano\): a second row"),
    ],
    ids=["unknown-card", "negative", "kind", "source", "date", "short-row", "duplicate"],
)
def test_bad_rows_are_one_line_exit_2_and_change_nothing(capsys, workspace, row, expected):
    cat, csv = workspace
    csv.write_text(HEADER + row + "\n")
    before = {p.name: p.read_text() for p in cat.iterdir()}
    code, out, err = run(capsys, "--csv", str(csv), "--catalog", str(cat))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert re.search(expected, err), err
    assert {p.name: p.read_text() for p in cat.iterdir()} == before


def test_bad_header_is_an_error(capsys, workspace):
    cat, csv = workspace
    csv.write_text("name,price\nJetson Nano,99\n")
    code, _, err = run(capsys, "--csv", str(csv), "--catalog", str(cat))
    assert code == 2 and "header must be card,usd,kind,source,date,note" in err


def test_written_catalog_still_loads(capsys, workspace):
    cat, csv = workspace
    row = 'Radeon PRO W7900,3499,list,https://example.com/a?b=1&c=2,2025-05-02,"50% off: ""deal"""'
    csv.write_text(HEADER + row + "\n")
    assert run(capsys, "--csv", str(csv), "--catalog", str(cat))[0] == 0
    card = load_catalog([cat], use_env=False).get("Radeon PRO W7900")
    assert card.purchase.source == "https://example.com/a?b=1&c=2" and card.purchase.note == '50% off: "deal"'


# --- every data-center card: a dated, sourced price, or a sourced reason it is not sold on its own ---------

DATE = re.compile(r"\d{4}-\d\d(-\d\d)?")


def test_every_datacenter_card_has_a_price_or_a_sourced_reason_it_is_not_sold_on_its_own():
    """The rule: a data-center card carries a dated price with its source (new: list or estimate; street or
    used), or, when it is not sold on its own (cloud-only, systems-only), a dated `not_sold` reason with the
    page that says so, and then no price. The only exceptions are the cards in no-public-price.csv, each
    with the day and the searches that found no citable price; their number may only go down."""
    marks = pp.read_no_public_price(pp.DEFAULT_NO_PRICE_CSV)
    catalog = load_catalog()
    datacenter = [c for c in catalog.cards if c.family in ("datacenter", "instinct")]
    for card in datacenter:
        prices = [p for p in (card.purchase, card.street) if p is not None]
        if card.not_sold is not None:
            assert not prices and card.name not in marks, card.name
            assert card.not_sold.source.startswith("https://") and DATE.fullmatch(card.not_sold.date), card.name
            continue
        if card.name in marks:
            assert not prices, f"{card.name} has a price and a no-public-price mark"
            continue
        assert prices, f"{card.name}: a data-center card with no price, no not-sold reason and no no-public-price mark"
        for price in prices:
            assert price.source.startswith("https://") and DATE.fullmatch(price.date), card.name
    for mark in marks.values():  # each exception says when and how it was searched
        assert mark.searched >= "2026" and mark.searches and mark.note
        assert catalog.get(mark.card).family in ("datacenter", "instinct"), mark.card
    # 2026-12-04: 24 before; 7 priced, 4 marked not sold on their own (T4G, A10G, GH200 x2) -> 13; then 8 more priced
    # (MI210, MI250, A2, A16, M60, V100 SXM2 16GB, H200 NVL, RTX PRO 6000 Server) -> 5; 2026-12-05: the last five
    # (MI25, MI300A, MI325X, P100 SXM2, A800 PCIe) priced, each with what its figure is and how rough -> 0
    assert not marks
    not_sold = {c.name: c.not_sold.why for c in datacenter if c.not_sold is not None}
    assert not_sold == {"T4G": "cloud-only", "A10G": "cloud-only", "GH200 96GB": "systems-only",
                        "GH200 144GB": "systems-only"}


def test_the_2026_12_prices_name_their_card():
    """The prices found on 2026-12-04 are on the card their source names (edition and memory)."""
    catalog = load_catalog()
    nvl = catalog.get("H100 NVL 94GB").street
    assert nvl is not None and nvl.kind == "street" and "H100 NVL - 94GB" in nvl.note and 20000 < nvl.usd < 40000
    for name, row in (("A10", "'NVIDIA A10 PCIe'"), ("A100 SXM4 40GB", "'NVIDIA A100 SXM4 40 GB'"),
                      ("Tesla V100 PCIe 16GB", "'NVIDIA Tesla V100 PCIe 16 GB'"),
                      ("Tesla V100 PCIe 32GB", "'NVIDIA Tesla V100 PCIe 32 GB'"),
                      ("Instinct MI250X", "'AMD Radeon Instinct MI250X'"), ("B100", "'NVIDIA B100'")):
        price = catalog.get(name).purchase
        assert price is not None and price.kind == "estimate" and row in price.note, name
        assert "/blob/d62de22b9128a2598b039c06346e350f918b3810/" in price.source, name  # Epoch's CSV at a commit


def test_the_second_2026_12_prices_name_their_card_and_source_at_a_commit():
    """The eight data-center prices of the second 2026-12-04 pass: each names the edition of its card, is read from
    a repository at a commit, and a board price is split over the catalog card's share of the board."""
    catalog = load_catalog()
    hf = "/huggingface/huggingface.js/blob/fe42e68017ffc76d09922ea8f9b38a6964345710/packages/tasks/src/"
    for name, row, usd in (("Instinct MI210", "'MI210' (64 GB", 8000), ("Instinct MI250", "'MI250' (128 GB", 10000),
                           ("A2", "'A2' (16 GB, 60 W", 1000)):
        price = catalog.get(name).purchase
        assert price is not None and price.kind == "estimate" and price.usd == usd and row in price.note, name
        assert hf in price.source and price.date == "2026-05-13", name
    v100 = catalog.get("Tesla V100 SXM2 16GB").purchase
    assert v100 is not None and v100.kind == "estimate" and "'NVIDIA Tesla V100 SXM2' (16 GB per board" in v100.note
    assert "/blob/d62de22b9128a2598b039c06346e350f918b3810/" in v100.source
    poet = "/activescott/gpu-agent/blob/be14fc82c9a2918530ea8752b18044d4dd81602a/data/gpu-data/"
    for name, file in (("H200 NVL 141GB", "nvidia-h200-nvl.yaml"),
                       ("RTX PRO 6000 Blackwell Server Edition", "nvidia-rtx-pro-6000-blackwell-server.yaml")):
        price = catalog.get(name).purchase
        assert price is not None and price.kind == "estimate" and price.source.endswith(poet + file), name
    ebay = "/Fahrnetic/compute-value/blob/3089720cc6d01428d45d292732ca1ce2f36c3e76/server/ebay-market.ts"
    for name, listing in (("Instinct MI210", "ebay.com/itm/127887816422"),
                          ("H200 NVL 141GB", "ebay.com/itm/206373904488"), ("A16", "ebay.com/itm/327303624809")):
        street = catalog.get(name).street
        assert street is not None and street.kind == "used" and street.date == "2026-08-11", name
        assert street.source.endswith(ebay) and listing in street.note, name
    assert catalog.get("A16").street.usd == round(2359.99 / 4)  # one of the board's four GPUs
    m60 = catalog.get("Tesla M60").street
    assert m60 is not None and m60.usd == 250 / 2 and "two-GPU board" in m60.note  # one of the board's two GPUs


def test_the_no_public_price_mark_is_checked(tmp_path, capsys):
    header = ",".join(pp.NO_PRICE_COLUMNS) + "\n"
    bad = {
        "Tesla M60,2026-11,pages: x,none found\n": "searched must be the day of the search",
        "Tesla M60,2026-11-27,,none found\n": "searches must list what was searched",
        "Tesla M60,2026-11-27,asked around,none found\n": "searches must list what was searched",
        "Tesla M60,2026-11-27,pages: x,\n": "the note must say what the searches found",
        "Tesla M60,2026-11-27,pages: x,none\nTesla M60,2026-11-27,pages: y,none\n": "a second row for the card",
    }
    for body, message in bad.items():
        path = tmp_path / "marks.csv"
        path.write_text(header + body)
        with pytest.raises(pp.UserError, match=message):
            pp.read_no_public_price(path)
    path = tmp_path / "marks.csv"
    path.write_text(header + "Tesla M60,2026-11-27,pages: Tesla M60 price | github: o/r README.md@abc,none found\n")
    marks = pp.read_no_public_price(path)
    assert marks["Tesla M60"].searches == ("pages: Tesla M60 price", "github: o/r README.md@abc")
    pp.check_no_public_price(marks, {"Tesla M60"}, {}, {}, path)
    with pytest.raises(pp.UserError, match="no catalog card named 'Tesla M60'"):
        pp.check_no_public_price(marks, {"A2"}, {}, {}, path)
    priced = pp.read_prices(ROOT / "tools" / "data" / "street-prices.csv", pp.STREET_KINDS)
    with pytest.raises(pp.UserError, match="has a price now: take its no-public-price row out"):
        pp.check_no_public_price({"Tesla P4": marks["Tesla M60"]}, {"Tesla P4"}, {}, priced, path)
