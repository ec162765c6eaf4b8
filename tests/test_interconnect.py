"""The interconnect probe without GPUs: bandwidth arithmetic, the sweep's combination over ranks,
the topology from a fake NVML, the measurements it makes, and the runner's node-probe path."""

from __future__ import annotations

import contextlib
import types
from pathlib import Path

import pytest

from gpuadvisor import devices
from gpuadvisor.core.results import ProbeResult, load
from gpuadvisor.probe_runner import RunOptions, run_probes
from probes import interconnect as ic
from probes.collectives import bus_factor, combine, iters_for, sweep_sizes
from probes.topology import pair_link, topology

GIB = 1 << 30


def test_bus_factor_as_nccl_tests_defines_it():
    assert bus_factor("all_reduce", 2) == 1.0
    assert bus_factor("all_reduce", 8) == pytest.approx(1.75)
    assert bus_factor("all_gather", 2) == 0.5 and bus_factor("reduce_scatter", 4) == 0.75
    with pytest.raises(ValueError):
        bus_factor("broadcast", 2)


def test_sweep_sizes_and_iterations():
    sizes = sweep_sizes()
    assert sizes[0] == 1 << 20 and sizes[-1] == 4 * GIB and len(sizes) == 13
    assert iters_for(1 << 20) == 50 and iters_for(4 * GIB) == 5


def test_combine_takes_the_slowest_rank_and_drops_partial_sizes():
    # size 1 GiB: rank 1 is slower in round 0, rank 0 in round 1; 2 GiB timed by rank 0 only
    r0 = {"rank": 0, "results": {"cupy": {"all_reduce": {str(GIB): [4.0, 5.0, 4.0], str(2 * GIB): [8.0]}}}}
    r1 = {"rank": 1, "results": {"cupy": {"all_reduce": {str(GIB): [4.5, 4.0, 4.0]}}}}
    rows = combine([r0, r1], 2)["cupy.all_reduce"]
    assert [r["bytes"] for r in rows] == [GIB]
    row = rows[0]
    assert row["time_ms"] == 4.5 and row["best_time_ms"] == 4.0  # rounds: max per round = 4.5, 5.0, 4.0
    assert row["algbw_gbs"] == pytest.approx(GIB / 4.5e-3 / 1e9)
    assert row["busbw_gbs"] == pytest.approx(row["algbw_gbs"])  # 2(n-1)/n = 1 for two GPUs
    assert row["spread"] == pytest.approx(1.0 / 4.5)


# --------------------------------------------------------------------------- topology from a fake NVML


def fake_nvml(links: dict[int, list[tuple[int, str, str]]], level: int = 10, buses: tuple[str, ...] = ()):
    """links[gpu] = [(version, remote_type, remote_bus)], one per active NVLink."""
    buses = buses or tuple(f"00000000:{0x1b + 0x20 * i:02X}:00.0" for i in range(len(links)))
    m = types.SimpleNamespace(NVML_NVLINK_MAX_LINKS=18)
    m.nvmlDeviceGetHandleByIndex = lambda i: ("h", i)
    m.nvmlDeviceGetPciInfo = lambda h: types.SimpleNamespace(busId=buses[h[1]].encode())

    def state(h, link):
        if link >= 18:
            raise RuntimeError("Invalid Argument")
        return 1 if link < len(links[h[1]]) else 0

    m.nvmlDeviceGetNvLinkState = state
    m.nvmlDeviceGetNvLinkVersion = lambda h, link: links[h[1]][link][0]
    types_ = {"gpu": 0, "switch": 2}
    m.nvmlDeviceGetNvLinkRemoteDeviceType = lambda h, link: types_[links[h[1]][link][1]]
    m.nvmlDeviceGetNvLinkRemotePciInfo = lambda h, link: types.SimpleNamespace(busId=links[h[1]][link][2])
    m.nvmlDeviceGetTopologyCommonAncestor = lambda a, b: level
    m.nvmlDeviceGetP2PStatus = lambda a, b, idx: 0
    return m, buses


