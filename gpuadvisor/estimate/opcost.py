"""The op cost model: the time of every op of a graph on one GPU, by its class. Pure functions.

time(op) = max(FLOPs / (rate(dtype) x efficiency(class, shape)), bytes / achieved bandwidth),
never below a kernel's floor on the GPU; eager PyTorch also spends host time on every op, and the
step is the host and the GPU overlapped (compute._overlap's rule). One formula per class:

* GEMM: kernels.gemm_time (wave quantization of 128x256 tiles, the K ramp, misaligned shapes).
* convolution: an implicit GEMM (M = N x out H x out W, N = K / groups, K = C / groups x R x S), at
  the GEMM rate times CONV_EFF; depthwise convolutions (one input channel per group) have no reuse and
  run at bandwidth; NCHW tensors in 16-bit are transposed to NHWC and back around every cuDNN call.
* attention: FlashAttention's FLOPs (causal triangle halved) at kernels.attention_rate.
* recurrent (cuDNN LSTM/GRU): the input projections of all steps as one GEMM, then one small GEMM per
  time step and layer, never faster than RNN_STEP_FLOOR_S; the backward does twice the work.
* everything else (norms, elementwise, reductions, gathers, the optimizer): bytes at bandwidth.
The figures measured on the user's GPU (HardwareFigures from a probe) replace datasheet x efficiency.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from gpuadvisor.estimate import calibration as cal
from gpuadvisor.estimate import kernels
from gpuadvisor.estimate.dispatch import host_op_scale, overlap
from gpuadvisor.estimate.graph import Op, OpClass, OpGraph, Phase
from gpuadvisor.estimate.hardware import Efficiency, HardwareFigures
from gpuadvisor.workload import BYTES_PER_DTYPE

_BYTES = {**BYTES_PER_DTYPE, "fp64": 8.0}  # traced ops can be fp64; workloads cannot


@dataclass(frozen=True)
class Rates:
    """What one GPU achieves: FLOP/s per dtype for large GEMMs, and bytes/s for streaming kernels."""

    gemm: dict[str, float]
    bandwidth: float
    sms: int | None
    source: str

    @classmethod
    def of(cls, hw: HardwareFigures, eff: Efficiency | None = None) -> Rates:
        mfu, bw_eff = (eff or Efficiency()).for_source(hw.source)
        gemm = {}
        for dt in ("fp32", "bf16", "fp16", "fp8", "tf32"):
            peak = hw.peak_tflops(dt)
            if peak:
                gemm[dt] = peak * 1e12 * mfu  # fp32 is the FMA rate: CUDA-core GEMMs reach it as well
        return cls(gemm, (hw.bandwidth_gbs or 0.0) * 1e9 * bw_eff, hw.compute_units, hw.source)

    def rate(self, dtype: str) -> float:
        return self.gemm.get(dtype) or self.gemm.get("bf16") or self.gemm.get("fp32") or 0.0


@dataclass
class StepTime:
    """The GPU and host time of one step, with the GPU time per class and per phase."""

    device_s: float = 0.0
    host_s: float = 0.0
    kernels: int = 0
    by_class: dict[str, float] = field(default_factory=dict)
    by_phase: dict[str, float] = field(default_factory=dict)

    @property
    def step_s(self) -> float:
        return overlap(self.host_s, self.device_s)

    @property
    def bound(self) -> str:
        if self.host_s > self.device_s:
            return "host"
        compute = sum(self.by_class.get(c.value, 0.0) for c in (OpClass.GEMM, OpClass.CONV, OpClass.ATTENTION,
                                                                OpClass.RECURRENT))
        return "compute" if compute >= self.device_s - compute else "memory"


def op_time(op: Op, r: Rates) -> float:
    """GPU seconds of one instance of `op` (its count is applied by the caller)."""
    nbytes = op.read + op.written
    t_mem = nbytes / r.bandwidth if r.bandwidth else 0.0
    rate = r.rate(op.dtype)
    if op.cls is OpClass.GEMM and op.shape and rate:
        b, m, n, k = op.shape
        eb = _BYTES.get(op.dtype, 2.0)
        t = kernels.gemm_time(b * m, n, k, rate=rate, bandwidth=r.bandwidth, sms=r.sms, elem_bytes=eb)
        return max(t, t_mem, cal.OP_KERNEL_FLOOR_S)
    if op.cls is OpClass.CONV and op.shape and rate:
        return max(_conv_time(op, r, rate, t_mem), cal.OP_KERNEL_FLOOR_S)
    if op.cls is OpClass.ATTENTION and op.shape and rate:
        _, _, _, skv, d, _ = op.shape
        arate = kernels.attention_rate(skv, int(d), rate, backward=op.phase is Phase.BACKWARD)
        return max(op.flops / arate, t_mem, cal.OP_KERNEL_FLOOR_S)
    if op.cls is OpClass.RECURRENT and op.shape and rate:
        return _rnn_time(op, r, rate)
    t_mem /= cal.STREAM_BW_EFF  # norms, elementwise, reductions: several passes, strided channels-last reads
    if op.cls is OpClass.GATHER:
        t_mem /= cal.GATHER_BW_EFF
    return max(t_mem, cal.OP_KERNEL_FLOOR_S)


def _conv_time(op: Op, r: Rates, rate: float, t_mem: float) -> float:
    n, c, _h, _w, k, kr, ks, groups, oh, ow = op.shape[:10]
    nhwc = op.shape[10] if len(op.shape) > 10 else 1.0
    extra = 0.0
    if not nhwc and op.dtype in ("bf16", "fp16"):  # cuDNN transposes NCHW in and out of NHWC
        extra = cal.NCHW_TRANSPOSE_PASSES * t_mem
    if c / groups <= 1.0 and groups > 1:  # depthwise: bandwidth-bound (and a little worse)
        return t_mem / cal.DEPTHWISE_BW_EFF + extra
    gm = n * oh * ow
    gn = k / groups
    gk = c / groups * kr * ks
    eff = kernels.wave_efficiency(gm, gn, r.sms) * gk / (gk + cal.K_RAMP)
    t = op.flops / (rate * cal.CONV_EFF * max(eff, 1e-3))
    return max(t, t_mem) + extra


def _rnn_time(op: Op, r: Rates, rate: float) -> float:
    b, t, inp, h, layers, gates, dirs = op.shape
    total = 0.0
    eb = _BYTES.get(op.dtype, 2.0)
    for layer in range(int(layers)):
        width = inp if layer == 0 else h * dirs
        proj = kernels.gemm_time(b * t, gates * h * dirs, width, rate=rate, bandwidth=r.bandwidth, sms=r.sms,
                                 elem_bytes=eb)
        step = kernels.gemm_time(b, gates * h, h, rate=rate, bandwidth=r.bandwidth, sms=r.sms, elem_bytes=eb)
        total += proj + t * dirs * max(step, cal.RNN_STEP_FLOOR_S)
    return total * (2.0 if op.phase is Phase.BACKWARD else 1.0)


def step_time(g: OpGraph, hw: HardwareFigures, eff: Efficiency | None = None, *, eager: bool = True) -> StepTime:
    """The time of one step of `g` on one GPU: each op costed by class, the host's dispatch on top."""
    r = Rates.of(hw, eff)
    st = StepTime()
    optimizer_bytes = 0.0
    for op in g.ops:
        if op.cls is OpClass.OPTIMIZER:
            optimizer_bytes += (op.read + op.written) * op.count
            continue
        t = op_time(op, r) * op.count
        st.device_s += t
        st.kernels += op.count
        st.by_class[op.cls.value] = st.by_class.get(op.cls.value, 0.0) + t
        st.by_phase[op.phase.value] = st.by_phase.get(op.phase.value, 0.0) + t
    if g.mode.value == "training":
        # fused AdamW: one multi-tensor kernel per ~chunk of parameters; bytes as traced
        t_opt = optimizer_bytes / r.bandwidth if r.bandwidth else 0.0
        launches = max(1, math.ceil(g.trainable_params / cal.OPTIMIZER_PARAMS_PER_LAUNCH))
        t_opt += launches * cal.OP_KERNEL_FLOOR_S
        st.device_s += t_opt
        st.kernels += launches
        st.by_class[OpClass.OPTIMIZER.value] = t_opt
        st.by_phase[Phase.OPTIMIZER.value] = t_opt
    if eager:
        per_op = cal.HOST_OP_S * host_op_scale(hw) * cal.HOST_OPS_PER_ATEN_OP  # the probe's op time where measured
        st.host_s = (g.host_ops or st.kernels) * per_op
    return st
