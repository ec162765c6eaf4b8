"""What the multi-GPU ground-truth scripts (lab/validate_multigpu.py, lab/validate_four_gpu.py) share: the
environment read from the driver process, and the end of a case run under torchrun (every rank's record gathered
and written by rank 0, even when a rank failed)."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _safe(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception:
        return None


def environment(device: str, packages: tuple[str, ...] = ("torch",)) -> dict:
    """Versions and the GPUs, read without touching CUDA from this (driver) process."""
    from importlib import metadata

    env: dict = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "device": device}
    for pkg in packages:
        env[pkg] = _safe(lambda pkg=pkg: metadata.version(pkg))
    if device == "cuda":
        try:
            import pynvml

            pynvml.nvmlInit()
            env["gpus"] = pynvml.nvmlDeviceGetCount()
            handle = pynvml.nvmlDeviceGetHandleByIndex(0)
            name = pynvml.nvmlDeviceGetName(handle)
            env["device_name"] = name.decode() if isinstance(name, bytes) else name
            env["driver"] = pynvml.nvmlSystemGetDriverVersion()
            env["nvlink_active"] = sum(
                1 for i in range(18) if _safe(lambda i=i: pynvml.nvmlDeviceGetNvLinkState(handle, i)) == 1)
        except Exception as e:
            env["nvml"] = f"unavailable ({e})"
    return env


def write_case(rec: dict, rank: int, world: int, out_dir: Path, name: str) -> int:
    """Gather every rank's record (a rank that died leaves this rank's alone), write them from rank 0 as
    case-NAME.json, and leave the process group."""
    import torch.distributed as dist

    recs: list = [None] * world
    try:
        dist.all_gather_object(recs, rec)
    except Exception as e:  # a rank died: write what this rank has
        recs = [rec]
        rec.setdefault("error", f"gather failed: {e}")
    if rank == 0:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / f"case-{name}.json").write_text(json.dumps(recs, indent=1))
    with contextlib.suppress(Exception):
        dist.destroy_process_group()
    return 0
