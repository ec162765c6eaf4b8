"""Catalog loading, validation errors, lookup and the `catalog` command."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from gpuadvisor.catalog import TENSOR_DTYPES, Card, find, load_catalog, match_device
from gpuadvisor.cli import main
from gpuadvisor.core.errors import UserError
from gpuadvisor.core.paths import shipped_catalog_dir

GOOD_CARD = """\
cards:
  - name: Test Card 24GB
    aliases: [testcard, NVIDIA Test Card]
    vendor: nvidia
    family: geforce
    architecture: Ada Lovelace
    release_year: 2023
    memory_gib: 24
    memory_type: GDDR6X
    memory_bandwidth_gbs: 1008
    memory_bus_width_bits: 384
    compute_units: 128
    compute_capability: "8.9"
    boost_clock_mhz: 2520
    fp32_tflops: 82.6
    fp64_tflops: 1.3
    tensor_dense_tflops: {fp16: 165.2, bf16: 165.2, tf32: 82.6, fp8: 330.3, fp4: null, int8: 660.6}
    tdp_w: 450
    interface: PCIe 4.0 x16
    interconnect_gbs: null
    form_factor: PCIe triple-slot
    launch_price_usd: 1599
    purchase: {usd: 1499, kind: list, date: "2025-06-01", source: https://example.com/p, note: "a test, with a comma"}
    source: https://example.com/datasheet
"""


@pytest.fixture(scope="module")
def shipped():
    return load_catalog(use_env=False)


def write(tmp_path: Path, text: str, name: str = "user.yaml") -> Path:
    d = tmp_path / "cat"
    d.mkdir(exist_ok=True)
    (d / name).write_text(textwrap.dedent(text))
    return d


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --- the shipped catalog -------------------------------------------------------------------------


def test_shipped_catalog_is_large_and_sourced(shipped):
    assert len(shipped) >= 80
    assert all(c.source.startswith("http") for c in shipped.cards)
    families = {c.family for c in shipped.cards}
    assert families == {"geforce", "professional", "datacenter", "jetson", "instinct", "radeon"}


@pytest.mark.parametrize(
    "required",
    ["K80", "P100", "V100", "T4", "A10", "A30", "A40", "A100 40GB", "A100 80GB", "L4", "L40S",
     "H100 PCIe", "H100 SXM", "H200", "B200", "MI50", "MI300X", "RTX 4090", "GTX 1080", "RTX 5090",
     "RX 7900 XTX", "W7900"],
)
def test_shipped_catalog_covers_the_cards_users_ask_for(shipped, required):
    assert find(shipped, required), f"no card for {required!r}"


def test_tensor_figures_follow_the_hardware(shipped):
    for card in shipped.cards:
        t = card.tensor_dense_tflops
        if card.vendor == "nvidia" and card.compute_capability:
            cc = tuple(int(x) for x in card.compute_capability.split("."))
            if cc < (8, 0):
                assert t.bf16 is None and t.tf32 is None, card.name
            if cc < (8, 9):
                assert t.fp8 is None, card.name
        # Dense figures: fp8 is at most twice fp16, never the 4x a sparse number would show.
        if t.fp8 and t.fp16:
            assert t.fp8 <= 2.05 * t.fp16, card.name


def test_driver_names_match_their_cards(shipped):
    assert match_device(shipped, "NVIDIA H100 80GB HBM3").name == "H100 SXM5 80GB"
    h200 = match_device(shipped, "NVIDIA H200", 140.4)
    assert h200 is not None and "H200" in h200.name


def test_fuzzy_lookup(shipped):
    assert "4090" in shipped.get("4090").name
    assert "H100" in shipped.get("h100 sxm").name and "SXM" in shipped.get("h100 sxm").name
    with pytest.raises(UserError, match="no card in the catalog matches"):
        shipped.get("definitely not a gpu")


# --- validation errors: one line naming file, card and field --------------------------------------


def test_user_catalog_adds_cards(tmp_path):
    cat = load_catalog([write(tmp_path, GOOD_CARD)], use_env=False)
    card = cat.get("testcard")
    assert isinstance(card, Card) and card.memory_gib == 24
    assert card.tensor_tflops("fp8") == 330.3


def test_user_catalog_overrides_a_shipped_card(tmp_path, shipped):
    base = shipped.get("H100 SXM5 80GB")
    data = base.model_dump()
    data["tdp_w"] = 123
    import yaml

    d = tmp_path / "over"
    d.mkdir()
    (d / "h100.yaml").write_text(yaml.safe_dump({"cards": [data]}))
    cat = load_catalog([d], use_env=False)
    assert cat.get("H100 SXM5 80GB").tdp_w == 123
    assert len(cat) == len(shipped)


def test_env_var_adds_a_catalog(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUADVISOR_CATALOG", str(write(tmp_path, GOOD_CARD)))
    assert load_catalog().get("testcard").name == "Test Card 24GB"


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda t: t.replace("    memory_bandwidth_gbs: 1008\n", ""),
         r"user\.yaml: card 'Test Card 24GB': field 'memory_bandwidth_gbs': missing"),
        (lambda t: t.replace("memory_gib: 24", "memory_gib: lots"),
         r"card 'Test Card 24GB': field 'memory_gib': Input should be a valid number"),
        (lambda t: t.replace("fp16: 165.2,", "fp16: fast,"),
         r"field 'tensor_dense_tflops\.fp16'"),
        (lambda t: t.replace("vendor: nvidia", "vendor: intel"), r"field 'vendor'"),
        (lambda t: t.replace('compute_capability: "8.9"', "compute_capability: ninety"),
         r"field 'compute_capability': Value error, must look like '9\.0'"),
        (lambda t: t.replace("source: https://example.com/datasheet", "source: my memory"),
         r"field 'source'.*URL"),
        (lambda t: t.replace("tdp_w: 450", "tdp_w: 450\n    colour: green"), r"field 'colour': unknown field"),
        (lambda t: t + t.replace("cards:\n", ""), r"duplicate name"),
        (lambda t: t.replace("    purchase: {", "    bought: {"), r"field 'purchase': missing"),
        (lambda t: t.replace("kind: list", "kind: cheap"), r"card 'Test Card 24GB': field 'purchase\.kind'"),
        (lambda t: t.replace("usd: 1499", "usd: -5"), r"field 'purchase\.usd': Input should be greater than 0"),
        (lambda t: t.replace("source: https://example.com/p,", "source: a shop,"),
         r"field 'purchase\.source'.*URL"),
        (lambda t: t.replace('date: "2025-06-01"', 'date: "June 2025"'), r"field 'purchase\.date'.*YYYY-MM"),
        (lambda t: t.replace('date: "2025-06-01"', 'date: "2025-02-30"'), r"field 'purchase\.date'.*calendar"),
        (lambda t: t.replace("usd: 1499,", "usd: 1499, shop: x,"), r"field 'purchase\.shop': unknown field"),
        (lambda t: t.replace("aliases: [testcard", "aliases: [testcard, [oops"), r"YAML syntax error"),
        (lambda t: "- just\n- a list\n", r"mapping with a 'cards' list"),
    ],
    ids=["missing-field", "wrong-type", "nested-wrong-type", "bad-enum", "bad-cc", "bad-source",
         "unknown-field", "duplicate-name", "purchase-missing", "purchase-kind", "purchase-negative",
         "purchase-source", "purchase-date", "purchase-day", "purchase-extra", "yaml-syntax", "wrong-shape"],
)
def test_malformed_catalog_gives_one_line_error_and_exit_2(tmp_path, capsys, mutate, expected):
    d = write(tmp_path, mutate(GOOD_CARD))
    with pytest.raises(UserError, match=expected):
        load_catalog([d], use_env=False)
    code, out, err = run_cli(capsys, "--catalog", str(d), "catalog", "validate")
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("gpuadvisor: error: ")
    assert "Traceback" not in err


def test_purchase_may_be_null_and_dates_may_be_unquoted(tmp_path):
    card = load_catalog([write(tmp_path, GOOD_CARD)], use_env=False).get("testcard")
    assert card.purchase is not None and card.purchase.usd == 1499 and card.purchase.kind == "list"
    assert card.purchase.note == "a test, with a comma" and card.purchase.date == "2025-06-01"
    unquoted = GOOD_CARD.replace('date: "2025-06-01"', "date: 2025-06-01")
    assert load_catalog([write(tmp_path, unquoted)], use_env=False).get("testcard").purchase.date == "2025-06-01"
    month = GOOD_CARD.replace('date: "2025-06-01"', "date: 2025-06")
    assert load_catalog([write(tmp_path, month)], use_env=False).get("testcard").purchase.date == "2025-06"
    bare = GOOD_CARD.replace(GOOD_CARD.split("    purchase: ")[1].split("\n")[0], "null")
    assert load_catalog([write(tmp_path, bare)], use_env=False).get("testcard").purchase is None


def test_alias_clash_with_shipped_card_is_an_error(tmp_path):
    clash = GOOD_CARD.replace("aliases: [testcard", "aliases: [NVIDIA H100 80GB HBM3")
    with pytest.raises(UserError, match="also used by"):
        load_catalog([write(tmp_path, clash)], use_env=False)


def test_missing_catalog_dir_is_a_user_error(tmp_path, capsys):
    code, _, err = run_cli(capsys, "--catalog", str(tmp_path / "nope"), "catalog", "list")
    assert code == 2 and "catalog directory not found" in err


# --- the command -----------------------------------------------------------------------------------


def test_validate_passes_on_shipped_catalog(capsys):
    code, out, _ = run_cli(capsys, "catalog", "validate", "--json")
    data = json.loads(out)
    assert code == 0 and data["valid"] is True and data["cards"] >= 80


def test_list_json_filters(capsys, shipped):
    code, out, _ = run_cli(capsys, "catalog", "list", "--vendor", "amd", "--min-memory", "128", "--json")
    cards = json.loads(out)
    assert code == 0 and cards
    assert all(c["vendor"] == "amd" and c["memory_gib"] >= 128 for c in cards)
    expected = {c.name for c in shipped.filter(vendor="amd", min_memory_gib=128)}
    assert {c["name"] for c in cards} == expected


def test_list_by_family_and_match(capsys):
    code, out, _ = run_cli(capsys, "catalog", "list", "--family", "datacenter", "--match", "h100", "--json")
    names = [c["name"] for c in json.loads(out)]
    assert code == 0 and names and all("H100" in n for n in names)


def test_show_json_round_trips_to_a_card(capsys):
    code, out, _ = run_cli(capsys, "catalog", "show", "h100 sxm", "--json")
    card = Card.model_validate(json.loads(out))
    assert code == 0 and card.compute_capability == "9.0" and card.compute_units == 132


def test_show_text_lists_figures(capsys):
    code, out, _ = run_cli(capsys, "catalog", "show", "H100 SXM5 80GB")
    assert code == 0 and "memory_bandwidth_gbs" in out and "3350" in out


@pytest.mark.parametrize(
    "argv",
    [["catalog"], ["catalog", "show"], ["catalog", "list", "--vendor", "intel"],
     ["catalog", "list", "--min-memory", "-3"], ["catalog", "show", "zzz-no-such-card"], ["nonsense"]],
)
def test_bad_usage_is_one_line_exit_2(capsys, argv):
    code, _, err = run_cli(capsys, *argv)
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err


def test_every_tensor_key_is_known():
    fields = set(Card.model_fields["tensor_dense_tflops"].annotation.model_fields)
    assert set(TENSOR_DTYPES) == fields - {"basis", "note"}


def test_shipped_dir_exists():
    assert (shipped_catalog_dir() / "nvidia-datacenter.yaml").is_file()


# --- purchase prices and the cards clouds rent ------------------------------------------------------

# Cards with no purchase price and no not-sold reason: no dated public price was found. (The cloud-only
# Radeon PRO V520 carries a sourced `not_sold` reason instead.)
UNPRICED_CONSUMER_AND_PRO = {
    "Quadro P4000": "no dated public price found",
    "Quadro P5000": "no dated public price found",
    "Quadro GP100": "no dated public price found",
    "RTX PRO 5000 Blackwell": "no dated public list or street price found (Hugging Face's $4.5k is the 72 GB card)",
}


def test_every_geforce_radeon_and_professional_card_has_a_purchase_price(shipped):
    missing = [c.name for c in shipped.cards
               if c.family in ("geforce", "radeon", "professional") and c.purchase is None and c.street is None
               and c.not_sold is None and c.name not in UNPRICED_CONSUMER_AND_PRO]
    assert missing == []
    for name in UNPRICED_CONSUMER_AND_PRO:  # the exemptions name real cards and stay unpriced until sourced
        assert shipped.get(name).name == name


def test_purchase_kinds_follow_the_family(shipped):
    assert len([c for c in shipped.cards if c.purchase is not None or c.street is not None]) >= 75
    priced = [c for c in shipped.cards if c.purchase is not None]
    for card in priced:
        if card.family in ("datacenter", "instinct"):  # sold through OEMs: no list price, unless a launch price
            assert card.purchase.kind == "estimate" or card.purchase.usd == card.launch_price_usd, card.name
        else:
            assert card.purchase.kind == "list", card.name
        assert card.purchase.source.startswith("https://"), card.name
    jetson = [c for c in priced if c.family == "jetson"]
    assert jetson and all(c.purchase.kind == "list" for c in jetson)


def test_purchase_prices_are_plausible(shipped):
    """Catches a dropped digit or a price typed against the wrong card."""
    def usd(name: str) -> float:  # the new price, else the street price (cards sold only through resellers)
        card = shipped.get(name)
        return (card.purchase or card.street).usd

    assert 1000 < usd("GeForce RTX 4090") < 4000
    assert usd("GeForce RTX 4060") < usd("GeForce RTX 4090")
    assert usd("Tesla T4") < usd("L4") < usd("L40S") < usd("H100 PCIe 80GB") < usd("H100 SXM5 80GB")
    assert 50 < usd("Jetson Nano") < 200


@pytest.mark.parametrize(
    ("driver_name", "memory_gib", "card"),
    [
        ("NVIDIA A10G", 22.5, "A10G"),
        ("NVIDIA A10", 22.5, "A10"),
        ("NVIDIA GH200 480GB", 95.6, "GH200 96GB"),
        ("NVIDIA GH200 144G HBM3e", 143.4, "GH200 144GB"),
        ("NVIDIA H20", 95.0, "H20"),
        ("Tesla P40", 22.4, "Tesla P40"),
        ("Tesla P4", 7.4, "Tesla P4"),
        ("Tesla M60", 7.9, "Tesla M60"),
        ("NVIDIA T4G", 14.6, "T4G"),
        ("Tesla T4", 14.6, "Tesla T4"),
        ("Radeon Pro V520", 8.0, "Radeon PRO V520"),
        ("Tesla V100-SXM2-16GB", 15.8, "Tesla V100 SXM2 16GB"),
        ("Tesla V100-PCIE-16GB", 15.8, "Tesla V100 PCIe 16GB"),
        ("Tesla V100-SXM2-32GB", 31.7, "Tesla V100 SXM2 32GB"),
        ("NVIDIA A800 80GB PCIe", 79.2, "A800 PCIe 80GB"),
        ("NVIDIA B300 SXM6 AC", 268.0, "B300"),
        ("Radeon Instinct MI25", 16.0, "Radeon Instinct MI25"),
        ("NVIDIA RTX 2000 Ada Generation", 15.6, "RTX 2000 Ada Generation"),
        ("NVIDIA RTX 4000 Ada Generation", 19.5, "RTX 4000 Ada Generation"),
        ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 95.6, "RTX PRO 6000 Blackwell"),
        ("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", 95.6,
         "RTX PRO 6000 Blackwell Max-Q Workstation Edition"),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", 95.6, "RTX PRO 6000 Blackwell Server Edition"),
        ("NVIDIA GB10", 119.7, "DGX Spark (GB10)"),
        ("NVIDIA GeForce RTX 5060", 7.6, "GeForce RTX 5060"),
        ("AMD Instinct MI350X", 288.0, "Instinct MI350X"),
        ("NVIDIA GeForce RTX 4070 SUPER", 11.6, "GeForce RTX 4070 Super"),
        ("NVIDIA GeForce RTX 4070 Ti SUPER", 15.7, "GeForce RTX 4070 Ti Super"),
        ("NVIDIA GeForce RTX 4070 Ti", 11.6, "GeForce RTX 4070 Ti"),  # not taken by the Ti Super
        ("NVIDIA RTX 5880 Ada Generation", 47.5, "RTX 5880 Ada Generation"),
        ("AMD Radeon AI PRO R9700", 31.9, "Radeon AI PRO R9700"),
    ],
)
def test_cards_clouds_rent_match_their_driver_names(shipped, driver_name, memory_gib, card):
    found = match_device(shipped, driver_name, memory_gib)
    assert found is not None and found.name == card
    assert found.source.startswith("http") and found.memory_gib and found.memory_bandwidth_gbs


def test_new_datacenter_cards_have_dense_tensor_figures(shipped):
    h100 = shipped.get("H100 SXM5 80GB").tensor_dense_tflops
    for name in ("GH200 96GB", "GH200 144GB"):  # the superchip's GPU is the H100 die
        assert shipped.get(name).tensor_dense_tflops.bf16 == pytest.approx(h100.bf16, rel=0.01)
    a10g, a10 = shipped.get("A10G"), shipped.get("A10")
    assert a10g.compute_units == 80 and a10g.tensor_dense_tflops.bf16 < a10.tensor_dense_tflops.bf16
    assert shipped.get("H20").tensor_dense_tflops.bf16 < 0.2 * h100.bf16


def test_show_text_gives_the_purchase_price_and_its_source(capsys, shipped):
    code, out, _ = run_cli(capsys, "catalog", "show", "GeForce RTX 4090")
    card = shipped.get("GeForce RTX 4090")
    assert code == 0 and f"${card.purchase.usd:,.0f} {card.purchase.kind} price, {card.purchase.date}" in out
    assert f"source for purchase: {card.purchase.source}" in out
    code, out, _ = run_cli(capsys, "catalog", "show", "A16", "--json")
    assert code == 0 and json.loads(out)["purchase"] is None


# --- every data-center card priced, and the cards of 2026 ---------------------------------------------

# Every data-center card carries a dated, sourced price or the explicit no-public-price mark with the search
# done: tests/test_purchase_prices.py (it reads tools/data/no-public-price.csv, which an sdist lacks).


def test_the_issue_s_unpriced_cards_that_have_a_source_now_carry_one(shipped):
    b300, mi355x = shipped.get("B300").purchase, shipped.get("Instinct MI355X").purchase
    assert b300 is not None and b300.kind == "estimate" and 30000 < b300.usd < 80000
    assert mi355x is not None and mi355x.kind == "estimate" and 10000 < mi355x.usd < 40000
    b200 = shipped.get("B200").purchase
    assert b200 is not None and b200.date >= "2026"  # no longer the 2024 analyst figure
    rtx5090 = shipped.get("GeForce RTX 5090")
    assert rtx5090.street is not None and rtx5090.street.date >= "2026" and rtx5090.street.usd > rtx5090.purchase.usd


NEW_CARDS_2026 = [
    "GB300 (per GPU)", "RTX PRO 6000 Blackwell Server Edition", "RTX PRO 6000 Blackwell Max-Q Workstation Edition",
    "RTX PRO 5000 Blackwell", "RTX PRO 4500 Blackwell", "RTX PRO 4000 Blackwell", "RTX PRO 2000 Blackwell",
    "DGX Spark (GB10)", "GeForce RTX 5060", "GeForce RTX 5050", "GeForce RTX 3060 Ti", "GeForce RTX 4060 Ti 8GB",
    "Instinct MI350X", "GeForce RTX 4070 Super", "GeForce RTX 4070 Ti Super", "RTX 5880 Ada Generation",
    "Radeon AI PRO R9700",
]


@pytest.mark.parametrize("name", NEW_CARDS_2026)
def test_the_2026_cards_are_in_the_catalog_with_their_sources(shipped, name):
    card = shipped.get(name)
    assert card.name == name and card.source.startswith("https://")
    assert card.memory_gib and card.memory_bandwidth_gbs and card.tdp_w and card.fp32_tflops
    assert all(url.startswith("https://") for url in card.sources.values())
    t = card.tensor_dense_tflops
    assert t.bf16 or t.fp16
    if t.basis == "derived":  # a derived figure says how it was derived
        assert t.note and t.note.startswith("derived")


def test_the_rtx_pro_6000_editions_are_their_own_cards(shipped):
    workstation = shipped.get("RTX PRO 6000 Blackwell")
    max_q = shipped.get("RTX PRO 6000 Blackwell Max-Q Workstation Edition")
    server = shipped.get("RTX PRO 6000 Blackwell Server Edition")
    assert (workstation.tdp_w, max_q.tdp_w, server.tdp_w) == (600, 300, 600)
    assert "passive" in server.form_factor and server.family == "datacenter"
    assert max_q.tensor_dense_tflops.bf16 < workstation.tensor_dense_tflops.bf16  # lower clocks at 300 W
    assert workstation.memory_gib == max_q.memory_gib == server.memory_gib == 96


def test_b300_carries_the_hgx_tdp_and_gb300_its_own(shipped):
    b300, gb300 = shipped.get("B300"), shipped.get("GB300 (per GPU)")
    assert b300.tdp_w == 1100 and b300.sources["tdp_w"].startswith("https://")
    assert gb300.tdp_w == 1400 and gb300.tensor_dense_tflops.fp4 > b300.tensor_dense_tflops.fp4


def test_the_ada_refresh_cards_sit_between_their_neighbours(shipped):
    """The SUPER refresh and the RTX 5880 Ada are cut-downs of known chips: their memory and dense 16-bit tensor
    figures must fall between the cards around them (a sparse or FP16-accumulate figure would not)."""
    def bf16(name: str) -> float:
        return shipped.get(name).tensor_dense_tflops.bf16

    assert bf16("GeForce RTX 4070") < bf16("GeForce RTX 4070 Super") < bf16("GeForce RTX 4070 Ti")
    assert bf16("GeForce RTX 4070 Ti") < bf16("GeForce RTX 4070 Ti Super") < bf16("GeForce RTX 4080")
    assert shipped.get("GeForce RTX 4070 Ti Super").memory_gib == 16 > shipped.get("GeForce RTX 4070 Ti").memory_gib
    # a professional Ada card runs FP32 accumulate at full rate: about 4x its FP32 figure, not 2x as on GeForce
    assert bf16("RTX 5000 Ada Generation") < bf16("RTX 5880 Ada Generation") < bf16("RTX 6000 Ada Generation")
    rtx5880 = shipped.get("RTX 5880 Ada Generation")
    assert rtx5880.tensor_dense_tflops.bf16 == pytest.approx(4 * rtx5880.fp32_tflops, rel=0.01)
    # the R9700 is the RX 9070 XT's Navi 48 (64 CUs) at a lower clock, with twice the memory
    r9700, rx9070xt = shipped.get("Radeon AI PRO R9700"), shipped.get("Radeon RX 9070 XT")
    assert r9700.compute_units == rx9070xt.compute_units == 64 and r9700.memory_gib == 2 * rx9070xt.memory_gib
    assert r9700.tensor_dense_tflops.bf16 < rx9070xt.tensor_dense_tflops.bf16


def test_a_card_written_without_spaces_is_found_as_cloud_catalogs_write_it():
    """SkyPilot and the clouds write 'RTX4090', 'RTXA6000', 'H100-SXM': the same cards as their spaced names; a
    joined name that fits several cards is refused as a spaced one is."""
    from gpuadvisor.catalog import resolve_card

    cat = load_catalog(use_env=False)
    assert resolve_card(cat, "RTX4090").name == "GeForce RTX 4090"
    assert resolve_card(cat, "rtx3090").name == "GeForce RTX 3090"
    assert resolve_card(cat, "RTXA6000").name == "RTX A6000"
    assert resolve_card(cat, "h100sxm").name == "H100 SXM5 80GB"
    for ambiguous in ("a10080gb", "A100-80GB", "rtx40"):
        with pytest.raises(UserError, match="matches several cards"):
            resolve_card(cat, ambiguous)