def test_topology_direct_nvlink_pair_is_nv18():
    buses = ("00000000:1B:00.0", "00000000:43:00.0")
    links = {0: [(6, "gpu", "0000:43:00.0")] * 18, 1: [(6, "gpu", "0000:1b:00.0")] * 18}
    nvml, _ = fake_nvml(links, level=50, buses=buses)
    topo = topology(nvml, [("h", 0), ("h", 1)], [0, 1])
    (pair,) = topo["pairs"]
    assert pair["label"] == "NV18" and pair["via"] == "direct" and pair["version"] == "4.0"
    assert pair["gbs_per_direction"] == 450.0 and pair["level_name"] == "SYS"
    assert topo["matrix"] == [["X", "NV18"], ["NV18", "X"]]
    assert topo["devices"][0]["nvlinks_active"] == 18


def test_topology_nvswitch_and_pcie_only():
    links = {0: [(6, "switch", "0000:aa:00.0")] * 18, 1: [(6, "switch", "0000:bb:00.0")] * 16}
    nvml, _ = fake_nvml(links)
    (pair,) = topology(nvml, [("h", 0), ("h", 1)], [0, 1])["pairs"]
    assert pair["label"] == "NV16" and pair["via"] == "nvswitch"
    nvml, _ = fake_nvml({0: [], 1: []}, level=30)
    (pair,) = topology(nvml, [("h", 0), ("h", 1)], [0, 1])["pairs"]
    assert pair["label"] == "PHB" and pair["nvlink"] is False and pair["gbs_per_direction"] is None


def test_pair_link_counts_from_the_other_side_when_one_is_unreadable():
    b_links = [{"active": True, "version": 5, "remote_type": "gpu", "remote_bus_id": "0000:01:00.0"}] * 12
    link = pair_link([], b_links, "0000:01:00.0", "0000:02:00.0")
    assert link["links"] == 12 and link["gbs_per_direction"] == 300.0


def test_datasheet_per_direction_prefers_nvml_then_catalog():
    card = types.SimpleNamespace(name="H200 SXM 141GB", interconnect_gbs=900.0)
    topo = {"pairs": [{"a": 0, "b": 1, "gbs_per_direction": 450.0, "version": 4, "links": 18, "nvlink": True}]}
    assert ic.per_direction_datasheet(topo, card)[0] == 450.0
    ds, src = ic.per_direction_datasheet(None, card)
    assert ds == 450.0 and "bidirectional / 2" in src
    pcie = {"pairs": [{"a": 0, "b": 1, "gbs_per_direction": None, "nvlink": False, "level_name": "SYS"}]}
    assert ic.per_direction_datasheet(pcie, card) == (None, None)


# --------------------------------------------------------------------------- measurements


def test_nccl_measurements_keys_and_reference():
    row = {"bytes": GIB, "busbw_gbs": 330.0, "algbw_gbs": 330.0, "time_ms": 3.2, "best_busbw_gbs": 333.0,
           "spread": 0.01}
    sweep = {"cupy.all_reduce": [row], "torch.all_reduce": [dict(row, busbw_gbs=329.0)],
             "cupy.all_gather": [dict(row, bytes=4 * GIB)]}
    ms = {m.key: m for m in ic._nccl_measurements(sweep, "cupy", {"cupy": 22703}, (450.0, "NVLink"))}
    assert set(ms) == {"interconnect.allreduce_busbw_1g", "interconnect.allgather_busbw_4g"}
    m = ms["interconnect.allreduce_busbw_1g"]
    assert m.ratio_to_reference == pytest.approx(330 / 329) and m.reference_label == "torch.distributed busbw"
    assert m.pct_of_datasheet == pytest.approx(100 * 330 / 450) and m.spread == 0.01
    assert ms["interconnect.allgather_busbw_4g"].reference is None


