"""The host's issue time per kind of eager op on an H100 host (lab/host_op_kinds.py, three runs of 15 interleaved
rounds, lab/data/h100-host-op-kinds-2026-12-06): each kind against an out-of-place add timed in the same round.

A diagnostic of the op model's host constants, never fitted: a view's measured ratio checks the fitted
HOST_VIEW_OPS / HOST_FWD_OPS_INFERENCE (tests/test_host_kinds.py). The per-class ratios (a GEMM or a convolution
about 1.9-2.2 adds, a batch norm 3.3, an attention 2.6) were tried as weights on each traced op's host time and
not kept: with the host constants refitted on them the calibration split's step error went 8.0 % -> 8.5 %, the held
out's 11.0 % -> 13.2 %, and the unseen models 34 -> 28 of 54 within 0.8x-1.25x: in a model the Python around each op
(module calls, autocast, hooks) outweighs what the op's own dispatch costs."""

from __future__ import annotations

import json
import statistics

from bench import REPO

RUNS = sorted((REPO / "lab/data/h100-host-op-kinds-2026-12-06").glob("host_op_kinds-*.json"))
#: the kinds that launch no kernel: a view, and a view then a permute (two kernel-less ops)
VIEW_KINDS = {"view": 1, "permute": 2}


def inference_ratios() -> dict[str, float]:
    """Kind -> its host time per call against an add's, the median over the runs."""
    got: dict[str, list[float]] = {}
    for path in RUNS:
        for row in json.loads(path.read_text())["rows"]:
            if row["mode"] == "inference":
                got.setdefault(row["kind"], []).append(row["per_add"])
    return {kind: statistics.median(v) for kind, v in got.items()}


def view_ratio() -> float:
    """A kernel-less op's host time against a kernel op's: the mean over VIEW_KINDS, per kernel-less op."""
    ratios = inference_ratios()
    return statistics.mean(ratios[kind] / ops for kind, ops in VIEW_KINDS.items())
