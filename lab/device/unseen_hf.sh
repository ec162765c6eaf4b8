#!/bin/bash
# The fourth out-of-sample batch (lab/model_cases.UNSEEN, added 2026-12-06): four Hugging Face transformers models
# built from published configurations, estimates committed before this ran
# (lab/data/h100-hf-unseen-2026-12-06/predicted.json); two cases
# each, 20 timed steps, two passes in opposite orders. Run from the repository root with the wheels carried (.whl).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD
ONLY=""
for s in lab/models/gpt2_medium lab/models/bert_large_cls lab/models/distilbert_cls lab/models/smollm_360m; do
  ONLY="$ONLY --only $s"
done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv
python3 -m lab.measure_models --unseen $ONLY --timed 20 --budget-s 250 --out $OUT/hf-1.json 2>&1 | grep -v Warning
python3 -m lab.measure_models --unseen $ONLY --timed 20 --budget-s 250 --reverse --out $OUT/hf-2.json 2>&1 | grep -v Warning | tail -3
