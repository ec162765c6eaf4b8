"""Cards not sold on their own (AWS's A10G and T4G, the GH200 superchip): a sourced `not_sold` reason instead
of a price, written from tools/data/not-sold-separately.csv; the advisor never offers to buy one and says why."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from gpuadvisor import api
from gpuadvisor.catalog import load_catalog, load_file
from gpuadvisor.core.errors import UserError

ROOT = Path(__file__).resolve().parent.parent
if not (ROOT / "tools" / "purchase_prices.py").is_file():  # an sdist carries tests/ but not tools/
    pytest.skip("tools/purchase_prices.py is not in this source tree", allow_module_level=True)
from tools import purchase_prices as pp  # noqa: E402  (after the sdist skip)

PRICE_HEADER = ",".join(pp.COLUMNS) + "\n"
NOT_SOLD_HEADER = ",".join(pp.NOT_SOLD_COLUMNS) + "\n"


def test_the_shipped_not_sold_cards_carry_a_dated_source_and_no_price():
    catalog = load_catalog()
    unsold = {c.name: c for c in catalog.cards if c.not_sold is not None}
    assert {"T4G", "A10G", "GH200 96GB", "GH200 144GB", "Radeon PRO V520"} <= set(unsold)
    for card in unsold.values():
        assert card.purchase is None and card.street is None
        assert card.not_sold.source.startswith("https://") and card.not_sold.note
    assert unsold["A10G"].not_sold.why == "cloud-only" and unsold["GH200 96GB"].not_sold.why == "systems-only"


def test_a_card_not_sold_on_its_own_is_never_offered_to_buy_and_the_answer_says_why():
    advice = api.advise(api.workload("llama-3.1-8b"), rent=False, only=("A10",))  # the A10, the A10G and the A100s
    bought = {o.hardware.card for o in advice.options if o.hardware.kind == "buy"}
    assert "A10" in bought and "A10G" not in bought
    assert any(n.startswith("not offered to buy, not sold on their own: A10G (cloud-only)") for n in advice.notes)
    # a card that is sold but whose price is unknown is still offered, its price said to be unknown
    advice = api.advise(api.workload("llama-3.1-8b"), rent=False, only=("A16",))
    assert [o.hardware.card for o in advice.options if o.hardware.kind == "buy"][:1] == ["A16"]
    assert not any("not sold on their own" in n for n in advice.notes)


def test_buying_only_a_card_not_sold_on_its_own_gives_no_option_and_the_reason():
    advice = api.advise(api.workload("llama-3.1-8b"), rent=False, only=("GH200",))
    assert advice.options == [] and advice.picks == {}
    note = next(n for n in advice.notes if "not sold on their own" in n)
    assert "GH200 96GB (systems-only)" in note and "GH200 144GB (systems-only)" in note


def test_a_card_cannot_carry_a_price_and_a_not_sold_reason(tmp_path):
    path = tmp_path / "cards.yaml"
    text = (ROOT / "catalog" / "amd-radeon.yaml").read_text()
    path.write_text(text)
    cards = load_file(path)
    v520 = next(c for c in cards if c.name == "Radeon PRO V520")
    assert v520.not_sold is not None and v520.purchase is None
    lines = text.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.strip() == "- name: Radeon PRO V520")
    purchase = next(i for i in range(at, len(lines)) if lines[i].strip().startswith("purchase:"))
    lines[purchase] = lines[purchase].replace("purchase: null",
                                              'purchase: {usd: 100, kind: list, date: "2020-01", source: "https://x.y"}')
    path.write_text("".join(lines))
    with pytest.raises(UserError, match="carries no purchase or street price"):
        load_file(path)


@pytest.fixture
def workspace(tmp_path, capsys):
    """A copy of amd-radeon.yaml with every price and not-sold line cleared, and empty tables."""
    cat = tmp_path / "catalog"
    cat.mkdir()
    shutil.copy(ROOT / "catalog" / "amd-radeon.yaml", cat / "amd-radeon.yaml")
    prices, street, unsold = tmp_path / "prices.csv", tmp_path / "street.csv", tmp_path / "not-sold.csv"
    prices.write_text(PRICE_HEADER)
    street.write_text(PRICE_HEADER)
    unsold.write_text(NOT_SOLD_HEADER)
    args = ("--csv", str(prices), "--street-csv", str(street), "--not-sold-csv", str(unsold), "--catalog", str(cat))
    assert pp.main(list(args)) == 0
    assert all(c.not_sold is None and c.purchase is None for c in load_file(cat / "amd-radeon.yaml"))
    capsys.readouterr()
    return cat, prices, unsold, args


ROW = ('Radeon PRO V520,cloud-only,https://aws.amazon.com/ec2/instance-types/g4/,2026-12-04,'
       '"the GPU of AWS G4ad instances, never sold"\n')


def test_the_tool_writes_the_not_sold_line_after_the_prices_and_check_then_passes(capsys, workspace):
    cat, prices, unsold, args = workspace
    prices.write_text(PRICE_HEADER + "Radeon RX 7600,269,list,https://example.com/rx7600,2023-05,\n")
    unsold.write_text(NOT_SOLD_HEADER + ROW)
    assert pp.main([*args, "--check"]) == 1
    assert pp.main(list(args)) == 0
    assert "1 not sold on their own" in capsys.readouterr().out
    lines = (cat / "amd-radeon.yaml").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().startswith("not_sold:"))
    assert lines[at - 1].strip() == "purchase: null" and "why: cloud-only" in lines[at]
    v520 = {c.name: c for c in load_file(cat / "amd-radeon.yaml")}["Radeon PRO V520"]
    assert v520.not_sold.why == "cloud-only" and v520.not_sold.note == "the GPU of AWS G4ad instances, never sold"
    assert pp.main([*args, "--check"]) == 0
    unsold.write_text(NOT_SOLD_HEADER)  # dropping the row removes the line
    assert pp.main(list(args)) == 0
    assert all(c.not_sold is None for c in load_file(cat / "amd-radeon.yaml"))


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        (ROW.replace("cloud-only", "rare"), r"row 2 \(Radeon PRO V520\): field 'why'"),
        (ROW.replace("https://aws.amazon.com/ec2/instance-types/g4/", "aws.amazon.com"), r"field 'source'"),
        (ROW.replace("2026-12-04", "Dec 2026"), r"field 'date'"),
        (ROW.replace('"the GPU of AWS G4ad instances, never sold"', ""), r"field 'note'"),
        (ROW.replace("Radeon PRO V520", "Radeon PRO V999"), r"no catalog card named 'Radeon PRO V999'"),
        (ROW.replace("Radeon PRO V520", "Radeon RX 7600"), r"'Radeon RX 7600' has a price"),
        (ROW + ROW, r"row 3 \(Radeon PRO V520\): a second row"),
    ],
    ids=["why", "source", "date", "note", "unknown-card", "priced-card", "duplicate"],
)
def test_bad_not_sold_rows_are_one_line_exit_2_and_change_nothing(capsys, workspace, row, expected):
    cat, prices, unsold, args = workspace
    prices.write_text(PRICE_HEADER + "Radeon RX 7600,269,list,https://example.com/rx7600,2023-05,\n")
    unsold.write_text(NOT_SOLD_HEADER + row)
    before = (cat / "amd-radeon.yaml").read_text()
    code = pp.main(list(args))
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert re.search(expected, err), err
    assert (cat / "amd-radeon.yaml").read_text() == before


def test_a_no_public_price_mark_on_a_card_not_sold_on_its_own_is_refused(tmp_path):
    marks = tmp_path / "marks.csv"
    marks.write_text(",".join(pp.NO_PRICE_COLUMNS) + "\nA10G,2026-12-04,pages: A10G price,none found\n")
    unsold = pp.read_not_sold(pp.DEFAULT_NOT_SOLD_CSV)
    with pytest.raises(UserError, match="listed as not sold on its own"):
        pp.check_no_public_price(pp.read_no_public_price(marks), {"A10G"}, {}, {}, marks, unsold)
