"""The analytic op graph of a transformer: `transformer_graph(spec, ...)` writes the op graph of one eager
step of a Hugging Face Llama-style decoder from its `ModelSpec` alone (no PyTorch), with the same ops, shapes,
bytes, host ops and per-phase memory peaks the tracer records for it (frontends/decoder.py says how), so the
one op cost model (opcost.py) serves presets and config.json models as it serves traced ones.

It is exposed, not wired into the LLM estimate: `estimate_compute`/`estimate_memory` keep compute.py's and
memory.py's calibrated formulas for decoders (their accuracy is gated against H100/H200 runs);
`op_graph_summary` gives the graph's time by op class for a workload, for `estimate --json`.
"""

from __future__ import annotations

from typing import Any

from gpuadvisor.estimate.frontends.decoder import check_supported, transformer_graph
from gpuadvisor.estimate.graph import BatchGraph, GraphMode, OpGraph

__all__ = ["batch_graph", "check_supported", "op_graph_summary", "transformer_graph", "workload_graph"]


def batch_graph(spec: Any, *, mode: GraphMode, seq: int, batches: tuple[int, int] = (2, 4),
                **kw: Any) -> BatchGraph:
    """The analytic graph at two batch sizes, as the tracer's graphs are stored (graph.BatchGraph)."""
    lo, hi = (transformer_graph(spec, mode=mode, batch=b, seq=seq, **kw) for b in batches)
    return BatchGraph(lo, hi)


def workload_graph(w: Any) -> OpGraph:
    """The analytic graph of a decoder workload's step on one GPU (its micro-batch); full training or a forward."""
    from gpuadvisor.errors import UserError

    if w.is_adapter or w.mode.value == "scoring" or w.quant_format != "none":
        raise UserError(f"{w.model.name}: the analytic op graph covers inference and full training in "
                        "bf16/fp16/fp32, not LoRA, scoring modes or quantized weights")
    mode = GraphMode.TRAINING if w.is_training else GraphMode.INFERENCE
    return transformer_graph(w.model, mode=mode, batch=w.micro_batch, seq=w.seq, dtype=w.dtype,
                             mixed_precision=w.mixed_precision, checkpointing=w.checkpointing,
                             freeze=w.freeze, trainable=w.trainable)


def op_graph_summary(w: Any, hw: Any, eff: Any = None) -> dict[str, Any]:
    """The analytic graph of `w` costed by opcost: GPU time by op class, host time and the traced-style peak."""
    from gpuadvisor.estimate.opcost import step_time

    g = workload_graph(w)
    st = step_time(g, hw, eff)
    return {"source": g.source, "ops": len(g.ops), "kernels": st.kernels, "host_ops": g.host_ops,
            "step_time_s": st.step_s, "device_time_s": st.device_s, "host_time_s": st.host_s,
            "time_by_class_s": dict(sorted(st.by_class.items(), key=lambda kv: -kv[1])),
            "peak_bytes": g.memory.peak_bytes, "peak_phase": g.memory.phase}
