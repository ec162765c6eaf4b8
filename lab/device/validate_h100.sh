#!/usr/bin/env bash
# Memory/time validation harness on one GPU (H100): every case of tools/validation_cases.py.
# Run from the repo root on the device machine:  bash lab/device/validate_h100.sh [--only 1,2,3] [--reps 5]
# Writes $OUT/validation-h100-v2.json (one record per case), $OUT/validation_rows.json, $OUT/log.txt;
# prints the table and the worst error per kind last. Optional: bitsandbytes unpacked under .vendor/
# (NF4, int8, 8-bit AdamW cases; they record an error without it). About 8 minutes for all cases.
set -u
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
OUT=${OUT:-./out}
mkdir -p "$OUT"
if [ -d .vendor ]; then export PYTHONPATH="$PWD/.vendor:${PYTHONPATH:-}"; fi
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit --format=csv | tee "$OUT/nvidia-smi.csv"
python3 -m tools.validate_estimates --out "$OUT" --budget-s 500 "$@" 2>&1 | grep -v -E "warnings.warn|UserWarning" | tee "$OUT/log.txt"
