#!/usr/bin/env bash
# Re-measure the op-graph validation cases whose timed steps spread the most (host-bound steps jitter
# with the CPU), with 40 timed steps instead of 8; optionally trace the torchaudio models on the CPU
# afterwards (no CPU torchaudio wheel exists for the dev machine's PyTorch). Run on the device machine:
#   PART=0/2 bash tools/device/remeasure_noisy.sh [trace]
# Writes $OUT/remeasured-K.json (lab/measure_models.py's format) and, with `trace`, $OUT/graphs.json.gz.
set -u
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
OUT=${OUT:-./out}
PART=${PART:-0/1}
mkdir -p "$OUT"
python3 -m pip install -q --no-deps --target /tmp/wh .whl/*.whl >/dev/null 2>&1
export PYTHONPATH="/tmp/wh:$PWD"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
nproc; cat /proc/loadavg
python3 -m lab.measure_models --out "$OUT/remeasured-${PART%%/*}.json" --noisy 0.1 --timed 40 --part "$PART" \
  --budget-s "${BUDGET_S:-420}" 2>&1 | grep -v -E "warnings.warn|Warning"
if [ "${1:-}" = trace ]; then
  cp gpuadvisor/data/graphs/graphs.json.gz "$OUT/graphs.json.gz"
  python3 -m tools.trace_models --only torchaudio --out "$OUT/graphs.json.gz" 2>&1 | grep -v -E "warnings.warn|Warning" | tail -8
fi
