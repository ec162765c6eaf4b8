"""Fleet on a real local Ray cluster: 3 simulated nodes (ray.cluster_utils.Cluster) running the
host probe, a node killed while its task runs, a node that misses the deadline.

Simulated nodes carry the custom resource `gpuadvisor_sim` and are selected with
`--include-cpu-nodes --node-resource gpuadvisor_sim`; the head node is one of them (it also
hosts the driver and the progress board), which saves starting a fourth raylet. Ray is kept
small: 1 CPU and 80 MB of object store per node, no dashboard. Skips, with the reason, where
Ray (the [fleet] extra) is missing.
"""

from __future__ import annotations

import json
import time

import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed: the [fleet] extra is missing")
cluster_utils = pytest.importorskip("ray.cluster_utils", reason="this Ray has no cluster_utils")

from gpuadvisor.cli import main  # noqa: E402
from gpuadvisor.core import results  # noqa: E402
from gpuadvisor.fleet import store  # noqa: E402
from gpuadvisor.fleet.node_task import TEST_DELAY_ENV  # noqa: E402
from gpuadvisor.fleet.ray_backend import RayBackend  # noqa: E402
from gpuadvisor.fleet.runner import FleetOptions, run_fleet  # noqa: E402

SIM = "gpuadvisor_sim"
NODE = {"num_cpus": 1, "object_store_memory": 80 << 20, "resources": {SIM: 1}}
TINY_HOST = {"host": {"vec_bytes": 4 << 20, "mat_n": 128, "repeats": 2}}


@pytest.fixture(scope="module")
def cluster():
    c = cluster_utils.Cluster(
        initialize_head=True,
        head_node_args={**NODE, "include_dashboard": False},
    )
    try:
        for _ in range(2):
            c.add_node(**NODE)
        ray.init(address=c.address, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        c.wait_for_nodes()
        yield c
    finally:
        ray.shutdown()
        c.shutdown()


def test_fleet_probe_cli_on_three_simulated_nodes(cluster, tmp_path, capsys):
    out = tmp_path / "fleet"
    rc = main(["fleet", "probe", "--address", cluster.address, "--include-cpu-nodes", "--node-resource", SIM,
               "--only", "host", "--timeout", "120", "--out", str(out), "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert rc == 0, summary
    assert [n["status"] for n in summary["nodes"]] == ["ok"] * 3
    assert len({n["node_id"] for n in summary["nodes"]}) == 3
    assert all(n["started"] for n in summary["nodes"])  # the progress board saw every task start
    assert summary["skipped"] == []
    files = sorted((out / "nodes").glob("*.json"))
    assert len(files) == 3
    for f in files:  # ordinary probe results: `check` and `report` read them unchanged
        run = results.load(f)
        assert run.host_probe("host").status == "ok" and run.host_probe("host").get("host.triad").value > 0
    assert main(["fleet", "check", str(out), "--tolerance", "1000"]) == 0
    assert main(["fleet", "report", str(out)]) == 0
    assert "3 node(s) probed" in (out / "fleet-report.html").read_text()


def test_a_task_that_raises_is_failed_with_its_error(cluster, tmp_path):
    # any exception in the node task will do: time-limit keys must be probe names (text)
    opts = FleetOptions(address=cluster.address, only=["host"], include_cpu_nodes=True, resource=SIM,
                        timeout_s=60, time_limits={1: 2.0})  # type: ignore[dict-item]
    backend = RayBackend.connect(opts.address, opts.request())
    try:
        run = run_fleet(opts, backend, store.prepare_folder(tmp_path / "f"), raw_nodes=backend.raw_nodes())
    finally:
        backend.close()
    assert [n.status for n in run.summary.nodes] == ["failed"] * 3
    assert all(n.reason.startswith("probe task raised TypeError: ") for n in run.summary.nodes), run.summary.nodes
    assert all(n.file is None for n in run.summary.nodes)


def test_node_killed_mid_run_is_lost_and_the_others_are_kept(cluster, tmp_path):
    victim = cluster.add_node(**NODE, env_vars={TEST_DELAY_ENV: "60"})  # holds its task until killed
    late = cluster.add_node(**NODE, env_vars={TEST_DELAY_ENV: "60"})  # misses the deadline
    cluster.wait_for_nodes()
    killed = []

    def on_event(kind, **kw):
        o = kw["outcome"]
        if kind == "node_started" and o.node.node_id == victim.node_id and not killed:
            cluster.remove_node(victim)  # while its task runs on it
            killed.append(time.monotonic())

    opts = FleetOptions(address=cluster.address, only=["host"], include_cpu_nodes=True, resource=SIM,
                        timeout_s=10, probe_options=TINY_HOST)
    backend = RayBackend.connect(opts.address, opts.request())
    folder = store.prepare_folder(tmp_path / "fleet")
    t0 = time.monotonic()
    try:
        run = run_fleet(opts, backend, folder, raw_nodes=backend.raw_nodes(), on_event=on_event)
        assert run.gathered.duration_s < 30
    finally:
        backend.close()
        cluster.remove_node(late)
    elapsed = time.monotonic() - t0
    assert killed, "the victim's task never reported that it started"
    assert elapsed < 30  # neither the dead node nor the late one held the fleet past its deadline
    fleet = store.load(folder)  # what is on disk, as a user would read it
    by = {n.node_id: n for n in fleet.summary.nodes}
    assert len(by) == 5
    assert by[victim.node_id].status == "lost"
    assert "died" in by[victim.node_id].reason and by[victim.node_id].file is None
    assert by[late.node_id].status == "timeout" and "no result within 10 s" in by[late.node_id].reason
    others = [n for nid, n in by.items() if nid not in (victim.node_id, late.node_id)]
    assert [n.status for n in others] == ["ok"] * 3
    assert sorted(fleet.results) == sorted(n.name for n in others)
    assert fleet.summary.finished and not fleet.summary.all_ok
    assert main(["fleet", "check", str(folder), "--tolerance", "1000"]) == 1  # lost and late nodes fail the fleet
