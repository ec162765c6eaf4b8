#!/usr/bin/env bash
# Round 4 on one H100 (issue 10): a fresh, held-out eager-decode run (run E: 8B first at short
# contexts, 1B last at long ones; cuDNN attention on and off; left-padded batches), then
# bitsandbytes LLM.int8() per linear (lab/device/int8_gemm.py) and v2 case 98 re-measured.
#   bash lab/device/round4_h100.sh eager|int8|probe-eager [f|g]
set -u
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
OUT=${OUT:-./out}; mkdir -p "$OUT"
if [ -d .vendor ]; then export PYTHONPATH="$PWD/.vendor:${PYTHONPATH:-}"; fi
quiet() { grep -v -E "warnings.warn|UserWarning"; }
case "${1:-eager}" in
  eager) python3 -m lab.device.eager_check --reverse --variants default,nocudnn,padded --name eager-check-e 2>&1 | quiet | tee "$OUT/eager-log.txt" ;;
  int8) python3 lab/device/int8_gemm.py 2>&1 | quiet | tee "$OUT/int8-log.txt"
        python3 -m tools.validate_estimates --out "$OUT" --budget-s 240 --reps 5 --only 98 2>&1 | quiet | tee "$OUT/case98-log.txt" ;;
esac
# run F (and G on an H200): the dispatch probe with generate() timed on tiny models, through the CLI,
# then the eager check estimated from those figures
case "${1:-eager}" in
  probe-eager) python3 -m gpuadvisor probe --only dispatch --full --out "$OUT/probe-dispatch.json" 2>&1 | quiet | tail -25
        rev=--reverse; [ "${2:-f}" = f ] && rev=""  # G, H: the 8B at short contexts (F's 8B b32 ran out of memory at 9k)
        python3 -m lab.device.eager_check $rev --variants default,nocudnn,padded --name "eager-check-${2:-f}" 2>&1 | quiet | tee "$OUT/eager-log.txt" ;;
esac
