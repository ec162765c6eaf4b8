#!/usr/bin/env bash
# Device run of the time-model benchmarks on one H100 (kind nvidia-h100-x1; any single NVIDIA GPU works).
#   full  (default): lab/bench_decode.py: decode per engine (HF eager generate(), CUDA-graph decode
#                    over a static cache) for 0.5B-8B models at batch 1-64, plus the GEMM / SDPA /
#                    elementwise / launch sweeps -> $OUT/decode-h100.json (~190 s on an H100)
#   host:            lab/bench_decode.py --host: host-dispatch sweep + decode re-check (~100 s)
#   diag:            lab/bench_decode.py --diag: where eager decode's per-step host cost goes (~60 s;
#                    dry-run on CPU only so far)
# Needs only the device image's python3 (torch, transformers); no pydantic. Prints a summary last.
# Usage, from the repo root: bash lab/device/bench_decode.sh [full|host|diag]
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-./out}; mkdir -p "$OUT"
export OUT PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv \
  | tee "$OUT/nvidia-smi.txt"
case "${1:-full}" in
  full) python3 -m lab.bench_decode --budget-s 400 2>&1 | tee "$OUT/bench_decode.log" ;;
  host) python3 -m lab.bench_decode --host --budget-s 330 2>&1 | tee "$OUT/bench_host.log" ;;
  diag) python3 -m lab.bench_decode --diag 2>&1 | tee "$OUT/bench_diag.log" ;;
  *) echo "usage: bash lab/device/bench_decode.sh [full|host|diag]"; exit 2 ;;
esac
