"""Memory and time of a traced model (kind "traced": CNNs, RNNs, GNNs, UNets, speech and any
nn.Module): its op graph at the workload's batch, costed op by op. Pure functions over the graph.

Memory is the traced peak of live tensors (weights, gradients, optimizer states, activations and
inputs as they were alive at it), plus the CUDA context and the allocator's fragmentation that
torch.cuda.max_memory_allocated does not see. Time is opcost.step_time; data parallelism adds the
gradient all-reduce as compute.py costs it for transformers.
"""

from __future__ import annotations

from dataclasses import replace

from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate import calibration as cal
from gpuadvisor.estimate.collectives import gradient_allreduce_s, link_bytes_s
from gpuadvisor.estimate.compute_result import ComputeEstimate, StepEngineName
from gpuadvisor.estimate.confidence import Confidence, host_dispatch_note
from gpuadvisor.estimate.conv_fallback import fallen_back
from gpuadvisor.estimate.graph import GraphMode, OpGraph
from gpuadvisor.estimate.hardware import Efficiency, HardwareFigures
from gpuadvisor.estimate.memory_result import ITEMS, MemoryBreakdown
from gpuadvisor.estimate.trace.tracer import TraceOptions
from gpuadvisor.workload import BYTES_PER_DTYPE, Workload

TRACED_DTYPES = ("bf16", "fp16", "fp32")


def trace_options(workload: Workload) -> TraceOptions:
    if workload.dtype not in TRACED_DTYPES:
        raise UserError(f"{workload.model.name}: traced models run in {', '.join(TRACED_DTYPES)}, not {workload.dtype}")
    return TraceOptions(mode=GraphMode.TRAINING if workload.is_training else GraphMode.INFERENCE,
                        dtype=workload.dtype, mixed_precision=workload.mixed_precision and workload.dtype != "fp32",
                        channels_last=workload.channels_last, freeze=workload.freeze, trainable=workload.trainable,
                        checkpointing=workload.checkpointing, seq=workload.seq_len,
                        input_shape=workload.input_shape or None)


def workload_graph(workload: Workload) -> OpGraph:
    """The op graph of one step of `workload` on one GPU (its micro-batch)."""
    from gpuadvisor.estimate.graphstore import graph_at
    from gpuadvisor.modelref import parse_ref

    ref = parse_ref(workload.model.trace)
    if ref is None:
        raise UserError(f"{workload.model.name}: {workload.model.trace!r} is not a traced model spec")
    opts = trace_options(workload)
    if opts.dtype == "fp16":  # the bf16 step's ops, in the dtype the library sees (opcost.cudnn_depthwise)
        return relabelled(graph_at(ref, replace(opts, dtype="bf16"), workload.micro_batch), "bf16", "fp16")
    return graph_at(ref, opts, workload.micro_batch)


def relabelled(g: OpGraph, old: str, new: str) -> OpGraph:
    """`g` with its `old`-dtype ops in `new`: an fp16 step is the bf16 one's ops and bytes (the same sizes and
    tensor-core rates), but PyTorch routes some kernels by dtype."""
    return replace(g, ops=tuple(replace(op, dtype=new) if op.dtype == old else op for op in g.ops))


def static_rnn_unheld(g: OpGraph) -> float:
    """The most bytes one RNN training call of `g` is counted as holding for cuDNN's static persistent kernel that it
    does not hold at `g`'s batch (kernels.rnn_static_unheld_bytes), where the peak is in the forward (those rows are
    held while the call runs): a note, not taken off, since the forward's peak need not be at that call."""
    from gpuadvisor.estimate.graph import OpClass, Phase, RecurrentShape
    from gpuadvisor.estimate.kernels import rnn_static_unheld_bytes

    if g.mode is not GraphMode.TRAINING or not g.memory.phase.startswith(Phase.FORWARD.value):
        return 0.0
    sizes = [rnn_static_unheld_bytes(shape, BYTES_PER_DTYPE.get(op.dtype, 2.0), op.dtype)
             for op in g.ops if op.cls is OpClass.RECURRENT and op.phase is Phase.FORWARD
             and isinstance(shape := op.named_shape, RecurrentShape)]
    return max(sizes, default=0.0)


