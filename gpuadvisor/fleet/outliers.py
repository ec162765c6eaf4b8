"""Cross-node outliers: each figure against the fleet's median for the same hardware.

GPU figures are grouped by (GPU name, figure) and host figures by (CPU, figure), so an H100 is
never compared with an A10. Throughput figures (GB/s, TFLOP/s, ...) are outliers when they fall
more than `tolerance_pct` below the median; times (ms, us, s) when they rise above it. A group
needs at least `min_members` values: with two GPUs the median is their mean, and a 13% straggler
sits 6.5% from it, so pick the tolerance with the fleet's size in mind.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass

from gpuadvisor.core.results import RunResult

LOWER_IS_BETTER_UNITS = frozenset({"ms", "us", "µs", "ns", "s"})
HIGHER_IS_BETTER_UNITS = frozenset({"TOPS"})  # besides every rate ending in "/s"


def comparable(unit: str) -> bool:
    """Rates and times have a better side; sizes such as a crossover's "elements" do not."""
    return unit.endswith("/s") or unit in HIGHER_IS_BETTER_UNITS or unit in LOWER_IS_BETTER_UNITS
DEFAULT_TOLERANCE_PCT = 10.0


@dataclass(frozen=True)
class FigureStat:
    """One figure for one kind of hardware across the fleet."""

    hardware: str  # GPU name, or "host: <cpu>"
    key: str
    label: str
    unit: str
    median: float
    count: int
    lowest: float
    highest: float


@dataclass(frozen=True)
class Outlier:
    node: str
    device: int | None  # GPU index on its node; None for a host figure
    hardware: str
    key: str
    label: str
    unit: str
    value: float
    median: float
    deviation_pct: float  # signed: (value - median) / median, in percent
    count: int

    @property
    def where(self) -> str:
        return f"{self.node} " + ("host" if self.device is None else f"GPU {self.device}")

    def describe(self) -> str:
        side = "below" if self.deviation_pct < 0 else "above"
        return (f"{self.where}: {self.label} {self.value:,.4g} {self.unit} is {abs(self.deviation_pct):.1f}% {side} "
                f"the fleet median {self.median:,.4g} ({self.count} values)")


@dataclass(frozen=True)
class _Sample:
    node: str
    device: int | None
    value: float
    label: str
    unit: str


def _samples(results: Mapping[str, RunResult]) -> dict[tuple[str, str], list[_Sample]]:
    groups: dict[tuple[str, str], list[_Sample]] = {}
    for node, run in results.items():
        for dev in run.devices:
            for p in dev.probes:
                for m in p.measurements:
                    if m.value is not None and m.value > 0 and comparable(m.unit):
                        sample = _Sample(node, dev.index, m.value, m.label, m.unit)
                        groups.setdefault((dev.name, m.key), []).append(sample)
        for p in run.host_probes:
            for m in p.measurements:
                if m.value is not None and m.value > 0 and comparable(m.unit):
                    groups.setdefault((f"host: {run.host.cpu}", m.key), []).append(
                        _Sample(node, None, m.value, m.label, m.unit))
        # probes of a node as a whole (interconnect: P2P, NCCL), compared between like nodes only
        like = node_kind(run)
        for p in getattr(run, "node_probes", None) or []:
            for m in p.measurements:
                if m.value is not None and m.value > 0 and comparable(m.unit):
                    groups.setdefault((like, m.key), []).append(_Sample(node, None, m.value, m.label, m.unit))
    return groups


def node_kind(run: RunResult) -> str:
    """"node: 8 x NVIDIA H100 80GB HBM3": nodes are alike when they hold the same GPUs."""
    names = sorted({d.name for d in run.devices})
    return f"node: {len(run.devices)} x {' + '.join(names) or 'no GPU'}"


def figure_stats(results: Mapping[str, RunResult]) -> list[FigureStat]:
    out = []
    for (gpu_figures, key), samples in sorted(_samples(results).items()):
        values = [s.value for s in samples]
        out.append(FigureStat(gpu_figures, key, samples[0].label, samples[0].unit, statistics.median(values),
                              len(values),
                              min(values), max(values)))
    return out


def find_outliers(
    results: Mapping[str, RunResult], *, tolerance_pct: float = DEFAULT_TOLERANCE_PCT, min_members: int = 2
) -> list[Outlier]:
    """Every figure that is worse than its group's median by more than tolerance_pct."""
    if tolerance_pct < 0:
        raise ValueError("tolerance_pct must be >= 0")
    out = []
    for (gpu_figures, key), samples in sorted(_samples(results).items()):
        if len(samples) < min_members:
            continue
        median = statistics.median(s.value for s in samples)
        lower_better = samples[0].unit in LOWER_IS_BETTER_UNITS
        for s in samples:
            dev_pct = 100.0 * (s.value - median) / median
            worse = dev_pct > tolerance_pct if lower_better else dev_pct < -tolerance_pct
            if worse:
                out.append(Outlier(s.node, s.device, gpu_figures, key, s.label, s.unit, s.value, median, round(dev_pct,
                                                                                                               2),
                                   len(samples)))
    return sorted(out, key=lambda o: (o.node, -1 if o.device is None else o.device, o.key))
