"""Step time, throughput and memory of a training layout: counted physics on top of the per-layer cost.

A step is m = global batch / (DP x micro-batch) micro-batches. Each pipeline stage runs L/PP layers per
micro-batch (forward, backward without weight gradients for frozen weights, the recomputation the checkpointing
mode adds) at the framework's efficiency, plus the tensor-parallel collectives it does not hide (2 all-gathers and
2 reduce-scatters per layer and pass with sequence parallel), context parallel's ring KV exchange beyond what the
attention core hides, expert parallel's all-to-alls and the pipeline's point-to-point sends. The pipeline takes
(m + (PP - 1) / VP) stage-times (the 1F1B bubble, shrunk by interleaving). Data parallel reduces gradients once per
step (hidden behind the last micro-batch's backward as far as it goes); ZeRO-3/FSDP gathers weights and reduces
gradients every micro-batch, hidden behind its compute as far as it goes. Collectives run at the NVLink figure
inside a node (NVLink domain) and at the node network's per-GPU bandwidth across nodes. The optimizer step moves
its shard of states once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate import calibration as cal
from gpuadvisor.estimate import traffic
from gpuadvisor.estimate.dispatch import host_op_scale, overlap, train_host_s
from gpuadvisor.estimate.flops import training_flops_per_token
from gpuadvisor.estimate.hardware import HardwareFigures, achieved_bandwidth
from gpuadvisor.estimate.memory import lora_params
from gpuadvisor.estimate.memory_result import GiB
from gpuadvisor.estimate.parallel.cost import AnalyticCost, StageCost
from gpuadvisor.estimate.parallel.layout import Cluster, stage_layers
from gpuadvisor.estimate.parallel.memory import LayoutMemory, layout_memory, stage_params
from gpuadvisor.estimate.parallel.profiles import Framework
from gpuadvisor.layout import Layout, Sharding, check_layout
from gpuadvisor.workload import Workload


@dataclass(frozen=True)
class TrainingEstimate:
    """One layout's step: time, its parts (seconds per step), throughput, memory per GPU and whether it fits."""

    layout: Layout
    framework: str
    gpus: int
    grad_accum: int
    step_s: float
    tokens_per_s: float
    tokens_per_s_per_gpu: float
    mfu: float  # model FLOPs (6N + attention) per GPU per second over the bf16 dense peak
    memory: LayoutMemory
    memory_capacity: float | None
    parts: tuple[tuple[str, float], ...] = ()
    notes: tuple[str, ...] = field(default=())

    @property
    def fits(self) -> bool:
        return self.memory_capacity is None or self.memory.total <= self.memory_capacity

    def part(self, name: str) -> float:
        return dict(self.parts).get(name, 0.0)

    def to_dict(self) -> dict[str, Any]:
        lay = self.layout
        return {"layout": {"tp": lay.tp, "pp": lay.pp, "cp": lay.cp, "ep": lay.ep, "vp": lay.vp,
                           "dp": lay.dp(self.gpus), "micro_batch": lay.micro_batch, "sharding": str(lay.sharding),
                           "checkpointing": str(lay.checkpointing), "grad_accum": self.grad_accum},
                "framework": self.framework, "gpus": self.gpus, "step_s": self.step_s,
                "tokens_per_s": self.tokens_per_s, "tokens_per_s_per_gpu": self.tokens_per_s_per_gpu,
                "mfu": self.mfu, "memory_gib": self.memory.to_dict(), "fits": self.fits,
                "memory_capacity_gib": None if self.memory_capacity is None else self.memory_capacity / GiB,
                "parts_s": {k: v for k, v in self.parts}, "notes": list(self.notes)}


def _spans(group: int, stride: int, domain: int) -> bool:
    """Whether a group of `group` GPUs `stride` apart leaves one NVLink domain."""
    return group > 1 and group * stride > domain


