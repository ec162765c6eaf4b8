#!/usr/bin/env python3
"""Build tests/data/published-cross-card.json and published-cross-card-2.json: published results on cards other than
the H100/H200 that the project did not fit anything on, with their exact source and conditions (issue 34, "Validation
across cards").

  python3 tools/published_cross_card.py          # rewrite the data files
  python3 tools/published_cross_card.py --check  # exit 1 if a stored file is not what this script writes

Rows collected after the first file's held-out split was fixed go to the second file, which takes the same rule
within itself: a new row never moves another row between the calibration and held-out splits (the first file's
calibration rows fit CONV_EFF_NATIVE_MMA).

The file holds the new rows only; `reused` names the rows of the older published files that belong to the set too
(bench/cross_card.py reads them from there: they are not copied). Every figure below was read off the document named
in its source block on READ, through the project's public-repository index (the commit is the stored version read):

* timm (huggingface/pytorch-image-models) results/: the RTX 3090 training and inference CSVs and the RTX 4090
  inference CSVs only (NCHW and NHWC, AMP float16, benchmark.py). timm's files for other cards are deliberately not
  read: they are kept out of this set because the project is judged on them. Only models the tool ships a traced graph
  for (gpuadvisor/data/graphs) are taken, at the CSVs' 224 px rows; timm models whose architecture torchvision ships
  under another name are estimated with the torchvision graph (`tool_model`, see TIMM_TO_TOOL).
* MosaicML llm-foundry scripts/train/benchmarking/README.md: MPT pretraining throughput on 8 to 64 A100s (Composer,
  FSDP FULL_SHARD, FlashAttention/Triton attention); MPT shapes from scripts/train/yamls/pretrain/mpt-*.yaml.
* TensorRT-LLM docs/source/performance/perf-overview.md at v0.17: the L40S, A100-SXM4-80GB and GH200 columns not
  already in tests/data/published-serving.json (that file holds the v0.17 L40S and A100 Llama 3.1 8B rows at
  128/128, 128/2048, 1000/1000 and 2048/128).

Second file (read 2026-12-05):

* IBM's fms-fsdp README (foundation-model-stack/fms-fsdp): Llama 2 7B, 13B, 34B and 70B pretraining throughput on
  128 A100s (eager PyTorch FSDP, SDPA's FlashAttention-2, bf16 mixed precision, 4,096-token sequences: the training
  config's seq_length); 7B and 13B under HSDP (sharded inside a node, replicated across), 34B and 70B under FSDP
  with activation checkpointing. Shapes from fms_fsdp/utils/config_utils.py.

Third file (read 2026-12-07):

* Lambda's deeplearning-benchmark (lambdal/deeplearning-benchmark): one-GPU training throughput of NVIDIA's
  DeepLearningExamples in NGC pytorch:22.09-py3 and later (pytorch/README.md), fp16 table: ResNet-50 v1.5 (AMP,
  synthetic data, NCHW, images/s) and BERT-base SQuAD fine-tuning (fp16, 384 tokens, sequences/s) on eleven cards
  besides the H100 SXM, at the batch of each card's memory template (pytorch/pytorch-train-bs-fp16.csv); and the
  FP32 table's ResNet-50 (pytorch-train-throughput-fp32.csv: cuDNN's TF32 convolutions where the card has them). Its
  FP32 BERT is left out: whether its matmuls ran on TF32 (NGC's containers turn it on, TORCH_ALLOW_TF32_CUBLAS_OVERRIDE)
  is not in the table, and the condition decides it: with `--tf32` the tool gives 1.29x-1.63x on every card, the same
  table's H100 SXM 1.59x, without it 0.19x-0.29x on the cards that have TF32. Its other
  models (SSD, GNMT, NCF, Tacotron 2, WaveGlow, Transformer-XL) have no graph the tool ships.

Left out, with the reason: MLPerf Training (time to train, no per-GPU rate without the epoch count per submission)
and MLPerf Inference (INT8 TensorRT engines the tool does not price for vision); L4 (no published result found that
the tool can estimate); torchtitan's A100 figures (its docs/performance.md publishes H100 runs only).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: tools/ and bench/ import from the repository root
    sys.path.insert(0, str(ROOT))

from bench.cross_card import HELD_OUT_CARD, HELD_OUT_RULE, REUSED, held_out_flags  # noqa: E402
from tools.published_serving import Result  # noqa: E402
from tools.published_training import Entry  # noqa: E402

OUT = ROOT / "tests" / "data" / "published-cross-card.json"
OUT2 = ROOT / "tests" / "data" / "published-cross-card-2.json"
OUT3 = ROOT / "tests" / "data" / "published-cross-card-3.json"
READ = "2026-11-27"
READ2 = "2026-12-05"
READ3 = "2026-12-07"

# ---- timm: RTX 3090 (training, inference) and RTX 4090 (inference) ------------------------------------------------
TIMM_REPO = "huggingface/pytorch-image-models"
TIMM_FILES = {  # (card, mode, layout): (path, commit of the stored version read, PyTorch / CUDA of the run)
    ("GeForce RTX 3090", "training", "nchw"): ("results/benchmark-train-amp-nchw-pt112-cu113-rtx3090.csv",
                                               "c865028c34fc05cc7deea8e753b30d8cd1952591", "PyTorch 1.12, CUDA 11.3"),
    ("GeForce RTX 3090", "training", "nhwc"): ("results/benchmark-train-amp-nhwc-pt112-cu113-rtx3090.csv",
                                               "c865028c34fc05cc7deea8e753b30d8cd1952591", "PyTorch 1.12, CUDA 11.3"),
    ("GeForce RTX 3090", "inference", "nchw"): ("results/benchmark-infer-amp-nchw-pt240-cu124-rtx3090.csv",
                                                "5c33776aa59f0f05bfb8008ff546ed4c09083f1a", "PyTorch 2.4.0, CUDA 12.4"),
    ("GeForce RTX 3090", "inference", "nhwc"): ("results/benchmark-infer-amp-nhwc-pt240-cu124-rtx3090.csv",
                                                "5c33776aa59f0f05bfb8008ff546ed4c09083f1a", "PyTorch 2.4.0, CUDA 12.4"),
    ("GeForce RTX 4090", "inference", "nchw"): ("results/benchmark-infer-amp-nchw-pt240-cu124-rtx4090.csv",
                                                "5c33776aa59f0f05bfb8008ff546ed4c09083f1a", "PyTorch 2.4.0, CUDA 12.4"),
    ("GeForce RTX 4090", "inference", "nhwc"): ("results/benchmark-infer-amp-nhwc-pt240-cu124-rtx4090.csv",
                                                "ee5b1e8217134e9f016a0086b793c34abb721216", "PyTorch 2.4.0, CUDA 12.4"),
}
#: timm's model name -> the tool's traced graph of the same architecture (same layers, shapes and parameter count)
TIMM_TO_TOOL = {
    "resnet18": "torchvision:resnet18", "resnet50": "torchvision:resnet50", "resnet152": "torchvision:resnet152",
    "densenet121": "torchvision:densenet121", "efficientnet_b0": "torchvision:efficientnet_b0",
    "mobilenetv3_large_100": "torchvision:mobilenet_v3_large", "vgg16": "torchvision:vgg16",
    "vit_base_patch16_224": "torchvision:vit_b_16", "convnext_tiny": "timm:convnext_tiny",
    "resnext50_32x4d": "timm:resnext50_32x4d", "swin_tiny_patch4_window7_224": "timm:swin_tiny_patch4_window7_224",
    "vit_small_patch16_224": "timm:vit_small_patch16_224",
}
#: (card, mode, layout) -> timm model -> (samples/s, batch), the 224 px rows of the CSV named in TIMM_FILES
TIMM_ROWS: dict[tuple[str, str, str], dict[str, tuple[float, int]]] = {
    ("GeForce RTX 3090", "training", "nchw"): {
        "resnet18": (2764.22, 512), "mobilenetv3_large_100": (2167.29, 512), "efficientnet_b0": (1459.11, 384),
        "vit_small_patch16_224": (1052.92, 384), "resnet50": (826.06, 512), "convnext_tiny": (813.16, 256),
        "densenet121": (730.11, 256), "resnext50_32x4d": (663.39, 384), "swin_tiny_patch4_window7_224": (646.76, 256),
        "vgg16": (465.36, 384), "vit_base_patch16_224": (390.86, 192), "resnet152": (370.08, 192)},
    ("GeForce RTX 3090", "training", "nhwc"): {
        "resnet18": (3481.78, 512), "mobilenetv3_large_100": (2732.43, 512), "efficientnet_b0": (1751.72, 512),
        "resnet50": (1218.01, 512), "vit_small_patch16_224": (1057.92, 384), "resnext50_32x4d": (1001.03, 384),
        "densenet121": (913.65, 256), "convnext_tiny": (819.24, 256), "swin_tiny_patch4_window7_224": (648.69, 256),
        "vgg16": (546.06, 384), "resnet152": (501.44, 192), "vit_base_patch16_224": (392.99, 192)},
    ("GeForce RTX 3090", "inference", "nchw"): {
        "mobilenetv3_large_100": (11135.72, 1024), "resnet18": (9260.29, 1024), "efficientnet_b0": (6924.93, 1024),
        "vit_small_patch16_224": (4584.86, 1024), "resnet50": (3219.06, 1024), "convnext_tiny": (3090.39, 1024),
        "densenet121": (2764.41, 1024), "resnext50_32x4d": (2577.31, 1024),
        "swin_tiny_patch4_window7_224": (1994.25, 1024), "vit_base_patch16_224": (1570.66, 1024),
        "resnet152": (1373.51, 1024), "vgg16": (1021.7, 1024)},
    ("GeForce RTX 3090", "inference", "nhwc"): {
        "mobilenetv3_large_100": (13556.89, 1024), "resnet18": (11188.75, 1024), "efficientnet_b0": (8241.4, 1024),
        "vit_small_patch16_224": (4616.6, 1024), "resnet50": (3729.86, 1024), "resnext50_32x4d": (3135.91, 1024),
        "convnext_tiny": (3120.16, 1024), "densenet121": (3031.71, 1024),
        "swin_tiny_patch4_window7_224": (2008.94, 1024), "vgg16": (1729.39, 1024), "resnet152": (1606.24, 1024),
        "vit_base_patch16_224": (1572.08, 1024)},
    ("GeForce RTX 4090", "inference", "nchw"): {
        "mobilenetv3_large_100": (14191.17, 1024), "resnet18": (13537.15, 1024), "efficientnet_b0": (8926.12, 1024),
        "vit_small_patch16_224": (7693.38, 1024), "convnext_tiny": (4796.99, 1024), "resnet50": (4217.6, 1024),
        "densenet121": (3614.99, 1024), "resnext50_32x4d": (3427.06, 1024), "vit_base_patch16_224": (2787.15, 1024),
        "swin_tiny_patch4_window7_224": (2659.27, 1024), "vgg16": (2165.35, 1024), "resnet152": (1941.85, 1024)},
    ("GeForce RTX 4090", "inference", "nhwc"): {
        "resnet18": (18247.43, 512), "mobilenetv3_large_100": (16891.88, 512), "efficientnet_b0": (9831.68, 512),
        "vit_small_patch16_224": (7695.68, 512), "resnet50": (5088.39, 512), "convnext_tiny": (4844.53, 512),
        "resnext50_32x4d": (4219.51, 512), "densenet121": (3896.08, 512), "vgg16": (2904.86, 512),
        "vit_base_patch16_224": (2843.0, 512), "swin_tiny_patch4_window7_224": (2744.11, 512),
        "resnet152": (2347.77, 512)},
}


def _timm_rows() -> list[dict[str, Any]]:
    out = []
    for (card, mode, layout), models in TIMM_ROWS.items():
        path, commit, stack = TIMM_FILES[(card, mode, layout)]
        src = {"url": f"https://github.com/{TIMM_REPO}/blob/{commit}/{path}", "repo": TIMM_REPO, "path": path,
               "commit": commit, "document": f"timm benchmark results, {path.rsplit('/', 1)[1]}", "read": READ}
        for name, (rate, batch) in models.items():
            tool = TIMM_TO_TOOL[name]
            same = tool.endswith(":" + name)
            out.append({
                "id": f"timm-{card.split()[-1].lower()}-{'train' if mode == 'training' else 'infer'}-{layout}-{name}",
                "kind": "vision", "card": card, "model": tool, "published_model": f"timm:{name}", "mode": mode,
                "batch": batch, "channels_last": layout == "nhwc", "img_size": 224,
                "framework": f"timm benchmark.py, {stack}, eager (no torch.compile)",
                "precision": "AMP float16",
                "metric": "images_per_s", "value": rate,
                "source": {**src, "table": f"row model={name}, {'train' if mode == 'training' else 'infer'}_img_size="
                                           "224: samples_per_sec"},
                "notes": ("" if same else f"timm's {name} is estimated with the tool's graph of {tool}, the same "
                                          "architecture; ") + ("training step: forward, cross-entropy, backward and "
                                                               "SGD (timm's --opt default) under AMP"
                                                               if mode == "training" else "forward only, no_grad")
                         + "; timm's AMP runs float16 (--amp-dtype default), estimated in bf16: the same tensor rate",
            })
    return out


# ---- llm-foundry: MPT on A100 -------------------------------------------------------------------------------------
FOUNDRY_REPO = "mosaicml/llm-foundry"
FOUNDRY_COMMIT = "8c8dd48f72168c5d51e2f7b151595892a8fba43d"
FOUNDRY = {"url": f"https://github.com/{FOUNDRY_REPO}/blob/{FOUNDRY_COMMIT}/scripts/train/benchmarking/README.md",
           "document": "llm-foundry MPT Training Benchmarks (scripts/train/benchmarking/README.md)",
           "version": "Composer + PyTorch FSDP, MosaicML platform, 1600 Gbps RoCE between nodes"}
#: MPT shapes, scripts/train/yamls/pretrain/mpt-<size>.yaml: d_model, n_heads, n_layers (expansion_ratio 4, vocabulary
#: 50,368, ALiBi, no biases, low-precision LayerNorm, GELU MLP, fused Wqkv, output head tied to the embedding)
MPT = {"125m": (768, 12, 12), "350m": (1024, 16, 24), "760m": (1536, 12, 24), "1b": (2048, 16, 24),
       "3b": (2560, 20, 32), "7b": (4096, 32, 32), "13b": (5120, 40, 40), "30b": (7168, 56, 48)}


def mpt(size: str) -> dict[str, object]:
    hidden, heads, layers = MPT[size]
    return {"name": f"mpt-{size}", "kind": "decoder", "num_layers": layers, "hidden_size": hidden, "num_heads": heads,
            "num_kv_heads": heads, "head_dim": hidden // heads, "intermediate_size": 4 * hidden, "vocab_size": 50368,
            "tied_embeddings": True, "norm": "layernorm", "mlp_act": "gelu", "attn_bias": False, "fused_qkv": True,
            "mlp_bias": False,
            "source": f"{FOUNDRY_REPO} scripts/train/yamls/pretrain/mpt-{size}.yaml @ {FOUNDRY_COMMIT}"}


#: (table, size, seq, GPUs, micro batch, global batch (sequences), activation checkpointing, tokens/s/GPU, precision)
FOUNDRY_ROWS = [
    ("A100 80GB", "125m", 2048, 8, 40, 640, False, 142830, "amp_bf16"),
    ("A100 80GB", "350m", 2048, 8, 32, 512, False, 58782, "amp_bf16"),
    ("A100 80GB", "760m", 2048, 8, 24, 384, False, 32434, "amp_bf16"),
    ("A100 80GB", "1b", 2048, 8, 14, 448, False, 20513, "amp_bf16"),
    ("A100 80GB", "3b", 2048, 8, 10, 160, False, 10811, "amp_bf16"),
    ("A100 80GB", "7b", 2048, 8, 6, 96, False, 4641, "amp_bf16"),
    ("A100 80GB", "13b", 2048, 8, 2, 48, False, 2262, "amp_bf16"),
    ("A100 80GB", "30b", 2048, 8, 3, 504, True, 916, "amp_bf16"),
    ("A100 80GB", "1b", 8192, 8, 3, 96, False, 13814, "amp_bf16"),
    ("A100 80GB", "7b", 8192, 8, 8, 128, True, 3206, "amp_bf16"),
    ("A100 80GB", "13b", 8192, 8, 5, 120, True, 1795, "amp_bf16"),
    ("A100 40GB", "1b", 2048, 8, 8, 512, False, 19271, "bf16 PURE"),
    ("A100 40GB", "3b", 2048, 8, 5, 320, False, 10065, "bf16 PURE"),
    ("A100 40GB", "7b", 2048, 8, 12, 384, True, 3679, "bf16 PURE"),
    ("A100 40GB", "7b", 2048, 64, 18, 1152, True, 3665, "bf16 PURE"),
    ("A100 40GB", "13b", 2048, 32, 14, 448, True, 1998, "bf16 PURE"),
]
FOUNDRY_GPU = {"A100 80GB": "A100 SXM4 80GB", "A100 40GB": "A100 SXM4 40GB"}


def _foundry_rows() -> list[dict[str, Any]]:
    out = []
    for table, size, seq, gpus, mb, gbs, ckpt, tps, prec in FOUNDRY_ROWS:
        notes = ("FSDP FULL_SHARD taken as the fsdp2 profile (eager PyTorch FSDP with flash attention); "
                 "micro-batches that do not divide the global batch are accumulated as published")
        if prec != "amp_bf16":
            notes += "; Composer's PURE bf16 (parameters, gradients and buffers in bf16) estimated as bf16 AMP"
        e = Entry(id=f"foundry-mpt-{size}-{table.split()[1].lower()}-s{seq}-{gpus}gpu",
                  source={**FOUNDRY, "table": f"{table} with 1600 Gbps node-node interconnect (RoCE): row {size}, "
                                              f"SeqLen {seq}, {gpus} GPUs, Throughput (T/s/GPU)", "read": READ},
                  model=mpt(size), gpu=FOUNDRY_GPU[table], gpus=gpus, precision="bf16", mode="training",
                  framework="fsdp2", seq_len=seq, global_batch=gbs, micro_batch=mb, tokens_per_s_per_gpu=tps,
                  sharding="fsdp", checkpointing="full" if ckpt else "none", notes=notes)
        out.append({"kind": "llm-training", **asdict(e)})
    return out


# ---- IBM fms-fsdp: Llama 2 pretraining on 128 A100s (second file) ---------------------------------------------------
FMS_REPO = "foundation-model-stack/fms-fsdp"
FMS_README_COMMIT = "0d319983c4b3b7f7b3b5e2c5e7f746746b6f73a9"
FMS_CONFIG_COMMIT = "08d8ae7f5c75ecd255e21a53b573219c73602866"
FMS_TRAIN_CONFIG_COMMIT = "00f20d5e12e135354efad7bb9abc16abeb25b5a9"
FMS = {"url": f"https://github.com/{FMS_REPO}/blob/{FMS_README_COMMIT}/README.md",
       "document": "fms-fsdp README, the table of training throughput on 128 A100s",
       "version": "PyTorch FSDP (eager), SDPA FlashAttention-2, bf16 mixed precision; IBM's A100 cluster"}


def fms_llama(size: str, hidden: int, heads: int, kv_heads: int, layers: int, ffn: int) -> dict[str, object]:
    """An FMS LLaMAConfig as the tool's shape (vocabulary 32,000, untied head, RMSNorm, SwiGLU)."""
    return {"name": f"llama2-{size} (fms)", "kind": "decoder", "num_layers": layers, "hidden_size": hidden,
            "num_heads": heads, "num_kv_heads": kv_heads, "head_dim": hidden // heads, "intermediate_size": ffn,
            "vocab_size": 32000, "tied_embeddings": False, "norm": "rmsnorm", "mlp_act": "swiglu",
            "source": f"{FMS_REPO} fms_fsdp/utils/config_utils.py get_model_config('llama2_{size}') @ "
                      f"{FMS_CONFIG_COMMIT} (7b: LLaMAConfig's defaults)"}


