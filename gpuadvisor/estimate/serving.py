"""Serving figures of a decoder on a GPU configuration: pure functions, no torch, no UI.

A decode step moves every active weight and the KV cache of the batch in flight once, and does
2 x active params FLOPs per sequence, so its time is max(bytes / bandwidth, FLOPs / compute)
plus a per-step overhead that depends on the engine: `eager` (Hugging Face transformers eager
generate(): the host launches every kernel every step, so overhead grows with the layer count)
or `graphs` (CUDA graphs or a compiled engine: vLLM, TensorRT-LLM, SGLang, where the step is
one graph launch). From the step time:

* time per output token (TPOT) = decode step time at the batch in flight;
* per-user tok/s = 1 / TPOT; aggregate tok/s = concurrency / TPOT;
* time to first token (TTFT) = prefill time of one prompt (no queueing);
* KV capacity = (memory - weights - activations - reserve) / KV bytes per token, in paged
  16-token blocks; concurrent sequences that fit = capacity / blocks per sequence.

Every figure is an estimate; the engine profiles were calibrated on an H100 (BENCHMARKS.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpuadvisor.errors import UserError
from gpuadvisor.estimate.compute import estimate_compute, forward_flops_per_token
from gpuadvisor.estimate.hardware import Efficiency, HardwareFigures
from gpuadvisor.estimate.memory import CUDA_CONTEXT_BYTES, estimate_memory, kv_cache_bytes
from gpuadvisor.workload import Workload

KV_BLOCK_TOKENS = 16  # paged attention block (vLLM's default)
SERVING_RESERVE = 0.10  # fraction of card memory an engine leaves free (vLLM gpu_memory_utilization 0.9)


@dataclass(frozen=True)
class EngineProfile:
    """How far an inference engine is from the roofline: a fixed and a per-layer host overhead
    per decode step, and the fraction of bandwidth its decode kernels reach."""

    name: str
    label: str
    step_overhead_s: float
    layer_overhead_s: float
    bandwidth_efficiency: float  # of the datasheet bandwidth (measured: see Efficiency)

    def overhead_s(self, num_layers: int) -> float:
        return self.step_overhead_s + self.layer_overhead_s * num_layers

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "label": self.label, "step_overhead_s": self.step_overhead_s,
                "layer_overhead_s": self.layer_overhead_s, "bandwidth_efficiency": self.bandwidth_efficiency}


ENGINES: dict[str, EngineProfile] = {
    "eager": EngineProfile("eager", "Hugging Face transformers eager generate()", 4e-3, 1.2e-3, 0.80),
    "graphs": EngineProfile("graphs", "CUDA graphs / compiled engine (vLLM, TensorRT-LLM, SGLang)", 1e-4, 1e-5, 0.80),
}
DEFAULT_ENGINE = "graphs"


def engine_profile(name: str) -> EngineProfile:
    try:
        return ENGINES[name]
    except KeyError:
        raise UserError(f"unknown engine {name!r} (one of {', '.join(ENGINES)})") from None


@dataclass(frozen=True)
class ServingEstimate:
    """What a user of a serving deployment sees; all figures are estimates."""

    engine: str
    concurrency: int
    prompt_tokens: int
    output_tokens: int
    ttft_s: float | None
    tpot_s: float | None
    per_user_tokens_per_s: float | None
    aggregate_tokens_per_s: float | None
    kv_bytes_per_token: float
    kv_capacity_tokens: int
    max_concurrent_seqs: int  # sequences of prompt + output tokens that fit at once
    fits: bool  # weights fit and `concurrency` sequences fit in the KV capacity
    bound: str | None  # "memory", "compute" or "overhead": what dominates a decode step
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["notes"] = list(self.notes)
        d["estimate"] = True
        return d


def decode_step_time(
    w: Workload, hw: HardwareFigures, *, batch: int, context: int, engine: str = DEFAULT_ENGINE,
    efficiency: Efficiency | None = None,
) -> tuple[float, str] | None:
    """(seconds, bound) of one decode step of `batch` sequences at `context` tokens each, per GPU
    group of `w.tensor_parallel`; None where the card has no throughput figures."""
    prof = engine_profile(engine)
    eff = (efficiency or Efficiency()).validate()
    mfu, bw_eff = eff.for_source(hw.source)
    peak = hw.peak_tflops(w.compute_dtype)
    if not peak or not hw.bandwidth_gbs:
        return None
    m = w.model
    tp = w.tensor_parallel
    wb = estimate_memory(w).get("weights")
    active = wb * (m.active_params / m.num_params if m.num_params else 1.0)
    kv = kv_cache_bytes(w.with_(batch=batch * w.data_parallel), context=context) if m.kind == "decoder" else 0.0
    t_mem = (active + kv) / (hw.bandwidth_gbs * 1e9 * bw_eff)
    t_comp = forward_flops_per_token(w, context=context) * batch / tp / (peak * 1e12 * mfu)
    t_over = prof.overhead_s(m.num_layers)
    step = max(t_mem, t_comp) + t_over
    bound = "overhead" if t_over > max(t_mem, t_comp) else ("memory" if t_mem >= t_comp else "compute")
    return step, bound


def estimate_serving(
    w: Workload, hw: HardwareFigures, *, concurrency: int, prompt_tokens: int, output_tokens: int,
    engine: str = DEFAULT_ENGINE, efficiency: Efficiency | None = None,
) -> ServingEstimate:
    """Serving figures for `concurrency` users, each with a prompt and an answer (module docstring)."""
    if concurrency < 1 or prompt_tokens < 1 or output_tokens < 1:
        raise UserError("concurrency, prompt and output tokens must each be at least 1")
    w = w.with_(mode="inference", batch=concurrency * w.data_parallel, seq_len=prompt_tokens,
                gen_tokens=output_tokens).validate()
    context = prompt_tokens + output_tokens
    one = w.with_(batch=w.data_parallel, seq_len=context, gen_tokens=0)
    kv_per_token = kv_cache_bytes(one, context=1)
    mem = estimate_memory(w.with_(batch=w.data_parallel))  # weights + one sequence's transients
    cap = hw.memory_bytes
    notes = [f"engine: {ENGINES[engine].label if engine in ENGINES else engine}"]
    if cap is None or kv_per_token <= 0:
        kv_tokens, seqs = 0, 0
    else:
        free = cap * (1 - SERVING_RESERVE) - mem.get("weights") - mem.get("activations") - CUDA_CONTEXT_BYTES
        kv_tokens = max(0, int(free // kv_per_token))
        blocks_per_seq = -(-context // KV_BLOCK_TOKENS)
        seqs = kv_tokens // KV_BLOCK_TOKENS // blocks_per_seq
    fits = cap is not None and seqs >= concurrency
    step = decode_step_time(w, hw, batch=concurrency, context=prompt_tokens + output_tokens // 2,
                            engine=engine, efficiency=efficiency)
    comp = estimate_compute(w.with_(batch=w.data_parallel, gen_tokens=0), hw, efficiency)
    if step is None:
        return ServingEstimate(engine, concurrency, prompt_tokens, output_tokens, None, None, None, None,
                               kv_per_token, kv_tokens, seqs, fits, None, (*notes, f"{hw.name}: no throughput figures"))
    tpot, bound = step
    return ServingEstimate(
        engine=engine, concurrency=concurrency, prompt_tokens=prompt_tokens, output_tokens=output_tokens,
        ttft_s=comp.prefill_time_s, tpot_s=tpot, per_user_tokens_per_s=1.0 / tpot,
        aggregate_tokens_per_s=concurrency * w.data_parallel / tpot, kv_bytes_per_token=kv_per_token,
        kv_capacity_tokens=kv_tokens, max_concurrent_seqs=seqs, fits=fits, bound=bound,
        notes=(*notes, "TTFT is one prompt's prefill with no queueing; TPOT is the decode step at the batch in flight"),
    )
