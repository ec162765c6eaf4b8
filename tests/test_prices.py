"""gpuadvisor.prices: SkyPilot CSV parsing, accelerator mapping, reduction, filters, currencies,
the offline refresh (which never damages the user's copy), the shipped snapshot and the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuadvisor.cli import main
from gpuadvisor.core.errors import UserError
from gpuadvisor.prices import convert_usd, load_prices, shipped_path
from gpuadvisor.prices.model import dump_snapshot, snapshot_from_dict
from gpuadvisor.prices.reduce import catalog_card_names, load_map, reduce_rows
from gpuadvisor.prices.refresh import build_snapshot
from gpuadvisor.prices.skypilot import find_sources, parse_csv, read_csv

DATA = Path(__file__).parent / "data" / "prices"
GOOD, BAD = DATA / "good", DATA / "bad"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def user_copy(tmp_path, monkeypatch) -> Path:
    """Every test gets its own (absent) user copy, so a real ~/.local/share file never leaks in."""
    path = tmp_path / "user" / "prices.json"
    monkeypatch.setenv("GPUADVISOR_PRICES", str(path))
    return path


@pytest.fixture(scope="module")
def names() -> dict[str, str]:
    return catalog_card_names()


@pytest.fixture(scope="module")
def fixture_snapshot(names):
    return build_snapshot(find_sources(GOOD), commit="a" * 40, date="2026-11-20", card_names=names)


def offer(snap, provider, instance):
    (o,) = [o for o in snap.offers if o.provider == provider and o.instance_type == instance]
    return o


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


# --- parsing -------------------------------------------------------------------------------------


def test_reads_columns_by_name_in_any_order():
    aws = read_csv(GOOD / "aws" / "vms.csv", "aws")
    runpod = read_csv(GOOD / "runpod" / "vms.csv", "runpod")  # SpotPrice before Price
    assert len(aws) == 8 and aws[0].zone == "use1-az1" and aws[0].price == 0.8048 and aws[0].spot == 0.4011
    assert runpod[0].price == 1.64 and runpod[0].spot == 1.19 and runpod[0].region == "CA"
    assert aws[-1].accelerator == "" and aws[-1].count is None  # a CPU-only row is kept, not a GPU


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("missing_column.csv", "missing_column.csv:1: missing column 'Price'"),
        ("bad_number.csv", "bad_number.csv:3: column Price: not a number: '1.2x'"),
        ("negative_price.csv", "negative_price.csv:4: column Price: negative price -0.5"),
        ("short_row.csv", "short_row.csv:2: expected 8 fields like the header, found 6"),
    ],
)
def test_malformed_csv_is_one_line_naming_file_and_row(name, message):
    with pytest.raises(UserError) as e:
        read_csv(BAD / name, "lambda")
    assert message in str(e.value) and "\n" not in str(e.value)


def test_find_sources_needs_a_provider_for_a_lone_file(tmp_path):
    assert find_sources(GOOD / "aws" / "vms.csv") == {"aws": GOOD / "aws" / "vms.csv"}
    assert set(find_sources(GOOD)) == {"aws", "gcp", "lambda", "runpod"}
    lone = tmp_path / "prices.csv"
    lone.write_text((GOOD / "lambda" / "vms.csv").read_text())
    with pytest.raises(UserError, match="pass --provider"):
        find_sources(lone)
    assert find_sources(lone, "Lambda") == {"lambda": lone}
    with pytest.raises(UserError, match=r"no nebius/vms\.csv here; found: aws, gcp, lambda, runpod"):
        find_sources(GOOD, "nebius")


# --- mapping and reduction ---------------------------------------------------------------------


def test_cheapest_and_median_region(fixture_snapshot):
    o = offer(fixture_snapshot, "aws", "g6.xlarge")
    assert (o.card, o.gpu_count, o.vcpus, o.memory_gib) == ("L4", 1, 4.0, 16.0)
    assert (o.region, o.on_demand_usd_h) == ("us-east-1", 0.8048)
    assert o.spot_usd_h == 0.349  # the cheaper of us-east-1's two zones
    assert o.median_on_demand_usd_h == 0.9664
    assert o.regions["eu-central-1"] == (1.0064, None)
    assert o.price_usd_h(spot=True, region="ap-south-1") == 0.4391
    assert o.price_usd_h(region="mars") is None
    lam = offer(fixture_snapshot, "lambda", "gpu_1x_a100")
    assert (lam.region, lam.on_demand_usd_h, lam.median_on_demand_usd_h) == ("us-west-1", 1.10, 1.29)
    assert lam.spot_usd_h is None


def test_card_mapping_per_instance_and_per_provider(fixture_snapshot):
    assert offer(fixture_snapshot, "lambda", "gpu_1x_a100").card == "A100 PCIe 40GB"  # instance override
    assert offer(fixture_snapshot, "lambda", "gpu_8x_a100").card == "A100 SXM4 40GB"  # default
    assert offer(fixture_snapshot, "runpod", "1x_A100-80GB_SECURE").card == "A100 PCIe 80GB"  # provider override


def test_unmapped_accelerators_are_reported_not_dropped(fixture_snapshot):
    why = {(u.provider, u.accelerator): (u.reason, u.rows) for u in fixture_snapshot.unmapped}
    assert why[("aws", "Inferentia2")] == ("not a GPU", 1)
    assert why[("aws", "Radeon Pro V999")][0].startswith("no card mapping")
    assert ("aws", "T4") not in why  # a half T4 is a fractional offer, not a left-out row
    assert not any(o.instance_type in ("m5.large", "cpu_4x_general") for o in fixture_snapshot.offers)


def test_a_card_missing_from_the_catalog_is_unmapped(names):
    rows = read_csv(GOOD / "aws" / "vms.csv", "aws")
    red = reduce_rows(rows, load_map(), {k: v for k, v in names.items() if v != "L4"})
    assert [o.card for o in red.offers] == ["Tesla T4"]  # the half T4
    assert ("aws", "L4", 4, "card not in catalog: maps to 'L4'", 1) in red.unmapped
    cov = red.coverage["aws"]
    assert cov["excluded"]["g6.xlarge"] == "L4: card not in catalog: maps to 'L4'"
    assert cov["gpu_shapes"] == cov["offers"] + len(cov["excluded"]) == 3


def test_gcp_gpus_join_their_host_vm_per_zone(fixture_snapshot):
    a2 = offer(fixture_snapshot, "gcp", "a2-highgpu-1g")
    assert (a2.card, a2.gpu_count) == ("A100 SXM4 40GB", 1)
    assert a2.regions["us-central1"] == (round(0.73948 + 2.93391, 6), round(0.36975 + 1.4341, 6))
    assert (a2.region, a2.on_demand_usd_h) == ("europe-west4", round(0.81406 + 1.61365, 6))
    assert "asia-east9" not in a2.regions  # a host VM without GPU prices there is no offer
    t4 = offer(fixture_snapshot, "gcp", "1x T4 (attached)")
    assert (t4.card, t4.on_demand_usd_h, t4.vcpus) == ("Tesla T4", 0.35, None) and "host VM" in t4.note
    assert not any(o.instance_type == "1x A100 (attached)" for o in fixture_snapshot.offers)


def test_map_file_errors_are_one_line(tmp_path):
    bad = tmp_path / "map.yaml"
    bad.write_text("cards: {A100: A100 SXM4 40GB}\ngpu_counts: {azure: {X: {count: 0}}}\n")
    with pytest.raises(UserError, match="gpu_counts X: needs 'count'"):
        load_map(bad)
    bad.write_text("providers: {}\n")
    with pytest.raises(UserError, match="needs a 'cards:' table"):
        load_map(bad)


# --- snapshot: filters, currency, files ---------------------------------------------------------


def test_filters_and_their_errors(fixture_snapshot):
    snap = fixture_snapshot
    assert snap.providers() == ["aws", "gcp", "lambda", "runpod"]
    only = snap.filter(providers=["AWS"])
    assert {o.provider for o in only} == {"aws"} and len(only) == 2 and only.source == snap.source  # g6.xlarge, half T4
    west = snap.filter(region="us-east-1", providers=["lambda"])
    assert [(o.instance_type, o.region, o.price_usd_h()) for o in west] == [
        ("gpu_1x_a100", "us-east-1", 1.29), ("gpu_8x_a100", "us-east-1", 15.92)]  # priced in that region
    assert west.offers[0].median_on_demand_usd_h == 1.29 and len(west.offers[0].regions) == 3
    assert {o.card for o in snap.filter(cards=["L4", "Tesla T4"])} == {"L4", "Tesla T4"}
    with pytest.raises(UserError, match=r"unknown provider 'oracle'; the price snapshot has: aws, gcp, lambda"):
        snap.filter(providers=["oracle"])
    with pytest.raises(UserError, match=r"unknown region 'mars'; known regions: CA, US, ap-south-1"):
        snap.filter(region="mars")


def test_currency(fixture_snapshot):
    assert convert_usd(2.5, "usd", fixture_snapshot) == 2.5
    with pytest.raises(UserError, match="unknown currency 'EUR'; prices convert to: USD"):
        convert_usd(1.0, "EUR", fixture_snapshot)
    d = json.loads(dump_snapshot(fixture_snapshot))
    d["rates"] = {"EUR": {"per_usd": 0.9, "source": "ECB reference rate", "date": "2026-11-20"}}
    assert convert_usd(10.0, "eur", snapshot_from_dict(d)) == pytest.approx(9.0)
    d["rates"] = {"EUR": {"per_usd": 0.9}}
    with pytest.raises(UserError, match="rate 'EUR' needs per_usd, source and date"):
        snapshot_from_dict(d, "x.json")


def test_dump_and_load_round_trip(fixture_snapshot, tmp_path):
    path = tmp_path / "snap.json"
    path.write_text(dump_snapshot(fixture_snapshot))
    again = load_prices(path)
    assert again.offers == fixture_snapshot.offers and again.unmapped == fixture_snapshot.unmapped
    assert again.describe() == "SkyPilot catalog skypilot-org/skypilot-catalog@aaaaaaa, 2026-11-20"


def test_a_damaged_snapshot_is_one_line(fixture_snapshot, tmp_path):
    d = json.loads(dump_snapshot(fixture_snapshot))
    d["offers"][0]["on_demand_usd_h"] = -1
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(d))
    with pytest.raises(UserError) as e:
        load_prices(path)
    assert "damaged price snapshot" in str(e.value) and "price must be a positive number" in str(e.value)
    path.write_text("{not json")
    with pytest.raises(UserError, match="invalid JSON"):
        load_prices(path)


# --- the shipped snapshot ----------------------------------------------------------------------


def test_shipped_snapshot_is_big_sourced_and_mapped():
    snap = load_prices(shipped_path())
    assert len(snap) >= 300 and len(snap.providers()) >= 6
    assert {"aws", "gcp", "azure", "lambda", "runpod"} <= set(snap.providers())
    src = snap.source
    assert src.repository == "skypilot-org/skypilot-catalog" and src.license == "Apache-2.0"
    assert len(src.date) == 10 and src.files and all(len(f["commit"]) == 40 for f in src.files)
    assert snap.built_by == "tools/build_prices.py" and snap.reduction
    known = set(catalog_card_names().values())
    for o in snap.offers:
        assert o.card in known, (o.provider, o.instance_type, o.card)
        assert o.gpu_count >= 1 and (o.on_demand_usd_h or o.spot_usd_h) and o.region in o.regions


def test_shipped_unmapped_cards_are_really_missing():
    """A card reported as missing from the catalog must still be missing: once a card is added,
    the snapshot is rebuilt so its offers appear (see catalog/prices/README.md, "Refresh")."""
    snap = load_prices(shipped_path())
    known = {k.lower() for k in catalog_card_names()}
    missing = [u for u in snap.unmapped if "not in the catalog" in u.reason]
    for u in missing:
        card = u.reason.split("'")[1]
        assert card.lower() not in known, f"{card} is in the catalog now: rebuild with tools/build_prices.py"


# --- offline refresh ------------------------------------------------------------------------------


def test_update_writes_user_copy_and_keeps_it_on_failure(capsys, user_copy):
    rc, out, err = run(capsys, "prices", "update", "--from", str(GOOD / "lambda" / "vms.csv"), "--date", "2026-11-21")
    assert rc == 0 and user_copy.is_file() and f"wrote {user_copy}" in out
    snap = load_prices()
    assert {o.instance_type for o in snap.offers if o.provider == "lambda"} == {"gpu_1x_a100", "gpu_8x_a100"}
    assert "aws" in snap.providers()  # the other providers come from the shipped snapshot
    assert snap.source.date == "2026-11-24" and any(f["read"] == "2026-11-21" for f in snap.source.files)
    before = user_copy.read_bytes()
    rc, out, err = run(capsys, "prices", "update", "--from", str(BAD / "negative_price.csv"), "--provider", "lambda")
    assert rc == 2 and err.count("\n") == 1 and "negative_price.csv:4: column Price: negative price" in err
    assert user_copy.read_bytes() == before
    rc, out, err = run(capsys, "prices", "update", "--from", str(GOOD / "aws" / "vms.csv"))
    assert rc == 0 and "Inferentia2 (not a GPU, 1 rows)" in err
    rc, out, _ = run(capsys, "prices", "reset")
    assert rc == 0 and not user_copy.exists() and "removed" in out


def test_build_tool_writes_a_snapshot(tmp_path):
    out = tmp_path / "rental.json"
    from tools import build_prices
    assert build_prices.main([str(GOOD), "--commit", "b" * 40, "--date", "2026-11-20", "-o", str(out)]) == 0
    snap = load_prices(out)
    assert snap.source.commit == "b" * 40 and len(snap) == 7
    assert build_prices.main([str(GOOD), "--commit", "x", "--date", "20-11-2026", "-o", str(out)]) == 2


# --- CLI ------------------------------------------------------------------------------------------


def test_list_names_source_and_date_first(capsys):
    rc, out, _ = run(capsys, "prices", "list", "--card", "h100", "--gpus", "8")
    first = out.splitlines()[0]
    assert rc == 0 and first.startswith("prices: SkyPilot catalog skypilot-org/skypilot-catalog") and "2026-" in first
    assert "H100" in out and max(len(line) for line in out.splitlines()[1:]) <= 100


def test_list_json_is_documented_shape(capsys):
    rc, out, _ = run(capsys, "prices", "list", "--json", "--provider", "lambda", "--spot")
    d = json.loads(out)
    assert rc == 0 and set(d) >= {"source", "currency", "count", "offers", "unmapped"}
    assert d["source"]["describe"].startswith("SkyPilot catalog") and d["count"] == 0  # Lambda sells no spot
    rc, out, _ = run(capsys, "prices", "list", "--json", "--provider", "aws", "--region", "us-east-1")
    offers = json.loads(out)["offers"]
    assert offers and all("us-east-1" in o["regions"] and o["provider"] == "aws" for o in offers)
    prices = [o["regions"]["us-east-1"][0] or 1e9 for o in offers]
    assert prices == sorted(prices)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["list", "--provider", "nosuchcloud"], "unknown provider 'nosuchcloud'; the price snapshot has: aws"),
        (["list", "--region", "atlantis-1"], "unknown region 'atlantis-1'; known regions:"),
        (["list", "--currency", "XYZ"], "unknown currency 'XYZ'; prices convert to: USD"),
        (["show", "no-such-gpu-9000"], "no instance type or card named 'no-such-gpu-9000'"),
        (["update", "--from", str(BAD / "missing_column.csv"), "--provider", "aws"], "missing column 'Price'"),
        (["update", "--from", str(BAD / "bad_number.csv"), "--provider", "aws"], "bad_number.csv:3: column Price"),
        (["update", "--from", str(GOOD / "aws" / "vms.csv"), "--date", "tomorrow"], "date must be YYYY-MM-DD"),
    ],
)
def test_cli_errors_are_one_line_exit_2(capsys, user_copy, argv, message):
    rc, _, err = run(capsys, "prices", *argv)
    assert rc == 2 and message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not user_copy.exists()


def test_show_instance_and_card(capsys):
    rc, out, _ = run(capsys, "prices", "show", "p4d.24xlarge")
    assert rc == 0 and "aws p4d.24xlarge: 8x A100 SXM4 40GB" in out and "us-east-1" in out
    rc, out, _ = run(capsys, "prices", "show", "L40S", "--json")
    d = json.loads(out)
    assert rc == 0 and d["offers"] and {o["card"] for o in d["offers"]} == {"L40S"}


def test_loading_does_not_import_the_parser():
    code = ("import sys, gpuadvisor.prices as p; s = p.load_prices(p.shipped_path()); "
            "print(len(s), 'gpuadvisor.prices.skypilot' in sys.modules, 'pydantic' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    n, parser, pydantic = out.split()
    assert int(n) >= 300 and parser == "False" and pydantic == "False"


# --- fuzz -----------------------------------------------------------------------------------------

_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,SpotPrice\n"
_CELL = st.one_of(st.sampled_from(["", "1.0", "-2", "nan", "inf", "1e309", "A100", "us-east-1", '"a,b"', "\x00"]),
                  st.text(max_size=6))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(_CELL, min_size=0, max_size=10), max_size=6), st.booleans())
def test_any_csv_reads_or_fails_with_one_user_error(rows, with_header):
    text = (_HEADER if with_header else "") + "\n".join(",".join(r) for r in rows)
    try:
        parsed = parse_csv(text, "fuzz.csv", "aws")
    except UserError as e:
        assert str(e).startswith("fuzz.csv") and "\n" not in str(e)
        return
    for r in parsed:
        assert r.region and (r.instance_type or r.accelerator)
        assert all(p is None or p > 0 for p in (r.price, r.spot))


def test_a_region_with_an_empty_part_reads_as_words():
    """SkyPilot's vast rows give ', CN, AS' where the city is unknown: the pick reads 'in CN, AS', not 'in , CN'."""
    from gpuadvisor.advisor.options import Hardware
    from gpuadvisor.prices.model import region_label

    assert region_label(", CN, AS") == "CN, AS"
    assert region_label("us-east-1") == "us-east-1"
    assert region_label(None) == ""
    rent = Hardware(kind="rent", card="GeForce RTX 3090", gpus=4, provider="vast", instance_type="4x-RTX_3090",
                    region=", CN, AS")
    assert rent.label == "4x GeForce RTX 3090 (vast 4x-RTX_3090 in CN, AS)"
