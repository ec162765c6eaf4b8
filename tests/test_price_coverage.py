"""The shipped rental snapshot against the raw rows committed beside it (catalog/prices/raw/):
every GPU shape of every provider's file is an offer, joined to its host VM, or excluded with a
reason; the snapshot is exactly what tools/build_prices.py makes of the rows (offline rebuild)."""

from __future__ import annotations

import csv
import gzip
import io
import json
from pathlib import Path

import pytest

from gpuadvisor.cli import main
from gpuadvisor.prices.model import dump_snapshot
from gpuadvisor.prices.raw import read_sources
from gpuadvisor.prices.reduce import catalog_facts
from gpuadvisor.prices.refresh import build_from_raw

ROOT = Path(__file__).resolve().parents[1]
RAW = ROOT / "catalog" / "prices" / "raw"
SHIPPED = ROOT / "catalog" / "prices" / "rental.json"
SOURCES = read_sources(RAW)


@pytest.fixture(autouse=True)
def shipped_only(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUADVISOR_PRICES", str(tmp_path / "absent.json"))


@pytest.fixture(scope="module")
def listed(tmp_path_factory) -> dict:
    """`gpuadvisor prices list --json` of the shipped snapshot."""
    import os

    os.environ["GPUADVISOR_PRICES"] = str(tmp_path_factory.mktemp("u") / "absent.json")
    cap = io.StringIO()
    import contextlib

    with contextlib.redirect_stdout(cap):
        assert main(["prices", "list", "--json"]) == 0
    return json.loads(cap.getvalue())


def raw_gpu_shapes(provider: str, non_gpu: set[str]) -> set[str]:
    """Read with the csv module alone (not the builder's parser): each row with an accelerator is
    a shape, named by its instance type, or 'Nx ACC (attached)' where the row prices GPUs alone."""
    text = gzip.decompress((RAW / f"{provider}.csv.gz").read_bytes()).decode()
    shapes = set()
    for row in csv.DictReader(io.StringIO(text)):
        acc = (row.get("AcceleratorName") or "").strip()
        if not acc or acc in non_gpu:
            continue
        it = (row.get("InstanceType") or "").strip()
        shapes.add(it or f"{float(row['AcceleratorCount']):g}x {acc} (attached)")
    return shapes


@pytest.mark.parametrize("provider", [e.provider for e in SOURCES])
def test_every_raw_gpu_shape_is_an_offer_or_accounted_for(listed, provider):
    non_gpu = {u["accelerator"] for u in listed["non_gpu"] if u["provider"] == provider}
    raw = raw_gpu_shapes(provider, non_gpu)
    cov = listed["coverage"][provider]
    offers = {o["instance_type"] for o in listed["offers"] if o["provider"] == provider}
    n_offers = sum(o["provider"] == provider for o in listed["offers"])
    excluded, joined = set(cov["excluded"]), set(cov["joined"])
    hosts = {h for hs in cov["joined"].values() for h in hs}
    split = sum(len(cards) - 1 for cards in cov["split"].values())  # a shape split by memory: one offer per card
    assert n_offers == len(offers) + split, "two offers share an instance type and are not a split shape"
    n_offers -= split
    assert not (excluded & joined) and not (offers & excluded) and not (offers & joined)
    assert (offers & raw) | excluded | joined == raw, sorted(raw - (offers | excluded | joined))[:5]
    assert offers - raw <= hosts, sorted(offers - raw - hosts)[:5]
    assert n_offers == len(raw) - len(excluded) - len(joined) + len(hosts & offers)
    assert cov["gpu_shapes"] == len(raw) and cov["offers"] == n_offers + split
    assert all(reason for reason in cov["excluded"].values())


def test_sources_name_file_commit_and_rows():
    for e in SOURCES:
        assert e.path == f"catalogs/{e.path.split('/')[1]}/{e.provider}/vms.csv" and len(e.commit) == 40
        text = gzip.decompress((RAW / f"{e.provider}.csv.gz").read_bytes()).decode()
        assert e.rows == len([line for line in text.splitlines() if line.strip()]) - 1


def test_shipped_snapshot_is_the_rebuild_of_the_raw_rows():
    names, memory, forms = catalog_facts()
    snap = build_from_raw(RAW, card_names=names, card_memory=memory, card_forms=forms)
    assert dump_snapshot(snap) == SHIPPED.read_text(), "run tools/build_prices.py"


def test_size_of_the_snapshot(listed):
    providers = {o["provider"] for o in listed["offers"]}
    assert len(listed["offers"]) >= 1000 and len(providers) >= 10, (len(listed["offers"]), len(providers))


def test_list_shows_the_date_and_every_files_version(listed, capsys):
    src = listed["source"]
    assert src["date"] == max(e.read for e in SOURCES)
    assert {(f["provider"], f["path"], f["commit"]) for f in src["files"]} == {
        (e.provider, e.path, e.commit) for e in SOURCES}
    for e in SOURCES:
        assert f"{e.provider} {e.path.split('/')[1]}@{e.commit[:7]}" in src["versions"]
    assert main(["prices", "list", "--provider", "lambda"]) == 0
    text = capsys.readouterr().out
    assert src["date"] in text.splitlines()[0]
    assert all(f"{e.path}@{e.commit[:7]}" in " ".join(text.split()) for e in SOURCES)


def test_the_api_gives_one_line_for_the_tui_and_report():
    from gpuadvisor import api

    line = api.prices_line()
    assert "\n" not in line and line.startswith("rental prices 20") and "aws v9@" in line


def test_non_gpu_accelerators_are_listed_not_dropped(listed):
    names = {(u["provider"], u["accelerator"]) for u in listed["non_gpu"]}
    assert {("aws", "Inferentia2"), ("aws", "Trainium"), ("aws", "Gaudi HL-205")} <= names
    assert all(u["rows"] > 0 and u["shapes"] > 0 for u in listed["non_gpu"])
    kinds = {a["kind"] for a in listed["anomalies"]}
    assert {"non_gpu", "fractional"} <= kinds


@pytest.mark.slow  # doc sync: catalog/prices/README.md
def test_the_readme_coverage_table_is_the_snapshots():
    import importlib.util

    tool = ROOT / "tools" / "build_prices.py"
    if not tool.is_file():
        pytest.skip("tools/ is not in this source tree")
    spec = importlib.util.spec_from_file_location("build_prices_for_table", tool)
    bp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bp)
    from gpuadvisor.prices import load_prices

    table = bp.coverage_table(load_prices(SHIPPED))
    assert table in (ROOT / "catalog" / "prices" / "README.md").read_text(), "paste build_prices.py --table"


