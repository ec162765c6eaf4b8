#!/bin/bash
# The second out-of-sample batch (lab/model_cases.UNSEEN, added 2026-12-06), estimates committed before this ran
# (lab/data/h100-unseen-broad-2026-12-06/predicted.json): 14 models, two cases each, 20 timed steps, two passes in
# opposite orders so that host drift shows. Run from the repository root with the wheels carried (.whl).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD
ONLY=""
for s in lab/models/torch_transformer lab/models/dcgan lab/models/dlrm_small torchvision:r3d_18 \
    torchvision:deeplabv3_resnet50 timm:mixer_b16_224 timm:convmixer_768_32 timm:maxvit_tiny_tf_224 timm:levit_128 \
    timm:repvgg_a2 timm:dm_nfnet_f0 timm:beit_base_patch16_224 hf:roberta-base hf:vit-base-patch16-224; do
  ONLY="$ONLY --only $s"
done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv
python3 -m lab.measure_models --unseen $ONLY --timed 20 --budget-s 250 --out $OUT/broad-1.json 2>&1 | grep -v Warning
python3 -m lab.measure_models --unseen $ONLY --timed 20 --budget-s 250 --reverse --out $OUT/broad-2.json 2>&1 | grep -v Warning | tail -3
