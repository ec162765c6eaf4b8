"""Cross-node outliers, `fleet check` and `fleet report` on fleet folders built from fakes."""

from __future__ import annotations

import json
import sys

import pytest
from fleet_fakes import fleet_folder, make_run

from gpuadvisor.cli import main
from gpuadvisor.core.results import Measurement, ProbeResult, RunResult
from gpuadvisor.fleet import store
from gpuadvisor.fleet.model import FleetSummary, NodeEntry
from gpuadvisor.fleet.outliers import find_outliers

# ------------------------------------------------------------------ outliers, check, report

def test_outliers_flag_the_straggler_only_in_its_worse_direction(tmp_path):
    fleet = store.load(fleet_folder(tmp_path))
    out = find_outliers(fleet.results, tolerance_pct=10)
    assert [(o.node, o.device, o.key) for o in out] == [("node2", 1, "probe.latency"), ("node2", 1, "tensor.bf16")]
    bf16 = out[1]
    assert bf16.median == 780.0 and bf16.deviation_pct == pytest.approx(-15.0) and bf16.count == 6
    assert "15.0% below the fleet median 780" in bf16.describe()
    assert find_outliers(fleet.results, tolerance_pct=40) == []


def test_outliers_never_compare_different_gpus(tmp_path):
    runs = {"a": make_run("a", [{}]), "b": make_run("b", [{"tensor.bf16": 300.0}], gpu_name="NVIDIA L40S")}
    assert find_outliers(runs) == []


