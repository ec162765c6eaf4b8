"""Time of a workload on a GPU: counted physics, pure functions, no torch, no UI.

A step's GPU time is the sum of its kernels: matrix products (kernels.gemm_time: FLOPs at the
large-GEMM rate, lowered by wave quantization and the K ramp, or bytes for skinny products),
attention (kernels.attention_time: a rate that grows with sequence length and head dimension) and
the bytes the elementwise kernels, the loss and the optimizer move (traffic.py) over bandwidth.
Eager PyTorch also spends host time dispatching every op (dispatch.py: HOST_OP_S each); the step
takes the larger of host and GPU time where one dominates and more where they are close (_overlap).
Decode steps come from engines.py (per engine profile). Calibrated figures come from the
calibration table (docs/calibration.md); FLOP counts from flops.py. Multi-GPU: data-parallel gradient
all-reduce (ring, half hidden behind backward; measured all-reduce bus bandwidth where a probe has
it), ZeRO-3 parameter gathers and tensor-parallel activation all-reduces over the interconnect.
Every figure is an estimate; docs/validation-time.md compares them with H100 measurements.
"""

from __future__ import annotations

from typing import Any

from gpuadvisor.estimate import calibration as cal
from gpuadvisor.estimate import kernels, traffic
from gpuadvisor.estimate.collectives import gradient_allreduce_s, link_bytes_s
from gpuadvisor.estimate.compute_result import ComputeEstimate
from gpuadvisor.estimate.confidence import BNB_FORMATS, Confidence, low_confidence_reasons
from gpuadvisor.estimate.dispatch import bnb_int8_host_s, host_op_scale, is_dtensor, overlap, train_host_s
from gpuadvisor.estimate.engines import (
    DEFAULT_ENGINE,
    StepEngineName,
    decode_notes,
    decode_step,
    engine_profile,
    prefill_host_s,
)
from gpuadvisor.estimate.flops import forward_flops_per_token, training_flops_per_token
from gpuadvisor.estimate.hardware import Efficiency, HardwareFigures
from gpuadvisor.estimate.memory import (
    MemoryBreakdown,
    _act_bytes,
    _regime,
    estimate_memory,
    lora_params,
    shard_ranks,
)
from gpuadvisor.layout import Sharding
from gpuadvisor.workload import BYTES_PER_DTYPE, Mode, Workload

__all__ = ["BNB_FORMATS", "ComputeEstimate", "Confidence", "bnb_int8_host_s", "estimate_compute",
           "forward_flops_per_token", "training_flops_per_token"]
# figures this module used to define, now read from the calibration table
__getattr__ = cal.aliases(__name__, (
    "DP_OVERLAP", "OVERLAP_P", "HOST_OPS_FIXED_TRAIN", "HOST_OPS_ADAPTER", "INT8_HOST_OPS_PER_LINEAR",
    "HOST_OPS_DEQUANT", "HOST_OPS_MOE", "DTENSOR_HOST_FACTOR"))


Gemm = tuple[float, float, float, float, bool]  # (token share, n, k, count, expert)


def _layer_gemms(m: Any, tp: int, *, dp_attention: bool = False) -> list[Gemm]:
    """Matrix products of the mean layer as (token share, n, k, count, expert), per tensor-parallel rank:
    column-parallel projections split n, row-parallel ones split k; MoE experts see top-k/E of the tokens. Where
    layers differ (DeepSeek-V3's dense first layers) a product's count is its share of the layers. `dp_attention`:
    each rank runs the attention's projections whole over its 1/tp of the tokens (Layout.dp_attention)."""
    if dp_attention:
        return [*((share / tp, n, k, count, expert) for share, n, k, count, expert in _attention_gemms(m, 1)),
                *_mlp_gemms(m, tp)]
    return _attention_gemms(m, tp) + _mlp_gemms(m, tp)


