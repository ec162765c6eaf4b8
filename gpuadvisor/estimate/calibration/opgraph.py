"""The op cost model's constants (opcost.py, graph_estimate.py): efficiencies per op class, floors and the
host's time per traced op. Fitted ones come from tests/data/models-h100.json (lab/measure_models.py on an
H100), calibration split only: lab/model_cases.py holds out every third model."""

from __future__ import annotations

from gpuadvisor.estimate.calibration.record import Constant, Method

MODELS = "tests/data/models-h100.json"
DEPTHWISE = "lab/data/h200-nchw-2026-12-05/depthwise.json"
BN_LAYOUTS = "lab/data/h200-nchw-2026-12-05/bn_layouts.json"
CONV_WORKSPACE = "lab/data/h200-nchw-2026-12-05/conv_workspace.json"
PERSIST_KERNELS = "lab/data/h100-rnn-persist-kernels-2026-12-06/rnn_persist_kernels.json"
NO_WORKSPACE_FIT = ("the median FLOP rate of VGG-16's convolutions of 128+ output channels at batch 1024 on an H200, "
                    "capped to their input and output plus 0.5 GiB (bench.nchw.fit_no_workspace); batch 256 is held "
                    "out, and the whole VGG-16 step under a 23.4 and a 22.0 GiB cap checks it")
BN_FIT = ("the median per-channel rate of the NCHW shapes at batch 512 that run at least 1.5x slower than "
          "channels-last on an H200 (bench.nchw.fit_nchw_batch_norm); the batch 384 and 128 shapes are held out")
DEPTHWISE_FIT = ("the median FLOP rate of the shapes PyTorch runs natively among MobileNet-V3 Large's (batch 512) on "
                 "an H200, fp16 and bf16 (bench.nchw.fit_native_depthwise); EfficientNet-B0's shapes (batch 384) "
                 "are held out")
PHASE_OVERLAP = "lab/data/h100-phase-overlap-2026-12-08/phase_overlap.json"
TRAIN_STEP_HOST = "lab/data/h100-train-step-host-2026-12-05/"
STEP_PARTS_FIT = ("the sum of the intercepts of the forward's and the backward's least-squares lines of host time "
                  "(units of the run's dispatch probe) against the parameter tensors of a stack of 1-512 Linear "
                  "layers (lab/train_step_host.py), the mean over two runs on an H100, to 1 "
                  "(bench.models.fit_step_parts); apart, 12 units for the backward moved no gate")
OPTIMIZER_FIT = ("the least-squares line through the optimizer phase's host time of twelve training steps (78-364 "
                 "parameter tensors), in units of each run's dispatch probe, against their tensors "
                 "(bench.models.fit_optimizer_host); was HOST_TRAINING_STEP, 120 fitted on whole steps until "
                 "2026-12-08, which the steps of the calibration models, mostly GPU-bound, did not pin: the recurrent "
                 "models' few tensors and host-bound steps priced 1.3x-1.5x")
HOST_FIT = ("grid search (0.25 steps, views 0.2) for the least mean |log(estimate / measured)| step time over the "
            "calibration split, opcost.host_counts's four op counts times HOST_OP_S beside a training step's own "
            "measured work (HOST_STEP_FIXED, HOST_OPTIMIZER_*), overlapped with the GPU time as opcost.step_time "
            "does, a recorded forward op at least an unrecorded one and a view's cost within 0.8x-1.25x of its "
            "measured ratio to one (bench.models.fit_host_constants)")
GPU_FIT = ("grid search against the profiled GPU time of its own op class over the calibration split, least mean "
           "|log(estimate / profiled)| (bench.models.fit_gpu_constants)")

CONV_FIT = ("coordinate descent over grids of the three convolution constants against the profiled convolution GPU "
            "time over the calibration split, least mean |log(estimate / profiled)| "
            "(bench.models.fit_gpu_constants)")
STREAM_FIT = ("coordinate descent over grids of both against the profiled elementwise GPU time over the calibration "
              "split, least mean |log(estimate / profiled)| (bench.models.fit_gpu_constants); STREAM_BW_EFF 0.9 -> "
              "0.95 on 2026-12-05 once pooling kernels were priced by their work (POOL_KERNELS): it had absorbed "
              "their time; 0.95 -> 1.0 once a biased convolution's bias add was traced)")
