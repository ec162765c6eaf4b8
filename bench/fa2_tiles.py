"""FlashAttention 2's decode rows in a serving engine's mixed call (lab/fa2_paged_mixed.py): on a paged KV cache, as
vLLM keeps it, FA2 runs its split-KV kernel (64-row query tiles); on a contiguous one, the forward kernel (128 rows at
head dimension 128 on Hopper). What engines.json's `decode_query_rows` rests on: a decoding sequence's cost in a mixed
call is its query tiles' multiply-adds, so the paged call's decode rows cost about half the contiguous call's; were it
the KV re-read by every query head, the two would cost the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench import REPO

DATA = REPO / "lab" / "data" / "h200-fa2-paged-2026-12-06" / "fa2_paged_mixed.json"
Q_DIM = 32 * 128  # Qwen3-4B's query heads x head dimension (the script's shapes)
PAGED_TILE_ROWS, CONTIGUOUS_TILE_ROWS = 64, 128


def load(path: Path = DATA) -> dict[str, Any]:
    return dict(json.loads(path.read_text()))


def decode_rows_s(row: dict[str, Any], kind: str) -> float:
    """Seconds the decoding sequences add to a mixed call: the mixed call less the prompt alone."""
    return float(row[f"{kind}_mixed_s"] - row[f"{kind}_prompt_s"])


def paged_over_contiguous(path: Path = DATA) -> list[tuple[int, int, float]]:
    """(batch, context, paged decode rows / contiguous decode rows) per shape."""
    return [(r["batch"], r["ctx"], decode_rows_s(r, "paged") / decode_rows_s(r, "contiguous"))
            for r in load(path)["rows"]]


def tile_rate_over_gemm(path: Path = DATA, kind: str = "paged") -> list[float]:
    """The query tiles' multiply-adds per second (4 x rows x context x query dimension per sequence and layer call)
    over the same run's bf16 GEMM rate, per shape."""
    d = load(path)
    rows = PAGED_TILE_ROWS if kind == "paged" else CONTIGUOUS_TILE_ROWS
    gemm = float(d["env"]["gemm_tflops_bf16"]) * 1e12
    return [4.0 * rows * r["batch"] * r["ctx"] * Q_DIM / decode_rows_s(r, kind) / gemm for r in d["rows"]]
