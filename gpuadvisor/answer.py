"""The estimator's one answer: the same type, and the same JSON schema (docs/answer.schema.json), for every
question (`request.Question`), so a script that reads one answer reads them all.

The named breakdown is common to all: the parts of the time, the parts of the memory per GPU, the rate in the
workload's own unit, the serving figures where a decoder is served, and what the answer rests on (the
hardware figures' source, the engine or framework profile, the assumptions, the calibration). `detail` keeps
the answering model's full figures for those who want every number; `parts` keeps the model's typed
results for the interfaces that print them (never serialised).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from gpuadvisor.request import Question

SCHEMA_ID = "gpuadvisor.answer/1"
CALIBRATION_DOC = "docs/calibration.md"


@dataclass(frozen=True)
class TimeParts:
    """How long: one step (a training step, a forward pass, a decode step), the whole job where it has a size,
    and where the step's time goes (seconds by part)."""

    step_s: float | None = None
    job_s: float | None = None
    bound: str | None = None  # compute | memory | host | network ... : what limits the step
    parts: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class MemoryParts:
    """Memory per GPU (the fullest one) by part, in bytes, against what the card offers."""

    per_gpu_bytes: float
    capacity_bytes: float | None
    parts: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Rate:
    """Throughput in the workload's own unit: tokens/s for language models, images/s for vision, samples/s for
    other traced models, requests/s for a simulated stream."""

    value: float | None
    unit: str
    per_gpu: float | None = None


@dataclass(frozen=True)
class ServingFigures:
    """What a user of a served decoder sees: time to first token, time per output token, their rates, and
    percentiles where the answer simulated a stream. A simulated stream's TTFT is the client's (request sent to first
    token received, the engine's front-end included: vLLM benchmark_serving / GenAI-Perf); `server_ttft_s` is the
    scheduler's part of it and `frontend_s` the rest; `itl_s` the mean gap between streamed tokens."""

    users: int | None
    input_len: float | None
    output_len: float | None
    ttft_s: float | None
    tpot_s: float | None
    per_user_tokens_per_s: float | None
    aggregate_tokens_per_s: float | None
    kv_capacity_tokens: int | None = None
    percentiles: dict[str, dict[str, float | None]] | None = None  # ttft_s / tpot_s / latency_s -> p50, p90, p99
    server_ttft_s: float | None = None
    frontend_s: float | None = None
    itl_s: float | None = None
    kv_transfer_s: float | None = None  # disaggregated: mean seconds a request's KV cache takes between the pools
    pools: list[dict[str, Any]] | None = None  # disaggregated: the prefill and the decode pool (card, GPUs, TP, KV)


@dataclass(frozen=True)
class Answer:
    """One estimate: what the request asked, whether it fits, the time, memory, rate and serving figures, and
    what the figures rest on."""

    question: Question
    workload: dict[str, Any]
    card: str
    gpus: int
    hardware_source: str  # datasheet | measured
    fits: bool
    time: TimeParts
    memory: MemoryParts
    rate: Rate
    serving: ServingFigures | None
    profile: str  # the engine or framework profile the answer used
    assumptions: dict[str, Any]
    notes: tuple[str, ...] = ()
    detail: dict[str, Any] = field(default_factory=dict)
    parts: Any = field(default=None, compare=False, repr=False)  # the answering model's typed results (printers)

    def to_dict(self) -> dict[str, Any]:
        """The one JSON schema (docs/answer.schema.json); NaN and infinity become null."""
        return _clean({
            "schema": SCHEMA_ID, "estimate": True, "question": str(self.question), "workload": self.workload,
            "hardware": {"card": self.card, "gpus": self.gpus, "source": self.hardware_source},
            "fits": self.fits,
            "time": {"step_s": self.time.step_s, "job_s": self.time.job_s, "bound": self.time.bound,
                     "parts": dict(self.time.parts)},
            "memory": {"per_gpu_bytes": self.memory.per_gpu_bytes, "capacity_bytes": self.memory.capacity_bytes,
                       "parts": dict(self.memory.parts)},
            "rate": {"value": self.rate.value, "unit": self.rate.unit, "per_gpu": self.rate.per_gpu},
            "serving": None if self.serving is None else {
                "users": self.serving.users, "input_len": self.serving.input_len,
                "output_len": self.serving.output_len, "ttft_s": self.serving.ttft_s, "tpot_s": self.serving.tpot_s,
                "per_user_tokens_per_s": self.serving.per_user_tokens_per_s,
                "aggregate_tokens_per_s": self.serving.aggregate_tokens_per_s,
                "kv_capacity_tokens": self.serving.kv_capacity_tokens, "percentiles": self.serving.percentiles,
                "server_ttft_s": self.serving.server_ttft_s, "frontend_s": self.serving.frontend_s,
                "itl_s": self.serving.itl_s, "kv_transfer_s": self.serving.kv_transfer_s,
                "pools": self.serving.pools},
            "rests_on": {"profile": self.profile, "calibration": CALIBRATION_DOC, "assumptions": self.assumptions},
            "notes": list(self.notes), "detail": self.detail})


def _clean(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


__all__ = ["SCHEMA_ID", "Answer", "MemoryParts", "Rate", "ServingFigures", "TimeParts"]
