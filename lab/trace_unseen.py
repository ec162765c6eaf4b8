#!/usr/bin/env python3
"""Trace the out-of-sample cases (lab/model_cases.UNSEEN) where their libraries are installed (the GPU machine's
image has torchvision and timm; the dev machine has neither), so that the estimates can be recomputed anywhere from
the stored graphs: tests/data/unseen-graphs.json.gz, keyed as the shipped graphs are (graphstore.key).

  python3 -m lab.trace_unseen --out $OUT/unseen-graphs.json.gz
  python3 -m lab.trace_unseen --only lab/models/ --merge tests/data/unseen-graphs.json.gz \
      --out tests/data/unseen-graphs.json.gz   # re-trace the cases whose spec starts so, keep the others
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from gpuadvisor.estimate.graph import GraphMode, save
from gpuadvisor.estimate.graphstore import key
from gpuadvisor.estimate.trace.tracer import TraceOptions, trace_batches
from gpuadvisor.modelref import parse_ref
from lab.model_cases import UNSEEN


def options(case: dict) -> TraceOptions:
    shape = tuple(case["input"]) if case.get("input") else None
    return TraceOptions(mode=GraphMode(case["mode"]), channels_last=bool(case.get("channels_last")),
                        seq=int(case.get("seq", 0)), input_shape=shape)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="", help="trace only the cases whose spec starts with this")
    ap.add_argument("--merge", help="a stored graphs file whose other graphs are kept")
    a = ap.parse_args()
    from gpuadvisor.estimate.graph import load

    graphs = dict(load(Path(a.merge))) if a.merge else {}
    done: set[str] = set()
    for case in (c for c in UNSEEN if c["spec"].startswith(a.only)):
        ref, opts = parse_ref(case["spec"]), options(case)
        k = key(ref, opts)
        if k in done:
            continue
        done.add(k)
        t0 = time.perf_counter()
        try:
            graphs[k] = trace_batches(ref, opts)
            print(f"traced {k} in {time.perf_counter() - t0:.1f} s", flush=True)
        except Exception as e:  # a model that does not trace is reported; the others are kept
            print(f"FAILED {k}: {type(e).__name__}: {str(e)[:300]}", flush=True)
    save(graphs, Path(a.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
