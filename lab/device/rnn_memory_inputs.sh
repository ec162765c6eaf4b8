nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
python3 -m lab.rnn_memory --grid inputs --out $OUT/rnn_memory_inputs.json 2>&1 | tail -2
date -u
