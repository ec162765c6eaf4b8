"""What a time estimate says: `ComputeEstimate`, shared by the transformer path (compute.py) and the
op-graph path (graph_estimate.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpuadvisor.estimate.confidence import Confidence
from gpuadvisor.strenum import StrEnum


class StepEngineName(StrEnum):
    """The step engines, by how a step's kernels are launched: eager PyTorch (the host dispatches every op, as
    Hugging Face generate() does) or CUDA graphs / a compiled engine (their profiles, `StepEngine`, are in
    engines.py; the serving engines, serve/profiles.py, each name the one they launch their steps with)."""

    EAGER = "eager"
    GRAPHS = "graphs"


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
    achieved_mfu: float | None = None  # model FLOPs / (time x datasheet or measured peak): an outcome
    host_time_s: float | None = None  # host dispatch time of one step (eager PyTorch); 0 for graphs
    confidence: Confidence = Confidence.NORMAL  # LOW where `low_confidence_reasons` has any
    engine: StepEngineName | None = None  # inference: eager or graphs; training: eager
    notes: tuple[str, ...] = ()  # everything worth saying, the low-confidence reasons included
    low_confidence_reasons: tuple[str, ...] = field(default=(), compare=False)  # the notes that lower confidence
    samples_per_s: float | None = None  # traced models: samples (images, clips, ...) a second, all GPUs
    unit: str | None = None  # traced models: what a sample is ("images", "samples", "sequences" of tokens)
    breakdown: dict[str, float] | None = None  # traced models: GPU seconds a step per op class

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "low_confidence_reasons"}
        d["notes"] = list(self.notes)
        d["estimate"] = True
        return d
