"""Write tests/data/published-deepseek.json: GPUStack's performance-lab runs of DeepSeek-R1-0528 (DeepSeek-V3's
architecture: multi-head latent attention, 256 routed experts and a shared one, three dense first layers; FP8
weights in 128x128 blocks) on one node of eight H200s, read from the page at the commit named below (2026-12-06).
Each run is `vllm bench serve --backend openai-chat` with all its requests sent at once (or 4 users) against the
engine's default launch: `vllm serve deepseek-ai/DeepSeek-R1-0528 -tp 8` (vLLM 0.11.0), `sglang.launch_server
--tp-size 8` (SGLang 0.5.3). A run's input and output lengths are its means (total input and generated tokens over
its requests). Same schema as published-serving.json (tools/published_serving.py).

Nothing is fitted on these runs: they check the latent-attention and shared-expert costing out of sample. The page's
"optimized" SGLang runs pass --enable-dp-attention without --dp, which SGLang takes as no data-parallel attention
(server_args: dp_size 1 turns it off), so they are TP8 runs of SGLang 0.5.3 and are estimated as such. Left out:
SGLang's run with torch.compile and its MTP run, and TensorRT-LLM's (expert parallel over the eight GPUs, not
modelled for serving), but for the one max-throughput run of TensorRT-LLM's DeepSeek-R1 blog with attention
data-parallel (trtllm_entries), which checks `--dp-attention`.

    python -m tools.published_deepseek
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from tools.published_serving import Result

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "published-deepseek.json"
COMMIT = "a5c9fafc3022e81779c2c5ade32c5b703ce2248c"
PATH = "docs/performance-lab/deepseek-r1/h200.md"
OTHER = "Other Benchmark Cases: baseline,"
OPTIMIZED = "Other Benchmark Cases: optimized (SGLang, --tp 8 --enable-dp-attention),"

#: (engine, release, case, requests, total input tokens, generated tokens, concurrency or None (all at once),
#:  {metric: value}, the page's block); "-opt": the page's optimized SGLang (--enable-dp-attention, no --dp: SGLang
#:  turns data-parallel attention off where --dp is 1, server_args._handle_data_parallelism, so these ran TP8 and are
#:  estimated so)
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
    ("sglang", "0.5.3", "sharegpt-opt", 1000, 219171, 200752, None,
     {"output_tps": 3414.99, "ttft_ms": 5992.00, "tpot_ms": 304.71}, "2. Parallelism in SGLang: TP+DP Attention"),
    ("sglang", "0.5.3", "random-32k-opt", 100, 3199900, 9952, None,
     {"output_tps": 49.89, "ttft_ms": 98133.46, "tpot_ms": 198.62}, f"{OPTIMIZED} random 32K input"),
    ("sglang", "0.5.3", "random-4k-opt", 500, 1997530, 100000, None,
     {"output_tps": 767.42, "ttft_ms": 62808.37, "tpot_ms": 107.91}, f"{OPTIMIZED} random 4K input"),
    ("sglang", "0.5.3", "random-2k-opt", 500, 998393, 50000, None,
     {"output_tps": 907.31, "ttft_ms": 27248.86, "tpot_ms": 154.49}, f"{OPTIMIZED} random 2K input"),
    ("sglang", "0.5.3", "random-128-opt", 1000, 126882, 4000, None,
     {"output_tps": 624.94, "ttft_ms": 3626.25}, f"{OPTIMIZED} random 128 input"),
]

LAUNCH = {"vllm": "vllm serve deepseek-ai/DeepSeek-R1-0528 -tp 8",
          "sglang": "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-R1-0528 --tp-size 8",
          "sglang-opt": "python3 -m sglang.launch_server --model deepseek-ai/DeepSeek-R1-0528 --tp 8 "
                        "--enable-dp-attention"}


def _row(*, dp_attention: bool = False, engine_knobs: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    """One published figure of DeepSeek-R1 on eight GPUs at TP8, in published-serving.json's schema (its Result) with
    the serving layout's data-parallel attention and the engine knobs the run set; held out, as every row here."""
    row = Result(model="deepseek-r1", gpus=8, tp=8, **fields)
    return {**asdict(row), "dp_attention": dp_attention, "engine_knobs": engine_knobs, "held_out": True}


