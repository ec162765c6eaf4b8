"""The PyTorch front-end: any nn.Module -> an op graph, on the CPU, with no GPU, weights or network.

The model is built under FakeTensorMode (tensors with shapes and dtypes but no data), run for one
step exactly as a training loop or an inference call would, and recorded op by op (recorder.py).
One step per trace batch: before a training step is recorded, the optimizer's states are made as its
first step makes them (an optimizer step on zero gradients, unrecorded), so the recorded step is the
steady state's. A model whose construction reads values (torchvision's RegNet, ConvNeXt, Swin, ViT,
timm's stochastic-depth rates: `.item()`/`.tolist()` in `__init__`) is built on the meta device, or
where that fails on real CPU tensors, and its parameters and buffers are then replaced by fake tensors
of the same shapes, strides and dtypes: its step still runs on fake tensors. Models whose forward
depends on their data (boolean masks, nonzero, layer drop's draws) cannot run on fake tensors; they
are traced on real CPU tensors at the same small batches instead (two steps, the second recorded,
so that the recorded step's random draws are the ones they always were).

What was taken from PyTorch and why: TorchDispatchMode (the op stream after autograd, where
kernels are launched), FakeTensorMode (shapes without memory or compute), torch.utils.flop_counter's
formula registry (FLOPs of GEMMs, convolutions and their backward). Memory follows MemTracker's
method (storages counted by weakref) in a few lines of our own, since MemTracker attributes to
modules rather than keeping the op timeline the cost model needs; RuntimeEstimator's roofline needs
a CUDA device to read its peaks, so costing is ours (opcost.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate.graph import (
    MEMORY_ITEMS,
    TRACE_BATCHES,
    BatchGraph,
    GraphMode,
    MemoryPeak,
    OpGraph,
    Phase,
    merge_pair,
)
from gpuadvisor.estimate.steplog import GRADIENT, INPUT, OTHER, STATE, STEP_PEAK_SUFFIX, WEIGHT, StepLog
from gpuadvisor.estimate.trace.torchlib import import_torch
from gpuadvisor.estimate.trace.zoo import (
    BuiltModel,
    ModelRef,
    Source,
    apply_trainable,
    build,
    build_module,
    error_line,
    prepare_inputs,
)

#: bumped when what the tracer records changes without the stored layout changing (graph.FORMAT): a user's
#: cached traces are then traced again (2: CUDA autocast's float32 ops, the MHA fast path, math-path SDPA for
#: masks needing their gradient, second peaks per phase; 3: layer drop's draws keep every layer on real tensors;
#: cuDNN's NHWC copies of a 16-bit NCHW convolution's tensors while it runs; 4: forward kernels autograd does not
#: record counted (OpGraph.untracked_ops); 8: a linear on a 3-D input one addmm as on CUDA, an RNN's workspace while it
#: runs and its reserve space only where a backward follows; 9: Mask and Keypoint R-CNN inference on fake tensors, their
#: pastes at a fixed size (dynamic.FixedPastes), where fp32 had been traced on real CPU tensors; 10: an RNN training
#: call's reserve space as measured, autocast's copies of its input and weights, its memory in the dtype it runs in;
#: 11: every RNN training call whose forward runs as one persistent kernel holds RNN_TRAIN_PERSIST_ROWS while it runs,
#: not only a one-layer LSTM's; 12: an RNN call's inference workspace never under RNN_WORKSPACE_FLOOR_BYTES a layer and
#: direction; 13: a 2-D pooling op's window and stride, StreamShape.window_taps and stride_taps; 14: the in-place
#: bias add CUDA launches after a cuDNN convolution with a bias; 15: an RNN training call's workspace holds every
#: step's gates, and every RNN call's its input's copies at the input's width; 16: an RNN backward holds the forward's
#: training workspace again; 17: a float mask that needs its gradient goes to the memory-efficient kernel unless
#: attention dropout is on, and a transposed convolution is the convolution whose data gradient it
#: is; 18: a 16-bit NCHW 1x1 convolution of stride 1 on a map whose pixels are a multiple of 8 holds no NHWC copies;
#: 19: a transposed convolution's row says so, ConvShape.transposed; 20: and a dilated one its dilation). A cached
#: trace is also keyed by the
#: calibration table's values (_constants_digest): the memory a trace records reads some (cuDNN's RNN workspace and
#: reserve space)
TRACER_REVISION = 20
_DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}


@dataclass(frozen=True)
class TraceOptions:
    """How the step runs: what a training loop or inference call would set."""

    mode: GraphMode = GraphMode.INFERENCE
    dtype: str = "bf16"  # weights (inference, pure training) or autocast dtype (mixed training)
    mixed_precision: bool = True  # training: fp32 weights under autocast
    channels_last: bool = False
    freeze: tuple[str, ...] = ()
    trainable: tuple[str, ...] = ()
    checkpointing: bool = False
    seq: int = 0
    input_shape: tuple[int, ...] | None = None

    def key(self) -> str:
        return json.dumps([self.mode.value, self.dtype, self.mixed_precision, self.channels_last,
                           list(self.freeze), list(self.trainable), self.checkpointing, self.seq,
                           list(self.input_shape or ())])


def trace_batches(ref: ModelRef, opts: TraceOptions, batches: tuple[int, int] = TRACE_BATCHES) -> BatchGraph:
    """The model's step at two batches, TRACE_BATCHES unless others are asked (cached per model, options, batches
    and PyTorch version: read from the installed package's metadata, so that a cached answer never imports PyTorch,
    which takes seconds)."""
    key = _cache_key(ref, opts, _torch_version(), batches)
    cached = _cache_read(key)
    if cached is not None:
        return cached
    if ref.source is Source.FILE:  # a user's file: its code runs in a child process with a time limit
        from gpuadvisor.estimate.trace.contained import trace_in_child

        bg = trace_in_child(ref, opts, batches)
    else:
        bg = trace_pair(ref, opts, batches)
    _cache_write(key, bg)
    return bg


def model_params(ref: ModelRef) -> int:
    """The parameter count of a library model's module (a user's file: contained.params_in_child), kept in the user
    cache under the key its traces have (model, PyTorch version), so that asking again imports nothing: counted on
    the module alone (count_params), never traced."""
    path = _params_path(ref)
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        return int(json.loads(path.read_text())["params"])
    params = count_params(ref)
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"model": ref.text, "params": params}))
    return params


def count_params(ref: ModelRef) -> int:
    """The parameters of `ref`'s module, built on the meta device (shapes only: nothing allocated, nothing
    initialised), else under fake tensors, else on the CPU, where its construction reads values and a kernel has
    no meta version (RegNet's widths), as the tracer builds it then; tied parameters once. A failure is told as the
    last way's: a user's file raising in build() says so as a UserError."""
    torch = import_torch()
    from torch._subclasses.fake_tensor import FakeTensorMode

    ways: list[Any] = [torch.device("meta"), FakeTensorMode(), contextlib.nullcontext()]
    for i, where in enumerate(ways):
        try:
            with where:
                module = build_module(ref)
        except Exception as e:  # construction that reads values, or an op with no meta kernel: the next way
            if i + 1 < len(ways):
                continue
            if isinstance(e, UserError):
                raise
            raise UserError(f"{ref.text} cannot be built: {error_line(e)}") from None
        return sum(p.numel() for p in module.parameters())
    raise AssertionError("unreachable")


def _torch_version() -> str:
    """The installed PyTorch's version without importing it (its package metadata; torch.__version__ where the
    metadata is missing, e.g. a source build on the path)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("torch")
    except PackageNotFoundError:
        return str(import_torch().__version__)


