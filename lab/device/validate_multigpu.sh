#!/usr/bin/env bash
# Multi-GPU memory/time validation (DDP, FSDP2 pure and mixed, TP2; Llama-2-7B shape, random weights).
# Run from the repo root on a machine with 2 GPUs (nvidia-h200-x2):  bash lab/device/validate_multigpu.sh
# Each case is its own torchrun (90 s limit each; about 3 minutes in all). Writes $OUT/multigpu.json and
# $OUT/multigpu-log.txt and prints a per-rank table last. Compare afterwards, here (no GPU needed):
#   python3 -m tools.compare_multigpu <files_at>/multigpu.json
set -u
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${OUT:-./out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv | tee "$OUT/nvidia-smi.csv"
nvidia-smi topo -m 2>&1 | head -8 | tee "$OUT/topo.txt"
python3 -m lab.validate_multigpu --out "$OUT" "$@" 2>&1 | tee "$OUT/multigpu-log.txt"
