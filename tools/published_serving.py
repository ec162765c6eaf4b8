"""Write tests/data/published-serving.json: published serving results with their exact source and conditions.

Every entry below was read off the public document named in its source block (URL or repository + path + commit,
the table and the row); nothing is estimated here. Run `python3 tools/published_serving.py` to rewrite the JSON
(its `held_out` flags follow a fixed rule: every third entry in this list, counting from the second, is held out
of calibration). The list is the reviewable origin of the data; edit it, not the JSON.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "published-serving.json"

TRT_V1 = {"url": "https://github.com/NVIDIA/TensorRT-LLM/blob/00f37686aa854010d68bcbd0f4ab000221541ca6/docs/source/"
                 "performance/perf-overview.md", "repo": "NVIDIA/TensorRT-LLM",
          "path": "docs/source/performance/perf-overview.md", "commit": "00f37686aa854010d68bcbd0f4ab000221541ca6",
          "document": "TensorRT-LLM performance overview (v1.0 data, PyTorch backend, trtllm-bench throughput, "
                      "infinite request rate, Total Output Throughput)"}
TRT_V017 = {"url": "https://github.com/NVIDIA/TensorRT-LLM/blob/258c7540c03517def55d9a5aadfa9288af474e1b/docs/source/"
                   "performance/perf-overview.md", "repo": "NVIDIA/TensorRT-LLM",
            "path": "docs/source/performance/perf-overview.md", "commit": "258c7540c03517def55d9a5aadfa9288af474e1b",
            "document": "TensorRT-LLM performance overview (v0.17 data, in-flight batching, infinite request rate, "
                        "token throughput)"}
NIM = {"url": "https://docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance",
       "document": "NVIDIA NIM LLMs Benchmarking 1.0.0, Performance (AIPerf, fixed concurrency)"}
LLAMA_BENCH = {"url": "https://github.com/ggml-org/llama.cpp/blob/08d0baaca6745ecaec3a75cccf63b533646ead22/tools/"
                      "llama-bench/README.md", "repo": "ggml-org/llama.cpp", "path": "tools/llama-bench/README.md",
               "commit": "08d0baaca6745ecaec3a75cccf63b533646ead22",
               "document": "llama-bench README, CSV output example (build 8cf427ff, 5163; RTX 4080, Ryzen 7 7800X3D)"}
PR7676 = {"url": "https://github.com/ggml-org/llama.cpp/pull/7676", "repo": "ggml-org/llama.cpp",
          "document": "PR #7676 'CUDA: use tensor cores for MMQ', JohannesGaessler's table (column t/s cuda-ptx-mma-7, "
                      "the merged int8 tensor-core MMQ kernels)"}
PR15802 = {"url": "https://github.com/ggml-org/llama.cpp/pull/15802", "repo": "ggml-org/llama.cpp",
           "document": "PR #15802 'CUDA: fastdiv, launch bounds for mmvq + q8_1 quant', table column t/s master "
                       "(FlashAttention Yes; pp512 in micro-batches of the given size)"}
GPUSTACK = "https://github.com/gpustack/gpustack/blob/{commit}/docs/performance-lab/{path}"


def _gpustack(path: str, commit: str, document: str) -> dict[str, str]:
    return {"url": GPUSTACK.format(commit=commit, path=path), "repo": "gpustack/gpustack",
            "path": f"docs/performance-lab/{path}", "commit": commit, "document": document}


GS_8B_H100 = _gpustack("qwen3-8b/h100-latency.md", "1dbc3b8130da92d31539404545a1aff5c3992f8c",
                       "GPUStack performance lab, Optimizing Qwen3-8B Latency on NVIDIA H100 GPUs (vllm bench serve, "
                       "ShareGPT, 100 prompts, --max-concurrency 4, one H100 SXM)")
GS_14B_H100 = _gpustack("qwen3-14b/h100.md", "7ae332aaf05783e657560ef927c527b156e2536d",
                        "GPUStack performance lab, Optimizing Qwen3-14B Throughput on NVIDIA H100 GPUs (vllm bench "
                        "serve, ShareGPT, 1000 prompts at an infinite request rate, one H100 SXM)")
#: what GPUStack's Qwen3-14B A100 page leaves to assume
A100_ASSUMED = "the page says 'NVIDIA A100 GPUs'; the 80 GB SXM4 card is assumed (one GPU: no TP flag in the commands)"
GS_14B_A100 = _gpustack("qwen3-14b/a100.md", "10e9444a07c73556f2ef0d10d2b2766bbf54c9c0",
                        "GPUStack performance lab, Optimizing Qwen3-14B Throughput on NVIDIA A100 GPUs (vllm bench "
                        "serve, ShareGPT, 1000 prompts at an infinite request rate)")
PR15131 = {"url": "https://github.com/ggml-org/llama.cpp/pull/15131", "repo": "ggml-org/llama.cpp",
           "document": "PR #15131 'CUDA: GEMM for FP32/FP16/BF16 and ne11 <= 16', table column t/s master "
                       "(FlashAttention No; pp512 in micro-batches of the given size)"}


@dataclass(frozen=True)
class Result:
    """One published figure. metric: max_output_tps (output tok/s at an infinite request rate), output_tps,
    ttft_ms / itl_ms / tpot_ms (means as the client measured them, at a fixed concurrency, or at an infinite
    request rate where `concurrency` is None), pp_tps / tg_tps (llama-bench prompt / generation tok/s,
    one sequence; `ubatch` tokens per micro-batch)."""

    id: str
    model: str
    engine: str
    engine_version: str
    gpu: str
    gpus: int
    weights: str  # bf16 | fp16 | fp8 | fp4 | q4_0 | q4_k_m
    kv_dtype: str
    # max_output_tps | output_tps | ttft_ms | itl_ms | tpot_ms | pp_tps | tg_tps | kv_transfer_ms; a _p50 suffix
    # (ttft_ms_p50, tpot_ms_p50, itl_ms_p50): the median where a page gives medians, not means
    metric: str
    value: float
    input_len: int
    output_len: int
    tp: int = 1
    pp: int = 1
    concurrency: int | None = None  # None: infinite request rate (all requests queued), unless request_rate
    request_rate: float | None = None  # Poisson arrivals at this many requests/s (vllm bench serve --request-rate)
    num_requests: int | None = None
    ubatch: int | None = None
    lengths: str = "fixed"  # fixed | sharegpt-vllm (vLLM's benchmark sample: input_len / output_len its means)
    client_measured: bool = False  # TTFT / TPOT / throughput measured by a benchmark client (AIPerf, vllm bench)
    # speculative decoding: method, draft_model, draft_tokens, accept_length (mean tokens a verify step keeps, from
    # the run's own counts) and host_sampling_s (the run's host sampling time per sampled token, where it samples)
    speculative: dict[str, object] | None = None
    # disaggregated prefill/decode: prefill_instances, prefill_tp, decode_instances (tp: the decode pool's),
    # kv_link, and the engine knobs the run set (max_batched_tokens of the prefill instances, kv_mem_fraction)
    disaggregated: dict[str, object] | None = None
    # the run's host's front-end time per request (HTTP, tokenization, the first chunk streamed), where the same
    # source measured it apart from the rows (how: `notes`); the tool then takes it as `serve-check --calibration`
    # on that host would give it, in place of the engine profile's figure
    frontend_ms: float | None = None
    source: dict[str, str] = field(default_factory=dict)
    table: str = ""
    notes: str = ""


def trt_rows(model: str, gpu: str, tp: int, weights: str, col: str, rows: dict[tuple[int, int], float], *,
             src: dict[str, str], table: str, version: str) -> list[Result]:
    """One column of a TensorRT-LLM performance-overview table: trtllm-bench's maximum throughput at each
    (input, output) length, its request count the page's for that length."""
    n_req = {(128, 128): 30000, (128, 2048): 3000, (128, 4096): 1500, (1000, 2000): 1500, (2048, 128): 3000,
             (2048, 2048): 1500, (5000, 500): 1500, (1000, 1000): 3000, (500, 2000): 3000, (20000, 2000): 1000}
    out = []
    for (isl, osl), v in rows.items():
        out.append(Result(
            id=f"trtllm-{version}-{model}-{gpu.split()[0].lower()}-tp{tp}-{weights}-{isl}-{osl}", model=model,
            engine="trtllm", engine_version=version, gpu=gpu, gpus=tp, weights=weights,
            kv_dtype="fp8" if weights in ("fp8", "fp4") else weights, metric="max_output_tps", value=v, input_len=isl,
            output_len=osl, tp=tp, num_requests=n_req[(isl, osl)], source=src, table=f"{table}, column {col}",
            notes="ModelOpt checkpoint (KV cache quantized with the weights where FP8/FP4; assumed from the "
                  "checkpoints' hf_quant_config); kv_cache_free_gpu_mem_fraction 0.95 where it fit"))
    return out


