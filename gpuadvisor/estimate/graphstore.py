"""Where a workload's op graph comes from: the pre-traced graphs shipped with the package, else the
tracer (which needs PyTorch). Shipped graphs let `pip install .` without PyTorch answer for popular
models; tools/trace_models.py builds them."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from gpuadvisor.core.errors import UserError
from gpuadvisor.core.paths import shipped_graphs_dir
from gpuadvisor.estimate.graph import BatchGraph, load
from gpuadvisor.estimate.trace.torchlib import TRACE_EXTRA, have_torch
from gpuadvisor.estimate.trace.tracer import TraceOptions, trace_batches
from gpuadvisor.modelref import ModelRef, Source

SHIPPED_FILE = "graphs.json.gz"


def key(ref: ModelRef, opts: TraceOptions) -> str:
    return f"{ref.text}|{opts.key()}"


@lru_cache(maxsize=1)
def shipped() -> dict[str, BatchGraph]:
    path = shipped_graphs_dir() / SHIPPED_FILE
    return load(path) if path.is_file() else {}


def _shipped_match(ref: ModelRef, opts: TraceOptions) -> BatchGraph | None:
    """The shipped graph for these options; a text model's default length matches that length given."""
    graphs = shipped()
    bg = graphs.get(key(ref, opts))
    if bg is not None or not opts.seq:
        return bg
    from dataclasses import replace

    bg = graphs.get(key(ref, replace(opts, seq=0)))
    return bg if bg is not None and bg.low.tokens_per_sample == opts.seq else None


def batch_graph(ref: ModelRef, opts: TraceOptions) -> BatchGraph:
    """The graph of `ref` under `opts`: shipped if it is, traced (and cached) otherwise."""
    bg = _shipped_match(ref, opts)
    if bg is not None:
        return bg
    if ref.source is Source.FILE and not Path(ref.name).is_file():
        raise UserError(f"model file {ref.name} not found")
    if ref.source is not Source.FILE and not have_torch():
        others = sorted({k.split("|")[0] for k in shipped()})
        shipped_note = f"; shipped pre-traced: {', '.join(others)}" if others else ""
        raise UserError(f"{ref.text} with these settings is not pre-traced, and tracing it needs PyTorch: "
                        f"{TRACE_EXTRA}{shipped_note}")
    return trace_batches(ref, opts)


def params_of(ref: ModelRef) -> int:
    """Parameter count of `ref`: from any shipped graph of it (the count does not depend on the settings),
    else from tracing its inference step."""
    for k, bg in shipped().items():
        if k.split("|", 1)[0] == ref.text:
            return bg.low.params
    return batch_graph(ref, TraceOptions()).low.params
