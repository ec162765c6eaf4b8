"""Device properties: CUDA runtime attributes plus NVML (clocks, PCIe link, power limit, ECC)."""

from __future__ import annotations

import time
from typing import Any

from gpuadvisor.core.provenance import as_text as _s
from gpuadvisor.core.provenance import nvml_try as _try
from gpuadvisor.core.results import ProbeResult
from probes.base import ProbeContext

NAME = "properties"

# cudaDeviceAttr values (driver_types.h); stable since CUDA 9
ATTR = {
    "max_threads_per_block": 1,
    "shared_mem_per_block": 8,
    "warp_size": 10,
    "regs_per_block": 12,
    "clock_rate_khz": 13,
    "multiprocessor_count": 16,
    "ecc_enabled": 32,
    "memory_clock_rate_khz": 36,
    "memory_bus_width_bits": 37,
    "l2_cache_bytes": 38,
    "max_threads_per_sm": 39,
    "cc_major": 75,
    "cc_minor": 76,
    "shared_mem_per_sm": 81,
    "regs_per_sm": 82,
    "shared_mem_per_block_optin": 97,
}
# property name in cupy.cuda.runtime.getDeviceProperties -> our key
PROP_KEYS = {
    "maxThreadsPerBlock": "max_threads_per_block",
    "sharedMemPerBlock": "shared_mem_per_block",
    "warpSize": "warp_size",
    "regsPerBlock": "regs_per_block",
    "multiProcessorCount": "multiprocessor_count",
    "memoryBusWidth": "memory_bus_width_bits",
    "l2CacheSize": "l2_cache_bytes",
    "maxThreadsPerMultiProcessor": "max_threads_per_sm",
    "sharedMemPerMultiprocessor": "shared_mem_per_sm",
    "regsPerMultiprocessor": "regs_per_sm",
    "sharedMemPerBlockOptin": "shared_mem_per_block_optin",
    "totalGlobalMem": "memory_total_bytes",
}

PCIE_GBS_PER_LANE = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}


def collect(cp: Any, nvml: Any, handle: Any, index: int) -> dict[str, Any]:
    """Everything known about the device, from the CUDA runtime (cp) and NVML; either may be None."""
    p: dict[str, Any] = {"index": index}
    if cp is not None:
        rt = cp.cuda.runtime
        dp = rt.getDeviceProperties(index)
        p["name"] = _s(dp.get("name"))
        p["compute_capability"] = f"{dp['major']}.{dp['minor']}"
        for src, key in PROP_KEYS.items():
            if src in dp:
                p[key] = int(dp[src])
        for key, attr in ATTR.items():
            if key in ("cc_major", "cc_minor"):
                continue
            if key not in p:
                v = _try(rt.deviceGetAttribute, attr, index)
                if v is not None:
                    p[key] = int(v)
        p["ecc_enabled"] = bool(p.get("ecc_enabled")) if "ecc_enabled" in p else None
        if p.get("clock_rate_khz"):
            p["sm_clock_max_mhz"] = p["clock_rate_khz"] // 1000
        if p.get("memory_clock_rate_khz"):
            p["mem_clock_max_mhz"] = p["memory_clock_rate_khz"] // 1000
        with cp.cuda.Device(index):
            free, total = rt.memGetInfo()
        p["memory_free_bytes"], p["memory_total_bytes"] = int(free), int(total)
        p["pci_bus_id"] = _try(rt.deviceGetPCIBusId, index)
    if nvml is not None and handle is not None:
        if "name" not in p:
            p["name"] = _s(_try(nvml.nvmlDeviceGetName, handle))
        cc = _try(nvml.nvmlDeviceGetCudaComputeCapability, handle)
        if cc and "compute_capability" not in p:
            p["compute_capability"] = f"{cc[0]}.{cc[1]}"
        v = _try(nvml.nvmlDeviceGetMaxClockInfo, handle, nvml.NVML_CLOCK_SM)
        if v:
            p["sm_clock_max_mhz"] = int(v)
        v = _try(nvml.nvmlDeviceGetMaxClockInfo, handle, nvml.NVML_CLOCK_MEM)
        if v:
            p["mem_clock_max_mhz"] = int(v)
        if "memory_bus_width_bits" not in p:
            fn = getattr(nvml, "nvmlDeviceGetMemoryBusWidth", None)
            v = _try(fn, handle) if fn else None
            if v:
                p["memory_bus_width_bits"] = int(v)
        mem = _try(nvml.nvmlDeviceGetMemoryInfo, handle)
        if mem is not None and "memory_total_bytes" not in p:
            p["memory_total_bytes"], p["memory_free_bytes"] = int(mem.total), int(mem.free)
        ecc = _try(nvml.nvmlDeviceGetEccMode, handle)
        if ecc is not None:
            p["ecc_enabled_nvml"] = bool(ecc[0])
            if p.get("ecc_enabled") is None:
                p["ecc_enabled"] = bool(ecc[0])
        if p.get("ecc_enabled"):
            # Volatile counts (since the driver loaded) say whether this node is healthy now;
            # aggregate (lifetime) counts are kept for the record.
            get = nvml.nvmlDeviceGetTotalEccErrors
            for kind, etype in (("uncorrected", nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED),
                                ("corrected", nvml.NVML_MEMORY_ERROR_TYPE_CORRECTED)):
                p[f"ecc_errors_{kind}"] = _try(get, handle, etype, nvml.NVML_VOLATILE_ECC)
                p[f"ecc_errors_{kind}_lifetime"] = _try(get, handle, etype, nvml.NVML_AGGREGATE_ECC)
        p["pcie_gen_current"] = _try(nvml.nvmlDeviceGetCurrPcieLinkGeneration, handle)
        p["pcie_width_current"] = _try(nvml.nvmlDeviceGetCurrPcieLinkWidth, handle)
        p["pcie_gen_max"] = _try(nvml.nvmlDeviceGetMaxPcieLinkGeneration, handle)
        p["pcie_width_max"] = _try(nvml.nvmlDeviceGetMaxPcieLinkWidth, handle)
        fn = getattr(nvml, "nvmlDeviceGetGpuMaxPcieLinkGeneration", None)
        p["pcie_gen_max_gpu"] = _try(fn, handle) if fn else None
        mw = _try(nvml.nvmlDeviceGetEnforcedPowerLimit, handle)
        p["power_limit_w"] = None if mw is None else mw / 1000.0
        mw = _try(nvml.nvmlDeviceGetPowerManagementDefaultLimit, handle)
        p["power_default_limit_w"] = None if mw is None else mw / 1000.0
        p["uuid"] = _s(_try(nvml.nvmlDeviceGetUUID, handle))
    p.update(theoretical(p))
    return p


def theoretical(p: dict[str, Any]) -> dict[str, Any]:
    """Figures derived from the properties: memory and PCIe bandwidth."""
    out: dict[str, Any] = {}
    mem, bus = p.get("mem_clock_max_mhz"), p.get("memory_bus_width_bits")
    if mem and bus:
        out["memory_bandwidth_theoretical_gbs"] = mem * 1e6 * 2 * bus / 8 / 1e9
    gen, width = p.get("pcie_gen_max"), p.get("pcie_width_max")
    if gen in PCIE_GBS_PER_LANE and width:
        out["pcie_theoretical_gbs"] = PCIE_GBS_PER_LANE[gen] * width
    return out


def run(ctx: ProbeContext) -> ProbeResult:
    t0 = time.perf_counter()
    return ProbeResult(probe=NAME, status="ok", duration_s=time.perf_counter() - t0, data=dict(ctx.props))