def _attention_gemms(m: Any, tp: int) -> list[Gemm]:
    """The attention block's projections (_layer_gemms)."""
    d, q, kv = m.hidden_size, m.q_dim, m.kv_dim
    if m.mla:  # latent attention: the latents are replicated over the ranks, the heads split; the latent's up-
        # projection runs once per token either way (on the prompt's keys, or absorbed into a decoding query)
        g: list[Gemm] = ([(1.0, m.q_lora_rank, d, 1, False), (1.0, q / tp, m.q_lora_rank, 1, False)]
                         if m.q_lora_rank else [(1.0, q / tp, d, 1, False)])
        nope = m.head_dim - m.rope_head_dim
        return [*g, (1.0, m.kv_cache_width, d, 1, False),
                (1.0, m.num_heads * nope / tp + m.value_dim / tp, m.kv_lora_rank, 1, False),
                (1.0, d, m.value_dim / tp, 1, False)]
    if m.fused_qkv:
        return [(1.0, (q + 2 * kv) / tp, d, 1, False), (1.0, d, q / tp, 1, False)]
    return [(1.0, q / tp, d, 1, False), (1.0, kv / tp, d, 2, False), (1.0, d, q / tp, 1, False)]


def _mlp_gemms(m: Any, tp: int) -> list[Gemm]:
    """The MLP's products, or a MoE layer's router, experts and shared expert and the dense layers' MLP, each
    counted at its share of the layers (_layer_gemms)."""
    d, inter = m.hidden_size, m.intermediate_size
    mats = 2 if m.gated else 1
    if m.num_experts <= 1:
        return [(1.0, inter / tp, d, mats, False), (1.0, d, inter / tp, 1, False)]
    moe = m.expert_layers / m.num_layers  # the layers with experts; the rest have one dense MLP
    share, count = m.experts_per_token / m.num_experts, float(m.num_experts)
    g: list[Gemm] = [(1.0, m.num_experts, d, moe, False),  # router
                     (share, inter / tp, d, count * mats * moe, True), (share, d, inter / tp, count * moe, True)]
    if m.shared_expert_size:
        g += [(1.0, m.shared_expert_size / tp, d, mats * moe, False), (1.0, d, m.shared_expert_size / tp, moe, False)]
    if moe < 1.0:
        dense = m.dense_intermediate_size / tp
        g += [(1.0, dense, d, mats * (1 - moe), False), (1.0, d, dense, 1 - moe, False)]
    return g


def _gemm_times(workload: Workload, gpu_figures: HardwareFigures, rate: float, bw: float, tokens: float,
                head_rows: float, *, train: bool) -> tuple[float, float]:
    """(forward, backward) seconds of all matrix products of one step on one GPU.

    MoE experts run as grouped products (transformers >= 5, torch._grouped_mm), which autocast does not
    cover: with fp32 master weights (mixed precision) they run in fp32 on CUDA cores, at the FP32 rate
    (H100 profiles of mixed Mixtral steps: 75-80 % of GPU time in fp32 SIMT GEMMs at ~50 TFLOP/s, 0.75 of
    the FP32 peak, with no sign of the tensor-core kernels' wave and K-ramp losses)."""
    m = workload.model
    tp = workload.tensor_parallel
    sms = gpu_figures.compute_units
    eb = _act_bytes(workload)
    frozen = workload.is_adapter
    expert_fp32 = _regime(workload) == "mixed" and m.num_experts > 1
    fp32_peak = gpu_figures.peak_tflops("fp32")
    peak = gpu_figures.peak_tflops(workload.math_dtype)
    expert_rate = rate * fp32_peak / peak if expert_fp32 and fp32_peak and peak else rate

    def gt(mm: float, n: float, k: float, expert: bool = False) -> float:
        if expert and expert_fp32:  # SIMT kernels: FMA-bound, small tiles, several per SM: no wave or K ramp
            return max(2.0 * mm * n * k / expert_rate, 4.0 * (mm * k + n * k + mm * n) / bw)
        return kernels.gemm_time(mm, n, k, rate=rate, bandwidth=bw, sms=sms, elem_bytes=eb)

    weight_bytes = workload.quant_bits_per_weight / 8.0 if workload.quant_format != "none" else eb

    def many(count: float, mm: float, n: float, k: float, expert: bool) -> float:
        """`count` products of one shape: a MoE layer's experts on tensor cores as one grouped launch (the
        weights of the experts some token reached), anything else one product after another."""
        if not expert or expert_fp32:
            return count * gt(mm, n, k, expert)
        reached = count * m.experts_reached(tokens)
        return kernels.grouped_gemm_time(count, mm, n, k, rate=rate, bandwidth=bw, sms=sms, elem_bytes=eb,
                                         weight_groups=reached, weight_bytes=weight_bytes)

    fwd = bwd = 0.0
    for share, n, k, count, expert in _layer_gemms(m, tp):
        t = share * tokens
        fwd += many(count, t, n, k, expert)
        if train:
            bwd += many(count, t, k, n, expert) + (0.0 if frozen else many(count, n, k, t, expert))
    fwd *= m.num_layers
    bwd *= m.num_layers
    if m.kind == "decoder" and m.vocab_size:
        v = m.vocab_size / tp
        fwd += gt(head_rows, v, m.hidden_size)
        if train:
            bwd += gt(head_rows, m.hidden_size, v) + (0.0 if frozen else gt(v, m.hidden_size, head_rows))
    return fwd, bwd


