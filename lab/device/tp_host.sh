#!/usr/bin/env bash
# On nvidia-h200-x2 (issue 10): the held-out check of DTensor's host time. The host's op time first
# (the dispatch probe, quick), then tensor parallel 2 at two shapes (lab/validate_multigpu.py), so
# `compare_multigpu.py --host-op-us <op>` can estimate with this host's own figure.
set -u
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${OUT:-./out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee "$OUT/env.txt"
timeout 60 python3 -m gpuadvisor probe --quick --only dispatch --out "$OUT/dispatch.json" 2>&1 | grep -E "op dispatch|ok \(" | tee -a "$OUT/env.txt"
python3 -m lab.validate_multigpu --out "$OUT" --cases tp2,tp2-b8s1024,ddp-b4s1024 2>&1 | tail -8
timeout 60 python3 -m gpuadvisor probe --quick --only dispatch --out "$OUT/dispatch-after.json" 2>&1 | grep -E "op dispatch" | tee -a "$OUT/env.txt"