def _bench_serve_row(model: str, gpu: str, engine: str, version: str, weights: str, src: dict[str, str], table: str,
                     metric: str, value: float, *, input_len: int, output_len: int, concurrency: int | None,
                     num_requests: int, kv_dtype: str = "bf16", notes: str = "") -> Result:
    """One figure of a GPUStack `vllm bench serve` result block on ShareGPT prompts."""
    load = f"c{concurrency}" if concurrency else "inf"
    return Result(
        id=f"gpustack-{engine}-{version}-{model}-{gpu.split()[0].lower()}-{weights}-sharegpt-{load}-{metric}",
        model=model, engine=engine, engine_version=version, gpu=gpu, gpus=1, weights=weights, kv_dtype=kv_dtype,
        metric=metric, value=value, input_len=input_len, output_len=output_len, concurrency=concurrency,
        num_requests=num_requests, lengths="sharegpt-vllm", client_measured=True, source=src, table=table,
        notes="ShareGPT prompts (vllm bench serve --dataset-name sharegpt, openai-chat backend); input_len and "
              "output_len are the run's means (total input / generated tokens over the requests): the tool "
              "draws ShareGPT-shaped lengths through vLLM's benchmark filter, scaled so the kept ones have those "
              "means. " + notes)


def _bench_serve(model: str, gpu: str, engine: str, version: str, weights: str, src: dict[str, str], table: str,
                 figures: tuple[float, float, float], **run: Any) -> list[Result]:
    """One `vllm bench serve` result block: mean TTFT, mean TPOT (ms) and output token throughput."""
    ttft, tpot, tps = figures
    return [_bench_serve_row(model, gpu, engine, version, weights, src, table, metric, v, **run)
            for metric, v in (("ttft_ms", ttft), ("tpot_ms", tpot),
                              ("output_tps" if run["concurrency"] else "max_output_tps", tps))]


