#!/usr/bin/env bash
# Interconnect, node health and repeatability on a machine with two or more GPUs, in one call.
#   bash lab/device/interconnect.sh          # the final run (~8 min on 2x H200)
#   bash lab/device/interconnect.sh smoke    # a short check that every part runs (~1.5 min)
# Writes under $OUT (default ./out): full.json (probe --full --device all, with the interconnect
# probe and its same-run references), quick.tar.gz (five probe --quick results), logs.tar.gz
# (stderr, check, repeatability, GPU tests), summary.txt; prints the summary table last.
set -u
MODE=${1:-final}
OUT=${OUT:-./out}; mkdir -p "$OUT"; W=$(mktemp -d)
# never use NVLink multicast on shared hosts (see the device notes); keep it off for every child
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t() { awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME-$1}"; }
T0=$EPOCHREALTIME
{
  date -u
  nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,clocks.sm,power.limit,temperature.gpu --format=csv
  nvidia-smi topo -m
  python3 -c "import torch, cupy; from cupy.cuda import nccl; print('torch', torch.__version__, 'nccl', torch.cuda.nccl.version(), '| cupy', cupy.__version__, 'nccl', nccl.get_version())"
} >"$W/env.txt" 2>&1
head -n 30 "$W/env.txt"
if [ "$MODE" = smoke ]; then
  s=$EPOCHREALTIME
  timeout -s INT -k 20 300 python3 -m gpuadvisor probe --quick --only properties,tensor,health,interconnect --out "$OUT/smoke.json" \
    >"$W/smoke.txt" 2>"$W/smoke.err"; echo "smoke probe rc=$? wall=$(t $s) s"
  tail -n 25 "$W/smoke.err"
  timeout 120 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_interconnect.py 2>&1 | tail -n 5
  python3 -m lab.interconnect_table "$OUT/smoke.json" | tee "$OUT/summary.txt"
  tar czf "$OUT/logs.tar.gz" -C "$W" .
  exit 0
fi
s=$EPOCHREALTIME
timeout -s INT -k 20 330 python3 -m gpuadvisor probe --full --device all --out "$W/full.json" >"$W/full.txt" 2>"$W/full.err"
echo "full rc=$? wall=$(t $s) s"; cp "$W/full.json" "$OUT/full.json" 2>/dev/null
grep -E "failed|timeout" "$W/full.err" | head -n 8
# repeatability: the GPU probes and the interconnect (the host and crossover probes measure the CPU)
GPU_ONLY=properties,memory_bandwidth,transfer,flops,tensor,health,interconnect
for i in 1 2 3 4 5; do
  if [ "$(t $T0 | cut -d. -f1)" -gt "${BUDGET_S:-500}" ]; then echo "quick #$i skipped: past ${BUDGET_S:-500} s"; continue; fi
  s=$EPOCHREALTIME
  timeout -s INT -k 20 100 python3 -m gpuadvisor probe --quick --device all --only $GPU_ONLY --out "$W/quick$i.json" \
    >/dev/null 2>"$W/quick$i.err"
  echo "quick #$i rc=$? wall=$(t $s) s"
done
python3 -m gpuadvisor check --rules rules/training-node.yaml --probe "$W/full.json" >"$W/check.txt" 2>&1
echo "check rc=$?"; grep -iE "fail|✗" "$W/check.txt" | head -n 12
python3 -m tools.repeatability "$W"/quick*.json --json "$W/repeat.json" >"$W/repeat.txt" 2>&1
(cd "$W" && tar czf "$OUT/quick.tar.gz" quick*.json)
tar czf "$OUT/logs.tar.gz" -C "$W" --exclude='quick*.json' --exclude=full.json .
{ python3 -m lab.interconnect_table "$W/full.json"; echo; grep -E "tensor|busbw_1g|busbw_4g|p2p_|worst" "$W/repeat.txt"; } \
  >"$OUT/summary.txt" 2>&1
cat "$OUT/summary.txt"