def test_p2p_measurements_label_staged_copies():
    p2p = {"one_way": [{"src": 0, "dst": 1, "bytes": GIB, "peer_access": False, "path": "staged through host",
                        "gbs": 20.0, "gbs_spread": 0.02, "latency_memcpy_us": 9.0}],
           "both_ways": [{"a": 0, "b": 1, "bytes_each_way": GIB, "peer_access": False, "gbs": 30.0}]}
    ms = {m.key: m for m in ic._p2p_measurements(p2p, None, None)}
    assert "staged through host" in ms["interconnect.p2p_0_1"].label
    assert ms["interconnect.p2p_latency_0_1"].unit == "us"
    assert ms["interconnect.p2p_bidir_0_1"].value == 30.0


# --------------------------------------------------------------------------- the runner


def fake_gpus(n: int) -> devices.Discovery:
    runtime = types.SimpleNamespace(runtimeGetVersion=lambda: 13000, driverGetVersion=lambda: 13000)
    cuda = types.SimpleNamespace(Device=lambda i: contextlib.nullcontext(), runtime=runtime)
    return devices.Discovery(devices=[devices.DeviceInfo(index=i, name="NVIDIA H200") for i in range(n)],
                             cupy=types.SimpleNamespace(cuda=cuda))


def test_interconnect_skipped_with_one_gpu():
    res = run_probes(RunOptions(only=["interconnect"], use_torch=False), discovery=fake_gpus(1))
    (p,) = res.node_probes
    assert p.probe == "interconnect" and p.status == "skipped"
    assert p.reason == "needs two or more GPUs; this run has 1 (GPU 0)"
    res = run_probes(RunOptions(only=["interconnect"], device=1, use_torch=False), discovery=fake_gpus(2))
    assert res.node_probes[0].status == "skipped" and "(GPU 1)" in res.node_probes[0].reason


def test_node_probe_runs_once_over_every_gpu():
    seen = []

    def fake(ctx):
        seen.append(list(ctx.devices))
        return ProbeResult(probe="interconnect", status="ok")

    events = []
    res = run_probes(RunOptions(only=["interconnect"], use_torch=False), discovery=fake_gpus(3),
                     probe_fns={"interconnect": fake}, on_event=lambda kind, **kw: events.append((kind, kw)))
    assert seen == [[0, 1, 2]] and [p.status for p in res.node_probes] == ["ok"]
    assert ("probe_end", "node") in [(k, kw.get("device")) for k, kw in events]
    assert all(not d.probes for d in res.devices)


def test_node_probe_without_usable_gpu_is_skipped():
    d = fake_gpus(2)
    d.cupy, d.cupy_reason = None, "CuPy is not installed"
    res = run_probes(RunOptions(only=["interconnect"], use_torch=False), discovery=d)
    assert res.node_probes[0].status == "skipped" and "CuPy" in res.node_probes[0].reason


def test_old_result_files_still_load():
    r = load(Path(__file__).parent / "data" / "h100-probe.json")  # written before node probes existed
    assert r.node_probes == [] and r.node_probe("interconnect") is None
    fake = load(Path(__file__).parent / "data" / "fake-probe.json")
    assert fake.node_probe("interconnect").get("interconnect.allreduce_busbw_1g").value == 330.0


@pytest.mark.gpu
def test_interconnect_on_real_gpus():
    """Small sizes on a machine with two or more GPUs: every part runs and the sums are right."""
    devices.reset_cache()
    d = devices.discover()
    if len(d.devices) < 2:
        pytest.skip(f"needs two GPUs, found {len(d.devices)}")
    opts = {"interconnect": {"sizes": [1 << 20, 64 << 20], "p2p_bytes": 64 << 20, "nccl_time_limit_s": 120}}
    res = run_probes(RunOptions(only=["interconnect"], probe_options=opts), discovery=d)
    p = res.node_probe("interconnect")
    assert p.status == "ok", p.reason
    assert p.get("interconnect.p2p_0_1").value > 1 and p.get("interconnect.p2p_1_0").value > 1
    primary = p.data["nccl_primary"]
    assert [r["bytes"] for r in p.data["nccl"][f"{primary}.all_reduce"]] == [1 << 20, 64 << 20]
    assert all(r["busbw_gbs"] > 0 for r in p.data["nccl"][f"{primary}.reduce_scatter"])
    assert len(p.data["topology"]["pairs"]) == len(d.devices) * (len(d.devices) - 1) // 2