def results() -> list[Result]:
    r: list[Result] = []
    r += trt_rows("llama-3.1-8b", "H100 SXM5 80GB", 1, "fp8", "H100 TP1 (FP8)", {
        (128, 128): 28312, (128, 2048): 22714, (128, 4096): 14325, (500, 2000): 17660, (1000, 1000): 15220,
        (1000, 2000): 13899, (2048, 128): 3450, (2048, 2048): 9305, (5000, 500): 3459, (20000, 2000): 1351},
        src=TRT_V1, table="Llama 3.1 8B", version="1.0")
    r += trt_rows("llama-3.1-8b", "H200 SXM 141GB", 1, "fp8", "H200 TP1 (FP8)", {
        (128, 128): 27911, (128, 2048): 26221, (128, 4096): 18027, (500, 2000): 20770, (1000, 1000): 17744,
        (1000, 2000): 16828, (2048, 128): 3538, (2048, 2048): 12194, (5000, 500): 3902, (20000, 2000): 1804},
        src=TRT_V1, table="Llama 3.1 8B", version="1.0")
    r += trt_rows("llama-3.3-70b", "H200 SXM 141GB", 1, "fp8", "H200 TP1 (FP8)", {
        (128, 128): 3803, (128, 2048): 4336, (1000, 1000): 2909, (2048, 128): 442, (5000, 500): 566},
        src=TRT_V1, table="Llama 3.3 70B", version="1.0")
    r += trt_rows("llama-3.3-70b", "H100 SXM5 80GB", 2, "fp8", "H100 TP2 (FP8)", {
        (128, 128): 6378, (128, 2048): 6651, (1000, 1000): 4205, (2048, 128): 762, (5000, 500): 898},
        src=TRT_V1, table="Llama 3.3 70B", version="1.0")
    r += trt_rows("llama-3.3-70b", "B200", 1, "fp4", "B200 TP1 (FP4)", {
        (128, 128): 11147, (128, 2048): 9922, (1000, 1000): 7007, (2048, 128): 1339},
        src=TRT_V1, table="Llama 3.3 70B", version="1.0")
    r += trt_rows("llama-3.1-8b", "L40S", 1, "fp8", "L40S (FP8)", {
        (128, 128): 9104.61, (128, 2048): 5365.81, (1000, 1000): 4054.71, (2048, 128): 1066.52},
        src=TRT_V017, table="Throughput (tokens / sec), LLaMA v3.1 8B, TP 1", version="0.17")
    r += trt_rows("llama-3.1-8b", "A100 SXM4 80GB", 1, "fp16", "A100-SXM4-80GB (FP16)", {
        (128, 128): 6627.27, (128, 2048): 5255.99, (1000, 1000): 3786.83, (2048, 128): 799.61},
        src=TRT_V017, table="Throughput (tokens / sec), LLaMA v3.1 8B, TP 1", version="0.17")
    # NIM: Llama-3.3-70b-instruct, NIM 1.8.0, 2 x H100 80G, fp8 TP2, 5000 input / 500 output tokens
    nim = {1: (406.77, 18.58, 51.67), 5: (546.7, 21.83, 218.48), 25: (688.69, 38.75, 623.4),
           50: (834.51, 59.73, 814.37)}
    for c, (ttft, itl, tps) in nim.items():
        for metric, v in (("ttft_ms", ttft), ("itl_ms", itl), ("output_tps", tps)):
            r.append(Result(
                id=f"nim-1.8.0-llama-3.3-70b-h100-tp2-fp8-5000-500-c{c}-{metric}", model="llama-3.3-70b",
                engine="trtllm", engine_version="NIM 1.8.0 (TensorRT-LLM profile assumed)", gpu="H100 SXM5 80GB",
                gpus=2, weights="fp8", kv_dtype="fp8", metric=metric, value=v, input_len=5000, output_len=500, tp=2,
                concurrency=c, client_measured=True, source=NIM,
                table="Llama-3.3-70b-instruct Results, Version 1.8.0, 2 x H100 80G, fp8 TP2,"
                " 5000 Input Tokens / 500 Output Tokens", notes="mean TTFT, mean ITL, total output tokens/s"))
    r += [
        Result(id="llamacpp-5163-qwen2.5-7b-q4_k_m-rtx4080-pp512", model="qwen2.5-7b", engine="llamacpp",
               engine_version="b5163 (8cf427ff)", gpu="GeForce RTX 4080", gpus=1, weights="q4_k_m", kv_dtype="fp16",
               metric="pp_tps", value=7285.676949, input_len=512, output_len=0, ubatch=512, source=LLAMA_BENCH,
               table="CSV example, n_prompt 512",
               notes="n_batch 2048, n_ubatch 512, flash_attn auto, all layers on GPU"),
        Result(id="llamacpp-5163-qwen2.5-7b-q4_k_m-rtx4080-tg128", model="qwen2.5-7b", engine="llamacpp",
               engine_version="b5163 (8cf427ff)", gpu="GeForce RTX 4080", gpus=1, weights="q4_k_m", kv_dtype="fp16",
               metric="tg_tps", value=119.915244, input_len=0, output_len=128, ubatch=1, source=LLAMA_BENCH,
               table="CSV example, n_gen 128", notes="batch 1 generation"),
        Result(id="llamacpp-pr7676-llama-3-8b-q4_0-rtx4090-pp512-ub512", model="llama-3-8b", engine="llamacpp",
               engine_version="PR #7676 branch cuda-ptx-mma-7 (merged June 2024)", gpu="GeForce RTX 4090", gpus=1,
               weights="q4_0", kv_dtype="fp16", metric="pp_tps", value=10358.75, input_len=512, output_len=0,
               ubatch=512, source=PR7676, table="RTX 4090, llama 8B Q4_0, microbatch 512, pp512"),
        Result(id="llamacpp-pr15802-llama-3-8b-q4_0-rtx3090-pp512-ub1", model="llama-3-8b", engine="llamacpp",
               engine_version="master before PR #15802 (Sept 2025)", gpu="GeForce RTX 3090", gpus=1, weights="q4_0",
               kv_dtype="fp16", metric="pp_tps", value=155.02, input_len=512, output_len=0, ubatch=1, source=PR15802,
               table="RTX 3090, llama 8B Q4_0, FA Yes, microbatch 1, pp512",
               notes="micro-batches of one token: 512 batch-1 forward passes (decode-like)"),
        Result(id="llamacpp-pr15802-llama-3-8b-q4_0-rtx3090-pp512-ub8", model="llama-3-8b", engine="llamacpp",
               engine_version="master before PR #15802 (Sept 2025)", gpu="GeForce RTX 3090", gpus=1, weights="q4_0",
               kv_dtype="fp16", metric="pp_tps", value=570.67, input_len=512, output_len=0, ubatch=8, source=PR15802,
               table="RTX 3090, llama 8B Q4_0, FA Yes, microbatch 8, pp512"),
        Result(id="llamacpp-pr15131-llama-3-8b-q4_0-rtx4090-pp512-ub16", model="llama-3-8b", engine="llamacpp",
               engine_version="master before PR #15131 (Aug 2025)", gpu="GeForce RTX 4090", gpus=1, weights="q4_0",
               kv_dtype="fp16", metric="pp_tps", value=1891.88, input_len=512, output_len=0, ubatch=16,
               source=PR15131, table="RTX 4090, llama 8B Q4_0, FA No, microbatch 16, pp512"),
    ]
    # appended: the held-out rule keeps the earlier rows' flags; the k-th block of three metrics rotated by k, so
    # that the rule (every third row) holds out each metric in turn
    r += _rotated(_online_rows())
    r += _pipeline_rows()  # appended after the online rows: the held-out rule keeps their flags
    r += _speculative_rows()
    r += _disaggregated_rows()  # appended: the held-out rule keeps the earlier rows' flags
    r += _rotated(_concurrency_rows())  # appended, for the same reason
    r += _rotated(_eagle_rows())  # appended
    r += _rotated(_rtx5090_rate_rows())  # appended: cards beyond the H100 and A100, medians
    r += _rotated(_l4_concurrency_rows())  # appended
    r += _rtx5090_cold_rows()  # appended
    r += _burst_median_rows()  # appended last
    return r


