"""The built-in rule types, each one model with its evaluation beside it.

Every rule here looks at one GPU's result. To add a rule type: a `Rule` subclass with
`check: Literal["tag"]`, `describe()` and `evaluate(dev, run)`, decorated with `@register`, in this
module or a sibling imported by gpuadvisor/checks/__init__.py; then document it in rules/README.md.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field

from gpuadvisor.checks.rules import FigureKey, MinMaxRule, Number, Outcome, Rule, num, register
from gpuadvisor.core.results import DeviceResult, GpuState, Measurement, RunResult
from gpuadvisor.readings import device_memory_gib, ecc_errors, other_processes, pcie_link


@register
class MemoryGib(MinMaxRule):
    """Total device memory in GiB (from the properties probe)."""

    check: Literal["memory_gib"]

    def describe(self) -> str:
        return f"memory {self.bounds('GiB')}"

    def evaluate(self, dev: DeviceResult, run: RunResult) -> Outcome:
        gib = device_memory_gib(dev)
        if gib is None:
            return self.outcome(False, "missing", "memory size is not in the results (properties probe)")
        return self.outcome(self.within(gib), f"{num(gib)} GiB", value=gib)


@register
class FigureRule(MinMaxRule):
    """A measured figure in its own unit, e.g. tensor.bf16 >= 600 TFLOP/s."""

    check: Literal["figure"]
    figure: FigureKey
    unit: str | None = Field(default=None, description="if given, the figure's unit must match")
    within_spread: bool = Field(default=False, description="a miss of min by less than the figure's spread passes")

    def describe(self) -> str:
        return f"{self.figure} {self.bounds(self.unit or '')}" + (" (within its spread)" if self.within_spread else "")

    def evaluate(self, dev: DeviceResult, run: RunResult) -> Outcome:
        m = measured_figure(self, dev, self.figure, run)
        if isinstance(m, Outcome):
            return m
        assert m.value is not None
        if self.unit and self.unit.strip().lower() != m.unit.strip().lower():
            return self.outcome(
                False, f"{num(m.value)} {m.unit}", f"unit mismatch: rule says {self.unit}, figure is {m.unit}"
            )
        if not self.within(m.value) and self.within_spread and spread_covers(m, self.min):
            return self.outcome(True, f"{num(m.value)} {m.unit}", spread_note(m), value=m.value)
        return self.outcome(self.within(m.value), f"{num(m.value)} {m.unit}", value=m.value)


@register
class PctOfDatasheet(Rule):
    """A measured figure as a percentage of its datasheet (or theoretical) value."""

    check: Literal["pct_of_datasheet"]
    figure: FigureKey
    min: Number = Field(gt=0, le=1000)
    within_spread: bool = Field(default=False, description="a miss by less than the figure's spread passes")

    def describe(self) -> str:
        extra = " (within its spread)" if self.within_spread else ""
        return f"{self.figure} >= {num(self.min)}% of datasheet{extra}"

    def evaluate(self, dev: DeviceResult, run: RunResult) -> Outcome:
        m = measured_figure(self, dev, self.figure, run)
        if isinstance(m, Outcome):
            return m
        pct = m.pct_of_datasheet
        if pct is None:
            return self.outcome(
                False, f"{num(m.value)} {m.unit}", f"{self.figure} has no datasheet figure to compare with"
            )
        measured = f"{pct:.1f}% ({num(m.value)} of {num(m.datasheet)} {m.unit})"
        if pct < self.min and self.within_spread and m.datasheet and spread_covers(m, self.min / 100 * m.datasheet):
            return self.outcome(True, measured, spread_note(m), value=pct)
        return self.outcome(pct >= self.min, measured, value=pct)


@register
class RatioToReference(Rule):
    """A measured figure over the vendor library measured in the same run (cudaMemcpy, PyTorch)."""

    check: Literal["ratio_to_reference"]
    figure: FigureKey
    min: Number = Field(gt=0, le=100)

    def describe(self) -> str:
        return f"{self.figure} >= {num(self.min)} x its same-run reference"

    def evaluate(self, dev: DeviceResult, run: RunResult) -> Outcome:
        m = measured_figure(self, dev, self.figure, run)
        if isinstance(m, Outcome):
            return m
        ratio = m.ratio_to_reference
        if ratio is None:
            return self.outcome(False, f"{num(m.value)} {m.unit}", f"{self.figure} has no same-run reference")
        measured = f"{ratio:.2f} x ({num(m.value)} vs {m.reference_label or 'reference'} {num(m.reference)} {m.unit})"
        return self.outcome(ratio >= self.min, measured, value=ratio)


@register
class PcieLink(Rule):
    """The PCIe link runs at its maximum generation and width (or at least min_gen / min_width)."""

    check: Literal["pcie_link"]
    min_gen: int | None = Field(default=None, ge=1, le=7, strict=True)
    min_width: int | None = Field(default=None, ge=1, le=32, strict=True)

    def describe(self) -> str:
        if self.min_gen is None and self.min_width is None:
            return "PCIe link at max generation and width"
        gen = f"gen >= {self.min_gen}" if self.min_gen else "gen at max"
        width = f"x >= {self.min_width}" if self.min_width else "width at max"
        return f"PCIe link {gen}, {width}"

    def evaluate(self, dev: DeviceResult, run: RunResult) -> Outcome:
        gen, width, max_gen, max_width = pcie_link(dev)
        if gen is None or width is None:
            return self.outcome(False, "missing", "the PCIe link state is not in the results")
        measured = f"gen{gen} x{width}" + (f" (max gen{max_gen} x{max_width})" if max_gen and max_width else "")
        want_gen = self.min_gen if self.min_gen is not None else max_gen
        want_width = self.min_width if self.min_width is not None else max_width
        if want_gen is None or want_width is None:
            return self.outcome(False, measured, "the maximum PCIe generation/width is not in the results")
        problems = []
        if gen < want_gen:
            problems.append(f"generation {gen} < {want_gen}")
        if width < want_width:
            problems.append(f"width x{width} < x{want_width}")
        if problems and gen < want_gen:
            problems.append("an idle GPU may lower its link generation: check it under load (nvidia-smi -q)")
        return self.outcome(not problems, measured, "; ".join(problems))


def _norm_reason(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


@register
class NoThrottling(Rule):
    """No clock throttle reason before, during or after the run, except those listed in `ignore`.

    The default ignores reasons that are not throttling (idle, application clocks, display clock).
    """

    check: Literal["no_throttling"]
    ignore: list[str] = Field(
        default_factory=lambda: ["gpu_idle", "applications_clocks_setting", "display_clock_setting"]
    )

    def describe(self) -> str:
        return "no throttling"

    def evaluate(self, dev: DeviceResult, run: RunResult) -> Outcome:
        states = [s for s in (dev.state_before, dev.state_after) if s is not None]
        if not states:
            return self.outcome(False, "missing", "no GPU state (NVML) in the results")
        ignore = {_norm_reason(x) for x in self.ignore}
        seen = [r for s in states for r in s.throttle_reasons]
        for flag in dev.flags:  # "throttled: sw_power_cap, hw_slowdown" from the sampler during the run
            head, _, rest = flag.partition(":")
            if head.strip().lower() == "throttled":
                seen += [r.strip() for r in rest.split(",") if r.strip()]
        reasons: list[str] = []
        for r in seen:
            if _norm_reason(r) not in ignore and _norm_reason(r) not in {_norm_reason(x) for x in reasons}:
                reasons.append(r)
        return self.outcome(not reasons, ", ".join(reasons) if reasons else "none", value=float(len(reasons)))


@register
class EccErrors(Rule):
    """ECC error count (volatile, from NVML) at most `max`; `kind` picks which count."""

    check: Literal["ecc_errors"]
    max: int = Field(default=0, ge=0, strict=True)
    kind: Literal["uncorrected", "corrected", "total"] = "uncorrected"

    def describe(self) -> str:
        return f"ECC {self.kind} errors <= {self.max}"

    def evaluate(self, dev: DeviceResult, run: RunResult) -> Outcome:
        if dev.properties.get("ecc_enabled") is False:
            return self.outcome(False, "ECC off", "ECC is disabled on this GPU, so errors are not counted")
        n = ecc_errors(dev, self.kind)
        if n is None:
            return self.outcome(
                False, "missing", "ECC error counts are not in the results (not reported by the driver?)"
            )
        return self.outcome(n <= self.max, str(n), value=float(n))


@register
class NoOtherProcesses(Rule):
    """No other process held the GPU before or after the run."""

    check: Literal["no_other_processes"]

    def describe(self) -> str:
        return "no other processes on the GPU"

    def evaluate(self, dev: DeviceResult, run: RunResult) -> Outcome:
        if dev.state_before is None and dev.state_after is None:
            return self.outcome(False, "missing", "no GPU state (NVML) in the results")
        procs = other_processes(dev)
        desc = ", ".join(f"{p.get('name') or '?'} (pid {p.get('pid', '?')})" for p in procs)
        return self.outcome(not procs, desc or "none", value=float(len(procs)))


@register
class TemperatureC(MinMaxRule):
    """GPU temperature in °C after the run (the hotter of before/after)."""

    check: Literal["temperature_c"]

    def describe(self) -> str:
        return f"temperature {self.bounds('°C')}"

    def evaluate(self, dev: DeviceResult, run: RunResult) -> Outcome:
        temps = [s.temperature_c for s in (dev.state_before, dev.state_after)
                 if isinstance(s, GpuState) and s.temperature_c is not None]
        if not temps:
            return self.outcome(False, "missing", "no temperature in the results")
        t = max(temps)
        return self.outcome(self.within(t), f"{t} °C", value=float(t))


@register
class ProbesOk(Rule):
    """Every probe (or those listed) finished with status ok."""

    check: Literal["probes_ok"]
    probes: list[str] | None = None

    def describe(self) -> str:
        return "probes ok" + (f": {', '.join(self.probes)}" if self.probes else "")

    def evaluate(self, dev: DeviceResult, run: RunResult) -> Outcome:
        wanted = self.probes or [p.probe for p in dev.probes]
        if not wanted:
            return self.outcome(False, "missing", "no probe ran on this GPU")
        bad = []
        for name in wanted:
            p = dev.probe(name)
            if p is None:
                bad.append(f"{name}: not run")
            elif p.status != "ok":
                bad.append(f"{name}: {p.status}" + (f" ({p.reason})" if p.reason else ""))
        return self.outcome(not bad, f"{len(wanted) - len(bad)}/{len(wanted)} ok", "; ".join(bad))


# --------------------------------------------------------------------------- shared by figure rules


def measured_figure(rule: Rule, dev: DeviceResult, key: str, run: RunResult | None = None) -> Outcome | Measurement:
    """The measurement for `key` (this GPU's, else the node's: interconnect figures), or a failed
    Outcome saying why there is no value to compare."""
    m = dev.measurement(key)
    if m is None and run is not None:
        m = next((x for p in run.node_probes for x in p.measurements if x.key == key), None)
    if m is None:
        probe = key.split(".")[0]
        return rule.outcome(False, "missing", f"{key} is not in the results (was the {probe} probe run?)")
    if m.value is None:
        reason = _probe_reason(dev, key)
        return rule.outcome(False, "no value", f"{key} has no value{': ' + reason if reason else ''}")
    return m


def spread_covers(m: Measurement, lower: float | None) -> bool:
    """The figure misses `lower` by less than its own spread (relative, over repeats or bursts)."""
    if lower is None or m.value is None or not m.spread:
        return False
    return m.value * (1.0 + m.spread) >= lower


def spread_note(m: Measurement) -> str:
    return f"below the threshold by less than its spread ({100 * (m.spread or 0):.1f}%): passed as within noise"


def _probe_reason(dev: DeviceResult, key: str) -> str | None:
    for p in dev.probes:
        if p.get(key) is not None:
            if p.status != "ok":
                return f"{p.probe} probe {p.status}" + (f" ({p.reason})" if p.reason else "")
            m = p.get(key)
            return (m.details.get("reason") if m else None) or None
    return None
