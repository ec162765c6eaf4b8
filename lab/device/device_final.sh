#!/usr/bin/env bash
# One call on the device machine: GPU tests, a full probe, five quick probes in a row
# (repeatability), the main job and the node check. Everything lands in $OUT/final.tar.gz.
set -u
OUT=${OUT:-/tmp/final-out}; mkdir -p "$OUT"; W=$(mktemp -d)
export PYTHONUNBUFFERED=1
t() { awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME-$1}"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests/ 2>&1 | tail -n 4 | tee "$W/pytest.txt"
s=$EPOCHREALTIME; python3 -m gpuadvisor probe --full --out "$W/full.json" >"$W/full.txt" 2>"$W/full.err"
echo "full rc=$? wall=$(t $s) s"
for i in 1 2 3 4 5; do
  s=$EPOCHREALTIME; python3 -m gpuadvisor probe --quick --out "$W/rep$i.json" >/dev/null 2>"$W/rep$i.err"
  echo "quick #$i rc=$? wall=$(t $s) s"
done
s=$EPOCHREALTIME; python3 -m gpuadvisor run --no-report --out-dir "$W/run" >"$W/run.txt" 2>"$W/run.err"
echo "run rc=$? wall=$(t $s) s"; tail -n 14 "$W/run.txt"
python3 -m gpuadvisor check --rules rules/training-node.yaml --probe "$W/full.json" --junit "$W/check.xml" >"$W/check.txt" 2>&1
echo "check rc=$?"; cat "$W/check.txt" | tail -n 16
python3 -c "import json,sys; p=json.load(open(sys.argv[1]))['devices'][0]['properties']; print({k: v for k, v in p.items() if 'ecc' in k})" "$W/full.json"
python3 -m tools.repeatability "$W"/rep*.json | tee "$W/repeat.txt" | tail -n 25
tar czf "$OUT/final.tar.gz" -C "$W" .
