python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1; export PYTHONPATH=/tmp/site:$PWD
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
for r in 1 2 3; do
  python3 -m lab.measure_models --unseen --only lab/models/gru_review --timed 50 --out $OUT/gru_review-$r.json 2>&1 | grep -v Warning | tail -4
done
date -u
