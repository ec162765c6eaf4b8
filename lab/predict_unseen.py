#!/usr/bin/env python3
"""Record the estimates of out-of-sample models before they are measured: each case of lab/model_cases.UNSEEN whose
spec starts with one of `--only`, estimated as bench.unseen.evaluate estimates the measured ones (the H100 SXM's
datasheet, graphs from tests/data/unseen-graphs.json.gz), into a predicted.json to commit before the GPU runs.

  python3 -m lab.predict_unseen --only lab/models/char_gru --only lab/models/lstm_sensor --out DIR/predicted.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
from pathlib import Path

from bench import unseen
from lab.model_cases import UNSEEN


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", required=True, help="a spec prefix (repeatable)")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    cases = [c for c in UNSEEN if any(c["spec"].startswith(p) for p in a.only)]
    rows = []
    for r in unseen.evaluate(cases):
        if r.error:
            raise SystemExit(f"{r.case['spec']} {r.case['mode']} b{r.case['batch']}: {r.error}")
        rows.append({"spec": r.case["spec"], "mode": r.case["mode"], "batch": r.case["batch"],
                     "estimate_step_s": r.time_s, "estimate_peak_tensor_bytes": r.tensor_bytes})
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps({
        "about": "estimates written before the models were measured (bench.unseen.evaluate on the dev machine: the "
                 "H100 SXM's datasheet, graphs traced on its CPU into tests/data/unseen-graphs.json.gz); time of one "
                 "step and peak tensor memory (CUDA context excluded, as the measured max_memory_allocated)",
        "commit": commit, "date": datetime.date.today().isoformat(), "rows": rows}, indent=1) + "\n")
    for row in rows:
        print(f"{row['spec']} {row['mode']} b{row['batch']}: {row['estimate_step_s'] * 1e3:.2f} ms, "
              f"{row['estimate_peak_tensor_bytes'] / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
