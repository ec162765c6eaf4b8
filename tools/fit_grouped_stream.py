"""Fit GROUPED_STREAM_K_RAMP (calibration/gpu.py): the value on a 10-step grid from 0 to 400 with the least mean
|log(tool / measured)| over the bf16 grouped rows of lab/fp8_block_gemm.py's H100 run at 1, 16 and 256 rows an expert
(bench.moe.STREAM_FIT_ROWS); prints the held-out rows (4 and 64 rows an expert, and lab/grouped_moe.py's 13 shapes)
before and after.

    python -m tools.fit_grouped_stream
"""

from __future__ import annotations

import math

from bench import moe
from gpuadvisor.estimate import calibration as cal


def error(ratios: list[float]) -> float:
    return sum(abs(math.log(x)) for x in ratios) / len(ratios)


GRID = range(0, 401, 10)


def fit() -> tuple[int, dict[int, float]]:
    """(the best value on GRID, each value's mean |log error| over the fit rows)."""
    scores = {}
    for ramp in GRID:
        with cal.override(GROUPED_STREAM_K_RAMP=ramp):
            scores[ramp] = error(list(moe.deepseek_grouped_ratios(held_out=False).values()))
    return min(GRID, key=lambda x: scores[x]), scores


def main() -> None:
    best, scores = fit()
    print(f"GROUPED_STREAM_K_RAMP {best}: fit rows' mean |log| {scores[0]:.3f} (0) -> {scores[best]:.3f}")
    for ramp in (0, best):
        with cal.override(GROUPED_STREAM_K_RAMP=ramp):
            held = moe.deepseek_grouped_ratios(held_out=True)
            old = moe.grouped_ratios()
        print(f"  {ramp}: held out {', '.join(f'{k} {v:.2f}x' for k, v in held.items())}; "
              f"gpt-oss/Mixtral shapes {min(old):.2f}x-{max(old):.2f}x")


if __name__ == "__main__":
    main()