def _burst_median_rows() -> list[Result]:
    """The median TPOT of each GPUStack Qwen3-14B burst already in the set (the same result blocks as their mean
    TTFT, mean TPOT and throughput in _online_rows): what `estimate` reports first (P50), and what a host's time per
    sequence shows, where the mean carries a tail of seconds-long stalls of short answers (docs/serving.md)."""
    runs = [("H100 SXM5 80GB", "vllm", "0.11.0", "bf16", GS_14B_H100, "1. Choosing the Inference Engine, vLLM", 117.46),
            ("H100 SXM5 80GB", "sglang", "0.5.5.post1", "bf16", GS_14B_H100, "1. Choosing the Inference Engine, SGLang",
             118.67),
            ("H100 SXM5 80GB", "trtllm", "1.2.0rc1", "bf16", GS_14B_H100,
             "1. Choosing the Inference Engine, TensorRT-LLM", 107.16),
            ("H100 SXM5 80GB", "sglang", "0.5.5.post1", "fp8", GS_14B_H100,
             "2. Quantization in SGLang, FP8 (Qwen/Qwen3-14B-FP8)", 94.53),
            ("A100 SXM4 80GB", "vllm", "0.11.0", "bf16", GS_14B_A100, "1. Choosing the Inference Engine, vLLM", 106.15),
            ("A100 SXM4 80GB", "sglang", "0.5.5.post1", "bf16", GS_14B_A100, "1. Choosing the Inference Engine, SGLang",
             185.18),
            ("A100 SXM4 80GB", "trtllm", "1.2.0rc1", "bf16", GS_14B_A100,
             "1. Choosing the Inference Engine, TensorRT-LLM", 166.55),
            ("A100 SXM4 80GB", "vllm", "0.11.0", "awq", GS_14B_A100,
             "2. Quantization in TensorRT-LLM/vLLM, vLLM AWQ (Qwen/Qwen3-14B-AWQ)", 120.87)]
    return [_bench_serve_row("qwen3-14b", gpu, engine, version, weights, src, f"{table}: Median TPOT (ms)",
                             "tpot_ms_p50", median, input_len=217, output_len=202, concurrency=None,
                             num_requests=1000, notes="the median of the same block's per-request TPOTs"
                             + (f"; {A100_ASSUMED}" if gpu.startswith("A100") else ""))
            for gpu, engine, version, weights, src, table, median in runs]


OPENINFER_5090 = {"url": "https://github.com/openinfer-project/openinfer/blob/6de4908130fd8a121a54ec09f510f21e5934f584/"
                         "docs/benchmarks/qwen3-4b-serving-vllm-rtx5090.md", "repo": "openinfer-project/openinfer",
                  "path": "docs/benchmarks/qwen3-4b-serving-vllm-rtx5090.md",
                  "commit": "6de4908130fd8a121a54ec09f510f21e5934f584",
                  "document": "openinfer, 'Qwen3-4B serving: openinfer vs vLLM on RTX 5090' (created 2026-06-10), "
                              "Test 1, QPS sweep, Poisson arrivals, table 'vLLM 0.22.1'"}
#: the RTX 5090 host's front-end per request under vLLM 0.22.1: the same page's warm (prefix-cache hit) TTFT of a
#: 256-token prompt, 13.3 ms, is the front-end plus one step of one token; less that step, the decode step of one
#: sequence the page measured (TPOT p50 6.65 ms at 1 request/s): 6.65 ms
OPENINFER_5090_FRONTEND_MS = round(13.3 - 6.65, 2)
OPENINFER_FRONTEND_NOTE = (f"front-end of this host {OPENINFER_5090_FRONTEND_MS:g} ms: the page's Test 2 warm "
                           "(prefix-cache hit) TTFT of 256 tokens 13.3 ms less one decode step of one sequence "
                           "(Test 1 TPOT p50 at 1 request/s, 6.65 ms)")
WMX_L4 = {"url": "https://ai.wmx.dev/benchmarks",
          "document": "ai.wmx.dev, 'Benchmark results' of serving/raw-vllm (commit 8e78aaa; read 2026-12-05), "
                      "'Results: concurrency sweep'"}


