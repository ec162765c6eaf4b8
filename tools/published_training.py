#!/usr/bin/env python3
"""Build tests/data/published-training.json: published LLM training throughputs with their exact source and
conditions, typed, every third entry (in list order) held out of calibration.

  python3 tools/published_training.py          # rewrite the data file
  python3 tools/published_training.py --check  # exit 1 if the file differs from what this script writes

Sources (read 2026-11-24 through the project's public-repository index; the commit is the stored version read):
* NeMo 24.07 performance summary: NVIDIA/NeMo docs/source/performance/performance_summary.md
* Megatron Bridge performance summary (NeMo 25.11 and 26.02 containers): NVIDIA-NeMo/Megatron-Bridge
  docs/performance-summary.md
* torchtitan performance: pytorch/torchtitan docs/performance.md (torch 1963fc8, torchao eab345c, torchtitan 9dec370,
  Dec 2024; Grand Teton H100 96 GB HBM2e at 500 W, 400 Gb/s RDMA per GPU)
Architectures not among the presets (NeMo's GPT-3 5B/20B/175B) carry their shape from NeMo-Framework-Launcher's
launcher_scripts/conf/training/gpt3/{5b,20b,175b}.yaml.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "published-training.json"
READ = "2026-11-24"

NEMO = {"url": "https://github.com/NVIDIA/NeMo/blob/070a0bb168d405d653b9734c0017cf5078e77c0d/docs/source/performance/"
               "performance_summary.md",
        "document": "NeMo Framework performance summary", "version": "NeMo 24.07 container, DGX-H100"}
BRIDGE = {"url": "https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/df0289c180dd20ff26933455c7a0a11084f6a36f/docs/"
                 "performance-summary.md", "document": "Megatron Bridge performance summary"}
TITAN = {"url": "https://github.com/pytorch/torchtitan/blob/eaea6f6a2fa940f03a10906be1df3489cf30af85/docs/"
                "performance.md",
         "document": "torchtitan docs/performance.md",
         "version": "torch 1963fc8 (2024-12-23), torchao eab345c, torchtitan 9dec370 (2024-12-26)"}
LAUNCHER = "NVIDIA/NeMo-Framework-Launcher launcher_scripts/conf/training/gpt3/{}.yaml"


def gpt3(name: str, layers: int, hidden: int, heads: int) -> dict[str, object]:
    """NeMo's GPT-3 shapes: LayerNorm, GELU MLP of 4h, biases, tied embeddings, 50,304 padded GPT-2 vocabulary."""
    return {"name": name, "kind": "decoder", "num_layers": layers, "hidden_size": hidden, "num_heads": heads,
            "num_kv_heads": heads, "head_dim": hidden // heads, "intermediate_size": 4 * hidden, "vocab_size": 50304,
            "tied_embeddings": True, "norm": "layernorm", "mlp_act": "gelu", "attn_bias": True, "fused_qkv": True,
            "mlp_bias": True, "source": LAUNCHER.format(name.split("-")[1].lower())}


@dataclass(frozen=True)
class Entry:
    """One published training run. `model` is a preset name or a shape (dict); degrees as published; `checkpointing`
    none | selective | full; `framework` names a profile in gpuadvisor/data/framework-profiles.json."""

    id: str
    source: dict[str, str]
    model: str | dict[str, object]
    gpu: str
    gpus: int
    precision: str
    mode: str
    framework: str
    seq_len: int
    global_batch: int
    micro_batch: int
    tokens_per_s_per_gpu: float
    tp: int = 1
    pp: int = 1
    cp: int = 1
    ep: int = 1
    vp: int = 1
    sharding: str = "zero1"  # Megatron's distributed optimizer shards optimizer states over data-parallel ranks
    checkpointing: str = "none"
    lora_targets: str = "all"
    model_tflops_per_gpu: float | None = None
    memory_gib: float | None = None
    gpu_overrides: dict[str, float] = field(default_factory=dict)
    notes: str = ""
    held_out: bool = False


