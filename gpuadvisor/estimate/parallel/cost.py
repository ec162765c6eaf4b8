"""Kernel-level time of one transformer layer and of the LM head on one GPU's share of a micro-batch: the small
interface the parallel model is built on. `AnalyticCost` counts the layer from its matrix products
(kernels.gemm_time over compute._layer_gemms), flash attention (kernels.attention_time) and the elementwise bytes
(traffic.py); an op-graph cost can replace it by implementing the same two methods (`StageCost`).

Each card's own figures, not the H100's fractions of them: its large matmuls at its published matmul reach
(gpuadvisor.matmul_reach, as every other path prices them), and attention at the rate of the kernel that runs there
(`attention_kernel_eff`)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Protocol

from gpuadvisor.estimate import calibration as cal
from gpuadvisor.estimate import kernels, traffic
from gpuadvisor.estimate.compute import _layer_gemms
from gpuadvisor.estimate.hardware import Efficiency, HardwareFigures, achieved_bandwidth
from gpuadvisor.estimate.parallel.profiles import Framework
from gpuadvisor.layout import Checkpointing
from gpuadvisor.workload import Mode, Workload

#: compute capabilities FlashAttention-2 was written for (Ampere and Ada's mma.sync): there it runs "close to the
#: efficiency of GEMM operations", 50-73 % of the A100's peak (https://arxiv.org/abs/2307.08691, abstract), as
#: FlashAttention-3 and cuDNN's fused attention do on Hopper (75 %, https://arxiv.org/abs/2407.08608): the rate the
#: kernel model (kernels.attention_rate, fitted on an H100) gives. On Hopper FlashAttention-2 reaches 35 % (the
#: FlashAttention-3 abstract): SDPA_FLASH_EFF of that rate, kept for later architectures (no published figure) and for
#: Volta and Turing, which have no FlashAttention-2 kernels.
FLASH2_NATIVE_CC = ("8.",)


def attention_kernel_eff(profile_eff: float, compute_capability: str | None) -> float:
    """The share of the kernel model's attention rate a framework's attention reaches on a card: the profile's
    figure (SDPA_FLASH_EFF: FlashAttention-2 on Hopper) except where FlashAttention-2 is the card's native kernel."""
    if profile_eff < 1.0 and (compute_capability or "").startswith(FLASH2_NATIVE_CC):
        return 1.0
    return profile_eff


@dataclass(frozen=True)
class LayerTimes:
    """Seconds of one layer on one GPU for one micro-batch: forward, backward (activation gradients, plus weight
    gradients unless frozen), the recomputation the checkpointing mode adds, and the attention core's forward and
    backward (the window context-parallel transfers hide behind)."""

    fwd: float
    bwd: float
    recompute: float
    attn_fwd: float
    attn_bwd: float

    @property
    def total(self) -> float:
        return self.fwd + self.bwd + self.recompute


class StageCost(Protocol):
    """What the parallel model needs of a cost model."""

    def layer(self, tokens: float, seq: int, tp: int) -> LayerTimes: ...

    def head(self, tokens: float, tp: int) -> tuple[float, float]: ...


