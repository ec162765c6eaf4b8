#!/usr/bin/env bash
# The op-graph validation cases (lab/model_cases.py) measured on the device machine by lab/measure_models.py,
# each case's host dispatch speed taken around it. How lab/data/h100-models/ was made (2026-11-24):
#   PART=0/2 bash lab/device/measure_models.sh remeasured --noisy 0.1 --timed 40   # the 64 noisiest cases
#   PART=0/2 bash lab/device/measure_models.sh run2 --timed 20                     # every case
# (and PART=1/2 for the other half). Writes $OUT/NAME-K.json. The torchaudio graphs are traced on this
# machine too: tools/trace_models.py says how.
set -u
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
OUT=${OUT:-./out}
PART=${PART:-0/1}
NAME=${1:?usage: PART=K/N bash lab/device/measure_models.sh NAME [lab.measure_models options]}
shift
mkdir -p "$OUT"
python3 -m pip install -q --no-deps --target /tmp/wh .whl/*.whl >/dev/null 2>&1
export PYTHONPATH="/tmp/wh:$PWD"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
nproc; cat /proc/loadavg; grep -m1 "model name" /proc/cpuinfo
python3 -m lab.measure_models --out "$OUT/$NAME-${PART%%/*}.json" --part "$PART" --budget-s "${BUDGET_S:-480}" "$@" \
  2>&1 | grep -v -E "warnings.warn|Warning|_warn_once|should be kept in float32"
