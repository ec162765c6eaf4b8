#!/usr/bin/env bash
# After the last probe-code change of round 4: GPU tests, the dispatch probe quick and full (within
# their time limits?), and the main job with the eager engine (the estimate from this host's figures).
set -u
OUT=${OUT:-./out}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/final.txt"
timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests/ 2>&1 | tail -n 4 | tee -a "$OUT/final.txt"
for mode in quick full; do
  python3 -m gpuadvisor probe --$mode --only dispatch --out "$OUT/dispatch-$mode.json" 2>&1 | grep -E "dispatch|generate|Attention|op dispatch" | tee -a "$OUT/final.txt"
done
python3 -m gpuadvisor run --no-report --engine eager --out-dir "$OUT/run" > "$OUT/run.txt" 2>&1; echo "run rc=$?" | tee -a "$OUT/final.txt"
grep -E "decode|engine assumptions|attention plan|padded|host" "$OUT/run.txt" | head -12 | tee -a "$OUT/final.txt"
