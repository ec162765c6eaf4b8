"""Where and in what state a run happened: NVML snapshots of each GPU, host and software versions.

Every NVML call is guarded: a field the driver does not report stays None.
"""

from __future__ import annotations

import contextlib
import os
import platform
import socket
import threading
from importlib import metadata
from typing import Any

from gpuadvisor.core.results import GpuState, HostInfo

# nvmlClocksEventReasons / nvmlClocksThrottleReasons bits
THROTTLE_BITS: dict[int, str] = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}
NOT_THROTTLING = {"gpu_idle", "applications_clocks_setting", "display_clock_setting"}


def decode_throttle_reasons(mask: int) -> list[str]:
    names = [name for bit, name in THROTTLE_BITS.items() if mask & bit]
    unknown = mask & ~sum(THROTTLE_BITS)
    if unknown:
        names.append(f"unknown_0x{unknown:x}")
    return names


def nvml_try(fn: Any, *args: Any) -> Any:
    """An NVML query, or None where the driver does not answer it (old GPU, no permission...)."""
    try:
        return fn(*args)
    except Exception:
        return None


def as_text(x: Any) -> Any:
    """NVML returns bytes from some bindings and str from others."""
    return x.decode() if isinstance(x, bytes) else x



def _processes(nvml: Any, handle: Any) -> list[dict[str, Any]]:
    me = os.getpid()
    seen: dict[int, dict[str, Any]] = {}
    for getter in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses"):
        fn = getattr(nvml, getter, None)
        procs = nvml_try(fn, handle) if fn else None
        for p in procs or []:
            pid = int(getattr(p, "pid", -1))
            if pid == me or pid in seen:
                continue
            used = getattr(p, "usedGpuMemory", None)
            entry: dict[str, Any] = {"pid": pid, "used_mib": None if used is None else round(used / 2**20, 1)}
            with contextlib.suppress(Exception):
                name = nvml.nvmlSystemGetProcessName(pid)
                entry["name"] = name.decode() if isinstance(name, bytes) else str(name)
            seen[pid] = entry
    return list(seen.values())


def gpu_state(nvml: Any, handle: Any) -> GpuState | None:
    """One NVML snapshot of a device; None without NVML."""
    if nvml is None or handle is None:
        return None
    s = GpuState()
    s.sm_clock_mhz = nvml_try(nvml.nvmlDeviceGetClockInfo, handle, nvml.NVML_CLOCK_SM)
    s.mem_clock_mhz = nvml_try(nvml.nvmlDeviceGetClockInfo, handle, nvml.NVML_CLOCK_MEM)
    s.temperature_c = nvml_try(nvml.nvmlDeviceGetTemperature, handle, nvml.NVML_TEMPERATURE_GPU)
    mw = nvml_try(nvml.nvmlDeviceGetPowerUsage, handle)
    s.power_w = None if mw is None else mw / 1000.0
    mw = nvml_try(nvml.nvmlDeviceGetEnforcedPowerLimit, handle)
    s.power_limit_w = None if mw is None else mw / 1000.0
    fn = getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or getattr(
        nvml, "nvmlDeviceGetCurrentClocksThrottleReasons", None
    )
    mask = nvml_try(fn, handle) if fn else None
    if mask is not None:
        s.throttle_reasons = decode_throttle_reasons(int(mask))
    s.pcie_gen = nvml_try(nvml.nvmlDeviceGetCurrPcieLinkGeneration, handle)
    s.pcie_width = nvml_try(nvml.nvmlDeviceGetCurrPcieLinkWidth, handle)
    s.other_processes = _processes(nvml, handle)
    mem = nvml_try(nvml.nvmlDeviceGetMemoryInfo, handle)
    s.memory_used_mib = None if mem is None else round(mem.used / 2**20, 1)
    util = nvml_try(nvml.nvmlDeviceGetUtilizationRates, handle)
    s.utilization_pct = None if util is None else int(util.gpu)
    return s


class NvmlPoller:
    """Calls `_sample()` every `interval_s` in a background thread while used as a context manager;
    subclasses say what one sample records. No thread without NVML; a failing sample is skipped."""

    def __init__(self, nvml: Any, handle: Any, interval_s: float):
        self.nvml, self.handle, self.interval_s = nvml, handle, interval_s
        self.samples = 0
        self.max_power_w: float | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _sample(self) -> None:  # pragma: no cover - every poller overrides it
        raise NotImplementedError

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            with contextlib.suppress(Exception):
                self._sample()

    def __enter__(self) -> NvmlPoller:
        if self.nvml is not None and self.handle is not None:
            self._thread = threading.Thread(target=self._loop, name=f"gpuadvisor-{type(self).__name__}", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)


