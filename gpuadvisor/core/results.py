"""The probe result schema: what probes produce and everything downstream reads.

A result file is self-describing: it carries the tool version, when and where it ran, the
state of each GPU before and after (clocks, temperature, throttling, other processes), each
probe's status, and each figure next to its datasheet value and the same-run reference.
"""

from __future__ import annotations

import datetime as _dt
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gpuadvisor import __version__
from gpuadvisor.core.errors import UserError
from gpuadvisor.core.fileio import atomic_write_text, load_json

SCHEMA_VERSION = 1
Status = Literal["ok", "failed", "skipped", "timeout", "interrupted"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Measurement(_Model):
    """One figure. `reference` is a vendor library measured in the same run (cudaMemcpy, PyTorch)."""

    key: str  # stable id, e.g. "memory.triad", "tensor.bf16", "fp32.fma"
    label: str
    value: float | None
    unit: str  # "GB/s", "TFLOP/s", "TOPS", "ms"
    spread: float | None = None  # relative (max-min)/median over repeats (or bursts, or rounds)
    host_bound: bool = False  # limited by the host (pageable copies go through a CPU memcpy), not the GPU
    datasheet: float | None = None
    datasheet_source: str | None = None  # "catalog" or "theoretical: SMs x lanes x clock"
    reference: float | None = None
    reference_label: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)

    @property
    def pct_of_datasheet(self) -> float | None:
        if self.value is None or not self.datasheet:
            return None
        return 100.0 * self.value / self.datasheet

    @property
    def ratio_to_reference(self) -> float | None:
        if self.value is None or not self.reference:
            return None
        return self.value / self.reference


class ProbeResult(_Model):
    probe: str  # "properties", "memory_bandwidth", "transfer", "flops", "tensor", "host", "crossover"
    status: Status
    reason: str | None = None
    duration_s: float = 0.0
    measurements: list[Measurement] = Field(default_factory=list)
    data: dict[str, Any] = Field(default_factory=dict)  # raw tables: sweeps, per-size timings

    def get(self, key: str) -> Measurement | None:
        return next((m for m in self.measurements if m.key == key), None)


class GpuState(_Model):
    """A snapshot from NVML; any field may be None where the driver does not say."""

    sm_clock_mhz: int | None = None
    mem_clock_mhz: int | None = None
    temperature_c: int | None = None
    power_w: float | None = None
    power_limit_w: float | None = None
    throttle_reasons: list[str] = Field(default_factory=list)
    pcie_gen: int | None = None
    pcie_width: int | None = None
    other_processes: list[dict[str, Any]] = Field(default_factory=list)
    memory_used_mib: float | None = None
    utilization_pct: int | None = None


class DeviceResult(_Model):
    index: int
    name: str
    uuid: str | None = None
    properties: dict[str, Any] = Field(default_factory=dict)
    catalog_name: str | None = None
    state_before: GpuState | None = None
    state_after: GpuState | None = None
    flags: list[str] = Field(default_factory=list)  # "busy: 1 other process", "throttled: ..."
    probes: list[ProbeResult] = Field(default_factory=list)

    def probe(self, name: str) -> ProbeResult | None:
        return next((p for p in self.probes if p.probe == name), None)

    def measurement(self, key: str) -> Measurement | None:
        for p in self.probes:
            m = p.get(key)
            if m is not None:
                return m
        return None


class HostInfo(_Model):
    hostname: str
    os: str
    cpu: str
    cpu_count: int | None
    memory_gib: float | None
    python: str
    numpy: str | None = None
    driver_version: str | None = None
    cuda_driver_version: str | None = None
    cuda_runtime_version: str | None = None
    cupy_version: str | None = None
    torch_version: str | None = None


class RunResult(_Model):
    schema_version: int = SCHEMA_VERSION
    tool_version: str = __version__
    created_at: str = Field(default_factory=lambda: _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))
    mode: Literal["quick", "full"] = "quick"
    complete: bool = True  # False when interrupted: the figures present are real, some are missing
    gpu_found: bool = False
    message: str | None = None  # e.g. "no NVIDIA GPU found (NVML: driver not loaded)"
    host: HostInfo
    host_probes: list[ProbeResult] = Field(default_factory=list)
    devices: list[DeviceResult] = Field(default_factory=list)
    # probes of the node as a whole, over every GPU in the run (interconnect: topology, P2P, NCCL)
    node_probes: list[ProbeResult] = Field(default_factory=list)

    def node_probe(self, name: str) -> ProbeResult | None:
        return next((p for p in self.node_probes if p.probe == name), None)

    def host_probe(self, name: str) -> ProbeResult | None:
        return next((p for p in self.host_probes if p.probe == name), None)


def save(result: RunResult, path: str | os.PathLike[str], *, force: bool = False) -> Path:
    return atomic_write_text(path, result.model_dump_json(indent=2) + "\n", force=force)


def load(path: str | os.PathLike[str]) -> RunResult:
    data = load_json(path, "probe result file")
    if isinstance(data, dict) and data.get("schema_version", SCHEMA_VERSION) != SCHEMA_VERSION:
        raise UserError(
            f"{path}: result schema version {data.get('schema_version')!r} is not supported "
            f"(this gpuadvisor reads version {SCHEMA_VERSION})"
        )
    try:
        return RunResult.model_validate(data)
    except ValidationError as err:
        e = err.errors()[0]
        where = ".".join(str(x) for x in e["loc"]) or "(top level)"
        raise UserError(f"{path}: not a gpuadvisor result file: {where}: {e['msg']}") from None
