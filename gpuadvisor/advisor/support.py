"""What runs where: the support matrix (catalog/support/matrix.yaml) as typed data, and the one check every
interface asks before it costs a workload on a card.

A serving engine, an attention or quantization library, a precision or a training framework (a *feature*) runs on
a card when the card's vendor rule admits it: an NVIDIA compute-capability range, a list of AMD LLVM targets, a
matrix rate the card's own datasheet gives, or not on that vendor at all. Each feature carries the page that says so
and the date it was read; a vendor without a rule, or a card without the figure a rule reads, is not checked (the
advice never refuses on a guess). `needs` says which features a workload calls for, `cannot_run` joins the two into
one line, and `adapter_layout_blocker` keeps LoRA and QLoRA jobs on the layouts PEFT runs under (DDP, FSDP/ZeRO-3).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from gpuadvisor.core.errors import UserError
from gpuadvisor.core.fileio import load_yaml
from gpuadvisor.core.paths import shipped_catalog_dir

MATRIX_FILE = Path("support") / "matrix.yaml"

# feature keys the code asks for by name (the matrix file holds their rules and sources)
VLLM = "vllm"
FP8 = "fp8"
BNB_4BIT = "bitsandbytes-4bit"
BNB_8BIT = "bitsandbytes-8bit"
MXFP4 = "mxfp4"
TRANSFORMER_ENGINE = "transformer-engine"
#: a serving engine's name (estimate/serve/profiles.py ServeEngineName) -> the feature it needs; HF generate() runs
#: wherever PyTorch does and needs none
SERVE_ENGINE_FEATURE = {"vllm": VLLM, "sglang": "sglang", "trtllm": "trtllm", "llamacpp": "llamacpp-cuda", "hf": None}
#: the step engine `graphs` (recommend's and estimate's default) is the vLLM-class engine: vLLM's rule, the least
#: demanding of the three it stands for (vLLM, SGLang, TensorRT-LLM)
STEP_ENGINE_FEATURE = {"graphs": VLLM, "eager": None}
#: weight formats (workload.QUANT_FORMATS) whose kernels need a feature of their own (bitsandbytes', MXFP4's, FP8's)
QUANT_FEATURE = {"nf4": BNB_4BIT, "nf4-dq": BNB_4BIT, "int8": BNB_8BIT, "mxfp4": MXFP4, "fp8": "fp8-weights"}

_CC = re.compile(r"\d+\.\d+$")


def _cc(text: str) -> tuple[int, int]:
    major, minor = text.split(".")
    return int(major), int(minor)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Source(_Strict):
    """A page and the words on it the rule rests on."""

    url: str = Field(pattern=r"^https?://\S+$")
    says: str = Field(min_length=1)


class VendorRule(_Strict):
    """Which of one vendor's cards run a feature (module docstring)."""

    runs: bool = True
    min_cc: str | None = None
    max_cc: str | None = None
    targets: tuple[str, ...] = ()
    catalog_rate: Literal["fp8", "fp4"] | None = None

    @field_validator("min_cc", "max_cc")
    @classmethod
    def _cc_format(cls, v: str | None) -> str | None:
        if v is not None and not _CC.match(v):
            raise ValueError("must look like '8.0'")
        return v


class Feature(_Strict):
    label: str
    kind: str
    nvidia: VendorRule | None = None
    amd: VendorRule | None = None
    note: str | None = None
    sources: tuple[Source, ...] = Field(min_length=1)


class AdapterTraining(_Strict):
    """The frameworks and layouts a PEFT LoRA / QLoRA job runs under."""

    modes: tuple[str, ...]
    framework: str
    layouts: str
    sources: tuple[Source, ...] = Field(min_length=1)


class AmdTargets(_Strict):
    sources: tuple[Source, ...] = Field(min_length=1)
    cards: dict[str, str]


@dataclass(frozen=True)
class Chip:
    """What a rule reads about a card: its vendor, NVIDIA compute capability, AMD LLVM target and the matrix rates
    its datasheet gives. `vendor` "unknown" (figures without a card) is checked against nothing."""

    name: str
    vendor: str
    compute_capability: str | None = None
    llvm_target: str | None = None
    rates: frozenset[str] = frozenset()


class Matrix(_Strict):
    read: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    features: dict[str, Feature]
    adapter_training: AdapterTraining
    amd_targets: AmdTargets

    def feature(self, key: str) -> Feature:
        if key not in self.features:
            raise KeyError(f"support matrix has no feature {key!r} (one of {', '.join(self.features)})")
        return self.features[key]

    def chip(self, card: Any) -> Chip:
        """A catalog card as the rules read it."""
        tensor = getattr(card, "tensor_dense_tflops", None)
        rates = frozenset(dt for dt in ("fp8", "fp4") if tensor is not None and tensor.get(dt))
        return Chip(name=card.name, vendor=card.vendor, compute_capability=card.compute_capability,
                    llvm_target=self.amd_targets.cards.get(card.name), rates=rates)

    def why_not(self, chip: Chip, key: str) -> str | None:
        """Why `chip` cannot run the feature, in a phrase; None where it runs or the matrix cannot tell."""
        f = self.feature(key)
        rule = {"nvidia": f.nvidia, "amd": f.amd}.get(chip.vendor)
        if rule is None:
            return None
        vendor = "NVIDIA" if chip.vendor == "nvidia" else "AMD"
        if not rule.runs:
            return f"{f.label} does not run on {vendor} GPUs"
        if rule.catalog_rate and rule.catalog_rate not in chip.rates:
            return f"{f.label} needs {rule.catalog_rate} matrix units; {chip.name}'s datasheet gives no " \
                   f"{rule.catalog_rate} rate"
        if chip.vendor == "nvidia" and chip.compute_capability and (rule.min_cc or rule.max_cc):
            have = _cc(chip.compute_capability)
            low = _cc(rule.min_cc) if rule.min_cc else None
            high = _cc(rule.max_cc) if rule.max_cc else None
            if (low and have < low) or (high and have > high):
                span = (f"compute capability {rule.min_cc}" if rule.min_cc == rule.max_cc
                        else f"compute capability {rule.min_cc} or newer" if not high
                        else f"compute capability {rule.min_cc} to {rule.max_cc}")
                return f"{f.label} needs NVIDIA {span}; {chip.name} has {chip.compute_capability}"
        if chip.vendor == "amd" and rule.targets and chip.llvm_target and chip.llvm_target not in rule.targets:
            return f"{f.label} runs on AMD {', '.join(rule.targets)}; {chip.name} is {chip.llvm_target}"
        return None

    def blockers(self, chip: Chip, keys: tuple[str, ...]) -> tuple[str, ...]:
        """Every reason `chip` cannot run the features `keys`, in their order (empty: it runs them)."""
        return tuple(why for key in dict.fromkeys(keys) if (why := self.why_not(chip, key)))


