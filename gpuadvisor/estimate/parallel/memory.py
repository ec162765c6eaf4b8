"""Peak memory per GPU of a training layout (the fullest pipeline stage): weights, gradients and optimizer states
as the sharding places them (frozen LoRA/QLoRA bases shard like the rest under ZeRO-3/FSDP), the activations of
the micro-batches a pipeline keeps in flight, the logits on the last stage, CUDA context and fragmentation."""

from __future__ import annotations

from dataclasses import dataclass, replace

from gpuadvisor.estimate import calibration as cal
from gpuadvisor.estimate.activations import layer_activation_bytes
from gpuadvisor.estimate.memory import lora_params
from gpuadvisor.estimate.memory_result import GiB
from gpuadvisor.estimate.parallel.layout import stage_layers
from gpuadvisor.estimate.parallel.profiles import Framework
from gpuadvisor.layout import Checkpointing, Layout, Sharding
from gpuadvisor.workload import Mode, Workload


@dataclass(frozen=True)
class LayoutMemory:
    """Bytes per GPU by item, at the fullest stage."""

    items: tuple[tuple[str, float], ...]

    @property
    def total(self) -> float:
        return sum(v for _, v in self.items)

    def get(self, name: str) -> float:
        return dict(self.items).get(name, 0.0)

    def to_dict(self) -> dict[str, float]:
        return {k: round(v / GiB, 3) for k, v in self.items} | {"total": round(self.total / GiB, 3)}


def stage_params(workload: Workload, lay: Layout) -> float:
    """Parameters on one GPU of the fullest stage: its layers split by TP (experts also by EP) plus the embedding
    or head table (vocab-parallel)."""
    m = workload.model
    if not m.is_transformer:
        return float(m.num_params)
    experts = m.routed_expert_params
    dense_layers = m.block_params - experts
    table = m.vocab_size * m.hidden_size
    tables = table if (lay.pp > 1 or m.tied_embeddings) else 2 * table
    return (dense_layers / lay.pp + experts / lay.pp / lay.ep) / lay.tp + tables / lay.tp


def activation_bytes_per_token(workload: Workload, lay: Layout, fw: Framework) -> float:
    """Bytes one layer keeps for backward per token of the micro-batch on this GPU (before checkpointing)."""
    weff = replace(workload, mixed_precision=fw.host_dispatch and workload.mixed_precision, tensor_parallel=1)
    split, rest = layer_activation_bytes(weff)
    sp = fw.sequence_parallel and lay.tp > 1
    return (split + rest) / lay.tp if sp else split / lay.tp + rest


