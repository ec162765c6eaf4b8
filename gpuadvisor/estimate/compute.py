"""Time of a workload on a GPU: a roofline estimate, pure functions, no torch, no UI.

Time is a roofline estimate: matmul FLOPs over (peak TFLOP/s x MFU) plus the bytes that
elementwise kernels and the optimizer move over (bandwidth x bandwidth efficiency). Training
FLOPs are 6 x params x tokens plus causal attention; prefill is 2 x params per token;
decode reads all active weights and the KV cache once per generated token, and is memory
bound unless the batch is large. Multi-GPU: data-parallel gradient all-reduce (ring, half of
it hidden behind backward), ZeRO-3 parameter gathers, and tensor-parallel activation
all-reduces over the card's interconnect; the scaling efficiency is ideal time / estimated time.
Every figure is an estimate; the efficiencies were calibrated on an H100 (see BENCHMARKS.md).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from gpuadvisor.estimate.hardware import DEFAULT_INTERCONNECT_GBS, Efficiency, HardwareFigures
from gpuadvisor.estimate.memory import (
    MemoryBreakdown,
    _act_bytes,
    _regime,
    estimate_memory,
    kv_cache_bytes,
    layer_activation_bytes,
    lora_params,
    optimizer_state_bytes,
)
from gpuadvisor.workload import BYTES_PER_DTYPE, Workload

DP_OVERLAP = 0.5  # fraction of the data-parallel gradient all-reduce hidden behind backward



@dataclass(frozen=True)
class ComputeEstimate:
    """Time and throughput per GPU configuration. All figures are estimates.

    Training: `step_time_s` for one global batch, `time_s` for the token budget (one step if
    none). Inference: prefill of the batch's prompts, then `gen_tokens` decode steps; `time_s`
    is both together. `bound` says which roofline limit dominates ("compute" or "memory").
    """

    mode: str
    time_s: float | None
    step_time_s: float | None = None
    tokens_per_s: float | None = None  # training tokens/s, all GPUs together
    steps: float | None = None
    flops_per_step: float | None = None
    prefill_time_s: float | None = None
    prefill_tokens_per_s: float | None = None
    prefill_bound: str | None = None
    decode_step_s: float | None = None
    decode_tokens_per_s: float | None = None  # generated tokens/s over the whole batch
    decode_bound: str | None = None
    bound: str | None = None
    comm_time_s: float = 0.0
    scaling_efficiency: float = 1.0
    mfu: float = 0.0
    bandwidth_efficiency: float = 0.0
    hardware_source: str = "datasheet"
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["notes"] = list(self.notes)
        d["estimate"] = True
        return d



def training_flops_per_token(w: Workload) -> float:
    """6 x matmul params (+2 more with checkpointing) plus causal attention (QK and AV)."""
    m = w.model
    if not m.is_transformer:
        f = 3 * m.fwd_flops_per_sample if m.fwd_flops_per_sample else 6.0 * m.num_params
        return f * (4 / 3 if w.checkpointing else 1.0)
    mult = 8.0 if w.checkpointing else 6.0
    if w.mode in ("lora", "qlora"):
        mult = 6.0 if w.checkpointing else 4.0  # no weight gradients for the frozen base
    causal = 0.5 if m.kind == "decoder" else 1.0
    attn = mult * m.num_layers * w.seq * m.q_dim * causal  # 2*S*d per token for QK^T and AV each
    return mult * m.matmul_params + attn


def forward_flops_per_token(w: Workload, context: int | None = None) -> float:
    m = w.model
    if not m.is_transformer:
        return m.fwd_flops_per_sample or 2.0 * m.num_params
    causal = 0.5 if m.kind == "decoder" and context is None else 1.0
    ctx = w.seq if context is None else context
    return 2.0 * m.matmul_params + 4.0 * m.num_layers * ctx * m.q_dim * causal


# Time-model constants, calibrated on an H100 with PyTorch 2.11 eager + transformers 5.17
# (tools/validate_estimates.py; BENCHMARKS.md "Estimator validation"). Byte multipliers count
# how many times a kernel sweep touches each saved byte; they are divided by bandwidth x efficiency.
ATTENTION_EFFICIENCY = 1 / 12  # SDPA attention FLOPs run at this fraction of the matmul rate
K_ACT_TRAIN = 3.3  # passes over the saved activations (forward write, backward reads/writes)
K_ACT_PREFILL = 1.5  # passes over the same activations in a no-grad forward
K_LOGITS = 46.0  # passes over the fp32 logits (log-softmax, loss and their backward, casts)
K_OPT = 2.2  # passes over the optimizer step's bytes (weights, grads, states; AMP casts)
K_MIXED = 85.0  # AMP: passes over the fp32 residual stream (upcasts, casts, fp32 norms)
K_LORA = 27.6  # LoRA: passes over each adapted layer's fp32 input copies and adapter outputs


def _pure(w: Workload) -> Workload:
    return w if _regime(w) != "mixed" else replace(w, mixed_precision=False)


def _attention_flops_fwd(w: Workload, tokens: float) -> float:
    m = w.model
    causal = 0.5 if m.kind == "decoder" else 1.0
    return 4.0 * m.num_layers * w.seq * m.q_dim * causal * tokens


def _train_step_parts(w: Workload, mem: MemoryBreakdown) -> tuple[float, float]:
    """(FLOPs at matmul-equivalent rate, bytes moved) for one step on one GPU."""
    m = w.model
    tp = w.tensor_parallel
    tokens = float(w.micro_batch * w.seq)
    lora = w.mode in ("lora", "qlora")
    if not m.is_transformer:
        f = training_flops_per_token(w) * w.micro_batch
        return f / tp, K_ACT_TRAIN * mem.get("activations") + K_OPT * (2 * mem.get("weights") + mem.get(
            "gradients") + 2 * mem.get("optimizer states"))
    head = m.vocab_size * m.hidden_size if m.kind == "decoder" else 0
    mult = 1.0 if lora else 3.0
    if w.checkpointing:
        mult += 1.0
    flops = mult * 2.0 * (m.matmul_params - head) * tokens + 6.0 * head * tokens
    flops += _attention_flops_fwd(w, tokens) * (4.5 if w.checkpointing else 3.5) / ATTENTION_EFFICIENCY
    split, rest = layer_activation_bytes(_pure(w))
    act = (split / tp + rest) * m.num_layers * tokens * (1.33 if w.checkpointing else 1.0)
    moved = K_ACT_TRAIN * act + K_LOGITS * tokens * m.vocab_size * 4.0 / tp * (m.kind == "decoder")
    wbytes = mem.get("weights")
    if lora:
        adapted = m.num_layers * tokens * (4 * m.hidden_size + m.intermediate_size) * 4.0 / tp
        moved += K_OPT * 3.0 * wbytes + K_LORA * adapted
    else:
        p = m.num_params / tp
        opt = 2 * p * BYTES_PER_DTYPE[w.weight_dtype] + p * BYTES_PER_DTYPE[w.weight_dtype]
        opt += 2 * p * optimizer_state_bytes(w.optimizer, BYTES_PER_DTYPE[w.weight_dtype])
        if _regime(w) == "mixed":
            opt += 6.0 * p  # autocast re-casts every weight each step
            moved += K_MIXED * m.num_layers * tokens * m.hidden_size * 4.0
        moved += K_OPT * opt
    return flops / tp, moved


def estimate_compute(w: Workload, hw: HardwareFigures, efficiency: Efficiency | None = None) -> ComputeEstimate:
    """Roofline time estimate of the workload on `w.num_gpus` GPUs described by `hw`."""
    w = w.validate()
    eff = (efficiency or Efficiency()).validate()
    mfu, bw_eff = eff.for_source(hw.source)
    peak = hw.peak_tflops(w.compute_dtype)
    notes = [f"estimate: MFU {mfu:.0%} of {hw.source} matmul peak, {bw_eff:.0%} of {hw.source} bandwidth"]
    if not peak or not hw.bandwidth_gbs:
        return ComputeEstimate(mode=w.mode, time_s=None, mfu=mfu, bandwidth_efficiency=bw_eff,
                               hardware_source=hw.source, notes=(f"{hw.name}: no throughput figures in the catalog",))
    flops_rate = peak * 1e12 * mfu  # per GPU
    bw = hw.bandwidth_gbs * 1e9 * bw_eff
    link = (hw.interconnect_gbs or DEFAULT_INTERCONNECT_GBS) * 1e9 * eff.interconnect
    m = w.model
    tp, dp = w.tensor_parallel, w.data_parallel
    a = _act_bytes(w)
    mem = estimate_memory(w)

    if w.is_training:
        tokens_gpu = w.micro_batch * w.seq  # per data-parallel rank
        flops, moved = _train_step_parts(w, mem)
        t_compute = flops / flops_rate
        t_mem = moved / bw
        comm = 0.0
        if dp > 1:
            grad_bytes = m.num_params / tp * (2.0 if w.compute_dtype != "fp32" else 4.0)
            if w.mode in ("lora", "qlora"):
                grad_bytes = lora_params(w) / tp * 4.0
            ring = 2.0 * (dp - 1) / dp
            comm += (1 - DP_OVERLAP) * ring * grad_bytes / link
            if w.sharding in ("zero3", "fsdp") and w.mode == "training":
                comm += 2.0 * (dp - 1) / dp * m.num_params / tp * a / link  # gathers fwd + bwd
        if tp > 1 and m.is_transformer:
            comm += 4 * m.num_layers * tokens_gpu * m.hidden_size * a * 2.0 * (tp - 1) / tp / link
        step = t_compute + t_mem + comm
        ideal = (t_compute + t_mem)
        global_tokens = w.batch * w.seq
        steps = max(1.0, w.train_tokens / global_tokens) if w.train_tokens else 1.0
        if w.train_tokens:
            notes.append(f"{w.train_tokens:.3g} tokens = {steps:,.0f} steps of {global_tokens:,} tokens")
        return ComputeEstimate(
            mode=w.mode, time_s=step * steps, step_time_s=step, tokens_per_s=global_tokens / step,
            steps=steps, flops_per_step=training_flops_per_token(w) * global_tokens,
            bound="compute" if t_compute >= t_mem + comm else "memory", comm_time_s=comm,
            scaling_efficiency=ideal / step if step else 1.0, mfu=mfu, bandwidth_efficiency=bw_eff,
            hardware_source=hw.source, notes=tuple(notes),
        )

    # inference: prefill of the prompts (last-position logits only), then decode
    b = w.micro_batch
    tokens = b * w.seq
    wbytes = mem.get("weights")
    head = m.vocab_size * m.hidden_size if m.kind == "decoder" else 0
    if m.is_transformer:
        pf_flops = (2.0 * (m.matmul_params - head) * tokens + 2.0 * head * b
                    + _attention_flops_fwd(w, tokens) / ATTENTION_EFFICIENCY) / tp
        split, rest = layer_activation_bytes(replace(w, mode="training", mixed_precision=False))
        pf_bytes = wbytes + K_ACT_PREFILL * (split / tp + rest) * m.num_layers * tokens
    else:
        pf_flops = forward_flops_per_token(w) * b / tp
        pf_bytes = wbytes + mem.get("activations")
    pf_compute = pf_flops / flops_rate
    pf_mem = pf_bytes / bw
    tp_comm = (2 * m.num_layers * tokens * m.hidden_size * a * 2.0 * (tp - 1) / tp / link) if tp > 1 else 0.0
    prefill = pf_compute + pf_mem + tp_comm
    pf_bound = "compute" if pf_compute >= pf_mem else "memory"
    decode_step = None
    decode_tps = None
    decode_bound = None
    total = prefill
    if m.kind == "decoder" and w.gen_tokens:
        ctx = w.seq + w.gen_tokens // 2  # mean context while generating
        kv_read = kv_cache_bytes(w, context=ctx)
        active_w = wbytes * (m.active_params / m.num_params if m.num_params else 1.0)
        d_mem = (active_w + kv_read) / bw
        d_compute = forward_flops_per_token(w, context=ctx) * b / tp / flops_rate
        d_comm = (2 * m.num_layers * b * m.hidden_size * a * 2.0 * (tp - 1) / tp / link) if tp > 1 else 0.0
        decode_step = max(d_mem, d_compute) + d_comm
        decode_bound = "memory" if d_mem >= d_compute else "compute"
        decode_tps = b * dp / decode_step
        total = prefill + w.gen_tokens * decode_step
    notes.append("decode reads every active weight and the KV cache once per generated token")
    return ComputeEstimate(
        mode=w.mode, time_s=total, prefill_time_s=prefill, prefill_tokens_per_s=tokens * dp / prefill,
        prefill_bound=pf_bound, decode_step_s=decode_step, decode_tokens_per_s=decode_tps,
        decode_bound=decode_bound, bound=decode_bound or pf_bound, comm_time_s=tp_comm,
        scaling_efficiency=1.0 if tp == 1 else (prefill - tp_comm) / prefill,
        mfu=mfu, bandwidth_efficiency=bw_eff, hardware_source=hw.source, notes=tuple(notes),
        flops_per_step=forward_flops_per_token(w) * w.batch * w.seq,
    )
