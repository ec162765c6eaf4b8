"""A training layout: how a model's step is split over GPUs (data, tensor, pipeline, context, expert parallel),
its micro-batch and recomputation, and the cluster it runs on. Pure data and validation; a layout that cannot run
is a UserError naming the conflict in one line."""

from __future__ import annotations

from dataclasses import dataclass

from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate import calibration as cal
from gpuadvisor.modelspec import ModelSpec
from gpuadvisor.strenum import StrEnum
from gpuadvisor.workload import Sharding


class Checkpointing(StrEnum):
    """Activation recomputation: none, selective (elementwise recomputed, matmul outputs kept), full (layer inputs
    kept, every layer recomputed in backward)."""

    NONE = "none"
    SELECTIVE = "selective"
    FULL = "full"


@dataclass(frozen=True)
class Layout:
    """Degrees of parallelism and the per-GPU micro-batch. Data parallel is what the GPUs leave:
    gpus / (tp x pp x cp). `vp` is the interleaved pipeline's model chunks per GPU (1: plain 1F1B); `ep` splits each
    MoE layer's experts over the data- and context-parallel GPUs."""

    tp: int = 1
    pp: int = 1
    cp: int = 1
    ep: int = 1
    vp: int = 1
    micro_batch: int = 1
    sharding: Sharding = Sharding.ZERO1
    checkpointing: Checkpointing = Checkpointing.NONE

    def __post_init__(self) -> None:
        object.__setattr__(self, "sharding", Sharding.coerce(self.sharding))
        object.__setattr__(self, "checkpointing", Checkpointing.coerce(self.checkpointing))

    @property
    def model_parallel(self) -> int:
        return self.tp * self.pp * self.cp

    def dp(self, gpus: int) -> int:
        return gpus // self.model_parallel

    def label(self) -> str:
        parts = [f"TP{self.tp}", f"PP{self.pp}" + (f"xVP{self.vp}" if self.vp > 1 else ""), f"CP{self.cp}"]
        if self.ep > 1:
            parts.append(f"EP{self.ep}")
        return " ".join(parts) + f" mb{self.micro_batch} {self.sharding.value} ac:{self.checkpointing.value}"


@dataclass(frozen=True)
class Cluster:
    """Where the GPUs sit: GPUs per NVLink domain and the node network per GPU (GB/s, one direction)."""

    gpus_per_node: int = 0  # 0: the default for the card (GPUS_PER_NODE, NVL72 racks for GB200/GB300)
    net_gbs_per_gpu: float = 0.0  # 0: NODE_NET_GBS_PER_GPU

    def domain(self, card_name: str) -> int:
        if self.gpus_per_node:
            return self.gpus_per_node
        if card_name.upper().startswith(("GB200", "GB300")):
            return int(cal.NVL72_DOMAIN)
        return int(cal.GPUS_PER_NODE)

    def net_bytes_s(self) -> float:
        return (self.net_gbs_per_gpu or cal.NODE_NET_GBS_PER_GPU) * 1e9 * cal.NET_EFFICIENCY


def check_layout(m: ModelSpec, gpus: int, global_batch: int, seq: int, lay: Layout) -> int:
    """Raise UserError (one line naming the conflict) for a layout that cannot run; return the gradient
    accumulation steps (micro-batches per data-parallel rank and step)."""
    for name in ("tp", "pp", "cp", "ep", "vp", "micro_batch"):
        v = getattr(lay, name)
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise UserError(f"{name.replace('_', ' ')} must be a positive integer, got {v!r}")
    if gpus % lay.model_parallel:
        raise UserError(f"{gpus} GPUs cannot be split into TP {lay.tp} x PP {lay.pp} x CP {lay.cp} = "
                        f"{lay.model_parallel}-GPU model replicas")
    if not m.is_transformer:
        if lay.model_parallel > 1 or lay.ep > 1:
            raise UserError(f"{m.name}: tensor, pipeline, context and expert parallelism need a transformer's shape")
        dp = gpus
    else:
        dp = lay.dp(gpus)
        if m.num_heads % lay.tp:
            raise UserError(f"TP {lay.tp} does not divide {m.name}'s {m.num_heads} attention heads")
        if m.num_kv_heads % lay.tp and lay.tp % m.num_kv_heads:
            raise UserError(f"TP {lay.tp} and {m.name}'s {m.num_kv_heads} KV heads: neither divides the other")
        if m.num_layers % (lay.pp * lay.vp) and (m.num_layers + 2) % (lay.pp * lay.vp):
            # Megatron may count the embedding and the loss as one layer each (account_for_*_in_pipeline_split)
            what = f"PP {lay.pp} x VP {lay.vp} = {lay.pp * lay.vp} stages" if lay.vp > 1 else f"PP {lay.pp}"
            raise UserError(f"{what} does not divide {m.name}'s {m.num_layers} layers (nor {m.num_layers + 2} with "
                            "the embedding and the loss counted as layers)")
        if lay.vp > 1 and lay.pp == 1:
            raise UserError("an interleaved pipeline (VP > 1) needs PP > 1")
        if lay.cp > 1 and seq % (2 * lay.cp):
            raise UserError(f"CP {lay.cp} needs a sequence length divisible by {2 * lay.cp} (two chunks per GPU), "
                            f"got {seq}")
        if lay.ep > 1:
            if m.num_experts == 1:
                raise UserError(f"EP {lay.ep}: {m.name} has no experts")
            if m.num_experts % lay.ep:
                raise UserError(f"EP {lay.ep} does not divide {m.name}'s {m.num_experts} experts")
            if (dp * lay.cp) % lay.ep:
                raise UserError(f"EP {lay.ep} does not divide the {dp * lay.cp} data x context parallel GPUs")
    if global_batch % (dp * lay.micro_batch):
        raise UserError(f"global batch {global_batch} is not a multiple of data parallel {dp} x micro-batch "
                        f"{lay.micro_batch}")
    steps = global_batch // (dp * lay.micro_batch)
    if lay.vp > 1 and steps % lay.pp:
        raise UserError(f"an interleaved pipeline needs the {steps} micro-batches per step to be a multiple of "
                        f"PP {lay.pp}")
    return steps


def stage_layers(m: ModelSpec, lay: Layout) -> float:
    """Transformer layers on the fullest pipeline stage: an even split, or whole layers per model chunk where the
    embedding and the loss take the place of one layer each (uneven split)."""
    chunks = lay.pp * lay.vp
    if m.num_layers % chunks == 0:
        return m.num_layers / lay.pp
    return float(-(-m.num_layers // chunks) * lay.vp)