def trace_pair(ref: ModelRef, opts: TraceOptions, batches: tuple[int, int] = TRACE_BATCHES) -> BatchGraph:
    """The step at two batches (TRACE_BATCHES unless others are asked), traced in this process (uncached). The
    libraries' deprecation notices while a model is built and traced (torchvision's meta registrations, weight
    initialisation defaults) are not the user's to act on: they are not printed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        low, high = (trace_graph(ref, opts, b) for b in batches)
    return merge_pair(low, high)


def trace_graph(ref: ModelRef, opts: TraceOptions, batch: int) -> OpGraph:
    """One step of `ref` at `batch` (ops in order, unmerged): on fake tensors, or on real CPU tensors where
    the model reads its data."""
    graph, _ = _trace(ref, opts, batch, log=False)
    return graph


def trace_log(ref: ModelRef, opts: TraceOptions, batch: int) -> StepLog:
    """One training step of `ref` at `batch` with every parameter trainable, as a StepLog: the step replayed
    with any parameters frozen (estimate/steplog.py). Its own graph's memory is not the step's (saved tensors
    are held as uncounted copies): the replay with every parameter trainable is."""
    if opts.mode is not GraphMode.TRAINING or opts.checkpointing or opts.freeze or opts.trainable:
        raise ValueError("a step log is of a training step without checkpointing or frozen parameters")
    _, log = _trace(ref, opts, batch, log=True)
    assert log is not None
    return log


def _trace(ref: ModelRef, opts: TraceOptions, batch: int, *, log: bool) -> tuple[OpGraph, StepLog | None]:
    torch = import_torch()
    from torch._subclasses.fake_tensor import DataDependentOutputException, DynamicOutputShapeException, FakeTensorMode

    from gpuadvisor.estimate.trace.fakebuild import no_resampling

    def built(on: str) -> BuiltModel:  # the example batch is made later, on the device current then (fake)
        with torch.device("meta") if on == "meta" else contextlib.nullcontext():
            return build(ref, seq=opts.seq, input_shape=opts.input_shape)

    first: Exception | None = None
    for on in ("fake", "meta", "cpu"):  # where the module is built; its step runs on fake tensors each time
        mode = FakeTensorMode(allow_non_fake_inputs=True)  # torchvision's detection ops take real constants
        try:
            if on == "fake":
                with mode, no_resampling():
                    model = built(on)
            else:  # construction read values under fake tensors: build where it can, then make it fake
                with torch.random.fork_rng():
                    torch.manual_seed(0)
                    model = built(on)
        except Exception as e:  # construction that reads values (fake, meta) or has no meta kernel: the next way
            if on == "cpu" and isinstance(e, UserError):  # a user's build() failing on real tensors too
                raise
            first = first or e
            continue
        try:
            if on != "fake" and not _as_fake(torch, model.module, mode):
                continue  # a meta-built module whose tensors share storages: built on the CPU instead
            with mode:
                return _run(ref, opts, batch, "fake tensors", real=False, log=log, built=model)
        except UserError:
            raise
        except Exception as e:  # data-dependent ops, or an op with no fake kernel: real tensors below
            first = first or e
            if on != "meta" or isinstance(e, (DataDependentOutputException, DynamicOutputShapeException)):
                break  # else a meta-built module may hold a meta tensor its forward reads: try the CPU build
    assert first is not None
    try:
        with torch.random.fork_rng():
            torch.manual_seed(0)  # the same data and dropout at every trace, run to run
            return _run(ref, opts, batch, "real CPU tensors (the model's ops depend on its data)", real=True,
                        log=log)
    except UserError:
        raise
    except Exception as e:
        hint = ""
        if "expected scalar type" in str(e) and str(opts.dtype) != "fp32":  # an op fed two dtypes by the model's code
            hint = f"; the model mixes dtypes in {opts.dtype}: --dtype fp32 traces it as written"
        raise UserError(f"{ref.text} cannot be traced: {_why(e)} (on fake tensors: {_why(first)}){hint}") from None


def _why(e: BaseException) -> str:
    """The error in a few words, and the op and line of the model's code it came from (dynamic.failed_op)."""
    from torch._subclasses.fake_tensor import DataDependentOutputException

    from gpuadvisor.estimate.trace.dynamic import failed_op

    if isinstance(e, DataDependentOutputException):
        return "the model reads a value of its data" + failed_op(e)
    text = str(e).strip()
    return (f"{type(e).__name__}: {text.splitlines()[0][:200]}" if text else type(e).__name__) + failed_op(e)