def graph_memory(workload: Workload, capacity_bytes: float | None = None) -> MemoryBreakdown:
    """The traced peak. On a card of `capacity_bytes` too small for it, 16-bit NCHW convolutions without room for
    their NHWC copies run without them (conv_fallback): the peak loses the largest of those copies, which is
    where it was (the fallback's own rule puts such a convolution at or above the card's memory)."""
    g = workload_graph(workload)
    items = dict.fromkeys(ITEMS, 0.0)
    m = g.memory.items
    items["weights"] = m.get("weights", 0.0)
    items["gradients"] = m.get("gradients", 0.0)
    items["optimizer states"] = m.get("optimizer states", 0.0)
    items["activations"] = m.get("activations", 0.0) + m.get("inputs", 0.0) + cal.WORKSPACE_BYTES
    notes = [f"traced op graph of {g.model} ({g.source}; input {g.input_desc or 'default'}): peak in "
             f"{g.memory.phase}; activations include {cal.WORKSPACE_BYTES / 2**20:.0f} MiB of cuBLAS/cuDNN workspace",
             *g.notes]
    dropped = fallen_back(g, capacity_bytes)
    if dropped:
        copies = max(b for _, b in dropped)
        items["activations"] = max(0.0, items["activations"] - copies)
        count = sum(op.count for op, _ in dropped)
        notes.append(f"{count} NCHW convolution(s) have no room for the NHWC copies cuDNN makes ({copies / 2**30:.1f} "
                     "GiB at most): cuDNN runs them without, an order of magnitude slower (priced); channels-last "
                     "needs no copies")
    unheld = static_rnn_unheld(g)
    if unheld:
        notes.append(f"cuDNN's static persistent LSTM kernel, which the trace assumes for its one-layer LSTM(s), takes "
                     f"batches of 128 or less in multiples of 8: at batch {g.batch} they launch every step and hold "
                     f"up to {unheld / 2**30:.2f} GiB less than counted here")
    if workload.data_parallel > 1 and workload.is_training:
        items["gradients"] += m.get("gradients", 0.0) or g.trainable_params * 4.0  # DDP's all-reduce buckets
        notes.append("DDP: its gradient buckets hold a second copy of the gradients")
    tensors = sum(items.values())
    items["allocator overhead"] = cal.ALLOCATOR_OVERHEAD * tensors
    items["CUDA context"] = float(cal.CUDA_CONTEXT_BYTES)
    phase = "inference" if g.mode is GraphMode.INFERENCE else f"training ({g.memory.phase})"
    return MemoryBreakdown(items=tuple(items.items()), phase=phase, notes=tuple(notes))


