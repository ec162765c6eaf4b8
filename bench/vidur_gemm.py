"""The op pricer's matrix products against microsoft/vidur's measured fp16 linear layers on an A100, an A40 and an
H100 (tests/data/published-vidur-gemm.json, by tools/published_vidur_gemm.py): none of them was fitted on, and two of
the three cards were never measured by this project.

Each row is one tensor-parallel worker's product (tokens x inner -> outer) of one transformer block's QKV, output,
gate-and-up or down projection, priced as a traced GEMM of that shape is (opcost.gemm_time on the card's datasheet
figures). ratio = estimate / measured. Regimes: `decode` (1-16 tokens: weight streaming), `prefill` (64+ tokens)."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from typing import Any

from bench import REPO, TESTS_DATA

DATA = TESTS_DATA / "published-vidur-gemm.json"
# the same widths measured on our H100 (lab/gemm_tail_waves.py, 2026-12-07): fp16 and bf16, 128-4,096 tokens
H100_SWEEP = REPO / "lab" / "data" / "h100-gemm-tail-waves-2026-12-07" / "tail-waves.json"
IN_BAND = (0.8, 1.25)
DECODE_MAX_TOKENS = 16


@dataclass(frozen=True)
class Row:
    card: str
    model: str
    tp: int
    op: str
    m: int
    n: int
    k: int
    measured_s: float
    estimate_s: float
    held_out: bool

    @property
    def ratio(self) -> float:
        return self.estimate_s / self.measured_s

    @property
    def regime(self) -> str:
        return "decode" if self.m <= DECODE_MAX_TOKENS else "prefill"


def load() -> dict[str, Any]:
    return json.loads(DATA.read_text())


@cache
def _rates(card: str) -> Any:
    from gpuadvisor.catalog import load_catalog
    from gpuadvisor.estimate.opcost import Rates
    from gpuadvisor.estimate.serve.api import card_figures

    return Rates.of(card_figures(load_catalog().get(card)))


def estimate_s(card: str, m: int, n: int, k: int, dtype: str = "fp16") -> float:
    """The op pricer's seconds for one (m x k) @ (k x n) product in `dtype` on `card`'s datasheet figures."""
    from gpuadvisor.estimate.graph import Op, OpClass, Phase
    from gpuadvisor.estimate.opcost import op_time

    op = Op("linear", OpClass.GEMM, Phase.FORWARD, dtype, 2.0 * m * n * k, 2.0 * (m * k + n * k), 2.0 * m * n,
            (1.0, float(m), float(n), float(k)))
    return op_time(op, _rates(card))


def h100_sweep_ratios() -> list[tuple[str, str, int, float]]:
    """(dtype, product, tokens, estimate / measured) of lab/gemm_tail_waves.py's run on our H100: Llama-3-8B's down,
    output and gate-and-up projections over 128-4,096 tokens in steps of 128, every wave boundary crossed."""
    rows = json.loads(H100_SWEEP.read_text())["rows"]
    return [(r["dtype"], r["product"], r["m"], estimate_s("H100 SXM5 80GB", r["m"], r["n"], r["k"], r["dtype"])
             / r["s"]) for r in rows]


def evaluate() -> list[Row]:
    return [Row(r["card"], r["model"], r["tp"], r["op"], r["m"], r["n"], r["k"], r["measured_s"],
                estimate_s(r["card"], r["m"], r["n"], r["k"]), r["held_out"]) for r in load()["results"]]


def summary(rows: list[Row]) -> dict[str, float]:
    ratios = [r.ratio for r in rows]
    return {"n": len(ratios), "in_band": sum(IN_BAND[0] <= x <= IN_BAND[1] for x in ratios) / len(ratios),
            "gmean": math.exp(sum(map(math.log, ratios)) / len(ratios)), "min": min(ratios), "max": max(ratios)}


def by_group(rows: list[Row]) -> dict[tuple[str, str, str], dict[str, float]]:
    """Summaries per (card, regime, split)."""
    groups: dict[tuple[str, str, str], list[Row]] = defaultdict(list)
    for r in rows:
        for split in ("all", "held out" if r.held_out else "calibration"):
            groups[(r.card, r.regime, split)].append(r)
    return {key: summary(v) for key, v in sorted(groups.items())}


def markdown(rows: list[Row] | None = None) -> str:
    rows = evaluate() if rows is None else rows
    lines = ["| card | products | tokens | within 0.8x-1.25x | geometric mean | lowest | highest |",
             "|---|---:|---|---:|---:|---:|---:|"]
    for (card, regime, split), s in by_group(rows).items():
        if split == "all":
            lines.append(f"| {card} | {s['n']} | {'1-16' if regime == 'decode' else '64-16,384'} | {s['in_band']:.0%} "
                         f"| {s['gmean']:.2f}x | {s['min']:.2f}x | {s['max']:.2f}x |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown())
