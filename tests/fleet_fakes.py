"""Fakes shared by the fleet tests that need no Ray: probe results, a clock, a backend, a folder."""

from __future__ import annotations

from pathlib import Path

from gpuadvisor.core.results import DeviceResult, HostInfo, Measurement, ProbeResult, RunResult
from gpuadvisor.fleet import store
from gpuadvisor.fleet.gather import NodeLost, TaskFailed
from gpuadvisor.fleet.model import FleetSummary, NodeEntry
from gpuadvisor.fleet.nodes import NodeInfo

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



def raw(i: int, gpus: int = 0, cpus: float = 4, alive: bool = True, **res: float) -> dict:
    resources = {"CPU": cpus, **({"GPU": gpus} if gpus else {}), **res}
    return {"NodeID": f"{i:02d}" * 28, "Alive": alive, "NodeManagerAddress": f"10.0.0.{i}", "Resources": resources}

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
