"""The time of one engine iteration: the per-step cost the scheduler simulation asks for. Pure functions.

`StepCost` is the interface (a Protocol): the seconds of one iteration that runs `prefill_tokens` prompt tokens
(chunks of one or more prompts; `prefill_pairs` is the sum over those tokens of the context each attends to) and
`decode_seqs` decoding sequences whose contexts add up to `decode_context` tokens. `RooflineStepCost` implements it
on the kernel physics of estimate/kernels.py; the op-graph cost model (estimate/opcost.py) can replace it later.

Roofline of one iteration on one GPU (a tensor-parallel rank, 1/pp of the layers):
* each linear layer's GEMM over the iteration's T tokens: max(2 T n k / rate, weight bytes x dequant passes +
  activations / bandwidth) at the rate of the weights' format (fp8 / fp4 tensor cores where the card has them, FP8
  at HardwareFigures.dtype_reach of the 16-bit share of its peak;
  llama.cpp's quantized formats on int8 tensor cores at INT8_MMQ_EFF, else dequantized to 16 bit), with the K ramp
  and no wave quantization (cuBLASLt / CUTLASS split-K and stream-K keep short GEMMs' SMs busy);
* attention: prefill FLOPs (4 x pairs x q_dim) at kernels.attention_rate; decode reads the KV cache once;
* elementwise kernels: the eager byte count of traffic.py x ELEMENTWISE_SHARE (the engines fuse them);
* the LM head for the rows that sample a token; kernel floors per layer; tensor-parallel all-reduces (two a layer,
  ring bytes over the link plus a latency); the engine's host time per iteration.
* data-parallel attention (`dp_attention`): each rank keeps only its requests' KV cache and runs the attention's
  projections with whole weights on its 1/tp of the tokens; the MLPs stay tensor-parallel over all of them (an
  all-gather and a reduce-scatter a layer, the all-reduces' bytes). The ranks' schedulers are one of tp times the
  engine's limits (api.serve_setup), loads assumed balanced.
* the host time of the step engine the serving engine launches its steps with (`ServeEngine.launch`,
  estimate/engines.py): none for CUDA graphs; for eager dispatch (Hugging Face generate()) added to a decode
  iteration's GPU time (generate() synchronizes every step) and overlapped with a prefill's (dispatch.overlap), as
  the single-request path costs them.
* with tensor parallelism, the scheduler's hand-off of the iteration to its workers (`tp_handoff_s_per_iter`).
* the engine's host time per running sequence (`host_s_per_seq`): after the GPU's step, or beside it where the
  engine overlaps the two (`host_seq_overlap`: the longer sets the iteration); and, in a served run, the front-end's
  time to stream each running sequence's token (`stream_s_per_seq`), in a process of its own, which paces the
  iteration where it is the slower.

Pipeline parallelism (pp > 1) as it runs: the layers are split as vLLM splits them (`pipeline_split`: the
remainder of layers % pp goes to the stages before the last, which holds the final norm and the LM head) and the
engine keeps pp micro-batches in flight (vLLM: one scheduled batch per stage; TensorRT-LLM's PyTorch executor:
pp micro-batches, PR #3878). One scheduler of the simulation is one micro-batch; its iteration runs through every
stage in turn, each stage sending its hidden states to the next over the link that joins the cards (the catalog's
interconnect figure: NVLink, else PCIe-class) plus `p2p_latency_s`, and the sampled tokens go back from the last
stage to the first (one more hop) before the micro-batch can run again. A stage is busy for its own GPU time plus
its rank's host time per iteration; the time between two iterations of one micro-batch is the longer of (a) the
cycle: every stage's busy time, the sends and the return, and (b) pp x the busiest stage's busy time (every
micro-batch passes the slowest stage: the imbalance of an uneven split and of the LM head on the last stage).
The difference between the two and pp x a mean stage is the bubble.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Protocol

from gpuadvisor.estimate import calibration as cal
from gpuadvisor.estimate import kernels, traffic
from gpuadvisor.estimate.collectives import link_bytes_s
from gpuadvisor.estimate.compute import _layer_gemms
from gpuadvisor.estimate.dispatch import overlap
from gpuadvisor.estimate.engines import architecture_kernels, engine_profile, prefill_dispatch_s
from gpuadvisor.estimate.hardware import Efficiency, HardwareFigures
from gpuadvisor.estimate.serve.profiles import ServeEngine
from gpuadvisor.workload import QUANT_FORMATS

#: bits per weight of the weight formats a serving estimate takes: the quantized formats the rest of the estimator
#: takes too are read from workload.QUANT_FORMATS (one table, its sources there); the 16-bit dtypes and the formats
#: only serving takes are here (block scales included: NVFP4 4 bits + fp8 scale per 16, MXFP4 + e8m0 scale per 32,
#: GGUF Q4_0 + fp16 scale per 32)
WEIGHT_BITS = {"bf16": 16.0, "fp16": 16.0, "fp8": QUANT_FORMATS["fp8"][0], "fp4": 4.5, "nvfp4": 4.5, "mxfp4": 4.25,
               **{name: QUANT_FORMATS[name][0] for name in ("int8", "awq", "gptq")}, "q4_0": 4.5,
               **{name: QUANT_FORMATS[name][0] for name in ("q4_k_m", "q5_k_m", "q8_0")}}
KV_BYTES = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "q8_0": 1.0625, "fp4": 0.5625}
GGUF = ("q4_0", "q4_k_m", "q5_k_m", "q8_0")
WEIGHT_ONLY_INT4 = ("awq", "gptq")


class StepCost(Protocol):
    """Seconds of one engine iteration (module docstring)."""

    def iteration_s(self, prefill_tokens: int, prefill_pairs: float, decode_seqs: int,
                    decode_context: float) -> float: ...


def physics(engine_data: dict[str, Any] | None = None) -> dict[str, float]:
    from gpuadvisor.estimate.serve.profiles import _raw_physics

    return _raw_physics() if engine_data is None else engine_data


@dataclass
class RooflineStepCost:
    """StepCost on kernel physics for one model, card, engine, weight and KV format, and layout (tp, pp)."""

    model: Any  # ModelSpec
    gpu_figures: HardwareFigures
    engine: ServeEngine
    weights: str = "bf16"
    kv_dtype: str = "bf16"
    tp: int = 1
    pp: int = 1
    efficiency: Efficiency | None = None
    phys: dict[str, float] = field(default_factory=physics)
    # attention data-parallel over the tensor-parallel ranks (Layout.dp_attention): each rank keeps its own
    # requests' KV cache and runs the attention's projections whole on its share of the tokens
    dp_attention: bool = False
    _gemm_cache: dict[int, float] = field(default_factory=dict, repr=False)
    expert_rate_scale: float = field(default=1.0, init=False)  # the MoE experts' GEMM rate against `rate`

    def __post_init__(self) -> None:
        m = self.model
        efficiencies = (self.efficiency or Efficiency()).validate()
        mfu, bw_eff = efficiencies.for_hardware(self.gpu_figures)
        self.bw = (self.gpu_figures.bandwidth_gbs or 0.0) * 1e9 * bw_eff
        bf16 = (self.gpu_figures.peak_tflops("bf16") or 0.0) * 1e12 * mfu
        self.attn_rate = bf16
        self.rate = bf16 * self.engine.gemm_eff
        source = "measured" if self.gpu_figures.source == "measured" else "datasheet"
        # what the GEMM rate rests on, for the answer (issue 34: every answer says which figures it used)
        self.rate_basis = f"bf16 {source} peak x {mfu:.2f}"
        w = self.weights
        if w == "fp8" and self.gpu_figures.tflops.get("fp8"):
            reach = self.gpu_figures.dtype_reach("fp8")
            self.rate = self.gpu_figures.tflops["fp8"] * 1e12 * mfu * reach * self.engine.gemm_eff
            self.rate_basis = f"fp8 {source} peak x {mfu:.2f}" + (f" x FP8 reach {reach:g}" if reach != 1.0 else "")
        elif w == "mxfp4" and not self.gpu_figures.tflops.get("fp4"):
            # no FP4 tensor cores (Hopper, Ampere): the MXFP4 weights are unpacked in the kernel and multiplied in
            # bf16 (vLLM's w4a16 MoE: triton_kernels' matmul_ogs on Hopper, Marlin on Ampere): the bf16 rate, the
            # experts' grouped GEMMs at the share of it those kernels reach (physics mxfp4_moe_eff)
            self.expert_rate_scale = self.phys["mxfp4_moe_eff"]
            self.rate_basis += (f" (MXFP4 weights unpacked to bf16 in the kernel; the experts' GEMMs x "
                                f"{self.expert_rate_scale:g})")
        elif w in ("fp4", "nvfp4", "mxfp4"):
            peak = self.gpu_figures.tflops.get("fp4") or self.gpu_figures.tflops.get("fp8")
            if peak:
                scale = (self.phys["fp4_mfu_scale"] if self.gpu_figures.tflops.get("fp4")
                         else self.gpu_figures.dtype_reach("fp8"))
                self.rate = peak * 1e12 * mfu * self.engine.gemm_eff * scale
                self.rate_basis = (f"{'fp4' if self.gpu_figures.tflops.get('fp4') else 'fp8'} {source} peak x "
                                   f"{mfu:.2f} x {scale:g}")
        elif w in GGUF and self.engine.int8_prefill and self.gpu_figures.tflops.get("int8"):
            self.rate = self.gpu_figures.tflops["int8"] * 1e12 * self.phys["int8_mmq_eff"]
            self.rate_basis = f"int8 {source} peak x {self.phys['int8_mmq_eff']:g} (llama.cpp's MMQ)"
        if self.engine.gemm_eff != 1.0:
            self.rate_basis += f" x the engine's {self.engine.gemm_eff:g}"
        self.gguf = w in GGUF
        # llama.cpp's MMVQ (batches up to 8) on CUDA cores: instructions per weight per extra column
        fp32_rate = (self.gpu_figures.tflops.get("fp32") or 1.0) * 0.5e12
        self.mmvq_s_per_weight = self.phys["gguf_mmvq_ops_per_weight"] / fp32_rate if self.gguf else 0.0
        self.wbytes = WEIGHT_BITS[w] / 8.0
        self.passes = self.engine.int4_dequant_passes if w in WEIGHT_ONLY_INT4 else 1.0
        self.layers = m.num_layers / self.pp  # a mean stage's
        self.stage_layers = pipeline_split(m.num_layers, self.pp)
        self.gemms = _layer_gemms(m, self.tp, dp_attention=self.dp_attention)
        kv_shards = self.tp if self.dp_attention else m.kv_shards(self.tp)  # a rank holds its requests' only
        self.kv_per_token_layer = m.kv_cache_width * KV_BYTES[self.kv_dtype] / kv_shards
        self.kv_per_token = self.kv_per_token_layer * self.layers
        self.elem_per_token_layer = (traffic.forward_bytes_per_token_layer(m, a=2.0, mixed=False, tp=self.tp)
                                     * self.phys["elementwise_share"])
        self.elem_per_token = self.elem_per_token_layer * self.layers
        self.head_bytes = (m.vocab_size * m.hidden_size / self.tp) * (0.8 if w in GGUF else 2.0)
        self.link = link_bytes_s(self.gpu_figures, efficiencies.interconnect)
        self.hd = m.head_dim or 64
        self.q_dim_gpu = m.attention_width / self.tp
        # a decoding sequence's attention FLOPs per cached token and layer on one rank (latent attention's
        # absorbed decode is compute-heavy enough to matter: ModelSpec.pair_flops)
        self.decode_pair_flops = m.pair_flops(decoding=True) / self.tp if m.mla else 0.0
        self.mixed_decode_rows = self.engine.decode_rows_on(self.gpu_figures.compute_capability)
        # kernels a layer beyond the dense Llama layer the engine's kernels_per_layer counts (MoE routing, shared
        # experts, latent attention)
        self.arch_kernels = architecture_kernels(m)
        # the step engine's host time (0 where decode replays CUDA graphs); the scheduler's own comes on top
        launch = self.engine.launch
        self.decode_host = engine_profile(launch).host_step_s(math.ceil(self.layers), self.gpu_figures)
        self.prefill_host = prefill_dispatch_s(launch, self.layers, moe=m.num_experts > 1, gpu_figures=self.gpu_figures)
        self.stage_decode_host = tuple(engine_profile(launch).host_step_s(n,
                                                                          self.gpu_figures) for n in self.stage_layers)
        self.stage_prefill_host = tuple(prefill_dispatch_s(launch, n, moe=m.num_experts > 1,
                                                           gpu_figures=self.gpu_figures)
                                        for n in self.stage_layers)
        self.p2p_latency_s = self.phys["p2p_latency_s"]

    def attended_pairs(self, start: float, tokens: float) -> float:
        """Query-key pairs of `tokens` prompt tokens after `start` cached ones (ModelSpec.attended_pairs)."""
        return float(self.model.attended_pairs(start, tokens, cal.ATTN_WINDOW_TILE))

    def kv_context(self, context: Any) -> Any:
        """K/V tokens a decoding sequence at `context` reads per layer (ModelSpec.kv_tokens)."""
        return self.model.kv_tokens(context)

    def _linear_s(self, t: int) -> float:
        """GEMMs of one layer over `t` tokens (cached by t: the simulation asks for a few hundred distinct ones)."""
        got = self._gemm_cache.get(t)
        if got is not None:
            return got
        m = self.model
        total = 0.0
        for share, n, k, count, expert in self.gemms:
            rows = share * t
            wbytes = n * k * count * self.wbytes * self.passes
            if expert:  # experts that at least one of the t tokens routes to
                wbytes *= m.experts_reached(t)
            rate = self.rate * (self.expert_rate_scale if expert else 1.0)
            comp = 2.0 * rows * n * k * count / (rate * k / (k + cal.K_RAMP)) if rows else 0.0
            mem = (wbytes + 2.0 * rows * (n + k) * count) / self.bw
            if expert:  # short expert slices stream below the bandwidth (kernels.grouped_stream_reach)
                mem /= kernels.grouped_stream_reach(k)
            if self.gguf:  # quantized blocks are unpacked in the kernel: the unpacking does not hide under the reads
                extra = (t - 1) * n * k * count * self.mmvq_s_per_weight if t <= 8 else comp
                total += mem + extra
            else:
                total += max(comp, mem)
        self._gemm_cache[t] = total
        return total

    def _head_s(self, rows: int) -> float:
        if rows <= 0:
            return 0.0
        n, k = self.model.vocab_size / self.tp, self.model.hidden_size
        rate = self.attn_rate
        return max(2.0 * rows * n * k / rate, (self.head_bytes + 2.0 * rows * (n + k)) / self.bw)

    def _stage_gpu_s(self, prefill_tokens: int, prefill_pairs: float, decode_seqs: int, decode_context: float,
                     layers: float, head_share: float, decode_width: int = 1) -> float:
        """GPU seconds of one iteration on `layers` layers; `head_share` of the LM head (1: the stage that holds
        it; 1/pp: the mean stage of the interleaved model); `decode_width` tokens per decoding sequence (a
        speculative verify step: k + 1), each sequence's KV read once."""
        t = prefill_tokens + decode_seqs * decode_width
        s = self._linear_s(t) * layers
        if prefill_pairs > 0:
            avg_ctx = prefill_pairs / max(prefill_tokens, 1)
            flops = 4.0 * prefill_pairs * self.q_dim_gpu * layers
            s += flops / kernels.attention_rate(max(avg_ctx * 2, 1.0), self.hd, self.attn_rate)
        kv_per_token = self.kv_per_token_layer * layers
        s += self._decode_attention_s(decode_context * kv_per_token / self.bw, prefill_tokens, decode_seqs,
                                      decode_context, layers)
        s += t * (self.elem_per_token_layer * layers + kv_per_token) / self.bw
        if head_share:
            s += self._head_s(decode_seqs * decode_width + (1 if prefill_tokens else 0)) * head_share
        s += ((self.engine.kernels_per_layer + self.arch_kernels) * layers + 8) * cal.KERNEL_FLOOR_S
        if self.tp > 1:
            nbytes = t * self.model.hidden_size * 2.0
            ring = 2.0 * (self.tp - 1) / self.tp * nbytes / self.link
            s += 2 * layers * (ring + self.phys["allreduce_latency_s"])
        return s

    def _decode_attention_s(self, kv_read_s: float, prefill_tokens: int, decode_seqs: int, decode_context: float,
                            layers: float) -> float:
        """The decoding sequences' attention: their KV read, or, in an iteration that also runs prompt tokens on a
        kernel that gives every query head of a decoding sequence a tile of its own (ServeEngine.decode_query_rows),
        that tile's multiply-adds where they take longer (QK^T and PV over the context, 4 FLOP per row, position
        and head dimension)."""
        if self.decode_pair_flops and decode_context > 0:  # latent attention: FlashMLA's scores over the latent
            kv_read_s = max(kv_read_s, self.decode_pair_flops * decode_context * layers / self.attn_rate)
        if not (self.mixed_decode_rows and prefill_tokens and decode_seqs and decode_context > 0):
            return kv_read_s
        flops = 4.0 * self.mixed_decode_rows * decode_context * self.q_dim_gpu * layers
        # no sequence ramp (ramp_scale 0): each tile runs over its sequence's whole context, with no causal triangle
        rate = kernels.attention_rate(decode_context / decode_seqs, self.hd, self.attn_rate, ramp_scale=0.0)
        return max(kv_read_s, flops / rate)

    def _host_s(self) -> float:
        """The scheduler's host time per iteration (and its hand-off to tensor-parallel workers)."""
        return self.engine.host_s_per_iter + (self.engine.tp_handoff_s_per_iter if self.tp > 1 else 0.0)

    def iteration_s(self, prefill_tokens: int, prefill_pairs: float, decode_seqs: int,
                    decode_context: float, decode_width: int = 1) -> float:
        t = prefill_tokens + decode_seqs
        if t <= 0:
            return 0.0
        if self.pp > 1:  # the front-end streams every micro-batch's tokens once a period
            period = self.pipeline(prefill_tokens, prefill_pairs, decode_seqs, decode_context, decode_width).period_s
            return max(period, self.engine.stream_s_per_seq * decode_seqs * self.pp)
        s = self._stage_gpu_s(prefill_tokens, prefill_pairs, decode_seqs, decode_context, self.layers, 1.0,
                              decode_width)
        # module docstring: decode adds the step engine's host time, a prefill overlaps it; then the scheduler's,
        # and its time per scheduled sequence: after the GPU's, or beside it where the engine overlaps the two
        seqs = decode_seqs + (1 if prefill_tokens else 0)
        gpu = s + self.decode_host if decode_seqs else overlap(self.prefill_host, s)
        per_seq = self.engine.host_s_per_seq * seqs
        busy = max(gpu, per_seq) if self.engine.host_seq_overlap else gpu + per_seq
        # the front-end streams every running sequence's token in a process of its own: it paces the iteration
        # where it is the slower
        paced = max(busy, self.engine.stream_s_per_seq * decode_seqs)
        if self.engine.plans_ahead:  # async scheduling: the scheduler's host time runs beside the GPU's step
            return max(paced, self._host_s())
        return paced + self._host_s()

    def head_step_s(self, decode_seqs: int, decode_context: float, width: int = 1) -> float:
        """GPU seconds of one draft step of speculative heads (EAGLE, MTP): one decoder layer over its own one
        layer of KV, and the LM head, for `decode_seqs` sequences of `width` candidate tokens each (a draft tree's
        top-k branches)."""
        return self._stage_gpu_s(0, 0.0, decode_seqs, decode_context, 1.0, 1.0, width)

    def layer_weight_bytes(self) -> float:
        """One decoder layer's weights on one GPU."""
        return sum(n * k * c for _, n, k, c, _ in self.gemms) * WEIGHT_BITS[self.weights] / 8.0

    def pipeline(self, prefill_tokens: int, prefill_pairs: float, decode_seqs: int,
                 decode_context: float, decode_width: int = 1) -> PipelineIteration:
        """One micro-batch's iteration through the pipeline's stages (module docstring)."""
        # every rank updates the micro-batch's requests with the tokens that came back before it runs it again
        host = self._host_s() + self.engine.pp_host_s_per_seq * (decode_seqs + (1 if prefill_tokens else 0))
        busy = []
        for k, layers in enumerate(self.stage_layers):
            gpu = self._stage_gpu_s(prefill_tokens, prefill_pairs, decode_seqs, decode_context, float(layers),
                                    1.0 if k == self.pp - 1 else 0.0, decode_width)
            busy.append((gpu + self.stage_decode_host[k] if decode_seqs else overlap(self.stage_prefill_host[k], gpu))
                        + host)
        hidden_bytes = (prefill_tokens + decode_seqs * decode_width) * self.model.hidden_size * 2.0
        send = hidden_bytes / self.link + self.p2p_latency_s
        return PipelineIteration(stage_busy_s=tuple(busy), send_s=send, return_s=self.p2p_latency_s,
                                 micro_batches=self.pp)

    # figures the simulation and the report need
    def weight_bytes_per_gpu(self) -> float:
        """A mean stage's weights on one GPU (the report's figure)."""
        m = self.model
        lin = sum(n * k * c for _, n, k, c, _ in self.gemms) * self.layers * WEIGHT_BITS[self.weights] / 8.0
        emb = m.vocab_size * m.hidden_size * 2.0 / self.tp * (1 if m.tied_embeddings else 2) / self.pp
        return lin + emb

    def stage_weight_bytes(self, stage: int) -> float:
        """Weights on one GPU of `stage`: its layers, the embedding on the first, the LM head on the last (a tied
        head is a copy of the embedding there)."""
        m = self.model
        if self.pp == 1:
            return self.weight_bytes_per_gpu()
        lin = (sum(n * k * c for _, n, k, c, _ in self.gemms) * self.stage_layers[stage]
               * WEIGHT_BITS[self.weights] / 8.0)
        table = m.vocab_size * m.hidden_size * 2.0 / self.tp
        return lin + (table if stage in (0, self.pp - 1) else 0.0)

    def kv_tokens_capacity(self) -> int:
        """KV tokens the deployment's model replica holds: a GPU keeps the KV of its stage's layers for every
        sequence, so the stage with the least room for them sets it (every pipeline stage: the same tokens)."""
        if self.kv_per_token <= 0:
            return 0
        cap = (self.gpu_figures.memory_gib or 0.0) * 2**30
        reserve = self.phys["activation_reserve_gib"] * 2**30
        if self.pp == 1:
            free = cap * self.engine.kv_mem_fraction - self.weight_bytes_per_gpu() - reserve
            return max(0, int(free // self.kv_per_token))
        return max(0, min(int((cap * self.engine.kv_mem_fraction - self.stage_weight_bytes(k) - reserve)
                              // (self.kv_per_token_layer * layers)) for k, layers in enumerate(self.stage_layers)))


def decode_steps_s(cost: StepCost, decode_seqs: int, decode_context: float, steps: int,
                   tokens_per_step: float = 1.0, growth: float | None = None) -> float:
    """Seconds of `steps` decode-only iterations of `decode_seqs` sequences whose contexts add up to
    `decode_context` at the first and grow by `tokens_per_step` tokens each per step (the simulation's decode runs;
    speculation: the mean accepted length), or by `growth` in all a step where the caller knows better (sliding-window
    layers stop growing past their window). RooflineStepCost's decode time is linear in the context: a closed form
    (a pipeline's and a speculating engine's, the max of lines or a sum of them: the trapezoid); any other cost,
    step by step."""
    if steps <= 0:
        return 0.0
    growth = decode_seqs * tokens_per_step if growth is None else growth
    if isinstance(cost, RooflineStepCost) and cost.pp == 1:
        per_context_token = cost.kv_per_token / cost.bw
        return (steps * cost.iteration_s(0, 0.0, decode_seqs, decode_context)
                + per_context_token * growth * steps * (steps - 1) / 2.0)
    if isinstance(cost, RooflineStepCost) or getattr(cost, "linear_in_context", False):
        first = cost.iteration_s(0, 0.0, decode_seqs, decode_context)
        last = cost.iteration_s(0, 0.0, decode_seqs, decode_context + (steps - 1) * growth)
        return steps * (first + last) / 2.0
    return sum(cost.iteration_s(0, 0.0, decode_seqs, decode_context + j * growth) for j in range(steps))


def pipeline_split(num_layers: int, stages: int) -> tuple[int, ...]:
    """Layers per pipeline stage as vLLM splits them (vllm/distributed/utils.py `get_pp_indices`): layers // stages
    each, the remainder one more each on the stages before the last, counting back from the second-to-last (the
    last holds the final norm and the LM head)."""
    parts = [num_layers // stages] * stages
    for i in range(2, num_layers % stages + 2):
        parts[-i] += 1
    return tuple(parts)


@dataclass(frozen=True)
class PipelineIteration:
    """One micro-batch's iteration through the stages: each stage's busy time (GPU and its rank's host time), the
    send of the hidden states between two stages and the return of the sampled tokens to the first."""

    stage_busy_s: tuple[float, ...]
    send_s: float
    return_s: float
    micro_batches: int

    @property
    def cycle_s(self) -> float:
        """One micro-batch through every stage and back."""
        return sum(self.stage_busy_s) + (len(self.stage_busy_s) - 1) * self.send_s + self.return_s

    @property
    def period_s(self) -> float:
        """Seconds between two iterations of one micro-batch: its cycle, or the busiest stage's turn for every
        micro-batch in flight if that is longer."""
        return max(self.cycle_s, self.micro_batches * max(self.stage_busy_s))

    @property
    def bubble(self) -> float:
        """The share of a period a mean stage waits: 1 - busy / period."""
        return 1.0 - self.micro_batches * sum(self.stage_busy_s) / len(self.stage_busy_s) / self.period_s


def ceil_div(a: int, b: int) -> int:
    return -(-a // b) if b else 0


__all__ = ["GGUF", "KV_BYTES", "WEIGHT_BITS", "PipelineIteration", "RooflineStepCost", "StepCost", "ceil_div",
           "decode_steps_s", "math", "pipeline_split"]