def _nemo(table: str, **kw: object) -> Entry:
    if kw.get("mode") == "lora":  # NeMo's LoRA targets the fused QKV projection by default (target_modules)
        kw.setdefault("lora_targets", "attn")
        kw.setdefault("notes", "LoRA on NeMo's default target, attention_qkv; taken as the attention projections")
    if table == FT:
        kw["notes"] = (str(kw.get("notes", "")) + "; the finetuning table gives no VP: taken as 1").lstrip("; ")
    return Entry(source={**NEMO, "table": table, "read": READ}, framework="megatron", precision="fp8",
                 gpu="H100 SXM5 80GB", **kw)  # type: ignore[arg-type]


def _bridge(version: str, system: str, **kw: object) -> Entry:
    gpu = {"DGX-H100": "H100 SXM5 80GB", "DGX-B200": "B200", "DGX-GB200": "GB200 (per GPU)"}[system]
    src = {**BRIDGE, "version": f"{version} NeMo container", "table": f"{version} Pre-Training Performance, System: "
           f"{system}", "read": READ}
    return Entry(source=src, framework="megatron", precision="fp8", gpu=gpu, seq_len=8192, **kw)  # type: ignore[arg-type]


TITAN_GPU = {"memory_gib": 96.0, "bandwidth_gbs": 2400.0, "tflops_scale": 0.92}
TITAN_NOTE = ("Grand Teton H100 with 96 GB HBM2e (2.4 TB/s) at a 500 W power limit; its footnote puts the peak between "
              "the H100 SXM's and the H100 NVL's (835/989 = 0.84 of SXM): estimated at 0.92 of the SXM's tensor peaks, "
              "with this memory")


def _titan(table: str, framework: str, **kw: object) -> Entry:
    return Entry(source={**TITAN, "table": table, "read": READ}, framework=framework, gpu="H100 SXM5 80GB",
                 gpu_overrides=TITAN_GPU, sharding="fsdp", **kw)  # type: ignore[arg-type]


L2_13B, L2_70B = "llama-2-13b", "llama-2-70b"
PRE = "Pretraining (FP8)"
FT = "Finetuning (SQuAD packed to 4096, FP8)"
T1 = "Table 1: 1D (FSDP), Llama 3.1 8B, 8 GPUs, local batch 2, global 16, selective activation checkpointing"
T2 = "Table 2: FSDP + CP + torch.compile + Float8, Llama 3.1 8B, 8 GPUs, local batch 1, full activation checkpointing"
T3 = "Table 3: 1D (FSDP), Llama 3.1 8B, 128 GPUs, local batch 2, global 256, selective activation checkpointing"
T4 = ("Table 4: 2D (FSDP 32 + TP 8) + torch.compile + Float8, Llama 3.1 70B, 256 GPUs, local batch 16, global 512, "
      "full activation checkpointing")
T5 = ("Table 5: 3D (FSDP 8, TP 8, PP 8) + torch.compile + Float8 + AsyncTP, Llama 3.1 405B, 512 GPUs, local batch 32, "
      "global 256, full activation checkpointing")
T6 = ("Table 6: 4D (FSDP + TP 8 + PP 8 + CP) + torch.compile + Float8 + AsyncTP + 1F1B, Llama 3.1 405B, 512 GPUs, "
      "local batch 8, full activation checkpointing")

