"""The figures an estimate needs about one GPU (datasheet or measured) and the efficiencies
that turn peaks into achievable rates."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from gpuadvisor.estimate import calibration as cal

GiB = 2**30
__getattr__ = cal.aliases(__name__, ("DEFAULT_INTERCONNECT_GBS",))  # now in the calibration table


def _cal(name: str) -> Any:
    """A dataclass default read from the calibration table when the instance is made."""
    return field(default_factory=lambda: cal.value(name))


@dataclass(frozen=True)
class Efficiency:
    """What fraction of the peak a real step reaches. Defaults: the calibration table's MFU, BANDWIDTH,
    MFU_VS_MEASURED, BANDWIDTH_VS_MEASURED and INTERCONNECT_EFFICIENCY (docs/calibration.md says where
    each came from). With measured figures (`--probe`), the `*_vs_measured` fractions apply instead,
    since the probe already measured what is reachable."""

    mfu: float = _cal("MFU")  # large-GEMM FLOP/s as a fraction of datasheet dense tensor peak
    bandwidth: float = _cal("BANDWIDTH")  # achieved memory bandwidth as a fraction of the datasheet
    mfu_vs_measured: float = _cal("MFU_VS_MEASURED")  # ... of a measured matmul peak (tensor.bf16 probe)
    bandwidth_vs_measured: float = _cal("BANDWIDTH_VS_MEASURED")  # ... of a measured triad/copy bandwidth
    interconnect: float = _cal("INTERCONNECT_EFFICIENCY")  # achieved fraction of the interconnect figure

    def validate(self) -> Efficiency:
        from gpuadvisor.core.errors import UserError

        for k in ("mfu", "bandwidth", "mfu_vs_measured", "bandwidth_vs_measured", "interconnect"):
            v = getattr(self, k)
            if not (0 < v <= 1):
                raise UserError(f"efficiency {k} must be in (0, 1], got {v!r}")
        return self

    mfu_given: bool = False  # `mfu` is the user's (--mfu): a card's published matmul reach does not rescale it
    bandwidth_given: bool = False  # `bandwidth` is the user's (--bw-eff): nor does its published bandwidth reach

    def for_source(self, source: str) -> tuple[float, float]:
        """(matmul, bandwidth) efficiency for figures from the datasheet or measured by a probe."""
        if source == "measured":
            return self.mfu_vs_measured, self.bandwidth_vs_measured
        return self.mfu, self.bandwidth

    def for_hardware(self, gpu_figures: HardwareFigures) -> tuple[float, float]:
        """(matmul, bandwidth) efficiency for these figures: a probe's measured ones, else the datasheet's with
        the calibration MFU scaled by the card's large-matmul reach over the calibration card's
        (gpuadvisor.matmul_reach: a GeForce card's half-rate tensor cores reach more of their listed peak), and
        BANDWIDTH by its published copy bandwidth's reach over the calibration card's (gpuadvisor.bandwidth_reach:
        an A100's HBM2e copies at 0.79 of its figure, the H100's HBM3 at 0.87)."""
        mfu, bandwidth = self.for_source(gpu_figures.source)
        if gpu_figures.source != "measured" and gpu_figures.matmul_reach_scale is not None and not self.mfu_given:
            mfu *= gpu_figures.matmul_reach_scale
        if gpu_figures.source != "measured" and gpu_figures.bandwidth_reach_scale is not None \
                and not self.bandwidth_given:
            bandwidth = min(1.0, bandwidth * gpu_figures.bandwidth_reach_scale)
        return mfu, bandwidth


def achieved_bandwidth(gpu_figures: HardwareFigures) -> float:
    """Bytes/s a large streaming kernel reaches on these figures: BANDWIDTH of the datasheet's, or
    BANDWIDTH_VS_MEASURED of a probe's measured copy bandwidth (Efficiency.for_hardware)."""
    return (gpu_figures.bandwidth_gbs or 0.0) * 1e9 * Efficiency().for_hardware(gpu_figures)[1]


@dataclass(frozen=True)
class HardwareFigures:
    """The figures the estimate needs about one GPU; from the catalog or from a probe run."""

    name: str
    memory_gib: float | None
    bandwidth_gbs: float | None
    tflops: dict[str, float] = field(default_factory=dict)  # dense TFLOP/s per dtype ("fp32" = FMA rate)
    tdp_w: float | None = None
    interconnect_gbs: float | None = None
    # whether interconnect_gbs joins every GPU of a node (SXM/OAM boards, NVSwitch); False: a PCIe card whose
    # NVLink figure is a bridge between two cards, which a rented node seldom has
    interconnect_node_wide: bool = True
    compute_units: int | None = None  # SMs (NVIDIA) / CUs (AMD): sets a GEMM's wave quantization
    boost_clock_mhz: float | None = None  # the catalog's: with the SMs, how fast thread-bound kernels issue
    allreduce_busbw_gbs: float | None = None  # measured all-reduce bus bandwidth (interconnect probe)
    source: str = "datasheet"  # "datasheet" | "measured"
    measured_keys: tuple[str, ...] = ()  # which figures came from the probe
    compute_capability: str | None = None  # NVIDIA "9.0": decides which attention backend PyTorch picks
    host_op_s: float | None = None  # measured host time of one eager PyTorch op (dispatch probe)
    attention_plan_s: float | None = None  # measured host time of SDPA on a new sequence length (dispatch probe)
    eager_layer_s: float | None = None  # measured generate() host time per layer and decode step (dispatch probe)
    eager_fixed_s: float | None = None  # measured generate() host time per decode step, fixed (dispatch probe)
    # the op cost model's measured efficiencies (conv and elementwise probes, --full); empty/None = the calibration's
    conv_eff: dict[str, float] = field(default_factory=dict)  # "bf16_nhwc": dense conv rate / same-run GEMM rate
    depthwise_bw_eff: float | None = None  # depthwise conv (bf16, NHWC) bandwidth / same-run copy bandwidth
    stream_eff: dict[str, float] = field(default_factory=dict)  # op class ("elementwise", "norm", "reduction") ->
    # achieved bandwidth / same-run copy bandwidth, bytes counted as a traced op counts them

    # a large matmul's reach of the datasheet peak over the calibration card's (gpuadvisor.matmul_reach), and
    # what it rests on; None: the calibration MFU as it is
    matmul_reach_scale: float | None = None
    matmul_reach_basis: str = ""
    # its streaming copy's reach of the datasheet bandwidth over the calibration card's (gpuadvisor.bandwidth_reach),
    # and what it rests on; None: the calibration BANDWIDTH as it is
    bandwidth_reach_scale: float | None = None
    bandwidth_reach_basis: str = ""
    # whether cuDNN's convolutions run on the architecture's own full-rate MMA (catalog/architectures.yaml
    # `conv_mma`); None where the architecture is unknown: the calibration card's CONV_EFF then
    conv_native_mma: bool | None = None
    # whether cuDNN's 16-bit NCHW convolutions on this architecture were profiled as transposed around NHWC kernels
    # (catalog/architectures.yaml `nchw_conv`): opcost.nchw_transpose_s prices them, else NCHW_TRANSPOSE_PASSES
    nchw_convs_transposed: bool = False

    def matmul_reach_note(self) -> str:
        """What this card's large-matmul rate rests on beside the calibration MFU, for an answer: " (x 0.68: ...)"
        where a published reach moves it, "" on a probe's measured figures or where nothing moves it."""
        return self._reach_note(self.matmul_reach_scale, "matmul reach", self.matmul_reach_basis)

    def bandwidth_reach_note(self) -> str:
        """matmul_reach_note's twin for the achieved bandwidth beside the calibration BANDWIDTH."""
        return self._reach_note(self.bandwidth_reach_scale, "copy bandwidth's reach", self.bandwidth_reach_basis)

    def _reach_note(self, scale: float | None, what: str, basis: str) -> str:
        if self.source == "measured" or scale is None or abs(scale - 1.0) < 0.005 or not basis:
            return ""
        return f" (x {scale:.2f}, its {what} over the H100's: {basis})"

    @classmethod
    def from_card(cls, card: Any) -> HardwareFigures:
        from gpuadvisor.architectures import convolves_on_native_mma, transposes_nchw_convolutions

        tf = {}
        for dt in ("fp16", "bf16", "tf32", "fp8", "int8"):
            v = card.tensor_tflops(dt)
            if v:
                tf[dt] = float(v)
        if card.fp32_tflops:
            tf["fp32"] = float(card.fp32_tflops)
        return cls(
            name=card.name,
            memory_gib=card.memory_gib,
            bandwidth_gbs=card.memory_bandwidth_gbs,
            tflops=tf,
            tdp_w=card.tdp_w,
            interconnect_gbs=card.interconnect_gbs,
            interconnect_node_wide=not str(getattr(card, "form_factor", "") or "").lower().startswith("pcie"),
            compute_units=getattr(card, "compute_units", None),
            boost_clock_mhz=getattr(card, "boost_clock_mhz", None),
            compute_capability=getattr(card, "compute_capability", None) if card.vendor == "nvidia" else None,
            conv_native_mma=convolves_on_native_mma(card),
            nchw_convs_transposed=transposes_nchw_convolutions(card),
            **_reach_fields(card),
        )

    def peak_tflops(self, dtype: str) -> float | None:
        """Matmul peak for a compute dtype; fp32 uses TF32 tensor cores where the card has them
        (PyTorch's default for matmul is still strict fp32, so fp32 is taken as the FMA rate)."""
        if dtype == "fp32":
            return self.tflops.get("fp32")
        if dtype == "tf32":  # a card without TF32 tensor cores runs TF32-allowed math in FP32
            return self.tflops.get("tf32") or self.tflops.get("fp32")
        if dtype == "fp8":
            return self.tflops.get("fp8") or self.tflops.get("bf16") or self.tflops.get("fp16")
        return self.tflops.get(dtype) or self.tflops.get("fp16") or self.tflops.get("bf16") or self.tflops.get("fp32")

    def dtype_reach(self, dtype: str) -> float:
        """A large GEMM's share of `dtype`'s datasheet peak over a 16-bit GEMM's share of its own: FP8_REACH for FP8
        on a card with an FP8 rate (its clock falls further under the power limit), 1 otherwise and for measured
        figures (the probe's fp8 rate already holds it)."""
        if dtype == "fp8" and self.tflops.get("fp8") and self.source != "measured":
            return float(cal.FP8_REACH)
        return 1.0

    def op_scale(self, key: str) -> float | None:
        """The measured op efficiency `key` ("conv_eff.bf16_nhwc", "depthwise_bw_eff", "stream_eff.norm") over
        the calibration H100's (H100_OP_FIGURES); None where either is missing."""
        kind, _, sub = key.partition(".")
        got = {"conv_eff": self.conv_eff, "stream_eff": self.stream_eff}.get(kind, {}).get(sub) if sub else (
            self.depthwise_bw_eff if key == "depthwise_bw_eff" else None)
        ref = H100_OP_FIGURES.get(key)
        return got / ref if got and ref else None

    @property
    def host_measured(self) -> bool:
        """Whether the dispatch probe measured this host's eager figures (else the defaults stand in)."""
        return bool(self.eager_layer_s or self.host_op_s)

    @property
    def memory_bytes(self) -> float | None:
        return None if self.memory_gib is None else self.memory_gib * GiB


def measured_figures(device: Any) -> dict[str, float]:
    """Map a probe DeviceResult's measurements onto estimate figures (the one place that knows
    the probe keys): bandwidth_gbs from memory.triad (else memory.copy), tflops per dtype from
    tensor.<dtype>, fp32 from fp32.fma, allreduce_busbw_gbs from interconnect.allreduce_busbw, the op cost
    model's efficiencies from conv.* and elementwise.* (op_efficiencies), and the host's eager figures from
    dispatch.* (generate()'s own attention plan before the SDPA-level one)."""
    out: dict[str, float] = {}

    def val(key: str, *, zero_ok: bool = False) -> float | None:
        m = device.measurement(key)
        v = getattr(m, "value", None) if m is not None else None
        return float(v) if v is not None and (v > 0 or (zero_ok and v == 0)) else None

    bw = val("memory.triad") or val("memory.copy")
    if bw:
        out["bandwidth_gbs"] = bw
    for dt in ("fp16", "bf16", "tf32", "fp8", "int8"):
        v = val(f"tensor.{dt}")
        if v:
            out[f"tflops.{dt}"] = v
    v = val("fp32.fma")
    if v:
        out["tflops.fp32"] = v
    v = val("interconnect.allreduce_busbw")  # helper `interconnect`'s probe, GB/s
    if v:
        out["allreduce_busbw_gbs"] = v
    out.update(op_efficiencies(device))
    v = val("dispatch.op")  # us
    if v:
        out["host_op_s"] = v * 1e-6
    v = val("dispatch.generate_plan", zero_ok=True)  # ms; 0 is a real result (no plan built)
    if v is None:
        v = val("dispatch.sdpa_new_shape", zero_ok=True)
    if v is not None:
        out["attention_plan_s"] = v * 1e-3
    v = val("dispatch.generate_layer")  # ms
    if v:
        out["eager_layer_s"] = v * 1e-3
        f = val("dispatch.generate_fixed", zero_ok=True)
        if f is not None:
            out["eager_fixed_s"] = f * 1e-3
    return out


STREAM_OPS = {"elementwise": ("add",), "norm": ("layer_norm", "batch_norm"), "reduction": ("softmax",)}
# The same figures on the H100 the op cost model's constants were fitted on: the mean of a cold and a warm
# --full run of the final probe code (lab/data/h100-probe-time/figures.txt, 2026-11-24). One shape's
# efficiency is not what a fitted constant stands for (a dense 3x3 convolution reaches 0.85-0.94 of the GEMM
# rate at batch 512; CONV_EFF, fitted on every layer of the validation CNNs, is 0.9 with a fixed time a pass, 0.6
# while their bias adds went untraced), so the model scales its constants by the user's figure over these: an
# H100 keeps them, another GPU moves them by what it measured.
H100_OP_FIGURES = {"conv_eff.bf16_nhwc": 0.89, "conv_eff.fp16_nhwc": 0.91, "depthwise_bw_eff": 0.214,
                   "stream_eff.elementwise": 1.034, "stream_eff.norm": 0.476, "stream_eff.reduction": 0.437}


def op_efficiencies(device: Any) -> dict[str, float]:
    """The conv and elementwise probes' figures as fractions of their same-run references: conv_eff.<dtype>_<layout>
    (dense convolution TFLOP/s over a large GEMM's), depthwise_bw_eff (bf16 NHWC, over a copy) and
    stream_eff.<class> (elementwise: add; norm: the mean of layer and batch norm; reduction: softmax)."""
    out: dict[str, float] = {}

    def ratio(key: str) -> float | None:
        m = device.measurement(key)
        r = getattr(m, "ratio_to_reference", None) if m is not None else None
        return float(r) if r is not None and 0 < r <= 2 else None

    for dt in ("bf16", "fp16"):
        for layout in ("nhwc", "nchw"):
            r = ratio(f"conv.{dt}_{layout}")
            if r:
                out[f"conv_eff.{dt}_{layout}"] = r
    r = ratio("conv.depthwise_bf16_nhwc")
    if r:
        out["depthwise_bw_eff"] = r
    for cls, ops in STREAM_OPS.items():
        got = [x for x in (ratio(f"elementwise.{op}") for op in ops) if x]
        if got:
            out[f"stream_eff.{cls}"] = sum(got) / len(got)
    return out


def apply_measured(gpu_figures: HardwareFigures, figures: dict[str, float]) -> HardwareFigures:
    """The same card with measured figures replacing datasheet ones (memory size and TDP stay)."""
    if not figures:
        return gpu_figures
    tf = dict(gpu_figures.tflops)
    for k, v in figures.items():
        if k.startswith("tflops."):
            tf[k.split(".", 1)[1]] = v
    # efficiencies switch to the *_vs_measured set only when the rates themselves were measured
    rates = "bandwidth_gbs" in figures or any(k.startswith("tflops.") for k in figures)
    return replace(
        gpu_figures,
        bandwidth_gbs=figures.get("bandwidth_gbs", gpu_figures.bandwidth_gbs),
        allreduce_busbw_gbs=figures.get("allreduce_busbw_gbs", gpu_figures.allreduce_busbw_gbs),
        host_op_s=figures.get("host_op_s", gpu_figures.host_op_s),
        attention_plan_s=figures.get("attention_plan_s", gpu_figures.attention_plan_s),
        eager_layer_s=figures.get("eager_layer_s", gpu_figures.eager_layer_s),
        eager_fixed_s=figures.get("eager_fixed_s", gpu_figures.eager_fixed_s),
        conv_eff={**gpu_figures.conv_eff, **{k.split(".", 1)[1]: v for k,
                                             v in figures.items() if k.startswith("conv_eff.")}},
        depthwise_bw_eff=figures.get("depthwise_bw_eff", gpu_figures.depthwise_bw_eff),
        stream_eff={**gpu_figures.stream_eff, **{k.split(".", 1)[1]: v for k, v in figures.items()
                                        if k.startswith("stream_eff.")}},
        tflops=tf,
        source="measured" if rates else gpu_figures.source,
        measured_keys=tuple(sorted(figures)),
    )


def _reach_fields(card: Any) -> dict[str, Any]:
    from gpuadvisor.bandwidth_reach import scale_of
    from gpuadvisor.matmul_reach import reach_of

    out: dict[str, Any] = {}
    reach = reach_of(card)
    if reach is not None:
        out.update(matmul_reach_scale=reach.relative_to_calibration(), matmul_reach_basis=reach.basis)
    bandwidth = scale_of(card)
    if bandwidth is not None:
        out.update(bandwidth_reach_scale=bandwidth[0], bandwidth_reach_basis=bandwidth[1])
    return out