def graph_compute(workload: Workload, gpu_figures: HardwareFigures,
                  efficiency: Efficiency | None = None) -> ComputeEstimate:
    from gpuadvisor.estimate.opcost import step_time

    efficiencies = (efficiency or Efficiency()).validate()
    mfu, bw_eff = efficiencies.for_hardware(gpu_figures)
    peak = gpu_figures.peak_tflops(workload.math_dtype)
    if not peak or not gpu_figures.bandwidth_gbs:
        return ComputeEstimate(mode=workload.mode, time_s=None, mfu=mfu, bandwidth_efficiency=bw_eff,
                               hardware_source=gpu_figures.source,
                               notes=(f"{gpu_figures.name}: no throughput figures in the catalog",))
    g = workload_graph(workload)
    st = step_time(g, gpu_figures, efficiencies, matmul_tf32=workload.tf32)
    comm = 0.0
    dp = workload.data_parallel
    if workload.is_training:  # DDP all-reduces the gradients in the weights' dtype (fp32 under autocast)
        grad_bytes = g.trainable_params * (4.0 if workload.mixed_precision or workload.dtype == "fp32" else 2.0)
        comm = gradient_allreduce_s(grad_bytes, dp, gpu_figures, link_bytes_s(gpu_figures, efficiencies.interconnect))
    step = st.step_s + comm
    samples = workload.batch  # global batch: every data-parallel GPU runs its micro-batch at once
    steps = 1.0
    notes = [f"op graph: {len(g.ops)} distinct ops, {st.kernels} kernels and {g.host_ops} host ops a step "
             f"({g.source}); GPU time by op class: "
             + ", ".join(f"{k} {v * 1e3:.2f} ms" for k, v in sorted(st.by_class.items(), key=lambda kv: -kv[1])
                         if v >= 1e-5)]
    if workload.train_samples and workload.is_training:
        steps = max(1.0, workload.train_samples / samples)
        notes.append(f"{workload.train_samples:.3g} samples = {steps:,.0f} steps of {samples:,}")
    if st.host_s > st.device_s:
        notes.append(f"host-bound: eager PyTorch dispatches {g.host_ops} ops a step ({st.host_s * 1e3:.1f} ms of host "
                     f"time against {st.device_s * 1e3:.1f} ms of GPU time); a larger batch, CUDA graphs or "
                     "torch.compile would raise throughput")
    if st.nchw_s >= 0.05 * st.device_s and not workload.channels_last:
        notes.append(f"{StepEngineName.EAGER.value}: {st.nchw_s * 1e3:.1f} ms of the step's "
                     f"{st.device_s * 1e3:.1f} ms of GPU time is its NCHW layout (cuDNN's transposes around 16-bit "
                     "convolutions, unaligned 1x1 GEMMs, NCHW batch norms and pools); channels-last tensors "
                     "(model.to(memory_format=torch.channels_last) and the inputs; --channels-last here) would save it")
    tf32_convs = workload.dtype == "fp32" and not workload.tf32 and bool(gpu_figures.tflops.get("tf32")) \
        and any(op.cls.value == "conv" for op in g.ops)
    if tf32_convs:  # achieved MFU then against the TF32 peak the convolutions run at
        peak = gpu_figures.tflops["tf32"]
        notes.append(f"{StepEngineName.EAGER.value}: fp32 convolutions on TF32 tensor cores (cuDNN's default, "
                     "torch.backends.cudnn.allow_tf32), matmuls in full FP32 (PyTorch's default: "
                     "torch.backends.cuda.matmul.allow_tf32 is off)")
    per_sample = g.tokens_per_sample if g.unit == "tokens" else 1
    rate = samples / step
    reasons = (host_dispatch_note(gpu_figures),) if st.host_s > cal.LOW_CONFIDENCE_HOST_SHARE * step else ()
    notes += reasons
    return ComputeEstimate(
        mode=workload.mode, time_s=step * steps, step_time_s=step, steps=steps if workload.is_training else None,
        flops_per_step=g.flops * dp, tokens_per_s=rate * per_sample if g.unit == "tokens" else None,
        bound=st.bound, comm_time_s=comm, scaling_efficiency=st.step_s / step if step else 1.0, mfu=mfu,
        bandwidth_efficiency=bw_eff, hardware_source=gpu_figures.source,
        achieved_mfu=g.flops / step / (peak * 1e12) if step else None, host_time_s=st.host_s,
        confidence=Confidence.of(reasons), engine=StepEngineName.EAGER, notes=tuple(notes),
        # a text model's sample is a sequence of tokens_per_sample tokens: its rate in sequences/s, tokens_per_s beside
        low_confidence_reasons=reasons, samples_per_s=rate, unit="sequences" if g.unit == "tokens" else g.unit,
        breakdown={k: v for k, v in st.by_class.items()}, prefill_time_s=None if workload.is_training else step,
    )