def _as_fake(torch: Any, module: Any, mode: Any) -> bool:
    """Replace each parameter and buffer of `module`, built on the meta device or on real CPU tensors, by a fake
    CPU tensor of the same shape, strides and dtype (tied ones stay tied, real tensors sharing a storage keep
    sharing it). False, leaving `module` as it was, where meta tensors share storages or do not own theirs: the
    fake copies would not (the live bytes the tracer counts are storages)."""
    tensors = [t for m in module.modules() for t in (*m._parameters.values(), *m._buffers.values())
               if t is not None]
    meta = [t for t in {id(t): t for t in tensors}.values() if t.is_meta]
    if meta:
        storages = [t.untyped_storage()._cdata for t in meta]
        if len(set(storages)) < len(storages) or any(
                t.storage_offset() or t.untyped_storage().nbytes() != _span_bytes(t) for t in meta):
            return False

    def fake(t: Any) -> Any:
        if t.is_meta:
            with mode:
                return torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device="cpu")
        return mode.from_tensor(t)
    _replace_tensors(torch, module, fake)
    return True


def _span_bytes(t: Any) -> int:
    """The bytes a tensor spans from its first element to its last."""
    if t.numel() == 0:
        return 0
    return (1 + sum((size - 1) * stride for size, stride in zip(t.shape, t.stride(), strict=True))) * t.element_size()


