"""A symbolic autograd tape: the ops one eager PyTorch step launches, written down without PyTorch.

The analytic front-ends (decoder.py) write a model's forward against this tape with the same calls the
model's PyTorch code makes (casts, matmuls, elementwise ops, SDPA); the tape records each op as the tracer
would (class, dtype of its largest floating input, bytes of each distinct input and output, GEMM and
attention shapes) and, for a training step, replays autograd: each differentiable op leaves a node whose
backward emits the ops PyTorch's derivative formulas launch, gradients of a tensor used twice are added,
gradients are cast back to their input's dtype, and leaf parameters accumulate theirs.

Tensors are sizes and dtypes only. Every storage records the op that created it and the last op that used
it (an input, or a saved tensor of a node whose backward ran), so the live bytes after each op, and the
peak of each phase, follow without per-architecture formulas. `views` counts the ops the host dispatches
that launch no kernel (views, reshapes), which eager host time scales with.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from gpuadvisor.estimate.graph import BROADCAST, MIXED_DTYPE, STRIDED, Op, OpClass, Phase, StreamLayout, StreamShape

ELEM = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "int64": 8.0, "bool": 1.0, "other": 8.0}
FLOATS = ("fp32", "bf16", "fp16")


def stream_shape(ins: list[T], outs: list[T]) -> tuple[float, ...]:
    """(elements of the largest tensor, layout bits) of a streaming op, as the tracer records them
    (trace.classify.stream_shape): mixed floating dtypes among tensors of more than one element, an input
    broadcast (smaller than the largest tensor, more than one element), a full-size input in another layout
    than the largest output."""
    tensors = ins + outs
    biggest = max((t.numel for t in tensors), default=0.0)
    if not biggest:
        return StreamShape(0.0, StreamLayout.DENSE).to_row()
    ref = max(outs or ins, key=lambda t: t.numel)
    mixed = len({t.dtype for t in tensors if t.dtype in FLOATS and t.numel > 1}) > 1
    bits = MIXED_DTYPE if mixed else StreamLayout.DENSE
    for t in ins:
        if 1 < t.numel < biggest:
            bits |= BROADCAST
        elif t.numel == biggest and t.strided != ref.strided:
            bits |= STRIDED
    return StreamShape(float(biggest), bits).to_row()


class Storage:
    """Bytes alive from the op that made them to the last op that read them (or forever: `hold`)."""

    __slots__ = ("born", "hold", "kind", "last", "nbytes", "numel")

    def __init__(self, nbytes: float, born: int, numel: float = 0.0) -> None:
        self.nbytes = nbytes
        self.numel = numel
        self.born = born
        self.last = born
        self.hold = False  # kept to the end of the step (model outputs, the KV cache, parameters, states)
        self.kind = "activations"


@dataclass(eq=False)
class T:
    """A symbolic tensor: element count and dtype; `storage` is shared by views."""

    numel: float
    dtype: str
    storage: Storage
    requires_grad: bool = False
    node: Node | None = None  # the op that made it (None for leaves)
    param: bool = False
    grad: T | None = None
    strided: bool = False  # not contiguous: a transposed, sliced or expanded view, or an output following one
    permuted: bool = False  # its dimensions in another order (a transpose): elementwise outputs follow it

    @property
    def nbytes(self) -> float:
        return self.numel * ELEM[self.dtype]


@dataclass(eq=False)
class Node:
    """One differentiable op: its inputs and the rule that emits its backward ops for an output gradient."""

    inputs: list[T]
    backward: Callable[[T], list[T | None]]  # the output's gradient -> one gradient (or None) per input
    saved: list[T] = field(default_factory=list)
    seq: int = 0
    op: int = 0  # the index of the op that made its output
    region: Region | None = None  # the checkpointed region it was made in


@dataclass(eq=False)
class Region:
    """A checkpointed call (torch.utils.checkpoint, use_reentrant=False, as transformers enables it): its
    forward keeps none of its nodes' saved tensors; the backward's first node that needs one re-runs `fn` on
    the same input, up to the last saved tensor (early stop), and every node of the region runs its twin's
    backward, on the recomputed tensors."""

    fn: Callable[[T], T]
    x: T
    autocast: str
    nodes: list[Node] = field(default_factory=list)
    twins: list[Node] | None = None


class Tape:
    def __init__(self, *, grad: bool) -> None:
        self.ops: list[Op] = []
        self.phase = Phase.FORWARD
        self.grad_enabled = grad
        self.storages: list[Storage] = []
        self.nodes: list[Node] = []
        self.views = 0  # host ops that launch nothing
        self.untracked = 0  # forward kernels autograd records no node for (graph.OpGraph.untracked_ops)
        self.autocast = ""  # the autocast dtype inside a mixed-precision forward
        self._weight_casts: dict[int, T] = {}
        self._region: Region | None = None  # the checkpointed region being written
        self.runs_in: dict[int, Phase] = {}  # ops labelled with another phase than the one they run in
        self._uses: list[tuple[int, Storage]] | None = None  # (op, storage read) while recomputing

    # ---- tensors and ops ------------------------------------------------------------------------
    def tensor(self, numel: float, dtype: str, *, requires_grad: bool = False) -> T:
        st = Storage(numel * ELEM[dtype], len(self.ops), numel)
        self.storages.append(st)
        return T(numel, dtype, st, requires_grad=requires_grad)

    def view(self, x: T, numel: float | None = None, n: int = 1, *, strided: bool | None = None,
             permuted: bool | None = None) -> T:
        """A view of `x` (a reshape, transpose, slice or expand): no kernel, the same storage. It keeps x's
        layout unless told: a slice or an expand is `strided` (not contiguous) in x's dimension order, a
        transpose is strided and `permuted`."""
        self.views += n
        return T(x.numel if numel is None else numel, x.dtype, x.storage, x.requires_grad, x.node,
                 strided=x.strided if strided is None else strided,
                 permuted=x.permuted if permuted is None else permuted)

    def like(self, x: T) -> T:
        """A new tensor in x's layout (empty_like: a kernel's gradient of an input)."""
        t = self.new(x.numel, x.dtype)
        t.strided, t.permuted = x.permuted, x.permuted
        return t

    def emit(self, name: str, cls: OpClass, ins: list[T], outs: list[T], *, shape: tuple[float, ...] = (),
             flops: float = 0.0, read: float | None = None, written: float | None = None) -> None:
        """Record one kernel: bytes of each distinct input storage read and each output written, as the tracer
        counts them; inputs are alive up to here."""
        idx = len(self.ops)
        seen: set[int] = set()
        nread = 0.0
        for t in ins:
            if id(t.storage) not in seen:
                seen.add(id(t.storage))
                nread += t.nbytes
            t.storage.last = max(t.storage.last, idx)
            if self._uses is not None:
                self._uses.append((idx, t.storage))
        floats = [t for t in ins if t.dtype in FLOATS]
        dtype = max(floats, key=lambda t: t.numel).dtype if floats else "other"
        if not shape:
            shape = stream_shape(ins, outs)
        if self.phase is Phase.FORWARD and not (self.grad_enabled and any(t.requires_grad for t in ins)):
            self.untracked += 1
        self.ops.append(Op(name, cls, self.phase, dtype, flops, nread if read is None else read,
                           sum(t.nbytes for t in outs) if written is None else written, shape))

    def new(self, numel: float, dtype: str) -> T:
        """An op's output: born at the op about to be emitted."""
        return self.tensor(numel, dtype)

    def op(self, name: str, ins: list[T], numel: float, dtype: str, cls: OpClass = OpClass.ELEMENTWISE, *,
           backward: Callable[[T], list[T | None]] | None = None, saved: tuple[T, ...] = (),
           contiguous: bool = False, **kw: float | tuple[float, ...]) -> T:
        """Emit a forward op making one tensor; with `backward`, a node when an input needs a gradient. An
        elementwise output takes the dimension order of its first full-size input (TensorIterator's rule: a
        transposed input makes a transposed output; a slice or an expand, a contiguous one) unless `contiguous`
        (cat, .contiguous(), reductions)."""
        out = self.new(numel, dtype)
        if cls is OpClass.ELEMENTWISE and not contiguous:
            out.permuted = out.strided = next((t.permuted for t in ins if t.numel == numel), False)
        self.emit(name, cls, ins, [out], **kw)  # type: ignore[arg-type]
        if backward is not None and self.grad_enabled and any(t.requires_grad for t in ins):
            self.attach(out, ins, backward, saved)
        return out

    def attach(self, out: T, ins: list[T], backward: Callable[[T], list[T | None]], saved: tuple[T, ...]) -> None:
        """Make `out` the output of a differentiable node (for ops emitted by hand: after their op)."""
        node = Node(list(ins), backward, list(saved), len(self.nodes), len(self.ops) - 1, self._region)
        self.nodes.append(node)
        if self._region is not None:
            self._region.nodes.append(node)
        out.requires_grad, out.node = True, node

    # ---- activation checkpointing -----------------------------------------------------------------
    def checkpoint(self, fn: Callable[[T], T], x: T) -> T:
        """fn(x) as a checkpointed region (Region): written as usual, its saved tensors recomputed later."""
        if not self.grad_enabled:
            return fn(x)
        region = Region(fn, x, self.autocast)
        self._region = region
        try:
            return fn(x)
        finally:
            self._region = None

    def _recompute(self, region: Region) -> None:
        """Re-run a region's forward in the backward (under its forward's autocast, with a fresh weight-cast
        cache), stopping as PyTorch's early stop does: at the last saved tensor, before the op it feeds
        when that tensor is an input of it."""
        autocast, casts = self.autocast, self._weight_casts
        self.autocast, self._weight_casts = region.autocast, {}
        start_node, start_op, start_storage = len(self.nodes), len(self.ops), len(self.storages)
        lasts = {id(st): st.last for st in self.storages}
        self._uses = []
        try:
            region.fn(region.x)
        finally:
            uses, self._uses = self._uses, None
            self.autocast, self._weight_casts = autocast, casts
        twins = self.nodes[start_node:]
        del self.nodes[start_node:]
        saving = [i for i, n in enumerate(twins) if n.saved]
        if not saving:
            region.twins = []
            return
        last = twins[saving[-1]]
        inputs_only = all(t.storage.born < last.op for t in last.saved)
        cut = last.op if inputs_only else last.op + 1
        region.twins = twins[:saving[-1] + 1]
        del self.ops[cut:]
        self.storages[start_storage:] = [st for st in self.storages[start_storage:] if st.born < cut]
        for st in {id(st): st for _, st in uses}.values():  # reads by the ops cut off never happened
            st.last = max([lasts.get(id(st), st.born)] + [i for i, s2 in uses if s2 is st and i < cut])
        assert start_op <= cut

    def op_view(self, out: T, base: T, backward: Callable[[T], list[T | None]]) -> T:
        """A view with a backward of its own (a slice): no forward kernel."""
        if self.grad_enabled and base.requires_grad:
            self.attach(out, [base], backward, ())
        return out

    def cast_weight(self, weight: T) -> T:
        """Autocast's cast of a parameter, made once per forward and reused (its weight cache)."""
        if weight.dtype == self.autocast:
            return weight
        if id(weight) not in self._weight_casts:
            self._weight_casts[id(weight)] = self.op("_to_copy", [weight], weight.numel, self.autocast,
                                                     backward=lambda g: [
                self.op("_to_copy", [g], g.numel, weight.dtype)])
        return self._weight_casts[id(weight)]

    def end_autocast(self) -> None:
        """Leaving autocast frees its cache: casts of trainable weights lived to here."""
        for c in self._weight_casts.values():
            if c.node is not None:  # a cast of a weight that requires a gradient (the ones autocast caches)
                c.storage.last = max(c.storage.last, len(self.ops) - 1)
        self.autocast = ""
        self._weight_casts.clear()

    # ---- backward ---------------------------------------------------------------------------------
    def run_backward(self, loss: T) -> None:
        """Autograd's engine: nodes in reverse creation order, gradients summed as they arrive, cast back to
        each input's dtype, accumulated into leaf parameters."""
        self.phase = Phase.BACKWARD
        pending: dict[int, T] = {}
        one = self.op("ones_like", [loss], 1, loss.dtype)
        if loss.node is not None:
            pending[loss.node.seq] = one
        for node in list(reversed(self.nodes)):
            g = pending.pop(node.seq, None)
            if g is None:
                continue
            run = node
            region = node.region
            if region is not None:  # a checkpointed node runs its recomputed twin
                if region.twins is None and node.saved:
                    self._recompute(region)
                k = region.nodes.index(node)
                if region.twins is not None and k < len(region.twins):
                    run = region.twins[k]
            grads = run.backward(g)
            last = len(self.ops) - 1
            g.storage.last = max(g.storage.last, last)
            for t in run.saved:
                t.storage.last = max(t.storage.last, last)
            for x, gx in zip(node.inputs, grads, strict=True):
                if gx is None or not x.requires_grad:
                    continue
                if gx.dtype != x.dtype:  # the engine casts a gradient to its input's dtype
                    gx = self.op("_to_copy", [gx], gx.numel, x.dtype)
                if x.node is None:
                    self._accumulate(x, gx)
                elif x.node.seq in pending:
                    prev = pending[x.node.seq]
                    pending[x.node.seq] = self.op("add", [prev, gx], gx.numel, gx.dtype)
                else:
                    pending[x.node.seq] = gx

    def _accumulate(self, p: T, g: T) -> None:
        """A leaf's gradients summed as they arrive (a tensor used twice, tied embeddings); a parameter's kept."""
        if p.grad is None:
            p.grad = g
        else:  # .grad = .grad + new, the old .grad freed
            old = p.grad
            p.grad = self.op("add", [old, g], g.numel, g.dtype)
            old.storage.hold = False
        if p.param:
            p.grad.storage.hold = True

    # ---- memory -----------------------------------------------------------------------------------
    def phase_peaks(self, kinds: dict[int, str], scales: Callable[[Storage], bool] | None = None
                    ) -> dict[Phase, tuple[float, dict[str, float]]]:
        """The largest live bytes just after each op's outputs are allocated, per phase, and what was alive then
        by item (`kinds`: id(storage) -> item for weights, gradients and states; the rest are activations). With
        `scales`, instead the moment of each phase with the most bytes in storages that scale with the batch (the
        tracer's second peak per phase, recorder.step_peaks), and all that was alive then."""
        n = len(self.ops)
        delta = [0.0] * (n + 2)
        sdelta = [0.0] * (n + 2)
        for st in self.storages:
            end = n if st.hold else st.last
            delta[st.born] += st.nbytes
            delta[end + 1] -= st.nbytes
            if scales is not None and scales(st):
                sdelta[st.born] += st.nbytes
                sdelta[end + 1] -= st.nbytes
        peaks: dict[Phase, tuple[float, int, float]] = {}
        live = scaling = 0.0
        for i, op in enumerate(self.ops):
            live += delta[i]
            scaling += sdelta[i]
            phase = self.runs_in.get(i, op.phase)
            metric = live if scales is None else scaling
            if metric > peaks.get(phase, (-1.0, 0, 0.0))[0]:
                peaks[phase] = (metric, i, live)
        out: dict[Phase, tuple[float, dict[str, float]]] = {}
        for ph, (_, i, total) in peaks.items():
            items: dict[str, float] = {}
            for st in self.storages:
                if st.born <= i and (st.hold or st.last >= i):
                    k = kinds.get(id(st), "activations")
                    items[k] = items.get(k, 0.0) + st.nbytes
            out[ph] = (total, items)
        return out
