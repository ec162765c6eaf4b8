"""Layout search: every layout of a model on N GPUs of one kind that can run (degrees dividing the GPUs, layers,
heads and batch), costed, those that fit memory ranked by throughput, as Megatron users search by hand. Degrees the
user fixed stay fixed. Pure and fast (arithmetic only): a few thousand layouts in well under a second."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import product

from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate.hardware import HardwareFigures
from gpuadvisor.estimate.parallel.layout import Cluster
from gpuadvisor.estimate.parallel.profiles import Framework
from gpuadvisor.estimate.parallel.time import TrainingEstimate, estimate_training
from gpuadvisor.layout import Checkpointing, Layout, Sharding, check_layout
from gpuadvisor.workload import Workload

POWERS = (1, 2, 4, 8, 16, 32, 64)
MICRO_BATCHES = (1, 2, 4, 8)


@dataclass(frozen=True)
class Fixed:
    """Degrees the user gave (None: searched)."""

    tp: int | None = None
    pp: int | None = None
    cp: int | None = None
    ep: int | None = None
    vp: int | None = None
    micro_batch: int | None = None
    sharding: Sharding | None = None
    checkpointing: Checkpointing | None = None


def _pick(fixed: int | None, options: tuple[int, ...]) -> tuple[int, ...]:
    return (fixed,) if fixed else options


def candidates(workload: Workload, fw: Framework, domain: int, fixed: Fixed | None = None) -> Iterator[Layout]:
    """Layouts that pass check_layout for this workload."""
    f = fixed or Fixed()
    m, n = workload.model, workload.num_gpus
    tps = _pick(f.tp, tuple(t for t in POWERS if t <= min(domain, n)))
    pps = _pick(f.pp, tuple(p for p in POWERS if p <= min(n, m.num_layers)))
    cps = _pick(f.cp, tuple(c for c in (1, 2, 4, 8) if c == 1 or workload.seq // c >= 2048))
    eps = _pick(f.ep, tuple(e for e in POWERS if e <= m.num_experts) if m.num_experts > 1 else (1,))
    vps = _pick(f.vp, (1, 2, 4, 5, 8))
    mbs = _pick(f.micro_batch, MICRO_BATCHES)
    default = Sharding(fw.default_sharding)
    # HSDP differs from FSDP only where the GPUs span several NVLink domains
    spread = (Sharding.HSDP,) if n > domain else ()
    shards = (f.sharding,) if f.sharding else tuple(dict.fromkeys((default, Sharding.FSDP, *spread)))
    cks = (f.checkpointing,) if f.checkpointing else tuple(Checkpointing)
    for tp, pp, cp, ep, vp, mb, sh, ck in product(tps, pps, cps, eps, vps, mbs, shards, cks):
        if vp > 1 and pp == 1:
            continue
        lay = Layout(tp=tp, pp=pp, cp=cp, ep=ep, vp=vp, micro_batch=mb, sharding=sh, checkpointing=ck)
        try:
            check_layout(m, n, workload.batch, workload.seq, lay)
        except UserError:
            continue
        yield lay


def search(workload: Workload, gpu_figures: HardwareFigures, fw: Framework, *, cluster: Cluster | None = None,
           fixed: Fixed | None = None) -> list[TrainingEstimate]:
    """Every runnable layout, costed; those that fit first, each group fastest first. Empty: none can run."""
    cluster = cluster or Cluster()
    w1 = workload.with_(tensor_parallel=1)
    out = [estimate_training(w1, lay, gpu_figures, fw, cluster=cluster)
           for lay in candidates(w1, fw, cluster.domain(gpu_figures.name), fixed)]
    return sorted(out, key=lambda e: (not e.fits, -e.tokens_per_s))


def best_layout(workload: Workload, gpu_figures: HardwareFigures, fw: Framework, *, cluster: Cluster | None = None,
                fixed: Fixed | None = None) -> TrainingEstimate:
    """The fastest layout that fits; UserError saying why when none does."""
    ranked = search(workload, gpu_figures, fw, cluster=cluster, fixed=fixed)
    if not ranked:
        raise UserError(f"no layout of {workload.model.name} on {workload.num_gpus} GPUs divides its layers, heads and "
                        f"the global batch of {workload.batch} (try a batch that is a multiple of the GPU count)")
    if not ranked[0].fits:
        least = min(ranked, key=lambda e: e.memory.total)
        raise UserError(f"no layout of {workload.model.name} fits {workload.num_gpus} x {gpu_figures.name}: the "
                        f"smallest needs {least.memory.total / 2**30:.1f} GiB per GPU ({least.layout.label()})")
    return ranked[0]
