"""Bytes the elementwise kernels, the loss and the optimizer move (traffic.py), beyond the per-op byte
counts written into its formulas (those are definitions of what each HF op reads and writes)."""

from __future__ import annotations

from gpuadvisor.estimate.calibration.record import Constant, Method

INT8_GEMM = "lab/data/h100-round4/int8-gemm.json"

CONSTANTS = (
    Constant("BWD_FACTOR", 2.0, "x", "backward bytes per forward byte of an elementwise op (grad in, saved input, "
             "grad out)", "PyTorch autograd formulas", Method.COUNTED, "counted, not fitted"),
    Constant("LOSS_BYTES_PER_LOGIT", 36.0, "B/logit", "bytes the training loss moves per logit (bf16 logits -> "
             "fp32, log-softmax, its backward, downcast)", "PyTorch cross_entropy", Method.ASSUMPTION,
             ("counted, not fitted (counted from the implementation, not measured); no stored set binds it both "
              "ways since a GEMM's part-filled last wave runs at half-size tiles (2026-12-07): x0.75 fails the "
              "training-step gates; x1.25 fits them better (mean |error| 1B+ 5.01 -> 4.87 %, under 1B 13.07 -> "
              "12.99 %)")),
    Constant("LOSS_FWD_BYTES_PER_LOGIT", 14.0, "B/logit", "bytes a scoring forward's loss moves per logit (bf16 "
             "logits -> fp32, log-softmax, gather; no backward)", "PyTorch cross_entropy", Method.ASSUMPTION,
             ("counted, not fitted (counted from the implementation, not measured); no stored set binds it both "
              "ways: one way: x0.75 fails the scoring gates; x1.25 fits scoring better (mean |error| 1B+ 6.25 "
              "-> 5.82 %, under 1B 12.23 -> 11.08 %)")),
    Constant("SOFTCAP_BYTES_PER_LOGIT", 12.0, "B/logit", "Gemma 2 logit soft-capping per logit (logits / cap, tanh, "
             "x cap: three bf16 read + write passes)", "transformers Gemma2ForCausalLM", Method.ASSUMPTION,
             ("counted from the HF implementation; checked on the profile of v2 case 74 (counted from the "
              "implementation, not measured); no stored set binds it both ways: one way: only Gemma 2 reads it; "
              "x0.75 fails the scoring mean |error| (6.25 -> 6.48 %); x1.25 fits it better (6.02 %)")),
    Constant("ADAMW_PASSES", 21.0, "state-sized passes", "foreach AdamW: lerp, mul, addcmul, sqrt, div, add, "
             "addcdiv, decay, per parameter", "torch.optim.AdamW (foreach)", Method.COUNTED, "counted, not fitted"),
    Constant("ADAMW_FUSED_PASSES", 7.0, "state-sized passes", "fused AdamW: one kernel reads p, g, m, v and writes "
             "p, m, v", "torch.optim.AdamW (fused)", Method.ASSUMPTION,
             ("counted, not fitted (counted from the implementation, not measured); no stored set binds it both "
              "ways: one way: x1.25 fails the training steps' mean |error| (5.15 -> 5.26 %); x0.75 fits them "
              "better (5.14 %, 55 of 55 within 25 %)")),
    Constant("ADAMW8BIT_BYTES", 95.0, "B/param", "bitsandbytes blockwise 8-bit AdamW's step time per parameter, as "
             "bytes at the achieved bandwidth (its 1-byte states alone would be ~10 B)",
             "tools/data/validation-h100-v2.json (cases 28 and 46)", Method.NOT_REPRODUCIBLE,
             "33 ns a parameter fitted on cases 28 and 46 with an earlier model; solving the current model for "
             "those two step times gives 114-121 B"),
    Constant("MOE_ROUTED_BYTES", 48.0, "B/element", "HF grouped_mm experts: bytes per routed token and intermediate "
             "element (gate/up output read and written ~3 times in fp32)", "lab/data/h100-round3/"
             "validation-cases-profiled.json (v2 case 95 profile)", Method.COUNTED,
             "2 outputs x 4 B x read + write x 3 passes, counted from the profile's kernels"),
    Constant("MIXED_WEIGHT_BYTES", 12.0, "B/param", "autocast per parameter and step: weight fp32 -> bf16 each "
             "forward, bf16 grads -> fp32 master grads", "PyTorch autocast", Method.ASSUMPTION,
             ("counted, not fitted (counted from the implementation, not measured); no stored set binds it both "
              "ways: +-25 % moves the training steps' mean |error| by 0.03 points at most (1B+ 5.15-5.18 %) and "
              "no published run's ratio by more than 0.002")),
    Constant("INT8_IN_BYTES", 27.0, "B/element", "bitsandbytes LLM.int8(): bytes per input element of a linear at "
             "the achieved bandwidth (fp16 cast, row-wise quantization, outlier check)", INT8_GEMM,
             Method.NOT_REPRODUCIBLE, "the input-side kernels measure 29.0-29.1 B at 3072 inputs and 23.5 B at "
             "8192; how 27 was chosen between them is not recorded"),
    Constant("INT8_OUT_BYTES", 15.0, "B/element", "bitsandbytes LLM.int8(): bytes per output element at the "
             "achieved bandwidth (int32 dequantization, bf16 cast)", INT8_GEMM, Method.MEASURED,
             "output-side kernels (dequantize + cast) per output element at 0.86 x 3,350 GB/s, mean over the four "
             "shapes, rounded to a byte"),
)
