"""Gathering one result per node under one deadline, keeping whatever arrives.

Pure orchestration over a Backend (Ray in production, fakes in tests): submit a task per node,
wait for any to finish, poll progress and node liveness, and at the deadline record the late
nodes and cancel their tasks. A node that dies is `lost`, one whose task raised is `failed`,
one that did not answer in time is `timeout`; none of them stops the others. Ctrl-C ends the
wait early: what arrived is kept and the rest are recorded as failed, "interrupted".
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import ValidationError

from gpuadvisor.core.results import RunResult
from gpuadvisor.fleet.nodes import NodeInfo

EventFn = Callable[..., None]


class NodeLost(Exception):
    """The node died, left the cluster, or its worker was killed; the message says which."""


class TaskFailed(Exception):
    """The probe task itself raised on a live node; the message is the error, on one line."""


class Backend(Protocol):
    def submit(self, node: NodeInfo) -> Hashable: ...

    def wait(self, handles: Sequence[Hashable], timeout_s: float) -> list[Hashable]:
        """The handles that are finished (successfully or not), waiting at most timeout_s."""
        ...

    def fetch(self, handle: Hashable) -> str:
        """The finished task's RunResult as JSON; raises NodeLost or TaskFailed."""
        ...

    def alive_nodes(self) -> set[str] | None:
        """Ids of the nodes alive now, or None where the backend cannot tell."""
        ...

    def progress(self) -> dict[str, list[dict[str, Any]]]:
        """Events each node's task reported since the last call: {"kind": "start"|"probe", ...}."""
        ...

    def cancel(self, handle: Hashable) -> None: ...


@dataclass
class NodeOutcome:
    node: NodeInfo
    status: str = "pending"  # pending, then ok / lost / timeout / failed
    reason: str | None = None
    result: RunResult | None = None
    started: bool = False
    current: str | None = None  # the probe it is running, from its progress reports
    done_probes: int = 0
    t_submit: float = 0.0
    duration_s: float | None = None

    @property
    def finished(self) -> bool:
        return self.status != "pending"


@dataclass
class Gathered:
    outcomes: list[NodeOutcome] = field(default_factory=list)
    interrupted: bool = False
    duration_s: float = 0.0


def _one_line(e: BaseException | str) -> str:
    return " ".join(str(e).split())[:500]


def _emit(on_event: EventFn | None, kind: str, **kw: Any) -> None:
    if on_event is not None:
        with contextlib.suppress(Exception):
            on_event(kind, **kw)


def gather(
    nodes: Sequence[NodeInfo],
    backend: Backend,
    *,
    timeout_s: float,
    on_event: EventFn | None = None,
    clock: Callable[[], float] = time.monotonic,
    poll_s: float = 0.5,
) -> Gathered:
    """Run one task per node and collect every outcome; never raises for a node's trouble."""
    g = _Gathering(nodes, backend, timeout_s, on_event, clock)
    try:
        g.submit_all()
        g.wait(poll_s)
    except KeyboardInterrupt:
        g.out.interrupted = True
    g.close()
    return g.out


