"""Serving engines as data (engines.json next to this file): a serving engine's scheduler, kernel traits and
host costs, with the sources each was calibrated on. A registry keyed by `ServeEngineName`.

Two kinds of engine profile, one per question: a `StepEngine` (estimate/engines.py: `--engine graphs|eager`) says
how one step's kernels are launched (host time per step, kernels per layer, KV-cache passes); a `ServeEngine`
(`--engine vllm|sglang|trtllm|llamacpp|hf`) is a serving engine's scheduler and host costs, and embeds the step
engine it launches its steps with (`launch`): the eager step engine's host time for Hugging Face generate(), none
beyond the scheduler's own per iteration for the engines that replay CUDA graphs.

Releases whose published behaviour differs are versions of an engine (`--engine vllm@0.5`): overrides of its
profile in engines.json's `versions`, each with its source; the bare name is the current release."""

from __future__ import annotations

import json
from dataclasses import dataclass, fields, replace
from enum import Enum
from functools import cache
from pathlib import Path
from typing import Any

from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate.compute_result import StepEngineName

DATA = Path(__file__).with_name("engines.json")


class ServeEngineName(str, Enum):
    VLLM = "vllm"
    SGLANG = "sglang"
    TRTLLM = "trtllm"
    LLAMACPP = "llamacpp"
    HF = "hf"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class CardDefaults:
    """Scheduler limits an engine picks by itself from the card it starts on (vLLM's get_batch_defaults: larger
    ones on GPUs of at least `min_memory_gib` whose device name contains none of `excluded_names`)."""

    min_memory_gib: float
    excluded_names: tuple[str, ...]
    max_batched_tokens: int
    max_seqs: int
    source: str

    def applies_to(self, card_name: str, memory_gib: float | None) -> bool:
        name = card_name.lower()
        return (memory_gib or 0.0) >= self.min_memory_gib and not any(x in name for x in self.excluded_names)


