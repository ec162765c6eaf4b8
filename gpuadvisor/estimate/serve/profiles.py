"""Serving engine profiles as data (engines.json next to this file): scheduling knobs, kernel traits and the
overheads each was calibrated on, with sources. A registry keyed by `EngineName`."""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from enum import Enum
from functools import cache
from pathlib import Path
from typing import Any

from gpuadvisor.core.errors import UserError

DATA = Path(__file__).with_name("engines.json")


class EngineName(str, Enum):
    VLLM = "vllm"
    SGLANG = "sglang"
    TRTLLM = "trtllm"
    LLAMACPP = "llamacpp"
    HF = "hf"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class ServeEngine:
    """One engine's profile. `max_batched_tokens`: token budget of one iteration (prefill chunks + decodes);
    `max_seqs`: sequences in flight; `prefill_first`: new prompts are scheduled before decodes fill the budget;
    `host_s_per_iter`: host time per iteration the GPU does not hide; `kernels_per_layer`: kernels of one layer
    (each pays KERNEL_FLOOR_S); `int8_prefill`: quantized weights multiply on int8 tensor cores (llama.cpp MMQ);
    `int4_dequant_passes`: weight reads a weight-only int4 GEMM costs at small batch; `kv_mem_fraction`: share
    of GPU memory the engine takes for weights + KV cache; `reserve_output`: a request is admitted only with
    KV blocks for its whole output (no preemption), else blocks are taken as tokens come (preemption);
    `eager_host`: the host dispatches every op of every iteration (Hugging Face generate()): its host time is
    the eager profile of estimate/engines.py (per layer, generate()'s bookkeeping, the attention plan), which
    adds to a decode step's GPU time and overlaps a prefill's, in place of `host_s_per_iter`."""

    name: EngineName
    label: str
    max_batched_tokens: int
    max_seqs: int
    chunked_prefill: bool
    prefill_first: bool
    fused_attention: bool
    fp8_kv: bool
    decode_graphs: bool
    kernels_per_layer: float
    host_s_per_iter: float
    kv_mem_fraction: float
    gemm_eff: float
    int8_prefill: bool
    int4_dequant_passes: float
    continuous_batching: bool
    reserve_output: bool
    sources: tuple[str, ...]
    calibrated_on: str
    eager_host: bool = False

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["name"] = self.name.value
        d["sources"] = list(self.sources)
        return d


@cache
def _raw() -> dict[str, dict[str, Any]]:
    return dict(json.loads(DATA.read_text())["engines"])


def engine_names() -> tuple[str, ...]:
    return tuple(e.value for e in EngineName)


def serve_engine(name: str | EngineName, **overrides: Any) -> ServeEngine:
    """The profile of `name` (UserError naming the choices if unknown); `overrides` replace knobs (what-ifs)."""
    try:
        key = EngineName(str(name).lower())
    except ValueError:
        raise UserError(f"unknown engine {name!r} (one of {', '.join(engine_names())})") from None
    d = dict(_raw()[key.value])
    d.update(overrides)
    d["sources"] = tuple(d["sources"])
    return ServeEngine(name=key, **d)


@cache
def _raw_physics_cached() -> tuple[tuple[str, float], ...]:
    p = json.loads(DATA.read_text())["physics"]
    return tuple((k, float(v)) for k, v in p.items() if not k.endswith("_source"))


def _raw_physics() -> dict[str, float]:
    """The shared physics constants of engines.json (fresh dict: callers may override entries)."""
    return dict(_raw_physics_cached())
