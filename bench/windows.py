"""A sliding-window layer's attention against a causal one on an H100 (lab/sliding_window_attention.py,
lab/data/h100-sliding-window-2026-12-06): the tool's windowed / causal time ratio (ModelSpec.attended_pairs with a
key tile, priced at kernels.attention_rate as the estimator does) against the measured one. Read by
tests/test_gpt_oss.py and BENCHMARKS.md's probe section."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from bench import REPO

RUN = REPO / "lab/data/h100-sliding-window-2026-12-06/sliding_window_attention.json"
#: the shortest run compared: below it both kernels sit at their floor (0.93 measured at 1,024 tokens)
MIN_SEQ = 4096


def run() -> dict[str, Any]:
    return dict(json.loads(RUN.read_text()))


def ratios(tile: float | None = None) -> dict[int, tuple[float, float]]:
    """Sequence length -> (the tool's windowed / causal time with a key tile of `tile` (ATTN_WINDOW_TILE unless
    given), the measured one), from MIN_SEQ tokens on; gpt-oss-20b's heads, every layer windowed."""
    from bench.models import bf16_rates, hardware
    from gpuadvisor.estimate import calibration as cal
    from gpuadvisor.estimate import kernels
    from gpuadvisor.workload import make_workload

    rate, _ = bf16_rates(hardware())
    m = make_workload("gpt-oss-20b").model
    windowed = replace(m, sliding_layers=m.num_layers)
    tile = cal.ATTN_WINDOW_TILE if tile is None else tile

    def seconds(pairs: float, seq: int) -> float:
        return 4 * pairs * m.q_dim / kernels.attention_rate(max(2 * pairs / seq, 1.0), m.head_dim, rate)

    return {row["seq"]: (seconds(windowed.attended_pairs(0, row["seq"], tile), row["seq"])
                         / seconds(row["seq"] ** 2 / 2, row["seq"]), row["flex_window_s"] / row["flex_causal_s"])
            for row in run()["rows"] if row["seq"] >= MIN_SEQ}
