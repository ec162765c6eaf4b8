"""Write tests/data/published-llama4.json: TensorRT-LLM's maximum-throughput figures for Llama 4 Scout and Maverick
from its performance overview, the page and commit its other rows in published-serving.json are read from
(docs/source/performance/perf-overview.md at 00f3768, v1.0 data, read 2026-12-06): trtllm-bench throughput on
synthetic fixed lengths, every request queued at once, Total Output Throughput over all GPUs. Scout at TP4 on H100
and H200 in FP8 and at TP1 on a B200 in NVFP4; Maverick at TP8 on H100 and H200 in FP8 and on B200 in NVFP4. The page
names no expert-parallel size for these tables (estimated as experts split by tensor parallelism) and the KV cache
is taken in the checkpoint's format, as for the page's other models (tools/published_serving.trt_rows, which builds
both).

Nothing is fitted on these rows: they check Llama 4's shared expert, Maverick's dense layers and the chunked
attention read as a sliding window, out of sample.

    python -m tools.published_llama4
"""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from tools.published_serving import TRT_V1, trt_rows

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "published-llama4.json"
H100, H200, B200 = "H100 SXM5 80GB", "H200 SXM 141GB", "B200"
NOTE = "no expert-parallel size stated (estimated as experts split by TP); KV cache in the checkpoint's format, as " \
       "the page's other models"

#: (model, the page's table) -> (card, TP, weights) -> (input, output) -> Total Output Throughput tok/s
TABLES: dict[tuple[str, str], dict[tuple[str, int, str], dict[tuple[int, int], float]]] = {
    ("llama-4-scout", "Llama 4 Scout"): {
        (H200, 4, "fp8"): {(128, 2048): 34316, (1000, 1000): 21636, (2048, 2048): 14949, (5000, 500): 4605},
        (H100, 4, "fp8"): {(128, 2048): 15130, (1000, 1000): 12129, (2048, 2048): 7972, (5000, 500): 3342},
        (B200, 1, "fp4"): {(1000, 1000): 10591, (2048, 2048): 7152}},
    ("llama-4-maverick", "Llama 4 Maverick"): {
        (H200, 8, "fp8"): {(128, 2048): 40572, (1000, 1000): 31782, (2048, 2048): 20957, (5000, 500): 8456},
        (H100, 8, "fp8"): {(128, 2048): 10829, (1000, 1000): 9677, (2048, 2048): 6916, (5000, 500): 3457},
        (B200, 8, "fp4"): {(1000, 1000): 79617, (2048, 2048): 52195}},
}


def entries() -> list[dict[str, Any]]:
    rows = []
    for (model, table), columns in TABLES.items():
        for (gpu, tp, weights), figures in columns.items():
            col = f"{gpu.split()[0]} TP{tp} ({weights.upper()})"
            rows += trt_rows(model, gpu, tp, weights, col, figures, src=TRT_V1, table=table, version="1.0")
    return [{**asdict(replace(r, notes=NOTE)), "held_out": True} for r in rows]


def main() -> None:
    rows = entries()
    OUT.write_text(json.dumps({"_about": __doc__.split("\n\n")[0].replace("\n", " ") + " Written by "
                               "tools/published_llama4.py.", "results": rows}, indent=1) + "\n")
    print(f"wrote {OUT} ({len(rows)} figures)")


if __name__ == "__main__":
    main()
