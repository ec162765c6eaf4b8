#!/usr/bin/env bash
# One call on two NVLinked H200s (kind nvidia-h200-x2) for what needs several GPUs besides the
# interconnect probe (lab/device/interconnect.sh):
#   1. `gpuadvisor run` (quick by default): the main job with GPUs present (the local card beside the picks)
#   2. `gpuadvisor fleet probe --quick` on a local Ray runtime over both GPUs (lab/device/fleet.sh local)
#   3. the multi-GPU estimate validation (lab/validate_multigpu.py: DDP, FSDP, tensor parallel 2)
# Run from a bundle made by lab/stage_fleet_bundle.sh (it carries pydantic, Ray, Plotly as wheels).
# TOTAL (seconds, default 560) bounds the whole run; the multi-GPU cases get what is left.
# Everything lands in $OUT/final.tar.gz (the device returns 8 files at most); a summary prints last.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-./out}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
W=$(mktemp -d); mkdir -p "$W/run" "$W/fleet" "$W/multigpu"
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$SECONDS
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader | tee "$W/env.txt"

# 2 first: fleet.sh installs the carried wheels and Ray into /tmp/site
OUT=$W/fleet timeout -k 10 240 bash lab/device/fleet.sh local > "$W/fleet/fleet.log" 2>&1
echo "fleet: rc=$? $((SECONDS - t0)) s"; tail -n 12 "$W/fleet/fleet.log"
export PYTHONPATH=/tmp/site:$PWD

s=$SECONDS
timeout -k 10 150 python3 -m gpuadvisor run --out-dir "$W/run" > "$W/run/run.txt" 2> "$W/run/run.err"
echo "run: rc=$? $((SECONDS - s)) s"; grep -iE "your|local|this machine|GPU 0|GPU 1" "$W/run/run.txt" | head -8

s=$SECONDS
left=$(( ${TOTAL:-560} - (SECONDS - t0) - 25 ))  # TOTAL: the seconds this call may take in all
OUT=$W/multigpu timeout -k 10 $left python3 -m lab.validate_multigpu > "$W/multigpu/log.txt" 2>&1
echo "multigpu: rc=$? $((SECONDS - s)) s (limit $left s)"; tail -n 15 "$W/multigpu/log.txt"

tar -C "$W" -czf "$OUT/final.tar.gz" .
cp "$W/run/run.txt" "$OUT/run.txt" 2>/dev/null
echo "total $((SECONDS - t0)) s"
