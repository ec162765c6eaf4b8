"""Recording one step of a PyTorch model: every aten op it dispatches, and the live tensor bytes.

A TorchDispatchMode sees each op after autograd and after composite ops are decomposed, which is
where kernels are launched: `classify` turns it into an `Op`. Memory follows torch.distributed's
MemTracker: each output's storage is counted when it is created and uncounted when it is freed
(a weakref finalizer), so the peak and what was alive at it come from the step itself, not from
per-architecture formulas. Storages get a serial number, so a freed one's recycled id is never
mistaken for a later tensor's.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from functools import partial
from typing import Any

import gpuadvisor.estimate.trace.classify as C
from gpuadvisor.estimate.conv_backend import bias_added_apart, nchw_gemm
from gpuadvisor.estimate.graph import ConvShape, Op, OpClass, OpShape, Phase, TensorLayout
from gpuadvisor.estimate.kernels import attention_flops
from gpuadvisor.estimate.trace.torchlib import import_torch

torch = import_torch()
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402
from torch.utils._pytree import tree_leaves  # noqa: E402


class Recorder(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.ops: list[Op] = []
        self.phase = Phase.FORWARD
        self.recording = False
        self.suppress = 0  # > 0 inside a fused recurrent layer: its inner ops are not kernels of their own
        self.dispatched = 0  # aten ops the host dispatches, views included: what eager host time scales with
        self.untracked = 0  # forward kernels autograd records no node for (graph.OpGraph.untracked_ops)
        self.live: dict[int, tuple[int, float]] = {}  # id(storage) -> (serial, bytes)
        self._serial = 0
        self.live_bytes = 0.0
        # the peak within each phase (phase_peaks), and what was alive at it: a step's overall peak can move from
        # one phase to another as the batch grows, so each phase's is kept (graph.BatchGraph scales them); and the
        # moment of each phase with the most bytes in tensors that scale with the batch (step_peaks): at the small
        # trace batches weights and their casts hide it, at a real batch it can be the peak (a frozen base's wide
        # early activations against the trainable stage's saved ones). Each is kept as (bytes, the moment), a moment
        # being a count of the changes to `live`; what was alive then is read back from when each storage was
        # counted and freed (alive_at), not copied at every new peak (most allocations of a forward are one)
        self._phase_peak_at: dict[Phase, tuple[float, int]] = {}
        self._step_peak_at: dict[Phase, tuple[float, int]] = {}
        self._moment = 0
        self._born: dict[int, tuple[int, float]] = {}  # serial -> (the moment it was counted, bytes)
        self._died: dict[int, int] = {}  # serial -> the moment it was freed
        self._refs: dict[int, Any] = {}  # id(storage) -> a weak reference whose callback frees it (_free)
        self.batch = 0  # the traced batch: a storage first seen as (batch x ...) and not weight-shaped scales with it
        self.weight_shapes: set[tuple[int, ...]] = set()
        self._scaling: set[int] = set()  # serials of the live storages that scale with the batch
        self._scaling_bytes = 0.0
        # on real tensors (tracer's fallback), a one-element uniform draw is a Python-side decision (layer drop:
        # `torch.rand(1).item() <= p` skips a layer): taken at the top of its range, every such layer runs, in
        # every step and at every trace batch alike (steer_draw)
        self.steer_draws = False
        self.log: Any = None  # a steplogger.StepLogger while a step is logged for replays (steplog.py)
        self.passthrough = 0  # > 0: ops run unrecorded and uncounted (the step log's copies of saved tensors)

    # ---- memory ----------------------------------------------------------------------------------
    def track(self, t: Any) -> int:
        """Count `t`'s storage (once); returns its serial."""
        st = t.untyped_storage()
        key = id(st)
        if key in self.live:
            return self.live[key][0]
        if self.log is not None and key in self.log.clones:
            return 0  # a step log's copy of a saved tensor (unpacked through a view): not the step's memory
        self._serial += 1
        serial = self._serial
        n = float(st.nbytes())
        self._add(key, serial, n)
        scaling = bool(self.batch and t.dim() and t.shape[0] % self.batch == 0
                       and tuple(t.shape) not in self.weight_shapes)
        if scaling:
            self._scaling.add(serial)
            self._scaling_bytes += n
        if self.log is not None:
            self.log.alloc(serial, n, scaling)
        self._refs[key] = weakref.ref(st, partial(self._freed, key, serial))
        self._note_peak()
        return serial

    def _add(self, key: int, serial: int, n: float) -> None:
        self._moment += 1
        self.live[key] = (serial, n)
        self._born[serial] = (self._moment, n)
        self.live_bytes += n

    def _note_peak(self) -> None:
        if self.live_bytes > self._phase_peak_at.get(self.phase, (-1.0, 0))[0]:
            self._phase_peak_at[self.phase] = (self.live_bytes, self._moment)
        if self._scaling_bytes > self._step_peak_at.get(self.phase, (-1.0, 0))[0]:
            self._step_peak_at[self.phase] = (self._scaling_bytes, self._moment)

    def alive_at(self, moment: int) -> dict[int, float]:
        """What was alive at `moment` (serial -> bytes), in the order it was counted."""
        died = self._died
        return {serial: n for serial, (born, n) in self._born.items()
                if born <= moment and died.get(serial, moment + 1) > moment}

    @property
    def phase_peaks(self) -> dict[Phase, tuple[float, dict[int, float]]]:
        """Each phase's peak: (bytes, what was alive at it by serial)."""
        return {phase: (peak, self.alive_at(moment)) for phase, (peak, moment) in self._phase_peak_at.items()}

    @property
    def step_peaks(self) -> dict[Phase, tuple[float, dict[int, float]]]:
        """Each phase's moment of most bytes in tensors that scale with the batch: (those bytes, what was alive)."""
        return {phase: (peak, self.alive_at(moment)) for phase, (peak, moment) in self._step_peak_at.items()}

    def set_phase(self, phase: Phase) -> None:
        """Enter a phase: what is alive as it starts (the gradients, entering the optimizer) counts towards its peak."""
        self.phase = phase
        if self.log is not None:
            self.log.phase(phase)
        self._note_peak()

    def _freed(self, key: int, serial: int, _storage: Any) -> None:
        self._free(key, serial)

    def _free(self, key: int, serial: int) -> None:
        entry = self.live.get(key)
        if entry is not None and entry[0] == serial:
            self._moment += 1
            del self.live[key]
            self._refs.pop(key, None)
            self._died[serial] = self._moment
            self.live_bytes -= entry[1]
            if self.log is not None:
                self.log.free(serial)
            if serial in self._scaling:
                self._scaling.discard(serial)
                self._scaling_bytes -= entry[1]

    def transient(self, nbytes: float, scaling: bool, outs: Sequence[tuple[Any, float]] = ()) -> None:
        """Bytes held only while one op runs (a kernel's workspace): they count towards the peaks, then are gone.
        `outs`: copies of the op's outputs among them, (output, bytes) (a step log keeps them apart: a frozen
        variant may not compute an output)."""
        if self.log is not None:
            self.log.transient(nbytes, scaling, list(outs))
        nbytes += sum(b for _, b in outs)
        self._serial += 1
        key = -self._serial  # never an id() of a storage
        self._add(key, self._serial, nbytes)
        if scaling:
            self._scaling.add(self._serial)
            self._scaling_bytes += nbytes
        self._note_peak()
        self._free(key, self._serial)

    def _conv_workspace(self, name: str, args: tuple[Any, ...], out: Any) -> None:
        """cuDNN runs a 16-bit convolution on NCHW tensors (1-D ones have no other layout) with NHWC kernels: it
        transposes the input (and the output gradient) in and the output out, through its workspace (the H100
        profiles: nchwToNhwc/nhwcToNchw around every such convolution of wav2vec2, Whisper and the SD UNets), so
        their NHWC copies are alive while it runs: wav2vec2's first 512-channel convolution, its input and output
        held twice, is its inference peak. Grouped ones (one NCHW convolution per group), single-channel inputs (an
        NCHW kernel) and a 1x1 of stride 1 on a map whose pixels are a multiple of 8 (a GEMM on NCHW as it is: no
        transposes in an H100's profiles, lab/data/h100-nchw-transposes-2026-12-06) are not transposed. `name`: the
        op's (classify.op_name)."""
        if name not in ("convolution", "convolution_backward"):
            return
        x = args[1] if name == "convolution_backward" else args[0]
        if not isinstance(x, torch.Tensor) or x.dtype not in (torch.bfloat16, torch.float16):
            return
        shape = C.conv_shape(name, args, out)
        if shape.layout is TensorLayout.NHWC or shape.groups > 1 or shape.in_channels < 2:
            return
        if nchw_gemm(shape):
            return
        def acts(tree: Any) -> list[Any]:
            return [t for t in tree_leaves(tree) if isinstance(t, torch.Tensor) and t.dim() >= 3
                    and tuple(t.shape) not in self.weight_shapes]
        ins = _unique(acts(args))
        outs = [t for t in _unique(acts(out)) if all(t is not a for a in ins)]
        nbytes = float(sum(C.tensor_bytes(t) for t in ins))
        self.transient(nbytes, bool(self.batch) and x.shape[0] % self.batch == 0,
                       [(t, C.tensor_bytes(t)) for t in outs])

    def serials(self, tensors: Any) -> set[int]:
        return {self.track(t) for t in tensors if isinstance(t, torch.Tensor)}

    def reset_peak(self) -> None:
        self._phase_peak_at.clear()
        self._step_peak_at.clear()
        self._note_peak()

    # ---- ops -------------------------------------------------------------------------------------
    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if self.passthrough:
            return func(*args, **kwargs)
        out = func(*args, **kwargs)
        log = self.log
        if log is None:
            return self._dispatched(func, args, kwargs, out)
        log.begin(C.op_name(func), [t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)])
        try:
            return self._dispatched(func, args, kwargs, out)
        finally:
            log.end([t for t in tree_leaves(out) if isinstance(t, torch.Tensor)])

    def _dispatched(self, func: Any, args: tuple[Any, ...], kwargs: Any, out: Any) -> Any:
        name = C.op_name(func)
        if self.steer_draws and name in _DRAWS:
            steer_draw(out, args)
        if not self.suppress:  # a fused recurrent layer's CPU steps are no kernel's: their tensors are not the GPU's
            for t in tree_leaves(out):
                if isinstance(t, torch.Tensor):
                    self.track(t)
        if func.namespace == "aten" and not self.suppress:
            self._conv_workspace(name, args, out)
        if not self.recording or self.suppress or func.namespace not in C.KERNEL_NAMESPACES:
            return out  # prim.* ops are metadata queries
        self.dispatched += 1
        if self.log is not None:
            self.log.count_host()
        if C.is_view(func):
            return out  # views launch nothing
        if name in C.NO_KERNEL:
            return out
        op = self.describe(func, name, args, kwargs, out)
        self.append(op, tree_leaves((args, kwargs)), outputs=tree_leaves(out))
        if name == "convolution":
            self._bias_add(op, args, out)
        return out

    def _bias_add(self, conv: Op, args: tuple[Any, ...], out: Any) -> None:
        """The kernel CUDA launches after a convolution whose backend adds its bias apart (conv_backend.
        bias_added_apart: cuDNN's): an in-place add of the bias, broadcast over the output, which autograd records
        no node for (it runs inside the convolution's)."""
        bias = args[2] if len(args) > 2 else None
        if not isinstance(bias, torch.Tensor) or not isinstance(out, torch.Tensor):
            return
        shape = conv.named_shape
        if not isinstance(shape, ConvShape) or not bias_added_apart(shape, conv.dtype):
            return
        y = C.tensor_bytes(out)
        row = C.stream_shape("add_", OpClass.ELEMENTWISE, (out, bias), [out, bias], [out])
        self.append(Op("add_", OpClass.ELEMENTWISE, self.phase, conv.dtype, 0.0, y + C.tensor_bytes(bias), y,
                       row.to_row()), [out, bias], grad_mode=False, outputs=[out])

    def append(self, op: Op, inputs: Any, *, grad_mode: bool | None = None, outputs: Any = ()) -> None:
        """Record a kernel; a forward one that autograd records no node for (grad off, or nothing it reads
        needs a gradient) is counted in `untracked`: it costs the host less than a recorded one.
        `grad_mode`: the grad mode the op was called under, where the caller runs with grad off inside
        an autograd.Function."""
        grad = torch.is_grad_enabled() if grad_mode is None else grad_mode
        if op.phase is Phase.FORWARD and not (grad and any(
                isinstance(t, torch.Tensor) and t.requires_grad for t in inputs)):
            self.untracked += 1
        self.ops.append(op)
        if self.log is not None:
            self.log.op(op, [t for t in inputs if isinstance(t, torch.Tensor)],
                        [t for t in outputs if isinstance(t, torch.Tensor)], grad)

    def describe(self, func: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> Op:
        cls = C.classify(name, self.phase is Phase.OPTIMIZER)
        ins = [t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
        outs = [t for t in tree_leaves(out) if isinstance(t, torch.Tensor)]
        inplace = func._schema.name.endswith("_") or any(
            r.alias_info is not None and r.alias_info.is_write for r in func._schema.returns)
        read = sum(C.tensor_bytes(t) for t in _unique(ins))
        written = sum(C.tensor_bytes(t) for t in _unique(outs))
        floats = [t for t in ins if t.is_floating_point()]
        dtype = C.dtype_name(max(floats, key=lambda t: t.numel()).dtype) if floats else "other"
        shape: OpShape
        flops = 0.0
        if cls is OpClass.GEMM:
            shape = gemm = C.gemm_shape(name, args)
            flops = C.registry_flops(func, args, kwargs, out) or 2.0 * gemm.batch * gemm.m * gemm.n * gemm.k
        elif cls is OpClass.CONV:
            shape = conv = C.conv_shape(name, args, out)
            flops = C.conv_flops(name, args, conv)
        elif cls is OpClass.ATTENTION:
            backward = "backward" in name
            shape = attention = C.attention_shape(args, kwargs, backward)
            flops = attention_flops(attention, backward=backward)
        else:
            shape = C.stream_shape(name, cls, args, ins, outs, kwargs)
        if inplace and not outs:
            written = read
        return Op(name, cls, self.phase, dtype, float(flops), read, written, shape.to_row())


_DRAWS = frozenset({"rand", "rand_like", "uniform"})


def steer_draw(out: Any, args: tuple[Any, ...]) -> None:
    """A one-element uniform draw set to the top of its range, [lo, hi): layer drop (stochastic depth) decides
    with one, and both conventions in use (torchaudio keeps a layer when the draw exceeds p, Hugging Face skips
    it when the draw is below p) then keep every layer. That step is the one a user provisions memory for (the
    peak over steps has every layer), within the drop rate of the mean step time; and random decisions would
    make the two trace batches (and the warm-up and recorded steps) run different layers, so that the graph
    could not be scaled. Batch-shaped draws (dropout masks, drop-path masks) are left as they are."""
    if not isinstance(out, torch.Tensor) or out.numel() != 1 or not out.is_floating_point():
        return
    lo = float(args[1]) if len(args) > 1 and isinstance(args[1], (int, float)) else 0.0
    hi = float(args[2]) if len(args) > 2 and isinstance(args[2], (int, float)) else 1.0
    with torch.no_grad():
        out.fill_(torch.nextafter(torch.tensor(hi, dtype=out.dtype), torch.tensor(lo, dtype=out.dtype)).item())


def _unique(tensors: list[Any]) -> list[Any]:
    seen: set[int] = set()
    out = []
    for t in tensors:
        if id(t) not in seen:
            seen.add(id(t))
            out.append(t)
    return out
