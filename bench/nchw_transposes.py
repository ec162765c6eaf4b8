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


def tensors(row: dict[str, Any]) -> list[tuple[float, bool]]:
    """(bytes, is a filter) of each tensor the row's transposes take to or from NHWC, once per implicit-GEMM pass
    (a training call: its forward and a backward of both gradients, three): input and output (or their gradients)
    and a filter wider than 1x1 (a 1x1's NCHW and NHWC layouts are the same)."""
    n, c, k, dims, taps = row["batch"], row["in_channels"], row["out_channels"], row["spatial"], row["kernel"]
    out = row.get("out_spatial", dims)  # the first call's shapes are stride 1 with same padding
    one = [(2.0 * n * c * math.prod(dims), False), (2.0 * n * k * math.prod(out), False)]
    if taps > 1:
        one.append((2.0 * k * c * taps ** len(dims), True))
    return one * (1 if row["mode"] == "forward" else 3)


def priced_s(row: dict[str, Any], activation_eff: float, filter_eff: float) -> float:
    """The transposes as opcost.nchw_transpose_s prices them: each tensor read and written once, a kernel each."""
    from gpuadvisor.estimate import calibration as cal

    bw = bandwidth()
    return sum(max(cal.OP_KERNEL_FLOOR_S, 2 * b / (bw * (filter_eff if is_filter else activation_eff)))
               for b, is_filter in tensors(row))


def transposed(row: dict[str, Any]) -> bool:
    """Whether the pricer transposes the row's convolution (opcost.nchw_transpose_s): all but a 1x1 of stride 1."""
    return row["kernel"] > 1 or row["stride"] > 1


def unmatched() -> list[dict[str, Any]]:
    """Rows where the rule and the profile disagree on whether there were transposes at all."""
    return [r for r in rows() if bool(r["transposes"]) != transposed(r)]


@functools.lru_cache(maxsize=1)
def bandwidth() -> float:
    """The H100 SXM's achieved copy bandwidth as the op pricer has it (the unit of the two efficiencies)."""
    from bench.models import hardware
    from gpuadvisor.estimate.opcost import Rates

    return Rates.of(hardware(CARD)).bandwidth


def fit() -> dict[str, float]:
    """NCHW_TRANSPOSE_BW_EFF and NCHW_FILTER_TRANSPOSE_BW_EFF: the grid pair (0.05 steps) with the least mean
    |log(priced / profiled)| transpose time over the calibration shapes."""
    import numpy as np

    sel = [r for r in rows() if transposed(r) and not held_out(r)]
    grid = [round(float(x), 2) for x in np.arange(0.1, 1.01, 0.05)]
    err = {(a, f): float(np.mean([abs(math.log(priced_s(r, a, f) / r["transpose_s"])) for r in sel]))
           for a in grid for f in grid if f <= a}
    a, f = min(err, key=lambda key: err[key])
    return {"NCHW_TRANSPOSE_BW_EFF": a, "NCHW_FILTER_TRANSPOSE_BW_EFF": f}


def ratios(held: bool | None = None) -> list[tuple[dict[str, Any], float]]:
    """(row, priced / profiled transpose time) for the rows the pricer transposes, with the table's constants."""
    from gpuadvisor.estimate import calibration as cal

    return [(r, priced_s(r, cal.NCHW_TRANSPOSE_BW_EFF, cal.NCHW_FILTER_TRANSPOSE_BW_EFF) / r["transpose_s"])
            for r in rows() if transposed(r) and (held is None or held_out(r) == held)]


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
