"""Write tests/data/published-deepseek.json: GPUStack's performance-lab runs of DeepSeek-R1-0528 (DeepSeek-V3's
architecture: multi-head latent attention, 256 routed experts and a shared one, three dense first layers; FP8
weights in 128x128 blocks) on one node of eight H200s, read from the page at the commit named below (2026-12-06).
Each run is `vllm bench serve --backend openai-chat` with all its requests sent at once (or 4 users) against the
engine's default launch: `vllm serve deepseek-ai/DeepSeek-R1-0528 -tp 8` (vLLM 0.11.0), `sglang.launch_server
--tp-size 8` (SGLang 0.5.3). A run's input and output lengths are its means (total input and generated tokens over
its requests). Same schema as published-serving.json (tools/published_serving.py).

Nothing is fitted on these runs: they check the latent-attention and shared-expert costing out of sample. Left out:
SGLang's runs with data-parallel attention (each rank its own requests' latent cache: not modelled), its MTP run,
and TensorRT-LLM's (expert parallel over the eight GPUs, not modelled for serving).

    python -m tools.published_deepseek
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "published-deepseek.json"
COMMIT = "a5c9fafc3022e81779c2c5ade32c5b703ce2248c"
PATH = "docs/performance-lab/deepseek-r1/h200.md"
OTHER = "Other Benchmark Cases: baseline,"

#: (engine, release, case, requests, total input tokens, generated tokens, concurrency or None (all at once),
#:  {metric: value}, the page's block)
RUNS: list[tuple[str, str, str, int, int, int, int | None, dict[str, float], str]] = [
    ("vllm", "0.11.0", "sharegpt", 1000, 219171, 200752, None,
     {"output_tps": 2621.05, "ttft_ms": 17743.08, "tpot_ms": 227.45}, "1. Choosing the Inference Engine: vLLM"),
    ("sglang", "0.5.3", "sharegpt", 1000, 219171, 200767, None,
     {"output_tps": 3172.46, "ttft_ms": 6948.08, "tpot_ms": 420.18}, "1. Choosing the Inference Engine: SGLang"),
    ("vllm", "0.11.0", "random-32k", 100, 3199900, 10000, None,
     {"output_tps": 48.33, "ttft_ms": 101351.99, "tpot_ms": 365.79}, f"{OTHER} random 32K input"),
    ("vllm", "0.11.0", "random-4k", 500, 1997530, 100000, None,
     {"output_tps": 753.67, "ttft_ms": 63058.71, "tpot_ms": 164.23}, f"{OTHER} random 4K input"),
    ("vllm", "0.11.0", "random-2k", 500, 998393, 50000, None,
     {"output_tps": 843.71, "ttft_ms": 28911.90, "tpot_ms": 237.02}, f"{OTHER} random 2K input"),
    ("vllm", "0.11.0", "random-128", 1000, 126882, 4000, None,
     {"output_tps": 181.27, "ttft_ms": 19392.11}, f"{OTHER} random 128 input"),
    ("vllm", "0.11.0", "sharegpt-c4", 100, 22836, 21338, 4,
     {"output_tps": 196.81, "ttft_ms": 123.30, "tpot_ms": 19.36}, f"{OTHER} ShareGPT batch size 4"),
]

LAUNCH = {"vllm": "vllm serve deepseek-ai/DeepSeek-R1-0528 -tp 8",
          "sglang": "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-R1-0528 --tp-size 8"}


def entries() -> list[dict[str, Any]]:
    out = []
    url = f"https://github.com/gpustack/gpustack/blob/{COMMIT}/{PATH}"
    for engine, release, case, n, total_in, total_out, users, metrics, block in RUNS:
        for metric, value in metrics.items():
            out.append({
                "id": f"gpustack-{engine}-{release}-deepseek-r1-h200x8-fp8-{case}-{metric}",
                "model": "deepseek-r1", "engine": engine, "engine_version": release, "gpu": "H200 SXM 141GB",
                "gpus": 8, "weights": "fp8", "kv_dtype": "bf16", "metric": metric, "value": value,
                "input_len": round(total_in / n, 3), "output_len": round(total_out / n, 3), "tp": 8, "pp": 1,
                "concurrency": users, "request_rate": None, "num_requests": n, "ubatch": None,
                "lengths": "sharegpt" if case.startswith("sharegpt") else "fixed", "client_measured": True,
                "speculative": None, "disaggregated": None, "frontend_ms": None,
                "source": {"url": url, "repo": "gpustack/gpustack", "path": PATH, "commit": COMMIT,
                           "document": f"GPUStack performance lab, DeepSeek-R1-0528 on 8x H200 ({engine} {release}: "
                                       f"{LAUNCH[engine]}; vllm bench serve, openai-chat backend)"},
                "table": block,
                "notes": "random prompts (vllm bench serve --dataset-name random, seed 42)" if case.startswith("random")
                         else "ShareGPT prompts: input_len and output_len are the run's means",
                "held_out": True,
            })
    return out


def main() -> None:
    about = ("Published serving runs of DeepSeek-R1-0528 on 8x H200 (GPUStack performance lab), built by "
             "tools/published_deepseek.py; nothing fitted on them")
    OUT.write_text(json.dumps({"_about": about, "results": entries()}, indent=1) + "\n")
    print(f"wrote {OUT} ({len(entries())} figures)")


if __name__ == "__main__":
    main()
