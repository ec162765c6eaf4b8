"""A way forward when a layout does not fit: the cheapest change that makes it fit, with the
figures it would then have. Pure functions over `figures`.

Changes are tried cheapest first: those that cost nothing but a little speed (activation
checkpointing, a smaller micro-batch with gradient accumulation, an 8-bit optimizer, ZeRO-3
over the GPUs already there; for serving a quantized weight format or fewer users at once),
then more GPUs of the same card, then (serving on one GPU) offloading layers to host memory.
The first change that fits is named, with the flag that asks for it.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

from gpuadvisor.advisor.figures import Figures, figures
from gpuadvisor.advisor.targets import Targets
from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate import DEFAULT_ENGINE, Efficiency, HardwareFigures
from gpuadvisor.layout import Sharding
from gpuadvisor.units import duration
from gpuadvisor.workload import Workload

MORE_GPUS = (2, 4, 8)
MORE_GPUS_TRAINING = (2, 4, 8, 16, 32)  # ZeRO-3 spreads over nodes too (two or four 8-GPU nodes)
FP8_MIN_CC = (8, 9)  # Ada and Hopper run fp8 matmuls; older cards keep fp8 weights only via emulation


@dataclass(frozen=True)
class Remedy:
    """One change (`flag`, in words `change`) and the figures of the layout with it."""

    change: str
    flag: str
    gpus: int
    figures: Figures

    @property
    def line(self) -> str:
        f = self.figures
        speed = ""
        if f.per_user is not None:
            speed = f", {f.per_user:,.1f} tok/s per user"
        elif f.wall_s is not None:
            speed = f", {duration(f.wall_s)} for the job"
        elif f.tokens_per_s is not None:
            speed = f", {f.tokens_per_s:,.0f} tokens/s"
        elif f.request_s is not None:
            speed = f", {duration(f.request_s)} per request"
        where = f" on {self.gpus} GPUs ({f.layout})" if self.gpus > 1 else ""
        return f"{self.change} ({self.flag}): {f.needed_gib:,.1f} GiB per GPU{where}, fits{speed}"

    def to_dict(self) -> dict[str, Any]:
        return {"change": self.change, "flag": self.flag, "gpus": self.gpus, "line": self.line,
                "figures": self.figures.to_dict()}


def _cc(gpu_figures: HardwareFigures) -> tuple[int, ...] | None:
    cc = getattr(gpu_figures, "compute_capability", None)
    try:
        return tuple(int(x) for x in str(cc).split(".")) if cc else None
    except ValueError:
        return None


def _training_candidates(workload: Workload, gpus: int, t: Targets, *,
                         exact: bool) -> list[tuple[str, str, Workload, int, Targets]]:
    """Training's changes, cheapest first. `workload.batch` is per GPU; every flag carries the whole change
    as `estimate` reads it (--batch a global batch), so that running it gives the figures the line quotes.
    `exact`: each change is costed in the workload's own layout (its sharding and tensor parallelism, as
    `estimate` costs the flags), and more GPUs are also tried with FSDP where the layout has no sharding. A
    change the workload refuses (QLoRA of an fp32 LoRA) is not offered."""
    out: list[tuple[str, str, Workload, int, Targets]] = []

    def add(change: str, flag: str, on_gpus: int, **changes: Any) -> None:
        with contextlib.suppress(UserError):
            out.append((change, flag, workload.with_(**changes), on_gpus, t))

    tp = max(1, workload.tensor_parallel)
    dp = max(1, gpus // tp)
    if not workload.checkpointing:
        add("activation checkpointing", "--checkpointing", gpus, checkpointing=True)
    b = workload.batch
    while b > 1:
        b //= 2
        smaller = f"batch {b}" if dp == 1 else f"global batch {b * dp} ({b} per GPU)"
        keep = f"; accumulate {workload.batch // b} steps for a batch of {workload.batch * dp}"
        if not workload.checkpointing:
            add(f"{smaller}{keep}", f"--batch {b * dp}", gpus, batch=b)
        add(f"{smaller} and checkpointing{keep}", f"--batch {b * dp} --checkpointing", gpus, batch=b,
            checkpointing=True)
    # a traced model is traced with fused AdamW: another optimizer is not modelled for it (Workload refuses it)
    if workload.mode == "training" and workload.optimizer not in ("adamw8bit",
                                                                  "sgd") and not workload.model.is_traced:
        add("8-bit AdamW, checkpointing and micro-batch 1", f"--optimizer adamw8bit --checkpointing --batch {dp}",
            gpus, batch=1, checkpointing=True, optimizer="adamw8bit")
    if workload.mode == "lora":
        add("QLoRA: the frozen base in 4 bits, checkpointing and micro-batch 1",
            f"--mode qlora --checkpointing --batch {dp}", gpus, mode="qlora", batch=1, checkpointing=True)
    shard_ways = [workload.sharding]
    if exact and workload.sharding in (Sharding.NONE, Sharding.ZERO1, Sharding.ZERO2) and not workload.model.is_traced:
        shard_ways.append(Sharding.FSDP)  # weights that do not fit one GPU fit sharded over more (traced: DP only)
    global_batch = workload.batch * dp
    for g in MORE_GPUS_TRAINING:
        if g <= gpus or (exact and g % tp):
            continue
        g_dp = g // tp if exact else g
        per_gpu = global_batch // g_dp if global_batch % g_dp == 0 else 0  # the user's global batch, split wider
        for sharding in shard_ways:
            shard_flag = f" --sharding {sharding}" if sharding != workload.sharding else ""
            name = f"{g} GPUs" + (" with FSDP" if shard_flag else "")  # the one sharding added (shard_ways)
            if per_gpu:
                add(f"{name}, the same global batch", f"--gpus {g}{shard_flag}", g, sharding=sharding, batch=per_gpu)
                if not workload.checkpointing:
                    add(f"{name}, the same global batch and checkpointing", f"--gpus {g}{shard_flag} --checkpointing",
                        g, sharding=sharding, batch=per_gpu, checkpointing=True)
            if per_gpu != 1:  # one sequence a GPU (a larger global batch where yours has fewer than the GPUs)
                add(f"{name}, checkpointing and micro-batch 1",
                    f"--gpus {g}{shard_flag} --checkpointing --batch {g_dp}", g, sharding=sharding, batch=1,
                    checkpointing=True)
    return out


def _candidates(workload: Workload, gpus: int, targets: Targets, f: Figures, gpu_figures: HardwareFigures,
                exact: bool) -> list[tuple[str, str, Workload, int, Targets]]:
    """(change, flag, workload, gpus, targets) to try, cheapest first."""
    if workload.mode != "inference":
        return _training_candidates(workload, gpus, targets, exact=exact)
    out: list[tuple[str, str, Workload, int, Targets]] = []
    t = targets
    if workload.model.kind == "decoder":
        if f.max_users and f.max_users < t.users:
            out.append((f"serve {f.max_users} users at once instead of {t.users}", f"--users {f.max_users}",
                        workload, gpus, t.with_(users=f.max_users)))
        if workload.quant == "none" and workload.dtype in ("bf16", "fp16"):
            cc = _cc(gpu_figures)
            if cc is not None and cc >= FP8_MIN_CC:
                out.append(("fp8 weights", "--quant fp8", workload.with_(quant="fp8"), gpus, t))
            out.append(("int4 weights (AWQ)", "--quant awq", workload.with_(quant="awq"), gpus, t))
    elif workload.batch > 1:
        out.append(("a batch of 1", "--batch 1", workload.with_(batch=1), gpus, t))
    for g in MORE_GPUS:
        if g > gpus:
            out.append((f"{g} GPUs", f"--gpus {g}", workload, g, t))
    return out


def way_forward(workload: Workload, gpu_figures: HardwareFigures, gpus: int, targets: Targets, *,
                engine: str = DEFAULT_ENGINE,
                efficiency: Efficiency | None = None, current: Figures | None = None,
                exact: bool = False) -> list[Remedy]:
    """The cheapest change that makes `gpus` x `gpu_figures` fit (and the cheapest with more GPUs when the
    first needs none), each with its figures; empty when nothing tried fits. Training: `workload.batch`
    is per GPU, the --batch flag a global batch (as `estimate` and `recommend` read it). `exact`: each
    change costed in the workload's own layout, as `estimate` costs the flags it names (recommend's options
    search the layouts instead)."""
    targets = targets.for_workload(workload)
    f = current or figures(workload, gpu_figures, gpus, targets, engine=engine, efficiency=efficiency)
    if f.fits:
        return []
    out: list[Remedy] = []
    off = _offload(workload, gpu_figures, gpus,
                   targets) if workload.mode == "inference" and workload.model.kind == "decoder" else None
    for change, flag, wl, g, t in _candidates(workload, gpus, targets, f, gpu_figures, exact):
        if off is not None and g > gpus and not out:
            out.append(off)  # free but slow: before buying more GPUs
        if out and g == gpus:
            continue  # one free change is enough; keep looking only for the more-GPU one
        try:
            ff = figures(wl.validate(), gpu_figures, g, t, engine=engine, efficiency=efficiency,
                         exact=exact and workload.mode != "inference")
        except UserError:
            continue
        if ff.fits:
            if "ZeRO-3" in ff.layout and wl.sharding == "none":
                flag += " --sharding zero3"
            if ff.tp > 1 and workload.mode == "inference" and workload.model.kind == "decoder":
                flag += f" --tp {ff.tp}"
            out.append(Remedy(change, flag, g, ff))
            if g > gpus:
                break
    return out


def _offload(workload: Workload, gpu_figures: HardwareFigures, gpus: int, t: Targets) -> Remedy | None:
    """One user on one GPU with the layers that do not fit in host memory (llama.cpp -ngl), in
    GGUF Q4_K_M where the weights are 16-bit: the way a single small card runs a large model."""
    from gpuadvisor.estimate import GiB
    from gpuadvisor.estimate.offload import plan_offload

    if gpus != 1 or not gpu_figures.memory_gib or not gpu_figures.bandwidth_gbs:
        return None
    wl = workload.with_(quant="q4_k_m") if workload.quant == "none" and workload.dtype in ("bf16", "fp16") else workload
    wl = wl.with_(batch=1, seq_len=t.prompt_tokens, gen_tokens=t.output_tokens, offload=True)
    try:
        plan = plan_offload(wl.validate(), gpu_figures.memory_gib * GiB, gpu_figures.bandwidth_gbs)
    except UserError:
        return None
    quant = " in GGUF Q4_K_M" if wl.quant != workload.quant else ""
    f = Figures(fits=True, layout=f"offload: {plan.gpu_layers} of {plan.total_layers} layers on the GPU", tp=1,
                replicas=1, needed_gib=plan.gpu_bytes / GiB, binds="bandwidth",
                binds_note=f"host memory bandwidth: {plan.host_bytes / GiB:,.1f} GiB of layers in host memory",
                per_user=plan.decode_tokens_per_s, aggregate=plan.decode_tokens_per_s, max_users=1,
                memory_parts=(("on the GPU", plan.gpu_bytes / GiB),), usable_gib=gpu_figures.memory_gib)
    flag = ("--quant q4_k_m " if quant else "") + ("--users 1 " if t.users > 1 else "") + "--offload (estimate)"
    return Remedy(f"one user{quant}, {plan.host_bytes / GiB:,.0f} GiB of layers in host memory (llama.cpp)",
                  flag, 1, f)


__all__ = ["Remedy", "way_forward"]
