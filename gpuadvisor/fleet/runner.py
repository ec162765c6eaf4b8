"""A fleet run from start to end: select nodes, gather, and keep every result on disk as it comes.

The backend is passed in (Ray's, or a fake in tests); the folder gets each node's RunResult the
moment it arrives and summary.json after every change, so nothing received is ever lost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuadvisor.core.errors import UserError
from gpuadvisor.fleet import store
from gpuadvisor.fleet.gather import Backend, EventFn, Gathered, NodeOutcome, gather
from gpuadvisor.fleet.model import FleetSummary, NodeEntry, SkippedNode
from gpuadvisor.fleet.nodes import select_nodes

DEFAULT_TIMEOUT_S = {"quick": 900.0, "full": 3600.0}


@dataclass(frozen=True)
class FleetOptions:
    address: str | None = None
    mode: str = "quick"
    timeout_s: float | None = None  # None: DEFAULT_TIMEOUT_S[mode]
    only: Sequence[str] | None = None
    use_torch: bool = True
    include_cpu_nodes: bool = False
    resource: str | None = None  # probe only nodes that carry this custom Ray resource
    probe_options: Mapping[str, Any] = field(default_factory=dict)
    time_limits: Mapping[str, float] = field(default_factory=dict)

    @property
    def timeout(self) -> float:
        return self.timeout_s if self.timeout_s is not None else DEFAULT_TIMEOUT_S.get(self.mode, 900.0)

    def request(self) -> dict[str, Any]:
        """What each node's task gets: plain data, so it pickles anywhere."""
        return {
            "mode": self.mode,
            "only": list(self.only) if self.only else None,
            "use_torch": self.use_torch,
            "probe_options": dict(self.probe_options),
            "time_limits": dict(self.time_limits),
        }


@dataclass
class FleetRun:
    summary: FleetSummary
    gathered: Gathered
    folder: Path


def run_fleet(
    opts: FleetOptions, backend: Backend, folder: Path, *, raw_nodes: list[dict[str, Any]],
    on_event: EventFn | None = None,
) -> FleetRun:
    """Probe every selected node; UserError (before anything runs) when there is none to probe."""
    sel = select_nodes(raw_nodes, include_cpu_nodes=opts.include_cpu_nodes, resource=opts.resource)
    if not sel.nodes:
        alive = sum(bool(n.get("Alive")) for n in raw_nodes)
        why = "; ".join(f"{n.name}: {r}" for n, r in sel.skipped[:3]) or "the cluster has no live nodes"
        raise UserError(f"no nodes to probe among {alive} live node(s) ({why})")
    summary = FleetSummary(
        address=opts.address,
        mode="full" if opts.mode == "full" else "quick",
        timeout_s=opts.timeout,
        nodes=[NodeEntry(node_id=n.node_id, name=n.name, address=n.address, hostname=n.hostname, gpus=n.gpus,
                         status="pending") for n in sel.nodes],
        skipped=[SkippedNode(node_id=n.node_id, name=n.name, reason=r) for n, r in sel.skipped],
    )
    entries = {e.node_id: e for e in summary.nodes}
    store.write_summary(folder, summary)

    def event(kind: str, **kw: Any) -> None:
        o: NodeOutcome = kw["outcome"]
        entry = entries[o.node.node_id]
        entry.started = entry.started or o.started
        if kind == "node_done":
            entry.status, entry.reason, entry.duration_s = o.status, o.reason, o.duration_s  # type: ignore[assignment]
            if o.result is not None:
                entry.hostname = o.result.host.hostname or entry.hostname
                try:
                    entry.file = store.write_node(folder, entry, o.result)
                except UserError as e:  # keep going: the other nodes' results still count
                    entry.reason = f"result received but not saved: {e}"
            store.write_summary(folder, summary)
        if on_event is not None:
            on_event(kind, **kw)

    gathered = gather(sel.nodes, backend, timeout_s=opts.timeout, on_event=event)
    summary.duration_s = gathered.duration_s
    summary.finished = not gathered.interrupted
    store.write_summary(folder, summary)
    return FleetRun(summary, gathered, folder)
