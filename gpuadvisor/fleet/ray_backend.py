"""The Ray side of a fleet run: connect, list nodes, pin one task per node, classify failures.

The only module that imports Ray, and only when a fleet command runs. Each task is pinned to
its node with NodeAffinitySchedulingStrategy(soft=False) and asks for all of that node's GPUs
and CPUs, so Ray sets CUDA_VISIBLE_DEVICES to all of them and nothing else shares the node meanwhile.
Progress travels through a small actor pinned to the driver's node (so losing a probed node
never loses the board); results travel as the tasks' return values.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Hashable, Sequence
from typing import Any

from gpuadvisor.core.errors import UserError
from gpuadvisor.fleet import import_ray
from gpuadvisor.fleet.gather import NodeLost, TaskFailed
from gpuadvisor.fleet.node_task import probe_node
from gpuadvisor.fleet.nodes import NodeInfo

LOCAL_OBJECT_STORE_BYTES = 200 << 20  # results are a few hundred kB: keep a local runtime small


class ProgressBoard:
    """Actor: collects the events each node's task reports; the driver takes them in batches."""

    def __init__(self) -> None:
        self.events: dict[str, list[dict[str, Any]]] = {}

    def report(self, node_id: str, event: dict[str, Any]) -> None:
        self.events.setdefault(node_id, []).append(event)

    def take(self) -> dict[str, list[dict[str, Any]]]:
        out, self.events = self.events, {}
        return out


def _remote_probe(request: dict[str, Any], board: Any) -> str:
    import ray

    node_id = ray.get_runtime_context().get_node_id()

    def report(kind: str, **kw: Any) -> None:
        if board is not None:
            board.report.remote(node_id, {"kind": kind, **kw})

    return probe_node(request, report)


def _one_line(e: BaseException | str) -> str:
    return " ".join(str(e).split())[:300]


class RayBackend:
    """A connected Ray driver; `close()` shuts Ray down only if this object started it."""

    def __init__(self, ray: Any, request: dict[str, Any], *, owns_runtime: bool) -> None:
        self.ray = ray
        self.request = request
        self.owns_runtime = owns_runtime
        self._fn = ray.remote(_remote_probe)
        self._node_of: dict[Hashable, str] = {}
        self._alive_at = 0.0
        self._alive: set[str] | None = None
        self._board: Any = None
        self._board_ref: Any = None
        with contextlib.suppress(Exception):  # without the board there is no live progress, nothing else
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            here = ray.get_runtime_context().get_node_id()
            self._board = (
                ray.remote(ProgressBoard)
                .options(num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False))
                .remote()
            )

    @classmethod
    def connect(cls, address: str | None, request: dict[str, Any]) -> RayBackend:
        ray = import_ray()
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        if ray.is_initialized():  # a caller (a test, a notebook) is already connected: use that
            return cls(ray, request, owns_runtime=False)
        kw: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": "ERROR"}
        try:
            if address:
                ray.init(address=address, **kw)
            else:
                # a local runtime needs no outside address: loopback works on machines without a network
                ray.init(object_store_memory=LOCAL_OBJECT_STORE_BYTES, _node_ip_address="127.0.0.1", **kw)
        except Exception as e:
            where = f"the Ray cluster at {address}" if address else "a local Ray runtime"
            raise UserError(f"cannot start or reach {where}: {type(e).__name__}: {_one_line(e)}") from None
        return cls(ray, request, owns_runtime=True)

    def raw_nodes(self) -> list[dict[str, Any]]:
        return list(self.ray.nodes())

    def submit(self, node: NodeInfo) -> Hashable:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        ref = self._fn.options(
            # the whole node: its CPUs too, so nothing shares it while it is measured and BLAS is
            # not held to one thread (Ray sets OMP_NUM_THREADS to a task's CPU count)
            num_cpus=max(1, int(node.cpus)) if node.cpus >= 1 else 0,
            num_gpus=node.gpus,
            max_retries=0,  # a probe repeated elsewhere would measure the wrong node
            scheduling_strategy=NodeAffinitySchedulingStrategy(node.node_id, soft=False),
            name=f"gpuadvisor-probe-{node.node_id[:8]}",
        ).remote(self.request, self._board)
        self._node_of[ref] = node.node_id
        return ref

    def wait(self, handles: Sequence[Hashable], timeout_s: float) -> list[Hashable]:
        ready, _ = self.ray.wait(list(handles), num_returns=1, timeout=max(0.0, timeout_s))
        if ready:  # collect every other finished one too, without waiting again
            more, _ = self.ray.wait([h for h in handles if h not in ready], num_returns=len(handles) - len(ready),
                                    timeout=0) if len(handles) > len(ready) else ([], [])
            ready = list(ready) + list(more)
        return list(ready)

    def fetch(self, handle: Hashable) -> str:
        exc = self.ray.exceptions
        try:
            return str(self.ray.get(handle, timeout=30))
        except exc.RayTaskError as e:  # the probe code raised on the node
            cause = getattr(e, "cause", None) or e
            raise TaskFailed(f"probe task raised {type(cause).__name__}: {_one_line(cause)}") from None
        except exc.NodeDiedError:
            raise NodeLost("node died or became unreachable while probing (Ray: NodeDiedError)") from None
        except exc.RayError as e:
            alive = self._alive_now()
            if alive is not None and self._node_of.get(handle) not in alive:
                raise NodeLost(f"node died or left the cluster (Ray: {type(e).__name__})") from None
            raise TaskFailed(f"{type(e).__name__}: {_one_line(e)}") from None

    def _alive_now(self) -> set[str] | None:
        try:
            return {n["NodeID"] for n in self.ray.nodes() if n.get("Alive")}
        except Exception:
            return None

    def alive_nodes(self) -> set[str] | None:
        now = time.monotonic()
        if now - self._alive_at >= 1.0:  # the node table is a GCS call: once a second is plenty
            self._alive, self._alive_at = self._alive_now(), now
        return self._alive

    def progress(self) -> dict[str, list[dict[str, Any]]]:
        if self._board is None:
            return {}
        if self._board_ref is None:
            self._board_ref = self._board.take.remote()
        ready, _ = self.ray.wait([self._board_ref], timeout=0)
        if not ready:
            return {}
        ref, self._board_ref = self._board_ref, None
        return self.ray.get(ref)

    def cancel(self, handle: Hashable) -> None:
        with contextlib.suppress(Exception):
            self.ray.cancel(handle, force=True)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            if self._board is not None:
                self.ray.kill(self._board)
        if self.owns_runtime:
            with contextlib.suppress(Exception):
                self.ray.shutdown()
