"""Time of the collectives a data-parallel step waits for, from interconnect figures. Pure functions."""

from __future__ import annotations

from gpuadvisor.estimate import calibration as cal
from gpuadvisor.estimate.hardware import HardwareFigures


def link_bytes_s(gpu_figures: HardwareFigures, interconnect_eff: float) -> float:
    """Achieved bytes/s of the link between GPUs: the catalog's figure (PCIe-class where it has none) x efficiency."""
    return (gpu_figures.interconnect_gbs or cal.DEFAULT_INTERCONNECT_GBS) * 1e9 * interconnect_eff


def gradient_allreduce_s(grad_bytes: float, dp: int, gpu_figures: HardwareFigures, link: float) -> float:
    """The exposed part of a data-parallel step's gradient all-reduce: a ring moves 2(n-1)/n of the bytes, at
    the measured all-reduce bus bandwidth where a probe has one, else at `link`; DP_OVERLAP of it hides
    behind the backward."""
    if dp <= 1:
        return 0.0
    busbw = gpu_figures.allreduce_busbw_gbs * 1e9 if gpu_figures.allreduce_busbw_gbs else link
    ring = 2.0 * (dp - 1) / dp
    return (1 - cal.DP_OVERLAP) * ring * grad_bytes / busbw
