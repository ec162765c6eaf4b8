"""Scripted device checks: a YAML rules file, evaluated against a probe result, per GPU.

A rules file is a mapping with a `rules:` list (or just the list). Each rule names a `check`
and its thresholds; rules/README.md documents every check. Evaluation is pure: it reads a
RunResult and returns, for every device, one outcome per rule with the measured value and the
threshold, so that the CLI only prints, writes JUnit XML and picks the exit code.

Exit codes: 0 every rule passed on every device, 1 some rule failed, 2 bad rules or usage.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Annotated, Any, Literal
from xml.sax.saxutils import quoteattr

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from gpuadvisor.errors import UserError
from gpuadvisor.fileio import load_yaml
from gpuadvisor.results import DeviceResult, GpuState, Measurement, RunResult

EXIT_PASS, EXIT_FAIL, EXIT_USAGE = 0, 1, 2

# A threshold is a plain number: no booleans, no strings such as "40 GiB", no nan/inf.
Number = Annotated[float, Field(strict=True, allow_inf_nan=False)]
FigureKey = Annotated[str, Field(pattern=r"^[a-z0-9_]+(\.[a-z0-9_]+)+$")]


class _Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = Field(default=None, min_length=1, description="short id shown in output and JUnit")
    description: str | None = None

    def label(self) -> str:
        return self.name or self.describe()

    def describe(self) -> str:  # pragma: no cover - every rule overrides it
        raise NotImplementedError


def _bounds(lo: float | None, hi: float | None, unit: str = "") -> str:
    u = f" {unit}" if unit else ""
    parts = []
    if lo is not None:
        parts.append(f">= {_num(lo)}{u}")
    if hi is not None:
        parts.append(f"<= {_num(hi)}{u}")
    return " and ".join(parts)


class _MinMax(_Rule):
    min: Number | None = None
    max: Number | None = None

    @model_validator(mode="after")
    def _needs_a_bound(self) -> _MinMax:
        if self.min is None and self.max is None:
            raise ValueError("give a threshold: min, max or both")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min ({_num(self.min)}) is greater than max ({_num(self.max)})")
        return self


class MemoryGib(_MinMax):
    """Total device memory in GiB (from the properties probe)."""

    check: Literal["memory_gib"]

    def describe(self) -> str:
        return f"memory {_bounds(self.min, self.max, 'GiB')}"


class FigureRule(_MinMax):
    """A measured figure in its own unit, e.g. tensor.bf16 >= 600 TFLOP/s."""

    check: Literal["figure"]
    figure: FigureKey
    unit: str | None = Field(default=None, description="if given, the figure's unit must match")

    def describe(self) -> str:
        return f"{self.figure} {_bounds(self.min, self.max, self.unit or '')}"


class PctOfDatasheet(_Rule):
    """A measured figure as a percentage of its datasheet (or theoretical) value."""

    check: Literal["pct_of_datasheet"]
    figure: FigureKey
    min: Number = Field(gt=0, le=1000)

    def describe(self) -> str:
        return f"{self.figure} >= {_num(self.min)}% of datasheet"


class RatioToReference(_Rule):
    """A measured figure over the vendor library measured in the same run (cudaMemcpy, PyTorch)."""

    check: Literal["ratio_to_reference"]
    figure: FigureKey
    min: Number = Field(gt=0, le=100)

    def describe(self) -> str:
        return f"{self.figure} >= {_num(self.min)} x its same-run reference"


class PcieLink(_Rule):
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


class NoThrottling(_Rule):
    """No clock throttle reason before, during or after the run, except those listed in `ignore`.

    The default ignores reasons that are not throttling (idle, application clocks, display clock).
    """

    check: Literal["no_throttling"]
    ignore: list[str] = Field(
        default_factory=lambda: ["gpu_idle", "applications_clocks_setting", "display_clock_setting"]
    )

    def describe(self) -> str:
        return "no throttling"


class EccErrors(_Rule):
    """ECC error count (volatile, from NVML) at most `max`; `kind` picks which count."""

    check: Literal["ecc_errors"]
    max: int = Field(default=0, ge=0, strict=True)
    kind: Literal["uncorrected", "corrected", "total"] = "uncorrected"

    def describe(self) -> str:
        return f"ECC {self.kind} errors <= {self.max}"


class NoOtherProcesses(_Rule):
    """No other process held the GPU before or after the run."""

    check: Literal["no_other_processes"]

    def describe(self) -> str:
        return "no other processes on the GPU"


class TemperatureC(_MinMax):
    """GPU temperature in °C after the run (the hotter of before/after)."""

    check: Literal["temperature_c"]

    def describe(self) -> str:
        return f"temperature {_bounds(self.min, self.max, '°C')}"


class ProbesOk(_Rule):
    """Every probe (or those listed) finished with status ok."""

    check: Literal["probes_ok"]
    probes: list[str] | None = None

    def describe(self) -> str:
        return "probes ok" + (f": {', '.join(self.probes)}" if self.probes else "")


RULE_TYPES: dict[str, type[_Rule]] = {
    "memory_gib": MemoryGib,
    "figure": FigureRule,
    "pct_of_datasheet": PctOfDatasheet,
    "ratio_to_reference": RatioToReference,
    "pcie_link": PcieLink,
    "no_throttling": NoThrottling,
    "ecc_errors": EccErrors,
    "no_other_processes": NoOtherProcesses,
    "temperature_c": TemperatureC,
    "probes_ok": ProbesOk,
}

Rule = Annotated[
    MemoryGib
    | FigureRule
    | PctOfDatasheet
    | RatioToReference
    | PcieLink
    | NoThrottling
    | EccErrors
    | NoOtherProcesses
    | TemperatureC
    | ProbesOk,
    Field(discriminator="check"),
]
_RULE_ADAPTER: TypeAdapter[Any] = TypeAdapter(Rule)


@dataclass(frozen=True)
class RuleSet:
    rules: tuple[Any, ...]
    source: str = "<rules>"
    name: str | None = None


# --------------------------------------------------------------------------- loading


def parse_rules(data: Any, source: str = "<rules>") -> RuleSet:
    """Validate already-parsed YAML; every problem is a one-line UserError naming file and rule."""
    name = None
    if isinstance(data, dict):
        unknown = set(data) - {"name", "description", "rules"}
        if unknown:
            raise UserError(f"{source}: unknown top-level key {sorted(unknown)[0]!r} (expected 'rules')")
        if "rules" not in data:
            raise UserError(f"{source}: a rules file needs a 'rules:' list")
        name = data.get("name")
        if name is not None and not isinstance(name, str):
            raise UserError(f"{source}: 'name' must be text")
        data = data["rules"]
    if not isinstance(data, list):
        raise UserError(f"{source}: a rules file must be a list of rules, or a mapping with a 'rules:' list")
    if not data:
        raise UserError(f"{source}: no rules given")
    rules = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(data, start=1):
        where = f"{source}: rule #{i}"
        if not isinstance(raw, dict):
            raise UserError(f"{where}: must be a mapping such as '- check: memory_gib' with its thresholds")
        check = raw.get("check")
        if check is None:
            raise UserError(f"{where}: missing 'check' (one of {', '.join(RULE_TYPES)})")
        if not isinstance(check, str) or check not in RULE_TYPES:
            raise UserError(f"{where}: unknown check {check!r} (one of {', '.join(RULE_TYPES)})")
        try:
            rule = _RULE_ADAPTER.validate_python(raw)
        except ValidationError as err:
            raise UserError(f"{where} ({check}): {_first_error(err)}") from None
        label = rule.label()
        if label in seen:
            raise UserError(
                f"{where} ({check}): same name as rule #{seen[label]} ({label!r}); give one a distinct 'name'"
            )
        seen[label] = i
        rules.append(rule)
    return RuleSet(rules=tuple(rules), source=source, name=name)


def _first_error(err: ValidationError) -> str:
    e = err.errors()[0]
    loc = [str(x) for x in e["loc"]]
    if loc and loc[0] in RULE_TYPES:  # the discriminator's tag, not a field
        loc = loc[1:]
    msg = e["msg"].removeprefix("Value error, ")
    if e["type"] == "extra_forbidden":
        msg = "unknown field"
    elif e["type"] == "missing":
        msg = "missing"
    elif e["type"] in ("float_type", "int_type", "float_parsing", "finite_number"):
        msg = f"must be a plain number, got {e.get('input')!r}"
    where = f"field {'.'.join(loc)!r}: " if loc else ""
    more = f" (and {len(err.errors()) - 1} more problems)" if len(err.errors()) > 1 else ""
    return f"{where}{msg}{more}"


def load_rules(path: str | os.PathLike[str]) -> RuleSet:
    return parse_rules(load_yaml(path, "rules file"), str(path))


# --------------------------------------------------------------------------- evaluation


@dataclass
class Outcome:
    rule: str  # the rule's label (name or description)
    check: str
    passed: bool
    measured: str  # what was found, human-readable ("2,890 GB/s (86.2%)", "missing")
    threshold: str
    message: str = ""
    value: float | None = None  # the number compared, where there is one


@dataclass
class DeviceOutcome:
    index: int | None
    name: str
    uuid: str | None
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(o.passed for o in self.outcomes)

    @property
    def failures(self) -> int:
        return sum(not o.passed for o in self.outcomes)

    @property
    def label(self) -> str:
        return self.name if self.index is None else f"GPU {self.index}: {self.name}"


@dataclass
class CheckReport:
    rules_source: str
    devices: list[DeviceOutcome]

    @property
    def passed(self) -> bool:
        return bool(self.devices) and all(d.passed for d in self.devices)

    @property
    def exit_code(self) -> int:
        return EXIT_PASS if self.passed else EXIT_FAIL

    def to_dict(self) -> dict[str, Any]:
        return {
            "rules": self.rules_source,
            "passed": self.passed,
            "exit_code": self.exit_code,
            "devices": [
                {
                    "index": d.index,
                    "name": d.name,
                    "uuid": d.uuid,
                    "passed": d.passed,
                    "failures": d.failures,
                    "outcomes": [asdict(o) for o in d.outcomes],
                }
                for d in self.devices
            ],
        }


def evaluate(rules: RuleSet, run: RunResult) -> CheckReport:
    """Every rule on every device. With no GPU in the result, every rule fails once, saying why."""
    if not run.devices:
        why = run.message or "the result holds no GPU"
        outcomes = [Outcome(r.label(), r.check, False, "no GPU", r.describe(), "no GPU to check") for r in rules.rules]
        return CheckReport(rules.source, [DeviceOutcome(None, f"no GPU ({why})", None, outcomes)])
    devices = []
    for dev in run.devices:
        d = DeviceOutcome(dev.index, dev.name, dev.uuid)
        for rule in rules.rules:
            d.outcomes.append(evaluate_rule(rule, dev))
        devices.append(d)
    return CheckReport(rules.source, devices)


def evaluate_rule(rule: Any, dev: DeviceResult) -> Outcome:
    fn = _EVALUATORS[rule.check]
    return fn(rule, dev)


def _out(rule: Any, passed: bool, measured: str, message: str = "", value: float | None = None) -> Outcome:
    return Outcome(rule.label(), rule.check, passed, measured, rule.describe(), message, value)


def _within(value: float, lo: float | None, hi: float | None) -> bool:
    return (lo is None or value >= lo) and (hi is None or value <= hi)


def _missing_figure(rule: Any, dev: DeviceResult, key: str) -> Outcome | Measurement:
    m = dev.measurement(key)
    if m is None:
        probe = key.split(".")[0]
        return _out(rule, False, "missing", f"{key} is not in the results (was the {probe} probe run?)")
    if m.value is None:
        reason = _probe_reason(dev, key)
        return _out(rule, False, "no value", f"{key} has no value{': ' + reason if reason else ''}")
    return m


def _probe_reason(dev: DeviceResult, key: str) -> str | None:
    for p in dev.probes:
        if p.get(key) is not None:
            if p.status != "ok":
                return f"{p.probe} probe {p.status}" + (f" ({p.reason})" if p.reason else "")
            m = p.get(key)
            return (m.details.get("reason") if m else None) or None
    return None


def _eval_memory(rule: MemoryGib, dev: DeviceResult) -> Outcome:
    gib = device_memory_gib(dev)
    if gib is None:
        return _out(rule, False, "missing", "memory size is not in the results (properties probe)")
    return _out(rule, _within(gib, rule.min, rule.max), f"{_num(gib)} GiB", value=gib)


def _eval_figure(rule: FigureRule, dev: DeviceResult) -> Outcome:
    m = _missing_figure(rule, dev, rule.figure)
    if isinstance(m, Outcome):
        return m
    assert m.value is not None
    if rule.unit and rule.unit.strip().lower() != m.unit.strip().lower():
        return _out(
            rule, False, f"{_num(m.value)} {m.unit}", f"unit mismatch: rule says {rule.unit}, figure is {m.unit}"
        )
    return _out(rule, _within(m.value, rule.min, rule.max), f"{_num(m.value)} {m.unit}", value=m.value)


def _eval_pct(rule: PctOfDatasheet, dev: DeviceResult) -> Outcome:
    m = _missing_figure(rule, dev, rule.figure)
    if isinstance(m, Outcome):
        return m
    pct = m.pct_of_datasheet
    if pct is None:
        return _out(rule, False, f"{_num(m.value)} {m.unit}", f"{rule.figure} has no datasheet figure to compare with")
    measured = f"{pct:.1f}% ({_num(m.value)} of {_num(m.datasheet)} {m.unit})"
    return _out(rule, pct >= rule.min, measured, value=pct)


def _eval_ratio(rule: RatioToReference, dev: DeviceResult) -> Outcome:
    m = _missing_figure(rule, dev, rule.figure)
    if isinstance(m, Outcome):
        return m
    ratio = m.ratio_to_reference
    if ratio is None:
        return _out(rule, False, f"{_num(m.value)} {m.unit}", f"{rule.figure} has no same-run reference")
    measured = f"{ratio:.2f} x ({_num(m.value)} vs {m.reference_label or 'reference'} {_num(m.reference)} {m.unit})"
    return _out(rule, ratio >= rule.min, measured, value=ratio)


def pcie_link(dev: DeviceResult) -> tuple[int | None, int | None, int | None, int | None]:
    """(current gen, current width, max gen, max width) of the GPU's PCIe link.

    An idle GPU lowers its link generation to save power, so the highest reading seen anywhere in
    the run (properties, NVML snapshots before/after, the transfer probe under load) counts.
    """
    p = dev.properties
    gens = [_int(p.get("pcie_gen_current"))]
    widths = [_int(p.get("pcie_width_current"))]
    for s in (dev.state_before, dev.state_after):
        if s is not None:
            gens.append(s.pcie_gen)
            widths.append(s.pcie_width)
    for probe in dev.probes:
        for m in probe.measurements:
            if m.key.startswith("transfer."):
                gens.append(_int(m.details.get("pcie_gen_current")))
                widths.append(_int(m.details.get("pcie_width_current")))
    gen = max((g for g in gens if g), default=None)
    width = max((w for w in widths if w), default=None)
    return gen, width, _int(p.get("pcie_gen_max")), _int(p.get("pcie_width_max"))


def _eval_pcie(rule: PcieLink, dev: DeviceResult) -> Outcome:
    gen, width, max_gen, max_width = pcie_link(dev)
    if gen is None or width is None:
        return _out(rule, False, "missing", "the PCIe link state is not in the results")
    measured = f"gen{gen} x{width}" + (f" (max gen{max_gen} x{max_width})" if max_gen and max_width else "")
    want_gen = rule.min_gen if rule.min_gen is not None else max_gen
    want_width = rule.min_width if rule.min_width is not None else max_width
    if want_gen is None or want_width is None:
        return _out(rule, False, measured, "the maximum PCIe generation/width is not in the results")
    problems = []
    if gen < want_gen:
        problems.append(f"generation {gen} < {want_gen}")
    if width < want_width:
        problems.append(f"width x{width} < x{want_width}")
    if problems and gen < want_gen:
        problems.append("an idle GPU may lower its link generation: check it under load (nvidia-smi -q)")
    return _out(rule, not problems, measured, "; ".join(problems))


def _norm_reason(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def _eval_throttle(rule: NoThrottling, dev: DeviceResult) -> Outcome:
    states = [s for s in (dev.state_before, dev.state_after) if s is not None]
    if not states:
        return _out(rule, False, "missing", "no GPU state (NVML) in the results")
    ignore = {_norm_reason(x) for x in rule.ignore}
    seen = [r for s in states for r in s.throttle_reasons]
    for flag in dev.flags:  # "throttled: sw_power_cap, hw_slowdown" from the sampler during the run
        head, _, rest = flag.partition(":")
        if head.strip().lower() == "throttled":
            seen += [r.strip() for r in rest.split(",") if r.strip()]
    reasons: list[str] = []
    for r in seen:
        if _norm_reason(r) not in ignore and _norm_reason(r) not in {_norm_reason(x) for x in reasons}:
            reasons.append(r)
    return _out(rule, not reasons, ", ".join(reasons) if reasons else "none", value=float(len(reasons)))


def ecc_errors(dev: DeviceResult, kind: str = "uncorrected") -> int | None:
    p = dev.properties
    unc, cor = _int(p.get("ecc_errors_uncorrected")), _int(p.get("ecc_errors_corrected"))
    if kind == "uncorrected":
        return unc
    if kind == "corrected":
        return cor
    return None if unc is None and cor is None else (unc or 0) + (cor or 0)


def _eval_ecc(rule: EccErrors, dev: DeviceResult) -> Outcome:
    if dev.properties.get("ecc_enabled") is False:
        return _out(rule, False, "ECC off", "ECC is disabled on this GPU, so errors are not counted")
    n = ecc_errors(dev, rule.kind)
    if n is None:
        return _out(rule, False, "missing", "ECC error counts are not in the results (not reported by the driver?)")
    return _out(rule, n <= rule.max, str(n), value=float(n))


def other_processes(dev: DeviceResult) -> list[dict[str, Any]]:
    seen: dict[Any, dict[str, Any]] = {}
    for s in (dev.state_before, dev.state_after):
        if s is None:
            continue
        for proc in s.other_processes:
            seen.setdefault(proc.get("pid", id(proc)), proc)
    return list(seen.values())


def _eval_procs(rule: NoOtherProcesses, dev: DeviceResult) -> Outcome:
    if dev.state_before is None and dev.state_after is None:
        return _out(rule, False, "missing", "no GPU state (NVML) in the results")
    procs = other_processes(dev)
    desc = ", ".join(f"{p.get('name') or '?'} (pid {p.get('pid', '?')})" for p in procs)
    return _out(rule, not procs, desc or "none", value=float(len(procs)))


def _eval_temp(rule: TemperatureC, dev: DeviceResult) -> Outcome:
    temps = [s.temperature_c for s in (dev.state_before, dev.state_after) if isinstance(s, GpuState)]
    temps = [t for t in temps if t is not None]
    if not temps:
        return _out(rule, False, "missing", "no temperature in the results")
    t = max(temps)
    return _out(rule, _within(t, rule.min, rule.max), f"{t} °C", value=float(t))


def _eval_probes(rule: ProbesOk, dev: DeviceResult) -> Outcome:
    wanted = rule.probes or [p.probe for p in dev.probes]
    if not wanted:
        return _out(rule, False, "missing", "no probe ran on this GPU")
    bad = []
    for name in wanted:
        p = dev.probe(name)
        if p is None:
            bad.append(f"{name}: not run")
        elif p.status != "ok":
            bad.append(f"{name}: {p.status}" + (f" ({p.reason})" if p.reason else ""))
    ok = len(wanted) - len(bad)
    return _out(rule, not bad, f"{ok}/{len(wanted)} ok", "; ".join(bad))


_EVALUATORS: dict[str, Any] = {
    "memory_gib": _eval_memory,
    "figure": _eval_figure,
    "pct_of_datasheet": _eval_pct,
    "ratio_to_reference": _eval_ratio,
    "pcie_link": _eval_pcie,
    "no_throttling": _eval_throttle,
    "ecc_errors": _eval_ecc,
    "no_other_processes": _eval_procs,
    "temperature_c": _eval_temp,
    "probes_ok": _eval_probes,
}


def device_memory_gib(dev: DeviceResult) -> float | None:
    p = dev.properties
    for key, scale in (("memory_total_mib", 1 / 1024), ("memory_total_bytes", 1 / 2**30), ("memory_total_gib", 1.0)):
        v = p.get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0:
            return float(v) * scale
    return None


def _int(v: Any) -> int | None:
    if isinstance(v, bool) or v is None:
        return None
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def _num(v: float | None) -> str:
    if v is None:
        return "-"
    if abs(v - round(v)) < 1e-9:
        return f"{round(v):,}"
    return f"{v:,.3g}" if abs(v) < 10 else f"{v:,.1f}"


# --------------------------------------------------------------------------- JUnit


def junit_xml(report: CheckReport, suite_prefix: str = "gpuadvisor check") -> str:
    """One <testsuite> per device, one <testcase> per rule; failures carry measured vs threshold."""
    total = sum(len(d.outcomes) for d in report.devices)
    failed = sum(d.failures for d in report.devices)
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<testsuites name={_attr(suite_prefix)} tests="{total}" failures="{failed}" errors="0">',
    ]
    for d in report.devices:
        attrs = f'name={_attr(f"{suite_prefix}: {d.label}")} tests="{len(d.outcomes)}" failures="{d.failures}"'
        lines.append(f'  <testsuite {attrs} errors="0" skipped="0">')
        if d.uuid:
            lines.append("    <properties>")
            lines.append(f'      <property name="uuid" value={_attr(d.uuid)}/>')
            lines.append("    </properties>")
        classname = _attr(f"gpu{d.index}" if d.index is not None else "nogpu")
        for o in d.outcomes:
            head = f"    <testcase classname={classname} name={_attr(o.rule)}"
            summary = f"measured {o.measured}; required {o.threshold}"
            if o.passed:
                lines.append(f"{head}>")
                lines.append(f"      <system-out>{_xml_text(summary)}</system-out>")
                lines.append("    </testcase>")
            else:
                msg = summary + (f"; {o.message}" if o.message else "")
                lines.append(f"{head}>")
                lines.append(f"      <failure message={_attr(msg)} type={_attr(o.check)}>{_xml_text(msg)}</failure>")
                lines.append("    </testcase>")
        lines.append("  </testsuite>")
    lines.append("</testsuites>")
    return "\n".join(lines) + "\n"


_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")


def _xml_text(text: str) -> str:
    text = _XML_BAD.sub("?", text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def check_names() -> Sequence[str]:
    return tuple(RULE_TYPES)


def _attr(text: str) -> str:
    return quoteattr(_XML_BAD.sub("?", text))


# --------------------------------------------------------------------------- catalog comparison


@dataclass
class FigureRow:
    """One measured figure next to its datasheet value, for the report and the TUI."""

    key: str
    label: str
    value: float | None
    unit: str
    datasheet: float | None
    datasheet_source: str | None
    reference: float | None = None
    reference_label: str | None = None
    spread: float | None = None

    @property
    def pct(self) -> float | None:
        if self.value is None or not self.datasheet:
            return None
        return 100.0 * self.value / self.datasheet


def catalog_figure(card: Any, key: str) -> float | None:
    """The catalog's datasheet value for a figure key, where the catalog has one."""
    if card is None:
        return None
    if key.startswith("memory."):
        return card.memory_bandwidth_gbs
    if key == "fp32.fma":
        return card.fp32_tflops
    if key == "fp64.fma":
        return card.fp64_tflops
    if key.startswith("tensor."):
        return card.tensor_tflops(key.split(".", 1)[1])
    return None


def figure_rows(dev: DeviceResult, card: Any = None, prefixes: Sequence[str] = ()) -> list[FigureRow]:
    """Every measured figure of a device (optionally only keys with these prefixes), with a datasheet
    value: the probe's own where it recorded one, else the catalog card's."""
    rows = []
    for probe in dev.probes:
        for m in probe.measurements:
            if prefixes and not m.key.startswith(tuple(prefixes)):
                continue
            ds, src = m.datasheet, m.datasheet_source
            if not ds:
                ds = catalog_figure(card, m.key)
                src = f"catalog: {card.name}" if ds else None
            rows.append(FigureRow(m.key, m.label, m.value, m.unit, ds, src, m.reference, m.reference_label, m.spread))
    return rows


def match_card(dev: DeviceResult, catalog: Any) -> Any:
    """The catalog card for a probed device: the name the probe recorded, else a match on the name."""
    if catalog is None:
        return None
    from gpuadvisor.catalog import find, match_device

    if dev.catalog_name:
        hits = find(catalog, dev.catalog_name)
        if hits:
            return hits[0]
    return match_device(catalog, dev.name, device_memory_gib(dev))
