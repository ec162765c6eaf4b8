"""Fit engines.json's physics `mxfp4_moe_eff`: the share of the bf16 GEMM rate that MXFP4 experts reach on a card
without FP4 tensor cores (weights unpacked to bf16 in the grouped GEMM: vLLM's w4a16 MoE kernels), on the output
throughput of the published gpt-oss runs that are NOT held out (tests/data/published-gpt-oss.json: gpt-oss-20b on
one H100, prompts of 128 to 32,000 tokens, all queued at once, whose time is the prompts' prefill on a busy GPU;
tools/published_gpt_oss.py says why those runs). The value
on a 0.01 grid that minimises the mean |log(tool / published)|. Prints it; engines.json is edited by hand with it.
Run: `python3 -m tools.fit_mxfp4_moe`."""

from __future__ import annotations

import math

from bench import serving as P
from gpuadvisor.estimate.serve.profiles import _raw_physics


def rows() -> list[dict]:
    return [e for e in P.load_entries(P.GPT_OSS) if not e["held_out"] and e["metric"] == "output_tps"]


def error(eff: float, fitted: list[dict]) -> float:
    phys = {**_raw_physics(), "mxfp4_moe_eff": eff}
    return sum(abs(math.log(P.tool_value(e, phys) / e["value"])) for e in fitted) / len(fitted)


GRID = tuple(step / 100 for step in range(10, 101))


def fit(grid: tuple[float, ...] = GRID) -> tuple[float, float]:
    """(the value, its mean |log error|) over the grid: coarse in 0.05 steps, then 0.01 around the best."""
    fitted = rows()
    coarse = min(grid[::5], key=lambda x: error(x, fitted))
    fine = [x for x in grid if abs(x - coarse) <= 0.05]
    best = min(fine, key=lambda x: error(x, fitted))
    return best, error(best, fitted)


if __name__ == "__main__":
    value, err = fit()
    print(f"mxfp4_moe_eff {value:.2f} (mean |log error| {100 * err:.1f} % over {len(rows())} rows: "
          f"{', '.join(e['id'] for e in rows())})")