class StateSampler(NvmlPoller):
    """Polls NVML in a background thread during a run: throttle reasons seen, clocks, power, temperature."""

    def __init__(self, nvml: Any, handle: Any, interval_s: float = 0.25):
        super().__init__(nvml, handle, interval_s)
        self.reasons: set[str] = set()
        self.max_temp_c: int | None = None
        self.min_busy_sm_clock_mhz: int | None = None

    def _sample(self) -> None:
        s = gpu_state_light(self.nvml, self.handle)
        if s is None:
            return
        self.samples += 1
        self.reasons.update(s["reasons"])
        if s["power_w"] is not None:
            self.max_power_w = max(self.max_power_w or 0.0, s["power_w"])
        if s["temp"] is not None:
            self.max_temp_c = max(self.max_temp_c or 0, s["temp"])
        if s["sm"] is not None and "gpu_idle" not in s["reasons"] and (s["util"] or 0) > 50:
            cur = self.min_busy_sm_clock_mhz
            self.min_busy_sm_clock_mhz = s["sm"] if cur is None else min(cur, s["sm"])

    @property
    def throttling(self) -> list[str]:
        return sorted(self.reasons - NOT_THROTTLING)

    def summary(self) -> dict[str, Any]:
        return {
            "samples": self.samples,
            "throttle_reasons_seen": sorted(self.reasons),
            "max_power_w": self.max_power_w,
            "max_temperature_c": self.max_temp_c,
            "min_busy_sm_clock_mhz": self.min_busy_sm_clock_mhz,
        }


def gpu_state_light(nvml: Any, handle: Any) -> dict[str, Any] | None:
    if nvml is None or handle is None:
        return None
    fn = getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or getattr(
        nvml, "nvmlDeviceGetCurrentClocksThrottleReasons", None
    )
    mask = nvml_try(fn, handle) if fn else None
    mw = nvml_try(nvml.nvmlDeviceGetPowerUsage, handle)
    util = nvml_try(nvml.nvmlDeviceGetUtilizationRates, handle)
    return {
        "reasons": decode_throttle_reasons(int(mask)) if mask is not None else [],
        "power_w": None if mw is None else mw / 1000.0,
        "temp": nvml_try(nvml.nvmlDeviceGetTemperature, handle, nvml.NVML_TEMPERATURE_GPU),
        "sm": nvml_try(nvml.nvmlDeviceGetClockInfo, handle, nvml.NVML_CLOCK_SM),
        "util": None if util is None else int(util.gpu),
    }


def cpu_name() -> str:
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine() or "unknown"


def _memory_gib() -> float | None:
    with contextlib.suppress(OSError, ValueError), open("/proc/meminfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    with contextlib.suppress(ValueError, OSError, AttributeError):
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    return None


def dist_version(dist: str) -> str | None:
    """An installed distribution's version without importing it (importing torch takes seconds)."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _cupy_dist_version() -> str | None:
    for dist in ("cupy-cuda13x", "cupy-cuda12x", "cupy-cuda11x", "cupy"):
        v = dist_version(dist)
        if v:
            return v
    return None


def _cuda_version(v: int | None) -> str | None:
    if not v:
        return None
    return f"{v // 1000}.{(v % 1000) // 10}"


def host_info(nvml: Any = None, cupy: Any = None) -> HostInfo:
    """The host and the software stack; never raises."""
    import numpy

    info = HostInfo(
        hostname=socket.gethostname(),
        os=f"{platform.system()} {platform.release()}",
        cpu=cpu_name(),
        cpu_count=os.cpu_count(),
        memory_gib=_memory_gib(),
        python=platform.python_version(),
        numpy=numpy.__version__,
        cupy_version=getattr(cupy, "__version__", None) or _cupy_dist_version(),
        torch_version=dist_version("torch"),
    )
    if nvml is not None:
        v = nvml_try(nvml.nvmlSystemGetDriverVersion)
        info.driver_version = v.decode() if isinstance(v, bytes) else v
        fn = getattr(nvml, "nvmlSystemGetCudaDriverVersion_v2", None) or getattr(
            nvml, "nvmlSystemGetCudaDriverVersion", None
        )
        info.cuda_driver_version = _cuda_version(nvml_try(fn)) if fn else None
    if cupy is not None:
        info.cuda_runtime_version = _cuda_version(nvml_try(cupy.cuda.runtime.runtimeGetVersion))
        if info.cuda_driver_version is None:
            info.cuda_driver_version = _cuda_version(nvml_try(cupy.cuda.runtime.driverGetVersion))
    return info


def nvml_handle(nvml: Any, index: int) -> Any:
    """The NVML handle of a device, or None."""
    if nvml is None:
        return None
    try:
        return nvml.nvmlDeviceGetHandleByIndex(index)
    except Exception:
        return None
