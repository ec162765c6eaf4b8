#!/usr/bin/env python3
"""Build gpuadvisor/data/graphs/graphs.json.gz: the pre-traced op graphs shipped with the package.

Traces (on the CPU, fake tensors, no weights) every model and setting of the validation cases
(lab/model_cases.py) and the popular models users ask about, in training and inference, each at the
two trace batches (gpuadvisor.estimate.trace.TRACE_BATCHES). With `--logs`, it records instead the step
log of every shipped training step (no checkpointing, every parameter trainable) into
gpuadvisor/data/graphs/steps/ (re-tracing shipped graphs records their logs again too): `--freeze`/`--trainable`
on those models are replayed from it without PyTorch (gpuadvisor/estimate/steplog.py); each log's replay with
every parameter trainable is checked against the shipped graph, and a log that does not reproduce it is left out.
Needs PyTorch, torchvision, timm,
transformers and diffusers (torchaudio and torch_geometric for those models); a model whose library
is missing is reported and left out, and an existing entry for it is kept. The torchaudio entries are
traced on the GPU machine, whose image has a torchaudio matching its PyTorch (none exists for the dev
machine's CPU build): `python3 -m tools.trace_models --only torchaudio --out $OUT/graphs.json.gz` there.

  python3 -m tools.trace_models [--only SUBSTRING] [--missing] [--out PATH] [--logs]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

from gpuadvisor.core.errors import UserError
from gpuadvisor.core.paths import shipped_graphs_dir
from gpuadvisor.estimate.graph import BatchGraph, GraphMode, OpGraph, load, save
from gpuadvisor.estimate.graphstore import SHIPPED_FILE, STEP_LOGS_DIR, key
from gpuadvisor.estimate.steplog import StepLog, log_file, save_logs
from gpuadvisor.estimate.trace.tracer import TRACE_BATCHES, TraceOptions, trace_batches, trace_log
from gpuadvisor.modelref import parse_ref
from lab.model_cases import CASES

#: popular models, traced in the default settings (`default_settings`) like every validation model
POPULAR = ["torchvision:resnet50", "torchvision:vit_b_16", "hf:bert-base-uncased", "hf:whisper-small",
           "hf:sd15-unet", "hf:sdxl-unet", "torchvision:efficientnet_b0", "timm:convnext_tiny",
           "hf:t5-base", "hf:vit-base-patch16-224", "hf:wav2vec2-base", "hf:roberta-base", "hf:bert-base-uncased-qa"]


#: settings of published results the project checks against (bench/cross_card.py) that no default setting covers:
#: Lambda's BERT-base SQuAD fine-tuning (the question-answering head) at DLE's 384 tokens
#: (tests/data/published-cross-card-3.json), and its forward at that length (lab/model_cases.UNSEEN)
PUBLISHED = [*(("hf:bert-base-uncased-qa", TraceOptions(mode=mode, seq=384))
               for mode in (GraphMode.TRAINING, GraphMode.INFERENCE)),
             # and its FP32 ResNet-50 training (NCHW, no autocast); BERT's FP32 training (tests/test_tf32.py)
             ("torchvision:resnet50", TraceOptions(mode=GraphMode.TRAINING, dtype="fp32", mixed_precision=False)),
             ("hf:bert-base-uncased-qa", TraceOptions(mode=GraphMode.TRAINING, dtype="fp32", mixed_precision=False,
                                                      seq=384))]


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
    for spec, opts in PUBLISHED:
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


#: how far a log's replay with every parameter trainable may be from the shipped graph (peak memory, bytes moved,
#: host ops): a log recorded with another version of the model's library than the shipped graph (transformers'
#: Qwen2 and Llama moved 1.5 % of their host ops and 0.1 % of their forward peak) still serves its frozen variants
LOG_TOLERANCE = 0.02


def replay_error(log: StepLog, shipped: OpGraph) -> float:
    """The largest relative difference between `log` replayed with every parameter trainable and the graph
    traced the usual way: FLOPs, bytes read and written, host ops and each phase's peak."""
    replay = log.replay([True] * len(log.param_names))
    pairs = [(replay.flops, shipped.flops), (replay.total("read"), shipped.total("read")),
             (replay.total("written"), shipped.total("written")), (replay.host_ops, shipped.host_ops)]
    peaks = {m.phase: m.peak_bytes for m in shipped.phase_peaks}
    pairs += [(m.peak_bytes, peaks.get(m.phase, 0.0)) for m in replay.phase_peaks]
    return max(abs(a - b) / max(abs(b), 1.0) for a, b in pairs)


def build_logs(graphs: dict[str, BatchGraph], only: str) -> int:
    """Record the step logs of the shipped training steps (module docstring)."""
    directory = shipped_graphs_dir() / STEP_LOGS_DIR
    directory.mkdir(parents=True, exist_ok=True)
    kept = set()
    for k, (spec, opts) in sorted(wanted().items()):
        base = opts.mode is GraphMode.TRAINING and not (opts.checkpointing or opts.freeze or opts.trainable)
        if not base or k not in graphs:
            continue
        default = key(parse_ref(spec), replace(opts, seq=0))
        if opts.seq and default in graphs and graphs[default].low.tokens_per_sample == opts.seq:
            continue  # the default length's log serves it (graphstore._base_logs)
        if only not in spec:
            if log_file(directory, k).is_file():
                kept.add(log_file(directory, k).name)
            continue
        t0 = time.perf_counter()
        try:
            low, high = (trace_log(parse_ref(spec), opts, b) for b in TRACE_BATCHES)
        except UserError as e:
            print(f"skipped {k}: {e}", flush=True)
            continue
        error = max(replay_error(low, graphs[k].low), replay_error(high, graphs[k].high))
        verdict = "kept" if error <= LOG_TOLERANCE else "left out"
        print(f"{time.perf_counter() - t0:6.1f}s  {k}  replay off the shipped graph by {error:.2%}: {verdict}",
              flush=True)
        if error <= LOG_TOLERANCE:
            kept.add(save_logs(directory, k, low, high).name)
    for stale in directory.glob("*.json.gz"):
        if stale.name not in kept:
            stale.unlink()
    size = sum(p.stat().st_size for p in directory.glob("*.json.gz"))
    print(f"{len(kept)} step logs in {directory} ({size / 1e3:.0f} kB)")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default=str(shipped_graphs_dir() / SHIPPED_FILE))
    ap.add_argument("--logs", action="store_true", help="record the step logs of the shipped training graphs")
    ap.add_argument("--missing", action="store_true",
                    help="trace only the settings the file lacks, leaving every stored graph as it is")
    a = ap.parse_args()
    path = Path(a.out)
    if a.logs:
        return build_logs(load(path), a.only)
    try:
        graphs = load(path) if path.is_file() else {}
    except UserError as e:  # an older format: every entry is traced again
        print(f"{path}: {e}; starting afresh")
        graphs = {}
    for k, (spec, opts) in sorted(wanted().items()):
        if a.only not in spec or (a.missing and k in graphs):
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
    if path == shipped_graphs_dir() / SHIPPED_FILE:
        return build_logs(graphs, a.only)  # a re-traced training step's old log would no longer replay it
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
