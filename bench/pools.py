"""PyTorch's 2-D pooling kernels on an H100 against the op pricer (lab/pool_ops.py): max and average pooling,
channels-last and NCHW, forward and backward, over the windows CNNs use. A check, never fitted: the pricer costs a
pooling kernel by its bytes, and these kernels are bound by their work per output element instead."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from bench import REPO

POOLS = REPO / "lab/data/h100-pool-ops-2026-12-05/pool_ops.json"


def rows(path: Path = POOLS) -> list[dict[str, Any]]:
    return list(json.loads(path.read_text())["rows"])


def _op(r: dict[str, Any], phase: str) -> tuple[Any, float]:
    """One measured call as the tracer records it (bf16), with its time."""
    from gpuadvisor.estimate.graph import Op, OpClass, Phase, StreamLayout, StreamShape

    n, c, size, out = r["batch"], r["channels"], r["size"], r["out_size"]
    x, y = 2.0 * n * c * size * size, 2.0 * n * c * out * out
    idx = 4.0 * y if r["kind"] == "max" else 0.0  # int64 indices: 8 bytes an output, 4x its bf16 value
    name = "max_pool2d_with_indices" if r["kind"] == "max" else "avg_pool2d"
    shape = StreamShape(n * c * size * size, StreamLayout.DENSE).to_row()
    if phase == "forward":
        return Op(name, OpClass.ELEMENTWISE, Phase.FORWARD, "bf16", 0.0, x, y + idx, shape), r["forward_s"]
    # the backward reads the output's gradient (and the indices, or the saved input) and writes the input's
    return (Op(name + "_backward", OpClass.ELEMENTWISE, Phase.BACKWARD, "bf16", 0.0, y + idx + x, x, shape),
            r["backward_s"])


def ratios(phase: str, path: Path = POOLS) -> list[float]:
    """The op pricer's time over the measured one for each call of `phase`, on the H100's datasheet figures."""
    from bench.models import hardware
    from gpuadvisor.estimate.opcost import Rates, op_time

    rates = Rates.of(hardware())
    return [op_time(op, rates) / t for r in rows(path) for op, t in [_op(r, phase)]]


def ps_per_output(layout: str, kind: str, phase: str = "forward") -> list[float]:
    """Measured picoseconds per output element of each call of this layout and kind."""
    key = "forward_s" if phase == "forward" else "backward_s"
    return [1e12 * r[key] / (r["batch"] * r["channels"] * r["out_size"] ** 2) for r in rows()
            if r["layout"] == layout and r["kind"] == kind]


def markdown() -> str:
    """A section for docs/nchw.md."""
    fwd, bwd = ratios("forward"), ratios("backward")

    def span(xs: list[float]) -> str:
        return f"{min(xs):.2f}x-{max(xs):.2f}x (median {statistics.median(xs):.2f}x)"

    avg_nhwc = ps_per_output("nhwc", "avg")
    return ("## Pooling kernels (an H100), a check\n\n"
            "PyTorch's max (with indices) and average pooling, bf16, batch 128, channels-last and NCHW, forward and "
            "backward (`lab/pool_ops.py`, `lab/data/h100-pool-ops-2026-12-05/`, 2026-12-05): ResNet's stem pool, "
            "Inception's branch pools, DenseNet's transitions, VGG's pools. The op pricer costs them by their bytes: "
            f"forward {span(fwd)}, backward {span(bwd)} of the measured time. They run a thread an output element "
            f"and are bound by that work: a channels-last average pool takes {min(avg_nhwc):.0f}-{max(avg_nhwc):.0f} "
            "ps an output whatever its window (NCHW about half), and Inception-v3's nine average pools take 6.2 ms "
            "of its 18.9 ms inference step at batch 128 (priced 0.4 ms). A bound per output element (fwd/bwd x "
            "layout, fitted on these calls and scaled by the FP32 rate) was tried: the calibration models' "
            "elementwise class error 0.212 -> 0.190, the out-of-sample vision models 10 -> 11 of 14, but the "
            "calibrated ResNet and VGG-16 steps, already priced long, went up to 1.15x (VGG-16 training at batch "
            "128 1.16x -> 1.32x) and the calibration step error 8.75 -> 9.19 %, with the host constants' refit "
            "unmoved. A max pool's cost also grows with its window, which the trace does not record. Not modelled "
            "yet.\n")
