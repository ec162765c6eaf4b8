#!/usr/bin/env bash
# Every op-graph validation case (lab/model_cases.py) with 20 timed steps and the host's dispatch speed
# taken around each case. Run on the device machine:  PART=0/2 bash tools/device/measure_models_all.sh
# Writes $OUT/run2-K.json (lab/measure_models.py's format).
set -u
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
OUT=${OUT:-./out}
PART=${PART:-0/1}
mkdir -p "$OUT"
python3 -m pip install -q --no-deps --target /tmp/wh .whl/*.whl >/dev/null 2>&1
export PYTHONPATH="/tmp/wh:$PWD"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
nproc; cat /proc/loadavg; grep -m1 "model name" /proc/cpuinfo
python3 -m lab.measure_models --out "$OUT/run2-${PART%%/*}.json" --timed 20 --part "$PART" \
  --budget-s "${BUDGET_S:-500}" 2>&1 | grep -v -E "warnings.warn|Warning|_warn_once|should be kept in float32"