#: (size, shape, sharding strategy, activation checkpointing, batch size per GPU, tokens/s/GPU) as the README lists them
FMS_ROWS = [
    ("7b", (4096, 32, 32, 32, 11008), "HSDP", False, 2, 3760),
    ("13b", (5120, 40, 40, 40, 13824), "HSDP", False, 1, 1700),
    ("34b", (8192, 64, 8, 48, 22016), "FSDP", True, 8, 772),
    ("70b", (8192, 64, 8, 80, 28672), "FSDP", True, 6, 380),
]


def _fms_rows() -> list[dict[str, Any]]:
    out = []
    for size, shape, strategy, ckpt, batch, tps in FMS_ROWS:
        e = Entry(id=f"fms-llama2-{size}-a100-128gpu",
                  source={**FMS, "table": f"row {size}, 128 * A100, {strategy}, activation checkpointing {ckpt}, "
                                          f"batch size {batch}: Training Throughput (128 GPUs)", "read": READ2},
                  model=fms_llama(size, *shape), gpu="A100 SXM4 80GB", gpus=128, precision="bf16",
                  mode="training", framework="fsdp2", seq_len=4096, global_batch=batch * 128, micro_batch=batch,
                  tokens_per_s_per_gpu=tps, sharding=strategy.lower(), checkpointing="full" if ckpt else "none",
                  notes=("A100 taken as the 80 GB SXM4 (the README says A100; the 70B's batch of 6 does not fit "
                         "40 GB); "
                         "sequence length 4,096 and bf16 mixed precision from the training config "
                         f"(fms_fsdp/config/training.py @ {FMS_TRAIN_CONFIG_COMMIT}); eager FSDP taken as the fsdp2 "
                         "profile; the node network is not stated: the tool's default (a 400 Gb/s NIC per GPU)"))
        out.append({"kind": "llm-training", **asdict(e)})
    return out


