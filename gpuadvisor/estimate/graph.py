"""The op graph: what a workload asks of a GPU, op by op. Pure data, no torch.

Every front-end (the PyTorch tracer in `trace/`, the analytic transformer front-end) produces an
`OpGraph`; one cost model (`opcost.py`) times it. An op carries its class (which decides how it is
costed), the phase it runs in, its FLOPs and the bytes it reads and writes, and a class-specific
shape. The shape is stored as a row of numbers (`Op.shape`, the graph files' format) and read as a named shape
(`Op.named_shape`: `GemmShape`, `ConvShape`, `AttentionShape`, `RecurrentShape`, `NormShape`, `StreamShape`, by
`SHAPE_KINDS`); each named shape's `from_row` and `to_row` are the one place that knows the row's order.
Identical ops are merged with a `count`.

Graphs are traced at two batch sizes; `BatchGraph` holds both and gives the graph at any batch by
treating every op's figures as affine in the batch (exact for the per-sample ops of a model without
data-dependent control flow; tests/test_trace.py checks a third batch), and each phase's memory peak
likewise, the step's peak being the largest of them at that batch.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum, IntFlag
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

from gpuadvisor.core.errors import UserError

FORMAT = 3  # bump when the stored layout changes (2: a peak per phase; 3: convolution gradients)



class StreamLayout(IntFlag):
    """The layout of a streaming op's tensors (trace.classify.stream_shape): an input broadcast over the output, a
    full-size tensor in another layout than the output's (a transpose, a permuted view), mixed dtypes, and a batch
    norm forward that computes its batch's statistics (train mode) rather than an eval affine. DENSE: none of them
    (PyTorch's vectorized path)."""

    DENSE = 0
    BROADCAST = 1
    STRIDED = 2
    MIXED_DTYPE = 4
    BATCH_STATS = 8


BROADCAST, STRIDED, MIXED_DTYPE, BATCH_STATS = (StreamLayout.BROADCAST, StreamLayout.STRIDED,
                                                StreamLayout.MIXED_DTYPE, StreamLayout.BATCH_STATS)


class OpClass(str, Enum):
    """How an op is costed (opcost.py has one formula per class)."""

    GEMM = "gemm"
    CONV = "conv"
    ATTENTION = "attention"
    NORM = "norm"
    ELEMENTWISE = "elementwise"
    REDUCTION = "reduction"
    GATHER = "gather"  # embedding lookups, index/gather/scatter (GNN message passing)
    RECURRENT = "recurrent"  # a fused RNN/LSTM/GRU layer (cuDNN): sequential over time steps
    OPTIMIZER = "optimizer"
    COLLECTIVE = "collective"


class Phase(str, Enum):
    FORWARD = "forward"
    BACKWARD = "backward"
    OPTIMIZER = "optimizer"


class GraphMode(str, Enum):
    """What one traced step is: a training step (forward, backward, optimizer) or one forward."""

    TRAINING = "training"
    INFERENCE = "inference"


# --- named shapes: what each op class's pricing formula reads (opcost.py), each stored as a row of numbers
# (`to_row`, the graph files' format) and read back by `from_row`; FIELDS names the row's numbers in order ---

class TensorLayout(str, Enum):
    """How a convolution's activations lie in memory."""

    NCHW = "nchw"  # channels first: PyTorch's default
    NHWC = "nhwc"  # channels last (torch.channels_last): cuDNN's tensor-core kernels take it as it is


class ConvGradients(IntFlag):
    """Which gradients a convolution backward computes; FORWARD (none) for a forward."""

    FORWARD = 0
    INPUT = 1
    WEIGHT = 2
    BIAS = 4  # a reduction over every output position


def _checked(kind: type[OpShape], row: Sequence[float], *, optional: int = 0) -> list[float]:
    """`row` as floats, refused unless it has one number per field of `kind` (the last `optional` may be absent)."""
    n = len(kind.FIELDS)
    if not n - optional <= len(row) <= n:
        raise ValueError(f"a {kind.__name__} row is ({', '.join(kind.FIELDS)}); got {len(row)} numbers: "
                         f"{tuple(row)}")
    return [float(x) for x in row]


@dataclass(frozen=True)
class GemmShape:
    """`batch` matrix products of (m x k) @ (k x n)."""

    batch: float
    m: float
    n: float
    k: float
    FIELDS: ClassVar[tuple[str, ...]] = ("batch", "m", "n", "k")

    @classmethod
    def from_row(cls, row: Sequence[float]) -> GemmShape:
        return cls(*_checked(cls, row))

    def to_row(self) -> tuple[float, ...]:
        return (self.batch, self.m, self.n, self.k)


@dataclass(frozen=True)
class ConvShape:
    """A 2-D convolution (1-D and 3-D ones folded into 2-D: trace.classify.conv_shape). The stride and padding are
    what take the input's height and width to the output's. `transposed`: a transposed convolution, recorded as the
    convolution whose data gradient it is (its input and output swapped): cuDNN runs its forward as that
    convolution's dgrad and its input's gradient as that convolution's forward; `dilation`: the filter's (its largest
    over the dimensions). Both optional last row fields, left out at their defaults."""

    batch: float
    in_channels: float
    in_height: float
    in_width: float
    out_channels: float
    kernel_height: float
    kernel_width: float
    groups: float
    out_height: float
    out_width: float
    layout: TensorLayout
    gradients: ConvGradients  # FORWARD for a forward
    transposed: bool = False
    dilation: float = 1.0  # the filter's, the largest over its dimensions
    FIELDS: ClassVar[tuple[str, ...]] = ("batch", "in_channels", "in_height", "in_width", "out_channels",
                                         "kernel_height", "kernel_width", "groups", "out_height", "out_width",
                                         "nhwc", "gradients", "transposed", "dilation")

    @property
    def stride(self) -> int:
        """The stride along the width, read off the input and output widths (1 where no output was recorded)."""
        return round(self.in_width / self.out_width) if self.out_width else 1

    @classmethod
    def from_row(cls, row: Sequence[float]) -> ConvShape:
        n, c, h, w, k, r, s, groups, oh, ow, nhwc, grads, *rest = _checked(cls, row, optional=2)
        return cls(n, c, h, w, k, r, s, groups, oh, ow, TensorLayout.NHWC if nhwc else TensorLayout.NCHW,
                   ConvGradients(int(grads)), bool(rest and rest[0]), rest[1] if len(rest) > 1 else 1.0)

    def to_row(self) -> tuple[float, ...]:
        row = (self.batch, self.in_channels, self.in_height, self.in_width, self.out_channels, self.kernel_height,
               self.kernel_width, self.groups, self.out_height, self.out_width,
               1.0 if self.layout is TensorLayout.NHWC else 0.0, float(self.gradients))
        if self.dilation != 1.0:
            return (*row, 1.0 if self.transposed else 0.0, self.dilation)
        return (*row, 1.0) if self.transposed else row  # rows of plain convolutions stay as they were stored


@dataclass(frozen=True)
class AttentionShape:
    """One fused attention call (SDPA, flash): `batch` x `heads` queries of `q_length` over `kv_length` keys."""

    batch: float
    heads: float
    q_length: float
    kv_length: float
    head_dim: float
    causal: bool
    FIELDS: ClassVar[tuple[str, ...]] = ("batch", "heads", "q_length", "kv_length", "head_dim", "causal")

    @classmethod
    def from_row(cls, row: Sequence[float]) -> AttentionShape:
        b, heads, sq, skv, d, causal = _checked(cls, row)
        return cls(b, heads, sq, skv, d, bool(causal))

    def to_row(self) -> tuple[float, ...]:
        return (self.batch, self.heads, self.q_length, self.kv_length, self.head_dim, 1.0 if self.causal else 0.0)


@dataclass(frozen=True)
class RecurrentShape:
    """One fused RNN/LSTM/GRU module (cuDNN): `layers` layers over `steps` time steps; `gates` per cell (LSTM 4)."""

    batch: float
    steps: float
    input_size: float
    hidden_size: float
    layers: float
    gates: float
    directions: float
    FIELDS: ClassVar[tuple[str, ...]] = ("batch", "steps", "input_size", "hidden_size", "layers", "gates",
                                         "directions")

    @classmethod
    def from_row(cls, row: Sequence[float]) -> RecurrentShape:
        return cls(*_checked(cls, row))

    def to_row(self) -> tuple[float, ...]:
        return (self.batch, self.steps, self.input_size, self.hidden_size, self.layers, self.gates, self.directions)


@dataclass(frozen=True)
class StreamShape:
    """A streaming op (elementwise, reduction, gather, optimizer, collective): its largest tensor's elements and
    its tensors' layout; for a pooling window (2-D max and average pooling), the taps of its window and the input
    elements each output steps over (kernel and stride, height x width): its kernels' work per element grows with
    them (opcost.pool_work_s)."""

    elements: float
    layout: StreamLayout
    window_taps: float | None = None
    stride_taps: float | None = None
    FIELDS: ClassVar[tuple[str, ...]] = ("elements", "layout", "window_taps", "stride_taps")

    @classmethod
    def from_row(cls, row: Sequence[float]) -> StreamShape:
        elements, layout, *window = _checked(cls, row, optional=2)
        if len(window) == 1:
            raise ValueError(f"a StreamShape row gives both window_taps and stride_taps or neither: {tuple(row)}")
        return cls(elements, StreamLayout(int(layout)), *window)

    def to_row(self) -> tuple[float, ...]:
        tail = () if self.window_taps is None or self.stride_taps is None else (self.window_taps, self.stride_taps)
        return (self.elements, float(self.layout), *tail)


@dataclass(frozen=True)
class NormShape:
    """A normalisation: its largest tensor's elements, its layout, and the elements each mean and variance reduce
    over (None where the tracer saw no input to measure it on)."""

    elements: float
    layout: StreamLayout
    reduce_length: float | None = None
    FIELDS: ClassVar[tuple[str, ...]] = ("elements", "layout", "reduce_length")

    @classmethod
    def from_row(cls, row: Sequence[float]) -> NormShape:
        elements, layout, *reduce = _checked(cls, row, optional=1)
        return cls(elements, StreamLayout(int(layout)), reduce[0] if reduce else None)

    def to_row(self) -> tuple[float, ...]:
        tail = () if self.reduce_length is None else (self.reduce_length,)
        return (self.elements, float(self.layout), *tail)


OpShape = GemmShape | ConvShape | AttentionShape | RecurrentShape | NormShape | StreamShape

#: the named shape each op class records (an empty row: none recorded)
SHAPE_KINDS: dict[OpClass, type[OpShape]] = {
    OpClass.GEMM: GemmShape, OpClass.CONV: ConvShape, OpClass.ATTENTION: AttentionShape,
    OpClass.RECURRENT: RecurrentShape, OpClass.NORM: NormShape, OpClass.ELEMENTWISE: StreamShape,
    OpClass.REDUCTION: StreamShape, OpClass.GATHER: StreamShape, OpClass.OPTIMIZER: StreamShape,
    OpClass.COLLECTIVE: StreamShape,
}


def named_shape(cls: OpClass, row: Sequence[float]) -> OpShape | None:
    """The named shape of an op of class `cls` stored as `row`; None for an empty row (no shape recorded)."""
    return SHAPE_KINDS[cls].from_row(row) if len(row) else None


#: memory items of a traced peak, in display order
MEMORY_ITEMS = ("weights", "gradients", "optimizer states", "activations", "inputs")


@dataclass(frozen=True)
class Op:
    name: str
    cls: OpClass
    phase: Phase
    dtype: str
    flops: float
    read: float  # bytes
    written: float  # bytes
    shape: tuple[float, ...] = ()
    count: int = 1

    @cached_property
    def named_shape(self) -> OpShape | None:
        """`shape` read by the fields of this class's shape kind (SHAPE_KINDS); None where none was recorded."""
        return named_shape(self.cls, self.shape)

    @property
    def key(self) -> tuple[Any, ...]:
        return (self.name, self.cls, self.phase, self.dtype, self.shape, self.flops, self.read, self.written)

    def to_row(self) -> list[Any]:
        return [self.name, self.cls.value, self.phase.value, self.dtype, self.flops, self.read, self.written,
                list(self.shape), self.count]

    @classmethod
    def from_row(cls, row: list[Any]) -> Op:
        name, c, ph, dt, fl, rd, wr, shape, count = row
        return cls(name, OpClass(c), Phase(ph), dt, float(fl), float(rd), float(wr), tuple(shape), int(count))


def merge_pair(low: OpGraph, high: OpGraph) -> BatchGraph:
    """Two traces of one model as a BatchGraph, merging ops that are identical in both: an op merged in
    one trace only (two shapes that happen to coincide at one batch) would break the alignment."""
    if len(low.ops) != len(high.ops):
        return BatchGraph(replace(low, ops=merge(low.ops)), replace(high, ops=merge(high.ops)))
    seen: dict[tuple[Any, ...], int] = {}
    lo_ops: list[Op] = []
    hi_ops: list[Op] = []
    for a, b in zip(low.ops, high.ops, strict=False):
        k = (a.key, b.key)
        if k in seen:
            i = seen[k]
            lo_ops[i] = replace(lo_ops[i], count=lo_ops[i].count + a.count)
            hi_ops[i] = replace(hi_ops[i], count=hi_ops[i].count + b.count)
        else:
            seen[k] = len(lo_ops)
            lo_ops.append(a)
            hi_ops.append(b)
    return BatchGraph(replace(low, ops=tuple(lo_ops)), replace(high, ops=tuple(hi_ops)))


def merge(ops: Iterable[Op]) -> tuple[Op, ...]:
    """Identical ops as one with a count (order of first appearance kept)."""
    seen: dict[tuple[Any, ...], Op] = {}
    for op in ops:
        k = op.key
        seen[k] = replace(seen[k], count=seen[k].count + op.count) if k in seen else op
    return tuple(seen.values())


@dataclass(frozen=True)
class MemoryPeak:
    """The peak of live tensor bytes over the traced step, and what was alive at it."""

    peak_bytes: float
    phase: str
    items: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class OpGraph:
    """One step of one model at one batch size."""

    model: str
    mode: GraphMode
    batch: int
    ops: tuple[Op, ...]
    params: int
    trainable_params: int
    memory: MemoryPeak
    unit: str = "samples"
    tokens_per_sample: int = 1
    input_desc: str = ""
    source: str = ""  # e.g. "traced (torch 2.13.0, fake tensors)" or "analytic"
    notes: tuple[str, ...] = ()
    host_ops: int = 0  # aten ops dispatched by the host, views included (eager host time)
    #: forward kernels autograd does not record (nothing they read needs a gradient: a frozen base, or every
    #: forward op of an inference step): the host spends an inference op's time on each (opcost.host_counts)
    untracked_ops: int = 0
    phase_peaks: tuple[MemoryPeak, ...] = ()  # the peak within each phase; `memory` is the largest of them

    def total(self, attr: str, *, phase: Phase | None = None, cls: OpClass | None = None) -> float:
        return sum(getattr(o, attr) * o.count for o in self.ops
                   if (phase is None or o.phase is phase) and (cls is None or o.cls is cls))

    @property
    def flops(self) -> float:
        return self.total("flops")

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "mode": self.mode.value, "batch": self.batch, "params": self.params,
                "trainable_params": self.trainable_params, "unit": self.unit,
                "tokens_per_sample": self.tokens_per_sample, "input": self.input_desc, "source": self.source,
                "notes": list(self.notes), "host_ops": self.host_ops, "untracked_ops": self.untracked_ops,
                "memory": _peak_dict(self.memory), "phase_peaks": [_peak_dict(m) for m in self.phase_peaks],
                "ops": [o.to_row() for o in self.ops]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> OpGraph:
        return cls(model=d["model"], mode=GraphMode(d["mode"]), batch=int(d["batch"]),
                   ops=tuple(Op.from_row(r) for r in d["ops"]), params=int(d["params"]),
                   trainable_params=int(d["trainable_params"]),
                   memory=_peak_from(d["memory"]), phase_peaks=tuple(_peak_from(m) for m in d.get("phase_peaks", ())),
                   unit=d.get("unit", "samples"), tokens_per_sample=int(d.get("tokens_per_sample", 1)),
                   input_desc=d.get("input", ""), source=d.get("source", ""), notes=tuple(d.get("notes", ())),
                   host_ops=int(d.get("host_ops", 0)), untracked_ops=int(d.get("untracked_ops", 0)))


def _peak_dict(m: MemoryPeak) -> dict[str, Any]:
    return {"peak_bytes": m.peak_bytes, "phase": m.phase, "items": m.items}


def _peak_from(d: dict[str, Any]) -> MemoryPeak:
    return MemoryPeak(float(d["peak_bytes"]), d["phase"], {k: float(v) for k, v in d["items"].items()})


def _scale_peak(lo: MemoryPeak, hi: MemoryPeak, ba: int, bb: int, batch: int) -> MemoryPeak:
    """One phase's peak at `batch`: its total is affine in the batch (the step's own memory), and so is each
    batch-independent item; activations are the rest. Scaling the items one by one would not add up to the
    total where what is alive at the peak shifts between the two traces (gradients held at one, not the other)."""
    total = _affine(lo.peak_bytes, hi.peak_bytes, ba, bb, batch)
    items = {k: _affine(lo.items.get(k, 0.0), hi.items.get(k, 0.0), ba, bb, batch)
             for k in MEMORY_ITEMS if k != "activations"}
    items["activations"] = max(0.0, total - sum(items.values()))
    return MemoryPeak(total, hi.phase, items)


def _affine(a: float, b: float, ba: int, bb: int, batch: int) -> float:
    """The value at `batch` of the line through (ba, a) and (bb, b), never below zero."""
    slope = (b - a) / (bb - ba)
    return max(0.0, a + slope * (batch - ba))


#: the two batches a model's step is traced at: every figure is a line in the batch between them (BatchGraph)
TRACE_BATCHES = (2, 4)


@dataclass(frozen=True)
class BatchGraph:
    """A model's step traced at two batch sizes, giving the graph at any batch (module docstring)."""

    low: OpGraph
    high: OpGraph

    def __post_init__(self) -> None:
        if self.low.batch >= self.high.batch:
            raise ValueError("BatchGraph: low batch must be below high batch")

    @property
    def aligned(self) -> bool:
        """Whether both traces have the same ops in the same order (else only their own batches are known)."""
        a, b = self.low.ops, self.high.ops
        return len(a) == len(b) and all(
            x.name == y.name and x.phase is y.phase and x.count == y.count and len(x.shape) == len(y.shape)
            for x, y in zip(a, b, strict=False))

    def at(self, batch: int) -> OpGraph:
        lo, hi = self.low, self.high
        if batch == lo.batch:
            return lo
        if batch == hi.batch:
            return hi
        if not self.aligned:
            raise UserError(f"{lo.model}: its trace differs between batch {lo.batch} and {hi.batch}, so it "
                            f"cannot be scaled to batch {batch}; trace it at that batch (needs PyTorch)")
        ba, bb = lo.batch, hi.batch
        ops = []
        for x, y in zip(lo.ops, hi.ops, strict=False):
            shape = tuple(round(_affine(p, q, ba, bb, batch)) for p, q in zip(x.shape, y.shape, strict=False))
            ops.append(replace(x, flops=_affine(x.flops, y.flops, ba, bb, batch),
                               read=_affine(x.read, y.read, ba, bb, batch),
                               written=_affine(x.written, y.written, ba, bb, batch), shape=shape))
        lo_phases = {m.phase: m for m in lo.phase_peaks}
        peaks = tuple(_scale_peak(lo_phases[m.phase], m, ba, bb, batch) for m in hi.phase_peaks if m.phase in lo_phases)
        peak = max(peaks, key=lambda m: m.peak_bytes) if peaks else _scale_peak(lo.memory, hi.memory, ba, bb, batch)
        return replace(hi, batch=batch, ops=tuple(ops), memory=peak, phase_peaks=peaks,
                       host_ops=round(_affine(lo.host_ops, hi.host_ops, ba, bb, batch)),
                       untracked_ops=round(_affine(lo.untracked_ops, hi.untracked_ops, ba, bb, batch)))

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "low": self.low.to_dict(), "high": self.high.to_dict()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BatchGraph:
        if d.get("format") != FORMAT:
            raise UserError(f"op graph format {d.get('format')!r} is not {FORMAT}: re-trace it")
        return cls(OpGraph.from_dict(d["low"]), OpGraph.from_dict(d["high"]))


def save(graphs: dict[str, BatchGraph], path: Path) -> None:
    """Graphs by key ('spec|mode|variant') as gzip'd JSON, written atomically."""
    from gpuadvisor.core.fileio import atomic_write_bytes

    data = json.dumps({k: g.to_dict() for k, g in sorted(graphs.items())}, separators=(",", ":")).encode()
    atomic_write_bytes(path, gzip.compress(data, mtime=0), force=True)


def load(path: Path) -> dict[str, BatchGraph]:
    try:
        raw = json.loads(gzip.decompress(path.read_bytes()))
    except (OSError, ValueError, EOFError) as e:
        raise UserError(f"{path}: not a readable op-graph file: {e}") from None
    return {k: BatchGraph.from_dict(v) for k, v in raw.items()}
