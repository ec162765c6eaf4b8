#!/usr/bin/env bash
# One call on the device machine: cold quick run, full run, GPU tests, compact table.
# Usage (from the repo root, on the GPU machine): lab/device/device_probe_check.sh [quick|full|tests|all]
set -u
OUT=${OUT:-/tmp/probe-out}; mkdir -p "$OUT"
what=${1:-all}
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader || true
if [[ $what == quick || $what == all ]]; then
  export CUPY_CACHE_DIR=$(mktemp -d)   # cold: kernels compile inside the timed run
  s=$EPOCHREALTIME
  python3 -m gpuadvisor probe --quick --out "$OUT/quick.json" --force >"$OUT/quick.txt" 2>"$OUT/quick.err"
  echo "quick rc=$? wall=$(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME-$s}") s (cold cache)"
  tail -n 30 "$OUT/quick.err"
fi
if [[ $what == full || $what == all ]]; then
  export CUPY_CACHE_DIR=$(mktemp -d)
  s=$EPOCHREALTIME
  python3 -m gpuadvisor probe --full --out "$OUT/full.json" --force >"$OUT/full.txt" 2>"$OUT/full.err"
  echo "full rc=$? wall=$(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME-$s}") s (cold cache)"
  tail -n 30 "$OUT/full.err"
fi
if [[ $what == all ]]; then  # Ctrl-C after 12 s: exit 130, partial result saved with complete=false
  timeout --preserve-status -s INT 12 python3 -m gpuadvisor probe --full --device 0 --out "$OUT/interrupted.json" --force \
    >/dev/null 2>"$OUT/interrupted.err"
  echo "interrupt rc=$? (want 130)"; tail -n 4 "$OUT/interrupted.err"
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print('complete', r['complete'], [(p['probe'], p['status']) for d in r['devices'] for p in d['probes']], [(p['probe'], p['status']) for p in r['host_probes']])" "$OUT/interrupted.json" || true
fi
if [[ $what == tests || $what == all ]]; then
  timeout 300 python3 -m pytest -q -p no:cacheprovider tests/test_gpu_probes.py -x 2>&1 | tail -n 25 | tee "$OUT/pytest.txt"
fi
python3 -m lab.probe_table "$OUT"/quick.json "$OUT"/full.json 2>&1 || true
