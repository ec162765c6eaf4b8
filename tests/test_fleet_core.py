"""Fleet core without Ray: node selection, gathering under a deadline (fake backend and clock),
the fleet folder, the node task, and what happens without the [fleet] extra."""

from __future__ import annotations

import sys

import pytest
from fleet_fakes import Clock, FakeBackend, fleet_folder, node, raw

from gpuadvisor.cli import main
from gpuadvisor.core.errors import UserError
from gpuadvisor.core.results import RunResult
from gpuadvisor.fleet import RAY_MISSING, store
from gpuadvisor.fleet.gather import gather
from gpuadvisor.fleet.model import Fleet, FleetSummary, NodeEntry
from gpuadvisor.fleet.nodes import select_nodes
from gpuadvisor.fleet.runner import FleetOptions, run_fleet

# ------------------------------------------------------------------ selection


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