NORM_FIT = ("coordinate descent over grids of the six norm constants against the profiled normalisation GPU time "
            "over the calibration split, least mean |log(estimate / profiled)| "
            "(bench.models.fit_gpu_constants)")

STEMS = "lab/data/h100-conv-stem-2026-12-05 (lab/conv_stem.py)"
NCHW_TRANSPOSES = "lab/data/h100-nchw-transposes-2026-12-06 (lab/nchw_transposes.py)"
NCHW_TRANSPOSES_FIT = ("the grid pair (0.05 steps) with the least mean |log(priced / profiled)| time of the transposes "
                       "(each transposed tensor read and written once, a kernel each) over two thirds of 22 shapes of "
                       "VGG-16, ResNet-50, SD's UNet and "
                       "R3D-18, forward and training, bf16 and fp16 (bench.nchw_transposes.fit); every third shape "
                       "held out. Was NCHW_TRANSPOSE_PASSES, 1.0 pass over every NCHW convolution's tensors, "
                       "assumed: the H100 shows three transposes a pass for a filter wider than 1x1 and none for "
                       "a 1x1, whose kernels read NCHW")

DILATED = "lab/data/h100-dilated-convs-2026-12-07 (lab/dilated_convs.py)"
TRANSPOSED = "lab/data/h100-transposed-convs-2026-12-07 (lab/transposed_convs.py)"
TRANSPOSED_FIT = ("the grid value (50-600 by 25) with the least mean |log(priced / profiled)| over two thirds of the "
                  "file's 21 forwards, every third shape held out (bench.transposed.fit_dgrad): the held-out 5 of 7 "
                  "within 0.8x-1.25x, mean |log| 0.157; a term in N as well (n / (n + c)) fitted no better")

#: PyTorch's 2-D pooling kernels on the calibration H100 (opcost.pool_work_s): (kind, direction, layout) ->
#: (picoseconds an element, picoseconds more per tap it visits); an element is an output of a forward, an input of a
#: backward. Measured: lab/data/h100-pool-ops-2026-12-05 (lab/pool_ops.py), fitted by bench.pools.fit_pool_kernels
#: on two thirds of the shapes (the rest held out; tests/test_pools.py checks this table against the fit and the
#: held-out shapes against it). A profile table, not scalar constants: the gate `pool_kernels` binds it.
POOL_KERNELS: dict[tuple[str, str, str], tuple[float, float]] = {
    ("max", "forward", "nhwc"): (5.82, 1.58), ("max", "forward", "nchw"): (8.18, 0.94),
    ("max", "backward", "nhwc"): (0.28, 4.5), ("max", "backward", "nchw"): (8.43, 1.37),
    ("avg", "forward", "nhwc"): (23.75, 0.0), ("avg", "forward", "nchw"): (11.31, 0.18),
    ("avg", "backward", "nhwc"): (15.86, 1.95), ("avg", "backward", "nchw"): (16.05, 1.68),
}

#: PyTorch's 2-D upsampling kernels on the calibration H100 (opcost.upsample_work_s): (mode, direction, layout) ->
#: (picoseconds an output, picoseconds more per output sharing its source: the fan). Measured:
#: lab/data/h100-upsample-ops-2026-12-07 (lab/upsample_ops.py), fitted by bench.upsample.fit_upsample_kernels on two
#: thirds of the shapes (the rest held out; tests/test_upsample.py checks this table against the fit and the
#: held-out shapes against it). A profile table, not scalar constants: the gate `upsample_kernels` binds it.
#: Nearest's backward is left to its bytes (0, 0: bench.upsample.UNPRICED).
UPSAMPLE_KERNELS: dict[tuple[str, str, str], tuple[float, float]] = {
    ("bilinear", "forward", "nhwc"): (9.126, 0.0), ("bilinear", "forward", "nchw"): (5.719, 0.006),
    ("bilinear", "backward", "nhwc"): (10.268, 0.037), ("bilinear", "backward", "nchw"): (9.385, 0.615),
    ("nearest", "forward", "nhwc"): (6.208, 0.0), ("nearest", "forward", "nchw"): (2.843, 0.0),
    ("nearest", "backward", "nhwc"): (0.0, 0.0), ("nearest", "backward", "nchw"): (0.0, 0.0),
}

