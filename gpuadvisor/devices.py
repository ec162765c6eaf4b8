"""Finding the GPUs: NVML first, then CuPy, never raising.

NVML and CuPy are reached only through `load_nvml()` and `load_cupy()` so that tests can fake
either at that boundary (missing, failing, no devices). `discover()` always returns a
Discovery; where there is no usable GPU, `reason` says why, on one line.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

from gpuadvisor.core.provenance import nvml_handle  # noqa: F401  (its home is the bottom layer)


class Unavailable(Exception):
    """NVML or CuPy cannot be used here; the message is the reason, on one line."""


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def _nvml_error_text(e: BaseException) -> str:
    text = _one_line(e) or type(e).__name__
    return text


_NVML_STATE: dict[str, Any] = {}


def load_nvml() -> Any:
    """The initialised pynvml module, or Unavailable with the reason."""
    if "module" in _NVML_STATE:
        return _NVML_STATE["module"]
    if "error" in _NVML_STATE:
        raise Unavailable(_NVML_STATE["error"])
    try:
        import pynvml
    except Exception as e:
        _NVML_STATE["error"] = f"NVML: Python bindings not importable ({type(e).__name__}: {_one_line(e)})"
        raise Unavailable(_NVML_STATE["error"]) from None
    try:
        pynvml.nvmlInit()
    except Exception as e:
        _NVML_STATE["error"] = f"NVML: {_nvml_error_text(e)}"
        raise Unavailable(_NVML_STATE["error"]) from None
    _NVML_STATE["module"] = pynvml
    return pynvml


def cupy_hint() -> str:
    """How to install CuPy for the probes: the [cuda12] or [cuda13] extra of this install (its clone's folder where
    it was installed from one: core.install)."""
    from gpuadvisor.core.install import package_requirement

    return f"install it with pip install {package_requirement('cuda12')} (CUDA 12; [cuda13] for CUDA 13)"


def load_cupy() -> Any:
    """The cupy module with a working CUDA runtime, or Unavailable with the reason."""
    try:
        import cupy
    except Exception as e:
        raise Unavailable(f"CuPy is not installed or not importable ({type(e).__name__}: {_one_line(e)}); "
                          f"{cupy_hint()}") from None
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:
        raise Unavailable(f"CuPy: {_one_line(e)}") from None
    if n <= 0:
        raise Unavailable("CuPy: no CUDA device visible")
    return cupy


def reset_cache() -> None:
    """Forget a cached NVML load (tests)."""
    _NVML_STATE.clear()


@dataclass
class DeviceInfo:
    index: int
    name: str
    uuid: str | None = None
    memory_total_bytes: int | None = None
    memory_free_bytes: int | None = None
    compute_capability: str | None = None
    pci_bus_id: str | None = None

    @property
    def memory_gib(self) -> float | None:
        return None if self.memory_total_bytes is None else self.memory_total_bytes / 2**30


@dataclass
class Discovery:
    devices: list[DeviceInfo] = field(default_factory=list)
    reason: str | None = None  # why there is no (usable) GPU; None when all is well
    nvml: Any = None  # the pynvml module where NVML works
    cupy: Any = None  # the cupy module where CuPy works
    nvml_reason: str | None = None
    cupy_reason: str | None = None

    @property
    def found(self) -> bool:
        return bool(self.devices)

    @property
    def usable(self) -> bool:
        """GPU probes can run (CuPy works and sees the devices)."""
        return bool(self.devices) and self.cupy is not None

    @property
    def message(self) -> str | None:
        if not self.devices:
            return f"no NVIDIA GPU found: {self.reason}" if self.reason else "no NVIDIA GPU found"
        if self.cupy is None:
            return f"NVIDIA GPU found but GPU probes cannot run: {self.cupy_reason}"
        return None


def _str(x: Any) -> str:
    return x.decode() if isinstance(x, bytes) else str(x)


def _nvml_devices(nvml: Any) -> list[DeviceInfo]:
    out = []
    for i in range(nvml.nvmlDeviceGetCount()):
        h = nvml.nvmlDeviceGetHandleByIndex(i)
        info = DeviceInfo(index=i, name=_str(nvml.nvmlDeviceGetName(h)))
        with contextlib.suppress(Exception):
            info.uuid = _str(nvml.nvmlDeviceGetUUID(h))
        with contextlib.suppress(Exception):
            mem = nvml.nvmlDeviceGetMemoryInfo(h)
            info.memory_total_bytes, info.memory_free_bytes = int(mem.total), int(mem.free)
        with contextlib.suppress(Exception):
            major, minor = nvml.nvmlDeviceGetCudaComputeCapability(h)
            info.compute_capability = f"{major}.{minor}"
        with contextlib.suppress(Exception):
            info.pci_bus_id = _str(nvml.nvmlDeviceGetPciInfo(h).busId)
        out.append(info)
    return out


def _cupy_devices(cp: Any) -> list[DeviceInfo]:
    out = []
    for i in range(cp.cuda.runtime.getDeviceCount()):
        p = cp.cuda.runtime.getDeviceProperties(i)
        info = DeviceInfo(index=i, name=_str(p.get("name", f"CUDA device {i}")))
        info.memory_total_bytes = int(p.get("totalGlobalMem", 0)) or None
        info.compute_capability = f"{p.get('major')}.{p.get('minor')}"
        with contextlib.suppress(Exception):
            with cp.cuda.Device(i):
                free, _total = cp.cuda.runtime.memGetInfo()
            info.memory_free_bytes = int(free)
        out.append(info)
    return out


def discover() -> Discovery:
    """Every NVIDIA GPU this process can see. Never raises."""
    d = Discovery()
    try:
        d.nvml = load_nvml()
    except Unavailable as e:
        d.nvml_reason = str(e)
    except Exception as e:  # a broken binding: still a reason, not a crash
        d.nvml_reason = f"NVML: {type(e).__name__}: {_one_line(e)}"
    if d.nvml is not None:
        try:
            d.devices = _nvml_devices(d.nvml)
        except Exception as e:
            d.nvml_reason = f"NVML: {_nvml_error_text(e)}"
            d.nvml = None
        if d.nvml is not None and not d.devices:
            d.reason = "NVML reports no devices"
            return d
    try:
        d.cupy = load_cupy()
    except Unavailable as e:
        d.cupy_reason = str(e)
    except Exception as e:
        d.cupy_reason = f"CuPy: {type(e).__name__}: {_one_line(e)}"
    if d.cupy is not None and not d.devices:
        # NVML unusable (containers sometimes lack it) but the CUDA runtime works
        try:
            d.devices = _cupy_devices(d.cupy)
        except Exception as e:
            d.cupy_reason = f"CuPy: {type(e).__name__}: {_one_line(e)}"
            d.cupy = None
    if d.cupy is not None and d.devices and d.nvml is not None:
        with contextlib.suppress(Exception):
            n = d.cupy.cuda.runtime.getDeviceCount()
            if n < len(d.devices):  # CUDA_VISIBLE_DEVICES hides some: keep the CUDA view
                d.devices = _cupy_devices(d.cupy)
                d.nvml = None
                d.nvml_reason = "NVML indices differ from CUDA's (CUDA_VISIBLE_DEVICES); NVML state not read"
    if not d.devices:
        d.reason = d.nvml_reason or d.cupy_reason or "no device"
        if d.nvml_reason and d.cupy_reason and "not installed" not in d.cupy_reason:
            d.reason = f"{d.nvml_reason}; {d.cupy_reason}"
    return d