def _elementwise_fwd(workload: Workload, tokens: float) -> float:
    """Bytes the elementwise kernels of one forward move on one GPU (traffic.py)."""
    m = workload.model
    a = _act_bytes(workload)
    mixed = _regime(workload) == "mixed"
    per = traffic.forward_bytes_per_token_layer(m, a=a, mixed=mixed, tp=workload.tensor_parallel)
    if workload.quant_format == "int8" and workload.mode in (Mode.INFERENCE, Mode.SCORING):  # bitsandbytes LLM.int8()
        per += traffic.int8_linear_bytes_per_token_layer(m, tp=workload.tensor_parallel)
    norm_final = 2 * (4.0 if mixed else a) * m.hidden_size * 4
    return tokens * (m.num_layers * per + norm_final)


def _moved_train(workload: Workload, mem: MemoryBreakdown) -> float:
    """Bytes the elementwise kernels, the loss and the optimizer of one training step move on one GPU."""
    m = workload.model
    tp = workload.tensor_parallel
    tokens = float(workload.micro_batch * workload.seq)
    mixed = _regime(workload) == "mixed"
    if not m.is_transformer:
        return (1 + cal.BWD_FACTOR) * 2 * mem.get("activations") + traffic.optimizer_bytes_per_param(
            BYTES_PER_DTYPE[workload.weight_dtype], workload.optimizer, mixed) * m.num_params
    fwd = _elementwise_fwd(workload, tokens)
    moved = fwd * (1 + cal.BWD_FACTOR + (1 if workload.checkpointing else 0))
    if m.kind == "decoder":
        moved += _logit_bytes(m, cal.LOSS_BYTES_PER_LOGIT, backward=True) * tokens * m.vocab_size / tp
    if workload.is_adapter:
        ad = traffic.adapter_bytes_per_token_layer(m, a=_act_bytes(workload), targets=workload.lora_targets, tp=tp,
                                                   amp=workload.mixed_precision)
        moved += ad * tokens * m.num_layers * (1 + cal.BWD_FACTOR + (1 if workload.checkpointing else 0))
        return moved + traffic.optimizer_bytes_per_param(4.0, "adamw", False) * lora_params(workload) / tp
    p = m.num_params / tp
    return moved + traffic.optimizer_bytes_per_param(BYTES_PER_DTYPE[workload.weight_dtype], workload.optimizer,
                                                     mixed) * p


def _logit_bytes(m: Any, loss_bytes: float, *, backward: bool) -> float:
    """Bytes per logit of the loss, plus Gemma 2's soft-capping (its backward moves twice as much)."""
    cap = cal.SOFTCAP_BYTES_PER_LOGIT * (1 + cal.BWD_FACTOR if backward else 1) if m.logit_softcap else 0.0
    return loss_bytes + cap


_overlap = overlap  # the rule lives with the host's dispatch (dispatch.py)


def sample_unit(kind: str) -> str | None:
    """What one sample of a model that does not generate text is, for its rate: a ViT counts images and an
    encoder sequences (their tokens per second say little to a user); None for a decoder, counted in tokens."""
    return {"vision": "images", "encoder": "sequences"}.get(kind)


