#!/usr/bin/env bash
# Device run of `gpuadvisor fleet` on one machine with two GPUs (kind nvidia-h200-x2), offline.
#   A. `fleet probe --quick` on a local Ray runtime over both GPUs (one node, one task, 2 GPUs),
#      then `fleet check` and `fleet report`.
#   B. (unless the first argument is "local") a 2-node Ray cluster on this host through
#      `ray start` (head on GPU 0, worker on GPU 1) and `fleet probe --address`: two pinned tasks
#      in parallel, one per node, compared against each other.
# Writes everything under $OUT (default ./out) and prints a summary table last.
# Usage, from the bundle root: bash lab/device/fleet.sh [all|local]
# FLEET_EXTRA adds flags to both `fleet probe` runs (a CPU-only dry run: "--include-cpu-nodes --only host").
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-./out}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
what=${1:-all}
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export RAY_USAGE_STATS_ENABLED=0 RAY_DISABLE_IMPORT_WARNING=1
SITE=${SITE:-/tmp/site}
t0=$EPOCHREALTIME
el() { awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME-$1}"; }

# --- install: the wheels the device lacks, and the repacked Ray core ---------------------------
mkdir -p "$SITE"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" .whl/*.whl \
  >"$OUT/install.log" 2>&1 || { echo "install of .whl/*.whl failed"; tail -5 "$OUT/install.log"; }
tarball=$(ls .whl/ray-core-*.tar.xz 2>/dev/null | head -1)
[ -n "$tarball" ] && tar -xJf "$tarball" -C "$SITE" || echo "no Ray tarball in .whl/"
export PYTHONPATH=$SITE:$PWD
echo "install: $(el "$t0") s"
{
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader
  nvidia-smi topo -m 2>/dev/null | head -5
  python3 -c "import sys, ray, pydantic, torch; print('python', sys.version.split()[0], 'ray', ray.__version__, 'pydantic', pydantic.VERSION, 'torch', torch.__version__, 'cuda GPUs', torch.cuda.device_count())"
} 2>&1 | tee "$OUT/env.txt"

# --- A: local Ray runtime over both GPUs --------------------------------------------------------
s=$EPOCHREALTIME
# shellcheck disable=SC2086
timeout -k 10 300 python3 -m gpuadvisor fleet probe --quick --timeout 240 --out "$OUT/fleet-local" --force ${FLEET_EXTRA:-} \
  >"$OUT/fleet-local.txt" 2>"$OUT/fleet-local.err"
echo "A fleet probe (local runtime) rc=$? wall=$(el "$s") s"
tail -n 8 "$OUT/fleet-local.err"
timeout 60 python3 -m gpuadvisor fleet check "$OUT/fleet-local" --rules rules/training-node.yaml --tolerance 5 --json \
  >"$OUT/fleet-local-check.json" 2>"$OUT/fleet-local-check.err"; echo "A fleet check rc=$? (0 pass, 1 fail)"
timeout 60 python3 -m gpuadvisor fleet report "$OUT/fleet-local" --rules rules/training-node.yaml --tolerance 5 \
  -o "$OUT/fleet-local-report.html" --force 2>&1 | tail -2

# --- B: two Ray nodes on this host, one GPU each, through --address -----------------------------
elapsed=$(awk "BEGIN{printf \"%d\", $EPOCHREALTIME-$t0}")
if [[ $what != local && $elapsed -gt 330 ]]; then
  echo "B skipped: ${elapsed} s used already (keeps the whole run under 600 s)"
elif [[ $what != local ]]; then
  ray_cli() { timeout -k 5 90 python3 -m ray.scripts.scripts "$@"; }
  # Ray 2.5x turns token authentication on once a token exists (part A's ray.init made one); this
  # throwaway cluster listens on this machine only, so it runs without it
  export RAY_AUTH_MODE=disabled
  s=$EPOCHREALTIME
  CUDA_VISIBLE_DEVICES=0 ray_cli start --head --port=6390 --node-ip-address=127.0.0.1 --num-cpus=8 --num-gpus=1 --object-store-memory=200000000 \
    --include-dashboard=false --disable-usage-stats >"$OUT/ray-start.log" 2>&1
  CUDA_VISIBLE_DEVICES=1 ray_cli start --address=127.0.0.1:6390 --node-ip-address=127.0.0.1 --num-cpus=8 --num-gpus=1 --object-store-memory=200000000 \
    >>"$OUT/ray-start.log" 2>&1
  echo "B ray start (2 nodes) rc=$? wall=$(el "$s") s"
  s=$EPOCHREALTIME
  # shellcheck disable=SC2086
  timeout -k 10 200 python3 -m gpuadvisor fleet probe --address 127.0.0.1:6390 --quick --timeout 150 \
    --out "$OUT/fleet-2nodes" --force ${FLEET_EXTRA:-} >"$OUT/fleet-2nodes.txt" 2>"$OUT/fleet-2nodes.err"
  echo "B fleet probe --address (2 nodes) rc=$? wall=$(el "$s") s"
  tail -n 8 "$OUT/fleet-2nodes.err"
  timeout 60 python3 -m gpuadvisor fleet check "$OUT/fleet-2nodes" --tolerance 5 --json \
    >"$OUT/fleet-2nodes-check.json" 2>"$OUT/fleet-2nodes-check.err"; echo "B fleet check rc=$?"
  timeout 60 python3 -m gpuadvisor fleet report "$OUT/fleet-2nodes" --tolerance 5 -o "$OUT/fleet-2nodes-report.html" \
    --force 2>&1 | tail -2
  ray_cli stop --force >>"$OUT/ray-start.log" 2>&1 || true
fi

echo "total wall=$(el "$t0") s"
python3 -m lab.device.fleet_summary "$OUT"/fleet-local "$OUT"/fleet-2nodes 2>&1 | tee "$OUT/summary.txt"
