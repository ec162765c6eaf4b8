"""GPU-side constants: achievable fractions of the datasheet, GEMM and attention ramps, kernel floors,
the decode engines' kernel counts and KV-cache passes, and the interconnect."""

from __future__ import annotations

from gpuadvisor.estimate.calibration.record import Constant, Method

DECODE_A = "tools/data/decode-h100.json"
DECODE_B = "tools/data/decode-h100-host.json"
H100_DATASHEET = "catalog H100 SXM5 80GB (989.4 TFLOP/s dense bf16, 3,350 GB/s)"

CONSTANTS = (
    Constant("MFU", 0.75, "fraction", "large-GEMM FLOP/s as a fraction of the datasheet dense tensor peak, on the "
             "H100 it was fitted on (another card's: x its published matmul reach over the H100's, "
             "gpuadvisor.matmul_reach, docs/card-reach.md)",
             f"{DECODE_A} (GEMM sweep); {H100_DATASHEET}", Method.FITTED,
             "log-space least squares of rate and K_RAMP over the 21 GEMMs of >= 1024 rows that took over 150 us: "
             "741 TFLOP/s, / 989.4 = 0.75"),
    Constant("MFU_VS_MEASURED", 0.94, "fraction", "large-GEMM FLOP/s as a fraction of a measured matmul peak "
             "(tensor.bf16 probe, large square GEMM)", f"{DECODE_A} (GEMM sweep, ceilings.bf16_matmul_tflops)",
             Method.FITTED, "the fitted large-GEMM rate (741 TFLOP/s, as for MFU) over the same run's 8192^3 "
             "product (790 TFLOP/s): 0.94"),
    Constant("POWER_CLOCK_EXPONENT", 1 / 3, "exponent", "how the clock a card holds under dense matrix work falls "
             "with its power limit: a card with less power per SM and per GHz cubed of boost clock than a measured "
             "card of its architecture reaches that card's matmul reach x (its power coefficient / the measured "
             "card's) ^ this (gpuadvisor.matmul_reach, docs/card-reach.md)",
             "-", Method.ASSUMPTION, "CMOS dynamic power P = C V^2 f with the voltage rising in step with the clock "
             "in the DVFS range, so P ~ f^3 and f ~ P^(1/3); not fitted. AMD's two measured power limits of one chip "
             "(the MI300X at 750 W, 0.542 of its peak; the MI325X at 1,000 W, 0.645) fall faster, as P^0.60, so "
             "1/3 is the milder assumption; checked out of sample on Lambda's single-GPU training results "
             "(tests/data/published-cross-card-3.json: the H100 PCIe, A100 PCIe, A10 and RTX 6000 Ada)"),
    Constant("BANDWIDTH", 0.86, "fraction", "achieved memory bandwidth (decode weight streaming) as a fraction of "
             "the datasheet, on the H100 it was fitted on (another card's: x its published copy bandwidth's reach over "
             "the H100's where measured, gpuadvisor.bandwidth_reach, docs/card-reach.md)",
             f"{DECODE_A} (graphs_own decode steps); {H100_DATASHEET}", Method.FITTED,
             "least squares (seconds) of step = bytes / bandwidth + kernels x KERNEL_FLOOR_S over the decode file's 10 "
             "calibration points: 2.87 TB/s, / 3,350 = 0.86"),
    Constant("BANDWIDTH_VS_MEASURED", 0.97, "fraction", "achieved memory bandwidth as a fraction of a measured "
             "triad/copy bandwidth", f"{DECODE_A} (ceilings.copy_gbs)", Method.NOT_REPRODUCIBLE,
             "the decode fit over the same run's copy ceiling gives 2.87 / 2.997 = 0.96 in the repo's data; how "
             "0.97 was set is not recorded"),
    Constant("FP8_REACH", 0.89, "fraction", "a large FP8 GEMM's share of the card's datasheet dense FP8 peak over a "
             "large 16-bit GEMM's share of its bf16 peak: FP8 does twice the multiply-adds per clock and draws more "
             "power for them, so the card's clock falls further under its power limit (applied to datasheet figures; "
             "a probe's measured fp8 rate already holds it)",
             "tools/data/h100-final-2026-11-23/h100-final.json and reports/sample-h200x2-probe.json (probe "
             "tensor.fp8 and tensor.bf16, 8192^3, BENCHMARKS.md 'Probes against vendor libraries')", Method.MEASURED,
             "the mean over the two cards, rounded to 0.01, of (fp8 TFLOP/s / datasheet fp8) / (bf16 TFLOP/s / "
             "datasheet bf16): H100 (1,400.8 / 1,978.9) / (793.6 / 989.4) = 0.883, H200 (1,410.2 / 1,978.9) / "
             "(791.1 / 989.4) = 0.891. Checked at a serving prefill's shapes (Llama 3.3 70B and 3.1 8B layers, "
             "1,024-8,192 tokens, 1.5 s back to back each, lab/data/h100-fp8-reach-2026-12-06/fp8_reach_shapes.json, "
             "tests/test_fp8_reach.py): 0.83-0.91 over 22 shapes, median 0.88. Was two figures: the serving step "
             "priced FP8 at MFU (0.75) of the peak, the training model at an assumed 0.6; both now MFU x FP8_REACH "
             "(0.67)"),
    Constant("INTERCONNECT_EFFICIENCY", 0.7, "fraction", "achieved fraction of the catalog's interconnect figure "
             "(where no all-reduce bus bandwidth was measured)", "-", Method.ASSUMPTION,
             "not measured: multi-GPU runs use the measured all-reduce bus bandwidth where a probe has it"),
    Constant("KV_TRANSFER_EFFICIENCY", 0.36, "fraction", "achieved fraction of one direction of the link between a "
             "prefill and a decode GPU (half the catalog's NVLink figure, or the network's per-GPU rate) that a "
             "disaggregated engine's KV-cache transfer reaches (paged blocks gathered by NIXL/UCX)",
             "LMCache blog 2025-04-29 'Bringing State-Of-The-Art PD Speed to vLLM v1' (LMCache/lmcache.github.io "
             "_posts/2025-04-29-pdbench.md): Dynamo moves the KV cache of a 7,500-token input (Llama 3.1 8B, bf16: "
             "983 MB) over NVLink between two H100s in 8 ms with 128-token pages (20 ms with 16-token pages)",
             Method.FITTED, "983 MB in 8 ms less the engines' 2 ms hand-off (kv_transfer_latency_s, engines.json): "
             "164 GB/s over one direction of an H100's NVLink (450 GB/s), 0.36; the only published transfer time "
             "with its conditions found: fitted on it, gated by tests/accuracy_gates.py published_kv_transfer "
             "(within 10 %)"),
    Constant("DEFAULT_INTERCONNECT_GBS", 25.0, "GB/s", "interconnect bandwidth when the catalog has no figure "
             "(PCIe 4.0 x16, achievable)", "PCIe 4.0 x16: 32 GB/s per direction", Method.ASSUMPTION,
             "about 80 % of the PCIe 4.0 x16 line rate"),
    Constant("TILE_M", 128, "rows", "output-tile height of a GEMM (wave quantization)", "-", Method.ASSUMPTION,
             "cuBLAS's usual Hopper bf16 CTA tile, 128 x 256; not read from a profile here"),
    Constant("TILE_N", 256, "columns", "output-tile width of a GEMM (wave quantization)", "-", Method.ASSUMPTION,
             "cuBLAS's usual Hopper bf16 CTA tile, 128 x 256; not read from a profile here"),
    Constant("K_RAMP", 300, "inner steps", "inner-dimension steps a GEMM tile's prologue + epilogue cost: "
             "efficiency k / (k + K_RAMP)", f"{DECODE_A} (GEMM sweep)", Method.FITTED,
             "log-space least squares of rate and K_RAMP over the 21 GEMMs of >= 1024 rows that took over 150 us "
             "(each within +-20 % after the fit), rounded to 100"),
    Constant("GROUPED_STREAM_K_RAMP", 100, "inner steps", "a grouped (MoE) GEMM that streams its experts' weights "
             "reads them at k / (k + GROUPED_STREAM_K_RAMP) of the bandwidth: an expert's slice a short inner "
             "dimension deep (DeepSeek-V3's down projection on one of eight TP ranks: k 256) ends each tile's loads "
             "before the pipeline is full (kernels.grouped_gemm_time; the serving step's experts)",
             "lab/data/h100-fp8-block-2026-12-06/fp8_block_gemm.json (torch._grouped_mm, H100)", Method.FITTED,
             "the value on a 10-step grid with the least mean |log(tool / measured)| over the run's bf16 grouped rows "
             "at 1, 16 and 256 rows an expert (tools/fit_grouped_stream.py: 0.15 -> 0.06); held out: its rows at 4 "
             "and 64 (the down projection 0.68x, 0.81x -> 0.94x, 1.13x) and lab/grouped_moe.py's 13 gpt-oss and "
             "Mixtral shapes (0.81x-1.00x -> 0.82x-1.01x)"),
    Constant("TAIL_WAVE_SHARE", 0.5, "waves", "the size of the tiles a GEMM's partial last wave runs at, past its "
             "first wave, over TILE_M x TILE_N: the tail costs its fill rounded up to this share (kernels._waves)",
             "TILE_N / 2 over TILE_N: cuBLAS's next tile down, 128 x 128",
             Method.ASSUMPTION, "cuBLAS picks the tile that best fills the last wave; checked on microsoft/vidur's "
             "measured fp16 linear layers (tests/data/published-vidur-gemm.json) and our H100's sweep across wave "
             "boundaries (lab/data/h100-gemm-tail-waves-2026-12-07), gated by tests/test_vidur_gemm.py"),
    Constant("SPLIT_K_MIN", 512, "inner steps", "the least inner dimension one split of a split-K GEMM gets",
             "tests/data/models-h100.json (GEMM class of the profiled training steps)", Method.ASSUMPTION,
             "cuBLAS's heuristics are not public; set where weight-gradient GEMMs of ViT and ConvNeXt training match "
             "their profiled GEMM time"),
    Constant("MISALIGNED_SLOWDOWN", 5.0, "x", "rate divisor for a GEMM with an odd dimension (no vector wider "
             "than one element: GPT-2's 50,257 vocabulary; kernels.misaligned_slowdown)",
             "lab/data/h100-gemm-align-2026-12-06/misaligned_gemm.json", Method.MEASURED,
             "the geometric mean, rounded to 0.25, of the time per FLOP over the padded twin's of a bf16 language-"
             "model head's three products (forward, input and weight gradients) at 8,192 tokens, vocabularies 50,257 "
             "and 1,001 against 50,304 and 1,008, on an H100 (bench.gemm_alignment.fitted: 4.94; GPT-2's head "
             "5.0-7.1x, 4.4-6.3x at 1,024 tokens; the 1,001-wide one 3.3-5.8x, 1.7-2.1x at 1,024 tokens, where its "
             "padded twin is slow too). Was 3.0, assumed: GPT-2's held-out profiles had pointed to about 5"),
    Constant("MISALIGNED_CONV_SLOWDOWN", 3.0, "x", "rate divisor for a 16-bit convolution whose input channels are "
             "not a multiple of 8 and that is neither a wide stem nor a patchify (opcost.stem_slowdown)", "-",
             Method.ASSUMPTION, "MISALIGNED_SLOWDOWN's assumed value before that was measured on GEMMs (2026-12-06); "
             "the convolution kernels' own penalty is not measured, and no stored set binds it"),
    Constant("MISALIGNED_EVEN_SLOWDOWN", 2.0, "x", "rate divisor for a GEMM whose dimensions are even but not all "
             "multiples of 8 elements (4- or 8-byte vectors, no 16-byte tensor-core path: BERT's 30,522 and "
             "DeBERTa's 128,100 vocabularies; kernels.misaligned_slowdown)", "tests/data/models-h100.json",
             Method.FITTED, "the grid value (1-3) with the least mean |log(estimate / profiled)| GEMM time of the "
             "calibration split (bench.models.fit_gpu_constants); they had been priced at MISALIGNED_SLOWDOWN's 3, "
             "their GEMM class 1.2-1.3x of its profile. Timed alone on an H100 (bench.gemm_alignment, vocabularies "
             "30,522 and 1,002 against 30,528 and 1,008, bf16): 2.0x at 1,024 tokens, 2.6x at 8,192"),
    Constant("ATTN_HEAD_RAMP", 34, "head_dim", "head dimension at which the flash kernel's softmax/rescale work "
             "equals its matmul work: rate x hd / (hd + ATTN_HEAD_RAMP)", f"{DECODE_A}, {DECODE_B} (SDPA sweeps)",
             Method.NOT_REPRODUCIBLE, "fitted to the SDPA sweeps with the two sequence ramps; a log-space refit of "
             "the forward gives 34, but the same refit gives other ramps (below), so the fit is not the one used"),
    Constant("ATTN_SEQ_RAMP_FWD", 400, "tokens", "sequence length at which causal flash attention's forward "
             "reaches half its asymptotic rate", f"{DECODE_A}, {DECODE_B} (SDPA sweeps)", Method.NOT_REPRODUCIBLE,
             "a log-space least-squares refit of the 27 forward points gives 650-750, not 400"),
    Constant("ATTN_SEQ_RAMP_FWDBWD", 1300, "tokens", "sequence length at which forward + backward flash attention "
             "reaches half its asymptotic rate", f"{DECODE_A}, {DECODE_B} (SDPA sweeps)", Method.NOT_REPRODUCIBLE,
             "a log-space least-squares refit of the 27 forward + backward points gives about 1600, not 1300"),
    Constant("ATTN_WINDOW_TILE", 128, "tokens", "keys a sliding-window layer's attention computes beyond its "
             "window for each query: the kernels run whole 128-row query tiles against whole key tiles, so a tile "
             "reads the window and its own tile's keys (ModelSpec.attended_pairs)",
             "lab/data/h100-sliding-window-2026-12-06 (FlexAttention, gpt-oss's heads, 1,024-16,384 tokens, "
             "window 128)", Method.ASSUMPTION,
             "FlashAttention's 128-row query tile at head dimensions up to 128, assumed of the user's kernel. The H100 "
             "run binds it one way only: the tool's windowed / causal time ratio is 0.75x-0.77x of the measured at "
             "4,096 and 16,384 tokens, 0.70x-0.71x with a 96-token tile (tests/test_gpt_oss.py fails below 0.72x) "
             "and 0.80x-0.82x with 160, closer still: what is left is the kernel's per-tile fixed cost, not more "
             "keys, so the tile is taken from the kernel, not fitted to the run"),
    Constant("ATTN_BWD_FLOPS", 2.5, "x forward", "FLOPs of a flash-attention backward over its forward's (QK^T "
             "recomputed, then dV, dP, dS's products dQ and dK: five matmuls of the forward's size to its two); "
             "forward + backward is 1 + ATTN_BWD_FLOPS", "FlashAttention's own count: "
             "https://github.com/Dao-AILab/flash-attention/blob/main/benchmarks/benchmark_flash_attention.py "
             "(flops(): bwd 2.5 x fwd, fwd_bwd 3.5 x fwd)", Method.COUNTED,
             "five matmuls of the forward's size against its two; traced graphs store the FLOPs counted when traced"),
    Constant("KERNEL_FLOOR_S", 3.4e-6, "s", "GPU time of a small kernel of a decode step, even inside a CUDA graph "
             "(launch latency, ramp and tail)", f"{DECODE_A} (graphs_own decode steps)", Method.FITTED,
             "least squares (seconds) of step = bytes / bandwidth + (17 x layers + 6) x floor over the "
             "decode file's 10 "
             "calibration points: 3.37 us, rounded to 0.1 us"),
    Constant("GRAPHS_KERNELS_PER_LAYER", 17, "kernels", "GPU kernels per layer of a decode step captured in a "
             "CUDA graph", f"{DECODE_A} (graphs_own)", Method.NOT_REPRODUCIBLE,
             "counted in a profile of the captured step, which is not stored"),
    Constant("MOE_LAYER_KERNELS", 4, "kernels", "kernels an expert layer of a decode step launches beyond a dense "
             "layer's MLP: the router's product, the top-k routing, the tokens' alignment for the grouped GEMM and the "
             "weighted sum of the experts' outputs (the experts' two grouped GEMMs and their activation stand in for "
             "the MLP's own)", "vLLM vllm/model_executor/layers/fused_moe (select_experts, moe_align_block_size, "
             "fused_experts, moe_sum)", Method.ASSUMPTION,
             "counted from the code path, not from a profile; DeepSeek-R1's 4-user TPOT on 8x H200 0.47x -> 0.60x "
             "with the next two (tests/test_deepseek.py)"),
    Constant("SHARED_EXPERT_KERNELS", 3, "kernels", "a shared expert's kernels in a decode step: its gate/up "
             "product, activation and down product", "vLLM vllm/model_executor/models/deepseek_v2.py "
             "(DeepseekV2MoE.shared_experts, a DeepseekV2MLP)", Method.ASSUMPTION, "counted from the code path"),
    Constant("MLA_LAYER_KERNELS", 6, "kernels", "kernels a latent-attention layer of a decode step launches beyond a "
             "Llama attention block: the query latent's up-projection and the two latents' norms, the up-projections "
             "absorbed on either side of the attention (two batched GEMMs) and FlashMLA's split-KV combine",
             "vLLM vllm/model_executor/models/deepseek_v2.py (DeepseekV2MLAAttention: fused_qkv_a_proj, "
             "q_a_layernorm, kv_a_layernorm, q_b_proj) and its MLA backend (W_UK / W_UV bmm, flash_mla_with_kvcache)",
             Method.ASSUMPTION, "counted from the code path, not from a profile"),
    Constant("GRAPHS_KERNELS_FIXED", 6, "kernels", "GPU kernels per decode step outside the layers, CUDA graph",
             f"{DECODE_A} (graphs_own)", Method.NOT_REPRODUCIBLE,
             "counted in a profile of the captured step, which is not stored"),
    Constant("EAGER_KERNELS_PER_LAYER", 43, "kernels", "GPU kernels per layer of an eager generate() decode step",
             f"{DECODE_A} (eager)", Method.NOT_REPRODUCIBLE, "counted in a profile that is not stored"),
    Constant("EAGER_KERNELS_FIXED", 20, "kernels", "GPU kernels per eager generate() decode step outside the "
             "layers", f"{DECODE_A} (eager)", Method.ASSUMPTION,
             ("counted in a profile that is not stored (counted from the implementation, not measured); no "
              "stored set binds it both ways: 20 kernels a step beside 43 a layer: +-25 % moves the mean "
              "|error| of every eager decode set by 0.03 points at most (no probe 19.30 -> 19.31 %)")),
    Constant("EAGER_KV_PASSES", 3.0, "passes", "times an eager decode step moves the KV cache without padding "
             "(concatenated: read + write; attention reads it once with enable_gqa)",
             "transformers 5.17 DynamicCache + SDPA; H100 profiles in lab/history/BENCHMARKS-2026-11.md "
             "(3.8-4.4 passes)",
             Method.COUNTED, "2 passes for the concatenation, 1 for attention"),
    Constant("EAGER_KV_PASSES_PADDED", 4.0, "passes", "KV passes of a padded batch, fixed part (4 + 4g with g query "
             "heads per KV head)", "transformers 5.17 repeat_kv; H100 profiles in lab/history/BENCHMARKS-2026-11.md "
             "(15.9-20.5 passes at g = 3-4)", Method.ASSUMPTION,
             ("concatenation and mask path, before repeat_kv (counted from the implementation, not measured); "
              "no stored set binds it both ways: one way: x1.25 fails the padded eager decode gates; x0.75 fits "
              "them better (mean |error| of the padded points with the generate() probe 11.72 -> 11.51 %, with "
              "the op + SDPA probe 16.11 -> 14.33 %)")),
    Constant("EAGER_KV_PASSES_PER_GROUP_PADDED", 4.0, "passes", "KV passes of a padded batch per query head per KV "
             "head (repeat_kv copies K and V, attention reads the copies)", "transformers 5.17 repeat_kv; H100 "
             "profiles in "
             "lab/history/BENCHMARKS-2026-11.md", Method.COUNTED, "copy read + write, attention read, per group"),
)
