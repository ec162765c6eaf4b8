"""Facts read off one probed device (memory size, PCIe link, ECC counts, other processes).

They are not checks and not datasheet comparisons: the check rules, the catalog match, the
report and the TUI all read the same facts here, so each reading has one definition.
"""

from __future__ import annotations

from typing import Any

from gpuadvisor.core.results import DeviceResult


def device_memory_gib(dev: DeviceResult) -> float | None:
    """Total device memory in GiB, from whichever unit the properties probe recorded."""
    p = dev.properties
    for key, scale in (("memory_total_mib", 1 / 1024), ("memory_total_bytes", 1 / 2**30), ("memory_total_gib", 1.0)):
        v = p.get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0:
            return float(v) * scale
    return None


def pcie_link(dev: DeviceResult) -> tuple[int | None, int | None, int | None, int | None]:
    """(current gen, current width, max gen, max width) of the GPU's PCIe link.

    An idle GPU lowers its link generation to save power, so the highest reading seen anywhere in
    the run (properties, NVML snapshots before/after, the transfer probe under load) counts.
    """
    p = dev.properties
    gens = [as_int(p.get("pcie_gen_current"))]
    widths = [as_int(p.get("pcie_width_current"))]
    for s in (dev.state_before, dev.state_after):
        if s is not None:
            gens.append(s.pcie_gen)
            widths.append(s.pcie_width)
    for probe in dev.probes:
        for m in probe.measurements:
            if m.key.startswith("transfer."):
                gens.append(as_int(m.details.get("pcie_gen_current")))
                widths.append(as_int(m.details.get("pcie_width_current")))
    gen = max((g for g in gens if g), default=None)
    width = max((w for w in widths if w), default=None)
    return gen, width, as_int(p.get("pcie_gen_max")), as_int(p.get("pcie_width_max"))


def ecc_errors(dev: DeviceResult, kind: str = "uncorrected") -> int | None:
    """Volatile ECC error count from NVML: 'uncorrected', 'corrected' or 'total'; None if unreported."""
    p = dev.properties
    unc, cor = as_int(p.get("ecc_errors_uncorrected")), as_int(p.get("ecc_errors_corrected"))
    if kind == "uncorrected":
        return unc
    if kind == "corrected":
        return cor
    return None if unc is None and cor is None else (unc or 0) + (cor or 0)


def other_processes(dev: DeviceResult) -> list[dict[str, Any]]:
    """Processes other than the probe seen on the GPU before or after the run, once each."""
    seen: dict[Any, dict[str, Any]] = {}
    for s in (dev.state_before, dev.state_after):
        if s is None:
            continue
        for proc in s.other_processes:
            seen.setdefault(proc.get("pid", id(proc)), proc)
    return list(seen.values())


def as_int(v: Any) -> int | None:
    """An int from a JSON value, None for booleans, None and text that is not a number."""
    if isinstance(v, bool) or v is None:
        return None
    try:
        return int(v)
    except (TypeError, ValueError):
        return None
