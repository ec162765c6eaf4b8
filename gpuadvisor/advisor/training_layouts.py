"""Training targets the advisor's plain data-parallel / ZeRO-3 options cannot fit: the fastest parallel layout that
fits (gpuadvisor.estimate.parallel.search), as Megatron users pick one by hand, among the frameworks the support
matrix (advisor/support.py) lets the job and the card run: LoRA and QLoRA only under Hugging Face Trainer + PEFT
with data parallel or FSDP (never Megatron's tensor, pipeline or context parallelism); full training is searched
only on cards that run Megatron-Core's Transformer Engine."""

from __future__ import annotations

from typing import Any

from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate.hardware import HardwareFigures
from gpuadvisor.estimate.memory_result import GiB
from gpuadvisor.workload import Workload

SEARCH_FRAMEWORK = "megatron"  # the profile that runs every degree (TP, PP, CP, EP)


def _framework_for(workload: Workload, gpu_figures: HardwareFigures) -> str | None:
    """Megatron where the job and the card run it; the data-parallel framework of the matrix for LoRA and QLoRA;
    None for full training on a card that cannot run Megatron-Core's Transformer Engine (nothing to search: its
    data-parallel and ZeRO-3 options are the advisor's own)."""
    from gpuadvisor.advisor.support import TRANSFORMER_ENGINE, facts_of_figures, load_matrix

    m = load_matrix()
    if workload.mode in m.adapter_training.modes:
        return m.adapter_training.framework
    return None if m.why_not(facts_of_figures(gpu_figures), TRANSFORMER_ENGINE) else SEARCH_FRAMEWORK


def adapter_label(layout: Any, gpus: int) -> str:
    """A LoRA/QLoRA layout in the advisor's words for data parallel, with the search's micro-batch and activation
    checkpointing as Megatron's labels write them: 'FSDP x 4 mb2 ac:full' (Trainer's gradient checkpointing)."""
    from gpuadvisor.layout import Checkpointing, Sharding

    shard = {Sharding.FSDP: "FSDP", Sharding.ZERO3: "FSDP", Sharding.HSDP: "HSDP"}.get(layout.sharding, "DDP")
    ckpt = " ac:full" if layout.checkpointing == Checkpointing.FULL else ""
    return f"{shard} x {layout.dp(gpus)} mb{layout.micro_batch}{ckpt}"


def searched(workload: Workload, gpu_figures: HardwareFigures, gpus: int, budget: float) -> dict[str, Any] | None:
    """Layout, memory, tokens/s and wall time of the fastest fitting layout of `workload` (per-GPU batch
    `workload.batch`) on `gpus` x `gpu_figures`, or None when no layout fits or the model is not a transformer shape."""
    if gpus < 2 or not workload.model.is_transformer or not workload.is_training:
        return None
    from gpuadvisor.estimate.parallel import framework
    from gpuadvisor.estimate.parallel.budget import train_time
    from gpuadvisor.estimate.parallel.search import Fixed, search
    from gpuadvisor.layout import Checkpointing

    wl = workload.with_(num_gpus=gpus, tensor_parallel=1, sharding="none", batch=workload.batch * gpus)
    name = _framework_for(workload, gpu_figures)
    if name is None:
        return None
    try:
        if name == SEARCH_FRAMEWORK:
            from gpuadvisor.estimate.parallel.search import best_layout

            est = best_layout(wl, gpu_figures, framework(name))
        else:  # data parallel or FSDP only; Trainer's gradient checkpointing is whole layers (no selective)
            ranked = search(wl, gpu_figures, framework(name), fixed=Fixed(tp=1, pp=1, cp=1, ep=1, vp=1))
            est = next(e for e in ranked if e.fits and e.layout.checkpointing != Checkpointing.SELECTIVE)
    except (UserError, StopIteration):
        return None
    t = train_time(est.step_s, wl.batch, wl.seq, tokens=budget)
    lay = est.layout
    label = f"{SEARCH_FRAMEWORK} " + lay.label() if name == SEARCH_FRAMEWORK else adapter_label(lay, gpus)
    return {"layout": label, "tp": lay.tp, "replicas": lay.dp(gpus),
            "needed_gib": est.memory.total / GiB, "tokens_per_s": est.tokens_per_s,
            "memory_parts": tuple((k, v / GiB) for k, v in est.memory.items if v),
            "wall_s": t.seconds if budget else None}