@dataclass(frozen=True)
class ServeEngine:
    """One serving engine's scheduler and host costs (module docstring).

    `max_batched_tokens`: token budget of one iteration (prefill chunks + decodes); `max_seqs`: sequences in
    flight; `prefill_first`: new prompts are scheduled before decodes fill the budget; `host_s_per_iter`: host
    time per iteration the GPU does not hide; `kernels_per_layer`: kernels of one layer (each pays
    KERNEL_FLOOR_S); `int8_prefill`: quantized weights multiply on int8 tensor cores (llama.cpp MMQ);
    `int4_dequant_passes`: weight reads a weight-only int4 GEMM costs at small batch; `kv_mem_fraction`: share of
    GPU memory the engine takes for weights + KV cache; `reserve_output`: a request is admitted only with KV
    blocks for its whole output (no preemption), else blocks are taken as tokens come (preemption); `launch`: the
    step engine (estimate/engines.py) whose host costs each iteration pays besides `host_s_per_iter`: graphs
    (decode iterations replay CUDA graphs: no host time of its own) or eager (the host dispatches every op of
    every iteration, as Hugging Face generate() does: per layer, generate()'s bookkeeping, the attention plan;
    added to a decode iteration's GPU time, overlapped with a prefill's)."""

    name: ServeEngineName
    label: str
    launch: StepEngineName
    max_batched_tokens: int
    max_seqs: int
    chunked_prefill: bool
    prefill_first: bool
    fused_attention: bool
    fp8_kv: bool
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
    frontend_s_per_request: float = 0.0
    # the part of it the server's one event loop spends on each request in turn (request parsing, chat template,
    # tokenization), and whether the handling yields there and goes on behind every request queued meanwhile
    # (sim.front_end_reach): what a burst of requests waits for, a request sent alone never
    frontend_serial_s_per_request: float = 0.0
    frontend_requeues: bool = False
    # an in-line loop's time streaming one token of an answer, which holds back the rest of a burst behind it
    frontend_stream_s_per_token: float = 0.0
    # where no published run outside the held-out set measures the front-end's time per request: that the figure a
    # served answer's TTFT takes is assumed, said beside it (estimate_load's caveat); "" where it is measured or given
    frontend_unmeasured: str = ""
    # the scheduler plans the next iteration while the GPU runs this one (SimConfig.plans_ahead)
    plans_ahead: bool = False
    tp_handoff_s_per_iter: float = 0.0
    pp_host_s_per_seq: float = 0.0
    # host time per sequence of an iteration that the GPU does not hide: an engine whose scheduler, input
    # preparation and output processing run between GPU steps (vLLM's V1 engine before async scheduling)
    host_s_per_seq: float = 0.0
    # that per-sequence time runs while the GPU runs the next iteration (an overlap scheduler: SGLang's, TensorRT-LLM's
    # PyTorch executor's): an iteration takes the longer of the two, not their sum
    host_seq_overlap: bool = False
    # the serving front-end's time per running sequence per iteration (detokenizing and streaming its token), in a
    # process of its own: tokens reach the clients no faster than it streams them. Served runs only (a load a client
    # measures through the engine's HTTP server); an offline benchmark drives the engine in-process
    stream_s_per_seq: float = 0.0
    # admission that holds back the running requests' expected output (sim.SimConfig.new_token_ratio; SGLang's)
    new_token_ratio: float = 0.0
    min_new_token_ratio: float = 0.0
    new_token_ratio_decay_steps: int = 600
    new_token_clip: int = 4096  # the most output tokens the ratio is taken of, per request
    client_sources: tuple[str, ...] = ()
    version: str = ""  # "" : the current release (engines.json `versions` NAME._default says which)
    # disaggregated prefill/decode (serve/disagg.py): whether the engine runs it, the hand-off per request on top
    # of the KV bytes over the link, and whether the KV cache leaves layer by layer while the prefill runs
    disaggregation: bool = False
    kv_transfer_latency_s: float = 0.0
    kv_transfer_layerwise: bool = False
    disagg_sources: tuple[str, ...] = ()
    # attention data-parallel over the tensor-parallel ranks (Layout.dp_attention): whether the engine runs it
    dp_attention: bool = False
    # whether the engine's sequence and token limits are each rank's under data-parallel attention (vLLM's
    # --max-num-seqs, TensorRT-LLM's max_batch_size), or the whole replica's, divided among the ranks (SGLang's)
    dp_attention_limits_per_rank: bool = False
    dp_attention_sources: tuple[str, ...] = ()
    # the limits the engine sets itself on a large card (None: the same on every card), and the knobs the user
    # set, which a card's defaults never replace
    large_card: CardDefaults | None = None
    pinned: tuple[str, ...] = ()
    # what the engine changes in itself when it speculates (draft model, EAGLE, MTP): its sequence cap (0: none)
    # and whether its overlap scheduler stays on (SGLang before its spec v2 turns it off)
    speculative_max_seqs: int = 0
    speculative_overlap: bool = True
    # the speculative worker's host time per running sequence per verify step (drafting, tree building, verifying
    # and accepting, in Python), in place of host_s_per_seq while it speculates; 0: host_s_per_seq's
    speculative_host_s_per_seq: float = 0.0
    speculative_sources: tuple[str, ...] = ()
    # the attention kernel's query tile (rows) that every decoding sequence takes per query head in an iteration
    # that also runs prompt tokens: FlashAttention 2's paged split-KV kernel (kBlockM 64), which packs a KV group's
    # heads into one tile only when every query is one token long. 0: a kernel that packs them in a mixed batch too
    # (FA3, FlashInfer, TensorRT-LLM's): the KV read alone prices the decodes' attention
    decode_query_rows: int = 0
    # compute-capability majors on which the engine runs a packing kernel instead ("9": FA3 on Hopper)
    packed_attention_cc: tuple[str, ...] = ()
    attention_sources: tuple[str, ...] = ()

    def decode_rows_on(self, compute_capability: str | None) -> int:
        """`decode_query_rows` on an NVIDIA card of this compute capability: 0 where the engine runs a packing kernel
        there, and where the capability is unknown (AMD cards: ROCm's attention backends are not FlashAttention 2)."""
        major = (compute_capability or "").split(".")[0]
        return 0 if not major or major in self.packed_attention_cc else self.decode_query_rows

    @property
    def spec(self) -> str:
        """The name as --engine takes it: `vllm`, `vllm@0.5`."""
        return f"{self.name.value}@{self.version}" if self.version else self.name.value

    @property
    def decode_graphs(self) -> bool:
        """Decode iterations replay CUDA graphs."""
        return self.launch == StepEngineName.GRAPHS

    def on_card(self, card_name: str, memory_gib: float | None) -> ServeEngine:
        """The profile as the engine configures itself on this card: its large-card limits where they apply,
        except the knobs the user pinned."""
        big = self.large_card
        if big is None or not big.applies_to(card_name, memory_gib):
            return self
        return replace(self,
                       max_batched_tokens=self.max_batched_tokens if "max_batched_tokens" in self.pinned
                       else big.max_batched_tokens,
                       max_seqs=self.max_seqs if "max_seqs" in self.pinned else big.max_seqs)

    def speculating(self) -> ServeEngine:
        """The profile as the engine configures itself with speculative decoding on (the user's pinned knobs
        kept)."""
        return replace(self, host_seq_overlap=self.host_seq_overlap and self.speculative_overlap,
                       host_s_per_seq=self.speculative_host_s_per_seq or self.host_s_per_seq,
                       plans_ahead=self.plans_ahead and self.speculative_overlap,
                       max_seqs=self.max_seqs if "max_seqs" in self.pinned or not self.speculative_max_seqs
                       else min(self.max_seqs, self.speculative_max_seqs))

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["large_card"] = None if self.large_card is None else {
            **{f.name: getattr(self.large_card, f.name) for f in fields(self.large_card)},
            "excluded_names": list(self.large_card.excluded_names)}
        d["pinned"] = list(self.pinned)
        d["name"] = self.name.value
        d["launch"] = self.launch.value
        d["sources"] = list(self.sources)
        d["client_sources"] = list(self.client_sources)
        d["disagg_sources"] = list(self.disagg_sources)
        d["dp_attention_sources"] = list(self.dp_attention_sources)
        d["speculative_sources"] = list(self.speculative_sources)
        d["packed_attention_cc"] = list(self.packed_attention_cc)
        d["attention_sources"] = list(self.attention_sources)
        return d