def _rtx5090_rate_rows() -> list[Result]:
    """vLLM 0.22.1 (default engine configuration) serving Qwen3-4B BF16 on one GeForce RTX 5090, `vllm bench serve`
    on the same host: random prompts of 1,024 tokens, exactly 128 generated (--ignore-eos), Poisson arrivals at
    1-16 requests/s (seed 42), 60 x the rate prompts; medians as the page gives them (TTFT p50, TPOT p50) and the
    output tokens/s. The two loads past the page's knee (12 and 16/s) are kept: their TTFT is queueing."""
    runs = ((1, 57.8, 6.65, 126), (2, 58.8, 7.17, 252), (4, 61.8, 8.57, 504), (8, 68.1, 11.82, 1008),
            (10, 75.7, 13.99, 1254), (12, 119.5, 19.41, 1501), (16, 3933.9, 76.21, 1690))
    out = []
    for rate, ttft, tpot, tps in runs:
        for metric, value in (("ttft_ms_p50", ttft), ("tpot_ms_p50", tpot), ("output_tps", tps)):
            out.append(Result(
                id=f"openinfer-vllm-0.22.1-qwen3-4b-rtx5090-bf16-1024-128-qps{rate}-{metric}", model="qwen3-4b",
                engine="vllm", engine_version="0.22.1", gpu="GeForce RTX 5090", gpus=1, weights="bf16",
                kv_dtype="bf16", metric=metric, value=value, input_len=1024, output_len=128, request_rate=rate,
                num_requests=60 * rate, client_measured=True, source=OPENINFER_5090,
                table=f"vLLM 0.22.1, QPS {rate}: out tok/s {tps}, TTFT p50 {ttft} ms, TPOT p50 {tpot} ms",
                frontend_ms=OPENINFER_5090_FRONTEND_MS,
                notes="vllm serve --max-model-len 8192 --gpu-memory-utilization 0.9 --no-enable-prefix-caching; "
                      "random dataset, --ignore-eos --temperature 0, --burstiness 1.0, after an unrecorded "
                      "8-request warm-up; " + OPENINFER_FRONTEND_NOTE))
    return out


def _rtx5090_cold_rows() -> list[Result]:
    """The same page's Test 2, vLLM 0.22.1: one request at a time, a fixed random prompt of each length sent once
    cold (max_tokens 1; the prefix cache on but empty for it), its TTFT: the front-end and the prompt's prefill
    alone, 512-16,384 tokens. The 256-token prompt, the sweep's first request (41.5 ms, longer than the 512-token
    one's 28.5 ms; openinfer's engine shows the same on the same host, 34.4 and 23.7 ms), is left out: a first
    request's one-time cost, which no other row measures."""
    cold = ((512, 28.5), (1024, 50.3), (2048, 95.2), (4096, 197.9), (8192, 449.6), (16384, 1106.8))
    src = {**OPENINFER_5090, "document": OPENINFER_5090["document"].replace(
        "Test 1, QPS sweep, Poisson arrivals, table 'vLLM 0.22.1'",
        "Test 2, warm (prefix-cache-hit) TTFT vs input length, table 'vLLM 0.22.1', column Cold TTFT")}
    return [Result(id=f"openinfer-vllm-0.22.1-qwen3-4b-rtx5090-bf16-cold-{isl}-ttft_ms", model="qwen3-4b",
                   engine="vllm", engine_version="0.22.1", gpu="GeForce RTX 5090", gpus=1, weights="bf16",
                   kv_dtype="bf16", metric="ttft_ms", value=ttft, input_len=isl, output_len=1, concurrency=1,
                   num_requests=1, client_measured=True, source=src, frontend_ms=OPENINFER_5090_FRONTEND_MS,
                   table=f"vLLM 0.22.1, input len {isl}: Cold TTFT {ttft} ms",
                   notes="vllm serve --max-model-len 20480 (prefix cache on, the default); "
                         "tools/bench/warm_ttft_sweep.py: one request at a time, max_tokens 1, each stream drained "
                         "to [DONE] before the next; one cold sample per length; " + OPENINFER_FRONTEND_NOTE)
            for isl, ttft in cold]


def _l4_concurrency_rows() -> list[Result]:
    """vLLM 0.23.0 (V1 engine) serving Qwen2.5-0.5B-Instruct BF16 on one L4 (GKE g2-standard-4), `vllm bench serve`
    closed loop (--request-rate inf) at 1-32 users: 256 input and exactly 128 output tokens (--ignore-eos, seed
    42); medians as the page gives them (TTFT p50, ITL p50: the median gap between streamed tokens) and the output
    tokens/s. The page does not give the prompt count (vllm bench serve's default is 1,000)."""
    runs = ((1, 27.0, 5.1, 168), (2, 37.8, 5.2, 367), (4, 50.1, 5.3, 698), (8, 60.9, 5.5, 1312),
            (16, 103.8, 6.0, 2277), (32, 135.3, 7.1, 3773))
    out = []
    for users, ttft, itl, tps in runs:
        for metric, value in (("ttft_ms_p50", ttft), ("itl_ms_p50", itl), ("output_tps", tps)):
            out.append(Result(
                id=f"wmx-vllm-0.23.0-qwen2.5-0.5b-l4-bf16-256-128-c{users}-{metric}", model="qwen2.5-0.5b",
                engine="vllm", engine_version="0.23.0", gpu="L4", gpus=1, weights="bf16", kv_dtype="bf16",
                metric=metric, value=value, input_len=256, output_len=128, concurrency=users,
                client_measured=True, source=WMX_L4,
                table=f"concurrency {users}: out tok/s {tps}, TTFT p50 {ttft} ms, ITL p50 {itl} ms",
                notes="vllm serve --gpu-memory-utilization 0.6 --max-model-len 8192 (KV cache use peaked at "
                      "1.1 %, so the 0.6 does not bind); prompt count not stated"))
    return out


