#!/usr/bin/env python3
"""Record the estimates of out-of-sample models before they are measured: each case of lab/model_cases.UNSEEN whose
spec starts with one of `--only`, estimated as bench.unseen.evaluate estimates the measured ones (the H100 SXM's
datasheet, graphs from tests/data/unseen-graphs.json.gz), into a predicted.json to commit before the GPU runs.

  python3 -m lab.predict_unseen --only lab/models/char_gru --only lab/models/lstm_sensor --out DIR/predicted.json
      [--card "H200 SXM"] [--one-persist-floor 2.8e-6]

--card estimates for another catalog card's datasheet (a run that may land on it); --one-persist-floor prices every
persistent RNN step at that one floor, as before the small-hidden kernel's step went with its batch rows
(bench.recurrent.one_persist_floor): the alternative a run decides against.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
from pathlib import Path

from bench import unseen
from lab.model_cases import UNSEEN


def _estimates(cases: list[dict], card: str | None, floor_s: float | None) -> list[unseen.Result]:
    """The cases estimated on `card`, each with its persistent RNN steps at one floor where `floor_s` is given."""
    if floor_s is None:
        return unseen.evaluate(cases, card)
    from bench.recurrent import one_persist_floor
    from gpuadvisor.estimate import calibration as cal

    out = []
    for c in cases:
        with cal.override(**one_persist_floor(floor_s, c["batch"])):
            out.extend(unseen.evaluate([c], card))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", required=True, help="a spec prefix (repeatable)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--card", default=None, help="a catalog card (default: the H100 SXM the cases are measured on)")
    ap.add_argument("--one-persist-floor", type=float, default=None, metavar="SECONDS",
                    help="price every persistent RNN step at this one floor")
    a = ap.parse_args()
    cases = [c for c in UNSEEN if any(c["spec"].startswith(p) for p in a.only)]
    rows = []
    for r in _estimates(cases, a.card, a.one_persist_floor):
        if r.error:
            raise SystemExit(f"{r.case['spec']} {r.case['mode']} b{r.case['batch']}: {r.error}")
        rows.append({"spec": r.case["spec"], "mode": r.case["mode"], "batch": r.case["batch"],
                     "estimate_step_s": r.time_s, "estimate_peak_tensor_bytes": r.tensor_bytes})
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps({
        "about": "estimates written before the models were measured (bench.unseen.evaluate on the dev machine: the "
                 f"{a.card or 'H100 SXM'}'s datasheet, graphs traced on its CPU into tests/data/unseen-graphs.json.gz"
                 + (f"; every persistent RNN step at one floor of {a.one_persist_floor:g} s" if a.one_persist_floor
                    else "") + "); time of one step and peak tensor memory (CUDA context excluded, as the measured "
                 "max_memory_allocated)",
        "commit": commit, "date": datetime.date.today().isoformat(), "rows": rows}, indent=1) + "\n")
    for row in rows:
        print(f"{row['spec']} {row['mode']} b{row['batch']}: {row['estimate_step_s'] * 1e3:.2f} ms, "
              f"{row['estimate_peak_tensor_bytes'] / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
