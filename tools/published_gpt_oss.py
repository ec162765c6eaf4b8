"""Write tests/data/published-gpt-oss.json: GPUStack's performance-lab runs of gpt-oss (MXFP4 experts, every other
layer a 128-token sliding window) on one H100 and one A100, read from the pages at the commits named below
(2026-12-06). Each run is `vllm bench serve --backend openai-chat` against `vllm serve openai/gpt-oss-*` without
further flags (the pages' baselines: no async scheduling, TP1); a run's input and output lengths are its means (total
input and generated tokens over its requests). Same schema as published-serving.json (tools/published_serving.py).

Fitted on (tools/fit_mxfp4_moe.py, the physics constant mxfp4_moe_eff): the output throughput of gpt-oss-20b's four
prompt-heavy runs on the H100, whose prefill keeps the GPU busy (their mean TPOT, 150-240 ms, is about the time one
8,192-token chunk takes at their own prefill rate: every decode shared an iteration with a prompt chunk). Held out:
everything else: the other card (A100, whose MXFP4 experts run in Marlin, not Triton), gpt-oss-120b on the H100
(vLLM 0.10.2) and the ShareGPT runs. A first fit, on the 120b H100 runs (0.24), left the GPU-bound runs at
0.67x-0.77x; those runs' own TPOT (24-41 ms, against 0.5-0.6 s a chunk at their prefill rate) then showed that
their GPU waited on something upstream, which the simulation does not model, and the fit moved to the 20b runs.

    python -m tools.published_gpt_oss
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "published-gpt-oss.json"

PAGES = {
    "120b-h100": ("gpt-oss-120b/h100.md", "72aee9dd195ff5c9bf3a4886add80038ce79aef8", "0.10.2", "H100 SXM5 80GB",
                  "gpt-oss-120b"),
    "20b-h100": ("gpt-oss-20b/h100.md", "7b50d5067ddbdeba0739e7f72d6f40e53d3b9a04", "0.11.0", "H100 SXM5 80GB",
                 "gpt-oss-20b"),
    "120b-a100": ("gpt-oss-120b/a100.md", "1f37f1b8bd79c6b424a0cb55c7abd08a5c2132dc", "0.11.0", "A100 SXM4 80GB",
                  "gpt-oss-120b"),
}

#: (page, case, requests, total input tokens, generated tokens, concurrency or None (all at once),
#:  {metric: value}, fitted on)
RUNS: list[tuple[str, str, int, int, int, int | None, dict[str, float], bool]] = [
    ("120b-h100", "random-128", 1000, 127755, 4000, None, {"output_tps": 517.91}, False),
    ("120b-h100", "random-2k", 500, 999120, 49197, None, {"output_tps": 675.11, "tpot_ms": 41.35}, False),
    ("120b-h100", "random-4k", 500, 1999249, 67205, None, {"output_tps": 463.35, "tpot_ms": 31.70}, False),
    ("120b-h100", "random-32k", 100, 3200000, 9877, None, {"output_tps": 49.65, "tpot_ms": 23.99}, False),
    ("120b-h100", "sharegpt", 1000, 215312, 195544, None, {"output_tps": 2901.05, "tpot_ms": 54.10}, False),
    ("120b-h100", "sharegpt-c4", 100, 22946, 21691, 4, {"output_tps": 453.04, "tpot_ms": 8.31, "ttft_ms": 49.00},
     False),
    ("20b-h100", "random-128", 1000, 127755, 4000, None, {"output_tps": 851.04}, True),
    ("20b-h100", "random-2k", 500, 999120, 47022, None, {"output_tps": 1443.44, "tpot_ms": 149.76}, True),
    ("20b-h100", "random-4k", 500, 1999249, 52309, None, {"output_tps": 847.43, "tpot_ms": 184.26}, True),
    ("20b-h100", "random-32k", 100, 3200000, 9350, None, {"output_tps": 86.62, "tpot_ms": 239.44}, True),
    ("20b-h100", "sharegpt", 1000, 215312, 193979, None, {"output_tps": 7817.03, "tpot_ms": 91.00}, False),
    ("120b-a100", "random-2k", 500, 999120, 48981, None, {"output_tps": 395.21, "tpot_ms": 131.94}, False),
    ("120b-a100", "random-4k", 500, 1999249, 67259, None, {"output_tps": 249.67, "tpot_ms": 112.18}, False),
    ("120b-a100", "random-32k", 100, 3200000, 9988, None, {"output_tps": 13.50, "tpot_ms": 224.58}, False),
    ("120b-a100", "sharegpt", 1000, 215312, 196656, None, {"output_tps": 2276.40, "tpot_ms": 97.57}, False),
]


def entries() -> list[dict[str, Any]]:
    out = []
    for page, case, n, total_in, total_out, users, metrics, fitted in RUNS:
        path, commit, release, gpu, model = PAGES[page]
        url = f"https://github.com/gpustack/gpustack/blob/{commit}/docs/performance-lab/{path}"
        for metric, value in metrics.items():
            out.append({
                "id": f"gpustack-vllm-{release}-{model}-{page.split('-')[1]}-mxfp4-{case}-{metric}",
                "model": model, "engine": "vllm", "engine_version": release, "gpu": gpu, "gpus": 1,
                "weights": "mxfp4", "kv_dtype": "bf16", "metric": metric, "value": value,
                "input_len": round(total_in / n, 3), "output_len": round(total_out / n, 3), "tp": 1, "pp": 1,
                "concurrency": users, "request_rate": None, "num_requests": n, "ubatch": None,
                "lengths": "sharegpt-vllm" if case.startswith("sharegpt") else "fixed", "client_measured": True,
                "speculative": None, "disaggregated": None, "frontend_ms": None,
                "source": {"url": url, "repo": "gpustack/gpustack", "path": f"docs/performance-lab/{path}",
                           "commit": commit,
                           "document": f"GPUStack performance lab, {model} on one {gpu} (vLLM {release} baseline: "
                                       f"vllm serve openai/{model}; vllm bench serve, openai-chat backend)"},
                "table": f"Other Benchmark Cases / Choosing the Inference Engine: {case}",
                "notes": "random prompts (vllm bench serve --dataset-name random, seed 42): the generated lengths are "
                         "the run's mean (the model stops before --random-output-len)" if case.startswith("random")
                         else "ShareGPT prompts: input_len and output_len are the run's means",
                "held_out": not (fitted and metric == "output_tps"),
            })
    return out


def main() -> None:
    OUT.write_text(json.dumps({"_about": __doc__.split("\n\n")[0].replace("\n", " ") + " Written by "
                               "tools/published_gpt_oss.py.", "results": entries()}, indent=1) + "\n")


if __name__ == "__main__":
    main()