def _eagle_rows() -> list[Result]:
    """The same page's optimized configuration at 1, 2, 4 and 8 users ("Optimized benchmark results"): SGLang
    0.5.3.post3, Qwen3-8B-FP8 with an EAGLE3 draft (Tengyunw/qwen3_8b_eagle3), 4 draft steps of 4 candidates, 16
    tokens verified a step. The mean accepted length is the run's own: mean ITL / mean TPOT (a verify step streams its
    accepted tokens as one chunk), an input as `--spec-accept` takes it; so TPOT (ITL / that length) is not a check
    of its own, and the rows are TTFT, mean ITL (the verify step's period) and output throughput."""
    src = {**GS_8B_H100, "document": GS_8B_H100["document"].replace("--max-concurrency 4",
                                                                    "--max-concurrency 1, 2, 4, 8")}
    runs = ((1, 34.70, 8.74, 2.67, 335.15), (2, 39.41, 9.69, 3.04, 586.35), (4, 39.93, 10.54, 3.34, 1046.22),
            (8, 42.27, 13.06, 4.82, 1638.82))
    out = []
    for users, ttft, itl, tpot, tps in runs:
        spec = {"method": "eagle", "draft_tokens": 4, "topk": 4, "verify_tokens": 16,
                "accept_length": round(itl / tpot, 3)}
        for metric, value in (("ttft_ms", ttft), ("itl_ms", itl), ("output_tps", tps)):
            out.append(Result(
                id=f"gpustack-sglang-0.5.3.post3-qwen3-8b-h100-fp8-eagle3-sharegpt-c{users}-{metric}",
                model="qwen3-8b", engine="sglang", engine_version="0.5.3.post3", gpu="H100 SXM5 80GB", gpus=1,
                weights="fp8", kv_dtype="bf16", metric=metric, value=value, input_len=233, output_len=221,
                concurrency=users, num_requests=100, lengths="sharegpt-vllm", client_measured=True, source=src,
                table=f"Other Benchmark Cases, Optimized benchmark results (sglang.launch_server --model "
                      f"Qwen/Qwen3-8B-FP8 --speculative-algorithm EAGLE3 --speculative-draft-model-path "
                      f"Tengyunw/qwen3_8b_eagle3 --speculative-num-steps 4 --speculative-eagle-topk 4 "
                      f"--speculative-num-draft-tokens 16), BS={users}",
                speculative=spec,
                notes=f"accept_length {spec['accept_length']} = mean ITL {itl} ms / mean TPOT {tpot} ms; "
                      "ShareGPT prompts (vllm bench serve --dataset-name sharegpt), input_len and output_len the "
                      "run's means; KV cache left at the engine's 16-bit default"))
    return out


