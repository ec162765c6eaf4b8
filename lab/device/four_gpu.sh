#!/usr/bin/env bash
# One call on four H100s (kind nvidia-h100-x4): the tool on a four-GPU node, then the four-GPU ground truth.
#   1. probe --full --device all (topology, P2P matrix, NCCL over 4 ranks and over GPUs 0-1, torch.distributed
#      in the same run)          2. check --rules rules/training-node.yaml on it    3. report on it (HTML sample)
#   4. run                       5. fleet probe on a local Ray runtime (lab/device/fleet.sh local)
#   6. lab/validate_four_gpu.py with the seconds left (its cases most telling first; the rest is skipped)
# Run from the root of a bundle made by lab/stage_fleet_bundle.sh (.whl/ holds pydantic, textual, plotly,
# jsonschema and the repacked Ray core, which the device image lacks).
# TOTAL (seconds, default 540) bounds the whole run; TRUTH_MIN (default 150) is kept for step 6 whatever
# steps 1-5 take. Every step runs under `timeout`. Returns in $OUT: four.tar.gz (everything), probe.json,
# report.html, four_gpu.json, summary.txt; the summary table prints last.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-./out}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
W=$(mktemp -d); mkdir -p "$W/run" "$W/fleet" "$W/truth"
# never NVLink multicast on a shared host (device notes); exported so every child keeps it off
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export RAY_USAGE_STATS_ENABLED=0 RAY_DISABLE_IMPORT_WARNING=1
TOTAL=${TOTAL:-540}; TRUTH_MIN=${TRUTH_MIN:-150}
t0=$SECONDS
ROWS=()
# limit WANT: WANT seconds, or fewer so that TRUTH_MIN (and 15 s to pack) stay for the ground truth
limit() { local l=$(( TOTAL - (SECONDS - t0) - TRUTH_MIN - 15 )); (( l < $1 )) && echo "$l" || echo "$1"; }
step() {  # step NAME WANT_S CMD...: run CMD under timeout, note rc and wall; skipped when < 15 s are left
  local name=$1 want=$2; shift 2
  local lim; lim=$(limit "$want")
  if (( lim < 15 )); then ROWS+=("$(printf '%-14s %5s %6s  %s' "$name" - - "skipped: ${lim} s left before the ground truth")"); return; fi
  local s=$SECONDS
  timeout -s INT -k 15 "$lim" "$@"; local rc=$?
  ROWS+=("$(printf '%-14s %5s %6s  limit %s s' "$name" "$rc" "$((SECONDS - s))" "$lim")")
  echo "== $name rc=$rc $((SECONDS - s)) s (limit $lim s)"
}

# --- 0: the carried wheels (as lab/device/fleet.sh installs them) and the machine ---------------------------
s=$SECONDS
mkdir -p /tmp/site
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  >"$W/install.log" 2>&1 || { echo "install of .whl/*.whl failed"; tail -5 "$W/install.log"; }
tarball=$(ls .whl/ray-core-*.tar.xz 2>/dev/null | head -1)
[ -n "$tarball" ] && tar -xJf "$tarball" -C /tmp/site || echo "no Ray tarball in .whl/"
export PYTHONPATH=/tmp/site:$PWD
ROWS+=("$(printf '%-14s %5s %6s' install 0 "$((SECONDS - s))")")
{
  date -u
  nvidia-smi --query-gpu=index,name,driver_version,memory.total,power.limit --format=csv,noheader
  nvidia-smi topo -m
  python3 -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__, 'nccl', torch.cuda.nccl.version(), 'GPUs', torch.cuda.device_count())"
  python3 -c "import pydantic, plotly, ray; print('pydantic', pydantic.VERSION, 'plotly', plotly.__version__, 'ray', ray.__version__)"
} >"$W/env.txt" 2>&1
cat "$W/env.txt"

# --- 1-3: the node probe, the node rules, the HTML report ----------------------------------------------------
step probe-full 170 python3 -m gpuadvisor probe --full --device all --json --out "$W/probe.json" \
  >"$W/probe.stdout" 2>"$W/probe.err"
grep -E "failed|timeout|skipped" "$W/probe.err" | head -n 8
if [ -f "$W/probe.json" ]; then
  step check 30 python3 -m gpuadvisor check --rules rules/training-node.yaml --probe "$W/probe.json" \
    >"$W/check.txt" 2>&1
  grep -iE "fail|✗|pass" "$W/check.txt" | head -n 12
  step report 60 python3 -m gpuadvisor report --probe "$W/probe.json" llama-3-8b --mode training --gpus 4 \
    --sharding fsdp -o "$W/report.html" --force >"$W/report.txt" 2>&1
  python3 -m lab.interconnect_table "$W/probe.json" >"$W/interconnect.txt" 2>&1; head -n 60 "$W/interconnect.txt"
else
  ROWS+=("check/report   -      -  skipped: no probe.json")
fi

# --- 4-5: the main job, the fleet over a local Ray runtime ---------------------------------------------------
step run-quick 100 python3 -m gpuadvisor run --out-dir "$W/run" >"$W/run/run.txt" 2>"$W/run/run.err"
grep -iE "your|local|this machine|GPU [0-3]" "$W/run/run.txt" | head -8
step fleet-local 120 env OUT="$W/fleet" SITE=/tmp/site bash lab/device/fleet.sh local >"$W/fleet/fleet.log" 2>&1
tail -n 12 "$W/fleet/fleet.log"

# --- 6: the ground truth with what is left --------------------------------------------------------------------
left=$(( TOTAL - (SECONDS - t0) - 15 ))
s=$SECONDS
timeout -k 15 "$left" python3 -m lab.validate_four_gpu --budget-s $(( left - 10 )) --out "$W/truth" \
  >"$W/truth/log.txt" 2>&1
rc=$?
ROWS+=("$(printf '%-14s %5s %6s  limit %s s' ground-truth "$rc" "$((SECONDS - s))" "$left")")

# --- pack: at most 8 files come back ------------------------------------------------------------------------
tar -C "$W" -czf "$OUT/four.tar.gz" .
cp "$W/probe.json" "$OUT/probe.json" 2>/dev/null
cp "$W/report.html" "$OUT/report.html" 2>/dev/null
cp "$W/truth/four_gpu.json" "$OUT/four_gpu.json" 2>/dev/null
{
  echo "== steps (rc: 0 ok, 124 timed out; wall s)"
  printf '%s\n' "${ROWS[@]}"
  echo "== check"; grep -iE "fail|✗" "$W/check.txt" 2>/dev/null | head -n 8
  echo "== interconnect"; grep -E "busbw_(1g|4g)|p2p_[0-3]_[0-3] " "$W/interconnect.txt" 2>/dev/null | head -n 30
  echo "== ground truth"; tail -n 16 "$W/truth/log.txt"
  echo "total $((SECONDS - t0)) s of $TOTAL"
} >"$OUT/summary.txt" 2>&1
cat "$OUT/summary.txt"
