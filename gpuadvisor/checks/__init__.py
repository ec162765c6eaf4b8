"""Scripted device checks: a YAML rules file, evaluated against a probe result, per GPU.

A rules file is a mapping with a `rules:` list (or just the list). Each rule names a `check`
and its thresholds; rules/README.md documents every check. Layout:
  rules.py         base Rule model, the registry (`@register`), parse_rules / load_rules
  device_rules.py  the built-in per-GPU rule types, each model with its evaluation beside it
  node_rules.py    rules over the node: peer consistency, NCCL and P2P bandwidth, row remaps, XIDs
  verdict.py       Verdict: the one pass/fail type (and exit codes) of `check` and `fleet check`
  evaluate.py      evaluate(): every rule on every device -> CheckReport (a Verdict)
  junit.py         JUnit XML
A module of new rule types is imported below so that its `@register` runs.
"""

from __future__ import annotations

from gpuadvisor.checks import (
    device_rules,  # noqa: F401  (registers the built-in rule types)
    node_rules,  # noqa: F401  (GPUs against each other, links, health)
)
from gpuadvisor.checks.evaluate import (
    CheckReport,
    DeviceOutcome,
    evaluate,
    evaluate_rule,
)
from gpuadvisor.checks.junit import junit_xml
from gpuadvisor.checks.rules import (
    RULE_TYPES,
    MinMaxRule,
    Outcome,
    Rule,
    RuleSet,
    check_names,
    load_rules,
    parse_rules,
    register,
)
from gpuadvisor.checks.verdict import EXIT_FAIL, EXIT_PASS, EXIT_USAGE, Verdict

__all__ = [
    "EXIT_FAIL",
    "EXIT_PASS",
    "EXIT_USAGE",
    "RULE_TYPES",
    "CheckReport",
    "DeviceOutcome",
    "MinMaxRule",
    "Outcome",
    "Rule",
    "RuleSet",
    "Verdict",
    "check_names",
    "evaluate",
    "evaluate_rule",
    "junit_xml",
    "load_rules",
    "parse_rules",
    "register",
]