def estimate_compute(workload: Workload, gpu_figures: HardwareFigures, efficiency: Efficiency | None = None, *,
                     engine: str | None = None) -> ComputeEstimate:
    """Time of the workload on `workload.num_gpus` GPUs described by `gpu_figures` (module docstring).

    `engine` is how inference runs: "eager" (PyTorch / Hugging Face eager, the host dispatches every
    op) or "graphs" (CUDA graphs / a compiled engine, the default); training is always eager PyTorch."""
    workload = workload.validate()
    if workload.model.is_traced:
        from gpuadvisor.estimate.graph_estimate import graph_compute

        return graph_compute(workload, gpu_figures, efficiency)
    engine = engine_profile(engine or DEFAULT_ENGINE).name
    efficiencies = (efficiency or Efficiency()).validate()
    mfu, bw_eff = efficiencies.for_hardware(gpu_figures)
    peak = gpu_figures.peak_tflops(workload.math_dtype)
    notes = [f"estimate: large matmuls at {mfu:.0%} of {gpu_figures.source} peak{gpu_figures.matmul_reach_note()}, "
             f"{bw_eff:.0%} of {gpu_figures.source} bandwidth{gpu_figures.bandwidth_reach_note()}; smaller ones lose "
             "to wave quantization and launch costs"]
    if not peak or not gpu_figures.bandwidth_gbs:
        return ComputeEstimate(mode=workload.mode, time_s=None, mfu=mfu, bandwidth_efficiency=bw_eff,
                               hardware_source=gpu_figures.source,
                               notes=(f"{gpu_figures.name}: no throughput figures in the catalog",))
    rate = peak * 1e12 * mfu * gpu_figures.dtype_reach(workload.math_dtype)  # large-GEMM FLOP/s per GPU
    bw = gpu_figures.bandwidth_gbs * 1e9 * bw_eff
    link = link_bytes_s(gpu_figures, efficiencies.interconnect)
    m = workload.model
    tp, dp = workload.tensor_parallel, workload.data_parallel
    a = _act_bytes(workload)
    mem = estimate_memory(workload)
    causal = m.kind == "decoder"
    hd = m.head_dim or 64

    if workload.mode not in (Mode.INFERENCE, Mode.SCORING):
        tokens_gpu = workload.micro_batch * workload.seq  # per data-parallel rank
        if m.is_transformer:
            fwd, bwd = _gemm_times(workload, gpu_figures, rate, bw, tokens_gpu, tokens_gpu, train=True)
            layers = m.num_layers * m.attention_share(workload.seq, cal.ATTN_WINDOW_TILE)  # sliding windows
            width = int(m.attention_width) // tp
            attn = kernels.attention_time(tokens_gpu, workload.seq, width, hd, layers, causal=causal,
                                          rate=rate, backward=True)
            if workload.checkpointing:
                fwd *= 2
                attn += kernels.attention_time(tokens_gpu, workload.seq, width, hd, layers,
                                               causal=causal, rate=rate)
            t_compute = fwd + bwd + attn
        else:
            t_compute = training_flops_per_token(workload) * workload.micro_batch / tp / rate
        t_mem = _moved_train(workload, mem) / bw
        device = t_compute + t_mem
        host = (train_host_s(workload) * host_op_scale(gpu_figures)
                * (cal.DTENSOR_HOST_FACTOR if is_dtensor(workload) else 1.0))
        comm = 0.0
        if dp > 1:
            grad_bytes = m.num_params / tp * (2.0 if workload.compute_dtype != "fp32" else 4.0)
            if workload.is_adapter:
                grad_bytes = lora_params(workload) / tp * 4.0
            comm += gradient_allreduce_s(grad_bytes, dp, gpu_figures, link)
            if Sharding(workload.sharding).stage >= 3 and workload.mode == Mode.TRAINING:
                ranks = shard_ranks(workload)  # HSDP gathers inside a node
                comm += 2.0 * (ranks - 1) / ranks * m.num_params / tp * a / link  # gathers fwd + bwd
        if tp > 1 and m.is_transformer:
            comm += 4 * m.num_layers * tokens_gpu * m.hidden_size * a * 2.0 * (tp - 1) / tp / link
        ideal = _overlap(host, device)
        step = ideal + comm
        global_tokens = workload.batch * workload.seq
        steps = max(1.0, workload.train_tokens / global_tokens) if workload.train_tokens else 1.0
        if workload.train_tokens:
            notes.append(f"{workload.train_tokens:.3g} tokens = {steps:,.0f} steps of {global_tokens:,} tokens")
        reasons = low_confidence_reasons(workload, host / step if step else 0.0, gpu_figures=gpu_figures)
        flops_step = training_flops_per_token(workload) * global_tokens
        bound = "host" if host > device else ("compute" if t_compute >= t_mem + comm else "memory")
        unit = sample_unit(m.kind)
        return ComputeEstimate(
            mode=workload.mode, time_s=step * steps, step_time_s=step, tokens_per_s=global_tokens / step,
            unit=unit, samples_per_s=workload.batch / step if unit else None,
            steps=steps, flops_per_step=flops_step, bound=bound, comm_time_s=comm,
            scaling_efficiency=ideal / step if step else 1.0, mfu=mfu, bandwidth_efficiency=bw_eff,
            achieved_mfu=flops_step / workload.num_gpus / step / (peak * 1e12), host_time_s=host,
            hardware_source=gpu_figures.source, confidence=Confidence.of(reasons), engine=StepEngineName.EAGER,
            notes=(*notes, *reasons), low_confidence_reasons=reasons,
        )

    # inference: prefill of the prompts (last-position logits only), then decode; scoring: one
    # forward with the logits of every position and the loss over them
    b = workload.micro_batch
    tokens = b * workload.seq
    scoring = workload.mode == Mode.SCORING
    if m.is_transformer:
        fwd, _ = _gemm_times(workload, gpu_figures, rate, bw, tokens, tokens if scoring else b, train=False)
        windowed = m.num_layers * m.attention_share(workload.seq, cal.ATTN_WINDOW_TILE)
        attn = kernels.attention_time(tokens, workload.seq, int(m.attention_width) // tp, hd, windowed,
                                      causal=causal, rate=rate)
        pf_compute = fwd + attn
        pf_bytes = _elementwise_fwd(workload, tokens)
        if scoring and m.kind == "decoder":
            pf_bytes += _logit_bytes(m, cal.LOSS_FWD_BYTES_PER_LOGIT, backward=False) * tokens * m.vocab_size / tp
    else:
        pf_compute = forward_flops_per_token(workload) * b / tp / rate
        pf_bytes = mem.get("weights") + mem.get("activations")
    pf_mem = pf_bytes / bw
    pf_host = prefill_host_s(workload, engine, gpu_figures)
    tp_comm = (2 * m.num_layers * tokens * m.hidden_size * a * 2.0 * (tp - 1) / tp / link) if tp > 1 else 0.0
    pf_device = pf_compute + pf_mem
    if workload.quant_format == "int8" and pf_host > 0:
        # bitsandbytes LLM.int8() synchronizes ~4.7 times per linear (H100 profile: 915 syncs for 196
        # linears): the host cannot run ahead, so its host time adds to the GPU time
        pf_host += bnb_int8_host_s(workload, gpu_figures)
        prefill = pf_host + pf_device + tp_comm
    else:
        prefill = _overlap(pf_host, pf_device) + tp_comm
    pf_bound = "host" if pf_host > pf_device else ("compute" if pf_compute >= pf_mem else "memory")
    decode_step_s = decode_tps = decode_bound = None
    total = prefill
    host_share = pf_host / prefill if prefill else 0.0
    if m.kind == "decoder" and workload.gen_tokens and not scoring:
        ctx = workload.seq + workload.gen_tokens // 2  # mean context while generating
        d = decode_step(workload, gpu_figures, batch=b, context=ctx, engine=engine, efficiency=efficiencies)
        notes += decode_notes(workload, gpu_figures, batch=b, context=ctx, engine=engine, efficiency=efficiencies)
        if d is not None:
            decode_step_s, decode_bound = d.time_s, d.bound
            decode_tps = b * dp / d.time_s
            total = prefill + workload.gen_tokens * d.time_s
            host_share = max(host_share, d.host_s / d.time_s)
        notes.append(f"decode ({engine}): reads every active weight and the KV cache once per generated token, "
                     "plus per-kernel and host overheads of the engine")
    reasons = low_confidence_reasons(workload, host_share, eager=engine == StepEngineName.EAGER,
                                     gpu_figures=gpu_figures)
    flops = forward_flops_per_token(workload) * workload.batch * workload.seq
    unit = sample_unit(m.kind)
    return ComputeEstimate(
        mode=workload.mode, time_s=total, prefill_time_s=prefill, prefill_tokens_per_s=tokens * dp / prefill,
        unit=unit, samples_per_s=b * dp / prefill if unit else None,
        step_time_s=prefill if unit else None,
        prefill_bound=pf_bound, decode_step_s=decode_step_s, decode_tokens_per_s=decode_tps,
        decode_bound=decode_bound, bound=decode_bound or pf_bound, comm_time_s=tp_comm,
        scaling_efficiency=1.0 if tp == 1 else (prefill - tp_comm) / prefill,
        mfu=mfu, bandwidth_efficiency=bw_eff, achieved_mfu=flops / workload.num_gpus / prefill / (peak * 1e12),
        host_time_s=pf_host, hardware_source=gpu_figures.source, confidence=Confidence.of(reasons), engine=engine,
        notes=(*notes, *reasons), flops_per_step=flops, low_confidence_reasons=reasons,
    )
