"""The analytic op graph of a transformer: `transformer_graph(spec, ...)` writes the op graph of one eager
step of a Hugging Face Llama-style decoder from its `ModelSpec` alone (no PyTorch), with the same ops, shapes,
bytes, host ops and per-phase memory peaks the tracer records for it (frontends/decoder.py says how), so the
one op cost model (opcost.py) serves presets and config.json models as it serves traced ones.

It is exposed, not wired into the LLM estimate: `estimate_compute`/`estimate_memory` keep compute.py's and
memory.py's calibrated formulas for decoders (their accuracy is gated against H100/H200 runs);
`op_graph_summary` gives the graph's time by op class for a workload: `estimate`'s `op_graph` (JSON) and its
"op graph" line.
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
    """The analytic graph of a decoder workload's step on one GPU: a full training step (fused AdamW), or for
    inference and scoring one forward over the prompts (the prefill: logits at every position, no loss)."""
    from gpuadvisor.core.errors import UserError

    why = [what for what, bad in (
        ("LoRA/QLoRA", w.is_adapter), ("quantized weights", w.quant_format != "none"),
        (f"the {w.optimizer} optimizer", w.is_training and w.optimizer != "adamw-fused"),
        ("more than one GPU", w.num_gpus > 1), (f"{w.dtype} compute", w.dtype not in ("bf16", "fp16", "fp32")),
        ("a traced model", bool(getattr(w.model, "is_traced", False)))) if bad]
    if why:
        raise UserError(f"{w.model.name}: the analytic op graph covers one GPU's inference or full training "
                        f"(fused AdamW) in bf16/fp16/fp32, not {', '.join(why)}")
    mode = GraphMode.TRAINING if w.is_training else GraphMode.INFERENCE
    return transformer_graph(w.model, mode=mode, batch=w.micro_batch, seq=w.seq, dtype=w.dtype,
                             mixed_precision=w.mixed_precision, checkpointing=w.checkpointing,
                             freeze=w.freeze, trainable=w.trainable, labels=w.is_training)


def op_graph_summary(w: Any, hw: Any, eff: Any = None, *, headline_s: float | None = None,
                     eager: bool = True) -> dict[str, Any]:
    """The analytic graph of `w` costed by opcost: GPU time by op class, host time (none unless `eager`: a
    CUDA graph or compiled engine replays the forward), kernels and the graph's memory peak; with `headline_s`
    (the calibrated estimate of the same step or forward) their ratio, in the note. Raises UserError for what
    the analytic front-end does not write (workload_graph, check_supported)."""
    from gpuadvisor.estimate.opcost import step_time

    g = workload_graph(w)
    st = step_time(g, hw, eff, eager=eager)
    what = "training step" if g.mode is GraphMode.TRAINING else "forward over the prompts"
    ratio = st.step_s / headline_s if headline_s else None
    note = (f"the analytic op graph of one {what} (Hugging Face decoder, one GPU; "
            f"{'eager host dispatch' if eager else 'GPU time only, no host dispatch'}) costed op by op by the op "
            "cost model; the headline figures come from the calibrated transformer path"
            + (f": this {'step' if g.mode is GraphMode.TRAINING else 'forward'} is {ratio:.2f}x theirs"
               if ratio is not None else ""))
    return {"source": g.source, "mode": g.mode.value, "ops": len(g.ops), "kernels": st.kernels,
            "host_ops": g.host_ops, "step_time_s": st.step_s, "device_time_s": st.device_s,
            "host_time_s": st.host_s, "bound": st.bound,
            "time_by_class_s": dict(sorted(st.by_class.items(), key=lambda kv: -kv[1])),
            "peak_bytes": g.memory.peak_bytes, "peak_phase": g.memory.phase,
            "ratio_to_headline": ratio, "note": note}
