"""Out-of-sample accuracy on the H100: models nobody on the project measured before (lab/model_cases.UNSEEN),
estimated from their graphs traced on the GPU machine (tests/data/unseen-graphs.json.gz, whose libraries the dev
machine may lack) with the H100's datasheet figures. No fit reads these cases."""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench import TESTS_DATA
from bench.models import Result, hardware, workload

MEASURED = TESTS_DATA / "models-h100-unseen.json"
GRAPHS = TESTS_DATA / "unseen-graphs.json.gz"


def load(path: Path = MEASURED) -> list[dict[str, Any]]:
    return [c for c in json.loads(path.read_text())["cases"] if "time_s" in c]


def family(spec: str) -> str:
    """"recurrent" for the LSTM and GRU models (lab/model_cases.RECURRENT_UNSEEN), else "other": the two sets the
    gates hold apart (a recurrent step is mostly host time, and its runs moved with their host)."""
    from lab.model_cases import RECURRENT_UNSEEN

    return "recurrent" if spec in RECURRENT_UNSEEN else "other"


@functools.cache
def _stored_rows() -> dict[str, Any]:
    """GRAPHS as graphstore keeps its shipped rows, read once a process."""
    from gpuadvisor.estimate.graph import load as load_graphs

    return {k: g.to_dict() for k, g in load_graphs(GRAPHS).items()}


@contextlib.contextmanager
def stored_graphs() -> Iterator[None]:
    """The estimator reads the unseen graphs as if they were shipped (graphstore looks a shipped graph up by key)."""
    from gpuadvisor.estimate import graphstore

    rows = _stored_rows()
    original = graphstore._shipped_rows
    graphstore._shipped_rows = lambda: {**original(), **rows}  # type: ignore[assignment]
    graphstore._shipped_graph.cache_clear()
    try:
        yield
    finally:
        graphstore._shipped_rows = original
        graphstore._shipped_graph.cache_clear()


def evaluate(cases: list[dict[str, Any]] | None = None, card: str | None = None) -> list[Result]:
    """Each case estimated on `card`'s datasheet (the H100 SXM's by default: where the cases were measured)."""
    from gpuadvisor.core.errors import UserError
    from gpuadvisor.estimate import estimate_compute, estimate_memory

    gpu_figures = hardware(card) if card else hardware()
    out = []
    with stored_graphs():
        for c in cases if cases is not None else load():
            try:
                w = workload(c)
                comp = estimate_compute(w, gpu_figures)
                out.append(Result(c, comp.step_time_s or comp.time_s, estimate_memory(w).tensors))
            except (UserError, ValueError, KeyError) as e:
                out.append(Result(c, error=f"{type(e).__name__}: {e}"))
    return out


def probed_ratios(cases: list[dict[str, Any]] | None = None) -> dict[tuple[str, str, int], float]:
    """The cases measured in several runs (all of them since 2026-12-05), each run estimated for the host it ran on
    (its dispatch probe, the mean of the probes before and after, as a user's `--probe` gives it) against that run's
    time: the median of the runs' estimate / measured, by (spec, mode, batch). Their steps are mostly host-bound,
    and the runs' hosts probed at 9-17 us an op against the calibration host's 10."""
    from dataclasses import replace
    from statistics import median

    from gpuadvisor.estimate import estimate_compute

    gpu_figures = hardware()
    out = {}
    with stored_graphs():
        for c in cases if cases is not None else load():
            if not c.get("runs"):
                continue
            w = workload(c)
            ratios = []
            for run in c["runs"]:
                comp = estimate_compute(w, replace(gpu_figures, host_op_s=sum(run["dispatch_op_s"]) / 2))
                ratios.append((comp.step_time_s or comp.time_s) / run["time_s"])
            out[(c["spec"], c["mode"], c["batch"])] = median(ratios)
    return out


def table(results: list[Result], probed: dict[tuple[str, str, int], float] | None = None) -> str:
    """The cases; `probed` (probed_ratios) adds the time ratio with each run's own host."""
    probed = probed or {}
    rows = ["| model | mode | batch | measured ms | runs: ms (dispatch probe us) | time est/meas | with each run's "
            "host | peak GiB | memory est/meas |", "|---|---|---:|---:|---|---:|---:|---:|---:|"]
    for r in results:
        c = r.case
        runs = ", ".join(f"{x['time_s'] * 1e3:.2f} ({sum(x['dispatch_op_s']) / 2 * 1e6:.0f})"
                         for x in c.get("runs", ()))
        with_host = probed.get((c["spec"], c["mode"], c["batch"]))
        rows.append(f"| {c['spec']} | {c['mode']} | {c['batch']} | {c['time_s'] * 1e3:.2f} | {runs or 'one run'} | "
                    f"{r.time_ratio:.2f}x | {f'{with_host:.2f}x' if with_host else '-'} | "
                    f"{c['peak_bytes'] / 2**30:.2f} | {r.memory_ratio:.2f}x |")
    return "\n".join(rows)
