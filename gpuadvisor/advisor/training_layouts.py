"""Training targets the advisor's plain data-parallel / ZeRO-3 options cannot fit: the fastest parallel layout that
fits (gpuadvisor.estimate.parallel.search), as Megatron users pick one by hand."""

from __future__ import annotations

from typing import Any

from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate.hardware import HardwareFigures
from gpuadvisor.estimate.memory_result import GiB
from gpuadvisor.workload import Workload

SEARCH_FRAMEWORK = "megatron"  # the profile that runs every degree (TP, PP, CP, EP)


def searched(w: Workload, hw: HardwareFigures, gpus: int, budget: float) -> dict[str, Any] | None:
    """Layout, memory, tokens/s and wall time of the fastest fitting layout of `w` (per-GPU batch `w.batch`) on
    `gpus` x `hw`, or None when no layout fits or the model is not a transformer shape."""
    if gpus < 2 or not w.model.is_transformer or not w.is_training:
        return None
    from gpuadvisor.estimate.parallel import framework
    from gpuadvisor.estimate.parallel.budget import train_time
    from gpuadvisor.estimate.parallel.search import best_layout

    wl = w.with_(num_gpus=gpus, tensor_parallel=1, sharding="none", batch=w.batch * gpus)
    try:
        est = best_layout(wl, hw, framework(SEARCH_FRAMEWORK))
    except UserError:
        return None
    t = train_time(est.step_s, wl.batch, wl.seq, tokens=budget)
    lay = est.layout
    return {"layout": f"{SEARCH_FRAMEWORK} " + lay.label(), "tp": lay.tp, "replicas": lay.dp(gpus),
            "needed_gib": est.memory.total / GiB, "tokens_per_s": est.tokens_per_s,
            "memory_parts": tuple((k, v / GiB) for k, v in est.memory.items if v),
            "wall_s": t.seconds if budget else None}
