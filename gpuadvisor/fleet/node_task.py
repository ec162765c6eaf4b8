"""What runs on each node: an ordinary probe run, returned as RunResult JSON.

It is a plain function (Ray wraps it at submit time), so it can be tested without Ray. Progress
goes to `report(kind, **fields)`, fire-and-forget: losing a progress message never matters.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from typing import Any

# A test hook, read on the node: sleep this long before probing, so that a test can kill the
# node while its task runs. Set it only in a test cluster's node environment.
TEST_DELAY_ENV = "GPUADVISOR_FLEET_TEST_DELAY_S"


def probe_node(request: dict[str, Any], report: Callable[..., None] | None = None) -> str:
    from gpuadvisor.probe_runner import RunOptions, run_probes

    def send(kind: str, **kw: Any) -> None:
        if report is not None:
            with contextlib.suppress(Exception):
                report(kind, **kw)

    send("start", pid=os.getpid())
    delay = os.environ.get(TEST_DELAY_ENV)
    if delay:
        with contextlib.suppress(ValueError):
            time.sleep(float(delay))

    def on_event(kind: str, **kw: Any) -> None:
        if kind in ("probe_start", "probe_end"):
            where = "host: " if kw.get("device") is None else f"GPU {kw['device']}: "
            send(kind, probe=kw.get("probe", ""), where=where)

    opts = RunOptions(
        mode=request.get("mode", "quick"),
        only=request.get("only"),
        use_torch=bool(request.get("use_torch", True)),
        probe_options=dict(request.get("probe_options") or {}),
        time_limits=dict(request.get("time_limits") or {}),
    )
    return run_probes(opts, on_event=on_event).model_dump_json()
