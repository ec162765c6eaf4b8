"""The hardware model by architecture (catalog/architectures.yaml): per-SM tensor rates by data type and
accumulate type, and the chip figures kernels fit into (L2, shared memory per SM, the full chip's SMs).

A card's tensor peak is its architecture's per-SM rate x its SMs x its clock, halved for FP32 accumulate on
the product lines that run it at half rate (GeForce). The catalog keeps the vendor's published peaks;
tools/derive_tensor_figures.py writes the others from these rates, and the tests check both against them.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from gpuadvisor.core.errors import UserError
from gpuadvisor.core.fileio import load_yaml
from gpuadvisor.core.paths import shipped_catalog_dir

ARCHITECTURES_FILE = "architectures.yaml"
TENSOR_DTYPES = ("fp16", "bf16", "tf32", "fp8", "fp4", "int8")
# float tensor types whose FP32-accumulate rate a half-rate product line halves (int8 accumulates in INT32 and
# fp4 keeps its rate: the RTX 5090's 1,676 dense FP4 TFLOPS are the full per-SM rate)
HALVED_BY_FP32_ACCUMULATE = ("fp16", "bf16", "tf32", "fp8")
Accumulate = Literal["fp32", "fp16"]
_SOURCE = re.compile(r"https?://\S+")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TensorRates(_Strict):
    """Dense matrix-unit FLOP per SM (CU) per clock by input type; None: no such matrix operation."""

    fp16: int | None
    bf16: int | None
    tf32: int | None
    fp8: int | None
    fp4: int | None
    int8: int | None


class Fp16AccumulateRates(_Strict):
    fp16: int | None
    fp8: int | None


class Architecture(_Strict):
    id: str
    name: str
    vendor: Literal["nvidia", "amd"]
    architecture: str  # the catalog cards' `architecture` string
    chips: list[str]
    compute_capabilities: list[str]
    matrix_units: bool  # tensor (matrix) cores; with null rates below: they exist but their rate is unpublished
    tensor_flops_per_sm_clock: TensorRates | None  # FP32 accumulate, full-rate part
    fp16_accumulate_flops_per_sm_clock: Fp16AccumulateRates | None
    half_rate_fp32_accumulate: list[Literal["geforce", "professional", "datacenter", "jetson"]]
    l2_kib: int | None  # the full chip's
    shared_kib_per_sm: int | None  # most shared memory (LDS) one SM (CU) gives its blocks
    max_sms: int | None  # the full chip's SMs (CUs)
    # the MMA instructions cuDNN's implicit-GEMM convolutions run on: "native", the architecture's own full-rate
    # path (mma.sync from Volta to Ada and on GeForce/professional Blackwell), or "previous", the previous
    # generation's mma.sync, short of a peak that only the new asynchronous MMA reaches (Hopper's wgmma, data-center
    # Blackwell's tcgen05): convolutions then run at CONV_EFF of the GEMM rate, else at CONV_EFF_NATIVE_MMA
    conv_mma: Literal["native", "previous"] = "native"
    # what cuDNN does with a 16-bit NCHW convolution: "transposed", profiled (its kernels are NHWC ones: the input,
    # filter and output go to and from NHWC around each pass, but a 1x1 of stride 1, which runs as a GEMM on NCHW as
    # it is; opcost.nchw_transpose_s), or "unmeasured" (NCHW_TRANSPOSE_PASSES, an assumption, over every one)
    nchw_conv: Literal["transposed", "unmeasured"] = "unmeasured"
    sources: dict[str, str]
    notes: str

    @model_validator(mode="after")
    def _no_rates_without_matrix_units(self) -> Architecture:
        if not self.matrix_units and (self.tensor_flops_per_sm_clock or self.fp16_accumulate_flops_per_sm_clock):
            raise ValueError("tensor rates given for an architecture without matrix units")
        return self

    @field_validator("sources")
    @classmethod
    def _sources_name_a_url(cls, v: dict[str, str]) -> dict[str, str]:
        for key, text in v.items():
            if not _SOURCE.match(text):
                raise ValueError(f"{key}: must start with an http(s) URL")
        return v

    def rate(self, dtype: str, *, accumulate: Accumulate = "fp32", half_rate: bool = False) -> int | None:
        """Dense FLOP per SM per clock for `dtype` ("fp16" ... "int8"); `half_rate`: the card runs float
        FP32-accumulate tensor operations at half rate. None where the architecture lacks the operation."""
        if accumulate == "fp16":
            table = self.fp16_accumulate_flops_per_sm_clock
            return getattr(table, dtype, None) if table is not None else None
        rates = self.tensor_flops_per_sm_clock
        full = getattr(rates, dtype, None) if rates is not None else None
        if full is None or not half_rate or dtype not in HALVED_BY_FP32_ACCUMULATE:
            return full
        return full // 2

    def source(self, field: str) -> str | None:
        """The URL (and where in it) a figure comes from."""
        return self.sources.get(field)


class ArchitecturesFile(_Strict):
    architectures: list[Architecture]


def load_architectures(path: Path | None = None) -> dict[str, Architecture]:
    """The architectures by id; a bad file is one UserError line naming the entry and the field."""
    return dict(_load(path or shipped_catalog_dir() / ARCHITECTURES_FILE))


@cache
def _load(path: Path) -> tuple[tuple[str, Architecture], ...]:
    data = load_yaml(path, "architectures file")
    try:
        entries = ArchitecturesFile.model_validate(data).architectures
    except ValidationError as err:
        e = err.errors()[0]
        raise UserError(f"{path}: {'.'.join(str(x) for x in e['loc'])}: {e['msg']}") from None
    ids = [a.id for a in entries]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise UserError(f"{path}: duplicate architecture id {sorted(dup)[0]!r}")
    return tuple((a.id, a) for a in entries)


def resolve_arch_id(architecture: str, compute_capability: str | None,
                    architectures: dict[str, Architecture] | None = None) -> str | None:
    """The architecture a card without `arch_id` belongs to: the one entry with its `architecture` string
    and (NVIDIA) its compute capability; None where no entry or several fit."""
    archs = architectures if architectures is not None else load_architectures()
    fits = [a.id for a in archs.values()
            if architecture in (a.architecture, *(f"{a.architecture} ({chip})" for chip in a.chips))
            and (not a.compute_capabilities or compute_capability in a.compute_capabilities)]
    return fits[0] if len(fits) == 1 else None


def architecture_of(card: Any, architectures: dict[str, Architecture] | None = None) -> Architecture | None:
    """The card's architecture: its `arch_id`, else the one its architecture string and compute
    capability resolve to (a user's card without the field); None where neither names one."""
    archs = architectures if architectures is not None else load_architectures()
    arch_id = getattr(card, "arch_id", None) or resolve_arch_id(card.architecture, card.compute_capability, archs)
    if arch_id is None:
        return None
    if arch_id not in archs:
        raise UserError(f"card {card.name!r}: arch_id {arch_id!r} is not in {ARCHITECTURES_FILE} "
                        f"(known: {', '.join(sorted(archs))})")
    return archs[arch_id]


def convolves_on_native_mma(card: Any) -> bool | None:
    """Whether cuDNN's convolutions run on the card's own full-rate MMA (its architecture's `conv_mma`); None where
    the architecture is unknown or has no matrix units."""
    facts = _convolution_facts(card)
    return None if facts is None else facts[0]


def transposes_nchw_convolutions(card: Any) -> bool:
    """Whether the card's architecture is one whose cuDNN NCHW convolutions were profiled as transposed around NHWC
    kernels (its `nchw_conv`); False where unknown or unmeasured (the pricer's assumption then)."""
    facts = _convolution_facts(card)
    return facts is not None and facts[1]


def _facts_of(arch: Architecture) -> tuple[bool | None, bool]:
    """(conv_mma is native, None without matrix units; nchw_conv is transposed) of one architecture."""
    return (arch.conv_mma == "native" if arch.matrix_units else None), arch.nchw_conv == "transposed"


def _convolution_facts(card: Any) -> tuple[bool | None, bool] | None:
    """The card's architecture's convolution facts (_facts_of), None where it has no architecture. A shipped card's
    come from a table cached with the architectures file (datacache: a cold `recommend` parses no YAML)."""
    table = _convolution_table()
    arch_id = getattr(card, "arch_id", None)
    if arch_id in table:
        native, transposed = table[arch_id]
        return native, bool(transposed)
    arch = architecture_of(card) if getattr(card, "architecture", None) else None
    return None if arch is None else _facts_of(arch)


@cache
def _convolution_table() -> dict[str, list[bool | None]]:
    from gpuadvisor.datacache import cached

    path = shipped_catalog_dir() / ARCHITECTURES_FILE

    def build() -> dict[str, list[bool | None]]:
        return {a.id: list(_facts_of(a)) for a in load_architectures(path).values()}

    def check(value: object) -> bool:
        return isinstance(value, dict) and bool(value) and all(isinstance(v, list) and len(v) == 2
                                                               for v in value.values())

    return cached("conv-facts", [path, Path(__file__)], build, check)


def runs_fp32_accumulate_at_half_rate(card: Any, arch: Architecture) -> bool:
    """Whether the card's float tensor operations with FP32 accumulate run at half rate: its own
    `tensor_fp32_accumulate` where given, else its architecture's rule for its product family."""
    stated = getattr(card, "tensor_fp32_accumulate", None)
    if stated is not None:
        return bool(stated == "half")
    return card.family in arch.half_rate_fp32_accumulate


def derived_tensor_tflops(card: Any, arch: Architecture, clock_mhz: float | None = None) -> dict[str, float]:
    """Dense tensor TFLOPS per type with FP32 accumulate: the architecture's per-SM rate x the card's SMs
    x `clock_mhz` (default: its boost clock); empty where the SM count or the clock is unknown."""
    clock = clock_mhz if clock_mhz is not None else card.boost_clock_mhz
    if not card.compute_units or not clock:
        return {}
    half = runs_fp32_accumulate_at_half_rate(card, arch)
    out = {}
    for dtype in TENSOR_DTYPES:
        per_sm = arch.rate(dtype, half_rate=half)
        if per_sm:
            out[dtype] = card.compute_units * clock * 1e6 * per_sm / 1e12
    return out
