"""Which nodes of a cluster to probe, from Ray's node table (plain dicts, so tests need no Ray).

A GPU node is one that advertises GPU resources. Nodes without GPUs are skipped, with the
reason, unless include_cpu_nodes; `resource` narrows the choice to nodes that carry a custom
resource (the CI's simulated nodes carry `gpuadvisor_sim`; a real cluster can tag its nodes
the same way, e.g. `ray start --resources '{"gpuadvisor": 1}'`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class NodeInfo:
    node_id: str
    name: str  # "address (id8)": unique and readable
    address: str | None
    hostname: str | None
    gpus: int
    cpus: float


@dataclass(frozen=True)
class Selection:
    nodes: tuple[NodeInfo, ...]
    skipped: tuple[tuple[NodeInfo, str], ...]  # (node, why)


def node_info(raw: Mapping[str, Any]) -> NodeInfo:
    res = raw.get("Resources") or {}
    node_id = str(raw.get("NodeID", ""))
    address = raw.get("NodeManagerAddress") or None
    hostname = raw.get("NodeManagerHostname") or None
    return NodeInfo(
        node_id=node_id,
        name=f"{address or hostname or 'node'} ({node_id[:8]})",
        address=address,
        hostname=hostname,
        gpus=int(res.get("GPU", 0) or 0),
        cpus=float(res.get("CPU", 0) or 0),
    )


def select_nodes(
    raw_nodes: Iterable[Mapping[str, Any]], *, include_cpu_nodes: bool = False, resource: str | None = None
) -> Selection:
    """Alive nodes to probe, in a stable order (by address, then id), and the others with why."""
    chosen, skipped = [], []
    for raw in raw_nodes:
        if not raw.get("Alive", False):
            continue  # dead nodes stay in Ray's table for a while; they are not part of the fleet
        info = node_info(raw)
        res = raw.get("Resources") or {}
        if resource and resource not in res:
            skipped.append((info, f"no '{resource}' resource"))
        elif info.gpus == 0 and not include_cpu_nodes:
            skipped.append((info, "no GPUs (pass --include-cpu-nodes to probe its host)"))
        elif info.gpus == 0 and info.cpus < 1:
            skipped.append((info, "no GPUs and no CPUs to run a task on"))
        else:
            chosen.append(info)
    key = lambda n: (n.address or "", n.node_id)  # noqa: E731
    return Selection(tuple(sorted(chosen, key=key)), tuple(sorted(skipped, key=lambda s: key(s[0]))))