def _run(ref: ModelRef, opts: TraceOptions, batch: int, how: str, *, real: bool,
         log: bool = False, built: BuiltModel | None = None) -> tuple[OpGraph, StepLog | None]:
    torch = import_torch()
    from torch.utils._pytree import tree_leaves

    import gpuadvisor.estimate.trace.recurrent as recurrent
    from gpuadvisor.estimate.trace.as_cuda import cuda_dispatch
    from gpuadvisor.estimate.trace.dynamic import FixedPastes, FixedSizes, one_nms_per_batch
    from gpuadvisor.estimate.trace.recorder import Recorder
    from gpuadvisor.estimate.trace.steplogger import StepLogger

    if built is None:
        built = build(ref, seq=opts.seq, input_shape=opts.input_shape)
    model = built.module
    training = opts.mode is GraphMode.TRAINING
    if opts.freeze or opts.trainable:
        apply_trainable(model, freeze=opts.freeze, trainable=opts.trainable)
    weight_dtype = torch.float32 if training and opts.mixed_precision else getattr(torch, _DTYPES[opts.dtype])
    _convert(torch, model, weight_dtype, opts.channels_last)
    if opts.checkpointing:
        _enable_checkpointing(model, ref)
    args, kwargs = built.batch_for(batch, training)
    args, kwargs = prepare_inputs((args, kwargs), None if training and opts.mixed_precision else weight_dtype,
                                   opts.channels_last)
    rec = Recorder()
    rec.batch = batch
    rec.steer_draws = real  # layer drop's draws keep every layer (recorder.steer_draw)
    rec.weight_shapes = {tuple(p.shape) for p in model.parameters()}
    notes: list[str] = []
    sizes = FixedSizes(fake=not real)
    pastes = FixedPastes(active=not real)  # real tensors have the boxes' sizes: torchvision's own paste runs
    with sizes, one_nms_per_batch(), pastes, rec, cuda_dispatch(rec):
        recurrent.fuse(model, rec)
        params = list(model.parameters())
        param_ids = rec.serials(params)
        input_ids = rec.serials(tree_leaves((args, kwargs)))
        if training:
            model.train()
            trainable = [p for p in params if p.requires_grad]
            if not trainable:
                raise UserError(f"{ref.text}: every parameter is frozen, so there is nothing to train")
            opt = _optimizer(torch, trainable)
            mixed = opts.mixed_precision and opts.dtype != "fp32"
            autocast_dtype = getattr(torch, _DTYPES[opts.dtype])
            grad_ids: set[int] = set()
            state_ids: set[int] = set()
            grad_of: dict[int, int] = {}
            state_of: dict[int, int] = {}
            if not real:  # fake tensors draw nothing: the optimizer's first step, unrecorded, is the warm-up
                _first_optimizer_step(torch, opt, trainable)
            for recording in ((False, True) if real else (True,)):  # real: the recorded step's draws as before
                rec.recording = recording
                rec.set_phase(Phase.FORWARD)
                if recording:
                    rec.ops.clear()
                    rec.reset_peak()
                    if log:
                        names = [n for n, _ in model.named_parameters()]
                        rec.log = StepLogger(rec, params, names, param_ids | input_ids)
                        rec.log.autocast = mixed
                saving = (torch.autograd.graph.saved_tensors_hooks(rec.log.pack, rec.log.unpack)
                          if rec.log is not None else contextlib.nullcontext())
                with saving, torch.autocast("cpu", dtype=autocast_dtype) if mixed else contextlib.nullcontext():
                    loss = built.loss(model(*args, **kwargs))
                if rec.log is not None:
                    rec.log.hook_graph(loss.grad_fn)
                rec.set_phase(Phase.BACKWARD)
                loss.backward()
                del loss
                grad_ids = rec.serials(p.grad for p in trainable if p.grad is not None)
                grad_of = {rec.track(p.grad): i for i, p in enumerate(params) if p.grad is not None}
                rec.set_phase(Phase.OPTIMIZER)
                opt.step()
                state_ids = rec.serials(v for s in opt.state.values() for v in s.values()
                                        if isinstance(v, torch.Tensor) and v.dim() > 0)
                index_of = {id(p): i for i, p in enumerate(params)}
                state_of = {rec.track(v): index_of[id(p)] for p, s in opt.state.items() for v in s.values()
                            if isinstance(v, torch.Tensor)}
                opt.zero_grad(set_to_none=True)
        else:
            model.eval()
            rec.recording = True
            rec.reset_peak()
            with torch.no_grad():
                out = model(*args, **kwargs)
            del out
            grad_ids, state_ids = set(), set()
    if sizes.fixed:
        notes.append(f"outputs sized by their data ({', '.join(sorted(sizes.fixed))}) traced with every candidate "
                     "kept, up to the model's own limits (the step with the most boxes)")
    notes.extend(pastes.notes)
    phase_peaks = tuple(MemoryPeak(peak, phase.value, _peak_items(alive, param_ids, grad_ids, state_ids, input_ids))
                        for phase, (peak, alive) in rec.phase_peaks.items())
    # each phase's moment of most activations too, as a peak of its own: BatchGraph scales every peak to the
    # batch asked and takes the largest, so the one whose activations grow fastest wins at large batches
    phase_peaks += tuple(MemoryPeak(sum(alive.values()), f"{phase.value}{STEP_PEAK_SUFFIX}",
                                    _peak_items(alive, param_ids, grad_ids, state_ids, input_ids))
                         for phase, (_, alive) in rec.step_peaks.items())
    graph = OpGraph(
        model=ref.text, mode=opts.mode, batch=batch, ops=tuple(rec.ops),  # merged by merge_pair
        params=sum(p.numel() for p in params), trainable_params=sum(p.numel() for p in params if p.requires_grad),
        memory=max(phase_peaks, key=lambda m: m.peak_bytes), phase_peaks=phase_peaks, unit=built.unit.value,
        tokens_per_sample=built.tokens_per_sample, input_desc=built.input_desc,
        source=f"traced (torch {torch.__version__}, {how})", notes=(*built.notes, *notes), host_ops=rec.dispatched,
        untracked_ops=rec.untracked)
    if rec.log is None:
        return graph, None
    logger, rec.log = rec.log, None
    kinds = {rec.track(p): (WEIGHT, i) for i, p in enumerate(params)}
    kinds.update({s: (INPUT, -1) for s in input_ids})
    kinds.update({s: (GRADIENT, i) for s, i in grad_of.items()})
    kinds.update({s: (STATE if s in state_ids else OTHER, i) for s, i in state_of.items()})  # step counts: OTHER
    return graph, logger.finish(graph, kinds)