def _rotated(rows: list[Result]) -> list[Result]:
    """Blocks of three metrics, the k-th rotated by k, so that the held-out rule (every third row) holds out each
    metric in turn."""
    return [row for k in range(0, len(rows), 3) for row in (rows[k:k + 3][(k // 3) % 3:]
                                                          + rows[k:k + 3][:(k // 3) % 3])]


def _concurrency_rows() -> list[Result]:
    """The same page's vLLM baseline at 1, 2 and 8 users ("Other Benchmark Cases", "Baseline benchmark results":
    BS=1, BS=2, BS=8; BS=4 is the run of section 1 already above): one load per block of three metrics."""
    src = {**GS_8B_H100, "document": GS_8B_H100["document"].replace("--max-concurrency 4", "--max-concurrency 1, 2, 8")}
    r: list[Result] = []
    for users, figures in ((1, (59.01, 7.28, 132.86)), (2, (63.78, 7.37, 257.19)), (8, (74.57, 7.71, 917.28))):
        r += _bench_serve("qwen3-8b", "H100 SXM5 80GB", "vllm", "0.11.0", "bf16", src,
                          f"Other Benchmark Cases, Baseline benchmark results (vllm serve Qwen/Qwen3-8B), BS={users}",
                          figures, input_len=233, output_len=221, concurrency=users, num_requests=100)
    return r


DYNAMO402 = {"url": "https://github.com/ai-dynamo/dynamo/issues/402", "repo": "ai-dynamo/dynamo",
             "document": "ai-dynamo/dynamo issue #402 'Llama 70B 1 Node Example', piotrm-nvidia's comment of "
                         "2025-04-01 (GenAI-Perf LLM Metrics table, artifacts concurrency_32); configuration as in "
                         "examples/llm/benchmarks/disagg.yaml and README.md of the same repository (8x H100 80GB "
                         "HBM3 SXM, NVLink 4)"}
LMCACHE_PD = {"url": "https://github.com/LMCache/lmcache.github.io/blob/1af0eb234814b210df77a1431520cfc486d06acc/"
                     "_posts/2025-04-29-pdbench.md", "repo": "LMCache/lmcache.github.io",
              "path": "_posts/2025-04-29-pdbench.md", "commit": "1af0eb234814b210df77a1431520cfc486d06acc",
              "document": "LMCache blog 2025-04-29 'Bringing State-Of-The-Art PD Speed to vLLM v1' (Llama 3.1 8B "
                          "Instruct, H100s joined by NVLink), section 'Why Page Size Matters'"}


def _disaggregated_rows() -> list[Result]:
    """Disaggregated prefill/decode (issue 29 part 4): NVIDIA Dynamo 0.1 (vLLM 0.7.2 with its disaggregation
    patch, V0 engine) serving DeepSeek-R1-Distill-Llama-70B FP8-dynamic (Llama 3.3 70B's architecture) on one
    8x H100 node: 4 prefill workers of one GPU each, 1 decode worker of TP4, KV cache over NVLink (NIXL); GenAI-Perf,
    32 concurrent clients, 128 requests of 3,000 input and exactly 150 output tokens. And the KV transfer time
    Dynamo takes for a 7,500-token prompt of Llama 3.1 8B between two H100s (the figure KV_TRANSFER_EFFICIENCY is
    fitted to)."""
    dis = {"prefill_instances": 4, "prefill_tp": 1, "decode_instances": 1, "kv_link": "nvlink",
           "max_batched_tokens": 3500, "kv_mem_fraction": 0.95}
    common = dict(model="llama-3.3-70b", engine="vllm@0.7",
                  engine_version="0.7.2 with NVIDIA Dynamo 0.1's disaggregation patch (V0 engine)",
                  gpu="H100 SXM5 80GB", gpus=8, weights="fp8", kv_dtype="bf16", input_len=3000, output_len=150,
                  tp=4, concurrency=32, num_requests=128, client_measured=True, disaggregated=dis, source=DYNAMO402,
                  notes="neuralmagic/DeepSeek-R1-Distill-Llama-70B-FP8-dynamic (FP8 weights, KV cache at vLLM's "
                        "16-bit default); block-size 128, max-model-len 3500, max-num-batched-tokens 3500, "
                        "gpu-memory-utilization 0.95, remote prefill for every request (conditional-disagg false); "
                        "tp is the decode worker's; means over 128 requests of 32 clients (no warm-up excluded)")
    table = "GenAI-Perf | LLM Metrics, avg column"
    out = [
        Result(id="dynamo-0.1-llama-3.3-70b-fp8-h100-4p1-1d4-3000-150-c32-ttft_ms", metric="ttft_ms", value=1385.48,
               table=f"{table}: Time To First Token (ms) 1,385.48", **common),  # type: ignore[arg-type]
        Result(id="dynamo-0.1-llama-3.3-70b-fp8-h100-4p1-1d4-3000-150-c32-itl_ms", metric="itl_ms", value=19.42,
               table=f"{table}: Inter Token Latency (ms) 19.42", **common),  # type: ignore[arg-type]
        Result(id="dynamo-0.1-llama-3.3-70b-fp8-h100-4p1-1d4-3000-150-c32-output_tps", metric="output_tps",
               value=1023.48, table=f"{table}: Output Token Throughput (per sec) 1,023.48",
               **common),  # type: ignore[arg-type]
        Result(id="lmcache-blog-dynamo-kv-transfer-llama-3.1-8b-h100-nvlink-7500", model="llama-3.1-8b",
               engine="vllm", engine_version="NVIDIA Dynamo (April 2025), vLLM page size 128", gpu="H100 SXM5 80GB",
               gpus=2, weights="bf16", kv_dtype="bf16", metric="kv_transfer_ms", value=8.0, input_len=7500,
               output_len=0, disaggregated={"prefill_instances": 1, "prefill_tp": 1, "decode_instances": 1,
                                            "kv_link": "nvlink"},
               source=LMCACHE_PD, table="Dynamo's delay to transfer the KV cache of a 7500-token input through "
                                        "NVLink: 8ms, if page size is 128 tokens",
               notes="the KV cache of one prompt, every layer (983 MB in bf16), one H100 to another; with 16-token "
                     "pages the same transfer took 20 ms (not modelled: the tool has no per-page cost)"),
    ]
    return out


ISSUE5877 = {"url": "https://github.com/ggml-org/llama.cpp/issues/5877", "repo": "ggml-org/llama.cpp",
             "document": "llama.cpp issue #5877 'Support speculative decoding in server example', oxfighterjet's "
                         "comment of 2024-11-19 (RTX 3060 12GB, llama-cli and llama-speculative, -ngl 33 / -ngld 17)"}


def _speculative_rows() -> list[Result]:
    """Speculative decoding (issue 29 part 4): one sequence on an RTX 3060 12GB, Llama 3.1 8B Q8_0, without and
    with a Llama 3.2 1B Q8_0 draft (--draft 5). The plain run's host sampling, 601.84 ms for 913 sampled tokens
    (0.66 ms each), is the sampler chain both runs pay on the host."""
    sampling = 601.84e-3 / 913
    common = dict(model="llama-3.1-8b", engine="llamacpp", engine_version="b4100s (November 2024)",
                  gpu="GeForce RTX 3060 12GB", gpus=1, weights="q8_0", kv_dtype="fp16", metric="tg_tps",
                  input_len=14, ubatch=1, source=ISSUE5877)
    return [
        Result(id="llamacpp-issue5877-llama-3.1-8b-q8_0-rtx3060-tg", value=32.49, output_len=898,
               table="llama-cli: eval time 27636.04 ms / 898 runs (32.49 tokens per second)",
               speculative={"method": None, "host_sampling_s": sampling},
               notes="batch 1 generation with llama-cli's default sampler chain on the host", **common),
        Result(id="llamacpp-issue5877-llama-3.1-8b-q8_0-rtx3060-spec-draft-1b-tg", value=55.473, output_len=673,
               table="llama-speculative: decoded 673 tokens in 12.132 seconds, speed 55.473 t/s; n_draft 5, "
                     "n_drafted 730, n_accept 526 (accept 72.055 %)",
               speculative={"method": "draft", "draft_model": "llama-3.2-1b", "draft_tokens": 5,
                            "accept_length": round(673 / (673 - 526), 3), "host_sampling_s": sampling},
               notes="accept_length = tokens predicted / verify steps = 673 / (673 - 526): each verify step keeps "
                     "its accepted drafts and the target's own token; the draft and the target sample on the host "
                     "(k drafted + accept_length kept tokens a step)", **common),
    ]


def _pipeline_rows() -> list[Result]:
    """Pipeline parallelism as it runs (issue 29 part 3): TensorRT-LLM v1.0's RTX PRO 6000 Blackwell Server Edition
    table of Llama 3.3 70B FP4 on 1, 2, 4 and 8 cards as TP1 x PP1, PP2, PP4, PP8 (PCIe cards: the stages send over
    PCIe). 1000/1000 on PP8 is 4.6x the one card's throughput."""
    cols = (1, 2, 4, 8)
    table = {(128, 128): (3264, 6172, 9641, 11881), (128, 2048): (2422, 4993, 7922, 9833),
             (128, 4096): (1349, 2893, 4978, 7352), (500, 2000): (1856, 4114, 6939, 9435),
             (1000, 1000): (1787, 3707, 5961, 8166), (1000, 2000): (1594, 2993, 5274, 6943),
             (2048, 128): (393, 813, 1511, 2495), (2048, 2048): (1074, 2336, 3870, 6078),
             (5000, 500): (401, 812, 1511, 2491), (20000, 2000): (142, 319, 630, 1148)}
    n_req = {(128, 128): 30000, (128, 2048): 3000, (128, 4096): 1500, (1000, 2000): 1500, (2048, 128): 3000,
             (2048, 2048): 1500, (5000, 500): 1500, (1000, 1000): 3000, (500, 2000): 3000, (20000, 2000): 1000}
    out = []
    for (isl, osl), values in table.items():
        for pp, v in zip(cols, values, strict=True):
            out.append(Result(
                id=f"trtllm-1.0-llama-3.3-70b-rtxpro6000-tp1-pp{pp}-fp4-{isl}-{osl}", model="llama-3.3-70b",
                engine="trtllm", engine_version="1.0", gpu="RTX PRO 6000 Blackwell Server Edition", gpus=pp,
                weights="fp4", kv_dtype="fp8", metric="max_output_tps", value=v, input_len=isl, output_len=osl,
                tp=1, pp=pp, num_requests=n_req[(isl, osl)], source=TRT_V1,
                table=f"Llama 3.3 70B, RTX 6000 Pro Blackwell Server Edition table, column {pp} GPUs TP1,PP{pp} (FP4)",
                notes="trtllm-bench --tp 1 --pp N, nvidia/Llama-3.3-70B-Instruct-FP4 (KV cache FP8 assumed from the "
                      "checkpoint's hf_quant_config); the stages exchange hidden states over PCIe (no NVLink on "
                      "this card)"))
    return out


def _online_rows() -> list[Result]:
    """Online-serving results with TTFT and TPOT as the client measured them (added for issue 29)."""
    r: list[Result] = []
    # GPUStack performance lab: `vllm bench serve` result blocks (mean TTFT, mean TPOT, output token throughput)
    c4 = dict(input_len=233, output_len=221, concurrency=4, num_requests=100)  # 23260 / 22061 tokens, 100 requests
    r += _bench_serve("qwen3-8b", "H100 SXM5 80GB", "vllm", "0.11.0", "bf16", GS_8B_H100,
                      "1. Choosing the Inference Engine, vLLM (vllm serve Qwen/Qwen3-8B)", (64.00, 7.38, 496.88), **c4)
    r += _bench_serve("qwen3-8b", "H100 SXM5 80GB", "sglang", "0.5.3.post3", "bf16", GS_8B_H100,
                      "1. Choosing the Inference Engine, SGLang (sglang.launch_server --model-path Qwen/Qwen3-8B)",
                      (27.70, 7.19, 525.59), **c4)
    r += _bench_serve("qwen3-8b", "H100 SXM5 80GB", "trtllm", "1.2.0rc1", "bf16", GS_8B_H100,
                      "1. Choosing the Inference Engine, TensorRT-LLM (trtllm-serve Qwen/Qwen3-8B)",
                      (51.61, 7.67, 487.38), **c4)
    r += _bench_serve("qwen3-8b", "H100 SXM5 80GB", "sglang", "0.5.3.post3", "fp8", GS_8B_H100,
                      "3. Quantization (sglang.launch_server --model-path Qwen/Qwen3-8B-FP8)", (39.66, 5.65, 657.83),
                      notes="Qwen3-8B-FP8: block-scaled FP8 weights, KV cache left at the engine's 16-bit default",
                      **c4)
    inf = dict(input_len=217, output_len=202, concurrency=None, num_requests=1000)  # 217393 / ~201600 tokens
    r += _bench_serve("qwen3-14b", "H100 SXM5 80GB", "vllm", "0.11.0", "bf16", GS_14B_H100,
                      "1. Choosing the Inference Engine, vLLM (vllm serve Qwen/Qwen3-14B)",
                      (22141.21, 226.03, 3173.92), **inf)
    r += _bench_serve("qwen3-14b", "H100 SXM5 80GB", "sglang", "0.5.5.post1", "bf16", GS_14B_H100,
                      "1. Choosing the Inference Engine, SGLang", (9230.85, 235.33, 4043.89), **inf)
    r += _bench_serve("qwen3-14b", "H100 SXM5 80GB", "trtllm", "1.2.0rc1", "bf16", GS_14B_H100,
                      "1. Choosing the Inference Engine, TensorRT-LLM", (10230.91, 161.58, 4000.99), **inf)
    r += _bench_serve("qwen3-14b", "H100 SXM5 80GB", "sglang", "0.5.5.post1", "fp8", GS_14B_H100,
                      "2. Quantization in SGLang, FP8 (Qwen/Qwen3-14B-FP8)", (7320.60, 251.67, 5019.64), **inf)
    a100 = A100_ASSUMED
    r += _bench_serve("qwen3-14b", "A100 SXM4 80GB", "vllm", "0.11.0", "bf16", GS_14B_A100,
                      "1. Choosing the Inference Engine, vLLM", (41875.09, 114.34, 1887.31), notes=a100, **inf)
    r += _bench_serve("qwen3-14b", "A100 SXM4 80GB", "sglang", "0.5.5.post1", "bf16", GS_14B_A100,
                      "1. Choosing the Inference Engine, SGLang", (20365.34, 364.93, 2542.06), notes=a100, **inf)
    r += _bench_serve("qwen3-14b", "A100 SXM4 80GB", "trtllm", "1.2.0rc1", "bf16", GS_14B_A100,
                      "1. Choosing the Inference Engine, TensorRT-LLM", (15258.26, 261.77, 2770.99), notes=a100, **inf)
    r += _bench_serve("qwen3-14b", "A100 SXM4 80GB", "vllm", "0.11.0", "awq", GS_14B_A100,
                      "2. Quantization in TensorRT-LLM/vLLM, vLLM AWQ (Qwen/Qwen3-14B-AWQ)",
                      (47136.93, 129.77, 1801.74), notes=a100, **inf)
    return r


def build() -> dict[str, object]:
    rows = []
    for i, x in enumerate(results()):
        d = asdict(x)
        d["held_out"] = i % 3 == 1
        rows.append(d)
    ids = [d["id"] for d in rows]
    if len(ids) != len(set(ids)):
        raise SystemExit("duplicate ids")
    return {"_about": "Published serving results (TensorRT-LLM performance overview, NVIDIA NIM benchmarks, llama.cpp "
                      "llama-bench) with source and conditions; written by tools/published_serving.py, collected "
                      "2026-11-24. held_out: every third entry, not used to calibrate the engine profiles.",
            "results": rows}


if __name__ == "__main__":
    OUT.write_text(json.dumps(build(), indent=1) + "\n")
    print(f"wrote {OUT} ({len(build()['results'])} results)")  # type: ignore[arg-type]
