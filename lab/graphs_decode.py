#!/usr/bin/env python3
"""CUDA-graph decode steps on whatever card this runs on, in lab/bench_decode.py's file format (its `decode`
records with `graphs_own` only, and its `ceilings`): the graphs engine's decode against another card than the H100
the time model was fitted on (tools.validate_time.decode_rows reads the file for any card).

The four validation models (0.5B-8B, random bf16 weights from their configs) at batches 1, 8, 32 and 64, a
512-token prompt and 32 timed steps, each step one captured graph of lab.bench_decode.OwnDecoder replayed.

  python3 -m lab.graphs_decode            # on the GPU; writes $OUT/graphs-decode.json (about 1-2 min)
"""

from __future__ import annotations

import json
import os
import time
import traceback
from pathlib import Path

from lab.bench_decode import BATCHES, GEN, MODELS, PROMPT, ceilings, own_graph_decode
from lab.bench_kernels import cuda_device_env, host_info, log


def main() -> int:
    import torch

    from gpuadvisor.workload import spec_from_config

    out = Path(os.environ.get("OUT") or "./out")
    out.mkdir(parents=True, exist_ok=True)
    env = {"torch": torch.__version__, "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
           "host": host_info(), **cuda_device_env()}
    result: dict = {"env": env, "prompt": PROMPT, "gen": GEN, "ceilings": ceilings("cuda"), "decode": []}
    log("ceilings", result["ceilings"])
    for name, cfg in MODELS.items():
        params = spec_from_config(cfg, name=name).num_params
        for batch in BATCHES:
            rec = {"model": name, "config": cfg, "params": params, "batch": batch, "prompt": PROMPT, "gen": GEN}
            try:
                rec["graphs_own"] = own_graph_decode(cfg, "cuda", batch, PROMPT, GEN)
            except Exception as e:
                rec["graphs_own"] = {"error": repr(e)[:400], "trace": traceback.format_exc()[-1500:]}
            log(name, batch, rec["graphs_own"].get("step_s"))
            result["decode"].append(rec)
            (out / "graphs-decode.json").write_text(json.dumps(result, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