@dataclass(frozen=True)
class AnalyticCost:
    """Per-layer cost from the transformer's shape, at the framework's fusion and the precision's GEMM rate."""

    workload: Workload
    gpu_figures: HardwareFigures
    fw: Framework
    checkpointing: Checkpointing

    def _gemm_rate(self, dtype: str) -> float:
        """Large GEMMs in `dtype`, as every path prices them (Efficiency.for_hardware): the calibration MFU scaled by
        the card's published matmul reach over the H100's, or MFU_VS_MEASURED of a probe's measured rate; and FP8's
        own reach where it runs FP8 (HardwareFigures.dtype_reach)."""
        figures = self.gpu_figures
        mfu, _ = Efficiency().for_hardware(figures)
        return (figures.peak_tflops(dtype) or 0.0) * 1e12 * mfu * figures.dtype_reach(dtype)

    # the rates below depend only on the fields: computed once per cost model (a layout search asks for them per layer
    # and candidate, some hundred thousand times a recommendation)
    @cached_property
    def _bf16_rate(self) -> float:
        return self._gemm_rate("bf16")

    @cached_property
    def _linear_rate(self) -> tuple[float, float]:
        """(FLOP/s, bytes per element) of the block's linears: FP8 where the precision is fp8."""
        if self.workload.dtype == "fp8" and self.fw.fp8 != "none":
            return self._gemm_rate("fp8"), 1.0
        return self._bf16_rate, 2.0

    @cached_property
    def _bw(self) -> float:
        return achieved_bandwidth(self.gpu_figures)

    def layer(self, tokens: float, seq: int, tp: int) -> LayerTimes:
        m, w = self.workload.model, self.workload
        rate, eb = self._linear_rate
        sms = self.gpu_figures.compute_units
        frozen = w.is_adapter
        fp8 = eb == 1.0

        def gt(mm: float, n: float, k: float) -> float:
            return kernels.gemm_time(mm, n, k, rate=rate, bandwidth=self._bw, sms=sms, elem_bytes=eb)

        g_fwd = g_bwd = cast = 0.0
        for share, n, k, count, _expert in _layer_gemms(m, tp):
            t = share * tokens
            g_fwd += count * gt(t, n, k)
            g_bwd += count * (gt(t, k, n) + (0.0 if frozen else gt(n, k, t)))
            if fp8:  # inputs cast to FP8 in forward, output gradients in backward
                cast += count * t * (k + n) * cal.FP8_CAST_BYTES
        hd = m.head_dim or 64
        causal = m.kind == "decoder"
        q = int(m.attention_width) // tp
        brate = self._bf16_rate * attention_kernel_eff(self.fw.attention_eff, self.gpu_figures.compute_capability)
        share = m.attention_share(seq, cal.ATTN_WINDOW_TILE)  # a mean layer's: sliding windows attend to fewer
        a_fwd = kernels.attention_time(tokens, seq, q, hd, share, causal=causal, rate=brate)
        a_all = kernels.attention_time(tokens, seq, q, hd, share, causal=causal, rate=brate, backward=True)
        a_bwd = max(0.0, a_all - a_fwd)
        sp = self.fw.sequence_parallel and tp > 1
        per_tok = traffic.forward_bytes_per_token_layer(m, a=2.0, mixed=False, tp=1 if sp else tp) / (tp if sp else 1)
        if w.is_adapter:
            per_tok += traffic.adapter_bytes_per_token_layer(m, a=2.0, targets=w.lora_targets, tp=tp, amp=True)
        e_fwd = per_tok * tokens * self.fw.elementwise / self._bw
        e_bwd = e_fwd * cal.BWD_FACTOR
        dq = 0.0
        if w.mode == Mode.QLORA:  # the 4-bit base is dequantized to bf16 in forward and again in backward
            dq = m.layer_params / tp * (0.5 + 2.0) / self._bw
        fwd = g_fwd + a_fwd + e_fwd + dq + cast / 2 / self._bw
        bwd = g_bwd + a_bwd + e_bwd + dq + cast / 2 / self._bw
        if self.checkpointing == Checkpointing.FULL:
            rec = fwd
        elif self.checkpointing == Checkpointing.SELECTIVE:
            rec = e_fwd
        else:
            rec = 0.0
        return LayerTimes(fwd=fwd, bwd=bwd, recompute=rec, attn_fwd=a_fwd, attn_bwd=a_bwd)

    def head(self, tokens: float, tp: int) -> tuple[float, float]:
        """(forward, backward) seconds of the LM head and the loss over `tokens` tokens on one GPU."""
        m = self.workload.model
        if m.kind != "decoder" or not m.vocab_size:
            return 0.0, 0.0
        v = m.vocab_size / tp
        rate = self._bf16_rate

        def gt(mm: float, n: float, k: float) -> float:
            return kernels.gemm_time(mm, n, k, rate=rate, bandwidth=self._bw, sms=self.gpu_figures.compute_units)

        loss = tokens * v * self.fw.logit_bytes / self._bw
        fwd = gt(tokens, v, m.hidden_size) + loss / 2
        bwd = gt(tokens, m.hidden_size, v) + (0.0 if self.workload.is_adapter else gt(v, m.hidden_size,
                                                                                      tokens)) + loss / 2
        return fwd, bwd
