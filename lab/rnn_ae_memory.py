#!/usr/bin/env python3
"""Where the LSTM autoencoder's training peak goes (lab/models/lstm_autoencoder.py held 10-12 % more than the trace
counted, 2026-12-06): its variants in lab/rnn_ae/ (v0 as written; v1 the decoder's expanded input made contiguous;
v2 built with repeat; v3 the encoder alone; v4 the decoder alone on a dense input), each trained as
lab/measure_models.py trains a case, with the peak of one step and the memory allocated after each phase.

  python3 -m lab.rnn_ae_memory --out $OUT/rnn_ae_memory.json
"""

from __future__ import annotations

import argparse
import json

import torch

from lab.measure_models import run_case


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    rows = []
    for variant in ("v0", "v1", "v2", "v3", "v4"):
        for batch in (512, 2048):
            case = {"spec": f"lab/rnn_ae/{variant}.py:build", "mode": "training", "batch": batch}
            r = run_case(case, timed=5)
            rows.append({"variant": variant, "batch": batch, "peak_bytes": r["peak_bytes"], "time_s": r["time_s"]})
            print(rows[-1], flush=True)
            torch.cuda.empty_cache()
    with open(a.out, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
