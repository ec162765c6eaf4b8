"""The rules format: the base rule model, the registry of rule types, and parsing/loading.

A rule type is one pydantic model with a `check: Literal["tag"]` field, a `describe()` and an
`evaluate(dev, run)`, decorated with `@register`: adding a rule type is one class in one module
(see device_rules.py), imported by gpuadvisor/checks/__init__.py so that it registers.
"""

from __future__ import annotations

import os
import typing
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from gpuadvisor.core.errors import UserError
from gpuadvisor.core.fileio import load_yaml
from gpuadvisor.core.results import DeviceResult, RunResult

# A threshold is a plain number: no booleans, no strings such as "40 GiB", no nan/inf.
Number = Annotated[float, Field(strict=True, allow_inf_nan=False)]
FigureKey = Annotated[str, Field(pattern=r"^[a-z0-9_]+(\.[a-z0-9_]+)+$")]


@dataclass
class Outcome:
    """One rule on one device: passed or not, what was measured and what was required."""

    rule: str  # the rule's label (name or description)
    check: str
    passed: bool
    measured: str  # what was found, human-readable ("2,890 GB/s (86.2%)", "missing")
    threshold: str
    message: str = ""
    value: float | None = None  # the number compared, where there is one


class Rule(BaseModel):
    """Base of every rule type: a name, a description, and how to describe and evaluate itself."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    check: str
    name: str | None = Field(default=None, min_length=1, description="short id shown in output and JUnit")
    description: str | None = None

    def label(self) -> str:
        return self.name or self.describe()

    def describe(self) -> str:  # pragma: no cover - every rule overrides it
        raise NotImplementedError

    def evaluate(self, dev: DeviceResult, run: RunResult) -> Outcome:  # pragma: no cover - every rule overrides it
        """This rule on one device; `run` gives the whole node for rules that compare GPUs."""
        raise NotImplementedError

    def outcome(self, passed: bool, measured: str, message: str = "", value: float | None = None) -> Outcome:
        return Outcome(self.label(), self.check, passed, measured, self.describe(), message, value)


class MinMaxRule(Rule):
    """A rule with a lower and/or upper bound; at least one is required."""

    min: Number | None = None
    max: Number | None = None

    @model_validator(mode="after")
    def _needs_a_bound(self) -> MinMaxRule:
        if self.min is None and self.max is None:
            raise ValueError("give a threshold: min, max or both")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min ({num(self.min)}) is greater than max ({num(self.max)})")
        return self

    def within(self, value: float) -> bool:
        return (self.min is None or value >= self.min) and (self.max is None or value <= self.max)

    def bounds(self, unit: str = "") -> str:
        u = f" {unit}" if unit else ""
        parts = []
        if self.min is not None:
            parts.append(f">= {num(self.min)}{u}")
        if self.max is not None:
            parts.append(f"<= {num(self.max)}{u}")
        return " and ".join(parts)


# --------------------------------------------------------------------------- registry

RULE_TYPES: dict[str, type[Rule]] = {}
R = TypeVar("R", bound=type[Rule])


def register(cls: R) -> R:
    """Class decorator: make a rule type known to `parse_rules` under its `check` tag."""
    args = typing.get_args(cls.__pydantic_fields__["check"].annotation)  # the class's fields (mypy: not model_fields)
    if len(args) != 1 or not isinstance(args[0], str):
        raise TypeError(f"{cls.__name__}: declare `check: Literal['tag']` to register a rule type")
    if args[0] in RULE_TYPES and RULE_TYPES[args[0]] is not cls:
        raise TypeError(f"{cls.__name__}: check {args[0]!r} is already registered by {RULE_TYPES[args[0]].__name__}")
    RULE_TYPES[args[0]] = cls
    return cls


def check_names() -> tuple[str, ...]:
    return tuple(RULE_TYPES)


# --------------------------------------------------------------------------- loading


@dataclass(frozen=True)
class RuleSet:
    rules: tuple[Any, ...]
    source: str = "<rules>"
    name: str | None = None


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
            rule = RULE_TYPES[check].model_validate(raw)
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


# --------------------------------------------------------------------------- formatting


def num(v: float | None) -> str:
    """A threshold or measured number as people write it: 40, 1,234, 0.85, 86.2."""
    if v is None:
        return "-"
    if abs(v - round(v)) < 1e-9:
        return f"{round(v):,}"
    return f"{v:,.3g}" if abs(v) < 10 else f"{v:,.1f}"
