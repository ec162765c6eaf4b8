"""How a job is spread over GPUs: the one `Layout` type and the one place its degrees are checked.

Three estimates read it: the step estimate (`Workload.layout`: tensor parallel, data-parallel replicas, sharding,
recomputation), the training layouts of `estimate/parallel` (every degree, micro-batches, sharding, recomputation)
and the serving simulation of `estimate/serve` (tensor and pipeline parallel, replicas). Pure data and validation;
a layout that cannot run is a UserError naming the conflict in one line.

Sits beside `workload.py` rather than under `estimate/`: the Workload holds a layout, and `estimate/` imports the
workload, so the type lives below both.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuadvisor.core.errors import UserError
from gpuadvisor.modelspec import ModelSpec
from gpuadvisor.strenum import StrEnum


class Sharding(StrEnum):
    """Data-parallel sharding of training state: none (DDP), ZeRO-1/2/3, FSDP, and hybrid-sharded FSDP (HSDP:
    FSDP inside each node, whole replicas across nodes, as FSDP's HYBRID_SHARD and torchtitan's dp_replicate run
    it: the weight gathers stay on NVLink and only a shard's gradients cross the node network)."""

    NONE = "none"
    ZERO1 = "zero1"
    ZERO2 = "zero2"
    ZERO3 = "zero3"
    FSDP = "fsdp"
    HSDP = "hsdp"

    @property
    def stage(self) -> int:
        """ZeRO stage: 1 shards optimizer states, 2 also gradients, 3 (FSDP, HSDP) also weights."""
        return {"none": 0, "zero1": 1, "zero2": 2, "zero3": 3, "fsdp": 3, "hsdp": 3}[self.value]

    def shard_ranks(self, ranks: int, per_node: int) -> int:
        """The ranks the training state is split over, of `ranks` data(-and-context)-parallel ones with `per_node`
        of them in one node: all of them, but HSDP's the largest divisor of `ranks` that fits one node."""
        if self is not Sharding.HSDP:
            return ranks
        return max(d for d in range(1, min(ranks, max(1, per_node)) + 1) if ranks % d == 0)


class Checkpointing(StrEnum):
    """Activation recomputation: none, selective (elementwise recomputed, matmul outputs kept), full (layer inputs
    kept, every layer recomputed in backward)."""

    NONE = "none"
    SELECTIVE = "selective"
    FULL = "full"


#: the integer fields of a layout, each at least 1 (`replicas` too, where given)
DEGREES = ("tp", "pp", "cp", "ep", "vp", "micro_batch")


def _is_int(v: object) -> bool:
    """An int and not a bool (True would pass as 1)."""
    return isinstance(v, int) and not isinstance(v, bool)


@dataclass(frozen=True)
class Layout:
    """Degrees of parallelism, the per-GPU micro-batch, sharding and recomputation.

    `tp`, `pp`, `cp` split one model replica (tensor, pipeline, context parallel); `vp` is the interleaved
    pipeline's model chunks per GPU (1: plain 1F1B); `ep` splits each MoE layer's experts (training: over the
    data- and context-parallel GPUs; serving: as tensor parallelism splits the dense layers). `replicas` are the
    data-parallel copies of the model: None takes as many as the GPUs hold (`dp(gpus)`: gpus / (tp x pp x cp)),
    as a training layout does; the serving simulation gives them. `micro_batch`, `sharding` and `checkpointing`
    apply to training (the defaults are Megatron's: ZeRO-1 optimizer sharding, no recomputation). `dp_attention`
    (serving): the tensor-parallel ranks run attention data-parallel, each on its own requests with the whole
    attention weights and only its requests' KV cache, and the MLPs or experts tensor-parallel over all the tokens
    (SGLang's --enable-dp-attention, TensorRT-LLM's enable_attention_dp, vLLM's data-parallel attention)."""

    tp: int = 1
    pp: int = 1
    cp: int = 1
    ep: int = 1
    vp: int = 1
    replicas: int | None = None
    micro_batch: int = 1
    sharding: Sharding = Sharding.ZERO1
    checkpointing: Checkpointing = Checkpointing.NONE
    dp_attention: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "sharding", Sharding.coerce(self.sharding))
        object.__setattr__(self, "checkpointing", Checkpointing.coerce(self.checkpointing))

    @property
    def model_parallel(self) -> int:
        """GPUs of one model replica."""
        return self.tp * self.pp * self.cp

    def dp(self, gpus: int | None = None) -> int:
        """Data-parallel replicas: as given, else what `gpus` leave after the model-parallel degrees (1 without)."""
        if self.replicas is not None:
            return self.replicas
        return gpus // self.model_parallel if gpus else 1

    @property
    def gpus(self) -> int:
        """GPUs of the whole deployment: a replica's times the replicas (one replica where none are given)."""
        return self.model_parallel * self.dp()

    def label(self) -> str:
        """A training layout in one line: TP8 PP4xVP5 CP1 mb1 zero1 ac:none."""
        parts = [f"TP{self.tp}", f"PP{self.pp}" + (f"xVP{self.vp}" if self.vp > 1 else ""), f"CP{self.cp}"]
        if self.ep > 1:
            parts.append(f"EP{self.ep}")
        return " ".join(parts) + f" mb{self.micro_batch} {self.sharding.value} ac:{self.checkpointing.value}"

    def describe(self) -> str:
        """A serving deployment in one line: TP2 x PP2, 3 replicas."""
        parts = [f"TP{self.tp}"] + ([f"PP{self.pp}"] if self.pp > 1 else []) + ([f"EP{self.ep}"] if self.ep > 1 else [])
        return (" x ".join(parts) + (" (data-parallel attention)" if self.dp_attention else "")
                + (f", {self.dp()} replicas" if self.dp() > 1 else ""))

    # --- validation: every check of a degree, for every estimate that reads a layout -------------------------

    def check_degrees(self) -> Layout:
        """Every degree a positive integer."""
        named = [(name, getattr(self, name)) for name in DEGREES]
        if self.replicas is not None:
            named.append(("replicas", self.replicas))
        for name, v in named:
            if not _is_int(v) or v < 1:
                raise UserError(f"{name.replace('_', ' ')} must be a positive integer, got {v!r}")
        return self

    def check_split(self, gpus: int) -> int:
        """The data-parallel replicas of `gpus` GPUs in this layout; UserError where they do not split evenly."""
        if gpus % self.model_parallel:
            what = (f"tensor-parallel groups of {self.tp}" if self.pp == self.cp == 1 else
                    f"TP {self.tp} x PP {self.pp} x CP {self.cp} = {self.model_parallel}-GPU model replicas")
            raise UserError(f"{gpus} GPUs cannot be split into {what}")
        dp = gpus // self.model_parallel
        if self.replicas is not None and self.replicas != dp:
            raise UserError(f"{gpus} GPUs hold {dp} replicas of {self.model_parallel} GPUs, not {self.replicas}")
        return dp

    def check_heads(self, model: ModelSpec, *, kv_heads: bool = True) -> None:
        """Tensor parallelism splits the attention heads: it divides them, and (`kv_heads`: where the estimate
        shards the KV heads evenly or replicates them) divides or is divided by the KV heads."""
        if model.num_heads % self.tp:
            raise UserError(f"TP {self.tp} does not divide {model.name}'s {model.num_heads} attention heads")
        if kv_heads and not model.mla and model.num_kv_heads % self.tp and self.tp % model.num_kv_heads:
            raise UserError(f"TP {self.tp} and {model.name}'s {model.num_kv_heads} KV heads: neither divides the "
                            "other")


