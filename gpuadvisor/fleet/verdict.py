"""`fleet check`: the rules on every node, plus the cross-node outliers, in one verdict.

Pure: it reads a Fleet and a RuleSet. A node passes when it answered, every rule passes on each
of its GPUs, and none of its figures is an outlier. A node that was lost, late or failed fails,
with its reason, and so does a node that Ray lists with GPUs whose probe found none (no driver,
no CuPy there). A host-only node (one probed through --include-cpu-nodes) has no GPU to apply
GPU rules to: it is checked for outliers only, and says so. FleetVerdict is a checks.Verdict, the
same pass/fail type as `check`'s report, whose JSON it nests per node.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from gpuadvisor.checks import CheckReport, RuleSet, Verdict, evaluate
from gpuadvisor.fleet.model import Fleet
from gpuadvisor.fleet.outliers import DEFAULT_TOLERANCE_PCT, Outlier, find_outliers


@dataclass
class NodeVerdict:
    node: str
    status: str
    gpus: int
    reason: str | None = None
    report: CheckReport | None = None
    outliers: list[Outlier] = field(default_factory=list)
    note: str | None = None

    @property
    def passed(self) -> bool:
        rules_ok = self.report is None or self.report.passed
        return self.status == "ok" and rules_ok and not self.outliers


@dataclass
class FleetVerdict(Verdict[NodeVerdict]):
    """The rules and the outliers on every node: passes when every node passes."""

    tolerance_pct: float = DEFAULT_TOLERANCE_PCT
    nodes: list[NodeVerdict] = field(default_factory=list)
    outliers: list[Outlier] = field(default_factory=list)
    parts_key: ClassVar[str] = "nodes"

    @property
    def parts(self) -> list[NodeVerdict]:
        return self.nodes

    def head_dict(self) -> dict[str, Any]:
        return {"tolerance_pct": self.tolerance_pct}

    def part_dict(self, part: NodeVerdict) -> dict[str, Any]:
        return {
            "node": part.node,
            "status": part.status,
            "passed": part.passed,
            "reason": part.reason,
            "note": part.note,
            "checks": part.report.to_dict() if part.report is not None else None,
            "outliers": [asdict(o) for o in part.outliers],
        }

    def tail_dict(self) -> dict[str, Any]:
        return {"outliers": [asdict(o) for o in self.outliers]}


def evaluate_fleet(
    fleet: Fleet, rules: RuleSet | None, *, tolerance_pct: float = DEFAULT_TOLERANCE_PCT
) -> FleetVerdict:
    outliers = find_outliers(fleet.results, tolerance_pct=tolerance_pct)
    verdicts = []
    for entry in fleet.summary.nodes:
        v = NodeVerdict(entry.name, entry.status, entry.gpus, reason=entry.reason,
                        outliers=[o for o in outliers if o.node == entry.name])
        run = fleet.results.get(entry.name)
        if entry.status == "ok" and run is None:
            v.status, v.reason = "failed", "its result file is missing"
        elif run is not None and entry.gpus > 0 and not run.devices:
            v.status = "failed"
            v.reason = f"Ray lists {entry.gpus} GPU(s) but its probe found none: {run.message or 'no reason given'}"
        elif run is not None and rules is not None:
            if run.devices or entry.gpus > 0:
                v.report = evaluate(rules, run)
            else:
                v.note = "host only (no GPU): rules not applied, outliers checked"
        verdicts.append(v)
    return FleetVerdict(rules.source if rules is not None else None, tolerance_pct, verdicts, outliers)