def test_the_shipped_snapshot_has_the_checks_applied(listed):
    offers = listed["offers"]
    for o in offers:  # spot above on-demand never survives
        assert all(od is None or spot is None or spot <= od for od, spot in o["regions"].values()), o["instance_type"]
    gcp = {o["instance_type"]: o for o in offers if o["provider"] == "gcp"}
    for host in ("a3-highgpu-8g", "a3-megagpu-8g", "a3-ultragpu-8g", "a4-highgpu-8g", "g2-standard-4"):
        assert gcp[host]["vcpus"] and not gcp[host].get("note", "").startswith("GPU only"), host  # VM + GPUs
    assert not any(k in gcp for k in ("8x H100 (attached)", "8x B200 (attached)", "8x H200 (attached)"))
    flagged = {(a["provider"], a["shape"]) for a in listed["anomalies"] if a["kind"] == "outlier"}
    assert ("gcp", "a3-highgpu-8g") in flagged  # ~$5.4 per H100 in most regions, $11-14 in five
    fractions = {o["instance_type"]: o for o in offers if o.get("gpu_fraction", 1) < 1}
    assert fractions["Standard_NV4as_v4"]["gpu_memory_gib"] == 2.0 and "g6f.large" in fractions
    assert not any(o["provider"] == "mithril" and o["on_demand_usd_h"] == 0.01 for o in offers)
