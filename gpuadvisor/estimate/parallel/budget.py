"""Time to train: step time x steps, the steps from a token budget, a sample budget or a target of samples seen
(as MLPerf Training states its convergence points), with checkpointing and restarts priced as a user-set share of
the step time."""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuadvisor.core.errors import UserError


@dataclass(frozen=True)
class TrainTime:
    steps: int
    step_s: float
    overhead: float  # checkpoint/restart share added on top of the steps
    seconds: float
    tokens: float

    def to_dict(self) -> dict[str, float]:
        return {"steps": self.steps, "step_s": self.step_s, "overhead": self.overhead, "seconds": self.seconds,
                "hours": self.seconds / 3600, "tokens": self.tokens}


def train_time(step_s: float, global_batch: int, seq: int, *, tokens: float = 0.0, samples: float = 0.0,
               overhead: float = 0.0) -> TrainTime:
    """Steps to cover `tokens` (or `samples` sequences; one of the two) at `global_batch` sequences of `seq` tokens
    per step, times the step, times (1 + overhead)."""
    if tokens and samples:
        raise UserError("give a token budget or a sample budget, not both")
    if not (0.0 <= overhead < 10.0) or math.isnan(overhead):
        raise UserError(f"checkpoint/restart overhead must be a fraction in [0, 10), got {overhead!r}")
    if tokens < 0 or samples < 0 or math.isinf(tokens) or math.isinf(samples):
        raise UserError("the token or sample budget must be a finite number >= 0")
    if tokens:
        steps = math.ceil(tokens / (global_batch * seq))
    elif samples:
        steps = math.ceil(samples / global_batch)
    else:
        steps = 1
    return TrainTime(steps=steps, step_s=step_s, overhead=overhead, seconds=steps * step_s * (1 + overhead),
                     tokens=float(steps * global_batch * seq))