# ---- TensorRT-LLM v0.17 performance overview: L40S, A100, GH200 -----------------------------------------------------
TRT_REPO = "NVIDIA/TensorRT-LLM"
TRT_COMMIT = "258c7540c03517def55d9a5aadfa9288af474e1b"
TRT_V017 = {"url": f"https://github.com/{TRT_REPO}/blob/{TRT_COMMIT}/docs/source/performance/perf-overview.md",
            "repo": TRT_REPO, "path": "docs/source/performance/perf-overview.md", "commit": TRT_COMMIT,
            "document": "TensorRT-LLM performance overview (v0.17 data, in-flight batching, infinite request rate, "
                        "token throughput)"}
#: the requests per run of trtllm-bench in the overview's methodology, by (input, output) length
TRT_REQUESTS = {(128, 128): 30000, (128, 2048): 3000, (128, 4096): 1500, (500, 2000): 3000, (1000, 1000): 3000,
                (2048, 128): 3000, (2048, 2048): 1500, (5000, 500): 1500, (20000, 2000): 1000}
GH200_NOTE = ("GH200 480GB: the Grace Hopper superchip with 96 GB HBM3 on the GPU (480 GB is the Grace LPDDR5X): the "
              "catalog's GH200 96GB")
#: (model, table, card, column, TP, weights) -> {(input, output): tokens/s}
TRT_ROWS: dict[tuple[str, str, str, str, int, str], dict[tuple[int, int], float]] = {
    ("llama-3.1-8b", "LLaMA v3.1 8B", "L40S", "L40S", 1, "fp8"): {
        (128, 4096): 3025.92, (500, 2000): 4273.75, (2048, 2048): 2225.27, (5000, 500): 981.2,
        (20000, 2000): 327.97},
    ("llama-3.1-8b", "LLaMA v3.1 8B", "A100 SXM4 80GB", "A100-SXM4-80GB", 1, "fp16"): {
        (128, 4096): 3453.79, (500, 2000): 4276.58, (2048, 2048): 2424.16, (5000, 500): 825.13,
        (20000, 2000): 330.04},
    ("llama-3.1-8b", "LLaMA v3.1 8B", "GH200 96GB", "GH200 480GB", 1, "fp8"): {
        (128, 128): 29852.96, (128, 2048): 21769.55, (1000, 1000): 16482.77, (2048, 128): 3843.95,
        (5000, 500): 3932.58},
    ("mistral-7b", "Mistral 7B", "L40S", "L40S", 1, "fp8"): {
        (128, 128): 9664.13, (128, 2048): 5720.65, (1000, 1000): 4177.76, (2048, 128): 1076.74},
    ("mistral-7b", "Mistral 7B", "A100 SXM4 80GB", "A100-SXM4-80GB", 1, "fp16"): {
        (128, 128): 6982.53, (128, 2048): 5630.62, (1000, 1000): 3896.58, (2048, 128): 808.58},
    ("llama-3.1-70b", "LLaMA v3.1 70B", "L40S", "L40S", 4, "fp8"): {
        (128, 128): 1523.52, (128, 2048): 1942.66, (1000, 1000): 1209.25, (2048, 128): 177.72},
    ("llama-3.1-70b", "LLaMA v3.1 70B", "A100 SXM4 80GB", "A100-SXM4-80GB", 4, "fp16"): {
        (128, 128): 2733.48, (128, 2048): 2811.27, (1000, 1000): 1921.77, (2048, 128): 325.15},
}


