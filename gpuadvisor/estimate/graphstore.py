"""Where a workload's op graph comes from: the pre-traced graphs shipped with the package, else the
tracer (which needs PyTorch). Shipped graphs let `pip install .` without PyTorch answer for popular
models; tools/trace_models.py builds them."""

from __future__ import annotations

import gzip
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from gpuadvisor.core.errors import UserError
from gpuadvisor.core.paths import shipped_graphs_dir
from gpuadvisor.estimate.graph import BatchGraph, GraphMode, OpGraph
from gpuadvisor.estimate.steplog import StepLog, load_logs, replay_pair
from gpuadvisor.estimate.trace.torchlib import LIBRARY_EXTRAS, have_torch, install_command
from gpuadvisor.estimate.trace.tracer import TraceOptions, model_params, trace_batches
from gpuadvisor.modelref import ModelRef, Source

SHIPPED_FILE = "graphs.json.gz"
STEP_LOGS_DIR = "steps"  # step logs of the shipped training graphs (steplog.py): their frozen variants


def key(ref: ModelRef, opts: TraceOptions) -> str:
    return f"{ref.text}|{opts.key()}"


@lru_cache(maxsize=1)
def _shipped_rows() -> dict[str, Any]:
    """The shipped graphs as stored, decoded one by one when asked for (decoding all 120 took half a second)."""
    path = shipped_graphs_dir() / SHIPPED_FILE
    if not path.is_file():
        return {}
    try:
        return dict(json.loads(gzip.decompress(path.read_bytes())))
    except (OSError, ValueError, EOFError) as e:
        raise UserError(f"{path}: not a readable op-graph file: {e}") from None


@lru_cache(maxsize=64)
def _shipped_graph(k: str) -> BatchGraph | None:
    row = _shipped_rows().get(k)
    return BatchGraph.from_dict(row) if row is not None else None


def shipped_keys() -> tuple[str, ...]:
    """The keys of every shipped graph ('spec|options'), none decoded (shipped() decodes them all)."""
    return tuple(_shipped_rows())


def shipped() -> dict[str, BatchGraph]:
    """Every shipped graph by key (graph.save's keys: 'spec|options')."""
    return {k: g for k in _shipped_rows() if (g := _shipped_graph(k)) is not None}


def _shipped_match(ref: ModelRef, opts: TraceOptions) -> BatchGraph | None:
    """The shipped graph for these options; a text model's default length matches that length given."""
    bg = _shipped_graph(key(ref, opts))
    if bg is not None or not opts.seq:
        return bg
    from dataclasses import replace

    bg = _shipped_graph(key(ref, replace(opts, seq=0)))
    return bg if bg is not None and bg.low.tokens_per_sample == opts.seq else None


def extra_for(ref: ModelRef) -> str:
    """The install extra that traces `ref`: its library's, or the plain [trace] for a file of your own."""
    library = {Source.TORCHVISION: "torchvision", Source.TIMM: "timm", Source.TORCHAUDIO: "torchaudio",
               Source.HF: "transformers"}.get(ref.source)
    return LIBRARY_EXTRAS[library] if library else "trace"


def _base_logs(ref: ModelRef, opts: TraceOptions) -> tuple[StepLog, StepLog] | None:
    """The shipped step logs of `ref`'s training step in these settings with every parameter trainable; a text
    model's default length matches that length given (as _shipped_match)."""
    from dataclasses import replace

    base = replace(opts, freeze=(), trainable=())
    directory = shipped_graphs_dir() / STEP_LOGS_DIR
    logs = load_logs(directory, key(ref, base))
    if logs is not None or not opts.seq:
        return logs
    logs = load_logs(directory, key(ref, replace(base, seq=0)))
    return logs if logs is not None and logs[0].graph.tokens_per_sample == opts.seq else None


@lru_cache(maxsize=16)
def frozen_variant(ref: ModelRef, opts: TraceOptions) -> BatchGraph | None:
    """The graph of a training step with frozen parameters, replayed from the shipped step of the same settings
    with every parameter trainable (steplog.py); None where no step of them is shipped."""
    if opts.mode is not GraphMode.TRAINING or not (opts.freeze or opts.trainable):
        return None
    logs = _base_logs(ref, opts)
    return replay_pair(logs, freeze=opts.freeze, trainable=opts.trainable) if logs is not None else None


def batch_graph(ref: ModelRef, opts: TraceOptions) -> BatchGraph:
    """The graph of `ref` under `opts`: shipped if it is, replayed from a shipped step with parameters frozen,
    traced (and cached) otherwise."""
    bg = _shipped_match(ref, opts) or frozen_variant(ref, opts)
    if bg is not None:
        return bg
    if ref.source is Source.FILE and not Path(ref.name).is_file():
        raise UserError(f"model file {ref.name} not found")
    _needs_torch(ref, "in these settings is not pre-traced")
    return trace_batches(ref, opts)


def graph_at(ref: ModelRef, opts: TraceOptions, batch: int) -> OpGraph:
    """The graph of `ref` at `batch`: from its two-batch graph where the step is the same op stream at both trace
    batches (figures linear in the batch), else traced at `batch` itself (and batch + 1: a BatchGraph's pair), as
    a detection model's per-image loops need (its op count grows with the batch)."""
    bg = batch_graph(ref, opts)
    if bg.aligned or batch in (bg.low.batch, bg.high.batch):
        return bg.at(batch)
    _needs_torch(ref, f"at batch {batch} is not pre-traced (its step is not the same op stream at every batch)")
    return trace_batches(ref, opts, (batch, batch + 1)).at(batch)


def _needs_torch(ref: ModelRef, why: str) -> None:
    """One line saying what to install where `ref` needs PyTorch and it is not installed (asked without importing
    it: a cached trace answers without PyTorch)."""
    if ref.source is not Source.FILE and not have_torch():
        raise UserError(f"{ref.text} {why}; tracing it needs PyTorch: {install_command(extra_for(ref))}")


def params_of(ref: ModelRef) -> int:
    """Parameter count of `ref`: from any shipped graph of it (the count does not depend on the settings),
    else from its module alone (tracer.model_params: cached, never traced)."""
    for k, row in _shipped_rows().items():
        if k.split("|", 1)[0] == ref.text:
            return int(row["low"]["params"])
    _needs_torch(ref, "is not pre-traced")
    return model_params(ref)