def check_layout(m: ModelSpec, gpus: int, global_batch: int, seq: int, lay: Layout) -> int:
    """A training layout: raise UserError (one line naming the conflict) where it cannot run; return the gradient
    accumulation steps (micro-batches per data-parallel rank and step)."""
    lay.check_degrees()
    lay.check_split(gpus)
    if lay.dp_attention:
        raise UserError("data-parallel attention is a serving layout; training layouts split attention by TP")
    if not m.is_transformer:
        if lay.model_parallel > 1 or lay.ep > 1:
            raise UserError(f"{m.name}: tensor, pipeline, context and expert parallelism need a transformer's shape")
        dp = gpus
    else:
        dp = lay.dp(gpus)
        lay.check_heads(m)
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


def check_serving_layout(m: ModelSpec, lay: Layout) -> Layout:
    """A serving deployment: degrees, the heads tensor parallelism splits, and at least one layer a pipeline
    stage (the simulation splits layers fractionally, so an uneven split runs)."""
    lay.check_degrees()
    if lay.pp > m.num_layers:
        raise UserError(f"PP {lay.pp} is more than {m.name}'s {m.num_layers} layers")
    lay.check_heads(m, kv_heads=False)  # the simulation gives each GPU min(tp, KV heads)' share
    if lay.dp_attention and (lay.tp < 2 or lay.pp > 1):
        raise UserError("--dp-attention runs attention data-parallel over the tensor-parallel ranks: it needs --tp 2 "
                        "or more and no --pp")
    return lay


__all__ = ["DEGREES", "Checkpointing", "Layout", "Sharding", "check_layout", "check_serving_layout"]