def _peak_items(alive: dict[int, float], params: set[int], grads: set[int], states: set[int],
                inputs: set[int]) -> dict[str, float]:
    """What was alive at a peak, by item: storages are told apart by the serial they were counted under."""
    items = dict.fromkeys(MEMORY_ITEMS, 0.0)
    for serial, n in alive.items():
        if serial in params:
            items["weights"] += n
        elif serial in grads:
            items["gradients"] += n
        elif serial in states:
            items["optimizer states"] += n
        elif serial in inputs:
            items["inputs"] += n
        else:
            items["activations"] += n
    return items


def _convert(torch: Any, model: Any, dtype: Any, channels_last: bool) -> None:
    """model.to(dtype, memory_format) by replacing each parameter and buffer: Module.to() swaps tensors
    in place, which fake tensors refuse. Shared (tied) parameters stay shared."""
    def conv(t: Any) -> Any:
        if t.is_floating_point():
            t = t.to(dtype)
        if channels_last and t.dim() == 4:
            t = t.contiguous(memory_format=torch.channels_last)
        return t
    _replace_tensors(torch, model, conv, buffers=lambda b: b.is_floating_point())


def _replace_tensors(torch: Any, module: Any, convert: Any, buffers: Any = lambda b: True) -> None:
    """Each parameter of `module` and each buffer `buffers` accepts swapped for `convert` of it, in place of
    Module.to()/_apply (which fake tensors refuse); a tensor shared between modules (tied) stays shared."""
    memo: dict[int, Any] = {}
    for m in module.modules():
        for name, p in list(m._parameters.items()):
            if p is not None:
                if id(p) not in memo:
                    memo[id(p)] = torch.nn.Parameter(convert(p.detach()), requires_grad=p.requires_grad)
                m._parameters[name] = memo[id(p)]
        for name, b in list(m._buffers.items()):
            if b is not None and buffers(b):
                if id(b) not in memo:
                    memo[id(b)] = convert(b)
                m._buffers[name] = memo[id(b)]
        if isinstance(m, torch.nn.RNNBase):
            m._init_flat_weights()  # RNNs keep a list of their parameters: point it at the new ones


