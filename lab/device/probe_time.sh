#!/usr/bin/env bash
# Wall time of `probe --quick` and `--full` against their budgets (10 s and 30 s on an H100), with the
# host cache and CuPy's kernel cache cold and warm, each probe's own time, and where the rest of the wall
# time goes (lab/device/probe_phases.py: imports, CUDA start, PyTorch, kernels, saving). Run from the
# repo root on the GPU machine:
#   OUT=/tmp/probe-time bash lab/device/probe_time.sh [BEFORE_TREE]
# With BEFORE_TREE (another checkout of the project, e.g. main before a change) both trees run the same
# steps in this one call, and lab/device/probe_compare.py compares their figures (warm --full and
# --quick). Per tree: quick with every cache cold (kernels compile), full with the host cache cold
# (measures generate() and writes the cache), then full and quick warm (the budgets). Files in $OUT.
set -u
OUT=${OUT:-/tmp/probe-time}; mkdir -p "$OUT"
HERE=$(pwd)
BEFORE=${1:-}
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/time.txt"
python3 - <<'EOF' | tee -a "$OUT/time.txt"
import subprocess, sys, time
for mod in ("numpy", "cupy", "torch", "pydantic"):
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", f"import {mod}"], capture_output=True)
    print(f"python3 -c 'import {mod}': {time.perf_counter() - t:.2f} s (rc {r.returncode})")
t = time.perf_counter()
subprocess.run([sys.executable, "-c", "import cupy; cupy.cuda.runtime.getDeviceCount(); cupy.zeros(1)"])
print(f"cupy + CUDA context + one kernel: {time.perf_counter() - t:.2f} s")
EOF

step() {  # tree tag, step name, then the probe flags
  local tree=$1 tag=$2 name=$3; shift 3
  local s=$EPOCHREALTIME
  (cd "$tree" && PHASES="$OUT/$tag-$name.phases" PYTHONPATH="$tree${PYTHONPATH:+:$PYTHONPATH}" \
     python3 "$HERE/lab/device/probe_phases.py" probe "$@" --out "$OUT/$tag-$name.json" --force \
     >"$OUT/$tag-$name.txt" 2>"$OUT/$tag-$name.err")
  local rc=$?
  echo "$tag $name ($*): rc=$rc wall=$(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME-$s}") s" | tee -a "$OUT/time.txt"
  PYTHONPATH="$tree${PYTHONPATH:+:$PYTHONPATH}" python3 - "$OUT/$tag-$name.json" <<'EOF' | tee -a "$OUT/time.txt"
import sys

from gpuadvisor.results import load

r = load(sys.argv[1])
for d in r.devices:
    print("   GPU", d.index, " ".join(f"{p.probe}={p.duration_s:.1f}" for p in d.probes))
print("   host", " ".join(f"{p.probe}={p.duration_s:.1f}" for p in r.host_probes),
      "node", " ".join(f"{p.probe}={p.duration_s:.1f}" for p in r.node_probes))
EOF
  awk '$2 >= 0.05' "$OUT/$tag-$name.phases" | sed 's/^/   | /' | tee -a "$OUT/time.txt"
}

tree_steps() {  # tree, tag
  export XDG_CACHE_HOME=$(mktemp -d) CUPY_CACHE_DIR=$(mktemp -d)
  step "$1" "$2" quick-cold --quick
  step "$1" "$2" full-cold --full
  step "$1" "$2" full-warm --full
  step "$1" "$2" quick-warm --quick
}

[ -n "$BEFORE" ] && tree_steps "$BEFORE" before
tree_steps "$HERE" after
if [ -n "$BEFORE" ]; then
  for m in full-warm quick-warm; do
    echo "== figures, $m: before -> after" | tee -a "$OUT/time.txt"
    python3 "$HERE/lab/device/probe_compare.py" "$OUT/before-$m.json" "$OUT/after-$m.json" | tee -a "$OUT/time.txt"
  done
fi
echo "== figures, after: full-cold -> full-warm (run-to-run)" | tee -a "$OUT/time.txt"
python3 "$HERE/lab/device/probe_compare.py" "$OUT/after-full-cold.json" "$OUT/after-full-warm.json" | tee -a "$OUT/time.txt"