CONSTANTS = (
    Constant("OP_KERNEL_FLOOR_S", 2.5e-6, "s", "GPU time of the smallest kernel of an eager step (launch, ramp, tail)",
             "gpu.KERNEL_FLOOR_S (3.4 us inside a CUDA graph, H100)", Method.ASSUMPTION,
             "a graph's floor less its gaps; not measured on its own"),
    Constant("CONV_EFF", 1.0, "fraction", "implicit-GEMM convolutions against the large-GEMM rate", MODELS,
             Method.FITTED, CONV_FIT + "; 0.6 -> 0.9 with CONV_PASS_FIXED_S, once a convolution's bias add was "
             "traced as the elementwise kernel it is (2026-12-05): VGG-16's convolutions, priced 1.6-1.9x of their "
             "profiled time, had hidden it; 0.9 -> 1.1 (and CONV_PASS_FIXED_S 6 -> 7 us) once the H100's NCHW "
             "transposes were profiled (2026-12-06, NCHW_TRANSPOSE_BW_EFF): the NCHW UNets' convolutions, priced "
             "one pass of transposes where their 3x3 ones run about three, had held it down (the fit is flat from "
             "1.05 to 1.1: 0.0994 against 0.0987), and an image stem's rate was taken off it (stem_slowdown); "
             "1.1 -> 1.0 once a GEMM's part-filled last wave was charged at half-size tiles (2026-12-07, "
             "TAIL_WAVE_SHARE): the implicit GEMMs' tails had been charged whole waves"),
    Constant("CONV_PASS_FIXED_S", 7e-6, "s", "each implicit-GEMM pass of a convolution (forward, input or weight "
             "gradient): its kernel's fixed time beside its FLOPs (launch, prologue, the last wave's tail)", MODELS,
             Method.FITTED, CONV_FIT),
    Constant("CONV_EFF_NATIVE_MMA", 1.0, "fraction", "implicit-GEMM convolutions against the large-GEMM rate where "
             "cuDNN's kernels run on the architecture's own full-rate MMA (Volta to Ada, GeForce/professional "
             "Blackwell: catalog/architectures.yaml conv_mma); CONV_EFF is the calibration H100's, whose convolutions "
             "run on the previous generation's mma.sync", "tests/data/published-cross-card.json (calibration split)",
             Method.FITTED, "the grid value (0.6-1.0 by 0.05) with the least mean |log(estimate / published)| over "
             "the calibration split's vision rows (timm's RTX 3090 tables, NVIDIA's ResNet-50 on A100, V100 and T4; "
             "the RTX 4090 held out whole), the other constants as in the table (bench.cross_card.fit_conv_native)",
             held_out=True),
    Constant("NCHW_TRANSPOSE_PASSES", 1.0, "passes", "extra passes over a 16-bit NCHW convolution's tensors on an "
             "architecture whose cuDNN NCHW convolutions were not profiled (catalog/architectures.yaml nchw_conv: "
             "unmeasured; a profiled one, the H100's, prices each transpose: NCHW_TRANSPOSE_BW_EFF)", "-",
             Method.ASSUMPTION, "the H100's profile (three transposes a pass, 2.8-3.4 passes over input and output "
             "on large tensors, none on a 1x1 of stride 1) is not applied elsewhere: on timm's RTX 3090/4090 NCHW "
             "rows it left 31 of 36 within 0.8x-1.25x against 35 of 36 at this pass (mean |log| 0.109 against "
             "0.100), so whether cuDNN transposes there, and which shapes, is not known"),
    Constant("NCHW_1X1_UNALIGNED_SLOWDOWN", 1.8, "x", "the forward of a 16-bit NCHW 1x1 convolution of stride 1 "
             "whose pixels a sample are not a multiple of 8, against its channels-last time, on an architecture "
             "whose NCHW convolutions were profiled (conv_backend.pointwise, not aligned_map: an older GEMM on "
             "misaligned rows, or transposes around an NHWC kernel); its backward is not slowed (0.83x-1.73x, median "
             "1.1x)",
             NCHW_TRANSPOSES, Method.MEASURED, "the median over the eight such shapes of lab/nchw_transposes.py "
             "--third on an H100 (14x14, 7x7, 17x17 and 35x35 maps, batch 64: 0.91x-2.17x; bench.nchw_transposes."
             "unaligned_1x1_slowdown), rounded to 0.1; the NCHW CNNs of lab/data/h100-nchw-unseen-2026-12-06 and the "
             "H200's NCHW ResNet-50 check it"),
    Constant("NCHW_TRANSPOSE_BW_EFF", 0.7, "fraction", "cuDNN's layout transposes around a 16-bit NCHW "
             "convolution of a filter wider than 1x1 (each activation it reads or writes to or from NHWC, once a "
             "pass): their rate against the achieved copy bandwidth (opcost.nchw_transpose_s)", NCHW_TRANSPOSES,
             Method.FITTED, NCHW_TRANSPOSES_FIT),
    Constant("NCHW_FILTER_TRANSPOSE_BW_EFF", 0.25, "fraction", "the same transposes' rate on the filter (KCRS to "
             "KRSC: rows as short as its taps)", NCHW_TRANSPOSES, Method.FITTED, NCHW_TRANSPOSES_FIT),
    Constant("NO_WORKSPACE_CONV_EFF", 0.68, "fraction", "a 16-bit NCHW convolution whose NHWC copies do not fit "
             "beside what is alive (conv_fallback.falls_back): cuDNN's workspace-free kernel, its FLOPs against the "
             "FP32 FMA rate the pricer reads, at 128 or more output channels", CONV_WORKSPACE, Method.FITTED,
             NO_WORKSPACE_FIT),
    Constant("NO_WORKSPACE_CONV_TILE", 128, "channels", "the output channels one tile of that kernel covers: fewer "
             "run at that share of its rate", CONV_WORKSPACE, Method.MEASURED,
             "the rate at 64 output channels over the median at 128 or more, times 128, to the nearest 32, batch "
             "1024 (bench.nchw.fit_no_workspace_tile: 64 channels run at about half the rate)"),
    Constant("GROUP_MMA_CHANNELS", 16, "channels", "a grouped convolution's channels per group that fill one "
             "tensor-core MMA (16-bit k = 16); groups of 4 to 15 channels run cuDNN's grouped implicit GEMM on "
             "tensor cores at that fraction of the rate, groups of 1-3 (depthwise) on CUDA cores",
             "PTX ISA mma.m16n8k16 (16-bit operands)", Method.ASSUMPTION,
             "the MMA shape, assumed to be cuDNN's padding; no stored set binds it both ways: ResNeXt 32x4d's grouped "
             "convolutions are bound by their bytes on the H100 (its profiled convolution time, held out, does not "
             "move) and the GeForce rows move under 0.1 %"),
    Constant("DEPTHWISE_BW_EFF", 0.3, "fraction", "grouped and depthwise convolutions (no tensor-core path) "
             "against streaming bandwidth, per byte of their tensors", MODELS, Method.ASSUMPTION,
             ("the conv class grid's value (tests/data/models-h100.json, calibration "
             "split), now held fixed: that fit is flat across +-25 % (0.2323 at 0.3, 0.2326 at 0.375); x0.75 fails "
             "the held-out op-graph step and the cross-card gates, x1.25 fits both slightly better, so the stored sets "
             "bind it from below only")),
    Constant("CONV_K_RAMP", 100, "inner steps", "a convolution's K ramp (kernels.gemm_time): cuDNN's implicit "
             "GEMMs pipeline the filter taps, so short reductions cost less than a cuBLAS GEMM's", MODELS,
             Method.ASSUMPTION, "set by hand: 0-200 move the convolution class's mean |log error| by under 0.02 "
             "(tests/data/models-h100.json, calibration split)"),
    Constant("CONV_DGRAD_MIN_N", 64, "channels", "the narrowest N tile of cuDNN's dgrad kernels, which run a "
             "transposed convolution's forward (its output channels are the GEMM's N): fewer channels are padded to "
             "it (opcost._implicit_gemms_s)", TRANSPOSED, Method.MEASURED,
             "the kernels' names: 256x64x64 tiles for 64, 3 and 1 output channels, 128x256 and 256x128 for more"),
    Constant("CONV_DGRAD_K_RAMP", 425, "inner steps", "a transposed convolution's dgrad K ramp (kernels.gemm_time): "
             "each stride phase reduces over a few taps of its input channels and pays the tile's prologue and "
             "epilogue over those short K (opcost._implicit_gemms_s)", TRANSPOSED, Method.FITTED, TRANSPOSED_FIT),
    Constant("CONV_DILATED_SLOWDOWN", 1.5, "x", "rate divisor of a widely dilated 2-D convolution on a Hopper card, "
             "whose cuDNN kernels fall back from sm90 to sm80 ones (opcost.dilated_slowdown)", DILATED,
             Method.MEASURED, "the median, rounded to 0.05, of DeepLabV3's ASPP convolutions at dilation 12, 24 and "
             "36 (batch 8 and 16), forward and training, over the same convolutions undilated: 1.47x-1.57x "
             "(bench.dilated.aspp_slowdown)"),
    Constant("CONV_DILATION_SM80_FROM", 8, "dilation", "the dilation from which a 2-D convolution's cuDNN kernels "
             "on a Hopper card are sm80 ones (opcost.dilated_slowdown)", DILATED, Method.ASSUMPTION,
             "between the measured points: dilation 4 ran the sm90 kernels at the undilated time, 12 the sm80 "
             "ones; no convolution between was timed"),
    Constant("WIDE_STEM_SLOWDOWN_FP16", 2.25, "x", "rate divisor, against its 8-channel padding, of an fp16 "
             "convolution of 3 input channels with a 7x7 filter or wider (ResNet's stem): cuDNN's fp16 first-layer "
             "kernels (opcost.stem_slowdown)", STEMS, Method.MEASURED, "the grid value (0.5-10 by 0.25) with the least "
             "mean |log(priced / measured)| over the forward calls of that stem at batch 256 on an H100, two runs "
             "(0.61 and 0.68 ms; bench.stems.fit_wide_stems); was MISALIGNED_SLOWDOWN's 3.0, which priced them 2.2x "
             "too slow; 1.5 -> 2.0 with CONV_EFF 0.6 -> 0.9 (the same calls, refitted), 2.0 -> 2.25 once "
             "measured against the GEMM rate (CONV_EFF no longer applies to a stem)"),
    Constant("WIDE_STEM_SLOWDOWN_BF16", 6.75, "x", "the same for a bf16 one, which has no first-layer kernel of its "
             "own", STEMS, Method.MEASURED, "the same grid and fit over its bf16 calls (1.84 and 1.86 ms); "
             "MISALIGNED_SLOWDOWN's 3.0 priced them 0.74x; 4.0 -> 6.0 with CONV_EFF 0.6 -> 0.9, 6.0 -> 6.75 once "
             "measured against the GEMM rate"),
    Constant("PATCHIFY_SLOWDOWN", 7.25, "x", "how much slower than its 8-channel padding a 16-bit patchify of 3 "
             "channels runs (a filter of 4 or more whose stride is its width: ViT's 16x16/16; opcost.stem_slowdown)",
             STEMS, Method.MEASURED, "the grid value (0.5-10 by 0.25) with the least mean |log(priced / measured)| "
             "over ViT's 16x16/16 patchify forward calls on an H100, fp16 and bf16, 3 channels (bench.stems."
             "fit_patchify); ConvNeXt's 4x4/4 stem is held out and checks it; 6.5 -> 7.25 against the GEMM rate "
             "(CONV_EFF 0.9 no longer applies to a stem)"),
    Constant("NATIVE_DEPTHWISE_FWD_EFF", 0.037, "fraction", "an NCHW depthwise convolution's forward that "
             "PyTorch runs with its own CUDA kernels (opcost.cudnn_depthwise: bf16 always, fp16 below 32 channels "
             "and most stride-2 shapes): its FLOPs against the FP32 FMA rate the pricer reads (datasheet x MFU)",
             DEPTHWISE, Method.FITTED, DEPTHWISE_FIT),
    Constant("NATIVE_DEPTHWISE_BWD_EFF", 0.013, "fraction", "the same convolution's backward (input and weight "
             "gradients: conv_depthwise2d_backward_kernel, conv_depthwise2d_grad_weight_kernel), its FLOPs against "
             "the FP32 FMA rate", DEPTHWISE, Method.FITTED, DEPTHWISE_FIT),
    Constant("NCHW_BN_CHANNEL_BPS", 2.4e9, "B/s per channel", "a train-mode batch norm's forward on NCHW tensors: "
             "the bytes of its input each channel's thread block streams per second (opcost.nchw_batch_norm_s)",
             BN_LAYOUTS, Method.FITTED, BN_FIT),
    Constant("NCHW_BN_CHANNEL_BPS_BWD", 1.3e9, "B/s per channel", "the same batch norm's backward, per byte of its "
             "input and channel", BN_LAYOUTS, Method.FITTED, BN_FIT),
    Constant("CUDA_CORE_CONV_EFF", 0.2, "fraction", "convolutions with no tensor-core path (grouped, depthwise, "
             "3-channel stems) against the FP32 FMA rate", MODELS, Method.FITTED, CONV_FIT),
    Constant("STREAM_BW_EFF", 1.0, "fraction", "elementwise ops PyTorch runs vectorized (every tensor dense in one "
             "layout, one dtype) against the achieved copy bandwidth (BANDWIDTH x datasheet)", MODELS, Method.FITTED,
             STREAM_FIT),
    Constant("STRIDED_BW_EFF", 0.5, "fraction", "elementwise ops with a broadcast, transposed or permuted input or "
             "mixed dtypes (per-element offsets, no vector loads), against copy bandwidth", MODELS, Method.FITTED,
             STREAM_FIT),
    Constant("NORM_BW_EFF", 0.6, "fraction", "batch norm's per-channel affine pass (eval mode) against copy "
             "bandwidth", MODELS, Method.FITTED, NORM_FIT),
    Constant("BN_STATS_PASSES", 2.25, "affine passes", "a train-mode batch or group norm forward: the statistics "
             "pass (a Welford reduction per channel or group) and the affine pass, in affine passes", MODELS,
             Method.FITTED, NORM_FIT),
    Constant("NORM_BWD_PASSES", 1.5, "x forward", "a norm's backward (reduce over input and gradient, then the "
             "elementwise pass, the weight gradient a column reduction) per byte, against its forward", MODELS,
             Method.FITTED, NORM_FIT),
    Constant("LN_BW_EFF", 1, "fraction", "layer and RMS norm forward over long rows against copy bandwidth",
             MODELS, Method.FITTED, NORM_FIT),
    Constant("LN_ROW_BYTES", 1600, "bytes", "row length at which a layer norm (one thread block per row) reaches "
             "half of LN_BW_EFF: ConvNeXt's and Swin's 96-channel rows stream at a sixth of copy bandwidth", MODELS,
             Method.FITTED, NORM_FIT),
    Constant("GN_HALF_BLOCKS", 50, "blocks", "sample x group count at which a group norm (one thread block per "
             "sample and group) reaches half its rate: a UNet at batch 1 has 32", MODELS, Method.ASSUMPTION,
             ("the norm class grid's lowest value (tests/data/models-h100.json, "
             "calibration split), now held fixed: few cases have group norms, and +-25 % moves that fit 0.2322 -> "
             "0.2298 / 0.2344, inside its gate; no stored set binds it")),
    Constant("REDUCTION_BW_EFF", 0.7, "fraction", "reductions (sums, softmax, losses) against copy bandwidth", MODELS,
             Method.FITTED, GPU_FIT),
    Constant("GATHER_BW_EFF", 0.5, "fraction", "gathers and scatters (embeddings, GNN messages) against streaming "
             "bandwidth", "-", Method.ASSUMPTION, "set by hand, not fitted"),
    Constant("RNN_STEP_FLOOR_S", 19e-6, "s", "one time step of one cuDNN RNN layer in the forward, at the least "
             "(its small GEMM and cell kernel, latency-bound). In inference it is the calibration host's time to issue "
             "the step's kernels, and scales with the host's dispatch probe: five call sweeps on four hosts ran their "
             "inference steps at 1.8-2.1x the probe's op time (12 us on a host probing 6.3, 18 on ones probing 10)",
             "lab/data/h200-rnn-2026-11-27/rnn_calls.json",
             Method.MEASURED, "the per-step term of a least-squares line through 80 inference calls on an H200, "
             "rounded to 1 us (bench.recurrent.fit_rnn_call); was 25 us set by hand"),
    Constant("RNN_LAUNCHED_STEP_GPU_S", 5e-6, "s", "the GPU's own part of an inference RNN time step the host "
             "issues (opcost._rnn_step_s): its two kernels, the state's GEMM and the cell's, at OP_KERNEL_FLOOR_S "
             "each", "-", Method.ASSUMPTION, "2 x OP_KERNEL_FLOOR_S; the steps wait on the host (RNN_STEP_FLOOR_S), "
             "which hides this on every stored set. Was RNN_STEP_FLOOR_S itself until 2026-12-06, which held a "
             "faster host's inference steps at the calibration host's (the small-hidden sweep's inference calls "
             "34 of 72 within 0.8x-1.25x, 67 of 72 since)"),
    Constant("RNN_PERSIST_STEP_S", 6.8e-6, "s", "one time step of one cuDNN RNN layer in a training call that "
             "runs its steps inside cuDNN's static persistent kernel (kernels.rnn_persist_algo: one-layer calls of "
             "hidden a multiple of 128, up to 1,024), at the least: the kernel's grid-wide wait between steps",
             "lab/data/h200-rnn-2026-11-27/rnn_calls.json", Method.FITTED,
             "the value on a 0.1 us grid with the least mean |log error| of the static kernel's training calls on an "
             "H200 (the one-layer LSTM of hidden 1,024 at batch 64, 1-256 steps), the training harness's own time "
             "taken off (bench.recurrent.fit_rnn_persist_step); 2.8 us while one floor priced both persistent "
             "kernels, and the small-hidden one's long calls came out 0.46x-1.7x by batch"),
    Constant("RNN_PERSIST_SMALL_STEP_S", 0.44e-6, "s", "one time step of one layer and direction inside cuDNN's "
             "small-hidden persistent training kernel (kernels.rnn_persist_algo: hidden <= 192 forward, <= 128 "
             "backward; RNN_blockPersist_fp/bp_*_HMMA), whose CTAs hold the weights in registers: its fixed part, "
             "whatever the batch up to 1,024 rows (RNN_PERSIST_SMALL_STEP_UNIT_S a hidden unit on top: 1.0 us at "
             "hidden 32, 1.7 at 128)", PERSIST_KERNELS, Method.MEASURED,
             "the intercept of a least-squares line through the device time per step of the 180 forward persistent "
             "kernels of batch <= 1,024 in the profiled sweep (LSTM and GRU, hidden 32-160, 1-3 layers, 1-2 "
             "directions, 128 steps; bench.recurrent.read_persist_kernels), to 0.01 us; 6 ns (LSTM) and 8 ns (GRU) a "
             "batch row while the backward's bias-gradient kernel was read as the persistent step's rows"),
    Constant("RNN_PERSIST_SMALL_STEP_UNIT_S", 12.3e-9, "s per hidden unit", "what a hidden unit adds to "
             "RNN_PERSIST_SMALL_STEP_S: the step's dependent work grows with the state's width", PERSIST_KERNELS,
             Method.MEASURED, "the slope of the same line, to 0.1 ns: 157 of the 180 kernels within 0.8x-1.25x of "
             "it, 96 with one figure for every hidden size"),
    Constant("RNN_BIAS_GRAD_ROW_S", 9.3e-9, "s per batch row and step", "the backward of a cuDNN LSTM (or plain RNN) "
             "training call: its bias gradient (GENERIC_elementWise_bp2, one launch a layer and direction) walks "
             "every batch row of every step at about this rate whatever the hidden size; the launches of a call's "
             "layers and directions run beside each other (low occupancy), so a call pays it once",
             PERSIST_KERNELS, Method.MEASURED, "the median over the one-layer, one-direction LSTM calls of batch "
             ">= 1,024 (hidden 32-160) of the kernel's device time / (batch x steps) "
             "(bench.recurrent.read_persist_kernels): 7.5-10.2 ns; at batch 64 about 5"),
    Constant("RNN_GRU_BIAS_GRAD_ROW_S", 24.1e-9, "s per batch row and step", "RNN_BIAS_GRAD_ROW_S for a GRU "
             "(GRU_elementWise_bp2)", PERSIST_KERNELS, Method.MEASURED,
             "as RNN_BIAS_GRAD_ROW_S, over the GRU calls: 21.8-24.6 ns; at batch 64 about 11"),
    Constant("RNN_LAYER_CALL_S", 6e-4, "s", "one layer of one cuDNN RNN call, before its first time step "
             "(descriptors, workspace, set-up launches); a bidirectional layer pays it per direction (cuDNN's "
             "pseudo-layers; lab/data/h100-rnn-directions-2026-12-07)", "lab/data/h200-rnn-2026-11-27/rnn_calls.json",
             Method.MEASURED, "the per-layer term of a least-squares line through 80 inference calls (LSTM and GRU, "
             "hidden 128 and 1024, 1 and 2 layers, batch 64 and 512, 1-256 steps) on an H200, rounded to 10 us "
             "(bench.recurrent.fit_rnn_call)"),
    Constant("RNN_BACKWARD_CALL_S", 4.5e-4, "s", "one cuDNN RNN backward call's own set-up (backward data and "
             "weights, the reserve space), beside each layer's RNN_LAYER_CALL_S: host work, like the layers' set-up",
             "lab/data/h200-rnn-2026-11-27/rnn_calls.json", Method.FITTED, "the value on a 10 us grid with the least "
             "mean |log error| of the op model's 80 training calls (1-256 steps) on an H200, each priced as a step "
             "of its own ops, less the training harness's own time (autocast, the loss, autograd's engine around a "
             "Linear layer: 0.44-0.65 ms, timed on an H200 on 2026-12-05, lab/data/h200-rnn-calls-2026-12-05; "
             "bench.recurrent.fit_rnn_backward_call). 0.98 ms with the harness left in, which a model's own graph "
             "prices again as its loss ops and its step's fixed host time; 0.64 ms on the 48 calls of at most 16 "
             "steps while the set-up was also charged to the GPU's timeline, 0.9 ms before that"),
    Constant("OPTIMIZER_PARAMS_PER_LAUNCH", 2e7, "params", "parameters one fused-AdamW launch covers", "-",
             Method.ASSUMPTION, "PyTorch's multi-tensor apply chunking, not measured"),
    Constant("HOST_FWD_OPS_INFERENCE", 3.5, "x HOST_OP_S", "host time of one forward op that launches a kernel "
             "autograd does not record (inference, a frozen base; module code and Python around it included)",
             MODELS, Method.FITTED, HOST_FIT),
    Constant("HOST_FWD_OPS_TRAINING", 5.25, "x HOST_OP_S", "host time of one forward op that launches a kernel, "
             "recorded by autograd (its node and saved tensors)", MODELS, Method.FITTED, HOST_FIT),
    Constant("HOST_BWD_OPS", 3.5, "x HOST_OP_S", "host time of one backward op (the autograd engine's node, its "
             "gradient accumulation and allocator work)", MODELS, Method.FITTED, HOST_FIT),
    Constant("HOST_VIEW_OPS", 0.6, "x HOST_OP_S", "host time of one traced op that launches no kernel (views, "
             "reshapes, detach)", MODELS, Method.FITTED, HOST_FIT),
    Constant("HOST_STEP_FIXED", 29, "x HOST_OP_S", "an eager training step's forward and backward beyond their "
             "ops, whatever the model: autocast's context and the loss's call around the model (17 of it), "
             "autograd's engine taking the graph from loss.backward (12); priced in the forward", TRAIN_STEP_HOST,
             Method.MEASURED, STEP_PARTS_FIT),
    Constant("HOST_OPTIMIZER_STEP", 17, "x HOST_OP_S", "an eager training step's optimizer phase (fused AdamW's "
             "step and zero_grad), whatever the model", PHASE_OVERLAP, Method.MEASURED, OPTIMIZER_FIT),
    Constant("HOST_OPTIMIZER_PER_TENSOR", 0.87, "x HOST_OP_S", "what each parameter tensor adds to "
             "HOST_OPTIMIZER_STEP (the step's and zero_grad's Python loops over the tensors)", PHASE_OVERLAP,
             Method.MEASURED, OPTIMIZER_FIT),
    Constant("WORKSPACE_BYTES", 64 * 2**20, "bytes", "cuBLAS and cuDNN workspaces PyTorch allocates on the first "
             "matmul and convolution (max_memory_allocated counts them)", MODELS, Method.ASSUMPTION,
             "set by hand near the MLP's gap (75 MB measured for 12 MB of weights and inputs); not fitted"),
)
