"""The range every numeric input of a question must fall in, in one table: the command line's argument types, the
request's validation (gpuadvisor/request.py), Workload and the serving simulation read it, so a value out of range
is refused the same way everywhere, with one line naming the flag and the range (UserError, exit 2).

Why the bounds:
* tokens (a prompt, an output, a sequence): up to 10 million, above the longest context any model in the catalog
  supports; a model's own window is checked where the model is known.
* GPUs and each parallel degree: up to 65,536, the largest job the layouts are costed for (a 16k-GPU pretraining
  run is within it; a million GPUs is not a job anybody runs).
* batch: up to 1,000,000 sequences, far past any that fits a card (the answer says it does not fit).
* serving simulation: requests are simulated one by one, at about 10 us of CPU each for a Poisson load on vLLM;
  `estimate` takes up to 10,000 requests (the percentiles settle within a few thousand; 10,000 run in about
  1 s), `recommend` simulates up to 40 options, so it takes up to 1,000 each. Users up to 1,000,000; a rate of
  1e-6 to 1e6 requests/s (past the engine's capacity every rate is the same queue). The simulation also stops at
  a bound on its steps (estimate/serve/sim.py MAX_STEPS).
* seed: 0 to 2**32 - 1 (NumPy's generators take no negative seed).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import dataclass

from gpuadvisor.core.errors import UserError

MAX_TOKENS = 10_000_000
MAX_GPUS = 65_536
MAX_BATCH = 1_000_000
MAX_USERS = 1_000_000
MAX_REQUESTS = 10_000
MAX_SLO_REQUESTS = 1_000
MIN_RATE, MAX_RATE = 1e-6, 1e6


@dataclass(frozen=True)
class Limit:
    """`flag` takes values in [lo, hi], in `unit`s; whole numbers where `integer`."""

    flag: str
    lo: float
    hi: float
    unit: str
    integer: bool = True

    def describe(self) -> str:
        return f"{_num(self.lo)} to {_num(self.hi)} {self.unit}".rstrip()

    def contains(self, value: float) -> bool:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return False
        if self.integer and value != int(value):
            return False
        return self.lo <= value <= self.hi


def _num(value: float) -> str:
    return f"{value:,.0f}" if math.isfinite(value) and value == int(value) and abs(value) < 1e15 else f"{value:g}"


LIMITS: dict[str, Limit] = {
    "seq": Limit("--seq", 1, MAX_TOKENS, "tokens"),
    "input_len": Limit("--input-len", 1, MAX_TOKENS, "tokens"),
    "output_len": Limit("--output-len", 1, MAX_TOKENS, "tokens"),
    "batch": Limit("--batch", 1, MAX_BATCH, "sequences"),
    "gpus": Limit("--gpus", 1, MAX_GPUS, "GPUs"),
    "tp": Limit("--tp", 1, MAX_GPUS, "GPUs"),
    "pp": Limit("--pp", 1, MAX_GPUS, "stages"),
    "replicas": Limit("--replicas", 1, MAX_GPUS, "replicas"),
    "requests": Limit("--requests", 1, MAX_REQUESTS, "requests"),
    "slo_requests": Limit("--requests", 1, MAX_SLO_REQUESTS, "requests per option"),
    "users": Limit("--users", 1, MAX_USERS, "users"),
    "rate": Limit("--rate", MIN_RATE, MAX_RATE, "requests/s", integer=False),
    "seed": Limit("--seed", 0, 2**32 - 1, ""),
}


def in_range(flag: str, value: float | None, low: float, high: float, unit: str = "") -> None:
    """Refuse a number outside [low, high] (None passes), naming the flag and the range."""
    if value is None:
        return
    if not (low <= value <= high):
        raise UserError(f"{flag} {_num(value)} is out of range: {Limit(flag, low, high, unit).describe()}".rstrip())


def check(name: str, value: float) -> float:
    """`value` if LIMITS[name] holds it, else UserError naming the flag and the range."""
    limit = LIMITS[name]
    if not limit.contains(value):
        shown = _num(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else repr(value)
        raise UserError(f"{limit.flag} {shown} is out of range: {limit.describe()}")
    return value


def arg_type(name: str) -> Callable[[str], float]:
    """An argparse `type=` for LIMITS[name]: parses the text and refuses a value outside the range (one line)."""
    limit = LIMITS[name]

    def parse(text: str) -> float:
        try:
            value: float = int(text) if limit.integer else float(text)
        except ValueError:
            kind = "a whole number" if limit.integer else "a number"
            raise argparse.ArgumentTypeError(f"not {kind}: {text!r} ({limit.describe()})") from None
        if not limit.contains(value):
            raise argparse.ArgumentTypeError(f"{text} is out of range: {limit.describe()}")
        return value

    parse.__name__ = name  # argparse names the type in some messages
    return parse
