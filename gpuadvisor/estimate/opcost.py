"""The op cost model: the time of every op of a graph on one GPU, by its class. Pure functions.

time(op) = max(FLOPs / (rate(dtype) x efficiency(class, shape)), bytes / achieved bandwidth),
never below a kernel's floor on the GPU; eager PyTorch also spends host time on every op, and the
step is the host and the GPU overlapped (compute._overlap's rule). One formula per class, registered in PRICES
with `@prices(OpClass.X)` (as torch.utils.flop_counter registers its FLOP formulas) and reading the op's named
shape (graph.SHAPE_KINDS: a convolution's batch, channels, kernel, groups, layout ...):

* GEMM: kernels.gemm_time (wave quantization of 128x256 tiles, the K ramp, misaligned shapes).
* convolution: an implicit GEMM (M = N x out H x out W, N = K / groups, K = C / groups x R x S), its compute at
  the GEMM rate times CONV_EFF, floored by its own tensors at bandwidth (the input is read in place, never as
  the im2col matrix: charging that made VGG16 2x slow); grouped convolutions of 4+ channels per group (ResNeXt)
  run cuDNN's grouped implicit GEMM on tensor cores, at the share of an MMA their groups fill
  (GROUP_MMA_CHANNELS); depthwise ones (1-3 channels per group: no tensor-core path) run on CUDA cores or at
  DEPTHWISE_BW_EFF of bandwidth, except the NCHW ones PyTorch keeps from cuDNN (cudnn_depthwise: bf16 always, fp16
  below 32 channels and most stride-2 shapes), which run its own kernels at NATIVE_DEPTHWISE_*_EFF of the FP32
  rate; NCHW tensors in 16-bit are transposed to NHWC and back around a cuDNN call (nchw_transpose_s: each tensor
  read and written once, as an H100 profiled it, but a 1x1 of stride 1, which reads NCHW as it is; an unprofiled
  architecture, NCHW_TRANSPOSE_PASSES), and where the card cannot hold those copies cuDNN runs a workspace-free
  kernel instead (conv_fallback).
* attention: FlashAttention's FLOPs (causal triangle halved) at kernels.attention_rate.
* recurrent (cuDNN LSTM/GRU): the input projections of all steps as one GEMM, then one small GEMM per
  time step and layer, never faster than RNN_STEP_FLOOR_S where each step is launched on its own, or its
  persistent kernel's floor inside a training call (_rnn_step_s, kernels.rnn_persist_algo); the backward does twice
  the work. Each layer of a call sets up once (RNN_LAYER_CALL_S), a backward call once more
  (RNN_BACKWARD_CALL_S): host time (recurrent_host_s), before the call's first launch, while the GPU runs what was
  queued before it.
* normalisation, by kind and pass (norm_passes): an eval batch norm is one affine pass; a train-mode batch or
  group norm adds a Welford statistics pass far below copy bandwidth (BN_STATS_PASSES in all; 2.2-2.5x an eval
  one on the H100 profiles); layer norms run one thread block per row, so short rows (ConvNeXt's and Swin's
  96 channels) stream at a sixth of copy bandwidth (LN_ROW_BYTES); group norms run one block per sample and
  group, so a UNet at batch 1 (32 blocks) leaves SMs idle (GN_HALF_BLOCKS); every backward is
  NORM_BWD_PASSES of its forward; a train-mode batch norm on NCHW tensors reduces each channel in one thread
  block, so few channels stream slowly (nchw_batch_norm_s: NCHW_BN_CHANNEL_BPS per channel).
* elementwise: vectorized where every tensor is dense in one layout and of one dtype (about copy bandwidth,
  STREAM_BW_EFF); broadcasts, transposed or permuted inputs and mixed dtypes take the per-element offset path
  (STRIDED_BW_EFF, about half). The tracer records these layout bits (graph.StreamLayout). A 2-D max or average
  pool is no faster than its work, a thread an element looping over its window (pool_work_s: POOL_KERNELS, per
  element and tap, measured on an H100; the tracer records the window).
* reductions, gathers: bytes at bandwidth times their class's efficiency; a collective a model calls itself: its
  local bytes as an elementwise op (the network's time is the parallel layouts'); the optimizer: bytes at
  bandwidth, its multi-tensor kernels' launches counted once per step (step_time).
* a compute op with no shape recorded, or a card with no FLOP/s figure: bytes at copy bandwidth.
The figures measured on the user's GPU (HardwareFigures from a probe) replace datasheet x efficiency.

Every constant was fitted on an H100; two of its memory system's traits are carried to other cards as physics
(Rates.ramp_scale, Rates.sm_headroom), so that the H100 is priced as fitted and another card by what differs:

* a tile's ramp (K_RAMP, CONV_K_RAMP, the attention's sequence ramp) is memory time, not compute: K_RAMP's fit
  (300 steps at 742 TFLOP/s) is each output element written once, unoverlapped, at about the achieved bandwidth.
  In inner-loop steps it is therefore the card's large-GEMM FLOPs per achieved byte over the H100's: about a third
  on a GeForce card (an RTX 3090: 72 TFLOP/s over 0.8 TB/s against 742 over 2.9), so a K = 768 GEMM there reaches
  0.88 of the large-GEMM rate, not 0.72.
* a streaming kernel below copy bandwidth on the H100 (batch norm's per-element 2-byte loads at 0.6, strided
  elementwise ops, reductions, layer norms over short rows) is bound by its bytes in flight per SM, not by DRAM
  (Little's law: the H100 needs 22 GB/s from each SM); it keeps its bytes/s per SM, so a card that needs less per SM
  (a 3090: 9.8 GB/s, a 4090: 6.8) brings it up to the vectorized copy's STREAM_BW_EFF (H100 profile of ResNet-50
  inference, lab/data/h100-models/run2-1.json: batch_norm_transform_input_channels_last_kernel at 2.0 TB/s,
  the vectorized ReLU and add at 3.1 TB/s).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from gpuadvisor.estimate import calibration as cal
from gpuadvisor.estimate import conv_fallback, kernels
from gpuadvisor.estimate.calibration.opgraph import POOL_KERNELS, UPSAMPLE_KERNELS
from gpuadvisor.estimate.conv_backend import aligned_map, cudnn_depthwise, pointwise
from gpuadvisor.estimate.dispatch import host_op_scale
from gpuadvisor.estimate.graph import (
    BATCH_STATS,
    BROADCAST,
    MIXED_DTYPE,
    STRIDED,
    AttentionShape,
    ConvGradients,
    ConvShape,
    GemmShape,
    NormShape,
    Op,
    OpClass,
    OpGraph,
    Phase,
    RecurrentShape,
    StreamLayout,
    StreamShape,
    TensorLayout,
)
from gpuadvisor.estimate.hardware import Efficiency, HardwareFigures
from gpuadvisor.workload import BYTES_PER_DTYPE

COPY_OPS = ("copy", "_to_copy", "clone", "contiguous")  # one read, one write, any dtype: vectorized when dense
_BYTES = {**BYTES_PER_DTYPE, "fp64": 8.0}  # traced ops can be fp64; workloads cannot
S = TypeVar("S")  # the named shape a pricing formula reads


@dataclass(frozen=True)
class Rates:
    """What one GPU achieves: FLOP/s per dtype for large GEMMs, and bytes/s for streaming kernels."""

    gemm: dict[str, float]
    bandwidth: float
    sms: int | None
    source: str
    # --- the conv and elementwise probes' figures over the calibration H100's (HardwareFigures.op_scale): factors
    # on the fitted efficiencies, 1 where not measured, so an H100's estimates stay as validated ---
    conv_scale: dict[str, float] = field(default_factory=dict)  # dtype -> on CONV_EFF (NHWC measured)
    depthwise_scale: float = 1.0  # on DEPTHWISE_BW_EFF
    stream_scale: dict[str, float] = field(default_factory=dict)  # OpClass value -> on that class's bandwidth
    # --- the card's memory system against the calibration H100's (1 on the H100 itself; module docstring) ---
    ramp_scale: float = 1.0  # FLOPs per achieved byte over the H100's: on K_RAMP and CONV_K_RAMP
    sm_headroom: float = 1.0  # the H100's achieved bytes/s per SM over this card's: on latency-bound streams
    # cuDNN's convolutions run on the architecture's own full-rate MMA (HardwareFigures.conv_native_mma): conv_eff
    conv_native_mma: bool = False
    # cuDNN's 16-bit NCHW convolutions profiled as transposed around NHWC kernels on this architecture
    # (HardwareFigures.nchw_convs_transposed): nchw_transpose_s, else NCHW_TRANSPOSE_PASSES over the tensors
    nchw_transposed: bool = False
    # the step's tensors are NCHW (its convolutions are): train-mode batch norms reduce a channel per block, and
    # pooling kernels run their NCHW variants
    nchw_norms: bool = False
    # the calibration H100's SMs x clock over this card's: on kernels bound by their threads' instructions, a
    # thread an element (pool_work_s)
    thread_scale: float = 1.0
    # bytes the card holds for one convolution's tensors beyond the step's weights and optimizer state
    # (conv_fallback.room_bytes): a 16-bit NCHW convolution whose NHWC copies do not fit runs without them
    conv_room: float = math.inf
    # NVIDIA's "major.minor": which of cuDNN's RNN algorithms PyTorch picks (kernels.rnn_runs_persistent)
    compute_capability: str | None = None
    # FP32 matmuls on TF32 tensor cores (Workload.tf32: torch.backends.cuda.matmul.allow_tf32), where the card has them
    matmul_tf32: bool = False

    @classmethod
    def of(cls, gpu_figures: HardwareFigures, efficiencies: Efficiency | None = None) -> Rates:
        mfu, bw_eff = (efficiencies or Efficiency()).for_hardware(gpu_figures)
        gemm = {}
        for dt in ("fp32", "bf16", "fp16", "fp8", "tf32"):
            peak = gpu_figures.peak_tflops(dt)
            if peak and (dt != "tf32" or gpu_figures.tflops.get("tf32")):  # TF32 only on tensor cores that have it
                # fp32 is the FMA rate: CUDA-core GEMMs reach it as well
                gemm[dt] = peak * 1e12 * mfu * gpu_figures.dtype_reach(dt)
        conv = {dt: x for dt in ("bf16", "fp16") if (x := gpu_figures.op_scale(f"conv_eff.{dt}_nhwc"))}
        stream = {c: x for c in ("elementwise", "norm", "reduction") if (x := gpu_figures.op_scale(f"stream_eff.{c}"))}
        bandwidth = (gpu_figures.bandwidth_gbs or 0.0) * 1e9 * bw_eff
        tensor_rate = gemm.get("bf16") or gemm.get("fp16") or 0.0
        ref_rate, ref_bandwidth = _calibration_rates()
        ramp = (tensor_rate / bandwidth) / (ref_rate / ref_bandwidth) if tensor_rate and bandwidth else 1.0
        headroom = (ref_bandwidth / CALIBRATION_CARD_SMS) / (bandwidth / gpu_figures.compute_units) \
            if bandwidth and gpu_figures.compute_units else 1.0
        return cls(gemm, bandwidth, gpu_figures.compute_units, gpu_figures.source, conv,
                   gpu_figures.op_scale("depthwise_bw_eff") or 1.0,
                   stream, ramp, headroom, bool(gpu_figures.conv_native_mma), gpu_figures.nchw_convs_transposed,
                   thread_scale=_thread_scale(gpu_figures),
                   compute_capability=gpu_figures.compute_capability)

    def streamed_efficiency(self, calibration_efficiency: float, cls: str = "") -> float:
        """The fraction of copy bandwidth a streaming kernel reaches on this card, from its fraction on the
        calibration H100. A kernel below the vectorized copy's STREAM_BW_EFF there is bound by its bytes in flight
        per SM (Little's law: too few to cover the memory latency, as batch norm's 2-byte loads), not by DRAM, so
        it keeps its bytes/s per SM: a card with less bandwidth per SM (a GeForce card: a third of the H100's)
        brings it up to STREAM_BW_EFF, one with more slows it. A class measured by the user's probe keeps the
        measurement (stream_scale) instead."""
        if calibration_efficiency >= cal.STREAM_BW_EFF or cls in self.stream_scale:
            return calibration_efficiency
        return min(cal.STREAM_BW_EFF, calibration_efficiency * self.sm_headroom)

    def rate(self, dtype: str) -> float:
        if dtype == "fp32" and self.matmul_tf32 and self.gemm.get("tf32"):
            return self.gemm["tf32"]
        return self.gemm.get(dtype) or self.gemm.get("bf16") or self.gemm.get("fp32") or 0.0

    def conv_rate(self, dtype: str) -> float:
        """The GEMM rate a convolution of `dtype` runs its implicit GEMMs at: an FP32 convolution at the TF32 tensor
        rate where the card has one, since cuDNN may use TF32 for FP32 convolutions unless told not to
        (torch.backends.cudnn.allow_tf32 defaults to True, where torch.backends.cuda.matmul.allow_tf32, matmuls',
        defaults to False)."""
        return (self.gemm.get("tf32") if dtype == "fp32" else None) or self.rate(dtype)

    def cuda_core_rate(self, tensor_rate: float) -> float:
        """The FP32 FMA rate that kernels off the tensor cores run against; a card with no FP32 figure, a
        sixteenth of `tensor_rate`."""
        return self.gemm.get("fp32", tensor_rate / 16)

    @property
    def conv_eff(self) -> float:
        """A dense convolution's rate over the GEMM rate, read from the table when priced: CONV_EFF where cuDNN's
        kernels run on the previous generation's MMA (the calibration H100), the architecture is unknown or the
        conv probe measured this card (conv_scale is on CONV_EFF); CONV_EFF_NATIVE_MMA on the card's own MMA."""
        return cal.CONV_EFF_NATIVE_MMA if self.conv_native_mma and not self.conv_scale else cal.CONV_EFF


@dataclass
class StepTime:
    """The GPU and host time of one step, with the GPU time per class and per phase."""

    device_s: float = 0.0
    #: the host's time by phase (forward, backward, optimizer): what step_s overlaps phase by phase with the GPU's
    #: by_phase; empty where no host time is priced (step_time's eager=False)
    host_by_phase: dict[str, float] = field(default_factory=dict)
    #: GPU time that is steps waiting on their own latency (recurrent_latency_s), inside device_s
    latency_s: float = 0.0
    kernels: int = 0
    by_class: dict[str, float] = field(default_factory=dict)
    by_phase: dict[str, float] = field(default_factory=dict)
    #: GPU time, inside device_s, that the step's NCHW tensors cost over channels-last ones: 16-bit convolutions'
    #: layout transposes, unaligned 1x1 GEMMs and workspace-free fallback, NCHW batch norms and pools
    nchw_s: float = 0.0

    @property
    def host_s(self) -> float:
        """The host's time over the whole step."""
        return sum(self.host_by_phase.values())

    @property
    def step_s(self) -> float:
        """The host issues each phase's kernels (forward, backward, optimizer) in turn and the GPU runs each one
        once it is issued and the one before it is done: a two-stage flow shop, whose step is the longest of the
        host's time up to a phase boundary plus the GPU's time after it. Where every phase is bound by the same
        side it is the larger of the two sums (twelve H100 training steps with their phases measured apart: 0.96x-
        1.07x, bench.models.phase_overlap_ratios); a host-bound phase before a GPU-bound one adds their parts."""
        return flow_shop_s([self.host_by_phase.get(ph.value, 0.0) for ph in _PHASE_ORDER],
                           [self.by_phase.get(ph.value, 0.0) for ph in _PHASE_ORDER])

    @property
    def bound(self) -> str:
        """"host" where the host's dispatch is the longer; "overhead" where most of the GPU's time is steps waiting
        on their own latency (an RNN's launched steps); else "compute" or "memory", by the larger share."""
        if self.host_s > self.device_s:
            return "host"
        if self.latency_s >= self.device_s - self.latency_s:
            return "overhead"
        compute = sum(self.by_class.get(c.value, 0.0) for c in (OpClass.GEMM, OpClass.CONV, OpClass.ATTENTION,
                                                                OpClass.RECURRENT)) - self.latency_s
        return "compute" if compute >= self.device_s - compute - self.latency_s else "memory"


Formula = Callable[[Op, S, Rates, bool], float]


class PriceRegistry:
    """One pricing formula per op class, as torch.utils.flop_counter registers one FLOP formula per aten op:
    `@registry.register(OpClass.X)` on `def formula(op, shape, rates, training) -> seconds`, where `shape` is the
    op's named shape (graph.SHAPE_KINDS[X], or None where the op records none) and `training` whether the step is a
    training step. Pricing an op of a class with no formula, or registering a second one, raises."""

    def __init__(self) -> None:
        self._formulas: dict[OpClass, Formula[Any]] = {}

    def register(self, cls: OpClass) -> Callable[[Formula[S]], Formula[S]]:
        def add(formula: Formula[S]) -> Formula[S]:
            if cls in self._formulas:
                raise ValueError(f"op class {cls.value!r} already has a pricing formula "
                                 f"({self._formulas[cls].__name__}); each class has exactly one")
            self._formulas[cls] = formula
            return formula
        return add

    def formula(self, cls: OpClass) -> Formula[Any]:
        try:
            return self._formulas[cls]
        except KeyError:
            raise NotImplementedError(
                f"op class {cls.value!r} has no pricing formula: register one with @prices(OpClass.{cls.name}) in "
                f"gpuadvisor/estimate/opcost.py (CONTRIBUTING.md, 'Add an op class')") from None

    @property
    def classes(self) -> tuple[OpClass, ...]:
        return tuple(self._formulas)

    def price(self, op: Op, rates: Rates, *, training: bool = False) -> float:
        """GPU seconds of one instance of `op` (its count is applied by the caller)."""
        return self.formula(op.cls)(op, op.named_shape, rates, training)


#: the op cost model: every op class's formula, registered below with @prices
PRICES = PriceRegistry()
prices = PRICES.register


#: the card the op model's constants were fitted on (tests/data/models-h100.json): its datasheet figures, which
#: tests/test_opcost.py checks against the catalog's H100 SXM5 80GB
CALIBRATION_CARD_BF16_TFLOPS = 989.4
CALIBRATION_CARD_BANDWIDTH_GBS = 3350.0
CALIBRATION_CARD_SMS = 132
CALIBRATION_CARD_CLOCK_MHZ = 1980  # its boost clock (Rates.thread_scale)
CALIBRATION_CARD_FP32_TFLOPS = 66.9


def _thread_scale(gpu_figures: HardwareFigures) -> float:
    """The calibration H100's SMs x boost clock over this card's (Rates.thread_scale); where the catalog gives no
    clock, its FP32 rate over this card's (the same ratio on architectures of 128 FP32 lanes an SM)."""
    if gpu_figures.compute_units and gpu_figures.boost_clock_mhz:
        return (CALIBRATION_CARD_SMS * CALIBRATION_CARD_CLOCK_MHZ
                / (gpu_figures.compute_units * gpu_figures.boost_clock_mhz))
    fp32 = gpu_figures.tflops.get("fp32")
    return CALIBRATION_CARD_FP32_TFLOPS / fp32 if fp32 else 1.0


def _calibration_rates() -> tuple[float, float]:
    """The calibration H100's large-GEMM FLOP/s and achieved bytes/s, by the calibration table as it stands."""
    return (CALIBRATION_CARD_BF16_TFLOPS * 1e12 * cal.MFU, CALIBRATION_CARD_BANDWIDTH_GBS * 1e9 * cal.BANDWIDTH)


def op_time(op: Op, r: Rates, *, training: bool = False) -> float:
    """GPU seconds of one instance of `op` (its count is applied by the caller): its class's formula."""
    return PRICES.price(op, r, training=training)


def _bytes_s(op: Op, r: Rates) -> float:
    """The op's traced bytes at the achieved copy bandwidth."""
    return (op.read + op.written) / r.bandwidth if r.bandwidth else 0.0


def _without_compute_rate_s(op: Op, r: Rates) -> float:
    """A compute op with no shape recorded, or on a card with no FLOP/s figure: its bytes at copy bandwidth."""
    return max(_bytes_s(op, r) / cal.STREAM_BW_EFF, cal.OP_KERNEL_FLOOR_S)


@prices(OpClass.GEMM)
def gemm_time(op: Op, shape: GemmShape | None, r: Rates, training: bool) -> float:
    """kernels.gemm_time: wave quantization of the output tiles, the K ramp, misaligned shapes."""
    rate = r.rate(op.dtype)
    if shape is None or not rate:
        return _without_compute_rate_s(op, r)
    t = kernels.gemm_time(shape.batch * shape.m, shape.n, shape.k, rate=rate, bandwidth=r.bandwidth, sms=r.sms,
                          elem_bytes=_BYTES.get(op.dtype, 2.0), k_ramp=cal.K_RAMP * r.ramp_scale)
    return max(t, _bytes_s(op, r), cal.OP_KERNEL_FLOOR_S)


@prices(OpClass.CONV)
def conv_time(op: Op, shape: ConvShape | None, r: Rates, training: bool) -> float:
    """An implicit GEMM per pass (module docstring; _conv_s), FP32 ones on TF32 tensor cores (Rates.conv_rate)."""
    rate = r.conv_rate(op.dtype)
    if shape is None or not rate:
        return _without_compute_rate_s(op, r)
    return max(_conv_s(op, shape, r, rate, _bytes_s(op, r)), cal.OP_KERNEL_FLOOR_S)


@prices(OpClass.ATTENTION)
def attention_time(op: Op, shape: AttentionShape | None, r: Rates, training: bool) -> float:
    """The traced FLOPs (FlashAttention's count: kernels.attention_flops) at kernels.attention_rate."""
    rate = r.rate(op.dtype)
    if shape is None or not rate:
        return _without_compute_rate_s(op, r)
    arate = kernels.attention_rate(shape.kv_length, int(shape.head_dim), rate, backward=op.phase is Phase.BACKWARD,
                                   ramp_scale=r.ramp_scale)
    return max(op.flops / arate, _bytes_s(op, r), cal.OP_KERNEL_FLOOR_S)


@prices(OpClass.RECURRENT)
def recurrent_time(op: Op, shape: RecurrentShape | None, r: Rates, training: bool) -> float:
    """The GPU's timeline of cuDNN's fused RNN: the input projections of all steps as one GEMM, then one small GEMM
    per time step and layer, never faster than its floor: its kernels' floors where a step is launched (the host's
    issuing, recurrent_host_s, is the rest), or its persistent kernel's floor where a training call runs its steps
    in one (_rnn_step_s); the backward does twice the work, and its bias gradient (rnn_bias_grad_s) on top. The
    call's set-up is the host's (recurrent_host_s): charged here too, it made a GPU-bound step pay it twice (the
    encoder-decoder GRU's training at batch 256, 1.31x)."""
    rate = r.rate(op.dtype)
    if shape is None or not rate:
        return _without_compute_rate_s(op, r)
    b, t, h, dirs = shape.batch, shape.steps, shape.hidden_size, shape.directions
    total = 0.0
    eb = _BYTES.get(op.dtype, 2.0)
    backward = op.phase is Phase.BACKWARD
    step = max(_rnn_step_s(op, shape, r, training))
    for layer in range(int(shape.layers)):
        width = shape.input_size if layer == 0 else h * dirs
        proj = kernels.gemm_time(b * t, shape.gates * h * dirs, width, rate=rate, bandwidth=r.bandwidth, sms=r.sms,
                                 elem_bytes=eb)
        total += proj + t * dirs * step
    return 2.0 * total + rnn_bias_grad_s(shape) if backward else total


def rnn_bias_grad_s(shape: RecurrentShape) -> float:
    """A backward call's bias gradient: cuDNN's *_elementWise_bp2 kernel walks every batch row of every step
    (RNN_BIAS_GRAD_ROW_S, a GRU's RNN_GRU_BIAS_GRAD_ROW_S) at a rate that does not depend on the hidden size; one
    launch per layer and direction, which run beside each other, so the call pays it once
    (lab/data/h100-rnn-persist-kernels-2026-12-06: at batch 1,024 and more it is most of a small-hidden call's
    backward, 1.2 ms of 1.6 for an LSTM of hidden 64 over 128 steps)."""
    row = cal.RNN_GRU_BIAS_GRAD_ROW_S if shape.gates == 3 else cal.RNN_BIAS_GRAD_ROW_S
    return shape.batch * shape.steps * row


def _rnn_step_s(op: Op, shape: RecurrentShape, r: Rates, training: bool) -> tuple[float, float]:
    """One time step of one layer and direction as (its math, its floor). Inside a persistent training kernel
    (kernels.rnn_persist_algo): the math from on-chip weights at the card's rate, and a floor by algorithm: the
    small-hidden kernel, which holds each gate's weights in its CTAs' registers, RNN_PERSIST_SMALL_STEP_S and
    RNN_PERSIST_SMALL_STEP_UNIT_S a hidden unit, whatever the batch (what grows with the batch is the backward's bias
    gradient, rnn_bias_grad_s); the static kernel waits grid-wide between steps (RNN_PERSIST_STEP_S). Launched, in
    either phase: its small GEMM and its kernels' floors (RNN_LAUNCHED_STEP_GPU_S), the host's issuing being the step
    (recurrent_host_s: the H100 profiles of launched training calls show the host busy the whole call, 0.2-0.4 of it
    on the GPU)."""
    rate = r.rate(op.dtype)
    algo = _rnn_persist_algo(op, shape, r, training)
    if algo is None:
        # a launched step waits on the host issuing its kernels (recurrent_host_s: RNN_STEP_FLOOR_S on the
        # calibration host, scaled by the host's dispatch probe); the GPU's own part is its kernels' floors
        return _rnn_step_gemm_s(shape, r, rate, _BYTES.get(op.dtype, 2.0)), cal.RNN_LAUNCHED_STEP_GPU_S
    math_s = 2.0 * shape.batch * shape.gates * shape.hidden_size**2 / rate
    if algo is kernels.RnnPersistAlgo.STATIC:
        return math_s, cal.RNN_PERSIST_STEP_S
    return math_s, cal.RNN_PERSIST_SMALL_STEP_S + shape.hidden_size * cal.RNN_PERSIST_SMALL_STEP_UNIT_S


def _rnn_persist_algo(op: Op, shape: RecurrentShape, r: Rates, training: bool) -> kernels.RnnPersistAlgo | None:
    """The persistent kernel this call's phase runs its steps in on this card (kernels.rnn_persist_algo), or None
    where it launches each step: every inference call, and training calls cuDNN runs step by step."""
    if not training:
        return None
    return kernels.rnn_persist_algo(shape, backward=op.phase is Phase.BACKWARD, dtype=op.dtype,
                                    compute_capability=r.compute_capability, sms=r.sms)


def recurrent_latency_s(op: Op, r: Rates, training: bool) -> float:
    """The part of recurrent_time its steps spend at their floor beyond their math: latency, not arithmetic or
    bandwidth, so a faster card does not shorten it (StepTime.bound says "overhead" where it is most of the step)."""
    shape = op.named_shape
    if not isinstance(shape, RecurrentShape) or not r.rate(op.dtype):
        return 0.0
    math_s, floor_s = _rnn_step_s(op, shape, r, training)
    gap = floor_s - math_s
    steps = shape.layers * shape.steps * shape.directions
    return max(0.0, gap) * steps * (2.0 if op.phase is Phase.BACKWARD else 1.0)


def _rnn_step_gemm_s(shape: RecurrentShape, r: Rates, rate: float, elem_bytes: float) -> float:
    """One time step's small GEMM of one layer and direction: the state into the gates."""
    return kernels.gemm_time(shape.batch, shape.gates * shape.hidden_size, shape.hidden_size, rate=rate,
                             bandwidth=r.bandwidth, sms=r.sms, elem_bytes=elem_bytes)


def _rnn_setup_s(shape: RecurrentShape, phase: Phase) -> float:
    """Each pseudo-layer (a layer's direction: cuDNN's unit, whose weights PyTorch's get_parameters walks one by one)
    of each call sets up before its first step, in either phase (lab/rnn_calls.py: a 1-step call costs about
    RNN_LAYER_CALL_S per layer); a backward call has a set-up of its own besides. A bidirectional layer sets up twice
    (lab/data/h100-rnn-directions-2026-12-07: its calls ran 1.5x-2.3x a one-direction call's at one step; priced per
    layer, 2 of 96 of them within 0.8x-1.25x, 64 of 96 per pseudo-layer)."""
    setup = shape.layers * shape.directions * cal.RNN_LAYER_CALL_S
    return setup + cal.RNN_BACKWARD_CALL_S if phase is Phase.BACKWARD else setup


def recurrent_host_s(op: Op, r: Rates, training: bool) -> float:
    """The part of a cuDNN RNN call the host spends issuing it: each pseudo-layer's set-up (and the backward call's) and
    every launched time step whose GEMM is under RNN_STEP_FLOOR_S, where the step waits on its launches, not its
    math: an inference call's, and a training call's outside cuDNN's persistent kernels, one floor a step each way
    (an H100 sweep's launched training calls ran 33-43 us a step and layer, forward and backward, on a host probing
    9.8 us an op: about two floors, where three on the GPU had priced them; the GRU review classifier's training on
    a host probing 6 us, 1.82x -> 1.07x). The host does it inside the call, in line with the dispatch of the model's
    other ops: a small recurrent model's step is this plus their dispatch (step_time), not the larger of the two."""
    shape = op.named_shape
    rate = r.rate(op.dtype)
    if not isinstance(shape, RecurrentShape) or not rate:
        return 0.0
    launched = (_rnn_persist_algo(op, shape, r, training) is None
                and _rnn_step_gemm_s(shape, r, rate, _BYTES.get(op.dtype, 2.0)) < cal.RNN_STEP_FLOOR_S)
    floor_bound = shape.layers * shape.steps * shape.directions * cal.RNN_STEP_FLOOR_S if launched else 0.0
    return floor_bound + _rnn_setup_s(shape, op.phase)


# streaming ops: a traced op counts each tensor once; the kernels make more passes (a norm's statistics, a
# reduction's partial sums) and reach less of the bandwidth than a copy, by class; a probe's measured stream
# efficiency of the class scales it (Rates.stream_scale)

@prices(OpClass.NORM)
def norm_time(op: Op, shape: NormShape | None, r: Rates, training: bool) -> float:
    """The traced bytes at copy bandwidth, times the passes of its kind (norm_passes); a train-mode batch norm on
    NCHW tensors no faster than its channels allow (nchw_batch_norm_s)."""
    passes = 1.0 / r.streamed_efficiency(1.0 / norm_passes(op, shape, training=training), "norm")
    t = max(_bytes_s(op, r) * passes / r.stream_scale.get("norm", 1.0), cal.OP_KERNEL_FLOOR_S)
    return max(t, nchw_batch_norm_s(op, shape)) if r.nchw_norms else t


def _is_backward(op: Op) -> bool:
    """A backward kernel, by its phase or by its name (`*_backward`)."""
    return op.phase is Phase.BACKWARD or op.name.endswith("backward")


def nchw_batch_norm_s(op: Op, shape: NormShape | None) -> float:
    """A train-mode batch norm on NCHW tensors (cuDNN's bn_fw_tr_1C11/bn_bw_1C11 kernels under fp16, PyTorch's
    batch_norm_collect_statistics under bf16) reduces each channel in its own thread block, so it streams at most
    NCHW_BN_CHANNEL_BPS per channel (forward; backward NCHW_BN_CHANNEL_BPS_BWD): 16 channels at 112x112 run 8x
    slower than channels-last, 240 and more about as fast (lab/data/h200-nchw-2026-12-05/bn_layouts.json)."""
    if shape is None or "batch_norm" not in op.name or not shape.reduce_length:
        return 0.0
    backward = _is_backward(op)
    if not backward and not shape.layout & BATCH_STATS:
        return 0.0  # eval mode: one per-channel affine pass, every block busy
    channels = shape.elements / shape.reduce_length
    per_channel = cal.NCHW_BN_CHANNEL_BPS_BWD if backward else cal.NCHW_BN_CHANNEL_BPS
    return shape.elements * _BYTES.get(op.dtype, 2.0) / (channels * per_channel)


@prices(OpClass.ELEMENTWISE)
def elementwise_time(op: Op, shape: StreamShape | None, r: Rates, training: bool) -> float:
    """The traced bytes at elementwise_efficiency of copy bandwidth (vectorized or per-element offsets); a 2-D
    pooling kernel no faster than its work over its window (pool_work_s), a 2-D upsampling one than its outputs'
    (upsample_work_s)."""
    return max(_streamed_s(op, r, elementwise_efficiency(op, shape)), pool_work_s(op, shape, r),
               upsample_work_s(op, shape, r))


#: the 2-D upsampling ops F.interpolate dispatches to, by their mode (calibration.opgraph.UPSAMPLE_KERNELS)
UPSAMPLE_MODES = {"upsample_bilinear2d": "bilinear", "upsample_nearest2d": "nearest",
                  "_upsample_nearest_exact2d": "nearest"}


def upsample_work_s(op: Op, shape: StreamShape | None, r: Rates) -> float:
    """A 2-D upsampling kernel's time by its work: PyTorch runs a thread per output, forward and backward; the
    backward adds each output's gradient into its source pixels atomically, and the adds to one source serialize,
    so its time per output grows with the fan (the outputs that share a source: outputs over inputs, read off the
    op's bytes). Per output: the measured line base + per fan x fan of its mode, direction and layout
    (calibration.opgraph.UPSAMPLE_KERNELS, from lab/data/h100-upsample-ops-2026-12-07); on another card x
    Rates.thread_scale. 0 for any other op."""
    backward = op.name.endswith("_backward")
    mode = UPSAMPLE_MODES.get(op.name.removesuffix("_backward"))
    if mode is None or shape is None or not op.read or not op.written:
        return 0.0
    fan = max(1.0, op.read / op.written if backward else op.written / op.read)
    layout = "nchw" if r.nchw_norms else "nhwc"
    base, per_fan = UPSAMPLE_KERNELS[(mode, "backward" if backward else "forward", layout)]
    return shape.elements * (base + per_fan * fan) * 1e-12 * r.thread_scale


def pool_work_s(op: Op, shape: StreamShape | None, r: Rates) -> float:
    """A 2-D max or average pooling kernel's time by its work: PyTorch runs a thread per output (forward) or per
    input element (backward, gathering from the outputs whose windows cover it) and loops over the window, so the
    time goes with the elements and the taps each visits, not with the bytes (an H100's channels-last average pool
    takes about 24 ps an output, its bytes at copy speed a fifteenth of that). Per element: the measured line
    base + per tap x taps of its kind, direction and layout (calibration.opgraph.POOL_KERNELS, from
    lab/data/h100-pool-ops-2026-12-05), taps the window's for a forward and the mean count of windows covering an
    input (window / stride taps, at least 1) for a backward; on another card x Rates.thread_scale. 0 for any other
    op (the tracer records a window on the 2-D pools alone: trace.classify.POOL_ARGS), or a pool traced before its
    window was recorded (tracer revision 13)."""
    if shape is None or shape.window_taps is None or shape.stride_taps is None:
        return 0.0
    kind = "max" if op.name.startswith("max_pool") else "avg"
    backward = op.name.endswith("_backward")
    stride = max(shape.stride_taps, 1.0)
    if backward:
        elements, taps = shape.elements, max(1.0, shape.window_taps / stride)
    else:
        elements, taps = shape.elements / stride, shape.window_taps
    layout = "nchw" if r.nchw_norms else "nhwc"
    base, per_tap = POOL_KERNELS[(kind, "backward" if backward else "forward", layout)]
    return elements * (base + per_tap * taps) * 1e-12 * r.thread_scale


@prices(OpClass.REDUCTION)
def reduction_time(op: Op, shape: StreamShape | None, r: Rates, training: bool) -> float:
    """The traced bytes at REDUCTION_BW_EFF of copy bandwidth (softmax, losses, sums: partial sums per block)."""
    return _streamed_s(op, r, cal.REDUCTION_BW_EFF)


@prices(OpClass.GATHER)
def gather_time(op: Op, shape: StreamShape | None, r: Rates, training: bool) -> float:
    """The traced bytes at GATHER_BW_EFF of copy bandwidth (embedding lookups, index, scatter)."""
    return _streamed_s(op, r, cal.GATHER_BW_EFF)


@prices(OpClass.COLLECTIVE)
def collective_time(op: Op, shape: StreamShape | None, r: Rates, training: bool) -> float:
    """A collective a traced model calls itself: its local bytes as an elementwise op's; the network's time is the
    parallel layouts' (estimate/parallel/), which add it on top."""
    return _streamed_s(op, r, elementwise_efficiency(op, shape))


@prices(OpClass.OPTIMIZER)
def optimizer_time(op: Op, shape: StreamShape | None, r: Rates, training: bool) -> float:
    """The traced bytes at copy bandwidth: a fused optimizer (AdamW) streams every tensor in multi-tensor kernels,
    whose launches (one per OPTIMIZER_PARAMS_PER_LAUNCH parameters) step_time counts once per step, not per op."""
    return _bytes_s(op, r)


def _streamed_s(op: Op, r: Rates, efficiency: float) -> float:
    """The traced bytes at `efficiency` of copy bandwidth as the calibration H100 reaches it, on this card
    (Rates.streamed_efficiency), times the probe's measured scale of the class where there is one."""
    at_card = r.streamed_efficiency(efficiency, op.cls.value)
    return max(_bytes_s(op, r) / (at_card * r.stream_scale.get(op.cls.value, 1.0)), cal.OP_KERNEL_FLOOR_S)


def elementwise_efficiency(op: Op, shape: StreamShape | None) -> float:
    """The fraction of copy bandwidth an elementwise op reaches: STREAM_BW_EFF where PyTorch's vectorized kernel
    runs it (every tensor dense in one layout and of one dtype), STRIDED_BW_EFF where it computes offsets per
    element (broadcasts, transposed or permuted inputs, mixed dtypes); a copy that transposes runs a tiled
    transpose kernel, at STRIDED_BW_EFF too. An op with no layout recorded counts as vectorized."""
    layout = shape.layout if shape is not None else StreamLayout.DENSE
    if layout & (BROADCAST | STRIDED | MIXED_DTYPE) and op.name not in COPY_OPS:
        return cal.STRIDED_BW_EFF
    if layout & STRIDED:  # a copy that transposes: a tiled transpose kernel
        return cal.STRIDED_BW_EFF
    return cal.STREAM_BW_EFF


def norm_passes(op: Op, shape: NormShape | None, *, training: bool) -> float:
    """A normalisation's time in units of its traced bytes at copy bandwidth, by kind and pass:

    * batch norm in eval: one per-channel affine pass, at NORM_BW_EFF;
    * batch norm in train mode: a statistics pass (a Welford reduction per channel, far below copy bandwidth)
      then the affine pass: BN_STATS_PASSES affine passes in all (the shape's BATCH_STATS bit; a norm with no
      shape recorded: the step's mode);
    * group norm: statistics as batch norm's, with one thread block per (sample, group): N x G blocks under
      GN_HALF_BLOCKS leave SMs idle;
    * layer and RMS norm: one thread block per row, whose reduction latency is hidden only over long rows:
      LN_BW_EFF x row bytes / (row bytes + LN_ROW_BYTES); a permuted input (LayerNorm2d) is copied first;
    * every backward: NORM_BWD_PASSES of its forward's passes (a reduction over input and gradient, then the
      elementwise pass; the weight gradient a column reduction)."""
    numel = shape.elements if shape is not None else 0.0
    layout = shape.layout if shape is not None else StreamLayout.DENSE
    reduce_len = (shape.reduce_length or 0.0) if shape is not None else 0.0
    backward = _is_backward(op)
    eb = _BYTES.get(op.dtype, 2.0)
    if "layer_norm" in op.name or "rms_norm" in op.name:
        row = (reduce_len or 768.0) * eb
        passes = (row + cal.LN_ROW_BYTES) / (row * cal.LN_BW_EFF)
        if layout & STRIDED:
            passes += 1.0 / cal.STRIDED_BW_EFF
    elif "group_norm" in op.name:
        blocks = numel / reduce_len if reduce_len else cal.GN_HALF_BLOCKS
        passes = cal.BN_STATS_PASSES / cal.NORM_BW_EFF * (blocks + cal.GN_HALF_BLOCKS) / blocks
    elif backward:  # batch norm: the backward's reduce and elementwise passes
        passes = 1.0 / cal.NORM_BW_EFF
    else:
        stats = bool(layout & BATCH_STATS) if shape is not None else training
        passes = (cal.BN_STATS_PASSES if stats else 1.0) / cal.NORM_BW_EFF
    return passes * (cal.NORM_BWD_PASSES if backward else 1.0)


def _conv_s(op: Op, shape: ConvShape, r: Rates, rate: float, t_mem: float) -> float:
    """An implicit GEMM per pass on tensor cores (grouped ones filling part of each MMA), or CUDA cores where
    the channels per group rule tensor cores out (depthwise convolutions)."""
    c, k, groups = shape.in_channels, shape.out_channels, shape.groups
    nchw_16bit = shape.layout is TensorLayout.NCHW and op.dtype in ("bf16", "fp16")
    if nchw_16bit and conv_fallback.falls_back(op, shape, r.conv_room):  # no room for its NHWC copies
        return max(conv_fallback.fallback_s(op, shape, r.cuda_core_rate(rate)), t_mem)
    extra = 0.0  # cuDNN transposes NCHW in and out of NHWC
    if nchw_16bit:
        extra = nchw_transpose_s(op, shape, r) if r.nchw_transposed else cal.NCHW_TRANSPOSE_PASSES * t_mem
    per_group = min(c, k) / groups if groups > 1 else 0.0
    if per_group >= 4 and nchw_16bit:
        return _nchw_grouped_s(op, shape, r, rate, t_mem)
    if per_group >= 4:  # grouped (ResNeXt): tensor cores, each group's channels padded to one MMA's width
        fill = min(1.0, per_group / cal.GROUP_MMA_CHANNELS)
        return (max(op.flops / (rate * r.conv_eff * fill), t_mem) + extra
                + cal.CONV_PASS_FIXED_S * _passes(op, shape))  # a kernel a pass, as a dense convolution's
    if groups > 1 and shape.layout is TensorLayout.NCHW and not cudnn_depthwise(shape, op.dtype):
        # PyTorch's own CUDA kernels (_conv_depthwise2d): FLOPs at a small share of the FP32 rate, no transposes
        fp32 = r.cuda_core_rate(rate)
        share = cal.NATIVE_DEPTHWISE_FWD_EFF if op.phase is Phase.FORWARD else cal.NATIVE_DEPTHWISE_BWD_EFF
        return max(op.flops / (fp32 * share), t_mem)
    if groups > 1:  # depthwise: no tensor-core path; FLOPs on CUDA cores, bytes at best
        cuda_rate = r.cuda_core_rate(rate) * cal.CUDA_CORE_CONV_EFF
        # a forward streams its bytes (a card with less bandwidth per SM brings it up to copy speed:
        # streamed_efficiency); a backward's weight gradient reduces every pixel of the batch into each channel's
        # taps, bound by that reduction, not by bytes in flight, so it keeps the H100's share
        lifted = r.depthwise_scale == 1.0 and op.phase is not Phase.BACKWARD
        depthwise_eff = r.streamed_efficiency(cal.DEPTHWISE_BW_EFF) if lifted else cal.DEPTHWISE_BW_EFF
        return max(op.flops / cuda_rate, t_mem / (depthwise_eff * r.depthwise_scale)) + extra
    # a 3-channel image stem: channels padded to 8 for the tensor cores, no 16-byte loads; its kernels' rate is
    # measured against the GEMM rate (stem_slowdown), not the other convolutions' CONV_EFF. A transposed
    # convolution's forward is a dgrad whose few channels are its GEMM's N: its narrowest tile is the cost
    # (CONV_DGRAD_MIN_N), not a stem's
    stem = bool(c % 8) and not (shape.transposed and op.phase is Phase.FORWARD)
    if stem:
        rate /= stem_slowdown(shape, op.dtype)
    c = math.ceil(c / 8) * 8
    rate /= dilated_slowdown(shape, r)
    # the implicit GEMM's compute only: its A operand is the input read in place (each element once per filter
    # tap from shared memory and L2), never the im2col matrix gemm_time's memory term would charge; the
    # convolution's own tensors at bandwidth are the floor below
    t = (_implicit_gemms_s(op, shape, r, rate, c, k, forward=op.phase is Phase.FORWARD, of_gemm_rate=stem)
         + _bias_grad_s(op, shape, r))
    if nchw_16bit and r.nchw_transposed and op.phase is Phase.FORWARD and pointwise(shape) \
            and not aligned_map(shape):  # an older GEMM on misaligned rows, or transposes around an NHWC kernel
        t *= cal.NCHW_1X1_UNALIGNED_SLOWDOWN
    return max(t, t_mem) + extra


def dilated_slowdown(shape: ConvShape, r: Rates) -> float:
    """The rate divisor of a widely dilated 2-D convolution on a Hopper card: from CONV_DILATION_SM80_FROM cuDNN
    leaves its sm90 kernels for sm80 ones (mma.sync fprop and dgrad, an sm80 wgrad), CONV_DILATED_SLOWDOWN slower
    (DeepLabV3's ASPP head at dilation 12-36 on an H100, lab/data/h100-dilated-convs-2026-12-07: 1.47x-1.57x; to
    dilation 4 the kernels and times were the undilated ones'). Elsewhere 1: other architectures' kernels were not
    measured dilated, and a 1-D convolution's fall-off differs (bench/dilated.py, docs/nchw.md)."""
    if shape.dilation < cal.CONV_DILATION_SM80_FROM or shape.in_width <= 1 \
            or not (r.compute_capability or "").startswith("9."):
        return 1.0
    return cal.CONV_DILATED_SLOWDOWN


def nchw_transpose_s(op: Op, shape: ConvShape, r: Rates) -> float:
    """The layout transposes cuDNN runs around a 16-bit NCHW convolution (but a 1x1 of stride 1, whose kernels read
    NCHW as it is): each pass (a forward, each gradient of a backward) takes its input and output (or their
    gradients) to or from NHWC, and a filter wider than 1x1 (a 1x1's layout is the same either way), each read and
    written once by a kernel of its own: the activations at NCHW_TRANSPOSE_BW_EFF of copy bandwidth, the filter at
    NCHW_FILTER_TRANSPOSE_BW_EFF (an H100's profiles, lab/data/h100-nchw-transposes-2026-12-06)."""
    if pointwise(shape) or not r.bandwidth:
        return 0.0
    taps = shape.kernel_height * shape.kernel_width
    element = _BYTES.get(op.dtype, 2.0)
    moved = [(shape.batch * shape.in_channels * shape.in_height * shape.in_width * element, cal.NCHW_TRANSPOSE_BW_EFF),
             (shape.batch * shape.out_channels * shape.out_height * shape.out_width * element,
              cal.NCHW_TRANSPOSE_BW_EFF)]
    if taps > 1:
        filters = shape.out_channels * shape.in_channels / max(shape.groups, 1.0) * taps * element
        moved.append((filters, cal.NCHW_FILTER_TRANSPOSE_BW_EFF))
    one_pass = sum(max(cal.OP_KERNEL_FLOOR_S, 2 * nbytes / (r.bandwidth * eff)) for nbytes, eff in moved)
    return _passes(op, shape) * one_pass


def stem_slowdown(shape: ConvShape, dtype: str) -> float:
    """How much slower than the GEMM rate on its 8-channel padding a convolution of misaligned input channels (an
    image stem) runs:
    a 16-bit one of a 7x7 filter or wider that overlaps (ResNet's stem; not a ViT's patchify) by its dtype's
    WIDE_STEM_SLOWDOWN (cuDNN's fp16 first-layer kernels, which bf16 lacks: an H100's ResNet stem takes 0.61-0.68 ms
    in fp16, 1.84-1.86 in bf16, lab/data/h100-conv-stem-2026-12-05), a 16-bit patchify (a filter of 4 or more
    whose stride is its width: ViT's 16x16/16, ConvNeXt's 4x4/4) by PATCHIFY_SLOWDOWN, any other by
    MISALIGNED_CONV_SLOWDOWN."""
    wide = shape.kernel_height * shape.kernel_width >= 49 and shape.stride < shape.kernel_width  # not a patchify
    if wide and dtype in ("fp16", "bf16"):
        return cal.WIDE_STEM_SLOWDOWN_FP16 if dtype == "fp16" else cal.WIDE_STEM_SLOWDOWN_BF16
    if shape.stride == shape.kernel_width >= 4 and dtype in ("fp16", "bf16"):  # a patchify: ViT's, ConvNeXt's
        return cal.PATCHIFY_SLOWDOWN
    return cal.MISALIGNED_CONV_SLOWDOWN


def _implicit_gemms_s(op: Op, shape: ConvShape, r: Rates, rate: float, c: float, k: float, *,
                      forward: bool, of_gemm_rate: bool = False) -> float:
    """One convolution's (or one group's: `c`, `k` its channels) implicit GEMMs on tensor cores: the forward's,
    or the backward's input gradient, weight gradient or both (the shape's gradients); at `rate` times the
    convolutions' efficiency, or at `rate` as it is where it is already a convolution's own (`of_gemm_rate`: an
    image stem's, stem_slowdown)."""
    n, h, w, oh, ow = shape.batch, shape.in_height, shape.in_width, shape.out_height, shape.out_width
    taps = shape.kernel_height * shape.kernel_width
    fprop = (n * oh * ow, k, c * taps)
    data, weight = (n * h * w, c, k * taps), (k, c * taps, n * oh * ow)  # the input's gradient, the weight's
    if shape.transposed:  # cuDNN's dgrad of the recorded convolution, over its input's pixels, each reached by the
        # taps that land on it (a stride-s one's taps / s^2: its true MACs), K a whole number of its k channels'
        # 8-wide slices (its alignment is its channels', whatever the taps); its input's gradient is that forward
        reach = k * taps * oh * ow / (h * w)
        fprop, data = (n * h * w, c, math.ceil(reach / 8) * 8 if k % 8 == 0 else reach), fprop
    # (m, n, k, whether it is a transposed convolution's dgrad)
    passes = [(*fprop, shape.transposed)] if forward else [
        (*p, False) for grad, p in ((ConvGradients.INPUT, data), (ConvGradients.WEIGHT, weight))
        if shape.gradients & grad]
    conv_rate = rate * (1.0 if of_gemm_rate else r.conv_eff) * r.conv_scale.get(op.dtype, 1.0)  # the conv probe's
    # scale where measured
    # each pass a kernel of fixed time (launch, prologue, the last wave's tail) beside its FLOPs
    # a transposed convolution's dgrad: its N (the output channels) at least the kernel's narrowest tile, and its
    # K ramp its own: each stride phase reduces over a few taps of its input channels, and pays the tile's prologue
    # and epilogue over those short K (CONV_DGRAD_K_RAMP, lab/data/h100-transposed-convs-2026-12-07)
    return sum(kernels.gemm_time(m, max(nn, cal.CONV_DGRAD_MIN_N) if dgrad else nn, kk, rate=conv_rate,
                                 bandwidth=math.inf, sms=r.sms,
                                 k_ramp=(cal.CONV_DGRAD_K_RAMP if dgrad else cal.CONV_K_RAMP) * r.ramp_scale)
               + cal.CONV_PASS_FIXED_S for m, nn, kk, dgrad in passes)


def _passes(op: Op, shape: ConvShape) -> int:
    """The implicit GEMMs a convolution op runs: its forward's, or one per gradient (input, weight) a backward
    computes."""
    if op.phase is Phase.FORWARD:
        return 1
    return bool(shape.gradients & ConvGradients.INPUT) + bool(shape.gradients & ConvGradients.WEIGHT)


def conv_bias_grad_s(op: Op, r: Rates) -> float:
    """The part of a convolution op's time that is its bias gradient (0 for any other op): a sum over the output's
    gradient that PyTorch runs after cuDNN's kernels (`convolution_backward`: `grad_output.sum(...)`), which its
    profiler counts as a reduction (aten::sum) where this pricer prices it within the convolution op."""
    shape = op.named_shape
    return _bias_grad_s(op, shape, r) if isinstance(shape, ConvShape) else 0.0


def _bias_grad_s(op: Op, shape: ConvShape, r: Rates) -> float:
    """The bias gradient, where a backward computes one: a pass over the output gradient, as a reduction."""
    if not shape.gradients & ConvGradients.BIAS or not r.bandwidth:
        return 0.0
    outputs = shape.batch * shape.out_channels * shape.out_height * shape.out_width
    return outputs * _BYTES.get(op.dtype, 2.0) / (r.bandwidth * cal.REDUCTION_BW_EFF)


def _nchw_grouped_s(op: Op, shape: ConvShape, r: Rates, rate: float, t_mem: float) -> float:
    """A 16-bit grouped convolution on NCHW tensors (1-D ones have no channels-last layout: wav2vec2's positional
    convolution): cuDNN's grouped tensor-core kernels are NHWC ones, so it runs one convolution per group, the
    forward on CUDA cores (implicit_convolve_sgemm, one launch per group in the H100 profiles) and the gradients
    as per-group implicit GEMMs on tensor cores (cutlass dgrad/wgrad, one launch per group), with no transposes."""
    c, k, groups = shape.in_channels, shape.out_channels, shape.groups
    if op.phase is Phase.FORWARD:
        cuda_rate = r.cuda_core_rate(rate) * cal.CUDA_CORE_CONV_EFF
        return max(op.flops / cuda_rate, t_mem)
    t = groups * _implicit_gemms_s(op, shape, r, rate, c / groups, k / groups, forward=False)
    return max(t + _bias_grad_s(op, shape, r), t_mem)


#: the order the host issues a training step's phases in (StepTime.step_s)
_PHASE_ORDER = (Phase.FORWARD, Phase.BACKWARD, Phase.OPTIMIZER)


def flow_shop_s(host: list[float], gpu: list[float]) -> float:
    """The makespan of stages the host issues in order and the GPU runs behind it (StepTime.step_s): the largest,
    over every boundary b, of the host's time through stage b plus the GPU's time from stage b + 1 on. Within a
    stage the two are taken as evenly interleaved, so the largest falls on a boundary."""
    return max(sum(host[:b]) + sum(gpu[b:]) for b in range(len(host) + 1))


def step_time(g: OpGraph, gpu_figures: HardwareFigures, efficiencies: Efficiency | None = None, *,
              eager: bool = True, matmul_tf32: bool = False) -> StepTime:
    """The time of one step of `g` on one GPU: each op costed by class, the host's dispatch on top; `matmul_tf32`:
    FP32 matmuls on TF32 tensor cores (Rates.matmul_tf32)."""
    r = Rates.of(gpu_figures, efficiencies)
    if matmul_tf32:
        r = replace(r, matmul_tf32=True)
    if any(isinstance(shape := op.named_shape, ConvShape) and shape.layout is TensorLayout.NCHW for op in g.ops):
        r = replace(r, nchw_norms=True, conv_room=conv_fallback.room_bytes(g, gpu_figures.memory_bytes))
    st = StepTime()
    optimizer_s = 0.0
    issued_by_phase: dict[str, float] = {}
    training = g.mode.value == "training"
    channels_last = replace(r, nchw_norms=False)  # the same card's rates for the step's ops on NHWC tensors
    for op in g.ops:
        if op.cls is OpClass.OPTIMIZER:  # priced per step below, with its multi-tensor kernels' launches
            optimizer_s += op_time(op, r, training=training) * op.count
            continue
        if op.cls is OpClass.RECURRENT:
            issued_by_phase[op.phase.value] = (issued_by_phase.get(op.phase.value, 0.0)
                                               + recurrent_host_s(op, r, training) * op.count)
            st.latency_s += recurrent_latency_s(op, r, training) * op.count
        one = op_time(op, r, training=training)
        t = one * op.count
        st.device_s += t
        st.kernels += op.count
        if r.nchw_norms:
            st.nchw_s += nchw_extra_s(op, one, channels_last, training) * op.count
        st.by_class[op.cls.value] = st.by_class.get(op.cls.value, 0.0) + t
        st.by_phase[op.phase.value] = st.by_phase.get(op.phase.value, 0.0) + t
    if g.mode.value == "training":
        # fused AdamW: one multi-tensor kernel per ~chunk of parameters, each at least a kernel's floor
        launches = max(1, math.ceil(g.trainable_params / cal.OPTIMIZER_PARAMS_PER_LAUNCH))
        t_opt = optimizer_s + launches * cal.OP_KERNEL_FLOOR_S
        st.device_s += t_opt
        st.kernels += launches
        st.by_class[OpClass.OPTIMIZER.value] = t_opt
        st.by_phase[Phase.OPTIMIZER.value] = t_opt
    if eager:  # the probe's op time where measured, the calibration host's otherwise; an RNN call's issuing in line
        # with the other ops', and on the same host
        scale = host_op_scale(gpu_figures)
        units = host_units_by_phase(g)
        st.host_by_phase = {ph: (units[ph] * cal.HOST_OP_S + issued_by_phase.get(ph, 0.0)) * scale for ph in units}
    return st


def nchw_extra_s(op: Op, op_s: float, channels_last: Rates, training: bool) -> float:
    """What `op` of an NCHW step costs for its layout over channels-last, `op_s` its time as priced: a 16-bit NCHW
    convolution's time over the same convolution's on NHWC tensors; a norm or pool over its channels-last kernel's
    (`channels_last`: the step's rates without NCHW norms); else 0."""
    shape = op.named_shape
    if isinstance(shape, ConvShape):
        if shape.layout is not TensorLayout.NCHW or op.dtype not in ("bf16", "fp16"):
            return 0.0
        op = replace(op, shape=replace(shape, layout=TensorLayout.NHWC).to_row())
    elif op.cls not in (OpClass.NORM, OpClass.ELEMENTWISE):
        return 0.0
    return max(0.0, op_s - op_time(op, channels_last, training=training))


def host_counts(g: OpGraph) -> tuple[float, float, float, float, float]:
    """(forward kernels autograd does not record, forward kernels it records, backward kernels, views and other
    kernel-less ops, training steps) of one eager step: the host spends a different time on each. Every forward
    kernel of an inference step is unrecorded; in a training step, those of a frozen base (nothing they read needs
    a gradient) are too, and cost the host what an inference op does. A training step also has host work of its
    own, whatever its ops (host_units_by_phase)."""
    fwd = sum(op.count for op in g.ops if op.phase is Phase.FORWARD)
    bwd = sum(op.count for op in g.ops if op.phase is Phase.BACKWARD)
    launched = sum(op.count for op in g.ops)
    views = max(0.0, float(g.host_ops - launched))
    training = g.mode.value == "training"
    untracked = min(float(g.untracked_ops), fwd) if training else fwd
    return (untracked, fwd - untracked, bwd, views, 1.0 if training else 0.0)


def param_tensors(g: OpGraph) -> int:
    """The parameter tensors a training step's optimizer updates. Fused and foreach AdamW keep one fp32 step count
    per tensor and add 1 to each every step (`_foreach_add` on one-element tensors: its largest tensor has one
    element, where foreach AdamW's other `_foreach_add` runs over the moments), so that op's bytes read over 4; 0
    where the step has no such op (an inference graph)."""
    counts = [op.read / 4.0 for op in g.ops if op.phase is Phase.OPTIMIZER and op.name == "_foreach_add"
              and isinstance(shape := op.named_shape, StreamShape) and shape.elements == 1]
    return round(max(counts, default=0.0))


def host_units_by_phase(g: OpGraph) -> dict[str, float]:
    """Host time of one eager step in units of HOST_OP_S, each of host_counts's quantities at its own cost, by the
    phase the host spends it in: the forward's kernels and kernel-less ops (views, reshapes:
    the model's Python calls them) in the forward; the backward's kernels in the backward, its kernel-less ops
    inside autograd's C++ nodes and priced with them (host_counts counts the two phases' together: the forward's
    share is taken as its share of the kernels); a training step's own work, measured apart from any model: the
    fixed part of its forward and backward (HOST_STEP_FIXED: autocast and the loss around the model, autograd's
    engine taking the graph; in the forward, the phase the host starts the step in) and its optimizer (the step and
    zero_grad, Python loops over the parameter tensors: HOST_OPTIMIZER_STEP and HOST_OPTIMIZER_PER_TENSOR)."""
    untracked, recorded, backward, views, steps = host_counts(g)
    forward = untracked + recorded
    forward_views = views * forward / (forward + backward) if forward + backward else views
    optimizer = cal.HOST_OPTIMIZER_STEP + cal.HOST_OPTIMIZER_PER_TENSOR * param_tensors(g)
    return {Phase.FORWARD.value: untracked * cal.HOST_FWD_OPS_INFERENCE + recorded * cal.HOST_FWD_OPS_TRAINING
            + forward_views * cal.HOST_VIEW_OPS + steps * cal.HOST_STEP_FIXED,
            Phase.BACKWARD.value: backward * cal.HOST_BWD_OPS,
            Phase.OPTIMIZER.value: steps * optimizer}
