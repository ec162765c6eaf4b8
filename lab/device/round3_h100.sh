#!/usr/bin/env bash
# Round 3 on one H100 (issue 10's remaining time misses): host dispatch vs eager decode under CPU
# load (lab/device/host_eager.py), then the harness re-measures and profiles the cases that missed
# (MoE training and decode, gemma-2 scoring and prefill, bitsandbytes int8 prefill).
#   bash lab/device/round3_h100.sh host|cases
set -u
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
OUT=${OUT:-./out}; mkdir -p "$OUT"
if [ -d .vendor ]; then export PYTHONPATH="$PWD/.vendor:${PYTHONPATH:-}"; fi
case "${1:-host}" in
  host) python3 -m lab.device.host_eager --budget-s 480 2>&1 | grep -v -E "warnings.warn|UserWarning" | tee "$OUT/host-log.txt" ;;
  cases) GPUADVISOR_PROFILE=1 python3 -m tools.validate_estimates --out "$OUT" --budget-s 480 --reps 3 \
           --only "${2:-66,93,94,95,74,73,98,52,62,64}" 2>&1 | grep -v -E "warnings.warn|UserWarning" | tee "$OUT/cases-log.txt" ;;
esac