def _link(gpu_figures: HardwareFigures, cluster: Cluster, group: int, stride: int) -> float:
    """Bus bandwidth (bytes/s) of a collective over `group` GPUs `stride` apart."""
    nvlink = (gpu_figures.interconnect_gbs or cal.DEFAULT_INTERCONNECT_GBS) * 1e9 * cal.NVLINK_BUSBW_FRACTION
    domain = cluster.domain(gpu_figures.name)
    if _spans(group, stride, domain):
        # hierarchical: reduced inside each node first, then each of the group's k GPUs per node moves 1/k of the
        # data over its own NIC
        local = max(1, min(group, domain // stride))
        return min(nvlink, local * cluster.net_bytes_s())
    return nvlink


def estimate_training(workload: Workload, lay: Layout, gpu_figures: HardwareFigures, fw: Framework, *,
                      cluster: Cluster | None = None, cost: StageCost | None = None) -> TrainingEstimate:
    """Step time and memory per GPU of `workload` (global batch `workload.batch`, `workload.num_gpus` GPUs) in
    layout `lay`."""
    if not workload.is_training:
        raise UserError(f"a training layout needs a training mode (training, lora, qlora), got {workload.mode}")
    m = workload.model
    if not m.is_transformer:
        raise UserError(f"{m.name}: parallel training layouts are costed for transformer shapes only")
    if not gpu_figures.peak_tflops("bf16") or not gpu_figures.bandwidth_gbs:
        raise UserError(f"{gpu_figures.name}: no bf16 throughput or bandwidth figure in the catalog")
    cluster = cluster or Cluster()
    gpus = workload.num_gpus
    ga = check_layout(m, gpus, workload.batch, workload.seq, lay)
    dp = lay.dp(gpus)
    cost = cost or AnalyticCost(workload, gpu_figures, fw, lay.checkpointing)
    tokens = lay.micro_batch * workload.seq / lay.cp  # per GPU per micro-batch
    lt = cost.layer(tokens, workload.seq, lay.tp)
    h_fwd, h_bwd = cost.head(tokens, lay.tp)
    compute_efficiency = fw.compute_eff
    layers = stage_layers(m, lay)
    a = 2.0
    # tensor parallel: 4 collectives of the micro-batch's activations per layer and pass (AG + RS twice with SP,
    # two all-reduces without), in forward, backward and the full recomputation
    tp_comm = 0.0
    if lay.tp > 1:
        passes = 2 + (1 if str(lay.checkpointing) == "full" else 0)
        vol = 4 * (lay.tp - 1) / lay.tp * lay.micro_batch * workload.seq / lay.cp * m.hidden_size * a
        tp_comm = passes * vol / _link(gpu_figures, cluster, lay.tp, 1) * (1 - fw.tp_overlap)
    # context parallel: each GPU passes its K/V chunk around the ring (forward), K/V and their gradients (backward)
    cp_comm = 0.0
    if lay.cp > 1:
        kv = m.kv_cache_width / m.kv_shards(lay.tp) * tokens * a
        link = _link(gpu_figures, cluster, lay.cp, lay.tp)
        fwd_c = (lay.cp - 1) * kv / link
        cp_comm = max(0.0, fwd_c - lt.attn_fwd) + max(0.0, 2 * fwd_c - lt.attn_bwd)
    # expert parallel: dispatch and combine all-to-alls of the routed tokens, forward and backward
    ep_comm = 0.0
    if lay.ep > 1 and m.num_experts > 1:
        vol = 4 * (lay.ep - 1) / lay.ep * tokens * m.experts_per_token * m.hidden_size * a
        ep_comm = vol / _link(gpu_figures, cluster, lay.ep, lay.tp * lay.cp)
    layer_s = lt.total / compute_efficiency + tp_comm + cp_comm + ep_comm
    head_s = (h_fwd + h_bwd) / compute_efficiency
    stage_s = layers * layer_s + head_s
    # pipeline: activations and their gradients between stages, VP times per micro-batch when interleaved
    p2p = 0.0
    if lay.pp > 1:
        sp = fw.sequence_parallel and lay.tp > 1
        msg = tokens * m.hidden_size * a / (lay.tp if sp else 1)
        link = _link(gpu_figures, cluster, lay.pp, lay.tp * lay.cp * dp)
        p2p = 2 * lay.vp * msg / link * (1 - fw.tp_overlap)
    mb_s = stage_s + p2p
    host = 0.0
    if fw.host_dispatch:
        wmb = workload.with_(batch=lay.micro_batch, num_gpus=1, tensor_parallel=1)
        # tensor parallelism under eager PyTorch runs through DTensor, whose dispatch (sharding propagation,
        # redistributions) costs the host several times plain eager's
        if lay.tp > 1:
            dtensor = cal.DTENSOR_HOST_FACTOR * (cal.DTENSOR_SP_HOST_FACTOR if fw.sequence_parallel else 1.0)
        else:
            dtensor = 1.0
        host = train_host_s(wmb) * host_op_scale(gpu_figures) * dtensor
        mb_s = overlap(host, mb_s)
    bubble = (lay.pp - 1) / lay.vp * mb_s
    pipe = ga * mb_s + bubble
    # data parallel over DP x CP ranks
    shard = dp * lay.cp
    # the ranks the state is split over: all of `shard`, but HSDP's one node's; the others hold replicas
    sharding = Sharding(lay.sharding)
    per_node = cluster.domain(gpu_figures.name) // lay.tp  # data(-and-context)-parallel ranks in one node
    ranks = sharding.shard_ranks(shard, per_node)
    replicas = shard // ranks
    p = stage_params(workload, lay)
    trained = lora_params(workload) / lay.tp / lay.pp if workload.is_adapter else p
    dp_link = _link(gpu_figures, cluster, ranks, lay.tp)
    z = sharding.stage if ranks > 1 else 0
    # the backward that a step's gradient reduction hides in
    window = cal.DP_OVERLAP_WINDOW * layers * (lt.bwd / compute_efficiency)
    dp_comm = 0.0
    if ranks > 1:
        ring = (ranks - 1) / ranks
        if z >= 3:
            # weights gathered in forward and again in backward (frozen bases too), trained gradients reduced
            per_mb = (2 * p * a + trained * a) * ring / dp_link
            compute_mb = stage_s
            dp_comm = ga * (max(0.0, per_mb - compute_mb) + per_mb / max(1.0, layers))
        else:
            vol = 2 * ring * trained * a
            dp_comm = max(0.0, vol / dp_link - window)
    if replicas > 1:  # HSDP: each rank all-reduces its shard's gradients with its replicas, across nodes
        vol = 2 * (replicas - 1) / replicas * trained * a / ranks
        dp_comm += max(0.0, vol / _link(gpu_figures, cluster, replicas, lay.tp * ranks) - window)
    opt_shard = trained / (ranks if z >= 1 else 1)
    optimizer = opt_shard * traffic.optimizer_bytes_per_param(4.0, "adamw-fused", True) / achieved_bandwidth(
        gpu_figures)
    step = pipe + dp_comm + optimizer
    global_tokens = workload.batch * workload.seq
    flops = training_flops_per_token(workload.with_(tensor_parallel=1)) * global_tokens
    peak = (gpu_figures.peak_tflops("bf16") or 0.0) * 1e12
    mem = layout_memory(workload, lay, fw, gpus, ga, ranks_per_node=per_node)
    parts = (("compute", ga * layers * lt.total / compute_efficiency + ga * head_s), ("pipeline bubble", bubble),
             ("tensor parallel", ga * layers * tp_comm), ("context parallel", ga * layers * cp_comm),
             ("expert parallel", ga * layers * ep_comm), ("pipeline sends", ga * p2p),
             ("data parallel", dp_comm), ("optimizer", optimizer), ("host dispatch (overlaps the GPU)", ga * host))
    batches = f"{ga} micro-batch{'es' if ga != 1 else ''}"
    notes = [f"{batches} of {lay.micro_batch} per step on each of {dp} data-parallel ranks"]
    if lay.pp > 1:
        notes.append(f"pipeline bubble {(lay.pp - 1) / lay.vp / ga:.0%} of the micro-batches "
                     f"({'interleaved, ' + str(lay.vp) + ' chunks' if lay.vp > 1 else '1F1B'})")
    cap = gpu_figures.memory_bytes
    return TrainingEstimate(
        layout=lay, framework=fw.name, gpus=gpus, grad_accum=ga, step_s=step, tokens_per_s=global_tokens / step,
        tokens_per_s_per_gpu=global_tokens / step / gpus, mfu=flops / step / gpus / peak if peak else 0.0,
        memory=mem, memory_capacity=cap, parts=parts, notes=tuple(notes))