def layout_memory(workload: Workload, lay: Layout, fw: Framework, gpus: int, grad_accum: int, *,
                  ranks_per_node: int | None = None) -> LayoutMemory:
    """Peak bytes per GPU (module docstring). Eager full training without model parallelism is what the
    single-GPU memory model (estimate/memory.py, validated against H100 measurements) already counts phase by phase:
    it answers that case. `ranks_per_node`: data-parallel ranks in one node, where HSDP shards (default: the
    GPUS_PER_NODE GPUs over the tensor-parallel degree)."""
    m = workload.model
    dp = gpus // lay.model_parallel
    per_node = ranks_per_node if ranks_per_node is not None else int(cal.GPUS_PER_NODE) // lay.tp
    sharding = Sharding(lay.sharding)
    # optimizer states and gradients shard over data x context parallel ranks (HSDP: one node's of them)
    shard = sharding.shard_ranks(dp * lay.cp, per_node)
    if (fw.host_dispatch and workload.mode == Mode.TRAINING and lay.model_parallel == 1
            and lay.checkpointing != Checkpointing.SELECTIVE):
        from gpuadvisor.estimate.memory import estimate_memory

        # per GPU, HSDP over `dp` GPUs holds what FSDP over one node's `shard` of them holds
        ranks, held_as = (shard, Sharding.FSDP) if sharding is Sharding.HSDP else (dp, sharding)
        mb = estimate_memory(workload.with_(batch=lay.micro_batch * ranks, num_gpus=ranks, tensor_parallel=1,
                                     sharding=held_as, checkpointing=lay.checkpointing == Checkpointing.FULL))
        return LayoutMemory(items=tuple((k, v) for k, v in mb.items if v))
    z = sharding.stage if shard > 1 else 0
    p = stage_params(workload, lay)
    layer_p = m.layer_params / lay.tp if m.is_transformer else p
    items: dict[str, float] = {}
    gathered = 2 * layer_p * 2.0 if z >= 3 else 0.0  # two bf16 layers in flight while the rest stay sharded
    # FSDP2 over the data-parallel ranks of an eager 2-D mesh (torch's fully_shard on a TP-parallelized model):
    # fp32 masters, gradients and AdamW states all sharded (16 bytes a parameter), gradients set to none between
    # steps; the root's bf16 params (embedding, head) stay gathered from forward to backward
    eager_fsdp2 = fw.host_dispatch and workload.mode == Mode.TRAINING and z >= 2 and m.is_transformer and lay.pp == 1
    table_p = m.vocab_size * m.hidden_size * (1 if m.tied_embeddings else 2) / lay.tp if m.is_transformer else 0.0
    if eager_fsdp2:
        held = 2.0 * (p if z == 2 else table_p)
        items["weights"] = 4.0 * p / shard + held
        items["optimizer states"] = 8.0 * p / shard
    elif workload.mode == Mode.TRAINING and fw.host_dispatch and workload.mixed_precision and z == 0:
        # eager PyTorch under autocast: the fp32 weights are the master (bf16 copies are made op by op and freed),
        # so no separate bf16 copy: fp32 weights, fp32 gradients, two fp32 moments
        items["weights"] = 4.0 * p
        items["gradients"] = 4.0 * p
        items["optimizer states"] = 8.0 * p
    elif workload.mode == Mode.TRAINING:
        items["weights"] = (2.0 * p / shard + gathered) if z >= 3 else 2.0 * p
        items["gradients"] = 4.0 * p / (shard if z >= 2 else 1)
        items["optimizer states"] = 12.0 * p / (shard if z >= 1 else 1)  # fp32 master + two moments
    else:
        base = 2.0 if workload.mode == Mode.LORA else 0.5 + 4 / 64  # QLoRA: NF4 plus block scales
        items["weights"] = base * p / shard + gathered if z >= 3 else base * p
        lp = lora_params(workload) / lay.tp / lay.pp
        items["LoRA adapters"] = lp * (4.0 + 4.0 / (shard if z >= 2 else 1) + 8.0 / (shard if z >= 1 else 1))
    tokens = lay.micro_batch * workload.seq / lay.cp
    if m.is_transformer:
        per_layer = activation_bytes_per_token(workload, lay, fw) * tokens
        layers = stage_layers(m, lay)
        if lay.checkpointing == Checkpointing.FULL:
            sp = fw.sequence_parallel and lay.tp > 1
            kept = 2.0 * m.hidden_size * tokens / (lay.tp if sp else 1)
            recompute_peak = per_layer
        else:
            kept = per_layer * (cal.SELECTIVE_AC_KEEP if lay.checkpointing == Checkpointing.SELECTIVE else 1.0)
            recompute_peak = 0.0
        if lay.pp == 1:
            in_flight = 1.0
        else:
            in_flight = min(grad_accum, lay.pp) * ((1 + (lay.pp - 1) / (lay.pp * lay.vp)) if lay.vp > 1 else 1.0)
        acts = layers * kept * in_flight + recompute_peak
        logits = tokens * m.vocab_size / lay.tp * fw.logit_bytes if m.kind == "decoder" else 0.0
        if lay.pp > 1:  # the last stage holds one micro-batch in flight, plus the logits
            last = layers * kept + recompute_peak + logits
            items["activations"] = max(acts, last)
        else:
            items["activations"] = acts + logits
        if eager_fsdp2:  # or the root's reduce-scatter at the end of backward: every block's sharded gradient,
            # the root's bf16 gradients and their fp32 reduce-scatter input, the activations freed
            end = 4.0 * (p - table_p) / shard + table_p * (2.0 + 4.0)
            if end > items["activations"] + held:
                items.update({"weights": 4.0 * p / shard, "activations": 0.0, "gradients": end})
    else:
        items["activations"] = m.act_elems_per_sample * 2.0 * lay.micro_batch
    tensors = sum(items.values())
    items["allocator overhead"] = cal.ALLOCATOR_OVERHEAD * tensors
    items["CUDA context"] = float(cal.CUDA_CONTEXT_BYTES)
    return LayoutMemory(items=tuple(items.items()))
