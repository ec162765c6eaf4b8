"""Write tests/data/published-llama4.json: TensorRT-LLM's maximum-throughput figures for Llama 4 Scout and Maverick
from its performance overview, the page and commit its other rows in published-serving.json are read from
(docs/source/performance/perf-overview.md at 00f3768, v1.0 data, read 2026-12-06): trtllm-bench throughput on
synthetic fixed lengths, every request queued at once, Total Output Throughput over all GPUs. Scout at TP4 on H100
and H200 in FP8 and at TP1 on a B200 in NVFP4; Maverick at TP8 on H100 and H200 in FP8 and on B200 in NVFP4. The page
names no expert-parallel size for these tables (estimated as experts split by tensor parallelism) and the KV cache
is taken in the checkpoint's format, as for the page's other models (tools/published_serving.py).

Nothing is fitted on these rows: they check Llama 4's shared expert, Maverick's dense layers and the chunked
attention read as a sliding window, out of sample.

    python -m tools.published_llama4
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "published-llama4.json"
REPO, PATH, COMMIT = "NVIDIA/TensorRT-LLM", "docs/source/performance/perf-overview.md", \
    "00f37686aa854010d68bcbd0f4ab000221541ca6"
CARDS = {"H100": "H100 SXM5 80GB", "H200": "H200 SXM 141GB", "B200": "B200"}

#: (model, card, tp, weights, input, output, requests, Total Output Throughput tok/s)
ROWS: list[tuple[str, str, int, str, int, int, int, float]] = [
    ("llama-4-scout", "H200", 4, "fp8", 128, 2048, 3000, 34316),
    ("llama-4-scout", "H100", 4, "fp8", 128, 2048, 3000, 15130),
    ("llama-4-scout", "H200", 4, "fp8", 1000, 1000, 3000, 21636),
    ("llama-4-scout", "H100", 4, "fp8", 1000, 1000, 3000, 12129),
    ("llama-4-scout", "H200", 4, "fp8", 2048, 2048, 1500, 14949),
    ("llama-4-scout", "H100", 4, "fp8", 2048, 2048, 1500, 7972),
    ("llama-4-scout", "H200", 4, "fp8", 5000, 500, 1500, 4605),
    ("llama-4-scout", "H100", 4, "fp8", 5000, 500, 1500, 3342),
    ("llama-4-scout", "B200", 1, "nvfp4", 1000, 1000, 3000, 10591),
    ("llama-4-scout", "B200", 1, "nvfp4", 2048, 2048, 1500, 7152),
    ("llama-4-maverick", "H200", 8, "fp8", 128, 2048, 3000, 40572),
    ("llama-4-maverick", "H100", 8, "fp8", 128, 2048, 3000, 10829),
    ("llama-4-maverick", "H200", 8, "fp8", 1000, 1000, 3000, 31782),
    ("llama-4-maverick", "H100", 8, "fp8", 1000, 1000, 3000, 9677),
    ("llama-4-maverick", "B200", 8, "nvfp4", 1000, 1000, 3000, 79617),
    ("llama-4-maverick", "H200", 8, "fp8", 2048, 2048, 1500, 20957),
    ("llama-4-maverick", "H100", 8, "fp8", 2048, 2048, 1500, 6916),
    ("llama-4-maverick", "B200", 8, "nvfp4", 2048, 2048, 1500, 52195),
    ("llama-4-maverick", "H200", 8, "fp8", 5000, 500, 1500, 8456),
    ("llama-4-maverick", "H100", 8, "fp8", 5000, 500, 1500, 3457),
]


def entries() -> list[dict[str, Any]]:
    out = []
    for model, card, tp, weights, isl, osl, n, value in ROWS:
        out.append({
            "id": f"trtllm-1.0-{model}-{card.lower()}-tp{tp}-{weights}-{isl}-{osl}", "model": model,
            "engine": "trtllm", "engine_version": "1.0", "gpu": CARDS[card], "gpus": tp, "weights": weights,
            "kv_dtype": "fp8", "metric": "max_output_tps", "value": value, "input_len": isl, "output_len": osl,
            "tp": tp, "pp": 1, "concurrency": None, "request_rate": None, "num_requests": n, "ubatch": None,
            "lengths": "fixed", "client_measured": False, "speculative": None, "disaggregated": None,
            "frontend_ms": None,
            "source": {"url": f"https://github.com/{REPO}/blob/{COMMIT}/{PATH}", "repo": REPO, "path": PATH,
                       "commit": COMMIT,
                       "document": "TensorRT-LLM performance overview (v1.0 data, PyTorch backend, trtllm-bench "
                                   "throughput, infinite request rate, Total Output Throughput)"},
            "table": f"{'Llama 4 Scout' if 'scout' in model else 'Llama 4 Maverick'}, column {card} TP{tp} "
                     f"({'FP4' if weights == 'nvfp4' else 'FP8'}), {isl}/{osl}",
            "notes": "no expert-parallel size stated (estimated as experts split by TP); KV cache in the checkpoint's "
                     "format, as the page's other models",
            "held_out": True})
    return out


def main() -> None:
    rows = entries()
    OUT.write_text(json.dumps({"_about": __doc__.split("\n\n")[0].replace("\n", " ") + " Written by "
                               "tools/published_llama4.py.", "results": rows}, indent=1) + "\n")
    print(f"wrote {OUT} ({len(rows)} figures)")


if __name__ == "__main__":
    main()
