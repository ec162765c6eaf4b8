"""Serving figures of a decoder on a GPU configuration under continuous batching: pure functions.

The decode step and the engine profiles live in `engines` (re-exported here). From them, for
`concurrency` sequences in flight, each with a prompt and an answer of `output_tokens`:

* TPOT (time per output token while decoding) = decode step time at that batch, at the mean context;
* continuous batching: while C sequences decode, the engine also prefills the C prompts that replace
  them, so a cycle of `output_tokens` steps takes output x TPOT + C x prefill(prompt);
  aggregate tok/s = C x output / cycle, per-user tok/s = output / cycle;
* TTFT = prefill of one prompt + one decode step already in flight (no queueing beyond that);
* KV capacity = (memory x (1 - reserve) - weights - activations - context) / KV bytes per token, in
  paged 16-token blocks; concurrent sequences that fit = blocks / blocks per sequence.

Every figure is an estimate; the engine profiles were calibrated on an H100 (docs/validation-time.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate import calibration as cal
from gpuadvisor.estimate.compute import estimate_compute
from gpuadvisor.estimate.confidence import Confidence
from gpuadvisor.estimate.engines import (
    DEFAULT_ENGINE,
    ENGINES,
    StepEngine,
    StepEngineName,
    attention_plan_s,
    decode_notes,
    decode_step,
    decode_step_time,
    engine_profile,
)
from gpuadvisor.estimate.hardware import Efficiency, HardwareFigures
from gpuadvisor.estimate.memory import estimate_memory, kv_cache_bytes
from gpuadvisor.workload import Mode, Workload

__all__ = [
    "DEFAULT_ENGINE",
    "ENGINES",
    "ServingEstimate",
    "StepEngine",
    "decode_step_time",
    "engine_profile",
    "estimate_serving",
    "kv_capacity",
]
# KV_BLOCK_TOKENS (vLLM's paged block) and SERVING_RESERVE (vLLM's gpu_memory_utilization 0.9) are in the
# calibration table
__getattr__ = cal.aliases(__name__, ("KV_BLOCK_TOKENS", "SERVING_RESERVE"))
CURVE_MAX = 256  # concurrency levels listed in the curve go up to this (or what fits)


@dataclass(frozen=True)
class ServingEstimate:
    """What a user of a serving deployment sees; all figures are estimates."""

    engine: StepEngineName
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
    bound: str | None  # "memory", "compute", "overhead" (kernel floors) or "host": what dominates a step
    notes: tuple[str, ...] = ()
    confidence: Confidence = Confidence.NORMAL  # LOW where `low_confidence_reasons` has any
    assumptions: dict[str, Any] | None = None  # engine profile, efficiencies, step parts
    curve: tuple[dict[str, float], ...] = ()  # (concurrency, tpot_s, per-user and aggregate tok/s)
    low_confidence_reasons: tuple[str, ...] = field(default=(), compare=False)  # the notes that lower confidence

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "low_confidence_reasons"}
        d["notes"] = list(self.notes)
        d["curve"] = list(self.curve)
        d["estimate"] = True
        return d


def kv_capacity(workload: Workload, gpu_figures: HardwareFigures, context: int) -> tuple[float, int, int]:
    """(KV bytes per token, KV tokens that fit, sequences of `context` tokens that fit) per GPU group,
    in paged blocks of KV_BLOCK_TOKENS (calibration table)."""
    one = workload.with_(batch=workload.data_parallel, seq_len=context, gen_tokens=0)
    kv_per_token = kv_cache_bytes(one, context=1)
    cap = gpu_figures.memory_bytes
    if cap is None or kv_per_token <= 0:
        return kv_per_token, 0, 0
    mem = estimate_memory(workload.with_(batch=workload.data_parallel))  # weights + one sequence's transients
    free = cap * (1 - cal.SERVING_RESERVE) - mem.get("weights") - mem.get("activations") - cal.CUDA_CONTEXT_BYTES
    kv_tokens = max(0, int(free // kv_per_token))
    block = int(cal.KV_BLOCK_TOKENS)
    blocks_per_seq = -(-math.ceil(workload.model.kv_tokens(context)) // block)  # a sliding window's layers keep less
    return kv_per_token, kv_tokens, kv_tokens // block // blocks_per_seq


def _cycle(tpot: float, prefill_one: float, concurrency: int, output_tokens: int) -> float:
    return output_tokens * tpot + concurrency * prefill_one


def estimate_serving(
    workload: Workload, gpu_figures: HardwareFigures, *, concurrency: int, prompt_tokens: int, output_tokens: int,
    engine: str = DEFAULT_ENGINE, efficiency: Efficiency | None = None,
) -> ServingEstimate:
    """Serving figures for `concurrency` users, each with a prompt and an answer (module docstring)."""
    if concurrency < 1 or prompt_tokens < 1 or output_tokens < 1:
        raise UserError("concurrency, prompt and output tokens must each be at least 1")
    prof = engine_profile(engine)
    engine = prof.name
    efficiencies = (efficiency or Efficiency()).validate()
    workload = workload.with_(mode=Mode.INFERENCE, batch=concurrency * workload.data_parallel, seq_len=prompt_tokens,
                gen_tokens=output_tokens).validate()
    context = prompt_tokens + output_tokens
    kv_per_token, kv_tokens, seqs = kv_capacity(workload, gpu_figures, context)
    fits = gpu_figures.memory_bytes is not None and seqs >= concurrency
    mean_ctx = prompt_tokens + output_tokens // 2
    step = decode_step(workload, gpu_figures, batch=concurrency, context=mean_ctx, engine=engine,
                       efficiency=efficiencies)
    one = estimate_compute(workload.with_(batch=workload.data_parallel, gen_tokens=0), gpu_figures, efficiencies,
                           engine=engine)
    mfu, bw_eff = efficiencies.for_hardware(gpu_figures)
    assumptions: dict[str, Any] = {
        "engine": prof.to_dict(), "matmul_efficiency": mfu, "bandwidth_efficiency": bw_eff,
        "hardware_source": gpu_figures.source, "kv_block_tokens": cal.KV_BLOCK_TOKENS,
                                   "memory_reserve": cal.SERVING_RESERVE,
        "mean_context": mean_ctx,
        "attention_plan_s": attention_plan_s(gpu_figures) if prof.plans_attention else 0.0,
        "host_fixed_s": prof.bookkeeping_s(gpu_figures),
        "host_layer_s": prof.dispatch_s(1, gpu_figures),
        "host_op_s": gpu_figures.host_op_s or cal.HOST_OP_S,
        "host_figures": "measured" if gpu_figures.host_measured else "assumed",
    }
    notes = [f"engine: {prof.label}",
             "TTFT: one prompt's prefill plus one decode step in flight; throughput counts the prefills that "
             "continuous batching interleaves with decoding"]
    if step is None or one.prefill_time_s is None:
        return ServingEstimate(engine, concurrency, prompt_tokens, output_tokens, None, None, None, None,
                               kv_per_token, kv_tokens, seqs, fits, None,
                               (*notes, f"{gpu_figures.name}: no throughput figures"),
                               assumptions=assumptions)
    assumptions["decode_step"] = step.to_dict()
    prefill_one = one.prefill_time_s
    cyc = _cycle(step.time_s, prefill_one, concurrency, output_tokens)
    curve = []
    top = min(CURVE_MAX, max(seqs, concurrency)) if gpu_figures.memory_bytes is not None else concurrency
    c = 1
    while c <= top:
        s = decode_step(workload, gpu_figures, batch=c, context=mean_ctx, engine=engine, efficiency=efficiencies)
        if s is not None:
            cy = _cycle(s.time_s, prefill_one, c, output_tokens)
            curve.append({"concurrency": c, "tpot_s": s.time_s, "per_user_tokens_per_s": output_tokens / cy,
                          "aggregate_tokens_per_s": c * workload.data_parallel * output_tokens / cy, "fits": c <= seqs})
        c *= 2
    conf_notes = list(one.low_confidence_reasons)
    notes += decode_notes(workload, gpu_figures, batch=concurrency, context=mean_ctx, engine=engine,
                          efficiency=efficiencies)
    if step.host_s >= step.time_s * cal.LOW_CONFIDENCE_HOST_SHARE and not gpu_figures.host_measured and not conf_notes:
        conf_notes.append("low confidence: decode is host-bound (eager dispatch) and this host's dispatch costs "
                          "were not measured (`gpuadvisor run` measures them)")
    return ServingEstimate(
        engine=engine, concurrency=concurrency, prompt_tokens=prompt_tokens, output_tokens=output_tokens,
        ttft_s=prefill_one + step.time_s, tpot_s=step.time_s, per_user_tokens_per_s=output_tokens / cyc,
        aggregate_tokens_per_s=concurrency * workload.data_parallel * output_tokens / cyc,
        kv_bytes_per_token=kv_per_token, kv_capacity_tokens=kv_tokens, max_concurrent_seqs=seqs, fits=fits,
        bound=step.bound, notes=(*notes, *conf_notes), confidence=Confidence.of(conf_notes),
        assumptions=assumptions, curve=tuple(curve), low_confidence_reasons=tuple(conf_notes),
    )