def test_collective_workers_start_agree_and_finish_without_backends():
    """The process side: one worker per GPU starts, writes its file, agrees on (no) backends, exits."""
    out = ic.run_collectives([0, 1], [1 << 20], [], time_limit_s=30)
    assert out["errors"] == [] and out["sweep"] == {}
    assert [(r["rank"], r["done"], r["ready"]) for r in out["ranks"]] == [(0, True, []), (1, True, [])]


def test_link_lines_for_the_tui_and_cli():
    from gpuadvisor.links import link_lines

    run = load(Path(__file__).parent / "data" / "fake-probe.json")
    assert link_lines(run, 0) == [
        "GPU 0 ↔ GPU 1: NV18 (NVLink 4 × 18 via nvswitch, 450 GB/s per direction); P2P 392 / 391 GB/s",
        "NCCL all-reduce 4 GiB: 346 GB/s bus bandwidth (1.00× torch.distributed)",
    ]
    assert link_lines(run, 5)[:-1] == [] and link_lines(load(Path(__file__).parent / "data" / "h100-probe.json")) == []


def test_real_h200_pair_result_passes_the_node_rules():
    from gpuadvisor import checks

    path = Path(__file__).resolve().parents[1] / "lab" / "data" / "interconnect-h200-run1" / "full.json"
    run = load(path)
    p = run.node_probe("interconnect")
    assert p.status == "ok" and p.data["topology"]["matrix"][0][1] == "NV18"
    assert p.get("interconnect.p2p_0_1").ratio_to_reference > 0.95
    report = checks.evaluate(checks.load_rules(Path(__file__).resolve().parents[1] / "rules" / "training-node.yaml"),
                             run)
    assert report.passed, [(o.rule, o.measured) for d in report.devices for o in d.outcomes if not o.passed]


def test_two_gpu_sweep_beside_the_node_sweep_keeps_the_node_keys(monkeypatch):
    """On more than two GPUs the probe also runs the collectives over GPUs 0 and 1, at the figure sizes
    only; those figures carry a `_2gpus` suffix, so the node's own (all-GPU) keys stay what rules read."""
    calls = []
    row = {"busbw_gbs": 300.0, "algbw_gbs": 200.0, "time_ms": 5.0, "best_busbw_gbs": 305.0, "spread": 0.01}

    def fake_run(devices, sizes, backends, **kw):
        calls.append((list(devices), list(sizes)))
        sweep = {f"torch.{op}": [dict(row, bytes=s) for s in sizes] for op in ("all_reduce", "all_gather")}
        return {"sweep": sweep, "ranks": [{"rank": 0, "versions": {"torch": "2.28.9"}}], "errors": []}

    monkeypatch.setattr(ic, "run_collectives", fake_run)
    ctx = types.SimpleNamespace(deadline=types.SimpleNamespace(remaining=float("inf")))
    data: dict = {"errors": {}}
    sizes = [1 << 20, 16 << 20, 64 << 20, GIB, 4 * GIB]
    ms = {m.key: m for m in ic._pair_collectives(ctx, data, [0, 1], sizes, ["torch"], (450.0, "NVLink"))}
    assert calls == [([0, 1], [16 << 20, GIB, 4 * GIB])]
    assert "interconnect.allreduce_busbw_1g_2gpus" in ms and "interconnect.allgather_busbw_4g_2gpus" in ms
    assert not any(k.endswith(("_1g", "_4g")) for k in ms)
    assert ms["interconnect.allreduce_busbw_1g_2gpus"].value == 300.0
    assert "2 GPUs" in ms["interconnect.allreduce_busbw_1g_2gpus"].label
    assert data["nccl_2gpus"]["torch.all_reduce"][0]["bytes"] == 16 << 20
    ctx.deadline.remaining = 10.0  # too little time left: skipped, and says so
    assert ic._pair_collectives(ctx, data, [0, 1], sizes, ["torch"], (450.0, "NVLink")) == []
    assert "10 s left" in data["errors"]["nccl 2 gpus"]
