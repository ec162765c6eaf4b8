#!/usr/bin/env python3
"""Build gpuadvisor/data/graphs/graphs.json.gz: the pre-traced op graphs shipped with the package.

Traces (on the CPU, fake tensors, no weights) every model and setting of the validation cases
(lab/model_cases.py) and the popular models users ask about, in training and inference, each at the
two trace batches (gpuadvisor.estimate.trace.TRACE_BATCHES). Needs PyTorch, torchvision, timm,
transformers and diffusers (torchaudio and torch_geometric for those models); a model whose library
is missing is reported and left out, and an existing entry for it is kept. The torchaudio entries are
traced on the GPU machine, whose image has a torchaudio matching its PyTorch (none exists for the dev
machine's CPU build): `python3 -m tools.trace_models --only torchaudio --out $OUT/graphs.json.gz` there.

  python3 -m tools.trace_models [--only SUBSTRING] [--out PATH]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from gpuadvisor.core.errors import UserError
from gpuadvisor.core.paths import shipped_graphs_dir
from gpuadvisor.estimate.graph import GraphMode, load, save
from gpuadvisor.estimate.graphstore import SHIPPED_FILE, key
from gpuadvisor.estimate.trace.tracer import TraceOptions, trace_batches
from gpuadvisor.modelref import parse_ref
from lab.model_cases import CASES

#: popular models, traced in the default settings (`default_settings`) like every validation model
POPULAR = ["torchvision:resnet50", "torchvision:vit_b_16", "hf:bert-base-uncased", "hf:whisper-small",
           "hf:sd15-unet", "hf:sdxl-unet", "torchvision:efficientnet_b0", "timm:convnext_tiny",
           "hf:t5-base", "hf:vit-base-patch16-224", "hf:wav2vec2-base", "hf:roberta-base"]


def case_options(case: dict) -> TraceOptions:
    return TraceOptions(mode=GraphMode(case["mode"]), channels_last=bool(case.get("channels_last")),
                        trainable=tuple(case.get("trainable", ())), seq=int(case.get("seq", 0)))


def wanted() -> dict[str, tuple[str, TraceOptions]]:
    out = {}
    for c in CASES:
        ref = parse_ref(c["spec"])
        out[key(ref, case_options(c))] = (c["spec"], case_options(c))
    for spec in sorted(set(POPULAR) | {c["spec"] for c in CASES}):
        for opts in default_settings(spec):
            out[key(parse_ref(spec), opts)] = (spec, opts)
    return out


def default_settings(spec: str) -> list[TraceOptions]:
    """What a user without PyTorch can ask of a shipped model: both modes; training with and without
    activation checkpointing (the advisor proposes it when memory binds); images in either layout."""
    image = spec.split(":")[0] in ("torchvision", "timm")
    out = []
    for channels_last in ((True, False) if image else (False,)):
        out.append(TraceOptions(mode=GraphMode.INFERENCE, channels_last=channels_last))
        for checkpointing in (False, True):
            out.append(TraceOptions(mode=GraphMode.TRAINING, channels_last=channels_last, checkpointing=checkpointing))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default=str(shipped_graphs_dir() / SHIPPED_FILE))
    a = ap.parse_args()
    path = Path(a.out)
    try:
        graphs = load(path) if path.is_file() else {}
    except UserError as e:  # an older format: every entry is traced again
        print(f"{path}: {e}; starting afresh")
        graphs = {}
    for k, (spec, opts) in sorted(wanted().items()):
        if a.only not in spec:
            continue
        t0 = time.perf_counter()
        try:
            bg = trace_batches(parse_ref(spec), opts)
        except UserError as e:
            print(f"skipped {k}: {e}", flush=True)
            continue
        graphs[k] = bg
        print(f"{time.perf_counter() - t0:6.1f}s  {k}  aligned={bg.aligned}", flush=True)
        save(graphs, path)
    print(f"{len(graphs)} graphs in {path} ({path.stat().st_size / 1e3:.0f} kB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