def _trt_rows() -> list[dict[str, Any]]:
    out = []
    for (model, table, card, column, tp, weights), rows in TRT_ROWS.items():
        precision = weights.upper()
        for (isl, osl), value in rows.items():
            r = Result(id=f"trtllm-0.17-{model}-{column.split('-')[0].split()[0].lower()}-tp{tp}-{weights}-{isl}-{osl}",
                       model=model, engine="trtllm", engine_version="0.17", gpu=card, gpus=tp, weights=weights,
                       kv_dtype=weights, metric="max_output_tps", value=value, input_len=isl, output_len=osl, tp=tp,
                       num_requests=TRT_REQUESTS[(isl, osl)], source={**TRT_V017, "read": READ},
                       table=f"Throughput (tokens / sec), {table}, Tensor Model Parallel Size {tp}, column {column} "
                             f"({precision}), Runtime Input/Output Lengths {isl}, {osl}",
                       notes="KV cache in the weights' format (FP8 checkpoints quantize it too, as published-serving "
                             "assumes)" + ("; " + GH200_NOTE if card.startswith("GH200") else ""))
            out.append({"kind": "llm-serving", **asdict(r)})
    return out


# ---- Lambda's single-GPU training throughput (NVIDIA DeepLearningExamples, third file) ------------------------------
LAMBDA_REPO = "lambdal/deeplearning-benchmark"
LAMBDA_THROUGHPUT = ("pytorch/pytorch-train-throughput-fp16.csv", "0551cb70ffdc155dc4cb2c10dddebb65651c3883")
LAMBDA_BATCHES = ("pytorch/pytorch-train-bs-fp16.csv", "08d77c41c42f48de5598b48c77f3fbd1b6252348")
LAMBDA_24GB = ("pytorch/scripts/config_v1/config_pytorch_24GB.sh", "188936494f1fd432758a4a462b94d0a805999c85")
LAMBDA_README = ("pytorch/README.md", "044be4b04cf4348cc321c9fccaa338f98bae1d9f")
LAMBDA_THROUGHPUT_FP32 = ("pytorch/pytorch-train-throughput-fp32.csv", "0551cb70ffdc155dc4cb2c10dddebb65651c3883")
LAMBDA_BATCHES_FP32 = ("pytorch/pytorch-train-bs-fp32.csv", "08d77c41c42f48de5598b48c77f3fbd1b6252348")
#: the FP32 table's resnet50 column: name_gpu -> (images/s, batch); the A10's batch is the 24 GB template's
LAMBDA_FP32_RESNET = {
    "Quadro RTX 8000": (274.0, 496), "LambdaCloud V100 16GB": (369.0, 128), "RTX 3090": (513.0, 224),
    "LambdaCloud A10": (349.0, 224), "LambdaCloud A100 40GB PCIe": (882.0, 360), "A100 80GB PCIe": (1014.0, 640),
    "A100 80GB SXM4": (1066.0, 640), "RTX 6000 Ada": (647.0, 496), "RTX A6000": (514.0, 496),
    "RTX 4090": (721.0, 224), "H100 80GB PCIe Gen5": (1197.0, 640),
}
#: the throughput file's name_gpu (its one-GPU rows) -> (the catalog's card, the batch file's name_gpu or None where
#: the batch is the 24 GB template's, resnet50 images/s, bert_base_squad sequences/s, ResNet-50 batch, BERT batch).
#: The H100 SXM rows are left out (the tool's efficiencies were fitted on that card); so is the second H100 PCIe row
#: (Lambda Cloud's, 1,851 and 558: one row a card).
LAMBDA_ROWS = {
    "Quadro RTX 8000": ("Quadro RTX 8000", "Quadro RTX 8000", 651.0, 146.0, 928, 192),
    "LambdaCloud V100 16GB": ("Tesla V100 SXM2 16GB", "LambdaCloud V100 16GB", 833.0, 189.0, 256, 48),
    "RTX 3090": ("GeForce RTX 3090", "RTX 3090", 905.0, 172.0, 448, 96),
    "LambdaCloud A10": ("A10", None, 638.0, 135.0, 448, 96),
    "LambdaCloud A100 40GB PCIe": ("A100 PCIe 40GB", "Lambda Cloud A100 40GB PCIe", 1396.0, 368.0, 720, 160),
    "A100 80GB PCIe": ("A100 PCIe 80GB", "A100 80GB PCIe", 1527.0, 415.0, 1280, 320),
    "A100 80GB SXM4": ("A100 SXM4 80GB", "A100 80GB SXM4", 1582.0, 443.0, 1280, 320),
    "RTX 6000 Ada": ("RTX 6000 Ada Generation", "Ada A6000", 1146.0, 255.0, 928, 192),
    "RTX A6000": ("RTX A6000", "RTX A6000", 916.0, 198.0, 928, 192),
    "RTX 4090": ("GeForce RTX 4090", "RTX 4090", 1301.0, 297.0, 448, 96),
    "H100 80GB PCIe Gen5": ("H100 PCIe 80GB", "H100 80GB PCIe Gen5", 1866.0, 567.0, 1280, 320),
}
LAMBDA_STACK = ("NVIDIA DeepLearningExamples (Lambda's fork, branch lambda/benchmark) in NGC pytorch:22.09-py3 or "
                "later, one GPU")


