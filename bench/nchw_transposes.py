"""cuDNN's layout transposes around a 16-bit NCHW convolution on an H100 (lab/nchw_transposes.py,
lab/data/h100-nchw-transposes-2026-12-06): which convolutions get them, and at what rate.

Every convolution there of a filter wider than 1x1 ran three transposes a pass (forward: the input and the filter
to NHWC, the output back; a backward, each gradient's three), 1-D, 2-D or 3-D, bf16 or fp16; a strided 1x1 two (the
input and the output: a 1x1 filter's layout is the same either way); a 1x1 of stride 1 none (its kernels read NCHW
as it is; one of four shapes ran two small ones in its backward). Their time, kernel by kernel from the profiler,
is each transposed tensor read and written once, a kernel each (at least OP_KERNEL_FLOOR_S): the activations at
NCHW_TRANSPOSE_BW_EFF of the achieved copy bandwidth, the filters at NCHW_FILTER_TRANSPOSE_BW_EFF (a filter's rows
are its taps, 9 elements of a 3x3: short runs). The two are fitted on two thirds of the first call's shapes (the
grid pair with the least mean |log error|); every third shape, and the second call's, held out."""

from __future__ import annotations

import functools
import json
import math
from typing import Any

from bench import REPO

DIR = REPO / "lab" / "data" / "h100-nchw-transposes-2026-12-06"
DATA = DIR / "nchw_transposes.json"
#: a second call the same day: 1-D convolutions (wav2vec2's) and a strided 1x1, every row held out
SECOND = DIR / "nchw_transposes_second.json"
#: a third call: 1x1 convolutions of stride 1 across ResNet-50's and Inception's map sizes (NCHW against
#: channels-last time; NCHW_1X1_UNALIGNED_SLOWDOWN)
ONE_BY_ONE = DIR / "nchw_1x1.json"
CARD = "H100 SXM"


def rows() -> list[dict[str, Any]]:
    return [{**r, "second": path == SECOND} for path in (DATA, SECOND) for r in json.loads(path.read_text())["rows"]
            if r["layout"] == "nchw"]


def _labels() -> list[str]:
    out: list[str] = []
    for r in rows():
        if r["label"] not in out:
            out.append(r["label"])
    return out


def held_out(row: dict[str, Any]) -> bool:
    """Every third shape of the first call, in the file's order, and every shape of the second."""
    return row["second"] or _labels().index(row["label"]) % 3 == 2


def convolutions(row: dict[str, Any]) -> list[Any]:
    """The row's call as the op graph records it: its forward, and for a training call the backward of both
    gradients; 1-D and 3-D shapes folded into 2-D as the tracer folds them (trace.classify.conv_shape)."""
    from gpuadvisor.estimate.graph import ConvGradients, Op, OpClass, Phase

    dims, taps = row["spatial"], row["kernel"]
    out = row.get("out_spatial", dims)  # the first call's shapes are stride 1 with same padding
    height, width = (1, dims[0]) if len(dims) == 1 else (dims[0], math.prod(dims[1:]))
    out_height, out_width = (1, out[0]) if len(out) == 1 else (out[0], math.prod(out[1:]))
    kernel_height, kernel_width = (1, taps) if len(dims) == 1 else (taps, taps ** (len(dims) - 1))
    dtype = {"bfloat16": "bf16", "float16": "fp16"}[row["dtype"]]

    def op(grads: ConvGradients) -> Op:
        phase = Phase.BACKWARD if grads else Phase.FORWARD
        shape = (row["batch"], row["in_channels"], height, width, row["out_channels"], kernel_height, kernel_width,
                 1, out_height, out_width, 0.0, float(grads))
        return Op("convolution_backward" if grads else "convolution", OpClass.CONV, phase, dtype, 0.0, 0.0, 0.0,
                  shape)

    forward = [op(ConvGradients.FORWARD)]
    return forward if row["mode"] == "forward" else [*forward, op(ConvGradients.INPUT | ConvGradients.WEIGHT)]


def priced_s(row: dict[str, Any]) -> float:
    """The row's transposes as the op pricer prices them (opcost.nchw_transpose_s), with the table's constants."""
    from gpuadvisor.estimate import opcost

    return sum(opcost.nchw_transpose_s(op, op.named_shape, rates()) for op in convolutions(row))


def transposed(row: dict[str, Any]) -> bool:
    """Whether the pricer transposes the row's convolution (opcost.nchw_transpose_s): all but a 1x1 of stride 1."""
    return row["kernel"] > 1 or row["stride"] > 1


def unmatched() -> list[dict[str, Any]]:
    """Rows where the rule and the profile disagree on whether there were transposes at all."""
    return [r for r in rows() if bool(r["transposes"]) != transposed(r)]


@functools.lru_cache(maxsize=1)
def rates() -> Any:
    """The H100 SXM's rates as the op pricer has them (its achieved copy bandwidth: the unit of both efficiencies)."""
    from bench.models import hardware
    from gpuadvisor.estimate.opcost import Rates

    return Rates.of(hardware(CARD))


def fit() -> dict[str, float]:
    """NCHW_TRANSPOSE_BW_EFF and NCHW_FILTER_TRANSPOSE_BW_EFF: the grid pair (0.05 steps) with the least mean
    |log(priced / profiled)| transpose time over the calibration shapes."""
    import numpy as np

    from gpuadvisor.estimate import calibration as cal

    sel = [r for r in rows() if transposed(r) and not held_out(r)]
    grid = [round(float(x), 2) for x in np.arange(0.1, 1.01, 0.05)]

    def err(activation_eff: float, filter_eff: float) -> float:
        with cal.override(NCHW_TRANSPOSE_BW_EFF=activation_eff, NCHW_FILTER_TRANSPOSE_BW_EFF=filter_eff):
            return float(np.mean([abs(math.log(priced_s(r) / r["transpose_s"])) for r in sel]))

    errs = {(a, f): err(a, f) for a in grid for f in grid if f <= a}
    a, f = min(errs, key=lambda key: errs[key])
    return {"NCHW_TRANSPOSE_BW_EFF": a, "NCHW_FILTER_TRANSPOSE_BW_EFF": f}


def ratios(held: bool | None = None) -> list[tuple[dict[str, Any], float]]:
    """(row, priced / profiled transpose time) for the rows the pricer transposes, with the table's constants."""
    return [(r, priced_s(r) / r["transpose_s"]) for r in rows()
            if transposed(r) and (held is None or held_out(r) == held)]


def one_by_one_ratios(*, aligned: bool) -> list[tuple[str, float]]:
    """(shape, NCHW / channels-last forward time) of the third call's 1x1 convolutions whose pixels a sample are
    (`aligned`) or are not a multiple of 8."""
    rows = json.loads(ONE_BY_ONE.read_text())["rows"]
    by = {(r["label"], r["layout"]): r for r in rows if r["mode"] == "forward"}
    out = []
    for (label, layout), r in by.items():
        if layout == "nchw" and (math.prod(r["spatial"]) % 8 == 0) == aligned:
            out.append((label, r["time_s"] / by[(label, "channels_last")]["time_s"]))
    return out


def unaligned_1x1_slowdown() -> float:
    """NCHW_1X1_UNALIGNED_SLOWDOWN: the median forward ratio of the unaligned shapes, to 0.1."""
    import statistics

    return round(statistics.median(x for _, x in one_by_one_ratios(aligned=False)), 1)
