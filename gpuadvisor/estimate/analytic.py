"""The analytic op graph of a transformer: `transformer_graph(spec, ...)` writes the op graph of one eager
step of a Hugging Face Llama-style decoder from its `ModelSpec` alone (no PyTorch), with the same ops, shapes,
bytes, host ops and per-phase memory peaks the tracer records for it (frontends/decoder.py says how), so the
one op cost model (opcost.py) serves presets and config.json models as it serves traced ones.

It is exposed, not wired into the LLM estimate: `estimate_compute`/`estimate_memory` keep compute.py's and
memory.py's calibrated formulas for decoders (their accuracy is gated against H100/H200 runs);
`op_graph_summary` gives the share of the GPU time each op class takes in the graph: `estimate`'s "where the
GPU time goes" (the shares of the one estimate, never a second time for the same step).
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


def workload_graph(workload: Any) -> OpGraph:
    """The analytic graph of a decoder workload's step on one GPU: a full training step (fused AdamW), or for
    inference and scoring one forward over the prompts (the prefill: logits at every position, no loss)."""
    from gpuadvisor.core.errors import UserError

    why = [what for what, bad in (
        ("LoRA/QLoRA", workload.is_adapter), ("quantized weights", workload.quant_format != "none"),
        (f"the {workload.optimizer} optimizer", workload.is_training and workload.optimizer != "adamw-fused"),
        ("more than one GPU", workload.num_gpus > 1),
        (f"{workload.dtype} compute", workload.dtype not in ("bf16", "fp16", "fp32")),
        ("a traced model", bool(getattr(workload.model, "is_traced", False)))) if bad]
    if why:
        raise UserError(f"{workload.model.name}: the analytic op graph covers one GPU's inference or full training "
                        f"(fused AdamW) in bf16/fp16/fp32, not {', '.join(why)}")
    mode = GraphMode.TRAINING if workload.is_training else GraphMode.INFERENCE
    return transformer_graph(workload.model, mode=mode, batch=workload.micro_batch, seq=workload.seq,
                             dtype=workload.dtype, mixed_precision=workload.mixed_precision,
                             checkpointing=workload.checkpointing, freeze=workload.freeze,
                             trainable=workload.trainable, labels=workload.is_training)


def op_graph_summary(workload: Any, gpu_figures: Any, efficiencies: Any = None, *, eager: bool = True) -> dict[str,
                                                                                                               Any]:
    """Where the GPU time of `workload`'s step goes: the analytic graph costed by opcost, as each op class's share of
    the device time (the estimate's time itself comes from the calibrated transformer path: a second time for
    the same step would be a second answer). Raises UserError for what the analytic front-end does not write
    (workload_graph, check_supported)."""
    from gpuadvisor.estimate.opcost import step_time

    g = workload_graph(workload)
    st = step_time(g, gpu_figures, efficiencies, eager=eager)
    share = {k: v / st.device_s for k, v in sorted(st.by_class.items(), key=lambda kv: -kv[1])} if st.device_s else {}
    what = "training step" if g.mode is GraphMode.TRAINING else "forward over the prompts"
    return {"source": g.source, "mode": g.mode.value, "ops": len(g.ops), "kernels": st.kernels,
            "share_by_class": share,
            "note": f"shares of the GPU time of one {what} by op class, from its analytic op graph (Hugging Face "
                    "decoder, one GPU) costed op by op"}