def _lambda_src(path_commit: tuple[str, str], document: str) -> dict[str, str]:
    path, commit = path_commit
    return {"url": f"https://github.com/{LAMBDA_REPO}/blob/{commit}/{path}", "repo": LAMBDA_REPO, "path": path,
            "commit": commit, "document": document, "read": READ3}


def _lambda_resnet(row_id: str, card: str, batch: int, images: float, precision: str, flags: str,
                   source: dict[str, str], notes: str) -> dict[str, Any]:
    """One of Lambda's ResNet-50 rows: DLE's ConvNets in NCHW on synthetic data, at `precision` (its `flags`)."""
    return {"id": row_id, "kind": "vision", "card": card, "model": "torchvision:resnet50",
            "published_model": "ResNet-50 v1.5 (DLE ConvNets)", "mode": "training", "batch": batch,
            "channels_last": False, "img_size": 224,
            "framework": f"{LAMBDA_STACK}, ConvNets main.py {flags}, synthetic data",
            "precision": precision, "metric": "images_per_s", "value": images, "source": source, "notes": notes}


def _lambda_rows() -> list[dict[str, Any]]:
    """ResNet-50 and BERT-base (SQuAD fine-tuning) training throughput, one GPU, from Lambda's table; each row names
    the batch file (or the 24 GB template, for the A10, which the batch file lacks) its batch was read from."""
    out = []
    throughput = _lambda_src(LAMBDA_THROUGHPUT, "Lambda deeplearning-benchmark, PyTorch training throughput (fp16)")
    for name, (card, bs_name, images, sequences, rn_batch, bert_batch) in LAMBDA_ROWS.items():
        batch_src = (f"{LAMBDA_BATCHES[0]} @ {LAMBDA_BATCHES[1][:12]}, row {bs_name}" if bs_name else
                     f"{LAMBDA_24GB[0]} @ {LAMBDA_24GB[1][:12]} (the 24 GB template; the batch file has no A10 row)")
        slug = card.lower().replace(" ", "-")
        v100 = ("; Lambda Cloud's V100 16GB taken as the SXM2 card (its 8x V100 instances are SXM2 servers)"
                if card.startswith("Tesla V100") else "")
        out.append(_lambda_resnet(
            f"lambda-resnet50-{slug}-train-b{rn_batch}", card, rn_batch, images, "AMP float16",
            "--amp --static-loss-scale 256", {**throughput, "table": f"row name_gpu={name}, column resnet50"},
            f"batch from {batch_src}; NCHW: Lambda's configs pass no --memory-format, whose default in DLE's ConvNets "
            f"is nchw ({LAMBDA_README[0]} @ {LAMBDA_README[1][:12]} gives the stack); ResNet-50 v1.5 is torchvision's "
            "resnet50 (stride 2 in the 3x3 convolutions)" + v100))
        images32, batch32 = LAMBDA_FP32_RESNET[name]
        batch32_src = (f"{LAMBDA_BATCHES_FP32[0]} @ {LAMBDA_BATCHES_FP32[1][:12]}, row {bs_name}" if bs_name else
                       f"{LAMBDA_24GB[0]} @ {LAMBDA_24GB[1][:12]} (the 24 GB template)")
        out.append(_lambda_resnet(
            f"lambda-resnet50-fp32-{slug}-train-b{batch32}", card, batch32, images32, "FP32", "without --amp",
            {**_lambda_src(LAMBDA_THROUGHPUT_FP32, "Lambda deeplearning-benchmark, PyTorch training throughput (fp32)"),
             "table": f"row name_gpu={name}, column resnet50"},
            f"batch from {batch32_src}; FP32 weights and activations: cuDNN runs the convolutions on TF32 tensor "
            "cores where the card has them (PyTorch's torch.backends.cudnn.allow_tf32 defaults to True), true FP32 on "
            "Volta and Turing; NCHW as the AMP row" + v100))
        out.append({
            "id": f"lambda-bert-base-squad-{slug}-train-b{bert_batch}", "kind": "encoder", "card": card,
            "model": "lab/models/bert_qa_eager.py:build", "published_model": "BERT-base uncased (DLE run_squad.py)",
            "mode": "training", "batch": bert_batch, "seq_len": 384,
            "framework": f"{LAMBDA_STACK}, BERT scripts/run_squad.sh train fp16, SQuAD v1.1",
            "precision": "apex AMP O2 float16", "metric": "sequences_per_s", "value": sequences,
            "source": {**throughput, "table": f"row name_gpu={name}, column bert_base_squad"},
            "notes": (f"batch from {batch_src}; DLE's SQuAD fine-tuning pads every feature to its max_seq_length "
                      "default, 384. The tool's graph is the run's code: DLE's BERT computes attention explicitly "
                      "(PyTorch/LanguageModeling/BERT/modeling.py BertSelfAttention: matmul, scale, mask, softmax, "
                      "dropout, matmul), as transformers' eager attention does (lab/models/bert_qa_eager.py), and "
                      "run_squad.py --fp16 trains under apex amp.initialize(opt_level='O2'): a float16 model, its "
                      "softmax in float16, fp32 master weights in FusedAdam (NVIDIA/DeepLearningExamples @729963dd) "
                      "-- priced as float16 training without autocast. Not in the graph: apex's fused LayerNorm"
                      + v100),
        })
    return out


