"""Scripted device checks: a YAML rules file, evaluated against a probe result, per GPU.

A rules file is a mapping with a `rules:` list (or just the list). Each rule names a `check`
and its thresholds; rules/README.md documents every check. Layout:
  rules.py         base Rule model, the registry (`@register`), parse_rules / load_rules
  device_rules.py  the built-in per-GPU rule types, each model with its evaluation beside it
  evaluate.py      evaluate(): every rule on every device -> CheckReport; exit codes
  junit.py         JUnit XML
A module of new rule types is imported below so that its `@register` runs.
"""

from __future__ import annotations

from gpuadvisor.checks import device_rules  # noqa: F401  (registers the built-in rule types)
from gpuadvisor.checks.evaluate import (
    EXIT_FAIL,
    EXIT_PASS,
    EXIT_USAGE,
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
    "check_names",
    "evaluate",
    "evaluate_rule",
    "junit_xml",
    "load_rules",
    "parse_rules",
    "register",
]