def test_fleet_check_exit_codes_and_reasons(tmp_path, capsys):
    healthy = fleet_folder(tmp_path / "a", straggler=False)
    assert main(["fleet", "check", str(healthy)]) == 0
    bad = fleet_folder(tmp_path / "b", straggler=True, lost=True)
    capsys.readouterr()
    assert main(["fleet", "check", str(bad), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    by = {n["node"]: n for n in data["nodes"]}
    assert by["node1"]["passed"] and not by["node2"]["passed"]
    assert by["node4"]["status"] == "lost" and "died" in by["node4"]["reason"]
    assert {o["key"] for o in by["node2"]["outliers"]} == {"tensor.bf16", "probe.latency"}
    assert main(["fleet", "check", str(bad), "--tolerance", "50"]) == 1  # the lost node still fails
    out = capsys.readouterr().out
    assert "FAIL node4: lost: node died" in out and "PASS node2" in out


def test_fleet_check_applies_rules_to_every_gpu(tmp_path, capsys):
    folder = fleet_folder(tmp_path, straggler=False)
    rules = tmp_path / "r.yaml"
    rules.write_text("rules:\n  - check: figure\n    figure: tensor.bf16\n    min: 700\n")
    assert main(["fleet", "check", str(folder), "--rules", str(rules)]) == 0
    rules.write_text("rules:\n  - check: figure\n    figure: tensor.bf16\n    min: 800\n")
    capsys.readouterr()
    assert main(["fleet", "check", str(folder), "--rules", str(rules), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert all(len(n["checks"]["devices"]) == 2 and not n["passed"] for n in data["nodes"])


def test_a_gpu_node_whose_probe_found_no_gpu_fails(tmp_path, capsys):
    folder = fleet_folder(tmp_path, straggler=False)
    entry = NodeEntry(node_id="id9", name="node9", gpus=8, status="ok")
    run = make_run("h9")
    run.message = "no NVIDIA GPU found (NVML: driver not loaded)"
    entry.file = store.write_node(folder, entry, run)
    fleet = store.load(folder)
    fleet.summary.nodes.append(entry)
    store.write_summary(folder, fleet.summary)
    assert main(["fleet", "check", str(folder)]) == 1
    out = capsys.readouterr().out
    assert "FAIL node9: failed: Ray lists 8 GPU(s) but its probe found none: no NVIDIA GPU found" in out


@pytest.mark.parametrize("argv, expect", [
    (["fleet", "check", "{missing}"], "not a fleet folder"),
    (["fleet", "check", "{folder}", "--tolerance", "-3"], "must be >= 0"),
    (["fleet", "check", "{folder}", "--rules", "{badrules}"], "unknown check"),
    (["fleet", "report", "{folder}", "-o", "{tmp}/x.pdf"], "must end in .html"),
    (["fleet"], "give a subcommand"),
])
def test_fleet_bad_input_is_one_line_exit_2(tmp_path, capsys, argv, expect):
    folder = fleet_folder(tmp_path)
    bad = tmp_path / "bad.yaml"
    bad.write_text("rules:\n  - check: nonsense\n")
    fill = {"missing": str(tmp_path / "nope"), "folder": str(folder), "badrules": str(bad), "tmp": str(tmp_path)}
    assert main([a.format(**fill) for a in argv]) == 2
    err = capsys.readouterr().err.strip()
    assert expect in err and len(err.splitlines()) == 1


def test_fleet_report_is_self_contained_and_names_problems(tmp_path):
    folder = fleet_folder(tmp_path, straggler=True, lost=True)
    out = tmp_path / "fleet.html"
    assert main(["fleet", "report", str(folder), "-o", str(out)]) == 0
    html = out.read_text()
    assert "node4" in html and "lost" in html and "node died or became unreachable" in html
    assert "15.0% below the fleet median" in html
    assert "<script src" not in html and "Plotly.newPlot" in html
    assert main(["fleet", "report", str(folder), "-o", str(out)]) == 2  # never clobbers without --force


def test_fleet_report_without_plotly_keeps_the_tables(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "plotly", None)
    monkeypatch.setitem(sys.modules, "plotly.offline", None)
    folder = fleet_folder(tmp_path, straggler=True)
    assert main(["fleet", "report", str(folder)]) == 0
    html = (folder / "fleet-report.html").read_text()
    assert "no chart: Plotly is not usable here (ModuleNotFoundError" in html and "15.0% below the fleet median" in html
    assert "Plotly.newPlot" not in html


def test_fleet_report_of_a_fleet_without_any_result(tmp_path):
    folder = store.prepare_folder(tmp_path / "f")
    store.write_summary(folder, FleetSummary(timeout_s=5, nodes=[NodeEntry(node_id="x", name="x", status="timeout",
                                                                           reason="no result within 5 s")]))
    assert main(["fleet", "report", str(folder)]) == 0
    assert "no result within 5 s" in (folder / "fleet-report.html").read_text()
    assert main(["fleet", "check", str(folder)]) == 1

@pytest.mark.skipif("node_probes" not in RunResult.model_fields,
                    reason="this gpuadvisor's results have no node_probes (the interconnect probe is not merged)")
def test_interconnect_figures_are_compared_between_like_nodes_and_reported(tmp_path):
    folder = store.prepare_folder(tmp_path / "fleet")
    summary = FleetSummary(timeout_s=60, finished=True)
    for i, busbw in ((1, 330.0), (2, 335.0), (3, 150.0)):
        run = make_run(f"h{i}", [{}, {}])
        m = Measurement(key="interconnect.allreduce_busbw_1g", label="NCCL all-reduce bus bandwidth, 1 GiB",
                        value=busbw, unit="GB/s")
        run.node_probes.append(ProbeResult(probe="interconnect", status="ok", measurements=[m]))
        entry = NodeEntry(node_id=f"id{i}", name=f"node{i}", gpus=2, status="ok")
        entry.file = store.write_node(folder, entry, run)
        summary.nodes.append(entry)
    store.write_summary(folder, summary)
    out = find_outliers(store.load(folder).results)
    assert [(o.node, o.device, o.key, o.hardware) for o in out] == [
        ("node3", None, "interconnect.allreduce_busbw_1g", "node: 2 x NVIDIA H200")]
    assert main(["fleet", "report", str(folder)]) == 0
    html = (folder / "fleet-report.html").read_text()
    assert "NCCL all-reduce bus bandwidth, 1 GiB" in html and "150 GB/s" in html
