"""Serving step costs measured on the GPU machine, for the serving estimator's GPU check (issue "Serving as
engines run it"). No engine (vLLM, SGLang, TensorRT-LLM) is on the machine, so this measures what their step
cost model stands for with PyTorch's own kernels (cuBLAS GEMMs, SDPA FlashAttention), random weights, no
downloads:

* prefill of T tokens (batch 1, only the last position's logits, as engines compute them);
* one decode step of B sequences at a context of C tokens;
each as the sum of CUDA kernel times over the step (torch.profiler: the GPU's busy time, what an engine with
CUDA graphs and no host gaps pays) and as wall time with CUDA events (eager: host dispatch included);
* Hugging Face generate() end to end (batch B, prompt P, N new tokens): TTFT (max_new_tokens=1) and the time
per output token after it: what `--engine hf` estimates.

Writes $OUT/serving-check.json. Run on the GPU machine from the repository root:
  python3 lab/device/serving_check.py
"""

from __future__ import annotations

import json
import os
import statistics
import time

import torch
from torch.profiler import ProfilerActivity, profile

OUT = os.environ.get("OUT", "/tmp")
MODELS = {
    "llama-3.1-8b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
                         num_key_value_heads=8, vocab_size=128256, rope_theta=500000.0, max_position_embeddings=16384,
                         tie_word_embeddings=False),
    "qwen2.5-0.5b": dict(hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
                         num_key_value_heads=2, vocab_size=151936, rope_theta=1000000.0, max_position_embeddings=16384,
                         tie_word_embeddings=True),
}
PREFILL_TOKENS = (128, 512, 2048, 8192)
DECODE = ((1, 1024), (8, 1024), (32, 1024), (64, 1024), (32, 4096))
GENERATE = ((1, 1000, 200), (8, 1000, 200))


def build(name: str):
    from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

    llama = name.startswith("llama")
    cfg_cls, model_cls = (LlamaConfig, LlamaForCausalLM) if llama else (Qwen2Config, Qwen2ForCausalLM)
    cfg = cfg_cls(**MODELS[name], torch_dtype="bfloat16")
    cfg._attn_implementation = "sdpa"
    torch.set_default_dtype(torch.bfloat16)  # built in bf16 on the GPU: no fp32 copy of 8B weights first
    try:
        with torch.device("cuda"):
            model = model_cls(cfg)
    finally:
        torch.set_default_dtype(torch.float32)
    return model.eval(), cfg


def kernel_s(fn, steps: int = 1) -> float:
    """Sum of CUDA kernel durations of `fn` (run `steps` times), per run."""
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            fn()
        torch.cuda.synchronize()
    total_us = sum(e.device_time for e in prof.events() if e.device_type.name == "CUDA")
    return total_us / 1e6 / steps


def wall_s(fn, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        t = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def prefill(model, vocab: int, t: int):
    ids = torch.randint(0, vocab, (1, t), device="cuda")

    def run():
        return model(input_ids=ids, use_cache=True, logits_to_keep=1)

    run()
    return {"tokens": t, "kernel_s": kernel_s(run), "wall_s": wall_s(run)}


def decode(model, vocab: int, batch: int, context: int):
    from transformers import DynamicCache

    ids = torch.randint(0, vocab, (batch, context), device="cuda")
    cache = DynamicCache()
    out = model(input_ids=ids, past_key_values=cache, use_cache=True, logits_to_keep=1)
    cache = out.past_key_values
    tok = torch.randint(0, vocab, (batch, 1), device="cuda")

    def step():  # one decode step at the same context: the cache is cropped back after it
        model(input_ids=tok, past_key_values=cache, use_cache=True, logits_to_keep=1)
        cache.crop(-1)  # negative: drop the token just added (every transformers version reads it so)

    step()
    return {"batch": batch, "context": context, "kernel_s": kernel_s(step, 5), "wall_s": wall_s(step, 10)}


def generate(model, vocab: int, batch: int, prompt: int, new: int):
    ids = torch.randint(0, vocab, (batch, prompt), device="cuda")
    mask = torch.ones_like(ids)

    def gen(n):
        return model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=n, min_new_tokens=n,
                              do_sample=False, pad_token_id=0)

    gen(4)
    ttft = wall_s(lambda: gen(1), 3)
    total = wall_s(lambda: gen(new), 2)
    return {"batch": batch, "prompt": prompt, "new_tokens": new, "ttft_s": ttft, "total_s": total,
            "tpot_s": (total - ttft) / (new - 1)}


def references() -> dict[str, float]:
    """A large bf16 GEMM and a device copy, measured in the same run as the steps."""
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    x = torch.empty(2**28, device="cuda", dtype=torch.float32)
    gemm = wall_s(lambda: a @ a, 10)
    copy = wall_s(lambda: x.clone(), 10)
    return {"ref_gemm_tflops": 2 * 8192**3 / gemm / 1e12, "ref_copy_gbs": 2 * x.numel() * 4 / copy / 1e9}


def main() -> None:
    import transformers

    res = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "transformers": transformers.__version__, "date": time.strftime("%Y-%m-%d"), "models": {}}
    # reference measured in the same run: a large bf16 GEMM and a device copy
    res.update(references())
    for name in MODELS:
        torch.cuda.empty_cache()
        model, cfg = build(name)
        r = {"prefill": [], "decode": [], "generate": []}
        with torch.inference_mode():
            for tk in PREFILL_TOKENS:
                r["prefill"].append(prefill(model, cfg.vocab_size, tk))
                print(name, r["prefill"][-1], flush=True)
            for b, c in DECODE:
                r["decode"].append(decode(model, cfg.vocab_size, b, c))
                print(name, r["decode"][-1], flush=True)
        for b, p, n in GENERATE:
            try:
                r["generate"].append(generate(model, cfg.vocab_size, b, p, n))
            except Exception as e:  # generate() API drift: keep the rest
                r["generate"].append({"batch": b, "error": f"{type(e).__name__}: {e}"})
            print(name, r["generate"][-1], flush=True)
        res["models"][name] = r
        del model
    with open(os.path.join(OUT, "serving-check.json"), "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
