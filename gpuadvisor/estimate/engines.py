"""Step engines (`--engine graphs|eager`): how one step's kernels are launched, and the time of one decode step.
Pure functions, no torch, no UI. A serving engine (serve/profiles.py's `ServeEngine`: vLLM, SGLang, ...) adds a
scheduler and its host costs on top and names the step engine it launches its steps with.

A decode step reads every active weight and the KV cache of the batch in flight, and does
2 x active params FLOPs per sequence. On the GPU it takes max(bytes / bandwidth, FLOPs / rate)
plus a floor for each of its many small kernels (KERNEL_FLOOR_S, even inside a CUDA graph). The
profiles' figures are in the calibration table (GRAPHS_*, EAGER_*; docs/calibration.md).
The engine decides the rest:

* `graphs`: CUDA graphs or a compiled engine (vLLM, TensorRT-LLM, SGLang): the step is one graph
  launch, its attention reads the KV cache once, and a layer is about 17 kernels. Calibrated with a
  CUDA-graph decode loop over a static KV cache (lab/bench_decode.py, "graphs_own").
* `eager`: Hugging Face transformers `generate()` in eager PyTorch: the host dispatches every op of
  every layer every step (0.84 ms a layer, ~85 ops at ~10 us each; the dispatch probe's measured op
  time scales it), the GPU runs behind it, and generate() synchronizes twice a step and does its
  bookkeeping (~1.5 ms). On top, PyTorch's attention on a sequence length it has not seen yet builds
  a plan where it picks cuDNN attention (its default on Hopper and Blackwell): 29-65 ms of host time
  on the H100 and H200 hosts measured, once a step because every decode step has a new length (plans are
  cached per length, so a process that decoded at these lengths before skips it). That build, not Python,
  is why generate() ran 13-20 tok/s for 1-8B models on an H100 (lab/device/sdpa_host.py: 45-57 ms
  a step with cuDNN attention, 13-15 ms without, for a 1B model). Step = fixed + plan + layers x
  per-layer host time + GPU time: in generate() the host's dispatch and the GPU's work add up rather
  than overlap. Measured with cuDNN attention off on two hosts (lab/device/eager_check.py runs F and
  G): the sum is within +-13 % on the H200 host where the larger of the two is 20-50 % short, at
  batch 8 as at 32 (the profile counts two syncs a step, so it is not a sync; which wait serializes
  them is not known). Its GPU work has about 43 kernels a layer. The dynamic cache is
  concatenated every step (K and V read and written: 2 passes) and attention reads it once: 3
  passes. That holds where the batch has no padding: transformers then passes no mask and lets SDPA
  share K and V across query heads (enable_gqa). A padded batch (prompts of different lengths)
  materializes a mask, and repeat_kv copies K and V for every query head before attention reads the
  copies: about 4 + 4g passes (g = query heads per KV head; H100 profiles of 1B, 3B and 8B decode
  steps at batch 8: 16 passes at g = 3, 20 at g = 4, against 3 without padding).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate import calibration as cal
from gpuadvisor.estimate.collectives import link_bytes_s
from gpuadvisor.estimate.compute_result import StepEngineName
from gpuadvisor.estimate.dispatch import CUDNN_ATTENTION_CC, attention_plan_s, bnb_int8_host_s, host_op_scale
from gpuadvisor.estimate.flops import forward_flops_per_token
from gpuadvisor.estimate.hardware import Efficiency, HardwareFigures
from gpuadvisor.estimate.memory import estimate_memory, kv_cache_bytes
from gpuadvisor.workload import Workload

__all__ = [
    "CUDNN_ATTENTION_CC",
    "DEFAULT_ENGINE",
    "ENGINES",
    "PLAN_RANGE",
    "DecodeStep",
    "StepEngine",
    "StepEngineName",
    "attention_plan_s",
    "decode_notes",
    "decode_step",
    "decode_step_time",
    "engine_profile",
    "host_op_scale",
    "prefill_dispatch_s",
    "prefill_host_s",
]
# figures this module used to define, now read from the calibration table
__getattr__ = cal.aliases(__name__, ("CUDNN_ATTENTION_PLAN_S", "PREFILL_HOST_OPS_FIXED", "PREFILL_HOST_OPS_MOE"))


@dataclass(frozen=True)
class StepEngine:
    """How one step's kernels are launched (module docstring): host time per step (fixed and per layer; 0 where
    a graph replays the step), GPU kernels per layer and per step, and how many times a step moves the KV cache
    (`kv_passes`; `kv_passes_padded` plus `kv_passes_per_group_padded` x g where a padded batch makes the engine
    expand K and V per query head)."""

    name: StepEngineName
    label: str
    host_fixed_s: float
    host_per_layer_s: float
    kernels_per_layer: float
    kernels_fixed: float
    kv_passes: float
    kv_passes_padded: float
    kv_passes_per_group_padded: float
    prefill_host_ops_per_layer: float  # host-dispatched ops per layer in a prefill forward (0: graphs)
    calibration: str
    plans_attention: bool = False  # pays the attention backend's per-shape plan build every step

    @property
    def host_bound_possible(self) -> bool:
        return self.host_fixed_s > 0 or self.host_per_layer_s > 0

    def bookkeeping_s(self, gpu_figures: HardwareFigures | None = None) -> float:
        """Host time of one step outside the layers and the attention plan (generate()'s own work):
        measured by the dispatch probe where the engine dispatches from the host, else the profile's."""
        if self.host_bound_possible and gpu_figures is not None and gpu_figures.eager_fixed_s is not None:
            return gpu_figures.eager_fixed_s
        return self.host_fixed_s

    def host_fixed_step_s(self, gpu_figures: HardwareFigures | None = None) -> float:
        """Host time of one step outside the layers: bookkeeping and the attention plan."""
        return self.bookkeeping_s(gpu_figures) + (attention_plan_s(gpu_figures) if self.plans_attention else 0.0)

    def dispatch_s(self, num_layers: int, gpu_figures: HardwareFigures | None = None) -> float:
        """Host time to dispatch the layers' ops: measured per layer by the dispatch probe (generate()
        on this host), else the calibration host's figure scaled by this host's op time."""
        if not self.host_per_layer_s:
            return 0.0
        if gpu_figures is not None and gpu_figures.eager_layer_s:
            return gpu_figures.eager_layer_s * num_layers
        return self.host_per_layer_s * num_layers * host_op_scale(gpu_figures)

    def host_step_s(self, num_layers: int, gpu_figures: HardwareFigures | None = None) -> float:
        """Host time of one step: fixed, attention plan (where the backend builds one) and dispatch."""
        return self.host_fixed_step_s(gpu_figures) + self.dispatch_s(num_layers, gpu_figures)

    def kv_multiplier(self, num_heads: int, num_kv_heads: int, *, padded: bool = False) -> float:
        if not padded:
            return self.kv_passes
        g = num_heads / num_kv_heads if num_kv_heads else 1.0
        return self.kv_passes_padded + self.kv_passes_per_group_padded * g

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def _profile(engine: StepEngineName) -> StepEngine:
    """An engine's profile, built from the calibration table at every call (so overrides apply)."""
    if engine == StepEngineName.EAGER:
        return StepEngine(
            StepEngineName.EAGER, "Hugging Face transformers eager generate()", host_fixed_s=cal.EAGER_HOST_FIXED_S,
            host_per_layer_s=cal.EAGER_HOST_PER_LAYER_S, kernels_per_layer=cal.EAGER_KERNELS_PER_LAYER,
            kernels_fixed=cal.EAGER_KERNELS_FIXED, kv_passes=cal.EAGER_KV_PASSES,
            kv_passes_padded=cal.EAGER_KV_PASSES_PADDED,
            kv_passes_per_group_padded=cal.EAGER_KV_PASSES_PER_GROUP_PADDED,
            prefill_host_ops_per_layer=cal.EAGER_PREFILL_HOST_OPS_PER_LAYER,
            calibration="H100 SXM + Xeon host, PyTorch 2.11, transformers 5.17: generate() of 0.5B-8B models, batch "
                        "1-64; attention plan and op dispatch measured on the host where they apply (dispatch probe)",
            plans_attention=True,
        )
    # a graph replays the whole step: no host time, and attention reads the KV cache once
    return StepEngine(
        StepEngineName.GRAPHS, "CUDA graphs / compiled engine (vLLM, TensorRT-LLM, SGLang)", host_fixed_s=0.0,
        host_per_layer_s=0.0, kernels_per_layer=cal.GRAPHS_KERNELS_PER_LAYER, kernels_fixed=cal.GRAPHS_KERNELS_FIXED,
        kv_passes=1.0, kv_passes_padded=1.0, kv_passes_per_group_padded=0.0, prefill_host_ops_per_layer=0.0,
        calibration="H100 SXM, PyTorch 2.11: one decode step captured in a CUDA graph, 0.5B-8B, batch 1-64",
    )


class _Engines(Mapping[str, StepEngine]):
    """The engine profiles by name, read from the calibration table on every lookup."""

    def __getitem__(self, name: str) -> StepEngine:
        try:
            return _profile(StepEngineName(name))
        except ValueError:
            raise KeyError(name) from None

    def __iter__(self) -> Iterator[str]:
        return iter(StepEngineName.values())

    def __len__(self) -> int:
        return len(StepEngineName)


ENGINES: Mapping[str, StepEngine] = _Engines()
# the dispatch probe, 2026-11-23
PLAN_RANGE = "29-65 ms on the H100 and H200 hosts measured, varying up to 2x within one run"


DEFAULT_ENGINE = StepEngineName.GRAPHS


def engine_profile(name: str) -> StepEngine:
    try:
        return ENGINES[name]
    except KeyError:
        raise UserError(f"unknown engine {name!r} (one of {', '.join(ENGINES)})") from None


def _touched_weight_bytes(workload: Workload, batch: int) -> float:
    """Weight bytes a step of `batch` sequences reads: all dense weights, and for MoE the experts
    that at least one token routes to (expected value under uniform routing)."""
    m = workload.model
    wb = estimate_memory(workload).get("weights")
    if not m.is_transformer or m.num_experts <= 1 or not m.num_params:
        return wb
    per_param = wb / m.num_params
    experts = m.routed_expert_params
    return per_param * (m.num_params - experts + experts * m.experts_reached(batch))


def architecture_kernels(m: Any) -> float:
    """Kernels the mean layer of a decode step launches beyond a dense Llama layer's (what the engine profiles'
    kernels a layer were counted on): a MoE layer's routing (MOE_LAYER_KERNELS) and shared expert
    (SHARED_EXPERT_KERNELS), latent attention's extra products and norms (MLA_LAYER_KERNELS)."""
    if not getattr(m, "is_transformer", False):
        return 0.0
    moe = m.expert_layers / m.num_layers if m.num_experts > 1 else 0.0
    extra = moe * (cal.MOE_LAYER_KERNELS + (cal.SHARED_EXPERT_KERNELS if m.shared_expert_size else 0))
    return extra + (cal.MLA_LAYER_KERNELS if m.mla else 0)


@dataclass(frozen=True)
class DecodeStep:
    """One decode step's time and its parts (seconds), per GPU group of the tensor-parallel degree."""

    time_s: float
    bound: str  # "memory" | "compute" | "overhead" (kernel floors) | "host" (eager dispatch)
    memory_s: float
    compute_s: float
    kernel_floor_s: float
    host_s: float
    comm_s: float
    kv_multiplier: float = 1.0  # times the engine moves the KV cache per step
    kernels_per_layer: float = 0.0  # the engine's, and the architecture's beyond a Llama layer's (architecture_kernels)

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def decode_step(workload: Workload, gpu_figures: HardwareFigures, *, batch: int, context: int, engine: str,
                efficiency: Efficiency | None = None, padded: bool = False) -> DecodeStep | None:
    """A decode step of `batch` sequences at `context` tokens each (module docstring); None where the
    card has no throughput figures. `padded`: prompts of different lengths, padded to one."""
    prof = engine_profile(engine)
    efficiencies = (efficiency or Efficiency()).validate()
    mfu, bw_eff = efficiencies.for_hardware(gpu_figures)
    peak = gpu_figures.peak_tflops(workload.math_dtype)
    if not peak or not gpu_figures.bandwidth_gbs:
        return None
    m = workload.model
    tp = workload.tensor_parallel
    bw = gpu_figures.bandwidth_gbs * 1e9 * bw_eff
    weights = _touched_weight_bytes(workload, batch)  # already per GPU (memory shards weights by TP)
    kv, kv_mult = 0.0, 1.0
    if m.kind == "decoder" and m.is_transformer:
        kv_mult = prof.kv_multiplier(m.num_heads, m.num_kv_heads, padded=padded and batch > 1)
        kv = kv_cache_bytes(workload.with_(batch=batch * workload.data_parallel), context=context) * kv_mult
    t_mem = (weights + kv) / bw
    t_comp = forward_flops_per_token(workload, context=context) * batch / tp / (
        peak * 1e12 * mfu * gpu_figures.dtype_reach(workload.math_dtype))
    layers = m.num_layers if m.is_transformer else 1
    kernels = prof.kernels_per_layer + architecture_kernels(m)
    floor = (kernels * layers + prof.kernels_fixed) * cal.KERNEL_FLOOR_S
    comm = 0.0
    if tp > 1 and m.is_transformer:
        link = link_bytes_s(gpu_figures, efficiencies.interconnect)
        a = 2.0 if workload.compute_dtype != "fp32" else 4.0
        # bytes only: the advisor adds the all-reduce latency per layer (advisor/figures.py _tp_latency_s)
        comm = 2 * layers * batch * m.hidden_size * a * 2.0 * (tp - 1) / tp / link
    device = max(t_mem, t_comp) + floor + comm
    # the host's time and the GPU's add up (module docstring); bitsandbytes int8 linears add their own
    # host time, synchronizing several times each
    host = prof.host_step_s(layers, gpu_figures) + (bnb_int8_host_s(workload,
                                                                    gpu_figures) if prof.host_bound_possible else 0.0)
    step = host + device
    if host >= device:
        bound = "host"
    elif floor > max(t_mem, t_comp):
        bound = "overhead"
    else:
        bound = "memory" if t_mem >= t_comp else "compute"
    return DecodeStep(step, bound, t_mem, t_comp, floor, host, comm, kv_mult, kernels)


def decode_notes(workload: Workload, gpu_figures: HardwareFigures, *, batch: int, context: int, engine: str,
                 efficiency: Efficiency | None = None) -> list[str]:
    """What the decode step assumes that a user can change: where the engine pays an attention plan per
    step, what it costs and the step without it; where a padded batch would move the KV cache more
    often than the equal-length batch assumed, and what that step takes."""
    prof = engine_profile(engine)
    d = decode_step(workload, gpu_figures, batch=batch, context=context, engine=engine, efficiency=efficiency)
    if d is None:
        return []
    notes = []
    plan = attention_plan_s(gpu_figures) if prof.plans_attention else 0.0
    if plan > 1e-3:
        fast = d.time_s - plan
        how = "measured on this host" if gpu_figures.attention_plan_s is not None else f"assumed: {PLAN_RANGE} measured"
        notes.append(f"{prof.name}: PyTorch's cuDNN attention builds a plan for every new sequence length, "
                     f"{plan * 1e3:.0f} ms of host time a decode step ({how}); "
                     f"torch.backends.cuda.enable_cudnn_sdp(False) avoids it: {fast * 1e3:.1f} ms instead of "
                     f"{d.time_s * 1e3:.1f} ms a step ({batch / fast:,.0f} instead of {batch / d.time_s:,.0f} tok/s), "
                     "as does a process that has decoded at these lengths before (plans are cached per length: "
                     "a benchmark that repeats its warm-up prompt times this faster step)")
    m = workload.model
    if batch > 1 and m.kind == "decoder" and m.is_transformer:
        pad = prof.kv_multiplier(m.num_heads, m.num_kv_heads, padded=True)
        if pad > d.kv_multiplier:
            dp = decode_step(workload, gpu_figures, batch=batch, context=context, engine=engine, efficiency=efficiency,
                             padded=True)
            if dp is not None and dp.time_s >= d.time_s * 1.05:
                notes.append(f"{prof.name}: assumes prompts of one length; a padded batch (a mask) copies K and V for "
                             f"every query head, moving the KV cache {pad:.0f} instead of {d.kv_multiplier:.0f} "
                             f"times: {dp.time_s * 1e3:.1f} ms instead of {d.time_s * 1e3:.1f} ms a step")
    return notes


def decode_step_time(
    workload: Workload, gpu_figures: HardwareFigures, *, batch: int, context: int, engine: str = DEFAULT_ENGINE,
    efficiency: Efficiency | None = None,
) -> tuple[float, str] | None:
    """(seconds, bound) of one decode step of `batch` sequences at `context` tokens each, per GPU
    group of `workload.tensor_parallel`; None where the card has no throughput figures."""
    d = decode_step(workload, gpu_figures, batch=batch, context=context, engine=engine, efficiency=efficiency)
    return None if d is None else (d.time_s, d.bound)


def prefill_host_s(workload: Workload, engine: str, gpu_figures: HardwareFigures | None = None) -> float:
    """Host time to dispatch one prefill forward (eager: every op of every layer; graphs: ~0)."""
    m = workload.model
    return prefill_dispatch_s(engine, m.num_layers if m.is_transformer else 1, moe=m.num_experts > 1,
                              gpu_figures=gpu_figures)


def prefill_dispatch_s(engine: str, layers: float, *, moe: bool = False,
                       gpu_figures: HardwareFigures | None = None) -> float:
    """Host time to dispatch a prefill forward of `layers` layers (the serving simulation's eager engine asks
    for one pipeline stage's share)."""
    prof = engine_profile(engine)
    if not prof.prefill_host_ops_per_layer:
        return 0.0
    per_layer = prof.prefill_host_ops_per_layer + (cal.PREFILL_HOST_OPS_MOE if moe else 0)
    return (per_layer * layers + cal.PREFILL_HOST_OPS_FIXED) * cal.HOST_OP_S * host_op_scale(gpu_figures)