ENTRIES: list[Entry] = [
    # NeMo 24.07, DGX-H100, FP8 pretraining
    _nemo(PRE, id="nemo2407-gpt3-5b", model=gpt3("gpt3-5b", 24, 4096, 32), gpus=64, mode="training", seq_len=2048,
          global_batch=2048, micro_batch=4, tokens_per_s_per_gpu=22521, model_tflops_per_gpu=736),
    _nemo(PRE, id="nemo2407-gpt3-20b", model=gpt3("gpt3-20b", 44, 6144, 48), gpus=64, mode="training", seq_len=2048,
          global_batch=256, micro_batch=2, tp=2, tokens_per_s_per_gpu=5851, model_tflops_per_gpu=750),
    _nemo(PRE, id="nemo2407-gpt3-175b-128", model=gpt3("gpt3-175b", 96, 12288, 96), gpus=128, mode="training",
          seq_len=2048, global_batch=256, micro_batch=1, tp=4, pp=8, vp=6, tokens_per_s_per_gpu=726,
          model_tflops_per_gpu=782),
    _nemo(PRE, id="nemo2407-gpt3-175b-512", model=gpt3("gpt3-175b", 96, 12288, 96), gpus=512, mode="training",
          seq_len=2048, global_batch=2048, micro_batch=2, tp=4, pp=8, vp=6, tokens_per_s_per_gpu=782,
          model_tflops_per_gpu=842),
    _nemo(PRE, id="nemo2407-llama2-7b", model="llama-2-7b", gpus=8, mode="training", seq_len=4096, global_batch=128,
          micro_batch=1, tokens_per_s_per_gpu=16847, model_tflops_per_gpu=776),
    _nemo(PRE, id="nemo2407-llama2-13b", model=L2_13B, gpus=16, mode="training", seq_len=4096, global_batch=128,
          micro_batch=1, pp=4, vp=10, tokens_per_s_per_gpu=8646, model_tflops_per_gpu=754),
    _nemo(PRE, id="nemo2407-llama2-70b", model=L2_70B, gpus=64, mode="training", seq_len=4096, global_batch=128,
          micro_batch=1, tp=4, pp=4, vp=20, tokens_per_s_per_gpu=1707, model_tflops_per_gpu=759),
    _nemo(PRE, id="nemo2407-llama3-8b", model="llama-3-8b", gpus=8, mode="training", seq_len=8192, global_batch=128,
          micro_batch=1, cp=2, tokens_per_s_per_gpu=12036, model_tflops_per_gpu=697),
    _nemo(PRE, id="nemo2407-llama3-70b", model="llama-3.1-70b", gpus=64, mode="training", seq_len=8192,
          global_batch=128, micro_batch=1, tp=4, pp=4, cp=2, vp=5, tokens_per_s_per_gpu=1533, model_tflops_per_gpu=738,
          notes="published as LLAMA3-70B; Llama 3.1 70B has the same shape"),
    # NeMo 24.07 finetuning (SFT and LoRA)
    _nemo(FT, id="nemo2407-sft-llama2-7b", model="llama-2-7b", gpus=8, mode="training", seq_len=4096, global_batch=32,
          micro_batch=1, tokens_per_s_per_gpu=17120, model_tflops_per_gpu=682),
    _nemo(FT, id="nemo2407-sft-llama2-13b", model=L2_13B, gpus=8, mode="training", seq_len=4096, global_batch=32,
          micro_batch=1, pp=4, tokens_per_s_per_gpu=9741, model_tflops_per_gpu=754),
    _nemo(FT, id="nemo2407-sft-llama2-70b", model=L2_70B, gpus=16, mode="training", seq_len=4096, global_batch=32,
          micro_batch=1, tp=4, pp=4, tokens_per_s_per_gpu=1833, model_tflops_per_gpu=756),
    _nemo(FT, id="nemo2407-lora-llama2-7b", model="llama-2-7b", gpus=8, mode="lora", seq_len=4096, global_batch=32,
          micro_batch=1, tokens_per_s_per_gpu=25206, model_tflops_per_gpu=673),
    _nemo(FT, id="nemo2407-lora-llama2-13b", model=L2_13B, gpus=8, mode="lora", seq_len=4096, global_batch=32,
          micro_batch=1, tokens_per_s_per_gpu=14161, model_tflops_per_gpu=733),
    _nemo(FT, id="nemo2407-lora-llama2-70b", model=L2_70B, gpus=8, mode="lora", seq_len=4096, global_batch=32,
          micro_batch=1, tp=2, pp=4, tokens_per_s_per_gpu=2557, model_tflops_per_gpu=705),
    # Megatron Bridge, NeMo 25.11 and 26.02 containers, FP8 current scaling
    _bridge("25.11", "DGX-H100", id="bridge2511-h100-llama3-8b", model="llama-3-8b", gpus=8, mode="training",
            global_batch=128, micro_batch=1, sharding="fsdp", tokens_per_s_per_gpu=14451, model_tflops_per_gpu=744,
            notes="FSDP = 1 (Megatron FSDP); FP8-CS"),
    _bridge("25.11", "DGX-H100", id="bridge2511-h100-llama3-70b", model="llama-3.1-70b", gpus=64, mode="training",
            global_batch=128, micro_batch=1, tp=4, pp=8, vp=5, tokens_per_s_per_gpu=1602, model_tflops_per_gpu=719),
    _bridge("25.11", "DGX-H100", id="bridge2511-h100-llama31-405b", model="llama-3.1-405b", gpus=1024,
            mode="training", global_batch=512, micro_batch=1, tp=8, pp=8, cp=2, vp=8, tokens_per_s_per_gpu=292,
            model_tflops_per_gpu=737),
    _bridge("26.02", "DGX-H100", id="bridge2602-h100-llama3-70b", model="llama-3.1-70b", gpus=64, mode="training",
            global_batch=256, micro_batch=1, tp=4, pp=8, vp=5, tokens_per_s_per_gpu=1621, model_tflops_per_gpu=728),
    _bridge("26.02", "DGX-H100", id="bridge2602-h100-llama31-405b", model="llama-3.1-405b", gpus=1024,
            mode="training", global_batch=1536, micro_batch=1, tp=8, pp=8, cp=2, vp=8, tokens_per_s_per_gpu=311,
            model_tflops_per_gpu=784),
    _bridge("25.11", "DGX-B200", id="bridge2511-b200-llama3-8b", model="llama-3-8b", gpus=8, mode="training",
            global_batch=128, micro_batch=2, tokens_per_s_per_gpu=30624, model_tflops_per_gpu=1576,
            notes="FP8-CS figure (FP8-MX in parentheses not used)"),
    _bridge("25.11", "DGX-B200", id="bridge2511-b200-llama31-405b", model="llama-3.1-405b", gpus=128,
            mode="training", global_batch=64, micro_batch=1, tp=4, pp=8, cp=2, vp=8, tokens_per_s_per_gpu=661,
            model_tflops_per_gpu=1667, notes="FP8-CS figure"),
    _bridge("25.11", "DGX-GB200", id="bridge2511-gb200-llama3-8b", model="llama-3-8b", gpus=8, mode="training",
            global_batch=128, micro_batch=2, tokens_per_s_per_gpu=31508, model_tflops_per_gpu=1622,
            notes="FP8-CS figure"),
    _bridge("25.11", "DGX-GB200", id="bridge2511-gb200-llama3-70b", model="llama-3.1-70b", gpus=64, mode="training",
            global_batch=256, micro_batch=2, sharding="fsdp", tokens_per_s_per_gpu=4312, model_tflops_per_gpu=1937,
            notes="FSDP = 1 (Megatron FSDP), 64 GPUs in one NVL72 NVLink domain"),
    _bridge("25.11", "DGX-GB200", id="bridge2511-gb200-llama31-405b", model="llama-3.1-405b", gpus=256,
            mode="training", global_batch=1536, micro_batch=1, tp=4, pp=16, vp=4, tokens_per_s_per_gpu=813,
            model_tflops_per_gpu=2053),
    # torchtitan (Dec 2024), Grand Teton H100s
    _titan(T1, "fsdp2", id="titan-8b-fsdp-8", model="llama-3-8b", gpus=8, precision="bf16", mode="training",
           seq_len=8192, global_batch=16, micro_batch=2, checkpointing="selective", tokens_per_s_per_gpu=5762,
           memory_gib=82.4, notes=TITAN_NOTE),
    _titan(T1, "compile", id="titan-8b-fsdp-compile-8", model="llama-3-8b", gpus=8, precision="bf16",
           mode="training", seq_len=8192, global_batch=16, micro_batch=2, checkpointing="selective",
           tokens_per_s_per_gpu=6667, memory_gib=77.0, notes=TITAN_NOTE),
    _titan(T1, "compile", id="titan-8b-fsdp-compile-fp8-8", model="llama-3-8b", gpus=8, precision="fp8",
           mode="training", seq_len=8192, global_batch=16, micro_batch=2, checkpointing="selective",
           tokens_per_s_per_gpu=8532, memory_gib=76.8, notes=TITAN_NOTE),
    *[_titan(T2, "compile", id=f"titan-8b-cp{cp}", model="llama-3-8b", gpus=8, precision="fp8", mode="training",
             seq_len=seq, global_batch=8 // cp, micro_batch=1, cp=cp, checkpointing="full", tokens_per_s_per_gpu=tps,
             memory_gib=mem, notes=TITAN_NOTE)
      for cp, seq, tps, mem in ((1, 32768, 3890, 83.9), (2, 65536, 2540, 84.2), (4, 131072, 1071, 84.0),
                                (8, 262144, 548, 84.5))],
    _titan(T3, "fsdp2", id="titan-8b-fsdp-128", model="llama-3-8b", gpus=128, precision="bf16", mode="training",
           seq_len=8192, global_batch=256, micro_batch=2, checkpointing="selective", tokens_per_s_per_gpu=5605,
           memory_gib=67.0, notes=TITAN_NOTE),
    _titan(T3, "compile", id="titan-8b-fsdp-compile-128", model="llama-3-8b", gpus=128, precision="bf16",
           mode="training", seq_len=8192, global_batch=256, micro_batch=2, checkpointing="selective",
           tokens_per_s_per_gpu=6514, memory_gib=62.0, notes=TITAN_NOTE),
    _titan(T3, "compile", id="titan-8b-fsdp-compile-fp8-128", model="llama-3-8b", gpus=128, precision="fp8",
           mode="training", seq_len=8192, global_batch=256, micro_batch=2, checkpointing="selective",
           tokens_per_s_per_gpu=8380, memory_gib=61.8, notes=TITAN_NOTE),
    _titan(T4, "compile", id="titan-70b-2d", model="llama-3.1-70b", gpus=256, precision="fp8", mode="training",
           seq_len=8192, global_batch=512, micro_batch=16, tp=8, checkpointing="full", tokens_per_s_per_gpu=829,
           memory_gib=71.9, notes=TITAN_NOTE),
    _titan(T4, "compile-asynctp", id="titan-70b-2d-asynctp", model="llama-3.1-70b", gpus=256, precision="fp8",
           mode="training", seq_len=8192, global_batch=512, micro_batch=16, tp=8, checkpointing="full",
           tokens_per_s_per_gpu=876, memory_gib=67.6, notes=TITAN_NOTE),
    _titan(T5, "compile-asynctp", id="titan-405b-3d-1f1b", model="llama-3.1-405b", gpus=512, precision="fp8",
           mode="training", seq_len=8192, global_batch=256, micro_batch=4, tp=8, pp=8, checkpointing="full",
           tokens_per_s_per_gpu=100, memory_gib=82.5,
           notes=TITAN_NOTE + "; local batch 32 in PP = 8 micro-batches of 4 (torchtitan's default count)"),
    _titan(T5, "compile-asynctp", id="titan-405b-3d-interleaved", model="llama-3.1-405b", gpus=512, precision="fp8",
           mode="training", seq_len=8192, global_batch=256, micro_batch=4, tp=8, pp=8, vp=2, checkpointing="full",
           tokens_per_s_per_gpu=128, memory_gib=72.7,
           notes=TITAN_NOTE + "; interleaved 1F1B taken as 2 stages per rank; PP = 8 micro-batches of 4"),
    *[_titan(T6, "compile-asynctp", id=f"titan-405b-4d-cp{cp}", model="llama-3.1-405b", gpus=512, precision="fp8",
             mode="training", seq_len=seq, global_batch=8 * (8 // cp), micro_batch=1, tp=8, pp=8, cp=cp,
             checkpointing="full", tokens_per_s_per_gpu=tps, memory_gib=mem,
             notes=TITAN_NOTE + "; local batch 8 in PP = 8 micro-batches of 1")
      for cp, seq, tps, mem in ((1, 32768, 76, 75.3), (2, 65536, 47, 75.9), (4, 131072, 31, 77.1),
                                (8, 262144, 16, 84.9))],
]


def entries() -> list[dict[str, object]]:
    """The typed list as JSON records, every third (index % 3 == 2) held out."""
    out = []
    for i, e in enumerate(ENTRIES):
        d = asdict(e)
        d["held_out"] = i % 3 == 2
        out.append(d)
    return out


def document() -> str:
    ids = [e.id for e in ENTRIES]
    if len(set(ids)) != len(ids):
        raise SystemExit("duplicate entry ids")
    doc = {"built_by": "tools/published_training.py", "read": READ,
           "metric": "tokens_per_s_per_gpu as published (global tokens per second / GPUs)",
           "held_out_rule": "every third entry in list order (index % 3 == 2)", "entries": entries()}
    return json.dumps(doc, indent=1) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="exit 1 if the stored file is not what this script writes")
    a = ap.parse_args()
    text = document()
    if a.check:
        same = OUT.exists() and OUT.read_text() == text
        print("up to date" if same else f"{OUT} differs: run tools/published_training.py")
        return 0 if same else 1
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(ROOT)}: {len(ENTRIES)} entries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
