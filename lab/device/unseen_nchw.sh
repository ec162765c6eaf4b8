#!/bin/bash
# The third out-of-sample batch (lab/model_cases.UNSEEN, added 2026-12-06): five CNNs in NCHW, as users run them by
# default, estimates committed before this ran (lab/data/h100-nchw-unseen-2026-12-06/predicted.json); two cases
# each, 20 timed steps, two passes in opposite orders. Run from the repository root with the wheels carried (.whl).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD
ONLY=""
for s in torchvision:resnet50 torchvision:densenet121 torchvision:vgg16 timm:efficientnet_b0 torchvision:r2plus1d_18; do
  ONLY="$ONLY --only $s"
done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv
python3 -m lab.measure_models --unseen $ONLY --timed 20 --budget-s 250 --out $OUT/nchw-1.json 2>&1 | grep -v Warning
python3 -m lab.measure_models --unseen $ONLY --timed 20 --budget-s 250 --reverse --out $OUT/nchw-2.json 2>&1 | grep -v Warning | tail -3
