"""Every offer on its right card, suspect prices flagged, retired families gone, freshness shown.

The shipped snapshot is checked against the raw rows committed beside it (catalog/prices/raw/),
read here with the csv module and a GpuInfo reader of this file's own; planted rows show that
the builder refuses each kind of mismatch and flags each kind of suspect price."""

from __future__ import annotations

import ast
import contextlib
import csv
import gzip
import hashlib
import io
import json
import re
from pathlib import Path

import pytest
import yaml

from gpuadvisor.catalog import load_catalog
from gpuadvisor.cli import main
from gpuadvisor.prices.model import Freshness, load_prices
from gpuadvisor.prices.reduce import catalog_facts, load_map, reduce_rows
from gpuadvisor.prices.skypilot import parse_csv

ROOT = Path(__file__).resolve().parents[1]
RAW = ROOT / "catalog" / "prices" / "raw"
SHIPPED = ROOT / "catalog" / "prices" / "rental.json"
MAP = ROOT / "catalog" / "prices" / "accelerators.yaml"
CARDS = {c.name: c for c in load_catalog().cards}
HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region\n"


@pytest.fixture(autouse=True)
def shipped_only(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUADVISOR_PRICES", str(tmp_path / "absent.json"))


@pytest.fixture(scope="module")
def shipped() -> dict:
    return json.loads(SHIPPED.read_text())


@pytest.fixture(scope="module")
def facts():
    return catalog_facts()


# --- the shipped snapshot recomputed from the raw rows ---------------------------------------------


def per_gpu_gib(cell: str, count: float, convention: str) -> float | None:
    """One GPU's memory from a GpuInfo cell, read apart from the builder: the field the provider
    fills (accelerators.yaml `gpu_memory`), GB where the figure is under 1024."""
    if convention == "none" or "{" not in cell:
        return None
    info = json.loads(cell) if cell.lstrip().startswith('{"') else ast.literal_eval(cell.replace("null", "None"))
    size = float(info["Gpus"][0].get("MemoryInfo", {}).get("SizeInMiB") or 0)
    if size <= 0:
        return None
    if size < 1024 or convention == "per_gpu_gb":
        return size
    return size / 1024 / (count if convention == "total_mib" and count >= 1 else 1)


def within(gib: float, card_gib: float, fraction: float = 1.0) -> bool:
    want = card_gib * fraction
    return min(abs(gib - want), abs(gib * 1.073741824 - want)) <= 0.05 * want


def raw_rows():
    shipped_map = yaml.safe_load(MAP.read_text())
    conventions = shipped_map.get("gpu_memory", {})
    fixed = {(p, i): v["gib"] for p, t in shipped_map.get("memory_overrides", {}).items() for i, v in t.items()}
    for path in sorted(RAW.glob("*.csv.gz")):
        provider = path.name.split(".")[0]
        for row in csv.DictReader(io.StringIO(gzip.decompress(path.read_bytes()).decode())):
            if not row.get("InstanceType") or not row.get("AcceleratorName"):
                continue
            count = float(row["AcceleratorCount"])
            gib = fixed.get((provider, row["InstanceType"])) or per_gpu_gib(
                row.get("GpuInfo") or "", count, conventions.get(provider, "per_gpu_mib"))
            yield provider, row["InstanceType"], count, gib


FORMS = {"pcie": r"pcie", "sxm": r"sxm", "nvl": r"(?<![a-z])nvl(?![a-z])", "server": r"(?<![a-z])server(?![a-z])",
         "max-q": r"(?<![a-z])max-?q(?![a-z])"}


def forms_of(text: str) -> set[str]:
    return {f for f, pattern in FORMS.items() if re.search(pattern, text, re.I)}


def test_every_offer_has_its_cards_memory_per_gpu_within_5_percent(shipped):
    cards_of: dict[tuple[str, str], set[str]] = {}
    fraction: dict[tuple[str, str], float] = {}
    for o in shipped["offers"]:
        cards_of.setdefault((o["provider"], o["instance_type"]), set()).add(o["card"])
        fraction[(o["provider"], o["instance_type"])] = o.get("gpu_fraction", 1.0)
    checked, wrong = 0, []
    for provider, shape, _count, gib in raw_rows():
        cards = cards_of.get((provider, shape))
        if not cards or gib is None:
            continue
        checked += 1
        share = fraction[(provider, shape)]
        if not any(within(gib, CARDS[c].memory_gib, share) for c in cards):
            wrong.append((provider, shape, round(gib, 1), sorted(cards)))
    assert checked > 8000 and not wrong, wrong[:10]


def test_every_form_factor_an_instance_name_states_is_its_cards(shipped):
    wrong = []
    for o in shipped["offers"]:
        card = CARDS[o["card"]]
        has = forms_of(card.name) | ({"pcie"} if str(card.form_factor or "").lower().startswith("pcie") else set()) | (
            {"sxm"} if str(card.form_factor or "").lower().startswith("sxm") else set())
        said = forms_of(o["instance_type"])
        if not said <= has or ("pcie" in said and "nvl" not in said and "nvl" in has):
            wrong.append((o["provider"], o["instance_type"], o["card"]))
    assert not wrong, wrong


CARD_NOT_YET = "card not in catalog"  # a card another change adds: excluded until then, never on a wrong card


@pytest.mark.parametrize(("provider", "shape", "cards"), [
    ("vast", "1x-A100_SXM4-32-65536", {"A100 SXM4 40GB", "A100 SXM4 80GB"}),  # 40 and 80 GB rows: split
    ("vast", "2x-A100_SXM4-32-65536", {"A100 SXM4 40GB", "A100 SXM4 80GB"}),
    ("vast", "2x-A100_PCIE-32-65536", {"A100 PCIe 40GB"}),
    ("vast", "1x-H100_NVL-32-65536", {"H100 NVL 94GB"}),
    ("vast", "4x-RTX_4060_Ti-32-65536", {"GeForce RTX 4060 Ti 16GB"}),
    ("vast", "1x-RTX_3060_Ti-32-65536", {"GeForce RTX 3060 Ti"}),
    ("vast", "4x-RTX_4070S_Ti-32-65536", {"GeForce RTX 4070 Ti Super"}),
    ("vast", "1x-RTX_5880Ada-32-65536", {"RTX 5880 Ada Generation"}),
    ("seeweb", "ECS1GPU3", {"A100 PCIe 80GB"}),
    ("seeweb", "ECS3GPU3", {"A100 PCIe 80GB"}),
    ("spheron", "n3-H100x8-NVLink__CANADA-1", {"H100 PCIe 80GB"}),
    ("aws", "g7e.2xlarge", {"RTX PRO 6000 Blackwell Server Edition"}),
])
def test_the_shapes_the_issue_found_on_wrong_cards_are_on_their_right_cards(shipped, provider, shape, cards):
    got = {o["card"] for o in shipped["offers"] if o["provider"] == provider and o["instance_type"] == shape}
    if got:
        assert got == cards
    else:
        why = shipped["coverage"][provider]["excluded"][shape]
        assert CARD_NOT_YET in why and all(c not in CARDS for c in cards), why


def test_shapes_covering_two_memory_sizes_are_split(shipped):
    split = shipped["coverage"]["vast"]["split"]
    assert split["1x-A100_SXM4-32-65536"] == ["A100 SXM4 40GB", "A100 SXM4 80GB"]
    regions = {o["card"]: set(o["regions"]) for o in shipped["offers"] if o["instance_type"] == "1x-A100_SXM4-32-65536"}
    assert regions == {"A100 SXM4 40GB": {"Georgia, US, NA"}, "A100 SXM4 80GB": {"Czechia, CZ, EU"}}


# --- planted mismatches: each kind refused ---------------------------------------------------------


def info(mib: float, count: int = 1) -> str:
    return f"\"{{'Gpus': [{{'Name': 'X', 'Count': {count}, 'MemoryInfo': {{'SizeInMiB': {mib}}}}}]}}\""


def reduce(provider: str, body: str, facts, amap=None):
    rows = parse_csv(HEADER + body, f"{provider}.csv", provider)
    return reduce_rows(rows, amap or load_map(), *facts)


def test_a_row_whose_memory_is_not_its_cards_is_refused(facts):
    # an 80 GB row under a name the map sends to the 40 GB card
    red = reduce("lambda", f"gpu_1x_a100_sxm4,A100,1,30,200,{info(81920)},1.10,,us-east-1\n", facts)
    assert not red.offers
    (a,) = [a for a in red.anomalies if a.kind == "mismatch"]
    assert "80 GiB per GPU, A100 SXM4 40GB has 40" in a.figures
    assert red.coverage["lambda"]["excluded"]["gpu_1x_a100_sxm4"].startswith("A100: mismatch:")


@pytest.mark.parametrize(("shape", "acc", "why"), [
    ("x-H100_PCIE", "H100", "name says pcie, H100 SXM5 80GB is not"),        # PCIe named, SXM card
    ("x-A100_SXM4", "A100-80G-PCIe", "name says sxm, A100 PCIe 80GB is not"),  # SXM named, PCIe card
    ("x-H100_NVL", "H100", "name says nvl, H100 SXM5 80GB is not"),          # NVL named, SXM card
    ("x-H100_PCIE", "H100-NVL", "name says pcie, H100 NVL 94GB is the NVL part"),
    ("x-RTXPRO6000-Server", "RTXPro6000", "name says server, RTX PRO 6000 Blackwell is not"),
    ("x-RTXPRO6000-MaxQ", "RTXPro6000", "name says max-q, RTX PRO 6000 Blackwell is not"),
])
def test_a_form_factor_the_name_states_that_the_card_lacks_is_refused(facts, shape, acc, why):
    red = reduce("vast", f"{shape},{acc},1,8,64,,1.0,,eu\n", facts)
    assert not red.offers and [a.figures for a in red.anomalies if a.kind == "mismatch"] == [f"form factor: {why}"]


def test_a_memory_table_splits_a_shape_and_refuses_a_size_it_lacks(facts):
    body = (f"1x-A100_SXM4-32-65536,A100,1,8,64,{info(40960)},0.9,,a\n"
            f"1x-A100_SXM4-32-65536,A100,1,8,64,{info(81920)},1.1,,b\n"
            f"2x-A100_SXM4-32-65536,A100,2,8,64,{info(2 * 61440, 2)},1.5,,c\n")
    red = reduce("vast", body, facts)
    assert {(o.instance_type, o.card) for o in red.offers} == {
        ("1x-A100_SXM4-32-65536", "A100 SXM4 40GB"), ("1x-A100_SXM4-32-65536", "A100 SXM4 80GB")}
    why = red.coverage["vast"]["excluded"]["2x-A100_SXM4-32-65536"]
    assert "60 GiB per GPU, which is none of 40 GiB, 80 GiB" in why


def test_a_card_not_in_the_catalog_is_excluded_with_that_reason(facts):
    red = reduce("aws", f"g7e.2xlarge,RTX PRO Server 6000,1,8,64,{info(98304)},3.0,,us-east-1\n", facts)
    if "RTX PRO 6000 Blackwell Server Edition" in CARDS:
        assert [o.card for o in red.offers] == ["RTX PRO 6000 Blackwell Server Edition"]
    else:
        assert not red.offers and CARD_NOT_YET in red.coverage["aws"]["excluded"]["g7e.2xlarge"]


def test_a_retired_family_is_dropped_with_its_source(facts, shipped):
    red = reduce("azure", "Standard_NC6,K80,1,6,56,,0.9,0.2,eastus\n", facts)
    assert not red.offers
    (a,) = [a for a in red.anomalies if a.kind == "retired"]
    assert "K80" in a.figures and "2023" in a.figures and "nc-series-retirement" in a.action
    azure = {o["instance_type"] for o in shipped["offers"] if o["provider"] == "azure"}
    retired = [a for a in shipped["anomalies"] if a["kind"] == "retired"]
    assert len(retired) == 18 and not azure & {a["shape"] for a in retired}
    assert all("learn.microsoft.com" in a["action"] for a in retired)
    assert not any(o["card"] == "Tesla K80" or o["card"].startswith("Tesla V100 PCIe")
                   for o in shipped["offers"] if o["provider"] == "azure")  # NVv3 (M60) is not retired


# --- prices update maps new names through aliases or a user map file --------------------------------


def test_update_maps_a_new_name_through_catalog_aliases_or_a_map_file(tmp_path, capsys):
    folder = tmp_path / "dl" / "newcloud"
    folder.mkdir(parents=True)
    (folder / "vms.csv").write_text(HEADER + f"nv-1,H100 NVL,1,16,128,{info(95830)},2.5,,r1\n"
                                    f"zz-1,Zeta-9,1,16,128,{info(24576)},0.5,,r1\n")
    before = hashlib.sha256(MAP.read_bytes()).hexdigest()
    assert main(["prices", "update", "--from", str(tmp_path / "dl"), "--date", "2026-11-25"]) == 0
    snap = load_prices()
    mine = {o.instance_type: o.card for o in snap.offers if o.provider == "newcloud"}
    assert mine == {"nv-1": "H100 NVL 94GB"}  # through the catalog's alias 'H100 NVL'
    assert "Zeta-9" in capsys.readouterr().err
    user_map = tmp_path / "mine.yaml"
    user_map.write_text("cards:\n  Zeta-9: L4\n")
    assert main(["prices", "update", "--from", str(tmp_path / "dl"), "--map", str(user_map)]) == 0
    mine = {o.instance_type: o.card for o in load_prices().offers if o.provider == "newcloud"}
    assert mine == {"nv-1": "H100 NVL 94GB", "zz-1": "L4"}
    user_map.write_text("cards:\n  Zeta-9: H100 SXM5 80GB\n")  # a wrong map is still checked: 24 GB is no H100
    assert main(["prices", "update", "--from", str(tmp_path / "dl"), "--map", str(user_map)]) == 0
    assert "zz-1" not in {o.instance_type for o in load_prices().offers if o.provider == "newcloud"}
    assert hashlib.sha256(MAP.read_bytes()).hexdigest() == before


# --- suspect prices ---------------------------------------------------------------------------------


def test_a_price_identical_across_regions_and_far_below_the_rest_is_flagged(facts):
    body = "".join(f"sh-8,H100,8,8,64,,40.0,,cheap-{i}\n" for i in range(4))
    body += "".join(f"sh-8,H100,8,8,64,,{88 + i},,dear-{i}\n" for i in range(3))
    (o,) = reduce("lambda", body, facts).offers
    assert o.on_demand_usd_h == 40.0 and o.flags and o.flags[0].startswith("uniform low price: 40 USD/h identical in 4")
    body = "".join(f"sh-8,H100,8,8,64,,{40 + i / 10},,r-{i}\n" for i in range(4)) + "sh-8,H100,8,8,64,,88,,d\n" * 2
    assert not reduce("lambda", body, facts).offers[0].flags  # not identical: ordinary regional prices


def test_spot_above_on_demand_flags_the_on_demand_and_equal_spot_is_no_spot(facts):
    red = reduce("lambda", "a,H100,1,8,64,,2.0,2.5,r1\na,H100,1,8,64,,2.1,1.0,r2\n"
                           "b,H100,1,8,64,,2.0,2.0,r1\n", facts)
    a, b = sorted(red.offers, key=lambda o: o.instance_type)
    assert a.flags == ("spot above on-demand: in r1 (1 of 2 regions), so the on-demand price is suspect too",)
    assert a.regions["r1"] == (2.0, None)
    assert not b.flags and b.spot_usd_h is None
    assert [x.kind for x in red.anomalies if x.shape == "b"] == ["spot_equals_on_demand"]


def test_a_price_far_below_every_other_provider_is_flagged(facts):
    rows = []
    for provider, price in (("lambda", 2.5), ("do", 2.2), ("nebius", 2.9), ("vast", 0.5)):
        rows += parse_csv(HEADER + f"h-{provider},H100,1,8,64,,{price},,r\n", "x.csv", provider)
    red = reduce_rows(rows, load_map(), *facts)
    flagged = {o.provider: o.flags for o in red.offers if o.flags}
    assert list(flagged) == ["vast"] and "4.4x below the cheapest other provider (do)" in flagged["vast"][0]


def test_the_gcp_h100_h200_b200_headlines_do_not_pass_unflagged(shipped):
    gcp = {o["instance_type"]: o for o in shipped["offers"] if o["provider"] == "gcp"
           and o["card"].split()[0] in ("H100", "H200", "B200")}
    unflagged = [k for k, o in gcp.items() if not o.get("flags")]
    assert len(gcp) == 10 and not unflagged, unflagged
    assert gcp["a3-highgpu-8g"]["on_demand_usd_h"] == pytest.approx(43.066, abs=1e-3)
    assert any(f.startswith("uniform low price") for f in gcp["a3-highgpu-8g"]["flags"])
    spot_above = [a for a in shipped["anomalies"] if a["kind"] == "spot_above_on_demand"]
    assert spot_above and all(a["shape"] in gcp for a in spot_above)
    for o in shipped["offers"]:  # no spot at or above on-demand survives
        assert all(od is None or spot is None or spot < od for od, spot in o["regions"].values()), o["instance_type"]


def test_a_flagged_offer_is_set_aside_by_the_advisor_and_the_advice_says_so():
    from gpuadvisor.advisor.market import offers_for

    snap = load_prices(SHIPPED)
    offers, info_ = offers_for(["gcp"], snapshot=snap)
    assert not any(o.flags for o in offers) and len(info_.set_aside) == 10
    line = info_.set_aside_line()
    assert line.startswith("10 rental offers with suspect prices set aside") and "gcp a" in line
    assert dict(info_.set_aside_kinds)["uniform low price"] == 10


def test_prices_list_shows_each_flag_beside_its_offer(capsys):
    assert main(["prices", "list", "--provider", "gcp", "--card", "h100"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if " a3-highgpu-8g " in line)
    assert "uniform-low" in row
    assert main(["prices", "show", "a3-highgpu-8g"]) == 0
    assert "SUSPECT PRICE: uniform low price" in capsys.readouterr().out


# --- freshness ---------------------------------------------------------------------------------------


def test_each_file_records_its_commit_date_with_its_source(shipped):
    bounded = 0
    for f in shipped["source"]["files"]:
        assert re.fullmatch(r"unknown|(after )?\d{4}-\d\d-\d\d", f["committed"]), f
        assert f["committed_source"], f"{f['provider']}: a commit date without the record it comes from"
        if f["committed"] != "unknown":
            bounded += 1
            assert "https://github.com/skypilot-org/" in f["committed_source"], f
            assert f["committed"].removeprefix("after ") <= f["read"], f
    assert bounded >= 21  # the v9 files and every provider whose first catalog pull request is on record


def _snap_dated(committed: dict[str, str]):
    """The shipped snapshot with these providers' commit dates (every other file unknown)."""
    from dataclasses import replace

    snap = load_prices(SHIPPED)
    files = tuple({**f, "committed": committed.get(str(f["provider"]), "unknown")} for f in snap.source.files)
    return replace(snap, source=replace(snap.source, files=files))


def test_freshness_gives_the_age_as_the_range_the_commit_dates_allow():
    snap = load_prices(SHIPPED)
    aws = snap.freshness(today="2026-11-27", providers=["aws"])  # v9: committed on or after 2026-07-09
    assert (aws.age_days, aws.max_age_days, aws.since) == (3, 141, "2026-07-09")
    assert aws.line() == ("prices as of 2026-11-24 (read; commit dates known only as lower bounds), "
                          "3 to 141 days old (committed on or after 2026-07-09)")
    assert not aws.stale and aws.may_be_stale and "may be up to 141 days old" in aws.warning()
    fresh = snap.freshness(today="2026-11-27")  # every provider: some dates unknown, so no upper bound
    assert fresh.age_days == 3 and fresh.undated and fresh.bounded
    assert fresh.line().startswith("prices as of 2026-11-24 (read; commit date unknown for ")
    assert fresh.line().endswith("at least 3 days old")
    assert "no commit date on record" in fresh.warning()  # scp's v5 file may be years old
    recent = _snap_dated({"aws": "after 2026-11-01"}).freshness(today="2026-11-27", providers=["aws"])
    assert recent.max_age_days == 26 and recent.warning() is None
    exact = _snap_dated({"aws": "2026-11-20", "gcp": "2026-10-01"}).freshness(today="2026-11-27",
                                                                              providers=["aws", "gcp"])
    assert (exact.as_of, exact.basis, exact.age_days, exact.max_age_days) == ("2026-10-01", "oldest file commit", 57,
                                                                               None)
    assert exact.line() == "prices as of 2026-10-01 (oldest file commit), 57 days old" and exact.warning() is None
    old = snap.freshness(today="2027-03-01", providers=["runpod"])  # unknown date, read 97 days before
    assert old.stale and "97 days old" in old.warning()
    assert Freshness("2026-01-01", "oldest file commit", 91).stale


def test_a_bad_commit_date_in_sources_is_one_line(tmp_path):
    from gpuadvisor.core.errors import UserError
    from gpuadvisor.prices.raw import SOURCES, read_sources

    line = "\t".join(["aws", "catalogs/v9/aws/vms.csv", "abc1234", "whole file", "2026-11-24", "1", "00", "last week",
                      "a guess"])
    (tmp_path / SOURCES).write_text(line + "\n")
    with pytest.raises(UserError, match="committed must be YYYY-MM-DD, 'after YYYY-MM-DD' or unknown"):
        read_sources(tmp_path)
    (tmp_path / SOURCES).write_text(line.replace("last week", "after 2026-07-09") + "\n")
    assert read_sources(tmp_path)[0].committed == "after 2026-07-09"


def test_recommend_shows_the_age_of_the_prices_it_used(capsys):
    assert main(["recommend", "llama-3.1-70b", "--tok-s", "20"]) == 0
    out = capsys.readouterr().out
    head = " ".join(out.split("\n\n")[0].split())
    assert re.search(r"prices as of 2026-11-24 \(read; commit date unknown for \d+ files?, known only as a lower "
                     r"bound for \d+\), at least \d+ days? old", head), head
    cap = io.StringIO()
    with contextlib.redirect_stdout(cap):
        assert main(["recommend", "llama-3.1-70b", "--tok-s", "20", "--json"]) == 0
    prices = json.loads(cap.getvalue())["prices"]
    assert prices["age_days"] >= 3 and prices["freshness"].startswith("prices as of 2026-11-24")
    assert prices["set_aside"] and prices["set_aside_kinds"]["uniform low price"] == 10


@pytest.mark.slow  # doc sync: docs/prices.md
def test_the_coverage_page_is_the_snapshots():
    import importlib.util

    tool = ROOT / "tools" / "build_prices.py"
    if not tool.is_file():
        pytest.skip("tools/ is not in this source tree")
    spec = importlib.util.spec_from_file_location("build_prices_for_doc", tool)
    bp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bp)
    page = bp.coverage_page(load_prices(SHIPPED))
    assert page == (ROOT / "docs" / "prices.md").read_text(), "run python3 -m tools.build_prices --doc"
    row = next(line for line in page.splitlines() if line.startswith("| azure |"))
    assert "| after 2024-12-13 |" in row and "H200" in row.split("|")[-2]  # v6 file, lacks H200: said
    assert "- azure: after 2024-12-13: https://github.com/skypilot-org/skypilot/pull/4470" in page  # the record
