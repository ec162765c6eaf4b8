"""Fleet core without Ray: node selection, gathering under a deadline (fake backend and clock),
the fleet folder, cross-node outliers, `fleet check` / `fleet report`, and the missing extra."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from gpuadvisor.cli import main
from gpuadvisor.errors import UserError
from gpuadvisor.fleet import RAY_MISSING, store
from gpuadvisor.fleet.gather import NodeLost, TaskFailed, gather
from gpuadvisor.fleet.model import Fleet, FleetSummary, NodeEntry
from gpuadvisor.fleet.nodes import NodeInfo, select_nodes
from gpuadvisor.fleet.outliers import find_outliers
from gpuadvisor.fleet.runner import FleetOptions, run_fleet
from gpuadvisor.results import DeviceResult, HostInfo, Measurement, ProbeResult, RunResult

HEALTHY = {"memory.triad": ("GB/s", 4300.0), "tensor.bf16": ("TFLOP/s", 780.0), "probe.latency": ("ms", 2.0),
           "crossover.matmul.kernel": ("N", 512.0)}


def make_run(host: str, gpus: list[dict[str, float]] | None = None, gpu_name: str = "NVIDIA H200",
             host_figs: dict[str, float] | None = None) -> RunResult:
    """A probe result with the given figures per GPU (defaults: HEALTHY), and host figures."""
    devices = []
    for i, over in enumerate(gpus or []):
        ms = [Measurement(key=k, label=k, value=over.get(k, v), unit=u) for k, (u, v) in HEALTHY.items()]
        probes = [ProbeResult(probe="p", status="ok", measurements=ms)]
        devices.append(DeviceResult(index=i, name=gpu_name, probes=probes))
    hp = [ProbeResult(probe="host", status="ok", measurements=[
        Measurement(key=k, label=k, value=v, unit="GB/s") for k, v in (host_figs or {}).items()])]
    return RunResult(host=HostInfo(hostname=host, os="Linux", cpu="Xeon", cpu_count=8, memory_gib=64.0, python="3.12"),
                     gpu_found=bool(devices), devices=devices, host_probes=hp)


def node(i: int, gpus: int = 2) -> NodeInfo:
    return NodeInfo(node_id=f"{i:02d}" * 8, name=f"10.0.0.{i} ({i:02d}{i:02d}{i:02d}{i:02d})", address=f"10.0.0.{i}",
                    hostname=f"n{i}", gpus=gpus, cpus=8)


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


class FakeBackend:
    """Each node follows a plan: (what, at_seconds). what: ok | lost | fail | garbage | die | hang."""

    def __init__(self, clock: Clock, plan: dict[str, tuple[str, float]], started: tuple[str, ...] = ()) -> None:
        self.clock, self.plan, self.cancelled = clock, plan, []
        self.dead: set[str] = set()
        self.events = {nid: [{"kind": "start"}, {"kind": "probe_start", "probe": "tensor", "where": "GPU 0: "}]
                       for nid in started}

    def submit(self, n: NodeInfo) -> str:
        if self.plan[n.node_id][0] == "unschedulable":
            raise RuntimeError("no such node")
        return n.node_id

    def _due(self, h: str) -> float:
        what, at = self.plan[h]
        return float("inf") if what in ("hang", "die") else at

    def wait(self, handles: list[str], timeout_s: float) -> list[str]:
        nxt = min([self._due(h) for h in handles] + [self.clock.t + timeout_s])
        self.clock.t = max(self.clock.t, nxt)
        for h in handles:
            if self.plan[h][0] == "die" and self.plan[h][1] <= self.clock.t:
                self.dead.add(h)
        return [h for h in handles if self._due(h) <= self.clock.t]

    def fetch(self, h: str) -> str:
        what = self.plan[h][0]
        if what == "lost":
            raise NodeLost("node died while probing (Ray: NodeDiedError)")
        if what == "fail":
            raise TaskFailed("probe task raised RuntimeError: boom")
        if what == "garbage":
            return '{"not": "a result"}'
        return make_run(f"host-{h[:2]}", [{}, {}]).model_dump_json()

    def alive_nodes(self) -> set[str]:
        return {h for h in self.plan if h not in self.dead}

    def progress(self) -> dict[str, list[dict]]:
        out, self.events = self.events, {}
        return out

    def cancel(self, h: str) -> None:
        self.cancelled.append(h)


# ------------------------------------------------------------------ selection


def raw(i: int, gpus: int = 0, cpus: float = 4, alive: bool = True, **res: float) -> dict:
    resources = {"CPU": cpus, **({"GPU": gpus} if gpus else {}), **res}
    return {"NodeID": f"{i:02d}" * 28, "Alive": alive, "NodeManagerAddress": f"10.0.0.{i}", "Resources": resources}


def test_select_gpu_nodes_skips_cpu_and_dead_nodes_with_reasons():
    sel = select_nodes([raw(3, gpus=8), raw(1, gpus=2), raw(2), raw(4, gpus=8, alive=False)])
    assert [n.address for n in sel.nodes] == ["10.0.0.1", "10.0.0.3"]
    assert [n.gpus for n in sel.nodes] == [2, 8]
    assert [(n.address, why.split(" (")[0]) for n, why in sel.skipped] == [("10.0.0.2", "no GPUs")]


def test_select_cpu_nodes_and_custom_resource():
    nodes = [raw(1, cpus=0), raw(2, gpuadvisor_sim=1), raw(3, gpuadvisor_sim=1), raw(4, gpus=1)]
    sel = select_nodes(nodes, include_cpu_nodes=True, resource="gpuadvisor_sim")
    assert [n.address for n in sel.nodes] == ["10.0.0.2", "10.0.0.3"]
    assert {n.address for n, _ in sel.skipped} == {"10.0.0.1", "10.0.0.4"}
    head_only = select_nodes([raw(1, cpus=0)], include_cpu_nodes=True)
    assert not head_only.nodes and "no CPUs" in head_only.skipped[0][1]


# ------------------------------------------------------------------ gathering


def test_gather_keeps_every_answer_and_names_each_failure():
    clock = Clock()
    nodes = [node(i) for i in range(1, 8)]
    plan = {nodes[0].node_id: ("ok", 3), nodes[1].node_id: ("lost", 4), nodes[2].node_id: ("fail", 2),
            nodes[3].node_id: ("hang", 0), nodes[4].node_id: ("die", 5), nodes[5].node_id: ("garbage", 1),
            nodes[6].node_id: ("hang", 0)}
    be = FakeBackend(clock, plan, started=(nodes[6].node_id,))
    events = []
    got = gather(nodes, be, timeout_s=60, clock=clock, on_event=lambda k, **kw: events.append((k, kw["outcome"].node)))
    by = {o.node.address: o for o in got.outcomes}
    assert by["10.0.0.1"].status == "ok" and by["10.0.0.1"].result.host.hostname == "host-01"
    assert by["10.0.0.2"].status == "lost" and "NodeDiedError" in by["10.0.0.2"].reason
    assert by["10.0.0.3"].status == "failed" and "boom" in by["10.0.0.3"].reason
    assert by["10.0.0.4"].status == "timeout" and by["10.0.0.4"].reason.startswith("not started within 60 s")
    assert by["10.0.0.5"].status == "lost" and "before its task started" in by["10.0.0.5"].reason
    assert by["10.0.0.6"].status == "failed" and "not a probe result" in by["10.0.0.6"].reason
    assert by["10.0.0.7"].status == "timeout" and "(running GPU 0: tensor)" in by["10.0.0.7"].reason
    assert by["10.0.0.7"].started
    assert got.duration_s == pytest.approx(60, abs=0.6)
    assert sorted(be.cancelled) == sorted([nodes[3].node_id, nodes[4].node_id, nodes[6].node_id])
    assert [n.address for k, n in events if k == "node_done"].count("10.0.0.1") == 1
    assert all(o.result is None for o in got.outcomes if o.status != "ok")


def test_gather_does_not_wait_past_the_last_answer():
    clock = Clock()
    nodes = [node(1), node(2)]
    got = gather(nodes, FakeBackend(clock, {nodes[0].node_id: ("ok", 2), nodes[1].node_id: ("ok", 7)}),
                 timeout_s=900, clock=clock)
    assert [o.status for o in got.outcomes] == ["ok", "ok"]
    assert got.duration_s == pytest.approx(7, abs=0.6)


def test_gather_submit_error_fails_that_node_only():
    clock = Clock()
    nodes = [node(1), node(2)]
    got = gather(nodes, FakeBackend(clock, {nodes[0].node_id: ("unschedulable", 0), nodes[1].node_id: ("ok", 1)}),
                 timeout_s=10, clock=clock)
    assert got.outcomes[0].status == "failed" and "could not schedule" in got.outcomes[0].reason
    assert got.outcomes[1].status == "ok"


def test_gather_ctrl_c_keeps_what_arrived():
    clock = Clock()
    nodes = [node(1), node(2)]
    be = FakeBackend(clock, {nodes[0].node_id: ("ok", 1), nodes[1].node_id: ("hang", 0)})
    real_wait = be.wait

    def wait(handles, timeout_s):
        if clock.t >= 5:
            raise KeyboardInterrupt
        return real_wait(handles, timeout_s)

    be.wait = wait
    got = gather(nodes, be, timeout_s=100, clock=clock)
    assert got.interrupted
    assert got.outcomes[0].status == "ok"
    assert got.outcomes[1].status == "failed" and "interrupted" in got.outcomes[1].reason


# ------------------------------------------------------------------ the fleet folder


def test_run_fleet_writes_a_result_per_answering_node_and_the_summary(tmp_path):
    clock = Clock()
    raws = [raw(1, gpus=2), raw(2, gpus=2), raw(3)]
    ids = [r["NodeID"] for r in raws]
    be = FakeBackend(clock, {ids[0]: ("ok", 1), ids[1]: ("lost", 2)})
    import gpuadvisor.fleet.gather as g

    monkey_clock = g.time.monotonic
    g.time.monotonic = clock  # the runner uses the default clock; drive it from the fake
    try:
        folder = store.prepare_folder(tmp_path / "fleet")
        run = run_fleet(FleetOptions(timeout_s=30), be, folder, raw_nodes=raws)
    finally:
        g.time.monotonic = monkey_clock
    assert run.summary.finished and not run.summary.all_ok
    fleet = store.load(folder)
    assert [n.status for n in fleet.summary.nodes] == ["ok", "lost"]
    assert fleet.summary.skipped[0].reason.startswith("no GPUs")
    assert list(fleet.results) == [fleet.summary.nodes[0].name]
    assert fleet.summary.nodes[0].file == "nodes/10.0.0.1-01010101.json"
    assert fleet.summary.nodes[0].hostname == "host-01"  # from the node's own result
    assert fleet.summary.nodes[1].file is None and "NodeDiedError" in fleet.summary.nodes[1].reason
    # each node file is an ordinary probe result: the single-node commands read it unchanged
    assert main(["report", "--probe", str(folder / fleet.summary.nodes[0].file), "-o", str(tmp_path / "n.html")]) == 0


def test_no_nodes_to_probe_is_one_line_error(tmp_path):
    with pytest.raises(UserError, match=r"no nodes to probe among 1 live node.*--include-cpu-nodes"):
        run_fleet(FleetOptions(), FakeBackend(Clock(), {}), tmp_path, raw_nodes=[raw(1)])


def test_prepare_folder_refuses_a_non_empty_folder(tmp_path):
    (tmp_path / "x").write_text("keep me")
    with pytest.raises(UserError, match="not empty; pass --force"):
        store.prepare_folder(tmp_path)
    assert (tmp_path / "x").read_text() == "keep me"
    (tmp_path / "f").write_text("")
    with pytest.raises(UserError, match="must be a folder"):
        store.prepare_folder(tmp_path / "f")


def test_load_rejects_a_node_file_outside_the_folder(tmp_path):
    s = FleetSummary(timeout_s=1, nodes=[NodeEntry(node_id="a", name="a", status="ok", file="../../etc/x.json")])
    store.write_summary(tmp_path, s)
    with pytest.raises(UserError, match="outside the folder"):
        store.load(tmp_path)


# ------------------------------------------------------------------ outliers, check, report


def fleet_folder(tmp_path: Path, straggler: bool = True, lost: bool = False) -> Path:
    """3 nodes x 2 H200; node 2 GPU 1 is 15% slow in bf16 and 30% slow in latency when straggler."""
    folder = store.prepare_folder(tmp_path / "fleet")
    summary = FleetSummary(timeout_s=60, finished=True)
    for i in (1, 2, 3):
        slow = {"tensor.bf16": 663.0, "probe.latency": 2.6} if straggler and i == 2 else {}
        entry = NodeEntry(node_id=f"id{i}", name=f"node{i}", gpus=2, status="ok")
        entry.file = store.write_node(folder, entry, make_run(f"h{i}", [{}, slow], host_figs={"host.triad": 20.0}))
        summary.nodes.append(entry)
    if lost:
        summary.nodes.append(NodeEntry(node_id="id4", name="node4", gpus=8, status="lost",
                                       reason="node died or became unreachable while probing"))
    store.write_summary(folder, summary)
    return folder


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


# ------------------------------------------------------------------ the node task and the missing extra


def test_node_task_runs_an_ordinary_probe_and_reports_progress():
    from gpuadvisor.fleet.node_task import probe_node

    events = []
    payload = probe_node({"only": ["host"], "probe_options": {"host": {"vec_bytes": 1 << 20, "mat_n": 64,
                                                                      "repeats": 1}}},
                         lambda kind, **kw: events.append((kind, kw.get("probe"))))
    run = RunResult.model_validate_json(payload)
    assert run.host_probe("host").status == "ok"
    assert events[0][0] == "start" and ("probe_end", "host") in events


def test_fleet_probe_without_ray_says_how_to_install_it(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    assert main(["fleet", "probe", "--out", str(tmp_path / "f")]) == 2
    assert capsys.readouterr().err.strip() == f"gpuadvisor: error: {RAY_MISSING}"
    assert not (tmp_path / "f").exists()  # nothing is created before the extra is found


def test_ray_with_a_missing_dependency_names_it(monkeypatch):
    import builtins

    from gpuadvisor.fleet import import_ray

    real_import = builtins.__import__

    def fake_import(name, *a, **kw):
        if name == "ray":
            raise ModuleNotFoundError("No module named 'msgpack'", name="msgpack")
        return real_import(name, *a, **kw)

    monkeypatch.delitem(sys.modules, "ray", raising=False)
    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(UserError, match=r"Ray is installed but cannot be imported: .*msgpack"):
        import_ray()


def test_fleet_check_and_report_need_no_ray(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", None)
    folder = fleet_folder(tmp_path, straggler=False)
    assert main(["fleet", "check", str(folder)]) == 0
    assert main(["fleet", "report", str(folder)]) == 0


def test_fleet_model_counts():
    f = Fleet(FleetSummary(timeout_s=1, nodes=[NodeEntry(node_id="a", name="a", status="ok"),
                                               NodeEntry(node_id="b", name="b", status="lost")]))
    assert f.summary.counts() == {"ok": 1, "lost": 1, "timeout": 0, "failed": 0}
    assert f.ok_nodes() == []


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
