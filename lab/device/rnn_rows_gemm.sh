python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1; export PYTHONPATH=/tmp/site:$PWD
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $OUT/smi.txt; cat $OUT/smi.txt; date -u
python3 -m lab.misaligned_gemm --out $OUT/misaligned_gemm.json 2>&1 | tail -60
for r in 1 2 3; do
  python3 -m lab.measure_models --unseen --only lab/models/lstm_forecast --timed 50 --out $OUT/lstm_forecast-$r.json 2>&1 | tail -3
  python3 -m lab.measure_models --unseen --only lab/models/gru_activity --timed 50 --out $OUT/gru_activity-$r.json 2>&1 | tail -3
done
python3 -m lab.rnn_calls --out $OUT/rnn_calls_rows.json --hidden 64,96,160 --layers 1,2 --batches 16,256,1024 --steps 64,256 2>&1 | tail -5
date -u
