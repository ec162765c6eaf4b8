"""Host-side constants: PyTorch eager's op dispatch, the ops a step dispatches, DTensor's and the
attention plan's host time, how host and GPU time overlap, and when a time estimate is flagged."""

from __future__ import annotations

from gpuadvisor.estimate.calibration.record import Constant, Method

DECODE_A = "tools/data/decode-h100.json"
HOST_SWEEP = "tools/data/decode-h100-host.json (host_sweep)"
SLOPE = ("endpoint slope (2 -> 24 layers) of the tiny-width host sweep, in units of HOST_OP_S, "
         "rounded to 5 ops")

CONSTANTS = (
    Constant("HOST_OP_S", 10e-6, "s", "host CPU time to dispatch one PyTorch eager op on the calibration host "
             "(PyTorch 2.11); the dispatch probe's figure scales every host time", f"{DECODE_A}, "
             "tools/data/decode-h100-host.json (launch.add_us)", Method.MEASURED,
             "small-op launch time on the two H100 hosts of tools/data/decode-h100.json and "
             "decode-h100-host.json (9.5 and 10.1 us), mean rounded to 1 "
             "significant figure"),
    Constant("HOST_OPS_TRAIN_RMSNORM", 410.0, "ops/layer", "host ops per layer of a training step, RMSNorm models "
             "(Python RMSNorm, rotary), pure bf16 (fp32 assumed the same)", HOST_SWEEP, Method.MEASURED,
             f"mean of Llama and Qwen2, {SLOPE}"),
    Constant("HOST_OPS_TRAIN_RMSNORM_AMP", 455.0, "ops/layer", "host ops per layer of a training step, RMSNorm "
             "models, under autocast", HOST_SWEEP, Method.MEASURED, f"mean of Llama and Qwen2, {SLOPE}"),
    Constant("HOST_OPS_TRAIN_LAYERNORM", 190.0, "ops/layer", "host ops per layer of a training step, LayerNorm "
             "models (fused LayerNorm, learned positions), pure bf16 (fp32 assumed the same)", HOST_SWEEP,
             Method.MEASURED, f"GPT-2, {SLOPE}"),
    Constant("HOST_OPS_TRAIN_LAYERNORM_AMP", 300.0, "ops/layer", "host ops per layer of a training step, LayerNorm "
             "models, under autocast", HOST_SWEEP, Method.MEASURED, f"GPT-2, {SLOPE}"),
    Constant("HOST_OPS_FIXED_TRAIN", 160.0, "ops/step", "host ops per training step outside the layers (loss, "
             "embedding, LM head, optimizer launch, zero_grad)", HOST_SWEEP, Method.ASSUMPTION,
             ("the Llama bf16 series' intercept (2 -> 24 layers), rounded to 10 ops, taken for every model: the "
             "Qwen2 and GPT-2 series give 253 and 465, and no stored set binds it (hidden under the GPU in the 1B+ "
             "steps; +-25 % moves the training steps' mean |error| by 0.04 points at most and the host sweep's count "
             "within 25 % not at all)")),
    Constant("HOST_OPS_ADAPTER", 24.0, "ops/linear", "LoRA: host ops per adapted linear in a training step "
             "(lora_A, lora_B, scaling, add, casts; x3 for backward)", "PEFT 0.21 LoRA Linear.forward",
             Method.ASSUMPTION,
             ("counted from the code path, not measured; no "
              "stored set binds it both ways: one way: x1.25 fails the training steps (53 of 55 within 25 %); "
              "x0.75 fits them better (mean |error| 1B+ 5.15 -> 5.09 %)")),
    Constant("HOST_OPS_DEQUANT", 20.0, "ops/linear", "QLoRA: host ops per quantized linear in a training step "
             "(dequantize in forward and backward)", "bitsandbytes 0.50 Linear4bit", Method.ASSUMPTION,
             ("counted from the code path, not measured; no "
              "stored set binds it both ways: one way: x0.75 fails the training steps' mean |error| (5.15 -> "
              "5.22 %); x1.25 fits them better (5.07 %)")),
    Constant("HOST_OPS_MOE", 75.0, "ops/layer", "host ops per MoE layer of a training step (routing, grouped "
             "products, combine; x3 with backward)", "transformers 5 grouped_mm experts", Method.ASSUMPTION,
             ("counted from the code path, not measured; no "
              "stored set binds it both ways: only one stored training step reads it (mixtral-0.7b, under 1B): "
              "+-25 % moves the under-1B mean |error| 14.33 -> 14.30-14.35 %")),
    Constant("INT8_HOST_OPS_PER_LINEAR", 23.0, "ops/linear", "host time bitsandbytes LLM.int8() adds per linear "
             "(its syncs keep the host from running ahead), in HOST_OP_S units",
             "lab/data/h100-round4/int8-gemm.json", Method.MEASURED,
             "wall minus GPU time per linear, mean over four shapes: 0.18 ms without outlier columns, 0.41 ms "
             "with; mixed as in v2 case 98 (43 of 196 linears with outliers, from its profile); rounded to an op"),
    Constant("DTENSOR_HOST_FACTOR", 3.2, "x", "host time of a tensor-parallel (DTensor) training step over plain "
             "eager's", "lab/data/h200-round3/dtensor-overhead.json, lab/data/h200-round5/dtensor-overhead.json",
             Method.MEASURED, "issue time on a one-GPU mesh over the plain step's on two H200 hosts (3.27x, 3.05x), "
             "mean rounded to 0.1; the TP=2 step on 2x H200 (tools/data/h200x2-2026-11-23/multigpu.json) and the "
             "4x H200 TP steps (step_four_gpu) are its checks"),
    Constant("DTENSOR_SP_HOST_FACTOR", 1.3, "x", "host time of a DTensor step with sequence parallelism over one "
             "without (the norms' Shard(1) redistributions: an all-gather and a reduce-scatter around each block)",
             "lab/data/two-gpu-h200x2-2026-11-27/four_gpu.json", Method.MEASURED,
             "the factor at which the TP2 + sequence-parallel step of a 16-layer Llama-3.1-8B on 2x H200 (12,097 aten "
             "ops a step, host-bound) is estimated at its measured 350 ms (tools.compare_four_gpu."
             "fit_dtensor_sp_factor), to 0.1; the 4x H200 TP4+SP and TP2 x FSDP2 steps are its checks"),
    Constant("EAGER_HOST_FIXED_S", 1.5e-3, "s", "generate()'s host bookkeeping per decode step where the dispatch "
             "probe did not measure it", DECODE_A, Method.NOT_REPRODUCIBLE,
             "the lowest fixed host cost seen before the dispatch probe existed; the probe measures 0.3-2.7 ms on "
             "the hosts measured (lab/history/BENCHMARKS-2026-11.md)"),
    Constant("EAGER_HOST_PER_LAYER_S", 0.84e-3, "s/layer", "generate()'s host dispatch per layer and decode step "
             "on the calibration host (scaled by this host's op time)", f"{DECODE_A}, {HOST_SWEEP}",
             Method.NOT_REPRODUCIBLE, "read off the eager decode steps of both decode files; the fit is not "
             "stored, and the host sweep's generate() slopes give 0.74-1.07 ms"),
    Constant("EAGER_PREFILL_HOST_OPS_PER_LAYER", 95.0, "ops/layer", "host ops per layer of an eager (no-grad) "
             "prefill forward", HOST_SWEEP, Method.MEASURED, f"mean of Llama, Qwen2 and GPT-2, {SLOPE}"),
    Constant("PREFILL_HOST_OPS_FIXED", 300, "ops", "host ops of an eager prefill outside the layers (embedding, "
             "mask, rotary tables, final norm, LM head, output)", HOST_SWEEP, Method.NOT_REPRODUCIBLE,
             "the host sweep's forward intercepts are 50-180 ops; how 300 was set is not recorded"),
    Constant("PREFILL_HOST_OPS_MOE", 25, "ops/layer", "host ops per MoE layer of an eager prefill (routing: "
             "softmax, top-k, sort, histc, cumsum, gather; two grouped products, gate, weighting, un-permute, sum)",
             "transformers 5 grouped_mm experts", Method.ASSUMPTION,
             ("counted from the code path, not measured; no "
              "stored set binds it both ways: one way: x0.75 fails the under-1B prefill's mean |error| (12.27 "
              "-> 12.31 %); x1.25 fits the prefill and scoring sets better (12.23 %, scoring 6.22 %)")),
    Constant("CUDNN_ATTENTION_PLAN_S", 40e-3, "s", "host time of SDPA on a sequence length it has not seen, where "
             "PyTorch picks cuDNN attention (compute capability 9.x, 10.x) and no probe measured it",
             "lab/data/h100-round3/sdpa-host.json", Method.MEASURED,
             "mean of the six new-length calls (default and cuDNN backends, 36-45 ms), rounded to 5 ms"),
    Constant("OVERLAP_P", 2.0, "exponent", "host/GPU overlap: step = (host^p + device^p)^(1/p)",
             "tools/validate_time.py (prefill, scoring and training-step rows)", Method.FITTED,
             "the exponent of {1.5, 2, 3, 4, 8} with the least mean |error| of the 95 prefill, scoring and "
             "training-step times of tools/validate_time.py that are not held out (7.7 %; 8.1 % at p = 3). It had "
             "been fitted on the 30 cases of tools/data/validation-h100.json (v1), held-out ones included, where p = 3 "
             "came a close second and, once MISALIGNED_SLOWDOWN was measured (GPT-2's head), a close first"),
    Constant("DP_OVERLAP", 0.5, "fraction", "share of the data-parallel gradient all-reduce hidden behind "
             "backward", "-", Method.ASSUMPTION, "not measured; DDP and FSDP steps on 2x H200 land within -16 %"),
    Constant("LOW_CONFIDENCE_PARAMS", 1e9, "parameters", "models under this size get time estimates flagged low "
             "confidence (launch-bound, host-dependent)", "docs/validation-time.md", Method.ASSUMPTION,
             "a threshold read off the validation: under 1B, 23 of 30 training steps within 25 %"),
    Constant("LOW_CONFIDENCE_HOST_SHARE", 0.5, "fraction", "steps whose host dispatch is above this share of the "
             "step get time estimates flagged low confidence", "docs/validation-time.md", Method.ASSUMPTION,
             "a threshold: host-bound steps track the host CPU and drift with it"),
)
