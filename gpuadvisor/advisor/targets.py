"""What the user needs and can spend: typed targets, their defaults per mode, and validation.

A target left as None does not constrain the choice. Serving targets apply to inference,
token budget and deadline to training, LoRA and QLoRA; budgets, ownership and electricity
to both. Every check raises one UserError line naming the bad value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any

from gpuadvisor.core.errors import UserError

DEFAULT_TOKENS_PER_S = 20.0  # serving with no target: one user reading at a comfortable pace
DEFAULT_PROMPT_TOKENS = 1024
DEFAULT_OUTPUT_TOKENS = 256
DEFAULT_USD_PER_KWH = 0.15  # roughly the US average retail price of electricity
DEFAULT_UTILISATION = 0.8  # fraction of TDP drawn while working
DEFAULT_AMORTISE_MONTHS = 36  # purchased hardware is written off over three years
HOURS_PER_MONTH = 730.0
DEFAULT_TRAIN_TOKENS = 1e8  # training with no token budget: costs are quoted for 100M tokens
DEFAULT_REQUEST_S = 1.0  # a model that does not decode (a UNet step, a classifier): a request within a second


@dataclass(frozen=True)
class Targets:
    """The user's targets; `None` means "no constraint".

    Serving: `tokens_per_s` per user, `users` at once, `ttft_s` (time to first token),
    `context` (prompt + answer tokens per user; the answer is `output_tokens`).
    Training: `tokens` (token budget) and `deadline_h`.
    Budget: `usd_per_hour` (what the hardware may cost per hour) or `budget_usd` (the whole job,
    or a month of serving). Ownership: `hours_per_month` of use (buy versus rent, monthly cost).
    Electricity: `usd_per_kwh` x `utilisation` of TDP. Purchased hardware is amortised over
    `amortise_months` when it is compared per hour.
    """

    tokens_per_s: float | None = None
    users: int = 1
    ttft_s: float | None = None
    context: int | None = None
    output_tokens: int = DEFAULT_OUTPUT_TOKENS
    tokens: float | None = None
    deadline_h: float | None = None
    usd_per_hour: float | None = None
    budget_usd: float | None = None  # legacy --budget: a training job, or a month of serving
    hours_per_month: float = HOURS_PER_MONTH
    usd_per_kwh: float = DEFAULT_USD_PER_KWH
    utilisation: float = DEFAULT_UTILISATION
    amortise_months: float = DEFAULT_AMORTISE_MONTHS
    budget_job_usd: float | None = None  # the whole training job
    budget_month_usd: float | None = None  # a month of serving (at hours_per_month)
    max_card_usd: float | None = None  # a card to buy may cost at most this (each)
    use_hours: float | None = None  # the hardware is used this many hours in all (a one-off)
    use_months: float | None = None  # ... or for this many months at hours_per_month

    def with_(self, **changes: Any) -> Targets:
        return replace(self, **changes).validate()

    def validate(self) -> Targets:
        """Raise UserError on a zero, negative or non-finite target or budget."""
        labels = {
            "tokens_per_s": "tokens/s per user", "users": "concurrent users", "ttft_s": "time to first token",
            "context": "context length", "output_tokens": "output tokens", "tokens": "token budget",
            "deadline_h": "deadline", "usd_per_hour": "budget per hour", "budget_usd": "budget",
            "hours_per_month": "hours of use per month", "usd_per_kwh": "electricity price",
            "utilisation": "utilisation", "amortise_months": "amortisation period",
            "budget_job_usd": "budget per job", "budget_month_usd": "budget per month",
            "max_card_usd": "card price cap", "use_hours": "hours of use", "use_months": "months of use",
        }
        for f in fields(self):
            v = getattr(self, f.name)
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise UserError(f"{labels[f.name]} must be a finite number, got {v!r}")
            if f.name == "usd_per_kwh" and v == 0:
                continue  # free electricity (solar, a datacenter that pays) is a legitimate input
            if v <= 0:
                raise UserError(f"{labels[f.name]} must be > 0, got {v:g}")
        for name in ("users", "context", "output_tokens"):
            v = getattr(self, name)
            if v is not None and v != int(v):
                raise UserError(f"{labels[name]} must be a whole number, got {v!r}")
        if self.utilisation > 1:
            raise UserError(f"utilisation must be a fraction in (0, 1], got {self.utilisation:g}")
        if self.hours_per_month > HOURS_PER_MONTH:
            raise UserError(f"hours of use per month must be at most {HOURS_PER_MONTH:g}, got {self.hours_per_month:g}")
        if self.context is not None and self.context <= self.output_tokens:
            raise UserError(f"context length {self.context} must exceed the output tokens ({self.output_tokens})")
        return self

    @property
    def job_budget(self) -> float | None:
        """What one training job may cost: --budget-per-job, else the legacy --budget."""
        return self.budget_job_usd or self.budget_usd

    @property
    def month_budget(self) -> float | None:
        """What a month of serving may cost: --budget-per-month, else the legacy --budget."""
        return self.budget_month_usd or self.budget_usd

    @property
    def any_budget(self) -> bool:
        return bool(self.usd_per_hour or self.budget_usd or self.budget_job_usd or self.budget_month_usd)

    def planned_hours(self, serving: bool, job_hours: float | None = None) -> tuple[float | None, str]:
        """Hours the hardware will work in all, and how that was had: --use-hours, --use-months x
        hours a month, else serving for the amortisation period, else one training job."""
        if self.use_hours:
            return self.use_hours, f"{self.use_hours:,.0f} h of use in all (--use-hours)"
        if self.use_months:
            h = self.use_months * self.hours_per_month
            return h, f"{self.use_months:g} months at {self.hours_per_month:,.0f} h/month (--use-months)"
        if serving:
            h = self.amortise_months * self.hours_per_month
            return h, f"{self.amortise_months:g} months at {self.hours_per_month:g} h/month (the default)"
        if job_hours:
            return job_hours, (f"one job of {job_hours:,.1f} h (the default; --use-months or --use-hours for more "
                               "use)")
        return None, "unknown"

    @property
    def prompt_tokens(self) -> int:
        return (self.context or DEFAULT_PROMPT_TOKENS + self.output_tokens) - self.output_tokens

    def for_workload(self, workload: Any) -> Targets:
        """These targets with the mode's default filled in: serving with no speed target asks for
        DEFAULT_TOKENS_PER_S per user; training takes its token budget from the workload."""
        t = self
        decoder = getattr(workload.model, "kind", "decoder") == "decoder"
        if workload.mode == "inference" and decoder and t.tokens_per_s is None and t.ttft_s is None:
            t = replace(t, tokens_per_s=DEFAULT_TOKENS_PER_S)
        if workload.mode == "inference" and not decoder and t.ttft_s is None:
            t = replace(t, ttft_s=DEFAULT_REQUEST_S)
        if workload.mode != "inference" and t.tokens is None:
            t = replace(t, tokens=float(workload.train_tokens or workload.train_samples or DEFAULT_TRAIN_TOKENS))
        return t.validate()

    def electricity_usd_h(self, tdp_w: float | None, gpus: int) -> float:
        """Running cost of `gpus` cards at `utilisation` of TDP (the GPUs only, not the host)."""
        return (tdp_w or 0.0) * gpus * self.utilisation / 1000.0 * self.usd_per_kwh

    def describe(self, mode: str, decoder: bool = True, unit: str = "tokens") -> str:
        """One line: the targets that apply to `mode` (and to a model that decodes tokens or not)."""
        parts: list[str] = []
        if mode == "inference":
            if self.tokens_per_s and decoder:
                parts.append(f">= {self.tokens_per_s:g} tok/s per user")
            parts.append(f"{self.users} user{'s' if self.users != 1 else ''}")
            if decoder:
                parts.append(f"{self.prompt_tokens + self.output_tokens:,}-token context")
            if self.ttft_s:
                parts.append(f"{'first token' if decoder else 'a request'} <= {self.ttft_s:g} s")
        else:
            if self.tokens:
                parts.append(f"{self.tokens:.3g} {unit}")
            if self.deadline_h:
                parts.append(f"within {_hours(self.deadline_h)}")
        if self.usd_per_hour:
            parts.append(f"<= ${self.usd_per_hour:g}/h")
        if mode == "inference" and self.month_budget:
            parts.append(f"<= ${self.month_budget:,.0f} a month")
        if mode != "inference" and self.job_budget:
            parts.append(f"<= ${self.job_budget:,.0f} for the job")
        if self.max_card_usd:
            parts.append(f"cards to buy <= ${self.max_card_usd:,.0f} each")
        parts.append(f"{self.hours_per_month:g} h/month of use")
        return ", ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["prompt_tokens"] = self.prompt_tokens
        return d


def _hours(h: float) -> str:
    return f"{h / 24:g} days" if h >= 48 and (h / 24) == int(h / 24) else f"{h:g} h"


def parse_duration_h(text: str) -> float:
    """'24h', '14d', '90m', '2w' or a bare number of hours -> hours; UserError otherwise."""
    s = str(text).strip().lower()
    mult = {"m": 1 / 60, "min": 1 / 60, "h": 1.0, "d": 24.0, "w": 168.0}
    unit = next((u for u in ("min", "m", "h", "d", "w") if s.endswith(u)), "")
    try:
        v = float(s[: len(s) - len(unit)] if unit else s) * mult.get(unit or "h", 1.0)
    except ValueError:
        raise UserError(f"not a duration: {text!r} (e.g. 24h, 14d, 90m)") from None
    if not math.isfinite(v) or v <= 0:
        raise UserError(f"a duration must be > 0, got {text!r}")
    return v


__all__ = ["HOURS_PER_MONTH", "Targets", "parse_duration_h"]