@lru_cache(maxsize=4)
def load_matrix(path: Path | None = None) -> Matrix:
    """The shipped support matrix (or the file at `path`), validated; a bad file names the field, one line. The
    shipped one comes from the user cache while it and this module are unchanged (datacache: a cold `recommend`
    parses no YAML)."""
    if path is None:
        import pydantic

        from gpuadvisor.datacache import cached

        where = shipped_catalog_dir() / MATRIX_FILE
        return cached("support-matrix", [where, Path(__file__)], lambda: _validated(where),
                      lambda v: isinstance(v, Matrix), extra=pydantic.VERSION)
    return _validated(path)


def _validated(where: Path) -> Matrix:
    try:
        return Matrix.model_validate(load_yaml(where))
    except ValidationError as e:
        err = e.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        raise UserError(f"{where}: {loc}: {err['msg']}") from None


def needs(workload: Any, *, step_engine: str | None = None, serve_engine: str | None = None,
          framework: str | None = None, requires: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The features a workload calls for: the engine that serves a decoder (`step_engine` for the closed-form step
    and recommend, `serve_engine` for the simulated stream), fp8 matmuls, bitsandbytes weights, Megatron's
    Transformer Engine (`framework` "megatron"), and any the caller names (`requires`, e.g. "flash-attention-2")."""
    out: list[str] = []
    serving_decoder = workload.mode == "inference" and workload.model.kind == "decoder"
    if serving_decoder and serve_engine is not None:  # "vllm@0.6": a version of the engine needs what it needs
        out += [f for f in (SERVE_ENGINE_FEATURE.get(str(serve_engine).lower().partition("@")[0]),) if f]
    elif serving_decoder and step_engine is not None:
        out += [f for f in (STEP_ENGINE_FEATURE.get(str(step_engine)),) if f]
    if workload.compute_dtype == "fp8":
        out.append(FP8)
    quant = QUANT_FEATURE.get(workload.quant_format)
    if quant:
        out.append(quant)
    if framework == "megatron":
        out.append(TRANSFORMER_ENGINE)
    out += list(requires)
    return tuple(dict.fromkeys(out))


def cannot_run(card: Any, features: tuple[str, ...], matrix: Matrix | None = None) -> str | None:
    """'cannot run: <why>; <why>' for a catalog card and the features a workload needs, None where it runs them."""
    m = matrix or load_matrix()
    why = m.blockers(m.chip(card), features)
    return "cannot run: " + "; ".join(why) if why else None


def adapter_layout_blocker(workload: Any, *, tp: int = 1, pp: int = 1, cp: int = 1,
                           framework: str | None = None) -> str | None:
    """Why a LoRA/QLoRA job cannot run under this layout (tensor, pipeline or context parallel, or the Megatron
    profile), None for data parallel and FSDP/ZeRO-3, the layouts PEFT runs under (matrix `adapter_training`)."""
    m = load_matrix()
    if workload.mode not in m.adapter_training.modes:
        return None
    split = [f"{name}{n}" for name, n in (("TP", tp), ("PP", pp), ("CP", cp)) if n > 1]
    if not split and (framework in (None, m.adapter_training.framework, "fsdp2", "compile")):
        return None
    what = " ".join(split) if split else f"the {framework} framework"
    base = "bitsandbytes 4-bit QLoRA" if workload.mode == "qlora" else "PEFT LoRA"
    return (f"cannot run: {base} runs under {m.adapter_training.layouts}, not under {what} "
            "(Megatron-style tensor, pipeline or context parallelism)")


def facts_of_figures(hardware: Any) -> Chip:
    """A chip from estimate figures alone (no catalog card at hand): NVIDIA where a compute capability is known."""
    cc = getattr(hardware, "compute_capability", None)
    return Chip(name=hardware.name, vendor="nvidia" if cc else "unknown", compute_capability=cc)


__all__ = ["BNB_4BIT", "BNB_8BIT", "FP8", "MXFP4", "QUANT_FEATURE", "SERVE_ENGINE_FEATURE", "STEP_ENGINE_FEATURE",
           "TRANSFORMER_ENGINE", "VLLM", "Chip", "Feature", "Matrix", "Source", "VendorRule", "adapter_layout_blocker",
           "cannot_run", "facts_of_figures", "load_matrix", "needs"]