def _flagged(out: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of one file, each with its held_out flag by the rule within that file."""
    ids = [r["id"] for r in out]
    if len(set(ids)) != len(ids):
        raise SystemExit("duplicate row ids")
    flags = held_out_flags([(r["id"], r.get("card") or r["gpu"]) for r in out])
    return [{**r, "held_out": flags[r["id"]]} for r in out]


def rows() -> list[dict[str, Any]]:
    """Every row of the first file, each with its held_out flag by the file's rule."""
    return _flagged(_timm_rows() + _foundry_rows() + _trt_rows())


def rows2() -> list[dict[str, Any]]:
    """Every row of the second file (module docstring), flagged by the same rule within it."""
    return _flagged(_fms_rows())


def rows3() -> list[dict[str, Any]]:
    """Every row of the third file (Lambda's table, module docstring), flagged by the same rule within it."""
    return _flagged(_lambda_rows())


ABOUT = ("Published results on cards besides the H100/H200, none used to fit any constant. Ratio = the tool's "
         "estimate / the published figure, per row, card and card family (bench/cross_card.py, gated by "
         "tests/test_cross_card.py).")


def document() -> str:
    doc = {"built_by": "tools/published_cross_card.py", "read": READ, "about": ABOUT,
           "held_out_card": HELD_OUT_CARD, "held_out_rule": HELD_OUT_RULE,
           "reused": REUSED, "rows": rows()}
    return json.dumps(doc, indent=1) + "\n"


def _later_document(read: str, after: str, rows_of_file: list[dict[str, Any]]) -> str:
    """A file of rows collected after `after`'s split was fixed, split by the same rule within itself."""
    doc = {"built_by": "tools/published_cross_card.py", "read": read,
           "about": ABOUT + f" Rows collected after {after}'s split was fixed, split by the same rule within this "
                            "file.",
           "held_out_card": HELD_OUT_CARD, "held_out_rule": HELD_OUT_RULE, "rows": rows_of_file}
    return json.dumps(doc, indent=1) + "\n"


def document2() -> str:
    return _later_document(READ2, "published-cross-card.json", rows2())


def document3() -> str:
    return _later_document(READ3, "published-cross-card-2.json", rows3())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="exit 1 if the stored file is not what this script writes")
    args = ap.parse_args()
    files = ((OUT, document()), (OUT2, document2()), (OUT3, document3()))
    if args.check:
        stale = [path for path, text in files if not (path.exists() and path.read_text() == text)]
        print("up to date" if not stale else f"{', '.join(map(str, stale))} differ: run tools/published_cross_card.py")
        return 0 if not stale else 1
    for path, text in files:
        path.write_text(text)
        print(f"wrote {path.relative_to(ROOT)}: {len(json.loads(text)['rows'])} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
