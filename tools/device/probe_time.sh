#!/usr/bin/env bash
# Wall time of `probe --quick` and `--full` against their budgets (10 s and 30 s on an H100), with the
# host cache cold and warm, and each probe's own time. Run from the repo root on the GPU machine:
#   OUT=/tmp/probe-time bash tools/device/probe_time.sh
# Order: quick, host cache cold (kernels compile: CuPy cache cold); quick again (kernels warm, still no
# host cache: the dispatch note); full, host cache cold (measures generate() and writes the cache);
# full and quick, host cache warm (the budgets); full --refresh-host (re-measured). Files in $OUT.
set -u
OUT=${OUT:-/tmp/probe-time}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 XDG_CACHE_HOME=$(mktemp -d) CUPY_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/time.txt"
step() {  # name, then the probe flags
  local name=$1; shift
  local s=$EPOCHREALTIME
  python3 -m gpuadvisor probe "$@" --out "$OUT/$name.json" --force >"$OUT/$name.txt" 2>"$OUT/$name.err"
  local rc=$?
  echo "$name ($*): rc=$rc wall=$(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME-$s}") s" | tee -a "$OUT/time.txt"
  python3 - "$OUT/$name.json" <<'EOF' | tee -a "$OUT/time.txt"
import sys

from gpuadvisor.results import load

r = load(sys.argv[1])
for d in r.devices:
    print("   GPU", d.index, " ".join(f"{p.probe}={p.duration_s:.1f}" for p in d.probes))
    p = d.probe("dispatch")
    if p is not None:
        print("   dispatch:", p.status, p.data.get("host_figures"), "|", p.reason)
print("   host", " ".join(f"{p.probe}={p.duration_s:.1f}" for p in r.host_probes),
      "node", " ".join(f"{p.probe}={p.duration_s:.1f}" for p in r.node_probes))
EOF
}
step quick-cold --quick
step quick-kernels-warm --quick
step full-cold --full
step full-warm --full
step quick-warm --quick
step full-refresh --full --refresh-host
ls -l "$XDG_CACHE_HOME/gpuadvisor" 2>&1 | tee -a "$OUT/time.txt"