def entries() -> list[dict[str, Any]]:
    out = []
    url = f"https://github.com/gpustack/gpustack/blob/{COMMIT}/{PATH}"
    for engine, release, case, n, total_in, total_out, users, metrics, block in RUNS:
        launch = LAUNCH[engine + ("-opt" if case.endswith("-opt") else "")]
        for metric, value in metrics.items():
            out.append(_row(
                id=f"gpustack-{engine}-{release}-deepseek-r1-h200x8-fp8-{case}-{metric}", engine=engine,
                engine_version=release, gpu="H200 SXM 141GB", weights="fp8", kv_dtype="bf16", metric=metric,
                value=value, input_len=round(total_in / n, 3), output_len=round(total_out / n, 3), concurrency=users,
                num_requests=n, lengths="sharegpt-vllm" if case.startswith("sharegpt") else "fixed",
                client_measured=True,
                source={"url": url, "repo": "gpustack/gpustack", "path": PATH, "commit": COMMIT,
                        "document": f"GPUStack performance lab, DeepSeek-R1-0528 on 8x H200 ({engine} {release}: "
                                    f"{launch}; vllm bench serve, openai-chat backend)"},
                table=block,
                notes="random prompts (vllm bench serve --dataset-name random, seed 42)" if case.startswith("random")
                else "ShareGPT prompts: input_len and output_len are the run's means"))
    return out


#: TensorRT-LLM's DeepSeek-R1 best-practice blog, "H200 max-throughput": trtllm-bench throughput (in-process, no HTTP
#: front-end) with attention data-parallel and the experts over the eight GPUs (--tp 8 --ep 8, enable_attention_dp),
#: --max_batch_size 128 (a rank's) --max_num_tokens 1151 --kv_cache_free_gpu_mem_fraction 0.8, 1,024 at once, 5,120
#: requests of 1,024 + 2,048 tokens (synthetic, no spread); no MTP
TRTLLM_BLOG = ("NVIDIA/TensorRT-LLM", "docs/source/blogs/Best_perf_practice_on_DeepSeek-R1_in_TensorRT-LLM.md",
               "01c4ece911eb569e72cf4177f83238a0520641c2")


def trtllm_entries() -> list[dict[str, Any]]:
    repo, path, commit = TRTLLM_BLOG
    blog = "TensorRT-LLM blog, Best performance practice on DeepSeek-R1 in TensorRT-LLM: "
    ep = "experts split over the GPUs by expert parallelism (EP8), estimated as tensor-parallel experts"
    #: (card slug, gpu, weights, Total Output Throughput, concurrency, requests, engine knobs, the run, notes)
    runs = [("h200x8-fp8", "H200 SXM 141GB", "fp8", 11489.2671, 1024, 5120,
             {"max_seqs": 128, "max_batched_tokens": 1151, "kv_mem_fraction": 0.8},
             "H200 max-throughput (trtllm-bench throughput --tp 8 --ep 8, enable_attention_dp)", "H200 max-throughput",
             f"{ep} (the same bytes and FLOPs a GPU; no all-to-all or expert imbalance priced)"),
            ("b200x8-nvfp4", "B200", "nvfp4", 36384.0838, 3072, 49152,
             {"max_seqs": 384, "max_batched_tokens": 1536, "kv_mem_fraction": 0.85},
             "B200 max-throughput for R1 with FP16 KV cache (nvidia/DeepSeek-R1-FP4, trtllm-bench throughput --tp 8 "
             "--ep 8, enable_attention_dp, --max_batch_size 384 --max_num_tokens 1536 --kv_cache_free_gpu_mem_fraction "
             "0.85 --concurrency 3072)", "B200 max-throughput for R1 with FP16 KV cache",
             "NVFP4 weights (nvidia/DeepSeek-R1-FP4); experts by EP8, estimated as tensor-parallel experts; the "
             "simulation runs 3 rounds of the 3,072 users (9,216 requests), not the 49,152")]
    return [_row(id=f"trtllm-blog-deepseek-r1-{slug}-max-throughput-dpa-output_tps", engine="trtllm",
                 engine_version=None, gpu=gpu, weights=weights, kv_dtype="bf16", metric="output_tps", value=value,
                 input_len=1024, output_len=2048, concurrency=users, num_requests=requests, dp_attention=True,
                 engine_knobs=knobs, table=f"{section}: Total Output Throughput (tokens/sec) {value}", notes=notes,
                 source={"url": f"https://github.com/{repo}/blob/{commit}/{path}", "repo": repo, "path": path,
                         "commit": commit, "document": blog + run})
            for slug, gpu, weights, value, users, requests, knobs, run, section, notes in runs]


def main() -> None:
    about = ("Published serving runs of DeepSeek-R1(-0528) on 8x H200 (GPUStack performance lab; TensorRT-LLM's "
             "DeepSeek-R1 blog), built by tools/published_deepseek.py; nothing fitted on them")
    rows = entries() + trtllm_entries()
    OUT.write_text(json.dumps({"_about": about, "results": rows}, indent=1) + "\n")
    print(f"wrote {OUT} ({len(rows)} figures)")


if __name__ == "__main__":
    main()
