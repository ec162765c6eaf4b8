#!/usr/bin/env python3
"""Build tests/data/analytic-traced.json.gz: traced op graphs of Hugging Face decoders that
tests/test_analytic_graph.py compares the analytic front-end (gpuadvisor.estimate.analytic) against, so that
the comparison runs without PyTorch. Needs PyTorch and transformers (CPU; fake tensors, nothing downloaded):

  PYTHONPATH=. /path/to/venv/bin/python -m tools.trace_decoders [--out PATH]

The configs are the shipped gpuadvisor/data/configs/{llama-3.2-1b,qwen2.5-0.5b}.json and
tests/data/configs/mistral-7b-v0.3.json (each names the public config.json it was copied from).
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "analytic-traced.json.gz"

#: (config spec for hf:, mode, batch, seq, options): three families, inference and training, two points each,
#: plus pure-16-bit training, a partly frozen model and checkpointed training
CASES: list[tuple[str, str, int, int, dict[str, Any]]] = [
    ("llama-3.2-1b", "inference", 2, 256, {}),
    ("llama-3.2-1b", "inference", 8, 1024, {}),
    ("llama-3.2-1b", "training", 2, 256, {}),
    ("llama-3.2-1b", "training", 4, 1024, {}),
    ("qwen2.5-0.5b", "inference", 2, 128, {}),
    ("qwen2.5-0.5b", "inference", 16, 512, {}),
    ("qwen2.5-0.5b", "training", 2, 128, {}),
    ("qwen2.5-0.5b", "training", 8, 512, {}),
    ("qwen2.5-0.5b", "training", 4, 256, {"mixed_precision": False}),
    ("tests/data/configs/mistral-7b-v0.3.json", "inference", 1, 128, {}),
    ("tests/data/configs/mistral-7b-v0.3.json", "inference", 4, 2048, {}),
    ("tests/data/configs/mistral-7b-v0.3.json", "training", 1, 128, {}),
    ("tests/data/configs/mistral-7b-v0.3.json", "training", 2, 1024, {}),
    ("tests/data/configs/mistral-7b-v0.3.json", "training", 2, 512, {"freeze": ["model.layers.[0-9].*"]}),
    # activation checkpointing of every decoder layer (transformers' gradient_checkpointing_enable())
    ("llama-3.2-1b", "training", 2, 256, {"checkpointing": True}),
    ("qwen2.5-0.5b", "training", 8, 512, {"checkpointing": True}),
    ("tests/data/configs/mistral-7b-v0.3.json", "training", 2, 1024, {"checkpointing": True}),
    # with a frozen embedding: transformers still makes its output require a gradient (enable_input_require_grads)
    ("llama-3.2-1b", "training", 2, 512, {"checkpointing": True, "freeze": ["model.embed_tokens.*",
                                                                            "model.layers.[0-3].*"]}),
]


def case_key(config: str, mode: str, batch: int, seq: int, opts: dict[str, Any]) -> str:
    return f"{config}|{mode}|{batch}|{seq}|{json.dumps(opts, sort_keys=True)}"


def trace_case(config: str, mode: str, batch: int, seq: int, opts: dict[str, Any]) -> Any:
    from gpuadvisor.estimate.graph import GraphMode, merge
    from gpuadvisor.estimate.trace.tracer import TraceOptions, trace_graph
    from gpuadvisor.modelref import parse_ref

    to = TraceOptions(mode=GraphMode(mode), seq=seq, mixed_precision=opts.get("mixed_precision", True),
                      freeze=tuple(opts.get("freeze", ())), checkpointing=opts.get("checkpointing", False))
    g = trace_graph(parse_ref(f"hf:{config}"), to, batch)
    from dataclasses import replace

    return replace(g, ops=merge(g.ops))


def main() -> int:
    import torch
    import transformers

    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args()
    graphs = {}
    for c in CASES:
        t0 = time.perf_counter()
        graphs[case_key(*c)] = trace_case(*c).to_dict()
        print(f"{time.perf_counter() - t0:6.1f}s  {case_key(*c)}", flush=True)
    from gpuadvisor.estimate.graph import FORMAT

    data = {"format": FORMAT, "built_by": "tools/trace_decoders.py",
            "torch": torch.__version__, "transformers": transformers.__version__, "graphs": graphs}
    Path(a.out).write_bytes(gzip.compress(json.dumps(data, separators=(",", ":")).encode(), mtime=0))
    print(f"{len(graphs)} graphs in {a.out} ({Path(a.out).stat().st_size / 1e3:.0f} kB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
