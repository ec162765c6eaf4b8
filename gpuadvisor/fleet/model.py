"""The fleet result's file model (summary.json) and the in-memory fleet.

A fleet folder holds one ordinary probe result (gpuadvisor.core.results.RunResult) per node that
answered, under nodes/, so `gpuadvisor check --probe` and `gpuadvisor report --probe` read any
one of them unchanged, plus summary.json: every selected node with its status, why, and file.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gpuadvisor import __version__
from gpuadvisor.core.results import RunResult

FLEET_SCHEMA_VERSION = 1
NodeStatus = Literal["ok", "lost", "timeout", "failed", "pending"]  # pending: the driver stopped first
NODE_STATUSES: tuple[str, ...] = ("ok", "lost", "timeout", "failed")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NodeEntry(_Model):
    """One probed node. `file` is relative to the fleet folder; None when no result came back."""

    node_id: str
    name: str  # short, unique label: "10.0.0.5 (3bc3c2a7)"
    address: str | None = None
    hostname: str | None = None
    gpus: int = 0  # GPUs the node advertises to Ray (all of them are asked for)
    status: NodeStatus
    reason: str | None = None  # why it is not ok, on one line
    file: str | None = None
    duration_s: float | None = None
    started: bool = False  # the task reported that it began probing


class SkippedNode(_Model):
    node_id: str
    name: str
    reason: str


class FleetSummary(_Model):
    schema_version: int = FLEET_SCHEMA_VERSION
    tool_version: str = __version__
    created_at: str = Field(default_factory=lambda: _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))
    address: str | None = None  # the Ray address given, or None for a local runtime
    mode: Literal["quick", "full"] = "quick"
    timeout_s: float
    duration_s: float | None = None
    finished: bool = False  # False while running, or when the driver itself was stopped
    nodes: list[NodeEntry] = Field(default_factory=list)
    skipped: list[SkippedNode] = Field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {s: sum(n.status == s for n in self.nodes) for s in NODE_STATUSES}

    @property
    def all_ok(self) -> bool:
        return bool(self.nodes) and all(n.status == "ok" for n in self.nodes)


@dataclass
class Fleet:
    """A fleet folder in memory: the summary and the results of the nodes that answered."""

    summary: FleetSummary
    results: dict[str, RunResult] = field(default_factory=dict)  # node name -> result

    def ok_nodes(self) -> list[tuple[NodeEntry, RunResult]]:
        return [(n, self.results[n.name]) for n in self.summary.nodes if n.name in self.results]
