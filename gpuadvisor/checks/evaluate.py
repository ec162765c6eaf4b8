"""Evaluation: every rule on every device of a probe result, and the report objects it returns.

Pure: reads a RunResult, returns a CheckReport, so the CLI only prints, writes JUnit XML and
picks the exit code (0 every rule passed on every device, 1 some rule failed, 2 bad rules/usage).
The pass/fail logic and the JSON head are verdict.Verdict's, shared with `fleet check`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from gpuadvisor.checks.rules import Outcome, Rule, RuleSet
from gpuadvisor.checks.verdict import Verdict
from gpuadvisor.core.results import DeviceResult, RunResult


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
class CheckReport(Verdict[DeviceOutcome]):
    """The rules on every GPU of one probe result: passes when every GPU passes."""

    devices: list[DeviceOutcome] = field(default_factory=list)
    parts_key: ClassVar[str] = "devices"

    @property
    def parts(self) -> list[DeviceOutcome]:
        return self.devices

    def part_dict(self, part: DeviceOutcome) -> dict[str, Any]:
        return {
            "index": part.index,
            "name": part.name,
            "uuid": part.uuid,
            "passed": part.passed,
            "failures": part.failures,
            "outcomes": [asdict(o) for o in part.outcomes],
        }


def evaluate(rules: RuleSet, run: RunResult) -> CheckReport:
    """Every rule on every device. With no GPU in the result, every rule fails once, saying why."""
    if not run.devices:
        why = run.message or "the result holds no GPU"
        outcomes = [r.outcome(False, "no GPU", "no GPU to check") for r in rules.rules]
        return CheckReport(rules.source, [DeviceOutcome(None, f"no GPU ({why})", None, outcomes)])
    devices = []
    for dev in run.devices:
        d = DeviceOutcome(dev.index, dev.name, dev.uuid)
        d.outcomes.extend(evaluate_rule(rule, dev, run) for rule in rules.rules)
        devices.append(d)
    return CheckReport(rules.source, devices)


def evaluate_rule(rule: Rule, dev: DeviceResult, run: RunResult) -> Outcome:
    """One rule on one device of `run` (the whole node, for rules that compare GPUs)."""
    return rule.evaluate(dev, run)
