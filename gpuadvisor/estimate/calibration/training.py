"""Constants of the parallel training model (estimate/parallel/): the network between GPUs, the frameworks'
compute efficiencies and overlaps. The fitted ones come from the calibration split of
tests/data/published-training.json (tools/fit_training.py; every third published run is held out)."""

from __future__ import annotations

from gpuadvisor.estimate.calibration.record import Constant, Method

PUBLISHED = "tests/data/published-training.json"
FIT = ("grid search over the calibration split's published runs of this framework, least mean "
       "|log(estimate / published)| (tools/fit_training.py)")
DGX_H100 = "https://docs.nvidia.com/dgx/dgxh100-user-guide/introduction-to-dgxh100.html"

CONSTANTS = (
    Constant("NODE_NET_GBS_PER_GPU", 50.0, "GB/s", "node network bandwidth per GPU between nodes (one 400 Gb/s "
             "InfiniBand NDR / RoCE NIC per GPU), when the user gives none", f"{DGX_H100} (8x ConnectX-7, 400 Gb/s)",
             Method.ASSUMPTION, "400 Gb/s = 50 GB/s per direction: a DGX H100's NICs, assumed of the user's cluster "
             "when none is given. The published multi-node runs bind it one way only: at 1.25x the mean error grows "
             "(published_training_mean_all), at 0.75x it shrinks (NeMo's GPT-3 20B 1.14x -> 1.07x), the achieved "
             "share of the line rate (NET_EFFICIENCY) being an assumption too (a datasheet figure until FP8_REACH, "
             "2026-12-06)"),
    Constant("NET_EFFICIENCY", 0.8, "fraction", "bus bandwidth a collective reaches over the node network, as a "
             "fraction of the NIC line rate", "-", Method.ASSUMPTION, "NCCL over NDR typically reaches 40-45 of "
             "50 GB/s; not measured here"),
    Constant("NVLINK_BUSBW_FRACTION", 0.4, "fraction", "all-reduce bus bandwidth inside an NVLink domain, as a "
             "fraction of the catalog's (bidirectional) NVLink figure", "-", Method.ASSUMPTION,
             "about 360 of 900 GB/s on an H100 HGX without NVLink SHARP; not measured here"),
    Constant("GPUS_PER_NODE", 8, "GPUs", "GPUs that share an NVLink domain (HGX/DGX boards), when the user gives "
             "none", DGX_H100, Method.DATASHEET, "8 GPUs per HGX board"),
    Constant("NVL72_DOMAIN", 72, "GPUs", "GPUs of one NVLink domain on GB200/GB300 NVL72 racks",
             "https://www.nvidia.com/en-us/data-center/gb200-nvl72/", Method.ASSUMPTION,
             "72 GPUs per rack, a product fact assumed of the user's rack; no stored set binds it both ways: the "
             "published GB200 runs move under 0.1 % when it moves by a quarter (their layouts fit either domain)"),
    Constant("SDPA_FLASH_EFF", 0.55, "fraction", "PyTorch SDPA's FlashAttention-2 kernels against the attention rate "
             "the kernel model was fitted to (cuDNN/FA3-class fused attention, as TransformerEngine runs it)",
             "https://arxiv.org/abs/2407.08608 (FlashAttention-3, H100: FA2 about 350 TFLOP/s forward and less in "
             "backward at head dim 128, FA3 and cuDNN 600+)", Method.ASSUMPTION,
             "about 330 of the 585 TFLOP/s the kernel model gives long causal sequences at head dim 128"),
    Constant("FP8_CAST_BYTES", 3.0, "bytes per element", "bytes an FP8 cast moves per GEMM input element "
             "(read bf16, write fp8), forward and backward", "-", Method.ASSUMPTION,
             "2 read + 1 written, counted from the cast, assumed unfused; no stored set binds it both ways: the "
             "published FP8 runs move under 0.5 % when it moves by a quarter (the casts are a small share of a step)"),
    Constant("SELECTIVE_AC_KEEP", 0.6, "fraction", "share of a layer's activations selective checkpointing keeps "
             "(matmul outputs kept, elementwise recomputed)", "-", Method.ASSUMPTION, "not measured here"),
    Constant("MEGATRON_EFF", 0.93, "fraction", "Megatron-Core / NeMo with TransformerEngine: achieved share of the "
             "kernel-level step time (launch gaps, imperfect overlap)", PUBLISHED, Method.FITTED,
             f"{FIT}; 0.99 while FP8 GEMMs were priced at an assumed 0.6 of the peak, before FP8_REACH"),
    Constant("MEGATRON_ELEMENTWISE", 0.35, "fraction", "bytes TransformerEngine's fused kernels move, as a share "
             "of eager PyTorch's elementwise bytes", "-", Method.ASSUMPTION, "fused norm+cast, bias+activation, "
             "fused cross-entropy; not measured here"),
    Constant("MEGATRON_TP_OVERLAP", 0.5, "fraction", "share of tensor-parallel communication hidden behind GEMMs "
             "(TP communication overlap)", "-", Method.ASSUMPTION, "not measured here"),
    Constant("FSDP2_ELEMENTWISE", 1.9, "factor", "bytes eager torchtitan (FSDP2) moves in memory-bound kernels, as a "
             "multiple of the traffic model's eager elementwise bytes: what eager loses against the kernel-level step "
             "is memory traffic (fp32 upcasts in RMSNorm and RoPE, unfused SwiGLU, FSDP2's copy-in and copy-out), so "
             "it costs each card its own bandwidth, not a share of its tensor rate", PUBLISHED, Method.FITTED,
             f"{FIT}; out of sample, llm-foundry's 16 A100 FSDP runs (never fitted) go from a geometric mean of 0.82 "
             "(as a 0.8 share of the step) to 0.92"),
    Constant("COMPILE_EFF", 0.79, "fraction", "torchtitan FSDP2 + torch.compile: achieved share of the kernel-level "
             "step time", PUBLISHED, Method.FITTED, f"{FIT}; 0.83 before FP8_REACH (FP8 GEMMs at an assumed 0.6)"),
    Constant("COMPILE_ELEMENTWISE", 0.5, "fraction", "bytes torch.compile's fused kernels move, as a share of eager "
             "PyTorch's elementwise bytes", "-", Method.ASSUMPTION, "not measured here"),
    Constant("ASYNC_TP_OVERLAP", 0.5, "fraction", "share of tensor-parallel communication Async TP hides",
             "https://discuss.pytorch.org/t/distributed-w-torchtitan-introducing-async-tensor-parallelism-in-"
             "pytorch/209487", Method.ASSUMPTION, "not measured here"),
    Constant("HF_EFF", 0.9, "fraction", "Hugging Face Trainer (eager): achieved share of the kernel-level step time "
             "beyond the host dispatch the eager model already counts", "-", Method.ASSUMPTION,
             "no published multi-GPU Trainer run in the set; single-GPU eager steps are gated elsewhere"),
    Constant("DP_OVERLAP_WINDOW", 1.0, "x backward of one micro-batch", "data-parallel gradient reduction hidden "
             "behind the backward of the last micro-batch (overlap_grad_reduce / FSDP prefetch)", "-",
             Method.ASSUMPTION, "the reduction of all buckets but the last runs under the backward"),
)
