"""GEMMs whose dimensions are not multiples of 8 elements, timed against their padded twins (lab/misaligned_gemm.py):
the slowdown kernels.misaligned_slowdown prices, read off a device run instead of assumed.

The profiled models run bf16 (autocast in training, bf16 weights in inference), so the constants are the geometric
mean over bf16's three products of a language-model head (forward, input gradient, weight gradient) at 8,192 tokens,
where every one of them is compute-bound; fp16, fp32 and TF32 and the 1,024-token rows are in the file for reading.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from bench import REPO

#: the H100 run of lab/misaligned_gemm.py (lab/data/h100-gemm-align-2026-12-06/README.md)
RUN = REPO / "lab/data/h100-gemm-align-2026-12-06/misaligned_gemm.json"
#: which vocabularies stand for which kind of misalignment: odd (one-element vectors) and even but not a multiple of 8
ODD_CASES = ("gpt2", "odd-small")
EVEN_CASES = ("bert", "even-small")
FIT_DTYPE = "bf16"
FIT_TOKENS = 8192


def load(path: Path = RUN) -> dict[str, Any]:
    return dict(json.loads(path.read_text()))


def _geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def slowdowns(run: dict[str, Any], *, dtype: str = FIT_DTYPE, tokens: int = FIT_TOKENS,
              cases: tuple[str, ...] = ODD_CASES) -> list[float]:
    """Each product's time per FLOP over its padded twin's, for `cases` at `dtype` and `tokens`."""
    return [float(r["slowdown"]) for r in run["ratios"]
            if r["dtype"] == dtype and r["tokens"] == tokens and r["case"] in cases]


def fitted(run: dict[str, Any] | None = None) -> dict[str, float]:
    """MISALIGNED_SLOWDOWN as the run gives it (odd dimensions, rounded to 0.25). The even one's figure (2.6 at 8,192
    tokens, 2.0 at 1,024) is read beside MISALIGNED_EVEN_SLOWDOWN's profile fit, not instead of it: a rate divisor
    is one figure, and at 2.5 the calibration split's GEMM time came out worse than at the fit's 2.0."""
    run = run or load()
    return {"MISALIGNED_SLOWDOWN": round(4 * _geomean(slowdowns(run, cases=ODD_CASES))) / 4}