class _Gathering:
    """One gather: the outcomes, the tasks still pending (by handle) and the one deadline."""

    def __init__(self, nodes: Sequence[NodeInfo], backend: Backend, timeout_s: float, on_event: EventFn | None,
                 clock: Callable[[], float]) -> None:
        self.backend, self.timeout_s, self.on_event, self.clock = backend, timeout_s, on_event, clock
        self.t0 = clock()
        self.deadline = self.t0 + timeout_s
        self.out = Gathered([NodeOutcome(n) for n in nodes])
        self.by_id = {o.node.node_id: o for o in self.out.outcomes}
        self.pending: dict[Hashable, NodeOutcome] = {}

    def finish(self, o: NodeOutcome, status: str, reason: str | None = None, result: RunResult | None = None) -> None:
        o.status, o.reason, o.result = status, reason, result
        if result is not None:  # progress reports may trail the result: count from the result itself
            o.done_probes = len(result.host_probes) + sum(len(d.probes) for d in result.devices)
        o.duration_s = round(self.clock() - o.t_submit, 3)
        _emit(self.on_event, "node_done", outcome=o)

    def submit_all(self) -> None:
        for o in self.out.outcomes:
            o.t_submit = self.clock()
            try:
                self.pending[self.backend.submit(o.node)] = o
            except NodeLost as e:
                self.finish(o, "lost", _one_line(e))
            except Exception as e:
                self.finish(o, "failed", f"could not schedule: {type(e).__name__}: {_one_line(e)}")
            else:
                _emit(self.on_event, "node_submitted", outcome=o)

    def wait(self, poll_s: float) -> None:
        """Until every task is done or the deadline: collect what finished, apply progress, drop lost nodes."""
        while self.pending:
            now = self.clock()
            if now >= self.deadline:
                break
            for h in self.backend.wait(list(self.pending), min(poll_s, self.deadline - now)):
                self.collect(h)
            _apply_progress(self.backend, self.by_id, self.on_event)
            self.drop_lost()

    def collect(self, h: Hashable) -> None:
        """A finished task: its result, or why there is none."""
        o = self.pending.pop(h)
        try:
            payload = self.backend.fetch(h)
        except NodeLost as e:
            self.finish(o, "lost", _one_line(e))
            return
        except TaskFailed as e:
            self.finish(o, "failed", _one_line(e))
            return
        except Exception as e:
            self.finish(o, "failed", f"{type(e).__name__}: {_one_line(e)}")
            return
        o.started = True  # it returned, so it ran, even if its start report never reached us
        try:
            self.finish(o, "ok", None, RunResult.model_validate_json(payload))
        except (ValidationError, ValueError, TypeError) as e:
            self.finish(o, "failed", f"its result is not a probe result: {_one_line(e)}")

    def drop_lost(self) -> None:
        """Pending tasks on nodes that are no longer alive are cancelled and recorded as lost."""
        alive = self.backend.alive_nodes() if self.pending else None
        if alive is None:
            return
        for h, o in list(self.pending.items()):
            if o.node.node_id not in alive:
                del self.pending[h]
                with contextlib.suppress(Exception):
                    self.backend.cancel(h)
                when = "while probing" if o.started else "before its task started"
                self.finish(o, "lost", f"node died or left the cluster {when}")

    def close(self) -> None:
        """What is still pending is cancelled: interrupted, late, or never started; the run is timed."""
        for h, o in self.pending.items():
            with contextlib.suppress(Exception):
                self.backend.cancel(h)
            if self.out.interrupted:
                self.finish(o, "failed", "not finished: the driver was interrupted (Ctrl-C)")
            elif o.started:
                where = f" (running {o.current})" if o.current else ""
                self.finish(o, "timeout", f"no result within {self.timeout_s:g} s{where}")
            else:
                self.finish(o, "timeout", f"not started within {self.timeout_s:g} s: the task waits for all "
                                          f"{o.node.gpus} GPU(s) of the node; are they busy?")
        self.out.duration_s = round(self.clock() - self.t0, 3)


def _apply_progress(backend: Backend, by_id: dict[str, NodeOutcome], on_event: EventFn | None) -> None:
    try:
        reports = backend.progress()
    except Exception:
        return  # progress is a nicety; the results are what count
    for node_id, events in reports.items():
        o = by_id.get(node_id)
        if o is None or o.finished:
            continue
        for ev in events:
            if ev.get("kind") == "start":
                o.started = True
                _emit(on_event, "node_started", outcome=o)
            elif ev.get("kind") == "probe_start":
                o.started, o.current = True, ev.get("where", "") + ev.get("probe", "")
                _emit(on_event, "node_progress", outcome=o)
            elif ev.get("kind") == "probe_end":
                o.done_probes += 1
                _emit(on_event, "node_progress", outcome=o)
