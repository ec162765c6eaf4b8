#!/usr/bin/env bash
# Round 5 on one H100 (issue 10), after the last estimate and probe changes of round 4:
#   a) the dispatch probe in quick mode (8 steps, 25 s limit) through the CLI, then run H: the full
#      probe and a fresh, held-out eager-decode check estimated from this host's figures;
#   b) the GPU tests and the main job with the eager engine;
#   c) on an H200 (another host): the tensor-parallel loss shared by validate_multigpu.py and
#      dtensor_overhead.py (2 ranks on CPU, and DTensor on a one-GPU mesh), then run I, the held-out
#      eager check of H without the padded variant (a first try on an H200 lost its machine).
#   bash lab/device/round5_h100.sh a|b|c
set -u
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
OUT=${OUT:-./out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/env-${1:-a}.txt"
case "${1:-a}" in
  a) s=$SECONDS
     python3 -m gpuadvisor probe --quick --only dispatch --out "$OUT/dispatch-quick.json" 2>&1 | grep -vE "warnings.warn|UserWarning" | tail -12
     echo "quick dispatch probe: $((SECONDS - s)) s" | tee -a "$OUT/env-a.txt"
     bash lab/device/round4_h100.sh probe-eager h ;;
  b) bash lab/device/round4_final.sh ;;
  c) timeout 100 python3 -m lab.validate_multigpu --tiny --device cpu --cases tp2,ddp 2>&1 | tail -4
     timeout 120 python3 -m lab.device.dtensor_overhead 2>&1 | grep -E "^(plain|dtensor)" | cut -c1-300
     python3 -m lab.device.eager_check --reverse --variants default,nocudnn --name eager-check-i 2>&1 \
       | grep -vE "warnings.warn|UserWarning" > "$OUT/eager-log.txt" ;;
esac
