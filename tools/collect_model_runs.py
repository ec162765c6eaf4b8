#!/usr/bin/env python3
"""Collect lab/measure_models.py's raw files into tests/data/models-h100.json: what the op-graph
estimator is checked against in CI (bench/models.py). Keeps each case's settings, its step
time and peak memory, and its GPU time per op class from the profiled step (aten ops only: kernels
are attributed to the aten op that launched them, and user annotations are dropped).

  python3 -m tools.collect_model_runs lab/data/h100-models/models-p*.json \
      lab/data/h100-models/remeasured-*.json lab/data/h100-models/run2-*.json

A case measured in several sessions takes the median of the sessions' medians as its time (`runs_s`
lists them): a host-bound eager step's median moves by up to 1.6x between sessions on the same machine
(the host CPU's clock and its neighbours), and more sessions give a steadier centre than more steps in
one. Its memory and profile come from the last file that has it.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import Counter
from pathlib import Path

from gpuadvisor.estimate.trace.classify import classify
from lab.model_cases import case_id

ROOT = Path(__file__).resolve().parent.parent

KEEP = ("spec", "mode", "batch", "held_out", "channels_last", "trainable", "seq", "time_s", "time_spread",
        "timed_steps", "host_issue_s", "dispatch_op_s", "wall_s", "peak_bytes", "params", "trainable_params", "unit")


def main(paths: list[str]) -> int:
    envs, by_id, runs = [], {}, {}
    for p in paths:
        d = json.loads(Path(p).read_text())
        envs.append(d["env"] | {"file": Path(p).name})
        for r in d["results"]:
            if "time_s" not in r:
                by_id.setdefault(case_id(r), {k: r[k] for k in ("spec", "mode", "batch", "held_out") if k in r}
                                 | {"error": r.get("error") or r.get("skipped")})
                continue
            by = Counter()
            for name, (us, _n) in r["ops"].items():
                if name.startswith("aten::"):
                    by[classify(name[6:].rstrip("_"), False).value] += us * 1e-6
            by_id[case_id(r)] = {k: r[k] for k in KEEP if k in r} | {"profiled_s_by_class": dict(by)}
            runs.setdefault(case_id(r), []).append(r["time_s"])
    for cid, times in runs.items():
        by_id[cid] |= {"time_s": statistics.median(times), "runs_s": times}
    cases = list(by_id.values())
    cases.sort(key=lambda c: (c["spec"], c["mode"], c.get("trainable", []) != [], c["batch"]))
    out = ROOT / "tests" / "data" / "models-h100.json"
    out.write_text(json.dumps({"env": envs[-1], "sessions": envs,
                               "source": "lab/measure_models.py (lab/model_cases.py); tools/collect_model_runs.py",
                               "cases": cases}, indent=1) + "\n")
    print(f"{len(cases)} cases from {len(paths)} files -> {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
