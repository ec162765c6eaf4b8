"""PyTorch's 2-D pooling kernels on an H100 (lab/pool_ops.py): max and average pooling, channels-last and NCHW,
forward and backward, over the windows CNNs use, against the op pricer (opcost.pool_work_s).

These kernels run a thread per output (forward) or per input element (backward) and loop over the window: their
time goes with the elements and the taps each visits, not with their bytes. calibration.opgraph.POOL_KERNELS holds
a line (base + per tap x taps) per kind, direction and layout, fitted here on two thirds of the calls
(`fit_pool_kernels`); a third of the shapes (HELD_OUT: one channel count of each window) is never read by the fit and
checks it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench import REPO
from bench.work_lines import fit_line, span, table_rows

POOLS = REPO / "lab/data/h100-pool-ops-2026-12-05/pool_ops.json"
#: (kind, channels, input size, kernel) of the shapes the fit never reads
HELD_OUT = {("max", 192, 71, 3), ("max", 512, 28, 2), ("avg", 768, 17, 3), ("avg", 512, 28, 2)}
PHASES = ("forward", "backward")
#: shapes no fit read, measured after GoogLeNet's and Inception-v4's estimates were recorded (2026-12-05): stride-1
#: max pools (GoogLeNet's inception blocks, a window the fit had at stride 2 only), Inception-v4's average pools
UNSEEN = REPO / "lab/data/h100-pools-new-2026-12-05/pool_ops_new.json"


def rows(path: Path = POOLS) -> list[dict[str, Any]]:
    return list(json.loads(path.read_text())["rows"])


def held_out(r: dict[str, Any]) -> bool:
    return (r["kind"], r["channels"], r["size"], r["kernel"]) in HELD_OUT


def work(r: dict[str, Any], phase: str) -> tuple[float, float]:
    """(elements a thread each, taps each visits) of one measured call, as opcost.pool_work_s counts them."""
    outputs = r["batch"] * r["channels"] * r["out_size"] ** 2
    inputs = r["batch"] * r["channels"] * r["size"] ** 2
    window, stride = r["kernel"] ** 2, r["stride"] ** 2
    if phase == "forward":
        return float(outputs), float(window)
    return float(inputs), max(1.0, window / stride)


def fit_pool_kernels(path: Path = POOLS) -> dict[tuple[str, str, str], tuple[float, float]]:
    """POOL_KERNELS: per (kind, direction, layout), the line base + per tap x taps (picoseconds an element) with the
    least squared relative error over the calls not held out, both terms >= 0, to 0.01 ps."""

    out: dict[tuple[str, str, str], tuple[float, float]] = {}
    fit_rows = [r for r in rows(path) if not held_out(r)]
    for kind in ("max", "avg"):
        for phase in PHASES:
            for layout in ("nhwc", "nchw"):
                calls = [r for r in fit_rows if r["kind"] == kind and r["layout"] == layout]
                out[(kind, phase, layout)] = fit_line([work(r, phase) for r in calls],
                                                      [r[f"{phase}_s"] for r in calls], 2)
    return out


def _op(r: dict[str, Any], phase: str) -> tuple[Any, float]:
    """One measured call as the tracer records it (bf16; elements: its input's; its window and stride), with its
    time."""
    from gpuadvisor.estimate.graph import Op, OpClass, Phase, StreamLayout, StreamShape

    n, c, size, out = r["batch"], r["channels"], r["size"], r["out_size"]
    x, y = 2.0 * n * c * size * size, 2.0 * n * c * out * out
    idx = 4.0 * y if r["kind"] == "max" else 0.0  # int64 indices: 8 bytes an output, 4x its bf16 value
    name = "max_pool2d_with_indices" if r["kind"] == "max" else "avg_pool2d"
    shape = StreamShape(n * c * size * size, StreamLayout.DENSE, float(r["kernel"] ** 2),
                        float(r["stride"] ** 2)).to_row()
    if phase == "forward":
        return Op(name, OpClass.ELEMENTWISE, Phase.FORWARD, "bf16", 0.0, x, y + idx, shape), r["forward_s"]
    # the backward reads the output's gradient (and the indices, or the saved input) and writes the input's
    return (Op(name + "_backward", OpClass.ELEMENTWISE, Phase.BACKWARD, "bf16", 0.0, y + idx + x, x, shape),
            r["backward_s"])


def ratios(phase: str, path: Path = POOLS, *, held: bool | None = None) -> list[float]:
    """The op pricer's time over the measured one for each call of `phase` (held: only the held-out shapes, or only
    the fitted ones), on the H100's datasheet figures, in the call's layout."""
    from bench.models import hardware
    from gpuadvisor.estimate.opcost import Rates, op_time

    rates = Rates.of(hardware())
    return [op_time(op, replace(rates, nchw_norms=r["layout"] == "nchw")) / t for r in rows(path)
            if held is None or held_out(r) == held for op, t in [_op(r, phase)]]


def bytes_ratios(phase: str, path: Path = POOLS) -> list[float]:
    """The same calls priced by their bytes alone, as a trace without their windows is (tracer revision 12 and
    before)."""
    from bench.models import hardware
    from gpuadvisor.estimate.opcost import Rates, op_time

    rates = Rates.of(hardware())
    return [op_time(replace(op, shape=op.shape[:2]), rates) / t for r in rows(path) for op, t in [_op(r, phase)]]


def ps_per_output(layout: str, kind: str, phase: str = "forward") -> list[float]:
    """Measured picoseconds per output element of each call of this layout and kind."""
    key = "forward_s" if phase == "forward" else "backward_s"
    return [1e12 * r[key] / (r["batch"] * r["channels"] * r["out_size"] ** 2) for r in rows()
            if r["layout"] == layout and r["kind"] == kind]


def unseen_ratios(layout: str) -> list[float]:
    """The op pricer over the measured time for each unseen call of `layout`, both directions."""
    keep = [r["layout"] == layout for r in rows(UNSEEN)]
    return [x for phase in PHASES for x, k in zip(ratios(phase, UNSEEN), keep, strict=True) if k]


def markdown() -> str:
    """A section for docs/nchw.md."""
    fitted = ratios("forward", held=False) + ratios("backward", held=False)
    held = ratios("forward", held=True) + ratios("backward", held=True)
    by_bytes = bytes_ratios("forward") + bytes_ratios("backward")
    avg_nhwc = ps_per_output("nhwc", "avg")
    from gpuadvisor.estimate.calibration.opgraph import POOL_KERNELS

    table = table_rows(POOL_KERNELS, 2)
    return ("## Pooling kernels (an H100)\n\n"
            "PyTorch's max (with indices) and average pooling, bf16, batch 128, channels-last and NCHW, forward and "
            "backward (`lab/pool_ops.py`, `lab/data/h100-pool-ops-2026-12-05/`, 2026-12-05): ResNet's stem pool, "
            "Inception's branch pools, DenseNet's transitions, VGG's pools. They run a thread an output (forward) or "
            "an input element (backward) and loop over the window: a channels-last average pool takes "
            f"{min(avg_nhwc):.0f}-{max(avg_nhwc):.0f} ps an output whatever its window (NCHW about half). Priced by "
            f"their bytes, as before, they came out {span(by_bytes)} of the measured time. The op pricer now "
            "prices them by their work (`opcost.pool_work_s`): per element, a line in the taps it visits (the "
            "window's for a forward; for a backward the mean count of windows covering an input, window / stride "
            "taps), per kind, direction and layout, scaled to other cards by SMs x clock. The tracer records each "
            "pool's window and stride (tracer revision 13). Fitted on two thirds of the shapes "
            f"(`bench.pools.fit_pool_kernels`): {span(fitted)}; the held-out third (one channel count of each "
            f"window): {span(held)}. Shapes no fit saw, measured after GoogLeNet's and Inception-v4's estimates were "
            f"recorded (`{UNSEEN.relative_to(REPO)}`): NCHW {span(unseen_ratios('nchw'))}; channels-last "
            f"{span(unseen_ratios('nhwc'))}, its stride-1 max pools 1.3x-1.9x too slow: at the same taps a stride-1 "
            "window reads a quarter of the new inputs a stride-2 one does, and the line, fitted on strides of 2 "
            "alone, has no term for that (left as it is: GoogLeNet runs NCHW, where these shapes are within).\n\n"
            "| kind | direction | layout | base ps an element | ps a tap |\n|---|---|---|---:|---:|\n"
            f"{table}\n")
