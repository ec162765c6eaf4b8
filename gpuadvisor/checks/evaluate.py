"""Evaluation: every rule on every device of a probe result, and the report objects it returns.

Pure: reads a RunResult, returns a CheckReport, so the CLI only prints, writes JUnit XML and
picks the exit code (0 every rule passed on every device, 1 some rule failed, 2 bad rules/usage).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from gpuadvisor.checks.rules import Outcome, Rule, RuleSet
from gpuadvisor.results import DeviceResult, RunResult

EXIT_PASS, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


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