@cache
def _raw() -> dict[str, dict[str, Any]]:
    return dict(json.loads(DATA.read_text())["engines"])


@cache
def _raw_versions() -> dict[str, dict[str, Any]]:
    return dict(json.loads(DATA.read_text()).get("versions", {}))


def engine_names() -> tuple[str, ...]:
    return tuple(e.value for e in ServeEngineName)


def engine_versions(name: str) -> tuple[str, ...]:
    """The older releases of `name` with a profile of their own (the bare name is the current one)."""
    return tuple(v for v in _raw_versions().get(name, {}) if not v.startswith("_"))


def version_entry(name: str, release: str) -> str:
    """The `versions` entry that stands for `release` of engine `name`: itself, or the entry whose `covers` lists
    its major.minor (`0.11.0` and `0.12` -> `0.11`, the entry for v0.8-v0.13); else `release` unchanged."""
    entries = _raw_versions().get(name, {})
    if release in entries:
        return release
    minor = ".".join(release.split(".")[:2])
    for key, entry in entries.items():
        if not key.startswith("_") and minor in entry.get("covers", ()):
            return key
    return release


def engine_specs() -> tuple[str, ...]:
    """Every name --engine takes for the serving simulation: the engines, then their versions (`vllm@0.5`)."""
    return (*engine_names(), *(f"{n}@{v}" for n in engine_names() for v in engine_versions(n)))


def is_serve_engine(spec: str) -> bool:
    base, at, version = str(spec).lower().partition("@")
    if at:  # `name@` with no release is no engine
        return bool(version) and f"{base}@{version_entry(base, version)}" in engine_specs()
    return base in engine_names()


def serve_engine(name: str | ServeEngineName, **overrides: Any) -> ServeEngine:
    """The profile of `name` or `name@version` (UserError naming the choices if unknown); `overrides` replace
    knobs (what-ifs)."""
    text = str(name.value if isinstance(name, ServeEngineName) else name).lower()
    base, _, version = text.partition("@")
    try:
        key = ServeEngineName(base)
    except ValueError:
        raise UserError(f"unknown engine {name!r} (one of {', '.join(engine_names())})") from None
    d = dict(_raw()[key.value])
    if version:
        known = engine_versions(key.value)
        version = version_entry(key.value, version)
        if version not in known:
            raise UserError(f"unknown version {version!r} of {key.value} (known: "
                            f"{', '.join(known) if known else 'none'}; {key.value} alone is the current release)")
        delta = dict(_raw_versions()[key.value][version])
        delta.pop("covers", None)
        d["sources"] = [*delta.pop("sources"), *d["sources"]]
        d["calibrated_on"] = f"{key.value}'s profile with the version's sourced overrides"
        d.update(delta)
    if "frontend_s_per_request" in overrides:  # a measured (or asked) front-end: the profile's caveat is moot
        d["frontend_unmeasured"] = ""
    d.update(overrides)
    big = d.pop("large_card", None)
    d["large_card"] = None if big is None else CardDefaults(
        float(big["min_memory_gib"]), tuple(big["excluded_names"]), int(big["max_batched_tokens"]),
        int(big["max_seqs"]), str(big["source"]))
    d["pinned"] = tuple(sorted(overrides))
    d["sources"] = tuple(d["sources"])
    d["client_sources"] = tuple(d.get("client_sources", ()))
    d["disagg_sources"] = tuple(d.get("disagg_sources", ()))
    d["dp_attention_sources"] = tuple(d.get("dp_attention_sources", ()))
    d["speculative_sources"] = tuple(d.get("speculative_sources", ()))
    d["packed_attention_cc"] = tuple(d.get("packed_attention_cc", ()))
    d["attention_sources"] = tuple(d.get("attention_sources", ()))
    d["launch"] = StepEngineName(d["launch"])
    return ServeEngine(name=key, version=version, **d)


@cache
def _raw_physics_cached() -> tuple[tuple[str, float], ...]:
    p = json.loads(DATA.read_text())["physics"]
    return tuple((k, float(v)) for k, v in p.items() if not k.endswith("_source"))


def _raw_physics() -> dict[str, float]:
    """The shared physics constants of engines.json (fresh dict: callers may override entries)."""
    return dict(_raw_physics_cached())