def _first_optimizer_step(torch: Any, opt: Any, trainable: list[Any]) -> None:
    """The optimizer's states as a training loop's first step leaves them (AdamW's moments and step count: alive
    through every later step), from a step on zero gradients; the gradients are then dropped, as zero_grad does.
    What the states are depends on the parameters alone, so the one step recorded after this is the steady state's
    (it was the second of two whole steps)."""
    for p in trainable:
        p.grad = torch.zeros_like(p)
    opt.step()
    opt.zero_grad(set_to_none=True)


def _optimizer(torch: Any, params: list[Any]) -> Any:
    """Fused AdamW, as Hugging Face Trainer and most loops use; foreach where fused has no fake kernel."""
    try:
        return torch.optim.AdamW(params, lr=1e-4, fused=True)
    except (RuntimeError, ValueError):
        return torch.optim.AdamW(params, lr=1e-4, foreach=True)


def _enable_checkpointing(model: Any, ref: ModelRef) -> None:
    for method in ("gradient_checkpointing_enable", "enable_gradient_checkpointing", "set_grad_checkpointing"):
        fn = getattr(model, method, None)
        if callable(fn):
            fn()
            return
    raise UserError(f"{ref.text} has no activation-checkpointing switch (transformers, diffusers and timm "
                    "models have one; wrap your blocks in torch.utils.checkpoint in build() instead)")


# ---- cache -------------------------------------------------------------------------------------------
def _cache_key(ref: ModelRef, opts: TraceOptions, torch_version: str,
               batches: tuple[int, int] = TRACE_BATCHES) -> str:
    from gpuadvisor.estimate.graph import FORMAT

    extra = ""
    if ref.source.value == "file":
        p = Path(ref.name)
        extra = f"{p.resolve()}:{p.stat().st_mtime_ns}" if p.is_file() else ""
    raw = json.dumps([FORMAT, TRACER_REVISION, ref.text, extra, opts.key(), torch_version, list(batches),
                      _constants_digest()])
    return hashlib.sha256(raw.encode()).hexdigest()[:20]


def _constants_digest() -> str:
    """The calibration table's values: a trace records the memory of cuDNN's RNN calls from some of them
    (kernels.rnn_workspace_bytes, rnn_reserve_bytes), so a cached trace made under other values (an
    older release, a what-if's override) is traced again rather than read stale. Every value, not a list of the
    ones read, so that a constant a later trace reads can never be left out."""
    from gpuadvisor.estimate import calibration as cal

    values = sorted((c.name, c.value) for c in cal.constants())
    return hashlib.sha256(json.dumps(values).encode()).hexdigest()[:16]


def _params_path(ref: ModelRef) -> Path:
    from gpuadvisor.core.paths import user_cache_dir

    raw = json.dumps(["params", ref.text, _torch_version()])
    return user_cache_dir() / "graphs" / f"params-{hashlib.sha256(raw.encode()).hexdigest()[:20]}.json"


def _cache_read(key: str) -> BatchGraph | None:
    from gpuadvisor.core.paths import user_cache_dir
    from gpuadvisor.estimate.graph import load

    path = user_cache_dir() / "graphs" / f"{key}.json.gz"
    if not path.is_file():
        return None
    try:
        return load(path)["graph"]
    except (UserError, KeyError, ValueError, TypeError):
        return None  # a damaged cache entry is traced again and overwritten


def _cache_write(key: str, bg: BatchGraph) -> None:
    from gpuadvisor.core.paths import user_cache_dir
    from gpuadvisor.estimate.graph import save

    with contextlib.suppress(UserError, OSError):
        save({"graph": bg}, user_cache_dir() / "graphs" / f"{key}.json.gz")
