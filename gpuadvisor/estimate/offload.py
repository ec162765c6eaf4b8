"""CPU offload for cards too small for a model (llama.cpp `-ngl`): pure functions, no torch.

Decoding reads every weight once per step, so a layer kept in host memory costs its bytes over
the host's memory bandwidth instead of the GPU's. The plan puts as many whole layers (weights
and their KV cache) on the GPU as fit beside what must be there anyway (CUDA context, the
compute buffer of one layer, the output head), keeps the rest and the token embeddings in host
memory as llama.cpp does, and estimates decode speed as the sum of both parts' read times.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate import calibration as cal
from gpuadvisor.estimate.memory import GiB, _inference_transient, kv_cache_bytes, weight_bytes
from gpuadvisor.workload import Mode, Workload

# DEFAULT_HOST_BANDWIDTH_GBS (host-memory bandwidth of a CPU decoder when no host probe result is given)
# is in the calibration table
__getattr__ = cal.aliases(__name__, ("DEFAULT_HOST_BANDWIDTH_GBS",))
#: key of the host probe's copy bandwidth in a results file (probes/host.py); NumPy's copy is
#: single-threaded, so it is a lower bound of what llama.cpp's threads reach
HOST_PROBE_KEY = "host.copy"


@dataclass(frozen=True)
class OffloadPlan:
    """Which layers sit on the GPU, what stays in host memory, and the decode speed that follows."""

    total_layers: int
    gpu_layers: int
    gpu_bytes: float  # on the GPU: GPU layers, their KV cache, head, compute buffer, context
    host_bytes: float  # in host memory: the other layers, their KV cache, the token embeddings
    decode_step_s: float
    decode_tokens_per_s: float  # over the batch
    gpu_bandwidth_gbs: float  # effective
    host_bandwidth_gbs: float  # effective
    host_bandwidth_source: str
    notes: tuple[str, ...] = ()

    @property
    def fits_entirely(self) -> bool:
        return self.gpu_layers == self.total_layers

    def to_dict(self) -> dict[str, Any]:
        return {
            "total_layers": self.total_layers, "gpu_layers": self.gpu_layers,
            "gpu_gib": round(self.gpu_bytes / GiB, 3), "host_gib": round(self.host_bytes / GiB, 3),
            "decode_step_s": self.decode_step_s, "decode_tokens_per_s": self.decode_tokens_per_s,
            "gpu_bandwidth_gbs": self.gpu_bandwidth_gbs, "host_bandwidth_gbs": self.host_bandwidth_gbs,
            "host_bandwidth_source": self.host_bandwidth_source, "fits_entirely": self.fits_entirely,
            "notes": list(self.notes),
        }


def host_bandwidth_from(result: Any) -> float | None:
    """The host probe's copy bandwidth (GB/s) from a RunResult, or None when it has none."""
    probe = result.host_probe("host") if result is not None else None
    m = probe.get(HOST_PROBE_KEY) if probe is not None else None
    return float(m.value) if m is not None and m.value else None


def plan_offload(workload: Workload, gpu_memory_bytes: float, gpu_bandwidth_gbs: float, *,
                 host_bandwidth_gbs: float | None = None, bandwidth_efficiency: float | None = None,
                 host_memory_bytes: float | None = None) -> OffloadPlan:
    """Layers on the GPU and decode speed of a model whose weights need not fit on the card.

    `bandwidth_efficiency` defaults to OFFLOAD_BANDWIDTH_EFFICIENCY, the host bandwidth to
    DEFAULT_HOST_BANDWIDTH_GBS (calibration table).

    Raises UserError when not even the parts that must sit on the GPU fit, or when the rest does
    not fit in host memory either (when its size is given).
    """
    m = workload.model
    if workload.mode != Mode.INFERENCE:
        raise UserError("CPU offload (--offload) applies to inference only")
    if not m.is_transformer or m.kind != "decoder":
        raise UserError(f"CPU offload plans whole decoder layers; {m.name} is not given as a decoder")
    if not (gpu_memory_bytes > 0) or not (gpu_bandwidth_gbs > 0):
        raise UserError("CPU offload needs the card's memory size and bandwidth")
    if host_bandwidth_gbs is not None and not (host_bandwidth_gbs > 0):
        raise UserError(f"host bandwidth must be > 0 GB/s, got {host_bandwidth_gbs!r}")
    source = "measured (host probe)" if host_bandwidth_gbs else "default"
    host_bw = float(host_bandwidth_gbs or cal.DEFAULT_HOST_BANDWIDTH_GBS)
    if bandwidth_efficiency is None:
        bandwidth_efficiency = cal.OFFLOAD_BANDWIDTH_EFFICIENCY
    gpu_bw = gpu_bandwidth_gbs * bandwidth_efficiency

    layers = m.num_layers
    weights = weight_bytes(workload)
    total = float(m.num_params)
    shape_total = float(max(1, m.total_params))
    layer_w = weights * (m.layer_params / shape_total)  # one block, in its stored format
    embed = weights * (m.vocab_size * m.hidden_size / shape_total)  # token table: stays in host memory
    head = embed  # output projection on the GPU (llama.cpp offloads it; a tied table gets a GPU copy)
    rest = max(0.0, weights - layers * layer_w - embed * (1 if m.tied_embeddings else 2))  # norms, positions
    kv_layer = kv_cache_bytes(workload) / layers
    buffer = _inference_transient(workload)  # compute buffer: one layer's temporaries and the last logits
    fixed = (head + rest + buffer) * (1 + cal.ALLOCATOR_OVERHEAD) + cal.CUDA_CONTEXT_BYTES
    per_layer = (layer_w + kv_layer) * (1 + cal.ALLOCATOR_OVERHEAD)
    if fixed > gpu_memory_bytes:
        raise UserError(
            f"offload cannot fit {m.name}: the output head, compute buffer and CUDA context alone need "
            f"{fixed / GiB:.1f} GiB of the card's {gpu_memory_bytes / GiB:.1f} GiB (try a smaller batch or context)"
        )
    n = int(min(layers, (gpu_memory_bytes - fixed) // per_layer))
    host = (layers - n) * (layer_w + kv_layer) + embed
    if host_memory_bytes is not None and host > host_memory_bytes:
        raise UserError(
            f"offload cannot fit {m.name}: {host / GiB:.1f} GiB must stay in host memory, which has "
            f"{host_memory_bytes / GiB:.1f} GiB"
        )
    # one decode step reads each layer's weights and KV cache once, the head on the GPU
    gpu_read = n * (layer_w + kv_layer) + head + rest
    host_read = (layers - n) * (layer_w + kv_layer)
    step = gpu_read / (gpu_bw * 1e9) + host_read / (host_bw * 1e9)
    notes = [f"{n} of {layers} layers on the GPU (llama.cpp -ngl {n}); token embeddings in host memory",
             f"host bandwidth {host_bw:g} GB/s ({source}); decode assumed bandwidth-bound on both sides"]
    if total != shape_total:
        notes.append("layer sizes scaled from an assumed architecture")
    return OffloadPlan(
        total_layers=layers, gpu_layers=n, gpu_bytes=fixed + n * per_layer, host_bytes=host,
        decode_step_s=step, decode_tokens_per_s=workload.micro_batch / step, gpu_bandwidth_gbs=gpu_bw,
        host_bandwidth_gbs=host_bw, host_bandwidth_source=source, notes=tuple(notes),
    )
